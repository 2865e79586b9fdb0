/*
 * test_flood.c - the lab's dns, sink and gateway under a flood, without
 * Docker: dns_main / sink_main / gateway_main run in a forked child on
 * 127.0.0.1 (ephemeral ports), stdout to a file (the container log, which
 * lives on the host's disk), a chain with a small budget.  What must stay
 * bounded: the log, the chain, the sink's threads, the number of events a
 * flood of refused connections produces, the gateway's peak memory.  No
 * timing is asserted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../leakbox/leakbox.h"

#define FLOOD_BUDGET 65536
/* what the container log (stdout + stderr) may take: the log budget, plus
 * stderr's at most 33 sensor error lines (< 1 KiB each) and the
 * budget notice */
#define LOG_LIMIT    (SENSOR_LOG_MAX + 33 * 1024 + 512)

struct child {
	char dir[64];
	char *chain, *out;
	pid_t pid;
};

/* A free 127.0.0.1 port of type (SOCK_DGRAM / SOCK_STREAM). */
static int free_port(int type)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	socklen_t sl = sizeof(sa);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/* Fork main() with env (NULL-terminated "K=V" list), stdout and stderr to
 * dir/out, a chain dir/chain.jsonl of FLOOD_BUDGET bytes. */
static void child_start(struct child *c, int (*main_fn)(void),
    const char *const *env)
{
	snprintf(c->dir, sizeof(c->dir), "/tmp/test_flood.XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	c->chain = xasprintf("%s/chain.jsonl", c->dir);
	c->out = xasprintf("%s/out", c->dir);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int fd = open(c->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(90);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("EVIDENCE", c->chain, 1);
		setenv("RUN_ID", "run-flood-1", 1);
		setenv("EVIDENCE_MAX_BYTES", "65536", 1);
		unsetenv("BUS");
		for (; *env; env++)
			putenv(xstrdup(*env));
		alarm(120);
		_exit(main_fn());
	}
	usleep(300000);   /* let it bind */
}

/* Threads of the child (from /proc), -1 if unknown. */
static int child_threads(const struct child *c)
{
	char *p = xasprintf("/proc/%d/status", (int)c->pid);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return -1;
	char line[256];
	int n = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

static off_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Stop the child; check its chain stayed within the budget, verifies
 * and (when full) ends in "truncated"; its log within LOG_LIMIT. */
static void child_stop(struct child *c, bool want_truncated)
{
	kill(c->pid, SIGKILL);
	int st;
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	off_t log = size_of(c->out), chain = size_of(c->chain);
	printf("log: %lld bytes, chain: %lld bytes (budget %d)\n",
	    (long long)log, (long long)chain, FLOOD_BUDGET);
	assert_true(log >= 0 && log <= LOG_LIMIT);
	assert_true(chain > 0 && chain <= FLOOD_BUDGET);
	struct evidence_verify_result r;
	struct errbuf e = { 0 };
	assert_int_equal(evidence_verify_file(c->chain, "run-flood-1", &r, &e), 0);
	assert_true(r.ok);
	size_t len;
	char *txt = util_read_file(c->chain, 1 << 20, &len, &e);
	assert_non_null(txt);
	assert_int_equal(strstr(txt, "\"type\":\"truncated\"") != NULL,
	    want_truncated);
	free(txt);
}

static void child_free(struct child *c)
{
	char *cmd = xasprintf("rm -rf '%s'", c->dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(c->chain);
	free(c->out);
}

/* Count lines of the chain of type `type` (and with `needle` if set). */
static int chain_count(const struct child *c, const char *type,
    const char *needle)
{
	struct errbuf e = { 0 };
	size_t len;
	char *txt = util_read_file(c->chain, 1 << 20, &len, &e);
	assert_non_null(txt);
	char *want = xasprintf("\"type\":\"%s\"", type);
	int n = 0;
	for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n"))
		n += strstr(line, want) && (!needle || strstr(line, needle));
	free(want);
	free(txt);
	return n;
}

/* One DNS query for <i>.flood.example, A/IN. */
static size_t dns_query(uint8_t *pkt, int i)
{
	memset(pkt, 0, 12);
	pkt[0] = (uint8_t)(i >> 8);
	pkt[1] = (uint8_t)i;
	pkt[2] = 0x01;                 /* RD */
	pkt[5] = 1;                    /* QDCOUNT */
	char label[16];
	int n = snprintf(label, sizeof(label), "q%d", i);
	size_t o = 12;
	pkt[o++] = (uint8_t)n;
	memcpy(pkt + o, label, (size_t)n);
	o += (size_t)n;
	pkt[o++] = 5;
	memcpy(pkt + o, "flood", 5);
	o += 5;
	pkt[o++] = 7;
	memcpy(pkt + o, "example", 7);
	o += 7;
	pkt[o++] = 0;
	pkt[o++] = 0; pkt[o++] = 1;    /* A */
	pkt[o++] = 0; pkt[o++] = 1;    /* IN */
	return o;
}

/* 20000 queries, each waiting for its answer: the log and the chain stay
 * bounded (the resolver is one thread with static buffers: nothing else
 * can grow). */
static void test_dns_flood(void **state)
{
	(void)state;
	int port = free_port(SOCK_DGRAM);
	char *listen = xasprintf("DNS_LISTEN=127.0.0.1:%d", port);
	const char *env[] = { listen, "DNS_MODE=sinkhole", NULL };
	struct child c;
	child_start(&c, dns_main, env);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	int answered = 0;
	for (int i = 0; i < 20000; i++) {
		uint8_t pkt[64], ans[512];
		size_t n = dns_query(pkt, i);
		assert_int_equal(send(fd, pkt, n, 0), (ssize_t)n);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 2000) == 1 && recv(fd, ans, sizeof(ans), 0) > 0)
			answered++;
	}
	close(fd);
	printf("dns: %d of 20000 answered, %d threads\n", answered,
	    child_threads(&c));
	assert_true(answered > 10000);
	assert_int_equal(child_threads(&c), 1);
	child_stop(&c, true);
	child_free(&c);
	free(listen);
}

/* TCP: 300 connections held open at once.  The sink keeps at most
 * SINK_MAX_CONNS threads; the ones beyond are recorded, but not as one
 * event each.  Then a UDP flood: the log and chain stay bounded. */
static void test_sink_flood(void **state)
{
	(void)state;
	int tport = free_port(SOCK_STREAM), uport = free_port(SOCK_DGRAM);
	char *tp = xasprintf("SINK_TCP_PORTS=%d", tport);
	char *up = xasprintf("SINK_UDP_PORTS=%d", uport);
	const char *env[] = { tp, up, "SINK_HOST=127.0.0.1", NULL };
	struct child c;
	child_start(&c, sink_main, env);

	static int fds[300];
	uint64_t t0 = util_mono_ns();
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)tport) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 300; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&sa,
		    sizeof(sa)), 0);
		assert_int_equal(send(fds[i], "LEAK", 4, MSG_NOSIGNAL), 4);
	}
	usleep(500000);
	/* the refusals were spread over this many (started) seconds */
	int secs = (int)((util_mono_ns() - t0) / 1000000000u) + 1;
	int threads = child_threads(&c);
	printf("sink: %d threads with 300 connections open\n", threads);
	assert_true(threads >= 1 && threads <= SINK_MAX_CONNS + 1);
	for (int i = 0; i < 300; i++)
		close(fds[i]);

	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa.sin_port = htons((uint16_t)uport);
	for (int i = 0; i < 20000; i++) {
		char d[64];
		int n = snprintf(d, sizeof(d), "exfil datagram %d", i);
		sendto(u, d, (size_t)n, 0, (struct sockaddr *)&sa, sizeof(sa));
		if (i % 100 == 99)
			usleep(1000);   /* let the sink keep up (it may drop) */
	}
	close(u);
	usleep(300000);
	kill(c.pid, SIGSTOP);
	/* the 300 - SINK_MAX_CONNS refused connections: a "sink" event
	 * (dropped) only for the first of each second, the rest counted in
	 * "overload" events */
	int dropped = chain_count(&c, "sink", "\"dropped\":true");
	int overload = chain_count(&c, "overload", NULL);
	printf("sink: %d dropped events, %d overload events in the chain "
	    "(refusals within %d s)\n", dropped, overload, secs);
	assert_true(dropped >= 1 && dropped <= secs + 1);
	assert_true(overload >= 1 && overload <= secs + 2);
	kill(c.pid, SIGCONT);
	child_stop(&c, true);
	child_free(&c);
	free(tp);
	free(up);
}

