/*
 * probe_verify.c - a probe run dir's evidence: the signed probe.json, the
 * sensor chains anchored in it, and ares verify of the whole (signature,
 * trusted comment, chains, then every row evaluated again from
 * PROBE_OBS_FILE).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROBE_JSON_MAX     (1024 * 1024)   /* probe.json read back */

/* ------------------------------------------------------------------ */
/* signing                                                              */
/* ------------------------------------------------------------------ */

int
probe_write_signed(const struct probe_report *r, const char *key_dir,
    struct errbuf *e)
{
	struct sign_secret *sk = NULL;
	char *path, *txt, *comment;
	cJSON *j;
	size_t i, nfail = 0;
	int rc = -1;

	j = probe_report_json(r);
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	if (txt == NULL)
		util_fatal("probe: cannot serialise probe.json");
	path = xasprintf("%s/probe.json", r->run_dir);
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].outcome != PROBE_PASS && r->rows[i].row->core)
			nfail++;
	comment = xasprintf("%s run=%s result=%s rows=%zu failed=%zu",
	    PROBE_FORMAT, r->run_id, probe_result_name(r),
	    r->nrows, nfail);
	if (util_write_file(path, txt, strlen(txt), 0644, e) == -1)
		goto out;
	if ((sk = sign_secret_open(key_dir, e)) == NULL ||
	    sign_file_with_pub(sk, path, comment, e) == -1) {
		errbuf_prefix(e, "probe: sign %s", path);
		goto out;
	}
	/* the reading aid beside it (report_dirs.c) */
	rc = report_probe_md(r, e);
out:
	sign_secret_free(sk);
	free(comment);
	free(path);
	free(txt);
	return rc;
}

/* ------------------------------------------------------------------ */
/* evidence: anchoring the sensor chains, verifying a probe run dir      */
/* ------------------------------------------------------------------ */

int
probe_anchor_chains(struct probe_report *r, struct errbuf *e)
{
	struct lab_chain_check cs[REPORT_MAX_CHAINS];
	struct report_anchors *an = &r->chains;
	char unexpected[256];
	int n, i;

	memset(an, 0, sizeof *an);
	r->anchored = false;
	r->chain_failed = false;
	r->anchor_note[0] = '\0';
	n = lab_check_chains(r->run_dir, r->run_id, cs, REPORT_MAX_CHAINS - 1,
	    unexpected, sizeof unexpected, e);
	if (n < 0)
		return errbuf_prefix(e, "probe");
	if (unexpected[0] != '\0') {
		snprintf(r->anchor_note, sizeof r->anchor_note, "evidence/ "
		    "holds files no sensor of this lab wrote (not read): %.180s",
		    unexpected);
		r->chain_failed = true;
	}
	for (i = 0; i < n; i++) {
		const struct lab_chain_check *c = &cs[i];
		size_t k = an->n;

		if (!c->readable || !c->v.ok || c->v.entries == 0) {
			if (!r->chain_failed)
				snprintf(r->anchor_note, sizeof r->anchor_note,
				    "%.70s: %.180s", c->path, !c->readable ?
				    c->error : c->v.reason[0] ? c->v.reason :
				    "empty");
			r->chain_failed = true;
			continue;
		}
		snprintf(an->names[k], sizeof an->names[k], "%s", c->name);
		snprintf(an->paths[k], sizeof an->paths[k], "%s", c->path);
		an->chains[k].name = an->names[k];
		an->chains[k].path = an->paths[k];
		an->chains[k].entries = c->v.entries;
		memcpy(an->chains[k].head, c->v.head,
		    sizeof an->chains[k].head);
		an->n++;
	}
	r->anchored = true;
	return 0;
}

bool
probe_dir_is(const char *dir)
{
	char *pj = xasprintf("%s/probe.json", dir);
	char *rj = xasprintf("%s/report.json", dir);
	struct stat sb;
	bool is = stat(pj, &sb) == 0 && stat(rj, &sb) != 0 &&
	    !trial_dir_is(dir);

	free(pj);
	free(rj);
	return is;
}

