/*
 * test_report_dirs.c - report.md of a trial dir and of a probe run dir
 * (core/report_dirs.c), from structs the test fills itself (no Docker):
 * the rates with their intervals, every finished run's row, the
 * time-to-kill histogram (bars that add up to the runs), the hash of the
 * signed record it names, how to verify; hostile text (a reason or an
 * observed output with '|', a newline, an escape) stays inside its cell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "internal.h"

static char dir[256];

static char *
read_md(void)
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/report.md", dir), *buf;
	size_t len;

	buf = util_read_file(p, 1 << 20, &len, &e);
	free(p);
	assert_non_null(buf);
	return buf;
}

/* The hex BLAKE2b-256 of dir/name. */
static void
hash_of(const char *name, char hex[EVIDENCE_HEX_BYTES])
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/%s", dir, name), *buf;
	uint8_t h[32];
	size_t len;

	buf = util_read_file(p, 1 << 20, &len, &e);
	assert_non_null(buf);
	crypto_generichash(h, sizeof h, (const uint8_t *)buf, len, NULL, 0);
	util_hex(h, sizeof h, hex);
	free(buf);
	free(p);
}

static void
put_file(const char *name, const char *text)
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/%s", dir, name);

	assert_int_equal(util_write_file(p, text, strlen(text), 0644, &e), 0);
	free(p);
}

static void
rate(struct trial_rate *r, uint64_t k, uint64_t n)
{
	struct errbuf e = { 0 };

	r->k = k;
	r->n = n;
	assert_int_equal(stats_clopper_pearson(k, n, 0.95, &r->lower,
	    &r->upper, &e), 0);
}

/* A trial of 6 runs, 5 finished (4 with a time to kill). */
static void
test_trial_md(void **state)
{
	static struct trial t;
	static const double ttk[5] = { 80.5, 85.25, -1, 90, 300 };
	static const char *const verdict[5] = { "contained", "contained",
	    "not-exercised", "contained", "breached" };
	struct errbuf e = { 0 };
	char hex[EVIDENCE_HEX_BYTES], *md, *p, line[64];
	size_t counted = 0;

	(void)state;
	memset(&t, 0, sizeof t);
	snprintf(t.id, sizeof t.id, "trial-20261202-010000-abcd1234");
	snprintf(t.dir, sizeof t.dir, "%s", dir);
	snprintf(t.policy, sizeof t.policy, "policies/default.yaml");
	snprintf(t.policy_blake2b, sizeof t.policy_blake2b, "%064d", 7);
	t.base_seed = 11;
	t.n = 6;   /* one not finished */
	t.jobs = 2;
	t.level = 0.95;
	t.runs = xcalloc(6, sizeof *t.runs);
	for (size_t i = 0; i < 5; i++) {
		struct trial_run *r = &t.runs[i];

		r->index = i;
		r->seed = 1000 + i;
		r->done = true;
		snprintf(r->run_id, sizeof r->run_id, "run-%zu", i);
		snprintf(r->verdict, sizeof r->verdict, "%s", verdict[i]);
		r->time_to_kill_ms = ttk[i];
		r->bait_fired = ttk[i] >= 0;
	}
	snprintf(t.runs[4].reason, sizeof t.runs[4].reason,
	    "leak | to the sink\n\x1b[2Jnext `cell` ![i](http://x.test/p)");
	/* the summary trial.c computes for these runs */
	t.sum.finished = 5;
	t.sum.contained = 3;
	t.sum.breached = 1;
	t.sum.not_exercised = 1;
	rate(&t.sum.bait, 4, 5);
	rate(&t.sum.contained_r, 3, 4);
	rate(&t.sum.breached_r, 1, 4);
	rate(&t.sum.leaked, 0, 4);
	t.sum.nttk = 4;
	t.sum.ttk_median = 87.625;
	t.sum.ttk_p95 = 300;
	t.sum.ttk_max = 300;
	t.complete = false;
	put_file("trial.json", "{\"format\":\"ares-trial-v1\"}\n");
	assert_int_equal(report_trial_md(&t, &e), 0);
	md = read_md();
	assert_non_null(strstr(md, "# ares trial trial-20261202-010000-abcd1234"));
	assert_non_null(strstr(md, "5 of 6 finished (incomplete)"));
	assert_non_null(strstr(md, "3 contained, 1 breached, 1 not exercised, "
	    "0 error"));
	/* the rates: same numbers and intervals as the summary */
	snprintf(line, sizeof line, "| bait taken | %llu/%llu |",
	    (unsigned long long)t.sum.bait.k, (unsigned long long)t.sum.bait.n);
	assert_non_null(strstr(md, line));
	snprintf(line, sizeof line, "[%.4f, %.4f]", t.sum.contained_r.lower,
	    t.sum.contained_r.upper);
	assert_non_null(strstr(md, line));
	assert_non_null(strstr(md, "| contained | 3/4 |"));
	assert_non_null(strstr(md, "median 87.625 ms"));
	/* every finished run has its row, with its time to kill */
	assert_non_null(strstr(md, "| 0 | run-0 | 1000 | contained | 80.500 ms |"));
	assert_non_null(strstr(md, "| 2 | run-2 | 1002 | not-exercised | - |"));
	assert_null(strstr(md, "run-5"));
	assert_non_null(strstr(md, "1 run(s) not finished"));
	/* the hostile reason stays in its cell: escaped, no newline, no ESC */
	assert_non_null(strstr(md, "leak \\| to the sink?"));
	assert_null(strchr(md, '\x1b'));
	/* no live image or link from agent text: ![i](u) is inert */
	assert_non_null(strstr(md, "\\!\\[i\\]\\(http://x.test/p\\)"));
	assert_null(strstr(md, "![i]("));
	p = strstr(md, "| 4 | run-4 |");
	assert_non_null(p);
	assert_true(strchr(p, '\n') > strstr(p, "cell"));
	/* the histogram: 4 runs with a time to kill, in 8 bins */
	p = strstr(md, "```\n");
	assert_non_null(p);
	for (int b = 0; b < 8; b++) {
		char *nl;
		size_t n;

		p = strchr(p, '\n') + 1;
		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_non_null(strstr(p, " ms | "));
		{
			const char *sp = nl;

			while (sp > p && sp[-1] != ' ')
				sp--;
			n = strtoul(sp, NULL, 10);
		}
		counted += n;
		if (n > 0)
			assert_true(memchr(p, '#', (size_t)(nl - p)) != NULL);
	}
	assert_int_equal(counted, 4);
	/* the record it names, and how to verify */
	hash_of("trial.json", hex);
	assert_non_null(strstr(md, hex));
	assert_non_null(strstr(md, "ares verify TRIAL_DIR"));
	assert_non_null(strstr(md, "minisign -Vm trial.json -p ares.pub"));
	assert_null(strstr(md, "## Engines"));   /* v1: no engines */
	free(md);
	/* --engine: the engines and each run's engine and failed attempts,
	 * names in their cells */
	t.multi = true;
	t.engines = xcalloc(2, sizeof *t.engines);
	t.nengines = 2;
	snprintf(t.engines[0].name, sizeof t.engines[0].name, "unix:///a");
	t.engines[0].capacity = 2;
	snprintf(t.engines[1].name, sizeof t.engines[1].name, "tcp://b|x:1");
	t.engines[1].capacity = 1;
	for (size_t i = 0; i < 5; i++)
		snprintf(t.runs[i].engine, sizeof t.runs[i].engine, "unix:///a");
	t.runs[3].nattempts = 1;
	t.runs[3].attempts = xcalloc(1, sizeof *t.runs[3].attempts);
	snprintf(t.runs[3].attempts[0].engine, sizeof t.runs[3].attempts[0].engine,
	    "tcp://b|x:1");
	snprintf(t.runs[3].attempts[0].run_dir,
	    sizeof t.runs[3].attempts[0].run_dir, "runs/run-3a");
	snprintf(t.runs[3].attempts[0].reason,
	    sizeof t.runs[3].attempts[0].reason, "the engine stopped answering");
	assert_int_equal(report_trial_md(&t, &e), 0);
	md = read_md();
	assert_non_null(strstr(md, "## Engines\n\n| engine | capacity |\n"
	    "|---|---|\n| unix:///a | 2 |\n| tcp://b\\|x:1 | 1 |\n"));
	assert_non_null(strstr(md, "| 0 | unix:///a | - |\n"));
	assert_non_null(strstr(md, "| 3 | unix:///a | tcp://b\\|x:1: "
	    "runs/run-3a, the engine stopped answering |\n"));
	free(md);
	free(t.runs[3].attempts);
	free(t.engines);
	free(t.runs);
}

