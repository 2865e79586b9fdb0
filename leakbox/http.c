/*
 * http.c - a tiny, bounded HTTP/1.1 server for the lab components.
 *
 * One request per connection, `Connection: close` on every answer, body by
 * Content-Length only, everything bounded (see leakbox.h).  A detached
 * thread per connection so a slow request never blocks another listener.
 */
#include "leakbox.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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

const char *
http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

/* An RFC 9110 token character (a method name's). */
static bool
is_tchar(unsigned char c)
{
	if (c >= '0' && c <= '9') return true;
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
	return strchr("!#$%&'*+-.^_`|~", c) != NULL && c != 0;
}

/* Find "\r\n\r\n" in buf[0..len); returns the head length including it,
 * or 0 when absent. */
static size_t
head_end(const char *buf, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' &&
		    buf[i - 1] == '\r' && buf[i] == '\n')
			return i + 1;
	return 0;
}

void
http_request_free(struct http_request *r)
{
	if (!r)
		return;
	free(r->head);
	free(r->path);
	free(r->query);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* Parse the request line (NUL-terminated, no CRLF) into r.  -400 or 0. */
static int
parse_request_line(char *line, struct http_request *r)
{
	char *sp1 = strchr(line, ' ');
	if (!sp1 || sp1 == line || (size_t)(sp1 - line) >= sizeof(r->method))
		return -400;
	for (char *p = line; p < sp1; p++)
		if (!is_tchar((unsigned char)*p))
			return -400;
	char *target = sp1 + 1;
	char *sp2 = strchr(target, ' ');
	if (!sp2 || sp2 == target || strchr(sp2 + 1, ' '))
		return -400;
	if (strcmp(sp2 + 1, "HTTP/1.1") != 0 && strcmp(sp2 + 1, "HTTP/1.0") != 0)
		return -400;
	if (target[0] != '/')
		return -400;
	for (char *p = target; p < sp2; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return -400;
	memcpy(r->method, line, (size_t)(sp1 - line));
	r->method[sp1 - line] = '\0';
	*sp2 = '\0';
	r->target = target;
	char *q = strchr(target, '?');
	if (q) {
		r->path = xstrndup(target, (size_t)(q - target));
		r->query = xstrdup(q + 1);
	} else {
		r->path = xstrdup(target);
		r->query = xstrdup("");
	}
	return 0;
}

/* Parse one "Name: value" line into r->headers.  -400/-431 or 0. */
static int
parse_header_line(char *line, struct http_request *r)
{
	char *colon = strchr(line, ':');
	if (!colon || colon == line)
		return -400;
	for (char *p = line; p < colon; p++)
		if (!is_tchar((unsigned char)*p))
			return -400;   /* also rejects obs-fold (leading space) */
	if (r->nheaders >= HTTP_MAX_HEADERS)
		return -431;
	*colon = '\0';
	char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	size_t vl = strlen(v);
	while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
		v[--vl] = '\0';
	for (char *p = v; *p; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
			return -400;
	r->headers[r->nheaders].name = line;
	r->headers[r->nheaders].value = v;
	r->nheaders++;
	return 0;
}

/* Parse a Content-Length value: digits only, <= HTTP_BODY_MAX.  Returns the
 * length, -400 malformed, -413 too large. */
static long
parse_content_length(const char *v)
{
	if (!*v)
		return -400;
	unsigned long long n = 0;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return -400;
		n = n * 10 + (unsigned)(*p - '0');
		if (n > HTTP_BODY_MAX)
			return -413;
	}
	return (long)n;
}

int
http_parse(const char *buf, size_t len, struct http_request *r)
{
	memset(r, 0, sizeof(*r));
	size_t scan = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	size_t hl = head_end(buf, scan);
	if (hl == 0)
		return len >= HTTP_HEAD_MAX ? -431 : HTTP_PARSE_MORE;
	if (memchr(buf, '\0', hl))
		return -400;

	/* Lines end with CRLF only: a lone CR or LF is malformed. */
	for (size_t i = 0; i < hl - 4; i++) {
		if (buf[i] == '\r' && buf[i + 1] != '\n')
			return -400;
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return -400;
	}
	r->head = xstrndup(buf, hl - 4);   /* without the final CRLFCRLF */
	char *line = r->head;
	char *eol = strstr(line, "\r\n");
	if (eol)
		*eol = '\0';
	int rc = parse_request_line(line, r);
	while (rc == 0 && eol) {
		line = eol + 2;
		eol = strstr(line, "\r\n");
		if (eol)
			*eol = '\0';
		rc = parse_header_line(line, r);
	}

	long clen = 0;
	bool have_len = false;
	for (size_t i = 0; rc == 0 && i < r->nheaders; i++) {
		if (strcasecmp(r->headers[i].name, "Transfer-Encoding") == 0) {
			rc = -411;
		} else if (strcasecmp(r->headers[i].name, "Content-Length") == 0) {
			long n = parse_content_length(r->headers[i].value);
			if (n < 0)
				rc = (int)n;
			else if (have_len && n != clen)
				rc = -400;
			clen = n;
			have_len = true;
		}
	}
	if (rc != 0) {
		http_request_free(r);
		return rc;
	}
	if (len - hl < (size_t)clen) {
		http_request_free(r);
		return HTTP_PARSE_MORE;
	}
	r->body = xmalloc((size_t)clen + 1);
	memcpy(r->body, buf + hl, (size_t)clen);
	r->body[clen] = '\0';
	r->body_len = (size_t)clen;
	return HTTP_PARSE_OK;
}

const char *
http_header_get(const struct http_request *r, const char *name)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

int
http_query_get(const struct http_request *r, const char *name,
    char *out, size_t outlen)
{
	size_t nl = strlen(name);
	const char *p = r->query ? r->query : "";
	while (*p) {
		const char *amp = strchr(p, '&');
		size_t seg = amp ? (size_t)(amp - p) : strlen(p);
		if (seg > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
			size_t o = 0;
			for (size_t i = nl + 1; i < seg && o + 1 < outlen; i++) {
				int c = (unsigned char)p[i];
				if (c == '%' && i + 2 < seg + 1 &&
				    util_hexval(p[i + 1]) >= 0 &&
				    util_hexval(p[i + 2]) >= 0) {
					c = util_hexval(p[i + 1]) * 16 +
					    util_hexval(p[i + 2]);
					i += 2;
				} else if (c == '+') {
					c = ' ';
				}
				out[o++] = (char)c;
			}
			if (outlen)
				out[o] = '\0';
			return 1;
		}
		p += seg;
		if (*p == '&')
			p++;
	}
	return 0;
}

void
http_response_json(struct http_response *resp, int status, cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!s)
		util_fatal("http: cannot serialise JSON");
	free(resp->body);
	resp->status = status;
	resp->ctype = "application/json";
	resp->body = s;
	resp->len = strlen(s);
}

void
http_response_text(struct http_response *resp, int status,
    const char *ctype, const char *text)
{
	free(resp->body);
	resp->status = status;
	resp->ctype = ctype;
	resp->body = xstrdup(text);
	resp->len = strlen(text);
}

/* ---- server -------------------------------------------------------- */

int
http_listen_tcp_port(const char *hostport, int *port_out, struct errbuf *e)
{
	char host[64];
	const char *colon = hostport ? strrchr(hostport, ':') : NULL;
	if (!colon || (size_t)(colon - hostport) >= sizeof(host))
		return errbuf_set(e, ERRBUF_INPUT, "listen address '%s': want HOST:PORT",
		    hostport ? hostport : "");
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end || port < (port_out ? 0 : 1) || port > 65535)
		return errbuf_set(e, ERRBUF_INPUT, "listen address '%s': bad port",
		    hostport);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa.sin_addr) != 1)
		return errbuf_set(e, ERRBUF_INPUT, "listen address '%s': bad IPv4 host",
		    hostport);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "socket: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	socklen_t sl = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0 ||
	    (port_out && getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)) {
		int err = errno;
		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "listen on %s: %s", hostport,
		    strerror(err));
	}
	if (port_out)
		*port_out = ntohs(sa.sin_port);
	return fd;
}

