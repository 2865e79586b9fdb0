/*
 * test_policy.c - policy.c: parsing, defaults, and every rejection with its
 * exact "file:line:col: key.path: problem" message; agent.script resolved
 * and checked against files in a scratch directory under /tmp.
 *
 * ARES_SRCDIR (default ".") locates the shipped policies/default.yaml.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "internal.h"

/* The three required keys, on lines 1-3, so additions start on line 4. */
#define BASE "name: t\nbait: [tickets-admin-token]\nlevers: [gateway-deny]\n"

/* Parse text (len bytes) as "t.yaml"; it must fail with exactly want. */
static void
expect_error_len(const char *text, size_t len, const char *want)
{
	struct errbuf e = { 0 };
	struct policy *p = policy_parse(text, len, "t.yaml", &e);

	if (p != NULL)
		fail_msg("parsed but expected: %s", want);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, want);
}

static void
expect_error(const char *text, const char *want)
{
	expect_error_len(text, strlen(text), want);
}

/* Parse text that must be accepted. */
static struct policy *
must_parse(const char *text)
{
	struct errbuf e = { 0 };
	struct policy *p = policy_parse(text, strlen(text), "t.yaml", &e);

	if (p == NULL)
		fail_msg("unexpected error: %s", e.msg);
	return p;
}

/* A growable string for generated documents. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void
sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL,
		    b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if (b->s != NULL && b->len + (size_t)n < b->cap)
			break;
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	b->len += (size_t)n;
}

static void
test_full_file(void **state)
{
	(void)state;
	struct policy *p = must_parse(
	    "# a complete policy\n"
	    "name: egress-open\n"
	    "description: \"Egress left open.\\nSecond line.\"\n"
	    "seed: 9223372036854775807\n"
	    "limits:\n"
	    "  steps: 1000\n"
	    "  seconds: 1\n"
	    "observe_ms: 0\n"
	    "variant: billing-east\n"
	    "bait: [ledger-service-key, ledger-payout-accounts]\n"
	    "levers:\n"
	    "  - gateway-deny\n"
	    "  - net-disconnect\n"
	    "  - pause\n"
	    "  - kill\n"
	    "  - external:/usr/local/lib/edr/isolate-host\n"
	    "flaws: [egress-network, docker-socket]\n"
	    "model:\n"
	    "  url: http://127.0.0.1:8080/v1\n"
	    "  key_env: ARES_MODEL_KEY_2\n"
	    "  name: qwen2.5:7b-instruct\n");

	assert_string_equal(p->path, "t.yaml");
	assert_string_equal(p->name, "egress-open");
	assert_string_equal(p->description, "Egress left open.\nSecond line.");
	assert_true(p->seed == UINT64_C(9223372036854775807));
	assert_int_equal(p->max_steps, 1000);
	assert_int_equal(p->max_seconds, 1);
	assert_int_equal(p->observe_ms, 0);
	assert_string_equal(p->variant, "billing-east");
	assert_int_equal(p->nbait, 2);
	assert_string_equal(p->bait[0], "ledger-service-key");
	assert_string_equal(p->bait[1], "ledger-payout-accounts");
	assert_true(policy_has_bait(p, "ledger-service-key"));
	assert_false(policy_has_bait(p, "tickets-admin-token"));
	assert_false(policy_has_bait(NULL, "x"));
	assert_int_equal(p->nlevers, 5);
	assert_string_equal(p->levers[0], "gateway-deny");
	assert_string_equal(p->levers[1], "net-disconnect");
	assert_string_equal(p->levers[2], "pause");
	assert_string_equal(p->levers[3], "kill");
	assert_string_equal(p->levers[4],
	    "external:/usr/local/lib/edr/isolate-host");
	assert_int_equal(p->nflaws, 2);
	assert_string_equal(p->flaws[0], "egress-network");
	assert_string_equal(p->flaws[1], "docker-socket");
	assert_true(policy_has_flaw(p, "docker-socket"));
	assert_true(policy_has_flaw(p, "egress-network"));
	assert_false(policy_has_flaw(p, "docker"));
	assert_false(policy_has_flaw(p, NULL));
	assert_non_null(p->model_url);
	assert_string_equal(p->model_url, "http://127.0.0.1:8080/v1");
	assert_string_equal(p->model_name, "qwen2.5:7b-instruct");
	assert_string_equal(p->model_key_env, "ARES_MODEL_KEY_2");
	policy_free(p);
}

static void
test_defaults(void **state)
{
	(void)state;
	struct policy *p = must_parse(BASE);

	assert_string_equal(p->name, "t");
	assert_string_equal(p->description, "");
	assert_true(p->seed == 1);
	assert_int_equal(p->max_steps, 24);
	assert_int_equal(p->max_seconds, 90);
	assert_int_equal(p->observe_ms, 1500);
	assert_string_equal(p->variant, "default");
	assert_int_equal(p->nflaws, 0);
	assert_false(policy_has_flaw(p, "egress-network"));
	assert_null(p->model_url);
	assert_string_equal(p->model_name, "ares-offline-1");
	policy_free(p);

	/* Partial sub-mappings keep the other defaults; null model and
	 * null url mean "the offline model". */
	p = must_parse(BASE "limits: {seconds: 5}\nmodel: ~\n");
	assert_int_equal(p->max_steps, 24);
	assert_int_equal(p->max_seconds, 5);
	assert_null(p->model_url);
	assert_string_equal(p->model_name, "ares-offline-1");
	policy_free(p);
	p = must_parse(BASE "model:\n  url:\n");
	assert_null(p->model_url);
	policy_free(p);

	/* A UTF-8 byte order mark is accepted. */
	p = must_parse("\xEF\xBB\xBF" BASE);
	assert_string_equal(p->name, "t");
	policy_free(p);

	policy_free(NULL);
	assert_false(policy_has_flaw(NULL, "x"));
}

static void
test_shipped_default(void **state)
{
	(void)state;
	const char *src = getenv("ARES_SRCDIR");
	char path[4096];
	struct errbuf e = { 0 };
	struct policy *p;

	snprintf(path, sizeof path, "%s/policies/default.yaml",
	    src && *src ? src : ".");
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	assert_string_equal(p->path, path);
	assert_string_equal(p->name, "default");
	assert_true(p->seed == 7);
	assert_int_equal(p->max_steps, 24);
	assert_int_equal(p->max_seconds, 90);
	assert_int_equal(p->observe_ms, 1500);
	assert_string_equal(p->variant, "default");
	assert_int_equal(p->nbait, 1);
	assert_string_equal(p->bait[0], "tickets-admin-token");
	assert_int_equal(p->nlevers, 2);
	assert_string_equal(p->levers[0], "gateway-deny");
	assert_string_equal(p->levers[1], "net-disconnect");
	assert_int_equal(p->nflaws, 0);
	assert_null(p->model_url);
	assert_string_equal(p->model_name, "ares-offline-1");
	assert_true(strlen(p->description) > 0);
	policy_free(p);
}

static void
test_unknown_keys(void **state)
{
	(void)state;
	expect_error(BASE "colour: red\n",
	    "t.yaml:4:1: colour: unknown key; allowed here: name, "
	    "description, seed, limits, observe_ms, variant, bait, levers, "
	    "flaws, model, agent, runtime, imported, variant_seed");
	expect_error(BASE "limits:\n  steps: 3\n  minutes: 2\n",
	    "t.yaml:6:3: limits.minutes: unknown key; allowed here: steps, "
	    "seconds");
	expect_error(BASE "model: {name: m, key: sk-1}\n",
	    "t.yaml:4:18: model.key: unknown key; allowed here: url, "
	    "key_env, name, ca_file, connect_timeout_ms, timeout_s, retries, "
	    "context_budget");
	/* Untrusted key text is made terminal-safe in the message. */
	expect_error(BASE "\"\\e[31mred\": 1\n",
	    "t.yaml:4:1: red: unknown key; allowed here: name, "
	    "description, seed, limits, observe_ms, variant, bait, levers, "
	    "flaws, model, agent, runtime, imported, variant_seed");
}

static void
test_wrong_types(void **state)
{
	(void)state;
	expect_error("name: t\nbait: [b1]\nlevers: gateway-deny\n",
	    "t.yaml:3:9: levers: expected a sequence, got a scalar");
	expect_error(BASE "limits: 5\n",
	    "t.yaml:4:9: limits: expected a mapping, got a scalar");
	expect_error(BASE "seed: [1]\n",
	    "t.yaml:4:7: seed: expected an integer, got a sequence");
	expect_error(BASE "description:\n",
	    "t.yaml:4:13: description: expected a string, got null");
	expect_error("name: t\nbait: [b1]\nlevers: [[kill]]\n",
	    "t.yaml:3:10: levers[0]: expected an id, got a sequence");
	expect_error("name: t\nbait: [~]\nlevers: [kill]\n",
	    "t.yaml:2:8: bait[0]: expected an id, got null");
	expect_error("- a\n- b\n",
	    "t.yaml:1:1: (document): expected a mapping, got a sequence");
	expect_error("just text\n",
	    "t.yaml:1:1: (document): expected a mapping, got a scalar");
	/* Integers are plain scalars: quoted or tagged strings are not. */
	expect_error(BASE "seed: \"5\"\n",
	    "t.yaml:4:7: seed: expected an integer, got a quoted or tagged "
	    "string");
	expect_error(BASE "seed: !!str 5\n",
	    "t.yaml:4:7: seed: expected an integer, got a quoted or tagged "
	    "string");
}

