/*
 * docker.c - Docker Engine API client: libcurl over the engine's unix
 * socket, over TCP with TLS (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, as the
 * docker CLI), over plain TCP only with ARES_ALLOW_PLAINTEXT_ENGINE=1, or
 * over ssh (`ssh HOST docker system dial-stdio`, as the docker CLI, one
 * child per connection; below).  docs/engine.md describes DOCKER_HOST.
 *
 * One struct docker owns one curl easy handle that is reused for every
 * request, so the connection to the daemon is kept alive between calls
 * (curl_easy_reset() keeps live connections).  Nothing here runs the
 * docker CLI on this machine; ssh:// runs ssh, which runs `docker system
 * dial-stdio` on the engine's machine.
 *
 * Error categories:
 *  - ERRBUF_ENGINE   the engine could not be reached / the transfer failed,
 *                    or no API version in common (docker_negotiate);
 *  - ERRBUF_INTERNAL the daemon answered and refused the operation (the
 *                    daemon's "message" is surfaced with method and path),
 *                    or its answer was malformed / larger than allowed;
 *  - ERRBUF_INPUT    unsupported DOCKER_HOST or bad arguments.
 *
 * Responses are bounded: buffered bodies by DOCKER_BODY_MAX, streamed exec
 * output and logs by the caller's max (extra bytes are dropped and counted
 * as truncation, so memory stays bounded even for endless output).
 */
#include "internal.h"

#include <curl/curl.h>
#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_HOST        "unix:///var/run/docker.sock"
#define CONNECT_TIMEOUT_MS  2000L
#define REQUEST_TIMEOUT_MS  60000L
#define IMPORT_TIMEOUT_MS   300000L
#define ERRMSG_MAX          512     /* daemon message kept in errors */
#define SSH_CHILD_MAX       4       /* ssh children (connections) at once */
#define SSH_ERR_MAX         300     /* ssh's stderr kept for messages */

/* One ssh child: one connection of libcurl's. */
struct ssh_child {
	pid_t pid;             /* 0: free slot */
	int err_fd;            /* its stderr (nonblocking read end) */
	char err[SSH_ERR_MAX];
	size_t err_len;
};

struct docker {
	CURL *curl;
	struct docker_host host;
	char *where;           /* for messages: the socket path or the URL */
	char *base_url;        /* "http://localhost", "https://H:P", ... */
	char *ca, *cert, *key; /* TLS: the files libcurl reads (paths only) */
	/* ssh:// (host.path is the private socket libcurl connects to) */
	char *ssh_dir;
	int ssh_listen, ssh_wake[2];
	pthread_t ssh_tid;
	bool ssh_running;
	pthread_mutex_t ssh_lock;          /* guards ssh_err */
	char ssh_err[SSH_ERR_MAX];
	struct ssh_child ssh[SSH_CHILD_MAX];   /* the acceptor's own */
	char api[16];          /* negotiated API version, "" before */
	char engine[64];       /* engine version string from /version */
	bool negotiated;
	bool podman;           /* /version names a Podman Engine component */
	char curl_err[CURL_ERROR_SIZE];
	uint64_t deadline_ns;  /* CLOCK_MONOTONIC bound on every call, or 0 */
};

/* ------------------------------------------------------------------ */
/* versions                                                            */
/* ------------------------------------------------------------------ */

/* Parse "MAJOR.MINOR" (1..4 digits each, nothing else).  0 or -1. */
static int
version_parse(const char *s, int *maj, int *min)
{
	int v[2] = {0, 0};
	if (s == NULL)
		return -1;
	for (int part = 0; part < 2; part++) {
		int digits = 0;
		while (*s >= '0' && *s <= '9') {
			if (++digits > 4)
				return -1;
			v[part] = v[part] * 10 + (*s - '0');
			s++;
		}
		if (digits == 0)
			return -1;
		if (part == 0) {
			if (*s != '.')
				return -1;
			s++;
		}
	}
	if (*s != '\0')
		return -1;
	*maj = v[0];
	*min = v[1];
	return 0;
}

int
docker_version_cmp(const char *a, const char *b)
{
	int am, an, bm, bn;
	bool aok = version_parse(a, &am, &an) == 0;
	bool bok = version_parse(b, &bm, &bn) == 0;
	if (!aok || !bok)
		return (int)aok - (int)bok;   /* bad input sorts first */
	if (am != bm)
		return am < bm ? -1 : 1;
	if (an != bn)
		return an < bn ? -1 : 1;
	return 0;
}

/*
 * Highest v with max(DOCKER_API_MIN, daemon_min) <= v <=
 * min(DOCKER_API_MAX, daemon_api).  daemon_min may be NULL or "" (very old
 * daemons do not advertise one).  -1 + e (ERRBUF_ENGINE) on garbage or an
 * empty intersection.
 */
int
docker_version_pick(const char *daemon_api, const char *daemon_min,
    char out[16], struct errbuf *e)
{
	int am, an, mm = 0, mn = 0;
	const char *lo = DOCKER_API_MIN, *hi = DOCKER_API_MAX;

	out[0] = '\0';
	if (version_parse(daemon_api, &am, &an) < 0)
		return errbuf_set(e, ERRBUF_ENGINE,
		    "docker: /version: bad ApiVersion \"%.32s\"",
		    daemon_api ? daemon_api : "(missing)");
	if (daemon_min != NULL && daemon_min[0] != '\0' &&
	    version_parse(daemon_min, &mm, &mn) < 0)
		return errbuf_set(e, ERRBUF_ENGINE,
		    "docker: /version: bad MinAPIVersion \"%.32s\"", daemon_min);
	if (daemon_min != NULL && daemon_min[0] != '\0' &&
	    docker_version_cmp(daemon_min, lo) > 0)
		lo = daemon_min;
	if (docker_version_cmp(daemon_api, hi) < 0)
		hi = daemon_api;
	if (docker_version_cmp(lo, hi) > 0)
		return errbuf_set(e, ERRBUF_ENGINE,
		    "docker: no common API version: the engine speaks %s..%s, "
		    "ares speaks %s..%s",
		    (daemon_min && daemon_min[0]) ? daemon_min : "?",
		    daemon_api, DOCKER_API_MIN, DOCKER_API_MAX);
	if (version_parse(hi, &am, &an) < 0)   /* cannot fail: checked */
		return errbuf_set(e, ERRBUF_INTERNAL, "docker: version pick");
	snprintf(out, 16, "%d.%d", am, an);
	return 0;
}

/*
 * The daemon's "message" from an error body, sanitized and bounded; else
 * "HTTP <status>: <start of the body>" for a non-JSON body, else
 * "HTTP <status>".  Caller frees.
 */
char *
docker_error_message(long status, const char *body, size_t len)
{
	char clean[ERRMSG_MAX];
	cJSON *j;

	if (body == NULL || len == 0)
		return xasprintf("HTTP %ld", status);
	j = cJSON_ParseWithLength(body, len);
	if (j != NULL) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
		if (cJSON_IsString(m) && m->valuestring[0] != '\0') {
			util_sanitize(clean, sizeof clean, m->valuestring,
			    strlen(m->valuestring), false);
			cJSON_Delete(j);
			return xstrdup(clean);
		}
		cJSON_Delete(j);
		return xasprintf("HTTP %ld", status);
	}
	util_sanitize(clean, 200, body, len, false);
	/* trim trailing blanks (a text body usually ends with "\n") */
	for (size_t n = strlen(clean); n > 0 && clean[n - 1] == ' '; n--)
		clean[n - 1] = '\0';
	if (clean[0] == '\0')
		return xasprintf("HTTP %ld", status);
	return xasprintf("HTTP %ld: %s", status, clean);
}

/* ------------------------------------------------------------------ */
/* stream demultiplexing                                               */
/* ------------------------------------------------------------------ */

/* Incremental parser of the 8-byte-header frame stream. */
struct demux {
	unsigned char hdr[8];
	size_t hdr_have;       /* header bytes collected */
	int stream;            /* stream of the current frame */
	size_t frame_len;      /* declared payload length */
	size_t frame_left;     /* payload still due; >0 means "in payload" */
	size_t frame_off;      /* stream offset of the current header */
	size_t off;            /* bytes consumed so far */
	bool whole;            /* feeding one complete buffer: check lengths */
	void (*emit)(void *ctx, int stream, const char *p, size_t n);
	void *ctx;
};

/* Feed len bytes.  -1 + e (ERRBUF_INTERNAL) on a malformed header, naming
 * the byte offset of the frame header. */
static int
demux_feed(struct demux *m, const char *buf, size_t len,
    struct errbuf *e)
{
	while (len > 0) {
		if (m->frame_left == 0) {
			size_t n = 8 - m->hdr_have;
			if (m->hdr_have == 0)
				m->frame_off = m->off;
			if (n > len)
				n = len;
			memcpy(m->hdr + m->hdr_have, buf, n);
			m->hdr_have += n;
			buf += n;
			len -= n;
			m->off += n;
			if (m->hdr_have < 8)
				continue;
			m->hdr_have = 0;
			if (m->hdr[0] > 2)
				return errbuf_set(e, ERRBUF_INTERNAL,
				    "docker: stream frame at byte %zu: unknown "
				    "stream type %u", m->frame_off, m->hdr[0]);
			if (m->hdr[1] || m->hdr[2] || m->hdr[3])
				return errbuf_set(e, ERRBUF_INTERNAL,
				    "docker: stream frame at byte %zu: nonzero "
				    "padding in header", m->frame_off);
			m->stream = m->hdr[0];
			m->frame_len = ((size_t)m->hdr[4] << 24) |
			    ((size_t)m->hdr[5] << 16) |
			    ((size_t)m->hdr[6] << 8) | (size_t)m->hdr[7];
			if (m->whole && m->frame_len > len)
				return errbuf_set(e, ERRBUF_INTERNAL,
				    "docker: stream frame at byte %zu declares "
				    "%zu bytes but only %zu follow",
				    m->frame_off, m->frame_len, len);
			m->frame_left = m->frame_len;
		} else {
			size_t n = m->frame_left < len ? m->frame_left : len;
			if (m->stream != 0 && m->emit != NULL)
				m->emit(m->ctx, m->stream, buf, n);
			m->frame_left -= n;
			buf += n;
			len -= n;
			m->off += n;
		}
	}
	return 0;
}

/* End of stream: a partial header or payload is an error. */
static int
demux_finish(const struct demux *m, struct errbuf *e)
{
	if (m->hdr_have > 0)
		return errbuf_set(e, ERRBUF_INTERNAL,
		    "docker: stream ends inside a frame header at byte %zu "
		    "(%zu of 8 bytes)", m->frame_off, m->hdr_have);
	if (m->frame_left > 0)
		return errbuf_set(e, ERRBUF_INTERNAL,
		    "docker: stream frame at byte %zu declares %zu bytes but "
		    "the stream ends after %zu", m->frame_off, m->frame_len,
		    m->frame_len - m->frame_left);
	return 0;
}

/* Append to *buf (len *blen) keeping at most max bytes; NUL-terminated. */
static void
append_bounded(char **buf, size_t *blen, size_t max,
    const char *p, size_t n, bool *truncated)
{
	size_t room = *blen < max ? max - *blen : 0;
	if (n > room) {
		*truncated = true;
		n = room;
	}
	if (n == 0 && *buf != NULL)
		return;
	*buf = xrealloc(*buf, *blen + n + 1);
	memcpy(*buf + *blen, p, n);
	*blen += n;
	(*buf)[*blen] = '\0';
}

struct exec_sink {
	struct docker_exec_result *r;
	size_t max;
};

/* Frame callback of an exec: stream 1 (stdout) to r->out, the other
 * (stderr) to r->err, each bounded to max (r->truncated past it). */
static void
exec_emit(void *ctx, int stream, const char *p, size_t n)
{
	struct exec_sink *s = ctx;
	if (stream == 1)
		append_bounded(&s->r->out, &s->r->out_len, s->max, p, n,
		    &s->r->truncated);
	else
		append_bounded(&s->r->err, &s->r->err_len, s->max, p, n,
		    &s->r->truncated);
}

/* Make sure out and err are allocated ("" when empty). */
static void
exec_result_fill(struct docker_exec_result *r)
{
	bool dummy = false;
	append_bounded(&r->out, &r->out_len, 0, "", 0, &dummy);
	append_bounded(&r->err, &r->err_len, 0, "", 0, &dummy);
}

/*
 * Pure demultiplexer: stream 0 (stdin) is ignored, 1 -> r->out, 2 ->
 * r->err, each kept to at most max bytes (r->truncated when bytes were
 * dropped).  On success r->out and r->err are non-NULL.  On error r keeps
 * what was appended so far (free with docker_exec_result_free).
 */
