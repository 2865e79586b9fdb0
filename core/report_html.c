/*
 * report_html.c - `ares report DIR --html FILE` (docs/cli-report.md): one
 * self-contained HTML page of a drill run dir, a trial, probe, gate or fix
 * dir, for people who would rather look than read.
 *
 * The dir is read only through the loaders the console and `ares verify`
 * use (replay_load for a drill's beats, states and badge; the *_verify_dir
 * functions for the verification result); the documents of trial, probe,
 * gate and fix dirs are read bounded and parsed with the getters of
 * untrusted JSON.  Nothing read is trusted: every string goes through
 * report_html_escape() (sanitized, bounded, HTML-escaped) and the data
 * block through report_html_json() (no "<", ">", "&", U+2028, U+2029), so
 * no text of the run can become markup or script.  The page has inline
 * CSS and JS only and a Content-Security-Policy that forbids every fetch;
 * without JS it still shows the verdict, the levers and every beat.
 * Poyo is drawn from the loaded sprite sheet (struct sprite_sheet, read by
 * the caller) as SVG rectangles: no copy of the art lives here.
 */
#include "core.h"
#include "internal.h"
#include "sprites.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- output helpers ---------------------------------------------- */

/* Append n bytes of s (trusted: markup of this file) to b. */
static void
rh_putn(struct util_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
rh_put(struct util_buf *b, const char *s)
{
	rh_putn(b, s, strlen(s));
}

void
report_html_escape(struct util_buf *b, const char *s, size_t max)
{
	size_t n, i, start;
	bool cut = false;
	char *clean;

	if (s == NULL)
		return;
	n = strlen(s);
	if (n > max) {
		n = max;
		cut = true;
	}
	clean = xmalloc(n + 1);
	util_sanitize(clean, n + 1, s, n, false);
	for (i = start = 0; clean[i] != '\0'; i++) {
		const char *rep;

		switch (clean[i]) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: continue;
		}
		rh_putn(b, clean + start, i - start);
		rh_put(b, rep);
		start = i + 1;
	}
	rh_putn(b, clean + start, i - start);
	if (cut)
		rh_put(b, "\xe2\x80\xa6");   /* U+2026: the text was cut */
	free(clean);
}

/* Untrusted text at the default bound. */
static void
rh_esc(struct util_buf *b, const char *s)
{
	report_html_escape(b, s, REPORT_HTML_TEXT_MAX);
}

/* s as one single-quoted shell word (each ' as '\''), HTML-escaped: a
 * command copied from the page cannot run what a directory's name
 * holds. */
static void
rh_shq(struct util_buf *b, const char *s)
{
	struct util_buf q;

	util_buf_init(&q, strlen(s) + 3);
	rh_put(&q, "'");
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			rh_put(&q, "'\\''");
		else
			rh_putn(&q, s, 1);
	}
	rh_put(&q, "'");
	report_html_escape(b, q.s, 2 * REPORT_HTML_TEXT_MAX);
	free(q.s);
}

void
report_html_json(struct util_buf *b, const cJSON *j)
{
	char *txt = cJSON_PrintUnformatted(j);
	size_t i, start;

	if (txt == NULL)
		util_fatal("cJSON_PrintUnformatted failed");
	for (i = start = 0; txt[i] != '\0'; i++) {
		const char *rep = NULL;
		size_t skip = 1;
		unsigned char c = (unsigned char)txt[i];

		if (c == '<')
			rep = "\\u003c";
		else if (c == '>')
			rep = "\\u003e";
		else if (c == '&')
			rep = "\\u0026";
		else if (c == 0xe2 && (unsigned char)txt[i + 1] == 0x80 &&
		    ((unsigned char)txt[i + 2] == 0xa8 ||
		    (unsigned char)txt[i + 2] == 0xa9)) {
			rep = (unsigned char)txt[i + 2] == 0xa8 ? "\\u2028" :
			    "\\u2029";
			skip = 3;
		}
		if (rep == NULL)
			continue;
		rh_putn(b, txt + start, i - start);
		rh_put(b, rep);
		i += skip - 1;
		start = i + 1;
	}
	rh_putn(b, txt + start, i - start);
	cJSON_free(txt);
}

/* A string member of untrusted JSON, sanitized and bounded, into a cJSON
 * string of o (what the data block carries). */
static void
rh_json_text(cJSON *o, const char *key, const char *s)
{
	char clean[REPORT_HTML_TEXT_MAX + 1];
	size_t n = s != NULL ? strlen(s) : 0;

	if (n > REPORT_HTML_TEXT_MAX)
		n = REPORT_HTML_TEXT_MAX;
	util_sanitize(clean, sizeof clean, s != NULL ? s : "", n, false);
	cJSON_AddStringToObject(o, key, clean);
}

/* ---- what one page knows ----------------------------------------- */

struct rh {
	struct util_buf b;
	const char *dir;                 /* as given */
	char dir_abs[PATH_MAX];          /* realpath, "" when unknown */
	char base_abs[PATH_MAX];         /* where the page lives */
	const struct report_html_options *o;
	struct report_verify_result res;
	bool have_res;
	char verify_error[1024];         /* the verifier could not run */
	cJSON *data;                     /* the data block */
};

/* An id from an untrusted document usable as one path component:
 * [A-Za-z0-9._-], 1..128 characters, not starting with '.'. */
static bool
rh_id_ok(const char *s)
{
	size_t n;

	if (s == NULL || s[0] == '\0' || s[0] == '.')
		return false;
	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-");
	return n == strlen(s) && n <= 128;
}

/*
 * The href, relative to the page's folder, of target (an absolute path),
 * percent-encoded (only [A-Za-z0-9._~/-] kept).  Caller frees.
 */
static char *
rh_relhref(const char *base, const char *target, bool is_dir)
{
	struct util_buf r;
	size_t i = 0, last = 0;
	const char *p;
	char *out;

	util_buf_init(&r, 128);
	if (base[0] == '/' && target[0] == '/') {
		/* the longest common prefix of whole components */
		while (base[i] != '\0' && base[i] == target[i]) {
			if (base[i] == '/')
				last = i;
			i++;
		}
		if ((base[i] == '\0' && (target[i] == '/' ||
		    target[i] == '\0')) || (target[i] == '\0' &&
		    base[i] == '/'))
			last = i;
		for (p = base + last; *p != '\0'; p++)
			if (*p == '/' && p[1] != '\0')
				util_buf_printf(&r, "../");
		p = target + last;
		if (*p == '/')
			p++;
		util_buf_printf(&r, "%s", p);
	} else {
		util_buf_printf(&r, "%s", target);
	}
	if (r.len == 0)
		util_buf_printf(&r, ".");
	if (is_dir && r.s[r.len - 1] != '/')
		util_buf_printf(&r, "/");
	/* percent-encode */
	{
		struct util_buf enc;

		util_buf_init(&enc, r.len * 3 + 1);
		for (i = 0; i < r.len; i++) {
			unsigned char c = (unsigned char)r.s[i];

			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || strchr("._~/-", c) != NULL)
				util_buf_printf(&enc, "%c", c);
			else
				util_buf_printf(&enc, "%%%02X", c);
		}
		out = enc.s;
	}
	free(r.s);
	return out;
}

/* A link to DIR/sub (sub: components checked by the caller), label text
 * untrusted.  Without a known dir, just the label. */
static void
rh_link_to(struct rh *h, const char *parent, const char *sub, bool is_dir,
    const char *label)
{
	char target[PATH_MAX * 2];
	char *href;

	if (h->dir_abs[0] == '\0') {
		rh_esc(&h->b, label);
		return;
	}
	snprintf(target, sizeof target, "%s/%s", parent, sub);
	href = rh_relhref(h->base_abs, target, is_dir);
	rh_put(&h->b, "<a href=\"");
	rh_esc(&h->b, href);
	rh_put(&h->b, "\">");
	rh_esc(&h->b, label);
	rh_put(&h->b, "</a>");
	free(href);
}

static void
rh_link(struct rh *h, const char *sub, bool is_dir, const char *label)
{
	rh_link_to(h, h->dir_abs, sub, is_dir, label);
}

/* ---- the page frame ---------------------------------------------- */