/*
 * Read probe.json (j) back: run id, result, the trusted comment it implies
 * and its chain anchors.  0, or -1 with why naming the field.
 */
static int
probe_json_read(const cJSON *j, char *run_id, size_t run_id_len,
    char *result, size_t result_len, char **comment,
    struct report_anchors *an, bool *anchored, char *why, size_t whylen)
{
	const cJSON *v, *rows, *row;
	size_t nrows = 0, nfail = 0;

	*comment = NULL;
	*anchored = false;
	v = cJSON_GetObjectItemCaseSensitive(j, "format");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, PROBE_FORMAT) != 0) {
		snprintf(why, whylen, "format: not %s", PROBE_FORMAT);
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "run_id");
	if (!cJSON_IsString(v) || !report_run_id_ok(v->valuestring)) {
		snprintf(why, whylen, "run_id: missing or malformed");
		return -1;
	}
	snprintf(run_id, run_id_len, "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(j, "result");
	if (!cJSON_IsString(v) || (strcmp(v->valuestring, "held") != 0 &&
	    strcmp(v->valuestring, "failed") != 0 &&
	    strcmp(v->valuestring, "cancelled") != 0)) {
		snprintf(why, whylen, "result: not held, failed or cancelled");
		return -1;
	}
	snprintf(result, result_len, "%s", v->valuestring);
	rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
	if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) > PROBE_MAX_ROWS) {
		snprintf(why, whylen, "rows: not an array of at most %d",
		    PROBE_MAX_ROWS);
		return -1;
	}
	cJSON_ArrayForEach(row, rows) {
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(row,
		    "result");
		const cJSON *core = cJSON_GetObjectItemCaseSensitive(row,
		    "core");

		if (!cJSON_IsString(res) || !cJSON_IsBool(core)) {
			snprintf(why, whylen, "rows[%zu]: no result or core",
			    nrows);
			return -1;
		}
		if (cJSON_IsTrue(core) && strcmp(res->valuestring, "pass") != 0)
			nfail++;
		nrows++;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "chains");
	if (v == NULL) {
		memset(an, 0, sizeof *an);   /* written before anchoring */
	} else if (report_anchors_parse(v, true, an, why, whylen) == -1) {
		return -1;
	}
	*anchored = util_json_true(j, "chains_anchored");
	*comment = xasprintf("%s run=%s result=%s rows=%zu failed=%zu",
	    PROBE_FORMAT, run_id, result, nrows, nfail);
	return 0;
}

/*
 * The observations' anchor in probe.json (j), the chain it anchors checked
 * against it, then that chain (PROBE_OBS_FILE) read and parsed into o.
 * 0, or -1 after a failed check (o may be partly filled: the caller frees
 * it).
 */
static int
probe_verify_obs(const char *dir, const cJSON *j, const char *run_id,
    struct probe_obs_read *o, struct report_verify_result *res)
{
	const cJSON *ob = cJSON_GetObjectItemCaseSensitive(j, "observations");
	const cJSON *v;
	struct report_chain c = { 0 };
	struct errbuf e = { 0 };
	char why[300], head[EVIDENCE_HEX_BYTES], *buf, *p;
	size_t len;
	int rc;

