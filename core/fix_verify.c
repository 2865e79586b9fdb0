/*
 * fix_verify.c - ares verify on a fix dir (docs/fix.md): fix.json's
 * signature and schema, its evidence chain, every run it lists, and the
 * outcome recomputed from those runs.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

/* ---- verify (ares verify FIX_DIR) -------------------------------------- */

/*
 * A fix dir is verified by recomputing it: fix.json's signature, its own
 * evidence chain against the signed count and head, every run it lists
 * verified on its own (report_verify_dir, same key) and agreeing with its
 * signed report, then the outcome derived again from those runs' verdicts
 * (the loop's rules, docs/fix.md): a fix.json rewritten to lie and
 * re-signed fails naming the field.
 */
#define FIX_JSON_MAX  (1024 * 1024)
#define FIX_MD_MAX    (1024 * 1024)

struct fix_vrun {
	char role[16];
	char run_id[64];
	char run_dir[1024];
	double seed;
	char verdict[32];
	double ttk;
	char hash[EVIDENCE_HEX_BYTES];
	char got[32];             /* the verdict its verified report gives */
	char variant[40];
	uint64_t vseed;           /* variant_seed, when has_vseed */
	bool has_vseed;
};
struct fix_vparsed {
	char fix_id[64];
	char outcome[32];
	struct fix_vrun runs[FIX_MAX_RUNS];
	size_t nruns;
	char removed[FIX_MAX_ITERATIONS][48];
	size_t nremoved;
	size_t iterations;
	size_t entries;
	char head[EVIDENCE_HEX_BYTES];
	/* "heldout_generated" (a fix loop that reruns on a generated
	 * held-out dressing writes the key; null until one is chosen) */
	bool gen_key;             /* the key is there: held-out-gen due */
	bool gen;                 /* it names a dressing */
	char gen_variant[40];
	uint64_t gen_seed;
};

/* Whether dir holds a fix.json and is neither a trial dir nor a run dir. */
bool
fix_dir_is(const char *dir)
{
	char *p = xasprintf("%s/fix.json", dir);
	struct stat sb;
	bool is = stat(p, &sb) == 0 && !trial_dir_is(dir);

	free(p);
	if (is) {
		p = xasprintf("%s/report.json", dir);
		is = stat(p, &sb) != 0;
		free(p);
	}
	return is;
}

/* [A-Za-z0-9-], 1..max-1 bytes: an id that names a directory. */
static bool
fix_id_ok(const char *s, size_t max)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return n > 0 && n < max && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

/* Whether s is 64 lower-case hex digits (a BLAKE2b-256 in hex). */
static bool
fix_hex64(const char *s)
{
	return s != NULL && strlen(s) == 64 && strspn(s, "0123456789abcdef") ==
	    64;
}

