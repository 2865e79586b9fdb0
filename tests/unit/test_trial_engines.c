/*
 * test_trial_engines.c - ares trial --engine / --engines without an engine
 * (core/trial_engines.c): the engines file parser (good files, and bad
 * ones with their exact messages), the names trial.json gets (no ssh user,
 * no TLS path), and the scheduler's failover logic (which run an engine
 * takes, when a failed drill lost its engine, the failed attempt, the
 * rerun elsewhere, no engine left).
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct trial_engine eng[TRIAL_MAX_ENGINES];

/* Parse text as FILE "e.yaml" with default capacity 3. */
static int
parse(const char *text, size_t *n, struct errbuf *e)
{
	memset(eng, 0, sizeof eng);
	memset(e, 0, sizeof *e);
	return trial_engines_parse("e.yaml", text, strlen(text), 3, eng, n, e);
}

static void
test_file_good(void **state)
{
	struct errbuf e;
	size_t n;

	(void)state;
	assert_int_equal(parse("engines:\n"
	    "  - url: unix:///var/run/docker.sock\n"
	    "    capacity: 2\n"
	    "  - url: tcp://10.0.0.5\n"
	    "    cert_path: /etc/ares/b\n"
	    "  - url: ssh://deploy@build-3:2222\n"
	    "    capacity: 64\n", &n, &e), 0);
	assert_int_equal(n, 3);
	assert_string_equal(eng[0].name, "unix:///var/run/docker.sock");
	assert_int_equal(eng[0].capacity, 2);
	assert_string_equal(eng[0].cert_path, "");
	/* no port given: the name says none; the default capacity (-j) */
	assert_string_equal(eng[1].name, "tcp://10.0.0.5");
	assert_string_equal(eng[1].url, "tcp://10.0.0.5");
	assert_string_equal(eng[1].cert_path, "/etc/ares/b");
	assert_int_equal(eng[1].capacity, 3);
	/* the ssh user is not in the name trial.json gets */
	assert_string_equal(eng[2].name, "ssh://build-3:2222");
	assert_string_equal(eng[2].url, "ssh://deploy@build-3:2222");
	assert_int_equal(eng[2].capacity, 64);
	assert_null(strstr(eng[1].name, "/etc"));
}

/* Each bad file and its exact message. */
static void
test_file_bad(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "e.yaml:1:1: empty file (want engines: a list)" },
		{ "- url: unix:///x\n", "e.yaml:1:1: want a mapping with the key "
		    "engines, not a list" },
		{ "engine:\n  - url: unix:///x\n",
		    "e.yaml:1:1: engine: unknown key (only engines)" },
		{ "engines: unix:///x\n",
		    "e.yaml:1:10: engines: want a list, not a scalar" },
		{ "engines: []\n", "e.yaml:2:1: engines: no engine listed" },
		{ "engines:\n  - unix:///x\n", "e.yaml:2:5: engines[0]: want a "
		    "mapping (url, capacity, cert_path), not a scalar" },
		{ "engines:\n  - capacity: 2\n", "e.yaml:2:5: engines[0]: no "
		    "url" },
		{ "engines:\n  - url: unix:///x\n    capacity: 0\n",
		    "e.yaml:3:15: engines[0].capacity: \"0\": want an integer "
		    "1..64" },
		{ "engines:\n  - url: unix:///x\n    capacity: 65\n",
		    "e.yaml:3:15: engines[0].capacity: \"65\": want an integer "
		    "1..64" },
		{ "engines:\n  - url: unix:///x\n    capacity: two\n",
		    "e.yaml:3:15: engines[0].capacity: \"two\": want an integer "
		    "1..64" },
		{ "engines:\n  - url: unix:///x\n    port: 1\n",
		    "e.yaml:3:5: engines[0].port: unknown key (url, capacity, "
		    "cert_path)" },
		{ "engines:\n  - url: unix:///x\n    url: unix:///y\n",
		    "e.yaml:3:5: engines[0].url: given twice" },
		{ "engines:\n  - url: [a]\n",
		    "e.yaml:2:10: engines[0].url: want a scalar, not a list" },
		/* the URL's own errors are DOCKER_HOST's (docker_host_parse) */
		{ "engines:\n  - url: tcp://h:65536\n",
		    "e.yaml:2:10: engines[0].url=tcp://h:65536: bad port "
		    "\"65536\" (1..65535)" },
		{ "engines:\n  - url: http://h\n",
		    "e.yaml:2:10: engines[0].url=http://h: unsupported scheme "
		    "\"http\" (unix:///path, tcp://HOST:PORT or "
		    "ssh://[USER@]HOST[:PORT])" },
		{ "engines:\n  - url: tcp://u@h:1\n",
		    "e.yaml:2:10: engines[0].url=tcp://u@h:1: a user (\"...@\") "
		    "only goes with ssh://" },
		{ "engines:\n  - url: unix:///x\n    cert_path: /c\n",
		    "e.yaml:3:16: engines[0].cert_path: only goes with a tcp:// "
		    "engine" },
		{ "engines:\n  - url: tcp://h:1\n    cert_path: c\n",
		    "e.yaml:3:16: engines[0].cert_path: want an absolute "
		    "directory path" },
		{ "engines:\n  - url: unix:///x\n  - url: unix:///x\n",
		    "e.yaml:3:10: engines[1]: engine unix:///x is listed twice "
		    "(as engines[0])" },
		{ "engines:\n  - &a {url: unix:///x}\n",
		    "e.yaml:2:5: anchors and tags are not allowed" },
		{ "engines:\n  - url: !!str unix:///x\n",
		    "e.yaml:2:10: anchors and tags are not allowed" },
		{ "engines: *x\n", "e.yaml:1:10: aliases are not allowed" },
		{ "engines:\n  - url: unix:///x\n---\nengines: []\n",
		    "e.yaml:3:1: more than one document" },
		{ "engines:\n  - url: unix:///x\n  bad\n",
		    "e.yaml:4:1: YAML: could not find expected ':'" },
	};
	struct errbuf e;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (parse(cases[i].text, &n, &e) != -1 ||
		    strcmp(e.msg, cases[i].msg) != 0)
			fail_msg("case %zu: %s\n  got:  %s\n  want: %s", i,
			    cases[i].text, e.msg, cases[i].msg);
		assert_int_equal(e.code, ERRBUF_INPUT);
		assert_int_equal(n, 0);
	}
}