	v = cJSON_GetObjectItemCaseSensitive(ob, "entries");
	if (!cJSON_IsObject(ob) || !cJSON_IsString(
	    cJSON_GetObjectItemCaseSensitive(ob, "path")) || strcmp(
	    cJSON_GetObjectItemCaseSensitive(ob, "path")->valuestring,
	    PROBE_OBS_FILE) != 0 || !cJSON_IsNumber(v) || v->valuedouble < 2 ||
	    v->valuedouble > 1e7 || !cJSON_IsString(
	    cJSON_GetObjectItemCaseSensitive(ob, "head")) || strlen(
	    cJSON_GetObjectItemCaseSensitive(ob, "head")->valuestring) != 64) {
		report_check_add(res, "observations", false, 0, "no recorded "
		    "observations", "probe.json observations: missing or not "
		    "anchored: the rows cannot be evaluated again (not a "
		    "verifiable result)");
		return -1;
	}
	snprintf(head, sizeof head, "%s", cJSON_GetObjectItemCaseSensitive(ob,
	    "head")->valuestring);
	c.name = "probe";
	c.path = PROBE_OBS_FILE;
	c.entries = (size_t)v->valuedouble;
	memcpy(c.head, head, sizeof c.head);
	report_check_chain(dir, run_id, &c, res);
	if (!res->checks[res->nchecks - 1].ok)
		return -1;
	p = xasprintf("%s/" PROBE_OBS_FILE, dir);
	buf = util_read_regular(p, PROBE_OBS_MAX, &len, &e);
	free(p);
	if (buf == NULL) {
		report_check_add(res, "observations", false, 0, "cannot read",
		    PROBE_OBS_FILE ": %s", e.msg);
		return -1;
	}
	rc = probe_obs_parse(buf, len, o, why, sizeof why);
	if (rc == -1)
		report_check_add(res, "observations", false, 0, why,
		    PROBE_OBS_FILE " %s", why);
	free(buf);
	return rc;
}

/*
 * What the battery meant to run: probe.json's only_flaw (j; it must be the
 * one its observations o recorded) picks the rows of probe_table, in
 * order, into planned (room for PROBE_MAX_ROWS); *np gets their count,
 * which rows_planned must equal.  0, or -1 after a failed check.
 */
static int
probe_verify_planned(const cJSON *j, const struct probe_obs_read *o,
    const struct probe_row **planned, size_t *np,
    struct report_verify_result *res)
{
	const cJSON *v;
	const char *only = NULL;
	size_t nplanned = 0, i;

	v = cJSON_GetObjectItemCaseSensitive(j, "only_flaw");
	if (cJSON_IsString(v))
		only = v->valuestring;
	else if (!cJSON_IsNull(v)) {
		report_check_add(res, "rows", false, 0, "only_flaw bad",
		    "probe.json only_flaw: missing or not a string");
		return -1;
	}
	if ((only != NULL) != o->only_flaw_set || (only != NULL &&
	    strcmp(only, o->only_flaw) != 0)) {
		report_check_add(res, "rows", false, 0, "only_flaw differs",
		    "probe.json only_flaw: %s; its observations: %s",
		    only != NULL ? only : "null", o->only_flaw_set ?
		    o->only_flaw : "null");
		return -1;
	}
	if (only != NULL && flaw_find(only) == NULL) {
		report_check_add(res, "rows", false, 0, "unknown flaw",
		    "probe.json only_flaw: unknown flaw");
		return -1;
	}
	for (i = 0; i < probe_nrows && nplanned < PROBE_MAX_ROWS; i++)
		if (only == NULL || probe_row_has_flaw(&probe_table[i], only))
			planned[nplanned++] = &probe_table[i];
	v = cJSON_GetObjectItemCaseSensitive(j, "rows_planned");
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)nplanned) {
		report_check_add(res, "rows", false, 0, "rows_planned differs",
		    "probe.json rows_planned: %s; recomputed: %zu (%s)",
		    cJSON_IsNumber(v) ? "differs" : "missing", nplanned,
		    only != NULL ? "the rows that detect only_flaw" :
		    "every row");
		return -1;
	}
	*np = nplanned;
	return 0;
}

/*
 * Every row of probe.json (j) against the battery's plan (planned,
 * nplanned) and evaluated again from its record in o, into rr (rows,
 * nrows, nplanned).  A row that differs is a failed check naming it; 0,
 * or -1 when the rows cannot be matched to the plan or the observations.
 */
