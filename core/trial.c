/*
 * trial.c - a trial: N drills of one policy, J at a time on worker threads,
 * each in a fresh lab and its own run directory under TRIAL_DIR/runs/, with
 * seeds derived from one base seed, summarised as exact binomial intervals
 * and recorded in one signed trial.json (docs/trial.md).
 *
 * Each worker runs a drill's front (drill_begin: up to the levers) and
 * hands its tail (drill_finish: window, sweep, teardown, verdict) to a
 * thread of its own while it brings the next lab up (trial_worker).
 *
 * Thread safety: drill_begin() opens its own Engine API handle per drill.
 * What drill_run shares and could race on is done once here, before any
 * worker starts: the lab image import (two drills would both import it) and
 * the signing key (two drills would both try to create it).  trial.json is
 * written and signed only with the trial's lock held.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#define TRIAL_REASON_MAX 256

_Static_assert(TRIAL_NPHASES == DRILL_PHASE_N,
    "struct trial_run keeps one time per drill phase");

uint64_t
trial_seed(uint64_t base, size_t index)
{
	uint64_t z = base + ((uint64_t)index + 1) * 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* ---- dressings (--variants) ------------------------------------- */

static void trial_add_rate(cJSON *o, const char *key,
    const struct trial_rate *r);
static void trial_rate_set(struct trial_rate *r, uint64_t k, uint64_t n,
    double level);

const char *
trial_variants_name(int v)
{
	return v == TRIAL_VARIANTS_FIXED ? "fixed" :
	    v == TRIAL_VARIANTS_GENERATED ? "generated" : "policy";
}

uint64_t
trial_variant_seed(const struct trial *t, size_t index)
{
	uint64_t s = t->runs[index].seed;
	size_t i, tries;

	for (tries = 0; tries < 1000; tries++) {
		bool clash = false;

		s = trial_seed(s, 0) & INT64_MAX;   /* policy variant_seed: */
		for (i = 0; i < t->n && !clash; i++)
			clash = t->runs[i].seed == s || (i < index &&
			    t->runs[i].has_variant_seed &&
			    t->runs[i].variant_seed == s);
		if (!clash)
			break;
	}
	return s;
}

/* The variant run r wears (generated: made now, variant_free), or NULL
 * with the policy's variant. */
static const struct variant *
trial_run_variant(const struct trial *t, const struct trial_run *r)
{
	if (t->variants == TRIAL_VARIANTS_GENERATED)
		return variant_generate(r->variant_seed);
	if (t->variants == TRIAL_VARIANTS_FIXED)
		return variant_find(r->variant);
	return NULL;
}

/* Every run's dressing by the rule of t->variants: the shipped variants
 * in table order, index by index, or a generated one from
 * trial_variant_seed; its id, company and service, and the policy copy
 * it is drilled with.  Deterministic (a resumed trial gets the same). */
static void
trial_dress(struct trial *t)
{
	size_t i;

	if (t->variants == TRIAL_VARIANTS_POLICY)
		return;
	for (i = 0; i < t->n; i++) {
		struct trial_run *r = &t->runs[i];
		const struct variant *v;

		if (t->variants == TRIAL_VARIANTS_GENERATED) {
			r->variant_seed = trial_variant_seed(t, i);
			r->has_variant_seed = true;
		} else
			snprintf(r->variant, sizeof r->variant, "%s",
			    variant_table[i % variant_count].id);
		v = trial_run_variant(t, r);
		if (v != NULL) {
			snprintf(r->variant, sizeof r->variant, "%s", v->id);
			util_sanitize(r->company, sizeof r->company,
			    v->company ? v->company : "", v->company ?
			    strlen(v->company) : 0, false);
			util_sanitize(r->service, sizeof r->service,
			    v->service ? v->service : "", v->service ?
			    strlen(v->service) : 0, false);
		}
		variant_free(v);
		snprintf(r->policy_copy, sizeof r->policy_copy,
		    "policies/run-%zu.yaml", i);
	}
}

/* The kind of the bait named bait in run r's dressing ("" when none
 * matches or the run wears the policy's variant). */
static void
trial_bait_kind(const struct trial *t, struct trial_run *r)
{
	const struct variant *v;
	int k;

	r->bait_kind[0] = '\0';
	if (r->bait[0] == '\0' || (v = trial_run_variant(t, r)) == NULL)
		return;
	for (k = 0; k < VARIANT_NBAIT_KINDS; k++) {
		const char *id = variant_bait_id(v, (enum variant_bait_kind)k);

		if (id != NULL && strcmp(id, r->bait) == 0) {
			snprintf(r->bait_kind, sizeof r->bait_kind, "%s",
			    variant_bait_kinds[k]);
			break;
		}
	}
	variant_free(v);
}

/*
 * The per-dressing table of trial.json's summary ("dressings"): one row
 * per distinct dressing (runs, bait taken k/n with its interval, the bait
 * kinds that fired), the rate over dressings (dressings where the bait
 * fired in a run / dressings with a verdict) and per bait kind (runs in
 * which a bait of that kind fired / runs with a verdict), each with its
 * Clopper-Pearson interval at t->level.  Error runs are in no rate.
 */
static cJSON *
trial_dressings_json(const struct trial *t)
{
	cJSON *d = cJSON_CreateObject(), *rows, *kinds;
	size_t i, j, ndress = 0, dbait = 0, verdicts = 0;
	size_t kcount[VARIANT_NBAIT_KINDS] = { 0 };
	struct trial_rate rate;
	int k;

	rows = cJSON_AddArrayToObject(d, "table");
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];
		size_t runs = 0, bait = 0;
		cJSON *row, *kk;
		char num[24];

		/* the first run of each dressing makes its row */
		for (j = 0; j < i; j++)
			if (strcmp(t->runs[j].variant, r->variant) == 0)
				break;
		if (j < i)
			continue;
		row = cJSON_CreateObject();
		kk = cJSON_CreateObject();
		for (j = i; j < t->n; j++) {
			const struct trial_run *x = &t->runs[j];

			if (!x->done || strcmp(x->variant, r->variant) != 0 ||
			    strcmp(x->verdict, "error") == 0)
				continue;
			runs++;
			if (x->bait_fired) {
				const cJSON *c = cJSON_GetObjectItemCaseSensitive(
				    kk, x->bait_kind[0] ? x->bait_kind : "?");

				bait++;
				if (c != NULL)
					cJSON_SetNumberValue((cJSON *)c,
					    c->valuedouble + 1);
				else
					cJSON_AddNumberToObject(kk, x->bait_kind[0]
					    ? x->bait_kind : "?", 1);
			}
		}
		cJSON_AddStringToObject(row, "variant", r->variant);
		if (r->has_variant_seed) {
			snprintf(num, sizeof num, "%llu",
			    (unsigned long long)r->variant_seed);
			cJSON_AddStringToObject(row, "variant_seed", num);
		} else
			cJSON_AddNullToObject(row, "variant_seed");
		cJSON_AddStringToObject(row, "company", r->company);
		cJSON_AddStringToObject(row, "service", r->service);
		cJSON_AddNumberToObject(row, "runs", (double)runs);
		trial_rate_set(&rate, bait, runs, t->level);
		trial_add_rate(row, "bait_taken", &rate);
		cJSON_AddItemToObject(row, "bait_kinds", kk);
		cJSON_AddItemToArray(rows, row);
		if (runs > 0) {
			ndress++;
			if (bait > 0)
				dbait++;
		}
	}
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];

		if (!r->done || strcmp(r->verdict, "error") == 0)
			continue;
		verdicts++;
		for (k = 0; k < VARIANT_NBAIT_KINDS && r->bait_fired; k++)
			if (strcmp(r->bait_kind, variant_bait_kinds[k]) == 0)
				kcount[k]++;
	}
	cJSON_AddNumberToObject(d, "dressings", (double)ndress);
	trial_rate_set(&rate, dbait, ndress, t->level);
	trial_add_rate(d, "bait_taken_over_dressings", &rate);
	kinds = cJSON_AddObjectToObject(d, "bait_taken_by_kind");
	for (k = 0; k < VARIANT_NBAIT_KINDS; k++) {
		trial_rate_set(&rate, kcount[k], verdicts, t->level);
		trial_add_rate(kinds, variant_bait_kinds[k], &rate);
	}
	return d;
}

/* ---- summary ---------------------------------------------------- */

static void
trial_rate_set(struct trial_rate *r, uint64_t k, uint64_t n, double level)
{
	struct errbuf e = { 0 };

	r->k = k;
	r->n = n;
	r->lower = r->upper = NAN;
	if (n > 0 && stats_clopper_pearson(k, n, level, &r->lower, &r->upper,
	    &e) == -1)
		r->lower = r->upper = NAN;
}

/* The summary of runs[0..n) (finished ones only) at level. */
static void
trial_summary_compute(const struct trial_run *runs, size_t n, double level,
    struct trial_summary *s)
{
	double *ttk = xcalloc(n + 1, sizeof *ttk);
	size_t i, bait = 0, verdicts = 0, leaked = 0, exercised;

	memset(s, 0, sizeof *s);
	for (i = 0; i < n; i++) {
		const struct trial_run *r = &runs[i];

		if (!r->done)
			continue;
		s->finished++;
		if (strcmp(r->verdict, "contained") == 0)
			s->contained++;
		else if (strcmp(r->verdict, "breached") == 0)
			s->breached++;
		else if (strcmp(r->verdict, "not-exercised") == 0)
			s->not_exercised++;
		else {
			s->errors++;
			continue;   /* an error proves nothing: in no rate */
		}
		verdicts++;
		if (r->bait_fired)
			bait++;
		if ((strcmp(r->verdict, "contained") == 0 ||
		    strcmp(r->verdict, "breached") == 0) && r->leaks > 0)
			leaked++;
		if (r->time_to_kill_ms >= 0)
			ttk[s->nttk++] = r->time_to_kill_ms;
	}
	exercised = s->contained + s->breached;
	trial_rate_set(&s->bait, bait, verdicts, level);
	trial_rate_set(&s->contained_r, s->contained, exercised, level);
	trial_rate_set(&s->breached_r, s->breached, exercised, level);
	trial_rate_set(&s->leaked, leaked, exercised, level);
	stats_sort(ttk, s->nttk);
	s->ttk_median = stats_median(ttk, s->nttk);
	s->ttk_p95 = stats_percentile(ttk, s->nttk, 0.95);
	s->ttk_max = s->nttk > 0 ? ttk[s->nttk - 1] : NAN;
	free(ttk);
}

size_t
trial_phase_medians(const struct trial *t, double *med)
{
	double *v = xcalloc(t->n + 1, sizeof *v);
	size_t i, k, n = 0;

	for (k = 0; k < TRIAL_NPHASES; k++) {
		n = 0;
		for (i = 0; i < t->n; i++)
			if (t->runs[i].done && t->runs[i].timed)
				v[n++] = t->runs[i].phase_ms[k];
		stats_sort(v, n);
		med[k] = n > 0 ? stats_median(v, n) : NAN;
	}
	free(v);
	return n;
}

void
trial_summarize(struct trial *t)
{
	trial_summary_compute(t->runs, t->n, t->level, &t->sum);
}

int
trial_exit_code(const struct trial *t)
{
	const struct trial_summary *s = &t->sum;

	if (s->breached > 0)
		return EXIT_BREACHED;
	if (s->errors > 0 || !t->complete)
		/* the engine answered when the trial started: a loss
		 * later is a failed trial (5), never "unreachable" (3) */
		return EXIT_INTERNAL;
	if (s->contained == 0)
		return EXIT_NOT_EXERCISED;
	return EXIT_CONTAINED;
}

/* The trial's verdict word (for ares verify). */
static const char *
trial_verdict_word(const struct trial *t)
{
	if (t->sum.breached > 0)
		return "breached";
	if (!t->complete)
		return "incomplete";
	if (t->sum.errors > 0)
		return "error";
	if (t->sum.contained == 0)
		return "not-exercised";
	return "contained";
}

/* ---- trial.json ------------------------------------------------- */

/* BLAKE2b-256 (hex) of the canonical runs list: one line per finished run
 * in index order, "<index> <seed> <run_id|-> <verdict> <report|->\n". */
static void
trial_runs_digest(const struct trial *t, char out[EVIDENCE_HEX_BYTES])
{
	crypto_generichash_state st;
	uint8_t h[32];
	size_t i;

	crypto_generichash_init(&st, NULL, 0, sizeof h);
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];
		char line[512];
		int len;

		if (!r->done)
			continue;
		len = snprintf(line, sizeof line, "%zu %llu %s %s %s\n",
		    r->index, (unsigned long long)r->seed,
		    r->run_id[0] != '\0' ? r->run_id : "-", r->verdict,
		    r->report_blake2b[0] != '\0' ? r->report_blake2b : "-");
		if (t->multi && len > 0)   /* v2: "... <engine|-> <attempts>" */
			len = snprintf(line + len - 1, sizeof line -
			    (size_t)len + 1, " %s %zu\n", r->engine[0] != '\0' ?
			    r->engine : "-", r->nattempts) + len - 1;
		if (len < 0 || (size_t)len >= sizeof line)
			len = (int)strlen(line);
		crypto_generichash_update(&st, (const uint8_t *)line,
		    (size_t)len);
		/* v2: then one line per failed attempt,
		 * "attempt <run_id|-> <report|->\n" */
		for (size_t k = 0; t->multi && k < r->nattempts; k++) {
			const struct trial_attempt *a = &r->attempts[k];

			len = snprintf(line, sizeof line, "attempt %s %s\n",
			    a->run_id[0] != '\0' ? a->run_id : "-",
			    a->report_blake2b[0] != '\0' ? a->report_blake2b :
			    "-");
			if (len < 0 || (size_t)len >= sizeof line)
				len = (int)strlen(line);
			crypto_generichash_update(&st, (const uint8_t *)line,
			    (size_t)len);
		}
	}
	/* v2: the attempts of runs not done, "pending <index> <attempts>\n"
	 * and their attempt lines */
	for (i = 0; t->multi && i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];
		char line[512];
		int len;

		if (r->done || r->nattempts == 0)
			continue;
		len = snprintf(line, sizeof line, "pending %zu %zu\n", r->index,
		    r->nattempts);
		crypto_generichash_update(&st, (const uint8_t *)line,
		    (size_t)len);
		for (size_t k = 0; k < r->nattempts; k++) {
			const struct trial_attempt *a = &r->attempts[k];

			len = snprintf(line, sizeof line, "attempt %s %s\n",
			    a->run_id[0] != '\0' ? a->run_id : "-",
			    a->report_blake2b[0] != '\0' ? a->report_blake2b :
			    "-");
			if (len < 0 || (size_t)len >= sizeof line)
				len = (int)strlen(line);
			crypto_generichash_update(&st, (const uint8_t *)line,
			    (size_t)len);
		}
	}
	crypto_generichash_final(&st, h, sizeof h);
	util_hex(h, sizeof h, out);
}

