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

/* ares keygen [--key-dir DIR] [--force] */
int
cmd_keygen(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "key-dir", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *flag_dir = NULL;
	char dir[4096], keyid[SIGN_KEYID_HEX];
	struct errbuf e = { 0 };
	bool force = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			flag_dir = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			printf("usage: ares keygen [--key-dir DIR] [--force]\n");
			return EXIT_CONTAINED;
		default:
			fprintf(stderr, "usage: ares keygen [--key-dir DIR] "
			    "[--force]\n");
			return EXIT_USAGE;
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
 * [--json FILE] */
int
cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pub", required_argument, NULL, 'p' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
	    "usage: ares verify RUN_DIR|TRIAL_DIR|PROBE_RUN_DIR|FIX_DIR "
	    "[--pub FILE] [--json FILE|-]\n";
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const char *pub = NULL, *json = NULL, *run_dir;
	FILE *out = stdout;
	bool probe, fix;
	size_t i;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pub = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_CONTAINED;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "ares verify: %s\n%s", argc - optind == 0 ?
		    "missing RUN_DIR" : "too many arguments", usage);
		return EXIT_USAGE;
	}
	run_dir = argv[optind];
	if (json != NULL && strcmp(json, "-") == 0)
		out = stderr;   /* stdout carries the JSON */

	probe = !trial_dir_is(run_dir) && probe_dir_is(run_dir);
	fix = !trial_dir_is(run_dir) && !probe && fix_dir_is(run_dir);
	if ((trial_dir_is(run_dir) ? trial_verify_dir : probe ?
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
		    probe ? "probe run" : fix ? "fix" : "run", res.run_id, probe ?
		    "result" : fix ? "outcome" : "verdict", res.verdict,
		    res.key_id, res.pinned ? "" :
		    " (the run directory's own key: integrity only)");
	else
		fprintf(out, "NOT VERIFIED: %s\n", res.first_bad >= 0 ?
		    res.checks[res.first_bad].text : "no valid signature");
	rc = res.ok ? EXIT_CONTAINED : EXIT_BREACHED;

	if (json != NULL) {
		cJSON *j = report_verify_json(run_dir, &res);
		char *txt = cJSON_Print(j);

		if (txt == NULL)
			util_fatal("cJSON_Print failed");
		if (strcmp(json, "-") == 0)
			printf("%s\n", txt);
		else if (util_write_file(json, txt, strlen(txt), 0644,
		    &e) == -1) {
			fprintf(stderr, "ares verify: --json: %s\n", e.msg);
			rc = EXIT_USAGE;
		}
		cJSON_free(txt);
		cJSON_Delete(j);
	}
	report_verify_free(&res);
	return rc;
}
