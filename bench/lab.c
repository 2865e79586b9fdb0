/*
 * bench/lab.c - `ares lab up` + `ares lab down` of a lab against
 * `docker-compose up -d` + `docker-compose down -t 0` of the equivalent
 * Compose file, in interleaved pairs.
 *
 *   bench/lab [-n PAIRS] [-p POLICY] [-a ARES] [-c DOCKER_COMPOSE] [-k]
 *
 * The Compose file is generated from a real lab, not written by hand: a
 * sample `ares lab up` of POLICY (default policies/default.yaml; not
 * timed, it also imports the lab image), then every container of it read
 * back from the engine (GET /containers/ID/json) and written as a service
 * with what the engine was asked for: the same image (the lab image ares
 * imported, ares-lab:<hash>: never a registry pull), command, user,
 * environment, working dir, hostname, read-only rootfs, dropped and added
 * capabilities, security options, memory, pids and CPU bounds, sysctls,
 * tmpfs, resolver, runtime, extra groups, bind mounts and networks with
 * their aliases; every network internal, a bridge name of its own and no
 * host address and the sample's subnet and the range the engine hands
 * out (IPAM), with the sample's fixed addresses (the dns's, the sink's),
 * as ares makes them.  The cgroup namespace (ares: private)
 * has no key in docker-compose 1.x.  What ares does beyond the engine
 * (the host firewall rules, the gateway's answer) has no Compose
 * equivalent and is ares's cost alone.  The bind mounts get
 * their own copies: the read-only ones (the agent's home) copied from
 * the sample, the writable ones (bus, control, evidence) made empty with
 * the sample's owner and mode before every Compose run.  The agent's
 * resolver address is the sample's dns address.  A sample whose dns had
 * no fixed address (an older ares, which waited for the engine to give
 * the dns one before it created the agent) has the agent depends_on dns,
 * as that ares did; with a fixed one every service starts at once, as in
 * ares.
 *
 * Then PAIRS pairs (default 7), the order inside a pair alternating (ares
 * first, then Compose first: ABBA).  Each side's up, down and up + down
 * wall times (the commands as a user runs them, fork to exit); after each
 * down the engine is asked that nothing of the lab is left.  Prints the
 * medians, the ratio of the up + down medians (ares / Compose) and the
 * median of the per-pair ratios.  Without docker-compose (-c, default
 * docker-compose in PATH) it says so and times ares alone.  -k keeps the
 * temp dir.  Exit 0; 1 when a run failed or left something behind; 2 on
 * usage.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#define BL_RUN_MS   120000
#define BL_MOUNTS   32
#define BL_OUT      8192

/* qsort: ascending doubles. */
static int
bl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorts a copy); -1 when n == 0. */
static double
bl_median(const double *v, int n)
{
	double *c, m;

	if (n <= 0)
		return -1;
	c = xcalloc((size_t)n, sizeof *c);
	memcpy(c, v, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, bl_cmp);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

/* Run argv; its wall time in ms into *ms.  0, or -1 (printed) when it
 * failed. */
static int
bl_run(const char *const *argv, double *ms)
{
	char out[BL_OUT];
	struct errbuf e = { 0 };
	uint64_t t0 = util_mono_ns();
	int st = util_run(argv, NULL, BL_RUN_MS, out, sizeof out, &e);

	*ms = (double)(util_mono_ns() - t0) / 1e6;
	if (st != 0) {
		fprintf(stderr, "bench: %s %s %s: %s%s\n", argv[0], argv[1],
		    argv[2] != NULL ? argv[2] : "", st == -1 ? e.msg :
		    "failed: ", st == -1 ? "" : out);
		return -1;
	}
	return 0;
}

/* A YAML scalar: a JSON string (a YAML double-quoted scalar), with $
 * doubled (Compose interpolates ${...}).  Caller frees. */
static char *
bl_q(const char *s)
{
	size_t n = 0, i, k = 0;
	char *dup, *out;
	cJSON *j;

	for (i = 0; s[i] != '\0'; i++)
		n += s[i] == '$';
	dup = xmalloc(strlen(s) + n + 1);
	for (i = 0; s[i] != '\0'; i++) {
		dup[k++] = s[i];
		if (s[i] == '$')
			dup[k++] = '$';
	}
	dup[k] = '\0';
	j = cJSON_CreateString(dup);
	out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	free(dup);
	if (out == NULL)
		util_fatal("bench: cannot quote");
	return out;
}

/* Print key: "value" at indent. */
static void
bl_kv(FILE *f, int indent, const char *key, const char *value)
{
	char *q = bl_q(value);

	fprintf(f, "%*s%s: %s\n", indent, "", key, q);
	free(q);
}

/* Print key: then a list of the strings of array a (when it has any). */
static void
bl_list(FILE *f, int indent, const char *key, const cJSON *a)
{
	const cJSON *it;

	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) == 0)
		return;
	fprintf(f, "%*s%s:\n", indent, "", key);
	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it)) {
			char *q = bl_q(it->valuestring);

			fprintf(f, "%*s- %s\n", indent + 2, "", q);
			free(q);
		}
}

