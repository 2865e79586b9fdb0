/*
 * gate_out.c - ares gate's files (docs/gate-json.md): gate.md for a pull
 * request, gate.xml (JUnit), gate.json signed like probe.json and
 * trial.json (minisign format, docs/signing.md), and ares verify on a
 * gate dir.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GATE_JSON_MAX (4 * 1024 * 1024)

/* Markdown-safe copy of untrusted text: letters, digits, space and
 * .,:;=/_+-()%#~'" are kept, anything else (| ` * [ ] < > ! @ \ and
 * control characters) becomes '_', so a value cannot break a table or make a link,
 * an image or a mention.  At most outlen-1 bytes. */
static void
gate_md_safe(char *out, size_t outlen, const char *s)
{
	size_t i, n = 0;

	for (i = 0; s != NULL && s[i] != '\0' && n + 1 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		out[n++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || (c != 0 &&
		    strchr(" .,:;=/_+-()%#~'\"", c) != NULL)) ? (char)c : '_';
	}
	out[n] = '\0';
}

/* The same for text inside a code span: only ` and | (which would end
 * the span or the table cell) and control characters become '_'. */
static void
gate_md_code(char *out, size_t outlen, const char *s)
{
	size_t i, n = 0;

	for (i = 0; s != NULL && s[i] != '\0' && n + 1 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		out[n++] = c < 0x20 || c == 0x7f || c == '`' || c == '|' ? '_' :
		    (char)c;
	}
	out[n] = '\0';
}

static const char *
gate_sign_word(int sign)
{
	return sign > 0 ? "gained" : sign < 0 ? "lost" : "changed";
}

static const char *gate_kind_word[] = { "flaw", "runtime", "agent",
    "access" };

/* The rate line of the trial: "k/n [lo, hi]". */
static void
gate_rate(FILE *f, const char *name, const struct trial_rate *r,
    const char *of)
{
	if (r->n == 0)
		fprintf(f, "| %s | 0/0 | - | %s |\n", name, of);
	else
		fprintf(f, "| %s | %llu/%llu | [%.4f, %.4f] | %s |\n", name,
		    (unsigned long long)r->k, (unsigned long long)r->n,
		    r->lower, r->upper, of);
}

