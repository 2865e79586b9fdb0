/*
 * hostfw.c - the host's side of the lab's walls.
 *
 * An `Internal` Docker network filters only forwarded traffic: a packet a
 * lab container sends to an address of the host itself (the bridge's
 * gateway address, the host's own addresses, the bridge's IPv6 link-local
 * address) is delivered locally, so every port the host listens on is
 * reachable from the lab.  Two layers close that (docs/security.md):
 *
 *  1. the lab's bridges carry no host address (the network is created with
 *     com.docker.network.bridge.inhibit_ipv4, and IPv6 and ARP answers are
 *     switched off on the bridge here): nothing on the host is addressable
 *     from the lab;
 *  2. a DROP rule per bridge in the host's INPUT chain (iptables and
 *     ip6tables), inserted before the network exists, so that an agent
 *     holding NET_ADMIN (flaws extra-caps, privileged) that forges routes
 *     and neighbour entries still reaches no local socket.
 *
 * The bridges have names ares derives from the run id, so the rules can be
 * written before the bridge exists and removed from the run id alone (by
 * teardown, or by gc after a crash).  Every rule carries the comment
 * "ares.run=<run_id>".
 */
#include "internal.h"

#include <errno.h>
#include <net/if.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#define HOSTFW_TIMEOUT_MS 10000

/* The network roles of a lab, in the order lab.c creates them: every one
 * internal and sealed here (a real model is reached by the host relay,
 * core/relay.c, not from any lab network). */
static const char *const hostfw_roles[] = { "lab", "upstream", "wan" };
#define HOSTFW_NROLES (sizeof hostfw_roles / sizeof hostfw_roles[0])

const char *const *
hostfw_network_roles(size_t *n)
{
	*n = HOSTFW_NROLES;
	return hostfw_roles;
}

void
hostfw_bridge_name(const char *run_id, const char *role,
    char out[HOSTFW_IFNAME_MAX])
{
	crypto_generichash_state st;
	unsigned char h[16];
	char hex[33];

	crypto_generichash_init(&st, NULL, 0, sizeof h);
	crypto_generichash_update(&st, (const unsigned char *)"ares-bridge-v1",
	    sizeof "ares-bridge-v1");
	crypto_generichash_update(&st, (const unsigned char *)run_id,
	    strlen(run_id) + 1);
	crypto_generichash_update(&st, (const unsigned char *)role,
	    strlen(role));
	crypto_generichash_final(&st, h, sizeof h);
	util_hex(h, sizeof h, hex);
	/* "ares" + 11 hex = 15 bytes: the kernel's IFNAMSIZ less its NUL */
	snprintf(out, HOSTFW_IFNAME_MAX, "ares%.11s", hex);
}

/* Is IPv6 present in this kernel at all?  (No IPv6: nothing to filter.) */
static bool
hostfw_have_ipv6(void)
{
	return access("/proc/sys/net/ipv6", F_OK) == 0;
}

/* Is tool an executable somewhere in PATH? */
static bool
hostfw_tool_exists(const char *tool)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	if (path == NULL || path[0] == '\0')
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL && !found;
	    dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", dir, tool);

		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

/* One iptables/ip6tables call: op "-I" (insert at 1) or "-D".  Returns
 * the tool's exit status, or -1 + e when it could not run. */
static int
hostfw_rule(const char *tool, const char *op, const char *bridge,
    const char *run_id, char *out, size_t outlen, struct errbuf *e)
{
	char comment[UTIL_ID_MAX + 16];
	const char *argv[16];
	size_t n = 0;

	snprintf(comment, sizeof comment, "ares.run=%s", run_id);
	argv[n++] = tool;
	argv[n++] = "-w";
	argv[n++] = "5";
	argv[n++] = op;
	argv[n++] = "INPUT";
	if (strcmp(op, "-I") == 0)
		argv[n++] = "1";
	argv[n++] = "-i";
	argv[n++] = bridge;
	argv[n++] = "-m";
	argv[n++] = "comment";
	argv[n++] = "--comment";
	argv[n++] = comment;
	argv[n++] = "-j";
	argv[n++] = "DROP";
	argv[n] = NULL;
	return util_run(argv, NULL, HOSTFW_TIMEOUT_MS, out, outlen, e);
}

/* The text of our rule on bridge for iptables-restore: "-I INPUT 1 ..."
 * or "-D INPUT ..." (op "-I" or "-D"), and a newline, into b. */
static void
hostfw_rule_line(struct util_buf *b, const char *op, const char *bridge,
    const char *run_id)
{
	util_buf_printf(b, "%s INPUT %s-i %s -m comment --comment "
	    "ares.run=%s -j DROP\n", op, strcmp(op, "-I") == 0 ? "1 " : "",
	    bridge, run_id);
}

/* Run "TOOL-restore -w 5 --noflush" on the filter table lines (one
 * transaction: every line or none).  Its exit status, or -1 + e. */
