/*
 * test_ssh.c - decoy SSH keys (core/sshkey.c) and the fake SSH service
 * (leakbox/ssh.c), against the real OpenSSH tools: ssh-keygen reads the
 * keys, ssh offers them to the decoy.  Hostile input (garbage, truncated
 * and huge packets, a bad MAC after a real key exchange done by a small
 * client here, random bytes) must end the connection with no bait.
 * Needs /usr/bin/ssh and /usr/bin/ssh-keygen (openssh-client): missing,
 * the test fails.  With a Docker Engine (required: ARES_REQUIRE_DOCKER=1)
 * the lab image's own ssh, as the agent's uids with a read-only home
 * planted by lab_plant_file_as, offers the planted key too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

/* The decoy's bounds in this test (the lab uses SSHD_DEADLINE_MS and
 * SSHD_VERSION_MS); sshd_decoy_start takes them from struct sshd_decoy. */
#define T_DEADLINE_MS 6000
#define T_VERSION_MS  2000

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "../../leakbox/leakbox.h"
#include "../../core/core.h"
#include "../../core/internal.h"   /* the host side: bus_open, bus_recv */

#define SSH_BIN "/usr/bin/ssh"
#define KEYGEN_BIN "/usr/bin/ssh-keygen"

static char dir[64];
static int bus_fd = -1;
static int port;
static char *planted_priv, *planted_pub, *other_priv, *other_pub;
static char planted_path[128], other_path[128];

/* ---- helpers -------------------------------------------------------- */

/* Write text to path with mode. */
static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* Run argv (stdin /dev/null, no agent), stdout+stderr into *out
 * (caller frees).  Killed after 30 s.  Returns the exit status (or
 * 128 + signal). */
static int run(char *const argv[], char **out)
{
	char path[128];
	snprintf(path, sizeof path, "%s/out.txt", dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(in, 0);
		dup2(o, 1);
		dup2(o, 2);
		unsetenv("SSH_AUTH_SOCK");
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	for (int i = 0; i < 300; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (i == 299) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		usleep(100000);
	}
	if (out) {
		FILE *f = fopen(path, "r");
		assert_non_null(f);
		char *buf = calloc(1, 65536);
		size_t n = fread(buf, 1, 65535, f);
		buf[n] = '\0';
		fclose(f);
		*out = buf;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Every event waiting on the bus (up to 64), after waiting ms for the
 * first.  The caller frees with events_free. */
struct events {
	cJSON *ev[64];
	int n;
};

static void events_get(struct events *es, int ms)
{
	struct errbuf e = { 0 };
	memset(es, 0, sizeof *es);
	uint64_t until = util_mono_ns() + (uint64_t)ms * 1000000u;
	for (;;) {
		struct bus_event ev;
		int r = bus_recv(bus_fd, &ev, &e);
		if (r == 1) {
			if (es->n < 64)
				es->ev[es->n++] = cJSON_Duplicate(ev.json, true);
			bus_event_free(&ev);
			continue;
		}
		bus_event_free(&ev);
		if (util_mono_ns() >= until)
			break;
		usleep(20000);
	}
}

static void events_free(struct events *es)
{
	for (int i = 0; i < es->n; i++)
		cJSON_Delete(es->ev[i]);
	es->n = 0;
}

static int events_count(const struct events *es, const char *kind)
{
	int n = 0;
	for (int i = 0; i < es->n; i++)
		if (strcmp(util_json_str(es->ev[i], "kind", ""), kind) == 0)
			n++;
	return n;
}

/* The first event of kind with key == val (a string), or NULL. */
static const cJSON *events_find(const struct events *es, const char *kind,
    const char *key, const char *val)
{
	for (int i = 0; i < es->n; i++)
		if (strcmp(util_json_str(es->ev[i], "kind", ""), kind) == 0 &&
		    (!key || strcmp(util_json_str(es->ev[i], key, ""), val) == 0))
			return es->ev[i];
	return NULL;
}

static bool json_bool(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Run the OpenSSH client with key against the decoy as user. */
static int ssh_to_decoy(const char *key, const char *user, char **out)
{
	char p[16], dest[128];
	snprintf(p, sizeof p, "%d", port);
	snprintf(dest, sizeof dest, "%s@127.0.0.1", user);
	char *const argv[] = { SSH_BIN, "-F", "/dev/null", "-i", (char *)key,
	    "-p", p, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
	    "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
	    "-o", "ConnectTimeout=10", dest, "true", NULL };
	return run(argv, out);
}

static int tcp_connect(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

/* Read until the server closes (true) or ms pass (false); bytes read
 * are dropped. */
static bool closed_within(int fd, int ms)
{
	uint64_t until = util_mono_ns() + (uint64_t)ms * 1000000u;
	for (;;) {
		uint64_t now = util_mono_ns();
		if (now >= until)
			return false;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)((until - now) / 1000000u) + 1) <= 0)
			return false;
		char b[4096];
		ssize_t n = recv(fd, b, sizeof b, 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n < 0)
			return false;
	}
}

/* Read exactly n bytes within 5 s. */
static void read_n(int fd, uint8_t *d, size_t n)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		assert_true(poll(&p, 1, 5000) == 1);
		ssize_t k = recv(fd, d + got, n - got, 0);
		assert_true(k > 0);
		got += (size_t)k;
	}
}

/* Read the server's version line (without CR LF) into v. */
static void read_version(int fd, char *v, size_t cap)
{
	size_t n = 0;
	for (;;) {
		uint8_t c;
		read_n(fd, &c, 1);
		if (c == '\n')
			break;
		assert_true(n + 1 < cap);
		v[n++] = (char)c;
	}
	if (n && v[n - 1] == '\r')
		n--;
	v[n] = '\0';
}