/* The trusted comment of trial.json.minisig.  Caller frees. */
static char *
trial_comment(const struct trial *t)
{
	char dig[EVIDENCE_HEX_BYTES];

	trial_runs_digest(t, dig);
	return xasprintf("%s trial=%s n=%zu done=%zu complete=%s "
	    "runs=%s", t->multi ? TRIAL_FORMAT_V2 : TRIAL_FORMAT, t->id, t->n,
	    t->sum.finished,
	    t->complete ? "true" : "false", dig);
}

static void
trial_add_num_or_null(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void
trial_add_rate(cJSON *o, const char *key, const struct trial_rate *r)
{
	cJSON *j = cJSON_AddObjectToObject(o, key);

	cJSON_AddNumberToObject(j, "k", (double)r->k);
	cJSON_AddNumberToObject(j, "n", (double)r->n);
	trial_add_num_or_null(j, "lower", r->n > 0 ? r->lower : NAN);
	trial_add_num_or_null(j, "upper", r->n > 0 ? r->upper : NAN);
}

/* v2: a run's engine ("" : null, it never started) and its failed
 * attempts. */
static void
trial_add_engine(cJSON *o, const struct trial_run *r)
{
	cJSON *a;
	size_t k;

	if (r->engine[0] != '\0')
		cJSON_AddStringToObject(o, "engine", r->engine);
	else
		cJSON_AddNullToObject(o, "engine");
	a = cJSON_AddArrayToObject(o, "attempts");
	for (k = 0; k < r->nattempts; k++) {
		const struct trial_attempt *at = &r->attempts[k];
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "engine", at->engine);
		cJSON_AddStringToObject(x, "verdict", "error");
		cJSON_AddStringToObject(x, "run_id", at->run_id);
		cJSON_AddStringToObject(x, "run_dir", at->run_dir);
		cJSON_AddStringToObject(x, "reason", at->reason);
		if (at->report_blake2b[0] != '\0')
			cJSON_AddStringToObject(x, "report_blake2b",
			    at->report_blake2b);
		else
			cJSON_AddNullToObject(x, "report_blake2b");
		cJSON_AddItemToArray(a, x);
	}
}

cJSON *
trial_json(const struct trial *t)
{
	cJSON *j = cJSON_CreateObject(), *a, *o, *s;
	struct trial_summary sum;
	char iso[40], num[24];
	size_t i;

	trial_summary_compute(t->runs, t->n, t->level, &sum);
	cJSON_AddStringToObject(j, "format", t->multi ? TRIAL_FORMAT_V2 :
	    TRIAL_FORMAT);
	cJSON_AddStringToObject(j, "trial_id", t->id);
	util_wall_iso(util_wall_ns(), iso);
	util_json_add_generated(j, iso);
	cJSON_AddStringToObject(j, "policy", t->policy);
	cJSON_AddStringToObject(j, "policy_path", t->policy_abs);
	cJSON_AddStringToObject(j, "policy_blake2b", t->policy_blake2b);
	snprintf(num, sizeof num, "%llu", (unsigned long long)t->base_seed);
	cJSON_AddStringToObject(j, "base_seed", num);
	cJSON_AddStringToObject(j, "seed_rule", "splitmix64");
	cJSON_AddNumberToObject(j, "n", (double)t->n);
	cJSON_AddNumberToObject(j, "j", (double)t->jobs);
	cJSON_AddNumberToObject(j, "level", t->level);
	cJSON_AddBoolToObject(j, "complete", t->complete);
	if (t->variants != TRIAL_VARIANTS_POLICY)
		cJSON_AddStringToObject(j, "variants",
		    trial_variants_name(t->variants));
	if (t->gc != NULL)   /* the start-of-trial sweep (core/gc.c) */
		cJSON_AddItemToObject(j, "gc", gc_report_json(t->gc));
	if (t->multi) {
		a = cJSON_AddArrayToObject(j, "engines");
		for (i = 0; i < t->nengines; i++) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "engine", t->engines[i].name);
			cJSON_AddNumberToObject(o, "capacity",
			    (double)t->engines[i].capacity);
			cJSON_AddItemToArray(a, o);
		}
	}
	a = cJSON_AddArrayToObject(j, "runs");
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];

		if (!r->done)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", (double)r->index);
		snprintf(num, sizeof num, "%llu", (unsigned long long)r->seed);
		cJSON_AddStringToObject(o, "seed", num);
		cJSON_AddStringToObject(o, "run_id", r->run_id);
		cJSON_AddStringToObject(o, "run_dir", r->run_dir);
		cJSON_AddStringToObject(o, "verdict", r->verdict);
		cJSON_AddStringToObject(o, "reason", r->reason);
		cJSON_AddBoolToObject(o, "bait_fired", r->bait_fired);
		cJSON_AddNumberToObject(o, "leaks", (double)r->leaks);
		trial_add_num_or_null(o, "time_to_kill_ms",
		    r->time_to_kill_ms >= 0 ? r->time_to_kill_ms : NAN);
		if (r->report_blake2b[0] != '\0')
			cJSON_AddStringToObject(o, "report_blake2b",
			    r->report_blake2b);
		else
			cJSON_AddNullToObject(o, "report_blake2b");
		if (t->multi)
			trial_add_engine(o, r);
		if (t->variants != TRIAL_VARIANTS_POLICY) {
			cJSON_AddStringToObject(o, "variant", r->variant);
			if (r->has_variant_seed) {
				snprintf(num, sizeof num, "%llu",
				    (unsigned long long)r->variant_seed);
				cJSON_AddStringToObject(o, "variant_seed", num);
			} else
				cJSON_AddNullToObject(o, "variant_seed");
			cJSON_AddStringToObject(o, "company", r->company);
			cJSON_AddStringToObject(o, "service", r->service);
			cJSON_AddStringToObject(o, "policy_copy",
			    r->policy_copy);
			if (r->bait_fired) {
				cJSON_AddStringToObject(o, "bait", r->bait);
				cJSON_AddStringToObject(o, "bait_kind",
				    r->bait_kind);
			} else {
				cJSON_AddNullToObject(o, "bait");
				cJSON_AddNullToObject(o, "bait_kind");
			}
		}
		cJSON_AddItemToArray(a, o);
	}
	if (t->multi) {
		/* the failed attempts of runs not done (--resume runs them),
		 * and why the trial stopped with runs left */
		a = cJSON_AddArrayToObject(j, "pending");
		for (i = 0; i < t->n; i++) {
			const struct trial_run *r = &t->runs[i];

			if (r->done || r->nattempts == 0)
				continue;
			o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "index", (double)r->index);
			trial_add_engine(o, r);
			cJSON_AddItemToArray(a, o);
		}
		if (t->stopped[0] != '\0')
			cJSON_AddStringToObject(j, "stopped", t->stopped);
		else
			cJSON_AddNullToObject(j, "stopped");
	}
	s = cJSON_AddObjectToObject(j, "summary");
	cJSON_AddNumberToObject(s, "finished", (double)sum.finished);
	cJSON_AddNumberToObject(s, "missing", (double)(t->n - sum.finished));
	cJSON_AddNumberToObject(s, "contained", (double)sum.contained);
	cJSON_AddNumberToObject(s, "breached", (double)sum.breached);
	cJSON_AddNumberToObject(s, "not_exercised",
	    (double)sum.not_exercised);
	cJSON_AddNumberToObject(s, "error", (double)sum.errors);
	o = cJSON_AddObjectToObject(s, "rates");
	trial_add_rate(o, "bait_taken", &sum.bait);
	trial_add_rate(o, "contained", &sum.contained_r);
	trial_add_rate(o, "breached", &sum.breached_r);
	trial_add_rate(o, "leaked", &sum.leaked);
	o = cJSON_AddObjectToObject(s, "time_to_kill_ms");
	cJSON_AddNumberToObject(o, "n", (double)sum.nttk);
	trial_add_num_or_null(o, "median", sum.ttk_median);
	trial_add_num_or_null(o, "p95", sum.ttk_p95);
	trial_add_num_or_null(o, "max", sum.ttk_max);
	if (t->variants != TRIAL_VARIANTS_POLICY)
		cJSON_AddItemToObject(s, "dressings", trial_dressings_json(t));
	cJSON_AddItemToObject(j, "signing", sign_json(t->key_id,
	    "trial.json.minisig"));
	return j;
}

/* Write TRIAL_DIR/trial.json atomically and sign it (ares.pub beside it).
 * -1 + e. */
static int
trial_save(struct trial *t, const struct sign_secret *sk, struct errbuf *e)
{
	cJSON *j;
	char *txt, *path, *comment;
	int rc;

	trial_summarize(t);
	j = trial_json(t);
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	if (txt == NULL)
		util_fatal("cJSON_Print failed");
	path = xasprintf("%s/trial.json", t->dir);
	{
		char *nl = xasprintf("%s\n", txt);

		rc = util_write_file(path, nl, strlen(nl), 0644, e);
		free(nl);
	}
	cJSON_free(txt);
	if (rc == 0) {
		comment = trial_comment(t);
		rc = sign_file_with_pub(sk, path, comment, e);
		free(comment);
	}
	if (rc == 0)   /* the reading aid beside it (report_dirs.c) */
		rc = report_trial_md(t, e);
	free(path);
	return rc;
}

bool
trial_dir_is(const char *dir)
{
	char *p = xasprintf("%s/trial.json", dir);
	struct stat sb;
	bool is = stat(p, &sb) == 0;

	free(p);
	return is;
}

/* ---- parsing (resume, verify) ----------------------------------- */

static bool
trial_id_ok(const char *s, size_t max)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= max)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '-'))
			return false;
	return true;
}

static bool
trial_hex64_ok(const char *s)
{
	size_t i;

	if (strlen(s) != 64)
		return false;
	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return false;
	return true;
}

static bool
trial_uint(const cJSON *v, double max, size_t *out)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) ||
	    v->valuedouble > max || v->valuedouble != floor(v->valuedouble))
		return false;
	*out = (size_t)v->valuedouble;
	return true;
}

/* Copy string member key of o into dst (bounded), or fail with why. */
static int
trial_copy(const cJSON *o, const char *key, char *dst, size_t dstlen,
    char *why, size_t whylen)
{
	const char *s = util_json_str(o, key, NULL);

	if (s == NULL || strlen(s) >= dstlen) {
		snprintf(why, whylen, "%s: missing, not a string or too long",
		    key);
		return -1;
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/* v2: trial.json's engines (name, capacity; no URL: a resumed trial
 * reaches engines by the options) into t.  -1 with why. */
static int
trial_parse_engines(const cJSON *j, struct trial *t, char *why,
    size_t whylen)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "engines"), *x;
	size_t k;

	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 ||
	    cJSON_GetArraySize(a) > TRIAL_MAX_ENGINES) {
		snprintf(why, whylen, "engines: not a list of 1..%d",
		    TRIAL_MAX_ENGINES);
		return -1;
	}
	t->engines = xcalloc(TRIAL_MAX_ENGINES, sizeof *t->engines);
	t->nengines = 0;
	cJSON_ArrayForEach(x, a) {
		struct trial_engine *en = &t->engines[t->nengines];
		const char *s = util_json_str(x, "engine", NULL);

		if (s == NULL || s[0] == '\0' || strlen(s) >= sizeof en->name ||
		    !trial_uint(cJSON_GetObjectItemCaseSensitive(x,
		    "capacity"), TRIAL_ENGINE_CAP_MAX, &en->capacity) ||
		    en->capacity == 0) {
			snprintf(why, whylen, "engines[%zu]: engine or capacity "
			    "bad", t->nengines);
			return -1;
		}
		util_sanitize(en->name, sizeof en->name, s, strlen(s), false);
		for (k = 0; k < t->nengines; k++)
			if (strcmp(t->engines[k].name, en->name) == 0) {
				snprintf(why, whylen, "engines: %.200s listed "
				    "twice", en->name);
				return -1;
			}
		t->nengines++;
	}
	return 0;
}

/* Whether name is one of t's engines. */
static bool
trial_engine_known(const struct trial *t, const char *name)
{
	size_t k;

	for (k = 0; k < t->nengines; k++)
		if (strcmp(t->engines[k].name, name) == 0)
			return true;
	return false;
}

/* v2: run tr's engine and failed attempts from its entry r.  -1 with
 * why. */
static int
trial_parse_attempts(const cJSON *r, const struct trial *t,
    struct trial_run *tr, char *why, size_t whylen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, "engine"), *a, *x;
	const char *s;
	char rd[96];

	if (cJSON_IsString(v) && trial_engine_known(t, v->valuestring))
		snprintf(tr->engine, sizeof tr->engine, "%s", v->valuestring);
	else if (!(cJSON_IsNull(v) && tr->run_id[0] == '\0')) {
		snprintf(why, whylen, "run %zu: engine is not one of the "
		    "trial's engines", tr->index);
		return -1;
	}
	a = cJSON_GetObjectItemCaseSensitive(r, "attempts");
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > TRIAL_MAX_ATTEMPTS) {
		snprintf(why, whylen, "run %zu: attempts: not a list of at most "
		    "%d", tr->index, TRIAL_MAX_ATTEMPTS);
		return -1;
	}
	cJSON_ArrayForEach(x, a) {
		struct trial_attempt at;

		memset(&at, 0, sizeof at);
		s = util_json_str(x, "engine", NULL);
		if (s == NULL || !trial_engine_known(t, s)) {
			snprintf(why, whylen, "run %zu: attempts[%zu]: engine "
			    "is not one of the trial's engines", tr->index,
			    tr->nattempts);
			return -1;
		}
		snprintf(at.engine, sizeof at.engine, "%s", s);
		s = util_json_str(x, "verdict", NULL);
		if (s == NULL || strcmp(s, "error") != 0 ||
		    trial_copy(x, "run_id", at.run_id, sizeof at.run_id, why,
		    whylen) == -1 || trial_copy(x, "run_dir", at.run_dir,
		    sizeof at.run_dir, why, whylen) == -1) {
			snprintf(why, whylen, "run %zu: attempts[%zu]: verdict, "
			    "run_id or run_dir bad", tr->index, tr->nattempts);
			return -1;
		}
		snprintf(rd, sizeof rd, "runs/%s", at.run_id);
		if (at.run_id[0] != '\0' ? !trial_id_ok(at.run_id,
		    sizeof at.run_id) || strcmp(rd, at.run_dir) != 0 :
		    at.run_dir[0] != '\0') {
			snprintf(why, whylen, "run %zu: attempts[%zu]: run_dir "
			    "must be runs/<run_id>", tr->index, tr->nattempts);
			return -1;
		}
		s = util_json_str(x, "reason", NULL);
		util_sanitize(at.reason, sizeof at.reason, s != NULL ? s : "",
		    s != NULL ? strlen(s) : 0, false);
		v = cJSON_GetObjectItemCaseSensitive(x, "report_blake2b");
		if (cJSON_IsString(v) && trial_hex64_ok(v->valuestring) &&
		    at.run_id[0] != '\0')
			memcpy(at.report_blake2b, v->valuestring, 65);
		else if (!cJSON_IsNull(v)) {
			snprintf(why, whylen, "run %zu: attempts[%zu]: "
			    "report_blake2b bad (64 hex digits of a run dir's "
			    "report, or null)", tr->index, tr->nattempts);
			return -1;
		}
		tr->attempts = xrealloc(tr->attempts, (tr->nattempts + 1) *
		    sizeof *tr->attempts);
		tr->attempts[tr->nattempts++] = at;
	}
	return 0;
}

