/*
 * test_probe.c - the probe battery without Docker: pure evaluation of exec
 * results, flaw coverage of the tables, JUnit escaping of hostile text,
 * the 80-column table layout, lab.json parsing, a cancelled battery, and
 * a signed probe run dir (sensor chains anchored) checked by
 * probe_verify_dir against tampering, and probe.json rewritten to lie and
 * re-signed with the same key: each row is evaluated again from its
 * recorded observation (probe.jsonl), so the lie is named.
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

static struct probe_ctx ctx;

static void
ctx_init(void)
{
	memset(&ctx, 0, sizeof ctx);
	snprintf(ctx.run_id, sizeof ctx.run_id, "20260101-000000-abcd1234");
	snprintf(ctx.run_dir, sizeof ctx.run_dir, "/tmp/run");
	snprintf(ctx.policy, sizeof ctx.policy, "policies/hardened.yaml");
	snprintf(ctx.variant, sizeof ctx.variant, "default");
	snprintf(ctx.sink_ip, sizeof ctx.sink_ip, "172.24.0.2");
	snprintf(ctx.exfil_host, sizeof ctx.exfil_host, "paste.example.net");
	snprintf(ctx.service, sizeof ctx.service, "tickets");
	ctx.service_port = 8081;
	ctx.real_key = (char *)"sk-real-0123456789abcdef";
}

/* Evaluate row id on stdout text out (and host text, may be NULL). */
static enum probe_outcome
eval(const char *id, const char *out, const char *host,
    struct probe_result *res)
{
	const struct probe_row *row = probe_find(id);
	struct probe_exec x = { 0 };

	if (row == NULL)
		fail_msg("no row %s", id);
	x.out = out;
	x.out_len = strlen(out);
	x.host = host;
	x.host_len = host != NULL ? strlen(host) : 0;
	probe_evaluate(row, &ctx, &x, res);
	return res->outcome;
}

