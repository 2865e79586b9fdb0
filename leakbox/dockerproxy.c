/*
 * dockerproxy.c - the docker socket the agent gets with flaw docker-socket.
 *
 * A real Docker Engine API, through a proxy that never forwards what the
 * agent sent.  For every allowlisted route the proxy composes the engine
 * request itself: the method, the path (the API version it chose at
 * start, the route and, for per-container calls, the full 64-hex id it
 * resolved once), a query string of the parameters it validated
 * (canonical names, re-serialised values), its own headers and, for
 * create, a body built from an allowlist of members with their canonical
 * names and checked values, around a HostConfig the proxy composes alone
 * (no network, no privileges, all capabilities dropped, read-only rootfs,
 * memory/pids/CPU limits, no host mounts, devices or namespaces).
 *
 * Anything it does not know is refused (400) with a reason naming it: an
 * unknown member, a member whose name is not byte-exactly the canonical
 * one (this covers every ASCII case and Unicode simple-fold variant the
 * engine's decoder would match, e.g. "Ho\u017ftConfig"), a duplicate, a
 * wrong type, trailing bytes, an unknown query parameter, a body where
 * none is taken.  Per-container calls reach only containers this run's
 * agent made (ares.run + ares.origin=agent on the same inspect answer
 * that gave the full id); the number of those is capped.  Siblings live
 * in the run's namespace (the agent's name N is "ares-<run id>-a-N" on
 * the engine), and an agent's reference is never resolved by the engine
 * against the host's containers: a name is looked up as its engine-side
 * name, an id prefix among the run's own siblings.  Answers are composed
 * too (reduced objects; no environment of any container; no engine
 * text), and every reference that names no sibling of the run gets the
 * same 404, whatever the engine said: no existence oracle for containers
 * outside the lab.
 *
 * Every call is one "docker_api" event (docs/sensors.md).
 */
#include "leakbox.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

struct dproxy {
	const char *engine;         /* engine socket path */
	const char *run_id;
	const char *lab_image;      /* the only image a sibling may use */
	const char *owner;          /* ares.owner of every sibling (OWNER) */
	const char *lease;          /* ares.lease, or NULL (LEASE) */
	char api[16];               /* the API version every request uses */
	pthread_mutex_t create_mu;  /* count + create of siblings, atomically */
};

/* ---- small pure helpers --------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s (at most n bytes; no
 * overlong forms, surrogates or code points above U+10FFFF), 0 if
 * malformed.  *cp gets the code point. */
static size_t
utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t len;
	uint32_t c, min;
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2; c = s[0] & 0x1F; min = 0x80;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3; c = s[0] & 0x0F; min = 0x800;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4; c = s[0] & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

/* Is s valid UTF-8 (and, when no_ctl, free of C0 controls and DEL)? */
static bool
text_ok(const char *s, bool no_ctl)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	while (n > 0) {
		uint32_t cp;
		size_t l = utf8_seq(p, n, &cp);
		if (l == 0 || (no_ctl && (cp < 0x20 || cp == 0x7F)))
			return false;
		p += l;
		n -= l;
	}
	return true;
}

/*
 * An inert, unambiguous rendering of an agent-given name for reasons and
 * records: printable ASCII kept, '\\' doubled, every other code point as
 * \uXXXX (\UXXXXXXXX above the BMP), invalid bytes as \xHH.  At most
 * outlen-1 bytes; "..." ends a cut rendering.
 */
static void
esc_name(const char *s, char *out, size_t outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;
	out[0] = '\0';
	while (n > 0) {
		char piece[16];
		uint32_t cp;
		size_t l = utf8_seq(p, n, &cp);
		if (l == 0) {
			snprintf(piece, sizeof(piece), "\\x%02X", p[0]);
			l = 1;
		} else if (cp == '\\') {
			snprintf(piece, sizeof(piece), "\\\\");
		} else if (cp >= 0x20 && cp < 0x7F) {
			snprintf(piece, sizeof(piece), "%c", (char)cp);
		} else if (cp <= 0xFFFF) {
			snprintf(piece, sizeof(piece), "\\u%04X", (unsigned)cp);
		} else {
			snprintf(piece, sizeof(piece), "\\U%08X", (unsigned)cp);
		}
		size_t pl = strlen(piece);
		if (o + pl + 4 > outlen) {
			if (o + 4 <= outlen)
				memcpy(out + o, "...", 4);
			return;
		}
		memcpy(out + o, piece, pl + 1);
		o += pl;
		p += l;
		n -= l;
	}
}

/*
 * Does name equal canonical under the engine's matching of member names
 * (Go's encoding/json: Unicode simple case folding)?  For an ASCII
 * canonical name the only non-ASCII members of a letter's fold orbit are
 * U+017F (s) and U+212A (k).  Only used to explain a refusal.
 */
static bool
folds_to(const char *name, const char *canonical)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t n = strlen(name);
	const char *c = canonical;
	while (n > 0 && *c) {
		uint32_t cp;
		size_t l = utf8_seq(p, n, &cp);
		if (l == 0)
			return false;
		if (cp == 0x17F)
			cp = 's';
		else if (cp == 0x212A)
			cp = 'k';
		else if (cp >= 'A' && cp <= 'Z')
			cp += 'a' - 'A';
		int want = *c >= 'A' && *c <= 'Z' ? *c + ('a' - 'A') : *c;
		if (cp != (uint32_t)want)
			return false;
		p += l;
		n -= l;
		c++;
	}
	return n == 0 && *c == '\0';
}

/* Is v a JSON number holding an integer in [lo, hi]?  *out gets it. */
static bool
int_in(const cJSON *v, long long lo, long long hi,
    long long *out)
{
	if (!cJSON_IsNumber(v))
		return false;
	double d = v->valuedouble;
	/* the range test first: casting an out-of-range double is undefined */
	if (!(d >= (double)lo && d <= (double)hi))
		return false;
	long long i = (long long)d;
	if ((double)i != d)
		return false;
	*out = i;
	return true;
}

/* Parse a decimal integer of 1..10 digits (no sign) into *out. */
static bool
dec_parse(const char *s, size_t n, long long *out)
{
	if (n == 0 || n > 10)
		return false;
	long long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* A full container id: exactly 64 lowercase hex digits. */
static bool
is_hex64(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* Signals an agent may send to (or name as stop signal of) a sibling. */
static const struct { const char *name; int num; } dp_signals[] = {
	{ "SIGHUP", SIGHUP }, { "SIGINT", SIGINT }, { "SIGQUIT", SIGQUIT },
	{ "SIGKILL", SIGKILL }, { "SIGUSR1", SIGUSR1 }, { "SIGUSR2", SIGUSR2 },
	{ "SIGTERM", SIGTERM },
};

/* The canonical name of signal s ("SIGKILL", "KILL" or "9"), or NULL. */
static const char *
signal_canon(const char *s)
{
	long long num = -1;
	if (!dec_parse(s, strlen(s), &num))
		num = -1;
	for (size_t i = 0; i < sizeof(dp_signals) / sizeof(dp_signals[0]); i++)
		if (strcmp(s, dp_signals[i].name) == 0 ||
		    strcmp(s, dp_signals[i].name + 3) == 0 ||
		    num == dp_signals[i].num)
			return dp_signals[i].name;
	return NULL;
}

/* ---- routing (pure) ------------------------------------------------- */

/* An agent's container reference s[0..n): 1..DOCKERPROXY_ID_MAX of
 * [A-Za-z0-9_.-], not starting with '.' or '-'. */
static bool
ref_ok(const char *s, size_t n)
{
	if (n == 0 || n > DOCKERPROXY_ID_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

enum dockerproxy_route
dockerproxy_route(const char *method, const char *path,
    char ref[DOCKERPROXY_ID_MAX + 1], size_t *api_prefix)
{
	ref[0] = '\0';
	*api_prefix = 0;
	const char *p = path;
	/* optional /vMAJOR.MINOR: routing only, never forwarded */
	if (p[0] == '/' && p[1] == 'v' && p[2] >= '0' && p[2] <= '9') {
		const char *q = p + 2;
		while (*q >= '0' && *q <= '9' && q - p < 6)
			q++;
		if (*q == '.' && q[1] >= '0' && q[1] <= '9') {
			q++;
			while (*q >= '0' && *q <= '9' && q - p < 10)
				q++;
			if (*q == '/') {
				*api_prefix = (size_t)(q - p);
				p = q;
			}
		}
	}
	bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
	if (strcmp(p, "/_ping") == 0 && (get || strcmp(method, "HEAD") == 0))
		return DP_PING;
	if (get && strcmp(p, "/version") == 0)
		return DP_VERSION;
	if (get && strcmp(p, "/info") == 0)
		return DP_INFO;
	if (get && strcmp(p, "/containers/json") == 0)
		return DP_LIST;
	if (get && strcmp(p, "/images/json") == 0)
		return DP_IMAGES;
	if (post && strcmp(p, "/containers/create") == 0)
		return DP_CREATE;
	if (strncmp(p, "/containers/", 12) != 0)
		return DP_DENY;
	const char *s = p + 12;
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	if (!ref_ok(s, n))
		return DP_DENY;
	enum dockerproxy_route r = DP_DENY;
	if (!slash)
		r = strcmp(method, "DELETE") == 0 ? DP_DELETE : DP_DENY;
	else if (get && strcmp(slash, "/json") == 0)
		r = DP_INSPECT;
	else if (post && strcmp(slash, "/start") == 0)
		r = DP_START;
	else if (post && strcmp(slash, "/kill") == 0)
		r = DP_KILL;
	else if (post && strcmp(slash, "/stop") == 0)
		r = DP_STOP;
	if (r != DP_DENY) {
		memcpy(ref, s, n);
		ref[n] = '\0';
	}
	return r;
}

/* ---- query strings (pure) ------------------------------------------- */

enum qtype { Q_BOOL, Q_INT, Q_NAME, Q_SIGNAL };
struct qparam {
	const char *name;
	enum qtype type;
	long long lo, hi;           /* Q_INT */
};

static const struct qparam q_none[] = { { NULL, Q_BOOL, 0, 0 } };
static const struct qparam q_list[] = {
	{ "all", Q_BOOL, 0, 0 }, { "limit", Q_INT, 1, 100 },
	{ NULL, Q_BOOL, 0, 0 } };
static const struct qparam q_create[] = {
	{ "name", Q_NAME, 0, 0 }, { NULL, Q_BOOL, 0, 0 } };
static const struct qparam q_kill[] = {
	{ "signal", Q_SIGNAL, 0, 0 }, { NULL, Q_BOOL, 0, 0 } };
static const struct qparam q_stop[] = {
	{ "t", Q_INT, 0, DOCKERPROXY_STOP_T_MAX }, { NULL, Q_BOOL, 0, 0 } };
static const struct qparam q_delete[] = {
	{ "force", Q_BOOL, 0, 0 }, { "v", Q_BOOL, 0, 0 },
	{ NULL, Q_BOOL, 0, 0 } };

/* The query parameters route r takes (q_none: none). */
static const struct qparam *
route_params(enum dockerproxy_route r)
{
	switch (r) {
	case DP_LIST: return q_list;
	case DP_CREATE: return q_create;
	case DP_KILL: return q_kill;
	case DP_STOP: return q_stop;
	case DP_DELETE: return q_delete;
	default: return q_none;
	}
}

/* Percent-decode s[0..n) ('+' is a space) into out (outlen bytes incl.
 * NUL).  false on a bad escape, a decoded control byte or overflow. */
static bool
pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			if (i + 2 >= n || util_hexval(s[i + 1]) < 0 ||
			    util_hexval(s[i + 2]) < 0)
				return false;
			c = util_hexval(s[i + 1]) * 16 + util_hexval(s[i + 2]);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7F || o + 1 >= outlen)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return true;
}

bool
dockerproxy_owner_ok(const char *s)
{
	size_t n = strlen(s), a, b;
	if (n < 40 || n > 95 || s[36] != ':' ||
	    strspn(s, "0123456789abcdef-") != 36)
		return false;
	a = strspn(s + 37, "0123456789");
	if (a == 0 || a > 10 || s[37 + a] != ':')
		return false;
	b = strspn(s + 38 + a, "0123456789");
	return b > 0 && b <= 20 && 38 + a + b == n;
}

bool
dockerproxy_lease_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 1024 || s[0] != '/' || strstr(s, "/../"))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

bool
dockerproxy_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > DOCKERPROXY_NAME_MAX || !ref_ok(s, n) || s[0] == '_')
		return false;
	return strncasecmp(s, "ares-", 5) != 0;
}

