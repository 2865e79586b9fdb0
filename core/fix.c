/*
 * fix.c - the fix loop (docs/fix.md): from a breached drill, attribute the
 * flaw(s) deterministically from the evidence, turn the flaw off in the
 * policy (a minimal text edit that keeps comments, re-parsed to prove it
 * is valid), rerun in a fresh lab on the same variant and on a held-out
 * variant, and only then propose the change: a git branch + commit, a
 * pull-request text (pr.md) and, when configured, a GitHub pull request
 * and a Slack message.
 *
 * No model is in this path: attribution is a pure function over parsed
 * evidence lines (fix_attribute), testable without Docker.  Every step is
 * a beat handed to the caller as it happens and a line of the fix's own
 * hash-chained evidence (RUNS/fix-<id>/evidence.jsonl); the summary
 * fix.json is signed like a report.
 *
 * This file holds attribution, the evidence of a run and the loop; the
 * policy edits are in fix_yaml.c, git in fix_git.c, GitHub and Slack in
 * fix_notify.c, the pull-request text in fix_pr.c and ares verify on a
 * fix dir in fix_verify.c.
 */
#include "internal.h"

#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#define FIX_EVENTS_MAX     100000               /* lines per run */
#define FIX_CHAIN_FILES    32                   /* evidence/ files */

/* ---- attribution ---------------------------------------------------- */

/*
 * The sensor event carried by one evidence line, whatever chain it came
 * from: a master-chain "sensor" line carries the datagram in "event"; a
 * sensor chain line is the event itself (its "type" is the kind); other
 * master lines (orphan, verdict) are their own kind.  *kind gets the kind.
 */
static const cJSON *
fix_event_of(const cJSON *line, const char **kind)
{
	const char *type = util_json_str(line, "type", NULL);
	const cJSON *ev;

	*kind = NULL;
	if (type != NULL && strcmp(type, "sensor") == 0) {
		ev = cJSON_GetObjectItemCaseSensitive(line, "event");
		if (cJSON_IsObject(ev)) {
			*kind = util_json_str(ev, "kind", NULL);
			return ev;
		}
		*kind = util_json_str(line, "kind", NULL);
		return line;
	}
	if (type == NULL)
		type = util_json_str(line, "kind", NULL);
	*kind = type;
	return line;
}

/* One match of an event against a flaw. */
struct fix_match {
	const char *flaw;
	bool breakout;
	char what[200];
	int order;
};

/*
 * Which flaws one event proves were used: the attribution rule of every
 * flaw of the catalogue whose evidence kinds name the event's kind
 * (flaw_table[].evidence and .attribute, core/flaw.c), the matches listed
 * by the flaws' attribute_order, then in catalogue order.  "breakout"
 * marks evidence that is itself part of the breach (an orphan, a leak, an
 * event after the cut-off), rather than use along the way.
 */
static size_t
fix_match_event(const cJSON *line, struct fix_match m[FLAW_MAX])
{
	struct flaw_event x;
	size_t i, j, n = 0;

	x.ev = fix_event_of(line, &x.kind);
	x.post = util_json_true(line, "breach");
	if (x.kind == NULL)
		return 0;
	for (i = 0; i < flaw_count && n < FLAW_MAX; i++) {
		const struct flaw *f = &flaw_table[i];

		if (f->attribute == NULL || !flaw_sees(f, x.kind))
			continue;
		m[n].breakout = false;
		if (!f->attribute(&x, m[n].what, sizeof m[n].what,
		    &m[n].breakout))
			continue;
		m[n].flaw = f->id;
		m[n].order = f->attribute_order;
		for (j = n++; j > 0 && m[j - 1].order > m[j].order; j--) {
			struct fix_match t = m[j];

			m[j] = m[j - 1];
			m[j - 1] = t;
		}
	}
	return n;
}

int
fix_attribute(const cJSON *lines, const char *const *flaws_on,
    size_t nflaws_on, struct fix_attribution *out)
{
	const cJSON *line;
	size_t i, idx = 0;
	bool any_breakout = false;

	memset(out, 0, sizeof *out);
	if (!cJSON_IsArray(lines))
		return -1;
	cJSON_ArrayForEach(line, lines) {
		struct fix_match m[FLAW_MAX];
		size_t k, n = fix_match_event(line, m);

		idx++;
		for (k = 0; k < n; k++) {
			struct fix_hit *h = NULL;
			bool on = false;

			for (i = 0; i < nflaws_on; i++)
				if (flaws_on[i] != NULL &&
				    strcmp(flaws_on[i], m[k].flaw) == 0)
					on = true;
			if (!on) {
				for (i = 0; i < out->noff; i++)
					if (strcmp(out->off[i], m[k].flaw) == 0)
						break;
				if (i == out->noff && out->noff < FIX_MAX_HITS)
					snprintf(out->off[out->noff++],
					    sizeof out->off[0], "%s",
					    m[k].flaw);
				continue;
			}
			for (i = 0; i < out->nhits; i++)
				if (strcmp(out->hits[i].flaw, m[k].flaw) == 0)
					h = &out->hits[i];
			if (h == NULL) {
				if (out->nhits >= FIX_MAX_HITS)
					continue;
				h = &out->hits[out->nhits++];
				snprintf(h->flaw, sizeof h->flaw, "%s",
				    m[k].flaw);
				h->first_line = idx;
				util_sanitize(h->evidence, sizeof h->evidence,
				    m[k].what, strlen(m[k].what), false);
			}
			h->events++;
			if (m[k].breakout && !h->breakout) {
				/* Prefer the breakout line as the example. */
				h->breakout = true;
				util_sanitize(h->evidence, sizeof h->evidence,
				    m[k].what, strlen(m[k].what), false);
			}
			if (m[k].breakout)
				any_breakout = true;
		}
	}
	/* Order: breakout evidence first, then by first evidence line. */
	for (i = 1; i < out->nhits; i++) {
		size_t j = i;

		while (j > 0 && ((out->hits[j].breakout &&
		    !out->hits[j - 1].breakout) ||
		    (out->hits[j].breakout == out->hits[j - 1].breakout &&
		    out->hits[j].first_line < out->hits[j - 1].first_line))) {
			struct fix_hit t = out->hits[j];

			out->hits[j] = out->hits[j - 1];
			out->hits[j - 1] = t;
			j--;
		}
	}
	out->breakout = any_breakout;
	return (int)out->nhits;
}

/* ---- evidence of a run ---------------------------------------------- */

/* Append every JSON line of path to arr (bounded: the file takes its
 * size from *budget, the bytes left for the run's files).  -1 + e. */
static int
fix_load_file(const char *path, cJSON *arr, size_t *budget,
    struct errbuf *e)
{
	size_t len, count = (size_t)cJSON_GetArraySize(arr);
	char *buf = util_read_file(path, *budget, &len, e), *p, *nl;

	if (buf == NULL)
		return -1;
	*budget -= len;
	for (p = buf; p < buf + len; p = nl + 1) {
		cJSON *j;

		nl = memchr(p, '\n', (size_t)(buf + len - p));
		if (nl == NULL)
			nl = buf + len;
		if (nl == p)
			continue;
		/* count, not cJSON_GetArraySize(): that walks the list, and
		 * once per line made loading quadratic */
		if ((size_t)(nl - p) > EVIDENCE_LINE_MAX ||
		    count >= FIX_EVENTS_MAX) {
			free(buf);
			return errbuf_set(e, ERRBUF_INPUT, "%s: line too long "
			    "or too many lines", path);
		}
		j = cJSON_ParseWithLength(p, (size_t)(nl - p));
		if (j == NULL) {
			free(buf);
			return errbuf_set(e, ERRBUF_INPUT, "%s: a line is not "
			    "JSON", path);
		}
		cJSON_AddItemToArray(arr, j);
		count++;
	}
	free(buf);
	return 0;
}

/* Every line of RUN_DIR/evidence.jsonl, then of each RUN_DIR/evidence/
 * *.jsonl (in name order, among its first FIX_CHAIN_FILES entries),
 * parsed, within one FIX_FILE_MAX budget.  NULL + e.  Caller deletes. */
