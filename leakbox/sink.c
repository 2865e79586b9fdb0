/*
 * sink.c - the simulated internet.  Accepts anything on TCP 80, 443, 8080
 * and UDP 53 and records what arrived: one "sink" event per connection or
 * datagram.  Anything that reaches the sink crossed the boundary: a leak.
 *
 * Everything is bounded: at most SINK_MAX_CONNS connections at once (more
 * are closed at once and recorded, aggregated per second), SINK_CONN_MAX
 * bytes read per connection, SINK_IDLE_MS of silence, SINK_CONN_MS per
 * connection; log lines by sensor_log, events by the chain budget.
 */
#include "leakbox.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define SINK_MAX_LISTEN 8

bool
sink_rec_add(struct sink_rec *r, const void *data, size_t n)
{
	r->bytes += n;
	size_t room = SINK_CONN_MAX - r->len;
	size_t take = n < room ? n : room;
	memcpy(r->buf + r->len, data, take);
	r->len += take;
	if (take < n)
		r->truncated = true;
	return r->len < SINK_CONN_MAX;
}

char *
sink_escape_head(const uint8_t *buf, size_t len)
{
	size_t n = len < SINK_HEAD_MAX ? len : SINK_HEAD_MAX;
	char *out = xmalloc(4 * n + 1);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = buf[i];
		if (c == '\\') { out[o++] = '\\'; out[o++] = '\\'; }
		else if (c == '\r') { out[o++] = '\\'; out[o++] = 'r'; }
		else if (c == '\n') { out[o++] = '\\'; out[o++] = 'n'; }
		else if (c == '\t') { out[o++] = '\\'; out[o++] = 't'; }
		else if (c >= 0x20 && c < 0x7f) out[o++] = (char)c;
		else o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
	}
	out[o] = '\0';
	return out;
}

int
sink_http_state(const uint8_t *buf, size_t len)
{
	/* METHOD SP: 1..16 upper-case letters */
	size_t i = 0;
	while (i < len && i < 17 && buf[i] >= 'A' && buf[i] <= 'Z')
		i++;
	if (i == len)
		return len <= 16 ? 0 : -1;
	if (i == 0 || i > 16 || buf[i] != ' ')
		return -1;
	/* end of head */
	size_t hl = 0;
	size_t scan = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	for (size_t k = 3; k < scan; k++)
		if (buf[k - 3] == '\r' && buf[k - 2] == '\n' && buf[k - 1] == '\r' &&
		    buf[k] == '\n') {
			hl = k + 1;
			break;
		}
	if (hl == 0)
		return len >= HTTP_HEAD_MAX ? 1 : 0;   /* a huge head: answer */
	/* Content-Length / chunked, looked up case-insensitively in the head */
	/* stops at a NUL byte: headers after one are ignored */
	char *head = xstrndup((const char *)buf, hl);
	unsigned long long clen = 0;
	bool chunked = false;
	for (char *line = strstr(head, "\r\n"); line; line = strstr(line, "\r\n")) {
		line += 2;
		if (strncasecmp(line, "Content-Length:", 15) == 0) {
			const char *v = line + 15;
			while (*v == ' ' || *v == '\t')
				v++;
			clen = 0;
			while (isdigit((unsigned char)*v) && clen <= SINK_CONN_MAX)
				clen = clen * 10 + (unsigned)(*v++ - '0');
		} else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 &&
		    strcasestr(line, "chunked")) {
			chunked = true;
		}
	}
	free(head);
	if (chunked)
		return len >= hl + 5 && memcmp(buf + len - 5, "0\r\n\r\n", 5) == 0 ?
		    1 : 0;
	if (clen > SINK_CONN_MAX)
		clen = SINK_CONN_MAX;
	return len - hl >= clen ? 1 : 0;
}

