/*
 * gwctl.c - the client of a lab gateway's control socket.
 *
 * The gateway (leakbox/gateway.c) answers HTTP/1.1 on a unix socket that
 * the agent never sees (lab->ctl_path): one request per connection,
 * "Connection: close" and a Content-Length on every answer.  Its callers:
 * the gateway-deny lever and its probe (lever.c, on the kill path: the
 * requests are built beforehand and only the status line is read), the
 * lab's wait for the gateway (lab.c) and the self-modify row's look at
 * the change queue (probe.c).  Every read is bounded in bytes and time.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <sodium.h>

#define GWCTL_HEAD_MAX 8192   /* bytes of an answer's status line and headers */

int
gwctl_http_status(const char *buf, size_t len)
{
	size_t i, eol = SIZE_MAX;
	int st = 0;

	for (i = 0; i + 1 < len && i < GWCTL_STATUS_MAX; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n') {
			eol = i;
			break;
		}
	if (eol == SIZE_MAX)
		return len >= GWCTL_STATUS_MAX ? -1 : 0;
	/* "HTTP/1.x SSS" then end of line or a space and a reason. */
	if (eol < 12 || memcmp(buf, "HTTP/1.", 7) != 0 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ')
		return -1;
	for (i = 9; i < 12; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
		st = st * 10 + (buf[i] - '0');
	}
	if (eol > 12 && buf[12] != ' ')
		return -1;
	if (st < 100 || st > 599)
		return -1;
	return st;
}

char *
gwctl_request(const char *method, const char *target, const char *auth,
    const char *body, size_t *len)
{
	char *r, *a = auth != NULL ? xasprintf("Authorization: Bearer %s\r\n",
	    auth) : xstrdup("");

	if (body != NULL)
		r = xasprintf("%s %s HTTP/1.1\r\nHost: gateway\r\n%s"
		    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n%s", method, target, a,
		    strlen(body), body);
	else
		r = xasprintf("%s %s HTTP/1.1\r\nHost: gateway\r\n%s"
		    "Connection: close\r\n\r\n", method, target, a);
	if (auth != NULL)
		memset(a, 0, strlen(a));   /* holds the key */
	free(a);
	*len = strlen(r);
	return r;
}

int
gwctl_connect(const char *path, struct errbuf *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = GWCTL_CONNECT_MS / 1000,
	    .tv_usec = (GWCTL_CONNECT_MS % 1000) * 1000 };
	int fd;

	if (strlen(path) >= sizeof sa.sun_path)
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control socket "
		    "path too long: %s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control socket: "
		    "socket: %s", strerror(errno));
	/* A gateway alive but not accepting (its queue full) would block
	 * connect for ever: Linux bounds a unix connect, and every send after
	 * it, by SO_SNDTIMEO. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == -1) {
		int err = errno;

		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control socket: "
		    "SO_SNDTIMEO: %s", strerror(err));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1) {
		int err = errno;

		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control socket "
		    "%s: connect: %s", path, strerror(err));
	}
	return fd;
}

/* Wait until fd has something to read or the deadline passes.  1 when
 * readable, 0 at the deadline (-1 never: EINTR and the like retry). */
static int
gwctl_wait(int fd, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = util_mono_ns();
		int pr;

		if (now >= deadline)
			return 0;
		pr = poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1);
		if (pr > 0)
			return 1;
	}
}

/* Read the status line only (kill path: nothing else is waited for).
 * The status, or -1 + e. */
static int
gwctl_read_status(int fd, const char *path, const char *what,
    uint64_t deadline, int timeout_ms, struct errbuf *e)
{
	char buf[GWCTL_STATUS_MAX];
	size_t have = 0;
	int st;

	for (;;) {
		ssize_t n;

		if (gwctl_wait(fd, deadline) == 0)
			return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: "
			    "no answer within %d ms", what, path, timeout_ms);
		n = recv(fd, buf + have, sizeof buf - have, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: "
			    "connection closed before a status line", what,
			    path);
		have += (size_t)n;
		st = gwctl_http_status(buf, have);
		if (st == -1)
			return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: "
			    "malformed status line", what, path);
		if (st > 0)
			return st;
	}
}

/* The value of header name in head (len bytes, lines ending CRLF), or -1
 * when absent; -2 when it is not a number of at most 15 digits. */