cJSON *
fix_load_evidence(const char *run_dir, struct errbuf *e)
{
	cJSON *arr = cJSON_CreateArray();
	char *path = xasprintf("%s/evidence.jsonl", run_dir);
	struct dirent **names = NULL;
	size_t budget = FIX_FILE_MAX;
	int n, i, rc;

	/* one budget for all the files: parsed, every line stays in memory
	 * (up to ~32 bytes of cJSON tree per byte) */
	rc = fix_load_file(path, arr, &budget, e);
	free(path);
	if (rc == -1) {
		cJSON_Delete(arr);
		return NULL;
	}
	path = xasprintf("%s/evidence", run_dir);
	n = scandir(path, &names, NULL, alphasort);
	free(path);
	for (i = 0; i < n; i++) {
		const char *fn = names[i]->d_name;
		size_t len = strlen(fn);

		if (rc == 0 && i < FIX_CHAIN_FILES && fn[0] != '.' && len > 6 &&
		    strcmp(fn + len - 6, ".jsonl") == 0) {
			char *p = xasprintf("%s/evidence/%s", run_dir, fn);

			rc = fix_load_file(p, arr, &budget, e);
			free(p);
		}
		free(names[i]);
	}
	free(names);
	if (rc == -1) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

/* The run id, policy, variant, seed, flaws and verdict of a run, from its
 * master chain's genesis, drill.start, lab.up and verdict lines.  0, -1
 * when one of drill.start, lab.up, verdict is missing. */
int
fix_run_info(const cJSON *lines, struct fix_run_info *info)
{
	const cJSON *line;
	int found = 0;

	memset(info, 0, sizeof *info);
	cJSON_ArrayForEach(line, lines) {
		const char *type = util_json_str(line, "type", NULL);
		const cJSON *fl, *f;
		double seed;

		if (type == NULL)
			continue;
		if (strcmp(type, "genesis") == 0 && info->run_id[0] == '\0' &&
		    util_json_str(line, "run_id", NULL) != NULL)
			snprintf(info->run_id, sizeof info->run_id, "%s",
			    util_json_str(line, "run_id", NULL));
		else if (strcmp(type, "drill.start") == 0) {
			if (util_json_str(line, "policy", NULL) != NULL)
				snprintf(info->policy, sizeof info->policy, "%s",
				    util_json_str(line, "policy", NULL));
			if (util_json_str(line, "variant", NULL) != NULL)
				snprintf(info->variant, sizeof info->variant,
				    "%s", util_json_str(line, "variant", NULL));
			/* 0 <= seed < 2^64, else no seed (casting any other
			 * double is undefined) */
			seed = util_json_num(line, "seed", 0);
			info->seed = seed >= 0 && seed < 18446744073709551616.0 ?
			    (uint64_t)seed : 0;
			found |= 1;
		} else if (strcmp(type, "lab.up") == 0) {
			fl = cJSON_GetObjectItemCaseSensitive(line, "flaws");
			cJSON_ArrayForEach(f, fl)
				if (cJSON_IsString(f) &&
				    info->nflaws < POLICY_MAX_FLAWS)
					snprintf(info->flaws[info->nflaws++],
					    sizeof info->flaws[0], "%s",
					    f->valuestring);
			found |= 2;
		} else if (strcmp(type, "verdict") == 0 &&
		    util_json_str(line, "verdict", NULL) != NULL) {
			snprintf(info->verdict, sizeof info->verdict, "%s",
			    util_json_str(line, "verdict", NULL));
			found |= 4;
		}
		/* Only the master chain (first) carries these types. */
	}
	return found == 7 ? 0 : -1;
}

/* ---- the loop ---------------------------------------------------------- */

struct fix_state {
	const struct fix_options *o;
	struct fix_result *r;
	struct evidence *ev;
	uint64_t t0;
	bool engine_seen;   /* a drill of this fix reached the engine */
	/* the loop's work */
	struct drill_result *d;     /* the last drill */
	char *orig;                 /* the policy text as given */
	char *text;                 /* it with the flaws turned off so far */
	struct policy *cur;         /* text, parsed */
	char training[40];          /* the policy's variant */
	const char *heldout;        /* the variant it is re-checked on */
	uint64_t seed;
	uint64_t training_vseed;    /* the training variant's variant_seed */
	bool training_vseed_set;    /* (policy variant: generated) */
	char run_dir[1024];         /* the breached run to attribute */
	char cur_path[1200];        /* where text is written */
	char given_policy[1024];    /* the given run's policy (o->policy_path
	                               when the options name none) */
	/* An imported Compose policy (fix_compose.c): */
	char *compose_text;         /* the Compose file with the entries cut so
	                               far; NULL: not (or no longer) patched */
	char *compose_orig;         /* as read */
	char compose_cur[1200];     /* the file whose text is compose_text */
	char *drill_text;           /* the policy the reruns use (re-imported
	                               from the patched file), or NULL: text */
	char agent_opt[1100];       /* import_opts.agent for the re-import */
};

static void fix_beat(struct fix_state *st, const char *type, cJSON *fields,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A beat: to the caller as it happens and a line of the fix chain.
 * Takes fields (may be NULL). */
static void
fix_beat(struct fix_state *st, const char *type, cJSON *fields,
    const char *fmt, ...)
{
	char text[1024], safe[1024];
	va_list ap;
	struct errbuf e = { 0 };

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	util_sanitize(safe, sizeof safe, text, strlen(text), false);
	if (fields == NULL)
		fields = cJSON_CreateObject();
	cJSON_AddStringToObject(fields, "text", safe);
	if (st->ev != NULL && evidence_append(st->ev, type, util_mono_ns(),
	    fields, &e) == -1)
		st->r->evidence_failed = true;
	cJSON_Delete(fields);
	if (st->o->observer != NULL)
		st->o->observer(st->o->observer_ctx,
		    (double)(util_mono_ns() - st->t0) / 1e6, type, safe);
}

/* BLAKE2b-256 hex of a file ("" when unreadable). */
static void
fix_hash_hex(const char *path, char out[EVIDENCE_HEX_BYTES])
{
	uint8_t h[32];
	struct errbuf e = { 0 };

	out[0] = '\0';
	if (sign_hash_file(path, h, sizeof h, NULL, &e) == 0)
		util_hex(h, sizeof h, out);
}

/*
 * The dressing a run used, as its lab recorded it: RUN_DIR/lab.json
 * "variant" (a shipped id, or "gen-<16 hex of the seed>" for a generated
 * one) into x->variant, its seed into x->variant_seed.  Leaves x->variant
 * as it is when lab.json cannot be read (a run in error).
 */
static void
fix_run_dressing(const char *run_dir, struct fix_run_ref *x)
{
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/lab.json", run_dir), *buf;
	const char *v;
	size_t len;
	cJSON *j;

	buf = util_read_regular(path, 1 << 20, &len, &e);
	free(path);
	j = buf != NULL ? cJSON_ParseWithLength(buf, len) : NULL;
	free(buf);
	v = util_json_str(j, "variant", NULL);
	if (v != NULL && strlen(v) < sizeof x->variant) {
		snprintf(x->variant, sizeof x->variant, "%s", v);
		x->has_variant_seed = fix_variant_id_seed(v, &x->variant_seed);
	}
	cJSON_Delete(j);
}

/* Whether id is a generated variant's ("gen-" + 16 lower-case hex
 * digits); *seed gets the seed. */
bool
fix_variant_id_seed(const char *id, uint64_t *seed)
{
	uint64_t s = 0;
	size_t i;

	if (strncmp(id, "gen-", 4) != 0 || strlen(id) != 20)
		return false;
	for (i = 4; i < 20; i++) {
		char c = id[i];

		if (c >= '0' && c <= '9')
			s = s << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			s = s << 4 | (uint64_t)(c - 'a' + 10);
		else
			return false;
	}
	*seed = s;
	return true;
}

/*
 * The seed of the generated held-out dressing: for counter 0, 1, ... up
 * to FIX_HELDOUT_TRIES, the first 8 bytes (little-endian) of
 * BLAKE2b-256("ares-heldout-v1\0" RUN_ID "\0" COUNTER), the counter as 4
 * bytes little-endian, its top bit cleared (a policy's variant_seed: is
 * 0..2^63-1); the first that is none of used[0..nused).  0 with *seed
 * and *counter, -1 when every try hits a used seed (fail closed: no
 * held-out seed is better than a reused one).
 */
int
fix_heldout_seed(const char *run_id, const uint64_t *used, size_t nused,
    uint64_t *seed, unsigned *counter)
{
	unsigned c;
	size_t i;

	for (c = 0; c < FIX_HELDOUT_TRIES; c++) {
		static const char tag[] = "ares-heldout-v1";   /* with its NUL */
		crypto_generichash_state hs;
		uint8_t h[32], cb[4];
		uint64_t s = 0;
		int k;

		for (k = 0; k < 4; k++)
			cb[k] = (uint8_t)(c >> (8 * k));
		crypto_generichash_init(&hs, NULL, 0, sizeof h);
		crypto_generichash_update(&hs, (const unsigned char *)tag,
		    sizeof tag);
		crypto_generichash_update(&hs, (const unsigned char *)run_id,
		    strlen(run_id) + 1);
		crypto_generichash_update(&hs, cb, sizeof cb);
		crypto_generichash_final(&hs, h, sizeof h);
		for (k = 7; k >= 0; k--)
			s = s << 8 | h[k];
		s &= INT64_MAX;   /* a variant_seed a policy can name */
		for (i = 0; i < nused; i++)
			if (used[i] == s)
				break;
		if (i == nused) {
			*seed = s;
			*counter = c;
			return 0;
		}
	}
	return -1;
}

/* Record a drill result as run number r->nruns. */
static struct fix_run_ref *
fix_add_run(struct fix_state *st, const char *role, const char *variant,
    const struct drill_result *d)
{
	struct fix_run_ref *x;
	char *p;

	if (st->r->nruns >= FIX_MAX_RUNS)
		return NULL;
	x = &st->r->runs[st->r->nruns++];
	memset(x, 0, sizeof *x);
	snprintf(x->role, sizeof x->role, "%s", role);
	snprintf(x->run_id, sizeof x->run_id, "%s", d->run_id);
	snprintf(x->run_dir, sizeof x->run_dir, "%s", d->run_dir);
	snprintf(x->variant, sizeof x->variant, "%s", variant);
	snprintf(x->verdict, sizeof x->verdict, "%s",
	    drill_verdict_name(d->verdict));
	util_sanitize(x->reason, sizeof x->reason, d->verdict_reason,
	    strlen(d->verdict_reason), false);
	x->seed = d->seed;
	x->time_to_kill_ms = d->time_to_kill_ms;
	fix_run_dressing(d->run_dir, x);
	p = xasprintf("%s/report.json", d->run_dir);
	fix_hash_hex(p, x->report_hash);
	free(p);
	return x;
}

/*
 * Run drills of policy_path with up to max_seeds seeds (seed, seed+1, ...)
 * until one is exercised.  *d gets the last result.  Returns 0 (a verdict
 * reached, check d->verdict), -1 + e when a drill could not run.
 */
static int
fix_drill_until_exercised(struct fix_state *st, const char *policy_path,
    const char *role, const char *variant, uint64_t seed,
    struct drill_result *d, struct errbuf *e)
{
	int k;

	for (k = 0; k < st->o->max_seeds; k++) {
		struct drill_options o = { 0 };

		if (st->o->cancel != NULL && *st->o->cancel)
			return errbuf_set(e, ERRBUF_INTERNAL, "cancelled");
		o.policy_path = policy_path;
		o.seed = seed + (uint64_t)k;
		o.has_seed = true;
		o.runs_dir = st->o->runs_dir;
		o.key_dir = st->o->key_dir;
		o.cancel = st->o->cancel;
		fix_beat(st, "fix.drill", NULL, "%s drill on variant %s, seed "
		    "%llu ...", role, variant, (unsigned long long)o.seed);
		memset(d, 0, sizeof *d);
		if (drill_run(&o, d, e) == -1) {
			/* the engine answered an earlier drill of this fix:
			 * its loss now fails the fix (5), it is not
			 * "unreachable" (3) */
			if (e->code == ERRBUF_ENGINE && st->engine_seen) {
				e->code = ERRBUF_INTERNAL;
				errbuf_prefix(e, "the engine stopped answering");
			}
			return -1;
		}
		st->engine_seen = true;
		{
			cJSON *f = cJSON_CreateObject();
			struct fix_run_ref *x = fix_add_run(st, role, variant, d);

			cJSON_AddStringToObject(f, "role", role);
			cJSON_AddStringToObject(f, "run_id", d->run_id);
			cJSON_AddStringToObject(f, "run_dir", d->run_dir);
			cJSON_AddStringToObject(f, "variant", x != NULL ?
			    x->variant : variant);
			if (x != NULL && x->has_variant_seed) {
				char num[24];

				/* a string: a double loses 64-bit seeds */
				snprintf(num, sizeof num, "%llu",
				    (unsigned long long)x->variant_seed);
				cJSON_AddStringToObject(f, "variant_seed", num);
			}
			cJSON_AddNumberToObject(f, "seed", (double)d->seed);
			cJSON_AddStringToObject(f, "verdict",
			    drill_verdict_name(d->verdict));
			cJSON_AddNumberToObject(f, "time_to_kill_ms",
			    d->time_to_kill_ms);
			if (x != NULL)
				cJSON_AddStringToObject(f, "report_blake2b256",
				    x->report_hash);
			fix_beat(st, "fix.run", f, "%s run %s: %s (%s)", role,
			    d->run_id, drill_verdict_name(d->verdict),
			    d->verdict_reason);
		}
		if (d->verdict != DRILL_VERDICT_NOT_EXERCISED)
			return 0;
	}
	return 0;
}

/* Write policy text to the fix dir under name, its relative paths made
 * absolute as the given policy resolved them (fix_policy_pin_paths: the
 * copy lives in another directory), re-parse it.  The parsed policy is
 * returned (caller frees) or NULL + e. */
static struct policy *
fix_write_policy(struct fix_state *st, const char *name, const char *text,
    char *path_out, size_t path_len, struct errbuf *e)
{
	char *pinned = fix_policy_pin_paths(text, strlen(text), st->cur, e);
	struct policy *np;
	int rc;

	if (pinned == NULL)
		return NULL;
	snprintf(path_out, path_len, "%s/%s", st->r->fix_dir, name);
	rc = util_write_file(path_out, pinned, strlen(pinned), 0644, e);
	free(pinned);
	if (rc == -1)
		return NULL;
	np = policy_load(path_out, e);
	if (np != NULL && st->cur != NULL && (np->agent_kind !=
	    st->cur->agent_kind || (st->cur->agent_script != NULL &&
	    (np->agent_script == NULL || strcmp(np->agent_script,
	    st->cur->agent_script) != 0)))) {
		policy_free(np);
		errbuf_set(e, ERRBUF_INTERNAL, "%s: the copy's agent is not the "
		    "policy's: refused", path_out);
		return NULL;
	}
	return np;
}

/* Attribute from a run dir's evidence among the flaws still on. */
static int
fix_attribute_run(const char *run_dir, const struct policy *p,
    struct fix_attribution *a, struct errbuf *e)
{
	cJSON *lines = fix_load_evidence(run_dir, e);
	int n;

	if (lines == NULL)
		return -1;
	n = fix_attribute(lines, (const char *const *)p->flaws, p->nflaws, a);
	cJSON_Delete(lines);
	return n;
}

/* Pick the first held-out variant other than training (or o->heldout). */
static const char *
fix_heldout_variant(const struct fix_options *o, const char *training)
{
	size_t i;

	if (o->heldout != NULL)
		return o->heldout;
	for (i = 0; i < variant_count; i++)
		if (variant_table[i].held_out &&
		    strcmp(variant_table[i].id, training) != 0)
			return variant_table[i].id;
	return NULL;
}

/* Sign fix.json, copy the public key. */
static int
fix_sign(struct fix_state *st, const char *json_path, struct errbuf *e)
{
	struct sign_secret *sk = sign_secret_open(st->o->key_dir, e);
	char *comment;
	int rc;

	if (sk == NULL)
		return -1;
	comment = xasprintf("ares-fix-v1 fix=%s outcome=%s evidence.jsonl=%zu:%s",
	    st->r->fix_id, fix_outcome_name(st->r->outcome),
	    evidence_count(st->ev), evidence_head_hex(st->ev));
	rc = sign_file_with_pub(sk, json_path, comment, e);
	free(comment);
	sign_secret_free(sk);
	return rc;
}

/* fix.json's object for r (format ares-fix-v1; the loop adds the chain's
 * count and head).  Caller deletes. */
cJSON *
fix_result_json(const struct fix_result *r)
{
	cJSON *j = cJSON_CreateObject(), *a, *x;
	size_t i;

	cJSON_AddStringToObject(j, "format", "ares-fix-v1");
	cJSON_AddStringToObject(j, "fix_id", r->fix_id);
	cJSON_AddStringToObject(j, "fix_dir", r->fix_dir);
	cJSON_AddStringToObject(j, "policy", r->policy_path);
	cJSON_AddStringToObject(j, "policy_name", r->policy_name);
	cJSON_AddStringToObject(j, "outcome", fix_outcome_name(r->outcome));
	cJSON_AddStringToObject(j, "reason", r->reason);
	a = cJSON_AddArrayToObject(j, "attributed");
	for (i = 0; i < r->nattributed; i++) {
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "flaw", r->attributed[i].flaw);
		cJSON_AddBoolToObject(x, "breakout", r->attributed[i].breakout);
		cJSON_AddNumberToObject(x, "events",
		    (double)r->attributed[i].events);
		cJSON_AddStringToObject(x, "evidence",
		    r->attributed[i].evidence);
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(j, "removed");
	for (i = 0; i < r->nremoved; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(r->removed[i]));
	a = cJSON_AddArrayToObject(j, "runs");
	for (i = 0; i < r->nruns; i++) {
		const struct fix_run_ref *y = &r->runs[i];

		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "role", y->role);
		cJSON_AddStringToObject(x, "run_id", y->run_id);
		cJSON_AddStringToObject(x, "run_dir", y->run_dir);
		cJSON_AddStringToObject(x, "variant", y->variant);
		if (y->has_variant_seed) {
			char num[24];

			/* a decimal string: a double loses a 64-bit seed */
			snprintf(num, sizeof num, "%llu",
			    (unsigned long long)y->variant_seed);
			cJSON_AddStringToObject(x, "variant_seed", num);
		} else
			cJSON_AddNullToObject(x, "variant_seed");
		cJSON_AddNumberToObject(x, "seed", (double)y->seed);
		cJSON_AddStringToObject(x, "verdict", y->verdict);
		cJSON_AddNumberToObject(x, "time_to_kill_ms",
		    y->time_to_kill_ms);
		cJSON_AddStringToObject(x, "report_blake2b256",
		    y->report_hash);
		cJSON_AddItemToArray(a, x);
	}
	cJSON_AddNumberToObject(j, "iterations", (double)r->iterations);
	cJSON_AddStringToObject(j, "heldout", r->heldout_shipped);
	if (r->heldout_gen) {
		char num[24];

		x = cJSON_AddObjectToObject(j, "heldout_generated");
		cJSON_AddStringToObject(x, "variant", r->heldout_gen_id);
		snprintf(num, sizeof num, "%llu",
		    (unsigned long long)r->heldout_gen_seed);
		cJSON_AddStringToObject(x, "variant_seed", num);
		cJSON_AddNumberToObject(x, "counter",
		    (double)r->heldout_gen_counter);
		cJSON_AddStringToObject(x, "company", r->heldout_gen_company);
		cJSON_AddStringToObject(x, "service", r->heldout_gen_service);
		{
			char *cmd = xasprintf("ares variant gen --seed %s", num);

			cJSON_AddStringToObject(x, "regenerate", cmd);
			free(cmd);
		}
	} else
		cJSON_AddNullToObject(j, "heldout_generated");
	cJSON_AddStringToObject(j, "patched_policy", r->patched_path);
	cJSON_AddStringToObject(j, "patch", r->patch_path);
	x = cJSON_AddObjectToObject(j, "git");
	cJSON_AddBoolToObject(x, "in_repo", r->git.in_repo);
	cJSON_AddBoolToObject(x, "committed", r->git.committed);
	cJSON_AddStringToObject(x, "branch", r->git.branch);
	cJSON_AddStringToObject(x, "commit", r->git.commit);
	cJSON_AddStringToObject(x, "base", r->git.base_branch);
	cJSON_AddStringToObject(x, "path", r->git.path_in_repo);
	cJSON_AddNumberToObject(j, "github_status", (double)r->github_status);
	cJSON_AddStringToObject(j, "pr_url", r->pr_url);
	cJSON_AddNumberToObject(j, "slack_status", (double)r->slack_status);
	cJSON_AddBoolToObject(j, "pushed", r->pushed);
	cJSON_AddNumberToObject(j, "slack_posted", (double)r->slack_posted);
	cJSON_AddBoolToObject(j, "delivery_failed", r->delivery_failed);
	cJSON_AddBoolToObject(j, "model_section", r->model_section);
	if (r->compose_path[0] != '\0') {
		x = cJSON_AddObjectToObject(j, "compose");
		cJSON_AddStringToObject(x, "path", r->compose_path);
		cJSON_AddStringToObject(x, "service", r->compose_service);
		cJSON_AddBoolToObject(x, "patched", r->compose_patched);
		cJSON_AddStringToObject(x, "note", r->compose_note);
	}
	return j;
}


/* The branch of the proposal: ares/fix-<first flaw>-<8 hex of the fix
 * id>.  Caller frees. */
static char *
fix_branch_name(const struct fix_result *r)
{
	char shortid[9];

	snprintf(shortid, sizeof shortid, "%.8s", strrchr(r->fix_id, '-') ?
	    strrchr(r->fix_id, '-') + 1 : r->fix_id);
	return xasprintf("ares/fix-%s-%s", r->removed[0], shortid);
}

/* The patched policy as a commit on a new branch (fix_git_commit) and its
 * fix.git beat: committed, failed, or not in a work tree. */
static void
fix_propose_git(struct fix_state *st, const char *patched,
    const char *branch, const char *msg)
{
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };

	struct fix_git_file files[2] = {
		{ .path = r->policy_path, .text = patched },
		{ .path = NULL, .text = NULL },
	};
	size_t nfiles = 1;

	if (r->compose_patched && st->compose_text != NULL) {
		/* the policy's repository, the Compose file with it only when
		 * it is in the same work tree: imported.compose may name any
		 * file, and the fix never commits to (or pushes) a repository
		 * the policy is not in */
		files[1] = (struct fix_git_file){ .path = r->compose_path,
		    .text = st->compose_text };
		nfiles = 2;
	}
	if (fix_git_commit_files(files, nfiles, branch, msg, &r->git,
	    &e) == -1) {
		fix_beat(st, "fix.git", NULL, "git: %s (the patched policy and "
		    "the patch are in the fix dir)", e.msg);
	} else if (r->git.committed) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddStringToObject(f, "branch", r->git.branch);
		cJSON_AddStringToObject(f, "commit", r->git.commit);
		cJSON_AddStringToObject(f, "repo", r->git.toplevel);
		cJSON_AddStringToObject(f, "path", r->git.path_in_repo);
		if (nfiles == 2)
			cJSON_AddBoolToObject(f, "compose", files[1].committed);
		fix_beat(st, "fix.git", f, "branch %s, commit %.12s in %s "
		    "(work tree and HEAD untouched)%s%s", r->git.branch,
		    r->git.commit, r->git.toplevel, nfiles == 2 ?
		    ": the policy " : "", nfiles == 2 ?
		    (files[1].committed ? "and the Compose file" : "(the "
		    "Compose file is outside the policy's work tree: not "
		    "committed; its patch is in the fix dir)") : "");
	} else
		fix_beat(st, "fix.git", NULL, "%s is not in a git work tree: "
		    "wrote the patched policy %s and the patch %s instead",
		    files[0].path, r->patched_path, r->patch_path);
}

