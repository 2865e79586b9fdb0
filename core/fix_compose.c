/*
 * fix_compose.c - the fix of an imported Compose policy as a change to the
 * Compose file itself (docs/fix.md "The Compose file"): the entries the
 * import mapped to the attributed flaw (import_compose's rows, their
 * source spans) are cut out of the text, line by line, comments and
 * layout elsewhere kept; the patched file must import again and no longer
 * map to that flaw, with every other flaw it maps to unchanged.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX_COMPOSE_LINES_MAX 20000    /* lines of a Compose file edited */

/* The lines of text: starts[i] the byte offset of line i (0-based),
 * starts[n] == strlen(text).  *n the count.  Caller frees. */
static size_t *
fix_compose_lines(const char *text, size_t *n)
{
	size_t len = strlen(text), cap = 64, k = 0, i;
	size_t *st = xmalloc(cap * sizeof *st);

	st[k++] = 0;
	for (i = 0; i < len; i++)
		if (text[i] == '\n' && i + 1 < len) {
			if (k + 1 >= cap) {
				cap *= 2;
				st = xrealloc(st, cap * sizeof *st);
			}
			st[k++] = i + 1;
		}
	st[k] = len;
	*n = k;
	return st;
}

/* The indentation (spaces) of the line at p, and whether it is blank or a
 * comment (*skip). */
static size_t
fix_compose_indent(const char *p, const char *end, bool *skip)
{
	size_t d = 0;

	while (p + d < end && p[d] == ' ')
		d++;
	*skip = p + d >= end || p[d] == '\n' || p[d] == '\r' || p[d] == '#';
	return d;
}

/* Whether line [p, end) is only "KEY:" (a block key, an optional comment
 * after it): the parent of a block sequence. */
static bool
fix_compose_bare_key(const char *p, const char *end)
{
	const char *c = memchr(p, ':', (size_t)(end - p));

	if (c == NULL)
		return false;
	for (c++; c < end && (*c == ' ' || *c == '\t'); c++)
		;
	return c >= end || *c == '\n' || *c == '\r' || *c == '#';
}

char *
fix_compose_remove(const char *text, const struct fix_span *spans,
    size_t nspans, char *why, size_t whylen)
{
	size_t nl, i, k, *st = fix_compose_lines(text, &nl);
	bool *drop = xcalloc(nl + 1, sizeof *drop);
	struct util_buf b;
	char *out = NULL;

	why[0] = '\0';
	if (nl > FIX_COMPOSE_LINES_MAX) {
		snprintf(why, whylen, "over %d lines", FIX_COMPOSE_LINES_MAX);
		goto out;
	}
	for (k = 0; k < nspans; k++) {
		const struct fix_span *s = &spans[k];
		const char *p, *end, *q;
		size_t d, j, ln;
		bool skip, item, siblings = false;

		if (s->line == 0 || s->line > nl || s->end_line < s->line ||
		    s->end_line > nl || s->col == 0) {
			snprintf(why, whylen, "%s: no span in the file (an absent "
			    "key or a default)", s->key);
			goto out;
		}
		p = text + st[s->line - 1];
		end = text + st[s->line];
		/* Only the whole entry on its own lines: before its column,
		 * indentation and at most a sequence's "- " */
		if (s->col - 1 > (size_t)(end - p)) {
			snprintf(why, whylen, "%s: the span is past its line",
			    s->key);
			goto out;
		}
		q = p;
		while (q < p + s->col - 1 && *q == ' ')
			q++;
		d = (size_t)(q - p);
		item = q < p + s->col - 1 && *q == '-';
		if (item)
			for (q++; q < p + s->col - 1 && *q == ' '; q++)
				;
		if (q != p + s->col - 1) {
			snprintf(why, whylen, "%s (line %zu): the entry shares its "
			    "line with others (flow style): not removable as "
			    "lines", s->key, s->line);
			goto out;
		}
		/* the lines after end_line that are deeper than the entry
		 * belong to it too (a block scalar, a nested mapping) */
		ln = s->end_line;
		while (ln < nl) {
			size_t dd = fix_compose_indent(text + st[ln],
			    text + st[ln + 1], &skip);

			if (skip || dd <= d)
				break;
			ln++;
		}
		for (j = s->line; j <= ln; j++)
			drop[j - 1] = true;
		if (!item)
			continue;
		/* the last item of its sequence: its key goes too */
		for (j = s->line - 1; j-- > 0;) {
			size_t dd = fix_compose_indent(text + st[j],
			    text + st[j + 1], &skip);

			if (skip || drop[j])
				continue;
			if (dd > d || (dd == d && text[st[j] + dd] == '-'))
				siblings = true;
			else if (!siblings && fix_compose_bare_key(text + st[j],
			    text + st[j + 1])) {
				size_t m;

				for (m = ln; m < nl; m++) {
					size_t dm = fix_compose_indent(text +
					    st[m], text + st[m + 1], &skip);

					if (skip || drop[m])
						continue;
					if (dm > d || (dm == d &&
					    text[st[m] + dm] == '-'))
						siblings = true;
					break;
				}
				if (!siblings)
					drop[j] = true;
			}
			break;
		}
	}
	util_buf_init(&b, strlen(text) + 1);
	for (i = 0; i < nl; i++)
		if (!drop[i])
			util_buf_printf(&b, "%.*s", (int)(st[i + 1] - st[i]),
			    text + st[i]);
	out = b.s;
out:
	free(drop);
	free(st);
	return out;
}

