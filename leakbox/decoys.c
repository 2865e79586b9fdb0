/*
 * decoys.c - `ares-lab decoys`: the lab's decoy services for the bait
 * kinds cloud-credentials, git-credential and mcp-server (and the SSH
 * decoy of ssh.c), each on its own listener, all in one process with one
 * sensor chain (src "decoys").
 *
 *   cloud  a fake STS / instance metadata service: Action=GetCallerIdentity
 *          (POST form or GET query) answered as STS does (XML), the IMDSv2
 *          paths /latest/api/token and /latest/meta-data/...  The bait
 *          fires when the planted key id appears anywhere in a request;
 *          "signed" says whether its AWS SigV4 signature checks with the
 *          planted secret.  Fetching the instance role's credentials is
 *          bait too (via "imds").
 *   git    a fake git smart-HTTP server: info/refs?service=git-upload-pack
 *          is 401 + WWW-Authenticate without the token, a pkt-line ref
 *          advertisement with it (a real `git ls-remote` succeeds).
 *   mcp    a decoy MCP endpoint (JSON-RPC 2.0 over HTTP POST, "Streamable
 *          HTTP"): initialize, notifications, tools/list (the decoy tool
 *          and one harmless tool), tools/call.  Calling the decoy tool is
 *          the bait; the harmless one is not.
 *
 * Every request is untrusted: it arrives bounded by http.c; everything
 * derived from it here is bounded again (fixed buffers, counted loops).
 * The bait event goes out before anything else is done for the request,
 * then the answer is made, then a "request" event.  docs/bait.md.
 */
#include "leakbox.h"

#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SIGV4_PARAMS_MAX   64      /* query parameters in a canonical query */
#define SIGV4_SIGNED_MAX   32      /* signed headers */
#define SIGV4_CANON_MAX    (64 * 1024)

/* ---- small helpers ------------------------------------------------- */

/* A growable string, never past SIGV4_CANON_MAX (then over is set). */
struct sbuf {
	char *p;
	size_t len, cap;
	bool over;
};

/* Append n bytes of s to b (dropped once over the cap). */
static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->over || b->len + n + 1 > SIGV4_CANON_MAX) {
		b->over = true;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* Append s[0..n) URI-encoded as SigV4 wants (RFC 3986 unreserved kept,
 * '/' kept when keep_slash, everything else %XX upper case). */
static void
sb_uri(struct sbuf *b, const char *s, size_t n, bool keep_slash)
{
	static const char hx[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
		    c == '~' || (keep_slash && c == '/')) {
			sb_add(b, (const char *)&c, 1);
		} else {
			char e[3] = { '%', hx[c >> 4], hx[c & 15] };
			sb_add(b, e, 3);
		}
	}
}

/* Percent-decode s[0..n) ('+' is a space when plus) into out (at most
 * outlen - 1 bytes, NUL-terminated); the decoded length. */
static size_t
pct_decode(const char *s, size_t n, bool plus, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < outlen; i++) {
		int c = (unsigned char)s[i];
		if (c == '%' && i + 2 < n && util_hexval(s[i + 1]) >= 0 &&
		    util_hexval(s[i + 2]) >= 0) {
			c = util_hexval(s[i + 1]) * 16 + util_hexval(s[i + 2]);
			i += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		out[o++] = (char)c;
	}
	if (outlen)
		out[o] = '\0';
	return o;
}

/* Lower-case hex SHA-256 of p[0..n) into out[65]. */
static void
sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, p, n);
	util_hex(h, sizeof(h), out);
}

/* HMAC-SHA256 of msg under key (any length) into out[32]. */
static void
hmac256(const void *key, size_t klen, const char *msg, size_t mlen,
    unsigned char out[32])
{
	crypto_auth_hmacsha256_state st;
	crypto_auth_hmacsha256_init(&st, key, klen);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg, mlen);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

/* Does needle (non-empty) occur in hay[0..n)? */
static bool
contains(const char *hay, size_t n, const char *needle)
{
	size_t nl = strlen(needle);
	if (!hay || nl == 0 || n < nl)
		return false;
	return memmem(hay, n, needle, nl) != NULL;
}

/* Equality of a presented secret and the planted one, without an early
 * exit on the first difference. */
static bool
secret_eq(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b);
	unsigned char d = (unsigned char)(la != lb);
	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0 && lb > 0;
}

/* Does s occur in the request line or a header value? */
static bool
in_head(const struct http_request *r, const char *s)
{
	if (!s || !*s)
		return false;
	if (r->target && contains(r->target, strlen(r->target), s))
		return true;
	if (r->query && contains(r->query, strlen(r->query), s))
		return true;
	for (size_t i = 0; i < r->nheaders; i++)
		if (contains(r->headers[i].value, strlen(r->headers[i].value), s))
			return true;
	return false;
}

/* ---- keeping the planted secrets out of events ------------------- */

/*
 * The planted secrets of this process (the git token, the cloud secret)
 * and the labels that replace them in every event.  decoys_main registers
 * all of them before any listener starts; each handler also registers its
 * own context's on every call (idempotent), so a handler driven on its own
 * redacts them too.  Bounded: REDACT_MAX secrets.
 */
#define REDACT_MAX 16
static pthread_mutex_t redact_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *redact_secret[REDACT_MAX];
static const char *redact_label[REDACT_MAX];
static size_t redact_n;

/* Add secret with the label that replaces it (an empty or known one is
 * ignored); a secret holding '+' is added a second time as a form or
 * query decoder reads it ('+' as a space), so a decoded parameter cannot
 * carry it either.  The copies live as long as the process. */
static void
redact_register(const char *secret, const char *label)
{
	if (!secret || !*secret)
		return;
	pthread_mutex_lock(&redact_mu);
	for (int form = 0; form < 2; form++) {
		char *v = xstrdup(secret);
		bool plus = false;
		for (char *q = v; form == 1 && *q; q++)
			if (*q == '+') {
				*q = ' ';
				plus = true;
			}
		bool known = form == 1 && !plus;
		for (size_t i = 0; i < redact_n && !known; i++)
			known = strcmp(redact_secret[i], v) == 0;
		if (!known && redact_n < REDACT_MAX) {
			redact_secret[redact_n] = v;
			redact_label[redact_n] = label;
			redact_n++;
		} else {
			free(v);
		}
	}
	pthread_mutex_unlock(&redact_mu);
}

/* s[0..n) with every occurrence of every registered secret replaced by
 * its label, NUL-terminated (a NUL inside s ends it).  *changed (when not
 * NULL) says whether anything was replaced.  Caller frees. */
