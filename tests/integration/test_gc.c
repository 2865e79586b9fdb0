/*
 * test_gc.c - gc_sweep against the real Docker Engine: what it removes and,
 * above all, what it never removes.
 *
 * Each case makes containers and networks of its own run (a fresh
 * "gctest-<hex>" run id) on the suite's engine and sweeps:
 *   - an owner that lives (this process) is kept;
 *   - an owner that is gone (this pid with another start time: a reused
 *     pid; another boot) is removed, container and network, with the host
 *     firewall rules of its bridge (as root);
 *   - a gone owner whose lease file names the run is kept, until the lease
 *     goes;
 *   - an object without an owner label (an older ares) that is young is
 *     kept;
 *   - a running container of a gone owner whose cgroup is frozen (what the
 *     cgroup-freeze lever leaves when ares dies) is removed (gc kills and
 *     thaws it first; on kernels where a fatal signal takes a task out of
 *     the freezer, as on this project's 6.x, the engine could remove it
 *     anyway: docs/levers.md).  The container must really be frozen
 *     before the sweep.
 * Another sweep (a drill's, beside this test) may remove a gone owner's
 * objects first: the checks are on what is left, not on who removed it.
 * Everything the test makes is removed at the end, also on failure.
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static struct docker *D;
static char *IMAGE;
static char RUNS[8][64];
static size_t NRUNS;

/* A fresh run id, remembered for the cleanup. */
static const char *
new_run(void)
{
	uint8_t rnd[6];
	char hex[13];

	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	assert_true(NRUNS < 8);
	snprintf(RUNS[NRUNS], sizeof RUNS[0], "gctest-%s", hex);
	return RUNS[NRUNS++];
}

/* An owner string of this process that is gone: another start time (a
 * pid the kernel handed to someone else) or, with other_boot, another
 * boot.  out holds GC_OWNER_MAX bytes. */
static void
dead_owner(char *out, bool other_boot)
{
	char boot[37];
	unsigned long long start;
	long pid;

	assert_int_equal(gc_owner_parse(gc_owner(), boot, &pid, &start), 0);
	if (other_boot)
		snprintf(out, GC_OWNER_MAX, "00000000-0000-0000-0000-"
		    "000000000000:%ld:%llu", pid, start);
	else
		snprintf(out, GC_OWNER_MAX, "%s:%ld:%llu", boot, pid, start + 7);
}

/* A container of run (owner, lease may be NULL: owner NULL gives this
 * process), started when running.  Returns its id (caller frees). */
static char *
container(const char *run, const char *owner, const char *lease,
    bool running)
{
	static const char *const cmd[] = { "/bin/sh", "-c", "sleep 300", NULL };
	struct docker_container_spec s = {
		.image = IMAGE, .cmd = cmd, .network = NULL, .run_id = run,
		.role = "gctest", .owner = owner, .lease = lease,
		.drop_all_caps = true, .memory_bytes = 32 << 20,
		.pids_limit = 16,
	};
	struct errbuf e = { 0 };
	char *id = docker_container_create(D, &s, &e);

	if (id == NULL)
		fail_msg("create: %s", e.msg);
	if (running && docker_container_start(D, id, &e) == -1)
		fail_msg("start: %s", e.msg);
	return id;
}

/* Number of containers (or networks) labelled ares.run=run. */
static int
count(const char *run, bool networks)
{
	char *label = xasprintf("ares.run=%s", run);
	struct errbuf e = { 0 };
	cJSON *a = networks ? docker_networks_by_label(D, label, &e) :
	    docker_containers_by_label(D, label, &e);
	int n;

	free(label);
	if (a == NULL)
		fail_msg("list: %s", e.msg);
	n = cJSON_GetArraySize(a);
	cJSON_Delete(a);
	return n;
}

/* One sweep; fails the test when it cannot run.  Returns the report
 * (caller frees). */
static struct gc_report *
sweep(void)
{
	struct gc_report *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };

	if (gc_sweep(D, r, &e) == -1)
		fail_msg("gc_sweep: %s", e.msg);
	return r;
}

/* Whether r removed an object of kind for run. */
static bool
removed(const struct gc_report *r, const char *kind, const char *run)
{
	size_t i;

	for (i = 0; i < r->nremoved && i < GC_REPORT_MAX; i++)
		if (strcmp(r->removed[i].kind, kind) == 0 &&
		    strcmp(r->removed[i].run, run) == 0)
			return true;
	return false;
}

