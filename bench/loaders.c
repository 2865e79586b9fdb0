/*
 * bench/loaders.c - how the evidence loaders scale with their input (no
 * Docker, no network).
 *
 *   bench/loaders [-r REPEATS]
 *
 * 1. fix_load_evidence (the fix loop reading a run's evidence): a run dir
 *    whose evidence.jsonl holds N lines of "{}", N = 25000, 50000 and
 *    100000 (the bound).  Median CPU time of REPEATS loads each, and the
 *    ratio t(100000) / t(25000): about 4 when loading is linear, about 16
 *    when it is quadratic (as it was before fuzzing found it).
 * 2. replay_load (the console's replay) on an evidence.jsonl of wide lines
 *    ("[0,0,...]", 64000 bytes each) of 4, 8 and 16 MiB: the peak RSS of a
 *    child process that only loads it, next to a child that only starts.
 *    Memory near the file size means one line's JSON tree at a time; every
 *    line's tree at once was about 32 times the file.
 * Prints a table; exit 0, or 1 when a load fails.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CPU seconds of this process so far. */
static double
bench_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write n lines of "{}" as DIR/evidence.jsonl. */
static void
bench_write_lines(const char *dir, size_t n)
{
	char *p = xasprintf("%s/evidence.jsonl", dir);
	char *buf = xmalloc(3 * n + 1);
	struct errbuf e = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		memcpy(buf + 3 * i, "{}\n", 3);
	if (util_write_file(p, buf, 3 * n, 0644, &e) == -1)
		util_fatal("bench: %s", e.msg);
	free(buf);
	free(p);
}

/* Median CPU ms of reps fix_load_evidence(dir); -1 on a failed load. */
static double
bench_fix_load(const char *dir, int reps, size_t want)
{
	double *t = xcalloc((size_t)reps, sizeof *t), med;
	struct errbuf e = { 0 };
	int i;

	for (i = 0; i < reps; i++) {
		double t0 = bench_cpu();
		cJSON *a = fix_load_evidence(dir, &e);

		t[i] = (bench_cpu() - t0) * 1e3;
		if (a == NULL || (size_t)cJSON_GetArraySize(a) != want) {
			fprintf(stderr, "bench: fix_load_evidence: %s\n",
			    a == NULL ? e.msg : "wrong count");
			cJSON_Delete(a);
			free(t);
			return -1;
		}
		cJSON_Delete(a);
	}
	qsort(t, (size_t)reps, sizeof *t, bench_cmp);
	med = t[reps / 2];
	free(t);
	return med;
}

/* Write DIR/evidence.jsonl of wide lines up to bytes. */
static void
bench_write_wide(const char *dir, size_t bytes)
{
	const size_t width = 64000;
	char *p = xasprintf("%s/evidence.jsonl", dir);
	char *line = xmalloc(width + 4);
	FILE *f;
	size_t i, len;

	line[0] = '[';
	for (i = 1; i + 2 < width; i += 2)
		memcpy(line + i, "0,", 2);
	memcpy(line + i, "0]\n", 4);
	len = strlen(line);
	f = fopen(p, "w");
	if (f == NULL)
		util_fatal("bench: %s: cannot write", p);
	for (i = 0; (i + 1) * len <= bytes; i++)
		fputs(line, f);
	fclose(f);
	free(line);
	free(p);
}

/* Peak RSS (KiB) of a child that loads dir as a replay (dir NULL: does
 * nothing).  -1 when the child failed. */
static long
bench_child_rss(const char *dir)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid == -1)
		return -1;
	if (pid == 0) {
		struct errbuf e = { 0 };

		if (dir != NULL) {
			struct replay *rp = replay_load(dir, NULL, &e);

			if (rp == NULL) {
				fprintf(stderr, "bench: replay_load: %s\n",
				    e.msg);
				_exit(1);
			}
			replay_free(rp);
		}
		_exit(0);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return ru.ru_maxrss;
}

int
main(int argc, char **argv)
{
	static const size_t lines[] = { 25000, 50000, 100000 };
	static const size_t mib[] = { 4, 8, 16 };
	char tmpl[] = "/tmp/ares-bench-loaders.XXXXXX";
	double ms[3];
	long base, rss[3];
	int reps = 7, opt, rc = 0;
	size_t i;
	struct errbuf e = { 0 };

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt == 'r' && atoi(optarg) > 0)
			reps = atoi(optarg);
		else {
			fprintf(stderr, "usage: bench/loaders [-r REPEATS]\n");
			return 2;
		}
	}
	if (mkdtemp(tmpl) == NULL)
		util_fatal("bench: mkdtemp failed");

	printf("fix_load_evidence: N lines of {} (median CPU of %d loads)\n",
	    reps);
	printf("  %-10s %10s %12s\n", "lines", "ms", "us/line");
	for (i = 0; i < 3; i++) {
		bench_write_lines(tmpl, lines[i]);
		ms[i] = bench_fix_load(tmpl, reps, lines[i]);
		if (ms[i] < 0) {
			rc = 1;
			continue;
		}
		printf("  %-10zu %10.1f %12.3f\n", lines[i], ms[i],
		    ms[i] * 1e3 / (double)lines[i]);
	}
	if (rc == 0 && ms[0] > 0)
		printf("  ratio t(100000)/t(25000) = %.2f (linear ~4, "
		    "quadratic 16 or more)\n", ms[2] / ms[0]);

	printf("\nreplay_load: wide lines, peak RSS of a child (KiB)\n");
	base = bench_child_rss(NULL);
	printf("  %-10s %10ld\n", "no load", base);
	for (i = 0; i < 3; i++) {
		bench_write_wide(tmpl, mib[i] * 1024 * 1024);
		rss[i] = bench_child_rss(tmpl);
		if (rss[i] < 0) {
			rc = 1;
			continue;
		}
		printf("  %-7zu MiB %10ld  (+%ld over no load, %.1fx the "
		    "file)\n", mib[i], rss[i], rss[i] - base,
		    (double)(rss[i] - base) / (double)(mib[i] * 1024));
	}
	if (util_rm_rf(tmpl, &e) == -1)
		fprintf(stderr, "bench: %s\n", e.msg);
	return rc;
}