/* FIX_DIR/pr.md: the title, the body and the branch when committed; its
 * fix.pr beat.  r->pr_path names it (even when it could not be written). */
static void
fix_write_pr(struct fix_state *st, const char *title, const char *body)
{
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/pr.md", r->fix_dir);
	char *md = xasprintf("# %s\n\n%s%s%s%s", title, body,
	    r->git.committed ? "\nBranch: `" : "",
	    r->git.committed ? r->git.branch : "",
	    r->git.committed ? "`\n" : "");

	if (util_write_file(path, md, strlen(md), 0644, &e) == -1)
		fix_beat(st, "fix.pr", NULL, "pr.md: %s", e.msg);
	else
		fix_beat(st, "fix.pr", NULL, "pull request text "
		    "written to %s", path);
	free(md);
	free(path);
	snprintf(r->pr_path, sizeof r->pr_path, "%s/pr.md", r->fix_dir);
}

/*
 * git push REMOTE BRANCH when --push asked for it, with its fix.push beat
 * (what git said, bounded, secrets redacted).  true when the pull request
 * may be opened: nothing was asked, or the push succeeded.
 */
static bool
fix_propose_push(struct fix_state *st, const char *branch)
{
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };
	char out[4096], shown[1024], *red, *remote;
	cJSON *f;
	int rc;

	if (st->o->push_remote == NULL)
		return true;
	remote = fix_redact_secrets(st->o->push_remote);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "remote", remote);
	cJSON_AddStringToObject(f, "branch", branch);
	if (!r->git.committed) {
		r->delivery_failed = true;
		cJSON_AddBoolToObject(f, "ok", false);
		fix_beat(st, "fix.push", f, "push to %s: nothing to push (no "
		    "commit: the policy is not in a git work tree, or the "
		    "commit failed); no pull request", remote);
		free(remote);
		return false;
	}
	rc = fix_git_push(r->git.toplevel, st->o->push_remote, branch, out,
	    sizeof out, &e);
	red = fix_redact_secrets(rc == -1 ? e.msg : out);
	util_sanitize(shown, sizeof shown, red, strlen(red), false);
	free(red);
	cJSON_AddBoolToObject(f, "ok", rc == 0);
	cJSON_AddNumberToObject(f, "status", rc);
	cJSON_AddStringToObject(f, "git", shown);
	if (rc == 0) {
		r->pushed = true;
		fix_beat(st, "fix.push", f, "pushed %s to %s", branch, remote);
	} else {
		r->delivery_failed = true;
		fix_beat(st, "fix.push", f, "push of %s to %s failed (%s%d): "
		    "%s; no pull request", branch, remote, rc == -1 ? "" :
		    "git exit ", rc, shown);
	}
	free(remote);
	return rc == 0;
}

