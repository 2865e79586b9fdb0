/*
 * cmd_probe.c - ares probe (docs/cli-probe.md, docs/probes.md).
 *
 *   ares probe [--policy FILE | --run DIR] [...]   (cmd_probe_entry.usage)
 *
 * The inside-out battery: attacks run in the agent as its own uid, a
 * PASS/FAIL table, a signed RUN_DIR/probe.json.  Exit codes: 0 every core
 * row held (negative control: the gate saw every flaw), 1 a core row
 * failed (negative control: the gate is blind to a flaw), 2 usage / bad
 * input, 3 engine unreachable, 5 lab or internal failure or cancelled
 * (SIGINT/SIGTERM: no further row starts, the partial report is signed
 * with result "cancelled", the lab is still torn down).
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_probe_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_probe_longopts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "run", required_argument, NULL, 'r' },
	{ "flaw", required_argument, NULL, 'f' },
	{ "json", required_argument, NULL, 'j' },
	{ "junit", required_argument, NULL, 'J' },
	{ "key-dir", required_argument, NULL, 'K' },
	{ "runs", required_argument, NULL, 'R' },
	{ "keep-lab", no_argument, NULL, 'k' },
	{ "negative-control", no_argument, NULL, 'n' },
	{ "parallel", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The usage is docs/cli-probe.md's synopsis. */
const struct cmd_entry cmd_probe_entry = {
	.name = "probe",
	.optstring = "p:r:f:j:J:K:R:knP:h",
	.longopts = cmd_probe_longopts,
	.summary = "attack a lab from inside the agent: PASS/FAIL table, CI "
	    "gate",
	.usage =
	    "usage: ares probe [--policy FILE | --run DIR] [--flaw ID] "
	    "[--json FILE]\n"
	    "                  [--junit FILE] [--key-dir DIR] [--runs DIR] "
	    "[--keep-lab]\n"
	    "       ares probe --negative-control [--policy FILE] [--flaw ID] "
	    "[--parallel 1|2]\n"
	    "                  [--json FILE] [--junit FILE] [--key-dir DIR] "
	    "[--runs DIR]\n",
	.exec = cmd_probe_exec,
};

#define CMD_PROBE_DEFAULT_POLICY "policies/hardened.yaml"
/* what the negative control needs of the local engine */
#define CMD_PROBE_NC_NEEDS "labs with the flaws docker-socket, host-mount " \
	"and control-keys (host paths) and the host-ports row (a listener on " \
	"the engine's host)"

static volatile sig_atomic_t cmd_probe_cancel;

/* SIGINT/SIGTERM: start no further row (or lab); what ran is still signed
 * and every lab is still torn down. */
static void
cmd_probe_on_signal(int sig)
{
	(void)sig;
	cmd_probe_cancel = 1;
}

struct cmd_probe_args {
	const char *policy, *run, *flaw, *json, *junit, *key_dir, *runs;
	bool negative, keep;
	int parallel;
};

/* Write text to path ("-": stdout).  -1 + e. */
static int
cmd_probe_out(const char *path, const char *text, struct errbuf *e)
{
	if (strcmp(path, "-") == 0) {
		fputs(text, stdout);
		return 0;
	}
	return util_write_file(path, text, strlen(text), 0644, e);
}

/* --json / --junit of a battery.  -1 + e. */
static int
cmd_probe_outputs(const struct cmd_probe_args *a,
    const struct probe_report *r, struct errbuf *e)
{
	int rc = 0;

	if (a->json != NULL) {
		cJSON *j = probe_report_json(r);
		char *t = cJSON_Print(j);

		cJSON_Delete(j);
		if (t == NULL)
			util_fatal("probe: cannot serialise JSON");
		rc = cmd_probe_out(a->json, t, e);
		free(t);
	}
	if (rc == 0 && a->junit != NULL) {
		char *x = probe_junit(r);

		rc = cmd_probe_out(a->junit, x, e);
		free(x);
	}
	return rc;
}

/* Print "ares probe: <error>"; the error's exit code. */
static int
cmd_probe_fail(const struct errbuf *e)
{
	fprintf(stderr, "ares probe: %s\n", e->msg);
	return errbuf_exit_code(e);
}

/* Print the table and where the signed report went; the exit code. */
static int
cmd_probe_finish(const struct cmd_probe_args *a, const struct probe_report *r)
{
	struct errbuf e = { 0 };
	char *t = probe_table_format(r, 80);

	fputs(t, stdout);
	free(t);
	printf("run dir    %s\n", r->run_dir);
	printf("signed     probe.json (+ probe.json.minisig, ares.pub)\n");
	printf("check      minisign -Vm probe.json -p ares.pub  (in the run "
	    "dir)\n");
	if (r->gc_ran) {
		/* what the start-of-probe sweep removed */
		char *g = gc_report_text("ares probe", &r->gc);

		if (g != NULL)
			fputs(g, stderr);
		free(g);
	}
	if (cmd_probe_outputs(a, r, &e) == -1)
		return cmd_probe_fail(&e);
	if (r->engine_lost) {
		fprintf(stderr, "ares probe: the engine stopped answering after "
		    "%zu of %zu rows (the partial report is signed): %s\n",
		    r->nrows, r->nplanned, r->engine_error);
		return EXIT_INTERNAL;
	}
	if (r->cancelled) {
		fprintf(stderr, "ares probe: cancelled after %zu of %zu rows "
		    "(the partial report is signed, result \"cancelled\")\n",
		    r->nrows, r->nplanned);
		return EXIT_INTERNAL;
	}
	return probe_held(r) ? EXIT_CONTAINED : EXIT_BREACHED;
}