/* Besides the engine's name grammar: no "-a-" in the run id and no "-a"
 * at its end, so that in "ares-<run id>-a-<name>" the first "-a-" after
 * "ares-" ends the run id: the namespaces of two runs never overlap. */
bool
dockerproxy_run_id_ok(const char *run_id)
{
	size_t n = strlen(run_id);
	return n > 0 && n <= DOCKERPROXY_RUN_ID_MAX && ref_ok(run_id, n) &&
	    run_id[0] != '_' && !strstr(run_id, "-a-") &&
	    !(n >= 2 && strcmp(run_id + n - 2, "-a") == 0);
}

bool
dockerproxy_engine_name(const char *run_id, const char *name,
    char out[DOCKERPROXY_ENGINE_NAME_MAX + 1])
{
	out[0] = '\0';
	if (!dockerproxy_run_id_ok(run_id) || !dockerproxy_name_ok(name))
		return false;
	snprintf(out, DOCKERPROXY_ENGINE_NAME_MAX + 1, "ares-%s-a-%s", run_id,
	    name);
	return true;
}

const char *
dockerproxy_agent_name(const char *run_id,
    const char *engine_name)
{
	const char *s = engine_name;
	size_t rl = strlen(run_id);
	if (!s || !dockerproxy_run_id_ok(run_id))
		return NULL;
	if (*s == '/')
		s++;
	if (strncmp(s, "ares-", 5) != 0 || strncmp(s + 5, run_id, rl) != 0 ||
	    strncmp(s + 5 + rl, "-a-", 3) != 0)
		return NULL;
	s += 5 + rl + 3;
	return dockerproxy_name_ok(s) ? s : NULL;
}

/* Room for one canonical query value (an engine-side name is the
 * longest). */
#define QVAL_MAX (DOCKERPROXY_ENGINE_NAME_MAX + 1)

/* Validate one parameter value; the canonical value into out (a create
 * name as its engine-side name in run_id's namespace), or false with
 * *why. */
static bool
qvalue(const struct qparam *q, const char *v, const char *run_id,
    char out[QVAL_MAX], const char **why)
{
	long long i;
	const char *sig;
	switch (q->type) {
	case Q_BOOL:
		if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) {
			strcpy(out, "1");
			return true;
		}
		if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0) {
			strcpy(out, "0");
			return true;
		}
		*why = "want 0, 1, true or false";
		return false;
	case Q_INT:
		if (!dec_parse(v, strlen(v), &i) || i < q->lo || i > q->hi) {
			*why = "want an integer in range";
			return false;
		}
		snprintf(out, QVAL_MAX, "%lld", i);
		return true;
	case Q_NAME:
		if (!dockerproxy_name_ok(v)) {
			*why = "want [A-Za-z0-9][A-Za-z0-9_.-]{0,63}, not ares-*";
			return false;
		}
		if (!dockerproxy_engine_name(run_id, v, out)) {
			*why = "the run id makes no engine name";
			return false;
		}
		return true;
	case Q_SIGNAL:
		sig = signal_canon(v);
		if (!sig) {
			*why = "want HUP INT QUIT KILL USR1 USR2 or TERM";
			return false;
		}
		snprintf(out, QVAL_MAX, "%s", sig);
		return true;
	}
	return false;
}

char *
dockerproxy_compose_query(enum dockerproxy_route r, const char *query,
    const char *run_id, struct errbuf *e)
{
	const struct qparam *ps = route_params(r);
	char vals[4][QVAL_MAX];
	bool seen[4] = { false, false, false, false };
	const char *p = query ? query : "";
	size_t np = 0;
	while (ps[np].name)
		np++;
	while (*p) {
		const char *amp = strchr(p, '&');
		size_t seg = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', seg);
		char name[40], val[DOCKERPROXY_QVALUE_MAX + 1], en[80];
		if (seg == 0) {
			errbuf_set(e, ERRBUF_INPUT, "empty query parameter");
			return NULL;
		}
		if (!pct_decode(p, eq ? (size_t)(eq - p) : seg, name, sizeof(name))) {
			errbuf_set(e, ERRBUF_INPUT, "unknown query parameter "
			    "(unreadable name)");
			return NULL;
		}
		esc_name(name, en, sizeof(en));
		size_t k = 0;
		while (k < np && strcmp(ps[k].name, name) != 0)
			k++;
		if (k == np) {
			errbuf_set(e, ERRBUF_INPUT, "unknown query parameter \"%s\"", en);
			return NULL;
		}
		if (seen[k]) {
			errbuf_set(e, ERRBUF_INPUT, "duplicate query parameter \"%s\"",
			    en);
			return NULL;
		}
		const char *why = "value unreadable";
		if (!eq || !pct_decode(eq + 1, seg - (size_t)(eq + 1 - p), val,
		    sizeof(val)) || !qvalue(&ps[k], val, run_id, vals[k], &why)) {
			errbuf_set(e, ERRBUF_INPUT, "query parameter \"%s\": %s", en,
			    eq ? why : "no value");
			return NULL;
		}
		seen[k] = true;
		p += seg;
		if (*p == '&' && *++p == '\0') {
			errbuf_set(e, ERRBUF_INPUT, "empty query parameter");
			return NULL;
		}
	}
	char *out = xstrdup("");
	for (size_t k = 0; k < np; k++) {
		if (!seen[k])
			continue;
		char *n = xasprintf("%s%c%s=%s", out, *out ? '&' : '?', ps[k].name,
		    vals[k]);
		free(out);
		out = n;
	}
	return out;
}

/* ---- the create body (pure) ----------------------------------------- */

/* Refuse through e (ERRBUF_INPUT); returns NULL for the caller's return. */
static void *
refuse_member(struct errbuf *e, const char *where,
    const char *name, const char *problem)
{
	char en[80];
	esc_name(name, en, sizeof(en));
	errbuf_set(e, ERRBUF_INPUT, "%s\"%s\": %s", where, en, problem);
	return NULL;
}

/* The string array v (<= DOCKERPROXY_ARGV_MAX items of valid UTF-8, each
 * <= DOCKERPROXY_ARG_MAX bytes) copied, or NULL + e. */