static void
test_eval_network(void **state)
{
	struct probe_result r;

	(void)state;
	assert_int_equal(eval("nic-count", "eth0\nlo\n@done\n", NULL, &r),
	    PROBE_PASS);
	assert_int_equal(eval("nic-count", "eth0\neth1\nlo\n@done\n", NULL,
	    &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "eth1"));
	assert_int_equal(eval("nic-count", "eth0\n", NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("resolve-external", "Server:\t\t127.0.0.11\n"
	    "Address:\t127.0.0.11:53\n\n** server can't find x: NXDOMAIN\n"
	    "@rc=1\n", NULL, &r), PROBE_PASS);
	assert_non_null(strstr(r.observed, "NXDOMAIN"));
	assert_int_equal(eval("resolve-wellknown", "Server:\t\t127.0.0.11\n"
	    "Address:\t127.0.0.11:53\n\nNon-authoritative answer:\n"
	    "Name:\tapi.openai.com\nAddress: 172.24.0.2\n\n@rc=0\n", NULL,
	    &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "the sink"));
	assert_int_equal(eval("resolve-external", "garbage", NULL, &r),
	    PROBE_ERROR);
	assert_int_equal(eval("socket-out", "nc: timed out\n@rc=1\n", NULL,
	    &r), PROBE_PASS);
	assert_int_equal(eval("socket-out", "HTTP/1.1 200 OK\r\n\r\nok@rc=0\n"
	    "@rc=0\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("socket-outside", "@rc=0\n", NULL, &r),
	    PROBE_FAIL);
}

static void
test_eval_host(void **state)
{
	struct probe_result r;

	(void)state;
	assert_int_equal(eval("docker-socket", "@docker_host=\n@done\n", NULL,
	    &r), PROBE_PASS);
	assert_int_equal(eval("docker-socket", "@sock /var/run/docker.sock "
	    "writable\n@docker_host=\n@done\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "/var/run/docker.sock"));
	assert_int_equal(eval("docker-socket", "@docker_host=tcp://x:2375\n"
	    "@done\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("docker-client", "@docker_host=\n@done\n", NULL,
	    &r), PROBE_PASS);
	assert_int_equal(eval("docker-client", "@client /usr/bin/docker\n"
	    "@docker_host=\n@done\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("host-paths", "@mnt / readable\n@mnt /proc "
	    "readable\n@mnt /home/poyo readable\n@mnt /tmp readable\n"
	    "@mnt /etc/hosts readable\n@mnt /sys/fs/cgroup readable\n@done\n",
	    NULL, &r), PROBE_PASS);
	assert_int_equal(eval("host-paths", "@mnt / readable\n@mnt /host "
	    "readable\n@done\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "/host"));
	/* /procfoo is not /proc */
	assert_int_equal(eval("host-paths", "@mnt /procfoo -\n@done\n", NULL,
	    &r), PROBE_FAIL);
	assert_int_equal(eval("control-master-key", "@done\n", NULL, &r),
	    PROBE_PASS);
	assert_int_equal(eval("control-master-key", "@key /x/master.key "
	    "readable\n@done\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("control-master-key", "@key /x/master.key -\n"
	    "@done\n", NULL, &r), PROBE_PASS);
	assert_int_equal(eval("sibling-session-keys", "@key /s/sessions/a/"
	    "session.key readable\n@done\n", NULL, &r), PROBE_FAIL);
}

static void
test_eval_self_modify(void **state)
{
	struct probe_result r;

	(void)state;
	assert_int_equal(eval("self-modify", "@post\n{\"id\":3,\"status\":"
	    "\"pending\"}\n@pending\n{\"changes\":[{\"id\":3,\"status\":"
	    "\"pending\"}]}\n@done\n", "{\"changes\":[{\"id\":3,\"status\":"
	    "\"pending\"}]}", &r), PROBE_PASS);
	assert_non_null(strstr(r.observed, "pending"));
	assert_int_equal(eval("self-modify", "@post\n{\"id\":3,\"status\":"
	    "\"applied\"}\n@pending\n{\"changes\":[]}\n@done\n",
	    "{\"changes\":[{\"id\":3,\"status\":\"applied\"}]}", &r),
	    PROBE_FAIL);
	/* pending per the agent, but the control plane says applied */
	assert_int_equal(eval("self-modify", "@post\n{\"id\":3,\"status\":"
	    "\"pending\"}\n@pending\n{\"changes\":[{\"id\":3,\"status\":"
	    "\"pending\"}]}\n@done\n", "{\"changes\":[{\"id\":3,\"status\":"
	    "\"applied\"}]}", &r), PROBE_FAIL);
	/* the control socket could not be read: no verdict */
	assert_int_equal(eval("self-modify", "@post\n{\"id\":3,\"status\":"
	    "\"pending\"}\n@pending\n{\"changes\":[{\"id\":3,\"status\":"
	    "\"pending\"}]}\n@done\n", NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("self-modify", "@post\nSegmentation fault\n"
	    "@pending\n@done\n", NULL, &r), PROBE_ERROR);
}

static void
test_eval_privilege(void **state)
{
	struct probe_result r;

	(void)state;
	assert_int_equal(eval("capabilities", "CapEff:\t0000000000000000\n"
	    "CapBnd:\t0000000000000000\nSeccomp:\t2\n@done\n", NULL, &r),
	    PROBE_PASS);
	assert_int_equal(eval("capabilities", "CapEff:\t0000000000000000\n"
	    "CapBnd:\t0000000000203000\nSeccomp:\t2\n@done\n", NULL, &r),
	    PROBE_FAIL);
	assert_non_null(strstr(r.observed, "NET_ADMIN"));
	assert_non_null(strstr(r.observed, "SYS_ADMIN"));
	assert_int_equal(eval("capabilities", "CapEff:\t0\nCapBnd:\t0\n"
	    "Seccomp:\t0\n@done\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("capabilities", "@done\n", NULL, &r),
	    PROBE_ERROR);
	assert_int_equal(eval("mount", "mount: permission denied\n@rc=255\n",
	    NULL, &r), PROBE_PASS);
	assert_int_equal(eval("mount", "@rc=0\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("write-rootfs", "@rc=1\n@opts ro\n", NULL, &r),
	    PROBE_PASS);
	assert_int_equal(eval("write-rootfs", "@rc=0\n@opts rw\n", NULL, &r),
	    PROBE_FAIL);
	assert_int_equal(eval("write-rootfs", "@rc=1\n@opts rw\n", NULL, &r),
	    PROBE_FAIL);
	assert_int_equal(eval("write-rootfs", "@rc=1\n", NULL, &r),
	    PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=65532\n@gid=65532\n"
	    "@groups 65532\n@self Uid:\t65532\t65532\t65532\t65532\n"
	    "@self Gid:\t65532\t65532\t65532\t65532\n@self Groups:\t65532 \n"
	    "@pid1 Uid:\t65532\t65532\t65532\t65532\n"
	    "@pid1 Gid:\t65532\t65532\t65532\t65532\n"
	    "@pid1 Groups:\t65532\n", NULL, &r), PROBE_PASS);
	assert_string_equal(r.observed, "uid 65532 gid 65532 groups 65532");
	/* id alone (the image's own binary) clears nothing: every kernel
	 * line, with its four ids, or an ERROR */
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000\n",
	    NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=65532\n@gid=65532\n"
	    "@groups 65532\n@self Uid:\t65532\t65532\t65532\t65532\n"
	    "@self Gid:\t65532\t65532\t65532\t65532\n@self Groups:\t65532 \n"
	    "@pid1 Uid:\t65532\t65532\t65532\t65532\n"
	    "@pid1 Groups:\t65532\n", NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=65532\n@gid=65532\n"
	    "@groups 65532\n@self Uid:\t65532\n"
	    "@self Gid:\t65532\t65532\t65532\t65532\n@self Groups:\t65532 \n"
	    "@pid1 Uid:\t65532\t65532\t65532\t65532\n"
	    "@pid1 Gid:\t65532\t65532\t65532\t65532\n"
	    "@pid1 Groups:\t65532\n", NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=0\n@gid=0\n@groups 0\n", NULL,
	    &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "uid 0"));
	/* the root group is root's files: gid 0, or 0 among the
	 * supplementary groups (id -G, or the kernel's Groups: of the row's
	 * shell or of the agent's PID 1), fails the row */
	assert_int_equal(eval("uid", "@uid=12345\n@gid=0\n@groups 0\n",
	    NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "gid 0"));
	assert_non_null(strstr(r.observed, "root group"));
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n"
	    "@groups 1000 10 0\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "root group"));
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000\n"
	    "@self Groups:\t1000 0\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000\n"
	    "@self Gid:\t1000\t0\t1000\t1000\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000\n"
	    "@self Uid:\t1000\t1000\t0\t1000\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000\n"
	    "@pid1 Groups:\t0\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000\n"
	    "@pid1 Uid:\t0\t0\t0\t0\n", NULL, &r), PROBE_FAIL);
	/* unknown groups are no pass */
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n", NULL, &r),
	    PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups \n", NULL,
	    &r), PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=1000\n@groups 1000\n", NULL, &r),
	    PROBE_ERROR);
	assert_int_equal(eval("uid", "@uid=1000\n@gid=1000\n@groups 1000 x\n",
	    NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("uid", "", NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("admin-api", "  HTTP/1.1 401 Unauthorized\n"
	    "wget: server returned error\n@rc=1\n", NULL, &r), PROBE_PASS);
	assert_int_equal(eval("admin-api", "  HTTP/1.1 200 OK\n@rc=0\n", NULL,
	    &r), PROBE_FAIL);
	assert_int_equal(eval("admin-api", "wget: bad address\n@rc=1\n", NULL,
	    &r), PROBE_ERROR);
	/* the kernel row is informational: a failure is a WARN */
	assert_int_equal(eval("kernel", "@kernel 6.1\n@done\n", NULL, &r),
	    PROBE_FAIL);
	assert_false(r.row->core);
	assert_string_equal(probe_outcome_name(r.outcome, r.row->core),
	    "WARN");
}

/* The real key is detected, and never copied into the observed text. */
static void
test_eval_real_key(void **state)
{
	struct probe_result r;

	(void)state;
	assert_int_equal(eval("real-key", "HOME=/home/poyo\nOPENAI_API_KEY="
	    "sk-agent-dummy-00\n@done\n", NULL, &r), PROBE_PASS);
	assert_int_equal(eval("real-key", "HOME=/home/poyo\nOPENAI_API_KEY="
	    "sk-real-0123456789abcdef\n@done\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "OPENAI_API_KEY"));
	assert_null(strstr(r.observed, "sk-real-"));
	ctx.real_key = NULL;
	assert_int_equal(eval("real-key", "@done\n", NULL, &r), PROBE_ERROR);
	ctx_init();
}

/* Hostile text never reaches the observed column raw. */
static void
test_observed_sanitized(void **state)
{
	struct probe_result r;

	(void)state;
	eval("docker-socket", "@sock /x\x1b]0;pwned\x07\x1b[2J\xff writable\n"
	    "@docker_host=\n@done\n", NULL, &r);
	assert_int_equal(r.outcome, PROBE_FAIL);
	assert_null(strchr(r.observed, '\x1b'));
	assert_null(strchr(r.observed, '\x07'));
	assert_null(strstr(r.observed, "pwned"));
}

/* pid-namespace, ipc-namespace, seccomp: the rows of flaws host-pid,
 * host-ipc and seccomp-unconfined, and their errors (never a pass). */
static void
test_eval_namespaces(void **state)
{
	static const char secc_default[] = "@personality EPERM\n"
	    "@get_mempolicy EPERM\n@unshare EPERM\n@keyctl EPERM\n"
	    "@io_uring_setup ok\n@bpf EPERM\n@perf_event_open EPERM\n"
	    "@userfaultfd EPERM\n@done\nSeccomp:\t2\n@dmesg \n@end\n";
	struct probe_result r;

	(void)state;
	ctx_init();
	assert_int_equal(eval("pid-namespace", "@self 0::/\n@done\n", NULL,
	    &r), PROBE_PASS);
	assert_int_equal(eval("pid-namespace", "@self 0::/\n@other 1 "
	    "/sbin/init \n@other 7 /usr/bin/dockerd -H fd://\n@done\n", NULL,
	    &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "dockerd"));
	assert_int_equal(eval("pid-namespace", "@done\n", NULL, &r),
	    PROBE_ERROR);
	assert_int_equal(eval("pid-namespace", "@self 0::/\n", NULL, &r),
	    PROBE_ERROR);
	/* gVisor: no cgroup files, the sandbox's own namespace */
	assert_int_equal(eval("pid-namespace", "@self \n@dmesg [   0.000000] "
	    "Starting gVisor...\n@done\n", NULL, &r), PROBE_PASS);
	assert_int_equal(eval("pid-namespace", "@self \n@dmesg \n@done\n",
	    NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("ipc-namespace", "@done\n", NULL, &r),
	    PROBE_PASS);
	assert_int_equal(eval("ipc-namespace", "@shm agent-supervisor.session\n"
	    "@done\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "/dev/shm/agent-supervisor"));
	assert_int_equal(eval("ipc-namespace", "@sysv shm key 1400205430 "
	    "perms 644\n@done\n", NULL, &r), PROBE_FAIL);
	assert_int_equal(eval("ipc-namespace", "", NULL, &r), PROBE_ERROR);
	/* the engine's default profile (io_uring let by there: no FAIL) */
	assert_int_equal(eval("seccomp", secc_default, NULL, &r), PROBE_PASS);
	assert_int_equal(eval("seccomp", "@personality ok\n@get_mempolicy "
	    "ok\n@unshare EPERM\n@keyctl EPERM\n@io_uring_setup EPERM\n"
	    "@done\nSeccomp:\t2\n@end\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "LIFTED: personality"));
	assert_int_equal(eval("seccomp", "@personality EPERM\n@unshare ok\n"
	    "@done\nSeccomp:\t2\n@end\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "unshare"));
	assert_int_equal(eval("seccomp", "@personality ok\n@unshare ok\n"
	    "@done\nSeccomp:\t0\n@end\n", NULL, &r), PROBE_FAIL);
	assert_non_null(strstr(r.observed, "seccomp OFF"));
	assert_int_equal(eval("seccomp", "@nohelper\nSeccomp:\t2\n@end\n",
	    NULL, &r), PROBE_ERROR);
	assert_non_null(strstr(r.observed, "cannot run here"));
	assert_int_equal(eval("seccomp", "@personality EPERM\n@done\n"
	    "@end\n", NULL, &r), PROBE_ERROR);
	assert_int_equal(eval("seccomp", "@personality EPERM\n", NULL, &r),
	    PROBE_ERROR);
	/* the agent's first process under a shared PID namespace */
	assert_int_equal(eval("uid", "@uid=65532\n@gid=65532\n@groups 65532\n"
	    "@self Uid:\t65532\t65532\t65532\t65532\n@self Gid:\t65532\t"
	    "65532\t65532\t65532\n@self Groups:\t65532\n@pid1 Uid:\t65532\t"
	    "65532\t65532\t65532\n@pid1 Gid:\t65532\t65532\t65532\t65532\n"
	    "@pid1 Groups:\t65532\n", NULL, &r), PROBE_PASS);
	{
		char *sc = probe_find("uid")->script(&ctx);

		assert_non_null(strstr(sc, "/proc/1/cgroup"));
		free(sc);
	}
}

/* The lab's seccomp profile: an allowlist that lifts personality and
 * the NUMA calls and never lets a dangerous family by. */
static void
test_seccomp_profile(void **state)
{
	static const char *const never[] = { "mount", "umount2",
	    "pivot_root", "unshare", "setns", "clone3", "bpf",
	    "perf_event_open", "userfaultfd", "io_uring_setup",
	    "io_uring_enter", "io_uring_register", "kexec_load",
	    "kexec_file_load", "init_module", "finit_module", "delete_module",
	    "ptrace", "process_vm_readv", "process_vm_writev",
	    "open_by_handle_at", "keyctl", "add_key", "request_key", "syslog",
	    "reboot", "swapon", "fsopen", "move_mount", "open_tree", NULL };
	const char *json = seccomp_lab_profile();
	cJSON *j = cJSON_Parse(json), *rules, *r;
	size_t i;
	bool clone_cond = false, clone3_enosys = false;

	(void)state;
	assert_non_null(j);
	assert_string_equal(util_json_str(j, "defaultAction", "?"),
	    "SCMP_ACT_ERRNO");
	assert_null(strstr(json, "unconfined"));
	assert_null(strstr(json, "SCMP_ACT_LOG"));
	for (i = 0; never[i] != NULL; i++) {
		if (seccomp_lab_allows(never[i]))
			fail_msg("the profile allows %s", never[i]);
		if (seccomp_lab_lifted(never[i]))
			fail_msg("%s is lifted", never[i]);
	}
	assert_true(seccomp_lab_lifted("personality"));
	assert_true(seccomp_lab_allows("read"));
	assert_true(seccomp_lab_allows("get_mempolicy"));
	rules = cJSON_GetObjectItemCaseSensitive(j, "syscalls");
	cJSON_ArrayForEach(r, rules) {
		const cJSON *names = cJSON_GetObjectItemCaseSensitive(r, "names");
		const cJSON *n;
		const char *act = util_json_str(r, "action", "?");

		cJSON_ArrayForEach(n, names) {
			for (i = 0; never[i] != NULL; i++)
				if (strcmp(n->valuestring, never[i]) == 0 &&
				    strcmp(act, "SCMP_ACT_ALLOW") == 0)
					fail_msg("rule allows %s", never[i]);
			if (strcmp(n->valuestring, "clone") == 0)
				clone_cond = cJSON_GetArraySize(
				    cJSON_GetObjectItemCaseSensitive(r,
				    "args")) == 1;
			if (strcmp(n->valuestring, "clone3") == 0)
				clone3_enosys = util_json_int(r, "errnoRet",
				    0) == 38 && strcmp(act,
				    "SCMP_ACT_ERRNO") == 0;
			if (strcmp(n->valuestring, "personality") == 0)
				assert_int_equal(cJSON_GetArraySize(
				    cJSON_GetObjectItemCaseSensitive(r,
				    "args")), 1);
		}
	}
	assert_true(clone_cond);
	assert_true(clone3_enosys);
	cJSON_Delete(j);
}

/* Every flaw of the catalogue maps to rows that exist, are core and detect
 * it, and a row's flaws are exactly those whose probes name it (a row's
 * flaws come from the catalogue, core/flaw.c). */
static void
test_flaw_coverage(void **state)
{
	size_t i, k, j;

	(void)state;
	assert_true(flaw_count >= 12);
	for (i = 0; i < flaw_count; i++) {
		const struct flaw *f = &flaw_table[i];
		size_t nrows = 0;

		if (f->probes[0] == NULL)
			fail_msg("flaw %s maps to no probe row", f->id);
		for (k = 0; k < FLAW_LIST_MAX && f->probes[k]; k++) {
			const struct probe_row *row = probe_find(f->probes[k]);

			if (row == NULL)
				fail_msg("flaw %s: probe row '%s' does not "
				    "exist", f->id, f->probes[k]);
			if (!probe_row_has_flaw(row, f->id))
				fail_msg("row %s does not list flaw %s",
				    row->id, f->id);
			if (!row->core)
				fail_msg("flaw %s: row %s is not core", f->id,
				    row->id);
		}
		for (j = 0; j < probe_nrows; j++)
			if (probe_row_has_flaw(&probe_table[j], f->id))
				nrows++;
		assert_int_equal(nrows, k);
	}
	for (j = 0; j < probe_nrows; j++) {
		const struct probe_row *row = &probe_table[j];

		assert_ptr_equal(probe_find(row->id), row);
		assert_non_null(row->script);
		assert_non_null(row->eval);
		for (k = 0; k < flaw_count; k++)
			if (probe_row_has_flaw(row, flaw_table[k].id) !=
			    flaw_probed_by(&flaw_table[k], row->id))
				fail_msg("row %s: flaw %s disagrees", row->id,
				    flaw_table[k].id);
	}
}

/* A report of every row, with one hostile observed text. */
static void
make_report(struct probe_report *r, const char *hostile)
{
	size_t i;

	memset(r, 0, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, "%s", ctx.run_id);
	snprintf(r->run_dir, sizeof r->run_dir, "/tmp/run");
	snprintf(r->policy, sizeof r->policy, "policies/hardened.yaml");
	snprintf(r->variant, sizeof r->variant, "default");
	for (i = 0; i < probe_nrows; i++) {
		r->rows[i].row = &probe_table[i];
		r->rows[i].outcome = PROBE_PASS;
		snprintf(r->rows[i].observed, sizeof r->rows[i].observed,
		    "observed text of row %zu, long enough to need wrapping "
		    "at eighty columns: a-very-long-unbreakable-token-that-"
		    "goes-on-and-on-and-on-and-on-and-on", i);
	}
	r->nrows = probe_nrows;
	if (hostile != NULL) {
		util_sanitize(r->rows[0].observed, sizeof r->rows[0].observed,
		    hostile, strlen(hostile), false);
		r->rows[0].outcome = PROBE_FAIL;
	}
}

static void
test_junit_escaping(void **state)
{
	static const char hostile[] = "</failure><testcase name=\"x\"/>"
	    "<![CDATA[ & 'q' \x1b[31m \x01\x02 ]]> \xef\xbf\xbe end";
	struct probe_report *r = xcalloc(1, sizeof *r);
	char *x;

	(void)state;
	make_report(r, hostile);
	x = probe_junit(r);
	assert_null(strstr(x, "</failure><testcase"));
	assert_null(strstr(x, "<![CDATA["));
	assert_non_null(strstr(x, "&lt;/failure&gt;&lt;testcase name=&quot;"
	    "x&quot;/&gt;"));
	assert_non_null(strstr(x, "&amp; &apos;q&apos;"));
	assert_null(strchr(x, '\x1b'));
	assert_null(strchr(x, '\x01'));
	assert_null(strstr(x, "\xef\xbf\xbe"));
	/* exactly one failure, as many testcases as rows */
	{
		size_t n = 0;
		const char *p = x;

		while ((p = strstr(p, "<testcase ")) != NULL) {
			n++;
			p++;
		}
		assert_int_equal(n, probe_nrows);
		assert_non_null(strstr(x, "failures=\"1\""));
	}
	free(x);
	x = probe_xml_escape("a<b>&\"'\x03");
	assert_string_equal(x, "a&lt;b&gt;&amp;&quot;&apos;");
	free(x);
	free(r);
}

/* Every line of the table fits in 80 columns; each row shows its result,
 * its observed text (wrapped, nothing lost) and "(expected: ...)". */
static void
test_table_layout(void **state)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	char *t, *line, *save = NULL, *joined;
	size_t nlines = 0, npass = 0;

	(void)state;
	make_report(r, NULL);
	t = probe_table_format(r, 80);
	assert_non_null(strstr(t, "RESULT  ATTACK"));
	assert_non_null(strstr(t, "every core containment assertion held"));
	joined = xstrdup(t);
	for (line = strtok_r(joined, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		size_t cols = 0;
		const char *q;

		for (q = line; *q; q++)
			if (((unsigned char)*q & 0xc0) != 0x80)
				cols++;
		if (cols >= 80)
			fail_msg("line of %zu columns: '%s'", cols, line);
		if (strncmp(line, "  PASS", 6) == 0)
			npass++;
		nlines++;
	}
	assert_int_equal(npass, probe_nrows);
	assert_true(nlines > probe_nrows * 3);
	/* the long token is split, not dropped */
	assert_non_null(strstr(t, "a-very-long-unbreakable"));
	assert_non_null(strstr(t, "(expected: loopback"));
	free(joined);
	free(t);
	/* a failing core row flips the verdict line */
	r->rows[1].outcome = PROBE_FAIL;
	assert_false(probe_held(r));
	t = probe_table_format(r, 80);
	assert_non_null(strstr(t, "1 of "));
	assert_non_null(strstr(t, "  FAIL"));
	free(t);
	free(r);
}

static void
test_json(void **state)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	cJSON *j, *rows, *row0;

	(void)state;
	make_report(r, "bad \x1b[2J text");
	j = probe_report_json(r);
	assert_string_equal(cJSON_GetObjectItem(j, "format")->valuestring,
	    PROBE_FORMAT);
	assert_string_equal(cJSON_GetObjectItem(j, "result")->valuestring,
	    "failed");
	rows = cJSON_GetObjectItem(j, "rows");
	assert_int_equal(cJSON_GetArraySize(rows), (int)probe_nrows);
	row0 = cJSON_GetArrayItem(rows, 0);
	assert_string_equal(cJSON_GetObjectItem(row0, "id")->valuestring,
	    "nic-count");
	assert_string_equal(cJSON_GetObjectItem(row0, "result")->valuestring,
	    "fail");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(row0, "core")));
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(row0,
	    "flaws"), 0)->valuestring, "egress-network");
	assert_null(strchr(cJSON_GetObjectItem(row0,
	    "observed")->valuestring, '\x1b'));
	cJSON_Delete(j);
	free(r);
}

/* A cancelled battery is never "held": every output says "cancelled",
 * names how far it got, and the JSON says it is not complete. */
static void
test_cancelled(void **state)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	cJSON *j;
	char *t;

	(void)state;
	make_report(r, NULL);
	assert_true(probe_held(r));
	assert_string_equal(probe_result_name(r), "held");
	r->nplanned = r->nrows;
	r->nrows = 3;           /* every row that ran passed */
	r->cancelled = true;
	assert_false(probe_held(r));
	assert_string_equal(probe_result_name(r), "cancelled");
	t = probe_table_format(r, 80);
	assert_non_null(strstr(t, "RESULT: cancelled after 3 of "));
	assert_null(strstr(t, "every core containment assertion held"));
	free(t);
	j = probe_report_json(r);
	assert_string_equal(cJSON_GetObjectItem(j, "result")->valuestring,
	    "cancelled");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "complete")));
	assert_int_equal(cJSON_GetObjectItem(j, "rows_planned")->valueint,
	    (int)r->nplanned);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")),
	    3);
	cJSON_Delete(j);
	t = probe_junit(r);
	assert_non_null(strstr(t, "tests=\"4\""));
	assert_non_null(strstr(t, "errors=\"1\""));
	assert_non_null(strstr(t, "<error message=\"cancelled after 3 of "));
	free(t);
	/* not cancelled: complete */
	r->cancelled = false;
	j = probe_report_json(r);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")));
	assert_string_equal(cJSON_GetObjectItem(j, "result")->valuestring,
	    "held");
	cJSON_Delete(j);
	free(r);
}

/* ---- a signed probe run dir ------------------------------------------ */

static void
make_chain(const char *path, const char *run_id, int nevents)
{
	struct errbuf e = { 0 };
	struct evidence *ev = evidence_create(path, run_id, &e);
	int i;

	if (ev == NULL)
		fail_msg("%s", e.msg);
	for (i = 0; i < nevents; i++) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddNumberToObject(f, "n", i);
		assert_true(evidence_append(ev, "query", 1000 + (uint64_t)i,
		    f, &e) > 0);
		cJSON_Delete(f);
	}
	evidence_close(ev);
}

static void
copy_file(const char *from, const char *to)
{
	struct errbuf e = { 0 };
	size_t len;
	char *b = util_read_file(from, 1 << 20, &len, &e);

	assert_non_null(b);
	assert_int_equal(util_write_file(to, b, len, 0644, &e), 0);
	free(b);
}

/* Check res failed, and that its first bad check's name starts with name
 * and its text contains text. */
static void
expect_bad(const struct report_verify_result *res, const char *name,
    const char *text)
{
	const struct report_check *c;

	assert_false(res->ok);
	assert_true(res->first_bad >= 0);
	c = &res->checks[res->first_bad];
	if (strncmp(c->name, name, strlen(name)) != 0 ||
	    strstr(c->text, text) == NULL)
		fail_msg("first bad check %s: %s (want %s / %s)", c->name,
		    c->text, name, text);
}


/*
 * A battery run through the recording path (probe_obs_*) on canned exec
 * results, as the lab would give them: rows are evaluated on what is
 * recorded in DIR/probe.jsonl.  uid runs as root (FAIL), real-key sees the
 * real key (FAIL, and the key must not be recorded), admin-api did not run.
 */
static void
record_report(struct probe_report *r, const char *dir)
{
	struct probe_ctx c = ctx;
	struct errbuf e = { 0 };
	struct evidence *ev;
	size_t i;

	memset(r, 0, sizeof *r);
	snprintf(c.run_dir, sizeof c.run_dir, "%s", dir);
	snprintf(r->run_id, sizeof r->run_id, "%s", ctx.run_id);
	snprintf(r->run_dir, sizeof r->run_dir, "%s", dir);
	snprintf(r->policy, sizeof r->policy, "policies/hardened.yaml");
	snprintf(r->variant, sizeof r->variant, "default");
	ev = probe_obs_open(&c, NULL, &e);
	assert_non_null(ev);
	for (i = 0; i < probe_nrows; i++) {
		const struct probe_row *row = &probe_table[i];
		struct probe_result *res = &r->rows[r->nrows++];
		struct probe_exec x = { 0 };
		const char *out = "lo\neth0\n@rc=1\n@done\n";

		if (strcmp(row->id, "admin-api") == 0) {
			res->row = row;
			res->outcome = PROBE_ERROR;
			snprintf(res->observed, sizeof res->observed, "exec "
			    "failed: canned");
			probe_obs_row(ev, &c, row, NULL, res);
			assert_true(res->obs_seq > 0);
			continue;
		}
		if (strcmp(row->id, "uid") == 0)
			out = "@uid=0\n@gid=0\n@groups 0\n";
		else if (strcmp(row->id, "real-key") == 0)
			out = "HOME=/home/poyo\nOPENAI_API_KEY="
			    "sk-real-0123456789abcdef\n@done\n";
		x.exit_code = 0;
		x.out = out;
		x.out_len = strlen(out);
		x.err = "stderr text";
		x.err_len = 11;
		probe_obs_row(ev, &c, row, &x, res);
		assert_true(res->obs_seq > 0);
	}
	r->nplanned = r->nrows;
	probe_obs_close(ev, r);
	assert_false(r->obs_failed);
	assert_true(r->obs_entries > probe_nrows);
}

static void
test_verify_dir(void **state)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	struct report_verify_result res;
	struct errbuf e = { 0 };
	char dir[] = "/tmp/ares-probe-vd.XXXXXX";
	char keys[] = "/tmp/ares-probe-keys.XXXXXX";
	char keys2[] = "/tmp/ares-probe-keys2.XXXXXX";
	char kid[SIGN_KEYID_HEX];
	char *ev, *dns, *gw, *pj, *save, *pub2, *cmd;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(keys));
	assert_non_null(mkdtemp(keys2));
	ev = xasprintf("%s/evidence", dir);
	assert_int_equal(mkdir(ev, 0755), 0);
	dns = xasprintf("%s/dns.jsonl", ev);
	gw = xasprintf("%s/gateway.jsonl", ev);
	pj = xasprintf("%s/probe.json", dir);
	save = xasprintf("%s/dns.saved", dir);
	make_chain(dns, ctx.run_id, 4);
	make_chain(gw, ctx.run_id, 2);
	copy_file(dns, save);
	{
		/* the chains the lab's sensors write, as lab up names them */
		static const char lj[] = "{\"chains\":[\"evidence/dns.jsonl\","
		    "\"evidence/gateway.jsonl\"]}";
		char *p = xasprintf("%s/lab.json", dir);

		assert_int_equal(util_write_file(p, lj, strlen(lj), 0644, &e),
		    0);
		free(p);
	}

	record_report(r, dir);
	assert_int_equal(probe_anchor_chains(r, &e), 0);
	assert_true(r->anchored);
	assert_false(r->chain_failed);
	assert_int_equal(r->chains.n, 2);
	assert_string_equal(r->chains.chains[0].path, "evidence/dns.jsonl");
	assert_int_equal(r->chains.chains[0].entries, 5);
	assert_string_equal(r->chains.chains[1].name, "sensor:gateway");
	assert_int_equal(probe_write_signed(r, keys, &e), 0);
	assert_true(probe_dir_is(dir));

	/* pristine: every check passes */
	assert_int_equal(probe_verify_dir(dir, NULL, &res, &e), 0);
	if (!res.ok)
		fail_msg("%s", res.checks[res.first_bad].text);
	assert_string_equal(res.verdict, "failed");
	assert_string_equal(res.run_id, ctx.run_id);
	/* sig, report, comment, 2 chains, observations, rows, result */
	assert_int_equal(res.nchecks, 8);
	report_verify_free(&res);
	{
		/* the real key is nowhere in the run dir's records */
		size_t len;
		char *p = xasprintf("%s/" PROBE_OBS_FILE, dir);
		char *b = util_read_file(p, 1 << 20, &len, &e);

		assert_non_null(b);
		assert_null(strstr(b, "sk-real-"));
		free(b);
		free(p);
	}

	/* a line appended to a sensor chain after signing */
	f = fopen(dns, "a");
	assert_non_null(f);
	fputs("{\"seq\":5}\n", f);
	fclose(f);
	assert_int_equal(probe_verify_dir(dir, NULL, &res, &e), 0);
	expect_bad(&res, "chain:evidence/dns.jsonl", "line 6");
	report_verify_free(&res);

	/* a chain cut short (and re-chained would need the genesis nonce;
	 * dropping its tail is what is possible) */
	copy_file(save, dns);
	cmd = xasprintf("sed -i '$d' '%s'", dns);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(probe_verify_dir(dir, NULL, &res, &e), 0);
	expect_bad(&res, "chain:evidence/dns.jsonl", "cut-off tail");
	report_verify_free(&res);
	copy_file(save, dns);

	/* a different key pinned */
	assert_int_equal(sign_keygen(keys2, false, kid, &e), 0);
	pub2 = xasprintf("%s/" SIGN_PUBKEY_NAME, keys2);
	assert_int_equal(probe_verify_dir(dir, pub2, &res, &e), 0);
	expect_bad(&res, "signature", "key id");
	report_verify_free(&res);

	/* probe.json edited: the result flipped */
	cmd = xasprintf("sed -i 's/\"failed\"/\"FAILED\"/' '%s'", pj);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(probe_verify_dir(dir, NULL, &res, &e), 0);
	expect_bad(&res, "signature", "");
	report_verify_free(&res);

	/* a chain broken before anchoring: never "held", named in the note */
	make_report(r, NULL);
	snprintf(r->run_dir, sizeof r->run_dir, "%s", dir);
	cmd = xasprintf("sed -i '2s/\"n\":0/\"n\":7/' '%s'", gw);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(probe_anchor_chains(r, &e), 0);
	assert_true(r->chain_failed);
	assert_int_equal(r->chains.n, 1);
	assert_non_null(strstr(r->anchor_note, "evidence/gateway.jsonl"));
	assert_false(probe_held(r));
	assert_string_equal(probe_result_name(r), "failed");
	{
		char *t = probe_table_format(r, 80);

		assert_non_null(strstr(t, "EVIDENCE: evidence/gateway.jsonl"));
		assert_non_null(strstr(t, "RESULT: not a result"));
		free(t);
	}

	cmd = xasprintf("rm -rf '%s' '%s' '%s'", dir, keys, keys2);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(pub2);
	free(ev);
	free(dns);
	free(gw);
	free(pj);
	free(save);
	free(r);
}


