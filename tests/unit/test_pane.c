/*
 * test_pane.c - the event pane's terminal-free parts (tui/pane_text.c):
 * the scroll math (following, scrolling up, a list that grows while
 * scrolled, one that shrinks under the selection), the search (case,
 * wrapping both ways, none), the OSC 52 sequence (exact bytes, what it
 * refuses), the pager's text (an evidence line read bounded, JSON
 * pretty-printed, escape sequences made inert, wrapping by columns).
 */
#include <setjmp.h>
#include <sys/stat.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <unistd.h>

#include <cmocka.h>

#include "tui.h"

static struct console_pane
pane_new(void)
{
	struct console_pane p;

	memset(&p, 0, sizeof p);
	p.follow = true;
	return p;
}

/* Following: the newest is selected, the last rows shown; k scrolls up
 * and the view stays put while the list grows; reaching the newest going
 * down follows again. */
static void
test_scroll(void **state)
{
	struct console_pane p = pane_new();

	(void)state;
	console_pane_fit(&p, 0, 41, 6);
	assert_true(p.follow);
	assert_int_equal(p.sel, 40);
	assert_int_equal(p.top, 35);
	console_pane_move(&p, -1, 0, 41);
	assert_false(p.follow);
	assert_int_equal(p.sel, 39);
	console_pane_fit(&p, 0, 41, 6);
	assert_int_equal(p.top, 35);            /* still in view */
	console_pane_move(&p, -5, 0, 41);
	console_pane_fit(&p, 0, 41, 6);
	assert_int_equal(p.sel, 34);
	assert_int_equal(p.top, 34);            /* scrolled by one */
	/* new beats do not move a scrolled view */
	console_pane_fit(&p, 0, 60, 6);
	assert_int_equal(p.sel, 34);
	assert_int_equal(p.top, 34);
	assert_false(p.follow);
	/* a page up past the start stops at the oldest */
	console_pane_move(&p, -100, 0, 60);
	console_pane_fit(&p, 0, 60, 6);
	assert_int_equal(p.sel, 0);
	assert_int_equal(p.top, 0);
	/* down to the newest follows again */
	console_pane_move(&p, 1000, 0, 60);
	assert_true(p.follow);
	console_pane_fit(&p, 0, 61, 6);
	assert_int_equal(p.sel, 60);
	assert_int_equal(p.top, 55);
	/* a short list: top stays at its start */
	p = pane_new();
	console_pane_fit(&p, 0, 3, 6);
	assert_int_equal(p.top, 0);
	assert_int_equal(p.sel, 2);
	/* an empty list */
	p = pane_new();
	console_pane_move(&p, -1, 0, 0);
	console_pane_fit(&p, 0, 0, 6);
	assert_true(p.follow);
}

/* A list that starts at base (older beats dropped) and one that shrank
 * under the selection (a replay stepped back). */
static void
test_scroll_base(void **state)
{
	struct console_pane p = pane_new();

	(void)state;
	console_pane_fit(&p, 100, 256, 10);
	assert_int_equal(p.sel, 355);
	assert_int_equal(p.top, 346);
	console_pane_move(&p, -1000, 100, 256);
	assert_int_equal(p.sel, 100);
	console_pane_fit(&p, 100, 256, 10);
	assert_int_equal(p.top, 100);
	/* the oldest beats drop out of the list: the selection stays in it */
	console_pane_fit(&p, 120, 256, 10);
	assert_int_equal(p.sel, 120);
	assert_int_equal(p.top, 120);
	/* the list shrinks below the selection: follow again */
	p = pane_new();
	console_pane_fit(&p, 0, 41, 6);
	console_pane_move(&p, -3, 0, 41);
	assert_false(p.follow);
	console_pane_fit(&p, 0, 10, 6);
	assert_true(p.follow);
	assert_int_equal(p.sel, 9);
	assert_int_equal(p.top, 4);
}

static const char *const texts[] = {
	"run x: policy flaw-docker-socket",
	"bringing the lab up",
	"step 1: shell ls",
	"POST /containers/create unix_socket /var/run/Docker.sock",
	"lever fired",
	"verdict breached",
};

static const char *
text_at(const void *ctx, size_t i)
{
	(void)ctx;
	return texts[i];
}

static void
test_search(void **state)
{
	size_t off, len;
	bool wrapped;
	long m;

	(void)state;
	assert_true(console_pane_match("a Docker b", "docker", &off, &len));
	assert_int_equal(off, 2);
	assert_int_equal(len, 6);
	assert_false(console_pane_match("a Docker b", "", &off, &len));
	assert_false(console_pane_match("dock", "docker", &off, &len));
	/* forward from the newest wraps to the first */
	m = console_pane_find("docker", 6, 5, 1, text_at, NULL, &wrapped);
	assert_int_equal(m, 0);
	assert_true(wrapped);
	m = console_pane_find("docker", 6, 0, 1, text_at, NULL, &wrapped);
	assert_int_equal(m, 3);
	assert_false(wrapped);
	m = console_pane_find("docker", 6, 3, 1, text_at, NULL, &wrapped);
	assert_int_equal(m, 0);
	assert_true(wrapped);
	/* backward */
	m = console_pane_find("docker", 6, 3, -1, text_at, NULL, &wrapped);
	assert_int_equal(m, 0);
	assert_false(wrapped);
	m = console_pane_find("docker", 6, 0, -1, text_at, NULL, &wrapped);
	assert_int_equal(m, 3);
	assert_true(wrapped);
	/* the only match is the one we are on: found again, wrapped */
	m = console_pane_find("lever", 6, 4, 1, text_at, NULL, &wrapped);
	assert_int_equal(m, 4);
	assert_true(wrapped);
	m = console_pane_find("nomatchxyz", 6, 0, 1, text_at, NULL, &wrapped);
	assert_int_equal(m, -1);
	m = console_pane_find("docker", 0, 0, 1, text_at, NULL, &wrapped);
	assert_int_equal(m, -1);
}

