/*
 * fuzz_sign_pubkey.c - sign_pubkey_parse on arbitrary bytes (an ares.pub
 * from a run dir or --pub).
 */
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sign_pubkey pk;
	struct errbuf e = { 0 };
	char *buf = xmalloc(size > 0 ? size : 1);

	memcpy(buf, data, size);
	if (sign_pubkey_parse(buf, size, "fuzz.pub", &pk, &e) == 0) {
		if (strlen(pk.keyid_hex) != 16)
			abort();
	} else if (e.code != ERRBUF_INPUT || e.msg[0] == '\0')
		abort();
	free(buf);
	return 0;
}
