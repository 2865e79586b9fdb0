/*
 * lever.c - kill switches.  Every lever follows one protocol (name, fire,
 * verify, optional reset, timestamps) and sits in a const table, so new
 * ones plug in.  A lever counts only once its verification succeeded.
 *
 * This file: the protocol, the Engine API levers (net-disconnect, pause,
 * kill), gateway-deny (prebuilt HTTP/1.1 requests on the gateway's control
 * socket, gwctl.c; on a lab on a remote engine one exec per request in the
 * gateway container, lab_gateway_call) and external levers (a command speaking JSON,
 * docs/levers.md, run by util_proc_run).  The kernel levers
 * (cgroup-freeze, link-down) live in lever_kernel.c.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEVER_GW_TIMEOUT_MS  2000
#define LEVER_EXT_MAX        16       /* interned external levers */
#define LEVER_EXT_ERR_MAX    4096     /* stderr kept from an external lever */

/* ---- pure helpers ------------------------------------------------- */

int
lever_ext_parse(const char *out, size_t len, bool *ok, char *detail,
    size_t detail_max, struct errbuf *e)
{
	const char *nl;
	size_t line_len, i;
	cJSON *j;
	const cJSON *okj, *dj;

	if (detail_max > 0)
		detail[0] = '\0';
	if (len > LEVER_EXT_OUT_MAX)
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever output: "
		    "%zu bytes, more than %d", len, LEVER_EXT_OUT_MAX);
	if (memchr(out, '\0', len) != NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever output: "
		    "contains a NUL byte");
	nl = memchr(out, '\n', len);
	line_len = nl != NULL ? (size_t)(nl - out) : len;
	for (i = line_len; i < len; i++)
		if (out[i] != '\n' && out[i] != '\r' && out[i] != ' ' &&
		    out[i] != '\t')
			return errbuf_set(e, ERRBUF_INTERNAL, "external lever "
			    "output: more than one line (expected one JSON "
			    "object line)");
	if (line_len == 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever output: "
		    "empty (expected one JSON object line)");
	j = cJSON_ParseWithLength(out, line_len);
	if (j == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever output: "
		    "line 1: not a JSON object");
	}
	okj = cJSON_GetObjectItemCaseSensitive(j, "ok");
	dj = cJSON_GetObjectItemCaseSensitive(j, "detail");
	if (!cJSON_IsBool(okj)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever output: "
		    "\"ok\": missing or not a boolean");
	}
	if (dj != NULL && !cJSON_IsString(dj)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever output: "
		    "\"detail\": not a string");
	}
	*ok = cJSON_IsTrue(okj);
	if (dj != NULL && detail_max > 0)
		util_sanitize(detail, detail_max, dj->valuestring,
		    strlen(dj->valuestring), false);
	cJSON_Delete(j);
	return 0;
}

/* ---- gateway-deny: HTTP/1.1 over the control socket ---------------- */

/* The deny probe: a chat request the agent could send. */
static const char lever_gw_probe_body[] = "{\"model\":\"ares-probe\","
    "\"messages\":[{\"role\":\"user\",\"content\":\"ares deny probe\"}]}";

/* Build the gateway requests once (prepare, or lazily). */
static void
lever_gw_build(struct lever_ctx *c)
{
	static const char *const probe = lever_gw_probe_body;

	if (c->gw_deny != NULL)
		return;
	c->gw_deny = gwctl_request("POST", "/control/deny", NULL, "{}",
	    &c->gw_deny_len);
	c->gw_allow = gwctl_request("POST", "/control/allow", NULL, "{}",
	    &c->gw_allow_len);
	c->gw_probe = gwctl_request("POST", "/v1/chat/completions",
	    c->lab->agent_key, probe, &c->gw_probe_len);
	c->gw_probe_fd = -1;
}

/* Send one prebuilt request on fd and read its status line (bounded,
 * LEVER_GW_TIMEOUT_MS).  Closes fd.  The status, or -1 + e. */
