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
#include <dirent.h>
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
#define CONSOLE_HOME_MAX   256     /* policies + runs listed at home */

/* Replay speeds ('+' / '-'); index 2 is real time. */
static const double console_speeds[] = { 0.25, 0.5, 1, 2, 4, 8, 16 };
static const char *const console_speed_names[] = {
	"0.25", "0.5", "1", "2", "4", "8", "16",
};
#define CONSOLE_NSPEEDS ((int)(sizeof console_speeds / sizeof console_speeds[0]))

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
	bool frozen;          /* the cut-off lever freezes (pause, cgroup) */
	bool walking;         /* the last agent beat was a model turn */
	uint64_t last_agent_ns;   /* UI clock when the last agent beat came */
	uint64_t bait_ns;         /* UI clock of the bait beat */
	uint64_t zap_ns;          /* UI clock of the first verified lever */

	bool done, stopping, quit;
	bool have_result;         /* drill_run() returned 0 (or, replaying:
	                             the verdict beat was reached) */
	const struct drill_result *res;   /* the result the screen shows */
	struct console_worker *w;
	unsigned long tick;
	const char *shown_pose;
	const char *pose_override;        /* replay: the beat's pose */

	/* screens */
	const struct console_screen *screen;
	bool help;                 /* the '?' overlay is up */
	bool from_home;            /* 'q' goes back to the home screen */
	bool small;                /* last draw was "too small" */
	/* live drill */
	struct console_shared *sh;
	pthread_t worker;
	bool worker_running;
	/* replay */
	struct replay *rp;
	size_t pos;                /* current beat */
	bool playing;
	int speed;                 /* index into console_speeds */
	uint64_t next_beat_ns;     /* playing: when to step */
	struct drill_result rres;  /* replay: summary at pos */
	/* home */
	char **home_items;         /* policy paths, then run dirs */
	size_t npolicies, nruns, home_cur, home_top;
	char engine[256];          /* "" when reachable, else why not */
	char home_msg[256];
	size_t trial_n;            /* N of the next trial ('+' / '-') */
	/* trial, probe, fix */
	struct console_job *job;
	size_t job_top;            /* first list row shown */
	bool job_follow;           /* keep the newest rows in view */
	double job_secs;           /* how long the finished job took */
	unsigned long job_tick;
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
struct console_screen;

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
		ui->walking = b->kind == DRILL_BEAT_AGENT;
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
			if (((le != NULL && le->cuts_off) ||
			    (le == NULL && ui->nverified > 0)) &&
			    !ui->cut_off) {
				ui->cut_off = true;
				ui->frozen = le != NULL &&
				    (strcmp(le->name, "pause") == 0 ||
				    strcmp(le->name, "cgroup-freeze") == 0);
			}
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
	ui->res = r;
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
		return ui->frozen ? "frozen" : "caught";
	if (ui->zapped)
		return "zapped";
	if (ui->bait)
		return "grabbing";
	if (!ui->done && ui->last_agent_ns != 0 &&
	    now - ui->last_agent_ns < CONSOLE_SNIFF_NS) {
		/* Asking the model: walking; reading results: sniffing. */
		if (ui->walking)
			return (ui->tick / 2) % 2 ? "walking1" : "walking0";
		return "sniffing";
	}
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
	else if (ui->have_result && ui->res->verdict == DRILL_VERDICT_CONTAINED)
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
		if (ui->have_result || ui->rp != NULL) {
			const struct drill_result *r = ui->res;
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
	if (ui->rp != NULL)
		snprintf(title, sizeof title, "events (beat %zu/%zu)",
		    ui->rp->nbeats ? ui->pos + 1 : 0, ui->rp->nbeats);
	else if (ui->dropped > 0)
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
		const struct drill_result *r = ui->res;
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
	} else if (ui->rp != NULL) {
		snprintf(out, n, "replay: beat %zu/%zu  +%.3fs  %s x%s",
		    ui->pos + 1, ui->rp->nbeats, ui->rp->nbeats > 0 ?
		    (double)ui->rp->beats[ui->pos].t_rel_ns / 1e9 : 0.0,
		    ui->playing ? "playing" : "paused",
		    console_speed_names[ui->speed]);
	} else if (ui->done) {
		snprintf(out, n, "error: %.500s", ui->w->err.msg);
		*pair = CP_RED;
	} else {
		snprintf(out, n, "drill running: %s", ui->phase[0] ?
		    ui->phase : "starting");
	}
}

/* ---------------------------------------------------------------- */
/* screens: one table entry per screen, one event loop               */
/* ---------------------------------------------------------------- */

struct console_key {
	const char *key;
	const char *what;
};

struct console_screen {
	const char *name;
	const char *keys_hint;               /* status line, right */
	const struct console_key *keys;      /* the '?' overlay */
	size_t nkeys;
	/* A key (not '?', not KEY_RESIZE).  Returns true to redraw. */
	bool (*key)(struct console_ui *ui, int ch);
	/* Called every loop turn: timers, workers.  Returns true to redraw. */
	bool (*tick)(struct console_ui *ui, uint64_t now);
	/* Draw the screen body (the loop erases and refreshes). */
	void (*draw)(struct console_ui *ui);
	/* Ask to leave (q, SIGINT, hang-up). */
	void (*quit)(struct console_ui *ui);
	/* An fd to wait on besides the terminal, or -1. */
	int (*fd)(const struct console_ui *ui);
};

static const struct console_screen console_screen_drill;
static const struct console_screen console_screen_replay;
static const struct console_screen console_screen_home;

static void
console_draw_status(struct console_ui *ui, int y)
{
	char text[600];
	int pair;
	const char *keys = ui->screen->keys_hint;
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

static bool console_is_job(const struct console_ui *ui);
static void console_job_status(struct console_ui *ui, char *out, size_t n,
    int *pair);

static void
console_draw_small(struct console_ui *ui)
{
	char text[600];
	int pair, y = LINES / 2 - 1;

	if (y < 0)
		y = 0;
	console_attr(ui, CP_YELLOW, A_BOLD);
	console_put(ui, y, 1, "terminal too small (need 80x24)", COLS - 1);
	if (console_is_job(ui)) {
		console_job_status(ui, text, sizeof text, &pair);
		console_attr(ui, pair, A_NORMAL);
		console_put(ui, y + 1, 1, text, COLS - 1);
	} else if (ui->screen != &console_screen_home) {
		console_status_text(ui, text, sizeof text, &pair);
		console_attr(ui, pair, A_NORMAL);
		console_put(ui, y + 1, 1, text, COLS - 1);
	}
	console_attr(ui, 0, A_NORMAL);
	console_put(ui, y + 2, 1, "q quit", COLS - 1);
	attrset(A_NORMAL);
}

/* The '?' overlay: every key of the current screen. */
static void
console_draw_help(struct console_ui *ui)
{
	const struct console_screen *sc = ui->screen;
	int h = (int)sc->nkeys + 4, w = 66;
	int y = (LINES - h) / 2, x = (COLS - w) / 2;

	if (y < 0)
		y = 0;
	if (x < 0)
		x = 0;
	attrset(A_NORMAL);
	for (int r = 0; r < h && y + r < LINES; r++)
		mvhline(y + r, x, ' ', w);
	console_attr(ui, CP_CYAN, A_BOLD);
	console_box(ui, y, x, h, w, "keys");
	for (size_t i = 0; i < sc->nkeys; i++) {
		console_attr(ui, 0, A_BOLD);
		console_put(ui, y + 1 + (int)i, x + 2, sc->keys[i].key, 14);
		console_attr(ui, 0, A_NORMAL);
		console_put(ui, y + 1 + (int)i, x + 17, sc->keys[i].what, w - 19);
	}
	console_attr(ui, 0, A_DIM);
	console_put(ui, y + h - 2, x + 2, "any key closes this help", w - 4);
	attrset(A_NORMAL);
}

/* The drill layout (live and replay share it). */
static void
console_draw_drill_layout(struct console_ui *ui)
{
	const char *pose = ui->pose_override != NULL ? ui->pose_override :
	    console_pose(ui, util_mono_ns());

	ui->shown_pose = pose;
	console_draw_title(ui);
	console_draw_map(ui, 1, pose);
	int avail = LINES - 2 - CONSOLE_MAP_ROWS;       /* levers + events */
	int lh = (ui->nlev > 0 ? (int)ui->nlev : 1) + 2;
	if (lh > avail - 4)
		lh = avail - 4;
	console_draw_levers(ui, 1 + CONSOLE_MAP_ROWS, lh);
	console_draw_events(ui, 1 + CONSOLE_MAP_ROWS + lh, avail - lh);
	if (ui->rp != NULL) {
		/* the badge, right on the events box's top edge */
		const struct replay *rp = ui->rp;
		bool ok = rp->chain_ok && rp->sig == REPLAY_SIG_OK &&
		    rp->verify_ok;
		int bw = (int)strlen(rp->badge) + 2;
		int bx = COLS - bw - 2;

		if (bx > 24) {
			console_attr(ui, ok ? CP_GREEN : CP_RED, A_BOLD |
			    (ui->color ? 0 : (ok ? 0 : A_REVERSE)));
			console_putf(ui, 1 + CONSOLE_MAP_ROWS + lh, bx, bw,
			    " %s ", rp->badge);
		}
	}
	console_draw_status(ui, LINES - 1);
}

/* Redraw the whole screen. */
static void
console_draw(struct console_ui *ui)
{
	erase();
	ui->small = COLS < CONSOLE_MIN_COLS || LINES < CONSOLE_MIN_LINES;
	if (ui->small) {
		console_draw_small(ui);
	} else {
		ui->screen->draw(ui);
		if (ui->help)
			console_draw_help(ui);
	}
	refresh();
}

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

/* Forget the drill/replay view (levers, events, flags), keep the terminal
 * setup (colours, sprites, pairs). */
static void
console_view_reset(struct console_ui *ui)
{
	memset(ui->run_id, 0, sizeof ui->run_id);
	memset(ui->policy, 0, sizeof ui->policy);
	memset(ui->model, 0, sizeof ui->model);
	memset(ui->seed, 0, sizeof ui->seed);
	memset(ui->phase, 0, sizeof ui->phase);
	memset(ui->lev, 0, sizeof ui->lev);
	ui->nlev = 0;
	ui->nverified = 0;
	ui->hhead = ui->hcount = ui->dropped = 0;
	ui->bait = ui->breach = ui->cut_off = ui->zapped = false;
	ui->frozen = ui->walking = false;
	ui->last_agent_ns = ui->bait_ns = ui->zap_ns = 0;
	ui->done = ui->stopping = ui->quit = ui->have_result = false;
	ui->res = NULL;
	ui->pose_override = NULL;
	ui->help = false;
}

/* ---- the live drill screen ---------------------------------------- */

/* Preload names from the policy file, if one was given (file I/O only). */
static void
console_preload_policy(struct console_ui *ui, const char *path, bool has_seed)
{
	struct errbuf e = { 0 };
	struct policy *p;

	if (path == NULL)
		return;
	console_copy(ui->policy, sizeof ui->policy, path);
	p = policy_load(path, &e);
	if (p == NULL)
		return;   /* drill_run() reports the problem */
	if (p->name != NULL)
		console_copy(ui->policy, sizeof ui->policy, p->name);
	console_copy(ui->model, sizeof ui->model,
	    p->model_name != NULL ? p->model_name : "offline");
	if (!has_seed)
		snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, p->seed);
	for (size_t i = 0; i < p->nlevers && i < POLICY_MAX_LEVERS; i++)
		console_copy(ui->lev[i].name, sizeof ui->lev[i].name,
		    p->levers[i]);
	ui->nlev = p->nlevers;
	policy_free(p);
}

