/*
 * chart.c - the pictures of a trial as character cells: a rate with its
 * interval as a bar, the time-to-kill distribution as a histogram.  Pure
 * arithmetic and string building (no curses); the console and the CLI
 * only put the strings on screen (docs/cli-trial.md shows an example).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

/* What each cell kind looks like, UTF-8 and ASCII. */
static const char *const chart_bar_utf8[] = {
	[CHART_EMPTY] = " ", [CHART_SOLID] = "\u2588",   /* █ */
	[CHART_CI_LOW] = "\u2593",                        /* ▓ */
	[CHART_CI_HIGH] = "\u2591",                       /* ░ */
};
static const char *const chart_bar_ascii[] = {
	[CHART_EMPTY] = " ", [CHART_SOLID] = "#", [CHART_CI_LOW] = "=",
	[CHART_CI_HIGH] = "-",
};
/* Eighths of a block, 1..7 (0 and 8 are a space and a full block). */
static const char *const chart_eighths[] = {
	"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a",
	"\u2589",
};

/* Clamp v into [0, 1] (NaN: 0). */
static double
chart_unit(double v)
{
	if (!(v > 0))
		return 0;
	return v > 1 ? 1 : v;
}

int
chart_bar(double p, double lo, double hi, int w, struct chart_bar *out)
{
	int first, last, pc;

	memset(out, 0, sizeof *out);
	if (w < 1 || w > CHART_MAX_CELLS || isnan(p) || isnan(lo) ||
	    isnan(hi))
		return -1;
	p = chart_unit(p);
	lo = chart_unit(lo);
	hi = chart_unit(hi);
	if (lo > p)
		lo = p;
	if (hi < p)
		hi = p;
	out->w = w;
	/* the interval's cells: from the one holding lo to the one holding
	 * hi (hi on a cell edge belongs to the cell below), and at least the
	 * cell holding p, so that a narrow interval still shows */
	first = (int)floor(lo * w);
	last = (int)ceil(hi * w) - 1;
	pc = (int)floor(p * w);
	if (pc >= w)
		pc = w - 1;
	if (first >= w)
		first = w - 1;
	if (last < 0)
		last = 0;
	if (first > pc)
		first = pc;
	if (last < pc)
		last = pc;
	out->lo_cell = first;
	out->hi_cell = last;
	for (int i = 0; i < w; i++) {
		double mid = (i + 0.5) / w;

		if (i < first)
			out->cell[i] = CHART_SOLID;
		else if (i <= last)
			out->cell[i] = mid <= p ? CHART_CI_LOW : CHART_CI_HIGH;
		else
			out->cell[i] = CHART_EMPTY;
	}
	return 0;
}

size_t
chart_bar_text(const struct chart_bar *b, bool utf8, char *out, size_t n)
{
	const char *const *t = utf8 ? chart_bar_utf8 : chart_bar_ascii;
	size_t o = 0;

	if (n == 0)
		return 0;
	out[0] = '\0';
	for (int i = 0; i < b->w; i++) {
		const char *c = t[b->cell[i]];
		size_t l = strlen(c);

		if (o + l >= n)
			break;
		memcpy(out + o, c, l);
		o += l;
	}
	out[o] = '\0';
	return o;
}

int
chart_hist(const double *v, size_t n, size_t nbins, struct chart_hist *h)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t used = 0;

	memset(h, 0, sizeof *h);
	if (nbins < 1 || nbins > CHART_MAX_BINS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]) || v[i] < 0)
			continue;
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
		used++;
	}
	h->n = used;
	if (used == 0)
		return 0;
	if (hi - lo <= 0 || used == 1) {
		/* every value the same: one bin */
		h->nbins = 1;
		h->lo = lo;
		h->width = 0;
		h->count[0] = used;
		h->max = used;
		return 0;
	}
	h->nbins = nbins;
	h->lo = lo;
	h->width = (hi - lo) / (double)nbins;
	if (!(h->width > 0) || !isfinite(h->width)) {
		/* a span too small to split (subnormal): one bin */
		h->nbins = 1;
		h->width = 0;
		h->count[0] = used;
		h->max = used;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		double q;
		size_t b;

		if (!isfinite(v[i]) || v[i] < 0)
			continue;
		/* [lo + b w, lo + (b+1) w), the last bin closed at hi; the
		 * quotient is range-checked before it becomes an index */
		q = (v[i] - lo) / h->width;
		if (!(q >= 0))
			q = 0;
		b = q >= (double)nbins ? nbins - 1 : (size_t)q;
		h->count[b]++;
	}
	for (size_t b = 0; b < nbins; b++)
		if (h->count[b] > h->max)
			h->max = h->count[b];
	return 0;
}

double
chart_hist_edge(const struct chart_hist *h, size_t b)
{
	if (h->nbins <= 1)
		return h->lo;
	if (b >= h->nbins)
		/* the top edge is the largest value, exactly */
		return h->lo + h->width * (double)h->nbins;
	return h->lo + h->width * (double)b;
}

int
chart_hbar_eighths(size_t count, size_t max, int w)
{
	if (max == 0 || w < 1 || count == 0)
		return 0;
	if (count >= max)
		return w * 8;
	{
		/* round to the nearest eighth, but a non-empty bin shows */
		long e = lround((double)count * w * 8.0 / (double)max);

		return e < 1 ? 1 : (int)e;
	}
}

size_t
chart_hbar_text(size_t count, size_t max, int w, bool utf8, char *out,
    size_t n)
{
	int e = chart_hbar_eighths(count, max, w);
	int full = e / 8, part = e % 8;
	size_t o = 0;

	if (n == 0)
		return 0;
	if (!utf8 && part >= 4) {
		full++;          /* ASCII: whole cells, rounded */
		part = 0;
	} else if (!utf8 && full == 0 && e > 0) {
		full = 1;        /* a non-empty bin shows */
		part = 0;
	}
	for (int i = 0; i < full; i++) {
		const char *c = utf8 ? "\u2588" : "#";
		size_t l = strlen(c);

		if (o + l >= n)
			break;
		memcpy(out + o, c, l);
		o += l;
	}
	if (utf8 && part > 0 && o + 3 < n) {
		memcpy(out + o, chart_eighths[part], 3);
		o += 3;
	}
	out[o] = '\0';
	return o;
}
