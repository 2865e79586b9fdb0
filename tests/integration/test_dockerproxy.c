/*
 * test_dockerproxy.c - the agent's Docker socket proxy against the real
 * engine.
 *
 * Runs the real proxy (ARES_BUILDDIR/ares-lab dockerproxy) on the host as
 * a child process: PROXY_SOCK in a fresh 0700 temp dir, ENGINE_SOCK the
 * engine's unix socket, RUN_ID a fresh test id, LAB_IMAGE the lab image
 * (imported with lab_image_ensure), EVIDENCE the proxy's chain in the temp
 * dir, BUS unset.  Then speaks HTTP to the proxy socket with libcurl and
 * checks, against the real engine, that:
 *   - create bodies with member names that fold to known ones (U+017F,
 *     U+212A, ASCII case), duplicates, top-level HostConfig fields and the
 *     rest are refused (400) and nothing privileged exists afterwards, and
 *     that a benign create gets every limit the proxy forces;
 *   - a sibling named like an outside container's ID prefix cannot get that
 *     outside container removed, however the DELETEs interleave;
 *   - lab-made containers cannot be inspected or touched, and no answer of
 *     the proxy carries their environment;
 *   - OOM tweaks, a huge /dev/shm, an exec tmpfs and over-cap limits are
 *     refused and recorded as refused in the proxy's chain;
 *   - the per-run sibling cap holds;
 *   - no answer is an existence oracle for containers outside the lab:
 *     a name taken outside is free for the agent (siblings live in the
 *     run's namespace, ares-<run>-a-<name>, and show the agent's name),
 *     every reference that names no sibling of the run (ambiguous
 *     prefixes, outside ids and names) answers exactly the 404 of an
 *     unknown one, and engine errors are answered in the proxy's words.
 * Every container the test makes carries ares.test=<id> or
 * ares.run=<id>; all are removed (also on failure) and the last test
 * asserts nothing is left.
 *
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#define SIBLINGS_MAX 8          /* the proxy's per-run cap */
#define RACE_ROUNDS  4
#define RACE_THREADS 8
#define RACE_REQUESTS 200

struct tenv {
	struct docker *d;
	char *image;                /* the lab image reference */
	char run_id[64];            /* the proxy's RUN_ID = the test id */
	char dir[256];              /* temp dir (0700) */
	char sock[320];             /* PROXY_SOCK */
	char evidence[320];         /* EVIDENCE */
	char log[320];              /* the proxy's stdout/stderr */
	pid_t proxy;
};

static struct tenv T;

/* ---- helpers ------------------------------------------------------- */

struct buf {
	char *p;
	size_t n;
};

static size_t
buf_write(char *p, size_t sz, size_t n, void *ud)
{
	struct buf *b = ud;
	size_t k = sz * n;

	b->p = xrealloc(b->p, b->n + k + 1);
	memcpy(b->p + b->n, p, k);
	b->n += k;
	b->p[b->n] = '\0';
	return k;
}

/* One request to the proxy socket.  Returns the answer body (caller frees,
 * never NULL) and the status in *status (0 on transport failure). */
static char *
proxy_req(const char *method, const char *target, const char *body,
    long *status)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct buf b = { 0 };
	char *url = xasprintf("http://docker%s", target);

	assert_non_null(c);
	h = curl_slist_append(h, "Expect:");
	if (body != NULL)
		h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, T.sock);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	*status = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	return b.p != NULL ? b.p : xstrdup("");
}

/* The engine's answer to method path (versioned by the client) with the
 * status in *status.  Caller frees. */
static char *
engine_req(const char *method, const char *path, const char *body,
    long *status)
{
	struct docker_response r;
	struct errbuf e = { 0 };

	if (docker_request(T.d, method, path, body, body ? strlen(body) : 0,
	    &r, &e) == -1)
		fail_msg("engine %s %s: %s", method, path, e.msg);
	*status = r.status;
	return r.body;
}

/* Inspect id directly on the engine; NULL when it does not exist. */
static cJSON *
engine_inspect(const char *id)
{
	long st;
	char *path = xasprintf("/containers/%s/json", id);
	char *b = engine_req("GET", path, NULL, &st);
	cJSON *j = NULL;

	free(path);
	if (st == 200)
		j = cJSON_Parse(b);
	else if (st != 404)
		fail_msg("engine inspect %s: HTTP %ld: %s", id, st, b);
	free(b);
	return j;
}

/* Create a container directly on the engine (the lab image, sleeping),
 * with the given labels and env (NULL-terminated "K=V", may be NULL).
 * Returns the full id (caller frees). */
static char *
engine_create(const char *name, cJSON *labels, const char *const *env)
{
	cJSON *b = cJSON_CreateObject(), *cmd, *hc, *ev;
	char *body, *path, *ans, *id;
	long st;
	cJSON *j;

	cJSON_AddStringToObject(b, "Image", T.image);
	cmd = cJSON_AddArrayToObject(b, "Cmd");
	cJSON_AddItemToArray(cmd, cJSON_CreateString("sleep"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("300"));
	cJSON_AddItemToObject(b, "Labels", labels);
	if (env != NULL) {
		ev = cJSON_AddArrayToObject(b, "Env");
		for (; *env != NULL; env++)
			cJSON_AddItemToArray(ev, cJSON_CreateString(*env));
	}
	hc = cJSON_AddObjectToObject(b, "HostConfig");
	cJSON_AddStringToObject(hc, "NetworkMode", "none");
	cJSON_AddNumberToObject(hc, "Memory", 32 * 1024 * 1024);
	body = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	path = xasprintf("/containers/create?name=%s", name);
	ans = engine_req("POST", path, body, &st);
	free(path);
	free(body);
	if (st != 201)
		fail_msg("engine create %s: HTTP %ld: %s", name, st, ans);
	j = cJSON_Parse(ans);
	free(ans);
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "Id")));
	id = xstrdup(cJSON_GetObjectItemCaseSensitive(j, "Id")->valuestring);
	cJSON_Delete(j);
	return id;
}

/* The containers carrying label "k=v" (array, caller deletes). */
static cJSON *
by_label(const char *k, const char *v)
{
	struct errbuf e = { 0 };
	char *label = xasprintf("%s=%s", k, v);
	cJSON *l = docker_containers_by_label(T.d, label, &e);

	free(label);
	if (l == NULL)
		fail_msg("list %s=%s: %s", k, v, e.msg);
	return l;
}

/* Remove (force) every container of this test: ares.run=<id> or
 * ares.test=<id>.  Never fails the test (used on every path). */
static void
sweep(void)
{
	static const char *const keys[] = { "ares.run", "ares.test" };
	struct errbuf e = { 0 };

	if (T.d == NULL || T.run_id[0] == '\0')
		return;
	for (size_t k = 0; k < 2; k++) {
		char *label = xasprintf("%s=%s", keys[k], T.run_id);
		cJSON *l = docker_containers_by_label(T.d, label, &e), *c;

		free(label);
		cJSON_ArrayForEach(c, l) {
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "Id");
			if (cJSON_IsString(id))
				(void)docker_container_remove(T.d, id->valuestring,
				    true, &e);
		}
		cJSON_Delete(l);
	}
}

/* How many containers this run has (by ares.run). */
static int
run_count(void)
{
	cJSON *l = by_label("ares.run", T.run_id);
	int n = cJSON_GetArraySize(l);

	cJSON_Delete(l);
	return n;
}

/* Create through the proxy; the new id (caller frees) when the answer was
 * 201, else NULL.  *status gets the status; *answer (may be NULL) the
 * body (caller frees). */
static char *
proxy_create(const char *query, const char *body, long *status,
    char **answer)
{
	char *target = xasprintf("/containers/create%s", query ? query : "");
	char *a = proxy_req("POST", target, body, status);
	char *id = NULL;

	free(target);
	if (*status == 201) {
		cJSON *j = cJSON_Parse(a);
		const cJSON *i = cJSON_GetObjectItemCaseSensitive(j, "Id");
		if (cJSON_IsString(i))
			id = xstrdup(i->valuestring);
		cJSON_Delete(j);
	}
	if (answer != NULL)
		*answer = a;
	else
		free(a);
	return id;
}

