/*
 * test_util.c - util_sanitize (untrusted text made inert for a terminal)
 * and util_hex / util_unhex.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* Sanitize a string literal (embedded NULs allowed) into a 256-byte buffer
 * and compare with want.  Also checks the return value is strlen(out). */
static void
check_san(const char *src, size_t srclen, bool keep_nl, const char *want)
{
	char out[256];
	size_t n;

	memset(out, 'Z', sizeof out);
	n = util_sanitize(out, sizeof out, src, srclen, keep_nl);
	assert_int_equal(n, strlen(out));
	assert_string_equal(out, want);
}
#define SAN(lit, keep_nl, want) check_san(lit, sizeof(lit) - 1, keep_nl, want)

/* True when s[0..n) is well-formed UTF-8 without C0/C1 controls other than
 * '\n' (an independent check of the sanitizer's output). */
static bool
inert_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t len, k;
		uint32_t cp;

		if (c < 0x80) {
			if ((c < 0x20 && c != '\n') || c == 0x7f)
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else
			return false;
		if (i + len > n)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    (cp >= 0x80 && cp <= 0x9f))
			return false;
		i += len;
	}
	return true;
}

static void
test_plain_ascii(void **state)
{
	(void)state;
	SAN("hello, world: 42 {\"json\"} ~!@#$%^&*()", false,
	    "hello, world: 42 {\"json\"} ~!@#$%^&*()");
	SAN("", false, "");
}

static void
test_csi(void **state)
{
	(void)state;
	SAN("a\x1b[31mred\x1b[0m b", false, "ared b");
	SAN("\x1b[?25l\x1b[2J\x1b[1;1HX", false, "X");
	SAN("\x1b[38;5;196mX", false, "X");
	SAN("tail\x1b[31", false, "tail");      /* unterminated: dropped */
	SAN("tail\x1b", false, "tail");         /* lone ESC at the end */
	SAN("\x1b(BX\x1b" "7Y", false, "XY");   /* two-byte escapes */
}

static void
test_osc(void **state)
{
	(void)state;
	SAN("\x1b]0;evil title\x07" "after", false, "after");
	SAN("\x1b]8;;http://example.invalid\x1b\\link\x1b]8;;\x1b\\", false,
	    "link");
	SAN("\x1b]52;c;ZXZpbA==\x07X", false, "X");  /* clipboard write */
	SAN("before\x1b]0;never ends", false, "before");
	SAN("\x1b]0;t\xc2\x9cX", false, "X");         /* 8-bit ST */
}

static void
test_dcs_and_other_strings(void **state)
{
	(void)state;
	SAN("\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\after", false, "after");
	SAN("\x1b_apc\x1b\\A\x1b^pm\x07" "B\x1bXsos\x1b\\C", false, "ABC");
}

static void
test_c1_8bit(void **state)
{
	(void)state;
	/* U+009B CSI as UTF-8 (c2 9b): the whole sequence goes */
	SAN("\xc2\x9b" "31mX", false, "X");
	SAN("a\xc2\x9b" "2J\xc2\x9b" "1;1Hb", false, "ab");
	/* U+009D OSC, U+0090 DCS, U+0085 NEL */
	SAN("\xc2\x9d" "0;title\x07X", false, "X");
	SAN("\xc2\x90q\xc2\x9cX", false, "X");
	SAN("a\xc2\x85" "b", false, "ab");
}

static void
test_c0_and_newlines(void **state)
{
	(void)state;
	SAN("a\x01" "b\x07" "c\rd\x7f" "e\x08" "f", false, "abcdef");
	SAN("a\x00" "b", false, "ab");
	/* '\n' survives only with keep_nl; otherwise it becomes a space */
	SAN("one\ntwo\n", true, "one\ntwo\n");
	SAN("one\ntwo\n", false, "one two ");
	SAN("a\tb", false, "a b");
	SAN("\r\n", true, "\n");
}

static void
test_utf8(void **state)
{
	(void)state;
	SAN("caf\xc3\xa9 \xf0\x9f\x99\x82 \xe2\x82\xac", false,
	    "caf\xc3\xa9 \xf0\x9f\x99\x82 \xe2\x82\xac");
	SAN("a\xff" "b", false, "a?b");
	SAN("\xc0\xaf", false, "??");               /* overlong '/' */
	SAN("\xed\xa0\x80", false, "???");          /* surrogate */
	SAN("\xf4\x90\x80\x80", false, "????");     /* > U+10FFFF */
	SAN("end\xe2\x82", false, "end??");         /* cut short */
	SAN("\x80" "x", false, "?x");               /* lone continuation */
}