/* trial.json's own fields (all but runs) into t; key_id_out (may be
 * NULL) gets signing.key_id.  -1 with why. */
static int
trial_parse_head(const cJSON *j, struct trial *t, char *key_id_out,
    char *why, size_t whylen)
{
	const cJSON *v;
	const char *s;
	uint64_t u;

	s = util_json_str(j, "format", NULL);
	if (s == NULL || (strcmp(s, TRIAL_FORMAT) != 0 &&
	    strcmp(s, TRIAL_FORMAT_V2) != 0)) {
		snprintf(why, whylen, "format is not " TRIAL_FORMAT " or "
		    TRIAL_FORMAT_V2);
		return -1;
	}
	t->multi = strcmp(s, TRIAL_FORMAT_V2) == 0;
	if (trial_copy(j, "trial_id", t->id, sizeof t->id, why, whylen) ||
	    !trial_id_ok(t->id, sizeof t->id)) {
		snprintf(why, whylen, "trial_id: bad");
		return -1;
	}
	if (trial_copy(j, "policy", t->policy, sizeof t->policy, why,
	    whylen) == -1 || trial_copy(j, "policy_path", t->policy_abs,
	    sizeof t->policy_abs, why, whylen) == -1 || trial_copy(j,
	    "policy_blake2b", t->policy_blake2b, sizeof t->policy_blake2b,
	    why, whylen) == -1)
		return -1;
	s = util_json_str(j, "base_seed", NULL);
	if (s == NULL || stats_parse_count(s, UINT64_MAX, &u) == -1) {
		snprintf(why, whylen, "base_seed: not a decimal string");
		return -1;
	}
	t->base_seed = u;
	s = util_json_str(j, "seed_rule", NULL);
	if (s == NULL || strcmp(s, "splitmix64") != 0) {
		snprintf(why, whylen, "seed_rule: not splitmix64");
		return -1;
	}
	if (!trial_uint(cJSON_GetObjectItemCaseSensitive(j, "n"),
	    TRIAL_MAX_RUNS, &t->n) || t->n == 0 ||
	    !trial_uint(cJSON_GetObjectItemCaseSensitive(j, "j"),
	    t->multi ? TRIAL_MAX_ENGINES * TRIAL_ENGINE_CAP_MAX :
	    TRIAL_MAX_JOBS, &t->jobs) || t->jobs == 0) {
		snprintf(why, whylen, "n or j: not an integer in range");
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "level");
	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 &&
	    v->valuedouble < 1)) {
		snprintf(why, whylen, "level: not in (0, 1)");
		return -1;
	}
	t->level = v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(j, "complete");
	if (!cJSON_IsBool(v)) {
		snprintf(why, whylen, "complete: not a boolean");
		return -1;
	}
	t->complete = cJSON_IsTrue(v);
	s = util_json_str(j, "variants", NULL);
	t->variants = TRIAL_VARIANTS_POLICY;
	if (s != NULL && strcmp(s, "fixed") == 0)
		t->variants = TRIAL_VARIANTS_FIXED;
	else if (s != NULL && strcmp(s, "generated") == 0)
		t->variants = TRIAL_VARIANTS_GENERATED;
	else if (cJSON_GetObjectItemCaseSensitive(j, "variants") != NULL) {
		snprintf(why, whylen, "variants: not fixed or generated");
		return -1;
	}
	if (t->multi && trial_parse_engines(j, t, why, whylen) == -1)
		return -1;
	if (key_id_out != NULL) {
		v = cJSON_GetObjectItemCaseSensitive(j, "signing");
		s = util_json_str(v, "key_id", NULL);
		snprintf(key_id_out, SIGN_KEYID_HEX, "%s", s != NULL ? s : "");
	}
	return 0;
}

/* A run's verdict as trial.json may state it. */
static bool
trial_verdict_ok(const char *v)
{
	return strcmp(v, "contained") == 0 || strcmp(v, "breached") == 0 ||
	    strcmp(v, "not-exercised") == 0 || strcmp(v, "error") == 0;
}

/* Entry number count (0-based) of trial.json's runs into t->runs (by its
 * index, once; the seed must follow the rule).  -1 with why. */
static int
trial_parse_run(const cJSON *r, size_t count, struct trial *t, char *why,
    size_t whylen)
{
	struct trial_run *tr;
	const cJSON *v;
	const char *s;
	size_t idx, leaks;
	uint64_t u;
	char rd[96];

	if (count >= t->n || !cJSON_IsObject(r) ||
	    !trial_uint(cJSON_GetObjectItemCaseSensitive(r, "index"),
	    (double)t->n - 1, &idx)) {
		snprintf(why, whylen, "runs[%zu]: bad entry or index", count);
		return -1;
	}
	tr = &t->runs[idx];
	if (tr->done) {
		snprintf(why, whylen, "runs: index %zu twice", idx);
		return -1;
	}
	s = util_json_str(r, "seed", NULL);
	if (s == NULL || stats_parse_count(s, UINT64_MAX, &u) == -1 ||
	    u != tr->seed) {
		snprintf(why, whylen, "run %zu: seed does not follow the seed "
		    "rule", idx);
		return -1;
	}
	if (trial_copy(r, "run_id", tr->run_id, sizeof tr->run_id, why,
	    whylen) == -1 || trial_copy(r, "run_dir", tr->run_dir,
	    sizeof tr->run_dir, why, whylen) == -1 || trial_copy(r,
	    "verdict", tr->verdict, sizeof tr->verdict, why, whylen) == -1)
		return -1;
	s = util_json_str(r, "reason", NULL);
	util_sanitize(tr->reason, sizeof tr->reason, s != NULL ? s : "",
	    s != NULL ? strlen(s) : 0, false);
	if (tr->run_id[0] != '\0') {
		snprintf(rd, sizeof rd, "runs/%s", tr->run_id);
		if (!trial_id_ok(tr->run_id, sizeof tr->run_id) ||
		    strcmp(rd, tr->run_dir) != 0) {
			snprintf(why, whylen, "run %zu: run_id/run_dir bad "
			    "(must be runs/<run_id>)", idx);
			return -1;
		}
	} else if (tr->run_dir[0] != '\0') {
		snprintf(why, whylen, "run %zu: run_dir without run_id", idx);
		return -1;
	}
	if (!trial_verdict_ok(tr->verdict)) {
		snprintf(why, whylen, "run %zu: unknown verdict", idx);
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(r, "bait_fired");
	if (!cJSON_IsBool(v) || !trial_uint(
	    cJSON_GetObjectItemCaseSensitive(r, "leaks"), 1e12, &leaks)) {
		snprintf(why, whylen, "run %zu: bait_fired/leaks bad", idx);
		return -1;
	}
	tr->bait_fired = cJSON_IsTrue(v);
	tr->leaks = leaks;
	v = cJSON_GetObjectItemCaseSensitive(r, "time_to_kill_ms");
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    isfinite(v->valuedouble))
		tr->time_to_kill_ms = v->valuedouble;
	else if (!cJSON_IsNull(v)) {
		snprintf(why, whylen, "run %zu: time_to_kill_ms bad", idx);
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(r, "report_blake2b");
	if (cJSON_IsString(v) && trial_hex64_ok(v->valuestring) &&
	    tr->run_id[0] != '\0')
		memcpy(tr->report_blake2b, v->valuestring, 65);
	else if (!cJSON_IsNull(v)) {
		snprintf(why, whylen, "run %zu: report_blake2b bad", idx);
		return -1;
	}
	if (t->multi && trial_parse_attempts(r, t, tr, why, whylen) == -1)
		return -1;
	if (t->variants != TRIAL_VARIANTS_POLICY) {
		/* the dressing must be the rule's (trial_dress) */
		s = util_json_str(r, "variant", NULL);
		v = cJSON_GetObjectItemCaseSensitive(r, "variant_seed");
		if (s == NULL || strcmp(s, tr->variant) != 0 ||
		    (tr->has_variant_seed ? !cJSON_IsString(v) ||
		    stats_parse_count(v->valuestring, UINT64_MAX, &u) == -1 ||
		    u != tr->variant_seed : !cJSON_IsNull(v))) {
			snprintf(why, whylen, "run %zu: variant/variant_seed "
			    "do not follow the dressing rule of --variants %s",
			    idx, trial_variants_name(t->variants));
			return -1;
		}
		s = util_json_str(r, "bait", NULL);
		if (tr->bait_fired != (s != NULL) || (s != NULL &&
		    strlen(s) >= sizeof tr->bait)) {
			snprintf(why, whylen, "run %zu: bait does not match "
			    "bait_fired", idx);
			return -1;
		}
		util_sanitize(tr->bait, sizeof tr->bait, s ? s : "",
		    s ? strlen(s) : 0, false);
		trial_bait_kind(t, tr);
	}
	tr->done = true;
	return 0;
}

/* v2: "pending" (the failed attempts of runs not done) and "stopped"
 * into t.  -1 with why. */
static int
trial_parse_pending(const cJSON *j, struct trial *t, char *why,
    size_t whylen)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "pending"), *x;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stopped");
	size_t idx, count = 0;

	if (cJSON_IsString(st))
		util_sanitize(t->stopped, sizeof t->stopped, st->valuestring,
		    strlen(st->valuestring), false);
	else if (!cJSON_IsNull(st)) {
		snprintf(why, whylen, "stopped: not a string or null");
		return -1;
	}
	if (!cJSON_IsArray(p)) {
		snprintf(why, whylen, "pending: not an array");
		return -1;
	}
	cJSON_ArrayForEach(x, p) {
		struct trial_run *tr;

		if (count++ >= t->n || !cJSON_IsObject(x) ||
		    !trial_uint(cJSON_GetObjectItemCaseSensitive(x, "index"),
		    (double)t->n - 1, &idx)) {
			snprintf(why, whylen, "pending[%zu]: bad entry or index",
			    count - 1);
			return -1;
		}
		tr = &t->runs[idx];
		if (tr->done || tr->nattempts > 0) {
			snprintf(why, whylen, "pending: index %zu is a run "
			    "listed already", idx);
			return -1;
		}
		if (trial_parse_attempts(x, t, tr, why, whylen) == -1)
			return -1;
		if (tr->nattempts == 0) {
			snprintf(why, whylen, "pending: index %zu without "
			    "attempts", idx);
			return -1;
		}
	}
	return 0;
}

/* Parse and check trial.json into t (t->runs allocated; trial_free);
 * key_id_out (may be NULL) gets signing.key_id.  -1 with why. */
static int
trial_parse(const char *buf, size_t len, struct trial *t, char *key_id_out,
    char *why, size_t whylen)
{
	cJSON *j = cJSON_ParseWithLength(buf, len);
	const cJSON *runs, *r;
	size_t count = 0;
	int rc = -1;

	if (!cJSON_IsObject(j)) {
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	if (trial_parse_head(j, t, key_id_out, why, whylen) == -1)
		goto out;
	t->runs = xcalloc(t->n, sizeof *t->runs);
	for (size_t i = 0; i < t->n; i++) {
		t->runs[i].index = i;
		t->runs[i].seed = trial_seed(t->base_seed, i);
		t->runs[i].time_to_kill_ms = -1;
	}
	trial_dress(t);
	runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	if (!cJSON_IsArray(runs)) {
		snprintf(why, whylen, "runs: not an array");
		goto out;
	}
	cJSON_ArrayForEach(r, runs)
		if (trial_parse_run(r, count++, t, why, whylen) == -1)
			goto out;
	if (t->multi && trial_parse_pending(j, t, why, whylen) == -1)
		goto out;
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

void
trial_free(struct trial *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; t->runs != NULL && i < t->n; i++)
		free(t->runs[i].attempts);
	free(t->engines);
	t->engines = NULL;
	t->nengines = 0;
	free(t->runs);
	t->runs = NULL;
	free(t->gc);
	t->gc = NULL;
}

/* ---- verify ----------------------------------------------------- */

/*
 * ares verify TRIAL_DIR recomputes: every listed run is verified on its
 * own (report_verify_dir, same key) and what the trial says of it must be
 * what its signed report.json says; then the summary is computed again
 * from the runs' own reports and every count, rate, interval and time in
 * trial.json must equal it.  A forged trial.json, however consistently
 * re-signed, fails naming the field.
 */
#define TRIAL_EPS_BOUND    1e-9   /* interval bounds: same maths twice */
#define TRIAL_EPS_MS       1e-6   /* times: the same doubles via JSON */
#define TRIAL_UNLISTED_MAX (4 * TRIAL_MAX_RUNS)   /* runs/ entries read */

/* a == b within eps (relative above 1); NaN equals only NaN. */
static bool
trial_num_eq(double a, double b, double eps)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return fabs(a - b) <= eps * fmax(1.0, fabs(a));
}

/* "%.4f" or "null" into out. */
static const char *
trial_fmt_num(double v, char *out, size_t len)
{
	if (isnan(v))
		snprintf(out, len, "null");
	else
		snprintf(out, len, "%.4f", v);
	return out;
}

/*
 * The fields a trial records of a run, read from the run's report.json
 * (buf, len): run id, verdict, seed, bait fired, leaks, time to kill and
 * the policy path.  got keeps everything else.  0, or -1 with why.
 */