int
docker_demux(const char *buf, size_t len, size_t max,
    struct docker_exec_result *r, struct errbuf *e)
{
	struct exec_sink s = { r, max };
	struct demux m = { .whole = true, .emit = exec_emit, .ctx = &s };

	if (demux_feed(&m, buf, len, e) < 0 || demux_finish(&m, e) < 0)
		return -1;
	exec_result_fill(r);
	return 0;
}

void
docker_exec_result_free(struct docker_exec_result *r)
{
	if (r == NULL)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ */
/* transport                                                           */
/* ------------------------------------------------------------------ */

void
docker_response_free(struct docker_response *r)
{
	if (r == NULL)
		return;
	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->status = 0;
}

/* Where a response body goes: a bounded buffer, or (for 2xx answers when
 * mux is set) a frame demultiplexer. */
struct sink {
	struct docker *d;
	char *buf;
	size_t len, cap;
	bool overflow;
	struct demux *mux;
	bool mux_failed;
	struct errbuf mux_err;
	size_t max;            /* bound of buf; 0: DOCKER_BODY_MAX */
	atomic_bool *stop;     /* set: the transfer ends (docker_follow) */
};

/* libcurl write callback: a 2xx answer goes through s->mux when set (a
 * malformed frame aborts the transfer: mux_failed, mux_err); anything
 * else is kept in s->buf, NUL-terminated, and an answer past
 * DOCKER_BODY_MAX aborts the transfer (overflow). */
static size_t
sink_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;

	if (s->mux != NULL) {
		long code = 0;
		curl_easy_getinfo(s->d->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			if (demux_feed(s->mux, p, n, &s->mux_err) < 0) {
				s->mux_failed = true;
				return 0;   /* abort the transfer */
			}
			return n;
		}
	}
	if (n > (s->max ? s->max : DOCKER_BODY_MAX) - s->len) {
		s->overflow = true;
		return 0;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n + 1)
			cap *= 2;
		s->buf = xrealloc(s->buf, cap);
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return n;
}

struct upload {
	int fd;
	bool failed;
	int err;
};

/* libcurl read callback: the next bytes of u->fd (a read interrupted by
 * a signal is retried); a read error aborts the upload (failed, err). */
static size_t
upload_read(char *p, size_t size, size_t nmemb, void *ud)
{
	struct upload *u = ud;
	ssize_t n;
	do
		n = read(u->fd, p, size * nmemb);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		u->failed = true;
		u->err = errno;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)n;
}

static void transport_setopt(struct docker *d);
static void ssh_last_error(struct docker *d, char *out, size_t max);

/* libcurl progress callback of a followed stream: nonzero ends it. */
static int
stop_check(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct sink *s = ud;
	(void)dt; (void)dn; (void)ut; (void)un;
	return atomic_load(s->stop) ? 1 : 0;
}

struct req {
	const char *method;       /* "GET", "POST", "DELETE", ... */
	const char *path;         /* versioned path for messages */
	const char *url_path;     /* what goes after http://localhost */
	const char *ctype;        /* Content-Type of the body or NULL */
	const char *body;         /* in-memory body or NULL */
	size_t body_len;
	struct upload *upload;    /* streamed body (import) or NULL */
	curl_off_t upload_len;
	long timeout_ms;
};

/*
 * Perform one request on the reused handle.  0 with *status set when an
 * HTTP answer came; -1 + e on transport failure (ERRBUF_ENGINE), an
 * oversized body or a malformed stream (ERRBUF_INTERNAL).
 */
static int
perform(struct docker *d, const struct req *q, struct sink *s,
    long *status, struct errbuf *e)
{
	struct curl_slist *hdrs = NULL;
	char *url = xasprintf("%s%s", d->base_url, q->url_path);
	CURLcode rc;
	char *ct = NULL;

	long timeout_ms = q->timeout_ms;

	*status = 0;
	s->d = d;
	if (d->deadline_ns != 0) {
		uint64_t now = util_mono_ns();

		if (now >= d->deadline_ns) {
			free(url);
			return errbuf_set(e, ERRBUF_INTERNAL, "docker: %s %s: "
			    "the time bound of this phase has passed",
			    q->method, q->path);
		}
		if ((d->deadline_ns - now) / 1000000ull < (uint64_t)timeout_ms)
			timeout_ms = (long)((d->deadline_ns - now) /
			    1000000ull) + 1;
	}
	curl_easy_reset(d->curl);   /* keeps the live connection */
	d->curl_err[0] = '\0';
	transport_setopt(d);
	curl_easy_setopt(d->curl, CURLOPT_URL, url);
	curl_easy_setopt(d->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(d->curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(d->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(d->curl, CURLOPT_ERRORBUFFER, d->curl_err);
	curl_easy_setopt(d->curl, CURLOPT_USERAGENT, "ares-drill");
	curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, s);
	if (s->stop != NULL) {
		curl_easy_setopt(d->curl, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(d->curl, CURLOPT_XFERINFOFUNCTION,
		    stop_check);
		curl_easy_setopt(d->curl, CURLOPT_XFERINFODATA, s);
	}

	hdrs = curl_slist_append(hdrs, "Expect:");
	if (q->ctype != NULL) {
		ct = xasprintf("Content-Type: %s", q->ctype);
		hdrs = curl_slist_append(hdrs, ct);
	}
	if (hdrs == NULL)
		util_fatal("docker: out of memory (curl headers)");
	curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, hdrs);

	if (q->upload != NULL) {
		curl_easy_setopt(d->curl, CURLOPT_POST, 1L);
		curl_easy_setopt(d->curl, CURLOPT_READFUNCTION, upload_read);
		curl_easy_setopt(d->curl, CURLOPT_READDATA, q->upload);
		curl_easy_setopt(d->curl, CURLOPT_POSTFIELDSIZE_LARGE,
		    q->upload_len);
	} else if (strcmp(q->method, "GET") == 0) {
		curl_easy_setopt(d->curl, CURLOPT_HTTPGET, 1L);
	} else {
		if (strcmp(q->method, "POST") != 0)
			curl_easy_setopt(d->curl, CURLOPT_CUSTOMREQUEST,
			    q->method);
		if (q->body != NULL || strcmp(q->method, "POST") == 0) {
			curl_easy_setopt(d->curl, CURLOPT_POSTFIELDS,
			    q->body ? q->body : "");
			curl_easy_setopt(d->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)(q->body ? q->body_len : 0));
		}
	}

	rc = curl_easy_perform(d->curl);
	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, status);
	curl_easy_setopt(d->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(ct);
	free(url);

	if (s->mux_failed) {
		if (e != NULL)
			*e = s->mux_err;
		return errbuf_prefix(e, "%s %s", q->method, q->path);
	}
	if (s->overflow)
		return errbuf_set(e, ERRBUF_INTERNAL,
		    "docker: %s %s: response body exceeds %zu bytes",
		    q->method, q->path, s->max ? s->max :
		    (size_t)DOCKER_BODY_MAX);
	if (s->stop != NULL && atomic_load(s->stop) &&
	    rc == CURLE_ABORTED_BY_CALLBACK)
		return 0;   /* stopped on purpose (docker_follow_stop) */
	if (q->upload != NULL && q->upload->failed)
		return errbuf_set(e, ERRBUF_INTERNAL,
		    "docker: %s %s: reading the upload: %s", q->method,
		    q->path, strerror(q->upload->err));
	if (rc != CURLE_OK) {
		char ssh_err[SSH_ERR_MAX];

		ssh_last_error(d, ssh_err, sizeof ssh_err);
		return errbuf_set(e, ERRBUF_ENGINE,
		    "docker: %s %s via %s: %s%s%s", q->method, q->path,
		    d->where,
		    d->curl_err[0] ? d->curl_err : curl_easy_strerror(rc),
		    ssh_err[0] ? "; ssh said: " : "", ssh_err);
	}
	return 0;
}

/* ---- DOCKER_HOST ---------------------------------------------------- */

/* Is c allowed in a host name (letters, digits, '-', '.')? */
static bool
host_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/*
 * Parse "HOST[:PORT]" (HOST a name, an IPv4 address or "[IPv6]") of
 * value's authority a[0..n) into h.  -1 + e naming the bad part.
 */
static int
host_parse_authority(const char *value, const char *what, const char *a,
    size_t n, struct docker_host *h, struct errbuf *e)
{
	const char *end = a + n, *port = NULL;
	size_t hn;

	if (n == 0)
		return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: no host",
		    what, value);
	if (a[0] == '[') {
		const char *rb = memchr(a, ']', n);

		if (rb == NULL)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: IPv6 "
			    "address without its closing ']'", what, value);
		hn = (size_t)(rb - a - 1);
		if (hn == 0 || hn >= sizeof h->name ||
		    strspn(a + 1, "0123456789abcdefABCDEF:.") < hn)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: bad IPv6 "
			    "address \"%.*s\"", what, value, (int)(hn > 64 ? 64 :
			    hn), a + 1);
		memcpy(h->name, a + 1, hn);
		h->name[hn] = '\0';
		h->ipv6 = true;
		if (rb + 1 < end) {
			if (rb[1] != ':')
				return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: "
				    "unexpected \"%.*s\" after the address",
				    what, value, (int)(end - rb - 1), rb + 1);
			port = rb + 2;
		}
	} else {
		const char *colon = memchr(a, ':', n);

		hn = colon != NULL ? (size_t)(colon - a) : n;
		if (hn == 0)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: no host "
			    "before the port", what, value);
		if (hn >= sizeof h->name)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: host "
			    "name longer than %zu bytes", what, value,
			    sizeof h->name - 1);
		for (size_t i = 0; i < hn; i++)
			if (!host_name_char(a[i]))
				return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: "
				    "bad character '%s%c' in the host \"%.*s\"",
				    what, value, (unsigned char)a[i] < 0x20 ||
				    (unsigned char)a[i] >= 0x7f ? "\\x" : "",
				    (unsigned char)a[i] < 0x20 ||
				    (unsigned char)a[i] >= 0x7f ? '?' : a[i],
				    (int)(hn > 64 ? 64 : hn), a);
		if (a[0] == '-' || a[0] == '.')
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: the host "
			    "\"%.*s\" may not start with '%c'", what, value,
			    (int)(hn > 64 ? 64 : hn), a, a[0]);
		memcpy(h->name, a, hn);
		h->name[hn] = '\0';
		if (colon != NULL)
			port = colon + 1;
	}
	if (port != NULL) {
		size_t pn = (size_t)(end - port);
		long v = 0;

		if (pn == 0 || pn > 5 || strspn(port, "0123456789") < pn)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: bad port "
			    "\"%.*s\" (1..65535)", what, value,
			    (int)(pn > 16 ? 16 : pn), port);
		for (size_t i = 0; i < pn; i++)
			v = v * 10 + (port[i] - '0');
		if (v < 1 || v > 65535)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: bad port "
			    "\"%.*s\" (1..65535)", what, value, (int)pn, port);
		h->port = (int)v;
	}
	return 0;
}

int
docker_host_parse(const char *value, const char *what,
    struct docker_host *h, struct errbuf *e)
{
	const char *p, *a, *end;
	size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path);

	memset(h, 0, sizeof *h);
	if (value == NULL || value[0] == '\0')
		return errbuf_set(e, ERRBUF_INPUT, "%s is empty", what);
	for (p = value; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return errbuf_set(e, ERRBUF_INPUT, "%s: control, blank "
			    "or non-ASCII byte 0x%02x at offset %zu", what,
			    (unsigned char)*p, (size_t)(p - value));
	if (strlen(value) > 1024)
		return errbuf_set(e, ERRBUF_INPUT, "%s=%.64s...: longer than "
		    "1024 bytes", what, value);
	if (strncmp(value, "unix://", 7) == 0) {
		p = value + 7;
		if (p[0] != '/' || strlen(p) >= sun_max)
			return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: need an "
			    "absolute socket path shorter than %zu bytes",
			    what, value, sun_max);
		h->kind = DOCKER_UNIX;
		snprintf(h->path, sizeof h->path, "%s", p);
		return 0;
	}
	if (strncmp(value, "tcp://", 6) == 0) {
		h->kind = DOCKER_TCP;
		a = value + 6;
	} else if (strncmp(value, "ssh://", 6) == 0) {
		h->kind = DOCKER_SSH;
		a = value + 6;
	} else {
		size_t sl = strcspn(value, ":");

		return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: unsupported "
		    "scheme \"%.*s\" (unix:///path, tcp://HOST:PORT or "
		    "ssh://[USER@]HOST[:PORT])", what, value,
		    (int)(sl > 16 ? 16 : sl), value);
	}
	/* the authority ends at a path, query or fragment */
	end = a + strcspn(a, "/?#");
	if (*end == '?' || *end == '#' || (*end == '/' && end[1] != '\0'))
		return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: unexpected "
		    "\"%.32s\" after the host (no path, query or fragment)",
		    what, value, end);
	{
		const char *at = memchr(a, '@', (size_t)(end - a));

		if (at != NULL) {
			size_t un = (size_t)(at - a);

			if (h->kind != DOCKER_SSH)
				return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: "
				    "a user (\"...@\") only goes with ssh://",
				    what, value);
			if (un == 0 || un >= sizeof h->user || a[0] == '-' ||
			    strspn(a, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") < un)
				return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: "
				    "bad user \"%.*s\" (letters, digits, '.', "
				    "'_', '-'; at most %zu)", what, value,
				    (int)(un > 40 ? 40 : un), a,
				    sizeof h->user - 1);
			memcpy(h->user, a, un);
			h->user[un] = '\0';
			a = at + 1;
		}
	}
	return host_parse_authority(value, what, a, (size_t)(end - a), h, e);
}

