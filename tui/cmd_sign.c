/*
 * cmd_sign.c - `ares keygen` and `ares verify`: thin printers over sign.c
 * and report.c (all checks live in core, where the tests reach them).
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_keygen_exec(const struct cmd_entry *, int, char **);
static int cmd_verify_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_keygen_longopts[] = {
	{ "key-dir", required_argument, NULL, 'd' },
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_keygen_entry = {
	.name = "keygen",
	.optstring = "d:fh",
	.longopts = cmd_keygen_longopts,
	.summary = "write the key pair that signs reports",
	.usage = "usage: ares keygen [--key-dir DIR] [--force]\n",
	.exec = cmd_keygen_exec,
};

static const struct option cmd_verify_longopts[] = {
	{ "pub", required_argument, NULL, 'p' },
	{ "json", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_verify_entry = {
	.name = "verify",
	.optstring = "p:j:h",
	.longopts = cmd_verify_longopts,
	.summary = "check a run, trial, probe or fix dir: signatures, every "
	    "chain, and that every verdict follows from the evidence",
	.usage = "usage: ares verify RUN_DIR|TRIAL_DIR|PROBE_RUN_DIR|FIX_DIR "
	    "[--pub FILE] [--json FILE|-]\n",
	.exec = cmd_verify_exec,
};

/* ares keygen [--key-dir DIR] [--force]: 0 written, 2 a key exists (no
 * --force) or no key directory or bad usage, 5 not written. */
static int
cmd_keygen_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *flag_dir = NULL;
	char dir[4096], keyid[SIGN_KEYID_HEX];
	struct errbuf e = { 0 };
	bool force = false;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'd':
			flag_dir = optarg;
			break;
		case 'f':
			force = true;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares keygen: unexpected argument '%s'\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if (sign_key_dir(flag_dir, dir, sizeof dir, &e) == -1 ||
	    sign_keygen(dir, force, keyid, &e) == -1) {
		fprintf(stderr, "ares keygen: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	printf("key id      %s\n", keyid);
	printf("secret key  %s/" SIGN_SECKEY_NAME "  (mode 0600: keep it "
	    "secret; drills sign with it)\n", dir);
	printf("public key  %s/" SIGN_PUBKEY_NAME "  (publish it: auditors "
	    "pin it with ares verify RUN_DIR --pub FILE)\n", dir);
	return EXIT_CONTAINED;
}

/* ares verify RUN_DIR|TRIAL_DIR|PROBE_RUN_DIR|FIX_DIR [--pub FILE]
 * [--json FILE|-]: 0 all valid, 1 tampered or unverifiable, 2 usage /
 * unreadable input. */
static int
cmd_verify_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const char *pub = NULL, *json = NULL, *run_dir;
	FILE *out = stdout;
	bool probe, fix, gate;
	size_t i;
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'p':
			pub = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "ares verify: %s\n%s", argc - optind == 0 ?
		    "missing RUN_DIR" : "too many arguments", self->usage);
		return EXIT_USAGE;
	}
	run_dir = argv[optind];
	if (json != NULL && strcmp(json, "-") == 0)
		out = stderr;   /* stdout carries the JSON */

	gate = gate_dir_is(run_dir);
	probe = !gate && !trial_dir_is(run_dir) && probe_dir_is(run_dir);
	fix = !gate && !trial_dir_is(run_dir) && !probe && fix_dir_is(run_dir);
	if ((gate ? gate_verify_dir : trial_dir_is(run_dir) ?
	    trial_verify_dir : probe ?
	    probe_verify_dir : fix ? fix_verify_dir :
	    report_verify_dir)(run_dir, pub, &res, &e) == -1) {
		fprintf(stderr, "ares verify: %s\n", e.msg);
		return EXIT_USAGE;
	}
	for (i = 0; i < res.nchecks; i++)
		fprintf(out, "%-4s %s\n", res.checks[i].ok ? "ok" : "FAIL",
		    res.checks[i].text);
	if (res.ok)
		fprintf(out, "verified: %s %s, %s %s, key id %s%s\n",
		    gate ? "gate" : probe ? "probe run" : fix ? "fix" : "run",
		    res.run_id, gate || probe ? "result" : fix ? "outcome" :
		    "verdict", res.verdict,
		    res.key_id, res.pinned ? "" :
		    " (the run directory's own key: integrity only)");
	else
		fprintf(out, "NOT VERIFIED: %s\n", res.first_bad >= 0 ?
		    res.checks[res.first_bad].text : "no valid signature");
	rc = res.ok ? EXIT_CONTAINED : EXIT_BREACHED;

	if (json != NULL && cmd_json_write(report_verify_json(run_dir, &res),
	    json, &e) == -1) {
		fprintf(stderr, "ares verify: --json: %s\n", e.msg);
		rc = EXIT_USAGE;
	}
	report_verify_free(&res);
	return rc;
}
