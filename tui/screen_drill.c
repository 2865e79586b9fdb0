/*
 * screen_drill.c - the live drill screen.  drill_run() runs on a worker
 * thread (all Docker/network work happens there); its observer applies
 * each beat to the shared state with core's reducer (replay_state_apply,
 * the one the replay uses), copies the beat into a mutex-protected ring
 * for the event list and pokes a non-blocking self-pipe (it never
 * blocks).  The UI takes the state and drains the ring; a beat the full
 * ring dropped is missing from the event list only, never from the state.
 * The screen's state is struct console_drill_screen (one, below).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

#define CONSOLE_RING       256     /* beats between observer and UI */

/* Shared between the drill thread (observer, worker end) and the UI. */
struct console_shared {
	pthread_mutex_t mu;
	struct replay_state st;   /* every beat applied, in delivery order */
	struct drill_beat ring[CONSOLE_RING];
	size_t head, count;
	size_t dropped;      /* beats lost because the ring was full */
	bool done;           /* drill_run() returned */
	int pipe_rd, pipe_wr;
};

/* A drill on the worker thread: drill_run()'s options, result and error
 * (the UI reads them once it has joined the thread). */
struct console_worker {
	struct console_shared *sh;
	struct drill_options dopt;
	volatile sig_atomic_t cancel;
	struct drill_result res;
	struct errbuf err;
	int rc;
};

/* The live drill screen's state. */
struct console_drill_screen {
	struct console_view view;      /* what the drill layout shows */
	struct console_shared sh;      /* with the drill thread */
	struct console_worker w;       /* the last drill's */
	char policy_path[4096];
	struct drill_beat batch[CONSOLE_RING];   /* console_drain()'s */
	bool started;                  /* a drill ran: w holds its end */
	bool stopping;                 /* cancelled, not joined yet */
	struct console_pane pane;      /* the event pane (pane.c) */
	char run_dir[PATH_MAX + 80];   /* the run's folder, for the pane */
	struct pace_queue pq;          /* beats on their way to the view */
	struct replay_state latest;    /* the state after every beat */
	char note[160];                /* 'r' could not replay: why */
};

static struct console_drill_screen console_drill_st;

/* The status line's keys ("q home" or "q quit"), set at each draw. */
static char console_drill_hint[64] = "jk / enter r replay q quit ? help";
/* Its '?' line for q, likewise. */
static char console_drill_qhelp[64] =
    "quit (a running drill is stopped, its lab torn down)";

/* ---------------------------------------------------------------- */
/* observer, worker                                                  */
/* ---------------------------------------------------------------- */

/* The drill observer: runs on the drill thread; applies the beat to the
 * shared state, copies it into the ring (dropping the oldest when full)
 * and pokes the self-pipe. */
static void
console_observer(void *ctx, const struct drill_beat *b)
{
	struct console_shared *sh = ctx;
	char c = 'b';

	pthread_mutex_lock(&sh->mu);
	replay_state_apply(&sh->st, b);
	if (sh->count == CONSOLE_RING) {
		sh->head = (sh->head + 1) % CONSOLE_RING;
		sh->count--;
		sh->dropped++;
	}
	sh->ring[(sh->head + sh->count) % CONSOLE_RING] = *b;
	sh->count++;
	pthread_mutex_unlock(&sh->mu);
	if (write(sh->pipe_wr, &c, 1) < 0) {
		/* EAGAIN: the UI already has a wake-up pending. */
	}
}