char *
gate_markdown(const struct gate *g)
{
	char *buf = NULL, a[400], b[400], c[400], why[160];
	size_t blen = 0, i;
	FILE *f = open_memstream(&buf, &blen);

	if (f == NULL)
		util_fatal("open_memstream failed");
	fprintf(f, "# ares gate: %s\n\n", g->exit_code == 0 ?
	    "no new breach path" : g->exit_code == 1 ?
	    "HEAD opens a breach path" : g->exit_code == 4 ?
	    "nothing exercised" : "no verdict");
	gate_md_safe(a, sizeof a, g->sentence);
	fprintf(f, "**Verdict (exit %d, %s):** %s\n\n", g->exit_code,
	    g->result, a);
	gate_md_code(a, sizeof a, g->base.source);
	gate_md_code(b, sizeof b, g->head.source);
	fprintf(f, "- BASE: `%s` (%s)\n- HEAD: `%s` (%s)\n", a, g->base.kind,
	    b, g->head.kind);
	if (g->service[0]) {
		gate_md_code(a, sizeof a, g->service);
		fprintf(f, "- service: `%s` (imported with agent %s)\n", a,
		    g->agent);
	}
	fprintf(f, "- gate: `%s`\n\n## Access diff\n\n", g->id);
	if (g->diff.n == 0)
		fprintf(f, "No change in access: HEAD does not widen access.\n\n");
	else {
		fprintf(f, "%s\n\n| change | kind | access | area | from -> to "
		    "| what it means | widens |\n|---|---|---|---|---|---|---|\n",
		    g->diff.widens ? "HEAD **widens** access." :
		    "HEAD does not widen access.");
		for (i = 0; i < g->diff.n; i++) {
			const struct gate_change *ch = &g->diff.changes[i];

			gate_md_code(a, sizeof a, ch->what);
			gate_md_safe(b, sizeof b, ch->meaning);
			fprintf(f, "| %s | %s | `%s` | %s | ", gate_sign_word(
			    ch->sign), gate_kind_word[ch->kind], a, ch->area);
			gate_md_code(a, sizeof a, ch->from);
			gate_md_code(c, sizeof c, ch->to);
			fprintf(f, "`%s` -> `%s` | %s | %s |\n", a, c, b,
			    ch->widening ? "**yes**" : "no");
		}
		if (g->diff.truncated)
			fprintf(f, "\n(more changes than the gate lists: "
			    "counted as widening)\n");
		fprintf(f, "\n");
	}
	if (g->head_import != NULL) {
		fprintf(f, "<details><summary>HEAD's Compose mapping</summary>"
		    "\n\n```\n");
		for (i = 0; g->head_import[i] != '\0'; i++)
			fputc(g->head_import[i] == '`' ? '\'' :
			    g->head_import[i], f);
		fprintf(f, "```\n\n</details>\n\n");
	}
	fprintf(f, "## Probe battery on HEAD\n\n");
	if (g->probe == NULL) {
		gate_md_safe(a, sizeof a, g->probe_error);
		fprintf(f, "Did not run: %s\n\n", a);
	} else {
		const struct probe_report *r = g->probe;

		fprintf(f, "Run `%s`, result **%s**, %zu of %zu rows.\n\n"
		    "| row | result | detects | now fails |\n"
		    "|---|---|---|---|\n", r->run_id, probe_result_name(r),
		    r->nrows, r->nplanned);
		for (i = 0; i < r->nrows; i++) {
			const struct probe_result *res = &r->rows[i];
			char det[160] = "";
			size_t k;
			bool expl;

			for (k = 0; k < flaw_count; k++)
				if (probe_row_has_flaw(res->row,
				    flaw_table[k].id))
					probe_cat(det, sizeof det, "%s%s",
					    det[0] ? ", " : "",
					    flaw_table[k].id);
			expl = gate_row_explained(&g->diff, res->row->id, why,
			    sizeof why);
			fprintf(f, "| `%s` | %s | %s | %s |\n", res->row->id,
			    probe_outcome_name(res->outcome, res->row->core),
			    det[0] ? det : "-", !res->row->core ||
			    res->outcome == PROBE_PASS ? "" : res->outcome ==
			    PROBE_ERROR ? "could not check" : expl ?
			    "no (BASE had it)" : "**yes**");
			if (expl && res->outcome == PROBE_FAIL && res->row->core)
				(void)why;
		}
		fprintf(f, "\n%s%s\n\n", g->new_rows[0] ?
		    "Rows that now fail: " : "No core row fails that BASE does "
		    "not explain.", g->new_rows);
	}
	if (g->nc_planned) {
		fprintf(f, "## Negative control (%s)\n\n", g->nc_full ?
		    "every flaw" : "the flaws HEAD gained, each alone on the "
		    "sealed base");
		if (g->nc_error[0]) {
			gate_md_safe(a, sizeof a, g->nc_error);
			fprintf(f, "Error: %s\n\n", a);
		}
		fprintf(f, "| item | seen | failed rows |\n|---|---|---|\n");
		for (i = 0; g->nc != NULL && i < g->nnc; i++) {
			const struct probe_nc_item *it = &g->nc[i];

			gate_md_safe(a, sizeof a, it->ran ? it->rows : it->error);
			fprintf(f, "| %s | %s | %s |\n", it->flaw[0] ? it->flaw :
			    "(baseline)", !it->ran ? "did not run" :
			    it->flaw[0] ? (it->seen ? "yes" : "**NO: the gate "
			    "is blind**") : (it->seen ? "held" : "**FAILS**"),
			    a[0] ? a : "-");
		}
		fprintf(f, "\n");
	}
	if (g->trial_planned) {
		fprintf(f, "## Trial of HEAD (n=%zu, j=%zu)\n\n", g->trial_n,
		    g->trial_j);
		if (g->trial == NULL) {
			gate_md_safe(a, sizeof a, g->trial_error);
			fprintf(f, "Did not run: %s\n\n", a);
		} else {
			const struct trial_summary *s = &g->trial->sum;

			fprintf(f, "Trial `%s`: %zu contained, %zu breached, %zu "
			    "not exercised, %zu error(s)%s.  Exact two-sided "
			    "Clopper-Pearson intervals at %.0f%%:\n\n"
			    "| rate | k/n | interval | of |\n|---|---|---|---|\n",
			    g->trial->id, s->contained, s->breached,
			    s->not_exercised, s->errors, g->trial->complete ?
			    "" : " (incomplete)", g->trial->level * 100);
			gate_rate(f, "bait taken", &s->bait, "runs with a "
			    "verdict");
			gate_rate(f, "contained", &s->contained_r,
			    "exercised runs");
			gate_rate(f, "breached", &s->breached_r,
			    "exercised runs");
			gate_rate(f, "leaked", &s->leaked, "exercised runs");
			fprintf(f, "\n");
			for (i = 0; i < g->nbreaches; i++) {
				gate_md_safe(a, sizeof a, g->breaches[i].flaws);
				fprintf(f, "- run %zu (`%s`) breached: %s%s\n",
				    g->breaches[i].index, g->breaches[i].run_id,
				    a, g->breaches[i].gained ? " (through "
				    "access BASE did not have)" : " (BASE had "
				    "this access)");
			}
			if (g->nbreaches)
				fprintf(f, "\n");
		}
	} else
		fprintf(f, "No trial: HEAD does not widen access (the battery "
		    "only).\n\n");
	fprintf(f, "## Evidence\n\n`gate.json` is signed (key id `%s`): "
	    "`ares verify GATE_DIR`, or `minisign -Vm gate.json -p ares.pub` "
	    "in the gate dir.\n", g->key_id[0] ? g->key_id : "-");
	fclose(f);
	return buf;
}

