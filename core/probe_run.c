/*
 * probe_run.c - running the battery, its verdict, and a lab for probing.
 *
 * Each row runs in the agent container as the agent's own uid (Docker
 * exec, no user given), is recorded (probe_obs.c) and evaluated; the
 * battery stops between rows when cancelled or when the engine is gone.
 * probe_lab brings a lab up for the battery, tears it down (unless kept),
 * anchors the sensor chains and signs probe.json (probe_verify.c).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#define PROBE_EXEC_TIMEOUT "15"          /* seconds, busybox timeout */

/* ------------------------------------------------------------------ */
/* running                                                              */
/* ------------------------------------------------------------------ */

/*
 * Whether the row could not run in this container at all: the exec came
 * back with 126 (not executable) or 127 (not found) and printed nothing
 * but the runtime's own refusal ("OCI runtime exec failed", which Docker
 * 20.10 writes to the exec's stdout).  That is the answer of an agent
 * image without /bin/sh or busybox's tools, not the row's: res says so,
 * ERROR, never a PASS.
 */
static bool
probe_unrunnable(const struct docker_exec_result *xr,
    struct probe_result *res)
{
	static const char oci[] = "OCI runtime exec failed";
	const char *why = xr->out_len > 0 ? xr->out : xr->err;
	size_t wl = xr->out_len > 0 ? xr->out_len : xr->err_len;
	char raw[480];

	if (xr->exit_code != 126 && xr->exit_code != 127)
		return false;
	if (xr->out_len > 0 && (xr->out_len < sizeof oci - 1 ||
	    memcmp(xr->out, oci, sizeof oci - 1) != 0))
		return false;
	snprintf(raw, sizeof raw, "cannot run in this agent container (no "
	    "/bin/sh or no busybox tools; an idle lab of an agent image has "
	    "the probe helper): exit %d: %.*s", (int)xr->exit_code,
	    (int)(wl > 200 ? 200 : wl), why != NULL ? why : "");
	res->outcome = PROBE_ERROR;
	util_sanitize(res->observed, sizeof res->observed, raw, strlen(raw),
	    false);
	return true;
}

/* Run one row in the agent; fills res.  *xe gets the error of an exec
 * that failed (untouched otherwise). */
static void
probe_run_row(struct docker *d, const struct probe_ctx *c,
    const struct probe_row *row, struct evidence *ev,
    struct probe_result *res, struct errbuf *xe)
{
	struct docker_exec_result xr = { 0 };
	struct probe_exec x = { 0 };
	struct errbuf e = { 0 };
	char *script = row->script(c), *host = NULL;
	uint64_t t0 = util_mono_ns();