static int
probe_verify_rows(const cJSON *j, const struct probe_obs_read *o,
    const struct probe_row *const *planned, size_t nplanned,
    struct probe_report *rr, struct report_verify_result *res)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
	const cJSON *row;
	const char *word;
	size_t i, bad = 0;

	i = 0;
	cJSON_ArrayForEach(row, rows) {
		const char *id = util_json_str(row, "id", NULL);
		const char *rs = util_json_str(row, "result", NULL);
		const char *obs = util_json_str(row, "observed", NULL);
		const cJSON *core = cJSON_GetObjectItemCaseSensitive(row, "core");
		const cJSON *seq = cJSON_GetObjectItemCaseSensitive(row,
		    "observation");
		struct probe_result *res_i;
		char name[64];

		if (i >= nplanned || id == NULL || strcmp(id, planned[i]->id) !=
		    0) {
			report_check_add(res, "rows", false, 0, "rows differ from "
			    "the battery", "probe.json rows[%zu]: id %.40s; the "
			    "battery runs %s there (a row added, dropped or "
			    "moved)", i, id != NULL ? id : "missing", i < nplanned ?
			    planned[i]->id : "no row");
			return -1;
		}
		snprintf(name, sizeof name, "row:%s", id);
		if (i >= o->nrecs || strcmp(o->recs[i].row, id) != 0) {
			report_check_add(res, name, false, 0, "no observation",
			    "probe.json rows[%zu] (%s): no recorded observation "
			    "in " PROBE_OBS_FILE, i, id);
			return -1;
		}
		if (!cJSON_IsNumber(seq) || seq->valuedouble !=
		    (double)o->recs[i].seq) {
			report_check_add(res, name, false, 0, "observation differs",
			    "probe.json rows[%zu] (%s) observation: not line %zu "
			    "of " PROBE_OBS_FILE " (its record)", i, id,
			    o->recs[i].seq + 1);
			bad++;
		}
		res_i = &rr->rows[i];
		probe_obs_eval(o, planned[i], &o->recs[i], res_i);
		word = probe_result_word(res_i);
		if (rs == NULL || strcmp(rs, word) != 0) {
			report_check_add(res, name, false, o->recs[i].seq + 1,
			    "result differs from its observation", "probe.json "
			    "rows[%zu] (%s) result: %.16s; recomputed from its "
			    "recorded observation (" PROBE_OBS_FILE " line %zu): "
			    "%s (%s)", i, id, rs != NULL ? rs : "missing",
			    o->recs[i].seq + 1, word, res_i->observed);
			bad++;
		} else if (obs == NULL || strcmp(obs, res_i->observed) != 0) {
			report_check_add(res, name, false, o->recs[i].seq + 1,
			    "observed differs from its observation", "probe.json "
			    "rows[%zu] (%s) observed: \"%.120s\"; recomputed from "
			    "its recorded observation (" PROBE_OBS_FILE " line "
			    "%zu): \"%.120s\"", i, id, obs != NULL ? obs :
			    "missing", o->recs[i].seq + 1, res_i->observed);
			bad++;
		} else if (!cJSON_IsBool(core) || cJSON_IsTrue(core) !=
		    planned[i]->core) {
			report_check_add(res, name, false, 0, "core differs",
			    "probe.json rows[%zu] (%s) core: not %s (the "
			    "battery's)", i, id, planned[i]->core ? "true" :
			    "false");
			bad++;
		}
		i++;
	}
	rr->nrows = i;
	rr->nplanned = nplanned;
	if (o->nrecs != rr->nrows) {
		report_check_add(res, "rows", false, 0, "rows differ from the "
		    "observations", PROBE_OBS_FILE " records %zu row(s), "
		    "probe.json lists %zu", o->nrecs, rr->nrows);
		return -1;
	}
	if (bad == 0)
		report_check_add(res, "rows", true, 0, "", "rows: %zu of %zu "
		    "planned, each evaluated again from its recorded "
		    "observation (" PROBE_OBS_FILE "): same results and "
		    "observed texts", rr->nrows, nplanned);
	return 0;
}

