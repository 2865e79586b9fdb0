/*
 * draw.c - what the console's screens draw with: bounded text (untrusted
 * text never reaches the terminal raw), boxes, progress bars, colour
 * pairs, Poyo's sprite, and the drill layout the live drill and the
 * replay share (title bar, lab map, lever panel, event list, status
 * line), drawn from a struct console_view.  UI thread only.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include <curses.h>

#include "core.h"
#include "sprites.h"
#include "tui.h"

#define CONSOLE_SNIFF_NS   (1500ull * 1000 * 1000)
#define CONSOLE_GRAB_NS    (800ull * 1000 * 1000)
#define CONSOLE_ZAP_NS     (1200ull * 1000 * 1000)

/* ---------------------------------------------------------------- */
/* drawing helpers                                                   */
/* ---------------------------------------------------------------- */

/* Set the attributes a, with colour pair pair when colour is on. */
void
console_attr(const struct console_ui *ui, int pair, attr_t a)
{
	/* 8 colours: bold makes green, yellow and cyan bright, which white
	 * backgrounds wash out (console_init_colors) */
	if (ui->color && !ui->c256 && (pair == CP_GREEN ||
	    pair == CP_YELLOW || pair == CP_CYAN) && !(a & A_REVERSE))
		a &= ~(attr_t)A_BOLD;
	attrset(a | (ui->color && pair > 0 ? COLOR_PAIR(pair) : 0));
}

/*
 * Put untrusted text at (y, x), at most maxcols columns: printable
 * characters only (anything else becomes '?'), wide characters counted by
 * their width, and never more than the row has left.
 */
void
console_put(const struct console_ui *ui, int y, int x, const char *s,
    int maxcols)
{
	char out[1024];
	size_t o = 0;
	int cols = 0;
	mbstate_t st;

	if (y < 0 || y >= LINES || x < 0 || x >= COLS || s == NULL)
		return;
	if (maxcols > COLS - x)
		maxcols = COLS - x;
	memset(&st, 0, sizeof st);
	while (*s != '\0' && cols < maxcols && o + 8 < sizeof out) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x80 || !ui->utf8) {
			out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
			cols++;
			s++;
			continue;
		}
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, strlen(s), &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof st);
			out[o++] = '?';
			cols++;
			s++;
			continue;
		}
		int w = wcwidth(wc);
		if (w < 0) {
			out[o++] = '?';
			cols++;
		} else if (cols + w <= maxcols) {
			memcpy(out + o, s, n);
			o += n;
			cols += w;
		} else {
			break;
		}
		s += n;
	}
	if (o > 0)
		mvaddnstr(y, x, out, (int)o);
}

/* printf into a bounded field of the screen (our own text, still bounded). */
void
console_putf(const struct console_ui *ui, int y, int x, int maxcols,
    const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	console_put(ui, y, x, buf, maxcols);
}

/* A box with an optional title in its top edge. */
void
console_box(const struct console_ui *ui, int y, int x, int h, int w,
    const char *title)
{
	if (h < 2 || w < 2)
		return;
	if (ui->ascii) {
		mvhline(y, x + 1, '-', w - 2);
		mvhline(y + h - 1, x + 1, '-', w - 2);
		mvvline(y + 1, x, '|', h - 2);
		mvvline(y + 1, x + w - 1, '|', h - 2);
		mvaddch(y, x, '+');
		mvaddch(y, x + w - 1, '+');
		mvaddch(y + h - 1, x, '+');
		mvaddch(y + h - 1, x + w - 1, '+');
	} else {
		mvhline(y, x + 1, ACS_HLINE, w - 2);
		mvhline(y + h - 1, x + 1, ACS_HLINE, w - 2);
		mvvline(y + 1, x, ACS_VLINE, h - 2);
		mvvline(y + 1, x + w - 1, ACS_VLINE, h - 2);
		mvaddch(y, x, ACS_ULCORNER);
		mvaddch(y, x + w - 1, ACS_URCORNER);
		mvaddch(y + h - 1, x, ACS_LLCORNER);
		mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER);
	}
	if (title != NULL && w > 6) {
		char t[128];
		snprintf(t, sizeof t, " %s ", title);
		console_put(ui, y, x + 2, t, w - 4);
	}
}

/* A progress bar "[####----] done/total" in w columns at (y, x). */
void
console_bar(const struct console_ui *ui, int y, int x, int w, size_t done,
    size_t total, int pair)
{
	char nums[48];
	int nw, bw, fill;

	snprintf(nums, sizeof nums, " %zu/%zu", done, total);
	nw = (int)strlen(nums);
	bw = w - nw - 2;
	if (bw < 4)
		bw = 4;
	fill = total > 0 ? (int)((double)bw * (double)done / (double)total) :
	    0;
	if (fill > bw)
		fill = bw;
	console_attr(ui, 0, A_BOLD);
	console_put(ui, y, x, "[", 1);
	console_attr(ui, pair, A_BOLD);
	for (int i = 0; i < bw; i++) {
		const char *c = i < fill ? (ui->ascii || !ui->utf8 ? "#" :
		    "\xe2\x96\x88") : (ui->ascii || !ui->utf8 ? "-" :
		    "\xc2\xb7");

		if (i >= fill)
			console_attr(ui, 0, A_DIM);
		console_put(ui, y, x + 1 + i, c, 1);
	}
	console_attr(ui, 0, A_BOLD);
	console_put(ui, y, x + 1 + bw, "]", 1);
	console_put(ui, y, x + 2 + bw, nums, nw);
	attrset(A_NORMAL);
}

/* Colour pairs 1..7 and CP_TITLE, and the sprite palette mapped to
 * the terminal's colours (256 or the basic 8); nothing without colour. */
