/*
 * test_relay.c - the host relay (core/relay.c) and the gateway's end of it
 * (gateway_relay_call), without Docker, and Poyo's context budget
 * (agent_trim_history).
 *
 * The relay listens on a unix socket in a temporary folder; its model.url
 * is 127.0.0.1 on a port nothing listens on (a connection error, retried
 * the configured number of times).  A raw client checks the framing: a
 * bad magic is a 400, an oversize request frame a 413, never a hang.  The
 * gateway's client: an unreachable relay is status 0 with a reason, one
 * that accepts and never answers is -1 within its bound.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "../../leakbox/leakbox.h"

static char dir[64];

/* A fresh folder for the sockets. */
static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/ares-relay-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int
teardown(void **state)
{
	struct errbuf e = { 0 };

	(void)state;
	(void)util_rm_rf(dir, &e);
	return 0;
}

/* A relay on dir/name towards a closed port, with retries. */
static struct relay *
start(const char *name, int retries, char path[128])
{
	struct errbuf e = { 0 };
	struct relay_config c = { .url =
	    "http://127.0.0.1:1/v1/chat/completions", .key = "sk-unit-secret",
	    .connect_timeout_ms = 500, .timeout_s = 2, .retries = retries,
	    .owner_uid = -1, .owner_gid = -1 };
	struct relay *r;

	snprintf(path, 128, "%s/%s", dir, name);
	c.sock_path = path;
	r = relay_start(&c, &e);
	if (r == NULL)
		fail_msg("relay_start: %s", e.msg);
	return r;
}

/* Connect to the unix socket path.  The fd. */
static int
dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

/* Read the answer frame's meta (into meta) from fd, within 10 s. */
static void
read_meta(int fd, char *meta, size_t len)
{
	unsigned char h[8];
	size_t got = 0;
	uint32_t ml;

	while (got < 8) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, 10000), 1);
		n = read(fd, h + got, 8 - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_memory_equal(h, "ARS1", 4);
	ml = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 |
	    h[7];
	assert_true(ml > 0 && ml < len);
	got = 0;
	while (got < ml) {
		ssize_t n = read(fd, meta + got, ml - got);

		assert_true(n > 0);
		got += (size_t)n;
	}
	meta[ml] = '\0';
}

/* A bad magic is answered 400; a frame over RELAY_BODY_MAX 413. */
static void
test_relay_frames(void **state)
{
	char path[128], meta[4200];
	struct relay *r = start("r1.sock", 0, path);
	int fd;

	(void)state;
	fd = dial(path);
	assert_int_equal(write(fd, "GET / HTTP/1.1\r\n", 16), 16);
	read_meta(fd, meta, sizeof meta);
	assert_non_null(strstr(meta, "\"status\":400"));
	close(fd);

	fd = dial(path);
	assert_int_equal(write(fd, "ARQ1\xff\xff\xff\xff", 8), 8);
	read_meta(fd, meta, sizeof meta);
	assert_non_null(strstr(meta, "\"status\":413"));
	close(fd);
	relay_stop(r);
	assert_int_equal(access(path, F_OK), -1);
}

/* Through the gateway's client: a closed upstream port is a 502 after
 * 1 + retries attempts, with the reason; the key is never in it. */
static void
test_relay_connect_error(void **state)
{
	char path[128], err[256] = "";
	struct relay *r = start("r2.sock", 2, path);
	struct http_answer out = { .max = GATEWAY_RELAY_BODY_MAX };
	int attempts = 0;
	long lat = 0, st;

	(void)state;
	st = gateway_relay_call(path, 30, "{\"messages\":[]}", 15, &out,
	    &attempts, &lat, err, sizeof err);
	assert_int_equal(st, 502);
	assert_int_equal(attempts, 3);
	assert_true(lat >= 0);
	assert_non_null(strstr(err, "model endpoint"));
	assert_non_null(out.buf);
	assert_non_null(strstr(out.buf, "\"error\""));
	assert_null(strstr(out.buf, "sk-unit-secret"));
	free(out.buf);
	relay_stop(r);
}

/* No relay: status 0 and why, at once. */
static void
test_gateway_relay_down(void **state)
{
	char path[160], err[256] = "";
	struct http_answer out = { .max = 1024 };
	int attempts = 7;
	long lat = 0;

	(void)state;
	snprintf(path, sizeof path, "%s/none.sock", dir);
	assert_int_equal(gateway_relay_call(path, 5, "{}", 2, &out, &attempts,
	    &lat, err, sizeof err), 0);
	assert_non_null(strstr(err, "unreachable"));
	assert_int_equal(attempts, 0);
	assert_null(out.buf);
}