int
http_listen_tcp(const char *hostport, struct errbuf *e)
{
	return http_listen_tcp_port(hostport, NULL, e);
}

int
http_listen_unix(const char *path, mode_t mode, struct errbuf *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return errbuf_set(e, ERRBUF_INPUT, "unix socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return errbuf_set(e, ERRBUF_INPUT, "%s exists and is not a socket",
			    path);
		unlink(path);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
	    chmod(path, mode) < 0) {
		int err = errno;
		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "listen on %s: %s", path,
		    strerror(err));
	}
	return fd;
}

/* ---- connection table, admission, overload accounting ------------ */

enum slot_phase { PH_READ, PH_HANDLE };

struct http_slot {
	bool used;
	bool evicted;             /* answered 408 and shut down by the
	                             accept loop; its thread is finishing */
	enum slot_phase phase;
	int fd;                   /* valid while used (the thread clears
	                             used before it closes fd) */
	uint32_t addr;            /* peer IPv4, network order; 0 on unix */
	uint64_t start_ns;        /* accepted at */
};

struct addr_stat {
	uint32_t addr;
	unsigned refused, evicted, timed_out, write_timeouts;
};

struct refused {
	int fd;
	uint64_t until_ns;
};

struct http_conns {
	pthread_mutex_t mu;
	pthread_cond_t idle;      /* threads reached 0 */
	struct http_slot *slots;
	size_t nslots;
	int threads;              /* connection threads alive */
	int max_conns, per_remote, read_ms, write_ms, evict_ms;
	const char *name;
	/* overload since the last event (under mu) */
	uint64_t last_emit_ns;    /* 0: none yet */
	uint64_t first_ns;        /* first incident counted */
	uint64_t last_cause_ns;   /* latest agent arrival behind an incident */
	unsigned refused_cap, refused_full, evicted, timed_out, write_timeouts;
	struct addr_stat addrs[HTTP_OVERLOAD_ADDRS];
	size_t naddrs;
	unsigned addrs_other;
	/* refused connections being drained (accept loop only) */
	struct refused linger[HTTP_LINGER_MAX];
	size_t nlinger;
};

