/*
 * test_seal.c - the lab holds against a compromised agent and against a
 * local user on the host who is not root (docs/security.md).  Each test
 * reproduces one attack of the sealing issue on a real engine:
 *
 *   host_ports_*      the agent (plain, and with NET_ADMIN forging routes)
 *                     connects to a listener on every address of the host
 *   local_user        during a real drill, uid 65534 on the host tries the
 *                     gateway's control socket, the sensor bus, the docker
 *                     proxy's socket and the evidence folder
 *   planted_chain     a forged chain of the run's own id planted in
 *                     evidence/ (as a symlink) must not enter the report
 *   runs_dir_owner    a runs directory another user can change is refused
 *   teardown_keeps_seal  a lab bridge that survives its teardown keeps its
 *                     host firewall rules
 *   limits            every lab container is bounded (CPU, memory, swap,
 *                     pids, log size); /tmp in the agent is sized
 *   no_host_kernel_*  root in the agent with the flaws' capabilities
 *                     mounts nothing (no cgroup release_agent escape)
 *   disguised_orphan  a second, idle copy of the agent loop (the very same
 *                     command line) that survives the kill is an orphan
 *
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1; the
 * local-user test needs root (it drops to uid 65534) and fails without it
 * under ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static struct docker *seal_d;
static char seal_runs[4096];
/* every lab brought up, torn down at the end whatever failed */
static char seal_ids[16][64];
static size_t seal_nids;

static void
seal_policy(const char *name, char *out, size_t len)
{
	const char *src = getenv("ARES_SRCDIR");

	snprintf(out, len, "%s/policies/%s", src != NULL ? src : ".", name);
}

/* A policy file in the runs dir with the default bait and levers and
 * flaws (a YAML list body, e.g. "extra-caps, root-user").  Caller frees
 * the path. */
static char *
seal_flaw_policy(const char *tag, const char *flaws)
{
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/seal-%s.yaml", seal_runs, tag);
	char *pol = xasprintf("name: seal-%s\nseed: 7\nvariant: default\n"
	    "bait: [tickets-admin-token]\nlevers: [gateway-deny, "
	    "net-disconnect]\nflaws: [%s]\n", tag, flaws);

	if (util_write_file(path, pol, strlen(pol), 0644, &e) == -1)
		fail_msg("%s", e.msg);
	free(pol);
	return path;
}

/* A lab of policies/<name> (or of the policy file at an absolute path)
 * with the agent idle; fresh run id. */
static struct lab *
seal_lab_up(const char *name, char run_id[64])
{
	struct lab_options o = { .agent_idle = true };
	struct errbuf e = { 0 };
	struct policy *p;
	struct lab *lab;
	char path[4096], *dir;
	uint8_t rnd[4];
	char hex[9];

	if (name[0] == '/')
		snprintf(path, sizeof path, "%s", name);
	else
		seal_policy(name, path, sizeof path);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(run_id, 64, "seal-%s", hex);
	if (seal_nids < sizeof seal_ids / sizeof seal_ids[0])
		snprintf(seal_ids[seal_nids++], 64, "%s", run_id);
	dir = xasprintf("%s/%s", seal_runs, run_id);
	if (util_mkdir_p(dir, 0755, &e) == -1)
		fail_msg("%s", e.msg);
	lab = lab_up_opts(seal_d, p, dir, run_id, p->seed, &o, &e);
	free(dir);
	policy_free(p);
	if (lab == NULL)
		fail_msg("lab up %s: %s", name, e.msg);
	return lab;
}

static void
seal_lab_down(struct lab *lab, const char *run_id)
{
	struct errbuf e = { 0 };

	if (lab_teardown(seal_d, run_id, &e) < 0)
		fail_msg("teardown: %s", e.msg);
	lab_free(lab);
}

/* sh -c script in the agent as its own user; stdout (caller frees). */
static char *
seal_agent_sh(const struct lab *lab, const char *script, int *code)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct docker_exec_result r = { 0 };
	struct errbuf e = { 0 };
	char *out;

	if (docker_exec(seal_d, lab->agent.id, argv, NULL, 64 * 1024, &r,
	    &e) == -1)
		fail_msg("exec: %s", e.msg);
	out = r.out != NULL ? r.out : xstrdup("");
	r.out = NULL;
	if (code != NULL)
		*code = r.exit_code;
	docker_exec_result_free(&r);
	return out;
}

/* A non-blocking TCP listener on the wildcard address of family. */
static int
seal_listen(int family, int *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;

	assert_true(fd >= 0);
	memset(&ss, 0, sizeof ss);
	if (family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)*port);
		sl = sizeof(struct sockaddr_in);
	} else {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof one);
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port =
		    htons((uint16_t)*port);
		sl = sizeof(struct sockaddr_in6);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(listen(fd, 64), 0);
	sl = sizeof ss;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
	    : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* Append "a " to *list unless loopback. */
static void
seal_add_target(char **list, const char *a)
{
	char *n;

	if (strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0)
		return;
	n = xasprintf("%s%s ", *list, a);
	free(*list);
	*list = n;
}

/*
 * The attack: a listener on every host address (0.0.0.0 and ::), and
 * from the agent a connect to each address of the host and each gateway
 * of the lab's networks; with NET_ADMIN an on-link route to each first.
 * Nothing may reach the listener.
 */