/* ---- a small SSH client (for what OpenSSH will not send) ------------ */

struct cl {
	int fd;
	uint32_t seq_out, seq_in;
	bool enc;
	uint8_t k_out[64], k_in[64], h[32];
	uint8_t pkt[40000];
	size_t plen;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Append an SSH string to a buffer at *o. */
static void bstr(uint8_t *b, size_t *o, const void *d, size_t n)
{
	put32(b + *o, (uint32_t)n);
	memcpy(b + *o + 4, d, n);
	*o += 4 + n;
}

static void nonce_of(uint32_t seq, uint8_t n[8])
{
	memset(n, 0, 8);
	put32(n + 4, seq);
}

/* Send payload as one packet; corrupt: flip a bit of the MAC. */
static void cl_send(struct cl *c, const uint8_t *pl, size_t n, bool corrupt)
{
	uint8_t out[4096];
	size_t body = 1 + n;
	size_t pad = 8 - (c->enc ? body : body + 4) % 8;
	if (pad < 4)
		pad += 8;
	uint32_t L = (uint32_t)(body + pad);
	put32(out, L);
	out[4] = (uint8_t)pad;
	memcpy(out + 5, pl, n);
	memset(out + 5 + n, 0, pad);
	size_t tot = 4 + L;
	if (c->enc) {
		uint8_t nn[8], pk[32];
		nonce_of(c->seq_out, nn);
		crypto_stream_chacha20_xor_ic(out, out, 4, nn, 0, c->k_out + 32);
		crypto_stream_chacha20(pk, 32, nn, c->k_out);
		crypto_stream_chacha20_xor_ic(out + 4, out + 4, L, nn, 1, c->k_out);
		crypto_onetimeauth_poly1305(out + tot, out, tot, pk);
		if (corrupt)
			out[tot + 3] ^= 0x10;
		tot += 16;
	}
	c->seq_out++;
	assert_int_equal(send(c->fd, out, tot, MSG_NOSIGNAL), (ssize_t)tot);
}

/* Receive one packet's payload into c->pkt / c->plen. */
static void cl_recv(struct cl *c)
{
	uint8_t l4[4];
	read_n(c->fd, l4, 4);
	uint8_t nn[8];
	uint8_t lp[4];
	memcpy(lp, l4, 4);
	if (c->enc) {
		nonce_of(c->seq_in, nn);
		crypto_stream_chacha20_xor_ic(lp, l4, 4, nn, 0, c->k_in + 32);
	}
	uint32_t L = get32(lp);
	assert_true(L >= 8 && L < sizeof c->pkt - 20);
	memcpy(c->pkt, l4, 4);
	read_n(c->fd, c->pkt + 4, L + (c->enc ? 16 : 0));
	if (c->enc) {
		uint8_t pk[32];
		crypto_stream_chacha20(pk, 32, nn, c->k_in);
		assert_int_equal(crypto_onetimeauth_poly1305_verify(c->pkt + 4 + L,
		    c->pkt, 4 + L, pk), 0);
		crypto_stream_chacha20_xor_ic(c->pkt + 4, c->pkt + 4, L, nn, 1,
		    c->k_in);
	}
	c->seq_in++;
	uint8_t pad = c->pkt[4];
	assert_true(pad >= 4 && pad + 2u <= L);
	c->plen = L - 1 - pad;
	memmove(c->pkt, c->pkt + 5, c->plen);
}

static void kdf(const uint8_t *km, size_t kml, const uint8_t h[32], char x,
    uint8_t out[64])
{
	crypto_hash_sha256_state st;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, km, kml);
	crypto_hash_sha256_update(&st, h, 32);
	crypto_hash_sha256_update(&st, (uint8_t *)&x, 1);
	crypto_hash_sha256_update(&st, h, 32);
	crypto_hash_sha256_final(&st, out);
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, km, kml);
	crypto_hash_sha256_update(&st, h, 32);
	crypto_hash_sha256_update(&st, out, 32);
	crypto_hash_sha256_final(&st, out + 32);
}

/* Connect and run the whole key exchange (checking the server's host
 * key signature of the exchange hash); c is ready for encrypted
 * packets. */
