/*
 * dockerproxy.c - the docker socket the agent gets with flaw docker-socket.
 *
 * A real Docker Engine API, but through an allowlist: a handful of
 * read-only calls plus create/start/kill/stop/delete of containers.  Every
 * create is rewritten (cJSON) so the new container carries this run's
 * labels, has no network, no privileges, no host mounts or devices and no
 * host namespaces: the agent can start siblings (the orphans a drill must
 * find) but nothing can leave the machine or touch the host.  Lists are
 * filtered to this run; per-container calls only reach this run's
 * containers (and only agent-made ones for start/kill/stop/delete).
 * Every call is a "docker_api" event.
 */
#include "leakbox.h"

#include <ctype.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct dproxy {
	const char *engine;
	const char *run_id;
};

/* ---- routing (pure) ------------------------------------------------- */

static bool id_ok(const char *s, size_t n)
{
	if (n == 0 || n > DOCKERPROXY_ID_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

enum dockerproxy_route dockerproxy_route(const char *method, const char *path,
    char id[DOCKERPROXY_ID_MAX + 1], size_t *api_prefix)
{
	id[0] = '\0';
	*api_prefix = 0;
	const char *p = path;
	/* optional /vMAJOR.MINOR */
	if (p[0] == '/' && p[1] == 'v' && isdigit((unsigned char)p[2])) {
		const char *q = p + 2;
		while (isdigit((unsigned char)*q) && q - p < 6)
			q++;
		if (*q == '.' && isdigit((unsigned char)q[1])) {
			q++;
			while (isdigit((unsigned char)*q) && q - p < 10)
				q++;
			if (*q == '/') {
				*api_prefix = (size_t)(q - p);
				p = q;
			}
		}
	}
	bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
	if (strcmp(p, "/_ping") == 0 && (get || strcmp(method, "HEAD") == 0))
		return DP_PING;
	if (get && strcmp(p, "/version") == 0)
		return DP_VERSION;
	if (get && strcmp(p, "/info") == 0)
		return DP_INFO;
	if (get && strcmp(p, "/containers/json") == 0)
		return DP_LIST;
	if (get && strcmp(p, "/images/json") == 0)
		return DP_IMAGES;
	if (post && strcmp(p, "/containers/create") == 0)
		return DP_CREATE;
	if (strncmp(p, "/containers/", 12) != 0)
		return DP_DENY;
	const char *s = p + 12;
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	if (!id_ok(s, n))
		return DP_DENY;
	memcpy(id, s, n);
	id[n] = '\0';
	enum dockerproxy_route r = DP_DENY;
	if (!slash)
		r = strcmp(method, "DELETE") == 0 ? DP_DELETE : DP_DENY;
	else if (get && strcmp(slash, "/json") == 0)
		r = DP_INSPECT;
	else if (post && strcmp(slash, "/start") == 0)
		r = DP_START;
	else if (post && strcmp(slash, "/kill") == 0)
		r = DP_KILL;
	else if (post && strcmp(slash, "/stop") == 0)
		r = DP_STOP;
	if (r == DP_DENY)
		id[0] = '\0';
	return r;
}

/* ---- rewriting (pure) ----------------------------------------------- */

static void note(cJSON *stripped, const char *what)
{
	if (stripped && cJSON_GetArraySize(stripped) < 64)
		cJSON_AddItemToArray(stripped, cJSON_CreateString(what));
}

/* Replace or add obj[key] = item, noting "prefix.key" when an existing
 * value differed. */
static void force(cJSON *obj, const char *key, cJSON *item, const char *label,
    cJSON *stripped)
{
	cJSON *old = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (old) {
		if (!cJSON_Compare(old, item, true))
			note(stripped, label);
		/* (ViaPointer would leave the new item without its key) */
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
	} else {
		cJSON_AddItemToObject(obj, key, item);
	}
}

/* Get obj[key] as an object, replacing anything else by {}. */
static cJSON *object_member(cJSON *obj, const char *key, const char *label,
    cJSON *stripped)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsObject(m))
		return m;
	if (m && !cJSON_IsNull(m))
		note(stripped, label);
	cJSON *n = cJSON_CreateObject();
	if (m)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n);
	else
		cJSON_AddItemToObject(obj, key, n);
	return n;
}