/* Copy string member key of o (bounded) or fail with why. */
static int
fix_vcopy(const cJSON *o, const char *key, char *dst, size_t len,
    const char *where, char *why, size_t whylen)
{
	const char *s = util_json_str(o, key, NULL);

	if (s == NULL || strlen(s) >= len) {
		snprintf(why, whylen, "%s%s: missing, not a string or too long",
		    where, key);
		return -1;
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/* fix.json (buf) into p, validated.  0, or -1 with why naming the field. */
static int
fix_vparse(const char *buf, size_t len, struct fix_vparsed *p, char *why,
    size_t whylen)
{
	cJSON *j = cJSON_ParseWithLength(buf, len);
	const cJSON *a, *it, *v;
	size_t i;
	int rc = -1;

	memset(p, 0, sizeof *p);
	if (!cJSON_IsObject(j)) {
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	if (strcmp(util_json_str(j, "format", ""), "ares-fix-v1") != 0) {
		snprintf(why, whylen, "format is not ares-fix-v1");
		goto out;
	}
	if (fix_vcopy(j, "fix_id", p->fix_id, sizeof p->fix_id, "", why,
	    whylen) == -1 || !fix_id_ok(p->fix_id, sizeof p->fix_id)) {
		snprintf(why, whylen, "fix_id: missing or malformed");
		goto out;
	}
	if (fix_vcopy(j, "outcome", p->outcome, sizeof p->outcome, "", why,
	    whylen) == -1)
		goto out;
	for (i = 0; i <= FIX_OUTCOME_ERROR; i++)
		if (strcmp(p->outcome, fix_outcome_name((enum fix_outcome)i))
		    == 0)
			break;
	if (i > FIX_OUTCOME_ERROR) {
		snprintf(why, whylen, "outcome: unknown");
		goto out;
	}
	a = cJSON_GetObjectItemCaseSensitive(j, "runs");
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > FIX_MAX_RUNS) {
		snprintf(why, whylen, "runs: not an array of at most %d",
		    FIX_MAX_RUNS);
		goto out;
	}
	cJSON_ArrayForEach(it, a) {
		struct fix_vrun *r = &p->runs[p->nruns];
		char where[32];

		snprintf(where, sizeof where, "runs[%zu].", p->nruns);
		if (fix_vcopy(it, "role", r->role, sizeof r->role, where, why,
		    whylen) == -1 || fix_vcopy(it, "run_id", r->run_id,
		    sizeof r->run_id, where, why, whylen) == -1 ||
		    fix_vcopy(it, "run_dir", r->run_dir, sizeof r->run_dir,
		    where, why, whylen) == -1 || fix_vcopy(it, "verdict",
		    r->verdict, sizeof r->verdict, where, why, whylen) == -1 ||
		    fix_vcopy(it, "report_blake2b256", r->hash, sizeof r->hash,
		    where, why, whylen) == -1)
			goto out;
		if (strcmp(r->role, "original") != 0 && strcmp(r->role,
		    "rerun") != 0 && strcmp(r->role, "held-out") != 0 &&
		    strcmp(r->role, "held-out-gen") != 0) {
			snprintf(why, whylen, "%srole: not original, rerun, "
			    "held-out or held-out-gen", where);
			goto out;
		}
		if (fix_vcopy(it, "variant", r->variant, sizeof r->variant,
		    where, why, whylen) == -1)
			goto out;
		v = cJSON_GetObjectItemCaseSensitive(it, "variant_seed");
		if (v != NULL && !cJSON_IsNull(v)) {
			if (!cJSON_IsString(v) || stats_parse_count(
			    v->valuestring, UINT64_MAX, &r->vseed) == -1) {
				snprintf(why, whylen, "%svariant_seed: not a "
				    "decimal string", where);
				goto out;
			}
			r->has_vseed = true;
		}
		if (!fix_id_ok(r->run_id, sizeof r->run_id)) {
			snprintf(why, whylen, "%srun_id: malformed", where);
			goto out;
		}
		v = cJSON_GetObjectItemCaseSensitive(it, "seed");
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0)) {
			snprintf(why, whylen, "%sseed: not a number", where);
			goto out;
		}
		r->seed = v->valuedouble;
		v = cJSON_GetObjectItemCaseSensitive(it, "time_to_kill_ms");
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
			snprintf(why, whylen, "%stime_to_kill_ms: not a number",
			    where);
			goto out;
		}
		r->ttk = v->valuedouble < 0 ? -1 : v->valuedouble;
		p->nruns++;
	}
	a = cJSON_GetObjectItemCaseSensitive(j, "removed");
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > FIX_MAX_ITERATIONS) {
		snprintf(why, whylen, "removed: not an array of at most %d",
		    FIX_MAX_ITERATIONS);
		goto out;
	}
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it) || flaw_find(it->valuestring) ==
		    NULL) {
			snprintf(why, whylen, "removed[%zu]: not a flaw of the "
			    "catalogue", p->nremoved);
			goto out;
		}
		snprintf(p->removed[p->nremoved++], sizeof p->removed[0], "%s",
		    it->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "iterations");
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >
	    FIX_MAX_ITERATIONS || v->valuedouble != (double)(size_t)
	    v->valuedouble) {
		snprintf(why, whylen, "iterations: not 0..%d",
		    FIX_MAX_ITERATIONS);
		goto out;
	}
	p->iterations = (size_t)v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(j, "evidence_entries");
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e7 ||
	    !fix_hex64(util_json_str(j, "evidence_head", NULL))) {
		snprintf(why, whylen, "evidence_entries/evidence_head: missing "
		    "or malformed");
		goto out;
	}
	p->entries = (size_t)v->valuedouble;
	snprintf(p->head, sizeof p->head, "%s",
	    util_json_str(j, "evidence_head", NULL));
	v = cJSON_GetObjectItemCaseSensitive(j, "heldout_generated");
	p->gen_key = v != NULL;
	if (cJSON_IsObject(v)) {
		const char *gs = util_json_str(v, "variant_seed", NULL);
		uint64_t idseed;

		if (fix_vcopy(v, "variant", p->gen_variant,
		    sizeof p->gen_variant, "heldout_generated.", why,
		    whylen) == -1)
			goto out;
		if (gs == NULL || stats_parse_count(gs, UINT64_MAX,
		    &p->gen_seed) == -1 || !fix_variant_id_seed(p->gen_variant,
		    &idseed) || idseed != p->gen_seed) {
			snprintf(why, whylen, "heldout_generated: variant_seed "
			    "missing or not the seed its variant id names");
			goto out;
		}
		p->gen = true;
	} else if (v != NULL && !cJSON_IsNull(v)) {
		snprintf(why, whylen, "heldout_generated: not an object or "
		    "null");
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

/*
 * The fix's own chain, read back (verified before): every structured
 * fix.run line must be a run of fix.json (in order: all of them, the
 * original too unless fix.start names a given run dir), fix.patch lines
 * the removed flaws in order, and fix.result the outcome.  One check
 * "evidence".
 */
static void
fix_check_chain_content(const char *dir, const struct fix_vparsed *p,
    struct report_verify_result *res)
{
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/evidence.jsonl", dir), *buf, why[400] = "";
	size_t len, pos = 0, line = 0, nrun = 0, npatch = 0, first = 0;
	bool given = false, result_seen = false;

	buf = util_read_regular(path, FIX_FILE_MAX, &len, &e);
	free(path);
	if (buf == NULL) {
		report_check_add(res, "evidence", false, 0, "cannot read",
		    "evidence.jsonl: %s", e.msg);
		return;
	}
	while (pos < len && why[0] == '\0') {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
		cJSON *j = cJSON_ParseWithLength(buf + pos, n);
		const char *type = util_json_str(j, "type", NULL);

		pos += n + 1;
		line++;
		if (type == NULL)
			type = "";
		if (strcmp(type, "fix.start") == 0) {
			given = util_json_str(j, "run_dir", NULL) != NULL;
			first = given ? 1 : 0;
			nrun = first;
		} else if (strcmp(type, "fix.run") == 0 &&
		    util_json_str(j, "role", NULL) != NULL) {
			const struct fix_vrun *r = nrun < p->nruns ?
			    &p->runs[nrun] : NULL;
			const char *role = util_json_str(j, "role", NULL);
			const char *rid = util_json_str(j, "run_id", NULL);
			const char *vd = util_json_str(j, "verdict", NULL);
			const char *vr = util_json_str(j, "variant", NULL);

			if (r == NULL || strcmp(role, r->role) != 0 ||
			    rid == NULL || strcmp(rid, r->run_id) != 0 ||
			    vd == NULL || strcmp(vd, r->verdict) != 0 ||
			    (vr != NULL && strcmp(vr, r->variant) != 0))
				snprintf(why, sizeof why, "evidence.jsonl line %zu: "
				    "fix.run %.20s %.64s %.20s is not fix.json "
				    "runs[%zu]", line, role, rid != NULL ? rid :
				    "?", vd != NULL ? vd : "?", nrun);
			nrun++;
		} else if (strcmp(type, "fix.patch") == 0) {
			const char *fl = util_json_str(j, "flaw", NULL);

			if (npatch >= p->nremoved || fl == NULL ||
			    strcmp(fl, p->removed[npatch]) != 0)
				snprintf(why, sizeof why, "evidence.jsonl line %zu: "
				    "fix.patch turns %.48s off; fix.json removed[%zu] "
				    "is %s", line, fl ? fl : "?", npatch, npatch <
				    p->nremoved ? p->removed[npatch] : "absent");
			npatch++;
		} else if (strcmp(type, "fix.result") == 0) {
			const char *o = util_json_str(j, "outcome", NULL);

			result_seen = true;
			if (o == NULL || strcmp(o, p->outcome) != 0)
				snprintf(why, sizeof why, "evidence.jsonl line %zu: "
				    "fix.result %.32s; fix.json outcome %s", line,
				    o ? o : "?", p->outcome);
		}
		cJSON_Delete(j);
	}
	free(buf);
	if (why[0] == '\0' && nrun != p->nruns)
		snprintf(why, sizeof why, "evidence.jsonl records %zu run(s), "
		    "fix.json lists %zu", nrun, p->nruns);
	else if (why[0] == '\0' && npatch != p->nremoved)
		snprintf(why, sizeof why, "evidence.jsonl records %zu patch(es), "
		    "fix.json removed lists %zu flaw(s)", npatch, p->nremoved);
	else if (why[0] == '\0' && !result_seen)
		snprintf(why, sizeof why, "evidence.jsonl: no fix.result line");
	if (why[0] != '\0')
		report_check_add(res, "evidence", false, 0, why, "%s", why);
	else
		report_check_add(res, "evidence", true, 0, "", "evidence.jsonl "
		    "agrees with fix.json: %zu run(s)%s, %zu patch(es), outcome "
		    "%s", p->nruns, given ? " (the original given)" : "",
		    p->nremoved, p->outcome);
}

/* Where run r's directory is: next to the fix dir (RUNS/<run id>), else
 * where fix.json says.  out gets "" when neither holds a report.json. */
static void
fix_locate_run(const char *dir, const struct fix_vrun *r, char *out,
    size_t outlen)
{
	char *abs = realpath(dir, NULL), *slash, *p;
	struct stat sb;

	out[0] = '\0';
	if (abs != NULL && (slash = strrchr(abs, '/')) != NULL) {
		*slash = '\0';
		p = xasprintf("%s/%s/report.json", abs[0] ? abs : "", r->run_id);
		if (stat(p, &sb) == 0)
			snprintf(out, outlen, "%s/%s", abs, r->run_id);
		free(p);
	}
	free(abs);
	if (out[0] == '\0' && r->run_dir[0] != '\0') {
		p = xasprintf("%s/report.json", r->run_dir);
		if (stat(p, &sb) == 0)
			snprintf(out, outlen, "%s", r->run_dir);
		free(p);
	}
}

/* The blake2b_256 report (its verified report.json text) records for
 * the file rel of its run, into hex; false when it lists none. */
static bool
fix_report_file_hash(const cJSON *report, const char *rel,
    char hex[EVIDENCE_HEX_BYTES])
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(report,
	    "files")) {
		const char *path = util_json_str(it, "path", NULL);
		const char *h = util_json_str(it, "blake2b_256", NULL);

		if (path != NULL && strcmp(path, rel) == 0 && fix_hex64(h)) {
			memcpy(hex, h, 65);
			return true;
		}
	}
	return false;
}