static void
test_missing_required(void **state)
{
	(void)state;
	expect_error("name: t\nbait: [b1]\n",
	    "t.yaml:1:1: levers: required key is missing");
	expect_error("# c\nlevers: [kill]\nname: t\n",
	    "t.yaml:2:1: bait: required key is missing");
	expect_error("bait: [b]\nlevers: [kill]\n",
	    "t.yaml:1:1: name: required key is missing");
}

static void
test_integers(void **state)
{
	(void)state;
	struct policy *p;

	expect_error(BASE "limits:\n  steps: 1001\n",
	    "t.yaml:5:10: limits.steps: 1001 is out of range (allowed "
	    "1..1000)");
	expect_error(BASE "limits:\n  steps: 0\n",
	    "t.yaml:5:10: limits.steps: 0 is out of range (allowed 1..1000)");
	expect_error(BASE "limits:\n  steps: 12abc\n",
	    "t.yaml:5:10: limits.steps: expected an integer, got \"12abc\"");
	expect_error(BASE "seed: -1\n",
	    "t.yaml:4:7: seed: -1 is out of range (allowed "
	    "0..9223372036854775807)");
	expect_error(BASE "limits: {steps: 99999999999999999999}\n",
	    "t.yaml:4:17: limits.steps: 99999999999999999999 is out of range "
	    "(allowed 1..1000)");
	expect_error(BASE "seed: 99999999999999999999\n",
	    "t.yaml:4:7: seed: 99999999999999999999 is out of range (allowed "
	    "0..9223372036854775807)");
	expect_error(BASE "seed: 9223372036854775808\n",
	    "t.yaml:4:7: seed: 9223372036854775808 is out of range (allowed "
	    "0..9223372036854775807)");
	/* No octal, hex, sign, float, underscore or whitespace surprises. */
	expect_error(BASE "observe_ms: 0100\n",
	    "t.yaml:4:13: observe_ms: leading zeros are not allowed in "
	    "\"0100\"");
	expect_error(BASE "seed: 0x10\n",
	    "t.yaml:4:7: seed: expected an integer, got \"0x10\"");
	expect_error(BASE "seed: +5\n",
	    "t.yaml:4:7: seed: expected an integer, got \"+5\"");
	expect_error(BASE "seed: 1.5\n",
	    "t.yaml:4:7: seed: expected an integer, got \"1.5\"");
	expect_error(BASE "seed: 1_000\n",
	    "t.yaml:4:7: seed: expected an integer, got \"1_000\"");
	expect_error(BASE "seed: -x\n",
	    "t.yaml:4:7: seed: expected an integer, got \"-x\"");
	expect_error(BASE "seed: \"-\"\n",
	    "t.yaml:4:7: seed: expected an integer, got a quoted or tagged "
	    "string");
	expect_error(BASE "observe_ms: 60001\n",
	    "t.yaml:4:13: observe_ms: 60001 is out of range (allowed "
	    "0..60000)");
	expect_error(BASE "limits: {seconds: 3601}\n",
	    "t.yaml:4:19: limits.seconds: 3601 is out of range (allowed "
	    "1..3600)");
	p = must_parse(BASE "seed: 0\nobserve_ms: 60000\n"
	    "limits: {steps: 1, seconds: 3600}\n");
	assert_true(p->seed == 0);
	assert_int_equal(p->observe_ms, 60000);
	assert_int_equal(p->max_steps, 1);
	assert_int_equal(p->max_seconds, 3600);
	policy_free(p);
}

static void
test_duplicates(void **state)
{
	(void)state;
	expect_error(BASE "name: u\n",
	    "t.yaml:4:1: name: duplicate key \"name\" (first at 1:1)");
	expect_error(BASE "limits: {steps: 3, steps: 4}\n",
	    "t.yaml:4:20: limits.steps: duplicate key \"steps\" (first at "
	    "4:10)");
	expect_error("name: t\nbait: [b1]\n"
	    "levers: [gateway-deny, kill, gateway-deny]\n",
	    "t.yaml:3:30: levers[2]: duplicate id \"gateway-deny\" (first at "
	    "3:10)");
	expect_error(BASE "flaws:\n  - a\n  - b\n  - a\n",
	    "t.yaml:7:5: flaws[2]: duplicate id \"a\" (first at 5:5)");
}

static void
test_ids(void **state)
{
	(void)state;
	expect_error("name: t\nbait: [b1]\nlevers: []\n",
	    "t.yaml:3:9: levers: needs at least 1 item");
	expect_error("name: t\nbait: [b1]\n"
	    "levers: [a, b, c, d, e, f, g, h, i]\n",
	    "t.yaml:3:34: levers[8]: at most 8 items are allowed");
	expect_error("name: t\nbait: [Admin_Token]\nlevers: [kill]\n",
	    "t.yaml:2:8: bait[0]: expected an id of a-z, 0-9 and '-', at "
	    "most 48 bytes; got \"Admin_Token\"");
	expect_error("name: t\nbait: [b]\n"
	    "levers: [abcdefghijklmnopqrstuvwxyz-abcde]\n",
	    "t.yaml:3:10: levers[0]: expected a lever id of a-z, 0-9 and '-' "
	    "(at most 31 bytes) or external:/absolute/path (A-Z, a-z, 0-9, "
	    "._/-, no '..'), at most 159 bytes; got "
	    "\"abcdefghijklmnopqrstuvwxyz-abcde\"");
	expect_error("name: t\nbait: [b]\n"
	    "levers: [\"external:/opt/../x\"]\n",
	    "t.yaml:3:10: levers[0]: expected a lever id of a-z, 0-9 and '-' "
	    "(at most 31 bytes) or external:/absolute/path (A-Z, a-z, 0-9, "
	    "._/-, no '..'), at most 159 bytes; got \"external:/opt/../x\"");
	expect_error("name: t\nbait: [b]\n"
	    "levers: [\"external:lever\"]\n",
	    "t.yaml:3:10: levers[0]: expected a lever id of a-z, 0-9 and '-' "
	    "(at most 31 bytes) or external:/absolute/path (A-Z, a-z, 0-9, "
	    "._/-, no '..'), at most 159 bytes; got \"external:lever\"");
	expect_error(BASE "variant: \"\"\n",
	    "t.yaml:4:10: variant: expected an id of a-z, 0-9 and '-', at "
	    "most 32 bytes; got \"\"");
	expect_error("name: my policy\nbait: [b]\nlevers: [kill]\n",
	    "t.yaml:1:7: name: expected a name of A-Z, a-z, 0-9, '.', '_' and "
	    "'-', at most 64 bytes; got \"my policy\"");
	expect_error(BASE "model: {url: ftp://host/x}\n",
	    "t.yaml:4:14: model.url: expected an http:// or https:// URL "
	    "without spaces, at most 2048 bytes; got \"ftp://host/x\"");
	expect_error(BASE "model: {url: \"http://a b\"}\n",
	    "t.yaml:4:14: model.url: expected an http:// or https:// URL "
	    "without spaces, at most 2048 bytes; got \"http://a b\"");
	expect_error(BASE "model: {name: \"a b\"}\n",
	    "t.yaml:4:15: model.name: expected a model name of A-Z, a-z, 0-9 "
	    "and ._:/@+-, at most 63 bytes; got \"a b\"");
	/* Control characters (e.g. an escape sequence) and NUL bytes. */
	expect_error(BASE "description: \"x\\e[2Jy\"\n",
	    "t.yaml:4:14: description: expected text without control "
	    "characters, at most 1024 bytes; got \"xy\"");
	expect_error(BASE "description: \"a\\0b\"\n",
	    "t.yaml:4:14: description: contains a NUL byte");
}

static void
test_aliases_and_tags(void **state)
{
	(void)state;
	struct sbuf b = { 0 };
	int i, j;

	/* Billion laughs: rejected at the first anchor, nothing expanded. */
	sb_add(&b, "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\","
	    "\"lol\",\"lol\",\"lol\"]\n");
	for (i = 1; i < 9; i++) {
		sb_add(&b, "%c: &%c [", 'a' + i, 'a' + i);
		for (j = 0; j < 9; j++)
			sb_add(&b, "%s*%c", j ? "," : "", 'a' + i - 1);
		sb_add(&b, "]\n");
	}
	expect_error(b.s, "t.yaml:1:4: a: anchors and aliases are not allowed");
	free(b.s);

	expect_error("name: *x\n",
	    "t.yaml:1:7: name: anchors and aliases are not allowed");
	expect_error(BASE "flaws: [&f a]\n",
	    "t.yaml:4:9: flaws[0]: anchors and aliases are not allowed");
	expect_error(BASE "seed: !!int 3\n",
	    "t.yaml:4:7: seed: tag \"tag:yaml.org,2002:int\" is not allowed");
	expect_error(BASE "limits: !custom {steps: 3}\n",
	    "t.yaml:4:9: limits: tag \"!custom\" is not allowed");
	expect_error("? [a]\n: b\n",
	    "t.yaml:1:3: (document): mapping keys must be scalars");
}

