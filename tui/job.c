/*
 * job.c - the worker behind the trial, probe and fix screens (one at a
 * time, like the drill's): struct console_job's lifecycle.  Start, its
 * thread (trial_run, probe_lab or fix_run), the hooks that copy progress
 * into the job under its mutex, the self-pipe that wakes the UI, stop,
 * join, free.  What the three screens draw and do with it is in
 * screen_job.c and screen_{trial,probe,fix}.c.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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

/* The worker thread: run the job, mark it done, wake the UI. */
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

/* Start a job of kind on policy (n: the trial's N, 0 for the default) on
 * the worker thread; ui->job is it from now on. */
void
console_job_start(struct console_ui *ui, enum console_job_kind kind,
    const char *policy, size_t n)
{
	static struct console_job job;
	static bool inited;
	int fds[2];

	if (inited) {
		/* the previous job's worker was joined before going home */
		if (job.t.runs != NULL)
			trial_free(&job.t);
		fix_result_free(&job.fr);
		pthread_mutex_destroy(&job.mu);
	}
	inited = true;
	memset(&job, 0, sizeof job);
	ui->job = &job;
	job.kind = kind;
	job.n = n > 0 ? n : CONSOLE_TRIAL_N;
	job.jobs = CONSOLE_TRIAL_J;
	job.t0 = util_mono_ns();
	console_copy(job.policy, sizeof job.policy, policy);
	console_wake_pipe(fds);
	job.pipe_rd = fds[0];
	job.pipe_wr = fds[1];
	pthread_mutex_init(&job.mu, NULL);
	console_worker_start(ui, console_job_main, &job);
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

/* The job's self-pipe while its worker runs, else -1. */
int
console_job_fd(const struct console_ui *ui)
{
	return ui->worker_running ? ui->job->pipe_rd : -1;
}

/* Ask the running job to stop (trial: no new run, running drills
 * cancelled; fix: cancelled; probe: no further row starts; each still
 * tears its lab down); once is enough. */
void
console_job_stop(struct console_ui *ui)
{
	struct console_job *j = ui->job;

	if (j->stopping)
		return;
	__atomic_store_n(&j->stop, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&j->cancel, 1, __ATOMIC_SEQ_CST);
	j->stopping = true;
}

/* Take the worker's wake-ups; join it once it returned (j->joined, how
 * long it took).  Returns true when anything came. */
bool
console_job_reap(struct console_ui *ui)
{
	struct console_job *j = ui->job;
	bool dirty = false, done;
	char buf[256];

	if (!ui->worker_running)
		return false;
	while (read(j->pipe_rd, buf, sizeof buf) > 0)
		dirty = true;
	pthread_mutex_lock(&j->mu);
	done = j->done;
	pthread_mutex_unlock(&j->mu);
	if (!done)
		return dirty;
	pthread_join(ui->worker, NULL);
	ui->worker_running = false;
	close(j->pipe_rd);
	close(j->pipe_wr);
	j->joined = true;
	j->secs = (double)(util_mono_ns() - j->t0) / 1e9;
	return true;
}
