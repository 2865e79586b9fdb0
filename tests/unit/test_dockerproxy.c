/*
 * test_dockerproxy.c - unit tests of the pure parts of the agent's Docker
 * socket proxy (leakbox/dockerproxy.c): routing, strict body parsing, the
 * composed create body (every bypass of the sealing issue refused with a
 * reason naming the member, a benign body giving exactly the composed
 * body), composed query strings, composed answers (no environment), the
 * ownership check, the API version pick and the bounded event records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../leakbox/leakbox.h"

#define IMG "ares-lab:3307003385745a2a"
#define RUN "run-42"

/* The HostConfig every sibling gets with the default limits, serialised. */
#define HC_DEFAULT(mem, cpu, pids) \
	"{\"NetworkMode\":\"none\",\"Privileged\":false,\"CapDrop\":[\"ALL\"]," \
	"\"ReadonlyRootfs\":true,\"SecurityOpt\":[\"no-new-privileges\"]," \
	"\"Memory\":" mem ",\"MemorySwap\":" mem ",\"NanoCpus\":" cpu "," \
	"\"PidsLimit\":" pids ",\"OomKillDisable\":false,\"OomScoreAdj\":0," \
	"\"ShmSize\":16777216,\"Tmpfs\":{\"/tmp\":" \
	"\"rw,noexec,nosuid,nodev,size=16m\"},\"IpcMode\":\"private\"," \
	"\"CgroupnsMode\":\"private\",\"Devices\":[],\"AutoRemove\":false," \
	"\"RestartPolicy\":{\"Name\":\"no\"},\"LogConfig\":{\"Type\":" \
	"\"json-file\",\"Config\":{\"max-size\":\"1m\",\"max-file\":\"1\"}}}"

/* ---- routing -------------------------------------------------------- */

static void test_route(void **state)
{
	(void)state;
	char ref[DOCKERPROXY_ID_MAX + 1];
	size_t pl;
	assert_int_equal(dockerproxy_route("GET", "/_ping", ref, &pl), DP_PING);
	assert_int_equal(dockerproxy_route("HEAD", "/v1.41/_ping", ref, &pl),
	    DP_PING);
	assert_int_equal(pl, 6);
	assert_int_equal(dockerproxy_route("GET", "/containers/json", ref, &pl),
	    DP_LIST);
	assert_string_equal(ref, "");
	assert_int_equal(dockerproxy_route("GET", "/v1.41/images/json", ref,
	    &pl), DP_IMAGES);
	assert_int_equal(dockerproxy_route("POST", "/v1.23/containers/create",
	    ref, &pl), DP_CREATE);
	assert_int_equal(pl, 6);
	assert_int_equal(dockerproxy_route("POST", "/containers/ab12/start", ref,
	    &pl), DP_START);
	assert_string_equal(ref, "ab12");
	assert_int_equal(dockerproxy_route("GET", "/containers/x_y.z/json", ref,
	    &pl), DP_INSPECT);
	assert_string_equal(ref, "x_y.z");
	assert_int_equal(dockerproxy_route("DELETE", "/containers/ab12", ref,
	    &pl), DP_DELETE);
	assert_int_equal(dockerproxy_route("POST", "/containers/ab12/kill", ref,
	    &pl), DP_KILL);
	assert_int_equal(dockerproxy_route("POST", "/containers/ab12/stop", ref,
	    &pl), DP_STOP);
	static const char *const deny[][2] = {
		{ "POST", "/containers/ab12/exec" }, { "POST", "/exec/1/start" },
		{ "GET", "/containers/ab12/archive" }, { "POST", "/images/create" },
		{ "POST", "/build" }, { "GET", "/volumes" },
		{ "POST", "/networks/create" }, { "GET", "/containers/../json" },
		{ "POST", "/containers/a/b/start" }, { "DELETE", "/containers/json/x" },
		{ "PUT", "/containers/ab12/archive" }, { "GET", "/v1.41x/_ping" },
		{ "POST", "/_ping" }, { "GET", "/info/x" },
		{ "POST", "/containers/ab12/update" }, { "GET", "/events" },
		{ "POST", "/containers/%2e%2e/start" }, { "POST", "/session" },
		{ "POST", "/containers/ab12/attach" }, { "GET", "/containers/ab12/logs" },
		{ "POST", "/containers/ab12/rename" }, { "POST", "/containers/create/" },
		{ "GET", "/containers/create" }, { "POST", "/containers/-x/start" },
		{ "POST", "/containers/ab12/wait" }, { "POST", "/containers/prune" },
		{ "get", "/_ping" }, { "POST", "/v1.41/containers/ab12/exec" },
	};
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++) {
		if (dockerproxy_route(deny[i][0], deny[i][1], ref, &pl) != DP_DENY)
			fail_msg("%s %s was not denied", deny[i][0], deny[i][1]);
		assert_string_equal(ref, "");
	}
	/* a reference longer than DOCKERPROXY_ID_MAX */
	char longp[256];
	memset(longp, 'a', sizeof(longp));
	memcpy(longp, "/containers/", 12);
	longp[12 + DOCKERPROXY_ID_MAX + 1] = '\0';
	assert_int_equal(dockerproxy_route("DELETE", longp, ref, &pl), DP_DENY);
	longp[12 + DOCKERPROXY_ID_MAX] = '\0';
	assert_int_equal(dockerproxy_route("DELETE", longp, ref, &pl), DP_DELETE);
}

/* ---- create: composed ----------------------------------------------- */

/* Compose body; the serialised result (caller frees) or NULL. */
static char *compose(const char *body, size_t len, struct errbuf *e,
    cJSON **asked)
{
	cJSON *j = dockerproxy_compose_create(body, len, RUN, IMG, NULL, NULL,
	    asked, e);
	if (!j)
		return NULL;
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return s;
}

/* The owner labels come from the control plane (the proxy's environment),
 * after the proxy's own ares.run/ares.origin; the agent cannot set them. */
