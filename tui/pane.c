/*
 * pane.c - the drill layout's event pane, live and replayed, with the
 * habits of less and k9s: j/k, Up/Down, PgUp/PgDn, Home/End and the
 * mouse wheel scroll it on its own (End follows the newest beat again),
 * Enter opens the selected beat's text and evidence line in a pager, '/'
 * searches the beats' texts (n/N), ':N' goes to beat N, y/Y copy the run
 * id / dir with OSC 52, Esc goes back one level.  The math that needs no
 * terminal is in pane_text.c.  UI thread only.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

#define CONSOLE_PANE_WHEEL 3    /* beats a wheel notch scrolls */

/* Follow the newest beat, nothing typed, no pager (tui.h). */
void
console_pane_reset(struct console_pane *p)
{
	console_pane_lines_free(p->pager, p->npager);
	free(p->pager_text);
	memset(p, 0, sizeof *p);
	p->follow = true;
}

/* Home and End as tmux and other terminals send them whatever TERM's
 * terminfo says (tmux sends ESC [ 1 ~ / ESC [ 4 ~ even under TERM
 * xterm-256color, whose terminfo has ESC O H / ESC O F), so they never
 * arrive as Esc and three keys. */
void
console_pane_keys_init(void)
{
	static const struct { const char *seq; int key; } k[] = {
		{ "\033[1~", KEY_HOME }, { "\033[4~", KEY_END },
		{ "\033[7~", KEY_HOME }, { "\033[8~", KEY_END },
		{ "\033[H", KEY_HOME }, { "\033[F", KEY_END },
		{ "\033OH", KEY_HOME }, { "\033OF", KEY_END },
	};

	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (key_defined(k[i].seq) == 0)
			define_key(k[i].seq, k[i].key);
}

/* The pane takes every key (a prompt or the pager is up). */
bool
console_pane_modal(const struct console_pane *p)
{
	return p != NULL && p->mode != CONSOLE_PANE_LIST;
}

/* ---- drawing ------------------------------------------------------- */

/* The text of a beat in maxcols columns from x, with pat's first match
 * highlighted; a match past the edge is brought into view ("..." and
 * the text from a little before it).  sel_w > 0: the row is the
 * selection, columns sel_x .. sel_x+sel_w-1 in reverse. */
static void
console_pane_text(struct console_ui *ui, const struct console_pane *p,
    const char *text, int row, int x, int maxcols, int sel_x, int sel_w)
{
	size_t off = 0, len = 0;
	int c0, cw;
	bool match = console_pane_match(text, p->pat, &off, &len);

	if (match) {
		c0 = console_pane_cols(text, off, ui->utf8);
		cw = console_pane_cols(text + off, len, ui->utf8);
		if (c0 + cw > maxcols && maxcols > 12) {
			/* from 8 bytes before the match, on a character
			 * boundary */
			size_t from = off > 8 ? off - 8 : 0;

			while (from > 0 &&
			    ((unsigned char)text[from] & 0xc0) == 0x80)
				from--;
			console_put(ui, row, x, "...", 3);
			text += from;
			off -= from;
			x += 3;
			maxcols -= 3;
		}
	}
	console_put(ui, row, x, text, maxcols);
	if (sel_w > 0)
		mvchgat(row, sel_x, sel_w, A_REVERSE, 0, NULL);
	if (!match)
		return;
	c0 = console_pane_cols(text, off, ui->utf8);
	cw = console_pane_cols(text + off, len, ui->utf8);
	if (c0 >= maxcols)
		return;
	if (c0 + cw > maxcols)
		cw = maxcols - c0;
	mvchgat(row, x + c0, cw, sel_w > 0 ? A_BOLD | A_UNDERLINE :
	    A_REVERSE | A_BOLD, 0,
	    NULL);
}

/* The events box (tui.h). */
void
console_pane_draw(struct console_ui *ui, const struct console_view *v,
    struct console_pane *p, int y, int x, int h, int w, const char *title)
{
	static struct console_pane tail = { .follow = true };
	int rows = h - 2;
	size_t base = v->hbase, n = v->hcount;
	char t[128];