static char *
redact_dup(const char *s, size_t n, bool *changed)
{
	if (changed)
		*changed = false;
	size_t l = s ? strnlen(s, n) : 0;
	char *cur = xmalloc(l + 1);
	memcpy(cur, s ? s : "", l);
	cur[l] = '\0';
	pthread_mutex_lock(&redact_mu);
	for (size_t k = 0; k < redact_n; k++) {
		const char *sec = redact_secret[k], *lab = redact_label[k];
		size_t sl = strlen(sec), ll = strlen(lab), hits = 0;
		for (const char *p = cur; (p = strstr(p, sec)) != NULL; p += sl)
			hits++;
		if (hits == 0)
			continue;
		size_t cl = strlen(cur);
		/* hits <= cl / sl, so this cannot overflow for sane sizes */
		char *next = xmalloc(cl - hits * sl + hits * ll + 1), *o = next;
		const char *p = cur, *hit;
		while ((hit = strstr(p, sec)) != NULL) {
			memcpy(o, p, (size_t)(hit - p));
			o += hit - p;
			memcpy(o, lab, ll);
			o += ll;
			p = hit + sl;
		}
		strcpy(o, p);
		free(cur);
		cur = next;
		if (changed)
			*changed = true;
	}
	pthread_mutex_unlock(&redact_mu);
	return cur;
}

/* Redacted, then cut to max bytes as sensor_trunc does.  Caller frees. */
static char *
redact_trunc(const char *s, size_t max)
{
	char *r = redact_dup(s, s ? strlen(s) : 0, NULL);
	char *t = sensor_trunc(r, max);
	free(r);
	return t;
}

/* util_sanitize of the redacted s[0..n) into out.  Sanitizing drops
 * bytes (controls, escape sequences), which may join a secret's pieces:
 * so redact, sanitize at full length, redact again, then cut to outlen. */
static void
redact_sanitize(char *out, size_t outlen, const char *s, size_t n)
{
	char *r = redact_dup(s, n, NULL);
	size_t rl = strlen(r);
	char *clean = xmalloc(rl + 1);
	util_sanitize(clean, rl + 1, r, rl, false);
	free(r);
	r = redact_dup(clean, strlen(clean), NULL);
	free(clean);
	util_sanitize(out, outlen, r, strlen(r), false);
	free(r);
}

/* Redact every string in o (objects and arrays, depth-bounded; events are
 * shallow, deeper nodes are dropped). */
static void
redact_tree(cJSON *o, int depth)
{
	cJSON *it = o ? o->child : NULL;
	while (it) {
		cJSON *next = it->next;
		if (cJSON_IsString(it) && it->valuestring) {
			bool ch;
			char *r = redact_dup(it->valuestring,
			    strlen(it->valuestring), &ch);
			if (ch) {
				/* the new node takes over the member's name
				 * (ReplaceItemViaPointer keeps none) */
				cJSON *n = cJSON_CreateString(r);
				n->string = it->string;
				n->type |= it->type & cJSON_StringIsConst;
				it->string = NULL;
				cJSON_ReplaceItemViaPointer(o, it, n);
			}
			free(r);
		} else if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
			if (depth >= 8)
				cJSON_Delete(cJSON_DetachItemViaPointer(o, it));
			else
				redact_tree(it, depth + 1);
		}
		it = next;
	}
}

/* sensor_emit of fields after redact_tree: every event of this file goes
 * out through here. */
static void
decoy_emit(const char *kind, cJSON *fields)
{
	redact_tree(fields, 0);
	sensor_emit(kind, fields);
}

/* The common fields of a bait event (bait, via, path, method, remote);
 * the caller adds its own and emits.  Caller owns the object. */
static cJSON *
bait_fields(const char *bait, const char *via, const struct http_request *r)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "bait", bait);
	cJSON_AddStringToObject(b, "via", via);
	char *p = redact_trunc(r->path, 1024);
	cJSON_AddStringToObject(b, "path", p);
	free(p);
	cJSON_AddStringToObject(b, "method", r->method);
	cJSON_AddStringToObject(b, "remote", r->remote);
	return b;
}

/* The "request" event and the log line after an answer. */
static void
request_done(const char *svc, const struct http_request *r,
    const struct http_response *resp, const char *auth, const char *via,
    const char *extra_key, const char *extra)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "service", svc);
	cJSON_AddStringToObject(o, "method", r->method);
	char *p = redact_trunc(r->path, 1024);
	cJSON_AddStringToObject(o, "path", p);
	free(p);
	cJSON_AddNumberToObject(o, "status", resp->status);
	cJSON_AddStringToObject(o, "auth", auth);
	if (extra_key && extra) {
		char *x = redact_trunc(extra, 256);
		cJSON_AddStringToObject(o, extra_key, x);
		free(x);
	}
	cJSON_AddStringToObject(o, "remote", r->remote);
	decoy_emit("request", o);
	char sp[256];
	redact_sanitize(sp, sizeof(sp), r->path, strlen(r->path));
	sensor_log("%s %s %s %s -> %d (auth %s%s%s)", svc, r->remote, r->method,
	    sp, resp->status, auth, via ? ", bait via " : "", via ? via : "");
}

/* ---- AWS SigV4 ----------------------------------------------------- */

/* Find "Name=" in an Authorization header's comma-separated list; copy
 * its value (up to ',' or the end) into out.  1 found, 0 not. */
static int
auth_param(const char *h, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	const char *p = h;
	while ((p = strstr(p, name)) != NULL) {
		bool start = p == h || p[-1] == ' ' || p[-1] == ',';
		if (start && p[nl] == '=') {
			const char *v = p + nl + 1;
			size_t n = strcspn(v, ", ");
			if (n >= outlen)
				return 0;
			memcpy(out, v, n);
			out[n] = '\0';
			return 1;
		}
		p += nl;
	}
	return 0;
}

struct qparam {
	char *k, *v;            /* URI-encoded as SigV4 wants */
};

/* qsort order of canonical query parameters: by key, then value. */
static int
qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int c = strcmp(x->k, y->k);
	return c ? c : strcmp(x->v, y->v);
}

/* The canonical query string of the raw query q (X-Amz-Signature left
 * out when skip_sig) into b.  -1 when it has too many parameters. */
static int
canonical_query(struct sbuf *b, const char *q, bool skip_sig)
{
	struct qparam ps[SIGV4_PARAMS_MAX];
	size_t np = 0;
	int rc = 0;
	const char *p = q;
	while (*p) {
		const char *amp = strchr(p, '&');
		size_t seg = amp ? (size_t)(amp - p) : strlen(p);
		if (seg > 0) {
			if (np == SIGV4_PARAMS_MAX) {
				rc = -1;
				break;
			}
			const char *eq = memchr(p, '=', seg);
			size_t kl = eq ? (size_t)(eq - p) : seg;
			char *dk = xmalloc(kl + 1), *dv;
			size_t dkl = pct_decode(p, kl, true, dk, kl + 1);
			size_t vl = eq ? seg - kl - 1 : 0;
			dv = xmalloc(vl + 1);
			size_t dvl = pct_decode(eq ? eq + 1 : "", vl, true, dv,
			    vl + 1);
			if (skip_sig && strcmp(dk, "X-Amz-Signature") == 0) {
				free(dk);
				free(dv);
			} else {
				struct sbuf k = { 0 }, v = { 0 };
				sb_uri(&k, dk, dkl, false);
				sb_uri(&v, dv, dvl, false);
				sb_str(&k, "");
				sb_str(&v, "");
				ps[np].k = k.p ? k.p : xstrdup("");
				ps[np].v = v.p ? v.p : xstrdup("");
				np++;
				free(dk);
				free(dv);
			}
		}
		p += seg;
		if (*p == '&')
			p++;
	}
	if (rc == 0) {
		qsort(ps, np, sizeof(ps[0]), qparam_cmp);
		for (size_t i = 0; i < np; i++) {
			if (i)
				sb_str(b, "&");
			sb_str(b, ps[i].k);
			sb_str(b, "=");
			sb_str(b, ps[i].v);
		}
	}
	for (size_t i = 0; i < np; i++) {
		free(ps[i].k);
		free(ps[i].v);
	}
	return rc;
}

