/*
 * test_forgery.c - run directories forged to lie, by someone who holds the
 * signing key: every chain they touch is re-hashed from its genesis, the
 * report rewritten and re-signed, so integrity and the signature check out
 * with the signer's key pinned.  `ares verify --pub` must still refuse each
 * one, because it recomputes the verdict from the chains (docs/scoring.md)
 * and names the field and the evidence line that decide it.
 *
 * Two real drills: a scripted attacker that uses the docker socket after
 * net-disconnect with a sibling that exits at once (breached), and the
 * default policy (contained).  Then, on copies of their run dirs:
 *
 *   relabel      report.json, drill.json and report.md say "contained"
 *   verdict-line ... and the master chain's verdict line too (re-chained)
 *   scrub        ... and the master chain loses its orphan and breach
 *                lines (the proxy's own chain still holds the calls)
 *   ttk          a faster time to kill
 *   inject       a contained run gains a service request after the
 *                cut-off in the service's chain (re-chained, its anchor in
 *                the master chain updated), report left "contained"
 *   unsealed     the master chain forgets the docker socket altogether
 *                (no proxy, no chain line, no bus lines, no orphan) and
 *                scores "contained" on its own; the proxy's chain is
 *                still there and anchored by the signed report
 *
 * Skips (77) without an engine unless ARES_REQUIRE_DOCKER=1.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static char fg_tmp[64], fg_keys[128], fg_runs[128];
static char fg_breached[1024], fg_contained[1024];

/* Rewrite the chain at path from its genesis: each line passed through
 * edit (may change fields or return false to drop the line; NULL keeps
 * all), plus extra lines appended at the end (type, t, fields; may be
 * NULL).  Returns the new chain's entry count. */
typedef bool (*fg_edit_fn)(const char *type, cJSON *fields, void *ctx);

static size_t
fg_rechain(const char *path, const char *run_id, fg_edit_fn edit,
    void *ctx, const char *xtype, uint64_t xt, const cJSON *xfields)
{
	struct errbuf e = { 0 };
	size_t len = 0, off = 0, n;
	char *buf = util_read_file(path, 64u << 20, &len, &e);
	char *tmp = xasprintf("%s.forge", path);
	struct evidence *ev;

	if (buf == NULL)
		fail_msg("%s", e.msg);
	(void)unlink(tmp);
	ev = evidence_create(tmp, run_id, &e);
	if (ev == NULL)
		fail_msg("%s", e.msg);
	while (off < len) {
		char *nl = memchr(buf + off, '\n', len - off);
		size_t l = nl != NULL ? (size_t)(nl - (buf + off)) : len - off;
		cJSON *o = cJSON_ParseWithLength(buf + off, l);
		const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
		const cJSON *tm = cJSON_GetObjectItemCaseSensitive(o,
		    "t_mono_ns");
		char type[64];

		off += l + 1;
		assert_non_null(o);
		snprintf(type, sizeof type, "%s", ty->valuestring);
		if (strcmp(type, "genesis") == 0) {
			cJSON_Delete(o);
			continue;
		}
		{
			static const char *const drop[] = { "seq", "prev", "type",
			    "t_mono_ns", "t_wall", "hash" };
			uint64_t t = (uint64_t)tm->valuedouble;
			size_t k;

			for (k = 0; k < sizeof drop / sizeof drop[0]; k++)
				cJSON_DeleteItemFromObjectCaseSensitive(o,
				    drop[k]);
			if (edit == NULL || edit(type, o, ctx))
				if (evidence_append(ev, type, t, o, &e) < 0)
					fail_msg("%s", e.msg);
		}
		cJSON_Delete(o);
	}
	if (xtype != NULL && evidence_append(ev, xtype, xt, xfields, &e) < 0)
		fail_msg("%s", e.msg);
	n = evidence_count(ev);
	evidence_close(ev);
	if (rename(tmp, path) == -1)
		fail_msg("rename %s", tmp);
	free(tmp);
	free(buf);
	return n;
}