	if (p == NULL) {
		p = &tail;
		p->follow = true;
	}
	if (rows < 1)
		return;
	console_pane_fit(p, base, n, rows);
	p->rows = rows;
	if (!p->follow && n > 0) {
		size_t endi = p->top + (size_t)rows;
		const char *rest = title;

		if (endi > base + n)
			endi = base + n;
		if (strncmp(rest, "events", 6) == 0)
			rest += 6;
		snprintf(t, sizeof t, "events %zu-%zu/%zu%s", p->top + 1, endi,
		    base + n, rest);
		title = t;
	}
	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y, x, h, w, title);
	for (int r = 0; r < rows; r++) {
		size_t i = p->top + (size_t)r;
		const struct drill_beat *b;
		int pair, row = y + 1 + r;
		attr_t a;
		const char *label;
		bool selected;

		if (i >= base + n)
			break;
		b = &v->hist[(v->hhead + (i - base)) % CONSOLE_HIST];
		label = console_kind_label(b->kind, &pair, &a);
		selected = !p->follow && i == p->sel;
		console_attr(ui, 0, A_DIM);
		console_putf(ui, row, x + 2, 11, "+%9.3fs",
		    (double)b->t_rel_ns / 1e9);
		console_attr(ui, pair, a);
		console_put(ui, row, x + 14, label, 9);
		console_pane_text(ui, p, b->text, row, x + 23, w - 25, x + 1,
		    selected ? w - 2 : 0);
	}
	attrset(A_NORMAL);
}

/* Wrap the pager's text for the terminal's width (again after a
 * resize). */
static void
console_pane_pager_wrap(struct console_ui *ui, struct console_pane *p)
{
	int w = COLS - 2;

	if (p->pager != NULL && p->pager_w == w)
		return;
	console_pane_lines_free(p->pager, p->npager);
	p->npager = console_pane_wrap(p->pager_text, w, ui->utf8,
	    CONSOLE_PANE_PAGER_MAX, &p->pager);
	p->pager_w = w;
}

/* Rows of text the pager shows. */
static size_t
console_pane_pager_rows(void)
{
	return LINES > 3 ? (size_t)(LINES - 2) : 1;
}

/* Keep the pager's first line in range. */
static void
console_pane_pager_clamp(struct console_pane *p)
{
	size_t rows = console_pane_pager_rows();

	if (p->npager <= rows)
		p->ptop = 0;
	else if (p->ptop > p->npager - rows)
		p->ptop = p->npager - rows;
}

/* The pager over the whole screen: title, lines, its keys. */
static void
console_pane_pager_draw(struct console_ui *ui, struct console_pane *p)
{
	size_t rows = console_pane_pager_rows(), endl;
	const char *keys = "j/k line  spc/b page  g/G top/end  q/esc back";
	int kw = (int)strlen(keys);

	console_pane_pager_wrap(ui, p);
	console_pane_pager_clamp(p);
	erase();
	endl = p->ptop + rows < p->npager ? p->ptop + rows : p->npager;
	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "%s  lines %zu-%zu/%zu",
	    p->pager_title, p->npager ? p->ptop + 1 : 0, endl, p->npager);
	attrset(A_NORMAL);
	for (size_t i = p->ptop; i < endl; i++)
		console_put(ui, 1 + (int)(i - p->ptop), 1, p->pager[i],
		    COLS - 2);
	move(LINES - 1, 0);
	clrtoeol();
	console_attr(ui, 0, A_DIM);
	if (endl >= p->npager)
		console_put(ui, LINES - 1, 1, "(end)", COLS - kw - 4);
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, LINES - 1, COLS - kw - 1, keys, kw);
	attrset(A_NORMAL);
}

/* The status line's left part: text in pair (the screen's keys hint
 * stays on the right). */
static void
console_pane_status_text(struct console_ui *ui, const char *text, int pair,
    const char *right)
{
	const char *keys = right != NULL ? right : ui->screen->keys_hint;
	int kw = keys != NULL ? (int)strlen(keys) : 0;
	int y = LINES - 1;

	move(y, 0);
	clrtoeol();
	console_attr(ui, pair, A_BOLD);
	console_put(ui, y, 1, text, COLS - kw - 4);
	if (kw > 0) {
		console_attr(ui, 0, A_REVERSE);
		console_put(ui, y, COLS - kw - 1, keys, kw);
	}
	attrset(A_NORMAL);
}

