/*
 * test_report.c - report.json / report.md (core/report.c) from a synthetic
 * drill_result and real evidence chains: every schema field of
 * docs/report.md, the file hashes, the trusted comment, the Markdown
 * summary, unsigned reports, chains resolved from disk, and bad input.
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
#include <unistd.h>

#include <sodium.h>

#include "internal.h"

#define RUN_ID "20261129-231500-1a2b3c4d"
#define BAIT   "tickets-admin-token"

struct fx {
	char dir[64];
	char run[128], keys[128];
	struct drill_result r;
	struct report_chain chain;
	struct sign_secret *sk;
};

static void
put(const char *path, const char *buf)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, strlen(buf), f), strlen(buf));
	assert_int_equal(fclose(f), 0);
}

static char *
get(const char *dir, const char *name, size_t *len)
{
	struct errbuf e = { 0 };
	char path[256];
	char *b;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	b = util_read_file(path, 1 << 20, len, &e);
	if (b == NULL)
		fail_msg("%s", e.msg);
	return b;
}

/* Write a chain of 1 + nevents lines at run/rel; fill c. */
static void
make_chain(const char *run, const char *rel, const char *run_id, int nevents,
    struct report_chain *c)
{
	struct errbuf e = { 0 };
	char path[256];
	struct evidence *ev;
	int i;

	snprintf(path, sizeof path, "%s/%s", run, rel);
	ev = evidence_create(path, run_id, &e);
	assert_non_null(ev);
	for (i = 0; i < nevents; i++) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddNumberToObject(f, "n", i);
		cJSON_AddStringToObject(f, "what", "event");
		assert_true(evidence_append(ev, "test.event",
		    1000 + (uint64_t)i, f, &e) >= 0);
		cJSON_Delete(f);
	}
	c->entries = evidence_count(ev);
	snprintf(c->head, sizeof c->head, "%s", evidence_head_hex(ev));
	evidence_close(ev);
}

/*
 * These chains hold test events, not a drill: every integrity check
 * passes, and the recompute (docs/scoring.md) refuses a report whose
 * chains do not say what it says, which is all it may fail on.
 */
static void
integrity_only(const struct report_verify_result *res)
{
	size_t i, bad = 0;

	for (i = 0; i < res->nchecks; i++) {
		if (res->checks[i].ok)
			continue;
		if (strncmp(res->checks[i].name, "recompute", 9) != 0)
			fail_msg("%s failed: %s", res->checks[i].name,
			    res->checks[i].text);
		bad++;
	}
	assert_true(bad > 0);
	assert_false(res->ok);
}

static void
fill_result(struct drill_result *r, const char *run)
{
	memset(r, 0, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, RUN_ID);
	snprintf(r->run_dir, sizeof r->run_dir, "%s", run);
	snprintf(r->policy, sizeof r->policy, "policies/default.yaml");
	snprintf(r->model, sizeof r->model, "ares-offline-1");
	r->seed = UINT64_MAX;       /* every digit must survive */
	r->verdict = DRILL_VERDICT_CONTAINED;
	snprintf(r->verdict_reason, sizeof r->verdict_reason, "bait fired, "
	    "agent cut off 0.400 ms later, no event after the cut-off");
	r->bait_fired = true;
	snprintf(r->bait_name, sizeof r->bait_name, BAIT);
	r->start_ns = 500000000;
	r->bait_ns = 1000000000;
	r->nlevers = 3;
	snprintf(r->levers[0].name, sizeof r->levers[0].name, "gateway-deny");
	r->levers[0].fired = r->levers[0].verified = true;
	r->levers[0].fired_ns = 1000100000;
	r->levers[0].verified_ns = 1000200000;
	snprintf(r->levers[1].name, sizeof r->levers[1].name, "pause");
	r->levers[1].fired = r->levers[1].verified = true;
	r->levers[1].fired_ns = 1000300000;
	r->levers[1].verified_ns = 1000400000;
	snprintf(r->levers[2].name, sizeof r->levers[2].name, "kill");
	r->levers[2].fired = true;
	r->levers[2].fired_ns = 1000500000;
	snprintf(r->levers[2].detail, sizeof r->levers[2].detail,
	    "inspect: still running | <b>bold</b>\x1b[31m");
	r->time_to_kill_ms = 0.4;
	r->time_to_first_lever_ms = 0.2;
	r->agent_steps = 7;
	r->blocked = 2;
	snprintf(r->evidence_path, sizeof r->evidence_path,
	    "%s/evidence.jsonl", run);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	struct errbuf e = { 0 };
	char p[256];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_report.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->run, sizeof f->run, "%s/" RUN_ID, f->dir);
	snprintf(f->keys, sizeof f->keys, "%s/keys", f->dir);
	assert_int_equal(mkdir(f->run, 0755), 0);
	fill_result(&f->r, f->run);
	f->chain.name = "master";
	f->chain.path = "evidence.jsonl";
	make_chain(f->run, "evidence.jsonl", RUN_ID, 4, &f->chain);
	f->r.evidence_entries = f->chain.entries;
	memcpy(f->r.evidence_head, f->chain.head, sizeof f->r.evidence_head);
	snprintf(p, sizeof p, "%s/drill.json", f->run);
	put(p, "{\"format\":\"ares-drill-v1\",\"run_id\":\"" RUN_ID "\"}\n");
	snprintf(p, sizeof p, "%s/agent.log", f->run);
	put(p, "agent: step 1\nagent: step 2\n");
	f->sk = sign_secret_load_or_create(f->keys, NULL, &e);
	assert_non_null(f->sk);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };

	sign_secret_free(f->sk);
	assert_int_equal(util_rm_rf(f->dir, &e), 0);
	free(f);
	return 0;
}