/* ---- ssh: a private unix socket, one ssh child per connection ------- */

/*
 * libcurl of Debian 12 (7.88) calls connect() even on a socket the
 * open-socket callback hands over as already connected, so ssh:// is
 * bridged through a unix socket in a fresh 0700 directory: libcurl
 * connects to it (CURLOPT_UNIX_SOCKET_PATH), a thread of this client
 * accepts, and every accepted connection becomes the stdin and stdout of
 * its own `ssh -o BatchMode=yes ... -- HOST docker system dial-stdio`
 * (the bytes go straight between libcurl and ssh; nothing is copied
 * here).  The child's stderr is kept (bounded) for the error messages.
 */

/* Start ssh for d on the connected socket fd, stderr to err_fd: a clean
 * signal mask, SIGPIPE at its default, its own process group, no other
 * descriptor of ours.  0 with *pid, or posix_spawn's error. */
static int
ssh_spawn(const struct docker *d, int fd, int err_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	char port[8];
	char *argv[24];
	size_t n = 0;
	int err;

	argv[n++] = "ssh";
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = "ConnectTimeout=10";
	argv[n++] = "-T";   /* no tty */
	argv[n++] = "-x";   /* no X11 forwarding */
	argv[n++] = "-a";   /* no agent forwarding */
	if (d->host.user[0] != '\0') {
		argv[n++] = "-l";
		argv[n++] = (char *)d->host.user;
	}
	if (d->host.port != 0) {
		snprintf(port, sizeof port, "%d", d->host.port);
		argv[n++] = "-p";
		argv[n++] = port;
	}
	argv[n++] = "--";
	argv[n++] = (char *)d->host.name;
	argv[n++] = "docker";
	argv[n++] = "system";
	argv[n++] = "dial-stdio";
	argv[n] = NULL;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	err = posix_spawnp(pid, "ssh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return err;
}

/* Keep what child c wrote on stderr (the first SSH_ERR_MAX bytes). */
static void
ssh_drain(struct docker *d, struct ssh_child *c)
{
	char buf[512];
	ssize_t n;

	if (c->err_fd < 0)
		return;
	while ((n = read(c->err_fd, buf, sizeof buf)) > 0) {
		size_t room = sizeof c->err - 1 - c->err_len;

		if ((size_t)n > room)
			n = (ssize_t)room;
		memcpy(c->err + c->err_len, buf, (size_t)n);
		c->err_len += (size_t)n;
		c->err[c->err_len] = '\0';
	}
	if (n == 0) {   /* its end: poll it no more */
		close(c->err_fd);
		c->err_fd = -1;
	}
	if (c->err_len > 0) {
		pthread_mutex_lock(&d->ssh_lock);
		util_sanitize(d->ssh_err, sizeof d->ssh_err, c->err,
		    c->err_len, false);
		pthread_mutex_unlock(&d->ssh_lock);
	}
}

/* Reap child i if it exited; when force, end it first (SIGTERM, SIGKILL
 * after 1 s). */
static void
ssh_reap(struct docker *d, int i, bool force)
{
	struct ssh_child *c = &d->ssh[i];
	int st;

	if (c->pid <= 0)
		return;
	if (force) {
		pid_t w = 0;

		(void)kill(c->pid, SIGTERM);
		for (int k = 0; k < 100; k++) {
			w = waitpid(c->pid, &st, WNOHANG);
			if (w != 0)
				break;
			usleep(10000);
		}
		if (w == 0) {   /* not reaped yet: the pid is still ours */
			(void)kill(c->pid, SIGKILL);
			(void)waitpid(c->pid, &st, 0);
		}
	} else if (waitpid(c->pid, &st, WNOHANG) == 0)
		return;
	ssh_drain(d, c);
	if (c->err_fd >= 0)
		close(c->err_fd);
	memset(c, 0, sizeof *c);
}

/* The acceptor: accept on the private socket, spawn ssh per connection
 * (at most SSH_CHILD_MAX at once; beyond that the connection is closed,
 * which libcurl reports), reap children, until the wake pipe speaks. */
static void *
ssh_thread(void *arg)
{
	struct docker *d = arg;

	for (;;) {
		struct pollfd pf[2 + SSH_CHILD_MAX];
		int np = 2, fd;

		pf[0].fd = d->ssh_wake[0];
		pf[0].events = POLLIN;
		pf[1].fd = d->ssh_listen;
		pf[1].events = POLLIN;
		for (int i = 0; i < SSH_CHILD_MAX; i++)
			if (d->ssh[i].pid > 0 && d->ssh[i].err_fd >= 0) {
				pf[np].fd = d->ssh[i].err_fd;
				pf[np].events = POLLIN;
				np++;
			}
		if (poll(pf, (nfds_t)np, 200) == -1 && errno != EINTR)
			break;
		if (pf[0].revents != 0)
			break;
		for (int i = 0; i < SSH_CHILD_MAX; i++)
			if (d->ssh[i].pid > 0) {
				ssh_drain(d, &d->ssh[i]);
				ssh_reap(d, i, false);
			}
		if ((pf[1].revents & POLLIN) == 0)
			continue;
		fd = accept4(d->ssh_listen, NULL, NULL, SOCK_CLOEXEC);
		if (fd == -1)
			continue;
		for (int i = 0; i < SSH_CHILD_MAX; i++) {
			struct ssh_child *c = &d->ssh[i];
			int ep[2], err;

			if (c->pid > 0)
				continue;
			if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) == -1)
				break;
			err = ssh_spawn(d, fd, ep[1], &c->pid);
			close(ep[1]);
			if (err != 0) {
				close(ep[0]);
				c->pid = 0;
				pthread_mutex_lock(&d->ssh_lock);
				snprintf(d->ssh_err, sizeof d->ssh_err,
				    "cannot run ssh: %s", strerror(err));
				pthread_mutex_unlock(&d->ssh_lock);
				break;
			}
			c->err_fd = ep[0];
			break;
		}
		close(fd);   /* the child has its copy */
	}
	for (int i = 0; i < SSH_CHILD_MAX; i++)
		ssh_reap(d, i, true);
	return NULL;
}

/* Make the private socket and start the acceptor.  -1 + e. */
static int
ssh_start(struct docker *d, struct errbuf *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *tmp = getenv("TMPDIR");
	char *dir;
	bool made;

	if (tmp == NULL || tmp[0] != '/' || strlen(tmp) > 60)
		tmp = "/tmp";
	dir = xasprintf("%s/ares-ssh.XXXXXX", tmp);
	made = mkdtemp(dir) != NULL;
	if (!made && strcmp(tmp, "/tmp") != 0) {
		/* a TMPDIR that is gone or not ours: /tmp, as mktemp does */
		free(dir);
		dir = xstrdup("/tmp/ares-ssh.XXXXXX");
		made = mkdtemp(dir) != NULL;
	}
	if (!made) {
		errbuf_set(e, ERRBUF_INTERNAL, "docker: ssh: mkdtemp %s: %s",
		    dir, strerror(errno));
		free(dir);
		return -1;
	}
	d->ssh_dir = dir;
	snprintf(d->host.path, sizeof d->host.path, "%s/engine.sock", dir);
	memcpy(sa.sun_path, d->host.path, strlen(d->host.path) + 1);
	d->ssh_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (d->ssh_listen == -1 ||
	    bind(d->ssh_listen, (struct sockaddr *)&sa, sizeof sa) == -1 ||
	    listen(d->ssh_listen, 8) == -1 ||
	    pipe2(d->ssh_wake, O_CLOEXEC) == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "docker: ssh: socket %s: "
		    "%s", d->host.path, strerror(errno));
	pthread_mutex_init(&d->ssh_lock, NULL);
	if (pthread_create(&d->ssh_tid, NULL, ssh_thread, d) != 0) {
		pthread_mutex_destroy(&d->ssh_lock);
		return errbuf_set(e, ERRBUF_INTERNAL, "docker: ssh: cannot "
		    "start its thread");
	}
	d->ssh_running = true;
	return 0;
}

/* Stop the acceptor (its children end too), remove the socket and its
 * directory.  Safe on a half-started or non-ssh client. */
static void
ssh_stop(struct docker *d)
{
	if (d->ssh_running) {
		(void)!write(d->ssh_wake[1], "x", 1);
		pthread_join(d->ssh_tid, NULL);
		pthread_mutex_destroy(&d->ssh_lock);
		d->ssh_running = false;
	}
	if (d->ssh_listen >= 0)
		close(d->ssh_listen);
	if (d->ssh_wake[0] >= 0) {
		close(d->ssh_wake[0]);
		close(d->ssh_wake[1]);
	}
	d->ssh_listen = -1;
	d->ssh_wake[0] = d->ssh_wake[1] = -1;
	if (d->ssh_dir != NULL) {
		(void)unlink(d->host.path);
		(void)rmdir(d->ssh_dir);
		free(d->ssh_dir);
		d->ssh_dir = NULL;
	}
}

/* The last thing an ssh child said on stderr, into out ("" if none).  On
 * a failed request: the acceptor may not have read a dying child's words
 * yet, so this waits for them up to 200 ms. */
static void
ssh_last_error(struct docker *d, char *out, size_t max)
{
	out[0] = '\0';
	if (!d->ssh_running)
		return;
	for (int k = 0; k < 20; k++) {
		pthread_mutex_lock(&d->ssh_lock);
		snprintf(out, max, "%s", d->ssh_err);
		pthread_mutex_unlock(&d->ssh_lock);
		if (out[0] != '\0')
			break;
		usleep(10000);
	}
	for (size_t l = strlen(out); l > 0 && out[l - 1] == ' '; l--)
		out[l - 1] = '\0';
}

/* ---- the transport's curl options ---------------------------------- */

/* Set d's transport on its (freshly reset) curl handle. */
static void
transport_setopt(struct docker *d)
{
	CURL *c = d->curl;
	bool tls = d->ca != NULL;

	switch (d->host.kind) {
	case DOCKER_UNIX:
	case DOCKER_SSH:      /* the private socket to the ssh children */
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, d->host.path);
		break;
	case DOCKER_TCP:
		/* never through a proxy from the environment */
		curl_easy_setopt(c, CURLOPT_PROXY, "");
		if (tls) {
			curl_easy_setopt(c, CURLOPT_CAINFO, d->ca);
			/* only ca.pem: no system CA directory */
			curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
			curl_easy_setopt(c, CURLOPT_SSLCERT, d->cert);
			curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
			curl_easy_setopt(c, CURLOPT_SSLKEY, d->key);
			curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
			curl_easy_setopt(c, CURLOPT_SSLVERSION,
			    (long)CURL_SSLVERSION_TLSv1_2);
		}
		break;
	}
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, tls ? "https" : "http");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, tls ? "https" :
	    "http");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, tls ? (long)CURLPROTO_HTTPS :
	    (long)CURLPROTO_HTTP);
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
}

/*
 * The TLS files of a tcp:// engine: DOCKER_CERT_PATH, else ~/.docker (as
 * the docker CLI), each of ca.pem, cert.pem, key.pem a readable regular
 * file (checked, never read here: libcurl reads them).  -1 + e.
 */
