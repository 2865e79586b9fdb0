/*
 * test_drill.c - a real drill on the real Docker Engine: the bait fires,
 * both levers verify, time to kill is positive, the evidence chain
 * verifies, and nothing of the run is left in the engine.
 *
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static char test_policy[4096];

static void
count_beats(void *ctx, const struct drill_beat *b)
{
	size_t *counts = ctx;

	counts[b->kind]++;
	/* the first use is "BAIT <name> taken"; later uses before the
	 * cut-off ("bait <name> used again", more likely on a loaded machine:
	 * one agent step may use the token twice) are in flight */
	if (b->kind == DRILL_BEAT_BAIT && strncmp(b->text, "BAIT ", 5) == 0)
		counts[DRILL_BEAT_COUNT]++;
	/* Beats are printable text, whatever the agent wrote. */
	for (const char *p = b->text; *p != '\0'; p++)
		assert_true((unsigned char)*p >= 0x20);
}

static void
assert_nothing_left(const char *run_id)
{
	struct errbuf e = { 0 };
	struct docker *d = docker_open(NULL, &e);
	char *label = xasprintf("ares.run=%s", run_id);
	cJSON *l;

	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), 0);
	l = docker_containers_by_label(d, label, &e);
	assert_non_null(l);
	assert_int_equal(cJSON_GetArraySize(l), 0);
	cJSON_Delete(l);
	l = docker_networks_by_label(d, label, &e);
	assert_non_null(l);
	assert_int_equal(cJSON_GetArraySize(l), 0);
	cJSON_Delete(l);
	free(label);
	docker_close(d);
}

static void
test_drill_contained(void **state)
{
	struct drill_options o = { 0 };
	struct drill_result r;
	struct evidence_verify_result v;
	struct errbuf e = { 0 };
	size_t counts[DRILL_BEAT_COUNT + 1] = { 0 };   /* + first bait */

	(void)state;
	o.policy_path = test_policy;
	o.observer = count_beats;
	o.observer_ctx = counts;
	if (drill_run(&o, &r, &e) != 0)
		fail_msg("drill_run: %s", e.msg);
	if (r.verdict != DRILL_VERDICT_CONTAINED)
		fail_msg("verdict %s: %s", drill_verdict_name(r.verdict),
		    r.verdict_reason);
	assert_true(r.bait_fired);
	assert_string_equal(r.bait_name, "tickets-admin-token");
	assert_int_equal(r.nlevers, 2);
	assert_string_equal(r.levers[0].name, "gateway-deny");
	assert_string_equal(r.levers[1].name, "net-disconnect");
	assert_true(r.levers[0].verified);
	assert_true(r.levers[1].verified);
	assert_true(r.levers[0].fired_ns >= r.bait_ns);
	assert_true(r.levers[1].fired_ns >= r.levers[0].verified_ns);
	assert_true(r.time_to_kill_ms > 0);
	assert_true(r.time_to_first_lever_ms > 0);
	assert_true(r.time_to_first_lever_ms <= r.time_to_kill_ms);
	assert_int_equal(r.breaches, 0);
	assert_true(r.agent_steps > 0);
	assert_int_equal(counts[DRILL_BEAT_COUNT], 1);
	assert_true(counts[DRILL_BEAT_BAIT] >= 1);
	assert_int_equal(counts[DRILL_BEAT_LEVER_VERIFIED], 2);
	assert_int_equal(counts[DRILL_BEAT_VERDICT], 1);

	assert_int_equal(evidence_verify_file(r.evidence_path, r.run_id, &v,
	    &e), 0);
	if (!v.ok)
		fail_msg("evidence line %zu: %s", v.bad_line, v.reason);
	assert_int_equal(v.entries, r.evidence_entries);
	assert_string_equal(v.head, r.evidence_head);
	assert_true(v.entries > 6);

	/* How the kill path was scheduled: said once, in drill.json too. */
	if (strncmp(r.kill_rt, "granted: SCHED_FIFO", 19) != 0 &&
	    strncmp(r.kill_rt, "refused: ", 9) != 0)
		fail_msg("kill_rt: \"%s\"", r.kill_rt);
	if (strncmp(r.kill_mlock, "locked: ", 8) != 0 &&
	    strncmp(r.kill_mlock, "refused: ", 9) != 0)
		fail_msg("kill_mlock: \"%s\"", r.kill_mlock);
	{
		char *p = xasprintf("%s/drill.json", r.run_dir);
		size_t n;
		char *txt = util_read_file(p, 1 << 20, &n, &e);
		cJSON *j = txt != NULL ? cJSON_Parse(txt) : NULL;
		const cJSON *kp = cJSON_GetObjectItemCaseSensitive(j,
		    "kill_path");

		assert_non_null(j);
		assert_string_equal(util_json_str(kp, "rt", ""), r.kill_rt);
		assert_string_equal(util_json_str(kp, "mlock", ""),
		    r.kill_mlock);
		cJSON_Delete(j);
		free(txt);
		free(p);
	}

	assert_nothing_left(r.run_id);
	assert_int_equal(drill_exit_code(&r), EXIT_CONTAINED);
}