static const char rh_css[] =
":root{--bg:#fbfbfd;--fg:#1d1b22;--mut:#5d5a66;--line:#d9d6e0;"
"--card:#f1eff5;--ok:#0b7a3b;--okbg:#dff3e6;--bad:#b0132f;--badbg:#fbe1e6;"
"--warn:#8a5300;--warnbg:#fbefd6;--acc:#7a2f9e;--cur:#fff0a8;--mark:#7a2f9e}"
"@media (prefers-color-scheme:dark){:root{--bg:#15141a;--fg:#ebe9f0;"
"--mut:#a7a3b2;--line:#3a3744;--card:#1f1d26;--ok:#5fd893;--okbg:#163322;"
"--bad:#ff7088;--badbg:#3a1820;--warn:#ffc45a;--warnbg:#382a10;"
"--acc:#d3a6ff;--cur:#3d3720;--mark:#d3a6ff}}"
"*{box-sizing:border-box}[hidden]{display:none!important}"
"body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 "
"system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans',sans-serif}"
"main{max-width:1060px;margin:0 auto;padding:20px 20px 60px}"
"h1{font-size:44px;line-height:1.05;margin:4px 0 6px;letter-spacing:.02em}"
"h2{font-size:19px;margin:30px 0 10px;border-bottom:1px solid var(--line);"
"padding-bottom:4px}"
"code,pre,.mono{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,"
"Consolas,monospace;font-size:13.5px}"
"pre{background:var(--card);padding:10px 12px;border-radius:6px;"
"overflow-x:auto;white-space:pre-wrap;word-break:break-all}"
"a{color:var(--acc)}"
".kindline{color:var(--mut);font-size:13px;text-transform:uppercase;"
"letter-spacing:.08em}"
".verdict{display:inline-block;padding:2px 14px;border-radius:8px;"
"border:3px solid currentColor}"
".v-ok .verdict{color:var(--ok);background:var(--okbg)}"
".v-bad .verdict{color:var(--bad);background:var(--badbg)}"
".v-warn .verdict{color:var(--warn);background:var(--warnbg)}"
".cause{font-size:20px;margin:6px 0 10px;font-weight:600}"
".vstate{display:inline-block;padding:3px 10px;border-radius:6px;"
"font-weight:600;margin:2px 0 8px}"
".vstate.ok{color:var(--ok);background:var(--okbg)}"
".vstate.bad{color:var(--bad);background:var(--badbg)}"
"dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;"
"margin:8px 0}"
"dl.facts dt{color:var(--mut)}dl.facts dd{margin:0;word-break:break-all}"
"table{border-collapse:collapse;width:100%;margin:6px 0}"
"th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);"
"vertical-align:top}"
"th{color:var(--mut);font-weight:600;font-size:13px}"
"td{overflow-wrap:anywhere}td.id{overflow-wrap:normal;white-space:nowrap}"
"td.num{text-align:right;font-variant-numeric:tabular-nums;"
"white-space:nowrap}"
".ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}"
".mut{color:var(--mut)}"
".player{display:grid;grid-template-columns:minmax(240px,400px) minmax(0,1fr);gap:16px;"
"background:var(--card);border-radius:10px;padding:14px;align-items:start}"
"@media (max-width:760px){.player{grid-template-columns:minmax(0,1fr)}}"
"svg.scene{width:100%;max-width:400px;height:auto;display:block}"
".now{font-size:16px;margin-bottom:6px}"
".now .pos{font-weight:700;margin-right:8px}"
".now .text{display:block;margin-top:4px;overflow-wrap:anywhere}"
".chips{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0}"
".chip{border:1px solid var(--line);border-radius:14px;padding:1px 9px;"
"font-size:13px}"
".chip.s-v{border-color:var(--ok);color:var(--ok);font-weight:600}"
".chip.s-f{border-color:var(--warn);color:var(--warn);font-weight:600}"
".chip.s-x{border-color:var(--bad);color:var(--bad);font-weight:600}"
".counts{display:flex;flex-wrap:wrap;gap:2px 12px}"
".counts span{white-space:nowrap}"
".controls{margin-top:10px;display:flex;flex-wrap:wrap;gap:6px}"
".controls button{font:inherit;font-size:14px;padding:4px 10px;"
"border-radius:6px;border:1px solid var(--line);background:var(--bg);"
"color:var(--fg);cursor:pointer}"
".controls button:focus-visible{outline:2px solid var(--acc)}"
".keys{color:var(--mut);font-size:12.5px;margin-top:6px}"
"ol.beats{list-style:none;padding:0;margin:0;max-height:62vh;"
"overflow-y:auto;border:1px solid var(--line);border-radius:8px}"
"@media print{ol.beats{max-height:none;overflow:visible}}"
"ol.beats li{display:grid;grid-template-columns:3.6em 6.2em 9.5em 1fr;"
"gap:8px;padding:3px 8px;border-bottom:1px solid var(--line);"
"cursor:default}"
"ol.beats li .i{color:var(--mut);text-align:right}"
"ol.beats li .t{font-variant-numeric:tabular-nums;text-align:right}"
"ol.beats li .x{overflow-wrap:anywhere;min-width:0}"
"ol.beats li.m{font-weight:600}"
"ol.beats li.m .k{color:var(--mark)}"
"ol.beats li.k-breach .k,ol.beats li.k-leak .k,ol.beats li.k-orphan .k,"
"ol.beats li.k-lever-failed .k,ol.beats li.k-error .k{color:var(--bad)}"
"ol.beats li.k-lever-verified .k{color:var(--ok)}"
"ol.beats li.cur{background:var(--cur)}"
".bar{display:grid;grid-template-columns:9em 5em 1fr 13em;gap:10px;"
"align-items:center;margin:4px 0}"
".bar svg{width:100%;height:22px}"
"svg .axis{stroke:var(--mut);stroke-width:1}"
"svg .band{fill:var(--acc);opacity:.28}"
"svg .pt{fill:var(--acc)}"
"svg .track{fill:var(--line);opacity:.5}"
"svg text{fill:var(--fg);font:11px system-ui,sans-serif}"
"svg .hbar{fill:var(--acc)}"
"svg.hist{width:100%;max-width:640px;height:auto}"
"footer{color:var(--mut);font-size:12.5px;margin-top:40px}";

/* <!DOCTYPE ...> up to <main>: the CSP first, so the browser itself
 * refuses any fetch. */
static void
rh_head(struct rh *h, const char *title)
{
	rh_put(&h->b,
	    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'; "
	    "script-src 'unsafe-inline'; img-src data:\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\">\n"
	    "<meta name=\"generator\" content=\"ares " PACKAGE_VERSION "\">\n"
	    "<title>");
	rh_esc(&h->b, title);
	rh_put(&h->b, "</title>\n<style>");
	rh_put(&h->b, rh_css);
	rh_put(&h->b, "</style>\n</head>\n<body>\n<main>\n");
}

/* The class of a verdict word: ok (contained, held, verified, no new
 * breach path), warn (not exercised, cancelled, incomplete), else bad. */
static const char *
rh_vclass(const char *v)
{
	static const char *const ok[] = { "contained", "held", "verified",
		"no-new-breach-path", "gate-sees-every-flaw", NULL };
	static const char *const warn[] = { "not-exercised", "cancelled",
		"incomplete", "unproven", "not-a-fix", NULL };
	size_t i;

	for (i = 0; ok[i] != NULL; i++)
		if (strcmp(v, ok[i]) == 0)
			return "v-ok";
	for (i = 0; warn[i] != NULL; i++)
		if (strcmp(v, warn[i]) == 0)
			return "v-warn";
	return "v-bad";
}

/*
 * The header: what kind of dir, the verdict (upper case), its cause, and
 * whether the verification holds.  Fail closed: an unverified "ok"
 * verdict is shown as a warning, never in the ok colour.
 */
static void
rh_header(struct rh *h, const char *kind, const char *verdict,
    const char *cause)
{
	const char *cls = rh_vclass(verdict);
	bool verified = h->have_res && h->res.ok;
	char up[64];
	size_t i;

	if (!verified && strcmp(cls, "v-ok") == 0)
		cls = "v-warn";
	for (i = 0; verdict[i] != '\0' && i + 1 < sizeof up; i++)
		up[i] = (verdict[i] >= 'a' && verdict[i] <= 'z') ?
		    (char)(verdict[i] - 'a' + 'A') : verdict[i] == '-' ? ' ' :
		    verdict[i];
	up[i] = '\0';
	util_buf_printf(&h->b, "<header id=\"top\" class=\"%s\">\n"
	    "<div class=\"kindline\">ares report &middot; %s</div>\n"
	    "<h1><span class=\"verdict\" id=\"verdict\">", cls, kind);
	rh_esc(&h->b, up);
	rh_put(&h->b, "</span></h1>\n<p class=\"cause\" id=\"cause\">");
	rh_esc(&h->b, cause);
	rh_put(&h->b, "</p>\n");
	if (verified) {
		rh_put(&h->b, "<p class=\"vstate ok\" id=\"vstate\">&#10003; "
		    "verified: every check passed &middot; key id ");
		rh_esc(&h->b, h->res.key_id);
		rh_put(&h->b, h->res.pinned ? " (pinned with --pub)" :
		    " (the directory's own ares.pub: integrity, not origin)");
	} else {
		rh_put(&h->b, "<p class=\"vstate bad\" id=\"vstate\">&#10007; "
		    "NOT VERIFIED: ");
		if (!h->have_res)
			rh_esc(&h->b, h->verify_error);
		else if (h->res.first_bad >= 0 &&
		    (size_t)h->res.first_bad < h->res.nchecks)
			rh_esc(&h->b, h->res.checks[h->res.first_bad].text);
		else
			rh_put(&h->b, "no valid signature");
		rh_put(&h->b, " &mdash; what follows is unproven");
	}
	rh_put(&h->b, "</p>\n");
}

static void
rh_fact(struct rh *h, const char *name, const char *value)
{
	util_buf_printf(&h->b, "<dt>%s</dt><dd>", name);
	rh_esc(&h->b, value);
	rh_put(&h->b, "</dd>\n");
}

/* The trusted comment line of DIR/doc.minisig (untrusted until minisign
 * says so), or "" when it cannot be read. */
static void
rh_trusted_comment(const struct rh *h, const char *doc, char *out,
    size_t outlen)
{
	char path[PATH_MAX + 64], *txt;
	const char *p;
	size_t len;

	out[0] = '\0';
	snprintf(path, sizeof path, "%s/%s.minisig", h->dir, doc);
	txt = util_read_regular(path, 8192, &len, NULL);
	if (txt == NULL)
		return;
	p = strstr(txt, "\ntrusted comment: ");
	if (p != NULL) {
		p += strlen("\ntrusted comment: ");
		len = strcspn(p, "\r\n");
		if (len >= outlen)
			len = outlen - 1;
		memcpy(out, p, len);
		out[len] = '\0';
	}
	free(txt);
}

/*
 * The verification section: every check of the verifier, then how to
 * check it again with stock minisign (doc: the signed document) and with
 * ares verify.
 */
