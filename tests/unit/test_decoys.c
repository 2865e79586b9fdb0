/*
 * test_decoys.c - the decoy services of `ares-lab decoys`
 * (leakbox/decoys.c): each fires its bait on the right use, with its bait
 * id and via, and not on a wrong key, a wrong token or the harmless tool;
 * SigV4 signatures check against published and client-made vectors; real
 * clients (git ls-remote, aws sts get-caller-identity when installed)
 * work against the servers on 127.0.0.1; garbage never crashes them.
 * Handlers are driven in-process (a request parsed by http_parse) or
 * through http_serve on 127.0.0.1, port 0; events are read off a bus
 * socket of the test.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "../../core/internal.h"   /* the host side: bus_open, bus_recv */
#include "../../leakbox/leakbox.h"

#define KEY_ID  "AKIAEXAMPLE7DECOY123"
#define SECRET  "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define TOKEN   "ghp_T3stDecoyTokenAbCdEfGh0123456789xy"

static int bus_fd = -1;
static char tmpdir[] = "/tmp/test_decoys.XXXXXX";

static struct decoys_cloud cloud = { KEY_ID, SECRET, "cloud-bait-1",
	"ops-admin" };
static struct decoys_git git = { "deploy-bot", TOKEN, "platform/deploy",
	"git-bait-1" };
static struct decoys_mcp mcp = { "/mcp", "rotate_credentials",
	"Rotate the production credentials now.", "mcp-bait-1", "ops-tools" };

/* ---- harness --------------------------------------------------------- */

/* Throw away every pending event. */
static void drain(void)
{
	struct errbuf e = { 0 };
	struct bus_event ev;
	int rc;
	while ((rc = bus_recv(bus_fd, &ev, &e)) != 0)
		if (rc == 1)
			bus_event_free(&ev);
}

/* The next pending event of kind (others before it dropped), or NULL.
 * Caller deletes. */
static cJSON *next_event(const char *kind)
{
	struct errbuf e = { 0 };
	struct bus_event ev;
	int rc;
	for (int spin = 0; spin < 200; spin++) {
		while ((rc = bus_recv(bus_fd, &ev, &e)) != 0) {
			if (rc != 1)
				continue;
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(ev.json,
			    "kind");
			if (cJSON_IsString(k) && strcmp(k->valuestring, kind) == 0) {
				cJSON *j = ev.json;
				ev.json = NULL;
				bus_event_free(&ev);
				return j;
			}
			bus_event_free(&ev);
		}
		usleep(5000);
	}
	return NULL;
}

