/*
 * test_chart.c - the trial's pictures as cells (core/chart.c): a rate's
 * bar with its interval marked, the time-to-kill histogram's bins and
 * its horizontal bars, in UTF-8 and ASCII; and the recorded-dir age
 * words (core/recorded.c).
 */
#include "internal.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The cells of b as one letter each: ' ' empty, '#' solid, '=' interval
 * up to the estimate, '-' interval after it. */
static void
cells(const struct chart_bar *b, char *out)
{
	static const char l[] = " #=-";

	for (int i = 0; i < b->w; i++)
		out[i] = l[b->cell[i]];
	out[b->w] = '\0';
}

static void
test_bar_cells(void **st)
{
	struct chart_bar b;
	char s[CHART_MAX_CELLS + 1];
	double lo, hi;
	struct errbuf e = { 0 };

	(void)st;
	/* 17/17: [0.8049, 1]: 16 solid cells, then the interval up to p */
	assert_int_equal(stats_clopper_pearson(17, 17, 0.95, &lo, &hi, &e), 0);
	assert_int_equal(chart_bar(1.0, lo, hi, 20, &b), 0);
	cells(&b, s);
	assert_string_equal(s, "################====");
	assert_int_equal(b.lo_cell, 16);
	assert_int_equal(b.hi_cell, 19);
	/* 0/17: [0, 0.1951]: only the interval after p, 4 cells */
	assert_int_equal(stats_clopper_pearson(0, 17, 0.95, &lo, &hi, &e), 0);
	assert_int_equal(chart_bar(0.0, lo, hi, 20, &b), 0);
	cells(&b, s);
	assert_string_equal(s, "----                ");
	/* 5/10: [0.1871, 0.8129] in 10 cells: cells 1..8 are the interval,
	 * split at the estimate by the cells' middles */
	assert_int_equal(chart_bar(0.5, 0.1871, 0.8129, 10, &b), 0);
	cells(&b, s);
	assert_string_equal(s, "#====---- ");
	/* a narrow interval inside one cell still shows that cell */
	assert_int_equal(chart_bar(0.55, 0.54, 0.56, 10, &b), 0);
	cells(&b, s);
	assert_string_equal(s, "#####=    ");
	/* out of range values are clamped, lo > p moved to p */
	assert_int_equal(chart_bar(1.5, 2.0, -1.0, 4, &b), 0);
	cells(&b, s);
	assert_string_equal(s, "###=");
	/* bad input */
	assert_int_equal(chart_bar(NAN, 0, 1, 10, &b), -1);
	assert_int_equal(chart_bar(0.5, 0, 1, 0, &b), -1);
	assert_int_equal(chart_bar(0.5, 0, 1, CHART_MAX_CELLS + 1, &b), -1);
	assert_int_equal(b.w, 0);
}

static void
test_bar_text(void **st)
{
	struct chart_bar b;
	char s[128];

	(void)st;
	assert_int_equal(chart_bar(0.5, 0.1871, 0.8129, 10, &b), 0);
	assert_int_equal(chart_bar_text(&b, false, s, sizeof s), 10);
	assert_string_equal(s, "#====---- ");
	chart_bar_text(&b, true, s, sizeof s);
	assert_string_equal(s, "\u2588\u2593\u2593\u2593\u2593\u2591\u2591"
	    "\u2591\u2591 ");
	/* a small buffer takes whole cells only */
	assert_int_equal(chart_bar_text(&b, true, s, 8), 6);
	assert_string_equal(s, "\u2588\u2593");
}

