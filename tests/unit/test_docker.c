/*
 * test_docker.c - unit tests of the pure parts of core/docker.c: version
 * negotiation, error extraction, the container create body, inspect
 * helpers, stream demultiplexing, DOCKER_HOST parsing (unix, tcp with TLS
 * or plaintext opt-in, ssh) and the remote-engine refusal.  No engine needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include <signal.h>
#include <stdio.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* ---- versions ---------------------------------------------------- */

static void pick_ok(const char *api, const char *min, const char *want)
{
	char out[16];
	struct errbuf e = {0};
	assert_int_equal(docker_version_pick(api, min, out, &e), 0);
	assert_string_equal(out, want);
	assert_int_equal(e.code, ERRBUF_NONE);
}

static void pick_fail(const char *api, const char *min)
{
	char out[16] = "x";
	struct errbuf e = {0};
	assert_int_equal(docker_version_pick(api, min, out, &e), -1);
	assert_int_equal(e.code, ERRBUF_ENGINE);
	assert_true(e.msg[0] != '\0');
	assert_string_equal(out, "");
}

static void test_version_pick(void **state)
{
	(void)state;
	pick_ok("1.41", "1.12", "1.41");     /* Docker 20.10 */
	pick_ok("1.47", "1.24", "1.47");     /* Docker 27 */
	pick_ok("1.52", "1.44", "1.47");     /* Docker 29: refuses 1.41 */
	pick_ok("1.45", "1.24", "1.45");     /* between: the daemon's max */
	pick_ok("1.47", "1.47", "1.47");
	pick_ok("1.44", NULL, "1.44");       /* no MinAPIVersion advertised */
	pick_ok("1.44", "", "1.44");
	pick_fail("1.40", "1.12");           /* too old */
	pick_fail("1.60", "1.48");           /* daemon_min above our max */
	pick_fail("banana", "1.12");
	pick_fail("1.41", "1.x");
	pick_fail(NULL, "1.12");
	pick_fail("1.41.0", "1.12");
	pick_fail("", "");
	pick_fail("99999.1", "1.12");
}

static void test_version_pick_message(void **state)
{
	char out[16];
	struct errbuf e = {0};
	(void)state;
	assert_int_equal(docker_version_pick("1.52", "1.48", out, &e), -1);
	/* names both ranges */
	assert_non_null(strstr(e.msg, "1.48..1.52"));
	assert_non_null(strstr(e.msg, DOCKER_API_MIN ".." DOCKER_API_MAX));
}

static void test_version_cmp(void **state)
{
	(void)state;
	assert_true(docker_version_cmp("1.9", "1.41") < 0);
	assert_true(docker_version_cmp("1.41", "1.9") > 0);
	assert_true(docker_version_cmp("1.41", "1.41") == 0);
	assert_true(docker_version_cmp("2.0", "1.99") > 0);
	assert_true(docker_version_cmp("junk", "1.0") < 0);   /* bad first */
	assert_true(docker_version_cmp("1.0", "junk") > 0);
	assert_true(docker_version_cmp("junk", NULL) == 0);
	assert_true(docker_version_cmp("1.", "1.0") < 0);
	assert_true(docker_version_cmp("1.4a", "1.0") < 0);
}

/* ---- error messages ---------------------------------------------- */

static void test_error_message(void **state)
{
	const char *j = "{\"message\":\"No such container: abc\"}";
	const char *t = "page not found\n";
	const char *ctl = "{\"message\":\"bad\\u001b[31mred\"}";
	char *m;
	(void)state;

	m = docker_error_message(404, j, strlen(j));
	assert_string_equal(m, "No such container: abc");
	free(m);

	m = docker_error_message(404, t, strlen(t));
	assert_string_equal(m, "HTTP 404: page not found");
	free(m);

	m = docker_error_message(500, "", 0);
	assert_string_equal(m, "HTTP 500");
	free(m);

	m = docker_error_message(500, NULL, 0);
	assert_string_equal(m, "HTTP 500");
	free(m);

	m = docker_error_message(409, "{\"other\":1}", 11);
	assert_string_equal(m, "HTTP 409");
	free(m);

	/* length bounds the parse: only the first 2 bytes count */
	m = docker_error_message(400, j, 2);
	assert_null(strstr(m, "No such"));
	free(m);

	/* the daemon's message is made inert for a terminal */
	m = docker_error_message(400, ctl, strlen(ctl));
	assert_null(strchr(m, '\033'));
	assert_non_null(strstr(m, "bad"));
	free(m);
}

/* ---- container config -------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_non_null(v);
	return v;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static void test_container_config(void **state)
{
	const char *cmd[] = { "/bin/agent", "--seed", "7", NULL };
	const char *env[] = { "A=1", "B=two", NULL };
	const char *aliases[] = { "poyo", "agent", NULL };
	const char *tmpfs[] = { "/tmp", "/run", NULL };
	const char *caps[] = { "NET_ADMIN", NULL };
	const struct docker_mount mounts[] = {
		{ "/host/bait", "/home/poyo/bait", true, false },
		{ "/host/work", "/work", false, false },
		{ NULL, "/evidence", false, true },       /* anonymous volume */
		{ "ares-x-home", "/home/poyo", true, true },
	};
	struct docker_container_spec s = {
		.name = "ares-x-agent", .image = "ares-lab:abc",
		.cmd = cmd, .env = env, .user = "65532:65532",
		.hostname = "poyo", .workdir = "/work",
		.network = "ares-x-lab", .aliases = aliases,
		.mounts = mounts, .nmounts = 4, .tmpfs = tmpfs,
		.cap_add = caps, .drop_all_caps = true,
		.read_only_rootfs = true, .privileged = false,
		.no_new_privileges = true, .memory_bytes = 256LL << 20,
		.pids_limit = 128, .run_id = "run-1", .role = "agent",
	};
	cJSON *c;
	const cJSON *hc, *a, *m, *lab, *ep;
	(void)state;

	c = docker_container_config(&s);
	assert_non_null(c);
	assert_string_equal(str(c, "Image"), "ares-lab:abc");
	a = get(c, "Cmd");
	assert_int_equal(cJSON_GetArraySize(a), 3);
	assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring, "/bin/agent");
	assert_string_equal(cJSON_GetArrayItem(a, 2)->valuestring, "7");
	a = get(c, "Env");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_string_equal(cJSON_GetArrayItem(a, 1)->valuestring, "B=two");
	assert_string_equal(str(c, "User"), "65532:65532");
	assert_string_equal(str(c, "Hostname"), "poyo");
	assert_string_equal(str(c, "WorkingDir"), "/work");
	lab = get(c, "Labels");
	assert_string_equal(str(lab, "ares.run"), "run-1");
	assert_string_equal(str(lab, "ares.role"), "agent");
	assert_int_equal(cJSON_GetArraySize(lab), 2);

	hc = get(c, "HostConfig");
	assert_true(cJSON_IsTrue(get(hc, "ReadonlyRootfs")));
	assert_true(cJSON_IsFalse(get(hc, "Privileged")));
	a = get(hc, "CapDrop");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring, "ALL");
	a = get(hc, "CapAdd");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring, "NET_ADMIN");
	a = get(hc, "SecurityOpt");
	assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring,
	    "no-new-privileges");
	assert_true(get(hc, "Memory")->valuedouble == (double)(256LL << 20));
	assert_true(get(hc, "PidsLimit")->valuedouble == 128.0);
	assert_string_equal(str(hc, "NetworkMode"), "ares-x-lab");
	a = get(hc, "Tmpfs");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_true(cJSON_IsString(get(a, "/tmp")));
	assert_true(cJSON_IsString(get(a, "/run")));
	a = get(hc, "Mounts");
	assert_int_equal(cJSON_GetArraySize(a), 4);
	m = cJSON_GetArrayItem(a, 0);
	assert_string_equal(str(m, "Type"), "bind");
	assert_string_equal(str(m, "Source"), "/host/bait");
	assert_string_equal(str(m, "Target"), "/home/poyo/bait");
	assert_true(cJSON_IsTrue(get(m, "ReadOnly")));
	m = cJSON_GetArrayItem(a, 1);
	assert_string_equal(str(m, "Source"), "/host/work");
	assert_true(cJSON_IsFalse(get(m, "ReadOnly")));
	m = cJSON_GetArrayItem(a, 2);
	assert_string_equal(str(m, "Type"), "volume");
	assert_null(cJSON_GetObjectItemCaseSensitive(m, "Source"));
	assert_string_equal(str(m, "Target"), "/evidence");
	assert_true(cJSON_IsFalse(get(m, "ReadOnly")));
	m = cJSON_GetArrayItem(a, 3);
	assert_string_equal(str(m, "Type"), "volume");
	assert_string_equal(str(m, "Source"), "ares-x-home");
	assert_true(cJSON_IsTrue(get(m, "ReadOnly")));

	ep = get(get(get(c, "NetworkingConfig"), "EndpointsConfig"),
	    "ares-x-lab");
	a = get(ep, "Aliases");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring, "poyo");
	assert_string_equal(cJSON_GetArrayItem(a, 1)->valuestring, "agent");
	/* no fixed address asked for: the engine's pick */
	assert_null(cJSON_GetObjectItemCaseSensitive(ep, "IPAMConfig"));
	cJSON_Delete(c);

	/* a fixed address on the network of create */
	s.ipv4 = "198.18.4.117";
	c = docker_container_config(&s);
	ep = get(get(get(c, "NetworkingConfig"), "EndpointsConfig"),
	    "ares-x-lab");
	assert_string_equal(str(get(ep, "IPAMConfig"), "IPv4Address"),
	    "198.18.4.117");
	assert_int_equal(cJSON_GetArraySize(get(ep, "Aliases")), 2);
	cJSON_Delete(c);
}

/* The network create body: Internal always, the labels, the bridge
 * options, and the subnet with the range the engine hands out only when
 * given. */
