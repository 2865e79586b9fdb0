/*
 * cmd_lab.c - ares lab up|status|down (docs/cli-lab.md).
 *
 *   ares lab up --policy FILE [--run DIR] [--seed N] [--wait]
 *                [--model-url URL --model-key-env VAR]
 *   ares lab status [--run DIR]
 *   ares lab down --run DIR
 *
 * `up` brings a lab up with the agent idle (AGENT_IDLE=1) so people and
 * probes can exec into it; `status` lists a run's containers and networks
 * by label; `down` removes them (the run id comes from RUN_DIR/lab.json).
 * `up --wait` serves until SIGINT/SIGTERM/SIGHUP (then tears the lab down;
 * caught from before lab up, a second one ends at once) or
 * until the lab is downed elsewhere: a real model.url needs it, the host
 * relay that makes the model calls lives in this process.
 * Exit codes: 0 ok, 2 usage / bad input, 3 engine unreachable, 5 failure.
 */
#include "core.h"
#include "tui.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

static int cmd_lab_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_lab_longopts[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "run", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 's' },
	{ "model-url", required_argument, NULL, 'u' },
	{ "model-key-env", required_argument, NULL, 'k' },
	{ "wait", no_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_lab_entry = {
	.name = "lab",
	.optstring = "p:r:s:u:k:wh",
	.longopts = cmd_lab_longopts,
	.summary = "bring a lab up with the agent idle, list it, tear it down",
	.usage =
	    "usage: ares lab up --policy FILE [--run DIR] [--seed N] [--wait]\n"
	    "                   [--model-url URL --model-key-env VAR]\n"
	    "       ares lab status [--run DIR]\n"
	    "       ares lab down --run DIR\n",
	.exec = cmd_lab_exec,
};

struct cmd_lab_args {
	const char *policy;
	const char *run;
	const char *model_url;
	const char *model_key_env;
	uint64_t seed;
	bool has_seed;
	bool wait;
};

static volatile sig_atomic_t cmd_lab_stop;
static int cmd_lab_fail(const char *what, const struct errbuf *e);

/* Is the lab's gateway still in the engine?  -1 + e without an answer. */
static int
cmd_lab_gateway_there(struct docker *d, const struct lab *lab,
    struct errbuf *e)
{
	char *label = xasprintf("ares.run=%s", lab->run_id);
	cJSON *cs = docker_containers_by_label(d, label, e), *it;
	int there = 0;

	free(label);
	if (cs == NULL)
		return -1;
	cJSON_ArrayForEach(it, cs) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "Id");

		if (cJSON_IsString(id) && strcmp(id->valuestring,
		    lab->gateway.id) == 0)
			there = 1;
	}
	cJSON_Delete(cs);
	return there;
}

/* SIGINT / SIGTERM / SIGHUP of `lab up --wait`: serve no longer (tear
 * down); the next one of them ends the process at once (a teardown that
 * hangs is never stuck with an ignored Ctrl-C). */
static void
cmd_lab_on_signal(int sig)
{
	struct sigaction dfl;

	(void)sig;
	cmd_lab_stop = 1;
	memset(&dfl, 0, sizeof dfl);   /* sigaction: async-signal-safe */
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
}

/* Catch SIGINT, SIGTERM and SIGHUP (cmd_lab_on_signal) and ignore SIGPIPE
 * for `lab up --wait`: set before lab up, so that a signal while the lab
 * comes up tears it down once it is up instead of leaving it behind. */
static void
cmd_lab_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cmd_lab_on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * lab up --wait: serve (the host relay of a real model lives in this
 * process) until SIGINT/SIGTERM/SIGHUP (cmd_lab_catch_signals, also
 * during lab up), then tear the lab down, or until its
 * gateway is gone (ares lab down elsewhere).  The exit code.
 */
