/*
 * screen_replay.c - the replay screen: a recorded run (core's struct
 * replay: its beats and the state after each) shown beat by beat in the
 * live drill's layout; play / pause, step, markers, speed.  Needs no
 * Docker.  The screen's state is struct console_replay_screen (one,
 * below).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* Replay speeds ('+' / '-'); index 2 is real time. */
static const double console_speeds[] = { 0.25, 0.5, 1, 2, 4, 8, 16 };
static const char *const console_speed_names[] = {
	"0.25", "0.5", "1", "2", "4", "8", "16",
};
#define CONSOLE_NSPEEDS ((int)(sizeof console_speeds / sizeof console_speeds[0]))

/* The replay screen's state. */
struct console_replay_screen {
	struct console_view view;   /* what the drill layout shows */
	struct replay *rp;          /* the run (owned), or NULL */
	size_t pos;                 /* current beat */
	bool playing;
	int speed;                  /* index into console_speeds */
	uint64_t next_beat_ns;      /* playing: when to step */
	struct drill_result rres;   /* summary at pos */
	struct console_pane pane;   /* the event pane (pane.c) */
	const struct console_screen *back;   /* q returns there, or NULL */
};

static struct console_replay_screen console_replay_st;

/* The status line's keys ("q home" or "q quit"), set at each draw. */
static char console_replay_hint[48] = "spc . , jk / q quit ? help";
/* Its '?' line for q, likewise. */
static char console_replay_qhelp[32] = "quit";

/* Show the replay's state at beat pos (the reducer's, as live), the
 * recorded verdict's time to kill and reason, the beats up to pos. */
static void
console_replay_show(struct console_replay_screen *r)
{
	const struct replay *rp = r->rp;
	struct console_view *v = &r->view;
	struct drill_result *res = &r->rres;
	size_t first, n;

	if (rp->nbeats == 0)
		replay_initial_state(rp, &v->st);
	else
		v->st = rp->states[r->pos];
	for (size_t i = 0; i < POLICY_MAX_LEVERS; i++)
		console_copy(v->lev_name[i], sizeof v->lev_name[i],
		    rp->lever_names[i]);
	v->pose_override = v->st.pose;
	v->done = v->st.verdict != DRILL_VERDICT_NONE;
	v->have_result = v->done;
	memset(res, 0, sizeof *res);
	res->verdict = v->st.verdict;
	res->time_to_kill_ms = rp->time_to_kill_ms;
	console_copy(res->verdict_reason, sizeof res->verdict_reason,
	    rp->verdict_reason);
	v->res = res;
	/* the event list: the beats up to pos */
	n = rp->nbeats == 0 ? 0 : r->pos + 1;
	first = n > CONSOLE_HIST ? n - CONSOLE_HIST : 0;
	v->hhead = 0;
	v->hcount = n - first;
	v->hbase = first;
	for (size_t i = first; i < n; i++)
		v->hist[i - first] = rp->beats[i];
	v->tl.shown = n;             /* the timeline's position */
	v->tl.known = rp->nbeats;
}

/* Open rp (owned from now on) on the replay screen. */
void
console_replay_enter(struct console_ui *ui, struct replay *rp)
{
	struct console_replay_screen *r = &console_replay_st;

	console_view_reset(&r->view);
	console_pane_reset(&r->pane);
	r->view.pane = &r->pane;
	replay_free(r->rp);
	r->rp = rp;
	r->view.pace_ms = rp->pace_ms;   /* the title says PACED */
	r->pos = 0;
	r->playing = ui->o != NULL && ui->o->present_ms > 0;  /* --present */
	r->speed = 2;
	r->back = NULL;
	console_timeline_reset(&r->view.tl);
	console_copy(r->view.run_id, sizeof r->view.run_id, rp->run_id);
	console_copy(r->view.policy, sizeof r->view.policy, rp->policy);
	console_copy(r->view.model, sizeof r->view.model, rp->model);
	console_copy(r->view.seed, sizeof r->view.seed, rp->seed);
	console_screen_open(ui, &console_screen_replay);
	console_replay_goto(0);
}

