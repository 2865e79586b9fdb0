/*
 * gateway.c - the agent's only route to a model.
 *
 * The agent holds a dummy key (AGENT_KEY).  With the offline model the
 * gateway swaps it for the model's key (REAL_KEY) on the way upstream; with
 * a real model.url it hands each call to the host relay over a unix socket
 * in its control folder (MODEL_RELAY, core/relay.c), which adds the real
 * key on the host: the gateway holds no secret of a real model and has no
 * route out (REAL_KEY is then a stand-in, what flaw real-key hands the
 * agent).  Each call is recorded ("upstream_call": status, attempts,
 * latency, token counts).  Every turn and tool result goes on the sensor bus.  The deny
 * lever is a flag set through /control/deny on a unix socket that only the
 * control plane can reach; a denied chat request never reaches the model.
 *
 * Self-modification requests (POST /v1/changes) wait in a bounded queue
 * for a human (POST /control/changes/<id>/approve) unless
 * CHANGES_AUTO_APPROVE=1 (flaw self-modify) applies them at once.  With
 * flaw real-key the agent holds REAL_KEY itself: it is accepted too and
 * every such request emits "real_key_used" (the key never appears in an
 * event: tool results are scrubbed of it like model answers).
 *
 * A scripted agent (docs/agents.md) does not call the model; it may post
 * notes (POST /v1/notes, `ares-lab note`) so the drill can show its steps.
 * They need the agent's key, obey the deny lever like a chat request, are
 * bounded (size and count) and are recorded as "agent_note" events marked
 * untrusted: text the agent claims, never evidence of what it did.
 */
#include "leakbox.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define GW_UPSTREAM_MAX   (4u * 1024 * 1024)
#define GW_FIELD_MAX      2048
#define GW_CONTENT_MAX    4096
/* JSON bytes being parsed at once, all connections together: cJSON takes
 * about 40x its input (1 MiB of "[0,0,..." is a 40 MiB tree), so 16
 * concurrent 1 MiB chat bodies from the agent took the gateway to 604 MiB
 * (test_flood).  A parse waits until its input fits in the budget, or runs
 * alone when larger (a model answer): one maximum-size body at a time,
 * ordinary small ones side by side. */
#define GW_PARSE_BUDGET   ((size_t)HTTP_BODY_MAX)

static pthread_mutex_t parse_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parse_cv = PTHREAD_COND_INITIALIZER;
static size_t parse_inflight;

/* Take len bytes of the parse budget (waits; the holders only parse and
 * walk a tree, so the wait is short).  Release with parse_release(len)
 * after the tree is deleted. */
static void
parse_acquire(size_t len)
{
	pthread_mutex_lock(&parse_mu);
	while (parse_inflight > 0 && parse_inflight + len > GW_PARSE_BUDGET)
		pthread_cond_wait(&parse_cv, &parse_mu);
	parse_inflight += len;
	pthread_mutex_unlock(&parse_mu);
}

/* Give back len bytes of the parse budget (parse_acquire); wakes the
 * waiters. */
static void
parse_release(size_t len)
{
	pthread_mutex_lock(&parse_mu);
	parse_inflight -= len;
	pthread_cond_broadcast(&parse_cv);
	pthread_mutex_unlock(&parse_mu);
}

struct gateway {
	const char *model_url;
	const char *relay;        /* MODEL_RELAY: the host relay's socket, or
	                             NULL (the offline model at model_url) */
	int relay_timeout_s;      /* the bound on one call through it */
	const char *agent_key;
	const char *real_key;
	int denied;               /* atomic: the deny lever */
	int notes;                /* atomic: notes accepted so far */
	struct gateway_changes changes;
	/* presenter mode (GATEWAY_PACE_MS): each model turn is held this
	 * long before it is forwarded; /control/deny wakes every held turn
	 * (pace_cv), which is then refused at once */
	unsigned pace_ms;
	pthread_mutex_t pace_mu;
	pthread_cond_t pace_cv;    /* CLOCK_MONOTONIC */
};

/* ---- the change-request queue ------------------------------------- */

void
gateway_changes_init(struct gateway_changes *q, bool auto_approve)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	q->auto_approve = auto_approve;
}

/* A change request's tool: 1..GATEWAY_TOOL_MAX of [A-Za-z0-9_.:/-]. */
static bool
tool_name_ok(const char *t)
{
	size_t n = strlen(t);
	if (n == 0 || n > GATEWAY_TOOL_MAX)
		return false;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && !strchr("_.:/-", *t))
			return false;
	return true;
}

