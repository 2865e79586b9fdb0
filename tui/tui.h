/*
 * tui.h - the one header of tui/: the ncurses console (console.c, draw.c,
 * job.c, screen_*.c, cast.c) and the CLI (main.c, cmd.c, cmd_*.c).  Only
 * tui/ includes curses; core/ and sprites/ never do.  The sections after
 * console.c's entry points are the console's own, shared between its
 * files (UI thread only, unless a comment says otherwise).
 */
#ifndef DRILL_TUI_H
#define DRILL_TUI_H

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <curses.h>

#include "core.h"
#include "sprites.h"

/* ------------------------------------------------------------------ */
/* console.c - the console: entry points, its state, the event loop    */
/* ------------------------------------------------------------------ */

struct console_options {
	const char *policy_path;  /* NULL: the drill's default policy */
	uint64_t seed;
	bool has_seed;            /* else the policy's seed */
	bool no_color;            /* --no-color (NO_COLOR in the env too) */
	bool ascii;               /* --ascii: ASCII boxes and Poyo, no UTF-8 */
	bool home;                /* start on the home screen (no --policy) */
	unsigned present_ms;      /* --present: the gateway holds each model
	                             turn this long (0: off); a replay plays
	                             at once */
	bool demo;                /* --demo: the home screen, then at once
	                             the default drill (paced) when an engine
	                             answers; q comes back home */
};

/*
 * Run one drill (drill_run() on a worker thread) and show it live: title
 * bar, lab map with Poyo, lever panel, event list, status line.  Needs a
 * terminal of at least 80x24 (smaller ones get a "terminal too small"
 * message; the drill keeps running).  'q' (or SIGINT/SIGTERM) quits; a
 * running drill is cancelled and the console waits for its teardown.
 *
 * Returns the process exit code, that of the last drill the console ran
 * (the one it opened on, or the last one started from the home screen):
 * drill_exit_code() of its result once it reached a verdict,
 * errbuf_exit_code() when it could not run, EXIT_INTERNAL (5) when the
 * user stopped it before its end (q, SIGINT, SIGTERM, hang-up); 0 when no
 * drill ran; EXIT_USAGE when the terminal cannot be initialised.
 *
 * The title bar is filled before the final result arrives from a PHASE
 * beat "run <id>: policy <name>, seed <n>, model <name>, ..." (drill.c's
 * first beat) or from key=value words "run=<id>", "model=<name>",
 * "policy=<name>", "seed=<n>" in any PHASE beat.
 */
int console_run(const struct console_options *o);
/*
 * With o->home the console opens on the home screen instead: policies
 * (./policies, the source tree's, the installed ones) and recorded runs
 * ($ARES_RUNS or ./runs, and the bundled replays/); Enter runs a drill on
 * a policy (then q comes back home) or replays a run.  Without a reachable
 * Docker Engine it says so and offers the replays.
 */

/* ares replay RUN_DIR: the replay screen (same drawing as the live one),
 * beat by beat; keys in its '?' overlay.  pub_path: key to verify with
 * (NULL: the run's own ares.pub).  Needs no Docker.  Returns 0, or
 * EXIT_USAGE when the run cannot be read or the terminal not set up. */
int console_replay(const struct console_options *o, const char *run_dir,
    const char *pub_path);

#define CONSOLE_HIST       256     /* beats kept for the event list */
#define CONSOLE_MAX_PAIRS  256     /* sprite colour pairs we allocate */

/*
 * What every screen shares: the terminal and its colours, the loop's
 * flags, the current screen, the one worker thread and the job.  Each
 * screen's own state is a struct in its screen_*.c, reached through its
 * table entry (struct console_screen's state).
 */
struct console_ui {
	const struct console_options *o;
	bool color, c256, utf8, ascii, halfblock;
	short def_bg;
	struct sprite_sheet *sheet;
	short pal_color[SPRITE_MAX_COLORS];
	struct { short fg, bg; } pairs[CONSOLE_MAX_PAIRS];
	int npairs;

