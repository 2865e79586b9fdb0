/*
 * sprite.c - Poyo's sprite sheets: a bounded loader for the text format
 * (docs/sprites.md) and a curses-free renderer (half-block cells, colour
 * mapping).  No curses here: tui/ draws what this produces.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sprites.h"

#define SPRITE_MAGIC "ares-sprites"
#define SPRITE_VERSION 1
#define SPRITE_MAX_TOKENS 4

const char *const sprite_poyo_frames[] = {
	"idle0", "idle1", "walking0", "walking1", "sniffing", "grabbing",
	"zapped", "frozen", "caught", "escaped", NULL,
};

/* Parser state while walking the sheet line by line. */
enum sprite_state {
	SPRITE_ST_MAGIC,    /* before the "ares-sprites 1" line */
	SPRITE_ST_TOP,      /* between frames: color / frame lines */
	SPRITE_ST_PIXELS,   /* inside a frame's pixel rows */
	SPRITE_ST_ASCII_HDR,/* after the pixels: expect "ascii WxH" */
	SPRITE_ST_ASCII,    /* inside the ASCII rows */
	SPRITE_ST_END,      /* after the ASCII rows: expect "end" */
};

struct sprite_parser {
	struct sprite_sheet *s;
	const char *name;
	int line;
	enum sprite_state st;
	struct sprite_frame *cur;  /* frame being read */
	int row;                   /* rows read so far in the current block */
	struct errbuf *e;
};

/* Describe one byte for an error message (never echo control bytes). */
static void
sprite_char_desc(char c, char out[8])
{
	unsigned char u = (unsigned char)c;

	if (u >= 0x21 && u <= 0x7e)
		snprintf(out, 8, "'%c'", c);
	else
		snprintf(out, 8, "\\x%02x", u);
}

/* Fill e with "name:line: <msg>" (ERRBUF_INPUT).  Returns -1. */
static int
sprite_err(struct sprite_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int
sprite_err(struct sprite_parser *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return errbuf_set(p->e, ERRBUF_INPUT, "%s:%d: %s", p->name, p->line,
	    msg);
}

/* Split line (modified in place) on blanks into at most max tokens.
 * Returns the token count, or max + 1 when there are more. */
static int
sprite_tokens(char *line, char **tok, int max)
{
	int n = 0;
	char *s = line;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			return n;
		if (n == max)
			return max + 1;
		tok[n++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t')
			s++;
		if (*s != '\0')
			*s++ = '\0';
	}
}

/* Parse a decimal in [lo, hi] spanning exactly [s, end).  -1 if bad. */
static int
sprite_number(const char *s, const char *end, int lo, int hi)
{
	long v = 0;

	if (s == end || end - s > 4)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (v < lo || v > hi) ? -1 : (int)v;
}

/* Parse "WxH" with 1 <= W <= maxw, 1 <= H <= maxh.  0 or -1. */
static int
sprite_size(const char *s, int maxw, int maxh, int *w, int *h)
{
	const char *x = strchr(s, 'x');

	if (x == NULL)
		return -1;
	*w = sprite_number(s, x, 1, maxw);
	*h = sprite_number(x + 1, x + strlen(x), 1, maxh);
	return (*w < 0 || *h < 0) ? -1 : 0;
}

/* Palette index of c, SPRITE_TRANSPARENT for '.', or -2 if unknown. */
static int
sprite_pal_index(const struct sprite_sheet *s, char c)
{
	if (c == '.')
		return SPRITE_TRANSPARENT;
	for (size_t i = 0; i < s->npal; i++)
		if (s->pal_char[i] == c)
			return (int)i;
	return -2;
}

/* "color C #rrggbb" */
static int
sprite_line_color(struct sprite_parser *p, char **tok, int n)
{
	struct sprite_sheet *s = p->s;
	char d[8];
	uint8_t rgb[3];
	char c;

	if (n != 3)
		return sprite_err(p, "expected 'color <char> #rrggbb'");
	if (strlen(tok[1]) != 1)
		return sprite_err(p, "palette key must be one character");
	c = tok[1][0];
	sprite_char_desc(c, d);
	if (c == '.' || c == '#' || c == '|' || c < 0x21 || c > 0x7e)
		return sprite_err(p, "palette key %s is reserved", d);
	if (sprite_pal_index(s, c) != -2)
		return sprite_err(p, "palette key %s defined twice", d);
	if (s->npal == SPRITE_MAX_COLORS)
		return sprite_err(p, "more than %d palette colours",
		    SPRITE_MAX_COLORS);
	if (strlen(tok[2]) != 7 || tok[2][0] != '#' ||
	    util_unhex(tok[2] + 1, rgb, 3) != 0)
		return sprite_err(p, "colour must be #rrggbb");
	s->pal_char[s->npal] = c;
	s->pal[s->npal] = (struct sprite_rgb){ rgb[0], rgb[1], rgb[2] };
	s->npal++;
	return 0;
}

/* "frame NAME WxH": starts a new frame. */
static int
sprite_line_frame(struct sprite_parser *p, char **tok, int n)
{
	struct sprite_sheet *s = p->s;
	struct sprite_frame *f;
	size_t len;
	int w, h;

	if (n != 3)
		return sprite_err(p, "expected 'frame <name> <w>x<h>'");
	len = strlen(tok[1]);
	if (len == 0 || len >= SPRITE_NAME_MAX)
		return sprite_err(p, "frame name must be 1..%d characters",
		    SPRITE_NAME_MAX - 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)tok[1][i];
		if (!(islower(c) || isdigit(c) || c == '_' || c == '-'))
			return sprite_err(p, "frame name may only use a-z 0-9 _ -");
	}
	if (sprite_frame_find(s, tok[1]) != NULL)
		return sprite_err(p, "frame '%s' defined twice", tok[1]);
	if (s->nframes == SPRITE_MAX_FRAMES)
		return sprite_err(p, "more than %d frames", SPRITE_MAX_FRAMES);
	if (sprite_size(tok[2], SPRITE_MAX_W, SPRITE_MAX_H, &w, &h) < 0)
		return sprite_err(p, "frame '%s': size '%s' is not WxH within "
		    "1x1..%dx%d", tok[1], tok[2], SPRITE_MAX_W, SPRITE_MAX_H);
	s->frames = xrealloc(s->frames, (s->nframes + 1) * sizeof *s->frames);
	f = &s->frames[s->nframes++];
	memset(f, 0, sizeof *f);
	memcpy(f->name, tok[1], len + 1);
	f->line = p->line;
	f->w = w;
	f->h = h;
	p->cur = f;
	p->row = 0;
	p->st = SPRITE_ST_PIXELS;
	return 0;
}

