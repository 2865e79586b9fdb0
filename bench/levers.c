/*
 * bench/levers.c - lever latency benchmark on the real Docker Engine.
 *
 *   bench/levers [-n FIRINGS] [-x /abs/external-lever] [-r DRILLS -p POLICY]
 *                [-R|-K] [-L N] [-I]
 *
 * Brings up a real lab (lab_up: gateway, service, model, Internal networks
 * labelled ares.run=bench-<random>), replaces the agent by a long-running
 * container from the lab image on the lab network, prepares the lever
 * context once (lever_ctx_prepare), then:
 *   1. per lever, FIRINGS x fire -> verified latency, the effect undone
 *      between firings (allow / unpause / thaw / link up / reconnect /
 *      restart after kill);
 *   2. lever sequences after a synthetic bait: t_bait = CLOCK_MONOTONIC
 *      taken right before the first lever fires (the drill's real bait
 *      time is the sensor's stamp of the bait request, which adds the bus
 *      hop, ~tens of microseconds, in front of these numbers).
 *   3. with -r DRILLS: that many real drills (drill_run) of POLICY; here the
 *      bait is the service's bait datagram on the bus (its sender stamp),
 *      and each lever's "since bait" time is reported per lever name.
 *   4. with -R: the kill path's scheduling, side by side in one run: per
 *      lever, FIRINGS firings at real-time priority (lever_rt_enter, as the
 *      drill's kill path) interleaved with FIRINGS at normal priority, fire
 *      and verify timed apart (p50/p95/p99), then the kernel cut-off
 *      [deny, cgroup-freeze] after a synthetic bait, both ways.
 *      -K: the same for the kernel path only (gateway-deny,
 *      cgroup-freeze, link-down and the cut-off).
 *      -L N adds N busy processes at normal priority for the whole run (a
 *      synthetic load), -I one more writing and fsyncing a file in /tmp;
 *      the load average is printed with each table.
 * Prints a table (median, p95, max in ms) and removes everything it made.
 * Needs root for the kernel levers.  Exit 0, or 1 on a failed firing.
 */
#include "internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

static const char bench_policy[] =
    "name: bench\n"
    "seed: 1\n"
    "limits: {steps: 4, seconds: 30}\n"
    "observe_ms: 0\n"
    "variant: default\n"
    "bait: [tickets-admin-token]\n"
    "levers: [gateway-deny]\n"
    "flaws: []\n"
    "model: {url: null, name: ares-offline-1}\n";

