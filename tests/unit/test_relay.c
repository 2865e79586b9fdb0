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
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "../../leakbox/leakbox.h"

static char dir[64];

/* ---- a model server of the test's own (127.0.0.1, one call at a time) */

static int srv_fd = -1, srv_port;
static pthread_t srv_thread;
static char srv_auth[512];          /* the last call's Authorization value */
static char *srv_req;               /* the last call's body */
static const char *srv_tmpl;        /* the answer; see srv_fill */
static char *srv_big;               /* or this one, when set */
static size_t srv_big_len;

/* The JSON-escaped key of srv_auth ("Bearer " cut), three ways: as JSON
 * escapes it (\" and \\), every byte as \u00XX, '/' as \/ (into out). */
static void
srv_esc(const char *k, int how, char *out, size_t len)
{
	size_t o = 0;

	for (; *k && o + 8 < len; k++) {
		if (how == 1)
			o += (size_t)snprintf(out + o, len - o, "\\u%04x",
			    (unsigned char)*k);
		else if (*k == '"' || *k == '\\')
			o += (size_t)snprintf(out + o, len - o, "\\%c", *k);
		else if (how == 2 && *k == '/')
			o += (size_t)snprintf(out + o, len - o, "\\/");
		else
			out[o++] = *k;
	}
	out[o] = '\0';
}

/* The JSON-escaped key k with ins put after its 4th byte (into out). */
static void
srv_ins(const char *k, const char *ins, char *out, size_t len)
{
	snprintf(out, len, "%.4s%s%s", k, ins, k + 4);
}

/* srv_tmpl with {K} (the key, JSON-escaped), {U} (\u-escaped), {S} (\/),
 * {KK} (escaped twice: the key inside a JSON string inside a string),
 * {C1} {C2} {C3} {C4} {C5} (the escaped key with a control byte, an ESC
 * sequence, a C1 control, a zero-width space, a raw DEL inserted).
 * Caller frees. */
static char *
srv_fill(void)
{
	const char *key = strncmp(srv_auth, "Bearer ", 7) == 0 ?
	    srv_auth + 7 : "";
	static const char *const ins[] = { "\\u0001", "\\u001b[0m",
	    "\\u0085", "\\u200b", "\x7f" };
	char k[1024], u[4096], sl[1024], kk[2048], *out = xmalloc(65536);
	char c[5][1100];
	size_t o = 0;

	srv_esc(key, 0, k, sizeof k);
	srv_esc(key, 1, u, sizeof u);
	srv_esc(key, 2, sl, sizeof sl);
	srv_esc(k, 0, kk, sizeof kk);
	for (int n = 0; n < 5; n++)
		srv_ins(k, ins[n], c[n], sizeof c[n]);
	for (const char *t = srv_tmpl; *t && o < 60000; ) {
		const char *v = NULL;
		size_t skip = 0;

		if (strncmp(t, "{C", 2) == 0 && t[2] >= '1' && t[2] <= '5' &&
		    t[3] == '}')
			v = c[t[2] - '1'], skip = 4;
		else if (strncmp(t, "{KK}", 4) == 0)
			v = kk, skip = 4;
		else if (strncmp(t, "{K}", 3) == 0)
			v = k, skip = 3;
		else if (strncmp(t, "{U}", 3) == 0)
			v = u, skip = 3;
		else if (strncmp(t, "{S}", 3) == 0)
			v = sl, skip = 3;
		if (v != NULL) {
			o += (size_t)snprintf(out + o, 65536 - o, "%s", v);
			t += skip;
		} else
			out[o++] = *t++;
	}
	out[o] = '\0';
	return out;
}

/* The server's thread: read a request (head, Content-Length body), note
 * its Authorization and body, answer 200 with srv_big or srv_fill(). */