/* Start drill_run() on the worker thread and switch to the drill screen. */
static void
console_drill_start(struct console_ui *ui, const char *policy, uint64_t seed,
    bool has_seed)
{
	static struct console_shared sh;
	static struct console_worker w;
	static char policy_path[4096];
	sigset_t block, oldmask;
	int fds[2];

	memset(&sh, 0, sizeof sh);
	memset(&w, 0, sizeof w);
	console_view_reset(ui);
	ui->w = &w;
	ui->sh = &sh;
	ui->rp = NULL;
	console_copy(policy_path, sizeof policy_path, policy);
	console_preload_policy(ui, policy_path, has_seed);
	if (has_seed)
		snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, seed);

	if (pipe(fds) < 0)
		util_fatal("console: pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	sh.pipe_rd = fds[0];
	sh.pipe_wr = fds[1];
	pthread_mutex_init(&sh.mu, NULL);

	w.sh = &sh;
	w.dopt.policy_path = policy_path;
	w.dopt.seed = seed;
	w.dopt.has_seed = has_seed;
	w.dopt.observer = console_observer;
	w.dopt.observer_ctx = &sh;
	w.dopt.cancel = &w.cancel;
	/* The worker must not take the UI's signals. */
	sigemptyset(&block);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &oldmask);
	int perr = pthread_create(&ui->worker, NULL, console_worker_main, &w);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (perr != 0)
		util_fatal("console: pthread_create: %s", strerror(perr));
	ui->worker_running = true;
	ui->screen = &console_screen_drill;
}

static int
console_drill_fd(const struct console_ui *ui)
{
	return ui->worker_running ? ui->sh->pipe_rd : -1;
}

/* Ask to quit: cancel a running drill (the worker still tears down). */
static void
console_drill_quit(struct console_ui *ui)
{
	if (ui->done) {
		ui->quit = true;
	} else if (!ui->stopping) {
		/* The drill thread polls this flag (core.h's contract). */
		__atomic_store_n(&ui->w->cancel, 1, __ATOMIC_SEQ_CST);
		ui->stopping = true;
	}
}

static void console_home_enter(struct console_ui *ui);

static bool
console_drill_tick(struct console_ui *ui, uint64_t now)
{
	bool dirty = false;

	(void)now;
	if (ui->worker_running && console_drain(ui, ui->sh))
		dirty = true;
	if (ui->done && ui->worker_running) {
		pthread_join(ui->worker, NULL);
		ui->worker_running = false;
		close(ui->sh->pipe_rd);
		close(ui->sh->pipe_wr);
		pthread_mutex_destroy(&ui->sh->mu);
		console_apply_result(ui);
		if (ui->stopping)
			ui->quit = true;
		ui->stopping = false;
		dirty = true;
	}
	if (ui->quit && !ui->worker_running && ui->from_home) {
		/* back home; the exit code is the last drill's */
		console_home_enter(ui);
		dirty = true;
	}
	return dirty;
}

static bool
console_drill_key(struct console_ui *ui, int ch)
{
	if (ch == 'q' || ch == 'Q') {
		console_drill_quit(ui);
		return true;
	}
	return false;
}

static void
console_drill_draw(struct console_ui *ui)
{
	console_draw_drill_layout(ui);
}

static const struct console_key console_drill_keys[] = {
	{ "q", "quit (a running drill is stopped and torn down)" },
	{ "?", "this help" },
};

static const struct console_screen console_screen_drill = {
	.name = "drill",
	.keys_hint = "q quit  ? help",
	.keys = console_drill_keys,
	.nkeys = sizeof console_drill_keys / sizeof console_drill_keys[0],
	.key = console_drill_key,
	.tick = console_drill_tick,
	.draw = console_drill_draw,
	.quit = console_drill_quit,
	.fd = console_drill_fd,
};

/* ---- the replay screen --------------------------------------------- */

/* Show the replay's state at beat pos: the same view fields the live
 * drill fills from beats. */
static void
console_replay_show(struct console_ui *ui)
{
	const struct replay *rp = ui->rp;
	struct replay_state st;
	size_t first, n;
	struct drill_result *r = &ui->rres;

	if (rp->nbeats == 0)
		replay_initial_state(rp, &st);
	else
		st = rp->states[ui->pos];
	ui->nlev = st.nlev > POLICY_MAX_LEVERS ? POLICY_MAX_LEVERS : st.nlev;
	for (size_t i = 0; i < ui->nlev; i++) {
		struct console_lever *l = &ui->lev[i];

		console_copy(l->name, sizeof l->name, rp->lever_names[i][0] ?
		    rp->lever_names[i] : "lever");
		l->fired = st.lev[i].fired;
		l->verified = st.lev[i].verified;
		l->failed = st.lev[i].failed;
		l->fired_rel = st.lev[i].fired_rel_ns;
		l->verified_rel = st.lev[i].verified_rel_ns;
	}
	ui->nverified = st.nverified;
	ui->bait = st.bait;
	ui->zapped = st.zapped;
	ui->cut_off = st.cut_off;
	ui->breach = st.breach;
	ui->pose_override = st.pose;
	ui->done = st.verdict != DRILL_VERDICT_NONE;
	ui->have_result = ui->done;
	memset(r, 0, sizeof *r);
	r->verdict = st.verdict;
	r->time_to_kill_ms = rp->time_to_kill_ms;
	r->breaches = st.breaches;
	r->leaks = st.leaks;
	r->blocked = st.blocked;
	r->agent_steps = st.agent_steps;
	r->norphans = st.orphans;
	console_copy(r->verdict_reason, sizeof r->verdict_reason,
	    rp->verdict_reason);
	ui->res = r;
	/* the event list: the beats up to pos */
	n = rp->nbeats == 0 ? 0 : ui->pos + 1;
	first = n > CONSOLE_HIST ? n - CONSOLE_HIST : 0;
	ui->hhead = 0;
	ui->hcount = n - first;
	for (size_t i = first; i < n; i++)
		ui->hist[i - first] = rp->beats[i];
}

/* Open rp (owned from now on) on the replay screen. */
static void
console_replay_enter(struct console_ui *ui, struct replay *rp)
{
	console_view_reset(ui);
	ui->rp = rp;
	ui->pos = 0;
	ui->playing = false;
	ui->speed = 2;
	console_copy(ui->run_id, sizeof ui->run_id, rp->run_id);
	console_copy(ui->policy, sizeof ui->policy, rp->policy);
	console_copy(ui->model, sizeof ui->model, rp->model);
	console_copy(ui->seed, sizeof ui->seed, rp->seed);
	ui->screen = &console_screen_replay;
	console_replay_show(ui);
}

/* How long beat i stays before i+1 when playing at speed x: the real gap,
 * kept between 150 ms and 1.5 s so the story can be followed. */
static uint64_t
console_replay_gap(const struct replay *rp, size_t i, double x)
{
	uint64_t d = 0;

	if (i + 1 < rp->nbeats && rp->beats[i + 1].t_ns > rp->beats[i].t_ns)
		d = rp->beats[i + 1].t_ns - rp->beats[i].t_ns;
	if (d < 150000000ull)
		d = 150000000ull;
	if (d > 1500000000ull)
		d = 1500000000ull;
	return (uint64_t)((double)d / x);
}

static void
console_replay_goto(struct console_ui *ui, size_t pos)
{
	if (ui->rp->nbeats == 0)
		pos = 0;
	else if (pos >= ui->rp->nbeats)
		pos = ui->rp->nbeats - 1;
	ui->pos = pos;
	console_replay_show(ui);
	if (ui->playing)
		ui->next_beat_ns = util_mono_ns() + console_replay_gap(ui->rp,
		    ui->pos, console_speeds[ui->speed]);
}