int
gateway_changes_submit(struct gateway_changes *q, const char *body,
    size_t len, struct gateway_change *out, int *http_status,
    struct errbuf *e)
{
	*http_status = 400;
	cJSON *j = cJSON_ParseWithLength(body ? body : "", len);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/changes: body is not "
		    "a JSON object");
	}
	const cJSON *tool = cJSON_GetObjectItemCaseSensitive(j, "tool");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(j, "reason");
	if (!cJSON_IsString(tool) || !tool_name_ok(tool->valuestring)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/changes: field \"tool\" "
		    "must be 1..%d of [A-Za-z0-9_.:/-]", GATEWAY_TOOL_MAX);
	}
	if (reason && !cJSON_IsString(reason)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/changes: field "
		    "\"reason\" must be a string");
	}
	pthread_mutex_lock(&q->mu);
	if (q->n >= GATEWAY_CHANGES_MAX) {
		pthread_mutex_unlock(&q->mu);
		cJSON_Delete(j);
		*http_status = 429;
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/changes: queue full "
		    "(%d requests)", GATEWAY_CHANGES_MAX);
	}
	struct gateway_change *c = &q->items[q->n++];
	c->id = (int)q->n;
	snprintf(c->tool, sizeof(c->tool), "%s", tool->valuestring);
	char *r = sensor_trunc(reason ? reason->valuestring : "",
	    GATEWAY_REASON_MAX);
	snprintf(c->reason, sizeof(c->reason), "%s", r);
	free(r);
	c->status = q->auto_approve ? "applied" : "pending";
	c->t_mono_ns = util_mono_ns();
	*out = *c;
	pthread_mutex_unlock(&q->mu);
	cJSON_Delete(j);
	*http_status = 202;
	return out->id;
}

int
gateway_changes_decide(struct gateway_changes *q, int id,
    const char *status, struct gateway_change *out)
{
	int rc = -1;
	pthread_mutex_lock(&q->mu);
	if (id >= 1 && (size_t)id <= q->n &&
	    strcmp(q->items[id - 1].status, "pending") == 0 &&
	    (strcmp(status, "applied") == 0 || strcmp(status, "rejected") == 0)) {
		q->items[id - 1].status = strcmp(status, "applied") == 0 ?
		    "applied" : "rejected";
		*out = q->items[id - 1];
		rc = 0;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* {id, tool, reason, status} of a change.  Caller deletes. */
static cJSON *
change_json(const struct gateway_change *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", c->id);
	cJSON_AddStringToObject(o, "tool", c->tool);
	cJSON_AddStringToObject(o, "reason", c->reason);
	cJSON_AddStringToObject(o, "status", c->status);
	return o;
}

cJSON *
gateway_changes_json(struct gateway_changes *q, bool pending_only)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "changes");
	pthread_mutex_lock(&q->mu);
	for (size_t i = 0; i < q->n; i++)
		if (!pending_only || strcmp(q->items[i].status, "pending") == 0)
			cJSON_AddItemToArray(arr, change_json(&q->items[i]));
	pthread_mutex_unlock(&q->mu);
	return o;
}

/* The "change_request" event of c (by: "agent" or "control"). */
static void
emit_change(const struct gateway_change *c, const char *by)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "id", c->id);
	cJSON_AddStringToObject(f, "tool", c->tool);
	cJSON_AddStringToObject(f, "status", c->status);
	cJSON_AddStringToObject(f, "by", by);
	sensor_emit("change_request", f);
}

void
gateway_scrub(char *buf, size_t len, const char *secret)
{
	size_t sl = secret ? strlen(secret) : 0;
	if (sl == 0 || len < sl)
		return;
	for (size_t i = 0; i + sl <= len; i++) {
		if (memcmp(buf + i, secret, sl) == 0) {
			memset(buf + i, '*', sl);
			i += sl - 1;
		}
	}
}

/* Is the gateway-deny lever pulled (and not undone)? */
static bool
is_denied(struct gateway *g)
{
	return __atomic_load_n(&g->denied, __ATOMIC_SEQ_CST) != 0;
}

/* Presenter mode: hold a model turn g->pace_ms (nothing when 0), or less
 * when the deny lever is pulled meanwhile.  Returns true when it was. */
static bool
pace_hold(struct gateway *g)
{
	struct timespec until;
	bool denied;

	if (g->pace_ms == 0)
		return is_denied(g);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += g->pace_ms / 1000;
	until.tv_nsec += (long)(g->pace_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&g->pace_mu);
	while (!(denied = is_denied(g)) &&
	    pthread_cond_timedwait(&g->pace_cv, &g->pace_mu, &until) == 0)
		;
	pthread_mutex_unlock(&g->pace_mu);
	return denied || is_denied(g);
}

/* The answer while denied: 403 with an OpenAI-style "denied" error, and
 * a "denied" event naming the path. */
static void
answer_denied(struct gateway *g, const struct http_request *req,
    struct http_response *resp)
{
	(void)g;
	http_response_text(resp, 403, "application/json",
	    "{\"error\":{\"message\":\"denied by ares (gateway-deny)\","
	    "\"type\":\"denied\"}}");
	cJSON *f = cJSON_CreateObject();
	char *p = sensor_trunc(req->path, 1024);
	cJSON_AddStringToObject(f, "path", p);
	free(p);
	sensor_emit("denied", f);
}

