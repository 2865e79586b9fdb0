/*
 * bench/trial.c - trial throughput and where each drill's time goes.
 *
 *   bench/trial [-n N] [-j J] [-r REPEATS] [-p POLICY] [-a ARES]...
 *
 * Runs `ARES trial --policy POLICY -n N -j J` (default N 10, J 2, one
 * repeat, policies/default.yaml, ARES ./ares or $ARES_BIN) REPEATS times
 * in a fresh temp runs dir, then `ARES verify` on the trial dir.  With
 * several -a, the binaries take turns inside each repeat (A B, then B A:
 * ABBA), so a machine that gets slower or faster over the run weighs on
 * each alike.  Per binary: drills/min of each trial (N over the wall time
 * of the whole `ares trial` process), their median; over every drill of
 * every repeat the median ms of each phase of its drill.json (`phases`,
 * docs/drill-json.md) and the sum of those medians, so the phase that
 * dominates the drill is visible; then, with two binaries, the ratio of
 * the median throughputs.  Exit 0; 1 when a trial failed (exit other
 * than 0/4), a run was `error` or a trial dir did not verify; 2 on usage.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define BT_MAX_BIN 4

struct bt_series {
	const char *ares;
	double *dpm;                  /* drills/min per trial */
	double *busy;                 /* % of the machine's CPU busy, all
	                                 processes (-1: unknown) */
	int ntrials;
	double *ph[DRILL_PHASE_N + 1]; /* per drill; [DRILL_PHASE_N]: wall */
	int nph;
	int errors, failed;
	int verdicts[5];              /* contained, breached, ne, error, ? */
};