/* After the layout: the pager, or the prompt / message (tui.h). */
void
console_pane_overlay(struct console_ui *ui, struct console_pane *p)
{
	char line[CONSOLE_PANE_INPUT + 16];

	ui->keys_raw = console_pane_modal(p);
	if (p->mode == CONSOLE_PANE_PAGER) {
		console_pane_pager_draw(ui, p);
	} else if (p->mode == CONSOLE_PANE_SEARCH ||
	    p->mode == CONSOLE_PANE_GOTO) {
		snprintf(line, sizeof line, "%s%s_",
		    p->mode == CONSOLE_PANE_SEARCH ? "/" : ":", p->input);
		console_pane_status_text(ui, line, 0, p->mode ==
		    CONSOLE_PANE_SEARCH ? "enter search  esc cancel" :
		    "enter go to beat  esc cancel");
	} else if (p->msg[0] != '\0') {
		console_pane_status_text(ui, p->msg, p->msg_pair, NULL);
	}
}

/* ---- keys ------------------------------------------------------------ */

/* Say something on the status line until the next key. */
static void
console_pane_say(struct console_pane *p, int pair, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
console_pane_say(struct console_pane *p, int pair, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof p->msg, fmt, ap);
	va_end(ap);
	p->msg_pair = pair;
}

/* The list's bounds: base (first beat number - 1) and length. */
static void
console_pane_bounds(const struct console_pane_src *src, size_t *base,
    size_t *n)
{
	*base = src->v->hbase;
	*n = src->v->hcount;
}

/* Beat i (absolute) of the list, or NULL when it is not in it. */
static const struct drill_beat *
console_pane_beat(const struct console_pane_src *src, size_t i)
{
	const struct console_view *v = src->v;

	if (src->rp != NULL && i < src->rp->nbeats)
		return &src->rp->beats[i];
	if (i < v->hbase || i >= v->hbase + v->hcount)
		return NULL;
	return &v->hist[(v->hhead + (i - v->hbase)) % CONSOLE_HIST];
}

/* The search's items: the replay's every beat, or the live list. */
static const char *
console_pane_item_text(const void *ctx, size_t i)
{
	const struct console_pane_src *src = ctx;
	const struct drill_beat *b = console_pane_beat(src,
	    src->rp != NULL ? i : src->v->hbase + i);

	return b != NULL ? b->text : "";
}

/* Select beat i (absolute): a replay shows it first when the list does
 * not hold it (past its end, or before the last CONSOLE_HIST). */
static void
console_pane_select(struct console_pane *p, const struct console_pane_src *src,
    size_t i)
{
	size_t base, n;

	console_pane_bounds(src, &base, &n);
	if (src->go != NULL && (n == 0 || i >= base + n || i < base))
		src->go(i);
	console_pane_bounds(src, &base, &n);
	if (n == 0)
		return;
	p->sel = i;
	p->follow = false;
	console_pane_fit(p, base, n, p->rows > 0 ? p->rows : 1);
	p->follow = p->sel == base + n - 1;
}

/* n / N (dir +1 / -1) and a new search: select the next match. */
static void
console_pane_search(struct console_pane *p, const struct console_pane_src *src,
    int dir, bool fresh)
{
	size_t base, n, total, from, count = 0, nth = 0;
	bool wrapped;
	long m;

	if (p->pat[0] == '\0') {
		console_pane_say(p, CP_YELLOW, "no search yet: / to search");
		return;
	}
	console_pane_bounds(src, &base, &n);
	total = src->rp != NULL ? src->rp->nbeats : n;
	from = src->rp != NULL ? p->sel : (p->sel >= base ? p->sel - base : 0);
	if (p->follow && src->rp == NULL)
		from = n > 0 ? n - 1 : 0;
	if (fresh && total > 0)   /* a new search includes the selection */
		from = dir > 0 ? (from + total - 1) % total : (from + 1) % total;
	m = console_pane_find(p->pat, total, from, dir, console_pane_item_text,
	    src, &wrapped);
	if (m < 0) {
		console_pane_say(p, CP_RED, "/%s: not found", p->pat);
		return;
	}
	for (size_t i = 0; i < total; i++)
		if (console_pane_match(console_pane_item_text(src, i), p->pat,
		    NULL, NULL)) {
			count++;
			if (i <= (size_t)m)
				nth++;
		}
	console_pane_select(p, src, src->rp != NULL ? (size_t)m :
	    base + (size_t)m);
	console_pane_say(p, 0, "/%s: match %zu/%zu, beat %zu%s", p->pat, nth,
	    count, p->sel + 1, wrapped && !fresh ? " (wrapped)" : "");
}

