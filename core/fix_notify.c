/*
 * fix_notify.c - the fix loop's GitHub pull request and Slack message
 * (libcurl; docs/fix.md): the requests, sent only when configured, and a
 * record of each one without its secrets.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <sodium.h>

#define FIX_HTTP_BODY_MAX  (1024 * 1024)        /* API answers kept */

/* ---- GitHub and Slack (libcurl) --------------------------------------- */

struct fix_buf {
	char *p;
	size_t len;
};

/* libcurl write callback: append to the struct fix_buf, keeping at most
 * FIX_HTTP_BODY_MAX bytes (the rest is read and dropped). */
static size_t
fix_curl_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct fix_buf *b = ud;
	size_t n = size * nmemb;

	if (b->len + n > FIX_HTTP_BODY_MAX)
		n = b->len < FIX_HTTP_BODY_MAX ? FIX_HTTP_BODY_MAX - b->len : 0;
	if (n > 0) {
		b->p = xrealloc(b->p, b->len + n + 1);
		memcpy(b->p + b->len, ptr, n);
		b->len += n;
		b->p[b->len] = '\0';
	}
	return size * nmemb;
}

/* POST body to url with headers; *status and (optional) *resp.  -1 + e. */
static int
fix_http_post(const char *url, const char *const *headers, const char *body,
    long *status, char **resp, struct errbuf *e)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct fix_buf b = { 0 };
	CURLcode rc;
	size_t i;

	*status = 0;
	if (c == NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "curl init failed");
	for (i = 0; headers[i] != NULL; i++)
		h = curl_slist_append(h, headers[i]);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fix_curl_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		free(b.p);
		return errbuf_set(e, ERRBUF_INTERNAL, "POST %s: %s", url,
		    curl_easy_strerror(rc));
	}
	if (resp != NULL)
		*resp = b.p ? b.p : xstrdup("");
	else
		free(b.p);
	return 0;
}

/* scheme://host of url, the rest "***" (webhook URLs are secrets). */
static char *
fix_redact_url(const char *url)
{
	const char *p = strstr(url, "://");
	const char *slash;

	if (p == NULL)
		return xstrdup("***");
	slash = strchr(p + 3, '/');
	if (slash == NULL)
		return xstrdup(url);
	return xasprintf("%.*s/***", (int)(slash - url), url);
}

/* Write the request record (no secrets) to path, with extra's members
 * (may be NULL: what the server answered) added.  -1 + e. */
static int
fix_write_record(const char *path, const char *method, const char *url,
    const char *const *headers_shown, const cJSON *body, bool sent,
    long status, const char *note, const cJSON *extra, struct errbuf *e)
{
	cJSON *j = cJSON_CreateObject(), *h = cJSON_CreateArray();
	char *txt;
	size_t i;
	int rc;

	cJSON_AddBoolToObject(j, "sent", sent);
	if (note != NULL)
		cJSON_AddStringToObject(j, "note", note);
	cJSON_AddStringToObject(j, "method", method);
	cJSON_AddStringToObject(j, "url", url);
	for (i = 0; headers_shown[i] != NULL; i++)
		cJSON_AddItemToArray(h, cJSON_CreateString(headers_shown[i]));
	cJSON_AddItemToObject(j, "headers", h);
	cJSON_AddItemToObject(j, "body", cJSON_Duplicate(body, true));
	if (sent)
		cJSON_AddNumberToObject(j, "status", (double)status);
	if (extra != NULL) {
		const cJSON *x;

		cJSON_ArrayForEach(x, extra)
			cJSON_AddItemToObject(j, x->string,
			    cJSON_Duplicate(x, true));
	}
	txt = cJSON_Print(j);
	rc = util_write_file(path, txt, strlen(txt), 0644, e);
	free(txt);
	cJSON_Delete(j);
	return rc;
}

/* fix_github_pr with the record's note when nothing is sent (NULL: the
 * token or --github is missing). */
