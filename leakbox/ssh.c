/*
 * ssh.c - a fake SSH server that sees which key a client offers.
 *
 * It speaks the real SSH-2 transport (RFC 4253) just far enough: the
 * version exchange, KEXINIT, curve25519-sha256 key exchange (RFC 8731)
 * signed with an ed25519 host key made at start (RFC 8709), the
 * chacha20-poly1305@openssh.com cipher (OpenSSH PROTOCOL.chacha20poly1305),
 * then the ssh-userauth service (RFC 4252).  Every USERAUTH_REQUEST is an
 * "ssh_auth" event; the planted key (cfg->pubkey) offered is the "bait"
 * event, sent before anything else is done so the kill path starts at
 * once, and answered PK_OK so the client signs; a signature that checks
 * against the session id is a second "bait" event with "signed": true.
 * Nothing ever succeeds: every request ends in USERAUTH_FAILURE and the
 * planted key's signature in a disconnect.  No shell, no channel.
 *
 * Everything the peer sends is untrusted: packets of at most
 * SSHD_PACKET_MAX bytes, SSHD_PACKETS_MAX packets and SSHD_AUTH_MAX auth
 * requests per connection, one deadline for the whole connection and a
 * shorter one (SSHD_VERSION_MS) for the client's version line, at most
 * SSHD_CONNS_MAX connections at once and SSHD_PER_REMOTE from one address
 * (more are closed at accept and counted in a rate-limited "overload"
 * event, the shape of http.c's).
 * A bad length, padding, MAC or message ends the connection.  What it
 * speaks and records: docs/ssh.md.
 */
#include "leakbox.h"
#include "../core/core.h"   /* sshkey.c: blobs and fingerprints */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

/* message numbers (RFC 4250) */
enum {
	MSG_DISCONNECT = 1, MSG_IGNORE = 2, MSG_UNIMPLEMENTED = 3,
	MSG_DEBUG = 4, MSG_SERVICE_REQUEST = 5, MSG_SERVICE_ACCEPT = 6,
	MSG_KEXINIT = 20, MSG_NEWKEYS = 21, MSG_KEX_ECDH_INIT = 30,
	MSG_KEX_ECDH_REPLY = 31, MSG_USERAUTH_REQUEST = 50,
	MSG_USERAUTH_FAILURE = 51, MSG_USERAUTH_PK_OK = 60,
};
/* disconnect reasons */
enum {
	DISC_PROTOCOL_ERROR = 2, DISC_KEY_EXCHANGE_FAILED = 3,
	DISC_SERVICE_NOT_AVAILABLE = 7, DISC_NO_MORE_AUTH_METHODS = 14,
};

#define KEX_NAMES "curve25519-sha256,curve25519-sha256@libssh.org," \
	"kex-strict-s-v00@openssh.com"
#define CIPHER "chacha20-poly1305@openssh.com"
#define MACS "hmac-sha2-256-etm@openssh.com,hmac-sha2-256"
#define SHOWN_MAX 128           /* user names and types in events */
#define SSHD_PER_REMOTE   8       /* connections at once from one address */
#define SSHD_VERSION_MS   5000    /* from accept to the client's version line */
#define SSHD_OVERLOAD_MS  1000    /* at most one "overload" event per */
#define SSHD_OVERLOAD_ADDRS 8     /* addresses named in one event */

/* Overload counts of one address since the last "overload" event. */
struct ov_addr {
	uint32_t addr;                  /* network order */
	unsigned refused, timed_out;
};

/* One running decoy (what sshd_decoy_start set up; lives forever). */
struct sshd {
	int fd;
	char *bait, *banner;
	int deadline_ms, version_ms;    /* the bounds in force */
	uint8_t host_pk[crypto_sign_ed25519_PUBLICKEYBYTES];
	uint8_t host_sk[crypto_sign_ed25519_SECRETKEYBYTES];
	uint8_t host_blob[51];          /* string "ssh-ed25519", string pk */
	uint8_t *planted;               /* the planted key's blob */
	size_t planted_len;
	/* connections alive and the overload counts (under mu) */
	pthread_mutex_t mu;
	struct { bool used; uint32_t addr; } slot[SSHD_CONNS_MAX];
	unsigned refused_cap, refused_full, timed_out;
	struct ov_addr addrs[SSHD_OVERLOAD_ADDRS];
	size_t naddrs;
	unsigned addrs_other;
	uint64_t first_ns, last_emit_ns, last_cause_ns;
};

/* One connection (heap: the packet buffer is large). */
struct conn {
	struct sshd *s;
	int fd;
	char remote[64];
	uint32_t addr;                  /* the peer's, network order */
	int slot;                       /* its s->slot */
	uint64_t t_accept_ns;
	uint64_t deadline_ns;
	uint32_t seq_in, seq_out;
	bool enc_in, enc_out;
	uint8_t k_in[64], k_out[64];    /* chacha20-poly1305 keys */
	uint8_t sid[crypto_hash_sha256_BYTES];
	char v_c[SSHD_VERSION_MAX + 1];
	unsigned npackets, nauth;
	bool strict;                    /* kex-strict-*-v00@openssh.com */
	bool bait_offer, bait_signed;   /* bait events sent */
	uint8_t buf[4 + SSHD_PACKET_MAX + 16];
	const uint8_t *pl;              /* the last packet's payload */
	size_t pllen;
	uint64_t t_pl;                  /* when it had fully arrived */
};

static int sshd_port_last;

/* ---- bounded reading of the peer's bytes ---------------------------- */

/* A cursor over untrusted bytes: every read checks the bound, and a
 * failed one sets bad (and every later read fails too). */
