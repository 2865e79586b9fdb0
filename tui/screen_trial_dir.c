/*
 * screen_trial_dir.c - a recorded trial dir (TRIAL_DIR/trial.json) on its
 * own screen, from home or `ares replay TRIAL_DIR`: the verification
 * badge (trial_verify_dir, what `ares verify` runs), the rates recomputed
 * from the runs as bars with their intervals, the time-to-kill histogram
 * (screen_trial.c's drawing) and every run; Enter replays the run under
 * the cursor, q goes back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* The recorded trial screen's state (one trial at a time). */
struct console_trial_dir_screen {
	bool loaded;
	struct trial t;            /* recorded_trial_load: unverified text */
	char pub[4096];            /* --pub, "" for the dir's own key */
	bool verified;             /* trial_verify_dir: every check ok */
	char badge[600];
	size_t cur, top;
	bool was_from_home;        /* ui->from_home before it opened */
	bool back;                 /* a replay opened from here: come back */
	char msg[256];
};

static struct console_trial_dir_screen console_trial_dir_st;

/* Let go of the loaded trial. */
static void
console_trial_dir_free(void)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;

	if (s->loaded)
		trial_free(&s->t);
	s->loaded = false;
	s->back = false;
}

int
console_trial_dir_load(const char *dir, const char *pub_path,
    struct errbuf *e)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;
	struct report_verify_result res = { 0 };
	struct errbuf ve = { 0 };

	console_trial_dir_free();
	if (recorded_trial_load(dir, &s->t, NULL, e) == -1) {
		trial_free(&s->t);
		return -1;
	}
	s->loaded = true;
	console_copy(s->pub, sizeof s->pub, pub_path != NULL ? pub_path : "");
	/* the badge: what ares verify says of the whole trial */
	if (trial_verify_dir(dir, pub_path, &res, &ve) == -1) {
		s->verified = false;
		snprintf(s->badge, sizeof s->badge, "NOT VERIFIED: %.500s",
		    ve.msg);
	} else if (res.ok) {
		s->verified = true;
		snprintf(s->badge, sizeof s->badge, "verified: trial.json's "
		    "signature and every run's (%zu checks, ares verify)",
		    res.nchecks);
	} else {
		s->verified = false;
		snprintf(s->badge, sizeof s->badge, "NOT VERIFIED: %.500s",
		    res.first_bad >= 0 ? res.checks[res.first_bad].text :
		    "a check failed");
	}
	report_verify_free(&res);
	s->cur = s->top = 0;
	s->msg[0] = '\0';
	return 0;
}

void
console_trial_dir_enter(struct console_ui *ui)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;

	s->was_from_home = ui->from_home;
	s->back = false;
	console_note_dir(CONSOLE_NOTE_TRIAL, s->t.dir);
	console_screen_open(ui, &console_screen_trial_dir);
}

bool
console_trial_dir_back(struct console_ui *ui)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;

	if (!s->loaded || !s->back)
		return false;
	s->back = false;
	ui->from_home = s->was_from_home;
	console_note_dir(CONSOLE_NOTE_TRIAL, s->t.dir);
	console_screen_open(ui, &console_screen_trial_dir);
	return true;
}

/* q: home (let the trial go) when opened there, else quit. */
static void
console_trial_dir_quit(struct console_ui *ui)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;

	if (s->was_from_home) {
		console_trial_dir_free();
		console_home_enter(ui);
		return;
	}
	ui->quit = true;
}

/* Enter: replay the run under the cursor (q there comes back here). */
static void
console_trial_dir_open(struct console_ui *ui)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;
	const struct trial_run *r;
	struct errbuf e = { 0 };
	struct replay *rp;
	char *dir;

	if (s->t.n == 0)
		return;
	r = &s->t.runs[s->cur];
	if (!r->done || r->run_dir[0] == '\0') {
		snprintf(s->msg, sizeof s->msg, "run %zu has no run dir",
		    r->index);
		return;
	}
	dir = xasprintf("%s/%s", s->t.dir, r->run_dir);
	rp = replay_load(dir, s->pub[0] ? s->pub : NULL, &e);
	if (rp == NULL) {
		console_copy(s->msg, sizeof s->msg, e.msg);
		free(dir);
		return;
	}
	s->msg[0] = '\0';
	s->back = true;
	ui->from_home = true;      /* the replay's q calls home: back here */
	console_replay_enter(ui, rp);
	console_note_dir(CONSOLE_NOTE_RUN, dir);
	free(dir);
}

/* Move the cursor over the runs, Enter, q. */
static bool
console_trial_dir_key(struct console_ui *ui, int ch)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;
	size_t n = s->t.n;

	switch (ch) {
	case KEY_UP:
	case 'k':
		if (s->cur > 0)
			s->cur--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (s->cur + 1 < n)
			s->cur++;
		return true;
	case KEY_HOME:
	case 'g':
		s->cur = 0;
		return true;
	case KEY_END:
	case 'G':
		s->cur = n ? n - 1 : 0;
		return true;
	case '\r':
	case '\n':
	case KEY_ENTER:
		console_trial_dir_open(ui);
		return true;
	case 'q':
	case 'Q':
		console_trial_dir_quit(ui);
		return true;
	default:
		return false;
	}
}

/* Nothing runs behind this screen. */
static bool
console_trial_dir_tick(struct console_ui *ui, uint64_t now)
{
	(void)ui;
	(void)now;
	return false;
}