static void *
srv_main(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(srv_fd, NULL, NULL);
		char *buf = xmalloc(8u << 20), *hend, *a, *body;
		size_t got = 0, need = 0;
		long cl = 0;

		if (fd < 0)
			break;
		for (;;) {
			ssize_t n = read(fd, buf + got, (8u << 20) - 1 - got);

			if (n <= 0)
				break;
			got += (size_t)n;
			buf[got] = '\0';
			hend = strstr(buf, "\r\n\r\n");
			if (hend != NULL) {
				char *c = strcasestr(buf, "Content-Length:");

				cl = c != NULL ? strtol(c + 15, NULL, 10) : 0;
				need = (size_t)(hend + 4 - buf) + (size_t)cl;
				if (got >= need)
					break;
			}
		}
		hend = strstr(buf, "\r\n\r\n");
		if (hend == NULL) {
			close(fd);
			free(buf);
			continue;
		}
		*hend = '\0';
		a = strcasestr(buf, "Authorization: ");
		srv_auth[0] = '\0';
		if (a != NULL)
			sscanf(a + 15, "%511[^\r\n]", srv_auth);
		body = hend + 4;
		body[cl] = '\0';
		free(srv_req);
		srv_req = xstrdup(body);
		char *ans = srv_big != NULL ? NULL : srv_fill();
		const char *b = srv_big != NULL ? srv_big : ans;
		size_t bl = srv_big != NULL ? srv_big_len : strlen(ans);
		char head[256];
		int hl = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\n"
		    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n", bl);

		(void)send(fd, head, (size_t)hl, MSG_NOSIGNAL);
		for (size_t o = 0; o < bl; ) {
			ssize_t n = send(fd, b + o, bl - o, MSG_NOSIGNAL);

			if (n <= 0)
				break;
			o += (size_t)n;
		}
		free(ans);
		free(buf);
		close(fd);
	}
	return NULL;
}

/* Start the server once (on 127.0.0.1, a port of the kernel's choice). */
static void
srv_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;

	if (srv_fd >= 0)
		return;
	srv_fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(srv_fd >= 0);
	assert_int_equal(bind(srv_fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(srv_fd, 8), 0);
	assert_int_equal(getsockname(srv_fd, (struct sockaddr *)&sa, &sl), 0);
	srv_port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&srv_thread, NULL, srv_main, NULL), 0);
}

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
	assert_true(out.final);             /* retried: the relay's last word */
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

#define TKEY "sk-unit/se\"cr\\et-42"

/* A relay on dir/name towards the test's server, model pinned to
 * "pinned-1". */
static struct relay *
start_srv(const char *name, char path[128])
{
	struct errbuf e = { 0 };
	char url[96];
	struct relay_config c = { .key = TKEY, .connect_timeout_ms = 1000,
	    .timeout_s = 10, .retries = 0, .owner_uid = -1, .owner_gid = -1,
	    .model = "pinned-1" };
	struct relay *r;

	srv_start();
	snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions",
	    srv_port);
	c.url = url;
	snprintf(path, 128, "%s/%s", dir, name);
	c.sock_path = path;
	r = relay_start(&c, &e);
	if (r == NULL)
		fail_msg("relay_start: %s", e.msg);
	return r;
}

/* One call through the gateway's client; the status, the answer in out. */
static long
call(const char *path, const char *body, struct http_answer *out,
    char *err, size_t errlen)
{
	int attempts;
	long lat;

	*out = (struct http_answer){ .max = GATEWAY_RELAY_BODY_MAX };
	return gateway_relay_call(path, 30, body, strlen(body), out,
	    &attempts, &lat, err, errlen);
}

/* Does s hold the key, as it is or under one to three JSON decodings? */
static bool
holds_key(const char *s)
{
	cJSON *j;
	char *txt;
	bool in;

	if (strstr(s, TKEY) != NULL || strstr(s, "se\"cr\\et") != NULL)
		return true;
	/* what a JSON reader (the agent, the gateway) makes of it */
	j = cJSON_Parse(s);
	if (j == NULL)
		return false;
	txt = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	in = strstr(txt, "se\\\"cr\\\\et") != NULL;
	free(txt);
	return in;
}