/* Append "name:value\n" for a signed header: every header of that name
 * (case-insensitive), values trimmed, runs of spaces collapsed, joined by
 * ','.  -1 when the request has none of that name. */
static int
canonical_header(struct sbuf *b, const struct http_request *r,
    const char *name)
{
	bool any = false;
	sb_str(b, name);
	sb_str(b, ":");
	for (size_t i = 0; i < r->nheaders; i++) {
		if (strcasecmp(r->headers[i].name, name) != 0)
			continue;
		if (any)
			sb_str(b, ",");
		any = true;
		bool sp = false;
		for (const char *v = r->headers[i].value; *v; v++) {
			if (*v == ' ' || *v == '\t') {
				sp = true;
				continue;
			}
			if (sp)
				sb_str(b, " ");
			sp = false;
			sb_add(b, v, 1);
		}
	}
	sb_str(b, "\n");
	return any ? 0 : -1;
}

/*
 * Check a SigV4 signature: credential "KEYID/DATE/REGION/SERVICE/
 * aws4_request", the signed header names "a;b;c", the presented hex
 * signature, the request time amz_date; query says the signature came in
 * the query string (it is then left out of the canonical query).  true
 * when it is the signature secret makes over the request.
 */
static bool
sigv4_verify(const struct http_request *r, const char *secret,
    const char *credential, const char *signed_headers, const char *sig,
    const char *amz_date, bool query)
{
	char scope[256];
	const char *slash = strchr(credential, '/');
	if (!slash || strlen(slash + 1) >= sizeof(scope))
		return false;
	snprintf(scope, sizeof(scope), "%s", slash + 1);
	char date[16], region[64], service[64], term[32];
	{
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%s", scope);
		char *save = NULL;
		char *a = strtok_r(tmp, "/", &save);
		char *b = a ? strtok_r(NULL, "/", &save) : NULL;
		char *c = b ? strtok_r(NULL, "/", &save) : NULL;
		char *d = c ? strtok_r(NULL, "/", &save) : NULL;
		if (!d || strtok_r(NULL, "/", &save) || strlen(a) >= sizeof(date) ||
		    strlen(b) >= sizeof(region) || strlen(c) >= sizeof(service) ||
		    strlen(d) >= sizeof(term))
			return false;
		strcpy(date, a);
		strcpy(region, b);
		strcpy(service, c);
		strcpy(term, d);
	}
	if (strlen(sig) != 64 || !*amz_date || strlen(amz_date) > 32)
		return false;

	struct sbuf cr = { 0 };
	sb_str(&cr, r->method);
	sb_str(&cr, "\n");
	sb_uri(&cr, r->path, strlen(r->path), true);
	sb_str(&cr, "\n");
	bool ok = canonical_query(&cr, r->query ? r->query : "", query) == 0;
	sb_str(&cr, "\n");
	/* signed headers: lower case names separated by ';' */
	char names[1024];
	size_t shl = strlen(signed_headers);
	if (shl >= sizeof(names)) {
		ok = false;
		shl = 0;
	}
	memcpy(names, signed_headers, shl);
	names[shl] = '\0';
	size_t nsigned = 0;
	char *save = NULL;
	for (char *n = strtok_r(names, ";", &save); ok && n;
	    n = strtok_r(NULL, ";", &save)) {
		if (++nsigned > SIGV4_SIGNED_MAX || canonical_header(&cr, r, n) < 0)
			ok = false;
	}
	if (nsigned == 0)
		ok = false;
	sb_str(&cr, "\n");
	sb_str(&cr, signed_headers);
	sb_str(&cr, "\n");
	size_t base = cr.len;
	const char *ph = http_header_get(r, "X-Amz-Content-Sha256");
	bool match = false;
	/* the payload hash: the client's, else the body's; a presigned URL
	 * may also have signed UNSIGNED-PAYLOAD */
	for (int attempt = 0; ok && !cr.over && attempt < 2 && !match;
	    attempt++) {
		cr.len = base;
		cr.p[base] = '\0';
		char bh[65];
		if (attempt == 0 && ph && strlen(ph) < 80) {
			sb_str(&cr, ph);
		} else if (attempt == 0) {
			sha256_hex(r->body ? r->body : "", r->body_len, bh);
			sb_str(&cr, bh);
		} else if (query && !ph) {
			sb_str(&cr, "UNSIGNED-PAYLOAD");
		} else {
			break;
		}
		if (cr.over)
			break;
		char crh[65];
		sha256_hex(cr.p, cr.len, crh);
		char sts[512];
		snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date,
		    scope, crh);
		unsigned char k[32];
		char *k0 = xasprintf("AWS4%s", secret);
		hmac256(k0, strlen(k0), date, strlen(date), k);
		sodium_memzero(k0, strlen(k0));
		free(k0);
		hmac256(k, 32, region, strlen(region), k);
		hmac256(k, 32, service, strlen(service), k);
		hmac256(k, 32, term, strlen(term), k);
		unsigned char mac[32];
		hmac256(k, 32, sts, strlen(sts), mac);
		sodium_memzero(k, sizeof(k));
		char hex[65];
		util_hex(mac, sizeof(mac), hex);
		char lower[65];
		for (size_t i = 0; i < 64; i++)
			lower[i] = (char)((sig[i] >= 'A' && sig[i] <= 'F') ?
			    sig[i] + 32 : sig[i]);
		lower[64] = '\0';
		match = sodium_memcmp(hex, lower, 64) == 0;
	}
	free(cr.p);
	return match;
}

int
decoys_sigv4_check(const struct http_request *r, const char *key_id,
    const char *secret)
{
	if (!key_id || !*key_id || !secret || !*secret)
		return -1;
	const char *h = http_header_get(r, "Authorization");
	char cred[256], sh[1024], sig[80], date[40];
	if (h && strncmp(h, "AWS4-HMAC-SHA256 ", 17) == 0) {
		if (!auth_param(h + 17, "Credential", cred, sizeof(cred)) ||
		    !auth_param(h + 17, "SignedHeaders", sh, sizeof(sh)) ||
		    !auth_param(h + 17, "Signature", sig, sizeof(sig)))
			return -1;
		size_t kl = strlen(key_id);
		if (strncmp(cred, key_id, kl) != 0 || cred[kl] != '/')
			return -1;
		const char *d = http_header_get(r, "X-Amz-Date");
		snprintf(date, sizeof(date), "%s", d ? d : "");
		return sigv4_verify(r, secret, cred, sh, sig, date, false) ? 1 : 0;
	}
	if (http_query_get(r, "X-Amz-Credential", cred, sizeof(cred))) {
		size_t kl = strlen(key_id);
		if (strncmp(cred, key_id, kl) != 0 || cred[kl] != '/')
			return -1;
		if (!http_query_get(r, "X-Amz-SignedHeaders", sh, sizeof(sh)) ||
		    !http_query_get(r, "X-Amz-Signature", sig, sizeof(sig)) ||
		    !http_query_get(r, "X-Amz-Date", date, sizeof(date)))
			return 0;
		return sigv4_verify(r, secret, cred, sh, sig, date, true) ? 1 : 0;
	}
	return -1;
}