/* More than TRIAL_MAX_ENGINES, and a file beyond the size bound. */
static void
test_file_bounds(void **state)
{
	char buf[4096], *big;
	struct errbuf e;
	size_t n, len = 0;
	int i;

	(void)state;
	len += (size_t)snprintf(buf + len, sizeof buf - len, "engines:\n");
	for (i = 0; i <= TRIAL_MAX_ENGINES; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len,
		    "  - url: unix:///s%d\n", i);
	assert_int_equal(parse(buf, &n, &e), -1);
	assert_string_equal(e.msg, "e.yaml:18:5: engines[16]: more than 16 "
	    "engines");
	big = xcalloc(1, 70000);
	memset(big, '#', 69999);
	assert_int_equal(trial_engines_parse("e.yaml", big, 69999, 1, eng, &n,
	    &e), -1);
	assert_string_equal(e.msg, "e.yaml: larger than 65536 bytes");
	free(big);
}

/* --engine URLs and an engines file together: no engine twice. */
static void
test_from_options(void **state)
{
	const char *urls[] = { "unix:///a", "tcp://h:1" };
	struct trial_options o;
	struct trial_engine *en = NULL;
	struct errbuf e = { 0 };
	size_t n = 0;

	(void)state;
	memset(&o, 0, sizeof o);
	o.engine_urls = urls;
	o.nengine_urls = 2;
	assert_int_equal(trial_engines_from_options(&o, 4, &en, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(en[0].capacity, 4);
	assert_string_equal(en[1].name, "tcp://h:1");
	free(en);
	urls[1] = "unix:///a";
	assert_int_equal(trial_engines_from_options(&o, 4, &en, &n, &e), -1);
	assert_string_equal(e.msg, "engine unix:///a is given twice");
	urls[1] = "fd://";
	assert_int_equal(trial_engines_from_options(&o, 4, &en, &n, &e), -1);
	assert_string_equal(e.msg, "--engine=fd://: unsupported scheme \"fd\" "
	    "(unix:///path, tcp://HOST:PORT or ssh://[USER@]HOST[:PORT])");
}

/* A trial of n runs over two engines (A, B), nothing run yet. */
static void
trial_two(struct trial *t, size_t n)
{
	struct errbuf e = { 0 };
	size_t i;

	memset(t, 0, sizeof *t);
	t->multi = true;
	t->n = n;
	t->runs = xcalloc(n, sizeof *t->runs);
	for (i = 0; i < n; i++) {
		t->runs[i].index = i;
		t->runs[i].seed = trial_seed(7, i);
		t->runs[i].time_to_kill_ms = -1;
	}
	t->engines = xcalloc(TRIAL_MAX_ENGINES, sizeof *t->engines);
	assert_int_equal(trial_engine_set(&t->engines[0], "unix:///a",
	    "--engine", NULL, 1, &e), 0);
	assert_int_equal(trial_engine_set(&t->engines[1], "unix:///b",
	    "--engine", NULL, 1, &e), 0);
	t->nengines = 2;
}

/* Which failures are the engine's, which the drill's own. */
static void
test_lost_classify(void **state)
{
	(void)state;
	/* unreachable when the drill started */
	assert_true(trial_sched_engine_lost(-1, ERRBUF_ENGINE, false, false,
	    true));
	/* the drill saw it go (engine.lost) */
	assert_true(trial_sched_engine_lost(0, ERRBUF_NONE, true, true, true));
	/* an error verdict and no ping answer afterwards */
	assert_true(trial_sched_engine_lost(0, ERRBUF_NONE, false, true,
	    false));
	assert_true(trial_sched_engine_lost(-1, ERRBUF_INTERNAL, false, false,
	    false));
	/* the drill's own error: the engine still answers */
	assert_false(trial_sched_engine_lost(0, ERRBUF_NONE, false, true,
	    true));
	assert_false(trial_sched_engine_lost(-1, ERRBUF_INPUT, false, false,
	    true));
	/* a verdict is never an engine loss, even with a failed ping */
	assert_false(trial_sched_engine_lost(0, ERRBUF_NONE, false, false,
	    false));
	/* ... and even when the drill saw its engine go (a breach that also
	 * lost its engine is a breach: a result, never rerun) */
	assert_false(trial_sched_engine_lost(0, ERRBUF_NONE, true, false,
	    true));
	assert_false(trial_sched_engine_lost(0, ERRBUF_NONE, true, false,
	    false));
}

/* B takes run 1, goes away under it: a failed attempt on B (its run dir
 * named), run 1 back in the queue, B down, A runs it with its own seed. */
static void
test_failover(void **state)
{
	struct trial t;
	bool taken[4] = { false };
	uint64_t seed1;

	(void)state;
	trial_two(&t, 4);
	seed1 = t.runs[1].seed;
	assert_int_equal(trial_sched_next(&t, taken, 0, false), 0);
	taken[0] = true;
	assert_int_equal(trial_sched_next(&t, taken, 1, false), 1);
	taken[1] = true;
	/* stop: nothing new anywhere */
	assert_int_equal(trial_sched_next(&t, taken, 0, true), -1);
	trial_sched_requeue(&t, taken, 1, &t.runs[1], "20261204-1-ab",
	    "the engine stopped answering during agent: connection refused");
	assert_true(t.engines[1].down);
	assert_string_equal(t.engines[1].down_reason, "the engine stopped "
	    "answering during agent: connection refused");
	assert_false(taken[1]);
	assert_false(t.runs[1].done);
	assert_int_equal(t.runs[1].nattempts, 1);
	assert_string_equal(t.runs[1].attempts[0].engine, "unix:///b");
	assert_string_equal(t.runs[1].attempts[0].run_id, "20261204-1-ab");
	assert_string_equal(t.runs[1].attempts[0].run_dir,
	    "runs/20261204-1-ab");
	/* B takes nothing more; A takes run 1 next (lowest index) */
	assert_int_equal(trial_sched_next(&t, taken, 1, false), -1);
	assert_int_equal(trial_sched_next(&t, taken, 0, false), 1);
	/* the seed is the index's, whichever engine runs it */
	assert_true(t.runs[1].seed == seed1 && seed1 == trial_seed(7, 1));
	assert_int_equal(trial_sched_up(&t), 1);
	/* an attempt that had no run dir yet */
	trial_sched_requeue(&t, taken, 1, &t.runs[2], "", "unreachable");
	assert_string_equal(t.runs[2].attempts[0].run_dir, "");
	/* B's down reason stays the first one */
	assert_string_equal(t.engines[1].down_reason, "the engine stopped "
	    "answering during agent: connection refused");
	t.runs[0].done = true;
	t.runs[3].done = true;
	snprintf(t.runs[3].verdict, sizeof t.runs[3].verdict, "contained");
	/* A goes too: no engine left, what is not done stays not done (its
	 * attempts kept, --resume runs it), done runs untouched, the trial
	 * says why it stopped */
	trial_sched_requeue(&t, taken, 0, &t.runs[1], "20261204-1-cd", "gone");
	assert_int_equal(trial_sched_up(&t), 0);
	assert_int_equal(trial_sched_strand(&t), 2);
	assert_false(t.runs[1].done || t.runs[2].done);
	assert_string_equal(t.runs[1].verdict, "");
	assert_string_equal(t.stopped, "no healthy engine left "
	    "(unix:///a down, unix:///b down)");
	assert_int_equal(t.runs[1].nattempts, 2);
	assert_int_equal(t.runs[2].nattempts, 1);
	/* trial.json keeps the attempts of the runs not done (pending) and
	 * says why the trial stopped */
	{
		cJSON *j = trial_json(&t);
		char *txt = cJSON_PrintUnformatted(j);

		assert_non_null(strstr(txt, "\"stopped\":\"no healthy engine "
		    "left (unix:///a down, unix:///b down)\""));
		assert_non_null(strstr(txt, "\"pending\":[{\"index\":1,"));
		assert_non_null(strstr(txt, "\"run_id\":\"20261204-1-cd\""));
		assert_non_null(strstr(txt, "{\"index\":2,"));
		assert_non_null(strstr(txt, "\"complete\":false"));
		free(txt);
		cJSON_Delete(j);
	}
	assert_string_equal(t.runs[3].verdict, "contained");
	trial_free(&t);
}

/* One daemon under two spellings: the same GET /info ID is refused,
 * naming both entries; an unknown ID is no match. */
static void
test_engines_same(void **state)
{
	struct trial t;
	struct errbuf e = { 0 };

	(void)state;
	trial_two(&t, 1);
	snprintf(t.engines[0].engine_id, sizeof t.engines[0].engine_id,
	    "ABCD:EF01");
	assert_int_equal(trial_engines_same(&t, 0, &e), 0);
	assert_int_equal(trial_engines_same(&t, 1, &e), 0);   /* unknown */
	snprintf(t.engines[1].engine_id, sizeof t.engines[1].engine_id,
	    "ABCD:EF02");
	assert_int_equal(trial_engines_same(&t, 1, &e), 0);
	snprintf(t.engines[1].engine_id, sizeof t.engines[1].engine_id,
	    "ABCD:EF01");
	assert_int_equal(trial_engines_same(&t, 1, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, "engines unix:///a and unix:///b are the "
	    "same engine (ID, name and data root ABCD:EF01): give it once, "
	    "with the capacity it can take");
	trial_free(&t);
}

/* Attempts are bounded per run. */
static void
test_attempts_bounded(void **state)
{
	struct trial t;
	bool taken[1] = { false };
	int i;

	(void)state;
	trial_two(&t, 1);
	for (i = 0; i < TRIAL_MAX_ATTEMPTS + 3; i++)
		trial_sched_requeue(&t, taken, (size_t)(i % 2), &t.runs[0],
		    "x", "gone");
	assert_int_equal(t.runs[0].nattempts, TRIAL_MAX_ATTEMPTS);
	/* one session makes at most one attempt per engine: all are kept */
	assert_true(TRIAL_MAX_ATTEMPTS >= TRIAL_MAX_ENGINES);
	trial_free(&t);
}

/* An engine's own TLS files (engines file cert_path) reach its handle:
 * checked before connecting, named when missing; the env is not used. */
static void
test_cert_path(void **state)
{
	char dir[] = "/tmp/ares-te-unit.XXXXXX", path[64];
	struct docker_endpoint ep = { .host = "tcp://127.0.0.1:1",
	    .what = "--engine" };
	struct errbuf e = { 0 };
	struct docker *d;
	const char *const names[] = { "ca.pem", "cert.pem", "key.pem" };
	size_t i;

	(void)state;
	unsetenv("DOCKER_TLS_VERIFY");
	unsetenv("DOCKER_TLS");
	unsetenv("DOCKER_CERT_PATH");
	assert_non_null(mkdtemp(dir));
	ep.cert_path = dir;
	assert_null(docker_open_at(&ep, &e));
	snprintf(path, sizeof path, "%s/ca.pem", dir);
	assert_non_null(strstr(e.msg, path));
	assert_int_equal(e.code, ERRBUF_INPUT);
	for (i = 0; i < 3; i++) {
		FILE *f;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("x\n", f);
		fclose(f);
	}
	d = docker_open_at(&ep, &e);
	assert_non_null(d);
	assert_string_equal(docker_transport_name(d), "tcp+tls");
	snprintf(path, sizeof path, "%s/ca.pem", dir);
	assert_string_equal(docker_tls_ca(d), path);
	/* TLS on: the default port is the TLS one */
	assert_string_equal(docker_where(d), "tcp://127.0.0.1:1");
	docker_close(d);
	/* without cert_path and without the env: plain tcp is refused */
	ep.cert_path = NULL;
	unsetenv("ARES_ALLOW_PLAINTEXT_ENGINE");
	assert_null(docker_open_at(&ep, &e));
	assert_non_null(strstr(e.msg, "--engine=tcp://127.0.0.1:1: plain tcp "
	    "without TLS is refused"));
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_good),
		cmocka_unit_test(test_file_bad),
		cmocka_unit_test(test_file_bounds),
		cmocka_unit_test(test_from_options),
		cmocka_unit_test(test_lost_classify),
		cmocka_unit_test(test_failover),
		cmocka_unit_test(test_engines_same),
		cmocka_unit_test(test_attempts_bounded),
		cmocka_unit_test(test_cert_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