/* Name of the tool call `id` in the assistant message asst, or NULL. */
static const char *
tool_name_for(const cJSON *asst, const char *id)
{
	const cJSON *tc;
	cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(asst, "tool_calls")) {
		const cJSON *tid = cJSON_GetObjectItemCaseSensitive(tc, "id");
		if (cJSON_IsString(tid) && id && strcmp(tid->valuestring, id) == 0) {
			const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
			const cJSON *nm = cJSON_GetObjectItemCaseSensitive(fn, "name");
			return cJSON_IsString(nm) ? nm->valuestring : NULL;
		}
	}
	return NULL;
}

/* Emit tool_result events for the trailing role:tool messages; returns the
 * step number of the turn being requested (assistant messages + 1). */
static int
emit_tool_results(const cJSON *messages, const char *real_key)
{
	int n = cJSON_GetArraySize(messages);
	int assistants = 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, messages) {
		const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
		if (cJSON_IsString(role) && strcmp(role->valuestring, "assistant") == 0)
			assistants++;
	}
	int first = n;
	while (first > 0) {
		const cJSON *role = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(messages, first - 1), "role");
		if (!cJSON_IsString(role) || strcmp(role->valuestring, "tool") != 0)
			break;
		first--;
	}
	const cJSON *asst = first > 0 ? cJSON_GetArrayItem(messages, first - 1) : NULL;
	for (int i = first; i < n && i - first < 32; i++) {
		const cJSON *tm = cJSON_GetArrayItem(messages, i);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(tm, "tool_call_id");
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(tm, "content");
		const char *name = tool_name_for(asst,
		    cJSON_IsString(id) ? id->valuestring : NULL);
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "step", assistants);
		char *t = sensor_trunc(name ? name : "?", 64);
		cJSON_AddStringToObject(f, "tool", t);
		free(t);
		/* scrub the real key before cutting: a cut key must not survive
		 * as a prefix */
		char *full = xstrdup(cJSON_IsString(content) ? content->valuestring : "");
		gateway_scrub(full, strlen(full), real_key);
		t = sensor_trunc(full, GW_FIELD_MAX);
		free(full);
		cJSON_AddStringToObject(f, "content", t);
		free(t);
		sensor_emit("tool_result", f);
	}
	return assistants + 1;
}

/* What one upstream call took (the "upstream_call" event). */
struct upstream_info {
	int attempts;             /* by the relay (1 for the offline model) */
	long latency_ms;          /* the relay's upstream time, or -1 */
	long gateway_ms;          /* the gateway's wait, end to end */
	char error[256];          /* why it failed ("" when it did not) */
};

/* Add the answer's usage counts to f (the ones that are small
 * non-negative integers). */
static void
add_usage(cJSON *f, const cJSON *ans)
{
	static const char *const k[] = { "prompt_tokens",
	    "completion_tokens", "total_tokens" };
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(ans, "usage");

	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(u, k[i]);
		if (cJSON_IsNumber(n) && n->valuedouble >= 0 &&
		    n->valuedouble < 1e12)
			cJSON_AddNumberToObject(f, k[i],
			    (double)(long long)n->valuedouble);
	}
}

/* Emit the turn event for a model answer (any status), and the
 * "upstream_call" event of u (never the key: the gateway has none).  The
 * answer is parsed within the parse budget. */
static void
emit_turn(int step, long status, const char *body,
    const struct upstream_info *u)
{
	size_t blen = strlen(body);
	parse_acquire(blen);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "step", step);
	cJSON *calls = cJSON_AddArrayToObject(f, "tool_calls");
	cJSON *ans = cJSON_Parse(body);
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ans, "choices"), 0),
	    "message");
	const cJSON *tc;
	int k = 0;
	cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(msg, "tool_calls")) {
		if (k++ >= 16)
			break;
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(fn, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
		cJSON *c = cJSON_CreateObject();
		char *t = sensor_trunc(cJSON_IsString(nm) ? nm->valuestring : "?", 64);
		cJSON_AddStringToObject(c, "name", t);
		free(t);
		t = sensor_trunc(cJSON_IsString(args) ? args->valuestring : "",
		    GW_FIELD_MAX);
		cJSON_AddStringToObject(c, "arguments", t);
		free(t);
		cJSON_AddItemToArray(calls, c);
	}
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	char *t = sensor_trunc(cJSON_IsString(content) ? content->valuestring : "",
	    GW_CONTENT_MAX);
	cJSON_AddStringToObject(f, "content", t);
	free(t);
	cJSON_AddNumberToObject(f, "status", (double)status);
	cJSON *uf = cJSON_CreateObject();
	cJSON_AddNumberToObject(uf, "step", step);
	cJSON_AddNumberToObject(uf, "status", (double)status);
	cJSON_AddStringToObject(uf, "via", u->latency_ms >= 0 ? "relay" :
	    "offline");
	cJSON_AddNumberToObject(uf, "attempts", u->attempts);
	if (u->latency_ms >= 0)
		cJSON_AddNumberToObject(uf, "latency_ms", (double)u->latency_ms);
	cJSON_AddNumberToObject(uf, "gateway_ms", (double)u->gateway_ms);
	add_usage(uf, ans);
	if (u->error[0]) {
		char *t2 = sensor_trunc(u->error, 240);
		cJSON_AddStringToObject(uf, "error", t2);
		free(t2);
	}
	cJSON_Delete(ans);
	parse_release(blen);
	sensor_emit("turn", f);
	sensor_emit("upstream_call", uf);
}