static void
console_replay_quit(struct console_ui *ui)
{
	if (ui->from_home) {
		console_home_enter(ui);
		return;
	}
	ui->quit = true;
}

static bool
console_replay_key(struct console_ui *ui, int ch)
{
	size_t last = ui->rp->nbeats ? ui->rp->nbeats - 1 : 0;

	switch (ch) {
	case ' ':
		ui->playing = !ui->playing;
		if (ui->playing && ui->pos >= last)
			ui->pos = 0;   /* play again from the start */
		console_replay_goto(ui, ui->pos);
		return true;
	case '.':
	case KEY_RIGHT:
	case 'l':
		console_replay_goto(ui, ui->pos + 1);
		return true;
	case ',':
	case KEY_LEFT:
	case 'h':
		console_replay_goto(ui, ui->pos > 0 ? ui->pos - 1 : 0);
		return true;
	case ']':
		console_replay_goto(ui, replay_marker(ui->rp, ui->pos, 1));
		return true;
	case '[':
		console_replay_goto(ui, replay_marker(ui->rp, ui->pos, -1));
		return true;
	case '+':
	case '=':
		if (ui->speed + 1 < CONSOLE_NSPEEDS)
			ui->speed++;
		return true;
	case '-':
	case '_':
		if (ui->speed > 0)
			ui->speed--;
		return true;
	case 'g':
	case KEY_HOME:
		console_replay_goto(ui, 0);
		return true;
	case 'G':
	case KEY_END:
		ui->playing = false;
		console_replay_goto(ui, last);
		return true;
	case 'q':
	case 'Q':
		console_replay_quit(ui);
		return true;
	default:
		return false;
	}
}

static bool
console_replay_tick(struct console_ui *ui, uint64_t now)
{
	if (!ui->playing || now < ui->next_beat_ns)
		return false;
	if (ui->pos + 1 >= ui->rp->nbeats) {
		ui->playing = false;
		return true;
	}
	console_replay_goto(ui, ui->pos + 1);
	return true;
}

static void
console_replay_draw(struct console_ui *ui)
{
	console_draw_drill_layout(ui);
}

static int
console_no_fd(const struct console_ui *ui)
{
	(void)ui;
	return -1;
}

static const struct console_key console_replay_keys[] = {
	{ "space", "play / pause" },
	{ ". or right", "next beat" },
	{ ", or left", "previous beat" },
	{ "]", "next marker (bait, lever, breach, leak, orphan)" },
	{ "[", "previous marker" },
	{ "+ / -", "faster / slower" },
	{ "g / G", "start / end" },
	{ "q", "back (or quit)" },
	{ "?", "this help" },
};

static const struct console_screen console_screen_replay = {
	.name = "replay",
	.keys_hint = "spc . , ] [ q ? help",
	.keys = console_replay_keys,
	.nkeys = sizeof console_replay_keys / sizeof console_replay_keys[0],
	.key = console_replay_key,
	.tick = console_replay_tick,
	.draw = console_replay_draw,
	.quit = console_replay_quit,
	.fd = console_no_fd,
};

/* ---- trial, probe and fix screens (one worker, like the drill) ------ */

#define CONSOLE_FIX_BEATS  96      /* fix beats kept for the screen */
#define CONSOLE_TRIAL_LAST 8       /* finished trial runs listed live */
#define CONSOLE_TRIAL_N    10      /* the trial screen's defaults */
#define CONSOLE_TRIAL_J    2
#define CONSOLE_TRIAL_NMAX 200

enum console_job_kind { CONSOLE_JOB_TRIAL, CONSOLE_JOB_PROBE, CONSOLE_JOB_FIX };

struct console_fix_beat {
	double t_ms;
	char type[24];
	char text[320];
};

struct console_trial_fin {
	size_t index;
	char verdict[16];
	double ttk_ms;
};

/* Shared between a job's worker and the UI.  Fields marked (mu) are
 * written by the worker's callbacks under mu; the result fields (t, pr,
 * fr, rc, err) belong to the worker until the UI has joined it. */
struct console_job {
	pthread_mutex_t mu;
	int pipe_rd, pipe_wr;
	bool done;                          /* (mu) the worker returned */
	enum console_job_kind kind;
	char policy[4096];
	size_t n, jobs;
	volatile sig_atomic_t stop, cancel;
	uint64_t t0;
	int rc;
	struct errbuf err;
	/* trial */
	struct trial_progress tp;           /* (mu) run pointer cleared */
	bool have_tp;                       /* (mu) */
	struct console_trial_fin fin[CONSOLE_TRIAL_LAST];   /* (mu) ring */
	size_t nfin;                        /* (mu) total finished */
	struct trial t;
	/* probe */
	struct probe_result rows[PROBE_MAX_ROWS];  /* (mu) copies */
	size_t nrows;                       /* (mu) */
	char run_id[64];                    /* (mu) */
	struct probe_report pr;
	/* fix */
	struct console_fix_beat beats[CONSOLE_FIX_BEATS];   /* (mu) ring */
	size_t nbeats;                      /* (mu) total beats */
	struct fix_result fr;
};

/* Wake the UI (never blocks; a full pipe already means "wake up"). */
static void
console_job_poke(struct console_job *j)
{
	char c = 'j';

	if (write(j->pipe_wr, &c, 1) < 0) {
		/* EAGAIN: a wake-up is pending; the UI also polls */
	}
}

/* trial_run's progress hook (trial lock held, any thread): copy. */
static void
console_trial_progress(void *ctx, const struct trial_progress *p)
{
	struct console_job *j = ctx;

	pthread_mutex_lock(&j->mu);
	j->tp = *p;
	j->tp.run = NULL;
	j->have_tp = true;
	if (p->event == TRIAL_EV_FINISH && p->run != NULL) {
		struct console_trial_fin *f =
		    &j->fin[j->nfin % CONSOLE_TRIAL_LAST];

		f->index = p->run->index;
		console_copy(f->verdict, sizeof f->verdict, p->run->verdict);
		f->ttk_ms = p->run->time_to_kill_ms;
		j->nfin++;
	}
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
}

/* probe_lab's row hook (worker thread): copy the finished row. */
static void
console_probe_row(void *ctx, const struct probe_report *r, size_t i)
{
	struct console_job *j = ctx;

	pthread_mutex_lock(&j->mu);
	if (i < PROBE_MAX_ROWS) {
		j->rows[i] = r->rows[i];
		if (j->nrows < i + 1)
			j->nrows = i + 1;
	}
	console_copy(j->run_id, sizeof j->run_id, r->run_id);
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
}

/* fix_run's observer (worker thread; text already sanitized): copy. */
static void
console_fix_observer(void *ctx, double t_ms, const char *type,
    const char *text)
{
	struct console_job *j = ctx;
	struct console_fix_beat *b;

	pthread_mutex_lock(&j->mu);
	b = &j->beats[j->nbeats % CONSOLE_FIX_BEATS];
	b->t_ms = t_ms;
	console_copy(b->type, sizeof b->type, type);
	console_copy(b->text, sizeof b->text, text);
	j->nbeats++;
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
}

/* The probe job: load the policy, open the engine, run the battery in a
 * fresh lab (torn down after).  0 or -1 + j->err. */
static int
console_probe_job(struct console_job *j)
{
	struct policy *p = policy_load(j->policy, &j->err);
	struct docker *d;
	int rc;

	if (p == NULL)
		return -1;
	d = docker_open(NULL, &j->err);
	if (d != NULL && docker_negotiate(d, &j->err) == -1) {
		docker_close(d);
		d = NULL;
	}
	if (d == NULL) {
		policy_free(p);
		return -1;
	}
	{
		struct probe_options o = {
			.row_fn = console_probe_row, .row_ctx = j,
			.cancel = &j->cancel,
		};

		rc = probe_lab(d, p, &o, &j->pr, &j->err);
	}
	docker_close(d);
	policy_free(p);
	return rc;
}

static void *
console_job_main(void *arg)
{
	struct console_job *j = arg;

	switch (j->kind) {
	case CONSOLE_JOB_TRIAL: {
		struct trial_options o = {
			.policy_path = j->policy, .n = j->n, .jobs = j->jobs,
			.stop = &j->stop, .cancel = &j->cancel,
			.progress = console_trial_progress, .progress_ctx = j,
		};

		j->rc = trial_run(&o, &j->t, &j->err);
		break;
	}
	case CONSOLE_JOB_PROBE:
		j->rc = console_probe_job(j);
		break;
	case CONSOLE_JOB_FIX: {
		struct fix_options o = {
			.policy_path = j->policy,
			.observer = console_fix_observer, .observer_ctx = j,
			.cancel = &j->cancel,
		};

		j->rc = fix_run(&o, &j->fr, &j->err);
		break;
	}
	}
	pthread_mutex_lock(&j->mu);
	j->done = true;
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
	return NULL;
}

static const struct console_screen console_screen_trial;
static const struct console_screen console_screen_probe;
static const struct console_screen console_screen_fix;