/* A create body: the lab image, sleeping, plus the JSON members in extra
 * (",..." or "").  Caller frees. */
static char *
body_with(const char *extra)
{
	return xasprintf("{\"Image\":\"%s\",\"Cmd\":[\"sleep\",\"300\"]%s}",
	    T.image, extra);
}

static bool
is_full_id(const char *s)
{
	return s != NULL && strlen(s) == 64 &&
	    strspn(s, "0123456789abcdef") == 64;
}

/* The parsed lines of the proxy's chain (array of objects; caller deletes);
 * the chain is verified first. */
static cJSON *
chain_lines(void)
{
	struct evidence_verify_result v;
	struct errbuf e = { 0 };
	cJSON *arr = cJSON_CreateArray();
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (evidence_verify_file(T.evidence, T.run_id, &v, &e) == -1)
		fail_msg("verify %s: %s", T.evidence, e.msg);
	if (!v.ok)
		fail_msg("chain %s does not verify: %s", T.evidence, v.reason);
	f = fopen(T.evidence, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		cJSON *j = cJSON_Parse(line);
		if (j != NULL)
			cJSON_AddItemToArray(arr, j);
	}
	free(line);
	fclose(f);
	return arr;
}

static const char *
jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A docker_api event with this status whose "refused" mentions needle
 * (and, when path is set, on that path)?  Returns it or NULL. */
static const cJSON *
refused_event(const cJSON *lines, int status, const char *needle)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, lines) {
		const char *ty = jstr(l, "type"), *r = jstr(l, "refused");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(l, "status");
		if (ty && strcmp(ty, "docker_api") == 0 && r && strstr(r, needle) &&
		    cJSON_IsNumber(st) && (int)st->valuedouble == status)
			return l;
	}
	return NULL;
}

/* The value of hex digit c (0 for anything else). */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return 0;
}

/* The answer of the proxy for a reference that names nothing the agent
 * may see: exactly this, whatever the reference and whatever the engine
 * knows about it.  Caller frees. */
static char *
missing_text(const char *ref)
{
	return xasprintf("{\"message\":\"No such container: %s\"}", ref);
}

/* Does ans hold the id (in full or its first 12 hex)? */
static bool
holds_id(const char *ans, const char *id)
{
	char pre[13];

	snprintf(pre, sizeof pre, "%.12s", id);
	return strstr(ans, id) != NULL || strstr(ans, pre) != NULL;
}

/* Every per-container call on ref answers exactly missing_text(ref)
 * (which holds nothing but the reference itself).  Returns the number of
 * wrong answers (each printed). */
static int
expect_missing(const char *ref)
{
	static const char *const ops[][2] = {
		{ "GET", "/containers/%s/json" },
		{ "GET", "/v1.24/containers/%s/json" },
		{ "POST", "/containers/%s/start" },
		{ "POST", "/containers/%s/kill" },
		{ "POST", "/containers/%s/stop?t=0" },
		{ "DELETE", "/containers/%s?force=1" },
	};
	char *want = missing_text(ref);
	int wrong = 0;
	long st;

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		char *t = xasprintf(ops[i][1], ref);
		char *ans = proxy_req(ops[i][0], t, NULL, &st);

		if (st != 404 || strcmp(ans, want) != 0) {
			print_message("%s %s: HTTP %ld %.300s (want 404 %s)\n",
			    ops[i][0], t, st, ans, want);
			wrong++;
		}
		free(ans);
		free(t);
	}
	free(want);
	return wrong;
}

/* The engine-side name of the agent's name: the run's namespace.  Caller
 * frees. */
static char *
engine_name_of(const char *name)
{
	return xasprintf("/ares-%s-a-%s", T.run_id, name);
}

/* The list entry (GET /containers/json?all=1 through the proxy) of id, as
 * its Names serialised ("[\"/foo\"]"), or NULL when it is not listed.
 * *leak is set when the list holds the id avoid (may be NULL). */
static char *
listed_names(const char *id, const char *avoid, bool *leak)
{
	long st;
	char *ans = proxy_req("GET", "/containers/json?all=1", NULL, &st);
	cJSON *l = cJSON_Parse(ans), *c;
	char *names = NULL;

	if (avoid != NULL && holds_id(ans, avoid))
		*leak = true;
	cJSON_ArrayForEach(c, l) {
		const char *cid = jstr(c, "Id");
		if (st == 200 && cid != NULL && strcmp(cid, id) == 0)
			names = cJSON_PrintUnformatted(
			    cJSON_GetObjectItemCaseSensitive(c, "Names"));
	}
	cJSON_Delete(l);
	free(ans);
	return names;
}

/* A docker_api event on path with this status that records the engine's
 * own status (engine_status) and text (engine_message holding needle)? */
static const cJSON *
engine_event(const cJSON *lines, const char *path, int status,
    int engine_status, const char *needle)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, lines) {
		const char *ty = jstr(l, "type"), *p = jstr(l, "path");
		const char *m = jstr(l, "engine_message");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(l, "status");
		const cJSON *es = cJSON_GetObjectItemCaseSensitive(l,
		    "engine_status");
		if (ty && strcmp(ty, "docker_api") == 0 && p &&
		    strcmp(p, path) == 0 && cJSON_IsNumber(st) &&
		    (int)st->valuedouble == status && cJSON_IsNumber(es) &&
		    (int)es->valuedouble == engine_status && m &&
		    strstr(m, needle) != NULL)
			return l;
	}
	return NULL;
}

/* ---- setup --------------------------------------------------------- */

static const char *
engine_socket(void)
{
	const char *h = getenv("DOCKER_HOST");

	if (h != NULL && strncmp(h, "unix://", 7) == 0)
		return h + 7;
	return "/var/run/docker.sock";
}

/* Start the proxy as a child (dies with us) and wait for its socket. */
static void
start_proxy(void)
{
	char *env[8];
	char *argv[] = { NULL, "dockerproxy", NULL };
	char *bin = xasprintf("%s/ares-lab", ARES_BUILDDIR);
	long st = 0;

	env[0] = xasprintf("PROXY_SOCK=%s", T.sock);
	env[1] = xasprintf("ENGINE_SOCK=%s", engine_socket());
	env[2] = xasprintf("RUN_ID=%s", T.run_id);
	env[3] = xasprintf("LAB_IMAGE=%s", T.image);
	env[4] = xasprintf("EVIDENCE=%s", T.evidence);
	env[5] = xasprintf("PATH=%s", getenv("PATH") ? getenv("PATH") : "/bin");
	env[6] = xasprintf("OWNER=%s", gc_owner());
	env[7] = NULL;
	argv[0] = bin;
	T.proxy = fork();
	assert_true(T.proxy >= 0);
	if (T.proxy == 0) {
		FILE *lf = fopen(T.log, "w");
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (lf != NULL) {
			dup2(fileno(lf), 1);
			dup2(fileno(lf), 2);
		}
		execve(bin, argv, env);
		_exit(127);
	}
	for (int i = 0; i < 8; i++)
		free(env[i]);
	free(bin);
	for (int i = 0; i < 100; i++) {
		struct stat sb;
		int status;

		if (waitpid(T.proxy, &status, WNOHANG) == T.proxy) {
			T.proxy = 0;
			fail_msg("the proxy exited (status %d), see %s", status,
			    T.log);
		}
		if (stat(T.sock, &sb) == 0) {
			free(proxy_req("GET", "/_ping", NULL, &st));
			if (st == 200)
				return;
		}
		usleep(100 * 1000);
	}
	fail_msg("the proxy did not answer on %s (see %s)", T.sock, T.log);
}

