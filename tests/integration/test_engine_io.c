/*
 * test_engine_io.c - the engine API a lab on a remote engine is built
 * with, against a real Docker Engine (DOCKER_HOST, so also the TLS one of
 * remote_engine.sh): archive PUT into a created container's volume (the
 * ownership of what is put there holds), archive GET back out, bounded
 * (an answer above the cap is an error, never cut) and extracted safely
 * (a symlink or fifo the container made refuses the archive), and the
 * stdout follower (every line from the first, stderr never, overlong and
 * partial lines counted, stop while idle).  And a lab sensor in
 * BUS=stdout mode end to end: the decoy token used against the fake
 * service reaches a bus socket here as the "bait" datagram (through the
 * follower and the MAC check), a forged line in its log does not, and its
 * evidence chain comes out through the archive API and verifies.  And
 * the gateway's control socket without a host path: gwctl_exec (the
 * engine's exec running `ares-lab gwctl` in the gateway) pulls the deny
 * flag, and the gateway's "control" event comes back over the stream.
 * And the remote seal: `ares-lab seal` in a short-lived container in the
 * engine's host network namespace switches IPv6 and ARP answers off on a
 * lab bridge and reads them back (cross-checked in this machine's
 * /proc/sys: both engines of the suite run on this kernel); a bridge that
 * does not exist fails it.
 *
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static struct docker *d;
static char *image;
static char run_id[64];

/* A started-or-not container from the lab image running sh -c script as
 * the sensors' uid, read-only rootfs, no network, an anonymous volume at
 * /evidence.  Caller frees the id. */
static char *
make_container(const char *tag, const char *script, bool start)
{
	const char *const cmd[] = { "/bin/sh", "-c", script, NULL };
	struct docker_mount m = { .target = "/evidence", .volume = true };
	struct docker_container_spec s = {0};
	struct errbuf e = {0};
	char *name = xasprintf("ares-%s-%s", run_id, tag);
	char *id;

	s.name = name;
	s.image = image;
	s.cmd = cmd;
	s.user = "65533:65533";
	s.network = "none";
	s.mounts = &m;
	s.nmounts = 1;
	s.run_id = run_id;
	s.role = tag;
	s.drop_all_caps = true;
	s.no_new_privileges = true;
	s.read_only_rootfs = true;
	s.no_healthcheck = true;
	id = docker_container_create(d, &s, &e);
	if (id == NULL)
		fail_msg("create %s: %s", tag, e.msg);
	free(name);
	if (start && docker_container_start(d, id, &e) < 0)
		fail_msg("start %s: %s", tag, e.msg);
	return id;
}

/* Collected lines of a follower. */
struct lines {
	pthread_mutex_t mu;
	char *v[16];
	size_t n;
};

static void
collect(void *ctx, const char *line, size_t len, uint64_t t)
{
	struct lines *l = ctx;
	assert_int_equal(strlen(line), len);
	assert_true(t > 0);
	pthread_mutex_lock(&l->mu);
	if (l->n < 16)
		l->v[l->n++] = xstrdup(line);
	pthread_mutex_unlock(&l->mu);
}

static void
lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	pthread_mutex_destroy(&l->mu);
}

