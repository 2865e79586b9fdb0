/*
 * fuzz_fix_policy.c - ares fix's minimal YAML edits on a policy text:
 * fix_policy_remove_flaw (every flaw of the catalogue) and
 * fix_policy_set_variant (every variant), each result re-parsed with
 * policy_parse, and fix_unified_diff of the original and the edit.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf e = { 0 };
	char *buf = xmalloc(size + 1);
	size_t i;

	memcpy(buf, data, size);
	buf[size] = '\0';
	for (i = 0; i < lab_nflaws + variant_count; i++) {
		char *out, *diff;
		struct policy *p;

		memset(&e, 0, sizeof e);
		if (i < lab_nflaws)
			out = fix_policy_remove_flaw(buf, size,
			    lab_flaws[i].id, &e);
		else
			out = fix_policy_set_variant(buf, size,
			    variant_table[i - lab_nflaws].id, &e);
		if (out == NULL) {
			if (e.msg[0] == '\0')
				abort();
			continue;
		}
		p = policy_parse(out, strlen(out), "patched.yaml", &e);
		policy_free(p);
		diff = fix_unified_diff(buf, out, "a/policy.yaml",
		    "b/policy.yaml");
		free(diff);
		free(out);
	}
	free(buf);
	return 0;
}