/* ---- forgeries: probe.json rewritten to lie, re-signed with the key --- */

/* Rewrite DIR/probe.json with fn (from the pristine text orig) and sign it
 * again with the key in keys, with the trusted comment the forged rows
 * imply: only the recompute can tell. */
static void
forge(const char *dir, const char *keys, const char *orig,
    void (*fn)(cJSON *j))
{
	struct errbuf e = { 0 };
	cJSON *j = cJSON_Parse(orig), *row;
	struct sign_secret *sk;
	size_t n = 0, nf = 0;
	char *txt, *path, *comment;

	assert_non_null(j);
	fn(j);
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows")) {
		n++;
		if (cJSON_IsTrue(cJSON_GetObjectItem(row, "core")) &&
		    strcmp(cJSON_GetObjectItem(row, "result")->valuestring,
		    "pass") != 0)
			nf++;
	}
	comment = xasprintf("%s run=%s result=%s rows=%zu failed=%zu",
	    PROBE_FORMAT, cJSON_GetObjectItem(j, "run_id")->valuestring,
	    cJSON_GetObjectItem(j, "result")->valuestring, n, nf);
	txt = cJSON_Print(j);
	path = xasprintf("%s/probe.json", dir);
	assert_int_equal(util_write_file(path, txt, strlen(txt), 0644, &e), 0);
	sk = sign_secret_load(keys, &e);
	assert_non_null(sk);
	assert_int_equal(sign_file(sk, path, comment, &e), 0);
	sign_secret_free(sk);
	cJSON_Delete(j);
	free(txt);
	free(path);
	free(comment);
}