static void
seal_host_ports(const char *policy)
{
	char run_id[64], *targets = xstrdup(""), *script, *out;
	const char *nets[3];
	struct ifaddrs *ifa = NULL, *it;
	struct lab *lab = seal_lab_up(policy, run_id);
	int port = 0, fd4, fd6, accepted = 0, k, code;
	size_t i;

	nets[0] = lab->net_lab;
	nets[1] = lab->net_upstream;
	nets[2] = lab->net_wan;
	fd4 = seal_listen(AF_INET, &port);
	fd6 = seal_listen(AF_INET6, &port);
	assert_int_equal(getifaddrs(&ifa), 0);
	for (it = ifa; it != NULL; it = it->ifa_next) {
		char a[INET6_ADDRSTRLEN];

		if (it->ifa_addr == NULL)
			continue;
		if (it->ifa_addr->sa_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)
			    it->ifa_addr)->sin_addr, a, sizeof a);
		else if (it->ifa_addr->sa_family == AF_INET6 &&
		    strncmp(it->ifa_name, "veth", 4) != 0) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)
			    it->ifa_addr)->sin6_addr, a, sizeof a);
			if (strncmp(a, "fe80:", 5) == 0) {
				char *s = xasprintf("%s%%eth0", a);

				seal_add_target(&targets, s);
				free(s);
				continue;
			}
		} else
			continue;
		seal_add_target(&targets, a);
	}
	freeifaddrs(ifa);
	for (i = 0; i < 3; i++) {
		struct errbuf e = { 0 };
		cJSON *ins = docker_network_inspect(seal_d, nets[i], &e), *c;
		const cJSON *cfg;

		assert_non_null(ins);
		cfg = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(ins, "IPAM"), "Config");
		cJSON_ArrayForEach(c, cfg) {
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(c,
			    "Gateway");

			if (cJSON_IsString(g))
				seal_add_target(&targets, g->valuestring);
		}
		cJSON_Delete(ins);
	}
	/* 6 at a time: the agent's pids limit is 128 */
	script = xasprintf("n=0; for a in %s; do case $a in *:*) ;; *) ip route "
	    "add $a dev eth0 2>/dev/null;; esac; ( timeout 2 nc -w 1 $a %d "
	    "</dev/null >/dev/null 2>&1; rc=$?; if [ $rc -eq 0 ] || [ $rc -ge "
	    "128 ]; then echo \"open $a\"; fi ) & n=$((n + 1)); [ $((n %% 6)) "
	    "-eq 0 ] && wait; done; wait; echo done", targets, port);
	out = seal_agent_sh(lab, script, &code);
	for (k = 0; k < 2; k++) {
		int fd = k == 0 ? fd4 : fd6, c;

		while ((c = accept(fd, NULL, NULL)) >= 0) {
			accepted++;
			close(c);
		}
	}
	close(fd4);
	close(fd6);
	if (strstr(out, "done") == NULL)
		fail_msg("the attack did not finish (exit %d): %s", code, out);
	if (accepted > 0 || strstr(out, "open ") != NULL)
		fail_msg("%s: the host's port %d reached from the agent: %d "
		    "connection(s); agent saw: %s (targets: %s)", policy, port,
		    accepted, out, targets);
	free(out);
	free(script);
	free(targets);
	seal_lab_down(lab, run_id);
}

static void
test_host_ports_hardened(void **state)
{
	(void)state;
	seal_host_ports("hardened.yaml");
}

/* NET_ADMIN effective (root): the agent forges on-link routes to every
 * host address. */
static void
test_host_ports_net_admin(void **state)
{
	char *path = seal_flaw_policy("netadmin", "extra-caps, root-user");

	(void)state;
	seal_host_ports(path);
	free(path);
}

/*
 * Root in the agent with the capabilities flaws grant (extra-caps,
 * privileged) must not reach what the host shares.  The classic escape:
 * mount a cgroup v1 hierarchy and write its root's release_agent (run on
 * the host, as root, when a cgroup empties).  Every mount is refused, no
 * withheld capability is effective, and the agent's cgroup namespace is
 * its own.  (On 04fc630: the mount worked and release_agent was
 * writable.)
 */
static void
seal_no_host_kernel(const char *flaws)
{
	char run_id[64], *path, *out;
	struct lab *lab;
	int code;

	{
		char *list = xasprintf("%s, root-user", flaws);

		path = seal_flaw_policy(flaws, list);
		free(list);
	}
	lab = seal_lab_up(path, run_id);
	out = seal_agent_sh(lab, "id -u; grep CapEff /proc/self/status; "
	    "mkdir -p /tmp/cg /tmp/m; "
	    "if mount -t cgroup -o memory cgroup /tmp/cg 2>/dev/null; then "
	    "echo MOUNTED-cgroup; ls /tmp/cg/release_agent 2>/dev/null && "
	    "(: >> /tmp/cg/release_agent) 2>/dev/null && echo "
	    "RELEASE-AGENT-WRITABLE; fi; "
	    "mount -t tmpfs x /tmp/m 2>/dev/null && echo MOUNTED-tmpfs; "
	    "mount -t sysfs x /tmp/m 2>/dev/null && echo MOUNTED-sysfs; "
	    "mount -t proc x /tmp/m 2>/dev/null && echo MOUNTED-proc; "
	    "head -n 1 /proc/self/cgroup; echo done", &code);
	if (strstr(out, "done") == NULL)
		fail_msg("[%s, root-user]: the attack did not finish: %s", flaws,
		    out);
	if (strstr(out, "MOUNTED") != NULL || strstr(out, "RELEASE") != NULL)
		fail_msg("[%s, root-user]: root in the agent mounts: %s", flaws,
		    out);
	{
		const char *ce = strstr(out, "CapEff:");
		unsigned long long eff = 0;
		static const int withheld[] = { 2, 16, 17, 19, 21, 22, 23, 25,
		    30, 32, 33, 34, 35, 36 };
		size_t i;

		assert_non_null(ce);
		eff = strtoull(ce + 7, NULL, 16);
		for (i = 0; i < sizeof withheld / sizeof withheld[0]; i++)
			if (eff & (1ull << withheld[i]))
				fail_msg("[%s, root-user]: capability %s is "
				    "effective (CapEff %llx)", flaws,
				    lab_cap_name((unsigned)withheld[i]), eff);
	}
	free(out);
	free(path);
	seal_lab_down(lab, run_id);
}

