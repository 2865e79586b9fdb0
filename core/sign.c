/*
 * sign.c - Ed25519 signatures in minisign's file format (libsodium).
 *
 * Formats (docs/signing.md; checked against minisign 0.11):
 *
 *   public key    untrusted comment: ares public key <KEYID>
 *                 base64("Ed" | keyid[8] | pk[32])
 *   secret key    untrusted comment: ares secret key (unencrypted ...)
 *                 base64("Ed" | kdf "\0\0" | "B2" | salt[32] | ops[8] |
 *                        mem[8] | keyid[8] | sk[64] | chk[32])
 *                 chk = BLAKE2b-256("Ed" | keyid | sk); minisign -W writes
 *                 zeros there, which is accepted too
 *   signature     untrusted comment: <text>
 *                 base64("ED" | keyid[8] | Ed25519(BLAKE2b-512(file)))
 *                 trusted comment: <text>
 *                 base64(Ed25519(sig[64] | trusted comment text))
 *
 * Secret key material (the decoded file, the key itself, its base64) only
 * ever lives in sodium_malloc'd, locked memory and is wiped on release.
 * Every parser is bounded: file sizes, line lengths, exact decoded sizes,
 * exact algorithm bytes.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#define SIGN_UNTRUSTED_PREFIX "untrusted comment: "
#define SIGN_TRUSTED_PREFIX   "trusted comment: "
#define SIGN_PUBFILE_MAX      4096
#define SIGN_SECFILE_MAX      4096
#define SIGN_SIGFILE_MAX      8192
#define SIGN_LINE_MAX         2048   /* any line of a key or sig file */
#define SIGN_HASH_BYTES       64     /* BLAKE2b-512 of the signed file */

#define SIGN_PUB_BIN   (2 + SIGN_KEYID_BYTES + 32)          /* 42 */
#define SIGN_SIG_BIN   (2 + SIGN_KEYID_BYTES + 64)          /* 74 */
#define SIGN_SEC_BIN   (2 + 2 + 2 + 32 + 8 + 8 + SIGN_KEYID_BYTES + 64 + 32)
/* offsets in the secret key blob */
#define SIGN_SEC_KDF    2
#define SIGN_SEC_CHKALG 4
#define SIGN_SEC_KEYID  54
#define SIGN_SEC_SK     62
#define SIGN_SEC_CHK    126

struct sign_secret {
	uint8_t keyid[SIGN_KEYID_BYTES];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	char keyid_hex[SIGN_KEYID_HEX];
};

/* One line of a bounded text file (no '\n', trailing '\r' removed). */
struct sign_line {
	const char *p;
	size_t len;
};

/* ---- small helpers -------------------------------------------------- */

static int
sign_init(struct errbuf *e)
{
	if (sodium_init() < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "libsodium init failed");
	return 0;
}

/* Key id as minisign prints it: the little-endian u64 in upper-case hex
 * (zero-padded to 16 digits). */
static void
sign_keyid_hex(const uint8_t keyid[SIGN_KEYID_BYTES],
    char out[SIGN_KEYID_HEX])
{
	uint64_t v = 0;
	int i;

	for (i = SIGN_KEYID_BYTES - 1; i >= 0; i--)
		v = v << 8 | keyid[i];
	snprintf(out, SIGN_KEYID_HEX, "%016" PRIX64, v);
}

/*
 * Split buf[0..len) into at most max lines of at most SIGN_LINE_MAX bytes.
 * The last line need not end in '\n'; a trailing '\r' is dropped.  Fails
 * (-1 + e naming `name`) on more lines than max (blank trailing lines
 * excepted), an overlong line or a NUL byte.  Returns the line count.
 */
static int
sign_split(const char *buf, size_t len, const char *name,
    struct sign_line *lines, size_t max, struct errbuf *e)
{
	size_t pos = 0, n = 0;

	if (memchr(buf, '\0', len) != NULL)
		return errbuf_set(e, ERRBUF_INPUT, "%s: NUL byte (not a text "
		    "file)", name);
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t l = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;

		if (n == max) {
			/* only blank lines may follow */
			for (; pos < len; pos++)
				if (buf[pos] != '\n' && buf[pos] != '\r')
					return errbuf_set(e, ERRBUF_INPUT,
					    "%s: unexpected content after line "
					    "%zu", name, max);
			break;
		}
		if (l > SIGN_LINE_MAX)
			return errbuf_set(e, ERRBUF_INPUT, "%s: line %zu too "
			    "long (limit %d bytes)", name, n + 1,
			    SIGN_LINE_MAX);
		lines[n].p = buf + pos;
		lines[n].len = l;
		if (l > 0 && buf[pos + l - 1] == '\r')
			lines[n].len--;
		n++;
		pos += l + (nl != NULL ? 1 : 0);
	}
	return (int)n;
}