/* :N: show beat N (1-based). */
static void
console_pane_goto(struct console_pane *p, const struct console_pane_src *src)
{
	size_t base, n, total;
	char *end;
	unsigned long long want = strtoull(p->input, &end, 10);

	console_pane_bounds(src, &base, &n);
	total = src->rp != NULL ? src->rp->nbeats : base + n;
	if (p->input[0] == '\0' || *end != '\0' || want == 0 ||
	    want > total || (src->rp == NULL && want <= base)) {
		console_pane_say(p, CP_RED, ":%s: no such beat (%zu-%zu)",
		    p->input, src->rp != NULL || base == 0 ? (size_t)1 :
		    base + 1, total);
		return;
	}
	if (src->go != NULL) {
		src->go((size_t)want - 1);
		p->follow = true;    /* beat N is the list's newest */
	} else {
		console_pane_select(p, src, (size_t)want - 1);
	}
	console_pane_say(p, 0, "beat %llu", want);
}

/* y / Y: copy what (run id or dir) with OSC 52; say what was done. */
static void
console_pane_copy(struct console_pane *p, const char *what, const char *s)
{
	char seq[8 + (CONSOLE_PANE_COPY_MAX + 2) / 3 * 4 + 8];
	int len;

	if (s == NULL || s[0] == '\0') {
		console_pane_say(p, CP_YELLOW, "no %s yet", what);
		return;
	}
	len = console_pane_osc52(s, seq, sizeof seq);
	if (len < 0) {
		console_pane_say(p, CP_RED, "cannot copy the %s (not printable "
		    "ASCII or longer than %d bytes)", what,
		    CONSOLE_PANE_COPY_MAX);
		return;
	}
	/* straight to the terminal: ncurses' own output is flushed */
	fwrite(seq, 1, (size_t)len, stdout);
	fflush(stdout);
	console_pane_say(p, CP_GREEN, "copied %s (OSC 52)", what);
}

/* The evidence line of beat b for the pager: replay: the line it came
 * from; live: the run dir's evidence.jsonl as far as it is written, the
 * line whose beat has b's kind and text, nearest in time.  The line
 * number, 0 when none (*why says why). */
static uint32_t
console_pane_evline(const struct console_pane_src *src, size_t i,
    const struct drill_beat *b, char *why, size_t nwhy)
{
	struct errbuf e = { 0 };
	struct replay *rp;
	uint32_t best = 0;
	uint64_t bestd = UINT64_MAX;

	if (src->rp != NULL) {
		if (src->rp->lines != NULL && i < src->rp->nbeats)
			return src->rp->lines[i];
		snprintf(why, nwhy, "no evidence line for this beat");
		return 0;
	}
	if (src->run_dir == NULL || src->run_dir[0] == '\0') {
		snprintf(why, nwhy, "the run directory is not known yet");
		return 0;
	}
	rp = replay_load(src->run_dir, NULL, &e);
	if (rp == NULL) {
		console_copy(why, nwhy, e.msg);
		return 0;
	}
	for (size_t j = 0; j < rp->nbeats; j++) {
		const struct drill_beat *c = &rp->beats[j];
		uint64_t d;

		if (c->kind != b->kind || strcmp(c->text, b->text) != 0)
			continue;
		d = c->t_ns > b->t_ns ? c->t_ns - b->t_ns : b->t_ns - c->t_ns;
		if (d < bestd) {
			bestd = d;
			best = rp->lines[j];
		}
	}
	replay_free(rp);
	if (best == 0)
		snprintf(why, nwhy, "not in evidence.jsonl (yet)");
	return best;
}

