/*
 * console.c - the live drill console (ncursesw).
 *
 * Threads: the UI thread owns curses and runs one poll() loop; a worker
 * thread runs drill_run() (all Docker/network work happens there).  The
 * drill's observer copies each beat into a mutex-protected ring and writes
 * one byte to a non-blocking self-pipe; it never blocks.  Signal handlers
 * only set flags.  The screen is redrawn at most once per loop iteration,
 * when something changed; a ~150 ms tick animates Poyo.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include <curses.h>

#include "core.h"
#include "sprites.h"
#include "tui.h"

#define CONSOLE_MIN_COLS   80
#define CONSOLE_MIN_LINES  24
#define CONSOLE_RING       256     /* beats between observer and UI */
#define CONSOLE_HIST       256     /* beats kept for the event list */
#define CONSOLE_TICK_NS    (150ull * 1000 * 1000)
#define CONSOLE_SNIFF_NS   (1500ull * 1000 * 1000)
#define CONSOLE_GRAB_NS    (800ull * 1000 * 1000)
#define CONSOLE_ZAP_NS     (1200ull * 1000 * 1000)
#define CONSOLE_MAP_ROWS   10
#define CONSOLE_MAX_PAIRS  256     /* sprite colour pairs we allocate */

/* Colour pairs 1..7: basic colour on the default background. */
enum {
	CP_RED = 1, CP_GREEN, CP_YELLOW, CP_BLUE, CP_MAGENTA, CP_CYAN, CP_WHITE,
	CP_TITLE,
	CP_SPRITE_BASE = 16,
};

/* Set by signal handlers only. */
static volatile sig_atomic_t console_sig_winch;
static volatile sig_atomic_t console_sig_quit;
/* Curses is active: the fatal hook must restore the terminal. */
static volatile sig_atomic_t console_curses_on;

/* Shared between the drill thread (observer, worker end) and the UI. */
struct console_shared {
	pthread_mutex_t mu;
	struct drill_beat ring[CONSOLE_RING];
	size_t head, count;
	size_t dropped;      /* beats lost because the ring was full */
	bool done;           /* drill_run() returned */
	int pipe_rd, pipe_wr;
};

struct console_worker {
	struct console_shared *sh;
	struct drill_options dopt;
	volatile sig_atomic_t cancel;
	struct drill_result res;
	struct errbuf err;
	int rc;
};

struct console_lever {
	char name[32];
	bool fired, verified, failed;
	uint64_t fired_rel, verified_rel;   /* ns since drill start */
};

struct console_ui {
	const struct console_options *o;
	bool color, c256, utf8, ascii, halfblock;
	short def_bg;
	struct sprite_sheet *sheet;
	short pal_color[SPRITE_MAX_COLORS];
	struct { short fg, bg; } pairs[CONSOLE_MAX_PAIRS];
	int npairs;

	char run_id[64], policy[256], model[64], seed[32];
	char phase[128];
	struct console_lever lev[POLICY_MAX_LEVERS];
	size_t nlev;
	int nverified;

	struct drill_beat hist[CONSOLE_HIST];
	size_t hhead, hcount;
	size_t dropped;

	bool bait, breach, cut_off, zapped;
	uint64_t last_agent_ns;   /* UI clock when the last agent beat came */
	uint64_t bait_ns;         /* UI clock of the bait beat */
	uint64_t zap_ns;          /* UI clock of the first verified lever */

	bool done, stopping, quit;
	bool have_result;         /* drill_run() returned 0 */
	struct console_worker *w;
	unsigned long tick;
	const char *shown_pose;
};

/* ---------------------------------------------------------------- */
/* signals, fatal hook, observer                                     */
/* ---------------------------------------------------------------- */

static void
console_on_signal(int sig)
{
	if (sig == SIGWINCH)
		console_sig_winch = 1;
	else
		console_sig_quit = 1;
}

/* Restore the terminal before a fatal exit (any thread). */
static void
console_fatal_hook(void)
{
	if (console_curses_on) {
		console_curses_on = 0;
		endwin();
	}
}

/* The drill observer: runs on the drill thread; copies the beat into the
 * ring (dropping the oldest when full) and pokes the self-pipe. */
