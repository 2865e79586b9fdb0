/*
 * cmd_trial.c - `ares trial` (N drills, J at a time, exact intervals) and
 * `ares stats ci K N` (the interval alone).  Printers over core/trial.c and
 * core/stats.c (docs/cli-trial.md, docs/cli-stats.md).
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_trial_exec(const struct cmd_entry *, int, char **);
static int cmd_stats_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_trial_longopts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "seed", required_argument, NULL, 's' },
	{ "level", required_argument, NULL, 'l' },
	{ "json", required_argument, NULL, 'J' },
	{ "runs", required_argument, NULL, 'r' },
	{ "resume", required_argument, NULL, 'R' },
	{ "key-dir", required_argument, NULL, 'K' },
	{ "variants", required_argument, NULL, 'V' },
	{ "ascii", no_argument, NULL, 'A' },
	{ "engine", required_argument, NULL, 'E' },
	{ "engines", required_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_trial_entry = {
	.name = "trial",
	.optstring = "p:n:j:s:l:h",
	.longopts = cmd_trial_longopts,
	.summary = "N drills J at a time: rates with exact intervals",
	.usage =
	    "usage: ares trial --policy FILE -n N [-j J] [--seed S] "
	    "[--level L]\n"
	    "                  [--variants policy|fixed|generated]\n"
	    "                  [--engine URL ...] [--engines FILE]\n"
	    "                  [--json FILE|-] [--runs DIR] [--key-dir DIR] "
	    "[--ascii]\n"
	    "       ares trial --resume TRIAL_DIR [-j J] [--engine URL ...] "
	    "[--engines FILE]\n"
	    "                  [--json FILE|-] [--key-dir DIR] [--ascii]\n",
	.exec = cmd_trial_exec,
};

/* stats parses its own arguments (K and N may look like options). */
const struct cmd_entry cmd_stats_entry = {
	.name = "stats",
	.summary = "exact Clopper-Pearson interval of K in N",
	.usage = "usage: ares stats ci K N [--level L]\n",
	.exec = cmd_stats_exec,
};

static volatile sig_atomic_t cmd_trial_stop, cmd_trial_cancel;

/* Whether the pictures may use block characters: not --ascii and a
 * UTF-8 locale (LANG=C and other non-UTF-8 locales get ASCII). */
static bool
cmd_trial_utf8(bool ascii)
{
	const char *cs;

	if (ascii || setlocale(LC_CTYPE, "") == NULL)
		return false;
	cs = nl_langinfo(CODESET);
	return cs != NULL && strcmp(cs, "UTF-8") == 0;
}

/* SIGINT/SIGTERM: launch nothing new and cut the running drills short;
 * each still tears its lab down before the trial writes its partial
 * report (the cut-short runs are not results: --resume runs them again). */
static void
cmd_trial_on_signal(int sig)
{
	(void)sig;
	cmd_trial_stop = 1;
	cmd_trial_cancel = 1;
}

/* Where the progress line stands (stderr). */
struct cmd_trial_printer {
	bool tty;
	bool drawn;   /* a \r line is on screen */
};

/* trial_run's progress hook: one line per finished run, or (stderr a
 * terminal) one line redrawn in place. */
static void
cmd_trial_print_progress(void *ctx, const struct trial_progress *p)
{
	struct cmd_trial_printer *pr = ctx;

	if (p->event == TRIAL_EV_RETRY && p->run != NULL &&
	    p->run->nattempts > 0) {
		const struct trial_attempt *a =
		    &p->run->attempts[p->run->nattempts - 1];

		fprintf(stderr, "%srun %zu: engine %s went away (%s): a failed "
		    "attempt%s%s; rerun on another engine%s\n", pr->drawn ?
		    "\n" : "", p->run->index, a->engine, a->reason,
		    a->run_dir[0] ? ", kept in " : "", a->run_dir,
		    pr->tty ? "\033[K" : "");
		pr->drawn = false;
		return;
	}
	if (p->event == TRIAL_EV_END) {
		if (pr->drawn)
			fputc('\n', stderr);
		pr->drawn = false;
		return;
	}
	if (!pr->tty && p->event != TRIAL_EV_FINISH)
		return;
	fprintf(stderr, "%s[%zu/%zu] running %zu, contained %zu, breached "
	    "%zu, not-exercised %zu, errors %zu%s", pr->tty ? "\r" : "",
	    p->done, p->total, p->running, p->contained, p->breached,
	    p->not_exercised, p->errors, pr->tty ? "\033[K" : "\n");
	pr->drawn = pr->tty;
	fflush(stderr);
}