/*
 * complete and result of probe.json (j) against the rows evaluated again
 * (rr, of nplanned): a battery cut short is cancelled, unless the engine
 * stopped answering under it (then it failed: never held).  Sets rr's
 * engine_lost, cancelled and chain_failed.  0, or -1 when chains_failed
 * is missing.
 */
static int
probe_verify_result(const cJSON *j, struct probe_report *rr,
    size_t nplanned, struct report_verify_result *res)
{
	const cJSON *v;
	const char *result;
	size_t i;
	bool chains_failed;

	rr->engine_lost = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j,
	    "engine_lost"));
	rr->cancelled = rr->nrows < nplanned && !rr->engine_lost;
	v = cJSON_GetObjectItemCaseSensitive(j, "complete");
	if (!cJSON_IsBool(v) || cJSON_IsTrue(v) != (rr->nrows >= nplanned))
		report_check_add(res, "complete", false, 0, "complete differs",
		    "probe.json complete: %s; recomputed: %zu of %zu planned "
		    "row(s) ran", cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? "true" :
		    "false") : "missing", rr->nrows, nplanned);
	v = cJSON_GetObjectItemCaseSensitive(j, "chains_failed");
	if (!cJSON_IsBool(v)) {
		report_check_add(res, "result", false, 0, "chains_failed "
		    "missing", "probe.json chains_failed: missing");
		return -1;
	}
	chains_failed = cJSON_IsTrue(v);
	rr->chain_failed = chains_failed;
	result = probe_result_name(rr);
	v = cJSON_GetObjectItemCaseSensitive(j, "result");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, result) != 0) {
		char hint[160] = "";

		for (i = 0; i < rr->nrows; i++)
			if (rr->rows[i].row->core &&
			    rr->rows[i].outcome != PROBE_PASS) {
				snprintf(hint, sizeof hint, "; row %s is %s",
				    rr->rows[i].row->id,
				    probe_result_word(&rr->rows[i]));
				break;
			}
		if (hint[0] == '\0' && chains_failed)
			snprintf(hint, sizeof hint, "; a sensor chain failed");
		report_check_add(res, "result", false, 0, "result differs from "
		    "the rows", "probe.json result: %.16s; recomputed from the "
		    "rows: %s%s", cJSON_IsString(v) ? v->valuestring :
		    "missing", result, hint);
	} else
		report_check_add(res, "result", true, 0, "", "result %s "
		    "recomputed from the rows (%zu row(s), %s%s)", result,
		    rr->nrows, rr->cancelled ? "cancelled" : "complete",
		    chains_failed ? ", a sensor chain failed" : "");
	return 0;
}

/* The negative control's item of probe.json (j), when it has one: well
 * formed, and its seen recomputed from the rows evaluated again (rr). */
static void
probe_verify_nc(const cJSON *j, const struct probe_report *rr,
    struct report_verify_result *res)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j,
	    "negative_control");
	const cJSON *seen;
	const char *item;
	bool want;

	if (v == NULL)
		return;
	item = util_json_str(v, "item", NULL);
	seen = cJSON_GetObjectItemCaseSensitive(v, "seen");
	if (item == NULL || !cJSON_IsBool(seen) || (item[0] != '\0' &&
	    flaw_find(item) == NULL &&
	    probe_nc_weakening_find(item) == NULL)) {
		report_check_add(res, "negative-control", false, 0,
		    "malformed", "probe.json negative_control: needs "
		    "item (\"\", a flaw or a weakening) and seen");
		return;
	}
	want = probe_nc_seen(rr, item);
	if (cJSON_IsTrue(seen) != want)
		report_check_add(res, "negative-control", false, 0,
		    "seen differs from the rows", "probe.json "
		    "negative_control.seen: %s; recomputed from the rows: "
		    "%s (%s%s)", cJSON_IsTrue(seen) ? "true" : "false",
		    want ? "true" : "false", item[0] != '\0' ?
		    "the gate sees " : "the baseline holds", item);
	else
		report_check_add(res, "negative-control", true, 0, "",
		    "negative control %s%s: seen %s, recomputed from the "
		    "rows", item[0] != '\0' ? "item " : "baseline", item,
		    want ? "true" : "false");
}