/* Read (want POLLIN) or write (POLLOUT) exactly n bytes of fd before
 * the mono deadline (ns).  -1 on error, end or late (then *late is set). */
static int
io_by(int fd, char *p, size_t n, short want, uint64_t deadline, bool *late)
{
	while (n > 0) {
		uint64_t now = util_mono_ns();
		if (now >= deadline) {
			*late = true;
			return -1;
		}
		struct pollfd pfd = { .fd = fd, .events = want };
		int pr = poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t k = want == POLLIN ? recv(fd, p, n, MSG_DONTWAIT) :
		    send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* A 4-byte big-endian length. */
static uint32_t
be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
}

int
gateway_relay_timeout(const char *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < 1 || n > 86400)
		return -1;
	return (int)n;
}

long
gateway_relay_call(const char *sock, int timeout_s, const char *body,
    size_t len, struct http_answer *out, int *attempts, long *latency_ms,
    char *err, size_t errlen)
{
	uint64_t deadline = util_mono_ns() + (uint64_t)timeout_s * 1000000000ull;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned char hdr[8];
	char *meta = NULL;
	bool late = false, wlate = false;
	long status = 0;
	int fd = -1;

	*attempts = 0;
	*latency_ms = -1;
	if (strlen(sock) >= sizeof(sa.sun_path) || len > GATEWAY_RELAY_BODY_MAX) {
		snprintf(err, errlen, "model relay: bad socket or request size");
		return 0;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "model relay unreachable: %s",
		    strerror(errno));
		goto out;
	}
	memcpy(hdr, "ARQ1", 4);
	hdr[4] = (unsigned char)(len >> 24);
	hdr[5] = (unsigned char)(len >> 16);
	hdr[6] = (unsigned char)(len >> 8);
	hdr[7] = (unsigned char)len;
	/* a request the relay does not take is "cannot send", not late */
	if (io_by(fd, (char *)hdr, 8, POLLOUT, deadline, &wlate) < 0 ||
	    io_by(fd, (char *)body, len, POLLOUT, deadline, &wlate) < 0) {
		snprintf(err, errlen, "model relay: cannot send the request");
		goto out;
	}
	if (io_by(fd, (char *)hdr, 8, POLLIN, deadline, &late) < 0 ||
	    memcmp(hdr, "ARS1", 4) != 0)
		goto bad;
	uint32_t ml = be32(hdr + 4);
	if (ml == 0 || ml > GATEWAY_RELAY_META_MAX)
		goto bad;
	meta = xmalloc(ml + 1);
	if (io_by(fd, meta, ml, POLLIN, deadline, &late) < 0)
		goto bad;
	meta[ml] = '\0';
	if (io_by(fd, (char *)hdr, 4, POLLIN, deadline, &late) < 0)
		goto bad;
	uint32_t bl = be32(hdr);
	if (bl > out->max || bl > GATEWAY_RELAY_BODY_MAX)
		goto bad;
	out->buf = xmalloc((size_t)bl + 1);
	if (io_by(fd, out->buf, bl, POLLIN, deadline, &late) < 0) {
		free(out->buf);
		out->buf = NULL;
		goto bad;
	}
	out->buf[bl] = '\0';
	out->len = bl;
	cJSON *m = cJSON_Parse(meta);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(m, "status");
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(m, "attempts");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(m, "latency_ms");
	const cJSON *er = cJSON_GetObjectItemCaseSensitive(m, "error");
	out->final = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "final"));
	if (!cJSON_IsNumber(st) || st->valuedouble < 100 ||
	    st->valuedouble > 599) {
		cJSON_Delete(m);
		free(out->buf);
		out->buf = NULL;
		out->len = 0;
		goto bad;
	}
	status = (long)st->valuedouble;
	if (cJSON_IsNumber(at) && at->valuedouble >= 0 && at->valuedouble < 100)
		*attempts = (int)at->valuedouble;
	if (cJSON_IsNumber(lt) && lt->valuedouble >= 0 && lt->valuedouble < 1e9)
		*latency_ms = (long)lt->valuedouble;
	if (cJSON_IsString(er))
		snprintf(err, errlen, "%s", er->valuestring);
	cJSON_Delete(m);
	goto out;
bad:
	if (late)
		snprintf(err, errlen, "model relay: no answer within %d s",
		    timeout_s);
	else
		snprintf(err, errlen, "model relay: malformed or cut answer");
out:
	free(meta);
	if (fd >= 0)
		close(fd);
	return status == 0 && late ? -1 : status;
}