static int
hostfw_restore(const char *tool, const char *lines, struct errbuf *e)
{
	char name[32], out[256], *in;
	const char *argv[] = { name, "-w", "5", "--noflush", NULL };
	struct util_proc p = { 0 };
	int rc;

	snprintf(name, sizeof name, "%s-restore", tool);
	in = xasprintf("*filter\n%sCOMMIT\n", lines);
	if (strlen(in) > UTIL_PROC_INPUT_MAX) {
		free(in);
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: too many rules",
		    name);
	}
	p.argv = argv;
	p.path_lookup = true;
	p.input = in;
	p.input_len = strlen(in);
	p.timeout_ms = HOSTFW_TIMEOUT_MS;
	p.out = out;
	p.out_max = sizeof out - 1;
	rc = util_proc_run(&p, e);
	free(in);
	if (rc == -1)
		return -1;
	if (p.timed_out || p.exec_errno != 0 || p.status == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: %s", name,
		    p.timed_out ? "timed out" : p.exec_errno != 0 ?
		    strerror(p.exec_errno) : "wait failed");
	return WIFEXITED(p.status) ? WEXITSTATUS(p.status) :
	    128 + (WIFSIGNALED(p.status) ? WTERMSIG(p.status) : 0);
}

/* How many copies of our rule on bridge the listing out ("TOOL -S INPUT")
 * holds. */
static int
hostfw_count(const char *out, const char *bridge, const char *run_id)
{
	char iface[HOSTFW_IFNAME_MAX + 8], c1[UTIL_ID_MAX + 40],
	    c2[UTIL_ID_MAX + 40];
	const char *line = out;
	int n = 0;

	snprintf(iface, sizeof iface, " -i %s ", bridge);
	snprintf(c1, sizeof c1, " --comment \"ares.run=%s\" -j DROP", run_id);
	snprintf(c2, sizeof c2, " --comment ares.run=%s -j DROP", run_id);
	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n');
		size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
		char *l = xasprintf("%.*s", (int)len, line);
		size_t ll = strlen(l);

		if (strncmp(l, "-A INPUT ", 9) == 0 && strstr(l, iface) != NULL &&
		    ((ll >= strlen(c1) && strcmp(l + ll - strlen(c1), c1) == 0) ||
		    (ll >= strlen(c2) && strcmp(l + ll - strlen(c2), c2) == 0)))
			n++;
		free(l);
		line = end != NULL ? end + 1 : NULL;
	}
	return n;
}

#define HOSTFW_LIST_MAX (256 * 1024)

/*
 * The fast way of hostfw_unseal for one tool: list INPUT once, remove
 * every copy of our rules on the bridges that are gone in one restore.
 * Adds to *removed; -1 when it could not (no listing, a listing too
 * long, the restore refused: the caller goes rule by rule).
 */
static int
hostfw_unseal_batch(const char *tool, const char *run_id,
    const bool gone[HOSTFW_NROLES], int *removed)
{
	const char *argv[] = { tool, "-w", "5", "-S", "INPUT", NULL };
	struct util_proc p = { 0 };
	struct errbuf e = { 0 };
	struct util_buf b;
	char *out = xmalloc(HOSTFW_LIST_MAX + 1);
	int n = 0, rc = -1;
	size_t r;

	p.argv = argv;
	p.path_lookup = true;
	p.timeout_ms = HOSTFW_TIMEOUT_MS;
	p.out = out;
	p.out_max = HOSTFW_LIST_MAX;
	if (util_proc_run(&p, &e) == -1 || p.out_over || p.timed_out ||
	    p.status == -1 || !WIFEXITED(p.status) ||
	    WEXITSTATUS(p.status) != 0) {
		free(out);
		return -1;
	}
	out[p.out_len] = '\0';
	util_buf_init(&b, 512);
	for (r = 0; r < HOSTFW_NROLES; r++) {
		char br[HOSTFW_IFNAME_MAX];
		int k, c;

		if (!gone[r])
			continue;
		hostfw_bridge_name(run_id, hostfw_roles[r], br);
		c = hostfw_count(out, br, run_id);
		for (k = 0; k < c; k++)
			hostfw_rule_line(&b, "-D", br, run_id);
		n += c;
	}
	free(out);
	if (n == 0 || hostfw_restore(tool, b.s, &e) == 0) {
		*removed += n;
		rc = 0;
	}
	free(b.s);
	return rc;
}

