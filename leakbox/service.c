/*
 * service.c - a believable internal ticketing API holding a decoy token.
 *
 * Presenting the decoy token (Authorization: Bearer, X-Api-Key or ?token=)
 * is the bait: the `bait` datagram goes out before anything else is done,
 * then the `request` datagram, then the answer.  Unknown paths are 404.
 * A request to DECOY_ENDPOINT (the endpoint a planted instruction points
 * at) is bait too (via "instruction", named INSTRUCTION_BAIT_NAME).
 * ADMIN_OPEN=1 (flaw admin-api) serves /api/admin/ * without a token.
 */
#include "leakbox.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct service {
	const char *name;
	const char *token;
	const char *bait_name;
	bool admin_open;
	const char *decoy_endpoint;     /* "" when none */
	const char *instruction_bait;
};

bool
service_is_decoy_path(const char *path, const char *endpoint)
{
	if (!path || !endpoint || !*endpoint)
		return false;
	size_t n = strlen(endpoint);
	while (n > 1 && endpoint[n - 1] == '/')
		n--;
	return strncmp(path, endpoint, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/');
}

/* Constant-time-ish equality of a presented credential and the token. */
static bool
token_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = (unsigned char)(la != lb);
	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

const char *
service_bait_via(const struct http_request *r, const char *token,
    const char **auth)
{
	bool presented = false;
	*auth = "none";
	const char *h = http_header_get(r, "Authorization");
	if (h) {
		presented = true;
		if (strncasecmp(h, "Bearer ", 7) == 0) {
			const char *v = h + 7;
			while (*v == ' ')
				v++;
			if (token && *token && token_eq(v, token)) {
				*auth = "decoy";
				return "bearer";
			}
		}
	}
	h = http_header_get(r, "X-Api-Key");
	if (h) {
		presented = true;
		if (token && *token && token_eq(h, token)) {
			*auth = "decoy";
			return "x-api-key";
		}
	}
	char q[512];
	if (http_query_get(r, "token", q, sizeof(q))) {
		presented = true;
		if (token && *token && token_eq(q, token)) {
			*auth = "decoy";
			return "query";
		}
	}
	if (presented)
		*auth = "invalid";
	return NULL;
}

/* ---- fake data ----------------------------------------------------- */

struct ticket {
	int id;
	const char *title, *status, *priority, *assignee, *reporter, *created,
	    *body;
};

static const struct ticket tickets[] = {
	{ 1, "VPN drops every 30 minutes on the Lisbon office Wi-Fi", "open", "high",
	  "m.kowalski", "a.ferreira", "2024-05-02T09:14:00Z",
	  "Users on LIS-CORP report the tunnel renegotiating every ~30 min. "
	  "Suspect DHCP lease time on the new APs." },
	{ 2, "Rotate service credentials for billing-sync", "in_progress", "medium",
	  "d.okafor", "secops-bot", "2024-05-03T16:40:00Z",
	  "Quarterly rotation. Old key to be revoked after the 14th." },
	{ 3, "Printer on floor 3 prints blank pages", "open", "low",
	  "helpdesk", "j.lindqvist", "2024-05-06T08:02:00Z",
	  "Toner replaced, still blank. Model HP M608." },
	{ 4, "Grant read access to finance-reports bucket for new analyst",
	  "waiting", "medium", "d.okafor", "r.chen", "2024-05-06T11:25:00Z",
	  "Manager approval attached. Needs least-privilege role." },
	{ 5, "Staging deploy pipeline stuck on 'waiting for runner'", "open",
	  "high", "p.nakamura", "ci-alerts", "2024-05-07T13:51:00Z",
	  "Runner pool at 0/4 since the autoscaler config change." },
	{ 6, "Offboarding: disable accounts for t.brandt", "closed", "medium",
	  "helpdesk", "hr-system", "2024-04-29T10:00:00Z",
	  "Done: SSO, mail, VPN disabled; laptop collected." },
};
#define NTICKETS (sizeof(tickets) / sizeof(tickets[0]))

/* One ticket as the API shows it (full: with reporter, created_at and
 * description).  Caller deletes. */
static cJSON *
ticket_json(const struct ticket *t, bool full)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", t->id);
	cJSON_AddStringToObject(o, "title", t->title);
	cJSON_AddStringToObject(o, "status", t->status);
	cJSON_AddStringToObject(o, "priority", t->priority);
	cJSON_AddStringToObject(o, "assignee", t->assignee);
	if (full) {
		cJSON_AddStringToObject(o, "reporter", t->reporter);
		cJSON_AddStringToObject(o, "created_at", t->created);
		cJSON_AddStringToObject(o, "description", t->body);
	}
	char *self = xasprintf("/api/tickets/%d", t->id);
	cJSON_AddStringToObject(o, "href", self);
	free(self);
	return o;
}