/* One rate line: k/n and its interval (none without runs). */
static void
cmd_trial_print_rate(FILE *f, const char *name, const struct trial_rate *r,
    const char *among)
{
	if (r->n == 0) {
		fprintf(f, "  %-14s %llu/%llu  (no runs: no interval)%s\n",
		    name, (unsigned long long)r->k, (unsigned long long)r->n,
		    among);
		return;
	}
	fprintf(f, "  %-14s %llu/%llu  [%.4f, %.4f]%s\n", name,
	    (unsigned long long)r->k, (unsigned long long)r->n, r->lower,
	    r->upper, among);
}

/* The pictures (core/chart.c): each rate as a bar with its interval,
 * the time to kill as a histogram; block characters when utf8, else
 * ASCII.  Lines start "  [" or with a number, never with a rate's name
 * (scripts grep those). */
static void
cmd_trial_print_pictures(FILE *f, const struct trial *t, bool utf8)
{
	static const char *const names[] = { "bait taken", "contained",
	    "breached", "leaked" };
	const struct trial_summary *s = &t->sum;
	const struct trial_rate *rates[] = { &s->bait, &s->contained_r,
	    &s->breached_r, &s->leaked };
	char cells[CHART_MAX_CELLS * 3 + 1];
	struct chart_hist h;
	double *v;
	size_t nv = 0, nbins;

	fprintf(f, "\nrates as bars (%s below the interval, %s the interval "
	    "up to k/n, %s the rest of it)\n", utf8 ? "\u2588" : "#",
	    utf8 ? "\u2593" : "=", utf8 ? "\u2591" : "-");
	for (size_t i = 0; i < 4; i++) {
		const struct trial_rate *r = rates[i];
		struct chart_bar b;

		if (r->n == 0 || chart_bar((double)r->k / (double)r->n,
		    r->lower, r->upper, 40, &b) == -1) {
			fprintf(f, "  [%-40s]  %-13s (no runs)\n", "", names[i]);
			continue;
		}
		chart_bar_text(&b, utf8, cells, sizeof cells);
		fprintf(f, "  [%s]  %-13s %llu/%llu  [%.2f, %.2f]\n", cells,
		    names[i], (unsigned long long)r->k,
		    (unsigned long long)r->n, r->lower, r->upper);
	}
	if (s->nttk == 0)
		return;
	v = xcalloc(t->n, sizeof *v);
	for (size_t i = 0; i < t->n; i++)
		if (t->runs[i].done && t->runs[i].time_to_kill_ms >= 0)
			v[nv++] = t->runs[i].time_to_kill_ms;
	/* about the square root of the count, 1..10 bins */
	nbins = (size_t)ceil(sqrt((double)nv));
	nbins = nbins < 1 ? 1 : nbins > 10 ? 10 : nbins;
	if (chart_hist(v, nv, nbins, &h) == 0 && h.nbins > 0) {
		fprintf(f, "\ntime to kill (ms), %zu run(s)\n", h.n);
		for (size_t b = 0; b < h.nbins; b++) {
			chart_hbar_text(h.count[b], h.max, 40, utf8, cells,
			    sizeof cells);
			if (h.nbins == 1)
				fprintf(f, "  %10.3f             %-*s %zu\n", h.lo,
				    utf8 ? 0 : 40, cells, h.count[b]);
			else
				fprintf(f, "  %10.3f - %10.3f  %s %zu\n",
				    chart_hist_edge(&h, b),
				    chart_hist_edge(&h, b + 1), cells,
				    h.count[b]);
		}
	}
	free(v);
}