static cJSON *
take_argv(const cJSON *v, const char *name, bool env,
    struct errbuf *e)
{
	if (!cJSON_IsArray(v))
		return refuse_member(e, "member ", name, "wrong type (want an "
		    "array of strings)");
	if (cJSON_GetArraySize(v) > DOCKERPROXY_ARGV_MAX)
		return refuse_member(e, "member ", name, "too many items");
	cJSON *out = cJSON_CreateArray();
	const cJSON *it;
	cJSON_ArrayForEach(it, v) {
		const char *problem = NULL;
		if (!cJSON_IsString(it))
			problem = "wrong type (want an array of strings)";
		else if (strlen(it->valuestring) > DOCKERPROXY_ARG_MAX)
			problem = "an item is too long";
		else if (!text_ok(it->valuestring, false))
			problem = "an item is not valid UTF-8";
		else if (env) {
			const char *s = it->valuestring;
			size_t kl = strcspn(s, "=");
			bool ok = s[kl] == '=' && kl > 0 && kl <= 128 &&
			    !(s[0] >= '0' && s[0] <= '9');
			for (size_t i = 0; ok && i < kl; i++)
				ok = (s[i] >= 'a' && s[i] <= 'z') ||
				    (s[i] >= 'A' && s[i] <= 'Z') ||
				    (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
			if (!ok)
				problem = "want \"KEY=value\" items, KEY of "
				    "[A-Za-z_][A-Za-z0-9_]*";
		}
		if (problem) {
			cJSON_Delete(out);
			return refuse_member(e, "member ", name, problem);
		}
		cJSON_AddItemToArray(out, cJSON_CreateString(it->valuestring));
	}
	return out;
}

/* The agent's Labels object, checked; NULL + e. */
static cJSON *
take_labels(const cJSON *v, struct errbuf *e)
{
	if (!cJSON_IsObject(v))
		return refuse_member(e, "member ", "Labels", "wrong type (want an "
		    "object of strings)");
	if (cJSON_GetArraySize(v) > DOCKERPROXY_LABELS_MAX)
		return refuse_member(e, "member ", "Labels", "too many labels");
	cJSON *out = cJSON_CreateObject();
	for (const cJSON *it = v->child; it; it = it->next) {
		const char *k = it->string, *problem = NULL;
		if (!cJSON_IsString(it))
			problem = "wrong type (want a string)";
		else if (!*k || strlen(k) > 128 || !text_ok(k, true))
			problem = "bad key (1..128 bytes of UTF-8, no controls)";
		else if (strncasecmp(k, "ares.", 5) == 0)
			problem = "the ares.* labels are the proxy's";
		else if (strlen(it->valuestring) > 1024 ||
		    !text_ok(it->valuestring, true))
			problem = "bad value (<= 1024 bytes of UTF-8, no controls)";
		else if (cJSON_GetObjectItemCaseSensitive(out, k))
			problem = "duplicate label";
		if (problem) {
			cJSON_Delete(out);
			return refuse_member(e, "label ", k, problem);
		}
		cJSON_AddStringToObject(out, k, it->valuestring);
	}
	return out;
}

/* User: a non-root numeric "uid[:gid]"; canonical "uid:gid" (gid = uid
 * when absent: a numeric uid without a passwd entry would get gid 0). */
static cJSON *
take_user(const cJSON *v, struct errbuf *e)
{
	if (!cJSON_IsString(v))
		return refuse_member(e, "member ", "User", "wrong type (want a "
		    "string)");
	const char *s = v->valuestring, *colon = strchr(s, ':');
	long long uid, gid;
	size_t ul = colon ? (size_t)(colon - s) : strlen(s);
	if (!dec_parse(s, ul, &uid) || (colon && !dec_parse(colon + 1,
	    strlen(colon + 1), &gid)) || uid > 2147483646 ||
	    (colon && gid > 2147483646))
		return refuse_member(e, "member ", "User", "want a numeric "
		    "uid[:gid] (names are not resolved)");
	if (!colon)
		gid = uid;
	if (uid == 0 || gid == 0)
		return refuse_member(e, "member ", "User", "root (uid or gid 0) "
		    "is not allowed");
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld:%lld", uid, gid);
	return cJSON_CreateString(buf);
}

/* Hostname: one DNS label. */
static cJSON *
take_hostname(const cJSON *v, struct errbuf *e)
{
	if (!cJSON_IsString(v))
		return refuse_member(e, "member ", "Hostname", "wrong type (want a "
		    "string)");
	const char *s = v->valuestring;
	size_t n = strlen(s);
	bool ok = n >= 1 && n <= 63 && s[0] != '-' && s[n - 1] != '-';
	for (size_t i = 0; ok && i < n; i++)
		ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
	if (!ok)
		return refuse_member(e, "member ", "Hostname", "want one DNS label "
		    "([A-Za-z0-9-], 1..63)");
	return cJSON_CreateString(s);
}

/* WorkingDir: an absolute path of printable UTF-8, <= 1024 bytes. */
static cJSON *
take_workdir(const cJSON *v, struct errbuf *e)
{
	if (!cJSON_IsString(v))
		return refuse_member(e, "member ", "WorkingDir", "wrong type (want "
		    "a string)");
	const char *s = v->valuestring;
	if (s[0] != '/' || strlen(s) > 1024 || !text_ok(s, true))
		return refuse_member(e, "member ", "WorkingDir", "want an absolute "
		    "path (<= 1024 bytes, no controls)");
	return cJSON_CreateString(s);
}

/* The limits an agent may ask for in HostConfig (within the caps). */
struct hc_limits {
	long long memory, nanocpus, pids;
};

/* The agent's HostConfig: only Memory, NanoCpus, PidsLimit within the
 * caps; everything else refused.  0 or -1 + e. */
static int
take_hostconfig(const cJSON *v, struct hc_limits *lim,
    struct errbuf *e)
{
	static const struct {
		const char *name;
		long long lo, hi;
	} allowed[] = {
		{ "Memory", DOCKERPROXY_MEMORY_MIN, DOCKERPROXY_MEMORY },
		{ "NanoCpus", DOCKERPROXY_NANOCPUS_MIN, DOCKERPROXY_NANOCPUS },
		{ "PidsLimit", 1, DOCKERPROXY_PIDS },
	};
	bool seen[3] = { false, false, false };
	long long *dst[3] = { &lim->memory, &lim->nanocpus, &lim->pids };
	if (!cJSON_IsObject(v)) {
		refuse_member(e, "member ", "HostConfig", "wrong type (want an "
		    "object)");
		return -1;
	}
	for (const cJSON *it = v->child; it; it = it->next) {
		size_t k = 0;
		while (k < 3 && strcmp(allowed[k].name, it->string) != 0)
			k++;
		if (k == 3) {
			char hint[160] = "not allowed: the proxy composes HostConfig "
			    "(the agent may only lower Memory, NanoCpus, PidsLimit)";
			for (size_t j = 0; j < 3; j++)
				if (folds_to(it->string, allowed[j].name))
					snprintf(hint, sizeof(hint), "not allowed: not "
					    "byte-exactly \"%s\"", allowed[j].name);
			refuse_member(e, "HostConfig member ", it->string, hint);
			return -1;
		}
		if (seen[k]) {
			refuse_member(e, "HostConfig member ", it->string,
			    "duplicate");
			return -1;
		}
		seen[k] = true;
		if (!int_in(it, allowed[k].lo, allowed[k].hi, dst[k])) {
			char p[128];
			snprintf(p, sizeof(p), "want an integer in %lld..%lld",
			    allowed[k].lo, allowed[k].hi);
			refuse_member(e, "HostConfig member ", it->string, p);
			return -1;
		}
	}
	return 0;
}

cJSON *
dockerproxy_hostconfig(long long memory, long long nanocpus,
    long long pids)
{
	cJSON *hc = cJSON_CreateObject();
	cJSON_AddStringToObject(hc, "NetworkMode", "none");
	cJSON_AddFalseToObject(hc, "Privileged");
	cJSON *cd = cJSON_AddArrayToObject(hc, "CapDrop");
	cJSON_AddItemToArray(cd, cJSON_CreateString("ALL"));
	cJSON_AddTrueToObject(hc, "ReadonlyRootfs");
	cJSON *so = cJSON_AddArrayToObject(hc, "SecurityOpt");
	cJSON_AddItemToArray(so, cJSON_CreateString("no-new-privileges"));
	cJSON_AddNumberToObject(hc, "Memory", (double)memory);
	cJSON_AddNumberToObject(hc, "MemorySwap", (double)memory);
	cJSON_AddNumberToObject(hc, "NanoCpus", (double)nanocpus);
	cJSON_AddNumberToObject(hc, "PidsLimit", (double)pids);
	cJSON_AddFalseToObject(hc, "OomKillDisable");
	cJSON_AddNumberToObject(hc, "OomScoreAdj", 0);
	cJSON_AddNumberToObject(hc, "ShmSize", (double)DOCKERPROXY_SHM);
	cJSON *tmpfs = cJSON_AddObjectToObject(hc, "Tmpfs");
	cJSON_AddStringToObject(tmpfs, "/tmp", DOCKERPROXY_TMPFS);
	cJSON_AddStringToObject(hc, "IpcMode", "private");
	cJSON_AddStringToObject(hc, "CgroupnsMode", "private");
	cJSON_AddArrayToObject(hc, "Devices");
	cJSON_AddFalseToObject(hc, "AutoRemove");
	cJSON *rp = cJSON_AddObjectToObject(hc, "RestartPolicy");
	cJSON_AddStringToObject(rp, "Name", "no");
	cJSON *lc = cJSON_AddObjectToObject(hc, "LogConfig");
	cJSON_AddStringToObject(lc, "Type", "json-file");
	cJSON *lcc = cJSON_AddObjectToObject(lc, "Config");
	cJSON_AddStringToObject(lcc, "max-size", "1m");
	cJSON_AddStringToObject(lcc, "max-file", "1");
	return hc;
}

/* After a successful parse: does a string of the JSON text hold a \u0000
 * escape?  (cJSON would end the C string there, so a member name could
 * look canonical to us and not to the engine.) */
static bool
has_nul_escape(const char *s, size_t n)
{
	bool in = false;
	for (size_t i = 0; i < n; i++) {
		if (!in) {
			in = s[i] == '"';
			continue;
		}
		if (s[i] == '"') {
			in = false;
		} else if (s[i] == '\\' && i + 1 < n) {
			if (s[i + 1] == 'u' && i + 5 < n &&
			    memcmp(s + i + 2, "0000", 4) == 0)
				return true;
			i++;
		}
	}
	return false;
}

cJSON *
dockerproxy_parse_body(const char *body, size_t len, struct errbuf *e)
{
	if (len > DOCKERPROXY_BODY_MAX) {
		errbuf_set(e, ERRBUF_INPUT, "body of %zu bytes (max %d)", len,
		    DOCKERPROXY_BODY_MAX);
		return NULL;
	}
	if (len == 0 || !body) {
		errbuf_set(e, ERRBUF_INPUT, "empty body");
		return NULL;
	}
	if (memchr(body, '\0', len)) {
		errbuf_set(e, ERRBUF_INPUT, "a NUL byte in the body");
		return NULL;
	}
	char *copy = xstrndup(body, len);
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(copy, len, &end, false);
	if (!j) {
		size_t at = end && end >= copy ? (size_t)(end - copy) : 0;
		free(copy);
		errbuf_set(e, ERRBUF_INPUT, "not valid JSON (at byte %zu)", at);
		return NULL;
	}
	size_t at = (size_t)(end - copy);
	while (at < len && (copy[at] == ' ' || copy[at] == '\t' ||
	    copy[at] == '\n' || copy[at] == '\r'))
		at++;
	if (at < len) {
		free(copy);
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INPUT, "trailing bytes after the JSON value "
		    "(at byte %zu)", at);
		return NULL;
	}
	bool nul = has_nul_escape(copy, len);
	free(copy);
	if (nul) {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INPUT, "a \\u0000 escape in the body");
		return NULL;
	}
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INPUT, "body is not a JSON object");
		return NULL;
	}
	return j;
}