static int
group_setup(void **state)
{
	struct errbuf e = { 0 };
	uint8_t rnd[6];
	char hex[13];
	char tmpl[] = "/tmp/ares-dproxy-XXXXXX";

	(void)state;
	if (lab_image_ensure(T.d, &T.image, &e) == -1) {
		fprintf(stderr, "lab image: %s\n", e.msg);
		return -1;
	}
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(T.run_id, sizeof T.run_id, "dproxy-%s", hex);
	if (mkdtemp(tmpl) == NULL)
		return -1;
	if (chmod(tmpl, 0700) == -1)
		return -1;
	snprintf(T.dir, sizeof T.dir, "%s", tmpl);
	snprintf(T.sock, sizeof T.sock, "%s/docker.sock", T.dir);
	snprintf(T.evidence, sizeof T.evidence, "%s/dockerproxy.jsonl", T.dir);
	snprintf(T.log, sizeof T.log, "%s/proxy.log", T.dir);
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	if (T.proxy > 0) {
		kill(T.proxy, SIGTERM);
		(void)waitpid(T.proxy, NULL, 0);
		T.proxy = 0;
	}
	sweep();
	if (T.dir[0] != '\0') {
		if (getenv("ARES_KEEP_TMP") == NULL) {
			unlink(T.sock);
			unlink(T.evidence);
			unlink(T.log);
			rmdir(T.dir);
		} else {
			fprintf(stderr, "kept %s\n", T.dir);
		}
	}
	free(T.image);
	T.image = NULL;
	return 0;
}

/* ---- tests --------------------------------------------------------- */

static void
test_start(void **state)
{
	(void)state;
	start_proxy();
}

#define NEED_PROXY() do { \
	if (T.proxy <= 0) \
		fail_msg("the proxy is not running"); \
	sweep(); \
} while (0)

/* Nothing of this run may hold host mounts, privileges or host
 * namespaces.  Returns the number of offending containers (printed). */
static int
count_unconfined(void)
{
	cJSON *l = by_label("ares.run", T.run_id), *c;
	int bad = 0;

	cJSON_ArrayForEach(c, l) {
		const char *id = jstr(c, "Id");
		cJSON *in = id ? engine_inspect(id) : NULL;
		const cJSON *hc = cJSON_GetObjectItemCaseSensitive(in, "HostConfig");
		const cJSON *binds = cJSON_GetObjectItemCaseSensitive(hc, "Binds");
		const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(in, "Mounts");
		const cJSON *capadd = cJSON_GetObjectItemCaseSensitive(hc, "CapAdd");
		const char *nm = jstr(hc, "NetworkMode"), *pm = jstr(hc, "PidMode");
		const char *ipc = jstr(hc, "IpcMode"), *uts = jstr(hc, "UTSMode");

		if (in == NULL)
			continue;
		if (cJSON_GetArraySize(binds) > 0 || cJSON_GetArraySize(mounts) > 0 ||
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hc,
		    "Privileged")) || cJSON_GetArraySize(capadd) > 0 ||
		    (nm && strcmp(nm, "none") != 0) || (pm && pm[0]) ||
		    (ipc && strcmp(ipc, "host") == 0) || (uts && uts[0])) {
			char *s = cJSON_PrintUnformatted(hc);
			print_message("UNCONFINED sibling %.12s: %.600s\n", id, s);
			free(s);
			bad++;
		}
		cJSON_Delete(in);
	}
	cJSON_Delete(l);
	return bad;
}

/* Finding 1: names that fold to known members (the engine matches struct
 * fields with Unicode simple case folding), duplicates, top-level
 * HostConfig fields and everything unknown: 400, and nothing unconfined
 * is created. */
static void
test_fold_payloads(void **state)
{
	static const char *const extra[] = {
		/* U+017F LATIN SMALL LETTER LONG S folds to 's' */
		",\"Ho\\u017ftConfig\":{\"Binds\":[\"/:/hostfs\"],\"Privileged\":true,"
		    "\"PidMode\":\"host\",\"CapAdd\":[\"ALL\"]}",
		",\"Ho\xc5\xbftConfig\":{\"Privileged\":true}",
		",\"HostConfig\":{\"Bind\\u017f\":[\"/:/hostfs\"]}",
		/* U+212A KELVIN SIGN folds to 'k' */
		",\"HostConfig\":{\"Networ\\u212aMode\":\"host\"}",
		",\"HostConfig\":{\"Privileged\\u0000\":true}",
		/* ASCII case variants */
		",\"hostconfig\":{\"Privileged\":true}",
		",\"HostConfig\":{\"privileged\":true,\"binds\":[\"/:/hostfs\"]}",
		",\"HOSTCONFIG\":{\"NetworkMode\":\"host\"}",
		/* duplicates, also equal up to case or folding */
		",\"HostConfig\":{},\"HostConfig\":{\"Privileged\":true}",
		",\"HostConfig\":{},\"hostConfig\":{\"Privileged\":true}",
		",\"HostConfig\":{\"Memory\":33554432,\"memory\":0}",
		/* top-level HostConfig fields (old API decoding) */
		",\"Binds\":[\"/:/hostfs\"]",
		",\"Privileged\":true",
		",\"NetworkMode\":\"host\"",
		",\"PidMode\":\"host\"",
		",\"CapAdd\":[\"SYS_ADMIN\"]",
		/* members the proxy never takes from the agent */
		",\"NetworkingConfig\":{\"EndpointsConfig\":{\"host\":{}}}",
		",\"Volumes\":{\"/hostfs\":{}}",
		",\"HostConfig\":{\"Binds\":[\"/:/hostfs\"]}",
		",\"HostConfig\":{\"Privileged\":true}",
		",\"HostConfig\":{\"NetworkMode\":\"host\"}",
		",\"HostConfig\":{\"PidMode\":\"host\"}",
		",\"HostConfig\":{\"CapAdd\":[\"ALL\"]}",
		",\"HostConfig\":{\"Mounts\":[{\"Type\":\"bind\",\"Source\":\"/\","
		    "\"Target\":\"/hostfs\"}]}",
		",\"HostConfig\":{\"Devices\":[{\"PathOnHost\":\"/dev/mem\","
		    "\"PathInContainer\":\"/dev/mem\",\"CgroupPermissions\":\"rwm\"}]}",
		",\"Labels\":{\"ares.run\":\"other-run\"}",
		",\"Labels\":{\"ares.origin\":\"lab\"}",
		",\"User\":\"0\"",
		",\"User\":\"root\"",
		",\"Unknown\":1",
		",\"Tty\":\"yes\"",
	};
	char *whole[4];
	int wrong = 0;
	long st;

	(void)state;
	NEED_PROXY();
	/* whole bodies: another image (host images may hold secrets),
	 * trailing bytes (a second object, garbage), not an object */
	whole[0] = xstrdup("{\"Image\":\"busybox\",\"Cmd\":[\"sh\"]}");
	whole[1] = xasprintf("{\"Image\":\"%s\"} {\"HostConfig\":"
	    "{\"Privileged\":true}}", T.image);
	whole[2] = xstrdup("[]");
	whole[3] = xasprintf("{\"Image\":\"%s\"}x", T.image);
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		char *b = body_with(extra[i]), *ans;
		char *id = proxy_create(NULL, b, &st, &ans);

		if (st != 400) {
			print_message("payload %s: HTTP %ld (want 400): %.200s\n",
			    extra[i], st, ans);
			wrong++;
		}
		free(id);
		free(ans);
		free(b);
	}
	/* the same through an old API version prefix */
	for (size_t i = 11; i < 16; i++) {
		char *b = body_with(extra[i]);
		char *a = proxy_req("POST", "/v1.23/containers/create", b, &st);

		if (st != 400) {
			print_message("v1.23 payload %s: HTTP %ld (want 400): "
			    "%.200s\n", extra[i], st, a);
			wrong++;
		}
		free(a);
		free(b);
	}
	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
		char *ans;
		char *id = proxy_create(NULL, whole[i], &st, &ans);

		if (st != 400) {
			print_message("body %s: HTTP %ld (want 400): %.200s\n",
			    whole[i], st, ans);
			wrong++;
		}
		free(id);
		free(ans);
		free(whole[i]);
	}
	int bad = count_unconfined();
	int n = run_count();
	sweep();
	if (wrong > 0 || bad > 0 || n > 0)
		fail_msg("%d payload(s) not refused, %d unconfined sibling(s), "
		    "%d container(s) created", wrong, bad, n);
}

