/*
 * main.c - the ares command line: argv[1] names a command of cmd.c's
 * table (like tmux's cmd_entry), else the global options open the
 * console.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <sodium.h>

/* No command: the console, with its few options.  console_run()'s exit
 * code, or 0 for --help, 2 on bad usage. */
static int
main_console(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "ascii", no_argument, NULL, 'A' },
		{ "present", optional_argument, NULL, 'P' },
		{ "demo", no_argument, NULL, 'D' },
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
			if (cmd_opt_seed("ares", optarg, false, &o.seed) == -1)
				return EXIT_USAGE;
			o.has_seed = true;
			break;
		case 'C':
			o.no_color = true;
			break;
		case 'A':
			o.ascii = true;
			break;
		case 'P':
			if (cmd_opt_present("ares", optarg, &o.present_ms) == -1)
				return EXIT_USAGE;
			break;
		case 'D':
			o.demo = true;
			break;
		case 'h':
			cmd_help_all(stdout);
			return 0;
		default:
			cmd_help_all(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares: unknown command '%s' (try ares help)\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (o.demo && (o.policy_path != NULL || o.has_seed)) {
		fprintf(stderr, "ares: --demo opens the default drill; it takes "
		    "no --policy or --seed\n");
		return EXIT_USAGE;
	}
	if (o.demo && o.present_ms == 0)
		o.present_ms = PACE_PRESENT_MS;   /* an audience follows it */
	if (o.policy_path == NULL && o.has_seed)
		o.policy_path = cmd_policy_default();
	if (o.policy_path == NULL)
		o.home = true;
	return console_run(&o);
}

/* ares COMMAND [ARGS] (cmd.c's table), --help, --version, or the
 * console. */
int
main(int argc, char **argv)
{
	const struct cmd_entry *cmd;
	int rc;

	if (sodium_init() < 0) {
		fprintf(stderr, "ares: libsodium failed to initialise\n");
		return EXIT_INTERNAL;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (argc >= 2 && argv[1][0] != '-') {
		cmd = cmd_find(argv[1]);
		if (cmd == NULL) {
			fprintf(stderr, "ares: unknown command '%s' (try ares "
			    "help)\n", argv[1]);
			return EXIT_USAGE;
		}
		rc = cmd->exec(cmd, argc - 1, argv + 1);
	} else if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		cmd_help_all(stdout);
		rc = 0;
	} else if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		cmd = cmd_find("version");
		rc = cmd->exec(cmd, argc - 1, argv + 1);
	} else
		rc = main_console(argc, argv);
	curl_global_cleanup();
	return rc;
}