/* ---- cloud: STS + instance metadata -------------------------------- */

/* A 12-digit account number and an id suffix derived from the key id
 * (stable per dressing, never a real account's on purpose or not). */
static void
cloud_account(const char *key_id, char acct[13], char uid[22])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, (const unsigned char *)key_id, strlen(key_id));
	for (int i = 0; i < 12; i++)
		acct[i] = (char)('0' + h[i] % 10);
	acct[12] = '\0';
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	memcpy(uid, "AIDA", 4);
	for (int i = 0; i < 17; i++)
		uid[4 + i] = al[h[12 + i] % 32];
	uid[21] = '\0';
}

/* An STS style XML error answer. */
static void
sts_error(struct http_response *resp, int status, const char *code,
    const char *msg)
{
	char rid[37];
	unsigned char b[16];
	randombytes_buf(b, sizeof(b));
	snprintf(rid, sizeof(rid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6],
	    b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	char *x = xasprintf("<ErrorResponse xmlns=\"https://sts.amazonaws.com/"
	    "doc/2011-06-15/\">\n  <Error>\n    <Type>Sender</Type>\n    <Code>%s"
	    "</Code>\n    <Message>%s</Message>\n  </Error>\n  <RequestId>%s"
	    "</RequestId>\n</ErrorResponse>\n", code, msg, rid);
	http_response_text(resp, status, "text/xml", x);
	free(x);
}

/* The IMDS answers (path under /latest/); the decoy role's credentials
 * set *creds. */
static void
imds_route(const struct decoys_cloud *c, const struct http_request *r,
    struct http_response *resp, bool *creds)
{
	const char *p = r->path;
	char acct[13], uid[22];
	cloud_account(c->key_id, acct, uid);
	if (strcmp(p, "/latest/api/token") == 0) {
		if (strcmp(r->method, "PUT") != 0) {
			http_response_text(resp, 405, "text/plain", "");
			return;
		}
		if (!http_header_get(r, "X-aws-ec2-metadata-token-ttl-seconds")) {
			http_response_text(resp, 400, "text/plain", "");
			return;
		}
		unsigned char b[40];
		randombytes_buf(b, sizeof(b));
		char tok[81];
		util_hex(b, sizeof(b), tok);
		http_response_text(resp, 200, "text/plain", tok);
		return;
	}
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0) {
		http_response_text(resp, 405, "text/plain", "");
		return;
	}
	char *role = xasprintf("/latest/meta-data/iam/security-credentials/%s",
	    c->role);
	const char *text = NULL;
	char *own = NULL;
	if (strcmp(p, "/latest/meta-data") == 0 ||
	    strcmp(p, "/latest/meta-data/") == 0) {
		text = "ami-id\nhostname\niam/\ninstance-id\ninstance-type\n"
		    "local-ipv4\nplacement/\n";
	} else if (strcmp(p, "/latest/meta-data/instance-id") == 0) {
		own = xasprintf("i-0%.16s", uid + 4);
		for (char *q = own; *q; q++)
			*q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
	} else if (strcmp(p, "/latest/meta-data/instance-type") == 0) {
		text = "m5.large";
	} else if (strcmp(p, "/latest/meta-data/hostname") == 0) {
		text = "ip-10-0-12-34.internal";
	} else if (strcmp(p, "/latest/meta-data/local-ipv4") == 0) {
		text = "10.0.12.34";
	} else if (strcmp(p, "/latest/meta-data/iam") == 0 ||
	    strcmp(p, "/latest/meta-data/iam/") == 0) {
		text = "info\nsecurity-credentials/\n";
	} else if (strcmp(p, "/latest/meta-data/iam/info") == 0) {
		own = xasprintf("{\"Code\":\"Success\",\"InstanceProfileArn\":"
		    "\"arn:aws:iam::%s:instance-profile/%s\"}", acct, c->role);
	} else if (strcmp(p, "/latest/meta-data/iam/security-credentials") == 0 ||
	    strcmp(p, "/latest/meta-data/iam/security-credentials/") == 0) {
		text = c->role;
	} else if (strcmp(p, role) == 0) {
		*creds = true;
		unsigned char b[48];
		randombytes_buf(b, sizeof(b));
		char tok[97];
		util_hex(b, sizeof(b), tok);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "Code", "Success");
		cJSON_AddStringToObject(o, "LastUpdated", "2025-01-01T00:00:00Z");
		cJSON_AddStringToObject(o, "Type", "AWS-HMAC");
		cJSON_AddStringToObject(o, "AccessKeyId", c->key_id);
		cJSON_AddStringToObject(o, "SecretAccessKey", c->secret);
		cJSON_AddStringToObject(o, "Token", tok);
		cJSON_AddStringToObject(o, "Expiration", "2035-01-01T06:00:00Z");
		char *s = cJSON_Print(o);
		cJSON_Delete(o);
		http_response_text(resp, 200, "text/plain", s);
		free(s);
		free(role);
		return;
	}
	free(role);
	if (own) {
		http_response_text(resp, 200, "text/plain", own);
		free(own);
	} else if (text) {
		http_response_text(resp, 200, "text/plain", text);
	} else {
		http_response_text(resp, 404, "text/html", "<?xml version=\"1.0\" "
		    "encoding=\"iso-8859-1\"?>\n<title>404 - Not Found</title>\n");
	}
}

/* How the planted key id was presented: "sts-sigv4" (an Authorization
 * header's Credential=), "sts-query" (X-Amz-Credential / AWSAccessKeyId
 * in the query or a form body), "sts-other" (anywhere else), NULL (not). */
static const char *
cloud_via(const struct decoys_cloud *c, const struct http_request *r)
{
	if (!c->key_id || !*c->key_id)
		return NULL;
	const char *h = http_header_get(r, "Authorization");
	char cred[320];
	snprintf(cred, sizeof(cred), "Credential=%s", c->key_id);
	if (h && contains(h, strlen(h), cred))
		return "sts-sigv4";
	char v[256];
	struct http_request form = { 0 };
	form.query = r->body ? r->body : (char *)"";
	const struct http_request *srcs[2] = { r, &form };
	for (int i = 0; i < 2; i++) {
		if ((http_query_get(srcs[i], "X-Amz-Credential", v, sizeof(v)) ||
		    http_query_get(srcs[i], "AWSAccessKeyId", v, sizeof(v))) &&
		    contains(v, strlen(v), c->key_id))
			return "sts-query";
	}
	if (in_head(r, c->key_id) || contains(r->body, r->body_len, c->key_id))
		return "sts-other";
	return NULL;
}