static void cl_kex(struct cl *c)
{
	static const char vc[] = "SSH-2.0-TestClient_1.0";
	memset(c, 0, sizeof *c);
	c->fd = tcp_connect();
	char vs[256];
	read_version(c->fd, vs, sizeof vs);
	assert_int_equal(strncmp(vs, "SSH-2.0-", 8), 0);
	char line[64];
	snprintf(line, sizeof line, "%s\r\n", vc);
	assert_int_equal(send(c->fd, line, strlen(line), 0), (ssize_t)strlen(line));
	/* our KEXINIT */
	uint8_t ic[512];
	size_t icl = 0;
	ic[icl++] = 20;
	randombytes_buf(ic + icl, 16);
	icl += 16;
	const char *lists[10] = { "curve25519-sha256,kex-strict-c-v00@openssh.com",
	    "ssh-ed25519", "chacha20-poly1305@openssh.com",
	    "chacha20-poly1305@openssh.com", "hmac-sha2-256", "hmac-sha2-256",
	    "none", "none", "", "" };
	for (int i = 0; i < 10; i++)
		bstr(ic, &icl, lists[i], strlen(lists[i]));
	ic[icl++] = 0;
	put32(ic + icl, 0);
	icl += 4;
	cl_send(c, ic, icl, false);
	cl_recv(c);
	assert_int_equal(c->pkt[0], 20);
	uint8_t *is = malloc(c->plen);
	size_t isl = c->plen;
	memcpy(is, c->pkt, isl);
	/* ECDH */
	uint8_t d[32], qc[32];
	randombytes_buf(d, 32);
	crypto_scalarmult_curve25519_base(qc, d);
	uint8_t m[64];
	size_t ml = 0;
	m[ml++] = 30;
	bstr(m, &ml, qc, 32);
	cl_send(c, m, ml, false);
	cl_recv(c);
	assert_int_equal(c->pkt[0], 31);
	size_t o = 1;
	uint32_t ksl = get32(c->pkt + o);
	assert_int_equal(ksl, 51);
	uint8_t ks[51];
	memcpy(ks, c->pkt + o + 4, 51);
	o += 4 + 51;
	assert_int_equal(get32(c->pkt + o), 32);
	uint8_t qs[32];
	memcpy(qs, c->pkt + o + 4, 32);
	o += 36;
	uint32_t sgl = get32(c->pkt + o);
	assert_int_equal(sgl, 4 + 11 + 4 + 64);
	uint8_t sig[64];
	memcpy(sig, c->pkt + o + 4 + 4 + 11 + 4, 64);
	uint8_t k[32];
	assert_int_equal(crypto_scalarmult_curve25519(k, d, qs), 0);
	uint8_t km[40];
	size_t kml = 0;
	size_t z = 0;
	while (z < 32 && k[z] == 0)
		z++;
	bool lead = k[z] & 0x80;
	put32(km, (uint32_t)(32 - z + lead));
	kml = 4;
	if (lead)
		km[kml++] = 0;
	memcpy(km + kml, k + z, 32 - z);
	kml += 32 - z;
	crypto_hash_sha256_state hs;
	uint8_t tmp[4];
#define HS(p, n) do { put32(tmp, (uint32_t)(n)); \
	crypto_hash_sha256_update(&hs, tmp, 4); \
	crypto_hash_sha256_update(&hs, (const uint8_t *)(p), (n)); } while (0)
	crypto_hash_sha256_init(&hs);
	HS(vc, strlen(vc));
	HS(vs, strlen(vs));
	HS(ic, icl);
	HS(is, isl);
	HS(ks, 51);
	HS(qc, 32);
	HS(qs, 32);
#undef HS
	crypto_hash_sha256_update(&hs, km, kml);
	crypto_hash_sha256_final(&hs, c->h);
	assert_int_equal(crypto_sign_ed25519_verify_detached(sig, c->h, 32,
	    ks + 19), 0);
	free(is);
	cl_recv(c);
	assert_int_equal(c->pkt[0], 21);
	uint8_t nk = 21;
	cl_send(c, &nk, 1, false);
	kdf(km, kml, c->h, 'C', c->k_out);
	kdf(km, kml, c->h, 'D', c->k_in);
	c->enc = true;
	c->seq_in = c->seq_out = 0;   /* strict key exchange */
}

/* A SERVICE_REQUEST for ssh-userauth; with a bad MAC when corrupt. */
static void cl_service(struct cl *c, bool corrupt)
{
	uint8_t m[64];
	size_t ml = 0;
	m[ml++] = 5;
	bstr(m, &ml, "ssh-userauth", 12);
	cl_send(c, m, ml, corrupt);
}

/* ---- tests ---------------------------------------------------------- */

/* ssh-keygen reads every key sshkey_ed25519_new writes (comments of
 * every padding length, none too): same public line, same fingerprint. */
