/*
 * test_pace.c - core/pace.c, the console's pacing (no terminal, no
 * Docker): how long a replay shows a beat (pace_gap_ns, what
 * console_replay_gap and the asciicast export use), the live display
 * queue (a marker holds the beats after it, the hold shrinks when the
 * queue falls behind, the verdict flushes everything, a full queue still
 * takes beats), and where the timeline puts its letters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"

#define MS 1000000ull

static struct drill_beat
beat(enum drill_beat_kind k, uint64_t t)
{
	struct drill_beat b;

	memset(&b, 0, sizeof b);
	b.kind = k;
	b.t_ns = t;
	b.t_rel_ns = t;
	b.lever = -1;
	return b;
}

static void
test_markers(void **state)
{
	(void)state;
	assert_true(pace_is_marker(DRILL_BEAT_BAIT));
	assert_true(pace_is_marker(DRILL_BEAT_LEVER_FIRED));
	assert_true(pace_is_marker(DRILL_BEAT_LEVER_VERIFIED));
	assert_true(pace_is_marker(DRILL_BEAT_LEVER_FAILED));
	assert_true(pace_is_marker(DRILL_BEAT_BREACH));
	assert_true(pace_is_marker(DRILL_BEAT_LEAK));
	assert_true(pace_is_marker(DRILL_BEAT_ORPHAN));
	assert_true(pace_is_marker(DRILL_BEAT_VERDICT));
	assert_false(pace_is_marker(DRILL_BEAT_AGENT));
	assert_false(pace_is_marker(DRILL_BEAT_TOOL));
	assert_false(pace_is_marker(DRILL_BEAT_PHASE));
	assert_false(pace_is_marker(DRILL_BEAT_BLOCKED));
	assert_false(pace_is_marker(DRILL_BEAT_SERVICE));
}

/* The replay's gaps: ordinary beats the real gap clamped to 0.15..1.5 s
 * over the speed; markers at least 1.2 s over the speed, never under
 * 0.3 s. */
static void
test_gap(void **state)
{
	(void)state;
	uint64_t t = 5000 * MS;

	/* ordinary beats, as before */
	assert_int_equal(pace_gap_ns(t, t, DRILL_BEAT_AGENT, 1), 150 * MS);
	assert_int_equal(pace_gap_ns(t, t + 400 * MS, DRILL_BEAT_TOOL, 1),
	    400 * MS);
	assert_int_equal(pace_gap_ns(t, t + 9000 * MS, DRILL_BEAT_PHASE, 1),
	    1500 * MS);
	assert_int_equal(pace_gap_ns(t, t + 400 * MS, DRILL_BEAT_TOOL, 2),
	    200 * MS);
	assert_int_equal(pace_gap_ns(t + 10, t, DRILL_BEAT_AGENT, 1),
	    150 * MS);   /* out of order: the floor */
	/* markers 0.07 ms apart (the bait -> fired of a real run) */
	assert_int_equal(pace_gap_ns(t, t + 72000, DRILL_BEAT_BAIT, 1),
	    PACE_HOLD_NS);
	assert_int_equal(pace_gap_ns(t, t + 72000, DRILL_BEAT_LEVER_FIRED, 2),
	    PACE_HOLD_NS / 2);
	assert_int_equal(pace_gap_ns(t, t, DRILL_BEAT_LEVER_VERIFIED, 0.5),
	    PACE_HOLD_NS * 2);
	/* never under the visible minimum, at any speed */
	assert_int_equal(pace_gap_ns(t, t, DRILL_BEAT_BREACH, 16),
	    PACE_HOLD_MIN_NS);
	assert_true(pace_gap_ns(t, t, DRILL_BEAT_AGENT, 16) <
	    PACE_HOLD_MIN_NS);
	/* a marker with a longer real gap keeps it (clamped) */
	assert_int_equal(pace_gap_ns(t, t + 1400 * MS, DRILL_BEAT_ORPHAN, 1),
	    1400 * MS);
	assert_int_equal(pace_gap_ns(t, t + 60000 * MS, DRILL_BEAT_LEAK, 1),
	    1500 * MS);
	/* a bad speed reads as x1 */
	assert_int_equal(pace_gap_ns(t, t, DRILL_BEAT_BAIT, 0), PACE_HOLD_NS);
	assert_int_equal(pace_gap_ns(t, t, DRILL_BEAT_BAIT, -3), PACE_HOLD_NS);
}