static void
test_hist_bins(void **st)
{
	const double v[] = { 10, 12, 11, 30, -1, NAN, 20, 10 };
	struct chart_hist h;

	(void)st;
	assert_int_equal(chart_hist(v, 8, 4, &h), 0);
	assert_int_equal(h.n, 6);          /* -1 and NaN are no time */
	assert_int_equal(h.nbins, 4);
	assert_true(h.lo == 10 && h.width == 5);
	/* [10,15) 10 12 11 10; [15,20) -; [20,25) 20; [25,30] 30 */
	assert_int_equal(h.count[0], 4);
	assert_int_equal(h.count[1], 0);
	assert_int_equal(h.count[2], 1);
	assert_int_equal(h.count[3], 1);
	assert_int_equal(h.max, 4);
	assert_true(chart_hist_edge(&h, 0) == 10);
	assert_true(chart_hist_edge(&h, 4) == 30);
	/* every value equal: one bin */
	{
		const double w[] = { 7, 7, 7 };

		assert_int_equal(chart_hist(w, 3, 8, &h), 0);
		assert_int_equal(h.nbins, 1);
		assert_int_equal(h.count[0], 3);
	}
	/* no value */
	assert_int_equal(chart_hist(v + 4, 2, 4, &h), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(h.nbins, 0);
	assert_int_equal(chart_hist(v, 8, 0, &h), -1);
	assert_int_equal(chart_hist(v, 8, CHART_MAX_BINS + 1, &h), -1);
}

/* A span too small to divide (a subnormal from a hostile trial.json)
 * gives one bin, never an index made from NaN or infinity. */
static void
test_hist_subnormal(void **st)
{
	double v[] = { 0.0, 5e-324, 5e-324 };
	double w[] = { 0.0, 1e308, 1.7e308 };
	struct chart_hist h;

	(void)st;
	assert_int_equal(chart_hist(v, 3, 4, &h), 0);
	assert_int_equal(h.n, 3);
	assert_int_equal(h.nbins, 1);
	assert_int_equal(h.count[0], 3);
	assert_int_equal(chart_hist(w, 3, 8, &h), 0);
	assert_int_equal(h.n, 3);
	size_t total = 0;
	for (size_t b = 0; b < h.nbins; b++)
		total += h.count[b];
	assert_int_equal(total, 3);
}

static void
test_hbar(void **st)
{
	char s[128];

	(void)st;
	assert_int_equal(chart_hbar_eighths(0, 4, 10), 0);
	assert_int_equal(chart_hbar_eighths(4, 4, 10), 80);
	assert_int_equal(chart_hbar_eighths(1, 4, 10), 20);
	assert_int_equal(chart_hbar_eighths(1, 1000, 10), 1);   /* shows */
	chart_hbar_text(4, 4, 3, false, s, sizeof s);
	assert_string_equal(s, "###");
	chart_hbar_text(1, 4, 10, false, s, sizeof s);   /* 2.5 cells */
	assert_string_equal(s, "###");
	chart_hbar_text(1, 1000, 10, false, s, sizeof s);
	assert_string_equal(s, "#");
	chart_hbar_text(0, 4, 10, false, s, sizeof s);
	assert_string_equal(s, "");
	chart_hbar_text(1, 4, 10, true, s, sizeof s);    /* 2 + 4/8 */
	assert_string_equal(s, "\u2588\u2588\u258c");
	chart_hbar_text(4, 4, 2, true, s, sizeof s);
	assert_string_equal(s, "\u2588\u2588");
	chart_hbar_text(1, 1000, 10, true, s, sizeof s);
	assert_string_equal(s, "\u258f");
}

static void
test_age(void **st)
{
	char s[32];

	(void)st;
	recorded_age(-1, 100, s, sizeof s);
	assert_string_equal(s, "-");
	recorded_age(100, 112, s, sizeof s);
	assert_string_equal(s, "12s ago");
	recorded_age(0, 3 * 3600 + 59, s, sizeof s);
	assert_string_equal(s, "3 h ago");
	recorded_age(0, 2 * 86400 + 5, s, sizeof s);
	assert_string_equal(s, "2 d ago");
	recorded_age(0, 600, s, sizeof s);
	assert_string_equal(s, "10 min ago");
	recorded_age(500, 100, s, sizeof s);
	assert_string_equal(s, "just now");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bar_cells),
		cmocka_unit_test(test_bar_text),
		cmocka_unit_test(test_hist_bins),
		cmocka_unit_test(test_hist_subnormal),
		cmocka_unit_test(test_hbar),
		cmocka_unit_test(test_age),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