/* One pixel row of the current frame. */
static int
sprite_line_pixels(struct sprite_parser *p, const char *line, size_t len)
{
	struct sprite_frame *f = p->cur;
	char d[8];

	if (len != (size_t)f->w)
		return sprite_err(p, "frame '%s': pixel row %d has %zu "
		    "columns, expected %d", f->name, p->row + 1, len, f->w);
	for (size_t i = 0; i < len; i++) {
		int idx = sprite_pal_index(p->s, line[i]);
		if (idx == -2) {
			sprite_char_desc(line[i], d);
			return sprite_err(p, "frame '%s': unknown palette "
			    "character %s at column %zu", f->name, d, i + 1);
		}
		f->px[p->row][i] = (int8_t)idx;
	}
	if (++p->row == f->h)
		p->st = SPRITE_ST_ASCII_HDR;
	return 0;
}

/* "ascii WxH" */
static int
sprite_line_ascii_hdr(struct sprite_parser *p, char **tok, int n)
{
	struct sprite_frame *f = p->cur;

	if (n < 1 || strcmp(tok[0], "ascii") != 0)
		return sprite_err(p, "frame '%s': expected 'ascii <w>x<h>' "
		    "after %d pixel rows", f->name, f->h);
	if (n != 2 || sprite_size(tok[1], SPRITE_ASCII_MAX_W,
	    SPRITE_ASCII_MAX_H, &f->aw, &f->ah) < 0)
		return sprite_err(p, "frame '%s': ascii size must be WxH "
		    "within 1x1..%dx%d", f->name, SPRITE_ASCII_MAX_W,
		    SPRITE_ASCII_MAX_H);
	p->row = 0;
	p->st = SPRITE_ST_ASCII;
	return 0;
}

/* One ASCII row: '|' + exactly aw printable ASCII characters + '|'. */
static int
sprite_line_ascii(struct sprite_parser *p, const char *line, size_t len)
{
	struct sprite_frame *f = p->cur;

	if (len != (size_t)f->aw + 2 || line[0] != '|' || line[len - 1] != '|')
		return sprite_err(p, "frame '%s': ascii row %d must be '|' + "
		    "%d characters + '|'", f->name, p->row + 1, f->aw);
	for (size_t i = 1; i + 1 < len; i++)
		if (line[i] < 0x20 || line[i] > 0x7e)
			return sprite_err(p, "frame '%s': ascii row %d: "
			    "non-printable byte at column %zu", f->name,
			    p->row + 1, i + 1);
	memcpy(f->ascii[p->row], line + 1, (size_t)f->aw);
	f->ascii[p->row][f->aw] = '\0';
	if (++p->row == f->ah)
		p->st = SPRITE_ST_END;
	return 0;
}