/* The GitHub pull request: sent only with a token and --github, after
 * the push when --push asked for one (not at all when it failed); either
 * way FIX_DIR/github-request.json says what is (or would be) sent. */
static void
fix_propose_github(struct fix_state *st, const char *branch,
    const char *title, const char *body, bool pushed_ok)
{
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };
	const char *token = getenv("GITHUB_TOKEN");
	const char *api = st->o->github_api;
	const char *base;
	char *path;

	base = st->o->github_base ? st->o->github_base :
	    r->git.base_branch[0] && strcmp(r->git.base_branch, "HEAD") != 0 ?
	    r->git.base_branch : "main";
	path = xasprintf("%s/github-request.json", r->fix_dir);
	if (!pushed_ok) {
		fix_github_pr_unsent(api, st->o->github_repo ?
		    st->o->github_repo : "OWNER/REPO", branch, base, title,
		    body, path, "not sent: the push failed");
		fix_beat(st, "fix.github", NULL, "GitHub: nothing sent (the "
		    "push failed); %s says what would be", path);
	} else if (st->o->github_repo != NULL && token != NULL &&
	    token[0] != '\0') {
		if (fix_github_pr(api, st->o->github_repo, token, branch, base,
		    title, body, path, &r->github_status, r->pr_url,
		    sizeof r->pr_url, &e) == -1) {
			char *red = fix_redact_secrets(e.msg);

			r->delivery_failed = true;
			fix_beat(st, "fix.github", NULL, "GitHub: %s", red);
			free(red);
		} else
			fix_beat(st, "fix.github", NULL, "GitHub pull request "
			    "opened (HTTP %ld) %s", r->github_status, r->pr_url);
	} else {
		(void)fix_github_pr(api, st->o->github_repo ?
		    st->o->github_repo : "OWNER/REPO", NULL, branch, base,
		    title, body, path, &r->github_status, r->pr_url,
		    sizeof r->pr_url, &e);
		fix_beat(st, "fix.github", NULL, "GitHub: nothing sent (%s); "
		    "%s says what would be", st->o->github_repo == NULL ?
		    "no --github OWNER/REPO" : "GITHUB_TOKEN unset", path);
	}
	free(path);
}

/* The bot's posts: chat.postMessage to each --slack-channel with
 * $SLACK_BOT_TOKEN (nothing sent without it), each recorded in
 * FIX_DIR/slack-chat-<n>.json, each with its fix.slack beat. */
static void
fix_propose_slack_chat(struct fix_state *st, const char *text)
{
	struct fix_result *r = st->r;
	const char *token = getenv("SLACK_BOT_TOKEN");
	size_t i;

	for (i = 0; i < st->o->nslack_channels; i++) {
		const char *ch = st->o->slack_channels[i];
		char *path = xasprintf("%s/slack-chat-%zu.json", r->fix_dir,
		    i + 1);
		struct errbuf e = { 0 };
		long status = 0;
		cJSON *f = cJSON_CreateObject();

		cJSON_AddStringToObject(f, "channel", ch);
		cJSON_AddStringToObject(f, "record", path);
		if (!fix_slack_channel_ok(ch)) {
			r->delivery_failed = true;
			fix_beat(st, "fix.slack", f, "Slack: channel %zu is not "
			    "a channel id or name: nothing sent", i + 1);
		} else if (token == NULL || token[0] == '\0') {
			(void)fix_slack_chat_post(st->o->slack_api, ch, NULL, text,
			    path, &status, &e);
			fix_beat(st, "fix.slack", f, "Slack %s: nothing sent "
			    "(SLACK_BOT_TOKEN unset); %s says what would be", ch,
			    path);
		} else if (fix_slack_chat_post(st->o->slack_api, ch, token,
		    text, path, &status, &e) == -1) {
			char *red = fix_redact_secrets(e.msg);

			r->delivery_failed = true;
			cJSON_AddNumberToObject(f, "status", (double)status);
			fix_beat(st, "fix.slack", f, "Slack: %s", red);
			free(red);
		} else {
			r->slack_posted++;
			cJSON_AddNumberToObject(f, "status", (double)status);
			fix_beat(st, "fix.slack", f, "Slack message posted to %s "
			    "(chat.postMessage, HTTP %ld)", ch, status);
		}
		free(path);
	}
}

/* The Slack message (inert, bounded: fix_slack_text): posted with a
 * webhook when one is set (either way FIX_DIR/slack-request.json says
 * what is or would be sent), and by the bot to each --slack-channel. */
static void
fix_propose_slack(struct fix_state *st, const char *title)
{
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };
	const char *hook = st->o->slack_webhook;
	char *raw, *slack, *path;

	raw = xasprintf("ares fix %s: %s. %s. Branch %s%s. Runs: %s (%s)%s%s",
	    r->fix_id, title, r->reason, r->git.committed ? r->git.branch :
	    "(none)", r->pushed ? " (pushed)" : "",
	    r->nruns ? r->runs[0].run_id : "?",
	    r->nruns ? r->runs[0].verdict : "?", r->pr_url[0] ? ". PR " : "",
	    r->pr_url);
	slack = fix_slack_text(raw);
	free(raw);
	path = xasprintf("%s/slack-request.json", r->fix_dir);
	if (hook != NULL && hook[0] != '\0') {
		if (fix_slack_post(hook, slack, path, &r->slack_status,
		    &e) == -1) {
			/* the webhook's URL is its secret: never in a beat */
			char *m = fix_redact_secrets(e.msg), *at;

			while ((at = strstr(m, hook)) != NULL) {
				char *n = xasprintf("%.*s(the webhook)%s",
				    (int)(at - m), m, at + strlen(hook));

				free(m);
				m = n;
			}
			r->delivery_failed = true;
			fix_beat(st, "fix.slack", NULL, "Slack: %s", m);
			free(m);
		} else
			fix_beat(st, "fix.slack", NULL, "Slack message posted "
			    "(HTTP %ld)", r->slack_status);
	} else {
		(void)fix_slack_post(NULL, slack, path, &r->slack_status, &e);
		fix_beat(st, "fix.slack", NULL, "Slack: nothing sent (no "
		    "webhook); %s says what would be", path);
	}
	fix_propose_slack_chat(st, slack);
	free(path);
	free(slack);
}

/* The fields of an evidence line that say what happened (not the chain's
 * own: seq, prev, times), "k=v k=v".  Caller frees. */
static char *
fix_summary_fields(const cJSON *line)
{
	static const char *const keys[] = { "bait", "src", "via", "path",
	    "lever", "fired", "verified", "detail", "verdict", "reason",
	    "container", "image", "origin" };
	struct util_buf b;
	size_t k;

	util_buf_init(&b, 256);
	for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(line, keys[k]);

		if (cJSON_IsString(v))
			util_buf_printf(&b, "%s%s=%.200s", b.len ? " " : "",
			    keys[k], v->valuestring);
		else if (cJSON_IsBool(v))
			util_buf_printf(&b, "%s%s=%s", b.len ? " " : "",
			    keys[k], cJSON_IsTrue(v) ? "true" : "false");
	}
	return b.s;
}

/*
 * The evidence summary the model is given (bounded: FIX_SUMMARY_MAX
 * bytes, FIX_SUMMARY_LINES evidence lines of FIX_SUMMARY_LINE bytes):
 * the policy, the attribution (decided already), the runs, then the
 * original run's evidence lines that the catalogue matches to a flaw or
 * that mark the breach, the bait, the levers and the verdict, each
 * sanitized.  Caller frees.
 */
#define FIX_SUMMARY_MAX    12000
#define FIX_SUMMARY_LINES  60
#define FIX_SUMMARY_LINE   300
static char *
fix_model_summary(const struct fix_state *st)
{
	const struct fix_result *r = st->r;
	struct util_buf b;
	struct errbuf e = { 0 };
	cJSON *lines, *line;
	size_t i, n = 0, idx = 0;

	util_buf_init(&b, 4096);
	util_buf_printf(&b, "Policy %s. The drill ended %s: %s.\n",
	    r->policy_name, r->nruns ? r->runs[0].verdict : "?",
	    r->nruns ? r->runs[0].reason : "?");
	for (i = 0; i < r->nattributed; i++) {
		const struct flaw *f = flaw_find(r->attributed[i].flaw);

		util_buf_printf(&b, "Attributed flaw: %s (%s), %zu evidence "
		    "line(s)%s, e.g. %s\n", r->attributed[i].flaw,
		    f ? f->summary : "?", r->attributed[i].events,
		    r->attributed[i].breakout ? " on the breakout path" : "",
		    r->attributed[i].evidence);
	}
	for (i = 0; i < r->nruns; i++)
		util_buf_printf(&b, "Run %s (%s, variant %s): %s\n",
		    r->runs[i].run_id, r->runs[i].role, r->runs[i].variant,
		    r->runs[i].verdict);
	util_buf_printf(&b, "Evidence of the original run (chain line: "
	    "type, kind, what):\n");
	lines = r->nruns ? fix_load_evidence(r->runs[0].run_dir, &e) : NULL;
	cJSON_ArrayForEach(line, lines) {
		struct fix_match m[FLAW_MAX];
		const char *type = util_json_str(line, "type", NULL), *kind;
		size_t nm;
		bool mark;
		char *txt, safe[FIX_SUMMARY_LINE];

		idx++;
		/* the master chain only (it carries every sensor's events):
		 * the next chain starts with its own genesis */
		if (idx > 1 && type != NULL && strcmp(type, "genesis") == 0)
			break;
		if (n >= FIX_SUMMARY_LINES || b.len >= FIX_SUMMARY_MAX)
			break;
		nm = fix_match_event(line, m);
		(void)fix_event_of(line, &kind);
		mark = util_json_true(line, "breach") || (type != NULL &&
		    (strncmp(type, "bait", 4) == 0 || strncmp(type, "lever",
		    5) == 0 || strcmp(type, "verdict") == 0 ||
		    strcmp(type, "orphan") == 0 || strcmp(type, "leak") == 0));
		if (nm == 0 && !mark)
			continue;
		if (nm > 0)
			txt = xasprintf("%s%s: %s", m[0].flaw, m[0].breakout ?
			    " (breakout)" : "", m[0].what);
		else
			txt = fix_summary_fields(line);
		util_sanitize(safe, sizeof safe, txt, strlen(txt), false);
		free(txt);
		util_buf_printf(&b, "#%zu %s %s%s %s\n", idx, type ? type : "-",
		    kind ? kind : "-", util_json_true(line, "breach") ?
		    " after-cutoff" : "", safe);
		n++;
	}
	cJSON_Delete(lines);
	if (b.len > FIX_SUMMARY_MAX) {
		b.len = FIX_SUMMARY_MAX;
		while (b.len > 0 && ((unsigned char)b.s[b.len] & 0xc0) == 0x80)
			b.len--;
		b.s[b.len] = '\0';
	}
	return b.s;
}