/* The model echoes the key: plain (JSON-escaped as it must be), every
 * byte \u-escaped, '/' as \/, in a member name, escaped twice inside
 * tool-call arguments (JSON in a string), and with a control byte, an ESC
 * sequence, a C1 control, a zero-width space or a DEL inserted (dropped
 * when printed: util_sanitize, a terminal).  None of it reaches the
 * gateway: the relay answers with its own error, the status kept. */
static void
test_relay_key_echo(void **state)
{
	static const char *const tmpl[] = {
		"{\"choices\":[{\"message\":{\"role\":\"assistant\","
		    "\"content\":\"your key is {K}\"}}]}",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\","
		    "\"content\":\"{U}\"}}]}",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\","
		    "\"content\":\"x {S} y\"}}]}",
		"{\"{U}\":1,\"choices\":[]}",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\","
		    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
		    "\"function\":{\"name\":\"shell\",\"arguments\":"
		    "\"{\\\"command\\\":\\\"echo {KK}\\\"}\"}}]}}]}",
		"{\"choices\":[{\"message\":{\"content\":\"{C1}\"}}]}",
		"{\"choices\":[{\"message\":{\"content\":\"a {C2} b\"}}]}",
		"{\"choices\":[{\"message\":{\"content\":\"{C3}\"}}]}",
		"{\"choices\":[{\"message\":{\"content\":\"{C4}\"}}]}",
		"{\"choices\":[{\"message\":{\"content\":\"{C5}\"}}]}",
	};
	char path[128], err[256];
	struct relay *r = start_srv("echo.sock", path);
	struct http_answer out;

	(void)state;
	for (size_t i = 0; i < sizeof tmpl / sizeof tmpl[0]; i++) {
		long st;

		srv_tmpl = tmpl[i];
		err[0] = '\0';
		st = call(path, "{\"messages\":[]}", &out, err, sizeof err);
		assert_string_equal(srv_auth, "Bearer " TKEY);
		/* a 2xx the relay did not retry: a new call may do better */
		if (out.final)
			fail_msg("answer %zu: marked final", i);
		if (out.buf == NULL || holds_key(out.buf) || st != 502 ||
		    strstr(err, "key") == NULL)
			fail_msg("answer %zu: status %ld, err %s, body %s", i, st,
			    err, out.buf != NULL ? out.buf : "(none)");
		free(out.buf);
	}
	/* the same answer without the key passes untouched */
	srv_tmpl = "{\"choices\":[{\"message\":{\"role\":\"assistant\","
	    "\"content\":\"sk-unit/se \\u0073\"}}]}";
	assert_int_equal(call(path, "{\"messages\":[]}", &out, err,
	    sizeof err), 200);
	assert_string_equal(out.buf, srv_tmpl);
	free(out.buf);
	relay_stop(r);
}

static size_t cj_bytes;              /* cJSON's allocations, counted */

static void *
cj_malloc(size_t n)
{
	__atomic_add_fetch(&cj_bytes, n, __ATOMIC_SEQ_CST);
	return malloc(n);
}

/* A 4 MiB answer of {"a":[0,0,...]} (a 100+ MiB cJSON tree) goes through
 * the relay without a tree: cJSON allocates under 64 KiB meanwhile. */
static void
test_relay_big_answer(void **state)
{
	char path[128], err[256] = "";
	struct relay *r = start_srv("big.sock", path);
	struct http_answer out;
	cJSON_Hooks h = { .malloc_fn = cj_malloc, .free_fn = free };
	size_t n = RELAY_BODY_MAX - 64;
	long st;

	(void)state;
	srv_big = xmalloc(n);
	memcpy(srv_big, "{\"a\":[", 6);
	for (size_t i = 6; i + 2 < n; i += 2)
		memcpy(srv_big + i, "0,", 2);
	memcpy(srv_big + n - 4, "0]}", 3);
	srv_big_len = n - 1;
	cJSON_InitHooks(&h);
	cj_bytes = 0;
	st = call(path, "{\"messages\":[]}", &out, err, sizeof err);
	cJSON_InitHooks(NULL);
	if (st != 200)
		fail_msg("status %ld: %s", st, err);
	assert_int_equal(out.len, srv_big_len);
	if (cj_bytes > 65536)
		fail_msg("cJSON allocated %zu bytes for the answer", cj_bytes);
	free(out.buf);
	free(srv_big);
	srv_big = NULL;
	relay_stop(r);
}

