/*
 * lever.c - kill switches.  Every lever follows one protocol (name, fire,
 * verify, timestamps) and sits in a const table, so new ones plug in.  A
 * lever counts only once its verification succeeded.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

/* Discard a response body (bounded by the caller's timeout). */
static size_t
lever_discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

/*
 * One HTTP request to the gateway over its control socket.  Returns the
 * HTTP status, or -1 + e on transport failure.
 */
static long
lever_gateway_call(struct lever_ctx *c, const char *path, const char *auth,
    const char *body, struct errbuf *e)
{
	struct curl_slist *hdrs = NULL;
	CURL *h = c->gateway_http;
	char *url, *authhdr = NULL;
	long status = 0;
	CURLcode rc;

	if (h == NULL) {
		h = curl_easy_init();
		if (h == NULL)
			util_fatal("curl_easy_init failed");
		c->gateway_http = h;
	}
	curl_easy_reset(h);
	url = xasprintf("http://gateway%s", path);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	if (auth != NULL) {
		authhdr = xasprintf("Authorization: Bearer %s", auth);
		hdrs = curl_slist_append(hdrs, authhdr);
	}
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->lab->ctl_path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, lever_discard);
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdrs);
	if (authhdr != NULL) {
		memset(authhdr, 0, strlen(authhdr));
		free(authhdr);
	}
	free(url);
	if (rc != CURLE_OK) {
		errbuf_set(e, ERRBUF_INTERNAL, "gateway %s via %s: %s", path,
		    c->lab->ctl_path, curl_easy_strerror(rc));
		return -1;
	}
	return status;
}

static int
lever_deny_fire(struct lever_ctx *c, struct errbuf *e)
{
	long st = lever_gateway_call(c, "/control/deny", NULL, "{}", e);

	if (st == -1)
		return -1;
	if (st != 200)
		return errbuf_set(e, ERRBUF_INTERNAL, "gateway refused the deny "
		    "command: HTTP %ld", st);
	return 0;
}

/* The deny is real only if an agent request is now refused. */
static int
lever_deny_verify(struct lever_ctx *c, struct errbuf *e)
{
	static const char probe[] = "{\"model\":\"ares-probe\",\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"ares deny probe\"}]}";
	long st = lever_gateway_call(c, "/v1/chat/completions",
	    c->lab->agent_key, probe, e);

	if (st == -1)
		return -1;
	if (st != 403)
		return errbuf_set(e, ERRBUF_INTERNAL, "deny not in force: a "
		    "probe request with the agent's key got HTTP %ld, not 403",
		    st);
	return 0;
}

static int
lever_disconnect_fire(struct lever_ctx *c, struct errbuf *e)
{
	cJSON *ins, *nets, *it;
	int rc = 0;

	ins = docker_container_inspect(c->docker, c->lab->agent.id, e);
	if (ins == NULL)
		return -1;
	nets = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "NetworkSettings"),
	    "Networks");
	cJSON_ArrayForEach(it, nets) {
		if (it->string == NULL)
			continue;
		if (docker_network_disconnect(c->docker, it->string,
		    c->lab->agent.id, true, e) == -1) {
			rc = -1;
			break;
		}
	}
	cJSON_Delete(ins);
	return rc;
}

static int
lever_disconnect_verify(struct lever_ctx *c, struct errbuf *e)
{
	cJSON *ins = docker_container_inspect(c->docker, c->lab->agent.id, e);
	size_t n;

	if (ins == NULL)
		return -1;
	n = docker_inspect_network_count(ins);
	cJSON_Delete(ins);
	if (n != 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "inspect still shows %zu "
		    "network(s) on the agent", n);
	return 0;
}

static int
lever_pause_fire(struct lever_ctx *c, struct errbuf *e)
{
	return docker_container_pause(c->docker, c->lab->agent.id, e);
}

static int
lever_pause_verify(struct lever_ctx *c, struct errbuf *e)
{
	cJSON *ins = docker_container_inspect(c->docker, c->lab->agent.id, e);
	bool paused;

	if (ins == NULL)
		return -1;
	paused = docker_inspect_paused(ins);
	cJSON_Delete(ins);
	if (!paused)
		return errbuf_set(e, ERRBUF_INTERNAL, "inspect shows the agent "
		    "not paused (State.Paused false)");
	return 0;
}

static int
lever_kill_fire(struct lever_ctx *c, struct errbuf *e)
{
	return docker_container_kill(c->docker, c->lab->agent.id, "SIGKILL",
	    e);
}

static int
lever_kill_verify(struct lever_ctx *c, struct errbuf *e)
{
	uint64_t deadline = util_mono_ns() + 2000000000ull;

	/* Docker may answer the kill before the process is reaped. */
	for (;;) {
		cJSON *ins = docker_container_inspect(c->docker,
		    c->lab->agent.id, e);
		bool running;

		if (ins == NULL)
			return -1;
		running = docker_inspect_running(ins);
		cJSON_Delete(ins);
		if (!running)
			return 0;
		if (util_mono_ns() > deadline)
			return errbuf_set(e, ERRBUF_INTERNAL, "inspect still "
			    "shows the agent running 2 s after the kill");
	}
}

static const struct lever_entry lever_gateway_deny = {
	.name = "gateway-deny",
	.summary = "the gateway refuses every model call of the agent",
	.fire = lever_deny_fire,
	.verify = lever_deny_verify,
	.cuts_off = false,
};
static const struct lever_entry lever_net_disconnect = {
	.name = "net-disconnect",
	.summary = "detach the agent from every network (Engine API)",
	.fire = lever_disconnect_fire,
	.verify = lever_disconnect_verify,
	.cuts_off = true,
};
static const struct lever_entry lever_pause = {
	.name = "pause",
	.summary = "freeze the agent's processes (Engine API pause)",
	.fire = lever_pause_fire,
	.verify = lever_pause_verify,
	.cuts_off = true,
};
static const struct lever_entry lever_kill = {
	.name = "kill",
	.summary = "SIGKILL the agent container (Engine API)",
	.fire = lever_kill_fire,
	.verify = lever_kill_verify,
	.cuts_off = true,
};

const struct lever_entry *const lever_table[] = {
	&lever_gateway_deny,
	&lever_net_disconnect,
	&lever_pause,
	&lever_kill,
	NULL,
};

const struct lever_entry *
lever_find(const char *name)
{
	size_t i;

	for (i = 0; lever_table[i] != NULL; i++)
		if (strcmp(lever_table[i]->name, name) == 0)
			return lever_table[i];
	return NULL;
}

int
lever_pull(const struct lever_entry *l, struct lever_ctx *c,
    struct lever_result *r)
{
	struct errbuf e = { 0 };

	memset(r, 0, sizeof *r);
	snprintf(r->name, sizeof r->name, "%s", l->name);
	r->fired_ns = util_mono_ns();
	if (l->fire(c, &e) == -1) {
		snprintf(r->detail, sizeof r->detail, "fire failed: %.230s", e.msg);
		return -1;
	}
	r->fired = true;
	if (l->verify(c, &e) == -1) {
		snprintf(r->detail, sizeof r->detail, "verify failed: %.230s",
		    e.msg);
		return -1;
	}
	r->verified_ns = util_mono_ns();
	r->verified = true;
	snprintf(r->detail, sizeof r->detail, "%s", l->summary);
	return 0;
}

void
lever_ctx_release(struct lever_ctx *c)
{
	if (c->gateway_http != NULL)
		curl_easy_cleanup(c->gateway_http);
	c->gateway_http = NULL;
}