static int
fix_github_pr_x(const char *api, const char *owner_repo, const char *token,
    const char *head, const char *base, const char *title, const char *body,
    const char *record_path, long *status, char *pr_url, size_t pr_url_len,
    const char *unsent_note, struct errbuf *e)
{
	cJSON *j = cJSON_CreateObject();
	char *url, *json, *auth = NULL, *resp = NULL;
	const char *slash = owner_repo ? strchr(owner_repo, '/') : NULL;
	const char *shown[] = { "Accept: application/vnd.github+json",
	    "X-GitHub-Api-Version: 2022-11-28", "User-Agent: ares-fix",
	    "Content-Type: application/json",
	    token ? "Authorization: Bearer ***" : NULL, NULL };
	int rc = 0;
	size_t i;

	*status = 0;
	if (pr_url_len > 0)
		pr_url[0] = '\0';
	if (owner_repo == NULL || slash == NULL || slash == owner_repo ||
	    slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "--github: '%s' is not "
		    "OWNER/REPO", owner_repo ? owner_repo : "");
	}
	for (i = 0; owner_repo[i] != '\0'; i++) {
		char c = owner_repo[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '/')) {
			cJSON_Delete(j);
			return errbuf_set(e, ERRBUF_INPUT, "--github: '%s' is "
			    "not OWNER/REPO", owner_repo);
		}
	}
	if (api == NULL || api[0] == '\0')
		api = "https://api.github.com";
	url = xasprintf("%s%s/repos/%s/pulls", api,
	    api[strlen(api) - 1] == '/' ? "" : "", owner_repo);
	if (api[strlen(api) - 1] == '/') {
		free(url);
		url = xasprintf("%srepos/%s/pulls", api, owner_repo);
	}
	cJSON_AddStringToObject(j, "title", title);
	cJSON_AddStringToObject(j, "head", head);
	cJSON_AddStringToObject(j, "base", base);
	cJSON_AddStringToObject(j, "body", body);
	json = cJSON_PrintUnformatted(j);
	if (token != NULL && token[0] != '\0') {
		const char *hdr[6];

		auth = xasprintf("Authorization: Bearer %s", token);
		memcpy(hdr, shown, sizeof hdr);
		hdr[4] = auth;
		rc = fix_http_post(url, hdr, json, status, &resp, e);
		sodium_memzero(auth, strlen(auth));
		free(auth);
		if (rc == 0 && resp != NULL) {
			cJSON *r = cJSON_Parse(resp);
			const char *u = util_json_str(r, "html_url", NULL);

			if (u != NULL && pr_url_len > 0)
				util_sanitize(pr_url, pr_url_len, u, strlen(u),
				    false);
			cJSON_Delete(r);
		}
		if (rc == 0 && (*status < 200 || *status >= 300))
			rc = errbuf_set(e, ERRBUF_INTERNAL, "POST %s answered "
			    "HTTP %ld", url, *status);
	}
	if (record_path != NULL) {
		struct errbuf e2 = { 0 };

		(void)fix_write_record(record_path, "POST", url, shown, j,
		    token != NULL && token[0] != '\0', *status,
		    token != NULL && token[0] != '\0' ? NULL : unsent_note ?
		    unsent_note : "not sent: GITHUB_TOKEN or --github missing",
		    NULL, &e2);
	}
	free(resp);
	free(json);
	free(url);
	cJSON_Delete(j);
	return rc;
}

/* Open a pull request (POST {api}/repos/OWNER/REPO/pulls) when token is
 * set; record the request (token redacted) to record_path either way.
 * -1 + e on a bad OWNER/REPO, a failed request or a non-2xx answer. */
int
fix_github_pr(const char *api, const char *owner_repo, const char *token,
    const char *head, const char *base, const char *title, const char *body,
    const char *record_path, long *status, char *pr_url, size_t pr_url_len,
    struct errbuf *e)
{
	return fix_github_pr_x(api, owner_repo, token, head, base, title, body,
	    record_path, status, pr_url, pr_url_len, NULL, e);
}

/* The pull request not sent, for why (note): only its record. */
void
fix_github_pr_unsent(const char *api, const char *owner_repo,
    const char *head, const char *base, const char *title, const char *body,
    const char *record_path, const char *note)
{
	struct errbuf e = { 0 };
	long status;
	char url[8];

	(void)fix_github_pr_x(api, owner_repo, NULL, head, base, title, body,
	    record_path, &status, url, sizeof url, note, &e);
}