/* RUN_DIR/rel read (bounded, a regular file) and checked against the
 * hash want (from the signed report): the bytes (caller frees) with *len,
 * or NULL with why. */
static char *
fix_read_hashed(const char *run_dir, const char *rel, const char *want,
    size_t *len, char *why, size_t whylen)
{
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/%s", run_dir, rel), *buf;
	char hex[EVIDENCE_HEX_BYTES];
	uint8_t h[32];

	buf = util_read_regular(path, FIX_FILE_MAX, len, &e);
	free(path);
	if (buf == NULL) {
		snprintf(why, whylen, "%s: %.300s", rel, e.msg);
		return NULL;
	}
	crypto_generichash(h, sizeof h, (const uint8_t *)buf, *len, NULL, 0);
	util_hex(h, sizeof h, hex);
	if (strcmp(hex, want) != 0) {
		snprintf(why, whylen, "%s differs from the BLAKE2b-256 its signed "
		    "report.json records (%.16s... vs %.16s...)", rel, hex, want);
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Whether the run in run_dir wore the dressing variant (with has_seed the
 * generated one of seed) by its own signed evidence.  report/rlen is the
 * run's report.json, already verified (signature and file hashes) and
 * pinned by its hash in the signed fix.json or trial.json.  lab.json is
 * read and checked against the hash that report records, and its
 * "variant" must be variant; a generated dressing's id must be
 * gen-%016llx of seed, and the run's variant.yaml (hashed in the report
 * too) byte for byte variant_to_yaml(variant_generate(seed)); a shipped
 * one's variant.yaml, when hashed, the table row's.  A report that hashes
 * no lab.json proves nothing: -1 when required, else 0 (not checked).
 * 1 proven, -1 with why.
 */
int
fix_run_wore(const char *run_dir, const char *report, size_t rlen,
    const char *variant, bool has_seed, uint64_t seed, bool required,
    char *why, size_t whylen)
{
	cJSON *rj = cJSON_ParseWithLength(report, rlen), *lj = NULL;
	char lab_hex[EVIDENCE_HEX_BYTES], vy_hex[EVIDENCE_HEX_BYTES];
	char want_id[32], *lab = NULL, *vy = NULL, *ref = NULL;
	const struct variant *gv = NULL;
	const char *worn;
	uint64_t idseed = 0;
	bool has_lab, has_vy, gen;
	size_t len = 0, vlen = 0;
	int rc = -1;

	has_lab = fix_report_file_hash(rj, "lab.json", lab_hex);
	has_vy = fix_report_file_hash(rj, "variant.yaml", vy_hex);
	if (!has_lab) {
		if (!required) {
			rc = 0;
			goto out;
		}
		snprintf(why, whylen, "its signed report.json hashes no "
		    "lab.json: the dressing it wore (%.40s) is not proven",
		    variant);
		goto out;
	}
	if ((lab = fix_read_hashed(run_dir, "lab.json", lab_hex, &len, why,
	    whylen)) == NULL)
		goto out;
	lj = cJSON_ParseWithLength(lab, len);
	worn = util_json_str(lj, "variant", NULL);
	if (worn == NULL) {
		snprintf(why, whylen, "its lab.json names no variant");
		goto out;
	}
	if (strcmp(worn, variant) != 0) {
		snprintf(why, whylen, "it wore dressing %.40s (its signed "
		    "lab.json), not %.40s as listed", worn, variant);
		goto out;
	}
	gen = fix_variant_id_seed(variant, &idseed);
	if (gen || has_seed) {
		snprintf(want_id, sizeof want_id, "gen-%016llx",
		    (unsigned long long)seed);
		if (!gen || !has_seed || idseed != seed ||
		    strcmp(variant, want_id) != 0) {
			snprintf(why, whylen, "dressing %.40s is not the "
			    "generated one of variant_seed %s%llu", variant,
			    has_seed ? "" : "(none) ",
			    (unsigned long long)seed);
			goto out;
		}
		gv = variant_generate(seed);
	} else
		gv = variant_find(variant);
	if (!has_vy) {
		if (!required) {
			rc = 1;
			goto out;
		}
		snprintf(why, whylen, "its signed report.json hashes no "
		    "variant.yaml: the dressing %.40s is not proven", variant);
		goto out;
	}
	if ((vy = fix_read_hashed(run_dir, "variant.yaml", vy_hex, &vlen, why,
	    whylen)) == NULL)
		goto out;
	if (gv == NULL) {
		/* a file's dressing: nothing to rebuild it from; its bytes
		 * are the signed ones */
		rc = 1;
		goto out;
	}
	ref = variant_to_yaml(gv);
	if (ref == NULL || strlen(ref) != vlen || memcmp(ref, vy, vlen) != 0) {
		snprintf(why, whylen, "its signed variant.yaml is not the "
		    "dressing %.40s%s", variant, gen ? " that variant_seed "
		    "generates" : " of the shipped table");
		goto out;
	}
	rc = 1;
out:
	free(ref);
	variant_free(gv);
	free(vy);
	free(lab);
	cJSON_Delete(lj);
	cJSON_Delete(rj);
	return rc;
}

/* Check run i of p on its own: found, report.json hashed as recorded,
 * report_verify_dir (same key), run id, verdict, seed and time to kill as
 * fix.json says.  One check "run:<i>"; r->got gets the verified verdict
 * ("" when the run cannot be trusted). */
static void
fix_verify_run(const char *dir, const char *pub_path, const char *key_id,
    size_t i, struct fix_vrun *r, struct report_verify_result *res)
{
	struct report_verify_result rr;
	struct errbuf e = { 0 };
	char name[32], where[1100], why[700] = "", hex[EVIDENCE_HEX_BYTES];
	char *buf = NULL;
	size_t len = 0;
	bool have_rr = false;

	r->got[0] = '\0';
	snprintf(name, sizeof name, "run:%zu", i);
	fix_locate_run(dir, r, where, sizeof where);
	if (where[0] == '\0') {
		snprintf(why, sizeof why, "run directory not found (next to "
		    "the fix dir, or %.300s)", r->run_dir);
		goto done;
	}
	buf = report_json_read_hashed(where, hex, &len, &e);
	if (buf == NULL) {
		snprintf(why, sizeof why, "%.600s", e.msg);
		goto done;
	}
	if (strcmp(hex, r->hash) != 0) {
		snprintf(why, sizeof why, "report.json's BLAKE2b-256 %.16s... "
		    "differs from fix.json's %.16s...", hex, r->hash);
		goto done;
	}
	if (report_verify_dir(where, pub_path, &rr, &e) == -1) {
		snprintf(why, sizeof why, "%.600s", e.msg);
		goto done;
	}
	have_rr = true;
	if (!rr.ok)
		snprintf(why, sizeof why, "%.600s", rr.first_bad >= 0 ?
		    rr.checks[rr.first_bad].text : "not verified");
	else if (strcmp(rr.run_id, r->run_id) != 0)
		snprintf(why, sizeof why, "report run id %s differs", rr.run_id);
	else if (key_id != NULL && strcmp(rr.key_id, key_id) != 0)
		snprintf(why, sizeof why, "signed by key %s, the fix by %s",
		    rr.key_id, key_id);
	else {
		cJSON *j = cJSON_ParseWithLength(buf, len);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(j,
		    "time_to_kill_ms");
		const char *sd = util_json_str(j, "seed", NULL);
		uint64_t seed = 0;
		double ttk = cJSON_IsNumber(t) ? t->valuedouble : -1;

		snprintf(r->got, sizeof r->got, "%s", rr.verdict);
		if (strcmp(rr.verdict, r->verdict) != 0)
			snprintf(why, sizeof why, "fix.json verdict %s; its "
			    "verified report.json: %s", r->verdict, rr.verdict);
		else if (sd == NULL || stats_parse_count(sd, UINT64_MAX,
		    &seed) == -1 || (double)seed != r->seed)
			snprintf(why, sizeof why, "fix.json seed %.0f; its "
			    "verified report.json: %.24s", r->seed, sd != NULL ?
			    sd : "none");
		else if (fabs(ttk - r->ttk) > 1e-6 * fmax(1, fabs(ttk)))
			snprintf(why, sizeof why, "fix.json time_to_kill_ms "
			    "%.3f; its verified report.json: %.3f", r->ttk, ttk);
		/* the dressing it is listed with, by its own signed lab.json
		 * and variant.yaml: proven for the held-out runs (a
		 * held-out run in error may have none), checked for the
		 * others when their report hashes lab.json */
		else if (fix_run_wore(where, buf, len, r->variant,
		    r->has_vseed, r->vseed, strcmp(r->role, "held-out-gen") ==
		    0 || (strcmp(r->role, "held-out") == 0 &&
		    strcmp(r->verdict, "error") != 0), why, sizeof why) == -1)
			r->got[0] = '\0';
		cJSON_Delete(j);
	}
done:
	if (why[0] != '\0')
		report_check_add(res, name, false, 0, why, "run %zu %s (%s): %s",
		    i, r->role, r->run_id, why);
	else
		report_check_add(res, name, true, 0, "", "run %zu %s (%s): %s, "
		    "report verified (%zu checks), hash matches", i, r->role,
		    r->run_id, r->verdict, rr.nchecks);
	if (have_rr)
		report_verify_free(&rr);
	free(buf);
}

/*
 * The outcome the loop's rules give for these runs (verdicts as their
 * verified reports say): originals until one is exercised; per iteration
 * a rerun series on the training variant and, when it is contained, a
 * held-out series.  *why explains it (names the deciding run); -1 when
 * the sequence is not one the loop writes (why says where).
 */
static int
fix_recompute_outcome(const struct fix_vparsed *p, enum fix_outcome *out,
    size_t *series, char *why, size_t whylen)
{
	const char *roles[4] = { "original", "rerun", "held-out",
	    "held-out-gen" };
	size_t i = 0, reruns = 0;
	int phase = 0;   /* 0 original, 1 rerun, 2 held-out, 3 held-out-gen */
	/* a fix.json that has "heldout_generated" comes from a loop that
	 * reruns on a generated dressing after the shipped one: both must
	 * hold; one without it (an older loop) ends at the shipped one */
	int last_phase = p->gen_key ? 3 : 2;

	*series = 0;
	for (;;) {
		size_t start = i;
		const struct fix_vrun *last;
		const char *v;

		/* a series: not-exercised seeds up to the first exercised
		 * one (a breached rerun is followed by the next iteration's
		 * rerun, a series of its own) */
		while (i < p->nruns && strcmp(p->runs[i].role, roles[phase]) ==
		    0)
			if (strcmp(p->runs[i++].got, "not-exercised") != 0)
				break;
		if (i == start) {
			if (phase == 0) {
				snprintf(why, whylen, "runs[0] is not the original "
				    "drill");
				return -1;
			}
			if (phase == 2) {
				snprintf(why, whylen, "run %zu: a contained rerun "
				    "is followed by no held-out drill", i - 1);
				return -1;
			}
			if (phase == 3) {
				snprintf(why, whylen, "run %zu: a contained "
				    "held-out drill is followed by no drill on "
				    "the generated held-out dressing", i - 1);
				return -1;
			}
			/* after a breach, no rerun: attribution found nothing
			 * on the breakout path (or the iterations ran out) */
			*out = reruns == 0 ? FIX_OUTCOME_UNATTRIBUTED :
			    FIX_OUTCOME_NOT_A_FIX;
			*series = reruns;
			snprintf(why, whylen, "run %zu %s (%s) is breached and no "
			    "rerun follows", i - 1, p->runs[i - 1].role,
			    p->runs[i - 1].run_id);
			return i == p->nruns ? 0 : -1;
		}
		if (i - start > FIX_MAX_SEEDS) {
			snprintf(why, whylen, "runs %zu..%zu: more than %d %s "
			    "drills in a row", start, i - 1, FIX_MAX_SEEDS,
			    roles[phase]);
			return -1;
		}
		if (phase == 1)
			reruns++;
		last = &p->runs[i - 1];
		v = last->got;
		snprintf(why, whylen, "run %zu %s (%s) is %s", i - 1, last->role,
		    last->run_id, v);
		if (strcmp(v, "not-exercised") == 0)
			*out = FIX_OUTCOME_UNPROVEN;
		else if (phase == 0 && strcmp(v, "contained") == 0)
			*out = FIX_OUTCOME_NOTHING;
		else if (strcmp(v, "breached") == 0) {
			phase = 1;
			continue;
		} else if ((phase == 1 || (phase == 2 && last_phase == 3)) &&
		    strcmp(v, "contained") == 0) {
			phase++;
			continue;
		} else if (phase == last_phase && strcmp(v, "contained") == 0)
			*out = FIX_OUTCOME_VERIFIED;
		else
			*out = FIX_OUTCOME_ERROR;
		*series = reruns;
		if (i != p->nruns) {
			snprintf(why, whylen, "run %zu: the loop stops at run %zu "
			    "(%s)", i, i - 1, v);
			return -1;
		}
		return 0;
	}
}

/*
 * The generated held-out dressing as fix.json names it: every held-out-gen
 * run wears it (its variant id), and its seed is none the other runs used
 * (drill seeds, and the seeds of generated dressings they wore).  0, or
 * -1 with why.
 */
static int
fix_check_heldout_gen(const struct fix_vparsed *p, char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < p->nruns; i++) {
		const struct fix_vrun *r = &p->runs[i];

		if (strcmp(r->role, "held-out-gen") == 0) {
			if (!p->gen || strcmp(r->variant, p->gen_variant) != 0 ||
			    !r->has_vseed || r->vseed != p->gen_seed) {
				snprintf(why, whylen, "run %zu held-out-gen (%s) "
				    "is not on the generated held-out dressing "
				    "fix.json names", i, r->run_id);
				return -1;
			}
			continue;
		}
		if (p->gen && ((double)p->gen_seed == r->seed ||
		    (r->has_vseed && r->vseed == p->gen_seed))) {
			snprintf(why, whylen, "the generated held-out seed %llu "
			    "is one run %zu %s (%s) used: not held out",
			    (unsigned long long)p->gen_seed, i, r->role,
			    r->run_id);
			return -1;
		}
	}
	return 0;
}