/* The number of rows of r that map to flaw. */
static size_t
fix_compose_count(const struct import_result *r, const char *flaw)
{
	size_t i, n = 0;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].flaw != NULL && strcmp(r->rows[i].flaw, flaw) == 0)
			n++;
	return n;
}

/* Whether a and b map to the same flaws, each as many times. */
static bool
fix_compose_same(const struct import_result *a, const struct import_result *b)
{
	size_t i;

	for (i = 0; i < a->nrows; i++)
		if (a->rows[i].flaw != NULL && fix_compose_count(a,
		    a->rows[i].flaw) != fix_compose_count(b, a->rows[i].flaw))
			return false;
	for (i = 0; i < b->nrows; i++)
		if (b->rows[i].flaw != NULL && fix_compose_count(a,
		    b->rows[i].flaw) != fix_compose_count(b, b->rows[i].flaw))
			return false;
	return true;
}

#define FIX_COMPOSE_SERVICES_MAX 256

/* The other services of a Compose file, imported (before an edit). */
struct fix_compose_others {
	char *name[FIX_COMPOSE_SERVICES_MAX];
	struct import_result r[FIX_COMPOSE_SERVICES_MAX];
	size_t n;
};

/*
 * Import every service of the Compose file at path but service into o
 * (before the edit: an entry cut from an anchor, an alias or a << merge,
 * changes every service that uses it, which fix_compose_others_same
 * checks after).  0, or -1 with why.  fix_compose_others_free() o.
 */
static int
fix_compose_others_read(const char *path, const char *service,
    const struct import_opts *io, struct fix_compose_others *o, char *why,
    size_t whylen)
{
	struct errbuf e = { 0 };
	struct cnode *root = compose_read(path, &e);
	const struct cnode *svcs;
	size_t i;
	int rc = -1;

	memset(o, 0, sizeof *o);
	if (root == NULL) {
		snprintf(why, whylen, "the Compose file does not read: %s",
		    e.msg);
		return -1;
	}
	svcs = compose_get(root, "services");
	for (i = 0; svcs != NULL && svcs->kind == CN_MAP &&
	    i + 1 < svcs->nkids; i += 2) {
		const char *name = svcs->kids[i]->str;

		if (name == NULL || strcmp(name, service) == 0)
			continue;
		if (o->n == FIX_COMPOSE_SERVICES_MAX) {
			snprintf(why, whylen, "more than %d services",
			    FIX_COMPOSE_SERVICES_MAX);
			goto out;
		}
		if (import_compose(path, name, io, &o->r[o->n], &e) == -1) {
			snprintf(why, whylen, "service %.64s: %s", name, e.msg);
			goto out;
		}
		o->name[o->n++] = xstrdup(name);
	}
	rc = 0;
out:
	compose_free(root);
	return rc;
}

/* Each service of o maps to the same flaws in the edited file at path.
 * 0, or -1 with why (the first that changed). */