static char *
mkscratch(void)
{
	char *dir = xstrdup("/tmp/ares-test-engine-io.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void
test_archive_put_get(void **state)
{
	static const struct archive_limits lim = { 64, 1 << 20, 4 << 20 };
	struct archive_tar t;
	struct archive_stats st;
	struct errbuf e = {0};
	struct lines l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct docker_follow *f;
	struct docker_follow_stats fs;
	char *id, *tar, *dir, *p, *s;
	char big[3000];
	size_t len;
	(void)state;

	memset(big, 'b', sizeof big);
	/* the sensor writes into the directory put there for it, as itself */
	id = make_container("io", "cat /evidence/c/in > /evidence/c/out && "
	    "cp /evidence/c/big /evidence/c/big2 && id -u > /evidence/c/uid && "
	    "ln -s /etc/passwd /evidence/h/link && mkfifo /evidence/h/fifo && "
	    "echo ready && sleep 60", false);
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "c", 0700, 65533, 65533, &e), 0);
	assert_int_equal(archive_tar_dir(&t, "h", 0700, 65533, 65533, &e), 0);
	assert_int_equal(archive_tar_file(&t, "c/in", 0600, 65533, 65533,
	    "planted\n", 8, &e), 0);
	assert_int_equal(archive_tar_file(&t, "c/big", 0600, 65533, 65533, big,
	    sizeof big, &e), 0);
	archive_tar_finish(&t);
	if (docker_archive_put(d, id, "/evidence", t.buf, t.len, &e) < 0)
		fail_msg("put: %s", e.msg);
	/* the read-only rootfs refuses it */
	assert_int_equal(docker_archive_put(d, id, "/etc", t.buf, t.len, &e),
	    -1);
	assert_non_null(strstr(e.msg, "read-only"));
	archive_tar_free(&t);

	/* a created container's stream ends at once (nothing runs yet) */
	f = docker_follow_start(d, id, NULL, 256, collect, &l, &e);
	assert_non_null(f);
	assert_int_equal(docker_follow_wait(f, 20000), 1);
	docker_follow_stop(f, &fs);
	assert_true(fs.ended);
	assert_int_equal(fs.lines, 0);
	assert_int_equal(docker_container_start(d, id, &e), 0);
	f = docker_follow_start(d, id, NULL, 256, collect, &l, &e);
	assert_non_null(f);
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&l.mu);
		size_t n = l.n;
		pthread_mutex_unlock(&l.mu);
		if (n > 0)
			break;
		usleep(50000);
	}
	docker_follow_stop(f, &fs);
	if (l.n != 1) {
		char *log = docker_container_logs(d, id, 4096, &e);
		fail_msg("lines %zu, follower \"%s\", log: %s", l.n, fs.error,
		    log != NULL ? log : e.msg);
	}
	assert_string_equal(l.v[0], "ready");
	assert_string_equal(fs.error, "");
	lines_free(&l);

	tar = docker_archive_get(d, id, "/evidence/c", 1 << 20, &len, &e);
	if (tar == NULL)
		fail_msg("get: %s", e.msg);
	dir = mkscratch();
	if (archive_extract(tar, len, dir, 1, &lim, &st, &e) < 0)
		fail_msg("extract: %s", e.msg);
	free(tar);
	assert_int_equal(st.files, 5);   /* in big uid out big2 */
	p = xasprintf("%s/out", dir);
	s = util_read_file(p, 4096, &len, &e);
	assert_non_null(s);
	assert_int_equal(len, 8);
	assert_memory_equal(s, "planted\n", 8);
	free(s);
	free(p);
	p = xasprintf("%s/uid", dir);
	s = util_read_file(p, 4096, &len, &e);
	assert_non_null(s);
	assert_string_equal(s, "65533\n");
	free(s);
	free(p);
	p = xasprintf("%s/big2", dir);
	s = util_read_file(p, 1 << 20, &len, &e);
	assert_int_equal(len, sizeof big);
	assert_memory_equal(s, big, sizeof big);
	free(s);
	free(p);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);

	/* above the cap: an error, never a cut archive */
	assert_null(docker_archive_get(d, id, "/evidence/c", 2048, &len, &e));
	assert_non_null(strstr(e.msg, "exceeds 2048 bytes"));
	/* a missing path */
	assert_null(docker_archive_get(d, id, "/evidence/nothing", 1 << 20,
	    &len, &e));
	assert_int_equal(e.code, ERRBUF_INTERNAL);

	/* what the container made there is untrusted: a link refuses it */
	tar = docker_archive_get(d, id, "/evidence/h", 1 << 20, &len, &e);
	assert_non_null(tar);
	dir = mkscratch();
	assert_int_equal(archive_extract(tar, len, dir, 1, &lim, &st, &e), -1);
	if (strstr(e.msg, "type '2' refused") == NULL &&
	    strstr(e.msg, "type '6' refused") == NULL)
		fail_msg("not refused as a link or fifo: %s", e.msg);
	assert_int_equal(st.files, 0);
	free(tar);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);

	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	free(id);
}

static void
test_follow_lines(void **state)
{
	struct lines l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct docker_follow *f;
	struct docker_follow_stats fs;
	struct errbuf e = {0};
	char *id;
	(void)state;

	/* lines before the follower starts are read too: it starts with the
	 * container's first line */
	id = make_container("follow", "echo one; echo not-this >&2; "
	    "printf '%0300d\\n' 0; printf '%0256d\\n' 7; echo two; "
	    "printf partial", false);
	assert_int_equal(docker_container_start(d, id, &e), 0);
	usleep(300000);
	f = docker_follow_start(d, id, NULL, 256, collect, &l, &e);
	assert_non_null(f);
	assert_int_equal(docker_follow_wait(f, 20000), 1);
	docker_follow_stop(f, &fs);
	assert_string_equal(fs.error, "");
	assert_true(fs.ended);
	assert_int_equal(fs.lines, 3);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "one");
	assert_int_equal(strlen(l.v[1]), 256);   /* exactly line_max passes */
	assert_int_equal(l.v[1][255], '7');
	assert_string_equal(l.v[2], "two");
	assert_int_equal(fs.overlong, 1);
	assert_int_equal(fs.partial, 1);
	lines_free(&l);
	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	free(id);
}

static void
test_follow_stop_idle(void **state)
{
	struct lines l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct docker_follow *f;
	struct docker_follow_stats fs;
	struct errbuf e = {0};
	char *id;
	(void)state;

	id = make_container("idle", "echo hello; exec sleep 60", true);
	f = docker_follow_start(d, id, NULL, 64, collect, &l, &e);
	assert_non_null(f);
	assert_int_equal(docker_follow_wait(f, 1500), 0);   /* still open */
	docker_follow_stop(f, &fs);
	assert_false(fs.ended);
	assert_string_equal(fs.error, "");
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "hello");
	lines_free(&l);
	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	free(id);

	/* a container that does not exist: the stream fails, named */
	f = docker_follow_start(d, "ares-no-such-container", NULL, 64,
	    collect, &l,
	    &e);
	assert_non_null(f);
	assert_int_equal(docker_follow_wait(f, 20000), 1);
	docker_follow_stop(f, &fs);
	assert_non_null(strstr(fs.error, "ares-no-such-container"));
}