/* The string at obj.key, or NULL. */
static const char *
bl_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ?
	    v->valuestring : NULL;
}

/* The number at obj.key, or 0. */
static double
bl_num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* One bind mount of the sample and its copy for Compose. */
struct bl_mount {
	char *src, *dst;
	bool read_only;
	struct stat sb;
};

struct bl_bench {
	const char *ares, *policy, *compose;
	char *dir;                          /* the temp dir */
	char *file;                         /* DIR/compose.yaml */
	char project[32];
	struct bl_mount m[BL_MOUNTS];
	size_t nm;
	char *run_id;                       /* the sample's */
	bool dns_fixed;                     /* the sample's dns has a fixed
	                                       address (IPAMConfig) */
};

/* The fixed address (IPAMConfig.IPv4Address) of a container inspect's
 * NetworkSettings.Networks entry net, or NULL. */
static const char *
bl_fixed_ip(const cJSON *net)
{
	const char *ip = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(net, "IPAMConfig"),
	    "IPv4Address"));

	return ip != NULL && ip[0] != '\0' ? ip : NULL;
}

/* The Compose copy of bind source src (registered on first sight). */
static const char *
bl_mount_dst(struct bl_bench *b, const char *src, bool read_only)
{
	size_t i;
	const char *base;

	for (i = 0; i < b->nm; i++)
		if (strcmp(b->m[i].src, src) == 0)
			return b->m[i].dst;
	if (b->nm == BL_MOUNTS)
		util_fatal("bench: too many mounts");
	base = strrchr(src, '/');
	b->m[b->nm].src = xstrdup(src);
	b->m[b->nm].dst = xasprintf("%s/mounts/%zu-%s", b->dir, b->nm,
	    base != NULL ? base + 1 : src);
	b->m[b->nm].read_only = read_only;
	if (lstat(src, &b->m[b->nm].sb) == -1)
		util_fatal("bench: %s: %s", src, strerror(errno));
	return b->m[b->nm++].dst;
}

/* Make the copies: read-only ones copied from the sample (once), the
 * writable ones made empty with the sample's owner and mode (before every
 * Compose run).  -1 (printed). */
