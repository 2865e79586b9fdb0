/*
 * test_sign.c - minisign-format Ed25519 signing (core/sign.c): round trip,
 * every tamper of a signature file rejected with its own reason, wrong
 * keys, malformed key and signature files, key file hygiene, and
 * interoperability with the stock minisign CLI both ways (skipped when
 * /usr/bin/minisign is missing, unless ARES_REQUIRE_MINISIGN=1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "internal.h"

#define MINISIGN "/usr/bin/minisign"
#define MSG "the report body\n"
#define COMMENT "ares-report-v1 run=test-0001 evidence.jsonl=3:abc"

struct fx {
	char dir[64];
	char keys[128], keys2[128], msg[128], sig[128];
};

static void
put(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static char *
get(const char *path, size_t *len)
{
	struct errbuf e = { 0 };
	char *b = util_read_file(path, 1 << 20, len, &e);

	assert_non_null(b);
	return b;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	struct errbuf e = { 0 };
	struct sign_secret *sk;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_sign.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->keys, sizeof f->keys, "%s/keys", f->dir);
	snprintf(f->keys2, sizeof f->keys2, "%s/keys2", f->dir);
	snprintf(f->msg, sizeof f->msg, "%s/msg.txt", f->dir);
	snprintf(f->sig, sizeof f->sig, "%s/msg.txt.minisig", f->dir);
	assert_int_equal(sign_keygen(f->keys, false, NULL, &e), 0);
	put(f->msg, MSG, strlen(MSG));
	sk = sign_secret_load(f->keys, &e);
	assert_non_null(sk);
	assert_int_equal(sign_file(sk, f->msg, COMMENT, &e), 0);
	sign_secret_free(sk);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };

	assert_int_equal(util_rm_rf(f->dir, &e), 0);
	free(f);
	return 0;
}

/* Verify msg against keys/ares.pub; returns rc, e has the reason. */
static int
verify(struct fx *f, const char *keys, struct errbuf *e, char tc[1100])
{
	char pub[160];

	snprintf(pub, sizeof pub, "%s/ares.pub", keys);
	memset(e, 0, sizeof *e);
	return sign_verify_file(pub, f->msg, NULL, tc, 1100, e);
}

static void
expect_reject(struct fx *f, const char *reason)
{
	struct errbuf e;
	char tc[1100];

	assert_int_equal(verify(f, f->keys, &e, tc), -1);
	if (strstr(e.msg, reason) == NULL)
		fail_msg("want \"%s\", got \"%s\"", reason, e.msg);
}

/* Split a 4-line file into lines (each without '\n'). */
struct lines {
	char l[8][2200];
	int n;
};

static void
read_lines(const char *path, struct lines *ls)
{
	size_t len, pos = 0;
	char *b = get(path, &len);

	ls->n = 0;
	while (pos < len && ls->n < 8) {
		char *nl = memchr(b + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - (b + pos)) : len - pos;

		assert_true(l < sizeof ls->l[0]);
		memcpy(ls->l[ls->n], b + pos, l);
		ls->l[ls->n][l] = '\0';
		ls->n++;
		pos += l + 1;
	}
	free(b);
}

static void
write_lines(const char *path, const struct lines *ls)
{
	char buf[8 * 2200 + 16];
	size_t off = 0;
	int i;

	for (i = 0; i < ls->n; i++)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s\n",
		    ls->l[i]);
	put(path, buf, off);
}

/* Decode line i (base64) into bin, apply mutate, re-encode. */
static void
mutate_b64_line(const char *path, int i, size_t want, size_t at,
    uint8_t xor_byte, const uint8_t *replace2)
{
	struct lines ls;
	uint8_t bin[256];
	size_t binlen;

	read_lines(path, &ls);
	assert_true(i < ls.n);
	assert_int_equal(sodium_base642bin(bin, sizeof bin, ls.l[i],
	    strlen(ls.l[i]), NULL, &binlen, NULL,
	    sodium_base64_VARIANT_ORIGINAL), 0);
	assert_int_equal(binlen, want);
	if (replace2 != NULL)
		memcpy(bin + at, replace2, 2);
	else
		bin[at] ^= xor_byte;
	sodium_bin2base64(ls.l[i], sizeof ls.l[i], bin, binlen,
	    sodium_base64_VARIANT_ORIGINAL);
	write_lines(path, &ls);
}

