/*
 * test_lever.c - the pure parts of the lever layer: the HTTP status-line
 * parser and the gateway client's reading of answers, external-lever
 * output parsing (garbage, oversized), cgroup path
 * parsing for v1 and v2, mountinfo lookup, the freezer state parser, the
 * lever table, and the real-time scope of the kill path (raised, bounded,
 * one slot per spare CPU, restored, refused without the right).
 */
#include "internal.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static void
test_http_status(void **state)
{
	const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
	char big[600];

	(void)state;
	assert_int_equal(gwctl_http_status(ok, strlen(ok)), 200);
	assert_int_equal(gwctl_http_status("HTTP/1.0 403 Forbidden\r\n", 24),
	    403);
	assert_int_equal(gwctl_http_status("HTTP/1.1 503\r\n", 14), 503);
	/* incomplete: need more */
	assert_int_equal(gwctl_http_status("HTTP/1.1 20", 11), 0);
	assert_int_equal(gwctl_http_status("HTTP/1.1 200 OK\r", 16), 0);
	assert_int_equal(gwctl_http_status("", 0), 0);
	/* malformed */
	assert_int_equal(gwctl_http_status("HTTP/2 200 OK\r\n", 15), -1);
	assert_int_equal(gwctl_http_status("HTTP/1.1 2x0 OK\r\n", 17), -1);
	assert_int_equal(gwctl_http_status("HTTP/1.1 099 X\r\n", 16), -1);
	assert_int_equal(gwctl_http_status("HTTP/1.1 200OK\r\n", 16), -1);
	assert_int_equal(gwctl_http_status("\r\n", 2), -1);
	assert_int_equal(gwctl_http_status("SSH-2.0-x\r\n", 11), -1);
	/* no CRLF within the bound */
	memset(big, 'A', sizeof big);
	memcpy(big, "HTTP/1.1 200 ", 13);
	assert_int_equal(gwctl_http_status(big, sizeof big), -1);
	assert_int_equal(gwctl_http_status(big, 100), 0);
}

static void
test_ext_parse_ok(void **state)
{
	struct errbuf e = { 0 };
	char detail[64];
	bool ok = false;
	const char a[] = "{\"ok\":true,\"detail\":\"paused\"}\n";
	const char b[] = "{\"ok\":false}";
	const char c[] = "{\"detail\":\"x\\u001b[2Jy\",\"ok\":true,\"more\":1}\r\n\n";

	(void)state;
	assert_int_equal(lever_ext_parse(a, strlen(a), &ok, detail,
	    sizeof detail, &e), 0);
	assert_true(ok);
	assert_string_equal(detail, "paused");
	assert_int_equal(lever_ext_parse(b, strlen(b), &ok, detail,
	    sizeof detail, &e), 0);
	assert_false(ok);
	assert_string_equal(detail, "");
	/* terminal escapes in the detail are made inert */
	assert_int_equal(lever_ext_parse(c, strlen(c), &ok, detail,
	    sizeof detail, &e), 0);
	assert_true(ok);
	assert_null(strchr(detail, 0x1b));
	assert_non_null(strchr(detail, 'y'));
}

static void
test_ext_parse_garbage(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"not json",
		"[true]",
		"{\"ok\":\"yes\"}",
		"{\"detail\":\"no ok\"}",
		"{\"ok\":true,\"detail\":5}",
		"{\"ok\":true}\n{\"ok\":true}\n",
		"{\"ok\":true}\ntrailing",
		"{\"ok\":true",
		"{\"ok\":1}",
	};
	struct errbuf e = { 0 };
	char detail[64];
	bool ok;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ok = true;
		memset(&e, 0, sizeof e);
		if (lever_ext_parse(bad[i], strlen(bad[i]), &ok, detail,
		    sizeof detail, &e) != -1)
			fail_msg("accepted garbage #%zu: %s", i, bad[i]);
		assert_non_null(strstr(e.msg, "external lever output"));
	}
	/* an embedded NUL */
	assert_int_equal(lever_ext_parse("{\"ok\":true}\0x", 13, &ok, detail,
	    sizeof detail, &e), -1);
}

