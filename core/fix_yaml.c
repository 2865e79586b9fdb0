/*
 * fix_yaml.c - the fix loop's minimal policy edits (docs/fix.md): turn a
 * flaw off or set the variant by splicing the policy text at the byte
 * ranges libyaml gives, so comments and layout stay; and the unified diff
 * of the edit.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* ---- minimal YAML edits ---------------------------------------------- */

/* Byte offset of libyaml mark m in buf: libyaml counts characters, so walk
 * UTF-8 when the text has multi-byte characters.  It counts none for a
 * UTF-8 byte order mark (policy_parse accepts one): start after it. */
static size_t
fix_mark_byte(const char *buf, size_t len, const yaml_mark_t *m)
{
	size_t b = 0, chars = 0;

	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		b = 3;

	while (b < len && chars < m->index) {
		unsigned char c = (unsigned char)buf[b];

		b += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		chars++;
	}
	return b > len ? len : b;
}

/* One scalar of the document with its byte range. */
struct fix_scalar {
	size_t start, end;   /* [start, end) of the scalar's text */
	char text[64];
};

/* Where a top-level key's value is. */
struct fix_keyval {
	bool found;
	size_t key_end;             /* byte after the key scalar */
	bool is_seq, flow;
	size_t seq_start, seq_end;  /* the sequence's range */
	struct fix_scalar items[POLICY_MAX_FLAWS + POLICY_MAX_BAIT];
	size_t nitems;
	struct fix_scalar value;    /* a scalar value */
	bool has_value;
};