/* The per-address counters of addr in c (adding it while there is room),
 * or NULL when HTTP_OVERLOAD_ADDRS others were seen first (counted as
 * addrs_other).  Called with c->mu held. */
static struct addr_stat *
addr_stat_locked(struct http_conns *c, uint32_t addr)
{
	for (size_t i = 0; i < c->naddrs; i++)
		if (c->addrs[i].addr == addr)
			return &c->addrs[i];
	if (c->naddrs == HTTP_OVERLOAD_ADDRS) {
		c->addrs_other++;
		return NULL;
	}
	struct addr_stat *a = &c->addrs[c->naddrs++];
	memset(a, 0, sizeof(*a));
	a->addr = addr;
	return a;
}

/* Count an incident now, caused by what the peer did at cause_ns (a
 * connection that arrived, a request that came): the "overload" event is
 * scored at the latest such time (t_req_ns, docs/scoring.md), not at its
 * own, which may come long after the cut-off for what came before it. */
static void
mark_incident_locked(struct http_conns *c, uint64_t cause_ns)
{
	if (c->first_ns == 0)
		c->first_ns = util_mono_ns();
	if (cause_ns > c->last_cause_ns)
		c->last_cause_ns = cause_ns;
}

/* Does c hold overload counts not reported yet?  c->mu held. */
static bool
pending_locked(const struct http_conns *c)
{
	return c->refused_cap || c->refused_full || c->evicted ||
	    c->timed_out || c->write_timeouts;
}

/* The dotted text of addr (network order); "unix" for a unix listener,
 * "?" when it cannot be printed. */
static void
addr_text(uint32_t addr, bool is_unix, char out[INET_ADDRSTRLEN])
{
	if (is_unix) {
		snprintf(out, INET_ADDRSTRLEN, "unix");
		return;
	}
	struct in_addr ia = { .s_addr = addr };
	if (!inet_ntop(AF_INET, &ia, out, INET_ADDRSTRLEN))
		snprintf(out, INET_ADDRSTRLEN, "?");
}

/* If overload was counted and the last "overload" event is at least
 * HTTP_OVERLOAD_MS old, take the counts (resetting them) and emit one
 * event.  Called without c->mu (sensor_emit takes its own lock and may
 * write the chain); any thread. */