/* Where this session's drills spent their time: the median of each
 * phase (drill.json "phases"), their sum, and the throughput. */
static void
cmd_trial_print_timing(FILE *f, const struct trial *t)
{
	double med[TRIAL_NPHASES], sum = 0;
	size_t n = trial_phase_medians(t, med), k;

	if (n == 0)
		return;
	fprintf(f, "\ntiming     %zu drill(s) in %.1f s: %.1f drills/min at "
	    "-j %zu\n", t->ndrilled, t->wall_ms / 1e3, t->wall_ms > 0 ?
	    (double)t->ndrilled * 60000.0 / t->wall_ms : 0.0, t->jobs);
	fprintf(f, "  phases (median ms of %zu drill(s)):", n);
	for (k = 0; k < TRIAL_NPHASES; k++) {
		fprintf(f, " %s %.0f", drill_phase_name((enum drill_phase)k),
		    med[k]);
		sum += med[k];
	}
	fprintf(f, "; sum %.0f\n", sum);
}

/* --engine: the engines (capacity, runs, up or down and why), then each
 * run's engine and its failed attempts; within 80 columns. */
static void
cmd_trial_print_engines(FILE *f, const struct trial *t)
{
	size_t i, k;

	if (!t->multi)
		return;
	fprintf(f, "\nengines (%zu)\n", t->nengines);
	for (k = 0; k < t->nengines; k++) {
		const struct trial_engine *en = &t->engines[k];

		fprintf(f, "  %-44.44s  capacity %2zu  ran %zu%s\n",
		    en->name, en->capacity, en->ran, en->down ? "  DOWN" : "");
		if (en->down && en->down_reason[0] != '\0')
			fprintf(f, "    %.76s\n", en->down_reason);
	}
	fprintf(f, "\n%5s  %-44s  %s\n", "index", "engine", "failed attempts");
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];

		fprintf(f, "%5zu  %-44.44s  %zu\n", r->index, !r->done ?
		    "(not run)" : r->engine[0] != '\0' ? r->engine : "-",
		    r->nattempts);
		for (k = 0; k < r->nattempts; k++)
			fprintf(f, "%5s  - on %.40s: %.24s\n%7s  %.71s\n", "",
			    r->attempts[k].engine, r->attempts[k].run_id[0] ?
			    r->attempts[k].run_id : "(no run dir)", "",
			    r->attempts[k].reason);
	}
}

