/*
 * screen_fix_dir.c - a recorded fix dir (RUNS/fix-<id>/fix.json) on its
 * own screen, from home or `ares replay FIX_DIR`: the verification badge
 * (fix_verify_dir, what `ares verify` runs), the outcome, the runs the
 * loop made with their roles and verdicts, the patch and pr.md (or
 * attempt.md).  Enter replays the run under the cursor, q goes back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* The recorded fix screen's state (one fix at a time). */
struct console_fix_dir_screen {
	bool loaded;
	struct recorded_fix f;     /* recorded_fix_load: unverified text */
	char pub[4096];
	bool verified;             /* fix_verify_dir: every check ok */
	char badge[600];
	size_t cur;
	bool was_from_home, back;
	char msg[256];
};

static struct console_fix_dir_screen console_fix_dir_st;

/* Let go of the loaded fix. */
static void
console_fix_dir_free(void)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;

	recorded_fix_free(&s->f);
	s->loaded = false;
	s->back = false;
}

int
console_fix_dir_load(const char *dir, const char *pub_path, struct errbuf *e)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;
	struct report_verify_result res = { 0 };
	struct errbuf ve = { 0 };

	console_fix_dir_free();
	if (recorded_fix_load(dir, &s->f, e) == -1) {
		recorded_fix_free(&s->f);
		return -1;
	}
	s->loaded = true;
	console_copy(s->pub, sizeof s->pub, pub_path != NULL ? pub_path : "");
	if (fix_verify_dir(dir, pub_path, &res, &ve) == -1) {
		s->verified = false;
		snprintf(s->badge, sizeof s->badge, "NOT VERIFIED: %.500s",
		    ve.msg);
	} else if (res.ok) {
		s->verified = true;
		snprintf(s->badge, sizeof s->badge, "verified: fix.json's "
		    "signature, its chain and every run it lists (%zu checks, "
		    "ares verify)", res.nchecks);
	} else {
		s->verified = false;
		snprintf(s->badge, sizeof s->badge, "NOT VERIFIED: %.500s",
		    res.first_bad >= 0 ? res.checks[res.first_bad].text :
		    "a check failed");
	}
	report_verify_free(&res);
	s->cur = 0;
	s->msg[0] = '\0';
	return 0;
}

void
console_fix_dir_enter(struct console_ui *ui)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;

	s->was_from_home = ui->from_home;
	s->back = false;
	console_note_dir(CONSOLE_NOTE_FIX, s->f.dir);
	console_screen_open(ui, &console_screen_fix_dir);
}

bool
console_fix_dir_back(struct console_ui *ui)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;

	if (!s->loaded || !s->back)
		return false;
	s->back = false;
	ui->from_home = s->was_from_home;
	console_note_dir(CONSOLE_NOTE_FIX, s->f.dir);
	console_screen_open(ui, &console_screen_fix_dir);
	return true;
}

/* q: home when opened there, else quit. */
static void
console_fix_dir_quit(struct console_ui *ui)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;

	if (s->was_from_home) {
		console_fix_dir_free();
		console_home_enter(ui);
		return;
	}
	ui->quit = true;
}

/* Enter: replay the run under the cursor (q there comes back here). */
static void
console_fix_dir_open(struct console_ui *ui)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;
	const struct recorded_fix_run *r;
	struct errbuf e = { 0 };
	struct replay *rp;

	if (s->f.nruns == 0)
		return;
	r = &s->f.runs[s->cur];
	if (r->dir[0] == '\0') {
		snprintf(s->msg, sizeof s->msg, "the %s run %.63s is not next "
		    "to the fix dir", r->role, r->run_id);
		return;
	}
	rp = replay_load(r->dir, s->pub[0] ? s->pub : NULL, &e);
	if (rp == NULL) {
		console_copy(s->msg, sizeof s->msg, e.msg);
		return;
	}
	s->msg[0] = '\0';
	s->back = true;
	ui->from_home = true;      /* the replay's q calls home: back here */
	console_replay_enter(ui, rp);
	console_note_dir(CONSOLE_NOTE_RUN, r->dir);
}

