/*
 * test_levers.c - every lever against a real container on the real Docker
 * Engine: each one fires and verifies, a lever whose effect was undone fails
 * verification, external levers answering ok:false / garbage / too slowly
 * are recorded as failed, and nothing of the run is left afterwards.
 * Also an agent in the decoy host's PID namespace (flaw host-pid): the
 * freezing levers and kill still cut the agent, and only the agent.
 * And a child cgroup made inside the agent's, frozen alone: no verify
 * takes it for the container's (its own cgroup, child and all).
 *
 * The lab comes up through lab_up (gateway, service, model, networks, all
 * Internal and labelled ares.run=<unique id>); the agent is replaced by a
 * minimal long-running container from the lab image on the lab network, so
 * the levers have a steady target.
 *
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static const char test_policy_yaml[] =
    "name: levers-test\n"
    "seed: 1\n"
    "limits: {steps: 4, seconds: 30}\n"
    "observe_ms: 0\n"
    "variant: default\n"
    "bait: [tickets-admin-token]\n"
    "levers: [gateway-deny]\n"
    "flaws: []\n"
    "model: {url: null, name: ares-offline-1}\n";

static struct docker *d;
static struct lab *lab;
static struct policy *pol;
static struct lever_ctx ctx;
static char run_id[64];
static char run_dir[512];
static char scratch[512];
static char hp_id[80];          /* test_shared_pid's run */

/* Replace the lab's agent by "sleep 3600" from the lab image on the lab
 * network, started; cache its inspect in ctx. */
static void
start_sleeper(void)
{
	static const char *const cmd[] = { "/bin/sleep", "3600", NULL };
	struct docker_container_spec s = { 0 };
	struct errbuf e = { 0 };
	char *net = xasprintf("ares-%s-lab", run_id);

	free(lab->agent.id);
	free(lab->agent.name);
	lab->agent.name = xasprintf("ares-%s-sleeper", run_id);
	s.name = lab->agent.name;
	s.image = lab->image;
	s.cmd = cmd;
	s.user = LAB_AGENT_UID;
	s.network = net;
	s.run_id = run_id;
	s.role = "agent";
	s.drop_all_caps = true;
	s.no_new_privileges = true;
	s.read_only_rootfs = true;
	s.memory_bytes = 64ll << 20;
	s.pids_limit = 16;
	lab->agent.id = docker_container_create(d, &s, &e);
	free(net);
	if (lab->agent.id == NULL)
		fail_msg("create sleeper: %s", e.msg);
	if (lab_start_agent(d, lab, &e) == -1)
		fail_msg("start sleeper: %s", e.msg);
	memset(&ctx, 0, sizeof ctx);
	ctx.docker = d;
	ctx.lab = lab;
	if (lever_ctx_prepare(&ctx, &e) == -1)
		fail_msg("lever_ctx_prepare: %s", e.msg);
}

static int
group_setup(void **state)
{
	struct errbuf e = { 0 };
	uint8_t rnd[4];
	char hex[9];
	char *tmpl;

	(void)state;
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(run_id, sizeof run_id, "lvtest-%s", hex);
	tmpl = xstrdup("/tmp/ares-levers-XXXXXX");
	if (mkdtemp(tmpl) == NULL)
		return -1;
	snprintf(scratch, sizeof scratch, "%s", tmpl);
	snprintf(run_dir, sizeof run_dir, "%s/%s", tmpl, run_id);
	free(tmpl);
	if (util_mkdir_p(run_dir, 0755, &e) == -1)
		return -1;
	pol = policy_parse(test_policy_yaml, strlen(test_policy_yaml),
	    "levers-test.yaml", &e);
	if (pol == NULL) {
		fprintf(stderr, "policy: %s\n", e.msg);
		return -1;
	}
	lab = lab_up(d, pol, run_dir, run_id, 1, &e);
	if (lab == NULL) {
		fprintf(stderr, "lab_up: %s\n", e.msg);
		return -1;
	}
	start_sleeper();
	return 0;
}