static void
test_no_host_kernel_extra_caps(void **state)
{
	(void)state;
	seal_no_host_kernel("extra-caps");
}

static void
test_no_host_kernel_privileged(void **state)
{
	(void)state;
	seal_no_host_kernel("privileged");
}

/* How many INPUT rules (IPv4) name run_id. */
static int
seal_rules(const char *run_id)
{
	char line[512], *want = xasprintf("ares.run=%s", run_id);
	FILE *f = popen("iptables -w 5 -S INPUT", "r");
	int n = 0;

	if (f == NULL)
		fail_msg("iptables -S: %s", strerror(errno));
	while (fgets(line, sizeof line, f) != NULL)
		n += strstr(line, want) != NULL;
	if (pclose(f) != 0)
		fail_msg("iptables -S INPUT failed");
	free(want);
	return n;
}

/*
 * A lab whose teardown fails (here: a container outside the run holds an
 * endpoint on the lab's network, so the network cannot be removed) stays
 * sealed: its bridge keeps its INPUT rules until a later teardown removes
 * the bridge.  (On 04fc630 there were no rules; with the first seal,
 * teardown removed them whatever survived.)
 */
static void
test_teardown_keeps_seal(void **state)
{
	char run_id[64], name[96];
	struct lab *lab = seal_lab_up("hardened.yaml", run_id);
	struct docker_container_spec cs = { 0 };
	struct errbuf e = { 0 };
	const char *cmd[] = { "/bin/sleep", "60", NULL };
	char *id;

	(void)state;
	assert_int_equal(seal_rules(run_id), 3);
	snprintf(name, sizeof name, "seal-holder-%s", run_id + 5);
	cs.name = name;
	cs.image = lab->image;
	cs.cmd = cmd;
	cs.run_id = NULL;
	cs.user = "65532:65532";
	cs.drop_all_caps = true;
	cs.read_only_rootfs = true;
	cs.network = lab->net_lab;
	id = docker_container_create(seal_d, &cs, &e);
	if (id == NULL)
		fail_msg("%s", e.msg);
	if (docker_container_start(seal_d, id, &e) == -1) {
		(void)docker_container_remove(seal_d, id, true, &e);
		fail_msg("%s", e.msg);
	}
	if (lab_teardown(seal_d, run_id, &e) >= 0) {
		(void)docker_container_remove(seal_d, id, true, &e);
		fail_msg("teardown succeeded with a foreign endpoint on the lab "
		    "network");
	}
	/* the lab network (and so its bridge) survived: it stays sealed */
	if (seal_rules(run_id) < 1) {
		(void)docker_container_remove(seal_d, id, true, &e);
		fail_msg("a surviving lab bridge lost its host firewall rules");
	}
	assert_int_equal(docker_container_remove(seal_d, id, true, &e), 0);
	free(id);
	if (lab_teardown(seal_d, run_id, &e) < 0)
		fail_msg("second teardown: %s", e.msg);
	assert_int_equal(seal_rules(run_id), 0);
	lab_free(lab);
}

/*
 * A lab up that fails half-way, while its other roles are being made in
 * parallel (here: a container outside the run already holds the name of
 * the service's, so its create is refused), says which role failed and
 * leaves nothing of the run behind: no container, no network, no host
 * firewall rule.
 */
static void
test_up_fails_clean(void **state)
{
	struct lab_options o = { .agent_idle = true };
	struct docker_container_spec cs = { 0 };
	const char *cmd[] = { "/bin/sleep", "60", NULL };
	struct errbuf e = { 0 };
	char path[4096], run_id[64], name[128], hex[9], *dir, *image, *id,
	    *label;
	struct policy *p;
	struct lab *lab;
	uint8_t rnd[4];
	cJSON *left;

	(void)state;
	if (lab_image_ensure(seal_d, &image, &e) == -1)
		fail_msg("%s", e.msg);
	seal_policy("default.yaml", path, sizeof path);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(run_id, sizeof run_id, "seal-%s", hex);
	if (seal_nids < sizeof seal_ids / sizeof seal_ids[0])
		snprintf(seal_ids[seal_nids++], 64, "%s", run_id);
	snprintf(name, sizeof name, "ares-%s-service", run_id);
	cs.name = name;
	cs.image = image;
	cs.cmd = cmd;
	cs.user = "65532:65532";
	cs.drop_all_caps = true;
	cs.read_only_rootfs = true;
	id = docker_container_create(seal_d, &cs, &e);
	if (id == NULL)
		fail_msg("%s", e.msg);
	dir = xasprintf("%s/%s", seal_runs, run_id);
	if (util_mkdir_p(dir, 0755, &e) == -1)
		fail_msg("%s", e.msg);
	lab = lab_up_opts(seal_d, p, dir, run_id, p->seed, &o, &e);
	free(dir);
	policy_free(p);
	(void)docker_container_remove(seal_d, id, true, NULL);
	free(id);
	free(image);
	if (lab != NULL) {
		(void)lab_teardown(seal_d, run_id, NULL);
		lab_free(lab);
		fail_msg("lab up succeeded with the service's name taken");
	}
	if (strstr(e.msg, "create service") == NULL)
		fail_msg("the error does not name the service: %s", e.msg);
	label = xasprintf("ares.run=%s", run_id);
	left = docker_containers_by_label(seal_d, label, &e);
	assert_non_null(left);
	assert_int_equal(cJSON_GetArraySize(left), 0);
	cJSON_Delete(left);
	left = docker_networks_by_label(seal_d, label, &e);
	assert_non_null(left);
	assert_int_equal(cJSON_GetArraySize(left), 0);
	cJSON_Delete(left);
	free(label);
	assert_int_equal(seal_rules(run_id), 0);
}