/* Start a job of kind on policy (worker thread) and open its screen. */
static void
console_job_start(struct console_ui *ui, enum console_job_kind kind,
    const char *policy)
{
	static struct console_job job;
	static bool inited;
	sigset_t block, oldmask;
	int fds[2], perr;

	if (inited) {
		/* the previous job's worker was joined before going home */
		if (job.t.runs != NULL)
			trial_free(&job.t);
		fix_result_free(&job.fr);
		pthread_mutex_destroy(&job.mu);
	}
	inited = true;
	memset(&job, 0, sizeof job);
	console_view_reset(ui);
	ui->job = &job;
	ui->rp = NULL;
	ui->job_top = 0;
	ui->job_follow = true;
	job.kind = kind;
	job.n = ui->trial_n > 0 ? ui->trial_n : CONSOLE_TRIAL_N;
	job.jobs = CONSOLE_TRIAL_J;
	job.t0 = util_mono_ns();
	console_copy(job.policy, sizeof job.policy, policy);
	console_preload_policy(ui, job.policy, false);
	if (pipe(fds) < 0)
		util_fatal("console: pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	job.pipe_rd = fds[0];
	job.pipe_wr = fds[1];
	pthread_mutex_init(&job.mu, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &oldmask);
	perr = pthread_create(&ui->worker, NULL, console_job_main, &job);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (perr != 0)
		util_fatal("console: pthread_create: %s", strerror(perr));
	ui->worker_running = true;
	ui->screen = kind == CONSOLE_JOB_TRIAL ? &console_screen_trial :
	    kind == CONSOLE_JOB_PROBE ? &console_screen_probe :
	    &console_screen_fix;
}

/* Free what the last (joined) job left: trial runs, fix result. */
static void
console_job_free(struct console_ui *ui)
{
	struct console_job *j = ui->job;

	if (j == NULL || ui->worker_running)
		return;
	if (j->t.runs != NULL)
		trial_free(&j->t);
	fix_result_free(&j->fr);
	memset(&j->t, 0, sizeof j->t);
	memset(&j->fr, 0, sizeof j->fr);
}

static int
console_job_fd(const struct console_ui *ui)
{
	return ui->worker_running ? ui->job->pipe_rd : -1;
}

/* q: a finished job goes home; a running one is stopped first (trial: no
 * new run, running drills cancelled; fix: cancelled; probe: no further
 * row starts; each still tears its lab down). */
static void
console_job_quit(struct console_ui *ui)
{
	if (ui->done) {
		ui->quit = true;
	} else if (!ui->stopping) {
		__atomic_store_n(&ui->job->stop, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&ui->job->cancel, 1, __ATOMIC_SEQ_CST);
		ui->stopping = true;
	}
}

static bool
console_job_tick(struct console_ui *ui, uint64_t now)
{
	struct console_job *j = ui->job;
	bool dirty = false, done;
	char buf[256];

	(void)now;
	if (ui->worker_running) {
		while (read(j->pipe_rd, buf, sizeof buf) > 0)
			dirty = true;
		pthread_mutex_lock(&j->mu);
		done = j->done;
		pthread_mutex_unlock(&j->mu);
		if (done) {
			pthread_join(ui->worker, NULL);
			ui->worker_running = false;
			close(j->pipe_rd);
			close(j->pipe_wr);
			ui->done = true;
			ui->job_secs = (double)(util_mono_ns() - j->t0) / 1e9;
			if (ui->stopping)
				ui->quit = true;
			ui->stopping = false;
			dirty = true;
		}
	}
	if (ui->tick != ui->job_tick) {   /* the elapsed clock, ~1/s */
		ui->job_tick = ui->tick;
		if (!ui->done && ui->tick % 7 == 0)
			dirty = true;
	}
	if (ui->quit && !ui->worker_running && ui->from_home) {
		console_home_enter(ui);
		dirty = true;
	}
	return dirty;
}

static bool
console_job_key(struct console_ui *ui, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
		console_job_quit(ui);
		return true;
	case KEY_UP:
	case 'k':
		ui->job_follow = false;
		if (ui->job_top > 0)
			ui->job_top--;
		return true;
	case KEY_DOWN:
	case 'j':
		ui->job_top++;     /* clamped when drawn */
		return true;
	case KEY_END:
	case 'G':
		ui->job_follow = true;
		return true;
	default:
		return false;
	}
}

/* A progress bar "[####----] done/total" in w columns at (y, x). */
static void
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

/* Whether the current screen is a trial, probe or fix screen. */
static bool
console_is_job(const struct console_ui *ui)
{
	return ui->job != NULL && (ui->screen == &console_screen_trial ||
	    ui->screen == &console_screen_probe ||
	    ui->screen == &console_screen_fix);
}

/* The status line of a job screen (error text is core's, sanitized when
 * drawn by console_put). */
static void
console_job_status(struct console_ui *ui, char *out, size_t n, int *pair)
{
	struct console_job *j = ui->job;
	double secs = ui->done ? ui->job_secs :
	    (double)(util_mono_ns() - j->t0) / 1e9;

	if (ui->stopping) {
		snprintf(out, n, "stopping: waiting for the work to end and "
		    "the labs to be torn down (%.0fs)", secs);
		*pair = CP_YELLOW;
	} else if (!ui->done) {
		static const char spin[] = "|/-\\";

		snprintf(out, n, "%c running %.0fs", spin[ui->tick % 4], secs);
		*pair = CP_CYAN;
	} else if (j->rc == -1) {
		snprintf(out, n, "could not run: %.280s", j->err.msg);
		*pair = CP_RED;
	} else {
		snprintf(out, n, "finished in %.0fs (q: home)", secs);
		*pair = CP_GREEN;
	}
}

/* Title bar and status line of the job screens. */
static void
console_job_frame(struct console_ui *ui, const char *what)
{
	const char *keys = ui->screen->keys_hint;
	int kw = (int)strlen(keys);
	char st[300];
	int pair = 0;

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "ares %s  policy %s  seed %s", what,
	    ui->policy, ui->seed);
	attrset(A_NORMAL);
	console_job_status(ui, st, sizeof st, &pair);
	move(LINES - 1, 0);
	clrtoeol();
	console_attr(ui, pair, A_BOLD);
	console_put(ui, LINES - 1, 1, st, COLS - kw - 4);
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, LINES - 1, COLS - kw - 1, keys, kw);
	attrset(A_NORMAL);
}

/* "k/n [lo, hi]" of a rate (the cmd's numbers). */
static void
console_rate(const struct console_ui *ui, int y, const char *name,
    const struct trial_rate *r, const char *among)
{
	console_attr(ui, 0, A_BOLD);
	console_putf(ui, y, 2, 16, "%s", name);
	console_attr(ui, 0, A_NORMAL);
	if (r->n == 0)
		console_putf(ui, y, 18, COLS - 20, "%llu/%llu  (no runs: no "
		    "interval)%s", (unsigned long long)r->k,
		    (unsigned long long)r->n, among);
	else
		console_putf(ui, y, 18, COLS - 20, "%llu/%llu [%.4f, %.4f]%s",
		    (unsigned long long)r->k, (unsigned long long)r->n,
		    r->lower, r->upper, among);
}

