/*
 * timeline.c - the marker timeline bar: one row (the events box's bottom
 * edge, so it takes no row of its own) with the run's markers (B bait, f
 * lever fired, v verified, ! failed, X breach, L leak, O orphan, V
 * verdict) placed by beat index, the part played so far drawn heavier
 * and the position.  Where the letters go is core's (pace.c); this file
 * only draws them.  UI thread only.
 */
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

#define CONSOLE_TL_RIGHT  18   /* the edge's right part stays free */
#define CONSOLE_TL_MIN    16   /* narrower than this: no bar */

void
console_timeline_reset(struct console_timeline *t)
{
	memset(t, 0, sizeof *t);
}

void
console_timeline_note(struct console_timeline *t, const struct drill_beat *b)
{
	size_t i = t->shown++;

	if (t->known < t->shown)
		t->known = t->shown;
	if (!pace_is_marker(b->kind))
		return;
	if (t->nmarks == CONSOLE_TL_MARKS) {
		/* full: the verdict still gets the last slot */
		if (b->kind != DRILL_BEAT_VERDICT)
			return;
		t->nmarks--;
	}
	t->idx[t->nmarks] = (uint32_t)i;
	t->kind[t->nmarks] = (unsigned char)b->kind;
	t->nmarks++;
}

/* The colour and attributes of a timeline letter. */
static int
console_tl_pair(char g, attr_t *a)
{
	*a = A_BOLD;
	switch (g) {
	case 'B': return CP_MAGENTA;
	case 'f': return CP_CYAN;
	case 'v': return CP_GREEN;
	case 'V': return 0;
	default: return CP_RED;
	}
}

void
console_timeline_draw(struct console_ui *ui, const struct console_view *v,
    const struct replay *rp, int y)
{
	const struct console_timeline *t = &v->tl;
	bool fancy = ui->utf8 && !ui->ascii;
	char cells[512];
	size_t total = t->known, pos;
	int w = COLS - 4 - CONSOLE_TL_RIGHT, pc;

	if (w > (int)sizeof cells)
		w = (int)sizeof cells;
	if (w < CONSOLE_TL_MIN || t->shown == 0 || y < 1 || y >= LINES)
		return;
	if (total < t->shown)
		total = t->shown;
	memset(cells, 0, (size_t)w);
	if (rp != NULL) {
		for (size_t i = 0; i < rp->nbeats; i++)
			pace_timeline_put(cells, w, i, total, rp->beats[i].kind);
	} else {
		for (size_t i = 0; i < t->nmarks; i++)
			pace_timeline_put(cells, w, t->idx[i], total,
			    (enum drill_beat_kind)t->kind[i]);
	}
	pos = t->shown - 1;
	pc = pace_timeline_col(pos, total, w);
	for (int c = 0; c < w; c++) {
		int x = 3 + c;
		attr_t a;

		if (cells[c] != 0) {
			char s[2] = { cells[c], '\0' };
			int pair = console_tl_pair(cells[c], &a);

			console_attr(ui, pair, a | (c == pc ? A_REVERSE : 0) |
			    (c > pc ? A_DIM : 0));
			console_put(ui, y, x, s, 1);
		} else if (c == pc) {
			console_attr(ui, 0, A_BOLD);
			console_put(ui, y, x, fancy ? "\xe2\x97\x86" : "@", 1);
		} else if (c < pc) {
			console_attr(ui, 0, A_BOLD);
			console_put(ui, y, x, fancy ? "\xe2\x94\x81" : "=", 1);
		}
		/* after the position: the box's own edge */
	}
	console_attr(ui, 0, A_NORMAL);
	console_put(ui, y, 2, " ", 1);
	console_put(ui, y, 3 + w, " ", 1);
	attrset(A_NORMAL);
}
