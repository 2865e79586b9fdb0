/*
 * lab_runtime.c - the agent's container runtime (policy runtime:).
 *
 * The policy may put the agent under another OCI runtime than the
 * engine's default, e.g. runsc (gVisor: a user-space kernel between the
 * agent and the host).  Only the agent follows it: every other role is
 * ares's own trusted code, stays on the engine's default runtime and
 * keeps its unix sockets on the run's bind mounts (docs/lab.md).
 *
 * Before anything of the lab is created the wanted runtime is looked up
 * in the engine's runtimes (GET /info .Runtimes): a missing one is an
 * input error that says how to register it.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RUNTIME_NAME_MAX (LAB_RUNTIME_MAX - 1)  /* a name from /info */
#define RUNTIME_KNOWN_MAX 512   /* "runc, runsc, ..." in messages */

/* Whether s is a runtime name we record: 1..RUNTIME_NAME_MAX bytes of
 * [A-Za-z0-9._-] (the engine's answer is bounded here, not trusted). */
static bool
lab_runtime_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= RUNTIME_NAME_MAX && strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == n;
}

/*
 * Pure (internal.h): from a GET /info answer, the runtime the agent runs
 * under.  want NULL: the engine's DefaultRuntime (else "runc").  want
 * set: it must be a key of .Runtimes.  Fills out (a name of at most
 * RUNTIME_NAME_MAX bytes).  -1 + e (ERRBUF_INPUT naming the missing
 * runtime, the ones the engine has, and how to register it).
 */
int
lab_runtime_resolve(const cJSON *info, const char *want, char *out,
    size_t outlen, struct errbuf *e)
{
	const cJSON *rts = cJSON_GetObjectItemCaseSensitive(info, "Runtimes");
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(info,
	    "DefaultRuntime");
	const cJSON *r;
	char known[RUNTIME_KNOWN_MAX] = "";
	size_t used = 0;

	if (want == NULL) {
		snprintf(out, outlen, "%s", cJSON_IsString(def) &&
		    lab_runtime_name_ok(def->valuestring) ?
		    def->valuestring : "runc");
		return 0;
	}
	if (!cJSON_IsObject(rts))
		rts = NULL;
	cJSON_ArrayForEach(r, rts) {
		if (r->string == NULL || !lab_runtime_name_ok(r->string))
			continue;
		if (strcmp(r->string, want) == 0) {
			snprintf(out, outlen, "%s", want);
			return 0;
		}
		if (used < sizeof known)
			used += (size_t)snprintf(known + used, sizeof known -
			    used, "%s%s", used ? ", " : "", r->string);
	}
	return errbuf_set(e, ERRBUF_INPUT, "runtime: the container engine "
	    "has no runtime '%s' (it has: %s).  Register it in the daemon "
	    "configuration (/etc/docker/daemon.json, or dockerd "
	    "--config-file FILE): {\"runtimes\": {\"%s\": {\"path\": "
	    "\"/usr/bin/%s\", \"runtimeArgs\": [...]}}} (gVisor's runsc "
	    "needs \"runtimeArgs\": [\"--platform=ptrace\", "
	    "\"--network=host\"] on most machines), then restart dockerd; "
	    "see docs/policy.md", want, known[0] ? known : "none listed",
	    want, want);
}

/* Whether a runtime's path (from /info) is runc's: its base name is
 * "runc".  Anything else (runsc, kata, crun...) is handled as a sandbox:
 * the host's view of its processes is not the agent's. */
static bool
lab_runtime_path_is_runc(const cJSON *info, const char *name)
{
	const cJSON *rts = cJSON_GetObjectItemCaseSensitive(info, "Runtimes");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(rts, name);
	const char *path = util_json_str(r, "path", NULL), *base;

	if (path == NULL)
		return strcmp(name, "runc") == 0;
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	return strcmp(base, "runc") == 0;
}

/*
 * The agent's runtime for policy p checked against the engine (GET
 * /info) into agent, the engine's default (every other role's) into
 * dflt; each buffer LAB_RUNTIME_MAX bytes; *sandbox: the agent's runtime
 * is not runc (lab_runtime_path_is_runc).  -1 + e: the engine did not
 * answer (its error), or it lacks the runtime (lab_runtime_resolve's
 * error, prefixed with the policy file).
 */
int
lab_runtime_check(struct docker *d, const struct policy *p, char *agent,
    char *dflt, bool *sandbox, struct errbuf *e)
{
	cJSON *info = docker_info(d, e);
	int rc;

	if (info == NULL)
		return errbuf_prefix(e, "lab: runtime");
	(void)lab_runtime_resolve(info, NULL, dflt, LAB_RUNTIME_MAX, e);
	rc = lab_runtime_resolve(info, p->runtime, agent, LAB_RUNTIME_MAX, e);
	*sandbox = rc == 0 && !lab_runtime_path_is_runc(info, agent);
	cJSON_Delete(info);
	if (rc == -1)
		return errbuf_prefix(e, "%s", p->path);
	return 0;
}