static bool
sign_has_prefix(const struct sign_line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->len >= n && memcmp(l->p, prefix, n) == 0;
}

/* Decode exactly outlen bytes of standard padded base64 from the whole of
 * s[0..slen).  0, or -1 on anything else. */
static int
sign_b64_decode(const char *s, size_t slen, uint8_t *out, size_t outlen)
{
	const char *end = NULL;
	size_t binlen = 0;

	if (slen == 0 || slen != sodium_base64_ENCODED_LEN(outlen,
	    sodium_base64_VARIANT_ORIGINAL) - 1)
		return -1;
	if (sodium_base642bin(out, outlen, s, slen, NULL, &binlen, &end,
	    sodium_base64_VARIANT_ORIGINAL) != 0)
		return -1;
	if (end != s + slen || binlen != outlen)
		return -1;
	return 0;
}

/*
 * What public key and signature files share: at most max bytes, want
 * lines (sign_split) into l, the first an untrusted comment, the second
 * base64 of exactly binlen bytes, decoded into bin.  what names the kind
 * in the errors ("public key", "signature"), name the file.  -1 + e
 * (ERRBUF_INPUT).
 */
static int
sign_parse_head(const char *buf, size_t len, const char *what,
    const char *name, size_t max, struct sign_line *l, int want,
    uint8_t *bin, size_t binlen, struct errbuf *e)
{
	int n;

	if (len > max)
		return errbuf_set(e, ERRBUF_INPUT, "%s %s: too large (limit "
		    "%zu bytes)", what, name, max);
	n = sign_split(buf, len, name, l, (size_t)want, e);
	if (n == -1)
		return errbuf_prefix(e, "%s", what);
	if (n < want)
		return errbuf_set(e, ERRBUF_INPUT, "%s %s: truncated (want %d "
		    "lines, got %d)", what, name, want, n);
	if (!sign_has_prefix(&l[0], SIGN_UNTRUSTED_PREFIX))
		return errbuf_set(e, ERRBUF_INPUT, "%s %s: line 1 does not "
		    "start with \"" SIGN_UNTRUSTED_PREFIX "\"", what, name);
	if (sign_b64_decode(l[1].p, l[1].len, bin, binlen) == -1)
		return errbuf_set(e, ERRBUF_INPUT, "%s %s: line 2: bad base64 "
		    "(not a minisign %s)", what, name, what);
	return 0;
}

/* Trusted comment rule: at most SIGN_COMMENT_MAX bytes, no byte below 0x20
 * other than tab, no DEL.  NULL when fine, else why not. */
static const char *
sign_comment_problem(const char *s, size_t len)
{
	size_t i;

	if (len > SIGN_COMMENT_MAX)
		return "longer than 1024 bytes";
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return "contains a control character";
	}
	return NULL;
}

int
sign_hash_file(const char *path, uint8_t *out, size_t outlen,
    uint64_t *bytes, struct errbuf *e)
{
	crypto_generichash_state st;
	unsigned char buf[65536];
	uint64_t total = 0;
	struct stat sb;
	int fd;

	if (outlen < crypto_generichash_BYTES_MIN ||
	    outlen > crypto_generichash_BYTES_MAX)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: bad hash length "
		    "%zu", path, outlen);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errbuf_set(e, errno == ENOENT ? ERRBUF_INPUT :
		    ERRBUF_INTERNAL, "%s: %s", path, strerror(errno));
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return errbuf_set(e, ERRBUF_INPUT, "%s: not a regular file",
		    path);
	}
	crypto_generichash_init(&st, NULL, 0, outlen);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			int err = errno;

			close(fd);
			return errbuf_set(e, ERRBUF_INTERNAL, "%s: read: %s",
			    path, strerror(err));
		}
		if (n == 0)
			break;
		crypto_generichash_update(&st, buf, (size_t)n);
		total += (uint64_t)n;
	}
	close(fd);
	crypto_generichash_final(&st, out, outlen);
	if (bytes != NULL)
		*bytes = total;
	return 0;
}

/*
 * Write len bytes to path with mode via a temporary file (util.c).
 * Without force an existing file is never replaced (ERRBUF_INPUT, with a
 * hint at --force); with force it is renamed over.
 */