static void
test_sensor_stream(void **state)
{
	static const struct archive_limits lim = { 64, 1 << 20, 4 << 20 };
	const char *const cmd[] = { "/bin/ares-lab", "service", NULL };
	struct docker_mount m = { .target = "/evidence", .volume = true };
	struct docker_container_spec sp = {0};
	struct bus_stream_src src = { .src = "service:tickets",
	    .run_id = run_id };
	struct bus_stream_stats bst;
	struct bus_stream *bs;
	struct archive_tar t;
	struct archive_stats ast;
	struct evidence_verify_result vr;
	struct errbuf e = {0};
	char hex[2 * BUS_KEY_BYTES + 1], *env[12], *dir, *sock, *name, *id;
	char *tar, *chain;
	size_t len;
	int bfd, baits = 0, requests = 0, forged = 0;
	(void)state;

	randombytes_buf(src.key, sizeof src.key);
	util_hex(src.key, sizeof src.key, hex);
	dir = mkscratch();
	sock = xasprintf("%s/bus.sock", dir);
	bfd = bus_open(sock, &e);
	assert_true(bfd >= 0);

	env[0] = xstrdup("SERVICE_NAME=tickets");
	env[1] = xstrdup("SERVICE_LISTEN=127.0.0.1:8080");
	env[2] = xstrdup("DECOY_TOKEN=tok-decoy-1");
	env[3] = xstrdup("BAIT_NAME=tickets-admin-token");
	env[4] = xstrdup("BUS=stdout");
	/* the key as a file put before start, not in the configuration */
	env[5] = xstrdup("BUS_KEY_FILE=/evidence/c/bus.key");
	env[6] = xasprintf("RUN_ID=%s", run_id);
	env[7] = xstrdup("EVIDENCE=/evidence/c/service-tickets.jsonl");
	env[8] = xstrdup("ADMIN_OPEN=0");
	env[9] = NULL;
	name = xasprintf("ares-%s-sensor", run_id);
	sp.name = name;
	sp.image = image;
	sp.cmd = cmd;
	sp.env = (const char *const *)env;
	sp.user = "65533:65533";
	sp.network = "none";
	sp.mounts = &m;
	sp.nmounts = 1;
	sp.run_id = run_id;
	sp.role = "service";
	sp.drop_all_caps = true;
	sp.no_new_privileges = true;
	sp.read_only_rootfs = true;
	sp.no_healthcheck = true;
	id = docker_container_create(d, &sp, &e);
	if (id == NULL)
		fail_msg("create: %s", e.msg);
	for (int i = 0; env[i] != NULL; i++)
		free(env[i]);
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "c", 0700, 65533, 65533, &e), 0);
	assert_int_equal(archive_tar_file(&t, "c/bus.key", 0400, 65533, 65533,
	    hex, strlen(hex), &e), 0);
	archive_tar_finish(&t);
	assert_int_equal(docker_archive_put(d, id, "/evidence", t.buf, t.len,
	    &e), 0);
	archive_tar_free(&t);
	{
		cJSON *ins = docker_container_inspect(d, id, &e);
		char *txt;

		assert_non_null(ins);
		txt = cJSON_PrintUnformatted(ins);
		assert_null(strstr(txt, hex));   /* not in docker inspect */
		free(txt);
		cJSON_Delete(ins);
	}
	assert_int_equal(docker_container_start(d, id, &e), 0);
	src.id = id;
	bs = bus_stream_start(d, sock, &src, 1, &e);
	if (bs == NULL)
		fail_msg("bus stream: %s", e.msg);

	/* the bait, as an agent would use it (busybox wget, inside the
	 * service's own network namespace: it has none other); tried until
	 * the service listens; then a path that spells a forged bus line
	 * (the service logs the path it was asked; no MAC, no event) */
	for (int i = 0; i < 50; i++) {
		static const char *const bait[] = { "/bin/wget", "-q", "-O",
		    "/dev/null", "--header", "Authorization: Bearer tok-decoy-1",
		    "http://127.0.0.1:8080/api/tickets", NULL };
		struct docker_exec_result r;
		if (docker_exec(d, id, bait, NULL, 4096, &r, &e) < 0)
			fail_msg("exec: %s", e.msg);
		int code = r.exit_code;
		docker_exec_result_free(&r);
		if (code == 0)
			break;
		usleep(100000);
	}
	{
		static const char *const forge[] = { "/bin/wget", "-q", "-O",
		    "/dev/null", "http://127.0.0.1:8080/x%0aARESBUS1%20"
		    "0000000000000000000000000000000000000000000000000000000000000000"
		    "%20%7B%22src%22:%22service:tickets%22,%22kind%22:%22bait%22%7D",
		    NULL };
		struct docker_exec_result r;
		if (docker_exec(d, id, forge, NULL, 4096, &r, &e) == 0)
			docker_exec_result_free(&r);
	}
	for (int i = 0; i < 100 && (baits == 0 || requests < 2); i++) {
		struct pollfd pfd = { .fd = bfd, .events = POLLIN };
		struct bus_event ev;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		while (bus_recv_stream(bfd, &ev, &e) == 1) {
			const char *k = bus_event_str(&ev, "kind");
			assert_string_equal(bus_event_str(&ev, "src"),
			    "service:tickets");
			assert_true(ev.t_sent_ns > 0);
			if (strcmp(k, "bait") == 0) {
				baits++;
				/* one kernel here (the TLS engine too): comparable */
				printf("bait: sensor to bus socket %.1f ms via "
				    "%s\n", (double)(ev.t_recv_ns - ev.t_sent_ns) /
				    1e6, docker_where(d));
				assert_string_equal(bus_event_str(&ev, "bait"),
				    "tickets-admin-token");
				assert_string_equal(bus_event_str(&ev, "via"),
				    "bearer");
			} else if (strcmp(k, "request") == 0) {
				requests++;
			}
			if (strstr(ev.raw, "\"kind\":\"bait\"}") != NULL)
				forged++;
			bus_event_free(&ev);
		}
	}
	assert_int_equal(baits, 1);
	assert_true(requests >= 2);
	assert_int_equal(forged, 0);
	/* the running sensor's own environment block does not hold the key
	 * and the key file is gone (the archive below holds the chain only) */
	{
		static const char *const cat[] = { "/bin/cat", "/proc/1/environ",
		    "/evidence/c/bus.key", NULL };
		struct docker_exec_result r;

		if (docker_exec(d, id, cat, NULL, 65536, &r, &e) < 0)
			fail_msg("exec: %s", e.msg);
		assert_int_not_equal(r.exit_code, 0);   /* no bus.key */
		assert_non_null(memmem(r.err, r.err_len, "bus.key", 7));
		assert_non_null(memmem(r.out, r.out_len, "RUN_ID=", 7));
		assert_null(memmem(r.out, r.out_len, hex, strlen(hex)));
		docker_exec_result_free(&r);
	}
	assert_int_equal(docker_container_kill(d, id, "SIGKILL", &e), 0);
	bus_stream_stop(bs, &bst);
	assert_true(bst.forwarded >= 3);
	assert_int_equal(bst.send_failed, 0);
	assert_int_equal(bst.overlong, 0);
	assert_int_equal(bst.repeated, 0);
	assert_int_equal(bst.lost, 0);

	/* the chain, out through the archive API, verifies */
	tar = docker_archive_get(d, id, "/evidence/c", 4 << 20, &len, &e);
	if (tar == NULL)
		fail_msg("get: %s", e.msg);
	assert_int_equal(archive_extract(tar, len, dir, 1, &lim, &ast, &e), 0);
	free(tar);
	assert_int_equal(ast.files, 1);
	chain = xasprintf("%s/service-tickets.jsonl", dir);
	assert_int_equal(evidence_verify_file(chain, run_id, &vr, &e), 0);
	assert_true(vr.ok);
	assert_true(vr.entries >= 4);   /* genesis, bait, 2 requests */
	free(chain);

	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	close(bfd);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
	free(sock);
	free(name);
	free(id);
}


