/*
 * fix_yaml.c - the fix loop's minimal policy edits (docs/fix.md): turn a
 * flaw off or set the variant by splicing the policy text at the byte
 * ranges policy.c's parser gives (policy_find_key), so comments and layout
 * stay; and the unified diff of the edit.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- minimal YAML edits ---------------------------------------------- */

static int fix_yaml_top_range(const char *buf, size_t len, const char *key,
    size_t *a, size_t *b, struct errbuf *e);

/* Locate the top-level key's value in buf, with policy.c's parser.
 * -1 + e ("policy:LINE:COL: ..."). */
static int
fix_yaml_find(const char *buf, size_t len, const char *key,
    struct policy_keyval *kv, struct errbuf *e)
{
	return policy_find_key("policy", buf, len, key, kv, e);
}

/* buf with [a, b) replaced by rep.  Caller frees. */
static char *
fix_splice(const char *buf, size_t len, size_t a, size_t b, const char *rep)
{
	return xasprintf("%.*s%s%.*s", (int)a, buf, rep, (int)(len - b),
	    buf + b);
}

/* The length of the line break at buf[i] (0: none).  libyaml ends a line
 * at LF, CR, CR LF, and in UTF-8 text at NEL, LS and PS too: an edit that
 * knew only LF would take the next item's line with it. */
static size_t
fix_break_at(const char *buf, size_t len, size_t i)
{
	const unsigned char *u = (const unsigned char *)buf;

	if (i >= len)
		return 0;
	if (u[i] == '\r')
		return i + 1 < len && u[i + 1] == '\n' ? 2 : 1;
	if (u[i] == '\n')
		return 1;
	if (u[i] == 0xC2 && i + 1 < len && u[i + 1] == 0x85)
		return 2;                                   /* NEL */
	if (u[i] == 0xE2 && i + 2 < len && u[i + 1] == 0x80 &&
	    (u[i + 2] == 0xA8 || u[i + 2] == 0xA9))
		return 3;                                   /* LS, PS */
	return 0;
}

/* Whether a line break ends right before buf[i] (i > 0): 1, else 0. */
static int
fix_break_before(const char *buf, size_t i)
{
	const unsigned char *u = (const unsigned char *)buf;

	if (u[i - 1] == '\n' || u[i - 1] == '\r')
		return 1;
	if (i >= 2 && u[i - 2] == 0xC2 && u[i - 1] == 0x85)
		return 1;
	if (i >= 3 && u[i - 3] == 0xE2 && u[i - 2] == 0x80 &&
	    (u[i - 1] == 0xA8 || u[i - 1] == 0xA9))
		return 1;
	return 0;
}

/* The policy text without flaw in flaws: (flow item and its comma, or
 * the block item's line; the last one leaves "flaws: []").  Caller frees;
 * NULL + e when flaws: is no sequence or flaw is not on it. */
char *
fix_policy_remove_flaw(const char *buf, size_t len, const char *flaw,
    struct errbuf *e)
{
	struct policy_keyval kv;
	size_t i, a, b;

	if (fix_yaml_find(buf, len, "flaws", &kv, e) == -1)
		return NULL;
	if (!kv.found || !kv.is_seq) {
		errbuf_set(e, ERRBUF_INPUT, "policy: no flaws: sequence");
		return NULL;
	}
	for (i = 0; i < kv.nitems; i++)
		if (strcmp(kv.items[i].text, flaw) == 0)
			break;
	if (i == kv.nitems) {
		errbuf_set(e, ERRBUF_INPUT, "policy: flaws: '%s' is not on",
		    flaw);
		return NULL;
	}
	if (kv.flow) {
		if (kv.nitems == 1)
			return fix_splice(buf, len, kv.items[i].start,
			    kv.items[i].end, "");
		if (i + 1 < kv.nitems)   /* "a, " up to the next item */
			return fix_splice(buf, len, kv.items[i].start,
			    kv.items[i + 1].start, "");
		return fix_splice(buf, len, kv.items[i - 1].end,
		    kv.items[i].end, "");   /* ", z" after the previous */
	}
	/* Block style: drop the item's whole line (with its comment). */
	a = kv.items[i].start;
	while (a > 0 && fix_break_before(buf, a) == 0)
		a--;
	b = kv.items[i].end;
	while (b < len && fix_break_at(buf, len, b) == 0)
		b++;
	b += fix_break_at(buf, len, b);
	if (kv.nitems > 1)
		return fix_splice(buf, len, a, b, "");
	/* The only item: the key gets an empty flow sequence. */
	{
		char *tmp = fix_splice(buf, len, a, b, ""), *out;
		size_t colon = kv.key_end;

		while (colon < len && buf[colon] != ':')
			colon++;
		if (colon >= a) {
			free(tmp);
			errbuf_set(e, ERRBUF_INPUT, "policy: flaws: no ':'");
			return NULL;
		}
		out = fix_splice(tmp, strlen(tmp), colon + 1, colon + 1, " []");
		free(tmp);
		return out;
	}
}