/* Live: bait, fired, blocked, verified arrive within a millisecond; the
 * screen shows the bait for the hold, then fired for the hold (blocked
 * rides behind it), then verified. */
static struct pace_queue q;

static void
test_queue_hold(void **state)
{
	(void)state;
	struct drill_beat b, in[4];
	uint64_t now = 1000 * MS;

	pace_queue_init(&q);
	assert_int_equal(pace_queue_due(&q), 0);
	assert_false(pace_queue_pop(&q, now, &b));
	in[0] = beat(DRILL_BEAT_AGENT, 1);
	in[1] = beat(DRILL_BEAT_BAIT, 2);
	in[2] = beat(DRILL_BEAT_LEVER_FIRED, 3);
	in[3] = beat(DRILL_BEAT_BLOCKED, 4);
	for (int i = 0; i < 4; i++)
		assert_true(pace_queue_push(&q, &in[i], now));
	assert_int_equal(pace_queue_due(&q), 1);   /* due now */
	assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(b.kind, DRILL_BEAT_AGENT);
	assert_true(pace_queue_pop(&q, now, &b));   /* no hold after agent */
	assert_int_equal(b.kind, DRILL_BEAT_BAIT);
	/* the bait holds the rest */
	assert_false(pace_queue_pop(&q, now, &b));
	assert_false(pace_queue_pop(&q, now + PACE_HOLD_NS - 1, &b));
	assert_int_equal(pace_queue_due(&q), now + PACE_HOLD_NS);
	now += PACE_HOLD_NS;
	assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(b.kind, DRILL_BEAT_LEVER_FIRED);
	b = beat(DRILL_BEAT_LEVER_VERIFIED, 5);
	assert_true(pace_queue_push(&q, &b, now));
	assert_false(pace_queue_pop(&q, now + 10 * MS, &b));
	now += PACE_HOLD_NS;
	assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(b.kind, DRILL_BEAT_BLOCKED);
	assert_true(pace_queue_pop(&q, now, &b));   /* blocked holds nothing */
	assert_int_equal(b.kind, DRILL_BEAT_LEVER_VERIFIED);
	assert_int_equal(q.count, 0);
	assert_int_equal(pace_queue_due(&q), 0);
}

/* Behind by more than PACE_LIVE_LAG_NS: the holds shrink to catch up;
 * a beat that old is not held at all. */
static void
test_queue_lag(void **state)
{
	(void)state;
	struct drill_beat b;
	uint64_t t0 = 50 * 1000 * MS, now;

	pace_queue_init(&q);
	for (int i = 0; i < 6; i++) {
		b = beat(DRILL_BEAT_LEVER_FIRED, (uint64_t)i);
		assert_true(pace_queue_push(&q, &b, t0));
	}
	now = t0;
	assert_true(pace_queue_pop(&q, now, &b));        /* held 1.2 s */
	now = pace_queue_due(&q);
	assert_int_equal(now, t0 + PACE_HOLD_NS);
	assert_true(pace_queue_pop(&q, now, &b));        /* held 1.2 s */
	now = pace_queue_due(&q);
	assert_int_equal(now, t0 + 2 * PACE_HOLD_NS);
	assert_true(pace_queue_pop(&q, now, &b));        /* up to the lag */
	assert_int_equal(pace_queue_due(&q), t0 + PACE_LIVE_LAG_NS);
	now = t0 + PACE_LIVE_LAG_NS;
	/* the rest arrived 3 s ago: no hold */
	for (int i = 0; i < 3; i++)
		assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(q.count, 0);
}

/* The verdict is shown as soon as it is in: everything before it goes at
 * once; pace_queue_flush (the drill ended) does the same. */