static void
overload_flush(struct http_server *s)
{
	struct http_conns *c = s->conns;
	uint64_t now = util_mono_ns();
	pthread_mutex_lock(&c->mu);
	if (!pending_locked(c) || (c->last_emit_ns != 0 &&
	    now - c->last_emit_ns < (uint64_t)HTTP_OVERLOAD_MS * 1000000u)) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "server", c->name);
	cJSON_AddNumberToObject(f, "window_ms",
	    (double)((now - c->first_ns) / 1000000u));
	cJSON_AddNumberToObject(f, "refused", c->refused_cap + c->refused_full);
	cJSON_AddNumberToObject(f, "refused_cap", c->refused_cap);
	cJSON_AddNumberToObject(f, "refused_full", c->refused_full);
	cJSON_AddNumberToObject(f, "evicted", c->evicted);
	cJSON_AddNumberToObject(f, "timed_out", c->timed_out);
	cJSON_AddNumberToObject(f, "write_timeouts", c->write_timeouts);
	int active = 0;
	for (size_t i = 0; i < c->nslots; i++)
		active += c->slots[i].used && !c->slots[i].evicted;
	cJSON_AddNumberToObject(f, "active", active);
	cJSON_AddNumberToObject(f, "max_conns", c->max_conns);
	cJSON_AddNumberToObject(f, "max_per_remote", c->per_remote);
	cJSON *arr = cJSON_AddArrayToObject(f, "addrs");
	for (size_t i = 0; i < c->naddrs; i++) {
		const struct addr_stat *a = &c->addrs[i];
		char ip[INET_ADDRSTRLEN];
		addr_text(a->addr, s->is_unix, ip);
		int n = 0;
		for (size_t k = 0; k < c->nslots; k++)
			n += c->slots[k].used && !c->slots[k].evicted &&
			    c->slots[k].addr == a->addr;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "addr", ip);
		cJSON_AddNumberToObject(o, "refused", a->refused);
		cJSON_AddNumberToObject(o, "evicted", a->evicted);
		cJSON_AddNumberToObject(o, "timed_out", a->timed_out);
		cJSON_AddNumberToObject(o, "write_timeouts", a->write_timeouts);
		cJSON_AddNumberToObject(o, "active", n);
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddNumberToObject(f, "addrs_other", c->addrs_other);
	c->refused_cap = c->refused_full = c->evicted = c->timed_out = 0;
	c->write_timeouts = 0;
	c->naddrs = 0;
	c->addrs_other = 0;
	c->first_ns = 0;
	c->last_emit_ns = now;
	uint64_t cause = c->last_cause_ns;
	c->last_cause_ns = 0;
	pthread_mutex_unlock(&c->mu);
	uint64_t saved = sensor_request_time(cause != 0 ? cause : now);
	sensor_emit("overload", f);
	(void)sensor_request_time(saved);
}

/* How long the accept loop may sleep before overload_flush is due: the
 * rest of the current HTTP_OVERLOAD_MS when counts are pending, else a
 * full period (counts added by connection threads meanwhile wait at most
 * that long). */
static int
overload_wait_ms(struct http_conns *c)
{
	int ms = HTTP_OVERLOAD_MS;
	pthread_mutex_lock(&c->mu);
	if (pending_locked(c) && c->last_emit_ns != 0) {
		uint64_t due = c->last_emit_ns +
		    (uint64_t)HTTP_OVERLOAD_MS * 1000000u, now = util_mono_ns();
		ms = now >= due ? 0 : (int)((due - now) / 1000000u) + 1;
	}
	pthread_mutex_unlock(&c->mu);
	return ms;
}

/* ---- writing --------------------------------------------------------- */

/* Write all of buf to the non-blocking fd before deadline_ns.  1 written,
 * 0 the peer is gone (or another error), -1 the deadline passed. */
static int
write_until(int fd, const char *buf, size_t len, uint64_t deadline_ns)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return 0;
		uint64_t now = util_mono_ns();
		if (now >= deadline_ns)
			return -1;
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int pr = poll(&pfd, 1, (int)((deadline_ns - now) / 1000000u) + 1);
		if (pr < 0 && errno != EINTR)
			return 0;
	}
	return 1;
}

/* Format the head of resp (status 0 means 500) into head[HEAD_OUT]; its
 * length.  retry_after adds `Retry-After: 1`; resp->headers (cut at 255
 * bytes) goes in as it is. */
#define HEAD_OUT 512
static size_t
format_head(char head[HEAD_OUT], const struct http_response *resp,
    bool retry_after)
{
	int status = resp->status ? resp->status : 500;
	int hn = snprintf(head, HEAD_OUT,
	    "HTTP/1.1 %d %s\r\nContent-Type: %.80s\r\nContent-Length: %zu\r\n"
	    "%s%.255sConnection: close\r\n\r\n", status, http_reason(status),
	    resp->ctype ? resp->ctype : "application/json",
	    resp->body ? resp->len : 0, retry_after ? "Retry-After: 1\r\n" : "",
	    resp->headers);
	return hn < 0 ? 0 : (size_t)hn < HEAD_OUT ? (size_t)hn : HEAD_OUT - 1;
}

