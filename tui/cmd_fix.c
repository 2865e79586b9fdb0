/*
 * cmd_fix.c - `ares fix`: the fix loop headless (docs/cli-fix.md).  All the
 * work is in core/fix.c; this parses options, prints each beat as it
 * happens and a summary, and maps the outcome to the exit code.
 */
#include "core.h"
#include "tui.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t cmd_fix_cancel;

/* SIGINT/SIGTERM: the loop stops and still tears its labs down. */
static void
cmd_fix_on_signal(int sig)
{
	(void)sig;
	cmd_fix_cancel = 1;
}

/* Print one beat (already sanitized by core). */
static void
cmd_fix_beat(void *ctx, double t_ms, const char *type, const char *text)
{
	(void)ctx;
	printf("%+10.1f ms  %-14s %s\n", t_ms, type, text);
	fflush(stdout);
}

static int cmd_fix_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_fix_longopts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "seed", required_argument, NULL, 's' },
	{ "pub", required_argument, NULL, 'P' },
	{ "runs", required_argument, NULL, 'r' },
	{ "key-dir", required_argument, NULL, 'K' },
	{ "heldout", required_argument, NULL, 'H' },
	{ "max-seeds", required_argument, NULL, 'S' },
	{ "max-iterations", required_argument, NULL, 'I' },
	{ "json", required_argument, NULL, 'j' },
	{ "github", required_argument, NULL, 'g' },
	{ "github-api", required_argument, NULL, 'a' },
	{ "base", required_argument, NULL, 'b' },
	{ "slack-webhook", required_argument, NULL, 'w' },
	{ "push", required_argument, NULL, 'u' },
	{ "slack-channel", required_argument, NULL, 'c' },
	{ "slack-api", required_argument, NULL, 'A' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_fix_entry = {
	.name = "fix",
	.optstring = "p:s:qh",
	.longopts = cmd_fix_longopts,
	.summary = "attribute a breach, turn the flaw off, rerun, propose the "
	    "fix",
	.usage =
	    "usage: ares fix RUN_DIR [--policy FILE] [--pub FILE] [options]\n"
	    "       ares fix --policy FILE [--seed N] [options]\n"
	    "options: [--runs DIR] [--key-dir DIR] [--heldout VARIANT]\n"
	    "         [--max-seeds N] [--max-iterations N] [--json FILE|-] "
	    "[--quiet]\n"
	    "         [--push REMOTE] [--github OWNER/REPO [--github-api URL] "
	    "[--base BRANCH]]\n"
	    "         [--slack-webhook URL] [--slack-channel C ...] "
	    "[--slack-api URL]\n",
	.exec = cmd_fix_exec,
};

/* A small positive integer option.  -1 on bad input. */
static int
cmd_fix_int(const char *s, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > max)
		return -1;
	return (int)v;
}

/* ares fix RUN_DIR | --policy FILE [...]: fix_exit_code()'s exit code, or
 * 2 (usage), errbuf_exit_code() when the loop could not run, 5 when
 * --json could not be written. */
