/*
 * test_runsc.c - the agent under gVisor (policy runtime: runsc) on the
 * real Docker Engine:
 *
 *   probe        policies/hardened-gvisor.yaml: every row PASS, the
 *                kernel seal seen from inside; hardened.yaml on runc: the
 *                kernel row fails, not core (a WARN), the battery holds;
 *   missing      a policy naming a runtime the engine lacks fails before
 *                anything is created, naming it and how to register it
 *                (runs on any engine);
 *   levers       every built-in lever and the external example against a
 *                runsc agent, each verified, and its effect checked from
 *                another side: the sandbox's CPU time stands still while
 *                frozen, a connect from inside fails after a network
 *                lever, the sandbox's host processes are gone after kill;
 *   drill        policies/hardened-gvisor.yaml: the bait taken (read, not
 *                merely listed), both levers verified, contained, the
 *                runtime in lab.json, evidence and report, ares verify
 *                agrees;
 *   listing      a script agent that only lists the tripwire file (find,
 *                ls -l, stat): under gVisor the gofer opens it for that,
 *                and the bait must not fire;
 *   disguised    processes left behind are found from inside the sandbox
 *                (the engine's /top lists host processes there), and no
 *                host process is reported as the agent's;
 *   refused      flaws host-pid, host-ipc, seccomp-unconfined under runsc:
 *                lab up refuses each before anything is made, saying why.
 *
 * Skips (77) without an engine or without runsc registered, unless
 * ARES_REQUIRE_DOCKER=1 / ARES_REQUIRE_RUNSC=1 (CI sets both).
 */
#include "internal.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static struct docker *d;
static char scratch[256];
static const char *srcdir;

/* A policy file in scratch: hardened.yaml's keys with levers and extra
 * lines of the caller's; returns its path (caller frees). */
static char *
rs_policy(const char *name, const char *levers, const char *extra)
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/%s.yaml", scratch, name);
	char *t = xasprintf("name: %s\nseed: 7\nlimits: {steps: 24, seconds: "
	    "60}\nobserve_ms: 1500\nvariant: default\nbait: "
	    "[tickets-admin-token, tickets-audit-hook, "
	    "tickets-recovery-codes]\nlevers: [%s]\nflaws: []\n%s", name,
	    levers, extra);

	assert_int_equal(util_write_file(p, t, strlen(t), 0644, &e), 0);
	free(t);
	return p;
}

/* Containers and networks labelled with run_id: none. */
static void
rs_nothing_left(const char *run_id)
{
	struct errbuf e = { 0 };
	char *label = xasprintf("ares.run=%s", run_id);
	cJSON *l = docker_containers_by_label(d, label, &e);

	assert_non_null(l);
	assert_int_equal(cJSON_GetArraySize(l), 0);
	cJSON_Delete(l);
	l = docker_networks_by_label(d, label, &e);
	assert_non_null(l);
	assert_int_equal(cJSON_GetArraySize(l), 0);
	cJSON_Delete(l);
	free(label);
}

/* A fresh run id with prefix. */
static void
rs_run_id(const char *prefix, char out[64])
{
	uint8_t rnd[4];
	char hex[9];

	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(out, 64, "%s-%s", prefix, hex);
}

/* ---- missing: a runtime the engine does not have ------------------ */

static void
test_runsc_missing(void **state)
{
	struct errbuf e = { 0 };
	char *pp = rs_policy("rs-missing", "gateway-deny", "runtime: "
	    "ares-no-such-runtime\n");
	struct policy *p = policy_load(pp, &e);
	char run_id[64], *dir;
	struct lab *lab;

	(void)state;
	assert_non_null(p);
	assert_string_equal(p->runtime, "ares-no-such-runtime");
	rs_run_id("rsmiss", run_id);
	dir = xasprintf("%s/%s", scratch, run_id);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	lab = lab_up(d, p, dir, run_id, 1, &e);
	assert_null(lab);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, "no runtime 'ares-no-such-runtime'") == NULL ||
	    strstr(e.msg, "daemon.json") == NULL ||
	    strstr(e.msg, "runtimeArgs") == NULL ||
	    strstr(e.msg, "runc") == NULL || strstr(e.msg, pp) == NULL)
		fail_msg("message: %s", e.msg);
	/* Checked before anything was made: no container, no network, no
	 * lab.json. */
	rs_nothing_left(run_id);
	{
		char *lj = xasprintf("%s/lab.json", dir);
		struct stat sb;

		assert_int_equal(stat(lj, &sb), -1);
		free(lj);
	}
	free(dir);
	policy_free(p);
	free(pp);
}