/* Send resp before deadline_ns; as write_until. */
static int
send_response(int fd, const struct http_response *resp,
    uint64_t deadline_ns)
{
	char head[HEAD_OUT];
	size_t hn = format_head(head, resp, false);
	int rc = write_until(fd, head, hn, deadline_ns);
	if (rc == 1 && resp->body)
		rc = write_until(fd, resp->body, resp->len, deadline_ns);
	return rc;
}

/* The small JSON error answer for status into out[512]; its length. */
static size_t
format_error(char out[512], int status, bool retry_after)
{
	char body[96];
	snprintf(body, sizeof(body), "{\"error\":\"%s\"}", http_reason(status));
	struct http_response resp = { .status = status, .body = body,
	    .len = strlen(body) };
	char head[HEAD_OUT];
	size_t hn = format_head(head, &resp, retry_after);
	int n = snprintf(out, 512, "%.*s%s", (int)hn, head, body);
	return n < 0 ? 0 : (size_t)n < 512 ? (size_t)n : 511;
}

/* Answer status in one non-blocking send (it fits any fresh socket's
 * buffer; a peer that cannot take it gets nothing).  Never blocks. */
static void
send_error_now(int fd, int status, bool retry_after)
{
	char out[512];
	size_t n = format_error(out, status, retry_after);
	ssize_t w = send(fd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)w;
}

/* ---- connection threads ------------------------------------------- */

struct conn {
	struct http_server *srv;
	size_t slot;
	int fd;
	uint64_t start_ns;
	char remote[64];
};

/* Read one request from the non-blocking fd before deadline_ns.  Returns
 * HTTP_PARSE_OK (req filled), 0 when the peer closed (or was shut down)
 * before sending anything, or a negated status (-408 deadline, -400,
 * -413, ...). */
static int
read_request(int fd, uint64_t deadline_ns, struct http_request *req)
{
	size_t cap = 8192, len = 0;
	char *buf = xmalloc(cap);
	int rc = HTTP_PARSE_MORE;
	for (;;) {
		uint64_t now = util_mono_ns();
		if (now >= deadline_ns) {
			rc = -408;
			break;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = poll(&pfd, 1, (int)((deadline_ns - now) / 1000000u) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			rc = 0;
			break;
		}
		if (pr == 0)
			continue;          /* the deadline check above ends it */
		if (len == cap) {
			if (cap >= HTTP_HEAD_MAX + HTTP_BODY_MAX) {
				rc = -413;
				break;
			}
			cap *= 2;
			if (cap > HTTP_HEAD_MAX + HTTP_BODY_MAX)
				cap = HTTP_HEAD_MAX + HTTP_BODY_MAX;
			buf = xrealloc(buf, cap);
		}
		ssize_t n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN ||
		    errno == EWOULDBLOCK))
			continue;
		if (n <= 0) {
			rc = n == 0 && len > 0 ? -400 : 0;
			break;
		}
		len += (size_t)n;
		rc = http_parse(buf, len, req);
		if (rc == HTTP_PARSE_OK)
			req->t_req_ns = util_mono_ns();
		if (rc != HTTP_PARSE_MORE)
			break;
	}
	free(buf);
	return rc;
}

/* Serve one admitted connection: read the request within read_ms of the
 * accept, call the handler, answer within write_ms (else reset the
 * connection), close.  Frees c and its slot; the last thread of a
 * stopping server signals c->idle. */