static long long
gwctl_header_num(const char *head, size_t len, const char *name)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		const char *line = head + i;
		const char *end = memmem(line, len - i, "\r\n", 2);
		size_t ll = end != NULL ? (size_t)(end - line) : len - i;

		if (ll > nl && line[nl] == ':' &&
		    strncasecmp(line, name, nl) == 0) {
			size_t k = nl + 1, digits = 0;
			long long v = 0;

			while (k < ll && (line[k] == ' ' || line[k] == '\t'))
				k++;
			for (; k < ll && line[k] >= '0' && line[k] <= '9'; k++) {
				if (++digits > 15)
					return -2;
				v = v * 10 + (line[k] - '0');
			}
			while (k < ll && (line[k] == ' ' || line[k] == '\t'))
				k++;
			return digits > 0 && k == ll ? v : -2;
		}
		i += ll + 2;
	}
	return -1;
}

/*
 * Read the whole answer (up to the gateway's close), at most
 * GWCTL_HEAD_MAX + body_max bytes: its status, and its body into *body
 * (NUL-terminated, caller frees).  The status, or -1 + e.
 */
static int
gwctl_read_answer(int fd, const char *path, const char *what,
    uint64_t deadline, int timeout_ms, char **body, size_t body_max,
    struct errbuf *e)
{
	size_t max = GWCTL_HEAD_MAX + body_max, have = 0, hlen;
	char *buf = xmalloc(max + 1);
	const char *end;
	long long cl;
	int st;

	for (;;) {
		ssize_t n;

		if (gwctl_wait(fd, deadline) == 0) {
			free(buf);
			return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: "
			    "no answer within %d ms", what, path, timeout_ms);
		}
		n = recv(fd, buf + have, max + 1 - have, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have > max) {
			free(buf);
			return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: "
			    "answer larger than %zu bytes", what, path, max);
		}
	}
	st = gwctl_http_status(buf, have);
	end = memmem(buf, have < GWCTL_HEAD_MAX ? have : GWCTL_HEAD_MAX,
	    "\r\n\r\n", 4);
	if (st <= 0 || end == NULL) {
		free(buf);
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: %s",
		    what, path, st == -1 ? "malformed status line" : st == 0 ?
		    "connection closed before a status line" : "connection "
		    "closed before the end of the headers");
	}
	hlen = (size_t)(end - buf) + 4;
	cl = gwctl_header_num(buf, hlen - 2, "Content-Length");
	if (cl == -2 || (cl >= 0 && (unsigned long long)cl > have - hlen)) {
		free(buf);
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: %s",
		    what, path, cl == -2 ? "malformed Content-Length" :
		    "connection closed before the end of the body");
	}
	if (cl < 0)
		cl = (long long)(have - hlen);
	if ((unsigned long long)cl > body_max) {
		free(buf);
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: body "
		    "larger than %zu bytes", what, path, body_max);
	}
	memmove(buf, buf + hlen, (size_t)cl);
	buf[cl] = '\0';
	*body = buf;
	return st;
}

int
gwctl_exchange(int fd, const char *path, const char *req, size_t len,
    const char *what, int timeout_ms, char **body, size_t body_max,
    struct errbuf *e)
{
	uint64_t deadline = util_mono_ns() +
	    (uint64_t)timeout_ms * 1000000ull;
	size_t off = 0;
	int st;

	if (body != NULL)
		*body = NULL;
	while (off < len) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: "
			    "send: %s", what, path, strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	st = body != NULL ? gwctl_read_answer(fd, path, what, deadline,
	    timeout_ms, body, body_max, e) : gwctl_read_status(fd, path, what,
	    deadline, timeout_ms, e);
	close(fd);
	return st;
}

int
gwctl_call(const char *path, const char *req, size_t len, const char *what,
    int timeout_ms, char **body, size_t body_max, struct errbuf *e)
{
	int fd = gwctl_connect(path, e);

	if (fd == -1) {
		if (body != NULL)
			*body = NULL;
		return -1;
	}
	return gwctl_exchange(fd, path, req, len, what, timeout_ms, body,
	    body_max, e);
}

/* Is s at most max printable ASCII bytes without a blank, not empty? */
static bool
gwctl_word(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

int
gwctl_exec_argv(const char *method, const char *target, const char *bearer,
    const char *req_body, const char *argv[GWCTL_EXEC_ARGV], struct errbuf *e)
{
	size_t i, n = 0;

	for (i = 0; method[i] != '\0'; i++)
		if (method[i] < 'A' || method[i] > 'Z')
			break;
	if (i == 0 || i > 16 || method[i] != '\0')
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control: method "
		    "'%.20s' is not 1 to 16 capital letters", method);
	if (bearer != NULL && !gwctl_word(bearer, GWCTL_BEARER_MAX))
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control %s %s: "
		    "the bearer is not 1 to %d printable bytes without blanks",
		    method, target, GWCTL_BEARER_MAX);
	/* the target and the body the client checks itself (exit 2) */
	argv[n++] = "/bin/ares-lab";
	argv[n++] = "gwctl";
	if (bearer != NULL) {
		/* the option first, its value the next word: the client
		 * takes no option anywhere else */
		argv[n++] = "--bearer";
		argv[n++] = bearer;
	}
	argv[n++] = method;
	argv[n++] = target;
	if (req_body != NULL)
		argv[n++] = req_body;
	argv[n] = NULL;
	return 0;
}