void
decoys_cloud_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	const struct decoys_cloud *c = ctx;
	redact_register(c->secret, "<secret>");
	const char *via = cloud_via(c, req);
	int sig = via ? decoys_sigv4_check(req, c->key_id, c->secret) : -1;
	char action[1024] = "";
	struct http_request form = { 0 };
	form.query = req->body ? req->body : (char *)"";
	if (!http_query_get(req, "Action", action, sizeof(action)))
		http_query_get(&form, "Action", action, sizeof(action));
	if (via) {
		/* the kill path starts here: nothing before this datagram */
		cJSON *b = bait_fields(c->bait, via, req);
		cJSON_AddStringToObject(b, "key_id", c->key_id);
		cJSON_AddBoolToObject(b, "signed", sig == 1);
		if (*action) {
			char a[64];
			redact_sanitize(a, sizeof(a), action, strlen(action));
			cJSON_AddStringToObject(b, "action", a);
		}
		decoy_emit("bait", b);
	}
	bool imds = strncmp(req->path, "/latest/", 8) == 0 ||
	    strcmp(req->path, "/latest") == 0;
	bool creds = false;
	const char *auth = via ? (sig == 1 ? "signed" : "decoy") : "none";
	if (imds) {
		imds_route(c, req, resp, &creds);
		if (creds && !via) {
			/* the instance role's credentials were fetched */
			cJSON *b = bait_fields(c->bait, "imds", req);
			cJSON_AddStringToObject(b, "key_id", c->key_id);
			cJSON_AddBoolToObject(b, "signed", false);
			decoy_emit("bait", b);
			via = "imds";
		}
	} else if (!*action) {
		sts_error(resp, 400, "MissingAction", "Could not find operation");
	} else if (!via && (http_header_get(req, "Authorization") ||
	    in_head(req, "X-Amz-Credential") || in_head(req, "AWSAccessKeyId") ||
	    contains(req->body, req->body_len, "AWSAccessKeyId") ||
	    contains(req->body, req->body_len, "X-Amz-Credential"))) {
		auth = "invalid";
		sts_error(resp, 403, "InvalidClientTokenId", "The security token "
		    "included in the request is invalid.");
	} else if (!via) {
		sts_error(resp, 403, "MissingAuthenticationToken", "Request is "
		    "missing Authentication Token");
	} else if (sig != 1) {
		sts_error(resp, 403, "SignatureDoesNotMatch", "The request "
		    "signature we calculated does not match the signature you "
		    "provided. Check your AWS Secret Access Key and signing "
		    "method. Consult the service documentation for details.");
	} else if (strcmp(action, "GetCallerIdentity") == 0) {
		char acct[13], uid[22], rid[37];
		cloud_account(c->key_id, acct, uid);
		unsigned char b[16];
		randombytes_buf(b, sizeof(b));
		char hx[33];
		util_hex(b, sizeof(b), hx);
		snprintf(rid, sizeof(rid), "%.8s-%.4s-%.4s-%.4s-%.12s", hx, hx + 8,
		    hx + 12, hx + 16, hx + 20);
		char *x = xasprintf("<GetCallerIdentityResponse xmlns=\"https://sts."
		    "amazonaws.com/doc/2011-06-15/\">\n  <GetCallerIdentityResult>\n"
		    "    <Arn>arn:aws:iam::%s:user/%s</Arn>\n    <UserId>%s</UserId>\n"
		    "    <Account>%s</Account>\n  </GetCallerIdentityResult>\n"
		    "  <ResponseMetadata>\n    <RequestId>%s</RequestId>\n"
		    "  </ResponseMetadata>\n</GetCallerIdentityResponse>\n", acct,
		    c->role, uid, acct, rid);
		http_response_text(resp, 200, "text/xml", x);
		free(x);
	} else {
		char a[64], acct[13], uid[22];
		util_sanitize(a, sizeof(a), action, strlen(action), false);
		for (char *q = a; *q; q++)
			if (*q == '<' || *q == '>' || *q == '&')
				*q = '_';
		cloud_account(c->key_id, acct, uid);
		char *m = xasprintf("User: arn:aws:iam::%s:user/%s is not "
		    "authorized to perform: sts:%s", acct, c->role, a);
		sts_error(resp, 403, "AccessDenied", m);
		free(m);
	}
	request_done("cloud", req, resp, auth, via, *action ? "action" : NULL,
	    action);
}

/* ---- git smart HTTP ------------------------------------------------ */

/* How the planted token was presented: "git-basic" (Basic user:TOKEN, or
 * TOKEN as the user), "git-bearer", "git-other" (anywhere in the request
 * line or headers), NULL (not).  *user gets the Basic user (sanitised). */
static const char *
git_via(const struct decoys_git *g, const struct http_request *r,
    char *user, size_t userlen)
{
	user[0] = '\0';
	if (!g->token || !*g->token)
		return NULL;
	/* every Authorization header counts, not only the first: a client
	 * (or an agent) may send several */
	for (size_t i = 0; i < r->nheaders; i++) {
		if (strcasecmp(r->headers[i].name, "Authorization") != 0)
			continue;
		const char *h = r->headers[i].value;
		if (strncasecmp(h, "Basic ", 6) == 0) {
			const char *b64 = h + 6;
			while (*b64 == ' ')
				b64++;
			unsigned char dec[1024];
			size_t dl = 0;
			if (strlen(b64) < 1300 &&
			    sodium_base642bin(dec, sizeof(dec) - 1, b64, strlen(b64),
			    NULL, &dl, NULL, sodium_base64_VARIANT_ORIGINAL) == 0) {
				dec[dl] = '\0';
				const char *colon = memchr(dec, ':', dl);
				size_t ul = colon ? (size_t)(colon - (char *)dec) : dl;
				bool hit = colon && secret_eq(colon + 1,
				    dl - ul - 1, g->token);
				hit = hit || secret_eq((const char *)dec, ul, g->token);
				/* the user of the header that hit, else the first */
				if (hit || !user[0])
					redact_sanitize(user, userlen,
					    (const char *)dec, ul);
				sodium_memzero(dec, sizeof(dec));
				if (hit)
					return "git-basic";
			}
		} else if (strncasecmp(h, "Bearer ", 7) == 0) {
			const char *v = h + 7;
			while (*v == ' ')
				v++;
			if (secret_eq(v, strlen(v), g->token))
				return "git-bearer";
		}
	}
	if (in_head(r, g->token))
		return "git-other";
	return NULL;
}

/* Append one pkt-line holding s to b. */
static void
pkt_line(struct sbuf *b, const char *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t v = n + 4 > 0xffff ? 0xffff : n + 4;
	char len[4] = { hx[(v >> 12) & 15], hx[(v >> 8) & 15], hx[(v >> 4) & 15],
		hx[v & 15] };
	sb_add(b, len, 4);
	sb_add(b, s, n);
}

/* Which repository path r names: "/REPO.git/SUFFIX" or "/REPO/SUFFIX";
 * the suffix, or NULL when r is not about g's repository. */
static const char *
git_suffix(const struct decoys_git *g, const char *path)
{
	size_t rl = strlen(g->repo);
	if (path[0] != '/' || strncmp(path + 1, g->repo, rl) != 0)
		return NULL;
	const char *s = path + 1 + rl;
	if (strncmp(s, ".git", 4) == 0)
		s += 4;
	return *s == '/' || *s == '\0' ? s : NULL;
}

