/*
 * report_dirs.c - report.md of a trial dir and of a probe run dir, like a
 * drill's (docs/report.md): what ran, the results an auditor reads
 * without the console, and how to verify.  A reading aid written right
 * after the signed record (trial.json, probe.json) from the same numbers;
 * it names that file's BLAKE2b-256, and the record stays the only thing
 * signed: `ares verify DIR` checks the record, never this file.
 * Untrusted text (reasons, observed output) is sanitized and made safe
 * for a Markdown table cell.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "internal.h"

#define REPORT_MD_CELL   160     /* characters of untrusted text in a cell */
#define REPORT_MD_BINS   8       /* time-to-kill histogram bins */
#define REPORT_MD_BAR    40      /* widest histogram bar */
#define REPORT_MD_FILE_MAX (64u * 1024 * 1024)

/* s (untrusted, may be NULL) as one Markdown table cell into out: printable
 * ASCII only ('?' else), '|' and '`' escaped, at most REPORT_MD_CELL
 * characters ("..." when cut). */
static void
report_md_cell(char *out, size_t n, const char *s)
{
	size_t o = 0, c = 0;

	if (s == NULL)
		s = "";
	for (; *s != '\0' && o + 4 < n; s++) {
		unsigned char ch = (unsigned char)*s;

		if (c == REPORT_MD_CELL) {
			if (o + 4 < n)
				memcpy(out + o, "...", 3), o += 3;
			break;
		}
		/* every character Markdown gives a meaning to inline
		 * (links and images included: [x](u), ![x](u)) is escaped,
		 * as report.c's report_md_text does */
		if (strchr("\\`*_[]()<>|#&!~", (int)ch) != NULL)
			out[o++] = '\\';
		out[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
		c++;
	}
	out[o] = '\0';
}

/* BLAKE2b-256 (hex) of dir/name into hex; "" when it cannot be read. */
static void
report_md_hash(const char *dir, const char *name,
    char hex[EVIDENCE_HEX_BYTES])
{
	char *path = xasprintf("%s/%s", dir, name), *buf;
	uint8_t h[32];
	size_t len = 0;
	struct errbuf e = { 0 };

	hex[0] = '\0';
	if ((buf = util_read_file(path, REPORT_MD_FILE_MAX, &len, &e)) != NULL) {
		crypto_generichash(h, sizeof h, (const uint8_t *)buf, len,
		    NULL, 0);
		util_hex(h, sizeof h, hex);
	}
	free(buf);
	free(path);
}

/* Close mf (an open_memstream on *text, *len) and write its text to
 * dir/report.md.  -1 + e. */
static int
report_md_write(const char *dir, FILE *mf, char **text, size_t *len,
    struct errbuf *e)
{
	char *path;
	int rc;

	if (fclose(mf) != 0) {
		free(*text);
		return errbuf_set(e, ERRBUF_INTERNAL, "report.md: cannot "
		    "build the text");
	}
	path = xasprintf("%s/report.md", dir);
	rc = util_write_file(path, *text, *len, 0644, e);
	free(path);
	free(*text);
	return rc;
}

/* "k/n (p%)  [lower, upper]" of a rate at level. */
static void
report_md_rate(FILE *f, const char *what, const struct trial_rate *r,
    double level)
{
	if (r->n == 0) {
		fprintf(f, "| %s | 0/0 | - | - |\n", what);
		return;
	}
	fprintf(f, "| %s | %llu/%llu | %.1f%% | [%.4f, %.4f] (%g%%) |\n",
	    what, (unsigned long long)r->k, (unsigned long long)r->n,
	    100.0 * (double)r->k / (double)r->n, r->lower, r->upper,
	    level * 100);
}

/* The time-to-kill histogram of t's runs: REPORT_MD_BINS equal bins from
 * the least to the largest, one '#' bar each (a fenced block). */
static void
report_md_ttk_hist(FILE *f, const struct trial *t)
{
	size_t bins[REPORT_MD_BINS] = { 0 }, n = 0, top = 0;
	double lo = INFINITY, hi = -INFINITY, w;

	for (size_t i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];

		if (!r->done || !(r->time_to_kill_ms >= 0))
			continue;
		if (r->time_to_kill_ms < lo)
			lo = r->time_to_kill_ms;
		if (r->time_to_kill_ms > hi)
			hi = r->time_to_kill_ms;
		n++;
	}
	if (n == 0) {
		fprintf(f, "No run has a time to kill (no bait fired, or no "
		    "lever confirmed the cut-off).\n\n");
		return;
	}
	w = (hi - lo) / REPORT_MD_BINS;
	for (size_t i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];
		size_t b;

		if (!r->done || !(r->time_to_kill_ms >= 0))
			continue;
		b = w > 0 ? (size_t)((r->time_to_kill_ms - lo) / w) : 0;
		if (b >= REPORT_MD_BINS)
			b = REPORT_MD_BINS - 1;
		if (++bins[b] > top)
			top = bins[b];
	}
	fprintf(f, "```\n");
	for (size_t b = 0; b < (w > 0 ? REPORT_MD_BINS : 1); b++) {
		size_t len = (bins[b] * REPORT_MD_BAR + top - 1) / top;
		char bar[REPORT_MD_BAR + 1];

		memset(bar, '#', len);
		bar[len] = '\0';
		if (w > 0)
			fprintf(f, "%10.3f - %10.3f ms | %-*s %zu\n",
			    lo + w * (double)b, lo + w * (double)(b + 1),
			    REPORT_MD_BAR, bar, bins[b]);
		else
			fprintf(f, "%10.3f ms | %-*s %zu\n", lo,
			    REPORT_MD_BAR, bar, bins[b]);
	}
	fprintf(f, "```\n\n");
}