static void test_create_owner(void **state)
{
	(void)state;
	struct errbuf e = { 0 };
	const char *owner = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:4242:987654";
	const char *body = "{\"Image\":\"" IMG "\",\"Labels\":{\"purpose\":\"x\"}}";
	cJSON *j = dockerproxy_compose_create(body, strlen(body), RUN, IMG,
	    owner, "/runs/r1/lab.lease", NULL, &e);
	if (!j)
		fail_msg("refused: %s", e.msg);
	char *out = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j,
	    "Labels"));
	assert_string_equal(out, "{\"ares.run\":\"" RUN "\",\"ares.origin\":"
	    "\"agent\",\"ares.owner\":\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:"
	    "4242:987654\",\"ares.lease\":\"/runs/r1/lab.lease\",\"purpose\":"
	    "\"x\"}");
	free(out);
	cJSON_Delete(j);
	/* the agent naming an owner is refused, whatever the case */
	const char *forged = "{\"Image\":\"" IMG "\",\"Labels\":{\"ARES.OWNER\":"
	    "\"x\"}}";
	assert_null(dockerproxy_compose_create(forged, strlen(forged), RUN, IMG,
	    owner, NULL, NULL, &e));
	assert_non_null(strstr(e.msg, "the ares.* labels are the proxy's"));

	assert_true(dockerproxy_owner_ok(owner));
	assert_true(dockerproxy_owner_ok(
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:0"));
	assert_false(dockerproxy_owner_ok(""));
	assert_false(dockerproxy_owner_ok(
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:4242"));
	assert_false(dockerproxy_owner_ok(
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0::5"));
	assert_false(dockerproxy_owner_ok(
	    "0F1E2D3C-4b5a-6978-8796-a5b4c3d2e1f0:1:5"));
	assert_false(dockerproxy_owner_ok(
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:5:6"));
	assert_false(dockerproxy_owner_ok(
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:1:5 "));
	assert_true(dockerproxy_lease_ok("/runs/r1/lab.lease"));
	assert_false(dockerproxy_lease_ok("runs/r1/lab.lease"));
	assert_false(dockerproxy_lease_ok("/runs/../etc/passwd"));
	assert_false(dockerproxy_lease_ok("/runs/a b"));
	assert_false(dockerproxy_lease_ok(""));
}

static void test_create_benign(void **state)
{
	(void)state;
	struct errbuf e = { 0 };
	cJSON *asked = NULL;
	const char *body = "{\"Image\":\"" IMG "\",\"Cmd\":[\"sh\",\"-c\",\"id\"],"
	    "\"Labels\":{\"purpose\":\"x\"}}";
	char *out = compose(body, strlen(body), &e, &asked);
	if (!out)
		fail_msg("benign body refused: %s", e.msg);
	assert_string_equal(out, "{\"Image\":\"" IMG "\",\"User\":\"65532:65532\","
	    "\"HostConfig\":" HC_DEFAULT("67108864", "250000000", "64") ","
	    "\"Labels\":{\"ares.run\":\"" RUN "\",\"ares.origin\":\"agent\","
	    "\"purpose\":\"x\"},\"NetworkDisabled\":true,"
	    "\"Cmd\":[\"sh\",\"-c\",\"id\"]}");
	free(out);
	/* asked: what the agent sent */
	char *as = cJSON_PrintUnformatted(asked);
	assert_string_equal(as, body);
	free(as);
	cJSON_Delete(asked);

	/* the smallest body */
	const char *min = "{\"Image\":\"" IMG "\"}";
	out = compose(min, strlen(min), &e, NULL);
	assert_non_null(out);
	assert_string_equal(out, "{\"Image\":\"" IMG "\",\"User\":\"65532:65532\","
	    "\"HostConfig\":" HC_DEFAULT("67108864", "250000000", "64") ","
	    "\"Labels\":{\"ares.run\":\"" RUN "\",\"ares.origin\":\"agent\"},"
	    "\"NetworkDisabled\":true}");
	free(out);

	/* every member the agent may give, canonicalised; lower limits kept */
	const char *full = " {\"Tty\":true,\"Hostname\":\"helper-1\","
	    "\"StopSignal\":\"TERM\",\"User\":\"1000\",\"WorkingDir\":\"/tmp\","
	    "\"Env\":[\"A=1\",\"B_2=x=y\"],\"Entrypoint\":[\"/bin/sh\"],"
	    "\"Cmd\":[\"-c\",\"sleep 1\"],\"OpenStdin\":false,\"AttachStdin\":false,"
	    "\"AttachStdout\":true,\"AttachStderr\":true,\"StdinOnce\":false,"
	    "\"Labels\":{},\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":"
	    "33554432,\"NanoCpus\":1e8,\"PidsLimit\":16}}\r\n";
	out = compose(full, strlen(full), &e, NULL);
	if (!out)
		fail_msg("full body refused: %s", e.msg);
	assert_string_equal(out, "{\"Image\":\"" IMG "\",\"User\":\"1000:1000\","
	    "\"HostConfig\":" HC_DEFAULT("33554432", "100000000", "16") ","
	    "\"Labels\":{\"ares.run\":\"" RUN "\",\"ares.origin\":\"agent\"},"
	    "\"NetworkDisabled\":true,\"Hostname\":\"helper-1\",\"WorkingDir\":"
	    "\"/tmp\",\"Entrypoint\":[\"/bin/sh\"],\"Cmd\":[\"-c\",\"sleep 1\"],"
	    "\"Env\":[\"A=1\",\"B_2=x=y\"],\"StopSignal\":\"SIGTERM\",\"Tty\":true,"
	    "\"OpenStdin\":false,\"AttachStdin\":false,\"AttachStdout\":true,"
	    "\"AttachStderr\":true,\"StdinOnce\":false}");
	free(out);

	/* the HostConfig on its own */
	cJSON *hc = dockerproxy_hostconfig(DOCKERPROXY_MEMORY,
	    DOCKERPROXY_NANOCPUS, DOCKERPROXY_PIDS);
	out = cJSON_PrintUnformatted(hc);
	assert_string_equal(out, HC_DEFAULT("67108864", "250000000", "64"));
	free(out);
	cJSON_Delete(hc);

	/* a canonical name written with escapes is the canonical name: the
	 * engine never sees the agent's bytes */
	const char *esc = "{\"\\u0049mage\":\"" IMG "\"}";
	out = compose(esc, strlen(esc), &e, NULL);
	assert_non_null(out);
	free(out);
}

/* ---- create: refused ------------------------------------------------ */

struct refusal {
	const char *body;
	const char *needle;         /* must appear in the reason */
};

static const struct refusal refusals[] = {
	/* finding 1: names folding to known ones (U+017F, U+212A) */
	{ "{\"Image\":\"" IMG "\",\"Ho\\u017ftConfig\":{\"Binds\":[\"/:/hostfs\"],"
	  "\"Privileged\":true,\"PidMode\":\"host\",\"CapAdd\":[\"ALL\"]}}",
	  "member \"Ho\\u017FtConfig\": unknown member (not byte-exactly "
	  "\"HostConfig\")" },
	{ "{\"Image\":\"" IMG "\",\"Ho\xc5\xbftConfig\":{}}", "Ho\\u017FtConfig" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Bind\\u017f\":[\"/:/h\"]}}",
	  "HostConfig member \"Bind\\u017F\": not allowed" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Networ\\u212aMode\":"
	  "\"host\"}}", "HostConfig member \"Networ\\u212AMode\"" },
	{ "{\"Image\":\"" IMG "\",\"Networ\\u212aMode\":\"host\"}",
	  "\"Networ\\u212AMode\": unknown member" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":8388608,"
	  "\"Memor\\u212a\":0}}", "Memor\\u212A" },
	{ "{\"Imag\\u212a\":\"busybox\",\"Image\":\"" IMG "\"}", "Imag\\u212A" },
	/* ASCII case variants */
	{ "{\"Image\":\"" IMG "\",\"hostconfig\":{\"Privileged\":true}}",
	  "not byte-exactly \"HostConfig\"" },
	{ "{\"Image\":\"" IMG "\",\"HOSTCONFIG\":{}}", "HOSTCONFIG" },
	{ "{\"image\":\"" IMG "\"}", "not byte-exactly \"Image\"" },
	{ "{\"Image\":\"" IMG "\",\"labels\":{\"ares.run\":\"x\"}}",
	  "not byte-exactly \"Labels\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"privileged\":true}}",
	  "HostConfig member \"privileged\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"memory\":8388608}}",
	  "not byte-exactly \"Memory\"" },
	/* duplicates, also up to case or folding */
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{},\"HostConfig\":"
	  "{\"Privileged\":true}}", "\"HostConfig\": duplicate member" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{},\"hostConfig\":{}}",
	  "hostConfig" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{},\"Ho\\u017ftConfig\":{}}",
	  "Ho\\u017FtConfig" },
	{ "{\"Image\":\"" IMG "\",\"Image\":\"busybox\"}",
	  "\"Image\": duplicate member" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":8388608,"
	  "\"Memory\":0}}", "HostConfig member \"Memory\": duplicate" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"a\":\"1\",\"a\":\"2\"}}",
	  "label \"a\": duplicate label" },
	{ "{\"Image\":\"" IMG "\",\"Cmd\":[],\"Cmd\":[\"sh\"]}", "duplicate" },
	/* top-level HostConfig fields (old API decoding) and more */
	{ "{\"Image\":\"" IMG "\",\"Binds\":[\"/:/hostfs\"]}", "\"Binds\": unknown" },
	{ "{\"Image\":\"" IMG "\",\"Privileged\":true}", "\"Privileged\"" },
	{ "{\"Image\":\"" IMG "\",\"NetworkMode\":\"host\"}", "\"NetworkMode\"" },
	{ "{\"Image\":\"" IMG "\",\"PidMode\":\"host\"}", "\"PidMode\"" },
	{ "{\"Image\":\"" IMG "\",\"CapAdd\":[\"ALL\"]}", "\"CapAdd\"" },
	{ "{\"Image\":\"" IMG "\",\"NetworkingConfig\":{}}", "\"NetworkingConfig\"" },
	{ "{\"Image\":\"" IMG "\",\"Volumes\":{\"/h\":{}}}", "\"Volumes\"" },
	{ "{\"Image\":\"" IMG "\",\"NetworkDisabled\":false}",
	  "\"NetworkDisabled\"" },
	{ "{\"Image\":\"" IMG "\",\"OomScoreAdj\":-1000}", "\"OomScoreAdj\"" },
	{ "{\"Image\":\"" IMG "\",\"ShmSize\":10737418240}", "\"ShmSize\"" },
	/* HostConfig: only Memory, NanoCpus, PidsLimit within the caps */
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Binds\":[\"/:/h\"]}}",
	  "HostConfig member \"Binds\": not allowed" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Privileged\":false}}",
	  "HostConfig member \"Privileged\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"OomScoreAdj\":-1000}}",
	  "HostConfig member \"OomScoreAdj\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"OomKillDisable\":true}}",
	  "HostConfig member \"OomKillDisable\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"ShmSize\":10737418240}}",
	  "HostConfig member \"ShmSize\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Tmpfs\":{\"/tmp\":"
	  "\"rw,exec\"}}}", "HostConfig member \"Tmpfs\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Devices\":[]}}",
	  "HostConfig member \"Devices\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"SecurityOpt\":"
	  "[\"seccomp=unconfined\"]}}", "HostConfig member \"SecurityOpt\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":1073741824}}",
	  "HostConfig member \"Memory\": want an integer in 6291456..67108864" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":0}}",
	  "\"Memory\": want an integer" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":8388608.5}}",
	  "\"Memory\": want an integer" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":1e400}}",
	  "\"Memory\": want an integer" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Memory\":\"8m\"}}",
	  "\"Memory\": want an integer" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"PidsLimit\":-1}}",
	  "\"PidsLimit\": want an integer in 1..64" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"PidsLimit\":0}}",
	  "\"PidsLimit\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"NanoCpus\":2000000000}}",
	  "\"NanoCpus\"" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":[]}", "\"HostConfig\": wrong type" },
	/* labels: never the proxy's */
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"ares.run\":\"other\"}}",
	  "label \"ares.run\": the ares.* labels are the proxy's" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"ares.origin\":\"lab\"}}",
	  "label \"ares.origin\"" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"Ares.Run\":\"x\"}}",
	  "label \"Ares.Run\"" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"a\":1}}", "label \"a\": wrong type" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"a\\nb\":\"1\"}}", "bad key" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"\":\"1\"}}", "bad key" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":{\"a\":\"\\u001b[2J\"}}", "bad value" },
	{ "{\"Image\":\"" IMG "\",\"Labels\":[]}", "\"Labels\": wrong type" },
	/* image and user */
	{ "{\"Image\":\"busybox\"}", "\"Image\": only the lab image" },
	{ "{\"Image\":\"" IMG "x\"}", "only the lab image" },
	{ "{\"Image\":1}", "\"Image\": wrong type" },
	{ "{\"Cmd\":[\"sh\"]}", "\"Image\" is required" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"0\"}", "\"User\": root" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"0:0\"}", "\"User\": root" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"1000:0\"}", "\"User\": root" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"00\"}", "\"User\": root" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"root\"}", "\"User\": want a numeric" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"1000:\"}", "\"User\": want a numeric" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"-1\"}", "\"User\": want a numeric" },
	{ "{\"Image\":\"" IMG "\",\"User\":\"99999999999\"}", "\"User\"" },
	{ "{\"Image\":\"" IMG "\",\"User\":1000}", "\"User\": wrong type" },
	/* wrong types and values */
	{ "{\"Image\":\"" IMG "\",\"Tty\":\"yes\"}", "\"Tty\": wrong type" },
	{ "{\"Image\":\"" IMG "\",\"Tty\":null}", "\"Tty\": wrong type" },
	{ "{\"Image\":\"" IMG "\",\"Cmd\":\"sh\"}", "\"Cmd\": wrong type" },
	{ "{\"Image\":\"" IMG "\",\"Cmd\":[\"sh\",1]}", "\"Cmd\": wrong type" },
	{ "{\"Image\":\"" IMG "\",\"Cmd\":[\"\xff\"]}", "not valid UTF-8" },
	{ "{\"Image\":\"" IMG "\",\"Env\":[1]}", "\"Env\": wrong type" },
	{ "{\"Image\":\"" IMG "\",\"Env\":[\"=x\"]}", "\"Env\": want" },
	{ "{\"Image\":\"" IMG "\",\"Env\":[\"1A=x\"]}", "\"Env\": want" },
	{ "{\"Image\":\"" IMG "\",\"Env\":[\"NOVALUE\"]}", "\"Env\": want" },
	{ "{\"Image\":\"" IMG "\",\"Env\":[\"A-B=1\"]}", "\"Env\": want" },
	{ "{\"Image\":\"" IMG "\",\"WorkingDir\":\"tmp\"}", "\"WorkingDir\"" },
	{ "{\"Image\":\"" IMG "\",\"Hostname\":\"a.b\"}", "\"Hostname\"" },
	{ "{\"Image\":\"" IMG "\",\"Hostname\":\"-a\"}", "\"Hostname\"" },
	{ "{\"Image\":\"" IMG "\",\"StopSignal\":\"SIGSTOP\"}", "\"StopSignal\"" },
	{ "{\"Image\":\"" IMG "\",\"StopSignal\":\"31\"}", "\"StopSignal\"" },
	{ "{\"Image\":\"" IMG "\",\"Unknown\":1}", "\"Unknown\": unknown member" },
	{ "{\"Image\":\"" IMG "\",\"Domainname\":\"\"}", "\"Domainname\"" },
	{ "{\"Image\":\"" IMG "\",\"\":1}", "\"\": unknown member" },
	{ "{\"Image\":\"" IMG "\",\"\\u001b[31m\":1}", "\"\\u001B[31m\"" },
	/* the body as a whole */
	{ "{\"Image\":\"" IMG "\"} trailing", "trailing bytes" },
	{ "{\"Image\":\"" IMG "\"}{\"HostConfig\":{\"Privileged\":true}}",
	  "trailing bytes" },
	{ "{\"Image\":\"" IMG "\"}\f", "trailing bytes" },
	{ "[]", "not a JSON object" },
	{ "\"x\"", "not a JSON object" },
	{ "{\"Image\":", "not valid JSON" },
	{ "", "empty body" },
	{ "{\"Image\":\"" IMG "\",\"HostConfig\":{\"Privileged\\u0000\":true}}",
	  "\\u0000" },
	{ "{\"Image\":\"" IMG "\",\"Cmd\":[\"a\\u0000b\"]}", "\\u0000" },
};

static void test_create_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		struct errbuf e = { 0 };
		cJSON *asked = NULL;
		const char *b = refusals[i].body;
		char *out = compose(b, strlen(b), &e, &asked);
		if (out)
			fail_msg("#%zu %s: not refused: %s", i, b, out);
		if (!strstr(e.msg, refusals[i].needle))
			fail_msg("#%zu %s: reason \"%s\" lacks \"%s\"", i, b, e.msg,
			    refusals[i].needle);
		assert_int_equal(e.code, ERRBUF_INPUT);
		/* the reason is inert text, bounded */
		for (const char *p = e.msg; *p; p++)
			assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
		/* what was asked is recorded whenever the body was an object */
		if (b[0] == '{' && !strstr(e.msg, "JSON") && !strstr(e.msg,
		    "trailing") && !strstr(e.msg, "\\u0000"))
			assert_true(cJSON_IsObject(asked));
		cJSON_Delete(asked);
	}
	/* raw NUL byte, oversized body */
	struct errbuf e = { 0 };
	const char nul[] = "{\"Image\":\"" IMG "\"}\0{\"HostConfig\":{}}";
	assert_null(compose(nul, sizeof(nul) - 1, &e, NULL));
	assert_non_null(strstr(e.msg, "NUL byte"));
	char *big = malloc(DOCKERPROXY_BODY_MAX + 2);
	memset(big, ' ', DOCKERPROXY_BODY_MAX + 1);
	big[0] = '{';
	big[DOCKERPROXY_BODY_MAX] = '}';
	big[DOCKERPROXY_BODY_MAX + 1] = '\0';
	assert_null(compose(big, DOCKERPROXY_BODY_MAX + 1, &e, NULL));
	assert_non_null(strstr(e.msg, "max"));
	free(big);
	/* bounded arrays */
	char *many = xstrdup("{\"Image\":\"" IMG "\",\"Cmd\":[\"a\"");
	for (int i = 0; i < DOCKERPROXY_ARGV_MAX; i++) {
		char *n = xasprintf("%s,\"a\"", many);
		free(many);
		many = n;
	}
	char *n = xasprintf("%s]}", many);
	free(many);
	assert_null(compose(n, strlen(n), &e, NULL));
	assert_non_null(strstr(e.msg, "too many"));
	free(n);
	char *longarg = malloc(DOCKERPROXY_ARG_MAX + 64);
	int k = snprintf(longarg, 64, "{\"Image\":\"%s\",\"Cmd\":[\"", IMG);
	memset(longarg + k, 'x', DOCKERPROXY_ARG_MAX + 1);
	strcpy(longarg + k + DOCKERPROXY_ARG_MAX + 1, "\"]}");
	assert_null(compose(longarg, strlen(longarg), &e, NULL));
	assert_non_null(strstr(e.msg, "too long"));
	free(longarg);
	/* a literal backslash before "u0000" is no NUL escape */
	const char *lit = "{\"Image\":\"" IMG "\",\"Cmd\":[\"a\\\\u0000\"]}";
	char *ok = compose(lit, strlen(lit), &e, NULL);
	assert_non_null(ok);
	assert_non_null(strstr(ok, "\"a\\\\u0000\""));
	free(ok);
}

/* A long reason names the member in at most a bounded, escaped form. */
static void test_reason_bounded(void **state)
{
	(void)state;
	char body[8192];
	int n = snprintf(body, sizeof(body), "{\"Image\":\"%s\",\"", IMG);
	for (int i = 0; i < 1000; i++)      /* 6000 bytes of \u017f */
		n += snprintf(body + n, sizeof(body) - (size_t)n, "\\u017f");
	snprintf(body + n, sizeof(body) - (size_t)n, "\":1}");
	struct errbuf e = { 0 };
	cJSON *asked = NULL;
	assert_null(compose(body, strlen(body), &e, &asked));
	assert_true(strlen(e.msg) < 160);
	assert_non_null(strstr(e.msg, "\\u017F\\u017F"));
	assert_non_null(strstr(e.msg, "..."));
	/* the record keeps the escaped name, cut */
	char *as = cJSON_PrintUnformatted(asked);
	assert_true(strlen(as) < 256);
	free(as);
	cJSON_Delete(asked);
}

/* ---- query strings -------------------------------------------------- */

static void test_query(void **state)
{
	(void)state;
	static const struct {
		enum dockerproxy_route r;
		const char *in, *out;       /* out NULL: refused */
		const char *needle;
	} cases[] = {
		{ DP_LIST, "", "", NULL },
		{ DP_LIST, "all=1", "?all=1", NULL },
		{ DP_LIST, "all=true&limit=5", "?all=1&limit=5", NULL },
		{ DP_LIST, "limit=5&all=false", "?all=0&limit=5", NULL },
		{ DP_LIST, "all=yes", NULL, "\"all\": want 0, 1" },
		{ DP_LIST, "limit=0", NULL, "\"limit\"" },
		{ DP_LIST, "limit=1000", NULL, "\"limit\"" },
		{ DP_LIST, "filters=%7B%7D", NULL, "unknown query parameter \"filters\"" },
		{ DP_LIST, "size=1", NULL, "\"size\"" },
		{ DP_LIST, "all=1&all=0", NULL, "duplicate query parameter \"all\"" },
		{ DP_LIST, "All=1", NULL, "unknown query parameter \"All\"" },
		{ DP_LIST, "all", NULL, "no value" },
		{ DP_LIST, "all=1&", NULL, "empty" },
		{ DP_CREATE, "name=helper_1.a-b", "?name=ares-" RUN "-a-helper_1.a-b",
		  NULL },
		{ DP_CREATE, "name=3a7bd3e2360a", "?name=ares-" RUN "-a-3a7bd3e2360a",
		  NULL },
		{ DP_CREATE, "name=a", "?name=ares-" RUN "-a-a", NULL },
		{ DP_CREATE, "name=ares-gateway", NULL, "\"name\"" },
		{ DP_CREATE, "name=ARES-x", NULL, "\"name\"" },
		{ DP_CREATE, "name=a%2Fb", NULL, "\"name\"" },
		{ DP_CREATE, "name=a%00b", NULL, "\"name\"" },
		{ DP_CREATE, "name=.x", NULL, "\"name\"" },
		{ DP_CREATE, "name=", NULL, "\"name\"" },
		{ DP_CREATE, "platform=linux", NULL, "\"platform\"" },
		{ DP_CREATE, "n%61me=x1", "?name=ares-" RUN "-a-x1", NULL },
		{ DP_CREATE, "name=_x", NULL, "\"name\"" },
		{ DP_CREATE, "name=x%zz", NULL, "\"name\"" },
		{ DP_KILL, "signal=9", "?signal=SIGKILL", NULL },
		{ DP_KILL, "signal=KILL", "?signal=SIGKILL", NULL },
		{ DP_KILL, "signal=SIGTERM", "?signal=SIGTERM", NULL },
		{ DP_KILL, "signal=SIGSTOP", NULL, "\"signal\"" },
		{ DP_KILL, "signal=kill", NULL, "\"signal\"" },
		{ DP_KILL, "t=1", NULL, "\"t\"" },
		{ DP_STOP, "t=0", "?t=0", NULL },
		{ DP_STOP, "t=30", "?t=30", NULL },
		{ DP_STOP, "t=31", NULL, "\"t\"" },
		{ DP_STOP, "t=-1", NULL, "\"t\"" },
		{ DP_STOP, "t=1e1", NULL, "\"t\"" },
		{ DP_STOP, "signal=KILL", NULL, "\"signal\"" },
		{ DP_DELETE, "force=1", "?force=1", NULL },
		{ DP_DELETE, "v=true&force=true", "?force=1&v=1", NULL },
		{ DP_DELETE, "force=0", "?force=0", NULL },
		{ DP_DELETE, "link=1", NULL, "\"link\"" },
		{ DP_DELETE, "force=1&Force=1", NULL, "\"Force\"" },
		{ DP_DELETE, "force=1&force=1", NULL, "duplicate" },
		{ DP_INSPECT, "size=1", NULL, "\"size\"" },
		{ DP_START, "detachKeys=ctrl-p", NULL, "\"detachKeys\"" },
		{ DP_PING, "x=1", NULL, "\"x\"" },
		{ DP_IMAGES, "all=1", NULL, "\"all\"" },
		{ DP_INFO, "", "", NULL },
		{ DP_VERSION, "a%01=1", NULL, "unreadable" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct errbuf e = { 0 };
		char *q = dockerproxy_compose_query(cases[i].r, cases[i].in, RUN,
		    &e);
		if (cases[i].out) {
			if (!q)
				fail_msg("#%zu %s: refused: %s", i, cases[i].in, e.msg);
			assert_string_equal(q, cases[i].out);
		} else {
			if (q)
				fail_msg("#%zu %s: not refused: %s", i, cases[i].in, q);
			if (!strstr(e.msg, cases[i].needle))
				fail_msg("#%zu %s: reason \"%s\" lacks \"%s\"", i,
				    cases[i].in, e.msg, cases[i].needle);
		}
		free(q);
	}
	/* a value longer than DOCKERPROXY_QVALUE_MAX */
	char longq[DOCKERPROXY_QVALUE_MAX + 16];
	memcpy(longq, "name=", 5);
	memset(longq + 5, 'a', DOCKERPROXY_QVALUE_MAX + 1);
	longq[5 + DOCKERPROXY_QVALUE_MAX + 1] = '\0';
	struct errbuf e = { 0 };
	assert_null(dockerproxy_compose_query(DP_CREATE, longq, RUN, &e));
	/* a name of 64 bytes is the longest */
	longq[5 + DOCKERPROXY_NAME_MAX] = '\0';
	char *q = dockerproxy_compose_query(DP_CREATE, longq, RUN, &e);
	assert_non_null(q);
	assert_int_equal(strlen(q), 6 + 5 + strlen(RUN) + 3 + DOCKERPROXY_NAME_MAX);
	free(q);
	longq[5 + DOCKERPROXY_NAME_MAX] = 'a';
	longq[5 + DOCKERPROXY_NAME_MAX + 1] = '\0';
	assert_null(dockerproxy_compose_query(DP_CREATE, longq, RUN, &e));
	/* a run id that makes no engine name: no name at all */
	assert_null(dockerproxy_compose_query(DP_CREATE, "name=x", "bad/run", &e));
}

/* ---- names: the run's namespace ------------------------------------- */

static void test_names(void **state)
{
	(void)state;
	char en[DOCKERPROXY_ENGINE_NAME_MAX + 1];
	/* the agent's grammar, unchanged */
	static const char *const ok[] = { "a", "foo", "helper_1.a-b", "3a7bd3e2",
		"A-", "x..", "sibling-0123456789ab", "Ares", "ares_x", "aresx" };
	static const char *const bad[] = { "", "_x", ".x", "-x", "a/b", "a b",
		"ares-x", "ARES-x", "Ares-gateway", "x\xc5\xbf", "x%2e" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (!dockerproxy_name_ok(ok[i]))
			fail_msg("name \"%s\" refused", ok[i]);
		assert_true(dockerproxy_engine_name(RUN, ok[i], en));
		char *want = xasprintf("ares-" RUN "-a-%s", ok[i]);
		assert_string_equal(en, want);
		free(want);
		/* and back, with and without the engine's slash */
		assert_string_equal(dockerproxy_agent_name(RUN, en), ok[i]);
		char *slashed = xasprintf("/%s", en);
		assert_string_equal(dockerproxy_agent_name(RUN, slashed), ok[i]);
		free(slashed);
		/* another run's namespace is not ours */
		assert_null(dockerproxy_agent_name("run-4", en));
		assert_null(dockerproxy_agent_name("run-421", en));
		assert_null(dockerproxy_agent_name("un-42", en));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (dockerproxy_name_ok(bad[i]))
			fail_msg("name \"%s\" accepted", bad[i]);
		assert_false(dockerproxy_engine_name(RUN, bad[i], en));
		assert_string_equal(en, "");
	}
	char longn[DOCKERPROXY_NAME_MAX + 2];
	memset(longn, 'n', sizeof(longn));
	longn[DOCKERPROXY_NAME_MAX] = '\0';
	assert_true(dockerproxy_engine_name(RUN, longn, en));
	longn[DOCKERPROXY_NAME_MAX] = 'n';
	longn[DOCKERPROXY_NAME_MAX + 1] = '\0';
	assert_false(dockerproxy_name_ok(longn));
	/* the longest run id and name fit */
	char longr[DOCKERPROXY_RUN_ID_MAX + 2];
	memset(longr, 'r', sizeof(longr));
	longr[DOCKERPROXY_RUN_ID_MAX] = '\0';
	longn[DOCKERPROXY_NAME_MAX] = '\0';
	assert_true(dockerproxy_engine_name(longr, longn, en));
	assert_int_equal(strlen(en), DOCKERPROXY_ENGINE_NAME_MAX);
	assert_string_equal(dockerproxy_agent_name(longr, en), longn);
	longr[DOCKERPROXY_RUN_ID_MAX] = 'r';
	longr[DOCKERPROXY_RUN_ID_MAX + 1] = '\0';
	assert_false(dockerproxy_run_id_ok(longr));
	assert_false(dockerproxy_engine_name(longr, "x", en));

	/* run ids: the engine's grammar, and no namespace inside another */
	static const char *const rok[] = { RUN, "20260101-120000-deadbeef",
		"dproxy-0123456789ab", "x", "x-ab", "x-a.", "a-x", "x_a-" };
	static const char *const rbad[] = { "", "_x", "-x", ".x", "x/y", "x y",
		"x-a", "x-a-y", "a-a-a" };
	for (size_t i = 0; i < sizeof(rok) / sizeof(rok[0]); i++)
		if (!dockerproxy_run_id_ok(rok[i]))
			fail_msg("run id \"%s\" refused", rok[i]);
	for (size_t i = 0; i < sizeof(rbad) / sizeof(rbad[0]); i++) {
		if (dockerproxy_run_id_ok(rbad[i]))
			fail_msg("run id \"%s\" accepted", rbad[i]);
		assert_false(dockerproxy_engine_name(rbad[i], "x", en));
	}
	/* e.g. run "x" with name "a-y" and run "x-a" with name "y" would both
	 * be ares-x-a-a-y: the second run id is refused */
	assert_true(dockerproxy_engine_name("x", "a-y", en));
	assert_string_equal(en, "ares-x-a-a-y");
	assert_false(dockerproxy_engine_name("x-a", "y", en));

	/* lab containers and foreign names are no agent names */
	static const char *const notours[] = { "/ares-" RUN "-gateway",
		"/ares-" RUN "-agent", "/ares-" RUN "-dockerproxy", "/ares-" RUN "-a-",
		"/ares-" RUN "-a-ares-x", "/ares-" RUN "-a-_x", "/ares-" RUN "a-x",
		"/ares-" RUN, "/foo", "//ares-" RUN "-a-x", "ares-" RUN "-b-x", "" };
	for (size_t i = 0; i < sizeof(notours) / sizeof(notours[0]); i++)
		if (dockerproxy_agent_name(RUN, notours[i]))
			fail_msg("\"%s\" taken for an agent name", notours[i]);
	assert_null(dockerproxy_agent_name(RUN, NULL));
	assert_null(dockerproxy_agent_name("bad/run", "ares-bad/run-a-x"));
}

/* An id prefix names a sibling only when exactly one of this run's
 * agent-made containers has it. */
static void test_prefix_match(void **state)
{
	(void)state;
	cJSON *ours = cJSON_Parse("[{\"Id\":\"" "ab12" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},{\"Id\":\"ab34bbbbbbbbbbbbbbbbbbbbbbbb"
	    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"},{\"Id\":\"c0ffee\"},"
	    "{\"Id\":7},{}]");
	assert_non_null(ours);
	const char *idA = cJSON_GetArrayItem(ours, 0)->child->valuestring;
	const char *idB = cJSON_GetArrayItem(ours, 1)->child->valuestring;
	assert_ptr_equal(dockerproxy_prefix_match(ours, "ab1"), idA);
	assert_ptr_equal(dockerproxy_prefix_match(ours, "ab3"), idB);
	assert_ptr_equal(dockerproxy_prefix_match(ours, idA), idA);
	static const char *const none[] = { "a", "ab", "", "c0ffee", "c", "AB12",
		"ab1g", "ab12 ", "x", "ab12-" };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		if (dockerproxy_prefix_match(ours, none[i]))
			fail_msg("\"%s\" matched", none[i]);
	/* longer than an id */
	char *longer = xasprintf("%s0", idA);
	assert_null(dockerproxy_prefix_match(ours, longer));
	free(longer);
	/* the same id twice (a list that repeats) is still one container */
	cJSON_AddItemToArray(ours, cJSON_Duplicate(cJSON_GetArrayItem(ours, 0),
	    true));
	assert_ptr_equal(dockerproxy_prefix_match(ours, "ab1"), idA);
	assert_null(dockerproxy_prefix_match(NULL, "ab1"));
	cJSON_Delete(ours);
}

/* The answers to a reference that names nothing of the run, and to an
 * engine error, are composed from the route and status alone. */
static void test_answer_errors(void **state)
{
	(void)state;
	static const enum dockerproxy_route percont[] = { DP_INSPECT, DP_START,
		DP_KILL, DP_STOP, DP_DELETE };
	static const long statuses[] = { 0, 1, 199, 400, 404, 409, 500, 503, 599,
		600, -1 };
	cJSON *o = dockerproxy_answer_missing("a");
	char *s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "{\"message\":\"No such container: a\"}");
	free(s);
	cJSON_Delete(o);
	/* bounded, sanitised */
	char longref[600];
	memset(longref, 'r', sizeof(longref) - 1);
	longref[sizeof(longref) - 1] = '\0';
	longref[3] = '\x1b';
	o = dockerproxy_answer_missing(longref);
	s = cJSON_PrintUnformatted(o);
	assert_true(strlen(s) < DOCKERPROXY_ID_MAX + 48);
	assert_null(strchr(s, '\x1b'));
	free(s);
	cJSON_Delete(o);

	for (size_t r = 0; r < sizeof(percont) / sizeof(percont[0]); r++)
		for (size_t k = 0; k < sizeof(statuses) / sizeof(statuses[0]); k++) {
			int st = -7;
			o = dockerproxy_answer_error(percont[r], statuses[k], "foo",
			    &st);
			s = cJSON_PrintUnformatted(o);
			const char *m = cJSON_GetObjectItemCaseSensitive(o,
			    "message")->valuestring;
			long want = statuses[k] < 200 || statuses[k] > 599 ? 502 :
			    statuses[k];
			if (st != want)
				fail_msg("route %d, engine %ld: status %d (want %ld)",
				    (int)percont[r], statuses[k], st, want);
			if (want == 404)
				assert_string_equal(s,
				    "{\"message\":\"No such container: foo\"}");
			else if (want == 502)
				assert_string_equal(m, "ares dockerproxy: the engine did "
				    "not answer");
			else {
				assert_non_null(strstr(m, "ares dockerproxy: "));
				assert_non_null(strstr(m, "container foo"));
			}
			free(s);
			cJSON_Delete(o);
		}
	/* create: 409 names the agent's name and no id */
	int st;
	o = dockerproxy_answer_error(DP_CREATE, 409, "foo", &st);
	assert_int_equal(st, 409);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o,
	    "message")->valuestring, "Conflict. The container name \"/foo\" is "
	    "already in use by another container of this lab. You have to remove "
	    "that container to be able to reuse that name.");
	cJSON_Delete(o);
	o = dockerproxy_answer_error(DP_CREATE, 500, "foo", &st);
	assert_int_equal(st, 500);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o,
	    "message")->valuestring, "ares dockerproxy: the engine could not "
	    "create the container (HTTP 500)");
	cJSON_Delete(o);
	o = dockerproxy_answer_error(DP_CREATE, 0, "foo", &st);
	assert_int_equal(st, 502);
	cJSON_Delete(o);
	o = dockerproxy_answer_error(DP_VERSION, 503, NULL, &st);
	assert_int_equal(st, 503);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o,
	    "message")->valuestring, "ares dockerproxy: the engine could not "
	    "answer (HTTP 503)");
	cJSON_Delete(o);
	/* the delete 409 says what to do */
	o = dockerproxy_answer_error(DP_DELETE, 409, "foo", &st);
	assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(o,
	    "message")->valuestring, "force=1"));
	cJSON_Delete(o);
}