void
console_init_colors(struct console_ui *ui)
{
	if (!ui->color)
		return;
	start_color();
	ui->def_bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
	ui->c256 = COLORS >= 256;
	/* Colours that read on dark and light backgrounds: with 256 colours
	 * mid-tones (red 160, green 28, amber 136, blue 26, magenta 127,
	 * cyan 30); with 8, yellow is drawn magenta (yellow on white is
	 * unreadable) and console_attr() drops bold from the light ones
	 * (bold brightens them).  White is the terminal's own colour. */
	for (short c = 1; c <= 7; c++) {
		static const short mid[8] = { 0, 160, 28, 136, 26, 127, 30, -1 };
		short fg = ui->c256 ? mid[c] : c == COLOR_YELLOW ?
		    COLOR_MAGENTA : c;

		if (c == COLOR_WHITE)
			fg = ui->def_bg == -1 ? -1 : COLOR_WHITE;
		init_pair(c, fg, ui->def_bg);
	}
	init_pair(CP_TITLE, COLOR_WHITE, COLOR_MAGENTA);
	for (size_t i = 0; ui->sheet != NULL && i < ui->sheet->npal; i++)
		ui->pal_color[i] = (short)(ui->c256 ?
		    sprite_rgb_to_xterm256(ui->sheet->pal[i]) :
		    sprite_rgb_to_basic8(ui->sheet->pal[i]));
}

/* Colour pair for a (fg, bg) sprite colour combination, allocated on first
 * use; 0 (no colour) when we run out of pairs. */
static short
console_sprite_pair(struct console_ui *ui, short fg, short bg)
{
	for (int i = 0; i < ui->npairs; i++)
		if (ui->pairs[i].fg == fg && ui->pairs[i].bg == bg)
			return (short)(CP_SPRITE_BASE + i);
	if (ui->npairs == CONSOLE_MAX_PAIRS ||
	    CP_SPRITE_BASE + ui->npairs >= COLOR_PAIRS)
		return 0;
	if (init_pair((short)(CP_SPRITE_BASE + ui->npairs), fg, bg) == ERR)
		return 0;
	ui->pairs[ui->npairs].fg = fg;
	ui->pairs[ui->npairs].bg = bg;
	return (short)(CP_SPRITE_BASE + ui->npairs++);
}

/* Draw Poyo's frame in the w x h area at (y, x). */
static void
console_draw_poyo(struct console_ui *ui, int y, int x, int w, int h,
    const char *pose)
{
	const struct sprite_frame *f = sprite_frame_find(ui->sheet, pose);

	if (f == NULL) {
		console_attr(ui, CP_MAGENTA, A_BOLD);
		console_put(ui, y + h / 2 - 1, x + 2, "( o  o )", w - 2);
		console_put(ui, y + h / 2, x + 2, "(no sprite)", w - 2);
		return;
	}
	if (ui->halfblock) {
		struct sprite_cell cells[SPRITE_MAX_W * ((SPRITE_MAX_H + 1) / 2)];
		int cols, rows;

		if (sprite_frame_halfblock(f, cells, sizeof cells /
		    sizeof cells[0], &cols, &rows) < 0)
			return;
		int ox = x + (w - cols) / 2, oy = y + (h - rows) / 2;
		for (int r = 0; r < rows && r < h; r++)
			for (int c = 0; c < cols && c < w; c++) {
				const struct sprite_cell *cell = &cells[r * cols + c];
				wchar_t wc[2] = { L'\x2580', 0 };
				short fg, bg;
				cchar_t cc;

				if (cell->top < 0 && cell->bottom < 0)
					continue;
				if (cell->top < 0) {
					wc[0] = L'\x2584';
					fg = ui->pal_color[cell->bottom];
					bg = ui->def_bg;
				} else {
					fg = ui->pal_color[cell->top];
					bg = cell->bottom < 0 ? ui->def_bg :
					    ui->pal_color[cell->bottom];
				}
				short pair = console_sprite_pair(ui, fg, bg);
				setcchar(&cc, wc, A_NORMAL, pair, NULL);
				mvadd_wch(oy + r, ox + c, &cc);
			}
		return;
	}
	console_attr(ui, CP_MAGENTA, A_BOLD);
	int ox = x + (w - f->aw) / 2, oy = y + (h - f->ah) / 2;
	for (int r = 0; r < f->ah && r < h; r++)
		console_put(ui, oy + r, ox, f->ascii[r], w);
}

/* Short label of a beat kind for the event list (tui.h). */
const char *
console_kind_label(enum drill_beat_kind k, int *pair, attr_t *a)
{
	*a = A_NORMAL;
	*pair = 0;
	switch (k) {
	case DRILL_BEAT_PHASE: *pair = CP_CYAN; return "phase";
	case DRILL_BEAT_AGENT: return "agent";
	case DRILL_BEAT_TOOL: *a = A_DIM; return "tool";
	case DRILL_BEAT_SERVICE: *pair = CP_BLUE; *a = A_BOLD; return "service";
	case DRILL_BEAT_BAIT: *pair = CP_MAGENTA; *a = A_BOLD; return "BAIT";
	case DRILL_BEAT_LEVER_FIRED: *pair = CP_YELLOW; return "fired";
	case DRILL_BEAT_LEVER_VERIFIED:
		*pair = CP_GREEN; *a = A_BOLD; return "verified";
	case DRILL_BEAT_LEVER_FAILED:
		*pair = CP_RED; *a = A_BOLD; return "FAILED";
	case DRILL_BEAT_BLOCKED: *pair = CP_GREEN; return "blocked";
	case DRILL_BEAT_BREACH: *pair = CP_RED; *a = A_BOLD; return "BREACH";
	case DRILL_BEAT_VERDICT: *a = A_BOLD; return "verdict";
	case DRILL_BEAT_ERROR: *pair = CP_RED; return "error";
	case DRILL_BEAT_LEAK: *pair = CP_RED; *a = A_BOLD; return "LEAK";
	case DRILL_BEAT_ORPHAN: *pair = CP_RED; *a = A_BOLD; return "ORPHAN";
	case DRILL_BEAT_COUNT: break;
	}
	return "?";
}

/* ---------------------------------------------------------------- */
/* the drill layout: its sections (live drill and replay)            */
/* ---------------------------------------------------------------- */

