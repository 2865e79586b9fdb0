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

/*
 * The agent's runtime for policy p checked against the engine (GET
 * /info) into agent, the engine's default (every other role's) into
 * dflt; each buffer LAB_RUNTIME_MAX bytes.  -1 + e: the engine did not
 * answer (its error), or it lacks the runtime (lab_runtime_resolve's
 * error, prefixed with the policy file).
 */
int
lab_runtime_check(struct docker *d, const struct policy *p, char *agent,
    char *dflt, struct errbuf *e)
{
	cJSON *info = docker_info(d, e);
	int rc;

	if (info == NULL)
		return errbuf_prefix(e, "lab: runtime");
	(void)lab_runtime_resolve(info, NULL, dflt, LAB_RUNTIME_MAX, e);
	rc = lab_runtime_resolve(info, p->runtime, agent, LAB_RUNTIME_MAX, e);
	cJSON_Delete(info);
	if (rc == -1)
		return errbuf_prefix(e, "%s", p->path);
	return 0;
}

/* The agent's spec under policy runtime: (internal.h). */
void
lab_runtime_spec(const struct lab *lab, const struct policy *p,
    struct docker_container_spec *s)
{
	if (p->runtime == NULL)
		return;
	s->runtime = p->runtime;
	if (lab->runtime_default == NULL ||
	    strcmp(p->runtime, lab->runtime_default) != 0)
		s->pids_limit = LAB_AGENT_PIDS_SANDBOX;
}
