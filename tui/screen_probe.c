/*
 * screen_probe.c - the probe screen: the inside-out escape probes in a
 * fresh lab (probe_lab on the job worker), a row per probe as it
 * finishes, then whether every core containment assertion held.
 */
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* The probe screen's state: what the job screens share, and the rows it
 * last took from the job (under the job's lock) to draw. */
struct console_probe_screen {
	struct console_job_view jv;   /* first: screen_job.c's part */
	struct probe_result rows[PROBE_MAX_ROWS];
	size_t nrows;
	char run_id[64];
};

static struct console_probe_screen console_probe_st;

/* The rows so far (scrolling), what runs now, then the result. */
static void
console_probe_draw(struct console_ui *ui)
{
	struct console_probe_screen *ps = &console_probe_st;
	struct console_job_view *jv = &ps->jv;
	struct console_job *j = ui->job;
	const struct probe_result *rows = ps->rows;
	const char *run_id = ps->run_id;
	size_t nrows, ncore = 0, nfail = 0, total = probe_nrows;
	int y = 2, aw, ow, avail;

	pthread_mutex_lock(&j->mu);
	ps->nrows = nrows = j->nrows;
	memcpy(ps->rows, j->rows, nrows * sizeof ps->rows[0]);
	memcpy(ps->run_id, j->run_id, sizeof ps->run_id);
	pthread_mutex_unlock(&j->mu);
	if (total > PROBE_MAX_ROWS)
		total = PROBE_MAX_ROWS;
	console_job_frame(ui, "probe");
	console_putf(ui, y++, 1, COLS - 2, "inside-out escape probes in a "
	    "fresh lab%s%s", run_id[0] ? ", run " : "", run_id);
	console_bar(ui, y, 1, COLS - 40, nrows, total, CP_CYAN);
	if (!j->joined)
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
	if (jv->follow || jv->top + (size_t)avail > nrows)
		jv->top = nrows > (size_t)avail ? nrows - (size_t)avail : 0;
	for (size_t i = jv->top; i < nrows && y < LINES - 3; i++) {
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
	if (j->joined && j->rc == 0) {
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
	} else if (j->joined) {
		console_attr(ui, CP_RED, A_BOLD);
		console_putf(ui, y, 1, COLS - 2, "probe failed: %s",
		    j->err.msg);
		attrset(A_NORMAL);
	}
}

const struct console_screen console_screen_probe = {
	.name = "probe",
	.keys_hint = "q home  j/k scroll  ? help",
	.keys = console_job_keys,
	.nkeys = CONSOLE_JOB_NKEYS,
	.state = &console_probe_st,
	.key = console_job_key,
	.tick = console_job_tick,
	.draw = console_probe_draw,
	.quit = console_job_quit,
	.fd = console_job_fd,
	.status = console_job_status,
};