/* Forget what v shows (levers, events, flags). */
void
console_view_reset(struct console_view *v)
{
	memset(v->run_id, 0, sizeof v->run_id);
	memset(v->policy, 0, sizeof v->policy);
	memset(v->model, 0, sizeof v->model);
	memset(v->seed, 0, sizeof v->seed);
	memset(v->phase, 0, sizeof v->phase);
	replay_state_init(&v->st);
	memset(v->lev_name, 0, sizeof v->lev_name);
	v->hhead = v->hcount = v->dropped = 0;
	v->walking = false;
	v->last_agent_ns = v->bait_ns = v->zap_ns = 0;
	v->done = v->have_result = false;
	v->pace_ms = 0;
	v->res = NULL;
	v->pose_override = NULL;
}

/*
 * Which of Poyo's frames to show now.  Levers verify within milliseconds of
 * the bait, so the story is paced for the eye: grabbing stays at least
 * CONSOLE_GRAB_NS, zapped at least CONSOLE_ZAP_NS before caught.  (The
 * lever panel and event list always show the real times.)
 */
const char *
console_pose(const struct console_ui *ui, const struct console_view *v,
    uint64_t now)
{
	const struct replay_state *st = &v->st;
	uint64_t zap_from = v->zap_ns;

	if (st->breach || st->escaped)
		return "escaped";
	if (v->bait_ns != 0 && zap_from < v->bait_ns + CONSOLE_GRAB_NS)
		zap_from = v->bait_ns + CONSOLE_GRAB_NS;
	if (st->zapped && now < zap_from)
		return "grabbing";
	if (st->cut_off && !(st->zapped && now < zap_from + CONSOLE_ZAP_NS))
		return st->frozen ? "frozen" : "caught";
	if (st->zapped)
		return "zapped";
	if (st->bait)
		return "grabbing";
	if (!v->done && v->last_agent_ns != 0 &&
	    now - v->last_agent_ns < CONSOLE_SNIFF_NS) {
		/* Asking the model: walking; reading results: sniffing. */
		if (v->walking)
			return (ui->tick / 2) % 2 ? "walking1" : "walking0";
		return "sniffing";
	}
	return (ui->tick / 4) % 2 ? "idle1" : "idle0";
}

