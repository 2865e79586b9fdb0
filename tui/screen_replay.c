/*
 * screen_replay.c - the replay screen: a recorded run (core's struct
 * replay: its beats and the state after each) shown beat by beat in the
 * live drill's layout; play / pause, step, markers, speed.  Needs no
 * Docker.
 */
#include <stdint.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* Replay speeds ('+' / '-'); index 2 is real time. */
static const double console_speeds[] = { 0.25, 0.5, 1, 2, 4, 8, 16 };
const char *const console_speed_names[] = {
	"0.25", "0.5", "1", "2", "4", "8", "16",
};
#define CONSOLE_NSPEEDS ((int)(sizeof console_speeds / sizeof console_speeds[0]))

/* Show the replay's state at beat pos (the reducer's, as live), the
 * recorded verdict's time to kill and reason, the beats up to pos. */
static void
console_replay_show(struct console_ui *ui)
{
	const struct replay *rp = ui->rp;
	size_t first, n;
	struct drill_result *r = &ui->rres;

	if (rp->nbeats == 0)
		replay_initial_state(rp, &ui->st);
	else
		ui->st = rp->states[ui->pos];
	for (size_t i = 0; i < POLICY_MAX_LEVERS; i++)
		console_copy(ui->lev_name[i], sizeof ui->lev_name[i],
		    rp->lever_names[i]);
	ui->pose_override = ui->st.pose;
	ui->done = ui->st.verdict != DRILL_VERDICT_NONE;
	ui->have_result = ui->done;
	memset(r, 0, sizeof *r);
	r->verdict = ui->st.verdict;
	r->time_to_kill_ms = rp->time_to_kill_ms;
	console_copy(r->verdict_reason, sizeof r->verdict_reason,
	    rp->verdict_reason);
	ui->res = r;
	/* the event list: the beats up to pos */
	n = rp->nbeats == 0 ? 0 : ui->pos + 1;
	first = n > CONSOLE_HIST ? n - CONSOLE_HIST : 0;
	ui->hhead = 0;
	ui->hcount = n - first;
	for (size_t i = first; i < n; i++)
		ui->hist[i - first] = rp->beats[i];
}

/* Open rp (owned from now on) on the replay screen. */
void
console_replay_enter(struct console_ui *ui, struct replay *rp)
{
	console_view_reset(ui);
	ui->rp = rp;
	ui->pos = 0;
	ui->playing = false;
	ui->speed = 2;
	console_copy(ui->run_id, sizeof ui->run_id, rp->run_id);
	console_copy(ui->policy, sizeof ui->policy, rp->policy);
	console_copy(ui->model, sizeof ui->model, rp->model);
	console_copy(ui->seed, sizeof ui->seed, rp->seed);
	ui->screen = &console_screen_replay;
	console_replay_show(ui);
}

/* How long beat i stays before i+1 when playing at speed x: the real gap,
 * kept between 150 ms and 1.5 s so the story can be followed. */
uint64_t
console_replay_gap(const struct replay *rp, size_t i, double x)
{
	uint64_t d = 0;

	if (i + 1 < rp->nbeats && rp->beats[i + 1].t_ns > rp->beats[i].t_ns)
		d = rp->beats[i + 1].t_ns - rp->beats[i].t_ns;
	if (d < 150000000ull)
		d = 150000000ull;
	if (d > 1500000000ull)
		d = 1500000000ull;
	return (uint64_t)((double)d / x);
}

/* Show beat pos (clamped to the last); playing, the next step is one
 * gap from now. */
void
console_replay_goto(struct console_ui *ui, size_t pos)
{
	if (ui->rp->nbeats == 0)
		pos = 0;
	else if (pos >= ui->rp->nbeats)
		pos = ui->rp->nbeats - 1;
	ui->pos = pos;
	console_replay_show(ui);
	if (ui->playing)
		ui->next_beat_ns = util_mono_ns() + console_replay_gap(ui->rp,
		    ui->pos, console_speeds[ui->speed]);
}

static void
console_replay_quit(struct console_ui *ui)
{
	if (ui->from_home) {
		console_home_enter(ui);
		return;
	}
	ui->quit = true;
}

static bool
console_replay_key(struct console_ui *ui, int ch)
{
	size_t last = ui->rp->nbeats ? ui->rp->nbeats - 1 : 0;

	switch (ch) {
	case ' ':
		ui->playing = !ui->playing;
		if (ui->playing && ui->pos >= last)
			ui->pos = 0;   /* play again from the start */
		console_replay_goto(ui, ui->pos);
		return true;
	case '.':
	case KEY_RIGHT:
	case 'l':
		console_replay_goto(ui, ui->pos + 1);
		return true;
	case ',':
	case KEY_LEFT:
	case 'h':
		console_replay_goto(ui, ui->pos > 0 ? ui->pos - 1 : 0);
		return true;
	case ']':
		console_replay_goto(ui, replay_marker(ui->rp, ui->pos, 1));
		return true;
	case '[':
		console_replay_goto(ui, replay_marker(ui->rp, ui->pos, -1));
		return true;
	case '+':
	case '=':
		if (ui->speed + 1 < CONSOLE_NSPEEDS)
			ui->speed++;
		return true;
	case '-':
	case '_':
		if (ui->speed > 0)
			ui->speed--;
		return true;
	case 'g':
	case KEY_HOME:
		console_replay_goto(ui, 0);
		return true;
	case 'G':
	case KEY_END:
		ui->playing = false;
		console_replay_goto(ui, last);
		return true;
	case 'q':
	case 'Q':
		console_replay_quit(ui);
		return true;
	default:
		return false;
	}
}

static bool
console_replay_tick(struct console_ui *ui, uint64_t now)
{
	if (!ui->playing || now < ui->next_beat_ns)
		return false;
	if (ui->pos + 1 >= ui->rp->nbeats) {
		ui->playing = false;
		return true;
	}
	console_replay_goto(ui, ui->pos + 1);
	return true;
}

static void
console_replay_draw(struct console_ui *ui)
{
	console_draw_drill_layout(ui);
}

static const struct console_key console_replay_keys[] = {
	{ "space", "play / pause" },
	{ ". or right", "next beat" },
	{ ", or left", "previous beat" },
	{ "]", "next marker (bait, lever, breach, leak, orphan)" },
	{ "[", "previous marker" },
	{ "+ / -", "faster / slower" },
	{ "g / G", "start / end" },
	{ "q", "back (or quit)" },
	{ "?", "this help" },
};

const struct console_screen console_screen_replay = {
	.name = "replay",
	.keys_hint = "spc . , ] [ q ? help",
	.keys = console_replay_keys,
	.nkeys = sizeof console_replay_keys / sizeof console_replay_keys[0],
	.key = console_replay_key,
	.tick = console_replay_tick,
	.draw = console_replay_draw,
	.quit = console_replay_quit,
	.fd = console_no_fd,
};