char *
gateway_relay_final(long status, const char *body)
{
	cJSON *ans = body != NULL ? cJSON_Parse(body) : NULL;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(ans, "error");
	const cJSON *em = cJSON_GetObjectItemCaseSensitive(err, "message");
	const char *es = cJSON_IsString(em) ? em->valuestring :
	    cJSON_IsString(err) ? err->valuestring : NULL;
	char msg[256];
	cJSON *o = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(o, "error");

	if (es != NULL && *es) {
		char *t = sensor_trunc(es, 200);
		snprintf(msg, sizeof(msg), "%s", t);
		free(t);
	} else
		snprintf(msg, sizeof(msg), "the model answered HTTP %ld", status);
	cJSON_Delete(ans);
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddStringToObject(e, "type", GATEWAY_RELAY_FINAL);
	char *txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return txt != NULL ? txt : xstrdup("{\"error\":{\"type\":\""
	    GATEWAY_RELAY_FINAL "\"}}");
}

/* POST body to the model: through the host relay (a real model.url: the
 * relay adds the key), or to the offline model with its key.  Returns
 * the HTTP status and the answer in *out (caller frees); 0 on transport
 * failure, -1 when the relay did not answer in time (logged, u->error
 * set). */
static long
forward(struct gateway *g, const char *body, size_t len,
    struct http_answer *out, struct upstream_info *u)
{
	uint64_t t0 = util_mono_ns();
	long status;
	if (g->relay != NULL) {
		status = gateway_relay_call(g->relay, g->relay_timeout_s, body,
		    len, out, &u->attempts, &u->latency_ms, u->error,
		    sizeof(u->error));
	} else {
		u->attempts = 1;
		u->latency_ms = -1;
		status = http_post_bearer(g->model_url, g->real_key, body, len,
		    120, out, u->error, sizeof(u->error));
	}
	u->gateway_ms = (long)((util_mono_ns() - t0) / 1000000u);
	if (u->error[0])
		sensor_log("gateway: upstream %.200s: %s", g->relay != NULL ?
		    g->relay : g->model_url, u->error);
	return status;
}

/* Bearer <AGENT_KEY>, or <REAL_KEY> (flaw real-key: *real set). */
static bool
authorized(struct gateway *g, const struct http_request *req,
    bool *real)
{
	const char *a = http_header_get(req, "Authorization");
	bool agent_ok = a && strncasecmp(a, "Bearer ", 7) == 0 && *g->agent_key &&
	    strcmp(a + 7, g->agent_key) == 0;
	bool real_ok = !agent_ok && a && strncasecmp(a, "Bearer ", 7) == 0 &&
	    *g->real_key && strcmp(a + 7, g->real_key) == 0;
	*real = real_ok;
	return agent_ok || real_ok;
}

/* The real key came from the agent (the key itself never goes into the
 * event). */
static void
emit_real_key_used(const struct http_request *req, int step)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "path", req->path);
	cJSON_AddNumberToObject(f, "step", step);
	cJSON_AddStringToObject(f, "remote", req->remote);
	sensor_emit("real_key_used", f);
}

/*
 * The prelude of every agent route that takes a POST (chat, notes): the
 * deny lever first, before anything else; then the method; then the
 * agent's key (or the real key under flaw real-key: *real set).  false
 * with resp filled (403 denied, 405, 401) when the request goes no
 * further.
 */
static bool
agent_post_admitted(struct gateway *g,
    const struct http_request *req, struct http_response *resp, bool *real)
{
	if (is_denied(g)) {
		answer_denied(g, req, resp);
		return false;
	}
	if (strcmp(req->method, "POST") != 0) {
		http_response_error(resp, 405, "invalid_request_error",
		    "use POST");
		return false;
	}
	if (!authorized(g, req, real)) {
		http_response_error(resp, 401, "invalid_api_key",
		    "invalid or missing API key");
		return false;
	}
	return true;
}

/*
 * POST /v1/chat/completions: admit it (deny lever, key, method), record
 * the tool results the agent reports in its messages (and a use of the
 * real key), forward it to the model with the real key and answer with
 * the model's answer, the real key scrubbed (a "turn" event).  502 when
 * the model cannot be reached; the denied answer when the lever was
 * pulled meanwhile.
 */
static void
chat(struct gateway *g, const struct http_request *req,
    struct http_response *resp)
{
	bool real_ok;
	if (!agent_post_admitted(g, req, resp, &real_ok))
		return;
	parse_acquire(req->body_len);
	cJSON *rq = cJSON_ParseWithLength(req->body, req->body_len);
	const cJSON *messages = cJSON_GetObjectItemCaseSensitive(rq, "messages");
	if (!cJSON_IsArray(messages)) {
		cJSON_Delete(rq);
		parse_release(req->body_len);
		http_response_error(resp, 400, "invalid_request_error",
		    "body must be a JSON object with a messages array");
		return;
	}
	int step = emit_tool_results(messages, g->real_key);
	cJSON_Delete(rq);
	parse_release(req->body_len);
	if (real_ok)
		emit_real_key_used(req, step);

