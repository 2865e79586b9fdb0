/*
 * toolcli.c - the lab's tools on the command line, for a scripted agent
 * (docs/agents.md, docs/lab.md):
 *
 *   ares-lab tool NAME ARGS_JSON      one tool call, as the model would make it
 *   ares-lab http [--unix SOCK] [-X METHOD] [-H 'Name: value']... [-d BODY] URL
 *   ares-lab read_file PATH
 *   ares-lab shell COMMAND
 *   ares-lab note TEXT...             a step, posted to the gateway
 *   ares-lab done [TEXT...]           the last step
 *
 * Every tool runs through agent_tool() in agent.c: the very code behind
 * Poyo's tool calls, so a script and Poyo reach the lab identically (same
 * timeouts, bounds, sanitising).  The tool's text goes to stdout; exit 0
 * when the tool ran (also for an HTTP error status or a failing command),
 * 1 when it could not (message on stderr), 2 for bad usage.  Parsing
 * (toolcli_parse) is pure and bounded; only toolcli_main touches the lab.
 */
#include "leakbox.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* "Name: value" header names: an HTTP token (RFC 9110). */
static bool
header_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > TOOLCLI_HEADER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789!#$%&'*+.^_`|~-", s[i]) || s[i] == '\0')
			return false;
	return true;
}

/* No C0 control (but tab) and no DEL: what a header value may hold. */
static bool
header_value_ok(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

/* http:// or https:// plus a host, visible ASCII only, bounded. */
static bool
url_ok(const char *u)
{
	size_t n = strlen(u), skip;
	if (n > TOOLCLI_URL_MAX)
		return false;
	if (strncmp(u, "http://", 7) == 0)
		skip = 7;
	else if (strncmp(u, "https://", 8) == 0)
		skip = 8;
	else
		return false;
	if (n == skip || u[skip] == '/')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u[i] <= 0x20 || (unsigned char)u[i] >= 0x7f)
			return false;
	return true;
}

/* The value of option argv[*i] (attached "-XGET" / "--opt=V" or the next
 * argument); advances *i.  NULL + e when missing. */
static const char *
opt_value(int argc, char *const argv[], int *i,
    const char *name, struct errbuf *e)
{
	const char *a = argv[*i];
	size_t nl = strlen(name);
	if (name[1] != '-' && a[2] != '\0')
		return a + 2;                       /* -XPOST */
	if (name[1] == '-' && a[nl] == '=')
		return a + nl + 1;                  /* --request=POST */
	if (*i + 1 >= argc) {
		errbuf_set(e, ERRBUF_INPUT, "http: option %s needs a value", name);
		return NULL;
	}
	return argv[++*i];
}

/* Does argument a name option short ("-X") or long ("--request"), with
 * its value attached or not? */
static bool
is_opt(const char *a, const char *shrt, const char *lng,
    const char **name)
{
	size_t ll = strlen(lng);
	if (shrt && strncmp(a, shrt, 2) == 0) {
		*name = shrt;
		return true;
	}
	if (strncmp(a, lng, ll) == 0 && (a[ll] == '\0' || a[ll] == '=')) {
		*name = lng;
		return true;
	}
	return false;
}