static void
test_bounds(void **state)
{
	(void)state;
	struct sbuf b = { 0 };
	int i;

	/* 100 levels of nesting: the 9th container is refused. */
	sb_add(&b, "a: ");
	for (i = 0; i < 100; i++)
		sb_add(&b, "[");
	for (i = 0; i < 100; i++)
		sb_add(&b, "]");
	sb_add(&b, "\n");
	expect_error(b.s, "t.yaml:1:11: a[0][0][0][0][0][0][0]: nested deeper "
	    "than 8 levels");
	free(b.s);

	/* More than 4096 nodes. */
	memset(&b, 0, sizeof b);
	sb_add(&b, BASE "flaws: [");
	for (i = 0; i < 5000; i++)
		sb_add(&b, "%sx", i ? "," : "");
	sb_add(&b, "]\n");
	/* BASE holds 9 nodes (root included), + flaws key + seq = 11; the
	 * 4097th node is item 4085, at column 9 + 2 * 4085. */
	expect_error(b.s, "t.yaml:4:8179: flaws[4085]: more than 4096 nodes");
	free(b.s);

	/* A scalar longer than 4096 bytes. */
	memset(&b, 0, sizeof b);
	sb_add(&b, BASE "description: ");
	for (i = 0; i < 4097; i++)
		sb_add(&b, "x");
	sb_add(&b, "\n");
	expect_error(b.s, "t.yaml:4:14: description: scalar longer than 4096 "
	    "bytes");
	free(b.s);

	/* A buffer over POLICY_MAX_BYTES is refused before parsing. */
	{
		size_t n = POLICY_MAX_BYTES + 1;
		char *big = malloc(n);

		assert_non_null(big);
		memset(big, '#', n);
		expect_error_len(big, n, "t.yaml: policy is 262145 bytes; the "
		    "limit is 262144");
		free(big);
	}
}

static void
test_big_file(void **state)
{
	(void)state;
	char path[] = "/tmp/ares-test-policy-XXXXXX";
	char want[256], line[100];
	struct errbuf e = { 0 };
	struct policy *p;
	FILE *f;
	int fd, i;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(BASE, f);
	memset(line, 'x', sizeof line - 1);
	line[0] = '#';
	line[sizeof line - 2] = '\n';
	line[sizeof line - 1] = '\0';
	for (i = 0; i < 3072; i++)          /* 3072 * 99 bytes: ~300 KB */
		fputs(line, f);
	assert_int_equal(fclose(f), 0);

	p = policy_load(path, &e);
	assert_null(p);
	assert_int_equal(e.code, ERRBUF_INPUT);
	snprintf(want, sizeof want, "%s: policy is %zu bytes; the limit is "
	    "262144", path, strlen(BASE) + 3072 * 99);
	assert_string_equal(e.msg, want);

	/* The same file cut down to size loads. */
	assert_int_equal(truncate(path, 100 * 1024), 0);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	assert_string_equal(p->name, "t");
	policy_free(p);
	unlink(path);

	/* Missing files and directories. */
	p = policy_load("/nonexistent/ares/policy.yaml", &e);
	assert_null(p);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, "/nonexistent/ares/policy.yaml: No such "
	    "file or directory");
	p = policy_load("/tmp", &e);
	assert_null(p);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, "/tmp: not a regular file");
}

static void
test_documents(void **state)
{
	(void)state;
	expect_error("", "t.yaml:1:1: (document): empty document: a policy is "
	    "a mapping of keys (see docs/policy.md)");
	expect_error("# only a comment\n\n", "t.yaml:1:1: (document): empty "
	    "document: a policy is a mapping of keys (see docs/policy.md)");
	expect_error("---\n", "t.yaml:2:1: (document): empty document: a "
	    "policy is a mapping of keys (see docs/policy.md)");
	expect_error(BASE "---\nname: u\n",
	    "t.yaml:4:1: (document): only one document is allowed");
	expect_error("---\n" BASE "...\n---\n",
	    "t.yaml:6:1: (document): only one document is allowed");
}

static void
test_syntax_errors(void **state)
{
	(void)state;
	expect_error(BASE "limits:\n\tsteps: 3\n",
	    "t.yaml:5:1: limits: syntax error: found character that cannot "
	    "start any token (while scanning for the next token at 5:1)");
	expect_error(BASE "limits: [1\n",
	    "t.yaml:5:1: limits[1]: syntax error: did not find expected ',' "
	    "or ']' (while parsing a flow sequence at 4:9)");
	expect_error(BASE "description: \"open\n",
	    "t.yaml:5:1: description: syntax error: found unexpected end of "
	    "stream (while scanning a quoted scalar at 4:14)");
	/* Reader errors: bad UTF-8 and raw control characters. */
	expect_error(BASE "description: caf\xff\n",
	    "t.yaml:4:17: (document): bad input: invalid leading UTF-8 octet "
	    "(byte 0xff)");
	/* col 17: the bad trailing byte after the lead byte at col 16 */
	expect_error(BASE "description: \xc3\xa9t\xc3\n",
	    "t.yaml:4:17: (document): bad input: invalid trailing UTF-8 octet "
	    "(byte 0x0a)");
	expect_error(BASE "description: a\x01\n",
	    "t.yaml:4:15: (document): bad input: control characters are not "
	    "allowed (byte 0x01)");
}

/* Ids are checked against the catalogues after the syntax: variant, flaw
 * and bait errors name the node of the offending id. */
static void
test_catalogues(void **state)
{
	struct policy *p;

	(void)state;
	expect_error(BASE "flaws: [root-user, egress-network, admin-api, "
	    "x]\n",
	    "t.yaml:4:47: flaws[3]: unknown flaw 'x' (known: egress-network, "
	    "docker-socket, host-mount, control-keys, self-modify, real-key, "
	    "open-dns, extra-caps, privileged, root-user, writable-rootfs, "
	    "admin-api, host-pid, host-ipc, seccomp-unconfined)");
	expect_error(BASE "flaws:\n  - docker\n",
	    "t.yaml:5:5: flaws[0]: unknown flaw 'docker' (known: "
	    "egress-network, docker-socket, host-mount, control-keys, "
	    "self-modify, real-key, open-dns, extra-caps, privileged, "
	    "root-user, writable-rootfs, admin-api, host-pid, host-ipc, "
	    "seccomp-unconfined)");
	expect_error(BASE "variant: acme-2\n",
	    "t.yaml:4:10: variant: unknown variant 'acme-2' (known: default, "
	    "billing-east, wiki-north; or generated, or a FILE.yaml)");
	/* Bait ids belong to the variant, wherever the variant key is. */
	expect_error("name: t\nbait: [tickets-admin-token, ssh-kee]\n"
	    "levers: [kill]\n",
	    "t.yaml:2:29: bait[1]: unknown bait 'ssh-kee' for variant "
	    "'default' (known: tickets-admin-token, tickets-audit-hook, "
	    "tickets-recovery-codes, tickets-cloud-keys, tickets-bastion-key, "
	    "tickets-deploy-token, tickets-export-tool; kinds: credential, "
	    "instruction, tripwire, "
	    "cloud-credentials, ssh-key, git-credential, mcp-server)");
	expect_error("name: t\nbait: [tickets-admin-token]\nlevers: [kill]\n"
	    "variant: wiki-north\n",
	    "t.yaml:2:8: bait[0]: unknown bait 'tickets-admin-token' for "
	    "variant 'wiki-north' (known: wikibot-password, wiki-bot-verify, "
	    "wikibot-2fa-seed, wiki-cloud-keys, wiki-build-key, "
	    "wiki-site-token, wiki-publish-tool; kinds: credential, "
	    "instruction, tripwire, "
	    "cloud-credentials, ssh-key, git-credential, mcp-server)");
	/* A syntax error is reported before a catalogue error. */
	expect_error("name: t\nbait: [nope]\nlevers: [kill]\nseed: x\n",
	    "t.yaml:4:7: seed: expected an integer, got \"x\"");
	/* The variant's message is bounded and terminal-safe. */
	expect_error(BASE "variant: abc-def\n",
	    "t.yaml:4:10: variant: unknown variant 'abc-def' (known: default, "
	    "billing-east, wiki-north; or generated, or a FILE.yaml)");
	/* Every flaw and every bait kind of every variant is accepted. */
	p = must_parse("name: t\nvariant: wiki-north\nlevers: [kill]\n"
	    "bait: [wikibot-password, wiki-bot-verify, wikibot-2fa-seed]\n"
	    "flaws: [egress-network, docker-socket, host-mount, control-keys, "
	    "self-modify, real-key, open-dns, extra-caps, privileged, "
	    "root-user, writable-rootfs, admin-api]\n");
	assert_int_equal(p->nflaws, 12);
	assert_int_equal(p->nbait, 3);
	assert_null(p->model_key_env);
	policy_free(p);
}