cJSON *
sink_event(const struct sink_rec *r, const char *proto, int port,
    const char *remote, bool http)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "proto", proto);
	cJSON_AddNumberToObject(f, "port", port);
	cJSON_AddStringToObject(f, "remote", remote);
	cJSON_AddNumberToObject(f, "bytes", (double)r->bytes);
	char *h = sink_escape_head(r->buf, r->len);
	cJSON_AddStringToObject(f, "head", h);
	free(h);
	cJSON_AddBoolToObject(f, "http", http);
	cJSON_AddBoolToObject(f, "truncated", r->truncated);
	return f;
}

/* ---- server -------------------------------------------------------- */

struct sink_conn {
	int fd;
	int port;
	char remote[64];
};

static int sink_active;    /* atomic */

/* "IP:port" of a peer into out. */
static void
remote_of(const struct sockaddr_in *sa, char out[64])
{
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	snprintf(out, 64, "%s:%u", ip, (unsigned)ntohs(sa->sin_port));
}

/* The log line of one record. */
static void
log_event(const char *proto, int port, const char *remote,
    const struct sink_rec *r)
{
	sensor_log("%s/%d from %s: %llu bytes%s", proto, port, remote,
	    (unsigned long long)r->bytes, r->truncated ? " (truncated)" : "");
}

/* Connections refused beyond SINK_MAX_CONNS (accept loop only): the first
 * of each SINK_REFUSED_MS gets its own "sink" event (dropped: true, so a
 * leak is on record at once); the others are counted and reported in one
 * "overload" event per HTTP_OVERLOAD_MS, per address. */
#define SINK_REFUSED_MS 1000
struct sink_refusals {
	uint64_t last_event_ns;       /* last dropped "sink" event */
	uint64_t last_emit_ns;        /* last "overload" event */
	uint64_t first_ns;            /* first refusal counted */
	unsigned refused;
	struct { uint32_t addr; unsigned refused; } addrs[HTTP_OVERLOAD_ADDRS];
	size_t naddrs;
	unsigned addrs_other;
};
static struct sink_refusals sink_ref;

/* Emit the "overload" event when refusals were counted and the last one
 * is HTTP_OVERLOAD_MS old.  Accept loop only. */
static void
refusals_flush(void)
{
	struct sink_refusals *r = &sink_ref;
	uint64_t now = util_mono_ns();
	if (r->refused == 0 || (r->last_emit_ns != 0 &&
	    now - r->last_emit_ns < (uint64_t)HTTP_OVERLOAD_MS * 1000000u))
		return;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "server", "sink");
	cJSON_AddNumberToObject(f, "window_ms",
	    (double)((now - r->first_ns) / 1000000u));
	cJSON_AddNumberToObject(f, "refused", r->refused);
	cJSON_AddNumberToObject(f, "refused_cap", 0);
	cJSON_AddNumberToObject(f, "refused_full", r->refused);
	cJSON_AddNumberToObject(f, "active",
	    __atomic_load_n(&sink_active, __ATOMIC_SEQ_CST));
	cJSON_AddNumberToObject(f, "max_conns", SINK_MAX_CONNS);
	cJSON *arr = cJSON_AddArrayToObject(f, "addrs");
	for (size_t i = 0; i < r->naddrs; i++) {
		char ip[INET_ADDRSTRLEN] = "?";
		struct in_addr ia = { .s_addr = r->addrs[i].addr };
		inet_ntop(AF_INET, &ia, ip, sizeof(ip));
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "addr", ip);
		cJSON_AddNumberToObject(o, "refused", r->addrs[i].refused);
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddNumberToObject(f, "addrs_other", r->addrs_other);
	sensor_emit("overload", f);
	r->refused = 0;
	r->naddrs = 0;
	r->addrs_other = 0;
	r->first_ns = 0;
	r->last_emit_ns = now;
}

/* A connection that gets no reader (over SINK_MAX_CONNS, or no thread):
 * closed unread, recorded as described above. */