/*
 * text with every secret ares knows of replaced by "***": the values of
 * GITHUB_TOKEN and SLACK_BOT_TOKEN (when 4 bytes or longer) and the
 * user-info of a URL (user:secret@host becomes ***@host).  What git
 * or a server said goes through it before it is shown or recorded.
 * Caller frees.
 */
char *
fix_redact_secrets(const char *text)
{
	static const char *const envs[] = { "GITHUB_TOKEN", "SLACK_BOT_TOKEN" };
	char *s = xstrdup(text), *p;
	size_t k;

	for (k = 0; k < sizeof envs / sizeof envs[0]; k++) {
		const char *v = getenv(envs[k]);
		size_t vl = v ? strlen(v) : 0;

		if (vl < 4)
			continue;
		while ((p = strstr(s, v)) != NULL) {
			char *n = xasprintf("%.*s***%s", (int)(p - s), s, p + vl);

			free(s);
			s = n;
		}
	}
	for (p = s; (p = strstr(p, "://")) != NULL; p += 3) {
		char *at, *end = p + 3 + strcspn(p + 3, "/ \t\n'\"");

		at = memchr(p + 3, '@', (size_t)(end - p - 3));
		if (at != NULL && !(at == p + 6 && strncmp(p + 3, "***", 3) == 0)) {
			size_t off = (size_t)(p - s);
			char *n = xasprintf("%.*s://***%s", (int)off, s, at);

			free(s);
			s = n;
			p = s + off;
		}
	}
	return s;
}

/* Post {"text": text} to webhook when set; record the request (URL path
 * redacted) to record_path either way.  -1 + e on a failed request or a
 * non-2xx answer. */
int
fix_slack_post(const char *webhook, const char *text,
    const char *record_path, long *status, struct errbuf *e)
{
	cJSON *j = cJSON_CreateObject();
	const char *hdr[] = { "Content-Type: application/json", NULL };
	char *json, *shown_url;
	bool send = webhook != NULL && webhook[0] != '\0';
	int rc = 0;

	*status = 0;
	cJSON_AddStringToObject(j, "text", text);
	json = cJSON_PrintUnformatted(j);
	if (send) {
		rc = fix_http_post(webhook, hdr, json, status, NULL, e);
		if (rc == 0 && (*status < 200 || *status >= 300))
			rc = errbuf_set(e, ERRBUF_INTERNAL, "Slack webhook "
			    "answered HTTP %ld", *status);
	}
	shown_url = send ? fix_redact_url(webhook) :
	    xstrdup("(no webhook configured)");
	if (record_path != NULL) {
		struct errbuf e2 = { 0 };

		(void)fix_write_record(record_path, "POST", shown_url, hdr, j,
		    send, *status, send ? NULL : "not sent: --slack-webhook / "
		    "ARES_SLACK_WEBHOOK missing", NULL, &e2);
	}
	free(shown_url);
	free(json);
	cJSON_Delete(j);
	return rc;
}

/*
 * text made safe for a Slack message (bot or webhook): control bytes,
 * escape sequences and invalid UTF-8 dropped (util_sanitize, newlines
 * kept), '&', '<' and '>' escaped as Slack asks (so no "<!channel>",
 * "<@U...>" or "<url|label>" from evidence or a policy's name), at most
 * FIX_SLACK_TEXT_MAX bytes (cut at a character, "..." added).  Caller
 * frees.
 */
char *
fix_slack_text(const char *text)
{
	size_t n = strlen(text), i;
	char *clean = xmalloc(n + 1);
	struct util_buf b;

	util_sanitize(clean, n + 1, text, n, true);
	util_buf_init(&b, n + 64);
	for (i = 0; clean[i] != '\0'; i++) {
		if (b.len > FIX_SLACK_TEXT_MAX) {
			/* back to the start of a UTF-8 character */
			while (b.len > 0 && ((unsigned char)b.s[b.len - 1] &
			    0xc0) == 0x80)
				b.len--;
			if (b.len > 0 && (unsigned char)b.s[b.len - 1] >= 0xc0)
				b.len--;
			b.s[b.len] = '\0';
			util_buf_printf(&b, "...");
			break;
		}
		switch (clean[i]) {
		case '&':
			util_buf_printf(&b, "&amp;");
			break;
		case '<':
			util_buf_printf(&b, "&lt;");
			break;
		case '>':
			util_buf_printf(&b, "&gt;");
			break;
		default:
			util_buf_printf(&b, "%c", clean[i]);
		}
	}
	free(clean);
	return b.s;
}