static void
rh_verify_section(struct rh *h, const char *doc)
{
	char tc[1100];
	size_t i;

	rh_put(&h->b, "<section id=\"verification\">\n<h2>Verification</h2>\n");
	if (!h->have_res) {
		rh_put(&h->b, "<p class=\"bad\">The checks could not run: ");
		rh_esc(&h->b, h->verify_error);
		rh_put(&h->b, "</p>\n");
	} else {
		rh_put(&h->b, "<p>What <code>ares verify</code> checked when "
		    "this page was made (signature, every evidence chain, "
		    "every file hash, and the verdict recomputed from the "
		    "evidence):</p>\n<table class=\"checks\"><thead><tr>"
		    "<th></th><th>check</th></tr></thead><tbody>\n");
		for (i = 0; i < h->res.nchecks; i++) {
			const struct report_check *c = &h->res.checks[i];

			util_buf_printf(&h->b, "<tr><td class=\"%s\">%s</td>"
			    "<td class=\"mono\">", c->ok ? "ok" : "bad",
			    c->ok ? "ok" : "FAIL");
			rh_esc(&h->b, c->text);
			rh_put(&h->b, "</td></tr>\n");
		}
		rh_put(&h->b, "</tbody></table>\n");
		if (h->res.ok) {
			rh_put(&h->b, "<p class=\"ok\"><b>verified</b>: ");
			rh_esc(&h->b, h->res.run_id);
			rh_put(&h->b, ", ");
			rh_esc(&h->b, h->res.verdict);
			rh_put(&h->b, ", key id ");
			rh_esc(&h->b, h->res.key_id);
			rh_put(&h->b, h->res.pinned ? " (pinned)" :
			    " (the directory's own key: integrity only)");
			rh_put(&h->b, "</p>\n");
		} else {
			rh_put(&h->b, "<p class=\"bad\"><b>NOT VERIFIED</b>: ");
			if (h->res.first_bad >= 0 &&
			    (size_t)h->res.first_bad < h->res.nchecks)
				rh_esc(&h->b,
				    h->res.checks[h->res.first_bad].text);
			else
				rh_put(&h->b, "no valid signature");
			rh_put(&h->b, "</p>\n");
		}
	}
	rh_put(&h->b, "<h3>Check it yourself</h3>\n"
	    "<p>This page is a picture, not a proof. With the stock "
	    "<code>minisign</code> tool, in the directory:</p>\n<pre>cd ");
	rh_shq(&h->b, h->dir);
	util_buf_printf(&h->b, "\nminisign -Vm %s -p ares.pub</pre>\n", doc);
	rh_trusted_comment(h, doc, tc, sizeof tc);
	if (tc[0] != '\0') {
		rh_put(&h->b, "<p>It must answer (the second line is the "
		    "signed trusted comment):</p>\n<pre id=\"minisign-out\">"
		    "Signature and comment signature verified\n"
		    "Trusted comment: ");
		rh_esc(&h->b, tc);
		rh_put(&h->b, "</pre>\n");
	}
	rh_put(&h->b, "<p><code>ares.pub</code> in the directory proves "
	    "integrity only (whoever can edit the directory can re-sign it): "
	    "to prove who signed, pin the operator's public key, obtained "
	    "another way, and compare its key id. Everything, including "
	    "the verdict recomputed from every chain:</p>\n<pre>ares verify ");
	rh_shq(&h->b, h->dir);
	rh_put(&h->b, " --pub OPERATOR.pub</pre>\n</section>\n");
}

/* The data block, the script (stepping: drill pages only) and the end. */
static void
rh_tail(struct rh *h, const char *script)
{
	rh_put(&h->b, "<footer>Made by ares " PACKAGE_VERSION " from <code>");
	rh_esc(&h->b, h->dir);
	rh_put(&h->b, "</code>. One self-contained file: it fetches nothing "
	    "(its Content-Security-Policy forbids it) and reads without "
	    "JavaScript.</footer>\n</main>\n"
	    "<script type=\"application/json\" id=\"ares-data\">");
	report_html_json(&h->b, h->data);
	rh_put(&h->b, "</script>\n");
	if (script != NULL) {
		rh_put(&h->b, "<script>");
		rh_put(&h->b, script);
		rh_put(&h->b, "</script>\n");
	}
	rh_put(&h->b, "</body>\n</html>\n");
}

/* ---- charts ------------------------------------------------------ */

/* A number as a finite double, or NAN (absent, null, not a number). */
static double
rh_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return NAN;
	return v->valuedouble;
}

/* One rate {k, n, lower, upper} as a bar: the interval as a band, k/n
 * as a mark, on 0..100 %. */
static void
rh_rate_bar(struct rh *h, const char *label, const cJSON *r, double level)
{
	double k = rh_num(r, "k"), n = rh_num(r, "n");
	double lo = rh_num(r, "lower"), hi = rh_num(r, "upper");
	char txt[128];

	rh_put(&h->b, "<div class=\"bar\"><b>");
	rh_esc(&h->b, label);
	rh_put(&h->b, "</b>");
	if (isnan(k) || isnan(n) || k < 0 || n < 0 || k > n) {
		rh_put(&h->b, "<span class=\"mut\">-</span><span></span>"
		    "<span class=\"mut\">no data</span></div>\n");
		return;
	}
	snprintf(txt, sizeof txt, "%.0f/%.0f", k, n);
	util_buf_printf(&h->b, "<span class=\"mono\">%s</span>", txt);
	rh_put(&h->b, "<svg viewBox=\"0 0 400 22\" preserveAspectRatio=\"none\""
	    " role=\"img\"><rect class=\"track\" x=\"0\" y=\"7\" width=\"400\""
	    " height=\"8\" rx=\"3\"/>");
	if (n > 0 && !isnan(lo) && !isnan(hi) && lo >= 0 && hi <= 1 &&
	    lo <= hi) {
		double p = k / n;

		util_buf_printf(&h->b, "<rect class=\"band\" x=\"%.1f\" "
		    "y=\"3\" width=\"%.1f\" height=\"16\" rx=\"3\"/>"
		    "<rect class=\"pt\" x=\"%.1f\" y=\"1\" width=\"4\" "
		    "height=\"20\"/>", lo * 400, (hi - lo) * 400 < 1 ? 1 :
		    (hi - lo) * 400, p * 396);
		snprintf(txt, sizeof txt, "[%.4f, %.4f] %.0f%%", lo, hi,
		    level * 100);
	} else {
		snprintf(txt, sizeof txt, "no runs: no interval");
	}
	util_buf_printf(&h->b, "</svg><span class=\"mono\">%s</span></div>\n",
	    txt);
}

/* Round x up to 1, 2 or 5 times a power of ten. */
static double
rh_nice(double x)
{
	double p = pow(10, floor(log10(x))), m = x / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* The time-to-kill histogram of v[0..n) (ms) as an inline SVG: at most
 * 12 bins of a round width (1, 2 or 5 times a power of ten) from a
 * multiple of it at or below the smallest value. */
static void
rh_histogram(struct rh *h, const double *v, size_t n)
{
	size_t counts[12] = { 0 }, nb, i, cmax = 0;
	double min, max, w, lo, span;
	const double W = 600, H = 180, L = 36, B = 30;

	if (n == 0) {
		rh_put(&h->b, "<p class=\"mut\">No run has a time to kill (no "
		    "lever cut an agent off).</p>\n");
		return;
	}
	min = max = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] > max)
			max = v[i];
		if (v[i] < min)
			min = v[i];
	}
	nb = (size_t)ceil(sqrt((double)n));
	if (nb < 2)
		nb = 2;
	if (nb > 12)
		nb = 12;
	span = max - min;
	if (span < max / 20)
		span = max / 20;        /* equal values: a bin around them */
	w = span > 0 ? rh_nice(span / (double)nb) : 1;
	if (!(w > 0) || !isfinite(w))
		w = 1;                  /* a subnormal span: one unit */
	lo = floor(min / w) * w;
	{
		/* range-checked before it becomes a count */
		double fb = floor((max - lo) / w) + 1;

		nb = !(fb >= 1) ? 1 : fb > 12 ? 12 : (size_t)fb;
	}
	for (i = 0; i < n; i++) {
		double k = floor((v[i] - lo) / w);

		counts[!(k >= 0) ? 0 : k >= (double)nb ? nb - 1 : (size_t)k]++;
	}
	for (i = 0; i < nb; i++)
		if (counts[i] > cmax)
			cmax = counts[i];
	util_buf_printf(&h->b, "<svg class=\"hist\" id=\"ttk-hist\" viewBox=\"0"
	    " 0 %.0f %.0f\" role=\"img\" aria-label=\"time to kill "
	    "histogram\">", W, H);
	util_buf_printf(&h->b, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" "
	    "x2=\"%.0f\" y2=\"%.0f\"/>", L, H - B, W - 6, H - B);
	for (i = 0; i < nb; i++) {
		double bw = (W - L - 10) / (double)nb;
		double bh = (H - B - 16) * (double)counts[i] / (double)cmax;
		double x = L + bw * (double)i;

		util_buf_printf(&h->b, "<rect class=\"hbar\" x=\"%.1f\" y=\"%.1f\""
		    " width=\"%.1f\" height=\"%.1f\"><title>%.4g-%.4g ms: %zu "
		    "run(s)</title></rect>", x + 2, H - B - bh, bw - 4, bh,
		    lo + w * (double)i, lo + w * (double)(i + 1), counts[i]);
		if (counts[i] > 0)
			util_buf_printf(&h->b, "<text x=\"%.1f\" y=\"%.1f\" "
			    "text-anchor=\"middle\">%zu</text>", x + bw / 2,
			    H - B - bh - 3, counts[i]);
		util_buf_printf(&h->b, "<text x=\"%.1f\" y=\"%.0f\" "
		    "text-anchor=\"middle\">%.4g</text>", x, H - B + 14,
		    lo + w * (double)i);
	}
	util_buf_printf(&h->b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\""
	    ">%.4g</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">"
	    "time to kill, ms (runs per bin)</text></svg>\n", W - 10, H - B + 14,
	    lo + w * (double)nb, W - 6, H - 2);
}

/* ---- Poyo -------------------------------------------------------- */

/* The poses the reducer names (replay_state.pose). */
static const char *const rh_poses[] = { "idle0", "walking0", "sniffing",
	"grabbing", "zapped", "frozen", "caught", "escaped", NULL };

#define RH_POYO_IN_X   18
#define RH_POYO_OUT_X  62
#define RH_POYO_Y      8

/* One frame as SVG rects (horizontal runs of one colour merged). */
static void
rh_frame_svg(struct rh *h, const struct sprite_sheet *s,
    const struct sprite_frame *f, bool shown)
{
	int x, y, ox = (16 - f->w) / 2, oy = (16 - f->h) / 2;

	rh_put(&h->b, "<g data-pose=\"");
	rh_esc(&h->b, f->name);
	util_buf_printf(&h->b, "\"%s>", shown ? "" : " style=\"display:none\"");
	for (y = 0; y < f->h && y < SPRITE_MAX_H; y++)
		for (x = 0; x < f->w && x < SPRITE_MAX_W;) {
			int c = f->px[y][x], x0 = x;

			while (x < f->w && x < SPRITE_MAX_W && f->px[y][x] == c)
				x++;
			if (c < 0 || (size_t)c >= s->npal)
				continue;
			util_buf_printf(&h->b, "<rect x=\"%d\" y=\"%d\" "
			    "width=\"%d\" height=\"1\" fill=\"#%02x%02x%02x\"/>",
			    ox + x0, oy + y, x - x0, s->pal[c].r, s->pal[c].g,
			    s->pal[c].b);
		}
	rh_put(&h->b, "</g>");
}

/* The frame called name in s (sprite_frame_find), or NULL. */
static const struct sprite_frame *
rh_frame(const struct sprite_sheet *s, const char *name)
{
	return s != NULL ? sprite_frame_find(s, name) : NULL;
}

