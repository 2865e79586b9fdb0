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

#define CMD_GC_USAGE "usage: ares gc [--json FILE|-]\n"

int
cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gc_report *r;
	struct errbuf e = { 0 };
	struct docker *d;
	const char *json = NULL;
	char *txt;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = optarg;
			break;
		case 'h':
			fputs(CMD_GC_USAGE, stdout);
			return 0;
		default:
			fputs(CMD_GC_USAGE, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares gc: unexpected argument '%s'\n%s",
		    argv[optind], CMD_GC_USAGE);
		return EXIT_USAGE;
	}
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
	if (json != NULL) {
		cJSON *j = gc_report_json(r);
		char *s = cJSON_Print(j);

		cJSON_Delete(j);
		if (strcmp(json, "-") == 0)
			printf("%s\n", s);
		else if (util_write_file(json, s, strlen(s), 0644, &e) == -1) {
			fprintf(stderr, "ares gc: --json: %s\n", e.msg);
			rc = EXIT_INTERNAL;
		}
		free(s);
	}
	free(r);
	return rc;
}