static void test_network_config(void **state)
{
	struct docker_network_spec s = { .name = "ares-x-lab", .run_id = "x",
	    .bridge_name = "aresabc", .no_host_address = true,
	    .owner = "boot:1:2", .subnet = "198.18.4.64/26",
	    .ip_range = "198.18.4.64/27" };
	const cJSON *o, *cfg;
	cJSON *c;
	(void)state;

	c = docker_network_config(&s);
	assert_string_equal(str(c, "Name"), "ares-x-lab");
	assert_string_equal(str(c, "Driver"), "bridge");
	assert_true(cJSON_IsTrue(get(c, "Internal")));
	assert_string_equal(str(get(c, "Labels"), "ares.run"), "x");
	assert_string_equal(str(get(c, "Labels"), "ares.owner"), "boot:1:2");
	o = get(c, "Options");
	assert_string_equal(str(o, "com.docker.network.bridge.name"),
	    "aresabc");
	assert_string_equal(str(o, "com.docker.network.bridge.inhibit_ipv4"),
	    "true");
	assert_string_equal(str(get(c, "IPAM"), "Driver"), "default");
	cfg = get(get(c, "IPAM"), "Config");
	assert_int_equal(cJSON_GetArraySize(cfg), 1);
	assert_string_equal(str(cJSON_GetArrayItem(cfg, 0), "Subnet"),
	    "198.18.4.64/26");
	assert_string_equal(str(cJSON_GetArrayItem(cfg, 0), "IPRange"),
	    "198.18.4.64/27");
	cJSON_Delete(c);

	/* no subnet: the engine's pool, and still Internal */
	s.subnet = s.ip_range = NULL;
	s.no_host_address = false;
	c = docker_network_config(&s);
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "IPAM"));
	assert_true(cJSON_IsTrue(get(c, "Internal")));
	assert_null(cJSON_GetObjectItemCaseSensitive(get(c, "Options"),
	    "com.docker.network.bridge.inhibit_ipv4"));
	cJSON_Delete(c);
}

/* The volume create body: local driver, the run's labels (the owner
 * filled when only the run is given), the lease when given. */
static void test_volume_config(void **state)
{
	struct docker_volume_spec s = { .name = "ares-x-home", .run_id = "x",
	    .role = "home", .owner = "boot:1:2", .lease = "/r/lab.lease" };
	cJSON *c;
	(void)state;

	c = docker_volume_config(&s);
	assert_string_equal(str(c, "Name"), "ares-x-home");
	assert_string_equal(str(c, "Driver"), "local");
	assert_string_equal(str(get(c, "Labels"), "ares.run"), "x");
	assert_string_equal(str(get(c, "Labels"), "ares.role"), "home");
	assert_string_equal(str(get(c, "Labels"), "ares.owner"), "boot:1:2");
	assert_string_equal(str(get(c, "Labels"), "ares.lease"),
	    "/r/lab.lease");
	cJSON_Delete(c);
	s.owner = NULL;
	s.lease = NULL;
	c = docker_volume_config(&s);
	assert_string_equal(str(get(c, "Labels"), "ares.owner"), gc_owner());
	assert_null(cJSON_GetObjectItemCaseSensitive(get(c, "Labels"),
	    "ares.lease"));
	cJSON_Delete(c);
}

static void test_container_config_minimal(void **state)
{
	struct docker_container_spec s = { .image = "img:1", .privileged = true };
	cJSON *c;
	const cJSON *hc;
	(void)state;

	c = docker_container_config(&s);
	assert_string_equal(str(c, "Image"), "img:1");
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "Cmd"));
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "Env"));
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "User"));
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "Labels"));
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "NetworkingConfig"));
	hc = get(c, "HostConfig");
	assert_string_equal(str(hc, "NetworkMode"), "none");
	assert_true(cJSON_IsTrue(get(hc, "Privileged")));
	assert_true(cJSON_IsFalse(get(hc, "ReadonlyRootfs")));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "CapDrop"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "CapAdd"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "SecurityOpt"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "Memory"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "PidsLimit"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "Mounts"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "Tmpfs"));
	/* the engine's own read-only paths unless asked */
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "ReadonlyPaths"));
	cJSON_Delete(c);

	/* the remote seal's container: only /proc/sys/net writable (a
	 * non-net sysctl checks no capability, only the global root uid and
	 * the mount: every other subtree stays read-only), the engine's
	 * other read-only paths kept */
	s.proc_sys_net_rw = true;
	c = docker_container_config(&s);
	hc = get(c, "HostConfig");
	{
		static const char *const want[] = { "/proc/bus", "/proc/fs",
		    "/proc/irq", "/proc/sysrq-trigger", "/proc/sys/kernel",
		    "/proc/sys/vm", "/proc/sys/fs", "/proc/sys/dev",
		    "/proc/sys/user", "/proc/sys/abi", "/proc/sys/debug",
		    "/proc/sys/crypto", NULL };
		const cJSON *ro = get(hc, "ReadonlyPaths"), *it;

		for (size_t i = 0; want[i] != NULL; i++) {
			bool found = false;

			cJSON_ArrayForEach(it, ro)
				found |= strcmp(it->valuestring, want[i]) == 0;
			assert_true(found);
		}
		cJSON_ArrayForEach(it, ro) {
			assert_string_not_equal(it->valuestring, "/proc/sys");
			assert_true(strncmp(it->valuestring, "/proc/sys/net",
			    13) != 0);
		}
	}
	cJSON_Delete(c);
	s.proc_sys_net_rw = false;

	/* a role alone still labels */
	s.role = "gateway";
	c = docker_container_config(&s);
	assert_string_equal(str(get(c, "Labels"), "ares.role"), "gateway");
	assert_null(cJSON_GetObjectItemCaseSensitive(get(c, "Labels"),
	    "ares.run"));
	cJSON_Delete(c);
}

/* The namespace modes, ShmSize and a seccomp profile; "unconfined" is
 * never sent (docs/security.md). */
static void test_container_config_namespaces(void **state)
{
	struct docker_container_spec s = { .image = "img:1",
	    .no_new_privileges = true, .pid_mode = "container:abc",
	    .ipc_mode = "shareable", .seccomp = "{\"defaultAction\":"
	    "\"SCMP_ACT_ERRNO\"}", .shm_bytes = 4 << 20 };
	const cJSON *hc, *so;
	cJSON *c;
	(void)state;

	c = docker_container_config(&s);
	hc = get(c, "HostConfig");
	assert_string_equal(str(hc, "PidMode"), "container:abc");
	assert_string_equal(str(hc, "IpcMode"), "shareable");
	assert_int_equal((int)get(hc, "ShmSize")->valuedouble, 4 << 20);
	so = get(hc, "SecurityOpt");
	assert_int_equal(cJSON_GetArraySize(so), 2);
	assert_string_equal(cJSON_GetArrayItem(so, 0)->valuestring,
	    "no-new-privileges");
	assert_string_equal(cJSON_GetArrayItem(so, 1)->valuestring,
	    "seccomp={\"defaultAction\":\"SCMP_ACT_ERRNO\"}");
	cJSON_Delete(c);
	s.seccomp = "unconfined";
	s.pid_mode = s.ipc_mode = NULL;
	c = docker_container_config(&s);
	hc = get(c, "HostConfig");
	so = get(hc, "SecurityOpt");
	assert_int_equal(cJSON_GetArraySize(so), 1);
	{
		char *t = cJSON_PrintUnformatted(so);

		assert_null(strstr(t, "unconfined"));
		free(t);
	}
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "PidMode"));
	assert_null(cJSON_GetObjectItemCaseSensitive(hc, "IpcMode"));
	cJSON_Delete(c);
}

/* ---- inspect helpers ---------------------------------------------- */

static const char *inspect_paused =
    "{\"Id\":\"abc\",\"State\":{\"Status\":\"paused\",\"Running\":true,"
    "\"Paused\":true,\"Restarting\":false,\"Pid\":4242,\"ExitCode\":0},"
    "\"NetworkSettings\":{\"Networks\":{\"ares-x-lab\":{\"IPAddress\":"
    "\"172.18.0.2\"},\"ares-x-up\":{}}}}";
static const char *inspect_exited =
    "{\"Id\":\"abc\",\"State\":{\"Status\":\"exited\",\"Running\":false,"
    "\"Paused\":false,\"Pid\":0,\"ExitCode\":137},"
    "\"NetworkSettings\":{\"Networks\":{}}}";

static void test_inspect_helpers(void **state)
{
	cJSON *j;
	(void)state;

	j = cJSON_Parse(inspect_paused);
	assert_non_null(j);
	assert_true(docker_inspect_running(j));
	assert_true(docker_inspect_paused(j));
	assert_int_equal(docker_inspect_pid(j), 4242);
	assert_int_equal(docker_inspect_network_count(j), 2);
	cJSON_Delete(j);

	j = cJSON_Parse(inspect_exited);
	assert_false(docker_inspect_running(j));
	assert_false(docker_inspect_paused(j));
	assert_int_equal(docker_inspect_pid(j), 0);
	assert_int_equal(docker_inspect_network_count(j), 0);
	cJSON_Delete(j);

	/* missing / wrong-typed fields: safe defaults */
	j = cJSON_Parse("{\"State\":{\"Running\":\"yes\",\"Pid\":-5},"
	    "\"NetworkSettings\":{\"Networks\":null}}");
	assert_false(docker_inspect_running(j));
	assert_int_equal(docker_inspect_pid(j), 0);
	assert_int_equal(docker_inspect_network_count(j), 0);
	cJSON_Delete(j);
	assert_false(docker_inspect_running(NULL));
	assert_int_equal(docker_inspect_network_count(NULL), 0);
}

/* ---- demux -------------------------------------------------------- */

/* Append one frame (type, len bytes of p) to buf at *n. */
static void frame(char *buf, size_t *n, int type, const char *p, size_t len)
{
	unsigned char h[8] = { (unsigned char)type, 0, 0, 0,
	    (unsigned char)(len >> 24), (unsigned char)(len >> 16),
	    (unsigned char)(len >> 8), (unsigned char)len };
	memcpy(buf + *n, h, 8);
	memcpy(buf + *n + 8, p, len);
	*n += 8 + len;
}