/* ---- answers -------------------------------------------------------- */

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static const char inspect_agent[] =
	"{\"Id\":\"" ID_A "\",\"Name\":\"/ares-" RUN "-a-helper\","
	"\"Created\":\"2026-01-01T00:00:00Z\","
	"\"Path\":\"sh\",\"Args\":[\"-c\",\"id\"],"
	"\"State\":{\"Status\":\"running\",\"Running\":true,\"Paused\":false,"
	"\"Restarting\":false,\"OOMKilled\":false,\"Dead\":false,\"Pid\":4242,"
	"\"ExitCode\":0,\"Error\":\"\",\"StartedAt\":\"s\",\"FinishedAt\":\"f\"},"
	"\"Image\":\"sha256:11\",\"HostsPath\":\"/var/lib/docker/containers/x/hosts\","
	"\"LogPath\":\"/var/lib/docker/containers/x/x-json.log\","
	"\"GraphDriver\":{\"Data\":{\"MergedDir\":\"/var/lib/docker/overlay2/m\"}},"
	"\"Mounts\":[],\"Config\":{\"Hostname\":\"h\",\"User\":\"65532:65532\","
	"\"Env\":[\"PATH=/bin\",\"MINE=secret-env\"],\"Cmd\":[\"sh\",\"-c\",\"id\"],"
	"\"Image\":\"" IMG "\",\"WorkingDir\":\"\",\"Entrypoint\":null,"
	"\"Labels\":{\"ares.run\":\"" RUN "\",\"ares.origin\":\"agent\"}},"
	"\"HostConfig\":{\"Binds\":null,\"NetworkMode\":\"none\",\"Privileged\":false,"
	"\"ReadonlyRootfs\":true,\"Memory\":67108864,\"MemorySwap\":67108864,"
	"\"NanoCpus\":250000000,\"PidsLimit\":64,\"ShmSize\":16777216},"
	"\"NetworkSettings\":{\"SandboxKey\":\"/var/run/docker/netns/x\"}}";