/* The members POST /containers/create takes from the agent. */
enum cmember {
	CM_IMAGE, CM_CMD, CM_ENTRYPOINT, CM_ENV, CM_WORKDIR, CM_USER, CM_LABELS,
	CM_TTY, CM_OPENSTDIN, CM_ATTACHSTDIN, CM_ATTACHSTDOUT, CM_ATTACHSTDERR,
	CM_STDINONCE, CM_STOPSIGNAL, CM_HOSTNAME, CM_HOSTCONFIG, CM_COUNT
};
static const char *const cmember_names[CM_COUNT] = {
	"Image", "Cmd", "Entrypoint", "Env", "WorkingDir", "User", "Labels",
	"Tty", "OpenStdin", "AttachStdin", "AttachStdout", "AttachStderr",
	"StdinOnce", "StopSignal", "Hostname", "HostConfig",
};

cJSON *
dockerproxy_compose_create(const char *body, size_t len,
    const char *run_id, const char *lab_image, const char *owner,
    const char *lease, cJSON **asked, struct errbuf *e)
{
	if (asked)
		*asked = NULL;
	cJSON *j = dockerproxy_parse_body(body, len, e);
	if (!j)
		return NULL;
	if (asked)
		*asked = dockerproxy_record(j, DOCKERPROXY_RECORD_MAX);
	cJSON *v[CM_COUNT] = { NULL };
	struct hc_limits lim = { DOCKERPROXY_MEMORY, DOCKERPROXY_NANOCPUS,
		DOCKERPROXY_PIDS };
	cJSON *out = NULL;
	for (const cJSON *m = j->child; m; m = m->next) {
		int k = 0;
		while (k < CM_COUNT && strcmp(cmember_names[k], m->string) != 0)
			k++;
		if (k == CM_COUNT) {
			char hint[96] = "unknown member";
			for (int i = 0; i < CM_COUNT; i++)
				if (folds_to(m->string, cmember_names[i]))
					snprintf(hint, sizeof(hint), "unknown member (not "
					    "byte-exactly \"%s\")", cmember_names[i]);
			refuse_member(e, "member ", m->string, hint);
			goto done;
		}
		if (v[k]) {
			refuse_member(e, "member ", m->string, "duplicate member");
			goto done;
		}
		switch ((enum cmember)k) {
		case CM_IMAGE:
			if (!cJSON_IsString(m))
				refuse_member(e, "member ", "Image", "wrong type (want a "
				    "string)");
			else if (strcmp(m->valuestring, lab_image) != 0)
				refuse_member(e, "member ", "Image", "only the lab image "
				    "may be used");
			else
				v[k] = cJSON_CreateString(lab_image);
			break;
		case CM_CMD: case CM_ENTRYPOINT: case CM_ENV:
			v[k] = take_argv(m, m->string, k == CM_ENV, e);
			break;
		case CM_WORKDIR:
			v[k] = take_workdir(m, e);
			break;
		case CM_USER:
			v[k] = take_user(m, e);
			break;
		case CM_LABELS:
			v[k] = take_labels(m, e);
			break;
		case CM_TTY: case CM_OPENSTDIN: case CM_ATTACHSTDIN:
		case CM_ATTACHSTDOUT: case CM_ATTACHSTDERR: case CM_STDINONCE:
			if (cJSON_IsBool(m))
				v[k] = cJSON_CreateBool(cJSON_IsTrue(m));
			else
				refuse_member(e, "member ", m->string, "wrong type (want a "
				    "boolean)");
			break;
		case CM_STOPSIGNAL: {
			const char *sig = cJSON_IsString(m) ? signal_canon(
			    m->valuestring) : NULL;
			if (sig)
				v[k] = cJSON_CreateString(sig);
			else
				refuse_member(e, "member ", "StopSignal", "want HUP INT QUIT "
				    "KILL USR1 USR2 or TERM");
			break;
		}
		case CM_HOSTNAME:
			v[k] = take_hostname(m, e);
			break;
		case CM_HOSTCONFIG:
			if (take_hostconfig(m, &lim, e) == 0)
				v[k] = cJSON_CreateTrue();   /* a "seen" mark */
			break;
		case CM_COUNT:
			break;
		}
		if (!v[k])
			goto done;
	}
	if (!v[CM_IMAGE]) {
		errbuf_set(e, ERRBUF_INPUT, "member \"Image\" is required");
		goto done;
	}

	/* compose: HostConfig and labels first (records keep the head) */
	out = cJSON_CreateObject();
	cJSON_AddItemToObject(out, "Image", v[CM_IMAGE]);
	v[CM_IMAGE] = NULL;
	if (v[CM_USER]) {
		cJSON_AddItemToObject(out, "User", v[CM_USER]);
		v[CM_USER] = NULL;
	} else {
		cJSON_AddStringToObject(out, "User", DOCKERPROXY_USER);
	}
	cJSON_AddItemToObject(out, "HostConfig", dockerproxy_hostconfig(
	    lim.memory, lim.nanocpus, lim.pids));
	cJSON *labels = cJSON_AddObjectToObject(out, "Labels");
	cJSON_AddStringToObject(labels, "ares.run", run_id);
	cJSON_AddStringToObject(labels, "ares.origin", "agent");
	if (owner)
		cJSON_AddStringToObject(labels, "ares.owner", owner);
	if (lease)
		cJSON_AddStringToObject(labels, "ares.lease", lease);
	if (v[CM_LABELS])
		for (cJSON *l = v[CM_LABELS]->child; l; l = l->next)
			cJSON_AddStringToObject(labels, l->string, l->valuestring);
	cJSON_AddTrueToObject(out, "NetworkDisabled");
	static const enum cmember rest[] = { CM_HOSTNAME, CM_WORKDIR,
		CM_ENTRYPOINT, CM_CMD, CM_ENV, CM_STOPSIGNAL, CM_TTY, CM_OPENSTDIN,
		CM_ATTACHSTDIN, CM_ATTACHSTDOUT, CM_ATTACHSTDERR, CM_STDINONCE };
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		if (v[rest[i]]) {
			cJSON_AddItemToObject(out, cmember_names[rest[i]], v[rest[i]]);
			v[rest[i]] = NULL;
		}
done:
	for (int k = 0; k < CM_COUNT; k++)
		cJSON_Delete(v[k]);
	cJSON_Delete(j);
	return out;
}

/* ---- records (pure) ------------------------------------------------- */

/* What s costs in the serialised record: its JSON-escaped length plus the
 * quotes and a separator. */
static size_t
rec_cost(const char *s)
{
	size_t n = 4;
	for (; *s; s++)
		n += *s == '"' || *s == '\\' ? 2 : 1;
	return n;
}

/* Take cost from the record's text budget *left (never below 0). */
static void
rec_charge(size_t *left, size_t cost)
{
	*left = cost < *left ? *left - cost : 0;
}

/* A bounded copy of v, charging what it adds to *left (see
 * dockerproxy_record). */