/* model.key_env: an environment variable name, or null. */
static void
test_model_key_env(void **state)
{
	struct policy *p;

	(void)state;
	p = must_parse(BASE "model: {key_env: ~}\n");
	assert_null(p->model_key_env);
	policy_free(p);
	p = must_parse(BASE "model: {key_env: _K9}\n");
	assert_string_equal(p->model_key_env, "_K9");
	policy_free(p);
	expect_error(BASE "model: {key_env: openai_key}\n",
	    "t.yaml:4:18: model.key_env: expected an environment variable "
	    "name of A-Z, 0-9 and '_' (not starting with a digit), at most "
	    "128 bytes; got \"openai_key\"");
	/* never a token ares holds for another service: it goes to url */
	expect_error(BASE "model: {key_env: GITHUB_TOKEN}\n",
	    "t.yaml:4:18: model.key_env: expected a variable other than the "
	    "ones ares reads for another service (GITHUB_TOKEN, GH_TOKEN, "
	    "SLACK_BOT_TOKEN, ARES_SLACK_WEBHOOK, ACTIONS_*, ...: the key is "
	    "sent to model.url), at most 128 bytes; got \"GITHUB_TOKEN\"");
	expect_error(BASE "model: {key_env: SLACK_BOT_TOKEN}\n",
	    "t.yaml:4:18: model.key_env: expected a variable other than the "
	    "ones ares reads for another service (GITHUB_TOKEN, GH_TOKEN, "
	    "SLACK_BOT_TOKEN, ARES_SLACK_WEBHOOK, ACTIONS_*, ...: the key is "
	    "sent to model.url), at most 128 bytes; got \"SLACK_BOT_TOKEN\"");
	expect_error(BASE "model: {key_env: 9KEY}\n",
	    "t.yaml:4:18: model.key_env: expected an environment variable "
	    "name of A-Z, 0-9 and '_' (not starting with a digit), at most "
	    "128 bytes; got \"9KEY\"");
	expect_error(BASE "model: {key_env: \"A=B\"}\n",
	    "t.yaml:4:18: model.key_env: expected an environment variable "
	    "name of A-Z, 0-9 and '_' (not starting with a digit), at most "
	    "128 bytes; got \"A=B\"");
}

/* model.ca_file, connect_timeout_ms, timeout_s, retries, context_budget:
 * defaults, bounds, errors at file:line:col. */
static void
test_model_call_keys(void **state)
{
	struct policy *p;

	(void)state;
	p = must_parse(BASE "model: {url: \"http://127.0.0.1:1/v1\"}\n");
	assert_null(p->model_ca_file);
	assert_int_equal(p->model_connect_timeout_ms, 5000);
	assert_int_equal(p->model_timeout_s, 120);
	assert_int_equal(p->model_retries, 3);
	assert_int_equal(p->model_context_budget, 262144);
	policy_free(p);
	p = must_parse(BASE "model:\n  ca_file: /etc/ssl/x.pem\n"
	    "  connect_timeout_ms: 100\n  timeout_s: 600\n  retries: 0\n"
	    "  context_budget: 4096\n");
	assert_string_equal(p->model_ca_file, "/etc/ssl/x.pem");
	assert_int_equal(p->model_connect_timeout_ms, 100);
	assert_int_equal(p->model_timeout_s, 600);
	assert_int_equal(p->model_retries, 0);
	assert_int_equal(p->model_context_budget, 4096);
	policy_free(p);
	p = must_parse(BASE "model: {ca_file: ~}\n");
	assert_null(p->model_ca_file);
	policy_free(p);
	expect_error(BASE "model: {timeout_s: 0}\n",
	    "t.yaml:4:20: model.timeout_s: 0 is out of range (allowed "
	    "1..600)");
	expect_error(BASE "model: {retries: 11}\n",
	    "t.yaml:4:18: model.retries: 11 is out of range (allowed 0..10)");
	expect_error(BASE "model:\n  connect_timeout_ms: 99\n",
	    "t.yaml:5:23: model.connect_timeout_ms: 99 is out of range "
	    "(allowed 100..60000)");
	expect_error(BASE "model:\n  context_budget: 2000000\n",
	    "t.yaml:5:19: model.context_budget: 2000000 is out of range "
	    "(allowed 4096..1048576)");
	expect_error(BASE "model: {retries: many}\n",
	    "t.yaml:4:18: model.retries: expected an integer, got \"many\"");
	expect_error(BASE "model: {ca_file: \"a\\tb\"}\n",
	    "t.yaml:4:18: model.ca_file: expected a file path without "
	    "control characters, at most 4096 bytes; got \"a b\"");
}

/* Every shipped policy parses: default, hardened, leaky, flaw-<id>. */

/* agent kind image: the keys as bound, defaults, {task} kept as written. */
static void
test_agent_image(void **state)
{
	struct policy *p;

	(void)state;
	p = must_parse(BASE "agent: {image: my/agent:1}\n");
	assert_int_equal(p->agent_kind, POLICY_AGENT_IMAGE);
	assert_string_equal(p->agent_image, "my/agent:1");
	assert_int_equal(p->agent_ncommand, 0);
	assert_int_equal(p->agent_nenv, 0);
	assert_null(p->agent_user);
	assert_null(p->agent_workdir);
	assert_string_equal(p->agent_home, "/home/poyo");
	assert_null(p->agent_script);
	policy_free(p);
	p = must_parse(BASE "agent:\n  kind: image\n"
	    "  image: registry.local:5000/team/agent_x__y-z:v1.2@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
	    "  command: [python3, -m, agent, --task, \"do: {task}\"]\n"
	    "  env: {MODEL: gpt-4o, RETRIES: 3, EMPTY: \"\"}\n"
	    "  user: \"1000:1000\"\n  workdir: /\n  home: /home/agent\n");
	assert_int_equal(p->agent_kind, POLICY_AGENT_IMAGE);
	assert_int_equal(p->agent_ncommand, 5);
	assert_string_equal(p->agent_command[0], "python3");
	assert_string_equal(p->agent_command[4], "do: {task}");
	assert_int_equal(p->agent_nenv, 3);
	assert_string_equal(p->agent_env[0], "MODEL=gpt-4o");
	assert_string_equal(p->agent_env[1], "RETRIES=3");
	assert_string_equal(p->agent_env[2], "EMPTY=");
	assert_string_equal(p->agent_user, "1000:1000");
	assert_string_equal(p->agent_workdir, "/");
	assert_string_equal(p->agent_home, "/home/agent");
	policy_free(p);
	/* an image id, a bare uid */
	p = must_parse(BASE "agent: {image: \"sha256:0123456789abcdef0123456789"
	    "abcdef0123456789abcdef0123456789abcdef\", user: \"4242\"}\n");
	/* a bare uid is uid:uid: the engine would take the gid from the
	 * image's /etc/passwd, 0 when the uid is not there, and the
	 * supplementary groups from its /etc/group */
	assert_string_equal(p->agent_user, "4242:4242");
	policy_free(p);
	p = must_parse(BASE "agent: {image: a, user: 1000}\n");
	assert_string_equal(p->agent_user, "1000:1000");
	policy_free(p);
	p = must_parse(BASE "agent: {image: a, user: \"2147483647\"}\n");
	assert_string_equal(p->agent_user, "2147483647:2147483647");
	policy_free(p);
	p = must_parse(BASE "agent: {image: a, user: \"1000:2000\"}\n");
	assert_string_equal(p->agent_user, "1000:2000");
	policy_free(p);
	/* homes that nest with no mount of the lab */
	p = must_parse(BASE "agent: {image: a, home: /optx}\n");
	assert_string_equal(p->agent_home, "/optx");
	policy_free(p);
	p = must_parse(BASE "agent: {image: a, home: /var/lib/agent}\n");
	assert_string_equal(p->agent_home, "/var/lib/agent");
	policy_free(p);
	p = must_parse(BASE "agent: {image: a, home: /hostx/a}\n");
	assert_string_equal(p->agent_home, "/hostx/a");
	policy_free(p);
}

