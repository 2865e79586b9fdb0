/*
 * screen_drill.c - the live drill screen.  drill_run() runs on a worker
 * thread (all Docker/network work happens there); its observer applies
 * each beat to the shared state with core's reducer (replay_state_apply,
 * the one the replay uses), copies the beat into a mutex-protected ring
 * for the event list and pokes a non-blocking self-pipe (it never
 * blocks).  The UI takes the state and drains the ring; a beat the full
 * ring dropped is missing from the event list only, never from the state.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
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

static void console_phase_kv(struct console_ui *ui, const char *text);

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
console_phase_keys(struct console_ui *ui, const char *text)
{
	if (strncmp(text, "run ", 4) == 0 && strchr(text, '=') == NULL) {
		const char *p;
		console_word(ui->run_id, sizeof ui->run_id, text + 4);
		if ((p = strstr(text, " policy ")) != NULL)
			console_word(ui->policy, sizeof ui->policy, p + 8);
		if ((p = strstr(text, " seed ")) != NULL)
			console_word(ui->seed, sizeof ui->seed, p + 6);
		if ((p = strstr(text, " model ")) != NULL)
			console_word(ui->model, sizeof ui->model, p + 7);
		return;
	}
	console_phase_kv(ui, text);
}

/* Pick "key=value" words out of a PHASE beat. */
static void
console_phase_kv(struct console_ui *ui, const char *text)
{
	static const struct { const char *key; size_t off, size; } keys[] = {
		{ "run=", offsetof(struct console_ui, run_id), 64 },
		{ "model=", offsetof(struct console_ui, model), 64 },
		{ "policy=", offsetof(struct console_ui, policy), 256 },
		{ "seed=", offsetof(struct console_ui, seed), 32 },
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
				char *dst = (char *)ui + keys[k].off;
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
console_apply_beat(struct console_ui *ui, const struct drill_beat *b)
{
	switch (b->kind) {
	case DRILL_BEAT_PHASE:
		console_copy(ui->phase, sizeof ui->phase, b->text);
		console_phase_keys(ui, b->text);
		break;
	case DRILL_BEAT_AGENT:
	case DRILL_BEAT_TOOL:
	case DRILL_BEAT_SERVICE:
		ui->last_agent_ns = util_mono_ns();
		ui->walking = b->kind == DRILL_BEAT_AGENT;
		break;
	default:
		break;
	}
	/* Keep the list in time order: sensor beats can arrive after lever
	 * beats that happened later. */
	if (ui->hcount == CONSOLE_HIST) {
		ui->hhead = (ui->hhead + 1) % CONSOLE_HIST;
		ui->hcount--;
	}
	size_t i = ui->hcount++;
	while (i > 0 && ui->hist[(ui->hhead + i - 1) % CONSOLE_HIST].t_ns >
	    b->t_ns) {
		ui->hist[(ui->hhead + i) % CONSOLE_HIST] =
		    ui->hist[(ui->hhead + i - 1) % CONSOLE_HIST];
		i--;
	}
	ui->hist[(ui->hhead + i) % CONSOLE_HIST] = *b;
}

/* Take everything from the shared ring.  Returns true if anything changed. */
static bool
console_drain(struct console_ui *ui, struct console_shared *sh)
{
	static struct drill_beat batch[CONSOLE_RING];  /* UI thread only */
	size_t n = 0, dropped;
	bool done;
	char buf[256];

	while (read(sh->pipe_rd, buf, sizeof buf) > 0)
		;
	pthread_mutex_lock(&sh->mu);
	while (sh->count > 0) {
		batch[n++] = sh->ring[sh->head];
		sh->head = (sh->head + 1) % CONSOLE_RING;
		sh->count--;
	}
	dropped = sh->dropped;
	done = sh->done;
	ui->st = sh->st;
	pthread_mutex_unlock(&sh->mu);
	for (size_t i = 0; i < n; i++)
		console_apply_beat(ui, &batch[i]);
	/* Poyo's pacing starts when the screen first shows it */
	if (ui->st.bait && ui->bait_ns == 0)
		ui->bait_ns = util_mono_ns();
	if (ui->st.zapped && ui->zap_ns == 0)
		ui->zap_ns = util_mono_ns();
	ui->dropped = dropped;
	if (done && !ui->done) {
		ui->done = true;
		return true;
	}
	return n > 0;
}

/* The drill finished: its result names the run, the model and the seed
 * for the title, the levers as it ran them, and gives the time to kill and
 * the verdict's reason.  What the layout draws stays the reducer's. */
static void
console_apply_result(struct console_ui *ui)
{
	const struct drill_result *r = &ui->w->res;

	if (ui->w->rc != 0)
		return;
	ui->have_result = true;
	ui->res = r;
	console_copy(ui->run_id, sizeof ui->run_id, r->run_id);
	if (ui->policy[0] == '\0')   /* keep the name; r->policy is a path */
		console_copy(ui->policy, sizeof ui->policy, r->policy);
	console_copy(ui->model, sizeof ui->model, r->model);
	snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, r->seed);
	for (size_t i = 0; i < r->nlevers && i < POLICY_MAX_LEVERS; i++)
		if (ui->lev_name[i][0] == '\0')
			console_copy(ui->lev_name[i], sizeof ui->lev_name[i],
			    r->levers[i].name);
}

/* ---- the live drill screen ---------------------------------------- */

/* Preload the title and the levers (names, and what they do, into the
 * state) from the policy file, if one was given (file I/O only). */
void
console_preload_policy(struct console_ui *ui, const char *path, bool has_seed)
{
	struct errbuf e = { 0 };
	struct policy *p;

	if (path == NULL)
		return;
	console_copy(ui->policy, sizeof ui->policy, path);
	p = policy_load(path, &e);
	if (p == NULL)
		return;   /* drill_run() reports the problem */
	if (p->name != NULL)
		console_copy(ui->policy, sizeof ui->policy, p->name);
	console_copy(ui->model, sizeof ui->model,
	    p->model_name != NULL ? p->model_name : "offline");
	if (!has_seed)
		snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, p->seed);
	/* the levers drill.start will list: named as the replay names them */
	for (size_t i = 0; i < p->nlevers && i < POLICY_MAX_LEVERS; i++) {
		console_copy(ui->lev_name[i], sizeof ui->lev_name[i],
		    p->levers[i]);
		replay_state_lever(&ui->st, i, p->levers[i]);
	}
	policy_free(p);
}