static void test_demux_two_frames(void **state)
{
	char buf[256];
	size_t n = 0;
	struct docker_exec_result r = {0};
	struct errbuf e = {0};
	(void)state;

	frame(buf, &n, 1, "hello ", 6);
	frame(buf, &n, 2, "oops", 4);
	assert_int_equal(docker_demux(buf, n, 1024, &r, &e), 0);
	assert_int_equal(r.out_len, 6);
	assert_string_equal(r.out, "hello ");
	assert_int_equal(r.err_len, 4);
	assert_string_equal(r.err, "oops");
	assert_false(r.truncated);
	docker_exec_result_free(&r);
	assert_null(r.out);
}

static void test_demux_interleaved(void **state)
{
	char buf[256];
	size_t n = 0;
	struct docker_exec_result r = {0};
	struct errbuf e = {0};
	(void)state;

	frame(buf, &n, 1, "a", 1);
	frame(buf, &n, 2, "X", 1);
	frame(buf, &n, 0, "ignored-stdin", 13);
	frame(buf, &n, 1, "b", 1);
	frame(buf, &n, 2, "Y", 1);
	frame(buf, &n, 1, "c\n", 2);
	assert_int_equal(docker_demux(buf, n, 1024, &r, &e), 0);
	assert_string_equal(r.out, "abc\n");
	assert_string_equal(r.err, "XY");
	docker_exec_result_free(&r);
}

static void test_demux_truncation(void **state)
{
	char buf[256];
	size_t n = 0;
	struct docker_exec_result r = {0};
	struct errbuf e = {0};
	(void)state;

	frame(buf, &n, 1, "0123456789", 10);
	frame(buf, &n, 1, "abcdef", 6);
	frame(buf, &n, 2, "ee", 2);
	assert_int_equal(docker_demux(buf, n, 12, &r, &e), 0);
	assert_int_equal(r.out_len, 12);
	assert_string_equal(r.out, "0123456789ab");
	assert_string_equal(r.err, "ee");
	assert_true(r.truncated);
	docker_exec_result_free(&r);

	/* exactly at max: not truncated */
	n = 0;
	frame(buf, &n, 1, "0123", 4);
	assert_int_equal(docker_demux(buf, n, 4, &r, &e), 0);
	assert_string_equal(r.out, "0123");
	assert_false(r.truncated);
	docker_exec_result_free(&r);
}

static void test_demux_malformed(void **state)
{
	char buf[256];
	size_t n = 0;
	struct docker_exec_result r = {0};
	struct errbuf e = {0};
	(void)state;

	/* nonzero padding (each of the 3 bytes) in the second header */
	for (int pad = 1; pad <= 3; pad++) {
		memset(&e, 0, sizeof e);
		n = 0;
		frame(buf, &n, 1, "x", 1);
		frame(buf, &n, 1, "y", 1);
		buf[9 + pad] = 1;
		assert_int_equal(docker_demux(buf, n, 100, &r, &e), -1);
		assert_non_null(strstr(e.msg, "byte 9"));
		assert_non_null(strstr(e.msg, "padding"));
		docker_exec_result_free(&r);
	}

	/* unknown stream type */
	memset(&e, 0, sizeof e);
	n = 0;
	frame(buf, &n, 3, "z", 1);
	assert_int_equal(docker_demux(buf, n, 100, &r, &e), -1);
	assert_non_null(strstr(e.msg, "byte 0"));
	assert_non_null(strstr(e.msg, "stream type 3"));
	docker_exec_result_free(&r);

	/* length beyond the buffer */
	memset(&e, 0, sizeof e);
	n = 0;
	frame(buf, &n, 1, "ok", 2);
	frame(buf, &n, 2, "short", 5);
	n -= 2;   /* cut the payload */
	assert_int_equal(docker_demux(buf, n, 100, &r, &e), -1);
	assert_non_null(strstr(e.msg, "byte 10"));
	assert_non_null(strstr(e.msg, "5 bytes"));
	assert_int_equal(r.err_len, 0);   /* nothing of the bad frame kept */
	docker_exec_result_free(&r);

	/* a huge declared length */
	memset(&e, 0, sizeof e);
	memcpy(buf, "\x01\0\0\0\xff\xff\xff\xff" "abc", 11);
	assert_int_equal(docker_demux(buf, 11, 100, &r, &e), -1);
	assert_non_null(strstr(e.msg, "byte 0"));
	docker_exec_result_free(&r);
}

static void test_demux_zero_and_partial(void **state)
{
	char buf[256];
	size_t n = 0;
	struct docker_exec_result r = {0};
	struct errbuf e = {0};
	(void)state;

	/* zero-length frames are fine */
	frame(buf, &n, 1, "", 0);
	frame(buf, &n, 2, "", 0);
	frame(buf, &n, 1, "q", 1);
	assert_int_equal(docker_demux(buf, n, 100, &r, &e), 0);
	assert_string_equal(r.out, "q");
	assert_non_null(r.err);
	assert_int_equal(r.err_len, 0);
	docker_exec_result_free(&r);

	/* empty stream: empty strings, not NULL */
	assert_int_equal(docker_demux(buf, 0, 100, &r, &e), 0);
	assert_non_null(r.out);
	assert_string_equal(r.out, "");
	docker_exec_result_free(&r);

	/* partial trailing header */
	n = 0;
	frame(buf, &n, 1, "abc", 3);
	memcpy(buf + n, "\x01\0\0", 3);
	n += 3;
	assert_int_equal(docker_demux(buf, n, 100, &r, &e), -1);
	assert_non_null(strstr(e.msg, "byte 11"));
	assert_non_null(strstr(e.msg, "header"));
	docker_exec_result_free(&r);
}


/* ---- a fake engine on a unix socket -------------------------------- */

/* Engine Ids as the engine gives them: 64 lowercase hex digits. */
#define EXEC1 "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1"
#define EXEC2 "e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2"
#define EXEC3 "e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3"

/* One canned exchange: the request line must start with expect. */
struct canned {
	const char *expect;
	const char *status;      /* "200 OK" */
	const char *body;
	size_t body_len;         /* 0: strlen(body) */
	bool dribble;            /* no Content-Length, write byte by byte */
};
/* As a canned body: answer with the request's own body. */
static const char canned_echo[] = "(the request's body)";

struct fake {
	char dir[64];
	char sock[128];
	char host[160];
	pid_t pid;
};

/* Serve the script, one exchange per connection, then exit. */
static void fake_serve(int ls, const struct canned *script, size_t n)
{
	signal(SIGPIPE, SIG_IGN);   /* the client may hang up mid-stream */
	alarm(10);                  /* never outlive a failed test */
	for (size_t i = 0; i < n; i++) {
		const struct canned *c = &script[i];
		char req[65536], head[256];
		size_t got = 0, blen, clen = 0;
		char *end = NULL, *cl;
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			_exit(3);
		while (got < sizeof req - 1) {
			ssize_t k = read(fd, req + got, sizeof req - 1 - got);
			if (k <= 0)
				_exit(4);
			got += (size_t)k;
			req[got] = '\0';
			if ((end = strstr(req, "\r\n\r\n")) != NULL)
				break;
		}
		if (end == NULL)
			_exit(5);
		cl = strcasestr(req, "\r\nContent-Length:");
		if (cl != NULL && cl < end)
			clen = strtoul(cl + 17, NULL, 10);
		static char echoed[65536];
		size_t elen = 0;
		{   /* drain the request body (kept for an echo) */
			size_t have = got - (size_t)(end + 4 - req);
			char sink[4096];
			memcpy(echoed, end + 4, have < sizeof echoed ? have : 0);
			elen = have < sizeof echoed ? have : 0;
			while (have < clen) {
				ssize_t k = read(fd, sink, sizeof sink);
				if (k <= 0)
					break;
				if (elen + (size_t)k < sizeof echoed) {
					memcpy(echoed + elen, sink, (size_t)k);
					elen += (size_t)k;
				}
				have += (size_t)k;
			}
		}
		if (c->status == NULL) {   /* a hung daemon: never answers */
			sleep(8);
			close(fd);
			continue;
		}
		blen = c->body == canned_echo ? elen : c->body_len ? c->body_len :
		    strlen(c->body);
		if (strncmp(req, c->expect, strlen(c->expect)) != 0) {
			const char *bad = "HTTP/1.1 400 Bad\r\nConnection: close"
			    "\r\nContent-Length: 30\r\n\r\n"
			    "{\"message\":\"unexpected call\"}";
			if (write(fd, bad, strlen(bad)) < 0)
				_exit(6);
			close(fd);
			continue;
		}
		if (c->dribble)
			snprintf(head, sizeof head, "HTTP/1.1 %s\r\nConnection: "
			    "close\r\n\r\n", c->status);
		else
			snprintf(head, sizeof head, "HTTP/1.1 %s\r\nConnection: "
			    "close\r\nContent-Length: %zu\r\n\r\n", c->status,
			    blen);
		if (write(fd, head, strlen(head)) < 0)
			_exit(6);
		for (size_t o = 0; o < blen; ) {
			size_t k = c->dribble ? 1 : blen - o;
			const char *b = c->body == canned_echo ? echoed :
			    c->body;

			if (write(fd, b + o, k) < 0)
				break;   /* client gave up (malformed stream) */
			o += k;
			if (c->dribble)
				usleep(200);
		}
		close(fd);
	}
	_exit(0);
}

static void fake_start(struct fake *f, const struct canned *script,
    size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ls;

	strcpy(f->dir, "/tmp/ares-tdock-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->sock, sizeof f->sock, "%s/d.sock", f->dir);
	snprintf(f->host, sizeof f->host, "unix://%s", f->sock);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(ls >= 0);
	strcpy(sa.sun_path, f->sock);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(ls, 8), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0)
		fake_serve(ls, script, n);
	close(ls);
}