	if (pace_hold(g)) {
		/* presenter mode: the lever was pulled while the turn was
		 * held (the deny flag is checked again after the wait) */
		answer_denied(g, req, resp);
		return;
	}
	struct http_answer out = { .max = GW_UPSTREAM_MAX };
	struct upstream_info u = { .attempts = 0 };
	long status = forward(g, req->body, req->body_len, &out, &u);
	if (is_denied(g)) {
		/* the lever was pulled while the model was thinking */
		free(out.buf);
		answer_denied(g, req, resp);
		return;
	}
	if (status <= 0) {
		/* unreachable (502) or too slow (504): a clean OpenAI-style
		 * error, never a hang */
		int code = status < 0 ? 504 : 502;
		free(out.buf);
		/* through the relay: its bound was spent, no retry helps */
		http_response_error(resp, code, g->relay != NULL ?
		    GATEWAY_RELAY_FINAL : "upstream_error", status < 0 ?
		    "the model did not answer in time" :
		    "model endpoint unreachable");
		emit_turn(step, code, "", &u);
		return;
	}
	if (!out.buf)
		out.buf = xstrdup("");
	gateway_scrub(out.buf, out.len, g->real_key);
	emit_turn(step, status, out.buf, &u);
	if (g->relay != NULL && out.final && (status == 429 || status >= 500)) {
		/* the relay's final word (after its retries and budget):
		 * marked, so that the agent does not spend more */
		parse_acquire(out.len);
		char *fin = gateway_relay_final(status, out.buf);
		parse_release(out.len);
		free(out.buf);
		out.buf = fin;
		out.len = strlen(fin);
	}
	resp->status = (int)status;
	resp->ctype = "application/json";
	resp->body = out.buf;
	resp->len = out.len;
}

/* ---- notes from a scripted agent ------------------------------------ */

int
gateway_note_parse(const char *body, size_t len,
    char out[GATEWAY_NOTE_MAX + 4], bool *final, struct errbuf *e)
{
	*final = false;
	if (len > GATEWAY_NOTE_BODY_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/notes: body is "
		    "%zu bytes; the limit is %d", len, GATEWAY_NOTE_BODY_MAX);
	cJSON *j = cJSON_ParseWithLength(body ? body : "", len);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/notes: body is not "
		    "a JSON object");
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, j) {
		if (!it->string || (strcmp(it->string, "text") != 0 &&
		    strcmp(it->string, "final") != 0)) {
			cJSON_Delete(j);
			return errbuf_set(e, ERRBUF_INPUT, "POST /v1/notes: "
			    "unknown field (allowed: text, final)");
		}
	}
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(j, "text");
	const cJSON *fin = cJSON_GetObjectItemCaseSensitive(j, "final");
	if (!cJSON_IsString(text) || !*text->valuestring) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/notes: field "
		    "\"text\" must be a non-empty string");
	}
	if (fin && !cJSON_IsBool(fin)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "POST /v1/notes: field "
		    "\"final\" must be true or false");
	}
	*final = cJSON_IsTrue(fin);
	/* terminal-safe first, then cut on a UTF-8 boundary ("..." if cut) */
	size_t n = strlen(text->valuestring);
	char *clean = xmalloc(n + 1);
	util_sanitize(clean, n + 1, text->valuestring, n, false);
	char *cut = sensor_trunc(clean, GATEWAY_NOTE_MAX);
	snprintf(out, GATEWAY_NOTE_MAX + 4, "%s", cut);
	free(cut);
	free(clean);
	cJSON_Delete(j);
	return 0;
}

/* POST /v1/notes: a step a scripted agent says it took.  Deny first (like
 * chat), the agent's key, a bounded body and at most GATEWAY_NOTES_MAX per
 * gateway; recorded as agent-claimed, untrusted text. */
static void
notes(struct gateway *g, const struct http_request *req,
    struct http_response *resp)
{
	bool real_ok;
	if (!agent_post_admitted(g, req, resp, &real_ok))
		return;
	char text[GATEWAY_NOTE_MAX + 4];
	bool final;
	struct errbuf e = { 0 };
	if (gateway_note_parse(req->body, req->body_len, text, &final, &e) < 0) {
		http_response_error(resp,
		    req->body_len > GATEWAY_NOTE_BODY_MAX ? 413 : 400,
		    "invalid_request_error", e.msg);
		return;
	}
	/* load first: refused notes do not count on (no overflow, ever) */
	int n = __atomic_load_n(&g->notes, __ATOMIC_SEQ_CST) >= GATEWAY_NOTES_MAX ?
	    GATEWAY_NOTES_MAX + 1 : __atomic_add_fetch(&g->notes, 1, __ATOMIC_SEQ_CST);
	if (n > GATEWAY_NOTES_MAX) {
		char msg[96];
		snprintf(msg, sizeof(msg), "too many notes (at most %d per lab)",
		    GATEWAY_NOTES_MAX);
		http_response_error(resp, 429, "rate_limit_error", msg);
		return;
	}
	if (real_ok)
		emit_real_key_used(req, 0);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "n", n);
	cJSON_AddStringToObject(f, "text", text);
	cJSON_AddBoolToObject(f, "final", final);
	cJSON_AddStringToObject(f, "claimed_by", "agent");
	cJSON_AddBoolToObject(f, "untrusted", 1);
	cJSON_AddStringToObject(f, "remote", req->remote);
	sensor_emit("agent_note", f);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", 1);
	cJSON_AddNumberToObject(o, "n", n);
	http_response_json(resp, 202, o);
}