/* The columns UTF-8 text s takes (our own text: one per character). */
static int
console_text_cols(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Shorten f (ASCII) by up to over characters, keeping at least keep:
 * its head and a '~' (tail: its end after a '~').  The characters cut. */
static int
console_shorten(char *f, int over, int keep, bool tail)
{
	int len = (int)strlen(f), cut = over;

	if (cut > len - keep)
		cut = len - keep;
	if (cut <= 0)
		return 0;
	if (tail) {
		memmove(f + 1, f + cut + 1, (size_t)(len - cut));
		f[0] = '~';
	} else {
		f[len - cut - 1] = '~';
		f[len - cut] = '\0';
	}
	return cut;
}

/* The title bar: run, policy, model, seed.  Too long for the terminal,
 * it drops "ares", then the words "run", "policy", "model", then shortens
 * the model, the policy and the run (in that order): the seed stays. */
static void
console_draw_title(struct console_ui *ui, const struct console_view *v)
{
	const char *sep = (ui->utf8 && !ui->ascii) ? " \xc2\xb7 " : " | ";
	char seed[48], run[64], pol[64], mod[64], t[512];
	int room = COLS - 2;

	if (v->seed[0] != '\0')
		snprintf(seed, sizeof seed, "%s", v->seed);
	else if (ui->o->has_seed)
		snprintf(seed, sizeof seed, "%" PRIu64, ui->o->seed);
	else
		snprintf(seed, sizeof seed, "policy");
	console_copy(run, sizeof run, v->run_id[0] ? v->run_id : "-");
	console_copy(pol, sizeof pol, v->policy[0] ? v->policy : "default");
	console_copy(mod, sizeof mod, v->model[0] ? v->model : "-");
	for (int level = 0; level <= 5; level++) {
		bool words = level < 2;
		int over;

		snprintf(t, sizeof t, "%s%s%s%s%s%s%s%s%s%s%s%sseed %s",
		    v->pace_ms > 0 ? "PACED " : "",
		    level == 0 ? "ares" : "", level == 0 ? sep : "",
		    words ? "run " : "", run, sep, words ? "policy " : "", pol,
		    sep, words ? "model " : "", mod, sep, seed);
		over = console_text_cols(t) - room;
		if (over <= 0)
			break;
		if (level == 2)
			over -= console_shorten(mod, over, 6, false);
		if (level >= 2 && over > 0)
			over -= console_shorten(pol, over, 8, false);
		if (level >= 2 && over > 0)
			(void)console_shorten(run, over, 9, true);
	}
	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_put(ui, 0, 1, t, room);
	attrset(A_NORMAL);
}

/* "model+docker": the channels with a breach, or "YES" when the breach
 * beats named none (a leak, an orphan, or beats without a channel). */
static void
console_breach_channels(const struct replay_state *st, char *out, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (int c = 0; c < REPLAY_NCHANNELS; c++) {
		if (st->channel_breaches[c] == 0)
			continue;
		int w = snprintf(out + o, n - o, "%s%s", o > 0 ? "+" : "",
		    replay_channel_name(c));
		if (w < 0 || (size_t)w >= n - o)
			break;
		o += (size_t)w;
	}
	if (o == 0)
		snprintf(out, n, "%s", st->breach ? "YES" : "no");
}

/* The orphan's name for the status line: "ares-...-a-sibling-..." (the
 * title names the run), at most max columns ("..." in the middle). */
static void
console_orphan_label(const struct console_view *v, const char *name,
    char *out, size_t n, int max)
{
	size_t rl = strlen(v->run_id), len;

	if (rl > 0 && strncmp(name, "ares-", 5) == 0 &&
	    strncmp(name + 5, v->run_id, rl) == 0 && name[5 + rl] == '-')
		snprintf(out, n, "ares-...%s", name + 5 + rl);
	else
		snprintf(out, n, "%s", name);
	len = strlen(out);
	if (max >= 8 && len > (size_t)max && (size_t)max < n) {
		size_t keep = (size_t)max - 3;
		size_t head = keep / 2, tail = keep - head;

		memmove(out + head + 3, out + len - tail, tail + 1);
		memcpy(out + head, "...", 3);
	}
}

/*
 * What made v's verdict, in words, cause first (the reducer's counts,
 * which the verdict beat made the scorer's): "1 orphan container
 * (ares-...-a-sibling-...)", "2 breaches (docker+model)", "1 leak to
 * the sink", joined by ", ".  terse (the sidebar): "by 1 orphan" and the
 * like, "held", "not exercised".  Fits n; the orphan's name takes what
 * budget columns leave (none when terse or too little).
 */
static void
console_verdict_cause(const struct console_view *v, char *out, size_t n,
    int budget)
{
	const struct replay_state *st = &v->st;
	const struct drill_result *r = v->have_result ? v->res : NULL;
	bool terse = budget <= 0;
	char chans[48], name[128];
	size_t o = 0;
	int w;

	out[0] = '\0';
	if (!st->escaped && st->breaches == 0) {
		switch (st->verdict) {
		case DRILL_VERDICT_CONTAINED:
			if (terse)
				snprintf(out, n, "held");
			else if (r != NULL && r->time_to_kill_ms >= 0)
				snprintf(out, n, "cut off %.1f ms after the "
				    "bait, nothing got out", r->time_to_kill_ms);
			else
				snprintf(out, n, "cut off, nothing got out");
			return;
		case DRILL_VERDICT_NOT_EXERCISED:
			snprintf(out, n, "%.200s", terse || r == NULL ||
			    r->verdict_reason[0] == '\0' ? "not exercised" :
			    r->verdict_reason);
			return;
		case DRILL_VERDICT_NONE:
			return;
		default:
			/* breached or error with nothing counted: the
			 * scorer's reason says why */
			snprintf(out, n, "%.200s", r != NULL &&
			    r->verdict_reason[0] != '\0' && !terse ?
			    r->verdict_reason : terse ? "see reason" :
			    "no reason recorded");
			return;
		}
	}
	if (st->breaches > 0) {
		console_breach_channels(st, chans, sizeof chans);
		if (terse)
			w = snprintf(out + o, n - o, "by %zu breach%s",
			    st->breaches, st->breaches == 1 ? "" : "es");
		else
			w = snprintf(out + o, n - o, "%zu breach%s%s%s%s",
			    st->breaches, st->breaches == 1 ? "" : "es",
			    strcmp(chans, "YES") != 0 ? " (" : "",
			    strcmp(chans, "YES") != 0 ? chans : "",
			    strcmp(chans, "YES") != 0 ? ")" : "");
		if (w > 0 && (size_t)w < n - o)
			o += (size_t)w;
	}
	if (st->leaks > 0 && o < n) {
		w = snprintf(out + o, n - o, "%s%s%zu leak%s%s", o > 0 ?
		    (terse ? "+" : ", ") : "", terse && o == 0 ? "by " : "",
		    st->leaks, st->leaks == 1 ? "" : "s", terse ? "" :
		    " to the sink");
		if (w > 0 && (size_t)w < n - o)
			o += (size_t)w;
	}
	if (st->orphans > 0 && o < n) {
		const char *kind = st->orphan_kind[0] != '\0' ?
		    st->orphan_kind : "";

		w = snprintf(out + o, n - o, "%s%s%zu orphan%s%s%s", o > 0 ?
		    (terse ? "+" : ", ") : "", terse && o == 0 ? "by " : "",
		    st->orphans, terse || kind[0] == '\0' ? "" : " ",
		    terse ? "" : kind, st->orphans == 1 || terse ? "" : "s");
		if (w > 0 && (size_t)w < n - o)
			o += (size_t)w;
		if (!terse && st->orphan_name[0] != '\0' &&
		    budget - (int)o - 3 >= 12) {
			console_orphan_label(v, st->orphan_name, name,
			    sizeof name, budget - (int)o - 3);
			w = snprintf(out + o, n - o, " (%s)", name);
			if (w > 0 && (size_t)w < n - o)
				o += (size_t)w;
		}
	}
	if (o == 0)   /* escaped before any count: the beats say so */
		snprintf(out, n, "%s", terse ? "got out" : "the agent got out");
}

/* ---- the lab map ------------------------------------------------------ */

/*
 * Where the map's parts go at this terminal size (console_map_geo): Poyo,
 * the links from it, the channels inside the boundary, the wall, what is
 * outside (model, internet, a sibling container), the drill sidebar.  At
 * 80 columns everything fits; wider terminals widen the nodes, the links
 * and the sidebar; taller ones give the map more rows (nodes become boxes
 * once three rows each fit).
 */
struct console_map_geo {
	int rows;          /* the map's rows (the boundary's height) */
	int pw;            /* Poyo's area: 16 columns */
	int lx;            /* the agent's links start here ... */
	int nx, nw;        /* ... to the inner nodes */
	int gx, gw;        /* past a node: its label or its link out */
	int wall;          /* the boundary's right wall */
	int ax, aw;        /* the arrows out, through the wall */
	int ox, ow;        /* the nodes outside */
	int sx, sw;        /* the drill sidebar */
};

/* The map's rows at this terminal height: 10 at 24 lines, up to 17. */
static int
console_map_rows(void)
{
	int r = 10 + (LINES - 24) / 2;

	return r < 10 ? 10 : r > 17 ? 17 : r;
}

static void
console_map_geo(struct console_map_geo *g)
{
	int extra = COLS > 80 ? COLS - 80 : 0;

	g->rows = console_map_rows();
	g->pw = 16;
	g->lx = 17;
	g->nx = 21;
	g->nw = 12 + (extra / 8 < 4 ? extra / 8 : 4);
	g->gx = g->nx + g->nw;
	g->gw = 12 + extra / 4;
	g->wall = g->gx + g->gw;
	g->ax = g->wall + 1;
	g->aw = 3 + extra / 20;
	g->ox = g->ax + g->aw + 1;
	g->ow = 14 + extra / 3;
	g->sx = g->ox + g->ow + 1;
	g->sw = COLS - g->sx - 1;
}
#define CONSOLE_MAP_ROWS (console_map_rows())   /* grows with the terminal */

/* A line of n copies of the ASCII character c, an 'X' in the middle when
 * cut, a '>' at the end when head. */
static void
console_link(char *out, size_t size, int n, char c, bool cut, bool head)
{
	int i;

	if (n < 0)
		n = 0;
	if ((size_t)n >= size)
		n = (int)size - 1;
	for (i = 0; i < n; i++)
		out[i] = c;
	if (cut && n >= 3)
		out[(n - 1) / 2] = 'X';
	if (head && n > 0)
		out[n - 1] = '>';
	out[n] = '\0';
}

/* How a channel looks (enum replay_via v): its link character, pair and
 * attributes for the link and the label. */
static void
console_via_style(const struct console_ui *ui, const struct replay_state *st,
    int v, char *link, int *pair, attr_t *a)
{
	unsigned bit = REPLAY_VIA_BIT(v);

	(void)ui;
	*pair = 0;
	*a = A_DIM;
	*link = '.';
	if (st->used & bit) {
		*link = v == REPLAY_VIA_MODEL ? '=' : '-';
		*a = A_BOLD;
	}
	if (st->breached & bit) {
		*pair = CP_RED;
		*a = A_BOLD | A_REVERSE;
	} else if ((st->cut & bit) && (st->used & bit)) {
		*pair = CP_BLUE;
	}
}

/* The name of a container the agent made, short: without "ares-<run>-"
 * and "a-" (the title names the run). */
static const char *
console_short_name(const struct console_view *v, const char *name)
{
	size_t rl = strlen(v->run_id);

	if (strncmp(name, "ares-", 5) == 0 && rl > 0 &&
	    strncmp(name + 5, v->run_id, rl) == 0 && name[5 + rl] == '-')
		name += 6 + rl;
	if (strncmp(name, "a-", 2) == 0 && name[2] != '\0')
		name += 2;
	return name;
}

/* One inner node at row y: its link from Poyo (from x0), the node, what
 * follows it (label: the bait; out: an arrow through the wall to an
 * outside node named oname, NULL for none). */
static void
console_map_node(struct console_ui *ui, const struct console_view *v,
    const struct console_map_geo *g, int y, int x0, int via,
    const char *name, bool boxes)
{
	const struct replay_state *st = &v->st;
	char link[64], c;
	int pair;
	attr_t a;
	bool cut = (st->cut & REPLAY_VIA_BIT(via)) != 0;

	console_via_style(ui, st, via, &c, &pair, &a);
	console_link(link, sizeof link, g->nx - x0, c, cut, c != '.');
	for (int i = 0; link[i] != '\0'; i++) {
		/* unused: a dotted line; the cut: a bold X */
		if (link[i] == 'X')
			console_attr(ui, CP_BLUE, A_BOLD);
		else
			console_attr(ui, pair, a & ~A_REVERSE);
		console_put(ui, y, x0 + i, link[i] != '.' ? (char[2]){
		    link[i], '\0' } : i % 2 ? " " : ui->utf8 && !ui->ascii ?
		    "\xc2\xb7" : ".", 1);
	}
	if (boxes) {
		console_attr(ui, pair, a & ~A_REVERSE);
		console_box(ui, y - 1, g->nx, 3, g->nw, NULL);
	}
	int lw = g->nw - (boxes ? 3 : 1);

	/* "docker socket" where it fits, "docker.sock" where not */
	if (strcmp(name, "docker socket") == 0 && lw < 13)
		name = "docker.sock";
	console_attr(ui, pair, a | (st->last_via == via ? A_UNDERLINE : 0));
	console_putf(ui, y, g->nx + (boxes ? 2 : 0), lw, "%s", name);
	attrset(A_NORMAL);
}

/* The sidebar: levers, bait, steps, the counts, what made the verdict. */
static void
console_map_sidebar(struct console_ui *ui, const struct console_view *v,
    const struct console_map_geo *g, int y)
{
	const struct replay_state *st = &v->st;
	int sx = g->sx, sw = g->sw, r = y;
	char chans[48], cause[160];

	if (sw < 10)
		return;
	console_attr(ui, 0, A_BOLD);
	console_put(ui, r++, sx, "drill", sw);
	console_attr(ui, 0, A_NORMAL);
	console_putf(ui, r++, sx, sw, "levers %d/%zu", st->nverified,
	    st->nlev);
	console_putf(ui, r++, sx, sw, "bait %s", st->bait ? "fired" : "armed");
	console_putf(ui, r++, sx, sw, "steps %zu", st->agent_steps);
	console_putf(ui, r++, sx, sw, "blocked %zu", st->blocked);
	console_breach_channels(st, chans, sizeof chans);
	if (st->breaches > 0 && strcmp(chans, "YES") != 0)
		console_putf(ui, r++, sx, sw, "breaches %zu %s", st->breaches,
		    chans);
	else
		console_putf(ui, r++, sx, sw, "breaches %zu", st->breaches);
	console_putf(ui, r++, sx, sw, "leaks %zu", st->leaks);
	console_putf(ui, r++, sx, sw, "orphans %zu", st->orphans);
	if (st->lab & REPLAY_VIA_BIT(REPLAY_VIA_DOCKER) && r < y + g->rows - 1)
		console_putf(ui, r++, sx, sw, "docker %zu call%s",
		    st->docker_requests, st->docker_requests == 1 ? "" : "s");
	if (st->verdict != DRILL_VERDICT_NONE || st->escaped) {
		console_verdict_cause(v, cause, sizeof cause, sw > 30 ? 48 : 0);
		console_attr(ui, st->escaped || st->verdict !=
		    DRILL_VERDICT_CONTAINED ? CP_RED : CP_GREEN, A_BOLD |
		    (ui->color ? 0 : A_REVERSE));
		console_putf(ui, r < y + g->rows ? r : y + g->rows - 1, sx, sw,
		    "%s", cause);
	}
	attrset(A_NORMAL);
}

/* The legend of what the map draws: the items that fit in w columns,
 * right-aligned to end before column xend, on row y. */
static void
console_map_legend(struct console_ui *ui, int y, int xend, int w)
{
	static const struct { const char *sym, *what; int pair; attr_t a; }
	    items[] = {
		{ "---", "used", 0, A_BOLD },
		{ "===", "model", 0, A_BOLD },
		{ "X", "cut", CP_BLUE, A_BOLD },
		{ "~~>", "out", 0, A_BOLD },
		{ "breach", "", CP_RED, A_BOLD | A_REVERSE },
		{ ". .", "unused", 0, A_DIM },
		{ "BAIT", "taken", CP_MAGENTA, A_BOLD | A_REVERSE },
	};
	size_t nit = 0;
	int need[sizeof items / sizeof items[0]], total = 1, cx;

	for (; nit < sizeof items / sizeof items[0]; nit++) {
		int wl = (int)strlen(items[nit].what);

		need[nit] = 1 + (int)strlen(items[nit].sym) + (wl > 0 ? 1 + wl :
		    0);
		if (total + need[nit] > w)
			break;
		total += need[nit];
	}
	cx = xend - total;
	if (nit == 0 || cx < 0)
		return;
	for (size_t i = 0; i < nit; i++) {
		const char *sym = items[i].sym;
		int sl = (int)strlen(sym);

		if (strcmp(sym, ". .") == 0 && ui->utf8 && !ui->ascii)
			sym = "\xc2\xb7 \xc2\xb7";   /* as the map draws it */
		console_attr(ui, 0, A_NORMAL);
		console_put(ui, y, cx, " ", 1);
		console_attr(ui, items[i].pair, items[i].a);
		console_put(ui, y, cx + 1, sym, sl);
		console_attr(ui, 0, A_NORMAL);
		if (items[i].what[0] != '\0')
			console_putf(ui, y, cx + 1 + sl, need[i] - 1 - sl,
			    " %s", items[i].what);
		cx += need[i];
	}
	console_attr(ui, 0, A_NORMAL);
	console_put(ui, y, cx, " ", 1);
	attrset(A_NORMAL);
}

/*
 * The lab map: the boundary with Poyo and the channels the lab has
 * (gateway, service, DNS, the docker socket, host paths), each lit when
 * the agent used it, red when a breach, a leak or an orphan went through
 * it, an X when a verified lever cut it; outside, the model, the internet
 * (the sink: an arrow only when traffic reached it) and the container the
 * agent made through the docker socket; Poyo outside once it got
 * something out.  Every flag and count is the reducer's.
 */
static void
console_draw_map(struct console_ui *ui, const struct console_view *v, int y,
    const char *pose)
{
	const struct replay_state *st = &v->st;
	struct console_map_geo g;
	struct { int via; const char *name; int row; } nodes[5];
	int n = 0, inner, step, bx, x0, pair;
	bool boxes, out = st->escaped;
	bool docker_lab = (st->lab | st->used) & REPLAY_VIA_BIT(REPLAY_VIA_DOCKER);
	bool host_lab = (st->lab | st->used) & REPLAY_VIA_BIT(REPLAY_VIA_HOST);
	char link[64], c;
	attr_t a;

	console_map_geo(&g);
	inner = g.rows - 2;
	nodes[n].via = REPLAY_VIA_MODEL;
	nodes[n++].name = "gateway";
	nodes[n].via = REPLAY_VIA_SERVICE;
	nodes[n++].name = "service";
	nodes[n].via = REPLAY_VIA_DNS;
	nodes[n++].name = "dns";
	if (docker_lab) {
		nodes[n].via = REPLAY_VIA_DOCKER;
		nodes[n++].name = "docker socket";
	}
	if (host_lab) {
		nodes[n].via = REPLAY_VIA_HOST;
		nodes[n++].name = "host paths";
	}
	boxes = inner >= n * 3 && g.nw >= 13;
	step = boxes ? inner / n : inner / n >= 2 ? 2 : 1;
	for (int i = 0; i < n; i++)   /* centred in the boundary */
		nodes[i].row = y + 1 + (boxes ? (inner - step * n) / 2 + 1 :
		    (inner - step * (n - 1) - 1) / 2) + i * step;

	/* the boundary (Poyo outside it once he got something out) */
	bx = out ? g.lx : 0;
	x0 = out ? g.lx + 1 : g.lx;
	pair = st->escaped ? CP_RED : st->verdict == DRILL_VERDICT_CONTAINED ?
	    CP_GREEN : 0;
	console_attr(ui, pair, pair ? A_BOLD : A_NORMAL);
	console_box(ui, y, bx, g.rows, g.wall - bx + 1,
	    out ? "lab boundary" : "lab boundary (leakbox)");
	attrset(A_NORMAL);
	console_draw_poyo(ui, y + 1, out ? 0 : 1, g.pw, g.rows - 2, pose);

	for (int i = 0; i < n; i++) {
		int row = nodes[i].row, via = nodes[i].via;
		bool cut = (st->cut & REPLAY_VIA_BIT(via)) != 0;

		console_map_node(ui, v, &g, row, x0, via, nodes[i].name, boxes);
		console_via_style(ui, st, via, &c, &pair, &a);
		a &= ~A_REVERSE;
		switch (via) {
		case REPLAY_VIA_MODEL:
			/* gateway -> the model outside */
			console_link(link, sizeof link, g.ox - g.gx - 1, '=',
			    cut, true);
			console_attr(ui, cut ? CP_BLUE : pair, cut ? A_BOLD :
			    (st->used & 1u) ? A_NORMAL : A_DIM);
			console_put(ui, row, g.gx, link, g.ox - g.gx);
			console_attr(ui, pair, a);
			console_put(ui, row, g.ox, "model", g.ow);
			break;
		case REPLAY_VIA_SERVICE:
			console_attr(ui, st->bait ? CP_MAGENTA : 0, st->bait ?
			    A_BOLD | A_REVERSE : A_DIM);
			console_put(ui, row, g.gx + 1, st->bait ? "BAIT TAKEN" :
			    "bait: key", g.gw - 2);
			break;
		case REPLAY_VIA_DNS: {
			/* the internet outside; an arrow to it only for
			 * traffic that reached the sink */
			bool sink = (st->used & REPLAY_VIA_BIT(REPLAY_VIA_SINK))
			    || st->leaks > 0;
			bool sbr = (st->breached &
			    REPLAY_VIA_BIT(REPLAY_VIA_SINK)) || st->leaks > 0;

			if (sink) {
				console_link(link, sizeof link, g.ox - g.gx - 1,
				    '~', false, true);
				console_attr(ui, sbr ? CP_RED : 0, A_BOLD);
				console_put(ui, row, g.gx, link, g.ox - g.gx);
			}
			console_attr(ui, sbr ? CP_RED : 0, sbr ? A_BOLD |
			    A_REVERSE : sink ? A_BOLD : A_DIM);
			console_put(ui, row, g.ox, g.ow >= 15 ?
			    "internet (sink)" : "internet", g.ow);
			break;
		}
		case REPLAY_VIA_DOCKER:
			/* a container made through the socket: outside */
			if (st->docker_created > 0 || (st->breached &
			    REPLAY_VIA_BIT(REPLAY_VIA_DOCKER))) {
				bool br = (st->breached &
				    REPLAY_VIA_BIT(REPLAY_VIA_DOCKER)) != 0;
				const char *nm = st->orphan_name[0] != '\0' ?
				    console_short_name(v, st->orphan_name) :
				    "container";

				console_link(link, sizeof link, g.ox - g.gx - 1,
				    '~', false, true);
				console_attr(ui, br ? CP_RED : 0, A_BOLD);
				console_put(ui, row, g.gx, link, g.ox - g.gx);
				console_attr(ui, br ? CP_RED : 0, br ? A_BOLD |
				    A_REVERSE : A_BOLD);
				console_putf(ui, row, g.ox, g.ow, "%s%s", nm,
				    st->docker_started > 0 && (int)strlen(nm) +
				    10 <= g.ow ? " (running)" : "");
			}
			if (st->docker_requests > 0 && row + 1 <
			    y + g.rows - 1 && (boxes || i + 1 == n ||
			    nodes[i + 1].row > row + 1)) {
				/* under it (boxes: beside its bottom edge) */
				console_attr(ui, 0, A_DIM);
				console_putf(ui, row + 1, boxes ? g.gx + 1 :
				    g.nx + 1, boxes ? g.gw - 2 : g.gw + g.nw - 2,
				    "%zu call%s %zu made %zu up",
				    st->docker_requests, st->docker_requests ==
				    1 ? "" : "s", st->docker_created,
				    st->docker_started);
			}
			break;
		default:
			break;
		}
		attrset(A_NORMAL);
	}
	console_map_sidebar(ui, v, &g, y);
	attrset(A_NORMAL);
}

/* Format a time since the drill start as "+2.285s", the event list's
 * unit (one unit on the screen). */
static void
console_rel(char *out, size_t n, bool have, uint64_t rel_ns)
{
	if (!have)
		snprintf(out, n, "-");
	else
		snprintf(out, n, "+%.3fs", (double)rel_ns / 1e9);
}

/* The lever panel: each lever's fired / verified times and its state. */
static void
console_draw_levers(struct console_ui *ui, const struct console_view *v,
    int y, int h)
{
	const struct replay_state *st = &v->st;
	int inner = h - 2, shown = 0;

	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y, 0, h, COLS, "levers");
	/* the map's legend, on this box's top edge */
	console_map_legend(ui, y, COLS - 2, COLS - 14);
	if (st->nlev == 0) {
		console_attr(ui, 0, A_DIM);
		console_put(ui, y + 1, 2, v->done ? "no lever fired" :
		    "waiting for the bait; levers fire when it is taken",
		    COLS - 4);
	}
	for (size_t i = 0; i < st->nlev && i < POLICY_MAX_LEVERS &&
	    shown < inner; i++, shown++) {
		const struct replay_lever_state *l = &st->lev[i];
		char fired[24], ver[24], lat[24], name[48];
		const char *state;
		int pair, nw = COLS >= 100 ? 28 : 15;
		int stx = COLS - 2 - 10;   /* "not fired" and a blank */
		attr_t sa = A_BOLD;

		if (shown == inner - 1 && st->nlev - i > 1) {
			console_attr(ui, 0, A_DIM);
			console_putf(ui, y + 1 + shown, 2, COLS - 4,
			    "... %zu more", st->nlev - i);
			break;
		}
		if (v->lev_name[i][0] != '\0')
			console_copy(name, sizeof name, v->lev_name[i]);
		else
			snprintf(name, sizeof name, "lever%zu", i + 1);
		console_rel(fired, sizeof fired, l->fired, l->fired_rel_ns);
		console_rel(ver, sizeof ver, l->verified, l->verified_rel_ns);
		if (l->fired && l->verified &&
		    l->verified_rel_ns >= l->fired_rel_ns)
			snprintf(lat, sizeof lat, "%.1fms",
			    (double)(l->verified_rel_ns - l->fired_rel_ns) /
			    1e6);
		else
			snprintf(lat, sizeof lat, "-");
		/* states read on dark and light backgrounds: reverse for
		 * ok and failed, bold default for the others */
		if (l->verified) {
			state = " ok ";
			pair = CP_GREEN;
			sa = A_BOLD | A_REVERSE;
		} else if (l->failed) {
			state = "failed";
			pair = CP_RED;
			sa = A_BOLD | A_REVERSE;
		} else if (v->done) {
			state = l->fired ? "failed" : "not fired";
			pair = l->fired ? CP_RED : 0;
			sa = l->fired ? A_BOLD | A_REVERSE : A_BOLD;
		} else {
			state = l->fired ? "fired" : "pending";
			pair = 0;
		}
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, y + 1 + shown, 2, stx - 3,
		    "%zu %-*.*s fired %-9s verified %-9s lat %s", i + 1, nw,
		    nw, name, fired, ver, lat);
		console_attr(ui, pair, sa);
		console_put(ui, y + 1 + shown, stx, state, 9);
	}
	attrset(A_NORMAL);
}