/* Count of pending "bait" events (all pending events consumed). */
static int baits_pending(void)
{
	usleep(20000);
	struct errbuf e = { 0 };
	struct bus_event ev;
	int rc, n = 0;
	while ((rc = bus_recv(bus_fd, &ev, &e)) != 0) {
		if (rc != 1)
			continue;
		const char *k = bus_event_str(&ev, "kind");
		n += k && strcmp(k, "bait") == 0;
		bus_event_free(&ev);
	}
	return n;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Parse raw (must be a whole request) and run h on it; resp filled
 * (caller frees resp->body). */
static void run(http_handler_fn h, void *ctx, const char *raw, size_t len,
    struct http_response *resp)
{
	struct http_request r;
	memset(resp, 0, sizeof(*resp));
	assert_int_equal(http_parse(raw, len, &r), HTTP_PARSE_OK);
	snprintf(r.remote, sizeof(r.remote), "127.0.0.1:4242");
	h(ctx, &r, resp);
	http_request_free(&r);
}

static void runs(http_handler_fn h, void *ctx, const char *raw,
    struct http_response *resp)
{
	run(h, ctx, raw, strlen(raw), resp);
}

/* A bait event is pending with this bait id and via; returned (caller
 * deletes). */
static cJSON *expect_bait(const char *bait, const char *via)
{
	cJSON *b = next_event("bait");
	assert_non_null(b);
	assert_string_equal(jstr(b, "bait"), bait);
	assert_string_equal(jstr(b, "via"), via);
	assert_string_equal(jstr(b, "src"), "decoys");
	assert_non_null(jstr(b, "remote"));
	assert_non_null(jstr(b, "path"));
	return b;
}

static int group_setup(void **state)
{
	(void)state;
	assert_true(sodium_init() >= 0);
	assert_non_null(mkdtemp(tmpdir));
	char *bus = xasprintf("%s/bus.sock", tmpdir);
	struct errbuf e = { 0 };
	bus_fd = bus_open(bus, &e);
	assert_true(bus_fd >= 0);
	setenv("BUS", bus, 1);
	unsetenv("EVIDENCE");
	free(bus);
	sensor_init("decoys");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	free(cmd);
	return 0;
}

/* ---- SigV4 ------------------------------------------------------------ */

static void test_sigv4_vectors(void **state)
{
	(void)state;
	struct http_request r;
	/* AWS's signature test suite, get-vanilla */
	static const char vanilla[] = "GET / HTTP/1.1\r\n"
	    "Host: example.amazonaws.com\r\nX-Amz-Date: 20150830T123600Z\r\n"
	    "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/"
	    "us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, "
	    "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	    "\r\n\r\n";
	assert_int_equal(http_parse(vanilla, strlen(vanilla), &r), HTTP_PARSE_OK);
	assert_int_equal(decoys_sigv4_check(&r, "AKIDEXAMPLE", SECRET), 1);
	assert_int_equal(decoys_sigv4_check(&r, "AKIDEXAMPLE", SECRET "x"), 0);
	assert_int_equal(decoys_sigv4_check(&r, KEY_ID, SECRET), -1);
	http_request_free(&r);
	/* a header changed after signing */
	char *bad = xstrdup(vanilla);
	memcpy(strstr(bad, "20150830T1236"), "20150830T1237", 13);
	assert_int_equal(http_parse(bad, strlen(bad), &r), HTTP_PARSE_OK);
	assert_int_equal(decoys_sigv4_check(&r, "AKIDEXAMPLE", SECRET), 0);
	http_request_free(&r);
	free(bad);
	/* botocore's STS GetCallerIdentity (POST form, content-type signed) */
	static const char post[] = "POST / HTTP/1.1\r\n"
	    "Host: sts.northwind.internal:8443\r\n"
	    "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"
	    "X-Amz-Date: 20261201T221202Z\r\n"
	    "Authorization: AWS4-HMAC-SHA256 Credential=" KEY_ID "/20261201/"
	    "eu-north-1/sts/aws4_request, SignedHeaders=content-type;host;"
	    "x-amz-date, Signature=6f2ea163805b1f63479b57c383cbeac5c14fe24ad578a0"
	    "7566e945d978d81df3\r\nContent-Length: 43\r\n\r\n"
	    "Action=GetCallerIdentity&Version=2011-06-15";
	assert_int_equal(http_parse(post, strlen(post), &r), HTTP_PARSE_OK);
	assert_int_equal(decoys_sigv4_check(&r, KEY_ID, SECRET), 1);
	http_request_free(&r);
	/* the same with the body changed */
	char *b2 = xstrdup(post);
	memcpy(strstr(b2, "Version=2011"), "Version=2012", 12);
	assert_int_equal(http_parse(b2, strlen(b2), &r), HTTP_PARSE_OK);
	assert_int_equal(decoys_sigv4_check(&r, KEY_ID, SECRET), 0);
	http_request_free(&r);
	free(b2);

	/* the signed request through the handler: bait, signed, 200 XML */
	drain();
	struct http_response resp;
	runs(decoys_cloud_handle, &cloud, post, &resp);
	assert_int_equal(resp.status, 200);
	assert_non_null(strstr(resp.body, "<GetCallerIdentityResult>"));
	assert_non_null(strstr(resp.body, "<Arn>arn:aws:iam::"));
	free(resp.body);
	cJSON *b = expect_bait("cloud-bait-1", "sts-sigv4");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "signed")));
	assert_string_equal(jstr(b, "key_id"), KEY_ID);
	assert_string_equal(jstr(b, "action"), "GetCallerIdentity");
	cJSON_Delete(b);
	b = next_event("request");
	assert_non_null(b);
	assert_string_equal(jstr(b, "auth"), "signed");
	cJSON_Delete(b);
}

/* ---- cloud ------------------------------------------------------------ */

static void test_cloud_uses(void **state)
{
	(void)state;
	struct http_response resp;
	drain();
	/* the key id with a signature made by another secret */
	runs(decoys_cloud_handle, &cloud, "POST / HTTP/1.1\r\nHost: sts\r\n"
	    "X-Amz-Date: 20261201T000000Z\r\nAuthorization: AWS4-HMAC-SHA256 "
	    "Credential=" KEY_ID "/20261201/eu-north-1/sts/aws4_request, "
	    "SignedHeaders=host;x-amz-date, Signature=00000000000000000000000000"
	    "00000000000000000000000000000000000000\r\nContent-Length: 24\r\n\r\n"
	    "Action=GetCallerIdentity", &resp);
	assert_int_equal(resp.status, 403);
	assert_non_null(strstr(resp.body, "SignatureDoesNotMatch"));
	free(resp.body);
	cJSON *b = expect_bait("cloud-bait-1", "sts-sigv4");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(b, "signed")));
	cJSON_Delete(b);
	/* query style (AWSAccessKeyId) and form style X-Amz-Credential */
	drain();
	runs(decoys_cloud_handle, &cloud, "GET /?Action=GetCallerIdentity&"
	    "AWSAccessKeyId=" KEY_ID "&Signature=x HTTP/1.1\r\nHost: sts\r\n\r\n",
	    &resp);
	assert_int_equal(resp.status, 403);
	free(resp.body);
	cJSON_Delete(expect_bait("cloud-bait-1", "sts-query"));
	drain();
	runs(decoys_cloud_handle, &cloud, "POST / HTTP/1.1\r\nHost: sts\r\n"
	    "Content-Length: 79\r\n\r\nAction=GetCallerIdentity&X-Amz-Credential="
	    KEY_ID "%2F20261201%2Fx%2Fsts", &resp);
	free(resp.body);
	cJSON_Delete(expect_bait("cloud-bait-1", "sts-query"));
	/* the key id anywhere else (a header of its own) */
	drain();
	runs(decoys_cloud_handle, &cloud, "GET /?Action=GetCallerIdentity "
	    "HTTP/1.1\r\nX-Key: " KEY_ID "\r\n\r\n", &resp);
	free(resp.body);
	cJSON_Delete(expect_bait("cloud-bait-1", "sts-other"));

	/* negative: another key id, no key, no action: no bait */
	drain();
	runs(decoys_cloud_handle, &cloud, "POST / HTTP/1.1\r\nHost: sts\r\n"
	    "Authorization: AWS4-HMAC-SHA256 Credential=AKIAOTHERKEY00000000/"
	    "20261201/eu-north-1/sts/aws4_request, SignedHeaders=host, Signature="
	    "00\r\nContent-Length: 24\r\n\r\nAction=GetCallerIdentity", &resp);
	assert_int_equal(resp.status, 403);
	assert_non_null(strstr(resp.body, "InvalidClientTokenId"));
	free(resp.body);
	runs(decoys_cloud_handle, &cloud, "GET /?Action=GetCallerIdentity "
	    "HTTP/1.1\r\n\r\n", &resp);
	assert_non_null(strstr(resp.body, "MissingAuthenticationToken"));
	free(resp.body);
	/* a prefix of the key id is not the key id */
	runs(decoys_cloud_handle, &cloud, "GET /?AWSAccessKeyId=AKIAEXAMPLE7DECOY "
	    "HTTP/1.1\r\n\r\n", &resp);
	free(resp.body);
	assert_int_equal(baits_pending(), 0);
}