static int
tls_files(struct docker *d, const char *what, const char *value,
    const char *cert_path, struct errbuf *e)
{
	const char *dir = cert_path != NULL ? cert_path :
	    getenv("DOCKER_CERT_PATH");
	const char *home = getenv("HOME");
	char *base, *f[3];
	static const char *const names[3] = { "ca.pem", "cert.pem",
	    "key.pem" };

	if (dir != NULL && dir[0] != '\0')
		base = xstrdup(dir);
	else if (home != NULL && home[0] == '/')
		base = xasprintf("%s/.docker", home);
	else
		return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: TLS needs "
		    "DOCKER_CERT_PATH (HOME is not set for ~/.docker)", what,
		    value);
	for (int i = 0; i < 3; i++) {
		struct stat sb;

		f[i] = xasprintf("%s/%s", base, names[i]);
		const char *why = NULL;

		if (stat(f[i], &sb) == -1 || access(f[i], R_OK) == -1)
			why = strerror(errno);
		else if (!S_ISREG(sb.st_mode))
			why = "not a regular file";
		if (why != NULL) {
			errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: TLS file %s: "
			    "%s (DOCKER_CERT_PATH holds ca.pem, cert.pem, "
			    "key.pem; default ~/.docker)", what, value, f[i],
			    why);
			for (int k = 0; k <= i; k++)
				free(f[k]);
			free(base);
			return -1;
		}
	}
	free(base);
	d->ca = f[0];
	d->cert = f[1];
	d->key = f[2];
	return 0;
}

/* Is an environment variable set to a non-empty value? */
static bool
env_on(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0';
}

/* What docker_open made but the curl handle: the ssh acceptor stopped,
 * the strings and d freed. */
static void
docker_free(struct docker *d)
{
	ssh_stop(d);
	free(d->where);
	free(d->base_url);
	free(d->ca);
	free(d->cert);
	free(d->key);
	free(d);
}

struct docker *
docker_open(const char *host, struct errbuf *e)
{
	struct docker_endpoint ep = { .host = host };

	return docker_open_at(&ep, e);
}

struct docker *
docker_open_at(const struct docker_endpoint *ep, struct errbuf *e)
{
	const char *what = ep->what != NULL ? ep->what : "docker host";
	const char *host = ep->host;
	struct docker_host h;
	struct docker *d;
	char name[300];

	if (host == NULL) {
		host = getenv("DOCKER_HOST");
		what = "DOCKER_HOST";
		if (host == NULL || host[0] == '\0')
			host = DEFAULT_HOST;
	}
	if (docker_host_parse(host, what, &h, e) == -1)
		return NULL;
	d = xcalloc(1, sizeof *d);
	d->host = h;
	d->ssh_listen = d->ssh_wake[0] = d->ssh_wake[1] = -1;
	snprintf(name, sizeof name, h.ipv6 ? "[%s]" : "%s", h.name);
	switch (h.kind) {
	case DOCKER_UNIX:
		d->where = xstrdup(h.path);
		d->base_url = xstrdup("http://localhost");
		break;
	case DOCKER_SSH:
		d->where = xstrdup(host);
		d->base_url = xstrdup("http://localhost");
		if (ssh_start(d, e) == -1)
			goto fail;
		break;
	case DOCKER_TCP:
		/* TLS as the docker CLI turns it on; never without
		 * verifying the engine's certificate and name. */
		if (ep->cert_path != NULL || env_on("DOCKER_TLS_VERIFY") ||
		    env_on("DOCKER_TLS")) {
			if (tls_files(d, what, host, ep->cert_path, e) == -1)
				goto fail;
			if (h.port == 0)
				d->host.port = h.port = 2376;
			d->base_url = xasprintf("https://%s:%d", name, h.port);
		} else {
			const char *ok = getenv("ARES_ALLOW_PLAINTEXT_ENGINE");
			static atomic_bool warned;

			if (ok == NULL || strcmp(ok, "1") != 0) {
				errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: plain "
				    "tcp without TLS is refused (anyone on the "
				    "path could read and drive the engine, which "
				    "is root on its machine): set "
				    "DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH, or "
				    "ARES_ALLOW_PLAINTEXT_ENGINE=1 to accept "
				    "plaintext", what, host);
				goto fail;
			}
			if (h.port == 0)
				d->host.port = h.port = 2375;
			if (!atomic_exchange(&warned, true)) {
				fprintf(stderr, "ares: WARNING: %s=%.200s: "
				    "plaintext engine connection without TLS "
				    "(ARES_ALLOW_PLAINTEXT_ENGINE=1): anyone on "
				    "the path can read and drive this engine\n",
				    what, host);
			}
			d->base_url = xasprintf("http://%s:%d", name, h.port);
		}
		d->where = xasprintf("tcp://%s:%d", name, h.port);
		break;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errbuf_set(e, ERRBUF_INTERNAL, "docker: curl_global_init failed");
		goto fail;
	}
	d->curl = curl_easy_init();
	if (d->curl == NULL)
		util_fatal("docker: curl_easy_init failed");
	return d;
fail:
	docker_free(d);
	return NULL;
}

struct docker *
docker_clone(const struct docker *d)
{
	struct docker *c;

	/* reference-counted: balanced by docker_close's cleanup */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		util_fatal("docker: curl_global_init failed");
	c = xcalloc(1, sizeof *c);
	/* the same engine by the same way: the transport, its URL and TLS
	 * files; over ssh:// the clone connects to d's private socket and
	 * d's acceptor (which the clone neither owns nor stops) hands each
	 * connection to an ssh child of its own, so d must outlive it */
	c->host = d->host;
	c->where = xstrdup(d->where);
	c->base_url = xstrdup(d->base_url);
	c->ca = d->ca != NULL ? xstrdup(d->ca) : NULL;
	c->cert = d->cert != NULL ? xstrdup(d->cert) : NULL;
	c->key = d->key != NULL ? xstrdup(d->key) : NULL;
	c->ssh_listen = c->ssh_wake[0] = c->ssh_wake[1] = -1;
	c->podman = d->podman;
	memcpy(c->api, d->api, sizeof c->api);
	memcpy(c->engine, d->engine, sizeof c->engine);
	c->negotiated = d->negotiated;
	c->deadline_ns = d->deadline_ns;
	c->curl = curl_easy_init();
	if (c->curl == NULL)
		util_fatal("docker: curl_easy_init failed");
	return c;
}

void
docker_close(struct docker *d)
{
	if (d == NULL)
		return;
	curl_easy_cleanup(d->curl);
	docker_free(d);
	curl_global_cleanup();
}

bool
docker_is_remote(const struct docker *d)
{
	return d->host.kind != DOCKER_UNIX;
}

const char *
docker_transport_name(const struct docker *d)
{
	switch (d->host.kind) {
	case DOCKER_UNIX:
		return "unix";
	case DOCKER_SSH:
		return "ssh";
	case DOCKER_TCP:
		break;
	}
	return d->ca != NULL ? "tcp+tls" : "tcp (plaintext)";
}

const char *
docker_where(const struct docker *d)
{
	return d->where;
}

const char *
docker_tls_ca(const struct docker *d)
{
	return d->ca;
}

const char *
docker_tls_cert(const struct docker *d)
{
	return d->cert;
}

/* The refusal shared by docker_require_local and _d. */
static int
require_local_fail(const char *where, const char *what, const char *needs,
    struct errbuf *e)
{
	return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): %s needs "
	    "%s; local engine only", where, what, needs != NULL ? needs :
	    DOCKER_NEEDS_HOST);
}

int
docker_require_local_d(const struct docker *d, const char *what,
    struct errbuf *e)
{
	if (!docker_is_remote(d))
		return 0;
	return require_local_fail(d->where, what, NULL, e);
}

bool
docker_is_podman(const struct docker *d)
{
	return d->podman;
}

int
docker_require_labs(const struct docker *d, const char *what,
    struct errbuf *e)
{
	/* a remote engine is let through: lab up builds there without a
	 * host bind mount (lab_remote_check refuses what needs one) */
	if (!d->podman)
		return 0;
	return errbuf_set(e, ERRBUF_INPUT, "podman engine (%.200s): %s is not "
	    "supported there: its bridge appears only when a container joins "
	    "the network (the host firewall seals every lab bridge before), "
	    "and it ignores com.docker.network.bridge.inhibit_ipv4 (the host "
	    "would have an address on every lab network); docs/engine.md",
	    d->where, what);
}

int
docker_env_remote(const char **hostp, struct errbuf *e)
{
	const char *host = getenv("DOCKER_HOST");
	struct docker_host h;

	if (host != NULL && host[0] == '\0')
		host = NULL;
	if (hostp != NULL)
		*hostp = host;
	if (host == NULL)
		return 0;
	if (docker_host_parse(host, "DOCKER_HOST", &h, e) == -1)
		return -1;
	return h.kind != DOCKER_UNIX;
}

int
docker_require_local(const char *what, const char *needs, struct errbuf *e)
{
	const char *host;
	int r = docker_env_remote(&host, e);

	return r <= 0 ? r : require_local_fail(host, what, needs, e);
}

const char *
docker_api_version(const struct docker *d)
{
	return d->api;     /* "" until negotiated */
}

const char *
docker_engine_version(const struct docker *d)
{
	return d->engine;  /* "" until negotiated */
}

struct docker *
docker_connect(const char *host, struct errbuf *e)
{
	struct docker_endpoint ep = { .host = host };

	return docker_connect_at(&ep, e);
}

struct docker *
docker_connect_at(const struct docker_endpoint *ep, struct errbuf *e)
{
	struct docker *d = docker_open_at(ep, e);

	if (d != NULL && docker_negotiate(d, e) == -1) {
		docker_close(d);
		return NULL;
	}
	return d;
}

int
docker_negotiate(struct docker *d, struct errbuf *e)
{
	struct sink s = {0};
	struct req q = { .method = "GET", .path = "/version",
	    .url_path = "/version", .timeout_ms = REQUEST_TIMEOUT_MS };
	long status;
	cJSON *j;
	const cJSON *api, *min, *ver;
	int rc;

	if (perform(d, &q, &s, &status, e) < 0) {
		free(s.buf);
		if (e != NULL && e->code == ERRBUF_ENGINE)
			errbuf_prefix(e, "docker engine unreachable");
		return -1;
	}
	if (status != 200) {
		char *m = docker_error_message(status, s.buf, s.len);
		errbuf_set(e, ERRBUF_ENGINE, "docker: GET /version via %s: %s",
		    d->where, m);
		free(m);
		free(s.buf);
		return -1;
	}
	j = s.buf ? cJSON_ParseWithLength(s.buf, s.len) : NULL;
	free(s.buf);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_ENGINE,
		    "docker: GET /version via %s: answer is not a JSON object",
		    d->where);
	}
	api = cJSON_GetObjectItemCaseSensitive(j, "ApiVersion");
	min = cJSON_GetObjectItemCaseSensitive(j, "MinAPIVersion");
	ver = cJSON_GetObjectItemCaseSensitive(j, "Version");
	{
		const cJSON *comps = cJSON_GetObjectItemCaseSensitive(j,
		    "Components"), *c;

		d->podman = false;
		cJSON_ArrayForEach(c, comps) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(c,
			    "Name");

			if (cJSON_IsString(n) &&
			    strncmp(n->valuestring, "Podman", 6) == 0)
				d->podman = true;
		}
	}
	rc = docker_version_pick(cJSON_IsString(api) ? api->valuestring : NULL,
	    cJSON_IsString(min) ? min->valuestring : NULL, d->api, e);
	if (rc == 0) {
		char clean[sizeof d->engine];
		const char *v = cJSON_IsString(ver) ? ver->valuestring : "?";
		util_sanitize(clean, sizeof clean, v, strlen(v), false);
		memcpy(d->engine, clean, sizeof d->engine);
		d->negotiated = true;
	}
	cJSON_Delete(j);
	return rc;
}

/* Versioned request with a given sink (negotiates first if needed). */
static int
request_sink(struct docker *d, const char *method,
    const char *path, const char *ctype, const char *body, size_t body_len,
    struct upload *up, curl_off_t up_len, long timeout_ms, struct sink *s,
    long *status, struct errbuf *e)
{
	char *url_path;
	int rc;
	struct req q = { .method = method, .path = path, .ctype = ctype,
	    .body = body, .body_len = body_len, .upload = up,
	    .upload_len = up_len, .timeout_ms = timeout_ms };

	if (!d->negotiated && docker_negotiate(d, e) < 0)
		return -1;
	url_path = xasprintf("/v%s%s", d->api, path);
	q.url_path = url_path;
	rc = perform(d, &q, s, status, e);
	free(url_path);
	return rc;
}