/* Dispatch one line (NUL-terminated copy, len bytes). */
static int
sprite_line(struct sprite_parser *p, char *line, size_t len)
{
	char *tok[SPRITE_MAX_TOKENS];
	const char *t = line;
	int n;

	while (*t == ' ' || *t == '\t')
		t++;
	bool blank = (*t == '\0' || *t == '#');

	switch (p->st) {
	case SPRITE_ST_PIXELS:
		return sprite_line_pixels(p, line, len);
	case SPRITE_ST_ASCII:
		return sprite_line_ascii(p, line, len);
	default:
		break;
	}
	if (blank)
		return 0;
	n = sprite_tokens(line, tok, SPRITE_MAX_TOKENS);
	if (n > SPRITE_MAX_TOKENS)
		return sprite_err(p, "too many words on the line");
	switch (p->st) {
	case SPRITE_ST_MAGIC:
		if (n != 2 || strcmp(tok[0], SPRITE_MAGIC) != 0)
			return sprite_err(p, "expected '%s %d' first",
			    SPRITE_MAGIC, SPRITE_VERSION);
		if (sprite_number(tok[1], tok[1] + strlen(tok[1]), 1, 9999)
		    != SPRITE_VERSION)
			return sprite_err(p, "unsupported sheet version '%s'",
			    tok[1]);
		p->st = SPRITE_ST_TOP;
		return 0;
	case SPRITE_ST_TOP:
		if (strcmp(tok[0], "color") == 0)
			return sprite_line_color(p, tok, n);
		if (strcmp(tok[0], "frame") == 0)
			return sprite_line_frame(p, tok, n);
		return sprite_err(p, "expected 'color' or 'frame'");
	case SPRITE_ST_ASCII_HDR:
		return sprite_line_ascii_hdr(p, tok, n);
	case SPRITE_ST_END:
		if (n != 1 || strcmp(tok[0], "end") != 0)
			return sprite_err(p, "frame '%s': expected 'end' after "
			    "%d ascii rows", p->cur->name, p->cur->ah);
		p->cur = NULL;
		p->st = SPRITE_ST_TOP;
		return 0;
	default:
		return sprite_err(p, "internal parser state");
	}
}

struct sprite_sheet *
sprite_sheet_parse(const char *buf, size_t len, const char *name,
    struct errbuf *e)
{
	struct sprite_parser p = { 0 };
	char line[SPRITE_MAX_LINE + 1];
	size_t i = 0;

	p.s = xcalloc(1, sizeof *p.s);
	p.s->name = xstrdup(name != NULL ? name : "<sheet>");
	p.name = p.s->name;
	p.e = e;
	p.st = SPRITE_ST_MAGIC;
	if (len > SPRITE_MAX_BYTES) {
		p.line = 0;
		sprite_err(&p, "sheet larger than %d bytes", SPRITE_MAX_BYTES);
		goto fail;
	}
	while (i < len) {
		size_t start = i, n;

		p.line++;
		while (i < len && buf[i] != '\n')
			i++;
		n = i - start;
		if (i < len)
			i++;   /* the '\n' */
		if (n > 0 && buf[start + n - 1] == '\r')
			n--;
		if (n > SPRITE_MAX_LINE) {
			sprite_err(&p, "line longer than %d bytes",
			    SPRITE_MAX_LINE);
			goto fail;
		}
		if (memchr(buf + start, '\0', n) != NULL) {
			sprite_err(&p, "NUL byte");
			goto fail;
		}
		memcpy(line, buf + start, n);
		line[n] = '\0';
		if (sprite_line(&p, line, n) < 0)
			goto fail;
	}
	p.s->lines = p.line;
	if (p.st == SPRITE_ST_MAGIC) {
		sprite_err(&p, "empty sheet (no '%s %d' line)", SPRITE_MAGIC,
		    SPRITE_VERSION);
		goto fail;
	}
	if (p.st != SPRITE_ST_TOP) {
		sprite_err(&p, "end of file inside frame '%s' (started at "
		    "line %d)", p.cur->name, p.cur->line);
		goto fail;
	}
	return p.s;
fail:
	sprite_sheet_free(p.s);
	return NULL;
}

struct sprite_sheet *
sprite_sheet_load(const char *path, struct errbuf *e)
{
	struct sprite_sheet *s;
	size_t len;
	char *buf = util_read_file(path, SPRITE_MAX_BYTES, &len, e);

	if (buf == NULL) {
		if (e != NULL)
			e->code = ERRBUF_INPUT;
		errbuf_prefix(e, "sprite sheet %s", path);
		return NULL;
	}
	s = sprite_sheet_parse(buf, len, path, e);
	free(buf);
	return s;
}