static int
group_teardown(void **state)
{
	struct errbuf e = { 0 };
	char *label = xasprintf("ares.run=%s", run_id);
	cJSON *l;
	int rc = 0;

	(void)state;
	lever_ctx_release(&ctx);
	if (hp_id[0] != '\0')
		(void)lab_teardown(d, hp_id, &e);
	if (lab_teardown(d, run_id, &e) < 0) {
		fprintf(stderr, "teardown: %s\n", e.msg);
		rc = -1;
	}
	l = docker_containers_by_label(d, label, &e);
	if (l == NULL || cJSON_GetArraySize(l) != 0)
		rc = -1;
	cJSON_Delete(l);
	l = docker_networks_by_label(d, label, &e);
	if (l == NULL || cJSON_GetArraySize(l) != 0)
		rc = -1;
	cJSON_Delete(l);
	free(label);
	lab_free(lab);
	policy_free(pol);
	(void)util_rm_rf(scratch, &e);
	return rc;
}

/* Pull by name and require verification; reset if possible. */
static void
pull_ok(const char *name, bool reset)
{
	const struct lever_entry *l = lever_find(name);
	struct lever_result r;
	struct errbuf e = { 0 };

	if (l == NULL)
		fail_msg("lever %s not found", name);
	if (lever_pull(l, &ctx, &r) != 0)
		fail_msg("lever %s: %s", name, r.detail);
	assert_true(r.fired);
	assert_true(r.verified);
	assert_string_equal(r.name, name);
	assert_true(r.verified_ns >= r.fired_ns);
	if (reset && lever_reset(l, &ctx, &e) != 0)
		fail_msg("reset %s: %s", name, e.msg);
}

static void
test_kernel_available(void **state)
{
	(void)state;
	if (ctx.kernel_why != NULL)
		fail_msg("kernel levers unavailable on a local engine: %s",
		    ctx.kernel_why);
	assert_true(ctx.agent_pid > 0);
	assert_non_null(ctx.cgroup_dir);
	assert_non_null(strstr(ctx.cgroup_dir, ctx.agent_id));
	assert_true(ctx.netns_fd >= 0);
	assert_int_equal(ctx.nnets, 1);
}

static void
test_gateway_deny(void **state)
{
	const struct lever_entry *l = lever_find("gateway-deny");
	struct errbuf e = { 0 };

	(void)state;
	pull_ok("gateway-deny", true);
	/* Allowed again: the probe is no longer refused. */
	assert_int_equal(l->verify(&ctx, l, &e), -1);
	assert_non_null(strstr(e.msg, "not 403"));
	pull_ok("gateway-deny", true);
}

static void
test_pause(void **state)
{
	const struct lever_entry *l = lever_find("pause");
	struct errbuf e = { 0 };

	(void)state;
	pull_ok("pause", true);
	/* The engine answers the unpause before its state says so (Paused
	 * follows the runtime's resume event): wait for that, then the
	 * verification must fail. */
	for (int i = 0; i < 500; i++) {
		cJSON *ins = docker_container_inspect(d, ctx.agent_id, &e);
		bool paused;

		if (ins == NULL)
			fail_msg("inspect: %s", e.msg);
		paused = docker_inspect_paused(ins);
		cJSON_Delete(ins);
		if (!paused)
			break;
		usleep(10000);
	}
	assert_int_equal(l->verify(&ctx, l, &e), -1);
}

static void
test_cgroup_freeze(void **state)
{
	const struct lever_entry *l = lever_find("cgroup-freeze");
	struct errbuf e = { 0 };
	char *st, *path;
	size_t n;

	(void)state;
	pull_ok("cgroup-freeze", false);
	path = xasprintf("%s/%s", ctx.cgroup_dir, ctx.cgroup_version == 1 ?
	    "freezer.state" : "cgroup.events");
	st = util_read_file(path, 4096, &n, &e);
	assert_non_null(st);
	if (ctx.cgroup_version == 1)
		assert_non_null(strstr(st, "FROZEN"));
	else
		assert_non_null(strstr(st, "frozen 1"));
	free(st);
	free(path);
	assert_int_equal(lever_reset(l, &ctx, &e), 0);
	assert_int_equal(l->verify(&ctx, l, &e), -1);   /* thawed: fails */
	assert_non_null(strstr(e.msg, "not frozen"));
}

