/*
 * console.c - the live drill console (ncursesw).
 *
 * Threads: the UI thread owns curses and runs one poll() loop; a worker
 * thread runs drill_run() (all Docker/network work happens there).  The
 * drill's observer copies each beat into a mutex-protected ring and writes
 * one byte to a non-blocking self-pipe; it never blocks.  Signal handlers
 * only set flags.  The screen is redrawn at most once per loop iteration,
 * when something changed; a ~150 ms tick animates Poyo.
 *
 * This file: struct console_ui's lifecycle (what the screens share), the
 * event loop, terminal setup and the entry points.  Screens are tables of
 * function pointers (struct console_screen), one per screen_*.c, each
 * with its own state; draw.c has the drawing shared by them, job.c the
 * trial/probe/fix worker, screen_job.c what its three screens share,
 * cast.c the asciicast export.
 */
#include <errno.h>
#include <fcntl.h>
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

#include <curses.h>

#include "core.h"
#include "sprites.h"
#include "tui.h"

#define CONSOLE_MIN_COLS   80
#define CONSOLE_MIN_LINES  24
#define CONSOLE_TICK_NS    (150ull * 1000 * 1000)
#ifdef BUTTON5_PRESSED
#define CONSOLE_WHEEL_DOWN BUTTON5_PRESSED
#else
#define CONSOLE_WHEEL_DOWN 0
#endif

/* Set by signal handlers only. */
static volatile sig_atomic_t console_sig_winch;
static volatile sig_atomic_t console_sig_quit;
/* Curses is active: the fatal hook must restore the terminal. */
static volatile sig_atomic_t console_curses_on;

/* ---------------------------------------------------------------- */
/* signals, fatal hook                                               */
/* ---------------------------------------------------------------- */

/* SIGWINCH, SIGINT, SIGTERM, SIGHUP: set a flag for the loop. */
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

/* ---------------------------------------------------------------- */
/* what the screens share                                            */
/* ---------------------------------------------------------------- */

/* Copy at most n-1 bytes of src into dst (NUL-terminated). */
void
console_copy(char *dst, size_t n, const char *src)
{
	size_t len = src != NULL ? strnlen(src, n - 1) : 0;

	if (len > 0)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

/* A self-pipe for a worker to wake the loop: fds[0] to poll and read,
 * fds[1] to write; both non-blocking and close-on-exec.  Fatal when the
 * process has no descriptors left. */
void
console_wake_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		util_fatal("console: pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
}

/* Make sc the current screen, with its '?' overlay closed and no quit
 * pending. */
void
console_screen_open(struct console_ui *ui, const struct console_screen *sc)
{
	ui->screen = sc;
	ui->help = false;
	ui->quit = false;
	ui->keys_raw = false;
}

/* Run fn(arg) on the worker thread.  The worker must not take the UI's
 * signals: they are blocked while it is created (it inherits the mask).
 * Fatal when no thread can be made. */
void
console_worker_start(struct console_ui *ui, void *(*fn)(void *), void *arg)
{
	sigset_t block, oldmask;
	int perr;

	sigemptyset(&block);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &oldmask);
	perr = pthread_create(&ui->worker, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (perr != 0)
		util_fatal("console: pthread_create: %s", strerror(perr));
	ui->worker_running = true;
}

/* The fd hook of a screen with no worker to wait on. */
int
console_no_fd(const struct console_ui *ui)
{
	(void)ui;
	return -1;
}

/* ---------------------------------------------------------------- */
/* screens: one table entry per screen, one event loop               */
/* ---------------------------------------------------------------- */

/* "terminal too small": the screen's status line and how to leave. */
static void
console_draw_small(struct console_ui *ui)
{
	char text[600];
	int pair, y = LINES / 2 - 1;

	if (y < 0)
		y = 0;
	console_attr(ui, CP_YELLOW, A_BOLD);
	console_put(ui, y, 1, "terminal too small (need 80x24)", COLS - 1);
	if (ui->screen->status != NULL) {
		ui->screen->status(ui, text, sizeof text, &pair);
		console_attr(ui, pair, A_NORMAL);
		console_put(ui, y + 1, 1, text, COLS - 1);
	}
	console_attr(ui, 0, A_NORMAL);
	/* q goes back home from a screen opened there, else quits */
	console_put(ui, y + 2, 1, ui->from_home && ui->screen !=
	    &console_screen_home ? "q back" : "q quit", COLS - 1);
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

/* Redraw the whole screen. */
void
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
		} else if (ch == '?' && !ui->keys_raw) {
			ui->help = true;
			dirty = true;
		} else if (ui->screen->key(ui, ch)) {
			dirty = true;
		}
	}
	return dirty;
}

