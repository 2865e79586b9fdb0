/*
 * fuzz_probe.c - probe_verify_dir on a dir whose probe.json is the fuzz
 * input ("<trusted comment>\n<probe.json>", signed by the harness with a
 * key made at startup and pinned), plus sensor chains from
 * replays/contained in evidence/ for the anchors to name.
 */
#include "fuzz.h"

static char *fz_run;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_run = fz_run_with_chains();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_verify_signed(fz_run, "probe.json", data, size, probe_verify_dir);
	(void)probe_dir_is(fz_run);
	return 0;
}