static cJSON *
row_of(cJSON *j, const char *id)
{
	cJSON *row;

	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows"))
		if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring, id) == 0)
			return row;
	fail_msg("no row %s", id);
	return NULL;
}

static void
set_str(cJSON *o, const char *key, const char *v)
{
	cJSON_ReplaceItemInObject(o, key, cJSON_CreateString(v));
}

/* Every failing row made to pass and the result "held". */
static void
lie_all_held(cJSON *j)
{
	set_str(row_of(j, "uid"), "result", "pass");
	set_str(row_of(j, "real-key"), "result", "pass");
	set_str(row_of(j, "admin-api"), "result", "pass");
	set_str(j, "result", "held");
}

/* The result alone. */
static void
lie_result(cJSON *j)
{
	set_str(j, "result", "held");
}

/* A row's observed text. */
static void
lie_observed(cJSON *j)
{
	set_str(row_of(j, "nic-count"), "observed", "interfaces: lo");
}

/* The failing row dropped. */
static void
lie_drop_row(cJSON *j)
{
	cJSON *rows = cJSON_GetObjectItem(j, "rows"), *row;
	int i = 0;

	cJSON_ArrayForEach(row, rows) {
		if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring, "uid")
		    == 0)
			break;
		i++;
	}
	cJSON_DeleteItemFromArray(rows, i);
}