static cJSON *
record_rec(const cJSON *v, int depth, size_t *left)
{
	if (cJSON_IsString(v)) {
		size_t n = strlen(v->valuestring);
		size_t keep = n < DOCKERPROXY_RECORD_STR ? n : DOCKERPROXY_RECORD_STR;
		if (keep > *left / 2)
			keep = *left / 2;     /* escaping may double it */
		char buf[DOCKERPROXY_RECORD_STR + 4];
		util_sanitize(buf, keep + 1, v->valuestring, n, false);
		if (keep < n)
			strcat(buf, "...");
		rec_charge(left, rec_cost(buf));
		return cJSON_CreateString(buf);
	}
	if (cJSON_IsNumber(v) || cJSON_IsBool(v) || cJSON_IsNull(v)) {
		rec_charge(left, 12);
		return cJSON_Duplicate(v, false);
	}
	bool obj = cJSON_IsObject(v);
	if (!obj && !cJSON_IsArray(v))
		return cJSON_CreateNull();
	rec_charge(left, 8);
	if (depth >= DOCKERPROXY_RECORD_DEPTH)
		return cJSON_CreateString(obj ? "{...}" : "[...]");
	cJSON *out = obj ? cJSON_CreateObject() : cJSON_CreateArray();
	int n = 0;
	for (const cJSON *it = v->child; it; it = it->next) {
		if (n == DOCKERPROXY_RECORD_ITEMS || *left == 0) {
			if (obj)
				cJSON_AddStringToObject(out, "...", "cut");
			else
				cJSON_AddItemToArray(out, cJSON_CreateString("..."));
			break;
		}
		n++;
		if (obj) {
			char key[80];
			esc_name(it->string ? it->string : "", key, sizeof(key));
			if (cJSON_GetObjectItemCaseSensitive(out, key))
				continue;    /* a duplicate: the reason names it */
			rec_charge(left, rec_cost(key));
			cJSON_AddItemToObject(out, key, record_rec(it, depth + 1, left));
		} else {
			cJSON_AddItemToArray(out, record_rec(it, depth + 1, left));
		}
	}
	return out;
}

cJSON *
dockerproxy_record(const cJSON *v, size_t budget)
{
	size_t left = budget;
	return record_rec(v, 0, &left);
}

/* ---- answers (pure) ------------------------------------------------- */

/* dst[k] = src[k] when that is a string; nothing otherwise. */
static void
copy_str(cJSON *dst, const cJSON *src, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
	if (cJSON_IsString(v))
		cJSON_AddStringToObject(dst, k, v->valuestring);
}

/* The same for a number. */
static void
copy_num(cJSON *dst, const cJSON *src, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
	if (cJSON_IsNumber(v))
		cJSON_AddNumberToObject(dst, k, v->valuedouble);
}

/* The same for a boolean. */
static void
copy_bool(cJSON *dst, const cJSON *src, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
	if (cJSON_IsBool(v))
		cJSON_AddBoolToObject(dst, k, cJSON_IsTrue(v));
}

/* dst[k] = the string items of the array src[k] (null when absent). */
static void
copy_strv(cJSON *dst, const cJSON *src, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
	if (!cJSON_IsArray(v)) {
		cJSON_AddNullToObject(dst, k);
		return;
	}
	cJSON *a = cJSON_AddArrayToObject(dst, k);
	const cJSON *it;
	cJSON_ArrayForEach(it, v)
		if (cJSON_IsString(it))
			cJSON_AddItemToArray(a, cJSON_CreateString(it->valuestring));
}

/* dst[k] = the string members of the object src[k]. */
static void
copy_strmap(cJSON *dst, const cJSON *src, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, k);
	cJSON *o = cJSON_AddObjectToObject(dst, k);
	for (const cJSON *it = cJSON_IsObject(v) ? v->child : NULL; it;
	    it = it->next)
		if (cJSON_IsString(it) && it->string &&
		    !cJSON_GetObjectItemCaseSensitive(o, it->string))
			cJSON_AddStringToObject(o, it->string, it->valuestring);
}

/* Labels[key] of a list entry (Labels) or inspect answer (Config.Labels). */
static const char *
label_of(const cJSON *c, const char *key)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "Labels");
	if (!l)
		l = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(c, "Config"), "Labels");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(l, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Is c (a list entry or an inspect answer) a container run_id's agent
 * made (labels ares.run = run_id, ares.origin = agent)? */
static bool
agent_made(const cJSON *c, const char *run_id)
{
	const char *r = label_of(c, "ares.run"), *o = label_of(c, "ares.origin");
	return r && o && strcmp(r, run_id) == 0 && strcmp(o, "agent") == 0;
}

const char *
dockerproxy_owned(const cJSON *inspect, const char *run_id,
    const char **why)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(inspect, "Id");
	if (!cJSON_IsString(id) || !is_hex64(id->valuestring)) {
		*why = "the engine's answer holds no full container id";
		return NULL;
	}
	if (!agent_made(inspect, run_id)) {
		*why = "not a container this run's agent made";
		return NULL;
	}
	return id->valuestring;
}

/* The agent's name of an engine-side name ("/<name>") into out, or false
 * when the name is not in run_id's namespace. */
static bool
shown_name(const char *run_id, const cJSON *engine_name,
    char out[DOCKERPROXY_NAME_MAX + 2])
{
	const char *n = cJSON_IsString(engine_name) ?
	    dockerproxy_agent_name(run_id, engine_name->valuestring) : NULL;
	if (!n)
		return false;
	snprintf(out, DOCKERPROXY_NAME_MAX + 2, "/%s", n);
	return true;
}

cJSON *
dockerproxy_answer_inspect(const cJSON *in, const char *run_id)
{
	cJSON *o = cJSON_CreateObject();
	char name[DOCKERPROXY_NAME_MAX + 2];
	copy_str(o, in, "Id");
	if (shown_name(run_id, cJSON_GetObjectItemCaseSensitive(in, "Name"),
	    name))
		cJSON_AddStringToObject(o, "Name", name);
	copy_str(o, in, "Created");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(in, "State");
	cJSON *s = cJSON_AddObjectToObject(o, "State");
	copy_str(s, st, "Status");
	static const char *const flags[] = { "Running", "Paused", "Restarting",
		"OOMKilled", "Dead" };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		copy_bool(s, st, flags[i]);
	copy_num(s, st, "ExitCode");
	copy_str(s, st, "StartedAt");
	copy_str(s, st, "FinishedAt");
	const cJSON *cf = cJSON_GetObjectItemCaseSensitive(in, "Config");
	cJSON *c = cJSON_AddObjectToObject(o, "Config");
	copy_str(c, cf, "Image");
	copy_strv(c, cf, "Cmd");
	copy_strv(c, cf, "Entrypoint");
	copy_strmap(c, cf, "Labels");
	copy_str(c, cf, "User");
	copy_str(c, cf, "WorkingDir");
	const cJSON *hf = cJSON_GetObjectItemCaseSensitive(in, "HostConfig");
	cJSON *h = cJSON_AddObjectToObject(o, "HostConfig");
	copy_str(h, hf, "NetworkMode");
	copy_bool(h, hf, "Privileged");
	copy_bool(h, hf, "ReadonlyRootfs");
	static const char *const lims[] = { "Memory", "MemorySwap", "NanoCpus",
		"PidsLimit", "ShmSize" };
	for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++)
		copy_num(h, hf, lims[i]);
	return o;
}

cJSON *
dockerproxy_answer_list(const cJSON *list, const char *run_id)
{
	if (!cJSON_IsArray(list))
		return NULL;
	cJSON *out = cJSON_CreateArray();
	const cJSON *c;
	cJSON_ArrayForEach(c, list) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "Id");
		if (!agent_made(c, run_id) || !cJSON_IsString(id) ||
		    !is_hex64(id->valuestring))
			continue;
		cJSON *o = cJSON_CreateObject();
		copy_str(o, c, "Id");
		cJSON *names = cJSON_AddArrayToObject(o, "Names");
		const cJSON *n;
		cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(c, "Names")) {
			char name[DOCKERPROXY_NAME_MAX + 2];
			if (shown_name(run_id, n, name))
				cJSON_AddItemToArray(names, cJSON_CreateString(name));
		}
		copy_str(o, c, "Image");
		copy_str(o, c, "Command");
		copy_num(o, c, "Created");
		copy_str(o, c, "State");
		copy_str(o, c, "Status");
		copy_strmap(o, c, "Labels");
		cJSON_AddItemToArray(out, o);
	}
	return out;
}

const char *
dockerproxy_prefix_match(const cJSON *ours, const char *ref)
{
	size_t n = strlen(ref);
	const char *found = NULL;
	if (n == 0 || n > 64 || strspn(ref, "0123456789abcdef") != n)
		return NULL;
	const cJSON *c;
	cJSON_ArrayForEach(c, ours) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "Id");
		if (!cJSON_IsString(id) || !is_hex64(id->valuestring) ||
		    strncmp(id->valuestring, ref, n) != 0)
			continue;
		if (!found)
			found = id->valuestring;
		else if (strcmp(found, id->valuestring) != 0)
			return NULL;            /* several: names none */
	}
	return found;
}

/* {"message": msg} */
static cJSON *
message_obj(const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "message", msg);
	return o;
}

cJSON *
dockerproxy_answer_missing(const char *ref)
{
	char r[DOCKERPROXY_ID_MAX + 1];
	util_sanitize(r, sizeof(r), ref ? ref : "", ref ? strlen(ref) : 0,
	    false);
	char *m = xasprintf("No such container: %s", r);
	cJSON *o = message_obj(m);
	free(m);
	return o;
}