void
sprite_sheet_free(struct sprite_sheet *s)
{
	if (s == NULL)
		return;
	free(s->frames);
	free(s->name);
	free(s);
}

const struct sprite_frame *
sprite_frame_find(const struct sprite_sheet *s, const char *name)
{
	if (s == NULL || name == NULL)
		return NULL;
	for (size_t i = 0; i < s->nframes; i++)
		if (strcmp(s->frames[i].name, name) == 0)
			return &s->frames[i];
	return NULL;
}

int
sprite_sheet_require(const struct sprite_sheet *s, const char *const *names,
    struct errbuf *e)
{
	for (size_t i = 0; names != NULL && names[i] != NULL; i++)
		if (sprite_frame_find(s, names[i]) == NULL)
			return errbuf_set(e, ERRBUF_INPUT,
			    "%s:%d: missing frame '%s'", s->name, s->lines,
			    names[i]);
	return 0;
}

const char *
sprite_default_path(void)
{
	const char *env = getenv("ARES_SPRITES");

	if (env != NULL && env[0] != '\0')
		return env;
#ifdef ARES_SRCDIR
	if (access(ARES_SRCDIR "/sprites/poyo.txt", R_OK) == 0)
		return ARES_SRCDIR "/sprites/poyo.txt";
#endif
#ifdef ARES_DATADIR
	return ARES_DATADIR "/sprites/poyo.txt";
#else
	return "sprites/poyo.txt";
#endif
}

int
sprite_frame_halfblock(const struct sprite_frame *f,
    struct sprite_cell *cells, size_t max, int *cols, int *rows)
{
	int nr = (f->h + 1) / 2;
	size_t need = (size_t)nr * (size_t)f->w;

	if (need > max)
		return -1;
	for (int r = 0; r < nr; r++)
		for (int c = 0; c < f->w; c++) {
			struct sprite_cell *cell = &cells[r * f->w + c];
			cell->top = f->px[2 * r][c];
			cell->bottom = (2 * r + 1 < f->h) ?
			    f->px[2 * r + 1][c] : SPRITE_TRANSPARENT;
		}
	*cols = f->w;
	*rows = nr;
	return (int)need;
}

/* Squared Euclidean distance between two colours. */
static long
sprite_dist2(struct sprite_rgb a, int r, int g, int b)
{
	long dr = a.r - r, dg = a.g - g, db = a.b - b;

	return dr * dr + dg * dg + db * db;
}

int
sprite_rgb_to_xterm256(struct sprite_rgb c)
{
	static const int level[6] = { 0, 95, 135, 175, 215, 255 };
	int best = 16;
	long bestd = -1;

	/* The 6x6x6 cube: 16 + 36r + 6g + b. */
	for (int r = 0; r < 6; r++)
		for (int g = 0; g < 6; g++)
			for (int b = 0; b < 6; b++) {
				long d = sprite_dist2(c, level[r], level[g],
				    level[b]);
				if (bestd < 0 || d < bestd) {
					bestd = d;
					best = 16 + 36 * r + 6 * g + b;
				}
			}
	/* The grey ramp: 232 + i is 8 + 10i. */
	for (int i = 0; i < 24; i++) {
		int v = 8 + 10 * i;
		long d = sprite_dist2(c, v, v, v);
		if (d < bestd) {
			bestd = d;
			best = 232 + i;
		}
	}
	return best;
}

int
sprite_rgb_to_basic8(struct sprite_rgb c)
{
	/* xterm's default normal-intensity colours. */
	static const uint8_t basic[8][3] = {
		{ 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 },
		{ 0, 0, 238 }, { 205, 0, 205 }, { 0, 205, 205 },
		{ 229, 229, 229 },
	};
	int hi = c.r > c.g ? (c.r > c.b ? c.r : c.b) : (c.g > c.b ? c.g : c.b);
	int lo = c.r < c.g ? (c.r < c.b ? c.r : c.b) : (c.g < c.b ? c.g : c.b);
	/* Saturated colours pick among the six hues (a pink stays magenta
	 * instead of washing out to white); greys among black and white. */
	bool chromatic = hi - lo >= 64;
	int best = 0;
	long bestd = -1;

	for (int i = 0; i < 8; i++) {
		if (chromatic != (i >= 1 && i <= 6))
			continue;
		long d = sprite_dist2(c, basic[i][0], basic[i][1], basic[i][2]);
		if (bestd < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}
