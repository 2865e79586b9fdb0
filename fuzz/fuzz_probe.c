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
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const uint8_t *body;
	size_t blen;
	char *tc = fz_split_tc(data, size, &body, &blen);

	fz_write_signed(fz_run, "probe.json", tc, body, blen);
	if (probe_verify_dir(fz_run, fz_pub, &res, &e) == -1) {
		fprintf(stderr, "probe_verify_dir: %s\n", e.msg);
		abort();
	}
	fz_check_verify_result(fz_run, &res);
	report_verify_free(&res);
	(void)probe_dir_is(fz_run);
	free(tc);
	return 0;
}
