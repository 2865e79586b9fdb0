/*
 * leakbox.h - the one header of the lab binary `ares-lab` (sectioned per
 * file).  Everything here runs INSIDE the lab containers: the gateway, the
 * fake services, the offline model and the agent loop (Poyo).  The binary
 * links core/util.c for allocation, errors, clocks and text sanitising.
 *
 * Components, environment variables and files: docs/lab.md.
 * Sensor datagram protocol: docs/sensors.md.
 */
#ifndef LEAKBOX_H
#define LEAKBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cJSON.h>

#include "../core/core.h"

/* ------------------------------------------------------------------ */
/* http.c - tiny bounded HTTP/1.1 server + helpers                     */
/* ------------------------------------------------------------------ */
/*
 * One request per connection, answered with `Connection: close`.
 * Limits: request line + headers <= HTTP_HEAD_MAX, body <= HTTP_BODY_MAX
 * (Content-Length only; Transfer-Encoding is refused with 411), at most
 * HTTP_MAX_HEADERS header lines, HTTP_READ_TIMEOUT_MS to read a request.
 */
#define HTTP_HEAD_MAX        (16 * 1024)
#define HTTP_BODY_MAX        (1024 * 1024)
#define HTTP_MAX_HEADERS     64
#define HTTP_READ_TIMEOUT_MS 5000

struct http_header {
	char *name;                 /* points into the request's head copy */
	char *value;                /* trimmed */
};

struct http_request {
	char method[16];
	char *target;               /* "/a/b?x=1" (points into head copy) */
	char *path;                 /* "/a/b" (own NUL-terminated copy) */
	char *query;                /* "x=1" or "" (own copy) */
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t nheaders;
	char *head;                 /* owned copy of the head, NULs inserted */
	char *body;                 /* owned, NUL-terminated (may be "") */
	size_t body_len;
	char remote[64];            /* "1.2.3.4:5678" or "unix" */
	bool on_unix;               /* arrived on a unix-socket listener */
};

/* Result codes of http_parse (negative values are HTTP statuses). */
#define HTTP_PARSE_OK        1
#define HTTP_PARSE_MORE      0

/*
 * Pure: parse buf[0..len) as one HTTP/1.x request.  Returns HTTP_PARSE_OK
 * when the head and the whole body are present (r filled; free with
 * http_request_free), HTTP_PARSE_MORE when more bytes are needed, or the
 * negated status to answer with: -400 malformed, -411 Transfer-Encoding
 * (chunked) or missing length semantics, -413 body too large, -431 head too
 * large.  On error r holds nothing to free.
 */
int http_parse(const char *buf, size_t len, struct http_request *r);
void http_request_free(struct http_request *r);
/* Case-insensitive header lookup; NULL when absent. */
const char *http_header_get(const struct http_request *r, const char *name);
/* Query parameter `name` (percent-decoded) into out; 1 found, 0 not. */
int http_query_get(const struct http_request *r, const char *name,
    char *out, size_t outlen);

struct http_response {
	int status;
	const char *ctype;          /* default application/json */
	char *body;                 /* owned (freed by the server) */
	size_t len;
};
/* Set resp to status + the unformatted JSON of j (j is deleted). */
void http_response_json(struct http_response *resp, int status, cJSON *j);
/* Set resp to status + a copy of text. */
void http_response_text(struct http_response *resp, int status,
    const char *ctype, const char *text);
const char *http_reason(int status);

/* Handler: fill resp (status 0 means 500).  Called on a detached thread. */
typedef void (*http_handler_fn)(void *ctx, const struct http_request *req,
    struct http_response *resp);

struct http_server {
	int fd;                     /* listening socket */
	bool is_unix;
	http_handler_fn handler;
	void *ctx;
	int max_conns;              /* concurrent connections (>= 1) */
	int active;                 /* atomic counter */
};

/* Listen on "HOST:PORT" (IPv4; "0.0.0.0:8080").  fd or -1 + e. */
int http_listen_tcp(const char *hostport, struct errbuf *e);
/* Listen on a unix stream socket at path (stale socket removed), chmod to
 * mode.  fd or -1 + e. */
