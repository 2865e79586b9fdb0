/*
 * compose.c - a bounded reader of Docker Compose files (libyaml), for
 * ares policy import (core/import.c, docs/import.md).
 *
 * libyaml's event parser builds a node tree (mapping / sequence / scalar,
 * each with its 1-based start line:col and end line).  Unlike the policy
 * loader, Compose files in the wild use anchors, aliases and merge keys
 * (`x-common: &c {...}`, `<<: *c`), so they are supported here, bounded:
 *
 *  - an alias is expanded into a deep copy of its anchor's node, and every
 *    copied node counts against COMPOSE_MAX_NODES like a written one: an
 *    alias bomb ("billion laughs") stops at the cap with the file:line:col
 *    of the alias that crossed it;
 *  - an anchor is known only once its node is complete, so an alias can
 *    never name the node it is inside (no cycles);
 *  - a merge key `<<` (plain, value a mapping or a sequence of mappings)
 *    adds the keys its mappings have that the mapping does not write
 *    itself; explicit keys win, earlier merge sources win over later ones.
 *
 * Input size, nesting depth, node count, scalar length and the number of
 * anchors are capped; non-scalar keys, duplicate keys and streams with
 * more or fewer than one document are rejected.  Every error is
 * "<file>:<line>:<col>: <key path>: <problem>" with ERRBUF_INPUT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "internal.h"

#define SHOW_MAX 64   /* untrusted text quoted in messages */

/* A plain untagged scalar that YAML reads as null. */
bool
compose_is_null(const struct cnode *n)
{
	return n == NULL || (n->kind == CN_SCALAR && n->plain &&
	    (n->len == 0 || strcmp(n->str, "~") == 0 ||
	    strcmp(n->str, "null") == 0 || strcmp(n->str, "Null") == 0 ||
	    strcmp(n->str, "NULL") == 0));
}