static int
trial_report_fields(const char *buf, size_t len, struct trial_run *got,
    uint64_t *seed, char *policy, size_t plen, char *why, size_t whylen)
{
	cJSON *j = cJSON_ParseWithLength(buf, len);
	const cJSON *v;
	const char *s;
	size_t leaks;
	int rc = -1;

	if (!cJSON_IsObject(j)) {
		snprintf(why, whylen, "report.json: not a JSON object");
		goto out;
	}
	s = util_json_str(j, "run_id", NULL);
	if (s == NULL || strlen(s) >= sizeof got->run_id) {
		snprintf(why, whylen, "report.json: run_id missing");
		goto out;
	}
	snprintf(got->run_id, sizeof got->run_id, "%s", s);
	s = util_json_str(j, "verdict", NULL);
	if (s == NULL || strlen(s) >= sizeof got->verdict) {
		snprintf(why, whylen, "report.json: verdict missing");
		goto out;
	}
	snprintf(got->verdict, sizeof got->verdict, "%s", s);
	s = util_json_str(j, "seed", NULL);
	if (s == NULL || stats_parse_count(s, UINT64_MAX, seed) == -1) {
		snprintf(why, whylen, "report.json: seed not a decimal string");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "bait");
	if (!cJSON_IsArray(v)) {
		snprintf(why, whylen, "report.json: bait not an array");
		goto out;
	}
	got->bait_fired = cJSON_GetArraySize(v) > 0;
	s = got->bait_fired ? util_json_str(cJSON_GetArrayItem(v, 0), "name",
	    NULL) : NULL;
	util_sanitize(got->bait, sizeof got->bait, s ? s : "", s ? strlen(s) :
	    0, false);
	if (!trial_uint(cJSON_GetObjectItemCaseSensitive(j, "leaks"), 1e12,
	    &leaks)) {
		snprintf(why, whylen, "report.json: leaks not a count");
		goto out;
	}
	got->leaks = leaks;
	v = cJSON_GetObjectItemCaseSensitive(j, "time_to_kill_ms");
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    isfinite(v->valuedouble))
		got->time_to_kill_ms = v->valuedouble;
	else if (cJSON_IsNull(v))
		got->time_to_kill_ms = -1;
	else {
		snprintf(why, whylen, "report.json: time_to_kill_ms bad");
		goto out;
	}
	s = util_json_str(j, "policy", NULL);
	snprintf(policy, plen, "%s", s != NULL ? s : "");
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

/*
 * Whether DIR/<rel> (rel = runs/<run id>) is a real directory inside
 * DIR/runs: neither runs/ nor the run dir a symlink, and its real path
 * directly below the real path of DIR/runs.  why when not.
 */
static bool
trial_run_dir_inside(const char *dir, const char *rel, char *why,
    size_t whylen)
{
	char *runs = xasprintf("%s/runs", dir), *p = xasprintf("%s/%s", dir,
	    rel);
	char *rr = NULL, *rp = NULL;
	struct stat sb;
	bool ok = false;
	size_t n;

	if (lstat(runs, &sb) == -1 || !S_ISDIR(sb.st_mode))
		snprintf(why, whylen, "runs/ is not a directory of the trial "
		    "(a symlink or missing)");
	else if (lstat(p, &sb) == -1)
		snprintf(why, whylen, "%s: %s (a listed run is missing)", rel,
		    strerror(errno));
	else if (!S_ISDIR(sb.st_mode))
		snprintf(why, whylen, "%s is %s, not a run directory inside "
		    "the trial", rel, S_ISLNK(sb.st_mode) ? "a symlink" :
		    "no directory");
	else if ((rr = realpath(runs, NULL)) == NULL ||
	    (rp = realpath(p, NULL)) == NULL)
		snprintf(why, whylen, "%s: %s", rel, strerror(errno));
	else if (strncmp(rp, rr, n = strlen(rr)) != 0 || rp[n] != '/' ||
	    strchr(rp + n + 1, '/') != NULL)
		snprintf(why, whylen, "%s resolves outside the trial's runs/",
		    rel);
	else
		ok = true;
	free(rr);
	free(rp);
	free(runs);
	free(p);
	return ok;
}

/*
 * Whether the run in path (its report verified, so its evidence chain is
 * the signed one) ran on engine: its drill.start line's engine_url (one of
 * the first lines of evidence.jsonl).  why when not.
 */
/* The engine_url of run dir path's signed drill.start (the first lines
 * of its evidence.jsonl, never through a link) into out; "" none. */