	const struct console_screen *screen;   /* the current one */
	unsigned long tick;        /* the animation clock (~150 ms) */
	bool help;                 /* the '?' overlay is up */
	bool small;                /* last draw was "too small" */
	bool quit;                 /* leave the screen (the loop ends once
	                              no worker runs) */
	bool from_home;            /* 'q' goes back to the home screen */
	/* the one worker thread: a live drill's (screen_drill.c) or the
	 * job's (job.c); the loop does not end while it runs */
	pthread_t worker;
	bool worker_running;
	struct console_job *job;   /* the last job started, or NULL */
	bool keys_raw;             /* a prompt or pager takes every key,
	                              '?' too (pane.c) */
};

/* One line of a screen's '?' overlay. */
struct console_key {
	const char *key;
	const char *what;
};

/* A screen: one const table entry of hooks (like tmux's cmd_entry); the
 * event loop (console.c) calls the current screen's. */
struct console_screen {
	const char *name;
	const char *keys_hint;               /* status line, right */
	const struct console_key *keys;      /* the '?' overlay */
	size_t nkeys;
	/* This screen's state: a struct defined (and its one instance
	 * owned) by the screen's file. */
	void *state;
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
	/* The status line's text and colour pair, also shown under
	 * "terminal too small"; NULL: the screen has none there. */
	void (*status)(struct console_ui *ui, char *out, size_t n, int *pair);
	/* The animation clock advanced: true to redraw (NULL: never). */
	bool (*frame)(struct console_ui *ui, uint64_t now);
	/* When (util_mono_ns()) the screen wants its next tick, if sooner
	 * than the animation clock; 0 or NULL: no sooner. */
	uint64_t (*wake)(const struct console_ui *ui);
};

/* Copy at most n-1 bytes of src into dst (NUL-terminated). */
void console_copy(char *dst, size_t n, const char *src);
/* A non-blocking, close-on-exec self-pipe (fds[0] read end, fds[1] write
 * end) for a worker to wake the loop; fatal when none can be made. */
void console_wake_pipe(int fds[2]);
/* Make sc the current screen, with its '?' overlay closed and no quit
 * pending. */
void console_screen_open(struct console_ui *ui, const struct console_screen *sc);
/* Run fn(arg) on the worker thread (ui->worker, ui->worker_running),
 * which never takes the console's signals; fatal when it cannot start. */
void console_worker_start(struct console_ui *ui, void *(*fn)(void *),
    void *arg);
/* Redraw the whole screen: the current screen (and its '?' overlay), or
 * "terminal too small". */
void console_draw(struct console_ui *ui);
/* The fd hook of a screen with no worker to wait on: -1. */
int console_no_fd(const struct console_ui *ui);

/* ------------------------------------------------------------------ */
/* timeline.c - the marker timeline bar of the drill layout            */
/* ------------------------------------------------------------------ */

#define CONSOLE_TL_MARKS   256     /* live markers kept for the bar */

/* What the bar shows live: the markers shown so far (their beat index and
 * kind), how many beats are shown (the position is the last) and how many
 * the drill delivered (the track's length).  A replay fills shown and
 * known; its markers come from the replay itself. */
struct console_timeline {
	uint32_t idx[CONSOLE_TL_MARKS];
	unsigned char kind[CONSOLE_TL_MARKS];
	size_t nmarks;
	size_t shown, known;
};

struct console_view;
/* Nothing shown, nothing known. */
void console_timeline_reset(struct console_timeline *t);
/* Beat b is shown now (live): the position moves, a marker is kept. */
void console_timeline_note(struct console_timeline *t,
    const struct drill_beat *b);
/* The bar on row y (the events box's bottom edge): v's markers (rp's
 * beats when rp is not NULL, a replay) placed by beat index, the part
 * played so far and the position. */
void console_timeline_draw(struct console_ui *ui,
    const struct console_view *v, const struct replay *rp, int y);

/* ------------------------------------------------------------------ */
/* draw.c - drawing shared by the screens; the drill layout            */
/* ------------------------------------------------------------------ */

/* Colour pairs 1..7: basic colour on the default background. */
enum {
	CP_RED = 1, CP_GREEN, CP_YELLOW, CP_BLUE, CP_MAGENTA, CP_CYAN, CP_WHITE,
	CP_TITLE,
	CP_SPRITE_BASE = 16,
};

