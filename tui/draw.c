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
#define CONSOLE_MAP_ROWS   10

/* ---------------------------------------------------------------- */
/* drawing helpers                                                   */
/* ---------------------------------------------------------------- */

/* Set the attributes a, with colour pair pair when colour is on. */
void
console_attr(const struct console_ui *ui, int pair, attr_t a)
{
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
	for (short c = 1; c <= 7; c++)
		init_pair(c, c, ui->def_bg);
	init_pair(CP_TITLE, COLOR_WHITE, COLOR_MAGENTA);
	ui->c256 = COLORS >= 256;
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

/* Short label of a beat kind for the event list. */
static const char *
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

	if (st->breach)
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

/* The title bar: run, policy, model, seed. */
static void
console_draw_title(struct console_ui *ui, const struct console_view *v)
{
	const char *sep = (ui->utf8 && !ui->ascii) ? " \xc2\xb7 " : " | ";
	char seed[48];

	if (v->seed[0] != '\0')
		snprintf(seed, sizeof seed, "%s", v->seed);
	else if (ui->o->has_seed)
		snprintf(seed, sizeof seed, "%" PRIu64, ui->o->seed);
	else
		snprintf(seed, sizeof seed, "policy");
	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "ares%srun %s%spolicy %s%smodel %s%s"
	    "seed %s", sep, v->run_id[0] ? v->run_id : "-", sep,
	    v->policy[0] ? v->policy : "default", sep,
	    v->model[0] ? v->model : "-", sep, seed);
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

/* The lab map: boundary with Poyo, gateway, service; model and sink out.
 * Every flag and count comes from the reducer's state. */
static void
console_draw_map(struct console_ui *ui, const struct console_view *v, int y,
    const char *pose)
{
	const struct replay_state *st = &v->st;
	const int bw = 42;          /* boundary width */
	const int gx = 22, gw = 13; /* gateway/service boxes */
	const int ox = 49, ow = 13; /* model/sink boxes outside */
	bool deny = st->zapped || st->cut_off;
	bool model_breach = st->channel_breaches[REPLAY_CHANNEL_MODEL] > 0;
	int boundary_pair = 0;
	char chans[48];

	if (st->breach)
		boundary_pair = CP_RED;
	else if (st->verdict == DRILL_VERDICT_CONTAINED)
		boundary_pair = CP_GREEN;
	console_attr(ui, boundary_pair, boundary_pair ? A_BOLD : A_NORMAL);
	console_box(ui, y, 0, CONSOLE_MAP_ROWS, bw, "lab boundary (leakbox)");
	console_put(ui, y + CONSOLE_MAP_ROWS - 1, 7, " poyo ", 6);

	attrset(A_NORMAL);
	console_draw_poyo(ui, y + 1, 2, 16, CONSOLE_MAP_ROWS - 2, pose);

	/* agent -> gateway link */
	console_attr(ui, deny ? CP_RED : 0, deny ? A_BOLD : A_DIM);
	console_put(ui, y + 2, 18, deny ? "-X->" : "--->", 4);
	/* gateway and the model beyond it */
	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y + 1, gx, 3, gw, NULL);
	console_put(ui, y + 2, gx + 3, "gateway", gw - 4);
	console_box(ui, y + 1, ox, 3, ow, NULL);
	console_put(ui, y + 2, ox + 3, "model", ow - 4);
	/* a model-channel breach: the agent got through after the cut-off */
	console_attr(ui, deny || model_breach ? CP_RED : 0,
	    deny || model_breach ? A_BOLD : A_DIM);
	console_put(ui, y + 2, gx + gw, model_breach ? "~~~~~~~~~~~~~>" :
	    deny ? "=====X=======>" : "=============>", ox - gx - gw);
	/* service with the bait */
	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y + 5, gx, 4, gw, NULL);
	console_put(ui, y + 6, gx + 3, "service", gw - 4);
	console_attr(ui, st->bait ? CP_MAGENTA : 0,
	    st->bait ? A_BOLD | A_REVERSE : A_DIM);
	console_put(ui, y + 7, gx + 2, st->bait ? "BAIT TAKEN" : "bait: key",
	    gw - 3);
	/* the internet (sink) outside the boundary */
	console_attr(ui, st->breach ? CP_RED : 0, st->breach ? A_BOLD : A_DIM);
	console_box(ui, y + 5, ox, 4, ow + 2, NULL);
	console_attr(ui, st->breach ? CP_RED : 0, A_NORMAL);
	console_put(ui, y + 6, ox + 2, "internet", ow - 2);
	console_put(ui, y + 7, ox + 2, "(sink)", ow - 2);
	if (st->breach) {
		console_attr(ui, CP_RED, A_BOLD);
		console_put(ui, y + 7, gx + gw, "~~~~~~~~~~~~~>", ox - gx - gw);
	}
	/* drill summary to the right, when there is room */
	int sx = ox + ow + 4, sw = COLS - sx - 1;
	if (sw >= 10) {
		console_breach_channels(st, chans, sizeof chans);
		console_attr(ui, 0, A_BOLD);
		console_put(ui, y + 1, sx, "drill", sw);
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, y + 2, sx, sw, "levers %d/%zu", st->nverified,
		    st->nlev);
		console_putf(ui, y + 3, sx, sw, "bait %s", st->bait ? "fired" :
		    "armed");
		console_putf(ui, y + 4, sx, sw, "breach %s", chans);
		console_putf(ui, y + 5, sx, sw, "steps %zu", st->agent_steps);
		console_putf(ui, y + 6, sx, sw, "blocked %zu", st->blocked);
		console_putf(ui, y + 7, sx, sw, "leaks %zu", st->leaks);
		if (st->orphans > 0)
			console_putf(ui, y + 8, sx, sw, "orphans %zu",
			    st->orphans);
	}
	attrset(A_NORMAL);
}

