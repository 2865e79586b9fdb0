/*
 * fuzz_trial.c - trial_verify_dir on a trial dir whose trial.json is the
 * fuzz input ("<trusted comment>\n<trial.json>", signed by the harness
 * with a key made at startup and pinned).  runs/r1 holds a copy of
 * replays/contained, so a run entry can reach report_verify_dir.
 */
#include "fuzz.h"

static char *fz_trial;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *src, *dst;

	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_trial = fz_path("trial");
	src = xasprintf("%s/replays/contained", FUZZ_SRCDIR);
	dst = xasprintf("%s/runs/r1", fz_trial);
	fz_copy_dir(src, dst);
	free(src);
	free(dst);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_verify_signed(fz_trial, "trial.json", data, size, trial_verify_dir);
	(void)trial_dir_is(fz_trial);
	return 0;
}
