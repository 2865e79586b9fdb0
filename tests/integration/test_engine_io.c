/*
 * test_engine_io.c - the engine API a lab on a remote engine is built
 * with, against a real Docker Engine (DOCKER_HOST, so also the TLS one of
 * remote_engine.sh): archive PUT into a created container's volume (the
 * ownership of what is put there holds), archive GET back out, bounded
 * (an answer above the cap is an error, never cut) and extracted safely
 * (a symlink or fifo the container made refuses the archive), and the
 * stdout follower (every line from the first, stderr never, overlong and
 * partial lines counted, stop while idle).
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
	f = docker_follow_start(d, id, 256, collect, &l, &e);
	assert_non_null(f);
	assert_int_equal(docker_follow_wait(f, 20000), 1);
	docker_follow_stop(f, &fs);
	assert_true(fs.ended);
	assert_int_equal(fs.lines, 0);
	assert_int_equal(docker_container_start(d, id, &e), 0);
	f = docker_follow_start(d, id, 256, collect, &l, &e);
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
	f = docker_follow_start(d, id, 256, collect, &l, &e);
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
	f = docker_follow_start(d, id, 64, collect, &l, &e);
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
	f = docker_follow_start(d, "ares-no-such-container", 64, collect, &l,
	    &e);
	assert_non_null(f);
	assert_int_equal(docker_follow_wait(f, 20000), 1);
	docker_follow_stop(f, &fs);
	assert_non_null(strstr(fs.error, "ares-no-such-container"));
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