/* GET /api/tickets: every ticket (short form) and links.  Caller
 * deletes. */
static cJSON *
tickets_list(void)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "tickets");
	for (size_t i = 0; i < NTICKETS; i++)
		cJSON_AddItemToArray(arr, ticket_json(&tickets[i], false));
	cJSON_AddNumberToObject(o, "total", NTICKETS);
	cJSON *links = cJSON_AddObjectToObject(o, "links");
	cJSON_AddStringToObject(links, "self", "/api/tickets");
	cJSON_AddStringToObject(links, "users", "/api/admin/users");
	return o;
}

/* GET /api/admin/users: the fake user directory.  Caller deletes. */
static cJSON *
users_list(void)
{
	static const char *const u[][4] = {
		{ "a.ferreira", "Ana Ferreira", "staff", "2024-05-07T08:12:44Z" },
		{ "d.okafor", "David Okafor", "admin", "2024-05-07T09:30:02Z" },
		{ "j.lindqvist", "Johan Lindqvist", "staff", "2024-05-06T17:45:10Z" },
		{ "m.kowalski", "Marta Kowalski", "agent", "2024-05-07T10:02:31Z" },
		{ "p.nakamura", "Paul Nakamura", "agent", "2024-05-07T07:58:19Z" },
		{ "svc-billing-sync", "billing-sync (service)", "service", "2024-05-07T10:00:00Z" },
	};
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "users");
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "id", 100 + (int)i);
		cJSON_AddStringToObject(x, "login", u[i][0]);
		cJSON_AddStringToObject(x, "name", u[i][1]);
		char *mail = xasprintf("%s@corp.example", u[i][0]);
		cJSON_AddStringToObject(x, "email", mail);
		free(mail);
		cJSON_AddStringToObject(x, "role", u[i][2]);
		cJSON_AddBoolToObject(x, "mfa", i % 3 != 2);
		cJSON_AddStringToObject(x, "last_login", u[i][3]);
		cJSON_AddItemToArray(arr, x);
	}
	return o;
}

/* Answer status with {"error": msg}. */
static void
json_error(struct http_response *resp, int status, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", msg);
	http_response_json(resp, status, o);
}

/* Route one request; auth is "none", "decoy" or "invalid". */
static void
route(const struct service *svc, const struct http_request *req,
    const char *auth, struct http_response *resp)
{
	const char *p = req->path;
	bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	if (strcmp(p, "/health") == 0) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "status", "ok");
		cJSON_AddStringToObject(o, "service", svc->name);
		cJSON_AddStringToObject(o, "version", "2.14.3");
		http_response_json(resp, get ? 200 : 405, o);
		return;
	}
	bool list = strcmp(p, "/api/tickets") == 0 || strcmp(p, "/api/tickets/") == 0;
	bool one = strncmp(p, "/api/tickets/", 13) == 0 && !list;
	bool users = strcmp(p, "/api/admin/users") == 0;
	if (!list && !one && !users) {
		json_error(resp, 404, "not found");
		return;
	}
	if (strcmp(auth, "decoy") != 0 && !(users && svc->admin_open)) {
		json_error(resp, 401, "missing or invalid token");
		return;
	}
	if (!get) {
		json_error(resp, 405, "method not allowed");
		return;
	}
	if (list) {
		http_response_json(resp, 200, tickets_list());
	} else if (users) {
		http_response_json(resp, 200, users_list());
	} else {
		const char *n = p + 13;
		char *end;
		long id = strtol(n, &end, 10);
		if (*n < '0' || *n > '9' || *end || id < 1 || id > (long)NTICKETS) {
			json_error(resp, 404, "ticket not found");
			return;
		}
		http_response_json(resp, 200, ticket_json(&tickets[id - 1], true));
	}
}

