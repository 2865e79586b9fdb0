/*
 * job.c - the worker behind the trial, probe and fix screens (one at a
 * time, like the drill's): struct console_job, its thread (trial_run,
 * probe_lab or fix_run), the hooks that copy progress into the job under
 * its mutex, the self-pipe that wakes the UI, and what the three screens
 * share: start, quit, tick, keys, title bar and status line.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* Wake the UI (never blocks; a full pipe already means "wake up"). */
static void
console_job_poke(struct console_job *j)
{
	char c = 'j';

	if (write(j->pipe_wr, &c, 1) < 0) {
		/* EAGAIN: a wake-up is pending; the UI also polls */
	}
}

/* trial_run's progress hook (trial lock held, any thread): copy. */
static void
console_trial_progress(void *ctx, const struct trial_progress *p)
{
	struct console_job *j = ctx;

	pthread_mutex_lock(&j->mu);
	j->tp = *p;
	j->tp.run = NULL;
	j->have_tp = true;
	if (p->event == TRIAL_EV_FINISH && p->run != NULL) {
		struct console_trial_fin *f =
		    &j->fin[j->nfin % CONSOLE_TRIAL_LAST];

		f->index = p->run->index;
		console_copy(f->verdict, sizeof f->verdict, p->run->verdict);
		f->ttk_ms = p->run->time_to_kill_ms;
		j->nfin++;
	}
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
}

/* probe_lab's row hook (worker thread): copy the finished row. */
static void
console_probe_row(void *ctx, const struct probe_report *r, size_t i)
{
	struct console_job *j = ctx;

	pthread_mutex_lock(&j->mu);
	if (i < PROBE_MAX_ROWS) {
		j->rows[i] = r->rows[i];
		if (j->nrows < i + 1)
			j->nrows = i + 1;
	}
	console_copy(j->run_id, sizeof j->run_id, r->run_id);
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
}

/* fix_run's observer (worker thread; text already sanitized): copy. */
static void
console_fix_observer(void *ctx, double t_ms, const char *type,
    const char *text)
{
	struct console_job *j = ctx;
	struct console_fix_beat *b;

	pthread_mutex_lock(&j->mu);
	b = &j->beats[j->nbeats % CONSOLE_FIX_BEATS];
	b->t_ms = t_ms;
	console_copy(b->type, sizeof b->type, type);
	console_copy(b->text, sizeof b->text, text);
	j->nbeats++;
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
}

/* The probe job: load the policy, open the engine, run the battery in a
 * fresh lab (torn down after).  0 or -1 + j->err. */
static int
console_probe_job(struct console_job *j)
{
	struct policy *p = policy_load(j->policy, &j->err);
	struct docker *d;
	int rc;

	if (p == NULL)
		return -1;
	d = docker_connect(NULL, &j->err);
	if (d == NULL) {
		policy_free(p);
		return -1;
	}
	{
		struct probe_options o = {
			.row_fn = console_probe_row, .row_ctx = j,
			.cancel = &j->cancel,
		};

		rc = probe_lab(d, p, &o, &j->pr, &j->err);
	}
	docker_close(d);
	policy_free(p);
	return rc;
}

static void *
console_job_main(void *arg)
{
	struct console_job *j = arg;

	switch (j->kind) {
	case CONSOLE_JOB_TRIAL: {
		struct trial_options o = {
			.policy_path = j->policy, .n = j->n, .jobs = j->jobs,
			.stop = &j->stop, .cancel = &j->cancel,
			.progress = console_trial_progress, .progress_ctx = j,
		};

		j->rc = trial_run(&o, &j->t, &j->err);
		break;
	}
	case CONSOLE_JOB_PROBE:
		j->rc = console_probe_job(j);
		break;
	case CONSOLE_JOB_FIX: {
		struct fix_options o = {
			.policy_path = j->policy,
			.observer = console_fix_observer, .observer_ctx = j,
			.cancel = &j->cancel,
		};

		j->rc = fix_run(&o, &j->fr, &j->err);
		break;
	}
	}
	pthread_mutex_lock(&j->mu);
	j->done = true;
	pthread_mutex_unlock(&j->mu);
	console_job_poke(j);
	return NULL;
}