int
hostfw_unseal(const char *run_id, struct errbuf *e)
{
	static const char *const tools[] = { "iptables", "ip6tables" };
	int removed = 0, failed = 0, kept = 0;
	char last[256] = "";
	size_t t, r;

	for (t = 0; t < 2; t++) {
		bool gone[HOSTFW_NROLES];

		/* no tool, or no IPv6: no rule of ours can exist */
		if ((t == 1 && !hostfw_have_ipv6()) ||
		    !hostfw_tool_exists(tools[t]))
			continue;
		for (r = 0; r < HOSTFW_NROLES; r++) {
			char br[HOSTFW_IFNAME_MAX];

			hostfw_bridge_name(run_id, hostfw_roles[r], br);
			gone[r] = if_nametoindex(br) == 0;
		}
		/* one listing and one transaction; else rule by rule */
		if (hostfw_unseal_batch(tools[t], run_id, gone, &removed) == 0) {
			for (r = 0; r < HOSTFW_NROLES; r++)
				if (!gone[r]) {
					char br[HOSTFW_IFNAME_MAX];

					hostfw_bridge_name(run_id,
					    hostfw_roles[r], br);
					if (t == 0)
						kept++;
					snprintf(last, sizeof last, "bridge %s "
					    "still exists: its rules stay", br);
				}
			continue;
		}
		for (r = 0; r < HOSTFW_NROLES; r++) {
			char br[HOSTFW_IFNAME_MAX], out[256];
			int guard;

			hostfw_bridge_name(run_id, hostfw_roles[r], br);
			/* a bridge that still exists keeps its rules: a lab
			 * that survived its teardown stays sealed.  Asked of
			 * the kernel for our own network namespace (sysfs
			 * shows the one of whoever mounted it). */
			if (if_nametoindex(br) != 0) {
				if (t == 0)
					kept++;
				snprintf(last, sizeof last, "bridge %s still "
				    "exists: its rules stay", br);
				continue;
			}
			/* -D removes one copy; a rule inserted twice (a
			 * retried lab up) goes in as many calls. */
			for (guard = 0; guard < 8; guard++) {
				struct errbuf e2 = { 0 };
				int st = hostfw_rule(tools[t], "-D", br, run_id,
				    out, sizeof out, &e2);

				if (st == 0) {
					removed++;
					continue;
				}
				if (st == -1) {
					failed++;
					snprintf(last, sizeof last, "%.200s",
					    e2.msg);
				}
				/* 1: no such rule (or not permitted: then
				 * there was nothing of ours to remove) */
				break;
			}
		}
	}
	if (failed > 0 || kept > 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "host firewall: %d "
		    "rule removal(s) failed, %d bridge(s) kept sealed: %s",
		    failed, kept, last);
	return removed;
}

int
hostfw_seal(const char *run_id, const char *const *bridges, size_t n,
    struct errbuf *e)
{
	static const char *const tools[] = { "iptables", "ip6tables" };
	size_t t, i;

	for (t = 0; t < 2; t++) {
		struct util_buf b;
		struct errbuf re = { 0 };
		int st;

		if (t == 1 && !hostfw_have_ipv6())
			continue;
		/* every rule of the tool in one transaction (all or none) */
		util_buf_init(&b, 512);
		for (i = 0; i < n; i++)
			hostfw_rule_line(&b, "-I", bridges[i], run_id);
		st = hostfw_restore(tools[t], b.s, &re);
		free(b.s);
		if (st == 0)
			continue;
		/* no restore tool, or it refused: rule by rule, as the
		 * errors then say which */
		for (i = 0; i < n; i++) {
			char out[256];
			struct errbuf e2 = { 0 };
			int st = hostfw_rule(tools[t], "-I", bridges[i], run_id,
			    out, sizeof out, &e2);

			if (st == 0)
				continue;
			/* All or nothing: a half-sealed lab is not sealed. */
			(void)hostfw_unseal(run_id, NULL);
			if (st == -1)
				return errbuf_set(e, ERRBUF_INTERNAL, "host "
				    "firewall: %s", e2.msg);
			return errbuf_set(e, ERRBUF_INTERNAL, "host firewall: "
			    "%s -I INPUT -i %s ... -j DROP exited %d: %.160s",
			    tools[t], bridges[i], st, out);
		}
	}
	return 0;
}

/* Write "value" to /proc/sys/net/<path> (no O_CREAT, no symlinks).  0 or
 * -1 (errno). */
static int
hostfw_sysctl(const char *path, const char *value)
{
	char *p = xasprintf("/proc/sys/net/%s", path);
	int fd = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = -1;

	free(p);
	if (fd == -1)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

int
hostfw_bridge_quiet(const char *bridge, struct errbuf *e)
{
	char path[96];
	int bad = 0;

	if (strchr(bridge, '/') != NULL || strstr(bridge, "..") != NULL)
		return errbuf_set(e, ERRBUF_INPUT, "host firewall: bad bridge "
		    "name %s", bridge);
	if (hostfw_have_ipv6()) {
		snprintf(path, sizeof path, "ipv6/conf/%s/disable_ipv6", bridge);
		bad += hostfw_sysctl(path, "1") == -1;
	}
	snprintf(path, sizeof path, "ipv4/conf/%s/arp_ignore", bridge);
	bad += hostfw_sysctl(path, "8") == -1;
	if (bad > 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "host firewall: %s: "
		    "cannot switch off IPv6 and ARP answers on the bridge: %s",
		    bridge, strerror(errno));
	return 0;
}