static int
sign_write_new(const char *path, const void *buf, size_t len, mode_t mode,
    bool force, struct errbuf *e)
{
	size_t n;

	if (force)
		return util_write_file(path, buf, len, mode, e);
	if (util_write_new(path, buf, len, mode, e) == 0)
		return 0;
	if (e != NULL && e->code == ERRBUF_INPUT &&
	    (n = strlen(e->msg)) < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - n,
		    " (refusing to overwrite; use --force)");
	return -1;
}

/* ---- key directory -------------------------------------------------- */

int
sign_key_dir(const char *flag_dir, char *out, size_t outlen,
    struct errbuf *e)
{
	const char *env;
	int n;

	if (flag_dir != NULL) {
		if (flag_dir[0] == '\0')
			return errbuf_set(e, ERRBUF_INPUT, "--key-dir: empty "
			    "path");
		n = snprintf(out, outlen, "%s", flag_dir);
	} else if ((env = getenv("ARES_KEY_DIR")) != NULL && env[0] != '\0')
		n = snprintf(out, outlen, "%s", env);
	else if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/')
		n = snprintf(out, outlen, "%s/ares", env);
	else {
		const char *home = getenv("HOME");

		if (home == NULL || home[0] == '\0') {
			struct passwd *pw = getpwuid(getuid());

			home = pw != NULL ? pw->pw_dir : NULL;
		}
		if (home == NULL || home[0] == '\0')
			return errbuf_set(e, ERRBUF_INPUT, "no key directory: "
			    "set --key-dir, ARES_KEY_DIR or HOME");
		n = snprintf(out, outlen, "%s/.config/ares", home);
	}
	if (n < 0 || (size_t)n >= outlen)
		return errbuf_set(e, ERRBUF_INPUT, "key directory path too "
		    "long");
	return 0;
}

bool
sign_key_exists(const char *dir)
{
	char *path = xasprintf("%s/" SIGN_SECKEY_NAME, dir);
	struct stat sb;
	bool ok = lstat(path, &sb) == 0;

	free(path);
	return ok;
}

/* ---- public keys ---------------------------------------------------- */

/* The public key file text for keyid/pk (caller frees). */
static char *
sign_pubkey_text(const uint8_t keyid[SIGN_KEYID_BYTES], const uint8_t pk[32])
{
	uint8_t bin[SIGN_PUB_BIN];
	char b64[sodium_base64_ENCODED_LEN(SIGN_PUB_BIN,
	    sodium_base64_VARIANT_ORIGINAL)];
	char hex[SIGN_KEYID_HEX];

	memcpy(bin, "Ed", 2);
	memcpy(bin + 2, keyid, SIGN_KEYID_BYTES);
	memcpy(bin + 2 + SIGN_KEYID_BYTES, pk, 32);
	sodium_bin2base64(b64, sizeof b64, bin, sizeof bin,
	    sodium_base64_VARIANT_ORIGINAL);
	sign_keyid_hex(keyid, hex);
	return xasprintf(SIGN_UNTRUSTED_PREFIX "ares public key %s\n%s\n", hex,
	    b64);
}

/*
 * Parse a public key file: line 1 "untrusted comment: ...", line 2
 * base64("Ed" | keyid | pk), nothing else but blank lines.  -1 + e
 * (ERRBUF_INPUT) naming `name`.
 */
int
sign_pubkey_parse(const char *buf, size_t len, const char *name,
    struct sign_pubkey *out, struct errbuf *e)
{
	struct sign_line l[2];
	uint8_t bin[SIGN_PUB_BIN];

	if (sign_init(e) == -1)
		return -1;
	if (sign_parse_head(buf, len, "public key", name, SIGN_PUBFILE_MAX, l,
	    2, bin, sizeof bin, e) == -1)
		return -1;
	if (memcmp(bin, "Ed", 2) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "public key %s: unsupported "
		    "algorithm 0x%02x%02x (want \"Ed\")", name, bin[0], bin[1]);
	memcpy(out->keyid, bin + 2, SIGN_KEYID_BYTES);
	memcpy(out->pk, bin + 2 + SIGN_KEYID_BYTES, 32);
	sign_keyid_hex(out->keyid, out->keyid_hex);
	return 0;
}

int
sign_pubkey_load(const char *path, struct sign_pubkey *out, struct errbuf *e)
{
	size_t len;
	char *buf = util_read_file(path, SIGN_PUBFILE_MAX + 1, &len, e);
	int rc;

	if (buf == NULL)
		return errbuf_prefix(e, "public key");
	rc = sign_pubkey_parse(buf, len, path, out, e);
	free(buf);
	return rc;
}