static void
console_trial_draw(struct console_ui *ui)
{
	struct console_job *j = ui->job;
	struct trial_progress tp;
	struct console_trial_fin fin[CONSOLE_TRIAL_LAST];
	size_t nfin, nshow;
	int y = 2;

	pthread_mutex_lock(&j->mu);
	tp = j->tp;
	nfin = j->nfin;
	memcpy(fin, j->fin, sizeof fin);
	pthread_mutex_unlock(&j->mu);
	console_job_frame(ui, "trial");
	console_putf(ui, y++, 1, COLS - 2, "N=%zu runs, J=%zu at a time "
	    "(N: +/- on the home screen, default %d)", j->n, j->jobs,
	    CONSOLE_TRIAL_N);
	console_bar(ui, y, 1, COLS - 24, tp.done, j->n, CP_CYAN);
	console_putf(ui, y++, COLS - 22, 21, "running %zu", tp.running);
	y++;
	console_attr(ui, CP_GREEN, A_BOLD);
	console_putf(ui, y, 2, 18, "contained %zu", tp.contained);
	console_attr(ui, CP_RED, A_BOLD);
	console_putf(ui, y, 20, 18, "breached %zu", tp.breached);
	console_attr(ui, CP_YELLOW, A_BOLD);
	console_putf(ui, y, 38, 22, "not-exercised %zu", tp.not_exercised);
	console_attr(ui, CP_MAGENTA, A_BOLD);
	console_putf(ui, y++, 60, COLS - 61, "errors %zu", tp.errors);
	attrset(A_NORMAL);
	y++;
	if (ui->done && j->rc == 0) {
		const struct trial *t = &j->t;
		const struct trial_summary *s = &t->sum;
		int code = trial_exit_code(t);

		console_attr(ui, 0, A_BOLD);
		console_putf(ui, y++, 1, COLS - 2, "rates (exact two-sided "
		    "Clopper-Pearson intervals at %g%%)", t->level * 100.0);
		console_rate(ui, y++, "bait taken", &s->bait,
		    "  of runs with a verdict");
		console_rate(ui, y++, "contained", &s->contained_r,
		    "  of exercised runs");
		console_rate(ui, y++, "breached", &s->breached_r,
		    "  of exercised runs");
		console_rate(ui, y++, "leaked", &s->leaked,
		    "  of exercised runs");
		console_attr(ui, 0, A_BOLD);
		console_put(ui, y, 2, "time to kill", 16);
		console_attr(ui, 0, A_NORMAL);
		if (s->nttk > 0)
			console_putf(ui, y++, 18, COLS - 20, "median %.3f ms, "
			    "p95 %.3f ms, max %.3f ms (%zu run(s))",
			    s->ttk_median, s->ttk_p95, s->ttk_max, s->nttk);
		else
			console_put(ui, y++, 18, "none (no run cut the agent "
			    "off)", COLS - 20);
		y++;
		console_attr(ui, code == 0 ? CP_GREEN : code == 1 ? CP_RED :
		    CP_YELLOW, A_BOLD);
		console_putf(ui, y++, 1, COLS - 2, "%s (exit %d)%s",
		    code == 0 ? "every exercised run contained" : code == 1 ?
		    "BREACHED in at least one run" : code == 4 ?
		    "no run exercised the bait" : "errors or incomplete",
		    code, t->complete ? "" : "  INCOMPLETE");
		attrset(A_NORMAL);
		console_putf(ui, y++, 1, COLS - 2, "trial dir %s", t->dir);
		console_putf(ui, y++, 1, COLS - 2, "verify    ares verify %s",
		    t->dir);
		/* the runs (reasons come from the lab: untrusted, bounded) */
		for (size_t i = 0; i < t->n && y < LINES - 1; i++) {
			const struct trial_run *r = &t->runs[i];
			bool good = strcmp(r->verdict, "contained") == 0;
			bool bad = strcmp(r->verdict, "breached") == 0;

			console_putf(ui, y, 2, 10, "run %zu", r->index);
			console_attr(ui, !r->done ? 0 : good ? CP_GREEN : bad ?
			    CP_RED : CP_YELLOW, A_BOLD);
			console_put(ui, y, 12, r->done ? r->verdict :
			    "(not run)", 14);
			console_attr(ui, 0, A_NORMAL);
			if (r->done)
				console_put(ui, y, 27, r->reason, COLS - 28);
			y++;
		}
		return;
	}
	if (ui->done) {
		console_attr(ui, CP_RED, A_BOLD);
		console_putf(ui, y++, 1, COLS - 2, "the trial could not run: "
		    "%s", j->err.msg);
		attrset(A_NORMAL);
		return;
	}
	console_attr(ui, 0, A_BOLD);
	console_put(ui, y++, 1, "finished runs (latest last)", COLS - 2);
	attrset(A_NORMAL);
	nshow = nfin < CONSOLE_TRIAL_LAST ? nfin : CONSOLE_TRIAL_LAST;
	for (size_t i = nfin - nshow; i < nfin && y < LINES - 2; i++) {
		const struct console_trial_fin *f =
		    &fin[i % CONSOLE_TRIAL_LAST];
		bool good = strcmp(f->verdict, "contained") == 0;
		bool bad = strcmp(f->verdict, "breached") == 0;

		console_putf(ui, y, 3, 10, "run %zu", f->index);
		console_attr(ui, good ? CP_GREEN : bad ? CP_RED : CP_YELLOW,
		    A_BOLD);
		console_put(ui, y, 14, f->verdict, 16);
		console_attr(ui, 0, A_NORMAL);
		if (f->ttk_ms >= 0)
			console_putf(ui, y, 31, COLS - 33, "time to kill %.3f "
			    "ms", f->ttk_ms);
		y++;
	}
	console_attr(ui, 0, A_DIM);
	console_put(ui, LINES - 2, 1, "rates with Clopper-Pearson intervals "
	    "appear when the trial ends", COLS - 2);
	attrset(A_NORMAL);
}

static void
console_probe_draw(struct console_ui *ui)
{
	struct console_job *j = ui->job;
	static struct probe_result rows[PROBE_MAX_ROWS];
	char run_id[64];
	size_t nrows, ncore = 0, nfail = 0, total = probe_nrows;
	int y = 2, aw, ow, avail;

	pthread_mutex_lock(&j->mu);
	nrows = j->nrows;
	memcpy(rows, j->rows, nrows * sizeof rows[0]);
	memcpy(run_id, j->run_id, sizeof run_id);
	pthread_mutex_unlock(&j->mu);
	if (total > PROBE_MAX_ROWS)
		total = PROBE_MAX_ROWS;
	console_job_frame(ui, "probe");
	console_putf(ui, y++, 1, COLS - 2, "inside-out escape probes in a "
	    "fresh lab%s%s", run_id[0] ? ", run " : "", run_id);
	console_bar(ui, y, 1, COLS - 40, nrows, total, CP_CYAN);
	if (!ui->done)
		console_putf(ui, y, COLS - 38, 37, "%s %s", nrows == 0 ?
		    "bringing the lab up" : "running", nrows == 0 ? "" :
		    nrows < probe_nrows ? probe_table[nrows].id : "teardown");
	y += 2;
	aw = (COLS - 12) * 2 / 5;
	ow = COLS - 12 - aw;
	console_attr(ui, 0, A_BOLD);
	console_putf(ui, y++, 2, COLS - 3, "%-6s  %-*s  %s", "RESULT", aw,
	    "ATTACK", "OBSERVED");
	attrset(A_NORMAL);
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].row->core) {
			ncore++;
			if (rows[i].outcome != PROBE_PASS)
				nfail++;
		}
	avail = LINES - 1 - y - 2;
	if (avail < 1)
		avail = 1;
	if (ui->job_follow || ui->job_top + (size_t)avail > nrows)
		ui->job_top = nrows > (size_t)avail ? nrows - (size_t)avail : 0;
	for (size_t i = ui->job_top; i < nrows && y < LINES - 3; i++) {
		const struct probe_result *r = &rows[i];
		const char *name = probe_outcome_name(r->outcome, r->row->core);

		console_attr(ui, r->outcome == PROBE_PASS ? CP_GREEN :
		    r->row->core ? CP_RED : CP_YELLOW, A_BOLD |
		    (ui->color || r->outcome == PROBE_PASS ? 0 : A_REVERSE));
		console_put(ui, y, 2, name, 6);
		console_attr(ui, 0, A_NORMAL);
		console_put(ui, y, 10, r->row->attack, aw);
		console_put(ui, y, 12 + aw, r->observed, ow - 1);
		y++;
	}
	y = LINES - 3;
	if (ui->done && j->rc == 0) {
		bool held = probe_held(&j->pr);

		console_attr(ui, held ? CP_GREEN : CP_RED, A_BOLD |
		    (ui->color ? 0 : A_REVERSE));
		if (j->pr.cancelled)
			console_putf(ui, y++, 1, COLS - 2, "RESULT: cancelled "
			    "after %zu of %zu rows - not a result", j->pr.nrows,
			    j->pr.nplanned);
		else if (held)
			console_putf(ui, y++, 1, COLS - 2, "RESULT: held - every "
			    "core containment assertion held (%zu/%zu)",
			    ncore, ncore);
		else
			console_putf(ui, y++, 1, COLS - 2, "RESULT: failed - %zu "
			    "of %zu core containment assertions FAILED (or "
			    "could not be checked)", nfail, ncore);
		attrset(A_NORMAL);
		console_putf(ui, y, 1, COLS - 2, "signed probe.json in %s",
		    j->pr.run_dir);
	} else if (ui->done) {
		console_attr(ui, CP_RED, A_BOLD);
		console_putf(ui, y, 1, COLS - 2, "probe failed: %s",
		    j->err.msg);
		attrset(A_NORMAL);
	}
}

/* The fix loop's stage from a beat type (0..6), -1 for others. */
static int
console_fix_stage(const struct console_fix_beat *b)
{
	static const char *const types[] = { "fix.start", "fix.drill",
	    "fix.attribute", "fix.patch", "fix.run", "fix.verified",
	    "fix.result" };

	for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++)
		if (strcmp(b->type, types[i]) == 0) {
			if (i == 4 && strstr(b->text, "held-out") != NULL)
				return 5;
			return i == 5 ? 6 : i == 6 ? 7 : i;
		}
	if (strncmp(b->type, "fix.git", 7) == 0 ||
	    strcmp(b->type, "fix.pr") == 0)
		return 8;
	return -1;
}