/* Wait for the server; it must have served the whole script. */
static void fake_stop(struct fake *f, bool expect_done)
{
	int st = 0;
	if (!expect_done)
		kill(f->pid, SIGTERM);
	assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
	if (expect_done)
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(f->sock);
	rmdir(f->dir);
}

#define VERSION_29 "{\"ApiVersion\":\"1.52\",\"MinAPIVersion\":\"1.44\"," \
    "\"Version\":\"29.0.0\"}"

/* Negotiation against a Docker 29 daemon picks 1.47 and uses it. */
static void test_fake_negotiate_and_import(void **state)
{
	static const char progress[] =
	    "{\"status\":\"Importing\"}\r\n"
	    "{\"errorDetail\":{\"message\":\"boom: bad layer\"},"
	    "\"error\":\"boom\"}\r\n";
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "GET /v1.47/images/ares-lab%3Aabc/json ", "404 Not Found",
		  "{\"message\":\"No such image\"}", 0, false },
		{ "POST /v1.47/images/create?fromSrc=-&repo=ares-lab&tag=t1 ",
		  "200 OK", "{\"status\":\"sha256:1234\"}\r\n", 0, true },
		{ "POST /v1.47/images/create?fromSrc=-&repo=ares-lab&tag=t2 ",
		  "200 OK", progress, 0, true },
		{ "GET /v1.47/images/x/json ", "500 Internal Server Error",
		  "{\"message\":\"daemon on fire\"}", 0, false },
	};
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	char tar[] = "/tmp/ares-tdock-tar-XXXXXX";
	int fd;
	(void)state;

	fd = mkstemp(tar);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "tarbytes", 8), 8);
	close(fd);
	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), 0);
	assert_string_equal(docker_api_version(d), "1.47");
	assert_string_equal(docker_engine_version(d), "29.0.0");
	assert_int_equal(docker_image_exists(d, "ares-lab:abc", &e), 0);
	assert_int_equal(docker_image_import(d, tar, "ares-lab", "t1", &e), 0);
	assert_int_equal(docker_image_import(d, tar, "ares-lab", "t2", &e), -1);
	assert_non_null(strstr(e.msg, "boom: bad layer"));
	assert_int_equal(e.code, ERRBUF_INTERNAL);
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_image_exists(d, "x", &e), -1);
	assert_non_null(strstr(e.msg, "daemon on fire"));
	assert_non_null(strstr(e.msg, "GET /images/x/json"));
	docker_close(d);
	fake_stop(&f, true);
	unlink(tar);
}

/*
 * A daemon that stops answering: with a deadline set (lab up sets one), a
 * call ends at the deadline instead of the per-call timeout (60 s), and a
 * call after the deadline fails at once.
 */
static void test_fake_deadline(void **state)
{
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "GET /v1.47/images/x/json ", NULL, "", 0, false },
	};
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	uint64_t t0;
	(void)state;

	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), 0);
	t0 = util_mono_ns();
	assert_int_equal(docker_set_deadline(d, t0 + 300000000ull), 0);
	assert_int_equal(docker_image_exists(d, "x", &e), -1);
	/* bounded by the deadline, not by the 60 s call timeout (coarse:
	 * a loaded machine is slow, never this slow) */
	assert_true(util_mono_ns() - t0 < 7000000000ull);
	/* once the bound has passed, a call fails before it starts */
	while (util_mono_ns() < t0 + 350000000ull)
		usleep(10000);
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_image_exists(d, "y", &e), -1);
	assert_non_null(strstr(e.msg, "time bound"));
	assert_int_equal(docker_set_deadline(d, 0), t0 + 300000000ull);
	docker_close(d);
	fake_stop(&f, false);
}

/*
 * docker_clone: a second handle on the same engine, its own connection,
 * that uses the version d negotiated (no GET /version of its own) and
 * d's time bound; a labelled import sends the label as a LABEL change,
 * and a label that is not one KEY=VALUE word is refused unsent.
 */
static void test_fake_clone(void **state)
{
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "GET /v1.47/images/a/json ", "404 Not Found",
		  "{\"message\":\"No such image\"}", 0, false },
		{ "POST /v1.47/images/create?fromSrc=-&repo=ares-lab&tag=t1"
		  "&changes=LABEL%20ares.rootfs.stat%3D1-2.3 ", "200 OK",
		  "{\"status\":\"sha256:1234\"}\r\n", 0, true },
		{ "GET /v1.47/images/b/json ", "200 OK", "{}", 0, false },
	};
	struct fake f;
	struct errbuf e = {0};
	struct docker *d, *c;
	char tar[] = "/tmp/ares-tdock-tar-XXXXXX";
	int fd;
	(void)state;

	fd = mkstemp(tar);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "tarbytes", 8), 8);
	close(fd);
	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), 0);
	c = docker_clone(d);
	assert_string_equal(docker_api_version(c), "1.47");
	assert_string_equal(docker_engine_version(c), "29.0.0");
	assert_int_equal(docker_image_exists(c, "a", &e), 0);
	assert_int_equal(docker_image_import_labelled(c, tar, "ares-lab", "t1",
	    "ares.rootfs.stat=1-2.3", &e), 0);
	assert_int_equal(docker_image_import_labelled(c, tar, "ares-lab", "t2",
	    "bad label", &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_int_equal(docker_image_exists(d, "b", &e), 1);
	docker_close(c);
	/* the bound of d at the time of the clone holds for the clone */
	(void)docker_set_deadline(d, util_mono_ns() - 1);
	c = docker_clone(d);
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_image_exists(c, "z", &e), -1);
	assert_non_null(strstr(e.msg, "time bound"));
	docker_close(c);
	docker_close(d);
	fake_stop(&f, true);
	unlink(tar);
}

/* A daemon whose minimum is above ours is refused with ERRBUF_ENGINE. */
static void test_fake_negotiate_refused(void **state)
{
	const struct canned script[] = {
		{ "GET /version ", "200 OK",
		  "{\"ApiVersion\":\"1.60\",\"MinAPIVersion\":\"1.48\"}", 0,
		  false },
	};
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	(void)state;

	fake_start(&f, script, 1);
	d = docker_open(f.host, &e);
	assert_int_equal(docker_negotiate(d, &e), -1);
	assert_int_equal(e.code, ERRBUF_ENGINE);
	assert_non_null(strstr(e.msg, "1.48..1.60"));
	docker_close(d);
	fake_stop(&f, true);
}

/* Exec: the stream arrives byte by byte (frames split across reads). */
static void test_fake_exec(void **state)
{
	static const char stream[] =
	    "\x01\0\0\0\0\0\0\x03" "hi\n"
	    "\x02\0\0\0\0\0\0\x04" "err\n"
	    "\x01\0\0\0\0\0\0\x02" "yo";
	static const char bad[] =
	    "\x01\0\0\0\0\0\0\x03" "hi\n"
	    "\x01\0\x07\0\0\0\0\x01" "x";
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "POST /v1.47/containers/c1/exec ", "201 Created",
		  "{\"Id\":\"" EXEC1 "\"}", 0, false },
		{ "POST /v1.47/exec/" EXEC1 "/start ", "200 OK", stream,
		  sizeof stream - 1, true },
		{ "GET /v1.47/exec/" EXEC1 "/json ", "200 OK",
		  "{\"Running\":true,\"ExitCode\":null}", 0, false },
		{ "GET /v1.47/exec/" EXEC1 "/json ", "200 OK",
		  "{\"Running\":false,\"ExitCode\":7}", 0, false },
		{ "POST /v1.47/containers/c1/exec ", "201 Created",
		  "{\"Id\":\"" EXEC2 "\"}", 0, false },
		{ "POST /v1.47/exec/" EXEC2 "/start ", "200 OK", bad,
		  sizeof bad - 1, true },
		{ "POST /v1.47/containers/c1/exec ", "409 Conflict",
		  "{\"message\":\"Container c1 is paused\"}", 0, false },
	};
	const char *argv[] = { "echo", "hi", NULL };
	struct docker_exec_result r;
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	(void)state;

	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_int_equal(docker_exec(d, "c1", argv, NULL, 4, &r, &e), 0);
	assert_string_equal(r.out, "hi\ny");
	assert_string_equal(r.err, "err\n");
	assert_true(r.truncated);
	assert_int_equal(r.exit_code, 7);
	docker_exec_result_free(&r);

	assert_int_equal(docker_exec(d, "c1", argv, NULL, 100, &r, &e), -1);
	assert_non_null(strstr(e.msg, "byte 11"));
	assert_null(r.out);

	memset(&e, 0, sizeof e);
	assert_int_equal(docker_exec(d, "c1", argv, NULL, 100, &r, &e), -1);
	assert_int_equal(e.code, ERRBUF_INTERNAL);
	assert_non_null(strstr(e.msg, "is paused"));
	assert_non_null(strstr(e.msg, "POST /containers/c1/exec"));
	docker_close(d);
	fake_stop(&f, true);
}

/* gwctl_exec: an answer cut at the exec bound (8192 + 65536 bytes) is a
 * failure, never a status with a shortened body. */
static void test_gwctl_exec_truncated(void **state)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: "
	    "90000\r\n\r\n";
	const size_t n = 8192 + 65536 + 4096;
	char *stream = xmalloc(8 + n);
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	char *body = (char *)"x";
	(void)state;

	stream[0] = 1;
	memset(stream + 1, 0, 3);
	stream[4] = (char)(n >> 24);
	stream[5] = (char)(n >> 16);
	stream[6] = (char)(n >> 8);
	stream[7] = (char)n;
	memset(stream + 8, '{', n);
	memcpy(stream + 8, head, sizeof head - 1);
	{
		const struct canned script[] = {
			{ "GET /version ", "200 OK", VERSION_29, 0, false },
			{ "POST /v1.47/containers/gw/exec ", "201 Created",
			  "{\"Id\":\"" EXEC1 "\"}", 0, false },
			{ "POST /v1.47/exec/" EXEC1 "/start ", "200 OK", stream,
			  8 + n, false },
			{ "GET /v1.47/exec/" EXEC1 "/json ", "200 OK",
			  "{\"Running\":false,\"ExitCode\":0}", 0, false },
		};

		fake_start(&f, script, sizeof script / sizeof script[0]);
		d = docker_open(f.host, &e);
		assert_non_null(d);
		assert_int_equal(gwctl_exec(d, "gw", NULL, "GET",
		    "/control/health", NULL, &body, &e), -1);
		assert_non_null(strstr(e.msg, "truncated"));
		assert_null(body);
		docker_close(d);
		fake_stop(&f, true);
	}
	free(stream);
}