/* agent kind image: every error names file:line:col and the key. */
static void
test_agent_image_errors(void **state)
{
	(void)state;
	/* kinds and keys must agree */
	expect_error(BASE "agent: {kind: image}\n",
	    "t.yaml:4:8: agent.image: required key is missing (kind image "
	    "runs a local image)");
	expect_error(BASE "agent: {kind: poyo, image: a}\n",
	    "t.yaml:4:28: agent.image: only kind image runs an image (kind is "
	    "poyo)");
	expect_error(BASE "agent: {kind: script, image: a}\n",
	    "t.yaml:4:30: agent.image: only kind image runs an image (kind is "
	    "script)");
	expect_error(BASE "agent: {home: /home/a}\n",
	    "t.yaml:4:15: agent.home: only kind image takes this key (kind is "
	    "poyo)");
	expect_error(BASE "agent: {kind: script, command: [a]}\n",
	    "t.yaml:4:32: agent.command: only kind image takes this key (kind "
	    "is script)");
	/* image references: never a pull, but the syntax is Docker's */
	expect_error(BASE "agent: {image: My/Agent}\n",
	    "t.yaml:4:16: agent.image: \"My/Agent\": a repository name is "
	    "lowercase: components of a-z, 0-9 joined by '.', '_', '__' or "
	    "'-', separated by '/'");
	expect_error(BASE "agent: {image: \"a:\"}\n",
	    "t.yaml:4:16: agent.image: \"a:\": a tag is 1 to 128 of A-Z, a-z, "
	    "0-9, '_', '.', '-' (not starting with '.' or '-')");
	expect_error(BASE "agent: {image: \"a@sha256:12\"}\n",
	    "t.yaml:4:16: agent.image: \"a@sha256:12\": a digest is @sha256: "
	    "and 64 lowercase hex digits");
	expect_error(BASE "agent: {image: \"a//b\"}\n",
	    "t.yaml:4:16: agent.image: \"a//b\": a repository name is "
	    "lowercase: components of a-z, 0-9 joined by '.', '_', '__' or "
	    "'-', separated by '/'");
	expect_error(BASE "agent: {image: \"-bad.host:99999/a\"}\n",
	    "t.yaml:4:16: agent.image: \"-bad.host:99999/a\": a registry host "
	    "is letters, digits, '.' and '-' with an optional :port");
	expect_error(BASE "agent: {image: \"a b\"}\n",
	    "t.yaml:4:16: agent.image: \"a b\": a repository name is "
	    "lowercase: components of a-z, 0-9 joined by '.', '_', '__' or "
	    "'-', separated by '/'");
	expect_error(BASE "agent: {image: [a]}\n",
	    "t.yaml:4:16: agent.image: expected a string, got a sequence");
	/* command: argv, bounded */
	expect_error(BASE "agent: {image: a, command: []}\n",
	    "t.yaml:4:28: agent.command: needs at least 1 item (the program)");
	expect_error(BASE "agent: {image: a, command: [a, [b]]}\n",
	    "t.yaml:4:32: agent.command[1]: expected a string, got a "
	    "sequence");
	expect_error(BASE "agent: {image: a, command: [a, ~]}\n",
	    "t.yaml:4:32: agent.command[1]: expected a string, got null");
	expect_error(BASE "agent: {image: a, command: \"run it\"}\n",
	    "t.yaml:4:28: agent.command: expected a sequence, got a scalar");
	expect_error(BASE "agent: {image: a, command: [\"a\\tb\"]}\n",
	    "t.yaml:4:29: agent.command[0]: expected a string without "
	    "control characters, at most 4096 bytes; got \"a b\"");
	/* the bounds: 64 items, 32 variables, 64 KiB of command */
	{
		static char buf[160 * 1024];
		struct errbuf e = { 0 };
		size_t n;
		int i;

		n = (size_t)snprintf(buf, sizeof buf, "%s", BASE
		    "agent: {image: a, command: [");
		for (i = 0; i < 65; i++)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%sx",
			    i ? ", " : "");
		snprintf(buf + n, sizeof buf - n, "]}\n");
		assert_null(policy_parse(buf, strlen(buf), "t.yaml", &e));
		assert_non_null(strstr(e.msg, "agent.command[64]: at most 64 "
		    "items are allowed"));
		n = (size_t)snprintf(buf, sizeof buf, "%s", BASE
		    "agent: {image: a, env: {");
		for (i = 0; i < 33; i++)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%sV%d: x",
			    i ? ", " : "", i);
		snprintf(buf + n, sizeof buf - n, "}}\n");
		memset(&e, 0, sizeof e);
		assert_null(policy_parse(buf, strlen(buf), "t.yaml", &e));
		assert_non_null(strstr(e.msg, "agent.env: at most 32 "
		    "variables are allowed"));
		n = (size_t)snprintf(buf, sizeof buf, "%s", BASE
		    "agent: {image: a, command: [");
		for (i = 0; i < 17; i++) {
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"",
			    i ? ", " : "");
			memset(buf + n, 'y', 4000);
			n += 4000;
			buf[n++] = '"';
		}
		snprintf(buf + n, sizeof buf - n, "]}\n");
		memset(&e, 0, sizeof e);
		assert_null(policy_parse(buf, strlen(buf), "t.yaml", &e));
		assert_non_null(strstr(e.msg, "agent.command[16]: the command "
		    "is longer than 65536 bytes in all"));
	}
	/* env: names, values, the names ares sets */
	expect_error(BASE "agent: {image: a, env: {OPENAI_API_KEY: x}}\n",
	    "t.yaml:4:25: agent.env.OPENAI_API_KEY: ares sets this variable "
	    "itself (OPENAI_BASE_URL, OPENAI_API_BASE, OPENAI_API_KEY, HOME, "
	    "AGENT_TASK, AGENT_MODEL, AGENT_MAX_STEPS, AGENT_IDLE)");
	expect_error(BASE "agent: {image: a, env: {HOME: /x}}\n",
	    "t.yaml:4:25: agent.env.HOME: ares sets this variable itself "
	    "(OPENAI_BASE_URL, OPENAI_API_BASE, OPENAI_API_KEY, HOME, "
	    "AGENT_TASK, AGENT_MODEL, AGENT_MAX_STEPS, AGENT_IDLE)");
	expect_error(BASE "agent: {image: a, env: {lower: x}}\n",
	    "t.yaml:4:25: agent.env.lower: expected an environment variable "
	    "name of A-Z, 0-9 and '_' (not starting with a digit), at most "
	    "128 bytes; got \"lower\"");
	expect_error(BASE "agent: {image: a, env: {A: [x]}}\n",
	    "t.yaml:4:28: agent.env.A: expected a string, got a sequence");
	expect_error(BASE "agent: {image: a, env: {A: ~}}\n",
	    "t.yaml:4:28: agent.env.A: expected a string, got null");
	expect_error(BASE "agent: {image: a, env: [A=1]}\n",
	    "t.yaml:4:24: agent.env: expected a mapping, got a sequence");
	expect_error(BASE "agent: {image: a, env: {A: \"x\\ny\"}}\n",
	    "t.yaml:4:28: agent.env.A: expected a string without control "
	    "characters, at most 4096 bytes; got \"x y\"");
	/* user: numeric, never root */
	expect_error(BASE "agent: {image: a, user: \"0\"}\n",
	    "t.yaml:4:25: agent.user: \"0\": expected a numeric non-root uid or "
	    "uid:gid (e.g. 1000:1000): a name would be resolved by the image's "
	    "/etc/passwd, and uid or gid 0 is root (that is flaw root-user)");
	expect_error(BASE "agent: {image: a, user: \"1000:0\"}\n",
	    "t.yaml:4:25: agent.user: \"1000:0\": expected a numeric non-root "
	    "uid or uid:gid (e.g. 1000:1000): a name would be resolved by the "
	    "image's /etc/passwd, and uid or gid 0 is root (that is flaw "
	    "root-user)");
	expect_error(BASE "agent: {image: a, user: node}\n",
	    "t.yaml:4:25: agent.user: \"node\": expected a numeric non-root uid "
	    "or uid:gid (e.g. 1000:1000): a name would be resolved by the "
	    "image's /etc/passwd, and uid or gid 0 is root (that is flaw "
	    "root-user)");
	/* paths */
	expect_error(BASE "agent: {image: a, home: home/agent}\n",
	    "t.yaml:4:25: agent.home: \"home/agent\": expected an absolute path "
	    "(starting with '/')");
	expect_error(BASE "agent: {image: a, home: /}\n",
	    "t.yaml:4:25: agent.home: \"/\": must not be / itself");
	/* the home is a read-only mount: never at, below or above another
	 * mount of the agent's (the kernel's, the engine's, the lab's, a
	 * flaw's), whatever flaws this policy names (the command line and
	 * the fix loop add others) */
	{
		static const char *const bad[][2] = {
			{ "/tmp/h", "/tmp (the lab's noexec tmpfs)" },
			{ "/proc/x", "/proc (the kernel's)" },
			{ "/sys", "/sys (the kernel's)" },
			{ "/dev/shm/a", "/dev (the engine's)" },
			{ "/etc/agent", "/etc (the engine's hosts, hostname "
			  "and resolv.conf)" },
			{ "/opt", "/opt/ares (the probe helper at "
			  "/opt/ares/probe, a script agent at "
			  "/opt/ares/agent.sh)" },
			{ "/opt/ares", "/opt/ares (the probe helper at "
			  "/opt/ares/probe, a script agent at "
			  "/opt/ares/agent.sh)" },
			{ "/opt/ares/probe/h", "/opt/ares (the probe helper at "
			  "/opt/ares/probe, a script agent at "
			  "/opt/ares/agent.sh)" },
			{ "/var", "/var/run (flaw docker-socket's socket "
			  "folder)" },
			{ "/var/run", "/var/run (flaw docker-socket's socket "
			  "folder)" },
			{ "/var/run/agent", "/var/run (flaw docker-socket's "
			  "socket folder)" },
			{ "/run/agent", "/run (where /var/run leads in most "
			  "images)" },
			{ "/host", "/host (flaw host-mount's decoy host "
			  "tree)" },
			{ "/host/home/a", "/host (flaw host-mount's decoy host "
			  "tree)" },
			{ "/var/lib", "/var/lib/ares-control (flaw "
			  "control-keys' decoy keys)" },
			{ "/var/lib/ares-control/a", "/var/lib/ares-control "
			  "(flaw control-keys' decoy keys)" },
		};
		size_t i;

		for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			char y[256], m[512];

			snprintf(y, sizeof y, BASE "agent: {image: a, home: "
			    "%s}\n", bad[i][0]);
			snprintf(m, sizeof m, "t.yaml:4:25: agent.home: "
			    "\"%s\": must not be at, below or above %s: a "
			    "mount there breaks the lab", bad[i][0],
			    bad[i][1]);
			expect_error(y, m);
		}
	}
	expect_error(BASE "agent: {image: a, home: \"/a:/b\"}\n",
	    "t.yaml:4:25: agent.home: \"/a:/b\": a path here is A-Z, a-z, 0-9 "
	    "and ._@+-/ only (no ':' or ',', which Docker's mount syntax would "
	    "read)");
	expect_error(BASE "agent: {image: a, workdir: /a/../etc}\n",
	    "t.yaml:4:28: agent.workdir: \"/a/../etc\": no \".\" or \"..\" "
	    "component");
	expect_error(BASE "agent: {image: a, workdir: /a/}\n",
	    "t.yaml:4:28: agent.workdir: \"/a/\": no empty component (\"//\" or "
	    "a trailing '/')");
}

