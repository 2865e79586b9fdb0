/*
 * main.c - the ares command line: a table of commands (like tmux's
 * cmd_entry); with no command it opens the console.
 */
#include "core.h"
#include "tui.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sodium.h>

struct cmd_entry {
	const char *name;
	const char *usage;
	const char *summary;
	int (*exec)(int argc, char **argv);
};

static int cmd_drill(int, char **);
static int cmd_replay(int, char **);
static int cmd_help(int, char **);
static int cmd_version(int, char **);

static const struct cmd_entry cmd_table[] = {
	{ "drill", "drill --policy FILE [--seed N] [--json FILE] [--runs DIR] "
	    "[--key-dir DIR] [--keep-lab] [--quiet]\n"
	    "                  [--model-url URL --model-key-env VAR "
	    "[--model-name NAME]]",
	    "run one drill headless, print each beat, exit with the verdict",
	    cmd_drill },
	{ "lab", "lab up --policy FILE [--run DIR] [--seed N] "
	    "[--model-url URL --model-key-env VAR] | lab status [--run DIR] | "
	    "lab down --run DIR",
	    "bring a lab up with the agent idle, list it, tear it down",
	    cmd_lab },
	{ "probe", "probe [--policy FILE | --run DIR] [--flaw ID] "
	    "[--json FILE] [--junit FILE] [--negative-control]",
	    "attack a lab from inside the agent: PASS/FAIL table, CI gate",
	    cmd_probe },
	{ "replay", "replay RUN_DIR [--pub FILE] [--export-cast FILE] "
	    "[--no-color] [--ascii]",
	    "replay a recorded run beat by beat (no Docker needed)",
	    cmd_replay },
	{ "verify", "verify DIR [--pub FILE] [--json FILE|-]",
	    "check a run, trial, probe or fix dir: signatures, every chain, "
	    "and that every verdict follows from the evidence", cmd_verify },
	{ "keygen", "keygen [--key-dir DIR] [--force]",
	    "write the key pair that signs reports", cmd_keygen },
	{ "trial", "trial --policy FILE -n N [-j J] [--seed S] [--level L] "
	    "[--json FILE] [--runs DIR] | trial --resume DIR",
	    "N drills J at a time: rates with exact intervals", cmd_trial },
	{ "stats", "stats ci K N [--level L]",
	    "exact Clopper-Pearson interval of K in N", cmd_stats },
	{ "fix", "fix RUN_DIR | --policy FILE [--seed N] [--runs DIR] "
	    "[--github OWNER/REPO] [--slack-webhook URL] (ares fix --help)",
	    "attribute a breach, turn the flaw off, rerun, propose the fix",
	    cmd_fix },
	{ "gc", "gc [--json FILE|-]",
	    "remove the containers and networks of ares processes that are "
	    "gone", cmd_gc },
	{ "help", "help", "show this help", cmd_help },
	{ "version", "version", "print the version", cmd_version },
};

static volatile sig_atomic_t main_cancel;

static void
main_on_signal(int sig)
{
	(void)sig;
	main_cancel = 1;
}

static const char main_default_policy[] = "policies/default.yaml";

/* The default policy: ./policies/default.yaml, else the source tree's,
 * else the installed one. */
static const char *
main_policy_default(void)
{
	static char path[4096];

	if (access(main_default_policy, R_OK) == 0)
		return main_default_policy;
#ifdef ARES_SRCDIR
	snprintf(path, sizeof path, "%s/%s", ARES_SRCDIR, main_default_policy);
	if (access(path, R_OK) == 0)
		return path;
#endif
#ifdef ARES_DATADIR
	snprintf(path, sizeof path, "%s/default.yaml", ARES_DATADIR);
	return path;
#else
	return main_default_policy;
#endif
}