static int
bl_mounts_make(struct bl_bench *b, bool first)
{
	struct errbuf e = { 0 };
	size_t i;

	for (i = 0; i < b->nm; i++) {
		struct bl_mount *m = &b->m[i];
		double ms;

		if (m->read_only || !S_ISDIR(m->sb.st_mode)) {
			const char *cp[] = { "cp", "-a", m->src, m->dst, NULL };

			if (first && bl_run(cp, &ms) == -1)
				return -1;
			continue;
		}
		if (!first && util_rm_rf(m->dst, &e) == -1) {
			fprintf(stderr, "bench: %s\n", e.msg);
			return -1;
		}
		if (mkdir(m->dst, m->sb.st_mode & 07777) == -1 ||
		    chmod(m->dst, m->sb.st_mode & 07777) == -1 ||
		    (geteuid() == 0 && chown(m->dst, m->sb.st_uid,
		    m->sb.st_gid) == -1)) {
			fprintf(stderr, "bench: %s: %s\n", m->dst,
			    strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The Compose name of engine network name ("ares-<run>-lab" -> "lab"). */
static const char *
bl_net(const struct bl_bench *b, const char *name)
{
	size_t n = strlen("ares-") + strlen(b->run_id) + 1;

	if (strlen(name) > n && strncmp(name, "ares-", 5) == 0 &&
	    strncmp(name + 5, b->run_id, strlen(b->run_id)) == 0)
		return name + n;
	return name;
}

/* One service of the Compose file from container inspect ins. */
static void
bl_service(struct bl_bench *b, FILE *f, const char *role, const cJSON *ins)
{
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(ins, "Config");
	const cJSON *hc = cJSON_GetObjectItemCaseSensitive(ins, "HostConfig");
	const cJSON *nets = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "NetworkSettings"),
	    "Networks");
	const char *id = bl_str(ins, "Id");
	const cJSON *it, *a;
	const char *s;

	fprintf(f, "  %s:\n", role);
	bl_kv(f, 4, "image", bl_str(cfg, "Image"));
	bl_list(f, 4, "entrypoint", cJSON_GetObjectItemCaseSensitive(cfg,
	    "Entrypoint"));
	bl_list(f, 4, "command", cJSON_GetObjectItemCaseSensitive(cfg, "Cmd"));
	if ((s = bl_str(cfg, "User")) != NULL)
		bl_kv(f, 4, "user", s);
	if ((s = bl_str(cfg, "WorkingDir")) != NULL)
		bl_kv(f, 4, "working_dir", s);
	if ((s = bl_str(cfg, "Hostname")) != NULL)
		bl_kv(f, 4, "hostname", s);
	bl_list(f, 4, "environment", cJSON_GetObjectItemCaseSensitive(cfg,
	    "Env"));
	fprintf(f, "    read_only: %s\n", cJSON_IsTrue(
	    cJSON_GetObjectItemCaseSensitive(hc, "ReadonlyRootfs")) ? "true" :
	    "false");
	bl_list(f, 4, "cap_drop", cJSON_GetObjectItemCaseSensitive(hc,
	    "CapDrop"));
	bl_list(f, 4, "cap_add", cJSON_GetObjectItemCaseSensitive(hc,
	    "CapAdd"));
	bl_list(f, 4, "security_opt", cJSON_GetObjectItemCaseSensitive(hc,
	    "SecurityOpt"));
	bl_list(f, 4, "group_add", cJSON_GetObjectItemCaseSensitive(hc,
	    "GroupAdd"));
	bl_list(f, 4, "dns", cJSON_GetObjectItemCaseSensitive(hc, "Dns"));
	if (bl_num(hc, "Memory") > 0)
		fprintf(f, "    mem_limit: %.0f\n", bl_num(hc, "Memory"));
	if (bl_num(hc, "MemorySwap") > 0)
		fprintf(f, "    memswap_limit: %.0f\n", bl_num(hc,
		    "MemorySwap"));
	if (bl_num(hc, "PidsLimit") > 0)
		fprintf(f, "    pids_limit: %.0f\n", bl_num(hc, "PidsLimit"));
	if (bl_num(hc, "NanoCpus") > 0)
		fprintf(f, "    cpus: %g\n", bl_num(hc, "NanoCpus") / 1e9);
	if (bl_num(hc, "ShmSize") > 0 && bl_num(hc, "ShmSize") != 67108864)
		fprintf(f, "    shm_size: %.0f\n", bl_num(hc, "ShmSize"));
	if ((s = bl_str(hc, "Runtime")) != NULL)
		bl_kv(f, 4, "runtime", s);
	if ((s = bl_str(hc, "IpcMode")) != NULL && strcmp(s, "private") != 0)
		bl_kv(f, 4, "ipc", s);
	if ((s = bl_str(hc, "PidMode")) != NULL)
		bl_kv(f, 4, "pid", s);
	a = cJSON_GetObjectItemCaseSensitive(hc, "Sysctls");
	if (cJSON_IsObject(a) && a->child != NULL) {
		fprintf(f, "    sysctls:\n");
		cJSON_ArrayForEach(it, a)
			if (cJSON_IsString(it))
				bl_kv(f, 6, it->string, it->valuestring);
	}
	a = cJSON_GetObjectItemCaseSensitive(hc, "Tmpfs");
	if (cJSON_IsObject(a) && a->child != NULL) {
		fprintf(f, "    tmpfs:\n");
		cJSON_ArrayForEach(it, a) {
			char *t = xasprintf("%s%s%s", it->string,
			    cJSON_IsString(it) && it->valuestring[0] != '\0' ?
			    ":" : "", cJSON_IsString(it) ? it->valuestring : "");
			char *q = bl_q(t);

			fprintf(f, "      - %s\n", q);
			free(q);
			free(t);
		}
	}
	a = cJSON_GetObjectItemCaseSensitive(hc, "Mounts");
	if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0) {
		fprintf(f, "    volumes:\n");
		cJSON_ArrayForEach(it, a) {
			bool ro = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it,
			    "ReadOnly"));

			fprintf(f, "      - type: bind\n");
			bl_kv(f, 8, "source", bl_mount_dst(b, bl_str(it, "Source"),
			    ro));
			bl_kv(f, 8, "target", bl_str(it, "Target"));
			fprintf(f, "        read_only: %s\n", ro ? "true" : "false");
		}
	}
	if (cJSON_IsObject(nets) && nets->child != NULL) {
		fprintf(f, "    networks:\n");
		cJSON_ArrayForEach(it, nets) {
			const cJSON *al = cJSON_GetObjectItemCaseSensitive(it,
			    "Aliases"), *x;

			fprintf(f, "      %s:\n", bl_net(b, it->string));
			if (bl_fixed_ip(it) != NULL)
				bl_kv(f, 8, "ipv4_address", bl_fixed_ip(it));
			fprintf(f, "        aliases:\n");
			fprintf(f, "          - %s\n", role);
			cJSON_ArrayForEach(x, al) {
				char *q;

				/* the engine's own: the short id, the role */
				if (!cJSON_IsString(x) || (id != NULL &&
				    strncmp(id, x->valuestring, 12) == 0) ||
				    strcmp(x->valuestring, role) == 0)
					continue;
				q = bl_q(x->valuestring);
				fprintf(f, "          - %s\n", q);
				free(q);
			}
		}
	} else
		fprintf(f, "    network_mode: \"none\"\n");
	/* as in an ares without fixed addresses: the agent is created once
	 * the dns has its address */
	if (strcmp(role, "agent") == 0 && !b->dns_fixed)
		fprintf(f, "    depends_on:\n      - dns\n");
}