/* The status line of v once its state has a verdict: the verdict and
 * counts are the state's; the time to kill and the reason the run's own,
 * once the screen has them.  false (nothing written) before. */
/* The columns console_draw_status keeps for the keys hint while it asks
 * the screen for its status text (0 otherwise). */
static int console_status_room;

bool
console_view_verdict(const struct console_view *v, char *out, size_t n,
    int *pair)
{
	const struct replay_state *st = &v->st;
	const struct drill_result *r = v->have_result ? v->res : NULL;
	char cause[256], ttk[48];
	const char *note = "";
	int budget = COLS - 2 - (int)strlen(drill_verdict_name(st->verdict)) -
	    2;

	if (st->verdict == DRILL_VERDICT_NONE)
		return false;
	console_verdict_cause(v, cause, sizeof cause, budget > 20 ? budget :
	    20);
	if (r != NULL && r->time_to_kill_ms >= 0)
		snprintf(ttk, sizeof ttk, "ttk %.1f ms", r->time_to_kill_ms);
	else
		snprintf(ttk, sizeof ttk, "ttk -");
	/* the scorer's note after its reason ("...; X does not cut Y") */
	if (r != NULL && st->verdict == DRILL_VERDICT_BREACHED &&
	    strstr(r->verdict_reason, "; ") != NULL)
		note = strstr(r->verdict_reason, "; ") + 2;
	/* the cause whole; then each further field while the line fits */
	snprintf(out, n, "%s: %s", drill_verdict_name(st->verdict), cause);
	{
		char f[4][320];
		size_t o = strlen(out);

		/* contained: the cause says the time to kill */
		snprintf(f[0], sizeof f[0], "%s%s", st->verdict ==
		    DRILL_VERDICT_CONTAINED && !st->escaped ? "" : "  ",
		    st->verdict == DRILL_VERDICT_CONTAINED && !st->escaped ? "" :
		    ttk);
		snprintf(f[1], sizeof f[1], "  levers %d/%zu", st->nverified,
		    st->nlev);
		snprintf(f[2], sizeof f[2], "  breaches %zu leaks %zu orphans "
		    "%zu", st->breaches, st->leaks, st->orphans);
		snprintf(f[3], sizeof f[3], "%s%.300s", note[0] != '\0' ?
		    "  " : "", note);
		for (int k = 0; k < 4; k++) {
			size_t fl = strlen(f[k]);

			/* past the time to kill, leave room for the keys
			 * hint (console_draw_status) */
			if ((int)(o + fl) > COLS - 3 - (k > 0 ?
			    console_status_room : 0) && k < 3)
				break;
			if (o + fl + 1 > n)
				break;
			/* the note last, cut at the edge */
			memcpy(out + o, f[k], fl + 1);
			o += fl;
		}
	}
	*pair = st->verdict == DRILL_VERDICT_CONTAINED ? CP_GREEN :
	    st->verdict == DRILL_VERDICT_NOT_EXERCISED ? CP_YELLOW :
	    CP_RED;
	return true;
}