static int
cmd_lab_serve(struct docker *d, struct lab *lab)
{
	struct errbuf e = { 0 };
	int removed;

	if (!cmd_lab_stop)
		printf("waiting   until SIGINT/SIGTERM/SIGHUP (then down) or "
		    "ares lab down\n");
	fflush(stdout);
	while (!cmd_lab_stop) {
		int there = cmd_lab_gateway_there(d, lab, &e);

		if (there == 0) {
			printf("run %s: the lab is gone (ares lab down)\n",
			    lab->run_id);
			fflush(stdout);
			return 0;
		}
		if (there < 0)
			e.msg[0] = '\0';   /* the engine may come back */
		usleep(500000);
	}
	removed = lab_teardown(d, lab->run_id, &e);
	if (removed < 0)
		return cmd_lab_fail("up --wait: down", &e);
	(void)lab_remove_sockets(lab->run_dir, lab->run_id);
	gc_lease_remove(lab->run_dir);
	printf("run %s: removed %d object(s)\n", lab->run_id, removed);
	return 0;
}


/* The run id recorded in RUN_DIR/lab.json (copied into out).  -1 + e
 * (ERRBUF_INPUT: not a lab run dir). */
static int
cmd_lab_read_run_id(const char *run_dir, char out[64], struct errbuf *e)
{
	char *path = xasprintf("%s/lab.json", run_dir);
	char *txt;
	size_t len;
	cJSON *j;
	const cJSON *id;
	int rc = -1;

	txt = util_read_file(path, 1024 * 1024, &len, e);
	if (txt == NULL) {
		e->code = ERRBUF_INPUT;
		errbuf_prefix(e, "%s is not a lab run directory", run_dir);
		free(path);
		return -1;
	}
	j = cJSON_ParseWithLength(txt, len);
	id = cJSON_GetObjectItemCaseSensitive(j, "run_id");
	if (cJSON_IsString(id) && id->valuestring[0] != '\0' &&
	    strlen(id->valuestring) < 64 &&
	    strspn(id->valuestring, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
	    strlen(id->valuestring)) {
		snprintf(out, 64, "%s", id->valuestring);
		rc = 0;
	} else
		errbuf_set(e, ERRBUF_INPUT, "%s: no valid \"run_id\"", path);
	cJSON_Delete(j);
	free(txt);
	free(path);
	return rc;
}

/* Print "ares lab WHAT: <error>"; the error's exit code. */
static int
cmd_lab_fail(const char *what, const struct errbuf *e)
{
	fprintf(stderr, "ares lab %s: %s\n", what, e->msg);
	return errbuf_exit_code(e);
}

/* ares lab up: a fresh run dir, the lab up with the agent idle and
 * leased to RUN_DIR/lab.lease; print how to reach it.  The exit code. */
static int
cmd_lab_up(const struct cmd_lab_args *a)
{
	struct lab_options lo = { 0 };
	struct errbuf e = { 0 };
	struct policy *p;
	struct docker *d;
	struct lab *lab;
	char run_id[64], *run_dir = NULL, *abs;
	const char *runs;
	int rc = EXIT_CONTAINED;

	if (a->policy == NULL) {
		fprintf(stderr, "ares lab up: --policy FILE is required\n%s",
		    cmd_lab_entry.usage);
		return EXIT_USAGE;
	}
	if ((rc = cmd_require_lab_engine("ares lab up", a->policy,
	    a->model_url)) != 0)
		return rc;
	p = policy_load(a->policy, &e);
	if (p == NULL)
		return cmd_lab_fail("up", &e);
	if ((a->model_url != NULL || p->model_url != NULL) && !a->wait) {
		fprintf(stderr, "ares lab up: a real model (model.url) needs "
		    "--wait: the relay that makes its calls lives in this "
		    "process\n%s", cmd_lab_entry.usage);
		policy_free(p);
		return EXIT_USAGE;
	}
	util_new_id(run_id);
	if (a->run != NULL)
		run_dir = xstrdup(a->run);
	else {
		runs = getenv("ARES_RUNS");
		if (runs == NULL || runs[0] == '\0')
			runs = "runs";
		run_dir = xasprintf("%s/%s", runs, run_id);
	}
	if (access(run_dir, F_OK) == 0) {
		char *lj = xasprintf("%s/lab.json", run_dir);
		bool used = access(lj, F_OK) == 0;

		free(lj);
		if (used) {
			fprintf(stderr, "ares lab up: %s already holds a lab "
			    "(ares lab down --run %s first)\n", run_dir,
			    run_dir);
			free(run_dir);
			policy_free(p);
			return EXIT_USAGE;
		}
	}
	if (util_mkdir_p(run_dir, 0755, &e) == -1 ||
	    (abs = realpath(run_dir, NULL)) == NULL) {
		if (e.code == ERRBUF_NONE)
			errbuf_set(&e, ERRBUF_INPUT, "%s: %s", run_dir,
			    strerror(errno));
		free(run_dir);
		policy_free(p);
		return cmd_lab_fail("up", &e);
	}
	free(run_dir);
	run_dir = abs;

	d = docker_connect(NULL, &e);
	if (d == NULL) {
		free(run_dir);
		policy_free(p);
		return cmd_lab_fail("up", &e);
	}
	lo.agent_idle = true;
	lo.lease = true;   /* the lab outlives us: RUN_DIR/lab.lease owns it */
	lo.model_url = a->model_url;
	lo.model_key_env = a->model_key_env;
	if (a->wait)
		cmd_lab_catch_signals();
	lab = lab_up_opts(d, p, run_dir, run_id, a->has_seed ? a->seed :
	    p->seed, &lo, &e);
	if (lab == NULL) {
		rc = cmd_lab_fail("up", &e);
	} else {
		size_t i;

		printf("run dir   %s\n", run_dir);
		printf("run id    %s\n", run_id);
		printf("policy    %s (variant %s)\n", p->path, lab->variant);
		printf("flaws    ");
		for (i = 0; i < p->nflaws; i++)
			printf(" %s", p->flaws[i]);
		printf("%s\n", p->nflaws == 0 ? " none" : "");
		printf("agent     %s (idle; uid %s)\n", lab->agent.name,
		    policy_has_flaw(p, "root-user") ? "0" : "65532");
		printf("exec      docker exec -it %s /bin/sh\n",
		    lab->agent.name);
		printf("status    ares lab status --run %s\n", run_dir);
		printf("down      ares lab down --run %s\n", run_dir);
		if (lab->relay_path != NULL)
			printf("model     through the host relay %s\n",
			    lab->relay_path);
		if (a->wait)
			rc = cmd_lab_serve(d, lab);
		lab_free(lab);
	}
	docker_close(d);
	free(run_dir);
	policy_free(p);
	return rc;
}

/* Print the containers and networks labelled ares.run=<run_id> (or every
 * ares lab when run_id is NULL).  -1 + e. */
static int
cmd_lab_list(struct docker *d, const char *run_id, struct errbuf *e)
{
	char *label = run_id != NULL ? xasprintf("ares.run=%s", run_id) :
	    xstrdup("ares.run");
	cJSON *cs, *ns, *it;
	char clean[3][160];

	cs = docker_containers_by_label(d, label, e);
	ns = cs != NULL ? docker_networks_by_label(d, label, e) : NULL;
	free(label);
	if (ns == NULL) {
		cJSON_Delete(cs);
		return -1;
	}
	printf("%-12s %-44s %-10s %s\n", "ROLE", "CONTAINER", "STATE",
	    "STATUS");
	cJSON_ArrayForEach(it, cs) {
		const cJSON *names = cJSON_GetObjectItemCaseSensitive(it,
		    "Names");
		const cJSON *labels = cJSON_GetObjectItemCaseSensitive(it,
		    "Labels");
		const char *name = "?", *role, *state, *status;
		const cJSON *v;

		if (cJSON_IsArray(names) && cJSON_IsString(names->child))
			name = names->child->valuestring;
		if (name[0] == '/')
			name++;
		v = cJSON_GetObjectItemCaseSensitive(labels, "ares.role");
		role = cJSON_IsString(v) ? v->valuestring : "-";
		v = cJSON_GetObjectItemCaseSensitive(labels, "ares.origin");
		if (cJSON_IsString(v))
			role = "agent-made";
		v = cJSON_GetObjectItemCaseSensitive(it, "State");
		state = cJSON_IsString(v) ? v->valuestring : "?";
		v = cJSON_GetObjectItemCaseSensitive(it, "Status");
		status = cJSON_IsString(v) ? v->valuestring : "";
		util_sanitize(clean[0], sizeof clean[0], name, strlen(name),
		    false);
		util_sanitize(clean[1], sizeof clean[1], state, strlen(state),
		    false);
		util_sanitize(clean[2], sizeof clean[2], status, strlen(status),
		    false);
		printf("%-12s %-44s %-10s %s\n", role, clean[0], clean[1],
		    clean[2]);
	}
	printf("\n%-57s %s\n", "NETWORK", "INTERNAL");
	cJSON_ArrayForEach(it, ns) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "Name");
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(it,
		    "Internal");

		util_sanitize(clean[0], sizeof clean[0], cJSON_IsString(n) ?
		    n->valuestring : "?", cJSON_IsString(n) ?
		    strlen(n->valuestring) : 1, false);
		printf("%-57s %s\n", clean[0], cJSON_IsTrue(in) ? "yes" :
		    "NO (has a route out)");
	}
	if (cJSON_GetArraySize(cs) == 0 && cJSON_GetArraySize(ns) == 0)
		printf("(nothing: the lab is down)\n");
	cJSON_Delete(cs);
	cJSON_Delete(ns);
	return 0;
}