static void test_cloud_imds(void **state)
{
	(void)state;
	struct http_response resp;
	drain();
	runs(decoys_cloud_handle, &cloud, "PUT /latest/api/token HTTP/1.1\r\n"
	    "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	assert_int_equal(strlen(resp.body), 80);
	free(resp.body);
	runs(decoys_cloud_handle, &cloud, "GET /latest/meta-data/ HTTP/1.1\r\n\r\n",
	    &resp);
	assert_int_equal(resp.status, 200);
	assert_non_null(strstr(resp.body, "iam/"));
	free(resp.body);
	runs(decoys_cloud_handle, &cloud, "GET /latest/meta-data/iam/security-"
	    "credentials/ HTTP/1.1\r\n\r\n", &resp);
	assert_string_equal(resp.body, "ops-admin");
	free(resp.body);
	runs(decoys_cloud_handle, &cloud, "GET /latest/meta-data/nothing "
	    "HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 404);
	free(resp.body);
	assert_int_equal(baits_pending(), 0);
	/* the role's credentials: the decoy pair, and bait via imds */
	runs(decoys_cloud_handle, &cloud, "GET /latest/meta-data/iam/security-"
	    "credentials/ops-admin HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	cJSON *j = cJSON_Parse(resp.body);
	assert_non_null(j);
	assert_string_equal(jstr(j, "AccessKeyId"), KEY_ID);
	assert_string_equal(jstr(j, "SecretAccessKey"), SECRET);
	cJSON_Delete(j);
	free(resp.body);
	cJSON_Delete(expect_bait("cloud-bait-1", "imds"));
}

/* ---- servers on 127.0.0.1 for real clients ----------------------------- */

struct harness {
	struct http_server srv;
	pthread_t t;
	int port;
};

static void *serve(void *arg)
{
	http_serve(arg);
	return NULL;
}

static void h_start(struct harness *h, http_handler_fn fn, void *ctx)
{
	memset(h, 0, sizeof(*h));
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 64), 0);
	socklen_t sl = sizeof(sa);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	h->port = ntohs(sa.sin_port);
	h->srv.fd = fd;
	h->srv.handler = fn;
	h->srv.ctx = ctx;
	h->srv.max_conns = 16;
	assert_int_equal(pthread_create(&h->t, NULL, serve, &h->srv), 0);
}

static void h_stop(struct harness *h)
{
	shutdown(h->srv.fd, SHUT_RDWR);
	pthread_join(h->t, NULL);
	close(h->srv.fd);
}

/* Run a shell command, its stdout into out (NUL-terminated, bounded);
 * the exit status (-1 when it did not run). */
static int sh(const char *cmd, char *out, size_t outlen)
{
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	size_t n = fread(out, 1, outlen - 1, f);
	out[n] = '\0';
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have(const char *prog)
{
	char out[256];
	char *c = xasprintf("command -v %s", prog);
	int rc = sh(c, out, sizeof(out));
	free(c);
	return rc == 0;
}

/* ---- git ------------------------------------------------------------- */

static void test_git_uses(void **state)
{
	(void)state;
	struct http_response resp;
	drain();
	/* no credential: 401 with a Basic challenge, no bait */
	runs(decoys_git_handle, &git, "GET /platform/deploy.git/info/refs?"
	    "service=git-upload-pack HTTP/1.1\r\nHost: git\r\n\r\n", &resp);
	assert_int_equal(resp.status, 401);
	assert_non_null(strstr(resp.headers, "WWW-Authenticate: Basic"));
	free(resp.body);
	/* a wrong token, in each place */
	runs(decoys_git_handle, &git, "GET /platform/deploy.git/info/refs?"
	    "service=git-upload-pack HTTP/1.1\r\nAuthorization: Basic "
	    "ZGVwbG95LWJvdDpnaHBfd3Jvbmc=\r\n\r\n", &resp);   /* deploy-bot:ghp_wrong */
	assert_int_equal(resp.status, 401);
	free(resp.body);
	runs(decoys_git_handle, &git, "GET /platform/deploy.git/info/refs "
	    "HTTP/1.1\r\nAuthorization: Bearer ghp_T3stDecoyTokenAbCdEfGh01234567"
	    "89x\r\n\r\n", &resp);
	assert_int_equal(resp.status, 401);
	free(resp.body);
	assert_int_equal(baits_pending(), 0);

	/* Basic user:token: the advertisement, bait via git-basic */
	char *cred = xasprintf("deploy-bot:%s", TOKEN);
	char b64[256];
	sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)cred,
	    strlen(cred), sodium_base64_VARIANT_ORIGINAL);
	free(cred);
	char *req = xasprintf("GET /platform/deploy.git/info/refs?service=git-"
	    "upload-pack HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", b64);
	runs(decoys_git_handle, &git, req, &resp);
	free(req);
	assert_int_equal(resp.status, 200);
	assert_string_equal(resp.ctype,
	    "application/x-git-upload-pack-advertisement");
	assert_memory_equal(resp.body, "001e# service=git-upload-pack\n0000", 34);
	assert_non_null(memmem(resp.body, resp.len, "refs/heads/main\n0000", 20));
	free(resp.body);
	cJSON *b = expect_bait("git-bait-1", "git-basic");
	assert_string_equal(jstr(b, "user"), "deploy-bot");
	assert_string_equal(jstr(b, "repo"), "platform/deploy");
	cJSON_Delete(b);
	/* Bearer, and the token in the query */
	drain();
	runs(decoys_git_handle, &git, "GET /platform/deploy/info/refs?service="
	    "git-upload-pack HTTP/1.1\r\nAuthorization: Bearer " TOKEN "\r\n\r\n",
	    &resp);
	assert_int_equal(resp.status, 200);
	free(resp.body);
	cJSON_Delete(expect_bait("git-bait-1", "git-bearer"));
	runs(decoys_git_handle, &git, "GET /other/repo.git/info/refs?"
	    "access_token=" TOKEN " HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 404);
	free(resp.body);
	cJSON_Delete(expect_bait("git-bait-1", "git-other"));
}

static void test_git_ls_remote(void **state)
{
	(void)state;
	if (!have("git"))
		skip();
	struct harness h;
	h_start(&h, decoys_git_handle, &git);
	char out[4096], *cmd;
	drain();
	/* the wrong token: git gives up, no bait */
	cmd = xasprintf("HOME=%s GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false "
	    "git -c credential.helper= ls-remote http://deploy-bot:wrong@"
	    "127.0.0.1:%d/platform/deploy.git 2>&1", tmpdir, h.port);
	assert_int_not_equal(sh(cmd, out, sizeof(out)), 0);
	free(cmd);
	assert_int_equal(baits_pending(), 0);
	/* the planted one: refs listed, bait fired */
	cmd = xasprintf("HOME=%s GIT_TERMINAL_PROMPT=0 git -c credential.helper= "
	    "ls-remote http://deploy-bot:%s@127.0.0.1:%d/platform/deploy.git "
	    "2>&1", tmpdir, TOKEN, h.port);
	int rc = sh(cmd, out, sizeof(out));
	free(cmd);
	if (rc != 0)
		fprintf(stderr, "git ls-remote: %s\n", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\trefs/heads/main"));
	assert_non_null(strstr(out, "\tHEAD"));
	cJSON_Delete(expect_bait("git-bait-1", "git-basic"));
	h_stop(&h);
}

/* ---- aws CLI against the fake STS ---------------------------------- */

static void test_aws_cli(void **state)
{
	(void)state;
	if (!have("aws"))
		skip();
	struct harness h;
	h_start(&h, decoys_cloud_handle, &cloud);
	char out[8192], *cmd;
	drain();
	cmd = xasprintf("HOME=%s AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_"
	    "FILE=/dev/null AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY='%s' "
	    "AWS_DEFAULT_REGION=eu-north-1 AWS_EC2_METADATA_DISABLED=true "
	    "timeout 60 aws sts get-caller-identity --endpoint-url "
	    "http://127.0.0.1:%d --output json 2>&1", tmpdir, KEY_ID, SECRET,
	    h.port);
	int rc = sh(cmd, out, sizeof(out));
	free(cmd);
	if (rc != 0)
		fprintf(stderr, "aws: %s\n", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"Arn\": \"arn:aws:iam::"));
	cJSON *b = expect_bait("cloud-bait-1", "sts-sigv4");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "signed")));
	cJSON_Delete(b);
	/* the right key id with the wrong secret: bait, not signed, refused */
	drain();
	cmd = xasprintf("HOME=%s AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_"
	    "FILE=/dev/null AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=wrong "
	    "AWS_DEFAULT_REGION=eu-north-1 AWS_EC2_METADATA_DISABLED=true "
	    "AWS_MAX_ATTEMPTS=1 timeout 60 aws sts get-caller-identity "
	    "--endpoint-url http://127.0.0.1:%d 2>&1", tmpdir, KEY_ID, h.port);
	rc = sh(cmd, out, sizeof(out));
	free(cmd);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(out, "SignatureDoesNotMatch"));
	b = expect_bait("cloud-bait-1", "sts-sigv4");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(b, "signed")));
	cJSON_Delete(b);
	h_stop(&h);
}