/* A relay that accepts and never answers: -1 after the bound. */
static void
test_gateway_relay_silent(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char err[256] = "";
	struct http_answer out = { .max = 1024 };
	int attempts, lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	long lat;
	uint64_t t0;

	(void)state;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/silent.sock", dir);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 4), 0);
	t0 = util_mono_ns();
	assert_int_equal(gateway_relay_call(sa.sun_path, 1, "{}", 2, &out,
	    &attempts, &lat, err, sizeof err), -1);
	assert_true(util_mono_ns() - t0 < 5000000000ull);
	assert_non_null(strstr(err, "no answer within 1 s"));
	free(out.buf);
	close(lfd);
}

/* A key that would break its header line, an unreadable ca_file: input
 * errors, nothing listens. */
static void
test_relay_bad_config(void **state)
{
	struct errbuf e = { 0 };
	char path[128];
	struct relay_config c = { .url = "http://127.0.0.1:1/v1",
	    .key = "sk-a\r\nX-Injected: 1", .connect_timeout_ms = 500,
	    .timeout_s = 1, .owner_uid = -1, .owner_gid = -1 };

	(void)state;
	snprintf(path, sizeof path, "%s/bad.sock", dir);
	c.sock_path = path;
	assert_null(relay_start(&c, &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "control character"));
	c.key = "sk-fine";
	c.ca_file = "/nonexistent/ca.pem";
	memset(&e, 0, sizeof e);
	assert_null(relay_start(&c, &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "model.ca_file"));
	assert_int_equal(access(path, F_OK), -1);
}

/* {"role": role, "content": text (n bytes of 'x')}. */
static cJSON *
msg(const char *role, size_t n)
{
	cJSON *m = cJSON_CreateObject();
	char *t = xmalloc(n + 1);

	memset(t, 'x', n);
	t[n] = '\0';
	cJSON_AddStringToObject(m, "role", role);
	cJSON_AddStringToObject(m, "content", t);
	free(t);
	return m;
}

/* Is every tool message right after its assistant (or another tool)? */
static bool
paired(const cJSON *a)
{
	const char *prev = NULL;
	const cJSON *m;

	cJSON_ArrayForEach(m, a) {
		const char *r = cJSON_GetObjectItemCaseSensitive(m,
		    "role")->valuestring;

		if (strcmp(r, "tool") == 0 && (prev == NULL ||
		    (strcmp(prev, "assistant") != 0 && strcmp(prev, "tool") != 0)))
			return false;
		prev = r;
	}
	return true;
}

/* The budget drops the oldest turns whole; system, task and the latest
 * turn stay; under the budget nothing changes. */
static void
test_trim_history(void **state)
{
	cJSON *a = cJSON_CreateArray();
	char *t;
	int i;

	(void)state;
	cJSON_AddItemToArray(a, msg("system", 100));
	cJSON_AddItemToArray(a, msg("user", 100));
	for (i = 0; i < 10; i++) {
		cJSON_AddItemToArray(a, msg("assistant", 50));
		cJSON_AddItemToArray(a, msg("tool", 1000));
		cJSON_AddItemToArray(a, msg("tool", 1000));
	}
	assert_int_equal(agent_trim_history(a, 1000000), 0);
	assert_int_equal(cJSON_GetArraySize(a), 32);
	assert_int_equal(agent_trim_history(a, 8000), 7);
	t = cJSON_PrintUnformatted(a);
	assert_true(strlen(t) <= 8000);
	free(t);
	assert_int_equal(cJSON_GetArraySize(a), 2 + 3 * 3);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(a, 0), "role")->valuestring, "system");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(a, 1), "role")->valuestring, "user");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(a, 2), "role")->valuestring, "assistant");
	assert_true(paired(a));
	/* a budget below the latest turn: only it stays with the first two */
	assert_int_equal(agent_trim_history(a, 10), 2);
	assert_int_equal(cJSON_GetArraySize(a), 5);
	assert_true(paired(a));
	cJSON_Delete(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relay_frames),
		cmocka_unit_test(test_relay_connect_error),
		cmocka_unit_test(test_gateway_relay_down),
		cmocka_unit_test(test_gateway_relay_silent),
		cmocka_unit_test(test_trim_history),
		cmocka_unit_test(test_relay_bad_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