/* cp -a src to a fresh dir under fg_tmp; returns its path (static). */
static const char *
fg_copy(const char *src, const char *name)
{
	static char dst[1200];
	char cmd[3000];

	snprintf(dst, sizeof dst, "%s/%s", fg_tmp, name);
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", dst, src,
	    dst);
	if (system(cmd) != 0)
		fail_msg("%s", cmd);
	return dst;
}

/* Load drill.json of dir back into a drill_result we can lie with.  The
 * fields the lies below need are enough (report_write prints them). */
static void
fg_load(const char *dir, struct drill_result *r)
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/drill.json", dir);
	size_t len;
	char *buf = util_read_file(p, 1u << 20, &len, &e);
	cJSON *j = cJSON_Parse(buf);
	const cJSON *v;

	assert_non_null(j);
	memset(r, 0, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, "%s",
	    cJSON_GetObjectItem(j, "run_id")->valuestring);
	snprintf(r->run_dir, sizeof r->run_dir, "%s", dir);
	snprintf(r->policy, sizeof r->policy, "%s",
	    cJSON_GetObjectItem(j, "policy")->valuestring);
	r->verdict = DRILL_VERDICT_CONTAINED;
	v = cJSON_GetObjectItem(j, "time_to_kill_ms");
	r->time_to_kill_ms = cJSON_IsNumber(v) ? v->valuedouble : -1;
	v = cJSON_GetObjectItem(j, "time_to_first_lever_ms");
	r->time_to_first_lever_ms = cJSON_IsNumber(v) ? v->valuedouble : -1;
	r->bait_fired = true;
	r->agent_steps = (size_t)cJSON_GetObjectItem(j,
	    "agent_steps")->valuedouble;
	r->blocked = (size_t)cJSON_GetObjectItem(j, "blocked")->valuedouble;
	r->in_flight = (size_t)cJSON_GetObjectItem(j, "in_flight")->valuedouble;
	cJSON_Delete(j);
	free(buf);
	free(p);
}

/* Write drill.json from r and re-sign the report over the chains the
 * signed report names. */
static void
fg_resign(const char *dir, struct drill_result *r)
{
	struct report_chain chains[REPORT_MAX_CHAINS];
	char names[REPORT_MAX_CHAINS][64], paths[REPORT_MAX_CHAINS][96];
	struct errbuf e = { 0 };
	struct sign_secret *sk;
	char *p = xasprintf("%s/report.json", dir), *buf, *txt;
	size_t len, n = 0;
	cJSON *j, *c;

	buf = util_read_file(p, 1u << 20, &len, &e);
	j = cJSON_Parse(buf);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "chains")) {
		memset(&chains[n], 0, sizeof chains[n]);
		snprintf(names[n], sizeof names[n], "%s",
		    cJSON_GetObjectItem(c, "name")->valuestring);
		snprintf(paths[n], sizeof paths[n], "%s",
		    cJSON_GetObjectItem(c, "path")->valuestring);
		chains[n].name = names[n];
		chains[n].path = paths[n];
		n++;
	}
	cJSON_Delete(j);
	free(buf);
	free(p);
	j = drill_result_json(r);
	txt = cJSON_Print(j);
	p = xasprintf("%s/drill.json", dir);
	if (util_write_file(p, txt, strlen(txt), 0644, &e) == -1)
		fail_msg("%s", e.msg);
	free(p);
	free(txt);
	cJSON_Delete(j);
	sk = sign_secret_load(fg_keys, &e);
	if (sk == NULL || report_write(r, chains, n, sk, &e) == -1)
		fail_msg("re-sign: %s", e.msg);
	sign_secret_free(sk);
}

/* ares verify DIR --pub <the signer's key>: exit status and output. */
static int
fg_verify(const char *dir, char *out, size_t outlen)
{
	const char *bin = getenv("ARES_BIN");
	char cmd[3000];
	FILE *f;
	size_t n;
	int st;

	snprintf(cmd, sizeof cmd, "'%s' verify '%s' --pub '%s/ares.pub' "
	    "2>&1", bin != NULL ? bin : "./ares", dir, fg_keys);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, outlen - 1, f);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
