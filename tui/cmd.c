/*
 * cmd.c - the command table (like tmux's cmd.c): one const struct
 * cmd_entry per command, defined in its cmd_*.c, is the only copy of its
 * name, options, summary and usage text; `ares help`, `ares help CMD`,
 * `ares CMD --help` and the usage after a bad argument all print from it.
 * Also what the commands share: the default policy, --seed, --model-url,
 * --json output.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_help_exec(const struct cmd_entry *, int, char **);
static int cmd_version_exec(const struct cmd_entry *, int, char **);

static const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.summary = "show this help",
	.usage = "usage: ares help [COMMAND]\n",
	.exec = cmd_help_exec,
};

static const struct cmd_entry cmd_version_entry = {
	.name = "version",
	.summary = "print the version",
	.usage = "usage: ares version\n",
	.exec = cmd_version_exec,
};

/* The commands, in the order ares help lists them. */
static const struct cmd_entry *const cmd_table[] = {
	&cmd_drill_entry,
	&cmd_lab_entry,
	&cmd_probe_entry,
	&cmd_replay_entry,
	&cmd_verify_entry,
	&cmd_report_entry,
	&cmd_keygen_entry,
	&cmd_trial_entry,
	&cmd_stats_entry,
	&cmd_fix_entry,
	&cmd_gc_entry,
	&cmd_engine_entry,
	&cmd_gate_entry,
	&cmd_policy_entry,
	&cmd_variant_entry,
	&cmd_help_entry,
	&cmd_version_entry,
};

#define CMD_NTABLE (sizeof cmd_table / sizeof cmd_table[0])

/* The command named or aliased name, or NULL. */
const struct cmd_entry *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < CMD_NTABLE; i++)
		if (strcmp(name, cmd_table[i]->name) == 0 ||
		    (cmd_table[i]->alias != NULL &&
		    strcmp(name, cmd_table[i]->alias) == 0))
			return cmd_table[i];
	return NULL;
}

/* Print e's usage text (what `ares NAME --help` prints) to f. */
void
cmd_usage(const struct cmd_entry *e, FILE *f)
{
	fputs(e->usage, f);
}

/*
 * The synopsis of e for `ares help`: the lines of its usage text that
 * name a form of the command ("usage: ares ..." and the lines indented
 * under it), without "usage: " and indented by 12; what follows (fix's
 * "options:" block) stays for `ares fix --help`.
 */
static void
cmd_synopsis(const struct cmd_entry *e, FILE *f)
{
	const char *p = e->usage;

	while (*p != '\0') {
		size_t len = strcspn(p, "\n");

		if (strncmp(p, "usage: ", 7) != 0 &&
		    strspn(p, " ") < 7)
			break;
		fprintf(f, "            %.*s\n", (int)(len - 7), p + 7);
		p += len;
		if (*p == '\n')
			p++;
	}
}

/* The whole help: global usage, every command, exit codes, environment. */
void
cmd_help_all(FILE *f)
{
	size_t i;

	fprintf(f,
	    "usage: ares [--policy FILE] [--seed N] [--no-color] [--ascii] "
	    "[--present[=MS]]\n"
	    "       ares --demo [--no-color] [--ascii] [--present[=MS]]\n"
	    "       ares COMMAND [ARGS]\n\n"
	    "With no command, ares opens the console's home screen (policies "
	    "and\nrecorded runs); with --policy it runs that drill live; "
	    "--demo starts the\ndefault drill from home, paced, as soon as "
	    "an engine answers.\n\n"
	    "Commands:\n");
	for (i = 0; i < CMD_NTABLE; i++) {
		fprintf(f, "  %-9s %s\n", cmd_table[i]->name,
		    cmd_table[i]->summary);
		cmd_synopsis(cmd_table[i], f);
	}
	fprintf(f,
	    "\nExit codes:\n"
	    "  0  contained (or success)\n"
	    "  1  breached\n"
	    "  2  bad input or usage (policy errors name file:line:col)\n"
	    "  3  Docker Engine unreachable\n"
	    "  4  not exercised: the bait never fired (never a success)\n"
	    "  5  internal or lab failure (fail closed)\n"
	    "\nEnvironment:\n"
	    "  DOCKER_HOST      the engine: unix:///path (local), "
	    "tcp://HOST:PORT (TLS with\n"
	    "                   DOCKER_TLS_VERIFY=1, DOCKER_CERT_PATH) or "
	    "ssh://[USER@]HOST[:PORT]\n"
	    "                   (remote: labs refused, exit 2; "
	    "docs/engine.md)\n"
	    "  ARES_ALLOW_PLAINTEXT_ENGINE=1  accept tcp:// without TLS "
	    "(warns)\n"
	    "  ARES_RUNS        where run directories go (default ./runs)\n"
	    "  ARES_LAB_ROOTFS  the lab image tar (default: the build's)\n"
	    "  ARES_KEY_DIR     where the signing key lives (default "
	    "~/.config/ares)\n"
	    "  NO_COLOR         disable colour in the console\n");
}

/* ares help [COMMAND]: that command's usage, or (no command, or a name
 * that is none) the whole help.  Exit 0. */
static int
cmd_help_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const struct cmd_entry *e = argc >= 2 ? cmd_find(argv[1]) : NULL;

	(void)self;
	if (e != NULL)
		cmd_usage(e, stdout);
	else
		cmd_help_all(stdout);
	return 0;
}