/* The model-written section when the policy configures a real model:
 * NULL without one (no beat, nothing sent) or when the call failed
 * (*note then says so in one line).  Its fix.model beat.  Caller frees
 * both. */
static char *
fix_propose_model(struct fix_state *st, char **note)
{
	struct fix_result *r = st->r;
	char *summary, *section = NULL, *path, why[512];
	cJSON *f;
	int rc;

	*note = NULL;
	if (st->cur->model_url == NULL)
		return NULL;
	summary = fix_model_summary(st);
	path = xasprintf("%s/model-request.json", r->fix_dir);
	rc = fix_model_section(st->cur, summary, path, &section, why,
	    sizeof why);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "record", path);
	cJSON_AddNumberToObject(f, "summary_bytes", (double)strlen(summary));
	if (rc == 1) {
		r->model_section = true;
		cJSON_AddBoolToObject(f, "ok", true);
		fix_beat(st, "fix.model", f, "the breakout in words: written by "
		    "%s (%zu bytes, quoted in pr.md as model-written)",
		    st->cur->model_name ? st->cur->model_name : "the model",
		    strlen(section));
	} else {
		char *red = fix_redact_secrets(why);
		char safe[400];

		util_sanitize(safe, sizeof safe, red, strlen(red), false);
		free(red);
		cJSON_AddBoolToObject(f, "ok", false);
		cJSON_AddStringToObject(f, "error", safe);
		fix_beat(st, "fix.model", f, "the breakout in words: the model "
		    "call failed (%s): section omitted", safe);
		*note = xasprintf("The model-written section is omitted: the "
		    "call to the model failed (%s).", safe);
	}
	free(path);
	free(summary);
	return section;
}

/* The proposal of a verified fix, in order: git commit, push (when
 * asked), the model-written section (with a real model), pr.md, GitHub,
 * Slack (each one's failure is a beat, not an error of the loop; a
 * failed push, PR or post that was asked for sets r->delivery_failed). */
static void
fix_propose(struct fix_state *st, const char *patched)
{
	struct fix_result *r = st->r;
	char *title = fix_pr_title(r), *body, *branch, *msg, *section, *note;
	bool push_ok;

	branch = fix_branch_name(r);
	msg = xasprintf("%s\n\nFound and checked by the ares fix loop %s:\n"
	    "attributed from the evidence of run %s, rerun contained on the "
	    "training and held-out variants (fix.json in %s).\n", title,
	    r->fix_id, r->nruns ? r->runs[0].run_id : "?", r->fix_dir);
	fix_propose_git(st, patched, branch, msg);
	push_ok = fix_propose_push(st, branch);
	section = fix_propose_model(st, &note);
	body = fix_pr_body_x(r, section, note);
	fix_write_pr(st, title, body);
	fix_propose_github(st, branch, title, body, push_ok);
	fix_propose_slack(st, title);
	free(section);
	free(note);
	free(body);
	free(msg);
	free(branch);
	free(title);
}

/* What a step of the loop tells fix_run to do next. */
enum fix_step {
	FIX_STEP_FAIL = -1,    /* an error: e says it */
	FIX_STEP_NEXT = 0,     /* go on to the next step */
	FIX_STEP_DONE,         /* an outcome is reached (r->outcome) */
	FIX_STEP_AGAIN,        /* still breached: attribute again */
	FIX_STEP_VERIFIED,     /* contained on training and held-out */
};

/* The limits of the options, clamped, and the environment's defaults. */
static void
fix_options_defaults(struct fix_options *o)
{
	if (o->max_seeds <= 0 || o->max_seeds > FIX_MAX_SEEDS)
		o->max_seeds = FIX_MAX_SEEDS;
	if (o->max_iterations <= 0 || o->max_iterations > FIX_MAX_ITERATIONS)
		o->max_iterations = FIX_MAX_ITERATIONS;
	if (o->github_api == NULL)
		o->github_api = getenv("ARES_GITHUB_API");
	if (o->slack_webhook == NULL)
		o->slack_webhook = getenv("ARES_SLACK_WEBHOOK");
	if (o->slack_api == NULL)
		o->slack_api = getenv("ARES_SLACK_API");
	if (o->nslack_channels > FIX_MAX_SLACK_CHANNELS)
		o->nslack_channels = FIX_MAX_SLACK_CHANNELS;
}

/*
 * The breached run given with o->run_dir: it must verify (o->pub_path)
 * and have ended breached.  It fills in what o leaves open: the policy
 * (its drill.start's, copied to st->given_policy) and the seed;
 * st->run_dir names it.  -1 + e.
 */
static int
fix_given_run(struct fix_state *st, struct fix_options *o, struct errbuf *e)
{
	struct report_verify_result vr;
	struct fix_run_info info;
	cJSON *lines;

	if (report_verify_dir(o->run_dir, o->pub_path, &vr, e) == -1)
		return -1;
	if (!vr.ok) {
		errbuf_set(e, ERRBUF_INPUT, "%s does not verify (%s): "
		    "the fix loop refuses a tampered run; see ares "
		    "verify %s", o->run_dir, vr.first_bad >= 0 ?
		    vr.checks[vr.first_bad].text : "?", o->run_dir);
		report_verify_free(&vr);
		return -1;
	}
	report_verify_free(&vr);
	lines = fix_load_evidence(o->run_dir, e);
	if (lines == NULL)
		return -1;
	if (fix_run_info(lines, &info) == -1) {
		cJSON_Delete(lines);
		return errbuf_set(e, ERRBUF_INPUT, "%s/evidence.jsonl: no "
		    "drill.start, lab.up or verdict line", o->run_dir);
	}
	cJSON_Delete(lines);
	if (o->policy_path == NULL) {
		snprintf(st->given_policy, sizeof st->given_policy, "%s",
		    info.policy);
		o->policy_path = st->given_policy;
	}
	snprintf(st->run_dir, sizeof st->run_dir, "%s", o->run_dir);
	if (!o->has_seed) {
		o->seed = info.seed;
		o->has_seed = true;
	}
	if (strcmp(info.verdict, "breached") != 0)
		return errbuf_set(e, ERRBUF_INPUT, "%s ended %s, not breached: "
		    "nothing to fix", o->run_dir, info.verdict);
	return 0;
}

/* An imported Compose policy (imported: {compose, service}): the Compose
 * file read, the re-import's agent option; r->compose_note says why the
 * file will not be patched when it cannot be read. */
static void
fix_load_compose(struct fix_state *st)
{
	const struct policy *p = st->cur;
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };
	size_t len;

	if (p->import_compose == NULL || p->import_service == NULL)
		return;
	snprintf(r->compose_path, sizeof r->compose_path, "%s",
	    p->import_compose);
	snprintf(r->compose_service, sizeof r->compose_service, "%s",
	    p->import_service);
	st->compose_orig = util_read_file(p->import_compose, POLICY_MAX_BYTES,
	    &len, &e);
	if (st->compose_orig == NULL) {
		snprintf(r->compose_note, sizeof r->compose_note, "The Compose "
		    "file could not be read (%.300s): the fix is the policy "
		    "patch only.", e.msg);
		return;
	}
	st->compose_text = xstrdup(st->compose_orig);
	snprintf(st->compose_cur, sizeof st->compose_cur, "%s",
	    p->import_compose);
	if (p->agent_kind == POLICY_AGENT_SCRIPT && p->agent_script != NULL)
		snprintf(st->agent_opt, sizeof st->agent_opt, "script:%s",
		    p->agent_script);
	else
		snprintf(st->agent_opt, sizeof st->agent_opt, "%s",
		    p->agent_kind == POLICY_AGENT_IMAGE ? "image" : "poyo");
}

/*
 * The policy to fix: read and parsed (st->orig, st->cur), its name and
 * variant (st->training), the held-out variant to re-check on
 * (st->heldout) and the seed (st->seed).  -1 + e.
 */
static int
fix_load_policy(struct fix_state *st, struct errbuf *e)
{
	const struct fix_options *o = st->o;
	struct fix_result *r = st->r;
	size_t len;

	if (o->policy_path == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "no policy (--policy FILE)");
	st->orig = util_read_file(o->policy_path, POLICY_MAX_BYTES, &len, e);
	if (st->orig == NULL)
		return -1;
	st->cur = policy_parse(st->orig, len, o->policy_path, e);
	if (st->cur == NULL)
		return -1;
	snprintf(r->policy_path, sizeof r->policy_path, "%s", o->policy_path);
	snprintf(r->policy_name, sizeof r->policy_name, "%s", st->cur->name);
	snprintf(st->training, sizeof st->training, "%s", st->cur->variant ?
	    st->cur->variant : "default");
	st->heldout = fix_heldout_variant(o, st->training);
	if (st->heldout == NULL || variant_find(st->heldout) == NULL ||
	    strcmp(st->heldout, st->training) == 0)
		return errbuf_set(e, ERRBUF_INPUT, "no held-out variant to "
		    "re-check on (training %s, known: %s)", st->training,
		    variant_ids());
	st->seed = o->has_seed ? o->seed : st->cur->seed;
	/* a generated training dressing with its own seed: never the
	 * held-out one's */
	st->training_vseed_set = st->cur->variant_seed_set;
	st->training_vseed = st->cur->variant_seed;
	snprintf(r->heldout_shipped, sizeof r->heldout_shipped, "%s",
	    st->heldout);
	fix_load_compose(st);
	return 0;
}

/* The runs directory (runs_dir, else $ARES_RUNS, else ./runs), made when
 * missing: its real path (caller frees), or NULL + e. */
static char *
fix_runs_dir(const char *runs_dir, struct errbuf *e)
{
	const char *runs = runs_dir ? runs_dir : getenv("ARES_RUNS");
	char *runs_abs;

	if (runs == NULL || runs[0] == '\0')
		runs = "runs";
	if (util_mkdir_p(runs, 0755, e) == -1)
		return NULL;
	runs_abs = realpath(runs, NULL);
	if (runs_abs == NULL)
		errbuf_set(e, ERRBUF_INPUT, "runs directory %s: %s", runs,
		    strerror(errno));
	return runs_abs;
}