/* The relay pins "model" to model.name (added when absent, an escaped
 * member name too) and refuses stream:true and n>1 with a 400 that says
 * why; only the listed top-level members pass (every one of them does),
 * compared on the decoded name exactly: a case variant ("Model", which Go's
 * encoding/json takes for "model"), a name with a NUL or a non-ASCII byte
 * ("model\u0000" is "model" to cJSON, "\u017ftream" is "stream" to Go),
 * a routing or cost key (OpenRouter's "models", "provider",
 * "service_tier", "store") and a second copy of a member are refused, the
 * member named; the server never sees those. */
static void
test_relay_pin_model(void **state)
{
	static const char *const pinned[] = {
		"{\"model\":\"gpt-expensive\",\"messages\":[]}",
		"{\"mo\\u0064el\":\"b\",\"messages\":[],\"stream\":false,\"n\":1}",
		" {\"messages\":[ ] } ",
		"{}",
		"{\"model\":\"a\",\"messages\":[],\"tools\":[],\"tool_choice\":"
		    "\"auto\",\"temperature\":0.2,\"top_p\":1,\"max_tokens\":5,"
		    "\"max_completion_tokens\":5,\"stop\":null,\"seed\":1,"
		    "\"response_format\":{\"type\":\"text\"},\"parallel_tool_calls\":"
		    "false,\"frequency_penalty\":0,\"presence_penalty\":0,"
		    "\"user\":\"u\",\"stream\":null,\"n\":null}",
	};
	static const char *const refused[][2] = {
		{ "{\"model\":\"x\",\"Model\":\"gpt-4.5\",\"Stream\":true,"
		    "\"N\":5}", "\"Model\"" },
		{ "{\"messages\":[],\"STREAM\":true}", "\"STREAM\"" },
		{ "{\"model\\u0000\":\"big\",\"messages\":[]}", "NUL or non-ASCII" },
		{ "{\"\\u017ftream\":true,\"messages\":[]}", "NUL or non-ASCII" },
		{ "{\"mod\u00e9l\":1,\"messages\":[]}", "NUL or non-ASCII" },
		{ "{\"models\":[\"o1-pro\"],\"messages\":[]}", "\"models\"" },
		{ "{\"messages\":[],\"provider\":{\"order\":[\"x\"]}}",
		    "\"provider\"" },
		{ "{\"messages\":[],\"service_tier\":\"priority\"}",
		    "\"service_tier\"" },
		{ "{\"messages\":[],\"store\":true}", "\"store\"" },
		{ "{\"model\":1,\"model\":2}", "twice" },
		{ "{\"messages\":[],\"model\":\"a\",\"model\":{\"x\":[1]}}",
		    "twice" },
		{ "{\"messages\":[],\"messages\":[]}", "twice" },
		{ "{\"model\":\"a\",\"mo\\u0064el\":\"b\"}", "twice" },
		{ "{\"stream\":true,\"messages\":[]}", "stream" },
		{ "{\"str\\u0065am\":1,\"messages\":[]}", "stream" },
		{ "{\"n\":2,\"messages\":[]}", "\"n\"" },
		{ "[1,2]", "JSON object" },
		{ "{\"messages\":[]} x", "JSON object" },
		{ "{\"messages\":\"unterminated}", "JSON object" },
	};
	char path[128], err[256];
	struct relay *r = start_srv("pin.sock", path);
	struct http_answer out;

	(void)state;
	srv_tmpl = "{\"choices\":[]}";
	for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++) {
		cJSON *j, *it;
		int models = 0;

		free(srv_req);
		srv_req = NULL;
		err[0] = '\0';
		if (call(path, pinned[i], &out, err, sizeof err) != 200)
			fail_msg("%s: %s", pinned[i], err);
		free(out.buf);
		assert_non_null(srv_req);
		j = cJSON_Parse(srv_req);
		if (!cJSON_IsObject(j))
			fail_msg("%s: the server got %s", pinned[i], srv_req);
		cJSON_ArrayForEach(it, j) {
			if (strcmp(it->string, "model") != 0)
				continue;
			models++;
			if (!cJSON_IsString(it) ||
			    strcmp(it->valuestring, "pinned-1") != 0)
				fail_msg("%s: the server got %s", pinned[i],
				    srv_req);
		}
		if (models == 0)
			fail_msg("%s: no model in %s", pinned[i], srv_req);
		cJSON_Delete(j);
	}
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		long st;

		free(srv_req);
		srv_req = NULL;
		err[0] = '\0';
		st = call(path, refused[i][0], &out, err, sizeof err);
		if (st != 400 || strstr(err, refused[i][1]) == NULL ||
		    srv_req != NULL)
			fail_msg("%s: status %ld, err %s, server %s",
			    refused[i][0], st, err, srv_req ? srv_req : "-");
		free(out.buf);
	}
	/* 1 MiB of "model":0 members is refused, not pinned copy by copy
	 * (each one 26 times longer once pinned to a long name) */
	size_t bl = 1u << 20, o = 1;
	char *big = xmalloc(bl + 16);
	long st;

	big[0] = '{';
	while (o + 10 < bl)
		o += (size_t)snprintf(big + o, bl + 16 - o, "\"model\":0,");
	big[o - 1] = '}';
	big[o] = '\0';
	free(srv_req);
	srv_req = NULL;
	err[0] = '\0';
	st = call(path, big, &out, err, sizeof err);
	if (st != 400 || strstr(err, "twice") == NULL || srv_req != NULL)
		fail_msg("repeated model: status %ld, err %s", st, err);
	free(out.buf);
	free(big);
	relay_stop(r);
}