/* The status line: the trial's verdict word and exit code. */
static void
console_trial_dir_status(struct console_ui *ui, char *out, size_t n,
    int *pair)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;
	int code = trial_exit_code(&s->t);

	(void)ui;
	snprintf(out, n, "%s (exit %d)%s", code == 0 ? "every exercised run "
	    "contained" : code == 1 ? "BREACHED in at least one run" :
	    code == 4 ? "no run exercised the bait" : "errors or incomplete",
	    code, s->t.complete ? "" : "  INCOMPLETE");
	/* green only for a trial ares verify accepts */
	*pair = code == 0 ? (s->verified ? CP_GREEN : CP_RED) : code == 1 ?
	    CP_RED : CP_YELLOW;
	if (!s->verified) {
		size_t o = strlen(out);

		snprintf(out + o, n > o ? n - o : 0, "  NOT VERIFIED");
	}
}

/* Title, badge, the pictures, the runs (a cursor), the status line. */
static void
console_trial_dir_draw(struct console_ui *ui)
{
	struct console_trial_dir_screen *s = &console_trial_dir_st;
	const struct trial *t = &s->t;
	const char *keys = ui->screen->keys_hint;
	int kw = (int)strlen(keys), y = 1, rows, pair = 0;
	char st[300];

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	{
		const char *pb = strrchr(t->policy, '/');

		console_putf(ui, 0, 1, COLS - 2, "ares trial %s  policy %s  "
		    "N=%zu J=%zu%s", t->id, pb != NULL ? pb + 1 : t->policy,
		    t->n, t->jobs, t->complete ? "" : "  INCOMPLETE");
	}
	console_attr(ui, s->verified ? CP_GREEN : CP_RED, A_BOLD |
	    (ui->color || s->verified ? 0 : A_REVERSE));
	console_put(ui, y++, 1, s->badge, COLS - 2);
	attrset(A_NORMAL);
	y++;
	y = console_trial_pictures(ui, y, t, LINES >= 34 ? 6 : 3);
	y++;
	console_attr(ui, 0, A_BOLD);
	console_putf(ui, y++, 1, COLS - 2, "runs (Enter: replay)  %zu of %zu "
	    "finished", t->sum.finished, t->n);
	attrset(A_NORMAL);
	rows = LINES - 1 - y;
	if (rows < 1)
		rows = 1;
	if (s->cur < s->top)
		s->top = s->cur;
	if (s->cur >= s->top + (size_t)rows)
		s->top = s->cur - (size_t)rows + 1;
	for (size_t i = s->top; i < t->n && y < LINES - 1; i++, y++) {
		const struct trial_run *r = &t->runs[i];
		bool cur = i == s->cur;
		bool good = strcmp(r->verdict, "contained") == 0;
		bool bad = strcmp(r->verdict, "breached") == 0;

		console_attr(ui, cur ? CP_CYAN : 0, cur ? A_REVERSE | A_BOLD :
		    A_NORMAL);
		mvhline(y, 1, ' ', COLS - 2);
		console_putf(ui, y, 2, 12, "%s run %zu", cur ? ">" : " ",
		    r->index);
		if (!cur)
			console_attr(ui, !r->done ? 0 : good ? CP_GREEN : bad ?
			    CP_RED : CP_YELLOW, A_BOLD);
		console_put(ui, y, 14, r->done ? r->verdict : "(not run)", 14);
		if (!cur)
			console_attr(ui, 0, A_NORMAL);
		if (r->done && r->time_to_kill_ms >= 0)
			console_putf(ui, y, 28, 16, "%10.3f ms",
			    r->time_to_kill_ms);
		else if (r->done)
			console_put(ui, y, 28, "         -", 16);
		console_put(ui, y, 44, r->run_id, 26);
		if (t->multi)   /* --engine: which engine ran it (+ retries) */
			console_putf(ui, y, 71, COLS - 72, "%s%s", r->nattempts ?
			    "(rerun) " : "", r->engine);
		else
			console_put(ui, y, 71, r->reason, COLS - 72);
		attrset(A_NORMAL);
	}
	move(LINES - 1, 0);
	clrtoeol();
	if (s->msg[0] != '\0') {
		console_attr(ui, CP_RED, A_BOLD);
		console_put(ui, LINES - 1, 1, s->msg, COLS - kw - 4);
	} else {
		console_trial_dir_status(ui, st, sizeof st, &pair);
		console_attr(ui, pair, A_BOLD);
		console_put(ui, LINES - 1, 1, st, COLS - kw - 4);
	}
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, LINES - 1, COLS - kw - 1, keys, kw);
	attrset(A_NORMAL);
}

static const struct console_key console_trial_dir_keys[] = {
	{ "up / k", "previous run" },
	{ "down / j", "next run" },
	{ "g / G", "first / last run" },
	{ "enter", "replay the run (q there comes back here)" },
	{ "q", "back (or quit)" },
	{ "?", "this help" },
};

const struct console_screen console_screen_trial_dir = {
	.name = "trial-dir",
	.keys_hint = "enter replay  j/k  q back  ? help",
	.keys = console_trial_dir_keys,
	.nkeys = sizeof console_trial_dir_keys / sizeof console_trial_dir_keys[0],
	.state = &console_trial_dir_st,
	.key = console_trial_dir_key,
	.tick = console_trial_dir_tick,
	.draw = console_trial_dir_draw,
	.quit = console_trial_dir_quit,
	.fd = console_no_fd,
	.status = console_trial_dir_status,
};