static void
trial_dir_engine_url(const char *path, char *out, size_t outlen)
{
	char *p = xasprintf("%s/evidence.jsonl", path), buf[65536];
	const char *line, *nl, *got = NULL;
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), k;
	size_t len = 0;
	ssize_t n;
	cJSON *j = NULL;

	free(p);
	while (fd != -1 && len < sizeof buf - 1 && (n = read(fd, buf + len,
	    sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	if (fd != -1)
		close(fd);
	buf[len] = '\0';
	for (line = buf, k = 0; k < 4 && line < buf + len && got == NULL;
	    k++, line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (nl == NULL)
			break;
		cJSON_Delete(j);
		j = cJSON_ParseWithLength(line, (size_t)(nl - line));
		if (strcmp(util_json_str(j, "type", ""), "drill.start") == 0)
			got = util_json_str(j, "engine_url", "");
	}
	util_sanitize(out, outlen, got != NULL ? got : "", got != NULL ?
	    strlen(got) : 0, false);
	cJSON_Delete(j);
}

/* Whether run dir path's signed drill.start names engine; else why. */
static bool
trial_run_engine_ok(const char *path, const char *engine, char *why,
    size_t whylen)
{
	char got[TRIAL_ENGINE_NAME_MAX];

	trial_dir_engine_url(path, got, sizeof got);
	if (got[0] == '\0')
		snprintf(why, whylen, "trial.json engine %.200s; its signed "
		    "evidence names no engine (drill.start engine_url)", engine);
	else if (strcmp(got, engine) != 0)
		snprintf(why, whylen, "trial.json engine %.200s; its signed "
		    "evidence (drill.start engine_url): %.200s", engine, got);
	return why[0] == '\0';
}

/*
 * Check one finished run against its directory: inside the trial, the
 * BLAKE2b-256 of its report.json, report_verify_dir with the same key and
 * run id, and every field the trial records of it (verdict, seed, bait,
 * leaks, time to kill, and with policy non-NULL the policy path) against
 * its own report.  One check "run:<index>" in res, naming the first
 * difference.  got (may be NULL) gets the run as its report tells it (the
 * listed run when the report cannot be trusted).
 */
/*
 * A listed run's or attempt's report.json in run dir path: read (its hash
 * must be want, the one trial.json recorded) and verified against the
 * dir's chain and signature (report_verify_dir into *rr).  The report's
 * bytes (the caller frees; *len its length), or NULL with why set (an
 * unreadable report prefixed with read_prefix).
 */
static char *
trial_read_signed(const char *path, const char *want, const char *read_prefix,
    const char *pub_path, struct report_verify_result *rr, size_t *len,
    char *why, size_t whylen)
{
	struct errbuf e = { 0 };
	char hex[EVIDENCE_HEX_BYTES], *buf;

	buf = report_json_read_hashed(path, hex, len, &e);
	if (buf == NULL) {
		snprintf(why, whylen, "%s%.600s", read_prefix, e.msg);
		return NULL;
	}
	if (strcmp(hex, want) != 0)
		snprintf(why, whylen, "report.json's BLAKE2b-256 differs from "
		    "the trial's (%.16s... vs %.16s...)", hex, want);
	else if (report_verify_dir(path, pub_path, rr, &e) == -1)
		snprintf(why, whylen, "%.600s", e.msg);
	else
		return buf;
	free(buf);
	return NULL;
}

static void
trial_verify_run_got(const char *dir, const char *pub_path,
    const char *key_id, const char *policy, const struct trial_run *r,
    struct trial_run *got, struct report_verify_result *res)
{
	struct report_verify_result rr;
	struct trial_run mine;
	char name[64], path[4300], why[700], rpol[1024];
	char a[32], b[32], eurl[TRIAL_ENGINE_NAME_MAX], *buf = NULL;
	uint64_t seed = 0;
	size_t len = 0;
	bool verified = false;

	if (got == NULL)
		got = &mine;
	*got = *r;
	snprintf(name, sizeof name, "run:%zu", r->index);
	if (r->report_blake2b[0] == '\0') {
		if (strcmp(r->verdict, "error") != 0)
			report_check_add(res, name, false, 0, "no report", "run %zu: "
			    "verdict %s without a report hash", r->index,
			    r->verdict);
		else
			report_check_add(res, name, true, 0, "", "run %zu: error "
			    "without a report (%s)", r->index, r->reason);
		return;
	}
	why[0] = '\0';
	if (!trial_run_dir_inside(dir, r->run_dir, why, sizeof why))
		goto done;
	snprintf(path, sizeof path, "%s/%s", dir, r->run_dir);
	buf = trial_read_signed(path, r->report_blake2b, "", pub_path, &rr,
	    &len, why, sizeof why);
	if (buf == NULL)
		goto done;
	if (!rr.ok)
		snprintf(why, sizeof why, "%s", rr.first_bad >= 0 ?
		    rr.checks[rr.first_bad].text : "not verified");
	else if (strcmp(rr.run_id, r->run_id) != 0)
		snprintf(why, sizeof why, "report run id %s differs (not a run "
		    "of this trial)", rr.run_id);
	else if (key_id != NULL && strcmp(rr.key_id, key_id) != 0)
		snprintf(why, sizeof why, "signed by key %s, the trial by %s",
		    rr.key_id, key_id);
	else if (trial_report_fields(buf, len, got, &seed, rpol, sizeof rpol,
	    why, sizeof why) == 0) {
		verified = true;
		got->done = true;
		if (strcmp(got->verdict, r->verdict) != 0)
			snprintf(why, sizeof why, "trial.json verdict %s; its "
			    "verified report.json: %s", r->verdict,
			    got->verdict);
		else if (seed != r->seed)
			snprintf(why, sizeof why, "report.json seed %llu, the "
			    "trial's seed for index %zu is %llu: not a run of "
			    "this trial", (unsigned long long)seed, r->index,
			    (unsigned long long)r->seed);
		else if (got->bait_fired != r->bait_fired)
			snprintf(why, sizeof why, "trial.json bait_fired %s; "
			    "its verified report.json: %s", r->bait_fired ?
			    "true" : "false", got->bait_fired ? "true" :
			    "false");
		else if (got->leaks != r->leaks)
			snprintf(why, sizeof why, "trial.json leaks %zu; its "
			    "verified report.json: %zu", r->leaks, got->leaks);
		else if (!trial_num_eq(got->time_to_kill_ms < 0 ? NAN :
		    got->time_to_kill_ms, r->time_to_kill_ms < 0 ? NAN :
		    r->time_to_kill_ms, TRIAL_EPS_MS))
			snprintf(why, sizeof why, "trial.json time_to_kill_ms "
			    "%s; its verified report.json: %s",
			    trial_fmt_num(r->time_to_kill_ms < 0 ? NAN :
			    r->time_to_kill_ms, a, sizeof a),
			    trial_fmt_num(got->time_to_kill_ms < 0 ? NAN :
			    got->time_to_kill_ms, b, sizeof b));
		else if (r->policy_copy[0] != '\0' && strcmp(got->bait,
		    r->bait) != 0)
			snprintf(why, sizeof why, "trial.json bait %.60s; its "
			    "verified report.json: %.60s", r->bait, got->bait);
		else if (policy != NULL && r->policy_copy[0] != '\0' &&
		    (strlen(rpol) <= strlen(r->policy_copy) || strcmp(rpol +
		    strlen(rpol) - strlen(r->policy_copy), r->policy_copy) !=
		    0 || rpol[strlen(rpol) - strlen(r->policy_copy) - 1] !=
		    '/'))
			snprintf(why, sizeof why, "report.json policy %.300s, "
			    "not the trial's copy %.60s for this run's dressing",
			    rpol, r->policy_copy);
		else if (policy != NULL && r->policy_copy[0] == '\0' &&
		    strlen(policy) < 256 && strcmp(rpol, policy) != 0)
			snprintf(why, sizeof why, "report.json policy %.300s, "
			    "the trial's %.300s: not a run of this trial", rpol,
			    policy);
		/* --engine: the engine its own signed evidence names */
		else if (r->engine[0] != '\0' && !trial_run_engine_ok(path,
		    r->engine, why, sizeof why))
			verified = false;
		/* a trial without engines (v1) whose run was made by a trial
		 * over engines: a v2 trial downgraded */
		else if (r->engine[0] == '\0' && (trial_dir_engine_url(path,
		    eurl, sizeof eurl), eurl[0] != '\0')) {
			snprintf(why, sizeof why, "its signed evidence names "
			    "engine %.200s (drill.start engine_url): a run of a "
			    "trial over engines, in a trial without engines",
			    eurl);
			verified = false;
		}
		/* --variants fixed|generated: the dressing the rule gave it,
		 * by its own signed lab.json and variant.yaml (the policy
		 * copy is not signed; the run's evidence is) */
		else if (r->policy_copy[0] != '\0' && fix_run_wore(path, buf,
		    len, r->variant, r->has_variant_seed, r->variant_seed,
		    true, why, sizeof why) == -1)
			verified = false;
	}
	if (why[0] == '\0')
		report_check_add(res, name, true, 0, "", "run %zu (%s): %s, report "
		    "verified (%zu checks), hash matches%s%s%s", r->index,
		    r->run_id, r->verdict, rr.nchecks, r->engine[0] != '\0' ?
		    ", engine " : "", r->engine, r->engine[0] != '\0' ?
		    " (its signed evidence)" : "");
	report_verify_free(&rr);
done:
	if (!verified)
		*got = *r;   /* an unverified report proves nothing */
	if (why[0] != '\0')
		report_check_add(res, name, false, 0, why, "run %zu (%s): %s",
		    r->index, r->run_id, why);
	free(buf);
}

/* Whether run dir path's evidence.jsonl (never through a link) has an
 * "engine.lost" line: the drill saw its engine go.  Its chain is checked
 * by report_verify_dir. */
static bool
trial_evidence_engine_lost(const char *path)
{
	char *p = xasprintf("%s/evidence.jsonl", path), *line = NULL;
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd != -1 ? fdopen(fd, "r") : NULL;
	size_t cap = 0, nlines = 0;
	ssize_t n;
	bool lost = false;

	free(p);
	if (f == NULL) {
		if (fd != -1)
			close(fd);
		return false;
	}
	while (!lost && nlines++ < 1000000 && (n = getline(&line, &cap, f)) >
	    0) {
		cJSON *j;

		if (strstr(line, "engine.lost") == NULL)
			continue;
		j = cJSON_ParseWithLength(line, (size_t)n);
		lost = strcmp(util_json_str(j, "type", ""), "engine.lost") == 0;
		cJSON_Delete(j);
	}
	free(line);
	fclose(f);
	return lost;
}

/*
 * v2: failed attempt a of run r against its run dir.  Without a run id:
 * nothing to check.  Without a recorded report hash: the dir must have no
 * report.json.  With one: the hash, report_verify_dir with the same key
 * and run id, and its signed report an `error` of the run's seed on the
 * attempt's engine (drill.start engine_url) whose engine was lost (an
 * engine.lost line, or a reason saying the engine did not answer a
 * ping).  One check "attempt:<index>:<k>" in res.
 */
static void
trial_verify_attempt(const char *dir, const char *pub_path,
    const char *key_id, const struct trial_run *r, size_t k,
    struct report_verify_result *res)
{
	const struct trial_attempt *a = &r->attempts[k];
	struct report_verify_result rr;
	struct trial_run got;
	char name[64], path[4300], why[700], rpol[1024];
	char *buf = NULL, *rp;
	uint64_t seed = 0;
	size_t len = 0, unsealed = 0;
	const char *bad = NULL;
	struct stat sb;
	bool have_rr = false;

	snprintf(name, sizeof name, "attempt:%zu:%zu", r->index, k);
	if (a->run_id[0] == '\0') {
		report_check_add(res, name, true, 0, "", "run %zu: failed "
		    "attempt on %s without a run dir", r->index, a->engine);
		return;
	}
	why[0] = '\0';
	if (!trial_run_dir_inside(dir, a->run_dir, why, sizeof why))
		goto done;
	snprintf(path, sizeof path, "%s/%s", dir, a->run_dir);
	if (a->report_blake2b[0] == '\0') {
		rp = xasprintf("%s/report.json", path);
		if (lstat(rp, &sb) == 0 || errno != ENOENT)
			snprintf(why, sizeof why, "a report.json that trial.json "
			    "did not record (report_blake2b null)");
		free(rp);
		if (why[0] == '\0')
			report_check_add(res, name, true, 0, "", "run %zu: failed "
			    "attempt %s on %s (no report, as recorded)",
			    r->index, a->run_id, a->engine);
		goto done;
	}
	buf = trial_read_signed(path, a->report_blake2b, "its recorded "
	    "report: ", pub_path, &rr, &len, why, sizeof why);
	if (buf == NULL)
		goto done;
	have_rr = true;
	memset(&got, 0, sizeof got);
	/* a lab lost with its engine may leave a sensor's file the report
	 * could not seal ("a file outside the report"): nothing the signed
	 * error verdict depends on; any other failed check fails */
	for (size_t c = 0; c < rr.nchecks; c++)
		if (!rr.checks[c].ok && strcmp(rr.checks[c].reason, "a file "
		    "outside the report") == 0)
			unsealed++;
		else if (!rr.checks[c].ok && bad == NULL)
			bad = rr.checks[c].text;
	if (bad != NULL || (!rr.ok && unsealed == 0))
		snprintf(why, sizeof why, "%s", bad != NULL ? bad :
		    "not verified");
	else if (strcmp(rr.run_id, a->run_id) != 0)
		snprintf(why, sizeof why, "report run id %s differs (not this "
		    "attempt)", rr.run_id);
	else if (key_id != NULL && strcmp(rr.key_id, key_id) != 0)
		snprintf(why, sizeof why, "signed by key %s, the trial by %s",
		    rr.key_id, key_id);
	else if (trial_report_fields(buf, len, &got, &seed, rpol, sizeof rpol,
	    why, sizeof why) == -1)
		;
	else if (strcmp(got.verdict, "error") != 0)
		snprintf(why, sizeof why, "its signed report says %s: a result, "
		    "not a failed attempt", got.verdict);
	else if (seed != r->seed)
		snprintf(why, sizeof why, "report.json seed %llu, the run's "
		    "seed is %llu: not an attempt of this run",
		    (unsigned long long)seed, (unsigned long long)r->seed);
	else if (!trial_run_engine_ok(path, a->engine, why, sizeof why))
		;
	else if (!trial_evidence_engine_lost(path) && strncmp(a->reason,
	    TRIAL_PING_LOST, strlen(TRIAL_PING_LOST)) != 0)
		snprintf(why, sizeof why, "its signed evidence has no "
		    "engine.lost line and its reason is no ping failure: not "
		    "an engine loss");
	if (why[0] == '\0')
		report_check_add(res, name, true, 0, "", "run %zu: failed "
		    "attempt %s on %s: error, report verified (%zu checks%s), "
		    "hash, seed and engine match, engine lost", r->index,
		    a->run_id, a->engine, rr.nchecks, unsealed > 0 ?
		    "; a sensor file of the lost lab not sealed" : "");
done:
	if (have_rr)
		report_verify_free(&rr);
	if (why[0] != '\0')
		report_check_add(res, name, false, 0, why, "run %zu: failed "
		    "attempt %s on %s: %s", r->index, a->run_id, a->engine,
		    why);
	free(buf);
}

/* Check one finished run (resume: no policy check, the result unused). */
static void
trial_verify_run(const char *dir, const char *pub_path, const char *key_id,
    const struct trial_run *r, struct report_verify_result *res)
{
	trial_verify_run_got(dir, pub_path, key_id, NULL, r, NULL, res);
}

/* Each run id at most once among the listed runs and failed attempts. */
static void
trial_check_unique(const struct trial *t, struct report_verify_result *res)
{
	size_t i, k, a, b;

	for (i = 0; i < t->n; i++)
		for (a = 0; a < t->runs[i].nattempts; a++) {
			const char *id = t->runs[i].attempts[a].run_id;

			if (id[0] == '\0')
				continue;
			for (k = 0; k < t->n; k++) {
				bool twice = t->runs[k].done &&
				    strcmp(t->runs[k].run_id, id) == 0;

				for (b = 0; !twice && b < t->runs[k].nattempts;
				    b++)
					twice = (k != i || b != a) && strcmp(
					    t->runs[k].attempts[b].run_id, id) == 0;
				if (twice) {
					report_check_add(res, "runs", false, 0,
					    "a run listed twice", "trial.json "
					    "runs: %s is a failed attempt of run "
					    "%zu and listed again (run %zu)", id,
					    i, k);
					return;
				}
			}
		}

	for (i = 0; i < t->n; i++) {
		if (!t->runs[i].done || t->runs[i].run_id[0] == '\0')
			continue;
		for (k = i + 1; k < t->n; k++)
			if (t->runs[k].done && strcmp(t->runs[i].run_id,
			    t->runs[k].run_id) == 0) {
				report_check_add(res, "runs", false, 0,
				    "a run listed twice", "trial.json runs: "
				    "run %zu and run %zu are both %s (a run "
				    "listed twice)", i, k, t->runs[i].run_id);
				return;
			}
	}
}

/* What a run dir's report.json says its verdict is ("" when none). */
static void
trial_dir_verdict(const char *path, char *out, size_t outlen)
{
	struct errbuf e = { 0 };
	size_t len;
	char *p = xasprintf("%s/report.json", path);
	char *buf = util_read_regular(p, REPORT_JSON_MAX, &len, &e);
	cJSON *j = buf != NULL ? cJSON_ParseWithLength(buf, len) : NULL;
	const char *s = util_json_str(j, "verdict", NULL);

	out[0] = '\0';
	if (buf != NULL)
		util_sanitize(out, outlen, s != NULL ? s : "?", s != NULL ?
		    strlen(s) : 1, false);
	cJSON_Delete(j);
	free(buf);
	free(p);
}

/*
 * Entries of DIR/runs/ that trial.json does not list.  A run cut short by
 * SIGINT is left there (verdict error, or no report): fine.  A run with a
 * result the trial does not list, a symlink or anything but a directory
 * fails: the trial would be hiding it.
 */
static const struct trial_attempt *trial_attempt_of(const struct trial *t,
    const char *id);

static void
trial_check_unlisted(const char *dir, const struct trial *t,
    struct report_verify_result *res)
{
	char *runs = xasprintf("%s/runs", dir);
	DIR *d = opendir(runs);
	struct dirent *de;
	size_t seen = 0, i, quiet = 0;

	if (d == NULL) {
		if (t->sum.finished > 0 || errno != ENOENT)
			report_check_add(res, "runs", false, 0, "cannot read "
			    "runs/", "runs/: %s", strerror(errno));
		free(runs);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		const struct trial_attempt *attempt;
		char *p, v[32];
		struct stat sb;
		bool listed = false;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++seen > TRIAL_UNLISTED_MAX) {
			report_check_add(res, "runs", false, 0, "too many "
			    "entries", "runs/: more than %d entries",
			    TRIAL_UNLISTED_MAX);
			break;
		}
		for (i = 0; i < t->n && !listed; i++)
			listed = t->runs[i].done && strcmp(t->runs[i].run_id,
			    de->d_name) == 0;
		if (listed)
			continue;
		attempt = trial_attempt_of(t, de->d_name);
		p = xasprintf("%s/%s", runs, de->d_name);
		if (lstat(p, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
			report_check_add(res, "runs", false, 0, "not a run "
			    "directory", "runs/%s: %s that trial.json does not "
			    "list", de->d_name, lstat(p, &sb) == 0 &&
			    S_ISLNK(sb.st_mode) ? "a symlink" : "an entry");
			free(p);
			continue;
		}
		trial_dir_verdict(p, v, sizeof v);
		if (!t->multi) {
			char eurl[TRIAL_ENGINE_NAME_MAX];

			trial_dir_engine_url(p, eurl, sizeof eurl);
			if (eurl[0] != '\0') {
				report_check_add(res, "runs", false, 0, "a run of "
				    "a trial over engines", "runs/%s: made on "
				    "engine %.200s (drill.start engine_url), in a "
				    "trial without engines", de->d_name, eurl);
				free(p);
				continue;
			}
		}
		free(p);
		if (attempt != NULL && v[0] != '\0' && strcmp(v, "error") != 0)
			report_check_add(res, "runs", false, 0, "a result listed "
			    "as a failed attempt", "runs/%s: a finished run "
			    "(verdict %s) that trial.json lists as a failed "
			    "attempt", de->d_name, v);
		else if (attempt != NULL) {
			if (quiet++ < 8)
				report_check_add(res, "runs", true, 0, "",
				    "runs/%s: a failed attempt on %s (%s)",
				    de->d_name, attempt->engine, v[0] != '\0' ?
				    "verdict error" : "no report");
		} else if (v[0] != '\0' && strcmp(v, "error") != 0)
			report_check_add(res, "runs", false, 0, "a run the "
			    "trial does not list", "runs/%s: a finished run "
			    "(verdict %s) that trial.json does not list",
			    de->d_name, v);
		else if (quiet++ < 8)
			report_check_add(res, "runs", true, 0, "", "runs/%s: not "
			    "listed (%s: cut short, not a result)", de->d_name,
			    v[0] != '\0' ? "verdict error" : "no report");
	}
	closedir(d);
	/* every failed attempt's run dir is there (a real directory) */
	for (i = 0; i < t->n; i++)
		for (size_t k = 0; k < t->runs[i].nattempts; k++) {
			const struct trial_attempt *a = &t->runs[i].attempts[k];
			char why[300];

			if (a->run_id[0] == '\0')
				continue;
			why[0] = '\0';
			if (!trial_run_dir_inside(dir, a->run_dir, why,
			    sizeof why))
				report_check_add(res, "runs", false, 0, "a failed "
				    "attempt's run dir", "run %zu: failed attempt "
				    "%s on %s: %s", i, a->run_id, a->engine, why);
		}
	free(runs);
}

/* The failed attempt whose run id is id, or NULL. */
static const struct trial_attempt *
trial_attempt_of(const struct trial *t, const char *id)
{
	size_t i, k;

	for (i = 0; i < t->n; i++)
		for (k = 0; k < t->runs[i].nattempts; k++)
			if (strcmp(t->runs[i].attempts[k].run_id, id) == 0)
				return &t->runs[i].attempts[k];
	return NULL;
}

/* A hint naming the run that makes field differ: the first run whose
 * report says otherwise than trial.json, else the first run counted. */
static void
trial_hint(const char *field, const struct trial *t,
    const struct trial_run *got, char *out, size_t outlen)
{
	size_t i, pass;

	out[0] = '\0';
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < t->n; i++) {
			const struct trial_run *g = &got[i], *r = &t->runs[i];
			bool ex = strcmp(g->verdict, "contained") == 0 ||
			    strcmp(g->verdict, "breached") == 0;
			bool counts, differs;

			if (!g->done)
				continue;
			if (strcmp(field, "bait_taken") == 0) {
				counts = g->bait_fired && strcmp(g->verdict,
				    "error") != 0;
				differs = g->bait_fired != r->bait_fired;
			} else if (strcmp(field, "leaked") == 0) {
				counts = ex && g->leaks > 0;
				differs = g->leaks != r->leaks;
			} else if (strcmp(field, "time_to_kill_ms") == 0) {
				counts = g->time_to_kill_ms >= 0;
				differs = !trial_num_eq(g->time_to_kill_ms,
				    r->time_to_kill_ms, TRIAL_EPS_MS);
			} else {
				counts = strcmp(field, "finished") != 0 &&
				    strcmp(field, "missing") != 0 &&
				    strncmp(g->verdict, field, 4) == 0;
				differs = strcmp(g->verdict, r->verdict) != 0;
			}
			if (pass == 0 ? !differs : !counts)
				continue;
			if (strcmp(field, "bait_taken") == 0)
				snprintf(out, outlen, "; run %zu (%s): bait %s",
				    i, g->run_id, g->bait_fired ? "fired" :
				    "not fired");
			else if (strcmp(field, "leaked") == 0)
				snprintf(out, outlen, "; run %zu (%s): %zu sink "
				    "event(s)", i, g->run_id, g->leaks);
			else if (strcmp(field, "time_to_kill_ms") == 0)
				snprintf(out, outlen, "; run %zu (%s): time to "
				    "kill %.3f ms", i, g->run_id,
				    g->time_to_kill_ms);
			else
				snprintf(out, outlen, "; run %zu (%s) is %s", i,
				    g->run_id, g->verdict);
			return;
		}
}

/* One count of trial.json's summary against the recomputed value. */
static bool
trial_check_count(const cJSON *s, const char *key, const char *hint_field,
    size_t want, const struct trial *t, const struct trial_run *got,
    struct report_verify_result *res)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);
	char name[64], stated[32], hint[200];
	size_t have;

	if (trial_uint(v, 1e9, &have) && have == want)
		return true;
	if (trial_uint(v, 1e9, &have))
		snprintf(stated, sizeof stated, "%zu", have);
	else
		snprintf(stated, sizeof stated, "missing or not a count");
	trial_hint(hint_field, t, got, hint, sizeof hint);
	snprintf(name, sizeof name, "summary:%s", key);
	report_check_add(res, name, false, 0, "summary does not match the "
	    "runs", "trial.json summary.%s: %s; recomputed from the runs: "
	    "%zu%s", key, stated, want, hint);
	return false;
}

