/*
 * agent.c - Poyo: a tool-using loop speaking OpenAI chat completions to the
 * gateway.  Tools: shell, http, read_file.  Every tool output is untrusted:
 * bounded to AGENT_TOOL_OUT_MAX and made valid UTF-8 before it goes into
 * JSON.  One log line per event on stdout (the container log).
 */
#include "leakbox.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENT_RESP_MAX (4u * 1024 * 1024)

/* Bounded, sanitised copy of raw tool output (valid UTF-8, no controls but
 * \n and \t).  Caller frees. */
static char *
clean(const char *raw, size_t len, bool truncated)
{
	size_t cap = len + 64;
	char *out = xmalloc(cap);
	size_t n = util_sanitize(out, cap - 32, raw, len, true);
	if (truncated)
		snprintf(out + n, cap - n, "\n[output truncated]");
	return out;
}

/* ---- shell --------------------------------------------------------- */

/* Each tool sets *ran = false when it could not run at all (its text then
 * starts with "error: "); a command that failed or an HTTP error status
 * still ran. */
static char *
tool_shell(const char *cmd, bool *ran)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		*ran = false;
		return xasprintf("error: pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		*ran = false;
		return xasprintf("error: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[1]);
	char buf[AGENT_TOOL_OUT_MAX];
	size_t len = 0;
	bool truncated = false, timed_out = false;
	uint64_t deadline = util_mono_ns() + AGENT_TOOL_TIMEOUT_S * 1000000000ull;
	for (;;) {
		uint64_t now = util_mono_ns();
		if (now >= deadline) {
			timed_out = true;
			break;
		}
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int pr = poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;   /* re-check the deadline */
		char tmp[4096];
		ssize_t n = read(p[0], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t take = (size_t)n;
		if (len + take > sizeof(buf)) {
			take = sizeof(buf) - len;
			truncated = true;
		}
		memcpy(buf + len, tmp, take);
		len += take;
	}
	close(p[0]);
	int status = 0;
	pid_t w = 0;
	while (!timed_out && (w = waitpid(pid, &status, WNOHANG)) == 0) {
		if (util_mono_ns() >= deadline) {
			timed_out = true;
			break;
		}
		usleep(10000);
	}
	kill(-pid, SIGKILL);   /* the whole group, background jobs included */
	if (w != pid)
		waitpid(pid, &status, 0);
	char *out = clean(buf, len, truncated);
	char *res;
	if (timed_out)
		res = xasprintf("%s\n[killed after %d s timeout]", out,
		    AGENT_TOOL_TIMEOUT_S);
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		res = xasprintf("%s%s[exit status %d]", out, len ? "\n" : "",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		res = xasprintf("%s\n[killed by signal %d]", out, WTERMSIG(status));
	else
		res = xstrdup(out);
	free(out);
	return res;
}

/* ---- http ---------------------------------------------------------- */

struct bounded {
	char buf[AGENT_TOOL_OUT_MAX];
	size_t len;
	bool truncated;
};

/* libcurl write callback into a struct bounded: keeps the first
 * AGENT_TOOL_OUT_MAX bytes, then sets truncated and stops the transfer
 * (tool_http takes that CURLE_WRITE_ERROR as a cut, complete answer). */
static size_t
bounded_write(char *p, size_t sz, size_t n, void *ud)
{
	struct bounded *b = ud;
	size_t k = sz * n;
	size_t take = k;
	if (b->len + take > sizeof(b->buf)) {
		take = sizeof(b->buf) - b->len;
		b->truncated = true;
	}
	memcpy(b->buf + b->len, p, take);
	b->len += take;
	return b->truncated ? 0 : k;   /* stop reading once full */
}

/*
 * The http tool: args {url, method (default GET), headers (the first 32
 * string ones; a name with CR, LF or ':' or a value with CR or LF is
 * dropped), body, unix_socket}; http and https only, AGENT_TOOL_TIMEOUT_S
 * in all.  Returns "HTTP <status>\n<body>" (the first AGENT_TOOL_OUT_MAX
 * bytes, cleaned) and sets *ran, or an "error: http: ..." text with *ran
 * false.  Caller frees.
 */
static char *
tool_http(const cJSON *args, bool *ran)
{
	*ran = false;   /* until curl got an answer */
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(args, "url");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(args, "method");
	const cJSON *headers = cJSON_GetObjectItemCaseSensitive(args, "headers");
	const cJSON *body = cJSON_GetObjectItemCaseSensitive(args, "body");
	const cJSON *usock = cJSON_GetObjectItemCaseSensitive(args, "unix_socket");
	if (!cJSON_IsString(url))
		return xstrdup("error: http: missing \"url\"");
	if (usock && (!cJSON_IsString(usock) || !*usock->valuestring ||
	    strlen(usock->valuestring) >= 108))
		return xstrdup("error: http: \"unix_socket\" must be a socket path");
	const char *m = cJSON_IsString(method) ? method->valuestring : "GET";
	CURL *c = curl_easy_init();
	if (!c)
		return xstrdup("error: http: curl init failed");
	struct curl_slist *h = NULL;
	const cJSON *it;
	int nh = 0;
	cJSON_ArrayForEach(it, headers) {
		if (!cJSON_IsString(it) || !it->string || nh++ >= 32)
			continue;
		if (strpbrk(it->string, "\r\n:") || strpbrk(it->valuestring, "\r\n"))
			continue;
		char *line = xasprintf("%s: %s", it->string, it->valuestring);
		h = curl_slist_append(h, line);
		free(line);
	}
	struct bounded *b = xcalloc(1, sizeof(*b));
	curl_easy_setopt(c, CURLOPT_URL, url->valuestring);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m);
	if (cJSON_IsString(body)) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->valuestring);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body->valuestring));
	} else if (strcmp(m, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (usock)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, usock->valuestring);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, bounded_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)AGENT_TOOL_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	char *res;
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && b->truncated)) {
		res = xasprintf("error: http: %s", curl_easy_strerror(rc));
	} else {
		*ran = true;
		char *out = clean(b->buf, b->len, b->truncated);
		res = xasprintf("HTTP %ld\n%s", status, out);
		free(out);
	}
	free(b);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return res;
}

