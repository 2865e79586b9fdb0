/*
 * bench/levers.c - lever latency benchmark on the real Docker Engine.
 *
 *   bench/levers [-n FIRINGS] [-x /abs/external-lever] [-r DRILLS -p POLICY]
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
 * Prints a table (median, p95, max in ms) and removes everything it made.
 * Needs root for the kernel levers.  Exit 0, or 1 on a failed firing.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int
main(int argc, char **argv)
{
	struct bench b;
	struct errbuf e = { 0 };
	struct policy *p;
	char dir[] = "/tmp/ares-bench-XXXXXX", *run_dir, *ext = NULL;
	uint8_t rnd[4];
	char hex[9];
	int opt, rc = 0, drills = 0;
	const char *policy = ARES_SRCDIR "/policies/default.yaml";

	memset(&b, 0, sizeof b);
	b.n = 50;
	while ((opt = getopt(argc, argv, "n:x:r:p:")) != -1) {
		if (opt == 'n')
			b.n = atoi(optarg);
		else if (opt == 'r')
			drills = atoi(optarg);
		else if (opt == 'p')
			policy = optarg;
		else if (opt == 'x')
			ext = xasprintf("external:%s", optarg);
		else {
			fprintf(stderr, "usage: %s [-n FIRINGS] "
			    "[-x /abs/external-lever] [-r DRILLS -p POLICY]\n",
			    argv[0]);
			return 2;
		}
	}
	if (drills > 0) {
		if (sodium_init() < 0)
			return 1;
		return bench_drills(drills, policy) > 0 ? 1 : 0;
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
