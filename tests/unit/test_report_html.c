/*
 * test_report_html.c - report_html(): nothing of a run becomes live
 * markup.  A copy of replays/contained whose evidence carries markup that
 * would close the data block and open a script, quotes, an attribute
 * breakout, U+2028/U+2029, control bytes, an escape sequence and invalid
 * UTF-8 (its chain then no longer verifies: the page must say so, fail
 * closed, and escape all the same); the untouched copy with the demo key
 * (verified, Poyo's frames from the sheet, the full beat list); trial and
 * probe documents with hostile and huge texts (cut at the bound); and the
 * two escapers on their own.  Every page is checked structurally: outside
 * the one trusted script, every '<' opens a tag this file knows, the data
 * block holds no '<', '>', '&', U+2028 or U+2029 and parses back to the
 * hostile text, and no control byte but '\n' is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "sprites.h"

#define SCRIPT_CLOSE "</script><script>alert(1)</script>"
#define ATTR_BREAK "\"><img src=x onerror=alert(2)>'"
#define LS "\xe2\x80\xa8"
#define PS "\xe2\x80\xa9"
#define HOSTILE SCRIPT_CLOSE ATTR_BREAK LS "ls" PS "ps" \
	"\x01\x02\x1b[31mred\x7f<!--c-->]]>&amp;\xff end"

struct fx {
	char dir[256];
	char run[300];
	struct sprite_sheet *sheet;
};

static void
sh(const char *const *argv)
{
	char out[1024];
	struct errbuf e = { 0 };

	assert_int_equal(util_run(argv, NULL, 30000, out, sizeof out, &e), 0);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	struct errbuf e = { 0 };

	assert_non_null(f);
	snprintf(f->dir, sizeof f->dir, "/tmp/test_report_html.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->run, sizeof f->run, "%s/run", f->dir);
	{
		const char *argv[] = { "cp", "-R", ARES_SRCDIR "/replays/contained",
			f->run, NULL };

		sh(argv);
	}
	f->sheet = sprite_sheet_load(ARES_SRCDIR "/sprites/poyo.txt", &e);
	assert_non_null(f->sheet);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };

	util_rm_rf(f->dir, &e);
	sprite_sheet_free(f->sheet);
	free(f);
	return 0;
}

/* Rewrite evidence.jsonl: the first tool_result's content and the
 * drill.start's policy_name get HOSTILE in front (the chain breaks). */
static void
poison(const struct fx *f)
{
	char path[400], *txt;
	size_t len, off = 0, ll;
	const char *line;
	struct util_buf out;
	struct errbuf e = { 0 };
	bool done_tool = false;

	snprintf(path, sizeof path, "%s/evidence.jsonl", f->run);
	txt = util_read_file(path, 1 << 22, &len, &e);
	assert_non_null(txt);
	util_buf_init(&out, len * 2);
	while (util_next_line(txt, len, &off, &line, &ll)) {
		cJSON *j = cJSON_ParseWithLength(line, ll);
		cJSON *ev = cJSON_GetObjectItem(j, "event");
		const char *type = util_json_str(j, "type", "");
		char *s;

		assert_non_null(j);
		if (strcmp(type, "drill.start") == 0) {
			cJSON_ReplaceItemInObject(j, "policy_name",
			    cJSON_CreateString(HOSTILE));
		} else if (!done_tool && strcmp(util_json_str(j, "kind", ""),
		    "tool_result") == 0) {
			cJSON_ReplaceItemInObject(ev, "content",
			    cJSON_CreateString(HOSTILE));
			done_tool = true;
		}
		s = cJSON_PrintUnformatted(j);
		util_buf_printf(&out, "%s\n", s);
		free(s);
		cJSON_Delete(j);
	}
	assert_true(done_tool);
	assert_int_equal(util_write_file(path, out.s, out.len, 0644, &e), 0);
	free(out.s);
	free(txt);
}

/* The tags a page may hold. */
static bool
known_tag(const char *p)
{
	static const char *const tags[] = { "!DOCTYPE", "html", "head", "meta",
		"title", "style", "body", "main", "header", "footer", "section",
		"div", "h1", "h2", "h3", "p", "span", "b", "code", "pre", "a",
		"dl", "dt", "dd", "table", "thead", "tbody", "tr", "th", "td",
		"ol", "li", "button", "svg", "g", "rect", "line", "text",
		"script", NULL };
	size_t i, n;

	if (*p == '/')
		p++;
	for (i = 0; tags[i] != NULL; i++) {
		n = strlen(tags[i]);
		if (strncmp(p, tags[i], n) == 0 && (p[n] == ' ' ||
		    p[n] == '>' || p[n] == '/' || p[n] == '\n'))
			return true;
	}
	return false;
}