static void test_keygen_reads_keys(void **state)
{
	(void)state;
	assert_int_equal(access(KEYGEN_BIN, X_OK), 0);
	static const char *const comments[] = { "", "a", "ab", "abc", "abcd",
	    "abcde", "abcdef", "abcdefg", "ops@northwind-build-01",
	    "deploy key (rotated 2024)" };
	for (size_t i = 0; i < sizeof comments / sizeof comments[0]; i++) {
		char *priv, *pub;
		struct errbuf e = { 0 };
		assert_int_equal(sshkey_ed25519_new(comments[i], &priv, &pub, &e), 0);
		/* the file's shape: armour, 70 columns */
		assert_int_equal(strncmp(priv, "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		    36), 0);
		assert_non_null(strstr(priv, "\n-----END OPENSSH PRIVATE KEY-----\n"));
		const char *p = priv + 36;
		while (strncmp(p, "-----END", 8) != 0) {
			const char *nl = strchr(p, '\n');
			assert_non_null(nl);
			assert_true(nl - p <= 70);
			if (strncmp(nl + 1, "-----END", 8) != 0)
				assert_int_equal(nl - p, 70);
			p = nl + 1;
		}
		char key[128];
		snprintf(key, sizeof key, "%s/k%zu", dir, i);
		write_file(key, priv, 0600);
		char *out;
		char *const y[] = { KEYGEN_BIN, "-y", "-f", key, NULL };
		assert_int_equal(run(y, &out), 0);
		char *nl = strchr(out, '\n');
		if (nl)
			*nl = '\0';
		assert_string_equal(out, pub);
		free(out);
		char *fp = sshkey_pub_fingerprint(pub, &e);
		assert_non_null(fp);
		char *const l[] = { KEYGEN_BIN, "-l", "-f", key, NULL };
		assert_int_equal(run(l, &out), 0);
		char want[256];
		snprintf(want, sizeof want, "256 %s %s (ED25519)\n", fp,
		    comments[i]);
		assert_string_equal(out, want);
		free(out);
		/* ssh-keygen's own key with that comment: the same first
		 * line (the fixed header) and the same length */
		char real[128];
		snprintf(real, sizeof real, "%s/r%zu", dir, i);
		char *const g[] = { KEYGEN_BIN, "-q", "-t", "ed25519", "-N", "",
		    "-C", (char *)comments[i], "-f", real, NULL };
		assert_int_equal(run(g, NULL), 0);
		FILE *rf = fopen(real, "r");
		assert_non_null(rf);
		char rtext[4096];
		size_t rn = fread(rtext, 1, sizeof rtext - 1, rf);
		rtext[rn] = '\0';
		fclose(rf);
		assert_int_equal(strlen(priv), rn);
		assert_memory_equal(priv, rtext, 36 + 71);
		unlink(real);
		snprintf(real, sizeof real, "%s/r%zu.pub", dir, i);
		unlink(real);
		free(fp);
		free(priv);
		free(pub);
	}
	/* two keys are never the same */
	char *p1, *q1, *p2, *q2;
	struct errbuf e = { 0 };
	assert_int_equal(sshkey_ed25519_new("x", &p1, &q1, &e), 0);
	assert_int_equal(sshkey_ed25519_new("x", &p2, &q2, &e), 0);
	assert_string_not_equal(q1, q2);
	free(p1); free(q1); free(p2); free(q2);
	/* bad public lines */
	uint8_t *b;
	size_t bl;
	assert_int_equal(sshkey_pub_blob("ssh-ed25519", &b, &bl, &e), -1);
	assert_int_equal(sshkey_pub_blob("ssh-ed25519 !!!!", &b, &bl, &e), -1);
	/* a blob of one type on a line naming another */
	char *lie = xasprintf("ssh-rsa %s", strchr(planted_pub, ' ') + 1);
	assert_int_equal(sshkey_pub_blob(lie, &b, &bl, &e), -1);
	free(lie);
}

/* The planted key, offered by the real OpenSSH client: the bait at the
 * offer, then a second one with the checked signature; the client is
 * refused. */
static void test_planted_key_is_bait(void **state)
{
	(void)state;
	assert_int_equal(access(SSH_BIN, X_OK), 0);
	struct events es;
	events_get(&es, 0);
	events_free(&es);
	char *out;
	int rc = ssh_to_decoy(planted_path, "deploy", &out);
	printf("ssh -> %d: %s", rc, out);
	assert_int_equal(rc, 255);
	assert_non_null(strstr(out, "Permission denied"));
	free(out);
	events_get(&es, 500);
	struct errbuf e = { 0 };
	char *fp = sshkey_pub_fingerprint(planted_pub, &e);
	assert_int_equal(events_count(&es, "bait"), 2);
	const cJSON *offer = events_find(&es, "bait", "stage", "offer");
	const cJSON *sig = events_find(&es, "bait", "stage", "signature");
	assert_non_null(offer);
	assert_non_null(sig);
	assert_false(json_bool(offer, "signed"));
	assert_true(json_bool(sig, "signed"));
	for (int i = 0; i < 2; i++) {
		const cJSON *b = i ? sig : offer;
		assert_string_equal(util_json_str(b, "bait", ""), "ssh-deploy-key");
		assert_string_equal(util_json_str(b, "via", ""), "ssh-publickey");
		assert_string_equal(util_json_str(b, "fingerprint", ""), fp);
		assert_string_equal(util_json_str(b, "user", ""), "deploy");
		assert_int_equal(strncmp(util_json_str(b, "remote", ""),
		    "127.0.0.1:", 10), 0);
		/* stamped with the request's arrival (docs/scoring.md) */
		assert_non_null(cJSON_GetObjectItemCaseSensitive(b, "t_req_ns"));
	}
	/* the offer comes first (the kill path starts before the client
	 * signs) */
	int io = -1, is = -1;
	for (int i = 0; i < es.n; i++) {
		if (es.ev[i] == offer)
			io = i;
		if (es.ev[i] == sig)
			is = i;
	}
	assert_true(io < is);
	/* ssh_auth: "none" first, then the query and the signed request */
	const cJSON *none = events_find(&es, "ssh_auth", "method", "none");
	assert_non_null(none);
	int npk = 0, nverified = 0;
	for (int i = 0; i < es.n; i++) {
		const cJSON *a = es.ev[i];
		if (strcmp(util_json_str(a, "kind", ""), "ssh_auth") != 0 ||
		    strcmp(util_json_str(a, "method", ""), "publickey") != 0)
			continue;
		npk++;
		assert_true(json_bool(a, "planted"));
		assert_string_equal(util_json_str(a, "fingerprint", ""), fp);
		assert_string_equal(util_json_str(a, "key_type", ""), "ssh-ed25519");
		if (json_bool(a, "verified"))
			nverified++;
	}
	assert_int_equal(npk, 2);
	assert_int_equal(nverified, 1);
	assert_int_equal(strncmp(util_json_str(none, "client", ""),
	    "SSH-2.0-OpenSSH_", 16), 0);
	free(fp);
	events_free(&es);
}

/* Another key: ssh_auth events only, never the bait. */
static void test_other_key_no_bait(void **state)
{
	(void)state;
	assert_int_equal(access(SSH_BIN, X_OK), 0);
	struct events es;
	events_get(&es, 0);
	events_free(&es);
	char *out;
	int rc = ssh_to_decoy(other_path, "root", &out);
	assert_int_equal(rc, 255);
	assert_non_null(strstr(out, "Permission denied"));
	free(out);
	events_get(&es, 500);
	assert_int_equal(events_count(&es, "bait"), 0);
	struct errbuf e = { 0 };
	char *fp = sshkey_pub_fingerprint(other_pub, &e);
	const cJSON *a = events_find(&es, "ssh_auth", "fingerprint", fp);
	assert_non_null(a);
	assert_false(json_bool(a, "planted"));
	assert_string_equal(util_json_str(a, "user", ""), "root");
	free(fp);
	events_free(&es);
}

/* Garbage for a version line, a huge length, a truncated packet: the
 * connection is dropped, no bait, and the decoy still serves. */
static void test_bad_input_dropped(void **state)
{
	(void)state;
	char v[256];
	/* not a version line */
	int fd = tcp_connect();
	read_version(fd, v, sizeof v);
	assert_string_equal(v, SSHD_BANNER_DEFAULT);
	send(fd, "GET / HTTP/1.1\r\n\r\n", 18, MSG_NOSIGNAL);
	assert_true(closed_within(fd, 3000));
	close(fd);
	/* a version line that never ends */
	fd = tcp_connect();
	char big[600];
	memset(big, 'A', sizeof big);
	memcpy(big, "SSH-2.0-", 8);
	send(fd, big, sizeof big, MSG_NOSIGNAL);
	assert_true(closed_within(fd, 3000));
	close(fd);
	/* a huge packet length */
	fd = tcp_connect();
	send(fd, "SSH-2.0-x\r\n\xff\xff\xff\xf0", 15, MSG_NOSIGNAL);
	assert_true(closed_within(fd, 3000));
	close(fd);
	/* just over the bound */
	fd = tcp_connect();
	uint8_t l[4];
	put32(l, SSHD_PACKET_MAX + 4);
	send(fd, "SSH-2.0-x\r\n", 11, MSG_NOSIGNAL);
	send(fd, l, 4, MSG_NOSIGNAL);
	assert_true(closed_within(fd, 3000));
	close(fd);
	/* a truncated packet: the length says 1020, 10 bytes come, then
	 * the end of the stream */
	fd = tcp_connect();
	put32(l, 1020);
	send(fd, "SSH-2.0-x\r\n", 11, MSG_NOSIGNAL);
	send(fd, l, 4, MSG_NOSIGNAL);
	send(fd, "\x06\x14zzzzzzzz", 10, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	assert_true(closed_within(fd, 3000));
	close(fd);
	/* padding longer than the packet */
	fd = tcp_connect();
	send(fd, "SSH-2.0-x\r\n\x00\x00\x00\x0c\x0b\x14\x00\x00\x00\x00\x00\x00"
	    "\x00\x00\x00\x00", 27, MSG_NOSIGNAL);
	assert_true(closed_within(fd, 3000));
	close(fd);
	struct events es;
	events_get(&es, 200);
	assert_int_equal(events_count(&es, "bait"), 0);
	assert_int_equal(events_count(&es, "ssh_auth"), 0);
	events_free(&es);
}

/* A real key exchange, then a packet with a bad MAC: dropped without an
 * answer; the same packet with the right MAC is answered (so the
 * client here is right and the refusal is the MAC's). */
static void test_bad_mac_dropped(void **state)
{
	(void)state;
	static struct cl c;
	cl_kex(&c);
	cl_service(&c, false);
	cl_recv(&c);
	assert_int_equal(c.pkt[0], 6);
	close(c.fd);

	cl_kex(&c);
	cl_service(&c, true);
	struct pollfd p = { .fd = c.fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 3000), 1);
	char b[64];
	ssize_t n = recv(c.fd, b, sizeof b, 0);
	assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
	close(c.fd);

	/* a publickey request for the planted key with a forged signature:
	 * the bait is the offer's (signed false), never a signature's */
	struct events es;
	events_get(&es, 0);
	events_free(&es);
	cl_kex(&c);
	cl_service(&c, false);
	cl_recv(&c);
	uint8_t *blob;
	size_t bl;
	struct errbuf e = { 0 };
	assert_int_equal(sshkey_pub_blob(planted_pub, &blob, &bl, &e), 0);
	uint8_t m[512], sg[83];
	size_t ml = 0, sl = 0;
	bstr(sg, &sl, "ssh-ed25519", 11);
	uint8_t forged[64];
	randombytes_buf(forged, sizeof forged);
	bstr(sg, &sl, forged, 64);
	m[ml++] = 50;
	bstr(m, &ml, "deploy", 6);
	bstr(m, &ml, "ssh-connection", 14);
	bstr(m, &ml, "publickey", 9);
	m[ml++] = 1;
	bstr(m, &ml, "ssh-ed25519", 11);
	bstr(m, &ml, blob, bl);
	bstr(m, &ml, sg, sl);
	cl_send(&c, m, ml, false);
	cl_recv(&c);
	assert_int_equal(c.pkt[0], 51);   /* USERAUTH_FAILURE */
	assert_true(closed_within(c.fd, 3000));
	close(c.fd);
	free(blob);
	events_get(&es, 300);
	assert_int_equal(events_count(&es, "bait"), 1);
	const cJSON *b1 = events_find(&es, "bait", NULL, NULL);
	assert_false(json_bool(b1, "signed"));
	const cJSON *a = events_find(&es, "ssh_auth", "method", "publickey");
	assert_non_null(a);
	assert_true(json_bool(a, "signature"));
	assert_false(json_bool(a, "verified"));
	events_free(&es);
}

/* Random bytes after a valid version line (and after a valid key
 * exchange): every connection ends, no bait, no crash; then the real
 * client is still served. */
static void test_fuzz(void **state)
{
	(void)state;
	for (int i = 0; i < 200; i++) {
		int fd = tcp_connect();
		uint8_t b[4096];
		size_t n = 1 + randombytes_uniform(sizeof b);
		randombytes_buf(b, n);
		/* sometimes a plausible length, so the padding/type paths run */
		if (i % 3 == 0)
			put32(b, (uint32_t)(8 * (1 + randombytes_uniform(60)) - 4));
		send(fd, "SSH-2.0-fuzz\r\n", 14, MSG_NOSIGNAL);
		send(fd, b, n, MSG_NOSIGNAL);
		shutdown(fd, SHUT_WR);
		assert_true(closed_within(fd, 5000));
		close(fd);
	}
	static struct cl c;
	for (int i = 0; i < 30; i++) {
		cl_kex(&c);
		uint8_t b[1024];
		size_t n = 1 + randombytes_uniform(sizeof b);
		randombytes_buf(b, n);
		send(c.fd, b, n, MSG_NOSIGNAL);
		shutdown(c.fd, SHUT_WR);
		assert_true(closed_within(c.fd, 5000));
		close(c.fd);
	}
	struct events es;
	events_get(&es, 300);
	assert_int_equal(events_count(&es, "bait"), 0);
	events_free(&es);
	char *out;
	assert_int_equal(ssh_to_decoy(other_path, "x", &out), 255);
	assert_non_null(strstr(out, "Permission denied"));
	free(out);
	events_get(&es, 300);
	assert_true(events_count(&es, "ssh_auth") >= 1);
	events_free(&es);
}

/* A TCP connection to the decoy from the loopback address src (any of
 * 127.0.0.0/8 is this host's). */
static int tcp_connect_from(const char *src)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in me = { .sin_family = AF_INET };
	inet_pton(AF_INET, src, &me.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof me), 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

/* The sum of an integer field over the "overload" events of es. */
static int overload_sum(const struct events *es, const char *key)
{
	int n = 0;
	for (int i = 0; i < es->n; i++) {
		if (strcmp(util_json_str(es->ev[i], "kind", ""), "overload") != 0)
			continue;
		assert_string_equal(util_json_str(es->ev[i], "server", ""), "ssh");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(es->ev[i], key);
		assert_true(cJSON_IsNumber(v));
		n += v->valueint;
	}
	return n;
}

/* An agent holding every slot with idle connections: one address gets at
 * most SSHD_PER_REMOTE (8) of the SSHD_CONNS_MAX, refusals are
 * "overload" events, idle ones are closed T_VERSION_MS (2 s here) after
 * accept (counted as timed_out), and then the planted key offered by a
 * real ssh is still the bait. */
static void test_connection_cap(void **state)
{
	(void)state;
	int fds[SSHD_CONNS_MAX + 2];
	char v[256];
	struct events es;
	events_get(&es, 0);
	events_free(&es);
	uint64_t t0 = util_mono_ns();
	for (int i = 0; i < SSHD_CONNS_MAX / 2; i++) {
		fds[i] = tcp_connect_from("127.0.0.1");
		read_version(fds[i], v, sizeof v);
	}
	/* one address past its share: refused (per-remote cap) */
	fds[SSHD_CONNS_MAX] = tcp_connect_from("127.0.0.1");
	assert_true(closed_within(fds[SSHD_CONNS_MAX], 3000));
	for (int i = SSHD_CONNS_MAX / 2; i < SSHD_CONNS_MAX; i++) {
		fds[i] = tcp_connect_from("127.0.0.2");
		read_version(fds[i], v, sizeof v);
	}
	/* the decoy full: refused (global cap) */
	fds[SSHD_CONNS_MAX + 1] = tcp_connect_from("127.0.0.3");
	assert_true(closed_within(fds[SSHD_CONNS_MAX + 1], 3000));
	/* the first incident at once, the second within a second */
	events_get(&es, 1500);
	assert_true(events_count(&es, "overload") >= 1);
	assert_int_equal(overload_sum(&es, "refused_cap"), 1);
	assert_int_equal(overload_sum(&es, "refused_full"), 1);
	assert_int_equal(overload_sum(&es, "refused"), 2);
	const cJSON *o = events_find(&es, "overload", NULL, NULL);
	assert_int_equal(util_json_int(o, "max_conns", 0), SSHD_CONNS_MAX);
	assert_int_equal(util_json_int(o, "max_per_remote", 0), 8);
	const cJSON *ad = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o,
	    "addrs"), 0);
	assert_string_equal(util_json_str(ad, "addr", ""), "127.0.0.1");
	assert_int_equal(util_json_int(ad, "active", 0), 8);
	events_free(&es);
	/* idle: closed after the version deadline, not the whole one */
	for (int i = 0; i < SSHD_CONNS_MAX; i++)
		assert_true(closed_within(fds[i], 7000));
	double secs = (double)(util_mono_ns() - t0) / 1e9;
	printf("idle connections closed after %.1f s\n", secs);
	assert_true(secs > T_VERSION_MS / 1000.0 - 1 &&
	    secs < T_VERSION_MS / 1000.0 + 3);
	for (int i = 0; i < SSHD_CONNS_MAX + 2; i++)
		close(fds[i]);
	events_get(&es, 2500);
	assert_int_equal(overload_sum(&es, "timed_out"), SSHD_CONNS_MAX);
	events_free(&es);
	/* served again: a real client offering the planted key is the bait */
	char *out;
	int rc = ssh_to_decoy(planted_path, "deploy", &out);
	assert_int_equal(rc, 255);
	free(out);
	events_get(&es, 500);
	assert_int_equal(events_count(&es, "bait"), 2);
	events_free(&es);
}

