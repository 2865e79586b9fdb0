/*
 * util.h - the part of ares' core that every binary links: allocation,
 * errors (struct errbuf), exit codes, clocks, files, hex, the getters of
 * untrusted JSON and the sanitiser of untrusted text (core/util.c).
 *
 * core.h includes it; the lab binary (leakbox/) and sprites/ include only
 * this (and evidence.h), not the rest of core.
 */
#ifndef DRILL_UTIL_H
#define DRILL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include <cJSON.h>

/* ------------------------------------------------------------------ */
/* util.c - allocation, errors, clocks, files, hex, untrusted text     */
/* ------------------------------------------------------------------ */

/* Documented process exit codes (ares --help, README). */
#define EXIT_CONTAINED      0   /* also: success of non-drill commands */
#define EXIT_BREACHED       1   /* breached / tampered / gate failed */
#define EXIT_USAGE          2   /* bad input or usage */
#define EXIT_ENGINE         3   /* Docker Engine unreachable */
#define EXIT_NOT_EXERCISED  4   /* drill ran but the bait never fired */
#define EXIT_INTERNAL       5   /* lab or internal failure (fail closed) */

/* Error categories carried by struct errbuf; map to exit codes. */
enum errbuf_code {
	ERRBUF_NONE = 0,
	ERRBUF_INTERNAL,   /* -> EXIT_INTERNAL */
	ERRBUF_INPUT,      /* -> EXIT_USAGE */
	ERRBUF_ENGINE,     /* -> EXIT_ENGINE (engine unreachable / refused) */
};

struct errbuf {
	enum errbuf_code code;
	char msg[1024];
};