/* console_replay_enter; q and Esc go back to screen back. */
void
console_replay_enter_from(struct console_ui *ui, struct replay *rp,
    const struct console_screen *back)
{
	console_replay_enter(ui, rp);
	console_replay_st.back = back;
}

/* Free the replay the screen holds, if any. */
void
console_replay_close(void)
{
	replay_free(console_replay_st.rp);
	console_replay_st.rp = NULL;
	console_pane_reset(&console_replay_st.pane);
}

/* How long beat i stays before i+1 when playing at speed x: the real gap,
 * kept between 150 ms and 1.5 s so the story can be followed, a marker
 * beat held longer (core's pace_gap_ns). */
uint64_t
console_replay_gap(const struct replay *rp, size_t i, double x)
{
	if (i >= rp->nbeats)
		return pace_gap_ns(0, 0, DRILL_BEAT_PHASE, x);
	return pace_gap_ns(rp->beats[i].t_ns, i + 1 < rp->nbeats ?
	    rp->beats[i + 1].t_ns : rp->beats[i].t_ns, rp->beats[i].kind, x);
}

/* Show beat pos (clamped to the last); playing, the next step is one
 * gap from now. */
void
console_replay_goto(size_t pos)
{
	struct console_replay_screen *r = &console_replay_st;

	if (r->rp->nbeats == 0)
		pos = 0;
	else if (pos >= r->rp->nbeats)
		pos = r->rp->nbeats - 1;
	r->pos = pos;
	console_replay_show(r);
	if (r->playing)
		r->next_beat_ns = util_mono_ns() + console_replay_gap(r->rp,
		    r->pos, console_speeds[r->speed]);
}

/* q: back home (the replay is let go) or quit. */
static void
console_replay_quit(struct console_ui *ui)
{
	if (console_replay_st.back != NULL) {
		/* opened from a finished live drill ('r'): back to it */
		const struct console_screen *back = console_replay_st.back;

		console_replay_st.back = NULL;
		console_replay_close();
		console_screen_open(ui, back);
		return;
	}
	if (ui->from_home) {
		console_replay_close();
		console_home_enter(ui);
		return;
	}
	ui->quit = true;
}

/* Play, step, jump between markers, change speed, quit. */
static bool
console_replay_key(struct console_ui *ui, int ch)
{
	struct console_replay_screen *r = &console_replay_st;
	size_t last = r->rp->nbeats ? r->rp->nbeats - 1 : 0;
	struct console_pane_src src = { &r->view, r->rp, r->rp->run_id,
	    r->rp->run_dir, console_replay_goto };

	if (console_pane_key(ui, &r->pane, &src, ch))
		return true;
	switch (ch) {
	case ' ':
		r->playing = !r->playing;
		if (r->playing && r->pos >= last)
			r->pos = 0;   /* play again from the start */
		console_replay_goto(r->pos);
		return true;
	case '.':
	case KEY_RIGHT:
	case 'l':
		console_replay_goto(r->pos + 1);
		return true;
	case ',':
	case KEY_LEFT:
	case 'h':
		console_replay_goto(r->pos > 0 ? r->pos - 1 : 0);
		return true;
	case ']':
		console_replay_goto(replay_marker(r->rp, r->pos, 1));
		return true;
	case '[':
		console_replay_goto(replay_marker(r->rp, r->pos, -1));
		return true;
	case '+':
	case '=':
		if (r->speed + 1 < CONSOLE_NSPEEDS)
			r->speed++;
		return true;
	case '-':
	case '_':
		if (r->speed > 0)
			r->speed--;
		return true;
	case 'g':
		console_replay_goto(0);
		return true;
	case 'G':
		r->playing = false;
		console_replay_goto(last);
		return true;
	case 'q':
	case 'Q':
		console_replay_quit(ui);
		return true;
	default:
		return false;
	}
}