/* One tag (from its '<' to its '>'): no event handler, no src, no
 * style with a URL, hrefs relative without a scheme. */
static void
check_tag(const char *p)
{
	const char *end = strchr(p, '>'), *q;
	char *tag;

	assert_non_null(end);
	tag = xstrndup(p, (size_t)(end - p));
	for (q = tag; (q = strstr(q, " on")) != NULL; q++) {
		size_t n = strspn(q + 3, "abcdefghijklmnopqrstuvwxyz");

		if (n > 0 && q[3 + n] == '=')
			fail_msg("event handler in %s", tag);
	}
	if (strstr(tag, " src=") != NULL || strstr(tag, "url(") != NULL ||
	    strstr(tag, "srcset") != NULL)
		fail_msg("a fetch in %s", tag);
	if ((q = strstr(tag, " href=\"")) != NULL) {
		q += 7;
		if (strcspn(q, ":\"") < strcspn(q, "\"") || q[0] == '/')
			fail_msg("href with a scheme or absolute: %s", tag);
	}
	free(tag);
}

/*
 * The structural checks of one page; returns the data block parsed
 * (caller deletes).
 */
static cJSON *
check_page(const char *html, size_t len)
{
	static const char open_data[] =
	    "<script type=\"application/json\" id=\"ares-data\">";
	const char *p, *data, *end, *js;
	size_t nscript = 0, i;
	char *block;
	cJSON *j;

	assert_int_equal(strlen(html), len);
	/* no control byte but '\n' */
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)html[i];

		if ((c < 0x20 && c != '\n') || c == 0x7f)
			fail_msg("control byte 0x%02x at %zu", c, i);
	}
	/* the CSP, before any script or style */
	p = strstr(html, "http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'; script-src "
	    "'unsafe-inline'; img-src data:\"");
	assert_non_null(p);
	assert_true(p < strstr(html, "<style>"));
	/* no URL the browser could fetch in the style */
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "@import"));
	/* exactly the data block and at most one trusted script */
	for (p = html; (p = strstr(p, "<script")) != NULL; p++)
		nscript++;
	assert_true(nscript == 1 || nscript == 2);
	data = strstr(html, open_data);
	assert_non_null(data);
	data += strlen(open_data);
	end = strstr(data, "</script>");
	assert_non_null(end);
	js = strstr(end, "<script>");
	assert_int_equal(nscript, js != NULL ? 2 : 1);
	block = xstrndup(data, (size_t)(end - data));
	assert_null(strpbrk(block, "<>&"));
	assert_null(strstr(block, LS));
	assert_null(strstr(block, PS));
	j = cJSON_Parse(block);
	assert_non_null(j);
	free(block);
	/* outside the trusted script, every '<' opens a known tag */
	for (p = html; (p = strchr(p, '<')) != NULL; p++) {
		if (js != NULL && p > js && p < strstr(js, "</script>"))
			continue;
		if (!known_tag(p + 1))
			fail_msg("unknown markup at %zu: %.40s",
			    (size_t)(p - html), p);
		check_tag(p);
	}
	return j;
}

/* Whether some "x" of the data block's beats holds s. */
static bool
beats_hold(const cJSON *j, const char *s)
{
	const cJSON *b;

	cJSON_ArrayForEach(b, cJSON_GetObjectItem(j, "beats"))
		if (strstr(util_json_str(b, "x", ""), s) != NULL)
			return true;
	return false;
}

static char *
page(const struct fx *f, const char *dir, const char *pub, size_t *len)
{
	struct report_html_options o = { 0 };
	struct errbuf e = { 0 };
	char *h;

	o.pub_path = pub;
	o.sheet = f->sheet;
	o.link_base = f->dir;
	h = report_html(dir, &o, len, &e);
	if (h == NULL)
		fail_msg("report_html %s: %s", dir, e.msg);
	return h;
}

/* The untouched copy: verified with the demo key, every beat listed, the
 * reducer's last pose shown from the sheet. */
