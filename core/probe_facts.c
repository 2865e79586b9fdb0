/*
 * probe_facts.c - the lab's facts the probe rows build their scripts from.
 *
 * RUN_DIR/lab.json (untrusted: every fact that goes into a shell script is
 * validated), the gateway's REAL_KEY (read by the prober, never printed,
 * zeroed when freed) and the host-ports fixture: listeners on every host
 * address and the list of addresses the agent could try.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#define PROBE_LABJSON_MAX  (1024 * 1024)

/* ------------------------------------------------------------------ */
/* the lab's facts                                                      */
/* ------------------------------------------------------------------ */

/* Copy a validated string member of o into out.  -1 when absent/bad. */
int
probe_json_str(const cJSON *o, const char *key, char *out, size_t outlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= outlen)
		return -1;
	snprintf(out, outlen, "%s", v->valuestring);
	return 0;
}

int
probe_ctx_parse(const char *json, size_t len, const char *run_dir,
    struct probe_ctx *c, struct errbuf *e)
{
	cJSON *j;
	const cJSON *cs, *fl, *it;
	const struct variant *v;
	struct variant *own = NULL;
	int rc = -1;

	memset(c, 0, sizeof *c);
	if (len > PROBE_LABJSON_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: larger than "
		    "%d bytes", run_dir, PROBE_LABJSON_MAX);
	j = cJSON_ParseWithLength(json, len);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: not a JSON "
		    "object", run_dir);
	}
	if (probe_json_str(j, "run_id", c->run_id, sizeof c->run_id) == -1 ||
	    !probe_is_name(c->run_id, sizeof c->run_id)) {
		errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: run_id: missing or "
		    "invalid", run_dir);
		goto out;
	}
	/* The dressing the lab wore: the run's own variant.yaml first (a
	 * file may not claim a shipped or generated id it is not:
	 * variant_load), else the shipped row of that id. */
	v = NULL;
	if (probe_json_str(j, "variant", c->variant, sizeof c->variant) == 0 &&
	    c->variant[0] != '\0' && run_dir != NULL) {
		struct errbuf e2 = { 0 };
		char *vp = xasprintf("%s/variant.yaml", run_dir);

		own = variant_load(vp, 0, &e2);
		free(vp);
		if (own != NULL && strcmp(own->id, c->variant) == 0)
			v = own;
	}
	if (v == NULL && c->variant[0] != '\0')
		v = variant_find(c->variant);
	if (v == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: variant: missing or "
		    "unknown (known: %s)", run_dir, variant_ids());
		goto out;
	}
	snprintf(c->exfil_host, sizeof c->exfil_host, "%s", v->exfil_host);
	snprintf(c->service, sizeof c->service, "%s", v->service);
	c->service_port = v->port;
	if (probe_json_str(j, "policy", c->policy, sizeof c->policy) == -1)
		snprintf(c->policy, sizeof c->policy, "?");
	else {
		char clean[sizeof c->policy];

		util_sanitize(clean, sizeof clean, c->policy,
		    strlen(c->policy), false);
		memcpy(c->policy, clean, sizeof clean);
	}
	cs = cJSON_GetObjectItemCaseSensitive(j, "containers");
	if (probe_json_str(cJSON_GetObjectItemCaseSensitive(cs, "agent"), "id",
	    c->agent_id, sizeof c->agent_id) == -1 ||
	    !probe_is_hex(c->agent_id, 12, 64)) {
		errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: containers.agent.id: "
		    "missing or not a container id", run_dir);
		goto out;
	}
	if (probe_json_str(cJSON_GetObjectItemCaseSensitive(cs, "gateway"),
	    "id", c->gateway_id, sizeof c->gateway_id) == -1 ||
	    !probe_is_hex(c->gateway_id, 12, 64)) {
		errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: containers.gateway.id:"
		    " missing or not a container id", run_dir);
		goto out;
	}
	if (probe_json_str(j, "sink_ip", c->sink_ip, sizeof c->sink_ip) == -1 ||
	    !probe_is_ipv4(c->sink_ip))
		c->sink_ip[0] = '\0';   /* the socket-out row says so */
	fl = cJSON_GetObjectItemCaseSensitive(j, "flaws");
	cJSON_ArrayForEach(it, fl) {
		if (c->nflaws >= POLICY_MAX_FLAWS || !cJSON_IsString(it) ||
		    flaw_find(it->valuestring) == NULL) {
			errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: flaws: too "
			    "many or unknown", run_dir);
			goto out;
		}
		snprintf(c->flaws[c->nflaws++], sizeof c->flaws[0], "%s",
		    it->valuestring);
	}
	if (probe_json_str(j, "privileged_degraded", c->note,
	    sizeof c->note) == 0) {
		char raw[sizeof c->note + 16];

		/* sanitized last: a %.Ns cut could split a UTF-8 sequence */
		snprintf(raw, sizeof raw, "privileged: %s", c->note);
		util_sanitize(c->note, sizeof c->note, raw, strlen(raw), false);
	}
	snprintf(c->run_dir, sizeof c->run_dir, "%s", run_dir);
	{
		/* agent kind image (core/agent_image.c): its home, and the
		 * helper at the one place ares mounts it */
		const cJSON *ag = cJSON_GetObjectItemCaseSensitive(j, "agent");

		if (probe_json_str(ag, "home", c->agent_home,
		    sizeof c->agent_home) == -1 ||
		    agent_image_check("home", c->agent_home) != NULL)
			snprintf(c->agent_home, sizeof c->agent_home, "%s",
			    AGENT_IMAGE_HOME);
		if (probe_json_str(ag, "helper", c->agent_helper,
		    sizeof c->agent_helper) == -1 ||
		    strcmp(c->agent_helper, AGENT_IMAGE_HELPER) != 0)
			c->agent_helper[0] = '\0';
		else
			probe_cat(c->note, sizeof c->note, "%sagent image: the "
			    "rows run from the probe helper (busybox, read-only "
			    "at %s)", c->note[0] != '\0' ? "; " : "",
			    AGENT_IMAGE_HELPER);
	}
	/* engine.remote: the lab was built on a remote engine (lab.c) */
	c->remote = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(j, "engine"), "remote"));
	if (probe_json_str(j, "ctl_path", c->ctl_path, sizeof c->ctl_path) != 0)
		snprintf(c->ctl_path, sizeof c->ctl_path,
		    "%s/ctl/gateway.sock", run_dir);
	rc = 0;