	memset(res, 0, sizeof *res);
	res->row = row;
	if (c->remote && probe_row_remote_refusal(row) != NULL) {
		/* fail closed: an ERROR, recorded with its reason */
		free(script);
		res->outcome = PROBE_ERROR;
		snprintf(res->observed, sizeof res->observed, "%s",
		    probe_row_remote_refusal(row));
		probe_obs_row(ev, c, row, NULL, res);
		return;
	}
	if (script == NULL) {
		res->outcome = PROBE_ERROR;
		snprintf(res->observed, sizeof res->observed, "the lab lacks "
		    "a fact this row needs (lab.json)");
		probe_obs_row(ev, c, row, NULL, res);
		return;
	}
	{
		const char *argv[8] = { "timeout", PROBE_EXEC_TIMEOUT,
		    "/bin/sh", "-c", script, NULL };
		char *bb = NULL;

		if (c->agent_helper[0] != '\0') {
			/* an agent image, maybe without any shell: the rows
			 * run from the helper's busybox (its sh runs every
			 * applet itself, no PATH needed) */
			bb = xasprintf("%s/busybox", c->agent_helper);
			argv[0] = bb;
			argv[1] = "timeout";
			argv[2] = PROBE_EXEC_TIMEOUT;
			argv[3] = bb;
			argv[4] = "sh";
			argv[5] = "-c";
			argv[6] = script;
			argv[7] = NULL;
		}

		/* no user: the container's own (the agent's uid) */
		if (docker_exec(d, c->agent_id, argv, NULL, PROBE_EXEC_MAX,
		    &xr, &e) == -1) {
			char raw[sizeof e.msg + 16];

			free(bb);
			*xe = e;
			free(script);
			res->outcome = PROBE_ERROR;
			/* sanitized last: a %.Ns cut could split UTF-8 */
			snprintf(raw, sizeof raw, "exec failed: %s", e.msg);
			util_sanitize(res->observed, sizeof res->observed, raw,
			    strlen(raw), false);
			probe_obs_row(ev, c, row, NULL, res);
			res->ms = (double)(util_mono_ns() - t0) / 1e6;
			return;
		}
		free(bb);
	}
	free(script);
	if (probe_unrunnable(&xr, res)) {
		probe_obs_row(ev, c, row, NULL, res);
		res->ms = (double)(util_mono_ns() - t0) / 1e6;
		docker_exec_result_free(&xr);
		return;
	}
	x.exit_code = xr.exit_code;
	x.out = xr.out;
	x.out_len = xr.out_len;
	x.err = xr.err;
	x.err_len = xr.err_len;
	if (row->host != NULL) {
		struct errbuf he = { 0 };

		host = row->host(c, &he);
		x.host = host;
		x.host_len = host != NULL ? strlen(host) : 0;
	}
	probe_obs_row(ev, c, row, &x, res);
	res->ms = (double)(util_mono_ns() - t0) / 1e6;
	if (xr.out != NULL)
		sodium_memzero(xr.out, xr.out_len);  /* may hold env keys */
	docker_exec_result_free(&xr);
	free(host);
}

/* Whether *cancel asks to stop (NULL: never). */
bool
probe_cancelled(const volatile sig_atomic_t *cancel)
{
	return cancel != NULL && *cancel != 0;
}

/* Does the engine still answer?  One GET /_ping within 1.5 s. */
static bool
probe_engine_answers(struct docker *d)
{
	struct docker_response resp = { 0 };
	struct errbuf e = { 0 };
	uint64_t old = docker_set_deadline(d, util_mono_ns() + 1500000000ull);
	int rc = docker_request(d, "GET", "/_ping", NULL, 0, &resp, &e);
	bool ok = rc == 0 && resp.status == 200;

	(void)docker_set_deadline(d, old);
	if (rc == 0)
		docker_response_free(&resp);
	return ok;
}

/* probe_run with fn (may be NULL) called after each row and cancel (may be
 * NULL) checked before each row. */
static int
probe_run_watch(struct docker *d, const struct probe_ctx *c,
    const char *only_flaw, probe_row_fn fn, void *ctx,
    const volatile sig_atomic_t *cancel, struct probe_report *r,
    struct errbuf *e)
{
	struct errbuf oe = { 0 };
	struct evidence *ev;
	size_t i;

	if (only_flaw != NULL && flaw_find(only_flaw) == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "--flaw: unknown flaw '%s' "
		    "(known: %s)", only_flaw, flaw_ids());
	memset(r, 0, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, "%s", c->run_id);
	snprintf(r->run_dir, sizeof r->run_dir, "%s", c->run_dir);
	snprintf(r->policy, sizeof r->policy, "%s", c->policy);
	snprintf(r->variant, sizeof r->variant, "%s", c->variant);
	snprintf(r->note, sizeof r->note, "%s", c->note);
	for (i = 0; i < c->nflaws; i++)
		memcpy(r->flaws[i], c->flaws[i], sizeof r->flaws[i]);
	r->nflaws = c->nflaws;
	if (only_flaw != NULL)
		snprintf(r->only_flaw, sizeof r->only_flaw, "%s", only_flaw);
	util_wall_iso(util_wall_ns(), r->started);
	ev = probe_obs_open(c, only_flaw, &oe);   /* NULL: obs_failed */
	for (i = 0; i < probe_nrows && r->nplanned < PROBE_MAX_ROWS; i++)
		if (only_flaw == NULL ||
		    probe_row_has_flaw(&probe_table[i], only_flaw))
			r->nplanned++;
	/* test only (docs/cli-probe.md): a stop before the first row */
	util_test_hook("battery", cancel);
	for (i = 0; i < probe_nrows && r->nrows < PROBE_MAX_ROWS; i++) {
		if (only_flaw != NULL &&
		    !probe_row_has_flaw(&probe_table[i], only_flaw))
			continue;
		if (probe_cancelled(cancel)) {
			r->cancelled = true;
			break;
		}
		struct errbuf xe = { 0 };

		probe_run_row(d, c, &probe_table[i], ev,
		    &r->rows[r->nrows++], &xe);
		if (fn != NULL)
			fn(ctx, r, r->nrows - 1);
		/* an exec the engine did not serve: when the engine is gone,
		 * every further row would fail the same way; stop */
		if (xe.code != ERRBUF_NONE && (xe.code == ERRBUF_ENGINE ||
		    !probe_engine_answers(d))) {
			r->engine_lost = true;
			util_sanitize(r->engine_error, sizeof r->engine_error,
			    xe.msg, strlen(xe.msg), false);
			break;
		}
	}
	probe_obs_close(ev, r);
	return 0;
}