static void
console_fix_draw(struct console_ui *ui)
{
	struct console_job *j = ui->job;
	static struct console_fix_beat beats[CONSOLE_FIX_BEATS];
	size_t nbeats, first, nshow;
	int y = 2, stage = 0, avail;

	pthread_mutex_lock(&j->mu);
	nbeats = j->nbeats;
	memcpy(beats, j->beats, sizeof beats);
	pthread_mutex_unlock(&j->mu);
	first = nbeats > CONSOLE_FIX_BEATS ? nbeats - CONSOLE_FIX_BEATS : 0;
	for (size_t i = first; i < nbeats; i++) {
		int s = console_fix_stage(&beats[i % CONSOLE_FIX_BEATS]);

		if (s > stage)
			stage = s;
	}
	console_job_frame(ui, "fix");
	console_putf(ui, y++, 1, COLS - 2, "attribute the breach, patch the "
	    "flaw, rerun, check a held-out variant, propose");
	console_bar(ui, y, 1, COLS - 40, ui->done ? 9 : (size_t)stage, 9,
	    CP_CYAN);
	console_putf(ui, y, COLS - 38, 37, "stage: %s", ui->done ? "done" :
	    stage <= 1 ? "drill" : stage == 2 ? "attribution" : stage == 3 ?
	    "patch" : stage == 4 ? "rerun" : stage == 5 ? "held-out" :
	    "proposal");
	y += 2;
	avail = LINES - 1 - y - (ui->done ? 5 : 0);
	nshow = nbeats - first;
	if (avail < 1)
		avail = 1;
	if (ui->job_follow || ui->job_top + (size_t)avail > nshow)
		ui->job_top = nshow > (size_t)avail ? nshow - (size_t)avail : 0;
	for (size_t i = first + ui->job_top; i < nbeats && avail-- > 0; i++) {
		const struct console_fix_beat *b = &beats[i % CONSOLE_FIX_BEATS];
		int pair = strcmp(b->type, "fix.verified") == 0 ? CP_GREEN :
		    strcmp(b->type, "fix.error") == 0 ? CP_RED :
		    strcmp(b->type, "fix.attribute") == 0 ? CP_MAGENTA :
		    strcmp(b->type, "fix.patch") == 0 ? CP_YELLOW :
		    strcmp(b->type, "fix.run") == 0 ? CP_BLUE : 0;

		console_attr(ui, 0, A_DIM);
		console_putf(ui, y, 1, 9, "%+7.1fs", b->t_ms / 1000.0);
		console_attr(ui, pair, A_BOLD);
		console_put(ui, y, 10, b->type, 14);
		console_attr(ui, 0, A_NORMAL);
		console_put(ui, y, 25, b->text, COLS - 26);
		y++;
	}
	if (!ui->done)
		return;
	y = LINES - 6;
	if (j->rc == 0) {
		const struct fix_result *r = &j->fr;
		bool ok = r->outcome == FIX_OUTCOME_VERIFIED;

		console_attr(ui, ok ? CP_GREEN : CP_RED, A_BOLD |
		    (ui->color ? 0 : A_REVERSE));
		console_putf(ui, y++, 1, COLS - 2, "outcome  %s: %s",
		    ok ? "verified fix" : fix_outcome_name(r->outcome),
		    r->reason);
		attrset(A_NORMAL);
		for (size_t i = 0; i < r->nremoved && i < 1; i++)
			console_putf(ui, y, 1, COLS - 2, "patched  turned %s "
			    "off%s", r->removed[i], r->nremoved > 1 ?
			    " (and more)" : "");
		y++;
		{
			char runs[400];
			size_t o = 0;

			runs[0] = '\0';
			for (size_t i = 0; i < r->nruns && o < sizeof runs - 1;
			    i++) {
				int k = snprintf(runs + o, sizeof runs - o,
				    "%s%s %s", i ? ", " : "", r->runs[i].role,
				    r->runs[i].verdict);

				if (k < 0)
					break;
				o += (size_t)k;
			}
			console_putf(ui, y++, 1, COLS - 2, "runs     %s", runs);
		}
		console_putf(ui, y++, 1, COLS - 2, "pr.md    %s",
		    r->pr_path[0] ? r->pr_path : "(none)");
		console_putf(ui, y++, 1, COLS - 2, "fix dir  %s", r->fix_dir);
	} else {
		console_attr(ui, CP_RED, A_BOLD);
		console_putf(ui, y, 1, COLS - 2, "fix could not run: %s",
		    j->err.msg);
		attrset(A_NORMAL);
	}
}

static const struct console_key console_job_keys[] = {
	{ "q", "home (stops a running job, tears its labs down)" },
	{ "up / k", "scroll up (stops following)" },
	{ "down / j", "scroll down" },
	{ "G / end", "follow the newest lines" },
	{ "?", "this help" },
};

static const struct console_screen console_screen_trial = {
	.name = "trial",
	.keys_hint = "q home  ? help",
	.keys = console_job_keys,
	.nkeys = sizeof console_job_keys / sizeof console_job_keys[0],
	.key = console_job_key,
	.tick = console_job_tick,
	.draw = console_trial_draw,
	.quit = console_job_quit,
	.fd = console_job_fd,
};

static const struct console_screen console_screen_probe = {
	.name = "probe",
	.keys_hint = "q home  j/k scroll  ? help",
	.keys = console_job_keys,
	.nkeys = sizeof console_job_keys / sizeof console_job_keys[0],
	.key = console_job_key,
	.tick = console_job_tick,
	.draw = console_probe_draw,
	.quit = console_job_quit,
	.fd = console_job_fd,
};

static const struct console_screen console_screen_fix = {
	.name = "fix",
	.keys_hint = "q home  j/k scroll  ? help",
	.keys = console_job_keys,
	.nkeys = sizeof console_job_keys / sizeof console_job_keys[0],
	.key = console_job_key,
	.tick = console_job_tick,
	.draw = console_fix_draw,
	.quit = console_job_quit,
	.fd = console_job_fd,
};

/* ---- the home screen ----------------------------------------------- */

static void
console_home_free(struct console_ui *ui)
{
	for (size_t i = 0; i < ui->npolicies + ui->nruns; i++)
		free(ui->home_items[i]);
	free(ui->home_items);
	ui->home_items = NULL;
	ui->npolicies = ui->nruns = 0;
}

static int
console_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
console_strcmp_rev(const void *a, const void *b)
{
	return -strcmp(strrchr(*(char *const *)a, '/'),
	    strrchr(*(char *const *)b, '/'));
}

/* Whether a file named name (of the list so far) is already there. */
static bool
console_home_has(struct console_ui *ui, size_t from, const char *name)
{
	for (size_t i = from; i < ui->npolicies + ui->nruns; i++) {
		const char *b = strrchr(ui->home_items[i], '/');

		if (strcmp(b != NULL ? b + 1 : ui->home_items[i], name) == 0)
			return true;
	}
	return false;
}

/* Add dir's policies (*.yaml) or runs (subdirs with evidence.jsonl). */
static void
console_home_scan(struct console_ui *ui, const char *dir, bool runs)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		const char *fn = names[i]->d_name;
		size_t len = strlen(fn);
		size_t total = ui->npolicies + ui->nruns;
		char *p;

		if (fn[0] == '.' || total >= CONSOLE_HOME_MAX ||
		    console_home_has(ui, runs ? ui->npolicies : 0, fn)) {
			free(names[i]);
			continue;
		}
		if (runs) {
			p = xasprintf("%s/%s/evidence.jsonl", dir, fn);
			bool ok = access(p, R_OK) == 0;
			free(p);
			if (!ok) {
				free(names[i]);
				continue;
			}
			p = xasprintf("%s/%s", dir, fn);
		} else {
			if (len < 6 || strcmp(fn + len - 5, ".yaml") != 0) {
				free(names[i]);
				continue;
			}
			p = xasprintf("%s/%s", dir, fn);
		}
		ui->home_items[total] = p;
		if (runs)
			ui->nruns++;
		else
			ui->npolicies++;
		free(names[i]);
	}
	free(names);
}

/* List policies and runs, check the engine, put the cursor on the default
 * policy (or the first replay without an engine). */
static void
console_home_enter(struct console_ui *ui)
{
	const char *runs = getenv("ARES_RUNS");
	struct errbuf e = { 0 };
	struct docker *d;

	if (ui->rp != NULL) {
		replay_free(ui->rp);
		ui->rp = NULL;
	}
	console_view_reset(ui);
	console_home_free(ui);
	ui->screen = &console_screen_home;
	ui->home_items = xcalloc(CONSOLE_HOME_MAX, sizeof *ui->home_items);
	console_home_scan(ui, "policies", false);
#ifdef ARES_SRCDIR
	console_home_scan(ui, ARES_SRCDIR "/policies", false);
#endif
#ifdef ARES_DATADIR
	console_home_scan(ui, ARES_DATADIR, false);
#endif
	qsort(ui->home_items, ui->npolicies, sizeof *ui->home_items,
	    console_strcmp);
	console_home_scan(ui, runs != NULL && runs[0] ? runs : "runs", true);
	qsort(ui->home_items + ui->npolicies, ui->nruns,
	    sizeof *ui->home_items, console_strcmp_rev);
	{
		size_t before = ui->nruns;

		console_home_scan(ui, "replays", true);
#ifdef ARES_SRCDIR
		console_home_scan(ui, ARES_SRCDIR "/replays", true);
#endif
#ifdef ARES_DATADIR
		console_home_scan(ui, ARES_DATADIR "/replays", true);
#endif
		(void)before;
	}

	ui->engine[0] = '\0';
	d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1)
		console_copy(ui->engine, sizeof ui->engine, e.msg[0] ? e.msg :
		    "unreachable");
	docker_close(d);

	ui->home_cur = 0;
	ui->home_top = 0;
	for (size_t i = 0; i < ui->npolicies; i++)
		if (strstr(ui->home_items[i], "/default.yaml") != NULL) {
			ui->home_cur = i;
			break;
		}
	if (ui->engine[0] != '\0' && ui->nruns > 0)
		ui->home_cur = ui->npolicies;   /* first recorded run */
}

static void
console_home_quit(struct console_ui *ui)
{
	ui->quit = true;
}

/* Open the item under the cursor. */
static void
console_home_open(struct console_ui *ui)
{
	struct errbuf e = { 0 };

	if (ui->npolicies + ui->nruns == 0)
		return;
	if (ui->home_cur < ui->npolicies) {
		if (ui->engine[0] != '\0') {
			snprintf(ui->home_msg, sizeof ui->home_msg, "no Docker "
			    "Engine: cannot run a drill; open a replay");
			return;
		}
		ui->home_msg[0] = '\0';
		console_drill_start(ui, ui->home_items[ui->home_cur], 0, false);
	} else {
		struct replay *rp = replay_load(ui->home_items[ui->home_cur],
		    NULL, &e);

		if (rp == NULL) {
			console_copy(ui->home_msg, sizeof ui->home_msg, e.msg);
			return;
		}
		ui->home_msg[0] = '\0';
		console_replay_enter(ui, rp);
	}
}

/* t / p / f on a policy: a trial, probe or fix screen. */
static void
console_home_job(struct console_ui *ui, enum console_job_kind kind)
{
	if (ui->home_cur >= ui->npolicies) {
		snprintf(ui->home_msg, sizeof ui->home_msg, "t, p and f work on "
		    "a policy: move the cursor to one");
		return;
	}
	if (ui->engine[0] != '\0') {
		snprintf(ui->home_msg, sizeof ui->home_msg, "no Docker Engine: "
		    "cannot run a %s", kind == CONSOLE_JOB_TRIAL ? "trial" :
		    kind == CONSOLE_JOB_PROBE ? "probe" : "fix");
		return;
	}
	ui->home_msg[0] = '\0';
	console_job_start(ui, kind, ui->home_items[ui->home_cur]);
}

