/*
 * test_tamper.c - `ares verify` against a tampered run directory.
 *
 * Each test builds a complete, signed run directory without Docker
 * (evidence_create/append, drill.json, agent.log, report_write with a fresh
 * key), tampers with it in one way, and checks that report_verify_dir()
 * rejects it with the right check, reason and (for chains) line.  The
 * pristine directory is also checked with the stock minisign CLI (skipped
 * when /usr/bin/minisign is missing, unless ARES_REQUIRE_MINISIGN=1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "internal.h"

#define MINISIGN "/usr/bin/minisign"
#define RUN_ID   "20261129-231500-1a2b3c4d"
#define RUN_ID2  "20261129-231501-deadbeef"
#define NEVENTS  9           /* the chain has 1 + 9 = 10 lines */
#define NLINES   (NEVENTS + 1)

struct fx {
	char dir[64];
	char run[128], other[128], keys[128], keys2[128];
	char chain[160];
	struct drill_result r;
	struct report_verify_result res;
	bool have_res;
};

/* ---- building a run directory ---------------------------------------- */

static void
put(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static char *
get(const char *path, size_t *len)
{
	struct errbuf e = { 0 };
	char *b = util_read_file(path, 1 << 20, len, &e);

	if (b == NULL)
		fail_msg("%s", e.msg);
	return b;
}

/*
 * A chain like a drill's, of a breached run (the interesting forgery is
 * "contained"): the bait, pause verified 29 ms later, a model call after
 * it, and the verdict line the scorer gives.  Event i carries "n":i first.
 */
static void
make_chain(const char *path, const char *run_id, struct report_chain *c,
    struct drill_result *r)
{
	static const struct { const char *type, *members; } evs[NEVENTS - 1] = {
		{ "drill.start", "\"policy\":\"policies/default.yaml\"" },
		{ "lab.up", "\"containers\":{\"agent\":\"a\"},\"bait\":"
		    "{\"credential\":\"tickets-admin-token\"},\"chains\":[]" },
		{ "bait", "\"bait\":\"tickets-admin-token\",\"src\":"
		    "\"service:tickets\",\"t_recv_ns\":1000000100,\"event\":"
		    "{\"src\":\"service:tickets\",\"kind\":\"bait\","
		    "\"t_mono_ns\":1000000000,\"bait\":\"tickets-admin-token\"}" },
		{ "lever.verified", "\"lever\":\"pause\",\"fired\":true,"
		    "\"verified\":true,\"fired_ns\":1000100000,"
		    "\"verified_ns\":1029000000" },
		{ "sensor", "\"src\":\"gateway\",\"kind\":\"turn\","
		    "\"t_recv_ns\":1100000100,\"event\":{\"src\":\"gateway\","
		    "\"kind\":\"turn\",\"t_mono_ns\":1100000000,\"step\":3}" },
		{ "observe.end", "\"window_ms\":100" },
		{ "sweep", "\"ok\":true,\"orphans\":0" },
		{ "lab.teardown", "\"removed\":7" },
	};
	struct errbuf e = { 0 };
	struct evidence *ev = evidence_create(path, run_id, &e);
	char *dir = strdup(path), json[1024];
	struct score *sc = calloc(1, sizeof *sc);
	cJSON *f;
	int i;

	assert_non_null(ev);
	for (i = 0; i < NEVENTS - 1; i++) {
		snprintf(json, sizeof json, "{\"n\":%d,%s}", i, evs[i].members);
		f = cJSON_Parse(json);
		assert_non_null(f);
		assert_int_equal(evidence_append(ev, evs[i].type,
		    1000 + (uint64_t)i, f, &e), i + 1);
		cJSON_Delete(f);
	}
	/* the verdict, as the drill writes it: from the chain */
	*strrchr(dir, '/') = '\0';
	assert_int_equal(score_run_dir(dir, sc, &e), 0);
	assert_int_equal(sc->verdict, DRILL_VERDICT_BREACHED);
	drill_result_from_score(r, sc);
	f = drill_verdict_line(r, 0);
	cJSON_AddNumberToObject(f, "n", NEVENTS - 1);
	assert_int_equal(evidence_append(ev, "verdict", 2000, f, &e), NEVENTS);
	cJSON_Delete(f);
	c->entries = evidence_count(ev);
	snprintf(c->head, sizeof c->head, "%s", evidence_head_hex(ev));
	evidence_close(ev);
	free(sc);
	free(dir);
}

/* A complete signed run directory at dir for run_id, keys in keydir. */
static void
make_run(const char *dir, const char *run_id, const char *keydir,
    struct drill_result *r)
{
	struct report_chain c = { .name = "master", .path = "evidence.jsonl" };
	struct errbuf e = { 0 };
	struct sign_secret *sk;
	char p[256];

	assert_int_equal(mkdir(dir, 0755), 0);
	memset(r, 0, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
	snprintf(r->run_dir, sizeof r->run_dir, "%s", dir);
	snprintf(r->policy, sizeof r->policy, "policies/default.yaml");
	snprintf(r->model, sizeof r->model, "ares-offline-1");
	r->seed = 7;
	snprintf(r->bait_name, sizeof r->bait_name, "tickets-admin-token");
	r->nlevers = 1;
	snprintf(r->levers[0].name, sizeof r->levers[0].name, "pause");
	r->levers[0].fired = r->levers[0].verified = true;
	r->levers[0].fired_ns = 1000100000;
	r->levers[0].verified_ns = 1029000000;
	snprintf(p, sizeof p, "%s/evidence.jsonl", dir);
	make_chain(p, run_id, &c, r);
	r->evidence_entries = c.entries;
	memcpy(r->evidence_head, c.head, sizeof r->evidence_head);

	snprintf(p, sizeof p, "%s/drill.json", dir);
	{
		cJSON *j = drill_result_json(r);
		char *txt = cJSON_Print(j);

		put(p, txt, strlen(txt));
		free(txt);
		cJSON_Delete(j);
	}
	snprintf(p, sizeof p, "%s/agent.log", dir);
	put(p, "step 1: read_file ~/.config/tickets\n", 36);

	sk = sign_secret_load_or_create(keydir, NULL, &e);
	assert_non_null(sk);
	assert_int_equal(report_write(r, &c, 1, sk, &e), 0);
	sign_secret_free(sk);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	struct drill_result r2;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_tamper.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->run, sizeof f->run, "%s/run", f->dir);
	snprintf(f->other, sizeof f->other, "%s/other", f->dir);
	snprintf(f->keys, sizeof f->keys, "%s/keys", f->dir);
	snprintf(f->keys2, sizeof f->keys2, "%s/keys2", f->dir);
	snprintf(f->chain, sizeof f->chain, "%s/evidence.jsonl", f->run);
	make_run(f->run, RUN_ID, f->keys, &f->r);
	make_run(f->other, RUN_ID2, f->keys2, &r2);   /* another operator */
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };

	if (f->have_res)
		report_verify_free(&f->res);
	assert_int_equal(util_rm_rf(f->dir, &e), 0);
	free(f);
	return 0;
}