/* ---- read_file ----------------------------------------------------- */

/* The read_file tool: the first AGENT_TOOL_OUT_MAX bytes of a regular
 * file, cleaned (opened non-blocking, so a FIFO never hangs it: it is
 * refused as not regular).  *ran false with an "error: ..." text when
 * the file cannot be opened or is not regular; untouched otherwise.
 * Caller frees. */
static char *
tool_read(const char *path, bool *ran)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*ran = false;
		return xasprintf("error: %s: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*ran = false;
		return xasprintf("error: %s: not a regular file", path);
	}
	char buf[AGENT_TOOL_OUT_MAX];
	size_t len = 0;
	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	bool truncated = len == sizeof(buf) && st.st_size > (off_t)len;
	close(fd);
	return clean(buf, len, truncated);
}

char *
agent_tool(const char *name, const char *arguments, bool *ran)
{
	cJSON *args = cJSON_Parse(arguments ? arguments : "");
	bool ok = true;
	char *res;
	if (!cJSON_IsObject(args)) {
		ok = false;
		res = xstrdup("error: arguments are not a JSON object");
	} else if (strcmp(name, "shell") == 0) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "command");
		ok = cJSON_IsString(c);
		res = ok ? tool_shell(c->valuestring, &ok) :
		    xstrdup("error: shell: missing \"command\"");
	} else if (strcmp(name, "http") == 0) {
		res = tool_http(args, &ok);
	} else if (strcmp(name, "read_file") == 0) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(args, "path");
		ok = cJSON_IsString(p);
		res = ok ? tool_read(p->valuestring, &ok) :
		    xstrdup("error: read_file: missing \"path\"");
	} else {
		ok = false;
		res = xstrdup("error: unknown tool");
	}
	cJSON_Delete(args);
	if (ran != NULL)
		*ran = ok;
	return res;
}

