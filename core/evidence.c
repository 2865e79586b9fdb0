/*
 * evidence.c - append-only, hash-chained JSONL evidence (BLAKE2b-256).
 *
 * The file format is specified in docs/evidence.md; in short:
 *
 *   h_0  = BLAKE2b-256("ares-evidence-v1" 0x00 run_id 0x00 nonce16)
 *   line = {"seq":N,"prev":"<hex>","type":"T","t_mono_ns":N,
 *           "t_wall":"<RFC 3339>",<fields...>,"hash":"<64 hex>"}\n
 *   body = line without ,"hash":"<64 hex>" and without '\n' (ends in '}')
 *   hash = BLAKE2b-256(prev_raw32 || body)
 *
 * Writing: one struct evidence is used by one thread at a time (no locks).
 * Each line goes to the file with a single write(2) on an O_APPEND fd and
 * no fsync, so the kill path never waits on the disk; evidence_close()
 * fsyncs the file and its directory.
 *
 * Verification works on the exact bytes: it checks the line framing, the
 * fixed header textually, parses the line with cJSON only to check that it
 * is one valid JSON object with unique top-level member names, and
 * recomputes every hash.  It never re-serialises JSON.
 */
#include "evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#define EVIDENCE_FORMAT      "ares-evidence-v1"
#define EVIDENCE_NONCE_BYTES 16
#define EVIDENCE_FILE_MAX    ((size_t)256 * 1024 * 1024)  /* verify bound */
#define EVIDENCE_RUN_ID_MAX  127   /* bytes, fits result.run_id[128] */
#define EVIDENCE_TYPE_MAX    63
#define EVIDENCE_WALL_MAX    39

/* ,"hash":"  +  64 hex  +  "}   */
#define EVIDENCE_SUFFIX_HEAD ",\"hash\":\""
#define EVIDENCE_SUFFIX_HEAD_LEN 9
#define EVIDENCE_SUFFIX_LEN  (EVIDENCE_SUFFIX_HEAD_LEN + 64 + 2)

struct evidence {
	int fd;
	char *path;
	size_t count;                     /* lines written */
	size_t bytes;                     /* bytes written (partial included) */
	uint8_t head[EVIDENCE_HASH_BYTES]; /* hash of the last line (h_0 first) */
	char head_hex[EVIDENCE_HEX_BYTES];
	bool broken;                      /* a partial line may be on disk */
};

/* Names an event's fields may not use: the writer puts them there. */
static const char *const evidence_reserved[] = {
	"seq", "prev", "type", "t_mono_ns", "t_wall", "hash",
};

/* ---- character classes shared by writer and verifier ---------------- */

/* run_id: printable ASCII except '"' and '\\' (so JSON needs no escape). */
static bool
evidence_run_id_char(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '"' && c != '\\';
}

/* type: [A-Za-z0-9_.:-] */
static bool
evidence_type_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
	    c == '-';
}

/* t_wall: [0-9A-Za-z:.+-] */
static bool
evidence_wall_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == ':' || c == '.' || c == '+' ||
	    c == '-';
}

static bool
evidence_lower_hex_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* True when s (NUL-terminated) is 1..max bytes all accepted by ok(). */
static bool
evidence_str_ok(const char *s, size_t max, bool (*ok)(unsigned char))
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= max || !ok((unsigned char)s[i]))
			return false;
	return true;
}

/* ---- hashing --------------------------------------------------------- */

void
evidence_genesis_hash(const char *run_id, const uint8_t nonce[16],
    uint8_t out[EVIDENCE_HASH_BYTES])
{
	crypto_generichash_state st;
	static const uint8_t zero = 0;

	crypto_generichash_init(&st, NULL, 0, EVIDENCE_HASH_BYTES);
	crypto_generichash_update(&st, (const uint8_t *)EVIDENCE_FORMAT,
	    strlen(EVIDENCE_FORMAT));
	crypto_generichash_update(&st, &zero, 1);
	crypto_generichash_update(&st, (const uint8_t *)run_id,
	    strlen(run_id));
	crypto_generichash_update(&st, &zero, 1);
	crypto_generichash_update(&st, nonce, EVIDENCE_NONCE_BYTES);
	crypto_generichash_final(&st, out, EVIDENCE_HASH_BYTES);
}