static void
test_clean(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	struct replay *rp = replay_load(f->run, ARES_SRCDIR "/replays/demo.pub",
	    &e);
	char want[128];
	size_t len, n = 0;
	const char *p;
	char *h;
	cJSON *j;

	assert_non_null(rp);
	h = page(f, f->run, ARES_SRCDIR "/replays/demo.pub", &len);
	j = check_page(h, len);
	assert_non_null(strstr(h, "<header id=\"top\" class=\"v-ok\">"));
	assert_non_null(strstr(h, ">CONTAINED</span>"));
	assert_non_null(strstr(h, "verified: every check passed"));
	assert_null(strstr(h, "NOT VERIFIED"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "beats")),
	    rp->nbeats);
	for (p = h; (p = strstr(p, "<li id=\"beat-")) != NULL; p++)
		n++;
	assert_int_equal(n, rp->nbeats);
	/* the last pose visible, the others hidden, drawn from the sheet */
	snprintf(want, sizeof want, "<g data-pose=\"%s\"><rect",
	    rp->states[rp->nbeats - 1].pose);
	assert_non_null(strstr(h, want));
	n = 0;
	for (p = h; (p = strstr(p, "<g data-pose=")) != NULL; p++)
		n++;
	assert_int_equal(n, 8);
	/* the data the player steps through: the reducer's state per beat */
	{
		const cJSON *b;
		size_t i = 0;

		cJSON_ArrayForEach(b, cJSON_GetObjectItem(j, "beats")) {
			const struct replay_state *s = &rp->states[i];
			const cJSON *c = cJSON_GetObjectItem(b, "c");

			assert_string_equal(util_json_str(b, "p", ""), s->pose);
			assert_string_equal(util_json_str(b, "k", ""),
			    drill_beat_kind_name(rp->beats[i].kind));
			assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(b,
			    "m")), replay_is_marker(rp, i));
			assert_int_equal(cJSON_GetArrayItem(c, 0)->valueint,
			    s->agent_steps);
			assert_int_equal(cJSON_GetArrayItem(c, 4)->valueint,
			    s->orphans);
			assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(b,
			    "cut")), s->cut_off);
			i++;
		}
		assert_int_equal(i, rp->nbeats);
	}
	assert_non_null(strstr(h, "minisign -Vm report.json -p ares.pub"));
	assert_non_null(strstr(h, "Signature and comment signature verified\n"
	    "Trusted comment: ares-report-v1 run="));
	cJSON_Delete(j);
	free(h);
	replay_free(rp);
}

/* The poisoned copy: nothing live, the hostile text still there as text,
 * and (the chain broken) never shown as a verified contained. */
static void
test_hostile_run(void **state)
{
	struct fx *f = *state;
	size_t len;
	char *h;
	cJSON *j;

	poison(f);
	h = page(f, f->run, NULL, &len);
	j = check_page(h, len);
	assert_true(beats_hold(j, SCRIPT_CLOSE));
	assert_true(beats_hold(j, "onerror=alert(2)"));
	/* U+2028/9 shown as '?' (util_sanitize), never as line breaks */
	assert_true(beats_hold(j, "?ls?ps"));
	assert_false(beats_hold(j, "\x1b"));
	assert_null(strstr(h, "<img"));
	assert_null(strstr(h, "<!--"));
	assert_non_null(strstr(h, "&lt;/script&gt;&lt;script&gt;alert(1)"
	    "&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"
	    "&#39;"));
	assert_non_null(strstr(h, "&amp;amp;"));
	/* the policy name (the title of the page, the facts) is escaped */
	assert_non_null(strstr(h, "<dt>policy</dt><dd>&lt;/script&gt;"));
	assert_non_null(strstr(h, "NOT VERIFIED"));
	assert_null(strstr(h, "class=\"v-ok\""));
	assert_non_null(strstr(h, "<header id=\"top\" class=\"v-warn\">"));
	cJSON_Delete(j);
	free(h);
}

/* Hostile and huge texts in a trial and a probe document (unsigned: the
 * pages say NOT VERIFIED); a long text is cut at the bound. */