/* Free a node and everything below it.  NULL is fine. */
void
compose_free(struct cnode *n)
{
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		compose_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

/* The value of key in mapping m (NULL when absent or m is no mapping). */
const struct cnode *
compose_get(const struct cnode *m, const char *key)
{
	size_t i, len = strlen(key);

	if (m == NULL || m->kind != CN_MAP)
		return NULL;
	for (i = 0; i + 1 < m->nkids; i += 2)
		if (m->kids[i]->len == len &&
		    memcmp(m->kids[i]->str, key, len) == 0)
			return m->kids[i + 1];
	return NULL;
}

/* Render untrusted bytes for a message (terminal-safe, cut). */
static const char *
show(const char *s, size_t len, char out[SHOW_MAX + 4])
{
	size_t n = len > SHOW_MAX ? SHOW_MAX : len;

	util_sanitize(out, SHOW_MAX + 1, s, n, false);
	if (len > SHOW_MAX)
		strcat(out, "...");
	return out;
}

/* "<file>:<line>:<col>: <path>: <problem>" (ERRBUF_INPUT).  -1. */
int
compose_err(struct errbuf *e, const char *file, size_t line, size_t col,
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
/* libyaml events -> tree                                              */
/* ------------------------------------------------------------------ */

struct anchor {
	char *name;
	const struct cnode *node;   /* complete node owned by the tree */
};

struct cbuilder {
	const char *file;
	const unsigned char *buf;
	size_t len;
	struct errbuf *e;
	struct cnode *root;
	struct cnode *stack[COMPOSE_MAX_DEPTH];
	char *stack_anchor[COMPOSE_MAX_DEPTH];  /* anchor of an open node */
	size_t depth;
	size_t nodes;
	int docs;
	struct anchor anchors[COMPOSE_MAX_ANCHORS];
	size_t nanchors;
	struct cnode **dead;        /* "<<" pairs taken out of their maps */
	size_t ndead, capdead;
};

/* Append a path component (bounded; '.' between keys, none before [i]). */
static void
path_add(char *path, size_t cap, const char *comp)
{
	size_t used = strlen(path);

	if (used + 1 >= cap)
		return;
	snprintf(path + used, cap - used, "%s%s",
	    (used > 0 && comp[0] != '[') ? "." : "", comp);
}

/* The key path the builder is at (innermost open containers). */
static void
cbuild_path(const struct cbuilder *b, char *path, size_t cap)
{
	char comp[SHOW_MAX + 8];
	size_t i;

	path[0] = '\0';
	for (i = 0; i < b->depth; i++) {
		const struct cnode *f = b->stack[i];
		size_t next = f->nkids - (i + 1 < b->depth ? 1 : 0);

		if (f->kind == CN_MAP && next % 2 == 1) {
			const struct cnode *k = f->kids[next - 1];

			path_add(path, cap, show(k->str, k->len, comp));
		} else if (f->kind == CN_SEQ) {
			snprintf(comp, sizeof comp, "[%zu]", next);
			path_add(path, cap, comp);
		}
	}
}

/* Error at libyaml mark m with the builder's path.  -1. */
static int
cbuild_err(struct cbuilder *b, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
cbuild_err(struct cbuilder *b, yaml_mark_t m, const char *fmt, ...)
{
	char path[COMPOSE_PATH_MAX], problem[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(problem, sizeof problem, fmt, ap);
	va_end(ap);
	cbuild_path(b, path, sizeof path);
	return compose_err(b->e, b->file, m.line + 1, m.column + 1, path, "%s",
	    problem);
}

/* libyaml's own failure in our format. */
static int
cbuild_yaml_err(struct cbuilder *b, const yaml_parser_t *ps)
{
	const char *problem = ps->problem ? ps->problem : "unknown error";
	char path[COMPOSE_PATH_MAX];

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
				col++;
			}
		}
		return compose_err(b->e, b->file, line, col, "",
		    "bad input: %s", problem);
	}
	cbuild_path(b, path, sizeof path);
	return compose_err(b->e, b->file, ps->problem_mark.line + 1,
	    ps->problem_mark.column + 1, path, "syntax error: %s", problem);
}

/* The 1-based last line of a node that ends at libyaml mark m: a block
 * node's end mark is the start of the next token (column 0 of a later
 * line), so that line is not the node's. */
static size_t
end_line_of(yaml_mark_t m, size_t start_line)
{
	size_t l = m.column == 0 && m.line > 0 ? m.line : m.line + 1;

	return l < start_line ? start_line : l;
}

/* Count one more node against the cap.  -1 + e at mark m. */
static int
cbuild_count(struct cbuilder *b, yaml_mark_t m, size_t n)
{
	b->nodes += n;
	if (b->nodes > COMPOSE_MAX_NODES)
		return cbuild_err(b, m, "more than %d nodes (aliases count "
		    "as the nodes they expand to)", COMPOSE_MAX_NODES);
	return 0;
}

/* Number of nodes in a subtree (bounded by COMPOSE_MAX_NODES: the tree
 * holds no more). */
static size_t
cnode_count(const struct cnode *n)
{
	size_t i, c = 1;

	for (i = 0; i < n->nkids; i++)
		c += cnode_count(n->kids[i]);
	return c;
}

/* Height of a subtree (a scalar is 1). */
static size_t
cnode_height(const struct cnode *n)
{
	size_t i, h = 0, k;

	for (i = 0; i < n->nkids; i++) {
		k = cnode_height(n->kids[i]);
		if (k > h)
			h = k;
	}
	return h + 1;
}

/* Deep copy (caller frees), marked as coming from an alias. */
static struct cnode *
cnode_copy(const struct cnode *n)
{
	struct cnode *c = xcalloc(1, sizeof *c);
	size_t i;

	*c = *n;
	c->aliased = true;
	c->str = NULL;
	c->kids = NULL;
	c->cap = n->nkids;
	if (n->str != NULL) {
		c->str = xmalloc(n->len + 1);
		memcpy(c->str, n->str, n->len + 1);
	}
	if (n->nkids > 0) {
		c->kids = xcalloc(n->nkids, sizeof *c->kids);
		for (i = 0; i < n->nkids; i++)
			c->kids[i] = cnode_copy(n->kids[i]);
	}
	return c;
}

/* Whether mapping m already has key k. */
static bool
map_has(const struct cnode *m, const struct cnode *k, size_t upto)
{
	size_t i;

	for (i = 0; i + 1 < upto && i + 1 < m->nkids; i += 2)
		if (m->kids[i]->len == k->len &&
		    memcmp(m->kids[i]->str, k->str, k->len) == 0)
			return true;
	return false;
}

/* Append kid to container p. */
static void
cnode_push(struct cnode *p, struct cnode *kid)
{
	if (p->nkids == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		p->kids = xrealloc(p->kids, p->cap * sizeof *p->kids);
	}
	p->kids[p->nkids++] = kid;
}

/* Whether n is the merge key "<<" (plain). */
static bool
is_merge_key(const struct cnode *n)
{
	return n->kind == CN_SCALAR && n->plain && n->len == 2 &&
	    memcmp(n->str, "<<", 2) == 0;
}

/* Keep node n until the parse ends (see cbuild_merge). */
static void
cbuild_bury(struct cbuilder *b, struct cnode *n)
{
	if (b->ndead == b->capdead) {
		b->capdead = b->capdead ? b->capdead * 2 : 16;
		b->dead = xrealloc(b->dead, b->capdead * sizeof *b->dead);
	}
	b->dead[b->ndead++] = n;
}

/* Whether n is one of the n kids. */
static bool
is_kid_of(struct cnode **kids, size_t nk, const struct cnode *n)
{
	size_t i;

	for (i = 0; i < nk; i++)
		if (kids[i] == n)
			return true;
	return false;
}

/* Apply the merge keys of a mapping that just closed: every "<<" pair is
 * taken out and copies of the keys of its mapping(s) that m does not
 * have are appended (explicit keys first, then the sources in order),
 * counted against the node cap.  -1 + e (m as it was). */
static int
cbuild_merge(struct cbuilder *b, struct cnode *m)
{
	struct cnode **kids = m->kids, *srcs[COMPOSE_MAX_MERGE];
	size_t n = m->nkids, i, j, k, nsrc = 0;
	char path[COMPOSE_PATH_MAX];

	for (i = 0; i + 1 < n; i += 2)
		if (is_merge_key(kids[i]))
			break;
	if (i + 1 >= n)
		return 0;
	/* Keep the explicit pairs, collect the sources. */
	m->kids = xcalloc(n, sizeof *m->kids);
	m->nkids = 0;
	m->cap = n;
	for (i = 0; i + 1 < n; i += 2) {
		struct cnode *key = kids[i], *val = kids[i + 1];

		if (!is_merge_key(key)) {
			cnode_push(m, key);
			cnode_push(m, val);
			continue;
		}
		if (val->kind == CN_MAP) {
			if (nsrc < COMPOSE_MAX_MERGE)
				srcs[nsrc++] = val;
			else
				goto toomany;
		} else if (val->kind == CN_SEQ) {
			for (j = 0; j < val->nkids; j++) {
				if (val->kids[j]->kind != CN_MAP) {
					cbuild_path(b, path, sizeof path);
					compose_err(b->e, b->file,
					    val->kids[j]->line,
					    val->kids[j]->col, path, "a merge "
					    "key (<<) takes a mapping or a "
					    "sequence of mappings");
					goto fail;
				}
				if (nsrc >= COMPOSE_MAX_MERGE)
					goto toomany;
				srcs[nsrc++] = val->kids[j];
			}
		} else {
			cbuild_path(b, path, sizeof path);
			compose_err(b->e, b->file, val->line, val->col, path,
			    "a merge key (<<) takes a mapping or a sequence "
			    "of mappings");
			goto fail;
		}
	}
	for (k = 0; k < nsrc; k++) {
		struct cnode *s = srcs[k];

		for (j = 0; j + 1 < s->nkids; j += 2) {
			if (map_has(m, s->kids[j], m->nkids))
				continue;
			/* Copies, counted like an alias's: the source may be
			 * an anchor that a later alias names. */
			b->nodes += cnode_count(s->kids[j]) +
			    cnode_count(s->kids[j + 1]);
			if (b->nodes > COMPOSE_MAX_NODES) {
				cbuild_path(b, path, sizeof path);
				compose_err(b->e, b->file, s->kids[j]->line,
				    s->kids[j]->col, path, "more than %d nodes "
				    "(aliases count as the nodes they expand "
				    "to)", COMPOSE_MAX_NODES);
				goto fail_merged;
			}
			cnode_push(m, cnode_copy(s->kids[j]));
			cnode_push(m, cnode_copy(s->kids[j + 1]));
		}
	}
	/* The "<<" pairs leave the mapping; an anchor may still name their
	 * values, so they live until the parse ends. */
	for (i = 0; i + 1 < n; i += 2) {
		if (!is_merge_key(kids[i]))
			continue;
		cbuild_bury(b, kids[i]);
		cbuild_bury(b, kids[i + 1]);
	}
	free(kids);
	return 0;
fail_merged:
	/* Drop the copies; the original pairs go back. */
	for (i = 0; i < m->nkids; i++)
		if (m->kids[i]->aliased && !is_kid_of(kids, n, m->kids[i]))
			compose_free(m->kids[i]);
	goto restore;
toomany:
	cbuild_path(b, path, sizeof path);
	compose_err(b->e, b->file, m->line, m->col, path, "more than %d merge "
	    "sources in one mapping", COMPOSE_MAX_MERGE);
fail:
restore:
	/* Nothing was moved: the original pairs are all in kids. */
	free(m->kids);
	m->kids = kids;
	m->nkids = n;
	m->cap = n;
	return -1;
}

/* Record a finished node under its anchor (if it has one).  -1 + e. */
static int
cbuild_anchor(struct cbuilder *b, yaml_mark_t m, const char *name,
    const struct cnode *n)
{
	size_t i;

	if (name == NULL)
		return 0;
	if (b->nanchors >= COMPOSE_MAX_ANCHORS)
		return cbuild_err(b, m, "more than %d anchors",
		    COMPOSE_MAX_ANCHORS);
	for (i = 0; i < b->nanchors; i++)
		if (strcmp(b->anchors[i].name, name) == 0) {
			/* YAML lets a later anchor of the same name win. */
			b->anchors[i].node = n;
			return 0;
		}
	b->anchors[b->nanchors].name = xstrdup(name);
	b->anchors[b->nanchors].node = n;
	b->nanchors++;
	return 0;
}

/* Hang node n under the innermost open container (or make it the root).
 * Keys must be scalars without C0 control bytes (NUL included) and
 * unique (a merge key "<<" may repeat).  On
 * error n is freed and -1 returned. */
static int
cbuild_hang(struct cbuilder *b, yaml_mark_t m, struct cnode *n)
{
	struct cnode *parent;
	char k[SHOW_MAX + 4];
	size_t i;

	if (b->depth == 0) {
		if (b->root != NULL) {
			compose_free(n);
			return cbuild_err(b, m, "only one document is allowed");
		}
		b->root = n;
		return 0;
	}
	parent = b->stack[b->depth - 1];
	if (parent->kind == CN_MAP && parent->nkids % 2 == 0) {
		if (n->kind != CN_SCALAR) {
			compose_free(n);
			return cbuild_err(b, m, "mapping keys must be scalars");
		}
		/* A NUL (or another C0 byte) would let "agent\\0" stand in
		 * for "agent" wherever a key is compared as a C string. */
		for (i = 0; i < n->len; i++)
			if ((unsigned char)n->str[i] < 0x20) {
				int rc = cbuild_err(b, m, "a mapping key holds "
				    "the control byte 0x%02x",
				    (unsigned char)n->str[i]);

				compose_free(n);
				return rc;
			}
		for (i = 0; i < parent->nkids && !is_merge_key(n); i += 2) {
			const struct cnode *o = parent->kids[i];

			if (o->len == n->len && memcmp(o->str, n->str,
			    n->len) == 0) {
				int rc = cbuild_err(b, m, "duplicate key "
				    "\"%s\" (first at %zu:%zu)",
				    show(n->str, n->len, k), o->line, o->col);

				compose_free(n);
				return rc;
			}
		}
	}
	cnode_push(parent, n);
	return 0;
}

/* The anchored node named by an alias, or NULL. */
static const struct cnode *
cbuild_lookup(const struct cbuilder *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->nanchors; i++)
		if (strcmp(b->anchors[i].name, name) == 0)
			return b->anchors[i].node;
	return NULL;
}