/* A benign create gets exactly the proxy's confinement. */
static void
test_benign_create(void **state)
{
	long st;
	char *name = NULL, *q, *ans, *id, *b;
	cJSON *in;
	const cJSON *hc, *cfg, *l, *tmpfs, *lc;

	(void)state;
	NEED_PROXY();
	name = xasprintf("%s-benign", T.run_id);
	q = xasprintf("?name=%s", name);
	b = body_with(",\"Env\":[\"HELLO=world\"],\"Labels\":{\"purpose\":"
	    "\"benign\"}");
	id = proxy_create(q, b, &st, &ans);
	free(q);
	free(b);
	if (id == NULL)
		fail_msg("benign create: HTTP %ld: %s", st, ans);
	free(ans);
	assert_true(is_full_id(id));
	q = xasprintf("/containers/%s/start", id);
	free(proxy_req("POST", q, NULL, &st));
	free(q);
	assert_int_equal(st, 204);

	in = engine_inspect(id);
	assert_non_null(in);
	hc = cJSON_GetObjectItemCaseSensitive(in, "HostConfig");
	cfg = cJSON_GetObjectItemCaseSensitive(in, "Config");
	assert_string_equal(jstr(hc, "NetworkMode"), "none");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(hc,
	    "Privileged")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hc,
	    "CapDrop")), 1);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
	    hc, "CapDrop"), 0)->valuestring, "ALL");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hc,
	    "CapAdd")), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hc,
	    "ReadonlyRootfs")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hc,
	    "SecurityOpt")), 1);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
	    hc, "SecurityOpt"), 0)->valuestring, "no-new-privileges");
	assert_true(cJSON_GetObjectItemCaseSensitive(hc, "Memory")->valuedouble ==
	    64.0 * 1024 * 1024);
	assert_true(cJSON_GetObjectItemCaseSensitive(hc,
	    "MemorySwap")->valuedouble == 64.0 * 1024 * 1024);
	assert_true(cJSON_GetObjectItemCaseSensitive(hc,
	    "PidsLimit")->valuedouble == 64);
	assert_true(cJSON_GetObjectItemCaseSensitive(hc,
	    "NanoCpus")->valuedouble == 250000000.0);
	assert_true(cJSON_GetObjectItemCaseSensitive(hc,
	    "ShmSize")->valuedouble == 16.0 * 1024 * 1024);
	assert_true(cJSON_GetObjectItemCaseSensitive(hc,
	    "OomScoreAdj")->valuedouble == 0);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hc,
	    "OomKillDisable")));
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hc,
	    "AutoRemove")));
	assert_string_equal(jstr(cJSON_GetObjectItemCaseSensitive(hc,
	    "RestartPolicy"), "Name"), "no");
	lc = cJSON_GetObjectItemCaseSensitive(hc, "LogConfig");
	assert_string_equal(jstr(lc, "Type"), "json-file");
	assert_string_equal(jstr(cJSON_GetObjectItemCaseSensitive(lc, "Config"),
	    "max-size"), "1m");
	tmpfs = cJSON_GetObjectItemCaseSensitive(hc, "Tmpfs");
	assert_int_equal(cJSON_GetArraySize(tmpfs), 1);
	assert_string_equal(jstr(tmpfs, "/tmp"),
	    "rw,noexec,nosuid,nodev,size=16m");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hc,
	    "Binds")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hc,
	    "Devices")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(in,
	    "Mounts")), 0);
	assert_string_equal(jstr(hc, "PidMode"), "");
	assert_string_equal(jstr(hc, "UTSMode"), "");
	assert_string_equal(jstr(hc, "UsernsMode"), "");
	assert_string_equal(jstr(hc, "IpcMode"), "private");
	assert_string_equal(jstr(cfg, "User"), "65532:65532");
	assert_string_equal(jstr(cfg, "Image"), T.image);
	l = cJSON_GetObjectItemCaseSensitive(cfg, "Labels");
	assert_string_equal(jstr(l, "ares.run"), T.run_id);
	assert_string_equal(jstr(l, "ares.origin"), "agent");
	/* its owner is the control plane that started the proxy (gc) */
	assert_string_equal(jstr(l, "ares.owner"), gc_owner());
	assert_string_equal(jstr(l, "purpose"), "benign");
	{
		/* the engine-side name is in the run's namespace */
		char *en = engine_name_of(name);
		assert_string_equal(jstr(in, "Name"), en);
		free(en);
	}
	assert_true(docker_inspect_running(in));
	cJSON_Delete(in);

	/* through the proxy: inspect is reduced (no Env), the list has it */
	q = xasprintf("/containers/%s/json", name);
	ans = proxy_req("GET", q, NULL, &st);
	free(q);
	assert_int_equal(st, 200);
	assert_null(strstr(ans, "HELLO"));
	assert_null(strstr(ans, "\"Env\""));
	assert_non_null(strstr(ans, id));
	{
		/* ... and shows the name the agent gave */
		cJSON *j = cJSON_Parse(ans);
		char *want = xasprintf("/%s", name);
		assert_string_equal(jstr(j, "Name"), want);
		free(want);
		cJSON_Delete(j);
	}
	free(ans);
	ans = proxy_req("GET", "/containers/json", NULL, &st);
	assert_int_equal(st, 200);
	assert_non_null(strstr(ans, id));
	assert_null(strstr(ans, "HELLO"));
	free(ans);

	/* recorded: what was asked and what was got */
	cJSON *lines = chain_lines(), *ln;
	bool seen = false;
	cJSON_ArrayForEach(ln, lines) {
		const char *cr = jstr(ln, "created");
		const cJSON *got = cJSON_GetObjectItemCaseSensitive(ln, "got");
		const cJSON *asked = cJSON_GetObjectItemCaseSensitive(ln, "asked");
		if (cr == NULL || strcmp(cr, id) != 0)
			continue;
		seen = true;
		assert_true(cJSON_IsObject(asked));
		assert_non_null(cJSON_GetObjectItemCaseSensitive(asked, "Env"));
		assert_true(cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(got, "HostConfig"),
		    "Memory")->valuedouble == 64.0 * 1024 * 1024);
	}
	cJSON_Delete(lines);
	assert_true(seen);
	free(id);
	free(name);
	sweep();
}

struct race_arg {
	const char *target;
	pthread_barrier_t *go;
	int n204, n404, nother;     /* answers seen */
};

/* DELETE target again and again until the proxy answers 404 (the
 * reference no longer names anything the agent may touch) or
 * RACE_REQUESTS were sent. */
static void *
race_delete(void *p)
{
	struct race_arg *a = p;
	long st;

	pthread_barrier_wait(a->go);
	for (int i = 0; i < RACE_REQUESTS; i++) {
		free(proxy_req("DELETE", a->target, NULL, &st));
		if (st == 204)
			a->n204++;
		else if (st == 404)
			a->n404++;
		else
			a->nother++;
		if (st == 404)
			break;
	}
	return NULL;
}

/* Finding 2: a sibling named like an outside container's ID prefix, and a
 * stream of DELETE <prefix>?force=1 from several threads.  The engine
 * prefers names over ID prefixes: a proxy that checks the reference and
 * lets the engine resolve it again removes the outside container as soon
 * as one DELETE's check ran before the sibling was gone and its removal
 * after. */
