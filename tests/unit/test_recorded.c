/*
 * test_recorded.c - what the console lists of a recorded dir
 * (core/recorded.c) from hostile files: escape sequences are dropped,
 * numbers out of range ignored, ids that would leave the dir refused,
 * symlinks and oversized files not read, verdicts outside the four
 * words become "error", and a trial's rates are recomputed from its runs
 * (its own "summary" is not read).
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[256];

/* Write text to tmpdir/dir/name (dir made first). */
static void
put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", tmpdir, dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/%s/%s", tmpdir, dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int
setup(void **st)
{
	(void)st;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ares-test-recorded.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int
teardown(void **st)
{
	char cmd[300];

	(void)st;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_run_hostile(void **st)
{
	struct recorded_info in;
	char d[512];

	(void)st;
	put("r1", "report.json", "{\"verdict\": \"\\u001b[2Jcontained\\u001b]0;x\\u0007\","
	    "\"policy\": \"/a/b/ev\\u001b[31mil.yaml\", \"time_to_kill_ms\": 1e300,"
	    "\"generated_at\": \"2026-12-01T12:59:21.4Z\"}");
	snprintf(d, sizeof d, "%s/r1", tmpdir);
	assert_int_equal(recorded_info(d, &in), 0);
	assert_int_equal(in.kind, RECORDED_RUN);
	assert_null(strchr(in.verdict, 0x1b));
	assert_null(strchr(in.verdict, 0x07));
	assert_string_equal(in.verdict, "contained");
	assert_string_equal(in.policy, "evil");
	assert_true(in.ttk_ms < 0);           /* out of range: none */
	assert_true(in.when == 1796129961);   /* 2026-12-01T12:59:21Z */

	/* a symlinked report.json is not read */
	snprintf(d, sizeof d, "%s/r2", tmpdir);
	mkdir(d, 0700);
	{
		char src[600], dst[600];

		snprintf(src, sizeof src, "%s/r1/report.json", tmpdir);
		snprintf(dst, sizeof dst, "%s/r2/report.json", tmpdir);
		assert_int_equal(symlink(src, dst), 0);
	}
	assert_int_equal(recorded_info(d, &in), -1);
	assert_string_equal(in.verdict, "no report");

	/* larger than 1 MiB: not read */
	{
		char *big = malloc(2 * 1024 * 1024);

		assert_non_null(big);
		memset(big, ' ', 2 * 1024 * 1024 - 1);
		big[0] = '{';
		big[2 * 1024 * 1024 - 3] = '}';
		big[2 * 1024 * 1024 - 1] = '\0';
		put("r3", "report.json", big);
		free(big);
	}
	snprintf(d, sizeof d, "%s/r3", tmpdir);
	assert_int_equal(recorded_info(d, &in), -1);
}

static void
test_trial_hostile(void **st)
{
	struct trial t;
	struct recorded_info in;
	struct errbuf e = { 0 };
	char d[512];

	(void)st;
	put("trial-x", "trial.json", "{\"trial_id\": \"trial-x\", \"n\": 3,"
	    "\"j\": 2, \"level\": 0.95, \"complete\": true,"
	    "\"policy\": \"policies/default.yaml\","
	    "\"summary\": {\"rates\": {\"contained\": {\"k\": 3, \"n\": 3}}},"
	    "\"runs\": ["
	    "{\"index\": 0, \"run_id\": \"20261201-1\", \"verdict\": \"contained\","
	    " \"bait_fired\": true, \"time_to_kill_ms\": 10},"
	    "{\"index\": 0, \"run_id\": \"dup\", \"verdict\": \"breached\"},"
	    "{\"index\": 1, \"run_id\": \"../../etc\", \"verdict\": \"pwned\"},"
	    "{\"index\": 7, \"run_id\": \"out\", \"verdict\": \"breached\"},"
	    "{\"index\": -1, \"run_id\": \"neg\", \"verdict\": \"breached\"},"
	    "{\"index\": 2.5, \"run_id\": \"half\", \"verdict\": \"breached\"},"
	    "{\"index\": 2, \"run_id\": \"r2\", \"verdict\": \"breached\","
	    " \"bait_fired\": true, \"time_to_kill_ms\": -5}]}");
	snprintf(d, sizeof d, "%s/trial-x", tmpdir);
	assert_int_equal(recorded_trial_load(d, &t, NULL, &e), 0);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.runs[0].run_id, "20261201-1");   /* the first */
	assert_string_equal(t.runs[0].run_dir, "runs/20261201-1");
	assert_string_equal(t.runs[1].run_id, "");     /* would leave */
	assert_string_equal(t.runs[1].run_dir, "");
	assert_string_equal(t.runs[1].verdict, "error");
	assert_true(t.runs[2].time_to_kill_ms < 0);
	/* recomputed from the runs: 1 contained, 1 breached of 2 exercised */
	assert_int_equal(t.sum.contained_r.k, 1);
	assert_int_equal(t.sum.contained_r.n, 2);
	assert_int_equal(t.sum.nttk, 1);
	trial_free(&t);
	assert_int_equal(recorded_info(d, &in), 0);
	assert_int_equal(in.kind, RECORDED_TRIAL);
	assert_string_equal(in.verdict, "breached");
	assert_string_equal(in.policy, "default");
	/* n out of range */
	put("trial-y", "trial.json", "{\"n\": 100000, \"runs\": []}");
	snprintf(d, sizeof d, "%s/trial-y", tmpdir);
	assert_int_equal(recorded_trial_load(d, &t, NULL, &e), -1);
	trial_free(&t);
}

static void
test_fix_hostile(void **st)
{
	struct recorded_fix f;
	struct errbuf e = { 0 };
	char d[512];

	(void)st;
	put("fix-x", "evidence.jsonl", "");
	put("fix-x", "fix.json", "{\"fix_id\": \"x\", \"outcome\": \"verified\","
	    "\"reason\": \"ok\\u001b[5m\", \"policy_name\": \"p\","
	    "\"removed\": [\"docker-socket\"],"
	    "\"runs\": [{\"role\": \"original\", \"run_id\": \"../fix-x\","
	    " \"run_dir\": \"relative/dir\", \"verdict\": \"breached\"},"
	    "{\"role\": \"rerun\", \"run_id\": \"run-a\", \"verdict\": \"contained\","
	    " \"time_to_kill_ms\": 12.5}]}");
	put("fix-x", "policy.patch", "-flaws: [docker-socket]\n+flaws: []\n"
	    "\x1b]52;c;ZXZpbA==\x07\n");
	put("run-a", "evidence.jsonl", "");
	snprintf(d, sizeof d, "%s/fix-x", tmpdir);
	assert_int_equal(recorded_fix_load(d, &f, &e), 0);
	assert_string_equal(f.outcome, "verified");
	assert_null(strchr(f.reason, 0x1b));
	assert_int_equal(f.nremoved, 1);
	assert_int_equal(f.nruns, 2);
	assert_string_equal(f.runs[0].dir, "");   /* id refused, dir relative */
	assert_non_null(strstr(f.runs[1].dir, "/run-a"));
	assert_true(f.runs[1].ttk_ms == 12.5);
	assert_non_null(f.patch);
	assert_null(strchr(f.patch, 0x1b));
	assert_null(strchr(f.patch, 0x07));
	assert_null(f.pr);
	recorded_fix_free(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_hostile),
		cmocka_unit_test(test_trial_hostile),
		cmocka_unit_test(test_fix_hostile),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
