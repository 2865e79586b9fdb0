/*
 * cmd_variant.c - ares variant gen|show|list (docs/cli-variant.md,
 * docs/variants.md).
 *
 * gen prints the variant the generator dresses from a seed as YAML (every
 * field: a starting point for a company's own variant file); show prints
 * a fixed variant or a variant file (absent fields filled from --seed) the
 * same way, after validating it; list names the fixed variants.
 * Exit codes: 0 printed, 2 usage or a bad variant file (file:line:col:
 * field: problem), 5 the output could not be written.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_variant_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_variant_longopts[] = {
	{ "seed", required_argument, NULL, 's' },
	{ "out", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_variant_entry = {
	.name = "variant",
	.optstring = "h",
	.longopts = cmd_variant_longopts,
	.summary = "print a generated, fixed or file variant (lab dressing) as "
	    "YAML",
	.usage =
	    "usage: ares variant gen --seed N [--out FILE]\n"
	    "       ares variant show ID|FILE [--seed N] [--out FILE]\n"
	    "       ares variant list\n",
	.exec = cmd_variant_exec,
};

/* Write text to path ("-" or NULL: stdout).  0, or -1 after a message. */
static int
cmd_variant_write(const char *path, const char *text)
{
	struct errbuf e = { 0 };

	if (path == NULL || strcmp(path, "-") == 0) {
		if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
			fprintf(stderr, "ares variant: stdout: write failed\n");
			return -1;
		}
		return 0;
	}
	if (util_write_file(path, text, strlen(text), 0644, &e) == -1) {
		fprintf(stderr, "ares variant: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* ares variant gen|show|list: 0, 2 usage / bad file, 5 write failed. */
static int
cmd_variant_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *out = NULL, *sub;
	struct errbuf e = { 0 };
	const struct variant *v;
	uint64_t seed = 0;
	bool have_seed = false;
	char *y;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 's':
			if (cmd_opt_seed("ares variant", optarg, true,
			    &seed) == -1) {
				fputs(self->usage, stderr);
				return EXIT_USAGE;
			}
			have_seed = true;
			break;
		case 'o':
			out = optarg;
			break;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "ares variant: gen, show or list?\n%s",
		    self->usage);
		return EXIT_USAGE;
	}
	sub = argv[optind++];
	if (strcmp(sub, "list") == 0) {
		if (optind != argc || have_seed || out != NULL) {
			fprintf(stderr, "ares variant list: takes no "
			    "arguments\n%s", self->usage);
			return EXIT_USAGE;
		}
		for (const char *p = variant_ids(); *p != '\0'; ) {
			size_t n = strcspn(p, ",");
			char id[64];

			snprintf(id, sizeof id, "%.*s", (int)n, p);
			v = variant_find(id);
			if (v != NULL)
				printf("%-14s %s%s\n", v->id, v->summary,
				    v->held_out ? " (held out)" : "");
			p += n;
			while (*p == ',' || *p == ' ')
				p++;
		}
		printf("%-14s %s\n", "generated", "variant: generated: dressed "
		    "from variant_seed (else the run's seed)");
		return 0;
	}
	if (strcmp(sub, "gen") == 0) {
		if (optind != argc) {
			fprintf(stderr, "ares variant gen: unexpected argument "
			    "'%s'\n%s", argv[optind], self->usage);
			return EXIT_USAGE;
		}
		if (!have_seed) {
			fprintf(stderr, "ares variant gen: --seed N is "
			    "required\n%s", self->usage);
			return EXIT_USAGE;
		}
		v = variant_generate(seed);
	} else if (strcmp(sub, "show") == 0) {
		const char *what;

		if (optind + 1 != argc) {
			fprintf(stderr, "ares variant show: one ID or FILE\n%s",
			    self->usage);
			return EXIT_USAGE;
		}
		what = argv[optind];
		v = variant_find(what);
		if (v == NULL && strcmp(what, "generated") == 0)
			v = variant_generate(seed);
		else if (v == NULL && (strchr(what, '/') != NULL ||
		    strstr(what, ".yaml") != NULL ||
		    strstr(what, ".yml") != NULL)) {
			v = variant_load(what, seed, &e);
			if (v == NULL) {
				fprintf(stderr, "ares variant: %s\n", e.msg);
				return EXIT_USAGE;
			}
		} else if (v == NULL) {
			fprintf(stderr, "ares variant show: unknown variant '%s' "
			    "(known: %s, generated, or a FILE.yaml)\n", what,
			    variant_ids());
			return EXIT_USAGE;
		}
	} else {
		fprintf(stderr, "ares variant: unknown subcommand '%s'\n%s", sub,
		    self->usage);
		return EXIT_USAGE;
	}
	y = variant_to_yaml(v);
	rc = cmd_variant_write(out, y) == -1 ? EXIT_INTERNAL : 0;
	free(y);
	variant_free(v);
	return rc;
}
