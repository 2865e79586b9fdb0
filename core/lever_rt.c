/*
 * lever_rt.c - the kill path off the scheduler's tail: the thread that
 * fires and verifies the levers runs at a modest real-time priority
 * (SCHED_FIFO) while it does, and only then, with the process's memory
 * locked.  Both only when the system permits; otherwise the drill says why
 * (struct lever_rt's status) and goes on at normal priority.
 *
 * Bounds, so a runaway RT thread can never starve the machine: at most
 * (usable CPUs - 1) threads hold RT at once on the whole machine, every
 * ares process counted (a slot is an exclusive flock on a file of
 * LEVER_RT_DIR, a root-only directory; the kernel drops the lock when its
 * holder dies), so one CPU stays for everything else; each is put back
 * once its budget is spent by a watchdog thread that sleeps at a higher
 * real-time priority (it preempts a lever thread spinning at RT, so the
 * demotion is on time even if the thread never returns and every other
 * CPU is busy); children never inherit it (SCHED_RESET_ON_FORK); and the
 * kernel's own RT throttling (sched_rt_runtime_us) stays in force.  No
 * RT without the slot directory or without the watchdog above it.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

static atomic_int lever_rt_slots_override = -1;   /* tests, benchmarks */
/* The calling thread's raised lever_rt (set by enter, cleared when it is
 * put back): a helper thread it starts runs watched under its deadline. */
static _Thread_local struct lever_rt *lever_rt_self;
static _Atomic(const char *) lever_rt_dir_override;  /* tests */

void
lever_rt_set_dir(const char *dir)
{
	atomic_store(&lever_rt_dir_override, dir);
}

/* The slot directory: LEVER_RT_DIR, or what lever_rt_set_dir set. */
static const char *
lever_rt_dir_path(void)
{
	const char *d = atomic_load(&lever_rt_dir_override);

	return d != NULL ? d : LEVER_RT_DIR;
}

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

static pthread_mutex_t lever_rt_dir_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *lever_rt_dir_ok;  /* the directory that passed, once */

static int lever_rt_dir_check(const char *dir, char *msg, size_t max);

/* lever_rt_dir_check once per directory: lever_rt_prepare does it, off the
 * kill path, and the kill path's lever_rt_enter finds it done.  0 or -1
 * with why in msg (not cached: a refusal is said again each time). */
static int
lever_rt_dir(char *msg, size_t max)
{
	const char *dir = lever_rt_dir_path();
	int rc = 0;

	pthread_mutex_lock(&lever_rt_dir_lock);
	if (lever_rt_dir_ok != dir) {
		rc = lever_rt_dir_check(dir, msg, max);
		if (rc == 0)
			lever_rt_dir_ok = dir;
	}
	pthread_mutex_unlock(&lever_rt_dir_lock);
	return rc;
}

/*
 * The slot directory: LEVER_RT_DIR, made 0700 if absent; it must be a
 * real directory (not a link) owned by root and writable by no one else,
 * or a local user could hold every slot or plant links.  0, or -1 with why
 * in msg.
 */
static int
lever_rt_dir_check(const char *dir, char *msg, size_t max)
{
	struct stat sb;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(msg, max, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &sb) == -1) {
		snprintf(msg, max, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 022) != 0) {
		snprintf(msg, max, "%s: not a root-only directory", dir);
		return -1;
	}
	return 0;
}

/*
 * Take one of the machine's max RT slots: an exclusive, non-blocking flock
 * on LEVER_RT_DIR/slot.K (a lock belongs to its open file description, so
 * two threads of one process conflict as two processes do).  The locked
 * fd (the caller closes it to give the slot back), -1 when every slot is
 * held, -2 with why in msg when there is no usable slot directory.
 */