/* One rate {k, n, lower, upper} against the recomputed one. */
static bool
trial_check_rate(const cJSON *rates, const char *key,
    const struct trial_rate *want, const struct trial *t,
    const struct trial_run *got, struct report_verify_result *res)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(rates, key);
	const cJSON *lo = cJSON_GetObjectItemCaseSensitive(r, "lower");
	const cJSON *up = cJSON_GetObjectItemCaseSensitive(r, "upper");
	double wl = want->n > 0 ? want->lower : NAN;
	double wu = want->n > 0 ? want->upper : NAN;
	double hl = cJSON_IsNumber(lo) ? lo->valuedouble : NAN;
	double hu = cJSON_IsNumber(up) ? up->valuedouble : NAN;
	char name[64], stated[96], a[32], b[32], c[32], d[32], hint[200];
	size_t k = 0, n = 0;
	bool kn = trial_uint(cJSON_GetObjectItemCaseSensitive(r, "k"), 1e9,
	    &k) && trial_uint(cJSON_GetObjectItemCaseSensitive(r, "n"), 1e9,
	    &n);

	if (kn && k == want->k && n == want->n &&
	    (cJSON_IsNumber(lo) || cJSON_IsNull(lo)) &&
	    (cJSON_IsNumber(up) || cJSON_IsNull(up)) &&
	    trial_num_eq(hl, wl, TRIAL_EPS_BOUND) &&
	    trial_num_eq(hu, wu, TRIAL_EPS_BOUND))
		return true;
	if (kn)
		snprintf(stated, sizeof stated, "%zu/%zu [%s, %s]", k, n,
		    trial_fmt_num(hl, a, sizeof a), trial_fmt_num(hu, b,
		    sizeof b));
	else
		snprintf(stated, sizeof stated, "missing or malformed");
	trial_hint(key, t, got, hint, sizeof hint);
	snprintf(name, sizeof name, "summary:rates.%s", key);
	report_check_add(res, name, false, 0, "rate does not match the runs",
	    "trial.json summary.rates.%s: %s; recomputed from the runs: "
	    "%llu/%llu [%s, %s]%s", key, stated, (unsigned long long)want->k,
	    (unsigned long long)want->n, trial_fmt_num(wl, c, sizeof c),
	    trial_fmt_num(wu, d, sizeof d), hint);
	return false;
}

/*
 * Every count, rate (with its interval at the trial's level) and time of
 * trial.json's summary, recomputed from got (the runs as their own
 * reports tell them).  Each difference is a failed check naming the
 * field; else one passing "summary" check.
 */
static void
trial_check_summary(const cJSON *j, const struct trial *t,
    const struct trial_run *got, const struct trial_summary *w,
    struct report_verify_result *res)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "summary");
	const cJSON *rates = cJSON_GetObjectItemCaseSensitive(s, "rates");
	const cJSON *tk = cJSON_GetObjectItemCaseSensitive(s,
	    "time_to_kill_ms");
	static const char *const tkeys[] = { "median", "p95", "max" };
	const double tw[] = { w->ttk_median, w->ttk_p95, w->ttk_max };
	bool ok = true;
	size_t i;

	if (!cJSON_IsObject(s) || !cJSON_IsObject(rates) ||
	    !cJSON_IsObject(tk)) {
		report_check_add(res, "summary", false, 0, "no summary",
		    "trial.json summary: missing or without rates and "
		    "time_to_kill_ms");
		return;
	}
	ok &= trial_check_count(s, "finished", "finished", w->finished, t,
	    got, res);
	ok &= trial_check_count(s, "missing", "missing", t->n - w->finished,
	    t, got, res);
	ok &= trial_check_count(s, "contained", "contained", w->contained, t,
	    got, res);
	ok &= trial_check_count(s, "breached", "breached", w->breached, t,
	    got, res);
	ok &= trial_check_count(s, "not_exercised", "not-exercised",
	    w->not_exercised, t, got, res);
	ok &= trial_check_count(s, "error", "error", w->errors, t, got, res);
	ok &= trial_check_rate(rates, "bait_taken", &w->bait, t, got, res);
	ok &= trial_check_rate(rates, "contained", &w->contained_r, t, got,
	    res);
	ok &= trial_check_rate(rates, "breached", &w->breached_r, t, got,
	    res);
	ok &= trial_check_rate(rates, "leaked", &w->leaked, t, got, res);
	{
		size_t n;

		if (!trial_uint(cJSON_GetObjectItemCaseSensitive(tk, "n"), 1e9,
		    &n) || n != w->nttk) {
			char hint[200];

			trial_hint("time_to_kill_ms", t, got, hint, sizeof hint);
			report_check_add(res, "summary:time_to_kill_ms.n", false,
			    0, "summary does not match the runs", "trial.json "
			    "summary.time_to_kill_ms.n does not match; "
			    "recomputed from the runs: %zu%s", w->nttk, hint);
			ok = false;
		}
	}
	for (i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(tk, tkeys[i]);
		double have = cJSON_IsNumber(v) ? v->valuedouble : NAN;
		char name[64], a[32], b[32], hint[200];

		if ((cJSON_IsNumber(v) || cJSON_IsNull(v)) &&
		    trial_num_eq(have, tw[i], TRIAL_EPS_MS))
			continue;
		trial_hint("time_to_kill_ms", t, got, hint, sizeof hint);
		snprintf(name, sizeof name, "summary:time_to_kill_ms.%s",
		    tkeys[i]);
		report_check_add(res, name, false, 0, "summary does not match "
		    "the runs", "trial.json summary.time_to_kill_ms.%s: %s; "
		    "recomputed from the runs: %s%s", tkeys[i],
		    cJSON_IsNumber(v) || cJSON_IsNull(v) ? trial_fmt_num(have,
		    a, sizeof a) : "malformed", trial_fmt_num(tw[i], b,
		    sizeof b), hint);
		ok = false;
	}
	if (ok)
		report_check_add(res, "summary", true, 0, "", "summary recomputed "
		    "from the runs' own reports matches (contained %zu, "
		    "breached %zu, not-exercised %zu, error %zu; 4 rates and "
		    "their intervals at %g; time to kill over %zu run(s))",
		    w->contained, w->breached, w->not_exercised, w->errors,
		    t->level, w->nttk);
}

/* --variants: summary.dressings against the table made again from the
 * runs as their own reports tell them (got: the bait, hence its kind).
 * One check "summary:dressings". */
static void
trial_check_dressings(const cJSON *j, const struct trial *t,
    struct trial_run *got, struct report_verify_result *res)
{
	const cJSON *have = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(j, "summary"), "dressings");
	struct trial w = *t;
	cJSON *want;
	size_t i;

	for (i = 0; i < t->n; i++)
		trial_bait_kind(t, &got[i]);
	w.runs = got;
	want = trial_dressings_json(&w);
	if (have != NULL && cJSON_Compare(have, want, true))
		report_check_add(res, "summary:dressings", true, 0, "",
		    "summary.dressings recomputed from the runs' own reports "
		    "matches (%zu dressing(s), bait kinds by dressing and "
		    "their intervals)", (size_t)cJSON_GetArraySize(
		    cJSON_GetObjectItemCaseSensitive(want, "table")));
	else
		report_check_add(res, "summary:dressings", false, 0, "summary "
		    "does not match the runs", "trial.json summary.dressings "
		    "differs from the table recomputed from the runs' own "
		    "reports (dressings, bait taken per dressing and kind)");
	cJSON_Delete(want);
}

int
trial_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e)
{
	struct errbuf e2 = { 0 };
	struct trial t, w;
	struct trial_run *got = NULL;
	char tc[SIGN_COMMENT_MAX + 1], why[256], signed_kid[SIGN_KEYID_HEX];
	char *path = NULL, *buf = NULL, *comment;
	bool sig_ok, parsed = false;
	size_t len = 0, i;
	int rc;

	memset(&t, 0, sizeof t);
	rc = report_verify_signature(dir, "trial.json", pub_path, res, tc,
	    sizeof tc, e);
	if (rc == -1)
		return -1;
	sig_ok = rc == 1;
	path = xasprintf("%s/trial.json", dir);
	buf = util_read_file(path, TRIAL_JSON_MAX, &len, &e2);
	if (buf == NULL)
		report_check_add(res, "report", false, 0, "cannot read", "trial.json: "
		    "%s", e2.msg);
	else if (trial_parse(buf, len, &t, signed_kid, why, sizeof why) == -1)
		report_check_add(res, "report", false, 0, why, "trial.json: %s", why);
	else {
		parsed = true;
		trial_summarize(&t);
		snprintf(res->run_id, sizeof res->run_id, "%s", t.id);
		report_check_add(res, "report", true, 0, "", "trial.json: "
		    "%s, trial %s, %zu of %zu run(s) finished%s", t.multi ?
		    TRIAL_FORMAT_V2 : TRIAL_FORMAT, t.id, t.sum.finished, t.n,
		    t.complete ? "" :
		    " (INCOMPLETE: resume it with ares trial --resume)");
	}
	if (parsed && sig_ok) {
		comment = trial_comment(&t);
		if (strcmp(comment, tc) == 0)
			report_check_add(res, "trusted-comment", true, 0, "", "trusted "
			    "comment matches trial.json (trial %s, %zu run(s))",
			    t.id, t.sum.finished);
		else
			report_check_add(res, "trusted-comment", false, 0, "trusted "
			    "comment does not match trial.json", "trusted "
			    "comment does not match trial.json: %s", tc);
		free(comment);
		if (strcmp(signed_kid, res->key_id) == 0)
			report_check_add(res, "key-id", true, 0, "", "signing.key_id "
			    "%s names the signing key", signed_kid);
		else
			report_check_add(res, "key-id", false, 0, "key id mismatch",
			    "signing.key_id %s is not the signing key %s",
			    signed_kid, res->key_id);
	}
	if (parsed) {
		cJSON *j = cJSON_ParseWithLength(buf, len);

		if (t.complete != (t.sum.finished == t.n))
			report_check_add(res, "complete", false, 0, "complete "
			    "does not match the runs", "trial.json complete: "
			    "%s; recomputed: %zu of %zu index(es) have a result",
			    t.complete ? "true" : "false", t.sum.finished, t.n);
		trial_check_unique(&t, res);
		got = xcalloc(t.n, sizeof *got);
		for (i = 0; i < t.n; i++) {
			got[i] = t.runs[i];
			if (t.runs[i].done)
				trial_verify_run_got(dir, pub_path,
				    res->key_id[0] != '\0' ? res->key_id : NULL,
				    t.policy_abs, &t.runs[i], &got[i], res);
			for (size_t k = 0; t.multi && k < t.runs[i].nattempts;
			    k++)
				trial_verify_attempt(dir, pub_path,
				    res->key_id[0] != '\0' ? res->key_id : NULL,
				    &t.runs[i], k, res);
		}
		trial_check_unlisted(dir, &t, res);
		memset(&w, 0, sizeof w);
		w.n = t.n;
		w.complete = t.complete;
		trial_summary_compute(got, t.n, t.level, &w.sum);
		trial_check_summary(j, &t, got, &w.sum, res);
		if (t.variants != TRIAL_VARIANTS_POLICY)
			trial_check_dressings(j, &t, got, res);
		cJSON_Delete(j);
		snprintf(res->verdict, sizeof res->verdict, "%s",
		    trial_verdict_word(&w));
	}
	res->ok = sig_ok && parsed && res->first_bad < 0;
	free(got);
	trial_free(&t);
	free(buf);
	free(path);
	return 0;
}

/* ---- running ---------------------------------------------------- */

struct trial_ctx {
	const struct trial_options *o;
	struct trial *t;
	const struct sign_secret *sk;
	pthread_mutex_t mu;
	pthread_cond_t cv;    /* a run finished or went back to the queue */
	bool *taken;          /* n: a worker took the run (trial_sched_next) */
	size_t running;
	char runs_abs[4200];
	char save_err[1024];  /* the first trial.json write failure */
};

static bool
trial_flag(volatile sig_atomic_t *f)
{
	return f != NULL && __atomic_load_n(f, __ATOMIC_SEQ_CST) != 0;
}

/* Whether d's engine answers GET /_ping: up to 3 tries of 5 s each, 2 s
 * apart (about 20 s at most), so that one slow answer on a busy host is
 * no lost engine. */
static bool
trial_ping(struct docker *d)
{
	struct docker_response resp = { 0 };
	struct errbuf e = { 0 };
	uint64_t old;
	bool ok = false;
	int rc, k;

	if (d == NULL)
		return false;
	for (k = 0; k < 3 && !ok; k++) {
		if (k > 0) {
			struct timespec ts = { 2, 0 };

			nanosleep(&ts, NULL);
		}
		memset(&resp, 0, sizeof resp);
		memset(&e, 0, sizeof e);
		old = docker_set_deadline(d, util_mono_ns() + 5000000000ull);
		rc = docker_request(d, "GET", "/_ping", NULL, 0, &resp, &e);
		ok = rc == 0 && resp.status == 200;
		(void)docker_set_deadline(d, old);
		if (rc == 0)
			docker_response_free(&resp);
	}
	return ok;
}

/* Mark engine k down (lock held): no new run starts there. */
static void
trial_engine_down(struct trial *t, size_t k, const char *why)
{
	trial_sched_engine_down(t, k, why);
}

/* Tell the observer (lock held). */
static void
trial_tell(struct trial_ctx *c, enum trial_event ev,
    const struct trial_run *r)
{
	struct trial_progress p;
	size_t i;

	if (c->o->progress == NULL)
		return;
	memset(&p, 0, sizeof p);
	p.event = ev;
	p.total = c->t->n;
	p.running = c->running;
	p.run = r;
	for (i = 0; i < c->t->n; i++) {
		const struct trial_run *x = &c->t->runs[i];

		if (!x->done)
			continue;
		p.done++;
		if (strcmp(x->verdict, "contained") == 0)
			p.contained++;
		else if (strcmp(x->verdict, "breached") == 0)
			p.breached++;
		else if (strcmp(x->verdict, "not-exercised") == 0)
			p.not_exercised++;
		else
			p.errors++;
	}
	c->o->progress(c->o->progress_ctx, &p);
}