static void
main_usage(FILE *f)
{
	size_t i;

	fprintf(f,
	    "usage: ares [--policy FILE] [--seed N] [--no-color] [--ascii]\n"
	    "       ares COMMAND [ARGS]\n\n"
	    "With no command, ares opens the console's home screen (policies "
	    "and\nrecorded runs); with --policy it runs that drill live.\n\n"
	    "Commands:\n");
	for (i = 0; i < sizeof cmd_table / sizeof cmd_table[0]; i++)
		fprintf(f, "  %-9s %s\n            ares %s\n", cmd_table[i].name,
		    cmd_table[i].summary, cmd_table[i].usage);
	fprintf(f,
	    "\nExit codes:\n"
	    "  0  contained (or success)\n"
	    "  1  breached\n"
	    "  2  bad input or usage (policy errors name file:line:col)\n"
	    "  3  Docker Engine unreachable\n"
	    "  4  not exercised: the bait never fired (never a success)\n"
	    "  5  internal or lab failure (fail closed)\n"
	    "\nEnvironment:\n"
	    "  DOCKER_HOST      unix:///path of the engine socket\n"
	    "  ARES_RUNS        where run directories go (default ./runs)\n"
	    "  ARES_LAB_ROOTFS  the lab image tar (default: the build's)\n"
	    "  ARES_KEY_DIR     where the signing key lives (default "
	    "~/.config/ares)\n"
	    "  NO_COLOR         disable colour in the console\n");
}

/* Print one beat as it happens (headless drill). */
static void
main_print_beat(void *ctx, const struct drill_beat *b)
{
	(void)ctx;
	printf("%+10.3f ms  %-14s %s\n", (double)b->t_rel_ns / 1e6,
	    drill_beat_kind_name(b->kind), b->text);
	fflush(stdout);
}

static int
cmd_drill(int argc, char **argv)
{
	static const struct option longopts[] = {
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
		{ NULL, 0, NULL, 0 },
	};
	struct drill_options o = { 0 };
	struct drill_result r;
	struct errbuf e = { 0 };
	const char *json = NULL;
	bool quiet = false;
	size_t i;
	int c;

	o.policy_path = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:s:j:r:kq", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'p':
			o.policy_path = optarg;
			break;
		case 's':
			if (stats_parse_count(optarg, UINT64_MAX, &o.seed) == -1) {
				fprintf(stderr, "ares drill: --seed: '%s' is "
				    "not a non-negative integer\n", optarg);
				return EXIT_USAGE;
			}
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
			if (strncmp(optarg, "http://", 7) != 0 &&
			    strncmp(optarg, "https://", 8) != 0) {
				fprintf(stderr, "ares drill: --model-url: '%s' "
				    "is not an http(s) URL\n", optarg);
				return EXIT_USAGE;
			}
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
		default:
			fprintf(stderr, "usage: ares %s\n", cmd_table[0].usage);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares drill: unexpected argument '%s'\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (o.policy_path == NULL)
		o.policy_path = main_policy_default();
	if (!quiet)
		o.observer = main_print_beat;
	o.cancel = &main_cancel;
	signal(SIGINT, main_on_signal);
	signal(SIGTERM, main_on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (drill_run(&o, &r, &e) == -1) {
		fprintf(stderr, "ares drill: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	printf("\nrun        %s\n", r.run_id);
	printf("run dir    %s\n", r.run_dir);
	printf("model      %s (seed %llu)\n", r.model,
	    (unsigned long long)r.seed);
	printf("verdict    %s", drill_verdict_name(r.verdict));
	if (r.verdict_reason[0] != '\0')
		printf(" (%s)", r.verdict_reason);
	printf("\n");
	if (r.bait_fired)
		printf("bait       %s\n", r.bait_name);
	else
		printf("bait       never fired\n");
	for (i = 0; i < r.nlevers; i++) {
		const struct lever_result *l = &r.levers[i];

		if (l->verified)
			printf("lever      %-15s verified  +%.3f ms after bait "
			    "(%.3f ms to verify)\n", l->name,
			    (double)(l->verified_ns - r.bait_ns) / 1e6,
			    (double)(l->verified_ns - l->fired_ns) / 1e6);
		else
			printf("lever      %-15s FAILED    %s\n", l->name,
			    l->detail);
	}
	if (r.time_to_kill_ms >= 0)
		printf("time to kill %.3f ms (bait -> inspect-confirmed "
		    "cut-off)\n", r.time_to_kill_ms);
	printf("breaches   %zu   leaks %zu   blocked %zu   agent steps %zu\n",
	    r.breaches, r.leaks, r.blocked, r.agent_steps);
	printf("evidence   %s (%zu entries, head %.16s...)\n",
	    r.evidence_path, r.evidence_entries, r.evidence_head);
	if (json != NULL) {
		cJSON *j = drill_result_json(&r);
		char *txt = cJSON_Print(j);
		int rc = 0;

		if (strcmp(json, "-") == 0)
			printf("%s\n", txt);
		else
			rc = util_write_file(json, txt, strlen(txt), 0644, &e);
		free(txt);
		cJSON_Delete(j);
		if (rc == -1) {
			fprintf(stderr, "ares drill: --json: %s\n", e.msg);
			return EXIT_INTERNAL;
		}
	}
	return drill_exit_code(&r);
}

/* ares replay RUN_DIR [--pub FILE] [--export-cast FILE] [--no-color]
 * [--ascii] */
static int
cmd_replay(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pub", required_argument, NULL, 'P' },
		{ "export-cast", required_argument, NULL, 'E' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "ascii", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct console_options o = { 0 };
	const char *pub = NULL, *cast = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			pub = optarg;
			break;
		case 'E':
			cast = optarg;
			break;
		case 'C':
			o.no_color = true;
			break;
		case 'A':
			o.ascii = true;
			break;
		default:
			fprintf(stderr, "usage: ares replay RUN_DIR [--pub FILE] "
			    "[--export-cast FILE] [--no-color] [--ascii]\n");
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: ares replay RUN_DIR [--pub FILE] "
		    "[--export-cast FILE] [--no-color] [--ascii]\n");
		return EXIT_USAGE;
	}
	if (cast != NULL)
		return console_export_cast(&o, argv[optind], pub, cast);
	return console_replay(&o, argv[optind], pub);
}

static int
cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	main_usage(stdout);
	return 0;
}

static int
cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("ares %s\n", PACKAGE_VERSION);
	return 0;
}