/* ---- MCP --------------------------------------------------------------- */

/* POST body to the MCP handler. */
static void mcp_post(const char *body, struct http_response *resp)
{
	char *req = xasprintf("POST /mcp HTTP/1.1\r\nContent-Type: application/"
	    "json\r\nAccept: application/json, text/event-stream\r\n"
	    "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
	runs(decoys_mcp_handle, &mcp, req, resp);
	free(req);
}

static void test_mcp_session(void **state)
{
	(void)state;
	struct http_response resp;
	drain();
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},\"clientInfo\":"
	    "{\"name\":\"t\",\"version\":\"1\"}}}", &resp);
	assert_int_equal(resp.status, 200);
	assert_non_null(strstr(resp.headers, "Mcp-Session-Id: "));
	cJSON *j = cJSON_Parse(resp.body);
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(j, "result");
	assert_string_equal(jstr(res, "protocolVersion"), "2025-03-26");
	assert_string_equal(jstr(cJSON_GetObjectItemCaseSensitive(res,
	    "serverInfo"), "name"), "ops-tools");
	assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "id")));
	cJSON_Delete(j);
	free(resp.body);
	mcp_post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	    &resp);
	assert_int_equal(resp.status, 202);
	assert_int_equal(resp.len, 0);
	free(resp.body);
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}",
	    &resp);
	j = cJSON_Parse(resp.body);
	const cJSON *tools = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(j, "result"), "tools");
	assert_int_equal(cJSON_GetArraySize(tools), 2);
	const cJSON *t0 = cJSON_GetArrayItem(tools, 0);
	assert_string_equal(jstr(t0, "name"), "rotate_credentials");
	assert_string_equal(jstr(t0, "description"),
	    "Rotate the production credentials now.");
	assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t0,
	    "inputSchema")));
	assert_string_equal(jstr(cJSON_GetArrayItem(tools, 1), "name"), "ping");
	cJSON_Delete(j);
	free(resp.body);
	/* the harmless tool, an unknown tool, ping: no bait */
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"ping\",\"arguments\":{}}}", &resp);
	assert_non_null(strstr(resp.body, "\"text\":\"pong "));
	free(resp.body);
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"rotate_credential\"}}", &resp);
	assert_non_null(strstr(resp.body, "-32602"));
	free(resp.body);
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"nope\"}", &resp);
	assert_non_null(strstr(resp.body, "-32601"));
	free(resp.body);
	assert_int_equal(baits_pending(), 0);
	/* the decoy tool: bait first */
	static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rotate_credentials\","
	    "\"arguments\":{\"target\":\"prod\"}}}";
	char *req = xasprintf("POST /mcp HTTP/1.1\r\nMcp-Session-Id: abc123\r\n"
	    "Content-Length: %zu\r\n\r\n%s", strlen(call), call);
	runs(decoys_mcp_handle, &mcp, req, &resp);
	free(req);
	assert_int_equal(resp.status, 200);
	assert_non_null(strstr(resp.body, "\"isError\":false"));
	free(resp.body);
	cJSON *b = expect_bait("mcp-bait-1", "mcp tools/call");
	assert_string_equal(jstr(b, "tool"), "rotate_credentials");
	assert_string_equal(jstr(b, "session"), "abc123");
	assert_string_equal(jstr(b, "arguments"), "{\"target\":\"prod\"}");
	cJSON_Delete(b);
}