char *
gate_junit(const struct gate *g)
{
	char *buf = NULL, name[256], msg[800];
	size_t blen = 0, i, ntests = 1, nfail = 0;
	FILE *f = open_memstream(&buf, &blen), *body;
	char *cases = NULL;
	size_t clen = 0;

	if (f == NULL || (body = open_memstream(&cases, &clen)) == NULL)
		util_fatal("open_memstream failed");
	/* the verdict first: a reader of the JUnit alone sees it */
	snprintf(name, sizeof name, "gate: HEAD opens no breach path BASE did "
	    "not");
	if (g->exit_code != 0)
		nfail++;
	probe_junit_case(body, "ares.gate", name, 0, g->exit_code == 0 ? NULL :
	    g->exit_code == 1 ? "failure" : "error", g->sentence, g->sentence);
	for (i = 0; g->probe != NULL && i < g->probe->nrows; i++) {
		const struct probe_result *res = &g->probe->rows[i];
		const char *kind = NULL;
		bool expl = gate_row_explained(&g->diff, res->row->id, NULL, 0);

		ntests++;
		snprintf(name, sizeof name, "%s: %s", res->row->id,
		    res->row->attack);
		if (res->row->core && res->outcome == PROBE_ERROR)
			kind = "error";
		else if (res->row->core && res->outcome == PROBE_FAIL && !expl)
			kind = "failure";
		snprintf(msg, sizeof msg, "%s%s", res->observed,
		    res->row->core && res->outcome == PROBE_FAIL && expl ?
		    " (BASE already had this access)" : "");
		if (kind != NULL)
			nfail++;
		probe_junit_case(body, "ares.gate.probe", name, res->ms / 1000,
		    kind, msg, msg);
	}
	for (i = 0; g->nc != NULL && i < g->nnc; i++) {
		const struct probe_nc_item *it = &g->nc[i];
		const char *kind = !it->ran ? "error" : !it->seen ? "failure" :
		    NULL;

		ntests++;
		snprintf(name, sizeof name, it->flaw[0] ? "the gate sees %s" :
		    "the baseline holds%s", it->flaw);
		snprintf(msg, sizeof msg, "%s", !it->ran ? it->error :
		    it->flaw[0] ? "the gate is blind to this flaw" :
		    it->rows);
		if (kind != NULL)
			nfail++;
		probe_junit_case(body, "ares.gate.negative", name, it->seconds,
		    kind, msg, msg);
	}
	if (g->trial_planned) {
		const char *kind = g->trial == NULL ? "error" :
		    g->nbreach_gained > 0 ? "failure" : NULL;

		ntests++;
		snprintf(name, sizeof name, "trial: no breach through gained "
		    "access");
		if (g->trial == NULL)
			snprintf(msg, sizeof msg, "%s", g->trial_error);
		else
			snprintf(msg, sizeof msg, "%zu of %zu run(s) breached, "
			    "%zu through access BASE did not have",
			    g->trial->sum.breached, g->trial->n,
			    g->nbreach_gained);
		if (kind != NULL)
			nfail++;
		probe_junit_case(body, "ares.gate.trial", name, 0, kind, msg,
		    msg);
	}
	fclose(body);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"ares gate\" tests=\"%zu\" failures=\"%zu\">\n"
	    "  <testsuite name=\"ares-gate\" tests=\"%zu\" failures=\"%zu\">\n"
	    "%s  </testsuite>\n</testsuites>\n", ntests, nfail, ntests, nfail,
	    cases);
	free(cases);
	fclose(f);
	return buf;
}