/* ares lab status [--run DIR]: the run's (or every ares lab's)
 * containers and networks.  The exit code. */
static int
cmd_lab_status(const struct cmd_lab_args *a)
{
	struct errbuf e = { 0 };
	struct docker *d;
	char run_id[64];
	int rc = 0;

	if (a->run != NULL && cmd_lab_read_run_id(a->run, run_id, &e) == -1)
		return cmd_lab_fail("status", &e);
	d = docker_connect(NULL, &e);
	if (d == NULL)
		return cmd_lab_fail("status", &e);
	if (a->run != NULL)
		printf("run %s (%s)\n\n", run_id, a->run);
	if (cmd_lab_list(d, a->run != NULL ? run_id : NULL, &e) == -1)
		rc = cmd_lab_fail("status", &e);
	docker_close(d);
	return rc;
}

/* ares lab down --run DIR: remove the run's objects, sockets and lease.
 * The exit code. */
static int
cmd_lab_down(const struct cmd_lab_args *a)
{
	struct errbuf e = { 0 };
	struct docker *d;
	char run_id[64];
	int removed;

	if (a->run == NULL) {
		fprintf(stderr, "ares lab down: --run DIR is required\n%s",
		    cmd_lab_entry.usage);
		return EXIT_USAGE;
	}
	if (cmd_lab_read_run_id(a->run, run_id, &e) == -1)
		return cmd_lab_fail("down", &e);
	d = docker_connect(NULL, &e);
	if (d == NULL)
		return cmd_lab_fail("down", &e);
	removed = lab_teardown(d, run_id, &e);
	docker_close(d);
	if (removed < 0)
		return cmd_lab_fail("down", &e);
	(void)lab_remove_sockets(a->run, run_id);
	gc_lease_remove(a->run);   /* nothing of the lab is left to own */
	printf("run %s: removed %d object(s)\n", run_id, removed);
	return 0;
}

