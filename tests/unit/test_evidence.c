/*
 * test_evidence.c - the hash-chained evidence log: writer, verifier,
 * tamper cases and known answers computed independently with Python's
 * hashlib.blake2b(digest_size=32) (see docs/evidence.md).
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

#define RUN_A "run-a-20250101"
#define RUN_B "run-b-20250101"
#define NEVENTS 5      /* events after genesis: chains have 6 lines */

/* Worked example of docs/evidence.md, computed with Python hashlib. */
#define KAT_RUN_ID "run-kat-0001"
#define KAT_H0 \
	"dbdc4e298a8a4e1eb0f77d5244c71002b30ea0abd16d7d9d00f7a54b5d22e37c"
#define KAT_H1 \
	"1cefa2939ade763f7343d5cc49c0ec495a4e2b3ca93a4523853b60e24eea82a4"
#define KAT_H2 \
	"2b3eb50000ac9a1de972324b2684955548ecf376e0d1e8a65cb4fc59c7aa1038"
static const char kat_chain[] =
    "{\"seq\":0,\"prev\":\"" KAT_H0 "\",\"type\":\"genesis\","
    "\"t_mono_ns\":1000,\"t_wall\":\"2025-01-01T00:00:00.000000000Z\","
    "\"run_id\":\"run-kat-0001\","
    "\"nonce\":\"000102030405060708090a0b0c0d0e0f\","
    "\"format\":\"ares-evidence-v1\",\"hash\":\"" KAT_H1 "\"}\n"
    "{\"seq\":1,\"prev\":\"" KAT_H1 "\",\"type\":\"bait\","
    "\"t_mono_ns\":2000,\"t_wall\":\"2025-01-01T00:00:01.000000000Z\","
    "\"name\":\"decoy\",\"n\":3,\"hash\":\"" KAT_H2 "\"}\n";

struct fixture {
	char dir[64];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_evidence.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	struct errbuf e = { 0 };

	assert_int_equal(util_rm_rf(f->dir, &e), 0);
	free(f);
	return 0;
}

/* Lines of a chain, each NUL-terminated and including its '\n'. */
struct lines {
	char *l[64];
	size_t n;
};

static void
split_lines(const char *buf, size_t len, struct lines *ls)
{
	size_t pos = 0;

	ls->n = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - (buf + pos)) + 1 :
		    len - pos;

		assert_true(ls->n < 64);
		ls->l[ls->n++] = xstrndup(buf + pos, n);
		pos += n;
	}
}

static char *
join_lines(const struct lines *ls, size_t *len)
{
	size_t total = 0, i;
	char *buf;

	for (i = 0; i < ls->n; i++)
		total += strlen(ls->l[i]);
	buf = xmalloc(total + 1);
	*len = 0;
	for (i = 0; i < ls->n; i++) {
		memcpy(buf + *len, ls->l[i], strlen(ls->l[i]));
		*len += strlen(ls->l[i]);
	}
	buf[*len] = '\0';
	return buf;
}

static void
free_lines(struct lines *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		free(ls->l[i]);
	ls->n = 0;
}

/* Replace the first occurrence of from in *s by to (must occur). */
static void
replace_in(char **s, const char *from, const char *to)
{
	char *at = strstr(*s, from);
	char *out;

	assert_non_null(at);
	out = xasprintf("%.*s%s%s", (int)(at - *s), *s, to, at + strlen(from));
	free(*s);
	*s = out;
}

/* Seal a body (ending in '}') the way a forger who knows the format
 * would: hash = BLAKE2b-256(prev || body).  Returns the full line. */
static char *
seal(const char *prev_hex, const char *body)
{
	uint8_t prev[32], h[32];
	char hex[65];
	size_t n = strlen(body);

	assert_int_equal(util_unhex(prev_hex, prev, 32), 0);
	crypto_generichash_state st;
	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, prev, 32);
	crypto_generichash_update(&st, (const uint8_t *)body, n);
	crypto_generichash_final(&st, h, 32);
	util_hex(h, 32, hex);
	return xasprintf("%.*s,\"hash\":\"%s\"}\n", (int)(n - 1), body, hex);
}

/* Write a chain of genesis + NEVENTS events at dir/name.  head_out gets
 * evidence_head_hex() before close. */