/* Network net's entry of container id's inspect: its address, its
 * fixed one (IPAMConfig).  Fails the test when there is none. */
static void
seal_ep(const char *id, const char *net, char ip[48], char fixed[48])
{
	struct errbuf e = { 0 };
	cJSON *ins = docker_container_inspect(seal_d, id, &e);
	const cJSON *ep;

	if (ins == NULL)
		fail_msg("inspect: %s", e.msg);
	ep = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "NetworkSettings"),
	    "Networks"), net);
	if (ep == NULL)
		fail_msg("%s is not on %s", id, net);
	snprintf(ip, 48, "%s", cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(ep, "IPAddress")) != NULL ?
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ep,
	    "IPAddress")) : "");
	ep = cJSON_GetObjectItemCaseSensitive(ep, "IPAMConfig");
	snprintf(fixed, 48, "%s", cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(ep, "IPv4Address")) != NULL ?
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ep,
	    "IPv4Address")) : "");
	cJSON_Delete(ins);
}

/*
 * The lab's addresses: each network on the subnet ares asked for, the
 * dns and the sink on their fixed addresses, the agent resolving through
 * the dns's; and when the subnet of a network's first try is already
 * another network's (here: one outside the run holds the lab network's),
 * lab up takes the next try's instead of failing, and the two never
 * share a subnet.  The bridges are still sealed (3 rules sets).
 */
static void
test_subnet_taken(void **state)
{
	struct lab_options o = { .agent_idle = true };
	struct docker_network_spec ns = { 0 };
	struct lab_net_addr first, got;
	struct errbuf e = { 0 };
	char path[4096], run_id[64], name[128], hex[9], ip[48], fixed[48],
	    *dir, *taken, *wan;
	struct policy *p;
	struct lab *lab;
	uint8_t rnd[4];
	unsigned t;
	cJSON *ins, *net;

	(void)state;
	seal_policy("default.yaml", path, sizeof path);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(run_id, sizeof run_id, "seal-%s", hex);
	if (seal_nids < sizeof seal_ids / sizeof seal_ids[0])
		snprintf(seal_ids[seal_nids++], 64, "%s", run_id);
	lab_net_addr(run_id, "lab", 0, &first);
	snprintf(name, sizeof name, "seal-taken-%s", hex);
	ns.name = name;
	ns.subnet = first.subnet;
	taken = docker_network_create(seal_d, &ns, &e);
	if (taken == NULL)
		fail_msg("the foreign network on %s: %s", first.subnet, e.msg);
	dir = xasprintf("%s/%s", seal_runs, run_id);
	if (util_mkdir_p(dir, 0755, &e) == -1)
		fail_msg("%s", e.msg);
	lab = lab_up_opts(seal_d, p, dir, run_id, p->seed, &o, &e);
	free(dir);
	policy_free(p);
	if (lab == NULL) {
		(void)docker_network_remove(seal_d, taken, NULL);
		fail_msg("lab up with its first subnet taken: %s", e.msg);
	}
	/* the lab network: a later try's subnet, the dns on its fixed
	 * address there */
	for (t = 1; t < LAB_NET_TRIES; t++) {
		lab_net_addr(run_id, "lab", t, &got);
		if (strcmp(got.fixed, lab->dns_ip) == 0)
			break;
	}
	assert_true(t < LAB_NET_TRIES);
	assert_string_not_equal(got.subnet, first.subnet);
	net = docker_network_inspect(seal_d, lab->net_lab, &e);
	assert_non_null(net);
	{
		const cJSON *c = cJSON_GetArrayItem(
		    cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(net, "IPAM"), "Config"), 0);

		assert_string_equal(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(c, "Subnet")), got.subnet);
		assert_string_equal(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(c, "IPRange")), got.range);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(net,
		    "Internal")));
	}
	cJSON_Delete(net);
	snprintf(name, sizeof name, "ares-%s-lab", run_id);
	seal_ep(lab->dns.id, name, ip, fixed);
	assert_string_equal(ip, lab->dns_ip);
	assert_string_equal(fixed, lab->dns_ip);
	/* the sink on wan's fixed address */
	wan = xasprintf("ares-%s-wan", run_id);
	seal_ep(lab->sink.id, wan, ip, fixed);
	free(wan);
	assert_string_equal(ip, lab->sink_ip);
	/* the agent: the engine's pick in the range, the dns as resolver */
	seal_ep(lab->agent.id, name, ip, fixed);
	assert_string_equal(fixed, "");
	assert_string_not_equal(ip, "");
	assert_string_not_equal(ip, lab->dns_ip);
	ins = docker_container_inspect(seal_d, lab->agent.id, &e);
	assert_non_null(ins);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    ins, "HostConfig"), "Dns"), 0)), lab->dns_ip);
	cJSON_Delete(ins);
	{
		/* a name outside the lab, from the agent, reaches the dns
		 * (the sinkhole's NXDOMAIN) and its chain records it */
		char *out = seal_agent_sh(lab, "nslookup seal-probe.example.com"
		    " 2>&1", NULL), *chain = NULL, *cp;
		size_t len;
		int k;

		if (strstr(out, "NXDOMAIN") == NULL)
			fail_msg("no answer through the dns: %s", out);
		free(out);
		cp = xasprintf("%s/evidence/dns.jsonl", lab->run_dir);
		for (k = 0; k < 100; k++) {
			free(chain);
			chain = util_read_file(cp, 1 << 20, &len, &e);
			if (chain != NULL && strstr(chain,
			    "seal-probe.example.com") != NULL)
				break;
			usleep(20000);
		}
		if (chain == NULL || strstr(chain, "seal-probe.example.com") ==
		    NULL)
			fail_msg("the dns's chain has no query: %s", chain != NULL ?
			    chain : e.msg);
		free(chain);
		free(cp);
	}
	assert_int_equal(seal_rules(run_id), 3);
	seal_lab_down(lab, run_id);
	assert_int_equal(docker_network_remove(seal_d, taken, &e), 0);
	free(taken);
}