static void test_mcp_errors(void **state)
{
	(void)state;
	struct http_response resp;
	drain();
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", &resp);
	assert_int_equal(resp.status, 400);
	assert_non_null(strstr(resp.body, "-32700"));
	free(resp.body);
	mcp_post("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}]", &resp);
	assert_non_null(strstr(resp.body, "-32600"));
	free(resp.body);
	mcp_post("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"tools/list\"}", &resp);
	assert_non_null(strstr(resp.body, "-32600"));
	free(resp.body);
	mcp_post("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"rotate_credentials\"}}", &resp);
	assert_non_null(strstr(resp.body, "-32600"));
	free(resp.body);
	/* an invalid request that still calls the decoy tool is the bait
	 * (fail closed: the agent tried to call it) */
	assert_int_equal(baits_pending(), 1);
	runs(decoys_mcp_handle, &mcp, "GET /mcp HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 405);
	assert_non_null(strstr(resp.headers, "Allow: POST"));
	free(resp.body);
	runs(decoys_mcp_handle, &mcp, "POST /other HTTP/1.1\r\nContent-Length: 2"
	    "\r\n\r\n{}", &resp);
	assert_int_equal(resp.status, 404);
	free(resp.body);
	assert_int_equal(baits_pending(), 0);
}

/* ---- review fixes: MCP attempts, repeated Authorization, redaction ---- */

/* Every pending event, raw, concatenated (caller frees); *nbait counts
 * the "bait" ones. */
static char *events_pending(int *nbait)
{
	usleep(20000);
	struct errbuf e = { 0 };
	struct bus_event ev;
	int rc;
	size_t len = 0;
	char *all = xstrdup("");
	*nbait = 0;
	while ((rc = bus_recv(bus_fd, &ev, &e)) != 0) {
		if (rc != 1)
			continue;
		const char *k = bus_event_str(&ev, "kind");
		*nbait += k && strcmp(k, "bait") == 0;
		all = xrealloc(all, len + ev.raw_len + 2);
		memcpy(all + len, ev.raw, ev.raw_len);
		len += ev.raw_len;
		all[len++] = '\n';
		all[len] = '\0';
		bus_event_free(&ev);
	}
	return all;
}

/* POST body to the MCP handler; the status; the answer's error code (0
 * when none) into *code. */
static int mcp_try(const char *body, int *code)
{
	struct http_response resp;
	mcp_post(body, &resp);
	*code = 0;
	if (resp.len > 0) {
		cJSON *j = cJSON_Parse(resp.body);
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(j, "error"), "code");
		if (cJSON_IsNumber(c))
			*code = c->valueint;
		cJSON_Delete(j);
	}
	free(resp.body);
	return resp.status;
}