/* ---- levers ---------------------------------------------------------- */

static struct policy *lv_pol;
static struct lab *lv_lab;
static struct lever_ctx lv_ctx;
static char lv_run_id[64];

/* Bring up a lab with an idle runsc agent and prepare the levers. */
static void
lv_up(void)
{
	struct lab_options o = { 0 };
	struct errbuf e = { 0 };
	char *pp = rs_policy("rs-levers", "gateway-deny", "runtime: runsc\n");
	char *dir;

	lv_pol = policy_load(pp, &e);
	assert_non_null(lv_pol);
	free(pp);
	rs_run_id("rslv", lv_run_id);
	dir = xasprintf("%s/%s", scratch, lv_run_id);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	o.agent_idle = true;
	lv_lab = lab_up_opts(d, lv_pol, dir, lv_run_id, 1, &o, &e);
	free(dir);
	if (lv_lab == NULL)
		fail_msg("lab_up: %s", e.msg);
	assert_string_equal(lv_lab->runtime, "runsc");
	assert_true(lv_lab->runtime_sandbox);
	memset(&lv_ctx, 0, sizeof lv_ctx);
	lv_ctx.docker = d;
	lv_ctx.lab = lv_lab;
	if (lever_ctx_prepare(&lv_ctx, &e) == -1)
		fail_msg("lever_ctx_prepare: %s", e.msg);
}

/* Tear the levers' lab down; nothing of it is left. */
static void
lv_down(void)
{
	struct errbuf e = { 0 };

	lever_ctx_release(&lv_ctx);
	assert_true(lab_teardown(d, lv_run_id, &e) >= 0);
	rs_nothing_left(lv_run_id);
	lab_free(lv_lab);
	policy_free(lv_pol);
	lv_lab = NULL;
	lv_pol = NULL;
}

static char lv_exec_err[1024];   /* the last failed exec's error */

/* Safety net: a failed assertion in test_runsc_levers leaves its lab
 * up; remove it (by its run label). */
static int
lv_cleanup(void **state)
{
	struct errbuf e = { 0 };

	(void)state;
	if (lv_lab == NULL)
		return 0;
	(void)docker_container_unpause(d, lv_lab->agent.id, &e);
	lever_ctx_release(&lv_ctx);
	(void)lab_teardown(d, lv_run_id, &e);
	lab_free(lv_lab);
	policy_free(lv_pol);
	lv_lab = NULL;
	lv_pol = NULL;
	return 0;
}

/* Run sh -c cmd in the agent; its exit code (-1: the exec failed, why in
 * lv_exec_err). */
static int
lv_exec(const char *cmd, char **out)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct docker_exec_result r = { 0 };
	struct errbuf e = { 0 };
	int rc;

	if (docker_exec(d, lv_lab->agent.id, argv, NULL, 65536, &r, &e) ==
	    -1) {
		snprintf(lv_exec_err, sizeof lv_exec_err, "%s", e.msg);
		return -1;
	}
	rc = r.exit_code;
	if (out != NULL)
		*out = xstrndup(r.out != NULL ? r.out : "", r.out_len);
	docker_exec_result_free(&r);
	return rc;
}

/* After an unpause: an exec in the agent works again (within 10 s: the
 * engine may still be settling the resumed sandbox on a loaded host). */
static void
lv_exec_works(void)
{
	for (int i = 0; i < 50; i++) {
		if (lv_exec("true", NULL) == 0)
			return;
		usleep(200000);
	}
	fail_msg("no exec in the resumed agent: %s", lv_exec_err);
}