static void
test_osc52(void **state)
{
	char out[2048], big[CONSOLE_PANE_COPY_MAX + 2];
	int n;

	(void)state;
	n = console_pane_osc52("20261201-125921-c7cddcda", out, sizeof out);
	assert_string_equal(out,
	    "\033]52;c;MjAyNjEyMDEtMTI1OTIxLWM3Y2RkY2Rh\007");
	assert_int_equal(n, (int)strlen(out));
	/* padding */
	console_pane_osc52("a", out, sizeof out);
	assert_string_equal(out, "\033]52;c;YQ==\007");
	console_pane_osc52("ab", out, sizeof out);
	assert_string_equal(out, "\033]52;c;YWI=\007");
	/* refused: empty, control characters, non-ASCII, too long, no room */
	assert_int_equal(console_pane_osc52("", out, sizeof out), -1);
	assert_int_equal(console_pane_osc52("a\033]0;x\007", out, sizeof out),
	    -1);
	assert_int_equal(console_pane_osc52("caf\xc3\xa9", out, sizeof out),
	    -1);
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(console_pane_osc52(big, out, sizeof out), -1);
	big[CONSOLE_PANE_COPY_MAX] = '\0';
	assert_true(console_pane_osc52(big, out, sizeof out) > 0);
	assert_int_equal(console_pane_osc52("abcdef", out, 12), -1);
}

/* The pager's text: an evidence line read bounded, pretty-printed,
 * inert, wrapped. */
static void
test_pager_text(void **state)
{
	char path[] = "/tmp/test_pane.XXXXXX";
	int fd = mkstemp(path);
	struct errbuf e = { 0 };
	char *line, *pretty, **lines;
	bool cut;
	size_t n;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "{\"seq\":0,\"prev\":\"00\",\"type\":\"genesis\"}\n");
	fprintf(f, "{\"seq\":1,\"content\":\"\\u001b]0;owned\\u0007x\","
	    "\"event\":{\"kind\":\"turn\"}}\n");
	fprintf(f, "%s\n", "0123456789abcdefghij");
	fclose(f);

	line = console_pane_read_line(path, 2, 4096, &cut, &e);
	assert_non_null(line);
	assert_false(cut);
	pretty = console_pane_json_pretty(line);
	assert_non_null(strstr(pretty, "\"seq\": 1,"));
	assert_non_null(strstr(pretty, "    \"kind\": \"turn\""));
	assert_null(strchr(pretty, '\t'));
	free(line);
	free(pretty);
	/* bounded */
	line = console_pane_read_line(path, 3, 10, &cut, &e);
	assert_string_equal(line, "0123456789");
	assert_true(cut);
	free(line);
	assert_null(console_pane_read_line(path, 9, 10, &cut, &e));
	assert_null(console_pane_read_line(path, 0, 10, &cut, &e));
	/* never through a symlink, never a FIFO (it would block the UI) */
	{
		char lnk[64], fifo[64];

		snprintf(lnk, sizeof lnk, "%s.lnk", path);
		snprintf(fifo, sizeof fifo, "%s.fifo", path);
		assert_int_equal(symlink(path, lnk), 0);
		assert_null(console_pane_read_line(lnk, 2, 4096, &cut, &e));
		unlink(lnk);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_null(console_pane_read_line(fifo, 1, 4096, &cut, &e));
		assert_non_null(strstr(e.msg, "not a regular file"));
		unlink(fifo);
	}
	/* not JSON: itself */
	pretty = console_pane_json_pretty("not json {");
	assert_string_equal(pretty, "not json {");
	free(pretty);
	unlink(path);

	/* inert: ESC sequences, C1 CSI and BEL never come out */
	n = console_pane_wrap("pwn\033[2Jed\033]0;owned\007title\xc2\x9b"
	    "31mred\007bell\nsecond", 80, true, 100, &lines);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		for (const char *c = lines[i]; *c != '\0'; c++)
			assert_true((unsigned char)*c >= 0x20 &&
			    (unsigned char)*c != 0x7f);
	assert_null(strstr(lines[0], "\xc2\x9b"));
	assert_string_equal(lines[1], "second");
	console_pane_lines_free(lines, n);
	/* wrapping by columns, empty lines kept, at most max lines */
	n = console_pane_wrap("abcdefghijkl\n\nxy", 8, true, 100, &lines);
	assert_int_equal(n, 4);
	assert_string_equal(lines[0], "abcdefgh");
	assert_string_equal(lines[1], "ijkl");
	assert_string_equal(lines[2], "");
	assert_string_equal(lines[3], "xy");
	console_pane_lines_free(lines, n);
	n = console_pane_wrap("a\nb\nc\nd\ne", 8, true, 3, &lines);
	assert_int_equal(n, 3);
	console_pane_lines_free(lines, n);
	/* wide characters take two columns */
	n = console_pane_wrap("\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5\xe6\x97"
	    "\xa5\xe6\x97\xa5", 8, true, 10, &lines);
	assert_int_equal(n, 2);
	assert_int_equal(console_pane_cols(lines[0], strlen(lines[0]), true),
	    8);
	console_pane_lines_free(lines, n);
	assert_int_equal(console_pane_cols("\xe6\x97\xa5", 3, false), 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scroll),
		cmocka_unit_test(test_scroll_base),
		cmocka_unit_test(test_search),
		cmocka_unit_test(test_osc52),
		cmocka_unit_test(test_pager_text),
	};

	if (setlocale(LC_ALL, "C.UTF-8") == NULL)
		setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