struct trickle {
	int fd;
	int every_ms;
	int sent;
};

/* Send an ARQ1 frame announcing 100 bytes, then one byte every every_ms
 * until the relay hangs up (or all 100 went). */
static void *
trickle_main(void *arg)
{
	struct trickle *t = arg;

	if (send(t->fd, "ARQ1\0\0\0\x64", 8, MSG_NOSIGNAL) != 8)
		return NULL;
	for (t->sent = 0; t->sent < 100; t->sent++) {
		struct timespec ts = { t->every_ms / 1000,
		    (t->every_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		if (send(t->fd, "{", 1, MSG_NOSIGNAL) != 1)
			break;
	}
	return NULL;
}

/* A client trickling its request frame (a byte every 300 ms: each read
 * is quick, the frame never ends): relay_stop returns within 2 s. */
static void
test_relay_stop_trickle(void **state)
{
	char path[128];
	struct relay *r = start("trickle.sock", 0, path);
	struct trickle t = { .every_ms = 300 };
	struct timespec half = { 0, 500000000L };
	pthread_t th;
	uint64_t t0;

	(void)state;
	t.fd = dial(path);
	assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
	nanosleep(&half, NULL);
	t0 = util_mono_ns();
	relay_stop(r);
	if (util_mono_ns() - t0 > 2000000000ull)
		fail_msg("relay_stop took %.1f s", (util_mono_ns() - t0) / 1e9);
	pthread_join(th, NULL);
	close(t.fd);
}

/* relay_stop on a thread of its own. */
static void *
stop_main(void *arg)
{
	relay_stop(arg);
	return NULL;
}

/* A call in flight to a model that never answers (a port that listens
 * and never accepts): relay_stop aborts it, and the gateway still gets
 * the relay's answer frame, a 502 "the relay stopped", within 2 s. */
static void
test_relay_stop_answer(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	struct errbuf e = { 0 };
	char url[96], path[128], meta[4200];
	struct relay_config c = { .connect_timeout_ms = 1000, .timeout_s = 20,
	    .retries = 0, .owner_uid = -1, .owner_gid = -1 };
	struct timespec half = { 0, 500000000L };
	struct relay *r;
	pthread_t th;
	uint64_t t0;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd;

	(void)state;
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions",
	    ntohs(sa.sin_port));
	c.url = url;
	snprintf(path, sizeof path, "%s/stopans.sock", dir);
	c.sock_path = path;
	r = relay_start(&c, &e);
	if (r == NULL)
		fail_msg("relay_start: %s", e.msg);
	fd = dial(path);
	assert_int_equal(write(fd, "ARQ1\0\0\0\x02{}", 10), 10);
	nanosleep(&half, NULL);             /* the call is in libcurl */
	t0 = util_mono_ns();
	assert_int_equal(pthread_create(&th, NULL, stop_main, r), 0);
	read_meta(fd, meta, sizeof meta);
	if (util_mono_ns() - t0 > 2000000000ull || strstr(meta,
	    "\"status\":502") == NULL || strstr(meta, "the relay stopped") ==
	    NULL)
		fail_msg("after %.1f s: %s", (util_mono_ns() - t0) / 1e9, meta);
	pthread_join(th, NULL);
	close(fd);
	close(lfd);
}

/* The whole request frame has 10 s: a client sending a byte a second
 * is cut then (an error answer or a hang-up), not 100 s later. */
static void
test_relay_frame_deadline(void **state)
{
	char path[128];
	struct relay *r = start("slow.sock", 0, path);
	struct trickle t = { .every_ms = 1000 };
	pthread_t th;
	uint64_t t0 = util_mono_ns();

	(void)state;
	t.fd = dial(path);
	assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
	pthread_join(th, NULL);
	if (util_mono_ns() - t0 > 14000000000ull || t.sent >= 100)
		fail_msg("the relay took %d bytes over %.1f s", t.sent,
		    (util_mono_ns() - t0) / 1e9);
	close(t.fd);
	relay_stop(r);
}

/* Two CAs ("sys" and "own"), a server certificate for 127.0.0.1 from
 * each, the sys CA as a hashed CA folder (store/), and a TLS server of
 * each on 127.0.0.1 answering any POST with {"choices":[]} (its port in
 * tls/<ca>.port).  The shell's exit status. */
static const char tls_setup[] =
    "set -e; cd \"$1\"; mkdir -p tls/store; cd tls\n"
    "for ca in sys own; do\n"
    "  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=$ca-ca"
    " -keyout $ca-ca.key -out $ca-ca.pem 2>/dev/null\n"
    "  openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1"
    " -keyout $ca.key -out $ca.csr 2>/dev/null\n"
    "  printf 'subjectAltName=IP:127.0.0.1\\n' >ext\n"
    "  openssl x509 -req -in $ca.csr -CA $ca-ca.pem -CAkey $ca-ca.key"
    " -CAcreateserial -days 2 -extfile ext -out $ca.pem 2>/dev/null\n"
    "done\n"
    "cp sys-ca.pem store/ca-certificates.crt\n"
    "openssl rehash store\n"
    "for ca in sys own; do\n"
    "python3 - $ca <<'EOF' >/dev/null 2>&1 &\n"
    "import http.server, os, ssl, sys\n"
    "ca = sys.argv[1]\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def log_message(self, *a): pass\n"
    "    def do_POST(self):\n"
    "        self.rfile.read(int(self.headers.get('Content-Length', '0')))\n"
    "        b = b'{\"choices\":[]}'\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Length', str(len(b)))\n"
    "        self.end_headers(); self.wfile.write(b)\n"
    "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
    "c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
    "c.load_cert_chain(ca + '.pem', ca + '.key')\n"
    "s.socket = c.wrap_socket(s.socket, server_side=True)\n"
    "open(ca + '.port.tmp', 'w').write(str(s.server_address[1]))\n"
    "os.rename(ca + '.port.tmp', ca + '.port')\n"
    "open(ca + '.pid', 'w').write(str(os.getpid()))\n"
    "s.serve_forever()\n"
    "EOF\n"
    "done\n"
    "i=0; while [ ! -s sys.port ] || [ ! -s own.port ]; do\n"
    "  i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.1; done\n";

/* The port in dir/tls/<ca>.port. */
static int
tls_port(const char *ca)
{
	char p[128];
	FILE *f;
	int port = 0;

	snprintf(p, sizeof p, "%s/tls/%s.port", dir, ca);
	f = fopen(p, "r");
	if (f != NULL) {
		if (fscanf(f, "%d", &port) != 1)
			port = 0;
		fclose(f);
	}
	return port;
}

/* In the child: one call to the ca server through a relay with ca_file
 * (or none); the status. */
static long
tls_call(const char *ca, const char *ca_file, int n)
{
	struct errbuf e = { 0 };
	char url[96], path[128], err[256] = "";
	struct relay_config c = { .key = "sk-tls", .connect_timeout_ms = 2000,
	    .timeout_s = 5, .retries = 0, .owner_uid = -1, .owner_gid = -1,
	    .ca_file = ca_file };
	struct http_answer out;
	struct relay *r;
	long st;

	snprintf(url, sizeof url, "https://127.0.0.1:%d/v1/chat/completions",
	    tls_port(ca));
	snprintf(path, sizeof path, "%s/tls%d.sock", dir, n);
	c.url = url;
	c.sock_path = path;
	r = relay_start(&c, &e);
	if (r == NULL)
		return -1;
	st = call(path, "{\"messages\":[]}", &out, err, sizeof err);
	fprintf(stderr, "  %s server, ca_file %s: %ld %s\n", ca,
	    ca_file ? "own-ca.pem" : "(none)", st, err);
	free(out.buf);
	relay_stop(r);
	return st;
}

/* model.ca_file replaces the system trust.  In a mount namespace of its
 * own the child sees a "system" store (/etc/ssl/certs: bundle and hashed
 * folder) holding only the sys CA: without ca_file the sys server works
 * and the own one fails; with ca_file = the own CA the own server works
 * and the sys server (trusted by the system store only) fails. */
static void
test_relay_ca_file_replaces(void **state)
{
	char cmd[256], *sh = xasprintf("%s", tls_setup);
	pid_t pid;
	int ws;

	(void)state;
	if (geteuid() != 0 || system("command -v openssl python3 unshare "
	    ">/dev/null") != 0) {
		free(sh);
		skip();   /* a private mount of /etc/ssl/certs needs root */
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", sh, "sh", dir, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	free(sh);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char store[128], own[128];
		int bad = 0;

		snprintf(store, sizeof store, "%s/tls/store", dir);
		snprintf(own, sizeof own, "%s/tls/own-ca.pem", dir);
		if (unshare(CLONE_NEWNS) == -1 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
		    mount(store, "/etc/ssl/certs", NULL, MS_BIND, NULL) == -1) {
			perror("mount namespace");
			_exit(10);
		}
		if (tls_call("sys", NULL, 1) != 200)
			bad |= 1;
		if (tls_call("own", NULL, 2) == 200)
			bad |= 2;
		if (tls_call("own", own, 3) != 200)
			bad |= 4;
		if (tls_call("sys", own, 4) == 200)
			bad |= 8;
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	snprintf(cmd, sizeof cmd, "kill $(cat %s/tls/sys.pid) "
	    "$(cat %s/tls/own.pid)", dir, dir);
	(void)system(cmd);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		fail_msg("TLS trust: child status %d (1: no system trust, 2: own "
		    "trusted without ca_file, 4: ca_file not used, 8: the system "
		    "store still trusted beside ca_file)", WIFEXITED(ws) ?
		    WEXITSTATUS(ws) : -1);
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

/* Poyo's post to a gateway that accepts and never answers: one request,
 * given up after its timeout, never posted again (a re-post was a second
 * upstream call while the first still ran). */
static void
test_agent_post_timeout(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), conns = 0, held[16];
	char url[96], err[256] = "";
	struct http_answer out = { .max = 1024 };
	uint64_t t0;
	long st;
	pid_t pid;
	int pfd[2];

	(void)state;
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 16), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions",
	    ntohs(sa.sin_port));
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		t0 = util_mono_ns();
		st = agent_post(url, "k", "{}", 1, &out, err, sizeof err);
		dprintf(pfd[1], "%ld %.1f %s\n", st, (util_mono_ns() - t0) / 1e9,
		    err);
		_exit(0);
	}
	close(pfd[1]);
	/* count the connections for 6 s (the old loop re-posted each 2 s) */
	t0 = util_mono_ns();
	while (util_mono_ns() - t0 < 6000000000ull) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 100) == 1 && conns < 16)
			held[conns++] = accept(lfd, NULL, NULL);
	}
	char res[400] = "";
	ssize_t n = read(pfd[0], res, sizeof res - 1);

	res[n > 0 ? n : 0] = '\0';
	waitpid(pid, NULL, 0);
	for (int i = 0; i < conns; i++)
		close(held[i]);
	close(lfd);
	close(pfd[0]);
	if (conns != 1 || strncmp(res, "0 ", 2) != 0)
		fail_msg("%d connection(s); agent_post: %s", conns, res);
}