static int
lever_gw_exchange(struct lever_ctx *c, int fd, const char *req, size_t len,
    const char *what, struct errbuf *e)
{
	return gwctl_exchange(fd, c->lab->ctl_path, req, len, what,
	    LEVER_GW_TIMEOUT_MS, NULL, 0, e);
}

/*
 * A lab on a remote engine has no host path to the control socket: each
 * request goes through the engine's exec in the gateway container
 * (lab_gateway_call, gwctl_exec_auth), its answer's status checked
 * against want.  0, or -1 + e (what: "deny", "probe", "allow").
 */
static int
lever_gw_remote(struct lever_ctx *c, const char *target, const char *bearer,
    const char *body, int want, const char *what, struct errbuf *e)
{
	int st = lab_gateway_call(c->docker, c->lab, "POST", target, bearer,
	    body, LEVER_GW_TIMEOUT_MS, NULL, e);

	if (st == -1)
		return -1;
	if (st == want)
		return 0;
	if (want == 403)
		return errbuf_set(e, ERRBUF_INTERNAL, "deny not in force: a "
		    "probe request with the agent's key got HTTP %d, not 403",
		    st);
	return errbuf_set(e, ERRBUF_INTERNAL, "gateway refused the %s "
	    "command: HTTP %d", what, st);
}

static int
lever_deny_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	int fd, st;

	(void)l;
	if (c->lab->remote)
		return lever_gw_remote(c, "/control/deny", NULL, "{}", 200,
		    "deny", e);
	lever_gw_build(c);
	fd = gwctl_connect(c->lab->ctl_path, e);
	if (fd == -1)
		return -1;
	/* Connect the probe now so the gateway accepts it while it handles
	 * the deny; verify sends on it once the deny is answered. */
	if (c->gw_probe_fd != -1)
		close(c->gw_probe_fd);
	c->gw_probe_fd = gwctl_connect(c->lab->ctl_path, e);
	st = lever_gw_exchange(c, fd, c->gw_deny, c->gw_deny_len, "deny", e);
	if (st == -1)
		return -1;
	if (st != 200)
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway refused the deny "
		    "command: HTTP %d", st);
	return 0;
}

/* The deny is real only if an agent request through the gateway's chat
 * handler is now refused. */
static int
lever_deny_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	int fd, st;

	(void)l;
	if (c->lab->remote)
		return lever_gw_remote(c, "/v1/chat/completions",
		    c->lab->agent_key, lever_gw_probe_body, 403, "probe", e);
	lever_gw_build(c);
	fd = c->gw_probe_fd;
	c->gw_probe_fd = -1;
	if (fd == -1 && (fd = gwctl_connect(c->lab->ctl_path, e)) == -1)
		return -1;
	st = lever_gw_exchange(c, fd, c->gw_probe, c->gw_probe_len, "probe",
	    e);
	if (st == -1)
		return -1;
	if (st != 403)
		return errbuf_set(e, ERRBUF_INTERNAL, "deny not in force: a "
		    "probe request with the agent's key got HTTP %d, not 403",
		    st);
	return 0;
}

static int
lever_deny_reset(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	int fd, st;

	(void)l;
	if (c->lab->remote)
		return lever_gw_remote(c, "/control/allow", NULL, "{}", 200,
		    "allow", e);
	lever_gw_build(c);
	if ((fd = gwctl_connect(c->lab->ctl_path, e)) == -1)
		return -1;
	st = lever_gw_exchange(c, fd, c->gw_allow, c->gw_allow_len, "allow",
	    e);
	if (st == -1)
		return -1;
	if (st != 200)
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway refused the allow "
		    "command: HTTP %d", st);
	return 0;
}

/* ---- Engine API levers --------------------------------------------- */

static const char *
lever_agent_id(const struct lever_ctx *c)
{
	return c->prepared ? c->agent_id : c->lab->agent.id;
}