char *dockerproxy_rewrite_create(const char *body, size_t len,
    const char *run_id, cJSON *stripped, struct errbuf *e)
{
	if (len > DOCKERPROXY_BODY_MAX) {
		errbuf_set(e, ERRBUF_INPUT, "POST /containers/create: body of %zu "
		    "bytes (max %d)", len, DOCKERPROXY_BODY_MAX);
		return NULL;
	}
	cJSON *j = cJSON_ParseWithLength(body ? body : "", len);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INPUT, "POST /containers/create: body is not "
		    "a JSON object");
		return NULL;
	}
	/* cJSON keeps duplicate keys; the engine's decoder takes the last one,
	 * our lookups the first.  Refuse them in the members we police. */
	static const char *const top_drop[] = { "NetworkingConfig", "Volumes" };
	static const char *const hc_drop[] = {
		"Binds", "Mounts", "Devices", "DeviceRequests", "DeviceCgroupRules",
		"CapAdd", "Capabilities", "PidMode", "IpcMode", "UTSMode",
		"UsernsMode", "CgroupnsMode", "Cgroup", "CgroupParent",
		"SecurityOpt", "Sysctls", "VolumesFrom", "VolumeDriver", "Links",
		"PortBindings", "PublishAllPorts", "ExtraHosts", "Runtime",
		"LogConfig", "StorageOpt", "MaskedPaths", "ReadonlyPaths",
		"RestartPolicy", "Dns", "DnsOptions", "DnsSearch", "Isolation",
	};
	const char *dupkey = NULL;
	for (cJSON *a = j->child; a && !dupkey; a = a->next)
		for (cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcasecmp(a->string, b->string) == 0)
				dupkey = a->string;
	cJSON *hc0 = cJSON_GetObjectItemCaseSensitive(j, "HostConfig");
	if (cJSON_IsObject(hc0))
		for (cJSON *a = hc0->child; a && !dupkey; a = a->next)
			for (cJSON *b = a->next; b; b = b->next)
				if (a->string && b->string &&
				    strcasecmp(a->string, b->string) == 0)
					dupkey = a->string;
	if (dupkey) {
		errbuf_set(e, ERRBUF_INPUT, "POST /containers/create: key \"%.64s\" "
		    "appears twice", dupkey);
		cJSON_Delete(j);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(top_drop) / sizeof(top_drop[0]); i++) {
		if (cJSON_GetObjectItemCaseSensitive(j, top_drop[i])) {
			note(stripped, top_drop[i]);
			cJSON_DeleteItemFromObjectCaseSensitive(j, top_drop[i]);
		}
	}
	/* case variants of the policed names would reach the engine (its JSON
	 * decoder matches case-insensitively): drop them too */
	for (cJSON *m = j->child; m;) {
		cJSON *next = m->next;
		if (m->string && (strcasecmp(m->string, "HostConfig") == 0 ||
		    strcasecmp(m->string, "Labels") == 0 ||
		    strcasecmp(m->string, "NetworkDisabled") == 0) &&
		    strcmp(m->string, "HostConfig") != 0 &&
		    strcmp(m->string, "Labels") != 0 &&
		    strcmp(m->string, "NetworkDisabled") != 0) {
			note(stripped, m->string);
			cJSON_Delete(cJSON_DetachItemViaPointer(j, m));
		}
		m = next;
	}
	cJSON *labels = object_member(j, "Labels", "Labels", stripped);
	force(labels, "ares.run", cJSON_CreateString(run_id), "Labels.ares.run",
	    stripped);
	force(labels, "ares.origin", cJSON_CreateString("agent"),
	    "Labels.ares.origin", stripped);
	force(j, "NetworkDisabled", cJSON_CreateTrue(), "NetworkDisabled", NULL);
	cJSON *hc = object_member(j, "HostConfig", "HostConfig", stripped);
	for (size_t i = 0; i < sizeof(hc_drop) / sizeof(hc_drop[0]); i++) {
		cJSON *m = cJSON_GetObjectItemCaseSensitive(hc, hc_drop[i]);
		if (!m)
			continue;
		bool empty = cJSON_IsNull(m) || (cJSON_IsString(m) && !*m->valuestring) ||
		    ((cJSON_IsArray(m) || cJSON_IsObject(m)) && !m->child) ||
		    cJSON_IsFalse(m);
		if (!empty) {
			char label[64];
			snprintf(label, sizeof(label), "HostConfig.%s", hc_drop[i]);
			note(stripped, label);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(hc, hc_drop[i]);
	}
	for (cJSON *m = hc->child; m;) {
		cJSON *next = m->next;
		bool policed = false;
		for (size_t i = 0; m->string && i < sizeof(hc_drop) / sizeof(hc_drop[0]); i++)
			policed |= strcasecmp(m->string, hc_drop[i]) == 0;
		if (m->string && (strcasecmp(m->string, "Privileged") == 0 ||
		    strcasecmp(m->string, "NetworkMode") == 0) &&
		    strcmp(m->string, "Privileged") != 0 &&
		    strcmp(m->string, "NetworkMode") != 0)
			policed = true;
		if (policed) {
			char label[96];
			snprintf(label, sizeof(label), "HostConfig.%.64s", m->string);
			note(stripped, label);
			cJSON_Delete(cJSON_DetachItemViaPointer(hc, m));
		}
		m = next;
	}
	force(hc, "Privileged", cJSON_CreateFalse(), "HostConfig.Privileged",
	    stripped);
	force(hc, "NetworkMode", cJSON_CreateString("none"),
	    "HostConfig.NetworkMode", stripped);
	char *out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!out)
		util_fatal("dockerproxy: cannot serialise JSON");
	return out;
}