struct rd {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

/* One byte, or 0 + bad. */
static uint8_t
rd_u8(struct rd *r)
{
	if (r->bad || r->len - r->off < 1) {
		r->bad = true;
		return 0;
	}
	return r->p[r->off++];
}

/* A big-endian uint32, or 0 + bad. */
static uint32_t
rd_u32(struct rd *r)
{
	if (r->bad || r->len - r->off < 4) {
		r->bad = true;
		return 0;
	}
	const uint8_t *q = r->p + r->off;
	r->off += 4;
	return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
	    (uint32_t)q[2] << 8 | q[3];
}

/* An SSH string: *d points into the buffer (not NUL-terminated), *n its
 * length.  false + bad when it runs past the end. */
static bool
rd_str(struct rd *r, const uint8_t **d, size_t *n)
{
	uint32_t l = rd_u32(r);
	if (r->bad || l > r->len - r->off) {
		r->bad = true;
		*d = NULL;
		*n = 0;
		return false;
	}
	*d = r->p + r->off;
	*n = l;
	r->off += l;
	return true;
}

/* Does the comma-separated name-list l (n bytes) hold name? */
static bool
namelist_has(const uint8_t *l, size_t n, const char *name)
{
	size_t k = strlen(name);
	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && l[j] != ',')
			j++;
		if (j - i == k && memcmp(l + i, name, k) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

/* The first name of the name-list equals name? */
static bool
namelist_first(const uint8_t *l, size_t n, const char *name)
{
	size_t j = 0;
	while (j < n && l[j] != ',')
		j++;
	return j == strlen(name) && memcmp(l, name, j) == 0;
}

/* Untrusted bytes as a short printable string for an event (xmalloc'd). */
static char *
shown(const uint8_t *d, size_t n)
{
	char out[SHOWN_MAX + 4];
	util_sanitize(out, sizeof out, (const char *)d, n > SHOWN_MAX ?
	    SHOWN_MAX : n, false);
	return xstrdup(out);
}

/* ---- building what we send ----------------------------------------- */

/* A packet payload being built: what we send is small and fixed in shape;
 * a write past the buffer sets over and send_packet refuses it. */
struct wb {
	uint8_t p[2048];
	size_t len;
	bool over;
};

/* Append n bytes (or set over). */
static void
wb_put(struct wb *b, const void *d, size_t n)
{
	if (b->over || n > sizeof b->p - b->len) {
		b->over = true;
		return;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

/* Append a byte. */
static void
wb_u8(struct wb *b, uint8_t v)
{
	wb_put(b, &v, 1);
}

/* Append a big-endian uint32. */
static void
wb_u32(struct wb *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v };
	wb_put(b, x, 4);
}

/* Append an SSH string (uint32 length, bytes). */
static void
wb_str(struct wb *b, const void *d, size_t n)
{
	wb_u32(b, (uint32_t)n);
	wb_put(b, d, n);
}

/* Append a C string as an SSH string. */
static void
wb_cstr(struct wb *b, const char *s)
{
	wb_str(b, s, strlen(s));
}

/* ---- socket I/O within the connection's deadline -------------------- */

/* Milliseconds left before c's deadline (0: past it). */
static int
ms_left(const struct conn *c)
{
	uint64_t now = util_mono_ns();
	if (now >= c->deadline_ns)
		return 0;
	uint64_t ms = (c->deadline_ns - now) / 1000000u + 1;
	return ms > 60000 ? 60000 : (int)ms;
}

/* Read exactly n bytes.  0, or -1: end of stream, error or deadline. */
static int
read_full(struct conn *c, uint8_t *d, size_t n)
{
	size_t got = 0;
	while (got < n) {
		int ms = ms_left(c);
		if (ms == 0)
			return -1;
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t k = recv(c->fd, d + got, n - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

/* Write all n bytes.  0, or -1 (error, deadline). */
static int
write_full(struct conn *c, const uint8_t *d, size_t n)
{
	size_t put = 0;
	while (put < n) {
		int ms = ms_left(c);
		if (ms == 0)
			return -1;
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t k = send(c->fd, d + put, n - put, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		put += (size_t)k;
	}
	return 0;
}

/* The chacha20 nonce of sequence number seq: 64 bits, big-endian. */
static void
seq_nonce(uint32_t seq, uint8_t n[8])
{
	memset(n, 0, 8);
	n[4] = (uint8_t)(seq >> 24);
	n[5] = (uint8_t)(seq >> 16);
	n[6] = (uint8_t)(seq >> 8);
	n[7] = (uint8_t)seq;
}

/* Send one packet with payload b (plain before NEWKEYS, then
 * chacha20-poly1305).  0 or -1. */
static int
send_packet(struct conn *c, const struct wb *b)
{
	uint8_t out[sizeof b->p + 64];
	if (b->over)
		return -1;
	/* padding: at least 4 bytes, the padded part a multiple of 8 (with
	 * the length field before NEWKEYS; without it after: it is not
	 * part of the AEAD's encrypted body) */
	size_t body = 1 + b->len;
	size_t align = c->enc_out ? body : body + 4;
	size_t pad = 8 - align % 8;
	if (pad < 4)
		pad += 8;
	uint32_t L = (uint32_t)(body + pad);
	out[0] = (uint8_t)(L >> 24);
	out[1] = (uint8_t)(L >> 16);
	out[2] = (uint8_t)(L >> 8);
	out[3] = (uint8_t)L;
	out[4] = (uint8_t)pad;
	memcpy(out + 5, b->p, b->len);
	randombytes_buf(out + 5 + b->len, pad);
	size_t n = 4 + L;
	if (c->enc_out) {
		uint8_t nonce[8], pk[32];
		seq_nonce(c->seq_out, nonce);
		crypto_stream_chacha20_xor_ic(out, out, 4, nonce, 0,
		    c->k_out + 32);
		crypto_stream_chacha20(pk, sizeof pk, nonce, c->k_out);
		crypto_stream_chacha20_xor_ic(out + 4, out + 4, L, nonce, 1,
		    c->k_out);
		crypto_onetimeauth_poly1305(out + n, out, n, pk);
		n += 16;
		sodium_memzero(pk, sizeof pk);
	}
	c->seq_out++;
	return write_full(c, out, n);
}

/* Read one packet: c->pl / c->pllen is its payload (at least one byte,
 * the message number).  0, or -1: stream ended, deadline, too many
 * packets, a length or padding out of bounds, a bad MAC. */
static int
read_packet(struct conn *c)
{
	uint8_t *b = c->buf;
	if (++c->npackets > SSHD_PACKETS_MAX)
		return -1;
	if (read_full(c, b, 4) == -1)
		return -1;
	uint8_t nonce[8];
	uint8_t lenc[4];
	memcpy(lenc, b, 4);
	if (c->enc_in) {
		seq_nonce(c->seq_in, nonce);
		crypto_stream_chacha20_xor_ic(b, lenc, 4, nonce, 0,
		    c->k_in + 32);
	}
	uint32_t L = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
	if (L < 8 || L > SSHD_PACKET_MAX ||
	    (c->enc_in ? L : L + 4) % 8 != 0)
		return -1;
	size_t want = L + (c->enc_in ? 16 : 0);
	if (read_full(c, b + 4, want) == -1)
		return -1;
	if (c->enc_in) {
		uint8_t pk[32];
		memcpy(b, lenc, 4);   /* the MAC covers the encrypted length */
		crypto_stream_chacha20(pk, sizeof pk, nonce, c->k_in);
		int bad = crypto_onetimeauth_poly1305_verify(b + 4 + L, b,
		    4 + L, pk);
		sodium_memzero(pk, sizeof pk);
		if (bad != 0)
			return -1;
		crypto_stream_chacha20_xor_ic(b + 4, b + 4, L, nonce, 1,
		    c->k_in);
	}
	c->seq_in++;
	uint8_t pad = b[4];
	if (pad < 4 || (size_t)pad + 2 > L)
		return -1;
	c->pl = b + 5;
	c->pllen = L - 1 - pad;
	c->t_pl = util_mono_ns();
	return 0;
}

/* Read the next packet that is not IGNORE, DEBUG or UNIMPLEMENTED (in
 * strict key exchange those are refused during it: kex true).  A
 * DISCONNECT ends the connection.  Returns the message number or -1. */
static int
next_msg(struct conn *c, bool kex)
{
	for (;;) {
		if (read_packet(c) == -1)
			return -1;
		uint8_t t = c->pl[0];
		if (t == MSG_DISCONNECT)
			return -1;
		if (t == MSG_IGNORE || t == MSG_DEBUG ||
		    t == MSG_UNIMPLEMENTED) {
			if (kex && c->strict)
				return -1;
			continue;
		}
		return t;
	}
}

/* Send DISCONNECT with reason and text (best effort). */
static void
send_disconnect(struct conn *c, uint32_t reason, const char *text)
{
	struct wb b = { .len = 0 };
	wb_u8(&b, MSG_DISCONNECT);
	wb_u32(&b, reason);
	wb_cstr(&b, text);
	wb_cstr(&b, "");
	(void)send_packet(c, &b);
}

/* ---- key exchange --------------------------------------------------- */

/* Our KEXINIT payload into b. */
static void
kexinit_build(struct wb *b)
{
	uint8_t cookie[16];
	randombytes_buf(cookie, sizeof cookie);
	wb_u8(b, MSG_KEXINIT);
	wb_put(b, cookie, sizeof cookie);
	wb_cstr(b, KEX_NAMES);
	wb_cstr(b, "ssh-ed25519");
	wb_cstr(b, CIPHER);
	wb_cstr(b, CIPHER);
	wb_cstr(b, MACS);
	wb_cstr(b, MACS);
	wb_cstr(b, "none");
	wb_cstr(b, "none");
	wb_cstr(b, "");
	wb_cstr(b, "");
	wb_u8(b, 0);      /* first_kex_packet_follows */
	wb_u32(b, 0);     /* reserved */
}

/* Check the client's KEXINIT (c->pl) against ours: a common key
 * exchange, host key, cipher both ways and no compression.  *skip: the
 * client guessed a key exchange packet that is not ours to read.  0 or
 * -1. */
static int
kexinit_check(struct conn *c, bool *skip)
{
	struct rd r = { .p = c->pl, .len = c->pllen };
	const uint8_t *l[10];
	size_t n[10];

	rd_u8(&r);
	for (int i = 0; i < 16; i++)
		rd_u8(&r);
	for (int i = 0; i < 10; i++)
		rd_str(&r, &l[i], &n[i]);
	bool follows = rd_u8(&r) != 0;
	rd_u32(&r);
	if (r.bad)
		return -1;
	bool kex = namelist_has(l[0], n[0], "curve25519-sha256") ||
	    namelist_has(l[0], n[0], "curve25519-sha256@libssh.org");
	if (!kex || !namelist_has(l[1], n[1], "ssh-ed25519") ||
	    !namelist_has(l[2], n[2], CIPHER) ||
	    !namelist_has(l[3], n[3], CIPHER) ||
	    !namelist_has(l[6], n[6], "none") ||
	    !namelist_has(l[7], n[7], "none"))
		return -1;
	c->strict = namelist_has(l[0], n[0], "kex-strict-c-v00@openssh.com");
	/* the guess is right only when both first names are what we use */
	*skip = follows && !((namelist_first(l[0], n[0], "curve25519-sha256") ||
	    namelist_first(l[0], n[0], "curve25519-sha256@libssh.org")) &&
	    namelist_first(l[1], n[1], "ssh-ed25519"));
	return 0;
}

/* Append an SSH string to the running hash. */
static void
h_str(crypto_hash_sha256_state *h, const void *d, size_t n)
{
	uint8_t x[4] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16),
	    (uint8_t)(n >> 8), (uint8_t)n };
	crypto_hash_sha256_update(h, x, 4);
	crypto_hash_sha256_update(h, d, n);
}

/* The shared secret k (32 bytes, big-endian unsigned) as an SSH mpint
 * into out (at most 4 + 33 bytes); returns its length. */
static size_t
mpint32(const uint8_t k[32], uint8_t out[37])
{
	size_t i = 0;
	while (i < 32 && k[i] == 0)
		i++;
	size_t n = 32 - i;
	bool lead = n > 0 && (k[i] & 0x80);
	size_t len = n + (lead ? 1 : 0);
	out[0] = out[1] = out[2] = 0;
	out[3] = (uint8_t)len;
	size_t o = 4;
	if (lead)
		out[o++] = 0;
	memcpy(out + o, k + i, n);
	return 4 + len;
}

/* A 64-byte chacha20-poly1305 key: HASH(K || H || X || session_id),
 * then HASH(K || H || K1) appended (RFC 4253 section 7.2). */
static void
derive(const uint8_t *km, size_t kml, const uint8_t h[32], char x,
    const uint8_t sid[32], uint8_t out[64])
{
	crypto_hash_sha256_state st;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, km, kml);
	crypto_hash_sha256_update(&st, h, 32);
	crypto_hash_sha256_update(&st, (const uint8_t *)&x, 1);
	crypto_hash_sha256_update(&st, sid, 32);
	crypto_hash_sha256_final(&st, out);
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, km, kml);
	crypto_hash_sha256_update(&st, h, 32);
	crypto_hash_sha256_update(&st, out, 32);
	crypto_hash_sha256_final(&st, out + 32);
}

/* The whole key exchange, from our KEXINIT to both NEWKEYS.  0 or -1
 * (the caller closes). */
static int
kex_run(struct conn *c)
{
	struct wb is = { .len = 0 };
	kexinit_build(&is);
	if (send_packet(c, &is) == -1)
		return -1;
	int t = next_msg(c, false);
	if (t != MSG_KEXINIT)
		return -1;
	bool skip;
	if (kexinit_check(c, &skip) == -1) {
		send_disconnect(c, DISC_KEY_EXCHANGE_FAILED, "no matching "
		    "key exchange, host key or cipher");
		return -1;
	}
	/* I_C: the client's KEXINIT payload (bounded by the packet size) */
	size_t icl = c->pllen;
	uint8_t *ic = xmalloc(icl);
	memcpy(ic, c->pl, icl);
	int rc = -1;
	if (skip && read_packet(c) == -1)
		goto out;
	t = next_msg(c, true);
	if (t != MSG_KEX_ECDH_INIT)
		goto out;
	struct rd r = { .p = c->pl, .len = c->pllen };
	const uint8_t *qc;
	size_t qcl;
	rd_u8(&r);
	rd_str(&r, &qc, &qcl);
	if (r.bad || qcl != crypto_scalarmult_curve25519_BYTES)
		goto out;
	uint8_t d[32], qs[32], k[32];
	randombytes_buf(d, sizeof d);
	crypto_scalarmult_curve25519_base(qs, d);
	if (crypto_scalarmult_curve25519(k, d, qc) != 0) {
		sodium_memzero(d, sizeof d);
		goto out;
	}
	sodium_memzero(d, sizeof d);
	uint8_t km[37];
	size_t kml = mpint32(k, km);
	sodium_memzero(k, sizeof k);

	uint8_t h[32];
	crypto_hash_sha256_state hs;
	crypto_hash_sha256_init(&hs);
	h_str(&hs, c->v_c, strlen(c->v_c));
	h_str(&hs, c->s->banner, strlen(c->s->banner));
	h_str(&hs, ic, icl);
	h_str(&hs, is.p, is.len);
	h_str(&hs, c->s->host_blob, sizeof c->s->host_blob);
	h_str(&hs, qc, qcl);
	h_str(&hs, qs, sizeof qs);
	crypto_hash_sha256_update(&hs, km, kml);
	crypto_hash_sha256_final(&hs, h);
	memcpy(c->sid, h, sizeof h);   /* the first (only) exchange */

	uint8_t sig[crypto_sign_ed25519_BYTES];
	crypto_sign_ed25519_detached(sig, NULL, h, sizeof h, c->s->host_sk);
	struct wb sb = { .len = 0 };
	wb_cstr(&sb, "ssh-ed25519");
	wb_str(&sb, sig, sizeof sig);
	struct wb rep = { .len = 0 };
	wb_u8(&rep, MSG_KEX_ECDH_REPLY);
	wb_str(&rep, c->s->host_blob, sizeof c->s->host_blob);
	wb_str(&rep, qs, sizeof qs);
	wb_str(&rep, sb.p, sb.len);
	if (send_packet(c, &rep) == -1)
		goto keys;
	derive(km, kml, h, 'C', c->sid, c->k_in);
	derive(km, kml, h, 'D', c->sid, c->k_out);
	struct wb nk = { .len = 0 };
	wb_u8(&nk, MSG_NEWKEYS);
	if (send_packet(c, &nk) == -1)
		goto keys;
	c->enc_out = true;
	if (c->strict)
		c->seq_out = 0;
	if (next_msg(c, true) != MSG_NEWKEYS)
		goto keys;
	c->enc_in = true;
	if (c->strict)
		c->seq_in = 0;
	rc = 0;
keys:
	sodium_memzero(km, sizeof km);
out:
	free(ic);
	return rc;
}

/* ---- user authentication -------------------------------------------- */

/* Answer USERAUTH_FAILURE "publickey". */
static int
send_failure(struct conn *c)
{
	struct wb b = { .len = 0 };
	wb_u8(&b, MSG_USERAUTH_FAILURE);
	wb_cstr(&b, "publickey");
	wb_u8(&b, 0);
	return send_packet(c, &b);
}

/* Does sig (an SSH signature blob) check as an ed25519 signature of
 * the RFC 4252 section 7 data by the key blob? */
static bool
sig_verify(const struct conn *c, const uint8_t *user, size_t ul,
    const uint8_t *svc, size_t sl, const uint8_t *alg, size_t al,
    const uint8_t *blob, size_t bl, const uint8_t *sig, size_t sigl)
{
	struct rd kb = { .p = blob, .len = bl };
	const uint8_t *kt, *pk, *st, *sv;
	size_t ktl, pkl, stl, svl;
	rd_str(&kb, &kt, &ktl);
	rd_str(&kb, &pk, &pkl);
	struct rd sr = { .p = sig, .len = sigl };
	rd_str(&sr, &st, &stl);
	rd_str(&sr, &sv, &svl);
	if (kb.bad || sr.bad || kb.off != bl || sr.off != sigl ||
	    ktl != 11 || memcmp(kt, "ssh-ed25519", 11) != 0 ||
	    al != 11 || memcmp(alg, "ssh-ed25519", 11) != 0 ||
	    stl != 11 || memcmp(st, "ssh-ed25519", 11) != 0 ||
	    pkl != crypto_sign_ed25519_PUBLICKEYBYTES ||
	    svl != crypto_sign_ed25519_BYTES)
		return false;
	/* the signed data, bounded by the packet it came from */
	size_t cap = 4 + 32 + 1 + 4 + ul + 4 + sl + 4 + 9 + 1 + 4 + al +
	    4 + bl;
	uint8_t *m = xmalloc(cap);
	size_t o = 0;
#define PUT32(v) do { uint32_t v_ = (uint32_t)(v); m[o++] = (uint8_t)(v_ >> 24); \
	m[o++] = (uint8_t)(v_ >> 16); m[o++] = (uint8_t)(v_ >> 8); \
	m[o++] = (uint8_t)v_; } while (0)
#define PUTS(d, n) do { PUT32(n); memcpy(m + o, d, n); o += n; } while (0)
	PUTS(c->sid, sizeof c->sid);
	m[o++] = MSG_USERAUTH_REQUEST;
	PUTS(user, ul);
	PUTS(svc, sl);
	PUTS("publickey", 9);
	m[o++] = 1;
	PUTS(alg, al);
	PUTS(blob, bl);
#undef PUTS
#undef PUT32
	bool ok = crypto_sign_ed25519_verify_detached(sv, m, o, pk) == 0;
	free(m);
	return ok;
}

/* The "bait" event: the planted key offered (stage "offer") or its
 * signature checked (stage "signature"). */
static void
emit_bait(struct conn *c, const char *fp, const char *user, bool sig,
    const char *stage)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "bait", c->s->bait);
	cJSON_AddStringToObject(f, "via", "ssh-publickey");
	cJSON_AddStringToObject(f, "fingerprint", fp);
	cJSON_AddStringToObject(f, "user", user);
	cJSON_AddStringToObject(f, "remote", c->remote);
	cJSON_AddBoolToObject(f, "signed", sig);
	cJSON_AddStringToObject(f, "stage", stage);
	sensor_emit("bait", f);
}