/* Set the attributes a, with colour pair pair when colour is on. */
void console_attr(const struct console_ui *ui, int pair, attr_t a);
/* Put untrusted text at (y, x), at most maxcols columns (printable
 * characters only, wide ones counted by their width). */
void console_put(const struct console_ui *ui, int y, int x, const char *s,
    int maxcols);
/* printf into a bounded field of the screen (our own text, still bounded). */
void console_putf(const struct console_ui *ui, int y, int x, int maxcols,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A box with an optional title in its top edge. */
void console_box(const struct console_ui *ui, int y, int x, int h, int w,
    const char *title);
/* A progress bar "[####----] done/total" in w columns at (y, x). */
void console_bar(const struct console_ui *ui, int y, int x, int w,
    size_t done, size_t total, int pair);
/* Colour pairs and the sprite palette, when the terminal has colour. */
void console_init_colors(struct console_ui *ui);
/* The event list's label of a beat kind, its colour pair and
 * attributes. */
const char *console_kind_label(enum drill_beat_kind k, int *pair,
    attr_t *a);

/*
 * What the drill layout shows, live (screen_drill.c) or replayed
 * (screen_replay.c): the title, core's reducer state over the beats
 * (levers, map, Poyo's flags, counts, verdict), the lever names, the
 * event list, Poyo's pacing.  Each of the two screens has its own.
 */
struct console_pane;
struct console_view {
	char run_id[64], policy[256], model[64], seed[32];
	char phase[128];
	struct replay_state st;
	char lev_name[POLICY_MAX_LEVERS][REPLAY_LEVER_NAME];

	struct drill_beat hist[CONSOLE_HIST];
	size_t hhead, hcount;
	size_t dropped;

	/* live pacing of Poyo (UI clock, not state) */
	bool walking;         /* the last agent beat was a model turn */
	uint64_t last_agent_ns;   /* UI clock when the last agent beat came */
	uint64_t bait_ns;         /* UI clock when the state showed the bait */
	uint64_t zap_ns;          /* UI clock of the first verified lever */

	bool done;                /* the drill ended (replaying: the verdict
	                             beat is shown) */
	bool have_result;         /* drill_run() returned 0 (or, replaying:
	                             the verdict beat was reached) */
	const struct drill_result *res;   /* time to kill and the verdict's
	                                     reason, once have_result */
	const char *shown_pose;
	const char *pose_override;        /* replay: the beat's pose */
	size_t hbase;             /* beats before hist[hhead] (dropped from
	                             the list, or before it in a replay) */
	struct console_pane *pane;        /* the event pane, or NULL */
	struct console_timeline tl;       /* the marker timeline (timeline.c) */
	unsigned pace_ms;         /* presenter mode paced this run (the
	                             title says "PACED"); 0: not */
};

/* Forget what v shows (levers, events, flags). */
void console_view_reset(struct console_view *v);
/* Which of Poyo's frames v shows now (now: util_mono_ns()). */
const char *console_pose(const struct console_ui *ui,
    const struct console_view *v, uint64_t now);
/* The status line of v once its state has a verdict ("verdict: ...",
 * its pair): true; false (nothing written) before. */
bool console_view_verdict(const struct console_view *v, char *out, size_t n,
    int *pair);
/* The drill layout (live and replay share it): title, lab map, levers,
 * the event list (its box titled events_title), the replay's badge when
 * badge is not NULL, the status line (the screen's status hook). */
void console_draw_drill_layout(struct console_ui *ui, struct console_view *v,
    const char *events_title, const struct replay *badge);

/* ------------------------------------------------------------------ */
/* pane.c - the drill layout's event pane (less, k9s habits)           */
/* ------------------------------------------------------------------ */

/*
 * The event pane of the drill layout, live and replayed: it scrolls on
 * its own (a selection, a first row, following the newest beat or not),
 * searches the beats' texts, opens one beat's evidence line in a pager,
 * jumps to beat N, copies the run id or dir with OSC 52.  Beats are
 * numbered by their index in the whole list (0-based here, 1-based on
 * screen): the view's hist[] holds those from v->hbase on.  Keys in
 * docs/cli-replay.md and docs/cli-drill.md.
 */
enum console_pane_mode {
	CONSOLE_PANE_LIST,       /* the list (scrolling or following) */
	CONSOLE_PANE_SEARCH,     /* typing a '/' pattern */
	CONSOLE_PANE_GOTO,       /* typing ':' N */
	CONSOLE_PANE_PAGER,      /* one beat's text and evidence line */
};

#define CONSOLE_PANE_INPUT     64      /* a prompt's longest text */
#define CONSOLE_PANE_COPY_MAX  1024    /* bytes OSC 52 copies at most */
#define CONSOLE_PANE_PAGER_MAX 4000    /* pager lines at most */
#define CONSOLE_PANE_LINE_MAX  (64 * 1024)  /* evidence line read */

struct console_pane {
	size_t top, sel;          /* first beat shown, the selected one */
	bool follow;              /* the newest beat selected and shown */
	int rows;                 /* rows the last draw had */
	enum console_pane_mode mode;
	char input[CONSOLE_PANE_INPUT];   /* the prompt's text */
	char pat[CONSOLE_PANE_INPUT];     /* the last search */
	char msg[160];            /* for the status line until the next key */
	int msg_pair;
	/* the pager: its source text (owned), wrapped at pager_w */
	char *pager_text;
	char pager_title[160];
	char **pager;             /* npager lines (owned) */
	size_t npager, ptop;
	int pager_w;
};

/* What a screen's pane works on, filled at each key. */
struct console_pane_src {
	const struct console_view *v;   /* the list (hist, hbase) */
	const struct replay *rp;        /* replay: every beat, its evidence
	                                   line; NULL live */
	const char *run_id;             /* "" or NULL: not known yet */
	const char *run_dir;
	void (*go)(size_t i);           /* replay: show beat i (the list then
	                                   ends there); NULL live */
};

/* Teach ncurses the Home / End sequences terminals send besides
 * terminfo's (after keypad()). */
void console_pane_keys_init(void);
/* Follow the newest beat, nothing typed, no pager (frees it). */
void console_pane_reset(struct console_pane *p);
/* The events box at (y, x), h x w, titled title ("events ..."; while
 * scrolled "events A-B/N ..."), of v's list: p's selection, the search's
 * matches highlighted.  p NULL: the newest beats. */
void console_pane_draw(struct console_ui *ui, const struct console_view *v,
    struct console_pane *p, int y, int x, int h, int w, const char *title);
/* After the layout: the pager over the whole screen, or the prompt /
 * message on the status line (the last row). */
void console_pane_overlay(struct console_ui *ui, struct console_pane *p);
/* A key for the pane: true when it took it (the screen redraws).  In the
 * pager and at a prompt it takes every key. */
bool console_pane_key(struct console_ui *ui, struct console_pane *p,
    const struct console_pane_src *src, int ch);
/* The pane takes every key (a prompt or the pager is up): '?' is text. */
bool console_pane_modal(const struct console_pane *p);

/* ------------------------------------------------------------------ */
/* pane_text.c - the pane's terminal-free parts (tests/unit/test_pane) */
/* ------------------------------------------------------------------ */

/* Keep p->sel and p->top inside the list base .. base+n-1 shown rows at
 * a time: following, the newest is selected and the last rows shown; a
 * selection past the end (the list shrank) follows again. */
void console_pane_fit(struct console_pane *p, size_t base, size_t n,
    int rows);
/* Move the selection delta beats (negative: older) in base .. base+n-1;
 * it stops following, and follows again when it reaches the newest going
 * down. */
void console_pane_move(struct console_pane *p, long delta, size_t base,
    size_t n);
/* Does text hold pat (ASCII case ignored; "" never)?  Where, how long. */
bool console_pane_match(const char *text, const char *pat, size_t *off,
    size_t *len);
/* The first of the n items text(ctx, i) holding pat after 'from' (dir
 * +1) or before it (dir -1), wrapping around (*wrapped); -1: none. */
long console_pane_find(const char *pat, size_t n, size_t from, int dir,
    const char *(*text)(const void *ctx, size_t i), const void *ctx,
    bool *wrapped);
/* ESC ] 52 ; c ; base64(s) BEL, NUL-terminated, into out (n bytes): its
 * length, or -1 when s is empty, longer than CONSOLE_PANE_COPY_MAX, holds
 * anything but printable ASCII, or out is too small. */
int console_pane_osc52(const char *s, char *out, size_t n);
/* Line 'line' (1-based) of the file at path, at most max bytes (*cut when
 * longer); the caller frees it.  NULL + e when there is no such line. */
char *console_pane_read_line(const char *path, uint32_t line, size_t max,
    bool *cut, struct errbuf *e);
/* A JSON text pretty-printed (two-space indent), else a copy of it; the
 * caller frees it. */
char *console_pane_json_pretty(const char *line);
/* text made inert (util_sanitize) and cut at '\n' and every width
 * columns into at most max lines (*lines, free with
 * console_pane_lines_free); the number of lines (at least 1). */
size_t console_pane_wrap(const char *text, int width, bool utf8,
    size_t max, char ***lines);
void console_pane_lines_free(char **lines, size_t n);
/* The columns the first len bytes of s take on screen (console_put's
 * count: a byte each without UTF-8). */
int console_pane_cols(const char *s, size_t len, bool utf8);

/* ------------------------------------------------------------------ */
/* screen_drill.c - the live drill screen                              */
/* ------------------------------------------------------------------ */

/* Load the policy at path for a title: its name (else the path) into
 * name, its seed into seed unless has_seed.  Returns the policy (the
 * caller frees it), or NULL when it does not load (the run says why). */
struct policy *console_policy_title(const char *path, bool has_seed,
    char *name, size_t nname, char *seed, size_t nseed);
/* Start drill_run() on the worker thread and switch to the drill screen. */
void console_drill_start(struct console_ui *ui, const char *policy,
    uint64_t seed, bool has_seed);
/* The exit code after the last drill the console ran: 0 when none ran,
 * EXIT_INTERNAL when the user stopped it, else its own (call once its
 * worker was joined). */
int console_drill_exit_code(void);
extern const struct console_screen console_screen_drill;

/* ------------------------------------------------------------------ */
/* screen_replay.c - the replay screen                                 */
/* ------------------------------------------------------------------ */

/* Open rp (owned from now on) on the replay screen. */
void console_replay_enter(struct console_ui *ui, struct replay *rp);
/* How long beat i stays before i+1 when playing at speed x. */
uint64_t console_replay_gap(const struct replay *rp, size_t i, double x);
/* Show beat pos (clamped to the last one). */
void console_replay_goto(size_t pos);
/* Free the replay the screen holds, if any. */
void console_replay_close(void);
/* console_replay_enter, and q / Esc go back to screen back (its state as
 * it was) instead of home. */
void console_replay_enter_from(struct console_ui *ui, struct replay *rp,
    const struct console_screen *back);
extern const struct console_screen console_screen_replay;

/* ------------------------------------------------------------------ */
/* job.c - the trial, probe and fix worker (the job's lifecycle)       */
/* ------------------------------------------------------------------ */

#define CONSOLE_FIX_BEATS  96      /* fix beats kept for the screen */
#define CONSOLE_TRIAL_LAST 8       /* finished trial runs listed live */
#define CONSOLE_TRIAL_N    10      /* the trial screen's defaults */
#define CONSOLE_TRIAL_J    2

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
 * fr, rc, err) belong to the worker until the UI has joined it; those
 * marked (UI) only the UI thread touches. */
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
	bool joined;                        /* (UI) the worker was joined */
	bool stopping;                      /* (UI) stopped, not joined yet */
	double secs;                        /* (UI) how long it took */
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