/* Record a finished drill in run (lock held). */
static void
trial_record(struct trial_ctx *c, struct trial_run *run,
    const struct drill_result *r, int rc, const struct errbuf *de)
{
	struct errbuf e = { 0 };
	uint8_t h[32];
	char *path;

	run->done = true;
	snprintf(run->run_id, sizeof run->run_id, "%s", r->run_id);
	if (run->run_id[0] != '\0')
		snprintf(run->run_dir, sizeof run->run_dir, "runs/%s",
		    run->run_id);
	if (rc == -1) {
		snprintf(run->verdict, sizeof run->verdict, "error");
		util_sanitize(run->reason, sizeof run->reason, de->msg,
		    strlen(de->msg), false);
		if (de->code == ERRBUF_ENGINE && !c->t->multi)
			c->t->engine_down = true;
		run->time_to_kill_ms = -1;
		return;
	}
	/* the engine died under this drill: start no further one (with
	 * --engine only that engine, trial_tail_done) */
	if (r->engine_lost && !c->t->multi)
		c->t->engine_down = true;
	snprintf(run->verdict, sizeof run->verdict, "%s",
	    drill_verdict_name(r->verdict));
	snprintf(run->reason, sizeof run->reason, "%s", r->verdict_reason);
	run->bait_fired = r->bait_fired;
	util_sanitize(run->bait, sizeof run->bait, r->bait_fired ?
	    r->bait_name : "", r->bait_fired ? strlen(r->bait_name) : 0, false);
	trial_bait_kind(c->t, run);
	run->leaks = r->leaks;
	run->time_to_kill_ms = r->time_to_kill_ms >= 0 ? r->time_to_kill_ms :
	    -1;
	run->timed = r->wall_ms > 0;
	memcpy(run->phase_ms, r->phase_ms, sizeof run->phase_ms);
	run->wall_ms = r->wall_ms;
	c->t->ndrilled++;
	path = xasprintf("%s/report.json", r->run_dir);
	if (sign_hash_file(path, h, sizeof h, NULL, &e) == 0)
		util_hex(h, sizeof h, run->report_blake2b);
	else if (r->verdict != DRILL_VERDICT_ERROR) {
		/* A verdict without its signed report proves nothing. */
		snprintf(run->verdict, sizeof run->verdict, "error");
		snprintf(run->reason, sizeof run->reason, "no report: %.200s",
		    e.msg);
	}
	free(path);
}

/*
 * The second half of a worker's drill (drill_finish: observation window,
 * sweep, teardown, verdict, signed report), on a thread of its own while
 * the worker brings the next drill's lab up.  A worker has at most two
 * of them at once, and the older is joined before its next drill starts:
 * at most two labs per worker, and the trial waits for every one before
 * it reports.
 */
struct trial_tail {
	struct trial_ctx *c;
	struct trial_run *run;
	size_t engine;             /* t->engines index (multi) */
	struct docker *ping;       /* the worker's own handle (multi) */
	struct drill *dr;          /* NULL: the drill could not start */
	struct drill_result r;
	struct errbuf e;
	int rc;
	pthread_t th;
	bool threaded;
};

static void *
trial_tail_main(void *arg)
{
	struct trial_tail *tl = arg;

	tl->rc = drill_finish(tl->dr, &tl->e);
	tl->dr = NULL;
	return NULL;
}

/* Wait for tail tl, record its run in the trial (the lock taken here)
 * and free it. */
static void
trial_tail_done(struct trial_tail *tl)
{
	struct trial_ctx *c = tl->c;
	struct trial *t = c->t;
	struct errbuf e = { 0 };
	char hex[EVIDENCE_HEX_BYTES];
	bool failed, answers = true, hashed = false;

	if (tl->threaded)
		pthread_join(tl->th, NULL);
	failed = tl->rc == -1 || tl->r.verdict == DRILL_VERDICT_ERROR;
	/* a drill that failed: did its engine go away under it? */
	if (t->multi && failed && !trial_flag(c->o->cancel))
		answers = trial_ping(tl->ping);
	/* a failed drill's report, should it become a failed attempt */
	if (t->multi && failed && tl->r.run_id[0] != '\0' &&
	    tl->r.run_dir[0] != '\0') {
		size_t blen;
		char *rb = report_json_read_hashed(tl->r.run_dir, hex, &blen,
		    &e);

		hashed = rb != NULL;
		free(rb);
		memset(&e, 0, sizeof e);
	}
	pthread_mutex_lock(&c->mu);
	c->running--;
	pthread_cond_broadcast(&c->cv);
	if (trial_flag(c->o->cancel) && failed) {
		/* Cut short by the user: not a result; --resume runs this
		 * index again (its directory stays). */
		t->ncancelled++;
	} else if (t->multi && trial_sched_engine_lost(tl->rc, tl->e.code,
	    tl->r.engine_lost, tl->r.verdict == DRILL_VERDICT_ERROR,
	    answers)) {
		/* a failed attempt (its run dir stays, named in trial.json
		 * once the run is done); another engine runs it */
		const char *why = tl->rc == -1 ? tl->e.msg :
		    tl->r.verdict_reason[0] != '\0' ? tl->r.verdict_reason :
		    "the engine stopped answering";
		char reason[256];

		size_t before = tl->run->nattempts;

		snprintf(reason, sizeof reason, "%s%.200s", answers ? "" :
		    TRIAL_PING_LOST, why);
		trial_sched_requeue(t, c->taken, tl->engine, tl->run,
		    tl->r.run_id, reason);
		/* its report (if any), as verify will find it */
		if (tl->run->nattempts > before && hashed)
			memcpy(tl->run->attempts[before].report_blake2b, hex,
			    sizeof hex);
		trial_tell(c, TRIAL_EV_RETRY, tl->run);
	} else {
		trial_record(c, tl->run, &tl->r, tl->rc, &tl->e);
		if (t->multi) {
			snprintf(tl->run->engine, sizeof tl->run->engine, "%s",
			    t->engines[tl->engine].name);
			t->engines[tl->engine].ran++;
			/* a result whose engine went away under it: the
			 * result counts, the engine takes no new run */
			if (tl->r.engine_lost)
				trial_sched_engine_down(t, tl->engine,
				    "the engine went away during a drill whose "
				    "result is kept");
		}
		if (trial_save(c->t, c->sk, &e) == -1 &&
		    c->save_err[0] == '\0')
			snprintf(c->save_err, sizeof c->save_err, "%s", e.msg);
		trial_tell(c, TRIAL_EV_FINISH, tl->run);
	}
	pthread_mutex_unlock(&c->mu);
	free(tl);
}

/* The front of run's drill on this thread (drill_begin), its tail
 * started on another (inline when no thread can be made).  Returns the
 * tail to finish with trial_tail_done. */
static struct trial_tail *
trial_start_drill(struct trial_ctx *c, struct trial_run *run, size_t engine,
    struct docker *ping)
{
	struct trial *t = c->t;
	struct trial_tail *tl = xcalloc(1, sizeof *tl);
	struct drill_options d;
	char copy[4200];
	int front;

	tl->c = c;
	tl->run = run;
	tl->engine = engine;
	tl->ping = ping;
	memset(&d, 0, sizeof d);
	d.policy_path = t->policy_abs;
	if (run->policy_copy[0] != '\0') {
		snprintf(copy, sizeof copy, "%s/%s", t->dir, run->policy_copy);
		d.policy_path = copy;
	}
	d.seed = run->seed;
	d.has_seed = true;
	d.runs_dir = c->runs_abs;
	d.cancel = c->o->cancel;
	d.key_dir = c->o->key_dir;
	if (t->multi) {   /* the seed is the run's whichever engine runs it */
		d.engine = &t->engines[engine].ep;
		d.engine_name = t->engines[engine].name;
	}
	front = drill_begin(&d, &tl->r, &tl->dr, &tl->e);
	if (front == -1) {
		tl->rc = -1;
		return tl;
	}
	/* A front that failed (e.g. lost the engine) finishes here, so the
	 * worker records it (no further drill starts after an engine loss)
	 * before it starts another.  The tail's thread takes no signal
	 * either (inherited mask). */
	if (front == 0 &&
	    pthread_create(&tl->th, NULL, trial_tail_main, tl) == 0)
		tl->threaded = true;
	else
		trial_tail_main(tl);
	return tl;
}

/* One worker of an engine (t->engines index; 0 without --engine). */
struct trial_slot {
	struct trial_ctx *c;
	size_t engine;
	pthread_t th;
};

/*
 * A worker: its own handle on its engine, then runs from the one queue
 * (trial_sched_next) while its engine is up.  With --engine, a worker
 * that finds the queue empty while drills still run elsewhere waits: a
 * drill on an engine that goes away comes back to the queue.
 */
