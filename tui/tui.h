/*
 * tui.h - the one header of tui/: the ncurses console (and the CLI in
 * main.c).  Only tui/ includes curses; nothing here needs it.
 */
#ifndef DRILL_TUI_H
#define DRILL_TUI_H

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* console.c - the live drill screen                                   */
/* ------------------------------------------------------------------ */

struct console_options {
	const char *policy_path;  /* NULL: the drill's default policy */
	uint64_t seed;
	bool has_seed;            /* else the policy's seed */
	bool no_color;            /* --no-color (NO_COLOR in the env too) */
	bool ascii;               /* --ascii: ASCII boxes and Poyo, no UTF-8 */
};

/*
 * Run one drill (drill_run() on a worker thread) and show it live: title
 * bar, lab map with Poyo, lever panel, event list, status line.  Needs a
 * terminal of at least 80x24 (smaller ones get a "terminal too small"
 * message; the drill keeps running).  'q' (or SIGINT/SIGTERM) quits; a
 * running drill is cancelled and the console waits for its teardown.
 *
 * Returns the process exit code: drill_exit_code() of the result once the
 * drill reached a verdict, errbuf_exit_code() when it could not run (or
 * EXIT_USAGE when the terminal cannot be initialised), 0 when the user quit
 * before the drill finished.
 *
 * The title bar is filled before the final result arrives from a PHASE
 * beat "run <id>: policy <name>, seed <n>, model <name>, ..." (drill.c's
 * first beat) or from key=value words "run=<id>", "model=<name>",
 * "policy=<name>", "seed=<n>" in any PHASE beat.
 */
int console_run(const struct console_options *o);

/* ------------------------------------------------------------------ */
/* cmd_sign.c - ares keygen, ares verify                               */
/* ------------------------------------------------------------------ */

/* ares keygen [--key-dir DIR] [--force]: write a signing key pair
 * (docs/cli-keygen.md).  argv[0] is "keygen".  Returns the exit code. */
int cmd_keygen(int argc, char **argv);
/* ares verify RUN_DIR [--pub FILE] [--json FILE]: check a run directory's
 * signed report and evidence (docs/cli-verify.md).  Exit 0 all valid, 1
 * tampered or unverifiable, 2 usage / unreadable input. */
int cmd_verify(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* cmd_lab.c - ares lab up|status|down                                 */
/* ------------------------------------------------------------------ */

/* ares lab up --policy FILE [--run DIR] [--seed N] [--model-url URL
 * --model-key-env VAR] | status [--run DIR] | down --run DIR
 * (docs/cli-lab.md).  argv[0] is "lab".  Returns the exit code: 0 ok,
 * 2 usage / bad input, 3 engine unreachable, 5 failure. */
int cmd_lab(int argc, char **argv);

#endif /* DRILL_TUI_H */
