/*
 * fuzz_replay.c - replay_load on a run dir whose evidence.jsonl is the fuzz
 * input (pinned public key: a key made at startup).  Every beat text, the
 * verdict reason, the badge and the verify text must be inert; the marker
 * walk must stay inside the timeline.
 */
#include "fuzz.h"

static char *fz_run;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_run = fz_path("run");
	if (util_mkdir_p(fz_run, 0755, NULL) == -1)
		fz_die("mkdir", NULL);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf e = { 0 };
	struct replay_state st;
	struct replay *rp;
	char *path = xasprintf("%s/evidence.jsonl", fz_run);
	size_t i, m;

	fz_write(path, data, size);
	free(path);
	rp = replay_load(fz_run, fz_pub, &e);
	if (rp == NULL) {
		fprintf(stderr, "replay_load: %s\n", e.msg);
		abort();
	}
	if (rp->nbeats > REPLAY_MAX_BEATS || rp->nlines > REPLAY_MAX_LINES ||
	    rp->nlevers > POLICY_MAX_LEVERS)
		abort();
	replay_initial_state(rp, &st);
	for (i = 0; i < rp->nbeats; i++) {
		fz_assert_inert("beat.text", rp->beats[i].text);
		if ((int)rp->beats[i].kind < 0 ||
		    rp->beats[i].kind >= DRILL_BEAT_COUNT ||
		    rp->lines[i] < 1 || rp->lines[i] > rp->nlines)
			abort();
		if (rp->states[i].nlev > POLICY_MAX_LEVERS ||
		    rp->states[i].pose == NULL)
			abort();
		(void)replay_is_marker(rp, i);
	}
	for (i = 0; i < rp->nlevers; i++)
		fz_assert_inert("lever name", rp->lever_names[i]);
	fz_assert_inert("verdict_reason", rp->verdict_reason);
	fz_assert_inert("badge", rp->badge);
	fz_assert_inert("verify_text", rp->verify_text);
	fz_assert_inert("run_id", rp->run_id);
	fz_assert_inert("policy", rp->policy);
	fz_assert_inert("model", rp->model);
	fz_assert_inert("seed", rp->seed);
	fz_assert_inert("chain_reason", rp->chain_reason);
	if (rp->nbeats > 0) {
		m = replay_marker(rp, 0, 1);
		if (m >= rp->nbeats)
			abort();
		m = replay_marker(rp, rp->nbeats - 1, -1);
		if (m >= rp->nbeats)
			abort();
	}
	replay_free(rp);
	return 0;
}
