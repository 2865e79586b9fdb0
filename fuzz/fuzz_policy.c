/*
 * fuzz_policy.c - policy_parse (the buffer API of policy_load) on arbitrary
 * YAML, and policy_load on the same bytes written to a file.
 */
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(false);
	return 0;
}

static void
fz_check(struct policy *p, const struct errbuf *e)
{
	if (p == NULL) {
		if (e->code != ERRBUF_INPUT || e->msg[0] == '\0') {
			fprintf(stderr, "policy error without ERRBUF_INPUT: "
			    "%d %s\n", (int)e->code, e->msg);
			abort();
		}
		return;
	}
	if (p->nlevers > POLICY_MAX_LEVERS || p->nbait > POLICY_MAX_BAIT ||
	    p->nflaws > POLICY_MAX_FLAWS)
		abort();
	(void)policy_has_flaw(p, "docker-socket");
	(void)policy_has_bait(p, "tickets-admin-token");
	policy_free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf e = { 0 };
	char *buf = xmalloc(size > 0 ? size : 1);
	char *path = fz_path("policy.yaml");

	memcpy(buf, data, size);
	fz_check(policy_parse(buf, size, "fuzz.yaml", &e), &e);
	free(buf);

	memset(&e, 0, sizeof e);
	fz_write(path, data, size);
	fz_check(policy_load(path, &e), &e);
	free(path);
	return 0;
}