/* The battery against an existing lab (ares lab up). */
static int
cmd_probe_existing(const struct cmd_probe_args *a)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };
	struct probe_ctx c;
	struct docker *d = docker_connect(NULL, &e);
	struct gc_report *g;
	bool gc_ok;
	int rc;

	if (d == NULL) {
		free(r);
		return cmd_probe_fail(&e);
	}
	/* the same start-of-probe sweep as a fresh lab's (a lab brought up
	 * by ares lab up holds a lease: it stays) */
	g = xcalloc(1, sizeof *g);
	gc_ok = gc_sweep(d, g, &e) == 0;
	memset(&e, 0, sizeof e);
	rc = probe_ctx_load(d, a->run, &c, &e);
	if (rc == 0)
		rc = probe_run(d, &c, a->flaw, &cmd_probe_cancel, r, &e);
	if (rc == 0) {
		r->gc = *g;   /* probe_run starts r afresh */
		r->gc_ran = gc_ok;
		rc = probe_write_signed(r, a->key_dir, &e);
	}
	free(g);
	if (rc == -1) {
		probe_ctx_free(&c);
		docker_close(d);
		free(r);
		return cmd_probe_fail(&e);
	}
	probe_ctx_free(&c);
	docker_close(d);
	rc = cmd_probe_finish(a, r);
	free(r);
	return rc;
}

/* Bring a lab up from the policy, probe it, tear it down. */
static int
cmd_probe_fresh(const struct cmd_probe_args *a)
{
	struct probe_options o = {
		.runs_dir = a->runs, .only_flaw = a->flaw,
		.key_dir = a->key_dir, .keep = a->keep,
		.cancel = &cmd_probe_cancel,
	};
	struct probe_report *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };
	struct policy *p = policy_load(a->policy, &e);
	struct docker *d;
	int rc;

	if (p == NULL) {
		free(r);
		return cmd_probe_fail(&e);
	}
	d = docker_connect(NULL, &e);
	if (d == NULL) {
		policy_free(p);
		free(r);
		return cmd_probe_fail(&e);
	}
	if (a->flaw != NULL && flaw_find(a->flaw) == NULL) {
		errbuf_set(&e, ERRBUF_INPUT, "--flaw: unknown flaw '%s' (known: "
		    "%s)", a->flaw, flaw_ids());
		rc = cmd_probe_fail(&e);
	} else if (probe_lab(d, p, &o, r, &e) == -1) {
		if (r->nrows > 0)   /* the battery ran; teardown failed */
			(void)cmd_probe_finish(a, r);
		rc = cmd_probe_fail(&e);
	} else {
		rc = cmd_probe_finish(a, r);
		if (a->keep)
			printf("kept       ares lab down --run %s\n", r->run_dir);
	}
	docker_close(d);
	policy_free(p);
	free(r);
	return rc;
}

/* --negative-control: the baseline and each flaw or weakening on its own;
 * the table, --json / --junit, RESULT.  The exit code. */