/* Cache the network ids of an inspect document into c. */
static void
lever_cache_nets(struct lever_ctx *c, const cJSON *ins)
{
	const cJSON *nets, *it;
	size_t i;

	for (i = 0; i < c->nnets; i++)
		free(c->net_ids[i]);
	c->nnets = 0;
	nets = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "NetworkSettings"),
	    "Networks");
	cJSON_ArrayForEach(it, nets) {
		const cJSON *nid = cJSON_GetObjectItemCaseSensitive(it,
		    "NetworkID");

		if (c->nnets >= sizeof c->net_ids / sizeof c->net_ids[0])
			break;
		if (cJSON_IsString(nid) && nid->valuestring[0] != '\0')
			c->net_ids[c->nnets++] = xstrdup(nid->valuestring);
		else if (it->string != NULL)
			c->net_ids[c->nnets++] = xstrdup(it->string);
	}
}

static int
lever_disconnect_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	size_t i;

	(void)l;
	if (!c->prepared) {
		cJSON *ins = docker_container_inspect(c->docker,
		    lever_agent_id(c), e);

		if (ins == NULL)
			return -1;
		lever_cache_nets(c, ins);
		cJSON_Delete(ins);
	}
	for (i = 0; i < c->nnets; i++)
		if (docker_network_disconnect(c->docker, c->net_ids[i],
		    lever_agent_id(c), true, e) == -1)
			return -1;
	return 0;
}

static int
lever_disconnect_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	cJSON *ins = docker_container_inspect(c->docker, lever_agent_id(c), e);
	size_t n;

	(void)l;
	if (ins == NULL)
		return -1;
	n = docker_inspect_network_count(ins);
	cJSON_Delete(ins);
	if (n != 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "inspect still shows %zu "
		    "network(s) on the agent", n);
	return 0;
}

/* Reconnect the networks cached at prepare (aliases are not restored). */
static int
lever_disconnect_reset(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	size_t i;

	(void)l;
	for (i = 0; i < c->nnets; i++)
		if (docker_network_connect(c->docker, c->net_ids[i],
		    lever_agent_id(c), NULL, e) == -1)
			return -1;
	return 0;
}

static int
lever_pause_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return docker_container_pause(c->docker, lever_agent_id(c), e);
}

/*
 * Poll inspect of the agent every step_us until want(inspect) holds or
 * timeout_ns passes.  Returns the last inspect document (caller deletes)
 * with *held set, or NULL + e when inspect itself failed.
 */
static cJSON *
lever_inspect_until(struct lever_ctx *c, bool (*want)(const cJSON *),
    uint64_t timeout_ns, unsigned step_us, bool *held, struct errbuf *e)
{
	uint64_t deadline = util_mono_ns() + timeout_ns;

	for (;;) {
		cJSON *ins = docker_container_inspect(c->docker,
		    lever_agent_id(c), e);

		if (ins == NULL)
			return NULL;
		*held = want(ins);
		if (*held || util_mono_ns() > deadline)
			return ins;
		cJSON_Delete(ins);
		usleep(step_us);
	}
}

/* State.Restarting: a container the engine is restarting is not "not
 * running" for good. */
static bool
lever_is_restarting(const cJSON *ins)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "State"), "Restarting");

	return !cJSON_IsFalse(r);   /* missing counts as restarting */
}

/* Neither running nor paused nor restarting: the agent has exited. */
static bool
lever_is_gone(const cJSON *ins)
{
	return !docker_inspect_running(ins) && !docker_inspect_paused(ins) &&
	    !lever_is_restarting(ins);
}

/* Not running and not restarting (a kill landed). */
static bool
lever_is_stopped(const cJSON *ins)
{
	return !docker_inspect_running(ins) && !lever_is_restarting(ins);
}

/* Paused, or gone (then pausing has nothing left to hold: decided, no
 * further polling). */
static bool
lever_is_paused_or_gone(const cJSON *ins)
{
	return docker_inspect_paused(ins) || lever_is_gone(ins);
}

/* The engine records State.Paused from an asynchronous containerd event:
 * poll inspect (bounded) until it shows the pause.  An agent that stopped
 * meanwhile ends the polling at once: that is a failed pause, which
 * lever_pull then confirms as "already stopped". */