/* One USERAUTH_REQUEST (c->pl): events, then the answer.  Returns 0 to
 * go on, 1 when the connection is done, -1 on a malformed request. */
static int
auth_one(struct conn *c)
{
	struct rd r = { .p = c->pl, .len = c->pllen };
	const uint8_t *u, *svc, *m;
	size_t ul, sl, ml;
	rd_u8(&r);
	rd_str(&r, &u, &ul);
	rd_str(&r, &svc, &sl);
	rd_str(&r, &m, &ml);
	if (r.bad)
		return -1;
	char *user = shown(u, ul), *method = shown(m, ml);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "user", user);
	cJSON_AddStringToObject(f, "method", method);
	cJSON_AddStringToObject(f, "remote", c->remote);
	cJSON_AddStringToObject(f, "client", c->v_c);
	int rc = 0;
	bool done = false;
	if (ml == 9 && memcmp(m, "publickey", 9) == 0) {
		bool has_sig = rd_u8(&r) != 0;
		const uint8_t *alg, *blob, *sig = NULL;
		size_t al, bl, sigl = 0;
		rd_str(&r, &alg, &al);
		rd_str(&r, &blob, &bl);
		if (has_sig)
			rd_str(&r, &sig, &sigl);
		if (r.bad) {
			cJSON_Delete(f);
			free(user);
			free(method);
			return -1;
		}
		/* the key's own type: the blob's first string */
		struct rd kb = { .p = blob, .len = bl };
		const uint8_t *kt;
		size_t ktl;
		rd_str(&kb, &kt, &ktl);
		char *ktype = kb.bad ? xstrdup("?") : shown(kt, ktl);
		char *fp = sshkey_fingerprint(blob, bl);
		bool planted = bl == c->s->planted_len &&
		    sodium_memcmp(blob, c->s->planted, bl) == 0;
		bool ok = has_sig && sig_verify(c, u, ul, svc, sl, alg, al,
		    blob, bl, sig, sigl);
		/* the bait first: the kill path starts before we answer */
		if (planted && !c->bait_offer) {
			c->bait_offer = true;
			if (ok)
				c->bait_signed = true;
			emit_bait(c, fp, user, ok, ok ? "signature" : "offer");
		} else if (planted && ok && !c->bait_signed) {
			c->bait_signed = true;
			emit_bait(c, fp, user, true, "signature");
		}
		char *a = shown(alg, al);
		cJSON_AddStringToObject(f, "key_type", ktype);
		cJSON_AddStringToObject(f, "algorithm", a);
		cJSON_AddStringToObject(f, "fingerprint", fp);
		cJSON_AddBoolToObject(f, "planted", planted);
		cJSON_AddBoolToObject(f, "signature", has_sig);
		if (has_sig)
			cJSON_AddBoolToObject(f, "verified", ok);
		sensor_emit("ssh_auth", f);
		free(a);
		if (planted && !has_sig) {
			struct wb b = { .len = 0 };
			wb_u8(&b, MSG_USERAUTH_PK_OK);
			wb_str(&b, alg, al);
			wb_str(&b, blob, bl);
			/* a blob too long for our buffer: just a failure */
			if (b.over)
				rc = send_failure(c);
			else
				rc = send_packet(c, &b);
		} else {
			rc = send_failure(c);
			done = planted;   /* its signature came: we are done */
		}
		free(ktype);
		free(fp);
	} else {
		cJSON_AddBoolToObject(f, "planted", false);
		sensor_emit("ssh_auth", f);
		rc = send_failure(c);
	}
	free(user);
	free(method);
	if (rc == -1)
		return 1;
	if (done) {
		send_disconnect(c, DISC_NO_MORE_AUTH_METHODS, "No more "
		    "authentication methods available");
		return 1;
	}
	return 0;
}