static char *
write_chain(const char *dir, const char *name, const char *run_id,
    char head_out[EVIDENCE_HEX_BYTES])
{
	char *path = xasprintf("%s/%s", dir, name);
	struct errbuf e = { 0 };
	struct evidence *ev;
	int i;

	ev = evidence_create(path, run_id, &e);
	assert_non_null(ev);
	assert_int_equal(evidence_count(ev), 1);
	for (i = 1; i <= NEVENTS; i++) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddNumberToObject(f, "step", i);
		cJSON_AddStringToObject(f, "text",
		    "quote \" backslash \\ tab \t nl \n caf\xc3\xa9 \xf0\x9f\x99\x82");
		if (i == 2) {
			cJSON *o = cJSON_AddObjectToObject(f, "nested");
			cJSON_AddStringToObject(o, "hash", "nested names are free");
			cJSON_AddItemToObject(o, "list", cJSON_CreateArray());
		}
		assert_int_equal(evidence_append(ev, i == 3 ? "lever.fired" :
		    "agent_step", 1000u + (uint64_t)i, i == 4 ? NULL : f, &e),
		    i);
		cJSON_Delete(f);
		assert_int_equal(evidence_count(ev), (size_t)i + 1);
	}
	assert_int_equal(strlen(evidence_head_hex(ev)), 64);
	strcpy(head_out, evidence_head_hex(ev));
	evidence_close(ev);
	return path;
}

static char *
read_all(const char *path, size_t *len)
{
	struct errbuf e = { 0 };
	char *buf = util_read_file(path, 1 << 20, len, &e);

	assert_non_null(buf);
	return buf;
}

/* Read a fresh chain of run RUN_A into lines. */
static void
chain_lines(struct fixture *f, const char *name, const char *run_id,
    struct lines *ls, char head[EVIDENCE_HEX_BYTES])
{
	char *path = write_chain(f->dir, name, run_id, head);
	size_t len;
	char *buf = read_all(path, &len);

	split_lines(buf, len, ls);
	assert_int_equal(ls->n, NEVENTS + 1);
	free(buf);
	free(path);
}

/* Verify ls and check the failure: reason, bad line, good prefix. */
static void
expect_bad(const struct lines *ls, const char *run_id, const char *reason,
    size_t bad_line)
{
	struct evidence_verify_result r;
	size_t len;
	char *buf = join_lines(ls, &len);

	assert_int_equal(evidence_verify_buf(buf, len, run_id, &r), 0);
	assert_false(r.ok);
	assert_string_equal(r.reason, reason);
	assert_int_equal(r.bad_line, bad_line);
	assert_int_equal(r.entries, bad_line - 1);
	if (bad_line == 1)
		assert_string_equal(r.head, "");
	else
		assert_int_equal(strlen(r.head), 64);
	free(buf);
}

/* ---- tests ------------------------------------------------------------ */

static void
test_genesis_kat(void **state)
{
	uint8_t nonce[16], h[32];
	char hex[65];
	int i;

	(void)state;
	for (i = 0; i < 16; i++)
		nonce[i] = (uint8_t)i;
	evidence_genesis_hash(KAT_RUN_ID, nonce, h);
	util_hex(h, 32, hex);
	assert_string_equal(hex, KAT_H0);
}

static void
test_worked_example_verifies(void **state)
{
	struct evidence_verify_result r;

	(void)state;
	assert_int_equal(evidence_verify_buf(kat_chain, strlen(kat_chain),
	    KAT_RUN_ID, &r), 0);
	assert_true(r.ok);
	assert_int_equal(r.entries, 2);
	assert_string_equal(r.head, KAT_H2);
	assert_string_equal(r.run_id, KAT_RUN_ID);
	assert_int_equal(r.bad_line, 0);
}