/* The negative control's item said not seen (the gate "blind"). */
static void
lie_nc_seen(cJSON *j)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "negative_control"),
	    "seen", cJSON_CreateFalse());
}

static void
expect_forged(const char *dir, const char *name, const char *text)
{
	struct report_verify_result res;
	struct errbuf e = { 0 };

	assert_int_equal(probe_verify_dir(dir, NULL, &res, &e), 0);
	/* signature and trusted comment pass: it is the recompute */
	assert_true(res.nchecks >= 3);
	assert_true(res.checks[0].ok);
	assert_true(res.checks[2].ok);
	expect_bad(&res, name, text);
	report_verify_free(&res);
}

static void
test_verify_recompute(void **state)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	struct report_verify_result res;
	struct errbuf e = { 0 };
	char dir[] = "/tmp/ares-probe-rc.XXXXXX";
	char keys[] = "/tmp/ares-probe-rck.XXXXXX";
	char *pj, *orig, *cmd;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(keys));
	record_report(r, dir);
	r->nc = true;
	snprintf(r->nc_item, sizeof r->nc_item, "root-user");
	snprintf(r->anchor_note, sizeof r->anchor_note, "not anchored");
	assert_int_equal(probe_write_signed(r, keys, &e), 0);
	assert_int_equal(probe_verify_dir(dir, NULL, &res, &e), 0);
	if (!res.ok)
		fail_msg("%s", res.checks[res.first_bad].text);
	assert_string_equal(res.checks[res.nchecks - 1].name,
	    "negative-control");
	report_verify_free(&res);
	pj = xasprintf("%s/probe.json", dir);
	orig = util_read_file(pj, 1 << 20, &len, &e);
	assert_non_null(orig);

	forge(dir, keys, orig, lie_all_held);
	expect_forged(dir, "row:uid", "result: pass; recomputed from its "
	    "recorded observation");
	forge(dir, keys, orig, lie_result);
	expect_forged(dir, "result", "probe.json result: held; recomputed "
	    "from the rows: failed; row ");
	forge(dir, keys, orig, lie_observed);
	expect_forged(dir, "row:nic-count", "observed: \"interfaces: lo\"");
	forge(dir, keys, orig, lie_drop_row);
	expect_forged(dir, "rows", "the battery runs uid there");
	forge(dir, keys, orig, lie_nc_seen);
	expect_forged(dir, "negative-control", "negative_control.seen: false; "
	    "recomputed from the rows: true");

	/* the recorded observation itself rewritten: its chain breaks */
	forge(dir, keys, orig, lie_result);
	cmd = xasprintf("sed -i 's/\"exit_code\":0/\"exit_code\":1/' "
	    "'%s/" PROBE_OBS_FILE "'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	expect_forged(dir, "chain:" PROBE_OBS_FILE, "hash mismatch");

	cmd = xasprintf("rm -rf '%s' '%s'", dir, keys);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(orig);
	free(pj);
	free(r);
}