/* One libyaml event.  1 at stream end, 0 to go on, -1 + e. */
static int
cbuild_event(struct cbuilder *b, const yaml_event_t *ev)
{
	struct cnode *n;
	const struct cnode *a;
	const char *anchor;
	char t[SHOW_MAX + 4];

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_NO_EVENT:
		return 0;
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return cbuild_err(b, ev->start_mark,
			    "only one document is allowed");
		return 0;
	case YAML_ALIAS_EVENT: {
		const char *name = (const char *)ev->data.alias.anchor;

		a = cbuild_lookup(b, name);
		if (a == NULL)
			return cbuild_err(b, ev->start_mark, "alias *%s names "
			    "no complete anchor before it", show(name,
			    strlen(name), t));
		/* The copy may not nest deeper than a written node
		 * could: every tree stays within COMPOSE_MAX_DEPTH. */
		if (b->depth + cnode_height(a) > COMPOSE_MAX_DEPTH + 1)
			return cbuild_err(b, ev->start_mark, "alias *%s "
			    "would nest deeper than %d levels", show(name,
			    strlen(name), t), COMPOSE_MAX_DEPTH);
		if (cbuild_count(b, ev->start_mark, cnode_count(a)) == -1)
			return -1;
		n = cnode_copy(a);
		return cbuild_hang(b, ev->start_mark, n);
	}
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.length > COMPOSE_MAX_SCALAR)
			return cbuild_err(b, ev->start_mark, "scalar longer "
			    "than %d bytes", COMPOSE_MAX_SCALAR);
		if (cbuild_count(b, ev->start_mark, 1) == -1)
			return -1;
		n = xcalloc(1, sizeof *n);
		n->kind = CN_SCALAR;
		n->line = ev->start_mark.line + 1;
		n->col = ev->start_mark.column + 1;
		n->end_line = end_line_of(ev->end_mark, n->line);
		n->str = xmalloc(ev->data.scalar.length + 1);
		memcpy(n->str, ev->data.scalar.value, ev->data.scalar.length);
		n->str[ev->data.scalar.length] = '\0';
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    ev->data.scalar.tag == NULL;
		anchor = (const char *)ev->data.scalar.anchor;
		if (cbuild_hang(b, ev->start_mark, n) == -1)
			return -1;
		return cbuild_anchor(b, ev->start_mark, anchor, n);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = ev->type == YAML_SEQUENCE_START_EVENT;

		if (b->depth >= COMPOSE_MAX_DEPTH)
			return cbuild_err(b, ev->start_mark, "nested deeper "
			    "than %d levels", COMPOSE_MAX_DEPTH);
		if (cbuild_count(b, ev->start_mark, 1) == -1)
			return -1;
		n = xcalloc(1, sizeof *n);
		n->kind = seq ? CN_SEQ : CN_MAP;
		n->line = ev->start_mark.line + 1;
		n->col = ev->start_mark.column + 1;
		n->flow = seq ? ev->data.sequence_start.style ==
		    YAML_FLOW_SEQUENCE_STYLE : ev->data.mapping_start.style ==
		    YAML_FLOW_MAPPING_STYLE;
		anchor = (const char *)(seq ? ev->data.sequence_start.anchor :
		    ev->data.mapping_start.anchor);
		if (cbuild_hang(b, ev->start_mark, n) == -1)
			return -1;
		b->stack_anchor[b->depth] = anchor ? xstrdup(anchor) : NULL;
		b->stack[b->depth++] = n;
		return 0;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		char *name;
		int rc = 0;

		if (b->depth == 0)
			return 0;
		n = b->stack[b->depth - 1];
		/* A block node ends where its last kid does (its end mark
		 * is the next token's start); a flow one at its bracket. */
		if (n->flow)
			n->end_line = ev->end_mark.line + 1;
		else if (n->nkids > 0)
			n->end_line = n->kids[n->nkids - 1]->end_line;
		else
			n->end_line = end_line_of(ev->end_mark, n->line);
		if (n->kind == CN_MAP)
			rc = cbuild_merge(b, n);
		b->depth--;
		name = b->stack_anchor[b->depth];
		b->stack_anchor[b->depth] = NULL;
		if (rc == 0)
			rc = cbuild_anchor(b, ev->start_mark, name, n);
		free(name);
		return rc;
	}
	}
	return 0;
}