/* qsort: ascending doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts v); -1 when n == 0. */
static double
median(double *v, int n)
{
	if (n <= 0)
		return -1;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run argv (stdout and stderr to /dev/null when quiet); its exit code,
 * -1 when it could not run or died of a signal. */
static int
run(char *const argv[], bool quiet)
{
	pid_t pid;
	int st;

	fflush(stdout);   /* the child must not write our buffer again */
	pid = fork();
	if (pid == -1)
		return -1;
	if (pid == 0) {
		if (quiet) {
			FILE *n = freopen("/dev/null", "w", stdout);

			(void)n;
			n = freopen("/dev/null", "w", stderr);
			(void)n;
		}
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The trial dir under runs (its trial-* entry), or NULL.  Caller
 * frees. */
static char *
bt_trial_dir(const char *runs)
{
	DIR *d = opendir(runs);
	struct dirent *de;
	char *dir = NULL;

	if (d == NULL)
		return NULL;
	while (dir == NULL && (de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "trial-", 6) == 0)
			dir = xasprintf("%s/%s", runs, de->d_name);
	closedir(d);
	return dir;
}

/* Every run of the trial at dir: its verdict counted, its drill.json
 * phases appended to s.  The number of runs read. */
static int
bt_read_runs(struct bt_series *s, const char *dir)
{
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/trial.json", dir), *buf;
	const cJSON *runs, *r;
	cJSON *j;
	size_t len;
	int n = 0;

	buf = util_read_file(path, 64u << 20, &len, &e);
	free(path);
	if (buf == NULL) {
		fprintf(stderr, "bench/trial: %s\n", e.msg);
		return 0;
	}
	j = cJSON_ParseWithLength(buf, len);
	free(buf);
	runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	cJSON_ArrayForEach(r, runs) {
		const char *v = util_json_str(r, "verdict", "?");
		const char *rd = util_json_str(r, "run_dir", NULL);
		static const char *const vs[] = { "contained", "breached",
		    "not-exercised", "error" };
		cJSON *dj;
		const cJSON *ph;
		size_t k;

		for (k = 0; k < 4 && strcmp(v, vs[k]) != 0; k++)
			;
		s->verdicts[k]++;
		if (k == 3)
			s->errors++;
		if (rd == NULL || rd[0] == '\0')
			continue;
		path = xasprintf("%s/%s/drill.json", dir, rd);
		buf = util_read_file(path, 16u << 20, &len, &e);
		free(path);
		if (buf == NULL)
			continue;
		dj = cJSON_ParseWithLength(buf, len);
		free(buf);
		ph = cJSON_GetObjectItemCaseSensitive(dj, "phases");
		if (cJSON_IsObject(ph)) {
			for (k = 0; k < DRILL_PHASE_N; k++)
				s->ph[k][s->nph] = util_json_num(ph,
				    drill_phase_name((enum drill_phase)k), 0);
			s->ph[DRILL_PHASE_N][s->nph] = util_json_num(dj,
			    "wall_ms", 0);
			s->nph++;
		}
		cJSON_Delete(dj);
		n++;
	}
	cJSON_Delete(j);
	return n;
}

/* The machine's busy and total CPU time so far (jiffies, /proc/stat's
 * first line); false when it cannot be read. */
static bool
bt_cpu(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (f == NULL)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return false;
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *total - v[3] - v[4];   /* idle, iowait */
	return true;
}

/* One trial of binary s->ares in a fresh runs dir under tmp; verified,
 * read, removed. */
static void
bt_trial(struct bt_series *s, const char *tmp, const char *policy,
    const char *n, const char *jobs, int rep)
{
	char *runs = xasprintf("%s/t%d-%p", tmp, rep, (void *)s);
	char *argv[] = { (char *)s->ares, "trial", "--policy", (char *)policy,
	    "-n", (char *)n, "-j", (char *)jobs, "--runs", runs, NULL };
	struct errbuf e = { 0 };
	unsigned long long b0 = 0, t0c = 0, b1 = 0, t1c = 0;
	bool cpu = bt_cpu(&b0, &t0c);
	uint64_t t0 = util_mono_ns();
	int rc = run(argv, true);
	double ms = (double)(util_mono_ns() - t0) / 1e6;
	char *dir = bt_trial_dir(runs);

	cpu = cpu && bt_cpu(&b1, &t1c) && t1c > t0c;

	if (rc != 0 && rc != 4) {
		fprintf(stderr, "bench/trial: %s trial: exit %d\n", s->ares, rc);
		s->failed++;
	}
	if (dir != NULL) {
		char *vargv[] = { (char *)s->ares, "verify", dir, NULL };
		int got = bt_read_runs(s, dir);

		if (run(vargv, true) != 0) {
			fprintf(stderr, "bench/trial: ares verify %s failed\n",
			    dir);
			s->failed++;
		}
		s->dpm[s->ntrials] = ms > 0 ? got * 60000.0 / ms : 0;
		s->busy[s->ntrials] = cpu ? 100.0 * (double)(b1 - b0) /
		    (double)(t1c - t0c) : -1;
		s->ntrials++;
		printf("  %-28s trial %d: %d drills in %.1f s, %.1f drills/min, "
		    "machine CPU %.0f%% busy\n", s->ares, rep + 1, got, ms / 1e3,
		    s->dpm[s->ntrials - 1], s->busy[s->ntrials - 1]);
		fflush(stdout);
	} else
		s->failed++;
	(void)util_rm_rf(runs, &e);
	free(dir);
	free(runs);
}

/* The summary of one binary. */
static void
bt_print(struct bt_series *s, const char *jobs)
{
	double sum = 0, m;
	size_t k;

	printf("\n%s: -j %s, %d trial(s), %d drill(s) (contained %d, "
	    "breached %d, not-exercised %d, error %d)\n", s->ares, jobs,
	    s->ntrials, s->verdicts[0] + s->verdicts[1] + s->verdicts[2] +
	    s->verdicts[3], s->verdicts[0], s->verdicts[1],
	    s->verdicts[2], s->verdicts[3]);
	printf("  drills/min median %.1f (machine CPU busy, median: %.0f%%)\n",
	    median(s->dpm, s->ntrials), median(s->busy, s->ntrials));
	if (s->nph == 0) {
		/* a build from before drill.json had phases */
		printf("  phases: none recorded (no \"phases\" in its "
		    "drill.json)\n");
		return;
	}
	printf("  %-14s %10s (%d drill(s) with phases)\n", "phase",
	    "median ms", s->nph);
	for (k = 0; k < DRILL_PHASE_N; k++) {
		m = median(s->ph[k], s->nph);
		sum += m > 0 ? m : 0;
		printf("  %-14s %10.1f\n", drill_phase_name((enum drill_phase)k),
		    m);
	}
	printf("  %-14s %10.1f\n", "sum", sum);
	printf("  %-14s %10.1f\n", "drill wall", median(s->ph[DRILL_PHASE_N],
	    s->nph));
}

int
main(int argc, char **argv)
{
	struct bt_series s[BT_MAX_BIN];
	const char *src = getenv("ARES_SRCDIR"), *policy = NULL;
	const char *n = "10", *jobs = "2";
	char tmp[] = "/tmp/ares-bench-trial-XXXXXX", *pol;
	int reps = 1, nbin = 0, c, i, b, bad = 0;
	long nv;

	memset(s, 0, sizeof s);
	while ((c = getopt(argc, argv, "n:j:r:p:a:")) != -1) {
		switch (c) {
		case 'n':
			n = optarg;
			break;
		case 'j':
			jobs = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'p':
			policy = optarg;
			break;
		case 'a':
			if (nbin == BT_MAX_BIN) {
				fprintf(stderr, "bench/trial: at most %d -a\n",
				    BT_MAX_BIN);
				return 2;
			}
			s[nbin++].ares = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench/trial [-n N] [-j J] "
			    "[-r REPEATS] [-p POLICY] [-a ARES]...\n");
			return 2;
		}
	}
	nv = strtol(n, NULL, 10);
	if (reps < 1 || reps > 100 || nv < 1 || nv > 1000 ||
	    atoi(jobs) < 1 || optind != argc) {
		fprintf(stderr, "bench/trial: -r 1..100, -n 1..1000, -j >= 1\n");
		return 2;
	}
	if (nbin == 0)
		s[nbin++].ares = getenv("ARES_BIN") != NULL ?
		    getenv("ARES_BIN") : "./ares";
	pol = policy != NULL ? xstrdup(policy) : xasprintf("%s/policies/"
	    "default.yaml", src != NULL ? src : ".");
	if (mkdtemp(tmp) == NULL) {
		perror("bench/trial: mkdtemp");
		return 1;
	}
	for (b = 0; b < nbin; b++) {
		s[b].dpm = xcalloc((size_t)reps, sizeof *s[b].dpm);
		s[b].busy = xcalloc((size_t)reps, sizeof *s[b].busy);
		for (size_t k = 0; k <= DRILL_PHASE_N; k++)
			s[b].ph[k] = xcalloc((size_t)(reps * nv), sizeof(double));
	}
	printf("bench/trial: ares trial --policy %s -n %s -j %s, %d "
	    "repeat(s), %d binar%s (ABBA)\n", pol, n, jobs, reps, nbin,
	    nbin == 1 ? "y" : "ies");
	for (i = 0; i < reps; i++)
		for (b = 0; b < nbin; b++) {
			int k = i % 2 ? nbin - 1 - b : b;

			bt_trial(&s[k], tmp, pol, n, jobs, i);
		}
	for (b = 0; b < nbin; b++) {
		bt_print(&s[b], jobs);
		bad += s[b].failed + s[b].errors;
	}
	if (nbin >= 2) {
		double m0 = median(s[0].dpm, s[0].ntrials);

		for (b = 1; b < nbin; b++)
			printf("\nthroughput %s / %s: %.2f\n", s[b].ares,
			    s[0].ares, m0 > 0 ? median(s[b].dpm,
			    s[b].ntrials) / m0 : 0);
	}
	{
		struct errbuf e = { 0 };

		(void)util_rm_rf(tmp, &e);
	}
	free(pol);
	return bad > 0 ? 1 : 0;
}