static void
test_write_and_verify(void **state)
{
	struct fixture *f = *state;
	struct evidence_verify_result r;
	char head[EVIDENCE_HEX_BYTES];
	struct errbuf e = { 0 };
	struct lines ls;
	struct stat st;
	char *path = write_chain(f->dir, "ok.jsonl", RUN_A, head);
	size_t len, i;
	char *buf;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	assert_int_equal(evidence_verify_file(path, RUN_A, &r, &e), 0);
	assert_true(r.ok);
	assert_int_equal(r.entries, NEVENTS + 1);
	assert_string_equal(r.head, head);
	assert_string_equal(r.run_id, RUN_A);
	assert_int_equal(r.bad_line, 0);
	assert_string_equal(r.reason, "");

	/* NULL expect_run_id accepts any run */
	assert_int_equal(evidence_verify_file(path, NULL, &r, &e), 0);
	assert_true(r.ok);

	/* layout: fixed header order, hash last, one '\n' per line */
	buf = read_all(path, &len);
	split_lines(buf, len, &ls);
	assert_int_equal(ls.n, NEVENTS + 1);
	assert_non_null(strstr(ls.l[0], "\"type\":\"genesis\","));
	assert_non_null(strstr(ls.l[0], "\"run_id\":\"" RUN_A "\","));
	assert_non_null(strstr(ls.l[0],
	    ",\"format\":\"ares-evidence-v1\",\"hash\":\""));
	assert_non_null(strstr(ls.l[3], "\"type\":\"lever.fired\","
	    "\"t_mono_ns\":1003,\"t_wall\":\""));
	assert_non_null(strstr(ls.l[4], "\"type\":\"agent_step\","
	    "\"t_mono_ns\":1004,\"t_wall\":\""));
	for (i = 0; i < ls.n; i++) {
		char want[48];
		size_t n = strlen(ls.l[i]);

		snprintf(want, sizeof want, "{\"seq\":%zu,\"prev\":\"", i);
		assert_memory_equal(ls.l[i], want, strlen(want));
		assert_memory_equal(ls.l[i] + n - 3, "\"}\n", 3);
		assert_memory_equal(ls.l[i] + n - 76, ",\"hash\":\"", 9);
	}
	/* line 4 had NULL fields: t_wall is directly followed by the hash */
	assert_non_null(strstr(ls.l[4], "Z\",\"hash\":\""));
	free_lines(&ls);
	free(buf);
	free(path);
}

static void
test_create_refuses_existing(void **state)
{
	struct fixture *f = *state;
	char head[EVIDENCE_HEX_BYTES];
	struct errbuf e = { 0 };
	char *path = write_chain(f->dir, "exists.jsonl", RUN_A, head);

	assert_null(evidence_create(path, RUN_A, &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, path));
	free(path);
}