/* The kind of a policy's bait item: a kind name ("ssh-key"), a bait id
 * of from (may be NULL), else a bait id of any shipped variant.  -1 when
 * it is none of these. */
static int
fix_bait_kind(const char *item, const struct variant *from)
{
	int k = variant_bait_kind_find(item);
	size_t i;

	if (k >= 0)
		return k;
	for (i = 0; i <= variant_count; i++) {
		const struct variant *v = i == 0 ? from : &variant_table[i - 1];

		if (v == NULL)
			continue;
		for (k = 0; k < VARIANT_NBAIT_KINDS; k++) {
			const char *id = variant_bait_id(v,
			    (enum variant_bait_kind)k);

			if (id != NULL && strcmp(id, item) == 0)
				return k;
		}
	}
	return -1;
}

/*
 * The policy text dressed in another variant: each bait id mapped by
 * its kind to to's bait id (to NULL: to the kind name, the only way to
 * name the bait of a generated variant; a kind name stays as it is), variant: set to value (appended
 * when absent), and variant_seed: set to *seed (seed NULL: removed).
 * Caller frees; NULL + e on a bait that names no kind.
 */
static char *
fix_policy_dress(const char *buf, size_t len, const struct variant *to,
    const char *value, const uint64_t *seed, struct errbuf *e)
{
	const struct variant *from;
	struct policy_keyval kv, kb;
	char *cur, *next;
	size_t i;

	if (fix_yaml_find(buf, len, "variant", &kv, e) == -1)
		return NULL;
	/* NULL for "generated" or a FILE.yaml: its items are kind names */
	from = variant_find(kv.found && kv.has_value ? kv.value.text :
	    "default");
	/* Bait items first (later offsets), each mapped by kind. */
	if (fix_yaml_find(buf, len, "bait", &kb, e) == -1)
		return NULL;
	cur = xstrndup(buf, len);
	for (i = kb.nitems; i-- > 0;) {
		const char *id = kb.items[i].text, *rep;
		int k;

		if (variant_bait_kind_find(id) != -1)
			continue;       /* a kind names the bait on any variant */
		k = fix_bait_kind(id, from);
		if (k < 0) {
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "policy: bait '%s' is not "
			    "one of variant %s's nor a bait kind", id,
			    from ? from->id : kv.found && kv.has_value ?
			    kv.value.text : "default");
			return NULL;
		}
		rep = to != NULL ? variant_bait_id(to,
		    (enum variant_bait_kind)k) : variant_bait_kinds[k];
		if (rep == NULL) {
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "variant %s has no bait of "
			    "kind %s", to->id, variant_bait_kinds[k]);
			return NULL;
		}
		next = fix_splice(cur, strlen(cur), kb.items[i].start,
		    kb.items[i].end, rep);
		free(cur);
		cur = next;
	}
	/* The bait edits may come before variant: re-find it. */
	if (fix_yaml_find(cur, strlen(cur), "variant", &kv, e) == -1) {
		free(cur);
		return NULL;
	}
	if (kv.found && kv.has_value)
		next = fix_splice(cur, strlen(cur), kv.value.start,
		    kv.value.end, value);
	else if (kv.found) {
		free(cur);
		errbuf_set(e, ERRBUF_INPUT, "policy: variant: not a scalar");
		return NULL;
	} else {
		size_t l = strlen(cur);

		next = xasprintf("%s%svariant: %s\n", cur,
		    l > 0 && cur[l - 1] != '\n' ? "\n" : "", value);
	}
	free(cur);
	cur = next;
	/* variant_seed: the generated dressing's, or none (a shipped
	 * variant has no seed) */
	if (seed != NULL) {
		char num[24], *line;
		size_t a, b;
		int rc;

		snprintf(num, sizeof num, "%llu", (unsigned long long)*seed);
		if (fix_yaml_find(cur, strlen(cur), "variant_seed", &kv,
		    e) == -1) {
			free(cur);
			return NULL;
		}
		if (kv.found && kv.has_value)   /* its value, in place */
			next = fix_splice(cur, strlen(cur), kv.value.start,
			    kv.value.end, num);
		else if (kv.found) {
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "policy: variant_seed: not "
			    "a scalar");
			return NULL;
		} else if ((rc = fix_yaml_top_range(cur, strlen(cur),
		    "variant", &a, &b, e)) == 1) {
			/* a line of its own right after variant:'s entry */
			line = xasprintf("%svariant_seed: %s\n", b > 0 &&
			    cur[b - 1] != '\n' ? "\n" : "", num);
			next = fix_splice(cur, strlen(cur), b, b, line);
			free(line);
		} else
			next = NULL;   /* variant: was just set: always there */
		if (next == NULL && e->msg[0] == '\0')
			errbuf_set(e, ERRBUF_INTERNAL, "policy: variant: not "
			    "found after it was set");
	} else {
		size_t a, b;
		int rc = fix_yaml_top_range(cur, strlen(cur), "variant_seed",
		    &a, &b, e);

		next = rc == -1 ? NULL : rc == 0 ? xstrdup(cur) :
		    fix_splice(cur, strlen(cur), a, b, "");
	}
	free(cur);
	return next;
}