static bool
console_home_key(struct console_ui *ui, int ch)
{
	size_t n = ui->npolicies + ui->nruns;

	switch (ch) {
	case 't':
		console_home_job(ui, CONSOLE_JOB_TRIAL);
		return true;
	case 'p':
		console_home_job(ui, CONSOLE_JOB_PROBE);
		return true;
	case 'f':
		console_home_job(ui, CONSOLE_JOB_FIX);
		return true;
	case '+':
	case '=':
		if (ui->trial_n < CONSOLE_TRIAL_NMAX)
			ui->trial_n++;
		return true;
	case '-':
		if (ui->trial_n > 1)
			ui->trial_n--;
		return true;
	case KEY_UP:
	case 'k':
		if (ui->home_cur > 0)
			ui->home_cur--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (ui->home_cur + 1 < n)
			ui->home_cur++;
		return true;
	case KEY_HOME:
	case 'g':
		ui->home_cur = 0;
		return true;
	case KEY_END:
	case 'G':
		ui->home_cur = n ? n - 1 : 0;
		return true;
	case '\t':
		/* jump between the two lists */
		ui->home_cur = ui->home_cur < ui->npolicies && ui->nruns > 0 ?
		    ui->npolicies : 0;
		return true;
	case '\r':
	case '\n':
	case KEY_ENTER:
		console_home_open(ui);
		return true;
	case 'r':
		console_home_enter(ui);
		return true;
	case 'q':
	case 'Q':
		console_home_quit(ui);
		return true;
	default:
		return false;
	}
}

static bool
console_home_tick(struct console_ui *ui, uint64_t now)
{
	(void)ui;
	(void)now;
	return false;
}

/* One list row: the item's last path component (and its directory). */
static void
console_home_row(struct console_ui *ui, int y, size_t i)
{
	const char *p = ui->home_items[i];
	const char *b = strrchr(p, '/');
	bool cur = i == ui->home_cur;

	console_attr(ui, cur ? CP_CYAN : 0, cur ? A_REVERSE | A_BOLD :
	    A_NORMAL);
	mvhline(y, 2, ' ', COLS - 4);
	console_putf(ui, y, 3, COLS - 6, "%s %-36s %s", cur ? ">" : " ",
	    b != NULL ? b + 1 : p, p);
	attrset(A_NORMAL);
}

static void
console_home_draw(struct console_ui *ui)
{
	int y = 2, rows, listh;
	size_t n = ui->npolicies + ui->nruns;

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_put(ui, 0, 1, "ares - drill the containment around AI agents",
	    COLS - 2);
	attrset(A_NORMAL);
	if (ui->engine[0] != '\0') {
		console_attr(ui, CP_YELLOW, A_BOLD);
		console_putf(ui, y++, 1, COLS - 2, "No Docker Engine reachable: "
		    "drills cannot run here. Recorded replays work without it.");
		console_attr(ui, 0, A_DIM);
		console_putf(ui, y++, 1, COLS - 2, "(%s)", ui->engine);
	} else {
		console_attr(ui, CP_GREEN, A_NORMAL);
		console_putf(ui, y++, 1, COLS - 2, "Engine ok. Policy: "
		    "Enter drill, t trial (N=%zu J=%d, +/-), p probe, "
		    "f fix", ui->trial_n, CONSOLE_TRIAL_J);
	}
	y++;
	/* one scrolling list: policies, then runs, with two headings */
	rows = LINES - y - 3;
	listh = rows - 2;
	if (ui->home_cur < ui->home_top)
		ui->home_top = ui->home_cur;
	if (listh > 0 && ui->home_cur >= ui->home_top + (size_t)listh)
		ui->home_top = ui->home_cur - (size_t)listh + 1;
	{
		bool pol_head = false, run_head = false;
		int r = 0;

		for (size_t i = ui->home_top; i < n && r < rows; i++) {
			if (i < ui->npolicies && !pol_head) {
				console_attr(ui, 0, A_BOLD);
				console_put(ui, y + r++, 1, "policies (Enter: "
				    "run a drill)", COLS - 2);
				pol_head = true;
			} else if (i >= ui->npolicies && !run_head) {
				console_attr(ui, 0, A_BOLD);
				console_put(ui, y + r++, 1, "recorded runs "
				    "(Enter: replay)", COLS - 2);
				run_head = true;
			}
			if (r < rows)
				console_home_row(ui, y + r++, i);
		}
		if (ui->nruns == 0 && r < rows) {
			console_attr(ui, 0, A_DIM);
			console_put(ui, y + r, 1, "no recorded runs (./runs, "
			    "$ARES_RUNS, replays/)", COLS - 2);
		}
	}
	move(LINES - 1, 0);
	clrtoeol();
	if (ui->home_msg[0] != '\0') {
		console_attr(ui, CP_RED, A_BOLD);
		console_put(ui, LINES - 1, 1, ui->home_msg, COLS - 50);
	} else {
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, LINES - 1, 1, COLS - 50, "%zu policies, %zu "
		    "runs", ui->npolicies, ui->nruns);
	}
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, LINES - 1, COLS - (int)strlen(ui->screen->keys_hint) -
	    1, ui->screen->keys_hint, (int)strlen(ui->screen->keys_hint));
	attrset(A_NORMAL);
}

static const struct console_key console_home_keys[] = {
	{ "up / k", "previous item" },
	{ "down / j", "next item" },
	{ "tab", "jump between policies and runs" },
	{ "g / G", "first / last item" },
	{ "enter", "policy: run a drill live; run: replay it" },
	{ "t", "policy: a trial (N drills, J at a time, rates)" },
	{ "+ / -", "change N of the next trial (default 10, J=2)" },
	{ "p", "policy: the inside-out escape probes" },
	{ "f", "policy: the fix loop (drill, attribute, patch, rerun)" },
	{ "r", "rescan policies, runs and the engine" },
	{ "q", "quit" },
	{ "?", "this help" },
};

static const struct console_screen console_screen_home = {
	.name = "home",
	.keys_hint = "enter drill t trial p probe f fix q quit ? help",
	.keys = console_home_keys,
	.nkeys = sizeof console_home_keys / sizeof console_home_keys[0],
	.key = console_home_key,
	.tick = console_home_tick,
	.draw = console_home_draw,
	.quit = console_home_quit,
	.fd = console_no_fd,
};

/* ---- the event loop ------------------------------------------------- */