int
gwctl_exec(struct docker *d, const char *gateway, const char *user,
    const char *method, const char *target, const char *req_body,
    char **body, struct errbuf *e)
{
	return gwctl_exec_auth(d, gateway, user, method, target, NULL,
	    req_body, body, e);
}

int
gwctl_exec_auth(struct docker *d, const char *gateway, const char *user,
    const char *method, const char *target, const char *bearer,
    const char *req_body, char **body, struct errbuf *e)
{
	const char *argv[GWCTL_EXEC_ARGV];
	struct docker_exec_result r;
	const char *sep;
	int st;

	if (body != NULL)
		*body = NULL;
	if (gwctl_exec_argv(method, target, bearer, req_body, argv, e) == -1)
		return -1;
	if (docker_exec(d, gateway, argv, user, GWCTL_HEAD_MAX + 65536, &r,
	    e) < 0)
		return errbuf_prefix(e, "gateway control %s %s via exec",
		    method, target);
	if (r.exit_code != 0) {
		char shown[200];
		util_sanitize(shown, sizeof shown, r.err, r.err_len, false);
		errbuf_set(e, ERRBUF_INTERNAL, "gateway control %s %s via exec: "
		    "exit %d: %s", method, target, r.exit_code, shown);
		docker_exec_result_free(&r);
		return -1;
	}
	if (r.truncated) {
		/* a cut answer: never a status with a shortened body */
		errbuf_set(e, ERRBUF_INTERNAL, "gateway control %s %s via exec: "
		    "answer truncated at %u bytes", method, target,
		    GWCTL_HEAD_MAX + 65536);
		docker_exec_result_free(&r);
		return -1;
	}
	st = gwctl_http_status(r.out, r.out_len);
	if (st <= 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "gateway control %s %s via exec: "
		    "no HTTP status line in the answer", method, target);
		docker_exec_result_free(&r);
		return -1;
	}
	sep = r.out_len >= 4 ? memmem(r.out, r.out_len, "\r\n\r\n", 4) : NULL;
	if (body != NULL)
		*body = sep != NULL ? xstrndup(sep + 4, r.out_len -
		    (size_t)(sep + 4 - r.out)) : xstrdup("");
	docker_exec_result_free(&r);
	return st;
}

/* internal.h.  timeout_ms bounds the local socket's answer; on a remote
 * lab the client in the gateway gives up after 2 s and the exec is
 * bounded by the engine connection's own limits. */
int
lab_gateway_call(struct docker *d, const struct lab *lab, const char *method,
    const char *target, const char *bearer, const char *req_body,
    int timeout_ms, char **body, struct errbuf *e)
{
	size_t len;
	char *req;
	int st;

	if (body != NULL)
		*body = NULL;
	if (lab->remote) {
		if (lab->gateway.id == NULL)
			return errbuf_set(e, ERRBUF_INTERNAL, "gateway control "
			    "%s %s: the lab has no gateway", method, target);
		/* the exec is three engine calls of up to 60 s each: bound
		 * them all by timeout_ms (never past a bound already set) */
		uint64_t old = 0, until;

		if (timeout_ms > 0) {
			until = util_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
			old = docker_set_deadline(d, 0);
			(void)docker_set_deadline(d, old != 0 && old < until ?
			    old : until);
		}
		st = gwctl_exec_auth(d, lab->gateway.id, NULL, method,
		    target, bearer, req_body, body, e);
		if (timeout_ms > 0)
			(void)docker_set_deadline(d, old);
		return st;
	}
	if (lab->ctl_path == NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway control %s %s: "
		    "the lab has no control socket", method, target);
	req = gwctl_request(method, target, bearer, req_body, &len);
	st = gwctl_call(lab->ctl_path, req, len, target, timeout_ms, body,
	    GWCTL_BODY_MAX, e);
	if (bearer != NULL)
		sodium_memzero(req, len);   /* holds the key */
	free(req);
	return st;
}
