/*
 * cmd_gc.c - ares gc [--json FILE|-] (docs/cli-gc.md).
 *
 * One gc_sweep of the engine ($DOCKER_HOST): every container and network
 * with an ares label whose owner is gone (core/gc.c) is removed, with the
 * host firewall rules of its run.  Prints one line per object removed or
 * kept back by an error, then a summary.
 * Exit codes: 0 nothing failed, 2 usage, 3 engine unreachable, 5 an
 * object could not be removed.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_gc_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_gc_longopts[] = {
	{ "json", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_gc_entry = {
	.name = "gc",
	.optstring = "h",
	.longopts = cmd_gc_longopts,
	.summary = "remove the containers and networks of ares processes that "
	    "are gone",
	.usage = "usage: ares gc [--json FILE|-]\n",
	.exec = cmd_gc_exec,
};

/* ares gc [--json FILE|-]: 0 nothing failed, 2 usage, 3 no engine, 5
 * something stayed. */
static int
cmd_gc_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct gc_report *r;
	struct errbuf e = { 0 };
	struct docker *d;
	const char *json = NULL;
	char *txt;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'j':
			json = optarg;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares gc: unexpected argument '%s'\n%s",
		    argv[optind], self->usage);
		return EXIT_USAGE;
	}
	/* An owner's liveness is this machine's /proc: on an engine others
	 * share it cannot tell their live labs from dead ones. */
	if (cmd_require_local("ares gc",
	    "this machine's processes to tell a live owner from a dead one") != 0)
		return EXIT_USAGE;
	d = docker_connect(NULL, &e);
	if (d == NULL) {
		fprintf(stderr, "ares gc: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	r = xcalloc(1, sizeof *r);
	if (gc_sweep(d, r, &e) == -1) {
		docker_close(d);
		free(r);
		fprintf(stderr, "ares gc: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	docker_close(d);
	txt = gc_report_text("ares", r);
	if (txt != NULL)
		fputs(txt, json != NULL && strcmp(json, "-") == 0 ? stderr :
		    stdout);
	free(txt);
	if (json == NULL || strcmp(json, "-") != 0)
		printf("gc: %zu removed, %zu could not be removed, %zu kept "
		    "(owner alive)%s\n", r->nremoved, r->nfailed, r->kept,
		    r->truncated ? "; more objects than one sweep lists: run "
		    "it again" : "");
	rc = r->nfailed > 0 ? EXIT_INTERNAL : 0;
	if (json != NULL && cmd_json_write(gc_report_json(r), json, &e) == -1) {
		fprintf(stderr, "ares gc: --json: %s\n", e.msg);
		rc = EXIT_INTERNAL;
	}
	free(r);
	return rc;
}
