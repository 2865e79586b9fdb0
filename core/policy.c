/*
 * policy.c - the drill policy: one YAML file, read with libyaml.
 *
 * Two steps, both bounded:
 *  1. tree_build(): libyaml's event parser builds a small node tree
 *     (mapping / sequence / scalar, each with its 1-based start line:col).
 *     Input size, nesting depth, node count and scalar length are capped;
 *     anchors, aliases, explicit non-default tags, non-scalar keys,
 *     duplicate keys and streams with more or fewer than one document are
 *     rejected here.
 *  2. bind_map(): the tree is bound to struct policy through const tables
 *     of key descriptors (key, expected node kind, handler, required, and
 *     handler parameters).  A new key is one table entry.
 *
 * Every error is "<file>:<line>:<col>: <key path>: <problem>" with
 * ERRBUF_INPUT.  After binding, step 3 (check_catalogues) checks the
 * variant, flaw and bait ids against the catalogues (core/variant.c,
 * core/lab.c); which levers exist is checked by the drill.  Step 4
 * (check_agent) resolves and reads agent.script, the only key that
 * touches the file system.  Schema: docs/policy.md, docs/agents.md.
 *
 * The fix loop's text edits (core/fix_yaml.c) find their byte ranges with
 * policy_find_key(), which reads the text with step 1: the same parser and
 * limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>
#include <yaml.h>

#include "internal.h"

#define TREE_MAX_NODES   4096   /* nodes (keys included) per document */
#define TREE_MAX_SCALAR  4096   /* bytes per scalar */
#define PATH_MAX_LEN     256    /* rendered key path in messages */
#define SHOW_MAX         64     /* untrusted text quoted in messages */

/* ------------------------------------------------------------------ */
/* The node tree                                                       */
/* ------------------------------------------------------------------ */

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ynode_kind kind;
	size_t line, col;      /* 1-based start mark */
	size_t start, end;     /* libyaml's character indices of the node's
	                          first character and of the one after it */
	bool flow;             /* a sequence in flow style: [a, b] */
	char *str;             /* scalar bytes, NUL-terminated; else NULL */
	size_t len;            /* scalar length (may contain NUL bytes) */
	bool plain;            /* plain style and no tag: may mean null/int */
	struct ynode **kids;   /* seq: items; map: key, value, key, value... */
	size_t nkids, cap;
};

/* Free a node and everything below it (recursion depth <= POLICY_MAX_DEPTH
 * + 1 by construction). */