/* The policy text on the shipped variant named variant: each bait item
 * mapped to its bait of the same kind, then variant: set (appended when
 * absent), variant_seed: dropped.  Caller frees; NULL + e on an unknown
 * variant or bait. */
char *
fix_policy_set_variant(const char *buf, size_t len, const char *variant,
    struct errbuf *e)
{
	const struct variant *to = variant_find(variant);

	if (to == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "unknown variant '%s' (known: %s)",
		    variant, variant_ids());
		return NULL;
	}
	return fix_policy_dress(buf, len, to, variant, NULL, e);
}

/* The policy text on the variant generated from seed: "variant:
 * generated", "variant_seed: SEED" and each bait item as its kind name.
 * Caller frees; NULL + e on a bait that names no kind. */
char *
fix_policy_set_generated(const char *buf, size_t len, uint64_t seed,
    struct errbuf *e)
{
	return fix_policy_dress(buf, len, NULL, "generated", &seed, e);
}

/* A one-hunk unified diff of a -> b (common prefix and suffix as
 * context, 3 lines each side; up to 4096 lines each).  Caller frees. */
char *
fix_unified_diff(const char *a, const char *b, const char *name_a,
    const char *name_b)
{
	/* Split both into lines, take the common prefix and suffix, emit
	 * one hunk with the middle (edits here are local). */
	const char *la[4096], *lb[4096];
	size_t ea[4096], eb[4096], na = 0, nb = 0, pre = 0, suf = 0, i;
	const char *p;
	struct util_buf ob;
	size_t ctx_a, ctx_end_a, ctx_end_b;

#define FIX_SPLIT(s, arr, ends, n) \
	for (p = (s); *p != '\0' && (n) < 4096;) { \
		const char *q = strchr(p, '\n'); \
		(arr)[(n)] = p; \
		(ends)[(n)] = q ? (size_t)(q - p) + 1 : strlen(p); \
		p += (ends)[(n)]; (n)++; \
	}
	FIX_SPLIT(a, la, ea, na)
	FIX_SPLIT(b, lb, eb, nb)
#undef FIX_SPLIT
#define FIX_EQ(i, j) (ea[i] == eb[j] && memcmp(la[i], lb[j], ea[i]) == 0)
	while (pre < na && pre < nb && FIX_EQ(pre, pre))
		pre++;
	while (suf < na - pre && suf < nb - pre &&
	    FIX_EQ(na - 1 - suf, nb - 1 - suf))
		suf++;
#define FIX_PUT(...) util_buf_printf(&ob, __VA_ARGS__)
	util_buf_init(&ob, 4096);
	FIX_PUT("--- %s\n+++ %s\n", name_a, name_b);
	if (pre == na && pre == nb)
		return ob.s;
	ctx_a = pre > 3 ? pre - 3 : 0;
	ctx_end_a = na - suf + (suf > 3 ? 3 : suf);
	ctx_end_b = nb - suf + (suf > 3 ? 3 : suf);
	FIX_PUT("@@ -%zu,%zu +%zu,%zu @@\n", ctx_a + 1, ctx_end_a - ctx_a,
	    ctx_a + 1, ctx_end_b - ctx_a);
	for (i = ctx_a; i < pre; i++)
		FIX_PUT(" %.*s", (int)ea[i], la[i]);
	for (i = pre; i < na - suf; i++)
		FIX_PUT("-%.*s%s", (int)ea[i], la[i],
		    la[i][ea[i] - 1] == '\n' ? "" : "\n");
	for (i = pre; i < nb - suf; i++)
		FIX_PUT("+%.*s%s", (int)eb[i], lb[i],
		    lb[i][eb[i] - 1] == '\n' ? "" : "\n");
	for (i = na - suf; i < ctx_end_a; i++)
		FIX_PUT(" %.*s%s", (int)ea[i], la[i],
		    la[i][ea[i] - 1] == '\n' ? "" : "\n");
#undef FIX_PUT
#undef FIX_EQ
	return ob.s;
}