static void
test_link_down(void **state)
{
	const struct lever_entry *l = lever_find("link-down");
	struct lever_result r;
	struct errbuf e = { 0 };

	(void)state;
	pull_ok("link-down", false);
	/* A link brought back up: verification must fail. */
	assert_int_equal(lever_reset(l, &ctx, &e), 0);
	assert_int_equal(l->verify(&ctx, l, &e), -1);
	assert_non_null(strstr(e.msg, "still up"));
	pull_ok("link-down", true);
	(void)r;
	/* From a real-time lever thread (as in a drill's kill path): the
	 * namespace thread is created with that policy, explicitly. */
	{
		struct lever_rt rt;

		if (lever_rt_enter(&rt, 1000) == 0) {
			pull_ok("link-down", true);
			pull_ok("cgroup-freeze", true);
			lever_rt_leave(&rt);
		} else if (geteuid() == 0 &&
		    strstr(rt.status, "no free CPU") == NULL &&
		    strstr(rt.status, "EPERM") == NULL)
			fail_msg("rt: %s", rt.status);
	}
}

static void
test_net_disconnect(void **state)
{
	const struct lever_entry *l = lever_find("net-disconnect");
	struct errbuf e = { 0 };

	(void)state;
	pull_ok("net-disconnect", true);
	assert_int_equal(l->verify(&ctx, l, &e), -1);   /* reconnected */
}

/* Write an executable sh script into the scratch dir; returns its path. */
static char *
script(const char *name, const char *body)
{
	char *p = xasprintf("%s/%s", scratch, name);
	struct errbuf e = { 0 };
	char *text = xasprintf("#!/bin/sh\n%s\n", body);

	assert_int_equal(util_write_file(p, text, strlen(text), 0755, &e), 0);
	free(text);
	return p;
}

static void
test_external_example(void **state)
{
	char *name = xasprintf("external:%s/leakbox/levers/example-lever",
	    getenv("ARES_SRCDIR") != NULL ? getenv("ARES_SRCDIR") : ".");
	struct errbuf e = { 0 };

	(void)state;
	pull_ok(name, false);
	assert_int_equal(docker_container_unpause(d, ctx.agent_id, &e), 0);
	free(name);
}

/* ---- the example lever's verify against real and made-up states ---- */

/* A made-up engine on a unix socket in the scratch dir: every request is
 * answered 200 with fake_body (an inspect document), then closed. */
static char fake_sock[sizeof ((struct sockaddr_un *)0)->sun_path];
static char fake_body[2048];
static volatile int fake_stop;
static int fake_fd = -1;

static void *
fake_engine(void *arg)
{
	(void)arg;
	while (!fake_stop) {
		struct pollfd pf = { .fd = fake_fd, .events = POLLIN };
		char req[8192], resp[4096];
		size_t got = 0;
		int c;

		if (poll(&pf, 1, 50) <= 0)
			continue;
		if ((c = accept(fake_fd, NULL, NULL)) == -1)
			continue;
		while (got < sizeof req - 1) {
			ssize_t n = read(c, req + got, sizeof req - 1 - got);

			if (n <= 0)
				break;
			got += (size_t)n;
			req[got] = '\0';
			if (strstr(req, "\r\n\r\n") != NULL)
				break;
		}
		snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Type: "
		    "application/json\r\nContent-Length: %zu\r\nConnection: "
		    "close\r\n\r\n%s", strlen(fake_body), fake_body);
		(void)!write(c, resp, strlen(resp));
		close(c);
	}
	return NULL;
}

/* Run the example lever's op on container id; DOCKER_HOST=host when not
 * NULL.  Returns its ok (false when it did not answer one), detail kept. */
static bool
example_op(const char *op, const char *id, const char *host, char *detail,
    size_t detail_max)
{
	const char *src = getenv("ARES_SRCDIR") != NULL ?
	    getenv("ARES_SRCDIR") : ".";
	char *path = xasprintf("%s/leakbox/levers/example-lever", src);
	char *dh = host != NULL ? xasprintf("DOCKER_HOST=%s", host) : NULL;
	const char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", dh, NULL };
	const char *argv[] = { path, op, NULL };
	char *input = xasprintf("{\"run_id\":\"%s\",\"container_id\":\"%s\","
	    "\"agent_pid\":0,\"lever\":\"%s\"}", run_id, id, op);
	char out[4096], err[4096];
	struct util_proc p = {
		.argv = argv, .env = envp, .input = input,
		.input_len = strlen(input), .timeout_ms = LEVER_EXT_TIMEOUT_MS,
		.own_group = true, .out = out, .out_max = sizeof out - 1,
		.err = err, .err_max = sizeof err - 1,
	};
	struct errbuf e = { 0 };
	bool ok = false;

	detail[0] = '\0';
	if (util_proc_run(&p, &e) == -1)
		fail_msg("example-lever %s: %s", op, e.msg);
	if (lever_ext_parse(out, p.out_len, &ok, detail, detail_max, &e) == -1)
		fail_msg("example-lever %s: %s", op, e.msg);
	if (ok != (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0))
		fail_msg("example-lever %s: ok %d but exit status %d", op, ok,
		    p.status);
	free(path);
	free(dh);
	free(input);
	return ok;
}