/*
 * hash = BLAKE2b-256(prev || body) where body = pre[0..pre_len) followed by
 * a single '}' (the body's closing brace is not contiguous with pre in a
 * verified line, so it is passed separately).
 */
static void
evidence_line_hash(const uint8_t prev[EVIDENCE_HASH_BYTES], const char *pre,
    size_t pre_len, uint8_t out[EVIDENCE_HASH_BYTES])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, EVIDENCE_HASH_BYTES);
	crypto_generichash_update(&st, prev, EVIDENCE_HASH_BYTES);
	crypto_generichash_update(&st, (const uint8_t *)pre, pre_len);
	crypto_generichash_update(&st, (const uint8_t *)"}", 1);
	crypto_generichash_final(&st, out, EVIDENCE_HASH_BYTES);
}

/* ---- writer ---------------------------------------------------------- */

/* write(2) all of buf; *done gets the bytes written.  -1 with errno. */
static int
evidence_write_all(int fd, const char *buf, size_t len, size_t *done)
{
	*done = 0;
	while (*done < len) {
		ssize_t n = write(fd, buf + *done, len - *done);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		*done += (size_t)n;
	}
	return 0;
}

/*
 * Seal and write one line.  body is the line without its hash member and
 * without '\n' (it ends in '}').  Hashes it with the current head, appends
 * ,"hash":"..."}\n and writes the whole line with one write(2) (more only
 * after a short write).  Updates head and count.  -1 + e.
 */
static int
evidence_write_body(struct evidence *ev, const char *body, size_t body_len,
    struct errbuf *e)
{
	uint8_t h[EVIDENCE_HASH_BYTES];
	char hex[EVIDENCE_HEX_BYTES];
	size_t line_len, done;
	char *line;

	if (body_len < 2 || body[body_len - 1] != '}')
		return errbuf_set(e, ERRBUF_INTERNAL,
		    "evidence %s: internal: malformed line body", ev->path);
	line_len = body_len - 1 + EVIDENCE_SUFFIX_LEN + 1;
	if (line_len > EVIDENCE_LINE_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "evidence %s: line %zu "
		    "would be %zu bytes (limit %d)", ev->path, ev->count,
		    line_len, EVIDENCE_LINE_MAX);
	evidence_line_hash(ev->head, body, body_len - 1, h);
	util_hex(h, sizeof h, hex);

	line = xmalloc(line_len + 1);
	memcpy(line, body, body_len - 1);
	snprintf(line + body_len - 1, line_len + 1 - (body_len - 1),
	    EVIDENCE_SUFFIX_HEAD "%s\"}\n", hex);

	if (evidence_write_all(ev->fd, line, line_len, &done) == -1) {
		int err = errno;

		if (done > 0)
			ev->broken = true;
		ev->bytes += done;
		free(line);
		return errbuf_set(e, ERRBUF_INTERNAL, "evidence %s: write "
		    "line %zu: %s%s", ev->path, ev->count, strerror(err),
		    done > 0 ? " (partial line written; chain broken)" : "");
	}
	free(line);
	memcpy(ev->head, h, sizeof h);
	memcpy(ev->head_hex, hex, sizeof hex);
	ev->count++;
	ev->bytes += line_len;
	return 0;
}

/*
 * Create path (O_EXCL: it must not exist), mode 0644, and write the
 * genesis line with a fresh 16-byte nonce.  run_id: 1..127 printable ASCII
 * bytes other than '"' and '\\'.  Returns NULL + e (ERRBUF_INPUT for a bad
 * run id or an existing file).  On a failed genesis write the file is
 * removed again.  Free with evidence_close().
 */
