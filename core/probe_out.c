/*
 * probe_out.c - a battery's report as a table, JSON (PROBE_FORMAT) and
 * JUnit XML (docs/cli-probe.md).
 *
 * Observed text comes from inside the lab: it is sanitized before anyone
 * prints it, and XML-escaped before it goes into JUnit.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* output: table                                                        */
/* ------------------------------------------------------------------ */

/* Length of the UTF-8 sequence starting with byte b (1 for bad bytes). */
static size_t
probe_u8len(unsigned char b)
{
	if (b >= 0xf0 && b < 0xf8)
		return 4;
	if (b >= 0xe0)
		return b < 0xf0 ? 3 : 1;
	if (b >= 0xc0)
		return 2;
	return 1;
}

/*
 * Take the next line of at most width columns (code points) from *p,
 * breaking after the last space when the text is longer, never inside a
 * UTF-8 sequence.  Writes it to out (NUL-terminated); advances *p past it
 * and the spaces after it.  Returns false when *p is empty.
 */
static bool
probe_wrap_next(const char **p, size_t width, char *out, size_t outlen)
{
	const char *s = *p, *brk = NULL, *q = s;
	size_t cols = 0, n;

	while (*s == ' ')
		s++;
	if (*s == '\0')
		return false;
	q = s;
	while (*q != '\0' && cols < width) {
		size_t l = probe_u8len((unsigned char)*q), k;

		for (k = 1; k < l; k++)
			if (q[k] == '\0')
				l = k;
		if (*q == ' ')
			brk = q;
		q += l;
		cols++;
	}
	if (*q != '\0' && *q != ' ' && brk != NULL && brk > s)
		q = brk;   /* break at the last space */
	n = (size_t)(q - s);
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	while (*q == ' ')
		q++;
	*p = q;
	return true;
}

/* The results table (core.h), written to a growing string (open_memstream);
 * the padding of empty cells is trimmed from the ends of lines. */