/* Put an empty directory c/ owned by the sensors' uid into dir of id. */
static void
put_dir(const char *id, const char *dir)
{
	struct archive_tar t;
	struct errbuf e = {0};

	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "c", 0700, 65533, 65533, &e), 0);
	archive_tar_finish(&t);
	if (docker_archive_put(d, id, dir, t.buf, t.len, &e) < 0)
		fail_msg("put %s: %s", dir, e.msg);
	archive_tar_free(&t);
}

static void
test_gateway_control_exec(void **state)
{
	const char *const cmd[] = { "/bin/ares-lab", "gateway", NULL };
	struct docker_mount m[2] = {
		{ .target = "/evidence", .volume = true },
		{ .target = "/ctl", .volume = true },
	};
	struct docker_container_spec sp = {0};
	struct bus_stream_src src = { .src = "gateway",
	    .run_id = run_id };
	struct bus_stream_stats bst;
	struct bus_stream *bs;
	struct errbuf e = {0};
	char hex[2 * BUS_KEY_BYTES + 1], *env[12], *dir, *sock, *name, *id;
	char *body = NULL;
	int bfd, st = 0, denies = 0;
	uint64_t t0, t1;
	(void)state;

	randombytes_buf(src.key, sizeof src.key);
	util_hex(src.key, sizeof src.key, hex);
	dir = mkscratch();
	sock = xasprintf("%s/bus.sock", dir);
	bfd = bus_open(sock, &e);
	assert_true(bfd >= 0);
	env[0] = xstrdup("GATEWAY_LISTEN=127.0.0.1:8080");
	env[1] = xstrdup("GATEWAY_CONTROL=/ctl/c/gateway.sock");
	env[2] = xstrdup("MODEL_URL=http://127.0.0.1:9");
	env[3] = xstrdup("AGENT_KEY=sk-agent-test");
	env[4] = xstrdup("REAL_KEY=sk-real-test");
	env[5] = xstrdup("BUS=stdout");
	env[6] = xasprintf("BUS_KEY=%s", hex);
	env[7] = xasprintf("RUN_ID=%s", run_id);
	env[8] = xstrdup("EVIDENCE=/evidence/c/gateway.jsonl");
	env[9] = NULL;
	name = xasprintf("ares-%s-gateway", run_id);
	sp.name = name;
	sp.image = image;
	sp.cmd = cmd;
	sp.env = (const char *const *)env;
	sp.user = "65533:65533";
	sp.network = "none";
	sp.mounts = m;
	sp.nmounts = 2;
	sp.run_id = run_id;
	sp.role = "gateway";
	sp.drop_all_caps = true;
	sp.no_new_privileges = true;
	sp.read_only_rootfs = true;
	sp.no_healthcheck = true;
	id = docker_container_create(d, &sp, &e);
	if (id == NULL)
		fail_msg("create: %s", e.msg);
	for (int i = 0; env[i] != NULL; i++)
		free(env[i]);
	put_dir(id, "/evidence");
	put_dir(id, "/ctl");
	assert_int_equal(docker_container_start(d, id, &e), 0);
	src.id = id;
	bs = bus_stream_start(d, sock, &src, 1, &e);
	assert_non_null(bs);

	/* the exec's client must find the socket in the gateway's own
	 * GATEWAY_CONTROL (the exec inherits the container's environment) */
	for (int i = 0; i < 50 && st != 200; i++) {
		st = gwctl_exec(d, id, NULL, "GET", "/control/health", NULL,
		    NULL, &e);
		if (st != 200)
			usleep(100000);
	}
	if (st != 200)
		fail_msg("health: %d %s", st, e.msg);
	t0 = util_mono_ns();
	st = gwctl_exec(d, id, NULL, "POST", "/control/deny", "{}", &body, &e);
	t1 = util_mono_ns();
	if (st != 200)
		fail_msg("deny: %d %s", st, e.msg);
	printf("gateway deny via exec: %.1f ms (%s)\n", (double)(t1 - t0) / 1e6,
	    docker_where(d));
	assert_non_null(body);
	free(body);
	for (int i = 0; i < 50 && denies == 0; i++) {
		struct pollfd pfd = { .fd = bfd, .events = POLLIN };
		struct bus_event ev;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		while (bus_recv_stream(bfd, &ev, &e) == 1) {
			if (strcmp(bus_event_str(&ev, "kind"), "control") == 0 &&
			    strcmp(bus_event_str(&ev, "action"), "deny") == 0)
				denies++;
			bus_event_free(&ev);
		}
	}
	assert_int_equal(denies, 1);

	/* the client refuses what is not a request line's word */
	assert_int_equal(gwctl_exec(d, id, NULL, "POST", "/control/deny x",
	    NULL, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "exit 2"));

	/* the bearer reaches the gateway through the exec: while denied the
	 * agent's key gets 403 (lab_gateway_call on a remote lab); allowed
	 * again, a chat without it 401, with it past the key check (400: no
	 * messages); the client takes no option in a method's place */
	{
		struct lab rl = { 0 };
		struct lever_ctx lc = { 0 };
		struct lever_result lr = { 0 };
		const struct lever_entry *deny = lever_find("gateway-deny");

		rl.remote = true;
		rl.gateway.id = id;
		rl.agent_key = (char *)"sk-agent-test";
		st = lab_gateway_call(d, &rl, "POST", "/v1/chat/completions",
		    "sk-agent-test", "{}", 2000, NULL, &e);
		if (st != 403)
			fail_msg("denied chat: %d %s", st, e.msg);
		assert_int_equal(gwctl_exec(d, id, NULL, "POST",
		    "/control/allow", "{}", NULL, &e), 200);
		assert_int_equal(lab_gateway_call(d, &rl, "POST",
		    "/v1/chat/completions", NULL, "{}", 2000, NULL, &e), 401);
		assert_int_equal(lab_gateway_call(d, &rl, "POST",
		    "/v1/chat/completions", "sk-agent-test", "{}", 2000, NULL,
		    &e), 400);
		assert_int_equal(lab_gateway_call(d, &rl, "POST",
		    "/v1/chat/completions", "sk-other", "{}", 2000, NULL, &e),
		    401);
		/* the deny lever through the exec: fired, verified (403),
		 * reset */
		lc.docker = d;
		lc.lab = &rl;
		lc.gw_probe_fd = -1;
		if (lever_pull(deny, &lc, &lr) != 0)
			fail_msg("deny lever via exec: %s", lr.detail);
		assert_true(lr.verified);
		assert_int_equal(lever_reset(deny, &lc, &e), 0);
		assert_int_equal(lab_gateway_call(d, &rl, "POST",
		    "/v1/chat/completions", "sk-agent-test", "{}", 2000, NULL,
		    &e), 400);
		lever_ctx_release(&lc);
		/* what the client itself refuses (exit 2) */
		{
			static const char *const bad[][6] = {
				{ "--bearer", NULL },
				{ "--bearer", "a b", "GET", "/control/health",
				  NULL },
				{ "-x", "/control/health", NULL },
				{ "get", "/control/health", NULL },
				{ "GET", "--bearer", "k", NULL },
			};
			for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
				const char *argv[8] = { "/bin/ares-lab", "gwctl" };
				struct docker_exec_result r;
				size_t j;

				for (j = 0; bad[k][j] != NULL; j++)
					argv[2 + j] = bad[k][j];
				argv[2 + j] = NULL;
				if (docker_exec(d, id, argv, NULL, 65536, &r, &e) < 0)
					fail_msg("exec: %s", e.msg);
				if (r.exit_code != 2)
					fail_msg("case %zu: exit %d", k, r.exit_code);
				docker_exec_result_free(&r);
			}
		}
	}

	/* BUS_KEY given in the environment: the running gateway's own
	 * environment block no longer holds it (cleared in place at start,
	 * not only unset) */
	{
		static const char *const cat[] = { "/bin/cat", "/proc/1/environ",
		    NULL };
		struct docker_exec_result r;

		if (docker_exec(d, id, cat, NULL, 65536, &r, &e) < 0)
			fail_msg("exec: %s", e.msg);
		assert_int_equal(r.exit_code, 0);
		assert_non_null(memmem(r.out, r.out_len, "RUN_ID=", 7));
		assert_null(memmem(r.out, r.out_len, hex, strlen(hex)));
		docker_exec_result_free(&r);
	}

	assert_int_equal(docker_container_kill(d, id, "SIGKILL", &e), 0);
	bus_stream_stop(bs, &bst);
	assert_int_equal(bst.malformed, 0);
	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	close(bfd);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
	free(sock);
	free(name);
	free(id);
}