/* `http` options -> the http tool's JSON arguments. */
static int
parse_http(int argc, char *const argv[], cJSON *args,
    struct errbuf *e)
{
	const char *method = NULL, *body = NULL, *sock = NULL, *url = NULL;
	cJSON *headers = cJSON_CreateObject();
	int nh = 0, i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *v;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (is_opt(a, "-X", "--request", &name)) {
			if (!(v = opt_value(argc, argv, &i, name, e)))
				goto fail;
			size_t n = strlen(v);
			if (n == 0 || n > 15 || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != n) {
				errbuf_set(e, ERRBUF_INPUT, "http: %s: the method must "
				    "be 1..15 capital letters", name);
				goto fail;
			}
			method = v;
		} else if (is_opt(a, "-H", "--header", &name)) {
			if (!(v = opt_value(argc, argv, &i, name, e)))
				goto fail;
			const char *colon = strchr(v, ':');
			if (!colon || !header_name_ok(v, (size_t)(colon - v))) {
				errbuf_set(e, ERRBUF_INPUT, "http: %s: expected "
				    "'Name: value' (name: 1..%d token characters)",
				    name, TOOLCLI_HEADER_NAME_MAX);
				goto fail;
			}
			const char *val = colon + 1;
			while (*val == ' ' || *val == '\t')
				val++;
			if (!header_value_ok(val) || strlen(val) > TOOLCLI_HEADER_VALUE_MAX) {
				errbuf_set(e, ERRBUF_INPUT, "http: %s: the value of "
				    "'%.*s' must be at most %d bytes without control "
				    "characters", name, (int)(colon - v), v,
				    TOOLCLI_HEADER_VALUE_MAX);
				goto fail;
			}
			if (++nh > TOOLCLI_HEADERS_MAX) {
				errbuf_set(e, ERRBUF_INPUT, "http: at most %d headers",
				    TOOLCLI_HEADERS_MAX);
				goto fail;
			}
			char hname[TOOLCLI_HEADER_NAME_MAX + 1];
			snprintf(hname, sizeof(hname), "%.*s", (int)(colon - v), v);
			const cJSON *o;
			cJSON_ArrayForEach(o, headers) {
				if (strcasecmp(o->string, hname) == 0) {
					errbuf_set(e, ERRBUF_INPUT, "http: %s: header "
					    "'%s' given twice", name, hname);
					goto fail;
				}
			}
			cJSON_AddStringToObject(headers, hname, val);
		} else if (is_opt(a, "-d", "--data", &name)) {
			if (!(v = opt_value(argc, argv, &i, name, e)))
				goto fail;
			if (strlen(v) > TOOLCLI_ARG_MAX) {
				errbuf_set(e, ERRBUF_INPUT, "http: %s: the body is "
				    "larger than %d bytes", name, TOOLCLI_ARG_MAX);
				goto fail;
			}
			body = v;
		} else if (is_opt(a, NULL, "--unix-socket", &name) ||
		    is_opt(a, NULL, "--unix", &name)) {
			if (!(v = opt_value(argc, argv, &i, name, e)))
				goto fail;
			if (!*v || strlen(v) >= 108) {
				errbuf_set(e, ERRBUF_INPUT, "http: %s: a socket path "
				    "of 1..107 bytes", name);
				goto fail;
			}
			sock = v;
		} else {
			errbuf_set(e, ERRBUF_INPUT, "http: unknown option '%.64s'", a);
			goto fail;
		}
	}
	if (i >= argc) {
		errbuf_set(e, ERRBUF_INPUT, "http: no URL");
		goto fail;
	}
	url = argv[i++];
	if (i < argc) {
		errbuf_set(e, ERRBUF_INPUT, "http: unexpected argument '%.64s' "
		    "after the URL", argv[i]);
		goto fail;
	}
	if (!url_ok(url)) {
		errbuf_set(e, ERRBUF_INPUT, "http: '%.64s' is not an http:// or "
		    "https:// URL of at most %d visible ASCII bytes", url,
		    TOOLCLI_URL_MAX);
		goto fail;
	}
	cJSON_AddStringToObject(args, "method", method ? method : body ? "POST" : "GET");
	cJSON_AddStringToObject(args, "url", url);
	if (nh > 0)
		cJSON_AddItemToObject(args, "headers", headers);
	else
		cJSON_Delete(headers);
	if (body)
		cJSON_AddStringToObject(args, "body", body);
	if (sock)
		cJSON_AddStringToObject(args, "unix_socket", sock);
	return 0;
fail:
	cJSON_Delete(headers);
	return -1;
}

/* The words of argv[from..] joined by spaces (at most 2 * TOOLCLI_NOTE_MAX
 * bytes of them), made terminal-safe (no newline) and cut to
 * TOOLCLI_NOTE_MAX bytes on a UTF-8 boundary.  Caller frees. */