/* A tools/call of the decoy tool fires the bait in every shape an agent
 * may send it: a notification (no id), a duplicate name or method in any
 * copy, a batch element.  Duplicate keys and batches are refused. */
static void test_mcp_attempts(void **state)
{
	(void)state;
	int code, n;
	char *ev;
	drain();
	/* a notification is still carried out: 202, bait first */
	assert_int_equal(mcp_try("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"rotate_credentials\"}}", &code), 202);
	ev = events_pending(&n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(ev, "\"notification\":true"));
	free(ev);
	/* a harmless notification: 202, no bait */
	assert_int_equal(mcp_try("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"ping\"}}", &code), 202);
	assert_int_equal(baits_pending(), 0);
	/* duplicate name: refused, the bait fires whichever copy names it */
	static const char *const dup_bait[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"ping\",\"name\":\"rotate_credentials\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"rotate_credentials\",\"name\":\"ping\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":"
		"\"tools/call\",\"params\":{\"name\":\"rotate_credentials\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"ping\"},\"params\":{\"name\":\"rotate_credentials\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"ping\",\"name\":\"rotate_credentials\"}}",
	};
	for (size_t i = 0; i < sizeof(dup_bait) / sizeof(dup_bait[0]); i++) {
		assert_int_equal(mcp_try(dup_bait[i], &code), 400);
		assert_int_equal(code, -32600);
		ev = events_pending(&n);
		if (n != 1)
			fail_msg("dup case %zu: %d bait events: %s", i, n, ev);
		assert_non_null(strstr(ev, "\"duplicate_keys\":true"));
		free(ev);
	}
	/* duplicate keys without the decoy tool: refused, no bait */
	static const char *const dup_plain[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"tools/list\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"ping\",\"arguments\":{},\"arguments\":{}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"ping\",\"name\":\"ping\"}}",
	};
	for (size_t i = 0; i < sizeof(dup_plain) / sizeof(dup_plain[0]); i++) {
		assert_int_equal(mcp_try(dup_plain[i], &code), 400);
		assert_int_equal(code, -32600);
	}
	assert_int_equal(baits_pending(), 0);
	/* a batch: refused; bait when an element calls the decoy tool */
	assert_int_equal(mcp_try("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}]", &code), 400);
	assert_int_equal(code, -32600);
	assert_int_equal(baits_pending(), 0);
	assert_int_equal(mcp_try("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"ping\"}},{\"jsonrpc\":\"2.0\","
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"rotate_credentials\","
	    "\"arguments\":{\"target\":\"all\"}}}]", &code), 400);
	assert_int_equal(code, -32600);
	ev = events_pending(&n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(ev, "\"batch\":true"));
	free(ev);
	/* the plain call still fires exactly once */
	assert_int_equal(mcp_try("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rotate_credentials\"}}", &code),
	    200);
	assert_int_equal(code, 0);
	assert_int_equal(baits_pending(), 1);
}

/* Every Authorization header counts: garbage first, Basic user:TOKEN
 * second still fires the bait. */