cJSON *
dockerproxy_answer_error(enum dockerproxy_route r, long engine_status,
    const char *ref, int *status)
{
	char rs[DOCKERPROXY_ID_MAX + 1];
	util_sanitize(rs, sizeof(rs), ref ? ref : "", ref ? strlen(ref) : 0,
	    false);
	if (engine_status < 200 || engine_status > 599) {
		*status = 502;
		return message_obj("ares dockerproxy: the engine did not answer");
	}
	*status = (int)engine_status;
	const char *verb = NULL;
	switch (r) {
	case DP_INSPECT: verb = "inspect"; break;
	case DP_START: verb = "start"; break;
	case DP_KILL: verb = "kill"; break;
	case DP_STOP: verb = "stop"; break;
	case DP_DELETE: verb = "remove"; break;
	default: break;
	}
	char *m;
	if (verb && engine_status == 404) {
		*status = 404;
		return dockerproxy_answer_missing(ref);
	} else if (verb && engine_status == 409) {
		m = xasprintf("ares dockerproxy: container %s: cannot %s it in its "
		    "current state%s", rs, verb, r == DP_DELETE ? " (stop it "
		    "first, or remove it with force=1)" : "");
	} else if (verb) {
		m = xasprintf("ares dockerproxy: the engine could not %s container "
		    "%s (HTTP %ld)", verb, rs, engine_status);
	} else if (r == DP_CREATE && engine_status == 409 && rs[0]) {
		m = xasprintf("Conflict. The container name \"/%s\" is already in "
		    "use by another container of this lab. You have to remove "
		    "that container to be able to reuse that name.", rs);
	} else if (r == DP_CREATE) {
		m = xasprintf("ares dockerproxy: the engine could not create the "
		    "container (HTTP %ld)", engine_status);
	} else {
		m = xasprintf("ares dockerproxy: the engine could not answer "
		    "(HTTP %ld)", engine_status);
	}
	cJSON *o = message_obj(m);
	free(m);
	return o;
}

cJSON *
dockerproxy_answer_images(const cJSON *images, const char *lab_image)
{
	if (!cJSON_IsArray(images))
		return NULL;
	cJSON *out = cJSON_CreateArray();
	const cJSON *im;
	cJSON_ArrayForEach(im, images) {
		const cJSON *tags = cJSON_GetObjectItemCaseSensitive(im, "RepoTags");
		const cJSON *t;
		bool lab = false;
		cJSON_ArrayForEach(t, tags)
			lab |= cJSON_IsString(t) && strcmp(t->valuestring, lab_image) == 0;
		if (!lab)
			continue;
		cJSON *o = cJSON_CreateObject();
		copy_str(o, im, "Id");
		cJSON *rt = cJSON_AddArrayToObject(o, "RepoTags");
		cJSON_AddItemToArray(rt, cJSON_CreateString(lab_image));
		copy_num(o, im, "Created");
		copy_num(o, im, "Size");
		cJSON_AddItemToArray(out, o);
		break;                          /* one image, one entry */
	}
	return out;
}

cJSON *
dockerproxy_answer_version(const cJSON *version, const char *api)
{
	cJSON *o = cJSON_CreateObject();
	copy_str(o, version, "Version");
	cJSON_AddStringToObject(o, "ApiVersion", api);
	cJSON_AddStringToObject(o, "MinAPIVersion", api);
	copy_str(o, version, "Os");
	copy_str(o, version, "Arch");
	return o;
}

cJSON *
dockerproxy_answer_info(const cJSON *info, const cJSON *ours)
{
	cJSON *o = cJSON_CreateObject();
	copy_str(o, info, "ServerVersion");
	copy_str(o, info, "OSType");
	copy_str(o, info, "Architecture");
	copy_num(o, info, "NCPU");
	copy_num(o, info, "MemTotal");
	int n = 0, running = 0, paused = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, ours) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "State");
		n++;
		if (cJSON_IsString(st) && strcmp(st->valuestring, "running") == 0)
			running++;
		else if (cJSON_IsString(st) && strcmp(st->valuestring, "paused") == 0)
			paused++;
	}
	cJSON_AddNumberToObject(o, "Containers", n);
	cJSON_AddNumberToObject(o, "ContainersRunning", running);
	cJSON_AddNumberToObject(o, "ContainersPaused", paused);
	cJSON_AddNumberToObject(o, "ContainersStopped", n - running - paused);
	cJSON_AddNumberToObject(o, "Images", 1);
	return o;
}

/* "MAJOR.MINOR" (1..4 digits each) into *ma, *mi. */
static bool
api_parse(const char *s, long long *ma, long long *mi)
{
	const char *dot = s ? strchr(s, '.') : NULL;
	return dot && (size_t)(dot - s) <= 4 && strlen(dot + 1) <= 4 &&
	    dec_parse(s, (size_t)(dot - s), ma) &&
	    dec_parse(dot + 1, strlen(dot + 1), mi);
}

int
dockerproxy_pick_api(const char *api, const char *min, char out[16],
    struct errbuf *e)
{
	long long am, an, mm = 1, mn = 12, wm, wn;
	out[0] = '\0';
	if (!api_parse(DOCKERPROXY_API, &wm, &wn) || !api_parse(api, &am, &an))
		return errbuf_set(e, ERRBUF_ENGINE, "engine: bad ApiVersion "
		    "\"%.16s\"", api ? api : "(none)");
	if (min && *min && !api_parse(min, &mm, &mn))
		return errbuf_set(e, ERRBUF_ENGINE, "engine: bad MinAPIVersion "
		    "\"%.16s\"", min);
	if (am < wm || (am == wm && an < wn))
		return errbuf_set(e, ERRBUF_ENGINE, "engine API %s is older than "
		    "%s", api, DOCKERPROXY_API);
	if (mm < wm || (mm == wm && mn <= wn)) {
		snprintf(out, 16, "%s", DOCKERPROXY_API);
		return 0;
	}
	if (mm > am || (mm == am && mn > an))
		return errbuf_set(e, ERRBUF_ENGINE, "engine: MinAPIVersion %s above "
		    "ApiVersion %s", min, api);
	snprintf(out, 16, "%lld.%lld", mm, mn);
	return 0;
}

/* ---- the engine ----------------------------------------------------- */

/*
 * One engine call, composed by the caller: method, path (without the
 * version: "/v<api>" is prefixed once d->api is set) and an optional JSON
 * body.  Returns the HTTP status, 0 on transport failure or an answer over
 * DOCKERPROXY_ANSWER_MAX; the answer in *a (caller frees a->buf).
 */
static long
engine(const struct dproxy *d, const char *method,
    const char *path, const char *body, struct http_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->max = DOCKERPROXY_ANSWER_MAX;
	CURL *c = curl_easy_init();
	if (!c)
		return 0;
	char *url = d->api[0] ? xasprintf("http://docker/v%s%s", d->api, path) :
	    xasprintf("http://docker%s", path);
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Expect:");
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, d->engine);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_answer_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		fprintf(stderr, "dockerproxy: engine %s %s: %s\n", method, path,
		    curl_easy_strerror(rc));
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	if (a->over)
		status = 0;
	return status;
}

/* The engine answer as JSON, or NULL. */
static cJSON *
answer_json(const struct http_answer *a)
{
	return a->buf ? cJSON_ParseWithLength(a->buf, a->len) : NULL;
}

/* The list filter for this run's agent-made containers, URL-encoded
 * (caller frees). */
static char *
agent_filter(const struct dproxy *d)
{
	cJSON *f = cJSON_CreateObject();
	cJSON *l = cJSON_AddArrayToObject(f, "label");
	char *run = xasprintf("ares.run=%s", d->run_id);
	cJSON_AddItemToArray(l, cJSON_CreateString(run));
	cJSON_AddItemToArray(l, cJSON_CreateString("ares.origin=agent"));
	free(run);
	char *s = cJSON_PrintUnformatted(f);
	cJSON_Delete(f);
	char *esc = curl_easy_escape(NULL, s, 0);
	char *out = xstrdup(esc ? esc : "");
	curl_free(esc);
	free(s);
	return out;
}

/* This run's agent-made containers, reduced (dockerproxy_answer_list), or
 * NULL when the engine did not answer with a list. */
static cJSON *
agent_list(const struct dproxy *d, const char *query_extra)
{
	char *f = agent_filter(d);
	char *p = xasprintf("/containers/json?%sfilters=%s", query_extra, f);
	struct http_answer a;
	long st = engine(d, "GET", p, NULL, &a);
	free(p);
	free(f);
	cJSON *j = st == 200 ? answer_json(&a) : NULL;
	free(a.buf);
	cJSON *out = dockerproxy_answer_list(j, d->run_id);
	cJSON_Delete(j);
	return out;
}

/* ---- the handler ---------------------------------------------------- */

/* One call being answered: its response and its event. */
struct call {
	struct dproxy *d;
	const struct http_request *req;
	struct http_response *resp;
	cJSON *ev;
};

/* Answer status with {"message": msg}. */
static void
answer_message(struct call *c, int status, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "message", msg);
	http_response_json(c->resp, status, o);
}

/* Refuse the call: status + {"message": "ares dockerproxy: refused: R"}
 * and "refused": R (bounded) in the event. */
static void
refuse(struct call *c, int status, const char *reason)
{
	char r[DOCKERPROXY_REASON_MAX + 1];
	util_sanitize(r, sizeof(r), reason, strlen(reason), false);
	char *m = xasprintf("ares dockerproxy: refused: %s", r);
	answer_message(c, status, m);
	free(m);
	cJSON_AddStringToObject(c->ev, "refused", r);
}

/* The engine's status and (sanitised, bounded) message of an answer that
 * was not a yes, into the event only (engine_status, engine_message; a
 * later one replaces an earlier one). */
static void
note_engine(struct call *c, long st, const struct http_answer *a)
{
	cJSON *j = answer_json(a);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
	char msg[DOCKERPROXY_MESSAGE_MAX + 1] = "";
	if (cJSON_IsString(m))
		util_sanitize(msg, sizeof(msg), m->valuestring,
		    strlen(m->valuestring), false);
	else if (a->buf && !j)
		util_sanitize(msg, sizeof(msg), a->buf, a->len, false);
	cJSON_Delete(j);
	cJSON_DeleteItemFromObjectCaseSensitive(c->ev, "engine_status");
	cJSON_DeleteItemFromObjectCaseSensitive(c->ev, "engine_message");
	cJSON_AddNumberToObject(c->ev, "engine_status", (double)st);
	if (msg[0])
		cJSON_AddStringToObject(c->ev, "engine_message", msg);
}