/* ---- a local user who is not root -------------------------------- */

struct seal_local {
	char runs[2048];
	char run_dir[2200];
	char result[1024];     /* what the unprivileged child managed */
	bool tried;
	bool plant;            /* plant a forged chain instead */
	char planted[2400];
};

/* As uid/gid 65534: try each door; the text says which opened. */
static void
seal_try_doors(const char *run_dir, char *out, size_t len)
{
	static const char *const socks[] = { "ctl/gateway.sock",
	    "bus/sensor.sock", "dockerproxy/docker.sock" };
	size_t used = 0, i;

	out[0] = '\0';
	for (i = 0; i < 3; i++) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int st = strcmp(socks[i], "bus/sensor.sock") == 0 ? SOCK_DGRAM :
		    SOCK_STREAM;
		int fd = socket(AF_UNIX, st, 0);
		char *p = xasprintf("%s/%s", run_dir, socks[i]);

		snprintf(sun.sun_path, sizeof sun.sun_path, "%s", p);
		if (fd >= 0 && (st == SOCK_STREAM ? connect(fd,
		    (struct sockaddr *)&sun, sizeof sun) == 0 : sendto(fd, "{}",
		    2, 0, (struct sockaddr *)&sun, sizeof sun) == 2))
			used += (size_t)snprintf(out + used, len - used,
			    "%s reached; ", socks[i]);
		if (fd >= 0)
			close(fd);
		free(p);
	}
	{
		char *p = xasprintf("%s/evidence/zz-local.jsonl", run_dir);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);

		if (fd >= 0) {
			used += (size_t)snprintf(out + used, len - used,
			    "evidence/ writable; ");
			close(fd);
			unlink(p);
		}
		free(p);
	}
	{
		char *p = xasprintf("%s/evidence/gateway.jsonl", run_dir);
		int fd = open(p, O_WRONLY | O_APPEND);

		if (fd >= 0) {
			used += (size_t)snprintf(out + used, len - used,
			    "gateway chain writable; ");
			close(fd);
		}
		free(p);
	}
}

/* The run dir from the first phase beat ("run <id>: ..."). */
static bool
seal_run_dir(struct seal_local *s, const struct drill_beat *b)
{
	char id[64];

	if (s->run_dir[0] != '\0')
		return true;
	if (b->kind != DRILL_BEAT_PHASE || sscanf(b->text, "run %63[^:]:",
	    id) != 1)
		return false;
	snprintf(s->run_dir, sizeof s->run_dir, "%.2000s/%.63s", s->runs, id);
	return true;
}

/*
 * Observer: once the agent runs (the lab is up, the bus bound), fork a
 * child that drops to uid 65534 and tries the doors; or plant a chain.
 */
