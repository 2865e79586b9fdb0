/*
 * screen_home.c - the home screen: policies (./policies, the source
 * tree's, the installed ones) and recorded runs ($ARES_RUNS or ./runs,
 * the bundled replays/), and whether a Docker Engine is reachable.  Enter
 * runs a drill or replays a run; t, p and f start a trial, probe or fix.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

#define CONSOLE_HOME_MAX   256     /* policies + runs listed at home */
#define CONSOLE_TRIAL_NMAX 200     /* the largest N of a trial ('+') */

/*
 * The engine check runs on its own detached thread, so that network I/O
 * (the /version request can take up to the client's request timeout on a
 * hung daemon) never blocks the UI.  The UI and the thread each hold a
 * reference; the last to let go frees it.
 */
struct console_engine_check {
	int refs;                  /* atomic */
	int done;                  /* atomic: msg is final */
	char msg[256];             /* "" reachable, else why not */
};

/* The home screen's state. */
struct console_home_screen {
	char **items;              /* policy paths, then run dirs */
	size_t npolicies, nruns, cur, top;
	char engine[256];          /* "" when reachable, else why not */
	struct console_engine_check *engine_check;  /* running, or NULL */
	bool auto_cur;             /* the cursor has not been moved yet */
	char msg[256];
	size_t trial_n;            /* N of the next trial ('+' / '-') */
};

static struct console_home_screen console_home_st = {
	.trial_n = CONSOLE_TRIAL_N,
};

/* Let go of c: the last of the UI and the thread frees it. */
static void
console_engine_check_release(struct console_engine_check *c)
{
	if (c != NULL && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(c);
}

/* The check itself: open, negotiate, close.  Any thread. */
static void
console_engine_check_run(struct console_engine_check *c)
{
	struct errbuf e = { 0 };
	struct docker *d = docker_connect(NULL, &e);

	if (d == NULL)
		console_copy(c->msg, sizeof c->msg, e.msg[0] ? e.msg :
		    "unreachable");
	docker_close(d);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

/* The check's detached thread. */
static void *
console_engine_check_main(void *arg)
{
	struct console_engine_check *c = arg;

	console_engine_check_run(c);
	console_engine_check_release(c);
	return NULL;
}

/* Start a check (dropping a running one); the home tick collects it. */
static void
console_engine_check_start(struct console_home_screen *h)
{
	struct console_engine_check *c = xcalloc(1, sizeof *c);
	pthread_attr_t attr;
	pthread_t th;
	sigset_t block, old;
	int rc;

	console_engine_check_release(h->engine_check);
	c->refs = 2;
	h->engine_check = c;
	/* the thread never takes the console's signals */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &attr, console_engine_check_main, c);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {          /* no thread: check here, once */
		console_engine_check_run(c);
		c->refs = 1;
	}
}

static bool console_home_tick(struct console_ui *, uint64_t);

/* Whether the engine check is still running. */
static bool
console_engine_checking(const struct console_home_screen *h)
{
	return h->engine_check != NULL;
}

/* Free the lists (policies and runs) and let go of the engine check. */
void
console_home_free(void)
{
	struct console_home_screen *h = &console_home_st;

	for (size_t i = 0; i < h->npolicies + h->nruns; i++)
		free(h->items[i]);
	free(h->items);
	h->items = NULL;
	h->npolicies = h->nruns = 0;
	console_engine_check_release(h->engine_check);
	h->engine_check = NULL;
}

/* qsort: paths in order. */
static int
console_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* qsort: paths by their last component, newest (largest) first. */
static int
console_strcmp_rev(const void *a, const void *b)
{
	return -strcmp(strrchr(*(char *const *)a, '/'),
	    strrchr(*(char *const *)b, '/'));
}

/* Whether a file named name (of the list so far) is already there. */
static bool
console_home_has(const struct console_home_screen *h, size_t from,
    const char *name)
{
	for (size_t i = from; i < h->npolicies + h->nruns; i++) {
		const char *b = strrchr(h->items[i], '/');

		if (strcmp(b != NULL ? b + 1 : h->items[i], name) == 0)
			return true;
	}
	return false;
}

/* Add dir's policies (*.yaml) or runs (subdirs with evidence.jsonl). */
static void
console_home_scan(struct console_home_screen *h, const char *dir, bool runs)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		const char *fn = names[i]->d_name;
		size_t len = strlen(fn);
		size_t total = h->npolicies + h->nruns;
		char *p;

		if (fn[0] == '.' || total >= CONSOLE_HOME_MAX ||
		    console_home_has(h, runs ? h->npolicies : 0, fn)) {
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
		h->items[total] = p;
		if (runs)
			h->nruns++;
		else
			h->npolicies++;
		free(names[i]);
	}
	free(names);
}