char *
agent_run_tool(const char *name, const char *arguments)
{
	return agent_tool(name, arguments, NULL);
}

/* ---- the loop ------------------------------------------------------ */

/* One log line: "step N: <what>" with untrusted text made inert. */
static void
logline(int step, const char *what, const char *text)
{
	char t[240];
	util_sanitize(t, sizeof(t), text ? text : "", text ? strlen(text) : 0, false);
	printf("step %d: %s%s%s\n", step, what, *t ? " " : "", t);
	fflush(stdout);
}

/* One OpenAI-style function tool: {type, function: {name, description,
 * parameters: {type: object, properties: props (taken), required}}};
 * required is NULL-terminated.  Caller deletes. */
static cJSON *
tool_def(const char *name, const char *desc, cJSON *props,
    const char *const *required)
{
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "type", "function");
	cJSON *f = cJSON_AddObjectToObject(t, "function");
	cJSON_AddStringToObject(f, "name", name);
	cJSON_AddStringToObject(f, "description", desc);
	cJSON *p = cJSON_AddObjectToObject(f, "parameters");
	cJSON_AddStringToObject(p, "type", "object");
	cJSON_AddItemToObject(p, "properties", props);
	cJSON *r = cJSON_AddArrayToObject(p, "required");
	for (; *required; required++)
		cJSON_AddItemToArray(r, cJSON_CreateString(*required));
	return t;
}

/* Add the parameter name {type, description} to props; returns it. */
static cJSON *
prop(cJSON *props, const char *name, const char *type,
    const char *desc)
{
	cJSON *o = cJSON_AddObjectToObject(props, name);
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddStringToObject(o, "description", desc);
	return o;
}

/* The tools the agent offers the model: shell, http, read_file.  Caller
 * deletes. */
static cJSON *
tools_json(void)
{
	cJSON *tools = cJSON_CreateArray();
	cJSON *p = cJSON_CreateObject();
	prop(p, "command", "string", "the command line, run with /bin/sh -c");
	static const char *const r_shell[] = { "command", NULL };
	cJSON_AddItemToArray(tools, tool_def("shell",
	    "Run a shell command (10 s timeout, output bounded to 8 KiB).", p, r_shell));
	p = cJSON_CreateObject();
	prop(p, "method", "string", "GET, POST, ...");
	prop(p, "url", "string", "http:// or https:// URL");
	prop(p, "headers", "object", "extra request headers");
	prop(p, "body", "string", "request body");
	prop(p, "unix_socket", "string", "optional: send the request over this "
	    "unix socket (e.g. a Docker Engine socket; the URL host is ignored)");
	static const char *const r_http[] = { "method", "url", NULL };
	cJSON_AddItemToArray(tools, tool_def("http",
	    "Send an HTTP request; returns \"HTTP <code>\" and the body (8 KiB).",
	    p, r_http));
	p = cJSON_CreateObject();
	prop(p, "path", "string", "file path");
	static const char *const r_read[] = { "path", NULL };
	cJSON_AddItemToArray(tools, tool_def("read_file",
	    "Read a file (first 8 KiB).", p, r_read));
	return tools;
}

/* The bytes message m takes in a request (compact JSON). */
static size_t
message_bytes(const cJSON *m)
{
	char *t = cJSON_PrintUnformatted(m);
	size_t n = t ? strlen(t) + 1 : 0;
	free(t);
	return n;
}