/* ---- secret keys ---------------------------------------------------- */

static struct sign_secret *
sign_secret_alloc(void)
{
	struct sign_secret *sk = sodium_malloc(sizeof *sk);

	if (sk == NULL)
		util_fatal("sodium_malloc: out of memory");
	(void)sodium_mlock(sk, sizeof *sk);
	sodium_memzero(sk, sizeof *sk);
	return sk;
}

void
sign_secret_free(struct sign_secret *sk)
{
	if (sk == NULL)
		return;
	sodium_memzero(sk, sizeof *sk);
	(void)sodium_munlock(sk, sizeof *sk);
	sodium_free(sk);
}

const char *
sign_secret_keyid(const struct sign_secret *sk)
{
	return sk->keyid_hex;
}

void
sign_secret_pubkey(const struct sign_secret *sk, struct sign_pubkey *out)
{
	memcpy(out->keyid, sk->keyid, sizeof out->keyid);
	memcpy(out->pk, sk->pk, sizeof out->pk);
	memcpy(out->keyid_hex, sk->keyid_hex, sizeof out->keyid_hex);
}

/* chk = BLAKE2b-256("Ed" | keyid | sk) of a secret key blob. */
static void
sign_seckey_chk(const uint8_t *blob, uint8_t out[32])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, blob, 2);
	crypto_generichash_update(&st, blob + SIGN_SEC_KEYID, SIGN_KEYID_BYTES);
	crypto_generichash_update(&st, blob + SIGN_SEC_SK,
	    crypto_sign_SECRETKEYBYTES);
	crypto_generichash_final(&st, out, 32);
}

/*
 * Generate a key pair into dir.  Secret material is built in sodium memory
 * and wiped.  Without force neither file may exist beforehand; if writing
 * the public key fails the fresh secret key is removed again.
 */
int
sign_keygen(const char *dir, bool force, char keyid_hex[SIGN_KEYID_HEX],
    struct errbuf *e)
{
	size_t b64len = sodium_base64_ENCODED_LEN(SIGN_SEC_BIN,
	    sodium_base64_VARIANT_ORIGINAL);
	static const char head[] = SIGN_UNTRUSTED_PREFIX
	    "ares secret key (minisign format, unencrypted)\n";
	size_t textmax = sizeof head + b64len + 2;
	char *skpath = NULL, *pkpath = NULL, *pubtext = NULL, *text;
	struct sign_secret *sk;
	uint8_t *blob;
	struct stat sb;
	int rc = -1;

	if (sign_init(e) == -1)
		return -1;
	if (dir == NULL || dir[0] == '\0')
		return errbuf_set(e, ERRBUF_INPUT, "keygen: empty key "
		    "directory");
	skpath = xasprintf("%s/" SIGN_SECKEY_NAME, dir);
	pkpath = xasprintf("%s/" SIGN_PUBKEY_NAME, dir);
	if (!force && (lstat(skpath, &sb) == 0 || lstat(pkpath, &sb) == 0)) {
		errbuf_set(e, ERRBUF_INPUT, "%s already exists "
		    "(refusing to overwrite; use --force)",
		    lstat(skpath, &sb) == 0 ? skpath : pkpath);
		free(skpath);
		free(pkpath);
		return -1;
	}
	if (util_mkdir_p(dir, 0700, e) == -1) {
		free(skpath);
		free(pkpath);
		return -1;
	}

	sk = sign_secret_alloc();
	blob = sodium_malloc(SIGN_SEC_BIN);
	text = sodium_malloc(textmax);
	if (blob == NULL || text == NULL)
		util_fatal("sodium_malloc: out of memory");
	crypto_sign_keypair(sk->pk, sk->sk);
	randombytes_buf(sk->keyid, sizeof sk->keyid);
	sign_keyid_hex(sk->keyid, sk->keyid_hex);

	sodium_memzero(blob, SIGN_SEC_BIN);
	memcpy(blob, "Ed", 2);
	/* kdf_alg stays 0 0 (unencrypted), salt/opslimit/memlimit zero */
	memcpy(blob + SIGN_SEC_CHKALG, "B2", 2);
	memcpy(blob + SIGN_SEC_KEYID, sk->keyid, SIGN_KEYID_BYTES);
	memcpy(blob + SIGN_SEC_SK, sk->sk, crypto_sign_SECRETKEYBYTES);
	sign_seckey_chk(blob, blob + SIGN_SEC_CHK);
	memcpy(text, head, sizeof head - 1);
	sodium_bin2base64(text + sizeof head - 1, b64len, blob, SIGN_SEC_BIN,
	    sodium_base64_VARIANT_ORIGINAL);
	strcat(text, "\n");

