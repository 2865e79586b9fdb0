/*
 * relay.c - the host's end of a real model's traffic (docs/lab.md,
 * docs/models.md).
 *
 * With a real model.url the lab has no route out: the gateway hands each
 * upstream call to this relay over a unix socket in the run's control
 * folder (RUN_DIR/ctl/relay.sock, mounted in the gateway only), and the
 * relay makes the call from the host with libcurl: the system CA bundle
 * (plus model.ca_file), HTTPS_PROXY / NO_PROXY as libcurl reads them, the
 * connect and per-attempt timeouts, bounded retries with jittered backoff
 * on connection errors, timeouts, 429 (Retry-After honoured, capped) and
 * 5xx, and a bounded answer (an oversize one becomes an error answer,
 * never cut JSON).  The real key lives here only, in sodium_malloc
 * memory, and is added as the Authorization header on the host: it never
 * enters a container.  The URL is fixed when the relay starts: the
 * gateway chooses the body of a call, never where it goes.
 *
 * The protocol, one call per connection (all lengths 4-byte big-endian):
 *   request  "ARQ1" <n> <n bytes: the chat completions JSON body>
 *   answer   "ARS1" <m> <m bytes: meta JSON> <b> <b bytes: body>
 * n and b at most RELAY_BODY_MAX, m at most RELAY_META_MAX; a bad or
 * oversize request is answered with status 400 / 413 and closed.  meta is
 * {"status": HTTP status given to the agent, "attempts": n,
 * "latency_ms": upstream time, "error": why (relay errors only)}.
 *
 * Threads: one accept thread, one detached worker per connection (at most
 * RELAY_CONNS at once); they share nothing with the drill's lever path
 * (their own lock, their own curl handles), so a slow model never delays
 * a kill.  relay_stop() wakes them (the transfer's progress callback and
 * the backoff sleeps watch the stop flag) and waits for them.
 *
 * The relay's own events are not recorded in the master chain: each call
 * is recorded by the gateway in its chain (event "upstream_call": status,
 * attempts, latency, token counts), which is what the agent was answered.
 */
#include "internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#define RELAY_REQ_TIMEOUT_MS 10000   /* the gateway's request frame */
#define RELAY_BACKOFF_MS     500     /* first retry wait */
#define RELAY_BACKOFF_MAX_MS 8000    /* one wait's cap (and Retry-After's) */
#define RELAY_WAITS_MAX_S    30      /* all waits of a call together */
#define RELAY_STOP_WAIT_S    5       /* relay_stop's wait for the calls */
#define RELAY_STOP_SEND_MS   1000    /* an answer frame's time after it */

struct relay {
	char *url;                 /* the chat completions URL */
	char *sock_path;
	char *ca_file;             /* or NULL */
	char *model;               /* model.name, every call's, or NULL */
	char *auth;                /* "Authorization: Bearer <key>"
	                              (sodium_malloc) or NULL */
	struct curl_slist hdr[3];  /* our own nodes: auth stays in
	                              sodium memory */
	int connect_timeout_ms;
	int timeout_s;
	int retries;
	int fd;                    /* listening socket */
	int stop;                  /* atomic */
	uint64_t stop_ns;          /* atomic: when it was set (mono ns) */
	pthread_t accept_thread;
	pthread_mutex_t mu;        /* the relay's own: workers only */
	pthread_cond_t cv;
	int active;
};

/* The total time a call may take (every attempt, every wait), in s. */
static int
relay_budget_s(const struct relay *r)
{
	return (r->timeout_s + (r->connect_timeout_ms + 999) / 1000) *
	    (r->retries + 1) + RELAY_WAITS_MAX_S;
}

int
relay_call_bound_s(const struct policy *p)
{
	return (p->model_timeout_s + (p->model_connect_timeout_ms + 999) /
	    1000) * (p->model_retries + 1) + RELAY_WAITS_MAX_S;
}

/* ---- framing ------------------------------------------------------ */

/* Read (want POLLIN) or write (POLLOUT) exactly n bytes of fd before the
 * mono deadline, watching the stop flag every 100 ms: a peer trickling
 * bytes holds a worker until the deadline at most, and never past
 * relay_stop() (a read) or RELAY_STOP_SEND_MS after it (a write: the
 * answer frame, "the relay stopped" among them, still goes out).  -1 on
 * error, end, stop or the deadline. */
static int
relay_io(struct relay *r, int fd, void *buf, size_t n, short want,
    uint64_t deadline)
{
	char *p = buf;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = want };
		uint64_t now = util_mono_ns();
		ssize_t k;
		int pr;

		if (__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
			uint64_t cap = __atomic_load_n(&r->stop_ns,
			    __ATOMIC_SEQ_CST) + RELAY_STOP_SEND_MS * 1000000ull;

			if (want != POLLOUT)
				return -1;
			if (deadline > cap)
				deadline = cap;
		}
		if (now >= deadline)
			return -1;
		pr = poll(&pfd, 1, deadline - now > 100000000ull ? 100 :
		    (int)((deadline - now) / 1000000ull) + 1);
		if (pr < 0 && errno != EINTR)
			return -1;
		if (pr <= 0)
			continue;
		if (want == POLLIN)
			k = recv(fd, p, n, MSG_DONTWAIT);
		else
			k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN ||
		    errno == EWOULDBLOCK))
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The deadline of a frame sent or read from now (mono ns). */
static uint64_t
relay_frame_deadline(void)
{
	return util_mono_ns() + RELAY_REQ_TIMEOUT_MS * 1000000ull;
}

/* 4-byte big-endian length of b. */
static uint32_t
relay_be32(const unsigned char b[4])
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
}

