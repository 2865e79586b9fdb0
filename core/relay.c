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

struct relay {
	char *url;                 /* the chat completions URL */
	char *sock_path;
	char *ca_file;             /* or NULL */
	char *auth;                /* "Authorization: Bearer <key>"
	                              (sodium_malloc) or NULL */
	struct curl_slist hdr[3];  /* our own nodes: auth stays in
	                              sodium memory */
	int connect_timeout_ms;
	int timeout_s;
	int retries;
	int fd;                    /* listening socket */
	int stop;                  /* atomic */
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

/* Read exactly n bytes (each read bounded by the socket's timeout).
 * -1 on error, end or timeout. */
static int
relay_read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t k = read(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Write exactly n bytes (bounded by the socket's timeout).  -1 on error. */
static int
relay_write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
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

/* Send the answer frame: meta (serialised here, deleted) and body.  -1 on
 * a write error. */
static int
relay_send_answer(int fd, cJSON *meta, const char *body, size_t blen)
{
	char *m = cJSON_PrintUnformatted(meta);
	unsigned char hdr[8];
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
	rc = relay_write_full(fd, hdr, 8) == 0 &&
	    relay_write_full(fd, m, ml) == 0 ? 0 : -1;
	free(m);
	relay_put32(hdr, (uint32_t)blen);
	if (rc == 0)
		rc = relay_write_full(fd, hdr, 4) == 0 &&
		    relay_write_full(fd, body, blen) == 0 ? 0 : -1;
	return rc;
}

/* An answer the relay makes itself: status, an OpenAI-style error body
 * {"error": {message, type}} and meta with the error. */
static void
relay_send_error(int fd, int status, const char *type, const char *msg,
    int attempts, long latency_ms)
{
	cJSON *meta = cJSON_CreateObject(), *b = cJSON_CreateObject(), *er;
	char *txt;

	cJSON_AddNumberToObject(meta, "status", status);
	cJSON_AddNumberToObject(meta, "attempts", attempts);
	cJSON_AddNumberToObject(meta, "latency_ms", (double)latency_ms);
	cJSON_AddStringToObject(meta, "error", msg);
	er = cJSON_AddObjectToObject(b, "error");
	cJSON_AddStringToObject(er, "message", msg);
	cJSON_AddStringToObject(er, "type", type);
	txt = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	(void)relay_send_answer(fd, meta, txt != NULL ? txt : "{}",
	    txt != NULL ? strlen(txt) : 2);
	free(txt);
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
	if (r->ca_file != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, r->ca_file);
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

/* Replace every copy of the key in buf with '*' (an echo of the
 * Authorization header must not reach the lab). */
static void
relay_scrub(const struct relay *r, char *buf, size_t len)
{
	const char *key;
	size_t kl;

	if (r->auth == NULL)
		return;
	key = r->auth + strlen("Authorization: Bearer ");
	kl = strlen(key);
	if (kl == 0 || len < kl)
		return;
	for (size_t i = 0; i + kl <= len; i++)
		if (memcmp(buf + i, key, kl) == 0)
			memset(buf + i, '*', kl);
}

/* One call for the gateway on fd: attempts until an answer that is not
 * retried, the attempts run out or the budget would be passed; the answer
 * (or the relay's error) is sent back. */
static void
relay_call(struct relay *r, int fd, const char *body, size_t len)
{
	uint64_t t0 = util_mono_ns();
	uint64_t end = t0 + (uint64_t)relay_budget_s(r) * 1000000000ull;
	long waited_ms = 0, status = 0;
	int attempt;
	CURLcode rc = CURLE_OK;
	struct relay_xfer x = { .r = r };

	for (attempt = 1;; attempt++) {
		long wait;
		bool again;

		free(x.buf);
		x = (struct relay_xfer){ .r = r, .retry_after_s = -1 };
		rc = relay_attempt(r, body, len, &x, &status);
		again = (rc != CURLE_OK && !x.over && relay_retryable(rc)) ||
		    (rc == CURLE_OK && (status == 429 || status >= 500));
		if (!again || attempt > r->retries)
			break;
		wait = relay_backoff_ms(attempt, status == 429 ?
		    x.retry_after_s : -1);
		if (waited_ms + wait > RELAY_WAITS_MAX_S * 1000L ||
		    util_mono_ns() + (uint64_t)wait * 1000000ull +
		    (uint64_t)r->timeout_s * 1000000000ull > end)
			break;
		waited_ms += wait;
		if (!relay_sleep_ms(r, wait))
			break;
	}
	long ms = (long)((util_mono_ns() - t0) / 1000000ull);
	if (x.over) {
		char msg[128];

		snprintf(msg, sizeof msg, "the model's answer is over %u bytes",
		    (unsigned)RELAY_BODY_MAX);
		relay_send_error(fd, 502, "upstream_error", msg, attempt, ms);
	} else if (rc != CURLE_OK) {
		char msg[256];

		snprintf(msg, sizeof msg, "model endpoint: %s",
		    __atomic_load_n(&r->stop, __ATOMIC_SEQ_CST) ?
		    "the relay stopped" : curl_easy_strerror(rc));
		relay_send_error(fd, rc == CURLE_OPERATION_TIMEDOUT ? 504 :
		    502, "upstream_error", msg, attempt, ms);
	} else {
		cJSON *j = NULL, *meta;

		if (x.buf == NULL)
			x.buf = xstrdup("");
		if (status >= 200 && status < 300) {
			j = cJSON_ParseWithLength(x.buf, x.len);
			if (!cJSON_IsObject(j)) {
				cJSON_Delete(j);
				relay_send_error(fd, 502, "upstream_error",
				    "the model's answer is not a JSON object",
				    attempt, ms);
				free(x.buf);
				return;
			}
			cJSON_Delete(j);
		}
		relay_scrub(r, x.buf, x.len);
		meta = cJSON_CreateObject();
		cJSON_AddNumberToObject(meta, "status", (double)status);
		cJSON_AddNumberToObject(meta, "attempts", attempt);
		cJSON_AddNumberToObject(meta, "latency_ms", (double)ms);
		(void)relay_send_answer(fd, meta, x.buf, x.len);
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
	struct timeval tv = { RELAY_REQ_TIMEOUT_MS / 1000, 0 };
	uint32_t n;
	char *body;

	free(cn);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (relay_read_full(fd, hdr, 8) == -1 || memcmp(hdr, "ARQ1", 4) != 0) {
		relay_send_error(fd, 400, "invalid_request_error",
		    "relay: not an ARQ1 frame", 0, 0);
		goto out;
	}
	n = relay_be32(hdr + 4);
	if (n > RELAY_BODY_MAX) {
		relay_send_error(fd, 413, "invalid_request_error",
		    "relay: request frame over its bound", 0, 0);
		goto out;
	}
	body = xmalloc((size_t)n + 1);
	if (relay_read_full(fd, body, n) == -1) {
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
			relay_send_error(fd, 503, "upstream_error",
			    "relay: too many calls at once", 0, 0);
			close(fd);
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
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

struct relay *
relay_start(const struct relay_config *cfg, struct errbuf *e)
{
	struct relay *r;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t kl = cfg->key != NULL ? strlen(cfg->key) : 0;

	if (strlen(cfg->sock_path) >= sizeof sa.sun_path) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: socket path %s is too "
		    "long", cfg->sock_path);
		return NULL;
	}
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
	r->sock_path = xstrdup(cfg->sock_path);
	r->ca_file = cfg->ca_file != NULL ? xstrdup(cfg->ca_file) : NULL;
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
	 * the folder (0700, the gateway's only) is what keeps others out */
	if (cfg->owner_uid >= 0 && chown(cfg->sock_path,
	    (uid_t)cfg->owner_uid, (gid_t)cfg->owner_gid) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "relay: chown %s: %s",
		    cfg->sock_path, strerror(errno));
		goto fail;
	}
	(void)chmod(cfg->sock_path, 0600);
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
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(r->accept_thread, NULL);
	close(r->fd);
	(void)unlink(r->sock_path);
	pthread_mutex_lock(&r->mu);
	while (r->active > 0)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	relay_free(r);
}
