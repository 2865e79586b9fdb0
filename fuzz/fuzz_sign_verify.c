/*
 * fuzz_sign_verify.c - sign_verify with the fuzz input as the .minisig of
 * a fixed file, against a key made at startup.
 *
 * An input that starts with '!' is a trusted comment instead: the harness
 * signs the file with it and flips the byte at the position given by the
 * second byte (if any) of the signature file, so the checks after the
 * Ed25519 verification are reached too.
 */
#include "fuzz.h"

static char *fz_file, *fz_sig;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_file = fz_path("signed.json");
	fz_sig = fz_path("signed.json.minisig");
	fz_write(fz_file, "{\"format\":\"fuzz\"}\n", 18);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char tc[SIGN_COMMENT_MAX + 1];
	struct errbuf e = { 0 };
	int rc;

	if (size > 0 && data[0] == '!') {
		char *c = xstrndup((const char *)data + 1, size - 1);

		unlink(fz_sig);
		if (sign_file(fz_sk, fz_file, c, &e) == 0 && size > 1 &&
		    data[1] != '!') {
			size_t len;
			char *s = util_read_file(fz_sig, 1 << 16, &len, NULL);

			if (s != NULL && len > 0) {
				s[data[1] % len] ^= 1;
				fz_write(fz_sig, s, len);
			}
			free(s);
		}
		free(c);
	} else
		fz_write(fz_sig, data, size);
	memset(&e, 0, sizeof e);
	rc = sign_verify(&fz_pk, fz_file, NULL, tc, sizeof tc, &e);
	if (rc == -1 && (e.code != ERRBUF_INPUT || e.msg[0] == '\0')) {
		fprintf(stderr, "sign_verify: %d %s\n", (int)e.code, e.msg);
		abort();
	}
	if (rc == 0 && strlen(tc) > SIGN_COMMENT_MAX)
		abort();
	return 0;
}
