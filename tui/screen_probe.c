/*
 * screen_probe.c - the probe screen: the inside-out escape probes in a
 * fresh lab (probe_lab on the job worker), a row per probe as it
 * finishes, then whether every core containment assertion held.
 */
#include <stdio.h>
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

/* attack (ASCII: our own table) cut to w columns: whole when it fits,
 * else its head and its tail around "~" (rows of one family share the
 * head: "network egress: DNS lookup of ..." differ at the end). */
static void
console_probe_cut(const char *attack, int w, char *out, size_t n)
{
	size_t len = strlen(attack);

	if (w < 5 || len <= (size_t)w || (size_t)w + 1 > n) {
		console_copy(out, n, attack);
		return;
	}
	{
		size_t head = ((size_t)w - 1) / 2, tail = (size_t)w - 1 - head;

		snprintf(out, n, "%.*s~%s", (int)head, attack,
		    attack + len - tail);
	}
}

/* Row i's ATTACK cell in w columns; when the cut makes it read like
 * another row's, the row's id (unique) leads instead. */
static void
console_probe_attack(size_t i, int w, char *out, size_t n)
{
	char other[256];

	console_probe_cut(probe_table[i].attack, w, out, n);
	for (size_t k = 0; k < probe_nrows && k < PROBE_MAX_ROWS; k++) {
		if (k == i)
			continue;
		console_probe_cut(probe_table[k].attack, w, other,
		    sizeof other);
		if (strcmp(other, out) == 0) {
			char idt[256];

			snprintf(idt, sizeof idt, "%s: %s", probe_table[i].id,
			    probe_table[i].attack);
			console_probe_cut(idt, w, out, n);
			return;
		}
	}
}

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
	/* ATTACK as wide as its longest text, at most half of the line;
	 * OBSERVED gets the rest */
	aw = 6;
	for (size_t i = 0; i < probe_nrows && i < PROBE_MAX_ROWS; i++)
		if ((int)strlen(probe_table[i].attack) > aw)
			aw = (int)strlen(probe_table[i].attack);
	if (aw > (COLS - 12) / 2)
		aw = (COLS - 12) / 2;
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
		{
			char cell[256];
			size_t ri = (size_t)(r->row - probe_table);

			if (ri < probe_nrows)
				console_probe_attack(ri, aw, cell, sizeof cell);
			else
				console_probe_cut(r->row->attack, aw, cell,
				    sizeof cell);
			console_put(ui, y, 10, cell, aw);
		}
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