/* List policies and runs, check the engine, put the cursor on the default
 * policy (or the first replay without an engine). */
void
console_home_enter(struct console_ui *ui)
{
	struct console_home_screen *h = &console_home_st;
	const char *runs = getenv("ARES_RUNS");

	console_home_free();
	console_screen_open(ui, &console_screen_home);
	h->items = xcalloc(CONSOLE_HOME_MAX, sizeof *h->items);
	console_home_scan(h, "policies", false);
#ifdef ARES_SRCDIR
	console_home_scan(h, ARES_SRCDIR "/policies", false);
#endif
#ifdef ARES_DATADIR
	console_home_scan(h, ARES_DATADIR, false);
#endif
	qsort(h->items, h->npolicies, sizeof *h->items, console_strcmp);
	console_home_scan(h, runs != NULL && runs[0] ? runs : "runs", true);
	qsort(h->items + h->npolicies, h->nruns, sizeof *h->items,
	    console_strcmp_rev);
	console_home_scan(h, "replays", true);
#ifdef ARES_SRCDIR
	console_home_scan(h, ARES_SRCDIR "/replays", true);
#endif
#ifdef ARES_DATADIR
	console_home_scan(h, ARES_DATADIR "/replays", true);
#endif

	h->engine[0] = '\0';
	console_engine_check_start(h);

	h->cur = 0;
	h->top = 0;
	h->auto_cur = true;
	for (size_t i = 0; i < h->npolicies; i++)
		if (strstr(h->items[i], "/default.yaml") != NULL) {
			h->cur = i;
			break;
		}
	(void)console_home_tick(ui, 0);   /* a check that already ended */
}

/* q: quit. */
static void
console_home_quit(struct console_ui *ui)
{
	ui->quit = true;
}

/* Open the item under the cursor. */
static void
console_home_open(struct console_ui *ui)
{
	struct console_home_screen *h = &console_home_st;
	struct errbuf e = { 0 };

	if (h->npolicies + h->nruns == 0)
		return;
	if (h->cur < h->npolicies) {
		if (h->engine[0] != '\0') {
			snprintf(h->msg, sizeof h->msg, "no Docker "
			    "Engine: cannot run a drill; open a replay");
			return;
		}
		h->msg[0] = '\0';
		console_drill_start(ui, h->items[h->cur], 0, false);
	} else {
		struct replay *rp = replay_load(h->items[h->cur], NULL, &e);

		if (rp == NULL) {
			console_copy(h->msg, sizeof h->msg, e.msg);
			return;
		}
		h->msg[0] = '\0';
		console_replay_enter(ui, rp);
	}
}

/* t / p / f on a policy: a trial, probe or fix screen. */
static void
console_home_job(struct console_ui *ui, enum console_job_kind kind)
{
	struct console_home_screen *h = &console_home_st;

	if (h->cur >= h->npolicies) {
		snprintf(h->msg, sizeof h->msg, "t, p and f work on "
		    "a policy: move the cursor to one");
		return;
	}
	if (h->engine[0] != '\0') {
		snprintf(h->msg, sizeof h->msg, "no Docker Engine: "
		    "cannot run a %s", kind == CONSOLE_JOB_TRIAL ? "trial" :
		    kind == CONSOLE_JOB_PROBE ? "probe" : "fix");
		return;
	}
	h->msg[0] = '\0';
	console_job_open(ui, kind, h->items[h->cur], h->trial_n);
}