/* The answer to a reference that names no sibling of this run: always
 * the same 404 (dockerproxy_answer_missing), "exists outside the lab",
 * "is ambiguous" and "does not exist" must look alike to the agent; why
 * goes to the event ("refused"). */
static void
answer_missing(struct call *c, const char *ref, const char *why)
{
	char r[DOCKERPROXY_ID_MAX + 96];
	snprintf(r, sizeof(r), "no such container: %s (%s)", ref, why);
	refuse(c, 404, r);
	http_response_json(c->resp, 404, dockerproxy_answer_missing(ref));
}

/* Answer an engine that did not say yes to route r on ref (for create:
 * the agent's name): 304 as is (already started / stopped: no body),
 * anything else composed (dockerproxy_answer_error); the engine's own
 * status and text go to the event only. */
static void
engine_failed(struct call *c, enum dockerproxy_route r,
    const char *ref, long st, const struct http_answer *a)
{
	note_engine(c, st, a);
	if (st == 304 && r != DP_CREATE) {
		c->resp->status = 304;
		c->resp->body = xstrdup("");
		c->resp->len = 0;
		return;
	}
	int status;
	cJSON *o = dockerproxy_answer_error(r, st, ref, &status);
	http_response_json(c->resp, status, o);
}

/* Answer status with the composed j (taken), or 502 when composing gave
 * nothing. */
static void
answer_json_body(struct call *c, int status, cJSON *j)
{
	if (!j) {
		answer_message(c, 502, "ares dockerproxy: unexpected engine answer");
		return;
	}
	http_response_json(c->resp, status, j);
}

/* GET|HEAD /_ping: "OK" ("" for HEAD) when the engine answers its own
 * ping with 200, else 502. */
static void
handle_ping(struct call *c, bool head)
{
	struct http_answer a;
	long st = engine(c->d, "GET", "/_ping", NULL, &a);
	free(a.buf);
	if (st != 200) {
		answer_message(c, 502, "ares dockerproxy: the engine did not answer");
		return;
	}
	http_response_text(c->resp, 200, "text/plain; charset=utf-8",
	    head ? "" : "OK");
}

/* GET /version, /info, /images/json: the engine's answer reduced by
 * dockerproxy_answer_version, _info (with this run's containers) or
 * _images; engine_failed when the engine says no or its answer does not
 * parse. */
static void
handle_simple_get(struct call *c, enum dockerproxy_route r)
{
	const struct dproxy *d = c->d;
	struct http_answer a;
	long st;
	cJSON *j;
	switch (r) {
	case DP_VERSION:
		st = engine(d, "GET", "/version", NULL, &a);
		j = st == 200 ? answer_json(&a) : NULL;
		if (j)
			answer_json_body(c, 200, dockerproxy_answer_version(j, d->api));
		else
			engine_failed(c, r, NULL, st == 200 ? 0 : st, &a);
		break;
	case DP_INFO: {
		st = engine(d, "GET", "/info", NULL, &a);
		j = st == 200 ? answer_json(&a) : NULL;
		cJSON *ours = j ? agent_list(d, "all=1&") : NULL;
		if (j && ours)
			answer_json_body(c, 200, dockerproxy_answer_info(j, ours));
		else
			engine_failed(c, r, NULL, st == 200 ? 0 : st, &a);
		cJSON_Delete(ours);
		break;
	}
	case DP_IMAGES: {
		cJSON *f = cJSON_CreateObject();
		cJSON *ref = cJSON_AddArrayToObject(f, "reference");
		cJSON_AddItemToArray(ref, cJSON_CreateString(d->lab_image));
		char *fs = cJSON_PrintUnformatted(f);
		cJSON_Delete(f);
		char *esc = curl_easy_escape(NULL, fs, 0);
		char *p = xasprintf("/images/json?filters=%s", esc ? esc : "");
		curl_free(esc);
		free(fs);
		st = engine(d, "GET", p, NULL, &a);
		free(p);
		j = st == 200 ? answer_json(&a) : NULL;
		if (j)
			answer_json_body(c, 200, dockerproxy_answer_images(j,
			    d->lab_image));
		else
			engine_failed(c, r, NULL, st == 200 ? 0 : st, &a);
		break;
	}
	default:
		return;
	}
	cJSON_Delete(j);
	free(a.buf);
}

/* GET /containers/json: this run's agent-made containers only (the
 * proxy's label filter after the composed query q), reduced; 502 when the
 * engine does not answer with a list. */
static void
handle_list(struct call *c, const char *q)
{
	/* q is "" or "?all=1&limit=N" (composed); add the proxy's filter */
	char *extra = *q ? xasprintf("%s&", q + 1) : xstrdup("");
	cJSON *l = agent_list(c->d, extra);
	free(extra);
	if (l)
		http_response_json(c->resp, 200, l);
	else
		answer_message(c, 502, "ares dockerproxy: the engine did not answer");
}

/* A name for a sibling the agent made without one (the engine's own
 * random names would live outside the run's namespace):
 * "sibling-<12 hex>" into out.  false when no randomness. */
static bool
random_name(char out[DOCKERPROXY_NAME_MAX + 1])
{
	uint8_t rnd[6];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return false;
	snprintf(out, DOCKERPROXY_NAME_MAX + 1, "sibling-");
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(out + 8 + 2 * i, 3, "%02x", rnd[i]);
	return true;
}

/* q is "" or "?name=<engine-side name>" (dockerproxy_compose_query): the
 * sibling is always named in the run's namespace, by the agent or by
 * random_name.  The agent's name is what every answer shows. */
static void
handle_create(struct call *c, const char *q)
{
	const struct dproxy *d = c->d;
	struct errbuf e = { 0 };
	cJSON *asked = NULL;
	char name[DOCKERPROXY_NAME_MAX + 1], en[DOCKERPROXY_ENGINE_NAME_MAX + 1];
	const char *given = strncmp(q, "?name=", 6) == 0 ?
	    dockerproxy_agent_name(d->run_id, q + 6) : NULL;
	if (given)
		snprintf(name, sizeof(name), "%s", given);
	else if (!random_name(name)) {
		answer_message(c, 500, "ares dockerproxy: no randomness for a "
		    "sibling name");
		return;
	}
	if (!dockerproxy_engine_name(d->run_id, name, en)) {
		refuse(c, 400, "query parameter \"name\": makes no engine name");
		return;
	}
	cJSON_AddStringToObject(c->ev, "name", name);
	cJSON_AddStringToObject(c->ev, "engine_name", en);
	/* the cap is checked under create_mu below */
	cJSON *body = dockerproxy_compose_create(c->req->body, c->req->body_len,
	    d->run_id, d->lab_image, d->owner, d->lease, &asked, &e);
	if (asked)
		cJSON_AddItemToObject(c->ev, "asked", asked);
	if (!body) {
		refuse(c, 400, e.msg);
		return;
	}
	cJSON_AddItemToObject(c->ev, "got", dockerproxy_record(body,
	    DOCKERPROXY_RECORD_MAX));
	char *bs = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	if (!bs)
		util_fatal("dockerproxy: cannot serialise JSON");

	pthread_mutex_lock(&c->d->create_mu);
	cJSON *ours = agent_list(d, "all=1&");
	int n = ours ? cJSON_GetArraySize(ours) : -1;
	cJSON_Delete(ours);
	struct http_answer a = { 0 };
	long st = 0;
	if (n >= 0 && n < DOCKERPROXY_SIBLINGS_MAX) {
		char *p = xasprintf("/containers/create?name=%s", en);
		st = engine(d, "POST", p, bs, &a);
		free(p);
	}
	pthread_mutex_unlock(&c->d->create_mu);
	free(bs);
	if (n < 0) {
		answer_message(c, 502, "ares dockerproxy: the engine did not answer");
	} else if (n >= DOCKERPROXY_SIBLINGS_MAX) {
		char r[128];
		snprintf(r, sizeof(r), "sibling cap: %d agent-made containers of "
		    "this run exist (max %d)", n, DOCKERPROXY_SIBLINGS_MAX);
		refuse(c, 429, r);
	} else if (st == 201) {
		cJSON *j = answer_json(&a);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "Id");
		if (cJSON_IsString(id) && is_hex64(id->valuestring)) {
			cJSON_AddStringToObject(c->ev, "created", id->valuestring);
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "Id", id->valuestring);
			cJSON_AddArrayToObject(o, "Warnings");
			http_response_json(c->resp, 201, o);
		} else {
			answer_message(c, 502, "ares dockerproxy: unexpected engine "
			    "answer");
		}
		cJSON_Delete(j);
	} else {
		engine_failed(c, DP_CREATE, name, st, &a);
	}
	free(a.buf);
}

/* GET /containers/<what>/json, where what is an engine-side name or a
 * full id the proxy listed (never the agent's reference).  The answer
 * when it is a 200 for a sibling of this run (dockerproxy_owned) and,
 * when want_id is set, for that id; else NULL, *why set, and the engine's
 * status and text in the event. */
static cJSON *
inspect_owned(struct call *c, const char *what,
    const char *want_id, const char **why)
{
	struct http_answer a;
	char *p = xasprintf("/containers/%s/json", what);
	long st = engine(c->d, "GET", p, NULL, &a);
	free(p);
	cJSON *in = st == 200 ? answer_json(&a) : NULL;
	if (st != 200)
		note_engine(c, st, &a);
	free(a.buf);
	if (!in) {
		*why = st == 200 ? "unreadable engine answer" :
		    "the engine knows no such sibling";
		return NULL;
	}
	const cJSON *jid = cJSON_GetObjectItemCaseSensitive(in, "Id");
	if (cJSON_IsString(jid) && is_hex64(jid->valuestring) &&
	    !cJSON_GetObjectItemCaseSensitive(c->ev, "container"))
		cJSON_AddStringToObject(c->ev, "container", jid->valuestring);
	const char *id = dockerproxy_owned(in, c->d->run_id, why);
	if (id && want_id && strcmp(id, want_id) != 0) {
		*why = "the engine answered for another id";
		id = NULL;
	}
	if (!id) {
		cJSON_Delete(in);
		return NULL;
	}
	return in;
}