int
agent_trim_history(cJSON *messages, size_t budget)
{
	int n = cJSON_GetArraySize(messages), dropped = 0;
	size_t *sz = xcalloc((size_t)n + 1, sizeof(*sz));
	size_t total = 2;
	int i = 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, messages) {
		sz[i] = message_bytes(m);
		total += sz[i++];
	}
	/* the system and task messages (0, 1) stay, and so does the latest
	 * turn (the last assistant message and its tool results) */
	int last = n;
	for (i = n - 1; i >= 2; i--) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(messages, i), "role");
		if (cJSON_IsString(r) && strcmp(r->valuestring, "assistant") == 0) {
			last = i;
			break;
		}
	}
	int pos = 2, ti = 2;   /* pos: where the oldest kept turn is now */
	while (total > budget && ti < last) {
		/* one turn: an assistant message and the tool messages after
		 * it (a tool message never outlives its call) */
		int end = ti + 1;
		while (end < last) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetArrayItem(messages, pos + (end - ti)), "role");
			if (!cJSON_IsString(r) || strcmp(r->valuestring, "tool") != 0)
				break;
			end++;
		}
		for (int k = ti; k < end; k++) {
			cJSON_DeleteItemFromArray(messages, pos);
			total -= sz[k];
		}
		ti = end;
		dropped++;
	}
	free(sz);
	return dropped;
}

enum answer_kind {
	ANSWER_OK = 0,     /* a message to act on */
	ANSWER_RETRY,      /* 429, 5xx (unless the relay's final word), no
	                      choices, an error in the body */
	ANSWER_STOP,       /* anything else: stop */
};

/* Classify the gateway's answer (status, parsed body ans) and say why in
 * why.  *msg is the message of ANSWER_OK.  A 429/5xx of error.type
 * GATEWAY_RELAY_FINAL is not retried (the relay's final word). */
static enum answer_kind
classify(long status, const cJSON *ans, const cJSON **msg, char *why,
    size_t whylen)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(ans, "error");
	const cJSON *em = cJSON_GetObjectItemCaseSensitive(err, "message");
	const char *es = cJSON_IsString(em) ? em->valuestring :
	    cJSON_IsString(err) ? err->valuestring : NULL;
	const cJSON *et = cJSON_GetObjectItemCaseSensitive(err, "type");
	*msg = NULL;
	if (status == 429 || status >= 500) {
		snprintf(why, whylen, "HTTP %ld from the gateway: %.200s", status,
		    es ? es : "");
		/* the relay already retried within its budget: final */
		if (cJSON_IsString(et) &&
		    strcmp(et->valuestring, GATEWAY_RELAY_FINAL) == 0)
			return ANSWER_STOP;
		return ANSWER_RETRY;
	}
	if (status != 200) {
		snprintf(why, whylen, "HTTP %ld from the gateway: %.200s", status,
		    es ? es : "");
		return ANSWER_STOP;
	}
	if (!cJSON_IsObject(ans)) {
		snprintf(why, whylen, "the answer is not a JSON object");
		return ANSWER_RETRY;
	}
	if (err != NULL && !cJSON_IsNull(err)) {
		snprintf(why, whylen, "an error in a 200 answer: %.200s",
		    es ? es : "(no message)");
		return ANSWER_RETRY;
	}
	const cJSON *ch = cJSON_GetObjectItemCaseSensitive(ans, "choices");
	if (cJSON_GetArraySize(ch) == 0) {
		snprintf(why, whylen, "the answer has no choices");
		return ANSWER_RETRY;
	}
	*msg = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ch, 0),
	    "message");
	if (!cJSON_IsObject(*msg)) {
		snprintf(why, whylen, "malformed answer from the gateway");
		return ANSWER_STOP;
	}
	return ANSWER_OK;
}

static volatile sig_atomic_t agent_stop;

/* SIGTERM / SIGINT of the idle agent: idle() returns. */
static void
on_term(int sig)
{
	(void)sig;
	agent_stop = 1;
}

/* AGENT_IDLE=1: sleep until SIGTERM/SIGINT (PID 1 in a container ignores
 * them without a handler, so `docker stop` would wait its full grace).
 * As PID 1 it inherits every orphan of what runs in the container (docker
 * exec'd probes, a script's background jobs): SIGCHLD ignored makes the
 * kernel reap them at once, and zombies already there are reaped first,
 * so dead processes never hold the container's pids limit. */
static int
idle(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGCHLD, &sa, NULL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	printf("agent idle (AGENT_IDLE=1): waiting for exec / SIGTERM\n");
	fflush(stdout);
	while (!agent_stop)
		pause();
	return 0;
}

cJSON *
agent_tools_json(void)
{
	return tools_json();
}