/* {"k", "n", "lower", "upper"} of a rate (nulls when n = 0). */
static cJSON *
gate_rate_json(const struct trial_rate *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "k", (double)r->k);
	cJSON_AddNumberToObject(o, "n", (double)r->n);
	if (r->n == 0) {
		cJSON_AddNullToObject(o, "lower");
		cJSON_AddNullToObject(o, "upper");
	} else {
		cJSON_AddNumberToObject(o, "lower", r->lower);
		cJSON_AddNumberToObject(o, "upper", r->upper);
	}
	return o;
}

/* A list of flaw ids as a JSON array. */
static cJSON *
gate_ids(const char (*ids)[32], size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(ids[i]));
	return a;
}

cJSON *
gate_json(const struct gate *g)
{
	cJSON *j = cJSON_CreateObject(), *o, *a;
	char now[40];
	size_t i;

	util_wall_iso(util_wall_ns(), now);
	cJSON_AddStringToObject(j, "format", GATE_FORMAT);
	cJSON_AddStringToObject(j, "gate_id", g->id);
	util_json_add_generated(j, now);
	o = cJSON_AddObjectToObject(j, "base");
	cJSON_AddStringToObject(o, "source", g->base.source);
	cJSON_AddStringToObject(o, "kind", g->base.kind);
	cJSON_AddStringToObject(o, "blake2b", g->base.blake2b);
	cJSON_AddStringToObject(o, "policy", "base.yaml");
	o = cJSON_AddObjectToObject(j, "head");
	cJSON_AddStringToObject(o, "source", g->head.source);
	cJSON_AddStringToObject(o, "kind", g->head.kind);
	cJSON_AddStringToObject(o, "blake2b", g->head.blake2b);
	cJSON_AddStringToObject(o, "policy", "head.yaml");
	if (g->git_ref[0])
		cJSON_AddStringToObject(j, "git_base", g->git_ref);
	else
		cJSON_AddNullToObject(j, "git_base");
	if (g->service[0]) {
		cJSON_AddStringToObject(j, "service", g->service);
		cJSON_AddStringToObject(j, "agent", g->agent);
	} else
		cJSON_AddNullToObject(j, "service");
	cJSON_AddItemToObject(j, "base_flaws", gate_ids(
	    (const char (*)[32])g->diff.base_flaws, g->diff.nbase));
	cJSON_AddItemToObject(j, "head_flaws", gate_ids(
	    (const char (*)[32])g->diff.head_flaws, g->diff.nhead));
	cJSON_AddItemToObject(j, "gained_flaws", gate_ids(
	    (const char (*)[32])g->diff.gained, g->diff.ngained));
	cJSON_AddBoolToObject(j, "widens", g->diff.widens);
	a = cJSON_AddArrayToObject(j, "diff");
	for (i = 0; i < g->diff.n; i++) {
		const struct gate_change *c = &g->diff.changes[i];

		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "change", gate_sign_word(c->sign));
		cJSON_AddStringToObject(o, "kind", gate_kind_word[c->kind]);
		cJSON_AddStringToObject(o, "what", c->what);
		cJSON_AddStringToObject(o, "area", c->area);
		cJSON_AddStringToObject(o, "from", c->from);
		cJSON_AddStringToObject(o, "to", c->to);
		cJSON_AddStringToObject(o, "meaning", c->meaning);
		cJSON_AddBoolToObject(o, "widening", c->widening);
		cJSON_AddItemToArray(a, o);
	}
	cJSON_AddBoolToObject(j, "diff_truncated", g->diff.truncated);
	if (g->probe != NULL) {
		o = cJSON_AddObjectToObject(j, "probe");
		cJSON_AddStringToObject(o, "run_id", g->probe->run_id);
		cJSON_AddStringToObject(o, "result",
		    probe_result_name(g->probe));
		cJSON_AddNumberToObject(o, "rows", (double)g->probe->nrows);
		a = cJSON_AddArrayToObject(o, "failing");
		for (i = 0; i < g->probe->nrows; i++) {
			const struct probe_result *res = &g->probe->rows[i];
			char why[160];
			cJSON *r;

			if (!res->row->core || res->outcome == PROBE_PASS)
				continue;
			r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "row", res->row->id);
			cJSON_AddStringToObject(r, "result",
			    probe_result_word(res));
			if (res->outcome == PROBE_FAIL &&
			    gate_row_explained(&g->diff, res->row->id, why,
			    sizeof why))
				cJSON_AddStringToObject(r, "explained_by", why);
			else
				cJSON_AddNullToObject(r, "explained_by");
			cJSON_AddStringToObject(r, "observed", res->observed);
			cJSON_AddItemToArray(a, r);
		}
	} else {
		cJSON_AddNullToObject(j, "probe");
	}
	if (g->probe_error[0])
		cJSON_AddStringToObject(j, "probe_error", g->probe_error);
	if (g->nc_planned) {
		o = probe_nc_json("head.yaml", g->nc, g->nnc);
		cJSON_AddBoolToObject(o, "full", g->nc_full);
		if (g->nc_error[0])
			cJSON_AddStringToObject(o, "error", g->nc_error);
		cJSON_AddItemToObject(j, "negative_control", o);
	} else
		cJSON_AddNullToObject(j, "negative_control");
	if (g->trial_planned) {
		o = cJSON_AddObjectToObject(j, "trial");
		cJSON_AddNumberToObject(o, "n", (double)g->trial_n);
		cJSON_AddNumberToObject(o, "j", (double)g->trial_j);
		if (g->trial != NULL) {
			const struct trial_summary *s = &g->trial->sum;
			cJSON *r;

			cJSON_AddStringToObject(o, "trial_id", g->trial->id);
			cJSON_AddBoolToObject(o, "complete", g->trial->complete);
			cJSON_AddNumberToObject(o, "level", g->trial->level);
			cJSON_AddNumberToObject(o, "contained",
			    (double)s->contained);
			cJSON_AddNumberToObject(o, "breached",
			    (double)s->breached);
			cJSON_AddNumberToObject(o, "not_exercised",
			    (double)s->not_exercised);
			cJSON_AddNumberToObject(o, "errors", (double)s->errors);
			r = cJSON_AddObjectToObject(o, "rates");
			cJSON_AddItemToObject(r, "bait_taken",
			    gate_rate_json(&s->bait));
			cJSON_AddItemToObject(r, "contained",
			    gate_rate_json(&s->contained_r));
			cJSON_AddItemToObject(r, "breached",
			    gate_rate_json(&s->breached_r));
			cJSON_AddItemToObject(r, "leaked",
			    gate_rate_json(&s->leaked));
			a = cJSON_AddArrayToObject(o, "breaches");
			for (i = 0; i < g->nbreaches; i++) {
				r = cJSON_CreateObject();
				cJSON_AddNumberToObject(r, "index",
				    (double)g->breaches[i].index);
				cJSON_AddStringToObject(r, "run_id",
				    g->breaches[i].run_id);
				cJSON_AddStringToObject(r, "flaws",
				    g->breaches[i].flaws);
				cJSON_AddBoolToObject(r, "through_gained",
				    g->breaches[i].gained);
				cJSON_AddItemToArray(a, r);
			}
		} else {
			cJSON_AddNullToObject(o, "trial_id");
			cJSON_AddStringToObject(o, "error", g->trial_error);
		}
	} else
		cJSON_AddNullToObject(j, "trial");
	o = cJSON_AddObjectToObject(j, "verdict");
	cJSON_AddNumberToObject(o, "exit", g->exit_code);
	cJSON_AddStringToObject(o, "result", g->result);
	cJSON_AddStringToObject(o, "new_rows", g->new_rows);
	cJSON_AddNumberToObject(o, "trial_breaches_through_gained",
	    (double)g->nbreach_gained);
	cJSON_AddStringToObject(o, "sentence", g->sentence);
	cJSON_AddItemToObject(j, "signing", sign_json(g->key_id[0] ? g->key_id :
	    NULL, "gate.json.minisig"));
	return j;
}