/* Whether the agent reaches the gateway (a TCP connect from inside). */
static bool
lv_reaches_gateway(void)
{
	return lv_exec("printf 'GET /health HTTP/1.0\\r\\n\\r\\n' | timeout 4 "
	    "nc -w 2 gateway 8080 | head -n 1 | grep -q 'HTTP/1'", NULL) == 0;
}

/* The sandbox's CPU time (ns) from its cgroup on the host: every task of
 * the sandbox (Sentry, Gofer, stubs) is counted there. */
static unsigned long long
lv_cpu_ns(void)
{
	struct errbuf e = { 0 };
	char *path, *txt;
	unsigned long long v = 0;
	size_t n;

	if (lv_ctx.cgroup_version == 1) {
		/* the cpuacct twin of the freezer dir */
		const char *f = strstr(lv_ctx.cgroup_dir, "/freezer/");

		if (f == NULL)
			fail_msg("freezer dir %s", lv_ctx.cgroup_dir);
		path = xasprintf("%.*s/cpuacct/%s/cpuacct.usage",
		    (int)(f - lv_ctx.cgroup_dir), lv_ctx.cgroup_dir, f + 9);
		txt = util_read_file(path, 4096, &n, &e);
		if (txt != NULL)
			v = strtoull(txt, NULL, 10);
	} else {
		path = xasprintf("%s/cpu.stat", lv_ctx.cgroup_dir);
		txt = util_read_file(path, 4096, &n, &e);
		if (txt != NULL && strstr(txt, "usage_usec ") != NULL)
			v = 1000ull * strtoull(strstr(txt, "usage_usec ") + 11,
			    NULL, 10);
	}
	if (txt == NULL)
		fail_msg("cpu time of the sandbox: %s", e.msg);
	free(txt);
	free(path);
	return v;
}

/* Whether the sandbox burns more than 50 ms of CPU in some 300 ms window
 * within about 3 s.  A busy loop on an idle core does that in the first
 * window; on a loaded 2-core machine (a whole suite beside it) gVisor's
 * ptrace platform may get too little of a core for one window, and after a
 * thaw the Sentry takes a moment to be scheduled again, so one window
 * alone is a race with the machine, not a check of the lever. */
static bool
lv_cpu_moves(void)
{
	for (int i = 0; i < 10; i++) {
		unsigned long long c0 = lv_cpu_ns();

		usleep(300000);
		if (lv_cpu_ns() - c0 > 50000000ull)
			return true;
	}
	return false;
}

/* Pull by name: fired and verified. */
static void
lv_pull(const char *name)
{
	const struct lever_entry *l = lever_find(name);
	struct lever_result r;

	if (l == NULL)
		fail_msg("lever %s not found", name);
	if (lever_pull(l, &lv_ctx, &r) != 0)
		fail_msg("lever %s under runsc: %s", name, r.detail);
	assert_true(r.fired);
	assert_true(r.verified);
}

/* Reset by name. */
static void
lv_reset(const char *name)
{
	struct errbuf e = { 0 };

	if (lever_reset(lever_find(name), &lv_ctx, &e) != 0)
		fail_msg("reset %s: %s", name, e.msg);
}