/* The table of runs and the summary (rates, time to kill, exit code). */
static void
cmd_trial_print(FILE *f, const struct trial *t, int code, bool utf8)
{
	const struct trial_summary *s = &t->sum;
	size_t i;

	fprintf(f, "\ntrial      %s%s\n", t->id, t->complete ? "" :
	    "  (INCOMPLETE)");
	fprintf(f, "trial dir  %s\n", t->dir);
	fprintf(f, "policy     %s (base seed %llu, run i uses "
	    "splitmix64(base, i))\n", t->policy,
	    (unsigned long long)t->base_seed);
	fprintf(f, "runs       %zu of %zu finished, %zu at a time\n\n",
	    s->finished, t->n, t->jobs);
	fprintf(f, "%5s  %-20s  %-24s  %-13s  %10s  %s\n", "index", "seed",
	    "run id", "verdict", "ttk ms", "report");
	for (i = 0; i < t->n; i++) {
		const struct trial_run *r = &t->runs[i];
		char ttk[32];

		if (!r->done) {
			fprintf(f, "%5zu  %-20llu  %-24s  %-13s\n", r->index,
			    (unsigned long long)r->seed, "-", "(not run)");
			continue;
		}
		if (r->time_to_kill_ms >= 0)
			snprintf(ttk, sizeof ttk, "%.3f", r->time_to_kill_ms);
		else
			snprintf(ttk, sizeof ttk, "-");
		fprintf(f, "%5zu  %-20llu  %-24s  %-13s  %10s  %.12s\n",
		    r->index, (unsigned long long)r->seed,
		    r->run_id[0] != '\0' ? r->run_id : "-", r->verdict, ttk,
		    r->report_blake2b[0] != '\0' ? r->report_blake2b : "-");
	}
	cmd_trial_print_engines(f, t);
	if (t->variants != TRIAL_VARIANTS_POLICY) {
		fprintf(f, "\ndressings (--variants %s): bait taken per run\n",
		    trial_variants_name(t->variants));
		fprintf(f, "%5s  %-20s  %-20s  %-16s  %-20s  %s\n", "index",
		    "variant", "variant_seed", "company", "service", "bait");
		for (i = 0; i < t->n; i++) {
			const struct trial_run *r = &t->runs[i];
			char vs[24] = "-";

			if (r->has_variant_seed)
				snprintf(vs, sizeof vs, "%llu",
				    (unsigned long long)r->variant_seed);
			fprintf(f, "%5zu  %-20s  %-20s  %-16.16s  %-20.20s  %s\n",
			    r->index, r->variant, vs, r->company, r->service,
			    !r->done ? "(not run)" : r->bait_fired ?
			    (r->bait_kind[0] ? r->bait_kind : r->bait) : "-");
		}
	}
	fprintf(f, "\nsummary (exact two-sided Clopper-Pearson intervals at "
	    "%g%%)\n", t->level * 100.0);
	cmd_trial_print_rate(f, "bait taken", &s->bait,
	    "  of runs with a verdict");
	cmd_trial_print_rate(f, "contained", &s->contained_r,
	    "  of exercised runs");
	cmd_trial_print_rate(f, "breached", &s->breached_r,
	    "  of exercised runs");
	cmd_trial_print_rate(f, "leaked", &s->leaked, "  of exercised runs");
	fprintf(f, "  %-14s %zu run(s)   errors %zu run(s)   (in no rate; "
	    "never counted as success)\n", "not exercised", s->not_exercised,
	    s->errors);
	if (s->nttk > 0)
		fprintf(f, "  %-14s median %.3f ms, p95 %.3f ms, max %.3f ms "
		    "(%zu run(s))\n", "time to kill", s->ttk_median,
		    s->ttk_p95, s->ttk_max, s->nttk);
	else
		fprintf(f, "  %-14s none (no run cut the agent off)\n",
		    "time to kill");
	cmd_trial_print_pictures(f, t, utf8);
	cmd_trial_print_timing(f, t);
	if (!t->complete)
		fprintf(f, "\nINCOMPLETE: %zu run(s) missing; continue with "
		    "ares trial --resume %s\n", t->n - s->finished, t->dir);
	fprintf(f, "exit %d\n", code);
}