/*
 * Flaw docker-socket, seed 7: the agent starts a sibling container through
 * the socket before it takes the bait.  The levers cut the agent off, but
 * the sibling still runs: the sweep reports it as an orphan, removes it, and
 * the drill is breached.
 */
static void
test_drill_orphan(void **state)
{
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	char policy[4096];
	const char *src = getenv("ARES_SRCDIR");

	(void)state;
	snprintf(policy, sizeof policy, "%s/policies/flaw-docker-socket.yaml",
	    src != NULL ? src : ".");
	o.policy_path = policy;
	o.seed = 7;
	o.has_seed = true;
	if (drill_run(&o, &r, &e) != 0)
		fail_msg("drill_run: %s", e.msg);
	assert_true(r.bait_fired);
	assert_true(r.levers[0].verified);
	assert_true(r.levers[1].verified);
	assert_int_equal(r.breaches, 0);
	assert_int_equal(r.norphans, 1);
	assert_string_equal(r.orphans[0].kind, "container");
	assert_true(r.orphans[0].removed);
	assert_non_null(strstr(r.orphans[0].detail, "origin agent"));
	assert_int_equal(r.verdict, DRILL_VERDICT_BREACHED);
	assert_int_equal(drill_exit_code(&r), EXIT_BREACHED);
	assert_nothing_left(r.run_id);
}

static void
test_drill_bad_policy(void **state)
{
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };

	(void)state;
	o.policy_path = "/nonexistent/policy.yaml";
	assert_int_equal(drill_run(&o, &r, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "/nonexistent/policy.yaml"));
}

static void
test_drill_engine_unreachable(void **state)
{
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };

	(void)state;
	setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1);
	o.policy_path = test_policy;
	assert_int_equal(drill_run(&o, &r, &e), -1);
	unsetenv("DOCKER_HOST");
	assert_int_equal(e.code, ERRBUF_ENGINE);
	assert_int_equal(errbuf_exit_code(&e), EXIT_ENGINE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drill_bad_policy),
		cmocka_unit_test(test_drill_engine_unreachable),
		cmocka_unit_test(test_drill_contained),
		cmocka_unit_test(test_drill_orphan),
	};
	const char *src = getenv("ARES_SRCDIR");
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = { 0 };
	struct docker *d;

	if (sodium_init() < 0)
		return 1;
	snprintf(test_policy, sizeof test_policy, "%s/policies/default.yaml",
	    src != NULL ? src : ".");
	d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1) {
		docker_close(d);
		if (req != NULL && strcmp(req, "1") == 0) {
			fprintf(stderr, "ARES_REQUIRE_DOCKER=1 but no engine: "
			    "%s\n", e.msg);
			return 1;
		}
		fprintf(stderr, "skip: no Docker Engine (%s)\n", e.msg);
		return 77;
	}
	docker_close(d);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