static void
test_name_prefix_race(void **state)
{
	char prefix[13], *outside, *sid;
	cJSON *labels = cJSON_CreateObject(), *in;
	long st;

	(void)state;
	NEED_PROXY();
	cJSON_AddStringToObject(labels, "ares.test", T.run_id);
	{
		char *oname = xasprintf("%s-outside", T.run_id);
		outside = engine_create(oname, labels, NULL);
		free(oname);
	}
	snprintf(prefix, sizeof prefix, "%.12s", outside);
	for (int round = 0; round < RACE_ROUNDS; round++) {
		pthread_t th[RACE_THREADS];
		struct race_arg a[RACE_THREADS];
		pthread_barrier_t go;
		char *q = xasprintf("?name=%s", prefix), *b = body_with(""), *ans;
		char *target = xasprintf("/containers/%s?force=1", prefix);
		int n204 = 0, n404 = 0, nother = 0;

		sid = proxy_create(q, b, &st, &ans);
		free(q);
		free(b);
		if (sid == NULL)
			fail_msg("create sibling named %s: HTTP %ld: %s", prefix, st,
			    ans);
		free(ans);
		pthread_barrier_init(&go, NULL, RACE_THREADS);
		for (int i = 0; i < RACE_THREADS; i++) {
			memset(&a[i], 0, sizeof a[i]);
			a[i].target = target;
			a[i].go = &go;
			assert_int_equal(pthread_create(&th[i], NULL, race_delete,
			    &a[i]), 0);
		}
		for (int i = 0; i < RACE_THREADS; i++) {
			pthread_join(th[i], NULL);
			n204 += a[i].n204;
			n404 += a[i].n404;
			nother += a[i].nother;
		}
		pthread_barrier_destroy(&go);
		free(target);
		in = engine_inspect(outside);
		if (in == NULL)
			fail_msg("round %d: the outside container %s was removed "
			    "through the proxy (answers: %d x 204, %d x 404, %d "
			    "other)", round, prefix, n204, n404, nother);
		cJSON_Delete(in);
		/* the sibling itself is gone: a DELETE removed it */
		in = engine_inspect(sid);
		assert_null(in);
		assert_true(n204 >= 1);
		free(sid);
	}
	/* with the sibling gone, the prefix names the outside container:
	 * every per-container call on it is refused */
	{
		static const char *const ops[][2] = {
			{ "GET", "/containers/%s/json" },
			{ "POST", "/containers/%s/kill" },
			{ "POST", "/containers/%s/stop" },
			{ "POST", "/containers/%s/start" },
			{ "DELETE", "/containers/%s?force=1" },
		};
		for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
			char *t = xasprintf(ops[i][1], prefix);
			free(proxy_req(ops[i][0], t, NULL, &st));
			free(t);
			if (st != 404)
				fail_msg("%s %s on the outside container: HTTP %ld "
				    "(want 404)", ops[i][0], ops[i][1], st);
		}
	}
	in = engine_inspect(outside);
	assert_non_null(in);
	cJSON_Delete(in);
	free(outside);
	sweep();
}

/* Finding 3: lab-made containers are invisible; no answer carries a lab
 * container's environment (nor any Env). */
static void
test_lab_container_hidden(void **state)
{
	uint8_t rnd[12];
	char hex[25], secret[64], *gw, *gwname, *ans, *t, *sid;
	cJSON *labels = cJSON_CreateObject(), *in;
	long st;
	const char *env[4];
	char e1[96], e2[96], e3[96];

	(void)state;
	NEED_PROXY();
	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	snprintf(secret, sizeof secret, "sk-fake-secret-%s", hex);
	snprintf(e1, sizeof e1, "REAL_KEY=%s", secret);
	snprintf(e2, sizeof e2, "MODEL_KEY=%s", secret);
	snprintf(e3, sizeof e3, "DECOY_TOKEN=%s", secret);
	env[0] = e1;
	env[1] = e2;
	env[2] = e3;
	env[3] = NULL;
	cJSON_AddStringToObject(labels, "ares.run", T.run_id);
	cJSON_AddStringToObject(labels, "ares.role", "gateway");
	cJSON_AddStringToObject(labels, "ares.test", T.run_id);
	gwname = xasprintf("%s-gateway", T.run_id);
	gw = engine_create(gwname, labels, env);
	{
		long s2;
		char *p = xasprintf("/containers/%s/start", gw);
		free(engine_req("POST", p, NULL, &s2));
		free(p);
		assert_int_equal(s2, 204);
	}
	/* an agent-made sibling with its own Env, for the list and inspect */
	{
		char *b = body_with(",\"Env\":[\"MINE=visible-nowhere\"]");
		sid = proxy_create(NULL, b, &st, &ans);
		free(b);
		if (sid == NULL)
			fail_msg("create sibling: HTTP %ld: %s", st, ans);
		free(ans);
	}

	/* per-container calls on the lab container: 404, by id, name, prefix */
	const char *refs[] = { gw, gwname, NULL };
	char pre[13];
	snprintf(pre, sizeof pre, "%.12s", gw);
	refs[2] = pre;
	static const char *const ops[][2] = {
		{ "GET", "/containers/%s/json" },
		{ "GET", "/v1.24/containers/%s/json" },
		{ "POST", "/containers/%s/kill" },
		{ "POST", "/containers/%s/stop" },
		{ "POST", "/containers/%s/start" },
		{ "DELETE", "/containers/%s?force=1" },
	};
	int wrong = 0;
	for (size_t r = 0; r < 3; r++)
		for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
			t = xasprintf(ops[i][1], refs[r]);
			ans = proxy_req(ops[i][0], t, NULL, &st);
			if (st != 404 || strstr(ans, secret) != NULL ||
			    strstr(ans, "REAL_KEY") != NULL) {
				print_message("%s %s: HTTP %ld (want 404): %.300s\n",
				    ops[i][0], t, st, ans);
				wrong++;
			}
			free(ans);
			free(t);
		}
	/* no answer anywhere carries the secret */
	static const char *const reads[] = {
		"/containers/json", "/containers/json?all=1", "/info",
		"/images/json", "/version", "/_ping", "/v1.41/containers/json?all=1",
	};
	for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
		ans = proxy_req("GET", reads[i], NULL, &st);
		if (strstr(ans, secret) != NULL || strstr(ans, "REAL_KEY") ||
		    strstr(ans, "MODEL_KEY") || strstr(ans, "DECOY_TOKEN") ||
		    strstr(ans, "visible-nowhere")) {
			print_message("GET %s (HTTP %ld) leaks an environment: %.300s\n",
			    reads[i], st, ans);
			wrong++;
		}
		if (strncmp(reads[i], "/containers/json", 16) == 0 ||
		    strncmp(reads[i], "/v1.41/containers/json", 22) == 0) {
			/* the sibling is not running: listed with all=1 only */
			if (st != 200 || strstr(ans, gw) != NULL ||
			    (strstr(reads[i], "all=1") != NULL) !=
			    (strstr(ans, sid) != NULL)) {
				print_message("GET %s: HTTP %ld, lists the lab container "
				    "or misses the sibling: %.300s\n", reads[i], st, ans);
				wrong++;
			}
		}
		if (strcmp(reads[i], "/images/json") == 0) {
			cJSON *j = cJSON_Parse(ans), *im;
			if (st != 200 || cJSON_GetArraySize(j) != 1)
				wrong++;
			cJSON_ArrayForEach(im, j) {
				const cJSON *tags = cJSON_GetObjectItemCaseSensitive(im,
				    "RepoTags");
				if (cJSON_GetArraySize(tags) != 1 ||
				    strcmp(cJSON_GetArrayItem(tags, 0)->valuestring,
				    T.image) != 0) {
					print_message("/images/json lists more than the lab "
					    "image: %.300s\n", ans);
					wrong++;
				}
			}
			cJSON_Delete(j);
		}
		free(ans);
	}
	/* the sibling's own inspect carries no Env */
	t = xasprintf("/containers/%s/json", sid);
	ans = proxy_req("GET", t, NULL, &st);
	free(t);
	if (st != 200 || strstr(ans, "\"Env\"") || strstr(ans, "visible-nowhere")) {
		print_message("sibling inspect: HTTP %ld: %.300s\n", st, ans);
		wrong++;
	}
	free(ans);
	/* the lab container is untouched */
	in = engine_inspect(gw);
	assert_non_null(in);
	assert_true(docker_inspect_running(in));
	cJSON_Delete(in);
	free(gw);
	free(gwname);
	free(sid);
	sweep();
	if (wrong > 0)
		fail_msg("%d answer(s) exposed the lab container", wrong);
}