/* gate.json's trusted comment. */
static char *
gate_comment(const char *id, int exit_code, const char *result, bool widens,
    const char *probe, const char *trial)
{
	return xasprintf("%s gate=%s exit=%d result=%s widens=%s probe=%s "
	    "trial=%s", GATE_FORMAT, id, exit_code, result, widens ? "true" :
	    "false", probe[0] ? probe : "-", trial[0] ? trial : "-");
}

int
gate_write(struct gate *g, const char *key_dir, struct errbuf *e)
{
	struct sign_secret *sk = sign_secret_open(key_dir, e);
	char *t, *path, *md, *xml, *comment, *nl;
	cJSON *j;
	int rc;

	if (sk == NULL)
		return -1;
	snprintf(g->key_id, sizeof g->key_id, "%s", sign_secret_keyid(sk));
	j = gate_json(g);
	t = cJSON_Print(j);
	cJSON_Delete(j);
	if (t == NULL)
		util_fatal("cJSON_Print failed");
	nl = xasprintf("%s\n", t);
	cJSON_free(t);
	path = xasprintf("%s/gate.json", g->dir);
	rc = util_write_file(path, nl, strlen(nl), 0644, e);
	free(nl);
	if (rc == 0) {
		comment = gate_comment(g->id, g->exit_code, g->result,
		    g->diff.widens, g->probe ? g->probe->run_id : "",
		    g->trial ? g->trial->id : "");
		rc = sign_file_with_pub(sk, path, comment, e);
		free(comment);
	}
	free(path);
	sign_secret_free(sk);
	if (rc == -1)
		return -1;
	md = gate_markdown(g);
	path = xasprintf("%s/gate.md", g->dir);
	rc = util_write_file(path, md, strlen(md), 0644, e);
	free(path);
	free(md);
	if (rc == -1)
		return -1;
	xml = gate_junit(g);
	path = xasprintf("%s/gate.xml", g->dir);
	rc = util_write_file(path, xml, strlen(xml), 0644, e);
	free(path);
	free(xml);
	return rc;
}