static void
test_bounds_never_split(void **state)
{
	static const char src[] =
	    "ab\xf0\x9f\x99\x82" "c\xc3\xa9\x1b[31m\xe2\x82\xac" "d\n\xff" "e";
	char full[128], out[64];
	size_t fulln, dstlen;

	(void)state;
	fulln = util_sanitize(full, sizeof full, src, sizeof src - 1, true);
	assert_string_equal(full,
	    "ab\xf0\x9f\x99\x82" "c\xc3\xa9\xe2\x82\xac" "d\n?e");
	assert_true(inert_utf8((const unsigned char *)full, fulln));

	for (dstlen = 1; dstlen <= fulln + 2; dstlen++) {
		size_t n;

		memset(out, 'Z', sizeof out);
		n = util_sanitize(out, dstlen, src, sizeof src - 1, true);
		assert_true(n <= dstlen - 1);
		assert_int_equal(out[n], '\0');
		assert_int_equal(n, strlen(out));
		assert_int_equal(out[dstlen], 'Z');     /* nothing beyond */
		/* a prefix of the full result, cut at a character boundary */
		assert_memory_equal(out, full, n);
		assert_true(inert_utf8((const unsigned char *)out, n));
		if (n < fulln)
			assert_true(((unsigned char)full[n] & 0xc0) != 0x80);
		if (dstlen > fulln)
			assert_int_equal(n, fulln);
	}
	/* the emoji does not fit into 5 bytes after "ab": nothing of it */
	assert_int_equal(util_sanitize(out, 5, src, sizeof src - 1, true), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(util_sanitize(out, 7, src, sizeof src - 1, true), 6);

	/* dstlen 0 writes nothing */
	out[0] = 'Z';
	assert_int_equal(util_sanitize(out, 0, src, sizeof src - 1, true), 0);
	assert_int_equal(out[0], 'Z');
}

/* Characters that reorder or hide text ("Trojan source" bidi controls,
 * zero-width characters, tag characters that smuggle invisible ASCII,
 * line/paragraph separators) are shown as '?', never passed through: an
 * agent could otherwise make a line read differently from its bytes. */
static void
test_sanitize_invisible(void **state)
{
	(void)state;
	/* U+202E RIGHT-TO-LEFT OVERRIDE, U+202C POP */
	SAN("ok \xe2\x80\xaegnp.exe\xe2\x80\xac", false, "ok ?gnp.exe?");
	/* U+2066..U+2069 isolates, U+200E/U+200F marks, U+061C */
	SAN("a\xe2\x81\xa6" "b\xe2\x81\xa9" "c\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c",
	    false, "a?b?c???");
	/* zero-width space, joiner, non-joiner, word joiner, BOM */
	SAN("to\xe2\x80\x8bk\xe2\x80\x8c" "e\xe2\x80\x8dn\xe2\x81\xa0\xef\xbb\xbf",
	    false, "to?k?e?n??");
	/* U+E0041 TAG LATIN CAPITAL LETTER A, U+E007F CANCEL TAG */
	SAN("x\xf3\xa0\x81\x81\xf3\xa0\x81\xbfy", false, "x??y");
	/* U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR */
	SAN("l1\xe2\x80\xa8l2\xe2\x80\xa9", false, "l1?l2?");
	/* U+FFF9..U+FFFB interlinear annotation */
	SAN("\xef\xbf\xb9" "a\xef\xbf\xbb", false, "?a?");
	/* ordinary non-ASCII text is kept */
	SAN("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb1", false,
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb1");
}

static void
test_sanitize_output_always_inert(void **state)
{
	/* every byte pair and triple from a small alphabet of troublemakers */
	static const unsigned char alpha[] = {
		0x1b, '[', ']', 'P', '\\', 0x07, 0x9b, 0xc2, 0x9c, 0x9d, 0xe2,
		0x82, 0xac, 0xff, 'm', '0', ';', '\n', '\r', 'a', 0x00, 0x7f,
		0xf0, 0x9f,
	};
	size_t na = sizeof alpha, i, j, k;
	char out[16];

	(void)state;
	for (i = 0; i < na; i++)
		for (j = 0; j < na; j++)
			for (k = 0; k < na; k++) {
				char src[4] = { (char)alpha[i], (char)alpha[j],
				    (char)alpha[k], 'x' };
				size_t n = util_sanitize(out, sizeof out, src,
				    sizeof src, true);

				assert_true(n < sizeof out);
				assert_true(inert_utf8(
				    (const unsigned char *)out, n));
				assert_null(memchr(out, 0x1b, n));
			}
}

static void
test_hex_roundtrip(void **state)
{
	uint8_t in[256], back[256];
	char hex[2 * 256 + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof in; i++)
		in[i] = (uint8_t)i;
	util_hex(in, sizeof in, hex);
	assert_int_equal(strlen(hex), 512);
	assert_memory_equal(hex, "000102030405060708090a0b0c0d0e0f10", 34);
	assert_string_equal(hex + 500, "fafbfcfdfeff");
	assert_int_equal(util_unhex(hex, back, sizeof back), 0);
	assert_memory_equal(in, back, sizeof in);

	util_hex(in, 0, hex);
	assert_string_equal(hex, "");
	assert_int_equal(util_unhex("", back, 0), 0);

	{
		const uint8_t dead[4] = { 0xde, 0xad, 0xbe, 0xef };

		util_hex(dead, 4, hex);
		assert_string_equal(hex, "deadbeef");
	}
}

static void
test_unhex_bad_input(void **state)
{
	uint8_t out[4] = { 1, 2, 3, 4 };

	(void)state;
	assert_int_equal(util_unhex("deadbee", out, 4), -1);    /* short */
	assert_int_equal(util_unhex("deadbeef00", out, 4), -1); /* long */
	assert_int_equal(util_unhex("deadbeeg", out, 4), -1);   /* non-hex */
	assert_int_equal(util_unhex("dead beef", out, 4), -1);
	assert_int_equal(util_unhex("de-dbeef", out, 4), -1);
	assert_int_equal(util_unhex(" deadbee", out, 4), -1);
	assert_int_equal(util_unhex("0x000000", out, 4), -1);
	assert_int_equal(util_unhex(NULL, out, 4), -1);
	assert_int_equal(util_unhex("deadbeef", out, 4), 0);
	assert_int_equal(out[0], 0xde);
	assert_int_equal(out[3], 0xef);
}

/* A string sequence cut short by another ESC sequence, and C0 controls
 * inside a CSI: nothing of either sequence may show up as text. */
static void
test_sequence_edges(void **state)
{
	(void)state;
	SAN("\x1b]0;t\x1b[31mX", false, "X");
	SAN("\x1b[1;2\x01mX", false, "X");
	SAN("a\x1bPq\x1b[0mb", false, "ab");
}

/* util_read_file: a file of exactly max bytes is read, one byte more is
 * refused. */
static void
test_read_file_limits(void **state)
{
	char path[] = "/tmp/ares-test-util-XXXXXX";
	struct errbuf e = { 0 };
	size_t len = 0;
	char *buf;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	buf = util_read_file(path, 10, &len, &e);
	assert_non_null(buf);
	assert_int_equal(len, 10);
	assert_string_equal(buf, "0123456789");
	free(buf);
	assert_null(util_read_file(path, 9, &len, &e));
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "too large"));
	unlink(path);
}