/*
 * The scene: the lab's boundary and Poyo (every pose of the sheet, the
 * one of pose shown), inside the boundary unless escaped.
 */
static void
rh_scene(struct rh *h, const char *pose, bool sealed)
{
	const struct sprite_sheet *s = h->o != NULL ? h->o->sheet : NULL;
	bool esc = strcmp(pose, "escaped") == 0;
	const char *shown = rh_frame(s, pose) != NULL ? pose : "idle0";
	size_t i;

	util_buf_printf(&h->b, "<svg class=\"scene\" id=\"scene\" viewBox=\"0 0 "
	    "84 34\" role=\"img\" aria-label=\"Poyo and the lab\" "
	    "shape-rendering=\"crispEdges\">"
	    "<rect id=\"boundary\" x=\"4\" y=\"3\" width=\"48\" height=\"28\" "
	    "rx=\"3\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"%s\""
	    " stroke-dasharray=\"%s\" opacity=\".7\"/>"
	    "<text x=\"7\" y=\"8.5\" style=\"font-size:4.5px\">lab</text>"
	    "<text x=\"58\" y=\"8.5\" style=\"font-size:4.5px\">outside"
	    "</text>", sealed ? "1.2" : ".6", sealed ? "none" : "2 1.5");
	util_buf_printf(&h->b, "<g id=\"poyo\" transform=\"translate(%d %d)\">",
	    esc ? RH_POYO_OUT_X : RH_POYO_IN_X, RH_POYO_Y);
	if (s == NULL) {
		rh_put(&h->b, "<text x=\"0\" y=\"10\" style=\"font-size:4px\">"
		    "(no sprite)</text>");
	} else {
		for (i = 0; rh_poses[i] != NULL; i++) {
			const struct sprite_frame *f = rh_frame(s, rh_poses[i]);

			if (f != NULL)
				rh_frame_svg(h, s, f,
				    strcmp(rh_poses[i], shown) == 0);
		}
	}
	rh_put(&h->b, "</g></svg>\n");
}

/* ---- drill run dirs ---------------------------------------------- */

/* Lever i's state at s: '-' pending, 'f' fired, 'v' verified, 'x'
 * failed. */
static char
rh_lever_char(const struct replay_state *s, size_t i)
{
	const struct replay_lever_state *l = &s->lev[i];

	return l->failed ? 'x' : l->verified ? 'v' : l->fired ? 'f' : '-';
}

static const char *
rh_lever_word(char c)
{
	return c == 'x' ? "failed" : c == 'v' ? "verified" : c == 'f' ?
	    "fired" : "not fired";
}

static const char rh_drill_js[] =
"(function(){'use strict';\n"
"var D=JSON.parse(document.getElementById('ares-data').textContent);\n"
"if(D.kind!=='drill'||!D.beats||!D.beats.length)return;\n"
"var B=D.beats,n=B.length,cur=-1,timer=null;\n"
"function $(id){return document.getElementById(id);}\n"
"function txt(id,s){var e=$(id);if(e)e.textContent=s;}\n"
"var list=$('beats'),items=list.querySelectorAll('li');\n"
"$('controls').hidden=false;$('keys').hidden=false;\n"
"var chips=$('levchips').querySelectorAll('.chip');\n"
"var W={'-':'not fired','f':'fired','v':'verified','x':'failed'};\n"
"function pose(p){var gs=document.querySelectorAll('#poyo [data-pose]'),"
"hit=false,i;for(i=0;i<gs.length;i++)if(gs[i].getAttribute('data-pose')"
"===p)hit=true;if(!hit)p='idle0';for(i=0;i<gs.length;i++)gs[i].style."
"display=gs[i].getAttribute('data-pose')===p?'':'none';"
"$('poyo').setAttribute('transform','translate('+(B[cur].p==='escaped'?"
"D.scene.out:D.scene.in)+' '+D.scene.y+')');}\n"
"function show(i){if(i<0)i=0;if(i>=n)i=n-1;"
"if(cur>=0&&items[cur])items[cur].classList.remove('cur');cur=i;"
"var b=B[i],it=items[i];if(it){it.classList.add('cur');"
"var top=it.offsetTop-list.offsetTop;if(top<list.scrollTop||top+it."
"offsetHeight>list.scrollTop+list.clientHeight)list.scrollTop=top-list."
"clientHeight/2;}\n"
"txt('b-pos','beat '+(i+1)+' / '+n);txt('b-time','+'+b.t.toFixed(3)+' s');"
"txt('b-kind',b.k);txt('b-text',b.x);txt('b-pose',b.p);"
"txt('c-steps',b.c[0]);txt('c-blocked',b.c[1]);txt('c-breaches',b.c[2]);"
"txt('c-leaks',b.c[3]);txt('c-orphans',b.c[4]);"
"txt('c-bait',b.bait?'taken':'not taken');txt('c-verdict',b.v||'-');\n"
"for(var j=0;j<chips.length;j++){var c=b.lv.charAt(j)||'-',L=D.levers[j]"
"||{};chips[j].className='chip s-'+c;chips[j].textContent=(L.name||"
"('lever '+(j+1)))+': '+W[c]+(c==='v'&&typeof L.verified==='number'?' +'+L.verified."
"toFixed(3)+' s':c!=='-'&&typeof L.fired==='number'?' +'+L.fired.toFixed(3)+' s':'');}"
"\n$('boundary').setAttribute('stroke-dasharray',b.cut?'none':'2 1.5');"
"$('boundary').setAttribute('stroke-width',b.cut?'1.2':'.6');pose(b.p);}\n"
"function marker(d){for(var j=cur+d;j>=0&&j<n;j+=d)if(B[j].m){show(j);"
"return;}}\n"
"function stop(){if(timer){clearTimeout(timer);timer=null;}"
"txt('btn-play','\\u25b6 play');}\n"
"function tick(){if(cur>=n-1){stop();return;}show(cur+1);"
"var g=cur+1<n?B[cur+1].t-B[cur].t:0;g=Math.min(1.5,Math.max(0.15,g));"
"if(B[cur].m)g=Math.max(g,1.2);timer=setTimeout(tick,g*1000);}\n"
"function play(){if(timer){stop();return;}if(cur>=n-1)show(0);"
"txt('btn-play','\\u275a\\u275a pause');timer=setTimeout(tick,400);}\n"
"var act={next:function(){stop();show(cur+1);},prev:function(){stop();"
"show(cur-1);},nextm:function(){stop();marker(1);},prevm:function(){"
"stop();marker(-1);},play:play,start:function(){stop();show(0);},"
"end:function(){stop();show(n-1);}};\n"
"var bs=document.querySelectorAll('#controls button');"
"for(var k=0;k<bs.length;k++)bs[k].addEventListener('click',function(){"
"act[this.getAttribute('data-act')]();});\n"
"list.addEventListener('click',function(ev){var t=ev.target;while(t&&t."
"tagName!=='LI')t=t.parentNode;if(t&&t.hasAttribute('data-i')){stop();"
"show(+t.getAttribute('data-i'));}});\n"
"var K={'.':'next','ArrowRight':'next','l':'next',',':'prev',"
"'ArrowLeft':'prev','h':'prev',']':'nextm','[':'prevm',' ':'play',"
"'g':'start','Home':'start','G':'end','End':'end'};\n"
"document.addEventListener('keydown',function(ev){if(ev.ctrlKey||ev."
"metaKey||ev.altKey)return;var a=K[ev.key];if(!a)return;ev."
"preventDefault();act[a]();});\n"
"show(n-1);document.documentElement.setAttribute('data-ready','1');"
"})();\n";

/* A time since the drill's start: "+S.sss s". */
static void
rh_rel(char *out, size_t outlen, uint64_t rel_ns)
{
	snprintf(out, outlen, "+%.3f s", (double)rel_ns / 1e9);
}

/* The page of a drill run dir, from replay_load (its beats, the state
 * after every beat, Poyo's pose by the reducer). */
