/*
 * fuzz_report.c - report_verify_dir on a run dir whose report.json is the
 * fuzz input, and report_anchors_parse on the same bytes as JSON.
 *
 * Input: "<trusted comment>\n<report.json>".  The harness signs report.json
 * with that trusted comment (a key made at startup, pinned as --pub), so
 * the parser and the checks behind the signature are reached.  The run dir
 * holds the evidence and files of replays/contained, so a report naming
 * them reaches the chain and file checks.
 */
#include "fuzz.h"

static char *fz_run;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const files[] = { "evidence.jsonl", "drill.json",
	    "agent.log", "report.md" };
	char *src, *dst;
	size_t i;

	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_run = fz_run_with_chains();
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		src = xasprintf("%s/replays/contained/%s", FUZZ_SRCDIR,
		    files[i]);
		dst = xasprintf("%s/%s", fz_run, files[i]);
		fz_copy(src, dst);
		free(src);
		free(dst);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_anchors *an = xcalloc(1, sizeof *an);
	const uint8_t *body;
	size_t blen;
	char *tc = fz_split_tc(data, size, &body, &blen);
	char why[256];
	cJSON *j;

	/* the anchor parser alone, on the "chains" member (or the whole) */
	j = cJSON_ParseWithLength((const char *)body, blen);
	if (j != NULL) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "chains");

		if (report_anchors_parse(c != NULL ? c : j, true, an, why,
		    sizeof why) == 0) {
			if (an->n > REPORT_MAX_CHAINS)
				abort();
		} else if (memchr(why, '\0', sizeof why) == NULL)
			abort();
		cJSON_Delete(j);
	}
	free(an);
	free(tc);

	fz_verify_signed(fz_run, "report.json", data, size,
	    report_verify_dir);
	return 0;
}