static void *
conn_thread(void *arg)
{
	struct conn *c = arg;
	struct http_server *s = c->srv;
	struct http_conns *t = s->conns;
	struct http_request req;
	int rc = read_request(c->fd, c->start_ns +
	    (uint64_t)t->read_ms * 1000000u, &req);

	pthread_mutex_lock(&t->mu);
	struct http_slot *sl = &t->slots[c->slot];
	bool evicted = sl->evicted;
	if (!evicted && rc == HTTP_PARSE_OK)
		sl->phase = PH_HANDLE;
	if (!evicted && rc == -408) {
		mark_incident_locked(t, c->start_ns);
		t->timed_out++;
		struct addr_stat *a = addr_stat_locked(t, sl->addr);
		if (a)
			a->timed_out++;
	}
	pthread_mutex_unlock(&t->mu);

	int wrc = 1;
	uint64_t arrived = rc == HTTP_PARSE_OK ? req.t_req_ns : c->start_ns;
	if (evicted) {
		if (rc == HTTP_PARSE_OK)
			http_request_free(&req);
	} else if (rc == HTTP_PARSE_OK) {
		snprintf(req.remote, sizeof(req.remote), "%s", c->remote);
		req.on_unix = s->is_unix;
		struct http_response resp = { 0 };
		sensor_request_time(req.t_req_ns);
		s->handler(s->ctx, &req, &resp);
		sensor_request_time(0);
		wrc = send_response(c->fd, &resp, util_mono_ns() +
		    (uint64_t)t->write_ms * 1000000u);
		free(resp.body);
		http_request_free(&req);
	} else if (rc < 0) {
		char out[512];
		size_t n = format_error(out, -rc, false);
		wrc = write_until(c->fd, out, n, util_mono_ns() +
		    (uint64_t)t->write_ms * 1000000u);
	}
	if (wrc < 0) {
		/* the peer does not take the answer: reset, so neither this
		 * thread nor the kernel's buffers are held for it */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		pthread_mutex_lock(&t->mu);
		mark_incident_locked(t, arrived);
		t->write_timeouts++;
		struct addr_stat *a = addr_stat_locked(t, t->slots[c->slot].addr);
		if (a)
			a->write_timeouts++;
		t->slots[c->slot].used = false;
		pthread_mutex_unlock(&t->mu);
	} else {
		/* the place is free before the peer sees the end of the
		 * answer: a client that reconnects at once is not refused for
		 * the connection it just finished */
		pthread_mutex_lock(&t->mu);
		t->slots[c->slot].used = false;
		pthread_mutex_unlock(&t->mu);
		shutdown(c->fd, SHUT_WR);
	}
	if (rc == -408 || wrc < 0)
		overload_flush(s);
	close(c->fd);
	__atomic_sub_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
	free(c);
	pthread_mutex_lock(&t->mu);
	if (--t->threads == 0)
		pthread_cond_broadcast(&t->idle);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* ---- accept loop ---------------------------------------------------- */

/* The oldest connection still reading its request for >= evict_ms, of
 * address addr (any when any_addr), or -1.  Called with c->mu held. */
static long
oldest_reader_locked(struct http_conns *c, uint32_t addr,
    bool any_addr, uint64_t now)
{
	if (c->evict_ms < 0)
		return -1;
	uint64_t min_age = (uint64_t)c->evict_ms * 1000000u;
	long best = -1;
	for (size_t i = 0; i < c->nslots; i++) {
		const struct http_slot *sl = &c->slots[i];
		if (!sl->used || sl->evicted || sl->phase != PH_READ ||
		    (!any_addr && sl->addr != addr) || now - sl->start_ns < min_age)
			continue;
		if (best < 0 || sl->start_ns < c->slots[best].start_ns)
			best = (long)i;
	}
	return best;
}

/* Close the connection being drained at index i of the linger list. */
static void
linger_drop(struct http_conns *c, size_t i)
{
	close(c->linger[i].fd);
	c->linger[i] = c->linger[--c->nlinger];
}

/* Refuse fd with status (429/503) without a thread: drain what it sent,
 * answer, half-close, and keep draining it for HTTP_LINGER_MS (so the
 * close does not reset the answer away).  Counts the refusal. */
static void
refuse(struct http_server *s, int fd, uint32_t addr, int status)
{
	struct http_conns *c = s->conns;
	char tmp[4096];
	for (int i = 0; i < 4 && recv(fd, tmp, sizeof(tmp), MSG_DONTWAIT) > 0; i++)
		;
	send_error_now(fd, status, true);
	shutdown(fd, SHUT_WR);
	if (c->nlinger == HTTP_LINGER_MAX) {
		size_t oldest = 0;
		for (size_t i = 1; i < c->nlinger; i++)
			if (c->linger[i].until_ns < c->linger[oldest].until_ns)
				oldest = i;
		linger_drop(c, oldest);
	}
	c->linger[c->nlinger++] = (struct refused){ .fd = fd,
	    .until_ns = util_mono_ns() + (uint64_t)HTTP_LINGER_MS * 1000000u };

	pthread_mutex_lock(&c->mu);
	mark_incident_locked(c, util_mono_ns());
	if (status == 429)
		c->refused_cap++;
	else
		c->refused_full++;
	struct addr_stat *a = addr_stat_locked(c, addr);
	if (a)
		a->refused++;
	pthread_mutex_unlock(&c->mu);
}

/* Evict slot v (called with c->mu held): answer 408, shut the socket down
 * (its thread wakes, sees `evicted` and ends), count it. */
static void
evict_locked(struct http_conns *c, size_t v)
{
	struct http_slot *sl = &c->slots[v];
	sl->evicted = true;
	send_error_now(sl->fd, 408, false);
	shutdown(sl->fd, SHUT_RDWR);
	mark_incident_locked(c, util_mono_ns());   /* a newcomer's arrival */
	c->evicted++;
	struct addr_stat *a = addr_stat_locked(c, sl->addr);
	if (a)
		a->evicted++;
}

/* Admit or refuse one accepted connection (see struct http_server). */
static void
admit(struct http_server *s, int fd, const struct sockaddr_storage *ss)
{
	struct http_conns *c = s->conns;
	uint32_t addr = 0;
	char remote[64] = "unix";
	if (!s->is_unix && ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
		char ip[INET_ADDRSTRLEN] = "?";
		addr = sin->sin_addr.s_addr;
		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		snprintf(remote, sizeof(remote), "%s:%u", ip,
		    (unsigned)ntohs(sin->sin_port));
	} else if (!s->is_unix) {
		snprintf(remote, sizeof(remote), "?");
	}
	uint64_t now = util_mono_ns();
	int status = 0;
	long slot = -1;

	pthread_mutex_lock(&c->mu);
	int n_addr = 0, n_all = 0;
	for (size_t i = 0; i < c->nslots; i++) {
		const struct http_slot *sl = &c->slots[i];
		if (!sl->used || sl->evicted)
			continue;
		n_all++;
		n_addr += sl->addr == addr;
	}
	if (n_addr >= c->per_remote || n_all >= c->max_conns) {
		bool own = n_addr >= c->per_remote;
		long v = oldest_reader_locked(c, addr, !own, now);
		if (v >= 0)
			evict_locked(c, (size_t)v);
		else
			status = own ? 429 : 503;
	}
	if (status == 0) {
		for (size_t i = 0; i < c->nslots && slot < 0; i++)
			if (!c->slots[i].used)
				slot = (long)i;
		if (slot < 0)
			status = 503;    /* evicted ones still finishing */
	}
	if (status == 0) {
		c->slots[slot] = (struct http_slot){ .used = true,
		    .phase = PH_READ, .fd = fd, .addr = addr, .start_ns = now };
		c->threads++;
	}
	pthread_mutex_unlock(&c->mu);

	if (status != 0) {
		refuse(s, fd, addr, status);
		return;
	}
	struct conn *cn = xcalloc(1, sizeof(*cn));
	cn->srv = s;
	cn->slot = (size_t)slot;
	cn->fd = fd;
	cn->start_ns = now;
	snprintf(cn->remote, sizeof(cn->remote), "%s", remote);
	__atomic_add_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
	if (http_thread_start(conn_thread, cn) != 0) {
		pthread_mutex_lock(&c->mu);
		c->slots[slot].used = false;
		c->threads--;
		pthread_mutex_unlock(&c->mu);
		__atomic_sub_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
		free(cn);
		refuse(s, fd, addr, 503);
	}
}

/* Drain the refused connections that are readable; close those that are
 * done or past their time.  pfd[i] belongs to linger[i] (n of them, as
 * the list was when polled). */
static void
linger_service(struct http_conns *c, const struct pollfd *pfd,
    size_t n)
{
	uint64_t now = util_mono_ns();
	for (size_t i = n; i-- > 0;) {
		bool done = now >= c->linger[i].until_ns;
		if (!done && pfd[i].revents) {
			char tmp[4096];
			ssize_t r = 1;
			for (int k = 0; k < 4 && r > 0; k++)
				r = recv(c->linger[i].fd, tmp, sizeof(tmp), MSG_DONTWAIT);
			done = r == 0 || (r < 0 && errno != EAGAIN &&
			    errno != EWOULDBLOCK && errno != EINTR);
		}
		if (done)
			linger_drop(c, i);
	}
}

/* Set up s->conns from s's fields (defaults for 0). */
static void
conns_init(struct http_server *s)
{
	struct http_conns *c = xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->idle, NULL);
	c->max_conns = s->max_conns;
	c->per_remote = s->max_per_remote > 0 && !s->is_unix &&
	    s->max_per_remote < s->max_conns ? s->max_per_remote : s->max_conns;
	c->read_ms = s->read_ms > 0 ? s->read_ms : HTTP_READ_TIMEOUT_MS;
	c->write_ms = s->write_ms > 0 ? s->write_ms : HTTP_WRITE_TIMEOUT_MS;
	c->evict_ms = s->evict_ms == 0 ? HTTP_EVICT_MS : s->evict_ms;
	c->name = s->name ? s->name : s->is_unix ? "unix" : "tcp";
	c->nslots = (size_t)s->max_conns + (size_t)s->max_conns / 4 + 1;
	c->slots = xcalloc(c->nslots, sizeof(*c->slots));
	s->conns = c;
}