int
docker_request(struct docker *d, const char *method, const char *path,
    const char *body, size_t body_len, struct docker_response *out,
    struct errbuf *e)
{
	struct sink s = {0};
	long status;

	memset(out, 0, sizeof *out);
	if (request_sink(d, method, path, body ? "application/json" : NULL,
	    body, body_len, NULL, 0, REQUEST_TIMEOUT_MS, &s, &status, e) < 0) {
		free(s.buf);
		return -1;
	}
	out->status = status;
	out->body = s.buf ? s.buf : xstrdup("");
	out->len = s.len;
	return 0;
}

/* Fill e with the daemon's refusal of method path (ERRBUF_INTERNAL). */
static int
daemon_error(const char *method, const char *path,
    const struct docker_response *r, struct errbuf *e)
{
	char *m = docker_error_message(r->status, r->body, r->len);
	errbuf_set(e, ERRBUF_INTERNAL, "docker: %s %s: %s (HTTP %ld)", method,
	    path, m, r->status);
	free(m);
	return -1;
}

/*
 * Request with an optional JSON body; success on 2xx or on extra_ok
 * (0: none).  0 with out filled (caller frees), or -1 + e with out freed.
 */
static int
call(struct docker *d, const char *method, const char *path,
    const cJSON *body, long extra_ok, struct docker_response *out,
    struct errbuf *e)
{
	char *txt = NULL;
	int rc;

	if (body != NULL) {
		txt = cJSON_PrintUnformatted(body);
		if (txt == NULL)
			util_fatal("docker: cannot serialise request body");
	}
	rc = docker_request(d, method, path, txt, txt ? strlen(txt) : 0, out,
	    e);
	free(txt);
	if (rc < 0)
		return -1;
	if ((out->status >= 200 && out->status < 300) ||
	    (extra_ok != 0 && out->status == extra_ok))
		return 0;
	daemon_error(method, path, out, e);
	docker_response_free(out);
	return -1;
}

/* Same, discarding the answer. */
static int
call_simple(struct docker *d, const char *method,
    const char *path, const cJSON *body, long extra_ok, struct errbuf *e)
{
	struct docker_response r;
	int rc = call(d, method, path, body, extra_ok, &r, e);
	if (rc == 0)
		docker_response_free(&r);
	return rc;
}

/* Parse a successful answer as JSON of the wanted type (cJSON_IsObject
 * or cJSON_IsArray).  NULL + e. */
static cJSON *
parse_answer(const char *method, const char *path,
    struct docker_response *r, cJSON_bool (*want)(const cJSON *),
    struct errbuf *e)
{
	cJSON *j = cJSON_ParseWithLength(r->body, r->len);
	docker_response_free(r);
	if (j == NULL || !want(j)) {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INTERNAL,
		    "docker: %s %s: unexpected answer (not the expected JSON)",
		    method, path);
		return NULL;
	}
	return j;
}

/* GET path and parse the answer as JSON of the wanted type (caller
 * cJSON_Delete()s).  NULL + e. */
static cJSON *
get_json(struct docker *d, const char *path,
    cJSON_bool (*want)(const cJSON *), struct errbuf *e)
{
	struct docker_response r;

	if (call(d, "GET", path, NULL, 0, &r, e) < 0)
		return NULL;
	return parse_answer("GET", path, &r, want, e);
}

/* URL-escape s (caller frees). */
static char *
esc(struct docker *d, const char *s)
{
	char *c = curl_easy_escape(d->curl, s, 0);
	char *r;
	if (c == NULL)
		util_fatal("docker: out of memory (url escape)");
	r = xstrdup(c);
	curl_free(c);
	return r;
}

/* Path "/<a>/<escaped id><b>" (caller frees). */
static char *
id_path(struct docker *d, const char *a, const char *id,
    const char *b)
{
	char *x = esc(d, id);
	char *p = xasprintf("%s/%s%s", a, x, b);
	free(x);
	return p;
}

/* GET /<kind>/<escaped id><suffix>: a JSON object (caller
 * cJSON_Delete()s).  NULL + e. */
static cJSON *
get_object(struct docker *d, const char *kind, const char *id,
    const char *suffix, struct errbuf *e)
{
	char *path = id_path(d, kind, id, suffix);
	cJSON *j = get_json(d, path, cJSON_IsObject, e);

	free(path);
	return j;
}

bool
docker_id_valid(const char *s)
{
	return s != NULL && strlen(s) == 64 &&
	    strspn(s, "0123456789abcdef") == 64;
}

/* The "Id" string of an object answer (caller frees): 64 lowercase hex
 * digits (docker_id_valid), since ares puts it into request paths and,
 * for a container, host cgroup paths.  NULL + e. */
static char *
answer_id(const char *method, const char *path,
    struct docker_response *r, struct errbuf *e)
{
	cJSON *j = parse_answer(method, path, r, cJSON_IsObject, e);
	const cJSON *id;
	char *out;
	if (j == NULL)
		return NULL;
	id = cJSON_GetObjectItemCaseSensitive(j, "Id");
	if (!cJSON_IsString(id) || id->valuestring[0] == '\0') {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INTERNAL, "docker: %s %s: answer has no Id",
		    method, path);
		return NULL;
	}
	if (!docker_id_valid(id->valuestring)) {
		char clean[80];

		util_sanitize(clean, sizeof clean, id->valuestring,
		    strlen(id->valuestring), false);
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INTERNAL, "docker: %s %s: answer's Id '%s' is "
		    "not 64 lowercase hex digits (refused: ares builds paths "
		    "from it)", method, path, clean);
		return NULL;
	}
	out = xstrdup(id->valuestring);
	cJSON_Delete(j);
	return out;
}

/* cJSON string array from a NULL-terminated list (NULL list: empty). */
static cJSON *
str_array(const char *const *v)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

/* ------------------------------------------------------------------ */
/* images                                                              */
/* ------------------------------------------------------------------ */

/* 1: the image exists, 0: it does not (404), -1 + e. */
int
docker_image_exists(struct docker *d, const char *ref, struct errbuf *e)
{
	cJSON *in;
	int rc = docker_image_inspect(d, ref, &in, e);

	cJSON_Delete(in);
	return rc;
}

/* GET /images/REF/json (internal.h).  1 + *out, 0 (404), -1 + e. */
int
docker_image_inspect(struct docker *d, const char *ref, cJSON **out,
    struct errbuf *e)
{
	struct docker_response r;
	char *path = id_path(d, "/images", ref, "/json");
	int rc;

	*out = NULL;
	if (docker_request(d, "GET", path, NULL, 0, &r, e) < 0) {
		free(path);
		return -1;
	}
	if (r.status == 404)
		rc = 0;
	else if (r.status != 200)
		rc = daemon_error("GET", path, &r, e);
	else {
		*out = cJSON_ParseWithLength(r.body, r.len);
		rc = cJSON_IsObject(*out) ? 1 : errbuf_set(e, ERRBUF_INTERNAL,
		    "GET %s: the answer is not a JSON object", path);
		if (rc == -1) {
			cJSON_Delete(*out);
			*out = NULL;
		}
	}
	docker_response_free(&r);
	free(path);
	return rc;
}

/*
 * Scan an import/build progress stream (concatenated JSON objects) for an
 * "error" or "errorDetail" member.  0 if clean, -1 + e (the daemon's
 * message) otherwise, also when the stream cannot be parsed.
 */
static int
progress_check(const char *path, const char *buf, size_t len,
    struct errbuf *e)
{
	size_t off = 0;
	while (off < len) {
		const char *end = NULL;
		cJSON *j;
		const cJSON *err, *det, *msg = NULL;

		while (off < len && (buf[off] == ' ' || buf[off] == '\n' ||
		    buf[off] == '\r' || buf[off] == '\t'))
			off++;
		if (off >= len)
			break;
		j = cJSON_ParseWithLengthOpts(buf + off, len - off, &end, 0);
		if (j == NULL)
			return errbuf_set(e, ERRBUF_INTERNAL,
			    "docker: POST %s: unparsable progress at byte %zu",
			    path, off);
		err = cJSON_GetObjectItemCaseSensitive(j, "error");
		det = cJSON_GetObjectItemCaseSensitive(j, "errorDetail");
		if (det != NULL)
			msg = cJSON_GetObjectItemCaseSensitive(det, "message");
		if (!cJSON_IsString(msg))
			msg = err;
		if (err != NULL || det != NULL) {
			char clean[ERRMSG_MAX];
			const char *m = cJSON_IsString(msg) ? msg->valuestring :
			    "(no message)";
			util_sanitize(clean, sizeof clean, m, strlen(m), false);
			cJSON_Delete(j);
			return errbuf_set(e, ERRBUF_INTERNAL,
			    "docker: POST %s: %s", path, clean);
		}
		cJSON_Delete(j);
		if (end == NULL || end <= buf + off)
			break;
		off = (size_t)(end - buf);
	}
	return 0;
}

int
docker_image_import(struct docker *d, const char *tar_path,
    const char *repo, const char *tag, struct errbuf *e)
{
	return docker_image_import_labelled(d, tar_path, repo, tag, NULL, e);
}

int
docker_image_import_labelled(struct docker *d, const char *tar_path,
    const char *repo, const char *tag, const char *label, struct errbuf *e)
{
	struct upload up = { .fd = -1 };
	struct sink s = {0};
	struct stat st;
	char *erepo, *etag = NULL, *path, *echg = NULL;
	long status;
	int rc;

	if (repo == NULL || repo[0] == '\0')
		return errbuf_set(e, ERRBUF_INPUT, "docker: image import: no repo");
	if (label != NULL && (strchr(label, '=') == NULL ||
	    strpbrk(label, " \t\r\n\"'\\") != NULL))
		return errbuf_set(e, ERRBUF_INPUT, "docker: image import: bad "
		    "label");
	up.fd = open(tar_path, O_RDONLY | O_CLOEXEC);
	if (up.fd < 0)
		return errbuf_set(e, ERRBUF_INPUT, "docker: image import: %s: %s",
		    tar_path, strerror(errno));
	if (fstat(up.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(up.fd);
		return errbuf_set(e, ERRBUF_INPUT,
		    "docker: image import: %s: not a regular file", tar_path);
	}
	erepo = esc(d, repo);
	if (tag != NULL)
		etag = esc(d, tag);
	if (label != NULL) {
		char *chg = xasprintf("LABEL %s", label);

		echg = esc(d, chg);
		free(chg);
	}
	path = xasprintf("/images/create?fromSrc=-&repo=%s%s%s%s%s", erepo,
	    etag ? "&tag=" : "", etag ? etag : "", echg ? "&changes=" : "",
	    echg ? echg : "");
	free(erepo);
	free(etag);
	free(echg);

	rc = request_sink(d, "POST", path, "application/x-tar", NULL, 0, &up,
	    (curl_off_t)st.st_size, IMPORT_TIMEOUT_MS, &s, &status, e);
	close(up.fd);
	if (rc == 0) {
		if (status != 200) {
			struct docker_response r = { status, s.buf, s.len };
			rc = daemon_error("POST", path, &r, e);
		} else {
			rc = progress_check(path, s.buf ? s.buf : "", s.len, e);
		}
	}
	if (rc < 0)
		errbuf_prefix(e, "importing %s", tar_path);
	free(s.buf);
	free(path);
	return rc;
}

/* ------------------------------------------------------------------ */
/* networks                                                            */
/* ------------------------------------------------------------------ */

/*
 * The POST /networks/create body: a bridge, Internal always, labelled
 * with its run and owner, the bridge name and no host address when asked,
 * the subnet (and the range the engine hands out) when given.  Caller
 * cJSON_Delete()s.
 */
cJSON *
docker_network_config(const struct docker_network_spec *spec)
{
	cJSON *b, *labels, *opts;

	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "Name", spec->name);
	cJSON_AddStringToObject(b, "Driver", "bridge");
	cJSON_AddTrueToObject(b, "Internal");      /* always: docs/lab.md */
	cJSON_AddBoolToObject(b, "CheckDuplicate", true);
	labels = cJSON_AddObjectToObject(b, "Labels");
	if (spec->run_id != NULL)
		cJSON_AddStringToObject(labels, "ares.run", spec->run_id);
	/* who may remove it once we are gone (core/gc.c) */
	if (spec->owner != NULL || spec->run_id != NULL)
		cJSON_AddStringToObject(labels, "ares.owner",
		    spec->owner != NULL ? spec->owner : gc_owner());
	if (spec->lease != NULL)
		cJSON_AddStringToObject(labels, "ares.lease", spec->lease);
	opts = cJSON_AddObjectToObject(b, "Options");
	if (spec->bridge_name != NULL)
		cJSON_AddStringToObject(opts, "com.docker.network.bridge.name",
		    spec->bridge_name);
	if (spec->no_host_address)
		cJSON_AddStringToObject(opts,
		    "com.docker.network.bridge.inhibit_ipv4", "true");
	if (spec->subnet != NULL) {
		cJSON *ipam = cJSON_AddObjectToObject(b, "IPAM");
		cJSON *cfg = cJSON_AddArrayToObject(ipam, "Config");
		cJSON *c = cJSON_CreateObject();

		cJSON_AddStringToObject(ipam, "Driver", "default");
		cJSON_AddStringToObject(c, "Subnet", spec->subnet);
		if (spec->ip_range != NULL)
			cJSON_AddStringToObject(c, "IPRange", spec->ip_range);
		cJSON_AddItemToArray(cfg, c);
	}
	return b;
}