static void test_answer_inspect(void **state)
{
	(void)state;
	cJSON *in = cJSON_Parse(inspect_agent);
	assert_non_null(in);
	cJSON *o = dockerproxy_answer_inspect(in, RUN);
	char *s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "{\"Id\":\"" ID_A "\",\"Name\":\"/helper\","
	    "\"Created\":\"2026-01-01T00:00:00Z\",\"State\":{\"Status\":\"running\","
	    "\"Running\":true,\"Paused\":false,\"Restarting\":false,"
	    "\"OOMKilled\":false,\"Dead\":false,\"ExitCode\":0,\"StartedAt\":\"s\","
	    "\"FinishedAt\":\"f\"},\"Config\":{\"Image\":\"" IMG "\",\"Cmd\":[\"sh\","
	    "\"-c\",\"id\"],\"Entrypoint\":null,\"Labels\":{\"ares.run\":\"" RUN "\","
	    "\"ares.origin\":\"agent\"},\"User\":\"65532:65532\",\"WorkingDir\":\"\"},"
	    "\"HostConfig\":{\"NetworkMode\":\"none\",\"Privileged\":false,"
	    "\"ReadonlyRootfs\":true,\"Memory\":67108864,\"MemorySwap\":67108864,"
	    "\"NanoCpus\":250000000,\"PidsLimit\":64,\"ShmSize\":16777216}}");
	assert_null(strstr(s, "Env"));
	assert_null(strstr(s, "secret-env"));
	assert_null(strstr(s, "/var/lib/docker"));
	assert_null(strstr(s, "4242"));
	assert_null(strstr(s, "ares-" RUN));  /* the engine-side name */
	free(s);
	cJSON_Delete(o);
	/* a name outside the run's namespace is not shown */
	static const char *const foreign_names[] = { "/helper", "/ares-run-43-a-x",
		"/ares-" RUN "-gateway", "/ares-" RUN "-a-", "ares-" RUN "-a-_x" };
	for (size_t i = 0; i < sizeof(foreign_names) / sizeof(foreign_names[0]);
	    i++) {
		cJSON *c = cJSON_Duplicate(in, true);
		cJSON_ReplaceItemInObjectCaseSensitive(c, "Name",
		    cJSON_CreateString(foreign_names[i]));
		o = dockerproxy_answer_inspect(c, RUN);
		if (cJSON_GetObjectItemCaseSensitive(o, "Name"))
			fail_msg("%s shown as %s", foreign_names[i],
			    cJSON_GetObjectItemCaseSensitive(o, "Name")->valuestring);
		cJSON_Delete(o);
		cJSON_Delete(c);
	}

	/* ownership: only agent-made containers of this run */
	const char *why = NULL;
	assert_string_equal(dockerproxy_owned(in, RUN, &why), ID_A);
	assert_null(dockerproxy_owned(in, "run-43", &why));
	assert_non_null(strstr(why, "agent made"));
	cJSON *labels = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(in, "Config"), "Labels");
	cJSON_ReplaceItemInObjectCaseSensitive(labels, "ares.origin",
	    cJSON_CreateString("lab"));
	assert_null(dockerproxy_owned(in, RUN, &why));
	cJSON_DeleteItemFromObjectCaseSensitive(labels, "ares.origin");
	cJSON_AddStringToObject(labels, "ares.role", "gateway");
	assert_null(dockerproxy_owned(in, RUN, &why));
	cJSON_AddStringToObject(labels, "Ares.origin", "agent");
	assert_null(dockerproxy_owned(in, RUN, &why));
	cJSON_AddStringToObject(labels, "ares.origin", "agent");
	assert_non_null(dockerproxy_owned(in, RUN, &why));
	/* a reference that is not a full id is never passed on */
	cJSON_ReplaceItemInObjectCaseSensitive(in, "Id",
	    cJSON_CreateString("aaaaaaaaaaaa"));
	assert_null(dockerproxy_owned(in, RUN, &why));
	assert_non_null(strstr(why, "full container id"));
	cJSON_ReplaceItemInObjectCaseSensitive(in, "Id",
	    cJSON_CreateString(ID_A "/../x"));
	assert_null(dockerproxy_owned(in, RUN, &why));
	cJSON_Delete(in);
}