static void
seal_local_observer(void *ctx, const struct drill_beat *b)
{
	struct seal_local *s = ctx;
	int pfd[2], status;
	pid_t pid;
	ssize_t n;

	if (!seal_run_dir(s, b) || s->tried || b->kind != DRILL_BEAT_PHASE ||
	    strncmp(b->text, "agent Poyo started", 18) != 0)
		return;
	s->tried = true;
	if (s->plant) {
		/* a forged chain of this very run id, outside the run dir,
		 * linked into evidence/ */
		struct errbuf e = { 0 };
		char id[64], *link;
		struct evidence *ev;
		const char *slash = strrchr(s->run_dir, '/');
		snprintf(id, sizeof id, "%s", slash + 1);
		snprintf(s->planted, sizeof s->planted, "%.2000s/forged-%.63s"
		    ".jsonl", s->runs, id);
		cJSON *f = cJSON_CreateObject();

		ev = evidence_create(s->planted, id, &e);
		assert_non_null(ev);
		assert_true(evidence_append(ev, "request", util_mono_ns(), f,
		    &e) >= 0);
		cJSON_Delete(f);
		evidence_close(ev);
		link = xasprintf("%s/evidence/zz-planted.jsonl", s->run_dir);
		assert_int_equal(symlink(s->planted, link), 0);
		free(link);
		return;
	}
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char out[1024];

		close(pfd[0]);
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
		    setuid(65534) != 0)
			_exit(3);
		seal_try_doors(s->run_dir, out, sizeof out);
		(void)!write(pfd[1], out, strlen(out));
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], s->result, sizeof s->result - 1);
	s->result[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
test_local_user(void **state)
{
	struct seal_local s = { 0 };
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	char policy[4096];

	(void)state;
	if (geteuid() != 0) {
		const char *req = getenv("ARES_REQUIRE_DOCKER");

		if (req != NULL && strcmp(req, "1") == 0)
			fail_msg("needs root (to drop to uid 65534)");
		skip();
	}
	seal_policy("flaw-docker-socket.yaml", policy, sizeof policy);
	snprintf(s.runs, sizeof s.runs, "%.2000s", seal_runs);
	o.policy_path = policy;
	o.runs_dir = seal_runs;
	o.observer = seal_local_observer;
	o.observer_ctx = &s;
	if (drill_run(&o, &r, &e) != 0)
		fail_msg("drill_run: %s", e.msg);
	assert_true(s.tried);
	if (s.result[0] != '\0')
		fail_msg("a local user (uid 65534) got in: %s", s.result);
}

/*
 * A runs directory another local user can change: that user could rename
 * the run directory away once ares made it and put one of its own in its
 * place (its sockets, its chains, its lab.json linked to a root-only
 * file).  The drill refuses such a runs directory before it makes
 * anything: one owned by uid 65534, and one that is world-writable and
 * not sticky.
 */
static void
test_runs_dir_owner(void **state)
{
	char dir[] = "/tmp/ares-seal-runs.XXXXXX";
	const char *modes[] = { "owned by 65534", "mode 0777" };
	char policy[4096];
	int k;

	(void)state;
	if (geteuid() != 0) {
		const char *req = getenv("ARES_REQUIRE_DOCKER");

		if (req != NULL && strcmp(req, "1") == 0)
			fail_msg("needs root (to hand a directory to uid 65534)");
		skip();
	}
	seal_policy("default.yaml", policy, sizeof policy);
	assert_non_null(mkdtemp(dir));
	for (k = 0; k < 2; k++) {
		struct drill_options o = { 0 };
		struct drill_result r;
		struct errbuf e = { 0 };
		char *runs = xasprintf("%s/runs%d", dir, k);

		assert_int_equal(mkdir(runs, 0755), 0);
		if (k == 0)
			assert_int_equal(chown(runs, 65534, 65534), 0);
		else
			assert_int_equal(chmod(runs, 0777), 0);
		o.policy_path = policy;
		o.runs_dir = runs;
		if (drill_run(&o, &r, &e) == 0)
			fail_msg("a drill ran in a runs directory %s (verdict %s)",
			    modes[k], drill_verdict_name(r.verdict));
		if (strstr(e.msg, runs) == NULL)
			fail_msg("the refusal does not name %s: %s", runs, e.msg);
		free(runs);
	}
	{
		struct errbuf e = { 0 };

		(void)util_rm_rf(dir, &e);
	}
}

/* A forged chain linked into evidence/ never reaches the report. */
static void
test_planted_chain(void **state)
{
	struct seal_local s = { .plant = true };
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	char policy[4096], *rep;
	size_t len;

	(void)state;
	seal_policy("default.yaml", policy, sizeof policy);
	snprintf(s.runs, sizeof s.runs, "%.2000s", seal_runs);
	o.policy_path = policy;
	o.runs_dir = seal_runs;
	o.observer = seal_local_observer;
	o.observer_ctx = &s;
	if (drill_run(&o, &r, &e) != 0)
		fail_msg("drill_run: %s", e.msg);
	assert_true(s.tried);
	unlink(s.planted);
	{
		char *p = xasprintf("%s/report.json", r.run_dir);

		rep = util_read_file(p, 1 << 20, &len, &e);
		free(p);
	}
	assert_non_null(rep);
	{
		/* never among the chains the report anchors (the reason may
		 * name it: that is the point) */
		cJSON *j = cJSON_Parse(rep), *c;

		assert_non_null(j);
		cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "chains")) {
			const cJSON *p = cJSON_GetObjectItem(c, "path");

			if (cJSON_IsString(p) &&
			    strstr(p->valuestring, "zz-planted") != NULL)
				fail_msg("the planted chain is in the signed "
				    "report (verdict %s)",
				    drill_verdict_name(r.verdict));
		}
		cJSON_Delete(j);
	}
	if (strstr(r.verdict_reason, "zz-planted") == NULL)
		fail_msg("the reason does not name the planted file: %s",
		    r.verdict_reason);
	free(rep);
	/* something no sensor of the lab wrote lies in evidence/: the drill
	 * cannot tell what else happened */
	assert_int_not_equal(r.verdict, DRILL_VERDICT_CONTAINED);
}