char *
docker_network_create(struct docker *d,
    const struct docker_network_spec *spec, struct errbuf *e)
{
	struct docker_response r;
	cJSON *b;
	int rc;

	if (spec->name == NULL || spec->name[0] == '\0') {
		errbuf_set(e, ERRBUF_INPUT, "docker: network create: no name");
		return NULL;
	}
	b = docker_network_config(spec);
	rc = call(d, "POST", "/networks/create", b, 0, &r, e);
	cJSON_Delete(b);
	if (rc < 0)
		return NULL;
	return answer_id("POST", "/networks/create", &r, e);
}

int
docker_network_remove(struct docker *d, const char *id, struct errbuf *e)
{
	char *path = id_path(d, "/networks", id, "");
	int rc = call_simple(d, "DELETE", path, NULL, 0, e);
	free(path);
	return rc;
}

int
docker_network_connect(struct docker *d, const char *net,
    const char *container, const char *const *aliases, struct errbuf *e)
{
	char *path = id_path(d, "/networks", net, "/connect");
	cJSON *b = cJSON_CreateObject();
	cJSON *ep;
	int rc;

	cJSON_AddStringToObject(b, "Container", container);
	ep = cJSON_AddObjectToObject(b, "EndpointConfig");
	if (aliases != NULL)
		cJSON_AddItemToObject(ep, "Aliases", str_array(aliases));
	rc = call_simple(d, "POST", path, b, 0, e);
	cJSON_Delete(b);
	free(path);
	return rc;
}

int
docker_network_disconnect(struct docker *d, const char *net,
    const char *container, bool force, struct errbuf *e)
{
	char *path = id_path(d, "/networks", net, "/disconnect");
	cJSON *b = cJSON_CreateObject();
	int rc;

	cJSON_AddStringToObject(b, "Container", container);
	cJSON_AddBoolToObject(b, "Force", force);
	rc = call_simple(d, "POST", path, b, 0, e);
	cJSON_Delete(b);
	free(path);
	return rc;
}

/* GET prefix?...filters={"label":[label]}; an array (caller deletes). */
static cJSON *
list_by_label(struct docker *d, const char *prefix,
    const char *label, struct errbuf *e)
{
	cJSON *f = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(f, "label");
	char *txt, *etxt, *path;
	cJSON *out = NULL;

	cJSON_AddItemToArray(arr, cJSON_CreateString(label));
	txt = cJSON_PrintUnformatted(f);
	cJSON_Delete(f);
	if (txt == NULL)
		util_fatal("docker: cannot serialise filters");
	etxt = esc(d, txt);
	free(txt);
	path = xasprintf("%sfilters=%s", prefix, etxt);
	free(etxt);
	out = get_json(d, path, cJSON_IsArray, e);
	free(path);
	return out;
}

cJSON *
docker_containers_by_label(struct docker *d, const char *label,
    struct errbuf *e)
{
	return list_by_label(d, "/containers/json?all=1&", label, e);
}

cJSON *
docker_networks_by_label(struct docker *d, const char *label,
    struct errbuf *e)
{
	return list_by_label(d, "/networks?", label, e);
}

cJSON *
docker_images_by_label(struct docker *d, const char *label,
    struct errbuf *e)
{
	return list_by_label(d, "/images/json?", label, e);
}

/* ------------------------------------------------------------------ */
/* volumes                                                             */
/* ------------------------------------------------------------------ */

/* Pure: the POST /volumes/create body (driver local, labelled with its
 * run, role and owner, and its lease when given).  Caller
 * cJSON_Delete()s. */
cJSON *
docker_volume_config(const struct docker_volume_spec *spec)
{
	cJSON *b = cJSON_CreateObject(), *labels;

	cJSON_AddStringToObject(b, "Name", spec->name);
	cJSON_AddStringToObject(b, "Driver", "local");
	labels = cJSON_AddObjectToObject(b, "Labels");
	if (spec->run_id != NULL)
		cJSON_AddStringToObject(labels, "ares.run", spec->run_id);
	if (spec->role != NULL)
		cJSON_AddStringToObject(labels, "ares.role", spec->role);
	if (spec->owner != NULL || spec->run_id != NULL)
		cJSON_AddStringToObject(labels, "ares.owner",
		    spec->owner != NULL ? spec->owner : gc_owner());
	if (spec->lease != NULL)
		cJSON_AddStringToObject(labels, "ares.lease", spec->lease);
	return b;
}

int
docker_volume_create(struct docker *d, const struct docker_volume_spec *spec,
    struct errbuf *e)
{
	struct docker_response r;
	unsigned char raw[32];
	char nonce[sizeof raw * 2 + 1];
	cJSON *b, *j, *labels;
	const char *name;
	char *path;
	int rc;

	if (spec->name == NULL || spec->name[0] == '\0')
		return errbuf_set(e, ERRBUF_INPUT, "docker: volume create: no "
		    "name");
	/* the engine answers POST /volumes/create with an existing volume
	 * of that name as if it made it (labels and content kept): a name
	 * that exists is refused, never adopted */
	path = id_path(d, "/volumes", spec->name, "");
	rc = docker_request(d, "GET", path, NULL, 0, &r, e);
	if (rc < 0) {
		free(path);
		return -1;
	}
	if (r.status != 404) {
		rc = r.status == 200 ? errbuf_set(e, ERRBUF_INTERNAL, "docker: "
		    "volume %.100s exists already (not made by this run): "
		    "refusing to adopt it", spec->name) :
		    daemon_error("GET", path, &r, e);
		docker_response_free(&r);
		free(path);
		return rc;
	}
	docker_response_free(&r);
	free(path);
	/* one made between that look and the create is told by a label
	 * only this request carries: a fresh random nonce */
	randombytes_buf(raw, sizeof raw);
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(nonce + 2 * i, 3, "%02x", raw[i]);
	b = docker_volume_config(spec);
	labels = cJSON_GetObjectItemCaseSensitive(b, "Labels");
	cJSON_AddStringToObject(labels, "ares.nonce", nonce);
	rc = call(d, "POST", "/volumes/create", b, 0, &r, e);
	cJSON_Delete(b);
	if (rc < 0)
		return -1;
	j = parse_answer("POST", "/volumes/create", &r, cJSON_IsObject, e);
	if (j == NULL)
		return -1;
	/* it must be the one asked for, made by this request */
	name = util_json_str(j, "Name", NULL);
	labels = cJSON_GetObjectItemCaseSensitive(j, "Labels");
	rc = name != NULL && strcmp(name, spec->name) == 0 &&
	    (spec->run_id == NULL || strcmp(util_json_str(labels, "ares.run",
	    ""), spec->run_id) == 0) && strcmp(util_json_str(labels,
	    "ares.nonce", ""), nonce) == 0 ? 0 : errbuf_set(e, ERRBUF_INTERNAL,
	    "docker: volume create %.100s: the engine answered with another "
	    "volume (not the one this request made)", spec->name);
	cJSON_Delete(j);
	return rc;
}

int
docker_volume_remove(struct docker *d, const char *name, bool force,
    struct errbuf *e)
{
	char *path = id_path(d, "/volumes", name, force ? "?force=1" : "");
	int rc = call_simple(d, "DELETE", path, NULL, 0, e);

	free(path);
	return rc;
}

cJSON *
docker_volumes_by_label(struct docker *d, const char *label,
    struct errbuf *e)
{
	cJSON *f = cJSON_CreateObject(), *obj, *vols;
	char *txt, *etxt, *path;

	cJSON_AddItemToArray(cJSON_AddArrayToObject(f, "label"),
	    cJSON_CreateString(label));
	txt = cJSON_PrintUnformatted(f);
	cJSON_Delete(f);
	if (txt == NULL)
		util_fatal("docker: cannot serialise filters");
	etxt = esc(d, txt);
	free(txt);
	path = xasprintf("/volumes?filters=%s", etxt);
	free(etxt);
	/* {"Volumes": [...] or null, "Warnings": ...}: the array only */
	obj = get_json(d, path, cJSON_IsObject, e);
	if (obj == NULL) {
		free(path);
		return NULL;
	}
	vols = cJSON_DetachItemFromObjectCaseSensitive(obj, "Volumes");
	cJSON_Delete(obj);
	if (vols == NULL || cJSON_IsNull(vols)) {
		cJSON_Delete(vols);
		vols = cJSON_CreateArray();
	}
	if (!cJSON_IsArray(vols)) {
		cJSON_Delete(vols);
		errbuf_set(e, ERRBUF_INTERNAL, "docker: GET %s: unexpected answer "
		    "(Volumes is not a list)", path);
		free(path);
		return NULL;
	}
	free(path);
	return vols;
}

/* ------------------------------------------------------------------ */
/* containers                                                          */
/* ------------------------------------------------------------------ */

/*
 * The POST /containers/create body.  Mounts are "type":"bind" entries (the
 * daemon refuses a missing source instead of creating it, unlike Binds).
 * NetworkMode is the network or "none"; the network's aliases go in
 * NetworkingConfig.EndpointsConfig.  Caller cJSON_Delete()s.
 */
