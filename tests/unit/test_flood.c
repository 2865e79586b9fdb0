/*
 * test_flood.c - the lab's dns and sink under a flood, without Docker:
 * dns_main / sink_main run in a forked child on 127.0.0.1 (ephemeral
 * ports), stdout to a file (the container log, which lives on the
 * host's disk), a chain with a small budget.  What must stay bounded:
 * the log, the chain, the sink's threads, and the number of events a
 * flood of refused connections produces.  No timing is asserted.
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
	printf("sink: %d dropped events, %d overload events in the chain\n",
	    dropped, overload);
	assert_true(dropped >= 1 && dropped <= 10);
	assert_true(overload >= 1 && overload <= 10);
	kill(c.pid, SIGCONT);
	child_stop(&c, true);
	child_free(&c);
	free(tp);
	free(up);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns_flood),
		cmocka_unit_test(test_sink_flood),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