/* pr.md / attempt.md, when there: its runs table and "Outcome:" line
 * against fix.json's recomputed runs and outcome (they are not signed,
 * so a check that they say the same). */
static void
fix_check_md(const char *dir, const struct fix_vparsed *p,
    const char *outcome, struct report_verify_result *res)
{
	static const char *const names[] = { "pr.md", "attempt.md" };
	size_t k;

	for (k = 0; k < 2; k++) {
		struct errbuf e = { 0 };
		char *path = xasprintf("%s/%s", dir, names[k]), *buf, why[400] = "";
		char want[64];
		size_t len, i, rows = 0;
		struct stat sb;

		if (lstat(path, &sb) == -1) {
			free(path);
			continue;
		}
		buf = util_read_regular(path, FIX_MD_MAX, &len, &e);
		free(path);
		if (buf == NULL) {
			report_check_add(res, names[k], false, 0, "cannot read",
			    "%s: %s", names[k], e.msg);
			continue;
		}
		for (i = 0; i < p->nruns && why[0] == '\0'; i++) {
			char *needle = xasprintf("| %s | `%s` |", p->runs[i].role,
			    p->runs[i].run_id), *at = strstr(buf, needle), *eol;

			if (at == NULL)
				snprintf(why, sizeof why, "%s: no table row for run "
				    "%zu %s (%s)", names[k], i, p->runs[i].role,
				    p->runs[i].run_id);
			else {
				char verdict[40], *cell;
				int col;

				eol = strchr(at, '\n');
				if (eol != NULL)
					*eol = '\0';
				/* | role | id | variant | seed | verdict | */
				cell = at;
				for (col = 0; col < 4 && cell != NULL; col++)
					cell = strchr(cell + 1, '|');
				if (cell != NULL && sscanf(cell + 1, " %39s",
				    verdict) == 1 && strcmp(verdict,
				    p->runs[i].got[0] ? p->runs[i].got :
				    p->runs[i].verdict) != 0)
					snprintf(why, sizeof why, "%s: run %zu %s "
					    "(%s) is %.39s there; its verified "
					    "report.json: %s", names[k], i,
					    p->runs[i].role, p->runs[i].run_id,
					    verdict, p->runs[i].got);
				if (eol != NULL)
					*eol = '\n';
				rows++;
			}
			free(needle);
		}
		snprintf(want, sizeof want, "Outcome: **%s**", outcome);
		if (why[0] == '\0' && strstr(buf, want) == NULL) {
			const char *o = strstr(buf, "Outcome: **");
			char said[40] = "?";

			if (o != NULL)
				sscanf(o + 11, "%39[^*]", said);
			snprintf(why, sizeof why, "%s: Outcome: %s; recomputed from "
			    "the runs: %s", names[k], said, outcome);
		}
		if (why[0] != '\0')
			report_check_add(res, names[k], false, 0, why, "%s", why);
		else
			report_check_add(res, names[k], true, 0, "", "%s agrees "
			    "(%zu run row(s), outcome %s)", names[k], rows,
			    outcome);
		free(buf);
	}
}