static void test_answer_list(void **state)
{
	(void)state;
	const char *list = "["
	    "{\"Id\":\"" ID_A "\",\"Names\":[\"/ares-" RUN "-a-helper\"],"
	    "\"Image\":\"" IMG "\","
	    "\"ImageID\":\"sha256:1\",\"Command\":\"sh -c id\",\"Created\":5,"
	    "\"Ports\":[],\"Labels\":{\"ares.run\":\"" RUN "\",\"ares.origin\":"
	    "\"agent\"},\"State\":\"running\",\"Status\":\"Up 1 second\","
	    "\"HostConfig\":{\"NetworkMode\":\"none\"},\"Mounts\":[{\"Source\":"
	    "\"/var/lib\"}],\"NetworkSettings\":{}},"
	    "{\"Id\":\"" ID_B "\",\"Names\":[\"/gw\"],\"Labels\":{\"ares.run\":\"" RUN
	    "\",\"ares.role\":\"gateway\"},\"State\":\"running\"},"
	    "{\"Id\":\"" ID_C "\",\"Labels\":{\"ares.run\":\"run-43\","
	    "\"ares.origin\":\"agent\"}},"
	    "{\"Id\":\"short\",\"Labels\":{\"ares.run\":\"" RUN "\","
	    "\"ares.origin\":\"agent\"}},"
	    "{\"Id\":\"" ID_C "\"},"
	    "{\"Id\":\"" ID_B "\",\"Names\":[\"/x\",\"/ares-" RUN "-a-x\","
	    "\"/ares-run-43-a-y\",7],\"Labels\":{\"ares.run\":\"" RUN
	    "\",\"ares.origin\":\"agent\"},\"State\":\"exited\"}]";
	cJSON *j = cJSON_Parse(list);
	cJSON *o = dockerproxy_answer_list(j, RUN);
	char *s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "[{\"Id\":\"" ID_A "\",\"Names\":[\"/helper\"],"
	    "\"Image\":\"" IMG "\",\"Command\":\"sh -c id\",\"Created\":5,"
	    "\"State\":\"running\",\"Status\":\"Up 1 second\",\"Labels\":"
	    "{\"ares.run\":\"" RUN "\",\"ares.origin\":\"agent\"}},"
	    "{\"Id\":\"" ID_B "\",\"Names\":[\"/x\"],\"State\":\"exited\","
	    "\"Labels\":{\"ares.run\":\"" RUN "\",\"ares.origin\":\"agent\"}}]");
	free(s);
	/* info counts what the list holds */
	cJSON *info = cJSON_Parse("{\"ServerVersion\":\"20.10\",\"OSType\":"
	    "\"linux\",\"Architecture\":\"x86_64\",\"NCPU\":2,\"MemTotal\":1000,"
	    "\"Containers\":99,\"Name\":\"the-host\",\"DockerRootDir\":"
	    "\"/var/lib/docker\",\"RegistryConfig\":{},\"Swarm\":{}}");
	cJSON *io = dockerproxy_answer_info(info, o);
	s = cJSON_PrintUnformatted(io);
	assert_string_equal(s, "{\"ServerVersion\":\"20.10\",\"OSType\":\"linux\","
	    "\"Architecture\":\"x86_64\",\"NCPU\":2,\"MemTotal\":1000,"
	    "\"Containers\":2,\"ContainersRunning\":1,\"ContainersPaused\":0,"
	    "\"ContainersStopped\":1,\"Images\":1}");
	free(s);
	cJSON_Delete(io);
	cJSON_Delete(info);
	cJSON_Delete(o);
	cJSON_Delete(j);
	j = cJSON_Parse("{}");
	assert_null(dockerproxy_answer_list(j, RUN));
	cJSON_Delete(j);
}

