/*
 * fuzz_fix_policy.c - ares fix's minimal YAML edits on a policy text:
 * fix_policy_remove_flaw (every flaw of the catalogue) and
 * fix_policy_set_variant (every variant), each result re-parsed with
 * policy_parse, and fix_unified_diff of the original and the edit.
 *
 * When the input is a valid policy, an edit that succeeds must give a
 * valid policy that differs only as asked: the flaw gone and every other
 * flaw kept, or the variant set.
 */
#include "fuzz.h"

static void
fz_check_edit(const struct policy *orig, const struct policy *p,
    const char *flaw, const char *variant)
{
	size_t i;

	if (p == NULL) {
		fprintf(stderr, "edit of a valid policy does not parse\n");
		abort();
	}
	if (flaw != NULL) {
		if (policy_has_flaw(p, flaw)) {
			fprintf(stderr, "flaw %s still on\n", flaw);
			abort();
		}
		for (i = 0; i < orig->nflaws; i++)
			if (strcmp(orig->flaws[i], flaw) != 0 &&
			    !policy_has_flaw(p, orig->flaws[i])) {
				fprintf(stderr, "flaw %s lost removing %s\n",
				    orig->flaws[i], flaw);
				abort();
			}
	}
	if (variant != NULL && strcmp(p->variant, variant) != 0) {
		fprintf(stderr, "variant %s, wanted %s\n", p->variant, variant);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf e = { 0 };
	char *buf = xmalloc(size + 1);
	struct policy *orig;
	size_t i;

	memcpy(buf, data, size);
	buf[size] = '\0';
	orig = policy_parse(buf, size, "fuzz.yaml", &e);
	for (i = 0; i < flaw_count + variant_count; i++) {
		const char *flaw = NULL, *variant = NULL;
		char *out, *diff;
		struct policy *p;

		memset(&e, 0, sizeof e);
		if (i < flaw_count) {
			flaw = flaw_table[i].id;
			out = fix_policy_remove_flaw(buf, size, flaw, &e);
		} else {
			variant = variant_table[i - flaw_count].id;
			out = fix_policy_set_variant(buf, size, variant, &e);
		}
		if (out == NULL) {
			if (e.msg[0] == '\0')
				abort();
			continue;
		}
		p = policy_parse(out, strlen(out), "patched.yaml", &e);
		if (orig != NULL && (variant != NULL ||
		    policy_has_flaw(orig, flaw)))
			fz_check_edit(orig, p, flaw, variant);
		policy_free(p);
		diff = fix_unified_diff(buf, out, "a/policy.yaml",
		    "b/policy.yaml");
		free(diff);
		free(out);
	}
	policy_free(orig);
	free(buf);
	return 0;
}