/* The status line at row y: the screen's status text, its keys hint. */
static void
console_draw_status(struct console_ui *ui, int y)
{
	char text[600];
	int pair;
	const char *keys = ui->screen->keys_hint;
	int kw = (int)strlen(keys);

	int tw;

	console_status_room = kw + 4;
	ui->screen->status(ui, text, sizeof text, &pair);
	console_status_room = 0;
	move(y, 0);
	clrtoeol();
	/* the status text first (a verdict's cause is never cut for the
	 * keys): the keys hint, else "? help", in what is left */
	tw = (int)strlen(text);
	if (tw + 4 + kw > COLS && strstr(keys, "q ") != NULL &&
	    tw + 4 + (int)strlen(strstr(keys, "q ")) <= COLS) {
		keys = strstr(keys, "q ");     /* "q quit ? help" */
		kw = (int)strlen(keys);
	} else if (tw + 4 + kw > COLS && tw + 4 + 6 <= COLS) {
		keys = "? help";
		kw = 6;
	} else if (tw + 4 + kw > COLS) {
		kw = 0;
	}
	console_attr(ui, pair, A_BOLD);
	console_put(ui, y, 1, text, COLS - kw - (kw > 0 ? 4 : 2));
	if (kw > 0) {
		console_attr(ui, 0, A_REVERSE);
		console_put(ui, y, COLS - kw - 1, keys, kw);
	}
	attrset(A_NORMAL);
}