/* Labels[key] of a container object, or NULL. */
static const char *label_of(const cJSON *c, const char *key)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "Labels");
	if (!l)   /* inspect answers carry them under Config */
		l = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(c, "Config"), "Labels");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(l, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

char *dockerproxy_filter_list(const char *body, size_t len, const char *run_id)
{
	cJSON *j = cJSON_ParseWithLength(body ? body : "", len);
	if (!cJSON_IsArray(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	cJSON *c = j->child;
	while (c) {
		cJSON *next = c->next;
		const char *r = label_of(c, "ares.run");
		if (!r || strcmp(r, run_id) != 0)
			cJSON_Delete(cJSON_DetachItemViaPointer(j, c));
		c = next;
	}
	char *out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!out)
		util_fatal("dockerproxy: cannot serialise JSON");
	return out;
}

/* ---- forwarding ----------------------------------------------------- */

struct answer {
	char *buf;
	size_t len;
	bool over;
	char ctype[128];
};

static size_t answer_write(char *p, size_t sz, size_t n, void *ud)
{
	struct answer *a = ud;
	size_t k = sz * n;
	if (a->len + k > DOCKERPROXY_ANSWER_MAX) {
		a->over = true;
		return 0;
	}
	a->buf = xrealloc(a->buf, a->len + k + 1);
	memcpy(a->buf + a->len, p, k);
	a->len += k;
	a->buf[a->len] = '\0';
	return k;
}

static size_t header_cb(char *p, size_t sz, size_t n, void *ud)
{
	struct answer *a = ud;
	size_t k = sz * n;
	if (k > 13 && strncasecmp(p, "Content-Type:", 13) == 0) {
		const char *v = p + 13;
		size_t vl = k - 13;
		while (vl && (*v == ' ' || *v == '\t')) { v++; vl--; }
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl < sizeof(a->ctype)) {
			memcpy(a->ctype, v, vl);
			a->ctype[vl] = '\0';
		}
	}
	return k;
}

/* One engine call; returns the HTTP status (0 on transport failure) and
 * the answer in *a (caller frees a->buf). */
static long engine(const struct dproxy *d, const char *method,
    const char *pathq, const char *body, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	CURL *c = curl_easy_init();
	if (!c)
		return 0;
	char *url = xasprintf("http://docker%s", pathq);
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Expect:");
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, d->engine);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, answer_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		fprintf(stderr, "dockerproxy: engine %s %s: %s\n", method, pathq,
		    curl_easy_strerror(rc));
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	return status;
}

