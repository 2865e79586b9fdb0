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
#include <time.h>
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
	/* per item (same index): a policy's description and flaws, a run's
	 * recorded summary (core/recorded.c: bounded, sanitized) */
	struct console_home_info *info;
};

/* What a row shows besides the item's name. */
struct console_home_info {
	char desc[200];            /* policy: its description (sanitized) */
	char flaws[80];            /* policy: its flaws, "" none */
	struct recorded_info rec;  /* run, trial, fix or probe dir */
	bool loaded;               /* the file could be read */
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
/* --demo started its drill already (once per process). */
static bool console_home_demo_done;

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
	free(h->info);
	h->info = NULL;
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
			/* a run, fix or probe dir (evidence.jsonl) or a trial
			 * dir (trial.json) */
			p = xasprintf("%s/%s/evidence.jsonl", dir, fn);
			bool ok = access(p, R_OK) == 0;
			free(p);
			if (!ok) {
				p = xasprintf("%s/%s/trial.json", dir, fn);
				ok = access(p, R_OK) == 0;
				free(p);
			}
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

/* Each item's row text: a policy's description and flaws (policy_load),
 * a recorded dir's summary (recorded_info: bounded, unverified). */
static void
console_home_info_load(struct console_home_screen *h)
{
	size_t n = h->npolicies + h->nruns;

	h->info = xcalloc(n ? n : 1, sizeof *h->info);
	for (size_t i = 0; i < h->npolicies; i++) {
		struct console_home_info *in = &h->info[i];
		struct errbuf e = { 0 };
		struct policy *p = policy_load(h->items[i], &e);
		size_t o = 0;

		if (p == NULL) {
			util_sanitize(in->desc, sizeof in->desc, e.msg,
			    strlen(e.msg), false);
			continue;
		}
		in->loaded = true;
		if (p->description != NULL)
			util_sanitize(in->desc, sizeof in->desc,
			    p->description, strlen(p->description), false);
		for (size_t f = 0; f < p->nflaws && o < sizeof in->flaws - 1;
		    f++) {
			int k = snprintf(in->flaws + o, sizeof in->flaws - o,
			    "%s%s", f ? "," : "", p->flaws[f]);

			if (k < 0)
				break;
			o += (size_t)k;
		}
		/* flaw ids are the policy's: sanitize them too */
		{
			char tmp[sizeof in->flaws];

			util_sanitize(tmp, sizeof tmp, in->flaws,
			    strnlen(in->flaws, sizeof in->flaws - 1), false);
			memcpy(in->flaws, tmp, sizeof tmp);
		}
		policy_free(p);
	}
	for (size_t i = h->npolicies; i < n; i++)
		h->info[i].loaded = recorded_info(h->items[i],
		    &h->info[i].rec) == 0;
}

/* The first n runs (the runs dir's, not the bundled replays) newest
 * first by their recorded time (insertion sort: stable, n <= 256). */
static void
console_home_sort_age(struct console_home_screen *h, size_t n)
{
	size_t base = h->npolicies;

	for (size_t i = 1; i < n; i++) {
		char *it = h->items[base + i];
		struct console_home_info in = h->info[base + i];
		size_t k = i;

		while (k > 0 && h->info[base + k - 1].rec.when < in.rec.when) {
			h->items[base + k] = h->items[base + k - 1];
			h->info[base + k] = h->info[base + k - 1];
			k--;
		}
		h->items[base + k] = it;
		h->info[base + k] = in;
	}
}

/* List policies and runs, check the engine, put the cursor on the default
 * policy (or the first replay without an engine). */
void
console_home_enter(struct console_ui *ui)
{
	struct console_home_screen *h = &console_home_st;
	const char *runs = getenv("ARES_RUNS");
	size_t nmine;

	/* a replay opened from a recorded trial or fix screen goes back
	 * there, not home */
	if (console_trial_dir_back(ui) || console_fix_dir_back(ui))
		return;
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
	nmine = h->nruns;
	console_home_scan(h, "replays", true);
#ifdef ARES_SRCDIR
	console_home_scan(h, ARES_SRCDIR "/replays", true);
#endif
#ifdef ARES_DATADIR
	console_home_scan(h, ARES_DATADIR "/replays", true);
#endif

	console_home_info_load(h);
	console_home_sort_age(h, nmine);
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
		console_note_dir(CONSOLE_NOTE_DRILL, NULL);
		console_drill_start(ui, h->items[h->cur], 0, false);
	} else if (trial_dir_is(h->items[h->cur]) ||
	    fix_dir_is(h->items[h->cur])) {
		/* a trial or fix dir: its own screen */
		bool trial = trial_dir_is(h->items[h->cur]);

		if ((trial ? console_trial_dir_load(h->items[h->cur], NULL,
		    &e) : console_fix_dir_load(h->items[h->cur], NULL, &e)) ==
		    -1) {
			console_copy(h->msg, sizeof h->msg, e.msg);
			return;
		}
		h->msg[0] = '\0';
		if (trial)
			console_trial_dir_enter(ui);
		else
			console_fix_dir_enter(ui);
	} else {
		struct replay *rp = replay_load(h->items[h->cur], NULL, &e);

		if (rp == NULL) {
			console_copy(h->msg, sizeof h->msg, e.msg);
			return;
		}
		h->msg[0] = '\0';
		console_note_dir(CONSOLE_NOTE_RUN, h->items[h->cur]);
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
	console_note_dir(CONSOLE_NOTE_JOB, NULL);
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
		h->top = h->cur;   /* the list opens at that heading */
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
		h->cur = h->top = h->npolicies;   /* first recorded run */
	if (ui->o != NULL && ui->o->demo && !console_home_demo_done &&
	    h->engine[0] == '\0' && h->auto_cur && h->cur < h->npolicies) {
		/* --demo: the default drill (the untouched cursor's) at once,
		 * once; q brings the audience back here */
		console_home_demo_done = true;
		console_note_dir(CONSOLE_NOTE_DRILL, NULL);
		console_drill_start(ui, h->items[h->cur], 0, false);
	}
	return true;
}

/* name cut to w columns keeping its head and its tail (run ids and
 * trial ids differ at the end), "~" between; ASCII names (ours). */
static void
console_home_cut(const char *name, int w, char *out, size_t n)
{
	size_t len = strlen(name);

	if (w < 3 || len <= (size_t)w || (size_t)w + 1 > n) {
		console_copy(out, n, name);
		return;
	}
	{
		size_t head = (size_t)w / 3, tail = (size_t)w - head - 1;

		snprintf(out, n, "%.*s~%s", (int)head, name, name + len - tail);
	}
}

/* The columns of the run rows at this width: name, kind, verdict,
 * policy, time to kill, age (x of each), and whether the path fits. */
struct console_home_cols {
	int name, namew, kind, verdict, policy, policyw, ttk, age, path;
};

static void
console_home_cols(struct console_home_cols *c)
{
	/* verdict 14, policy 11 (22 when wide), ttk 10, age 11; the kind
	 * (6) only from 100 columns (trial-, fix- dirs say it by name) */
	int kindw = COLS >= 100 ? 6 : 0;

	c->policyw = COLS >= 110 ? 22 : 10;
	c->namew = COLS - 5 - kindw - 14 - (c->policyw + 1) - 10 - 11 - 1;
	if (c->namew > 34)
		c->namew = 34;
	if (c->namew < 12)
		c->namew = 12;
	c->name = 5;
	c->kind = kindw ? c->name + c->namew + 1 : -1;
	c->verdict = c->name + c->namew + 1 + kindw;
	c->policy = c->verdict + 14;
	c->ttk = c->policy + c->policyw + 1;
	c->age = c->ttk + 11;
	c->path = c->age + 11;
}

/* The colour of a verdict word. */
static int
console_home_verdict_pair(const char *v)
{
	/* a good verdict is the dir's own unverified word here (its screen
	 * verifies it): never green, only a bad one is marked */
	if (strcmp(v, "contained") == 0 || strcmp(v, "verified") == 0 ||
	    strcmp(v, "held") == 0)
		return 0;
	if (strcmp(v, "breached") == 0 || strcmp(v, "not-a-fix") == 0 ||
	    strcmp(v, "failed") == 0)
		return CP_RED;
	return CP_YELLOW;
}

/* One list row: a policy (name, flaws, description) or a recorded dir
 * (name, kind, verdict, policy, time to kill, age, and its path when
 * the terminal is wide). */
static void
console_home_row(struct console_ui *ui, int y, size_t i, time_t now)
{
	struct console_home_screen *h = &console_home_st;
	const char *p = h->items[i];
	const char *b = strrchr(p, '/');
	const struct console_home_info *in = h->info != NULL ? &h->info[i] :
	    NULL;
	bool cur = i == h->cur;
	attr_t base = cur ? A_REVERSE | A_BOLD : A_NORMAL;
	int cpair = cur ? CP_CYAN : 0;
	char name[128];

	b = b != NULL ? b + 1 : p;
	console_attr(ui, cpair, base);
	mvhline(y, 2, ' ', COLS - 4);
	console_put(ui, y, 3, cur ? ">" : " ", 1);
	if (i < h->npolicies) {
		int nw = 8, fw = 8;    /* the longest name and flaws, bounded */

		for (size_t k = 0; k < h->npolicies; k++) {
			const char *kb = strrchr(h->items[k], '/');
			int l = (int)strlen(kb != NULL ? kb + 1 : h->items[k]);

			nw = l > nw ? l : nw;
			if (h->info != NULL &&
			    (int)strlen(h->info[k].flaws) > fw)
				fw = (int)strlen(h->info[k].flaws);
		}
		nw = nw > 30 ? 30 : nw;
		fw = fw > (COLS >= 110 ? 22 : 16) ? (COLS >= 110 ? 22 : 16) : fw;

		console_home_cut(b, nw, name, sizeof name);
		console_put(ui, y, 5, name, nw);
		if (in == NULL)
			return;
		if (!cur)
			console_attr(ui, in->flaws[0] ? CP_MAGENTA : 0,
			    in->flaws[0] ? A_BOLD : A_DIM);
		console_put(ui, y, 6 + nw, in->flaws[0] ? in->flaws :
		    "no flaws", fw);
		if (!cur)
			console_attr(ui, 0, A_NORMAL);
		{
			/* a wide terminal also shows where the policy is
			 * (installed, source tree, ./policies) */
			int dw = COLS - 9 - nw - fw, px = -1;

			if (dw > 110) {
				dw = 70;
				px = 8 + nw + fw + dw;
			}
			console_put(ui, y, 7 + nw + fw, in->desc, dw);
			if (px > 0) {
				char path[256];

				if (!cur)
					console_attr(ui, 0, A_DIM);
				console_home_cut(p, COLS - 3 - px, path,
				    sizeof path);
				console_put(ui, y, px, path, COLS - 3 - px);
			}
		}
		attrset(A_NORMAL);
		return;
	}
	{
		struct console_home_cols c;
		const struct recorded_info *r = in != NULL ? &in->rec : NULL;
		static const char *const kinds[] = { "run", "trial", "fix",
		    "probe" };
		char age[32], ttk[32];

		console_home_cols(&c);
		console_home_cut(b, c.namew, name, sizeof name);
		console_put(ui, y, c.name, name, c.namew);
		if (r == NULL)
			return;
		if (c.kind >= 0)
			console_put(ui, y, c.kind, r->kind >= 0 &&
			    r->kind < 4 ? kinds[r->kind] : "?", 5);
		if (!cur)
			console_attr(ui, console_home_verdict_pair(r->verdict),
			    A_BOLD);
		console_put(ui, y, c.verdict, r->verdict[0] ? r->verdict : "-",
		    13);
		if (!cur)
			console_attr(ui, 0, A_NORMAL);
		console_put(ui, y, c.policy, r->policy[0] ? r->policy : "-",
		    c.policyw);
		if (r->ttk_ms >= 0)
			snprintf(ttk, sizeof ttk, r->ttk_ms < 1000 ? "%.1f ms" :
			    "%.2f s", r->ttk_ms < 1000 ? r->ttk_ms :
			    r->ttk_ms / 1000.0);
		else
			snprintf(ttk, sizeof ttk, "-");
		console_putf(ui, y, c.ttk, 10, "%9s", ttk);
		recorded_age(r->when, (int64_t)now, age, sizeof age);
		if (!cur)
			console_attr(ui, 0, A_DIM);
		console_put(ui, y, c.age, age, 10);
		if (c.path + 20 < COLS - 3) {
			char path[256];

			console_home_cut(p, COLS - 3 - c.path, path,
			    sizeof path);
			console_put(ui, y, c.path, path, COLS - 3 - c.path);
		}
		attrset(A_NORMAL);
	}
}

/* The runs heading with the column names over their columns. */
static void
console_home_run_heading(struct console_ui *ui, int y)
{
	struct console_home_cols c;

	console_home_cols(&c);
	console_attr(ui, 0, A_BOLD);
	console_put(ui, y, 1, "recorded runs (Enter: replay)", COLS - 2);
	console_attr(ui, 0, A_DIM);
	/* each column's name where the heading leaves room (x > 31) */
	if (c.kind > 31)
		console_put(ui, y, c.kind, "kind", 5);
	if (c.verdict > 31)
		console_put(ui, y, c.verdict, "verdict", 13);
	console_put(ui, y, c.policy, "policy", c.policyw);
	console_put(ui, y, c.ttk, "      ttk", 10);
	console_put(ui, y, c.age, "age", 10);
	attrset(A_NORMAL);
}

/* The title, the engine line, the keys line, the two lists, the status
 * line. */
static void
console_home_draw(struct console_ui *ui)
{
	struct console_home_screen *h = &console_home_st;
	int y = 2, rows, listh;
	size_t n = h->npolicies + h->nruns;
	time_t now = time(NULL);
	const char *hint = ui->screen->keys_hint;
	int hw = (int)strlen(hint);

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_put(ui, 0, 1, "ares - drill the containment around AI agents",
	    COLS - 2);
	attrset(A_NORMAL);
	if (h->engine[0] != '\0') {
		console_attr(ui, CP_YELLOW, A_BOLD);
		console_putf(ui, y, 1, COLS - 2, "No Docker Engine: drills "
		    "cannot run here; recorded runs replay without it.");
		console_attr(ui, 0, A_DIM);
		console_putf(ui, y + 1, 1, COLS - 2, "(%s)", h->engine);
		y += 2;
	} else {
		if (console_engine_checking(h)) {
			console_attr(ui, 0, A_DIM);
			console_put(ui, y++, 1, "Checking the Docker Engine...",
			    COLS - 2);
		} else {
			console_attr(ui, CP_GREEN, A_NORMAL);
			console_put(ui, y++, 1, "Docker Engine ok.", COLS - 2);
		}
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, y++, 1, COLS - 2, "policy: Enter drill, "
		    "t trial (N=%zu J=%d, +/-), p probe, f fix",
		    h->trial_n, CONSOLE_TRIAL_J);
	}
	attrset(A_NORMAL);
	/* one scrolling list: policies, then runs, with two headings */
	rows = LINES - y - 2;
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
				attrset(A_NORMAL);
				pol_head = true;
			} else if (i >= h->npolicies && !run_head) {
				console_home_run_heading(ui, y + r++);
				run_head = true;
			}
			if (r < rows)
				console_home_row(ui, y + r++, i, now);
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
		console_put(ui, LINES - 1, 1, h->msg, COLS - hw - 4);
	} else {
		console_attr(ui, 0, A_NORMAL);
		console_putf(ui, LINES - 1, 1, COLS - hw - 4, "%zu policies, "
		    "%zu runs", h->npolicies, h->nruns);
	}
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, LINES - 1, COLS - hw - 1, hint, hw);
	attrset(A_NORMAL);
}

static const struct console_key console_home_keys[] = {
	{ "up / k", "previous item" },
	{ "down / j", "next item" },
	{ "tab", "jump between policies and runs" },
	{ "g / G", "first / last item" },
	{ "enter", "policy: a live drill; run: replay; trial/fix: open" },
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
	.keys_hint = "enter open  t/p/f trial/probe/fix  q quit  ? help",
	.keys = console_home_keys,
	.nkeys = sizeof console_home_keys / sizeof console_home_keys[0],
	.state = &console_home_st,
	.key = console_home_key,
	.tick = console_home_tick,
	.draw = console_home_draw,
	.quit = console_home_quit,
	.fd = console_no_fd,
};