/* ---- agent: {kind, script} ----------------------------------------- */

/* A scratch directory for agent.script tests (canonical path). */
struct agent_dir {
	char root[256];
};

static void
agent_write(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int
agent_setup(void **state)
{
	struct agent_dir *d = calloc(1, sizeof *d);
	char tmpl[] = "/tmp/ares-agent-XXXXXX", *real, path[512];

	assert_non_null(d);
	assert_non_null(mkdtemp(tmpl));
	real = realpath(tmpl, NULL);
	assert_non_null(real);
	assert_true(strlen(real) < sizeof d->root);
	strcpy(d->root, real);
	free(real);
	snprintf(path, sizeof path, "%s/agents", d->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/agents/a.sh", d->root);
	agent_write(path, "#!/bin/sh\necho hi\n", 18);
	*state = d;
	return 0;
}

static int
agent_teardown(void **state)
{
	struct agent_dir *d = *state;
	char cmd[640];

	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' && rm -rf '%s'",
	    d->root, d->root);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

/* How policy.c shows a path in a message: its last 64 bytes. */
static const char *
shown(const char *path, char out[80])
{
	size_t n = strlen(path);

	strcpy(out, n > 64 ? "..." : "");
	strcat(out, n > 64 ? path + n - 64 : path);
	return out;
}

/* Parse text as if it were the file <root>/t.yaml; it must fail with
 * "<root>/t.yaml:" + want. */
static void
agent_expect(const struct agent_dir *d, const char *text, const char *want)
{
	struct errbuf e = { 0 };
	char name[512], full[4096];
	struct policy *p;

	snprintf(name, sizeof name, "%s/t.yaml", d->root);
	snprintf(full, sizeof full, "%s:%s", name, want);
	p = policy_parse(text, strlen(text), name, &e);
	if (p != NULL)
		fail_msg("parsed but expected: %s", full);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, full);
}

static struct policy *
agent_parse(const struct agent_dir *d, const char *text)
{
	struct errbuf e = { 0 };
	char name[512];
	struct policy *p;

	snprintf(name, sizeof name, "%s/t.yaml", d->root);
	p = policy_parse(text, strlen(text), name, &e);
	if (p == NULL)
		fail_msg("unexpected error: %s", e.msg);
	return p;
}

/* The default agent, said or unsaid, is Poyo: no script. */
static void
test_agent_default(void **state)
{
	struct agent_dir *d = *state;
	static const char *const poyo[] = {
		BASE, BASE "agent: ~\n", BASE "agent:\n", BASE "agent: {}\n",
		BASE "agent: {kind: poyo}\n", BASE "agent:\n  kind: poyo\n",
	};
	struct policy *p;
	size_t i;

	for (i = 0; i < sizeof poyo / sizeof poyo[0]; i++) {
		p = agent_parse(d, poyo[i]);
		assert_int_equal(p->agent_kind, POLICY_AGENT_POYO);
		assert_null(p->agent_script);
		assert_null(p->agent_script_text);
		assert_int_equal(p->agent_script_len, 0);
		assert_string_equal(p->agent_script_blake2b, "");
		policy_free(p);
	}
	assert_string_equal(policy_agent_kind_name(POLICY_AGENT_POYO), "poyo");
	assert_string_equal(policy_agent_kind_name(POLICY_AGENT_SCRIPT),
	    "script");
	assert_string_equal(policy_agent_kind_name((enum policy_agent_kind)7),
	    "?");
}

/* A script: relative to the policy's directory, or absolute; recorded as
 * the canonical absolute path with its bytes and their hash. */
static void
test_agent_script(void **state)
{
	struct agent_dir *d = *state;
	unsigned char h[32];
	char want[512], hex[65], text[1024], path[512], name[512];
	struct errbuf e = { 0 };
	struct policy *p;

	snprintf(want, sizeof want, "%s/agents/a.sh", d->root);
	crypto_generichash(h, sizeof h,
	    (const unsigned char *)"#!/bin/sh\necho hi\n", 18, NULL, 0);
	util_hex(h, sizeof h, hex);

	p = agent_parse(d, BASE "agent: {script: agents/a.sh}\n");
	assert_int_equal(p->agent_kind, POLICY_AGENT_SCRIPT);
	assert_string_equal(p->agent_script, want);
	assert_int_equal(p->agent_script_len, 18);
	assert_string_equal(p->agent_script_text, "#!/bin/sh\necho hi\n");
	assert_string_equal(p->agent_script_blake2b, hex);
	policy_free(p);

	/* kind: script said explicitly; "./" and ".." are resolved. */
	p = agent_parse(d, BASE "agent:\n  kind: script\n"
	    "  script: ./agents/../agents/./a.sh\n");
	assert_int_equal(p->agent_kind, POLICY_AGENT_SCRIPT);
	assert_string_equal(p->agent_script, want);
	policy_free(p);

	/* Absolute. */
	snprintf(text, sizeof text, BASE "agent: {script: \"%s\"}\n", want);
	p = agent_parse(d, text);
	assert_string_equal(p->agent_script, want);
	policy_free(p);

	/* Relative to the directory of the policy *file*, not the cwd: the
	 * same policy loaded from <root>/pol/p.yaml finds <root>/pol/x.sh. */
	snprintf(path, sizeof path, "%s/pol", d->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/pol/x.sh", d->root);
	agent_write(path, "sleep 1\n", 8);
	snprintf(name, sizeof name, "%s/pol/p.yaml", d->root);
	agent_write(name, BASE "agent: {script: x.sh}\n",
	    strlen(BASE "agent: {script: x.sh}\n"));
	p = policy_load(name, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	assert_string_equal(p->agent_script, path);
	assert_string_equal(p->agent_script_text, "sleep 1\n");
	policy_free(p);
	/* ... and "../agents/a.sh" from there. */
	agent_write(name, BASE "agent: {script: ../agents/a.sh}\n",
	    strlen(BASE "agent: {script: ../agents/a.sh}\n"));
	p = policy_load(name, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	assert_string_equal(p->agent_script, want);
	policy_free(p);

	/* A symlinked directory on the way is resolved: the recorded path
	 * has no link in it. */
	snprintf(path, sizeof path, "%s/link-dir", d->root);
	snprintf(text, sizeof text, "%s/agents", d->root);
	assert_int_equal(symlink(text, path), 0);
	p = agent_parse(d, BASE "agent: {script: link-dir/a.sh}\n");
	assert_string_equal(p->agent_script, want);
	policy_free(p);

	/* Exactly POLICY_AGENT_SCRIPT_MAX bytes is fine. */
	{
		char *big = malloc(POLICY_AGENT_SCRIPT_MAX);

		assert_non_null(big);
		memset(big, '#', POLICY_AGENT_SCRIPT_MAX);
		snprintf(path, sizeof path, "%s/agents/max.sh", d->root);
		agent_write(path, big, POLICY_AGENT_SCRIPT_MAX);
		free(big);
		p = agent_parse(d, BASE "agent: {script: agents/max.sh}\n");
		assert_int_equal(p->agent_script_len, POLICY_AGENT_SCRIPT_MAX);
		assert_int_equal(strlen(p->agent_script_text),
		    POLICY_AGENT_SCRIPT_MAX);
		policy_free(p);
	}
}

/* Every refusal of the script file names file:line:col: agent.script. */
static void
test_agent_script_errors(void **state)
{
	struct agent_dir *d = *state;
	char want[1024], r[80], path[512], target[512];
	char *big;

	/* Missing file (its directory exists: the resolved path is shown). */
	snprintf(path, sizeof path, "%s/agents/none.sh", d->root);
	snprintf(want, sizeof want, "4:17: agent.script: agents/none.sh "
	    "(resolved: %s): No such file or directory", shown(path, r));
	agent_expect(d, BASE "agent: {script: agents/none.sh}\n", want);
	/* Missing directory. */
	agent_expect(d, BASE "agent: {script: nodir/none.sh}\n",
	    "4:17: agent.script: nodir/none.sh: No such file or directory");
	/* A directory, named as such or not. */
	snprintf(path, sizeof path, "%s/agents", d->root);
	snprintf(want, sizeof want, "4:17: agent.script: agents (resolved: "
	    "%s): is a directory, not a script", shown(path, r));
	agent_expect(d, BASE "agent: {script: agents}\n", want);
	agent_expect(d, BASE "agent: {script: agents/}\n",
	    "4:17: agent.script: agents/: names a directory, not a script");
	agent_expect(d, BASE "agent: {script: agents/..}\n",
	    "4:17: agent.script: agents/..: names a directory, not a script");

	/* Too large (checked before reading), and empty. */
	big = malloc(POLICY_AGENT_SCRIPT_MAX + 1);
	assert_non_null(big);
	memset(big, '#', POLICY_AGENT_SCRIPT_MAX + 1);
	snprintf(path, sizeof path, "%s/agents/big.sh", d->root);
	agent_write(path, big, POLICY_AGENT_SCRIPT_MAX + 1);
	free(big);
	snprintf(want, sizeof want, "4:17: agent.script: agents/big.sh "
	    "(resolved: %s): the script is 262145 bytes; the limit is 262144",
	    shown(path, r));
	agent_expect(d, BASE "agent: {script: agents/big.sh}\n", want);
	snprintf(path, sizeof path, "%s/agents/empty.sh", d->root);
	agent_write(path, "", 0);
	snprintf(want, sizeof want, "4:17: agent.script: agents/empty.sh "
	    "(resolved: %s): the script is empty", shown(path, r));
	agent_expect(d, BASE "agent: {script: agents/empty.sh}\n", want);

	/* The script itself must not be a symlink (even to a good file). */
	snprintf(path, sizeof path, "%s/agents/link.sh", d->root);
	snprintf(target, sizeof target, "%s/agents/a.sh", d->root);
	assert_int_equal(symlink(target, path), 0);
	snprintf(want, sizeof want, "4:17: agent.script: agents/link.sh "
	    "(resolved: %s): is a symbolic link; name the file it points to",
	    shown(path, r));
	agent_expect(d, BASE "agent: {script: agents/link.sh}\n", want);

	/* Not a regular file: a FIFO (opened without blocking). */
	snprintf(path, sizeof path, "%s/agents/fifo.sh", d->root);
	assert_int_equal(mkfifo(path, 0644), 0);
	snprintf(want, sizeof want, "4:17: agent.script: agents/fifo.sh "
	    "(resolved: %s): not a regular file", shown(path, r));
	agent_expect(d, BASE "agent: {script: agents/fifo.sh}\n", want);

	/* Unreadable.  Root reads anything: as root the parse runs in a child
	 * that dropped to nobody (65534). */
	snprintf(path, sizeof path, "%s/agents/secret.sh", d->root);
	agent_write(path, "echo\n", 5);
	assert_int_equal(chmod(path, 0), 0);
	snprintf(want, sizeof want, "4:17: agent.script: agents/secret.sh "
	    "(resolved: %s): Permission denied", shown(path, r));
	if (geteuid() != 0) {
		agent_expect(d, BASE "agent: {script: agents/secret.sh}\n",
		    want);
	} else {
		char got[1024] = "", name[512], full[1536];
		const char *text = BASE "agent: {script: agents/secret.sh}\n";
		int pfd[2], status;
		ssize_t n;
		pid_t pid;

		assert_int_equal(chmod(d->root, 0755), 0);
		assert_int_equal(pipe(pfd), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct errbuf ce = { 0 };
			struct policy *cp;

			close(pfd[0]);
			if (setgid(65534) == -1 || setuid(65534) == -1)
				_exit(3);
			snprintf(name, sizeof name, "%s/t.yaml", d->root);
			cp = policy_parse(text, strlen(text), name, &ce);
			if (cp != NULL)
				_exit(4);
			if (write(pfd[1], ce.msg, strlen(ce.msg)) < 0)
				_exit(5);
			_exit(0);
		}
		close(pfd[1]);
		n = read(pfd[0], got, sizeof got - 1);
		close(pfd[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_true(n > 0);
		got[n] = '\0';
		snprintf(name, sizeof name, "%s/t.yaml", d->root);
		snprintf(full, sizeof full, "%s:%s", name, want);
		assert_string_equal(got, full);
	}

	/* ':' cannot go into a Docker bind specification. */
	snprintf(path, sizeof path, "%s/a:b", d->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/a:b/c.sh", d->root);
	agent_write(path, "echo\n", 5);
	snprintf(want, sizeof want, "4:17: agent.script: a:b/c.sh (resolved: "
	    "%s): the path contains ':', which Docker bind mounts cannot "
	    "carry", shown(path, r));
	agent_expect(d, BASE "agent: {script: \"a:b/c.sh\"}\n", want);

	/* A long path is shown by its end (the file name). */
	memset(target, 'a', 100);
	strcpy(target + 100, "/nope/missing.sh");
	snprintf(want, sizeof want, "4:17: agent.script: %s: No such file or "
	    "directory", shown(target, r));
	assert_non_null(strstr(want, "...aaaa"));
	snprintf(path, sizeof path, BASE "agent: {script: %s}\n", target);
	agent_expect(d, path, want);

	/* Syntax and catalogue errors come before the file system. */
	agent_expect(d, BASE "variant: acme\nagent: {script: none.sh}\n",
	    "4:10: variant: unknown variant 'acme' (known: default, "
	    "billing-east, wiki-north; or generated, or a FILE.yaml)");
}

/* The agent mapping itself: keys, types, kinds. */
static void
test_agent_keys(void **state)
{
	struct agent_dir *d = *state;

	agent_expect(d, BASE "agent: {imaeg: my/agent:1}\n",
	    "4:9: agent.imaeg: unknown key; allowed here: kind, script, image, "
	    "command, env, user, workdir, home");
	agent_expect(d, BASE "agent: {kind: docker}\n",
	    "4:15: agent.kind: unknown agent kind 'docker' (known: poyo, "
	    "script, image)");
	agent_expect(d, BASE "agent: {kind: Poyo}\n",
	    "4:15: agent.kind: expected an id of a-z, 0-9 and '-', at most 32 "
	    "bytes; got \"Poyo\"");
	agent_expect(d, BASE "agent: {kind: script}\n",
	    "4:8: agent.script: required key is missing (kind script runs a "
	    "script file)");
	agent_expect(d, BASE "agent: {kind: poyo, script: agents/a.sh}\n",
	    "4:29: agent.script: only kind script runs a script (kind is poyo)");
	/* Types. */
	agent_expect(d, BASE "agent: [a.sh]\n",
	    "4:8: agent: expected a mapping, got a sequence");
	agent_expect(d, BASE "agent: agents/a.sh\n",
	    "4:8: agent: expected a mapping, got a scalar");
	agent_expect(d, BASE "agent: {script: [a.sh]}\n",
	    "4:17: agent.script: expected a string, got a sequence");
	agent_expect(d, BASE "agent: {script: ~}\n",
	    "4:17: agent.script: expected a string, got null");
	agent_expect(d, BASE "agent: {kind: {a: b}}\n",
	    "4:15: agent.kind: expected a string, got a mapping");
	agent_expect(d, BASE "agent: {script: \"\"}\n",
	    "4:17: agent.script: expected a file path without control "
	    "characters, at most 1024 bytes; got \"\"");
	agent_expect(d, BASE "agent: {script: \"a\\tb.sh\"}\n",
	    "4:17: agent.script: expected a file path without control "
	    "characters, at most 1024 bytes; got \"a b.sh\"");
	agent_expect(d, BASE "agent: {script: \"a\\0b\"}\n",
	    "4:17: agent.script: contains a NUL byte");
	agent_expect(d, BASE "agent: {script: a.sh, script: b.sh}\n",
	    "4:23: agent.script: duplicate key \"script\" (first at 4:9)");
}

static void
test_shipped_policies(void **state)
{
	const char *src = getenv("ARES_SRCDIR");
	struct errbuf e = { 0 };
	struct policy *p;
	char path[4096];
	size_t i;

	(void)state;
	if (src == NULL)
		src = ".";
	snprintf(path, sizeof path, "%s/policies/hardened.yaml", src);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	assert_int_equal(p->nflaws, 0);
	policy_free(p);
	snprintf(path, sizeof path, "%s/policies/leaky.yaml", src);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s", e.msg);
	assert_int_equal(p->nflaws, flaw_count);
	for (i = 0; i < flaw_count; i++)
		assert_true(policy_has_flaw(p, flaw_table[i].id));
	policy_free(p);
	for (i = 0; i < flaw_count; i++) {
		snprintf(path, sizeof path, "%s/policies/flaw-%s.yaml", src,
		    flaw_table[i].id);
		p = policy_load(path, &e);
		if (p == NULL)
			fail_msg("%s", e.msg);
		assert_int_equal(p->nflaws, 1);
		assert_string_equal(p->flaws[0], flaw_table[i].id);
		policy_free(p);
	}
}

/* runtime: the agent's container runtime (a name; null: the engine's
 * default); whether the engine has it is lab_up's check (test_runtime,
 * tests/integration/test_runsc). */
static void
test_runtime(void **state)
{
	struct policy *p;
	char long_name[80];

	(void)state;
	p = must_parse(BASE);
	assert_null(p->runtime);
	policy_free(p);
	p = must_parse(BASE "runtime: null\n");
	assert_null(p->runtime);
	policy_free(p);
	p = must_parse(BASE "runtime: runsc\n");
	assert_string_equal(p->runtime, "runsc");
	policy_free(p);
	p = must_parse(BASE "runtime: io.containerd.runc.v2\n");
	assert_string_equal(p->runtime, "io.containerd.runc.v2");
	policy_free(p);
	expect_error(BASE "runtime: [runsc]\n",
	    "t.yaml:4:10: runtime: expected a string, got a sequence");
	expect_error(BASE "runtime: {name: runsc}\n",
	    "t.yaml:4:10: runtime: expected a string, got a mapping");
	expect_error(BASE "runtime: \"run sc\"\n",
	    "t.yaml:4:10: runtime: expected a name of A-Z, a-z, 0-9, '.', "
	    "'_' and '-', at most 64 bytes; got \"run sc\"");
	expect_error(BASE "runtime: \"\"\n",
	    "t.yaml:4:10: runtime: expected a name of A-Z, a-z, 0-9, '.', "
	    "'_' and '-', at most 64 bytes; got \"\"");
	expect_error(BASE "runtime: /usr/bin/runsc\n",
	    "t.yaml:4:10: runtime: expected a name of A-Z, a-z, 0-9, '.', "
	    "'_' and '-', at most 64 bytes; got \"/usr/bin/runsc\"");
	expect_error(BASE "runtime: runsc\nruntime: runc\n",
	    "t.yaml:5:1: runtime: duplicate key \"runtime\" (first at 4:1)");
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	{
		char *t = xasprintf(BASE "runtime: %s\n", long_name);
		struct errbuf e = { 0 };

		assert_null(policy_parse(t, strlen(t), "t.yaml", &e));
		assert_non_null(strstr(e.msg, "at most 64 bytes"));
		free(t);
	}
	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	{
		char *t = xasprintf(BASE "runtime: %s\n", long_name);

		p = must_parse(t);
		assert_string_equal(p->runtime, long_name);
		policy_free(p);
		free(t);
	}
}

/* lab_runtime_resolve: a GET /info answer and the policy's runtime. */
static void
test_runtime_resolve(void **state)
{
	static const char info_txt[] = "{\"DefaultRuntime\":\"runc\","
	    "\"Runtimes\":{\"runc\":{\"path\":\"runc\"},\"runsc\":{"
	    "\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":["
	    "\"--platform=ptrace\"]},\"bad name\":{\"path\":\"x\"}}}";
	cJSON *info = cJSON_Parse(info_txt), *bare = cJSON_Parse("{}");
	struct errbuf e = { 0 };
	char out[LAB_RUNTIME_MAX];

	(void)state;
	assert_non_null(info);
	assert_int_equal(lab_runtime_resolve(info, NULL, out, sizeof out, &e),
	    0);
	assert_string_equal(out, "runc");
	assert_int_equal(lab_runtime_resolve(info, "runsc", out, sizeof out,
	    &e), 0);
	assert_string_equal(out, "runsc");
	assert_int_equal(lab_runtime_resolve(info, "kata", out, sizeof out,
	    &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, "no runtime 'kata' (it has: runc, runsc)") == NULL ||
	    strstr(e.msg, "daemon.json") == NULL ||
	    strstr(e.msg, "\"kata\": {\"path\": \"/usr/bin/kata\"") == NULL ||
	    strstr(e.msg, "--network=host") == NULL)
		fail_msg("message: %s", e.msg);
	/* a name the engine lists but we never record is not matched */
	assert_int_equal(lab_runtime_resolve(info, "bad name", out,
	    sizeof out, &e), -1);
	/* an engine without Runtimes: default "runc", nothing to match */
	assert_int_equal(lab_runtime_resolve(bare, NULL, out, sizeof out, &e),
	    0);
	assert_string_equal(out, "runc");
	assert_int_equal(lab_runtime_resolve(bare, "runsc", out, sizeof out,
	    &e), -1);
	assert_non_null(strstr(e.msg, "(it has: none listed)"));
	cJSON_Delete(info);
	cJSON_Delete(bare);
}

/* lab_runtime_ps_parse's callback: "pid=cmd;" appended to ctx. */
static void
ps_collect(void *ctx, const char *pid, const char *cmd)
{
	char *buf = ctx;

	snprintf(buf + strlen(buf), 512 - strlen(buf), "%s=%s;", pid, cmd);
}

/* lab_runtime_ps_parse: busybox ps output from inside the sandbox. */
static void
test_runtime_ps(void **state)
{
	static const char ok[] = "@self 9\nPID   COMMAND\n    1 /bin/ares-lab "
	    "agent\n    7 sleep 1000\n    9 /bin/ps -o pid,args\n   12 sh "
	    "/tmp/.cache/ares-lab agent\n";
	struct errbuf e = { 0 };
	char got[512] = "";

	(void)state;
	assert_int_equal(lab_runtime_ps_parse(ok, strlen(ok), ps_collect, got,
	    &e), 0);
	/* the agent (pid 1) and ps itself are left out, nothing else */
	assert_string_equal(got, "7=sleep 1000;12=sh /tmp/.cache/ares-lab "
	    "agent;");
	got[0] = '\0';
	assert_int_equal(lab_runtime_ps_parse("@self 3\nPID COMMAND\n", 20,
	    ps_collect, got, &e), 0);
	assert_string_equal(got, "");
	/* fail closed on anything else */
	assert_int_equal(lab_runtime_ps_parse("PID COMMAND\n 1 x\n", 17,
	    ps_collect, got, &e), -1);
	assert_non_null(strstr(e.msg, "@self"));
	assert_int_equal(lab_runtime_ps_parse("@self 3\n", 8, ps_collect, got,
	    &e), -1);
	assert_non_null(strstr(e.msg, "PID header"));
	assert_int_equal(lab_runtime_ps_parse("@self 3\nPID COMMAND\nx y\n",
	    24, ps_collect, got, &e), -1);
	assert_non_null(strstr(e.msg, "without a pid"));
	assert_int_equal(lab_runtime_ps_parse("@self x\nPID COMMAND\n", 20,
	    ps_collect, got, &e), -1);
	assert_int_equal(lab_runtime_ps_parse("", 0, ps_collect, got, &e), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_catalogues),
		cmocka_unit_test(test_model_key_env),
		cmocka_unit_test(test_model_call_keys),
		cmocka_unit_test(test_shipped_policies),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_shipped_default),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_aliases_and_tags),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_big_file),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_runtime_resolve),
		cmocka_unit_test(test_runtime_ps),
		cmocka_unit_test_setup_teardown(test_agent_default,
		    agent_setup, agent_teardown),
		cmocka_unit_test_setup_teardown(test_agent_script,
		    agent_setup, agent_teardown),
		cmocka_unit_test_setup_teardown(test_agent_script_errors,
		    agent_setup, agent_teardown),
		cmocka_unit_test_setup_teardown(test_agent_keys,
		    agent_setup, agent_teardown),
		cmocka_unit_test(test_agent_image),
		cmocka_unit_test(test_agent_image_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