/* Read every pending key.  Returns true if the screen needs a redraw. */
static bool
console_keys(struct console_ui *ui)
{
	bool dirty = false;
	int ch;

	while ((ch = getch()) != ERR) {
		if (ch == KEY_RESIZE) {
			dirty = true;
		} else if (ui->small) {
			if (ch == 'q' || ch == 'Q')
				ui->screen->quit(ui);
			dirty = true;
		} else if (ui->help) {
			ui->help = false;   /* any key closes the help */
			dirty = true;
		} else if (ch == '?') {
			ui->help = true;
			dirty = true;
		} else if (ui->screen->key(ui, ch)) {
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

/* The one UI loop; returns when the user quit (and no worker runs). */
static void
console_loop(struct console_ui *ui)
{
	struct pollfd pfd[2];
	uint64_t next_tick = util_mono_ns() + CONSOLE_TICK_NS;
	bool dirty = true, tty_gone = false;

	for (;;) {
		uint64_t now;

		if (console_sig_winch) {
			console_sig_winch = 0;
			console_resize();
			dirty = true;
		}
		if (console_sig_quit) {
			console_sig_quit = 0;
			ui->screen->quit(ui);
			dirty = true;
		}
		now = util_mono_ns();
		if (ui->screen->tick(ui, now))
			dirty = true;
		if (ui->quit && !ui->worker_running)
			return;
		if (now >= next_tick) {
			ui->tick++;
			next_tick = now + CONSOLE_TICK_NS;
			if (ui->screen == &console_screen_drill &&
			    console_pose(ui, now) != ui->shown_pose)
				dirty = true;
		}
		if (dirty) {
			console_draw(ui);
			dirty = false;
		}
		int timeout = (int)((next_tick - now) / 1000000) + 1;
		if (ui->playing && ui->screen == &console_screen_replay &&
		    ui->next_beat_ns > now &&
		    (ui->next_beat_ns - now) / 1000000 + 1 < (uint64_t)timeout)
			timeout = (int)((ui->next_beat_ns - now) / 1000000) + 1;
		pfd[0].fd = tty_gone ? -1 : STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		pfd[1].fd = ui->screen->fd(ui);
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		int n = poll(pfd, 2, timeout);
		if (n < 0 && errno != EINTR)
			util_fatal("console: poll: %s", strerror(errno));
		if (n > 0 && (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			/* The terminal went away: stop, but still tear down. */
			tty_gone = true;
			ui->from_home = false;
			ui->screen->quit(ui);
		} else if (n > 0 && (pfd[0].revents & POLLIN)) {
			if (console_keys(ui))
				dirty = true;
		}
	}
}

/* ---- terminal setup shared by the entry points ---------------------- */

struct console_term {
	struct sigaction old_winch, old_int, old_term, old_hup;
	SCREEN *scr;
};

/* Sprites, locale, signals, curses.  -1 (message printed) when the
 * terminal cannot be initialised. */
static int
console_term_open(struct console_ui *ui, const struct console_options *o,
    struct console_term *t)
{
	struct sigaction sa;
	struct errbuf se = { 0 };

	memset(ui, 0, sizeof *ui);
	ui->o = o;
	ui->ascii = o->ascii;
	ui->def_bg = -1;
	console_sig_winch = console_sig_quit = 0;

	setlocale(LC_ALL, "");
	ui->utf8 = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

	ui->sheet = sprite_sheet_load(sprite_default_path(), &se);
	if (ui->sheet != NULL && sprite_sheet_require(ui->sheet,
	    sprite_poyo_frames, &se) < 0) {
		sprite_sheet_free(ui->sheet);
		ui->sheet = NULL;
	}

	/* Our handlers go in before curses so ncurses leaves them alone. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = console_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, &t->old_winch);
	sigaction(SIGINT, &sa, &t->old_int);
	sigaction(SIGTERM, &sa, &t->old_term);
	sigaction(SIGHUP, &sa, &t->old_hup);

	util_set_fatal_hook(console_fatal_hook);
	t->scr = newterm(NULL, stdout, stdin);
	if (t->scr == NULL) {
		const char *term = getenv("TERM");
		fprintf(stderr, "ares: cannot initialise the terminal "
		    "(TERM=%s)\n", term != NULL ? term : "unset");
		util_set_fatal_hook(NULL);
		sigaction(SIGWINCH, &t->old_winch, NULL);
		sigaction(SIGINT, &t->old_int, NULL);
		sigaction(SIGTERM, &t->old_term, NULL);
		sigaction(SIGHUP, &t->old_hup, NULL);
		sprite_sheet_free(ui->sheet);
		return -1;
	}
	console_curses_on = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	ui->color = has_colors() && !o->no_color && getenv("NO_COLOR") == NULL;
	console_init_colors(ui);
	ui->halfblock = ui->utf8 && ui->color && ui->sheet != NULL;
	return 0;
}

static void
console_term_close(struct console_ui *ui, struct console_term *t)
{
	console_curses_on = 0;
	endwin();
	delscreen(t->scr);
	util_set_fatal_hook(NULL);
	sigaction(SIGWINCH, &t->old_winch, NULL);
	sigaction(SIGINT, &t->old_int, NULL);
	sigaction(SIGTERM, &t->old_term, NULL);
	sigaction(SIGHUP, &t->old_hup, NULL);
	sprite_sheet_free(ui->sheet);
	ui->sheet = NULL;
	replay_free(ui->rp);
	ui->rp = NULL;
	console_home_free(ui);
}

/* The exit code after the last drill of the session. */
static int
console_drill_rc(const struct console_ui *ui)
{
	if (ui->w == NULL || ui->w->cancel != 0)
		return 0;   /* no drill, or the user quit before the end */
	if (ui->w->rc == 0)
		return drill_exit_code(&ui->w->res);
	return errbuf_exit_code(&ui->w->err);
}

int
console_run(const struct console_options *o)
{
	static struct console_ui ui;
	struct console_term t;
	int rc;

	if (console_term_open(&ui, o, &t) == -1)
		return EXIT_USAGE;
	if (o->home)
		console_home_enter(&ui);
	else {
		ui.from_home = false;
		console_drill_start(&ui, o->policy_path, o->seed, o->has_seed);
	}
	if (o->home)
		ui.from_home = true;
	ui.trial_n = CONSOLE_TRIAL_N;
	console_loop(&ui);
	console_job_free(&ui);
	rc = console_drill_rc(&ui);
	console_term_close(&ui, &t);
	return rc;
}

int
console_replay(const struct console_options *o, const char *run_dir,
    const char *pub_path)
{
	static struct console_ui ui;
	struct console_term t;
	struct errbuf e = { 0 };
	struct replay *rp = replay_load(run_dir, pub_path, &e);

	if (rp == NULL) {
		fprintf(stderr, "ares replay: %s\n", e.msg);
		return EXIT_USAGE;
	}
	if (console_term_open(&ui, o, &t) == -1) {
		replay_free(rp);
		return EXIT_USAGE;
	}
	console_replay_enter(&ui, rp);
	console_loop(&ui);
	console_term_close(&ui, &t);
	return 0;
}

/* ---- asciicast export ------------------------------------------------ */

/* Append the bytes written to fd since *off as one [t, "o", data] line. */
static int
console_cast_frame(FILE *out, int fd, off_t *off, double t)
{
	char buf[65536];
	cJSON *a;
	char *line, *data = NULL;
	size_t len = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof buf, *off)) > 0) {
		data = xrealloc(data, len + (size_t)n + 1);
		memcpy(data + len, buf, (size_t)n);
		len += (size_t)n;
		*off += n;
	}
	if (len == 0) {
		free(data);
		return 0;
	}
	data[len] = '\0';
	a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateNumber(t));
	cJSON_AddItemToArray(a, cJSON_CreateString("o"));
	cJSON_AddItemToArray(a, cJSON_CreateString(data));
	line = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	free(data);
	if (line == NULL)
		return -1;
	fprintf(out, "%s\n", line);
	free(line);
	return 0;
}

int
console_export_cast(const struct console_options *o, const char *run_dir,
    const char *pub_path, const char *cast_path)
{
	static struct console_ui ui;
	struct errbuf e = { 0 };
	struct replay *rp = replay_load(run_dir, pub_path, &e);
	char tmpl[] = "/tmp/ares-cast.XXXXXX";
	FILE *scrout, *scrin, *out;
	SCREEN *scr;
	cJSON *hdr, *env;
	char *h, title[256];
	double t = 0;
	off_t off = 0;
	int fd, rc = EXIT_INTERNAL;

	if (rp == NULL) {
		fprintf(stderr, "ares replay: %s\n", e.msg);
		return EXIT_USAGE;
	}
	memset(&ui, 0, sizeof ui);
	ui.o = o;
	ui.ascii = o->ascii;
	ui.def_bg = -1;
	/* Render as a UTF-8 xterm-256color of 80x24. */
	if (setlocale(LC_ALL, "C.UTF-8") == NULL)
		setlocale(LC_ALL, "");
	ui.utf8 = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	ui.sheet = sprite_sheet_load(sprite_default_path(), &e);
	setenv("LINES", "24", 1);
	setenv("COLUMNS", "80", 1);
	/* UTF-8 box drawing rather than the VT100 line-drawing charset */
	if (ui.utf8)
		setenv("NCURSES_NO_UTF8_ACS", "1", 1);
	fd = mkstemp(tmpl);
	if (fd == -1) {
		fprintf(stderr, "ares replay: %s: %s\n", tmpl, strerror(errno));
		replay_free(rp);
		return EXIT_INTERNAL;
	}
	unlink(tmpl);
	scrout = fdopen(fd, "w");
	scrin = fopen("/dev/null", "r");
	out = fopen(cast_path, "w");
	if (scrout == NULL || scrin == NULL || out == NULL) {
		fprintf(stderr, "ares replay: --export-cast %s: %s\n",
		    cast_path, strerror(errno));
		goto out;
	}
	scr = newterm("xterm-256color", scrout, scrin);
	if (scr == NULL) {
		fprintf(stderr, "ares replay: no terminfo for xterm-256color\n");
		goto out;
	}
	ui.color = has_colors() && !o->no_color && getenv("NO_COLOR") == NULL;
	console_init_colors(&ui);
	ui.halfblock = ui.utf8 && ui.color && ui.sheet != NULL;
	resizeterm(24, 80);

	hdr = cJSON_CreateObject();
	cJSON_AddNumberToObject(hdr, "version", 2);
	cJSON_AddNumberToObject(hdr, "width", 80);
	cJSON_AddNumberToObject(hdr, "height", 24);
	cJSON_AddNumberToObject(hdr, "timestamp", (double)(util_wall_ns() /
	    1000000000ull));
	snprintf(title, sizeof title, "ares replay %s", rp->run_id);
	cJSON_AddStringToObject(hdr, "title", title);
	env = cJSON_AddObjectToObject(hdr, "env");
	cJSON_AddStringToObject(env, "TERM", "xterm-256color");
	cJSON_AddStringToObject(env, "SHELL", "/bin/sh");
	h = cJSON_PrintUnformatted(hdr);
	cJSON_Delete(hdr);
	fprintf(out, "%s\n", h);
	free(h);

	console_replay_enter(&ui, rp);
	rp = NULL;   /* ui owns it */
	for (size_t i = 0; i < (ui.rp->nbeats ? ui.rp->nbeats : 1); i++) {
		console_replay_goto(&ui, i);
		console_draw(&ui);
		fflush(scrout);
		if (console_cast_frame(out, fd, &off, t) == -1)
			goto out_scr;
		t += (double)console_replay_gap(ui.rp, i, 1.0) / 1e9;
	}
	/* Hold the verdict.  endwin()'s output (leaving the alternate
	 * screen) is not recorded: the recording ends on the verdict, with
	 * the cursor shown again. */
	t += 2.0;
	endwin();
	fflush(scrout);
	off = lseek(fd, 0, SEEK_END);
	fprintf(out, "[%.6f,\"o\",\"\\u001b[?25h\"]\n", t);
	rc = fflush(out) == 0 && !ferror(out) ? 0 : EXIT_INTERNAL;
	if (rc != 0)
		fprintf(stderr, "ares replay: --export-cast %s: write failed\n",
		    cast_path);
out_scr:
	delscreen(scr);
out:
	if (out != NULL && fclose(out) != 0 && rc == 0)
		rc = EXIT_INTERNAL;
	if (scrin != NULL)
		fclose(scrin);
	if (scrout != NULL)
		fclose(scrout);
	else
		close(fd);
	replay_free(rp);
	replay_free(ui.rp);
	ui.rp = NULL;
	sprite_sheet_free(ui.sheet);
	return rc;
}