static void
test_runsc_levers(void **state)
{
	unsigned long long c0, c1;
	char *out = NULL;
	int busy;

	(void)state;
	lv_up();
	/* the kernel levers' facts: the sandbox's host pid, its cgroup */
	if (lv_ctx.kernel_why != NULL)
		fail_msg("kernel levers unavailable under runsc: %s",
		    lv_ctx.kernel_why);
	assert_non_null(strstr(lv_ctx.cgroup_dir, lv_ctx.agent_id));
	/* the agent really is in gVisor */
	assert_int_equal(lv_exec("dmesg | head -n 1", &out), 0);
	if (strstr(out, "Starting gVisor") == NULL)
		fail_msg("not gVisor: %s", out);
	free(out);

	lv_pull("gateway-deny");
	lv_reset("gateway-deny");

	/* cgroup-freeze: with a busy loop in the agent, the sandbox's CPU
	 * time stands still while frozen and moves again once thawed. */
	assert_int_equal(lv_exec("setsid sh -c 'while :; do :; done' "
	    "</dev/null >/dev/null 2>&1 & echo $!", &out), 0);
	busy = atoi(out);
	free(out);
	assert_true(busy > 1);
	if (!lv_cpu_moves())
		fail_msg("the busy loop used no CPU before the freeze");
	lv_pull("cgroup-freeze");
	usleep(50000);
	c0 = lv_cpu_ns();
	usleep(300000);
	c1 = lv_cpu_ns();
	if (c1 != c0)
		fail_msg("frozen sandbox used %llu ns of CPU", c1 - c0);
	lv_reset("cgroup-freeze");
	{
		const struct lever_entry *l = lever_find("cgroup-freeze");
		struct errbuf e = { 0 };

		assert_int_equal(l->verify(&lv_ctx, l, &e), -1);
	}
	if (!lv_cpu_moves())
		fail_msg("the sandbox stayed frozen after the thaw");
	{
		char *k = xasprintf("kill -9 %d", busy);

		assert_int_equal(lv_exec(k, NULL), 0);
		free(k);
	}

	/* link-down, net-disconnect: a connect from inside the sandbox
	 * works before and fails after (gVisor's host network: the netns the
	 * levers act on is the one the sandbox's sockets live in). */
	assert_true(lv_reaches_gateway());
	lv_pull("link-down");
	assert_false(lv_reaches_gateway());
	lv_reset("link-down");
	assert_true(lv_reaches_gateway());
	lv_pull("net-disconnect");
	assert_false(lv_reaches_gateway());
	lv_reset("net-disconnect");
	assert_true(lv_reaches_gateway());

	/* pause (runsc pause) and the external example (a pause through the
	 * Engine API): verified by inspect; the engine refuses an exec. */
	lv_pull("pause");
	assert_int_equal(lv_exec("true", NULL), -1);
	lv_reset("pause");
	lv_exec_works();
	{
		char *name = xasprintf("external:%s/leakbox/levers/"
		    "example-lever", srcdir);
		struct errbuf e = { 0 };

		lv_pull(name);
		assert_int_equal(lv_exec("true", NULL), -1);
		assert_int_equal(docker_container_unpause(d, lv_ctx.agent_id,
		    &e), 0);
		lv_exec_works();
		free(name);
	}

	/* kill: the sandbox's host process is gone. */
	assert_int_equal(kill(lv_ctx.agent_pid, 0), 0);
	lv_pull("kill");
	for (int i = 0; i < 100 && kill(lv_ctx.agent_pid, 0) == 0; i++)
		usleep(20000);
	assert_int_equal(kill(lv_ctx.agent_pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	lv_down();
}

/* ---- drills ---------------------------------------------------------- */

/* Drill policy pp into r (fails the test on a drill error). */
static void
rs_drill(const char *pp, struct drill_result *r)
{
	struct drill_options o = { 0 };
	struct errbuf e = { 0 };

	o.policy_path = pp;
	o.runs_dir = scratch;
	if (drill_run(&o, r, &e) != 0)
		fail_msg("drill_run %s: %s", pp, e.msg);
}

/* The text of RUN_DIR/name (caller frees). */
static char *
rs_read(const char *run_dir, const char *name)
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/%s", run_dir, name), *t;
	size_t n;

	t = util_read_file(p, 16 << 20, &n, &e);
	if (t == NULL)
		fail_msg("%s", e.msg);
	free(p);
	return t;
}

static void
test_runsc_drill(void **state)
{
	char *pp = xasprintf("%s/policies/hardened-gvisor.yaml", srcdir);
	struct drill_result r;
	char *t, *cmd;

	(void)state;
	rs_drill(pp, &r);
	if (r.verdict != DRILL_VERDICT_CONTAINED)
		fail_msg("verdict %s: %s", drill_verdict_name(r.verdict),
		    r.verdict_reason);
	assert_true(r.bait_fired);
	assert_int_equal(r.nlevers, 2);
	assert_true(r.levers[0].verified);
	assert_true(r.levers[1].verified);
	assert_true(r.time_to_kill_ms > 0);
	assert_int_equal(r.norphans, 0);
	assert_string_equal(r.runtime, "runsc");
	t = rs_read(r.run_dir, "lab.json");
	assert_non_null(strstr(t, "\"agent\":\t\"runsc\""));
	free(t);
	t = rs_read(r.run_dir, "evidence.jsonl");
	assert_non_null(strstr(t, "\"runtime\":\"runsc\""));
	/* the tripwire saw a read (the gofer's opens do not count) */
	if (strstr(t, "\"via\":\"file-open\"") != NULL)
		fail_msg("a tripwire open counted under runsc");
	free(t);
	t = rs_read(r.run_dir, "report.json");
	assert_non_null(strstr(t, "\"runtime\":"));
	free(t);
	t = rs_read(r.run_dir, "report.md");
	assert_non_null(strstr(t, "| Agent runtime | runsc"));
	free(t);
	cmd = xasprintf("'%s' verify '%s' >/dev/null", getenv("ARES_BIN") ?
	    getenv("ARES_BIN") : "./ares", r.run_dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	rs_nothing_left(r.run_id);
	free(pp);
}

/* A script agent under runsc (policy text around body); returns the
 * path of the policy (caller frees). */
static char *
rs_script_policy(const char *name, const char *body, const char *levers)
{
	struct errbuf e = { 0 };
	char *sp = xasprintf("%s/%s.sh", scratch, name), *extra, *pp;
	char *all = xasprintf("#!/bin/sh\n%s\n", body);

	assert_int_equal(util_write_file(sp, all, strlen(all), 0644, &e), 0);
	free(all);
	extra = xasprintf("runtime: runsc\nagent: {script: %s}\n", sp);
	pp = rs_policy(name, levers, extra);
	free(extra);
	free(sp);
	return pp;
}

static void
test_runsc_listing(void **state)
{
	/* stat, list and walk the planted files, never read them */
	char *pp = rs_script_policy("rs-listing", "find ~ -type f >/dev/null "
	    "2>&1; ls -la ~/.config/tickets >/dev/null 2>&1; stat "
	    "~/.config/tickets/recovery-codes.txt >/dev/null 2>&1; "
	    "test -r ~/.config/tickets/recovery-codes.txt; sleep 3; "
	    "echo '@done listing'", "gateway-deny, net-disconnect");
	struct drill_result r;

	(void)state;
	rs_drill(pp, &r);
	if (r.bait_fired)
		fail_msg("bait %s fired on a listing under runsc",
		    r.bait_name);
	rs_nothing_left(r.run_id);
	free(pp);
}

static void
test_runsc_disguised(void **state)
{
	struct errbuf e = { 0 };
	char *ex = xasprintf("%s/leakbox/agents/disguised.sh", srcdir), *body;
	char *all, *pp;
	struct drill_result r;
	size_t i, n, disguised = 0;

	(void)state;
	body = util_read_file(ex, 256 * 1024, &n, &e);
	assert_non_null(body);
	all = xasprintf("ATTACK_HOLD=60\n%s", body);
	pp = rs_script_policy("rs-disguised", all, "gateway-deny, "
	    "net-disconnect");
	free(all);
	free(body);
	free(ex);
	rs_drill(pp, &r);
	assert_true(r.bait_fired);
	for (i = 0; i < r.norphans && i < DRILL_MAX_ORPHANS; i++) {
		if (strcmp(r.orphans[i].kind, "process") != 0)
			continue;
		/* the host's processes (/top's answer under runsc) are not
		 * the agent's */
		if (strstr(r.orphans[i].name, "process_api") != NULL ||
		    strstr(r.orphans[i].name, "dockerd") != NULL ||
		    strstr(r.orphans[i].name, "containerd") != NULL)
			fail_msg("a host process as orphan: %s",
			    r.orphans[i].name);
		if (strstr(r.orphans[i].name, "ares-lab agent") != NULL)
			disguised++;
	}
	if (disguised < 2)
		fail_msg("%zu disguised process(es) among %zu orphan(s)",
		    disguised, r.norphans);
	assert_int_equal(r.verdict, DRILL_VERDICT_BREACHED);
	rs_nothing_left(r.run_id);
	free(pp);
}

/* ares probe --policy pp: its exit code; *j the probe JSON (caller
 * deletes), run_dir its run dir (>= 512 bytes). */
static int
rs_probe(const char *pp, cJSON **j, char *run_dir)
{
	const char *bin = getenv("ARES_BIN") != NULL ? getenv("ARES_BIN") :
	    "./ares";
	char *out = xasprintf("%s/probe-%u.json", scratch,
	    (unsigned)randombytes_random());
	char *cmd = xasprintf("'%s' probe --policy '%s' --json '%s' --runs "
	    "'%s/probes' >/dev/null 2>&1", bin, pp, out, scratch);
	struct errbuf e = { 0 };
	int st = system(cmd);
	char *txt;
	size_t n;

	txt = util_read_file(out, 1 << 20, &n, &e);
	if (txt == NULL)
		fail_msg("probe %s: no JSON (%s)", pp, e.msg);
	*j = cJSON_ParseWithLength(txt, n);
	assert_non_null(*j);
	snprintf(run_dir, 512, "%s/probes/%s", scratch,
	    util_json_str(*j, "run_id", "?"));
	free(txt);
	free(cmd);
	free(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The row id of probe JSON j (NULL when absent). */
static const cJSON *
rs_row(const cJSON *j, const char *id)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
		if (strcmp(util_json_str(r, "id", ""), id) == 0)
			return r;
	return NULL;
}

static void
test_runsc_probe(void **state)
{
	char *pp = xasprintf("%s/policies/hardened-gvisor.yaml", srcdir);
	char run_dir[512], *cmd;
	const cJSON *r;
	cJSON *j;
	int rc, n = 0;

	(void)state;
	/* under runsc: every row passes, the kernel seal among them */
	rc = rs_probe(pp, &j, run_dir);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows")) {
		if (strcmp(util_json_str(r, "result", ""), "pass") != 0)
			fail_msg("row %s under runsc: %s (%s)",
			    util_json_str(r, "id", "?"),
			    util_json_str(r, "result", "?"),
			    util_json_str(r, "observed", ""));
		n++;
	}
	assert_int_equal(rc, 0);
	assert_true(n >= 19);
	r = rs_row(j, "kernel");
	assert_non_null(r);
	assert_non_null(strstr(util_json_str(r, "observed", ""), "gVisor"));
	assert_string_equal(util_json_str(j, "result", ""), "held");
	cJSON_Delete(j);
	cmd = xasprintf("'%s' verify '%s' >/dev/null 2>&1", getenv("ARES_BIN")
	    != NULL ? getenv("ARES_BIN") : "./ares", run_dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(pp);

	/* the same policy on runc: the kernel row fails, not core (WARN),
	 * the battery still holds */
	pp = xasprintf("%s/policies/hardened.yaml", srcdir);
	rc = rs_probe(pp, &j, run_dir);
	assert_int_equal(rc, 0);
	r = rs_row(j, "kernel");
	assert_non_null(r);
	assert_string_equal(util_json_str(r, "result", ""), "warn");
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
	    "core")));
	assert_null(strstr(util_json_str(r, "observed", ""), "gVisor"));
	cJSON_Delete(j);
	free(pp);
}

