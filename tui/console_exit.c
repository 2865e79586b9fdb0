/*
 * console_exit.c - the console's two edges: before curses, whether the
 * terminal can be driven at all (TERM=dumb, an unknown TERM: a message
 * and EXIT_USAGE instead of a blank screen); after it, the exit line
 * (the folder the console last showed and the exact `ares replay` /
 * `ares verify` lines to go back to it, shell-quoted).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "core.h"
#include "tui.h"

/* What the console showed last (console_note_dir). */
static int console_last_what = CONSOLE_NOTE_NONE;
static char console_last_dir[4096];

void
console_note_dir(int what, const char *dir)
{
	char *abs = dir != NULL ? realpath(dir, NULL) : NULL;

	console_last_what = what;
	console_copy(console_last_dir, sizeof console_last_dir,
	    abs != NULL ? abs : dir != NULL ? dir : "");
	free(abs);
}

/* s shell-quoted into out: '...' with each ' as '\'' when every byte is
 * printable (or UTF-8), else $'...' with \xNN for every other byte, so
 * that neither the terminal nor a shell pasted into can be driven by the
 * name.  NULL when out is too small. */
static char *
console_shell_quote(const char *s, char *out, size_t n)
{
	bool plain = true;
	char chk[4096];
	size_t o = 0, len = strlen(s);

	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			plain = false;
	if (plain && len < sizeof chk) {
		/* invalid UTF-8 or C1 codes: sanitizing changes the text */
		util_sanitize(chk, sizeof chk, s, len, false);
		plain = strcmp(chk, s) == 0;
	}
#define PUT(str) do { \
		size_t l_ = strlen(str); \
		if (o + l_ >= n) \
			return NULL; \
		memcpy(out + o, str, l_); \
		o += l_; \
	} while (0)
	if (plain) {
		PUT("'");
		for (size_t i = 0; i < len; i++) {
			char c[2] = { s[i], '\0' };

			if (s[i] == '\'')
				PUT("'\\''");
			else
				PUT(c);
		}
		PUT("'");
	} else {
		PUT("$'");
		for (size_t i = 0; i < len; i++) {
			unsigned char u = (unsigned char)s[i];
			char c[8];

			if (u < 0x20 || u >= 0x7f || u == '\'' || u == '\\')
				snprintf(c, sizeof c, "\\x%02x", u);
			else
				snprintf(c, sizeof c, "%c", u);
			PUT(c);
		}
		PUT("'");
	}
#undef PUT
	out[o] = '\0';
	return out;
}

char *
console_exit_text(const struct console_ui *ui)
{
	const char *dir = NULL, *what = "run";
	char q[8192], *lines;
	bool replay = true;

	switch (console_last_what) {
	case CONSOLE_NOTE_RUN:
	case CONSOLE_NOTE_TRIAL:
	case CONSOLE_NOTE_FIX:
		dir = console_last_dir;
		what = console_last_what == CONSOLE_NOTE_TRIAL ? "trial" :
		    console_last_what == CONSOLE_NOTE_FIX ? "fix" : "run";
		break;
	case CONSOLE_NOTE_DRILL:
		dir = console_drill_run_dir();
		break;
	case CONSOLE_NOTE_JOB:
		if (ui->job == NULL || !ui->job->joined || ui->job->rc != 0)
			break;
		if (ui->job->kind == CONSOLE_JOB_TRIAL) {
			dir = ui->job->t.dir;
			what = "trial";
		} else if (ui->job->kind == CONSOLE_JOB_FIX) {
			dir = ui->job->fr.fix_dir;
			what = "fix";
		} else {
			dir = ui->job->pr.run_dir;
			what = "probe";
			replay = false;
		}
		break;
	default:
		break;
	}
	if (dir == NULL || dir[0] == '\0' ||
	    console_shell_quote(dir, q, sizeof q) == NULL)
		return NULL;
	if (replay)
		lines = xasprintf("%s folder %s\n  replay   ares replay %s\n"
		    "  verify   ares verify %s\n", what, q, q, q);
	else
		lines = xasprintf("%s folder %s\n  verify   ares verify %s\n",
		    what, q, q);
	return lines;
}

/* term.h last: its macros take short names (lines, columns, ...) */
#include <term.h>

/* The message for a terminal ncurses cannot drive (why: one clause). */
static void
console_term_refuse(const char *term, const char *why)
{
	fprintf(stderr,
	    "ares: the console needs a terminal with cursor addressing;\n"
	    "  TERM=%s: %s.\n"
	    "  Use a terminal type that has it (e.g. TERM=xterm-256color),\n"
	    "  or the headless commands:\n"
	    "    ares drill --policy FILE --json -       one drill as JSON\n"
	    "    ares replay RUN_DIR --export-cast FILE  a run as an "
	    "asciicast\n"
	    "    ares verify RUN_DIR                     check a run\n"
	    "    ares report RUN_DIR --html FILE         a page for any "
	    "browser\n"
	    "  (RUN_DIR/report.md reads without the console too)\n",
	    term, why);
}

int
console_term_usable(void)
{
	const char *term = getenv("TERM");
	char safe[64];
	int err = 0;
	const char *cup;
	bool ok;

	if (term == NULL || term[0] == '\0') {
		console_term_refuse("unset", "no terminal type");
		return -1;
	}
	/* TERM comes from the environment: print it inert */
	util_sanitize(safe, sizeof safe, term, strlen(term), false);
	if (setupterm((char *)term, STDOUT_FILENO, &err) != OK) {
		/* setupterm: 1 hard-copy, 0 not found, -1 no database */
		console_term_refuse(safe, err == 1 ? "a hard-copy terminal" :
		    err == 0 ? "not in this system's terminfo" :
		    "no terminfo database found");
		return -1;
	}
	cup = tigetstr("cup");
	ok = cup != NULL && cup != (const char *)-1;
	del_curterm(cur_term);
	cur_term = NULL;
	if (!ok) {
		console_term_refuse(safe, "it cannot move the cursor");
		return -1;
	}
	return 0;
}