/* Set e (if non-NULL) to code + formatted message.  Returns -1. */
int errbuf_set(struct errbuf *e, enum errbuf_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix an existing message: "<prefix>: <old msg>".  Returns -1. */
int errbuf_prefix(struct errbuf *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Map an errbuf code to the documented exit code. */
int errbuf_exit_code(const struct errbuf *e);

/* Fatal on failure (after running the fatal hook, e.g. endwin()). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The hook runs once before any fatal exit (the console restores the tty). */
void util_set_fatal_hook(void (*hook)(void));
_Noreturn void util_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

uint64_t util_mono_ns(void);   /* CLOCK_MONOTONIC, ns */
uint64_t util_wall_ns(void);   /* CLOCK_REALTIME, ns since the epoch */
/* RFC 3339 UTC with nanoseconds of a wall time: out must hold 40 bytes. */
void util_wall_iso(uint64_t wall_ns, char out[40]);

/* A fresh id for a run, trial or fix: UTC time plus 32 random bits,
 * e.g. "20261129-231500-1a2b3c4d" (libsodium must be initialised). */
#define UTIL_ID_MAX 64
void util_new_id(char out[UTIL_ID_MAX]);

/* Read a whole file of at most max bytes (NUL-terminated; *len excludes NUL).
 * Returns NULL + e on error or when the file is larger than max. Caller frees. */
char *util_read_file(const char *path, size_t max, size_t *len,
    struct errbuf *e);
/* util_read_file that never follows a symlink in the last component
 * (evidence a run wrote: a link planted there is refused). */
/* An input file (a policy, a Compose file) whole: path must be a regular
 * file of at most max bytes ("PATH: WHAT is N bytes; the limit is MAX"),
 * then util_read_file (which checks again on the open file).  NULL + e,
 * always ERRBUF_INPUT.  Caller frees. */
char *util_read_input(const char *path, const char *what, size_t max,
    size_t *len, struct errbuf *e);
char *util_read_regular(const char *path, size_t max, size_t *len,
    struct errbuf *e);
/* Write len bytes to path atomically (tmp + rename), mode.  -1 + e. */
int util_write_file(const char *path, const void *buf, size_t len,
    mode_t mode, struct errbuf *e);
/* util_write_file that never replaces a file: path is taken with link(2)
 * (-1 + e, ERRBUF_INPUT, when it exists). */
int util_write_new(const char *path, const void *buf, size_t len,
    mode_t mode, struct errbuf *e);
/* mkdir -p.  -1 + e. */
int util_mkdir_p(const char *path, mode_t mode, struct errbuf *e);
/* rm -rf of a directory tree we created (refuses "/" and ""). -1 + e. */
int util_rm_rf(const char *path, struct errbuf *e);

/*
 * Run argv[0] (looked up in PATH; never a shell) with stdin from /dev/null
 * and extra_env (NAME=VALUE, NULL-terminated, may be NULL) in front of our
 * environment; stdout and stderr go to out (at most outmax-1 bytes kept,
 * NUL-terminated, trailing newlines cut; the rest is read and dropped).  A
 * child still running after timeout_ms (0: no limit) is killed.  Returns
 * its exit status (128 + signal when a signal ended it), or -1 + e when it
 * could not be started or was killed for the time limit.
 */
int util_run(const char *const *argv, const char *const *extra_env,
    int timeout_ms, char *out, size_t outmax, struct errbuf *e);

/* The environment variable name when it is set and not empty, else dflt
 * (the lab's components read their settings so). */
const char *util_env_or(const char *name, const char *dflt);

/*
 * One child process run to its end: util_run's, an external lever's.
 * In: argv (argv[0] a path, or with path_lookup a name looked up in PATH;
 * never a shell); env, its whole environment (NULL: ours), with extra_env
 * (NAME=VALUE, may be NULL) in front; input, what its stdin reads (at most
 * UTIL_PROC_INPUT_MAX bytes; NULL: /dev/null); timeout_ms (0: none);
 * own_group: it leads its own process group, killed as a whole when it
 * times out or overflows out, and once it exited (what it left behind);
 * out/err: stdout and stderr, at most out_max/err_max bytes kept (buffers
 * of max + 1: NUL-terminated; the rest is read and dropped), err NULL:
 * stderr goes to out.  It starts with a clean signal mask, SIGPIPE at its
 * default and no descriptor of ours but 0-2.
 * Out: the lengths kept, *_over (more came), timed_out (killed for the
 * time limit), status (waitpid's; -1 when the wait failed: wait_errno),
 * exec_errno (argv[0] could not be executed: status says exit 127).
 */
#define UTIL_PROC_INPUT_MAX 60000   /* fits a pipe's buffer */
struct util_proc {
	const char *const *argv;
	bool path_lookup;
	const char *const *env;
	const char *const *extra_env;
	const char *input;
	size_t input_len;
	int timeout_ms;
	bool own_group;
	char *out;
	size_t out_max;
	char *err;
	size_t err_max;
	/* filled by util_proc_run */
	size_t out_len, err_len;
	bool out_over, err_over, timed_out;
	int status, wait_errno, exec_errno;
	const char *failed;   /* the step that failed: "pipe", ... */
	int fail_errno;
};
/* Run p (above).  0 when it ran, whatever its status; -1 + e ("ARGV0: STEP:
 * error") when it could not start: p->failed is the step ("pipe", "write
 * stdin", "fork"), p->fail_errno its errno. */
int util_proc_run(struct util_proc *p, struct errbuf *e);

/* A growing text buffer: s is always NUL-terminated; the caller frees s. */
struct util_buf {
	char *s;
	size_t len, cap;
};
/* Start b with room for cap bytes (fatal on allocation failure). */
void util_buf_init(struct util_buf *b, size_t cap);
/* Append printf-style text to b, growing it as needed. */
void util_buf_printf(struct util_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Add key: ms to o, or key: null when ms < 0 (a time not measured). */
void util_json_add_ms(cJSON *o, const char *key, double ms);
/* Add "generated_at" (an ISO time) and "generator" ("ares VERSION") to a
 * document ares signs (report.json, trial.json). */
void util_json_add_generated(cJSON *o, const char *generated_at);
/* Getters of untrusted JSON (every reader of evidence, reports and API
 * answers uses these; o may be NULL).  A string member, or dflt. */
const char *util_json_str(const cJSON *o, const char *key, const char *dflt);
/* A number member, or dflt. */
double util_json_num(const cJSON *o, const char *key, double dflt);
/* A number member as an int, or dflt when absent or outside int's range
 * (a cast of such a double is undefined). */
int util_json_int(const cJSON *o, const char *key, int dflt);
/* Whether member key is JSON true. */
bool util_json_true(const cJSON *o, const char *key);
/* A member name that occurs twice in object o (the first of the sorted
 * names; "" for a member without a name), NULL when all are unique or o is
 * no object.  With deep, every object inside o (in objects and arrays, at
 * any depth) too.  Points into o. */
const char *util_json_dup_name(const cJSON *o, bool deep);
/* The next line of text[*off..len) into (*line, *llen), without its LF
 * (a last line without one counts); false at the end.  *off advances. */
bool util_next_line(const char *text, size_t len, size_t *off,
    const char **line, size_t *llen);
/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void util_hex(const uint8_t *in, size_t n, char *out);
/* Parse exactly 2n hex chars into out.  Returns 0, or -1 on bad input. */
int util_unhex(const char *hex, uint8_t *out, size_t n);
/* The value of one hex digit (either case), or -1 for any other char. */
int util_hexval(char c);

/*
 * Make untrusted text (agent output, lab output) inert for a terminal:
 * drops C0 controls except '\n' and '\t' (which become ' ' unless keep_nl),
 * DEL, ESC and whole CSI/OSC/DCS/APC/PM/SOS sequences (7-bit and 8-bit C1),
 * C1 code points, and invalid UTF-8 (replaced by '?'); characters that
 * reorder or hide text (bidi controls, zero-width and tag characters,
 * U+2028/9) become '?' too, so a line reads as its bytes.  Writes at most
 * dstlen-1 bytes plus NUL, never splitting a UTF-8 sequence.  Returns the
 * number of bytes written.
 */
size_t util_sanitize(char *dst, size_t dstlen, const char *src, size_t srclen,
    bool keep_nl);

/*
 * Test-only hook (docs/cli-drill.md): when $ARES_TEST_HOOK names a
 * directory, create <dir>/<phase> and wait (at most UTIL_TEST_HOOK_S, or
 * until *cancel, may be NULL, is set) for <dir>/<phase>.go.  Does nothing
 * without the variable.  Never call it on the kill path.
 */
#define UTIL_TEST_HOOK_S 60
void util_test_hook(const char *phase, const volatile sig_atomic_t *cancel);

#endif /* DRILL_UTIL_H */