/* An exec's stdout stream (one frame) holding text; caller frees. */
static char *exec_frame(const char *text, size_t *len)
{
	size_t n = strlen(text);
	char *b = xmalloc(8 + n);

	b[0] = 1;
	memset(b + 1, 0, 3);
	b[4] = (char)(n >> 24);
	b[5] = (char)(n >> 16);
	b[6] = (char)(n >> 8);
	b[7] = (char)n;
	memcpy(b + 8, text, n);
	*len = 8 + n;
	return b;
}

/* The deny lever on a lab on a remote engine: fire, verify and reset go
 * through the engine's exec in the gateway (no host socket: ctl_path
 * names none); the probe must get 403, a 200 is "not in force". */
static void test_deny_remote(void **state)
{
	size_t l200, l403;
	char *a200 = exec_frame("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "\r\n{}", &l200);
	char *a403 = exec_frame("HTTP/1.1 403 Forbidden\r\nContent-Length: 2"
	    "\r\n\r\n{}", &l403);
	static const char done[] = "{\"Running\":false,\"ExitCode\":0}";
	struct lab lab = { 0 };
	(void)state;

	lab.remote = true;
	lab.gateway.id = (char *)"gw";
	lab.ctl_path = (char *)"/nonexistent/ctl/gateway.sock";
	lab.agent_key = (char *)"sk-agent-test";
	for (int round = 0; round < 2; round++) {
		/* round 0: deny 200, probe 403; round 1: probe 200 */
		const struct canned script[] = {
			{ "GET /version ", "200 OK", VERSION_29, 0, false },
			{ "POST /v1.47/containers/gw/exec ", "201 Created",
			  "{\"Id\":\"" EXEC1 "\"}", 0, false },
			{ "POST /v1.47/exec/" EXEC1 "/start ", "200 OK", a200, l200,
			  false },
			{ "GET /v1.47/exec/" EXEC1 "/json ", "200 OK", done, 0, false },
			{ "POST /v1.47/containers/gw/exec ", "201 Created",
			  "{\"Id\":\"" EXEC2 "\"}", 0, false },
			{ "POST /v1.47/exec/" EXEC2 "/start ", "200 OK",
			  round == 0 ? a403 : a200, round == 0 ? l403 : l200,
			  false },
			{ "GET /v1.47/exec/" EXEC2 "/json ", "200 OK", done, 0, false },
			{ "POST /v1.47/containers/gw/exec ", "201 Created",
			  "{\"Id\":\"" EXEC3 "\"}", 0, false },
			{ "POST /v1.47/exec/" EXEC3 "/start ", "200 OK", a200, l200,
			  false },
			{ "GET /v1.47/exec/" EXEC3 "/json ", "200 OK", done, 0, false },
		};
		struct lever_ctx c = { 0 };
		struct lever_result r = { 0 };
		struct errbuf e = { 0 };
		struct fake f;
		struct docker *d;
		int rc;

		fake_start(&f, script, sizeof script / sizeof script[0]);
		d = docker_open(f.host, &e);
		assert_non_null(d);
		c.docker = d;
		c.lab = &lab;
		c.gw_probe_fd = -1;
		rc = lever_pull(lever_find("gateway-deny"), &c, &r);
		assert_true(r.fired);
		if (round == 0) {
			assert_int_equal(rc, 0);
			assert_true(r.verified);
		} else {
			assert_int_equal(rc, -1);
			assert_false(r.verified);
			assert_non_null(strstr(r.detail, "not in force"));
		}
		assert_int_equal(lever_reset(lever_find("gateway-deny"), &c,
		    &e), 0);
		lever_ctx_release(&c);
		docker_close(d);
		fake_stop(&f, true);
	}
	free(a200);
	free(a403);
}

/*
 * The receipt clock (a lab on a remote engine): an event's receipt is the
 * time its line arrived at ares's follower, not the time the drill read
 * the bus socket.  The line arrives, the drill does not read (as on the
 * kill path), then reads: the time it gets is from before the pause.
 * Also: the envelope is required on that bus and refused on a local one.
 */
static void test_stream_receipt(void **state)
{
	static const char json[] = "{\"src\":\"sink\",\"kind\":\"sink\","
	    "\"t_mono_ns\":1}";
	static const char run[] = "run-rcpt";
	static const char boot[] = "00112233445566778899aabbccddeeff";
	uint8_t key[BUS_KEY_BYTES], mac[crypto_auth_hmacsha256_BYTES];
	char hex[2 * sizeof mac + 1], *macd, *line, *logs, dir[64], sock[128];
	size_t llen, loglen;
	struct bus_stream_src src = { .id = "x", .src = "sink",
	    .run_id = run };
	struct bus_stream_stats bs;
	struct bus_event ev;
	struct bus_stream *s;
	struct errbuf e = {0};
	struct docker *d;
	struct fake f;
	uint64_t mark;
	int fd, tx, i;
	(void)state;

	memset(key, 7, sizeof key);
	memcpy(src.key, key, sizeof key);
	macd = xasprintf("%s\n%s 1 %s", run, boot, json);
	crypto_auth_hmacsha256(mac, (const unsigned char *)macd, strlen(macd),
	    key);
	util_hex(mac, sizeof mac, hex);
	line = xasprintf(BUS_LINE_MAGIC "%s %s 1 %s\n", hex, boot, json);
	logs = exec_frame(line, &loglen);
	{
		const struct canned script[] = {
			{ "GET /version ", "200 OK", VERSION_29, 0, false },
			{ "GET /v1.47/containers/x/json ", "200 OK",
			  "{\"State\":{\"Running\":false,\"StartedAt\":"
			  "\"0001-01-01T00:00:00Z\"}}", 0, false },
			{ "GET /v1.47/containers/x/logs?follow=1&stdout=1&"
			  "stderr=0 ", "200 OK", logs, loglen, false },
		};

		fake_start(&f, script, sizeof script / sizeof script[0]);
		snprintf(dir, sizeof dir, "/tmp/ares-tdock-bus-XXXXXX");
		assert_non_null(mkdtemp(dir));
		snprintf(sock, sizeof sock, "%s/b.sock", dir);
		fd = bus_open(sock, &e);
		assert_true(fd >= 0);
		d = docker_open(f.host, &e);
		assert_non_null(d);
		assert_int_equal(docker_negotiate(d, &e), 0);
		s = bus_stream_start(d, sock, &src, 1, &e);
		assert_non_null(s);
		for (i = 0; i < 500 && bus_stream_lines(s) < 1; i++)
			usleep(10000);
		assert_true(bus_stream_lines(s) >= 1);
		mark = util_mono_ns();   /* the line has arrived by now */
		usleep(200000);          /* the drill busy elsewhere */
		/* a local lab's reader refuses the envelope */
		tx = socket(AF_UNIX, SOCK_DGRAM, 0);
		assert_true(tx >= 0);
		assert_int_equal(bus_recv_stream(fd, &ev, &e), 1);
		assert_true(ev.t_recv_ns > 0 && ev.t_recv_ns <= mark);
		assert_string_equal(bus_event_str(&ev, "kind"), "sink");
		assert_int_equal(ev.raw_len, strlen(json));
		bus_event_free(&ev);
		bus_stream_stop(s, &bs);
		assert_int_equal(bs.forwarded, 1);
		assert_int_equal(bs.malformed, 0);
		docker_close(d);
		fake_stop(&f, true);
	}
	{   /* the same bus: a bare datagram is malformed on a remote lab,
	     * an envelope is malformed on a local one */
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char env[BUS_ENV_LEN + sizeof json];

		strcpy(sa.sun_path, sock);
		assert_int_equal(sendto(tx, json, strlen(json), 0,
		    (struct sockaddr *)&sa, sizeof sa), (ssize_t)strlen(json));
		memset(&e, 0, sizeof e);
		assert_int_equal(bus_recv_stream(fd, &ev, &e), -1);
		assert_non_null(strstr(e.msg, "envelope"));
		bus_event_free(&ev);
		llen = bus_envelope(env, sizeof env, util_mono_ns(), json,
		    strlen(json));
		assert_int_equal(llen, BUS_ENV_LEN + strlen(json));
		assert_int_equal(sendto(tx, env, llen, 0,
		    (struct sockaddr *)&sa, sizeof sa), (ssize_t)llen);
		memset(&e, 0, sizeof e);
		assert_int_equal(bus_recv(fd, &ev, &e), -1);
		assert_non_null(strstr(e.msg, "envelope"));
		bus_event_free(&ev);
		/* a time after its reading cannot be an arrival */
		llen = bus_envelope(env, sizeof env, util_mono_ns() +
		    60000000000ull, json, strlen(json));
		assert_int_equal(sendto(tx, env, llen, 0,
		    (struct sockaddr *)&sa, sizeof sa), (ssize_t)llen);
		memset(&e, 0, sizeof e);
		assert_int_equal(bus_recv_stream(fd, &ev, &e), -1);
		assert_non_null(strstr(e.msg, "not before"));
		bus_event_free(&ev);
	}
	close(tx);
	close(fd);
	unlink(sock);
	rmdir(dir);
	free(logs);
	free(line);
	free(macd);
}

/*
 * lab_gateway_call on a remote lab is an exec in the gateway: three engine
 * calls of up to 60 s each.  An exec start that never answers must end
 * within the call's timeout_ms (here 300 ms; the fake hangs 8 s), and the
 * handle's own bound is back as it was after.
 */
static void test_gateway_call_bounded(void **state)
{
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "POST /v1.47/containers/gw/exec ", "201 Created",
		  "{\"Id\":\"e1\"}", 0, false },
		{ "POST /v1.47/exec/e1/start ", NULL, "", 0, false },
	};
	struct lab lab = { 0 };
	struct errbuf e = {0};
	struct docker *d;
	struct fake f;
	uint64_t t0;
	char *body = NULL;
	(void)state;

	lab.remote = true;
	lab.gateway.id = (char *)"gw";
	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), 0);
	t0 = util_mono_ns();
	assert_int_equal(lab_gateway_call(d, &lab, "GET", "/control/health",
	    NULL, NULL, 300, &body, &e), -1);
	/* bounded by timeout_ms, not by the fake's 8 s hang nor the 60 s
	 * call timeout (coarse: a loaded machine is slow, never this slow) */
	assert_true(util_mono_ns() - t0 < 6000000000ull);
	assert_null(body);
	assert_int_equal(docker_set_deadline(d, 0), 0);
	docker_close(d);
	fake_stop(&f, false);
}