static void
test_remote_seal(void **state)
{
	struct docker_network_spec ns = {0};
	struct errbuf e = {0};
	cJSON *rec = NULL;
	char br[16], *net, *netid, *p, *v;
	size_t len;
	const char *bridges[1];
	uint8_t r[3];
	(void)state;

	/* the parser first: what must not pass */
	{
		static const char *const two[] = { "aresa", "aresb" };
		static const char good[] = "{\"bridge\":\"aresa\",\"ipv6\":true,"
		    "\"disable_ipv6\":\"1\",\"arp_ignore\":\"8\"}\n"
		    "{\"bridge\":\"aresb\",\"ipv6\":false,"
		    "\"disable_ipv6\":\"\",\"arp_ignore\":\"8\"}\n";
		static const char arp0[] = "{\"bridge\":\"aresa\",\"ipv6\":true,"
		    "\"disable_ipv6\":\"1\",\"arp_ignore\":\"0\"}\n";
		static const char v6on[] = "{\"bridge\":\"aresa\",\"ipv6\":true,"
		    "\"disable_ipv6\":\"0\",\"arp_ignore\":\"8\"}\n";
		assert_int_equal(hostfw_remote_parse(good, strlen(good), two, 2,
		    &rec, &e), 0);
		assert_int_equal(cJSON_GetArraySize(rec), 2);
		cJSON_Delete(rec);
		assert_int_equal(hostfw_remote_parse(good, strlen(good), two, 1,
		    &rec, &e), -1);
		assert_int_equal(hostfw_remote_parse(arp0, strlen(arp0), two, 1,
		    &rec, &e), -1);
		assert_non_null(strstr(e.msg, "arp_ignore=\"0\""));
		assert_int_equal(hostfw_remote_parse(v6on, strlen(v6on), two, 1,
		    &rec, &e), -1);
		assert_int_equal(hostfw_remote_parse(good, 10, two, 2, &rec, &e),
		    -1);
		assert_int_equal(hostfw_remote_parse("", 0, two, 1, &rec, &e), -1);
		assert_null(rec);
	}

	randombytes_buf(r, sizeof r);
	snprintf(br, sizeof br, "aresrs%02x%02x%02x", r[0], r[1], r[2]);
	net = xasprintf("ares-%s-sealnet", run_id);
	ns.name = net;
	ns.run_id = run_id;
	ns.bridge_name = br;
	ns.no_host_address = true;
	netid = docker_network_create(d, &ns, &e);
	if (netid == NULL)
		fail_msg("network: %s", e.msg);
	bridges[0] = br;
	if (hostfw_remote_seal(d, image, run_id, bridges, 1, &rec, &e) < 0)
		fail_msg("seal: %s", e.msg);
	assert_int_equal(cJSON_GetArraySize(rec), 1);
	assert_string_equal(util_json_str(cJSON_GetArrayItem(rec, 0),
	    "arp_ignore", ""), "8");
	cJSON_Delete(rec);
	p = xasprintf("/proc/sys/net/ipv4/conf/%s/arp_ignore", br);
	v = util_read_file(p, 64, &len, &e);
	assert_non_null(v);
	assert_true(len >= 1 && v[0] == '8' && (len == 1 || v[1] == '\n'));
	free(v);
	free(p);
	assert_int_equal(docker_network_remove(d, netid, &e), 0);

	/* gone: nothing reads back, the seal fails and says which */
	assert_int_equal(hostfw_remote_seal(d, image, run_id, bridges, 1, &rec,
	    &e), -1);
	assert_non_null(strstr(e.msg, br));
	assert_null(rec);
	free(netid);
	free(net);
}


