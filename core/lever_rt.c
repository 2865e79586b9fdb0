/*
 * lever_rt.c - the kill path off the scheduler's tail: the thread that
 * fires and verifies the levers runs at a modest real-time priority
 * (SCHED_FIFO) while it does, and only then, with the process's memory
 * locked.  Both only when the system permits; otherwise the drill says why
 * (struct lever_rt's status) and goes on at normal priority.
 *
 * Bounds, so a runaway RT thread can never starve the machine: at most
 * (usable CPUs - 1) threads of the process hold RT at once (one CPU stays
 * for everything else), each drops back once its budget is spent
 * (lever_rt_check, between levers; every lever is itself bounded), children
 * never inherit it (SCHED_RESET_ON_FORK), and the kernel's own RT
 * throttling (sched_rt_runtime_us) stays in force.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

static atomic_int lever_rt_holders;
static atomic_int lever_rt_slots_override = -1;   /* tests, benchmarks */

int
lever_rt_slots(void)
{
	int o = atomic_load(&lever_rt_slots_override);
	cpu_set_t set;
	int n;

	if (o >= 0)
		return o;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? n - 1 : 0;
}

void
lever_rt_set_slots(int n)
{
	atomic_store(&lever_rt_slots_override, n);
}

/* Take one RT slot if fewer than max are taken.  false when none is free. */
static bool
lever_rt_take(int max)
{
	int cur = atomic_load(&lever_rt_holders);

	while (cur < max)
		if (atomic_compare_exchange_weak(&lever_rt_holders, &cur,
		    cur + 1))
			return true;
	return false;
}

int
lever_rt_enter(struct lever_rt *rt, unsigned budget_ms)
{
	struct sched_param sp = { 0 };
	int max = lever_rt_slots(), pol, err;

	memset(rt, 0, sizeof *rt);
	pol = sched_getscheduler(0);
	if (pol == -1 || sched_getparam(0, &rt->old_param) == -1) {
		snprintf(rt->status, sizeof rt->status, "refused: "
		    "sched_getscheduler: %s", strerror(errno));
		return -1;
	}
	rt->old_policy = pol;
	if ((pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ||
	    (pol & ~SCHED_RESET_ON_FORK) == SCHED_RR) {
		/* already real-time (set by whoever runs us): leave it */
		snprintf(rt->status, sizeof rt->status, "inherited: already "
		    "%s %d", (pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ?
		    "SCHED_FIFO" : "SCHED_RR", rt->old_param.sched_priority);
		return -1;
	}
	if (!lever_rt_take(max)) {
		snprintf(rt->status, sizeof rt->status, "refused: no free CPU "
		    "(%d of %d real-time slot(s) in use; one CPU stays free)",
		    atomic_load(&lever_rt_holders), max);
		return -1;
	}
	sp.sched_priority = LEVER_RT_PRIO;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
	    &sp) == -1) {
		err = errno;
		atomic_fetch_sub(&lever_rt_holders, 1);
		snprintf(rt->status, sizeof rt->status, "refused: %s (%s)",
		    err == EPERM ? "EPERM" : err == EINVAL ? "EINVAL" :
		    "error", strerror(err));
		return -1;
	}
	rt->active = true;
	rt->start_ns = util_mono_ns();
	rt->budget_ns = (uint64_t)budget_ms * 1000000ull;
	snprintf(rt->status, sizeof rt->status, "granted: SCHED_FIFO %d "
	    "(budget %u ms)", LEVER_RT_PRIO, budget_ms);
	return 0;
}

/* Back to the policy saved at enter; release the slot. */
static void
lever_rt_drop(struct lever_rt *rt)
{
	if (!rt->active)
		return;
	(void)sched_setscheduler(0, rt->old_policy, &rt->old_param);
	atomic_fetch_sub(&lever_rt_holders, 1);
	rt->active = false;
}

bool
lever_rt_check(struct lever_rt *rt)
{
	if (!rt->active)
		return false;
	if (util_mono_ns() - rt->start_ns <= rt->budget_ns)
		return true;
	lever_rt_drop(rt);
	rt->dropped = true;
	snprintf(rt->status + strlen(rt->status), sizeof rt->status -
	    strlen(rt->status), "; dropped: budget spent");
	return false;
}

void
lever_rt_leave(struct lever_rt *rt)
{
	lever_rt_drop(rt);
}

/* ---- memory lock ---------------------------------------------------- */

static char lever_mlock_status[96];
static pthread_once_t lever_mlock_once = PTHREAD_ONCE_INIT;

/* Whether CAP_IPC_LOCK is in our effective set (/proc/self/status). */
static bool
lever_cap_ipc_lock(void)
{
	char *text;
	size_t len;
	struct errbuf e = { 0 };
	const char *p;
	bool has = false;

	text = util_read_file("/proc/self/status", 64 * 1024, &len, &e);
	if (text == NULL)
		return false;
	p = strstr(text, "\nCapEff:");
	if (p != NULL) {
		unsigned long long caps = strtoull(p + 8, NULL, 16);

		has = (caps >> 14) & 1;   /* CAP_IPC_LOCK */
	}
	free(text);
	return has;
}

/*
 * mlockall: what is mapped now is faulted in and locked (the code and
 * data of the kill path: no page fault, no swap-in on it), what is mapped
 * later is locked as it is touched (MCL_ONFAULT: a thread's stack is not
 * populated whole).  MCL_FUTURE only with no limit to reach (CAP_IPC_LOCK
 * or an unlimited RLIMIT_MEMLOCK), as a limit would make later
 * allocations fail.
 */
static void
lever_mlock_init(void)
{
	struct rlimit rl;
	bool unlimited = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur == RLIM_INFINITY;

	if (!unlimited && !lever_cap_ipc_lock()) {
		snprintf(lever_mlock_status, sizeof lever_mlock_status,
		    "refused: no CAP_IPC_LOCK and RLIMIT_MEMLOCK %llu bytes",
		    (unsigned long long)rl.rlim_cur);
		return;
	}
	if (mlockall(MCL_CURRENT) == -1) {
		snprintf(lever_mlock_status, sizeof lever_mlock_status,
		    "refused: mlockall: %s", errno == EPERM ? "EPERM" :
		    errno == ENOMEM ? "ENOMEM" : strerror(errno));
		return;
	}
	if (mlockall(MCL_FUTURE | MCL_ONFAULT) == -1)
		snprintf(lever_mlock_status, sizeof lever_mlock_status,
		    "locked: current mappings (future: %s)", strerror(errno));
	else
		snprintf(lever_mlock_status, sizeof lever_mlock_status,
		    "locked: MCL_CURRENT, MCL_FUTURE|MCL_ONFAULT");
}

/* Touch the next 128 KiB of this thread's stack so the kill path takes no
 * fault there (locked once touched). */
static void __attribute__((noinline))
lever_stack_prefault(void)
{
	volatile char pad[128 * 1024];
	size_t i;

	for (i = 0; i < sizeof pad; i += 4096)
		pad[i] = 0;
}

const char *
lever_rt_prepare(void)
{
	pthread_once(&lever_mlock_once, lever_mlock_init);
	lever_stack_prefault();
	return lever_mlock_status;
}
