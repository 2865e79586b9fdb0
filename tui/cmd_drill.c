/*
 * cmd_drill.c - `ares drill`: one drill headless (docs/cli-drill.md).  All
 * the work is in core/drill.c; this parses options, prints each beat as
 * it happens and a summary, and exits with the verdict.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_drill_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_drill_longopts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "seed", required_argument, NULL, 's' },
	{ "json", required_argument, NULL, 'j' },
	{ "runs", required_argument, NULL, 'r' },
	{ "keep-lab", no_argument, NULL, 'k' },
	{ "key-dir", required_argument, NULL, 'K' },
	{ "model-url", required_argument, NULL, 'U' },
	{ "model-key-env", required_argument, NULL, 'E' },
	{ "model-name", required_argument, NULL, 'N' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "present", optional_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_drill_entry = {
	.name = "drill",
	.optstring = "p:s:j:r:kqh",
	.longopts = cmd_drill_longopts,
	.summary = "run one drill headless, print each beat, exit with the "
	    "verdict",
	.usage =
	    "usage: ares drill --policy FILE [--seed N] [--json FILE|-] "
	    "[--runs DIR]\n"
	    "                  [--key-dir DIR] [--keep-lab] [--quiet] "
	    "[--present[=MS]]\n"
	    "                  [--model-url URL --model-key-env VAR "
	    "[--model-name NAME]]\n",
	.exec = cmd_drill_exec,
};

static volatile sig_atomic_t cmd_drill_cancel;

/* SIGINT/SIGTERM: the drill stops and still tears its lab down. */
static void
cmd_drill_on_signal(int sig)
{
	(void)sig;
	cmd_drill_cancel = 1;
}

/* Print one beat as it happens (text already sanitized by core). */
static void
cmd_drill_beat(void *ctx, const struct drill_beat *b)
{
	(void)ctx;
	printf("%+10.3f ms  %-14s %s\n", (double)b->t_rel_ns / 1e6,
	    drill_beat_kind_name(b->kind), b->text);
	fflush(stdout);
}

/* The summary after the drill: run, verdict, bait, levers, counts. */
static void
cmd_drill_print(const struct drill_result *r, unsigned pace_ms)
{
	size_t i;

	printf("\nrun        %s\n", r->run_id);
	printf("run dir    %s\n", r->run_dir);
	printf("model      %s (seed %llu)\n", r->model,
	    (unsigned long long)r->seed);
	printf("verdict    %s", drill_verdict_name(r->verdict));
	if (r->verdict_reason[0] != '\0')
		printf(" (%s)", r->verdict_reason);
	printf("\n");
	if (r->bait_fired)
		printf("bait       %s\n", r->bait_name);
	else
		printf("bait       never fired\n");
	for (i = 0; i < r->nlevers; i++) {
		const struct lever_result *l = &r->levers[i];

		if (l->verified)
			printf("lever      %-15s verified  +%.3f ms after bait "
			    "(%.3f ms to verify)\n", l->name,
			    (double)(l->verified_ns - r->bait_ns) / 1e6,
			    (double)(l->verified_ns - l->fired_ns) / 1e6);
		else
			printf("lever      %-15s FAILED    %s\n", l->name,
			    l->detail);
	}
	if (r->time_to_kill_ms >= 0)
		printf("time to kill %.3f ms (bait -> inspect-confirmed "
		    "cut-off)\n", r->time_to_kill_ms);
	if (pace_ms > 0)
		printf("paced      presenter mode: each model turn held %u ms "
		    "at the gateway (lab.json \"pace\")\n", pace_ms);
	printf("breaches   %zu   leaks %zu   blocked %zu   agent steps %zu\n",
	    r->breaches, r->leaks, r->blocked, r->agent_steps);
	printf("evidence   %s (%zu entries, head %.16s...)\n",
	    r->evidence_path, r->evidence_entries, r->evidence_head);
}

/* ares drill [options]: the exit code is drill_exit_code()'s, or 2
 * (usage), errbuf_exit_code() when the drill could not run, 5 when
 * --json could not be written. */
static int
cmd_drill_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	const char *json = NULL;
	bool quiet = false;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'p':
			o.policy_path = optarg;
			break;
		case 's':
			if (cmd_opt_seed("ares drill", optarg, false,
			    &o.seed) == -1)
				return EXIT_USAGE;
			o.has_seed = true;
			break;
		case 'j':
			json = optarg;
			break;
		case 'r':
			o.runs_dir = optarg;
			break;
		case 'k':
			o.keep_lab = true;
			break;
		case 'K':
			o.key_dir = optarg;
			break;
		case 'U':
			if (cmd_opt_url("ares drill", optarg) == -1)
				return EXIT_USAGE;
			o.model_url = optarg;
			break;
		case 'E':
			o.model_key_env = optarg;
			break;
		case 'N':
			o.model_name = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'P':
			if (cmd_opt_present("ares drill", optarg,
			    &o.pace_ms) == -1)
				return EXIT_USAGE;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares drill: unexpected argument '%s'\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (o.policy_path == NULL)
		o.policy_path = cmd_policy_default();
	if (!quiet)
		o.observer = cmd_drill_beat;
	o.cancel = &cmd_drill_cancel;
	signal(SIGINT, cmd_drill_on_signal);
	signal(SIGTERM, cmd_drill_on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* a remote engine is fine; what its lab cannot have is refused
	 * here, before the run directory is made (docs/engine.md) */
	if ((rc = cmd_require_lab_engine("ares drill", o.policy_path,
	    o.model_url)) != 0)
		return rc;
	if (drill_run(&o, &r, &e) == -1) {
		fprintf(stderr, "ares drill: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	cmd_drill_print(&r, o.pace_ms);
	if (json != NULL &&
	    cmd_json_write(drill_result_json(&r), json, &e) == -1) {
		fprintf(stderr, "ares drill: --json: %s\n", e.msg);
		return EXIT_INTERNAL;
	}
	return drill_exit_code(&r);
}