/* Stop: wake every connection, wait for their threads, free s->conns. */
static void
conns_stop(struct http_server *s)
{
	struct http_conns *c = s->conns;
	while (c->nlinger > 0)
		linger_drop(c, c->nlinger - 1);
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].used)
			shutdown(c->slots[i].fd, SHUT_RDWR);
	while (c->threads > 0)
		pthread_cond_wait(&c->idle, &c->mu);
	pthread_mutex_unlock(&c->mu);
	overload_flush(s);
	pthread_cond_destroy(&c->idle);
	pthread_mutex_destroy(&c->mu);
	free(c->slots);
	free(c);
	s->conns = NULL;
}

void
http_serve(struct http_server *s)
{
	if (s->max_conns < 1)
		s->max_conns = 1;
	int fl = fcntl(s->fd, F_GETFL);
	if (fl >= 0)
		fcntl(s->fd, F_SETFL, fl | O_NONBLOCK);
	conns_init(s);
	struct http_conns *c = s->conns;
	struct pollfd pfd[1 + HTTP_LINGER_MAX];
	for (;;) {
		size_t nl = c->nlinger;
		pfd[0] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
		for (size_t i = 0; i < nl; i++)
			pfd[1 + i] = (struct pollfd){ .fd = c->linger[i].fd,
			    .events = POLLIN };
		/* wake in time to flush the overload counts */
		int timeout = overload_wait_ms(c);
		if (nl > 0 && timeout > HTTP_LINGER_MS / 5)
			timeout = HTTP_LINGER_MS / 5;
		int pr = poll(pfd, (nfds_t)(1 + nl), timeout);
		if (pr < 0 && errno != EINTR) {
			fprintf(stderr, "http: poll: %s\n", strerror(errno));
			break;
		}
		if (nl > 0)
			linger_service(c, pfd + 1, nl);
		/* a listener that was shut down or failed (a unix one reports
		 * it only this way: accept just says EAGAIN) */
		bool fatal = pr > 0 &&
		    (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL));
		if (fatal)
			fprintf(stderr, "http: %s: listener closed\n", c->name);
		else if (pr > 0 && pfd[0].revents) {
			for (int k = 0; k < 64; k++) {
				struct sockaddr_storage ss;
				socklen_t sl = sizeof(ss);
				int fd = accept4(s->fd, (struct sockaddr *)&ss, &sl,
				    SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (fd >= 0) {
					admit(s, fd, &ss);
					continue;
				}
				if (errno == EAGAIN || errno == EWOULDBLOCK ||
				    errno == EINTR || errno == ECONNABORTED ||
				    errno == EPROTO)
					break;
				if (errno == EMFILE || errno == ENFILE ||
				    errno == ENOBUFS || errno == ENOMEM) {
					usleep(10000);
					break;
				}
				fprintf(stderr, "http: accept: %s\n", strerror(errno));
				fatal = true;
				break;
			}
		}
		overload_flush(s);
		if (fatal)
			break;
	}
	conns_stop(s);
}