static int
lever_pause_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	bool held, paused;
	cJSON *ins = lever_inspect_until(c, lever_is_paused_or_gone,
	    2000000000ull, 1000, &held, e);

	(void)l;
	if (ins == NULL)
		return -1;
	paused = docker_inspect_paused(ins);
	cJSON_Delete(ins);
	if (held && !paused)
		return errbuf_set(e, ERRBUF_INTERNAL, "inspect shows the agent "
		    "not running (nothing to pause)");
	if (!paused)
		return errbuf_set(e, ERRBUF_INTERNAL, "inspect shows the agent "
		    "not paused (State.Paused false) 2 s after the pause");
	return 0;
}

static int
lever_pause_reset(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return docker_container_unpause(c->docker, lever_agent_id(c), e);
}

static int
lever_kill_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return docker_container_kill(c->docker, lever_agent_id(c), "SIGKILL",
	    e);
}

static int
lever_kill_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	bool stopped;
	/* Docker may answer the kill before the process is reaped. */
	cJSON *ins = lever_inspect_until(c, lever_is_stopped, 2000000000ull,
	    1000, &stopped, e);

	(void)l;
	if (ins == NULL)
		return -1;
	cJSON_Delete(ins);
	if (!stopped)
		return errbuf_set(e, ERRBUF_INTERNAL, "inspect still shows the "
		    "agent running 2 s after the kill");
	return 0;
}

/* ---- external levers ----------------------------------------------- */

/* The JSON handed to an external lever on stdin.  Caller frees. */
static char *
lever_ext_input(const struct lever_ctx *c, const char *op)
{
	cJSON *j = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(j, "run_id", c->lab->run_id);
	cJSON_AddStringToObject(j, "run_dir", c->lab->run_dir);
	cJSON_AddStringToObject(j, "container_id", lever_agent_id(c));
	cJSON_AddStringToObject(j, "container_name",
	    c->lab->agent.name != NULL ? c->lab->agent.name : "");
	cJSON_AddNumberToObject(j, "agent_pid", c->prepared ? c->agent_pid :
	    0);
	cJSON_AddStringToObject(j, "lever", op);
	s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (s == NULL)
		util_fatal("cJSON_PrintUnformatted failed");
	return s;
}

/*
 * What an external lever's run says (p, finished): 0 when it exited 0 and
 * answered ok:true; -1 + e otherwise, naming path and op.  detail gets the
 * lever's own detail (also when it failed, if it gave one).
 */
static int
lever_ext_verdict(const struct util_proc *p, const char *path,
    const char *op, char *detail, size_t detail_max, struct errbuf *e)
{
	int status = p->status;
	bool ok = false;

	if (p->timed_out)
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever %s %s: "
		    "no answer within %d ms (process group killed)", path, op,
		    LEVER_EXT_TIMEOUT_MS);
	if (p->out_over)
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever %s %s: "
		    "more than %d bytes on stdout", path, op,
		    LEVER_EXT_OUT_MAX);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char clean[160];

		util_sanitize(clean, sizeof clean, p->err, p->err_len, false);
		if (status != -1 && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 127)
			errbuf_set(e, ERRBUF_INTERNAL, "external lever %s %s: "
			    "cannot execute it (exit 127) %s", path, op, clean);
		else if (status != -1 && WIFSIGNALED(status))
			errbuf_set(e, ERRBUF_INTERNAL, "external lever %s %s: "
			    "killed by signal %d %s", path, op,
			    WTERMSIG(status), clean);
		else
			errbuf_set(e, ERRBUF_INTERNAL, "external lever %s %s: "
			    "exit status %d %s", path, op, status == -1 ? -1 :
			    WEXITSTATUS(status), clean);
		/* Keep the lever's own words if it gave any. */
		(void)lever_ext_parse(p->out, p->out_len, &ok, detail,
		    detail_max, &(struct errbuf){ 0 });
		return -1;
	}
	if (lever_ext_parse(p->out, p->out_len, &ok, detail, detail_max,
	    e) == -1)
		return errbuf_prefix(e, "%s %s", path, op);
	if (!ok)
		return errbuf_set(e, ERRBUF_INTERNAL, "external lever %s %s "
		    "answered ok:false: %s", path, op, detail);
	return 0;
}