/* MACed bus lines for src "dns" (this run, one boot), numbered 1..n,
 * each padded to ~700 bytes, into one buffer (caller frees). */
static char *
numbered_lines(const uint8_t *key, int n, size_t *len)
{
	struct util_buf b;
	char pad[640];

	memset(pad, 'p', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	util_buf_init(&b, (size_t)n * 800);
	for (int i = 1; i <= n; i++) {
		uint8_t mac[crypto_auth_hmacsha256_BYTES];
		char hex[2 * sizeof mac + 1];
		char *body = xasprintf("%032d %d {\"src\":\"dns\",\"kind\":"
		    "\"dns_query\",\"t_mono_ns\":1,\"i\":%d,\"name\":\"%s\"}",
		    7, i, i, pad);
		char *macd = xasprintf("%s\n%s", run_id, body);
		crypto_auth_hmacsha256(mac, (const unsigned char *)macd,
		    strlen(macd), key);
		util_hex(mac, sizeof mac, hex);
		util_buf_printf(&b, BUS_LINE_MAGIC "%s %s\n", hex, body);
		free(macd);
		free(body);
	}
	*len = b.len;
	return b.s;
}

/* More than the engine's 1 MiB log (one file): the log reader rotates and
 * replays lines (Engine 20.10); every number reaches the bus once. */
static void
test_stream_rotation(void **state)
{
	const int n = 2500;
	struct bus_stream_src src = { .src = "dns", .run_id = run_id };
	struct bus_stream_stats bst;
	struct bus_stream *bs;
	struct archive_tar t;
	struct errbuf e = {0};
	char *dir, *sock, *id, *lines;
	unsigned char *seen;
	size_t len;
	int bfd, got = 0, dup = 0, last = 0;
	(void)state;

	randombytes_buf(src.key, sizeof src.key);
	lines = numbered_lines(src.key, n, &len);
	assert_true(len > (1u << 20) + (1u << 19));
	dir = mkscratch();
	sock = xasprintf("%s/bus.sock", dir);
	bfd = bus_open(sock, &e);
	assert_true(bfd >= 0);
	id = make_container("rot", "sleep 1; cat /evidence/c/lines; sleep 3",
	    false);
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "c", 0700, 65533, 65533, &e), 0);
	assert_int_equal(archive_tar_file(&t, "c/lines", 0600, 65533, 65533,
	    lines, len, &e), 0);
	archive_tar_finish(&t);
	assert_int_equal(docker_archive_put(d, id, "/evidence", t.buf, t.len,
	    &e), 0);
	archive_tar_free(&t);
	free(lines);
	assert_int_equal(docker_container_start(d, id, &e), 0);
	src.id = id;
	bs = bus_stream_start(d, sock, &src, 1, &e);
	assert_non_null(bs);
	seen = xcalloc((size_t)n + 1, 1);
	for (int idle = 0; idle < 60 && got < n;) {
		struct pollfd pfd = { .fd = bfd, .events = POLLIN };
		struct bus_event ev;
		if (poll(&pfd, 1, 100) <= 0) {
			idle++;
			continue;
		}
		idle = 0;
		while (bus_recv_stream(bfd, &ev, &e) == 1) {
			int i = util_json_int(ev.json, "i", 0);
			assert_true(i >= 1 && i <= n);
			if (seen[i])
				dup++;
			else
				got++;
			seen[i] = 1;
			if (i > last)
				last = i;
			bus_event_free(&ev);
		}
	}
	bus_stream_stop(bs, &bst);
	printf("rotation: %d of %d numbers, %zu repeated lines dropped, %zu "
	    "lost, %d after the last one delivered\n", got, n, bst.repeated,
	    bst.lost, n - last);
	/* never twice, and every number either on the bus or counted as
	 * lost: the reader can also skip lines at a rotation (Engine 20.10
	 * here: 1108 or 1150 of 2500 in about one run of four, the same
	 * with the code before boot nonces), which is why a lost line must
	 * fail the run closed (docs/sensors.md).  Lines skipped after the
	 * last one delivered have no later number to show the gap (seen
	 * here once under load: 2296 of 2500 delivered or lost): numbering
	 * cannot tell them, the chain can (a chain event never received is
	 * untimed on the receipt clock, an error: docs/scoring.md); so
	 * every number up to the last delivered is on the bus or lost */
	assert_int_equal(dup, 0);
	assert_true(last > 0);
	assert_int_equal((size_t)got + bst.lost, (size_t)last);
	assert_int_equal(bst.forwarded, (size_t)got);
	assert_int_equal(bst.malformed, 0);
	assert_int_equal(bst.stale, 0);
	assert_int_equal(bst.restarts, 0);
	free(seen);
	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	free(id);
	close(bfd);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
	free(sock);
}