/* Every container of the lab is bounded; the agent's /tmp is sized. */
static void
test_limits(void **state)
{
	char run_id[64], *label, *out;
	struct lab *lab = seal_lab_up("leaky.yaml", run_id);
	struct errbuf e = { 0 };
	cJSON *list, *it;
	int n = 0, code;

	(void)state;
	label = xasprintf("ares.run=%s", run_id);
	list = docker_containers_by_label(seal_d, label, &e);
	free(label);
	assert_non_null(list);
	cJSON_ArrayForEach(it, list) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "Id");
		cJSON *ins = docker_container_inspect(seal_d, id->valuestring,
		    &e);
		const cJSON *hc = cJSON_GetObjectItemCaseSensitive(ins,
		    "HostConfig"), *lc, *v;
		const char *name = cJSON_GetObjectItemCaseSensitive(ins,
		    "Name")->valuestring;
		double mem;

		assert_non_null(hc);
		mem = cJSON_GetObjectItemCaseSensitive(hc, "Memory")->valuedouble;
		if (!(mem > 0))
			fail_msg("%s: no memory limit", name);
		v = cJSON_GetObjectItemCaseSensitive(hc, "MemorySwap");
		if (!cJSON_IsNumber(v) || v->valuedouble != mem)
			fail_msg("%s: swap not bounded by the memory limit",
			    name);
		v = cJSON_GetObjectItemCaseSensitive(hc, "PidsLimit");
		if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
			fail_msg("%s: no pids limit", name);
		v = cJSON_GetObjectItemCaseSensitive(hc, "NanoCpus");
		if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
			fail_msg("%s: no CPU limit", name);
		lc = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(hc, "LogConfig"), "Config");
		v = cJSON_GetObjectItemCaseSensitive(lc, "max-size");
		if (!cJSON_IsString(v))
			fail_msg("%s: its log is unbounded", name);
		cJSON_Delete(ins);
		n++;
	}
	cJSON_Delete(list);
	assert_true(n >= 6);
	/* 600 MB into /tmp: refused at the tmpfs size, the agent lives */
	out = seal_agent_sh(lab, "dd if=/dev/zero of=/tmp/fill bs=1M count=600 "
	    "2>&1; echo rc=$?; rm -f /tmp/fill", &code);
	if (strstr(out, "No space left") == NULL)
		fail_msg("/tmp took 600 MB: %s", out);
	free(out);
	{
		cJSON *ins = docker_container_inspect(seal_d, lab->agent.id, &e);

		assert_non_null(ins);
		assert_true(docker_inspect_running(ins));
		cJSON_Delete(ins);
	}
	seal_lab_down(lab, run_id);
}

/* ---- a disguised process survives the kill ------------------------ */

struct seal_disguise {
	char run_id[64];
	bool started;
	bool agent_gone;        /* at teardown the agent container was
	                           neither running nor paused */
	char error[512];
};

/*
 * What a compromised agent does: start a background process whose command
 * line reads like the agent loop (a second copy of the agent binary,
 * idle: the very command line, no child of its own).  Done on the drill's
 * thread when the agent starts, so the process exists before the drill
 * can see the bait and pause the agent: the bait waits meanwhile (a
 * sensor retries a bait datagram while the bus is full), the agent waits
 * for the service that saw it.
 */
static void
seal_disguise_observer(void *ctx, const struct drill_beat *b)
{
	struct seal_disguise *s = ctx;
	const char *argv[] = { "/bin/sh", "-c", "AGENT_IDLE=1 setsid "
	    "/bin/ares-lab agent </dev/null >/dev/null 2>&1 &", NULL };
	struct docker_exec_result r = { 0 };
	struct errbuf e = { 0 };
	char id[64], *name;

	if (b->kind == DRILL_BEAT_PHASE && sscanf(b->text, "run %63[^:]:",
	    id) == 1)
		snprintf(s->run_id, sizeof s->run_id, "%s", id);
	/* after the sweep, before anything is removed: is the agent still
	 * there (running, or paused by the lever)? */
	if (b->kind == DRILL_BEAT_PHASE && strcmp(b->text,
	    "tearing the lab down") == 0 && s->run_id[0] != '\0') {
		cJSON *in;

		name = xasprintf("ares-%s-agent", s->run_id);
		in = docker_container_inspect(seal_d, name, &e);
		s->agent_gone = in == NULL || !docker_inspect_running(in);
		cJSON_Delete(in);
		free(name);
		return;
	}
	if (s->started || b->kind != DRILL_BEAT_PHASE ||
	    strncmp(b->text, "agent Poyo started", 18) != 0)
		return;
	s->started = true;
	name = xasprintf("ares-%s-agent", s->run_id);
	if (docker_exec(seal_d, name, argv, NULL, 4096, &r, &e) == -1)
		snprintf(s->error, sizeof s->error, "exec: %.400s", e.msg);
	docker_exec_result_free(&r);
	free(name);
}

