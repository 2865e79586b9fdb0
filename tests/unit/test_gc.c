/*
 * test_gc.c - owners and leases of ares objects (core/gc.c): the owner
 * string of this process, its parser, the liveness of real processes
 * (this one, a reaped child, a zombie, another start time, another boot)
 * and lease files (right run, wrong run, symlink, relative path).
 */
#include "internal.h"

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

static void
test_owner_self(void **state)
{
	const char *o = gc_owner();
	char boot[37], want[64], *bid;
	unsigned long long start;
	long pid;
	size_t len;
	struct errbuf e = { 0 };

	(void)state;
	assert_int_equal(gc_owner_parse(o, boot, &pid, &start), 0);
	assert_int_equal(pid, (long)getpid());
	bid = util_read_file("/proc/sys/kernel/random/boot_id", 64, &len, &e);
	assert_non_null(bid);
	bid[strcspn(bid, "\n")] = '\0';
	assert_string_equal(boot, bid);
	free(bid);
	assert_true(start > 0);
	assert_int_equal(gc_owner_alive(o), 1);
	/* the same pid with another start time: a reused pid, not us */
	snprintf(want, sizeof want, "%s:%ld:%llu", boot, pid, start + 1);
	assert_int_equal(gc_owner_alive(want), 0);
	/* another boot: gone */
	snprintf(want, sizeof want, "00000000-0000-0000-0000-000000000000:%ld:"
	    "%llu", pid, start);
	assert_int_equal(gc_owner_alive(want), 0);
	/* ... but on an engine other machines may use (remote), another
	 * boot may be another machine's live process: it lives; this boot's
	 * dead owner is still dead, a live one alive, a bad one bad */
	assert_int_equal(gc_owner_alive_shared(want), 1);
	snprintf(want, sizeof want, "%s:%ld:%llu", boot, pid, start + 1);
	assert_int_equal(gc_owner_alive_shared(want), 0);
	assert_int_equal(gc_owner_alive_shared(o), 1);
	assert_int_equal(gc_owner_alive_shared("x"), -1);
	/* the same string on every call */
	assert_ptr_equal(gc_owner(), o);
}

static void
test_owner_parse(void **state)
{
	char boot[37];
	unsigned long long start;
	long pid;
	static const char *const bad[] = {
		"", "x", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0::1",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:0:1",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:-1:1",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:2x",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:2:3",
		"0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0:1:2",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:12345678901:2",
		"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:123456789012345678901",
	};
	size_t i;

	(void)state;
	assert_int_equal(gc_owner_parse(
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:4242:987654", boot, &pid,
	    &start), 0);
	assert_string_equal(boot, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	assert_int_equal(pid, 4242);
	assert_true(start == 987654ull);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (gc_owner_parse(bad[i], boot, &pid, &start) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(gc_owner_alive(bad[i]), -1);
	}
	assert_int_equal(gc_owner_parse(NULL, boot, &pid, &start), -1);
}

/* The owner string of process pid, as gc_owner() writes it for itself. */
static void
owner_of(pid_t pid, char *out, size_t len)
{
	char boot[37];
	unsigned long long start;
	long self;
	char path[64], *st, *p;
	size_t n;
	struct errbuf e = { 0 };
	int f;

	assert_int_equal(gc_owner_parse(gc_owner(), boot, &self, &start), 0);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	st = util_read_file(path, 4096, &n, &e);
	assert_non_null(st);
	p = strrchr(st, ')');
	assert_non_null(p);
	p++;
	for (f = 3; f < 22; f++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	p += strspn(p, " ");
	snprintf(out, len, "%s:%d:%llu", boot, (int)pid,
	    strtoull(p, NULL, 10));
	free(st);
}

static void
test_owner_children(void **state)
{
	char o[GC_OWNER_MAX];
	pid_t pid;
	int status;

	(void)state;
	/* a live child: alive */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	owner_of(pid, o, sizeof o);
	assert_int_equal(gc_owner_alive(o), 1);
	/* killed, not yet reaped (a zombie): gone */
	kill(pid, SIGKILL);
	for (int i = 0; i < 200; i++) {
		char path[64], *st;
		size_t n;
		struct errbuf e = { 0 };
		bool zombie;

		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		st = util_read_file(path, 4096, &n, &e);
		zombie = st != NULL && strstr(st, ") Z ") != NULL;
		free(st);
		if (zombie)
			break;
		usleep(10000);
	}
	assert_int_equal(gc_owner_alive(o), 0);
	/* reaped: gone */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(gc_owner_alive(o), 0);
}

static void
test_lease(void **state)
{
	char dir[] = "/tmp/ares-test-gc-XXXXXX", path[128], link[128];
	struct errbuf e = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/" GC_LEASE_NAME, dir);
	assert_false(gc_lease_alive(path, "run-1"));
	assert_int_equal(gc_lease_write(dir, "run-1", &e), 0);
	assert_true(gc_lease_alive(path, "run-1"));
	assert_false(gc_lease_alive(path, "run-2"));
	assert_false(gc_lease_alive(path, "run-"));
	assert_false(gc_lease_alive(path, ""));
	assert_false(gc_lease_alive(path + 1, "run-1"));   /* relative */
	snprintf(link, sizeof link, "%s/other.lease", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_false(gc_lease_alive(link, "run-1"));        /* a symlink */
	unlink(link);
	gc_lease_remove(dir);
	assert_false(gc_lease_alive(path, "run-1"));
	gc_lease_remove(dir);                                /* absent: ok */
	assert_int_equal(rmdir(dir), 0);
}

/* docker.c labels what a spec says; create adds the owner itself. */
static void
test_labels(void **state)
{
	struct docker_container_spec s = { .image = "img:1", .run_id = "r1",
	    .role = "agent", .owner = "o", .lease = "/x/lab.lease" };
	cJSON *c = docker_container_config(&s);
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "Labels");

	(void)state;
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(l,
	    "ares.owner")->valuestring, "o");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(l,
	    "ares.lease")->valuestring, "/x/lab.lease");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(l,
	    "ares.run")->valuestring, "r1");
	cJSON_Delete(c);
}

static void
test_report_json(void **state)
{
	struct gc_report *r = calloc(1, sizeof *r);
	cJSON *j;
	char *t;

	(void)state;
	assert_non_null(r);
	assert_null(gc_report_text("ares", r));
	snprintf(r->removed[0].kind, sizeof r->removed[0].kind, "container");
	snprintf(r->removed[0].id, sizeof r->removed[0].id, "abc");
	snprintf(r->removed[0].run, sizeof r->removed[0].run, "run-1");
	r->nremoved = 1;
	snprintf(r->failed[0].kind, sizeof r->failed[0].kind, "network");
	snprintf(r->failed[0].error, sizeof r->failed[0].error, "busy");
	r->nfailed = 1;
	j = gc_report_json(r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j,
	    "removed")), 1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "failed"),
	    0), "error")->valuestring, "busy");
	cJSON_Delete(j);
	t = gc_report_text("ares drill", r);
	assert_non_null(strstr(t, "ares drill: gc: removed container abc"));
	assert_non_null(strstr(t, "could NOT remove network"));
	free(t);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_self),
		cmocka_unit_test(test_owner_parse),
		cmocka_unit_test(test_owner_children),
		cmocka_unit_test(test_lease),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_report_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