/*
 * Run "<path> <op>" (no shell; util_proc_run) with the context JSON on
 * stdin, in its own process group, LEVER_EXT_TIMEOUT_MS at most (then the
 * group is killed), stdout bounded to LEVER_EXT_OUT_MAX, and only PATH and
 * DOCKER_HOST in its environment.  0 when it exited 0 and answered
 * ok:true; -1 + e otherwise.  detail gets the lever's own detail.
 */
static int
lever_ext_run(struct lever_ctx *c, const char *path, const char *op,
    char *detail, size_t detail_max, struct errbuf *e)
{
	const char *dh = getenv("DOCKER_HOST");
	char *dhenv = dh != NULL ? xasprintf("DOCKER_HOST=%s", dh) : NULL;
	const char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", dhenv,
	    NULL };
	const char *argv[] = { path, op, NULL };
	char *input = lever_ext_input(c, op);
	char *obuf = xmalloc(LEVER_EXT_OUT_MAX + 1), ebuf[LEVER_EXT_ERR_MAX + 1];
	struct util_proc p = {
		.argv = argv,
		.env = envp,
		.input = input,
		.input_len = strlen(input),
		.timeout_ms = LEVER_EXT_TIMEOUT_MS,
		.own_group = true,
		.out = obuf,
		.out_max = LEVER_EXT_OUT_MAX,
		.err = ebuf,
		.err_max = LEVER_EXT_ERR_MAX,
	};
	int rc = -1;

	detail[0] = '\0';
	if (util_proc_run(&p, e) == -1)
		errbuf_set(e, ERRBUF_INTERNAL, "external lever %s: %s: %s", path,
		    p.failed, strerror(p.fail_errno));
	else
		rc = lever_ext_verdict(&p, path, op, detail, detail_max, e);
	free(input);
	free(obuf);
	free(dhenv);
	return rc;
}

static int
lever_ext_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	char detail[200];

	return lever_ext_run(c, l->arg, "fire", detail, sizeof detail, e);
}

static int
lever_ext_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	char detail[200];

	return lever_ext_run(c, l->arg, "verify", detail, sizeof detail, e);
}

/* ---- the table ----------------------------------------------------- */

static const struct lever_entry lever_gateway_deny = {
	.name = "gateway-deny",
	.summary = "the gateway refuses every model call of the agent "
	    "(probe with the agent's key answered 403)",
	.fire = lever_deny_fire,
	.verify = lever_deny_verify,
	.reset = lever_deny_reset,
	.cuts = LEVER_CUTS_MODEL,
	.cuts_off = false,
};
static const struct lever_entry lever_net_disconnect = {
	.name = "net-disconnect",
	.summary = "detach the agent from every network (Engine API; inspect "
	    "shows no network)",
	.fire = lever_disconnect_fire,
	.verify = lever_disconnect_verify,
	.reset = lever_disconnect_reset,
	.cuts = LEVER_CUTS_MODEL | LEVER_CUTS_NETWORK,
	.cuts_off = true,
};
static const struct lever_entry lever_pause = {
	.name = "pause",
	.summary = "freeze the agent's processes (Engine API pause; inspect "
	    "shows State.Paused)",
	.fire = lever_pause_fire,
	.verify = lever_pause_verify,
	.reset = lever_pause_reset,
	.cuts = LEVER_CUTS_ALL,
	.cuts_off = true,
	.freezes = true,
};
static const struct lever_entry lever_kill = {
	.name = "kill",
	.summary = "SIGKILL the agent container (Engine API; inspect shows it "
	    "not running)",
	.fire = lever_kill_fire,
	.verify = lever_kill_verify,
	.reset = NULL,
	.cuts = LEVER_CUTS_ALL,
	.cuts_off = true,
};

const struct lever_entry *const lever_table[] = {
	&lever_gateway_deny,
	&lever_net_disconnect,
	&lever_pause,
	&lever_kill,
	&lever_cgroup_freeze,
	&lever_link_down,
	NULL,
};

/* Interned external levers: entries and names live until exit. */
static pthread_mutex_t lever_ext_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lever_entry lever_ext_entries[LEVER_EXT_MAX];
static size_t lever_ext_count;

