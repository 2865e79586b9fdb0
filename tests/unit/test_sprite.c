/*
 * test_sprite.c - sprite sheet loader and renderer (sprites/sprite.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sprites.h"

/* Parse a NUL-terminated sheet text. */
static struct sprite_sheet *
parse(const char *text, struct errbuf *e)
{
	memset(e, 0, sizeof *e);
	return sprite_sheet_parse(text, strlen(text), "t.txt", e);
}

/* Expect text to fail with a message that starts with prefix and contains
 * needle. */
static void
expect_error(const char *text, const char *prefix, const char *needle)
{
	struct errbuf e;
	struct sprite_sheet *s = parse(text, &e);

	if (s != NULL)
		fail_msg("sheet unexpectedly parsed; wanted '%s'", prefix);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strncmp(e.msg, prefix, strlen(prefix)) != 0 ||
	    strstr(e.msg, needle) == NULL)
		fail_msg("got '%s', want '%s...%s'", e.msg, prefix, needle);
}

#define TINY_HEAD \
	"ares-sprites 1\n" \
	"color A #ff0000\n" \
	"color B #0000ff\n"

/* A 2x4 frame: row0 A., row1 BA, row2 .., row3 .B */
static const char tiny[] =
	TINY_HEAD
	"frame t 2x4\n"
	"A.\n"
	"BA\n"
	"..\n"
	".B\n"
	"ascii 2x1\n"
	"|ab|\n"
	"end\n";

static void
test_shipped_sheet(void **state)
{
	(void)state;
	struct errbuf e = { 0 };
	const char *path = sprite_default_path();
	struct sprite_sheet *s = sprite_sheet_load(path, &e);

	if (s == NULL)
		fail_msg("%s", e.msg);
	assert_int_equal(sprite_sheet_require(s, sprite_poyo_frames, &e), 0);
	for (size_t i = 0; sprite_poyo_frames[i] != NULL; i++) {
		const struct sprite_frame *f =
		    sprite_frame_find(s, sprite_poyo_frames[i]);
		assert_non_null(f);
		assert_int_equal(f->w, 16);
		assert_int_equal(f->h, 16);
		assert_int_equal(f->aw, 8);
		assert_int_equal(f->ah, 4);
		assert_int_equal(strlen(f->ascii[0]), 8);
	}
	/* Frames differ from each other (a copy-paste sheet is a bug). */
	const struct sprite_frame *a = sprite_frame_find(s, "idle0");
	const struct sprite_frame *b = sprite_frame_find(s, "escaped");
	assert_memory_not_equal(a->px, b->px, sizeof a->px);
	assert_null(sprite_frame_find(s, "nope"));
	sprite_sheet_free(s);
}

static void
test_halfblock_tiny(void **state)
{
	(void)state;
	struct errbuf e;
	struct sprite_sheet *s = parse(tiny, &e);
	struct sprite_cell cells[4];
	int cols = 0, rows = 0;

	if (s == NULL)
		fail_msg("%s", e.msg);
	const struct sprite_frame *f = sprite_frame_find(s, "t");
	assert_non_null(f);
	assert_string_equal(f->ascii[0], "ab");
	assert_int_equal(sprite_frame_halfblock(f, cells, 4, &cols, &rows), 4);
	assert_int_equal(cols, 2);
	assert_int_equal(rows, 2);
	/* Cell (0,0): A over B; (0,1): transparent over A. */
	assert_int_equal(cells[0].top, 0);
	assert_int_equal(cells[0].bottom, 1);
	assert_int_equal(cells[1].top, SPRITE_TRANSPARENT);
	assert_int_equal(cells[1].bottom, 0);
	/* Cell (1,0): fully transparent; (1,1): transparent over B. */
	assert_int_equal(cells[2].top, SPRITE_TRANSPARENT);
	assert_int_equal(cells[2].bottom, SPRITE_TRANSPARENT);
	assert_int_equal(cells[3].top, SPRITE_TRANSPARENT);
	assert_int_equal(cells[3].bottom, 1);
	/* Palette colours as written. */
	assert_int_equal(s->pal[0].r, 0xff);
	assert_int_equal(s->pal[1].b, 0xff);
	/* Too small a buffer writes nothing. */
	assert_int_equal(sprite_frame_halfblock(f, cells, 3, &cols, &rows), -1);
	sprite_sheet_free(s);
}

static void
test_halfblock_odd_height(void **state)
{
	(void)state;
	struct errbuf e;
	struct sprite_sheet *s = parse(TINY_HEAD
	    "frame o 1x3\nA\nB\nA\nascii 1x1\n|x|\nend\n", &e);
	struct sprite_cell cells[2];
	int cols, rows;

	if (s == NULL)
		fail_msg("%s", e.msg);
	const struct sprite_frame *f = sprite_frame_find(s, "o");
	assert_int_equal(sprite_frame_halfblock(f, cells, 2, &cols, &rows), 2);
	assert_int_equal(rows, 2);
	assert_int_equal(cells[1].top, 0);
	assert_int_equal(cells[1].bottom, SPRITE_TRANSPARENT);
	sprite_sheet_free(s);
}