static void
test_probe_md(void **state)
{
	static struct probe_report r;
	struct errbuf e = { 0 };
	char hex[EVIDENCE_HEX_BYTES], *md;

	(void)state;
	memset(&r, 0, sizeof r);
	snprintf(r.run_id, sizeof r.run_id, "20261202-010000-deadbeef");
	snprintf(r.run_dir, sizeof r.run_dir, "%s", dir);
	snprintf(r.policy, sizeof r.policy, "hardened");
	snprintf(r.variant, sizeof r.variant, "default");
	assert_true(probe_nrows >= 2);
	r.rows[0].row = &probe_table[0];
	r.rows[0].outcome = PROBE_PASS;
	snprintf(r.rows[0].observed, sizeof r.rows[0].observed, "1 nic");
	r.rows[0].ms = 12;
	r.rows[1].row = &probe_table[1];
	r.rows[1].outcome = PROBE_FAIL;
	snprintf(r.rows[1].observed, sizeof r.rows[1].observed,
	    "got | through\nhere");
	r.rows[1].ms = 40;
	r.nrows = 2;
	r.nplanned = 2;
	r.anchored = true;
	put_file("probe.json", "{\"format\":\"ares-probe-v1\"}\n");
	assert_int_equal(report_probe_md(&r, &e), 0);
	md = read_md();
	assert_non_null(strstr(md, "# ares probe 20261202-010000-deadbeef"));
	assert_non_null(strstr(md, probe_result_name(&r)));
	assert_non_null(strstr(md, probe_table[0].id));
	assert_non_null(strstr(md, probe_table[1].id));
	assert_non_null(strstr(md, "| PASS |"));
	assert_non_null(strstr(md, probe_outcome_name(PROBE_FAIL,
	    probe_table[1].core)));
	assert_non_null(strstr(md, "got \\| through?here"));
	assert_non_null(strstr(md, "- flaws: none"));
	hash_of("probe.json", hex);
	assert_non_null(strstr(md, hex));
	assert_non_null(strstr(md, "ares verify RUN_DIR"));
	free(md);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trial_md),
		cmocka_unit_test(test_probe_md),
	};
	char tmpl[] = "/tmp/ares-report-dirs.XXXXXX";
	int rc;

	if (sodium_init() < 0 || mkdtemp(tmpl) == NULL)
		return 1;
	snprintf(dir, sizeof dir, "%s", tmpl);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);

		if (system(cmd) != 0)
			rc = 1;
		free(cmd);
	}
	return rc;
}