/* "external:/abs/path": absolute, no "..", an executable regular file. */
static const struct lever_entry *
lever_find_external(const char *name)
{
	const char *path = name + strlen(LEVER_EXTERNAL_PREFIX);
	const struct lever_entry *found = NULL;
	struct stat st;
	size_t i;

	if (strlen(name) >= LEVER_NAME_MAX || path[0] != '/' ||
	    strstr(path, "/../") != NULL || stat(path, &st) == -1 ||
	    !S_ISREG(st.st_mode) || access(path, X_OK) == -1)
		return NULL;
	pthread_mutex_lock(&lever_ext_lock);
	for (i = 0; i < lever_ext_count; i++)
		if (strcmp(lever_ext_entries[i].name, name) == 0)
			found = &lever_ext_entries[i];
	if (found == NULL && lever_ext_count < LEVER_EXT_MAX) {
		struct lever_entry *x = &lever_ext_entries[lever_ext_count];
		char *n = xstrdup(name);

		x->name = n;
		x->arg = n + strlen(LEVER_EXTERNAL_PREFIX);
		x->summary = "external lever (its own JSON verdict)";
		x->fire = lever_ext_fire;
		x->verify = lever_ext_verify;
		x->reset = NULL;
		x->cuts_off = true;
		found = x;
		lever_ext_count++;
	}
	pthread_mutex_unlock(&lever_ext_lock);
	return found;
}

int
lever_cuts(const char *name, bool *cuts_off, unsigned *cuts)
{
	size_t i;

	if (name == NULL)
		return -1;
	if (strncmp(name, LEVER_EXTERNAL_PREFIX,
	    strlen(LEVER_EXTERNAL_PREFIX)) == 0) {
		/* its own verdict: cuts the agent off, no channel named */
		*cuts_off = true;
		*cuts = 0;
		return 0;
	}
	for (i = 0; lever_table[i] != NULL; i++)
		if (strcmp(lever_table[i]->name, name) == 0) {
			*cuts_off = lever_table[i]->cuts_off;
			*cuts = lever_table[i]->cuts;
			return 0;
		}
	return -1;
}

static char lever_names[512];
static pthread_once_t lever_names_once = PTHREAD_ONCE_INIT;

static void
lever_names_init(void)
{
	size_t i, used = 0;

	for (i = 0; lever_table[i] != NULL; i++)
		used += (size_t)snprintf(lever_names + used,
		    sizeof lever_names - used, "%s, ", lever_table[i]->name);
	snprintf(lever_names + used, sizeof lever_names - used,
	    LEVER_EXTERNAL_PREFIX "/abs/path");
}

const char *
lever_known_names(void)
{
	pthread_once(&lever_names_once, lever_names_init);
	return lever_names;
}

const struct lever_entry *
lever_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	if (strncmp(name, LEVER_EXTERNAL_PREFIX,
	    strlen(LEVER_EXTERNAL_PREFIX)) == 0)
		return lever_find_external(name);
	for (i = 0; lever_table[i] != NULL; i++)
		if (strcmp(lever_table[i]->name, name) == 0)
			return lever_table[i];
	return NULL;
}

/*
 * A cut-off lever that could not act because the agent had already
 * stopped (e.g. it exited on the gateway's 403 a moment before pause or
 * kill): if inspect confirms the container is not running, the agent is
 * cut off, which is what the lever exists to prove.  Records that as the
 * verification (with its own detail) and returns true; false otherwise.
 */
static bool
lever_agent_gone(const struct lever_entry *l, struct lever_ctx *c,
    struct lever_result *r)
{
	struct errbuf e = { 0 };
	const cJSON *st, *code;
	cJSON *ins;
	bool gone;