char *
probe_table_format(const struct probe_report *r, int width)
{
	char *buf = NULL, line_a[512], line_o[512];
	size_t blen = 0, i, held_fail = 0, ncore = 0;
	FILE *f = open_memstream(&buf, &blen);
	size_t w, aw, ow;
	char rule[256];

	if (f == NULL)
		util_fatal("open_memstream failed");
	if (width < 60)
		width = 60;
	if (width > 200)
		width = 200;
	w = (size_t)width - 1;            /* never write the last column */
	aw = (w - 10) * 45 / 100;         /* attack column */
	ow = w - 10 - aw - 2;             /* observed column */
	memset(rule, '=', w);
	rule[w] = '\0';
	fprintf(f, "%s\n ares inside-out escape probes  (attack -> expected "
	    "-> observed)\n", rule);
	{
		char hdr[1400];
		const char *p = hdr;

		snprintf(hdr, sizeof hdr, "run %s, policy %s, variant %s, "
		    "agent as its own uid (docker exec)", r->run_id, r->policy,
		    r->variant);
		while (probe_wrap_next(&p, w - 1, line_a, sizeof line_a))
			fprintf(f, " %s\n", line_a);
		if (r->note[0] != '\0') {
			p = r->note;
			while (probe_wrap_next(&p, w - 1, line_a,
			    sizeof line_a))
				fprintf(f, " %s\n", line_a);
		}
	}
	fprintf(f, "%s\n", rule);
	fprintf(f, "  %-6s  %-*s  %s\n", "RESULT", (int)aw, "ATTACK",
	    "OBSERVED");
	memset(line_a, '-', aw);
	line_a[aw] = '\0';
	memset(line_o, '-', ow);
	line_o[ow] = '\0';
	fprintf(f, "  ------  %s  %s\n", line_a, line_o);
	for (i = 0; i < r->nrows; i++) {
		const struct probe_result *res = &r->rows[i];
		char exp[PROBE_OBSERVED_MAX + 32];
		const char *pa = res->row->attack, *po = res->observed, *pe;
		bool first = true, ha, ho;
		size_t acols;

		if (res->row->core) {
			ncore++;
			if (res->outcome != PROBE_PASS)
				held_fail++;
		}
		snprintf(exp, sizeof exp, "(expected: %s)", res->row->expected);
		pe = exp;
		for (;;) {
			ha = probe_wrap_next(&pa, aw, line_a, sizeof line_a);
			ho = probe_wrap_next(&po, ow, line_o, sizeof line_o);
			if (!ha && !ho)
				break;
			if (!ha)
				line_a[0] = '\0';
			if (!ho)
				line_o[0] = '\0';
			/* pad by columns, not bytes */
			acols = 0;
			for (const char *q = line_a; *q; q++)
				if (((unsigned char)*q & 0xc0) != 0x80)
					acols++;
			fprintf(f, "  %-6s  %s%*s  %s\n", first ?
			    probe_outcome_name(res->outcome, res->row->core) :
			    "", line_a, (int)(aw - acols), "", line_o);
			first = false;
		}
		while (probe_wrap_next(&pe, ow, line_o, sizeof line_o))
			fprintf(f, "  %-6s  %*s  %s\n", "", (int)aw, "", line_o);
	}
	fprintf(f, "%s\n", rule);
	if (r->chain_failed)
		fprintf(f, "EVIDENCE: %s\n", r->anchor_note);
	if (r->obs_failed)
		fprintf(f, "EVIDENCE: the rows' observations could not be "
		    "recorded (" PROBE_OBS_FILE "): not a verifiable result\n");
	if (r->cancelled)
		fprintf(f, "RESULT: cancelled after %zu of %zu rows: not a "
		    "result (%zu core assertion(s) failed before the stop).\n",
		    r->nrows, r->nplanned, held_fail);
	else if (r->engine_lost)
		fprintf(f, "RESULT: not a result: the engine stopped answering "
		    "after %zu of %zu rows (%.160s).\n", r->nrows, r->nplanned,
		    r->engine_error);
	else if (r->chain_failed)
		fprintf(f, "RESULT: not a result: a sensor evidence chain of "
		    "the lab did not verify (%zu core assertion(s) failed).\n",
		    held_fail);
	else if (r->obs_failed)
		fprintf(f, "RESULT: not a result: the rows' observations were "
		    "not recorded (%zu core assertion(s) failed).\n", held_fail);
	else if (held_fail == 0)
		fprintf(f, "RESULT: every core containment assertion held "
		    "(%zu/%zu).\n", ncore, ncore);
	else
		fprintf(f, "RESULT: %zu of %zu core containment assertions "
		    "FAILED (or could not be checked).\n", held_fail, ncore);
	fclose(f);
	/* trim any trailing spaces of lines (padding of empty cells) */
	{
		char *out = xmalloc(blen + 1), *o = out;
		const char *s = buf;

		while (*s != '\0') {
			const char *nl = strchr(s, '\n');
			size_t n = nl != NULL ? (size_t)(nl - s) : strlen(s);

			while (n > 0 && s[n - 1] == ' ')
				n--;
			memcpy(o, s, n);
			o += n;
			if (nl == NULL)
				break;
			*o++ = '\n';
			s = nl + 1;
		}
		*o = '\0';
		free(buf);
		return out;
	}
}

/* ------------------------------------------------------------------ */
/* output: JSON, JUnit                                                  */
/* ------------------------------------------------------------------ */

const char *
probe_result_word(const struct probe_result *res)
{
	switch (res->outcome) {
	case PROBE_PASS:
		return "pass";
	case PROBE_FAIL:
		return res->row->core ? "fail" : "warn";
	default:
		return "error";
	}
}

