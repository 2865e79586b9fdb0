/*
 * fuzz_evidence.c - evidence_verify_buf on arbitrary bytes (a hash-chained
 * JSONL evidence file), with no expected run id and with a fixed one.
 */
#include "fuzz.h"

#define FZ_RUN_ID "20261129-234955-119e9a27"   /* replays/contained */

static void
fz_check(const struct evidence_verify_result *r, size_t size)
{
	if (r->ok && (r->bad_line != 0 || r->reason[0] != '\0'))
		abort();
	if (!r->ok && r->bad_line == 0 && size > 0)
		abort();
	if (memchr(r->reason, '\0', sizeof r->reason) == NULL ||
	    memchr(r->run_id, '\0', sizeof r->run_id) == NULL ||
	    memchr(r->head, '\0', sizeof r->head) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evidence_verify_result r;
	/* a private copy of exactly size bytes: reads past it are caught */
	char *buf = xmalloc(size > 0 ? size : 1);

	memcpy(buf, data, size);
	evidence_verify_buf(buf, size, NULL, &r);
	fz_check(&r, size);
	evidence_verify_buf(buf, size, FZ_RUN_ID, &r);
	fz_check(&r, size);
	free(buf);
	return 0;
}