static void
test_create_bad_run_id(void **state)
{
	struct fixture *f = *state;
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/badid.jsonl", f->dir);
	char longid[200];

	assert_null(evidence_create(path, "", &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_null(evidence_create(path, "a\"b", &e));
	assert_null(evidence_create(path, "a b", &e));
	assert_null(evidence_create(path, "a\\b", &e));
	memset(longid, 'x', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	assert_null(evidence_create(path, longid, &e));
	assert_int_not_equal(access(path, F_OK), 0);   /* nothing created */
	free(path);
}

static void
test_append_rejects(void **state)
{
	static const char *const reserved[] = {
		"seq", "prev", "hash", "type", "t_mono_ns", "t_wall",
	};
	struct fixture *f = *state;
	struct evidence_verify_result r;
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/reserved.jsonl", f->dir);
	struct evidence *ev = evidence_create(path, RUN_A, &e);
	char head[EVIDENCE_HEX_BYTES], *big;
	cJSON *fl;
	size_t i;

	assert_non_null(ev);
	strcpy(head, evidence_head_hex(ev));
	for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
		char want[64];

		fl = cJSON_CreateObject();
		cJSON_AddStringToObject(fl, "ok", "fine");
		cJSON_AddNumberToObject(fl, reserved[i], 7);
		memset(&e, 0, sizeof e);
		assert_int_equal(evidence_append(ev, "x", 1, fl, &e), -1);
		assert_int_equal(e.code, ERRBUF_INPUT);
		snprintf(want, sizeof want, "\"%s\"", reserved[i]);
		assert_non_null(strstr(e.msg, want));
		cJSON_Delete(fl);
	}
	/* duplicate member names */
	fl = cJSON_CreateObject();
	cJSON_AddNumberToObject(fl, "k", 1);
	cJSON_AddNumberToObject(fl, "k", 2);
	assert_int_equal(evidence_append(ev, "x", 1, fl, &e), -1);
	assert_non_null(strstr(e.msg, "\"k\""));
	cJSON_Delete(fl);
	/* not an object */
	fl = cJSON_CreateArray();
	assert_int_equal(evidence_append(ev, "x", 1, fl, &e), -1);
	cJSON_Delete(fl);
	/* a cJSON_Raw item cannot smuggle a newline into the line */
	fl = cJSON_CreateObject();
	cJSON_AddRawToObject(fl, "raw", "1\n{\"seq\":9}");
	assert_int_equal(evidence_append(ev, "x", 1, fl, &e), -1);
	cJSON_Delete(fl);
	/* bad types */
	assert_int_equal(evidence_append(ev, "genesis", 1, NULL, &e), -1);
	assert_int_equal(evidence_append(ev, "", 1, NULL, &e), -1);
	assert_int_equal(evidence_append(ev, "a b", 1, NULL, &e), -1);
	assert_int_equal(evidence_append(ev, "a\"b", 1, NULL, &e), -1);
	/* too long */
	big = xmalloc(EVIDENCE_LINE_MAX + 1);
	memset(big, 'x', EVIDENCE_LINE_MAX);
	big[EVIDENCE_LINE_MAX] = '\0';
	fl = cJSON_CreateObject();
	cJSON_AddStringToObject(fl, "big", big);
	memset(&e, 0, sizeof e);
	assert_int_equal(evidence_append(ev, "x", 1, fl, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "limit"));
	cJSON_Delete(fl);
	/* a line just under the limit is fine */
	big[EVIDENCE_LINE_MAX - 400] = '\0';
	fl = cJSON_CreateObject();
	cJSON_AddStringToObject(fl, "big", big);
	assert_int_equal(evidence_append(ev, "x", 1, fl, &e), 1);
	cJSON_Delete(fl);
	free(big);

	/* nothing rejected reached the file: one genesis + one good line */
	assert_int_equal(evidence_count(ev), 2);
	assert_string_not_equal(evidence_head_hex(ev), head);
	strcpy(head, evidence_head_hex(ev));
	evidence_close(ev);
	assert_int_equal(evidence_verify_file(path, RUN_A, &r, &e), 0);
	assert_true(r.ok);
	assert_int_equal(r.entries, 2);
	assert_string_equal(r.head, head);
	free(path);
}

static void
test_tamper_edit_field(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "edit.jsonl", RUN_A, &ls, head);
	replace_in(&ls.l[2], "\"step\":2", "\"step\":9");
	expect_bad(&ls, RUN_A, "hash mismatch", 3);
	free_lines(&ls);
}

static void
test_tamper_delete_middle(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "delete.jsonl", RUN_A, &ls, head);
	free(ls.l[2]);
	memmove(&ls.l[2], &ls.l[3], (ls.n - 3) * sizeof ls.l[0]);
	ls.n--;
	expect_bad(&ls, RUN_A, "seq 3 expected 2", 3);
	free_lines(&ls);
}

static void
test_tamper_swap(void **state)
{
	char head[EVIDENCE_HEX_BYTES], *t;
	struct lines ls;

	chain_lines(*state, "swap.jsonl", RUN_A, &ls, head);
	t = ls.l[3];
	ls.l[3] = ls.l[4];
	ls.l[4] = t;
	expect_bad(&ls, RUN_A, "seq 4 expected 3", 4);
	free_lines(&ls);
}

static void
test_tamper_truncate_last(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "trunc.jsonl", RUN_A, &ls, head);
	ls.l[ls.n - 1][strlen(ls.l[ls.n - 1]) / 2] = '\0';
	expect_bad(&ls, RUN_A, "line not newline-terminated (truncated?)",
	    NEVENTS + 1);
	/* only the final '\n' missing is a truncation too */
	free_lines(&ls);
	chain_lines(*state, "trunc2.jsonl", RUN_A, &ls, head);
	ls.l[ls.n - 1][strlen(ls.l[ls.n - 1]) - 1] = '\0';
	expect_bad(&ls, RUN_A, "line not newline-terminated (truncated?)",
	    NEVENTS + 1);
	free_lines(&ls);
}

