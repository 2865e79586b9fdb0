/*
 * docker_smoke.c - hand-run smoke check of core/docker.c against the real
 * Docker Engine.  Exit 0: pass, 1: fail, 77: skipped (no engine reachable;
 * with ARES_REQUIRE_DOCKER=1 an unreachable engine is a failure instead).
 *
 * Builds a one-file rootfs tar (busybox-static from /bin/busybox) with the
 * tar command, imports it (nothing is pulled), creates an Internal network
 * and a container labelled ares.run=<unique>, execs, pauses, disconnects,
 * kills, removes, and checks that nothing labelled is left behind.
 *
 *   gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Icore \
 *     tests/integration/docker_smoke.c core/docker.c core/util.c \
 *     $(pkg-config --cflags --libs libcurl libcjson libsodium) -o /tmp/smoke
 */
#include "internal.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int failures;

#define CHECK(cond, ...) do { \
	if (cond) { printf("ok   %s\n", #cond); } \
	else { failures++; printf("FAIL %s: ", #cond); printf(__VA_ARGS__); \
	    printf("\n"); } \
} while (0)

/* Run argv (no shell); 0 when it exited 0. */
static int run(char *const argv[])
{
	pid_t pid;
	int st;
	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* rootfs tar with /bin/busybox; returns the tar path (caller frees). */
static char *make_rootfs(char *dir, struct errbuf *e)
{
	char *bin = xasprintf("%s/root/bin", dir);
	char *bb = xasprintf("%s/busybox", bin);
	char *root = xasprintf("%s/root", dir);
	char *tar = xasprintf("%s/rootfs.tar", dir);
	size_t len;
	char *data = NULL;
	int rc = -1;

	if (util_mkdir_p(bin, 0755, e) < 0)
		goto out;
	data = util_read_file("/bin/busybox", 16u << 20, &len, e);
	if (data == NULL || util_write_file(bb, data, len, 0755, e) < 0)
		goto out;
	{
		char *argv[] = { "tar", "-C", root, "-cf", tar, "bin", NULL };
		if (run(argv) < 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "tar failed");
			goto out;
		}
	}
	rc = 0;
out:
	free(data);
	free(bin);
	free(bb);
	free(root);
	if (rc < 0) {
		free(tar);
		return NULL;
	}
	return tar;
}

int main(void)
{
	struct errbuf e = {0};
	struct docker *d;
	char tmpl[] = "/tmp/ares-dsmoke-XXXXXX";
	char *dir, *tar = NULL, *run_id, *label, *net_name, *ctr_name;
	char *repo, *ref, *net = NULL, *ctr = NULL, *path;
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	bool require = req != NULL && strcmp(req, "1") == 0;
	struct docker_exec_result r;
	cJSON *j;
	int rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	d = docker_open(NULL, &e);
	if (d == NULL) {
		printf("docker_open: %s\n", e.msg);
		return 1;
	}
	if (docker_negotiate(d, &e) < 0) {
		printf("%s: %s\n", require ? "FAIL" : "skip", e.msg);
		docker_close(d);
		return require ? 1 : 77;
	}
	printf("engine %s, API %s\n", docker_engine_version(d),
	    docker_api_version(d));

	run_id = xasprintf("dsmoke-%ld-%llu", (long)getpid(),
	    (unsigned long long)(util_wall_ns() % 1000000000ULL));
	label = xasprintf("ares.run=%s", run_id);
	net_name = xasprintf("ares-%s-lab", run_id);
	ctr_name = xasprintf("ares-%s-box", run_id);
	repo = xasprintf("ares-%s", run_id);
	ref = xasprintf("%s:t1", repo);

	dir = mkdtemp(tmpl);
	if (dir == NULL || (tar = make_rootfs(dir, &e)) == NULL) {
		printf("FAIL rootfs: %s\n", e.msg);
		return 1;
	}

	rc = docker_image_exists(d, ref, &e);
	CHECK(rc == 0, "exists before import: %d %s", rc, e.msg);
	rc = docker_image_import(d, tar, repo, "t1", &e);
	CHECK(rc == 0, "%s", e.msg);
	rc = docker_image_exists(d, ref, &e);
	CHECK(rc == 1, "exists after import: %d %s", rc, e.msg);
	/* a broken tar must be reported from the progress stream */
	{
		char *bad = xasprintf("%s/bad.tar", dir);
		util_write_file(bad, "not a tar at all", 16, 0644, &e);
		rc = docker_image_import(d, bad, repo, "bad", &e);
		printf("     bad import: rc=%d %s\n", rc, rc ? e.msg : "");
		CHECK(rc == -1, "importing garbage succeeded");
		free(bad);
	}

	{
		struct docker_network_spec ns = { .name = net_name,
		    .run_id = run_id };

		net = docker_network_create(d, &ns, &e);
	}
	CHECK(net != NULL, "%s", e.msg);
	if (net != NULL) {
		struct docker_response resp;
		char *np = xasprintf("/networks/%s", net);
		rc = docker_request(d, "GET", np, NULL, 0, &resp, &e);
		j = rc == 0 ? cJSON_Parse(resp.body) : NULL;
		CHECK(j != NULL && cJSON_IsTrue(cJSON_GetObjectItem(j,
		    "Internal")), "network not Internal");
		cJSON_Delete(j);
		if (rc == 0)
			docker_response_free(&resp);
		free(np);
	}
	{
		const char *cmd[] = { "/bin/busybox", "sleep", "300", NULL };
		const char *aliases[] = { "box", NULL };
		const char *tmpfs[] = { "/tmp", NULL };
		const char *env[] = { "SMOKE=1", NULL };
		struct docker_mount m = { dir, "/host", true, false };
		struct docker_container_spec s = {
			.name = ctr_name, .image = ref, .cmd = cmd, .env = env,
			.user = "65532:65532", .hostname = "box",
			.network = net_name, .aliases = aliases,
			.mounts = &m, .nmounts = 1, .tmpfs = tmpfs,
			.drop_all_caps = true, .read_only_rootfs = true,
			.no_new_privileges = true, .memory_bytes = 64 << 20,
			.pids_limit = 64, .run_id = run_id, .role = "smoke",
		};
		ctr = docker_container_create(d, &s, &e);
		CHECK(ctr != NULL, "%s", e.msg);
	}
	if (ctr == NULL)
		goto cleanup;
	rc = docker_container_start(d, ctr, &e);
	CHECK(rc == 0, "%s", e.msg);
	rc = docker_container_start(d, ctr, &e);
	CHECK(rc == 0, "second start (304): %s", e.msg);

	{
		const char *argv[] = { "busybox", "echo", "hi", NULL };
		rc = docker_exec(d, ctr, argv, NULL, 1024, &r, &e);
		CHECK(rc == 0, "%s", e.msg);
		if (rc == 0) {
			CHECK(strcmp(r.out, "hi\n") == 0, "out=%s", r.out);
			CHECK(r.exit_code == 0, "exit=%d", r.exit_code);
			CHECK(r.err_len == 0, "err=%s", r.err);
			docker_exec_result_free(&r);
		}
	}
	{
		const char *argv[] = { "/bin/busybox", "sh", "-c",
		    "echo out; echo err >&2; id -u; "
		    "touch /rootfs-write 2>/dev/null && echo writable; exit 3",
		    NULL };
		rc = docker_exec(d, ctr, argv, NULL, 1024, &r, &e);
		CHECK(rc == 0, "%s", e.msg);
		if (rc == 0) {
			CHECK(strcmp(r.out, "out\n65532\n") == 0, "out=%s", r.out);
			CHECK(strcmp(r.err, "err\n") == 0, "err=%s", r.err);
			CHECK(r.exit_code == 3, "exit=%d", r.exit_code);
			docker_exec_result_free(&r);
		}
	}
	{
		/* 200 KB of output, kept to 1000 bytes, as root */
		const char *argv[] = { "/bin/busybox", "sh", "-c",
		    "i=0; while [ $i -lt 2000 ]; do "
		    "echo 0123456789012345678901234567890123456789"
		    "01234567890123456789012345678901234567890123456789; "
		    "i=$((i+1)); done", NULL };
		rc = docker_exec(d, ctr, argv, "0", 1000, &r, &e);
		CHECK(rc == 0, "%s", e.msg);
		if (rc == 0) {
			CHECK(r.out_len == 1000 && r.truncated, "len=%zu trunc=%d",
			    r.out_len, r.truncated);
			docker_exec_result_free(&r);
		}
	}
	{
		const char *argv[] = { "/nonexistent", NULL };
		rc = docker_exec(d, ctr, argv, NULL, 1024, &r, &e);
		printf("     exec of a missing binary: rc=%d %s exit=%d\n", rc,
		    rc ? e.msg : "", rc ? 0 : r.exit_code);
		CHECK(rc == -1 || r.exit_code != 0, "missing binary exit 0");
		if (rc == 0)
			docker_exec_result_free(&r);
	}
	{
		/* logs: a second container that prints and exits */
		const char *cmd[] = { "/bin/busybox", "sh", "-c",
		    "i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); "
		    "done; sleep 0.1; echo END >&2", NULL };
		struct docker_container_spec s = {
			.image = ref, .cmd = cmd, .run_id = run_id,
			.role = "smoke-logs", .drop_all_caps = true,
		};
		char *c2 = docker_container_create(d, &s, &e);
		CHECK(c2 != NULL, "%s", e.msg);
		if (c2 != NULL && docker_container_start(d, c2, &e) == 0) {
			char *logs;
			for (int i = 0; i < 500; i++) {   /* up to 5 s */
				j = docker_container_inspect(d, c2, &e);
				bool running = j && docker_inspect_running(j);
				cJSON_Delete(j);
				if (!running)
					break;
				usleep(10000);
			}
			logs = docker_container_logs(d, c2, 20, &e);
			CHECK(logs != NULL, "%s", e.msg);
			if (logs != NULL) {
				size_t n = strlen(logs);
				CHECK(n == 20 && strcmp(logs + n - 13,
				    "line2999\nEND\n") == 0, "logs tail=[%s]",
				    logs);
				free(logs);
			}
			logs = docker_container_logs(d, c2, 1u << 20, &e);
			CHECK(logs != NULL && strncmp(logs, "line0\nline1\n",
			    12) == 0, "full logs: %s", logs ? "bad" : e.msg);
			free(logs);
		}
		if (c2 != NULL) {
			rc = docker_container_remove(d, c2, true, &e);
			CHECK(rc == 0, "%s", e.msg);
		}
		free(c2);
	}

	rc = docker_container_pause(d, ctr, &e);
	CHECK(rc == 0, "%s", e.msg);
	j = docker_container_inspect(d, ctr, &e);
	CHECK(j != NULL, "%s", e.msg);
	if (j != NULL) {
		CHECK(docker_inspect_paused(j), "not paused");
		CHECK(docker_inspect_running(j), "paused but not running");
		CHECK(docker_inspect_pid(j) > 0, "pid");
		CHECK(docker_inspect_network_count(j) == 1, "%zu networks",
		    docker_inspect_network_count(j));
		cJSON_Delete(j);
	}
	rc = docker_container_pause(d, ctr, &e);
	printf("     second pause: rc=%d %s\n", rc, rc ? e.msg : "");
	CHECK(rc == -1 && e.code == ERRBUF_INTERNAL, "second pause");

	rc = docker_network_disconnect(d, net, ctr, true, &e);
	CHECK(rc == 0, "%s", e.msg);
	j = docker_container_inspect(d, ctr, &e);
	if (j != NULL) {
		CHECK(docker_inspect_network_count(j) == 0, "%zu networks",
		    docker_inspect_network_count(j));
		cJSON_Delete(j);
	}
	rc = docker_container_kill(d, ctr, NULL, &e);
	CHECK(rc == 0, "%s", e.msg);
	j = docker_container_inspect(d, ctr, &e);
	if (j != NULL) {
		CHECK(!docker_inspect_running(j), "still running after kill");
		cJSON_Delete(j);
	}

	j = docker_containers_by_label(d, label, &e);
	CHECK(j != NULL && cJSON_GetArraySize(j) == 1, "by label: %s", e.msg);
	cJSON_Delete(j);

cleanup:
	if (ctr != NULL) {
		rc = docker_container_remove(d, ctr, true, &e);
		CHECK(rc == 0, "%s", e.msg);
		rc = docker_container_remove(d, ctr, true, &e);
		printf("     second remove: rc=%d %s\n", rc, rc ? e.msg : "");
		CHECK(rc == -1 && strstr(e.msg, "No such container"),
		    "second remove");
	}
	if (net != NULL) {
		rc = docker_network_remove(d, net, &e);
		CHECK(rc == 0, "%s", e.msg);
	}
	j = docker_containers_by_label(d, label, &e);
	CHECK(j != NULL && cJSON_GetArraySize(j) == 0, "containers left: %s",
	    e.msg);
	cJSON_Delete(j);
	j = docker_networks_by_label(d, label, &e);
	CHECK(j != NULL && cJSON_GetArraySize(j) == 0, "networks left: %s",
	    e.msg);
	cJSON_Delete(j);

	{
		struct docker_response resp;
		char *eref = xasprintf("/images/%s?force=1", ref);
		rc = docker_request(d, "DELETE", eref, NULL, 0, &resp, &e);
		CHECK(rc == 0 && resp.status == 200, "image remove: %ld %s",
		    resp.status, resp.body ? resp.body : e.msg);
		docker_response_free(&resp);
		free(eref);
		rc = docker_image_exists(d, ref, &e);
		CHECK(rc == 0, "image still exists");
	}

	path = dir;
	util_rm_rf(path, &e);
	free(tar);
	free(run_id);
	free(label);
	free(net_name);
	free(ctr_name);
	free(repo);
	free(ref);
	free(net);
	free(ctr);
	docker_close(d);
	printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