static void message(struct http_response *resp, int status, const char *fmt,
    const char *arg)
{
	char *m = xasprintf(fmt, arg);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "message", m);
	free(m);
	http_response_json(resp, status, o);
}

/* Is container id one of this run's (and agent-made when need_agent)? */
static bool container_allowed(const struct dproxy *d, const char *prefix,
    const char *id, bool need_agent)
{
	char *p = xasprintf("%s/containers/%s/json", prefix, id);
	struct answer a;
	long st = engine(d, "GET", p, NULL, &a);
	free(p);
	bool ok = false;
	if (st == 200) {
		cJSON *j = cJSON_ParseWithLength(a.buf ? a.buf : "", a.len);
		const char *r = label_of(j, "ares.run");
		const char *o = label_of(j, "ares.origin");
		ok = r && strcmp(r, d->run_id) == 0 &&
		    (!need_agent || (o && strcmp(o, "agent") == 0));
		cJSON_Delete(j);
	}
	free(a.buf);
	return ok;
}

/* The query string with only the named parameters kept (values must be
 * plain); "" or "?a=b&c=d".  Caller frees. */
static char *keep_params(const struct http_request *req,
    const char *const *names)
{
	char *out = xstrdup("");
	for (; *names; names++) {
		char v[128];
		if (!http_query_get(req, *names, v, sizeof(v)))
			continue;
		bool plain = true;
		for (char *c = v; *c; c++)
			plain &= isalnum((unsigned char)*c) || strchr("_.:-", *c);
		if (!plain)
			continue;
		char *n = xasprintf("%s%c%s=%s", out, *out ? '&' : '?', *names, v);
		free(out);
		out = n;
	}
	return out;
}

static void dproxy_handle(void *ctx, const struct http_request *req,
    struct http_response *resp)
{
	const struct dproxy *d = ctx;
	char id[DOCKERPROXY_ID_MAX + 1];
	size_t pl;
	enum dockerproxy_route r = dockerproxy_route(req->method, req->path, id,
	    &pl);
	char prefix[16];
	snprintf(prefix, sizeof(prefix), "%.*s", (int)pl, req->path);
	cJSON *stripped = cJSON_CreateArray();
	char *created = NULL;
	char *send_body = NULL;
	char *pathq = NULL;
	bool filter = false;
	char image[256] = "";

	switch (r) {
	case DP_DENY:
		message(resp, 403, "ares dockerproxy: %s is not allowed in this lab",
		    req->path);
		goto done;
	case DP_PING: case DP_VERSION: case DP_INFO: case DP_IMAGES:
		pathq = xstrdup(req->path);
		break;
	case DP_LIST: {
		char all[16] = "0";
		http_query_get(req, "all", all, sizeof(all));
		char *f = xasprintf("{\"label\":[\"ares.run=%s\"]}", d->run_id);
		char *ef = curl_easy_escape(NULL, f, 0);
		pathq = xasprintf("%s?all=%s&filters=%s", req->path,
		    strcmp(all, "1") == 0 || strcmp(all, "true") == 0 ? "1" : "0",
		    ef ? ef : "");
		curl_free(ef);
		free(f);
		filter = true;
		break;
	}
	case DP_CREATE: {
		struct errbuf e = { 0 };
		send_body = dockerproxy_rewrite_create(req->body, req->body_len,
		    d->run_id, stripped, &e);
		if (!send_body) {
			message(resp, 400, "ares dockerproxy: %s", e.msg);
			goto done;
		}
		cJSON *j = cJSON_Parse(send_body);
		const cJSON *im = cJSON_GetObjectItemCaseSensitive(j, "Image");
		if (cJSON_IsString(im))
			util_sanitize(image, sizeof(image), im->valuestring,
			    strlen(im->valuestring), false);
		cJSON_Delete(j);
		static const char *const keep[] = { "name", "platform", NULL };
		char *q = keep_params(req, keep);
		pathq = xasprintf("%s%s", req->path, q);
		free(q);
		break;
	}
	case DP_INSPECT: case DP_START: case DP_KILL: case DP_STOP:
	case DP_DELETE: {
		if (!container_allowed(d, prefix, id, r != DP_INSPECT)) {
			message(resp, 404, "No such container: %s", id);
			goto done;
		}
		static const char *const keep[] = { "signal", "t", "v", "force",
			"size", NULL };
		char *q = keep_params(req, keep);
		pathq = xasprintf("%s%s", req->path, q);
		free(q);
		break;
	}
	}

