/*
 * test_reducer.c - the live console and the replay cannot disagree: a real
 * drill on the real Docker Engine, its beats applied as they arrive to a
 * state named from the policy file (what the console's observer and
 * console_preload_policy do), then the run directory replayed
 * (replay_load): the last states show the same levers, flags, counts and
 * verdict, and that verdict and those levers are the drill's result.
 * Two drills: policies/default.yaml (contained) and
 * policies/flaw-docker-socket.yaml seed 7 (an orphan: breached).
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

/* The console's observer, minus the ring: every beat to the reducer. */
static void
live_observer(void *ctx, const struct drill_beat *b)
{
	replay_state_apply(ctx, b);
}

/* Every field the screens draw, equal. */
static void
assert_shown_equal(const struct replay_state *a, const struct replay_state *b)
{
	assert_int_equal(a->nlev, b->nlev);
	assert_int_equal(a->nverified, b->nverified);
	assert_int_equal(a->bait, b->bait);
	assert_int_equal(a->zapped, b->zapped);
	assert_int_equal(a->cut_off, b->cut_off);
	assert_int_equal(a->breach, b->breach);
	assert_int_equal(a->frozen, b->frozen);
	assert_int_equal(a->breaches, b->breaches);
	assert_int_equal(a->leaks, b->leaks);
	assert_int_equal(a->orphans, b->orphans);
	assert_int_equal(a->blocked, b->blocked);
	assert_int_equal(a->agent_steps, b->agent_steps);
	assert_int_equal(a->verdict, b->verdict);
	assert_string_equal(a->pose, b->pose);
	for (int c = 0; c < REPLAY_NCHANNELS; c++)
		assert_int_equal(a->channel_breaches[c], b->channel_breaches[c]);
	for (size_t i = 0; i < POLICY_MAX_LEVERS; i++) {
		const struct replay_lever_state *x = &a->lev[i], *y = &b->lev[i];

		assert_int_equal(x->fired, y->fired);
		assert_int_equal(x->verified, y->verified);
		assert_int_equal(x->failed, y->failed);
		assert_int_equal(x->named, y->named);
		assert_int_equal(x->cuts_off, y->cuts_off);
		assert_int_equal(x->fired_rel_ns, y->fired_rel_ns);
		assert_int_equal(x->verified_rel_ns, y->verified_rel_ns);
	}
}

/* Run policy (seed when has_seed) live, replay it, compare. */
static void
live_vs_replay(const char *policy, uint64_t seed, bool has_seed,
    enum drill_verdict want)
{
	const char *src = getenv("ARES_SRCDIR");
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	struct replay_state live;
	struct replay *rp;
	struct policy *p;
	char path[4096];

	snprintf(path, sizeof path, "%s/%s", src != NULL ? src : ".", policy);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s: %s", path, e.msg);
	replay_state_init(&live);
	for (size_t i = 0; i < p->nlevers && i < POLICY_MAX_LEVERS; i++)
		replay_state_lever(&live, i, p->levers[i]);
	policy_free(p);

	o.policy_path = path;
	o.seed = seed;
	o.has_seed = has_seed;
	o.observer = live_observer;
	o.observer_ctx = &live;
	if (drill_run(&o, &r, &e) != 0)
		fail_msg("drill_run: %s", e.msg);
	if (r.verdict != want)
		fail_msg("%s: verdict %s: %s", policy,
		    drill_verdict_name(r.verdict), r.verdict_reason);

	rp = replay_load(r.run_dir, NULL, &e);
	if (rp == NULL)
		fail_msg("replay_load %s: %s", r.run_dir, e.msg);
	assert_true(rp->nbeats > 0);
	assert_false(rp->truncated);
	assert_shown_equal(&live, &rp->states[rp->nbeats - 1]);

	/* and what both show is the drill's own result */
	assert_int_equal(live.verdict, r.verdict);
	assert_int_equal(live.nlev, r.nlevers);
	for (size_t i = 0; i < r.nlevers; i++) {
		assert_int_equal(live.lev[i].verified, r.levers[i].verified);
		assert_int_equal(live.lev[i].fired, r.levers[i].fired ||
		    r.levers[i].verified);
		if (r.levers[i].verified)
			assert_int_equal(live.lev[i].verified_rel_ns,
			    r.levers[i].verified_ns - r.start_ns);
	}
	assert_int_equal(live.bait, r.bait_fired);
	assert_int_equal(live.orphans, r.norphans);
	replay_free(rp);
}

static void
test_live_vs_replay_contained(void **state)
{
	(void)state;
	live_vs_replay("policies/default.yaml", 0, false,
	    DRILL_VERDICT_CONTAINED);
}

static void
test_live_vs_replay_orphan(void **state)
{
	(void)state;
	live_vs_replay("policies/flaw-docker-socket.yaml", 7, true,
	    DRILL_VERDICT_BREACHED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_vs_replay_contained),
		cmocka_unit_test(test_live_vs_replay_orphan),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = { 0 };
	struct docker *d;

	if (sodium_init() < 0)
		return 1;
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