/* Host INPUT rules (iptables) naming run. */
static int
rules_of(const char *run)
{
	const char *argv[] = { "iptables", "-w", "5", "-S", "INPUT", NULL };
	char out[65536], want[96];
	struct errbuf e = { 0 };
	int n = 0;
	const char *p;

	if (util_run(argv, NULL, 10000, out, sizeof out, &e) != 0)
		return -1;
	snprintf(want, sizeof want, "ares.run=%s\"", run);
	for (p = out; (p = strstr(p, want)) != NULL; p++)
		n++;
	return n;
}

static void
test_live_owner_kept(void **state)
{
	const char *run = new_run();
	struct gc_report *r;
	char *id;

	(void)state;
	id = container(run, NULL, NULL, true);   /* owner: this process */
	r = sweep();
	assert_false(removed(r, "container", run));
	assert_int_equal(count(run, false), 1);
	free(r);
	free(id);
}

static void
test_dead_owner_removed(void **state)
{
	const char *run = new_run(), *run2 = new_run();
	char owner[GC_OWNER_MAX], other[GC_OWNER_MAX], br[HOSTFW_IFNAME_MAX];
	const char *brs[1];
	struct docker_network_spec ns = { 0 };
	struct errbuf e = { 0 };
	struct gc_report *r;
	char *id, *id2, *net;
	bool root = geteuid() == 0;

	(void)state;
	dead_owner(owner, false);
	dead_owner(other, true);
	/* a sealed bridge of the dead run, as lab up makes it */
	hostfw_bridge_name(run, "lab", br);
	brs[0] = br;
	if (root)
		assert_int_equal(hostfw_seal(run, brs, 1, &e), 0);
	ns.name = run;
	ns.run_id = run;
	ns.bridge_name = br;
	ns.no_host_address = true;
	ns.owner = owner;
	net = docker_network_create(D, &ns, &e);
	if (net == NULL)
		fail_msg("network: %s", e.msg);
	id = container(run, owner, NULL, true);
	id2 = container(run2, other, NULL, false);
	if (root)
		/* a drill running beside this test may have swept the dead
		 * run whole already (its objects first, then its rules, as
		 * gc.c does): the rules may be gone only with its objects */
		assert_true(rules_of(run) >= 1 ||
		    (count(run, false) == 0 && count(run, true) == 0));
	/* The start-of-run sweep of a drill running beside this test may
	 * take them first: what counts is that they are gone. */
	r = sweep();
	assert_int_equal(count(run, false), 0);
	assert_int_equal(count(run, true), 0);
	assert_int_equal(count(run2, false), 0);
	if (root)
		assert_int_equal(rules_of(run), 0);
	free(r);
	free(id);
	free(id2);
	free(net);
}

static void
test_lease_kept(void **state)
{
	const char *run = new_run();
	char dir[] = "/tmp/ares-test-gc-lease-XXXXXX", owner[GC_OWNER_MAX];
	char *lease, *id;
	struct errbuf e = { 0 };
	struct gc_report *r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(gc_lease_write(dir, run, &e), 0);
	lease = xasprintf("%s/" GC_LEASE_NAME, dir);
	dead_owner(owner, false);
	id = container(run, owner, lease, false);
	r = sweep();
	assert_false(removed(r, "container", run));
	assert_int_equal(count(run, false), 1);
	free(r);
	/* the lease goes (ares lab down, or the run dir deleted) */
	gc_lease_remove(dir);
	r = sweep();
	assert_int_equal(count(run, false), 0);
	free(r);
	assert_int_equal(rmdir(dir), 0);
	free(lease);
	free(id);
}

static void
test_unowned_young_kept(void **state)
{
	const char *run = new_run();
	struct docker_response resp = { 0 };
	struct errbuf e = { 0 };
	struct gc_report *r;
	char *body = xasprintf("{\"Image\":\"%s\",\"Cmd\":[\"/bin/true\"],"
	    "\"Labels\":{\"ares.run\":\"%s\"}}", IMAGE, run);

	(void)state;
	/* made as an ares before owners were labelled made it */
	assert_int_equal(docker_request(D, "POST", "/containers/create", body,
	    strlen(body), &resp, &e), 0);
	assert_int_equal(resp.status, 201);
	docker_response_free(&resp);
	free(body);
	r = sweep();
	assert_false(removed(r, "container", run));
	assert_int_equal(count(run, false), 1);
	free(r);
}