/* Store n as 4 bytes big-endian in b. */
static void
relay_put32(unsigned char b[4], uint32_t n)
{
	b[0] = (unsigned char)(n >> 24);
	b[1] = (unsigned char)(n >> 16);
	b[2] = (unsigned char)(n >> 8);
	b[3] = (unsigned char)n;
}

/* Send the answer frame: meta (serialised here, deleted) and body, within
 * RELAY_REQ_TIMEOUT_MS (RELAY_STOP_SEND_MS of a stop).  -1 on a write
 * error or the deadline. */
static int
relay_send_answer(struct relay *r, int fd, cJSON *meta, const char *body,
    size_t blen)
{
	char *m = cJSON_PrintUnformatted(meta);
	unsigned char hdr[8];
	uint64_t dl = relay_frame_deadline();
	size_t ml;
	int rc;

	cJSON_Delete(meta);
	if (m == NULL)
		return -1;
	ml = strlen(m);
	if (ml > RELAY_META_MAX || blen > RELAY_BODY_MAX) {
		free(m);
		return -1;
	}
	memcpy(hdr, "ARS1", 4);
	relay_put32(hdr + 4, (uint32_t)ml);
	rc = relay_io(r, fd, hdr, 8, POLLOUT, dl) == 0 &&
	    relay_io(r, fd, m, ml, POLLOUT, dl) == 0 ? 0 : -1;
	free(m);
	relay_put32(hdr, (uint32_t)blen);
	if (rc == 0)
		rc = relay_io(r, fd, hdr, 4, POLLOUT, dl) == 0 &&
		    relay_io(r, fd, (void *)body, blen, POLLOUT, dl) == 0 ?
		    0 : -1;
	return rc;
}

/* An answer the relay makes itself: status, an OpenAI-style error body
 * {"error": {message, type}} and meta with the error; "final": true
 * when the last attempt was one the relay retries (it ran out of
 * retries or budget: the gateway tells the agent not to retry). */
static void
relay_send_error_f(struct relay *r, int fd, int status, const char *type,
    const char *msg, int attempts, long latency_ms, bool final)
{
	cJSON *meta = cJSON_CreateObject(), *b = cJSON_CreateObject(), *er;
	char *txt;

	cJSON_AddNumberToObject(meta, "status", status);
	if (final)
		cJSON_AddBoolToObject(meta, "final", 1);
	cJSON_AddNumberToObject(meta, "attempts", attempts);
	cJSON_AddNumberToObject(meta, "latency_ms", (double)latency_ms);
	cJSON_AddStringToObject(meta, "error", msg);
	er = cJSON_AddObjectToObject(b, "error");
	cJSON_AddStringToObject(er, "message", msg);
	cJSON_AddStringToObject(er, "type", type);
	txt = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	(void)relay_send_answer(r, fd, meta, txt != NULL ? txt : "{}",
	    txt != NULL ? strlen(txt) : 2);
	free(txt);
}

/* relay_send_error_f, not final (nothing was retried). */
static void
relay_send_error(struct relay *r, int fd, int status, const char *type,
    const char *msg, int attempts, long latency_ms)
{
	relay_send_error_f(r, fd, status, type, msg, attempts, latency_ms,
	    false);
}

/* ---- the upstream call -------------------------------------------- */

struct relay_xfer {
	struct relay *r;
	char *buf;                 /* the answer so far */
	size_t len, cap;
	bool over;                 /* more than RELAY_BODY_MAX came */
	long retry_after_s;        /* -1: none */
};

/* CURLOPT_WRITEFUNCTION: append, or stop (over) past RELAY_BODY_MAX. */
static size_t
relay_write_cb(char *p, size_t sz, size_t n, void *ud)
{
	struct relay_xfer *x = ud;
	size_t k = sz * n;

	if (x->len + k > RELAY_BODY_MAX) {
		x->over = true;
		return 0;
	}
	if (x->len + k + 1 > x->cap) {
		x->cap = (x->len + k + 1) * 2;
		if (x->cap > RELAY_BODY_MAX + 1)
			x->cap = RELAY_BODY_MAX + 1;
		x->buf = xrealloc(x->buf, x->cap);
	}
	memcpy(x->buf + x->len, p, k);
	x->len += k;
	x->buf[x->len] = '\0';
	return k;
}

/* CURLOPT_HEADERFUNCTION: note a Retry-After of whole seconds. */
static size_t
relay_header_cb(char *p, size_t sz, size_t n, void *ud)
{
	struct relay_xfer *x = ud;
	size_t k = sz * n;

	if (k > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		char v[32];
		size_t i = 12, j = 0;

		while (i < k && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < k && j + 1 < sizeof v && p[i] >= '0' && p[i] <= '9')
			v[j++] = p[i++];
		v[j] = '\0';
		if (j > 0 && j < 7)
			x->retry_after_s = strtol(v, NULL, 10);
	}
	return k;
}

/* CURLOPT_XFERINFOFUNCTION: abort when the relay stops. */
static int
relay_progress_cb(void *ud, curl_off_t a, curl_off_t b, curl_off_t c,
    curl_off_t d)
{
	struct relay_xfer *x = ud;

	(void)a, (void)b, (void)c, (void)d;
	return __atomic_load_n(&x->r->stop, __ATOMIC_SEQ_CST) ? 1 : 0;
}

/* Is this curl error worth another attempt (the connection, not us)? */
static bool
relay_retryable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