struct evidence *
evidence_create(const char *path, const char *run_id, struct errbuf *e)
{
	uint8_t nonce[EVIDENCE_NONCE_BYTES], h0[EVIDENCE_HASH_BYTES];
	char nonce_hex[2 * EVIDENCE_NONCE_BYTES + 1], wall[40];
	struct evidence *ev;
	char *body;
	int fd;

	if (path == NULL || path[0] == '\0') {
		errbuf_set(e, ERRBUF_INPUT, "evidence: empty path");
		return NULL;
	}
	if (!evidence_str_ok(run_id, EVIDENCE_RUN_ID_MAX,
	    evidence_run_id_char)) {
		errbuf_set(e, ERRBUF_INPUT, "evidence %s: run_id must be 1..%d "
		    "printable ASCII bytes without '\"' or '\\'", path,
		    EVIDENCE_RUN_ID_MAX);
		return NULL;
	}
	if (sodium_init() < 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "evidence %s: sodium_init "
		    "failed", path);
		return NULL;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644);
	if (fd == -1) {
		errbuf_set(e, errno == EEXIST ? ERRBUF_INPUT : ERRBUF_INTERNAL,
		    "evidence %s: create: %s", path, strerror(errno));
		return NULL;
	}
	ev = xcalloc(1, sizeof *ev);
	ev->fd = fd;
	ev->path = xstrdup(path);

	randombytes_buf(nonce, sizeof nonce);
	util_hex(nonce, sizeof nonce, nonce_hex);
	evidence_genesis_hash(run_id, nonce, h0);
	memcpy(ev->head, h0, sizeof h0);
	util_hex(h0, sizeof h0, ev->head_hex);
	util_wall_iso(util_wall_ns(), wall);

	body = xasprintf("{\"seq\":0,\"prev\":\"%s\",\"type\":\"genesis\","
	    "\"t_mono_ns\":%" PRIu64 ",\"t_wall\":\"%s\",\"run_id\":\"%s\","
	    "\"nonce\":\"%s\",\"format\":\"" EVIDENCE_FORMAT "\"}",
	    ev->head_hex, util_mono_ns(), wall, run_id, nonce_hex);
	if (evidence_write_body(ev, body, strlen(body), e) == -1) {
		free(body);
		close(ev->fd);
		unlink(ev->path);
		free(ev->path);
		free(ev);
		return NULL;
	}
	free(body);
	return ev;
}

/*
 * Append one event line.  type: 1..63 bytes of [A-Za-z0-9_.:-], not
 * "genesis".  fields: a JSON object or NULL (borrowed); its members are
 * printed with cJSON_PrintUnformatted after the fixed header.  Members named
 * seq, prev, type, t_mono_ns, t_wall or hash, and duplicate names, are
 * rejected (ERRBUF_INPUT), as is a line longer than EVIDENCE_LINE_MAX.
 * Returns the new line's seq, or -1 + e.
 */