/* Take the terminal's new size (after SIGWINCH). */
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
		uint64_t now, wake;

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
			if (ui->screen->frame != NULL &&
			    ui->screen->frame(ui, now))
				dirty = true;
		}
		if (dirty) {
			console_draw(ui);
			dirty = false;
		}
		int timeout = (int)((next_tick - now) / 1000000) + 1;
		wake = ui->screen->wake != NULL ? ui->screen->wake(ui) : 0;
		if (wake > now &&
		    (wake - now) / 1000000 + 1 < (uint64_t)timeout)
			timeout = (int)((wake - now) / 1000000) + 1;
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

/* Put back the signal handlers console_term_open() replaced. */
static void
console_term_signals_restore(const struct console_term *t)
{
	sigaction(SIGWINCH, &t->old_winch, NULL);
	sigaction(SIGINT, &t->old_int, NULL);
	sigaction(SIGTERM, &t->old_term, NULL);
	sigaction(SIGHUP, &t->old_hup, NULL);
}

/* Sprites, locale, signals, curses; ui starts afresh.  -1 (message
 * printed) when the terminal cannot be initialised. */
static int
console_term_open(struct console_ui *ui, const struct console_options *o,
    struct console_term *t)
{
	struct sigaction sa;
	struct errbuf se = { 0 };

	if (console_term_usable() == -1)
		return -1;         /* TERM=dumb and the like: said why */
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
		console_term_signals_restore(t);
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
	/* Esc answers at once (ncurses waits 1 s for a sequence by
	 * default); the wheel scrolls the event pane (pane.c) */
	set_escdelay(25);
	mousemask(BUTTON4_PRESSED | CONSOLE_WHEEL_DOWN, NULL);
	console_pane_keys_init();
	ui->color = has_colors() && !o->no_color && getenv("NO_COLOR") == NULL;
	console_init_colors(ui);
	ui->halfblock = ui->utf8 && ui->color && ui->sheet != NULL;
	return 0;
}

/* Leave curses, put the terminal and the signals back, free what the
 * screens still hold. */
static void
console_term_close(struct console_ui *ui, struct console_term *t)
{
	console_curses_on = 0;
	endwin();
	delscreen(t->scr);
	util_set_fatal_hook(NULL);
	console_term_signals_restore(t);
	sprite_sheet_free(ui->sheet);
	ui->sheet = NULL;
	console_replay_close();
	console_home_free();
}

/* The console (tui.h): the home screen or a live drill; the exit code of
 * the last drill it ran. */
int
console_run(const struct console_options *o)
{
	static struct console_ui ui;
	struct console_term t;
	char *exit_text;
	int rc;

	if (console_term_open(&ui, o, &t) == -1)
		return EXIT_USAGE;
	if (o->home)
		console_home_enter(&ui);
	else {
		ui.from_home = false;
		console_note_dir(CONSOLE_NOTE_DRILL, NULL);
		console_drill_start(&ui, o->policy_path, o->seed, o->has_seed);
	}
	if (o->home)
		ui.from_home = true;
	console_loop(&ui);
	exit_text = console_exit_text(&ui);
	console_job_free(&ui);
	rc = console_drill_exit_code();
	console_term_close(&ui, &t);
	fflush(stdout);     /* curses' last bytes first (rmcup) */
	if (exit_text != NULL)
		fputs(exit_text, stderr);   /* where to find it again */
	free(exit_text);
	return rc;
}

/* ares replay RUN_DIR (tui.h): the replay screen.  0, or EXIT_USAGE. */
int
console_replay(const struct console_options *o, const char *run_dir,
    const char *pub_path)
{
	static struct console_ui ui;
	struct console_term t;
	struct errbuf e = { 0 };
	bool trial = trial_dir_is(run_dir), fix = !trial && fix_dir_is(run_dir);
	struct replay *rp = NULL;
	char *exit_text;

	/* a trial or fix dir opens its own screen */
	if (trial ? console_trial_dir_load(run_dir, pub_path, &e) : fix ?
	    console_fix_dir_load(run_dir, pub_path, &e) :
	    (rp = replay_load(run_dir, pub_path, &e)) == NULL ? -1 : 0) {
		fprintf(stderr, "ares replay: %s\n", e.msg);
		return EXIT_USAGE;
	}
	if (console_term_open(&ui, o, &t) == -1) {
		replay_free(rp);
		return EXIT_USAGE;
	}
	if (trial)
		console_trial_dir_enter(&ui);
	else if (fix)
		console_fix_dir_enter(&ui);
	else {
		console_note_dir(CONSOLE_NOTE_RUN, run_dir);
		console_replay_enter(&ui, rp);
	}
	console_loop(&ui);
	exit_text = console_exit_text(&ui);
	console_term_close(&ui, &t);
	fflush(stdout);     /* curses' last bytes first (rmcup) */
	if (exit_text != NULL)
		fputs(exit_text, stderr);   /* where to find it again */
	free(exit_text);
	return 0;
}