/* The sample lab: up (not timed), its containers written as the Compose
 * file, down.  -1 (printed). */
static int
bl_sample(struct bl_bench *b, struct docker *d)
{
	char *run = xasprintf("%s/sample", b->dir), *path, *txt;
	const char *up[] = { b->ares, "lab", "up", "--policy", b->policy,
	    "--run", run, NULL };
	const char *down[] = { b->ares, "lab", "down", "--run", run, NULL };
	struct errbuf e = { 0 };
	const cJSON *cs, *it, *nets;
	cJSON *lab = NULL;
	FILE *f = NULL;
	size_t len, k;
	double ms;
	int rc = -1;

	if (bl_run(up, &ms) == -1)
		goto out;
	path = xasprintf("%s/lab.json", run);
	txt = util_read_file(path, 1 << 20, &len, &e);
	free(path);
	lab = txt != NULL ? cJSON_ParseWithLength(txt, len) : NULL;
	free(txt);
	cs = cJSON_GetObjectItemCaseSensitive(lab, "containers");
	nets = cJSON_GetObjectItemCaseSensitive(lab, "networks");
	if (bl_str(lab, "run_id") == NULL || !cJSON_IsObject(cs)) {
		fprintf(stderr, "bench: %s/lab.json: %s\n", run, e.msg[0] ?
		    e.msg : "no run_id or containers");
		goto down;
	}
	b->run_id = xstrdup(bl_str(lab, "run_id"));
	b->file = xasprintf("%s/compose.yaml", b->dir);
	path = xasprintf("%s/mounts", b->dir);
	if (mkdir(path, 0755) == -1 || (f = fopen(b->file, "w")) == NULL) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		free(path);
		goto down;
	}
	free(path);
	fprintf(f, "# generated by bench/lab from the lab of %s (run %s)\n"
	    "services:\n", b->policy, b->run_id);
	{
		const char *dns = bl_str(cJSON_GetObjectItemCaseSensitive(cs,
		    "dns"), "id");
		cJSON *ins = dns != NULL ? docker_container_inspect(d, dns,
		    &e) : NULL;
		const cJSON *n;

		cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(ins, "NetworkSettings"),
		    "Networks"))
			if (bl_fixed_ip(n) != NULL)
				b->dns_fixed = true;
		cJSON_Delete(ins);
	}
	cJSON_ArrayForEach(it, cs) {
		cJSON *ins = docker_container_inspect(d, bl_str(it, "id"), &e);

		if (ins == NULL) {
			fprintf(stderr, "bench: inspect %s: %s\n", it->string,
			    e.msg);
			goto down;
		}
		bl_service(b, f, it->string, ins);
		cJSON_Delete(ins);
	}
	fprintf(f, "networks:\n");
	k = 0;
	cJSON_ArrayForEach(it, nets) {
		fprintf(f, "  %s:\n    driver: bridge\n    internal: true\n"
		    "    driver_opts:\n"
		    "      com.docker.network.bridge.name: \"abl%05u%s%zu\"\n"
		    "      com.docker.network.bridge.inhibit_ipv4: \"true\"\n",
		    it->string, (unsigned)getpid() % 100000, "n", k++);
		if (cJSON_IsString(it) && b->dns_fixed) {
			/* the sample's subnet, as ares asked for it (an ares
			 * without fixed addresses took the engine's pick: so
			 * does Compose) */
			cJSON *ni = docker_network_inspect(d, it->valuestring, &e);
			const cJSON *c = cJSON_GetArrayItem(
			    cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetObjectItemCaseSensitive(ni, "IPAM"),
			    "Config"), 0);

			if (bl_str(c, "Subnet") != NULL) {
				fprintf(f, "    ipam:\n      config:\n");
				fprintf(f, "        - subnet: \"%s\"\n",
				    bl_str(c, "Subnet"));
				if (bl_str(c, "IPRange") != NULL)
					fprintf(f, "          ip_range: \"%s\"\n",
					    bl_str(c, "IPRange"));
			}
			cJSON_Delete(ni);
		}
	}
	rc = 0;