static void
ynode_free(struct ynode *n)
{
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

/* A plain untagged scalar that YAML reads as null: "", "~", "null". */
static bool
ynode_is_null(const struct ynode *n)
{
	return n->kind == YN_SCALAR && n->plain &&
	    (n->len == 0 || strcmp(n->str, "~") == 0 ||
	    strcmp(n->str, "null") == 0 || strcmp(n->str, "Null") == 0 ||
	    strcmp(n->str, "NULL") == 0);
}

/* What a node is, for "expected X, got Y" messages. */
static const char *
ynode_what(const struct ynode *n)
{
	if (ynode_is_null(n))
		return "null";
	switch (n->kind) {
	case YN_SEQ:
		return "a sequence";
	case YN_MAP:
		return "a mapping";
	default:
		return "a scalar";
	}
}

/* Render untrusted bytes into out (terminal-safe, at most SHOW_MAX bytes,
 * "..." appended when cut).  Returns out. */
static const char *
show(const char *s, size_t len, char out[SHOW_MAX + 4])
{
	size_t n = len > SHOW_MAX ? SHOW_MAX : len;

	util_sanitize(out, SHOW_MAX + 1, s, n, false);
	if (len > SHOW_MAX)
		strcat(out, "...");
	return out;
}

/* Append a key-path component to path (bounded; '.' between keys, none
 * before "[i]").  Silently truncates at PATH_MAX_LEN. */
static void
path_append(char *path, const char *comp)
{
	size_t used = strlen(path);

	if (used >= PATH_MAX_LEN - 1)
		return;
	snprintf(path + used, PATH_MAX_LEN - used, "%s%s",
	    (used > 0 && comp[0] != '[') ? "." : "", comp);
}

/* The one error format: "<file>:<line>:<col>: <path>: <problem>".
 * An empty path is shown as "(document)".  Returns -1. */
static int
perr(struct errbuf *e, const char *file, size_t line, size_t col,
    const char *path, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int
perr(struct errbuf *e, const char *file, size_t line, size_t col,
    const char *path, const char *fmt, ...)
{
	char problem[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(problem, sizeof problem, fmt, ap);
	va_end(ap);
	return errbuf_set(e, ERRBUF_INPUT, "%s:%zu:%zu: %s: %s", file, line,
	    col, (path && path[0]) ? path : "(document)", problem);
}

/* ------------------------------------------------------------------ */
/* Step 1: libyaml events -> tree                                      */
/* ------------------------------------------------------------------ */

struct builder {
	const char *file;
	const unsigned char *buf;
	size_t len;
	struct errbuf *e;
	struct ynode *root;
	struct ynode *stack[POLICY_MAX_DEPTH];  /* open containers */
	size_t depth;
	size_t nodes;
	int docs;
};

/* The key path of the position the builder is at (plus key, if any). */
static void
build_path(const struct builder *b, const struct ynode *key, char *path)
{
	char comp[SHOW_MAX + 8];
	size_t i;

	path[0] = '\0';
	for (i = 0; i < b->depth; i++) {
		const struct ynode *f = b->stack[i];
		/* An outer frame's last kid is the open container below it;
		 * the innermost frame is waiting for its next kid. */
		size_t next = f->nkids - (i + 1 < b->depth ? 1 : 0);

		if (f->kind == YN_MAP && next % 2 == 1) {
			const struct ynode *k = f->kids[next - 1];

			path_append(path, show(k->str, k->len, comp));
		} else if (f->kind == YN_SEQ) {
			snprintf(comp, sizeof comp, "[%zu]", next);
			path_append(path, comp);
		}
	}
	if (key != NULL)
		path_append(path, show(key->str, key->len, comp));
}

/* Error at a libyaml mark (0-based) with the builder's current path. */
static int
build_err(struct builder *b, yaml_mark_t m, const struct ynode *key,
    const char *problem)
{
	char path[PATH_MAX_LEN];

	build_path(b, key, path);
	return perr(b->e, b->file, m.line + 1, m.column + 1, path, "%s",
	    problem);
}

/* Translate a libyaml failure into our format.  Reader errors (bad UTF-8,
 * control characters) only carry a byte offset: line:col is computed from
 * the buffer, and the key path is "(document)" because libyaml decodes
 * ahead of the token it is scanning. */
static int
build_yaml_err(struct builder *b, const yaml_parser_t *ps)
{
	char path[PATH_MAX_LEN];
	const char *problem = ps->problem ? ps->problem : "unknown error";

	if (ps->error == YAML_MEMORY_ERROR)
		util_fatal("libyaml: out of memory");
	if (ps->error == YAML_READER_ERROR) {
		size_t line = 1, col = 1, i, off = ps->problem_offset;

		if (off > b->len)
			off = b->len;
		for (i = 0; i < off; i++) {
			if (b->buf[i] == '\n') {
				line++;
				col = 1;
			} else if ((b->buf[i] & 0xC0) != 0x80) {
				col++;  /* count characters, not bytes */
			}
		}
		if (ps->problem_value != -1)
			return perr(b->e, b->file, line, col, "",
			    "bad input: %s (byte 0x%02x)", problem,
			    (unsigned)ps->problem_value & 0xffu);
		return perr(b->e, b->file, line, col, "", "bad input: %s",
		    problem);
	}
	build_path(b, NULL, path);
	if (ps->context != NULL)
		return perr(b->e, b->file, ps->problem_mark.line + 1,
		    ps->problem_mark.column + 1, path,
		    "syntax error: %s (%s at %zu:%zu)", problem, ps->context,
		    ps->context_mark.line + 1, ps->context_mark.column + 1);
	return perr(b->e, b->file, ps->problem_mark.line + 1,
	    ps->problem_mark.column + 1, path, "syntax error: %s", problem);
}

/* Reject anchors and tags other than the default one of the node kind. */
static int
build_check_props(struct builder *b, yaml_mark_t m, const yaml_char_t *anchor,
    const yaml_char_t *tag, const char *default_tag)
{
	char msg[SHOW_MAX + 64], t[SHOW_MAX + 4];

	if (anchor != NULL)
		return build_err(b, m, NULL,
		    "anchors and aliases are not allowed");
	if (tag != NULL && strcmp((const char *)tag, default_tag) != 0) {
		snprintf(msg, sizeof msg, "tag \"%s\" is not allowed",
		    show((const char *)tag, strlen((const char *)tag), t));
		return build_err(b, m, NULL, msg);
	}
	return 0;
}

/* Make a node at mark m (counting it against TREE_MAX_NODES) and hang it
 * under the innermost open container (or make it the root).  Keys must be
 * scalars and unique.  On error nothing is leaked and -1 is returned. */
static int
build_add(struct builder *b, yaml_mark_t m, enum ynode_kind kind,
    const char *str, size_t len, bool plain, struct ynode **out)
{
	struct ynode *n, *parent;
	char msg[SHOW_MAX + 96], k[SHOW_MAX + 4];
	size_t i;

	if (++b->nodes > TREE_MAX_NODES) {
		snprintf(msg, sizeof msg, "more than %d nodes",
		    TREE_MAX_NODES);
		return build_err(b, m, NULL, msg);
	}
	n = xcalloc(1, sizeof *n);
	n->kind = kind;
	n->line = m.line + 1;
	n->col = m.column + 1;
	n->start = m.index;
	n->plain = plain;
	if (kind == YN_SCALAR) {
		n->str = xmalloc(len + 1);
		memcpy(n->str, str, len);
		n->str[len] = '\0';
		n->len = len;
	}
	*out = n;
	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	parent = b->stack[b->depth - 1];
	if (parent->kind == YN_MAP && parent->nkids % 2 == 0) {
		if (kind != YN_SCALAR) {
			ynode_free(n);
			return build_err(b, m, NULL,
			    "mapping keys must be scalars");
		}
		for (i = 0; i < parent->nkids; i += 2) {
			const struct ynode *o = parent->kids[i];

			if (o->len == len && memcmp(o->str, str, len) == 0) {
				snprintf(msg, sizeof msg, "duplicate key "
				    "\"%s\" (first at %zu:%zu)",
				    show(str, len, k), o->line, o->col);
				build_err(b, m, n, msg);
				ynode_free(n);
				return -1;
			}
		}
	}
	if (parent->nkids == parent->cap) {
		parent->cap = parent->cap ? parent->cap * 2 : 8;
		parent->kids = xrealloc(parent->kids,
		    parent->cap * sizeof *parent->kids);
	}
	parent->kids[parent->nkids++] = n;
	return 0;
}

/* Handle one libyaml event.  Returns 1 at stream end, 0 to go on, -1 + e. */
static int
build_event(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n;
	char msg[96];

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_NO_EVENT:
		return 0;
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return build_err(b, ev->start_mark, NULL,
			    "only one document is allowed");
		return 0;
	case YAML_ALIAS_EVENT:
		return build_err(b, ev->start_mark, NULL,
		    "anchors and aliases are not allowed");
	case YAML_SCALAR_EVENT:
		if (build_check_props(b, ev->start_mark,
		    ev->data.scalar.anchor, ev->data.scalar.tag,
		    YAML_STR_TAG) == -1)
			return -1;
		if (ev->data.scalar.length > TREE_MAX_SCALAR) {
			snprintf(msg, sizeof msg, "scalar longer than %d bytes",
			    TREE_MAX_SCALAR);
			return build_err(b, ev->start_mark, NULL, msg);
		}
		if (build_add(b, ev->start_mark, YN_SCALAR,
		    (const char *)ev->data.scalar.value,
		    ev->data.scalar.length,
		    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    ev->data.scalar.tag == NULL, &n) == -1)
			return -1;
		n->end = ev->end_mark.index;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = ev->type == YAML_SEQUENCE_START_EVENT;

		if (build_check_props(b, ev->start_mark,
		    seq ? ev->data.sequence_start.anchor :
		    ev->data.mapping_start.anchor,
		    seq ? ev->data.sequence_start.tag :
		    ev->data.mapping_start.tag,
		    seq ? YAML_SEQ_TAG : YAML_MAP_TAG) == -1)
			return -1;
		if (b->depth >= POLICY_MAX_DEPTH) {
			snprintf(msg, sizeof msg, "nested deeper than %d "
			    "levels", POLICY_MAX_DEPTH);
			return build_err(b, ev->start_mark, NULL, msg);
		}
		if (build_add(b, ev->start_mark, seq ? YN_SEQ : YN_MAP, NULL,
		    0, false, &n) == -1)
			return -1;
		n->flow = seq && ev->data.sequence_start.style ==
		    YAML_FLOW_SEQUENCE_STYLE;
		b->stack[b->depth++] = n;
		return 0;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0)
			b->stack[--b->depth]->end = ev->end_mark.index;
		return 0;
	}
	return 0;
}

/* Parse buf into a tree.  Returns the root (caller ynode_free()s) or NULL
 * + e.  The root of an empty stream / empty document is an error here. */
static struct ynode *
tree_build(const char *file, const char *buf, size_t len, struct errbuf *e)
{
	struct builder b;
	yaml_parser_t ps;
	yaml_event_t ev;
	int rc = 0;

	memset(&b, 0, sizeof b);
	b.file = file;
	/* Skip a UTF-8 byte order mark: the encoding is fixed to UTF-8 (no
	 * UTF-16 guessing), so libyaml would otherwise choke on it. */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	b.buf = (const unsigned char *)buf;
	b.len = len;
	b.e = e;
	if (!yaml_parser_initialize(&ps))
		util_fatal("libyaml: cannot initialise the parser");
	yaml_parser_set_input_string(&ps, b.buf, len);
	yaml_parser_set_encoding(&ps, YAML_UTF8_ENCODING);
	while (rc == 0) {
		if (!yaml_parser_parse(&ps, &ev)) {
			rc = build_yaml_err(&b, &ps);
			break;
		}
		rc = build_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&ps);
	if (rc == -1) {
		ynode_free(b.root);
		return NULL;
	}
	if (b.root == NULL || ynode_is_null(b.root)) {
		size_t l = b.root ? b.root->line : 1, c = b.root ? b.root->col : 1;

		ynode_free(b.root);
		perr(e, file, l, c, "", "empty document: a policy is a mapping "
		    "of keys (see docs/policy.md)");
		return NULL;
	}
	return b.root;
}

/* Byte offset in buf of libyaml's character index: libyaml counts
 * characters, so walk UTF-8 when the text has multi-byte characters.  It
 * counts none for the UTF-8 byte order mark tree_build() skips: start
 * after it. */
static size_t
tree_byte(const char *buf, size_t len, size_t index)
{
	size_t b = 0, chars = 0;

	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		b = 3;

	while (b < len && chars < index) {
		unsigned char c = (unsigned char)buf[b];

		b += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		chars++;
	}
	return b > len ? len : b;
}

/* Scalar n of buf as a span: its byte range and its text (cut). */
static void
tree_span(const char *buf, size_t len, const struct ynode *n,
    struct policy_span *s)
{
	s->start = tree_byte(buf, len, n->start);
	s->end = tree_byte(buf, len, n->end);
	snprintf(s->text, sizeof s->text, "%.*s", (int)n->len, n->str);
}

/* Where top-level key is in buf (tree_build's limits and errors): the
 * first matching key of a mapping document, its value a scalar or a
 * sequence of scalars.  0, -1 + e. */
int
policy_find_key(const char *file, const char *buf, size_t len,
    const char *key, struct policy_keyval *kv, struct errbuf *e)
{
	struct ynode *root;
	size_t i, k;

	memset(kv, 0, sizeof *kv);
	root = tree_build(file, buf, len, e);
	if (root == NULL)
		return -1;
	for (i = 0; root->kind == YN_MAP && i + 1 < root->nkids; i += 2) {
		const struct ynode *kn = root->kids[i], *v = root->kids[i + 1];

		if (strcmp(kn->str, key) != 0)
			continue;
		kv->found = true;
		kv->key_end = tree_byte(buf, len, kn->end);
		if (v->kind == YN_SCALAR) {
			kv->has_value = true;
			tree_span(buf, len, v, &kv->value);
		} else if (v->kind == YN_SEQ) {
			kv->is_seq = true;
			kv->flow = v->flow;
			for (k = 0; k < v->nkids && kv->nitems <
			    sizeof kv->items / sizeof kv->items[0]; k++)
				if (v->kids[k]->kind == YN_SCALAR)
					tree_span(buf, len, v->kids[k],
					    &kv->items[kv->nitems++]);
		}
		break;
	}
	ynode_free(root);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Step 2: tree -> struct policy through key descriptor tables         */
/* ------------------------------------------------------------------ */

struct bindctx {
	const char *file;
	struct errbuf *e;
	char path[PATH_MAX_LEN];
};

struct keydesc;
/* Bind value v (already of kind k->kind, not null) into p.  -1 + e. */
typedef int (*bind_fn)(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);

enum str_class {
	STR_ID,      /* [a-z0-9-]{1,max} */
	STR_NAME,    /* [A-Za-z0-9._-]{1,max} */
	STR_MODEL,   /* [A-Za-z0-9._:/@+-]{1,max} */
	STR_TEXT,    /* any UTF-8 without control characters except \n \t */
	STR_URL,     /* http:// or https:// then visible ASCII */
	STR_ENV,     /* an environment variable name [A-Z_][A-Z0-9_]* */
	STR_KEYENV,  /* STR_ENV, and not one ares reads for another service */
	STR_LEVER,   /* an id, or external:/abs/path ([A-Za-z0-9._/-], no "..") */
	STR_PATH,    /* a file path: UTF-8 without any control character */
};

struct keydesc {
	const char *key;
	enum ynode_kind kind;     /* node kind the value must have */
	const char *what;         /* "an integer": for type errors */
	bind_fn bind;
	bool required;
	bool nullable;            /* null leaves the default in place */
	size_t off;               /* offsetof the field in struct policy */
	size_t count_off;         /* lists: offsetof the count */
	size_t cap;               /* lists: array capacity */
	long long min, max;       /* ints: range; lists: min items (min) */
	size_t maxlen;            /* strings and list ids: max bytes */
	enum str_class cls;       /* strings and list ids */
	bool u64;                 /* ints: uint64_t field, else int */
	const struct keydesc *sub;  /* maps: NULL-key-terminated table */
};

static int bind_map(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_int(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_str(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_ids(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_variant(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_variant_seed(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_agent_kind(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_agent_str(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);
static int bind_agent_command(const struct keydesc *k,
    const struct ynode *v, struct policy *p, struct bindctx *c);
static int bind_agent_env(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c);

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD_NELEM(f) NELEM(((struct policy *)0)->f)

#define K_INT(k, f, lo, hi) { .key = (k), .kind = YN_SCALAR, \
	.what = "an integer", .bind = bind_int, \
	.off = offsetof(struct policy, f), .min = (lo), .max = (hi) }
#define K_U64(k, f, lo, hi) { .key = (k), .kind = YN_SCALAR, \
	.what = "an integer", .bind = bind_int, .u64 = true, \
	.off = offsetof(struct policy, f), .min = (lo), .max = (hi) }
#define K_STR(k, f, c, n, req, nul) { .key = (k), .kind = YN_SCALAR, \
	.what = "a string", .bind = bind_str, .required = (req), \
	.nullable = (nul), .off = offsetof(struct policy, f), .cls = (c), \
	.maxlen = (n) }
#define K_IDS(k, f, cnt, lo, n, req) { .key = (k), .kind = YN_SEQ, \
	.what = "a sequence", .bind = bind_ids, .required = (req), \
	.off = offsetof(struct policy, f), \
	.count_off = offsetof(struct policy, cnt), .cap = FIELD_NELEM(f), \
	.min = (lo), .cls = STR_ID, .maxlen = (n) }
#define K_LEVERS(k, f, cnt, lo, n, req) { .key = (k), .kind = YN_SEQ, \
	.what = "a sequence", .bind = bind_ids, .required = (req), \
	.off = offsetof(struct policy, f), \
	.count_off = offsetof(struct policy, cnt), .cap = FIELD_NELEM(f), \
	.min = (lo), .cls = STR_LEVER, .maxlen = (n) }
#define K_MAP(k, t, nul) { .key = (k), .kind = YN_MAP, .what = "a mapping", \
	.bind = bind_map, .nullable = (nul), .sub = (t) }

static const struct keydesc limits_keys[] = {
	K_INT("steps", max_steps, 1, 1000),
	K_INT("seconds", max_seconds, 1, 3600),
	{ .key = NULL },
};

static const struct keydesc model_keys[] = {
	K_STR("url", model_url, STR_URL, 2048, false, true),
	K_STR("key_env", model_key_env, STR_KEYENV, 128, false, true),
	K_STR("name", model_name, STR_MODEL, 63, false, false),
	/* a real endpoint's call from the host (core/relay.c) */
	K_STR("ca_file", model_ca_file, STR_PATH, 4096, false, true),
	K_INT("connect_timeout_ms", model_connect_timeout_ms, 100, 60000),
	K_INT("timeout_s", model_timeout_s, 1, 600),
	K_INT("retries", model_retries, 0, 10),
	K_INT("context_budget", model_context_budget, 4096, 1048576),
	{ .key = NULL },
};

/* A string key of kind image: STR_PATH's bytes, then its syntax
 * (agent_image_check, core/agent_image.c) with its own message. */
#define K_AGENT(k, f, n) { .key = (k), .kind = YN_SCALAR, \
	.what = "a string", .bind = bind_agent_str, \
	.off = offsetof(struct policy, f), .cls = STR_PATH, .maxlen = (n) }

/* agent: the kind of agent the lab runs (docs/agents.md).  The script is
 * resolved and read after binding (check_agent); the image keys are
 * checked here for syntax only (the engine is asked at lab up). */
static const struct keydesc agent_keys[] = {
	{ .key = "kind", .kind = YN_SCALAR, .what = "a string",
	  .bind = bind_agent_kind, .cls = STR_ID, .maxlen = 32 },
	K_STR("script", agent_script, STR_PATH, POLICY_AGENT_PATH_MAX, false,
	    false),
	K_AGENT("image", agent_image, AGENT_IMAGE_REF_MAX),
	{ .key = "command", .kind = YN_SEQ, .what = "a sequence",
	  .bind = bind_agent_command, .cls = STR_PATH,
	  .maxlen = AGENT_IMAGE_ARG_MAX, .cap = POLICY_AGENT_ARGV_MAX },
	{ .key = "env", .kind = YN_MAP, .what = "a mapping",
	  .bind = bind_agent_env, .cls = STR_PATH,
	  .maxlen = AGENT_IMAGE_ARG_MAX, .cap = POLICY_AGENT_ENV_MAX },
	K_AGENT("user", agent_user, 32),
	K_AGENT("workdir", agent_workdir, AGENT_IMAGE_PATH_MAX),
	K_AGENT("home", agent_home, AGENT_IMAGE_PATH_MAX),
	{ .key = NULL },
};

/* imported: where ares policy import read the policy from
 * (docs/import.md); checked by check_imported. */
static const struct keydesc imported_keys[] = {
	K_STR("compose", import_compose, STR_PATH, 4096, false, false),
	K_STR("service", import_service, STR_NAME, 128, false, false),
	K_STR("container", import_container, STR_NAME, 128, false, false),
	{ .key = NULL },
};

static const struct keydesc top_keys[] = {
	K_STR("name", name, STR_NAME, 64, true, false),
	K_STR("description", description, STR_TEXT, 1024, false, false),
	K_U64("seed", seed, 0, INT64_MAX),
	K_MAP("limits", limits_keys, false),
	K_INT("observe_ms", observe_ms, 0, 60000),
	{ .key = "variant", .kind = YN_SCALAR, .what = "a string",
	  .bind = bind_variant, .off = offsetof(struct policy, variant),
	  .cls = STR_ID, .maxlen = 32 },
	K_IDS("bait", bait, nbait, 1, 48, true),
	K_LEVERS("levers", levers, nlevers, 1, 159, true),
	K_IDS("flaws", flaws, nflaws, 0, 48, false),
	K_MAP("model", model_keys, true),
	K_MAP("agent", agent_keys, true),
	K_STR("runtime", runtime, STR_NAME, 64, false, true),
	K_MAP("imported", imported_keys, true),
	{ .key = "variant_seed", .kind = YN_SCALAR, .what = "an integer",
	  .bind = bind_variant_seed, .u64 = true,
	  .off = offsetof(struct policy, variant_seed), .min = 0,
	  .max = INT64_MAX },
	{ .key = NULL },
};

/* Error at node n with the binder's current key path. */
#define BERR(c, n, ...) \
	perr((c)->e, (c)->file, (n)->line, (n)->col, (c)->path, __VA_ARGS__)

/* Check s (len bytes, NUL-free) against a string class.  Returns NULL when
 * fine, else a static description of what is allowed. */
static const char *
str_check(enum str_class cls, const char *s, size_t len, size_t maxlen)
{
	static const char *const need[] = {
		[STR_ID] = "an id of a-z, 0-9 and '-'",
		[STR_NAME] = "a name of A-Z, a-z, 0-9, '.', '_' and '-'",
		[STR_MODEL] = "a model name of A-Z, a-z, 0-9 and ._:/@+-",
		[STR_TEXT] = "text without control characters",
		[STR_URL] = "an http:// or https:// URL without spaces",
		[STR_ENV] = "an environment variable name of A-Z, 0-9 and '_' "
		    "(not starting with a digit)",
		[STR_KEYENV] = "an environment variable name of A-Z, 0-9 and "
		    "'_' (not starting with a digit)",
		[STR_LEVER] = "a lever id of a-z, 0-9 and '-' (at most 31 "
		    "bytes) or external:/absolute/path (A-Z, a-z, 0-9, ._/-, "
		    "no '..')",
		[STR_PATH] = "a file path without control characters",
	};
	const char *allowed = NULL;
	size_t i;

	if (len > maxlen || (len == 0 && cls != STR_TEXT))
		return need[cls];
	switch (cls) {
	case STR_LEVER:
		if (len > 9 && strncmp(s, "external:", 9) == 0) {
			if (s[9] != '/' || memmem(s, len, "..", 2) != NULL)
				return need[cls];
			allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "abcdefghijklmnopqrstuvwxyz0123456789._/-";
			s += 9;
			len -= 9;
			break;
		}
		if (len > 31)
			return need[cls];
		/* FALLTHROUGH */
	case STR_ID:
		allowed = "abcdefghijklmnopqrstuvwxyz0123456789-";
		break;
	case STR_NAME:
		allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789._-";
		break;
	case STR_MODEL:
		allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789._:/@+-";
		break;
	case STR_KEYENV: {
		/* The model key goes to model.url, which the policy names:
		 * never a token ares holds for GitHub, Slack or the CI. */
		static const char *const theirs[] = { "GITHUB_TOKEN",
		    "GH_TOKEN", "GH_ENTERPRISE_TOKEN",
		    "GITHUB_ENTERPRISE_TOKEN", "SLACK_BOT_TOKEN",
		    "ARES_SLACK_WEBHOOK", "ARES_SLACK_API", "ARES_GITHUB_API",
		    "ARES_KEY_DIR", "HOME", "PATH", NULL };
		static const char theirs_msg[] = "a variable other than the "
		    "ones ares reads for another service (GITHUB_TOKEN, "
		    "GH_TOKEN, SLACK_BOT_TOKEN, ARES_SLACK_WEBHOOK, ACTIONS_*, "
		    "...: the key is sent to model.url)";

		for (i = 0; theirs[i] != NULL; i++)
			if (len == strlen(theirs[i]) &&
			    memcmp(s, theirs[i], len) == 0)
				return theirs_msg;
		if (len >= 8 && memcmp(s, "ACTIONS_", 8) == 0)
			return theirs_msg;
	}
		/* FALLTHROUGH */
	case STR_ENV:
		if (s[0] >= '0' && s[0] <= '9')
			return need[cls];
		allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
		break;
	case STR_TEXT:
	case STR_PATH:
		for (i = 0; i < len; i++) {
			unsigned char ch = (unsigned char)s[i];

			if ((ch < 0x20 && (cls == STR_PATH ||
			    (ch != '\n' && ch != '\t'))) || ch == 0x7f)
				return need[cls];
			/* C1 controls U+0080..U+009F are C2 80..C2 9F. */
			if (ch == 0xC2 && i + 1 < len &&
			    (unsigned char)s[i + 1] < 0xA0)
				return need[cls];
		}
		return NULL;
	case STR_URL: {
		size_t skip;

		if (strncmp(s, "http://", 7) == 0)
			skip = 7;
		else if (strncmp(s, "https://", 8) == 0)
			skip = 8;
		else
			return need[cls];
		if (len == skip || s[skip] == '/')
			return need[cls];
		for (i = 0; i < len; i++)
			if ((unsigned char)s[i] <= 0x20 ||
			    (unsigned char)s[i] >= 0x7f)
				return need[cls];
		return NULL;
	}
	}
	for (i = 0; i < len; i++)
		if (strchr(allowed, s[i]) == NULL)
			return need[cls];
	return NULL;
}

/* Integer: plain scalar matching -?[0-9]+ (no leading zeros, no '+', no
 * hex/octal/underscores), parsed with strtoll and checked against
 * [k->min, k->max]. */
static int
bind_int(const struct keydesc *k, const struct ynode *v, struct policy *p,
    struct bindctx *c)
{
	char t[SHOW_MAX + 4];
	const char *s = v->str, *d = s[0] == '-' ? s + 1 : s;
	char *end;
	long long val;
	size_t i;

	if (!v->plain)
		return BERR(c, v, "expected an integer, got a quoted or tagged string");
	if (*d == '\0')
		return BERR(c, v, "expected an integer, got \"%s\"",
		    show(s, v->len, t));
	for (i = 0; d[i] != '\0'; i++)
		if (d[i] < '0' || d[i] > '9')
			return BERR(c, v, "expected an integer, got \"%s\"",
			    show(s, v->len, t));
	if ((size_t)(d - s) + i != v->len)
		return BERR(c, v, "expected an integer, got \"%s\"",
		    show(s, v->len, t));
	if (d[0] == '0' && d[1] != '\0')
		return BERR(c, v, "leading zeros are not allowed in \"%s\"",
		    show(s, v->len, t));
	errno = 0;
	val = strtoll(s, &end, 10);
	if (errno == ERANGE || *end != '\0' || val < k->min || val > k->max)
		return BERR(c, v, "%s is out of range (allowed %lld..%lld)",
		    show(s, v->len, t), k->min, k->max);
	if (k->u64)
		*(uint64_t *)(void *)((char *)p + k->off) = (uint64_t)val;
	else
		*(int *)(void *)((char *)p + k->off) = (int)val;
	return 0;
}

/* Check one string scalar for NUL bytes and its class.  -1 + e. */
static int
check_scalar_str(const struct keydesc *k, const struct ynode *v,
    struct bindctx *c)
{
	char t[SHOW_MAX + 4];
	const char *need;

	if (strlen(v->str) != v->len)
		return BERR(c, v, "contains a NUL byte");
	need = str_check(k->cls, v->str, v->len, k->maxlen);
	if (need != NULL)
		return BERR(c, v, "expected %s, at most %zu bytes; got \"%s\"",
		    need, k->maxlen, show(v->str, v->len, t));
	return 0;
}

/* String: replaces the default (the policy owns the copy). */
static int
bind_str(const struct keydesc *k, const struct ynode *v, struct policy *p,
    struct bindctx *c)
{
	char **field = (char **)(void *)((char *)p + k->off);

	if (check_scalar_str(k, v, c) == -1)
		return -1;
	free(*field);
	*field = xstrndup(v->str, v->len);
	return 0;
}

/* variant: an id (a fixed variant or "generated"), or a variant file
 * (a name ending in .yaml or .yml: a path, resolved by
 * check_catalogues). */
static int
bind_variant(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c)
{
	struct keydesc kf = *k;

	if ((v->len > 5 && memcmp(v->str + v->len - 5, ".yaml", 5) == 0) ||
	    (v->len > 4 && memcmp(v->str + v->len - 4, ".yml", 4) == 0)) {
		kf.cls = STR_PATH;
		kf.maxlen = 4096;
	}
	return bind_str(&kf, v, p, c);
}

/* variant_seed: the generated dressing's seed (else the run's). */
static int
bind_variant_seed(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c)
{
	if (bind_int(k, v, p, c) == -1)
		return -1;
	p->variant_seed_set = true;
	return 0;
}

/* The agent kinds a policy may name, indexed by enum policy_agent_kind. */
static const char *const agent_kind_names[] = {
	[POLICY_AGENT_POYO] = "poyo",
	[POLICY_AGENT_SCRIPT] = "script",
	[POLICY_AGENT_IMAGE] = "image",
};

/* agent.kind: one of agent_kind_names. */
static int
bind_agent_kind(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c)
{
	char t[SHOW_MAX + 4];
	size_t i;

	if (check_scalar_str(k, v, c) == -1)
		return -1;
	for (i = 0; i < NELEM(agent_kind_names); i++)
		if (strcmp(v->str, agent_kind_names[i]) == 0) {
			p->agent_kind = (enum policy_agent_kind)i;
			return 0;
		}
	return BERR(c, v, "unknown agent kind '%s' (known: poyo, script, "
	    "image)", show(v->str, v->len, t));
}

/* agent.image, .user, .workdir, .home: bytes without control characters
 * (k->maxlen), then agent_image_check() for the key's syntax.  A bare
 * uid is bound as uid:uid: given only a uid, the engine takes the gid
 * from the image's /etc/passwd (0 when the uid is not there) and the
 * supplementary groups from its /etc/group; with both it sets exactly
 * that gid and no other group.  -1 + e. */
static int
bind_agent_str(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c)
{
	char **field = (char **)(void *)((char *)p + k->off);
	char t[SHOW_MAX + 4];
	const char *why;

	if (check_scalar_str(k, v, c) == -1)
		return -1;
	why = agent_image_check(k->key, v->str);
	if (why != NULL)
		return BERR(c, v, "\"%s\": %s", show(v->str, v->len, t), why);
	free(*field);
	if (strcmp(k->key, "user") == 0 && strchr(v->str, ':') == NULL)
		*field = xasprintf("%s:%s", v->str, v->str);
	else
		*field = xstrndup(v->str, v->len);
	return 0;
}

/* An item of agent.command or a value of agent.env: no NUL, no control
 * character, at most k->maxlen bytes (empty allowed).  -1 + e. */
static int
check_agent_text(const struct keydesc *k, const struct ynode *v,
    struct bindctx *c)
{
	char t[SHOW_MAX + 4];

	if (strlen(v->str) != v->len)
		return BERR(c, v, "contains a NUL byte");
	if (v->len > k->maxlen || (v->len > 0 && str_check(STR_PATH, v->str,
	    v->len, k->maxlen) != NULL))
		return BERR(c, v, "expected a string without control "
		    "characters, at most %zu bytes; got \"%s\"", k->maxlen,
		    show(v->str, v->len, t));
	return 0;
}

/* A sequence of at most k->cap items: -1 + e naming the first one too
 * many (its index appended to c->path). */
static int
check_seq_cap(const struct keydesc *k, const struct ynode *v,
    struct bindctx *c)
{
	char idx[32];

	if (v->nkids <= k->cap)
		return 0;
	snprintf(idx, sizeof idx, "[%zu]", k->cap);
	path_append(c->path, idx);
	return BERR(c, v->kids[k->cap], "at most %zu items are allowed",
	    k->cap);
}

/* agent.command: 1..k->cap strings (no NUL, no control character, each
 * at most k->maxlen bytes, AGENT_IMAGE_ARGV_BYTES in all); "{task}" is
 * kept as written (the lab expands it).  -1 + e. */
static int
bind_agent_command(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c)
{
	size_t plen = strlen(c->path), i, total = 0;
	char idx[32];

	if (v->nkids == 0)
		return BERR(c, v, "needs at least 1 item (the program)");
	if (check_seq_cap(k, v, c) == -1)
		return -1;
	for (i = 0; i < v->nkids; i++) {
		const struct ynode *it = v->kids[i];

		snprintf(idx, sizeof idx, "[%zu]", i);
		path_append(c->path, idx);
		if (it->kind != YN_SCALAR || ynode_is_null(it))
			return BERR(c, it, "expected a string, got %s",
			    ynode_what(it));
		if (check_agent_text(k, it, c) == -1)
			return -1;
		total += it->len + 1;
		if (total > AGENT_IMAGE_ARGV_BYTES)
			return BERR(c, it, "the command is longer than %d "
			    "bytes in all", AGENT_IMAGE_ARGV_BYTES);
		p->agent_command[i] = xstrndup(it->str, it->len);
		p->agent_ncommand = i + 1;
		c->path[plen] = '\0';
	}
	return 0;
}

/* agent.env: at most k->cap NAME: value pairs; NAME an environment
 * variable name that ares does not set itself (agent_image_env_owned),
 * value a string (an integer or a word as written) without control
 * characters, at most k->maxlen bytes.  Stored as "NAME=value".  -1 + e. */
static int
bind_agent_env(const struct keydesc *k, const struct ynode *v,
    struct policy *p, struct bindctx *c)
{
	static const struct keydesc name = { .key = "env", .cls = STR_ENV,
	    .maxlen = 128 };
	size_t plen = strlen(c->path), i;
	char t[SHOW_MAX + 4];

	if (v->nkids / 2 > k->cap)
		return BERR(c, v->kids[2 * k->cap], "at most %zu variables "
		    "are allowed", k->cap);
	for (i = 0; i + 1 < v->nkids; i += 2) {
		const struct ynode *kn = v->kids[i], *val = v->kids[i + 1];

		path_append(c->path, show(kn->str, kn->len, t));
		if (check_scalar_str(&name, kn, c) == -1)
			return -1;
		if (agent_image_env_owned(kn->str))
			return BERR(c, kn, "ares sets this variable itself "
			    "(%s)", agent_image_env_owned_list());
		if (val->kind != YN_SCALAR || ynode_is_null(val))
			return BERR(c, val, "expected a string, got %s",
			    ynode_what(val));
		if (check_agent_text(k, val, c) == -1)
			return -1;
		p->agent_env[p->agent_nenv++] = xasprintf("%s=%.*s", kn->str,
		    (int)val->len, val->str);
		c->path[plen] = '\0';
	}
	return 0;
}

/* List of ids: k->min..k->cap items, each an id of k->maxlen bytes, no
 * duplicates.  Items are stored as they are checked, so on error the
 * caller's policy_free() releases them. */
static int
bind_ids(const struct keydesc *k, const struct ynode *v, struct policy *p,
    struct bindctx *c)
{
	char **arr = (char **)(void *)((char *)p + k->off);
	size_t *count = (size_t *)(void *)((char *)p + k->count_off);
	size_t plen = strlen(c->path), i, j;
	char idx[32], t[SHOW_MAX + 4];

	if (v->nkids < (size_t)k->min)
		return BERR(c, v, "needs at least %lld item%s", k->min,
		    k->min == 1 ? "" : "s");
	if (check_seq_cap(k, v, c) == -1)
		return -1;
	for (i = 0; i < v->nkids; i++) {
		const struct ynode *it = v->kids[i];

		snprintf(idx, sizeof idx, "[%zu]", i);
		path_append(c->path, idx);
		if (it->kind != YN_SCALAR || ynode_is_null(it))
			return BERR(c, it, "expected an id, got %s",
			    ynode_what(it));
		if (check_scalar_str(k, it, c) == -1)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(arr[j], it->str) == 0)
				return BERR(c, it, "duplicate id \"%s\" (first "
				    "at %zu:%zu)", show(it->str, it->len, t),
				    v->kids[j]->line, v->kids[j]->col);
		arr[i] = xstrndup(it->str, it->len);
		*count = i + 1;
		c->path[plen] = '\0';
	}
	return 0;
}

/* The keys of a table as "a, b, c" (for unknown-key messages). */
static void
keys_list(const struct keydesc *t, char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (; t->key != NULL && used < outlen; t++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%s",
		    used ? ", " : "", t->key);
}

/* Mapping: every key must be in k->sub; required keys must be present. */
static int
bind_map(const struct keydesc *k, const struct ynode *v, struct policy *p,
    struct bindctx *c)
{
	const struct keydesc *d;
	size_t plen = strlen(c->path), i;
	char t[SHOW_MAX + 4], allowed[512];

	for (i = 0; i + 1 < v->nkids; i += 2) {
		const struct ynode *key = v->kids[i], *val = v->kids[i + 1];

		for (d = k->sub; d->key != NULL; d++)
			if (strlen(d->key) == key->len &&
			    memcmp(d->key, key->str, key->len) == 0)
				break;
		path_append(c->path, show(key->str, key->len, t));
		if (d->key == NULL) {
			keys_list(k->sub, allowed, sizeof allowed);
			return BERR(c, key, "unknown key; allowed here: %s",
			    allowed);
		}
		if (ynode_is_null(val) && d->nullable) {
			c->path[plen] = '\0';
			continue;
		}
		if (val->kind != d->kind || ynode_is_null(val))
			return BERR(c, val, "expected %s, got %s", d->what,
			    ynode_what(val));
		if (d->bind(d, val, p, c) == -1)
			return -1;
		c->path[plen] = '\0';
	}
	for (d = k->sub; d->key != NULL; d++) {
		if (!d->required)
			continue;
		for (i = 0; i < v->nkids; i += 2)
			if (strlen(d->key) == v->kids[i]->len &&
			    memcmp(d->key, v->kids[i]->str,
			    v->kids[i]->len) == 0)
				break;
		if (i >= v->nkids) {
			path_append(c->path, d->key);
			return BERR(c, v, "required key is missing");
		}
	}
	return 0;
}

static const struct keydesc top_desc = K_MAP("", top_keys, false);

/* ------------------------------------------------------------------ */
/* Step 3: ids against the catalogues                                  */
/* ------------------------------------------------------------------ */

/* The value node of key in mapping root (NULL if absent). */
static const struct ynode *
top_value(const struct ynode *root, const char *key)
{
	size_t i;

	for (i = 0; i + 1 < root->nkids; i += 2)
		if (root->kids[i]->len == strlen(key) &&
		    memcmp(root->kids[i]->str, key, root->kids[i]->len) == 0)
			return root->kids[i + 1];
	return NULL;
}

static const char *policy_bait_kind_names(void);

/*
 * variant: generated or variant: FILE.yaml.  The file is resolved against
 * the policy's folder (p->variant_file), loaded and validated now, so its
 * errors (its own file:line:col) show at load time; the dressing is made
 * with variant_seed (else the policy's seed) to check the bait: kind names
 * always, ids only of that dressing (a generated one without
 * variant_seed: kind names only, its ids depend on the run's seed).
 * 0 when fine, -1 + e.
 */
static int
check_variant_dressing(const struct ynode *root, struct policy *p,
    struct bindctx *c)
{
	uint64_t seed = p->variant_seed_set ? p->variant_seed : p->seed;
	struct variant *v;
	const struct ynode *n;
	char t[SHOW_MAX + 4], known[512];
	bool ids = true;
	size_t i;

	if (strcmp(p->variant, "generated") == 0) {
		v = variant_generate(seed);
		ids = p->variant_seed_set;
	} else {
		const char *slash = strrchr(c->file, '/');

		free(p->variant_file);
		p->variant_file = p->variant[0] == '/' || slash == NULL ?
		    xstrdup(p->variant) : xasprintf("%.*s/%s",
		    (int)(slash - c->file), c->file, p->variant);
		v = variant_load(p->variant_file, seed, c->e);
		if (v == NULL)
			return -1;
	}
	n = top_value(root, "bait");
	for (i = 0; i < p->nbait; i++) {
		if (variant_bait_kind_find(p->bait[i]) != -1 ||
		    (ids && variant_has_bait(v, p->bait[i])))
			continue;
		snprintf(c->path, sizeof c->path, "bait[%zu]", i);
		if (ids)
			BERR(c, n->kids[i], "unknown bait '%s' for variant "
			    "'%s' (known: %s; kinds: %s)", show(p->bait[i],
			    strlen(p->bait[i]), t), v->id, variant_bait_ids(v,
			    known, sizeof known), policy_bait_kind_names());
		else
			BERR(c, n->kids[i], "unknown bait kind '%s' (a "
			    "generated variant's bait is named by kind "
			    "unless variant_seed is set; kinds: %s)",
			    show(p->bait[i], strlen(p->bait[i]), t),
			    policy_bait_kind_names());
		variant_free(v);
		return -1;
	}
	variant_free(v);
	return 0;
}

/* "credential, instruction, ..." of every bait kind (static storage). */
static const char *
policy_bait_kind_names(void)
{
	static char buf[160];
	size_t used = 0;
	int k;

	if (buf[0] != '\0')
		return buf;
	for (k = 0; k < VARIANT_NBAIT_KINDS && used < sizeof buf; k++)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s",
		    k ? ", " : "", variant_bait_kinds[k]);
	return buf;
}