cJSON *
docker_container_config(const struct docker_container_spec *spec)
{
	cJSON *c = cJSON_CreateObject();
	cJSON *hc, *labels;

	if (spec->image != NULL)
		cJSON_AddStringToObject(c, "Image", spec->image);
	if (spec->cmd != NULL)
		cJSON_AddItemToObject(c, "Cmd", str_array(spec->cmd));
	if (spec->entrypoint != NULL)
		cJSON_AddItemToObject(c, "Entrypoint",
		    str_array(spec->entrypoint));
	if (spec->no_healthcheck) {
		cJSON *hk = cJSON_AddObjectToObject(c, "Healthcheck");
		cJSON *t = cJSON_AddArrayToObject(hk, "Test");

		cJSON_AddItemToArray(t, cJSON_CreateString("NONE"));
	}
	if (spec->env != NULL)
		cJSON_AddItemToObject(c, "Env", str_array(spec->env));
	if (spec->user != NULL)
		cJSON_AddStringToObject(c, "User", spec->user);
	if (spec->hostname != NULL)
		cJSON_AddStringToObject(c, "Hostname", spec->hostname);
	if (spec->workdir != NULL)
		cJSON_AddStringToObject(c, "WorkingDir", spec->workdir);
	cJSON_AddBoolToObject(c, "Tty", false);
	cJSON_AddBoolToObject(c, "OpenStdin", false);
	if (spec->run_id != NULL || spec->role != NULL ||
	    spec->owner != NULL) {
		labels = cJSON_AddObjectToObject(c, "Labels");
		if (spec->run_id != NULL)
			cJSON_AddStringToObject(labels, "ares.run", spec->run_id);
		if (spec->role != NULL)
			cJSON_AddStringToObject(labels, "ares.role", spec->role);
		/* who may remove it once we are gone (core/gc.c) */
		if (spec->owner != NULL)
			cJSON_AddStringToObject(labels, "ares.owner",
			    spec->owner);
		if (spec->lease != NULL)
			cJSON_AddStringToObject(labels, "ares.lease",
			    spec->lease);
	}

	hc = cJSON_AddObjectToObject(c, "HostConfig");
	if (spec->nmounts > 0) {
		cJSON *ms = cJSON_AddArrayToObject(hc, "Mounts");
		for (size_t i = 0; i < spec->nmounts; i++) {
			const struct docker_mount *m = &spec->mounts[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "Type", m->volume ? "volume" :
			    "bind");
			if (!m->volume || m->source != NULL)
				cJSON_AddStringToObject(o, "Source", m->source);
			cJSON_AddStringToObject(o, "Target", m->target);
			cJSON_AddBoolToObject(o, "ReadOnly", m->read_only);
			cJSON_AddItemToArray(ms, o);
		}
	}
	if (spec->tmpfs != NULL && spec->tmpfs[0] != NULL) {
		cJSON *t = cJSON_AddObjectToObject(hc, "Tmpfs");
		for (size_t i = 0; spec->tmpfs[i] != NULL; i++) {
			const char *colon = strchr(spec->tmpfs[i], ':');
			char *path = colon != NULL ? xstrndup(spec->tmpfs[i],
			    (size_t)(colon - spec->tmpfs[i])) :
			    xstrdup(spec->tmpfs[i]);

			cJSON_AddStringToObject(t, path, colon != NULL ?
			    colon + 1 : "");
			free(path);
		}
	}
	if (spec->drop_all_caps) {
		const char *all[] = { "ALL", NULL };
		cJSON_AddItemToObject(hc, "CapDrop", str_array(all));
	}
	if (spec->cap_add != NULL && spec->cap_add[0] != NULL)
		cJSON_AddItemToObject(hc, "CapAdd", str_array(spec->cap_add));
	cJSON_AddBoolToObject(hc, "Privileged", spec->privileged);
	if (spec->proc_sys_net_rw) {
		/* Docker 20.10's default list with /proc/sys replaced by its
		 * subtrees other than net/: a non-net sysctl checks no
		 * capability, only the global root uid and the mount, so a
		 * writable one (kernel.core_pattern) would be host root; the
		 * runtime skips a path this kernel does not have */
		static const char *const ro[] = { "/proc/bus", "/proc/fs",
		    "/proc/irq", "/proc/sysrq-trigger", "/proc/sys/kernel",
		    "/proc/sys/vm", "/proc/sys/fs", "/proc/sys/dev",
		    "/proc/sys/user", "/proc/sys/abi", "/proc/sys/debug",
		    "/proc/sys/crypto", NULL };
		cJSON_AddItemToObject(hc, "ReadonlyPaths", str_array(ro));
	}
	cJSON_AddBoolToObject(hc, "ReadonlyRootfs", spec->read_only_rootfs);
	if (spec->cgroupns_private)
		cJSON_AddStringToObject(hc, "CgroupnsMode", "private");
	if (spec->no_new_privileges || spec->seccomp != NULL) {
		cJSON *so = cJSON_AddArrayToObject(hc, "SecurityOpt");

		if (spec->no_new_privileges)
			cJSON_AddItemToArray(so, cJSON_CreateString(
			    "no-new-privileges"));
		/* the profile itself, as the Engine API takes it (never
		 * "unconfined": docs/security.md) */
		if (spec->seccomp != NULL && strcmp(spec->seccomp,
		    "unconfined") != 0) {
			char *opt = xasprintf("seccomp=%s", spec->seccomp);

			cJSON_AddItemToArray(so, cJSON_CreateString(opt));
			free(opt);
		}
	}
	if (spec->pid_mode != NULL)
		cJSON_AddStringToObject(hc, "PidMode", spec->pid_mode);
	if (spec->ipc_mode != NULL)
		cJSON_AddStringToObject(hc, "IpcMode", spec->ipc_mode);
	if (spec->shm_bytes > 0)
		cJSON_AddNumberToObject(hc, "ShmSize", (double)spec->shm_bytes);
	if (spec->memory_bytes > 0) {
		cJSON_AddNumberToObject(hc, "Memory",
		    (double)spec->memory_bytes);
		cJSON_AddNumberToObject(hc, "MemorySwap",
		    (double)spec->memory_bytes);
	}
	if (spec->pids_limit > 0)
		cJSON_AddNumberToObject(hc, "PidsLimit",
		    (double)spec->pids_limit);
	if (spec->nano_cpus > 0)
		cJSON_AddNumberToObject(hc, "NanoCpus",
		    (double)spec->nano_cpus);
	if (spec->sysctls != NULL && spec->sysctls[0] != NULL) {
		cJSON *sc = cJSON_AddObjectToObject(hc, "Sysctls");
		for (size_t i = 0; spec->sysctls[i] != NULL; i++) {
			const char *eq = strchr(spec->sysctls[i], '=');
			char *k;

			if (eq == NULL)
				continue;
			k = xstrndup(spec->sysctls[i],
			    (size_t)(eq - spec->sysctls[i]));
			cJSON_AddStringToObject(sc, k, eq + 1);
			free(k);
		}
	}
	if (spec->group_add != NULL && spec->group_add[0] != NULL)
		cJSON_AddItemToObject(hc, "GroupAdd", str_array(spec->group_add));
	{
		cJSON *lc = cJSON_AddObjectToObject(hc, "LogConfig");
		cJSON *lo;

		cJSON_AddStringToObject(lc, "Type", "json-file");
		lo = cJSON_AddObjectToObject(lc, "Config");
		cJSON_AddStringToObject(lo, "max-size", DOCKER_LOG_MAX_SIZE);
		cJSON_AddStringToObject(lo, "max-file", "1");
	}
	cJSON_AddStringToObject(cJSON_AddObjectToObject(hc, "RestartPolicy"),
	    "Name", "no");
	cJSON_AddStringToObject(hc, "NetworkMode",
	    spec->network ? spec->network : "none");
	if (spec->dns != NULL && spec->dns[0] != NULL)
		cJSON_AddItemToObject(hc, "Dns", str_array(spec->dns));
	if (spec->runtime != NULL)
		cJSON_AddStringToObject(hc, "Runtime", spec->runtime);

	if (spec->network != NULL) {
		cJSON *nc = cJSON_AddObjectToObject(c, "NetworkingConfig");
		cJSON *eps = cJSON_AddObjectToObject(nc, "EndpointsConfig");
		cJSON *ep = cJSON_AddObjectToObject(eps, spec->network);
		if (spec->aliases != NULL)
			cJSON_AddItemToObject(ep, "Aliases",
			    str_array(spec->aliases));
		if (spec->ipv4 != NULL)
			cJSON_AddStringToObject(cJSON_AddObjectToObject(ep,
			    "IPAMConfig"), "IPv4Address", spec->ipv4);
	}
	return c;
}

char *
docker_container_create(struct docker *d,
    const struct docker_container_spec *spec, struct errbuf *e)
{
	struct docker_response r;
	cJSON *b;
	char *path, *ename;
	int rc;

	if (spec->image == NULL || spec->image[0] == '\0') {
		errbuf_set(e, ERRBUF_INPUT, "docker: container create: no image");
		return NULL;
	}
	if (spec->name != NULL) {
		ename = esc(d, spec->name);
		path = xasprintf("/containers/create?name=%s", ename);
		free(ename);
	} else {
		path = xstrdup("/containers/create");
	}
	{
		/* every container of a run carries its owner */
		struct docker_container_spec s = *spec;

		if (s.owner == NULL && s.run_id != NULL)
			s.owner = gc_owner();
		b = docker_container_config(&s);
	}
	rc = call(d, "POST", path, b, 0, &r, e);
	cJSON_Delete(b);
	if (rc < 0) {
		free(path);
		return NULL;
	}
	{
		char *id = answer_id("POST", path, &r, e);
		free(path);
		return id;
	}
}

/* POST /containers/{id}<what>; extra_ok as in call(). */
static int
container_post(struct docker *d, const char *id,
    const char *what, long extra_ok, struct errbuf *e)
{
	char *path = id_path(d, "/containers", id, what);
	int rc = call_simple(d, "POST", path, NULL, extra_ok, e);
	free(path);
	return rc;
}

/* 304 "already started" counts as success. */
int
docker_container_start(struct docker *d, const char *id, struct errbuf *e)
{
	return container_post(d, id, "/start", 304, e);
}

/* Pausing a paused container is a daemon error (409). */
int
docker_container_pause(struct docker *d, const char *id, struct errbuf *e)
{
	return container_post(d, id, "/pause", 0, e);
}

int
docker_container_unpause(struct docker *d, const char *id,
    struct errbuf *e)
{
	return container_post(d, id, "/unpause", 0, e);
}

/*
 * Send sig (NULL: SIGKILL) to the container.  A 304 answer counts as
 * success; killing a container that is not running is the daemon's 409
 * error (callers that only need "not running" should inspect).
 */
int
docker_container_kill(struct docker *d, const char *id, const char *sig,
    struct errbuf *e)
{
	char *esig = esc(d, sig ? sig : "SIGKILL");
	char *what = xasprintf("/kill?signal=%s", esig);
	int rc = container_post(d, id, what, 304, e);
	free(what);
	free(esig);
	return rc;
}

/* DELETE with v=1 (anonymous volumes go too); force kills a running one. */
int
docker_container_remove(struct docker *d, const char *id, bool force,
    struct errbuf *e)
{
	char *path = id_path(d, "/containers", id,
	    force ? "?force=1&v=1" : "?force=0&v=1");
	int rc = call_simple(d, "DELETE", path, NULL, 0, e);
	free(path);
	return rc;
}

cJSON *
docker_container_inspect(struct docker *d, const char *id,
    struct errbuf *e)
{
	return get_object(d, "/containers", id, "/json", e);
}

/* State.<key> of an inspect answer, or NULL. */
static const cJSON *
inspect_state(const cJSON *inspect, const char *key)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(inspect, "State");
	return cJSON_GetObjectItemCaseSensitive(st, key);
}

bool
docker_inspect_running(const cJSON *inspect)
{
	return cJSON_IsTrue(inspect_state(inspect, "Running"));
}

bool
docker_inspect_paused(const cJSON *inspect)
{
	return cJSON_IsTrue(inspect_state(inspect, "Paused"));
}

/* State.Pid when it is a number in 1..INT_MAX, else 0. */
int
docker_inspect_pid(const cJSON *inspect)
{
	const cJSON *p = inspect_state(inspect, "Pid");
	if (!cJSON_IsNumber(p) || !(p->valuedouble >= 1) ||
	    p->valuedouble > (double)INT_MAX)
		return 0;
	return (int)p->valuedouble;
}

size_t
docker_inspect_network_count(const cJSON *inspect)
{
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(inspect,
	    "NetworkSettings");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ns, "Networks");
	if (!cJSON_IsObject(n))
		return 0;
	return (size_t)cJSON_GetArraySize(n);
}

/* NetworkSettings.Networks[net].IPAddress when non-empty (caller frees),
 * else NULL. */
char *
docker_container_ip(const cJSON *inspect, const char *net)
{
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(inspect,
	    "NetworkSettings");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ns, "Networks");
	const cJSON *ep = net ? cJSON_GetObjectItemCaseSensitive(n, net) : NULL;
	const cJSON *ip = cJSON_GetObjectItemCaseSensitive(ep, "IPAddress");
	if (!cJSON_IsString(ip) || ip->valuestring[0] == '\0' ||
	    strlen(ip->valuestring) > 45)
		return NULL;
	return xstrdup(ip->valuestring);
}

cJSON *
docker_network_inspect(struct docker *d, const char *id,
    struct errbuf *e)
{
	return get_object(d, "/networks", id, "", e);
}

/* Keeps the last max bytes of the combined log stream. */
struct tail {
	char *buf;
	size_t len, cap, max;
};

/* Log stream callback (both streams alike): append, keeping the last
 * t->max bytes at least; the buffer never holds more than 2 * max (+1),
 * and is not NUL-terminated. */
static void
tail_emit(void *ctx, int stream, const char *p, size_t n)
{
	struct tail *t = ctx;
	(void)stream;
	if (n >= t->max) {
		p += n - t->max;
		n = t->max;
		t->len = 0;
	} else if (t->len + n > 2 * t->max) {
		size_t keep = t->max - n;
		memmove(t->buf, t->buf + t->len - keep, keep);
		t->len = keep;
	}
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n + 1)
			cap *= 2;
		if (cap > 2 * t->max + 1)
			cap = 2 * t->max + 1;
		t->buf = xrealloc(t->buf, cap);
		t->cap = cap;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

/*
 * Logs of a container created without a TTY (multiplexed stream):
 * stdout and stderr interleaved in arrival order, the last max bytes kept
 * (max is capped at DOCKER_BODY_MAX).  The text is untrusted: sanitize
 * before showing it.  Caller frees.  NULL + e.
 */
char *
docker_container_logs(struct docker *d, const char *id, size_t max,
    struct errbuf *e)
{
	struct tail t = {0};
	struct demux m = {0};
	struct sink s = {0};
	char *path;
	long status;
	int rc;