/* Review finding: a container OUTSIDE the lab named X.  Before, a create
 * of X through the proxy answered 409 with the outside container's full
 * id.  Now X names nothing for the agent (exactly the answer of a name
 * that exists nowhere) until it makes its own X: a sibling in the run's
 * namespace (201), which X then names and which shows as /X.  No answer
 * holds the outside container's id; it is untouched. */
static void
test_foreign_name(void **state)
{
	char *xname, *foreign, *q, *b, *ans, *sid, *t, *en, *want;
	cJSON *labels = cJSON_CreateObject(), *in, *lines;
	int wrong = 0;
	bool leak = false;
	long st;

	(void)state;
	NEED_PROXY();
	xname = xasprintf("%s-victim", T.run_id);
	cJSON_AddStringToObject(labels, "ares.test", T.run_id);
	foreign = engine_create(xname, labels, NULL);

	/* before the agent made X: X is unknown to it */
	wrong += expect_missing(xname);

	/* the agent makes its own X */
	q = xasprintf("?name=%s", xname);
	b = body_with("");
	sid = proxy_create(q, b, &st, &ans);
	if (sid == NULL || holds_id(ans, foreign)) {
		print_message("create ?name=%s: HTTP %ld: %.300s (want 201, no "
		    "id but the sibling's)\n", xname, st, ans);
		wrong++;
	}
	free(ans);
	if (sid == NULL) {
		free(q);
		free(b);
		sweep();
		fail_msg("%d wrong answer(s); create of %s not made", wrong,
		    xname);
	}

	/* on the engine it lives in the run's namespace */
	in = engine_inspect(sid);
	assert_non_null(in);
	en = engine_name_of(xname);
	if (jstr(in, "Name") == NULL || strcmp(jstr(in, "Name"), en) != 0) {
		print_message("engine-side name %s (want %s)\n", jstr(in, "Name"),
		    en);
		wrong++;
	}
	cJSON_Delete(in);

	/* X names the sibling, shown as /X */
	t = xasprintf("/containers/%s/json", xname);
	ans = proxy_req("GET", t, NULL, &st);
	free(t);
	in = cJSON_Parse(ans);
	want = xasprintf("/%s", xname);
	if (st != 200 || jstr(in, "Id") == NULL || strcmp(jstr(in, "Id"),
	    sid) != 0 || jstr(in, "Name") == NULL || strcmp(jstr(in, "Name"),
	    want) != 0 || holds_id(ans, foreign)) {
		print_message("inspect %s: HTTP %ld: %.300s (want the sibling "
		    "as %s)\n", xname, st, ans, want);
		wrong++;
	}
	cJSON_Delete(in);
	free(ans);
	{
		char *names = listed_names(sid, foreign, &leak), *wn;

		wn = xasprintf("[\"/%s\"]", xname);
		if (names == NULL || strcmp(names, wn) != 0 || leak) {
			print_message("list: the sibling's Names %s (want %s)%s\n",
			    names ? names : "(not listed)", wn,
			    leak ? ", and it holds the outside id" : "");
			wrong++;
		}
		free(names);
		free(wn);
	}

	/* a second X: 409, composed, naming no id */
	{
		char *id2 = proxy_create(q, b, &st, &ans);

		if (st != 409 || holds_id(ans, foreign) || holds_id(ans, sid) ||
		    strstr(ans, want) == NULL) {
			print_message("second create ?name=%s: HTTP %ld: %.300s "
			    "(want 409 naming %s and no id)\n", xname, st, ans,
			    want);
			wrong++;
		}
		free(id2);
		free(ans);
	}

	/* deleting X removes the sibling only */
	t = xasprintf("/containers/%s?force=1", xname);
	ans = proxy_req("DELETE", t, NULL, &st);
	free(t);
	if (st != 204 || holds_id(ans, foreign)) {
		print_message("DELETE %s: HTTP %ld: %.300s\n", xname, st, ans);
		wrong++;
	}
	free(ans);
	in = engine_inspect(sid);
	if (in != NULL) {
		print_message("the sibling %s is still there\n", xname);
		wrong++;
	}
	cJSON_Delete(in);
	in = engine_inspect(foreign);
	assert_non_null(in);
	cJSON_Delete(in);
	/* ... and X is unknown again */
	wrong += expect_missing(xname);

	/* the engine's own words are recorded, not answered */
	lines = chain_lines();
	if (engine_event(lines, "/containers/create", 409, 409,
	    "already in use") == NULL) {
		print_message("no docker_api event with the engine's 409 and its "
		    "message\n");
		wrong++;
	}
	cJSON_Delete(lines);

	free(want);
	free(en);
	free(sid);
	free(q);
	free(b);
	free(foreign);
	free(xname);
	sweep();
	if (wrong > 0)
		fail_msg("%d wrong answer(s) about a container outside the lab",
		    wrong);
}

/* Review finding: GET /containers/a/json answered 500 "Multiple IDs found
 * with provided prefix" (the engine resolves a prefix over every
 * container on the host) against 404 for an unknown reference.  Now every
 * reference that names no sibling of this run answers exactly the 404 of
 * an unknown one (ambiguous prefixes, outside ids, prefixes and names,
 * lab-style and odd names), and a prefix of a sibling's id names the
 * sibling even when containers outside share it. */
static void
test_prefix_oracle(void **state)
{
#define FOREIGN_MAX 200
	char *foreign[FOREIGN_MAX + 1], *sid, *b, *ans, *t;
	int nf = 0, wrong = 0, per[16] = { 0 };
	char amb[2] = "", own[2] = "";
	long st;

	(void)state;
	NEED_PROXY();
	b = body_with("");
	sid = proxy_create(NULL, b, &st, &ans);
	free(b);
	if (sid == NULL)
		fail_msg("create sibling: HTTP %ld: %s", st, ans);
	free(ans);
	own[0] = sid[0];
	/* containers outside the lab until two share a first hex digit
	 * (other than the sibling's) and one shares the sibling's */
	while (nf < FOREIGN_MAX && (amb[0] == '\0' || per[hexval(own[0])] == 0)) {
		cJSON *labels = cJSON_CreateObject();
		char *n = xasprintf("%s-out%d", T.run_id, nf);
		int k;

		cJSON_AddStringToObject(labels, "ares.test", T.run_id);
		foreign[nf] = engine_create(n, labels, NULL);
		free(n);
		k = hexval(foreign[nf][0]);
		if (++per[k] == 2 && foreign[nf][0] != own[0] && amb[0] == '\0')
			amb[0] = foreign[nf][0];
		nf++;
	}
	foreign[nf] = NULL;
	if (amb[0] == '\0' || per[hexval(own[0])] == 0) {
		sweep();
		fail_msg("no shared prefixes after %d containers", nf);
	}

	/* ambiguous, outside, lab-style and odd references */
	{
		char pre2[3], pre12[13], *nosuch, *lab, *outname, *enm;
		char zeros[65], longref[129];

		/* an outside id whose two-digit prefix is not also the
		 * sibling's (one starting with amb always qualifies) */
		int o2 = 0;
		while (o2 < nf - 1 && strncmp(foreign[o2], sid, 2) == 0)
			o2++;
		snprintf(pre2, sizeof pre2, "%.2s", foreign[o2]);
		snprintf(pre12, sizeof pre12, "%.12s", foreign[0]);
		nosuch = xasprintf("nosuch-%s", T.run_id);
		lab = xasprintf("ares-%s-gateway", T.run_id);
		outname = xasprintf("%s-out0", T.run_id);
		enm = xasprintf("ares-%s-a-x", T.run_id);
		memset(zeros, '0', 64);
		zeros[64] = '\0';
		memset(longref, 'b', 128);
		longref[128] = '\0';
		const char *refs[] = { amb, nosuch, foreign[0], pre12, pre2,
			outname, lab, enm, "_x", "x.-_", "A", "ares-x", zeros,
			longref };
		for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
			wrong += expect_missing(refs[i]);
		/* every other one-digit prefix but the sibling's */
		for (const char *h = "0123456789abcdef"; *h != '\0'; h++) {
			char one[2] = { *h, '\0' };
			if (*h != own[0] && *h != amb[0])
				wrong += expect_missing(one);
		}
		free(nosuch);
		free(lab);
		free(outname);
		free(enm);
	}

	/* a prefix of the sibling's id names it, whatever else shares it */
	t = xasprintf("/containers/%s/json", own);
	ans = proxy_req("GET", t, NULL, &st);
	free(t);
	{
		cJSON *in = cJSON_Parse(ans);
		bool leak = false;

		for (int i = 0; i < nf; i++)
			leak |= holds_id(ans, foreign[i]);
		if (st != 200 || jstr(in, "Id") == NULL ||
		    strcmp(jstr(in, "Id"), sid) != 0 || leak) {
			print_message("inspect %s (a prefix of the sibling %.12s, "
			    "shared outside): HTTP %ld: %.300s\n", own, sid, st, ans);
			wrong++;
		}
		cJSON_Delete(in);
	}
	free(ans);

	/* nothing outside was touched */
	for (int i = 0; i < nf; i++) {
		cJSON *in = engine_inspect(foreign[i]);

		if (in == NULL) {
			print_message("the outside container %.12s is gone\n",
			    foreign[i]);
			wrong++;
		}
		cJSON_Delete(in);
		free(foreign[i]);
	}
	free(sid);
	sweep();
	if (wrong > 0)
		fail_msg("%d wrong answer(s) (%d outside containers, ambiguous "
		    "prefix %s)", wrong, nf, amb);
#undef FOREIGN_MAX
}

