/*
 * cmd_replay.c - `ares replay RUN_DIR`: a recorded run on the console's
 * replay screen, or (--export-cast) rendered into an asciicast file
 * (docs/cli-replay.md).  Needs no Docker.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>

static int cmd_replay_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_replay_longopts[] = {
	{ "pub", required_argument, NULL, 'P' },
	{ "export-cast", required_argument, NULL, 'E' },
	{ "no-color", no_argument, NULL, 'C' },
	{ "ascii", no_argument, NULL, 'A' },
	{ "present", no_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_replay_entry = {
	.name = "replay",
	.optstring = "h",
	.longopts = cmd_replay_longopts,
	.summary = "replay a recorded run beat by beat (no Docker needed)",
	.usage = "usage: ares replay RUN_DIR|TRIAL_DIR|FIX_DIR [--pub FILE] "
	    "[--export-cast FILE] [--no-color] [--ascii]\n"
	    "                   [--present]\n",
	.exec = cmd_replay_exec,
};

/* ares replay RUN_DIR [--pub FILE] [--export-cast FILE] [--no-color]
 * [--ascii]: console_replay()'s or console_export_cast()'s exit code, 2
 * on bad usage. */
static int
cmd_replay_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct console_options o = { 0 };
	const char *pub = NULL, *cast = NULL;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
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
		case 'S':
			o.present_ms = PACE_PRESENT_MS;   /* plays at once */
			break;
		}
	}
	if (optind + 1 != argc) {
		cmd_usage(self, stderr);
		return EXIT_USAGE;
	}
	if (cast != NULL)
		return console_export_cast(&o, argv[optind], pub, cast);
	return console_replay(&o, argv[optind], pub);
}