bool
gate_dir_is(const char *dir)
{
	char *p = xasprintf("%s/gate.json", dir);
	struct stat sb;
	bool is = stat(p, &sb) == 0;

	free(p);
	return is;
}

/* A sub dir name we open: a run or trial id ([A-Za-z0-9-], no '/'). */
static bool
gate_sub_ok(const char *s)
{
	return s != NULL && s[0] != '\0' && report_run_id_ok(s) &&
	    strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	    strcmp(s, "..") != 0;
}

/* Verify one sub dir (probe run or trial) of the gate with verify(); one
 * check; its verdict into got (may be NULL). */
static bool
gate_verify_sub(const char *dir, const char *sub, const char *pub,
    const char *what, int (*verify)(const char *,
    const char *, struct report_verify_result *, struct errbuf *),
    struct report_verify_result *res, char *got, size_t gotlen)
{
	struct report_verify_result sr = { 0 };
	struct errbuf e = { 0 };
	char *p;
	bool ok;

	if (!gate_sub_ok(sub)) {
		report_check_add(res, what, false, 0, "bad id", "%s: bad id",
		    what);
		return false;
	}
	p = xasprintf("%s/%s", dir, sub);
	ok = verify(p, pub, &sr, &e) == 0 && sr.ok;
	if (got != NULL)
		snprintf(got, gotlen, "%s", sr.verdict);
	if (ok && res->key_id[0] && strcmp(sr.key_id, res->key_id) != 0)
		ok = false;
	report_check_add(res, what, ok, 0, ok ? "" : "does not verify",
	    "%s %s: %s", what, sub, ok ? "verifies (same key)" :
	    e.msg[0] ? e.msg : sr.first_bad >= 0 ?
	    sr.checks[sr.first_bad].text : "does not verify");
	free(p);
	report_verify_free(&sr);
	return ok;
}