/* A sibling the agent named foo is foo to the agent: inspectable,
 * startable, stoppable, killable and deletable as foo, shown as /foo in
 * inspect and list, and ares-<run>-a-foo on the engine (a name the agent
 * itself cannot use).  A sibling made without a name gets one from the
 * proxy, in the same namespace, which resolves too. */
static void
test_sibling_by_name(void **state)
{
	static const struct {
		const char *method, *target;
		long want;
		int running;    /* the state after it: 1, 0, -1 gone */
	} ops[] = {
		{ "POST", "/containers/foo/start", 204, 1 },
		{ "POST", "/containers/foo/stop?t=1", 204, 0 },
		{ "POST", "/v1.41/containers/foo/start", 204, 1 },
		{ "POST", "/containers/foo/kill?signal=KILL", 204, -2 },
		{ "DELETE", "/containers/foo?force=1", 204, -1 },
	};
	char *b, *ans, *sid, *en, *t, *names;
	cJSON *in;
	int wrong = 0;
	bool leak = false;
	long st;

	(void)state;
	NEED_PROXY();
	b = xasprintf("{\"Image\":\"%s\",\"Cmd\":[\"sleep\",\"300\"],"
	    "\"StopSignal\":\"KILL\"}", T.image);
	sid = proxy_create("?name=foo", b, &st, &ans);
	if (sid == NULL)
		fail_msg("create ?name=foo: HTTP %ld: %s", st, ans);
	free(ans);

	in = engine_inspect(sid);
	assert_non_null(in);
	en = engine_name_of("foo");
	if (strcmp(jstr(in, "Name"), en) != 0) {
		print_message("engine-side name %s (want %s)\n", jstr(in, "Name"),
		    en);
		wrong++;
	}
	cJSON_Delete(in);

	ans = proxy_req("GET", "/containers/foo/json", NULL, &st);
	in = cJSON_Parse(ans);
	if (st != 200 || jstr(in, "Id") == NULL || strcmp(jstr(in, "Id"),
	    sid) != 0 || jstr(in, "Name") == NULL ||
	    strcmp(jstr(in, "Name"), "/foo") != 0) {
		print_message("inspect foo: HTTP %ld: %.300s (want Name /foo)\n",
		    st, ans);
		wrong++;
	}
	cJSON_Delete(in);
	free(ans);
	names = listed_names(sid, NULL, &leak);
	if (names == NULL || strcmp(names, "[\"/foo\"]") != 0) {
		print_message("list: Names %s (want [\"/foo\"])\n",
		    names ? names : "(not listed)");
		wrong++;
	}
	free(names);
	/* the engine-side name is not the agent's */
	wrong += expect_missing(en + 1);

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		ans = proxy_req(ops[i].method, ops[i].target, NULL, &st);
		if (st != ops[i].want) {
			print_message("%s %s: HTTP %ld: %.300s (want %ld)\n",
			    ops[i].method, ops[i].target, st, ans, ops[i].want);
			wrong++;
		}
		free(ans);
		in = engine_inspect(sid);
		if (ops[i].running == -1 ? in != NULL : in == NULL ||
		    (ops[i].running >= 0 &&
		    docker_inspect_running(in) != (ops[i].running == 1))) {
			print_message("after %s %s: the sibling is %s\n",
			    ops[i].method, ops[i].target, in == NULL ? "gone" :
			    docker_inspect_running(in) ? "running" : "not running");
			wrong++;
		}
		cJSON_Delete(in);
	}
	free(sid);
	free(en);

	/* no name given: the proxy names it, and that name resolves */
	sid = proxy_create(NULL, b, &st, &ans);
	free(b);
	if (sid == NULL)
		fail_msg("create: HTTP %ld: %s", st, ans);
	free(ans);
	t = xasprintf("/containers/%s/json", sid);
	ans = proxy_req("GET", t, NULL, &st);
	free(t);
	in = cJSON_Parse(ans);
	if (st != 200 || jstr(in, "Name") == NULL || jstr(in, "Name")[0] != '/' ||
	    strstr(jstr(in, "Name"), "ares-") != NULL) {
		print_message("inspect of an unnamed sibling: HTTP %ld: %.300s\n",
		    st, ans);
		wrong++;
	} else {
		const char *n = jstr(in, "Name") + 1;
		char *t2 = xasprintf("/containers/%s/json", n);
		char *a2 = proxy_req("GET", t2, NULL, &st);
		cJSON *i2 = cJSON_Parse(a2), *ei = engine_inspect(sid);

		en = engine_name_of(n);
		if (st != 200 || jstr(i2, "Id") == NULL ||
		    strcmp(jstr(i2, "Id"), sid) != 0 || ei == NULL ||
		    strcmp(jstr(ei, "Name"), en) != 0) {
			print_message("inspect %s: HTTP %ld: %.200s; engine-side "
			    "%s (want %s)\n", n, st, a2, ei ? jstr(ei, "Name") :
			    "(gone)", en);
			wrong++;
		}
		free(en);
		cJSON_Delete(ei);
		cJSON_Delete(i2);
		free(a2);
		free(t2);
	}
	cJSON_Delete(in);
	free(ans);
	free(sid);
	sweep();
	if (wrong > 0)
		fail_msg("%d wrong answer(s) for a sibling by its name", wrong);
}

/* An engine error on a sibling is answered in the proxy's words (the
 * engine's text can name host paths, runtime internals, ids); the engine's
 * status and text are in the docker_api event. */