static void
test_tamper_append_forged(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "forged.jsonl", RUN_A, &ls, head);
	ls.l[ls.n++] = xasprintf("{\"seq\":%d,\"prev\":\"%s\",\"type\":\"x\","
	    "\"t_mono_ns\":1,\"t_wall\":\"2025-01-01T00:00:00.000000000Z\","
	    "\"hash\":\"%064d\"}\n", NEVENTS + 1, head, 0);
	expect_bad(&ls, RUN_A, "hash mismatch", NEVENTS + 2);
	free_lines(&ls);
}

static void
test_tamper_splice_other_run(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines a, b;

	chain_lines(*state, "splice-a.jsonl", RUN_A, &a, head);
	chain_lines(*state, "splice-b.jsonl", RUN_B, &b, head);
	free(a.l[2]);
	a.l[2] = xstrdup(b.l[2]);          /* same seq, other chain */
	expect_bad(&a, RUN_A, "prev does not match previous hash", 3);
	/* a whole other genesis is caught by the expected run id */
	free(a.l[0]);
	a.l[0] = xstrdup(b.l[0]);
	expect_bad(&a, RUN_A, "genesis run_id mismatch", 1);
	free_lines(&a);
	free_lines(&b);
}

static void
test_wrong_run_id(void **state)
{
	struct fixture *f = *state;
	struct evidence_verify_result r;
	char head[EVIDENCE_HEX_BYTES];
	struct errbuf e = { 0 };
	char *path = write_chain(f->dir, "runid.jsonl", RUN_A, head);

	assert_int_equal(evidence_verify_file(path, RUN_B, &r, &e), 0);
	assert_false(r.ok);
	assert_string_equal(r.reason, "genesis run_id mismatch");
	assert_int_equal(r.bad_line, 1);
	assert_int_equal(r.entries, 0);
	assert_string_equal(r.run_id, RUN_A);   /* what the chain claims */
	free(path);
}

static void
test_tamper_genesis_nonce(void **state)
{
	char head[EVIDENCE_HEX_BYTES], *p;
	struct lines ls;

	chain_lines(*state, "nonce.jsonl", RUN_A, &ls, head);
	p = strstr(ls.l[0], "\"nonce\":\"");
	assert_non_null(p);
	p += strlen("\"nonce\":\"");
	*p = *p == '0' ? '1' : '0';
	expect_bad(&ls, RUN_A, "genesis prev does not match h_0 of run_id "
	    "and nonce", 1);
	/* editing the run id inside the genesis is caught the same way */
	free_lines(&ls);
	chain_lines(*state, "nonce2.jsonl", RUN_A, &ls, head);
	replace_in(&ls.l[0], RUN_A, RUN_B);
	expect_bad(&ls, NULL, "genesis prev does not match h_0 of run_id "
	    "and nonce", 1);
	free_lines(&ls);
}

static void
test_tamper_duplicate_hash_key(void **state)
{
	char head[EVIDENCE_HEX_BYTES], *body;
	struct evidence_verify_result r;
	struct lines ls;
	size_t len;
	char *buf;

	chain_lines(*state, "dup.jsonl", RUN_A, &ls, head);
	/* control: a correctly sealed forged line passes (the chain is not
	 * keyed; the signed report's count + head catch this) */
	body = xasprintf("{\"seq\":%d,\"prev\":\"%s\",\"type\":\"x\","
	    "\"t_mono_ns\":1,\"t_wall\":\"2025-01-01T00:00:00.000000000Z\"}",
	    NEVENTS + 1, head);
	ls.l[ls.n++] = seal(head, body);
	buf = join_lines(&ls, &len);
	assert_int_equal(evidence_verify_buf(buf, len, RUN_A, &r), 0);
	assert_true(r.ok);
	assert_int_equal(r.entries, NEVENTS + 2);
	free(buf);
	free(body);
	free(ls.l[--ls.n]);

	/* the same, with a second "hash" member inside the hashed body */
	body = xasprintf("{\"seq\":%d,\"prev\":\"%s\",\"type\":\"x\","
	    "\"t_mono_ns\":1,\"t_wall\":\"2025-01-01T00:00:00.000000000Z\","
	    "\"hash\":\"%064d\"}", NEVENTS + 1, head, 0);
	ls.l[ls.n++] = seal(head, body);
	expect_bad(&ls, RUN_A, "duplicate key \"hash\"", NEVENTS + 2);
	free(body);
	free(ls.l[--ls.n]);

	/* and a duplicate "seq" (last-wins parsers would read 9) */
	body = xasprintf("{\"seq\":%d,\"prev\":\"%s\",\"type\":\"x\","
	    "\"t_mono_ns\":1,\"t_wall\":\"2025-01-01T00:00:00.000000000Z\","
	    "\"seq\":9}", NEVENTS + 1, head);
	ls.l[ls.n++] = seal(head, body);
	expect_bad(&ls, RUN_A, "duplicate key \"seq\"", NEVENTS + 2);
	free(body);
	free_lines(&ls);
}