/* ares version (any arguments are ignored). */
static int
cmd_version_exec(const struct cmd_entry *self, int argc, char **argv)
{
	(void)self;
	(void)argc;
	(void)argv;
	printf("ares %s\n", PACKAGE_VERSION);
	return 0;
}

int
cmd_require_local(const char *who, const char *needs)
{
	struct errbuf e = { 0 };

	if (docker_require_local(who, needs, &e) == 0)
		return 0;
	fprintf(stderr, "%s: %s\n", who, e.msg);
	return EXIT_USAGE;
}

int
cmd_require_lab_engine(const char *who, const char *policy,
    const char *model_url)
{
	struct errbuf e = { 0 };

	if (lab_remote_policy_check(policy, model_url, &e) == 0)
		return 0;
	fprintf(stderr, "%s: %s\n", who, e.msg);
	return errbuf_exit_code(&e);
}

static const char cmd_default_policy[] = "policies/default.yaml";

/* The default policy: ./policies/default.yaml, else the source tree's,
 * else the installed one (a static buffer: do not free). */
const char *
cmd_policy_default(void)
{
	static char path[4096];

	if (access(cmd_default_policy, R_OK) == 0)
		return cmd_default_policy;
#ifdef ARES_SRCDIR
	snprintf(path, sizeof path, "%s/%s", ARES_SRCDIR, cmd_default_policy);
	if (access(path, R_OK) == 0)
		return path;
#endif
#ifdef ARES_DATADIR
	snprintf(path, sizeof path, "%s/default.yaml", ARES_DATADIR);
	return path;
#else
	return cmd_default_policy;
#endif
}

/*
 * The next option of argv by self's optstring and longopts (getopt_long;
 * the caller sets optind to 1 first), -1 after the last one.  Two are
 * answered here and come back as CMD_OPT_EXIT with *rc set: 'h' (--help,
 * -h: the usage on stdout, *rc 0) and a bad one (getopt's message, then
 * the usage on stderr, *rc EXIT_USAGE).
 */
int
cmd_getopt(const struct cmd_entry *self, int argc, char **argv, int *rc)
{
	int c = getopt_long(argc, argv, self->optstring, self->longopts, NULL);

	if (c == 'h') {
		cmd_usage(self, stdout);
		*rc = 0;
		return CMD_OPT_EXIT;
	}
	if (c == '?' || c == ':') {
		cmd_usage(self, stderr);
		*rc = EXIT_USAGE;
		return CMD_OPT_EXIT;
	}
	return c;
}

/*
 * The value s of --seed for the command who ("ares drill", "ares"):
 * decimal digits only, at most UINT64_MAX.  With leading_zeros any number
 * of leading zeros is taken (ares lab and ares fix always did, through
 * strtoull); without, at most 20 characters (stats_parse_count's bound,
 * what the drill, the console and the trial take).  0, or -1 after
 * printing "WHO: --seed: 'S' is not a non-negative integer".
 */
int
cmd_opt_seed(const char *who, const char *s, bool leading_zeros,
    uint64_t *out)
{
	const char *digits = s;

	if (leading_zeros)
		while (digits[0] == '0' && digits[1] != '\0')
			digits++;
	if (stats_parse_count(digits, UINT64_MAX, out) == -1) {
		fprintf(stderr, "%s: --seed: '%s' is not a non-negative "
		    "integer\n", who, s);
		return -1;
	}
	return 0;
}

/* The value s of --model-url for who: http:// or https://.  0, or -1
 * after printing "WHO: --model-url: 'S' is not an http(s) URL". */
int
cmd_opt_url(const char *who, const char *s)
{
	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0) {
		fprintf(stderr, "%s: --model-url: '%s' is not an http(s) URL\n",
		    who, s);
		return -1;
	}
	return 0;
}

/* --present[=MS] for who: s NULL (the default PACE_PRESENT_MS) or
 * 1..PACE_PRESENT_MS_MAX decimal milliseconds.  0, or -1 after printing
 * "WHO: --present: 'S' is not 1..5000 (ms)". */
int
cmd_opt_present(const char *who, const char *s, unsigned *ms)
{
	unsigned long v = 0;
	size_t i;

	if (s == NULL) {
		*ms = PACE_PRESENT_MS;
		return 0;
	}
	for (i = 0; s[i] >= '0' && s[i] <= '9' && i < 5; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (i == 0 || s[i] != '\0' || v < 1 || v > PACE_PRESENT_MS_MAX) {
		fprintf(stderr, "%s: --present: '%s' is not 1..%d (ms)\n", who,
		    s, PACE_PRESENT_MS_MAX);
		return -1;
	}
	*ms = (unsigned)v;
	return 0;
}

/* --json PATH: j printed (formatted) to stdout when path is "-", else
 * written to path (mode 0644).  j is freed.  0, or -1 + e (the write). */
int
cmd_json_write(cJSON *j, const char *path, struct errbuf *e)
{
	char *txt = cJSON_Print(j);
	int rc = 0;

	cJSON_Delete(j);
	if (txt == NULL)
		util_fatal("cJSON_Print failed");
	if (strcmp(path, "-") == 0)
		printf("%s\n", txt);
	else
		rc = util_write_file(path, txt, strlen(txt), 0644, e);
	cJSON_free(txt);
	return rc;
}