cJSON *
probe_report_json(const struct probe_report *r)
{
	cJSON *j = cJSON_CreateObject(), *a, *rows;
	size_t i, k;

	cJSON_AddStringToObject(j, "format", PROBE_FORMAT);
	cJSON_AddStringToObject(j, "run_id", r->run_id);
	cJSON_AddStringToObject(j, "policy", r->policy);
	cJSON_AddStringToObject(j, "variant", r->variant);
	cJSON_AddStringToObject(j, "started", r->started);
	a = cJSON_AddArrayToObject(j, "flaws_on");
	for (i = 0; i < r->nflaws; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(r->flaws[i]));
	if (r->note[0] != '\0')
		cJSON_AddStringToObject(j, "note", r->note);
	cJSON_AddStringToObject(j, "result", probe_result_name(r));
	cJSON_AddBoolToObject(j, "complete", !r->cancelled && !r->engine_lost);
	if (r->engine_lost) {
		cJSON *el = cJSON_AddObjectToObject(j, "engine_lost");

		cJSON_AddStringToObject(el, "phase", "battery");
		cJSON_AddStringToObject(el, "error", r->engine_error);
	}
	if (r->gc_ran)   /* the start-of-probe sweep (core/gc.c) */
		cJSON_AddItemToObject(j, "gc", gc_report_json(&r->gc));
	cJSON_AddNumberToObject(j, "rows_planned", (double)r->nplanned);
	cJSON_AddBoolToObject(j, "chains_anchored", r->anchored);
	a = cJSON_AddArrayToObject(j, "chains");
	for (i = 0; i < r->chains.n; i++) {
		const struct report_chain *c = &r->chains.chains[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", c->name);
		cJSON_AddStringToObject(o, "path", c->path);
		cJSON_AddNumberToObject(o, "entries", (double)c->entries);
		cJSON_AddStringToObject(o, "head", c->head);
		cJSON_AddItemToArray(a, o);
	}
	if (r->anchor_note[0] != '\0')
		cJSON_AddStringToObject(j, "chains_note", r->anchor_note);
	cJSON_AddBoolToObject(j, "chains_failed", r->chain_failed);
	if (r->only_flaw[0] != '\0')
		cJSON_AddStringToObject(j, "only_flaw", r->only_flaw);
	else
		cJSON_AddNullToObject(j, "only_flaw");
	a = cJSON_AddObjectToObject(j, "observations");
	cJSON_AddStringToObject(a, "path", PROBE_OBS_FILE);
	cJSON_AddNumberToObject(a, "entries", (double)r->obs_entries);
	cJSON_AddStringToObject(a, "head", r->obs_head);
	cJSON_AddBoolToObject(a, "recorded", !r->obs_failed);
	if (r->nc) {
		a = cJSON_AddObjectToObject(j, "negative_control");
		cJSON_AddStringToObject(a, "item", r->nc_item);
		cJSON_AddBoolToObject(a, "seen", probe_nc_seen(r, r->nc_item));
	}
	rows = cJSON_AddArrayToObject(j, "rows");
	for (i = 0; i < r->nrows; i++) {
		const struct probe_result *res = &r->rows[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", res->row->id);
		cJSON_AddStringToObject(o, "attack", res->row->attack);
		cJSON_AddStringToObject(o, "expected", res->row->expected);
		cJSON_AddStringToObject(o, "observed", res->observed);
		cJSON_AddStringToObject(o, "result", probe_result_word(res));
		cJSON_AddBoolToObject(o, "core", res->row->core);
		a = cJSON_AddArrayToObject(o, "flaws");
		for (k = 0; k < flaw_count; k++)
			if (flaw_probed_by(&flaw_table[k], res->row->id))
				cJSON_AddItemToArray(a, cJSON_CreateString(
				    flaw_table[k].id));
		cJSON_AddNumberToObject(o, "ms", (double)(long long)(res->ms *
		    1000) / 1000);
		cJSON_AddNumberToObject(o, "observation", (double)res->obs_seq);
		cJSON_AddItemToArray(rows, o);
	}
	return j;
}

char *
probe_xml_escape(const char *s)
{
	size_t n = strlen(s), i;
	char *out = xmalloc(n * 6 + 1), *o = out;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		switch (ch) {
		case '&': memcpy(o, "&amp;", 5); o += 5; continue;
		case '<': memcpy(o, "&lt;", 4); o += 4; continue;
		case '>': memcpy(o, "&gt;", 4); o += 4; continue;
		case '"': memcpy(o, "&quot;", 6); o += 6; continue;
		case '\'': memcpy(o, "&apos;", 6); o += 6; continue;
		case '\t': memcpy(o, "&#9;", 4); o += 4; continue;
		case '\n': memcpy(o, "&#10;", 5); o += 5; continue;
		case '\r': memcpy(o, "&#13;", 5); o += 5; continue;
		default:
			break;
		}
		if (ch < 0x20 || ch == 0x7f)
			continue;             /* not allowed in XML 1.0 */
		/* U+FFFE, U+FFFF are not XML characters either */
		if (ch == 0xef && i + 2 < n &&
		    (unsigned char)s[i + 1] == 0xbf &&
		    ((unsigned char)s[i + 2] == 0xbe ||
		    (unsigned char)s[i + 2] == 0xbf)) {
			i += 2;
			continue;
		}
		*o++ = (char)ch;
	}
	*o = '\0';
	return out;
}

/* One <testcase>; failure_text NULL when it passed.  Text is sanitized
 * (valid UTF-8) then escaped. */
void
probe_junit_case(FILE *f, const char *cls, const char *name, double secs,
    const char *kind, const char *message, const char *body)
{
	char clean[2048];
	char *en, *em, *eb;

	util_sanitize(clean, sizeof clean, name, strlen(name), false);
	en = probe_xml_escape(clean);
	fprintf(f, "    <testcase classname=\"%s\" name=\"%s\" "
	    "time=\"%.3f\"", cls, en, secs);
	free(en);
	if (kind == NULL) {
		fprintf(f, "/>\n");
		return;
	}
	util_sanitize(clean, sizeof clean, message, strlen(message), false);
	em = probe_xml_escape(clean);
	util_sanitize(clean, sizeof clean, body, strlen(body), true);
	eb = probe_xml_escape(clean);
	fprintf(f, ">\n      <%s message=\"%s\" type=\"containment\">%s"
	    "</%s>\n    </testcase>\n", kind, em, eb, kind);
	free(em);
	free(eb);
}

char *
probe_junit(const struct probe_report *r)
{
	char *buf = NULL, *rid, *pol;
	size_t blen = 0, i, nfail = 0, nerr = 0, ntests;
	double total = 0;
	FILE *f = open_memstream(&buf, &blen);

	if (f == NULL)
		util_fatal("open_memstream failed");
	for (i = 0; i < r->nrows; i++) {
		total += r->rows[i].ms / 1000;
		if (r->rows[i].outcome == PROBE_FAIL && r->rows[i].row->core)
			nfail++;
		else if (r->rows[i].outcome == PROBE_ERROR)
			nerr++;
	}
	/* a cancelled battery is one more error: a CI gate reading only the
	 * JUnit must never see a partial battery as passing */
	ntests = r->nrows + (r->cancelled ? 1 : 0);
	if (r->cancelled)
		nerr++;
	rid = probe_xml_escape(r->run_id);
	pol = probe_xml_escape(r->policy);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"ares probe\" tests=\"%zu\" failures=\"%zu\" "
	    "errors=\"%zu\" time=\"%.3f\">\n  <testsuite name=\"ares-probe %s\" "
	    "tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n"
	    "    <properties>\n      <property name=\"run_id\" value=\"%s\"/>\n"
	    "      <property name=\"policy\" value=\"%s\"/>\n"
	    "    </properties>\n", ntests, nfail, nerr, total, rid, ntests,
	    nfail, nerr, total, rid, pol);
	free(rid);
	free(pol);
	for (i = 0; i < r->nrows; i++) {
		const struct probe_result *res = &r->rows[i];
		char name[512], body[PROBE_OBSERVED_MAX + 1024];
		const char *kind = NULL;

		snprintf(name, sizeof name, "%s: %s", res->row->id,
		    res->row->attack);
		if (res->outcome == PROBE_FAIL && res->row->core)
			kind = "failure";
		else if (res->outcome == PROBE_ERROR)
			kind = "error";
		snprintf(body, sizeof body, "attack: %s\nexpected: %s\n"
		    "observed: %s\nresult: %s", res->row->attack,
		    res->row->expected, res->observed, probe_result_word(res));
		probe_junit_case(f, "ares.probe", name, res->ms / 1000, kind,
		    res->observed, body);
	}
	if (r->cancelled) {
		char msg[128];

		snprintf(msg, sizeof msg, "cancelled after %zu of %zu rows",
		    r->nrows, r->nplanned);
		probe_junit_case(f, "ares.probe", "battery: complete", 0,
		    "error", msg, "the battery was stopped (SIGINT, SIGTERM or "
		    "q in the console) before every row ran: not a result");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	fclose(f);
	return buf;
}
