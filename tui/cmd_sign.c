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

/*
 * A probe run dir (`ares probe`) holds a signed probe.json and no
 * report.json: check its signature (the dir's ares.pub or a pinned one).
 * Returns the exit code.
 */
static int
cmd_verify_probe(const char *run_dir, const char *pub)
{
	char *doc = xasprintf("%s/probe.json", run_dir);
	char *sig = xasprintf("%s/probe.json.minisig", run_dir);
	char *own = xasprintf("%s/" SIGN_PUBKEY_NAME, run_dir);
	char trusted[1100];
	struct errbuf e = { 0 };
	int rc;

	if (sign_verify_file(pub != NULL ? pub : own, doc, sig, trusted,
	    sizeof trusted, &e) == 0) {
		char clean[1100];

		util_sanitize(clean, sizeof clean, trusted, strlen(trusted),
		    false);
		printf("ok   probe.json signature (%s)\n", pub != NULL ?
		    "pinned key" : "the run directory's own key: integrity "
		    "only");
		printf("ok   trusted comment: %s\n", clean);
		printf("verified: probe report %s\n", doc);
		rc = EXIT_CONTAINED;
	} else {
		printf("FAIL probe.json signature: %s\n", e.msg);
		printf("NOT VERIFIED: %s\n", doc);
		rc = EXIT_BREACHED;
	}
	free(doc);
	free(sig);
	free(own);
	return rc;
}

/* ares verify RUN_DIR [--pub FILE] [--json FILE] */
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
	    "usage: ares verify RUN_DIR [--pub FILE] [--json FILE|-]\n";
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const char *pub = NULL, *json = NULL, *run_dir;
	FILE *out = stdout;
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
	{
		char *rj = xasprintf("%s/report.json", run_dir);
		char *pj = xasprintf("%s/probe.json", run_dir);
		bool probe = access(rj, F_OK) != 0 && access(pj, F_OK) == 0 &&
		    !trial_dir_is(run_dir);

		free(rj);
		free(pj);
		if (probe && json == NULL)
			return cmd_verify_probe(run_dir, pub);
	}
	if (json != NULL && strcmp(json, "-") == 0)
		out = stderr;   /* stdout carries the JSON */

	if ((trial_dir_is(run_dir) ? trial_verify_dir : report_verify_dir)(
	    run_dir, pub, &res, &e) == -1) {
		fprintf(stderr, "ares verify: %s\n", e.msg);
		return EXIT_USAGE;
	}
	for (i = 0; i < res.nchecks; i++)
		fprintf(out, "%-4s %s\n", res.checks[i].ok ? "ok" : "FAIL",
		    res.checks[i].text);
	if (res.ok)
		fprintf(out, "verified: run %s, verdict %s, key id %s%s\n",
		    res.run_id, res.verdict, res.key_id, res.pinned ? "" :
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