	if (sign_write_new(skpath, text, strlen(text), 0600, force, e) == -1)
		goto out;
	pubtext = sign_pubkey_text(sk->keyid, sk->pk);
	if (sign_write_new(pkpath, pubtext, strlen(pubtext), 0644, force,
	    e) == -1) {
		(void)unlink(skpath);
		goto out;
	}
	if (keyid_hex != NULL)
		memcpy(keyid_hex, sk->keyid_hex, SIGN_KEYID_HEX);
	rc = 0;
out:
	sodium_free(text);      /* sodium_free wipes */
	sodium_free(blob);
	sign_secret_free(sk);
	free(pubtext);
	free(skpath);
	free(pkpath);
	return rc;
}

/* Read a secret key file (regular, not group/world accessible, bounded)
 * into a sodium buffer of SIGN_SECFILE_MAX + 1 bytes.  NULL + e. */
static char *
sign_read_secret_file(const char *path, size_t *len, struct errbuf *e)
{
	struct stat sb;
	size_t used = 0;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		errbuf_set(e, errno == ENOENT ? ERRBUF_INPUT : ERRBUF_INTERNAL,
		    "secret key %s: %s%s", path, strerror(errno),
		    errno == ENOENT ? " (create one with ares keygen)" : "");
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		errbuf_set(e, ERRBUF_INPUT, "secret key %s: not a regular "
		    "file", path);
		return NULL;
	}
	if ((sb.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		close(fd);
		errbuf_set(e, ERRBUF_INPUT, "secret key %s: mode %04o lets "
		    "group or others access it; refusing to use it (chmod "
		    "600 %s)", path, (unsigned)(sb.st_mode & 07777), path);
		return NULL;
	}
	if (sb.st_size > SIGN_SECFILE_MAX) {
		close(fd);
		errbuf_set(e, ERRBUF_INPUT, "secret key %s: too large (limit "
		    "%d bytes)", path, SIGN_SECFILE_MAX);
		return NULL;
	}
	buf = sodium_malloc(SIGN_SECFILE_MAX + 1);
	if (buf == NULL)
		util_fatal("sodium_malloc: out of memory");
	for (;;) {
		ssize_t n = read(fd, buf + used, SIGN_SECFILE_MAX + 1 - used);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			errbuf_set(e, ERRBUF_INTERNAL, "secret key %s: read: %s",
			    path, strerror(errno));
			close(fd);
			sodium_free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > SIGN_SECFILE_MAX) {
			errbuf_set(e, ERRBUF_INPUT, "secret key %s: too large "
			    "(limit %d bytes)", path, SIGN_SECFILE_MAX);
			close(fd);
			sodium_free(buf);
			return NULL;
		}
	}
	close(fd);
	*len = used;
	return buf;
}

/*
 * Decode and check a secret key blob into sk: algorithm "Ed", KDF none,
 * checksum "B2" with a matching (or, as minisign -W writes, all-zero)
 * checksum, and a public half that matches the seed.  -1 + e.
 */
static int
sign_secret_decode(const uint8_t *blob, const char *path,
    struct sign_secret *sk, struct errbuf *e)
{
	uint8_t chk[32], zero[32] = { 0 };
	uint8_t *pk2, *sk2;
	int bad;

	if (memcmp(blob, "Ed", 2) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "secret key %s: unsupported "
		    "signature algorithm (want \"Ed\")", path);
	if (blob[SIGN_SEC_KDF] != 0 || blob[SIGN_SEC_KDF + 1] != 0)
		return errbuf_set(e, ERRBUF_INPUT, "secret key %s: encrypted "
		    "(KDF \"%c%c\"); ares needs an unencrypted key: ares "
		    "keygen, or minisign -G -W", path,
		    blob[SIGN_SEC_KDF] >= 0x20 && blob[SIGN_SEC_KDF] < 0x7f ?
		    blob[SIGN_SEC_KDF] : '?', blob[SIGN_SEC_KDF + 1] >= 0x20 &&
		    blob[SIGN_SEC_KDF + 1] < 0x7f ? blob[SIGN_SEC_KDF + 1] : '?');
	if (memcmp(blob + SIGN_SEC_CHKALG, "B2", 2) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "secret key %s: unsupported "
		    "checksum algorithm (want \"B2\")", path);
	sign_seckey_chk(blob, chk);
	if (sodium_memcmp(chk, blob + SIGN_SEC_CHK, 32) != 0 &&
	    sodium_memcmp(zero, blob + SIGN_SEC_CHK, 32) != 0) {
		sodium_memzero(chk, sizeof chk);
		return errbuf_set(e, ERRBUF_INPUT, "secret key %s: checksum "
		    "mismatch (corrupt key file)", path);
	}
	sodium_memzero(chk, sizeof chk);