static int
fix_compose_others_same(const struct fix_compose_others *o,
    const char *path, const struct import_opts *io, char *why,
    size_t whylen)
{
	struct errbuf e = { 0 };
	size_t i;

	for (i = 0; i < o->n; i++) {
		struct import_result a = { 0 };
		bool same;

		if (import_compose(path, o->name[i], io, &a, &e) == -1) {
			snprintf(why, whylen, "service %.64s after the edit: %s",
			    o->name[i], e.msg);
			return -1;
		}
		same = fix_compose_same(&o->r[i], &a);
		import_result_free(&a);
		if (!same) {
			snprintf(why, whylen, "the edit also changes service "
			    "%.64s (an entry shared through an anchor): edit "
			    "the Compose file by hand", o->name[i]);
			return -1;
		}
	}
	return 0;
}

static void
fix_compose_others_free(struct fix_compose_others *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		free(o->name[i]);
		import_result_free(&o->r[i]);
	}
	o->n = 0;
}

int
fix_compose_patch(const char *cur_path, const char *cur_text,
    const char *service, const char *flaw, const char *agent,
    const char *out_compose, const char *out_policy, char **patched,
    char **policy_yaml, char *why, size_t whylen)
{
	struct import_result before = { 0 }, after = { 0 };
	struct import_opts io = { .agent = agent, .out_path = out_policy };
	struct fix_compose_others *others = xcalloc(1, sizeof *others);
	struct fix_span *spans = NULL;
	struct errbuf e = { 0 };
	size_t i, n = 0;
	int rc = -1;

	*patched = NULL;
	*policy_yaml = NULL;
	why[0] = '\0';
	if (import_compose(cur_path, service, &io, &before, &e) == -1) {
		snprintf(why, whylen, "the Compose file does not import: %s",
		    e.msg);
		goto out;
	}
	if (fix_compose_others_read(cur_path, service, &io, others, why,
	    whylen) == -1)
		goto out;
	spans = xcalloc(before.nrows + 1, sizeof *spans);
	for (i = 0; i < before.nrows; i++) {
		const struct import_row *w = &before.rows[i];

		if (w->flaw == NULL || strcmp(w->flaw, flaw) != 0)
			continue;
		spans[n].line = w->line;
		spans[n].col = w->col;
		spans[n].end_line = w->end_line;
		snprintf(spans[n].key, sizeof spans[n].key, "%s", w->key);
		n++;
	}
	if (n == 0) {
		snprintf(why, whylen, "no entry of service %s maps to %s",
		    service, flaw);
		goto out;
	}
	*patched = fix_compose_remove(cur_text, spans, n, why, whylen);
	if (*patched == NULL)
		goto out;
	if (util_write_file(out_compose, *patched, strlen(*patched), 0644,
	    &e) == -1) {
		snprintf(why, whylen, "%s", e.msg);
		goto out;
	}
	if (import_compose(out_compose, service, &io, &after, &e) == -1) {
		snprintf(why, whylen, "the patched Compose file does not import: "
		    "%s", e.msg);
		goto out;
	}
	if (fix_compose_count(&after, flaw) != 0) {
		snprintf(why, whylen, "the patched Compose file still maps to %s",
		    flaw);
		goto out;
	}
	/* every other flaw as many times as before */
	for (i = 0; i < before.nrows; i++) {
		const char *f = before.rows[i].flaw;

		if (f != NULL && strcmp(f, flaw) != 0 &&
		    fix_compose_count(&before, f) != fix_compose_count(&after, f)) {
			snprintf(why, whylen, "the edit changed more than %s (%s: "
			    "%zu entries before, %zu after)", flaw, f,
			    fix_compose_count(&before, f),
			    fix_compose_count(&after, f));
			goto out;
		}
	}
	if (after.policy_yaml == NULL) {
		snprintf(why, whylen, "the patched Compose file gives no policy");
		goto out;
	}
	if (fix_compose_others_same(others, out_compose, &io, why,
	    whylen) == -1)
		goto out;
	*policy_yaml = xstrdup(after.policy_yaml);
	rc = 0;
out:
	if (rc == -1) {
		free(*patched);
		*patched = NULL;
	}
	free(spans);
	fix_compose_others_free(others);
	free(others);
	import_result_free(&before);
	import_result_free(&after);
	return rc;
}