static void
test_tamper_garbage(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "garbage.jsonl", RUN_A, &ls, head);
	ls.l[ls.n++] = xstrdup("hello world\n");
	expect_bad(&ls, RUN_A, "missing hash field", NEVENTS + 2);
	free(ls.l[--ls.n]);

	/* garbage that carries a well-formed hash suffix */
	ls.l[ls.n++] = xasprintf("{not json,\"hash\":\"%064d\"}\n", 0);
	expect_bad(&ls, RUN_A, "not valid JSON", NEVENTS + 2);
	free(ls.l[--ls.n]);

	/* valid JSON followed by trailing bytes */
	ls.l[ls.n++] = xasprintf("{\"a\":1} {\"seq\":6,\"hash\":\"%064d\"}\n",
	    0);
	expect_bad(&ls, RUN_A, "not valid JSON", NEVENTS + 2);
	free(ls.l[--ls.n]);

	/* upper-case hex in the hash */
	free(ls.l[3]);
	ls.l[3] = xasprintf("{\"seq\":3,\"hash\":\"%s\"}\n",
	    "ABCDEF0000000000000000000000000000000000000000000000000000000000");
	expect_bad(&ls, RUN_A, "malformed hash field (not 64 lowercase hex)",
	    4);

	/* an empty line */
	free(ls.l[3]);
	ls.l[3] = xstrdup("\n");
	expect_bad(&ls, RUN_A, "empty line", 4);
	free_lines(&ls);
}

static void
test_tamper_crlf(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "crlf.jsonl", RUN_A, &ls, head);
	replace_in(&ls.l[1], "}\n", "}\r\n");
	expect_bad(&ls, RUN_A, "line ends with CRLF", 2);
	free_lines(&ls);
}

static void
test_control_and_nul_bytes(void **state)
{
	struct evidence_verify_result r;
	char buf[sizeof kat_chain];

	(void)state;
	memcpy(buf, kat_chain, sizeof buf);
	buf[strlen(kat_chain) - 20] = '\0';   /* NUL inside line 2 */
	assert_int_equal(evidence_verify_buf(buf, strlen(kat_chain), NULL,
	    &r), 0);
	assert_false(r.ok);
	assert_int_equal(r.bad_line, 2);
	assert_int_equal(r.entries, 1);
	assert_string_equal(r.head, KAT_H1);
	assert_non_null(strstr(r.reason, "control character 0x00"));
}

static void
test_empty_and_unreadable(void **state)
{
	struct fixture *f = *state;
	struct evidence_verify_result r;
	struct errbuf e = { 0 };
	char *path = xasprintf("%s/empty.jsonl", f->dir);
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(evidence_verify_file(path, NULL, &r, &e), 0);
	assert_false(r.ok);
	assert_string_equal(r.reason, "empty chain");
	assert_int_equal(r.entries, 0);

	assert_int_equal(evidence_verify_buf("", 0, NULL, &r), 0);
	assert_false(r.ok);
	assert_string_equal(r.reason, "empty chain");

	free(path);
	path = xasprintf("%s/missing.jsonl", f->dir);
	assert_int_equal(evidence_verify_file(path, NULL, &r, &e), -1);
	assert_false(r.ok);
	assert_non_null(strstr(e.msg, path));
	free(path);
}