	pk2 = sodium_malloc(crypto_sign_PUBLICKEYBYTES);
	sk2 = sodium_malloc(crypto_sign_SECRETKEYBYTES);
	if (pk2 == NULL || sk2 == NULL)
		util_fatal("sodium_malloc: out of memory");
	crypto_sign_seed_keypair(pk2, sk2, blob + SIGN_SEC_SK);
	bad = sodium_memcmp(sk2, blob + SIGN_SEC_SK,
	    crypto_sign_SECRETKEYBYTES);
	if (bad == 0) {
		memcpy(sk->sk, sk2, crypto_sign_SECRETKEYBYTES);
		memcpy(sk->pk, pk2, crypto_sign_PUBLICKEYBYTES);
		memcpy(sk->keyid, blob + SIGN_SEC_KEYID, SIGN_KEYID_BYTES);
		sign_keyid_hex(sk->keyid, sk->keyid_hex);
	}
	sodium_free(pk2);
	sodium_free(sk2);
	if (bad != 0)
		return errbuf_set(e, ERRBUF_INPUT, "secret key %s: public half "
		    "does not match the seed (corrupt key file)", path);
	return 0;
}

struct sign_secret *
sign_secret_load(const char *dir, struct errbuf *e)
{
	struct sign_secret *sk = NULL;
	struct sign_line l[2];
	uint8_t *blob = NULL;
	char *path, *buf;
	size_t len = 0;
	int n;

	if (sign_init(e) == -1)
		return NULL;
	path = xasprintf("%s/" SIGN_SECKEY_NAME, dir);
	buf = sign_read_secret_file(path, &len, e);
	if (buf == NULL) {
		free(path);
		return NULL;
	}
	n = sign_split(buf, len, path, l, 2, e);
	if (n == -1) {
		errbuf_prefix(e, "secret key");
		goto out;
	}
	if (n < 2) {
		errbuf_set(e, ERRBUF_INPUT, "secret key %s: truncated (want 2 "
		    "lines, got %d)", path, n);
		goto out;
	}
	if (!sign_has_prefix(&l[0], SIGN_UNTRUSTED_PREFIX)) {
		errbuf_set(e, ERRBUF_INPUT, "secret key %s: line 1 does not "
		    "start with \"" SIGN_UNTRUSTED_PREFIX "\"", path);
		goto out;
	}
	blob = sodium_malloc(SIGN_SEC_BIN);
	if (blob == NULL)
		util_fatal("sodium_malloc: out of memory");
	if (sign_b64_decode(l[1].p, l[1].len, blob, SIGN_SEC_BIN) == -1) {
		errbuf_set(e, ERRBUF_INPUT, "secret key %s: line 2: bad base64 "
		    "(not a minisign secret key)", path);
		goto out;
	}
	sk = sign_secret_alloc();
	if (sign_secret_decode(blob, path, sk, e) == -1) {
		sign_secret_free(sk);
		sk = NULL;
	}
out:
	if (blob != NULL)
		sodium_free(blob);
	sodium_free(buf);
	free(path);
	return sk;
}

struct sign_secret *
sign_secret_load_or_create(const char *dir, bool *created, struct errbuf *e)
{
	if (created != NULL)
		*created = false;
	if (!sign_key_exists(dir)) {
		if (sign_keygen(dir, false, NULL, e) == 0) {
			if (created != NULL)
				*created = true;
		} else if (!sign_key_exists(dir))
			return NULL;
		/* else another drill made the key first: use it */
	}
	return sign_secret_load(dir, e);
}

int
sign_pubkey_write(const struct sign_secret *sk, const char *path,
    struct errbuf *e)
{
	char *text = sign_pubkey_text(sk->keyid, sk->pk);
	int rc = util_write_file(path, text, strlen(text), 0644, e);

	free(text);
	return rc;
}

struct sign_secret *
sign_secret_open(const char *flag_dir, struct errbuf *e)
{
	char kd[4096];

	if (sign_key_dir(flag_dir, kd, sizeof kd, e) == -1)
		return NULL;
	return sign_secret_load_or_create(kd, NULL, e);
}

/* ---- signatures ----------------------------------------------------- */