static int
lever_rt_take(int max, char *msg, size_t msg_max)
{
	if (max <= 0)
		return -1;
	if (lever_rt_dir(msg, msg_max) == -1)
		return -2;
	for (int k = 0; k < max; k++) {
		char *path = xasprintf("%s/slot.%d", lever_rt_dir_path(), k);
		int fd;

		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600);
		if (fd == -1) {
			snprintf(msg, msg_max, "%s: %s", path, strerror(errno));
			free(path);
			return -2;
		}
		free(path);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/* How many of the machine's first max slots are held now (for messages). */
static int
lever_rt_held(int max)
{
	int n = 0;

	for (int k = 0; k < max; k++) {
		char *path = xasprintf("%s/slot.%d", lever_rt_dir_path(), k);
		int fd;

		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		free(path);
		if (fd == -1)
			continue;
		if (flock(fd, LOCK_SH | LOCK_NB) == -1)
			n++;
		close(fd);
	}
	return n;
}

/* ---- the watchdog ---------------------------------------------------- */

#define LEVER_RT_WATCH_MAX 16

struct lever_rt_watch {
	bool used;
	bool fired;                 /* the watchdog put the thread back */
	pid_t tid;
	uint64_t deadline_ns;       /* CLOCK_MONOTONIC */
	int policy;
	struct sched_param param;
};

static pthread_mutex_t lever_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lever_wd_cond;
static struct lever_rt_watch lever_wd[LEVER_RT_WATCH_MAX];
static pthread_once_t lever_wd_once = PTHREAD_ONCE_INIT;
static bool lever_wd_running;
static char lever_wd_why[64];     /* why it is not running, if it is not */

/* Puts every raised thread whose deadline passed back to its policy;
 * sleeps until the next deadline or a new registration.  Never exits. */
static void *
lever_wd_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lever_wd_lock);
	for (;;) {
		uint64_t now = util_mono_ns(), next = 0;
		size_t i;

		for (i = 0; i < LEVER_RT_WATCH_MAX; i++) {
			struct lever_rt_watch *w = &lever_wd[i];

			if (!w->used || w->fired)
				continue;
			if (w->deadline_ns <= now) {
				(void)sched_setscheduler(w->tid, w->policy,
				    &w->param);
				w->fired = true;
			} else if (next == 0 || w->deadline_ns < next)
				next = w->deadline_ns;
		}
		if (next == 0)
			pthread_cond_wait(&lever_wd_cond, &lever_wd_lock);
		else {
			struct timespec ts = {
				.tv_sec = (time_t)(next / 1000000000ull),
				.tv_nsec = (long)(next % 1000000000ull),
			};

			(void)pthread_cond_timedwait(&lever_wd_cond,
			    &lever_wd_lock, &ts);
		}
	}
	return NULL;
}

/* Start the watchdog (once): SCHED_FIFO LEVER_RT_PRIO + 1, explicitly,
 * whoever starts it, so that it preempts a lever thread at RT on any CPU;
 * it sleeps but for the moments it demotes one.  When that priority is
 * not permitted it does not run (and no lever thread is raised). */
static void
lever_wd_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t a;
	struct sched_param sp = { .sched_priority = LEVER_RT_PRIO + 1 };
	pthread_t t;
	int err = 0;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lever_wd_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_attr_init(&a) != 0)
		return;
	if (pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED) == 0 &&
	    pthread_attr_setschedpolicy(&a, SCHED_FIFO) == 0 &&
	    pthread_attr_setschedparam(&a, &sp) == 0 &&
	    pthread_attr_setstacksize(&a, 64 * 1024) == 0 &&
	    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0 &&
	    (err = pthread_create(&t, &a, lever_wd_main, NULL)) == 0)
		lever_wd_running = true;
	else
		snprintf(lever_wd_why, sizeof lever_wd_why, "no watchdog "
		    "thread at SCHED_FIFO %d (%s)", LEVER_RT_PRIO + 1,
		    err == EPERM ? "EPERM" : err != 0 ? strerror(err) :
		    "attributes");
	pthread_attr_destroy(&a);
}

/* Register the calling thread (raised) with its deadline and the policy
 * to put it back to.  The slot index, or -1 when the table is full. */
static int
lever_wd_add(uint64_t deadline_ns, int policy,
    const struct sched_param *param)
{
	int i, got = -1;

	pthread_mutex_lock(&lever_wd_lock);
	for (i = 0; i < LEVER_RT_WATCH_MAX && got == -1; i++)
		if (!lever_wd[i].used) {
			lever_wd[i] = (struct lever_rt_watch){
				.used = true,
				.tid = (pid_t)syscall(SYS_gettid),
				.deadline_ns = deadline_ns,
				.policy = policy,
				.param = *param,
			};
			got = i;
		}
	pthread_cond_signal(&lever_wd_cond);
	pthread_mutex_unlock(&lever_wd_lock);
	return got;
}