static void
console_observer(void *ctx, const struct drill_beat *b)
{
	struct console_shared *sh = ctx;
	char c = 'b';

	pthread_mutex_lock(&sh->mu);
	if (sh->count == CONSOLE_RING) {
		sh->head = (sh->head + 1) % CONSOLE_RING;
		sh->count--;
		sh->dropped++;
	}
	sh->ring[(sh->head + sh->count) % CONSOLE_RING] = *b;
	sh->count++;
	pthread_mutex_unlock(&sh->mu);
	if (write(sh->pipe_wr, &c, 1) < 0) {
		/* EAGAIN: the UI already has a wake-up pending. */
	}
}

static void *
console_worker_main(void *arg)
{
	struct console_worker *w = arg;
	char c = 'd';

	w->rc = drill_run(&w->dopt, &w->res, &w->err);
	pthread_mutex_lock(&w->sh->mu);
	w->sh->done = true;
	pthread_mutex_unlock(&w->sh->mu);
	if (write(w->sh->pipe_wr, &c, 1) < 0) {
		/* the UI also polls with a timeout */
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* drill state from beats and the result                             */
/* ---------------------------------------------------------------- */

/* Copy at most n-1 bytes of src into dst (NUL-terminated). */
static void
console_copy(char *dst, size_t n, const char *src)
{
	size_t len = src != NULL ? strnlen(src, n - 1) : 0;

	if (len > 0)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

static void console_phase_kv(struct console_ui *ui, const char *text);

/* Copy one word (up to a blank, ',' or ':' after the first character)
 * into dst of size n. */
static void
console_word(char *dst, size_t n, const char *p)
{
	size_t len = strcspn(p, " ,");

	if (len > 1 && p[len - 1] == ':')
		len--;
	if (len >= n)
		len = n - 1;
	memcpy(dst, p, len);
	dst[len] = '\0';
}

/*
 * Fill the title from drill.c's first PHASE beat,
 * "run <id>: policy <name>, seed <n>, model <name>, ...", or from
 * "key=value" words (see tui.h).
 */
static void
console_phase_keys(struct console_ui *ui, const char *text)
{
	if (strncmp(text, "run ", 4) == 0 && strchr(text, '=') == NULL) {
		const char *p;
		console_word(ui->run_id, sizeof ui->run_id, text + 4);
		if ((p = strstr(text, " policy ")) != NULL)
			console_word(ui->policy, sizeof ui->policy, p + 8);
		if ((p = strstr(text, " seed ")) != NULL)
			console_word(ui->seed, sizeof ui->seed, p + 6);
		if ((p = strstr(text, " model ")) != NULL)
			console_word(ui->model, sizeof ui->model, p + 7);
		return;
	}
	console_phase_kv(ui, text);
}

/* Pick "key=value" words out of a PHASE beat. */
static void
console_phase_kv(struct console_ui *ui, const char *text)
{
	static const struct { const char *key; size_t off, size; } keys[] = {
		{ "run=", offsetof(struct console_ui, run_id), 64 },
		{ "model=", offsetof(struct console_ui, model), 64 },
		{ "policy=", offsetof(struct console_ui, policy), 256 },
		{ "seed=", offsetof(struct console_ui, seed), 32 },
	};
	const char *p = text;

	while (*p != '\0') {
		size_t len;
		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			size_t kl = strlen(keys[k].key);
			if (len > kl && strncmp(p, keys[k].key, kl) == 0) {
				char *dst = (char *)ui + keys[k].off;
				size_t vl = len - kl;
				if (vl >= keys[k].size)
					vl = keys[k].size - 1;
				memcpy(dst, p + kl, vl);
				dst[vl] = '\0';
			}
		}
		p += len;
	}
}

/* Name a lever from a beat's text: the first word that is a known lever,
 * else "lever<n>". */
static void
console_lever_name(struct console_lever *l, int idx, const char *text)
{
	const char *p = text;

	if (l->name[0] != '\0')
		return;
	while (*p != '\0') {
		size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
		if (len > 0 && len < sizeof l->name) {
			char word[sizeof l->name];
			memcpy(word, p, len);
			word[len] = '\0';
			if (lever_find(word) != NULL) {
				console_copy(l->name, sizeof l->name, word);
				return;
			}
		}
		p += len > 0 ? len : 1;
	}
	snprintf(l->name, sizeof l->name, "lever%d", idx + 1);
}

/* Apply one beat to the UI state and keep it for the event list. */
static void
console_apply_beat(struct console_ui *ui, const struct drill_beat *b)
{
	uint64_t now = util_mono_ns();
	struct console_lever *l = NULL;

	if (b->lever >= 0 && b->lever < POLICY_MAX_LEVERS) {
		l = &ui->lev[b->lever];
		console_lever_name(l, b->lever, b->text);
		if ((size_t)b->lever + 1 > ui->nlev)
			ui->nlev = (size_t)b->lever + 1;
	}
	switch (b->kind) {
	case DRILL_BEAT_PHASE:
		console_copy(ui->phase, sizeof ui->phase, b->text);
		console_phase_keys(ui, b->text);
		break;
	case DRILL_BEAT_AGENT:
	case DRILL_BEAT_TOOL:
	case DRILL_BEAT_SERVICE:
		ui->last_agent_ns = now;
		break;
	case DRILL_BEAT_BAIT:
		if (!ui->bait)
			ui->bait_ns = now;
		ui->bait = true;
		break;
	case DRILL_BEAT_LEVER_FIRED:
		if (l != NULL) {
			l->fired = true;
			l->fired_rel = b->t_rel_ns;
		}
		break;
	case DRILL_BEAT_LEVER_VERIFIED:
		if (l != NULL && !l->verified) {
			const struct lever_entry *le = lever_find(l->name);
			l->verified = true;
			l->verified_rel = b->t_rel_ns;
			if (!l->fired) {
				l->fired = true;
				l->fired_rel = b->t_rel_ns;
			}
			/* Unknown levers: the second verified one cuts off. */
			if ((le != NULL && le->cuts_off) ||
			    (le == NULL && ui->nverified > 0))
				ui->cut_off = true;
			ui->nverified++;
		}
		if (!ui->zapped) {
			ui->zapped = true;
			ui->zap_ns = now;
		}
		break;
	case DRILL_BEAT_LEVER_FAILED:
		if (l != NULL)
			l->failed = true;
		break;
	case DRILL_BEAT_BREACH:
	case DRILL_BEAT_LEAK:
	case DRILL_BEAT_ORPHAN:
		ui->breach = true;
		break;
	default:
		break;
	}
	/* Keep the list in time order: sensor beats can arrive after lever
	 * beats that happened later. */
	if (ui->hcount == CONSOLE_HIST) {
		ui->hhead = (ui->hhead + 1) % CONSOLE_HIST;
		ui->hcount--;
	}
	size_t i = ui->hcount++;
	while (i > 0 && ui->hist[(ui->hhead + i - 1) % CONSOLE_HIST].t_ns >
	    b->t_ns) {
		ui->hist[(ui->hhead + i) % CONSOLE_HIST] =
		    ui->hist[(ui->hhead + i - 1) % CONSOLE_HIST];
		i--;
	}
	ui->hist[(ui->hhead + i) % CONSOLE_HIST] = *b;
}

/* Take everything from the shared ring.  Returns true if anything changed. */
static bool
console_drain(struct console_ui *ui, struct console_shared *sh)
{
	static struct drill_beat batch[CONSOLE_RING];  /* UI thread only */
	size_t n = 0, dropped;
	bool done;
	char buf[256];

	while (read(sh->pipe_rd, buf, sizeof buf) > 0)
		;
	pthread_mutex_lock(&sh->mu);
	while (sh->count > 0) {
		batch[n++] = sh->ring[sh->head];
		sh->head = (sh->head + 1) % CONSOLE_RING;
		sh->count--;
	}
	dropped = sh->dropped;
	done = sh->done;
	pthread_mutex_unlock(&sh->mu);
	for (size_t i = 0; i < n; i++)
		console_apply_beat(ui, &batch[i]);
	ui->dropped = dropped;
	if (done && !ui->done) {
		ui->done = true;
		return true;
	}
	return n > 0;
}

/* The drill finished: the result is authoritative. */
static void
console_apply_result(struct console_ui *ui)
{
	const struct drill_result *r = &ui->w->res;

	if (ui->w->rc != 0)
		return;
	ui->have_result = true;
	console_copy(ui->run_id, sizeof ui->run_id, r->run_id);
	if (ui->policy[0] == '\0')   /* keep the name; r->policy is a path */
		console_copy(ui->policy, sizeof ui->policy, r->policy);
	console_copy(ui->model, sizeof ui->model, r->model);
	snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, r->seed);
	if (r->nlevers > 0) {
		ui->nlev = r->nlevers > POLICY_MAX_LEVERS ? POLICY_MAX_LEVERS :
		    r->nlevers;
		for (size_t i = 0; i < ui->nlev; i++) {
			const struct lever_result *lr = &r->levers[i];
			struct console_lever *l = &ui->lev[i];
			console_copy(l->name, sizeof l->name, lr->name);
			l->fired = lr->fired;
			l->verified = lr->verified;
			l->failed = lr->fired && !lr->verified;
			if (lr->fired && lr->fired_ns >= r->start_ns)
				l->fired_rel = lr->fired_ns - r->start_ns;
			if (lr->verified && lr->verified_ns >= r->start_ns)
				l->verified_rel = lr->verified_ns - r->start_ns;
		}
	}
	if (r->bait_fired)
		ui->bait = true;
	if (r->breaches > 0 || r->verdict == DRILL_VERDICT_BREACHED)
		ui->breach = true;
	if (r->verdict == DRILL_VERDICT_CONTAINED)
		ui->cut_off = true;
}

/*
 * Which of Poyo's frames to show now.  Levers verify within milliseconds of
 * the bait, so the story is paced for the eye: grabbing stays at least
 * CONSOLE_GRAB_NS, zapped at least CONSOLE_ZAP_NS before caught.  (The
 * lever panel and event list always show the real times.)
 */
static const char *
console_pose(const struct console_ui *ui, uint64_t now)
{
	uint64_t zap_from = ui->zap_ns;

	if (ui->breach)
		return "escaped";
	if (ui->bait_ns != 0 && zap_from < ui->bait_ns + CONSOLE_GRAB_NS)
		zap_from = ui->bait_ns + CONSOLE_GRAB_NS;
	if (ui->zapped && now < zap_from)
		return "grabbing";
	if (ui->cut_off && !(ui->zapped && now < zap_from + CONSOLE_ZAP_NS))
		return "caught";
	if (ui->zapped)
		return "zapped";
	if (ui->bait)
		return "grabbing";
	if (!ui->done && ui->last_agent_ns != 0 &&
	    now - ui->last_agent_ns < CONSOLE_SNIFF_NS)
		return "sniffing";
	return (ui->tick / 4) % 2 ? "idle1" : "idle0";
}

/* ---------------------------------------------------------------- */
/* drawing helpers                                                   */
/* ---------------------------------------------------------------- */

static void
console_attr(const struct console_ui *ui, int pair, attr_t a)
{
	attrset(a | (ui->color && pair > 0 ? COLOR_PAIR(pair) : 0));
}

/*
 * Put untrusted text at (y, x), at most maxcols columns: printable
 * characters only (anything else becomes '?'), wide characters counted by
 * their width, and never more than the row has left.
 */
static void
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
static void
console_putf(const struct console_ui *ui, int y, int x, int maxcols,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void
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
static void
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
/* screen sections                                                   */
/* ---------------------------------------------------------------- */

static void
console_draw_title(struct console_ui *ui)
{
	const char *sep = (ui->utf8 && !ui->ascii) ? " \xc2\xb7 " : " | ";
	char seed[48];

	if (ui->seed[0] != '\0')
		snprintf(seed, sizeof seed, "%s", ui->seed);
	else if (ui->o->has_seed)
		snprintf(seed, sizeof seed, "%" PRIu64, ui->o->seed);
	else
		snprintf(seed, sizeof seed, "policy");
	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "ares%srun %s%spolicy %s%smodel %s%s"
	    "seed %s", sep, ui->run_id[0] ? ui->run_id : "-", sep,
	    ui->policy[0] ? ui->policy : "default", sep,
	    ui->model[0] ? ui->model : "-", sep, seed);
	attrset(A_NORMAL);
}

/* The lab map: boundary with Poyo, gateway, service; model and sink out. */
static void
console_draw_map(struct console_ui *ui, int y, const char *pose)
{
	const int bw = 42;          /* boundary width */
	const int gx = 22, gw = 13; /* gateway/service boxes */
	const int ox = 49, ow = 13; /* model/sink boxes outside */
	bool deny = ui->zapped || ui->cut_off;
	int boundary_pair = 0;

	if (ui->breach)
		boundary_pair = CP_RED;
	else if (ui->have_result && ui->w->res.verdict == DRILL_VERDICT_CONTAINED)
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
	console_attr(ui, deny ? CP_RED : 0, deny ? A_BOLD : A_DIM);
	console_put(ui, y + 2, gx + gw, deny ? "=====X=======>" : "=============>",
	    ox - gx - gw);
	/* service with the bait */
	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y + 5, gx, 4, gw, NULL);
	console_put(ui, y + 6, gx + 3, "service", gw - 4);
	console_attr(ui, ui->bait ? CP_MAGENTA : 0,
	    ui->bait ? A_BOLD | A_REVERSE : A_DIM);
	console_put(ui, y + 7, gx + 2, ui->bait ? "BAIT TAKEN" : "bait: key", gw - 3);
	/* the internet (sink) outside the boundary */
	console_attr(ui, ui->breach ? CP_RED : 0, ui->breach ? A_BOLD : A_DIM);
	console_box(ui, y + 5, ox, 4, ow + 2, NULL);
	console_attr(ui, ui->breach ? CP_RED : 0, A_NORMAL);
	console_put(ui, y + 6, ox + 2, "internet", ow - 2);
	console_put(ui, y + 7, ox + 2, "(sink)", ow - 2);
	if (ui->breach) {
		console_attr(ui, CP_RED, A_BOLD);
		console_put(ui, y + 7, gx + gw, "~~~~~~~~~~~~~>", ox - gx - gw);
	}
	/* drill summary to the right, when there is room */
	int sx = ox + ow + 4, sw = COLS - sx - 1;
	if (sw >= 10) {
		console_attr(ui, 0, A_BOLD);
		console_put(ui, y + 1, sx, "drill", sw);
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, y + 2, sx, sw, "levers %d/%zu", ui->nverified,
		    ui->nlev);
		console_putf(ui, y + 3, sx, sw, "bait %s", ui->bait ? "fired" :
		    "armed");
		console_putf(ui, y + 4, sx, sw, "breach %s", ui->breach ? "YES" :
		    "no");
		if (ui->have_result) {
			const struct drill_result *r = &ui->w->res;
			console_putf(ui, y + 5, sx, sw, "steps %zu", r->agent_steps);
			console_putf(ui, y + 6, sx, sw, "blocked %zu", r->blocked);
			console_putf(ui, y + 7, sx, sw, "leaks %zu", r->leaks);
		}
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

static void
console_draw_levers(struct console_ui *ui, int y, int h)
{
	int inner = h - 2, shown = 0;

	console_attr(ui, 0, A_NORMAL);
	console_box(ui, y, 0, h, COLS, "levers");
	if (ui->nlev == 0) {
		console_attr(ui, 0, A_DIM);
		console_put(ui, y + 1, 2, ui->done ? "no lever fired" :
		    "waiting for the bait; levers fire when it is taken",
		    COLS - 4);
	}
	for (size_t i = 0; i < ui->nlev && shown < inner; i++, shown++) {
		const struct console_lever *l = &ui->lev[i];
		char fired[24], ver[24], lat[24];
		const char *state;
		int pair;

		if (shown == inner - 1 && ui->nlev - i > 1) {
			console_attr(ui, 0, A_DIM);
			console_putf(ui, y + 1 + shown, 2, COLS - 4,
			    "... %zu more", ui->nlev - i);
			break;
		}
		console_rel(fired, sizeof fired, l->fired, l->fired_rel);
		console_rel(ver, sizeof ver, l->verified, l->verified_rel);
		if (l->fired && l->verified && l->verified_rel >= l->fired_rel)
			snprintf(lat, sizeof lat, "%.1fms",
			    (double)(l->verified_rel - l->fired_rel) / 1e6);
		else
			snprintf(lat, sizeof lat, "-");
		if (l->verified) {
			state = "ok";
			pair = CP_GREEN;
		} else if (l->failed) {
			state = "failed";
			pair = CP_RED;
		} else if (ui->done) {
			state = l->fired ? "failed" : "not fired";
			pair = l->fired ? CP_RED : 0;
		} else {
			state = "pending";
			pair = CP_YELLOW;
		}
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, y + 1 + shown, 2, COLS - 4,
		    "%zu %-15.15s fired %-10s verified %-10s lat %-8s",
		    i + 1, l->name, fired, ver, lat);
		console_attr(ui, pair, A_BOLD);
		console_put(ui, y + 1 + shown, 70, state, COLS - 71);
	}
	attrset(A_NORMAL);
}