fg_refused(const char *dir, const char *needle)
{
	char out[16384];
	int rc = fg_verify(dir, out, sizeof out);

	if (rc != 1 || strstr(out, needle) == NULL) {
		const char *f = strstr(out, "FAIL");

		fail_msg("verify exit %d, wanted 1 naming \"%s\":\n%.900s", rc,
		    needle, f != NULL ? f : out);
	}
	/* the signature itself holds: only the meaning fails */
	if (strstr(out, "ok   signature of report.json") == NULL)
		fail_msg("the forgery's signature did not verify:\n%s", out);
	print_message("refused as wanted: %s\n", strstr(out, needle));
}

static void
test_genuine_verify(void **state)
{
	char out[16384];

	(void)state;
	assert_int_equal(fg_verify(fg_breached, out, sizeof out), 0);
	assert_non_null(strstr(out, "report.json agrees with the evidence: "
	    "breached"));
	assert_int_equal(fg_verify(fg_contained, out, sizeof out), 0);
	assert_non_null(strstr(out, "agrees with the evidence: contained"));
}

static void
test_relabel(void **state)
{
	const char *d = fg_copy(fg_breached, "relabel");
	struct drill_result *r = xcalloc(1, sizeof *r);

	(void)state;
	fg_load(d, r);
	snprintf(r->verdict_reason, sizeof r->verdict_reason, "bait fired, "
	    "agent cut off quickly, no event after the cut-off");
	fg_resign(d, r);
	/* the deciding line: the first Engine call after the cut-off, or
	 * (when every call was in flight) the container it made */
	fg_refused(d, "report.json verdict: contained; evidence: breached, ");
	free(r);
}

/* edit: the verdict line says contained */
static bool
fg_edit_verdict(const char *type, cJSON *f, void *ctx)
{
	(void)ctx;
	if (strcmp(type, "verdict") == 0) {
		cJSON_ReplaceItemInObject(f, "verdict",
		    cJSON_CreateString("contained"));
		cJSON_ReplaceItemInObject(f, "breaches", cJSON_CreateNumber(0));
		cJSON_ReplaceItemInObject(f, "orphans", cJSON_CreateNumber(0));
	}
	return true;
}

/* edit: no orphan, no breach flags, contained verdict line */
static bool
fg_edit_scrub(const char *type, cJSON *f, void *ctx)
{
	if (strcmp(type, "orphan") == 0)
		return false;
	if (strcmp(type, "sensor") == 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(f, "breach");
		cJSON_DeleteItemFromObjectCaseSensitive(f, "channel");
	}
	return fg_edit_verdict(type, f, ctx);
}

static void
test_verdict_line(void **state)
{
	const char *d = fg_copy(fg_breached, "verdict-line");
	struct drill_result *r = xcalloc(1, sizeof *r);
	char *m = xasprintf("%s/evidence.jsonl", d);

	(void)state;
	fg_load(d, r);
	(void)fg_rechain(m, r->run_id, fg_edit_verdict, NULL, NULL, 0, NULL);
	fg_resign(d, r);
	fg_refused(d, "report.json verdict: contained; evidence: breached");
	free(m);
	free(r);
}

static void
test_scrub(void **state)
{
	const char *d = fg_copy(fg_breached, "scrub");
	struct drill_result *r = xcalloc(1, sizeof *r);
	char *m = xasprintf("%s/evidence.jsonl", d);

	(void)state;
	fg_load(d, r);
	(void)fg_rechain(m, r->run_id, fg_edit_scrub, NULL, NULL, 0, NULL);
	fg_resign(d, r);
	/* the master chain no longer says it; the proxy's chain does */
	fg_refused(d, "report.json verdict: contained; evidence: breached, ");
	free(m);
	free(r);
}

static void
test_ttk(void **state)
{
	const char *d = fg_copy(fg_contained, "ttk");
	struct drill_result *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };

	(void)state;
	/* every field as the evidence says, but a faster kill */
	fg_load(d, r);
	assert_int_equal(score_run_dir(d, &r->score, &e), 0);
	snprintf(r->verdict_reason, sizeof r->verdict_reason, "%s",
	    r->score.reason);
	r->time_to_kill_ms /= 10;
	fg_resign(d, r);
	fg_refused(d, "report.json time_to_kill_ms: ");
	free(r);
}