	if (max > DOCKER_BODY_MAX)
		max = DOCKER_BODY_MAX;
	if (max == 0)
		return xstrdup("");
	t.max = max;
	m.emit = tail_emit;
	m.ctx = &t;
	s.mux = &m;
	path = id_path(d, "/containers", id, "/logs?stdout=1&stderr=1");
	rc = request_sink(d, "GET", path, NULL, NULL, 0, NULL, 0,
	    REQUEST_TIMEOUT_MS, &s, &status, e);
	if (rc == 0 && status != 200) {
		struct docker_response r = { status, s.buf, s.len };
		rc = daemon_error("GET", path, &r, e);
	} else if (rc == 0 && demux_finish(&m, e) < 0) {
		rc = errbuf_prefix(e, "GET %s", path);
	}
	free(s.buf);
	free(path);
	if (rc < 0) {
		free(t.buf);
		return NULL;
	}
	if (t.len > max) {
		memmove(t.buf, t.buf + t.len - max, max);
		t.len = max;
	}
	if (t.buf == NULL)
		return xstrdup("");
	t.buf[t.len] = '\0';
	return t.buf;
}

/* ------------------------------------------------------------------ */
/* exec                                                                */
/* ------------------------------------------------------------------ */

/* Sleep ms milliseconds, going on after a signal. */
static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * ExitCode of a finished exec.  The attach stream can end a moment before
 * the daemon records the exit, so poll (up to ~2 s) while it still reports
 * Running or no ExitCode.  -1 + e.
 */
static int
exec_exit_code(struct docker *d, const char *eid, int *code,
    struct errbuf *e)
{
	char *path = id_path(d, "/exec", eid, "/json");
	for (int i = 0; i < 200; i++) {
		cJSON *j;
		const cJSON *run, *ec;

		j = get_json(d, path, cJSON_IsObject, e);
		if (j == NULL)
			break;
		run = cJSON_GetObjectItemCaseSensitive(j, "Running");
		ec = cJSON_GetObjectItemCaseSensitive(j, "ExitCode");
		if (!cJSON_IsTrue(run) && cJSON_IsNumber(ec)) {
			/* -1 outside int's range: casting it is undefined */
			*code = ec->valuedouble >= INT_MIN &&
			    ec->valuedouble <= INT_MAX ?
			    (int)ec->valuedouble : -1;
			cJSON_Delete(j);
			free(path);
			return 0;
		}
		cJSON_Delete(j);
		sleep_ms(10);
		if (i == 199)
			errbuf_set(e, ERRBUF_INTERNAL,
			    "docker: GET %s: exec still running after its "
			    "stream ended", path);
	}
	free(path);
	return -1;
}

/*
 * Run argv in container id: create the exec, start it attached (no TTY),
 * demultiplex the stream as it arrives (each of stdout/stderr bounded to
 * max), then read ExitCode.  r is overwritten; on success the caller frees
 * it with docker_exec_result_free (out/err are never NULL).  -1 + e, with
 * r freed.
 */
int
docker_exec(struct docker *d, const char *id, const char *const *argv,
    const char *user, size_t max, struct docker_exec_result *r,
    struct errbuf *e)
{
	struct docker_response resp;
	struct exec_sink es = { r, max };
	struct demux m = { .emit = exec_emit, .ctx = &es };
	struct sink s = { .mux = &m };
	cJSON *b;
	char *path, *eid = NULL, *txt;
	long status;
	int rc;

	memset(r, 0, sizeof *r);
	if (argv == NULL || argv[0] == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "docker: exec: empty argv");

	path = id_path(d, "/containers", id, "/exec");
	b = cJSON_CreateObject();
	cJSON_AddBoolToObject(b, "AttachStdin", false);
	cJSON_AddBoolToObject(b, "AttachStdout", true);
	cJSON_AddBoolToObject(b, "AttachStderr", true);
	cJSON_AddBoolToObject(b, "Tty", false);
	cJSON_AddItemToObject(b, "Cmd", str_array(argv));
	if (user != NULL)
		cJSON_AddStringToObject(b, "User", user);
	rc = call(d, "POST", path, b, 0, &resp, e);
	cJSON_Delete(b);
	if (rc == 0)
		eid = answer_id("POST", path, &resp, e);
	free(path);
	if (eid == NULL)
		return -1;

	path = id_path(d, "/exec", eid, "/start");
	b = cJSON_CreateObject();
	cJSON_AddBoolToObject(b, "Detach", false);
	cJSON_AddBoolToObject(b, "Tty", false);
	txt = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	if (txt == NULL)
		util_fatal("docker: cannot serialise exec start");
	rc = request_sink(d, "POST", path, "application/json", txt,
	    strlen(txt), NULL, 0, REQUEST_TIMEOUT_MS, &s, &status, e);
	free(txt);
	if (rc == 0 && (status < 200 || status >= 300)) {
		struct docker_response er = { status, s.buf, s.len };
		rc = daemon_error("POST", path, &er, e);
	} else if (rc == 0 && demux_finish(&m, e) < 0) {
		rc = errbuf_prefix(e, "POST %s", path);
	}
	free(s.buf);
	free(path);
	if (rc == 0)
		rc = exec_exit_code(d, eid, &r->exit_code, e);
	free(eid);
	if (rc < 0) {
		docker_exec_result_free(r);
		return -1;
	}
	exec_result_fill(r);
	return 0;
}

uint64_t
docker_set_deadline(struct docker *d, uint64_t mono_ns)
{
	uint64_t old = d->deadline_ns;

	d->deadline_ns = mono_ns;
	return old;
}

/* GET /info (internal.h). */
cJSON *
docker_info(struct docker *d, struct errbuf *e)
{
	return get_json(d, "/info", cJSON_IsObject, e);
}

/* ------------------------------------------------------------------ */
/* archive API                                                         */
/* ------------------------------------------------------------------ */

int
docker_archive_put(struct docker *d, const char *id, const char *path,
    const void *tar, size_t len, struct errbuf *e)
{
	struct sink s = {0};
	char *x = esc(d, path), *suffix, *url;
	long status;
	int rc;

	suffix = xasprintf("/archive?path=%s&noOverwriteDirNonDir=1", x);
	url = id_path(d, "/containers", id, suffix);
	free(suffix);
	free(x);
	rc = request_sink(d, "PUT", url, "application/x-tar", tar, len, NULL,
	    0, REQUEST_TIMEOUT_MS, &s, &status, e);
	if (rc == 0 && status != 200) {
		struct docker_response r = { status, s.buf, s.len };
		rc = daemon_error("PUT", url, &r, e);
	}
	free(s.buf);
	free(url);
	return rc;
}

char *
docker_archive_get(struct docker *d, const char *id, const char *path,
    size_t max, size_t *len, struct errbuf *e)
{
	struct sink s = { .max = max };
	char *x = esc(d, path), *suffix, *url;
	long status;
	int rc;

	*len = 0;
	if (max == 0 || max > DOCKER_BODY_MAX)
		s.max = DOCKER_BODY_MAX;
	suffix = xasprintf("/archive?path=%s", x);
	url = id_path(d, "/containers", id, suffix);
	free(suffix);
	free(x);
	rc = request_sink(d, "GET", url, NULL, NULL, 0, NULL, 0,
	    REQUEST_TIMEOUT_MS, &s, &status, e);
	if (rc == 0 && status != 200) {
		struct docker_response r = { status, s.buf, s.len };
		rc = daemon_error("GET", url, &r, e);
	}
	free(url);
	if (rc < 0) {
		free(s.buf);
		return NULL;
	}
	*len = s.len;
	return s.buf != NULL ? s.buf : xstrdup("");
}

/* ------------------------------------------------------------------ */
/* following a container's stdout                                      */
/* ------------------------------------------------------------------ */

struct docker_follow {
	struct docker *d;          /* the thread's own handle */
	char *path;
	size_t line_max;
	docker_line_fn fn;
	void *ctx;
	pthread_t tid;
	atomic_bool stop;
	atomic_bool done;
	pthread_mutex_t mu;        /* guards done_cv waits */
	pthread_cond_t done_cv;
	char *line;                /* line_max + 1 bytes */
	size_t have;
	bool skipping;             /* inside an overlong line */
	struct docker_follow_stats st;
};

/* Frame callback: split stdout into lines, bounded. */
static void
follow_emit(void *ctx, int stream, const char *p, size_t n)
{
	struct docker_follow *f = ctx;

	if (stream != 1)
		return;
	f->st.bytes += n;
	while (n > 0 && !atomic_load(&f->stop)) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl != NULL ? (size_t)(nl - p) : n;

		if (!f->skipping) {
			if (take > f->line_max - f->have) {
				f->skipping = true;
				f->have = 0;
			} else {
				memcpy(f->line + f->have, p, take);
				f->have += take;
			}
		}
		if (nl == NULL)
			return;
		if (f->skipping) {
			f->st.overlong++;
			f->skipping = false;
		} else {
			f->line[f->have] = '\0';
			f->st.lines++;
			f->fn(f->ctx, f->line, f->have, util_mono_ns());
		}
		f->have = 0;
		p = nl + 1;
		n -= take + 1;
	}
}

/* The follower's thread: one long GET, then done. */
static void *
follow_thread(void *arg)
{
	struct docker_follow *f = arg;
	struct demux m = { .emit = follow_emit, .ctx = f };
	struct sink s = { .mux = &m, .stop = &f->stop };
	struct errbuf e = {0};
	long status = 0;
	int rc;

	rc = request_sink(f->d, "GET", f->path, NULL, NULL, 0, NULL, 0, 0, &s,
	    &status, &e);
	if (rc == 0 && status != 200) {
		struct docker_response r = { status, s.buf, s.len };
		rc = daemon_error("GET", f->path, &r, &e);
	} else if (rc == 0 && !atomic_load(&f->stop) &&
	    demux_finish(&m, &e) < 0) {
		rc = errbuf_prefix(&e, "GET %s", f->path);
	}
	free(s.buf);
	if (rc < 0)
		snprintf(f->st.error, sizeof f->st.error, "%.255s", e.msg);
	else if (!atomic_load(&f->stop))
		f->st.ended = true;
	if (f->have > 0 || f->skipping)
		f->st.partial = 1;
	pthread_mutex_lock(&f->mu);
	atomic_store(&f->done, true);
	pthread_cond_broadcast(&f->done_cv);
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

struct docker_follow *
docker_follow_start(const struct docker *d, const char *id,
    const char *since, size_t line_max, docker_line_fn fn, void *ctx,
    struct errbuf *e)
{
	struct docker_follow *f;
	int err;

	if (line_max == 0 || line_max > DOCKER_BODY_MAX || fn == NULL ||
	    (since != NULL && (since[0] == '\0' || strlen(since) > 32 ||
	    strspn(since, "0123456789.") != strlen(since)))) {
		errbuf_set(e, ERRBUF_INPUT, "docker: follow: bad arguments");
		return NULL;
	}
	f = xcalloc(1, sizeof *f);
	f->d = docker_clone(d);
	f->d->deadline_ns = 0;          /* the stream lasts the lab's life */
	/* as fast as an attach here (Engine 20.10, measured side by side on
	 * one container), and unlike it ends by itself once the container
	 * has stopped */
	{
		char *q = xasprintf("/logs?follow=1&stdout=1&stderr=0%s%s",
		    since != NULL ? "&since=" : "", since != NULL ? since : "");

		f->path = id_path(f->d, "/containers", id, q);
		free(q);
	}
	f->line_max = line_max;
	f->line = xmalloc(line_max + 1);
	f->fn = fn;
	f->ctx = ctx;
	atomic_init(&f->stop, false);
	atomic_init(&f->done, false);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->done_cv, NULL);
	err = pthread_create(&f->tid, NULL, follow_thread, f);
	if (err != 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "docker: follow %s: thread: %s",
		    id, strerror(err));
		pthread_cond_destroy(&f->done_cv);
		pthread_mutex_destroy(&f->mu);
		docker_close(f->d);
		free(f->path);
		free(f->line);
		free(f);
		return NULL;
	}
	return f;
}

int
docker_follow_wait(struct docker_follow *f, long timeout_ms)
{
	struct timespec ts;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&f->mu);
	while (!atomic_load(&f->done))
		if (pthread_cond_timedwait(&f->done_cv, &f->mu, &ts) != 0)
			break;
	rc = atomic_load(&f->done) ? 1 : 0;
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void
docker_follow_stop(struct docker_follow *f, struct docker_follow_stats *st)
{
	if (f == NULL)
		return;
	atomic_store(&f->stop, true);
	pthread_join(f->tid, NULL);
	if (st != NULL)
		*st = f->st;
	pthread_cond_destroy(&f->done_cv);
	pthread_mutex_destroy(&f->mu);
	docker_close(f->d);
	free(f->path);
	free(f->line);
	free(f);
}