/* Parse buf (len bytes) into a tree; file labels errors.  The root (caller
 * compose_free()s) or NULL + e (ERRBUF_INPUT). */
struct cnode *
compose_parse(const char *file, const char *buf, size_t len, struct errbuf *e)
{
	struct cbuilder b;
	yaml_parser_t ps;
	yaml_event_t ev;
	size_t i;
	int rc = 0;

	if (len > COMPOSE_MAX_BYTES) {
		errbuf_set(e, ERRBUF_INPUT, "%s: the file is %zu bytes; the "
		    "limit is %d", file, len, COMPOSE_MAX_BYTES);
		return NULL;
	}
	memset(&b, 0, sizeof b);
	b.file = file;
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
			rc = cbuild_yaml_err(&b, &ps);
			break;
		}
		rc = cbuild_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&ps);
	for (i = 0; i < b.nanchors; i++)
		free(b.anchors[i].name);
	for (i = 0; i < COMPOSE_MAX_DEPTH; i++)
		free(b.stack_anchor[i]);
	for (i = 0; i < b.ndead; i++)
		compose_free(b.dead[i]);
	free(b.dead);
	if (rc == -1) {
		compose_free(b.root);
		return NULL;
	}
	if (b.root == NULL || compose_is_null(b.root)) {
		compose_free(b.root);
		compose_err(e, file, 1, 1, "", "empty document: a Compose file "
		    "is a mapping with services:");
		return NULL;
	}
	return b.root;
}

/* Read path (a regular file of at most COMPOSE_MAX_BYTES) and parse it.
 * NULL + e (ERRBUF_INPUT). */
struct cnode *
compose_read(const char *path, struct errbuf *e)
{
	struct cnode *root;
	size_t len;
	char *buf;

	buf = util_read_input(path, "the file", COMPOSE_MAX_BYTES, &len, e);
	if (buf == NULL)
		return NULL;
	root = compose_parse(path, buf, len, e);
	free(buf);
	return root;
}