/* Start a job of kind on policy (n: the trial's N, 0 for the default) on
 * the worker thread; ui->job is it from now on. */
void console_job_start(struct console_ui *ui, enum console_job_kind kind,
    const char *policy, size_t n);
/* Ask a running job to stop (trial: no new run, running drills cancelled;
 * fix: cancelled; probe: no further row starts; each still tears its lab
 * down). */
void console_job_stop(struct console_ui *ui);
/* Take the worker's wake-ups; join it once it returned (j->joined).
 * Returns true when anything came. */
bool console_job_reap(struct console_ui *ui);
/* Free what the last (joined) job left: trial runs, fix result. */
void console_job_free(struct console_ui *ui);
/* The job's self-pipe while its worker runs, else -1 (a screen's fd). */
int console_job_fd(const struct console_ui *ui);

/* ------------------------------------------------------------------ */
/* screen_job.c - what the trial, probe and fix screens share          */
/* ------------------------------------------------------------------ */

/* The part every job screen's state starts with (screen_job.c's hooks
 * reach it through the current screen's entry). */
struct console_job_view {
	char policy[256], seed[32];   /* the title bar */
	size_t top;                   /* first list row shown */
	bool follow;                  /* keep the newest rows in view */
};

/* Start a job of kind on policy (n: the trial's N) and open its screen. */
void console_job_open(struct console_ui *ui, enum console_job_kind kind,
    const char *policy, size_t n);