/* The gateway takes every RELAY_TIMEOUT_S the policy ranges can give
 * (relay bound + 5 s) as it is; a bad one is refused, never replaced. */
static void
test_gateway_relay_timeout(void **state)
{
	struct policy p = { .model_timeout_s = 600,
	    .model_connect_timeout_ms = 60000, .model_retries = 10 };
	char v[32];

	(void)state;
	snprintf(v, sizeof v, "%d", relay_call_bound_s(&p) + 5);
	assert_int_equal(gateway_relay_timeout(v), relay_call_bound_s(&p) + 5);
	assert_int_equal(gateway_relay_timeout("1"), 1);
	assert_int_equal(gateway_relay_timeout("0"), -1);
	assert_int_equal(gateway_relay_timeout("12x"), -1);
	assert_int_equal(gateway_relay_timeout(""), -1);
	assert_int_equal(gateway_relay_timeout("99999999999"), -1);
}

/* Poyo's request at the largest context budget fits the gateway's body
 * bound (HTTP_BODY_MAX) with its tools and model. */
static void
test_agent_request_bound(void **state)
{
	cJSON *a = cJSON_CreateArray(), *tools = agent_tools_json();
	char *body;
	int cut = 0;

	(void)state;
	cJSON_AddItemToArray(a, msg("system", 100));
	cJSON_AddItemToArray(a, msg("user", 100));
	/* small turns: the trimmed history ends within bytes of the budget */
	for (int i = 0; i < 8000; i++) {
		cJSON_AddItemToArray(a, msg("assistant", 20));
		cJSON_AddItemToArray(a, msg("tool", 100));
	}
	body = agent_request(a, tools, "a-model-name", 1048576, &cut);
	assert_true(cut > 0);
	/* within the bound, and the history kept up to it (not all dropped) */
	if (strlen(body) > HTTP_BODY_MAX ||
	    strlen(body) < HTTP_BODY_MAX - 16384)
		fail_msg("the request is %zu bytes", strlen(body));
	free(body);
	/* under the budget nothing is dropped */
	body = agent_request(a, tools, "a-model-name", 1048576, &cut);
	assert_int_equal(cut, 0);
	free(body);
	cJSON_Delete(a);
	cJSON_Delete(tools);
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
		cmocka_unit_test(test_relay_key_echo),
		cmocka_unit_test(test_relay_big_answer),
		cmocka_unit_test(test_relay_pin_model),
		cmocka_unit_test(test_relay_stop_trickle),
		cmocka_unit_test(test_relay_stop_answer),
		cmocka_unit_test(test_relay_frame_deadline),
		cmocka_unit_test(test_relay_ca_file_replaces),
		cmocka_unit_test(test_agent_post_timeout),
		cmocka_unit_test(test_gateway_relay_timeout),
		cmocka_unit_test(test_agent_request_bound),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
