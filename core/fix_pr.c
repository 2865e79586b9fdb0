/*
 * fix_pr.c - the fix loop's outcome names, exit code and the
 * pull-request text (pr.md, attempt.md; docs/fix.md).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pull-request text -------------------------------------------- */

/* The outcome as fix.json spells it (static string). */
const char *
fix_outcome_name(enum fix_outcome o)
{
	switch (o) {
	case FIX_OUTCOME_VERIFIED:
		return "verified";
	case FIX_OUTCOME_NOT_A_FIX:
		return "not-a-fix";
	case FIX_OUTCOME_UNPROVEN:
		return "unproven";
	case FIX_OUTCOME_UNATTRIBUTED:
		return "unattributed";
	case FIX_OUTCOME_NOTHING:
		return "nothing-to-fix";
	case FIX_OUTCOME_ERROR:
		return "error";
	}
	return "error";
}

/* The exit code of ares fix: 0 verified, 6 verified but a push, pull
 * request or Slack post that was asked for failed, 5 error, 1 otherwise. */
int
fix_exit_code(const struct fix_result *r)
{
	switch (r->outcome) {
	case FIX_OUTCOME_VERIFIED:
		return r->delivery_failed ? FIX_EXIT_NOT_DELIVERED :
		    EXIT_CONTAINED;
	case FIX_OUTCOME_ERROR:
		return EXIT_INTERNAL;
	default:
		return EXIT_BREACHED;
	}
}

/* Comma list of removed flaws into out. */
static void
fix_removed_list(const struct fix_result *r, char *out, size_t len)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < r->nremoved && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%s",
		    i ? ", " : "", r->removed[i]);
}

/* The pull-request title (caller frees). */
char *
fix_pr_title(const struct fix_result *r)
{
	char fl[512];

	fix_removed_list(r, fl, sizeof fl);
	return xasprintf("ares fix: turn off flaw %s in policy %s", fl,
	    r->policy_name);
}

/* text (sanitized already) as an inline code span: backticks become
 * "'" so nothing in it ends the span (no mention, link or HTML from
 * evidence text).  Into out. */
static void
fix_md_code(char *out, size_t len, const char *text)
{
	size_t i;

	snprintf(out, len, "`%s", text);
	for (i = 1; out[i] != '\0'; i++)
		if (out[i] == '`')
			out[i] = '\'';
	if (strlen(out) + 2 <= len)
		strcat(out, "`");
	else
		out[len - 2] = '`';
}

/* fix_pr_body with the model-written section (section: a Markdown block,
 * after the change) or, when the model call failed, a one-line note
 * (note); both NULL: neither. */