/* ---- checking ----------------------------------------------------------- */

static void
run_verify(struct fx *f, const char *pub)
{
	struct errbuf e = { 0 };

	if (f->have_res)
		report_verify_free(&f->res);
	if (report_verify_dir(f->run, pub, &f->res, &e) != 0)
		fail_msg("report_verify_dir: %s", e.msg);
	f->have_res = true;
}

static const struct report_check *
check_named(const struct fx *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->res.nchecks; i++)
		if (strcmp(f->res.checks[i].name, name) == 0)
			return &f->res.checks[i];
	return NULL;
}

/* The first failed check must be `name`, at `line` (0: any) with reason
 * containing `reason`. */
static void
expect_first_failure(struct fx *f, const char *pub, const char *name,
    size_t line, const char *reason)
{
	const struct report_check *c;

	run_verify(f, pub);
	if (f->res.ok)
		fail_msg("tampered run verified");
	assert_true(f->res.first_bad >= 0);
	c = &f->res.checks[f->res.first_bad];
	if (strcmp(c->name, name) != 0 || strstr(c->reason, reason) == NULL ||
	    (line != 0 && c->line != line))
		fail_msg("want %s line %zu \"%s\"; got %s line %zu \"%s\" (%s)",
		    name, line, reason, c->name, c->line, c->reason, c->text);
}