static void
test_hostile_docs(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	char dir[400], path[500], *huge, *txt, *h, *cut;
	size_t len, i;
	cJSON *j, *a, *o, *d;

	huge = malloc(100001);
	assert_non_null(huge);
	memset(huge, 'A', 100000);
	huge[100000] = '\0';

	snprintf(dir, sizeof dir, "%s/trial-x", f->dir);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "ares-trial-v1");
	cJSON_AddStringToObject(j, "trial_id", HOSTILE);
	cJSON_AddStringToObject(j, "policy", HOSTILE);
	cJSON_AddNumberToObject(j, "n", 3);
	cJSON_AddNumberToObject(j, "level", 0.95);
	cJSON_AddBoolToObject(j, "complete", true);
	a = cJSON_AddArrayToObject(j, "runs");
	for (i = 0; i < 3; i++) {
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", (double)i);
		cJSON_AddStringToObject(o, "seed", "1");
		/* an id that is no path component gets no link */
		cJSON_AddStringToObject(o, "run_id", i == 0 ?
		    "../../etc" : i == 1 ? HOSTILE : "20260101-000000-00000001");
		cJSON_AddStringToObject(o, "verdict", i == 1 ? "breached" :
		    "contained");
		cJSON_AddStringToObject(o, "reason", i == 1 ? huge : HOSTILE);
		cJSON_AddBoolToObject(o, "bait_fired", true);
		cJSON_AddNumberToObject(o, "leaks", 0);
		cJSON_AddNumberToObject(o, "time_to_kill_ms", 100.0 + (double)i);
		cJSON_AddItemToArray(a, o);
	}
	o = cJSON_AddObjectToObject(j, "summary");
	cJSON_AddNumberToObject(o, "finished", 3);
	cJSON_AddNumberToObject(o, "contained", 2);
	cJSON_AddNumberToObject(o, "breached", 1);
	d = cJSON_AddObjectToObject(o, "rates");
	{
		cJSON *r = cJSON_AddObjectToObject(d, "breached");

		cJSON_AddNumberToObject(r, "k", 1);
		cJSON_AddNumberToObject(r, "n", 3);
		cJSON_AddNumberToObject(r, "lower", 0.0084);
		cJSON_AddNumberToObject(r, "upper", 0.9057);
		/* out of range: no band is drawn from it */
		r = cJSON_AddObjectToObject(d, "contained");
		cJSON_AddNumberToObject(r, "k", 5);
		cJSON_AddNumberToObject(r, "n", 3);
	}
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/trial.json", dir);
	assert_int_equal(util_write_file(path, txt, strlen(txt), 0644, &e), 0);
	free(txt);
	h = page(f, dir, NULL, &len);
	cJSON_Delete(check_page(h, len));
	assert_true(len < 64 * 1024);
	assert_non_null(strstr(h, ">BREACHED</span>"));
	assert_non_null(strstr(h, "NOT VERIFIED"));
	assert_null(strstr(h, "<img"));
	/* cut at REPORT_HTML_TEXT_MAX, marked */
	cut = malloc(REPORT_HTML_TEXT_MAX + 8);
	memset(cut, 'A', REPORT_HTML_TEXT_MAX);
	memcpy(cut + REPORT_HTML_TEXT_MAX, "\xe2\x80\xa6", 4);
	assert_non_null(strstr(h, cut));
	cut[REPORT_HTML_TEXT_MAX] = 'A';
	cut[REPORT_HTML_TEXT_MAX + 1] = '\0';
	assert_null(strstr(h, cut));
	free(cut);
	/* links: only the plain id, relative to the page's folder */
	assert_non_null(strstr(h, "<a href=\"trial-x/runs/"
	    "20260101-000000-00000001/\">"));
	assert_null(strstr(h, "href=\"trial-x/runs/../"));
	assert_int_equal(strstr(strstr(h, "<a href=") + 1, "<a href=") == NULL,
	    true);
	/* the histogram and the bars */
	assert_non_null(strstr(h, "id=\"ttk-hist\""));
	assert_non_null(strstr(h, "class=\"band\""));
	free(h);

	snprintf(dir, sizeof dir, "%s/probe-x", f->dir);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "ares-probe-v1");
	cJSON_AddStringToObject(j, "run_id", HOSTILE);
	cJSON_AddStringToObject(j, "result", "held");
	a = cJSON_AddArrayToObject(j, "rows");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", "nic-count");
	cJSON_AddStringToObject(o, "attack", HOSTILE);
	cJSON_AddStringToObject(o, "expected", HOSTILE);
	cJSON_AddStringToObject(o, "observed", huge);
	cJSON_AddStringToObject(o, "result", "fail");
	cJSON_AddBoolToObject(o, "core", true);
	cJSON_AddItemToArray(a, o);
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/probe.json", dir);
	assert_int_equal(util_write_file(path, txt, strlen(txt), 0644, &e), 0);
	free(txt);
	h = page(f, dir, NULL, &len);
	cJSON_Delete(check_page(h, len));
	/* "held" but unsigned: never in the ok colour */
	assert_non_null(strstr(h, "<header id=\"top\" class=\"v-warn\">"));
	assert_non_null(strstr(h, "NOT VERIFIED"));
	assert_true(len < 64 * 1024);
	free(h);

	/* a gate dir: the diff, the battery, the labs, the trial */
	snprintf(dir, sizeof dir, "%s/gate-x", f->dir);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "ares-gate-v1");
	cJSON_AddStringToObject(j, "gate_id", HOSTILE);
	o = cJSON_AddObjectToObject(j, "verdict");
	cJSON_AddStringToObject(o, "result", "no-new-breach-path");
	cJSON_AddStringToObject(o, "sentence", HOSTILE);
	a = cJSON_AddArrayToObject(j, "diff");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "change", "gained");
	cJSON_AddStringToObject(o, "what", HOSTILE);
	cJSON_AddStringToObject(o, "from", huge);
	cJSON_AddStringToObject(o, "to", HOSTILE);
	cJSON_AddStringToObject(o, "meaning", HOSTILE);
	cJSON_AddItemToArray(a, o);
	o = cJSON_AddObjectToObject(j, "probe");
	cJSON_AddStringToObject(o, "run_id", "20260101-000000-00000002");
	cJSON_AddStringToObject(o, "result", HOSTILE);
	a = cJSON_AddArrayToObject(o, "failing");
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "row", HOSTILE);
	cJSON_AddStringToObject(d, "observed", HOSTILE);
	cJSON_AddItemToArray(a, d);
	o = cJSON_AddObjectToObject(j, "negative_control");
	a = cJSON_AddArrayToObject(o, "labs");
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "flaw", HOSTILE);
	cJSON_AddStringToObject(d, "run_id", HOSTILE);
	cJSON_AddItemToArray(a, d);
	o = cJSON_AddObjectToObject(j, "trial");
	cJSON_AddStringToObject(o, "trial_id", "trial-x");
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/gate.json", dir);
	assert_int_equal(util_write_file(path, txt, strlen(txt), 0644, &e), 0);
	free(txt);
	h = page(f, dir, NULL, &len);
	cJSON_Delete(check_page(h, len));
	assert_non_null(strstr(h, "<header id=\"top\" class=\"v-warn\">"));
	assert_non_null(strstr(h, "<a href=\"gate-x/20260101-000000-00000002/\">"));
	assert_non_null(strstr(h, "<a href=\"gate-x/trial-x/\">"));
	assert_true(len < 64 * 1024);
	free(h);

	/* a fix dir: its runs link next to it */
	snprintf(dir, sizeof dir, "%s/fix-x", f->dir);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "ares-fix-v1");
	cJSON_AddStringToObject(j, "fix_id", HOSTILE);
	cJSON_AddStringToObject(j, "outcome", "verified");
	cJSON_AddStringToObject(j, "reason", huge);
	a = cJSON_AddArrayToObject(j, "runs");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "role", HOSTILE);
	cJSON_AddStringToObject(o, "run_id", "20260101-000000-00000003");
	cJSON_AddStringToObject(o, "verdict", "breached");
	cJSON_AddItemToArray(a, o);
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/fix.json", dir);
	assert_int_equal(util_write_file(path, txt, strlen(txt), 0644, &e), 0);
	free(txt);
	h = page(f, dir, NULL, &len);
	cJSON_Delete(check_page(h, len));
	assert_non_null(strstr(h, "<header id=\"top\" class=\"v-warn\">"));
	assert_non_null(strstr(h, "<a href=\"20260101-000000-00000003/\">"));
	assert_true(len < 64 * 1024);
	free(h);
	free(huge);
}