/* Parse a count option in 1..max.  -1 (message printed) on bad input. */
static int
cmd_trial_opt_count(const char *opt, const char *s, uint64_t max,
    size_t *out)
{
	uint64_t v;

	if (stats_parse_count(s, max, &v) == -1 || v == 0) {
		fprintf(stderr, "ares trial: %s: '%s' is not an integer in "
		    "1..%llu\n", opt, s, (unsigned long long)max);
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

/* ares trial [options] | --resume DIR: 0 all exercised runs contained (at
 * least one), 1 any breach, 2 usage, 3 engine unreachable, 4 none
 * exercised, 5 error runs or an incomplete trial. */
static int
cmd_trial_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct trial_options o;
	struct cmd_trial_printer pr = { 0 };
	struct trial t;
	struct errbuf e = { 0 };
	const char *json = NULL;
	bool fixed = false;   /* an option --resume takes from trial.json */
	bool ascii = false;
	FILE *out = stdout;
	const char *urls[TRIAL_MAX_ENGINES];
	int c, code, rc;

	memset(&o, 0, sizeof o);
	o.engine_urls = urls;
	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'p':
			o.policy_path = optarg;
			fixed = true;
			break;
		case 'n':
			if (cmd_trial_opt_count("-n", optarg, TRIAL_MAX_RUNS,
			    &o.n) == -1)
				return EXIT_USAGE;
			fixed = true;
			break;
		case 'j':
			if (cmd_trial_opt_count("-j", optarg, TRIAL_MAX_JOBS,
			    &o.jobs) == -1)
				return EXIT_USAGE;
			break;
		case 's':
			if (cmd_opt_seed("ares trial", optarg, false,
			    &o.seed) == -1)
				return EXIT_USAGE;
			o.has_seed = true;
			fixed = true;
			break;
		case 'l':
			if (stats_parse_level(optarg, &o.level) == -1) {
				fprintf(stderr, "ares trial: --level: '%s' is not "
				    "a number strictly between 0 and 1\n",
				    optarg);
				return EXIT_USAGE;
			}
			fixed = true;
			break;
		case 'J':
			json = optarg;
			break;
		case 'r':
			o.runs_dir = optarg;
			fixed = true;
			break;
		case 'R':
			o.resume_dir = optarg;
			break;
		case 'K':
			o.key_dir = optarg;
			break;
		case 'A':
			ascii = true;
			break;
		case 'E':
			if (o.nengine_urls >= TRIAL_MAX_ENGINES) {
				fprintf(stderr, "ares trial: --engine: at most %d "
				    "engines\n", TRIAL_MAX_ENGINES);
				return EXIT_USAGE;
			}
			urls[o.nengine_urls++] = optarg;
			break;
		case 'F':
			o.engines_file = optarg;
			break;
		case 'V':
			if (strcmp(optarg, "policy") == 0)
				o.variants = TRIAL_VARIANTS_POLICY;
			else if (strcmp(optarg, "fixed") == 0)
				o.variants = TRIAL_VARIANTS_FIXED;
			else if (strcmp(optarg, "generated") == 0)
				o.variants = TRIAL_VARIANTS_GENERATED;
			else {
				fprintf(stderr, "ares trial: --variants: '%s' is "
				    "not policy, fixed or generated\n", optarg);
				return EXIT_USAGE;
			}
			fixed = true;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares trial: unexpected argument '%s'\n%s",
		    argv[optind], self->usage);
		return EXIT_USAGE;
	}
	if (o.resume_dir != NULL && fixed) {
		fprintf(stderr, "ares trial: --resume takes the policy, -n, "
		    "--seed, --level, --variants and the directory from trial.json; give "
		    "only -j, --engine, --engines, --json, --key-dir with it\n");
		return EXIT_USAGE;
	}
	if (o.resume_dir == NULL && (o.policy_path == NULL || o.n == 0)) {
		fprintf(stderr, "ares trial: --policy FILE and -n N are "
		    "required\n%s", self->usage);
		return EXIT_USAGE;
	}
	if (json != NULL && strcmp(json, "-") == 0)
		out = stderr;   /* stdout carries the JSON */

	pr.tty = isatty(STDERR_FILENO) == 1;
	o.progress = cmd_trial_print_progress;
	o.progress_ctx = &pr;
	o.stop = &cmd_trial_stop;
	o.cancel = &cmd_trial_cancel;
	signal(SIGINT, cmd_trial_on_signal);
	signal(SIGTERM, cmd_trial_on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* a remote DOCKER_HOST: the policy's lab must be one it can have
	 * (with --engine each engine is checked as the trial starts) */
	if (o.nengine_urls == 0 && o.engines_file == NULL &&
	    (rc = cmd_require_lab_engine("ares trial", o.policy_path,
	    NULL)) != 0)
		return rc;
	if (trial_run(&o, &t, &e) == -1) {
		fprintf(stderr, "ares trial: %s\n", e.msg);
		trial_free(&t);
		return errbuf_exit_code(&e);
	}
	if (t.gc != NULL) {
		/* what the start-of-trial sweep removed */
		char *g = gc_report_text("ares trial", t.gc);

		if (g != NULL)
			fputs(g, stderr);
		free(g);
	}
	if (t.engine_down)
		fprintf(stderr, "ares trial: the engine stopped answering: no "
		    "further drill was started\n");
	if (t.stopped[0] != '\0')
		fprintf(stderr, "ares trial: %s: the runs left are not done "
		    "(their failed attempts kept); once an engine is back: ares "
		    "trial --resume %s --engine URL ...\n", t.stopped, t.dir);
	trial_summarize(&t);
	code = trial_exit_code(&t);
	cmd_trial_print(out, &t, code, cmd_trial_utf8(ascii));
	if (json != NULL && cmd_json_write(trial_json(&t), json, &e) == -1) {
		fprintf(stderr, "ares trial: --json: %s\n", e.msg);
		if (code == EXIT_CONTAINED)
			code = EXIT_INTERNAL;
	}
	trial_free(&t);
	return code;
}