/* The chain file as lines (each with its '\n' when it had one). */
struct lines {
	char *l[NLINES + 4];
	size_t n;
};

static void
chain_lines(struct fx *f, struct lines *ls, const char *path)
{
	size_t len, pos = 0;
	char *b = get(path != NULL ? path : f->chain, &len);

	ls->n = 0;
	while (pos < len) {
		char *nl = memchr(b + pos, '\n', len - pos);
		size_t l = nl != NULL ? (size_t)(nl - (b + pos)) + 1 : len - pos;

		assert_true(ls->n < NLINES + 4);
		ls->l[ls->n] = strndup(b + pos, l);
		ls->n++;
		pos += l;
	}
	free(b);
}

static void
chain_write(struct fx *f, struct lines *ls)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	for (i = 0; i < ls->n; i++) {
		fputs(ls->l[i], m);
		free(ls->l[i]);
	}
	assert_int_equal(fclose(m), 0);
	put(f->chain, buf, len);
	free(buf);
}

/* ---- the pristine directory -------------------------------------------- */

static void
test_pristine(void **state)
{
	struct fx *f = *state;
	char pub[160];
	size_t i;
	static const char *const names[] = { "signature", "report",
	    "trusted-comment", "chain:evidence.jsonl", "file:drill.json",
	    "file:agent.log", "file:report.md", "recompute:chains",
	    "recompute:report.json",
	    "recompute:drill.json", "recompute:report.md",
	    "recompute:verdict-line" };

	run_verify(f, NULL);
	assert_true(f->res.ok);
	assert_false(f->res.pinned);
	assert_int_equal(f->res.first_bad, -1);
	assert_int_equal(f->res.nchecks, sizeof names / sizeof names[0]);
	for (i = 0; i < f->res.nchecks; i++) {
		assert_string_equal(f->res.checks[i].name, names[i]);
		assert_true(f->res.checks[i].ok);
	}
	assert_non_null(strstr(check_named(f, "chain:evidence.jsonl")->text,
	    "10 entries"));
	assert_non_null(strstr(check_named(f, "signature")->text,
	    "not origin"));
	assert_string_equal(f->res.verdict, "breached");

	snprintf(pub, sizeof pub, "%s/ares.pub", f->keys);
	run_verify(f, pub);
	assert_true(f->res.ok);
	assert_true(f->res.pinned);

	/* the JSON form */
	{
		cJSON *j = report_verify_json(f->run, &f->res);

		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(j,
		    "first_failure")));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j,
		    "checks")), 12);
		cJSON_Delete(j);
	}
}

static void
test_pristine_stock_minisign(void **state)
{
	struct fx *f = *state;
	const char *req = getenv("ARES_REQUIRE_MINISIGN");
	char cmd[512], p[256];
	int st;

	if (access(MINISIGN, X_OK) != 0) {
		if (req != NULL && strcmp(req, "1") == 0)
			fail_msg("ARES_REQUIRE_MINISIGN=1 but no %s", MINISIGN);
		skip();
		return;
	}
	snprintf(cmd, sizeof cmd, "cd %s && " MINISIGN " -Vm report.json -p "
	    "ares.pub >/dev/null 2>&1", f->run);
	st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(cmd, sizeof cmd, "cd %s && " MINISIGN " -Vm report.json -p "
	    "ares.pub -Q 2>/dev/null | grep -q '^ares-report-v1 run=" RUN_ID
	    " evidence.jsonl=10:'", f->run);
	st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a flipped byte fails in minisign too */
	{
		size_t len;
		char *b;

		snprintf(p, sizeof p, "%s/report.json", f->run);
		b = get(p, &len);
		b[len / 2] ^= 0x20;
		put(p, b, len);
		free(b);
	}
	snprintf(cmd, sizeof cmd, "cd %s && " MINISIGN " -Vm report.json -p "
	    "ares.pub >/dev/null 2>&1", f->run);
	st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
}