/*
 * The sibling of this run that the agent's ref names, as its inspect
 * answer (caller deletes), or NULL with *why.  The engine never resolves
 * ref against the host's containers (its prefix matching and its names
 * would tell the agent what exists outside the lab): a name is looked up
 * as its engine-side name; then, for lowercase hex, ref is matched as an
 * id prefix among this run's agent-made containers (the proxy's label
 * filter) and the one match is looked up by its full id.
 */
static cJSON *
resolve(struct call *c, const char *ref, const char **why)
{
	const struct dproxy *d = c->d;
	char en[DOCKERPROXY_ENGINE_NAME_MAX + 1];
	*why = "names no container of this run's agent";
	if (dockerproxy_engine_name(d->run_id, ref, en)) {
		cJSON_AddStringToObject(c->ev, "engine_name", en);
		cJSON *in = inspect_owned(c, en, NULL, why);
		if (in)
			return in;
	}
	size_t n = strlen(ref);
	if (n == 0 || n > 64 || strspn(ref, "0123456789abcdef") != n)
		return NULL;
	cJSON *ours = agent_list(d, "all=1&");
	const char *id = dockerproxy_prefix_match(ours, ref);
	cJSON *in = NULL;
	if (!ours)
		*why = "the engine did not list this run's siblings";
	else if (!id)
		*why = "no sibling of this run has (only) this id prefix";
	else
		in = inspect_owned(c, id, id, why);
	cJSON_Delete(ours);
	if (in) {
		/* the name lookup's miss is no engine error of this call */
		cJSON_DeleteItemFromObjectCaseSensitive(c->ev, "engine_status");
		cJSON_DeleteItemFromObjectCaseSensitive(c->ev, "engine_message");
	}
	return in;
}

/* Per-container routes: resolve ref ONCE to a sibling's full id, then act
 * on that id only. */
static void
handle_container(struct call *c, enum dockerproxy_route r,
    const char *ref, const char *q)
{
	const struct dproxy *d = c->d;
	const char *why = NULL;
	cJSON *in = resolve(c, ref, &why);
	if (!in) {
		answer_missing(c, ref, why);
		return;
	}
	const char *id = dockerproxy_owned(in, d->run_id, &why);
	if (r == DP_INSPECT) {
		http_response_json(c->resp, 200, dockerproxy_answer_inspect(in,
		    d->run_id));
		cJSON_Delete(in);
		return;
	}
	const char *method = r == DP_DELETE ? "DELETE" : "POST";
	const char *op = r == DP_START ? "/start" : r == DP_KILL ? "/kill" :
	    r == DP_STOP ? "/stop" : "";
	char *p = xasprintf("/containers/%s%s%s", id, op, q);
	cJSON_Delete(in);
	struct http_answer a;
	long st = engine(d, method, p, NULL, &a);
	free(p);
	if (st >= 200 && st < 300) {
		c->resp->status = (int)st;
		c->resp->body = xstrdup("");
		c->resp->len = 0;
	} else {
		engine_failed(c, r, ref, st, &a);
	}
	free(a.buf);
}

/*
 * The proxy's HTTP handler: route, compose the query, refuse what is not
 * allowed (403), a bad query (400) or a body where none is taken (400),
 * else run the route.  Records one "docker_api" event (method, path,
 * query and ref sanitised, status and what the route noted) and a log
 * line.
 */
static void
dproxy_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	struct call c = { .d = ctx, .req = req, .resp = resp,
		.ev = cJSON_CreateObject() };
	char ref[DOCKERPROXY_ID_MAX + 1];
	size_t pl;
	enum dockerproxy_route r = dockerproxy_route(req->method, req->path, ref,
	    &pl);
	char clean[513];

	cJSON_AddStringToObject(c.ev, "method", req->method);
	util_sanitize(clean, sizeof(clean), req->path, strlen(req->path), false);
	cJSON_AddStringToObject(c.ev, "path", clean);
	if (req->query && *req->query) {
		util_sanitize(clean, 257, req->query, strlen(req->query), false);
		cJSON_AddStringToObject(c.ev, "query", clean);
	}
	if (ref[0])
		cJSON_AddStringToObject(c.ev, "ref", ref);

	struct errbuf e = { 0 };
	char *q = NULL;
	if (r == DP_DENY) {
		refuse(&c, 403, "not allowed in this lab");
	} else if (!(q = dockerproxy_compose_query(r, req->query, c.d->run_id,
	    &e))) {
		refuse(&c, 400, e.msg);
	} else if (r != DP_CREATE && req->body_len > 0) {
		refuse(&c, 400, "this call takes no body");
	} else {
		switch (r) {
		case DP_PING:
			handle_ping(&c, strcmp(req->method, "HEAD") == 0);
			break;
		case DP_VERSION: case DP_INFO: case DP_IMAGES:
			handle_simple_get(&c, r);
			break;
		case DP_LIST:
			handle_list(&c, q);
			break;
		case DP_CREATE:
			handle_create(&c, q);
			break;
		case DP_INSPECT: case DP_START: case DP_KILL: case DP_STOP:
		case DP_DELETE:
			handle_container(&c, r, ref, q);
			break;
		case DP_DENY:
			break;
		}
	}
	free(q);
	if (resp->status == 0)
		answer_message(&c, 500, "ares dockerproxy: no answer");

	cJSON_AddNumberToObject(c.ev, "status", resp->status);
	const cJSON *cr = cJSON_GetObjectItemCaseSensitive(c.ev, "created");
	util_sanitize(clean, 257, req->path, strlen(req->path), false);
	printf("%s %s -> %d%s%s\n", req->method, clean, resp->status,
	    cJSON_IsString(cr) ? " created " : "",
	    cJSON_IsString(cr) ? cr->valuestring : "");
	fflush(stdout);
	sensor_emit("docker_api", c.ev);
}

/* GET /version (unversioned) and pick the API version into d->api, with
 * a few retries while the engine comes up.  0 or -1 + e. */
static int
choose_api(struct dproxy *d, struct errbuf *e)
{
	for (int i = 0; i < 10; i++) {
		struct http_answer a;
		long st = engine(d, "GET", "/version", NULL, &a);
		cJSON *j = st == 200 ? answer_json(&a) : NULL;
		free(a.buf);
		if (j) {
			const cJSON *api = cJSON_GetObjectItemCaseSensitive(j,
			    "ApiVersion");
			const cJSON *min = cJSON_GetObjectItemCaseSensitive(j,
			    "MinAPIVersion");
			int rc = dockerproxy_pick_api(cJSON_IsString(api) ?
			    api->valuestring : NULL, cJSON_IsString(min) ?
			    min->valuestring : NULL, d->api, e);
			cJSON_Delete(j);
			return rc;
		}
		usleep(300 * 1000);
	}
	return errbuf_set(e, ERRBUF_ENGINE, "engine %s: no answer to GET "
	    "/version", d->engine);
}

int
dockerproxy_main(void)
{
	static struct dproxy d;
	d.engine = util_env_or("ENGINE_SOCK", "/engine/docker.sock");
	d.run_id = util_env_or("RUN_ID", "");
	d.lab_image = util_env_or("LAB_IMAGE", "");
	d.owner = util_env_or("OWNER", "");
	d.lease = util_env_or("LEASE", NULL);
	pthread_mutex_init(&d.create_mu, NULL);
	const char *sock = util_env_or("PROXY_SOCK", "/proxy/docker.sock");
	if (!*d.run_id || !*d.lab_image) {
		fprintf(stderr, "dockerproxy: %s unset: refusing to run (it labels "
		    "and scopes everything)\n", *d.run_id ? "LAB_IMAGE" : "RUN_ID");
		return EXIT_USAGE;
	}
	/* every sibling carries the control plane's owner (core/gc.c):
	 * without it, a crash of ares would leave them behind for good */
	if (!dockerproxy_owner_ok(d.owner) ||
	    (d.lease && !dockerproxy_lease_ok(d.lease))) {
		fprintf(stderr, "dockerproxy: OWNER (or LEASE) unset or "
		    "malformed: refusing to run (it labels every sibling)\n");
		return EXIT_USAGE;
	}
	if (!dockerproxy_run_id_ok(d.run_id)) {
		fprintf(stderr, "dockerproxy: RUN_ID is not 1..%d of [A-Za-z0-9_.-] "
		    "(it names every sibling): refusing to run\n",
		    DOCKERPROXY_RUN_ID_MAX);
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sensor_init("dockerproxy");
	struct errbuf e = { 0 };
	if (choose_api(&d, &e) == -1) {
		fprintf(stderr, "dockerproxy: %s: refusing to run\n", e.msg);
		return EXIT_INTERNAL;
	}
	int fd = http_listen_unix(sock, 0666, &e);
	if (fd < 0) {
		fprintf(stderr, "dockerproxy: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	printf("dockerproxy listening on %s -> %s (API %s, run %s, image %s)\n",
	    sock, d.engine, d.api, d.run_id, d.lab_image);
	fflush(stdout);
	static struct http_server srv;
	srv.fd = fd;
	srv.is_unix = true;
	srv.handler = dproxy_handle;
	srv.ctx = &d;
	srv.max_conns = 16;
	http_serve(&srv);
	return EXIT_INTERNAL;
}