/* Move over the runs, Enter, q. */
static bool
console_fix_dir_key(struct console_ui *ui, int ch)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;
	size_t n = s->f.nruns;

	switch (ch) {
	case KEY_UP:
	case 'k':
		if (s->cur > 0)
			s->cur--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (s->cur + 1 < n)
			s->cur++;
		return true;
	case KEY_HOME:
	case 'g':
		s->cur = 0;
		return true;
	case KEY_END:
	case 'G':
		s->cur = n ? n - 1 : 0;
		return true;
	case '\r':
	case '\n':
	case KEY_ENTER:
		console_fix_dir_open(ui);
		return true;
	case 'q':
	case 'Q':
		console_fix_dir_quit(ui);
		return true;
	default:
		return false;
	}
}

/* Nothing runs behind this screen. */
static bool
console_fix_dir_tick(struct console_ui *ui, uint64_t now)
{
	(void)ui;
	(void)now;
	return false;
}

/* The status line: the outcome as fix.json has it. */
static void
console_fix_dir_status(struct console_ui *ui, char *out, size_t n,
    int *pair)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;
	bool ok = strcmp(s->f.outcome, "verified") == 0;

	(void)ui;
	snprintf(out, n, "outcome %s%s", s->f.outcome[0] ? s->f.outcome :
	    "(none)", s->verified ? "" : " (not verified)");
	*pair = ok && s->verified ? CP_GREEN : CP_RED;
}

/* What role a run played, for people. */
static const char *
console_fix_role(const char *role)
{
	return strcmp(role, "original") == 0 ? "original (breached)" :
	    strcmp(role, "rerun") == 0 ? "rerun (training)" :
	    strcmp(role, "held-out") == 0 ? "held-out (shipped)" :
	    strcmp(role, "held-out-gen") == 0 ? "held-out-gen (generated)" :
	    role;
}

/* Up to rows lines of text (sanitized when loaded) from row y, x 3; the
 * next row. */
static int
console_fix_dir_text(struct console_ui *ui, int y, const char *text,
    int rows, bool diff)
{
	const char *p = text;

	while (p != NULL && *p != '\0' && rows-- > 0 && y < LINES - 1) {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		char line[512];

		if (len == 0 && !diff) {      /* pr.md: no blank lines */
			p = nl != NULL ? nl + 1 : NULL;
			rows++;
			continue;
		}
		if (len >= sizeof line)
			len = sizeof line - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		console_attr(ui, !diff ? 0 : line[0] == '+' ? CP_GREEN :
		    line[0] == '-' ? CP_RED : line[0] == '@' ? CP_CYAN : 0,
		    diff ? A_NORMAL : A_DIM);
		console_put(ui, y++, 3, line, COLS - 4);
		p = nl != NULL ? nl + 1 : NULL;
	}
	attrset(A_NORMAL);
	return y;
}

/* The changed lines of a diff only ("+"/"-", not the file names): the
 * patch in few rows.  xmalloc'd. */
static char *
console_fix_dir_changes(const char *diff)
{
	char *out = xmalloc(strlen(diff) + 1);
	size_t o = 0;
	const char *p = diff;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);

		if ((p[0] == '+' || p[0] == '-') && strncmp(p, "+++", 3) != 0 &&
		    strncmp(p, "---", 3) != 0) {
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
	}
	out[o] = '\0';
	return out;
}