static char *
join_note(int argc, char *const argv[], int from)
{
	char raw[2 * TOOLCLI_NOTE_MAX];
	size_t used = 0;
	for (int i = from; i < argc && used < sizeof(raw); i++) {
		if (i > from)
			raw[used++] = ' ';
		size_t n = strlen(argv[i]);
		if (n > sizeof(raw) - used)
			n = sizeof(raw) - used;
		memcpy(raw + used, argv[i], n);
		used += n;
	}
	char *out = xmalloc(TOOLCLI_NOTE_MAX + 1);
	util_sanitize(out, TOOLCLI_NOTE_MAX + 1, raw, used, false);
	return out;
}

int
toolcli_parse(int argc, char *const argv[], struct toolcli_call *c,
    struct errbuf *e)
{
	memset(c, 0, sizeof(*c));
	if (argc < 1 || !argv[0])
		return errbuf_set(e, ERRBUF_INPUT, "no subcommand");
	const char *sub = argv[0];
	cJSON *args = NULL;
	if (strcmp(sub, "note") == 0 || strcmp(sub, "done") == 0) {
		c->final = sub[0] == 'd';
		c->note = argc > 1 ? join_note(argc, argv, 1) : xstrdup("");
		if (!*c->note && !c->final) {
			toolcli_call_free(c);
			return errbuf_set(e, ERRBUF_INPUT, "note: no text");
		}
		if (!*c->note) {
			free(c->note);
			c->note = xstrdup("done");
		}
		return 0;
	}
	if (strcmp(sub, "tool") == 0) {
		if (argc != 3)
			return errbuf_set(e, ERRBUF_INPUT, "tool: usage: ares-lab "
			    "tool NAME ARGS_JSON");
		if (strcmp(argv[1], "shell") != 0 && strcmp(argv[1], "http") != 0 &&
		    strcmp(argv[1], "read_file") != 0)
			return errbuf_set(e, ERRBUF_INPUT, "tool: unknown tool "
			    "'%.64s' (known: shell, http, read_file)", argv[1]);
		size_t n = strlen(argv[2]);
		if (n > TOOLCLI_ARG_MAX)
			return errbuf_set(e, ERRBUF_INPUT, "tool: ARGS_JSON is "
			    "larger than %d bytes", TOOLCLI_ARG_MAX);
		cJSON *j = cJSON_ParseWithLength(argv[2], n);
		bool obj = cJSON_IsObject(j);
		cJSON_Delete(j);
		if (!obj)
			return errbuf_set(e, ERRBUF_INPUT, "tool: ARGS_JSON is not "
			    "a JSON object");
		snprintf(c->tool, sizeof(c->tool), "%s", argv[1]);
		c->args = xstrdup(argv[2]);   /* passed on verbatim */
		return 0;
	}
	args = cJSON_CreateObject();
	if (strcmp(sub, "http") == 0) {
		if (parse_http(argc, argv, args, e) < 0)
			goto fail;
	} else if (strcmp(sub, "read_file") == 0 || strcmp(sub, "shell") == 0) {
		bool rf = sub[0] == 'r';
		if (argc != 2 || !*argv[1]) {
			errbuf_set(e, ERRBUF_INPUT, "%s: usage: ares-lab %s", sub,
			    rf ? "read_file PATH" : "shell COMMAND");
			goto fail;
		}
		if (strlen(argv[1]) > TOOLCLI_ARG_MAX) {
			errbuf_set(e, ERRBUF_INPUT, "%s: the argument is larger "
			    "than %d bytes", sub, TOOLCLI_ARG_MAX);
			goto fail;
		}
		cJSON_AddStringToObject(args, rf ? "path" : "command", argv[1]);
	} else {
		errbuf_set(e, ERRBUF_INPUT, "unknown subcommand '%.64s'", sub);
		goto fail;
	}
	snprintf(c->tool, sizeof(c->tool), "%s", sub);
	c->args = cJSON_PrintUnformatted(args);
	cJSON_Delete(args);
	if (!c->args)
		util_fatal("toolcli: out of memory");
	return 0;
fail:
	cJSON_Delete(args);
	return -1;
}