/* Service request, then the auth requests until the client gives up or
 * a bound is reached. */
static void
auth_run(struct conn *c)
{
	if (next_msg(c, false) != MSG_SERVICE_REQUEST)
		return;
	struct rd r = { .p = c->pl, .len = c->pllen };
	const uint8_t *svc;
	size_t sl;
	rd_u8(&r);
	rd_str(&r, &svc, &sl);
	if (r.bad || sl != 12 || memcmp(svc, "ssh-userauth", 12) != 0) {
		send_disconnect(c, DISC_SERVICE_NOT_AVAILABLE, "service not "
		    "available");
		return;
	}
	struct wb b = { .len = 0 };
	wb_u8(&b, MSG_SERVICE_ACCEPT);
	wb_cstr(&b, "ssh-userauth");
	if (send_packet(c, &b) == -1)
		return;
	for (;;) {
		int t = next_msg(c, false);
		if (t == -1)
			return;
		if (t != MSG_USERAUTH_REQUEST) {
			send_disconnect(c, DISC_PROTOCOL_ERROR, "protocol error");
			return;
		}
		if (++c->nauth > SSHD_AUTH_MAX) {
			send_disconnect(c, DISC_PROTOCOL_ERROR, "Too many "
			    "authentication failures");
			return;
		}
		/* events carry the request's arrival (docs/scoring.md) */
		sensor_request_time(c->t_pl);
		int rc = auth_one(c);
		sensor_request_time(0);
		if (rc == -1)
			send_disconnect(c, DISC_PROTOCOL_ERROR, "bad request");
		if (rc != 0)
			return;
	}
}