down:
	if (f != NULL && fclose(f) != 0)
		rc = -1;
	if (bl_run(down, &ms) == -1)
		rc = -1;
	if (rc == 0 && bl_mounts_make(b, true) == -1)
		rc = -1;
out:
	cJSON_Delete(lab);
	free(run);
	return rc;
}

/* Nothing labelled label left on the engine?  0, or -1 (printed). */
static int
bl_none_left(struct docker *d, const char *label, const char *who)
{
	struct errbuf e = { 0 };
	cJSON *c = docker_containers_by_label(d, label, &e);
	cJSON *n = c != NULL ? docker_networks_by_label(d, label, &e) : NULL;
	int rc = 0;

	if (n == NULL) {
		fprintf(stderr, "bench: %s: list: %s\n", who, e.msg);
		rc = -1;
	} else if (cJSON_GetArraySize(c) + cJSON_GetArraySize(n) > 0) {
		fprintf(stderr, "bench: %s left %d container(s), %d "
		    "network(s) behind\n", who, cJSON_GetArraySize(c),
		    cJSON_GetArraySize(n));
		rc = -1;
	}
	cJSON_Delete(c);
	cJSON_Delete(n);
	return rc;
}

/* One ares lab up + down into t[0..2] (up, down, both).  -1 (printed). */
static int
bl_ares(struct bl_bench *b, struct docker *d, int i, double t[3])
{
	char *run = xasprintf("%s/runs/%d", b->dir, i), *path, *txt;
	const char *up[] = { b->ares, "lab", "up", "--policy", b->policy,
	    "--run", run, NULL };
	const char *down[] = { b->ares, "lab", "down", "--run", run, NULL };
	struct errbuf e = { 0 };
	char *label = NULL;
	cJSON *lab;
	size_t len;
	int rc = 0;

	if (bl_run(up, &t[0]) == -1) {
		free(run);
		return -1;
	}
	path = xasprintf("%s/lab.json", run);
	txt = util_read_file(path, 1 << 20, &len, &e);
	free(path);
	lab = txt != NULL ? cJSON_ParseWithLength(txt, len) : NULL;
	free(txt);
	if (bl_str(lab, "run_id") != NULL)
		label = xasprintf("ares.run=%s", bl_str(lab, "run_id"));
	cJSON_Delete(lab);
	if (bl_run(down, &t[1]) == -1 || label == NULL ||
	    bl_none_left(d, label, "ares lab down") == -1)
		rc = -1;
	t[2] = t[0] + t[1];
	free(label);
	free(run);
	return rc;
}

