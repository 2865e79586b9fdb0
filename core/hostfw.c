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

int
hostfw_unseal(const char *run_id, struct errbuf *e)
{
	static const char *const tools[] = { "iptables", "ip6tables" };
	int removed = 0, failed = 0, kept = 0;
	char last[256] = "";
	size_t t, r;

	for (t = 0; t < 2; t++) {
		/* no tool, or no IPv6: no rule of ours can exist */
		if ((t == 1 && !hostfw_have_ipv6()) ||
		    !hostfw_tool_exists(tools[t]))
			continue;
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
		if (t == 1 && !hostfw_have_ipv6())
			continue;
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