/*
 * The recompute of a probe run dir (after the signature and the anchored
 * sensor chains): the observations chain against its anchor, then every
 * row evaluated again from what it recorded, the rows planned and run, the
 * result and the negative-control item.  Each difference is a failed
 * check naming the row and field; a step that fails ends it.
 */
static void
probe_verify_recompute(const char *dir, const cJSON *j, const char *run_id,
    struct report_verify_result *res)
{
	const struct probe_row *planned[PROBE_MAX_ROWS];
	struct probe_obs_read *o = xcalloc(1, sizeof *o);
	struct probe_report *rr = xcalloc(1, sizeof *rr);
	size_t nplanned = 0;

	if (probe_verify_obs(dir, j, run_id, o, res) == 0 &&
	    probe_verify_planned(j, o, planned, &nplanned, res) == 0 &&
	    probe_verify_rows(j, o, planned, nplanned, rr, res) == 0 &&
	    probe_verify_result(j, rr, nplanned, res) == 0)
		probe_verify_nc(j, rr, res);
	probe_obs_read_free(o);
	free(o);
	free(rr);
}

int
probe_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e)
{
	struct report_anchors *an;
	struct errbuf e2 = { 0 };
	char tc[SIGN_COMMENT_MAX + 1], why[256], result[16] = "";
	char *path, *buf, *comment = NULL;
	cJSON *j = NULL;
	bool sig_ok, parsed = false, anchored;
	size_t len = 0, i;
	int rc;

	rc = report_verify_signature(dir, "probe.json", pub_path, res, tc,
	    sizeof tc, e);
	if (rc == -1)
		return -1;
	sig_ok = rc == 1;
	an = xcalloc(1, sizeof *an);
	path = xasprintf("%s/probe.json", dir);
	buf = util_read_file(path, PROBE_JSON_MAX, &len, &e2);
	if (buf == NULL)
		report_check_add(res, "report", false, 0, "cannot read",
		    "probe.json: %s", e2.msg);
	else if ((j = cJSON_ParseWithLength(buf, len)) == NULL)
		report_check_add(res, "report", false, 0, "not JSON",
		    "probe.json: not JSON");
	else if (probe_json_read(j, res->run_id, sizeof res->run_id, result,
	    sizeof result, &comment, an, &anchored, why, sizeof why) == -1)
		report_check_add(res, "report", false, 0, why, "probe.json: %s",
		    why);
	else {
		parsed = true;
		snprintf(res->verdict, sizeof res->verdict, "%s", result);
		report_check_add(res, "report", true, 0, "", "probe.json: "
		    PROBE_FORMAT ", run %s, result %s, %zu chain(s)",
		    res->run_id, result, an->n);
	}
	if (parsed && sig_ok) {
		if (strcmp(comment, tc) == 0)
			report_check_add(res, "trusted-comment", true, 0, "",
			    "trusted comment matches probe.json (%s)", tc);
		else
			report_check_add(res, "trusted-comment", false, 0,
			    "trusted comment does not match probe.json",
			    "trusted comment does not match probe.json: %s",
			    tc);
	}
	if (parsed) {
		for (i = 0; i < an->n; i++)
			report_check_chain(dir, res->run_id, &an->chains[i],
			    res);
		if (!anchored) {
			const cJSON *note = cJSON_GetObjectItemCaseSensitive(j,
			    "chains_note");

			report_check_add(res, "chains", true, 0, "", "sensor "
			    "chains: not anchored (%s)", cJSON_IsString(note) ?
			    note->valuestring : "probe.json has none");
		}
		probe_verify_recompute(dir, j, res->run_id, res);
	}
	res->ok = sig_ok && parsed && res->first_bad < 0;
	cJSON_Delete(j);
	free(comment);
	free(buf);
	free(path);
	free(an);
	return 0;
}