/* Peak resident memory of the child in KiB (VmHWM), -1 if unknown. */
static long child_hwm_kib(const struct child *c)
{
	char *p = xasprintf("/proc/%d/status", (int)c->pid);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return -1;
	char line[256];
	long n = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* 16 concurrent chat requests (the per-address cap) of 1 MiB bodies that
 * cJSON turns into ~40 MiB trees each: the gateway's peak memory stays
 * far below the container's 256 MiB (parses share a byte budget). */
static void test_gateway_parse_memory(void **state)
{
	(void)state;
#ifdef UNDER_ASAN
	skip();   /* ASan's shadow and quarantine make RSS meaningless */
#endif
	int port = free_port(SOCK_STREAM), dead = free_port(SOCK_STREAM);
	char *listen = xasprintf("GATEWAY_LISTEN=127.0.0.1:%d", port);
	char *model = xasprintf("MODEL_URL=http://127.0.0.1:%d/v1/chat", dead);
	char ctl[128];
	snprintf(ctl, sizeof(ctl), "GATEWAY_CONTROL=/tmp/test_flood_gw.%d.sock",
	    (int)getpid());
	const char *env[] = { listen, model, ctl, "AGENT_KEY=sk-dummy",
	    "REAL_KEY=sk-real", NULL };
	struct child c;
	child_start(&c, gateway_main, env);
	long base = child_hwm_kib(&c);

	size_t n = HTTP_BODY_MAX - 64;
	char *body = xmalloc(n + 1);
	size_t o = (size_t)snprintf(body, n, "{\"messages\":[");
	while (o + 4 < n) {
		body[o++] = '0';
		body[o++] = ',';
	}
	body[o++] = '0';
	body[o++] = ']';
	body[o++] = '}';
	char *head = xasprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: g\r\n"
	    "Authorization: Bearer sk-dummy\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n", o);
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fds[GATEWAY_TCP_PER_REMOTE];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < GATEWAY_TCP_PER_REMOTE; i++) {
			fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			assert_int_equal(connect(fds[i], (struct sockaddr *)&sa,
			    sizeof(sa)), 0);
			/* everything but the last byte: all bodies complete at
			 * about the same moment below */
			assert_int_equal(send(fds[i], head, strlen(head),
			    MSG_NOSIGNAL), (ssize_t)strlen(head));
			size_t sent = 0;
			while (sent < o - 1) {
				ssize_t w = send(fds[i], body + sent, o - 1 - sent,
				    MSG_NOSIGNAL);
				assert_true(w > 0);
				sent += (size_t)w;
			}
		}
		for (int i = 0; i < GATEWAY_TCP_PER_REMOTE; i++)
			assert_int_equal(send(fds[i], body + o - 1, 1, MSG_NOSIGNAL), 1);
		/* read each answer to its end: the server frees a connection's
		 * place before it closes it, so the next round has all 16 */
		int ok = 0, late = 0;
		for (int i = 0; i < GATEWAY_TCP_PER_REMOTE; i++) {
			char buf[4096];
			size_t got = 0;
			for (;;) {
				struct pollfd pfd = { .fd = fds[i], .events = POLLIN };
				if (poll(&pfd, 1, 30000) != 1)
					break;
				ssize_t r = recv(fds[i], buf + got, sizeof(buf) - 1 - got, 0);
				if (r <= 0)
					break;
				got += (size_t)r;
				if (got == sizeof(buf) - 1)
					got = 12;   /* keep the status line */
			}
			ok += got > 12 && memcmp(buf, "HTTP/1.1 502", 12) == 0;
			late += got > 12 && memcmp(buf, "HTTP/1.1 408", 12) == 0;
			if (got <= 12 || (memcmp(buf, "HTTP/1.1 502", 12) != 0 &&
			    memcmp(buf, "HTTP/1.1 408", 12) != 0))
				printf("round %d conn %d: %.12s (%zu bytes)\n", round,
				    i, got > 12 ? buf : "-", got);
			close(fds[i]);
		}
		/* every request answered: parsed and forwarded (502, the model
		 * is dead), or, on a loaded machine where 16 MiB of bodies take
		 * longer than the 5 s request deadline, refused late (408);
		 * most must have been parsed together for the peak to mean
		 * anything */
		if (ok + late != GATEWAY_TCP_PER_REMOTE ||
		    ok < GATEWAY_TCP_PER_REMOTE / 2)
			fail_msg("round %d: %d parsed, %d late of %d", round, ok,
			    late, GATEWAY_TCP_PER_REMOTE);
	}
	long peak = child_hwm_kib(&c);
	printf("gateway: peak %ld MiB (%ld MiB at start) for 3 x %d concurrent "
	    "1 MiB chat bodies\n", peak / 1024, base / 1024,
	    GATEWAY_TCP_PER_REMOTE);
	kill(c.pid, SIGKILL);
	int st;
	waitpid(c.pid, &st, 0);
	unlink(ctl + strlen("GATEWAY_CONTROL="));
	assert_true(peak > 0 && peak < 160 * 1024);
	child_free(&c);
	free(head);
	free(body);
	free(listen);
	free(model);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns_flood),
		cmocka_unit_test(test_sink_flood),
		cmocka_unit_test(test_gateway_parse_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
