/*
 * cmd_gate.c - ares gate (docs/cli-gate.md): the access diff of BASE ->
 * HEAD, the battery on HEAD, and when HEAD widens access the negative
 * control of what it gained and a short trial; gate.md, gate.xml and a
 * signed gate.json in the gate dir.  Exit codes: 0 HEAD opens no breach
 * path BASE did not, 1 it does (or the gate is blind, or a breach path
 * cannot be excluded), 2 usage / bad input, 3 no engine, 4 nothing was
 * exercised, 5 a lab could not come up (or the run was stopped).
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_gate_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_gate_longopts[] = {
	{ "git-base", required_argument, NULL, 'g' },
	{ "service", required_argument, NULL, 's' },
	{ "agent", required_argument, NULL, 'a' },
	{ "full-negative-control", no_argument, NULL, 'F' },
	{ "out", required_argument, NULL, 'o' },
	{ "runs", required_argument, NULL, 'R' },
	{ "key-dir", required_argument, NULL, 'K' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The usage is docs/cli-gate.md's synopsis. */
const struct cmd_entry cmd_gate_entry = {
	.name = "gate",
	.optstring = "g:s:a:Fo:R:K:n:j:h",
	.longopts = cmd_gate_longopts,
	.summary = "gate a change: the access diff of BASE -> HEAD, probed and "
	    "drilled",
	.usage =
	    "usage: ares gate BASE HEAD [--service NAME] [--agent poyo|image] "
	    "[-n N] [-j J]\n"
	    "                 [--full-negative-control] [--out DIR] "
	    "[--runs DIR] [--key-dir DIR]\n"
	    "       ares gate --git-base REF FILE [--service NAME] [options as "
	    "above]\n",
	.exec = cmd_gate_exec,
};

static volatile sig_atomic_t cmd_gate_cancel;

/* SIGINT/SIGTERM: start no further row, lab or run; what ran is signed. */
static void
cmd_gate_on_signal(int sig)
{
	(void)sig;
	cmd_gate_cancel = 1;
}

/* Progress on stderr. */
static void
cmd_gate_progress(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "gate: %s\n", line);
}

/* ares gate ...: the exit codes above. */
static int
cmd_gate_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct gate_options o = { .progress = cmd_gate_progress,
	    .cancel = &cmd_gate_cancel };
	struct gate *g;
	struct errbuf e = { 0 };
	uint64_t v;
	int c, rc, nargs;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'g': o.git_ref = optarg; break;
		case 's': o.service = optarg; break;
		case 'a':
			if (strcmp(optarg, "poyo") != 0 &&
			    strcmp(optarg, "image") != 0) {
				fprintf(stderr, "ares gate: --agent: poyo or "
				    "image\n%s", self->usage);
				return EXIT_USAGE;
			}
			o.agent = optarg;
			break;
		case 'F': o.full_nc = true; break;
		case 'o': o.out_dir = optarg; break;
		case 'R': o.runs_dir = optarg; break;
		case 'K': o.key_dir = optarg; break;
		case 'n':
			if (stats_parse_count(optarg, 1000, &v) == -1 || v == 0) {
				fprintf(stderr, "ares gate: -n: 1..1000\n%s",
				    self->usage);
				return EXIT_USAGE;
			}
			o.n = (size_t)v;
			break;
		case 'j':
			if (stats_parse_count(optarg, TRIAL_MAX_JOBS, &v) == -1 ||
			    v == 0) {
				fprintf(stderr, "ares gate: -j: 1..%d\n%s",
				    TRIAL_MAX_JOBS, self->usage);
				return EXIT_USAGE;
			}
			o.jobs = (size_t)v;
			break;
		}
	}
	nargs = argc - optind;
	if (o.git_ref != NULL ? nargs != 1 : nargs != 2) {
		fprintf(stderr, "ares gate: %s\n%s", o.git_ref != NULL ?
		    "--git-base REF takes one FILE" : "want BASE and HEAD",
		    self->usage);
		return EXIT_USAGE;
	}
	if (o.agent != NULL && o.service == NULL) {
		fprintf(stderr, "ares gate: --agent applies to Compose inputs "
		    "(--service)\n%s", self->usage);
		return EXIT_USAGE;
	}
	if (o.git_ref != NULL)
		o.head_path = argv[optind];
	else {
		o.base_path = argv[optind];
		o.head_path = argv[optind + 1];
	}
	signal(SIGINT, cmd_gate_on_signal);
	signal(SIGTERM, cmd_gate_on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (cmd_require_local("ares gate", NULL) != 0)
		return EXIT_USAGE;
	g = xcalloc(1, sizeof *g);
	if (gate_run(&o, g, &e) == -1) {
		fprintf(stderr, "ares gate: %s\n", e.msg);
		rc = errbuf_exit_code(&e);
		gate_free(g);
		free(g);
		return rc;
	}
	printf("%s\n", g->sentence);
	if (g->new_rows[0])
		printf("rows that now fail: %s\n", g->new_rows);
	printf("gate dir   %s\n", g->dir);
	printf("wrote      gate.md, gate.xml, gate.json (+ gate.json.minisig, "
	    "ares.pub)\n");
	printf("check      ares verify %s\n", g->dir);
	printf("exit %d (%s)\n", g->exit_code, g->result);
	rc = g->exit_code;
	gate_free(g);
	free(g);
	return rc;
}