static void
test_ext_parse_oversized(void **state)
{
	size_t n = LEVER_EXT_OUT_MAX + 1;
	char *big = xmalloc(n + 1);
	struct errbuf e = { 0 };
	char detail[32];
	bool ok;
	int len;

	(void)state;
	/* A valid object, just too long. */
	memset(big, ' ', n);
	len = snprintf(big, n, "{\"ok\":true,\"detail\":\"");
	memset(big + len, 'x', n - (size_t)len - 3);
	memcpy(big + n - 3, "\"}\n", 3);
	big[n] = '\0';
	assert_int_equal(lever_ext_parse(big, n, &ok, detail, sizeof detail,
	    &e), -1);
	assert_non_null(strstr(e.msg, "more than"));
	/* At the bound it is accepted, and the detail is truncated. */
	memcpy(big + n - 4, "\"}\n", 3);
	assert_int_equal(lever_ext_parse(big, n - 1, &ok, detail,
	    sizeof detail, &e), 0);
	assert_true(ok);
	assert_true(strlen(detail) < sizeof detail);
	free(big);
}

static void
test_cgroup_v1(void **state)
{
	static const char text[] =
	    "12:hugetlb:/docker/abc\n"
	    "9:name=systemd:/docker/abc\n"
	    "6:freezer:/docker/0123456789abcdef\n"
	    "3:cpu,cpuacct:/docker/abc\n"
	    "0::/system.slice/docker.service\n";
	static const char joined[] = "4:cpuset,freezer:/kubepods/pod1/c2\n";
	struct errbuf e = { 0 };
	char path[256];
	int v = 0;

	(void)state;
	assert_int_equal(lever_cgroup_parse(text, strlen(text), &v, path,
	    sizeof path, &e), 0);
	assert_int_equal(v, 1);
	assert_string_equal(path, "/docker/0123456789abcdef");
	assert_int_equal(lever_cgroup_parse(joined, strlen(joined), &v, path,
	    sizeof path, &e), 0);
	assert_int_equal(v, 1);
	assert_string_equal(path, "/kubepods/pod1/c2");
	/* path too long for the buffer */
	assert_int_equal(lever_cgroup_parse(text, strlen(text), &v, path, 8,
	    &e), -1);
}

static void
test_cgroup_v2(void **state)
{
	static const char text[] =
	    "0::/system.slice/docker-0123abcd.scope\n";
	static const char noeol[] = "0::/docker/ff";
	static const char *const bad[] = {
		"",
		"garbage\n",
		"5:cpu:/docker/x\n",
		"0::relative\n",
		"0::\n",
		"6:freezerx:/x\n",
	};
	struct errbuf e = { 0 };
	char path[256];
	size_t i;
	int v = 0;

	(void)state;
	assert_int_equal(lever_cgroup_parse(text, strlen(text), &v, path,
	    sizeof path, &e), 0);
	assert_int_equal(v, 2);
	assert_string_equal(path, "/system.slice/docker-0123abcd.scope");
	assert_int_equal(lever_cgroup_parse(noeol, strlen(noeol), &v, path,
	    sizeof path, &e), 0);
	assert_string_equal(path, "/docker/ff");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (lever_cgroup_parse(bad[i], strlen(bad[i]), &v, path,
		    sizeof path, &e) != -1)
			fail_msg("accepted bad cgroup file #%zu", i);
}

/* The container's own cgroup: the path cut at the shallowest component
 * naming the id; a path that names it only inside a component, or not at
 * all, is refused. */
static void
test_cgroup_container(void **state)
{
	static const char id[] = "0123456789abcdef";
	static const struct { const char *in, *out; } ok[] = {
		{ "/docker/0123456789abcdef", "/docker/0123456789abcdef" },
		{ "/docker/0123456789abcdef/x", "/docker/0123456789abcdef" },
		{ "/docker/0123456789abcdef/x/0123456789abcdef",
		    "/docker/0123456789abcdef" },
		{ "/system.slice/docker-0123456789abcdef.scope/init.scope",
		    "/system.slice/docker-0123456789abcdef.scope" },
		{ "/docker/0123456789abcdef//", "/docker/0123456789abcdef" },
		{ "/machine.slice/libpod-0123456789abcdef.scope/container",
		    "/machine.slice/libpod-0123456789abcdef.scope" },
	};
	static const char *const bad[] = {
		"/docker/x0123456789abcdef",          /* inside a component */
		"/docker/0123456789abcdefx/y",
		"/docker/0123456789abcde",
		"/x/0123456789abcdef-docker",
		"/docker/-0123456789abcdef.scope",    /* no prefix */
		"/docker/docker-0123456789abcdef.scopex",
		"/docker/../0123456789abcdef",
		"/docker/./0123456789abcdef",
		"/",
		"",
		"docker/0123456789abcdef",            /* relative */
		"/system.slice/docker.service",
	};
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		if (lever_cgroup_container(ok[i].in, id, out, sizeof out) != 0)
			fail_msg("refused %s", ok[i].in);
		assert_string_equal(out, ok[i].out);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (lever_cgroup_container(bad[i], id, out, sizeof out) != -1)
			fail_msg("accepted %s as %s", bad[i], out);
	/* does not fit */
	assert_int_equal(lever_cgroup_container("/docker/0123456789abcdef",
	    id, out, 24), -1);
	assert_int_equal(lever_cgroup_container("/docker/0123456789abcdef",
	    id, out, 25), 0);
	assert_int_equal(lever_cgroup_container("/docker/x", "", out,
	    sizeof out), -1);
}