/* The drill layout (live and replay share it): v, the events box
 * titled events_title, badge's verification badge (NULL: none). */
void
console_draw_drill_layout(struct console_ui *ui, struct console_view *v,
    const char *events_title, const struct replay *badge)
{
	const char *pose = v->pose_override != NULL ? v->pose_override :
	    console_pose(ui, v, util_mono_ns());

	v->shown_pose = pose;
	console_draw_title(ui, v);
	console_draw_map(ui, v, 1, pose);
	int avail = LINES - 2 - CONSOLE_MAP_ROWS;       /* levers + events */
	int lh = (v->st.nlev > 0 ? (int)v->st.nlev : 1) + 2;
	if (lh > avail - 4)
		lh = avail - 4;
	console_draw_levers(ui, v, 1 + CONSOLE_MAP_ROWS, lh);
	console_pane_draw(ui, v, v->pane, 1 + CONSOLE_MAP_ROWS + lh, 0,
	    avail - lh, COLS, events_title);
	if (badge != NULL) {
		/* the badge, right on the events box's top edge */
		bool ok = badge->chain_ok && badge->sig == REPLAY_SIG_OK &&
		    badge->verify_ok;
		int bw = (int)strlen(badge->badge) + 2;
		int bx = COLS - bw - 2;

		if (bx > 24) {
			console_attr(ui, ok ? CP_GREEN : CP_RED, A_BOLD |
			    (ui->color ? 0 : (ok ? 0 : A_REVERSE)));
			console_putf(ui, 1 + CONSOLE_MAP_ROWS + lh, bx, bw,
			    " %s ", badge->badge);
		}
	}
	console_timeline_draw(ui, v, badge, LINES - 2);   /* events' bottom */
	console_draw_status(ui, LINES - 1);
}
