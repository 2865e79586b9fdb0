/*
 * stats.c - exact binomial confidence intervals (Clopper-Pearson) for
 * trials, and the small order statistics a trial summary needs.
 *
 * The Clopper-Pearson interval of k successes in n trials at level L
 * (alpha = 1 - L) is
 *     lower = B^-1(alpha/2;     k,     n - k + 1)   (0 when k = 0)
 *     upper = B^-1(1 - alpha/2; k + 1, n - k)       (1 when k = n)
 * where B^-1(p; a, b) is the inverse of the regularised incomplete beta
 * function I_x(a, b) in x.  I_x(a, b) is evaluated by its continued
 * fraction (modified Lentz) with the prefactor from lgamma; the inverse is
 * a bracketed Newton iteration that falls back to bisection whenever a
 * step leaves the bracket (docs/trial.md, "The maths").
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATS_CF_MAX_ITER  20000
#define STATS_CF_EPS       1e-16
#define STATS_CF_TINY      1e-300
#define STATS_INV_MAX_ITER 400
#define STATS_INV_TOL      1e-14   /* relative step / bracket in x */

/* log of B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b). */
static double
stats_lbeta(double a, double b)
{
	return lgamma(a) + lgamma(b) - lgamma(a + b);
}

/*
 * The continued fraction of I_x(a, b) (Numerical Recipes' betacf, with the
 * modified Lentz method); converges fast for x < (a + 1) / (a + b + 2).
 */
static double
stats_betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1.0, qam = a - 1.0;
	double c = 1.0, d = 1.0 - qab * x / qap, h;
	int m;

	if (fabs(d) < STATS_CF_TINY)
		d = STATS_CF_TINY;
	d = 1.0 / d;
	h = d;
	for (m = 1; m <= STATS_CF_MAX_ITER; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1.0 + aa * d;
		if (fabs(d) < STATS_CF_TINY)
			d = STATS_CF_TINY;
		c = 1.0 + aa / c;
		if (fabs(c) < STATS_CF_TINY)
			c = STATS_CF_TINY;
		d = 1.0 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1.0 + aa * d;
		if (fabs(d) < STATS_CF_TINY)
			d = STATS_CF_TINY;
		c = 1.0 + aa / c;
		if (fabs(c) < STATS_CF_TINY)
			c = STATS_CF_TINY;
		d = 1.0 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < STATS_CF_EPS)
			break;
	}
	return h;
}

/*
 * The regularised incomplete beta function I_x(a, b) for a, b > 0 and
 * 0 <= x <= 1.  NaN on bad input.
 */
double
stats_betainc(double a, double b, double x)
{
	double lfront;

	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1) || isinf(a) ||
	    isinf(b))
		return NAN;
	if (x == 0)
		return 0;
	if (x == 1)
		return 1;
	lfront = a * log(x) + b * log1p(-x) - stats_lbeta(a, b);
	if (x < (a + 1.0) / (a + b + 2.0))
		return exp(lfront) * stats_betacf(a, b, x) / a;
	return 1.0 - exp(lfront) * stats_betacf(b, a, 1.0 - x) / b;
}

/* d/dx I_x(a, b): the beta density, computed in logs. */
static double
stats_beta_pdf(double a, double b, double x)
{
	if (x <= 0 || x >= 1)
		return 0;
	return exp((a - 1.0) * log(x) + (b - 1.0) * log1p(-x) -
	    stats_lbeta(a, b));
}

/*
 * The x in [0, 1] with I_x(a, b) = p.  Keeps a bracket [lo, hi] with
 * I_lo <= p <= I_hi; takes the Newton step when it stays strictly inside
 * the bracket, else bisects; stops when the bracket or the step is below
 * 1e-14 relative to x (absolute error far below 1e-12).  NaN on bad input.
 */
double
stats_betainc_inv(double a, double b, double p)
{
	double lo = 0.0, hi = 1.0, x, f, scale;
	int i;

	if (!(a > 0) || !(b > 0) || !(p >= 0) || !(p <= 1))
		return NAN;
	if (p == 0)
		return 0;
	if (p == 1)
		return 1;
	/* Start at the mean: inside (0, 1) and near the mass. */
	x = a / (a + b);
	for (i = 0; i < STATS_INV_MAX_ITER; i++) {
		double pdf, nx, step;

		f = stats_betainc(a, b, x) - p;
		if (f == 0)
			return x;
		if (f < 0)
			lo = x;
		else
			hi = x;
		pdf = stats_beta_pdf(a, b, x);
		nx = pdf > 0 && isfinite(pdf) ? x - f / pdf : NAN;
		if (!(nx > lo && nx < hi))
			nx = 0.5 * (lo + hi);   /* Newton left the bracket */
		step = fabs(nx - x);
		x = nx;
		scale = x > 1e-300 ? x : 1e-300;
		if (step <= STATS_INV_TOL * scale ||
		    hi - lo <= STATS_INV_TOL * scale)
			break;
	}
	return x;
}

int
stats_clopper_pearson(uint64_t k, uint64_t n, double level, double *lower,
    double *upper, struct errbuf *e)
{
	double alpha, dk, dn;

	if (n == 0)
		return errbuf_set(e, ERRBUF_INPUT, "confidence interval: n "
		    "must be at least 1");
	if (k > n)
		return errbuf_set(e, ERRBUF_INPUT, "confidence interval: k "
		    "(%llu) is larger than n (%llu)", (unsigned long long)k,
		    (unsigned long long)n);
	if (!(level > 0 && level < 1))
		return errbuf_set(e, ERRBUF_INPUT, "confidence interval: "
		    "level %g is not strictly between 0 and 1", level);
	alpha = 1.0 - level;
	dk = (double)k;
	dn = (double)n;
	*lower = k == 0 ? 0.0 : stats_betainc_inv(dk, dn - dk + 1.0,
	    alpha / 2.0);
	*upper = k == n ? 1.0 : stats_betainc_inv(dk + 1.0, dn - dk,
	    1.0 - alpha / 2.0);
	if (!isfinite(*lower) || !isfinite(*upper))
		return errbuf_set(e, ERRBUF_INTERNAL, "confidence interval: "
		    "no solution for k=%llu n=%llu", (unsigned long long)k,
		    (unsigned long long)n);
	return 0;
}

static int
stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void
stats_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, stats_cmp_double);
}

double
stats_median(const double *sorted, size_t n)
{
	if (n == 0)
		return NAN;
	if (n % 2 == 1)
		return sorted[n / 2];
	return 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double
stats_percentile(const double *sorted, size_t n, double q)
{
	double r;
	size_t rank;

	if (n == 0 || !(q > 0 && q <= 1))
		return NAN;
	/* Nearest rank: the ceil(q n)-th smallest value (1-based). */
	r = ceil(q * (double)n - 1e-9);
	rank = r < 1 ? 1 : (size_t)r;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

/* A decimal integer made only of digits (no sign, no spaces), <= max. */
int
stats_parse_count(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0' || strlen(s) > 20)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* A decimal fraction strictly between 0 and 1 ("0.95", ".99"). */
int
stats_parse_level(const char *s, double *out)
{
	char *end;
	double v;
	size_t i;

	if (s == NULL || *s == '\0' || strlen(s) > 64)
		return -1;
	for (i = 0; s[i] != '\0'; i++)
		if ((s[i] < '0' || s[i] > '9') && s[i] != '.')
			return -1;
	v = strtod(s, &end);
	if (*end != '\0' || !(v > 0 && v < 1))
		return -1;
	*out = v;
	return 0;
}