static void
test_mountinfo(void **state)
{
	static const char mi[] =
	    "22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw\n"
	    "30 22 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
	    "35 30 0:31 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	    "38 30 0:34 /nested /sys/fs/cgroup/freezer rw,relatime shared:9 - "
	    "cgroup cgroup rw,freezer\n"
	    "40 30 0:36 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
	char mnt[128], root[128];

	(void)state;
	assert_int_equal(lever_mountinfo_cgroup(mi, strlen(mi), 1, mnt,
	    sizeof mnt, root, sizeof root), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/freezer");
	assert_string_equal(root, "/nested");
	assert_int_equal(lever_mountinfo_cgroup(mi, strlen(mi), 2, mnt,
	    sizeof mnt, root, sizeof root), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/unified");
	assert_string_equal(root, "/");
	assert_int_equal(lever_mountinfo_cgroup(mi, 120, 1, mnt, sizeof mnt,
	    root, sizeof root), -1);
	assert_int_equal(lever_mountinfo_cgroup("garbage", 7, 1, mnt,
	    sizeof mnt, root, sizeof root), -1);
	assert_int_equal(lever_mountinfo_cgroup(mi, strlen(mi), 1, mnt, 4,
	    root, sizeof root), -1);
}

static void
test_table(void **state)
{
	static const char *const names[] = { "gateway-deny", "net-disconnect",
	    "pause", "kill", "cgroup-freeze", "link-down" };
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct lever_entry *l = lever_find(names[i]);

		assert_non_null(l);
		assert_string_equal(l->name, names[i]);
		assert_non_null(l->fire);
		assert_non_null(l->verify);
		assert_true(strlen(l->name) < LEVER_NAME_MAX);
	}
	for (i = 0; lever_table[i] != NULL; i++)
		n++;
	assert_int_equal(n, 6);
	assert_false(lever_find("gateway-deny")->cuts_off);
	assert_true(lever_find("cgroup-freeze")->cuts_off);
	/* the levers that hold the agent's processes stopped */
	for (i = 0; lever_table[i] != NULL; i++)
		assert_int_equal(lever_table[i]->freezes,
		    strcmp(lever_table[i]->name, "pause") == 0 ||
		    strcmp(lever_table[i]->name, "cgroup-freeze") == 0);
	assert_string_equal(lever_known_names(), "gateway-deny, "
	    "net-disconnect, pause, kill, cgroup-freeze, link-down, "
	    "external:/abs/path");
	assert_null(lever_find("nope"));
	assert_null(lever_find(NULL));
	assert_null(lever_find("external:"));
	assert_null(lever_find("external:bin/sh"));
	assert_null(lever_find("external:/etc/passwd"));   /* not executable */
	assert_null(lever_find("external:/bin/../bin/sh"));
	/* An absolute executable is a lever, interned once. */
	assert_non_null(lever_find("external:/bin/true"));
	assert_ptr_equal(lever_find("external:/bin/true"),
	    lever_find("external:/bin/true"));
	assert_string_equal(lever_find("external:/bin/true")->arg, "/bin/true");
	assert_true(lever_find("external:/bin/true")->cuts_off);
}

/* Serve one connection on a fresh unix socket with answer (a child
 * process: reads the request head, writes answer, closes).  The socket's
 * path goes to path; returns the child's pid. */
static pid_t
serve_once(char path[108], const char *answer)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static int n;
	int lfd;
	pid_t pid;

	snprintf(path, 108, "/tmp/ares-test-gwctl.%ld.%d", (long)getpid(),
	    n++);
	unlink(path);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char req[4096];
		size_t have = 0;
		int fd = accept(lfd, NULL, NULL);

		while (fd >= 0 && have < sizeof req - 1) {
			ssize_t r = read(fd, req + have, sizeof req - 1 - have);

			if (r <= 0)
				break;
			have += (size_t)r;
			req[have] = '\0';
			if (strstr(req, "\r\n\r\n") != NULL)
				break;
		}
		if (fd >= 0 && write(fd, answer, strlen(answer)) < 0)
			_exit(1);
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* gwctl_call reading a whole answer: the body by its Content-Length,
 * bounded; a body cut short, a malformed length, an answer without the
 * end of its headers, a status line only, a silent socket: errors. */
static void
test_gwctl_answer(void **state)
{
	static const struct {
		const char *answer;
		int status;
		const char *body;     /* NULL: an error containing err */
		const char *err;
	} cases[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		    "Content-Length: 2\r\nConnection: close\r\n\r\n{}", 200, "{}",
		    NULL },
		{ "HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nabcdef",
		    404, "abc", NULL },
		{ "HTTP/1.1 200 OK\r\n\r\nto the end", 200, "to the end", NULL },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", -1, NULL,
		    "before the end of the body" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\n{}", -1, NULL,
		    "malformed Content-Length" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", -1, NULL,
		    "end of the headers" },
		{ "SSH-2.0-x\r\n\r\n", -1, NULL, "malformed status line" },
		{ "", -1, NULL, "before a status line" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n"
		    "0123456789012345678901234567890123456789", -1, NULL,
		    "body larger than 32 bytes" },
	};
	size_t i, len;
	char *req = gwctl_request("GET", "/control/changes", NULL, NULL, &len);

	(void)state;
	assert_string_equal(req, "GET /control/changes HTTP/1.1\r\nHost: "
	    "gateway\r\nConnection: close\r\n\r\n");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[108], *body = (char *)"unset";
		struct errbuf e = { 0 };
		pid_t pid = serve_once(path, cases[i].answer);
		int st = gwctl_call(path, req, len, "test", 2000, &body, 32, &e);

		waitpid(pid, NULL, 0);
		unlink(path);
		assert_int_equal(st, cases[i].status);
		if (cases[i].body != NULL) {
			assert_non_null(body);
			assert_string_equal(body, cases[i].body);
		} else {
			assert_null(body);
			if (strstr(e.msg, cases[i].err) == NULL)
				fail_msg("case %zu: \"%s\" lacks \"%s\"", i, e.msg,
				    cases[i].err);
		}
		free(body);
	}
	free(req);
	/* nobody listening: the connect fails and names the path */
	{
		struct errbuf e = { 0 };
		char *body = NULL;

		req = gwctl_request("POST", "/control/deny", "k", "{}", &len);
		assert_string_equal(req, "POST /control/deny HTTP/1.1\r\nHost: "
		    "gateway\r\nAuthorization: Bearer k\r\nContent-Type: "
		    "application/json\r\nContent-Length: 2\r\nConnection: "
		    "close\r\n\r\n{}");
		assert_int_equal(gwctl_call("/nonexistent/gw.sock", req, len,
		    "deny", 100, &body, 32, &e), -1);
		assert_non_null(strstr(e.msg, "/nonexistent/gw.sock: connect"));
		free(req);
	}
}