/* Start drill_run() on the worker thread and switch to the drill screen. */
void
console_drill_start(struct console_ui *ui, const char *policy, uint64_t seed,
    bool has_seed)
{
	static struct console_shared sh;
	static struct console_worker w;
	static char policy_path[4096];
	sigset_t block, oldmask;
	int fds[2];

	memset(&sh, 0, sizeof sh);
	memset(&w, 0, sizeof w);
	console_view_reset(ui);
	ui->w = &w;
	ui->sh = &sh;
	ui->rp = NULL;
	console_copy(policy_path, sizeof policy_path, policy);
	console_preload_policy(ui, policy_path, has_seed);
	if (has_seed)
		snprintf(ui->seed, sizeof ui->seed, "%" PRIu64, seed);

	sh.st = ui->st;   /* before the drill thread exists */
	console_wake_pipe(fds);
	sh.pipe_rd = fds[0];
	sh.pipe_wr = fds[1];
	pthread_mutex_init(&sh.mu, NULL);

	w.sh = &sh;
	w.dopt.policy_path = policy_path;
	w.dopt.seed = seed;
	w.dopt.has_seed = has_seed;
	w.dopt.observer = console_observer;
	w.dopt.observer_ctx = &sh;
	w.dopt.cancel = &w.cancel;
	/* The worker must not take the UI's signals. */
	sigemptyset(&block);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &oldmask);
	int perr = pthread_create(&ui->worker, NULL, console_worker_main, &w);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (perr != 0)
		util_fatal("console: pthread_create: %s", strerror(perr));
	ui->worker_running = true;
	ui->screen = &console_screen_drill;
}

static int
console_drill_fd(const struct console_ui *ui)
{
	return ui->worker_running ? ui->sh->pipe_rd : -1;
}

/* Ask to quit: cancel a running drill (the worker still tears down). */
static void
console_drill_quit(struct console_ui *ui)
{
	if (ui->done) {
		ui->quit = true;
	} else if (!ui->stopping) {
		/* The drill thread polls this flag (core.h's contract). */
		__atomic_store_n(&ui->w->cancel, 1, __ATOMIC_SEQ_CST);
		ui->stopping = true;
	}
}

static bool
console_drill_tick(struct console_ui *ui, uint64_t now)
{
	bool dirty = false;

	(void)now;
	if (ui->worker_running && console_drain(ui, ui->sh))
		dirty = true;
	if (ui->done && ui->worker_running) {
		pthread_join(ui->worker, NULL);
		ui->worker_running = false;
		close(ui->sh->pipe_rd);
		close(ui->sh->pipe_wr);
		pthread_mutex_destroy(&ui->sh->mu);
		console_apply_result(ui);
		if (ui->stopping)
			ui->quit = true;
		ui->stopping = false;
		dirty = true;
	}
	if (ui->quit && !ui->worker_running && ui->from_home) {
		/* back home; the exit code is the last drill's */
		console_home_enter(ui);
		dirty = true;
	}
	return dirty;
}

static bool
console_drill_key(struct console_ui *ui, int ch)
{
	if (ch == 'q' || ch == 'Q') {
		console_drill_quit(ui);
		return true;
	}
	return false;
}

static void
console_drill_draw(struct console_ui *ui)
{
	console_draw_drill_layout(ui);
}

static const struct console_key console_drill_keys[] = {
	{ "q", "quit (a running drill is stopped and torn down)" },
	{ "?", "this help" },
};

const struct console_screen console_screen_drill = {
	.name = "drill",
	.keys_hint = "q quit  ? help",
	.keys = console_drill_keys,
	.nkeys = sizeof console_drill_keys / sizeof console_drill_keys[0],
	.key = console_drill_key,
	.tick = console_drill_tick,
	.draw = console_drill_draw,
	.quit = console_drill_quit,
	.fd = console_drill_fd,
};
