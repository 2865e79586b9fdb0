/*
 * pace.c - pacing for an audience: how long the console shows a beat in
 * a replay, the live display queue that holds marker beats, the marker
 * timeline's columns.  Pure (no I/O, no clock of its own, no terminal):
 * the callers pass the time.  Display only: no drill waits on any of it.
 */
#include <string.h>

#include "core.h"

bool
pace_is_marker(enum drill_beat_kind k)
{
	switch (k) {
	case DRILL_BEAT_BAIT:
	case DRILL_BEAT_LEVER_FIRED:
	case DRILL_BEAT_LEVER_VERIFIED:
	case DRILL_BEAT_LEVER_FAILED:
	case DRILL_BEAT_BREACH:
	case DRILL_BEAT_LEAK:
	case DRILL_BEAT_ORPHAN:
	case DRILL_BEAT_VERDICT:
		return true;
	default:
		return false;
	}
}

/* A marker's hold at speed x: PACE_HOLD_NS / x, at least
 * PACE_HOLD_MIN_NS. */
static uint64_t
pace_hold_ns(double x)
{
	double h = (double)PACE_HOLD_NS / x;

	return h < (double)PACE_HOLD_MIN_NS ? PACE_HOLD_MIN_NS : (uint64_t)h;
}

uint64_t
pace_gap_ns(uint64_t t_ns, uint64_t next_ns, enum drill_beat_kind k,
    double x)
{
	uint64_t d = next_ns > t_ns ? next_ns - t_ns : 0, g;

	if (!(x > 0))
		x = 1;
	if (d < PACE_GAP_MIN_NS)
		d = PACE_GAP_MIN_NS;
	if (d > PACE_GAP_MAX_NS)
		d = PACE_GAP_MAX_NS;
	g = (uint64_t)((double)d / x);
	if (pace_is_marker(k) && g < pace_hold_ns(x))
		g = pace_hold_ns(x);
	return g;
}

/* ---- the live display queue ---------------------------------------- */

void
pace_queue_init(struct pace_queue *q)
{
	q->head = q->count = 0;
	q->hold_until = 0;
	q->flush = false;
}

bool
pace_queue_push(struct pace_queue *q, const struct drill_beat *b,
    uint64_t now)
{
	size_t i;

	if (q->count == PACE_QUEUE_MAX)
		return false;
	i = (q->head + q->count) % PACE_QUEUE_MAX;
	q->q[i] = *b;
	q->arrived[i] = now;
	q->count++;
	if (b->kind == DRILL_BEAT_VERDICT)
		q->flush = true;   /* the verdict is shown as soon as it came */
	return true;
}

bool
pace_queue_shift(struct pace_queue *q, struct drill_beat *out)
{
	if (q->count == 0)
		return false;
	*out = q->q[q->head];
	q->head = (q->head + 1) % PACE_QUEUE_MAX;
	q->count--;
	return true;
}

bool
pace_queue_pop(struct pace_queue *q, uint64_t now, struct drill_beat *out)
{
	uint64_t arrived, hold, deadline;

	if (q->count == 0 || (!q->flush && now < q->hold_until))
		return false;
	arrived = q->arrived[q->head];
	(void)pace_queue_shift(q, out);
	q->hold_until = 0;
	if (q->flush || !pace_is_marker(out->kind))
		return true;
	/* hold it, but never let the screen fall more than
	 * PACE_LIVE_LAG_NS behind the beat's arrival */
	hold = PACE_HOLD_NS;
	deadline = arrived + PACE_LIVE_LAG_NS;
	if (now + hold > deadline)
		hold = deadline > now ? deadline - now : 0;
	q->hold_until = now + hold;
	return true;
}

void
pace_queue_flush(struct pace_queue *q)
{
	q->flush = true;
}

uint64_t
pace_queue_due(const struct pace_queue *q)
{
	if (q->count == 0)
		return 0;
	if (q->flush || q->hold_until == 0)
		return 1;
	return q->hold_until;
}

/* ---- the marker timeline ------------------------------------------- */

int
pace_timeline_col(size_t idx, size_t total, int w)
{
	if (w <= 1 || total <= 1)
		return 0;
	if (idx >= total)
		idx = total - 1;
	return (int)((double)idx * (double)(w - 1) / (double)(total - 1) +
	    0.5);
}

char
pace_timeline_glyph(enum drill_beat_kind k)
{
	switch (k) {
	case DRILL_BEAT_BAIT: return 'B';
	case DRILL_BEAT_LEVER_FIRED: return 'f';
	case DRILL_BEAT_LEVER_VERIFIED: return 'v';
	case DRILL_BEAT_LEVER_FAILED: return '!';
	case DRILL_BEAT_BREACH: return 'X';
	case DRILL_BEAT_LEAK: return 'L';
	case DRILL_BEAT_ORPHAN: return 'O';
	case DRILL_BEAT_VERDICT: return 'V';
	default: return 0;
	}
}

/* How much a timeline letter weighs when two share a column (0: none). */
static int
pace_glyph_rank(char c)
{
	static const char order[] = "VfvB!LOX";   /* lightest first */
	const char *p = c != 0 ? strchr(order, c) : NULL;

	return p != NULL ? (int)(p - order) + 1 : 0;
}

void
pace_timeline_put(char *cells, int w, size_t idx, size_t total,
    enum drill_beat_kind k)
{
	char g = pace_timeline_glyph(k);
	int col;

	if (g == 0 || w <= 0)
		return;
	col = pace_timeline_col(idx, total, w);
	if (pace_glyph_rank(g) > pace_glyph_rank(cells[col]))
		cells[col] = g;
}