/* The exec's argv of gwctl_exec_auth: the bearer as the option's value
 * in first place only; a method that is not capital letters (an option
 * in disguise) or a bearer with a blank or a line break: refused. */
static void
test_gwctl_exec_argv(void **state)
{
	const char *argv[GWCTL_EXEC_ARGV];
	struct errbuf e = { 0 };
	char big[GWCTL_BEARER_MAX + 2];

	(void)state;
	assert_int_equal(gwctl_exec_argv("POST", "/v1/chat/completions",
	    "sk-a", "{}", argv, &e), 0);
	assert_string_equal(argv[0], "/bin/ares-lab");
	assert_string_equal(argv[1], "gwctl");
	assert_string_equal(argv[2], "--bearer");
	assert_string_equal(argv[3], "sk-a");
	assert_string_equal(argv[4], "POST");
	assert_string_equal(argv[5], "/v1/chat/completions");
	assert_string_equal(argv[6], "{}");
	assert_null(argv[7]);
	assert_int_equal(gwctl_exec_argv("GET", "/control/health", NULL, NULL,
	    argv, &e), 0);
	assert_string_equal(argv[2], "GET");
	assert_string_equal(argv[3], "/control/health");
	assert_null(argv[4]);
	/* a value starting with dashes stays a value */
	assert_int_equal(gwctl_exec_argv("POST", "/x", "--bearer", NULL, argv,
	    &e), 0);
	assert_string_equal(argv[2], "--bearer");
	assert_string_equal(argv[3], "--bearer");
	assert_string_equal(argv[4], "POST");
	assert_int_equal(gwctl_exec_argv("--bearer", "/x", NULL, NULL, argv,
	    &e), -1);
	assert_non_null(strstr(e.msg, "capital letters"));
	assert_int_equal(gwctl_exec_argv("post", "/x", NULL, NULL, argv, &e),
	    -1);
	assert_int_equal(gwctl_exec_argv("", "/x", NULL, NULL, argv, &e), -1);
	assert_int_equal(gwctl_exec_argv("POSTPOSTPOSTPOSTP", "/x", NULL, NULL,
	    argv, &e), -1);
	assert_int_equal(gwctl_exec_argv("POST", "/x", "k\r\nX-A: b", NULL,
	    argv, &e), -1);
	assert_non_null(strstr(e.msg, "bearer"));
	assert_int_equal(gwctl_exec_argv("POST", "/x", "a b", NULL, argv, &e),
	    -1);
	assert_int_equal(gwctl_exec_argv("POST", "/x", "", NULL, argv, &e), -1);
	memset(big, 'k', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(gwctl_exec_argv("POST", "/x", big, NULL, argv, &e),
	    -1);
	big[GWCTL_BEARER_MAX] = '\0';
	assert_int_equal(gwctl_exec_argv("POST", "/x", big, NULL, argv, &e), 0);
}

/* lab_gateway_call on a local lab: one request on lab->ctl_path, the
 * status and the body back; a lab without a socket: an error. */
static void
test_lab_gateway_call_local(void **state)
{
	struct lab lab = { 0 };
	struct errbuf e = { 0 };
	char path[108], *body = NULL;
	pid_t pid;
	int st;

	(void)state;
	pid = serve_once(path, "HTTP/1.1 403 Forbidden\r\nContent-Length: 6"
	    "\r\n\r\ndenied");
	lab.ctl_path = path;
	st = lab_gateway_call(NULL, &lab, "POST", "/v1/chat/completions",
	    "sk-agent", "{}", 2000, &body, &e);
	waitpid(pid, NULL, 0);
	unlink(path);
	assert_int_equal(st, 403);
	assert_non_null(body);
	assert_string_equal(body, "denied");
	free(body);
	pid = serve_once(path, "HTTP/1.1 200 OK\r\n\r\n");
	st = lab_gateway_call(NULL, &lab, "GET", "/control/health", NULL, NULL,
	    2000, NULL, &e);
	waitpid(pid, NULL, 0);
	unlink(path);
	assert_int_equal(st, 200);
	lab.ctl_path = NULL;
	assert_int_equal(lab_gateway_call(NULL, &lab, "GET", "/control/health",
	    NULL, NULL, 2000, NULL, &e), -1);
	lab.remote = true;   /* remote without a gateway: refused, no exec */
	assert_int_equal(lab_gateway_call(NULL, &lab, "GET", "/control/health",
	    NULL, NULL, 2000, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "no gateway"));
}

/* A control socket that is alive but never accepts, its queue full (a
 * stuck gateway): gwctl_call must give up within its time limit, not block
 * in connect. */
static void
test_gwctl_connect_bounded(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ares-gwctl-XXXXXX", path[64];
	struct errbuf e = { 0 };
	int lfd, filler;
	uint64_t t0;
	size_t len;
	char *req;
	int st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/ctl.sock", dir);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 0), 0);           /* never accepts */
	filler = socket(AF_UNIX, SOCK_STREAM, 0);       /* fills the queue */
	assert_int_equal(connect(filler, (struct sockaddr *)&sa, sizeof sa), 0);
	req = gwctl_request("GET", "/control/health", NULL, NULL, &len);
	t0 = util_mono_ns();
	st = gwctl_call(path, req, len, "health", 500, NULL, 0, &e);
	assert_int_equal(st, -1);
	assert_non_null(strstr(e.msg, "connect"));
	/* bounded: well under the 30 s a blocked test would take to be
	 * killed (the bound itself is GWCTL_CONNECT_MS) */
	assert_true(util_mono_ns() - t0 < 10ull * 1000000000ull);
	free(req);
	close(filler);
	close(lfd);
	unlink(path);
	rmdir(dir);
}

/*
 * The in-gateway client (`ares-lab gwctl`, what the deny runs through the
 * engine's exec on a remote lab) against a control listener that never
 * accepts and whose queue is full: it must give up (exit non-zero,
 * "connect") instead of blocking in connect() for ever.  The binary is
 * the build's ares-lab ($ARES_BUILDDIR, else .).
 */
static void
test_ctlcli_connect_bounded(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ares-ctlcli-XXXXXX", path[64], err[512] = "";
	const char *bd = getenv("ARES_BUILDDIR");
	char *bin = xasprintf("%s/ares-lab", bd != NULL ? bd : ".");
	char *envv = NULL;
	int lfd, filler, pfd[2], status = 0, i;
	ssize_t n;
	pid_t pid;

	(void)state;
	if (access(bin, X_OK) != 0) {
		free(bin);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/ctl.sock", dir);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 0), 0);           /* never accepts */
	filler = socket(AF_UNIX, SOCK_STREAM, 0);       /* fills the queue */
	assert_int_equal(connect(filler, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(pipe(pfd), 0);
	envv = xasprintf("GATEWAY_CONTROL=%s", path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "ares-lab", "gwctl", "GET", "/control/health",
		    NULL };
		char *envp[] = { envv, NULL };

		dup2(pfd[1], 2);
		execve(bin, argv, envp);
		_exit(99);
	}
	close(pfd[1]);
	/* 20 s: far past its 2 s bound, well before a blocked test is
	 * killed; a client still blocked then fails the test */
	for (i = 0; i < 400; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(50000);
	}
	if (i == 400) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		fail_msg("ares-lab gwctl still blocked after 20 s on a full "
		    "control queue");
	}
	n = read(pfd[0], err, sizeof err - 1);
	err[n > 0 ? n : 0] = '\0';
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
	    WEXITSTATUS(status) != 99);
	if (strstr(err, "connect") == NULL)
		fail_msg("stderr lacks \"connect\": %s", err);
	close(pfd[0]);
	close(filler);
	close(lfd);
	unlink(path);
	rmdir(dir);
	free(envv);
	free(bin);
}

static void
test_frozen_parse(void **state)
{
	static const char ev1[] = "populated 1\nfrozen 1\n";
	static const char ev0[] = "populated 1\nfrozen 0\n";

	(void)state;
	assert_int_equal(lever_frozen_parse("FROZEN\n", 7, 1), 1);
	assert_int_equal(lever_frozen_parse("FROZEN", 6, 1), 1);
	assert_int_equal(lever_frozen_parse("THAWED\n", 7, 1), 0);
	assert_int_equal(lever_frozen_parse("FREEZING\n", 9, 1), 0);
	assert_int_equal(lever_frozen_parse("FROZENX\n", 8, 1), -1);
	assert_int_equal(lever_frozen_parse("frozen\n", 7, 1), -1);
	assert_int_equal(lever_frozen_parse("", 0, 1), -1);
	assert_int_equal(lever_frozen_parse(ev1, strlen(ev1), 2), 1);
	assert_int_equal(lever_frozen_parse(ev0, strlen(ev0), 2), 0);
	assert_int_equal(lever_frozen_parse("frozen 1", 8, 2), 1);
	/* cannot tell: no line, two lines, a bad value, a longer word */
	assert_int_equal(lever_frozen_parse("populated 1\n", 12, 2), -1);
	assert_int_equal(lever_frozen_parse("frozen 0\nfrozen 1\n", 18, 2), -1);
	assert_int_equal(lever_frozen_parse("frozen 2\n", 9, 2), -1);
	assert_int_equal(lever_frozen_parse("frozen 10\n", 10, 2), -1);
	assert_int_equal(lever_frozen_parse("xfrozen 1\n", 10, 2), -1);
	assert_int_equal(lever_frozen_parse("", 0, 2), -1);
	/* the v1 word is no v2 answer, and no version is no answer */
	assert_int_equal(lever_frozen_parse("FROZEN\n", 7, 2), -1);
	assert_int_equal(lever_frozen_parse(ev1, strlen(ev1), 1), -1);
	assert_int_equal(lever_frozen_parse(ev1, strlen(ev1), 0), -1);
}

/* The calling thread's policy (reset-on-fork flag cleared) and priority. */
static int
cur_policy(int *prio)
{
	struct sched_param sp;

	assert_int_equal(sched_getparam(0, &sp), 0);
	*prio = sp.sched_priority;
	return sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
}

static void *
rt_second(void *arg)
{
	struct lever_rt *rt = arg;

	(void)lever_rt_enter(rt, 1000);
	lever_rt_leave(rt);
	return NULL;
}

/* The RT slots of these tests: a directory of their own, so that a drill
 * running beside them on the machine neither takes nor is refused theirs. */
static char rt_dir[] = "/tmp/ares-test-rt.XXXXXX";

/* Whether a thread of this process is at SCHED_FIFO LEVER_RT_PRIO + 1
 * (the watchdog): rt_priority and policy, fields 40 and 41 of its stat. */
static bool
rt_watchdog_above(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	bool found = false;

	assert_non_null(dir);
	while (!found && (de = readdir(dir)) != NULL) {
		char path[300], buf[1024];
		FILE *f;
		const char *p;
		unsigned prio = 0, pol = 0;
		int field = 3;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/stat",
		    de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(buf, sizeof buf, f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL) {
			/* after "pid (comm) ": field 3 on */
			for (p += 2; *p != '\0' && field < 40; p++)
				if (*p == ' ')
					field++;
			if (sscanf(p, "%u %u", &prio, &pol) == 2 &&
			    pol == SCHED_FIFO && prio == LEVER_RT_PRIO + 1)
				found = true;
		}
		fclose(f);
	}
	closedir(dir);
	return found;
}

/*
 * A fresh process (this test binary again, ARES_TEST_RT_CHILD set, one
 * slot) tries to raise itself: its exit code, 10 granted, 11 refused for
 * want of a free CPU, 12 refused for another reason.
 */
static int
rt_other_process(void)
{
	char *argv[] = { "test_lever", NULL };
	char *env = xasprintf("ARES_TEST_RT_CHILD=%s", rt_dir);
	char *envp[] = { env, NULL };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execve("/proc/self/exe", argv, envp);
		_exit(13);
	}
	free(env);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * The RT scope: raised to SCHED_FIFO only between enter and leave, the
 * policy before restored exactly (policy and priority), children of the
 * raised thread back at SCHED_OTHER, no more holders than slots, the
 * watchdog puts a spinning thread back at its deadline, and the budget
 * drops it at the first check past it.  Without the right (uid
 * nobody, RLIMIT_RTPRIO 0) it is refused with EPERM and nothing changes.
 */
/* rt_spinner: note the thread's policy, spin (never yielding) while it is
 * SCHED_FIFO, at most 3 s, then note the policy and how long it took. */
struct rt_spin {
	int first, last;
	uint64_t ns;
};

static void *
rt_spinner(void *arg)
{
	struct rt_spin *sp = arg;
	uint64_t t0 = util_mono_ns();
	int prio;

	sp->first = cur_policy(&prio);
	while (cur_policy(&prio) == SCHED_FIFO &&
	    util_mono_ns() - t0 < 3000000000ull)
		;
	sp->last = cur_policy(&prio);
	sp->ns = util_mono_ns() - t0;
	return NULL;
}

static void
test_rt_scope(void **state)
{
	struct lever_rt rt, rt2;
	int pol0, prio0, prio;
	pid_t pid;
	int status;

	(void)state;
	assert_non_null(mkdtemp(rt_dir));
	lever_rt_set_dir(rt_dir);
	pol0 = cur_policy(&prio0);
	assert_int_equal(pol0, SCHED_OTHER);

	/* no slot: refused, unchanged */
	lever_rt_set_slots(0);
	assert_int_equal(lever_rt_enter(&rt, 1000), -1);
	assert_non_null(strstr(rt.status, "refused: no free CPU"));
	lever_rt_leave(&rt);
	assert_int_equal(cur_policy(&prio), pol0);

	lever_rt_set_slots(1);
	if (lever_rt_enter(&rt, 1000) == 0) {
		pthread_t t;

		assert_non_null(strstr(rt.status, "granted: SCHED_FIFO"));
		assert_int_equal(cur_policy(&prio), SCHED_FIFO);
		assert_int_equal(prio, LEVER_RT_PRIO);
		assert_true(lever_rt_check(&rt));
		/* a child (an external lever) does not inherit it */
		pid = fork();
		if (pid == 0)
			_exit((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) ==
			    SCHED_OTHER ? 0 : 1);
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		/* the one slot is the machine's: another ares process
		 * (a fresh one, not a fork sharing our state) is refused */
		assert_int_equal(rt_other_process(), 11);
		/* the watchdog sleeps above the lever thread's priority */
		assert_true(rt_watchdog_above());
		/* the one slot is taken: a second thread is refused */
		assert_int_equal(pthread_create(&t, NULL, rt_second, &rt2), 0);
		pthread_join(t, NULL);
		assert_non_null(strstr(rt2.status, "refused: no free CPU"));
		lever_rt_leave(&rt);
		assert_int_equal(cur_policy(&prio), pol0);
		assert_int_equal(prio, prio0);
		lever_rt_leave(&rt);              /* twice: harmless */
		assert_int_equal(cur_policy(&prio), pol0);

		/* a thread that spins at RT and never checks is put back
		 * by the watchdog once its budget is spent */
		assert_int_equal(lever_rt_enter(&rt, 30), 0);
		{
			uint64_t t0 = util_mono_ns();

			while (cur_policy(&prio) == SCHED_FIFO &&
			    util_mono_ns() - t0 < 3000000000ull)
				;
		}
		assert_int_equal(cur_policy(&prio), pol0);
		assert_int_equal(prio, prio0);
		assert_false(lever_rt_check(&rt));
		assert_non_null(strstr(rt.status, "dropped: budget spent "
		    "(watchdog)"));
		lever_rt_leave(&rt);
		assert_int_equal(cur_policy(&prio), pol0);

		/* a helper thread of a raised thread (link-down's namespace
		 * thread) runs at its priority and is put back at its
		 * deadline too, even spinning; one started unraised runs
		 * at the normal policy */
		assert_int_equal(lever_rt_enter(&rt, 30), 0);
		{
			struct rt_spin sp = { 0 };

			assert_int_equal(lever_rt_thread(&t, 0, rt_spinner,
			    &sp), 0);
			pthread_join(t, NULL);
			assert_int_equal(sp.first, SCHED_FIFO);
			assert_int_equal(sp.last, pol0);
			assert_true(sp.ns < 3000000000ull);
		}
		lever_rt_leave(&rt);
		assert_int_equal(cur_policy(&prio), pol0);
		{
			struct rt_spin sp = { 0 };

			assert_int_equal(lever_rt_thread(&t, 0, rt_spinner,
			    &sp), 0);
			pthread_join(t, NULL);
			assert_int_equal(sp.first, pol0);
		}

		/* the slot is free again; a spent budget drops it */
		assert_int_equal(lever_rt_enter(&rt, 0), 0);
		usleep(2000);
		assert_false(lever_rt_check(&rt));
		assert_true(rt.dropped);
		assert_non_null(strstr(rt.status, "dropped"));
		assert_int_equal(cur_policy(&prio), pol0);
		lever_rt_leave(&rt);
		assert_int_equal(cur_policy(&prio), pol0);
	} else {
		/* not permitted here: said so, nothing changed */
		assert_non_null(strstr(rt.status, "refused"));
		assert_int_equal(cur_policy(&prio), pol0);
		assert_int_equal(prio, prio0);
	}

	/* without the right: EPERM, and the thread goes on unchanged */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		struct lever_rt r3;
		int p;

		if (setrlimit(RLIMIT_RTPRIO, &rl) == -1)
			_exit(2);
		if (geteuid() == 0 && (setgid(65534) == -1 ||
		    setuid(65534) == -1))
			_exit(3);
		if (lever_rt_enter(&r3, 1000) != -1 ||
		    strstr(r3.status, "refused: EPERM") == NULL)
			_exit(4);
		lever_rt_leave(&r3);
		_exit(cur_policy(&p) == SCHED_OTHER ? 0 : 5);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	lever_rt_set_slots(-1);
	lever_rt_set_dir(NULL);
	{
		char *p = xasprintf("%s/slot.0", rt_dir);

		(void)unlink(p);
		free(p);
		(void)rmdir(rt_dir);
	}
}

int
main(void)
{
	if (getenv("ARES_TEST_RT_CHILD") != NULL) {
		struct lever_rt rt;
		int rc;

		lever_rt_set_dir(getenv("ARES_TEST_RT_CHILD"));
		lever_rt_set_slots(1);
		rc = lever_rt_enter(&rt, 1000) == 0 ? 10 :
		    strstr(rt.status, "refused: no free CPU") != NULL ? 11 : 12;
		lever_rt_leave(&rt);
		return rc;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_status),
		cmocka_unit_test(test_gwctl_answer),
		cmocka_unit_test(test_gwctl_exec_argv),
		cmocka_unit_test(test_lab_gateway_call_local),
		cmocka_unit_test(test_gwctl_connect_bounded),
		cmocka_unit_test(test_ctlcli_connect_bounded),
		cmocka_unit_test(test_ext_parse_ok),
		cmocka_unit_test(test_ext_parse_garbage),
		cmocka_unit_test(test_ext_parse_oversized),
		cmocka_unit_test(test_cgroup_v1),
		cmocka_unit_test(test_cgroup_v2),
		cmocka_unit_test(test_cgroup_container),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_frozen_parse),
		cmocka_unit_test(test_rt_scope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