/* Title bar and status line of the job screens. */
void console_job_frame(struct console_ui *ui, const char *what);
/* The job screens' hooks (struct console_screen). */
void console_job_quit(struct console_ui *ui);
bool console_job_tick(struct console_ui *ui, uint64_t now);
bool console_job_key(struct console_ui *ui, int ch);
void console_job_status(struct console_ui *ui, char *out, size_t n,
    int *pair);
/* Their '?' keys: CONSOLE_JOB_NKEYS entries (screen_job.c checks it). */
#define CONSOLE_JOB_NKEYS 5
extern const struct console_key console_job_keys[];

/* ------------------------------------------------------------------ */
/* screen_trial.c - the trial screen                                   */
/* ------------------------------------------------------------------ */

extern const struct console_screen console_screen_trial;
/* The rates of t as bars with their intervals, the time to kill and its
 * histogram (at most maxbins rows, 0: none) from row y; the next row. */
int console_trial_pictures(struct console_ui *ui, int y,
    const struct trial *t, int maxbins);

/* ------------------------------------------------------------------ */
/* screen_probe.c - the probe screen                                   */
/* ------------------------------------------------------------------ */

extern const struct console_screen console_screen_probe;

/* ------------------------------------------------------------------ */
/* screen_fix.c - the fix screen                                       */
/* ------------------------------------------------------------------ */