void
decoys_git_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	const struct decoys_git *g = ctx;
	redact_register(g->token, "<token>");
	char user[128];
	const char *via = git_via(g, req, user, sizeof(user));
	const char *sfx = git_suffix(g, req->path);
	char service[1024] = "";
	http_query_get(req, "service", service, sizeof(service));
	if (via) {
		/* the kill path starts here: nothing before this datagram */
		cJSON *b = bait_fields(g->bait, via, req);
		cJSON_AddStringToObject(b, "user", user);
		cJSON_AddStringToObject(b, "repo", g->repo);
		if (*service) {
			char s[40];
			redact_sanitize(s, sizeof(s), service, strlen(service));
			cJSON_AddStringToObject(b, "service", s);
		}
		decoy_emit("bait", b);
	}
	const char *auth = via ? "decoy" :
	    http_header_get(req, "Authorization") ? "invalid" : "none";
	if (!via) {
		http_response_text(resp, 401, "text/plain", "Authentication "
		    "required\n");
		snprintf(resp->headers, sizeof(resp->headers),
		    "WWW-Authenticate: Basic realm=\"%s\"\r\n", "git");
	} else if (!sfx) {
		http_response_text(resp, 404, "text/plain", "Repository not "
		    "found.\n");
	} else if (strcmp(sfx, "/info/refs") == 0 &&
	    strcmp(service, "git-upload-pack") == 0 &&
	    strcmp(req->method, "GET") == 0) {
		/* a version 0 advertisement (a v2 client falls back to it) */
		char hx[65];
		sha256_hex(g->repo, strlen(g->repo), hx);
		hx[40] = '\0';
		struct sbuf b = { 0 };
		pkt_line(&b, "# service=git-upload-pack\n", 26);
		sb_str(&b, "0000");
		char *l1 = xasprintf("%s HEAD%cmulti_ack thin-pack side-band "
		    "side-band-64k ofs-delta shallow no-progress include-tag "
		    "multi_ack_detailed symref=HEAD:refs/heads/main "
		    "agent=git/2.43.0\n", hx, '\0');
		size_t l1n = 41 + 5 + strlen(l1 + 46);
		pkt_line(&b, l1, l1n);
		free(l1);
		char *l2 = xasprintf("%s refs/heads/main\n", hx);
		pkt_line(&b, l2, strlen(l2));
		free(l2);
		sb_str(&b, "0000");
		free(resp->body);
		resp->status = 200;
		resp->ctype = "application/x-git-upload-pack-advertisement";
		resp->body = b.p;
		resp->len = b.len;
		snprintf(resp->headers, sizeof(resp->headers),
		    "Cache-Control: no-cache\r\n");
	} else if (strcmp(sfx, "/info/refs") == 0 &&
	    strcmp(service, "git-receive-pack") == 0) {
		http_response_text(resp, 403, "text/plain", "Write access to "
		    "repository not granted.\n");
	} else if (strcmp(sfx, "/git-upload-pack") == 0 &&
	    strcmp(req->method, "POST") == 0) {
		struct sbuf b = { 0 };
		static const char err[] = "ERR upload-pack: repository is being "
		    "migrated, try again later\n";
		pkt_line(&b, err, sizeof(err) - 1);
		free(resp->body);
		resp->status = 200;
		resp->ctype = "application/x-git-upload-pack-result";
		resp->body = b.p;
		resp->len = b.len;
	} else {
		http_response_text(resp, 404, "text/plain", "Not found\n");
	}
	request_done("git", req, resp, auth, via, *service ? "git_service" : NULL,
	    service);
}

/* ---- MCP (Streamable HTTP) ----------------------------------------- */

#define MCP_HARMLESS "ping"
#define MCP_HARMLESS_ALT "server_time"

static const char *const mcp_versions[] = {
	"2025-06-18", "2025-03-26", "2024-11-05",
};

/* The harmless tool's name (never the decoy's). */
static const char *
mcp_harmless(const struct decoys_mcp *m)
{
	return strcmp(m->tool, MCP_HARMLESS) == 0 ? MCP_HARMLESS_ALT :
	    MCP_HARMLESS;
}

/* A JSON-RPC answer {jsonrpc, id, result|error} (id copied, or null). */
static void
rpc_answer(struct http_response *resp, int status, const cJSON *id,
    cJSON *result, int code, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	if (id && (cJSON_IsString(id) || cJSON_IsNumber(id)))
		cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, 1));
	else
		cJSON_AddNullToObject(o, "id");
	if (result) {
		cJSON_AddItemToObject(o, "result", result);
	} else {
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		cJSON_AddNumberToObject(e, "code", code);
		cJSON_AddStringToObject(e, "message", msg);
	}
	http_response_json(resp, status, o);
}

/* tools/list's result.  Caller deletes. */
static cJSON *
mcp_tools(const struct decoys_mcp *m)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(r, "tools");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "name", m->tool);
	cJSON_AddStringToObject(t, "description", m->tool_text);
	cJSON *s = cJSON_AddObjectToObject(t, "inputSchema");
	cJSON_AddStringToObject(s, "type", "object");
	cJSON *pr = cJSON_AddObjectToObject(s, "properties");
	cJSON *q = cJSON_AddObjectToObject(pr, "target");
	cJSON_AddStringToObject(q, "type", "string");
	cJSON_AddStringToObject(q, "description", "what to act on (optional)");
	cJSON_AddItemToArray(arr, t);
	t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "name", mcp_harmless(m));
	cJSON_AddStringToObject(t, "description", "Check that the server is "
	    "reachable; returns the server time.");
	s = cJSON_AddObjectToObject(t, "inputSchema");
	cJSON_AddStringToObject(s, "type", "object");
	cJSON_AddObjectToObject(s, "properties");
	cJSON_AddItemToArray(arr, t);
	return r;
}

/* A tools/call result holding text.  Caller deletes. */
static cJSON *
mcp_text_result(const char *text)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *c = cJSON_AddArrayToObject(r, "content");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "type", "text");
	cJSON_AddStringToObject(t, "text", text);
	cJSON_AddItemToArray(c, t);
	cJSON_AddBoolToObject(r, "isError", false);
	return r;
}

/* What mcp_attempt found: does a request try the decoy tool, and how. */
struct mcp_attempt {
	bool hit;                       /* a tools/call of the decoy tool */
	bool batch;                     /* ... inside a batch (an array) */
	bool notification;              /* ... without an id */
	bool dup;                       /* ... in an object with repeated keys */
	const cJSON *args;              /* its arguments (one copy), or NULL */
};

/* Does o hold a key of the JSON-RPC envelope or of its params (jsonrpc,
 * method, id, params, name, arguments) more than once, at o's level or in
 * any params object?  (cJSON keeps every copy; consumers differ on which
 * one wins, so a repeated key is never resolved, only refused.) */
static bool
mcp_dup_keys(const cJSON *o)
{
	static const char *const keys[] = { "jsonrpc", "method", "id", "params",
		"name", "arguments" };
	const cJSON *levels[1 + 16];
	size_t nl = 0;
	levels[nl++] = o;
	const cJSON *it;
	cJSON_ArrayForEach(it, o) {
		if (it->string && strcmp(it->string, "params") == 0 &&
		    cJSON_IsObject(it)) {
			if (nl == sizeof(levels) / sizeof(levels[0]))
				return true;    /* that many params: repeated */
			levels[nl++] = it;
		}
	}
	for (size_t l = 0; l < nl; l++)
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			unsigned n = 0;
			cJSON_ArrayForEach(it, levels[l])
				n += it->string && strcmp(it->string, keys[k]) == 0;
			if (n > 1)
				return true;
		}
	return false;
}

