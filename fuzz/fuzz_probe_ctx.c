/*
 * fuzz_probe_ctx.c - probe_ctx_parse on an arbitrary lab.json, then every
 * probe row's script built from the parsed facts.  The note and policy
 * it keeps (shown in reports) must be inert.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_ctx c;
	struct errbuf e = { 0 };
	char *buf = xmalloc(size > 0 ? size : 1);
	size_t i;

	memcpy(buf, data, size);
	if (probe_ctx_parse(buf, size, "/run/fuzz", &c, &e) == 0) {
		fz_assert_inert("probe_ctx.note", c.note);
		fz_assert_inert("probe_ctx.policy", c.policy);
		if (c.nflaws > POLICY_MAX_FLAWS)
			abort();
		for (i = 0; i < probe_nrows; i++) {
			char *s = probe_table[i].script(&c);

			free(s);
		}
		probe_ctx_free(&c);
	} else if (e.code != ERRBUF_INPUT || e.msg[0] == '\0')
		abort();
	free(buf);
	return 0;
}