/* ---- refused: flaws gVisor would not reproduce ---------------------- */

/* host-pid, host-ipc, seccomp-unconfined under runsc: lab up refuses
 * each before anything is created, naming the flaw, the runtime and
 * why (never a lab that only looks like the flaw). */
static void
test_runsc_refused(void **state)
{
	static const char *const flaws[] = { "host-pid", "host-ipc",
	    "seccomp-unconfined", NULL };
	size_t i;

	(void)state;
	for (i = 0; flaws[i] != NULL; i++) {
		struct errbuf e = { 0 };
		char *pp = xasprintf("%s/rs-refused-%s.yaml", scratch, flaws[i]);
		char *t = xasprintf("name: rs-refused\nseed: 7\nvariant: default\n"
		    "bait: [tickets-admin-token]\nlevers: [gateway-deny]\n"
		    "flaws: [%s]\nruntime: runsc\n", flaws[i]);
		char run_id[64], *dir, *want;
		struct policy *p;
		struct lab *lab;

		assert_int_equal(util_write_file(pp, t, strlen(t), 0644, &e), 0);
		p = policy_load(pp, &e);
		if (p == NULL)
			fail_msg("%s", e.msg);
		rs_run_id("rsref", run_id);
		dir = xasprintf("%s/%s", scratch, run_id);
		assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
		lab = lab_up(d, p, dir, run_id, 1, &e);
		assert_null(lab);
		assert_int_equal(e.code, ERRBUF_INPUT);
		want = xasprintf("flaw %s is not reproduced under runtime runsc",
		    flaws[i]);
		if (strstr(e.msg, want) == NULL || strstr(e.msg, "runc") ==
		    NULL)
			fail_msg("message: %s", e.msg);
		rs_nothing_left(run_id);
		free(want);
		free(dir);
		free(t);
		free(pp);
		policy_free(p);
	}
}