/* Move the cursor, open, start a job, change N, rescan, quit. */
static bool
console_home_key(struct console_ui *ui, int ch)
{
	struct console_home_screen *h = &console_home_st;
	size_t n = h->npolicies + h->nruns;

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
		if (h->trial_n < CONSOLE_TRIAL_NMAX)
			h->trial_n++;
		return true;
	case '-':
		if (h->trial_n > 1)
			h->trial_n--;
		return true;
	case KEY_UP:
	case 'k':
		h->auto_cur = false;
		if (h->cur > 0)
			h->cur--;
		return true;
	case KEY_DOWN:
	case 'j':
		h->auto_cur = false;
		if (h->cur + 1 < n)
			h->cur++;
		return true;
	case KEY_HOME:
	case 'g':
		h->auto_cur = false;
		h->cur = 0;
		return true;
	case KEY_END:
	case 'G':
		h->auto_cur = false;
		h->cur = n ? n - 1 : 0;
		return true;
	case '\t':
		/* jump between the two lists */
		h->auto_cur = false;
		h->cur = h->cur < h->npolicies && h->nruns > 0 ?
		    h->npolicies : 0;
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

/* Collect a finished engine check: without an engine, put an untouched
 * cursor on the first recorded run.  true when the screen changed. */
static bool
console_home_tick(struct console_ui *ui, uint64_t now)
{
	struct console_home_screen *h = &console_home_st;
	struct console_engine_check *c = h->engine_check;

	(void)ui;
	(void)now;
	if (c == NULL || !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		return false;
	console_copy(h->engine, sizeof h->engine, c->msg);
	console_engine_check_release(c);
	h->engine_check = NULL;
	if (h->engine[0] != '\0' && h->nruns > 0 && h->auto_cur)
		h->cur = h->npolicies;   /* first recorded run */
	return true;
}

/* One list row: the item's last path component (and its directory). */
static void
console_home_row(struct console_ui *ui, int y, size_t i)
{
	const char *p = console_home_st.items[i];
	const char *b = strrchr(p, '/');
	bool cur = i == console_home_st.cur;

	console_attr(ui, cur ? CP_CYAN : 0, cur ? A_REVERSE | A_BOLD :
	    A_NORMAL);
	mvhline(y, 2, ' ', COLS - 4);
	console_putf(ui, y, 3, COLS - 6, "%s %-36s %s", cur ? ">" : " ",
	    b != NULL ? b + 1 : p, p);
	attrset(A_NORMAL);
}

/* The title, the engine line, the two lists, the status line. */
static void
console_home_draw(struct console_ui *ui)
{
	struct console_home_screen *h = &console_home_st;
	int y = 2, rows, listh;
	size_t n = h->npolicies + h->nruns;

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_put(ui, 0, 1, "ares - drill the containment around AI agents",
	    COLS - 2);
	attrset(A_NORMAL);
	if (h->engine[0] != '\0') {
		console_attr(ui, CP_YELLOW, A_BOLD);
		console_putf(ui, y++, 1, COLS - 2, "No Docker Engine reachable: "
		    "drills cannot run here. Recorded replays work without it.");
		console_attr(ui, 0, A_DIM);
		console_putf(ui, y++, 1, COLS - 2, "(%s)", h->engine);
	} else if (console_engine_checking(h)) {
		console_attr(ui, 0, A_DIM);
		console_putf(ui, y++, 1, COLS - 2, "Checking the Docker "
		    "Engine... Policy: Enter drill, t trial (N=%zu J=%d, +/-), "
		    "p probe, f fix", h->trial_n, CONSOLE_TRIAL_J);
	} else {
		console_attr(ui, CP_GREEN, A_NORMAL);
		console_putf(ui, y++, 1, COLS - 2, "Engine ok. Policy: "
		    "Enter drill, t trial (N=%zu J=%d, +/-), p probe, "
		    "f fix", h->trial_n, CONSOLE_TRIAL_J);
	}
	y++;
	/* one scrolling list: policies, then runs, with two headings */
	rows = LINES - y - 3;
	listh = rows - 2;
	if (h->cur < h->top)
		h->top = h->cur;
	if (listh > 0 && h->cur >= h->top + (size_t)listh)
		h->top = h->cur - (size_t)listh + 1;
	{
		bool pol_head = false, run_head = false;
		int r = 0;

		for (size_t i = h->top; i < n && r < rows; i++) {
			if (i < h->npolicies && !pol_head) {
				console_attr(ui, 0, A_BOLD);
				console_put(ui, y + r++, 1, "policies (Enter: "
				    "run a drill)", COLS - 2);
				pol_head = true;
			} else if (i >= h->npolicies && !run_head) {
				console_attr(ui, 0, A_BOLD);
				console_put(ui, y + r++, 1, "recorded runs "
				    "(Enter: replay)", COLS - 2);
				run_head = true;
			}
			if (r < rows)
				console_home_row(ui, y + r++, i);
		}
		if (h->nruns == 0 && r < rows) {
			console_attr(ui, 0, A_DIM);
			console_put(ui, y + r, 1, "no recorded runs (./runs, "
			    "$ARES_RUNS, replays/)", COLS - 2);
		}
	}
	move(LINES - 1, 0);
	clrtoeol();
	if (h->msg[0] != '\0') {
		console_attr(ui, CP_RED, A_BOLD);
		console_put(ui, LINES - 1, 1, h->msg, COLS - 50);
	} else {
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, LINES - 1, 1, COLS - 50, "%zu policies, %zu "
		    "runs", h->npolicies, h->nruns);
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

const struct console_screen console_screen_home = {
	.name = "home",
	.keys_hint = "enter drill t trial p probe f fix q quit ? help",
	.keys = console_home_keys,
	.nkeys = sizeof console_home_keys / sizeof console_home_keys[0],
	.state = &console_home_st,
	.key = console_home_key,
	.tick = console_home_tick,
	.draw = console_home_draw,
	.quit = console_home_quit,
	.fd = console_no_fd,
};
