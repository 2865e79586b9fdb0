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

/* Write the request record (no secrets) to path.  Errors ignored into e. */
static int
fix_write_record(const char *path, const char *method, const char *url,
    const char *const *headers_shown, const cJSON *body, bool sent,
    long status, const char *note, struct errbuf *e)
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
	txt = cJSON_Print(j);
	rc = util_write_file(path, txt, strlen(txt), 0644, e);
	free(txt);
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
		    token != NULL && token[0] != '\0' ? NULL :
		    "not sent: GITHUB_TOKEN or --github missing", &e2);
	}
	free(resp);
	free(json);
	free(url);
	cJSON_Delete(j);
	return rc;
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
		    "ARES_SLACK_WEBHOOK missing", &e2);
	}
	free(shown_url);
	free(json);
	cJSON_Delete(j);
	return rc;
}