/* The core rows of a verified probe run that fail and that BASE's flaws
 * (base_flaws of gate.json) do not explain, recomputed from its
 * probe.json: into rows ("a, b").  -1 when probe.json cannot be read. */
static int
gate_recompute_rows(const char *dir, const char *sub, const cJSON *base,
    char *rows, size_t len)
{
	struct gate_diff d;
	struct errbuf e = { 0 };
	size_t n = 0, i;
	char *p = xasprintf("%s/%s/probe.json", dir, sub), *buf;
	const cJSON *r;
	cJSON *j;

	rows[0] = '\0';
	buf = util_read_regular(p, GATE_JSON_MAX, &n, &e);
	free(p);
	if (buf == NULL)
		return -1;
	j = cJSON_ParseWithLength(buf, n);
	free(buf);
	if (j == NULL)
		return -1;
	memset(&d, 0, sizeof d);
	cJSON_ArrayForEach(r, base) {
		if (cJSON_IsString(r) && d.nbase < POLICY_MAX_FLAWS)
			snprintf(d.base_flaws[d.nbase++], sizeof d.base_flaws[0],
			    "%s", r->valuestring);
	}
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows")) {
		const char *id = util_json_str(r, "id", "");
		const char *res = util_json_str(r, "result", "");
		const cJSON *core = cJSON_GetObjectItemCaseSensitive(r, "core");

		for (i = 0; i < probe_nrows; i++)
			if (strcmp(probe_table[i].id, id) == 0)
				break;
		if (i == probe_nrows || !cJSON_IsTrue(core) ||
		    strcmp(res, "fail") != 0)
			continue;
		if (!gate_row_explained(&d, id, NULL, 0))
			probe_cat(rows, len, "%s%s", rows[0] ? ", " : "", id);
	}
	cJSON_Delete(j);
	return 0;
}