static void
test_ctx_parse(void **state)
{
	static const char good[] = "{\"format\":\"ares-lab-v1\",\"run_id\":"
	    "\"20260101-000000-abcd1234\",\"policy\":\"p.yaml\",\"variant\":"
	    "\"default\",\"flaws\":[\"root-user\"],\"containers\":{\"agent\":"
	    "{\"id\":\"0123456789abcdef\"},\"gateway\":{\"id\":"
	    "\"fedcba9876543210\"}},\"sink_ip\":\"172.24.0.2\"}";
	struct probe_ctx c;
	struct errbuf e = { 0 };
	char *bad;

	(void)state;
	assert_int_equal(probe_ctx_parse(good, strlen(good), "/r", &c, &e), 0);
	assert_string_equal(c.agent_id, "0123456789abcdef");
	assert_string_equal(c.sink_ip, "172.24.0.2");
	assert_string_equal(c.ctl_path, "/r/ctl/gateway.sock");
	assert_int_equal(c.nflaws, 1);
	assert_true(c.exfil_host[0] != '\0');
	/* a shell metacharacter in the sink IP never reaches a script */
	bad = xstrdup(good);
	memcpy(strstr(bad, "172.24.0.2"), "1;rm -rf/", 9);
	assert_int_equal(probe_ctx_parse(bad, strlen(bad), "/r", &c, &e), 0);
	assert_string_equal(c.sink_ip, "");
	assert_null(probe_find("socket-out")->script(&c));
	free(bad);
	/* a container id that is not hex is refused */
	bad = xstrdup(good);
	memcpy(strstr(bad, "0123456789abcdef"), "0123456789abcde;", 16);
	assert_int_equal(probe_ctx_parse(bad, strlen(bad), "/r", &c, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	free(bad);
	assert_int_equal(probe_ctx_parse("[1]", 3, "/r", &c, &e), -1);
	bad = xstrdup(good);
	memcpy(strstr(bad, "root-user"), "root-usex", 9);
	assert_int_equal(probe_ctx_parse(bad, strlen(bad), "/r", &c, &e), -1);
	free(bad);
}

/*
 * A lab on a remote engine (lab.json engine.remote): the context says so,
 * and host-ports, whose listener would be on this machine, is the one row
 * refused there (never a pass: probe_run_row makes it an ERROR).
 */
static void
test_ctx_remote(void **state)
{
	static const char local[] = "{\"run_id\":\"r1\",\"variant\":"
	    "\"default\",\"containers\":{\"agent\":{\"id\":"
	    "\"0123456789abcdef\"},\"gateway\":{\"id\":"
	    "\"fedcba9876543210\"}}}";
	static const char remote[] = "{\"run_id\":\"r1\",\"variant\":"
	    "\"default\",\"containers\":{\"agent\":{\"id\":"
	    "\"0123456789abcdef\"},\"gateway\":{\"id\":"
	    "\"fedcba9876543210\"}},\"engine\":{\"where\":"
	    "\"tcp://127.0.0.1:2376\",\"remote\":true}}";
	static const char notbool[] = "{\"run_id\":\"r1\",\"variant\":"
	    "\"default\",\"containers\":{\"agent\":{\"id\":"
	    "\"0123456789abcdef\"},\"gateway\":{\"id\":"
	    "\"fedcba9876543210\"}},\"engine\":{\"remote\":\"yes\"}}";
	struct probe_ctx c;
	struct errbuf e = { 0 };
	size_t i, n = 0;

	(void)state;
	assert_int_equal(probe_ctx_parse(local, strlen(local), "/r", &c, &e),
	    0);
	assert_false(c.remote);
	assert_int_equal(probe_ctx_parse(notbool, strlen(notbool), "/r", &c,
	    &e), 0);
	assert_false(c.remote);
	assert_int_equal(probe_ctx_parse(remote, strlen(remote), "/r", &c,
	    &e), 0);
	assert_true(c.remote);
	assert_null(c.docker);
	for (i = 0; i < probe_nrows; i++) {
		const char *why = probe_row_remote_refusal(&probe_table[i]);

		if (why == NULL)
			continue;
		n++;
		assert_string_equal(probe_table[i].id, "host-ports");
		assert_non_null(strstr(why, "not run on a remote engine"));
	}
	assert_int_equal(n, 1);
	/* the remote context opened no listener: no script either */
	assert_false(c.host_listening);
	assert_null(probe_find("host-ports")->script(&c));
}

/*
 * The note kept from lab.json is safe to print whole: cutting it to fit
 * never splits a UTF-8 sequence (fuzz/fuzz_probe_ctx's inert-text check:
 * "a" and 127 times U+00E9 was cut after a lead byte by "%.230s").
 */
static void
test_ctx_note_utf8(void **state)
{
	static const char head[] = "{\"run_id\":\"r1\",\"variant\":"
	    "\"default\",\"containers\":{\"agent\":{\"id\":"
	    "\"0123456789abcdef\"},\"gateway\":{\"id\":"
	    "\"fedcba9876543210\"}},\"privileged_degraded\":\"a";
	char json[600], *p;
	struct probe_ctx c;
	struct errbuf e = { 0 };
	const unsigned char *u;
	size_t i, n;

	(void)state;
	p = json + snprintf(json, sizeof json, "%s", head);
	for (i = 0; i < 127; i++)
		p += snprintf(p, 3, "\xc3\xa9");
	snprintf(p, 3, "\"}");
	assert_int_equal(probe_ctx_parse(json, strlen(json), "/r", &c, &e), 0);
	assert_int_equal(strncmp(c.note, "privileged: a\xc3\xa9", 15), 0);
	/* whole two-byte sequences only */
	u = (const unsigned char *)c.note;
	n = strlen(c.note);
	assert_true(n < sizeof c.note);
	for (i = 13; i < n; i += 2) {
		assert_true(i + 1 < n);
		assert_int_equal(u[i], 0xc3);
		assert_int_equal(u[i + 1], 0xa9);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eval_network),
		cmocka_unit_test(test_eval_host),
		cmocka_unit_test(test_eval_self_modify),
		cmocka_unit_test(test_eval_privilege),
		cmocka_unit_test(test_eval_real_key),
		cmocka_unit_test(test_eval_namespaces),
		cmocka_unit_test(test_seccomp_profile),
		cmocka_unit_test(test_observed_sanitized),
		cmocka_unit_test(test_flaw_coverage),
		cmocka_unit_test(test_junit_escaping),
		cmocka_unit_test(test_table_layout),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_cancelled),
		cmocka_unit_test(test_verify_dir),
		cmocka_unit_test(test_verify_recompute),
		cmocka_unit_test(test_ctx_parse),
		cmocka_unit_test(test_ctx_note_utf8),
		cmocka_unit_test(test_ctx_remote),
	};

	if (sodium_init() < 0)
		return 1;
	ctx_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