/* Lines of id's log that carry the bus magic (-1: logs failed). */
static int
bus_lines_logged(const char *id)
{
	struct errbuf e = {0};
	char *log = docker_container_logs(d, id, 1 << 20, &e), *p;
	int n = 0;

	if (log == NULL)
		return -1;
	for (p = log; (p = strstr(p, BUS_LINE_MAGIC)) != NULL; p++)
		n++;
	free(log);
	return n;
}

/* One request to the sink in id (inside its own network namespace), tried
 * until it connects; then wait until the log holds want bus lines. */
static void
sink_hit(const char *id, const char *path, int want)
{
	char *sh = xasprintf("printf 'GET /%s HTTP/1.0\\r\\n\\r\\n' | "
	    "nc -w1 127.0.0.1 8080 >/dev/null", path);
	const char *const argv[] = { "/bin/sh", "-c", sh, NULL };
	struct errbuf e = {0};
	int i;

	for (i = 0; i < 50; i++) {
		struct docker_exec_result r;
		int code;

		if (docker_exec(d, id, argv, NULL, 4096, &r, &e) < 0)
			fail_msg("exec: %s", e.msg);
		code = r.exit_code;
		docker_exec_result_free(&r);
		if (code == 0)
			break;
		usleep(100000);
	}
	for (i = 0; i < 50 && bus_lines_logged(id) < want; i++)
		usleep(100000);
	if (bus_lines_logged(id) != want)
		fail_msg("sink %s: %d bus lines logged, not %d", path,
		    bus_lines_logged(id), want);
	free(sh);
}

/* A sensor restarted in its container (same log; its numbers start over
 * at 1): a follower started after the restart forwards the new start's
 * event, and neither drops it as a repeat nor replays the earlier
 * start's lines as fresh. */