static void
console_draw_events(struct console_ui *ui, int y, int h)
{
	int inner = h - 2;
	size_t n = ui->hcount < (size_t)inner ? ui->hcount : (size_t)inner;
	char title[64];

	console_attr(ui, 0, A_NORMAL);
	if (ui->dropped > 0)
		snprintf(title, sizeof title, "events (%zu dropped)", ui->dropped);
	else
		snprintf(title, sizeof title, "events");
	console_box(ui, y, 0, h, COLS, title);
	for (size_t i = 0; i < n; i++) {
		const struct drill_beat *b =
		    &ui->hist[(ui->hhead + ui->hcount - n + i) % CONSOLE_HIST];
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

/* The status line text (verdict / progress / error). */
static void
console_status_text(struct console_ui *ui, char *out, size_t n, int *pair)
{
	*pair = 0;
	if (ui->stopping) {
		snprintf(out, n, "stopping: tearing the lab down...");
		*pair = CP_YELLOW;
	} else if (ui->have_result) {
		const struct drill_result *r = &ui->w->res;
		char ttk[48];
		if (r->time_to_kill_ms >= 0)
			snprintf(ttk, sizeof ttk, "time to kill %.1f ms",
			    r->time_to_kill_ms);
		else
			snprintf(ttk, sizeof ttk, "time to kill -");
		snprintf(out, n, "verdict: %s  %s  breaches %zu leaks %zu  %s",
		    drill_verdict_name(r->verdict), ttk, r->breaches, r->leaks,
		    r->verdict_reason);
		*pair = r->verdict == DRILL_VERDICT_CONTAINED ? CP_GREEN :
		    r->verdict == DRILL_VERDICT_NOT_EXERCISED ? CP_YELLOW : CP_RED;
	} else if (ui->done) {
		snprintf(out, n, "error: %.500s", ui->w->err.msg);
		*pair = CP_RED;
	} else {
		snprintf(out, n, "drill running: %s", ui->phase[0] ?
		    ui->phase : "starting");
	}
}

static void
console_draw_status(struct console_ui *ui, int y)
{
	char text[600];
	int pair;
	const char *keys = "q quit";
	int kw = (int)strlen(keys);

	console_status_text(ui, text, sizeof text, &pair);
	move(y, 0);
	clrtoeol();
	console_attr(ui, pair, A_BOLD);
	console_put(ui, y, 1, text, COLS - kw - 4);
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, y, COLS - kw - 1, keys, kw);
	attrset(A_NORMAL);
}

static void
console_draw_small(struct console_ui *ui)
{
	char text[600];
	int pair, y = LINES / 2 - 1;

	if (y < 0)
		y = 0;
	console_attr(ui, CP_YELLOW, A_BOLD);
	console_put(ui, y, 1, "terminal too small (need 80x24)", COLS - 1);
	console_status_text(ui, text, sizeof text, &pair);
	console_attr(ui, pair, A_NORMAL);
	console_put(ui, y + 1, 1, text, COLS - 1);
	console_attr(ui, 0, A_NORMAL);
	console_put(ui, y + 2, 1, "q quit", COLS - 1);
	attrset(A_NORMAL);
}

/* Redraw the whole screen. */
static void
console_draw(struct console_ui *ui)
{
	const char *pose = console_pose(ui, util_mono_ns());

	ui->shown_pose = pose;
	erase();
	if (COLS < CONSOLE_MIN_COLS || LINES < CONSOLE_MIN_LINES) {
		console_draw_small(ui);
		refresh();
		return;
	}
	console_draw_title(ui);
	console_draw_map(ui, 1, pose);
	int avail = LINES - 2 - CONSOLE_MAP_ROWS;       /* levers + events */
	int lh = (ui->nlev > 0 ? (int)ui->nlev : 1) + 2;
	if (lh > avail - 4)
		lh = avail - 4;
	console_draw_levers(ui, 1 + CONSOLE_MAP_ROWS, lh);
	console_draw_events(ui, 1 + CONSOLE_MAP_ROWS + lh, avail - lh);
	console_draw_status(ui, LINES - 1);
	refresh();
}

/* ---------------------------------------------------------------- */
/* setup and the event loop                                          */
/* ---------------------------------------------------------------- */

static void
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

/* Preload names from the policy file, if one was given (file I/O only). */
static void
console_preload_policy(struct console_ui *ui)
{
	struct errbuf e = { 0 };
	struct policy *p;

	if (ui->o->policy_path == NULL)
		return;
	console_copy(ui->policy, sizeof ui->policy, ui->o->policy_path);
	p = policy_load(ui->o->policy_path, &e);
	if (p == NULL)
		return;   /* drill_run() reports the problem */
	if (p->name != NULL)
		console_copy(ui->policy, sizeof ui->policy, p->name);
	console_copy(ui->model, sizeof ui->model,
	    p->model_name != NULL ? p->model_name : "offline");
	if (!ui->o->has_seed)
		snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, p->seed);
	for (size_t i = 0; i < p->nlevers && i < POLICY_MAX_LEVERS; i++)
		console_copy(ui->lev[i].name, sizeof ui->lev[i].name,
		    p->levers[i]);
	ui->nlev = p->nlevers;
	policy_free(p);
}