/* s as a YAML double-quoted scalar into a new string, or NULL when it
 * holds a control byte (no path of ours does).  Caller frees. */
static char *
fix_yaml_quote(const char *s)
{
	struct util_buf b;
	size_t i;

	util_buf_init(&b, strlen(s) + 8);
	util_buf_printf(&b, "\"");
	for (i = 0; s[i] != '\0'; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			free(b.s);
			return NULL;
		}
		if (s[i] == '"' || s[i] == '\\')
			util_buf_printf(&b, "\\");
		util_buf_printf(&b, "%c", s[i]);
	}
	util_buf_printf(&b, "\"");
	return b.s;
}

/*
 * Where the top-level key's entry is in buf: [*a, *b), the key's line and
 * the lines after it that are indented, blank or comments, up to the
 * next line that starts in column 0.  1 found, 0 absent, -1 + e (a key
 * not at the start of a line).
 */
static int
fix_yaml_top_range(const char *buf, size_t len, const char *key, size_t *a,
    size_t *b, struct errbuf *e)
{
	struct policy_keyval kv;

	if (fix_yaml_find(buf, len, key, &kv, e) == -1)
		return -1;
	if (!kv.found)
		return 0;
	*a = kv.key_end;
	while (*a > 0 && buf[*a - 1] != '\n')
		(*a)--;
	if (buf[*a] == ' ' || buf[*a] == '\t')
		return errbuf_set(e, ERRBUF_INPUT, "policy: %s: not in column 0",
		    key);
	*b = kv.key_end;
	while (*b < len && buf[*b] != '\n')
		(*b)++;
	while (*b < len) {
		size_t nx = *b + 1;

		if (nx >= len || (buf[nx] != ' ' && buf[nx] != '\t' &&
		    buf[nx] != '\n' && buf[nx] != '\r' && buf[nx] != '#'))
			break;
		*b = nx;
		while (*b < len && buf[*b] != '\n')
			(*b)++;
	}
	if (*b < len)
		(*b)++;
	return 1;
}

/* buf without its top-level key's entry (fix_yaml_top_range) and rep
 * (one or more lines, no final newline) appended.  Caller frees; NULL +
 * e. */
static char *
fix_yaml_replace_top(const char *buf, size_t len, const char *key,
    const char *rep, struct errbuf *e)
{
	size_t a, b;
	int rc = fix_yaml_top_range(buf, len, key, &a, &b, e);

	if (rc == -1)
		return NULL;
	if (rc == 0)
		return xasprintf("%.*s%s%s\n", (int)len, buf, len > 0 &&
		    buf[len - 1] != '\n' ? "\n" : "", rep);
	return xasprintf("%.*s%.*s%s%s\n", (int)a, buf, (int)(len - b),
	    buf + b, len - b > 0 && buf[len - 1] != '\n' ? "\n" : "", rep);
}