/* One docker-compose up -d + down -t 0 into t[0..2].  -1 (printed). */
static int
bl_compose(struct bl_bench *b, struct docker *d, double t[3])
{
	const char *up[] = { b->compose, "-f", b->file, "-p", b->project,
	    "up", "-d", NULL };
	const char *down[] = { b->compose, "-f", b->file, "-p", b->project,
	    "down", "-t", "0", NULL };
	char *label = xasprintf("com.docker.compose.project=%s", b->project);
	int rc = 0;

	if (bl_mounts_make(b, false) == -1) {
		free(label);
		return -1;
	}
	if (bl_run(up, &t[0]) == -1)
		rc = -1;
	if (bl_run(down, &t[1]) == -1 || bl_none_left(d, label,
	    "docker-compose down") == -1)
		rc = -1;
	t[2] = t[0] + t[1];
	free(label);
	return rc;
}

/* Is prog an executable in PATH (or a path to one)? */
static bool
bl_have(const char *prog)
{
	const char *argv[] = { prog, "version", NULL };
	char out[256];
	struct errbuf e = { 0 };

	return util_run(argv, NULL, 30000, out, sizeof out, &e) == 0;
}

int
main(int argc, char **argv)
{
	struct bl_bench b = { .ares = ARES_BUILDDIR "/ares",
	    .policy = ARES_SRCDIR "/policies/default.yaml",
	    .compose = "docker-compose" };
	static const char *const what[3] = { "up", "down", "up + down" };
	char dir[] = "/tmp/ares-bench-lab-XXXXXX";
	double *v[2][3], *ratios;
	int pairs = 7, opt, i, k, nr = 0, n[2] = { 0, 0 }, failed = 0;
	bool keep = false, compose;
	struct errbuf e = { 0 };
	struct docker *d;
	size_t j;

	while ((opt = getopt(argc, argv, "n:p:a:c:k")) != -1) {
		if (opt == 'n')
			pairs = atoi(optarg);
		else if (opt == 'p')
			b.policy = optarg;
		else if (opt == 'a')
			b.ares = optarg;
		else if (opt == 'c')
			b.compose = optarg;
		else if (opt == 'k')
			keep = true;
		else {
			fprintf(stderr, "usage: %s [-n PAIRS] [-p POLICY] "
			    "[-a ARES] [-c DOCKER_COMPOSE] [-k]\n", argv[0]);
			return 2;
		}
	}
	if (pairs < 1 || pairs > 1000 || sodium_init() < 0 ||
	    mkdtemp(dir) == NULL)
		return 2;
	b.dir = dir;
	snprintf(b.project, sizeof b.project, "aresbench%u",
	    (unsigned)getpid());
	d = docker_connect(NULL, &e);
	if (d == NULL) {
		fprintf(stderr, "bench: %s\n", e.msg);
		return 1;
	}
	compose = bl_have(b.compose);
	if (!compose)
		printf("bench/lab: %s is not installed: timing ares alone\n",
		    b.compose);
	for (k = 0; k < 2; k++)
		for (j = 0; j < 3; j++)
			v[k][j] = xcalloc((size_t)pairs, sizeof(double));
	ratios = xcalloc((size_t)pairs, sizeof *ratios);
	if (bl_sample(&b, d) == -1) {
		fprintf(stderr, "bench: the sample lab failed\n");
		return 1;
	}
	printf("bench/lab: %d interleaved pairs, %s (%s)\n  ares: %s lab up, "
	    "lab down\n", pairs, b.policy, b.run_id, b.ares);
	if (compose)
		printf("  compose: %s up -d, down -t 0 of %s\n", b.compose,
		    b.file);
	for (i = 0; i < pairs; i++) {
		double t[2][3] = { { 0 } };
		int ok[2] = { 0, 0 };

		for (k = 0; k < 2; k++) {
			int side = (i % 2) ^ k;   /* ABBA */

			if (side == 0)
				ok[0] = bl_ares(&b, d, i, t[0]) == 0;
			else if (compose)
				ok[1] = bl_compose(&b, d, t[1]) == 0;
		}
		for (k = 0; k < 2; k++) {
			if (!ok[k]) {
				failed += k == 0 || compose;
				continue;
			}
			for (j = 0; j < 3; j++)
				v[k][j][n[k]] = t[k][j];
			n[k]++;
		}
		if (ok[0] && ok[1])
			ratios[nr++] = t[0][2] / t[1][2];
		fprintf(stderr, "bench: pair %d: ares %.0f + %.0f ms", i + 1,
		    t[0][0], t[0][1]);
		if (compose)
			fprintf(stderr, ", compose %.0f + %.0f ms", t[1][0],
			    t[1][1]);
		fprintf(stderr, "\n");
	}
	printf("\n%-12s %4s %12s %12s %12s\n", "median (ms)", "n", what[0],
	    what[1], what[2]);
	printf("%-12s %4d %12.0f %12.0f %12.0f\n", "ares", n[0],
	    bl_median(v[0][0], n[0]), bl_median(v[0][1], n[0]),
	    bl_median(v[0][2], n[0]));
	if (compose) {
		printf("%-12s %4d %12.0f %12.0f %12.0f\n", "compose", n[1],
		    bl_median(v[1][0], n[1]), bl_median(v[1][1], n[1]),
		    bl_median(v[1][2], n[1]));
		printf("\nratio ares / compose of the medians: up %.2f, down "
		    "%.2f, up + down %.2f\n", bl_median(v[0][0], n[0]) /
		    bl_median(v[1][0], n[1]), bl_median(v[0][1], n[0]) /
		    bl_median(v[1][1], n[1]), bl_median(v[0][2], n[0]) /
		    bl_median(v[1][2], n[1]));
		printf("median of the per-pair ratios (up + down): %.2f (%d "
		    "pairs)\n", bl_median(ratios, nr), nr);
	}
	if (failed > 0)
		printf("%d run(s) failed or left objects behind\n", failed);
	for (k = 0; k < 2; k++)
		for (j = 0; j < 3; j++)
			free(v[k][j]);
	free(ratios);
	docker_close(d);
	if (keep)
		printf("kept %s\n", dir);
	else if (util_rm_rf(dir, &e) == -1)
		fprintf(stderr, "bench: %s\n", e.msg);
	for (j = 0; j < b.nm; j++) {
		free(b.m[j].src);
		free(b.m[j].dst);
	}
	free(b.file);
	free(b.run_id);
	return failed > 0 ? 1 : 0;
}