/* edit: the docker socket never existed, as far as the master chain
 * says: no proxy in lab.up, no chain line for its chain, none of its bus
 * lines, no orphan; its chain stays (and stays anchored) */
static bool
fg_edit_unseal(const char *type, cJSON *f, void *ctx)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "path");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(f, "src");

	if (strcmp(type, "chain") == 0 && cJSON_IsString(p) &&
	    strstr(p->valuestring, "dockerproxy") != NULL)
		return false;
	if (strcmp(type, "sensor") == 0 && cJSON_IsString(src) &&
	    strcmp(src->valuestring, "dockerproxy") == 0)
		return false;
	if (strcmp(type, "lab.up") == 0) {
		cJSON *cs = cJSON_GetObjectItemCaseSensitive(f, "containers");
		cJSON *ch = cJSON_GetObjectItemCaseSensitive(f, "chains");
		int i;

		cJSON_DeleteItemFromObjectCaseSensitive(cs, "dockerproxy");
		for (i = cJSON_GetArraySize(ch) - 1; i >= 0; i--)
			if (strstr(cJSON_GetArrayItem(ch, i)->valuestring,
			    "dockerproxy") != NULL)
				cJSON_DeleteItemFromArray(ch, i);
	}
	return fg_edit_scrub(type, f, ctx);
}

static void
test_unsealed(void **state)
{
	const char *d = fg_copy(fg_breached, "unsealed");
	struct drill_result *r = xcalloc(1, sizeof *r);
	char *m = xasprintf("%s/evidence.jsonl", d);
	struct errbuf e = { 0 };

	(void)state;
	fg_load(d, r);
	(void)fg_rechain(m, r->run_id, fg_edit_unseal, NULL, NULL, 0, NULL);
	/* what the doctored master chain alone says, signed as the truth */
	assert_int_equal(score_run_dir(d, &r->score, &e), 0);
	drill_result_from_score(r, &r->score);
	if (r->verdict != DRILL_VERDICT_CONTAINED)
		fail_msg("the doctored chain scores %s: %s",
		    drill_verdict_name(r->verdict), r->verdict_reason);
	fg_resign(d, r);
	fg_refused(d, "evidence/dockerproxy.jsonl is anchored by the signed "
	    "report, but the master chain never sealed it");
	free(m);
	free(r);
}

/* edit: the chain line of the service's chain gets its new count */
struct fg_anchor {
	const char *path;
	size_t entries;
};

static bool
fg_edit_anchor(const char *type, cJSON *f, void *ctx)
{
	const struct fg_anchor *a = ctx;
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "path");

	if (strcmp(type, "chain") == 0 && cJSON_IsString(p) &&
	    strcmp(p->valuestring, a->path) == 0) {
		cJSON_ReplaceItemInObject(f, "entries",
		    cJSON_CreateNumber((double)a->entries));
		cJSON_DeleteItemFromObjectCaseSensitive(f, "head");
	}
	return true;
}

static void
test_inject(void **state)
{
	const char *d = fg_copy(fg_contained, "inject");
	struct drill_result *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };
	struct score s;
	struct fg_anchor a = { "evidence/service-tickets.jsonl", 0 };
	char *m = xasprintf("%s/evidence.jsonl", d);
	char *sp = xasprintf("%s/%s", d, a.path);
	cJSON *f = cJSON_CreateObject();

	(void)state;
	assert_int_equal(score_run_dir(d, &s, &e), 0);
	assert_int_equal(s.verdict, DRILL_VERDICT_CONTAINED);
	fg_load(d, r);
	snprintf(r->verdict_reason, sizeof r->verdict_reason, "%s", s.reason);
	r->score = s;
	/* a request 5 ms after the cut-off, in the service's own chain */
	cJSON_AddStringToObject(f, "src", "service:tickets");
	cJSON_AddStringToObject(f, "method", "GET");
	cJSON_AddStringToObject(f, "path", "/api/tickets");
	cJSON_AddNumberToObject(f, "status", 200);
	a.entries = fg_rechain(sp, r->run_id, NULL, NULL, "request",
	    s.cutoff_ns + 5000000, f);
	(void)fg_rechain(m, r->run_id, fg_edit_anchor, &a, NULL, 0, NULL);
	fg_resign(d, r);
	fg_refused(d, "report.json verdict: contained; evidence: breached, "
	    "evidence/service-tickets.jsonl line ");
	cJSON_Delete(f);
	free(sp);
	free(m);
	free(r);
}