static void
test_bad_sheets(void **state)
{
	(void)state;
	/* Unknown palette character, named with line and column. */
	expect_error(TINY_HEAD "frame t 2x2\nAQ\nAA\n", "t.txt:5:",
	    "unknown palette character 'Q' at column 2");
	/* Ragged row. */
	expect_error(TINY_HEAD "frame t 2x2\nAA\nA\n", "t.txt:6:",
	    "pixel row 2 has 1 columns, expected 2");
	/* Oversized frame. */
	expect_error(TINY_HEAD "frame big 33x4\n", "t.txt:4:", "size '33x4'");
	expect_error(TINY_HEAD "frame big 4x40\n", "t.txt:4:", "size '4x40'");
	/* Truncated frame (missing rows). */
	expect_error(TINY_HEAD "frame t 2x2\nAA\n", "t.txt:5:",
	    "end of file inside frame 't'");
	/* Frame without its ASCII variant. */
	expect_error(TINY_HEAD "frame t 1x1\nA\nend\n", "t.txt:6:",
	    "expected 'ascii");
	/* Ragged ASCII row. */
	expect_error(TINY_HEAD "frame t 1x1\nA\nascii 2x1\n|a|\nend\n",
	    "t.txt:7:", "ascii row 1");
	/* Palette problems. */
	expect_error(TINY_HEAD "color A #00ff00\n", "t.txt:4:", "twice");
	expect_error("ares-sprites 1\ncolor . #000000\n", "t.txt:2:",
	    "reserved");
	expect_error("ares-sprites 1\ncolor Z red\n", "t.txt:2:", "#rrggbb");
	/* Magic and version. */
	expect_error("frame t 1x1\n", "t.txt:1:", "ares-sprites 1");
	expect_error("ares-sprites 2\n", "t.txt:1:", "version");
	expect_error("", "t.txt:0:", "empty sheet");
	/* Duplicate frame names. */
	expect_error(TINY_HEAD "frame t 1x1\nA\nascii 1x1\n|a|\nend\n"
	    "frame t 1x1\nA\n", "t.txt:9:", "defined twice");
	/* Control bytes are described, never echoed. */
	expect_error(TINY_HEAD "frame t 1x1\n\x1b\n", "t.txt:5:", "\\x1b");
}

static void
test_missing_frame(void **state)
{
	(void)state;
	struct errbuf e;
	struct sprite_sheet *s = parse(tiny, &e);
	static const char *const want[] = { "t", "escaped", NULL };

	assert_non_null(s);
	assert_int_equal(sprite_sheet_require(s, want, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, "t.txt:11: missing frame 'escaped'");
	sprite_sheet_free(s);
}

static void
test_limits(void **state)
{
	(void)state;
	/* 65 frames. */
	size_t cap = 65 * 64 + 64, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	n += (size_t)snprintf(buf + n, cap - n, "ares-sprites 1\ncolor A #000000\n");
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(buf + n, cap - n,
		    "frame f%d 1x1\nA\nascii 1x1\n|a|\nend\n", i);
	expect_error(buf, "t.txt:", "more than 64 frames");
	free(buf);

	/* 33 palette colours. */
	char pal[2048] = "ares-sprites 1\n";
	for (int i = 0; i < 33; i++) {
		char line[32];
		snprintf(line, sizeof line, "color %c #000000\n", 'A' + i);
		strcat(pal, line);
	}
	expect_error(pal, "t.txt:34:", "more than 32 palette colours");

	/* A line longer than the bound. */
	char longl[400];
	memset(longl, 'x', sizeof longl);
	memcpy(longl, "ares-sprites 1\n#", 16);
	longl[sizeof longl - 1] = '\0';
	expect_error(longl, "t.txt:2:", "longer than");

	/* A whole file over SPRITE_MAX_BYTES is refused before parsing. */
	struct errbuf e;
	char *big = calloc(1, SPRITE_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, '\n', SPRITE_MAX_BYTES + 1);
	assert_null(sprite_sheet_parse(big, SPRITE_MAX_BYTES + 1, "t.txt", &e));
	assert_non_null(strstr(e.msg, "larger than"));
	free(big);
}

static void
test_rgb_mapping(void **state)
{
	(void)state;
	assert_int_equal(sprite_rgb_to_xterm256((struct sprite_rgb){ 0, 0, 0 }), 16);
	assert_int_equal(sprite_rgb_to_xterm256(
	    (struct sprite_rgb){ 255, 255, 255 }), 231);
	assert_int_equal(sprite_rgb_to_xterm256(
	    (struct sprite_rgb){ 255, 0, 0 }), 196);
	assert_int_equal(sprite_rgb_to_xterm256(
	    (struct sprite_rgb){ 0, 0, 255 }), 21);
	assert_int_equal(sprite_rgb_to_xterm256(
	    (struct sprite_rgb){ 95, 135, 175 }), 67);
	assert_int_equal(sprite_rgb_to_xterm256(
	    (struct sprite_rgb){ 128, 128, 128 }), 244);   /* grey ramp */
	assert_int_equal(sprite_rgb_to_xterm256(
	    (struct sprite_rgb){ 255, 135, 215 }), 212);   /* pink */

	assert_int_equal(sprite_rgb_to_basic8((struct sprite_rgb){ 0, 0, 0 }), 0);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 250, 10, 10 }), 1);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 10, 200, 30 }), 2);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 200, 0, 200 }), 5);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 255, 255, 255 }), 7);
	/* Saturated pink stays magenta; greys go to black or white. */
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 255, 156, 207 }), 5);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 160, 160, 170 }), 7);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 58, 28, 63 }), 0);
	assert_int_equal(sprite_rgb_to_basic8(
	    (struct sprite_rgb){ 108, 200, 255 }), 6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_sheet),
		cmocka_unit_test(test_halfblock_tiny),
		cmocka_unit_test(test_halfblock_odd_height),
		cmocka_unit_test(test_bad_sheets),
		cmocka_unit_test(test_missing_frame),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_rgb_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