/*
 * A remote lab's follower while the drill does not read its bus socket
 * for 4 s (longer than the old 3 s send bound) and 20 lines arrive (the
 * socket queue holds 10): nothing is lost or counted as not sent, and
 * every line reaches the socket, in order, once the drill reads.
 */
static void test_stream_slow_reader(void **state)
{
	static const char run[] = "run-slow";
	static const char boot[] = "00112233445566778899aabbccddeeff";
	uint8_t key[BUS_KEY_BYTES], mac[crypto_auth_hmacsha256_BYTES];
	char hex[2 * sizeof mac + 1], dir[64], sock[128];
	char *logs = NULL;
	size_t loglen = 0;
	struct bus_stream_src src = { .id = "x", .src = "sink",
	    .run_id = run };
	struct bus_stream_stats bs;
	struct bus_stream *s;
	struct errbuf e = {0};
	struct docker *d;
	struct fake f;
	int fd, i, got = 0;
	(void)state;

	memset(key, 9, sizeof key);
	memcpy(src.key, key, sizeof key);
	for (i = 1; i <= 20; i++) {
		char *json = xasprintf("{\"src\":\"sink\",\"kind\":\"sink\","
		    "\"n\":%d}", i);
		char *macd = xasprintf("%s\n%s %d %s", run, boot, i, json);
		char *line, *fr;
		size_t fl;

		crypto_auth_hmacsha256(mac, (const unsigned char *)macd,
		    strlen(macd), key);
		util_hex(mac, sizeof mac, hex);
		line = xasprintf(BUS_LINE_MAGIC "%s %s %d %s\n", hex, boot, i,
		    json);
		fr = exec_frame(line, &fl);
		logs = xrealloc(logs, loglen + fl);
		memcpy(logs + loglen, fr, fl);
		loglen += fl;
		free(fr);
		free(line);
		free(macd);
		free(json);
	}
	{
		const struct canned script[] = {
			{ "GET /version ", "200 OK", VERSION_29, 0, false },
			{ "GET /v1.47/containers/x/json ", "200 OK",
			  "{\"State\":{\"Running\":false,\"StartedAt\":"
			  "\"0001-01-01T00:00:00Z\"}}", 0, false },
			{ "GET /v1.47/containers/x/logs?follow=1&stdout=1&"
			  "stderr=0 ", "200 OK", logs, loglen, false },
		};

		fake_start(&f, script, sizeof script / sizeof script[0]);
		snprintf(dir, sizeof dir, "/tmp/ares-tdock-bus-XXXXXX");
		assert_non_null(mkdtemp(dir));
		snprintf(sock, sizeof sock, "%s/b.sock", dir);
		fd = bus_open(sock, &e);
		assert_true(fd >= 0);
		d = docker_open(f.host, &e);
		assert_non_null(d);
		assert_int_equal(docker_negotiate(d, &e), 0);
		s = bus_stream_start(d, sock, &src, 1, &e);
		assert_non_null(s);
		sleep(4);                /* the drill busy elsewhere */
		for (i = 0; i < 500 && got < 20; i++) {
			struct bus_event ev;
			int rc;

			while ((rc = bus_recv_stream(fd, &ev, &e)) == 1) {
				got++;
				assert_int_equal((int)cJSON_GetNumberValue(
				    cJSON_GetObjectItem(ev.json, "n")), got);
				bus_event_free(&ev);
			}
			assert_int_equal(rc, 0);
			bus_event_free(&ev);
			if (got < 20)
				usleep(10000);
		}
		assert_int_equal(got, 20);
		bus_stream_stop(s, &bs);
		assert_int_equal(bs.forwarded, 20);
		assert_int_equal(bs.send_failed, 0);
		assert_int_equal(bs.lost, 0);
		docker_close(d);
		fake_stop(&f, true);
	}
	close(fd);
	unlink(sock);
	rmdir(dir);
	free(logs);
}

/* ---- DOCKER_HOST -------------------------------------------------- */

