/*
 * cmd_policy.c - ares policy import (docs/cli-policy.md, docs/import.md).
 *
 * Reads a Compose service (or a container's inspect) and writes the ares
 * policy that reproduces its containment in a lab.  The mapping table goes
 * to stdout, every line a YAML comment; the policy goes to --out, or
 * after the table to stdout (so stdout alone is a policy that loads).
 * Exit codes: 0 imported, 1 --strict refused (a widening access the lab
 * does not reproduce; each listed on stderr), 2 usage or bad input (the
 * error names file:line:col and the key), 3 engine unreachable
 * (--container), 5 internal (the policy could not be written).
 */
#include "core.h"
#include "tui.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_policy_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_policy_longopts[] = {
	{ "service", required_argument, NULL, 's' },
	{ "container", required_argument, NULL, 'c' },
	{ "out", required_argument, NULL, 'o' },
	{ "strict", no_argument, NULL, 'S' },
	{ "agent", required_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_policy_entry = {
	.name = "policy",
	.optstring = "h",
	.longopts = cmd_policy_longopts,
	.summary = "import a Compose service or a container as an ares policy",
	.usage =
	    "usage: ares policy import FILE --service NAME [--out POLICY] "
	    "[--strict]\n"
	    "                          [--agent image|poyo|script:FILE]\n"
	    "       ares policy import --container NAME [--out POLICY] "
	    "[--strict]\n"
	    "                          [--agent image|poyo|script:FILE]\n",
	.exec = cmd_policy_exec,
};

/* Write text to path (created 0644, replaced).  0, or -1 + message. */
static int
cmd_policy_write(const char *path, const char *text)
{
	size_t len = strlen(text), off = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd == -1) {
		fprintf(stderr, "ares policy import: --out %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "ares policy import: --out %s: %s\n",
			    path, strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (close(fd) == -1) {
		fprintf(stderr, "ares policy import: --out %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* ares policy import ...: 0 imported, 1 --strict refused, 2 usage / bad
 * input, 3 no engine, 5 internal. */
static int
cmd_policy_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct import_opts o = { 0 };
	struct import_result r;
	struct errbuf e = { 0 };
	const char *service = NULL, *container = NULL, *file = NULL;
	struct docker *d;
	char *table;
	int c, rc;
	size_t i;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		cmd_usage(self, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "import") != 0) {
		fprintf(stderr, "ares policy: unknown subcommand '%s'\n%s",
		    argv[1], self->usage);
		return EXIT_USAGE;
	}
	optind = 1;
	while ((c = cmd_getopt(self, argc - 1, argv + 1, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 's':
			service = optarg;
			break;
		case 'c':
			container = optarg;
			break;
		case 'o':
			o.out_path = optarg;
			break;
		case 'S':
			o.strict = true;
			break;
		case 'a':
			o.agent = optarg;
			break;
		}
	}
	if (optind < argc - 1)
		file = argv[1 + optind++];
	if (optind < argc - 1) {
		fprintf(stderr, "ares policy import: unexpected argument "
		    "'%s'\n%s", argv[1 + optind], self->usage);
		return EXIT_USAGE;
	}
	if (container != NULL ? (file != NULL || service != NULL) :
	    (file == NULL || service == NULL)) {
		fprintf(stderr, "ares policy import: give FILE --service NAME, "
		    "or --container NAME\n%s", self->usage);
		return EXIT_USAGE;
	}
	if (container != NULL) {
		d = docker_connect(NULL, &e);
		if (d == NULL) {
			fprintf(stderr, "ares policy import: %s\n", e.msg);
			return errbuf_exit_code(&e);
		}
		rc = import_container(d, container, &o, &r, &e);
		docker_close(d);
	} else {
		rc = import_compose(file, service, &o, &r, &e);
	}
	if (r.nrows > 0) {
		table = import_table_text(&r);
		fputs(table, stdout);
		free(table);
	}
	if (rc == -1) {
		for (i = 0; i < r.nrows && r.nrefused > 0; i++)
			if (r.rows[i].widening && !r.rows[i].reproduced)
				fprintf(stderr, "ares policy import: --strict: "
				    "%s%s%zu: %s: %s\n", file ? file : "",
				    file ? ":" : "line ", r.rows[i].line,
				    r.rows[i].key, r.rows[i].note ?
				    r.rows[i].note : "not reproduced");
		fprintf(stderr, "ares policy import: %s\n", e.msg);
		rc = r.nrefused > 0 ? EXIT_BREACHED : errbuf_exit_code(&e);
		import_result_free(&r);
		return rc;
	}
	rc = 0;
	if (o.out_path == NULL || strcmp(o.out_path, "-") == 0) {
		fputs(r.policy_yaml, stdout);
	} else if (cmd_policy_write(o.out_path, r.policy_yaml) == -1) {
		rc = EXIT_INTERNAL;
	} else {
		printf("# wrote %s\n", o.out_path);
	}
	import_result_free(&r);
	if (fflush(stdout) == EOF)
		rc = EXIT_INTERNAL;
	return rc;
}