/* The escapers on their own. */
static void
test_escapers(void **state)
{
	struct util_buf b;
	cJSON *j;

	(void)state;
	util_buf_init(&b, 16);
	report_html_escape(&b, HOSTILE, 4096);
	assert_null(strpbrk(b.s, "<>\"'\x01\x02\x1b\x7f\xff"));
	assert_non_null(strstr(b.s, "&lt;/script&gt;"));
	assert_null(strstr(b.s, LS));
	assert_non_null(strstr(b.s, "?ls?ps"));
	free(b.s);
	util_buf_init(&b, 16);
	report_html_escape(&b, "abcdef", 3);
	assert_string_equal(b.s, "abc\xe2\x80\xa6");
	free(b.s);
	util_buf_init(&b, 16);
	report_html_escape(&b, NULL, 3);
	assert_string_equal(b.s, "");
	free(b.s);

	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "x", HOSTILE);
	util_buf_init(&b, 16);
	report_html_json(&b, j);
	assert_null(strpbrk(b.s, "<>&"));
	assert_null(strstr(b.s, LS));
	assert_null(strstr(b.s, PS));
	assert_non_null(strstr(b.s, "\\u003c/script\\u003e"));
	assert_non_null(strstr(b.s, "\\u2028ls\\u2029ps"));
	cJSON_Delete(j);
	j = cJSON_Parse(b.s);
	assert_non_null(j);
	assert_string_equal(util_json_str(j, "x", ""), HOSTILE);
	cJSON_Delete(j);
	free(b.s);
}