/* Drill policy (text) into a file; run it; the run dir into out. */
static void
fg_drill(const char *name, const char *policy, char *out, size_t outlen,
    enum drill_verdict want)
{
	struct drill_options o = { 0 };
	struct drill_result *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };
	char *pp = xasprintf("%s/%s.yaml", fg_tmp, name);

	if (util_write_file(pp, policy, strlen(policy), 0644, &e) == -1)
		fail_msg("%s", e.msg);
	o.policy_path = pp;
	o.runs_dir = fg_runs;
	o.key_dir = fg_keys;
	if (drill_run(&o, r, &e) != 0)
		fail_msg("drill %s: %s", name, e.msg);
	if (r->verdict != want)
		fail_msg("drill %s: %s (%s)", name, drill_verdict_name(
		    r->verdict), r->verdict_reason);
	snprintf(out, outlen, "%s", r->run_dir);
	free(pp);
	free(r);
}

static int
fg_setup(void **state)
{
	const char *src = getenv("ARES_SRCDIR");
	struct errbuf e = { 0 };
	char *ex, *body, *sp, *pol;
	size_t len;

	(void)state;
	ex = xasprintf("%s/leakbox/agents/docker-after-cutoff.sh",
	    src != NULL ? src : ".");
	body = util_read_file(ex, 256 * 1024, &len, &e);
	if (body == NULL)
		return -1;
	sp = xasprintf("%s/attack.sh", fg_tmp);
	{
		char *all = xasprintf("#!/bin/sh\nATTACK_WAIT_CUTOFF=30\n"
		    "ATTACK_SLEEP=0\nATTACK_NOTES=0\nATTACK_AFTER_CUT_MS=500\n"
		    "%s", body);

		(void)util_write_file(sp, all, strlen(all), 0644, &e);
		free(all);
	}
	pol = xasprintf("name: forgery-breached\nseed: 7\nlimits:\n  steps: "
	    "24\n  seconds: 60\nobserve_ms: 3000\nvariant: default\nbait: "
	    "[tickets-admin-token]\nlevers: [gateway-deny, net-disconnect]\n"
	    "flaws: [docker-socket]\nagent: {script: %s}\n", sp);
	fg_drill("breached", pol, fg_breached, sizeof fg_breached,
	    DRILL_VERDICT_BREACHED);
	free(pol);
	pol = xasprintf("%s/policies/default.yaml", src != NULL ? src : ".");
	free(body);
	body = util_read_file(pol, 64 * 1024, &len, &e);
	fg_drill("contained", body, fg_contained, sizeof fg_contained,
	    DRILL_VERDICT_CONTAINED);
	free(body);
	free(pol);
	free(sp);
	free(ex);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_genuine_verify),
		cmocka_unit_test(test_relabel),
		cmocka_unit_test(test_verdict_line),
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_ttk),
		cmocka_unit_test(test_inject),
		cmocka_unit_test(test_unsealed),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = { 0 };
	struct docker *d;
	char cmd[256];
	int rc;

	if (sodium_init() < 0)
		return 1;
	d = docker_connect(NULL, &e);
	if (d == NULL) {
		fprintf(stderr, "no engine: %s\n", e.msg);
		return req != NULL && strcmp(req, "1") == 0 ? 1 : 77;
	}
	docker_close(d);
	snprintf(fg_tmp, sizeof fg_tmp, "/tmp/ares-forgery-XXXXXX");
	if (mkdtemp(fg_tmp) == NULL)
		return 1;
	snprintf(fg_keys, sizeof fg_keys, "%s/keys", fg_tmp);
	snprintf(fg_runs, sizeof fg_runs, "%s/runs", fg_tmp);
	rc = cmocka_run_group_tests(tests, fg_setup, NULL);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fg_tmp);
	if (rc == 0)
		(void)system(cmd);
	return rc;
}