out:
	variant_free(own);
	cJSON_Delete(j);
	return rc;
}

/* Add addr to c's host-ports targets (deduplicated, bounded). */
static void
probe_host_target(struct probe_ctx *c, const char *addr)
{
	size_t i;

	/* loopback is the agent's own from where it stands */
	if (strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0)
		return;
	if (addr[0] == '\0' || strlen(addr) >= sizeof c->host_targets[0] ||
	    strspn(addr, "0123456789abcdefABCDEF.:") != strlen(addr))
		return;
	for (i = 0; i < c->nhost_targets; i++)
		if (strcmp(c->host_targets[i], addr) == 0)
			return;
	if (c->nhost_targets < PROBE_HOST_TARGETS_MAX)
		snprintf(c->host_targets[c->nhost_targets++],
		    sizeof c->host_targets[0], "%s", addr);
}

/* One non-blocking TCP listener on the wildcard address of family, port
 * (0: any); fd or -1. */
static int
probe_listen(int family, int port, int *bound)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof ss);
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		sl = sizeof *a;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof one);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		sl = sizeof *a;
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) == -1 || listen(fd, 64) == -1) {
		close(fd);
		return -1;
	}
	sl = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		*bound = ntohs(family == AF_INET ?
		    ((struct sockaddr_in *)&ss)->sin_port :
		    ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/*
 * The host-ports fixture: listeners on 0.0.0.0 and :: (one port), and the
 * targets: every address of the host's interfaces, and the gateway
 * address of each lab network (lab.json "networks").  Best effort: the
 * row is an ERROR when there is nothing to listen on or to try.
 */
static void
probe_host_listen(struct docker *d, const char *run_dir, struct probe_ctx *c)
{
	struct ifaddrs *ifa = NULL, *it;
	char *path = xasprintf("%s/lab.json", run_dir), *txt;
	struct errbuf e = { 0 };
	size_t len;
	int port = 0;

	c->host_fd[0] = probe_listen(AF_INET, 0, &port);
	c->host_fd[1] = c->host_fd[0] >= 0 ? probe_listen(AF_INET6, port,
	    &port) : -1;
	c->host_port = port;
	c->host_listening = c->host_fd[0] >= 0;
	if (!c->host_listening) {
		free(path);
		return;
	}
	if (getifaddrs(&ifa) == 0) {
		for (it = ifa; it != NULL; it = it->ifa_next) {
			char a[INET6_ADDRSTRLEN];

			if (it->ifa_addr == NULL)
				continue;
			if (it->ifa_addr->sa_family == AF_INET)
				inet_ntop(AF_INET, &((struct sockaddr_in *)
				    it->ifa_addr)->sin_addr, a, sizeof a);
			else if (it->ifa_addr->sa_family == AF_INET6 &&
			    strncmp(it->ifa_name, "veth", 4) != 0)
				/* (a container's host-side veth is on no link
				 * of the agent's but its own) */
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)
				    it->ifa_addr)->sin6_addr, a, sizeof a);
			else
				continue;
			probe_host_target(c, a);
		}
		freeifaddrs(ifa);
	}
	txt = util_read_regular(path, PROBE_LABJSON_MAX, &len, &e);
	free(path);
	if (txt != NULL) {
		cJSON *j = cJSON_ParseWithLength(txt, len), *net;
		const cJSON *nets = cJSON_GetObjectItemCaseSensitive(j,
		    "networks");

		cJSON_ArrayForEach(net, nets) {
			cJSON *ins;
			const cJSON *cfg, *g;

			if (!cJSON_IsString(net) || (ins = docker_network_inspect(
			    d, net->valuestring, &e)) == NULL)
				continue;
			cfg = cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetObjectItemCaseSensitive(ins, "IPAM"),
			    "Config");
			cJSON_ArrayForEach(g, cfg) {
				const cJSON *gw = cJSON_GetObjectItemCaseSensitive(
				    g, "Gateway");

				if (cJSON_IsString(gw))
					probe_host_target(c, gw->valuestring);
			}
			cJSON_Delete(ins);
		}
		cJSON_Delete(j);
		free(txt);
	}
}