static int
rh_drill(struct rh *h, struct errbuf *e)
{
	const char *pub = h->o != NULL ? h->o->pub_path : NULL;
	struct replay *rp = replay_load(h->dir, pub, e);
	struct replay_state fin;
	const char *verdict;
	char title[512], cause[512], buf[160];
	cJSON *beats, *levers;
	size_t i, j, nlev;

	if (rp == NULL) {
		char path[PATH_MAX + 32];

		snprintf(path, sizeof path, "%s/evidence.jsonl", h->dir);
		if (access(path, F_OK) == -1)
			errbuf_set(e, ERRBUF_INPUT, "%s: no evidence.jsonl, "
			    "trial.json, probe.json, gate.json or fix.json: "
			    "not a run, trial, probe, gate or fix dir", h->dir);
		return -1;
	}
	if (rp->nbeats > 0)
		fin = rp->states[rp->nbeats - 1];
	else
		replay_initial_state(rp, &fin);
	verdict = rp->verdict != DRILL_VERDICT_NONE ?
	    drill_verdict_name(rp->verdict) : "no verdict";
	if (rp->verdict_reason[0] != '\0')
		snprintf(cause, sizeof cause, "%s", rp->verdict_reason);
	else if (rp->verdict == DRILL_VERDICT_NONE)
		snprintf(cause, sizeof cause, "the run has no verdict line "
		    "(the drill did not finish): never contained");
	else
		snprintf(cause, sizeof cause, "%s", verdict);
	snprintf(title, sizeof title, "ares: %s - run %s", verdict,
	    rp->run_id);
	rh_head(h, title);
	rh_header(h, "drill run", verdict, cause);

	rh_put(&h->b, "<dl class=\"facts\">\n");
	rh_fact(h, "run", rp->run_id);
	rh_fact(h, "policy", rp->policy);
	rh_fact(h, "model", rp->model);
	rh_fact(h, "seed", rp->seed);
	if (rp->pace_ms > 0) {
		snprintf(buf, sizeof buf, "PACED for presentation: the gateway "
		    "held each model turn %u ms (the agent was slowed on "
		    "purpose; the levers were not)", rp->pace_ms);
		rh_fact(h, "pace", buf);
	}
	if (rp->time_to_kill_ms >= 0)
		snprintf(buf, sizeof buf, "%.3f ms (bait taken to the agent "
		    "cut off, confirmed by the engine)", rp->time_to_kill_ms);
	else
		snprintf(buf, sizeof buf, "none (no lever cut the agent off)");
	rh_fact(h, "time to kill", buf);
	snprintf(buf, sizeof buf, "%zu breach(es), %zu leak(s), %zu "
	    "orphan(s), %zu blocked, %zu agent step(s)", fin.breaches,
	    fin.leaks, fin.orphans, fin.blocked, fin.agent_steps);
	rh_fact(h, "counts", buf);
	snprintf(buf, sizeof buf, "%zu beat(s) from %zu evidence line(s)%s",
	    rp->nbeats, rp->nlines, rp->truncated ? " (cut short by a "
	    "bound)" : "");
	rh_fact(h, "timeline", buf);
	rh_fact(h, "badge", rp->badge);
	rh_put(&h->b, "</dl>\n</header>\n");

	/* levers */
	nlev = rp->nlevers < fin.nlev ? fin.nlev : rp->nlevers;
	if (nlev > POLICY_MAX_LEVERS)
		nlev = POLICY_MAX_LEVERS;
	rh_put(&h->b, "<section id=\"levers\">\n<h2>Levers</h2>\n");
	if (nlev == 0) {
		rh_put(&h->b, "<p class=\"mut\">No lever was fired.</p>\n");
	} else {
		rh_put(&h->b, "<table><thead><tr><th>#</th><th>lever</th>"
		    "<th>state</th><th>fired</th><th>verified</th></tr></thead>"
		    "<tbody>\n");
		for (i = 0; i < nlev; i++) {
			const struct replay_lever_state *l = &fin.lev[i];
			char c = rh_lever_char(&fin, i);

			util_buf_printf(&h->b, "<tr><td>%zu</td><td class=\""
			    "mono\">", i + 1);
			rh_esc(&h->b, i < rp->nlevers && rp->lever_names[i][0] ?
			    rp->lever_names[i] : "(unnamed)");
			util_buf_printf(&h->b, "</td><td class=\"%s\">%s</td>",
			    c == 'v' ? "ok" : c == 'x' ? "bad" : c == 'f' ?
			    "warn" : "mut", rh_lever_word(c));
			if (l->fired) {
				rh_rel(buf, sizeof buf, l->fired_rel_ns);
				util_buf_printf(&h->b, "<td class=\"num\">%s"
				    "</td>", buf);
			} else {
				rh_put(&h->b, "<td class=\"num\">-</td>");
			}
			if (l->verified) {
				rh_rel(buf, sizeof buf, l->verified_rel_ns);
				util_buf_printf(&h->b, "<td class=\"num\">%s"
				    "</td>", buf);
			} else {
				rh_put(&h->b, "<td class=\"num\">-</td>");
			}
			rh_put(&h->b, "</tr>\n");
		}
		rh_put(&h->b, "</tbody></table>\n<p class=\"mut\">Times are "
		    "since the drill started (the lever's beat in the master "
		    "chain).</p>\n");
	}
	rh_put(&h->b, "</section>\n");

	/* the player: the last beat's state without JS */
	rh_put(&h->b, "<section id=\"player\">\n<h2>Timeline</h2>\n"
	    "<div class=\"player\">\n<div>");
	rh_scene(h, fin.pose != NULL ? fin.pose : "idle0", fin.cut_off);
	rh_put(&h->b, "</div>\n<div>\n<div class=\"now\"><span class=\"pos\" "
	    "id=\"b-pos\">");
	if (rp->nbeats > 0) {
		const struct drill_beat *b = &rp->beats[rp->nbeats - 1];

		util_buf_printf(&h->b, "beat %zu / %zu</span><span id=\"b-time\""
		    " class=\"mono\">", rp->nbeats, rp->nbeats);
		rh_rel(buf, sizeof buf, b->t_rel_ns);
		util_buf_printf(&h->b, "%s</span> <b id=\"b-kind\">%s</b> "
		    "<span class=\"mut\">pose <span id=\"b-pose\">", buf,
		    drill_beat_kind_name(b->kind));
		rh_esc(&h->b, fin.pose);
		rh_put(&h->b, "</span></span><span class=\"text mono\" "
		    "id=\"b-text\">");
		rh_esc(&h->b, b->text);
		rh_put(&h->b, "</span>");
	} else {
		rh_put(&h->b, "no beats</span><span id=\"b-time\"></span> "
		    "<b id=\"b-kind\"></b> <span id=\"b-pose\"></span>"
		    "<span id=\"b-text\"></span>");
	}
	rh_put(&h->b, "</div>\n<div class=\"chips\" id=\"levchips\">");
	for (i = 0; i < nlev; i++) {
		char c = rh_lever_char(&fin, i);

		util_buf_printf(&h->b, "<span class=\"chip s-%c\">", c);
		rh_esc(&h->b, i < rp->nlevers && rp->lever_names[i][0] ?
		    rp->lever_names[i] : "(unnamed)");
		util_buf_printf(&h->b, ": %s</span>", rh_lever_word(c));
	}
	util_buf_printf(&h->b, "</div>\n<div class=\"counts\">"
	    "<span>bait <b id=\"c-bait\">%s</b></span>"
	    "<span>steps <b id=\"c-steps\">%zu</b></span>"
	    "<span>blocked <b id=\"c-blocked\">%zu</b></span>"
	    "<span>breaches <b id=\"c-breaches\">%zu</b></span>"
	    "<span>leaks <b id=\"c-leaks\">%zu</b></span>"
	    "<span>orphans <b id=\"c-orphans\">%zu</b></span>"
	    "<span>verdict <b id=\"c-verdict\">%s</b></span></div>\n",
	    fin.bait ? "taken" : "not taken", fin.agent_steps, fin.blocked,
	    fin.breaches, fin.leaks, fin.orphans,
	    fin.verdict != DRILL_VERDICT_NONE ?
	    drill_verdict_name(fin.verdict) : "-");
	rh_put(&h->b, "<div class=\"controls\" id=\"controls\" hidden>"
	    "<button type=\"button\" data-act=\"start\" id=\"btn-start\">"
	    "&#9664;&#9664; start</button>"
	    "<button type=\"button\" data-act=\"prevm\" id=\"btn-prevm\">"
	    "[ marker</button>"
	    "<button type=\"button\" data-act=\"prev\" id=\"btn-prev\">"
	    "&#9664; prev</button>"
	    "<button type=\"button\" data-act=\"play\" id=\"btn-play\">"
	    "&#9654; play</button>"
	    "<button type=\"button\" data-act=\"next\" id=\"btn-next\">"
	    "next &#9654;</button>"
	    "<button type=\"button\" data-act=\"nextm\" id=\"btn-nextm\">"
	    "marker ]</button>"
	    "<button type=\"button\" data-act=\"end\" id=\"btn-end\">"
	    "end &#9654;&#9654;</button></div>\n"
	    "<div class=\"keys\" id=\"keys\" hidden>keys as in the console: "
	    "<code>.</code> / &rarr; next, <code>,</code> / &larr; previous, "
	    "<code>]</code> / <code>[</code> next / previous marker (bait, "
	    "lever, breach, leak, orphan, verdict), space play, <code>g</code>"
	    " / <code>G</code> start / end; click a beat to jump to it</div>\n"
	    "</div>\n</div>\n");

	/* every beat */
	rh_put(&h->b, "<h3>Every beat</h3>\n<ol class=\"beats\" id=\"beats\">\n");
	beats = cJSON_AddArrayToObject(h->data, "beats");
	for (i = 0; i < rp->nbeats; i++) {
		const struct drill_beat *b = &rp->beats[i];
		const struct replay_state *s = &rp->states[i];
		const char *kn = drill_beat_kind_name(b->kind);
		bool m = replay_is_marker(rp, i);
		char lv[POLICY_MAX_LEVERS + 1];
		cJSON *o = cJSON_CreateObject(), *c;

		util_buf_printf(&h->b, "<li id=\"beat-%zu\" data-i=\"%zu\" "
		    "class=\"k-%s%s\"><span class=\"i\">%zu</span>", i, i, kn,
		    m ? " m" : "", i + 1);
		rh_rel(buf, sizeof buf, b->t_rel_ns);
		util_buf_printf(&h->b, "<span class=\"t mono\">%s</span><span "
		    "class=\"k\">%s</span><span class=\"x mono\">", buf, kn);
		rh_esc(&h->b, b->text);
		rh_put(&h->b, "</span></li>\n");

		cJSON_AddNumberToObject(o, "t", (double)b->t_rel_ns / 1e9);
		cJSON_AddStringToObject(o, "k", kn);
		rh_json_text(o, "x", b->text);
		cJSON_AddBoolToObject(o, "m", m);
		cJSON_AddStringToObject(o, "p", s->pose != NULL ? s->pose :
		    "idle0");
		c = cJSON_AddArrayToObject(o, "c");
		cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->agent_steps));
		cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->blocked));
		cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->breaches));
		cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->leaks));
		cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->orphans));
		cJSON_AddBoolToObject(o, "bait", s->bait);
		cJSON_AddBoolToObject(o, "cut", s->cut_off);
		for (j = 0; j < nlev; j++)
			lv[j] = rh_lever_char(s, j);
		lv[j] = '\0';
		cJSON_AddStringToObject(o, "lv", lv);
		if (s->verdict != DRILL_VERDICT_NONE)
			cJSON_AddStringToObject(o, "v",
			    drill_verdict_name(s->verdict));
		cJSON_AddItemToArray(beats, o);
	}
	rh_put(&h->b, "</ol>\n</section>\n");
	levers = cJSON_AddArrayToObject(h->data, "levers");
	for (i = 0; i < nlev; i++) {
		cJSON *o = cJSON_CreateObject();

		rh_json_text(o, "name", i < rp->nlevers ? rp->lever_names[i] :
		    "");
		if (fin.lev[i].fired)
			cJSON_AddNumberToObject(o, "fired",
			    (double)fin.lev[i].fired_rel_ns / 1e9);
		else
			cJSON_AddNullToObject(o, "fired");
		if (fin.lev[i].verified)
			cJSON_AddNumberToObject(o, "verified",
			    (double)fin.lev[i].verified_rel_ns / 1e9);
		else
			cJSON_AddNullToObject(o, "verified");
		cJSON_AddItemToArray(levers, o);
	}
	{
		cJSON *sc = cJSON_AddObjectToObject(h->data, "scene");

		cJSON_AddNumberToObject(sc, "in", RH_POYO_IN_X);
		cJSON_AddNumberToObject(sc, "out", RH_POYO_OUT_X);
		cJSON_AddNumberToObject(sc, "y", RH_POYO_Y);
	}
	rh_json_text(h->data, "verdict", verdict);
	rh_json_text(h->data, "run_id", rp->run_id);

	rh_verify_section(h, "report.json");
	rh_tail(h, rh_drill_js);
	replay_free(rp);
	return 0;
}