/* Whether a Slack channel (an id like C0123ABC, or a name like #ops) is
 * one we send to: 1..80 bytes of [A-Za-z0-9#._-]. */
bool
fix_slack_channel_ok(const char *c)
{
	size_t i;

	if (c == NULL || c[0] == '\0' || strlen(c) > 80)
		return false;
	for (i = 0; c[i] != '\0'; i++)
		if (!((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= 'A' &&
		    c[i] <= 'Z') || (c[i] >= '0' && c[i] <= '9') ||
		    c[i] == '#' || c[i] == '.' || c[i] == '_' || c[i] == '-'))
			return false;
	return true;
}

/*
 * chat.postMessage as a bot: POST {api}/chat.postMessage {channel, text}
 * with "Authorization: Bearer <token>" when token is set (NULL: nothing
 * sent); the request (token redacted) goes to record_path either way,
 * with Slack's answer ("ok", "error") when sent.  Slack answers 200 with
 * {"ok": false, "error": "..."} on a refusal: that is a failure naming
 * the error.  -1 + e on a failed request, a non-2xx answer, an answer
 * that is not {"ok": true}.
 */
int
fix_slack_chat_post(const char *api, const char *channel, const char *token,
    const char *text, const char *record_path, long *status,
    struct errbuf *e)
{
	cJSON *j = cJSON_CreateObject();
	char *url, *json, *auth = NULL, *resp = NULL;
	const char *shown[] = { "Content-Type: application/json; "
	    "charset=utf-8", "User-Agent: ares-fix",
	    token ? "Authorization: Bearer ***" : NULL, NULL };
	char answer_err[128] = "";
	bool send = token != NULL && token[0] != '\0', answered = false;
	bool ok = false;
	int rc = 0;

	*status = 0;
	if (api == NULL || api[0] == '\0')
		api = "https://slack.com/api";
	url = xasprintf("%s%schat.postMessage", api,
	    api[strlen(api) - 1] == '/' ? "" : "/");
	cJSON_AddStringToObject(j, "channel", channel);
	cJSON_AddStringToObject(j, "text", text);
	json = cJSON_PrintUnformatted(j);
	if (send) {
		const char *hdr[4];

		auth = xasprintf("Authorization: Bearer %s", token);
		memcpy(hdr, shown, sizeof hdr);
		hdr[2] = auth;
		rc = fix_http_post(url, hdr, json, status, &resp, e);
		sodium_memzero(auth, strlen(auth));
		free(auth);
		if (rc == 0) {
			cJSON *r = cJSON_Parse(resp);
			const char *er = util_json_str(r, "error", NULL);

			answered = cJSON_IsObject(r);
			ok = util_json_true(r, "ok");
			if (er != NULL)
				util_sanitize(answer_err, sizeof answer_err, er,
				    strlen(er), false);
			cJSON_Delete(r);
			if (*status < 200 || *status >= 300)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "Slack "
				    "chat.postMessage to %s answered HTTP %ld%s%s",
				    channel, *status, answer_err[0] ? ": " : "",
				    answer_err);
			else if (!ok)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "Slack "
				    "chat.postMessage to %s: %s", channel,
				    answer_err[0] ? answer_err : answered ?
				    "\"ok\" is not true" : "the answer is not "
				    "JSON");
		}
	}
	if (record_path != NULL) {
		struct errbuf e2 = { 0 };
		cJSON *x = cJSON_CreateObject();

		if (send && *status != 0) {
			/* Slack's verdict beside the request */
			cJSON_AddBoolToObject(x, "ok", ok);
			if (answer_err[0] != '\0')
				cJSON_AddStringToObject(x, "error", answer_err);
		}
		(void)fix_write_record(record_path, "POST", url, shown, j,
		    send, *status, send ? NULL : "not sent: SLACK_BOT_TOKEN "
		    "unset", x, &e2);
		cJSON_Delete(x);
	}
	free(resp);
	free(json);
	free(url);
	cJSON_Delete(j);
	return rc;
}