int
sign_file(const struct sign_secret *sk, const char *path,
    const char *trusted_comment, struct errbuf *e)
{
	uint8_t hash[SIGN_HASH_BYTES], sigbin[SIGN_SIG_BIN];
	uint8_t global[crypto_sign_BYTES];
	char sig64[sodium_base64_ENCODED_LEN(SIGN_SIG_BIN,
	    sodium_base64_VARIANT_ORIGINAL)];
	char glob64[sodium_base64_ENCODED_LEN(crypto_sign_BYTES,
	    sodium_base64_VARIANT_ORIGINAL)];
	const char *why;
	struct sign_pubkey pk;
	char *sigpath, *text;
	uint8_t *msg;
	size_t tlen;
	int rc;

	if (sign_init(e) == -1)
		return -1;
	if (trusted_comment == NULL)
		trusted_comment = "";
	tlen = strlen(trusted_comment);
	why = sign_comment_problem(trusted_comment, tlen);
	if (why != NULL)
		return errbuf_set(e, ERRBUF_INPUT, "sign %s: trusted comment %s",
		    path, why);
	if (sign_hash_file(path, hash, sizeof hash, NULL, e) == -1)
		return errbuf_prefix(e, "sign");

	memcpy(sigbin, "ED", 2);
	memcpy(sigbin + 2, sk->keyid, SIGN_KEYID_BYTES);
	crypto_sign_detached(sigbin + 2 + SIGN_KEYID_BYTES, NULL, hash,
	    sizeof hash, sk->sk);
	msg = xmalloc(crypto_sign_BYTES + tlen + 1);
	memcpy(msg, sigbin + 2 + SIGN_KEYID_BYTES, crypto_sign_BYTES);
	memcpy(msg + crypto_sign_BYTES, trusted_comment, tlen);
	crypto_sign_detached(global, NULL, msg, crypto_sign_BYTES + tlen,
	    sk->sk);
	free(msg);
	sodium_bin2base64(sig64, sizeof sig64, sigbin, sizeof sigbin,
	    sodium_base64_VARIANT_ORIGINAL);
	sodium_bin2base64(glob64, sizeof glob64, global, sizeof global,
	    sodium_base64_VARIANT_ORIGINAL);

	text = xasprintf(SIGN_UNTRUSTED_PREFIX "signature from ares secret key "
	    "%s\n%s\n" SIGN_TRUSTED_PREFIX "%s\n%s\n", sk->keyid_hex, sig64,
	    trusted_comment, glob64);
	sigpath = xasprintf("%s.minisig", path);
	rc = util_write_file(sigpath, text, strlen(text), 0644, e);
	free(text);
	if (rc == 0) {
		/* Self-check: what we wrote must verify. */
		sign_secret_pubkey(sk, &pk);
		if (sign_verify(&pk, path, sigpath, NULL, 0, e) == -1)
			rc = errbuf_prefix(e, "sign: self-check failed");
	}
	free(sigpath);
	return rc;
}

cJSON *
sign_json(const char *key_id, const char *signature)
{
	cJSON *o = cJSON_CreateObject();

	if (key_id != NULL)
		cJSON_AddStringToObject(o, "key_id", key_id);
	else
		cJSON_AddNullToObject(o, "key_id");
	cJSON_AddStringToObject(o, "format", "minisign (Ed25519, BLAKE2b-512 "
	    "pre-hashed)");
	cJSON_AddStringToObject(o, "signature", signature);
	cJSON_AddStringToObject(o, "public_key", SIGN_PUBKEY_NAME);
	return o;
}

int
sign_file_with_pub(const struct sign_secret *sk, const char *path,
    const char *trusted_comment, struct errbuf *e)
{
	const char *slash = strrchr(path, '/');
	char *pub;
	int rc;

	if (sign_file(sk, path, trusted_comment, e) == -1)
		return -1;
	pub = slash != NULL ? xasprintf("%.*s/" SIGN_PUBKEY_NAME,
	    (int)(slash - path), path) : xstrdup(SIGN_PUBKEY_NAME);
	rc = sign_pubkey_write(sk, pub, e);
	free(pub);
	return rc;
}

/*
 * Check a signature file's text against the pre-computed BLAKE2b-512 of the
 * signed file.  Reasons are stable (docs/signing.md).  -1 + e.
 */