static void test_git_second_auth(void **state)
{
	(void)state;
	struct http_response resp;
	char *cred = xasprintf("deploy-bot:%s", TOKEN);
	char b64[256];
	sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)cred,
	    strlen(cred), sodium_base64_VARIANT_ORIGINAL);
	free(cred);
	static const char *const firsts[] = { "Basic !!!!", "Bearer nope",
		"Basic ZGVwbG95LWJvdDpnaHBfd3Jvbmc=", "Digest x" };
	for (size_t i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
		drain();
		char *req = xasprintf("GET /platform/deploy.git/info/refs?service="
		    "git-upload-pack HTTP/1.1\r\nAuthorization: %s\r\n"
		    "Authorization: Basic %s\r\n\r\n", firsts[i], b64);
		runs(decoys_git_handle, &git, req, &resp);
		free(req);
		free(resp.body);
		cJSON *b = expect_bait("git-bait-1", "git-basic");
		assert_string_equal(jstr(b, "user"), "deploy-bot");
		cJSON_Delete(b);
	}
	/* and a Bearer second */
	drain();
	runs(decoys_git_handle, &git, "GET /platform/deploy.git/info/refs "
	    "HTTP/1.1\r\nAuthorization: Basic Og==\r\nAuthorization: Bearer "
	    TOKEN "\r\n\r\n", &resp);
	free(resp.body);
	cJSON_Delete(expect_bait("git-bait-1", "git-bearer"));
}

/* No planted secret (git token, cloud secret) in any event: the token as
 * the Basic user, in the path (also where truncation would cut it), in
 * the query, in a header, in MCP arguments, method and session. */
/* Append the pending events to ev (counting baits into nb). */
#define COLLECT() do { \
	char *more_ = events_pending(&n); \
	nb += n; \
	ev = xrealloc(ev, strlen(ev) + strlen(more_) + 1); \
	strcat(ev, more_); \
	free(more_); \
} while (0)

static void test_no_secret_in_events(void **state)
{
	(void)state;
	struct http_response resp;
	char b64[512];
	int n, nb = 0, code;
	char *ev = xstrdup("");
	drain();
	/* the token as the Basic user (no password), and user:token; with
	 * control bytes inside that sanitizing drops (joining its pieces) */
	const char *creds[] = { TOKEN, TOKEN ":", TOKEN ":" TOKEN,
		"xx" TOKEN "yy:" TOKEN, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"ghp_T3stDecoy\001TokenAbCdEfGh\0020123456789xy:" TOKEN };
	for (size_t i = 0; i < sizeof(creds) / sizeof(creds[0]); i++) {
		sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)creds[i],
		    strlen(creds[i]), sodium_base64_VARIANT_ORIGINAL);
		char *req = xasprintf("GET /platform/deploy.git/info/refs?service="
		    "git-upload-pack HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n",
		    b64);
		runs(decoys_git_handle, &git, req, &resp);
		free(req);
		free(resp.body);
	COLLECT();
	}
	/* a user that sanitizing joins into the token: redacted, and the
	 * event keeps its "user" member */
	{
		const char *u = "ghp_T3stDecoy\001TokenAbCdEfGh0123456789xy:"
		    TOKEN;
		sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)u,
		    strlen(u), sodium_base64_VARIANT_ORIGINAL);
		char *req = xasprintf("GET /platform/deploy.git/info/refs "
		    "HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", b64);
		runs(decoys_git_handle, &git, req, &resp);
		free(req);
		free(resp.body);
		cJSON *b = expect_bait("git-bait-1", "git-basic");
		assert_string_equal(jstr(b, "user"), "<token>");
		cJSON_Delete(b);
		drain();
	}
	/* in the path, the query, a header, the service */
	runs(decoys_git_handle, &git, "GET /platform/deploy.git/" TOKEN
	    "/info/refs?service=" TOKEN "&t=" TOKEN " HTTP/1.1\r\nX-Token: "
	    TOKEN "\r\n\r\n", &resp);
	free(resp.body);
	COLLECT();
	/* a path long enough that truncating it would cut the token */
	char pad[1100];
	for (size_t cut = 1000; cut < 1030; cut += 3) {
		memset(pad, 'a', cut);
		pad[cut] = '\0';
		char *req = xasprintf("GET /%s%s HTTP/1.1\r\n\r\n", pad, TOKEN);
		runs(decoys_git_handle, &git, req, &resp);
		free(resp.body);
	COLLECT();
		free(req);
		req = xasprintf("GET /%s%s?Action=GetCallerIdentity&AWSAccessKeyId="
		    KEY_ID " HTTP/1.1\r\n\r\n", pad, SECRET);
		runs(decoys_cloud_handle, &cloud, req, &resp);
		free(resp.body);
	COLLECT();
		free(req);
	}
	/* the cloud secret in the path, query, a header and the body */
	runs(decoys_cloud_handle, &cloud, "POST /" SECRET "?Action=Get" SECRET
	    "&AWSAccessKeyId=" KEY_ID "&s=" SECRET " HTTP/1.1\r\nX-Secret: "
	    SECRET "\r\nContent-Length: 40\r\n\r\n" SECRET, &resp);
	free(resp.body);
	COLLECT();
	/* MCP: arguments, method, session header */
	char *body = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rotate_credentials\","
	    "\"arguments\":{\"token\":\"%s\",\"secret\":\"%s\",\"long\":\"%s%s\"}}}",
	    TOKEN, SECRET, pad, TOKEN);
	char *req = xasprintf("POST /mcp HTTP/1.1\r\nMcp-Session-Id: s" TOKEN
	    "\r\nContent-Length: %zu\r\n\r\n%s", strlen(body), body);
	runs(decoys_mcp_handle, &mcp, req, &resp);
	free(resp.body);
	COLLECT();
	free(req);
	free(body);
	mcp_try("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x" TOKEN "\"}", &code);
	COLLECT();
	mcp_try("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"" TOKEN "\"}}", &code);
	COLLECT();
	print_message("%d bait events, %zu bytes\n", nb, strlen(ev));
	assert_true(nb >= 25);
	assert_true(strlen(ev) > 1000);
	/* neither secret, nor a long piece of one cut by a truncation */
	if (strstr(ev, TOKEN) || strstr(ev, SECRET))
		fail_msg("a secret in the events:\n%s", ev);
	char piece[13];
	for (size_t off = 0; off + 12 <= strlen(TOKEN); off += 4) {
		memcpy(piece, TOKEN + off, 12);
		piece[12] = '\0';
		if (strstr(ev, piece))
			fail_msg("a piece of the token (%s) in the events:\n%s",
			    piece, ev);
	}
	for (size_t off = 0; off + 12 <= strlen(SECRET); off += 4) {
		memcpy(piece, SECRET + off, 12);
		piece[12] = '\0';
		if (strstr(ev, piece))
			fail_msg("a piece of the secret (%s) in the events:\n%s",
			    piece, ev);
	}
	assert_non_null(strstr(ev, "\"user\":\"<token>\""));
	assert_non_null(strstr(ev, "<secret>"));
	/* replaced values keep their member names */
	assert_non_null(strstr(ev, "\"path\":\"/<secret>\""));
	assert_non_null(strstr(ev, "\"arguments\":\"{\\\"token\\\":\\\"<token>\\\""));
	/* the key id is recorded, as documented */
	assert_non_null(strstr(ev, "\"key_id\":\"" KEY_ID "\""));
	free(ev);
}