/* Take a watch slot off the list. */
static void
lever_wd_del(int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&lever_wd_lock);
	lever_wd[slot].used = false;
	pthread_mutex_unlock(&lever_wd_lock);
}

/* ---- enter / check / leave ----------------------------------------- */

int
lever_rt_enter(struct lever_rt *rt, unsigned budget_ms)
{
	struct sched_param sp = { 0 };
	int max = lever_rt_slots(), pol, err;

	memset(rt, 0, sizeof *rt);
	rt->watch = -1;
	rt->slot_fd = -1;
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
	if (max <= 0) {
		snprintf(rt->status, sizeof rt->status, "refused: no free CPU "
		    "(no real-time slot on %d usable CPU(s); one CPU stays "
		    "free)", max + 1);
		return -1;
	}
	/* permitted at all?  (raised and put back at once: a refusal
	 * says EPERM before anything else is asked of the machine) */
	sp.sched_priority = LEVER_RT_PRIO;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
	    &sp) == -1) {
		err = errno;
		snprintf(rt->status, sizeof rt->status, "refused: %s (%s)",
		    err == EPERM ? "EPERM" : err == EINVAL ? "EINVAL" :
		    "error", strerror(err));
		return -1;
	}
	(void)sched_setscheduler(0, rt->old_policy, &rt->old_param);
	pthread_once(&lever_wd_once, lever_wd_start);
	if (!lever_wd_running) {
		snprintf(rt->status, sizeof rt->status, "refused: %.60s (nothing "
		    "would bound the time at RT)", lever_wd_why);
		return -1;
	}
	{
		char why[96] = "";

		rt->slot_fd = lever_rt_take(max, why, sizeof why);
		if (rt->slot_fd == -2) {
			snprintf(rt->status, sizeof rt->status, "refused: no "
			    "machine-wide slot (%.90s)", why);
			rt->slot_fd = -1;
			return -1;
		}
		if (rt->slot_fd == -1) {
			snprintf(rt->status, sizeof rt->status, "refused: no "
			    "free CPU (%d of %d real-time slot(s) of the "
			    "machine in use; one CPU stays free)",
			    lever_rt_held(max), max);
			return -1;
		}
	}
	rt->start_ns = util_mono_ns();
	rt->budget_ns = (uint64_t)budget_ms * 1000000ull;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
	    &sp) == -1) {
		err = errno;
		close(rt->slot_fd);
		rt->slot_fd = -1;
		snprintf(rt->status, sizeof rt->status, "refused: %s (%s)",
		    err == EPERM ? "EPERM" : err == EINVAL ? "EINVAL" :
		    "error", strerror(err));
		return -1;
	}
	rt->active = true;
	rt->watch = lever_wd_add(rt->start_ns + rt->budget_ns,
	    rt->old_policy, &rt->old_param);
	if (rt->watch == -1) {
		/* unwatched: never stay raised */
		(void)sched_setscheduler(0, rt->old_policy, &rt->old_param);
		close(rt->slot_fd);
		rt->slot_fd = -1;
		rt->active = false;
		snprintf(rt->status, sizeof rt->status, "refused: watchdog "
		    "table full");
		return -1;
	}
	snprintf(rt->status, sizeof rt->status, "granted: SCHED_FIFO %d "
	    "(budget %u ms)", LEVER_RT_PRIO, budget_ms);
	lever_rt_self = rt;
	return 0;
}

/* Back to the policy saved at enter (unless the watchdog did it), off the
 * watchdog's list; release the slot.  Whether the watchdog had fired. */
static bool
lever_rt_drop(struct lever_rt *rt)
{
	bool fired = false;

	if (!rt->active)
		return false;
	pthread_mutex_lock(&lever_wd_lock);
	if (rt->watch >= 0) {
		fired = lever_wd[rt->watch].fired;
		lever_wd[rt->watch].used = false;
	}
	if (!fired)
		(void)sched_setscheduler(0, rt->old_policy, &rt->old_param);
	pthread_mutex_unlock(&lever_wd_lock);
	if (rt->slot_fd >= 0)
		close(rt->slot_fd);          /* the slot back */
	rt->slot_fd = -1;
	rt->active = false;
	rt->watch = -1;
	if (lever_rt_self == rt)
		lever_rt_self = NULL;
	return fired;
}