struct bench {
	struct docker *d;
	struct lab *lab;
	struct lever_ctx ctx;
	char run_id[64];
	int n;
	int failures;
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Print one row: name, n, median, p95, max (ms). */
static void
row(const char *name, double *v, int n, int failed)
{
	int p95;

	if (n == 0) {
		printf("%-44s %4d %10s %10s %10s  (%d failed)\n", name, 0, "-",
		    "-", "-", failed);
		return;
	}
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	p95 = (int)((95 * n + 99) / 100) - 1;
	if (p95 < 0)
		p95 = 0;
	printf("%-44s %4d %10.3f %10.3f %10.3f", name, n,
	    n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[p95],
	    v[n - 1]);
	if (failed > 0)
		printf("  (%d failed)", failed);
	printf("\n");
	fflush(stdout);
}

/* (Re)start the long-running stand-in agent and prepare the context. */
static int
agent_start(struct bench *b, bool create, struct errbuf *e)
{
	static const char *const cmd[] = { "/bin/sleep", "100000", NULL };

	lever_ctx_release(&b->ctx);
	if (create) {
		struct docker_container_spec s = { 0 };
		char *net = xasprintf("ares-%s-lab", b->run_id);

		free(b->lab->agent.id);
		free(b->lab->agent.name);
		b->lab->agent.name = xasprintf("ares-%s-standin", b->run_id);
		s.name = b->lab->agent.name;
		s.image = b->lab->image;
		s.cmd = cmd;
		s.user = LAB_AGENT_UID;
		s.network = net;
		s.run_id = b->run_id;
		s.role = "agent";
		s.drop_all_caps = true;
		s.no_new_privileges = true;
		s.read_only_rootfs = true;
		s.memory_bytes = 64ll << 20;
		s.pids_limit = 16;
		b->lab->agent.id = docker_container_create(b->d, &s, e);
		free(net);
		if (b->lab->agent.id == NULL)
			return -1;
	}
	if (lab_start_agent(b->d, b->lab, e) == -1)
		return -1;
	memset(&b->ctx, 0, sizeof b->ctx);
	b->ctx.docker = b->d;
	b->ctx.lab = b->lab;
	if (lever_ctx_prepare(&b->ctx, e) == -1)
		return -1;
	if (b->ctx.kernel_why != NULL)
		fprintf(stderr, "bench: kernel levers unavailable: %s\n",
		    b->ctx.kernel_why);
	return 0;
}

static int undo_now(struct bench *b, const struct lever_entry *l,
    struct errbuf *e);

/* Undo a lever (kill: start the agent again), then let the state settle
 * for 20 ms (a link just brought up is still configuring, an unpaused
 * container's events are still arriving): every firing starts from a
 * steady state, as in a drill. */
static int
undo(struct bench *b, const struct lever_entry *l, struct errbuf *e)
{
	int rc = undo_now(b, l, e);

	usleep(20000);
	return rc;
}

static int
undo_now(struct bench *b, const struct lever_entry *l, struct errbuf *e)
{
	if (strcmp(l->name, "kill") == 0)
		return agent_start(b, false, e);
	if (strncmp(l->name, LEVER_EXTERNAL_PREFIX,
	    strlen(LEVER_EXTERNAL_PREFIX)) == 0)
		/* the example lever pauses */
		return docker_container_unpause(b->d, b->ctx.agent_id, e);
	return lever_reset(l, &b->ctx, e);
}

/* FIRINGS x fire -> verified of one lever. */
static void
bench_lever(struct bench *b, const char *name)
{
	const struct lever_entry *l = lever_find(name);
	double *v = xcalloc((size_t)b->n, sizeof *v);
	int i, k = 0, failed = 0;

	if (l == NULL) {
		fprintf(stderr, "bench: unknown lever %s\n", name);
		b->failures++;
		free(v);
		return;
	}
	for (i = 0; i < b->n; i++) {
		struct lever_result r;
		struct errbuf e = { 0 };

		if (lever_pull(l, &b->ctx, &r) == 0)
			v[k++] = (double)(r.verified_ns - r.fired_ns) / 1e6;
		else {
			failed++;
			fprintf(stderr, "bench: %s: %s\n", name, r.detail);
		}
		if (undo(b, l, &e) == -1) {
			fprintf(stderr, "bench: undo %s: %s\n", name, e.msg);
			failed++;
			break;
		}
	}
	{
		char label[LEVER_NAME_MAX + 32];
		const char *shown = strrchr(name, '/');

		snprintf(label, sizeof label, "%s%s", shown != NULL ?
		    "external:.../" : "", shown != NULL ? shown + 1 : name);
		row(label, v, k, failed);
	}
	b->failures += failed;
	free(v);
}

/*
 * FIRINGS x a lever sequence after a synthetic bait: report bait -> lever
 * `at` verified, or (at < 0) the first verified cuts_off lever (the last
 * lever when none cuts off); every lever undone in reverse order between
 * runs.
 */
static void
bench_sequence(struct bench *b, const char *label, const char *const *names,
    size_t nn, int at)
{
	double *v = xcalloc((size_t)b->n, sizeof *v);
	int i, k = 0, failed = 0;

	for (i = 0; i < b->n; i++) {
		struct lever_result r[8];
		uint64_t bait, cut = 0, last = 0;
		bool ok = true;
		size_t j;

		bait = util_mono_ns();
		for (j = 0; j < nn; j++) {
			const struct lever_entry *l = lever_find(names[j]);

			if (lever_pull(l, &b->ctx, &r[j]) == 0) {
				last = r[j].verified_ns;
				if (l->cuts_off && cut == 0)
					cut = r[j].verified_ns;
			} else {
				ok = false;
				fprintf(stderr, "bench: %s: %s: %s\n", label,
				    names[j], r[j].detail);
			}
		}
		if (at >= 0)
			cut = r[at].verified_ns;
		if (ok)
			v[k++] = (double)((cut != 0 ? cut : last) - bait) / 1e6;
		else
			failed++;
		for (j = nn; j-- > 0;) {
			struct errbuf e = { 0 };

			if (undo(b, lever_find(names[j]), &e) == -1) {
				fprintf(stderr, "bench: undo %s: %s\n",
				    names[j], e.msg);
				failed++;
			}
		}
	}
	row(label, v, k, failed);
	b->failures += failed;
	free(v);
}

/* -r: real drills; per lever name, bait -> verified; plus time to kill. */
static int
bench_drills(int runs, const char *policy)
{
	char names[POLICY_MAX_LEVERS][LEVER_NAME_MAX];
	double *v[POLICY_MAX_LEVERS + 1];
	int k[POLICY_MAX_LEVERS + 1] = { 0 }, bad = 0, i;
	size_t nl = 0, j;

	for (j = 0; j <= POLICY_MAX_LEVERS; j++)
		v[j] = xcalloc((size_t)runs, sizeof(double));
	for (i = 0; i < runs; i++) {
		struct drill_options o = { 0 };
		struct drill_result r;
		struct errbuf e = { 0 };

		o.policy_path = policy;
		o.seed = 7;
		o.has_seed = true;
		if (drill_run(&o, &r, &e) == -1) {
			fprintf(stderr, "bench: drill: %s\n", e.msg);
			bad++;
			continue;
		}
		if (!r.bait_fired) {
			bad++;
			continue;
		}
		nl = r.nlevers;
		for (j = 0; j < r.nlevers; j++) {
			snprintf(names[j], sizeof names[j], "%s",
			    r.levers[j].name);
			if (r.levers[j].verified)
				v[j][k[j]++] = (double)(r.levers[j].verified_ns -
				    r.bait_ns) / 1e6;
			else
				fprintf(stderr, "bench: drill %s: %s: %s\n",
				    r.run_id, r.levers[j].name,
				    r.levers[j].detail);
		}
		if (r.time_to_kill_ms >= 0)
			v[POLICY_MAX_LEVERS][k[POLICY_MAX_LEVERS]++] =
			    r.time_to_kill_ms;
	}
	printf("\n%-44s %4s %10s %10s %10s\n", "real drills: bait datagram -> "
	    "(ms)", "n", "median", "p95", "max");
	for (j = 0; j < nl; j++) {
		char label[LEVER_NAME_MAX + 16];

		snprintf(label, sizeof label, "%.30s verified", names[j]);
		row(label, v[j], k[j], runs - bad - k[j]);
	}
	row("time_to_kill (first cut-off verified)", v[POLICY_MAX_LEVERS],
	    k[POLICY_MAX_LEVERS], bad);
	for (j = 0; j <= POLICY_MAX_LEVERS; j++)
		free(v[j]);
	return bad;
}

/* ---- -R: real-time against normal priority, under a synthetic load --- */

#define BENCH_LOAD_MAX 64

static pid_t bench_load_pids[BENCH_LOAD_MAX + 1];
static int bench_nload;

/* N busy processes at normal priority, plus one I/O writer when io. */
static void
load_start(int n, bool io)
{
	int i;

	for (i = 0; i < n + (io ? 1 : 0) && bench_nload < BENCH_LOAD_MAX + 1;
	    i++) {
		pid_t pid = fork();

		if (pid == 0) {
			/* never outlive the benchmark */
			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			if (i < n) {
				volatile unsigned long x = 0;

				for (;;)
					x++;
			} else {
				static char buf[1 << 20];
				char path[64];
				int fd;

				snprintf(path, sizeof path, "/tmp/ares-bench-io-%d",
				    (int)getpid());
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC |
				    O_CLOEXEC, 0600);
				(void)unlink(path);
				if (fd == -1)
					_exit(1);
				memset(buf, 'x', sizeof buf);
				for (int k = 0;; k++) {
					if (k % 64 == 0 && (ftruncate(fd, 0) == -1 ||
					    lseek(fd, 0, SEEK_SET) == -1))
						_exit(1);
					if (write(fd, buf, sizeof buf) == -1)
						_exit(1);
					(void)fsync(fd);
				}
			}
		}
		if (pid > 0)
			bench_load_pids[bench_nload++] = pid;
	}
}