/* Playing: step when the beat's time is up; stop at the last one. */
static bool
console_replay_tick(struct console_ui *ui, uint64_t now)
{
	struct console_replay_screen *r = &console_replay_st;

	(void)ui;
	if (!r->playing || now < r->next_beat_ns)
		return false;
	if (r->pos + 1 >= r->rp->nbeats) {
		r->playing = false;
		return true;
	}
	console_replay_goto(r->pos + 1);
	return true;
}

/* Playing: the loop wakes up for the next step. */
static uint64_t
console_replay_wake(const struct console_ui *ui)
{
	(void)ui;
	return console_replay_st.playing ? console_replay_st.next_beat_ns : 0;
}

/* The status line: the verdict, else where the replay is. */
static void
console_replay_status(struct console_ui *ui, char *out, size_t n, int *pair)
{
	const struct console_replay_screen *r = &console_replay_st;
	const struct replay *rp = r->rp;

	(void)ui;
	*pair = 0;
	if (!(rp->chain_ok && rp->sig == REPLAY_SIG_OK && rp->verify_ok) &&
	    r->view.st.verdict != DRILL_VERDICT_NONE) {
		/* a run that does not verify: its evidence says what it
		 * says, never in green, and the line says so first */
		char v[560];

		if (console_view_verdict(&r->view, v, sizeof v, pair)) {
			snprintf(out, n, "NOT VERIFIED (%s) - recorded %s",
			    rp->badge, v);
			*pair = CP_RED;
			return;
		}
	}
	if (console_view_verdict(&r->view, out, n, pair))
		return;
	snprintf(out, n, "replay: beat %zu/%zu  +%.3fs  %s x%s",
	    rp->nbeats > 0 ? r->pos + 1 : 0, rp->nbeats, rp->nbeats > 0 ?
	    (double)rp->beats[r->pos].t_rel_ns / 1e9 : 0.0,
	    r->playing ? "playing" : "paused",
	    console_speed_names[r->speed]);
}

/* The drill layout at the current beat, with the beat counter and the
 * verification badge. */
static void
console_replay_draw(struct console_ui *ui)
{
	struct console_replay_screen *r = &console_replay_st;
	char title[64];

	snprintf(title, sizeof title, "events (beat %zu/%zu)",
	    r->rp->nbeats ? r->pos + 1 : 0, r->rp->nbeats);
	snprintf(console_replay_hint, sizeof console_replay_hint,
	    "spc . , jk / q %s ? help", ui->from_home ? "home" : "quit");
	snprintf(console_replay_qhelp, sizeof console_replay_qhelp, "%s",
	    ui->from_home ? "back home" : "quit");
	console_draw_drill_layout(ui, &r->view, title, r->rp);
	console_pane_overlay(ui, &r->pane);
}

static const struct console_key console_replay_keys[] = {
	{ "space", "play / pause" },
	{ ". l right", "next beat" },
	{ ", h left", "previous beat" },
	{ "]", "next marker (bait, lever, breach, leak, orphan)" },
	{ "[", "previous marker" },
	{ "+ / -", "faster / slower" },
	{ "g / G", "first / last beat" },
	{ "j k up down", "events: select a newer / older one (scroll)" },
	{ "pgup pgdn", "events: a page older / newer" },
	{ "home / end", "events: the oldest / follow the newest again" },
	{ "enter", "events: the selected one's evidence (pager)" },
	{ "/ n N", "search the events' text, next / previous match" },
	{ ":N", "go to beat N" },
	{ "y / Y", "copy the run id / run dir (OSC 52)" },
	{ "esc", "back: close the pager or prompt, follow again" },
	{ "q", console_replay_qhelp },
	{ "?", "this help" },
};


const struct console_screen console_screen_replay = {
	.name = "replay",
	.keys_hint = console_replay_hint,
	.keys = console_replay_keys,
	.nkeys = sizeof console_replay_keys / sizeof console_replay_keys[0],
	.state = &console_replay_st,
	.key = console_replay_key,
	.tick = console_replay_tick,
	.draw = console_replay_draw,
	.quit = console_replay_quit,
	.fd = console_no_fd,
	.status = console_replay_status,
	.wake = console_replay_wake,
};
