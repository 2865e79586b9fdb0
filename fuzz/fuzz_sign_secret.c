/*
 * fuzz_sign_secret.c - sign_secret_load on an arbitrary ares.key (mode
 * 0600 in a private dir): minisign's unencrypted secret key layout.
 */
#include "fuzz.h"

static char *fz_key;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(false);
	fz_key = fz_path(SIGN_SECKEY_NAME);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf e = { 0 };
	struct sign_secret *sk;

	fz_write(fz_key, data, size);
	if (chmod(fz_key, 0600) == -1)
		fz_die("chmod", NULL);
	sk = sign_secret_load(fz_dir, &e);
	if (sk != NULL) {
		struct sign_pubkey pk;

		if (strlen(sign_secret_keyid(sk)) != 16)
			abort();
		sign_secret_pubkey(sk, &pk);
		sign_secret_free(sk);
	} else if (e.code != ERRBUF_INPUT || e.msg[0] == '\0') {
		fprintf(stderr, "sign_secret_load: %d %s\n", (int)e.code,
		    e.msg);
		abort();
	}
	return 0;
}