static void
test_frozen_dead_owner(void **state)
{
	const char *run = new_run();
	char owner[GC_OWNER_MAX], *id, *f;
	struct lever_ctx c;
	struct errbuf e = { 0 };
	struct gc_report *r;
	cJSON *ins;

	(void)state;
	dead_owner(owner, false);
	id = container(run, owner, NULL, true);
	ins = docker_container_inspect(D, id, &e);
	assert_non_null(ins);
	memset(&c, 0, sizeof c);
	c.netns_fd = -1;
	c.agent_pid = docker_inspect_pid(ins);
	snprintf(c.agent_id, sizeof c.agent_id, "%s", id);
	cJSON_Delete(ins);
	/* Freeze the container's own program, not runc's init on its way to
	 * exec it: a v1 freezer can stay FREEZING for ever on that init's
	 * threads, and the engine then hangs on the container.  */
	for (int i = 0; i < 500; i++) {
		char comm[64] = "", *cp = xasprintf("/proc/%ld/comm",
		    (long)c.agent_pid);
		FILE *cf = fopen(cp, "r");

		free(cp);
		if (cf != NULL) {
			if (fgets(comm, sizeof comm, cf) == NULL)
				comm[0] = '\0';
			fclose(cf);
		}
		if (comm[0] != '\0' && strncmp(comm, "runc:", 5) != 0)
			break;
		usleep(10000);
	}
	if (lever_kernel_prepare(&c, &e) == -1 && c.cgroup_dir == NULL) {
		/* no freezer here: the removal without one still holds */
		fprintf(stderr, "note: no freezer (%s): frozen case not run\n",
		    e.msg);
	} else {
		char st[32] = "";
		FILE *fp;

		f = xasprintf("%s/%s", c.cgroup_dir, c.cgroup_version == 1 ?
		    "freezer.state" : "cgroup.freeze");
		fp = fopen(f, "w");
		assert_non_null(fp);
		fputs(c.cgroup_version == 1 ? "FROZEN" : "1", fp);
		assert_int_equal(fclose(fp), 0);
		/* frozen indeed (v1 passes FREEZING on its way) */
		for (int i = 0; i < 100; i++) {
			fp = fopen(f, "r");
			assert_non_null(fp);
			if (fgets(st, sizeof st, fp) == NULL)
				st[0] = '\0';
			fclose(fp);
			if (strncmp(st, c.cgroup_version == 1 ? "FROZEN" : "1",
			    c.cgroup_version == 1 ? 6 : 1) == 0)
				break;
			usleep(10000);
		}
		if (strncmp(st, c.cgroup_version == 1 ? "FROZEN" : "1",
		    c.cgroup_version == 1 ? 6 : 1) != 0) {
			/* thawed again, so the cleanup can remove it */
			fp = fopen(f, "w");
			if (fp != NULL) {
				fputs(c.cgroup_version == 1 ? "THAWED" : "0", fp);
				fclose(fp);
			}
			fail_msg("the freezer did not reach frozen (%s)", st);
		}
		free(f);
	}
	lever_kernel_release(&c);   /* nothing frozen by us: closes only */
	r = sweep();
	if (count(run, false) != 0)
		fail_msg("the frozen container stayed: %s", r->nfailed > 0 ?
		    r->failed[0].error : "(not even tried)");
	free(r);
	free(id);
}

/* Whatever a case left: removed (also after a failure). */
static int
cleanup(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NRUNS; i++) {
		struct errbuf e = { 0 };

		(void)lab_teardown(D, RUNS[i], &e);
	}
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_live_owner_kept, cleanup),
		cmocka_unit_test_teardown(test_dead_owner_removed, cleanup),
		cmocka_unit_test_teardown(test_lease_kept, cleanup),
		cmocka_unit_test_teardown(test_unowned_young_kept, cleanup),
		cmocka_unit_test_teardown(test_frozen_dead_owner, cleanup),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = { 0 };
	int rc;

	if (sodium_init() < 0)
		return 1;
	D = docker_connect(NULL, &e);
	if (D == NULL) {
		if (req != NULL && strcmp(req, "1") == 0) {
			fprintf(stderr, "ARES_REQUIRE_DOCKER=1 but no engine: "
			    "%s\n", e.msg);
			return 1;
		}
		fprintf(stderr, "skip: no Docker Engine (%s)\n", e.msg);
		return 77;
	}
	if (lab_image_ensure(D, &IMAGE, &e) == -1) {
		fprintf(stderr, "lab image: %s\n", e.msg);
		docker_close(D);
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(IMAGE);
	docker_close(D);
	return rc;
}