/* Format a duration since the drill start as "+123.4ms". */
static void
console_rel(char *out, size_t n, bool have, uint64_t rel_ns)
{
	if (!have)
		snprintf(out, n, "-");
	else
		snprintf(out, n, "+%.1fms", (double)rel_ns / 1e6);
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
	if (st->nlev == 0) {
		console_attr(ui, 0, A_DIM);
		console_put(ui, y + 1, 2, v->done ? "no lever fired" :
		    "waiting for the bait; levers fire when it is taken",
		    COLS - 4);
	}
	for (size_t i = 0; i < st->nlev && i < POLICY_MAX_LEVERS &&
	    shown < inner; i++, shown++) {
		const struct replay_lever_state *l = &st->lev[i];
		char fired[24], ver[24], lat[24], name[24];
		const char *state;
		int pair;

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
		if (l->verified) {
			state = "ok";
			pair = CP_GREEN;
		} else if (l->failed) {
			state = "failed";
			pair = CP_RED;
		} else if (v->done) {
			state = l->fired ? "failed" : "not fired";
			pair = l->fired ? CP_RED : 0;
		} else {
			state = "pending";
			pair = CP_YELLOW;
		}
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, y + 1 + shown, 2, COLS - 4,
		    "%zu %-15.15s fired %-10s verified %-10s lat %-8s",
		    i + 1, name, fired, ver, lat);
		console_attr(ui, pair, A_BOLD);
		console_put(ui, y + 1 + shown, 70, state, COLS - 71);
	}
	attrset(A_NORMAL);
}

/* The event list: the last beats that fit, in a box titled title. */
static void
console_draw_events(struct console_ui *ui, const struct console_view *v,
    int y, int h, const char *title)
{
	int inner = h - 2;
	size_t n = v->hcount < (size_t)inner ? v->hcount : (size_t)inner;

	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y, 0, h, COLS, title);
	for (size_t i = 0; i < n; i++) {
		const struct drill_beat *b =
		    &v->hist[(v->hhead + v->hcount - n + i) % CONSOLE_HIST];
		int pair;
		attr_t a;
		const char *label = console_kind_label(b->kind, &pair, &a);
		int row = y + 1 + (int)i;

		console_attr(ui, 0, A_DIM);
		console_putf(ui, row, 2, 11, "+%9.3fs", (double)b->t_rel_ns / 1e9);
		console_attr(ui, pair, a);
		console_put(ui, row, 14, label, 9);
		console_put(ui, row, 23, b->text, COLS - 25);
	}
	attrset(A_NORMAL);
}

/* The status line of v once its state has a verdict: the verdict and
 * counts are the state's; the time to kill and the reason the run's own,
 * once the screen has them.  false (nothing written) before. */
bool
console_view_verdict(const struct console_view *v, char *out, size_t n,
    int *pair)
{
	const struct replay_state *st = &v->st;
	const struct drill_result *r = v->have_result ? v->res : NULL;
	char ttk[48];

	if (st->verdict == DRILL_VERDICT_NONE)
		return false;
	if (r != NULL && r->time_to_kill_ms >= 0)
		snprintf(ttk, sizeof ttk, "time to kill %.1f ms",
		    r->time_to_kill_ms);
	else
		snprintf(ttk, sizeof ttk, "time to kill -");
	snprintf(out, n, "verdict: %s  %s  breaches %zu leaks %zu  %s",
	    drill_verdict_name(st->verdict), ttk, st->breaches,
	    st->leaks, r != NULL ? r->verdict_reason : "");
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

	ui->screen->status(ui, text, sizeof text, &pair);
	move(y, 0);
	clrtoeol();
	console_attr(ui, pair, A_BOLD);
	console_put(ui, y, 1, text, COLS - kw - 4);
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, y, COLS - kw - 1, keys, kw);
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
	console_draw_events(ui, v, 1 + CONSOLE_MAP_ROWS + lh, avail - lh,
	    events_title);
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