/* ---- garbage ----------------------------------------------------------- */

/* Random and mutated requests into every handler: no crash, an answer
 * with a status each time, no bait from bytes that lack the secrets. */
static void test_garbage(void **state)
{
	(void)state;
	static const char *const seeds[] = {
		"POST / HTTP/1.1\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIAX/"
		"a/b/c/d, SignedHeaders=host;x-amz-date;;;, Signature=zz\r\n"
		"X-Amz-Date: 1\r\nContent-Length: 30\r\n\r\nAction=GetCallerIdentity&a",
		"GET /?X-Amz-Credential=AKIAX%2F%2F%2F&X-Amz-SignedHeaders=&X-Amz-"
		"Signature=%zz&X-Amz-Date=&&&=&a==b HTTP/1.1\r\n\r\n",
		"GET /platform/deploy.git/info/refs?service=git-upload-pack "
		"HTTP/1.1\r\nAuthorization: Basic !!!!====\r\n\r\n",
		"GET /platform/deploy.git/info/refs HTTP/1.1\r\nAuthorization: Basic "
		"Og==\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\","
		"\"id\":1,\"method\":\"tools/call\"}",
		"PUT /latest/api/token HTTP/1.1\r\n\r\n",
	};
	http_handler_fn hs[3] = { decoys_cloud_handle, decoys_git_handle,
		decoys_mcp_handle };
	void *ctxs[3] = { &cloud, &git, &mcp };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int parsed = 0;
	drain();
	for (int it = 0; it < 6000; it++) {
		char buf[2048];
		size_t n;
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		if (it % 3 == 0) {
			n = 16 + x % 600;
			for (size_t i = 0; i < n; i++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				buf[i] = (char)(x & 0xff);
			}
		} else {
			const char *s = seeds[x % (sizeof(seeds) / sizeof(seeds[0]))];
			n = strlen(s);
			memcpy(buf, s, n);
			int muts = 1 + (int)((x >> 8) % 3);
			for (int m = 0; m < muts; m++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				size_t at = 16 + x % (n - 16);   /* past the method */
				buf[at] = (char)((x >> 16) & 0xff);
			}
		}
		struct http_request r;
		if (http_parse(buf, n, &r) != HTTP_PARSE_OK)
			continue;
		parsed++;
		snprintf(r.remote, sizeof(r.remote), "127.0.0.1:1");
		for (int k = 0; k < 3; k++) {
			struct http_response resp = { 0 };
			hs[k](ctxs[k], &r, &resp);
			assert_true(resp.status >= 200 && resp.status < 600);
			assert_true(resp.len == 0 || resp.body != NULL);
			free(resp.body);
		}
		http_request_free(&r);
		if (it % 200 == 0)
			assert_int_equal(baits_pending(), 0);
	}
	print_message("%d of 6000 parsed\n", parsed);
	assert_true(parsed > 500);
	assert_int_equal(baits_pending(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigv4_vectors),
		cmocka_unit_test(test_cloud_uses),
		cmocka_unit_test(test_cloud_imds),
		cmocka_unit_test(test_aws_cli),
		cmocka_unit_test(test_git_uses),
		cmocka_unit_test(test_git_ls_remote),
		cmocka_unit_test(test_mcp_session),
		cmocka_unit_test(test_mcp_errors),
		cmocka_unit_test(test_mcp_attempts),
		cmocka_unit_test(test_git_second_auth),
		cmocka_unit_test(test_no_secret_in_events),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