/*
 * The variant must exist, every flaw must be in the flaw catalogue and
 * every bait id must be one of the variant's bait.  Runs on a bound
 * policy, so the nodes are known to have the right shape.  -1 + e.
 */
static int
check_catalogues(const struct ynode *root, struct policy *p,
    struct bindctx *c)
{
	const struct variant *v = variant_find(p->variant);
	const struct ynode *n;
	char t[SHOW_MAX + 4], known[512];
	size_t i;
	/* generated, or a file (bind_variant let only a .yaml/.yml name
	 * through with characters other than an id's) */
	bool dressing = strcmp(p->variant, "generated") == 0 ||
	    p->variant[strspn(p->variant, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789-")] != '\0';

	if (dressing) {
		if (check_variant_dressing(root, p, c) == -1)
			return -1;
	} else if (p->variant_seed_set) {
		n = top_value(root, "variant_seed");
		snprintf(c->path, sizeof c->path, "variant_seed");
		return BERR(c, n != NULL ? n : root, "only with variant: "
		    "generated or a variant file");
	} else if (v == NULL) {
		n = top_value(root, "variant");
		snprintf(c->path, sizeof c->path, "variant");
		return BERR(c, n != NULL ? n : root, "unknown variant '%s' "
		    "(known: %s; or generated, or a FILE.yaml)",
		    show(p->variant, strlen(p->variant), t), variant_ids());
	}
	n = top_value(root, "flaws");
	for (i = 0; i < p->nflaws; i++) {
		if (flaw_find(p->flaws[i]) != NULL)
			continue;
		snprintf(c->path, sizeof c->path, "flaws[%zu]", i);
		return BERR(c, n->kids[i], "unknown flaw '%s' (known: %s)",
		    show(p->flaws[i], strlen(p->flaws[i]), t), flaw_ids());
	}
	n = top_value(root, "bait");
	for (i = 0; v != NULL && i < p->nbait; i++) {
		if (variant_has_bait(v, p->bait[i]) ||
		    variant_bait_kind_find(p->bait[i]) != -1)
			continue;
		snprintf(c->path, sizeof c->path, "bait[%zu]", i);
		return BERR(c, n->kids[i], "unknown bait '%s' for variant '%s' "
		    "(known: %s; kinds: %s)", show(p->bait[i], strlen(p->bait[i]),
		    t), v->id, variant_bait_ids(v, known, sizeof known),
		    policy_bait_kind_names());
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Step 4: agent.script                                                */
/* ------------------------------------------------------------------ */

/* Render a path for a message: its last SHOW_MAX bytes (the file name is
 * the informative end), terminal-safe, "..." in front when cut. */
static const char *
show_path(const char *s, char out[SHOW_MAX + 4])
{
	size_t len = strlen(s), skip = len > SHOW_MAX ? len - SHOW_MAX : 0;

	/* Start on a UTF-8 boundary. */
	while (skip < len && ((unsigned char)s[skip] & 0xC0) == 0x80)
		skip++;
	strcpy(out, skip > 0 ? "..." : "");
	util_sanitize(out + strlen(out), SHOW_MAX + 1, s + skip, len - skip,
	    false);
	return out;
}

/*
 * The absolute form of the script path given (relative paths are taken
 * from the directory of the policy file as named, file): the directory
 * part resolved with realpath(), the last component appended as it is
 * (it is opened with O_NOFOLLOW later, so it cannot be a symlink).
 * Returns a malloc'd path or NULL with *why = errno.
 */
static char *
agent_script_abs(const char *file, const char *given, int *why)
{
	const char *slash;
	char *full, *dir, *canon, *abs, *last;

	if (given[0] == '/') {
		full = xstrdup(given);
	} else {
		slash = strrchr(file, '/');
		if (slash == NULL)
			full = xasprintf("./%s", given);
		else
			full = xasprintf("%.*s/%s", (int)(slash - file + 1),
			    file, given);
	}
	last = strrchr(full, '/');      /* full always holds a '/' */
	if (last[1] == '\0' || strcmp(last + 1, ".") == 0 ||
	    strcmp(last + 1, "..") == 0) {
		free(full);
		*why = EISDIR;
		return NULL;
	}
	dir = last == full ? xstrdup("/") : xstrndup(full, (size_t)(last -
	    full));
	canon = realpath(dir, NULL);
	*why = errno;
	free(dir);
	if (canon == NULL) {
		free(full);
		return NULL;
	}
	abs = xasprintf("%s/%s", strcmp(canon, "/") == 0 ? "" : canon,
	    last + 1);
	free(canon);
	free(full);
	return abs;
}

/*
 * Resolve, check and read agent.script (node v holds the path as written,
 * already bound into p->agent_script).  The file must be a regular file,
 * not a symlink (O_NOFOLLOW; directories on the way are resolved), of
 * 1..POLICY_AGENT_SCRIPT_MAX bytes, and readable; the resolved path must
 * not contain ':' (Docker's bind syntax).  On success p->agent_script is
 * the absolute path and the text and its hash are recorded.  -1 + e.
 */
static int
agent_script_load(const struct ynode *v, struct policy *p,
    struct bindctx *c)
{
	char g[SHOW_MAX + 4], r[SHOW_MAX + 4];
	unsigned char h[crypto_generichash_BYTES];
	struct stat st;
	char *abs, *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int why = 0, fd;

	snprintf(c->path, sizeof c->path, "agent.script");
	show_path(p->agent_script, g);
	abs = agent_script_abs(c->file, p->agent_script, &why);
	if (abs == NULL)
		return BERR(c, v, "%s: %s", g, why == EISDIR ?
		    "names a directory, not a script" : strerror(why));
	show_path(abs, r);
	if (strlen(abs) >= PATH_MAX) {
		BERR(c, v, "%s: the resolved path is longer than %d bytes", g,
		    PATH_MAX - 1);
		goto fail;
	}
	if (strchr(abs, ':') != NULL) {
		BERR(c, v, "%s (resolved: %s): the path contains ':', which "
		    "Docker bind mounts cannot carry", g, r);
		goto fail;
	}
	fd = open(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY);
	if (fd == -1) {
		why = errno;
		BERR(c, v, "%s (resolved: %s): %s", g, r, why == ELOOP ?
		    "is a symbolic link; name the file it points to" :
		    strerror(why));
		goto fail;
	}
	if (fstat(fd, &st) == -1) {
		BERR(c, v, "%s (resolved: %s): %s", g, r, strerror(errno));
		goto fail_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		BERR(c, v, "%s (resolved: %s): %s", g, r, S_ISDIR(st.st_mode) ?
		    "is a directory, not a script" : "not a regular file");
		goto fail_fd;
	}
	if (st.st_size > POLICY_AGENT_SCRIPT_MAX) {
		BERR(c, v, "%s (resolved: %s): the script is %lld bytes; the "
		    "limit is %d", g, r, (long long)st.st_size,
		    POLICY_AGENT_SCRIPT_MAX);
		goto fail_fd;
	}
	/* Read at most one byte more than the limit: the file may have
	 * grown since fstat. */
	buf = xmalloc(POLICY_AGENT_SCRIPT_MAX + 2);
	while (len <= POLICY_AGENT_SCRIPT_MAX) {
		n = read(fd, buf + len, POLICY_AGENT_SCRIPT_MAX + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			BERR(c, v, "%s (resolved: %s): %s", g, r,
			    strerror(errno));
			goto fail_fd;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > POLICY_AGENT_SCRIPT_MAX) {
		BERR(c, v, "%s (resolved: %s): the script is larger than %d "
		    "bytes", g, r, POLICY_AGENT_SCRIPT_MAX);
		goto fail_fd;
	}
	if (len == 0) {
		BERR(c, v, "%s (resolved: %s): the script is empty", g, r);
		goto fail_fd;
	}
	close(fd);
	buf[len] = '\0';
	crypto_generichash(h, sizeof h, (const unsigned char *)buf, len, NULL,
	    0);
	util_hex(h, sizeof h, p->agent_script_blake2b);
	free(p->agent_script);
	p->agent_script = abs;
	p->agent_script_text = xrealloc(buf, len + 1);
	p->agent_script_len = len;
	return 0;
fail_fd:
	close(fd);
fail:
	free(buf);
	free(abs);
	return -1;
}

/* The keys only kind image takes, besides image itself. */
static const char *const agent_image_only[] = {
	"command", "env", "user", "workdir", "home", NULL,
};

/*
 * agent kind image: an image means kind image (not with a script, nor
 * with another kind named); kind image needs an image; the other image
 * keys need kind image.  Sets p->agent_kind and the default home.
 * 0 (also when the policy names no image), -1 + e.
 */
static int
check_agent_image(const struct ynode *a, const struct ynode *kind,
    const struct ynode *script, struct policy *p, struct bindctx *c)
{
	const struct ynode *image = top_value(a, "image"), *n;
	size_t i;

	if (image == NULL) {
		if (p->agent_kind == POLICY_AGENT_IMAGE) {
			snprintf(c->path, sizeof c->path, "agent.image");
			return BERR(c, a, "required key is missing (kind image "
			    "runs a local image)");
		}
		for (i = 0; agent_image_only[i] != NULL; i++) {
			n = top_value(a, agent_image_only[i]);
			if (n == NULL)
				continue;
			snprintf(c->path, sizeof c->path, "agent.%s",
			    agent_image_only[i]);
			return BERR(c, n, "only kind image takes this key (kind "
			    "is %s)", agent_kind_names[p->agent_kind]);
		}
		return 0;
	}
	snprintf(c->path, sizeof c->path, "agent.image");
	if (script != NULL)
		return BERR(c, image, "agent.script and agent.image are two "
		    "kinds of agent: name one");
	if (kind != NULL && p->agent_kind != POLICY_AGENT_IMAGE)
		return BERR(c, image, "only kind image runs an image (kind is "
		    "%s)", agent_kind_names[p->agent_kind]);
	p->agent_kind = POLICY_AGENT_IMAGE;
	if (p->agent_home == NULL)
		p->agent_home = xstrdup(AGENT_IMAGE_HOME);
	return 0;
}

/*
 * agent: kind and script must agree (a script means kind script; kind
 * script needs a script), then the script is loaded.  Runs after the
 * catalogues, so a syntax or id error is always reported first.  -1 + e.
 */
static int
check_agent(const struct ynode *root, struct policy *p, struct bindctx *c)
{
	const struct ynode *a = top_value(root, "agent"), *kind, *script;

	if (a == NULL || a->kind != YN_MAP)
		return 0;               /* absent or null: Poyo */
	kind = top_value(a, "kind");
	script = top_value(a, "script");
	if (check_agent_image(a, kind, script, p, c) == -1)
		return -1;
	if (p->agent_kind == POLICY_AGENT_IMAGE)
		return 0;
	if (script == NULL) {
		if (p->agent_kind != POLICY_AGENT_SCRIPT)
			return 0;
		snprintf(c->path, sizeof c->path, "agent.script");
		return BERR(c, a, "required key is missing (kind script runs "
		    "a script file)");
	}
	if (kind != NULL && p->agent_kind != POLICY_AGENT_SCRIPT) {
		snprintf(c->path, sizeof c->path, "agent.script");
		return BERR(c, script, "only kind script runs a script (kind "
		    "is %s)", agent_kind_names[p->agent_kind]);
	}
	p->agent_kind = POLICY_AGENT_SCRIPT;
	return agent_script_load(script, p, c);
}

/*
 * imported: either compose (with its service) or container; compose is
 * resolved against the policy file's folder (the folders with realpath
 * when they exist: the file may have moved since).  -1 + e.
 */
static int
check_imported(const struct ynode *root, struct policy *p,
    struct bindctx *c)
{
	const struct ynode *im = top_value(root, "imported");
	char *abs;
	int why;

	if (im == NULL || im->kind != YN_MAP)
		return 0;
	snprintf(c->path, sizeof c->path, "imported");
	if ((p->import_compose != NULL) == (p->import_container != NULL))
		return BERR(c, im, "name either compose (with service) or "
		    "container");
	if (p->import_compose != NULL && p->import_service == NULL)
		return BERR(c, im, "compose needs its service");
	if (p->import_container != NULL && p->import_service != NULL)
		return BERR(c, im, "service goes with compose only");
	if (p->import_compose == NULL)
		return 0;
	abs = agent_script_abs(c->file, p->import_compose, &why);
	if (abs == NULL) {
		const char *slash = strrchr(c->file, '/');

		abs = p->import_compose[0] == '/' || slash == NULL ?
		    xstrdup(p->import_compose) : xasprintf("%.*s/%s",
		    (int)(slash - c->file), c->file, p->import_compose);
	}
	free(p->import_compose);
	p->import_compose = abs;
	return 0;
}

/* ------------------------------------------------------------------ */
/* API                                                                 */
/* ------------------------------------------------------------------ */

/* Parse and validate a policy from buf (len bytes, need not be
 * NUL-terminated); name labels errors and becomes p->path.  Returns the
 * policy (caller policy_free()s) or NULL + e (ERRBUF_INPUT). */
struct policy *
policy_parse(const char *buf, size_t len, const char *name, struct errbuf *e)
{
	struct bindctx c;
	struct ynode *root;
	struct policy *p;

	if (name == NULL)
		name = "<policy>";
	if (buf == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "%s: no policy text", name);
		return NULL;
	}
	if (len > POLICY_MAX_BYTES) {
		errbuf_set(e, ERRBUF_INPUT, "%s: policy is %zu bytes; the "
		    "limit is %d", name, len, POLICY_MAX_BYTES);
		return NULL;
	}
	root = tree_build(name, buf, len, e);
	if (root == NULL)
		return NULL;

	p = xcalloc(1, sizeof *p);
	p->path = xstrdup(name);
	p->description = xstrdup("");
	p->seed = 1;
	p->max_steps = 24;
	p->max_seconds = 90;
	p->observe_ms = 1500;
	p->variant = xstrdup("default");
	p->model_url = NULL;
	p->model_name = xstrdup("ares-offline-1");
	p->model_connect_timeout_ms = 5000;
	p->model_timeout_s = 120;
	p->model_retries = 3;
	p->model_context_budget = 262144;

	memset(&c, 0, sizeof c);
	c.file = name;
	c.e = e;
	if (root->kind != YN_MAP) {
		BERR(&c, root, "expected a mapping, got %s", ynode_what(root));
		goto fail;
	}
	if (bind_map(&top_desc, root, p, &c) == -1)
		goto fail;
	if (check_catalogues(root, p, &c) == -1)
		goto fail;
	if (check_agent(root, p, &c) == -1)
		goto fail;
	if (check_imported(root, p, &c) == -1)
		goto fail;
	ynode_free(root);
	return p;
fail:
	ynode_free(root);
	policy_free(p);
	return NULL;
}

/* Read path (a regular file of at most POLICY_MAX_BYTES, checked before
 * reading) and policy_parse() it.  NULL + e (ERRBUF_INPUT). */
struct policy *
policy_load(const char *path, struct errbuf *e)
{
	struct policy *p;
	size_t len;
	char *buf;

	if (path == NULL || path[0] == '\0') {
		errbuf_set(e, ERRBUF_INPUT, "policy: no file given");
		return NULL;
	}
	buf = util_read_input(path, "policy", POLICY_MAX_BYTES, &len, e);
	if (buf == NULL)
		return NULL;
	p = policy_parse(buf, len, path, e);
	free(buf);
	return p;
}

/* Free a policy and every string it owns.  NULL is fine. */
void
policy_free(struct policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	free(p->path);
	free(p->name);
	free(p->description);
	free(p->variant);
	free(p->variant_file);
	for (i = 0; i < p->nlevers; i++)
		free(p->levers[i]);
	for (i = 0; i < p->nbait; i++)
		free(p->bait[i]);
	for (i = 0; i < p->nflaws; i++)
		free(p->flaws[i]);
	free(p->model_url);
	free(p->model_key_env);
	free(p->model_name);
	free(p->agent_script);
	free(p->agent_script_text);
	free(p->model_ca_file);
	free(p->agent_image);
	for (i = 0; i < p->agent_ncommand; i++)
		free(p->agent_command[i]);
	for (i = 0; i < p->agent_nenv; i++)
		free(p->agent_env[i]);
	free(p->agent_user);
	free(p->agent_workdir);
	free(p->agent_home);
	free(p->runtime);
	free(p->import_compose);
	free(p->import_service);
	free(p->import_container);
	free(p);
}

/* "poyo", "script" or "image" ("?" for a value outside the enum). */
const char *
policy_agent_kind_name(enum policy_agent_kind k)
{
	return (size_t)k < NELEM(agent_kind_names) ? agent_kind_names[k] : "?";
}

/* Whether flaw is switched on (linear search). */
bool
policy_has_flaw(const struct policy *p, const char *flaw)
{
	size_t i;

	if (p == NULL || flaw == NULL)
		return false;
	for (i = 0; i < p->nflaws; i++)
		if (strcmp(p->flaws[i], flaw) == 0)
			return true;
	return false;
}

/* Whether bait is planted by the policy (linear search). */
bool
policy_has_bait(const struct policy *p, const char *bait)
{
	size_t i;

	if (p == NULL || bait == NULL)
		return false;
	for (i = 0; i < p->nbait; i++)
		if (strcmp(p->bait[i], bait) == 0)
			return true;
	return false;
}