static void
test_errors_composed(void **state)
{
	static const char *const engine_words[] = { "OCI", "runc", "exec",
		"no such file", "/var/lib/docker", "containerd", "no-such-binary",
		"Stop the container", "running container" };
	char *b, *ans, *bad, *run, *t;
	cJSON *lines;
	int wrong = 0, start_st = 0;
	long st;

	(void)state;
	NEED_PROXY();
	b = body_with(",\"Entrypoint\":[\"/no-such-binary\"]");
	bad = proxy_create(NULL, b, &st, &ans);
	free(b);
	if (bad == NULL)
		fail_msg("create: HTTP %ld: %s", st, ans);
	free(ans);
	t = xasprintf("/containers/%s/start", bad);
	ans = proxy_req("POST", t, NULL, &st);
	free(t);
	start_st = (int)st;
	if (st < 400)
		fail_msg("start of a sibling with no such binary: HTTP %ld", st);
	for (size_t i = 0; i < sizeof engine_words / sizeof engine_words[0]; i++)
		if (strstr(ans, engine_words[i]) != NULL) {
			print_message("start: HTTP %ld: %.300s holds the engine's "
			    "\"%s\"\n", st, ans, engine_words[i]);
			wrong++;
			break;
		}
	free(ans);

	/* a running sibling removed without force: the engine's 409 */
	b = body_with("");
	run = proxy_create(NULL, b, &st, &ans);
	free(b);
	if (run == NULL)
		fail_msg("create: HTTP %ld: %s", st, ans);
	free(ans);
	t = xasprintf("/containers/%s/start", run);
	free(proxy_req("POST", t, NULL, &st));
	free(t);
	assert_int_equal(st, 204);
	t = xasprintf("/containers/%s", run);
	ans = proxy_req("DELETE", t, NULL, &st);
	free(t);
	if (st != 409) {
		print_message("DELETE a running sibling: HTTP %ld: %.300s (want "
		    "409)\n", st, ans);
		wrong++;
	}
	for (size_t i = 0; i < sizeof engine_words / sizeof engine_words[0]; i++)
		if (strstr(ans, engine_words[i]) != NULL) {
			print_message("DELETE: HTTP %ld: %.300s holds the engine's "
			    "\"%s\"\n", st, ans, engine_words[i]);
			wrong++;
			break;
		}
	free(ans);

	/* the engine's words are in the events */
	lines = chain_lines();
	{
		char *p = xasprintf("/containers/%s/start", bad);
		if (engine_event(lines, p, start_st, start_st,
		    "no-such-binary") == NULL) {
			print_message("no event with the engine's start error\n");
			wrong++;
		}
		free(p);
		p = xasprintf("/containers/%s", run);
		if (engine_event(lines, p, 409, 409, "running") == NULL) {
			print_message("no event with the engine's 409\n");
			wrong++;
		}
		free(p);
	}
	cJSON_Delete(lines);
	free(bad);
	free(run);
	sweep();
	if (wrong > 0)
		fail_msg("%d answer(s) passed the engine's own words", wrong);
}

/* Finding 4: OOM tweaks, a huge /dev/shm, an exec tmpfs, devices and
 * limits over the caps are refused, and recorded as refused; limits
 * within the caps are honoured. */
static void
test_unconfined_refused(void **state)
{
	static const struct {
		const char *extra;
		const char *member;     /* the reason names it */
	} cases[] = {
		{ ",\"HostConfig\":{\"OomScoreAdj\":-1000}", "OomScoreAdj" },
		{ ",\"HostConfig\":{\"OomKillDisable\":true}", "OomKillDisable" },
		{ ",\"HostConfig\":{\"ShmSize\":10737418240}", "ShmSize" },
		{ ",\"HostConfig\":{\"Tmpfs\":{\"/tmp\":\"rw,exec,size=1g\"}}",
		  "Tmpfs" },
		{ ",\"HostConfig\":{\"Memory\":1073741824}", "Memory" },
		{ ",\"HostConfig\":{\"Memory\":0}", "Memory" },
		{ ",\"HostConfig\":{\"PidsLimit\":-1}", "PidsLimit" },
		{ ",\"HostConfig\":{\"NanoCpus\":2000000000}", "NanoCpus" },
		{ ",\"HostConfig\":{\"SecurityOpt\":[\"seccomp=unconfined\"]}",
		  "SecurityOpt" },
		{ ",\"HostConfig\":{\"ReadonlyRootfs\":false}", "ReadonlyRootfs" },
		{ ",\"HostConfig\":{\"RestartPolicy\":{\"Name\":\"always\"}}",
		  "RestartPolicy" },
		{ ",\"OomScoreAdj\":-1000", "OomScoreAdj" },
		{ ",\"ShmSize\":10737418240", "ShmSize" },
	};
	int wrong = 0;
	long st;
	char *ans, *id;

	(void)state;
	NEED_PROXY();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *b = body_with(cases[i].extra);
		id = proxy_create(NULL, b, &st, &ans);
		if (st != 400) {
			print_message("payload %s: HTTP %ld (want 400): %.200s\n",
			    cases[i].extra, st, ans);
			wrong++;
		}
		free(id);
		free(ans);
		free(b);
	}
	assert_int_equal(count_unconfined(), 0);
	{
		int n = run_count();
		sweep();
		if (wrong > 0 || n > 0)
			fail_msg("%d payload(s) not refused, %d container(s) created",
			    wrong, n);
	}
	/* every refusal is in the chain, naming the member, with the ask */
	cJSON *lines = chain_lines();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const cJSON *ev = refused_event(lines, 400, cases[i].member);
		if (ev == NULL)
			fail_msg("no refused docker_api event naming %s",
			    cases[i].member);
		assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ev,
		    "asked")));
	}
	cJSON_Delete(lines);

	/* within the caps: honoured */
	{
		char *b = body_with(",\"HostConfig\":{\"Memory\":33554432,"
		    "\"PidsLimit\":32,\"NanoCpus\":100000000}");
		id = proxy_create(NULL, b, &st, &ans);
		free(b);
		if (id == NULL)
			fail_msg("create within caps: HTTP %ld: %s", st, ans);
		free(ans);
		cJSON *in = engine_inspect(id);
		const cJSON *hc = cJSON_GetObjectItemCaseSensitive(in, "HostConfig");
		assert_true(cJSON_GetObjectItemCaseSensitive(hc,
		    "Memory")->valuedouble == 33554432.0);
		assert_true(cJSON_GetObjectItemCaseSensitive(hc,
		    "MemorySwap")->valuedouble == 33554432.0);
		assert_true(cJSON_GetObjectItemCaseSensitive(hc,
		    "PidsLimit")->valuedouble == 32);
		assert_true(cJSON_GetObjectItemCaseSensitive(hc,
		    "NanoCpus")->valuedouble == 100000000.0);
		cJSON_Delete(in);
		free(id);
	}
	sweep();
}

/* The number of agent-made containers per run is capped. */
static void
test_sibling_cap(void **state)
{
	long st;
	char *ans, *id, *b = NULL;

	(void)state;
	NEED_PROXY();
	b = body_with("");
	for (int i = 0; i < SIBLINGS_MAX; i++) {
		id = proxy_create(NULL, b, &st, &ans);
		if (id == NULL)
			fail_msg("sibling %d: HTTP %ld: %s", i + 1, st, ans);
		free(ans);
		free(id);
	}
	id = proxy_create(NULL, b, &st, &ans);
	free(b);
	{
		int n = run_count();
		if (id != NULL || st != 429 || n != SIBLINGS_MAX) {
			free(id);
			free(ans);
			sweep();
			fail_msg("sibling %d: HTTP %ld (want 429), %d containers of "
			    "the run (want %d)", SIBLINGS_MAX + 1, st, n, SIBLINGS_MAX);
		}
	}
	free(ans);
	cJSON *lines = chain_lines();
	assert_non_null(refused_event(lines, 429, "sibling"));
	cJSON_Delete(lines);
	sweep();
}

/* Everything the test made is gone. */
static void
test_nothing_left(void **state)
{
	cJSON *l;

	(void)state;
	sweep();
	l = by_label("ares.run", T.run_id);
	assert_int_equal(cJSON_GetArraySize(l), 0);
	cJSON_Delete(l);
	l = by_label("ares.test", T.run_id);
	assert_int_equal(cJSON_GetArraySize(l), 0);
	cJSON_Delete(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_fold_payloads),
		cmocka_unit_test(test_benign_create),
		cmocka_unit_test(test_name_prefix_race),
		cmocka_unit_test(test_lab_container_hidden),
		cmocka_unit_test(test_foreign_name),
		cmocka_unit_test(test_prefix_oracle),
		cmocka_unit_test(test_sibling_by_name),
		cmocka_unit_test(test_errors_composed),
		cmocka_unit_test(test_unconfined_refused),
		cmocka_unit_test(test_sibling_cap),
		cmocka_unit_test(test_nothing_left),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = { 0 };
	int rc;

	if (sodium_init() < 0)
		return 1;
	T.d = docker_connect(NULL, &e);
	if (T.d == NULL) {
		fprintf(stderr, "test_dockerproxy: no Docker Engine: %s\n", e.msg);
		return req != NULL && strcmp(req, "1") == 0 ? 1 : 77;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	docker_close(T.d);
	curl_global_cleanup();
	return rc;
}