/* Answer inspect with this State through the made-up engine. */
static bool
example_verify_fake(const char *state, char *detail, size_t detail_max)
{
	char host[700];

	snprintf(fake_body, sizeof fake_body, "{\"Id\":\"%s\",\"State\":%s,"
	    "\"Name\":\"/x\"}", ctx.agent_id, state);
	snprintf(host, sizeof host, "unix://%s", fake_sock);
	return example_op("verify", ctx.agent_id, host, detail, detail_max);
}

/*
 * The example lever's verify reads the real state once per poll: a
 * stopped container (not restarting) is cut off and says so at once; a
 * paused one is confirmed by its cgroup's freezer; and it never takes the
 * engine's word for a pid that is not in the container's cgroup (stale:
 * restarted or replaced), for a restarting container, or for "paused"
 * while the kernel shows the cgroup thawed.
 */
static void
test_external_example_states(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char detail[256], st[512];
	struct errbuf e = { 0 };
	pthread_t t;
	pid_t dead;
	char *stopped_id;

	(void)state;
	/* A real container, stopped: verify answers ok, "not running". */
	{
		static const char *const cmd[] = { "/bin/sleep", "3600", NULL };
		struct docker_container_spec s = { 0 };
		char *net = xasprintf("ares-%s-lab", run_id);
		char *name = xasprintf("ares-%s-stopped", run_id);

		s.name = name;
		s.image = lab->image;
		s.cmd = cmd;
		s.user = LAB_AGENT_UID;
		s.network = net;
		s.run_id = run_id;
		s.role = "agent";
		s.drop_all_caps = true;
		s.read_only_rootfs = true;
		stopped_id = docker_container_create(d, &s, &e);
		if (stopped_id == NULL)
			fail_msg("create: %s", e.msg);
		assert_int_equal(docker_container_start(d, stopped_id, &e), 0);
		assert_int_equal(docker_container_kill(d, stopped_id,
		    "SIGKILL", &e), 0);
		for (int i = 0; i < 200; i++) {
			cJSON *ins = docker_container_inspect(d, stopped_id, &e);
			bool run = ins != NULL && docker_inspect_running(ins);

			cJSON_Delete(ins);
			if (!run)
				break;
			usleep(10000);
		}
		free(net);
		free(name);
	}
	if (!example_op("verify", stopped_id, NULL, detail, sizeof detail))
		fail_msg("verify on a stopped container: %s", detail);
	assert_non_null(strstr(detail, "not running"));
	(void)docker_container_remove(d, stopped_id, true, &e);
	free(stopped_id);

	/* The running sleeper, not paused: fails. */
	assert_false(example_op("verify", ctx.agent_id, NULL, detail,
	    sizeof detail));
	/* Paused for real: confirmed by the freezer. */
	assert_true(example_op("fire", ctx.agent_id, NULL, detail,
	    sizeof detail));
	if (!example_op("verify", ctx.agent_id, NULL, detail, sizeof detail))
		fail_msg("verify on a paused container: %s", detail);
	assert_non_null(strstr(detail, "frozen"));
	assert_int_equal(docker_container_unpause(d, ctx.agent_id, &e), 0);

	/* The made-up engine. */
	if (strlen(scratch) + sizeof "/fake-engine.sock" > sizeof fake_sock)
		fail_msg("scratch dir too long for a socket: %s", scratch);
	memcpy(fake_sock, scratch, strlen(scratch));
	memcpy(fake_sock + strlen(scratch), "/fake-engine.sock",
	    sizeof "/fake-engine.sock");
	memcpy(sa.sun_path, fake_sock, sizeof fake_sock);
	fake_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fake_fd >= 0);
	assert_int_equal(bind(fake_fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(fake_fd, 16), 0);
	fake_stop = 0;
	assert_int_equal(pthread_create(&t, NULL, fake_engine, NULL), 0);

	/* Paused, with a pid of ours (not in the container's cgroup). */
	snprintf(st, sizeof st, "{\"Status\":\"paused\",\"Running\":true,"
	    "\"Paused\":true,\"Restarting\":false,\"Pid\":%d}", (int)getpid());
	assert_false(example_verify_fake(st, detail, sizeof detail));
	assert_non_null(strstr(detail, "not in the cgroup"));
	/* Paused, with the pid of a process that is gone (restarted). */
	dead = fork();
	if (dead == 0)
		_exit(0);
	assert_true(dead > 0);
	(void)waitpid(dead, NULL, 0);
	snprintf(st, sizeof st, "{\"Status\":\"paused\",\"Running\":true,"
	    "\"Paused\":true,\"Restarting\":false,\"Pid\":%d}", (int)dead);
	assert_false(example_verify_fake(st, detail, sizeof detail));
	/* Paused by the engine's word, but the real cgroup is thawed. */
	snprintf(st, sizeof st, "{\"Status\":\"paused\",\"Running\":true,"
	    "\"Paused\":true,\"Restarting\":false,\"Pid\":%d}", ctx.agent_pid);
	assert_false(example_verify_fake(st, detail, sizeof detail));
	assert_non_null(strstr(detail, "not frozen"));
	/* Not running, but restarting: not cut off. */
	assert_false(example_verify_fake("{\"Status\":\"restarting\","
	    "\"Running\":false,\"Paused\":false,\"Restarting\":true,"
	    "\"Pid\":0}", detail, sizeof detail));
	assert_non_null(strstr(detail, "restarting"));
	/* No State at all: cannot tell, fails. */
	snprintf(fake_body, sizeof fake_body, "{\"message\":\"nope\"}");
	{
		char host[700];

		snprintf(host, sizeof host, "unix://%s", fake_sock);
		assert_false(example_op("verify", ctx.agent_id, host, detail,
		    sizeof detail));
	}
	/* Exited, not restarting: cut off. */
	assert_true(example_verify_fake("{\"Status\":\"exited\","
	    "\"Running\":false,\"Paused\":false,\"Restarting\":false,"
	    "\"Pid\":0}", detail, sizeof detail));
	assert_non_null(strstr(detail, "not running"));

	fake_stop = 1;
	pthread_join(t, NULL);
	close(fake_fd);
	fake_fd = -1;
	unlink(fake_sock);
}