extern const struct console_screen console_screen_fix;

/* ------------------------------------------------------------------ */
/* screen_home.c - the home screen                                     */
/* ------------------------------------------------------------------ */

/* List policies and runs, check the engine, open the home screen. */
void console_home_enter(struct console_ui *ui);
/* Free the home screen's lists. */
void console_home_free(void);
extern const struct console_screen console_screen_home;

/* ------------------------------------------------------------------ */
/* cast.c - ares replay --export-cast                                  */
/* ------------------------------------------------------------------ */

/* ares replay RUN_DIR --export-cast FILE: the replay rendered by the same
 * screen code through ncurses (newterm on a temporary file, TERM
 * xterm-256color, 80x24) into an asciicast v2 file, one frame per beat.
 * Returns 0 or an exit code (message on stderr). */
int console_export_cast(const struct console_options *o, const char *run_dir,
    const char *pub_path, const char *cast_path);

/* ------------------------------------------------------------------ */
/* cmd.c - the command table; what the commands share                  */
/* ------------------------------------------------------------------ */

/*
 * One command (like tmux's cmd_entry): the only copy of its name, its
 * options, its summary and its usage text.  `ares help` lists every
 * entry (summary and the "ares NAME ..." lines of its usage); `ares help
 * NAME`, `ares NAME --help` and `-h` print its usage to stdout (exit 0),
 * a bad argument prints it to stderr (exit 2).  The usage is the
 * synopsis of docs/cli-NAME.md.
 */
struct cmd_entry {
	const char *name;
	const char *alias;              /* another name for it, or NULL */
	const char *optstring;          /* getopt_long's short options; NULL:
	                                   the command parses its own argv */
	const struct option *longopts;  /* getopt_long's long ones, or NULL */
	const char *summary;            /* one line, for ares help */
	const char *usage;              /* "usage: ares NAME ...\n..." */
	/* Run it on argv (argv[0] is the command's name); the exit code. */
	int (*exec)(const struct cmd_entry *self, int argc, char **argv);
};

/* The command named or aliased name, or NULL. */
const struct cmd_entry *cmd_find(const char *name);
/* Print e's usage text to f. */
void cmd_usage(const struct cmd_entry *e, FILE *f);
/* The next option of argv by self's optstring and longopts, -1 after the
 * last (the caller sets optind = 1 first); CMD_OPT_EXIT with *rc set
 * after --help / -h (usage on stdout, 0) or a bad option (usage on
 * stderr, EXIT_USAGE): the command returns *rc. */