/* --engine: the engines (capacity, runs) and the engine of every run
 * with its failed attempts (docs/trial.md#engines). */
static void
report_md_engines(FILE *f, const struct trial *t)
{
	char cell[4 * REPORT_MD_CELL + 8], why[4 * REPORT_MD_CELL + 8];
	size_t i, k;

	if (!t->multi)
		return;
	fprintf(f, "\n## Engines\n\n| engine | capacity |\n|---|---|\n");
	for (k = 0; k < t->nengines; k++) {
		report_md_cell(cell, sizeof cell, t->engines[k].name);
		fprintf(f, "| %s | %zu |\n", cell, t->engines[k].capacity);
	}
	fprintf(f, "\n| # | engine | failed attempts (engine: run dir, "
	    "reason) |\n|---|---|---|\n");
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];

		if (!r->done)
			continue;
		report_md_cell(cell, sizeof cell, r->engine[0] ? r->engine :
		    "-");
		fprintf(f, "| %zu | %s | ", r->index, cell);
		for (k = 0; k < r->nattempts; k++) {
			report_md_cell(cell, sizeof cell, r->attempts[k].engine);
			report_md_cell(why, sizeof why, r->attempts[k].reason);
			fprintf(f, "%s%s: %s, %s", k ? "; " : "", cell,
			    r->attempts[k].run_dir[0] ? r->attempts[k].run_dir :
			    "(no run dir)", why);
		}
		fprintf(f, "%s |\n", r->nattempts == 0 ? "-" : "");
	}
}

int
report_trial_md(const struct trial *t, struct errbuf *e)
{
	const struct trial_summary *s = &t->sum;
	char hex[EVIDENCE_HEX_BYTES], cell[4 * REPORT_MD_CELL + 8];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "report.md: out of memory");
	report_md_cell(cell, sizeof cell, t->id);
	fprintf(f, "# ares trial %s\n\n", cell);
	report_md_cell(cell, sizeof cell, t->policy);
	fprintf(f, "- policy: %s (BLAKE2b-256 %s)\n", cell, t->policy_blake2b);
	fprintf(f, "- runs: %zu of %zu finished (%s), %zu at a time, base seed "
	    "%llu (splitmix64)\n", s->finished, t->n, t->complete ? "complete" :
	    "incomplete", t->jobs, (unsigned long long)t->base_seed);
	if (t->variants != TRIAL_VARIANTS_POLICY)
		fprintf(f, "- dressings: %s\n", trial_variants_name(t->variants));
	fprintf(f, "- outcome: %zu contained, %zu breached, %zu not exercised, "
	    "%zu error\n\n", s->contained, s->breached, s->not_exercised,
	    s->errors);

	fprintf(f, "## Rates\n\nEvery rate is k/n with its exact two-sided "
	    "Clopper-Pearson interval (docs/trial.md).\n\n");
	fprintf(f, "| rate | k/n | share | interval |\n|---|---|---|---|\n");
	report_md_rate(f, "bait taken", &s->bait, t->level);
	report_md_rate(f, "contained", &s->contained_r, t->level);
	report_md_rate(f, "breached", &s->breached_r, t->level);
	report_md_rate(f, "leaked", &s->leaked, t->level);
	fprintf(f, "\n");

	fprintf(f, "## Time to kill\n\n");
	if (s->nttk > 0)
		fprintf(f, "%zu run(s): median %.3f ms, p95 %.3f ms, max %.3f "
		    "ms (bait -> confirmed cut-off).\n\n", s->nttk,
		    s->ttk_median, s->ttk_p95, s->ttk_max);
	report_md_ttk_hist(f, t);

	fprintf(f, "## Runs\n\n| # | run id | seed | verdict | time to kill | "
	    "reason |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];
		char id[4 * REPORT_MD_CELL + 8], ttk[32];

		if (!r->done)
			continue;
		report_md_cell(id, sizeof id, r->run_id[0] ? r->run_id : "-");
		report_md_cell(cell, sizeof cell, r->reason);
		if (r->time_to_kill_ms >= 0)
			snprintf(ttk, sizeof ttk, "%.3f ms", r->time_to_kill_ms);
		else
			snprintf(ttk, sizeof ttk, "-");
		fprintf(f, "| %zu | %s | %llu | %s | %s | %s |\n", r->index, id,
		    (unsigned long long)r->seed, r->verdict, ttk, cell);
	}
	if (s->finished < t->n)
		fprintf(f, "\n%zu run(s) not finished (`ares trial --resume "
		    "TRIAL_DIR` runs them).\n", t->n - s->finished);
	report_md_engines(f, t);

	report_md_hash(t->dir, "trial.json", hex);
	fprintf(f, "\n## How to verify\n\n"
	    "This file is a reading aid written with `trial.json` (BLAKE2b-256 "
	    "%s);\nthe signed record is `trial.json` itself, signed with "
	    "`trial.json.minisig`\n(the key: `ares.pub` beside it, the drills' "
	    "key).\n\n"
	    "    ares verify TRIAL_DIR           # the signature, every run's "
	    "signed report,\n"
	    "                                    # every verdict recomputed "
	    "from its chains\n"
	    "    minisign -Vm trial.json -p ares.pub   # the signature alone, "
	    "stock minisign\n"
	    "    b2sum -l 256 trial.json         # the hash above\n",
	    hex[0] ? hex : "(unreadable)");
	return report_md_write(t->dir, f, &text, &len, e);
}