static void
test_stream_restart(void **state)
{
	const char *const cmd[] = { "/bin/ares-lab", "sink", NULL };
	struct docker_container_spec sp = {0};
	struct bus_stream_src src = { .src = "sink", .run_id = run_id };
	struct bus_stream_stats bst;
	struct bus_stream *bs;
	struct errbuf e = {0};
	char hex[2 * BUS_KEY_BYTES + 1], *env[8], *dir, *sock, *name, *id;
	int bfd, events = 0, after = 0;
	(void)state;

	randombytes_buf(src.key, sizeof src.key);
	util_hex(src.key, sizeof src.key, hex);
	dir = mkscratch();
	sock = xasprintf("%s/bus.sock", dir);
	bfd = bus_open(sock, &e);
	assert_true(bfd >= 0);
	env[0] = xstrdup("SINK_TCP_PORTS=8080");
	env[1] = xstrdup("SINK_UDP_PORTS=5353");
	env[2] = xstrdup("BUS=stdout");
	env[3] = xasprintf("BUS_KEY=%s", hex);
	env[4] = xasprintf("RUN_ID=%s", run_id);
	env[5] = NULL;
	name = xasprintf("ares-%s-sink", run_id);
	sp.name = name;
	sp.image = image;
	sp.cmd = cmd;
	sp.env = (const char *const *)env;
	sp.user = "65533:65533";
	sp.network = "none";
	sp.run_id = run_id;
	sp.role = "sink";
	sp.drop_all_caps = true;
	sp.no_new_privileges = true;
	sp.read_only_rootfs = true;
	sp.no_healthcheck = true;
	id = docker_container_create(d, &sp, &e);
	if (id == NULL)
		fail_msg("create: %s", e.msg);
	for (int i = 0; env[i] != NULL; i++)
		free(env[i]);
	assert_int_equal(docker_container_start(d, id, &e), 0);
	sink_hit(id, "first-a", 1);
	sink_hit(id, "first-b", 2);
	sink_hit(id, "first-c", 3);

	/* the restart: stopped, started again (docker restart) */
	assert_int_equal(docker_container_kill(d, id, "KILL", &e), 0);
	for (int i = 0; i < 100; i++) {
		cJSON *ins = docker_container_inspect(d, id, &e);
		bool running = ins != NULL && docker_inspect_running(ins);
		cJSON_Delete(ins);
		if (!running)
			break;
		usleep(50000);
	}
	assert_int_equal(docker_container_start(d, id, &e), 0);
	sink_hit(id, "AFTER-RESTART-BAIT", 4);

	src.id = id;
	bs = bus_stream_start(d, sock, &src, 1, &e);
	if (bs == NULL)
		fail_msg("bus stream: %s", e.msg);
	for (int idle = 0; idle < 20;) {
		struct pollfd pfd = { .fd = bfd, .events = POLLIN };
		struct bus_event ev;
		if (poll(&pfd, 1, 100) <= 0) {
			idle++;
			continue;
		}
		while (bus_recv_stream(bfd, &ev, &e) == 1) {
			const char *head = bus_event_str(&ev, "head");
			events++;
			if (head != NULL && strstr(head, "AFTER-RESTART-BAIT"))
				after++;
			bus_event_free(&ev);
		}
	}
	bus_stream_stop(bs, &bst);
	printf("restart: %d events on the bus (%d after the restart), "
	    "forwarded %zu repeated %zu stale %zu lost %zu\n", events, after,
	    bst.forwarded, bst.repeated, bst.stale, bst.lost);
	assert_int_equal(after, 1);
	assert_int_equal(events, 1);
	assert_int_equal(bst.forwarded, 1);
	assert_int_equal(bst.repeated, 0);
	assert_int_equal(bst.lost, 0);
	assert_int_equal(bst.malformed, 0);
	assert_int_equal(docker_container_remove(d, id, true, &e), 0);
	free(id);
	free(name);
	close(bfd);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
	free(sock);
}

/* Remove whatever of this run is left. */
static int
cleanup(void **state)
{
	char *label = xasprintf("ares.run=%s", run_id);
	struct errbuf e = {0};
	cJSON *a = docker_containers_by_label(d, label, &e), *it;
	(void)state;
	cJSON_ArrayForEach(it, a) {
		const char *id = util_json_str(it, "Id", NULL);
		if (id != NULL)
			(void)docker_container_remove(d, id, true, &e);
	}
	cJSON_Delete(a);
	free(label);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_archive_put_get),
		cmocka_unit_test(test_follow_lines),
		cmocka_unit_test(test_follow_stop_idle),
		cmocka_unit_test(test_sensor_stream),
		cmocka_unit_test(test_gateway_control_exec),
		cmocka_unit_test(test_remote_seal),
		cmocka_unit_test(test_stream_rotation),
		cmocka_unit_test(test_stream_restart),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = {0};
	int rc;

	if (sodium_init() < 0)
		return 1;
	d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1) {
		fprintf(stderr, "test_engine_io: no Docker Engine: %s\n", e.msg);
		docker_close(d);
		return req != NULL && strcmp(req, "1") == 0 ? 1 : 77;
	}
	if (lab_image_ensure(d, &image, &e) == -1) {
		fprintf(stderr, "test_engine_io: lab image: %s\n", e.msg);
		docker_close(d);
		return 1;
	}
	util_new_id(run_id);
	rc = cmocka_run_group_tests(tests, NULL, cleanup);
	free(image);
	docker_close(d);
	return rc;
}