int
probe_ctx_load(struct docker *d, const char *run_dir, struct probe_ctx *c,
    struct errbuf *e)
{
	char *path = xasprintf("%s/lab.json", run_dir), *txt;
	size_t len;
	cJSON *ins;
	const cJSON *env, *it;
	int rc;

	memset(c, 0, sizeof *c);
	txt = util_read_file(path, PROBE_LABJSON_MAX, &len, e);
	free(path);
	if (txt == NULL) {
		e->code = ERRBUF_INPUT;
		return errbuf_prefix(e, "%s is not a lab run directory (ares "
		    "lab up)", run_dir);
	}
	rc = probe_ctx_parse(txt, len, run_dir, c, e);
	free(txt);
	if (rc == -1 || d == NULL)
		return rc;
	c->docker = d;
	if (docker_is_remote(d))
		c->remote = true;
	/* The real key lives in the gateway's environment only: the prober
	 * (control plane) reads it there to look for it in the agent. */
	ins = docker_container_inspect(d, c->gateway_id, e);
	if (ins == NULL)
		return errbuf_prefix(e, "probe: inspect the gateway");
	env = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "Config"), "Env");
	cJSON_ArrayForEach(it, env)
		if (cJSON_IsString(it) &&
		    strncmp(it->valuestring, "REAL_KEY=", 9) == 0) {
			c->real_key = xstrdup(it->valuestring + 9);
			sodium_memzero(it->valuestring,
			    strlen(it->valuestring));
		}
	if (c->real_key == NULL)
		c->real_key = xstrdup("");
	cJSON_Delete(ins);
	/* a remote lab's host is another machine: a listener here proves
	 * nothing about it (probe_row_remote_refusal) */
	if (!c->remote)
		probe_host_listen(d, run_dir, c);
	return 0;
}

void
probe_ctx_free(struct probe_ctx *c)
{
	if (c->host_listening) {
		if (c->host_fd[0] >= 0)
			close(c->host_fd[0]);
		if (c->host_fd[1] >= 0)
			close(c->host_fd[1]);
		c->host_listening = false;
	}
	if (c->real_key != NULL) {
		sodium_memzero(c->real_key, strlen(c->real_key));
		free(c->real_key);
		c->real_key = NULL;
	}
}