int
report_probe_md(const struct probe_report *r, struct errbuf *e)
{
	char cell[4 * REPORT_MD_CELL + 8], hex[EVIDENCE_HEX_BYTES];
	char *text = NULL;
	size_t len = 0, nfail = 0, npass = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "report.md: out of memory");
	for (size_t i = 0; i < r->nrows; i++) {
		if (r->rows[i].outcome == PROBE_PASS)
			npass++;
		else if (r->rows[i].row->core)
			nfail++;
	}
	report_md_cell(cell, sizeof cell, r->run_id);
	fprintf(f, "# ares probe %s\n\n", cell);
	report_md_cell(cell, sizeof cell, r->policy);
	fprintf(f, "- policy: %s\n", cell);
	report_md_cell(cell, sizeof cell, r->variant);
	fprintf(f, "- variant: %s\n", cell);
	fprintf(f, "- flaws:");
	for (size_t i = 0; i < r->nflaws; i++) {
		report_md_cell(cell, sizeof cell, r->flaws[i]);
		fprintf(f, "%s %s", i ? "," : "", cell);
	}
	fprintf(f, "%s\n", r->nflaws ? "" : " none");
	if (r->started[0] != '\0') {
		report_md_cell(cell, sizeof cell, r->started);
		fprintf(f, "- started: %s\n", cell);
	}
	if (r->nc) {
		report_md_cell(cell, sizeof cell, r->nc_item[0] ? r->nc_item :
		    "baseline");
		fprintf(f, "- negative control lab: %s\n", cell);
	}
	fprintf(f, "- result: **%s** (%zu of %zu planned rows ran: %zu pass, "
	    "%zu core failed)\n", probe_result_name(r), r->nrows, r->nplanned,
	    npass, nfail);
	if (r->cancelled)
		fprintf(f, "- the battery was stopped early (never held)\n");
	if (r->engine_lost) {
		report_md_cell(cell, sizeof cell, r->engine_error);
		fprintf(f, "- the engine stopped answering: %s\n", cell);
	}
	if (r->note[0] != '\0') {
		report_md_cell(cell, sizeof cell, r->note);
		fprintf(f, "- note: %s\n", cell);
	}
	if (r->anchored && !r->chain_failed)
		fprintf(f, "- sensor chains: %zu anchored in probe.json\n",
		    r->chains.n);
	else {
		report_md_cell(cell, sizeof cell, r->anchor_note);
		fprintf(f, "- sensor chains: NOT anchored (%s)\n", cell[0] ?
		    cell : "not collected");
	}

	fprintf(f, "\n## Rows\n\n| row | core | result | attack | observed | "
	    "ms |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct probe_result *res = &r->rows[i];
		char att[4 * REPORT_MD_CELL + 8];

		report_md_cell(att, sizeof att, res->row->attack);
		report_md_cell(cell, sizeof cell, res->observed);
		fprintf(f, "| %s | %s | %s | %s | %s | %.0f |\n", res->row->id,
		    res->row->core ? "yes" : "no",
		    probe_outcome_name(res->outcome, res->row->core), att, cell,
		    res->ms);
	}

	report_md_hash(r->run_dir, "probe.json", hex);
	fprintf(f, "\n## How to verify\n\n"
	    "This file is a reading aid written with `probe.json` (BLAKE2b-256 "
	    "%s);\nthe signed record is `probe.json` itself, signed with "
	    "`probe.json.minisig`\n(the key: `ares.pub` beside it).\n\n"
	    "    ares verify RUN_DIR             # the signature, the rows "
	    "evaluated again from\n"
	    "                                    # probe.jsonl, every anchored "
	    "chain\n"
	    "    minisign -Vm probe.json -p ares.pub   # the signature alone, "
	    "stock minisign\n"
	    "    b2sum -l 256 probe.json         # the hash above\n",
	    hex[0] ? hex : "(unreadable)");
	return report_md_write(r->run_dir, f, &text, &len, e);
}