/* Whether the engine has runsc registered (GET /info). */
static bool
rs_have_runsc(void)
{
	struct errbuf e = { 0 };
	cJSON *info = docker_info(d, &e);
	const cJSON *rts = cJSON_GetObjectItemCaseSensitive(info, "Runtimes");
	bool have = cJSON_GetObjectItemCaseSensitive(rts, "runsc") != NULL;

	cJSON_Delete(info);
	return have;
}

int
main(void)
{
	const struct CMUnitTest any_engine[] = {
		cmocka_unit_test(test_runsc_missing),
	};
	const struct CMUnitTest with_runsc[] = {
		cmocka_unit_test(test_runsc_probe),
		cmocka_unit_test_teardown(test_runsc_levers, lv_cleanup),
		cmocka_unit_test(test_runsc_drill),
		cmocka_unit_test(test_runsc_listing),
		cmocka_unit_test(test_runsc_disguised),
		cmocka_unit_test(test_runsc_refused),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	const char *req_rs = getenv("ARES_REQUIRE_RUNSC");
	struct errbuf e = { 0 };
	char tmpl[] = "/tmp/ares-runsc-XXXXXX";
	int rc;

	if (sodium_init() < 0)
		return 99;
	srcdir = getenv("ARES_SRCDIR") != NULL ? getenv("ARES_SRCDIR") : ".";
	d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1) {
		fprintf(stderr, "test_runsc: no Docker Engine: %s\n", e.msg);
		return (req != NULL && strcmp(req, "1") == 0) ? 1 : 77;
	}
	if (mkdtemp(tmpl) == NULL)
		return 99;
	snprintf(scratch, sizeof scratch, "%s", tmpl);
	rc = cmocka_run_group_tests_name("runsc: any engine", any_engine,
	    NULL, NULL);
	if (rc == 0 && !rs_have_runsc()) {
		fprintf(stderr, "test_runsc: the engine has no runtime runsc "
		    "(apt-get install runsc; register it in daemon.json "
		    "\"runtimes\" with runtimeArgs --platform=ptrace "
		    "--network=host: docs/policy.md)%s\n", req_rs != NULL &&
		    strcmp(req_rs, "1") == 0 ? ": required "
		    "(ARES_REQUIRE_RUNSC=1)" : "; gVisor tests skipped");
		(void)util_rm_rf(scratch, &e);
		docker_close(d);
		return (req_rs != NULL && strcmp(req_rs, "1") == 0) ? 1 : 77;
	}
	if (rc == 0)
		rc = cmocka_run_group_tests_name("runsc: gVisor", with_runsc,
		    NULL, NULL);
	(void)util_rm_rf(scratch, &e);
	docker_close(d);
	return rc;
}