/* ---- connections ----------------------------------------------------- */

/* Read the client's version line into c->v_c (without CR LF).  Only
 * "SSH-2.0-" (or "SSH-1.99-") lines of at most SSHD_VERSION_MAX bytes with
 * printable ASCII are taken.  0 or -1. */
static int
version_read(struct conn *c)
{
	size_t n = 0;
	for (;;) {
		uint8_t ch;
		if (read_full(c, &ch, 1) == -1)
			return -1;
		if (ch == '\n')
			break;
		if (n >= SSHD_VERSION_MAX - 2)
			return -1;
		c->v_c[n++] = (char)ch;
	}
	if (n > 0 && c->v_c[n - 1] == '\r')
		n--;
	c->v_c[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (c->v_c[i] < 0x20 || c->v_c[i] > 0x7e)
			return -1;
	if (strncmp(c->v_c, "SSH-2.0-", 8) != 0 &&
	    strncmp(c->v_c, "SSH-1.99-", 9) != 0)
		return -1;
	return 0;
}

/* ---- admission and overload accounting ------------------------------ */

/* The counts of addr in s (added while there is room), or NULL when
 * SSHD_OVERLOAD_ADDRS others came first (counted in addrs_other).
 * s->mu held. */
static struct ov_addr *
ov_addr_locked(struct sshd *s, uint32_t addr)
{
	for (size_t i = 0; i < s->naddrs; i++)
		if (s->addrs[i].addr == addr)
			return &s->addrs[i];
	if (s->naddrs == SSHD_OVERLOAD_ADDRS) {
		s->addrs_other++;
		return NULL;
	}
	struct ov_addr *a = &s->addrs[s->naddrs++];
	memset(a, 0, sizeof *a);
	a->addr = addr;
	return a;
}

/* Count an incident caused at cause_ns (the event is stamped with the
 * latest cause, as http.c's).  s->mu held. */
static void
ov_mark_locked(struct sshd *s, uint64_t cause_ns)
{
	if (s->first_ns == 0)
		s->first_ns = util_mono_ns();
	if (cause_ns > s->last_cause_ns)
		s->last_cause_ns = cause_ns;
}

/* Milliseconds the accept loop may sleep before an "overload" event is
 * due: the rest of the period when incidents are pending, else a whole
 * one (incidents counted by connection threads meanwhile wait at most
 * that long). */
static int
ov_wait_ms(struct sshd *s)
{
	pthread_mutex_lock(&s->mu);
	bool pending = s->refused_cap || s->refused_full || s->timed_out;
	uint64_t last = s->last_emit_ns;
	pthread_mutex_unlock(&s->mu);
	if (!pending)
		return SSHD_OVERLOAD_MS;
	uint64_t now = util_mono_ns(), due = last +
	    (uint64_t)SSHD_OVERLOAD_MS * 1000000u;
	if (last == 0 || now >= due)
		return 0;
	return (int)((due - now) / 1000000u) + 1;
}

/* Emit one "overload" event (the fields of http.c's, server "ssh") when
 * incidents are pending and the last one is SSHD_OVERLOAD_MS old; the
 * counts are reset.  Any thread, without s->mu. */
static void
ov_flush(struct sshd *s)
{
	uint64_t now = util_mono_ns();
	pthread_mutex_lock(&s->mu);
	if (!(s->refused_cap || s->refused_full || s->timed_out) ||
	    (s->last_emit_ns != 0 &&
	    now - s->last_emit_ns < (uint64_t)SSHD_OVERLOAD_MS * 1000000u)) {
		pthread_mutex_unlock(&s->mu);
		return;
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "server", "ssh");
	cJSON_AddNumberToObject(f, "window_ms",
	    (double)((now - s->first_ns) / 1000000u));
	cJSON_AddNumberToObject(f, "refused", s->refused_cap + s->refused_full);
	cJSON_AddNumberToObject(f, "refused_cap", s->refused_cap);
	cJSON_AddNumberToObject(f, "refused_full", s->refused_full);
	cJSON_AddNumberToObject(f, "evicted", 0);
	cJSON_AddNumberToObject(f, "timed_out", s->timed_out);
	cJSON_AddNumberToObject(f, "write_timeouts", 0);
	int active = 0;
	for (size_t i = 0; i < SSHD_CONNS_MAX; i++)
		active += s->slot[i].used;
	cJSON_AddNumberToObject(f, "active", active);
	cJSON_AddNumberToObject(f, "max_conns", SSHD_CONNS_MAX);
	cJSON_AddNumberToObject(f, "max_per_remote", SSHD_PER_REMOTE);
	cJSON *arr = cJSON_AddArrayToObject(f, "addrs");
	for (size_t i = 0; i < s->naddrs; i++) {
		const struct ov_addr *a = &s->addrs[i];
		char ip[INET_ADDRSTRLEN] = "?";
		struct in_addr ia = { .s_addr = a->addr };
		inet_ntop(AF_INET, &ia, ip, sizeof ip);
		int n = 0;
		for (size_t k = 0; k < SSHD_CONNS_MAX; k++)
			n += s->slot[k].used && s->slot[k].addr == a->addr;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "addr", ip);
		cJSON_AddNumberToObject(o, "refused", a->refused);
		cJSON_AddNumberToObject(o, "evicted", 0);
		cJSON_AddNumberToObject(o, "timed_out", a->timed_out);
		cJSON_AddNumberToObject(o, "write_timeouts", 0);
		cJSON_AddNumberToObject(o, "active", n);
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddNumberToObject(f, "addrs_other", s->addrs_other);
	s->refused_cap = s->refused_full = s->timed_out = 0;
	s->naddrs = 0;
	s->addrs_other = 0;
	s->first_ns = 0;
	s->last_emit_ns = now;
	uint64_t cause = s->last_cause_ns;
	s->last_cause_ns = 0;
	pthread_mutex_unlock(&s->mu);
	uint64_t saved = sensor_request_time(cause != 0 ? cause : now);
	sensor_emit("overload", f);
	(void)sensor_request_time(saved);
}

/* Take a connection slot for a peer at addr: its index, or -1 when the
 * decoy holds SSHD_CONNS_MAX connections or addr SSHD_PER_REMOTE (the
 * refusal counted for the "overload" event). */
static int
admit(struct sshd *s, uint32_t addr)
{
	pthread_mutex_lock(&s->mu);
	int free_slot = -1, own = 0;
	for (int i = 0; i < SSHD_CONNS_MAX; i++) {
		if (!s->slot[i].used) {
			if (free_slot < 0)
				free_slot = i;
		} else if (s->slot[i].addr == addr) {
			own++;
		}
	}
	if (free_slot >= 0 && own < SSHD_PER_REMOTE) {
		s->slot[free_slot].used = true;
		s->slot[free_slot].addr = addr;
		pthread_mutex_unlock(&s->mu);
		return free_slot;
	}
	ov_mark_locked(s, util_mono_ns());
	if (own >= SSHD_PER_REMOTE)
		s->refused_cap++;
	else
		s->refused_full++;
	struct ov_addr *a = ov_addr_locked(s, addr);
	if (a)
		a->refused++;
	pthread_mutex_unlock(&s->mu);
	return -1;
}

/* Give c's slot back; timed_out: it sent no version line in time (an
 * incident). */
static void
release(struct conn *c, bool timed_out)
{
	struct sshd *s = c->s;
	pthread_mutex_lock(&s->mu);
	s->slot[c->slot].used = false;
	if (timed_out) {
		ov_mark_locked(s, c->t_accept_ns);
		s->timed_out++;
		struct ov_addr *a = ov_addr_locked(s, c->addr);
		if (a)
			a->timed_out++;
	}
	pthread_mutex_unlock(&s->mu);
}

/* A connection's thread: banner, key exchange, authentication, close.
 * Until the client's version line the deadline is SSHD_VERSION_MS, then
 * the connection's whole one. */
static void *
conn_thread(void *arg)
{
	struct conn *c = arg;
	struct sshd *s = c->s;
	char line[SSHD_VERSION_MAX + 3];
	int n = snprintf(line, sizeof line, "%s\r\n", s->banner);
	uint64_t all = c->deadline_ns;
	uint64_t vd = c->t_accept_ns + (uint64_t)s->version_ms * 1000000u;
	if (vd < all)
		c->deadline_ns = vd;
	bool ok = write_full(c, (const uint8_t *)line, (size_t)n) == 0 &&
	    version_read(c) == 0;
	bool timed_out = !ok && ms_left(c) == 0;
	c->deadline_ns = all;
	if (ok && kex_run(c) == 0)
		auth_run(c);
	close(c->fd);
	release(c, timed_out);
	sodium_memzero(c->k_in, sizeof c->k_in);
	sodium_memzero(c->k_out, sizeof c->k_out);
	free(c);
	ov_flush(s);
	return NULL;
}

/* The accept loop (its own thread, forever); it also sends the pending
 * "overload" event when it is due. */
static void *
accept_thread(void *arg)
{
	struct sshd *s = arg;
	for (;;) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int r = poll(&p, 1, ov_wait_ms(s));
		ov_flush(s);
		if (r == 0 || (r < 0 && errno == EINTR))
			continue;
		struct sockaddr_in sa;
		socklen_t sl = sizeof sa;
		int fd = accept4(s->fd, (struct sockaddr *)&sa, &sl,
		    SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM ||
			    errno == EAGAIN) {
				if (errno == EMFILE || errno == ENFILE ||
				    errno == ENOBUFS || errno == ENOMEM)
					usleep(100000);
				continue;
			}
			sensor_log("ssh: accept: %s: the decoy stops",
			    strerror(errno));
			return NULL;
		}
		int slot = admit(s, sa.sin_addr.s_addr);
		if (slot < 0) {
			close(fd);
			ov_flush(s);
			continue;
		}
		struct conn *c = xcalloc(1, sizeof *c);
		c->s = s;
		c->fd = fd;
		c->slot = slot;
		c->addr = sa.sin_addr.s_addr;
		c->t_accept_ns = util_mono_ns();
		c->deadline_ns = c->t_accept_ns +
		    (uint64_t)s->deadline_ms * 1000000u;
		char ip[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
		snprintf(c->remote, sizeof c->remote, "%s:%u", ip,
		    (unsigned)ntohs(sa.sin_port));
		if (http_thread_start(conn_thread, c) != 0) {
			close(fd);
			release(c, false);
			free(c);
		}
	}
}

