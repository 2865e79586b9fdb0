/*
 * bench/runtimes.c - the same drill under runc and under gVisor (runsc),
 * in interleaved pairs.
 *
 *   bench/runtimes [-r PAIRS] [-p POLICY] [-R RUNTIME]
 *
 * POLICY (default policies/hardened.yaml) is copied twice into a temp
 * dir, its runtime: line (if any) replaced: once "runtime: runc", once
 * "runtime: RUNTIME" (default runsc).  Then PAIRS pairs of real drills
 * (drill_run, seed 7), the order inside a pair alternating (runc first,
 * then runsc first: ABBA), so a machine that gets slower or faster over
 * the run weighs on both.  Per runtime: time to kill, bait -> each lever
 * verified, bait -> first lever verified, and the whole drill's wall time
 * (lab up to teardown), as median, p95 and max in ms; then the ratio of
 * the medians (RUNTIME / runc) and the median of the per-pair ratios of
 * time to kill.  A drill without bait or without a verified cut-off is
 * counted as failed, not timed.  Exit 0, 1 when a drill failed, 2 on
 * usage.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#define SERIES (POLICY_MAX_LEVERS + 3)   /* levers, kill, first, wall */

struct rt_series {
	const char *runtime;
	char *policy;                         /* the temp copy */
	char names[POLICY_MAX_LEVERS][LEVER_NAME_MAX];
	size_t nlevers;
	double *v[SERIES];
	int k[SERIES];
	int failed;
};