long
evidence_append(struct evidence *ev, const char *type, uint64_t t_mono_ns,
    const cJSON *fields, struct errbuf *e)
{
	char wall[40], *printed = NULL, *body;
	const char *inner = "", *dup;
	size_t inner_len = 0, i;
	long seq;
	int rc;

	if (ev == NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "evidence: append on a "
		    "closed chain");
	if (ev->broken)
		return errbuf_set(e, ERRBUF_INTERNAL, "evidence %s: chain "
		    "broken by an earlier partial write", ev->path);
	if (!evidence_str_ok(type, EVIDENCE_TYPE_MAX, evidence_type_char) ||
	    strcmp(type, "genesis") == 0)
		return errbuf_set(e, ERRBUF_INPUT, "evidence %s: bad event "
		    "type \"%.64s\" (1..%d of [A-Za-z0-9_.:-], not genesis)",
		    ev->path, type == NULL ? "(null)" : type,
		    EVIDENCE_TYPE_MAX);
	if (ev->count > (size_t)LONG_MAX)
		return errbuf_set(e, ERRBUF_INTERNAL, "evidence %s: too many "
		    "lines", ev->path);
	seq = (long)ev->count;

	if (fields != NULL) {
		const cJSON *c;

		if (!cJSON_IsObject(fields))
			return errbuf_set(e, ERRBUF_INPUT, "evidence %s: %s "
			    "fields: not a JSON object", ev->path, type);
		for (c = fields->child; c != NULL; c = c->next) {
			if (c->string == NULL)
				return errbuf_set(e, ERRBUF_INPUT, "evidence "
				    "%s: %s fields: member without a name",
				    ev->path, type);
			for (i = 0; i < sizeof evidence_reserved /
			    sizeof evidence_reserved[0]; i++)
				if (strcmp(c->string, evidence_reserved[i])
				    == 0)
					return errbuf_set(e, ERRBUF_INPUT,
					    "evidence %s: %s fields: key "
					    "\"%s\" is reserved", ev->path,
					    type, c->string);
		}
		dup = util_json_dup_name(fields, false);
		if (dup != NULL)
			return errbuf_set(e, ERRBUF_INPUT, "evidence %s: %s "
			    "fields: key \"%.64s\" appears twice", ev->path,
			    type, dup);
		printed = cJSON_PrintUnformatted(fields);
		if (printed == NULL)
			util_fatal("evidence: cJSON_PrintUnformatted failed");
		/* "{}" or "{...}": keep the members between the braces */
		inner_len = strlen(printed);
		if (inner_len < 2 || printed[0] != '{' ||
		    printed[inner_len - 1] != '}') {
			cJSON_free(printed);
			return errbuf_set(e, ERRBUF_INTERNAL, "evidence %s: "
			    "unexpected cJSON output", ev->path);
		}
		inner = printed + 1;
		inner_len -= 2;
		/* cJSON escapes controls in strings; only cJSON_Raw items
		 * could smuggle a newline into the line */
		for (i = 0; i < inner_len; i++)
			if ((unsigned char)inner[i] < 0x20) {
				cJSON_free(printed);
				return errbuf_set(e, ERRBUF_INPUT, "evidence "
				    "%s: %s fields: raw control byte in "
				    "printed JSON", ev->path, type);
			}
		if (inner_len > EVIDENCE_LINE_MAX) {
			cJSON_free(printed);
			return errbuf_set(e, ERRBUF_INPUT, "evidence %s: %s "
			    "fields: %zu bytes (line limit %d)", ev->path,
			    type, inner_len, EVIDENCE_LINE_MAX);
		}
	}

	util_wall_iso(util_wall_ns(), wall);
	body = xasprintf("{\"seq\":%ld,\"prev\":\"%s\",\"type\":\"%s\","
	    "\"t_mono_ns\":%" PRIu64 ",\"t_wall\":\"%s\"%s%.*s}", seq,
	    ev->head_hex, type, t_mono_ns, wall, inner_len > 0 ? "," : "",
	    (int)inner_len, inner);
	if (printed != NULL)
		cJSON_free(printed);
	rc = evidence_write_body(ev, body, strlen(body), e);
	free(body);
	return rc == -1 ? -1 : seq;
}

size_t
evidence_count(const struct evidence *ev)
{
	return ev == NULL ? 0 : ev->count;
}

size_t
evidence_bytes(const struct evidence *ev)
{
	return ev == NULL ? 0 : ev->bytes;
}

const char *
evidence_head_hex(const struct evidence *ev)
{
	return ev == NULL ? "" : ev->head_hex;
}

/* fsync the directory holding path so the new entry is durable. */
static void
evidence_sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (slash == NULL)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, (size_t)(slash - path));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd != -1) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

/* fsync and close the chain file (and its directory), free ev.  NULL ok.
 * Errors here cannot be reported; verify the file afterwards. */
void
evidence_close(struct evidence *ev)
{
	if (ev == NULL)
		return;
	(void)fsync(ev->fd);
	close(ev->fd);
	evidence_sync_dir(ev->path);
	free(ev->path);
	free(ev);
}

/* ---- verifier -------------------------------------------------------- */