char *
fix_pr_body_x(const struct fix_result *r, const char *section,
    const char *note)
{
	char fl[512], code[600];
	size_t i;
	struct util_buf ob;

#define PUT(...) util_buf_printf(&ob, __VA_ARGS__)
	util_buf_init(&ob, 8192);
	fix_removed_list(r, fl, sizeof fl);
	PUT("## What broke out\n\n");
	if (r->nruns > 0) {
		const struct fix_run_ref *o = &r->runs[0];

		fix_md_code(code, sizeof code, o->reason);
		PUT("Drill `%s` (policy `%s`, variant `%s`, seed %llu) ended "
		    "**%s**: %s.\n\n", o->run_id, r->policy_name, o->variant,
		    (unsigned long long)o->seed, o->verdict, code);
	}
	PUT("## Which flaw\n\n");
	for (i = 0; i < r->nattributed; i++) {
		const struct fix_hit *h = &r->attributed[i];
		const struct flaw *f = flaw_find(h->flaw);

		fix_md_code(code, sizeof code, h->evidence);
		PUT("- `%s` (%s): %zu evidence line(s)%s, e.g. %s\n", h->flaw,
		    f ? f->summary : "?", h->events, h->breakout ?
		    " on the breakout path" : "", code);
	}
	PUT("\nAttribution is deterministic (no model): evidence kinds of the "
	    "flaw catalogue (docs/flaws.md), only flaws that were on in the "
	    "run's policy.\n\n");
	if (r->compose_patched && r->compose_diff != NULL)
		PUT("## The change\n\nRemove the access in the Compose file "
		    "`%s` (service `%s`):\n\n```diff\n%s```\n\nand turn off "
		    "`%s` in `%s`:\n\n```diff\n%s```\n\n", r->compose_path,
		    r->compose_service, r->compose_diff, fl, r->policy_path,
		    r->diff ? r->diff : "");
	else
		PUT("## The change\n\nTurn off `%s` in `%s`:\n\n```diff\n"
		    "%s```\n\n", fl, r->policy_path, r->diff ? r->diff : "");
	if (r->compose_note[0] != '\0')
		PUT("%s\n\n", r->compose_note);
	if (section != NULL)
		PUT("%s\n", section);
	else if (note != NULL)
		PUT("_%s_\n\n", note);
	PUT("## Evidence\n\n| role | run id | variant | seed | verdict | "
	    "time to kill | report.json BLAKE2b-256 |\n"
	    "|---|---|---|---|---|---|---|\n");
	for (i = 0; i < r->nruns; i++) {
		const struct fix_run_ref *x = &r->runs[i];
		char ttk[32];

		if (x->time_to_kill_ms >= 0)
			snprintf(ttk, sizeof ttk, "%.3f ms", x->time_to_kill_ms);
		else
			snprintf(ttk, sizeof ttk, "-");
		PUT("| %s | `%s` | %s | %llu | %s | %s | `%s` |\n", x->role,
		    x->run_id, x->variant, (unsigned long long)x->seed,
		    x->verdict, ttk, x->report_hash[0] ? x->report_hash : "-");
	}
	PUT("\nOutcome: **%s** - %s\n\n", fix_outcome_name(r->outcome),
	    r->reason);
	if (r->heldout_shipped[0] != '\0' || r->heldout_gen) {
		PUT("## Held-out dressings\n\nA fix must hold on dressings it "
		    "was not tuned on, not only on the training variant:\n\n");
		if (r->heldout_shipped[0] != '\0')
			PUT("- shipped held-out variant `%s` (role `held-out`)\n",
			    r->heldout_shipped);
		if (r->heldout_gen) {
			fix_md_code(code, sizeof code, r->heldout_gen_company);
			PUT("- generated held-out dressing `%s` (role "
			    "`held-out-gen`): variant_seed %llu, company %s, ",
			    r->heldout_gen_id,
			    (unsigned long long)r->heldout_gen_seed, code);
			fix_md_code(code, sizeof code, r->heldout_gen_service);
			PUT("service %s; a seed none of this fix's runs used "
			    "(derived from run `%s`, counter %u).  Regenerate it "
			    "with `ares variant gen --seed %llu`.\n",
			    code, r->nruns > 0 ? r->runs[0].run_id : "?",
			    r->heldout_gen_counter,
			    (unsigned long long)r->heldout_gen_seed);
		}
		PUT("\n");
	}
	PUT("## How to verify\n\n```sh\n");
	for (i = 0; i < r->nruns; i++)
		PUT("ares verify %s\n", r->runs[i].run_dir);
	if (r->nruns > 0)
		PUT("minisign -Vm %s/report.json -p %s/ares.pub\n",
		    r->runs[0].run_dir, r->runs[0].run_dir);
	PUT("minisign -Vm %s/fix.json -p %s/ares.pub\n```\n\n"
	    "Pin the public key you trust with `ares verify RUN_DIR --pub "
	    "FILE` (the copy in a run directory only proves consistency).\n\n"
	    "Fix loop `%s`, evidence `%s/evidence.jsonl`.\n", r->fix_dir,
	    r->fix_dir, r->fix_id, r->fix_dir);
#undef PUT
	return ob.s;
}

/* The pull-request body in Markdown: what broke out, which flaw, the
 * change, the evidence table, the outcome and how to verify (also
 * attempt.md's text), without a model-written section.  Caller frees. */
char *
fix_pr_body(const struct fix_result *r)
{
	return fix_pr_body_x(r, NULL, NULL);
}