/* ares verify FIX_DIR: fix.json's signature, schema and trusted comment,
 * its chain and the chain's content, every run, the outcome recomputed,
 * pr.md / attempt.md.  0 with res filled (res->ok), -1 + e on a usage
 * error (dir is no directory, pub_path cannot be used). */
int
fix_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e)
{
	struct fix_vparsed *p = xcalloc(1, sizeof *p);
	struct errbuf e2 = { 0 };
	char tc[SIGN_COMMENT_MAX + 1], why[400], *path, *buf, *want;
	bool sig_ok, parsed = false, runs_ok = true;
	size_t len = 0, i, series;
	enum fix_outcome oc;
	int rc;

	rc = report_verify_signature(dir, "fix.json", pub_path, res, tc,
	    sizeof tc, e);
	if (rc == -1) {
		free(p);
		return -1;
	}
	sig_ok = rc == 1;
	path = xasprintf("%s/fix.json", dir);
	buf = util_read_regular(path, FIX_JSON_MAX, &len, &e2);
	free(path);
	if (buf == NULL)
		report_check_add(res, "report", false, 0, "cannot read",
		    "fix.json: %s", e2.msg);
	else if (fix_vparse(buf, len, p, why, sizeof why) == -1)
		report_check_add(res, "report", false, 0, why, "fix.json: %s",
		    why);
	else {
		parsed = true;
		snprintf(res->run_id, sizeof res->run_id, "%s", p->fix_id);
		snprintf(res->verdict, sizeof res->verdict, "%s", p->outcome);
		report_check_add(res, "report", true, 0, "", "fix.json: "
		    "ares-fix-v1, fix %s, outcome %s, %zu run(s), %zu flaw(s) "
		    "turned off", p->fix_id, p->outcome, p->nruns, p->nremoved);
	}
	free(buf);
	if (!parsed)
		goto done;
	if (sig_ok) {
		want = xasprintf("ares-fix-v1 fix=%s outcome=%s "
		    "evidence.jsonl=%zu:%s", p->fix_id, p->outcome, p->entries,
		    p->head);
		if (strcmp(want, tc) == 0)
			report_check_add(res, "trusted-comment", true, 0, "",
			    "trusted comment matches fix.json (%s)", tc);
		else
			report_check_add(res, "trusted-comment", false, 0,
			    "trusted comment does not match fix.json", "trusted "
			    "comment does not match fix.json: %s", tc);
		free(want);
	}
	{
		struct report_chain c = { .name = "fix", .path =
		    "evidence.jsonl", .entries = p->entries };

		memcpy(c.head, p->head, sizeof c.head);
		report_check_chain(dir, p->fix_id, &c, res);
		if (res->checks[res->nchecks - 1].ok)
			fix_check_chain_content(dir, p, res);
	}
	for (i = 0; i < p->nruns; i++) {
		fix_verify_run(dir, pub_path, res->key_id[0] != '\0' ?
		    res->key_id : NULL, i, &p->runs[i], res);
		if (p->runs[i].got[0] == '\0')
			runs_ok = false;
	}
	/* fix.json's own claims about the generated held-out dressing
	 * (each run's evidence of what it wore is checked per run above) */
	if (fix_check_heldout_gen(p, why, sizeof why) == -1) {
		report_check_add(res, "outcome", false, 0, why, "fix.json: %s",
		    why);
		goto done;
	}
	if (!runs_ok) {
		report_check_add(res, "outcome", false, 0, "runs not verified",
		    "fix.json outcome %s: not recomputed (a run does not "
		    "verify)", p->outcome);
		goto done;
	}
	if (fix_recompute_outcome(p, &oc, &series, why, sizeof why) == -1) {
		report_check_add(res, "outcome", false, 0, why, "fix.json runs: "
		    "not a sequence the fix loop writes: %s", why);
		goto done;
	}
	if (strcmp(fix_outcome_name(oc), p->outcome) != 0)
		report_check_add(res, "outcome", false, 0, "outcome differs from "
		    "the runs", "fix.json outcome: %s; recomputed from the runs: "
		    "%s (%s)", p->outcome, fix_outcome_name(oc), why);
	else if (p->nremoved != series)
		report_check_add(res, "outcome", false, 0, "removed differs from "
		    "the runs", "fix.json removed: %zu flaw(s); the runs show %zu "
		    "rerun series (one per flaw turned off)", p->nremoved,
		    series);
	else if (p->iterations != p->nremoved && p->iterations !=
	    p->nremoved + 1)
		report_check_add(res, "outcome", false, 0, "iterations differs",
		    "fix.json iterations: %zu; %zu flaw(s) turned off allow "
		    "%zu or %zu", p->iterations, p->nremoved, p->nremoved,
		    p->nremoved + 1);
	else
		report_check_add(res, "outcome", true, 0, "", "outcome %s "
		    "recomputed from the runs (%s)", p->outcome, why);
	fix_check_md(dir, p, fix_outcome_name(oc), res);
done:
	res->ok = sig_ok && parsed && res->first_bad < 0;
	free(p);
	return 0;
}
