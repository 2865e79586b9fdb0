/*
 * fuzz_decoys.c - the request handlers of `ares-lab decoys`
 * (leakbox/decoys.c): decoys_cloud_handle, decoys_git_handle,
 * decoys_mcp_handle and decoys_sigv4_check, on requests an agent in the
 * lab may send.
 *
 * The first input byte picks how the rest becomes a request:
 *   even  the bytes are an HTTP/1.x request, parsed by http_parse as the
 *         decoys' listeners do (inputs it refuses are skipped);
 *   odd   the bytes are split at '\n' into method, target, header lines
 *         ("Name: value"), an empty line and the body, and the request is
 *         built from them without http_parse, so any byte (NUL, controls,
 *         invalid UTF-8, over-long fields) reaches the handlers.
 * Each request goes to all three handlers.  Properties checked besides
 * the sanitizers: every answer has a status 200..599 and a body when it
 * has a length; no event the handlers send (read off a bus socket as the
 * drill does) holds the planted git token or cloud secret.
 */
#include "fuzz.h"
#include "../leakbox/leakbox.h"

#define FZ_KEY_ID "AKIAFUZZDECOY0000001"
#define FZ_SECRET "fUzZsEcReT/k7+DeCoY0123456789abcdefABCD"
#define FZ_TOKEN  "ghp_FuzzDecoyToken0123456789abcdefABCDEF"

static struct decoys_cloud fz_cloud = { FZ_KEY_ID, FZ_SECRET, "cloud-bait",
	"ops-admin" };
static struct decoys_git fz_git = { "deploy-bot", FZ_TOKEN,
	"platform/deploy", "git-bait" };
static struct decoys_mcp fz_mcp = { "/mcp", "rotate_credentials",
	"Rotate the production credentials.", "mcp-bait", "ops-tools" };
static int fz_bus = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct errbuf e = { 0 };
	char bus[600];

	(void)argc;
	(void)argv;
	fz_setup(false);
	snprintf(bus, sizeof bus, "%s/bus.sock", fz_dir);
	fz_bus = bus_open(bus, &e);
	if (fz_bus < 0)
		fz_die("bus_open", &e);
	setenv("BUS", bus, 1);
	unsetenv("EVIDENCE");
	sensor_init("decoys");
	return 0;
}

/* Read every pending event; abort when one holds a planted secret. */
static void
fz_check_events(void)
{
	struct errbuf e = { 0 };
	struct bus_event ev;
	int rc;

	while ((rc = bus_recv(fz_bus, &ev, &e)) != 0) {
		if (rc != 1)
			continue;
		if (memmem(ev.raw, ev.raw_len, FZ_TOKEN, strlen(FZ_TOKEN)) ||
		    memmem(ev.raw, ev.raw_len, FZ_SECRET, strlen(FZ_SECRET))) {
			fprintf(stderr, "a planted secret in an event: %s\n",
			    ev.raw);
			abort();
		}
		bus_event_free(&ev);
	}
}

/* Run every handler on r. */
static void
fz_handlers(const struct http_request *r)
{
	http_handler_fn hs[3] = { decoys_cloud_handle, decoys_git_handle,
		decoys_mcp_handle };
	void *ctxs[3] = { &fz_cloud, &fz_git, &fz_mcp };

	for (int k = 0; k < 3; k++) {
		struct http_response resp;
		memset(&resp, 0, sizeof resp);
		hs[k](ctxs[k], r, &resp);
		if (resp.status < 200 || resp.status > 599 ||
		    (resp.len > 0 && resp.body == NULL))
			abort();
		free(resp.body);
		/* the bus holds few datagrams: read them after each */
		fz_check_events();
	}
	(void)decoys_sigv4_check(r, FZ_KEY_ID, FZ_SECRET);
}

/* The next '\n'-terminated field of buf[*off..len) (the '\n' made a NUL);
 * NULL at the end. */
static char *
fz_field(char *buf, size_t len, size_t *off)
{
	if (*off >= len)
		return NULL;
	char *s = buf + *off;
	char *nl = memchr(s, '\n', len - *off);
	if (nl == NULL) {
		*off = len;
		return s;   /* buf has a NUL at len */
	}
	*nl = '\0';
	*off = (size_t)(nl - buf) + 1;
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *in = (const char *)data + 1;
	size_t n = size - 1;

	if ((data[0] & 1) == 0) {
		struct http_request r;
		if (http_parse(in, n, &r) != HTTP_PARSE_OK)
			return 0;
		snprintf(r.remote, sizeof r.remote, "10.0.0.9:4242");
		fz_handlers(&r);
		http_request_free(&r);
		return 0;
	}

	/* built by hand: method \n target \n headers... \n \n body */
	char *buf = malloc(n + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, in, n);
	buf[n] = '\0';
	struct http_request r;
	memset(&r, 0, sizeof r);
	size_t off = 0;
	char *m = fz_field(buf, n, &off);
	char *t = fz_field(buf, n, &off);
	snprintf(r.method, sizeof r.method, "%s", m ? m : "GET");
	r.target = t ? t : (char *)"/";
	char *q = strchr(r.target, '?');
	r.path = strndup(r.target, q ? (size_t)(q - r.target) :
	    strlen(r.target));
	r.query = strdup(q ? q + 1 : "");
	char *h;
	while (r.nheaders < HTTP_MAX_HEADERS &&
	    (h = fz_field(buf, n, &off)) != NULL && *h != '\0') {
		char *colon = strchr(h, ':');
		r.headers[r.nheaders].name = h;
		r.headers[r.nheaders].value = (char *)"";
		if (colon) {
			*colon = '\0';
			char *v = colon + 1;
			while (*v == ' ')
				v++;
			r.headers[r.nheaders].value = v;
		}
		r.nheaders++;
	}
	/* the body: the rest, NUL-terminated (may hold NULs) */
	size_t bl = off < n ? n - off : 0;
	r.body = malloc(bl + 1);
	if (r.path && r.query && r.body) {
		memcpy(r.body, buf + (off < n ? off : n), bl);
		r.body[bl] = '\0';
		r.body_len = bl;
		snprintf(r.remote, sizeof r.remote, "10.0.0.9:4242");
		fz_handlers(&r);
	}
	free(r.path);
	free(r.query);
	free(r.body);
	free(buf);
	return 0;
}