/* Enter: the selected beat's text and evidence line in the pager. */
static void
console_pane_open(struct console_pane *p, const struct console_pane_src *src)
{
	size_t base, n;
	const struct drill_beat *b;
	char why[300] = "", *path, *raw = NULL, *pretty = NULL, *ev;
	uint32_t line;
	bool cut = false;
	int pair;
	attr_t a;

	console_pane_bounds(src, &base, &n);
	if (n == 0) {
		console_pane_say(p, CP_YELLOW, "no event yet");
		return;
	}
	console_pane_fit(p, base, n, p->rows > 0 ? p->rows : 1);
	b = console_pane_beat(src, p->sel);
	if (b == NULL)
		return;
	line = console_pane_evline(src, p->sel, b, why, sizeof why);
	path = xasprintf("%s/evidence.jsonl", src->rp != NULL ?
	    src->rp->run_dir : src->run_dir != NULL ? src->run_dir : ".");
	if (line > 0) {
		struct errbuf e = { 0 };

		raw = console_pane_read_line(path, line, CONSOLE_PANE_LINE_MAX,
		    &cut, &e);
		if (raw == NULL)
			console_copy(why, sizeof why, e.msg);
		else
			pretty = console_pane_json_pretty(raw);
	}
	if (line > 0)
		ev = xasprintf("evidence.jsonl line %u%s\n%s", line, cut ?
		    " (cut at 64 KiB)" : "", pretty != NULL ? pretty : why);
	else
		ev = xasprintf("evidence: %s", why);
	free(p->pager_text);
	p->pager_text = xasprintf("beat %zu  +%.3fs  %s%s%s\n\ntext\n  %s\n\n"
	    "%s\n", p->sel + 1, (double)b->t_rel_ns / 1e9,
	    console_kind_label(b->kind, &pair, &a),
	    b->channel[0] != '\0' ? "  channel " : "", b->channel, b->text,
	    ev);
	free(ev);
	snprintf(p->pager_title, sizeof p->pager_title, "beat %zu of %zu",
	    p->sel + 1, src->rp != NULL ? src->rp->nbeats : base + n);
	free(raw);
	free(pretty);
	free(path);
	console_pane_lines_free(p->pager, p->npager);
	p->pager = NULL;
	p->npager = 0;
	p->ptop = 0;
	p->pager_w = 0;
	p->mode = CONSOLE_PANE_PAGER;
}

/* A key in the pager: scroll, or close it.  Takes every key. */
static void
console_pane_pager_key(struct console_pane *p, int ch)
{
	size_t rows = console_pane_pager_rows();
	MEVENT me;

	switch (ch) {
	case 'j': case KEY_DOWN: case '\r': case '\n': case KEY_ENTER:
		p->ptop++;
		break;
	case 'k': case KEY_UP:
		p->ptop = p->ptop > 0 ? p->ptop - 1 : 0;
		break;
	case ' ': case 'f': case KEY_NPAGE:
		p->ptop += rows;
		break;
	case 'b': case KEY_PPAGE:
		p->ptop = p->ptop > rows ? p->ptop - rows : 0;
		break;
	case 'g': case '<': case KEY_HOME:
		p->ptop = 0;
		break;
	case 'G': case '>': case KEY_END:
		p->ptop = p->npager;
		break;
	case KEY_MOUSE:
		if (getmouse(&me) != OK)
			break;
		if (me.bstate & BUTTON4_PRESSED)
			p->ptop = p->ptop > CONSOLE_PANE_WHEEL ?
			    p->ptop - CONSOLE_PANE_WHEEL : 0;
#ifdef BUTTON5_PRESSED
		else if (me.bstate & BUTTON5_PRESSED)
			p->ptop += CONSOLE_PANE_WHEEL;
#endif
		break;
	case 'q': case 'Q': case 27:
		p->mode = CONSOLE_PANE_LIST;
		return;
	default:
		return;
	}
	console_pane_pager_clamp(p);
}