	if (!l->cuts_off || c->docker == NULL || c->lab == NULL ||
	    c->lab->agent.id == NULL)
		return false;
	/* The runtime may already refuse ("container not running") while
	 * the engine's state still says running: give it up to a second. */
	ins = lever_inspect_until(c, lever_is_gone, 1000000000ull, 20000,
	    &gone, &e);
	if (ins == NULL)
		return false;
	st = cJSON_GetObjectItemCaseSensitive(ins, "State");
	code = cJSON_GetObjectItemCaseSensitive(st, "ExitCode");
	if (gone) {
		r->verified_ns = util_mono_ns();
		r->verified = true;
		snprintf(r->detail, sizeof r->detail, "the agent had already "
		    "stopped: inspect shows it not running (exit code %d); "
		    "nothing left to %s", cJSON_IsNumber(code) ?
		    code->valueint : -1, l->name);
	}
	cJSON_Delete(ins);
	return gone;
}

int
lever_pull(const struct lever_entry *l, struct lever_ctx *c,
    struct lever_result *r)
{
	struct errbuf e = { 0 };

	memset(r, 0, sizeof *r);
	if (l == NULL) {
		snprintf(r->detail, sizeof r->detail, "unknown lever");
		return -1;
	}
	snprintf(r->name, sizeof r->name, "%s", l->name);
	r->fired_ns = util_mono_ns();
	if (l->fire(c, l, &e) == -1) {
		if (lever_agent_gone(l, c, r))
			return 0;
		snprintf(r->detail, sizeof r->detail, "fire failed: %.230s",
		    e.msg);
		return -1;
	}
	r->fired = true;
	if (l->verify(c, l, &e) == -1) {
		if (lever_agent_gone(l, c, r))
			return 0;
		snprintf(r->detail, sizeof r->detail, "verify failed: %.230s",
		    e.msg);
		return -1;
	}
	r->verified_ns = util_mono_ns();
	r->verified = true;
	snprintf(r->detail, sizeof r->detail, "%s", l->summary);
	return 0;
}

int
lever_reset(const struct lever_entry *l, struct lever_ctx *c,
    struct errbuf *e)
{
	if (l->reset == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "lever %s cannot be undone",
		    l->name);
	return l->reset(c, l, e);
}

int
lever_ctx_prepare(struct lever_ctx *c, struct errbuf *e)
{
	cJSON *ins;
	struct errbuf ke = { 0 };

	lever_gw_build(c);
	/* memory locked, this thread's stack touched: not on the kill path */
	c->mlock = lever_rt_prepare();
	ins = docker_container_inspect(c->docker, c->lab->agent.id, e);
	if (ins == NULL)
		return errbuf_prefix(e, "levers: prepare");
	/* every lever names the agent by this Id (request paths, and the
	 * local cgroup fallback's path): the engine's word, checked */
	if (!docker_id_valid(util_json_str(ins, "Id", ""))) {
		cJSON_Delete(ins);
		return errbuf_set(e, ERRBUF_ENGINE, "levers: prepare: the "
		    "agent's inspect answered an Id that is not 64 lowercase "
		    "hex digits");
	}
	snprintf(c->agent_id, sizeof c->agent_id, "%s",
	    util_json_str(ins, "Id", ""));
	c->agent_pid = docker_inspect_pid(ins);
	lever_cache_nets(c, ins);
	cJSON_Delete(ins);
	c->netns_fd = -1;
	c->prepared = true;
	if (lever_kernel_prepare(c, &ke) == -1) {
		free(c->kernel_why);
		c->kernel_why = xstrdup(ke.msg);
	}
	return 0;
}

void
lever_ctx_release(struct lever_ctx *c)
{
	size_t i;

	if (c->prepared)
		lever_kernel_release(c);
	if (c->gw_deny != NULL && c->gw_probe_fd != -1)
		close(c->gw_probe_fd);
	c->gw_probe_fd = -1;
	free(c->gw_deny);
	free(c->gw_allow);
	if (c->gw_probe != NULL)
		memset(c->gw_probe, 0, c->gw_probe_len);   /* holds the key */
	free(c->gw_probe);
	c->gw_deny = c->gw_allow = c->gw_probe = NULL;
	for (i = 0; i < c->nnets; i++)
		free(c->net_ids[i]);
	c->nnets = 0;
	free(c->kernel_why);
	c->kernel_why = NULL;
	c->prepared = false;
}