#define CMD_OPT_EXIT 0x100
int cmd_getopt(const struct cmd_entry *self, int argc, char **argv, int *rc);
/* The whole help (ares help, ares --help): global usage, every command,
 * exit codes, environment. */
void cmd_help_all(FILE *f);
/* The default policy file (./policies, the source tree's, the installed
 * one); a static buffer. */
const char *cmd_policy_default(void);
/* --seed's value s for the command who ("ares drill"): decimal digits,
 * at most UINT64_MAX; leading_zeros: any number of leading zeros (lab,
 * fix), else at most 20 characters (drill, trial, the console).  0, or -1
 * after printing "WHO: --seed: 'S' is not a non-negative integer". */
int cmd_opt_seed(const char *who, const char *s, bool leading_zeros,
    uint64_t *out);
/* --model-url's value for who: http:// or https://.  0, or -1 after
 * printing "WHO: --model-url: 'S' is not an http(s) URL". */
int cmd_opt_url(const char *who, const char *s);
/* --present[=MS]'s value s for who (NULL: PACE_PRESENT_MS) into *ms:
 * 1..PACE_PRESENT_MS_MAX.  0, or -1 after printing "WHO: --present: ...". */
int cmd_opt_present(const char *who, const char *s, unsigned *ms);
/* --json PATH: j (freed here) printed to stdout for "-", else written to
 * PATH.  0, or -1 + e. */
int cmd_json_write(cJSON *j, const char *path, struct errbuf *e);
/* Refuse who ("ares drill") on a remote engine (DOCKER_HOST not a local
 * unix socket), before anything is made: 0 when local, else the message
 * on stderr and EXIT_USAGE (docs/engine.md).  needs: what who needs of
 * the local machine (NULL: host bind mounts and the host kernel). */
int cmd_require_local(const char *who, const char *needs);
/* Before a command that builds labs makes anything: a DOCKER_HOST that
 * parses and, on a remote engine, a policy (NULL: none yet) whose flaws
 * and options a lab there can have (lab_remote_policy_check; model_url
 * the command's --model-url or NULL).  0, or the exit code after printing
 * "<who>: <reason>" (2 for a refusal). */
int cmd_require_lab_engine(const char *who, const char *policy,
    const char *model_url);

/* ------------------------------------------------------------------ */
/* cmd_*.c - one file per command, each defining its cmd_entry         */
/* ------------------------------------------------------------------ */

/* ares drill (cmd_drill.c, docs/cli-drill.md): one drill headless; exit
 * with the verdict (drill_exit_code). */
extern const struct cmd_entry cmd_drill_entry;
/* ares lab up|status|down (cmd_lab.c, docs/cli-lab.md): 0 ok, 2 usage /
 * bad input, 3 engine unreachable, 5 failure. */
extern const struct cmd_entry cmd_lab_entry;
/* ares probe (cmd_probe.c, docs/cli-probe.md): 0 held (negative control:
 * every flaw seen), 1 a core row failed (the gate is blind), 2 usage,
 * 3 engine unreachable, 5 lab or internal failure. */
extern const struct cmd_entry cmd_probe_entry;
/* ares replay RUN_DIR (cmd_replay.c, docs/cli-replay.md): the replay
 * screen or --export-cast; no Docker. */
extern const struct cmd_entry cmd_replay_entry;
/* ares verify DIR (cmd_sign.c, docs/cli-verify.md): 0 all valid, 1
 * tampered or unverifiable, 2 usage / unreadable input. */
extern const struct cmd_entry cmd_verify_entry;
/* ares keygen (cmd_sign.c, docs/cli-keygen.md): write a signing key
 * pair. */
extern const struct cmd_entry cmd_keygen_entry;
/* ares trial (cmd_trial.c, docs/cli-trial.md): 0 all exercised runs
 * contained (at least one), 1 any breach, 2 usage, 3 engine unreachable,
 * 4 none exercised, 5 error runs or an incomplete trial. */
extern const struct cmd_entry cmd_trial_entry;
/* ares stats ci K N (cmd_trial.c, docs/cli-stats.md): "lower upper";
 * 0, or 2 on bad input. */