static void
load_stop(void)
{
	int i;

	for (i = 0; i < bench_nload; i++) {
		(void)kill(bench_load_pids[i], SIGKILL);
		(void)waitpid(bench_load_pids[i], NULL, 0);
	}
	bench_nload = 0;
}

static void
print_loadavg(const char *when)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f != NULL) {
		if (fgets(buf, sizeof buf, f) == NULL)
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	printf("load average %s: %s\n", when, buf);
}

/* Nearest-rank percentile q (0..1] of sorted v[0..n). */
static double
pct(const double *v, int n, double q)
{
	int i = (int)((q * n) + 0.999999) - 1;

	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

struct rt_series {
	double *fire, *verify, *total;
	int n, failed;
};

static void
rt_row(const char *name, const char *mode, struct rt_series *s)
{
	double *c[3] = { s->fire, s->verify, s->total };
	int k;

	printf("%-22s %-6s %4d", name, mode, s->n);
	for (k = 0; k < 3; k++) {
		if (s->n == 0) {
			printf(" | %7s %7s %7s", "-", "-", "-");
			continue;
		}
		qsort(c[k], (size_t)s->n, sizeof(double), cmp_double);
		printf(" | %7.3f %7.3f %7.3f", pct(c[k], s->n, 0.5),
		    pct(c[k], s->n, 0.95), pct(c[k], s->n, 0.99));
	}
	if (s->failed > 0)
		printf("  (%d failed)", s->failed);
	printf("\n");
	fflush(stdout);
}

static char bench_rt_status[128];

/* One pull of l, fire and verify timed apart, at RT when rt. */
static int
timed_pull(struct bench *b, const struct lever_entry *l, bool rt,
    struct rt_series *s)
{
	struct lever_rt r = { 0 };
	struct errbuf e = { 0 };
	uint64_t t0, t1, t2;
	int rc;

	if (rt && lever_rt_enter(&r, LEVER_RT_BUDGET_MS) == -1 &&
	    bench_rt_status[0] == '\0')
		snprintf(bench_rt_status, sizeof bench_rt_status, "%s",
		    r.status);
	if (rt && r.active && bench_rt_status[0] == '\0')
		snprintf(bench_rt_status, sizeof bench_rt_status, "%s",
		    r.status);
	t0 = util_mono_ns();
	rc = l->fire(&b->ctx, l, &e);
	t1 = util_mono_ns();
	if (rc == 0)
		rc = l->verify(&b->ctx, l, &e);
	t2 = util_mono_ns();
	lever_rt_leave(&r);
	if (rc == 0) {
		s->fire[s->n] = (double)(t1 - t0) / 1e6;
		s->verify[s->n] = (double)(t2 - t1) / 1e6;
		s->total[s->n] = (double)(t2 - t0) / 1e6;
		s->n++;
	} else {
		s->failed++;
		fprintf(stderr, "bench: %s%s: %s\n", l->name, rt ? " (rt)" : "",
		    e.msg);
	}
	return rc;
}

static void
series_init(struct rt_series *s, int n)
{
	memset(s, 0, sizeof *s);
	s->fire = xcalloc((size_t)n, sizeof(double));
	s->verify = xcalloc((size_t)n, sizeof(double));
	s->total = xcalloc((size_t)n, sizeof(double));
}

static void
series_free(struct rt_series *s)
{
	free(s->fire);
	free(s->verify);
	free(s->total);
}

/* FIRINGS at RT interleaved with FIRINGS at normal priority. */
static void
bench_rt_lever(struct bench *b, const char *name)
{
	const struct lever_entry *l = lever_find(name);
	struct rt_series s[2];
	const char *shown = strrchr(name, '/');
	char label[64];
	int i, m;

	if (l == NULL)
		return;
	snprintf(label, sizeof label, "%s%.40s", shown != NULL ? "ext:" : "",
	    shown != NULL ? shown + 1 : name);
	series_init(&s[0], b->n);
	series_init(&s[1], b->n);
	for (i = 0; i < 2 * b->n; i++) {
		struct errbuf e = { 0 };

		m = i % 2;   /* 0: normal, 1: rt; alternating */
		(void)timed_pull(b, l, m == 1, &s[m]);
		if (undo(b, l, &e) == -1) {
			fprintf(stderr, "bench: undo %s: %s\n", name, e.msg);
			s[m].failed++;
			break;
		}
	}
	rt_row(label, "normal", &s[0]);
	rt_row(label, "rt", &s[1]);
	b->failures += s[0].failed + s[1].failed;
	series_free(&s[0]);
	series_free(&s[1]);
}

/* bait -> cut-off verified of [deny, cgroup-freeze], RT as in a drill. */
static void
bench_rt_cutoff(struct bench *b)
{
	static const char *const seq[] = { "gateway-deny", "cgroup-freeze" };
	double *v[2];
	int k[2] = { 0, 0 }, failed[2] = { 0, 0 }, i, m;

	v[0] = xcalloc((size_t)b->n, sizeof(double));
	v[1] = xcalloc((size_t)b->n, sizeof(double));
	for (i = 0; i < 2 * b->n; i++) {
		struct lever_result r[2];
		struct lever_rt rt = { 0 };
		uint64_t bait;
		bool ok = true;
		size_t j;

		m = i % 2;
		bait = util_mono_ns();
		if (m == 1)
			(void)lever_rt_enter(&rt, LEVER_RT_BUDGET_MS);
		for (j = 0; j < 2; j++) {
			if (lever_pull(lever_find(seq[j]), &b->ctx, &r[j]) != 0)
				ok = false;
			(void)lever_rt_check(&rt);
		}
		lever_rt_leave(&rt);
		if (ok)
			v[m][k[m]++] = (double)(r[1].verified_ns - bait) / 1e6;
		else
			failed[m]++;
		for (j = 2; j-- > 0;) {
			struct errbuf e = { 0 };

			if (undo(b, lever_find(seq[j]), &e) == -1)
				failed[m]++;
		}
	}
	for (m = 0; m < 2; m++) {
		printf("%-22s %-6s %4d", "kernel cut-off", m ? "rt" : "normal",
		    k[m]);
		if (k[m] > 0) {
			qsort(v[m], (size_t)k[m], sizeof(double), cmp_double);
			printf(" | %7.3f %7.3f %7.3f  (bait -> freeze "
			    "verified)", pct(v[m], k[m], 0.5),
			    pct(v[m], k[m], 0.95), pct(v[m], k[m], 0.99));
		}
		if (failed[m] > 0)
			printf("  (%d failed)", failed[m]);
		printf("\n");
		b->failures += failed[m];
	}
	free(v[0]);
	free(v[1]);
}

static void
bench_rt(struct bench *b, const char *ext, int load, bool io, bool kernel)
{
	printf("\nkill path scheduling: normal priority vs real-time "
	    "(SCHED_FIFO %d), interleaved; load: %d busy process(es)%s\n",
	    LEVER_RT_PRIO, load, io ? " + 1 fsync writer" : "");
	printf("memory lock: %s\n", b->ctx.mlock != NULL ? b->ctx.mlock :
	    "-");
	print_loadavg("at start");
	printf("%-22s %-6s %4s | %-23s | %-23s | %-23s\n", "lever (ms)", "sched",
	    "n", "fire p50/p95/p99", "verify p50/p95/p99",
	    "total p50/p95/p99");
	bench_rt_lever(b, "gateway-deny");
	bench_rt_lever(b, "cgroup-freeze");
	bench_rt_lever(b, "link-down");
	if (!kernel) {
		bench_rt_lever(b, "pause");
		bench_rt_lever(b, "net-disconnect");
		bench_rt_lever(b, "kill");
		if (ext != NULL && lever_find(ext) != NULL)
			bench_rt_lever(b, ext);
	}
	bench_rt_cutoff(b);
	printf("real-time: %s\n", bench_rt_status[0] != '\0' ?
	    bench_rt_status : "-");
	print_loadavg("at end");
}

int
main(int argc, char **argv)
{
	struct bench b;
	struct errbuf e = { 0 };
	struct policy *p;
	char dir[] = "/tmp/ares-bench-XXXXXX", *run_dir, *ext = NULL;
	uint8_t rnd[4];
	char hex[9];
	int opt, rc = 0, drills = 0, load = 0;
	bool rtmode = false, io = false, kernel = false;
	const char *policy = ARES_SRCDIR "/policies/default.yaml";

	memset(&b, 0, sizeof b);
	b.n = 50;
	while ((opt = getopt(argc, argv, "n:x:r:p:RKL:I")) != -1) {
		if (opt == 'R')
			rtmode = true;
		else if (opt == 'K')
			rtmode = kernel = true;
		else if (opt == 'L')
			load = atoi(optarg) < 0 ? 0 : atoi(optarg) >
			    BENCH_LOAD_MAX ? BENCH_LOAD_MAX : atoi(optarg);
		else if (opt == 'I')
			io = true;
		else if (opt == 'n')
			b.n = atoi(optarg);
		else if (opt == 'r')
			drills = atoi(optarg);
		else if (opt == 'p')
			policy = optarg;
		else if (opt == 'x')
			ext = xasprintf("external:%s", optarg);
		else {
			fprintf(stderr, "usage: %s [-n FIRINGS] "
			    "[-x /abs/external-lever] [-r DRILLS -p POLICY] "
			    "[-R|-K] [-L N] [-I]\n",
			    argv[0]);
			return 2;
		}
	}
	if (load > 0 || io)
		load_start(load, io);
	if (drills > 0) {
		if (sodium_init() < 0)
			return 1;
		rc = bench_drills(drills, policy) > 0 ? 1 : 0;
		load_stop();
		return rc;
	}
	if (b.n < 1 || b.n > 100000)
		b.n = 50;
	if (ext == NULL) {
		const char *src = getenv("ARES_SRCDIR");

		ext = xasprintf("external:%s/leakbox/levers/example-lever",
		    src != NULL ? src : ARES_SRCDIR);
	}
	if (sodium_init() < 0)
		return 1;
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(b.run_id, sizeof b.run_id, "bench-%s", hex);
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	run_dir = xasprintf("%s/%s", dir, b.run_id);
	b.d = docker_open(NULL, &e);
	if (b.d == NULL || docker_negotiate(b.d, &e) == -1) {
		fprintf(stderr, "bench: %s\n", e.msg);
		return 3;
	}
	p = policy_parse(bench_policy, strlen(bench_policy), "bench.yaml", &e);
	if (p == NULL || util_mkdir_p(run_dir, 0755, &e) == -1 ||
	    (b.lab = lab_up(b.d, p, run_dir, b.run_id, 1, &e)) == NULL ||
	    agent_start(&b, true, &e) == -1) {
		fprintf(stderr, "bench: setup: %s\n", e.msg);
		rc = 1;
		goto out;
	}

	printf("ares lever benchmark: engine %s (API %s), %d firings each, "
	    "run %s\n", docker_engine_version(b.d), docker_api_version(b.d),
	    b.n, b.run_id);
	if (rtmode) {
		bench_rt(&b, ext, load, io, kernel);
		if (b.failures > 0)
			rc = 1;
		goto out;
	}
	printf("%-44s %4s %10s %10s %10s\n", "fire -> verified (ms)", "n",
	    "median", "p95", "max");
	bench_lever(&b, "gateway-deny");
	bench_lever(&b, "cgroup-freeze");
	bench_lever(&b, "link-down");
	bench_lever(&b, "pause");
	bench_lever(&b, "net-disconnect");
	bench_lever(&b, "kill");
	if (lever_find(ext) != NULL)
		bench_lever(&b, ext);
	else
		fprintf(stderr, "bench: %s: not an executable\n", ext);

	printf("\n%-44s %4s %10s %10s %10s\n",
	    "synthetic bait -> (ms)", "n", "median", "p95", "max");
	{
		static const char *const deny[] = { "gateway-deny" };
		static const char *const kern[] = { "gateway-deny",
		    "cgroup-freeze" };
		static const char *const kern2[] = { "gateway-deny",
		    "cgroup-freeze", "link-down" };
		static const char *const insp_p[] = { "gateway-deny", "pause" };
		static const char *const insp_n[] = { "gateway-deny",
		    "net-disconnect" };

		bench_sequence(&b, "gateway-deny verified", deny, 1, -1);
		bench_sequence(&b, "kernel cut-off [deny, cgroup-freeze]", kern,
		    2, -1);
		bench_sequence(&b, "both kernel levers [deny, freeze, link-down]*",
		    kern2, 3, 2);
		bench_sequence(&b, "inspect cut-off [deny, pause]", insp_p, 2, -1);
		bench_sequence(&b, "inspect cut-off [deny, net-disconnect]",
		    insp_n, 2, -1);
	}
	printf("* bait -> link-down verified (after freeze verified)\n");
	if (b.failures > 0)
		rc = 1;
out:
	load_stop();
	lever_ctx_release(&b.ctx);
	if (b.lab != NULL || b.d != NULL) {
		struct errbuf e2 = { 0 };

		if (b.d != NULL && lab_teardown(b.d, b.run_id, &e2) < 0) {
			fprintf(stderr, "bench: teardown: %s\n", e2.msg);
			rc = 1;
		}
	}
	lab_free(b.lab);
	policy_free(p);
	docker_close(b.d);
	(void)util_rm_rf(dir, &e);
	free(run_dir);
	free(ext);
	return rc;
}