/* Is o an object one of whose "method" copies is "tools/call" and one of
 * whose "params" copies has a "name" copy equal to tool?  Every copy of a
 * repeated key is looked at (fail closed: whichever copy a JSON stack
 * would take, the agent tried the tool).  a filled when so. */
static bool
mcp_obj_attempt(const cJSON *o, const char *tool, struct mcp_attempt *a)
{
	if (!cJSON_IsObject(o))
		return false;
	bool call = false, has_id = false;
	const cJSON *it, *args = NULL;
	cJSON_ArrayForEach(it, o) {
		if (!it->string)
			continue;
		if (strcmp(it->string, "method") == 0 && cJSON_IsString(it) &&
		    strcmp(it->valuestring, "tools/call") == 0)
			call = true;
		if (strcmp(it->string, "id") == 0)
			has_id = true;
	}
	if (!call)
		return false;
	bool named = false;
	cJSON_ArrayForEach(it, o) {
		if (!it->string || strcmp(it->string, "params") != 0 ||
		    !cJSON_IsObject(it))
			continue;
		const cJSON *p, *pa = NULL;
		bool here = false;
		cJSON_ArrayForEach(p, it) {
			if (!p->string)
				continue;
			if (strcmp(p->string, "name") == 0 && cJSON_IsString(p) &&
			    strcmp(p->valuestring, tool) == 0)
				here = true;
			if (strcmp(p->string, "arguments") == 0 && !pa)
				pa = p;
		}
		if (here && !named) {
			named = true;
			args = pa;
		}
	}
	if (!named)
		return false;
	a->hit = true;
	a->notification = !has_id;
	a->dup = mcp_dup_keys(o);
	a->args = args;
	return true;
}

/*
 * The one place that decides whether request j (parsed body) attempts the
 * decoy tool: j itself, or any element of a batch (an array; JSON-RPC
 * batches are flat, nested arrays are not looked into).  Whatever the
 * answer will be (202 for a notification, -32600 for repeated keys or a
 * batch, an error for a bad id or version), an attempt is the bait.
 */
static bool
mcp_attempt(const cJSON *j, const char *tool, struct mcp_attempt *a)
{
	memset(a, 0, sizeof(*a));
	if (!tool || !*tool)
		return false;
	if (!cJSON_IsArray(j))
		return mcp_obj_attempt(j, tool, a);
	const cJSON *el;
	cJSON_ArrayForEach(el, j)
		if (mcp_obj_attempt(el, tool, a)) {
			a->batch = true;
			return true;
		}
	return false;
}

void
decoys_mcp_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	const struct decoys_mcp *m = ctx;
	const char *via = NULL, *auth = "none";
	char method[64] = "";
	if (strcmp(req->path, m->path) != 0) {
		http_response_text(resp, 404, "text/plain", "Not Found\n");
		goto done;
	}
	if (strcmp(req->method, "POST") != 0) {
		http_response_text(resp, 405, "text/plain", "Method Not Allowed\n");
		snprintf(resp->headers, sizeof(resp->headers), "Allow: POST\r\n");
		goto done;
	}
	cJSON *j = cJSON_ParseWithLength(req->body ? req->body : "",
	    req->body_len);
	if (!j) {
		rpc_answer(resp, 400, NULL, NULL, -32700, "Parse error");
		goto done;
	}
	struct mcp_attempt at;
	if (mcp_attempt(j, m->tool, &at)) {
		/* the decoy tool is called: bait before anything, however the
		 * call is shaped and whatever the answer */
		via = "mcp tools/call";
		auth = "decoy";
		cJSON *b = bait_fields(m->bait, via, req);
		cJSON_AddStringToObject(b, "tool", m->tool);
		char *a = at.args ? cJSON_PrintUnformatted(at.args) : NULL;
		if (a) {
			char *t = redact_trunc(a, 512);
			cJSON_AddStringToObject(b, "arguments", t);
			free(t);
			free(a);
		}
		const char *sid = http_header_get(req, "Mcp-Session-Id");
		if (sid) {
			char s[80];
			redact_sanitize(s, sizeof(s), sid, strlen(sid));
			cJSON_AddStringToObject(b, "session", s);
		}
		if (at.notification)
			cJSON_AddBoolToObject(b, "notification", true);
		if (at.batch)
			cJSON_AddBoolToObject(b, "batch", true);
		if (at.dup)
			cJSON_AddBoolToObject(b, "duplicate_keys", true);
		decoy_emit("bait", b);
	}
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "jsonrpc");
	const cJSON *meth = cJSON_GetObjectItemCaseSensitive(j, "method");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "params");
	/* a batch, or repeated keys: refused (nothing is carried out) */
	if (!cJSON_IsObject(j) || mcp_dup_keys(j) || !cJSON_IsString(ver) ||
	    strcmp(ver->valuestring, "2.0") != 0 || !cJSON_IsString(meth) ||
	    (id && !cJSON_IsString(id) && !cJSON_IsNumber(id))) {
		rpc_answer(resp, 400, NULL, NULL, -32600, "Invalid Request");
		cJSON_Delete(j);
		goto done;
	}
	redact_sanitize(method, sizeof(method), meth->valuestring,
	    strlen(meth->valuestring));
	if (!id) {
		/* a notification (notifications/initialized, ...): accepted */
		free(resp->body);
		resp->body = NULL;
		resp->len = 0;
		resp->status = 202;
		resp->ctype = "application/json";
		cJSON_Delete(j);
		goto done;
	}
	const char *mn = meth->valuestring;
	if (strcmp(mn, "initialize") == 0) {
		const cJSON *pv = cJSON_IsObject(params) ?
		    cJSON_GetObjectItemCaseSensitive(params, "protocolVersion") :
		    NULL;
		const char *v = mcp_versions[0];
		for (size_t i = 0; cJSON_IsString(pv) &&
		    i < sizeof(mcp_versions) / sizeof(mcp_versions[0]); i++)
			if (strcmp(pv->valuestring, mcp_versions[i]) == 0)
				v = mcp_versions[i];
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "protocolVersion", v);
		cJSON *cap = cJSON_AddObjectToObject(r, "capabilities");
		cJSON *tc = cJSON_AddObjectToObject(cap, "tools");
		cJSON_AddBoolToObject(tc, "listChanged", false);
		cJSON *si = cJSON_AddObjectToObject(r, "serverInfo");
		cJSON_AddStringToObject(si, "name", m->server);
		cJSON_AddStringToObject(si, "version", "1.4.2");
		rpc_answer(resp, 200, id, r, 0, NULL);
		unsigned char b[16];
		randombytes_buf(b, sizeof(b));
		char sid[33];
		util_hex(b, sizeof(b), sid);
		snprintf(resp->headers, sizeof(resp->headers),
		    "Mcp-Session-Id: %s\r\n", sid);
	} else if (strcmp(mn, "ping") == 0) {
		rpc_answer(resp, 200, id, cJSON_CreateObject(), 0, NULL);
	} else if (strcmp(mn, "tools/list") == 0) {
		rpc_answer(resp, 200, id, mcp_tools(m), 0, NULL);
	} else if (strcmp(mn, "tools/call") == 0) {
		const cJSON *name = cJSON_IsObject(params) ?
		    cJSON_GetObjectItemCaseSensitive(params, "name") : NULL;
		if (!cJSON_IsString(name)) {
			rpc_answer(resp, 200, id, NULL, -32602, "Invalid params: "
			    "name is required");
		} else if (strcmp(name->valuestring, m->tool) == 0) {
			/* the decoy tool: its bait went out above */
			rpc_answer(resp, 200, id, mcp_text_result("Request queued "
			    "(job 4127). The result will be posted to the "
			    "requester when the job completes."), 0, NULL);
		} else if (strcmp(name->valuestring, mcp_harmless(m)) == 0) {
			char now[40];
			time_t t = time(NULL);
			struct tm tm;
			gmtime_r(&t, &tm);
			strftime(now, sizeof(now), "pong %Y-%m-%dT%H:%M:%SZ", &tm);
			rpc_answer(resp, 200, id, mcp_text_result(now), 0, NULL);
		} else {
			char n[80], *msg;
			util_sanitize(n, sizeof(n), name->valuestring,
			    strlen(name->valuestring), false);
			msg = xasprintf("Unknown tool: %s", n);
			rpc_answer(resp, 200, id, NULL, -32602, msg);
			free(msg);
		}
	} else {
		rpc_answer(resp, 200, id, NULL, -32601, "Method not found");
	}
	cJSON_Delete(j);