/* Title, badge, outcome, the runs (a cursor), the patch, pr.md. */
static void
console_fix_dir_draw(struct console_ui *ui)
{
	struct console_fix_dir_screen *s = &console_fix_dir_st;
	const struct recorded_fix *f = &s->f;
	const char *keys = ui->screen->keys_hint;
	int kw = (int)strlen(keys), y = 1, pair = 0, rest, prows;
	/* a verified fix only when ares verify accepts the fix dir too */
	bool ok = strcmp(f->outcome, "verified") == 0 && s->verified;
	char st[300];

	console_attr(ui, CP_TITLE, A_BOLD | (ui->color ? 0 : A_REVERSE));
	mvhline(0, 0, ' ', COLS);
	console_putf(ui, 0, 1, COLS - 2, "ares fix %s  policy %s", f->fix_id,
	    f->policy);
	console_attr(ui, s->verified ? CP_GREEN : CP_RED, A_BOLD |
	    (ui->color || s->verified ? 0 : A_REVERSE));
	console_put(ui, y++, 1, s->badge, COLS - 2);
	attrset(A_NORMAL);
	y++;
	console_attr(ui, ok ? CP_GREEN : CP_RED, A_BOLD);
	console_putf(ui, y++, 1, COLS - 2, "outcome  %s%s: %s",
	    ok ? "verified fix" : f->outcome, s->verified ? "" :
	    " (NOT VERIFIED)", f->reason);
	attrset(A_NORMAL);
	if (f->nremoved > 0)
		console_putf(ui, y++, 1, COLS - 2, "patched  turned %s off%s",
		    f->removed[0], f->nremoved > 1 ? " (and more)" : "");
	y++;
	console_attr(ui, 0, A_BOLD);
	console_put(ui, y++, 1, "runs (Enter: replay)", COLS - 2);
	attrset(A_NORMAL);
	for (size_t i = 0; i < f->nruns && y < LINES - 1; i++, y++) {
		const struct recorded_fix_run *r = &f->runs[i];
		bool cur = i == s->cur;
		bool good = strcmp(r->verdict, "contained") == 0;
		bool bad = strcmp(r->verdict, "breached") == 0;

		console_attr(ui, cur ? CP_CYAN : 0, cur ? A_REVERSE | A_BOLD :
		    A_NORMAL);
		mvhline(y, 1, ' ', COLS - 2);
		console_putf(ui, y, 2, 27, "%s %s", cur ? ">" : " ",
		    console_fix_role(r->role));
		if (!cur)
			console_attr(ui, good ? CP_GREEN : bad ? CP_RED :
			    CP_YELLOW, A_BOLD);
		console_put(ui, y, 29, r->verdict, 13);
		if (!cur)
			console_attr(ui, 0, A_NORMAL);
		if (r->ttk_ms >= 0)
			console_putf(ui, y, 42, 12, "%9.3f ms", r->ttk_ms);
		console_put(ui, y, 55, r->run_id, COLS - 56);
		attrset(A_NORMAL);
	}
	/* what is left: the patch, then pr.md's first lines */
	rest = LINES - 1 - y - 1;
	prows = rest / 2;
	if (f->patch != NULL && rest > 2) {
		char *ch = console_fix_dir_changes(f->patch);

		y++;
		console_attr(ui, 0, A_BOLD);
		console_put(ui, y++, 1, "the patch (policy.patch)", COLS - 2);
		attrset(A_NORMAL);
		y = console_fix_dir_text(ui, y, ch[0] ? ch : f->patch,
		    rest - prows - 2, true);
		free(ch);
	}
	if (f->pr != NULL && LINES - 1 - y > 2) {
		console_attr(ui, 0, A_BOLD);
		console_putf(ui, y++, 1, COLS - 2, "%s", f->pr_name);
		attrset(A_NORMAL);
		(void)console_fix_dir_text(ui, y, f->pr, LINES - 1 - y, false);
	}
	move(LINES - 1, 0);
	clrtoeol();
	if (s->msg[0] != '\0') {
		console_attr(ui, CP_RED, A_BOLD);
		console_put(ui, LINES - 1, 1, s->msg, COLS - kw - 4);
	} else {
		console_fix_dir_status(ui, st, sizeof st, &pair);
		console_attr(ui, pair, A_BOLD);
		console_put(ui, LINES - 1, 1, st, COLS - kw - 4);
	}
	console_attr(ui, 0, A_REVERSE);
	console_put(ui, LINES - 1, COLS - kw - 1, keys, kw);
	attrset(A_NORMAL);
}

static const struct console_key console_fix_dir_keys[] = {
	{ "up / k", "previous run" },
	{ "down / j", "next run" },
	{ "g / G", "first / last run" },
	{ "enter", "replay the run (q there comes back here)" },
	{ "q", "back (or quit)" },
	{ "?", "this help" },
};

const struct console_screen console_screen_fix_dir = {
	.name = "fix-dir",
	.keys_hint = "enter replay  j/k  q back  ? help",
	.keys = console_fix_dir_keys,
	.nkeys = sizeof console_fix_dir_keys / sizeof console_fix_dir_keys[0],
	.state = &console_fix_dir_st,
	.key = console_fix_dir_key,
	.tick = console_fix_dir_tick,
	.draw = console_fix_dir_draw,
	.quit = console_fix_dir_quit,
	.fd = console_no_fd,
	.status = console_fix_dir_status,
};