/* Sleep ms, in slices, unless the relay stops.  false when it stopped. */
static bool
relay_sleep_ms(struct relay *r, long ms)
{
	while (ms > 0 && !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
		long s = ms < 50 ? ms : 50;
		struct timespec ts = { 0, s * 1000000L };

		nanosleep(&ts, NULL);
		ms -= s;
	}
	return !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST);
}

/* One attempt: POST body to the URL with the key.  Returns the curl
 * code; *status the HTTP status (0 without an answer), x the answer. */
static CURLcode
relay_attempt(struct relay *r, const char *body, size_t len,
    struct relay_xfer *x, long *status)
{
	CURL *c = curl_easy_init();
	CURLcode rc;

	*status = 0;
	if (c == NULL)
		return CURLE_FAILED_INIT;
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->hdr[0].data != NULL ?
	    &r->hdr[0] : &r->hdr[1]);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)r->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)r->timeout_s);
	if (r->ca_file != NULL) {
		/* instead of the system's trust, not beside it: libcurl
		 * also has a built-in CApath (/etc/ssl/certs on Debian) */
		curl_easy_setopt(c, CURLOPT_CAINFO, r->ca_file);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	}
#if LIBCURL_VERSION_NUM >= 0x075700
	/* cleanup does not wait for a threaded name lookup still running
	 * (relay_stop after an abort) */
	curl_easy_setopt(c, CURLOPT_QUICK_EXIT, 1L);
#endif
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, relay_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, relay_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, relay_progress_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	return rc;
}

/* The wait before attempt n+1 (n >= 1): RELAY_BACKOFF_MS * 2^(n-1),
 * capped, with jitter (half to all of it); a Retry-After in place of it,
 * capped too. */
static long
relay_backoff_ms(int n, long retry_after_s)
{
	long b = RELAY_BACKOFF_MS;
	int i;

	if (retry_after_s >= 0) {
		long ms = retry_after_s * 1000;

		return ms > RELAY_BACKOFF_MAX_MS ? RELAY_BACKOFF_MAX_MS : ms;
	}
	for (i = 1; i < n && b < RELAY_BACKOFF_MAX_MS; i++)
		b *= 2;
	if (b > RELAY_BACKOFF_MAX_MS)
		b = RELAY_BACKOFF_MAX_MS;
	return b / 2 + (long)randombytes_uniform((uint32_t)(b / 2 + 1));
}

/* ---- JSON without a tree ------------------------------------------- */
/*
 * The relay looks into the bodies it passes (a request to pin its model,
 * an answer for the key) without building a cJSON tree: a 4 MiB body of
 * "[0,0,..." is a 100+ MiB tree, and this is the process that pulls the
 * levers.  These scanners are iterative, in place, linear; they check the
 * shape (an object, strings terminated, nothing after it), never the
 * whole grammar: the gateway's budgeted parser reads the answer.
 */

#define RELAY_DECODE_LEVELS 4        /* JSON in a string in a string ... */

static size_t
relay_ws(const char *b, size_t i, size_t len)
{
	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' ||
	    b[i] == '\r'))
		i++;
	return i;
}

/* The end of the JSON string opening at b[i] == '"' (the index after its
 * closing quote), or 0 when it does not end within len. */
static size_t
relay_str_end(const char *b, size_t i, size_t len)
{
	for (i++; i < len; i++) {
		if (b[i] == '\\')
			i++;
		else if (b[i] == '"')
			return i + 1;
	}
	return 0;
}