/* Start a job of kind on policy (worker thread) and open its screen. */
void
console_job_start(struct console_ui *ui, enum console_job_kind kind,
    const char *policy)
{
	static struct console_job job;
	static bool inited;
	sigset_t block, oldmask;
	int fds[2], perr;

	if (inited) {
		/* the previous job's worker was joined before going home */
		if (job.t.runs != NULL)
			trial_free(&job.t);
		fix_result_free(&job.fr);
		pthread_mutex_destroy(&job.mu);
	}
	inited = true;
	memset(&job, 0, sizeof job);
	console_view_reset(ui);
	ui->job = &job;
	ui->rp = NULL;
	ui->job_top = 0;
	ui->job_follow = true;
	job.kind = kind;
	job.n = ui->trial_n > 0 ? ui->trial_n : CONSOLE_TRIAL_N;
	job.jobs = CONSOLE_TRIAL_J;
	job.t0 = util_mono_ns();
	console_copy(job.policy, sizeof job.policy, policy);
	console_preload_policy(ui, job.policy, false);
	console_wake_pipe(fds);
	job.pipe_rd = fds[0];
	job.pipe_wr = fds[1];
	pthread_mutex_init(&job.mu, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &oldmask);
	perr = pthread_create(&ui->worker, NULL, console_job_main, &job);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (perr != 0)
		util_fatal("console: pthread_create: %s", strerror(perr));
	ui->worker_running = true;
	ui->screen = kind == CONSOLE_JOB_TRIAL ? &console_screen_trial :
	    kind == CONSOLE_JOB_PROBE ? &console_screen_probe :
	    &console_screen_fix;
}

/* Free what the last (joined) job left: trial runs, fix result. */
void
console_job_free(struct console_ui *ui)
{
	struct console_job *j = ui->job;

	if (j == NULL || ui->worker_running)
		return;
	if (j->t.runs != NULL)
		trial_free(&j->t);
	fix_result_free(&j->fr);
	memset(&j->t, 0, sizeof j->t);
	memset(&j->fr, 0, sizeof j->fr);
}

/* The job screens' fd: the job's self-pipe while its worker runs. */
int
console_job_fd(const struct console_ui *ui)
{
	return ui->worker_running ? ui->job->pipe_rd : -1;
}

/* q: a finished job goes home; a running one is stopped first (trial: no
 * new run, running drills cancelled; fix: cancelled; probe: no further
 * row starts; each still tears its lab down). */
void
console_job_quit(struct console_ui *ui)
{
	if (ui->done) {
		ui->quit = true;
	} else if (!ui->stopping) {
		__atomic_store_n(&ui->job->stop, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&ui->job->cancel, 1, __ATOMIC_SEQ_CST);
		ui->stopping = true;
	}
}

/* Join the worker once it is done (q while stopping then leaves), tick
 * the elapsed clock, go home after q. */
bool
console_job_tick(struct console_ui *ui, uint64_t now)
{
	struct console_job *j = ui->job;
	bool dirty = false, done;
	char buf[256];

	(void)now;
	if (ui->worker_running) {
		while (read(j->pipe_rd, buf, sizeof buf) > 0)
			dirty = true;
		pthread_mutex_lock(&j->mu);
		done = j->done;
		pthread_mutex_unlock(&j->mu);
		if (done) {
			pthread_join(ui->worker, NULL);
			ui->worker_running = false;
			close(j->pipe_rd);
			close(j->pipe_wr);
			ui->done = true;
			ui->job_secs = (double)(util_mono_ns() - j->t0) / 1e9;
			if (ui->stopping)
				ui->quit = true;
			ui->stopping = false;
			dirty = true;
		}
	}
	if (ui->tick != ui->job_tick) {   /* the elapsed clock, ~1/s */
		ui->job_tick = ui->tick;
		if (!ui->done && ui->tick % 7 == 0)
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
	switch (ch) {
	case 'q':
	case 'Q':
		console_job_quit(ui);
		return true;
	case KEY_UP:
	case 'k':
		ui->job_follow = false;
		if (ui->job_top > 0)
			ui->job_top--;
		return true;
	case KEY_DOWN:
	case 'j':
		ui->job_top++;     /* clamped when drawn */
		return true;
	case KEY_END:
	case 'G':
		ui->job_follow = true;
		return true;
	default:
		return false;
	}
}

/* Whether the current screen is a trial, probe or fix screen. */
bool
console_is_job(const struct console_ui *ui)
{
	return ui->job != NULL && (ui->screen == &console_screen_trial ||
	    ui->screen == &console_screen_probe ||
	    ui->screen == &console_screen_fix);
}

/* The status line of a job screen (error text is core's, sanitized when
 * drawn by console_put). */
void
console_job_status(struct console_ui *ui, char *out, size_t n, int *pair)
{
	struct console_job *j = ui->job;
	double secs = ui->done ? ui->job_secs :
	    (double)(util_mono_ns() - j->t0) / 1e9;

	if (ui->stopping) {
		snprintf(out, n, "stopping: waiting for the work to end and "
		    "the labs to be torn down (%.0fs)", secs);
		*pair = CP_YELLOW;
	} else if (!ui->done) {
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
	const char *keys = ui->screen->keys_hint;
	int kw = (int)strlen(keys);
	char st[300];
	int pair = 0;

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "ares %s  policy %s  seed %s", what,
	    ui->policy, ui->seed);
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