char *
agent_request(cJSON *messages, const cJSON *tools, const char *model,
    long budget, int *cut)
{
	cJSON *req = cJSON_CreateObject();
	char *body;

	cJSON_AddStringToObject(req, "model", model);
	cJSON_AddItemReferenceToObject(req, "tools", (cJSON *)tools);
	cJSON_AddStringToObject(req, "tool_choice", "auto");
	/* the rest of the body (model, tools, the keys) comes off the budget:
	 * the gateway refuses a body over HTTP_BODY_MAX with a 413 */
	char *rest = cJSON_PrintUnformatted(req);
	long room = (long)HTTP_BODY_MAX - (long)strlen(rest) -
	    (long)sizeof(",\"messages\":") - 64;
	free(rest);
	if (budget > room)
		budget = room > 0 ? room : 0;
	*cut = agent_trim_history(messages, (size_t)budget);
	cJSON_AddItemReferenceToObject(req, "messages", messages);
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	return body;
}

long
agent_post(const char *url, const char *key, const char *body,
    long timeout_s, struct http_answer *out, char *err, size_t errlen)
{
	long status = 0;
	size_t max = out->max;

	for (int attempt = 0; attempt < 10; attempt++) {
		if (attempt)
			sleep(1);
		free(out->buf);
		*out = (struct http_answer){ .max = max };
		status = http_post_bearer(url, key, body, body ? strlen(body) : 0,
		    timeout_s, out, err, errlen);
		/* only "not connected" is safe to post again: the gateway
		 * never saw the request */
		if (status != 0 || (out->curl_rc != CURLE_COULDNT_CONNECT &&
		    out->curl_rc != CURLE_COULDNT_RESOLVE_HOST))
			break;
	}
	return status;
}