static void
test_queue_verdict(void **state)
{
	(void)state;
	struct drill_beat b;
	uint64_t now = 7 * 1000 * MS;
	int n = 0;

	pace_queue_init(&q);
	b = beat(DRILL_BEAT_BAIT, 1);
	assert_true(pace_queue_push(&q, &b, now));
	assert_true(pace_queue_pop(&q, now, &b));
	b = beat(DRILL_BEAT_LEVER_FIRED, 2);
	assert_true(pace_queue_push(&q, &b, now));
	assert_false(pace_queue_pop(&q, now + MS, &b));   /* the bait holds */
	b = beat(DRILL_BEAT_VERDICT, 3);
	assert_true(pace_queue_push(&q, &b, now + MS));
	assert_int_equal(pace_queue_due(&q), 1);
	while (pace_queue_pop(&q, now + MS, &b))
		n++;
	assert_int_equal(n, 2);
	assert_int_equal(b.kind, DRILL_BEAT_VERDICT);

	pace_queue_init(&q);
	b = beat(DRILL_BEAT_BREACH, 1);
	assert_true(pace_queue_push(&q, &b, now));
	assert_true(pace_queue_pop(&q, now, &b));
	b = beat(DRILL_BEAT_PHASE, 2);
	assert_true(pace_queue_push(&q, &b, now));
	assert_false(pace_queue_pop(&q, now, &b));
	pace_queue_flush(&q);
	assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(b.kind, DRILL_BEAT_PHASE);
}

/* A full queue refuses a push (nothing lost: the caller shifts one out,
 * whatever its hold, and pushes again); order is kept. */
static void
test_queue_full(void **state)
{
	(void)state;
	struct drill_beat b;
	uint64_t now = 1;

	pace_queue_init(&q);
	for (size_t i = 0; i < PACE_QUEUE_MAX; i++) {
		b = beat(DRILL_BEAT_BAIT, i);
		assert_true(pace_queue_push(&q, &b, now));
	}
	b = beat(DRILL_BEAT_AGENT, 99999);
	assert_false(pace_queue_push(&q, &b, now));
	assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(b.t_ns, 0);
	assert_false(pace_queue_pop(&q, now, &b));       /* held */
	assert_true(pace_queue_shift(&q, &b));           /* taken anyway */
	assert_int_equal(b.t_ns, 1);
	b = beat(DRILL_BEAT_AGENT, 99999);
	assert_true(pace_queue_push(&q, &b, now));
	pace_queue_flush(&q);
	for (size_t i = 2; i < PACE_QUEUE_MAX; i++) {
		assert_true(pace_queue_pop(&q, now, &b));
		assert_int_equal(b.t_ns, i);
	}
	assert_true(pace_queue_pop(&q, now, &b));
	assert_int_equal(b.t_ns, 99999);
	assert_false(pace_queue_shift(&q, &b));
}

/* The timeline: columns by beat index, the heavier letter wins a column. */
static void
test_timeline(void **state)
{
	(void)state;
	char cells[10];

	assert_int_equal(pace_timeline_col(0, 32, 10), 0);
	assert_int_equal(pace_timeline_col(31, 32, 10), 9);
	assert_int_equal(pace_timeline_col(99, 32, 10), 9);
	assert_int_equal(pace_timeline_col(5, 1, 10), 0);
	assert_int_equal(pace_timeline_col(5, 11, 11), 5);
	assert_int_equal(pace_timeline_glyph(DRILL_BEAT_BAIT), 'B');
	assert_int_equal(pace_timeline_glyph(DRILL_BEAT_LEVER_FIRED), 'f');
	assert_int_equal(pace_timeline_glyph(DRILL_BEAT_LEVER_VERIFIED), 'v');
	assert_int_equal(pace_timeline_glyph(DRILL_BEAT_ORPHAN), 'O');
	assert_int_equal(pace_timeline_glyph(DRILL_BEAT_TOOL), 0);
	memset(cells, 0, sizeof cells);
	pace_timeline_put(cells, 10, 0, 10, DRILL_BEAT_AGENT);
	assert_int_equal(cells[0], 0);
	pace_timeline_put(cells, 10, 3, 10, DRILL_BEAT_LEVER_FIRED);
	pace_timeline_put(cells, 10, 3, 10, DRILL_BEAT_BAIT);
	pace_timeline_put(cells, 10, 3, 10, DRILL_BEAT_LEVER_VERIFIED);
	assert_int_equal(cells[3], 'B');
	pace_timeline_put(cells, 10, 3, 10, DRILL_BEAT_BREACH);
	assert_int_equal(cells[3], 'X');
	pace_timeline_put(cells, 10, 9, 10, DRILL_BEAT_VERDICT);
	pace_timeline_put(cells, 10, 9, 10, DRILL_BEAT_LEVER_VERIFIED);
	assert_int_equal(cells[9], 'v');
	pace_timeline_put(cells, 0, 9, 10, DRILL_BEAT_BAIT);   /* no track */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_queue_hold),
		cmocka_unit_test(test_queue_lag),
		cmocka_unit_test(test_queue_verdict),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_timeline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