/* The fix dir RUNS/fix-<id> and its chain, and the fix.start beat.
 * -1 + e. */
static int
fix_start(struct fix_state *st, struct errbuf *e)
{
	struct fix_result *r = st->r;
	cJSON *f;
	char *path;

	util_new_id(r->fix_id);
	snprintf(r->fix_dir, sizeof r->fix_dir, "%s/fix-%s", st->o->runs_dir,
	    r->fix_id);
	if (util_mkdir_p(r->fix_dir, 0755, e) == -1)
		return -1;
	path = xasprintf("%s/evidence.jsonl", r->fix_dir);
	st->ev = evidence_create(path, r->fix_id, e);
	free(path);
	if (st->ev == NULL)
		return -1;
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "policy", st->o->policy_path);
	cJSON_AddStringToObject(f, "variant", st->training);
	cJSON_AddStringToObject(f, "heldout", st->heldout);
	cJSON_AddNumberToObject(f, "seed", (double)st->seed);
	if (st->run_dir[0] != '\0')
		cJSON_AddStringToObject(f, "run_dir", st->run_dir);
	fix_beat(st, "fix.start", f, "fix %s: policy %s (variant %s, "
	    "held-out %s), seed %llu", r->fix_id, st->o->policy_path,
	    st->training, st->heldout, (unsigned long long)st->seed);
	return 0;
}

/* The original run drilled now (no run dir given): NEXT when it breached
 * (st->run_dir, st->seed name it), DONE when there is nothing to attribute
 * (never exercised, contained, error), FAIL + e. */
static enum fix_step
fix_drill_original(struct fix_state *st, struct errbuf *e)
{
	struct fix_result *r = st->r;
	struct drill_result *d = st->d;

	if (fix_drill_until_exercised(st, st->o->policy_path, "original",
	    st->training, st->seed, d, e) == -1)
		return FIX_STEP_FAIL;
	snprintf(st->run_dir, sizeof st->run_dir, "%s", d->run_dir);
	st->seed = d->seed;
	if (d->verdict == DRILL_VERDICT_NOT_EXERCISED) {
		r->outcome = FIX_OUTCOME_UNPROVEN;
		snprintf(r->reason, sizeof r->reason, "the bait never "
		    "fired in %d seeds: no breach to attribute",
		    st->o->max_seeds);
		return FIX_STEP_DONE;
	}
	if (d->verdict != DRILL_VERDICT_BREACHED) {
		r->outcome = d->verdict == DRILL_VERDICT_CONTAINED ?
		    FIX_OUTCOME_NOTHING : FIX_OUTCOME_ERROR;
		snprintf(r->reason, sizeof r->reason, "the drill ended "
		    "%s: %.400s", drill_verdict_name(d->verdict),
		    d->verdict_reason);
		return FIX_STEP_DONE;
	}
	return FIX_STEP_NEXT;
}

/* Record the given (verified) run as the original, from its report.json,
 * and its fix.run beat. */
static void
fix_record_given(struct fix_state *st, struct errbuf *e)
{
	struct fix_result *r = st->r;
	struct fix_run_ref *x = &r->runs[r->nruns++];
	size_t len;
	char *rj;
	cJSON *j;
	const char *reason;

	memset(x, 0, sizeof *x);
	/* one read: the text parsed is the text hashed */
	rj = report_json_read_hashed(st->run_dir, x->report_hash, &len, e);
	j = rj ? cJSON_ParseWithLength(rj, len) : NULL;
	snprintf(x->role, sizeof x->role, "original");
	snprintf(x->run_dir, sizeof x->run_dir, "%s", st->run_dir);
	snprintf(x->run_id, sizeof x->run_id, "%s",
	    util_json_str(j, "run_id", "?"));
	snprintf(x->variant, sizeof x->variant, "%s", st->training);
	snprintf(x->verdict, sizeof x->verdict, "%s",
	    util_json_str(j, "verdict", "?"));
	reason = util_json_str(j, "verdict_reason", NULL);
	if (reason != NULL)
		util_sanitize(x->reason, sizeof x->reason, reason,
		    strlen(reason), false);
	x->seed = st->seed;
	x->time_to_kill_ms = util_json_num(j, "time_to_kill_ms", -1);
	fix_run_dressing(st->run_dir, x);
	cJSON_Delete(j);
	free(rj);
	e->msg[0] = '\0';
	fix_beat(st, "fix.run", NULL, "original run %s: %s (verified)",
	    x->run_id, x->verdict);
}

/* The fix.attribute beat of an attribution of run_dir: every hit, the
 * flaws that are off, and the first hit in words. */
static void
fix_beat_attribution(struct fix_state *st, const char *run_dir,
    const struct fix_attribution *a)
{
	cJSON *f = cJSON_CreateObject(), *arr;
	size_t i;

	cJSON_AddStringToObject(f, "run_dir", run_dir);
	arr = cJSON_AddArrayToObject(f, "flaws");
	for (i = 0; i < a->nhits; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "flaw", a->hits[i].flaw);
		cJSON_AddBoolToObject(x, "breakout", a->hits[i].breakout);
		cJSON_AddNumberToObject(x, "events",
		    (double)a->hits[i].events);
		cJSON_AddStringToObject(x, "evidence", a->hits[i].evidence);
		cJSON_AddItemToArray(arr, x);
	}
	arr = cJSON_AddArrayToObject(f, "evidence_of_flaws_off");
	for (i = 0; i < a->noff; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(a->off[i]));
	if (a->nhits == 0)
		fix_beat(st, "fix.attribute", f, "no flaw that "
		    "is on explains the breach%s%s",
		    a->noff ? " (evidence matches flaws that are "
		    "off: " : "", a->noff ? a->off[0] : "");
	else
		fix_beat(st, "fix.attribute", f, "%s %s%s "
		    "(%zu evidence line(s)): %s",
		    a->hits[0].breakout ? "attributed to" :
		    "evidence of use of", a->hits[0].flaw,
		    a->hits[0].breakout ? " on the breakout path" :
		    " (not on the breakout path)",
		    a->hits[0].events, a->hits[0].evidence);
}

/*
 * Attribute the breach of st->run_dir among the flaws still on, with its
 * beat.  Only evidence on the breakout path attributes the breach: flaws
 * merely used along the way are named, not fixed (a->nhits is 0 then).
 * -1 + e.
 */
static int
fix_attribute_breach(struct fix_state *st, struct fix_attribution *a,
    struct errbuf *e)
{
	char used[512];
	size_t i, u = 0;

	if (fix_attribute_run(st->run_dir, st->cur, a, e) == -1)
		return -1;
	fix_beat_attribution(st, st->run_dir, a);
	if (a->nhits > 0 && !a->hits[0].breakout) {
		used[0] = '\0';
		for (i = 0; i < a->nhits && u < sizeof used; i++)
			u += (size_t)snprintf(used + u, sizeof used - u,
			    "%s%s", i ? ", " : "", a->hits[i].flaw);
		fix_beat(st, "fix.attribute", NULL, "no evidence of a "
		    "flaw that is on lies on the breakout path (used "
		    "along the way, not what broke out: %s)", used);
		a->nhits = 0;
	}
	return 0;
}

/* Add the first hit of a to r->attributed (once per flaw). */
static void
fix_note_attributed(struct fix_result *r, const struct fix_attribution *a)
{
	size_t i, k;

	for (i = 0; i < a->nhits && r->nattributed < FIX_MAX_HITS; i++) {
		for (k = 0; k < r->nattributed; k++)
			if (strcmp(r->attributed[k].flaw,
			    a->hits[i].flaw) == 0)
				break;
		if (k == r->nattributed && i == 0)
			r->attributed[r->nattributed++] = a->hits[i];
	}
}

/* Whether after is before with flaw off and nothing else of its flaws,
 * bait and levers changed (the edit is checked by its meaning, not only by
 * "it still parses"). */
static bool
fix_patch_only_removed(const struct policy *before,
    const struct policy *after, const char *flaw)
{
	size_t i, j = 0;

	if (before == NULL || after->nflaws + 1 != before->nflaws ||
	    after->nbait != before->nbait || after->nlevers != before->nlevers)
		return false;
	for (i = 0; i < before->nflaws; i++) {
		if (strcmp(before->flaws[i], flaw) == 0)
			continue;
		if (j >= after->nflaws || strcmp(before->flaws[i],
		    after->flaws[j]) != 0)
			return false;
		j++;
	}
	for (i = 0; i < before->nbait; i++)
		if (strcmp(before->bait[i], after->bait[i]) != 0)
			return false;
	for (i = 0; i < before->nlevers; i++)
		if (strcmp(before->levers[i], after->levers[i]) != 0)
			return false;
	return j == after->nflaws;
}

/*
 * Turn flaw off in st->text, write it as policy.patched.yaml (st->cur_path)
 * and re-parse it (st->cur), write the diff against the original
 * (policy.patch, r->diff), with the fix.patch beat.  -1 + e.
 */
static int
fix_patch(struct fix_state *st, const char *flaw, struct errbuf *e)
{
	struct fix_result *r = st->r;
	struct policy *np;
	char *patched, *diff;
	cJSON *f;

	patched = fix_policy_remove_flaw(st->text, strlen(st->text), flaw, e);
	if (patched == NULL)
		return -1;
	snprintf(r->removed[r->nremoved++], sizeof r->removed[0], "%s", flaw);
	free(st->text);
	st->text = patched;
	np = fix_write_policy(st, "policy.patched.yaml", st->text,
	    st->cur_path, sizeof st->cur_path, e);
	if (np == NULL)
		return errbuf_prefix(e, "the patched policy does not parse");
	if (!fix_patch_only_removed(st->cur, np, flaw)) {
		policy_free(np);
		return errbuf_set(e, ERRBUF_INTERNAL, "the edit that turns %s "
		    "off changed more of the policy (%s): refused", flaw,
		    st->cur_path);
	}
	snprintf(r->patched_path, sizeof r->patched_path, "%s", st->cur_path);
	diff = fix_unified_diff(st->orig, st->text, "a/policy.yaml",
	    "b/policy.yaml");
	f = cJSON_CreateObject();
	free(r->diff);
	r->diff = diff;
	snprintf(r->patch_path, sizeof r->patch_path, "%s/policy.patch",
	    r->fix_dir);
	(void)util_write_file(r->patch_path, diff, strlen(diff), 0644, e);
	cJSON_AddStringToObject(f, "flaw", flaw);
	cJSON_AddStringToObject(f, "patched", st->cur_path);
	cJSON_AddStringToObject(f, "diff", diff);
	fix_beat(st, "fix.patch", f, "turned %s off: %s (re-parsed: valid, "
	    "%zu flaw(s) left)", flaw, st->cur_path, np->nflaws);
	policy_free(st->cur);
	st->cur = np;
	return 0;
}

/* Whether two policies switch on the same flaws (in any order), run the
 * same kind of agent and plant the same bait and levers. */