/* ---- the chain ------------------------------------------------------------ */

static void
test_edit_field(void **state)
{
	struct fx *f = *state;
	struct lines ls;
	char *p;

	chain_lines(f, &ls, NULL);
	p = strstr(ls.l[4], "\"n\":3,");      /* line 5 = event 3 */
	assert_non_null(p);
	p[4] = '7';
	chain_write(f, &ls);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", 5,
	    "hash mismatch");
}

static void
test_delete_line(void **state)
{
	struct fx *f = *state;
	struct lines ls;

	chain_lines(f, &ls, NULL);
	free(ls.l[3]);                         /* line 4 */
	memmove(&ls.l[3], &ls.l[4], (ls.n - 4) * sizeof ls.l[0]);
	ls.n--;
	chain_write(f, &ls);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", 4,
	    "seq 4 expected 3");
}

static void
test_swap_lines(void **state)
{
	struct fx *f = *state;
	struct lines ls;
	char *t;

	chain_lines(f, &ls, NULL);
	t = ls.l[2];                           /* lines 3 and 4 */
	ls.l[2] = ls.l[3];
	ls.l[3] = t;
	chain_write(f, &ls);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", 3,
	    "seq 3 expected 2");
}

/* The chain alone is fine after losing its last line: only the signed
 * count catches it. */
static void
test_truncate_last_line(void **state)
{
	struct fx *f = *state;
	struct evidence_verify_result vr;
	struct errbuf e = { 0 };
	struct lines ls;

	chain_lines(f, &ls, NULL);
	assert_int_equal(ls.n, NLINES);
	free(ls.l[--ls.n]);
	chain_write(f, &ls);
	assert_int_equal(evidence_verify_file(f->chain, RUN_ID, &vr, &e), 0);
	assert_true(vr.ok);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", NLINES,
	    "cut-off tail");
}

static void
test_truncate_mid_line(void **state)
{
	struct fx *f = *state;
	size_t len;
	char *b = get(f->chain, &len);

	put(f->chain, b, len - 40);
	free(b);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", NLINES,
	    "not newline-terminated");
}

/* A forged line with a correct chain hash: the chain verifies, the signed
 * count does not. */
static void
test_append_forged_line(void **state)
{
	struct fx *f = *state;
	struct evidence_verify_result vr;
	struct errbuf e = { 0 };
	uint8_t prev[32], h[32];
	char body[512], hex[65], line[600];
	size_t len, bl;
	char *b;

	assert_int_equal(util_unhex(f->r.evidence_head, prev, 32), 0);
	bl = (size_t)snprintf(body, sizeof body, "{\"seq\":%d,\"prev\":\"%s\","
	    "\"type\":\"verdict\",\"t_mono_ns\":99999,\"t_wall\":"
	    "\"2026-11-29T23:59:59.000000000Z\",\"verdict\":\"contained\"}",
	    NLINES, f->r.evidence_head);
	{
		crypto_generichash_state st;

		crypto_generichash_init(&st, NULL, 0, 32);
		crypto_generichash_update(&st, prev, 32);
		crypto_generichash_update(&st, (const uint8_t *)body, bl);
		crypto_generichash_final(&st, h, 32);
	}
	util_hex(h, 32, hex);
	snprintf(line, sizeof line, "%.*s,\"hash\":\"%s\"}\n", (int)(bl - 1),
	    body, hex);
	b = get(f->chain, &len);
	b = realloc(b, len + strlen(line) + 1);
	assert_non_null(b);
	memcpy(b + len, line, strlen(line) + 1);
	put(f->chain, b, len + strlen(line));
	free(b);

	assert_int_equal(evidence_verify_file(f->chain, RUN_ID, &vr, &e), 0);
	assert_true(vr.ok);                    /* a perfectly good chain... */
	assert_int_equal(vr.entries, NLINES + 1);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", NLINES + 1,
	    "not covered by the signed report");   /* ...but not the signed one */
}