static void test_open_host(void **state)
{
	struct errbuf e = {0};
	struct docker *d;
	(void)state;

	d = docker_open("unix:///tmp/nonexistent-ares-test.sock", &e);
	assert_non_null(d);
	assert_string_equal(docker_api_version(d), "");
	assert_false(docker_is_remote(d));
	assert_string_equal(docker_transport_name(d), "unix");
	docker_close(d);

	/* plain tcp: refused without the opt-in, naming the way out */
	unsetenv("DOCKER_TLS_VERIFY");
	unsetenv("DOCKER_TLS");
	unsetenv("ARES_ALLOW_PLAINTEXT_ENGINE");
	assert_null(docker_open("tcp://127.0.0.1:2375", &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "tcp://127.0.0.1:2375"));
	assert_non_null(strstr(e.msg, "ARES_ALLOW_PLAINTEXT_ENGINE=1"));
	assert_non_null(strstr(e.msg, "DOCKER_TLS_VERIFY"));
	/* only "1" opts in */
	setenv("ARES_ALLOW_PLAINTEXT_ENGINE", "yes", 1);
	memset(&e, 0, sizeof e);
	assert_null(docker_open("tcp://127.0.0.1:2375", &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	setenv("ARES_ALLOW_PLAINTEXT_ENGINE", "1", 1);
	d = docker_open("tcp://127.0.0.1", &e);
	assert_non_null(d);
	assert_true(docker_is_remote(d));
	assert_string_equal(docker_transport_name(d), "tcp (plaintext)");
	assert_string_equal(docker_where(d), "tcp://127.0.0.1:2375");
	assert_null(docker_tls_ca(d));
	docker_close(d);
	unsetenv("ARES_ALLOW_PLAINTEXT_ENGINE");

	/* ssh: opened without connecting (no ssh runs before a request);
	 * remote; its private socket goes with docker_close */
	setenv("DOCKER_HOST", "ssh://user@host", 1);
	memset(&e, 0, sizeof e);
	d = docker_open(NULL, &e);
	assert_non_null(d);
	assert_true(docker_is_remote(d));
	assert_string_equal(docker_transport_name(d), "ssh");
	assert_string_equal(docker_where(d), "ssh://user@host");
	docker_close(d);

	setenv("DOCKER_HOST", "unix://relative.sock", 1);
	memset(&e, 0, sizeof e);
	assert_null(docker_open(NULL, &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "DOCKER_HOST"));
	unsetenv("DOCKER_HOST");
}

/* docker_host_parse refuses garbage naming DOCKER_HOST and the bad part. */
static void host_bad(const char *value, const char *part)
{
	struct docker_host h;
	struct errbuf e = {0};

	assert_int_equal(docker_host_parse(value, "DOCKER_HOST", &h, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, "DOCKER_HOST") == NULL ||
	    strstr(e.msg, part) == NULL)
		fail_msg("%s: \"%s\" lacks DOCKER_HOST or \"%s\"", value,
		    e.msg, part);
}

static void test_host_parse(void **state)
{
	struct docker_host h;
	struct errbuf e = {0};
	(void)state;

	assert_int_equal(docker_host_parse("unix:///run/d.sock", "X", &h, &e),
	    0);
	assert_int_equal(h.kind, DOCKER_UNIX);
	assert_string_equal(h.path, "/run/d.sock");

	assert_int_equal(docker_host_parse("tcp://engine.example:2376", "X",
	    &h, &e), 0);
	assert_int_equal(h.kind, DOCKER_TCP);
	assert_string_equal(h.name, "engine.example");
	assert_int_equal(h.port, 2376);
	assert_false(h.ipv6);

	assert_int_equal(docker_host_parse("tcp://10.0.0.2:65535/", "X", &h,
	    &e), 0);
	assert_int_equal(h.port, 65535);

	assert_int_equal(docker_host_parse("tcp://[::1]:2376", "X", &h, &e),
	    0);
	assert_string_equal(h.name, "::1");
	assert_true(h.ipv6);

	assert_int_equal(docker_host_parse("tcp://h", "X", &h, &e), 0);
	assert_int_equal(h.port, 0);

	assert_int_equal(docker_host_parse("ssh://ci-user@build.host:2222",
	    "X", &h, &e), 0);
	assert_int_equal(h.kind, DOCKER_SSH);
	assert_string_equal(h.user, "ci-user");
	assert_string_equal(h.name, "build.host");
	assert_int_equal(h.port, 2222);

	assert_int_equal(docker_host_parse("ssh://h", "X", &h, &e), 0);
	assert_string_equal(h.user, "");
	assert_int_equal(h.port, 0);

	host_bad("", "empty");
	host_bad("http://h:1", "\"http\"");
	host_bad("npipe:////./pipe/docker_engine", "\"npipe\"");
	host_bad("fd://", "\"fd\"");
	host_bad("tcp://", "no host");
	host_bad("tcp://:2376", "no host");
	host_bad("tcp://h:", "bad port \"\"");
	host_bad("tcp://h:0", "bad port \"0\"");
	host_bad("tcp://h:65536", "bad port \"65536\"");
	host_bad("tcp://h:123456", "bad port \"123456\"");
	host_bad("tcp://h:12ab", "bad port \"12ab\"");
	host_bad("tcp://h:1:2", "bad port \"1:2\"");
	host_bad("tcp://h_x:1", "'_'");
	host_bad("tcp://-oProxy:1", "may not start with '-'");
	host_bad("ssh://-oProxyCommand=x", "'='");
	host_bad("ssh://-host", "may not start with '-'");
	host_bad("ssh://-l@host", "bad user \"-l\"");
	host_bad("ssh://a;b@host", "bad user \"a;b\"");
	host_bad("ssh://@host", "bad user \"\"");
	host_bad("tcp://u@h:1", "only goes with ssh://");
	host_bad("tcp://h:1/v1.41", "\"/v1.41\"");
	host_bad("tcp://h:1?x=1", "\"?x=1\"");
	host_bad("tcp://h:1#f", "\"#f\"");
	host_bad("ssh://h/path", "\"/path\"");
	host_bad("tcp://[::1", "closing ']'");
	host_bad("tcp://[]:1", "bad IPv6");
	host_bad("tcp://[::g]:1", "bad IPv6 address \"::g\"");
	host_bad("tcp://[::1]x", "\"x\" after the address");
	host_bad("tcp://h x:1", "offset 7");
	host_bad("tcp://h\n:1", "0x0a");
	host_bad("tcp://h\xc3\xa9:1", "0xc3");
	{
		char big[400];

		memset(big, 'a', sizeof big);
		memcpy(big, "tcp://", 6);
		big[sizeof big - 1] = '\0';
		host_bad(big, "longer than");
	}
}

/* TLS: every certificate file must be there; paths kept, never read. */
static void test_open_tls(void **state)
{
	char dir[] = "/tmp/ares-test-tls.XXXXXX";
	char path[128];
	struct errbuf e = {0};
	struct docker *d;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	setenv("DOCKER_TLS_VERIFY", "1", 1);
	setenv("DOCKER_CERT_PATH", dir, 1);
	assert_null(docker_open("tcp://127.0.0.1:2376", &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "ca.pem"));
	assert_non_null(strstr(e.msg, "docker host=tcp://127.0.0.1:2376"));
	snprintf(path, sizeof path, "%s/ca.pem", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof path, "%s/cert.pem", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	memset(&e, 0, sizeof e);
	assert_null(docker_open("tcp://127.0.0.1:2376", &e));
	assert_non_null(strstr(e.msg, "key.pem"));
	snprintf(path, sizeof path, "%s/key.pem", dir);
	assert_int_equal(mkdir(path, 0700), 0);   /* not a regular file */
	memset(&e, 0, sizeof e);
	assert_null(docker_open("tcp://127.0.0.1:2376", &e));
	assert_non_null(strstr(e.msg, "not a regular file"));
	assert_int_equal(rmdir(path), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	d = docker_open("tcp://127.0.0.1", &e);
	assert_non_null(d);
	assert_string_equal(docker_transport_name(d), "tcp+tls");
	assert_string_equal(docker_where(d), "tcp://127.0.0.1:2376");
	snprintf(path, sizeof path, "%s/ca.pem", dir);
	assert_string_equal(docker_tls_ca(d), path);
	docker_close(d);

	/* the default: ~/.docker */
	unsetenv("DOCKER_CERT_PATH");
	setenv("HOME", dir, 1);
	memset(&e, 0, sizeof e);
	assert_null(docker_open("tcp://127.0.0.1:2376", &e));
	snprintf(path, sizeof path, "%s/.docker/ca.pem", dir);
	assert_non_null(strstr(e.msg, path));
	unsetenv("DOCKER_TLS_VERIFY");

	/* an unreachable TLS engine is ERRBUF_ENGINE naming it */
	setenv("DOCKER_TLS_VERIFY", "1", 1);
	setenv("DOCKER_CERT_PATH", dir, 1);
	memset(&e, 0, sizeof e);
	d = docker_open("tcp://127.0.0.1:1", &e);
	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), -1);
	assert_int_equal(e.code, ERRBUF_ENGINE);
	assert_non_null(strstr(e.msg, "tcp://127.0.0.1:1"));
	docker_close(d);
	unsetenv("DOCKER_TLS_VERIFY");
	unsetenv("DOCKER_CERT_PATH");
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/*
 * An engine that answers an Id that is not 64 lowercase hex digits
 * ("..", a path, upper case, one digit short): container create, network
 * create and exec create each refuse it (ares puts an Id into request
 * paths and host cgroup paths); a good Id is taken.
 */
static void test_fake_bad_ids(void **state)
{
	static const char *const bad[] = {
		"..", "../../x",
		"E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1E1",
		"e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e",
	};
	char bodies[4][128];
	struct canned script[8];
	const char *argv[] = { "true", NULL };
	struct docker_container_spec cs = { .name = "n1", .image = "img" };
	struct docker_network_spec ns = { .name = "net1" };
	struct docker_exec_result r;
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	size_t n = 0, i;
	char *id;
	(void)state;

	script[n++] = (struct canned){ "GET /version ", "200 OK", VERSION_29,
	    0, false };
	for (i = 0; i < 4; i++) {
		snprintf(bodies[i], sizeof bodies[i], "{\"Id\":\"%s\"}", bad[i]);
		script[n++] = (struct canned){ "POST /v1.47/containers/create",
		    "201 Created", bodies[i], 0, false };
	}
	script[n++] = (struct canned){ "POST /v1.47/networks/create",
	    "201 Created", "{\"Id\":\"..\"}", 0, false };
	script[n++] = (struct canned){ "POST /v1.47/containers/c1/exec ",
	    "201 Created", "{\"Id\":\"..\"}", 0, false };
	script[n++] = (struct canned){ "POST /v1.47/containers/create",
	    "201 Created", "{\"Id\":\"" EXEC1 "\"}", 0, false };
	fake_start(&f, script, n);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	for (i = 0; i < 4; i++) {
		memset(&e, 0, sizeof e);
		assert_null(docker_container_create(d, &cs, &e));
		assert_int_equal(e.code, ERRBUF_INTERNAL);
		if (strstr(e.msg, "is not 64 lowercase hex digits") == NULL)
			fail_msg("Id %s: %s", bad[i], e.msg);
	}
	memset(&e, 0, sizeof e);
	assert_null(docker_network_create(d, &ns, &e));
	assert_non_null(strstr(e.msg, "answer's Id '..' is not 64"));
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_exec(d, "c1", argv, NULL, 100, &r, &e), -1);
	assert_non_null(strstr(e.msg, "answer's Id '..' is not 64"));
	memset(&e, 0, sizeof e);
	id = docker_container_create(d, &cs, &e);
	assert_non_null(id);
	assert_string_equal(id, EXEC1);
	free(id);
	docker_close(d);
	fake_stop(&f, true);
	assert_true(docker_id_valid(EXEC1));
	assert_false(docker_id_valid(NULL));
	assert_false(docker_id_valid(""));
	for (i = 0; i < 4; i++)
		assert_false(docker_id_valid(bad[i]));
}

/*
 * A named volume must be new: one that exists (GET /volumes/{name} 200)
 * is refused without a create; a create answered with a volume that has
 * not got this request's nonce (made by someone else between the look
 * and the create: the engine answers with the existing one) is refused;
 * an engine error on the look is an error; a create answered with what
 * was asked (the request echoed, as the engine does) is taken.
 */
static void test_fake_volume_new(void **state)
{
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "GET /v1.47/volumes/ares-r1-home ", "200 OK",
		  "{\"Name\":\"ares-r1-home\",\"Labels\":{\"ares.run\":\"r1\"}}",
		  0, false },
		{ "GET /v1.47/volumes/ares-r1-home ", "404 Not Found",
		  "{\"message\":\"get ares-r1-home: no such volume\"}", 0, false },
		{ "POST /v1.47/volumes/create ", "201 Created",
		  "{\"Name\":\"ares-r1-home\",\"Labels\":{\"ares.run\":\"r1\","
		  "\"ares.role\":\"home\",\"planted\":\"yes\"}}", 0, false },
		{ "GET /v1.47/volumes/ares-r1-home ", "500 Internal Server Error",
		  "{\"message\":\"disk on fire\"}", 0, false },
		{ "GET /v1.47/volumes/ares-r1-home ", "404 Not Found",
		  "{\"message\":\"no such volume\"}", 0, false },
		{ "POST /v1.47/volumes/create ", "201 Created", canned_echo, 0,
		  false },
	};
	struct docker_volume_spec vs = { .name = "ares-r1-home",
	    .run_id = "r1", .role = "home" };
	struct fake f;
	struct errbuf e = {0};
	struct docker *d;
	(void)state;

	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	assert_int_equal(docker_volume_create(d, &vs, &e), -1);
	assert_int_equal(e.code, ERRBUF_INTERNAL);
	assert_non_null(strstr(e.msg, "volume ares-r1-home exists already "
	    "(not made by this run): refusing to adopt it"));
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_volume_create(d, &vs, &e), -1);
	assert_non_null(strstr(e.msg, "answered with another volume"));
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_volume_create(d, &vs, &e), -1);
	assert_non_null(strstr(e.msg, "disk on fire"));
	memset(&e, 0, sizeof e);
	if (docker_volume_create(d, &vs, &e) != 0)
		fail_msg("%s", e.msg);
	docker_close(d);
	fake_stop(&f, true);
}

/* Write s to dir/name (a test fixture). */
static void put_file(const char *dir, const char *name, const char *s)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(s, fp);
	fclose(fp);
}

/*
 * lab_kill_local builds cgroup paths from the lab's container Ids: an Id
 * that is not 64 hex digits names none (here "x", a directory next to the
 * agent's whose cgroup.procs lists a child of this test: the child lives);
 * a remote lab is not stopped through this machine's cgroups at all (the
 * child lives, the note says why); a local lab with a good Id is (the
 * child is killed: the fixture works).
 */