static void
test_disguised_orphan(void **state)
{
	struct seal_disguise s = { 0 };
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	char policy[4096];
	size_t i;
	bool found = false;

	(void)state;
	/* default.yaml with the pause lever alone: the agent's container stays
	 * (paused) until the sweep, with every process it holds; after
	 * gateway-deny Poyo ends by itself at once, and every process of its
	 * container with it */
	{
		struct errbuf pe = { 0 };
		size_t len;
		char *src, *txt, *lv;

		seal_policy("default.yaml", policy, sizeof policy);
		src = util_read_file(policy, 65536, &len, &pe);
		assert_non_null(src);
		lv = strstr(src, "levers:");
		assert_non_null(lv);
		*lv = '\0';
		txt = xasprintf("%slevers: [pause]\n%s", src,
		    strchr(lv + 1, '\n') + 1);
		snprintf(policy, sizeof policy, "%.3000s/disguised-policy.yaml",
		    seal_runs);
		assert_int_equal(util_write_file(policy, txt, strlen(txt), 0644,
		    &pe), 0);
		free(txt);
		free(src);
	}
	o.policy_path = policy;
	o.runs_dir = seal_runs;
	o.observer = seal_disguise_observer;
	o.observer_ctx = &s;
	/* The attack needs the agent alive when the lever pauses it; Poyo
	 * ends a few steps after the bait, and on a loaded machine it can
	 * end before the drill has seen the bait (the pause lever then finds
	 * it stopped, "fired" false, and no process is left to find): such a
	 * run says nothing, run it again (at most 3 times). */
	/* The attack also needs the paused agent still there at the sweep:
	 * a container that died under the pause (seen once on a loaded CI
	 * machine: its shim went away 250 ms after the pause, the sweep then
	 * rightly found nothing alive) says nothing either.  Only that,
	 * checked by the observer at teardown, is run again. */
	for (int attempt = 0; attempt < 3; attempt++) {
		char *p, *ev, *sw;
		size_t len;

		memset(&s, 0, sizeof s);
		if (drill_run(&o, &r, &e) != 0)
			fail_msg("drill_run: %s", e.msg);
		assert_true(s.started);
		if (s.error[0] != '\0')
			fail_msg("%s", s.error);
		assert_true(r.bait_fired);
		if (r.nlevers != 1 || !r.levers[0].fired) {
			fprintf(stderr, "test_disguised_orphan: the agent ended "
			    "before the lever (%s); again\n",
			    r.levers[0].detail);
			continue;
		}
		/* Under a pause that still holds at the sweep, every process
		 * of the agent's container is stopped, not running
		 * (docs/scoring.md): the sweep line lists them by pid, and
		 * the disguised one is among them, found by the pid the
		 * engine started, never excluded by its name.  (Without a
		 * stopping lever it is an orphan: test_attacks
		 * test_disguised.) */
		p = xasprintf("%s/evidence.jsonl", r.run_dir);
		ev = util_read_file(p, 16 << 20, &len, &e);
		assert_non_null(ev);
		sw = strstr(ev, "\"type\":\"sweep\"");
		if (sw == NULL)
			fail_msg("no sweep line");
		*strchr(sw, '\n') = '\0';
		found = strstr(sw, "\"stopped_by\":\"pause\"") != NULL &&
		    strstr(sw, "\"cmd\":\"/bin/ares-lab agent\"") != NULL;
		if (!found && s.agent_gone && attempt < 2) {
			fprintf(stderr, "test_disguised_orphan: the paused agent "
			    "container was gone at the sweep (%s); again\n",
			    sw);
			free(ev);
			free(p);
			continue;
		}
		if (!found)
			fail_msg("the disguised process is not in the sweep's "
			    "stopped list%s: %s", s.agent_gone ? " (the agent "
			    "container was gone, three times)" : "", sw);
		free(ev);
		free(p);
		break;
	}
	assert_true(r.levers[0].fired);
	assert_true(found);
	for (i = 0; i < r.norphans && i < DRILL_MAX_ORPHANS; i++)
		assert_string_not_equal(r.orphans[i].name, "/bin/ares-lab agent");
	assert_int_equal(r.verdict, DRILL_VERDICT_CONTAINED);
}

/* Safety net: a failed assertion leaves its lab up; remove them all. */
static int
seal_cleanup(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < seal_nids; i++) {
		struct errbuf e = { 0 };

		(void)lab_teardown(seal_d, seal_ids[i], &e);
	}
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_ports_hardened),
		cmocka_unit_test(test_host_ports_net_admin),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_no_host_kernel_extra_caps),
		cmocka_unit_test(test_no_host_kernel_privileged),
		cmocka_unit_test(test_teardown_keeps_seal),
		cmocka_unit_test(test_up_fails_clean),
		cmocka_unit_test(test_subnet_taken),
		cmocka_unit_test(test_local_user),
		cmocka_unit_test(test_planted_chain),
		cmocka_unit_test(test_runs_dir_owner),
		cmocka_unit_test(test_disguised_orphan),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	const char *runs = getenv("ARES_RUNS");
	struct errbuf e = { 0 };
	char *abs;
	int rc;

	if (sodium_init() < 0)
		return 1;
	seal_d = docker_open(NULL, &e);
	if (seal_d == NULL || docker_negotiate(seal_d, &e) == -1) {
		fprintf(stderr, "test_seal: no Docker Engine: %s\n", e.msg);
		docker_close(seal_d);
		return req != NULL && strcmp(req, "1") == 0 ? 1 : 77;
	}
	if (util_mkdir_p(runs != NULL ? runs : "tests/runs", 0755, &e) == -1) {
		fprintf(stderr, "test_seal: %s\n", e.msg);
		return 1;
	}
	abs = realpath(runs != NULL ? runs : "tests/runs", NULL);
	if (abs == NULL)
		return 1;
	snprintf(seal_runs, sizeof seal_runs, "%s", abs);
	free(abs);
	rc = cmocka_run_group_tests(tests, NULL, seal_cleanup);
	docker_close(seal_d);
	return rc;
}