static void
refuse_conn(int fd, int port, const struct sockaddr_in *from,
    const char *remote)
{
	close(fd);
	struct sink_refusals *r = &sink_ref;
	uint64_t now = util_mono_ns();
	if (r->last_event_ns == 0 ||
	    now - r->last_event_ns >= (uint64_t)SINK_REFUSED_MS * 1000000u) {
		r->last_event_ns = now;
		struct sink_rec *rec = xcalloc(1, sizeof(*rec));
		cJSON *f = sink_event(rec, "tcp", port, remote, false);
		cJSON_AddBoolToObject(f, "dropped", 1);
		sensor_emit("sink", f);
		free(rec);
		sensor_log("tcp/%d from %s: dropped (over %d connections)", port,
		    remote, SINK_MAX_CONNS);
		return;
	}
	if (r->refused++ == 0)
		r->first_ns = now;
	size_t i = 0;
	while (i < r->naddrs && r->addrs[i].addr != from->sin_addr.s_addr)
		i++;
	if (i == r->naddrs && r->naddrs < HTTP_OVERLOAD_ADDRS) {
		r->addrs[r->naddrs].addr = from->sin_addr.s_addr;
		r->addrs[r->naddrs++].refused = 0;
	}
	if (i < r->naddrs)
		r->addrs[i].refused++;
	else
		r->addrs_other++;
	refusals_flush();
}

/* Read one connection (bounded), answer HTTP, record, close. */
static void *
conn_thread(void *arg)
{
	struct sink_conn *c = arg;
	struct sink_rec *r = xcalloc(1, sizeof(*r));
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	uint64_t start = util_mono_ns();
	uint64_t deadline = start + (uint64_t)SINK_CONN_MS * 1000000u;
	bool http = false, answered = false;
	for (;;) {
		uint64_t now = util_mono_ns();
		if (now >= deadline)
			break;
		uint64_t left = (deadline - now) / 1000000u;
		int wait = left < SINK_IDLE_MS ? (int)left + 1 : SINK_IDLE_MS;
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, wait);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;                       /* idle */
		uint8_t tmp[8192];
		ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		bool more = sink_rec_add(r, tmp, (size_t)n);
		if (!answered) {
			int st = sink_http_state(r->buf, r->len);
			http = st >= 0;
			if (st == 1 || (st == 0 && !more)) {
				static const char ok[] = "HTTP/1.1 200 OK\r\n"
				    "Content-Type: text/plain\r\nContent-Length: 3\r\n"
				    "Connection: close\r\n\r\nok\n";
				send(c->fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL);
				answered = true;
				shutdown(c->fd, SHUT_WR);
			}
		}
		if (!more)
			break;
	}
	close(c->fd);
	sensor_emit("sink", sink_event(r, "tcp", c->port, c->remote, http));
	log_event("tcp", c->port, c->remote, r);
	free(r);
	free(c);
	__atomic_sub_fetch(&sink_active, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Bind (and for TCP listen on) host:port; host is an IPv4 address. */
static int
listen_on(int type, const char *host, int port, struct errbuf *e)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return errbuf_set(e, ERRBUF_INPUT, "sink: SINK_HOST '%.64s': want "
		    "an IPv4 address", host);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "sink: socket: %s",
		    strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		int err = errno;
		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "sink: %s port %d: %s",
		    type == SOCK_STREAM ? "tcp" : "udp", port, strerror(err));
	}
	return fd;
}