static bool
fix_same_access(const struct policy *a, const struct policy *b)
{
	size_t i, j;

	if (a->nflaws != b->nflaws || a->nbait != b->nbait ||
	    a->nlevers != b->nlevers || a->agent_kind != b->agent_kind)
		return false;
	for (i = 0; i < a->nflaws; i++) {
		for (j = 0; j < b->nflaws; j++)
			if (strcmp(a->flaws[i], b->flaws[j]) == 0)
				break;
		if (j == b->nflaws)
			return false;
	}
	for (i = 0; i < a->nbait; i++)
		if (strcmp(a->bait[i], b->bait[i]) != 0)
			return false;
	for (i = 0; i < a->nlevers; i++)
		if (strcmp(a->levers[i], b->levers[i]) != 0)
			return false;
	return true;
}

/* Stop patching the Compose file (the fix is the policy patch from now
 * on), saying why in r->compose_note and a fix.compose beat. */
static void
fix_compose_give_up(struct fix_state *st, const char *flaw, const char *why)
{
	struct fix_result *r = st->r;
	cJSON *f = cJSON_CreateObject();
	char safe[400];

	util_sanitize(safe, sizeof safe, why, strlen(why), false);
	snprintf(r->compose_note, sizeof r->compose_note, "The Compose file "
	    "`%.200s` is not changed: %.48s cannot be removed from it as text "
	    "(%.180s); the fix is the policy patch.", r->compose_path, flaw, safe);
	cJSON_AddStringToObject(f, "flaw", flaw);
	cJSON_AddStringToObject(f, "compose", r->compose_path);
	cJSON_AddBoolToObject(f, "patched", false);
	cJSON_AddStringToObject(f, "why", safe);
	fix_beat(st, "fix.compose", f, "Compose file %s: %s not removable (%s): "
	    "falling back to the policy patch", r->compose_path, flaw, safe);
	free(st->compose_text);
	st->compose_text = NULL;
	free(st->drill_text);
	st->drill_text = NULL;
	r->compose_patched = false;
	free(r->compose_diff);
	r->compose_diff = NULL;
}

/*
 * After the policy patch of flaw, an imported Compose policy's own fix:
 * the entries mapped to flaw cut from the Compose file
 * (compose.patched.yml in the fix dir), imported again; the re-import's
 * policy (policy.reimported.yaml) must switch on what the patched policy
 * does, and becomes what the reruns drill (st->cur, st->cur_path,
 * st->drill_text).  Anything that fails falls back to the policy patch
 * (fix_compose_give_up).  Never an error of the loop.
 */
static void
fix_patch_compose(struct fix_state *st, const char *flaw)
{
	struct fix_result *r = st->r;
	struct errbuf e = { 0 };
	char why[512], *patched, *yaml, *cpath, *ppath, *name, *diff;
	struct policy *rp;
	cJSON *f;

	if (st->compose_text == NULL)
		return;
	cpath = xasprintf("%s/compose.patched.yml", r->fix_dir);
	ppath = xasprintf("%s/policy.reimported.yaml", r->fix_dir);
	if (fix_compose_patch(st->compose_cur, st->compose_text,
	    r->compose_service, flaw, st->agent_opt, cpath, ppath, &patched,
	    &yaml, why, sizeof why) == -1) {
		fix_compose_give_up(st, flaw, why);
		goto out;
	}
	/* the re-import with this policy's own settings (seed, limits,
	 * bait, levers, model, ...): only the access is the Compose file's */
	{
		char *carried = fix_policy_carry(yaml, st->text, &e);

		free(yaml);
		yaml = carried;
	}
	if (yaml == NULL || util_write_file(ppath, yaml, strlen(yaml), 0644,
	    &e) == -1 || (rp = policy_load(ppath, &e)) == NULL) {
		free(patched);
		free(yaml);
		fix_compose_give_up(st, flaw, e.msg);
		goto out;
	}
	if (!fix_same_access(rp, st->cur)) {
		policy_free(rp);
		free(patched);
		free(yaml);
		fix_compose_give_up(st, flaw, "the policy imported from the "
		    "patched Compose file switches on other flaws (or runs "
		    "another agent) than the patched policy");
		goto out;
	}
	free(st->compose_text);
	st->compose_text = patched;
	snprintf(st->compose_cur, sizeof st->compose_cur, "%s", cpath);
	free(st->drill_text);
	st->drill_text = yaml;
	policy_free(st->cur);
	st->cur = rp;
	snprintf(st->cur_path, sizeof st->cur_path, "%s", ppath);
	name = strrchr(r->compose_path, '/');
	name = xasprintf("%s", name ? name + 1 : r->compose_path);
	{
		char *na = xasprintf("a/%s", name), *nb = xasprintf("b/%s", name);

		diff = fix_unified_diff(st->compose_orig, st->compose_text, na,
		    nb);
		free(na);
		free(nb);
	}
	free(name);
	free(r->compose_diff);
	r->compose_diff = diff;
	r->compose_patched = true;
	{
		char *pp = xasprintf("%s/compose.patch", r->fix_dir);

		(void)util_write_file(pp, diff, strlen(diff), 0644, &e);
		free(pp);
	}
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "flaw", flaw);
	cJSON_AddStringToObject(f, "compose", r->compose_path);
	cJSON_AddStringToObject(f, "service", r->compose_service);
	cJSON_AddBoolToObject(f, "patched", true);
	cJSON_AddStringToObject(f, "patched_file", cpath);
	cJSON_AddStringToObject(f, "reimported", ppath);
	cJSON_AddStringToObject(f, "diff", diff);
	fix_beat(st, "fix.compose", f, "removed %s from the Compose file %s "
	    "(service %s): %s imports again, maps to %s no more; the reruns "
	    "drill its re-import %s", flaw, r->compose_path,
	    r->compose_service, cpath, flaw, ppath);
out:
	free(cpath);
	free(ppath);
}

/* The patched policy drilled on the training variant in a fresh lab: NEXT
 * when contained, AGAIN when still breached (st->run_dir is that run),
 * DONE when never exercised or in error, FAIL + e. */
static enum fix_step
fix_rerun_training(struct fix_state *st, const char *flaw, struct errbuf *e)
{
	struct fix_result *r = st->r;
	struct drill_result *d = st->d;

	if (fix_drill_until_exercised(st, st->cur_path, "rerun", st->training,
	    st->seed, d, e) == -1)
		return FIX_STEP_FAIL;
	if (d->verdict == DRILL_VERDICT_NOT_EXERCISED) {
		r->outcome = FIX_OUTCOME_UNPROVEN;
		snprintf(r->reason, sizeof r->reason, "the rerun on %s "
		    "was not exercised in %d seeds: the fix is "
		    "unproven", st->training, st->o->max_seeds);
		return FIX_STEP_DONE;
	}
	if (d->verdict == DRILL_VERDICT_ERROR) {
		r->outcome = FIX_OUTCOME_ERROR;
		snprintf(r->reason, sizeof r->reason, "the rerun ended "
		    "in error: %.400s", d->verdict_reason);
		return FIX_STEP_DONE;
	}
	if (d->verdict != DRILL_VERDICT_CONTAINED) {
		snprintf(st->run_dir, sizeof st->run_dir, "%s", d->run_dir);
		fix_beat(st, "fix.iterate", NULL, "still breached on "
		    "%s after turning %s off: attribute again",
		    st->training, flaw);
		return FIX_STEP_AGAIN;
	}
	return FIX_STEP_NEXT;
}

/*
 * The generated held-out dressing, chosen once per fix (the first time a
 * held-out rerun on it is due): its seed from the original run's id
 * (fix_heldout_seed), never one the fix used or will use as a drill seed
 * (every run so far, the seeds S..S+FIX_MAX_SEEDS-1 the reruns take),
 * never the seed of a generated dressing a run of it wore (lab.json), nor
 * the training policy's variant_seed.  Its id, company and service from
 * variant_generate.  -1 + e.
 */
static int
fix_pick_heldout_gen(struct fix_state *st, struct errbuf *e)
{
	struct fix_result *r = st->r;
	uint64_t used[2 * FIX_MAX_RUNS + FIX_MAX_SEEDS + 1];
	size_t n = 0, i;
	struct variant *v;
	char want[40];
	cJSON *f;

	if (r->heldout_gen)
		return 0;
	for (i = 0; i < r->nruns; i++) {
		used[n++] = r->runs[i].seed;
		if (r->runs[i].has_variant_seed)
			used[n++] = r->runs[i].variant_seed;
	}
	for (i = 0; i < FIX_MAX_SEEDS; i++)
		used[n++] = st->seed + (uint64_t)i;
	if (st->training_vseed_set)
		used[n++] = st->training_vseed;
	if (r->nruns == 0 || fix_heldout_seed(r->runs[0].run_id, used, n,
	    &r->heldout_gen_seed, &r->heldout_gen_counter) == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "no held-out seed unused "
		    "by the run in %d tries", FIX_HELDOUT_TRIES);
	v = variant_generate(r->heldout_gen_seed);
	snprintf(want, sizeof want, "gen-%016llx",
	    (unsigned long long)r->heldout_gen_seed);
	if (v == NULL || v->id == NULL || strcmp(v->id, want) != 0) {
		variant_free(v);
		return errbuf_set(e, ERRBUF_INTERNAL, "the generated held-out "
		    "dressing %s could not be made", want);
	}
	snprintf(r->heldout_gen_id, sizeof r->heldout_gen_id, "%s", v->id);
	util_sanitize(r->heldout_gen_company, sizeof r->heldout_gen_company,
	    v->company ? v->company : "", v->company ? strlen(v->company) : 0,
	    false);
	util_sanitize(r->heldout_gen_service, sizeof r->heldout_gen_service,
	    v->service ? v->service : "", v->service ? strlen(v->service) : 0,
	    false);
	variant_free(v);
	r->heldout_gen = true;
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "variant", r->heldout_gen_id);
	{
		char num[24];

		snprintf(num, sizeof num, "%llu",
		    (unsigned long long)r->heldout_gen_seed);
		cJSON_AddStringToObject(f, "variant_seed", num);
	}
	cJSON_AddNumberToObject(f, "counter", (double)r->heldout_gen_counter);
	cJSON_AddStringToObject(f, "company", r->heldout_gen_company);
	cJSON_AddStringToObject(f, "service", r->heldout_gen_service);
	fix_beat(st, "fix.heldout", f, "generated held-out dressing %s "
	    "(variant_seed %llu from run %s, counter %u): %s, service %s; none "
	    "of the %zu seed(s) the fix uses", r->heldout_gen_id,
	    (unsigned long long)r->heldout_gen_seed, r->runs[0].run_id,
	    r->heldout_gen_counter, r->heldout_gen_company,
	    r->heldout_gen_service, n);
	return 0;
}

/*
 * The patched policy re-checked on a held-out dressing: the shipped
 * held-out variant st->heldout (generated false; role "held-out") or the
 * generated one (fix_pick_heldout_gen; role "held-out-gen").  A copy with
 * variant: (variant_seed:) and bait changed, written and re-parsed,
 * drilled.  Contained: NEXT on the shipped variant, VERIFIED on the
 * generated one (r->outcome set); AGAIN when breached by a flaw still on
 * (st->run_dir is that run), DONE when never exercised, in error, or
 * breached by nothing that is on (not a fix), FAIL + e.
 */