int
gate_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e)
{
	char tc[SIGN_COMMENT_MAX + 1], *path, *buf, *want, *pub, got[64];
	char rows[512] = "";
	bool blind = false, gained = false;
	const char *id, *result, *probe_id = "", *trial_id = "", *new_rows;
	const cJSON *v, *pr, *tr, *nc, *it;
	struct errbuf e2 = { 0 };
	size_t len = 0;
	cJSON *j = NULL;
	bool sig_ok;
	int rc, exit_code;

	rc = report_verify_signature(dir, "gate.json", pub_path, res, tc,
	    sizeof tc, e);
	if (rc == -1)
		return -1;
	sig_ok = rc == 1;
	path = xasprintf("%s/gate.json", dir);
	buf = util_read_regular(path, GATE_JSON_MAX, &len, &e2);
	free(path);
	if (buf != NULL)
		j = cJSON_ParseWithLength(buf, len);
	free(buf);
	id = util_json_str(j, "gate_id", "");
	v = cJSON_GetObjectItemCaseSensitive(j, "verdict");
	result = util_json_str(v, "result", "");
	new_rows = util_json_str(v, "new_rows", "");
	exit_code = (int)util_json_num(v, "exit", -1);
	if (j == NULL || strcmp(util_json_str(j, "format", ""),
	    GATE_FORMAT) != 0 || !gate_sub_ok(id) || result[0] == '\0' ||
	    exit_code < 0 || exit_code > 5) {
		report_check_add(res, "report", false, 0, "bad gate.json",
		    "gate.json: %s", j == NULL ? (e2.msg[0] ? e2.msg :
		    "not JSON") : "not an ares-gate-v1 document");
		cJSON_Delete(j);
		goto done;
	}
	snprintf(res->run_id, sizeof res->run_id, "%s", id);
	snprintf(res->verdict, sizeof res->verdict, "%s", result);
	report_check_add(res, "report", true, 0, "", "gate.json: %s, gate %s, "
	    "exit %d, %s", GATE_FORMAT, id, exit_code, result);
	pr = cJSON_GetObjectItemCaseSensitive(j, "probe");
	tr = cJSON_GetObjectItemCaseSensitive(j, "trial");
	if (cJSON_IsObject(pr))
		probe_id = util_json_str(pr, "run_id", "");
	if (cJSON_IsObject(tr))
		trial_id = util_json_str(tr, "trial_id", "");
	if (sig_ok) {
		want = gate_comment(id, exit_code, result, cJSON_IsTrue(
		    cJSON_GetObjectItemCaseSensitive(j, "widens")), probe_id,
		    trial_id);
		report_check_add(res, "trusted-comment", strcmp(want, tc) == 0, 0,
		    strcmp(want, tc) == 0 ? "" : "trusted comment does not "
		    "match gate.json", "trusted comment %s gate.json (%s)",
		    strcmp(want, tc) == 0 ? "matches" : "does not match", tc);
		free(want);
	}
	pub = pub_path != NULL ? xstrdup(pub_path) :
	    xasprintf("%s/ares.pub", dir);
	if (probe_id[0]) {
		if (gate_verify_sub(dir, probe_id, pub, "probe",
		    probe_verify_dir, res, got, sizeof got)) {
			bool same = strcmp(got, util_json_str(pr, "result", "")) ==
			    0;

			report_check_add(res, "probe-result", same, 0, same ? "" :
			    "differs", "probe result %s%s%s", got, same ? "" :
			    "; gate.json says ", same ? "" :
			    util_json_str(pr, "result", ""));
			if (gate_recompute_rows(dir, probe_id,
			    cJSON_GetObjectItemCaseSensitive(j, "base_flaws"),
			    rows, sizeof rows) == -1)
				report_check_add(res, "new-rows", false, 0,
				    "unreadable", "probe.json of %s unreadable",
				    probe_id);
			else
				report_check_add(res, "new-rows",
				    strcmp(rows, new_rows) == 0, 0,
				    strcmp(rows, new_rows) == 0 ? "" :
				    "new rows differ", "rows that now fail, "
				    "recomputed from the probe run and BASE's "
				    "flaws: %s%s%s", rows[0] ? rows : "none",
				    strcmp(rows, new_rows) == 0 ? "" :
				    "; gate.json says ", strcmp(rows,
				    new_rows) == 0 ? "" : new_rows);
		}
	} else if (exit_code == 0)
		report_check_add(res, "probe", false, 0, "no probe run",
		    "gate.json says exit 0 without a probe run");
	nc = cJSON_GetObjectItemCaseSensitive(j, "negative_control");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(nc, "labs")) {
		const char *rid = util_json_str(it, "run_id", "");
		const cJSON *flaw = cJSON_GetObjectItemCaseSensitive(it, "flaw");

		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "ran")))
			continue;
		if (gate_verify_sub(dir, rid, pub, "negative-control",
		    probe_verify_dir, res, got, sizeof got) &&
		    strcmp(got, cJSON_IsString(flaw) ? "failed" : "held") != 0)
			blind = true;   /* the lab's own result says so */
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it,
		    cJSON_IsString(flaw) ? "seen" : "held")))
			blind = true;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(tr,
	    "breaches"))
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it,
		    "through_gained")))
			gained = true;
	{
		bool must1 = rows[0] != '\0' || blind || gained;

		report_check_add(res, "verdict", !must1 || exit_code == 1, 0,
		    !must1 || exit_code == 1 ? "" : "verdict does not follow",
		    "verdict exit %d%s", exit_code, !must1 ? "" :
		    exit_code == 1 ? " follows from the rows, the negative "
		    "control and the trial" : ": the rows, the negative "
		    "control or the trial say exit 1");
	}
	if (trial_id[0])
		(void)gate_verify_sub(dir, trial_id, pub, "trial",
		    trial_verify_dir, res, NULL, 0);
	free(pub);
	cJSON_Delete(j);
done:
	res->ok = sig_ok && res->nchecks > 0 && res->first_bad < 0;
	return 0;
}