static void test_answer_images_version(void **state)
{
	(void)state;
	cJSON *j = cJSON_Parse("[{\"Id\":\"sha256:11\",\"RepoTags\":[\"corp/"
	    "secret:1\"],\"Size\":1},{\"Id\":\"sha256:22\",\"RepoTags\":[\"x:1\",\""
	    IMG "\"],\"Created\":7,\"Size\":2,\"Labels\":{\"k\":\"v\"},"
	    "\"RepoDigests\":[\"d\"]},{\"Id\":\"sha256:33\",\"RepoTags\":null}]");
	cJSON *o = dockerproxy_answer_images(j, IMG);
	char *s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "[{\"Id\":\"sha256:22\",\"RepoTags\":[\"" IMG "\"],"
	    "\"Created\":7,\"Size\":2}]");
	free(s);
	cJSON_Delete(o);
	o = dockerproxy_answer_images(j, "ares-lab:other");
	assert_int_equal(cJSON_GetArraySize(o), 0);
	cJSON_Delete(o);
	cJSON_Delete(j);

	j = cJSON_Parse("{\"Version\":\"29.1\",\"ApiVersion\":\"1.52\","
	    "\"MinAPIVersion\":\"1.44\",\"Os\":\"linux\",\"Arch\":\"amd64\","
	    "\"KernelVersion\":\"6.1\",\"Components\":[{}]}");
	o = dockerproxy_answer_version(j, "1.44");
	s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "{\"Version\":\"29.1\",\"ApiVersion\":\"1.44\","
	    "\"MinAPIVersion\":\"1.44\",\"Os\":\"linux\",\"Arch\":\"amd64\"}");
	free(s);
	cJSON_Delete(o);
	cJSON_Delete(j);
}