static int
cmd_fix_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct fix_options o = { 0 };
	struct fix_result *r;
	struct errbuf e = { 0 };
	const char *json = NULL;
	bool quiet = false;
	size_t i;
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
			if (cmd_opt_seed("ares fix", optarg, true, &o.seed) == -1)
				return EXIT_USAGE;
			o.has_seed = true;
			break;
		case 'P':
			o.pub_path = optarg;
			break;
		case 'r':
			o.runs_dir = optarg;
			break;
		case 'K':
			o.key_dir = optarg;
			break;
		case 'H':
			o.heldout = optarg;
			break;
		case 'S':
			if ((o.max_seeds = cmd_fix_int(optarg,
			    FIX_MAX_SEEDS)) == -1) {
				fprintf(stderr, "ares fix: --max-seeds: 1..%d\n",
				    FIX_MAX_SEEDS);
				return EXIT_USAGE;
			}
			break;
		case 'I':
			if ((o.max_iterations = cmd_fix_int(optarg,
			    FIX_MAX_ITERATIONS)) == -1) {
				fprintf(stderr, "ares fix: --max-iterations: "
				    "1..%d\n", FIX_MAX_ITERATIONS);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			json = optarg;
			break;
		case 'g':
			o.github_repo = optarg;
			break;
		case 'a':
			o.github_api = optarg;
			break;
		case 'b':
			o.github_base = optarg;
			break;
		case 'w':
			o.slack_webhook = optarg;
			break;
		case 'u':
			if (optarg[0] == '\0' || optarg[0] == '-') {
				fprintf(stderr, "ares fix: --push: '%s' is no "
				    "remote\n", optarg);
				return EXIT_USAGE;
			}
			o.push_remote = optarg;
			break;
		case 'c':
			if (!fix_slack_channel_ok(optarg)) {
				fprintf(stderr, "ares fix: --slack-channel: '%s' "
				    "is not a channel id or name (1..80 of "
				    "A-Z a-z 0-9 # . _ -)\n", optarg);
				return EXIT_USAGE;
			}
			if (o.nslack_channels >= FIX_MAX_SLACK_CHANNELS) {
				fprintf(stderr, "ares fix: --slack-channel: at "
				    "most %d\n", FIX_MAX_SLACK_CHANNELS);
				return EXIT_USAGE;
			}
			o.slack_channels[o.nslack_channels++] = optarg;
			break;
		case 'A':
			o.slack_api = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		}
	}
	if (optind < argc)
		o.run_dir = argv[optind++];
	if (optind != argc) {
		fprintf(stderr, "ares fix: unexpected argument '%s'\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (o.run_dir == NULL && o.policy_path == NULL) {
		cmd_usage(self, stderr);
		return EXIT_USAGE;
	}
	if (o.run_dir != NULL && o.has_seed) {
		fprintf(stderr, "ares fix: --seed goes with --policy, not with "
		    "RUN_DIR (the run's seed is used)\n");
		return EXIT_USAGE;
	}
	if (o.heldout != NULL && variant_find(o.heldout) == NULL) {
		fprintf(stderr, "ares fix: --heldout: unknown variant '%s' "
		    "(known: %s)\n", o.heldout, variant_ids());
		return EXIT_USAGE;
	}
	if (!quiet)
		o.observer = cmd_fix_beat;
	o.cancel = &cmd_fix_cancel;
	signal(SIGINT, cmd_fix_on_signal);
	signal(SIGTERM, cmd_fix_on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (cmd_require_local("ares fix", NULL) != 0)
		return EXIT_USAGE;
	r = xcalloc(1, sizeof *r);
	if (fix_run(&o, r, &e) == -1) {
		fprintf(stderr, "ares fix: %s\n", e.msg);
		fix_result_free(r);
		free(r);
		return errbuf_exit_code(&e);
	}
	printf("\nfix        %s\n", r->fix_id);
	printf("fix dir    %s\n", r->fix_dir);
	printf("outcome    %s: %s\n", fix_outcome_name(r->outcome), r->reason);
	for (i = 0; i < r->nremoved; i++)
		printf("turned off %s\n", r->removed[i]);
	for (i = 0; i < r->nruns; i++)
		printf("run        %-12s %s  %-12s seed %-6llu %s\n",
		    r->runs[i].role, r->runs[i].run_id, r->runs[i].variant,
		    (unsigned long long)r->runs[i].seed, r->runs[i].verdict);
	if (r->heldout_gen)
		printf("held-out   %s, and generated %s (variant_seed %llu: %s, "
		    "service %s; ares variant gen --seed %llu)\n",
		    r->heldout_shipped, r->heldout_gen_id,
		    (unsigned long long)r->heldout_gen_seed,
		    r->heldout_gen_company, r->heldout_gen_service,
		    (unsigned long long)r->heldout_gen_seed);
	if (r->git.committed)
		printf("branch     %s (commit %.12s in %s)\n", r->git.branch,
		    r->git.commit, r->git.toplevel);
	if (r->pushed)
		printf("pushed     %s\n", r->git.branch);
	if (r->pr_path[0] != '\0')
		printf("pr         %s%s%s\n", r->pr_path,
		    r->pr_url[0] ? "  " : "", r->pr_url);
	if (r->delivery_failed)
		printf("not sent   a push, pull request or Slack post that was "
		    "asked for failed (see the beats)\n");
	if (json != NULL &&
	    cmd_json_write(fix_result_json(r), json, &e) == -1) {
		fprintf(stderr, "ares fix: --json: %s\n", e.msg);
		fix_result_free(r);
		free(r);
		return EXIT_INTERNAL;
	}
	rc = fix_exit_code(r);
	fix_result_free(r);
	free(r);
	return rc;
}
