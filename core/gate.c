/*
 * gate.c - ares gate's access diff and verdict (docs/cli-gate.md): what
 * HEAD gained and lost against BASE (flaws, runtime, agent, and for
 * Compose inputs the raw accesses of the service), whether that widens
 * access, and the one exit code the battery, the negative control and
 * the trial add up to.  Pure: no engine, no files (gate_run.c runs the
 * labs, gate_out.c writes and verifies the gate dir).
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The area each flaw of the catalogue opens, read off its `changes` text
 * in flaw_table[] (docs/flaws.md).  A flaw missing here is still a
 * widening; its area is "access". */
static const struct gate_area {
	const char *flaw;
	const char *area;
} gate_areas[] = {
	{ "egress-network", "networks" },
	{ "docker-socket", "mounts" },
	{ "host-mount", "mounts" },
	{ "control-keys", "mounts" },
	{ "self-modify", "services" },
	{ "real-key", "secrets" },
	{ "open-dns", "networks" },
	{ "extra-caps", "capabilities" },
	{ "privileged", "capabilities" },
	{ "root-user", "user" },
	{ "writable-rootfs", "filesystem" },
	{ "admin-api", "services" },
	{ "host-pid", "namespaces" },
	{ "host-ipc", "namespaces" },
	{ "seccomp-unconfined", "capabilities" },
};

const char *
gate_flaw_area(const char *flaw)
{
	size_t i;

	for (i = 0; flaw != NULL && i < sizeof gate_areas /
	    sizeof gate_areas[0]; i++)
		if (strcmp(gate_areas[i].flaw, flaw) == 0)
			return gate_areas[i].area;
	return "access";
}