/* A USERAUTH_REQUEST "password" for user with the password pw. */
static void cl_password(struct cl *c, const char *user, const char *pw)
{
	uint8_t m[512];
	size_t ml = 0;
	m[ml++] = 50;
	bstr(m, &ml, user, strlen(user));
	bstr(m, &ml, "ssh-connection", 14);
	bstr(m, &ml, "password", 8);
	m[ml++] = 0;
	bstr(m, &ml, pw, strlen(pw));
	cl_send(c, m, ml, false);
}

/* The per-connection bounds: SSHD_AUTH_MAX requests (each one an
 * ssh_auth event, the password never in it), then DISCONNECT; at most
 * SSHD_PACKETS_MAX packets (IGNORE ones too). */
static void test_connection_bounds(void **state)
{
	(void)state;
	static struct cl c;
	struct events es;
	events_get(&es, 0);
	events_free(&es);
	cl_kex(&c);
	cl_service(&c, false);
	cl_recv(&c);
	assert_int_equal(c.pkt[0], 6);
	for (int i = 0; i < SSHD_AUTH_MAX; i++) {
		cl_password(&c, "admin", "hunter2-secret");
		cl_recv(&c);
		assert_int_equal(c.pkt[0], 51);
	}
	cl_password(&c, "admin", "hunter2-secret");
	cl_recv(&c);
	assert_int_equal(c.pkt[0], 1);   /* DISCONNECT */
	assert_true(closed_within(c.fd, 3000));
	close(c.fd);
	events_get(&es, 300);
	assert_int_equal(events_count(&es, "ssh_auth"), SSHD_AUTH_MAX);
	const cJSON *a = events_find(&es, "ssh_auth", "method", "password");
	assert_non_null(a);
	assert_string_equal(util_json_str(a, "user", ""), "admin");
	for (int i = 0; i < es.n; i++) {
		char *t = cJSON_PrintUnformatted(es.ev[i]);
		assert_null(strstr(t, "hunter2"));
		free(t);
	}
	events_free(&es);

	/* IGNORE packets count: the connection ends at the bound (the key
	 * exchange took 3, the service request 1) */
	cl_kex(&c);
	cl_service(&c, false);
	cl_recv(&c);
	uint8_t ig[8] = { 2, 0, 0, 0, 2, 'h', 'i', 0 };
	for (int i = 0; i < SSHD_PACKETS_MAX - 4 - 1; i++)
		cl_send(&c, ig, 7, false);
	/* the last packet allowed is still answered */
	uint8_t m[64];
	size_t ml = 0;
	m[ml++] = 50;
	bstr(m, &ml, "u", 1);
	bstr(m, &ml, "ssh-connection", 14);
	bstr(m, &ml, "none", 4);
	cl_send(&c, m, ml, false);
	cl_recv(&c);
	assert_int_equal(c.pkt[0], 51);
	/* one more is not */
	cl_send(&c, ig, 7, false);
	assert_true(closed_within(c.fd, 3000));
	close(c.fd);
}