int
probe_run(struct docker *d, const struct probe_ctx *c, const char *only_flaw,
    const volatile sig_atomic_t *cancel, struct probe_report *r,
    struct errbuf *e)
{
	if (probe_run_watch(d, c, only_flaw, NULL, NULL, cancel, r, e) == -1)
		return -1;
	snprintf(r->anchor_note, sizeof r->anchor_note, "not anchored: the "
	    "lab is still up (an existing lab was probed), its sensors still "
	    "write");
	return 0;
}

bool
probe_held(const struct probe_report *r)
{
	size_t i;

	if (r->cancelled || r->chain_failed || r->obs_failed ||
	    r->engine_lost)
		return false;
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].row->core && r->rows[i].outcome != PROBE_PASS)
			return false;
	return true;
}

const char *
probe_result_name(const struct probe_report *r)
{
	if (r->cancelled)
		return "cancelled";
	return probe_held(r) ? "held" : "failed";
}

bool
probe_saw_flaw(const struct probe_report *r, const char *flaw)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].outcome == PROBE_FAIL &&
		    probe_row_has_flaw(r->rows[i].row, flaw))
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* a lab for probing                                                    */
/* ------------------------------------------------------------------ */

/*
 * A lab on a remote engine keeps its sensor chains in the containers'
 * volumes: its containers are stopped (SIGKILL, as the teardown would)
 * so that nothing writes any more, then the chains are fetched into
 * RUN_DIR/evidence (lab_evidence_pull) before the teardown removes the
 * volumes.  0, or -1 + e naming what failed (a chain missing then fails
 * the anchoring, never a held battery).
 */
static int
probe_remote_pull(struct docker *d, struct lab *lab, struct errbuf *e)
{
	char first[256];
	size_t killed;

	/* (one that could not be killed is not told apart here) */
	(void)lab_kill_all(d, lab, &killed, first, sizeof first);
	if (lab_evidence_pull(d, lab, e) == -1)
		return errbuf_prefix(e, "probe: the evidence of the remote lab");
	return 0;
}

