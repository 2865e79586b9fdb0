/*
 * screen_trial.c - the trial screen: N drills, J at a time (trial_run on
 * the job worker); progress and the latest finished runs while it runs,
 * then the rates with exact Clopper-Pearson intervals and every run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* The trial screen's state: what the job screens share, and what it last
 * took from the job (under the job's lock) to draw. */
struct console_trial_screen {
	struct console_job_view jv;   /* first: screen_job.c's part */
	struct trial_progress tp;
	struct console_trial_fin fin[CONSOLE_TRIAL_LAST];
	size_t nfin;
};

static struct console_trial_screen console_trial_st;

/* "k/n [lo, hi]" of a rate (the cmd's numbers), then its bar (core's
 * chart_bar: solid below the interval, dark shade up to the estimate,
 * light shade to the upper end) in what is left of the line. */
static void
console_rate(const struct console_ui *ui, int y, const char *name,
    const struct trial_rate *r)
{
	struct chart_bar b;
	char cells[CHART_MAX_CELLS * 3 + 1];
	int w = COLS - 46;

	console_attr(ui, 0, A_BOLD);
	console_putf(ui, y, 2, 16, "%s", name);
	console_attr(ui, 0, A_NORMAL);
	if (r->n == 0) {
		console_putf(ui, y, 18, COLS - 20, "%llu/%llu  (no runs: no "
		    "interval)", (unsigned long long)r->k,
		    (unsigned long long)r->n);
		return;
	}
	console_putf(ui, y, 18, 26, "%llu/%llu [%.4f, %.4f]",
	    (unsigned long long)r->k, (unsigned long long)r->n, r->lower,
	    r->upper);
	if (w > 60)
		w = 60;
	if (w < 4 || chart_bar((double)r->k / (double)r->n, r->lower,
	    r->upper, w, &b) == -1)
		return;
	chart_bar_text(&b, ui->utf8, cells, sizeof cells);
	console_attr(ui, CP_CYAN, A_NORMAL);
	console_put(ui, y, 44, "[", 1);
	console_put(ui, y, 45, cells, w);
	console_put(ui, y, 45 + w, "]", 1);
	attrset(A_NORMAL);
}

/* The rates of t as bars with their intervals, the time to kill and its
 * histogram (at most maxbins rows) from row y; the next free row. */
int
console_trial_pictures(struct console_ui *ui, int y, const struct trial *t,
    int maxbins)
{
	const struct trial_summary *s = &t->sum;
	double *v = xcalloc(t->n ? t->n : 1, sizeof *v);
	struct chart_hist h;
	size_t nv = 0;

	console_attr(ui, 0, A_BOLD);
	console_putf(ui, y, 1, 42, "rates (Clopper-Pearson, %g%%)",
	    t->level * 100.0);
	console_attr(ui, 0, A_DIM);
	console_putf(ui, y++, 44, COLS - 45, "%s below, %s to k/n, %s above",
	    ui->utf8 ? "\u2588" : "#", ui->utf8 ? "\u2593" : "=",
	    ui->utf8 ? "\u2591" : "-");
	attrset(A_NORMAL);
	console_rate(ui, y++, "bait taken", &s->bait);
	console_rate(ui, y++, "contained", &s->contained_r);
	console_rate(ui, y++, "breached", &s->breached_r);
	console_rate(ui, y++, "leaked", &s->leaked);
	console_attr(ui, 0, A_BOLD);
	console_put(ui, y, 2, "time to kill", 16);
	console_attr(ui, 0, A_NORMAL);
	if (s->nttk == 0) {
		console_put(ui, y++, 18, "none (no run cut the agent off)",
		    COLS - 20);
		free(v);
		return y;
	}
	console_putf(ui, y++, 18, COLS - 20, "median %.3f ms, p95 %.3f ms, "
	    "max %.3f ms (%zu run(s))", s->ttk_median, s->ttk_p95,
	    s->ttk_max, s->nttk);
	for (size_t i = 0; i < t->n; i++)
		if (t->runs[i].done && t->runs[i].time_to_kill_ms >= 0)
			v[nv++] = t->runs[i].time_to_kill_ms;
	/* about the square root of the count (ares trial's rule), at most
	 * maxbins rows */
	{
		int want = (int)ceil(sqrt((double)nv));

		if (want < maxbins)
			maxbins = want < 1 ? 1 : want;
	}
	if (maxbins > CHART_MAX_BINS)
		maxbins = CHART_MAX_BINS;
	if (maxbins >= 1 && chart_hist(v, nv, (size_t)maxbins, &h) == 0)
		for (size_t b = 0; b < h.nbins; b++) {
			char bar[CHART_MAX_CELLS * 3 + 1];
			int w = COLS - 48;

			if (w > 50)
				w = 50;
			chart_hbar_text(h.count[b], h.max, w, ui->utf8, bar,
			    sizeof bar);
			console_attr(ui, 0, A_DIM);
			if (h.nbins == 1)
				console_putf(ui, y, 4, 28, "%9.1f ms", h.lo);
			else
				console_putf(ui, y, 4, 28, "%9.1f - %9.1f ms",
				    chart_hist_edge(&h, b),
				    chart_hist_edge(&h, b + 1));
			console_attr(ui, CP_MAGENTA, A_NORMAL);
			console_put(ui, y, 33, bar, w);
			console_attr(ui, 0, A_NORMAL);
			console_putf(ui, y++, 34 + w, 8, "%zu", h.count[b]);
		}
	attrset(A_NORMAL);
	free(v);
	return y;
}

