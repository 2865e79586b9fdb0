/*
 * sshkey.c - decoy SSH keys: a fresh ed25519 key pair written the way
 * ssh-keygen writes it (the unencrypted "openssh-key-v1" private key
 * file and the one-line public key), the public key blob of a public
 * line, and the SHA256 fingerprint ssh-keygen -l prints.
 *
 * Formats: OpenSSH's PROTOCOL.key (private key container) and RFC 4253
 * section 6.6 / RFC 8709 (the "ssh-ed25519" public key blob).
 */
#include "core.h"

#include <string.h>

#include <sodium.h>

#define SSHKEY_WRAP 70           /* base64 columns in the private key file */
#define SSHKEY_PUB_MAX 8192      /* longest public line sshkey_pub_blob reads */

/* A growable byte buffer for the SSH wire encodings below. */
struct kbuf {
	uint8_t *p;
	size_t len, cap;
};

/* Append n bytes to b (grows; aborts only through xmalloc). */
static void
kb_put(struct kbuf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n)
			cap *= 2;
		uint8_t *np = xmalloc(cap);
		if (b->len)
			memcpy(np, b->p, b->len);
		free(b->p);
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

/* Append a big-endian uint32. */
static void
kb_u32(struct kbuf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v };
	kb_put(b, x, 4);
}

/* Append an SSH "string": uint32 length, then the bytes. */
static void
kb_str(struct kbuf *b, const void *d, size_t n)
{
	kb_u32(b, (uint32_t)n);
	kb_put(b, d, n);
}

/* Append a C string as an SSH string. */
static void
kb_cstr(struct kbuf *b, const char *s)
{
	kb_str(b, s, strlen(s));
}

