/*
 * cmd_report.c - `ares report DIR --html FILE`: one self-contained HTML
 * page of a drill run dir, a trial, probe, gate or fix dir
 * (docs/cli-report.md).  The page is made in core (report_html.c); this
 * loads Poyo's sprite sheet and writes the file.  Needs no Docker.
 */
#include "core.h"
#include "sprites.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmd_report_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_report_longopts[] = {
	{ "html", required_argument, NULL, 'H' },
	{ "pub", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.optstring = "h",
	.longopts = cmd_report_longopts,
	.summary = "write a run, trial, probe, gate or fix dir as one "
	    "self-contained HTML page (no Docker needed)",
	.usage = "usage: ares report RUN_DIR|TRIAL_DIR|PROBE_RUN_DIR|GATE_DIR|"
	    "FIX_DIR --html FILE|- [--pub FILE]\n",
	.exec = cmd_report_exec,
};

/* ares report DIR --html FILE|- [--pub FILE]: 0 written, 2 usage, a dir
 * that cannot be read, an unusable --pub or a FILE that is no regular
 * file, 5 the page could not be written. */
static int
cmd_report_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct report_html_options o = { 0 };
	struct sprite_sheet *sheet;
	struct errbuf e = { 0 }, se = { 0 };
	const char *html = NULL, *dir;
	char base[4096];
	struct stat st;
	size_t len;
	char *page, *slash;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'H':
			html = optarg;
			break;
		case 'P':
			o.pub_path = optarg;
			break;
		}
	}
	if (argc - optind != 1 || html == NULL || html[0] == '\0') {
		fprintf(stderr, "ares report: %s\n%s", argc - optind == 0 ?
		    "missing RUN_DIR" : argc - optind > 1 ?
		    "too many arguments" : "missing --html FILE", self->usage);
		return EXIT_USAGE;
	}
	dir = argv[optind];
	if (strcmp(html, "-") != 0) {
		if (lstat(html, &st) == 0 && !S_ISREG(st.st_mode)) {
			fprintf(stderr, "ares report: %s: not a regular file "
			    "(refusing to replace it)\n", html);
			return EXIT_USAGE;
		}
		snprintf(base, sizeof base, "%s", html);
		slash = strrchr(base, '/');
		if (slash == NULL)
			snprintf(base, sizeof base, ".");
		else if (slash == base)
			base[1] = '\0';
		else
			*slash = '\0';
		o.link_base = base;
	}
	sheet = sprite_sheet_load(sprite_default_path(), &se);
	if (sheet == NULL)
		fprintf(stderr, "ares report: no sprite (%s): the page shows "
		    "Poyo's pose by name only\n", se.msg);
	o.sheet = sheet;
	page = report_html(dir, &o, &len, &e);
	sprite_sheet_free(sheet);
	if (page == NULL) {
		fprintf(stderr, "ares report: %s\n", e.msg);
		return EXIT_USAGE;
	}
	rc = EXIT_CONTAINED;
	if (strcmp(html, "-") == 0) {
		if (fwrite(page, 1, len, stdout) != len || fflush(stdout) != 0) {
			fprintf(stderr, "ares report: writing stdout failed\n");
			rc = EXIT_INTERNAL;
		}
	} else if (util_write_file(html, page, len, 0644, &e) == -1) {
		fprintf(stderr, "ares report: %s\n", e.msg);
		rc = EXIT_INTERNAL;
	} else {
		printf("wrote %s (%s, %zu bytes); open it in any browser, "
		    "offline\n", html,
		    report_html_kind_name(report_html_dir_kind(dir)), len);
	}
	free(page);
	return rc;
}