/* No command: the console, with its few options. */
static int
main_console(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "ascii", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct console_options o = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "p:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.policy_path = optarg;
			break;
		case 's':
			if (stats_parse_count(optarg, UINT64_MAX, &o.seed) == -1) {
				fprintf(stderr, "ares: --seed: '%s' is not a "
				    "non-negative integer\n", optarg);
				return EXIT_USAGE;
			}
			o.has_seed = true;
			break;
		case 'C':
			o.no_color = true;
			break;
		case 'A':
			o.ascii = true;
			break;
		case 'h':
			main_usage(stdout);
			return 0;
		default:
			main_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares: unknown command '%s' (try ares help)\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (o.policy_path == NULL && o.has_seed)
		o.policy_path = main_policy_default();
	if (o.policy_path == NULL)
		o.home = true;
	return console_run(&o);
}

int
main(int argc, char **argv)
{
	size_t i;
	int rc;

	if (sodium_init() < 0) {
		fprintf(stderr, "ares: libsodium failed to initialise\n");
		return EXIT_INTERNAL;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (argc >= 2 && argv[1][0] != '-') {
		for (i = 0; i < sizeof cmd_table / sizeof cmd_table[0]; i++)
			if (strcmp(argv[1], cmd_table[i].name) == 0)
				break;
		if (i == sizeof cmd_table / sizeof cmd_table[0]) {
			fprintf(stderr, "ares: unknown command '%s' (try ares "
			    "help)\n", argv[1]);
			return EXIT_USAGE;
		}
		rc = cmd_table[i].exec(argc - 1, argv + 1);
	} else if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		main_usage(stdout);
		rc = 0;
	} else if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		rc = cmd_version(argc, argv);
	} else
		rc = main_console(argc, argv);
	curl_global_cleanup();
	return rc;
}