static cJSON *
load_report(struct fx *f)
{
	size_t len;
	char *b = get(f->run, "report.json", &len);
	cJSON *j = cJSON_ParseWithLength(b, len);

	free(b);
	assert_non_null(j);
	return j;
}

static const cJSON *
item(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (v == NULL)
		fail_msg("report.json: no \"%s\"", k);
	return v;
}

static const char *
str(const cJSON *o, const char *k)
{
	const cJSON *v = item(o, k);

	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static double
num(const cJSON *o, const char *k)
{
	const cJSON *v = item(o, k);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* BLAKE2b-256 hex of run/name. */
static void
hash_of(struct fx *f, const char *name, char hex[65], size_t *len)
{
	uint8_t h[32];
	char *b = get(f->run, name, len);

	crypto_generichash(h, sizeof h, (const uint8_t *)b, *len, NULL, 0);
	util_hex(h, sizeof h, hex);
	free(b);
}

static void
test_report_fields(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	const cJSON *a, *o, *it;
	char want[1024], hex[65], tc[1100], pub[256];
	size_t len, n;
	cJSON *j;
	char *b, *kp;

	assert_int_equal(report_write(&f->r, &f->chain, 1, f->sk, &e), 0);
	j = load_report(f);
	assert_string_equal(str(j, "format"), "ares-report-v1");
	assert_string_equal(str(j, "run_id"), RUN_ID);
	assert_int_equal(strlen(str(j, "generated_at")), 30);
	assert_non_null(strstr(str(j, "generator"), "ares"));
	assert_string_equal(str(j, "policy"), "policies/default.yaml");
	assert_string_equal(str(j, "model"), "ares-offline-1");
	assert_string_equal(str(j, "seed"), "18446744073709551615");
	assert_string_equal(str(j, "verdict"), "contained");
	assert_non_null(strstr(str(j, "verdict_reason"), "cut off"));

	a = item(j, "bait");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_string_equal(str(cJSON_GetArrayItem(a, 0), "name"), BAIT);
	assert_true(num(cJSON_GetArrayItem(a, 0), "t_ns") == 1e9);

	a = item(j, "levers");
	assert_int_equal(cJSON_GetArraySize(a), 3);
	o = cJSON_GetArrayItem(a, 0);
	assert_string_equal(str(o, "name"), "gateway-deny");
	assert_true(num(o, "order") == 0);
	assert_true(cJSON_IsTrue(item(o, "fired")));
	assert_true(cJSON_IsTrue(item(o, "verified")));
	assert_true(num(o, "fired_ns") == 1000100000.0);
	assert_true(num(o, "verified_ns") == 1000200000.0);
	assert_true(num(o, "latency_ms") > 0.0999 &&
	    num(o, "latency_ms") < 0.1001);
	assert_true(num(o, "since_bait_ms") > 0.1999 &&
	    num(o, "since_bait_ms") < 0.2001);
	o = cJSON_GetArrayItem(a, 2);
	assert_string_equal(str(o, "name"), "kill");
	assert_true(cJSON_IsFalse(item(o, "verified")));
	assert_true(cJSON_IsNull(item(o, "verified_ns")));
	assert_true(cJSON_IsNull(item(o, "latency_ms")));
	assert_true(cJSON_IsNull(item(o, "since_bait_ms")));
	/* untrusted detail is sanitized: no ESC survives */
	assert_null(strchr(str(o, "detail"), '\x1b'));
	assert_non_null(strstr(str(o, "detail"), "still running"));

	assert_true(num(j, "time_to_kill_ms") == 0.4);
	assert_true(num(j, "time_to_first_lever_ms") == 0.2);
	assert_true(num(j, "agent_steps") == 7);
	assert_true(num(j, "breaches") == 0);
	assert_true(num(j, "leaks") == 0);
	assert_true(num(j, "blocked") == 2);
	assert_true(num(j, "leak_bytes") == 0);
	assert_true(cJSON_IsArray(item(j, "orphans")));
	assert_int_equal(cJSON_GetArraySize(item(j, "orphans")), 0);
	assert_true(num(j, "orphan_count") == 0);

	a = item(j, "chains");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	o = cJSON_GetArrayItem(a, 0);
	assert_string_equal(str(o, "name"), "master");
	assert_string_equal(str(o, "path"), "evidence.jsonl");
	assert_true(num(o, "entries") == 5);
	assert_string_equal(str(o, "head"), f->chain.head);

	/* files: drill.json, agent.log, report.md with their real hashes */
	a = item(j, "files");
	assert_int_equal(cJSON_GetArraySize(a), 3);
	n = 0;
	cJSON_ArrayForEach(it, a) {
		static const char *const names[] = { "drill.json", "agent.log",
		    "report.md" };

		assert_string_equal(str(it, "path"), names[n]);
		hash_of(f, names[n], hex, &len);
		assert_string_equal(str(it, "blake2b_256"), hex);
		assert_true(num(it, "bytes") == (double)len);
		n++;
	}
	o = item(j, "signing");
	assert_string_equal(str(o, "key_id"), sign_secret_keyid(f->sk));
	assert_string_equal(str(o, "signature"), "report.json.minisig");
	assert_string_equal(str(o, "public_key"), "ares.pub");
	cJSON_Delete(j);

	/* the signature, its trusted comment, the public key copy */
	snprintf(pub, sizeof pub, "%s/ares.pub", f->run);
	snprintf(want, sizeof want, "%s/report.json", f->run);
	assert_int_equal(sign_verify_file(pub, want, NULL, tc, sizeof tc, &e),
	    0);
	snprintf(want, sizeof want, "ares-report-v1 run=" RUN_ID
	    " evidence.jsonl=5:%s", f->chain.head);
	assert_string_equal(tc, want);
	b = get(f->run, "ares.pub", &len);
	kp = get(f->keys, "ares.pub", &n);
	assert_int_equal(len, n);
	assert_memory_equal(b, kp, n);
	free(b);
	free(kp);
	b = get(f->run, "report.json", &len);
	assert_true(len > 0 && b[len - 1] == '\n');
	free(b);

	/* and the whole directory verifies */
	{
		struct report_verify_result res;

		assert_int_equal(report_verify_dir(f->run, NULL, &res, &e), 0);
		integrity_only(&res);
		assert_false(res.pinned);
		assert_string_equal(res.run_id, RUN_ID);
		assert_string_equal(res.verdict, "contained");
		report_verify_free(&res);
	}
}

static void
test_report_md(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	size_t len;
	char *md, want[256];

	assert_int_equal(report_write(&f->r, &f->chain, 1, f->sk, &e), 0);
	md = get(f->run, "report.md", &len);
	assert_non_null(strstr(md, "**Verdict: CONTAINED**"));
	assert_non_null(strstr(md, "The boundary held"));
	assert_non_null(strstr(md, BAIT));
	assert_non_null(strstr(md, "| Time to kill | 0.400 ms |"));
	assert_non_null(strstr(md, "| Model | ares-offline-1 (seed "
	    "18446744073709551615) |"));
	assert_non_null(strstr(md, "## What was tested"));
	assert_non_null(strstr(md, "| 1 | gateway-deny | confirmed | 0.200 ms "
	    "| 0.100 ms |"));
	assert_non_null(strstr(md, "| 3 | kill | FAILED (not confirmed)"));
	/* untrusted text: table pipe and HTML escaped, ESC dropped */
	assert_non_null(strstr(md, "still running \\| \\<b\\>bold\\</b\\>"));
	assert_null(strchr(md, '\x1b'));
	snprintf(want, sizeof want, "| master | `evidence.jsonl` | 5 | `%s` |",
	    f->chain.head);
	assert_non_null(strstr(md, want));
	assert_non_null(strstr(md, "minisign -Vm report.json -p ares.pub"));
	assert_non_null(strstr(md, "ares verify"));
	assert_non_null(strstr(md, "--pub"));
	assert_non_null(strstr(md, sign_secret_keyid(f->sk)));
	assert_non_null(strstr(md, "| `drill.json` |"));
	free(md);
}

static void
test_report_verdict_words(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	static const struct {
		enum drill_verdict v;
		const char *words, *name;
	} cases[] = {
		{ DRILL_VERDICT_BREACHED, "did NOT hold", "breached" },
		{ DRILL_VERDICT_NOT_EXERCISED, "Nothing was proven",
		  "not-exercised" },
		{ DRILL_VERDICT_ERROR, "fails closed", "error" },
	};
	size_t i, len;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *j;
		char *md;

		f->r.verdict = cases[i].v;
		if (cases[i].v == DRILL_VERDICT_BREACHED) {
			struct drill_orphan *o = &f->r.orphans[0];

			f->r.norphans = 1;
			f->r.leaks = 2;
			f->r.leak_bytes = 123;
			snprintf(o->kind, sizeof o->kind, "process");
			snprintf(o->id, sizeof o->id, "4242");
			snprintf(o->name, sizeof o->name, "sh -c 'curl sink'");
			snprintf(o->detail, sizeof o->detail, "in the agent");
			o->removed = true;
		}
		if (cases[i].v == DRILL_VERDICT_NOT_EXERCISED) {
			f->r.bait_fired = false;
			f->r.nlevers = 0;
			f->r.time_to_kill_ms = -1;
			f->r.time_to_first_lever_ms = -1;
		}
		assert_int_equal(report_write(&f->r, &f->chain, 1, f->sk, &e),
		    0);
		md = get(f->run, "report.md", &len);
		if (cases[i].v == DRILL_VERDICT_BREACHED) {
			assert_non_null(strstr(md, "| Leaks | 2 (123 bytes) |"));
			assert_non_null(strstr(md, "| Left running after the "
			    "kill | 1 |"));
			assert_non_null(strstr(md, "| process | 4242 | sh -c "
			    "'curl sink' | in the agent | yes |"));
		}
		if (strstr(md, cases[i].words) == NULL)
			fail_msg("%s: report.md lacks \"%s\"", cases[i].name,
			    cases[i].words);
		free(md);
		j = load_report(f);
		assert_string_equal(str(j, "verdict"), cases[i].name);
		if (cases[i].v == DRILL_VERDICT_BREACHED) {
			const cJSON *o = cJSON_GetArrayItem(item(j, "orphans"),
			    0);

			assert_non_null(o);
			assert_string_equal(str(o, "kind"), "process");
			assert_string_equal(str(o, "id"), "4242");
			assert_string_equal(str(o, "name"),
			    "sh -c 'curl sink'");
			assert_true(cJSON_IsTrue(item(o, "removed")));
			assert_true(num(j, "orphan_count") == 1);
			assert_true(num(j, "leaks") == 2);
			assert_true(num(j, "leak_bytes") == 123);
			f->r.norphans = 0;
			f->r.leaks = 0;
			f->r.leak_bytes = 0;
		}
		if (cases[i].v == DRILL_VERDICT_NOT_EXERCISED) {
			assert_true(cJSON_IsNull(item(j, "time_to_kill_ms")));
			assert_int_equal(cJSON_GetArraySize(item(j, "bait")),
			    0);
			assert_int_equal(cJSON_GetArraySize(item(j, "levers")),
			    0);
		}
		cJSON_Delete(j);
	}
}

static void
test_report_unsigned(void **state)
{
	struct fx *f = *state;
	struct report_verify_result res;
	struct errbuf e = { 0 };
	char p[256];
	size_t len;
	cJSON *j;
	char *md;

	/* a stale signature from an earlier signed write is removed */
	assert_int_equal(report_write(&f->r, &f->chain, 1, f->sk, &e), 0);
	snprintf(p, sizeof p, "%s/ares.pub", f->run);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(report_write(&f->r, &f->chain, 1, NULL, &e), 0);
	snprintf(p, sizeof p, "%s/report.json.minisig", f->run);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof p, "%s/ares.pub", f->run);
	assert_int_equal(access(p, F_OK), -1);
	j = load_report(f);
	assert_true(cJSON_IsNull(item(item(j, "signing"), "key_id")));
	cJSON_Delete(j);
	md = get(f->run, "report.md", &len);
	assert_non_null(strstr(md, "not signed"));
	free(md);
	/* unsigned never verifies */
	assert_int_equal(report_verify_dir(f->run, NULL, &res, &e), 0);
	assert_false(res.ok);
	assert_string_equal(res.checks[0].name, "signature");
	assert_false(res.checks[0].ok);
	report_verify_free(&res);
}

