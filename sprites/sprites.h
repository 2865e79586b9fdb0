/*
 * sprites.h - the one header of sprites/: Poyo's pixel-art sprite sheets
 * (text files, format in docs/sprites.md), their loader and a curses-free
 * renderer.  The renderer only produces data (palette indices per terminal
 * cell); tui/ turns it into half-block characters and colour pairs.
 *
 * Every exported name carries the sprite_ prefix.
 */
#ifndef DRILL_SPRITES_H
#define DRILL_SPRITES_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"   /* struct errbuf */

/* Bounds of the (untrusted) sheet parser. */
#define SPRITE_MAX_BYTES   (256 * 1024)  /* whole sheet file */
#define SPRITE_MAX_LINE    256           /* one line, without '\n' */
#define SPRITE_MAX_FRAMES  64
#define SPRITE_MAX_W       32            /* pixels */
#define SPRITE_MAX_H       32
#define SPRITE_MAX_COLORS  32            /* palette entries ('.' excluded) */
#define SPRITE_NAME_MAX    32            /* frame name incl. NUL */
#define SPRITE_ASCII_MAX_W 16            /* ASCII variant: columns */
#define SPRITE_ASCII_MAX_H 8             /* ASCII variant: rows */

#define SPRITE_TRANSPARENT (-1)          /* pixel/cell value: no colour */

struct sprite_rgb {
	uint8_t r, g, b;
};

struct sprite_frame {
	char name[SPRITE_NAME_MAX];
	int line;                                 /* line of its "frame" line */
	int w, h;                                 /* pixels */
	int8_t px[SPRITE_MAX_H][SPRITE_MAX_W];    /* palette index or -1 */
	int aw, ah;                               /* ASCII variant size */
	char ascii[SPRITE_ASCII_MAX_H][SPRITE_ASCII_MAX_W + 1]; /* printable
	                                             ASCII, NUL-terminated */
};

struct sprite_sheet {
	char *name;                               /* path or buffer name */
	int lines;                                /* lines in the file */
	char pal_char[SPRITE_MAX_COLORS];         /* palette character */
	struct sprite_rgb pal[SPRITE_MAX_COLORS]; /* its colour */
	size_t npal;
	struct sprite_frame *frames;              /* nframes entries */
	size_t nframes;
};

/*
 * Load a sheet file (at most SPRITE_MAX_BYTES).  Returns the sheet (free
 * with sprite_sheet_free) or NULL + e (ERRBUF_INPUT, "path:line: problem").
 */
struct sprite_sheet *sprite_sheet_load(const char *path, struct errbuf *e);
/* Same on a buffer; name is used in error messages (len bytes, need not be
 * NUL-terminated). */
struct sprite_sheet *sprite_sheet_parse(const char *buf, size_t len,
    const char *name, struct errbuf *e);
void sprite_sheet_free(struct sprite_sheet *s);

/* The frame called name, or NULL. */
const struct sprite_frame *sprite_frame_find(const struct sprite_sheet *s,
    const char *name);
/* Check that every frame of the NULL-terminated list exists.  -1 + e
 * ("path:<last line>: missing frame 'x'") otherwise. */
int sprite_sheet_require(const struct sprite_sheet *s,
    const char *const *names, struct errbuf *e);

/* The frames the console needs from Poyo's sheet (NULL-terminated):
 * idle0 idle1 sniffing grabbing zapped caught escaped. */
extern const char *const sprite_poyo_frames[];

/*
 * Path of Poyo's sheet: $ARES_SPRITES if set and non-empty, else
 * ARES_SRCDIR/sprites/poyo.txt when that file exists (source tree), else
 * ARES_DATADIR/sprites/poyo.txt (installed), else "sprites/poyo.txt".
 * Never NULL; the string is static or from the environment.
 */
const char *sprite_default_path(void);

/*
 * Half-block rendering: one terminal cell shows 2 pixel rows (the upper
 * pixel as the foreground of U+2580, the lower one as its background, or
 * U+2584 when only the lower pixel is opaque).  Values are palette indices
 * of the frame's sheet or SPRITE_TRANSPARENT.
 */
struct sprite_cell {
	int top;
	int bottom;
};
/*
 * Fill cells (row-major, *cols = f->w columns, *rows = (f->h + 1) / 2 rows;
 * an odd last pixel row gets a transparent bottom).  Returns the number of
 * cells written, or -1 when max is too small (nothing written).
 */
int sprite_frame_halfblock(const struct sprite_frame *f,
    struct sprite_cell *cells, size_t max, int *cols, int *rows);

/* Nearest xterm-256 colour (16..255: the 6x6x6 cube and the grey ramp). */
int sprite_rgb_to_xterm256(struct sprite_rgb c);
/* Nearest of the 8 basic colours, numbered like curses' COLOR_BLACK (0),
 * RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE (7): saturated colours
 * (max - min channel >= 64) map to the nearest of the six hues 1..6, the
 * others to black or white, so Poyo's pink stays magenta. */
int sprite_rgb_to_basic8(struct sprite_rgb c);

#endif /* DRILL_SPRITES_H */