int
probe_lab(struct docker *d, const struct policy *p,
    const struct probe_options *o, struct probe_report *r, struct errbuf *e)
{
	struct lab_options lo = { .agent_idle = true,
	    .weaken = o->weaken };
	const char *runs_dir = o->runs_dir;
	struct probe_ctx c;
	struct lab *lab;
	struct gc_report *gc;
	char run_id[64], *dir, *abs;
	struct errbuf pe = { 0 };
	bool ran = false, gc_ok;
	int rc, pulled = 0;

	if (runs_dir == NULL || runs_dir[0] == '\0')
		runs_dir = getenv("ARES_RUNS");
	if (runs_dir == NULL || runs_dir[0] == '\0')
		runs_dir = "runs";
	util_new_id(run_id);
	dir = xasprintf("%s/%s", runs_dir, run_id);
	if (util_mkdir_p(dir, 0755, e) == -1) {
		free(dir);
		return -1;
	}
	abs = realpath(dir, NULL);
	free(dir);
	if (abs == NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "probe: realpath of the "
		    "run dir: %s", strerror(errno));
	/* What ares processes that are gone left on this engine. */
	gc = xcalloc(1, sizeof *gc);
	gc_ok = gc_sweep(d, gc, e) == 0;
	if (!gc_ok && e->code == ERRBUF_ENGINE) {
		snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
		snprintf(r->run_dir, sizeof r->run_dir, "%s", abs);
		free(abs);
		free(gc);
		return -1;
	}
	memset(e, 0, sizeof *e);
	lo.lease = o->keep;   /* a kept lab outlives us (ares lab down) */
	lab = lab_up_opts(d, p, abs, run_id, p->seed, &lo, e);
	if (lab == NULL) {
		snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
		snprintf(r->run_dir, sizeof r->run_dir, "%s", abs);
		if (gc_ok) {
			r->gc = *gc;
			r->gc_ran = true;
		}
		free(gc);
		free(abs);
		return -1;
	}
	rc = probe_ctx_load(d, abs, &c, e);
	if (rc == 0) {
		rc = probe_run_watch(d, &c, o->only_flaw, o->row_fn,
		    o->row_ctx, o->cancel, r, e);
		probe_ctx_free(&c);
		ran = rc == 0;
		if (ran && o->nc_item != NULL) {
			r->nc = true;
			snprintf(r->nc_item, sizeof r->nc_item, "%s",
			    o->nc_item);
		}
	}
	if (gc_ok) {
		r->gc = *gc;
		r->gc_ran = true;
	}
	free(gc);
	/* a remote lab: its chains out before the teardown removes them */
	if (lab->remote && !r->engine_lost && !o->keep)
		pulled = probe_remote_pull(d, lab, &pe);
	if (r->engine_lost) {
		/* No engine: a short teardown, then the lab's containers are
		 * stopped by their cgroups so that their chains stop growing
		 * and can be anchored; gc removes the rest once the engine is
		 * back.  The partial battery is still signed. */
		struct errbuf te = { 0 };
		char note[256];

		(void)docker_set_deadline(d, util_mono_ns() + 2000000000ull);
		(void)lab_teardown(d, run_id, &te);
		(void)docker_set_deadline(d, 0);
		/* (a remote lab's containers are not this machine's) */
		if (!o->keep && !lab->remote)
			(void)lab_kill_local(lab, NULL, note, sizeof note);
		errbuf_set(e, ERRBUF_INTERNAL, "probe: the engine stopped "
		    "answering during the battery: %s", r->engine_error);
		rc = -1;
		if (!o->keep && probe_anchor_chains(r, &te) == -1)
			snprintf(r->anchor_note, sizeof r->anchor_note, "not "
			    "anchored: %.200s", te.msg);
	}
	lab_free(lab);
	/* Teardown first: the sensors stop writing, then their chains are
	 * verified and anchored in the signed probe.json. */
	if (r->engine_lost) {
		/* done above */
	} else if (!o->keep) {
		struct errbuf te = { 0 };

		if (lab_teardown(d, run_id, &te) < 0 && rc == 0) {
			*e = te;
			errbuf_prefix(e, "probe: teardown");
			rc = -1;
			snprintf(r->anchor_note, sizeof r->anchor_note, "not "
			    "anchored: the lab could not be torn down");
		} else
			(void)lab_remove_sockets(abs, run_id);
	} else if (rc == 0)
		snprintf(r->anchor_note, sizeof r->anchor_note, "not anchored: "
		    "the lab was kept up (--keep-lab), its sensors still "
		    "write");
	if (rc == 0 && !o->keep && probe_anchor_chains(r, e) == -1)
		rc = -1;
	if (pulled == -1 && rc == 0) {
		/* fail closed: a chain that could not be fetched is evidence
		 * of the run that cannot be checked, never "held" */
		r->chain_failed = true;
		snprintf(r->anchor_note, sizeof r->anchor_note, "%.250s",
		    pe.msg);
	}
	if (ran) {
		struct errbuf se = { 0 };

		if (probe_write_signed(r, o->key_dir, &se) == -1 && rc == 0) {
			*e = se;
			rc = -1;
		}
	}
	free(abs);
	return rc;
}