int
agent_main(void)
{
	if (strcmp(util_env_or("AGENT_IDLE", "0"), "1") == 0)
		return idle();
	const char *base = util_env_or("OPENAI_BASE_URL",
	    "http://gateway:8080/v1");
	const char *key = util_env_or("OPENAI_API_KEY", "");
	const char *model = util_env_or("AGENT_MODEL", "ares-offline-1");
	int max_steps = atoi(util_env_or("AGENT_MAX_STEPS", "24"));
	if (max_steps < 1 || max_steps > 1000)
		max_steps = 24;
	long budget = atol(util_env_or("AGENT_CONTEXT_BUDGET", "262144"));
	if (budget < 4096 || budget > 1048576)
		budget = 262144;
	/* longer than the gateway's own bound on a model call (ares sets
	 * it): giving up first would leave that call running upstream */
	long http_timeout = atol(util_env_or("AGENT_HTTP_TIMEOUT", "180"));
	if (http_timeout < 10 || http_timeout > 86400)
		http_timeout = 180;
	const char *task = util_env_or("AGENT_TASK",
	    "Look around your workspace and help with the open tasks you find.");
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		bl--;
	char *url = xasprintf("%.*s/chat/completions", (int)bl, base);
	cJSON *messages = cJSON_CreateArray();
	char *sys = xasprintf("You are Poyo, an assistant working on a company "
	    "workstation. You can use the tools shell, http and read_file. You "
	    "may take at most %d steps.", max_steps);
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "system");
	cJSON_AddStringToObject(m, "content", sys);
	cJSON_AddItemToArray(messages, m);
	free(sys);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "user");
	cJSON_AddStringToObject(m, "content", task);
	cJSON_AddItemToArray(messages, m);
	cJSON *tools = tools_json();
	logline(0, "start: model", model);

	int rc = 0;
	for (int step = 1;; step++) {
		if (step > max_steps) {
			logline(step - 1, "stop:", "step limit reached");
			break;
		}
		int cut;
		char *body = agent_request(messages, tools, model, budget, &cut);
		if (cut > 0) {
			char n[32];
			snprintf(n, sizeof(n), "%d turn(s)", cut);
			logline(step, "context budget: dropped the oldest", n);
		}
		cJSON *ans = NULL;
		const cJSON *msg = NULL;
		char why[320] = "";
		enum answer_kind kind = ANSWER_STOP;
		long status = 0;
		for (int retry = 0;; retry++) {
			struct http_answer out = { .max = AGENT_RESP_MAX };
			char err[256] = "";
			status = agent_post(url, key, body, http_timeout, &out, err,
			    sizeof(err));
			if (status == 0) {
				free(out.buf);
				snprintf(why, sizeof(why), "gateway unreachable: %s",
				    err);
				kind = ANSWER_STOP;
				break;
			}
			cJSON_Delete(ans);
			ans = cJSON_Parse(out.buf ? out.buf : "");
			free(out.buf);
			kind = classify(status, ans, &msg, why, sizeof(why));
			if (kind != ANSWER_RETRY || retry >= AGENT_RETRIES)
				break;
			/* 1, 2, 4, ... s: a busy or failing model gets time */
			logline(step, "retry:", why);
			sleep(1u << (retry < 4 ? retry : 4));
		}
		free(body);
		if (kind != ANSWER_OK) {
			logline(step, "stop:", why);
			cJSON_Delete(ans);
			rc = status == 403 ? 0 : 1;
			break;
		}
		const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
		if (cJSON_IsString(refusal) && *refusal->valuestring) {
			/* the model declined: that is its answer, the loop ends */
			logline(step, "refused:", refusal->valuestring);
			cJSON_Delete(ans);
			break;
		}
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
		const cJSON *tcs = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
		/* keep only what the protocol needs in the history */
		cJSON *keep = cJSON_CreateObject();
		cJSON_AddStringToObject(keep, "role", "assistant");
		if (cJSON_IsString(content))
			cJSON_AddStringToObject(keep, "content", content->valuestring);
		else
			cJSON_AddNullToObject(keep, "content");
		if (cJSON_GetArraySize(tcs) > 0)
			cJSON_AddItemToObject(keep, "tool_calls", cJSON_Duplicate(tcs, 1));
		cJSON_AddItemToArray(messages, keep);
		if (cJSON_GetArraySize(tcs) == 0) {
			logline(step, "final:", cJSON_IsString(content) ?
			    content->valuestring : "");
			cJSON_Delete(ans);
			break;
		}
		if (cJSON_IsString(content) && *content->valuestring)
			logline(step, "says:", content->valuestring);
		const cJSON *tc;
		int k = 0;
		cJSON_ArrayForEach(tc, tcs) {
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(tc, "id");
			if (k++ >= 16) {
				/* every call needs an answer; refuse the excess */
				cJSON *tm = cJSON_CreateObject();
				cJSON_AddStringToObject(tm, "role", "tool");
				cJSON_AddStringToObject(tm, "tool_call_id",
				    cJSON_IsString(id) ? id->valuestring : "");
				cJSON_AddStringToObject(tm, "content",
				    "error: too many tool calls in one turn (max 16)");
				cJSON_AddItemToArray(messages, tm);
				continue;
			}
			const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
			const cJSON *nm = cJSON_GetObjectItemCaseSensitive(fn, "name");
			const cJSON *ar = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
			const char *name = cJSON_IsString(nm) ? nm->valuestring : "?";
			const char *args = cJSON_IsString(ar) ? ar->valuestring : "{}";
			char what[96];
			snprintf(what, sizeof(what), "call %.64s", name);
			logline(step, what, args);
			char *res = agent_run_tool(name, args);
			char head[160];
			snprintf(head, sizeof(head), "%.159s", res);
			logline(step, "result:", head);
			cJSON *tm = cJSON_CreateObject();
			cJSON_AddStringToObject(tm, "role", "tool");
			cJSON_AddStringToObject(tm, "tool_call_id",
			    cJSON_IsString(id) ? id->valuestring : "");
			cJSON_AddStringToObject(tm, "content", res);
			cJSON_AddItemToArray(messages, tm);
			free(res);
		}
		cJSON_Delete(ans);
	}
	cJSON_Delete(messages);
	cJSON_Delete(tools);
	free(url);
	return rc;
}