/* Chains read from disk when the caller has no count, several chains. */
static void
test_report_chains_from_disk(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct report_chain ch[2], sensor;
	struct report_verify_result res;
	char p[256], tc[1100], want[512];
	cJSON *j;

	snprintf(p, sizeof p, "%s/sensors", f->run);
	assert_int_equal(mkdir(p, 0755), 0);
	make_chain(f->run, "sensors/gateway.jsonl", RUN_ID, 2, &sensor);
	ch[0] = f->chain;
	memset(&ch[1], 0, sizeof ch[1]);
	ch[1].name = "sensor:gateway";
	ch[1].path = "sensors/gateway.jsonl";      /* entries 0, head "" */
	assert_int_equal(report_write(&f->r, ch, 2, f->sk, &e), 0);
	j = load_report(f);
	assert_int_equal(cJSON_GetArraySize(item(j, "chains")), 2);
	assert_string_equal(str(cJSON_GetArrayItem(item(j, "chains"), 1),
	    "head"), sensor.head);
	assert_true(num(cJSON_GetArrayItem(item(j, "chains"), 1), "entries")
	    == 3);
	cJSON_Delete(j);
	snprintf(p, sizeof p, "%s/report.json", f->run);
	snprintf(want, sizeof want, "%s/ares.pub", f->run);
	assert_int_equal(sign_verify_file(want, p, NULL, tc, sizeof tc, &e),
	    0);
	snprintf(want, sizeof want, "ares-report-v1 run=" RUN_ID
	    " evidence.jsonl=5:%s sensors/gateway.jsonl=3:%s", f->chain.head,
	    sensor.head);
	assert_string_equal(tc, want);
	assert_int_equal(report_verify_dir(f->run, NULL, &res, &e), 0);
	integrity_only(&res);
	report_verify_free(&res);

	/* a chain of another run is refused when read from disk */
	snprintf(p, sizeof p, "%s/sensors/other.jsonl", f->run);
	make_chain(f->run, "sensors/other.jsonl", "another-run", 1, &sensor);
	ch[1].path = "sensors/other.jsonl";
	assert_int_equal(report_write(&f->r, ch, 2, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "does not verify"));
}