/* Note in rt->status that it was put back before leave. */
static void
lever_rt_note_dropped(struct lever_rt *rt, const char *by)
{
	rt->dropped = true;
	snprintf(rt->status + strlen(rt->status), sizeof rt->status -
	    strlen(rt->status), "; dropped: budget spent (%s)", by);
}

bool
lever_rt_check(struct lever_rt *rt)
{
	bool fired;

	if (!rt->active)
		return false;
	pthread_mutex_lock(&lever_wd_lock);
	fired = rt->watch >= 0 && lever_wd[rt->watch].fired;
	pthread_mutex_unlock(&lever_wd_lock);
	if (!fired && util_mono_ns() - rt->start_ns <= rt->budget_ns)
		return true;
	fired = lever_rt_drop(rt) || fired;
	lever_rt_note_dropped(rt, fired ? "watchdog" : "between levers");
	return false;
}

void
lever_rt_leave(struct lever_rt *rt)
{
	if (lever_rt_drop(rt))
		lever_rt_note_dropped(rt, "watchdog");
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
	pthread_once(&lever_wd_once, lever_wd_start);   /* not on the path */
	{
		char why[96];

		(void)lever_rt_dir(why, sizeof why);    /* nor this: cached */
	}
	lever_stack_prefault();
	return lever_mlock_status;
}

/* ---- helper threads of a raised thread ----------------------------- */

struct lever_rt_start {
	void *(*fn)(void *);
	void *arg;
	bool watch;                 /* register under the parent's deadline */
	uint64_t deadline_ns;
	int policy;
	struct sched_param param;
};

/* A helper thread's first and last steps: on the watchdog's list under
 * its parent's deadline (a spent one demotes it at once), or, with the
 * table full, back to the parent's old policy before fn runs: never at
 * RT unwatched. */
static void *
lever_rt_trampoline(void *arg)
{
	struct lever_rt_start st = *(struct lever_rt_start *)arg;
	int slot = -1;
	void *ret;

	free(arg);
	if (st.watch) {
		slot = lever_wd_add(st.deadline_ns, st.policy, &st.param);
		if (slot == -1)
			(void)sched_setscheduler(0, st.policy, &st.param);
	}
	ret = st.fn(st.arg);
	lever_wd_del(slot);
	return ret;
}

int
lever_rt_thread(pthread_t *t, size_t stack, void *(*fn)(void *), void *arg)
{
	struct lever_rt_start *st = xcalloc(1, sizeof *st);
	struct lever_rt *rt = lever_rt_self;
	struct sched_param sp;
	pthread_attr_t a;
	int pol, err;

	st->fn = fn;
	st->arg = arg;
	pol = sched_getscheduler(0);
	if (pol == -1 || sched_getparam(0, &sp) == -1) {
		err = errno;
		free(st);
		return err;
	}
	pol &= ~SCHED_RESET_ON_FORK;
	if (rt != NULL && rt->active) {
		/* raised by lever_rt_enter: the same priority, watched under
		 * the same deadline, put back to the same old policy */
		st->watch = true;
		st->deadline_ns = rt->start_ns + rt->budget_ns;
		st->policy = rt->old_policy;
		st->param = rt->old_param;
	}
	if ((err = pthread_attr_init(&a)) != 0) {
		free(st);
		return err;
	}
	if ((err = pthread_attr_setinheritsched(&a,
	    PTHREAD_EXPLICIT_SCHED)) != 0 ||
	    (err = pthread_attr_setschedpolicy(&a, pol)) != 0 ||
	    (err = pthread_attr_setschedparam(&a, &sp)) != 0 ||
	    (stack != 0 &&
	    (err = pthread_attr_setstacksize(&a, stack)) != 0) ||
	    (err = pthread_create(t, &a, lever_rt_trampoline, st)) != 0)
		free(st);
	pthread_attr_destroy(&a);
	return err;
}