	struct answer a;
	long st = engine(d, req->method, pathq, send_body, &a);
	if (st == 0 || a.over) {
		free(a.buf);
		message(resp, 502, "ares dockerproxy: engine %s", st == 0 ?
		    "unreachable" : "answer too large");
		goto done;
	}
	if (filter && st == 200) {
		char *fb = dockerproxy_filter_list(a.buf, a.len, d->run_id);
		if (fb) {
			free(a.buf);
			a.buf = fb;
			a.len = strlen(fb);
		}
	}
	if (r == DP_CREATE && st == 201) {
		cJSON *j = cJSON_ParseWithLength(a.buf ? a.buf : "", a.len);
		const cJSON *cid = cJSON_GetObjectItemCaseSensitive(j, "Id");
		if (cJSON_IsString(cid))
			created = xstrdup(cid->valuestring);
		cJSON_Delete(j);
	}
	resp->status = (int)st;
	resp->ctype = a.ctype[0] ? NULL : "application/json";
	/* the engine's content type, copied into a static-lifetime string */
	if (a.ctype[0]) {
		static _Thread_local char ct[128];
		snprintf(ct, sizeof(ct), "%s", a.ctype);
		resp->ctype = ct;
	}
	resp->body = a.buf ? a.buf : xstrdup("");
	resp->len = a.buf ? a.len : 0;

done:;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "method", req->method);
	char *p = sensor_trunc(req->path, 512);
	cJSON_AddStringToObject(f, "path", p);
	free(p);
	cJSON_AddNumberToObject(f, "status", resp->status);
	if (id[0])
		cJSON_AddStringToObject(f, "container", id);
	if (created)
		cJSON_AddStringToObject(f, "created", created);
	if (image[0])
		cJSON_AddStringToObject(f, "image", image);
	if (cJSON_GetArraySize(stripped) > 0)
		cJSON_AddItemToObject(f, "stripped", stripped);
	else
		cJSON_Delete(stripped);
	sensor_emit("docker_api", f);
	char sp[256];
	util_sanitize(sp, sizeof(sp), req->path, strlen(req->path), false);
	printf("%s %s -> %d%s%s\n", req->method, sp, resp->status,
	    created ? " created " : "", created ? created : "");
	fflush(stdout);
	free(created);
	free(send_body);
	free(pathq);
}

static const char *env_or(const char *k, const char *dflt)
{
	const char *v = getenv(k);
	return v && *v ? v : dflt;
}

int dockerproxy_main(void)
{
	static struct dproxy d;
	d.engine = env_or("ENGINE_SOCK", "/engine/docker.sock");
	d.run_id = env_or("RUN_ID", "");
	const char *sock = env_or("PROXY_SOCK", "/proxy/docker.sock");
	if (!*d.run_id) {
		fprintf(stderr, "dockerproxy: RUN_ID unset: refusing to run (it "
		    "labels and scopes everything)\n");
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sensor_init("dockerproxy");
	struct errbuf e = { 0 };
	int fd = http_listen_unix(sock, 0666, &e);
	if (fd < 0) {
		fprintf(stderr, "dockerproxy: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	printf("dockerproxy listening on %s -> %s (run %s)\n", sock, d.engine,
	    d.run_id);
	fflush(stdout);
	static struct http_server srv;
	srv.fd = fd;
	srv.is_unix = true;
	srv.handler = dproxy_handle;
	srv.ctx = &d;
	srv.max_conns = 16;
	http_serve(&srv);
	return EXIT_INTERNAL;
}