static void
test_report_bad_input(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct report_chain c[12];
	static const char *const bad_paths[] = { "../evidence.jsonl",
	    "/etc/passwd", "a//b", "sensors/../x", "./e", "e/", "e v",
	    "" };
	char paths[12][200];
	size_t i;

	for (i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
		c[0] = f->chain;
		c[0].path = bad_paths[i];
		assert_int_equal(report_write(&f->r, c, 1, f->sk, &e), -1);
		if (strstr(e.msg, "bad path") == NULL)
			fail_msg("path \"%s\": %s", bad_paths[i], e.msg);
	}
	c[0] = f->chain;
	c[0].name = "bad name";
	assert_int_equal(report_write(&f->r, c, 1, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "bad name"));

	c[0] = f->chain;
	c[1] = f->chain;
	assert_int_equal(report_write(&f->r, c, 2, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "twice"));

	c[0] = f->chain;
	c[0].head[0] = 'X';
	assert_int_equal(report_write(&f->r, c, 1, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "64-hex head"));

	assert_int_equal(report_write(&f->r, c, 0, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "no evidence chain"));

	/* too many chains for a 1024-byte trusted comment */
	for (i = 0; i < 12; i++) {
		c[i] = f->chain;
		snprintf(paths[i], sizeof paths[i],
		    "sensors/a-rather-long-sensor-name-%02zu.jsonl", i);
		c[i].path = paths[i];
		c[i].name = paths[i] + 8;
	}
	assert_int_equal(report_write(&f->r, c, 12, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "trusted comment would be"));
	/* ... but fine unsigned */
	assert_int_equal(report_write(&f->r, c, 12, NULL, &e), 0);

	snprintf(f->r.run_id, sizeof f->r.run_id, "bad run id");
	assert_int_equal(report_write(&f->r, &f->chain, 1, f->sk, &e), -1);
	assert_non_null(strstr(e.msg, "run id"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_fields, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_report_md, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_report_verdict_words,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_unsigned, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_report_chains_from_disk,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_bad_input, setup,
		    teardown),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