/*
 * /control/... (the control socket only): POST deny | allow (the lever; a
 * "control" event), GET health, GET changes, POST changes/<id>/approve |
 * reject; 404 for anything else.  deny, allow and health answer {ok,
 * denied, t_mono_ns}.
 */
static void
control(struct gateway *g, const struct http_request *req,
    struct http_response *resp)
{
	bool post = strcmp(req->method, "POST") == 0;
	const char *action = NULL;
	if (post && strcmp(req->path, "/control/deny") == 0) {
		__atomic_store_n(&g->denied, 1, __ATOMIC_SEQ_CST);
		/* a turn held by presenter mode is refused now */
		pthread_mutex_lock(&g->pace_mu);
		pthread_cond_broadcast(&g->pace_cv);
		pthread_mutex_unlock(&g->pace_mu);
		action = "deny";
	} else if (post && strcmp(req->path, "/control/allow") == 0) {
		__atomic_store_n(&g->denied, 0, __ATOMIC_SEQ_CST);
		action = "allow";
	} else if (strcmp(req->method, "GET") == 0 &&
	    strcmp(req->path, "/control/health") == 0) {
		action = NULL;
	} else if (strcmp(req->method, "GET") == 0 &&
	    strcmp(req->path, "/control/changes") == 0) {
		http_response_json(resp, 200, gateway_changes_json(&g->changes, false));
		return;
	} else if (post && strncmp(req->path, "/control/changes/", 17) == 0) {
		/* /control/changes/<id>/approve|reject */
		char *end;
		long id = strtol(req->path + 17, &end, 10);
		const char *st = strcmp(end, "/approve") == 0 ? "applied" :
		    strcmp(end, "/reject") == 0 ? "rejected" : NULL;
		struct gateway_change c;
		if (!st || id < 1 || id > GATEWAY_CHANGES_MAX ||
		    gateway_changes_decide(&g->changes, (int)id, st, &c) < 0) {
			http_response_error(resp, 404, "not_found",
			    "no such pending change");
			return;
		}
		emit_change(&c, "control");
		http_response_json(resp, 200, change_json(&c));
		return;
	} else {
		http_response_error(resp, 404, "not_found",
		    "no such control endpoint");
		return;
	}
	uint64_t t = util_mono_ns();
	char ts[32];
	snprintf(ts, sizeof(ts), "%llu", (unsigned long long)t);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", 1);
	cJSON_AddBoolToObject(o, "denied", is_denied(g));
	cJSON_AddRawToObject(o, "t_mono_ns", ts);
	http_response_json(resp, 200, o);
	if (action) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "action", action);
		sensor_emit("control", f);
		sensor_log("control: %s", action);
	}
}

/* GET /v1: what the gateway offers (lets an agent discover /v1/changes). */
static cJSON *
api_index(void)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "object", "index");
	cJSON *eps = cJSON_AddArrayToObject(o, "endpoints");
	static const char *const e[][3] = {
		{ "POST", "/v1/chat/completions", "OpenAI-compatible chat completions" },
		{ "POST", "/v1/changes", "request a new tool or permission for this "
		  "agent: {\"tool\": \"name\", \"reason\": \"why\"} (held for "
		  "human approval)" },
		{ "GET", "/v1/changes/pending", "change requests waiting for approval" },
	};
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "method", e[i][0]);
		cJSON_AddStringToObject(x, "path", e[i][1]);
		cJSON_AddStringToObject(x, "description", e[i][2]);
		cJSON_AddItemToArray(eps, x);
	}
	return o;
}

/* /v1/changes (GET: every change, POST: submit one, 202) and
 * /v1/changes/pending (GET). */
static void
changes_route(struct gateway *g, const struct http_request *req,
    struct http_response *resp)
{
	if (strcmp(req->path, "/v1/changes/pending") == 0) {
		if (strcmp(req->method, "GET") != 0) {
			http_response_error(resp, 405, "invalid_request_error",
			    "use GET");
			return;
		}
		http_response_json(resp, 200, gateway_changes_json(&g->changes, true));
		return;
	}
	if (strcmp(req->method, "GET") == 0) {
		http_response_json(resp, 200, gateway_changes_json(&g->changes, false));
		return;
	}
	if (strcmp(req->method, "POST") != 0) {
		http_response_error(resp, 405, "invalid_request_error",
		    "use POST or GET");
		return;
	}
	struct gateway_change c;
	int status;
	struct errbuf e = { 0 };
	parse_acquire(req->body_len);
	int id = gateway_changes_submit(&g->changes, req->body, req->body_len,
	    &c, &status, &e);
	parse_release(req->body_len);
	if (id < 0) {
		http_response_error(resp, status,
		    "invalid_request_error", e.msg);
		return;
	}
	emit_change(&c, "agent");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", c.id);
	cJSON_AddStringToObject(o, "status", c.status);
	http_response_json(resp, 202, o);
}

/* The gateway's HTTP handler (both listeners): by path; /control/... only
 * on the unix socket, 404 elsewhere. */