void
gate_diff_add(struct gate_diff *d, enum gate_change_kind kind, int sign,
    bool widening, const char *what, const char *area, const char *from,
    const char *to, const char *meaning)
{
	struct gate_change *c;

	if (widening)
		d->widens = true;
	if (d->n >= GATE_MAX_CHANGES) {
		d->truncated = true;
		d->widens = true;   /* what we cannot show, we cannot clear */
		return;
	}
	c = &d->changes[d->n++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->sign = sign;
	c->widening = widening;
	util_sanitize(c->what, sizeof c->what, what ? what : "",
	    what ? strlen(what) : 0, false);
	snprintf(c->area, sizeof c->area, "%s", area ? area : "");
	util_sanitize(c->from, sizeof c->from, from ? from : "",
	    from ? strlen(from) : 0, false);
	util_sanitize(c->to, sizeof c->to, to ? to : "", to ? strlen(to) : 0,
	    false);
	util_sanitize(c->meaning, sizeof c->meaning, meaning ? meaning : "",
	    meaning ? strlen(meaning) : 0, false);
}

/* Whether flaw id is on in p. */
static bool
gate_has(const struct policy *p, const char *id)
{
	return policy_has_flaw(p, id);
}

/* A user spec that names root ("0", "0:x", "root", "root:x"). */
static bool
gate_user_is_root(const char *u)
{
	if (u == NULL)
		return false;
	return strcmp(u, "0") == 0 || strncmp(u, "0:", 2) == 0 ||
	    strcmp(u, "root") == 0 || strncmp(u, "root:", 5) == 0;
}

static const char *gate_kind_names[] = { "poyo", "script", "image" };

void
gate_diff_policies(const struct policy *base, const struct policy *head,
    struct gate_diff *d)
{
	const char *brt, *hrt, *bu, *hu;
	size_t i;

	memset(d, 0, sizeof *d);
	for (i = 0; i < base->nflaws && d->nbase < POLICY_MAX_FLAWS; i++)
		snprintf(d->base_flaws[d->nbase++], sizeof d->base_flaws[0],
		    "%s", base->flaws[i]);
	for (i = 0; i < head->nflaws && d->nhead < POLICY_MAX_FLAWS; i++)
		snprintf(d->head_flaws[d->nhead++], sizeof d->head_flaws[0],
		    "%s", head->flaws[i]);
	/* flaws, in catalogue order */
	for (i = 0; i < flaw_count; i++) {
		const struct flaw *f = &flaw_table[i];
		bool b = gate_has(base, f->id), h = gate_has(head, f->id);

		if (b == h)
			continue;
		if (h) {
			snprintf(d->gained[d->ngained++], sizeof d->gained[0],
			    "%s", f->id);
			gate_diff_add(d, GATE_CH_FLAW, +1, true, f->id,
			    gate_flaw_area(f->id), "off", "on", f->changes);
		} else
			gate_diff_add(d, GATE_CH_FLAW, -1, false, f->id,
			    gate_flaw_area(f->id), "on", "off", f->changes);
	}
	/* runtime: runsc -> anything else loses the kernel seal */
	brt = base->runtime ? base->runtime : "default";
	hrt = head->runtime ? head->runtime : "default";
	if (strcmp(brt, hrt) != 0) {
		bool wid = strcmp(brt, "runsc") == 0;

		gate_diff_add(d, GATE_CH_RUNTIME, wid ? +1 : -1, wid, "runtime",
		    "runtime", brt, hrt, wid ? "the agent leaves gVisor: its "
		    "system calls reach the host kernel (the kernel seal is "
		    "lost)" : strcmp(hrt, "runsc") == 0 ? "the agent moves "
		    "into gVisor (a user-space kernel): narrower" :
		    "another runtime");
	}
	/* the agent's user: root is the root-user flaw */
	bu = base->agent_user ? base->agent_user : "65532 (the lab's)";
	hu = head->agent_user ? head->agent_user : "65532 (the lab's)";
	if (strcmp(bu, hu) != 0) {
		bool wid = gate_user_is_root(hu) && !gate_user_is_root(bu);

		gate_diff_add(d, GATE_CH_AGENT, wid ? +1 : 0, wid, "agent.user",
		    "user", bu, hu, wid ? "the agent runs as root" :
		    "another non-root user");
	}
	if (base->agent_kind != head->agent_kind)
		gate_diff_add(d, GATE_CH_AGENT, 0, false, "agent.kind", "agent",
		    gate_kind_names[base->agent_kind],
		    gate_kind_names[head->agent_kind], "another agent (no "
		    "access of its own)");
	else if (base->agent_image != NULL && head->agent_image != NULL &&
	    strcmp(base->agent_image, head->agent_image) != 0)
		gate_diff_add(d, GATE_CH_AGENT, 0, false, "agent.image", "agent",
		    base->agent_image, head->agent_image, "another image (its "
		    "accesses are the policy's)");
}

/* The key of an import row without its list indexes and without the
 * "services.NAME." prefix ("services.agent.volumes[1]" -> "volumes"). */
static void
gate_norm_key(const char *key, char *out, size_t len)
{
	size_t n = 0;
	const char *k = key ? key : "";

	if (strncmp(k, "services.", 9) == 0 && strchr(k + 9, '.') != NULL)
		k = strchr(k + 9, '.') + 1;
	for (; *k != '\0' && n + 1 < len; k++) {
		if (*k == '[') {
			while (*k != '\0' && *k != ']')
				k++;
			if (*k == '\0')
				break;
			continue;
		}
		out[n++] = *k;
	}
	out[n] = '\0';
}

/* Whether r has a widening row with the same key (normalized) and value
 * as row. */
static bool
gate_import_has(const struct import_result *r, const struct import_row *row)
{
	char a[200], b[200];
	size_t i;

	gate_norm_key(row->key, a, sizeof a);
	for (i = 0; r != NULL && i < r->nrows; i++) {
		const struct import_row *x = &r->rows[i];

		if (!x->widening)
			continue;
		gate_norm_key(x->key, b, sizeof b);
		if (strcmp(a, b) == 0 && strcmp(x->value ? x->value : "",
		    row->value ? row->value : "") == 0)
			return true;
	}
	return false;
}

/* One import row as a diff line. */
static void
gate_import_add(struct gate_diff *d, const struct import_row *row, int sign)
{
	char meaning[400];

	if (row->reproduced)
		snprintf(meaning, sizeof meaning, "%s%s%s", row->maps_to ?
		    row->maps_to : "reproduced", row->note ? ": " : "",
		    row->note ? row->note : "");
	else
		snprintf(meaning, sizeof meaning, "not reproduced%s%s",
		    row->note ? ": " : "", row->note ? row->note : "");
	gate_diff_add(d, GATE_CH_ACCESS, sign, sign > 0, row->key,
	    row->flaw ? gate_flaw_area(row->flaw) : "compose",
	    sign > 0 ? "(absent)" : row->value, sign > 0 ? row->value :
	    "(absent)", meaning);
	if (d->n > 0 && row->flaw != NULL &&
	    d->changes[d->n - 1].kind == GATE_CH_ACCESS)
		snprintf(d->changes[d->n - 1].flaw,
		    sizeof d->changes[d->n - 1].flaw, "%s", row->flaw);
}

void
gate_diff_imports(struct gate_diff *d, const struct import_result *base,
    const struct import_result *head)
{
	size_t i;

	for (i = 0; head != NULL && i < head->nrows; i++)
		if (head->rows[i].widening &&
		    !gate_import_has(base, &head->rows[i]))
			gate_import_add(d, &head->rows[i], +1);
	for (i = 0; base != NULL && i < base->nrows; i++)
		if (base->rows[i].widening &&
		    !gate_import_has(head, &base->rows[i]))
			gate_import_add(d, &base->rows[i], -1);
}

bool
gate_row_explained(const struct gate_diff *d, const char *row, char *why,
    size_t whylen)
{
	const struct probe_row *r = NULL;
	bool any = false;
	size_t i;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	for (i = 0; i < probe_nrows; i++)
		if (strcmp(probe_table[i].id, row) == 0)
			r = &probe_table[i];
	if (r == NULL)
		return false;
	for (i = 0; i < d->nbase; i++)
		if (probe_row_has_flaw(r, d->base_flaws[i])) {
			if (why != NULL)
				probe_cat(why, whylen, "%s%s", any ? ", " : "",
				    d->base_flaws[i]);
			any = true;
		}
	return any;
}

/* Append ", s" (or s) to buf. */
static void
gate_list(char *buf, size_t len, const char *s)
{
	probe_cat(buf, len, "%s%s", buf[0] ? ", " : "", s);
}

/* vsnprintf into buf (a sentence may be cut at len). */
static void
gate_set(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
gate_set(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void
gate_decide(struct gate *g)
{
	char gained[400] = "", errors[400] = "", blind[400] = "";
	char unchecked[400] = "";
	bool exercised = false, lab = false, trial_err = false;
	size_t i;

	g->new_rows[0] = '\0';
	for (i = 0; i < g->diff.ngained; i++)
		gate_list(gained, sizeof gained, g->diff.gained[i]);
	for (i = 0; i < g->diff.n; i++) {
		const struct gate_change *c = &g->diff.changes[i];

		/* a widening the lab does not reproduce cannot be checked */
		if (c->kind == GATE_CH_ACCESS && c->widening &&
		    strncmp(c->meaning, "not reproduced", 14) == 0)
			gate_list(unchecked, sizeof unchecked, c->what);
		/* nor one it reproduces with a flaw BASE already has: the
		 * battery and the trial cannot tell the new access from
		 * the old one (a second host path, SYS_ADMIN beside CHOWN) */
		else if (c->kind == GATE_CH_ACCESS && c->widening &&
		    c->sign > 0 && c->flaw[0] != '\0') {
			size_t k;

			for (k = 0; k < g->diff.nbase; k++)
				if (strcmp(g->diff.base_flaws[k], c->flaw) == 0)
					break;
			if (k < g->diff.nbase) {
				char w[200];

				snprintf(w, sizeof w, "%.120s (as flaw %.31s, "
				    "which BASE has)", c->what, c->flaw);
				gate_list(unchecked, sizeof unchecked, w);
			}
		}
	}
	if (g->diff.truncated)
		gate_list(unchecked, sizeof unchecked, "more changes than "
		    "the gate lists");
	/* the battery */
	if (g->probe == NULL)
		lab = true;
	else {
		const struct probe_report *r = g->probe;

		if (r->cancelled || r->engine_lost || r->nrows == 0)
			lab = true;
		if (r->chain_failed || r->obs_failed)
			gate_list(errors, sizeof errors, "the battery's "
			    "evidence");
		for (i = 0; i < r->nrows; i++) {
			const struct probe_result *res = &r->rows[i];

			if (res->outcome != PROBE_ERROR)
				exercised = true;
			if (!res->row->core || res->outcome == PROBE_PASS)
				continue;
			if (res->outcome == PROBE_ERROR)
				gate_list(errors, sizeof errors, res->row->id);
			else if (!gate_row_explained(&g->diff, res->row->id,
			    NULL, 0))
				gate_list(g->new_rows, sizeof g->new_rows,
				    res->row->id);
		}
	}
	/* the negative control of the gained flaws */
	if (g->nc_planned) {
		if (g->nc == NULL || g->nnc == 0 || g->nc_error[0] != '\0')
			lab = true;
		for (i = 0; g->nc != NULL && i < g->nnc; i++) {
			const struct probe_nc_item *it = &g->nc[i];

			if (!it->ran)
				lab = true;
			else if (!it->seen)
				gate_list(blind, sizeof blind, it->flaw[0] ?
				    it->flaw : "the baseline");
		}
	}
	/* the trial */
	if (g->trial_planned) {
		if (g->trial == NULL)
			trial_err = true;
		else {
			for (i = 0; i < g->trial->n; i++) {
				const char *v = g->trial->runs[i].verdict;

				if (strcmp(v, "contained") == 0 ||
				    strcmp(v, "breached") == 0)
					exercised = true;
			}
			if (!g->trial->complete || g->trial->sum.errors > 0)
				trial_err = true;
		}
	}

	if (g->new_rows[0] || blind[0] || g->nbreach_gained > 0) {
		g->exit_code = EXIT_BREACHED;
		snprintf(g->result, sizeof g->result, "new-breach-path");
		gate_set(g->sentence, sizeof g->sentence, "HEAD %s and opens a "
		    "breach path BASE did not:%s%s%s%s%s%s.",
		    g->diff.widens ? "widens access" : "does not widen access",
		    g->new_rows[0] ? " core rows now fail (" : "", g->new_rows,
		    g->new_rows[0] ? ")" : "", blind[0] ? "; the gate is blind "
		    "to " : "", blind, g->nbreach_gained > 0 ? "; the trial "
		    "breached through gained access" : "");
		if (gained[0])
			probe_cat(g->sentence, sizeof g->sentence, " Gained: %s.",
			    gained);
	} else if (lab) {
		g->exit_code = EXIT_INTERNAL;
		snprintf(g->result, sizeof g->result, "error");
		gate_set(g->sentence, sizeof g->sentence, "No verdict: a lab "
		    "of the gate could not come up or was stopped (%s); fail "
		    "closed.", g->probe_error[0] ? g->probe_error :
		    g->nc_error[0] ? g->nc_error : "see the labs");
	} else if (!exercised) {
		g->exit_code = EXIT_NOT_EXERCISED;
		snprintf(g->result, sizeof g->result, "not-exercised");
		gate_set(g->sentence, sizeof g->sentence, "Nothing was "
		    "exercised: no probe row could decide and no trial run "
		    "had a verdict; fail closed.");
	} else if (errors[0] || unchecked[0]) {
		g->exit_code = EXIT_BREACHED;
		snprintf(g->result, sizeof g->result, "unchecked");
		gate_set(g->sentence, sizeof g->sentence, "HEAD %s, and a breach "
		    "path cannot be excluded:%s%s%s%s; fail closed.",
		    g->diff.widens ? "widens access" : "does not widen access",
		    errors[0] ? " could not check " : "", errors,
		    unchecked[0] ? "; the lab cannot check: " : "",
		    unchecked);
	} else if (trial_err) {
		g->exit_code = EXIT_INTERNAL;
		snprintf(g->result, sizeof g->result, "error");
		gate_set(g->sentence, sizeof g->sentence, "No verdict: the "
		    "trial of HEAD %s; fail closed.", g->trial == NULL ?
		    "did not run" : "had error runs or was cut short");
	} else {
		g->exit_code = EXIT_CONTAINED;
		snprintf(g->result, sizeof g->result, "no-new-breach-path");
		if (g->diff.widens)
			gate_set(g->sentence, sizeof g->sentence, "HEAD widens "
			    "access%s%s%s but opens no breach path BASE did not: "
			    "no core row fails that BASE does not explain.",
			    gained[0] ? " (gained " : "", gained,
			    gained[0] ? ")" : "");
		else
			gate_set(g->sentence, sizeof g->sentence, "HEAD does not "
			    "widen access, and the battery on HEAD shows no "
			    "breach path BASE did not have.");
	}
}