/* ares lab up|status|down [options]: 0 ok, 2 usage / bad input, 3 engine
 * unreachable, 5 failure. */
static int
cmd_lab_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct cmd_lab_args a = { 0 };
	const char *sub;
	int c, rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		cmd_usage(self, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	sub = argv[1];
	optind = 1;
	while ((c = cmd_getopt(self, argc - 1, argv + 1, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'p':
			a.policy = optarg;
			break;
		case 'r':
			a.run = optarg;
			break;
		case 's':
			if (cmd_opt_seed("ares lab", optarg, true, &a.seed) == -1)
				return EXIT_USAGE;
			a.has_seed = true;
			break;
		case 'u':
			if (cmd_opt_url("ares lab", optarg) == -1)
				return EXIT_USAGE;
			a.model_url = optarg;
			break;
		case 'k':
			a.model_key_env = optarg;
			break;
		case 'w':
			a.wait = true;
			break;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ares lab: unexpected argument '%s'\n%s",
		    argv[optind + 1], self->usage);
		return EXIT_USAGE;
	}
	if (strcmp(sub, "up") == 0)
		return cmd_lab_up(&a);
	if (strcmp(sub, "status") == 0)
		return cmd_lab_status(&a);
	if (strcmp(sub, "down") == 0)
		return cmd_lab_down(&a);
	fprintf(stderr, "ares lab: unknown subcommand '%s'\n%s", sub,
	    self->usage);
	return EXIT_USAGE;
}