static int
cmd_probe_negative(const struct cmd_probe_args *a)
{
	struct probe_nc_options o = {
		.policy_path = a->policy, .runs_dir = a->runs,
		.only_flaw = a->flaw, .key_dir = a->key_dir,
		.parallel = a->parallel, .cancel = &cmd_probe_cancel,
	};
	struct probe_nc_item *items = xcalloc(PROBE_NC_ITEMS(flaw_count),
	    sizeof *items);
	struct errbuf e = { 0 }, oe = { 0 };
	size_t n = 0, i;
	int rc;
	bool ok;

	printf("negative control: %s with flaws cleared, then each\n"
	    "flaw on its own (the baseline must hold, each flaw must fail a "
	    "row)\n", a->policy);
	fflush(stdout);
	rc = probe_negative_control(&o, items, &n, &e);
	if (n == 0) {
		free(items);
		return cmd_probe_fail(&e);
	}
	printf("  %-18s %-6s %6s  %s\n", "FLAW", "SEEN", "SECS",
	    "FAILED ROWS / WHY");
	for (i = 0; i < n; i++) {
		const struct probe_nc_item *it = &items[i];
		char cell[80];

		snprintf(cell, sizeof cell, "%.79s", !it->ran ? it->error :
		    it->rows[0] ? it->rows : "-");
		printf("  %-18s %-6s %6.1f  %s\n", it->flaw[0] ? it->flaw :
		    "(baseline)", !it->ran ? "ERROR" : it->flaw[0] ?
		    (it->seen ? "yes" : "NO") : (it->seen ? "held" : "FAILS"),
		    it->seconds, cell);
	}
	ok = rc == 0 && probe_nc_ok(items, n);
	for (i = 0; i < n; i++) {
		if (!items[i].ran)
			continue;
		if (items[i].flaw[0] == '\0' && !items[i].seen)
			printf("the baseline fails (%s): a gate that fails "
			    "without a weakening cannot tell one\n",
			    items[i].rows);
		else if (!items[i].seen)
			printf("the gate is blind to %s\n", items[i].flaw);
	}
	if (a->json != NULL || a->junit != NULL) {
		if (a->json != NULL) {
			cJSON *j = probe_nc_json(a->policy, items, n);
			char *t = cJSON_Print(j);

			cJSON_Delete(j);
			if (t == NULL)
				util_fatal("probe: cannot serialise JSON");
			if (cmd_probe_out(a->json, t, &oe) == -1)
				fprintf(stderr, "ares probe: --json: %s\n",
				    oe.msg);
			free(t);
		}
		if (a->junit != NULL) {
			char *x = probe_nc_junit(items, n);

			if (cmd_probe_out(a->junit, x, &oe) == -1)
				fprintf(stderr, "ares probe: --junit: %s\n",
				    oe.msg);
			free(x);
		}
	}
	free(items);
	if (rc == -1)
		return cmd_probe_fail(&e);
	if (oe.code != ERRBUF_NONE)
		return EXIT_INTERNAL;
	printf("RESULT: %s\n", ok ? "the gate saw every weakening (and the "
	    "baseline held)" : "the gate is blind (see above)");
	return ok ? EXIT_CONTAINED : EXIT_BREACHED;
}

/* ares probe [options]: 0 held (negative control: every flaw seen), 1 a
 * core row failed (the gate is blind), 2 usage, 3 engine unreachable,
 * 5 lab or internal failure or cancelled. */
static int
cmd_probe_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct cmd_probe_args a = { .parallel = 2 };
	int c, rc;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'p': a.policy = optarg; break;
		case 'r': a.run = optarg; break;
		case 'f': a.flaw = optarg; break;
		case 'j': a.json = optarg; break;
		case 'J': a.junit = optarg; break;
		case 'K': a.key_dir = optarg; break;
		case 'R': a.runs = optarg; break;
		case 'k': a.keep = true; break;
		case 'n': a.negative = true; break;
		case 'P':
			if (strcmp(optarg, "1") != 0 &&
			    strcmp(optarg, "2") != 0) {
				fprintf(stderr, "ares probe: --parallel: 1 or 2"
				    "\n");
				return EXIT_USAGE;
			}
			a.parallel = optarg[0] - '0';
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares probe: unexpected argument '%s'\n%s",
		    argv[optind], self->usage);
		return EXIT_USAGE;
	}
	if (a.flaw != NULL && flaw_find(a.flaw) == NULL &&
	    !(a.negative && probe_nc_weakening_find(a.flaw) != NULL)) {
		fprintf(stderr, "ares probe: --flaw: unknown flaw '%s' (known: "
		    "%s; with --negative-control also host-seal-off, "
		    "sys-admin)\n", a.flaw, flaw_ids());
		return EXIT_USAGE;
	}
	if (a.run != NULL && (a.policy != NULL || a.negative || a.keep)) {
		fprintf(stderr, "ares probe: --run probes an existing lab: it "
		    "takes no --policy, --negative-control or --keep-lab\n");
		return EXIT_USAGE;
	}
	if (a.negative && a.keep) {
		fprintf(stderr, "ares probe: --negative-control always tears "
		    "its labs down\n");
		return EXIT_USAGE;
	}
	if (a.run == NULL && a.policy == NULL)
		a.policy = CMD_PROBE_DEFAULT_POLICY;
	/* the negative control turns on flaws a remote lab cannot have, and
	 * its weakening host-seal-off is seen by the host-ports row, which
	 * cannot run there (docs/cli-probe.md) */
	if (a.negative && cmd_require_local("ares probe --negative-control",
	    CMD_PROBE_NC_NEEDS) != 0)
		return EXIT_USAGE;
	/* a lab on a remote engine: what it cannot have is refused before
	 * the run directory is made (--run: DOCKER_HOST must parse) */
	if ((rc = cmd_require_lab_engine("ares probe", a.policy, NULL)) != 0)
		return rc;
	signal(SIGINT, cmd_probe_on_signal);
	signal(SIGTERM, cmd_probe_on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (a.run != NULL)
		return cmd_probe_existing(&a);
	if (a.negative)
		return cmd_probe_negative(&a);
	return cmd_probe_fresh(&a);
}