int
http_thread_start(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	int rc = pthread_create(&th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

void
http_response_error(struct http_response *resp, int status,
    const char *type, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddStringToObject(e, "type", type);
	http_response_json(resp, status, o);
}

/* ---- client side (libcurl) ----------------------------------------- */

size_t
http_answer_write(char *p, size_t size, size_t n, void *ud)
{
	struct http_answer *a = ud;
	size_t k = size * n;
	if (a->len + k > a->max) {
		a->over = true;
		return 0;
	}
	a->buf = xrealloc(a->buf, a->len + k + 1);
	memcpy(a->buf + a->len, p, k);
	a->len += k;
	a->buf[a->len] = '\0';
	return k;
}

long
http_post_bearer(const char *url, const char *key, const char *body,
    size_t len, long timeout_s, struct http_answer *out, char *err,
    size_t errlen)
{
	CURL *c = curl_easy_init();
	if (!c)
		return 0;
	char *auth = xasprintf("Authorization: Bearer %s", key);
	struct curl_slist *h = curl_slist_append(NULL,
	    "Content-Type: application/json");
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_answer_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	out->curl_rc = (int)rc;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(err, errlen, "%s", curl_easy_strerror(rc));
	curl_slist_free_all(h);
	memset(auth, 0, strlen(auth));
	free(auth);
	curl_easy_cleanup(c);
	return status;
}