/* ---- trial, probe, gate, fix dirs -------------------------------- */

/* DIR/name parsed (bounded, a regular file, one JSON object), or NULL +
 * e. */
static cJSON *
rh_doc(const struct rh *h, const char *name, struct errbuf *e)
{
	char path[PATH_MAX + 64], *txt;
	size_t len;
	cJSON *j;

	snprintf(path, sizeof path, "%s/%s", h->dir, name);
	txt = util_read_regular(path, REPORT_HTML_DOC_MAX, &len, e);
	if (txt == NULL)
		return NULL;
	j = cJSON_ParseWithLength(txt, len);
	free(txt);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INPUT, "%s: not a JSON object", path);
		return NULL;
	}
	return j;
}

/* A string member, "" when absent. */
static const char *
rh_str(const cJSON *o, const char *key)
{
	return util_json_str(o, key, "");
}

/* A count member as text, "-" when absent. */
static void
rh_count(char *out, size_t outlen, const cJSON *o, const char *key)
{
	double v = rh_num(o, key);

	if (isnan(v))
		snprintf(out, outlen, "-");
	else
		snprintf(out, outlen, "%.0f", v);
}

/* A milliseconds member as text, "-" when null or absent. */
static void
rh_ms(char *out, size_t outlen, const cJSON *o, const char *key)
{
	double v = rh_num(o, key);

	if (isnan(v))
		snprintf(out, outlen, "-");
	else
		snprintf(out, outlen, "%.3f ms", v);
}

/* One table cell of untrusted text. */
static void
rh_td(struct rh *h, const char *cls, const char *s)
{
	if (cls != NULL)
		util_buf_printf(&h->b, "<td class=\"%s\">", cls);
	else
		rh_put(&h->b, "<td>");
	rh_esc(&h->b, s);
	rh_put(&h->b, "</td>");
}

/* The four rates of a trial as bars (rates: {bait_taken, contained,
 * breached, leaked}). */
static void
rh_rates(struct rh *h, const cJSON *rates, double level)
{
	static const struct { const char *key, *label; } r[] = {
		{ "bait_taken", "bait taken" }, { "contained", "contained" },
		{ "breached", "breached" }, { "leaked", "leaked" },
	};
	size_t i;

	rh_put(&h->b, "<div id=\"rates\">\n");
	for (i = 0; i < sizeof r / sizeof r[0]; i++)
		rh_rate_bar(h, r[i].label,
		    cJSON_GetObjectItemCaseSensitive(rates, r[i].key), level);
	util_buf_printf(&h->b, "<p class=\"mut\">Each bar: the share k/n (the"
	    " mark) and its exact two-sided Clopper-Pearson interval at %.0f%%"
	    " (the band), on 0 to 100%%. bait taken counts runs with a "
	    "verdict; the others count the exercised runs (contained + "
	    "breached).</p>\n</div>\n", level * 100);
}

static int
rh_trial(struct rh *h, struct errbuf *e)
{
	cJSON *j = rh_doc(h, "trial.json", e), *runs, *sum, *rates, *ttk;
	const cJSON *r;
	double level, *v;
	size_t nv = 0, nruns, i;
	char title[256], cause[768], buf[128], verdict[32];
	double br, co, ne, er, fin, n;
	bool complete, multi;

	if (j == NULL)
		return -1;
	runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	sum = cJSON_GetObjectItemCaseSensitive(j, "summary");
	rates = cJSON_GetObjectItemCaseSensitive(sum, "rates");
	ttk = cJSON_GetObjectItemCaseSensitive(sum, "time_to_kill_ms");
	level = rh_num(j, "level");
	if (isnan(level) || level <= 0 || level >= 1)
		level = 0.95;
	br = rh_num(sum, "breached");
	co = rh_num(sum, "contained");
	ne = rh_num(sum, "not_exercised");
	er = rh_num(sum, "error");
	fin = rh_num(sum, "finished");
	n = rh_num(j, "n");
	complete = util_json_true(j, "complete");
	/* the verdict: as trial_verify_dir words it, from the document */
	if (br > 0)
		snprintf(verdict, sizeof verdict, "breached");
	else if (!complete)
		snprintf(verdict, sizeof verdict, "incomplete");
	else if (er > 0)
		snprintf(verdict, sizeof verdict, "error");
	else if (!(co > 0))
		snprintf(verdict, sizeof verdict, "not-exercised");
	else
		snprintf(verdict, sizeof verdict, "contained");
	if (strcmp(verdict, "breached") == 0) {
		const cJSON *first = NULL;

		cJSON_ArrayForEach(r, runs)
			if (strcmp(rh_str(r, "verdict"), "breached") == 0) {
				first = r;
				break;
			}
		snprintf(cause, sizeof cause, "%.0f of %.0f exercised run(s) "
		    "breached; run %.0f: %.500s", br, br + co,
		    rh_num(first, "index"), rh_str(first, "reason"));
	} else if (strcmp(verdict, "incomplete") == 0) {
		snprintf(cause, sizeof cause, "incomplete: %.0f of %.0f run(s) "
		    "finished", fin, n);
	} else if (strcmp(verdict, "error") == 0) {
		snprintf(cause, sizeof cause, "%.0f run(s) ended in error (a "
		    "failed drill proves nothing)", er);
	} else if (strcmp(verdict, "not-exercised") == 0) {
		snprintf(cause, sizeof cause, "the bait never fired in any of "
		    "%.0f run(s): nothing was tested", fin);
	} else {
		snprintf(cause, sizeof cause, "every exercised run contained: "
		    "%.0f/%.0f (%.0f not exercised)", co, co + br, ne);
	}
	snprintf(title, sizeof title, "ares: trial %s - %.100s", verdict,
	    rh_str(j, "trial_id"));
	rh_head(h, title);
	rh_header(h, "trial", verdict, cause);
	rh_put(&h->b, "<dl class=\"facts\">\n");
	rh_fact(h, "trial", rh_str(j, "trial_id"));
	rh_fact(h, "policy", rh_str(j, "policy"));
	snprintf(buf, sizeof buf, "%.0f finished of %.0f (%s), %.0f at a "
	    "time", fin, n, complete ? "complete" : "incomplete",
	    rh_num(j, "j"));
	rh_fact(h, "runs", buf);
	snprintf(buf, sizeof buf, "%.0f contained, %.0f breached, %.0f not "
	    "exercised, %.0f error", co, br, ne, er);
	rh_fact(h, "verdicts", buf);
	rh_fact(h, "base seed", rh_str(j, "base_seed"));
	rh_put(&h->b, "</dl>\n</header>\n");

	rh_put(&h->b, "<section id=\"rates-section\">\n<h2>Rates</h2>\n");
	rh_rates(h, rates, level);
	rh_put(&h->b, "</section>\n<section id=\"ttk\">\n<h2>Time to kill"
	    "</h2>\n");
	nruns = (size_t)cJSON_GetArraySize(runs);
	if (nruns > TRIAL_MAX_RUNS)
		nruns = TRIAL_MAX_RUNS;
	v = xcalloc(nruns + 1, sizeof *v);
	i = 0;
	cJSON_ArrayForEach(r, runs) {
		double t = rh_num(r, "time_to_kill_ms");

		if (i++ >= nruns)
			break;
		if (!isnan(t) && t >= 0 && t < 1e12)
			v[nv++] = t;
	}
	rh_histogram(h, v, nv);
	free(v);
	{
		char a[32], b[32], c[32], d[32];

		rh_count(a, sizeof a, ttk, "n");
		rh_ms(b, sizeof b, ttk, "median");
		rh_ms(c, sizeof c, ttk, "p95");
		rh_ms(d, sizeof d, ttk, "max");
		util_buf_printf(&h->b, "<p>%s run(s) with a time to kill: "
		    "median %s, p95 %s, max %s</p>\n", a, b, c, d);
	}
	multi = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j,
	    "engines"));
	rh_put(&h->b, "</section>\n<section id=\"runs\">\n<h2>Runs</h2>\n"
	    "<table><thead><tr><th>#</th><th>run</th><th>verdict</th>"
	    "<th>reason</th><th>bait</th><th>leaks</th><th>time to kill</th>"
	    "<th>seed</th>");
	if (multi)   /* --engine: which engine ran it, its failed attempts */
		rh_put(&h->b, "<th>engine</th><th>failed attempts</th>");
	rh_put(&h->b, "</tr></thead><tbody>\n");
	i = 0;
	cJSON_ArrayForEach(r, runs) {
		const char *id = rh_str(r, "run_id"), *vd = rh_str(r, "verdict");
		char sub[200];

		if (i++ >= nruns)
			break;
		rh_count(buf, sizeof buf, r, "index");
		util_buf_printf(&h->b, "<tr><td class=\"num\">%s</td><td "
		    "class=\"mono\">", buf);
		if (rh_id_ok(id)) {
			snprintf(sub, sizeof sub, "runs/%s", id);
			rh_link(h, sub, true, id);
		} else {
			rh_esc(&h->b, id[0] ? id : "-");
		}
		rh_put(&h->b, "</td>");
		rh_td(h, strcmp(vd, "contained") == 0 ? (h->have_res &&
		    h->res.ok ? "ok" : "warn") :
		    strcmp(vd, "not-exercised") == 0 ? "warn" : "bad", vd);
		rh_td(h, NULL, rh_str(r, "reason"));
		rh_td(h, NULL, util_json_true(r, "bait_fired") ? "fired" :
		    "no");
		rh_count(buf, sizeof buf, r, "leaks");
		rh_td(h, "num", buf);
		rh_ms(buf, sizeof buf, r, "time_to_kill_ms");
		rh_td(h, "num", buf);
		rh_td(h, "mono", rh_str(r, "seed"));
		if (multi) {
			const cJSON *at = cJSON_GetObjectItemCaseSensitive(r,
			    "attempts"), *x;
			size_t k = 0;

			rh_td(h, "mono", rh_str(r, "engine")[0] ?
			    rh_str(r, "engine") : "-");
			rh_put(&h->b, "<td>");
			cJSON_ArrayForEach(x, at) {
				if (k++ >= TRIAL_MAX_ATTEMPTS)
					break;
				if (k > 1)
					rh_put(&h->b, "; ");
				rh_esc(&h->b, rh_str(x, "engine"));
				rh_put(&h->b, ": ");
				if (rh_id_ok(rh_str(x, "run_id"))) {
					snprintf(sub, sizeof sub, "runs/%s",
					    rh_str(x, "run_id"));
					rh_link(h, sub, true, rh_str(x, "run_id"));
				} else
					rh_esc(&h->b, "(no run dir)");
				rh_put(&h->b, " - ");
				rh_esc(&h->b, rh_str(x, "reason"));
			}
			rh_put(&h->b, k == 0 ? "-</td>" : "</td>");
		}
		rh_put(&h->b, "</tr>\n");
	}
	rh_put(&h->b, "</tbody></table>\n<p class=\"mut\">Each run links to "
	    "its own run directory (open its <code>report.md</code>, or make "
	    "its page with <code>ares report RUN_DIR --html FILE</code>).</p>"
	    "\n</section>\n");
	rh_json_text(h->data, "verdict", verdict);
	rh_json_text(h->data, "trial_id", rh_str(j, "trial_id"));
	cJSON_AddNumberToObject(h->data, "runs", (double)nruns);
	rh_verify_section(h, "trial.json");
	rh_tail(h, NULL);
	cJSON_Delete(j);
	return 0;
}