static void test_kill_local_ids(void **state)
{
	static const char agent[] = EXEC1, other[] = EXEC2;
	char dir[] = "/tmp/ares-tcg-XXXXXX", adir[256], sub[256], note[256];
	struct lab lab;
	pid_t child;
	int st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(adir, sizeof adir, "%s/%s", dir, agent);
	assert_int_equal(mkdir(adir, 0700), 0);
	put_file(adir, "cgroup.procs", "");
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		alarm(20);
		pause();
		_exit(0);
	}
	{
		char pid[32];

		snprintf(pid, sizeof pid, "%ld\n", (long)child);
		snprintf(sub, sizeof sub, "%s/x", dir);
		assert_int_equal(mkdir(sub, 0700), 0);
		put_file(sub, "cgroup.procs", pid);
		snprintf(sub, sizeof sub, "%s/%s", dir, other);
		assert_int_equal(mkdir(sub, 0700), 0);
		put_file(sub, "cgroup.procs", pid);
	}
	memset(&lab, 0, sizeof lab);
	lab.agent.id = (char *)agent;
	lab.gateway.id = (char *)"x";
	assert_int_equal(lab_kill_local(&lab, adir, note, sizeof note), 1);
	assert_non_null(strstr(note, "1 container(s) without a cgroup"));
	assert_int_equal(waitpid(child, &st, WNOHANG), 0);
	lab.gateway.id = (char *)other;
	lab.remote = true;
	assert_int_equal(lab_kill_local(&lab, adir, note, sizeof note), 0);
	assert_string_equal(note, "remote engine: its containers cannot be "
	    "stopped from here");
	assert_int_equal(waitpid(child, &st, WNOHANG), 0);
	lab.remote = false;
	/* the fixture's cgroup.procs stays listed: lab_kill_local gives up
	 * after its rounds, the child is dead all the same */
	assert_int_equal(lab_kill_local(&lab, adir, note, sizeof note), 2);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	{
		char cmd[300];

		snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* Inside core: on a remote engine lab up refuses what needs a host path
 * and the kernel levers refuse, before any request (the engine here is a
 * closed port: a request would fail with ERRBUF_ENGINE, not this
 * refusal); a policy a remote lab can have goes on to the engine. */
static void test_core_refuses_remote(void **state)
{
	struct errbuf e = {0};
	struct lever_ctx c;
	struct policy *p;
	struct docker *d;
	(void)state;

	setenv("ARES_ALLOW_PLAINTEXT_ENGINE", "1", 1);
	d = docker_open("tcp://127.0.0.1:1", &e);
	assert_non_null(d);
	p = policy_load(ARES_SRCDIR "/policies/default.yaml", &e);
	assert_non_null(p);
	memset(&e, 0, sizeof e);
	/* the default policy: let through, then the engine does not answer */
	assert_null(lab_up(d, p, "/nonexistent-run-dir", "r1", 1, &e));
	assert_int_equal(e.code, ERRBUF_ENGINE);
	policy_free(p);
	p = policy_load(ARES_SRCDIR "/policies/flaw-docker-socket.yaml", &e);
	assert_non_null(p);
	memset(&e, 0, sizeof e);
	assert_null(lab_up(d, p, "/nonexistent-run-dir", "r1", 1, &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "remote engine (tcp://127.0.0.1:1): flaw "
	    "docker-socket needs"));
	assert_non_null(strstr(e.msg, "local engine only"));
	policy_free(p);
	/* the default policy with lab up's option model_url (ares drill
	 * --model-url): the effective url is refused, before any request */
	p = policy_load(ARES_SRCDIR "/policies/default.yaml", &e);
	assert_non_null(p);
	memset(&e, 0, sizeof e);
	{
		struct lab_options lo = { .model_url = "https://x/v1" };

		assert_null(lab_up_opts(d, p, "/nonexistent-run-dir", "r1", 1,
		    &lo, &e));
	}
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "remote engine (tcp://127.0.0.1:1): a "
	    "real model.url (--model-url) needs the host relay"));
	memset(&c, 0, sizeof c);
	c.docker = d;
	c.agent_pid = 1;
	memset(&e, 0, sizeof e);
	assert_int_equal(lever_kernel_prepare(&c, &e), -1);
	assert_non_null(strstr(e.msg, "kernel levers (cgroup-freeze, "
	    "link-down) need the host kernel; local engine only"));
	policy_free(p);
	docker_close(d);
	unsetenv("ARES_ALLOW_PLAINTEXT_ENGINE");
}

/* Remote engines: what needs the host is refused before anything. */
static void test_require_local(void **state)
{
	struct errbuf e = {0};
	(void)state;

	unsetenv("DOCKER_HOST");
	assert_int_equal(docker_require_local("ares drill", NULL, &e), 0);
	setenv("DOCKER_HOST", "unix:///run/x.sock", 1);
	assert_int_equal(docker_require_local("ares drill", NULL, &e), 0);
	setenv("DOCKER_HOST", "tcp://10.1.2.3:2376", 1);
	assert_int_equal(docker_require_local("ares drill", NULL, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "remote engine (tcp://10.1.2.3:2376): "
	    "ares drill needs"));
	assert_non_null(strstr(e.msg, "local engine only"));
	setenv("DOCKER_HOST", "ssh://h", 1);
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_require_local("ares lab up", NULL, &e), -1);
	assert_non_null(strstr(e.msg, "ares lab up"));
	setenv("DOCKER_HOST", "tcp://h:99999", 1);
	memset(&e, 0, sizeof e);
	assert_int_equal(docker_require_local("ares lab up", NULL, &e), -1);
	assert_non_null(strstr(e.msg, "bad port"));
	unsetenv("DOCKER_HOST");
}

/* An unreachable socket is ERRBUF_ENGINE naming the path. */
static void test_unreachable(void **state)
{
	struct errbuf e = {0};
	struct docker *d;
	(void)state;

	d = docker_open("unix:///tmp/nonexistent-ares-test.sock", &e);
	assert_non_null(d);
	assert_int_equal(docker_negotiate(d, &e), -1);
	assert_int_equal(e.code, ERRBUF_ENGINE);
	assert_non_null(strstr(e.msg, "/tmp/nonexistent-ares-test.sock"));
	memset(&e, 0, sizeof e);
	assert_null(docker_container_inspect(d, "x", &e));
	assert_int_equal(e.code, ERRBUF_ENGINE);
	docker_close(d);

	/* docker_connect: the same error, nothing left open */
	memset(&e, 0, sizeof e);
	assert_null(docker_connect("unix:///tmp/nonexistent-ares-test.sock",
	    &e));
	assert_int_equal(e.code, ERRBUF_ENGINE);
	assert_non_null(strstr(e.msg, "/tmp/nonexistent-ares-test.sock"));
}

/* The agent's Id every lever names it by comes from the engine's inspect:
 * one that is not 64 lowercase hex digits fails the levers' prepare
 * (nothing is fired at a path built from it). */
static void test_prepare_bad_agent_id(void **state)
{
	const struct canned script[] = {
		{ "GET /version ", "200 OK", VERSION_29, 0, false },
		{ "GET /v1.47/containers/agent/json ", "200 OK",
		  "{\"Id\":\"..\",\"State\":{\"Running\":true,\"Pid\":1}}",
		  0, false },
	};
	struct lab lab = { 0 };
	struct lever_ctx c = { 0 };
	struct errbuf e = { 0 };
	struct fake f;
	struct docker *d;
	(void)state;

	lab.agent.id = (char *)"agent";
	lab.agent_key = (char *)"sk-agent-test";
	lab.ctl_path = (char *)"/nonexistent/ctl/gateway.sock";
	fake_start(&f, script, sizeof script / sizeof script[0]);
	d = docker_open(f.host, &e);
	assert_non_null(d);
	c.docker = d;
	c.lab = &lab;
	c.gw_probe_fd = -1;
	c.netns_fd = -1;
	assert_int_equal(lever_ctx_prepare(&c, &e), -1);
	assert_non_null(strstr(e.msg, "64 lowercase hex"));
	assert_false(c.prepared);
	lever_ctx_release(&c);
	docker_close(d);
	fake_stop(&f, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_pick),
		cmocka_unit_test(test_version_pick_message),
		cmocka_unit_test(test_version_cmp),
		cmocka_unit_test(test_error_message),
		cmocka_unit_test(test_container_config),
		cmocka_unit_test(test_container_config_minimal),
		cmocka_unit_test(test_network_config),
		cmocka_unit_test(test_container_config_namespaces),
		cmocka_unit_test(test_inspect_helpers),
		cmocka_unit_test(test_demux_two_frames),
		cmocka_unit_test(test_demux_interleaved),
		cmocka_unit_test(test_demux_truncation),
		cmocka_unit_test(test_demux_malformed),
		cmocka_unit_test(test_demux_zero_and_partial),
		cmocka_unit_test(test_open_host),
		cmocka_unit_test(test_host_parse),
		cmocka_unit_test(test_open_tls),
		cmocka_unit_test(test_volume_config),
		cmocka_unit_test(test_require_local),
		cmocka_unit_test(test_core_refuses_remote),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_fake_negotiate_and_import),
		cmocka_unit_test(test_fake_negotiate_refused),
		cmocka_unit_test(test_fake_deadline),
		cmocka_unit_test(test_fake_clone),
		cmocka_unit_test(test_fake_exec),
		cmocka_unit_test(test_gwctl_exec_truncated),
		cmocka_unit_test(test_deny_remote),
		cmocka_unit_test(test_prepare_bad_agent_id),
		cmocka_unit_test(test_fake_bad_ids),
		cmocka_unit_test(test_fake_volume_new),
		cmocka_unit_test(test_kill_local_ids),
		cmocka_unit_test(test_stream_receipt),
		cmocka_unit_test(test_gateway_call_bounded),
		cmocka_unit_test(test_stream_slow_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