/* Parse "80,443,8080" into ports (at most max).  Count or -1. */
static int
parse_ports(const char *s, int *ports, int max)
{
	int n = 0;
	while (*s) {
		char *end;
		long p = strtol(s, &end, 10);
		if (end == s || p <= 0 || p > 65535 || n >= max)
			return -1;
		ports[n++] = (int)p;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

int
sink_main(void)
{
	int tports[SINK_MAX_LISTEN], uports[SINK_MAX_LISTEN];
	int nt = parse_ports(util_env_or("SINK_TCP_PORTS", "80,443,8080"),
	    tports, SINK_MAX_LISTEN);
	int nu = parse_ports(util_env_or("SINK_UDP_PORTS", "53"), uports,
	    SINK_MAX_LISTEN);
	if (nt < 0 || nu < 0 || nt + nu == 0) {
		fprintf(stderr, "sink: SINK_TCP_PORTS / SINK_UDP_PORTS: want "
		    "comma-separated ports (at most %d each)\n", SINK_MAX_LISTEN);
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	sensor_init("sink");
	struct pollfd pfd[2 * SINK_MAX_LISTEN];
	int port_of[2 * SINK_MAX_LISTEN];
	bool is_udp[2 * SINK_MAX_LISTEN];
	int np = 0;
	struct errbuf e = { 0 };
	for (int i = 0; i < nt + nu; i++) {
		bool udp = i >= nt;
		int port = udp ? uports[i - nt] : tports[i];
		int fd = listen_on(udp ? SOCK_DGRAM : SOCK_STREAM,
		    util_env_or("SINK_HOST", "0.0.0.0"), port, &e);
		if (fd < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return EXIT_INTERNAL;
		}
		pfd[np] = (struct pollfd){ .fd = fd, .events = POLLIN };
		port_of[np] = port;
		is_udp[np] = udp;
		np++;
	}
	printf("sink listening: tcp %s, udp %s\n", util_env_or("SINK_TCP_PORTS",
	    "80,443,8080"), util_env_or("SINK_UDP_PORTS", "53"));
	fflush(stdout);
	for (;;) {
		/* wake to report refusals counted in the last period */
		int pr = poll(pfd, (nfds_t)np, sink_ref.refused ? HTTP_OVERLOAD_MS : -1);
		refusals_flush();
		if (pr < 0) {
			if (errno != EINTR)
				usleep(10000);
			continue;
		}
		for (int i = 0; i < np; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			char remote[64];
			if (is_udp[i]) {
				static uint8_t d[DNS_PKT_MAX];
				ssize_t n = recvfrom(pfd[i].fd, d, sizeof(d), MSG_TRUNC,
				    (struct sockaddr *)&from, &fl);
				if (n < 0)
					continue;
				remote_of(&from, remote);
				struct sink_rec *r = xcalloc(1, sizeof(*r));
				size_t got = (size_t)n < sizeof(d) ? (size_t)n : sizeof(d);
				sink_rec_add(r, d, got);
				r->bytes = (uint64_t)n;
				r->truncated = got < (size_t)n;
				sensor_emit("sink", sink_event(r, "udp", port_of[i], remote,
				    false));
				log_event("udp", port_of[i], remote, r);
				free(r);
				continue;
			}
			int fd = accept4(pfd[i].fd, (struct sockaddr *)&from, &fl,
			    SOCK_CLOEXEC);
			if (fd < 0) {
				if (errno == EMFILE || errno == ENFILE)
					usleep(10000);
				continue;
			}
			remote_of(&from, remote);
			if (__atomic_add_fetch(&sink_active, 1, __ATOMIC_SEQ_CST) >
			    SINK_MAX_CONNS) {
				/* over budget: still recorded, never read */
				__atomic_sub_fetch(&sink_active, 1, __ATOMIC_SEQ_CST);
				refuse_conn(fd, port_of[i], &from, remote);
				continue;
			}
			struct sink_conn *c = xcalloc(1, sizeof(*c));
			c->fd = fd;
			c->port = port_of[i];
			snprintf(c->remote, sizeof(c->remote), "%s", remote);
			if (http_thread_start(conn_thread, c) != 0) {
				free(c);
				__atomic_sub_fetch(&sink_active, 1, __ATOMIC_SEQ_CST);
				refuse_conn(fd, port_of[i], &from, remote);
			}
		}
	}
}