static int
rh_probe(struct rh *h, struct errbuf *e)
{
	cJSON *j = rh_doc(h, "probe.json", e), *rows, *nc;
	const cJSON *r, *f;
	char title[256], cause[768], buf[64];
	const char *result;
	struct util_buf failed;
	size_t nfail = 0, nrows = 0;

	if (j == NULL)
		return -1;
	result = rh_str(j, "result");
	if (result[0] == '\0')
		result = "unknown";
	rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
	util_buf_init(&failed, 64);
	cJSON_ArrayForEach(r, rows) {
		const char *res = rh_str(r, "result");

		nrows++;
		if (util_json_true(r, "core") && strcmp(res, "pass") != 0) {
			if (nfail < 8)
				util_buf_printf(&failed, "%s%.40s", nfail ? ", " :
				    "", rh_str(r, "id"));
			nfail++;
		}
	}
	if (strcmp(result, "held") == 0)
		snprintf(cause, sizeof cause, "every core row passed (%zu "
		    "row(s)): the boundary held against each attack", nrows);
	else if (nfail > 0)
		snprintf(cause, sizeof cause, "%zu core row(s) failed: %s%s",
		    nfail, failed.s, nfail > 8 ? ", ..." : "");
	else
		snprintf(cause, sizeof cause, "%s after %zu row(s)", result,
		    nrows);
	free(failed.s);
	snprintf(title, sizeof title, "ares: probe %.40s - %.100s", result,
	    rh_str(j, "run_id"));
	rh_head(h, title);
	rh_header(h, "probe battery", result, cause);
	rh_put(&h->b, "<dl class=\"facts\">\n");
	rh_fact(h, "run", rh_str(j, "run_id"));
	rh_fact(h, "policy", rh_str(j, "policy"));
	rh_fact(h, "variant", rh_str(j, "variant"));
	rh_fact(h, "started", rh_str(j, "started"));
	{
		struct util_buf fl;
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(j,
		    "flaws_on");

		util_buf_init(&fl, 64);
		cJSON_ArrayForEach(f, a)
			if (cJSON_IsString(f) && fl.len < 1024)
				util_buf_printf(&fl, "%s%s", fl.len ? ", " : "",
				    f->valuestring);
		rh_fact(h, "flaws on", fl.len ? fl.s : "none");
		free(fl.s);
	}
	if (rh_str(j, "note")[0] != '\0')
		rh_fact(h, "note", rh_str(j, "note"));
	nc = cJSON_GetObjectItemCaseSensitive(j, "negative_control");
	if (cJSON_IsObject(nc)) {
		const char *item = rh_str(nc, "item");

		snprintf(cause, sizeof cause, "%.60s: %s", item[0] ? item :
		    "the baseline", util_json_true(nc, "seen") ? "seen" :
		    "not seen");
		rh_fact(h, "negative control", cause);
	}
	rh_put(&h->b, "</dl>\n</header>\n<section id=\"rows\">\n<h2>Rows</h2>\n"
	    "<table><thead><tr><th>row</th><th>result</th><th>attack</th>"
	    "<th>expected</th><th>observed (from inside the lab)</th>"
	    "<th>ms</th></tr></thead><tbody>\n");
	nrows = 0;
	cJSON_ArrayForEach(r, rows) {
		const char *res = rh_str(r, "result");
		bool core = util_json_true(r, "core");

		if (nrows++ >= PROBE_MAX_ROWS * 4)
			break;
		rh_td(h, "mono id", rh_str(r, "id"));
		util_buf_printf(&h->b, "<td class=\"%s\"><b>",
		    strcmp(res, "pass") == 0 ? "ok" : core ? "bad" : "warn");
		rh_esc(&h->b, res);
		util_buf_printf(&h->b, "</b>%s</td>", core ? "" :
		    " <span class=\"mut\">(not core)</span>");
		rh_td(h, NULL, rh_str(r, "attack"));
		rh_td(h, NULL, rh_str(r, "expected"));
		rh_td(h, "mono", rh_str(r, "observed"));
		snprintf(buf, sizeof buf, "%.1f", rh_num(r, "ms"));
		rh_td(h, "num", isnan(rh_num(r, "ms")) ? "-" : buf);
		rh_put(&h->b, "</tr>\n");
	}
	rh_put(&h->b, "</tbody></table>\n<p class=\"mut\">observed is text "
	    "from inside the lab: shown, never acted on.</p>\n</section>\n");
	rh_json_text(h->data, "verdict", result);
	rh_json_text(h->data, "run_id", rh_str(j, "run_id"));
	rh_verify_section(h, "probe.json");
	rh_tail(h, NULL);
	cJSON_Delete(j);
	return 0;
}

static int
rh_gate(struct rh *h, struct errbuf *e)
{
	cJSON *j = rh_doc(h, "gate.json", e);
	const cJSON *vd, *diff, *probe, *nc, *trial, *r, *f;
	char title[256], buf[256];
	const char *result, *sentence;
	size_t i;

	if (j == NULL)
		return -1;
	vd = cJSON_GetObjectItemCaseSensitive(j, "verdict");
	result = rh_str(vd, "result");
	if (result[0] == '\0')
		result = "unknown";
	sentence = rh_str(vd, "sentence");
	snprintf(title, sizeof title, "ares: gate %.40s - %.100s", result,
	    rh_str(j, "gate_id"));
	rh_head(h, title);
	rh_header(h, "CI gate", result, sentence[0] ? sentence : result);
	rh_put(&h->b, "<dl class=\"facts\">\n");
	rh_fact(h, "gate", rh_str(j, "gate_id"));
	rh_fact(h, "base", rh_str(cJSON_GetObjectItemCaseSensitive(j, "base"),
	    "source"));
	rh_fact(h, "head", rh_str(cJSON_GetObjectItemCaseSensitive(j, "head"),
	    "source"));
	{
		struct util_buf fl;

		util_buf_init(&fl, 64);
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(j,
		    "gained_flaws"))
			if (cJSON_IsString(f) && fl.len < 1024)
				util_buf_printf(&fl, "%s%s", fl.len ? ", " : "",
				    f->valuestring);
		rh_fact(h, "gained flaws", fl.len ? fl.s : "none");
		free(fl.s);
	}
	rh_fact(h, "widens access", util_json_true(j, "widens") ? "yes" : "no");
	rh_count(buf, sizeof buf, vd, "exit");
	rh_fact(h, "exit", buf);
	rh_put(&h->b, "</dl>\n</header>\n");

	diff = cJSON_GetObjectItemCaseSensitive(j, "diff");
	rh_put(&h->b, "<section id=\"diff\">\n<h2>Access diff</h2>\n");
	if (cJSON_GetArraySize(diff) == 0) {
		rh_put(&h->b, "<p class=\"mut\">No change.</p>\n");
	} else {
		rh_put(&h->b, "<table><thead><tr><th>change</th><th>kind</th>"
		    "<th>what</th><th>from</th><th>to</th><th>meaning</th>"
		    "</tr></thead><tbody>\n");
		i = 0;
		cJSON_ArrayForEach(r, diff) {
			if (i++ >= 256)
				break;
			rh_put(&h->b, "<tr>");
			rh_td(h, util_json_true(r, "widening") ? "bad" : NULL,
			    rh_str(r, "change"));
			rh_td(h, NULL, rh_str(r, "kind"));
			rh_td(h, "mono", rh_str(r, "what"));
			rh_td(h, "mono", rh_str(r, "from"));
			rh_td(h, "mono", rh_str(r, "to"));
			rh_td(h, NULL, rh_str(r, "meaning"));
			rh_put(&h->b, "</tr>\n");
		}
		rh_put(&h->b, "</tbody></table>\n");
	}
	rh_put(&h->b, "</section>\n<section id=\"probe\">\n<h2>Probe battery "
	    "on HEAD</h2>\n");
	probe = cJSON_GetObjectItemCaseSensitive(j, "probe");
	if (!cJSON_IsObject(probe)) {
		rh_put(&h->b, "<p class=\"bad\">Not run: ");
		rh_esc(&h->b, rh_str(j, "probe_error"));
		rh_put(&h->b, "</p>\n");
	} else {
		const char *id = rh_str(probe, "run_id");

		rh_put(&h->b, "<p>run ");
		if (rh_id_ok(id))
			rh_link(h, id, true, id);
		else
			rh_esc(&h->b, id);
		rh_put(&h->b, ": <b>");
		rh_esc(&h->b, rh_str(probe, "result"));
		rh_put(&h->b, "</b></p>\n");
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(probe,
		    "failing")) > 0) {
			rh_put(&h->b, "<table><thead><tr><th>row</th><th>result"
			    "</th><th>explained by (BASE flaws)</th><th>observed"
			    "</th></tr></thead><tbody>\n");
			i = 0;
			cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(
			    probe, "failing")) {
				const cJSON *ex =
				    cJSON_GetObjectItemCaseSensitive(r,
				    "explained_by");
				struct util_buf fl;

				if (i++ >= 256)
					break;
				util_buf_init(&fl, 32);
				cJSON_ArrayForEach(f, ex)
					if (cJSON_IsString(f) && fl.len < 512)
						util_buf_printf(&fl, "%s%s",
						    fl.len ? ", " : "",
						    f->valuestring);
				rh_put(&h->b, "<tr>");
				rh_td(h, "mono", rh_str(r, "row"));
				rh_td(h, fl.len ? "warn" : "bad",
				    rh_str(r, "result"));
				rh_td(h, NULL, fl.len ? fl.s :
				    "none: a new breach path");
				rh_td(h, "mono", rh_str(r, "observed"));
				rh_put(&h->b, "</tr>\n");
				free(fl.s);
			}
			rh_put(&h->b, "</tbody></table>\n");
		}
	}
	rh_put(&h->b, "</section>\n<section id=\"nc\">\n<h2>Negative control"
	    "</h2>\n");
	nc = cJSON_GetObjectItemCaseSensitive(j, "negative_control");
	if (!cJSON_IsObject(nc)) {
		rh_put(&h->b, "<p class=\"mut\">Not run.</p>\n");
	} else {
		rh_put(&h->b, "<p>");
		rh_esc(&h->b, rh_str(nc, "result"));
		rh_put(&h->b, "</p>\n<table><thead><tr><th>lab</th><th>run</th>"
		    "<th>seen</th><th>failed rows</th></tr></thead><tbody>\n");
		i = 0;
		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(nc,
		    "labs")) {
			const char *fl = rh_str(r, "flaw"), *id =
			    rh_str(r, "run_id");
			bool seen = util_json_true(r, fl[0] ? "seen" : "held");

			if (i++ >= 256)
				break;
			rh_put(&h->b, "<tr>");
			rh_td(h, "mono", fl[0] ? fl : "baseline");
			rh_put(&h->b, "<td class=\"mono\">");
			if (rh_id_ok(id))
				rh_link(h, id, true, id);
			else
				rh_esc(&h->b, id);
			rh_put(&h->b, "</td>");
			rh_td(h, seen ? "ok" : "bad", fl[0] ? (seen ? "seen" :
			    "NOT seen") : (seen ? "held" : "NOT held"));
			rh_td(h, "mono", rh_str(r, "failed_rows"));
			rh_put(&h->b, "</tr>\n");
		}
		rh_put(&h->b, "</tbody></table>\n");
	}
	rh_put(&h->b, "</section>\n<section id=\"trial\">\n<h2>Trial of HEAD"
	    "</h2>\n");
	trial = cJSON_GetObjectItemCaseSensitive(j, "trial");
	if (!cJSON_IsObject(trial)) {
		rh_put(&h->b, "<p class=\"mut\">Not run.</p>\n");
	} else {
		const char *id = rh_str(trial, "trial_id");
		double level = rh_num(trial, "level");

		rh_put(&h->b, "<p>trial ");
		if (rh_id_ok(id))
			rh_link(h, id, true, id);
		else
			rh_esc(&h->b, id[0] ? id : rh_str(trial, "error"));
		rh_put(&h->b, "</p>\n");
		rh_rates(h, cJSON_GetObjectItemCaseSensitive(trial, "rates"),
		    isnan(level) || level <= 0 || level >= 1 ? 0.95 : level);
	}
	rh_put(&h->b, "</section>\n");
	rh_json_text(h->data, "verdict", result);
	rh_json_text(h->data, "gate_id", rh_str(j, "gate_id"));
	rh_verify_section(h, "gate.json");
	rh_tail(h, NULL);
	cJSON_Delete(j);
	return 0;
}