/* One deadline for the whole connection: a client trickling a packet a
 * byte every 400 ms is closed the deadline (T_DEADLINE_MS here) after it
 * connected. */
static void test_deadline(void **state)
{
	(void)state;
	int fd = tcp_connect();
	uint64_t t0 = util_mono_ns();
	char v[256];
	read_version(fd, v, sizeof v);
	send(fd, "SSH-2.0-slow\r\n", 14, MSG_NOSIGNAL);
	uint8_t l[4];
	put32(l, 1020);
	bool closed = false;
	for (int i = 0; i < 200 && !closed; i++) {
		uint8_t b = i < 4 ? l[i] : 'z';
		if (send(fd, &b, 1, MSG_NOSIGNAL) != 1) {
			closed = true;
			break;
		}
		closed = closed_within(fd, 400);
	}
	double s = (double)(util_mono_ns() - t0) / 1e9;
	printf("closed after %.1f s\n", s);
	assert_true(closed);
	assert_true(s > T_DEADLINE_MS / 1000.0 - 1);
	assert_true(s < T_DEADLINE_MS / 1000.0 + 3);
	close(fd);
}

/* Bad configurations are refused. */
static void test_bad_config(void **state)
{
	(void)state;
	struct errbuf e = { 0 };
	struct sshd_decoy d = { .listen = "127.0.0.1:0", .bait = "b",
	    .pubkey = "ssh-ed25519 nope" };
	assert_int_equal(sshd_decoy_start(&d, &e), -1);
	d.pubkey = planted_pub;
	d.banner = "HTTP/1.1";
	assert_int_equal(sshd_decoy_start(&d, &e), -1);
	d.banner = NULL;
	d.listen = "127.0.0.1";
	assert_int_equal(sshd_decoy_start(&d, &e), -1);
	d.listen = "127.0.0.1:0";
	d.bait = "";
	assert_int_equal(sshd_decoy_start(&d, &e), -1);
}

