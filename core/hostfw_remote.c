/*
 * hostfw_remote.c - the part of a lab's host seal that can be applied to
 * a remote engine's machine: the per-bridge sysctls (IPv6 off, no ARP
 * answers), written by `ares-lab seal` (leakbox/seal.c) in a short-lived
 * container of the lab image in that machine's network namespace (with
 * NET_ADMIN and a writable /proc/sys, nothing else), which
 * reads every value back.  The INPUT drop rules of core/hostfw.c are not
 * applied there and the record says so: nothing is claimed that was not
 * read back.  docs/engine.md, "A lab on a remote engine".
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEAL_WAIT_MS  20000   /* the seal container's whole life */
#define SEAL_LOG_MAX  16384

/* Pure: check the seal container's output (one JSON line per bridge) for
 * bridges[0..n): each present once, in order, with the wanted values.
 * 0 with *record (a JSON array of what was read back; caller
 * cJSON_Delete()s), or -1 + e naming the first bridge that is not. */
int
hostfw_remote_parse(const char *out, size_t len, const char *const *bridges,
    size_t n, cJSON **record, struct errbuf *e)
{
	size_t off = 0, i = 0, llen;
	const char *line;
	cJSON *arr = cJSON_CreateArray();

	*record = NULL;
	while (util_next_line(out, len, &off, &line, &llen)) {
		cJSON *o;
		const char *b, *v6, *arp;
		bool ipv6;

		if (llen == 0)
			continue;
		o = cJSON_ParseWithLength(line, llen);
		b = util_json_str(o, "bridge", NULL);
		v6 = util_json_str(o, "disable_ipv6", NULL);
		arp = util_json_str(o, "arp_ignore", NULL);
		ipv6 = util_json_true(o, "ipv6");
		if (!cJSON_IsObject(o) || b == NULL || v6 == NULL || arp == NULL ||
		    i >= n || strcmp(b, bridges[i]) != 0) {
			cJSON_Delete(o);
			cJSON_Delete(arr);
			return errbuf_set(e, ERRBUF_INTERNAL, "remote seal: "
			    "unexpected answer line %zu", i + 1);
		}
		if (strcmp(arp, "8") != 0 || (ipv6 && strcmp(v6, "1") != 0)) {
			char a[16], v[16];
			util_sanitize(a, sizeof a, arp, strlen(arp), false);
			util_sanitize(v, sizeof v, v6, strlen(v6), false);
			cJSON_Delete(o);
			cJSON_Delete(arr);
			return errbuf_set(e, ERRBUF_INTERNAL, "remote seal: %s "
			    "reads back arp_ignore=\"%s\" disable_ipv6=\"%s\" "
			    "(want 8 and 1)", bridges[i], a, v);
		}
		cJSON_AddItemToArray(arr, o);
		i++;
	}
	if (i != n) {
		cJSON_Delete(arr);
		return errbuf_set(e, ERRBUF_INTERNAL, "remote seal: %zu of %zu "
		    "bridges reported", i, n);
	}
	*record = arr;
	return 0;
}

/* Sleep ms. */
static void
seal_nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int
hostfw_remote_seal(struct docker *d, const char *image, const char *run_id,
    const char *const *bridges, size_t n, cJSON **record, struct errbuf *e)
{
	const char **cmd = xcalloc(n + 3, sizeof *cmd);
	struct docker_container_spec s = {0};
	char *name = xasprintf("ares-%s-seal", run_id), *id, *log = NULL;
	uint64_t deadline = util_mono_ns() + SEAL_WAIT_MS * 1000000ull;
	cJSON *ins = NULL, *o;
	int rc = -1, code = -1;

	*record = NULL;
	cmd[0] = "/bin/ares-lab";
	cmd[1] = "seal";
	for (size_t i = 0; i < n; i++)
		cmd[i + 2] = bridges[i];
	s.name = name;
	s.image = image;
	s.cmd = cmd;
	s.user = "0:0";
	/* the host's network namespace, NET_ADMIN (which a net sysctl write
	 * checks) and /proc/sys/net alone not read-only (every other sysctl
	 * checks only the root uid: kernel, vm, fs... stay read-only): never
	 * "privileged" (no device, no other capability, seccomp and the
	 * masked paths kept); the lab's own binary with a fixed argv, no
	 * mount, read-only, for a moment */
	static const char *const caps[] = { "NET_ADMIN", NULL };
	s.network = "host";
	s.drop_all_caps = true;
	s.cap_add = caps;
	s.proc_sys_net_rw = true;
	s.read_only_rootfs = true;
	s.no_new_privileges = true;
	s.no_healthcheck = true;
	s.pids_limit = 8;
	s.memory_bytes = 32LL << 20;
	s.run_id = run_id;
	s.role = "seal";
	id = docker_container_create(d, &s, e);
	free(cmd);
	if (id == NULL) {
		free(name);
		return errbuf_prefix(e, "remote seal");
	}
	if (docker_container_start(d, id, e) < 0) {
		errbuf_prefix(e, "remote seal");
		goto out;
	}
	for (;;) {
		ins = docker_container_inspect(d, id, e);
		if (ins == NULL) {
			errbuf_prefix(e, "remote seal");
			goto out;
		}
		if (!docker_inspect_running(ins))
			break;
		cJSON_Delete(ins);
		ins = NULL;
		if (util_mono_ns() >= deadline) {
			errbuf_set(e, ERRBUF_INTERNAL, "remote seal: still running "
			    "after %d ms", SEAL_WAIT_MS);
			goto out;
		}
		seal_nap(20);
	}
	o = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "State"), "ExitCode");
	code = cJSON_IsNumber(o) ? (int)o->valuedouble : -1;
	log = docker_container_logs(d, id, SEAL_LOG_MAX, e);
	if (log == NULL) {
		errbuf_prefix(e, "remote seal");
		goto out;
	}
	if (hostfw_remote_parse(log, strlen(log), bridges, n, record, e) < 0)
		goto out;
	if (code != 0) {
		cJSON_Delete(*record);
		*record = NULL;
		errbuf_set(e, ERRBUF_INTERNAL, "remote seal: exit %d", code);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(ins);
	free(log);
	{
		struct errbuf e2 = {0};
		(void)docker_container_remove(d, id, true, &e2);
	}
	free(id);
	free(name);
	return rc;
}