/* ares stats ci K N [--level L]: print "lower upper".  0, or 2 on bad
 * input. */
static int
cmd_stats_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *pos[3] = { NULL, NULL, NULL };
	const char *level_s = NULL;
	struct errbuf e = { 0 };
	double level = 0.95, lo, hi;
	uint64_t k, n;
	size_t npos = 0;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			cmd_usage(self, stdout);
			return EXIT_CONTAINED;
		}
		if (strcmp(a, "--level") == 0 || strcmp(a, "-l") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "ares stats: --level needs a "
				    "value\n%s", self->usage);
				return EXIT_USAGE;
			}
			level_s = argv[++i];
		} else if (strncmp(a, "--level=", 8) == 0)
			level_s = a + 8;
		else if (a[0] == '-' && (a[1] < '0' || a[1] > '9')) {
			fprintf(stderr, "ares stats: unknown option '%s'\n%s", a,
			    self->usage);
			return EXIT_USAGE;
		} else if (npos < 3)
			pos[npos++] = a;
		else {
			fprintf(stderr, "ares stats: too many arguments\n%s",
			    self->usage);
			return EXIT_USAGE;
		}
	}
	if (npos == 0 || strcmp(pos[0], "ci") != 0) {
		fprintf(stderr, "ares stats: %s\n%s", npos == 0 ? "missing "
		    "subcommand" : "unknown subcommand (only 'ci')",
		    self->usage);
		return EXIT_USAGE;
	}
	if (npos != 3) {
		fprintf(stderr, "ares stats ci: want K and N\n%s", self->usage);
		return EXIT_USAGE;
	}
	if (stats_parse_count(pos[1], UINT64_MAX, &k) == -1) {
		fprintf(stderr, "ares stats ci: K '%s' is not a non-negative "
		    "integer\n", pos[1]);
		return EXIT_USAGE;
	}
	if (stats_parse_count(pos[2], UINT64_MAX, &n) == -1) {
		fprintf(stderr, "ares stats ci: N '%s' is not a non-negative "
		    "integer\n", pos[2]);
		return EXIT_USAGE;
	}
	if (level_s != NULL && stats_parse_level(level_s, &level) == -1) {
		fprintf(stderr, "ares stats ci: --level '%s' is not a number "
		    "strictly between 0 and 1\n", level_s);
		return EXIT_USAGE;
	}
	if (n == 0 || k > n) {
		fprintf(stderr, "ares stats ci: %s (K=%llu, N=%llu)\n", n == 0 ?
		    "N must be at least 1" : "K must not exceed N",
		    (unsigned long long)k, (unsigned long long)n);
		return EXIT_USAGE;
	}
	if (stats_clopper_pearson(k, n, level, &lo, &hi, &e) == -1) {
		fprintf(stderr, "ares stats ci: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	printf("%.10f %.10f\n", lo, hi);
	return EXIT_CONTAINED;
}
