/*
 * screen_job.c - what the trial, probe and fix screens share: opening one
 * on a new job, q (stop, then home), the list scrolling, the tick that
 * joins the job's worker, the title bar and the status line.  Each of the
 * three screens' states starts with a struct console_job_view, which the
 * hooks here reach through the current screen's entry.
 */
#include <stdio.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* The animation tick the elapsed clock last looked at (all three). */
static unsigned long console_job_tick_seen;

/* The current job screen's shared part (its entry's state). */
static struct console_job_view *
console_job_view(const struct console_ui *ui)
{
	return ui->screen->state;
}

/* Start a job of kind on policy (n: the trial's N) and open its screen:
 * the title from the policy file, the list following its newest rows. */
void
console_job_open(struct console_ui *ui, enum console_job_kind kind,
    const char *policy, size_t n)
{
	const struct console_screen *sc = kind == CONSOLE_JOB_TRIAL ?
	    &console_screen_trial : kind == CONSOLE_JOB_PROBE ?
	    &console_screen_probe : &console_screen_fix;
	struct console_job_view *jv = sc->state;

	console_job_start(ui, kind, policy, n);
	memset(jv->policy, 0, sizeof jv->policy);
	memset(jv->seed, 0, sizeof jv->seed);
	policy_free(console_policy_title(ui->job->policy, false, jv->policy,
	    sizeof jv->policy, jv->seed, sizeof jv->seed));
	jv->top = 0;
	jv->follow = true;
	console_screen_open(ui, sc);
}

/* q: a finished job goes home; a running one is stopped first. */
void
console_job_quit(struct console_ui *ui)
{
	if (ui->job->joined)
		ui->quit = true;
	else
		console_job_stop(ui);
}

/* Join the worker once it is done (q while stopping then leaves), tick
 * the elapsed clock, go home after q. */
bool
console_job_tick(struct console_ui *ui, uint64_t now)
{
	struct console_job *j = ui->job;
	bool dirty = console_job_reap(ui);

	(void)now;
	if (j->joined && j->stopping) {
		ui->quit = true;
		j->stopping = false;
	}
	if (ui->tick != console_job_tick_seen) {   /* the elapsed clock, ~1/s */
		console_job_tick_seen = ui->tick;
		if (!j->joined && ui->tick % 7 == 0)
			dirty = true;
	}
	if (ui->quit && !ui->worker_running && ui->from_home) {
		console_home_enter(ui);
		dirty = true;
	}
	return dirty;
}

/* q, and scrolling the probe and fix lists. */
bool
console_job_key(struct console_ui *ui, int ch)
{
	struct console_job_view *jv = console_job_view(ui);

	switch (ch) {
	case 'q':
	case 'Q':
		console_job_quit(ui);
		return true;
	case KEY_UP:
	case 'k':
		jv->follow = false;
		if (jv->top > 0)
			jv->top--;
		return true;
	case KEY_DOWN:
	case 'j':
		jv->top++;     /* clamped when drawn */
		return true;
	case KEY_END:
	case 'G':
		jv->follow = true;
		return true;
	default:
		return false;
	}
}

/* The status line of a job screen (error text is core's, sanitized when
 * drawn by console_put). */
void
console_job_status(struct console_ui *ui, char *out, size_t n, int *pair)
{
	struct console_job *j = ui->job;
	double secs = j->joined ? j->secs :
	    (double)(util_mono_ns() - j->t0) / 1e9;

	if (j->stopping) {
		snprintf(out, n, "stopping: waiting for the work to end and "
		    "the labs to be torn down (%.0fs)", secs);
		*pair = CP_YELLOW;
	} else if (!j->joined) {
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
void
console_job_frame(struct console_ui *ui, const char *what)
{
	const struct console_job_view *jv = console_job_view(ui);
	const char *keys = ui->screen->keys_hint;
	int kw = (int)strlen(keys);
	char st[300];
	int pair = 0;

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "ares %s  policy %s  seed %s", what,
	    jv->policy, jv->seed);
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

const struct console_key console_job_keys[] = {
	{ "q", "home (stops a running job, tears its labs down)" },
	{ "up / k", "scroll up (stops following)" },
	{ "down / j", "scroll down" },
	{ "G / end", "follow the newest lines" },
	{ "?", "this help" },
};

/* The job screens' tables use CONSOLE_JOB_NKEYS (tui.h) as nkeys. */
_Static_assert(sizeof console_job_keys / sizeof console_job_keys[0] ==
    CONSOLE_JOB_NKEYS, "CONSOLE_JOB_NKEYS is not console_job_keys' size");