/* qsort: ascending doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts a copy); -1 when n == 0. */
static double
median(const double *v, int n)
{
	double *c, m;

	if (n <= 0)
		return -1;
	c = xcalloc((size_t)n, sizeof *c);
	memcpy(c, v, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

/* One table row: label, n, median, p95 (nearest rank), max. */
static void
row(const char *label, const double *v, int n)
{
	double *c;

	if (n <= 0) {
		printf("  %-40s %4d %10s\n", label, 0, "-");
		return;
	}
	c = xcalloc((size_t)n, sizeof *c);
	memcpy(c, v, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, cmp_double);
	printf("  %-40s %4d %10.3f %10.3f %10.3f\n", label, n, median(c, n),
	    c[(int)(0.95 * (n - 1) + 0.5)], c[n - 1]);
	free(c);
}

/* Copy policy src into dir/<runtime>.yaml with "runtime: <runtime>" as
 * its only runtime line.  Returns the path (caller frees); NULL + e. */
static char *
rt_policy(const char *src, const char *dir, const char *runtime,
    struct errbuf *e)
{
	char *txt, *out, *path, *line, *save = NULL;
	size_t len, used = 0;

	txt = util_read_file(src, POLICY_MAX_BYTES, &len, e);
	if (txt == NULL)
		return NULL;
	out = xmalloc(len + 128);
	for (line = strtok_r(txt, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "runtime:", 8) != 0)
			used += (size_t)sprintf(out + used, "%s\n", line);
	used += (size_t)sprintf(out + used, "runtime: %s\n", runtime);
	path = xasprintf("%s/%s.yaml", dir, runtime);
	if (util_write_file(path, out, used, 0644, e) == -1) {
		free(path);
		path = NULL;
	}
	free(out);
	free(txt);
	return path;
}

/* One drill of s's policy; its times appended to s.  ratio_ttk: its time
 * to kill, or -1. */
static void
rt_drill(struct rt_series *s, const char *runs, double *ttk)
{
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	uint64_t t0 = util_mono_ns();
	double first = -1;
	size_t j;

	*ttk = -1;
	o.policy_path = s->policy;
	o.seed = 7;
	o.has_seed = true;
	o.runs_dir = runs;
	if (drill_run(&o, &r, &e) == -1) {
		fprintf(stderr, "bench: %s: drill: %s\n", s->runtime, e.msg);
		s->failed++;
		return;
	}
	if (!r.bait_fired || r.time_to_kill_ms < 0 ||
	    strcmp(r.runtime, s->runtime) != 0) {
		fprintf(stderr, "bench: %s: drill %s: bait %d, time to kill "
		    "%.3f, runtime '%s': not timed\n", s->runtime, r.run_id,
		    r.bait_fired, r.time_to_kill_ms, r.runtime);
		s->failed++;
		return;
	}
	s->nlevers = r.nlevers;
	for (j = 0; j < r.nlevers && j < POLICY_MAX_LEVERS; j++) {
		double ms = (double)(r.levers[j].verified_ns - r.bait_ns) / 1e6;

		snprintf(s->names[j], sizeof s->names[j], "%s",
		    r.levers[j].name);
		if (!r.levers[j].verified)
			continue;
		s->v[j][s->k[j]++] = ms;
		if (first < 0 || ms < first)
			first = ms;
	}
	s->v[POLICY_MAX_LEVERS][s->k[POLICY_MAX_LEVERS]++] = r.time_to_kill_ms;
	if (first >= 0)
		s->v[POLICY_MAX_LEVERS + 1][s->k[POLICY_MAX_LEVERS + 1]++] =
		    first;
	s->v[POLICY_MAX_LEVERS + 2][s->k[POLICY_MAX_LEVERS + 2]++] =
	    (double)(util_mono_ns() - t0) / 1e6;
	*ttk = r.time_to_kill_ms;
}

/* The table of one series. */
static void
rt_print(const struct rt_series *s, int pairs)
{
	char label[LEVER_NAME_MAX + 32];
	size_t j;

	printf("\n%s (%d drills, %d failed)          %4s %10s %10s %10s\n",
	    s->runtime, pairs, s->failed, "n", "median", "p95", "max");
	for (j = 0; j < s->nlevers; j++) {
		snprintf(label, sizeof label, "bait -> %.24s verified",
		    s->names[j]);
		row(label, s->v[j], s->k[j]);
	}
	row("time to kill", s->v[POLICY_MAX_LEVERS], s->k[POLICY_MAX_LEVERS]);
	row("bait -> first lever verified", s->v[POLICY_MAX_LEVERS + 1],
	    s->k[POLICY_MAX_LEVERS + 1]);
	row("drill wall time (lab up .. teardown)",
	    s->v[POLICY_MAX_LEVERS + 2], s->k[POLICY_MAX_LEVERS + 2]);
}

int
main(int argc, char **argv)
{
	const char *policy = ARES_SRCDIR "/policies/hardened.yaml";
	const char *sandbox = "runsc";
	char dir[] = "/tmp/ares-bench-rt-XXXXXX", *runs;
	struct rt_series s[2];
	struct errbuf e = { 0 };
	double *ratios;
	int pairs = 10, opt, i, nr = 0, rc;
	size_t j, x;

	while ((opt = getopt(argc, argv, "r:p:R:")) != -1) {
		if (opt == 'r')
			pairs = atoi(optarg);
		else if (opt == 'p')
			policy = optarg;
		else if (opt == 'R')
			sandbox = optarg;
		else {
			fprintf(stderr, "usage: %s [-r PAIRS] [-p POLICY] "
			    "[-R RUNTIME]\n", argv[0]);
			return 2;
		}
	}
	if (pairs < 1 || sodium_init() < 0 || mkdtemp(dir) == NULL)
		return 2;
	runs = xasprintf("%s/runs", dir);
	memset(s, 0, sizeof s);
	s[0].runtime = "runc";
	s[1].runtime = sandbox;
	for (x = 0; x < 2; x++) {
		s[x].policy = rt_policy(policy, dir, s[x].runtime, &e);
		if (s[x].policy == NULL) {
			fprintf(stderr, "bench: %s\n", e.msg);
			return 2;
		}
		for (j = 0; j < SERIES; j++)
			s[x].v[j] = xcalloc((size_t)pairs, sizeof(double));
	}
	ratios = xcalloc((size_t)pairs, sizeof *ratios);
	printf("bench/runtimes: %d interleaved pairs of %s, runc vs %s\n",
	    pairs, policy, sandbox);
	for (i = 0; i < pairs; i++) {
		double t[2];
		size_t a = (size_t)(i % 2), b2 = 1 - a;   /* ABBA */

		rt_drill(&s[a], runs, &t[a]);
		rt_drill(&s[b2], runs, &t[b2]);
		if (t[0] > 0 && t[1] > 0)
			ratios[nr++] = t[1] / t[0];
		fprintf(stderr, "bench: pair %d: time to kill runc %.3f ms, "
		    "%s %.3f ms\n", i + 1, t[0], sandbox, t[1]);
		(void)util_rm_rf(runs, &e);
	}
	rt_print(&s[0], pairs);
	rt_print(&s[1], pairs);
	printf("\nratio %s / runc of the medians: time to kill %.2f, first "
	    "lever %.2f, drill wall time %.2f\n", sandbox,
	    median(s[1].v[POLICY_MAX_LEVERS], s[1].k[POLICY_MAX_LEVERS]) /
	    median(s[0].v[POLICY_MAX_LEVERS], s[0].k[POLICY_MAX_LEVERS]),
	    median(s[1].v[POLICY_MAX_LEVERS + 1],
	    s[1].k[POLICY_MAX_LEVERS + 1]) / median(s[0].v[POLICY_MAX_LEVERS +
	    1], s[0].k[POLICY_MAX_LEVERS + 1]),
	    median(s[1].v[POLICY_MAX_LEVERS + 2],
	    s[1].k[POLICY_MAX_LEVERS + 2]) / median(s[0].v[POLICY_MAX_LEVERS +
	    2], s[0].k[POLICY_MAX_LEVERS + 2]));
	printf("median of the per-pair ratios of time to kill: %.2f (%d "
	    "pairs)\n", median(ratios, nr), nr);
	rc = s[0].failed + s[1].failed > 0 ? 1 : 0;
	for (x = 0; x < 2; x++) {
		for (j = 0; j < SERIES; j++)
			free(s[x].v[j]);
		free(s[x].policy);
	}
	free(ratios);
	(void)util_rm_rf(dir, &e);
	free(runs);
	return rc;
}
