/*
 * http.c - a tiny, bounded HTTP/1.1 server for the lab components.
 *
 * One request per connection, `Connection: close` on every answer, body by
 * Content-Length only, everything bounded (see leakbox.h).  A detached
 * thread per connection so a slow request never blocks another listener.
 */
#include "leakbox.h"

#include <arpa/inet.h>
#include <errno.h>
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

const char *http_reason(int status)
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

static bool is_tchar(unsigned char c)
{
	if (c >= '0' && c <= '9') return true;
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
	return strchr("!#$%&'*+-.^_`|~", c) != NULL && c != 0;
}

/* Find "\r\n\r\n" in buf[0..len); returns the head length including it,
 * or 0 when absent. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' &&
		    buf[i - 1] == '\r' && buf[i] == '\n')
			return i + 1;
	return 0;
}

void http_request_free(struct http_request *r)
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
static int parse_request_line(char *line, struct http_request *r)
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
static int parse_header_line(char *line, struct http_request *r)
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
static long parse_content_length(const char *v)
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

int http_parse(const char *buf, size_t len, struct http_request *r)
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

const char *http_header_get(const struct http_request *r, const char *name)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

int http_query_get(const struct http_request *r, const char *name,
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
				if (c == '%' && i + 2 < seg + 1 && hexval(p[i + 1]) >= 0 &&
				    hexval(p[i + 2]) >= 0) {
					c = hexval(p[i + 1]) * 16 + hexval(p[i + 2]);
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

void http_response_json(struct http_response *resp, int status, cJSON *j)
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

void http_response_text(struct http_response *resp, int status,
    const char *ctype, const char *text)
{
	free(resp->body);
	resp->status = status;
	resp->ctype = ctype;
	resp->body = xstrdup(text);
	resp->len = strlen(text);
}

/* ---- server -------------------------------------------------------- */

int http_listen_tcp(const char *hostport, struct errbuf *e)
{
	char host[64];
	const char *colon = strrchr(hostport, ':');
	if (!colon || (size_t)(colon - hostport) >= sizeof(host))
		return errbuf_set(e, ERRBUF_INPUT, "listen address '%s': want HOST:PORT",
		    hostport);
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
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
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		int err = errno;
		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "listen on %s: %s", hostport,
		    strerror(err));
	}
	return fd;
}

int http_listen_unix(const char *path, mode_t mode, struct errbuf *e)
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

/* Write all of buf; false on error or timeout (SO_SNDTIMEO). */
static bool write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

static void send_response(int fd, const struct http_response *resp)
{
	int status = resp->status ? resp->status : 500;
	char head[256];
	int hn = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", status, http_reason(status),
	    resp->ctype ? resp->ctype : "application/json",
	    resp->body ? resp->len : 0);
	if (write_all(fd, head, (size_t)hn) && resp->body)
		write_all(fd, resp->body, resp->len);
}

static void send_error(int fd, int status)
{
	struct http_response resp = { 0 };
	char *b = xasprintf("{\"error\":\"%s\"}", http_reason(status));
	resp.status = status;
	resp.body = b;
	resp.len = strlen(b);
	send_response(fd, &resp);
	free(b);
}

struct conn {
	struct http_server *srv;
	int fd;
	char remote[64];
};

/* Read one request with an overall HTTP_READ_TIMEOUT_MS deadline, call the
 * handler, answer, close. */
static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct http_server *s = c->srv;
	struct timeval tv = { .tv_sec = HTTP_READ_TIMEOUT_MS / 1000 };
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	size_t cap = 8192, len = 0;
	char *buf = xmalloc(cap);
	uint64_t deadline = util_mono_ns() + (uint64_t)HTTP_READ_TIMEOUT_MS * 1000000u;
	struct http_request req;
	int rc = HTTP_PARSE_MORE;
	for (;;) {
		uint64_t now = util_mono_ns();
		if (now >= deadline) {
			rc = -408;
			break;
		}
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			rc = -408;
			break;
		}
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
		ssize_t n = recv(c->fd, buf + len, cap - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n == 0 && len > 0 ? -400 : 0;
			break;
		}
		len += (size_t)n;
		rc = http_parse(buf, len, &req);
		if (rc != HTTP_PARSE_MORE)
			break;
	}
	free(buf);
	if (rc == HTTP_PARSE_OK) {
		snprintf(req.remote, sizeof(req.remote), "%s", c->remote);
		req.on_unix = s->is_unix;
		struct http_response resp = { 0 };
		s->handler(s->ctx, &req, &resp);
		send_response(c->fd, &resp);
		free(resp.body);
		http_request_free(&req);
	} else if (rc < 0) {
		send_error(c->fd, -rc);
	}
	shutdown(c->fd, SHUT_WR);
	close(c->fd);
	__atomic_sub_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
	free(c);
	return NULL;
}

void http_serve(struct http_server *s)
{
	if (s->max_conns < 1)
		s->max_conns = 1;
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(s->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				if (errno != EINTR && errno != ECONNABORTED)
					usleep(10000);
				continue;
			}
			fprintf(stderr, "http: accept: %s\n", strerror(errno));
			return;
		}
		if (__atomic_add_fetch(&s->active, 1, __ATOMIC_SEQ_CST) > s->max_conns) {
			struct timeval tv = { .tv_sec = 1 };
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
			send_error(fd, 503);
			close(fd);
			__atomic_sub_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		struct conn *c = xcalloc(1, sizeof(*c));
		c->srv = s;
		c->fd = fd;
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
			char ip[INET_ADDRSTRLEN] = "?";
			inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
			snprintf(c->remote, sizeof(c->remote), "%s:%u", ip,
			    (unsigned)ntohs(sin->sin_port));
		} else {
			snprintf(c->remote, sizeof(c->remote), "unix");
		}
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (pthread_create(&t, &attr, conn_thread, c) != 0) {
			send_error(fd, 503);
			close(fd);
			free(c);
			__atomic_sub_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
		}
		pthread_attr_destroy(&attr);
	}
}