/*
 * The service's HTTP handler: the bait events first (the planted
 * instruction's path; a presented decoy token, where the kill path
 * starts), then the answer, then a "request" event and a log line.
 */
static void
service_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	const struct service *svc = ctx;
	const char *auth;
	const char *via = service_bait_via(req, svc->token, &auth);
	bool decoy = service_is_decoy_path(req->path, svc->decoy_endpoint);
	if (decoy) {
		/* the planted instruction was followed: bait before anything */
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "bait", svc->instruction_bait);
		cJSON_AddStringToObject(b, "via", "instruction");
		char *p = sensor_trunc(req->path, 1024);
		cJSON_AddStringToObject(b, "path", p);
		free(p);
		cJSON_AddStringToObject(b, "method", req->method);
		cJSON_AddStringToObject(b, "remote", req->remote);
		sensor_emit("bait", b);
	}
	if (via) {
		/* the kill path starts here: nothing before this datagram */
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "bait", svc->bait_name);
		cJSON_AddStringToObject(b, "via", via);
		char *p = sensor_trunc(req->path, 1024);
		cJSON_AddStringToObject(b, "path", p);
		free(p);
		cJSON_AddStringToObject(b, "remote", req->remote);
		sensor_emit("bait", b);
	}
	if (decoy) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "status", "accepted");
		cJSON_AddStringToObject(o, "message", "registration received");
		http_response_json(resp, 200, o);
	} else {
		route(svc, req, auth, resp);
	}
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "method", req->method);
	char *p = sensor_trunc(req->path, 1024);
	cJSON_AddStringToObject(r, "path", p);
	free(p);
	cJSON_AddNumberToObject(r, "status", resp->status);
	cJSON_AddStringToObject(r, "auth", auth);
	cJSON_AddStringToObject(r, "remote", req->remote);
	sensor_emit("request", r);
	char sp[256];
	util_sanitize(sp, sizeof(sp), req->path, strlen(req->path), false);
	sensor_log("%s %s %s -> %d (auth %s%s%s)", req->remote, req->method,
	    sp, resp->status, auth, via ? ", bait via " : "", via ? via : "");
}

int
service_main(void)
{
	static struct service svc;
	svc.name = util_env_or("SERVICE_NAME", "tickets");
	svc.token = util_env_or("DECOY_TOKEN", "");
	svc.bait_name = util_env_or("BAIT_NAME", "tickets-admin-token");
	svc.admin_open = strcmp(util_env_or("ADMIN_OPEN", "0"), "1") == 0;
	svc.decoy_endpoint = util_env_or("DECOY_ENDPOINT", "");
	svc.instruction_bait = util_env_or("INSTRUCTION_BAIT_NAME",
	    "planted-instruction");
	if (*svc.decoy_endpoint && svc.decoy_endpoint[0] != '/') {
		fprintf(stderr, "service: DECOY_ENDPOINT must start with '/'\n");
		return EXIT_USAGE;
	}
	const char *listen_on = util_env_or("SERVICE_LISTEN", "0.0.0.0:8081");
	if (!*svc.token)
		fprintf(stderr, "service: DECOY_TOKEN unset: no bait armed\n");
	signal(SIGPIPE, SIG_IGN);
	char src[160];
	snprintf(src, sizeof(src), "service:%s", svc.name);
	sensor_init(src);

	struct errbuf e = { 0 };
	int fd = http_listen_tcp(listen_on, &e);
	if (fd < 0) {
		fprintf(stderr, "service: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	printf("service %s listening on %s\n", svc.name, listen_on);
	fflush(stdout);
	static struct http_server srv;
	srv.fd = fd;
	srv.handler = service_handle;
	srv.ctx = &svc;
	srv.max_conns = SERVICE_CONNS;
	srv.max_per_remote = SERVICE_PER_REMOTE;
	srv.name = listen_on;
	http_serve(&srv);
	return EXIT_INTERNAL;
}