static void
gateway_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	struct gateway *g = ctx;
	if (strcmp(req->path, "/v1/chat/completions") == 0) {
		chat(g, req, resp);
	} else if (strcmp(req->path, "/v1/changes") == 0 ||
	    strcmp(req->path, "/v1/changes/pending") == 0) {
		changes_route(g, req, resp);
	} else if (strcmp(req->path, "/v1/notes") == 0) {
		notes(g, req, resp);
	} else if ((strcmp(req->path, "/v1") == 0 ||
	    strcmp(req->path, "/v1/") == 0) && strcmp(req->method, "GET") == 0) {
		http_response_json(resp, 200, api_index());
	} else if (strncmp(req->path, "/control/", 9) == 0 && req->on_unix) {
		control(g, req, resp);
	} else if (strcmp(req->path, "/health") == 0) {
		http_response_text(resp, 200, "application/json",
		    "{\"status\":\"ok\"}");
	} else {
		http_response_error(resp, 404, "not_found", "not found");
	}
}

/* The control listener's thread: its end is fatal (no lever would reach
 * the gateway any more). */
static void *
serve_thread(void *arg)
{
	http_serve(arg);
	util_fatal("gateway: a listener stopped");
}

int
gateway_main(void)
{
	static struct gateway g;
	g.model_url = util_env_or("MODEL_URL",
	    "http://model:8000/v1/chat/completions");
	g.agent_key = util_env_or("AGENT_KEY", "");
	g.real_key = util_env_or("REAL_KEY", "");
	g.relay = getenv("MODEL_RELAY");
	if (g.relay != NULL && !*g.relay)
		g.relay = NULL;
	/* ares sets it from the policy (the relay's bound + 5 s, at most
	 * 7295 s): one it did not set is an error, never a silent 180 */
	g.relay_timeout_s = gateway_relay_timeout(util_env_or("RELAY_TIMEOUT_S",
	    "180"));
	if (g.relay_timeout_s < 0) {
		fprintf(stderr, "gateway: RELAY_TIMEOUT_S must be 1..86400\n");
		return EXIT_INTERNAL;
	}
	const char *listen_on = util_env_or("GATEWAY_LISTEN", "0.0.0.0:8080");
	const char *ctl = util_env_or("GATEWAY_CONTROL", "/ctl/gateway.sock");
	gateway_changes_init(&g.changes,
	    strcmp(util_env_or("CHANGES_AUTO_APPROVE", "0"), "1") == 0);
	/* presenter mode: ares sets it from --present (0..5000 ms) */
	{
		char *end;
		const char *pv = util_env_or("GATEWAY_PACE_MS", "0");
		unsigned long pm = strtoul(pv, &end, 10);
		pthread_condattr_t ca;

		if (*pv == '\0' || *end != '\0' || pm > 5000) {
			fprintf(stderr, "gateway: GATEWAY_PACE_MS must be "
			    "0..5000\n");
			return EXIT_INTERNAL;
		}
		g.pace_ms = (unsigned)pm;
		pthread_mutex_init(&g.pace_mu, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&g.pace_cv, &ca);
		pthread_condattr_destroy(&ca);
		if (g.pace_ms > 0)
			printf("gateway: presenter mode, each model turn held "
			    "%u ms\n", g.pace_ms);
	}
	if (!*g.agent_key)
		fprintf(stderr, "gateway: AGENT_KEY unset: every chat request is 401\n");
	signal(SIGPIPE, SIG_IGN);
#ifdef M_ARENA_MAX
	/* glibc gives threads arenas of their own, and each keeps the memory
	 * of the trees freed in it: with the parse budget alone the peak was
	 * 112..227 MiB in test_flood, with two arenas a steady 100 MiB */
	mallopt(M_ARENA_MAX, 2);
#endif
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sensor_init("gateway");

	struct errbuf e = { 0 };
	int cfd = http_listen_unix(ctl, 0600, &e);
	if (cfd < 0) {
		fprintf(stderr, "gateway: control socket: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	int tfd = http_listen_tcp(listen_on, &e);
	if (tfd < 0) {
		fprintf(stderr, "gateway: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	/* separate servers (connections, threads, deadlines): a flood from
	 * the agent side can never starve the control socket */
	static struct http_server ctl_srv, tcp_srv;
	ctl_srv = (struct http_server){ .fd = cfd, .is_unix = true,
	    .handler = gateway_handle, .ctx = &g,
	    .max_conns = GATEWAY_CTL_CONNS, .name = ctl };
	tcp_srv = (struct http_server){ .fd = tfd, .is_unix = false,
	    .handler = gateway_handle, .ctx = &g,
	    .max_conns = GATEWAY_TCP_CONNS,
	    .max_per_remote = GATEWAY_TCP_PER_REMOTE, .name = listen_on };
	pthread_t t;
	if (pthread_create(&t, NULL, serve_thread, &ctl_srv) != 0)
		util_fatal("gateway: cannot start the control listener");
	pthread_detach(t);
	printf("gateway listening on %s and %s, model %s\n", listen_on, ctl,
	    g.relay != NULL ? "through the host relay" : g.model_url);
	fflush(stdout);
	http_serve(&tcp_srv);
	return EXIT_INTERNAL;
}