/* A key at the '/' or ':' prompt.  Takes every key. */
static void
console_pane_prompt_key(struct console_pane *p,
    const struct console_pane_src *src, int ch)
{
	size_t len = strlen(p->input);

	switch (ch) {
	case 27:
		p->mode = CONSOLE_PANE_LIST;
		return;
	case '\r': case '\n': case KEY_ENTER:
		if (p->mode == CONSOLE_PANE_SEARCH) {
			p->mode = CONSOLE_PANE_LIST;
			if (p->input[0] != '\0')
				memcpy(p->pat, p->input, sizeof p->pat);
			console_pane_search(p, src, 1, true);
		} else {
			p->mode = CONSOLE_PANE_LIST;
			console_pane_goto(p, src);
		}
		return;
	case KEY_BACKSPACE: case 127: case 8:
		if (len == 0)
			p->mode = CONSOLE_PANE_LIST;   /* less: cancels */
		else
			p->input[len - 1] = '\0';
		return;
	case 21:   /* ^U */
		p->input[0] = '\0';
		return;
	default:
		if (ch >= 0x20 && ch < 0x7f && len + 1 < sizeof p->input &&
		    (p->mode == CONSOLE_PANE_SEARCH || (ch >= '0' &&
		    ch <= '9'))) {
			p->input[len] = (char)ch;
			p->input[len + 1] = '\0';
		}
		return;
	}
}

/* A key for the pane (tui.h). */
static bool
console_pane_key1(struct console_ui *ui, struct console_pane *p,
    const struct console_pane_src *src, int ch)
{
	size_t base, n;
	long page = p->rows > 1 ? p->rows - 1 : 1;
	MEVENT me;

	(void)ui;
	if (p->mode == CONSOLE_PANE_PAGER) {
		console_pane_pager_key(p, ch);
		return true;
	}
	if (p->mode != CONSOLE_PANE_LIST) {
		console_pane_prompt_key(p, src, ch);
		return true;
	}
	p->msg[0] = '\0';
	console_pane_bounds(src, &base, &n);
	console_pane_fit(p, base, n, p->rows > 0 ? p->rows : 1);
	switch (ch) {
	case 'j': case KEY_DOWN:
		console_pane_move(p, 1, base, n);
		return true;
	case 'k': case KEY_UP:
		console_pane_move(p, -1, base, n);
		return true;
	case KEY_NPAGE:
		console_pane_move(p, page, base, n);
		return true;
	case KEY_PPAGE:
		console_pane_move(p, -page, base, n);
		return true;
	case KEY_HOME:
		console_pane_move(p, -(long)n, base, n);
		return true;
	case KEY_END:
		p->follow = true;
		return true;
	case 'g':
	case 'G':
		/* replay: start / end (the screen's keys) with the list
		 * following; live: the oldest / newest beat */
		if (src->go != NULL) {
			p->follow = true;
			return false;
		}
		if (ch == 'G')
			p->follow = true;
		else
			console_pane_move(p, -(long)n, base, n);
		return true;
	case '\r': case '\n': case KEY_ENTER:
		console_pane_open(p, src);
		return true;
	case '/':
	case ':':
		p->mode = ch == '/' ? CONSOLE_PANE_SEARCH : CONSOLE_PANE_GOTO;
		p->input[0] = '\0';
		return true;
	case 'n':
		console_pane_search(p, src, 1, false);
		return true;
	case 'N':
		console_pane_search(p, src, -1, false);
		return true;
	case 'y':
		console_pane_copy(p, "run id", src->run_id);
		return true;
	case 'Y': {
		char abs[PATH_MAX];
		const char *d = src->run_dir;

		if (d != NULL && d[0] != '\0' && realpath(d, abs) != NULL)
			d = abs;
		console_pane_copy(p, "run dir", d);
		return true;
	}
	case 27:
		/* back: out of the scroll mode, then the search's marks */
		if (!p->follow) {
			p->follow = true;
			return true;
		}
		if (p->pat[0] != '\0') {
			p->pat[0] = '\0';
			return true;
		}
		return false;
	case KEY_MOUSE:
		if (getmouse(&me) != OK)
			return false;
		if (me.bstate & BUTTON4_PRESSED) {
			console_pane_move(p, -CONSOLE_PANE_WHEEL, base, n);
			return true;
		}
#ifdef BUTTON5_PRESSED
		if (me.bstate & BUTTON5_PRESSED) {
			console_pane_move(p, CONSOLE_PANE_WHEEL, base, n);
			return true;
		}
#endif
		return false;
	default:
		return false;
	}
}

/* A key for the pane: true when it took it (tui.h). */
bool
console_pane_key(struct console_ui *ui, struct console_pane *p,
    const struct console_pane_src *src, int ch)
{
	bool took = console_pane_key1(ui, p, src, ch);

	ui->keys_raw = console_pane_modal(p);
	return took;
}