/*
 * util_write_file never follows a link planted where its temp file goes:
 * with the name it used to choose ("<path>.tmp.<pid>") planted as a
 * symlink to a victim file, the victim keeps its bytes and its mode.
 */
static void
test_write_file_no_follow(void **state)
{
	char dir[] = "/tmp/ares-test-wf.XXXXXX";
	struct errbuf e = { 0 };
	char *path, *link, *victim, *got;
	struct stat sb;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/lab.json", dir);
	victim = xasprintf("%s/victim", dir);
	link = xasprintf("%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(util_write_file(victim, "secret", 6, 0600, &e), 0);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(util_write_file(path, "{}", 2, 0644, &e), 0);
	got = util_read_file(victim, 64, &len, &e);
	assert_non_null(got);
	assert_string_equal(got, "secret");
	assert_int_equal(stat(victim, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	free(got);
	got = util_read_file(path, 64, &len, &e);
	assert_string_equal(got, "{}");
	free(got);
	unlink(link);
	unlink(victim);
	unlink(path);
	rmdir(dir);
	free(path);
	free(link);
	free(victim);
}

/* util_json_dup_name: a repeated name of the object itself, or with deep
 * of any object inside it (through arrays too); unique names: NULL. */
static void
test_json_dup_name(void **state)
{
	static const struct {
		const char *json;
		const char *flat, *deep;   /* NULL: no repeat */
	} cases[] = {
		{ "{}", NULL, NULL },
		{ "{\"a\":1,\"b\":2}", NULL, NULL },
		{ "{\"a\":1,\"b\":2,\"a\":3}", "a", "a" },
		{ "{\"b\":1,\"a\":2,\"b\":3,\"a\":4}", "a", "a" },
		{ "{\"x\":{\"k\":1,\"k\":2}}", NULL, "k" },
		{ "{\"x\":[1,{\"y\":[{\"k\":1,\"k\":2}]}]}", NULL, "k" },
		{ "[{\"k\":1,\"k\":2}]", NULL, "k" },
		{ "{\"x\":[{\"k\":1},{\"k\":2}]}", NULL, NULL },
		{ "\"k\"", NULL, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *j = cJSON_Parse(cases[i].json);
		const char *f, *d;

		assert_non_null(j);
		f = util_json_dup_name(j, false);
		d = util_json_dup_name(j, true);
		if (cases[i].flat == NULL)
			assert_null(f);
		else
			assert_string_equal(f, cases[i].flat);
		if (cases[i].deep == NULL)
			assert_null(d);
		else
			assert_string_equal(d, cases[i].deep);
		cJSON_Delete(j);
	}
	assert_null(util_json_dup_name(NULL, true));
}

/* Whether pid still runs (a zombie waiting for its reaper does not). */
static bool
proc_alive(int pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/*
 * util_proc_run: stdin from input, stdout and stderr apart or together,
 * the environment given, bounds with the rest dropped, exit status, a
 * program that cannot be executed (127), and a time limit that kills the
 * whole process group (a child that outlives its parent included).
 */
static void
test_proc_run(void **state)
{
	const char *cat[] = { "/bin/cat", NULL };
	const char *both[] = { "/bin/sh", "-c", "echo out; echo err >&2; "
	    "echo \"$ONLY\"-\"$HOME\"; exit 3", NULL };
	const char *big[] = { "/bin/sh", "-c", "head -c 10000 /dev/zero", NULL };
	const char *slow[] = { "/bin/sh", "-c", "sleep 30 & echo $! ; sleep 30",
	    NULL };
	const char *env[] = { "ONLY=1", NULL };
	const char *none[] = { "/nonexistent/ares-test", NULL };
	char out[64], err[64];
	struct errbuf e = { 0 };
	struct util_proc p = { .argv = cat, .input = "in\n", .input_len = 3,
	    .out = out, .out_max = sizeof out - 1 };
	uint64_t t0;
	int pid;

	(void)state;
	assert_int_equal(util_proc_run(&p, &e), 0);
	assert_true(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0);
	assert_string_equal(out, "in\n");

	memset(&p, 0, sizeof p);
	p.argv = both;
	p.env = env;
	p.out = out;
	p.out_max = sizeof out - 1;
	p.err = err;
	p.err_max = sizeof err - 1;
	assert_int_equal(util_proc_run(&p, &e), 0);
	assert_int_equal(WEXITSTATUS(p.status), 3);
	assert_string_equal(out, "out\n1-\n");
	assert_string_equal(err, "err\n");
	p.err = NULL;
	assert_int_equal(util_proc_run(&p, &e), 0);
	assert_non_null(strstr(out, "err\n"));
	assert_non_null(strstr(out, "out\n"));

	memset(&p, 0, sizeof p);
	p.argv = big;
	p.out = out;
	p.out_max = 10;
	assert_int_equal(util_proc_run(&p, &e), 0);
	assert_true(p.out_over);
	assert_int_equal(p.out_len, 10);
	assert_int_equal(WEXITSTATUS(p.status), 0);

	memset(&p, 0, sizeof p);
	p.argv = none;
	assert_int_equal(util_proc_run(&p, &e), 0);
	assert_int_equal(p.exec_errno, ENOENT);
	assert_int_equal(WEXITSTATUS(p.status), 127);

	memset(&p, 0, sizeof p);
	p.argv = slow;
	p.own_group = true;
	p.timeout_ms = 300;
	p.out = out;
	p.out_max = sizeof out - 1;
	t0 = util_mono_ns();
	assert_int_equal(util_proc_run(&p, &e), 0);
	assert_true(p.timed_out);
	assert_true(util_mono_ns() - t0 < 3000000000ull);
	pid = atoi(out);
	assert_true(pid > 0);
	usleep(100000);
	assert_false(proc_alive(pid));   /* the grandchild died too */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_ascii),
		cmocka_unit_test(test_csi),
		cmocka_unit_test(test_osc),
		cmocka_unit_test(test_dcs_and_other_strings),
		cmocka_unit_test(test_c1_8bit),
		cmocka_unit_test(test_c0_and_newlines),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_bounds_never_split),
		cmocka_unit_test(test_sanitize_output_always_inert),
		cmocka_unit_test(test_sanitize_invisible),
		cmocka_unit_test(test_sequence_edges),
		cmocka_unit_test(test_read_file_limits),
		cmocka_unit_test(test_hex_roundtrip),
		cmocka_unit_test(test_unhex_bad_input),
		cmocka_unit_test(test_write_file_no_follow),
		cmocka_unit_test(test_json_dup_name),
		cmocka_unit_test(test_proc_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