/* ---- round trip and key hygiene ------------------------------------- */

static void
test_roundtrip(void **state)
{
	struct fx *f = *state;
	struct sign_secret *sk;
	struct sign_pubkey pk, pk2;
	struct errbuf e = { 0 };
	struct stat sb;
	char tc[1100], path[160], head[80];
	size_t len;
	char *pub;

	assert_int_equal(verify(f, f->keys, &e, tc), 0);
	assert_string_equal(tc, COMMENT);

	snprintf(path, sizeof path, "%s/ares.key", f->keys);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	snprintf(path, sizeof path, "%s/ares.pub", f->keys);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	assert_int_equal(stat(f->keys, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);

	/* the public key file names the key id, and matches the secret */
	sk = sign_secret_load(f->keys, &e);
	assert_non_null(sk);
	assert_int_equal(sign_pubkey_load(path, &pk, &e), 0);
	sign_secret_pubkey(sk, &pk2);
	assert_memory_equal(pk.pk, pk2.pk, 32);
	assert_memory_equal(pk.keyid, pk2.keyid, 8);
	assert_string_equal(pk.keyid_hex, sign_secret_keyid(sk));
	assert_int_equal(strlen(pk.keyid_hex), 16);
	pub = get(path, &len);
	snprintf(head, sizeof head, "untrusted comment: ares public key %s\n",
	    pk.keyid_hex);
	assert_memory_equal(pub, head, strlen(head));
	free(pub);

	/* sign_verify with an in-memory key; explicit sig path */
	assert_int_equal(sign_verify(&pk2, f->msg, f->sig, NULL, 0, &e), 0);
	/* an empty trusted comment is fine too */
	assert_int_equal(sign_file(sk, f->msg, "", &e), 0);
	assert_int_equal(verify(f, f->keys, &e, tc), 0);
	assert_string_equal(tc, "");
	sign_secret_free(sk);
}

static void
test_keygen_refuses_overwrite(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	char id1[SIGN_KEYID_HEX], id2[SIGN_KEYID_HEX], pub[160];
	struct sign_pubkey pk;

	assert_true(sign_key_exists(f->keys));
	assert_int_equal(sign_keygen(f->keys, false, NULL, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "refusing to overwrite"));

	snprintf(pub, sizeof pub, "%s/ares.pub", f->keys);
	assert_int_equal(sign_pubkey_load(pub, &pk, &e), 0);
	memcpy(id1, pk.keyid_hex, sizeof id1);
	assert_int_equal(sign_keygen(f->keys, true, id2, &e), 0);
	assert_string_not_equal(id1, id2);
	/* the old signature no longer verifies with the new key */
	expect_reject(f, "key id mismatch");

	/* load_or_create makes a key on first use only */
	{
		bool created;
		struct sign_secret *sk = sign_secret_load_or_create(f->keys2,
		    &created, &e);

		assert_non_null(sk);
		assert_true(created);
		sign_secret_free(sk);
		sk = sign_secret_load_or_create(f->keys2, &created, &e);
		assert_non_null(sk);
		assert_false(created);
		sign_secret_free(sk);
	}
}

/* Parallel drills on first use: every one gets the same, single key. */
#define NRACERS 8
struct racer {
	const char *dir;
	char keyid[SIGN_KEYID_HEX];
	bool created, ok;
};

static void *
race_one(void *arg)
{
	struct racer *r = arg;
	struct errbuf e = { 0 };
	struct sign_secret *sk = sign_secret_load_or_create(r->dir,
	    &r->created, &e);

	if (sk != NULL) {
		memcpy(r->keyid, sign_secret_keyid(sk), sizeof r->keyid);
		r->ok = true;
		sign_secret_free(sk);
	}
	return NULL;
}

static void
test_first_use_race(void **state)
{
	struct fx *f = *state;
	struct racer r[NRACERS];
	pthread_t t[NRACERS];
	int i, created = 0;

	memset(r, 0, sizeof r);
	for (i = 0; i < NRACERS; i++) {
		r[i].dir = f->keys2;
		assert_int_equal(pthread_create(&t[i], NULL, race_one, &r[i]),
		    0);
	}
	for (i = 0; i < NRACERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (i = 0; i < NRACERS; i++) {
		assert_true(r[i].ok);
		assert_string_equal(r[i].keyid, r[0].keyid);
		created += r[i].created;
	}
	assert_int_equal(created, 1);
}

static void
test_secret_mode_refused(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	char path[160];
	static const mode_t bad[] = { 0640, 0604, 0620, 0644 };
	size_t i;

	snprintf(path, sizeof path, "%s/ares.key", f->keys);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(chmod(path, bad[i]), 0);
		memset(&e, 0, sizeof e);
		assert_null(sign_secret_load(f->keys, &e));
		assert_non_null(strstr(e.msg, "chmod 600"));
	}
	assert_int_equal(chmod(path, 0600), 0);
	{
		struct sign_secret *sk = sign_secret_load(f->keys, &e);

		assert_non_null(sk);
		sign_secret_free(sk);
	}
	/* missing key: a clear message */
	memset(&e, 0, sizeof e);
	assert_null(sign_secret_load(f->keys2, &e));
	assert_non_null(strstr(e.msg, "ares keygen"));
}

static void
test_key_dir(void **state)
{
	struct errbuf e = { 0 };
	char out[256];

	(void)state;
	assert_int_equal(sign_key_dir("/x/flag", out, sizeof out, &e), 0);
	assert_string_equal(out, "/x/flag");
	setenv("ARES_KEY_DIR", "/x/env", 1);
	assert_int_equal(sign_key_dir(NULL, out, sizeof out, &e), 0);
	assert_string_equal(out, "/x/env");
	unsetenv("ARES_KEY_DIR");
	setenv("XDG_CONFIG_HOME", "/x/xdg", 1);
	assert_int_equal(sign_key_dir(NULL, out, sizeof out, &e), 0);
	assert_string_equal(out, "/x/xdg/ares");
	setenv("XDG_CONFIG_HOME", "relative", 1);   /* ignored: not absolute */
	setenv("HOME", "/x/home", 1);
	assert_int_equal(sign_key_dir(NULL, out, sizeof out, &e), 0);
	assert_string_equal(out, "/x/home/.config/ares");
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(sign_key_dir(NULL, out, 8, &e), -1);
	assert_int_equal(sign_key_dir("", out, sizeof out, &e), -1);
}

/* ---- tampering -------------------------------------------------------- */

static void
test_flip_file_byte(void **state)
{
	struct fx *f = *state;
	char buf[] = MSG;

	buf[3] ^= 0x01;
	put(f->msg, buf, strlen(MSG));
	expect_reject(f, "signature does not match the file");
	/* appending is a change too */
	put(f->msg, MSG "x", strlen(MSG) + 1);
	expect_reject(f, "signature does not match the file");
}

static void
test_flip_signature_line(void **state)
{
	struct fx *f = *state;
	struct lines ls;

	/* a byte of the Ed25519 signature inside the "ED" blob */
	mutate_b64_line(f->sig, 1, 74, 40, 0x80, NULL);
	expect_reject(f, "signature does not match the file");

	/* a character that is not base64 at all */
	mutate_b64_line(f->sig, 1, 74, 40, 0x80, NULL);   /* undo */
	read_lines(f->sig, &ls);
	ls.l[1][10] = '*';
	write_lines(f->sig, &ls);
	expect_reject(f, "line 2: bad base64");
}

static void
test_flip_trusted_comment(void **state)
{
	struct fx *f = *state;
	struct lines ls;
	char *p;

	read_lines(f->sig, &ls);
	p = strstr(ls.l[2], "=3:");
	assert_non_null(p);
	p[1] = '4';    /* "evidence.jsonl=4:abc": a longer chain claimed */
	write_lines(f->sig, &ls);
	expect_reject(f, "trusted comment signature invalid");
}

static void
test_flip_global_signature(void **state)
{
	struct fx *f = *state;

	mutate_b64_line(f->sig, 3, 64, 5, 0x01, NULL);
	expect_reject(f, "trusted comment signature invalid");
}

static void
test_wrong_key(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	char tc[1100];

	assert_int_equal(sign_keygen(f->keys2, false, NULL, &e), 0);
	assert_int_equal(verify(f, f->keys2, &e, tc), -1);
	assert_non_null(strstr(e.msg, "key id mismatch"));
	assert_string_equal(tc, "");   /* nothing leaks out on failure */
}

/* Another key signs, then its key id is replaced by ours: the key id
 * check passes and the signature itself must fail. */
static void
test_forged_same_keyid(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct sign_pubkey mine;
	struct sign_secret *other;
	char pub[160];
	struct lines ls;
	uint8_t bin[80];
	size_t binlen;

	snprintf(pub, sizeof pub, "%s/ares.pub", f->keys);
	assert_int_equal(sign_pubkey_load(pub, &mine, &e), 0);
	assert_int_equal(sign_keygen(f->keys2, false, NULL, &e), 0);
	other = sign_secret_load(f->keys2, &e);
	assert_non_null(other);
	assert_int_equal(sign_file(other, f->msg, COMMENT, &e), 0);
	sign_secret_free(other);

	read_lines(f->sig, &ls);
	assert_int_equal(sodium_base642bin(bin, sizeof bin, ls.l[1],
	    strlen(ls.l[1]), NULL, &binlen, NULL,
	    sodium_base64_VARIANT_ORIGINAL), 0);
	memcpy(bin + 2, mine.keyid, 8);
	sodium_bin2base64(ls.l[1], sizeof ls.l[1], bin, binlen,
	    sodium_base64_VARIANT_ORIGINAL);
	write_lines(f->sig, &ls);
	expect_reject(f, "signature does not match the file");
}

/* ---- malformed files -------------------------------------------------- */

static void
expect_pub_reject(const char *text, const char *reason)
{
	struct sign_pubkey pk;
	struct errbuf e = { 0 };

	assert_int_equal(sign_pubkey_parse(text, strlen(text), "t.pub", &pk,
	    &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, reason) == NULL)
		fail_msg("want \"%s\", got \"%s\"", reason, e.msg);
}

static void
test_malformed_pubkey(void **state)
{
	struct fx *f = *state;
	char path[160], buf[4096], *nl;
	struct sign_pubkey pk;
	struct errbuf e = { 0 };
	size_t len;
	char *pub;

	snprintf(path, sizeof path, "%s/ares.pub", f->keys);
	pub = get(path, &len);
	assert_int_equal(sign_pubkey_parse(pub, len, "ok", &pk, &e), 0);

	expect_pub_reject("", "truncated");
	expect_pub_reject("untrusted comment: x\n", "truncated");
	expect_pub_reject("untrusted comment: x\nRWQ*notbase64\n",
	    "bad base64");
	/* right prefix, wrong length */
	expect_pub_reject("untrusted comment: x\nRWQbT32aA5fsymkYA07b\n",
	    "bad base64");
	/* line 1 must be the untrusted comment */
	nl = strchr(pub, '\n');
	snprintf(buf, sizeof buf, "comment: x%s", nl);
	expect_pub_reject(buf, "line 1");
	/* something after the key */
	snprintf(buf, sizeof buf, "%sjunk\n", pub);
	expect_pub_reject(buf, "unexpected content");
	/* a NUL byte */
	{
		char z[] = "untrusted comment: \0\nRWQ=\n";

		assert_int_equal(sign_pubkey_parse(z, sizeof z - 1, "z", &pk,
		    &e), -1);
		assert_non_null(strstr(e.msg, "NUL"));
	}
	free(pub);

	/* "ED" (a signature's algorithm) is not a public key algorithm */
	{
		static const uint8_t ed[2] = { 'E', 'D' }, eb[2] = { 'E', 'b' };

		mutate_b64_line(path, 1, 42, 0, 0, ed);
		assert_int_equal(sign_pubkey_load(path, &pk, &e), -1);
		assert_non_null(strstr(e.msg, "unsupported algorithm"));
		mutate_b64_line(path, 1, 42, 0, 0, eb);
		assert_int_equal(sign_pubkey_load(path, &pk, &e), -1);
		assert_non_null(strstr(e.msg, "unsupported algorithm"));
	}
	/* an overlong line, then a file over the size bound */
	memset(buf, 'A', sizeof buf);
	put(path, buf, 3000);
	assert_int_equal(sign_pubkey_load(path, &pk, &e), -1);
	assert_non_null(strstr(e.msg, "too long"));
	{
		char big[5000];

		memset(big, 'A', sizeof big);
		put(path, big, sizeof big);
		assert_int_equal(sign_pubkey_load(path, &pk, &e), -1);
		assert_non_null(strstr(e.msg, "too large"));
	}
}

static void
test_malformed_signature(void **state)
{
	struct fx *f = *state;
	static const uint8_t eb[2] = { 'E', 'b' }, legacy[2] = { 'E', 'd' };
	struct lines ls, orig;
	char big[9000];

	read_lines(f->sig, &orig);
	assert_int_equal(orig.n, 4);

	mutate_b64_line(f->sig, 1, 74, 0, 0, eb);
	expect_reject(f, "unsupported algorithm");
	mutate_b64_line(f->sig, 1, 74, 0, 0, legacy);
	expect_reject(f, "legacy algorithm");

	ls = orig;       /* truncated: the global signature is gone */
	ls.n = 3;
	write_lines(f->sig, &ls);
	expect_reject(f, "truncated");

	ls = orig;       /* cut inside the global signature */
	ls.l[3][40] = '\0';
	write_lines(f->sig, &ls);
	expect_reject(f, "line 4: bad base64");

	ls = orig;
	memmove(ls.l[2], ls.l[2] + 2, strlen(ls.l[2]) - 1);   /* "usted..." */
	write_lines(f->sig, &ls);
	expect_reject(f, "line 3 does not start");

	ls = orig;
	memcpy(ls.l[0], "trusted", 7);
	write_lines(f->sig, &ls);
	expect_reject(f, "line 1 does not start");

	ls = orig;       /* a control character in the trusted comment */
	ls.l[2][20] = '\x1b';
	write_lines(f->sig, &ls);
	expect_reject(f, "control character");

	ls = orig;       /* extra content after the 4 lines */
	strcpy(ls.l[4], "more");
	ls.n = 5;
	write_lines(f->sig, &ls);
	expect_reject(f, "unexpected content");

	memset(big, 'A', sizeof big);
	put(f->sig, big, sizeof big);
	expect_reject(f, "too large");

	put(f->sig, "", 0);
	expect_reject(f, "truncated");

	unlink(f->sig);
	expect_reject(f, "No such file");

	/* CRLF line endings (a file that went through Windows) still verify */
	{
		char buf[4096];
		size_t off = 0;
		int i;
		struct errbuf e;
		char tc[1100];

		for (i = 0; i < 4; i++)
			off += (size_t)snprintf(buf + off, sizeof buf - off,
			    "%s\r\n", orig.l[i]);
		put(f->sig, buf, off);
		assert_int_equal(verify(f, f->keys, &e, tc), 0);
		assert_string_equal(tc, COMMENT);
	}
}

static void
test_trusted_comment_rules(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct sign_secret *sk = sign_secret_load(f->keys, &e);
	char c[SIGN_COMMENT_MAX + 2], tc[1100];

	assert_non_null(sk);
	assert_int_equal(sign_file(sk, f->msg, "two\nlines", &e), -1);
	assert_non_null(strstr(e.msg, "control character"));
	memset(c, 'x', sizeof c);
	c[SIGN_COMMENT_MAX + 1] = '\0';
	assert_int_equal(sign_file(sk, f->msg, c, &e), -1);
	assert_non_null(strstr(e.msg, "longer than 1024"));
	c[SIGN_COMMENT_MAX] = '\0';
	assert_int_equal(sign_file(sk, f->msg, c, &e), 0);
	assert_int_equal(verify(f, f->keys, &e, tc), 0);
	assert_int_equal(strlen(tc), SIGN_COMMENT_MAX);
	/* tabs are allowed (minisign's default comment has them) */
	assert_int_equal(sign_file(sk, f->msg, "a\tb", &e), 0);
	sign_secret_free(sk);
}

static void
test_malformed_secret(void **state)
{
	struct fx *f = *state;
	static const uint8_t sc[2] = { 'S', 'c' }, bad[2] = { 'E', 'D' };
	struct errbuf e = { 0 };
	char path[160], orig[1024];
	size_t len;
	char *b;

	snprintf(path, sizeof path, "%s/ares.key", f->keys);
	b = get(path, &len);
	assert_true(len < sizeof orig);
	memcpy(orig, b, len);
	free(b);

	mutate_b64_line(path, 1, 158, 2, 0, sc);     /* encrypted key */
	assert_null(sign_secret_load(f->keys, &e));
	assert_non_null(strstr(e.msg, "encrypted"));
	put(path, orig, len);

	mutate_b64_line(path, 1, 158, 0, 0, bad);    /* algorithm */
	assert_null(sign_secret_load(f->keys, &e));
	assert_non_null(strstr(e.msg, "unsupported signature algorithm"));
	put(path, orig, len);

	mutate_b64_line(path, 1, 158, 130, 0x01, NULL);   /* checksum */
	assert_null(sign_secret_load(f->keys, &e));
	assert_non_null(strstr(e.msg, "checksum mismatch"));
	put(path, orig, len);

	mutate_b64_line(path, 1, 158, 100, 0x01, NULL);   /* public half */
	assert_null(sign_secret_load(f->keys, &e));
	assert_true(strstr(e.msg, "checksum mismatch") != NULL ||
	    strstr(e.msg, "does not match the seed") != NULL);
	put(path, orig, len);

	put(path, "untrusted comment: x\nnot-base64\n", 32);
	assert_null(sign_secret_load(f->keys, &e));
	assert_non_null(strstr(e.msg, "bad base64"));
	put(path, orig, len);

	{
		struct sign_secret *sk = sign_secret_load(f->keys, &e);

		assert_non_null(sk);
		sign_secret_free(sk);
	}
}

/* ---- the stock minisign CLI ------------------------------------------ */

static int
run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool
have_minisign(void)
{
	const char *req = getenv("ARES_REQUIRE_MINISIGN");

	if (access(MINISIGN, X_OK) == 0)
		return true;
	if (req != NULL && strcmp(req, "1") == 0)
		fail_msg("ARES_REQUIRE_MINISIGN=1 but %s is missing", MINISIGN);
	return false;
}

static void
test_minisign_interop(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct sign_secret *sk;
	char cmd[1024], tc[1100], mdir[160], mkey[200];
	size_t len;
	char *key;

	if (!have_minisign()) {
		skip();
		return;
	}
	/* 1. minisign's key pair and signature, checked by our code */
	snprintf(mdir, sizeof mdir, "%s/mkeys", f->dir);
	assert_int_equal(mkdir(mdir, 0700), 0);
	snprintf(cmd, sizeof cmd, MINISIGN " -G -W -p %s/m.pub -s %s/m.key "
	    "</dev/null >/dev/null 2>&1", mdir, mdir);
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof cmd, MINISIGN " -S -s %s/m.key -m %s -x %s "
	    "-t 'stock minisign comment' </dev/null >/dev/null 2>&1", mdir,
	    f->msg, f->sig);
	assert_int_equal(run(cmd), 0);
	snprintf(mkey, sizeof mkey, "%s/m.pub", mdir);
	assert_int_equal(sign_verify_file(mkey, f->msg, NULL, tc, sizeof tc,
	    &e), 0);
	assert_string_equal(tc, "stock minisign comment");

	/* 2. minisign's secret key (-W) loads in ares; ours verify in
	 *    minisign */
	snprintf(mkey, sizeof mkey, "%s/m.key", mdir);
	key = get(mkey, &len);
	snprintf(mkey, sizeof mkey, "%s/ares.key", mdir);
	put(mkey, key, len);
	free(key);
	assert_int_equal(chmod(mkey, 0600), 0);
	sk = sign_secret_load(mdir, &e);
	assert_non_null(sk);
	assert_int_equal(sign_file(sk, f->msg, COMMENT, &e), 0);
	sign_secret_free(sk);
	snprintf(cmd, sizeof cmd, MINISIGN " -Vm %s -p %s/m.pub >/dev/null "
	    "2>&1", f->msg, mdir);
	assert_int_equal(run(cmd), 0);

	/* 3. our own key pair: signed by ares, checked by minisign */
	sk = sign_secret_load(f->keys, &e);
	assert_non_null(sk);
	assert_int_equal(sign_file(sk, f->msg, COMMENT, &e), 0);
	sign_secret_free(sk);
	snprintf(cmd, sizeof cmd, MINISIGN " -Vm %s -p %s/ares.pub >/dev/null "
	    "2>&1", f->msg, f->keys);
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof cmd, MINISIGN " -Qm %s -Vp %s/ares.pub 2>/dev/null "
	    "| grep -qx '%s'", f->msg, f->keys, COMMENT);
	assert_int_equal(run(cmd), 0);

	/* 4. minisign -S accepts the secret key ares wrote */
	snprintf(cmd, sizeof cmd, MINISIGN " -S -s %s/ares.key -m %s -t 'by "
	    "minisign with the ares key' </dev/null >/dev/null 2>&1", f->keys,
	    f->msg);
	assert_int_equal(run(cmd), 0);
	assert_int_equal(verify(f, f->keys, &e, tc), 0);
	assert_string_equal(tc, "by minisign with the ares key");

	/* 5. a flipped byte fails in minisign too */
	sk = sign_secret_load(f->keys, &e);
	assert_non_null(sk);
	assert_int_equal(sign_file(sk, f->msg, COMMENT, &e), 0);
	sign_secret_free(sk);
	put(f->msg, "The report body\n", strlen(MSG));
	snprintf(cmd, sizeof cmd, MINISIGN " -Vm %s -p %s/ares.pub >/dev/null "
	    "2>&1", f->msg, f->keys);
	assert_int_not_equal(run(cmd), 0);
	expect_reject(f, "signature does not match the file");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_keygen_refuses_overwrite,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_use_race, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_secret_mode_refused,
		    setup, teardown),
		cmocka_unit_test(test_key_dir),
		cmocka_unit_test_setup_teardown(test_flip_file_byte, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flip_signature_line,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_flip_trusted_comment,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_flip_global_signature,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_key, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_forged_same_keyid, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_malformed_pubkey, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_malformed_signature,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_trusted_comment_rules,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_secret, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_minisign_interop, setup,
		    teardown),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