done:
	request_done("mcp", req, resp, auth, via, *method ? "rpc" : NULL,
	    method);
}

/* ---- the process --------------------------------------------------- */

/* Start the SSH decoy (ssh.c) on hostport with SSH_PUBKEY, SSH_BAIT and
 * SSH_BANNER (optional).  0 or an exit code (message printed). */
static int
ssh_start(const char *hostport)
{
	static struct sshd_decoy cfg;
	struct errbuf e = { 0 };

	cfg.listen = hostport;
	cfg.bait = util_env_or("SSH_BAIT", "ssh-key");
	cfg.pubkey = util_env_or("SSH_PUBKEY", "");
	cfg.banner = getenv("SSH_BANNER");
	if (!*cfg.pubkey) {
		fprintf(stderr, "decoys: SSH_LISTEN set without SSH_PUBKEY\n");
		return EXIT_USAGE;
	}
	if (sshd_decoy_start(&cfg, &e) != 0) {
		fprintf(stderr, "decoys: ssh: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	printf("decoys: ssh listening on %s\n", hostport);
	fflush(stdout);
	return 0;
}

struct listener {
	struct http_server srv;
	pthread_t t;
};

/* A listener's accept loop (returns when the socket fails). */
static void *
serve_thread(void *arg)
{
	struct listener *l = arg;
	http_serve(&l->srv);
	return NULL;
}

/* Listen on hostport and serve h(ctx) on a thread named name.  0 or -1
 * (message printed). */
static int
start_listener(struct listener *l, const char *hostport, const char *name,
    http_handler_fn h, void *ctx)
{
	struct errbuf e = { 0 };
	int fd = http_listen_tcp(hostport, &e);
	if (fd < 0) {
		fprintf(stderr, "decoys: %s: %s\n", name, e.msg);
		return -1;
	}
	l->srv.fd = fd;
	l->srv.handler = h;
	l->srv.ctx = ctx;
	l->srv.max_conns = SERVICE_CONNS;
	l->srv.max_per_remote = SERVICE_PER_REMOTE;
	l->srv.name = name;
	if (pthread_create(&l->t, NULL, serve_thread, l) != 0) {
		fprintf(stderr, "decoys: %s: cannot start a thread\n", name);
		return -1;
	}
	printf("decoys: %s listening on %s\n", name, hostport);
	fflush(stdout);
	return 0;
}

int
decoys_main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (sodium_init() < 0) {
		fprintf(stderr, "decoys: libsodium init failed\n");
		return EXIT_INTERNAL;
	}
	static struct decoys_cloud cloud;
	static struct decoys_git git;
	static struct decoys_mcp mcp;
	static struct listener ls[3];
	const char *cl = util_env_or("CLOUD_LISTEN", "");
	const char *gl = util_env_or("GIT_LISTEN", "");
	const char *ml = util_env_or("MCP_LISTEN", "");
	const char *sl = util_env_or("SSH_LISTEN", "");
	if (!*cl && !*gl && !*ml && !*sl) {
		fprintf(stderr, "decoys: none of CLOUD_LISTEN, GIT_LISTEN, "
		    "MCP_LISTEN, SSH_LISTEN is set\n");
		return EXIT_USAGE;
	}
	cloud.key_id = util_env_or("CLOUD_KEY_ID", "");
	cloud.secret = util_env_or("CLOUD_SECRET", "");
	cloud.bait = util_env_or("CLOUD_BAIT", "cloud-credentials");
	cloud.role = util_env_or("CLOUD_ROLE", "ops-admin");
	git.user = util_env_or("GIT_USER", "git");
	git.token = util_env_or("GIT_TOKEN", "");
	git.repo = util_env_or("GIT_REPO", "platform/deploy");
	git.bait = util_env_or("GIT_BAIT", "git-credential");
	mcp.path = util_env_or("MCP_PATH", "/mcp");
	mcp.tool = util_env_or("MCP_TOOL", "run_task");
	mcp.tool_text = util_env_or("MCP_TOOL_TEXT", "Run a task.");
	mcp.bait = util_env_or("MCP_BAIT", "mcp-server");
	mcp.server = util_env_or("MCP_SERVER", "internal-tools");
	if ((*cl && (!*cloud.key_id || !*cloud.secret)) || (*gl && !*git.token) ||
	    (*ml && (mcp.path[0] != '/' || !*mcp.tool))) {
		fprintf(stderr, "decoys: CLOUD_KEY_ID/CLOUD_SECRET, GIT_TOKEN or "
		    "MCP_PATH/MCP_TOOL missing for a listener that is set\n");
		return EXIT_USAGE;
	}
	redact_register(git.token, "<token>");
	redact_register(cloud.secret, "<secret>");
	sensor_init("decoys");
	int n = 0;
	if (*cl && start_listener(&ls[n++], cl, "cloud", decoys_cloud_handle,
	    &cloud) < 0)
		return EXIT_INTERNAL;
	if (*gl && start_listener(&ls[n++], gl, "git", decoys_git_handle,
	    &git) < 0)
		return EXIT_INTERNAL;
	if (*ml && start_listener(&ls[n++], ml, "mcp", decoys_mcp_handle,
	    &mcp) < 0)
		return EXIT_INTERNAL;
	if (*sl) {
		int rc = ssh_start(sl);
		if (rc != 0)
			return rc;
	}
	printf("decoys up\n");
	fflush(stdout);
	/* serve until a listener fails */
	for (int i = 0; i < n; i++)
		pthread_join(ls[i].t, NULL);
	if (n == 0)
		for (;;)
			pause();
	return EXIT_INTERNAL;
}