/* A bounded cursor over one line for the textual header checks. */
struct evidence_cur {
	const char *p, *end;
};

static bool
evidence_lit(struct evidence_cur *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* Decimal uint64 without sign, leading zeros (except "0") or overflow. */
static bool
evidence_dec(struct evidence_cur *c, uint64_t *v)
{
	const char *s = c->p;
	uint64_t x = 0;

	if (s >= c->end || *s < '0' || *s > '9')
		return false;
	if (*s == '0' && s + 1 < c->end && s[1] >= '0' && s[1] <= '9')
		return false;
	while (s < c->end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
		s++;
	}
	*v = x;
	c->p = s;
	return true;
}

/*
 * A JSON string of 1..max characters all accepted by ok() (so it has no
 * escapes): copies it NUL-terminated into out (outsz > max).  When exact is
 * non-zero the length must be exactly that.
 */
static bool
evidence_plain_str(struct evidence_cur *c, size_t max, size_t exact,
    bool (*ok)(unsigned char), char *out, size_t outsz)
{
	const char *s = c->p;
	size_t n = 0;

	if (s >= c->end || *s != '"')
		return false;
	s++;
	while (s + n < c->end && s[n] != '"') {
		if (n >= max || !ok((unsigned char)s[n]))
			return false;
		n++;
	}
	if (s + n >= c->end || n == 0 || (exact != 0 && n != exact) ||
	    n >= outsz)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	c->p = s + n + 1;
	return true;
}

static void
evidence_fail(struct evidence_verify_result *r, size_t line,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
evidence_fail(struct evidence_verify_result *r, size_t line,
    const char *fmt, ...)
{
	va_list ap;

	r->ok = false;
	r->bad_line = line;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
}

/*
 * Verify one line (n bytes, '\n' excluded) as line index idx.  prev holds
 * the previous line's hash (ignored for idx 0, where h_0 is computed from
 * the line itself); out gets this line's hash.  Returns NULL when the line
 * is good, else a reason written into why (256 bytes).  r->run_id is filled
 * from a genesis line.
 */
static const char *
evidence_verify_line(const char *line, size_t n, size_t idx,
    const char *expect_run_id, const uint8_t prev[EVIDENCE_HASH_BYTES],
    uint8_t out[EVIDENCE_HASH_BYTES], struct evidence_verify_result *r,
    char why[256])
{
	struct evidence_cur cur = { line, line + n };
	char suffix_hex[EVIDENCE_HEX_BYTES], prev_hex[EVIDENCE_HEX_BYTES];
	char type[EVIDENCE_TYPE_MAX + 1], wall[EVIDENCE_WALL_MAX + 1];
	char calc_hex[EVIDENCE_HEX_BYTES];
	uint8_t want_prev[EVIDENCE_HASH_BYTES];
	const char *parse_end = NULL, *dup;
	const cJSON *last;
	cJSON *doc;
	uint64_t seq, mono;
	size_t i;

	/* framing */
	if (n == 0)
		return "empty line";
	if (line[n - 1] == '\r')
		return "line ends with CRLF";
	for (i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20) {
			snprintf(why, 256, "control character 0x%02x at byte "
			    "%zu", (unsigned char)line[i], i + 1);
			return why;
		}

	/* the hash suffix:  ,"hash":"<64 lower hex>"}  */
	if (n < EVIDENCE_SUFFIX_LEN + 1 ||
	    memcmp(line + n - 2, "\"}", 2) != 0 ||
	    memcmp(line + n - EVIDENCE_SUFFIX_LEN, EVIDENCE_SUFFIX_HEAD,
	    EVIDENCE_SUFFIX_HEAD_LEN) != 0)
		return "missing hash field";
	for (i = 0; i < 64; i++) {
		unsigned char h = (unsigned char)
		    line[n - EVIDENCE_SUFFIX_LEN + EVIDENCE_SUFFIX_HEAD_LEN + i];

		if (!evidence_lower_hex_char(h))
			return "malformed hash field (not 64 lowercase hex)";
	}
	memcpy(suffix_hex, line + n - EVIDENCE_SUFFIX_LEN +
	    EVIDENCE_SUFFIX_HEAD_LEN, 64);
	suffix_hex[64] = '\0';

	/* one JSON object, nothing after it, unique names, hash last */
	doc = cJSON_ParseWithLengthOpts(line, n, &parse_end, 0);
	if (doc == NULL)
		return "not valid JSON";
	if (!cJSON_IsObject(doc) || parse_end != line + n) {
		cJSON_Delete(doc);
		return "not valid JSON";
	}
	dup = util_json_dup_name(doc, false);
	if (dup != NULL) {
		snprintf(why, 256, "duplicate key \"%.64s\"", dup);
		cJSON_Delete(doc);
		return why;
	}
	for (last = doc->child; last != NULL && last->next != NULL;
	    last = last->next)
		;
	if (last == NULL || last->string == NULL ||
	    strcmp(last->string, "hash") != 0 || !cJSON_IsString(last) ||
	    strcmp(last->valuestring, suffix_hex) != 0) {
		cJSON_Delete(doc);
		return "hash member does not match the line suffix";
	}
	cJSON_Delete(doc);

	/* the fixed header, textually */
	if (!evidence_lit(&cur, "{\"seq\":") || !evidence_dec(&cur, &seq))
		return "malformed seq";
	if (!evidence_lit(&cur, ",\"prev\":") ||
	    !evidence_plain_str(&cur, 64, 64, evidence_lower_hex_char,
	    prev_hex, sizeof prev_hex))
		return "malformed prev";
	if (!evidence_lit(&cur, ",\"type\":") ||
	    !evidence_plain_str(&cur, EVIDENCE_TYPE_MAX, 0,
	    evidence_type_char, type, sizeof type))
		return "malformed type";
	/* a chain that reached its budget ends with one such line */
	if (strcmp(type, "truncated") == 0)
		r->truncated = true;
	if (!evidence_lit(&cur, ",\"t_mono_ns\":") ||
	    !evidence_dec(&cur, &mono))
		return "malformed t_mono_ns";
	if (!evidence_lit(&cur, ",\"t_wall\":") ||
	    !evidence_plain_str(&cur, EVIDENCE_WALL_MAX, 0,
	    evidence_wall_char, wall, sizeof wall) ||
	    cur.p >= cur.end || *cur.p != ',')
		return "malformed t_wall";

	if (seq != (uint64_t)idx) {
		snprintf(why, 256, "seq %" PRIu64 " expected %zu", seq, idx);
		return why;
	}

	if (idx == 0) {
		char run_id[EVIDENCE_RUN_ID_MAX + 1];
		char nonce_hex[2 * EVIDENCE_NONCE_BYTES + 1];
		uint8_t nonce[EVIDENCE_NONCE_BYTES];

		if (strcmp(type, "genesis") != 0)
			return "first line is not a genesis line";
		if (!evidence_lit(&cur, ",\"run_id\":") ||
		    !evidence_plain_str(&cur, EVIDENCE_RUN_ID_MAX, 0,
		    evidence_run_id_char, run_id, sizeof run_id))
			return "genesis run_id malformed";
		snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
		if (expect_run_id != NULL && strcmp(expect_run_id, run_id) != 0)
			return "genesis run_id mismatch";
		if (!evidence_lit(&cur, ",\"nonce\":") ||
		    !evidence_plain_str(&cur, 32, 32, evidence_lower_hex_char,
		    nonce_hex, sizeof nonce_hex) ||
		    util_unhex(nonce_hex, nonce, sizeof nonce) != 0)
			return "genesis nonce malformed";
		if (!evidence_lit(&cur, ",\"format\":\"" EVIDENCE_FORMAT "\"")
		    || cur.p >= cur.end || *cur.p != ',')
			return "genesis format is not " EVIDENCE_FORMAT;
		evidence_genesis_hash(run_id, nonce, want_prev);
		util_hex(want_prev, sizeof want_prev, calc_hex);
		if (strcmp(prev_hex, calc_hex) != 0)
			return "genesis prev does not match h_0 of run_id and "
			    "nonce";
	} else {
		if (strcmp(type, "genesis") == 0)
			return "genesis type on a line after the first";
		memcpy(want_prev, prev, EVIDENCE_HASH_BYTES);
		util_hex(want_prev, sizeof want_prev, calc_hex);
		if (strcmp(prev_hex, calc_hex) != 0)
			return "prev does not match previous hash";
	}

	/* body = line minus suffix, plus the closing '}' */
	evidence_line_hash(want_prev, line, n - EVIDENCE_SUFFIX_LEN, out);
	util_hex(out, EVIDENCE_HASH_BYTES, calc_hex);
	if (strcmp(calc_hex, suffix_hex) != 0)
		return "hash mismatch";
	return NULL;
}

/*
 * Verify a chain held in buf (len bytes; need not be NUL-terminated).
 * Always fills r; r->ok is the verdict, r->entries/r->head describe the
 * longest good prefix, r->bad_line/r->reason the first problem.  Stops at
 * the first bad line.  Returns 0 (the -1 case exists for the file variant).
 */
int
evidence_verify_buf(const char *buf, size_t len, const char *expect_run_id,
    struct evidence_verify_result *r)
{
	uint8_t prev[EVIDENCE_HASH_BYTES] = { 0 }, h[EVIDENCE_HASH_BYTES];
	size_t pos = 0, idx = 0;
	char why[256];

	memset(r, 0, sizeof *r);
	if (sodium_init() < 0) {
		evidence_fail(r, 0, "sodium_init failed");
		return 0;
	}
	if (buf == NULL || len == 0) {
		evidence_fail(r, 1, "empty chain");
		return 0;
	}
	while (pos < len) {
		const char *line = buf + pos, *nl, *bad;
		size_t avail = len - pos;
		size_t scan = avail < EVIDENCE_LINE_MAX ? avail :
		    EVIDENCE_LINE_MAX;

		nl = memchr(line, '\n', scan);
		if (nl == NULL) {
			if (avail >= EVIDENCE_LINE_MAX)
				evidence_fail(r, idx + 1, "line too long "
				    "(limit %d bytes)", EVIDENCE_LINE_MAX);
			else
				evidence_fail(r, idx + 1, "line not "
				    "newline-terminated (truncated?)");
			return 0;
		}
		bad = evidence_verify_line(line, (size_t)(nl - line), idx,
		    expect_run_id, prev, h, r, why);
		if (bad != NULL) {
			evidence_fail(r, idx + 1, "%s", bad);
			return 0;
		}
		memcpy(prev, h, sizeof h);
		util_hex(h, sizeof h, r->head);
		r->entries = ++idx;
		pos += (size_t)(nl - line) + 1;
	}
	r->ok = true;
	r->bad_line = 0;
	r->reason[0] = '\0';
	return 0;
}

/* A chain file's bytes: at most 256 MiB, never through a link.  Caller
 * frees.  NULL + e ("evidence: ..."). */
char *
evidence_read(const char *path, size_t *len, struct errbuf *e)
{
	char *buf = util_read_regular(path, EVIDENCE_FILE_MAX, len, e);

	if (buf == NULL)
		errbuf_prefix(e, "evidence");
	return buf;
}

/*
 * Read path (evidence_read) and verify it.  Returns 0 with r filled, or
 * -1 + e when the file cannot be read (r then says "cannot read").
 */
int
evidence_verify_file(const char *path, const char *expect_run_id,
    struct evidence_verify_result *r, struct errbuf *e)
{
	size_t len = 0;
	char *buf;

	memset(r, 0, sizeof *r);
	buf = evidence_read(path, &len, e);
	if (buf == NULL) {
		evidence_fail(r, 0, "cannot read evidence file");
		return -1;
	}
	evidence_verify_buf(buf, len, expect_run_id, r);
	free(buf);
	return 0;
}