/*
 * A re-imported policy (imported) with the settings of the policy it
 * replaces (from: its text) carried over, entry for entry: name, seed,
 * limits, observe_ms, variant, bait, levers and model (what the import
 * writes as defaults and a person tunes); the access (flaws, agent,
 * runtime, imported) stays the re-import's.  Caller frees; NULL + e.
 */
char *
fix_policy_carry(const char *imported, const char *from, struct errbuf *e)
{
	static const char *const keys[] = { "name", "seed", "limits",
	    "observe_ms", "variant", "bait", "levers", "model" };
	char *cur = xstrdup(imported), *next;
	size_t k, a, b, fl = strlen(from);

	for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		int rc = fix_yaml_top_range(from, fl, keys[k], &a, &b, e);
		char *entry;

		if (rc == -1) {
			free(cur);
			return NULL;
		}
		if (rc == 0)
			continue;
		while (b > a && (from[b - 1] == '\n' || from[b - 1] == '\r'))
			b--;
		entry = xstrndup(from + a, b - a);
		next = fix_yaml_replace_top(cur, strlen(cur), keys[k], entry, e);
		free(entry);
		free(cur);
		if (next == NULL)
			return NULL;
		cur = next;
	}
	return cur;
}

/* Replace the top-level key of *cur by rep (rep freed; *cur replaced,
 * or freed and NULL on error).  -1 + e. */
static int
fix_pin_key(char **cur, const char *key, char *rep, struct errbuf *e)
{
	char *next = fix_yaml_replace_top(*cur, strlen(*cur), key, rep, e);

	free(rep);
	free(*cur);
	*cur = next;
	return next == NULL ? -1 : 0;
}

/*
 * The policy text p was parsed from, for a copy in another directory
 * (the fix dir): the paths it names relative to its own file are made
 * absolute, as p resolved them: agent.script (a script agent: agent:
 * becomes {kind: script, script: "/abs"}) and imported.compose
 * (imported: becomes {compose: "/abs", service: NAME}) and a variant
 * file (variant: becomes the quoted absolute path p->variant_file names,
 * so a FILE.yaml of that name in the copy's directory is never read).
 * Caller frees; NULL + e.
 */
char *
fix_policy_pin_paths(const char *buf, size_t len, const struct policy *p,
    struct errbuf *e)
{
	char *cur = xstrndup(buf, len), *q, *qs;

	if (p->agent_kind == POLICY_AGENT_SCRIPT && p->agent_script != NULL) {
		q = fix_yaml_quote(p->agent_script);
		if (q == NULL) {
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "agent.script: a control "
			    "byte in the path");
			return NULL;
		}
		if (fix_pin_key(&cur, "agent", xasprintf("agent: {kind: script, "
		    "script: %s}", q), e) == -1) {
			free(q);
			return NULL;
		}
		free(q);
	}
	if (p->import_compose != NULL && p->import_service != NULL) {
		qs = fix_yaml_quote(p->import_service);
		q = fix_yaml_quote(p->import_compose);
		if (q == NULL || qs == NULL) {
			free(q);
			free(qs);
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "imported: a control byte");
			return NULL;
		}
		if (fix_pin_key(&cur, "imported", xasprintf("imported: {compose: "
		    "%s, service: %s}", q, qs), e) == -1) {
			free(q);
			free(qs);
			return NULL;
		}
		free(q);
		free(qs);
	}
	if (p->variant_file != NULL) {
		char *abs = realpath(p->variant_file, NULL);

		if (abs == NULL) {
			errbuf_set(e, ERRBUF_INPUT, "variant: %s: %s",
			    p->variant_file, strerror(errno));
			free(cur);
			return NULL;
		}
		q = fix_yaml_quote(abs);
		free(abs);
		if (q == NULL) {
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "variant: a control byte in "
			    "the path");
			return NULL;
		}
		if (fix_pin_key(&cur, "variant", xasprintf("variant: %s", q),
		    e) == -1) {
			free(q);
			return NULL;
		}
		free(q);
	}
	return cur;
}