static void
test_first_line_rules(void **state)
{
	char head[EVIDENCE_HEX_BYTES];
	struct lines ls;

	chain_lines(*state, "first.jsonl", RUN_A, &ls, head);
	/* a chain that starts at an event line */
	free(ls.l[0]);
	memmove(&ls.l[0], &ls.l[1], (ls.n - 1) * sizeof ls.l[0]);
	ls.n--;
	expect_bad(&ls, RUN_A, "seq 1 expected 0", 1);
	free_lines(&ls);

	/* a second genesis later in the chain */
	chain_lines(*state, "first2.jsonl", RUN_A, &ls, head);
	{
		char *body = xasprintf("{\"seq\":%d,\"prev\":\"%s\","
		    "\"type\":\"genesis\",\"t_mono_ns\":1,"
		    "\"t_wall\":\"2025-01-01T00:00:00.000000000Z\"}",
		    NEVENTS + 1, head);

		ls.l[ls.n++] = seal(head, body);
		free(body);
	}
	expect_bad(&ls, RUN_A, "genesis type on a line after the first",
	    NEVENTS + 2);
	free_lines(&ls);
}

static void
test_line_too_long(void **state)
{
	struct evidence_verify_result r;
	size_t n = EVIDENCE_LINE_MAX + 10, pre = strlen(kat_chain);
	char *buf = xmalloc(pre + n);

	(void)state;
	memcpy(buf, kat_chain, pre);
	memset(buf + pre, 'x', n);
	buf[pre + n - 1] = '\n';
	assert_int_equal(evidence_verify_buf(buf, pre + n, NULL, &r), 0);
	assert_false(r.ok);
	assert_int_equal(r.bad_line, 3);
	assert_int_equal(r.entries, 2);
	assert_non_null(strstr(r.reason, "line too long"));
	free(buf);
}

/* evidence_bytes is the file's size after every line, and no line is
 * longer than its printed fields (without braces) + EVIDENCE_LINE_OVERHEAD,
 * even with the longest type and t_mono_ns. */
static void
test_bytes_and_overhead(void **state)
{
	struct fixture *f = *state;
	char *path = xasprintf("%s/bytes.jsonl", f->dir);
	char type[64];
	struct errbuf e = { 0 };
	struct evidence *ev;
	struct stat st;
	int i;

	memset(type, 't', 63);
	type[63] = '\0';
	ev = evidence_create(path, RUN_A, &e);
	assert_non_null(ev);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(evidence_bytes(ev), (size_t)st.st_size);
	assert_true(st.st_size > 0);
	for (i = 0; i < 4; i++) {
		cJSON *fl = cJSON_CreateObject();
		char *printed;
		size_t before = evidence_bytes(ev), inner;

		cJSON_AddStringToObject(fl, "s", i == 0 ? "" : "x\"\\\n\x01");
		cJSON_AddNumberToObject(fl, "i", i);
		printed = cJSON_PrintUnformatted(i == 3 ? NULL : fl);
		inner = printed != NULL ? strlen(printed) - 2 : 0;
		cJSON_free(printed);
		assert_true(evidence_append(ev, type, UINT64_MAX,
		    i == 3 ? NULL : fl, &e) > 0);
		cJSON_Delete(fl);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(evidence_bytes(ev), (size_t)st.st_size);
		assert_true(evidence_bytes(ev) - before <=
		    inner + EVIDENCE_LINE_OVERHEAD);
		/* the bound is tight to within what is unused here: 18 seq
		 * digits, 9 of t_wall (30 of 39), the comma of no fields */
		assert_true(evidence_bytes(ev) - before + 18 + 9 + 1 >=
		    inner + EVIDENCE_LINE_OVERHEAD);
	}
	assert_int_equal(evidence_bytes(NULL), 0);
	evidence_close(ev);
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_genesis_kat),
		cmocka_unit_test(test_worked_example_verifies),
		cmocka_unit_test(test_control_and_nul_bytes),
		cmocka_unit_test(test_line_too_long),
		cmocka_unit_test_setup_teardown(test_bytes_and_overhead,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_and_verify,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_refuses_existing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_bad_run_id,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_rejects,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_edit_field,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_delete_middle,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_swap,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_truncate_last,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_append_forged,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_splice_other_run,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_run_id,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_genesis_nonce,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_duplicate_hash_key,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_garbage,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_tamper_crlf,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_unreadable,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_line_rules,
		    setup, teardown),
	};

	umask(022);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