/* Ask to quit: cancel a running drill (the worker still tears down). */
static void
console_request_quit(struct console_ui *ui)
{
	if (ui->done) {
		ui->quit = true;
	} else if (!ui->stopping) {
		/* The drill thread polls this flag (core.h's contract). */
		__atomic_store_n(&ui->w->cancel, 1, __ATOMIC_SEQ_CST);
		ui->stopping = true;
	}
}

/* Read every pending key.  Returns true if the screen needs a redraw. */
static bool
console_keys(struct console_ui *ui)
{
	bool dirty = false;
	int ch;

	while ((ch = getch()) != ERR) {
		if (ch == 'q' || ch == 'Q') {
			console_request_quit(ui);
			dirty = true;
		} else if (ch == KEY_RESIZE) {
			dirty = true;
		}
	}
	return dirty;
}

static void
console_resize(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
}

/* The UI loop; returns when the user quit and the worker is done. */
static void
console_loop(struct console_ui *ui, struct console_shared *sh,
    pthread_t worker)
{
	struct pollfd pfd[2];
	uint64_t next_tick = util_mono_ns() + CONSOLE_TICK_NS;
	bool dirty = true, joined = false;

	pfd[0].fd = STDIN_FILENO;
	pfd[0].events = POLLIN;
	pfd[1].fd = sh->pipe_rd;
	pfd[1].events = POLLIN;
	for (;;) {
		uint64_t now;

		if (console_sig_winch) {
			console_sig_winch = 0;
			console_resize();
			dirty = true;
		}
		if (console_sig_quit) {
			console_sig_quit = 0;
			console_request_quit(ui);
			dirty = true;
		}
		if (console_drain(ui, sh))
			dirty = true;
		if (ui->done && !joined) {
			pthread_join(worker, NULL);
			joined = true;
			console_apply_result(ui);
			if (ui->stopping)
				ui->quit = true;
			ui->stopping = false;
			dirty = true;
		}
		if (ui->quit && joined)
			return;
		now = util_mono_ns();
		if (now >= next_tick) {
			ui->tick++;
			next_tick = now + CONSOLE_TICK_NS;
			if (console_pose(ui, now) != ui->shown_pose)
				dirty = true;
		}
		if (dirty) {
			console_draw(ui);
			dirty = false;
		}
		int timeout = (int)((next_tick - now) / 1000000) + 1;
		int n = poll(pfd, 2, timeout);
		if (n < 0 && errno != EINTR)
			util_fatal("console: poll: %s", strerror(errno));
		if (n > 0 && (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			/* The terminal went away: stop, but still tear down. */
			pfd[0].fd = -1;
			console_request_quit(ui);
		} else if (n > 0 && (pfd[0].revents & POLLIN)) {
			if (console_keys(ui))
				dirty = true;
		}
	}
}

int
console_run(const struct console_options *o)
{
	static struct console_shared sh;
	static struct console_worker w;
	static struct console_ui ui;
	struct sigaction sa, old_winch, old_int, old_term, old_hup;
	sigset_t block, oldmask;
	struct errbuf se = { 0 };
	int fds[2], rc;
	pthread_t worker;
	SCREEN *scr;

	memset(&sh, 0, sizeof sh);
	memset(&w, 0, sizeof w);
	memset(&ui, 0, sizeof ui);
	ui.o = o;
	ui.w = &w;
	ui.ascii = o->ascii;
	ui.def_bg = -1;
	console_sig_winch = console_sig_quit = 0;

	setlocale(LC_ALL, "");
	ui.utf8 = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

	ui.sheet = sprite_sheet_load(sprite_default_path(), &se);
	if (ui.sheet != NULL && sprite_sheet_require(ui.sheet,
	    sprite_poyo_frames, &se) < 0) {
		sprite_sheet_free(ui.sheet);
		ui.sheet = NULL;
	}
	if (ui.sheet == NULL) {
		struct drill_beat b = { .kind = DRILL_BEAT_ERROR, .lever = -1 };
		snprintf(b.text, sizeof b.text, "sprites: %.240s", se.msg);
		console_apply_beat(&ui, &b);
	}
	console_preload_policy(&ui);

	if (pipe(fds) < 0)
		util_fatal("console: pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	sh.pipe_rd = fds[0];
	sh.pipe_wr = fds[1];
	pthread_mutex_init(&sh.mu, NULL);

	/* Our handlers go in before curses so ncurses leaves them alone. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = console_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, &old_winch);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	util_set_fatal_hook(console_fatal_hook);
	scr = newterm(NULL, stdout, stdin);
	if (scr == NULL) {
		const char *term = getenv("TERM");
		fprintf(stderr, "ares: cannot initialise the terminal "
		    "(TERM=%s)\n", term != NULL ? term : "unset");
		rc = EXIT_USAGE;
		goto out_signals;
	}
	console_curses_on = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	ui.color = has_colors() && !o->no_color && getenv("NO_COLOR") == NULL;
	console_init_colors(&ui);
	ui.halfblock = ui.utf8 && ui.color && ui.sheet != NULL;

	/* The worker must not take the UI's signals. */
	w.sh = &sh;
	w.dopt.policy_path = o->policy_path;
	w.dopt.seed = o->seed;
	w.dopt.has_seed = o->has_seed;
	w.dopt.observer = console_observer;
	w.dopt.observer_ctx = &sh;
	w.dopt.cancel = &w.cancel;
	sigemptyset(&block);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &oldmask);
	int perr = pthread_create(&worker, NULL, console_worker_main, &w);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (perr != 0)
		util_fatal("console: pthread_create: %s", strerror(perr));

	console_loop(&ui, &sh, worker);

	console_curses_on = 0;
	endwin();
	delscreen(scr);
	if (w.cancel != 0)
		rc = 0;   /* the user quit before the drill finished */
	else if (ui.have_result)
		rc = drill_exit_code(&w.res);
	else
		rc = errbuf_exit_code(&w.err);
out_signals:
	util_set_fatal_hook(NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	close(fds[0]);
	close(fds[1]);
	pthread_mutex_destroy(&sh.mu);
	sprite_sheet_free(ui.sheet);
	return rc;
}