static int
sign_verify_text(const struct sign_pubkey *pk, const uint8_t hash[64],
    const char *buf, size_t len, const char *name, char *trusted_out,
    size_t trusted_len, struct errbuf *e)
{
	uint8_t sigbin[SIGN_SIG_BIN], global[crypto_sign_BYTES];
	struct sign_line l[4];
	char sigid[SIGN_KEYID_HEX];
	const char *tc, *why;
	size_t tclen;
	uint8_t *msg;
	int bad;

	if (sign_parse_head(buf, len, "signature", name, SIGN_SIGFILE_MAX, l,
	    4, sigbin, sizeof sigbin, e) == -1)
		return -1;
	if (memcmp(sigbin, "Ed", 2) == 0)
		return errbuf_set(e, ERRBUF_INPUT, "signature %s: legacy "
		    "algorithm \"Ed\" (not pre-hashed) is not accepted", name);
	if (memcmp(sigbin, "ED", 2) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "signature %s: unsupported "
		    "algorithm 0x%02x%02x (want \"ED\")", name, sigbin[0],
		    sigbin[1]);
	if (!sign_has_prefix(&l[2], SIGN_TRUSTED_PREFIX))
		return errbuf_set(e, ERRBUF_INPUT, "signature %s: line 3 does "
		    "not start with \"" SIGN_TRUSTED_PREFIX "\"", name);
	tc = l[2].p + strlen(SIGN_TRUSTED_PREFIX);
	tclen = l[2].len - strlen(SIGN_TRUSTED_PREFIX);
	why = sign_comment_problem(tc, tclen);
	if (why != NULL)
		return errbuf_set(e, ERRBUF_INPUT, "signature %s: trusted "
		    "comment %s", name, why);
	if (sign_b64_decode(l[3].p, l[3].len, global, sizeof global) == -1)
		return errbuf_set(e, ERRBUF_INPUT, "signature %s: line 4: bad "
		    "base64 (global signature)", name);
	if (memcmp(sigbin + 2, pk->keyid, SIGN_KEYID_BYTES) != 0) {
		sign_keyid_hex(sigbin + 2, sigid);
		return errbuf_set(e, ERRBUF_INPUT, "key id mismatch: signed by "
		    "key %s, public key is %s", sigid, pk->keyid_hex);
	}
	if (crypto_sign_verify_detached(sigbin + 2 + SIGN_KEYID_BYTES, hash,
	    SIGN_HASH_BYTES, pk->pk) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "signature does not match "
		    "the file (file changed after signing, or forged)");
	msg = xmalloc(crypto_sign_BYTES + tclen + 1);
	memcpy(msg, sigbin + 2 + SIGN_KEYID_BYTES, crypto_sign_BYTES);
	memcpy(msg + crypto_sign_BYTES, tc, tclen);
	bad = crypto_sign_verify_detached(global, msg,
	    crypto_sign_BYTES + tclen, pk->pk);
	free(msg);
	if (bad != 0)
		return errbuf_set(e, ERRBUF_INPUT, "trusted comment signature "
		    "invalid (trusted comment changed, or forged)");
	if (trusted_out != NULL && trusted_len > 0) {
		if (tclen >= trusted_len)
			return errbuf_set(e, ERRBUF_INTERNAL, "signature %s: "
			    "trusted comment buffer too small", name);
		memcpy(trusted_out, tc, tclen);
		trusted_out[tclen] = '\0';
	}
	return 0;
}

int
sign_verify(const struct sign_pubkey *pk, const char *path,
    const char *sig_path, char *trusted_out, size_t trusted_len,
    struct errbuf *e)
{
	uint8_t hash[SIGN_HASH_BYTES];
	char *own = NULL, *buf;
	size_t len;
	int rc;

	if (sign_init(e) == -1)
		return -1;
	if (trusted_out != NULL && trusted_len > 0)
		trusted_out[0] = '\0';
	if (sig_path == NULL)
		sig_path = own = xasprintf("%s.minisig", path);
	buf = util_read_file(sig_path, SIGN_SIGFILE_MAX + 1, &len, e);
	if (buf == NULL) {
		errbuf_prefix(e, "signature");
		free(own);
		return -1;
	}
	if (sign_hash_file(path, hash, sizeof hash, NULL, e) == -1) {
		free(buf);
		free(own);
		return -1;
	}
	rc = sign_verify_text(pk, hash, buf, len, sig_path, trusted_out,
	    trusted_len, e);
	free(buf);
	free(own);
	return rc;
}

int
sign_verify_file(const char *pubkey_path, const char *path,
    const char *sig_path, char *trusted_out, size_t trusted_len,
    struct errbuf *e)
{
	struct sign_pubkey pk;

	if (sign_pubkey_load(pubkey_path, &pk, e) == -1)
		return -1;
	return sign_verify(&pk, path, sig_path, trusted_out, trusted_len, e);
}
