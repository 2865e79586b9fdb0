/*
 * screen_fix.c - the fix screen: the fix loop (fix_run on the job worker)
 * as a stage bar and its beats, then the outcome, the runs and the
 * proposal.
 */
#include <stdio.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* The fix screen's state: what the job screens share, and the beats it
 * last took from the job (under the job's lock) to draw. */
struct console_fix_screen {
	struct console_job_view jv;   /* first: screen_job.c's part */
	struct console_fix_beat beats[CONSOLE_FIX_BEATS];
	size_t nbeats;
};

static struct console_fix_screen console_fix_st;

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

/* The stage bar and the beats (scrolling), then the outcome, the runs
 * and the proposal. */
static void
console_fix_draw(struct console_ui *ui)
{
	struct console_fix_screen *fs = &console_fix_st;
	struct console_job_view *jv = &fs->jv;
	struct console_job *j = ui->job;
	const struct console_fix_beat *beats = fs->beats;
	size_t nbeats, first, nshow;
	int y = 2, stage = 0, avail;

	pthread_mutex_lock(&j->mu);
	fs->nbeats = nbeats = j->nbeats;
	memcpy(fs->beats, j->beats, sizeof fs->beats);
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
	console_bar(ui, y, 1, COLS - 40, j->joined ? 9 : (size_t)stage, 9,
	    CP_CYAN);
	console_putf(ui, y, COLS - 38, 37, "stage: %s", j->joined ? "done" :
	    stage <= 1 ? "drill" : stage == 2 ? "attribution" : stage == 3 ?
	    "patch" : stage == 4 ? "rerun" : stage == 5 ? "held-out" :
	    "proposal");
	y += 2;
	avail = LINES - 1 - y - (j->joined ? 5 : 0);
	nshow = nbeats - first;
	if (avail < 1)
		avail = 1;
	if (jv->follow || jv->top + (size_t)avail > nshow)
		jv->top = nshow > (size_t)avail ? nshow - (size_t)avail : 0;
	for (size_t i = first + jv->top; i < nbeats && avail-- > 0; i++) {
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
	if (!j->joined)
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

const struct console_screen console_screen_fix = {
	.name = "fix",
	.keys_hint = "q home  j/k scroll  ? help",
	.keys = console_job_keys,
	.nkeys = CONSOLE_JOB_NKEYS,
	.state = &console_fix_st,
	.key = console_job_key,
	.tick = console_job_tick,
	.draw = console_fix_draw,
	.quit = console_job_quit,
	.fd = console_job_fd,
	.status = console_job_status,
};