/* Locate the top-level key's value in buf (libyaml events).  -1 + e. */
static int
fix_yaml_find(const char *buf, size_t len, const char *key,
    struct fix_keyval *kv, struct errbuf *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = -1;
	bool in_key = true, want = false, done = false;
	int seq_depth = 0;

	memset(kv, 0, sizeof *kv);
	if (!yaml_parser_initialize(&p))
		return errbuf_set(e, ERRBUF_INTERNAL, "yaml: init failed");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			errbuf_set(e, ERRBUF_INPUT, "policy:%zu:%zu: %s",
			    p.problem_mark.line + 1, p.problem_mark.column + 1,
			    p.problem ? p.problem : "YAML error");
			goto out;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (want && depth == 1 &&
			    ev.type == YAML_SEQUENCE_START_EVENT) {
				kv->is_seq = true;
				kv->flow = ev.data.sequence_start.style ==
				    YAML_FLOW_SEQUENCE_STYLE;
				kv->seq_start = fix_mark_byte(buf, len,
				    &ev.start_mark);
				seq_depth = depth + 1;
			}
			depth++;
			if (depth > POLICY_MAX_DEPTH) {
				errbuf_set(e, ERRBUF_INPUT, "policy: too deep");
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (seq_depth != 0 && depth == seq_depth) {
				kv->seq_end = fix_mark_byte(buf, len,
				    &ev.end_mark);
				seq_depth = 0;
				want = false;
				in_key = true;
			}
			depth--;
			if (depth == 1 && !want)
				in_key = true;
			break;
		case YAML_SCALAR_EVENT:
			if (seq_depth != 0 && depth == seq_depth) {
				struct fix_scalar *s;

				if (kv->nitems >= sizeof kv->items /
				    sizeof kv->items[0])
					break;
				s = &kv->items[kv->nitems++];
				s->start = fix_mark_byte(buf, len,
				    &ev.start_mark);
				s->end = fix_mark_byte(buf, len, &ev.end_mark);
				snprintf(s->text, sizeof s->text, "%.*s",
				    (int)ev.data.scalar.length,
				    (const char *)ev.data.scalar.value);
			} else if (depth == 1 && in_key) {
				if (strcmp((const char *)ev.data.scalar.value,
				    key) == 0) {
					kv->found = true;
					kv->key_end = fix_mark_byte(buf, len,
					    &ev.end_mark);
					want = true;
				}
				in_key = false;
			} else if (depth == 1) {
				if (want) {
					kv->has_value = true;
					kv->value.start = fix_mark_byte(buf,
					    len, &ev.start_mark);
					kv->value.end = fix_mark_byte(buf, len,
					    &ev.end_mark);
					snprintf(kv->value.text,
					    sizeof kv->value.text, "%.*s",
					    (int)ev.data.scalar.length,
					    (const char *)ev.data.scalar.value);
					want = false;
				}
				in_key = true;
			}
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	rc = 0;
out:
	yaml_parser_delete(&p);
	return rc;
}

/* buf with [a, b) replaced by rep.  Caller frees. */
static char *
fix_splice(const char *buf, size_t len, size_t a, size_t b, const char *rep)
{
	return xasprintf("%.*s%s%.*s", (int)a, buf, rep, (int)(len - b),
	    buf + b);
}

char *
fix_policy_remove_flaw(const char *buf, size_t len, const char *flaw,
    struct errbuf *e)
{
	struct fix_keyval kv;
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
	while (a > 0 && buf[a - 1] != '\n')
		a--;
	b = kv.items[i].end;
	while (b < len && buf[b] != '\n')
		b++;
	if (b < len)
		b++;
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

char *
fix_policy_set_variant(const char *buf, size_t len, const char *variant,
    struct errbuf *e)
{
	const struct variant *to = variant_find(variant), *from;
	struct fix_keyval kv, kb;
	char *cur, *next;
	size_t i;

	if (to == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "unknown variant '%s' (known: %s)",
		    variant, variant_ids());
		return NULL;
	}
	if (fix_yaml_find(buf, len, "variant", &kv, e) == -1)
		return NULL;
	from = variant_find(kv.found && kv.has_value ? kv.value.text :
	    "default");
	if (from == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "policy: unknown variant");
		return NULL;
	}
	/* Bait ids first (later offsets), each mapped by kind. */
	if (fix_yaml_find(buf, len, "bait", &kb, e) == -1)
		return NULL;
	cur = xstrndup(buf, len);
	for (i = kb.nitems; i-- > 0;) {
		const char *id = kb.items[i].text, *rep = NULL;

		if (strcmp(id, from->bait_credential) == 0)
			rep = to->bait_credential;
		else if (strcmp(id, from->bait_instruction) == 0)
			rep = to->bait_instruction;
		else if (strcmp(id, from->bait_tripwire) == 0)
			rep = to->bait_tripwire;
		if (rep == NULL) {
			free(cur);
			errbuf_set(e, ERRBUF_INPUT, "policy: bait '%s' is not "
			    "one of variant %s's", id, from->id);
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
		    kv.value.end, variant);
	else if (kv.found) {
		free(cur);
		errbuf_set(e, ERRBUF_INPUT, "policy: variant: not a scalar");
		return NULL;
	} else {
		size_t l = strlen(cur);

		next = xasprintf("%s%svariant: %s\n", cur,
		    l > 0 && cur[l - 1] != '\n' ? "\n" : "", variant);
	}
	free(cur);
	return next;
}

char *
fix_unified_diff(const char *a, const char *b, const char *name_a,
    const char *name_b)
{
	/* Split both into lines, take the common prefix and suffix, emit
	 * one hunk with the middle (edits here are local). */
	const char *la[4096], *lb[4096];
	size_t ea[4096], eb[4096], na = 0, nb = 0, pre = 0, suf = 0, i;
	const char *p;
	size_t used = 0, cap = 4096;
	char *out = xmalloc(cap);
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
#define FIX_PUT(...) do { \
	int k_ = snprintf(out + used, cap - used, __VA_ARGS__); \
	if (k_ >= 0 && (size_t)k_ >= cap - used) { \
		cap = cap * 2 + (size_t)k_; out = xrealloc(out, cap); \
		k_ = snprintf(out + used, cap - used, __VA_ARGS__); \
	} \
	if (k_ > 0) used += (size_t)k_; } while (0)
	out[0] = '\0';
	FIX_PUT("--- %s\n+++ %s\n", name_a, name_b);
	if (pre == na && pre == nb)
		return out;
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
	return out;
}
