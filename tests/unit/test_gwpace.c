/*
 * test_gwpace.c - presenter mode at the gateway (GATEWAY_PACE_MS), without
 * Docker: gateway_main in a forked child on 127.0.0.1 (an ephemeral port,
 * a dead model port, its control socket in /tmp).  A model turn is held
 * before it is forwarded; /control/deny while it is held refuses it at
 * once (403 long before the hold would end), a turn after the deny is
 * refused at once too, and once allowed again a turn is held the whole
 * pace then forwarded (502: the model is dead).  A value out of 0..5000
 * stops the gateway at start.  The margins are seconds wide: a held
 * turn's remaining hold is >= 2 s when it must already be answered.
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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../leakbox/leakbox.h"

#define PACE_MS 4000

static int gw_port;
static char ctl_path[108];
static char dir[64];
static pid_t gw_pid;

static int
free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof sa;

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/* Fork gateway_main with GATEWAY_PACE_MS=pace; its pid. */
static pid_t
gw_start(const char *pace)
{
	pid_t pid;
	char *out = xasprintf("%s/out", dir), *chain = xasprintf(
	    "%s/chain.jsonl", dir);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600);
		char *v;

		if (fd < 0)
			_exit(90);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("EVIDENCE", chain, 1);
		setenv("RUN_ID", "run-gwpace-1", 1);
		unsetenv("BUS");
		v = xasprintf("127.0.0.1:%d", gw_port);
		setenv("GATEWAY_LISTEN", v, 1);
		setenv("GATEWAY_CONTROL", ctl_path, 1);
		v = xasprintf("http://127.0.0.1:%d/v1/chat", free_port());
		setenv("MODEL_URL", v, 1);
		setenv("AGENT_KEY", "sk-dummy", 1);
		setenv("REAL_KEY", "sk-real", 1);
		setenv("GATEWAY_PACE_MS", pace, 1);
		alarm(60);
		_exit(gateway_main());
	}
	free(out);
	free(chain);
	return pid;
}

static uint64_t
ms_now(void)
{
	return util_mono_ns() / 1000000u;
}

/* A chat request sent on a fresh connection (the answer not read). */
static int
chat_send(void)
{
	static const char body[] = "{\"messages\":[]}";
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)gw_port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char *req;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	req = xasprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: g\r\n"
	    "Authorization: Bearer sk-dummy\r\nContent-Type: application/json"
	    "\r\nContent-Length: %zu\r\n\r\n%s", strlen(body), body);
	assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL),
	    (ssize_t)strlen(req));
	free(req);
	return fd;
}

/* The HTTP status of the answer on fd (waits up to wait_ms; 0 when none
 * came), fd closed. */
static int
answer_status(int fd, int wait_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[64] = { 0 };
	int st = 0;
	ssize_t n;

	if (poll(&p, 1, wait_ms) == 1 &&
	    (n = recv(fd, buf, sizeof buf - 1, 0)) > 12 &&
	    strncmp(buf, "HTTP/1.1 ", 9) == 0)
		st = atoi(buf + 9);
	close(fd);
	return st;
}

/* POST path on the control socket; its HTTP status. */
static int
control(const char *path)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char *req;

	assert_true(fd >= 0);
	snprintf(su.sun_path, sizeof su.sun_path, "%s", ctl_path);
	assert_int_equal(connect(fd, (struct sockaddr *)&su, sizeof su), 0);
	req = xasprintf("POST %s HTTP/1.1\r\nHost: ctl\r\nContent-Length: 0"
	    "\r\n\r\n", path);
	assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL),
	    (ssize_t)strlen(req));
	free(req);
	return answer_status(fd, 5000);
}

/* Wait until the gateway answers on its port. */
static void
wait_up(void)
{
	for (int i = 0; i < 100; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET,
		    .sin_port = htons((uint16_t)gw_port) };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int ok;

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
		close(fd);
		if (ok && access(ctl_path, F_OK) == 0)
			return;
		usleep(50000);
	}
	fail_msg("the gateway did not come up");
}

static void
test_deny_while_held(void **state)
{
	uint64_t t;
	int fd;

	(void)state;
	gw_pid = gw_start("4000");
	wait_up();
	/* held: no answer within the first 500 ms (a dead model answers
	 * 502 at once when not held) */
	fd = chat_send();
	assert_int_equal(answer_status(dup(fd), 500), 0);
	/* the deny lever: the held turn is refused at once */
	t = ms_now();
	assert_int_equal(control("/control/deny"), 200);
	assert_int_equal(answer_status(fd, 10000), 403);
	printf("held turn refused %llu ms after the deny\n",
	    (unsigned long long)(ms_now() - t));
	assert_true(ms_now() - t < PACE_MS - 2000);
	/* a turn after the deny: refused at once, never held */
	t = ms_now();
	assert_int_equal(answer_status(chat_send(), 10000), 403);
	assert_true(ms_now() - t < PACE_MS - 2000);
	/* allowed again: held the whole pace, then forwarded (502) */
	assert_int_equal(control("/control/allow"), 200);
	t = ms_now();
	assert_int_equal(answer_status(chat_send(), 20000), 502);
	printf("turn held %llu ms (pace %d)\n",
	    (unsigned long long)(ms_now() - t), PACE_MS);
	assert_true(ms_now() - t >= PACE_MS - 100);
	kill(gw_pid, SIGKILL);
	waitpid(gw_pid, NULL, 0);
	unlink(ctl_path);
}

static void
test_bad_pace(void **state)
{
	static const char *const bad[] = { "5001", "-1", "1x", "99999999999" };
	int st;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pid_t pid = gw_start(bad[i]);

		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), EXIT_INTERNAL);
		unlink(ctl_path);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_pace),
		cmocka_unit_test(test_deny_while_held),
	};
	int rc;

	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof dir, "/tmp/test_gwpace.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(ctl_path, sizeof ctl_path, "%s/gw.sock", dir);
	gw_port = free_port();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);

		if (system(cmd) != 0)
			rc = 1;
		free(cmd);
	}
	return rc;
}