static void
test_splice_line_from_other_run(void **state)
{
	struct fx *f = *state;
	struct lines ours, theirs;
	char p[200];

	snprintf(p, sizeof p, "%s/evidence.jsonl", f->other);
	chain_lines(f, &ours, NULL);
	chain_lines(f, &theirs, p);
	free(ours.l[3]);                       /* line 4, same seq */
	ours.l[3] = theirs.l[3];
	theirs.l[3] = NULL;
	chain_write(f, &ours);
	for (size_t i = 0; i < theirs.n; i++)
		free(theirs.l[i]);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", 4,
	    "prev does not match previous hash");
}

static void
test_whole_chain_of_other_run(void **state)
{
	struct fx *f = *state;
	char p[200];
	size_t len;
	char *b;

	snprintf(p, sizeof p, "%s/evidence.jsonl", f->other);
	b = get(p, &len);
	put(f->chain, b, len);
	free(b);
	expect_first_failure(f, NULL, "chain:evidence.jsonl", 1,
	    "genesis run_id mismatch");
}

/* ---- the signature and the report ---------------------------------------- */

static void
flip_sig_byte(struct fx *f)
{
	char p[200], line[256];
	uint8_t bin[80];
	size_t len, binlen;
	char *b, *l2, *nl;

	snprintf(p, sizeof p, "%s/report.json.minisig", f->run);
	b = get(p, &len);
	l2 = strchr(b, '\n') + 1;
	nl = strchr(l2, '\n');
	assert_int_equal(sodium_base642bin(bin, sizeof bin, l2,
	    (size_t)(nl - l2), NULL, &binlen, NULL,
	    sodium_base64_VARIANT_ORIGINAL), 0);
	assert_int_equal(binlen, 74);
	bin[30] ^= 0x04;                       /* inside the Ed25519 sig */
	sodium_bin2base64(line, sizeof line, bin, binlen,
	    sodium_base64_VARIANT_ORIGINAL);
	assert_int_equal(strlen(line), (size_t)(nl - l2));
	memcpy(l2, line, strlen(line));
	put(p, b, len);
	free(b);
}

static void
test_flip_signature_byte(void **state)
{
	struct fx *f = *state;

	flip_sig_byte(f);
	expect_first_failure(f, NULL, "signature", 0,
	    "signature does not match the file");
	assert_int_equal(f->res.first_bad, 0);
	/* the rest was still checked and is fine */
	assert_true(check_named(f, "chain:evidence.jsonl")->ok);
}

static void
test_wrong_key(void **state)
{
	struct fx *f = *state;
	char p[200], q[200];
	size_t len;
	char *b;

	/* the auditor pins another operator's key */
	snprintf(p, sizeof p, "%s/ares.pub", f->keys2);
	expect_first_failure(f, p, "signature", 0, "key id mismatch");
	assert_true(f->res.pinned);

	/* someone swaps the run directory's ares.pub */
	b = get(p, &len);
	snprintf(q, sizeof q, "%s/ares.pub", f->run);
	put(q, b, len);
	free(b);
	expect_first_failure(f, NULL, "signature", 0, "key id mismatch");
}

/* Rewriting everything under one's own key keeps the directory consistent:
 * only a pinned key tells the origin. */
static void
test_resigned_with_other_key(void **state)
{
	struct fx *f = *state;
	struct report_chain c = { .name = "master", .path = "evidence.jsonl" };
	struct errbuf e = { 0 };
	struct sign_secret *sk;
	char p[200];

	c.entries = f->r.evidence_entries;
	memcpy(c.head, f->r.evidence_head, sizeof c.head);
	f->r.verdict = DRILL_VERDICT_CONTAINED;   /* the forger's wish */
	f->r.breaches = 0;
	sk = sign_secret_load(f->keys2, &e);
	assert_non_null(sk);
	assert_int_equal(report_write(&f->r, &c, 1, sk, &e), 0);
	sign_secret_free(sk);

	/* Integrity holds (a new key, a consistent directory), but the
	 * lie does not follow from the chain: refused even unpinned. */
	expect_first_failure(f, NULL, "recompute:report.json", 0,
	    "disagrees with the evidence");
	assert_false(f->res.pinned);
	assert_non_null(strstr(f->res.checks[f->res.first_bad].text,
	    "report.json verdict: contained; evidence: breached, "
	    "evidence.jsonl line 6"));
	snprintf(p, sizeof p, "%s/ares.pub", f->keys);
	expect_first_failure(f, p, "signature", 0, "key id mismatch");
}