int
sshd_decoy_port(void)
{
	return __atomic_load_n(&sshd_port_last, __ATOMIC_SEQ_CST);
}

int
sshd_decoy_start(const struct sshd_decoy *cfg, struct errbuf *e)
{
	const char *banner = cfg->banner && *cfg->banner ? cfg->banner :
	    SSHD_BANNER_DEFAULT;
	size_t bl = strlen(banner);
	if (bl < 8 || bl > SSHD_VERSION_MAX - 2 ||
	    strncmp(banner, "SSH-2.0-", 8) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "ssh banner: want "
		    "\"SSH-2.0-...\" of at most %d bytes", SSHD_VERSION_MAX - 2);
	for (size_t i = 0; i < bl; i++)
		if (banner[i] < 0x21 && banner[i] != ' ')
			return errbuf_set(e, ERRBUF_INPUT, "ssh banner: a "
			    "control character");
	if (!cfg->bait || !*cfg->bait)
		return errbuf_set(e, ERRBUF_INPUT, "ssh decoy: no bait name");
	if (sodium_init() < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "sodium_init failed");
	struct sshd *s = xcalloc(1, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	if (sshkey_pub_blob(cfg->pubkey, &s->planted, &s->planted_len, e) == -1) {
		free(s);
		return errbuf_prefix(e, "ssh decoy: the planted key");
	}
	int port = 0;
	s->fd = http_listen_tcp_port(cfg->listen, &port, e);
	if (s->fd < 0) {
		errbuf_prefix(e, "ssh decoy");
		free(s->planted);
		free(s);
		return -1;
	}
	s->bait = xstrdup(cfg->bait);
	s->banner = xstrdup(banner);
	s->deadline_ms = cfg->deadline_ms > 0 ? cfg->deadline_ms :
	    SSHD_DEADLINE_MS;
	if (s->deadline_ms < 500 || s->deadline_ms > SSHD_DEADLINE_MS)
		s->deadline_ms = SSHD_DEADLINE_MS;
	s->version_ms = cfg->version_ms > 0 ? cfg->version_ms :
	    SSHD_VERSION_MS;
	if (s->version_ms < 500 || s->version_ms > s->deadline_ms)
		s->version_ms = s->deadline_ms < SSHD_VERSION_MS ?
		    s->deadline_ms : SSHD_VERSION_MS;
	crypto_sign_ed25519_keypair(s->host_pk, s->host_sk);
	static const uint8_t head[] = { 0, 0, 0, 11, 's', 's', 'h', '-', 'e',
	    'd', '2', '5', '5', '1', '9', 0, 0, 0, 32 };
	memcpy(s->host_blob, head, sizeof head);
	memcpy(s->host_blob + sizeof head, s->host_pk, 32);
	int err = http_thread_start(accept_thread, s);
	if (err != 0) {
		close(s->fd);
		free(s->planted);
		free(s->bait);
		free(s->banner);
		free(s);
		return errbuf_set(e, ERRBUF_INTERNAL, "ssh decoy: thread: %s",
		    strerror(err));
	}
	__atomic_store_n(&sshd_port_last, port, __ATOMIC_SEQ_CST);
	return 0;
}