/* Four hex digits at s (n left) as a number, or -1. */
static long
relay_hex4(const char *s, size_t n)
{
	long v = 0;

	if (n < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		char c = s[k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* Undo JSON string escapes in s[0..n) into out (room for n + 1: a decoded
 * string is never longer); bytes that are no escape stay as they are, a
 * lone surrogate becomes U+FFFD.  The decoded length. */
static size_t
relay_unescape(const char *s, size_t n, char *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		long cp;

		if (s[i] != '\\' || i + 1 >= n) {
			out[o++] = s[i++];
			continue;
		}
		switch (s[i + 1]) {
		case 'b': out[o++] = '\b'; i += 2; continue;
		case 'f': out[o++] = '\f'; i += 2; continue;
		case 'n': out[o++] = '\n'; i += 2; continue;
		case 'r': out[o++] = '\r'; i += 2; continue;
		case 't': out[o++] = '\t'; i += 2; continue;
		case 'u': break;
		default: out[o++] = s[i + 1]; i += 2; continue;
		}
		cp = relay_hex4(s + i + 2, n - i - 2);
		if (cp < 0) {
			out[o++] = s[i++];
			continue;
		}
		i += 6;
		if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n && s[i] == '\\' &&
		    s[i + 1] == 'u') {
			long lo = relay_hex4(s + i + 2, n - i - 2);

			if (lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			}
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xfffd;
		/* UTF-8: a \uXXXX (6 bytes, 12 for a pair) never takes more */
		if (cp < 0x80)
			out[o++] = (char)cp;
		else if (cp < 0x800) {
			out[o++] = (char)(0xc0 | cp >> 6);
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[o++] = (char)(0xe0 | cp >> 12);
			out[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[o++] = (char)(0xf0 | cp >> 18);
			out[o++] = (char)(0x80 | (cp >> 12 & 0x3f));
			out[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	out[o] = '\0';
	return o;
}

/* s[0..n) into out (room for n + 1) with every byte not in set (the
 * key's own bytes) removed.  The new length. */
static size_t
relay_keep(const char *s, size_t n, const bool set[256], char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		if (set[(unsigned char)s[i]])
			out[o++] = s[i];
	out[o] = '\0';
	return o;
}

/* Does s[0..n) hold key as it is, with every byte outside the key's
 * own set (set) removed (a control byte, a zero-width space inserted),
 * or with what util_sanitize drops (ESC sequences, C0 and C1 controls)
 * and then those bytes removed?  tmp has room for n + 1. */
static bool
relay_holds_1(const char *s, size_t n, const char *key, size_t kl,
    const bool set[256], char *tmp)
{
	size_t m;

	if (n < kl)
		return false;
	if (memmem(s, n, key, kl) != NULL)
		return true;
	m = relay_keep(s, n, set, tmp);
	if (m >= kl && memmem(tmp, m, key, kl) != NULL)
		return true;
	m = util_sanitize(tmp, n + 1, s, n, false);
	m = relay_keep(tmp, m, set, tmp);
	return m >= kl && memmem(tmp, m, key, kl) != NULL;
}

/* Does s[0..n) hold key (see relay_holds_1), as it is or under up to
 * RELAY_DECODE_LEVELS decodings of its escapes (a key in tool-call
 * arguments is JSON in a JSON string)?  tmp and tmp2 have room for
 * n + 1 each. */
static bool
relay_str_holds(const char *s, size_t n, const char *key, size_t kl,
    const bool set[256], char *tmp, char *tmp2)
{
	for (int lv = 0;; lv++) {
		if (relay_holds_1(s, n, key, kl, set, tmp2))
			return true;
		if (lv == RELAY_DECODE_LEVELS || memchr(s, '\\', n) == NULL)
			return false;
		n = relay_unescape(s, n, tmp);
		s = tmp;
	}
}

/* Is buf[0..len) one JSON object (first and last non-space bytes '{' and
 * '}', every string ended)?  *has_key: key (kl bytes, 0: none) is in it
 * raw, or in a string once decoded (see relay_str_holds). */
static bool
relay_answer_scan(const char *buf, size_t len, const char *key, size_t kl,
    bool *has_key)
{
	size_t i = relay_ws(buf, 0, len), last = len;
	bool set[256] = { false };
	char *tmp, *tmp2;

	*has_key = kl > 0 && len >= kl && memmem(buf, len, key, kl) != NULL;
	while (last > i && (buf[last - 1] == ' ' || buf[last - 1] == '\t' ||
	    buf[last - 1] == '\n' || buf[last - 1] == '\r'))
		last--;
	if (i >= last || buf[i] != '{' || buf[last - 1] != '}')
		return false;
	for (size_t k = 0; k < kl; k++)
		set[(unsigned char)key[k]] = true;
	tmp = xmalloc(len + 1);
	tmp2 = xmalloc(len + 1);
	for (; i < last; i++) {
		size_t e;

		if (buf[i] != '"')
			continue;
		e = relay_str_end(buf, i, last);
		if (e == 0) {
			free(tmp);
			free(tmp2);
			return false;
		}
		if (kl > 0 && !*has_key && relay_str_holds(buf + i + 1,
		    e - i - 2, key, kl, set, tmp, tmp2))
			*has_key = true;
		i = e - 1;
	}
	free(tmp);
	free(tmp2);
	return true;
}

/* The end of the JSON value starting at b[i] (strings and nesting
 * followed, no recursion), or 0 when it is cut or empty. */
static size_t
relay_value_end(const char *b, size_t i, size_t len)
{
	size_t depth = 0;

	if (i >= len)
		return 0;
	if (b[i] != '{' && b[i] != '[' && b[i] != '"') {
		size_t s = i;

		while (i < len && strchr(",}] \t\r\n", b[i]) == NULL)
			i++;
		return i > s ? i : 0;
	}
	for (; i < len; i++) {
		if (b[i] == '"') {
			size_t e = relay_str_end(b, i, len);

			if (e == 0)
				return 0;
			if (depth == 0)
				return e;
			i = e - 1;
		} else if (b[i] == '{' || b[i] == '[')
			depth++;
		else if (b[i] == '}' || b[i] == ']') {
			if (depth == 0)
				return 0;
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

/*
 * The top-level members a request may have (docs/lab.md), compared with
 * the decoded name exactly.  An upstream may read other names as one of
 * these (Go's encoding/json folds case and Unicode, the last duplicate
 * winning; cJSON stops a name at a NUL), or route and bill by them
 * (OpenRouter's "models", "provider", "service_tier", "store"): every
 * other name is refused.
 */
static const char *const relay_members[] = {
	"model", "messages", "tools", "tool_choice", "temperature", "top_p",
	"max_tokens", "max_completion_tokens", "stop", "seed",
	"response_format", "parallel_tool_calls", "frequency_penalty",
	"presence_penalty", "user", "stream", "n",
};
#define RELAY_MEMBERS (sizeof relay_members / sizeof relay_members[0])
#define RELAY_NAME_MAX 32            /* longer than every listed name */

/* The index of the member name[0..nl) in relay_members, or -1; its why
 * (a 400's message) when it is not there. */
static int
relay_member(const char *name, size_t nl, char *why, size_t whylen)
{
	for (size_t k = 0; k < nl; k++) {
		unsigned char c = (unsigned char)name[k];

		if (c < 0x20 || c >= 0x7f) {
			snprintf(why, whylen, "relay: a top-level member name "
			    "with a NUL or non-ASCII byte (or a control byte) "
			    "is not allowed");
			return -1;
		}
	}
	for (size_t k = 0; k < RELAY_MEMBERS; k++)
		if (strlen(relay_members[k]) == nl &&
		    memcmp(relay_members[k], name, nl) == 0)
			return (int)k;
	for (size_t k = 0; k < RELAY_MEMBERS; k++)
		if (strlen(relay_members[k]) == nl &&
		    strncasecmp(relay_members[k], name, nl) == 0) {
			snprintf(why, whylen, "relay: the member \"%.*s\" is not "
			    "allowed (names are case-sensitive: \"%s\")",
			    (int)nl, name, relay_members[k]);
			return -1;
		}
	snprintf(why, whylen, "relay: the member \"%.*s\" is not allowed "
	    "(docs/models.md lists those that are)", (int)nl, name);
	return -1;
}

/*
 * The request the relay sends: body with its top-level "model" member
 * (its name decoded: "mo\u0064el" too) set to model, or one added.
 * Refused (NULL, why: a 400): a top-level member not in relay_members
 * (a case variant, a name with a NUL or non-ASCII byte included), one
 * member twice, a "stream" other than false/null and an "n" other than
 * 1/null (streaming is not relayed; n > 1 multiplies the cost).  Returns
 * the new body (caller frees, *olen its length).
 */
static char *
relay_pin_request(const char *b, size_t len, const char *model,
    size_t *olen, char *why, size_t whylen)
{
	size_t i = relay_ws(b, 0, len), copied, o = 0, ml;
	size_t cap;
	bool any = false, members = false, seen[RELAY_MEMBERS] = { false };
	char *out, name[RELAY_NAME_MAX + 8];
	int m;

	ml = strlen(model);
	if (i >= len || b[i] != '{') {
		snprintf(why, whylen, "relay: the request is not a JSON object");
		return NULL;
	}
	cap = len + ml + 16;
	out = xmalloc(cap);
	i++;
	memcpy(out, b, i);
	o = copied = i;
	for (;;) {
		size_t ns, ne, vs, ve, nl;

		i = relay_ws(b, i, len);
		if (i < len && b[i] == '}' && !members)
			break;
		if (i >= len || b[i] != '"')
			goto bad;
		ns = i;
		ne = relay_str_end(b, i, len);
		if (ne == 0)
			goto bad;
		/* 6 bytes per \uXXXX: a longer name is no listed one */
		if (ne - ns - 2 > RELAY_NAME_MAX * 6) {
			snprintf(why, whylen, "relay: a top-level member name "
			    "over %d bytes is not allowed", RELAY_NAME_MAX);
			free(out);
			return NULL;
		}
		{
			char tmp[RELAY_NAME_MAX * 6 + 1];

			nl = relay_unescape(b + ns + 1, ne - ns - 2, tmp);
			if (nl > RELAY_NAME_MAX) {
				snprintf(why, whylen, "relay: a top-level member "
				    "name over %d bytes is not allowed",
				    RELAY_NAME_MAX);
				free(out);
				return NULL;
			}
			memcpy(name, tmp, nl + 1);
		}
		m = relay_member(name, nl, why, whylen);
		if (m < 0) {
			free(out);
			return NULL;
		}
		if (seen[m]) {
			snprintf(why, whylen, "relay: the member \"%s\" is there "
			    "twice", relay_members[m]);
			free(out);
			return NULL;
		}
		seen[m] = true;
		i = relay_ws(b, ne, len);
		if (i >= len || b[i] != ':')
			goto bad;
		vs = relay_ws(b, i + 1, len);
		ve = relay_value_end(b, vs, len);
		if (ve == 0)
			goto bad;
		members = true;
		if (strcmp(name, "stream") == 0 && !(ve - vs == 5 &&
		    memcmp(b + vs, "false", 5) == 0) && !(ve - vs == 4 &&
		    memcmp(b + vs, "null", 4) == 0)) {
			snprintf(why, whylen, "relay: streaming is not supported "
			    "(\"stream\" must be false)");
			free(out);
			return NULL;
		}
		if (strcmp(name, "n") == 0 && !(ve - vs == 1 && b[vs] == '1') &&
		    !(ve - vs == 4 && memcmp(b + vs, "null", 4) == 0)) {
			snprintf(why, whylen, "relay: \"n\" must be 1 (one "
			    "choice per call)");
			free(out);
			return NULL;
		}
		if (strcmp(name, "model") == 0) {
			/* copy up to the value, then the pinned name */
			if (o + (vs - copied) + ml + 2 > cap) {
				cap = (o + (vs - copied) + ml + 2) * 2;
				out = xrealloc(out, cap);
			}
			memcpy(out + o, b + copied, vs - copied);
			o += vs - copied;
			out[o++] = '"';
			memcpy(out + o, model, ml);
			o += ml;
			out[o++] = '"';
			copied = ve;
			any = true;
		}
		i = relay_ws(b, ve, len);
		if (i < len && b[i] == ',') {
			i++;
			continue;
		}
		if (i < len && b[i] == '}')
			break;
		goto bad;
	}
	if (relay_ws(b, i + 1, len) != len)
		goto bad;
	if (o + (len - copied) + ml + 16 > cap) {
		cap = o + (len - copied) + ml + 16;
		out = xrealloc(out, cap);
	}
	if (!any) {
		/* "{" is out[0..o): the model goes first */
		o += (size_t)snprintf(out + o, cap - o, "\"model\":\"%s\"%s",
		    model, members ? "," : "");
	}
	memcpy(out + o, b + copied, len - copied);
	o += len - copied;
	out[o] = '\0';
	*olen = o;
	return out;
bad:
	snprintf(why, whylen, "relay: the request is not a JSON object");
	free(out);
	return NULL;
}

/* The attempts of one call: until an answer that is not retried, the
 * attempts run out or the budget would be passed.  *x gets the last
 * answer (caller frees x->buf), *status its HTTP status, *attempts how
 * many were made, *final whether the last one is one the relay retries;
 * returns the last attempt's curl code. */
static CURLcode
relay_exchange(struct relay *r, const char *body, size_t len,
    struct relay_xfer *x, long *status, int *attempts, bool *final)
{
	uint64_t end = util_mono_ns() +
	    (uint64_t)relay_budget_s(r) * 1000000000ull;
	long waited_ms = 0;
	int attempt;
	CURLcode rc = CURLE_OK;

	*final = false;
	*status = 0;
	*x = (struct relay_xfer){ .r = r, .retry_after_s = -1 };
	for (attempt = 1;; attempt++) {
		long wait;
		bool again;

		free(x->buf);
		*x = (struct relay_xfer){ .r = r, .retry_after_s = -1 };
		rc = relay_attempt(r, body, len, x, status);
		again = (rc != CURLE_OK && !x->over && relay_retryable(rc)) ||
		    (rc == CURLE_OK && (*status == 429 || *status >= 500));
		*final = again;
		if (!again || attempt > r->retries)
			break;
		wait = relay_backoff_ms(attempt, *status == 429 ?
		    x->retry_after_s : -1);
		if (waited_ms + wait > RELAY_WAITS_MAX_S * 1000L ||
		    util_mono_ns() + (uint64_t)wait * 1000000ull +
		    (uint64_t)r->timeout_s * 1000000000ull > end)
			break;
		waited_ms += wait;
		if (!relay_sleep_ms(r, wait))
			break;
	}
	*attempts = attempt;
	return rc;
}

/* The key r holds (its bytes after "Authorization: Bearer "), "" when
 * none. */
static const char *
relay_key(const struct relay *r)
{
	return r->auth != NULL ? r->auth + strlen("Authorization: Bearer ") :
	    "";
}

/* One call for the gateway on fd: relay_exchange, then the answer (or
 * the relay's error) is sent back. */
static void
relay_call(struct relay *r, int fd, const char *body0, size_t len0)
{
	char why[160];
	size_t len = len0;
	char *pinned = NULL;
	const char *body = body0;
	uint64_t t0 = util_mono_ns();
	long status = 0;
	int attempt;
	CURLcode rc;
	struct relay_xfer x;
	bool final;                /* the last attempt is one retried */

	if (r->model != NULL) {
		pinned = relay_pin_request(body0, len0, r->model, &len, why,
		    sizeof why);
		if (pinned == NULL) {
			relay_send_error(r, fd, 400, "invalid_request_error", why,
			    0, 0);
			return;
		}
		body = pinned;
	}
	rc = relay_exchange(r, body, len, &x, &status, &attempt, &final);
	free(pinned);
	long ms = (long)((util_mono_ns() - t0) / 1000000ull);
	if (x.over) {
		char msg[128];

		snprintf(msg, sizeof msg, "the model's answer is over %u bytes",
		    (unsigned)RELAY_BODY_MAX);
		relay_send_error(r, fd, 502, "upstream_error", msg, attempt, ms);
	} else if (rc != CURLE_OK) {
		char msg[256];

		snprintf(msg, sizeof msg, "model endpoint: %s",
		    __atomic_load_n(&r->stop, __ATOMIC_SEQ_CST) ?
		    "the relay stopped" : curl_easy_strerror(rc));
		relay_send_error_f(r, fd, rc == CURLE_OPERATION_TIMEDOUT ? 504 :
		    502, "upstream_error", msg, attempt, ms, final);
	} else {
		const char *key = relay_key(r);
		bool ok2 = status >= 200 && status < 300, has_key;
		bool obj = x.buf != NULL && relay_answer_scan(x.buf, x.len, key,
		    strlen(key), &has_key);
		cJSON *meta;

		if (!obj || has_key) {
			/* only JSON the relay looked through reaches the lab;
			 * an error keeps its status (429 and 5xx stay retried) */
			char msg[160];

			snprintf(msg, sizeof msg, "the model's answer (HTTP %ld) %s",
			    status, !obj ? "is not a JSON object" :
			    "held the API key: withheld");
			relay_send_error_f(r, fd, ok2 ? 502 : (int)status,
			    "upstream_error", msg, attempt, ms, final);
			free(x.buf);
			return;
		}
		meta = cJSON_CreateObject();
		cJSON_AddNumberToObject(meta, "status", (double)status);
		cJSON_AddNumberToObject(meta, "attempts", attempt);
		cJSON_AddNumberToObject(meta, "latency_ms", (double)ms);
		if (final)
			cJSON_AddBoolToObject(meta, "final", 1);
		(void)relay_send_answer(r, fd, meta, x.buf, x.len);
	}
	free(x.buf);
}

/* ---- the threads -------------------------------------------------- */

struct relay_conn {
	struct relay *r;
	int fd;
};

/* A worker: read the request frame (bounded in size and time), make the
 * call, answer, close. */
static void *
relay_worker(void *arg)
{
	struct relay_conn *cn = arg;
	struct relay *r = cn->r;
	int fd = cn->fd;
	unsigned char hdr[8];
	uint64_t dl = relay_frame_deadline();   /* the whole request frame */
	uint32_t n;
	char *body;

	free(cn);
	if (relay_io(r, fd, hdr, 8, POLLIN, dl) == -1 ||
	    memcmp(hdr, "ARQ1", 4) != 0) {
		relay_send_error(r, fd, 400, "invalid_request_error",
		    "relay: not an ARQ1 frame", 0, 0);
		goto out;
	}
	n = relay_be32(hdr + 4);
	if (n > RELAY_BODY_MAX) {
		relay_send_error(r, fd, 413, "invalid_request_error",
		    "relay: request frame over its bound", 0, 0);
		goto out;
	}
	body = xmalloc((size_t)n + 1);
	if (relay_io(r, fd, body, n, POLLIN, dl) == -1) {
		free(body);
		goto out;
	}
	body[n] = '\0';
	relay_call(r, fd, body, n);
	free(body);
out:
	close(fd);
	pthread_mutex_lock(&r->mu);
	r->active--;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* The accept thread: polls (200 ms) so that relay_stop() ends it; more
 * than RELAY_CONNS calls at once are answered 503 at once. */
static void *
relay_accept(void *arg)
{
	struct relay *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		struct relay_conn *cn;
		pthread_t t;
		int fd;
		bool full;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept4(r->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&r->mu);
		full = r->active >= RELAY_CONNS;
		if (!full)
			r->active++;
		pthread_mutex_unlock(&r->mu);
		if (full) {
			/* a flood of connections gets its 503s at most every
			 * 10 ms: the accept thread never spins on them */
			static const struct timespec pace = { 0, 10000000L };

			relay_send_error(r, fd, 503, "upstream_error",
			    "relay: too many calls at once", 0, 0);
			close(fd);
			nanosleep(&pace, NULL);
			continue;
		}
		cn = xmalloc(sizeof *cn);
		cn->r = r;
		cn->fd = fd;
		if (pthread_create(&t, NULL, relay_worker, cn) != 0) {
			free(cn);
			close(fd);
			pthread_mutex_lock(&r->mu);
			r->active--;
			pthread_mutex_unlock(&r->mu);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

/* ---- start and stop ----------------------------------------------- */

/* Free r's memory (the key zeroed by sodium_free). */
static void
relay_free(struct relay *r)
{
	if (r->auth != NULL)
		sodium_free(r->auth);
	free(r->url);
	free(r->sock_path);
	free(r->ca_file);
	free(r->model);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

/* chown (unless uid < 0) and chmod 0600 the socket at path without
 * following a symlink: the node is opened O_PATH|O_NOFOLLOW, checked to
 * be a socket, then changed through its fd.  -1 + e. */
static int
relay_own_socket(const char *path, long uid, long gid, struct errbuf *e)
{
	struct stat st;
	char proc[64];
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: %s is not the socket "
		    "just bound (%s)", path, fd < 0 ? strerror(errno) :
		    "replaced");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (uid >= 0 && fchownat(fd, "", (uid_t)uid, (gid_t)gid,
	    AT_EMPTY_PATH) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: chown %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	/* fchmod does not take an O_PATH fd; its /proc link is the node */
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	(void)chmod(proc, 0600);
	close(fd);
	return 0;
}

/*
 * A relay for cfg without its socket: the settings checked (the key, the
 * model name, the CA file), the key copied into sodium memory, the header
 * list.  relay_start listens with it; relay_complete calls with it.  NULL
 * + e (ERRBUF_INPUT: a bad key, model name or ca_file).  relay_free frees.
 */
static struct relay *
relay_new(const struct relay_config *cfg, struct errbuf *e)
{
	struct relay *r;
	size_t kl = cfg->key != NULL ? strlen(cfg->key) : 0;

	for (size_t i = 0; i < kl; i++)
		if ((unsigned char)cfg->key[i] <= 0x20 ||
		    (unsigned char)cfg->key[i] == 0x7f) {
			/* it goes into a header line: no CR, LF, space */
			errbuf_set(e, ERRBUF_INPUT, "model.key_env: the key has a "
			    "space or control character (byte %zu)", i);
			return NULL;
		}
	if (kl > 8192) {
		errbuf_set(e, ERRBUF_INPUT, "model.key_env: the key is over "
		    "8192 bytes");
		return NULL;
	}
	if (cfg->model != NULL && (cfg->model[0] == '\0' ||
	    strlen(cfg->model) > 255 || strpbrk(cfg->model, "\"\\") != NULL)) {
		errbuf_set(e, ERRBUF_INPUT, "model.name: empty, too long, or "
		    "with a quote or backslash");
		return NULL;
	}
	for (const char *m = cfg->model; m != NULL && *m; m++)
		if ((unsigned char)*m < 0x20 || *m == 0x7f) {
			errbuf_set(e, ERRBUF_INPUT, "model.name: a control "
			    "character");
			return NULL;
		}
	if (cfg->ca_file != NULL && access(cfg->ca_file, R_OK) == -1) {
		errbuf_set(e, ERRBUF_INPUT, "model.ca_file %s: %s",
		    cfg->ca_file, strerror(errno));
		return NULL;
	}
	if (sodium_init() < 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: sodium_init failed");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: curl_global_init failed");
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->fd = -1;
	r->url = xstrdup(cfg->url);
	r->sock_path = cfg->sock_path != NULL ? xstrdup(cfg->sock_path) :
	    NULL;
	r->ca_file = cfg->ca_file != NULL ? xstrdup(cfg->ca_file) : NULL;
	r->model = cfg->model != NULL ? xstrdup(cfg->model) : NULL;
	r->connect_timeout_ms = cfg->connect_timeout_ms;
	r->timeout_s = cfg->timeout_s;
	r->retries = cfg->retries;
	if (kl > 0) {
		size_t al = strlen("Authorization: Bearer ") + kl + 1;

		r->auth = sodium_malloc(al);
		if (r->auth == NULL)
			util_fatal("relay: sodium_malloc failed");
		snprintf(r->auth, al, "Authorization: Bearer %s", cfg->key);
		(void)sodium_mlock(r->auth, al);
	}
	/* the header list: our own nodes, so the key is never copied into
	 * a list libcurl would free without zeroing */
	r->hdr[0] = (struct curl_slist){ r->auth, &r->hdr[1] };
	r->hdr[1] = (struct curl_slist){ (char *)"Content-Type: "
	    "application/json", &r->hdr[2] };
	r->hdr[2] = (struct curl_slist){ (char *)"Expect:", NULL };

	return r;
}

struct relay *
relay_start(const struct relay_config *cfg, struct errbuf *e)
{
	struct relay *r;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(cfg->sock_path) >= sizeof sa.sun_path) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: socket path %s is too "
		    "long", cfg->sock_path);
		return NULL;
	}
	r = relay_new(cfg, e);
	if (r == NULL)
		return NULL;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", cfg->sock_path);
	(void)unlink(cfg->sock_path);
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->fd < 0 || bind(r->fd, (struct sockaddr *)&sa, sizeof sa) == -1 ||
	    listen(r->fd, 16) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: %s: %s", cfg->sock_path,
		    strerror(errno));
		goto fail;
	}
	/* the gateway runs as the sensors' uid: the socket is theirs, and
	 * the folder (0700, the gateway's only) is what keeps others out.
	 * The folder is writable by that uid: the path may have become a
	 * symlink since bind, so the owner and mode are set on what an
	 * O_PATH|O_NOFOLLOW open finds there, and only if it is a socket */
	if (relay_own_socket(cfg->sock_path, cfg->owner_uid, cfg->owner_gid,
	    e) == -1)
		goto fail;
	if (pthread_create(&r->accept_thread, NULL, relay_accept, r) != 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: cannot start its thread");
		goto fail;
	}
	return r;
fail:
	if (r->fd >= 0)
		close(r->fd);
	(void)unlink(cfg->sock_path);
	relay_free(r);
	return NULL;
}

void
relay_stop(struct relay *r)
{
	if (r == NULL)
		return;
	__atomic_store_n(&r->stop_ns, util_mono_ns(), __ATOMIC_SEQ_CST);
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(r->accept_thread, NULL);
	close(r->fd);
	(void)unlink(r->sock_path);
	/* the workers watch the stop flag (frames, transfers, waits): they
	 * end within a few hundred ms; past RELAY_STOP_WAIT_S one that is
	 * stuck keeps r (leaked, never freed under it) */
	struct timespec until;
	int left;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += RELAY_STOP_WAIT_S;
	pthread_mutex_lock(&r->mu);
	while (r->active > 0 && pthread_cond_timedwait(&r->cv, &r->mu,
	    &until) != ETIMEDOUT)
		;
	left = r->active;
	pthread_mutex_unlock(&r->mu);
	if (left > 0) {
		fprintf(stderr, "ares: model relay: %d call(s) did not end "
		    "within %d s of the stop; left running\n", left,
		    RELAY_STOP_WAIT_S);
		return;
	}
	relay_free(r);
}

/*
 * One chat completions call made from this process (no socket, no
 * thread: the fix loop's own call, core/fix_model.c), with the relay's
 * rules: cfg's URL, key (in sodium memory, zeroed after), CA file,
 * timeouts, bounded retries with backoff, model pinned, answer bounded
 * and scanned.  0 with out filled (out->body a JSON object, caller
 * frees); -1 + e when the settings are bad, no answer came, the answer
 * is over RELAY_BODY_MAX, not a JSON object, held the key (withheld), or
 * its status is not 2xx (out->status, out->attempts are set either way).
 */
int
relay_complete(const struct relay_config *cfg, const char *body, size_t len,
    struct relay_answer *out, struct errbuf *e)
{
	struct relay *r;
	struct relay_xfer x;
	char why[160], *pinned = NULL;
	uint64_t t0 = util_mono_ns();
	CURLcode rc;
	bool final, has_key = false;
	int ret = -1;

	memset(out, 0, sizeof *out);
	r = relay_new(cfg, e);
	if (r == NULL)
		return -1;
	if (r->model != NULL) {
		pinned = relay_pin_request(body, len, r->model, &len, why,
		    sizeof why);
		if (pinned == NULL) {
			errbuf_set(e, ERRBUF_INPUT, "%s", why);
			goto out;
		}
		body = pinned;
	}
	rc = relay_exchange(r, body, len, &x, &out->status, &out->attempts,
	    &final);
	out->latency_ms = (long)((util_mono_ns() - t0) / 1000000ull);
	if (x.over)
		errbuf_set(e, ERRBUF_INTERNAL, "the model's answer is over %u "
		    "bytes", (unsigned)RELAY_BODY_MAX);
	else if (rc != CURLE_OK)
		errbuf_set(e, ERRBUF_INTERNAL, "model endpoint: %s (%d "
		    "attempt(s))", curl_easy_strerror(rc), out->attempts);
	else if (x.buf == NULL || !relay_answer_scan(x.buf, x.len,
	    relay_key(r), strlen(relay_key(r)), &has_key))
		errbuf_set(e, ERRBUF_INTERNAL, "the model's answer (HTTP %ld) "
		    "is not a JSON object", out->status);
	else if (has_key)
		errbuf_set(e, ERRBUF_INTERNAL, "the model's answer (HTTP %ld) "
		    "held the API key: withheld", out->status);
	else if (out->status < 200 || out->status >= 300)
		errbuf_set(e, ERRBUF_INTERNAL, "the model answered HTTP %ld "
		    "(%d attempt(s))", out->status, out->attempts);
	else {
		out->body = x.buf;
		out->len = x.len;
		x.buf = NULL;
		ret = 0;
	}
	free(x.buf);
out:
	free(pinned);
	relay_free(r);
	return ret;
}