/* The drill thread: drill_run(), then mark the end and wake the UI. */
static void *
console_worker_main(void *arg)
{
	struct console_worker *w = arg;
	char c = 'd';

	w->rc = drill_run(&w->dopt, &w->res, &w->err);
	pthread_mutex_lock(&w->sh->mu);
	w->sh->done = true;
	pthread_mutex_unlock(&w->sh->mu);
	if (write(w->sh->pipe_wr, &c, 1) < 0) {
		/* the UI also polls with a timeout */
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* drill state from beats and the result                             */
/* ---------------------------------------------------------------- */

static void console_phase_kv(struct console_view *v, const char *text);

/* Copy one word (up to a blank, ',' or ':' after the first character)
 * into dst of size n. */
static void
console_word(char *dst, size_t n, const char *p)
{
	size_t len = strcspn(p, " ,");

	if (len > 1 && p[len - 1] == ':')
		len--;
	if (len >= n)
		len = n - 1;
	memcpy(dst, p, len);
	dst[len] = '\0';
}

/*
 * Fill the title from drill.c's first PHASE beat,
 * "run <id>: policy <name>, seed <n>, model <name>, ...", or from
 * "key=value" words (see tui.h).
 */
static void
console_phase_keys(struct console_view *v, const char *text)
{
	if (strncmp(text, "run ", 4) == 0 && strchr(text, '=') == NULL) {
		const char *p;
		console_word(v->run_id, sizeof v->run_id, text + 4);
		if ((p = strstr(text, " policy ")) != NULL)
			console_word(v->policy, sizeof v->policy, p + 8);
		if ((p = strstr(text, " seed ")) != NULL)
			console_word(v->seed, sizeof v->seed, p + 6);
		if ((p = strstr(text, " model ")) != NULL)
			console_word(v->model, sizeof v->model, p + 7);
		return;
	}
	console_phase_kv(v, text);
}

/* Pick "key=value" words out of a PHASE beat. */
static void
console_phase_kv(struct console_view *v, const char *text)
{
	static const struct { const char *key; size_t off, size; } keys[] = {
		{ "run=", offsetof(struct console_view, run_id), 64 },
		{ "model=", offsetof(struct console_view, model), 64 },
		{ "policy=", offsetof(struct console_view, policy), 256 },
		{ "seed=", offsetof(struct console_view, seed), 32 },
	};
	const char *p = text;

	while (*p != '\0') {
		size_t len;
		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			size_t kl = strlen(keys[k].key);
			if (len > kl && strncmp(p, keys[k].key, kl) == 0) {
				char *dst = (char *)v + keys[k].off;
				size_t vl = len - kl;
				if (vl >= keys[k].size)
					vl = keys[k].size - 1;
				memcpy(dst, p + kl, vl);
				dst[vl] = '\0';
			}
		}
		p += len;
	}
}

/* What a beat changes beyond the state: the phase line, the title, when
 * Poyo last moved; then keep it for the event list. */
static void
console_apply_beat(struct console_view *v, const struct drill_beat *b)
{
	switch (b->kind) {
	case DRILL_BEAT_PHASE:
		console_copy(v->phase, sizeof v->phase, b->text);
		console_phase_keys(v, b->text);
		break;
	case DRILL_BEAT_AGENT:
	case DRILL_BEAT_TOOL:
	case DRILL_BEAT_SERVICE:
		v->last_agent_ns = util_mono_ns();
		v->walking = b->kind == DRILL_BEAT_AGENT;
		break;
	default:
		break;
	}
	/* Keep the list in time order: sensor beats can arrive after lever
	 * beats that happened later. */
	if (v->hcount == CONSOLE_HIST) {
		v->hhead = (v->hhead + 1) % CONSOLE_HIST;
		v->hcount--;
		v->hbase++;
	}
	size_t i = v->hcount++;
	while (i > 0 && v->hist[(v->hhead + i - 1) % CONSOLE_HIST].t_ns >
	    b->t_ns) {
		v->hist[(v->hhead + i) % CONSOLE_HIST] =
		    v->hist[(v->hhead + i - 1) % CONSOLE_HIST];
		i--;
	}
	v->hist[(v->hhead + i) % CONSOLE_HIST] = *b;
}

/* Show beat b: the view's state (the reducer, as the drill thread's),
 * the event list, the timeline. */
static void
console_show_beat(struct console_view *v, const struct drill_beat *b)
{
	replay_state_apply(&v->st, b);
	console_apply_beat(v, b);
	console_timeline_note(&v->tl, b);
}

/* The display queue (core's pace_queue: marker beats stay a moment, the
 * verdict at once, display only): the n new beats of d->batch go in, the
 * due ones to the view; once it is empty the view's state is the drill
 * thread's exactly (a beat the ring dropped included).  true when a beat
 * was shown. */
static bool
console_pace(struct console_drill_screen *d, size_t n, bool done)
{
	struct console_view *v = &d->view;
	uint64_t now = util_mono_ns();
	struct drill_beat b;
	bool shown = false;

	for (size_t i = 0; i < n; i++) {
		if (!pace_queue_push(&d->pq, &d->batch[i], now)) {
			/* full: the oldest is shown now */
			if (pace_queue_shift(&d->pq, &b))
				console_show_beat(v, &b);
			(void)pace_queue_push(&d->pq, &d->batch[i], now);
			shown = true;
		}
		v->tl.known++;
	}
	if (done)
		pace_queue_flush(&d->pq);
	while (pace_queue_pop(&d->pq, now, &b)) {
		console_show_beat(v, &b);
		shown = true;
	}
	if (d->pq.count == 0)
		v->st = d->latest;
	return shown;
}

/* Take everything from the shared ring into d's view (through the display
 * queue).  Returns true if anything changed. */
static bool
console_drain(struct console_drill_screen *d)
{
	struct console_shared *sh = &d->sh;
	struct console_view *v = &d->view;
	size_t n = 0, dropped;
	bool done, shown;
	char buf[256];

	while (read(sh->pipe_rd, buf, sizeof buf) > 0)
		;
	pthread_mutex_lock(&sh->mu);
	while (sh->count > 0) {
		d->batch[n++] = sh->ring[sh->head];
		sh->head = (sh->head + 1) % CONSOLE_RING;
		sh->count--;
	}
	dropped = sh->dropped;
	done = sh->done;
	d->latest = sh->st;
	pthread_mutex_unlock(&sh->mu);
	shown = console_pace(d, n, done);
	/* Poyo's pacing starts when the screen first shows it */
	if (v->st.bait && v->bait_ns == 0)
		v->bait_ns = util_mono_ns();
	if (v->st.zapped && v->zap_ns == 0)
		v->zap_ns = util_mono_ns();
	v->dropped = dropped;
	if (done && !v->done) {
		v->done = true;
		return true;
	}
	return shown || n > 0;
}

/* The drill finished: its result names the run, the model and the seed
 * for the title, the levers as it ran them, and gives the time to kill and
 * the verdict's reason.  What the layout draws stays the reducer's. */
static void
console_apply_result(struct console_drill_screen *d)
{
	struct console_view *v = &d->view;
	const struct drill_result *r = &d->w.res;

	if (d->w.rc != 0)
		return;
	v->have_result = true;
	v->res = r;
	console_copy(v->run_id, sizeof v->run_id, r->run_id);
	if (v->policy[0] == '\0')   /* keep the name; r->policy is a path */
		console_copy(v->policy, sizeof v->policy, r->policy);
	console_copy(v->model, sizeof v->model, r->model);
	snprintf(v->seed, sizeof v->seed, "%" PRIu64, r->seed);
	for (size_t i = 0; i < r->nlevers && i < POLICY_MAX_LEVERS; i++)
		if (v->lev_name[i][0] == '\0')
			console_copy(v->lev_name[i], sizeof v->lev_name[i],
			    r->levers[i].name);
}

/* ---- the live drill screen ---------------------------------------- */

/* Load the policy at path for a title: its name (else the path) into
 * name, its seed into seed unless has_seed.  The policy (the caller
 * frees it), or NULL when it does not load (the run reports why). */
struct policy *
console_policy_title(const char *path, bool has_seed, char *name,
    size_t nname, char *seed, size_t nseed)
{
	struct errbuf e = { 0 };
	struct policy *p;

	console_copy(name, nname, path);
	p = policy_load(path, &e);
	if (p == NULL)
		return NULL;
	if (p->name != NULL)
		console_copy(name, nname, p->name);
	if (!has_seed)
		snprintf(seed, nseed, "%" PRIu64, p->seed);
	return p;
}

/* Preload v's title and the levers (names, and what they do, into the
 * state) from the policy file, if one was given (file I/O only). */
static void
console_preload_policy(struct console_view *v, const char *path,
    bool has_seed)
{
	struct policy *p;

	if (path == NULL)
		return;
	p = console_policy_title(path, has_seed, v->policy, sizeof v->policy,
	    v->seed, sizeof v->seed);
	if (p == NULL)
		return;   /* drill_run() reports the problem */
	console_copy(v->model, sizeof v->model,
	    p->model_name != NULL ? p->model_name : "offline");
	/* the levers drill.start will list: named as the replay names them */
	for (size_t i = 0; i < p->nlevers && i < POLICY_MAX_LEVERS; i++) {
		console_copy(v->lev_name[i], sizeof v->lev_name[i],
		    p->levers[i]);
		replay_state_lever(&v->st, i, p->levers[i]);
	}
	policy_free(p);
}

/* Start drill_run() on the worker thread and switch to the drill screen. */
void
console_drill_start(struct console_ui *ui, const char *policy, uint64_t seed,
    bool has_seed)
{
	struct console_drill_screen *d = &console_drill_st;
	int fds[2];

	memset(&d->sh, 0, sizeof d->sh);
	memset(&d->w, 0, sizeof d->w);
	console_view_reset(&d->view);
	d->view.hbase = 0;
	console_pane_reset(&d->pane);
	d->view.pane = &d->pane;
	console_timeline_reset(&d->view.tl);
	pace_queue_init(&d->pq);
	d->note[0] = '\0';
	d->stopping = false;
	d->started = true;
	console_copy(d->policy_path, sizeof d->policy_path, policy);
	console_preload_policy(&d->view, d->policy_path, has_seed);
	if (has_seed)
		snprintf(d->view.seed, sizeof d->view.seed, "%" PRIu64, seed);

	d->sh.st = d->view.st;   /* before the drill thread exists */
	d->latest = d->view.st;
	console_wake_pipe(fds);
	d->sh.pipe_rd = fds[0];
	d->sh.pipe_wr = fds[1];
	pthread_mutex_init(&d->sh.mu, NULL);

	d->w.sh = &d->sh;
	d->w.dopt.policy_path = d->policy_path;
	d->w.dopt.seed = seed;
	d->w.dopt.has_seed = has_seed;
	d->w.dopt.observer = console_observer;
	d->w.dopt.observer_ctx = &d->sh;
	d->w.dopt.cancel = &d->w.cancel;
	d->w.dopt.pace_ms = ui->o != NULL ? ui->o->present_ms : 0;
	d->view.pace_ms = d->w.dopt.pace_ms;   /* the title says PACED */
	console_worker_start(ui, console_worker_main, &d->w);
	console_screen_open(ui, &console_screen_drill);
}

/* The exit code after the last drill of the session: 0 when none ran,
 * EXIT_INTERNAL when the user stopped it (its verdict, if it still
 * reached one, is not that of a whole drill), else its own. */
int
console_drill_exit_code(void)
{
	const struct console_worker *w = &console_drill_st.w;

	if (!console_drill_st.started)
		return 0;
	if (w->cancel != 0)
		return EXIT_INTERNAL;
	if (w->rc == 0)
		return drill_exit_code(&w->res);
	return errbuf_exit_code(&w->err);
}

/* The drill thread's self-pipe while it runs. */
static int
console_drill_fd(const struct console_ui *ui)
{
	return ui->worker_running ? console_drill_st.sh.pipe_rd : -1;
}

/* Ask to quit: cancel a running drill (the worker still tears down). */
static void
console_drill_quit(struct console_ui *ui)
{
	struct console_drill_screen *d = &console_drill_st;

	if (d->view.done) {
		ui->quit = true;
	} else if (!d->stopping) {
		/* The drill thread polls this flag (core.h's contract). */
		__atomic_store_n(&d->w.cancel, 1, __ATOMIC_SEQ_CST);
		d->stopping = true;
	}
}

/* Take the drill's beats; join it once it ended; back home after q. */
static bool
console_drill_tick(struct console_ui *ui, uint64_t now)
{
	struct console_drill_screen *d = &console_drill_st;
	bool dirty = false;

	(void)now;
	if (ui->worker_running && console_drain(d))
		dirty = true;
	if (d->view.done && ui->worker_running) {
		pthread_join(ui->worker, NULL);
		ui->worker_running = false;
		close(d->sh.pipe_rd);
		close(d->sh.pipe_wr);
		pthread_mutex_destroy(&d->sh.mu);
		console_apply_result(d);
		if (d->stopping)
			ui->quit = true;
		d->stopping = false;
		dirty = true;
	}
	if (ui->quit && !ui->worker_running && ui->from_home) {
		/* back home; the exit code is the last drill's */
		console_home_enter(ui);
		dirty = true;
	}
	return dirty;
}

/* The live run's folder: the result's once the drill returned, else
 * where drill_run() makes it (the runs dir and the run id). */
static const char *
console_drill_pane_dir(struct console_drill_screen *d)
{
	const char *runs = getenv("ARES_RUNS");
	char abs[PATH_MAX];

	if (d->view.have_result && d->w.res.run_dir[0] != '\0')
		return d->w.res.run_dir;
	if (d->view.run_id[0] == '\0')
		return "";
	if (runs == NULL || runs[0] == '\0')
		runs = "runs";
	if (realpath(runs, abs) != NULL)
		runs = abs;
	snprintf(d->run_dir, sizeof d->run_dir, "%s/%s", runs,
	    d->view.run_id);
	return d->run_dir;
}

/* r on a finished drill: its run dir on the replay screen, q there comes
 * back here.  Before the end, or when the run cannot be read, the status
 * line says why. */
static void
console_drill_replay(struct console_ui *ui)
{
	struct console_drill_screen *d = &console_drill_st;
	struct errbuf e = { 0 };
	struct replay *rp;

	if (!d->view.done || ui->worker_running) {
		snprintf(d->note, sizeof d->note, "r replays the drill once it "
		    "has finished");
		return;
	}
	if (d->w.rc != 0 || d->w.res.run_dir[0] == '\0') {
		snprintf(d->note, sizeof d->note, "nothing to replay: the "
		    "drill did not run");
		return;
	}
	if ((rp = replay_load(d->w.res.run_dir, NULL, &e)) == NULL) {
		snprintf(d->note, sizeof d->note, "cannot replay: %.140s",
		    e.msg);
		return;
	}
	d->note[0] = '\0';
	console_replay_enter_from(ui, rp, &console_screen_drill);
}

/* The event pane's keys first; q stops (then leaves); r replays a
 * finished drill. */
static bool
console_drill_key(struct console_ui *ui, int ch)
{
	struct console_drill_screen *d = &console_drill_st;
	struct console_pane_src src = { &d->view, NULL, d->view.run_id,
	    console_drill_pane_dir(d), NULL };

	if (console_pane_key(ui, &d->pane, &src, ch))
		return true;
	if (ch == 'q' || ch == 'Q') {
		console_drill_quit(ui);
		return true;
	}
	if (ch == 'r' || ch == 'R') {
		console_drill_replay(ui);
		return true;
	}
	return false;
}

/* A held beat is due: the loop wakes up for it. */
static uint64_t
console_drill_wake(const struct console_ui *ui)
{
	(void)ui;
	return pace_queue_due(&console_drill_st.pq);
}

/* The status line: stopping, the verdict, the error, or the phase. */
static void
console_drill_status(struct console_ui *ui, char *out, size_t n, int *pair)
{
	const struct console_drill_screen *d = &console_drill_st;

	(void)ui;
	*pair = 0;
	if (d->stopping) {
		snprintf(out, n, "stopping: tearing the lab down...");
		*pair = CP_YELLOW;
	} else if (d->note[0] != '\0') {
		snprintf(out, n, "%s", d->note);
		*pair = CP_YELLOW;
	} else if (console_view_verdict(&d->view, out, n, pair)) {
		/* the verdict */
	} else if (d->view.done) {
		snprintf(out, n, "error: %.500s", d->w.err.msg);
		*pair = CP_RED;
	} else {
		snprintf(out, n, "drill running: %s", d->view.phase[0] ?
		    d->view.phase : "starting");
	}
}

/* The animation clock advanced: redraw when Poyo's frame changes. */
static bool
console_drill_frame(struct console_ui *ui, uint64_t now)
{
	return console_pose(ui, &console_drill_st.view, now) !=
	    console_drill_st.view.shown_pose;
}

/* The drill layout; the events box says how many beats the ring
 * dropped. */
static void
console_drill_draw(struct console_ui *ui)
{
	struct console_view *v = &console_drill_st.view;
	char title[64];

	if (v->dropped > 0)
		snprintf(title, sizeof title, "events (%zu dropped)", v->dropped);
	else
		snprintf(title, sizeof title, "events");
	snprintf(console_drill_hint, sizeof console_drill_hint,
	    "jk / enter %sq %s ? help", console_drill_st.view.done ?
	    "r replay " : "", ui->from_home ? "home" : "quit");
	snprintf(console_drill_qhelp, sizeof console_drill_qhelp,
	    "%s (a running drill is stopped, its lab torn down)",
	    ui->from_home ? "home" : "quit");
	console_draw_drill_layout(ui, v, title, NULL);
	console_pane_overlay(ui, &console_drill_st.pane);
}

static const struct console_key console_drill_keys[] = {
	{ "j k up down", "events: select a newer / older one (scroll)" },
	{ "pgup pgdn", "events: a page older / newer" },
	{ "home g", "events: the oldest" },
	{ "end G", "events: follow the newest again" },
	{ "enter", "events: the selected one's evidence (pager)" },
	{ "/ n N", "search the events' text, next / previous match" },
	{ ":N", "go to beat N" },
	{ "y / Y", "copy the run id / run dir (OSC 52)" },
	{ "esc", "back: close the pager or prompt, follow again" },
	{ "q", console_drill_qhelp },
	{ "r", "replay this drill from its run dir, once it finished (q "
	    "there comes back)" },
	{ "?", "this help" },
};

const struct console_screen console_screen_drill = {
	.name = "drill",
	.keys_hint = console_drill_hint,
	.keys = console_drill_keys,
	.nkeys = sizeof console_drill_keys / sizeof console_drill_keys[0],
	.state = &console_drill_st,
	.key = console_drill_key,
	.tick = console_drill_tick,
	.draw = console_drill_draw,
	.quit = console_drill_quit,
	.fd = console_drill_fd,
	.status = console_drill_status,
	.frame = console_drill_frame,
	.wake = console_drill_wake,
};

/* The run dir of the last drill the console ran (its worker joined), or
 * NULL when none ran or it made no run dir. */
const char *
console_drill_run_dir(void)
{
	const struct console_worker *w = &console_drill_st.w;

	if (!console_drill_st.started || w->res.run_dir[0] == '\0')
		return NULL;
	return w->res.run_dir;
}