static enum fix_step
fix_rerun_heldout(struct fix_state *st, bool generated, struct errbuf *e)
{
	struct fix_result *r = st->r;
	struct drill_result *d = st->d;
	struct fix_attribution ha;
	struct policy *hp;
	const char *text = st->drill_text ? st->drill_text : st->text;
	const char *role = generated ? "held-out-gen" : "held-out";
	char *held, name[80], held_path[1200], which[160];

	if (generated && fix_pick_heldout_gen(st, e) == -1)
		return FIX_STEP_FAIL;
	if (generated) {
		held = fix_policy_set_generated(text, strlen(text),
		    r->heldout_gen_seed, e);
		snprintf(which, sizeof which, "generated held-out dressing %s "
		    "(variant_seed %llu)", r->heldout_gen_id,
		    (unsigned long long)r->heldout_gen_seed);
	} else {
		held = fix_policy_set_variant(text, strlen(text), st->heldout,
		    e);
		snprintf(which, sizeof which, "held-out variant %s",
		    st->heldout);
	}
	if (held == NULL)
		return FIX_STEP_FAIL;
	snprintf(name, sizeof name, "policy.heldout-%s.yaml", generated ?
	    r->heldout_gen_id : st->heldout);
	hp = fix_write_policy(st, name, held, held_path, sizeof held_path, e);
	free(held);
	if (hp == NULL) {
		errbuf_prefix(e, "the held-out policy does not parse");
		return FIX_STEP_FAIL;
	}
	policy_free(hp);
	if (fix_drill_until_exercised(st, held_path, role, generated ?
	    r->heldout_gen_id : st->heldout, st->seed, d, e) == -1)
		return FIX_STEP_FAIL;
	if (d->verdict == DRILL_VERDICT_NOT_EXERCISED) {
		r->outcome = FIX_OUTCOME_UNPROVEN;
		snprintf(r->reason, sizeof r->reason, "contained on %s, "
		    "but the rerun on the %s was not exercised in %d "
		    "seeds: the fix is unproven", st->training, which,
		    st->o->max_seeds);
		return FIX_STEP_DONE;
	}
	if (d->verdict == DRILL_VERDICT_ERROR) {
		r->outcome = FIX_OUTCOME_ERROR;
		snprintf(r->reason, sizeof r->reason, "the %s rerun ended in "
		    "error: %.300s", role, d->verdict_reason);
		return FIX_STEP_DONE;
	}
	if (d->verdict == DRILL_VERDICT_CONTAINED && !generated)
		return FIX_STEP_NEXT;
	if (d->verdict == DRILL_VERDICT_CONTAINED) {
		r->outcome = FIX_OUTCOME_VERIFIED;
		snprintf(r->reason, sizeof r->reason, "contained on the "
		    "training variant %s, on the held-out variant %s and on "
		    "the %s after turning off %zu flaw(s)", st->training,
		    st->heldout, which, r->nremoved);
		return FIX_STEP_VERIFIED;
	}
	/* Holds only on the training dressing: try the next flaw the
	 * held-out breach shows, else it is not a fix. */
	snprintf(st->run_dir, sizeof st->run_dir, "%s", d->run_dir);
	if (fix_attribute_run(st->run_dir, st->cur, &ha, e) == -1)
		return FIX_STEP_FAIL;
	if (ha.nhits == 0) {
		r->outcome = FIX_OUTCOME_NOT_A_FIX;
		snprintf(r->reason, sizeof r->reason, "contained "
		    "on %s but breached on the %s: a fix that holds only on "
		    "the training variant is not a fix", st->training, which);
		return FIX_STEP_DONE;
	}
	fix_beat(st, "fix.iterate", NULL, "contained on %s but "
	    "breached on the %s: attribute again", st->training, which);
	return FIX_STEP_AGAIN;
}

/*
 * One iteration: attribute the breach of st->run_dir, turn the first flaw
 * off, rerun on the training variant, then on the shipped held-out one,
 * then on the generated held-out dressing.  DONE
 * when nothing that is on explains the breach (unattributed on the first
 * iteration, else not a fix), else what the reruns say.
 */
static enum fix_step
fix_iteration(struct fix_state *st, size_t it, struct errbuf *e)
{
	struct fix_result *r = st->r;
	struct fix_attribution a;
	const struct fix_hit *h;
	enum fix_step step;

	if (fix_attribute_breach(st, &a, e) == -1)
		return FIX_STEP_FAIL;
	if (a.nhits == 0) {
		r->outcome = it == 0 ? FIX_OUTCOME_UNATTRIBUTED :
		    FIX_OUTCOME_NOT_A_FIX;
		snprintf(r->reason, sizeof r->reason, "%s",
		    it == 0 ? "unattributed breach: the fix loop cannot "
		    "propose a fix" : "the drill still breaks out and "
		    "no remaining flaw explains it: not a fix");
		return FIX_STEP_DONE;
	}
	h = &a.hits[0];
	fix_note_attributed(r, &a);
	if (fix_patch(st, h->flaw, e) == -1)
		return FIX_STEP_FAIL;
	fix_patch_compose(st, h->flaw);
	step = fix_rerun_training(st, h->flaw, e);
	if (step != FIX_STEP_NEXT)
		return step;
	/* both held-out reruns must hold: the shipped variant, then a
	 * dressing generated for this fix */
	step = fix_rerun_heldout(st, false, e);
	if (step != FIX_STEP_NEXT)
		return step;
	return fix_rerun_heldout(st, true, e);
}

/* FIX_DIR/attempt.md: what was tried, when a flaw was turned off but the
 * fix is not verified (no branch, no requests). */
static void
fix_write_attempt(const struct fix_result *r)
{
	char *body = fix_pr_body(r);
	char *p = xasprintf("%s/attempt.md", r->fix_dir);
	struct errbuf e2 = { 0 };

	(void)util_write_file(p, body, strlen(body), 0644, &e2);
	free(p);
	free(body);
}

/* FIX_DIR/fix.json with the chain's count and head, signed; the outcome
 * turns to error when it cannot be written or signed. */
static void
fix_write_json(struct fix_state *st)
{
	struct fix_result *r = st->r;
	cJSON *j = fix_result_json(r);
	char *txt, *p = xasprintf("%s/fix.json", r->fix_dir);
	struct errbuf e2 = { 0 };

	cJSON_AddNumberToObject(j, "evidence_entries",
	    (double)evidence_count(st->ev));
	cJSON_AddStringToObject(j, "evidence_head", evidence_head_hex(st->ev));
	txt = cJSON_Print(j);
	if (util_write_file(p, txt, strlen(txt), 0644, &e2) == -1 ||
	    fix_sign(st, p, &e2) == -1) {
		r->outcome = FIX_OUTCOME_ERROR;
		snprintf(r->reason, sizeof r->reason, "fix.json: %.400s",
		    e2.msg);
	}
	free(txt);
	free(p);
	cJSON_Delete(j);
}

/* The end of a loop that reached an outcome: the fix.result beat,
 * attempt.md, the signed fix.json; a chain that could not be written
 * turns a verified fix into an error. */
static void
fix_finish(struct fix_state *st)
{
	struct fix_result *r = st->r;
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "outcome", fix_outcome_name(r->outcome));
	cJSON_AddStringToObject(f, "reason", r->reason);
	fix_beat(st, "fix.result", f, "%s: %s", fix_outcome_name(r->outcome),
	    r->reason);
	if (r->outcome != FIX_OUTCOME_VERIFIED && r->nremoved > 0)
		fix_write_attempt(r);
	fix_write_json(st);
	if (r->evidence_failed && r->outcome == FIX_OUTCOME_VERIFIED) {
		r->outcome = FIX_OUTCOME_ERROR;
		snprintf(r->reason, sizeof r->reason, "the fix evidence chain "
		    "could not be written");
	}
}

/*
 * The loop, step by step: the breached run (given and verified, or
 * drilled), the policy, the fix dir and its chain, the original run, then
 * up to o->max_iterations iterations (attribute, patch, rerun on the
 * training and the held-out variant), the proposal of a verified fix, and
 * fix.json.
 */
int
fix_run(const struct fix_options *opt, struct fix_result *r,
    struct errbuf *e)
{
	struct fix_options o = *opt;
	struct fix_state st = { 0 };
	char *runs_abs = NULL;
	enum fix_step step;
	bool verified = false;
	size_t it;
	int rc = -1;

	/* FIX_OUTCOME_VERIFIED is 0: an outcome no step decided must never
	 * read as verified (fail closed).  Each DONE step sets its own. */
	memset(r, 0, sizeof *r);
	r->outcome = FIX_OUTCOME_ERROR;
	fix_options_defaults(&o);
	st.o = &o;
	st.r = r;
	st.t0 = util_mono_ns();
	st.d = xcalloc(1, sizeof *st.d);

	/* The breached run: given, or drilled now. */
	if (o.run_dir != NULL && fix_given_run(&st, &o, e) == -1)
		goto out;
	if (fix_load_policy(&st, e) == -1)
		goto out;
	/* The fix dir and its chain. */
	runs_abs = fix_runs_dir(o.runs_dir, e);
	if (runs_abs == NULL)
		goto out;
	o.runs_dir = runs_abs;
	if (fix_start(&st, e) == -1)
		goto out;
	/* The original run: drilled now, or the given one recorded. */
	if (st.run_dir[0] == '\0') {
		step = fix_drill_original(&st, e);
		if (step == FIX_STEP_FAIL)
			goto fail;
		if (step == FIX_STEP_DONE)
			goto done;
	} else
		fix_record_given(&st, e);

	/* Iterate: attribute, patch, rerun (training, held-out). */
	st.text = xstrdup(st.orig);
	for (it = 0; it < (size_t)o.max_iterations; it++) {
		r->iterations = it + 1;
		step = fix_iteration(&st, it, e);
		if (step == FIX_STEP_FAIL)
			goto fail;
		if (step == FIX_STEP_DONE)
			goto done;
		if (step == FIX_STEP_VERIFIED) {
			verified = true;
			break;
		}
	}
	/* Only an iteration that returned VERIFIED (contained on training
	 * and held-out) is a fix; iterations that ran out while AGAIN (still
	 * breached, on either variant) are not. */
	if (!verified) {
		r->outcome = FIX_OUTCOME_NOT_A_FIX;
		snprintf(r->reason, sizeof r->reason, "still breached after "
		    "%zu iteration(s) (bound %d): not a fix", r->iterations,
		    o.max_iterations);
		goto done;
	}
	fix_beat(&st, "fix.verified", NULL, "verified fix: %s", r->reason);
	fix_propose(&st, st.text);
done:
	fix_finish(&st);
	rc = 0;
	goto out;
fail:
	{
		cJSON *f = cJSON_CreateObject();

		cJSON_AddStringToObject(f, "error", e->msg);
		fix_beat(&st, "fix.error", f, "error: %s", e->msg);
	}
out:
	if (st.ev != NULL)
		evidence_close(st.ev);
	policy_free(st.cur);
	free(st.text);
	free(st.orig);
	free(st.compose_text);
	free(st.compose_orig);
	free(st.drill_text);
	free(runs_abs);
	free(st.d);
	return rc;
}

/* Free what r owns (its diffs). */
void
fix_result_free(struct fix_result *r)
{
	free(r->diff);
	r->diff = NULL;
	free(r->compose_diff);
	r->compose_diff = NULL;
}