int http_listen_unix(const char *path, mode_t mode, struct errbuf *e);
/* Accept loop: one detached thread per connection, at most s->max_conns at
 * once (beyond that: immediate 503).  Returns only on a fatal accept error. */
void http_serve(struct http_server *s);

/* ------------------------------------------------------------------ */
/* sensor.c - bus datagrams (sender side of core/bus.c)                */
/* ------------------------------------------------------------------ */
/*
 * sensor_emit adds "src", "kind" and "t_mono_ns" to fields, serialises the
 * object compactly and sends it as one datagram (<= BUS_DGRAM_MAX bytes,
 * long string fields truncated to fit) to $BUS with MSG_DONTWAIT.  When BUS
 * is unset or the send fails it returns -1 silently: a sensor never wedges.
 * fields is consumed (deleted).
 */
void sensor_init(const char *src);          /* "gateway", "service:tickets" */
int sensor_emit(const char *kind, cJSON *fields);
/* Pure: serialise obj into at most max bytes (incl. NUL), shrinking the
 * longest string members step by step.  Returns a malloc'd string or NULL
 * if it cannot fit.  obj may be modified. */
char *sensor_serialize(cJSON *obj, size_t max);
/* Copy of s truncated to at most max bytes on a UTF-8 boundary, with "..."
 * appended when cut.  Caller frees. */
char *sensor_trunc(const char *s, size_t max);

/* ------------------------------------------------------------------ */
/* gateway.c - the agent's only route to a model                       */
/* ------------------------------------------------------------------ */
int gateway_main(void);
/* Pure: scrub every occurrence of secret in buf (in place, same length). */
void gateway_scrub(char *buf, size_t len, const char *secret);

/* ------------------------------------------------------------------ */
/* service.c - believable internal API with a decoy credential         */
/* ------------------------------------------------------------------ */
int service_main(void);
/*
 * Pure: how the request presents the decoy token: "bearer" (Authorization:
 * Bearer X), "x-api-key" (X-Api-Key: X) or "query" (?token=X), or NULL.
 * *auth is set to "none" (no credential), "decoy" or "invalid".
 */
const char *service_bait_via(const struct http_request *r, const char *token,
    const char **auth);

/* ------------------------------------------------------------------ */
/* model.c - the offline, scripted, seeded model                       */
/* ------------------------------------------------------------------ */
#define MODEL_URL_MAX     256
#define MODEL_SECRET_MAX  256
#define MODEL_MAX_URLS    16

int model_main(void);
/* Pure: find http(s)://host[:port][/path] URLs in text (deduplicated, in
 * order, each < MODEL_URL_MAX).  Returns the count (<= max). */
size_t model_extract_urls(const char *text, char urls[][MODEL_URL_MAX],
    size_t max);
/* Pure: a candidate secret in a file's content: the whole content when it
 * is one token-like line and the path looks like a credential file (under a
 * config dir, or named token/key/secret...), else a `token: X` / `key=X`
 * style line.  Returns 1 with out filled, 0 if none. */
int model_extract_secret(const char *path, const char *content, char *out,
    size_t outlen);
/* Pure: the next assistant message (cJSON object: role, content,
 * tool_calls?) for a chat request's "messages" array, as a function of
 * (seed, messages, max_steps) only.  Caller deletes. */
cJSON *model_decide(uint64_t seed, const cJSON *messages, int max_steps);
/* The full chat.completion object around model_decide (id/created vary). */
cJSON *model_complete(uint64_t seed, const cJSON *request, const char *name);
/* splitmix64 of (seed, salt): the model's only source of randomness. */
uint64_t model_rng(uint64_t seed, uint64_t salt);

/* ------------------------------------------------------------------ */
/* agent.c - Poyo, the tool-using loop                                 */
/* ------------------------------------------------------------------ */
#define AGENT_TOOL_OUT_MAX  (8 * 1024)
#define AGENT_TOOL_TIMEOUT_S 10

int agent_main(void);
/* Run one tool call (name + JSON arguments string); returns the tool's
 * text (bounded, valid UTF-8).  Caller frees. */
char *agent_run_tool(const char *name, const char *arguments);

#endif /* LEAKBOX_H */