void
toolcli_call_free(struct toolcli_call *c)
{
	free(c->args);
	free(c->note);
	c->args = c->note = NULL;
}

char *
toolcli_notes_url(const char *base)
{
	if (!base || !*base)
		base = "http://gateway:8080/v1";
	size_t n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	return xasprintf("%.*s/notes", (int)n, base);
}

char *
toolcli_note_body(const char *text, bool final)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "text", text);
	cJSON_AddBoolToObject(o, "final", final);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!s)
		util_fatal("toolcli: out of memory");
	return s;
}

/* The status of a tool's "HTTP <code>\n..." text (0 if it has none). */
static long
http_status_of(const char *res)
{
	if (strncmp(res, "HTTP ", 5) != 0)
		return 0;
	return strtol(res + 5, NULL, 10);
}

/* note/done: one "@note TEXT" / "@done TEXT" line on stdout (the agent's
 * log), then the same text to the gateway through the http tool with the
 * agent's key.  0 when the gateway took it (2xx), else 1. */
static int
post_note(const struct toolcli_call *c)
{
	printf("@%s %s\n", c->final ? "done" : "note", c->note);
	fflush(stdout);
	const char *key = getenv("OPENAI_API_KEY");
	char *url = toolcli_notes_url(getenv("OPENAI_BASE_URL"));
	char *body = toolcli_note_body(c->note, c->final);
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "method", "POST");
	cJSON_AddStringToObject(args, "url", url);
	cJSON *h = cJSON_AddObjectToObject(args, "headers");
	cJSON_AddStringToObject(h, "Content-Type", "application/json");
	if (key && *key && !strpbrk(key, "\r\n")) {
		char *auth = xasprintf("Bearer %s", key);
		cJSON_AddStringToObject(h, "Authorization", auth);
		free(auth);
	}
	cJSON_AddStringToObject(args, "body", body);
	char *a = cJSON_PrintUnformatted(args);
	cJSON_Delete(args);
	bool ran = false;
	char *res = agent_tool("http", a, &ran);
	long st = ran ? http_status_of(res) : 0;
	int rc = 0;
	if (st < 200 || st > 299) {
		char t[200];
		util_sanitize(t, sizeof(t), res, strlen(res), false);
		fprintf(stderr, "ares-lab %s: the gateway did not take it (%s): "
		    "%s\n", c->final ? "done" : "note", url, t);
		rc = 1;
	}
	free(res);
	free(a);
	free(body);
	free(url);
	return rc;
}

/* The tool CLI's usage text. */
static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: ares-lab tool NAME ARGS_JSON     (NAME: shell, http, read_file)\n"
	    "       ares-lab http [--unix SOCK] [-X METHOD] [-H 'Name: value']...\n"
	    "                     [-d BODY] [--] URL\n"
	    "       ares-lab read_file PATH\n"
	    "       ares-lab shell COMMAND\n"
	    "       ares-lab note TEXT...\n"
	    "       ares-lab done [TEXT...]\n"
	    "The tools of the agent loop (same code); the tool's text on stdout.\n"
	    "Exit 0: the tool ran; 1: it could not; 2: bad usage.  docs/agents.md.\n");
}

int
toolcli_main(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	struct toolcli_call c;
	struct errbuf e = { 0 };
	if (toolcli_parse(argc, argv, &c, &e) < 0) {
		fprintf(stderr, "ares-lab %s (see ares-lab tool --help)\n", e.msg);
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc;
	if (c.note) {
		rc = post_note(&c);
	} else {
		bool ran = false;
		char *res = agent_tool(c.tool, c.args, &ran);
		size_t n = strlen(res);
		if (ran) {
			fwrite(res, 1, n, stdout);
			if (n == 0 || res[n - 1] != '\n')
				fputc('\n', stdout);
			rc = 0;
		} else {
			fprintf(stderr, "ares-lab %s: %s\n", c.tool, res);
			rc = 1;
		}
		free(res);
	}
	fflush(stdout);
	toolcli_call_free(&c);
	curl_global_cleanup();
	return rc;
}
