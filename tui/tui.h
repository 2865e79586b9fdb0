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
	bool home;                /* start on the home screen (no --policy) */
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
/*
 * With o->home the console opens on the home screen instead: policies
 * (./policies, the source tree's, the installed ones) and recorded runs
 * ($ARES_RUNS or ./runs, and the bundled replays/); Enter runs a drill on
 * a policy (then q comes back home) or replays a run.  Without a reachable
 * Docker Engine it says so and offers the replays.
 */

/* ares replay RUN_DIR: the replay screen (same drawing as the live one),
 * beat by beat; keys in its '?' overlay.  pub_path: key to verify with
 * (NULL: the run's own ares.pub).  Needs no Docker.  Returns 0, or
 * EXIT_USAGE when the run cannot be read or the terminal not set up. */
int console_replay(const struct console_options *o, const char *run_dir,
    const char *pub_path);
/* ares replay RUN_DIR --export-cast FILE: the replay rendered by the same
 * screen code through ncurses (newterm on a temporary file, TERM
 * xterm-256color, 80x24) into an asciicast v2 file, one frame per beat.
 * Returns 0 or an exit code (message on stderr). */
int console_export_cast(const struct console_options *o, const char *run_dir,
    const char *pub_path, const char *cast_path);

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

/* ------------------------------------------------------------------ */
/* cmd_trial.c - ares trial, ares stats                                */
/* ------------------------------------------------------------------ */

/* ares trial --policy FILE -n N [-j J] [--seed S] [--level L] [--json FILE]
 * [--runs DIR] [--key-dir DIR] | --resume DIR (docs/cli-trial.md).
 * argv[0] is "trial".  Exit 0 all exercised runs contained (at least one),
 * 1 any breach, 2 usage, 3 engine unreachable, 4 none exercised, 5 error
 * runs or an incomplete trial. */
int cmd_trial(int argc, char **argv);
/* ares stats ci K N [--level L]: print "lower upper" of the exact
 * Clopper-Pearson interval (docs/cli-stats.md).  Exit 0, or 2 on bad
 * input. */
int cmd_stats(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* cmd_probe.c - ares probe                                            */
/* ------------------------------------------------------------------ */

/* ares probe [--policy FILE | --run DIR] [--flaw ID] [--json FILE]
 * [--junit FILE] [--key-dir DIR] [--runs DIR] [--keep-lab]
 * [--negative-control [--parallel 1|2]] (docs/cli-probe.md).  argv[0] is
 * "probe".  Returns the exit code: 0 held (negative control: every flaw
 * seen), 1 a core row failed (the gate is blind), 2 usage, 3 engine
 * unreachable, 5 lab or internal failure. */
int cmd_probe(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* cmd_fix.c - ares fix                                                */
/* ------------------------------------------------------------------ */

/* ares fix RUN_DIR | --policy FILE [--seed N] [...] (docs/cli-fix.md).
 * argv[0] is "fix".  Returns the exit code: 0 verified fix proposed,
 * 1 not a fix / unproven / unattributed, 2 usage or a tampered run dir,
 * 3 engine unreachable, 5 internal. */
int cmd_fix(int argc, char **argv);

#endif /* DRILL_TUI_H */