extern const struct cmd_entry cmd_stats_entry;
/* ares fix (cmd_fix.c, docs/cli-fix.md): 0 verified fix proposed, 1 not
 * a fix / unproven / unattributed, 2 usage or a tampered run dir, 3
 * engine unreachable, 5 internal. */
extern const struct cmd_entry cmd_fix_entry;
/* ares gc (cmd_gc.c, docs/cli-gc.md): 0 nothing failed, 2 usage, 3 no
 * engine, 5 something stayed. */
extern const struct cmd_entry cmd_gc_entry;
/* ares engine (cmd_engine.c, docs/cli-engine.md): which engine DOCKER_HOST
 * names, how it is reached, its version, what works there. */
extern const struct cmd_entry cmd_engine_entry;
/* ares gate (cmd_gate.c, docs/cli-gate.md): 0 no new breach path, 1 a
 * new one (or the gate is blind), 2 usage, 3 no engine, 4 nothing
 * exercised, 5 a lab could not come up. */
extern const struct cmd_entry cmd_gate_entry;
/* ares policy import (cmd_policy.c, docs/cli-policy.md): 0 imported, 1
 * --strict refused, 2 usage / bad input, 3 no engine, 5 internal. */
extern const struct cmd_entry cmd_policy_entry;
/* ares variant gen|show|list (cmd_variant.c, docs/cli-variant.md): 0
 * printed, 2 usage / bad variant file, 5 write failed. */
extern const struct cmd_entry cmd_variant_entry;
/* ares report DIR --html FILE (cmd_report.c, docs/cli-report.md): one
 * self-contained HTML page; 0 written, 2 usage / unreadable dir / FILE no
 * regular file, 5 not written. */
extern const struct cmd_entry cmd_report_entry;

/* ------------------------------------------------------------------ */
/* screen_trial_dir.c, screen_fix_dir.c - recorded trial and fix dirs  */
/* ------------------------------------------------------------------ */

/* Load DIR (trial.json / fix.json, bounded, unverified) and verify it
 * for the badge (trial_verify_dir / fix_verify_dir; pub_path: key, NULL
 * the dir's own).  0, or -1 + e when it cannot be read. */
int console_trial_dir_load(const char *dir, const char *pub_path,
    struct errbuf *e);
int console_fix_dir_load(const char *dir, const char *pub_path,
    struct errbuf *e);
/* Open the loaded one on its screen (q: home when ui->from_home, else
 * quit). */
void console_trial_dir_enter(struct console_ui *ui);
void console_fix_dir_enter(struct console_ui *ui);
/* A replay opened from that screen went "home": reopen the screen
 * instead (true), or false when none is waiting (console_home_enter
 * asks first). */
bool console_trial_dir_back(struct console_ui *ui);
bool console_fix_dir_back(struct console_ui *ui);
extern const struct console_screen console_screen_trial_dir;
extern const struct console_screen console_screen_fix_dir;

/* ------------------------------------------------------------------ */
/* console_exit.c - whether the terminal can be driven; the exit line  */
/* ------------------------------------------------------------------ */

/* Before curses: 0 when TERM names a terminal with cursor addressing;
 * else -1 after telling stderr why and what to use instead (the entry
 * points then return EXIT_USAGE). */
int console_term_usable(void);
/* What the console shows now, for the exit line: a recorded dir opened
 * (RUN, TRIAL, FIX: dir), a live drill (DRILL) or job (JOB) started. */
enum { CONSOLE_NOTE_NONE = 0, CONSOLE_NOTE_RUN, CONSOLE_NOTE_TRIAL,
    CONSOLE_NOTE_FIX, CONSOLE_NOTE_DRILL, CONSOLE_NOTE_JOB };
void console_note_dir(int what, const char *dir);
/* The exit line (after endwin): the folder last shown and the `ares
 * replay` / `ares verify` lines for it, shell-quoted; NULL when none.
 * Call before the job is freed.  Caller frees. */
char *console_exit_text(const struct console_ui *ui);
/* The run dir of the last live drill (screen_drill.c), or NULL. */
const char *console_drill_run_dir(void);

#endif /* DRILL_TUI_H */