/* Progress and the latest runs while the trial runs; then the rates,
 * the verdict and every run. */
static void
console_trial_draw(struct console_ui *ui)
{
	struct console_trial_screen *ts = &console_trial_st;
	struct console_job *j = ui->job;
	const struct trial_progress *tp = &ts->tp;
	const struct console_trial_fin *fin = ts->fin;
	size_t nfin, nshow;
	int y = 2;

	pthread_mutex_lock(&j->mu);
	ts->tp = j->tp;
	ts->nfin = j->nfin;
	memcpy(ts->fin, j->fin, sizeof ts->fin);
	pthread_mutex_unlock(&j->mu);
	nfin = ts->nfin;
	console_job_frame(ui, "trial");
	console_putf(ui, y++, 1, COLS - 2, "N=%zu runs, J=%zu at a time "
	    "(N: +/- on the home screen, default %d)", j->n, j->jobs,
	    CONSOLE_TRIAL_N);
	console_bar(ui, y, 1, COLS - 24, tp->done, j->n, CP_CYAN);
	console_putf(ui, y++, COLS - 22, 21, "running %zu", tp->running);
	y++;
	console_attr(ui, CP_GREEN, A_BOLD);
	console_putf(ui, y, 2, 18, "contained %zu", tp->contained);
	console_attr(ui, CP_RED, A_BOLD);
	console_putf(ui, y, 20, 18, "breached %zu", tp->breached);
	console_attr(ui, CP_YELLOW, A_BOLD);
	console_putf(ui, y, 38, 22, "not-exercised %zu", tp->not_exercised);
	console_attr(ui, CP_MAGENTA, A_BOLD);
	console_putf(ui, y++, 60, COLS - 61, "errors %zu", tp->errors);
	attrset(A_NORMAL);
	y++;
	if (j->joined && j->rc == 0) {
		const struct trial *t = &j->t;
		int code = trial_exit_code(t);

		y = console_trial_pictures(ui, y, t, LINES >= 34 ? 6 : 3);
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
			if (r->done && t->multi)   /* --engine: its engine */
				console_putf(ui, y, 27, COLS - 28, "%s%s: %s",
				    r->engine, r->nattempts ? " (rerun)" : "",
				    r->reason);
			else if (r->done)
				console_put(ui, y, 27, r->reason, COLS - 28);
			y++;
		}
		return;
	}
	if (j->joined) {
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

const struct console_screen console_screen_trial = {
	.name = "trial",
	.keys_hint = "q home  ? help",
	.keys = console_job_keys,
	.nkeys = CONSOLE_JOB_NKEYS,
	.state = &console_trial_st,
	.key = console_job_key,
	.tick = console_job_tick,
	.draw = console_trial_draw,
	.quit = console_job_quit,
	.fd = console_job_fd,
	.status = console_job_status,
};