/* The agent's spec under policy runtime: (internal.h); a sandbox (even
 * the engine's default one) gets the larger pids bound. */
void
lab_runtime_spec(const struct lab *lab, const struct policy *p,
    struct docker_container_spec *s)
{
	if (p->runtime != NULL)
		s->runtime = p->runtime;
	if (lab->runtime_sandbox)
		s->pids_limit = LAB_AGENT_PIDS_SANDBOX;
}

/*
 * Pure (internal.h): busybox `ps -o pid,args` output after a first line
 * "@self PID" (the pid of ps itself).  Calls each(ctx, pid, cmd) for every
 * process but pid 1 (the container's init: the agent the engine started)
 * and ps itself; lines are cut at 1024 bytes.  -1 + e when the header or
 * the self line is missing or a line does not start with a pid.
 */
int
lab_runtime_ps_parse(const char *out, size_t len,
    void (*each)(void *ctx, const char *pid, const char *cmd), void *ctx,
    struct errbuf *e)
{
	char line[1024], self[24] = "";
	size_t pos = 0, n;
	bool header = false;

	while (pos < len) {
		const char *nl = memchr(out + pos, '\n', len - pos);
		size_t ll = nl != NULL ? (size_t)(nl - (out + pos)) : len - pos;
		char *p, *cmd;

		n = ll < sizeof line - 1 ? ll : sizeof line - 1;
		memcpy(line, out + pos, n);
		line[n] = '\0';
		pos += ll + (nl != NULL ? 1 : 0);
		if (self[0] == '\0') {
			if (strncmp(line, "@self ", 6) != 0 || strlen(line + 6) >=
			    sizeof self || line[6] == '\0' || strspn(line + 6,
			    "0123456789") != strlen(line + 6))
				return errbuf_set(e, ERRBUF_INTERNAL, "ps in the "
				    "agent: no @self line");
			snprintf(self, sizeof self, "%s", line + 6);
			continue;
		}
		p = line + strspn(line, " \t");
		if (!header) {
			if (strncasecmp(p, "PID", 3) != 0)
				return errbuf_set(e, ERRBUF_INTERNAL, "ps in the "
				    "agent: no PID header");
			header = true;
			continue;
		}
		if (*p == '\0')
			continue;
		n = strspn(p, "0123456789");
		if (n == 0 || n > 20 || (p[n] != ' ' && p[n] != '\t' &&
		    p[n] != '\0'))
			return errbuf_set(e, ERRBUF_INTERNAL, "ps in the agent: "
			    "a line without a pid");
		cmd = p + n;
		if (*cmd != '\0')
			*cmd++ = '\0';
		cmd += strspn(cmd, " \t");
		if (strcmp(p, "1") == 0 || strcmp(p, self) == 0)
			continue;
		each(ctx, p, cmd);
	}
	if (!header)
		return errbuf_set(e, ERRBUF_INTERNAL, "ps in the agent: no PID "
		    "header");
	return 0;
}

/*
 * The processes of a sandboxed agent, from inside its container (internal.h):
 * the engine's /top lists host processes whose pids happen to equal the
 * sandbox's own, so it says nothing about the agent there.  /bin/sh
 * prints its pid and execs /bin/ps (both from the read-only lab image);
 * each process but the agent (pid 1) and ps goes to each().  -1 + e when
 * the exec fails or ps does not answer as expected (the caller fails
 * closed).
 */
int
lab_runtime_ps(struct docker *d, const struct lab *lab,
    void (*each)(void *ctx, const char *pid, const char *cmd), void *ctx,
    struct errbuf *e)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo \"@self $$\"; exec /bin/ps -o pid,args", NULL };
	struct docker_exec_result x = { 0 };
	int rc;

	if (docker_exec(d, lab->agent.id, argv, NULL, 64 * 1024, &x, e) == -1)
		return errbuf_prefix(e, "ps in the agent");
	if (x.exit_code != 0 || x.truncated) {
		rc = errbuf_set(e, ERRBUF_INTERNAL, "ps in the agent: exit %d%s",
		    x.exit_code, x.truncated ? " (output cut)" : "");
		docker_exec_result_free(&x);
		return rc;
	}
	rc = lab_runtime_ps_parse(x.out != NULL ? x.out : "", x.out_len, each,
	    ctx, e);
	docker_exec_result_free(&x);
	return rc;
}