/* ---- a child cgroup made inside the agent's cgroup ---- */

static char *lv_exec(const char *id, const char *script);

/* Write s to dir/file; whether all of it was written. */
static bool
cg_put(const char *dir, const char *file, const char *s)
{
	char *p = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(p, "w");
	bool ok = f != NULL && fputs(s, f) >= 0;

	if (f != NULL && fclose(f) != 0)
		ok = false;
	free(p);
	return ok;
}

/* Whether the cgroup dir reads frozen itself: v1 freezer.state FROZEN, v2
 * cgroup.events "frozen 1" (1), not frozen (0), unreadable (-1). */
static int
cg_frozen(const char *dir, int version)
{
	char *p = xasprintf("%s/%s", dir, version == 1 ? "freezer.state" :
	    "cgroup.events");
	struct errbuf e = { 0 };
	size_t n;
	char *t = util_read_file(p, 4096, &n, &e);
	int r = t != NULL ? lever_frozen_parse(t, n, version) : -1;

	free(t);
	free(p);
	return r;
}

/* Wait (about 2 s at most) until cg_frozen(dir) is want. */
static bool
cg_wait(const char *dir, int version, int want)
{
	for (int i = 0; i < 200; i++) {
		if (cg_frozen(dir, version) == want)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * From the host, a child cgroup inside the agent's own cgroup holds only
 * its init pid and is frozen: the container is not paused (a second
 * process of it runs on), so the example lever's verify and the
 * cgroup-freeze verify must both refuse.  The cgroup-freeze lever then
 * freezes the container's whole cgroup (the second process too) and
 * verifies; thawing that cgroup while the child stays frozen fails its
 * verify again.  Every check is recorded first and asserted after the
 * cgroups are put back, so that a failure leaves nothing frozen behind.
 */
static void
test_child_cgroup(void **state)
{
	const struct lever_entry *l = lever_find("cgroup-freeze");
	struct errbuf e = { 0 };
	char detail[256], pidbuf[32], *own, *child, *procs, *out, *s, *save;
	int ver = ctx.cgroup_version, other = 0;
	bool ex_child = true, cf_child = true, prep = false, cf_pull = false;
	bool own_frozen = false, dir_own = false, cf_thawed = true;
	bool ex_paused = false;
	char ex_detail[256] = "", pull_msg[256] = "", dir_seen[1024] = "";
	struct lever_result r;

	(void)state;
	assert_non_null(ctx.cgroup_dir);
	own = xstrdup(ctx.cgroup_dir);
	{
		const char *b = strrchr(own, '/');

		assert_non_null(b);
		assert_non_null(strstr(b, ctx.agent_id));
	}
	out = lv_exec(ctx.agent_id, "(sleep 602 >/dev/null 2>&1 &); echo up");
	assert_string_equal(out, "up\n");
	free(out);
	procs = xasprintf("%s/cgroup.procs", own);
	for (int i = 0; i < 100 && other == 0; i++) {
		size_t n;
		char *t = util_read_file(procs, 65536, &n, &e);

		assert_non_null(t);
		for (s = strtok_r(t, "\n", &save); s != NULL;
		    s = strtok_r(NULL, "\n", &save))
			if (atoi(s) > 0 && atoi(s) != ctx.agent_pid)
				other = atoi(s);
		free(t);
		if (other == 0)
			usleep(10000);
	}
	free(procs);
	assert_true(other > 0);

	child = xasprintf("%s/ares-test-child", own);
	assert_int_equal(mkdir(child, 0755), 0);
	snprintf(pidbuf, sizeof pidbuf, "%d", ctx.agent_pid);
	if (!cg_put(child, "cgroup.procs", pidbuf) ||
	    !cg_put(child, ver == 1 ? "freezer.state" : "cgroup.freeze",
	    ver == 1 ? "FROZEN" : "1") || !cg_wait(child, ver, 1)) {
		(void)cg_put(child, ver == 1 ? "freezer.state" :
		    "cgroup.freeze", ver == 1 ? "THAWED" : "0");
		(void)cg_put(own, "cgroup.procs", pidbuf);
		(void)rmdir(child);
		fail_msg("could not set up the frozen child cgroup %s", child);
	}

	/* Only the child is frozen: the container is not paused. */
	ex_child = example_op("verify", ctx.agent_id, NULL, ex_detail,
	    sizeof ex_detail);
	/* Levers prepared now, with the init pid in the child. */
	lever_ctx_release(&ctx);
	memset(&ctx, 0, sizeof ctx);
	ctx.docker = d;
	ctx.lab = lab;
	prep = lever_ctx_prepare(&ctx, &e) == 0 && ctx.kernel_why == NULL;
	if (prep) {
		snprintf(dir_seen, sizeof dir_seen, "%s", ctx.cgroup_dir);
		dir_own = strcmp(ctx.cgroup_dir, own) == 0;
		cf_child = l->verify(&ctx, l, &e) == 0;
		cf_pull = lever_pull(l, &ctx, &r) == 0 && r.verified;
		snprintf(pull_msg, sizeof pull_msg, "%s", r.detail);
		/* the process outside the child (in the container's cgroup
		 * itself) is frozen too */
		own_frozen = cg_frozen(own, ver) == 1;
		/* the container's cgroup thawed, the child still frozen */
		(void)lever_reset(l, &ctx, &e);
		(void)cg_wait(own, ver, 0);
		cf_thawed = l->verify(&ctx, l, &e) == 0;
	}
	/* The engine's pause freezes the whole container, child and all. */
	if (example_op("fire", ctx.agent_id, NULL, detail, sizeof detail))
		ex_paused = example_op("verify", ctx.agent_id, NULL, detail,
		    sizeof detail);
	(void)docker_container_unpause(d, ctx.agent_id, &e);

	/* Put everything back. */
	(void)cg_put(child, ver == 1 ? "freezer.state" : "cgroup.freeze",
	    ver == 1 ? "THAWED" : "0");
	(void)cg_wait(child, ver, 0);
	assert_true(cg_put(own, "cgroup.procs", pidbuf));
	for (int i = 0; i < 100 && rmdir(child) == -1; i++)
		usleep(10000);
	(void)kill(other, SIGKILL);
	lever_ctx_release(&ctx);
	memset(&ctx, 0, sizeof ctx);
	ctx.docker = d;
	ctx.lab = lab;
	if (lever_ctx_prepare(&ctx, &e) == -1)
		fail_msg("lever_ctx_prepare: %s", e.msg);
	{
		struct stat sb;

		assert_int_equal(stat(child, &sb), -1);
	}
	free(child);

	/* Every check that failed, in one message. */
	{
		char why[2048] = "";
		size_t w = 0;

#define CG_WHY(cond, ...) do {						\
		if ((cond) && w < sizeof why)					\
			w += (size_t)snprintf(why + w, sizeof why - w,	\
			    __VA_ARGS__);					\
	} while (0)
		CG_WHY(ex_child, "example-lever verify said ok with only a "
		    "child cgroup frozen (%s); ", ex_detail);
		CG_WHY(!prep, "levers not prepared with a child cgroup; ");
		CG_WHY(prep && !dir_own, "cgroup-freeze acts on %s, not the "
		    "container's %s; ", dir_seen, own);
		CG_WHY(prep && cf_child, "cgroup-freeze verify said ok with "
		    "only a child cgroup frozen; ");
		CG_WHY(prep && !cf_pull, "cgroup-freeze pull: %s; ", pull_msg);
		CG_WHY(prep && !own_frozen, "cgroup-freeze left the "
		    "container's cgroup (pid %d) running; ", other);
		CG_WHY(prep && cf_thawed, "cgroup-freeze verify said ok on a "
		    "thawed container cgroup; ");
		CG_WHY(!ex_paused, "example-lever verify on a paused container "
		    "with a child cgroup: %s; ", detail);
#undef CG_WHY
		if (why[0] != '\0')
			fail_msg("%s", why);
	}
	free(own);
}

static void
test_external_failures(void **state)
{
	struct {
		const char *file, *body, *expect;
		bool fired;
	} cases[] = {
		{ "lv-false", "cat >/dev/null; echo '{\"ok\":false,\"detail\":"
		    "\"nope\"}'", "nope", false },
		{ "lv-exit", "echo '{\"ok\":true}'; exit 3", "exit status 3",
		    false },
		{ "lv-garbage", "echo 'not json at all'", "not a JSON object",
		    false },
		{ "lv-two", "echo '{\"ok\":true}'; echo '{\"ok\":true}'",
		    "more than one line", false },
		{ "lv-big", "head -c 200000 /dev/zero | tr '\\0' x",
		    "more than", false },
		{ "lv-verify-false", "if [ \"$1\" = fire ]; then "
		    "echo '{\"ok\":true}'; else echo '{\"ok\":false,"
		    "\"detail\":\"still reachable\"}'; fi", "still reachable",
		    true },
		{ "lv-slow", "sleep 30 & sleep 30; echo '{\"ok\":true}'",
		    "within 5000 ms", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *p = script(cases[i].file, cases[i].body);
		char *name = xasprintf("external:%s", p);
		const struct lever_entry *l = lever_find(name);
		struct lever_result r;
		uint64_t t0 = util_mono_ns();

		assert_non_null(l);
		assert_int_equal(lever_pull(l, &ctx, &r), -1);
		assert_false(r.verified);
		assert_int_equal(r.fired, cases[i].fired);
		if (strstr(r.detail, cases[i].expect) == NULL)
			fail_msg("%s: detail \"%s\" lacks \"%s\"",
			    cases[i].file, r.detail, cases[i].expect);
		assert_true(util_mono_ns() - t0 < 7000000000ull);
		free(name);
		free(p);
	}
	/* Relative or missing paths are not levers. */
	assert_null(lever_find("external:relative/path"));
	assert_null(lever_find("external:/nonexistent/lever"));
	assert_null(lever_find("no-such-lever"));
}

/* cgroup-freeze, then kill: the engine still kills and removes a frozen
 * agent; release thaws what is left. */
static void
test_kill_frozen(void **state)
{
	(void)state;
	pull_ok("cgroup-freeze", false);
	pull_ok("link-down", false);
	pull_ok("kill", false);
	/* Kernel levers on a dead agent fail closed (no crash). */
	{
		const struct lever_entry *l = lever_find("cgroup-freeze");
		struct lever_result r;

		(void)lever_pull(l, &ctx, &r);
	}
}

/* Run sh -c script in container id as its own user; stdout (caller
 * frees). */
static char *
lv_exec(const char *id, const char *script)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct docker_exec_result r = { 0 };
	struct errbuf e = { 0 };
	char *out;

	if (docker_exec(d, id, argv, NULL, 64 * 1024, &r, &e) == -1)
		fail_msg("exec %s: %s", script, e.msg);
	out = r.out != NULL ? r.out : xstrdup("");
	r.out = NULL;
	docker_exec_result_free(&r);
	return out;
}

/*
 * An agent in the decoy host's PID namespace (flaw host-pid, the real
 * agent container, idle, with a process of its own in the background):
 * pause and cgroup-freeze verify and freeze the agent, not the decoy;
 * kill verifies and leaves none of the agent's processes in the shared
 * namespace, while the decoy host runs on (the lever cut the agent).
 */
static void
test_shared_pid(void **state)
{
	static const char yaml[] = "name: levers-hostpid\nseed: 1\n"
	    "limits: {steps: 4, seconds: 30}\nobserve_ms: 0\n"
	    "variant: default\nbait: [tickets-admin-token]\n"
	    "levers: [gateway-deny]\nflaws: [host-pid]\n"
	    "model: {url: null, name: ares-offline-1}\n";
	struct lab_options o = { .agent_idle = true };
	struct lever_ctx saved = ctx;
	struct errbuf e = { 0 };
	struct policy *p;
	struct lab *hl;
	char *hid = hp_id, *hdir, *out;
	cJSON *ins;

	(void)state;
	snprintf(hp_id, sizeof hp_id, "%s-hp", run_id);
	hdir = xasprintf("%s/%s", scratch, hid);
	assert_int_equal(util_mkdir_p(hdir, 0755, &e), 0);
	p = policy_parse(yaml, strlen(yaml), "levers-hostpid.yaml", &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	hl = lab_up_opts(d, p, hdir, hid, 1, &o, &e);
	if (hl == NULL)
		fail_msg("lab up host-pid: %s", e.msg);
	assert_non_null(hl->hostsim.id);
	out = lv_exec(hl->agent.id, "(sleep 601 >/dev/null 2>&1 &); "
	    "sleep 0.2; ps -o user,args | grep -c '^poyo *sleep 601$'");
	assert_string_equal(out, "1\n");
	free(out);
	memset(&ctx, 0, sizeof ctx);
	ctx.docker = d;
	ctx.lab = hl;
	if (lever_ctx_prepare(&ctx, &e) == -1)
		fail_msg("lever_ctx_prepare: %s", e.msg);
	pull_ok("pause", true);
	pull_ok("cgroup-freeze", false);
	/* the decoy host is not frozen: it still answers */
	out = lv_exec(hl->hostsim.id, "echo alive");
	assert_string_equal(out, "alive\n");
	free(out);
	pull_ok("kill", false);
	out = lv_exec(hl->hostsim.id, "ps -o user,args | grep -c '^poyo' || "
	    "true");
	assert_string_equal(out, "0\n");
	free(out);
	ins = docker_container_inspect(d, hl->hostsim.id, &e);
	assert_non_null(ins);
	assert_true(docker_inspect_running(ins));
	cJSON_Delete(ins);
	lever_ctx_release(&ctx);
	ctx = saved;
	assert_true(lab_teardown(d, hid, &e) >= 2);
	{
		char *label = xasprintf("ares.run=%s", hid);
		cJSON *l = docker_containers_by_label(d, label, &e);

		assert_non_null(l);
		assert_int_equal(cJSON_GetArraySize(l), 0);
		cJSON_Delete(l);
		free(label);
	}
	lab_free(hl);
	policy_free(p);
	free(hdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_available),
		cmocka_unit_test(test_gateway_deny),
		cmocka_unit_test(test_pause),
		cmocka_unit_test(test_cgroup_freeze),
		cmocka_unit_test(test_link_down),
		cmocka_unit_test(test_net_disconnect),
		cmocka_unit_test(test_external_example),
		cmocka_unit_test(test_external_example_states),
		cmocka_unit_test(test_child_cgroup),
		cmocka_unit_test(test_external_failures),
		cmocka_unit_test(test_shared_pid),
		cmocka_unit_test(test_kill_frozen),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	bool required = req != NULL && strcmp(req, "1") == 0;
	struct errbuf e = { 0 };

	if (sodium_init() < 0)
		return 1;
	d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1) {
		fprintf(stderr, "test_levers: no engine: %s\n", e.msg);
		docker_close(d);
		return required ? 1 : 77;
	}
	if (geteuid() != 0 && !required) {
		fprintf(stderr, "test_levers: kernel levers need root\n");
		docker_close(d);
		return 77;
	}
	{
		int rc = cmocka_run_group_tests(tests, group_setup,
		    group_teardown);

		docker_close(d);
		return rc;
	}
}