/* Validly signed, but the trusted comment tells another story (a signer
 * bug, or a signature made for a different report). */
static void
test_trusted_comment_disagrees(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct sign_secret *sk = sign_secret_load(f->keys, &e);
	char p[200], tc[300];

	assert_non_null(sk);
	snprintf(p, sizeof p, "%s/report.json", f->run);
	snprintf(tc, sizeof tc, "ares-report-v1 run=" RUN_ID
	    " evidence.jsonl=8:%s", f->r.evidence_head);
	assert_int_equal(sign_file(sk, p, tc, &e), 0);
	sign_secret_free(sk);
	expect_first_failure(f, NULL, "trusted-comment", 0,
	    "does not match report.json");
	assert_true(check_named(f, "signature")->ok);
}

/* report.json names key A; a signature by key B with B's ares.pub. */
static void
test_key_id_disagrees(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct sign_secret *sk = sign_secret_load(f->keys2, &e);
	char p[200], tc[300], q[200];

	assert_non_null(sk);
	snprintf(p, sizeof p, "%s/report.json", f->run);
	snprintf(tc, sizeof tc, "ares-report-v1 run=" RUN_ID
	    " evidence.jsonl=%d:%s", NLINES, f->r.evidence_head);
	assert_int_equal(sign_file(sk, p, tc, &e), 0);
	snprintf(q, sizeof q, "%s/ares.pub", f->run);
	assert_int_equal(sign_pubkey_write(sk, q, &e), 0);
	sign_secret_free(sk);
	expect_first_failure(f, NULL, "key-id", 0,
	    "report.json names another key");
	assert_true(check_named(f, "signature")->ok);
	assert_true(check_named(f, "trusted-comment")->ok);
}

/* Replace the first `from` in path by `to`. */
static void
replace_in(const char *path, const char *from, const char *to)
{
	char *nb = NULL, *b, *v;
	size_t len, nl = 0;
	FILE *m;

	b = get(path, &len);
	v = strstr(b, from);
	assert_non_null(v);
	m = open_memstream(&nb, &nl);
	assert_non_null(m);
	fwrite(b, 1, (size_t)(v - b), m);
	fputs(to, m);
	fputs(v + strlen(from), m);
	assert_int_equal(fclose(m), 0);
	put(path, nb, nl);
	free(nb);
	free(b);
}

static void
test_edit_report_verdict(void **state)
{
	struct fx *f = *state;
	char p[200];

	snprintf(p, sizeof p, "%s/report.json", f->run);
	replace_in(p, "\"breached\"", "\"contained\"");
	expect_first_failure(f, NULL, "signature", 0,
	    "signature does not match the file");
	/* the report still parses, so the rest is reported too */
	assert_true(check_named(f, "report")->ok);
	assert_string_equal(f->res.verdict, "contained");
	assert_true(check_named(f, "chain:evidence.jsonl")->ok);

	/* lowering the signed breach count is caught the same way */
	replace_in(p, "\"contained\"", "\"breached\"");
	run_verify(f, NULL);
	assert_true(f->res.ok);
	replace_in(p, "\"breaches\":\t1", "\"breaches\":\t0");
	expect_first_failure(f, NULL, "signature", 0,
	    "signature does not match the file");
}