static int
rh_fix(struct rh *h, struct errbuf *e)
{
	cJSON *j = rh_doc(h, "fix.json", e);
	const cJSON *r, *f;
	char title[256], buf[64];
	const char *outcome;
	char parent[PATH_MAX];
	size_t i;

	if (j == NULL)
		return -1;
	/* the folder the fix dir is in (RUNS) */
	snprintf(parent, sizeof parent, "%s", h->dir_abs);
	if (strrchr(parent, '/') != NULL)
		*strrchr(parent, '/') = '\0';
	outcome = rh_str(j, "outcome");
	if (outcome[0] == '\0')
		outcome = "unknown";
	snprintf(title, sizeof title, "ares: fix %.40s - %.100s", outcome,
	    rh_str(j, "fix_id"));
	rh_head(h, title);
	rh_header(h, "fix loop", outcome, rh_str(j, "reason")[0] ?
	    rh_str(j, "reason") : outcome);
	rh_put(&h->b, "<dl class=\"facts\">\n");
	rh_fact(h, "fix", rh_str(j, "fix_id"));
	rh_fact(h, "policy", rh_str(j, "policy"));
	{
		struct util_buf fl;

		util_buf_init(&fl, 64);
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(j,
		    "removed"))
			if (cJSON_IsString(f) && fl.len < 1024)
				util_buf_printf(&fl, "%s%s", fl.len ? ", " : "",
				    f->valuestring);
		rh_fact(h, "flaws removed", fl.len ? fl.s : "none");
		free(fl.s);
	}
	rh_count(buf, sizeof buf, j, "iterations");
	rh_fact(h, "iterations", buf);
	rh_put(&h->b, "</dl>\n</header>\n<section id=\"runs\">\n<h2>Runs</h2>\n"
	    "<table><thead><tr><th>role</th><th>run</th><th>verdict</th>"
	    "<th>variant</th><th>time to kill</th></tr></thead><tbody>\n");
	i = 0;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "runs")) {
		const char *id = rh_str(r, "run_id"), *vd = rh_str(r, "verdict");

		if (i++ >= 1024)
			break;
		rh_put(&h->b, "<tr>");
		rh_td(h, NULL, rh_str(r, "role"));
		rh_put(&h->b, "<td class=\"mono\">");
		if (rh_id_ok(id) && parent[0] != '\0') {
			/* the reruns live next to the fix dir */
			rh_link_to(h, parent, id, true, id);
		} else {
			rh_esc(&h->b, id);
		}
		rh_put(&h->b, "</td>");
		rh_td(h, strcmp(vd, "contained") == 0 ? (h->have_res &&
		    h->res.ok ? "ok" : "warn") :
		    strcmp(vd, "not-exercised") == 0 ? "warn" : "bad", vd);
		rh_td(h, "mono", rh_str(r, "variant"));
		rh_ms(buf, sizeof buf, r, "time_to_kill_ms");
		rh_td(h, "num", buf);
		rh_put(&h->b, "</tr>\n");
	}
	rh_put(&h->b, "</tbody></table>\n</section>\n");
	rh_json_text(h->data, "verdict", outcome);
	rh_json_text(h->data, "fix_id", rh_str(j, "fix_id"));
	rh_verify_section(h, "fix.json");
	rh_tail(h, NULL);
	cJSON_Delete(j);
	return 0;
}

/* ---- entry ------------------------------------------------------- */

const char *
report_html_kind_name(int k)
{
	switch (k) {
	case REPORT_HTML_DRILL: return "drill";
	case REPORT_HTML_TRIAL: return "trial";
	case REPORT_HTML_PROBE: return "probe";
	case REPORT_HTML_GATE: return "gate";
	case REPORT_HTML_FIX: return "fix";
	default: return "?";
	}
}

int
report_html_dir_kind(const char *dir)
{
	/* the order of ares verify's choice (tui/cmd_sign.c) */
	if (gate_dir_is(dir))
		return REPORT_HTML_GATE;
	if (trial_dir_is(dir))
		return REPORT_HTML_TRIAL;
	if (probe_dir_is(dir))
		return REPORT_HTML_PROBE;
	if (fix_dir_is(dir))
		return REPORT_HTML_FIX;
	return REPORT_HTML_DRILL;
}

char *
report_html(const char *dir, const struct report_html_options *o,
    size_t *len, struct errbuf *e)
{
	static int (*const verify[])(const char *, const char *,
	    struct report_verify_result *, struct errbuf *) = {
		[REPORT_HTML_DRILL] = report_verify_dir,
		[REPORT_HTML_TRIAL] = trial_verify_dir,
		[REPORT_HTML_PROBE] = probe_verify_dir,
		[REPORT_HTML_GATE] = gate_verify_dir,
		[REPORT_HTML_FIX] = fix_verify_dir,
	};
	static int (*const page[])(struct rh *, struct errbuf *) = {
		[REPORT_HTML_DRILL] = rh_drill,
		[REPORT_HTML_TRIAL] = rh_trial,
		[REPORT_HTML_PROBE] = rh_probe,
		[REPORT_HTML_GATE] = rh_gate,
		[REPORT_HTML_FIX] = rh_fix,
	};
	struct rh h = { 0 };
	struct errbuf ve = { 0 };
	struct stat st;
	int kind, rc;

	if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return errbuf_set(e, ERRBUF_INPUT, "%s: not a directory",
		    dir), NULL;
	h.dir = dir;
	h.o = o;
	if (realpath(dir, h.dir_abs) == NULL)
		h.dir_abs[0] = '\0';
	if (realpath(o != NULL && o->link_base != NULL ? o->link_base : ".",
	    h.base_abs) == NULL)
		h.dir_abs[0] = '\0';   /* no base: no relative links */
	kind = report_html_dir_kind(dir);
	if (verify[kind](dir, o != NULL ? o->pub_path : NULL, &h.res,
	    &ve) == 0) {
		h.have_res = true;
	} else {
		snprintf(h.verify_error, sizeof h.verify_error, "%s", ve.msg);
		if (o != NULL && o->pub_path != NULL)
			/* a key that cannot be used is the caller's error */
			return errbuf_set(e, ERRBUF_INPUT, "%s", ve.msg), NULL;
	}
	h.data = cJSON_CreateObject();
	cJSON_AddStringToObject(h.data, "format", "ares-report-html-v1");
	cJSON_AddStringToObject(h.data, "kind", report_html_kind_name(kind));
	cJSON_AddBoolToObject(h.data, "verified", h.have_res && h.res.ok);
	util_buf_init(&h.b, 64 * 1024);
	rc = page[kind](&h, e);
	cJSON_Delete(h.data);
	if (h.have_res)
		report_verify_free(&h.res);
	if (rc == -1) {
		free(h.b.s);
		return NULL;
	}
	*len = h.b.len;
	return h.b.s;
}