/* Wipe and free b's storage. */
static void
kb_wipe(struct kbuf *b)
{
	if (b->p)
		sodium_memzero(b->p, b->cap);
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* The "ssh-ed25519" public key blob of pk (32 bytes) into b. */
static void
kb_ed25519_blob(struct kbuf *b, const uint8_t pk[32])
{
	kb_cstr(b, "ssh-ed25519");
	kb_str(b, pk, 32);
}

/* Base64 (with padding) of d; xmalloc'd. */
static char *
b64(const uint8_t *d, size_t n, int variant)
{
	size_t cap = sodium_base64_encoded_len(n, variant);
	char *out = xmalloc(cap);

	sodium_bin2base64(out, cap, d, n, variant);
	return out;
}

char *
sshkey_fingerprint(const uint8_t *blob, size_t len)
{
	uint8_t h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, blob, len);
	char *t = b64(h, sizeof h, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
	char *out = xasprintf("SHA256:%s", t);
	free(t);
	return out;
}

int
sshkey_pub_blob(const char *line, uint8_t **blob, size_t *len,
    struct errbuf *e)
{
	*blob = NULL;
	*len = 0;
	if (line == NULL || strlen(line) > SSHKEY_PUB_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "ssh public key: missing or "
		    "longer than %d bytes", SSHKEY_PUB_MAX);
	const char *sp = strchr(line, ' ');
	if (sp == NULL || sp == line)
		return errbuf_set(e, ERRBUF_INPUT, "ssh public key: want "
		    "\"TYPE BASE64 [comment]\"");
	size_t tlen = (size_t)(sp - line);
	const char *b = sp + 1;
	size_t blen = strcspn(b, " \t\r\n");
	if (blen == 0)
		return errbuf_set(e, ERRBUF_INPUT, "ssh public key: no key data");
	uint8_t *out = xmalloc(blen);
	size_t n = 0;
	if (sodium_base642bin(out, blen, b, blen, NULL, &n, NULL,
	    sodium_base64_VARIANT_ORIGINAL) != 0 || n < 4) {
		free(out);
		return errbuf_set(e, ERRBUF_INPUT, "ssh public key: bad base64");
	}
	/* the blob names its own type, which must be the line's */
	uint32_t t = (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 |
	    (uint32_t)out[2] << 8 | out[3];
	if (t != tlen || n < 4 + (size_t)t || memcmp(out + 4, line, tlen) != 0) {
		free(out);
		return errbuf_set(e, ERRBUF_INPUT, "ssh public key: the blob's "
		    "type is not the line's");
	}
	*blob = out;
	*len = n;
	return 0;
}

char *
sshkey_pub_fingerprint(const char *line, struct errbuf *e)
{
	uint8_t *blob;
	size_t len;

	if (sshkey_pub_blob(line, &blob, &len, e) == -1)
		return NULL;
	char *fp = sshkey_fingerprint(blob, len);
	free(blob);
	return fp;
}

/* The private key text: PEM-style armour around the base64 of raw,
 * wrapped at SSHKEY_WRAP columns.  xmalloc'd. */
static char *
armour(const uint8_t *raw, size_t n)
{
	static const char head[] = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
	static const char foot[] = "-----END OPENSSH PRIVATE KEY-----\n";
	char *t = b64(raw, n, sodium_base64_VARIANT_ORIGINAL);
	size_t tl = strlen(t);
	size_t cap = sizeof head + sizeof foot + tl + tl / SSHKEY_WRAP + 2;
	char *out = xmalloc(cap);
	size_t o = 0;

	memcpy(out, head, sizeof head - 1);
	o += sizeof head - 1;
	for (size_t i = 0; i < tl; i += SSHKEY_WRAP) {
		size_t k = tl - i < SSHKEY_WRAP ? tl - i : SSHKEY_WRAP;
		memcpy(out + o, t + i, k);
		o += k;
		out[o++] = '\n';
	}
	memcpy(out + o, foot, sizeof foot);   /* with the NUL */
	sodium_memzero(t, tl);
	free(t);
	return out;
}

int
sshkey_ed25519_new(const char *comment, char **priv_text, char **pub_line,
    struct errbuf *e)
{
	uint8_t pk[crypto_sign_ed25519_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_ed25519_SECRETKEYBYTES];   /* seed || pk */
	struct kbuf pub = { 0 }, priv = { 0 }, file = { 0 };
	uint32_t check;

	*priv_text = NULL;
	*pub_line = NULL;
	if (comment == NULL)
		comment = "";
	if (strchr(comment, '\n') != NULL || strlen(comment) > 1024)
		return errbuf_set(e, ERRBUF_INPUT, "ssh key comment: one line "
		    "of at most 1024 bytes");
	if (sodium_init() < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "sodium_init failed");
	crypto_sign_ed25519_keypair(pk, sk);
	kb_ed25519_blob(&pub, pk);

	/* the private section: checkint twice, the key, the comment, then
	 * padding 1, 2, 3... to the cipher block size (8 for "none") */
	randombytes_buf(&check, sizeof check);
	kb_u32(&priv, check);
	kb_u32(&priv, check);
	kb_cstr(&priv, "ssh-ed25519");
	kb_str(&priv, pk, sizeof pk);
	kb_str(&priv, sk, sizeof sk);
	kb_cstr(&priv, comment);
	for (uint8_t i = 1; priv.len % 8 != 0; i++)
		kb_put(&priv, &i, 1);

	kb_put(&file, "openssh-key-v1", sizeof "openssh-key-v1");  /* + NUL */
	kb_cstr(&file, "none");          /* ciphername */
	kb_cstr(&file, "none");          /* kdfname */
	kb_str(&file, "", 0);            /* kdfoptions */
	kb_u32(&file, 1);                /* number of keys */
	kb_str(&file, pub.p, pub.len);
	kb_str(&file, priv.p, priv.len);
	*priv_text = armour(file.p, file.len);

	char *b = b64(pub.p, pub.len, sodium_base64_VARIANT_ORIGINAL);
	*pub_line = comment[0] ? xasprintf("ssh-ed25519 %s %s", b, comment) :
	    xasprintf("ssh-ed25519 %s", b);
	free(b);
	sodium_memzero(sk, sizeof sk);
	kb_wipe(&priv);
	kb_wipe(&file);
	kb_wipe(&pub);
	return 0;
}