/* A directory name with shell syntax: the page's commands quote it, so
 * pasting them runs nothing of it. */
static void
test_commands_quoted(void **state)
{
	struct fx *f = *state;
	char dir[600];
	size_t len;
	char *h;

	snprintf(dir, sizeof dir, "%s/x'$(touch${IFS}pwned)", f->dir);
	{
		const char *argv[] = { "cp", "-R", f->run, dir, NULL };

		sh(argv);
	}
	h = page(f, dir, NULL, &len);
	/* cd '<dir with each ' as '\''>' */
	assert_non_null(strstr(h, "<pre>cd &#39;"));
	assert_non_null(strstr(h, "/x&#39;\\&#39;&#39;$(touch${IFS}pwned)&#39;\n"));
	assert_non_null(strstr(h, "<pre>ares verify &#39;"));
	assert_null(strstr(h, "<pre>cd /"));
	free(h);
}

/* A trial over engines (ares-trial-v2): each run's engine and its failed
 * attempts are shown, hostile names escaped, an attempt's run dir linked
 * only when its id is a plain id. */
static void
test_trial_engines(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { 0 };
	char dir[400], path[500], *txt, *h;
	size_t len, i;
	cJSON *j, *a, *o, *x, *at;

	snprintf(dir, sizeof dir, "%s/trial-e", f->dir);
	assert_int_equal(util_mkdir_p(dir, 0755, &e), 0);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "ares-trial-v2");
	cJSON_AddStringToObject(j, "trial_id", "trial-e");
	cJSON_AddNumberToObject(j, "n", 2);
	cJSON_AddNumberToObject(j, "level", 0.95);
	cJSON_AddBoolToObject(j, "complete", true);
	a = cJSON_AddArrayToObject(j, "engines");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "engine", "unix:///var/run/docker.sock");
	cJSON_AddNumberToObject(o, "capacity", 2);
	cJSON_AddItemToArray(a, o);
	a = cJSON_AddArrayToObject(j, "runs");
	for (i = 0; i < 2; i++) {
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", (double)i);
		cJSON_AddStringToObject(o, "seed", "1");
		cJSON_AddStringToObject(o, "run_id", "20260101-000000-0000000a");
		cJSON_AddStringToObject(o, "verdict", "contained");
		cJSON_AddStringToObject(o, "reason", "ok");
		cJSON_AddStringToObject(o, "engine", i == 0 ?
		    "unix:///var/run/docker.sock" : HOSTILE);
		at = cJSON_AddArrayToObject(o, "attempts");
		if (i == 1) {
			x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "engine", "unix:///tmp/b.sock");
			cJSON_AddStringToObject(x, "run_id",
			    "20260101-000000-0000000b");
			cJSON_AddStringToObject(x, "reason", HOSTILE);
			cJSON_AddItemToArray(at, x);
			x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "engine", HOSTILE);
			cJSON_AddStringToObject(x, "run_id", "../../etc");
			cJSON_AddStringToObject(x, "reason", "gone");
			cJSON_AddItemToArray(at, x);
		}
		cJSON_AddItemToArray(a, o);
	}
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	snprintf(path, sizeof path, "%s/trial.json", dir);
	assert_int_equal(util_write_file(path, txt, strlen(txt), 0644, &e), 0);
	free(txt);
	h = page(f, dir, NULL, &len);
	cJSON_Delete(check_page(h, len));
	assert_non_null(strstr(h, "<th>engine</th><th>failed attempts</th>"));
	assert_non_null(strstr(h, "unix:///var/run/docker.sock"));
	assert_non_null(strstr(h, "unix:///tmp/b.sock: <a href=\"trial-e/runs/"
	    "20260101-000000-0000000b/\">"));
	assert_non_null(strstr(h, "(no run dir) - gone"));
	assert_null(strstr(h, "href=\"trial-e/runs/../"));
	assert_null(strstr(h, "<img"));
	free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapers),
		cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands_quoted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hostile_run, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hostile_docs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_trial_engines, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