static void test_pick_api(void **state)
{
	(void)state;
	static const struct {
		const char *api, *min, *want;   /* want NULL: refused */
	} cases[] = {
		{ "1.41", "1.12", "1.41" },
		{ "1.47", "1.24", "1.41" },
		{ "1.52", "1.41", "1.41" },
		{ "1.52", "1.44", "1.44" },
		{ "2.0", "1.50", "1.50" },
		{ "1.41", NULL, "1.41" },
		{ "1.45", "", "1.41" },
		{ "1.40", "1.12", NULL },
		{ "1.44", "1.45", NULL },
		{ "x", "1.12", NULL },
		{ NULL, "1.12", NULL },
		{ "1.41", "1.x", NULL },
		{ "1.41.1", "1.12", NULL },
		{ "99999.1", "1.12", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[16];
		struct errbuf e = { 0 };
		int rc = dockerproxy_pick_api(cases[i].api, cases[i].min, out, &e);
		if (cases[i].want) {
			if (rc != 0)
				fail_msg("#%zu: refused: %s", i, e.msg);
			assert_string_equal(out, cases[i].want);
		} else {
			if (rc != -1)
				fail_msg("#%zu: accepted %s", i, out);
			assert_int_equal(e.code, ERRBUF_ENGINE);
		}
	}
}

/* ---- records -------------------------------------------------------- */

/* The largest body an agent may send still gives an event that fits one
 * datagram, with the composed HostConfig intact. */
static void test_record_bounded(void **state)
{
	(void)state;
	char *body = xstrdup("{\"Image\":\"" IMG "\",\"Env\":[");
	for (int i = 0; i < DOCKERPROXY_ARGV_MAX; i++) {
		char v[3000];
		memset(v, 'v', sizeof(v) - 1);
		v[sizeof(v) - 1] = '\0';
		char *n = xasprintf("%s%s\"K%d=\\\"%s\"", body, i ? "," : "", i, v);
		free(body);
		body = n;
	}
	char *n = xasprintf("%s],\"Cmd\":[\"sh\"],\"Labels\":{", body);
	free(body);
	body = n;
	for (int i = 0; i < DOCKERPROXY_LABELS_MAX; i++) {
		n = xasprintf("%s%s\"label-%d-%0100d\":\"%01000d\"", body, i ? "," : "",
		    i, 0, 0);
		free(body);
		body = n;
	}
	n = xasprintf("%s}}", body);
	free(body);
	body = n;
	assert_true(strlen(body) < DOCKERPROXY_BODY_MAX);
	struct errbuf e = { 0 };
	cJSON *asked = NULL;
	cJSON *got = dockerproxy_compose_create(body, strlen(body), RUN, IMG,
	    NULL, NULL, &asked, &e);
	if (!got)
		fail_msg("refused: %s", e.msg);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "src", "dockerproxy");
	cJSON_AddStringToObject(ev, "kind", "docker_api");
	cJSON_AddStringToObject(ev, "method", "POST");
	cJSON_AddStringToObject(ev, "path", "/containers/create");
	cJSON_AddNumberToObject(ev, "status", 201);
	cJSON_AddItemToObject(ev, "asked", asked);
	cJSON_AddItemToObject(ev, "got", dockerproxy_record(got,
	    DOCKERPROXY_RECORD_MAX));
	char *plain = cJSON_PrintUnformatted(ev);
	/* records stay within budget without any shrinking */
	assert_true(strlen(plain) < BUS_DGRAM_MAX);
	free(plain);
	char *s = sensor_serialize(ev, BUS_DGRAM_MAX);
	assert_non_null(s);
	cJSON *back = cJSON_Parse(s);
	const cJSON *hc = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(back, "got"), "HostConfig");
	char *hs = cJSON_PrintUnformatted(hc);
	assert_string_equal(hs, HC_DEFAULT("67108864", "250000000", "64"));
	free(hs);
	/* the cut is marked */
	assert_non_null(strstr(s, "..."));
	cJSON_Delete(back);
	free(s);
	cJSON_Delete(ev);
	cJSON_Delete(got);
	free(body);

	/* names are recorded escaped, strings sanitised */
	cJSON *j = cJSON_Parse("{\"Ho\\u017ftConfig\":{\"Binds\":[\"/:/h\"]},"
	    "\"x\":\"a\\u001b[2Jb\",\"n\":-1000,\"b\":true,\"z\":null,"
	    "\"deep\":{\"a\":{\"b\":{\"c\":{\"d\":1}}}}}");
	cJSON *r = dockerproxy_record(j, DOCKERPROXY_RECORD_MAX);
	s = cJSON_PrintUnformatted(r);
	assert_string_equal(s, "{\"Ho\\\\u017FtConfig\":{\"Binds\":[\"/:/h\"]},"
	    "\"x\":\"ab\",\"n\":-1000,\"b\":true,\"z\":null,\"deep\":{\"a\":"
	    "{\"b\":{\"c\":\"{...}\"}}}}");
	free(s);
	cJSON_Delete(r);
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_create_benign),
		cmocka_unit_test(test_create_owner),
		cmocka_unit_test(test_create_refused),
		cmocka_unit_test(test_reason_bounded),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_prefix_match),
		cmocka_unit_test(test_answer_errors),
		cmocka_unit_test(test_answer_inspect),
		cmocka_unit_test(test_answer_list),
		cmocka_unit_test(test_answer_images_version),
		cmocka_unit_test(test_pick_api),
		cmocka_unit_test(test_record_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