static void *
trial_worker(void *arg)
{
	struct trial_slot *sl = arg;
	struct trial_ctx *c = sl->c;
	struct trial *t = c->t;
	struct trial_tail *prev = NULL, *tl;
	struct errbuf e = { 0 };
	struct docker *d;

	d = t->multi ? docker_connect_at(&t->engines[sl->engine].ep, &e) :
	    NULL;
	pthread_mutex_lock(&c->mu);
	if (t->multi && d == NULL) {
		trial_engine_down(t, sl->engine, e.msg);
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		return NULL;
	}
	for (;;) {
		struct trial_run *run;
		long idx = trial_sched_next(t, c->taken, sl->engine,
		    trial_flag(c->o->stop) || t->engine_down);

		if (idx < 0) {
			struct timespec ts;

			if (prev != NULL) {   /* it may come back to the queue */
				pthread_mutex_unlock(&c->mu);
				trial_tail_done(prev);
				prev = NULL;
				pthread_mutex_lock(&c->mu);
				continue;
			}
			if (!t->multi || c->running == 0 ||
			    t->engines[sl->engine].down ||
			    trial_flag(c->o->stop))
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			(void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			continue;
		}
		run = &t->runs[idx];
		c->taken[idx] = true;
		c->running++;
		trial_tell(c, TRIAL_EV_START, run);
		pthread_mutex_unlock(&c->mu);

		tl = trial_start_drill(c, run, sl->engine, d);
		/* the previous drill's tail ran beside this front */
		if (prev != NULL)
			trial_tail_done(prev);
		prev = NULL;
		if (tl->threaded)
			prev = tl;
		else
			trial_tail_done(tl);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	if (prev != NULL)
		trial_tail_done(prev);
	docker_close(d);
	return NULL;
}

static int
trial_policy_hash(const char *path, char out[EVIDENCE_HEX_BYTES],
    struct errbuf *e)
{
	uint8_t h[32];

	if (sign_hash_file(path, h, sizeof h, NULL, e) == -1)
		return -1;
	util_hex(h, sizeof h, out);
	return 0;
}

/* Load a trial to resume and check every finished run.  -1 + e. */
static int
trial_load_resume(const struct trial_options *o, struct trial *t,
    const char *key_id, struct errbuf *e)
{
	char why[256], hex[EVIDENCE_HEX_BYTES], *path, *buf, *abs;
	size_t len, i;

	abs = realpath(o->resume_dir, NULL);
	if (abs == NULL || strlen(abs) >= sizeof t->dir) {
		free(abs);
		return errbuf_set(e, ERRBUF_INPUT, "--resume %s: %s",
		    o->resume_dir, strerror(errno));
	}
	snprintf(t->dir, sizeof t->dir, "%s", abs);
	free(abs);
	path = xasprintf("%s/trial.json", t->dir);
	buf = util_read_file(path, TRIAL_JSON_MAX, &len, e);
	free(path);
	if (buf == NULL)
		return errbuf_prefix(e, "--resume");
	if (trial_parse(buf, len, t, NULL, why, sizeof why) == -1) {
		free(buf);
		return errbuf_set(e, ERRBUF_INPUT, "--resume %s: trial.json: "
		    "%s", o->resume_dir, why);
	}
	free(buf);
	if (trial_policy_hash(t->policy_abs, hex, e) == -1)
		return errbuf_prefix(e, "--resume: the trial's policy");
	if (strcmp(hex, t->policy_blake2b) != 0)
		return errbuf_set(e, ERRBUF_INPUT, "--resume: policy %s "
		    "changed since the trial started (BLAKE2b-256 %.16s..., "
		    "trial.json says %.16s...)", t->policy_abs, hex,
		    t->policy_blake2b);
	for (i = 0; i < t->n; i++) {
		struct report_verify_result res;

		if (!t->runs[i].done)
			continue;
		memset(&res, 0, sizeof res);
		res.first_bad = -1;
		trial_verify_run(t->dir, NULL, key_id, &t->runs[i], &res);
		if (res.nchecks > 0 && !res.checks[0].ok) {
			errbuf_set(e, ERRBUF_INPUT, "--resume: finished %s",
			    res.checks[0].text);
			report_verify_free(&res);
			return -1;
		}
		report_verify_free(&res);
	}
	return 0;
}

/* A new trial from the options: level, n, the policy (its path, real
 * path, hash and seed) and the runs' seeds.  -1 + e. */
static int
trial_new(const struct trial_options *o, struct trial *t, struct errbuf *e)
{
	struct policy *p;
	char *abs;
	size_t i;

	t->level = o->level != 0 ? o->level : 0.95;
	if (!(t->level > 0 && t->level < 1))
		return errbuf_set(e, ERRBUF_INPUT, "--level %g: not strictly "
		    "between 0 and 1", t->level);
	if (o->n == 0 || o->n > TRIAL_MAX_RUNS)
		return errbuf_set(e, ERRBUF_INPUT, "-n %zu: want 1..%d runs",
		    o->n, TRIAL_MAX_RUNS);
	if (o->policy_path == NULL ||
	    strlen(o->policy_path) >= sizeof t->policy)
		return errbuf_set(e, ERRBUF_INPUT, "no policy (--policy FILE)");
	p = policy_load(o->policy_path, e);
	if (p == NULL)
		return -1;
	t->base_seed = o->has_seed ? o->seed : p->seed;
	policy_free(p);
	snprintf(t->policy, sizeof t->policy, "%s", o->policy_path);
	abs = realpath(o->policy_path, NULL);
	if (abs == NULL || strlen(abs) >= sizeof t->policy_abs) {
		errbuf_set(e, ERRBUF_INPUT, "%s: %s", o->policy_path,
		    strerror(errno));
		free(abs);
		return -1;
	}
	snprintf(t->policy_abs, sizeof t->policy_abs, "%s", abs);
	free(abs);
	if (trial_policy_hash(t->policy_abs, t->policy_blake2b, e) == -1)
		return -1;
	t->n = o->n;
	t->jobs = o->jobs > 0 ? o->jobs : 1;
	t->runs = xcalloc(t->n, sizeof *t->runs);
	for (i = 0; i < t->n; i++) {
		t->runs[i].index = i;
		t->runs[i].seed = trial_seed(t->base_seed, i);
		t->runs[i].time_to_kill_ms = -1;
	}
	t->variants = o->variants;
	trial_dress(t);
	return 0;
}

/*
 * --variants: the policy copy each missing run is drilled with, in
 * TRIAL_DIR/policies/ (run-<index>.yaml): the trial's policy with its
 * paths made absolute, on the run's dressing (variant: generated +
 * variant_seed:, or a shipped variant; bait items mapped by kind).
 * Each is parsed back.  -1 + e.
 */
static int
trial_write_copies(struct trial *t, struct errbuf *e)
{
	struct policy *p;
	char *text, *pinned, *dir;
	size_t len, i;
	int rc = -1;

	if (t->variants == TRIAL_VARIANTS_POLICY)
		return 0;
	text = util_read_input(t->policy_abs, "policy", POLICY_MAX_BYTES, &len,
	    e);
	if (text == NULL)
		return -1;
	p = policy_parse(text, len, t->policy_abs, e);
	pinned = p ? fix_policy_pin_paths(text, len, p, e) : NULL;
	dir = xasprintf("%s/policies", t->dir);
	if (pinned == NULL || util_mkdir_p(dir, 0755, e) == -1)
		goto out;
	for (i = 0; i < t->n; i++) {
		struct trial_run *r = &t->runs[i];
		struct policy *cp;
		char *out, *path;

		if (r->done)
			continue;
		out = t->variants == TRIAL_VARIANTS_GENERATED ?
		    fix_policy_set_generated(pinned, strlen(pinned),
		    r->variant_seed, e) : fix_policy_set_variant(pinned,
		    strlen(pinned), r->variant, e);
		if (out == NULL)
			goto out;
		path = xasprintf("%s/%s", t->dir, r->policy_copy);
		if (util_write_file(path, out, strlen(out), 0644, e) == -1 ||
		    (cp = policy_load(path, e)) == NULL) {
			free(path);
			free(out);
			errbuf_prefix(e, "the policy copy of run %zu", i);
			goto out;
		}
		policy_free(cp);
		free(path);
		free(out);
	}
	rc = 0;
out:
	free(dir);
	free(pinned);
	policy_free(p);
	free(text);
	return rc;
}

/* Add what sweep b removed and could not remove to a. */
static void
trial_gc_merge(struct gc_report *a, const struct gc_report *b)
{
	size_t i;

	for (i = 0; i < b->nremoved && i < GC_REPORT_MAX; i++)
		if (a->nremoved + i < GC_REPORT_MAX)
			a->removed[a->nremoved + i] = b->removed[i];
	a->nremoved += b->nremoved;
	for (i = 0; i < b->nfailed && i < GC_REPORT_MAX; i++)
		if (a->nfailed + i < GC_REPORT_MAX)
			a->failed[a->nfailed + i] = b->failed[i];
	a->nfailed += b->nfailed;
	a->kept += b->kept;
	a->truncated |= b->truncated;
}

/* One engine before the trial: reachable (version), labs possible there
 * (docker_require_labs, what lab up checks), the start-of-trial sweep
 * (merged into t->gc) and the lab image.  en NULL: $DOCKER_HOST.  -1 + e
 * (ERRBUF_ENGINE unreachable, ERRBUF_INPUT refused). */
static int
trial_engine_check(struct trial *t, struct trial_engine *en,
    struct errbuf *e)
{
	struct gc_report *g = xcalloc(1, sizeof *g);
	struct docker *d;
	char *ref = NULL;
	int rc = -1;

	d = en != NULL ? docker_connect_at(&en->ep, e) : docker_connect(NULL,
	    e);
	if (d == NULL) {
		if (en != NULL)
			errbuf_prefix(e, "engine %s", en->name);
		free(g);
		return -1;
	}
	/* what lab up refuses (remote or Podman engine), up front, before
	 * anything is made: the same check, so it follows lab up's */
	/* (docker_require_labs lets a remote engine through for lab up; a
	 * trial keeps refusing one until its drills stream a remote lab's
	 * sensors: docker_require_local_d, as before) */
	if (en != NULL && (docker_require_local_d(d, "ares trial", e) == -1 ||
	    docker_require_labs(d, "ares trial", e) == -1))
		goto out;
	/* the daemon's identity, its ID, host name and data root (daemons
	 * of one host may share an ID, never a data root): one engine under
	 * two spellings is refused (trial_engines_same) */
	if (en != NULL) {
		cJSON *info = docker_info(d, e);
		char *id;

		if (info == NULL) {
			errbuf_prefix(e, "engine %s", en->name);
			goto out;
		}
		id = xasprintf("%.60s %.60s %s", util_json_str(info, "ID", ""),
		    util_json_str(info, "Name", ""), util_json_str(info,
		    "DockerRootDir", ""));
		if (util_json_str(info, "ID", "")[0] != '\0')
			util_sanitize(en->engine_id, sizeof en->engine_id, id,
			    strlen(id), false);
		free(id);
		cJSON_Delete(info);
		if (trial_engines_same(t, (size_t)(en - t->engines), e) == -1)
			goto out;
	}
	/* what ares processes that are gone left on this engine */
	if (gc_sweep(d, g, e) == -1 || lab_image_ensure(d, &ref, e) == -1) {
		/* the engine answered the connect: its loss now is a
		 * failure of the trial, not "unreachable" */
		if (e->code == ERRBUF_ENGINE) {
			e->code = ERRBUF_INTERNAL;
			errbuf_prefix(e, "the engine stopped answering as the "
			    "trial started");
		}
		if (en != NULL)
			errbuf_prefix(e, "engine %s", en->name);
		goto out;
	}
	if (t->gc == NULL)
		t->gc = xcalloc(1, sizeof *t->gc);
	trial_gc_merge(t->gc, g);
	rc = 0;
out:
	free(ref);
	free(g);
	docker_close(d);
	return rc;
}

/* The trial's engines from the options into t (multi), merged with those
 * a resumed trial.json lists (same name: the new URL and capacity; only
 * engines with a URL get workers).  -1 + e. */
static int
trial_engines_setup(const struct trial_options *o, struct trial *t,
    struct errbuf *e)
{
	struct trial_engine *en = NULL;
	size_t n = 0, i, k;
	size_t dflt = o->jobs > 0 ? o->jobs : 1;

	if (!t->multi && o->resume_dir != NULL && (o->nengine_urls > 0 ||
	    o->engines_file != NULL))
		return errbuf_set(e, ERRBUF_INPUT, "--resume %s: a trial started "
		    "without --engine resumes without it (its runs name no "
		    "engine)", o->resume_dir);
	if (o->nengine_urls == 0 && o->engines_file == NULL) {
		if (!t->multi)
			return 0;   /* today's trial: $DOCKER_HOST, -j */
		/* a v2 trial resumed without --engine: $DOCKER_HOST */
		const char *h = getenv("DOCKER_HOST");
		en = xcalloc(TRIAL_MAX_ENGINES, sizeof *en);
		if (trial_engine_set(en, h != NULL && h[0] != '\0' ? h :
		    "unix:///var/run/docker.sock", "DOCKER_HOST", NULL, dflt,
		    e) == -1) {
			free(en);
			return -1;
		}
		n = 1;
	} else if (dflt > TRIAL_ENGINE_CAP_MAX) {
		return errbuf_set(e, ERRBUF_INPUT, "-j %zu: an engine's capacity "
		    "is at most %d", dflt, TRIAL_ENGINE_CAP_MAX);
	} else if (trial_engines_from_options(o, dflt, &en, &n, e) == -1)
		return -1;
	if (t->engines == NULL)
		t->engines = xcalloc(TRIAL_MAX_ENGINES, sizeof *t->engines);
	for (i = 0; i < n; i++) {
		for (k = 0; k < t->nengines; k++)
			if (strcmp(t->engines[k].name, en[i].name) == 0)
				break;
		if (k == t->nengines) {
			if (t->nengines >= TRIAL_MAX_ENGINES) {
				free(en);
				return errbuf_set(e, ERRBUF_INPUT, "more than %d "
				    "engines with those of the resumed trial",
				    TRIAL_MAX_ENGINES);
			}
			t->nengines++;
		}
		t->engines[k] = en[i];
	}
	free(en);
	t->multi = true;
	t->jobs = 0;
	for (k = 0; k < t->nengines; k++) {
		struct trial_engine *x = &t->engines[k];

		x->ep.host = x->url;
		x->ep.what = "--engine";
		x->ep.cert_path = x->cert_path[0] != '\0' ? x->cert_path : NULL;
		if (x->url[0] != '\0')
			t->jobs += x->capacity;
		else
			x->down = true;   /* an earlier session's, not reachable */
	}
	if (t->jobs == 0)
		t->jobs = 1;
	return 0;
}

/* Every engine checked, swept and given the lab image once (not once
 * per worker).  -1 + e. */
static int
trial_engine(struct trial *t, struct errbuf *e)
{
	size_t k;

	if (!t->multi)
		return trial_engine_check(t, NULL, e);
	for (k = 0; k < t->nengines; k++)
		if (t->engines[k].url[0] != '\0' &&
		    trial_engine_check(t, &t->engines[k], e) == -1)
			return -1;
	return 0;
}

/* A new trial's directory: RUNS/trial-<id> (RUNS from the options, then
 * $ARES_RUNS, then "runs").  -1 + e. */
static int
trial_make_dir(const struct trial_options *o, struct trial *t,
    struct errbuf *e)
{
	const char *rd = o->runs_dir;
	char *parent, id[UTIL_ID_MAX];

	if (rd == NULL)
		rd = getenv("ARES_RUNS");
	if (rd == NULL || rd[0] == '\0')
		rd = "runs";
	if (util_mkdir_p(rd, 0755, e) == -1)
		return -1;
	parent = realpath(rd, NULL);
	if (parent == NULL || strlen(parent) + 80 >= sizeof t->dir) {
		errbuf_set(e, ERRBUF_INPUT, "runs directory %s: %s", rd,
		    parent == NULL ? strerror(errno) : "path too long");
		free(parent);
		return -1;
	}
	/* "trial-" + a fresh id (24 bytes): fits t->id. */
	util_new_id(id);
	snprintf(t->id, sizeof t->id, "trial-%.48s", id);
	snprintf(t->dir, sizeof t->dir, "%s/%s", parent, t->id);
	free(parent);
	if (mkdir(t->dir, 0755) == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "mkdir %s: %s", t->dir,
		    strerror(errno));
	return 0;
}

/* How many runs of t are not done (t->complete: none). */
static size_t
trial_count_missing(struct trial *t)
{
	size_t i, missing = 0;

	for (i = 0; i < t->n; i++)
		if (!t->runs[i].done)
			missing++;
	t->complete = missing == 0;
	return missing;
}

/* Run the missing drills on the workers (t->jobs; with --engine each
 * engine's capacity) and wait for them.  -1 + e when none could start. */
static int
trial_workers(struct trial_ctx *c, size_t missing, struct errbuf *e)
{
	struct trial *t = c->t;
	size_t ne = t->multi ? t->nengines : 1, nmax = 0, i, k, nth = 0;
	struct trial_slot *sl;
	sigset_t block, old;

	for (k = 0; k < ne; k++)
		nmax += t->multi ? t->engines[k].capacity : t->jobs;
	sl = xcalloc(nmax + 1, sizeof *sl);
	/* Workers never take SIGINT/SIGTERM: the caller's handler runs on
	 * this thread and only sets o->stop / o->cancel. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (k = 0; k < ne; k++) {
		size_t cap = t->multi ? t->engines[k].capacity : t->jobs;

		if (t->multi && t->engines[k].down)
			continue;
		for (i = 0; i < cap && i < missing; i++) {
			sl[nth].c = c;
			sl[nth].engine = k;
			if (pthread_create(&sl[nth].th, NULL, trial_worker,
			    &sl[nth]) != 0)
				break;
			nth++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (nth == 0 && missing > 0) {
		free(sl);
		return errbuf_set(e, ERRBUF_INTERNAL, "cannot start a worker "
		    "thread");
	}
	for (i = 0; i < nth; i++)
		pthread_join(sl[i].th, NULL);
	free(sl);
	/* every engine went away: what is left is an error run each */
	if (t->multi && !trial_flag(c->o->stop) && trial_sched_up(t) == 0)
		(void)trial_sched_strand(t);
	return 0;
}

int
trial_run(const struct trial_options *o, struct trial *t, struct errbuf *e)
{
	struct trial_ctx c;
	struct sign_secret *sk = NULL;
	size_t missing = 0;
	uint64_t t0;
	int rc = -1, wrc;

	memset(t, 0, sizeof *t);
	memset(&c, 0, sizeof c);
	if (sodium_init() < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "libsodium init failed");
	if (o->jobs > TRIAL_MAX_JOBS)
		return errbuf_set(e, ERRBUF_INPUT, "-j %zu: at most %d drills "
		    "at a time", o->jobs, TRIAL_MAX_JOBS);
	/* The key first: the runs of a resumed trial must carry it. */
	sk = sign_secret_open(o->key_dir, e);
	if (sk == NULL)
		return -1;
	snprintf(t->key_id, sizeof t->key_id, "%s", sign_secret_keyid(sk));

	if (o->resume_dir != NULL) {
		if (trial_load_resume(o, t, t->key_id, e) == -1)
			goto out;
		t->stopped[0] = '\0';   /* this session may finish it */
		if (o->jobs > 0)
			t->jobs = o->jobs;
	} else if (trial_new(o, t, e) == -1)
		goto out;
	if (trial_engines_setup(o, t, e) == -1 || trial_engine(t, e) == -1)
		goto out;
	if (o->resume_dir == NULL && trial_make_dir(o, t, e) == -1)
		goto out;
	snprintf(c.runs_abs, sizeof c.runs_abs, "%s/runs", t->dir);
	if (util_mkdir_p(c.runs_abs, 0755, e) == -1)
		goto out;
	missing = trial_count_missing(t);
	if (trial_write_copies(t, e) == -1)
		goto out;
	if (trial_save(t, sk, e) == -1)
		goto out;

	c.o = o;
	c.t = t;
	c.sk = sk;
	c.taken = xcalloc(t->n, sizeof *c.taken);
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	t0 = util_mono_ns();
	wrc = trial_workers(&c, missing, e);
	t->wall_ms = (double)(util_mono_ns() - t0) / 1e6;
	if (wrc == -1) {
		pthread_mutex_destroy(&c.mu);
		pthread_cond_destroy(&c.cv);
		goto out;
	}
	(void)trial_count_missing(t);
	pthread_mutex_lock(&c.mu);
	if (trial_save(t, sk, e) == -1) {
		pthread_mutex_unlock(&c.mu);
		pthread_mutex_destroy(&c.mu);
		pthread_cond_destroy(&c.cv);
		goto out;
	}
	trial_tell(&c, TRIAL_EV_END, NULL);
	pthread_mutex_unlock(&c.mu);
	pthread_mutex_destroy(&c.mu);
	pthread_cond_destroy(&c.cv);
	rc = 0;
out:
	if (rc == -1 && e->code == ERRBUF_NONE)
		e->code = ERRBUF_INTERNAL;
	free(c.taken);
	sign_secret_free(sk);
	return rc;
}