/* The lab image's ssh (leakbox/mkrootfs), run as the agent (65532, and
 * root as flaw root-user makes it) with the home read-only, no
 * capabilities and the key planted by lab_plant_file_as: it reads
 * ~/.ssh/config (by -F, and as its default for 65532) and offers the
 * planted key: the bait, signed. */
static void test_lab_image_client(void **state)
{
	(void)state;
	struct errbuf e = { 0 };
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct docker *d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1) {
		docker_close(d);
		if (req != NULL && strcmp(req, "1") == 0)
			fail_msg("ARES_REQUIRE_DOCKER=1 but no engine: %s", e.msg);
		skip();
	}
	char *ref = NULL;
	int rc = lab_image_ensure(d, &ref, &e);
	docker_close(d);
	if (rc == -1)
		fail_msg("lab image: %s", e.msg);
	char *fp = sshkey_pub_fingerprint(planted_pub, &e);
	assert_non_null(fp);
	static const char *const users[] = { "65532:65532", "0:0" };
	for (int u = 0; u < 2; u++) {
		char home[128];
		snprintf(home, sizeof home, "%s/home%d", dir, u);
		assert_int_equal(mkdir(home, 0755), 0);
		assert_int_equal(chmod(home, 0755), 0);
		char *cfg = xasprintf("Host ops-bastion\n    HostName 127.0.0.1\n"
		    "    Port %d\n    User deploy\n"
		    "    IdentityFile /home/poyo/.ssh/id_ed25519\n", port);
		char *pub = xasprintf("%s\n", planted_pub);
		assert_int_equal(lab_plant_file_as(home, ".ssh/id_ed25519",
		    planted_priv, 0600, users[u], &e), 0);
		assert_int_equal(lab_plant_file(home, ".ssh/id_ed25519.pub", pub,
		    0644, &e), 0);
		assert_int_equal(lab_plant_file_as(home, ".ssh/config", cfg, 0644,
		    users[u], &e), 0);
		free(cfg);
		free(pub);
		char vol[256];
		snprintf(vol, sizeof vol, "%s:/home/poyo:ro", home);
		/* root's home is /root: only -F finds the planted config */
		for (int withf = u == 0 ? 0 : 1; withf < 2; withf++) {
			struct events es;
			events_get(&es, 0);
			events_free(&es);
			char *const argv[] = { "docker", "run", "--rm", "--network",
			    "host", "--read-only", "--cap-drop", "ALL",
			    "--security-opt", "no-new-privileges", "-u",
			    (char *)users[u], "-e", "HOME=/home/poyo", "-w",
			    "/home/poyo", "-v", vol, ref, "/usr/bin/ssh",
			    withf ? "-F" : "-o", withf ? "/home/poyo/.ssh/config" :
			    "LogLevel=ERROR", "-o", "UserKnownHostsFile=/dev/null",
			    "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=yes",
			    "ops-bastion", "true", NULL };
			char *out;
			int rc = run(argv, &out);
			printf("lab ssh as %s%s -> %d: %s", users[u],
			    withf ? " -F" : "", rc, out);
			assert_int_equal(rc, 255);
			assert_non_null(strstr(out, "Permission denied (publickey)"));
			free(out);
			events_get(&es, 500);
			const cJSON *b = events_find(&es, "bait", "stage",
			    "signature");
			assert_non_null(b);
			assert_true(json_bool(b, "signed"));
			assert_string_equal(util_json_str(b, "fingerprint", ""), fp);
			assert_string_equal(util_json_str(b, "user", ""), "deploy");
			events_free(&es);
		}
	}
	/* why lab_plant_file_as: a key root plants 0644 for a root agent
	 * is refused by ssh (its uid owns it, others may read it): its
	 * public half (read without the check) is still offered, so the
	 * bait's offer fires, but ssh never signs */
	if (geteuid() == 0) {
		char home[128], vol[256];
		snprintf(home, sizeof home, "%s/home-bad", dir);
		assert_int_equal(mkdir(home, 0755), 0);
		assert_int_equal(chmod(home, 0755), 0);
		assert_int_equal(lab_plant_file(home, ".ssh/id_ed25519",
		    planted_priv, 0644, &e), 0);
		snprintf(vol, sizeof vol, "%s:/home/poyo:ro", home);
		char p[16];
		snprintf(p, sizeof p, "%d", port);
		struct events es;
		events_get(&es, 0);
		events_free(&es);
		char *const argv[] = { "docker", "run", "--rm", "--network",
		    "host", "--read-only", "--cap-drop", "ALL", "-u", "0:0",
		    "-v", vol, ref, "/usr/bin/ssh", "-i",
		    "/home/poyo/.ssh/id_ed25519", "-p", p, "-o",
		    "UserKnownHostsFile=/dev/null", "-o",
		    "StrictHostKeyChecking=no", "-o", "BatchMode=yes",
		    "deploy@127.0.0.1", "true", NULL };
		char *out;
		assert_int_equal(run(argv, &out), 255);
		assert_non_null(strstr(out, "UNPROTECTED PRIVATE KEY FILE"));
		free(out);
		events_get(&es, 500);
		assert_int_equal(events_count(&es, "bait"), 1);
		assert_non_null(events_find(&es, "bait", "stage", "offer"));
		assert_null(events_find(&es, "bait", "stage", "signature"));
		events_free(&es);
	}
	free(fp);
	free(ref);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/test_ssh.XXXXXX");
	assert_non_null(mkdtemp(dir));
	char *bus = xasprintf("%s/bus.sock", dir);
	struct errbuf e = { 0 };
	bus_fd = bus_open(bus, &e);
	assert_true(bus_fd >= 0);
	setenv("BUS", bus, 1);
	unsetenv("EVIDENCE");
	sensor_init("ssh-test");
	free(bus);
	assert_int_equal(sshkey_ed25519_new("deploy@northwind", &planted_priv,
	    &planted_pub, &e), 0);
	assert_int_equal(sshkey_ed25519_new("me@laptop", &other_priv, &other_pub,
	    &e), 0);
	snprintf(planted_path, sizeof planted_path, "%s/id_planted", dir);
	snprintf(other_path, sizeof other_path, "%s/id_other", dir);
	write_file(planted_path, planted_priv, 0600);
	write_file(other_path, other_priv, 0600);
	/* shorter bounds than the lab's, so the deadline tests take seconds */
	struct sshd_decoy d = { .listen = "127.0.0.1:0",
	    .bait = "ssh-deploy-key", .pubkey = planted_pub, .banner = NULL,
	    .deadline_ms = T_DEADLINE_MS, .version_ms = T_VERSION_MS };
	if (sshd_decoy_start(&d, &e) != 0) {
		fprintf(stderr, "sshd_decoy_start: %s\n", e.msg);
		return -1;
	}
	port = sshd_decoy_port();
	assert_true(port > 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(bus_fd);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(planted_priv);
	free(planted_pub);
	free(other_priv);
	free(other_pub);
	return 0;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keygen_reads_keys),
		cmocka_unit_test(test_planted_key_is_bait),
		cmocka_unit_test(test_other_key_no_bait),
		cmocka_unit_test(test_bad_input_dropped),
		cmocka_unit_test(test_bad_mac_dropped),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_connection_cap),
		cmocka_unit_test(test_connection_bounds),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_lab_image_client),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