static void
test_edit_hashed_files(void **state)
{
	struct fx *f = *state;
	char p[200];

	size_t olen;
	char *orig;

	snprintf(p, sizeof p, "%s/drill.json", f->run);
	orig = get(p, &olen);
	put(p, "{\"format\":\"ares-drill-v1\",\"verdict\":\"contained\"}\n",
	    49);
	expect_first_failure(f, NULL, "file:drill.json", 0,
	    "changed since signing");

	put(p, orig, olen);
	free(orig);
	run_verify(f, NULL);
	assert_true(f->res.ok);

	snprintf(p, sizeof p, "%s/agent.log", f->run);
	assert_int_equal(unlink(p), 0);
	expect_first_failure(f, NULL, "file:agent.log", 0, "cannot read");

	snprintf(p, sizeof p, "%s/report.md", f->run);
	put(p, "# all good\n", 11);
	run_verify(f, NULL);
	assert_false(check_named(f, "file:report.md")->ok);
}

static void
test_missing_signature(void **state)
{
	struct fx *f = *state;
	char p[200];

	snprintf(p, sizeof p, "%s/report.json.minisig", f->run);
	assert_int_equal(unlink(p), 0);
	expect_first_failure(f, NULL, "signature", 0, "No such file");

	snprintf(p, sizeof p, "%s/ares.pub", f->run);
	assert_int_equal(unlink(p), 0);
	expect_first_failure(f, NULL, "signature", 0, "no usable public key");
}

/* An unsigned forged report cannot make verify read outside the run. */
static void
test_forged_report_paths(void **state)
{
	struct fx *f = *state;
	char p[200];
	static const char forged[] =
	    "{\"format\":\"ares-report-v1\",\"run_id\":\"" RUN_ID "\","
	    "\"verdict\":\"contained\",\"signing\":{\"key_id\":null},"
	    "\"chains\":[{\"name\":\"master\",\"path\":\"../other/evidence."
	    "jsonl\",\"entries\":9,\"head\":\"00000000000000000000000000000000"
	    "00000000000000000000000000000000\"}],\"files\":[]}";

	snprintf(p, sizeof p, "%s/report.json", f->run);
	put(p, forged, strlen(forged));
	expect_first_failure(f, NULL, "signature", 0, "does not match");
	assert_false(check_named(f, "report")->ok);
	assert_non_null(strstr(check_named(f, "report")->reason,
	    "outside the run directory"));
	assert_null(check_named(f, "chain:../other/evidence.jsonl"));

	put(p, "{", 1);
	run_verify(f, NULL);
	assert_non_null(strstr(check_named(f, "report")->reason,
	    "not valid JSON"));

	{
		static const char dup[] =
		    "{\"format\":\"ares-report-v1\",\"format\":\"x\"}";

		put(p, dup, strlen(dup));
	}
	run_verify(f, NULL);
	assert_non_null(strstr(check_named(f, "report")->reason,
	    "duplicate key"));
}

static void
test_unusable_input(void **state)
{
	struct fx *f = *state;
	struct report_verify_result res;
	struct errbuf e = { 0 };
	char p[200];

	assert_int_equal(report_verify_dir("/nonexistent/run", NULL, &res,
	    &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	snprintf(p, sizeof p, "%s/drill.json", f->run);
	assert_int_equal(report_verify_dir(p, NULL, &res, &e), -1);
	assert_non_null(strstr(e.msg, "not a directory"));
	snprintf(p, sizeof p, "%s/nope.pub", f->dir);
	assert_int_equal(report_verify_dir(f->run, p, &res, &e), -1);
	assert_non_null(strstr(e.msg, "--pub"));
	snprintf(p, sizeof p, "%s/drill.json", f->run);   /* not a key */
	assert_int_equal(report_verify_dir(f->run, p, &res, &e), -1);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_pristine),
		T(test_pristine_stock_minisign),
		T(test_edit_field),
		T(test_delete_line),
		T(test_swap_lines),
		T(test_truncate_last_line),
		T(test_truncate_mid_line),
		T(test_append_forged_line),
		T(test_splice_line_from_other_run),
		T(test_whole_chain_of_other_run),
		T(test_flip_signature_byte),
		T(test_wrong_key),
		T(test_resigned_with_other_key),
		T(test_trusted_comment_disagrees),
		T(test_key_id_disagrees),
		T(test_edit_report_verdict),
		T(test_edit_hashed_files),
		T(test_missing_signature),
		T(test_forged_report_paths),
		T(test_unusable_input),
	};
#undef T

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
