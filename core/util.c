/*
 * util.c - allocation, errors, clocks, files, hex and untrusted text.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

extern char **environ;

static void (*util_fatal_hook)(void);

int
errbuf_set(struct errbuf *e, enum errbuf_code code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int
errbuf_prefix(struct errbuf *e, const char *fmt, ...)
{
	char prefix[512], old[sizeof e->msg];
	va_list ap;

	if (e == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof old);
	{
		size_t pl = strlen(prefix), room = sizeof e->msg - 1;
		size_t ol = strnlen(old, sizeof old - 1);

		if (pl > room)
			pl = room;
		memcpy(e->msg, prefix, pl);
		if (pl + 2 <= room) {
			memcpy(e->msg + pl, ": ", 2);
			pl += 2;
		}
		if (ol > room - pl)
			ol = room - pl;
		memcpy(e->msg + pl, old, ol);
		e->msg[pl + ol] = '\0';
	}
	if (e->code == ERRBUF_NONE)
		e->code = ERRBUF_INTERNAL;
	return -1;
}

int
errbuf_exit_code(const struct errbuf *e)
{
	switch (e->code) {
	case ERRBUF_INPUT:
		return EXIT_USAGE;
	case ERRBUF_ENGINE:
		return EXIT_ENGINE;
	case ERRBUF_NONE:
	case ERRBUF_INTERNAL:
	default:
		return EXIT_INTERNAL;
	}
}

void
util_set_fatal_hook(void (*hook)(void))
{
	util_fatal_hook = hook;
}

_Noreturn void
util_fatal(const char *fmt, ...)
{
	void (*hook)(void) = util_fatal_hook;
	va_list ap;

	util_fatal_hook = NULL;     /* never re-enter */
	if (hook != NULL)
		hook();
	fputs("ares: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_INTERNAL);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n == 0 ? 1 : n);

	if (p == NULL)
		util_fatal("out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);

	if (p == NULL)
		util_fatal("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n == 0 ? 1 : n);

	if (q == NULL)
		util_fatal("out of memory (%zu bytes)", n);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		util_fatal("out of memory (asprintf)");
	return p;
}

static uint64_t
util_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
util_mono_ns(void)
{
	return util_clock_ns(CLOCK_MONOTONIC);
}

uint64_t
util_wall_ns(void)
{
	return util_clock_ns(CLOCK_REALTIME);
}

void
util_wall_iso(uint64_t wall_ns, char out[40])
{
	time_t secs = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;

	char date[24];

	gmtime_r(&secs, &tm);
	if (strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		strcpy(date, "0000-00-00T00:00:00");
	snprintf(out, 40, "%.19s.%09uZ", date,
	    (unsigned)(wall_ns % 1000000000ull));
}

/* util_read_file with extra open(2) flags (O_NOFOLLOW). */
static char *
util_read_file_flags(const char *path, int flags, size_t max, size_t *len,
    struct errbuf *e)
{
	struct stat st;
	size_t used = 0, cap;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	if (fd == -1) {
		errbuf_set(e, errno == ENOENT ? ERRBUF_INPUT : ERRBUF_INTERNAL,
		    "%s: %s%s", path, strerror(errno), errno == ELOOP ?
		    " (a symlink: refused)" : "");
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		errbuf_set(e, ERRBUF_INPUT, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > max) {
		errbuf_set(e, ERRBUF_INPUT, "%s: too large (%lld bytes, "
		    "limit %zu)", path, (long long)st.st_size, max);
		close(fd);
		return NULL;
	}
	/* Room for the NUL plus one byte to notice a file that grows. */
	cap = (size_t)st.st_size + 2;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t n;

		if (used + 1 >= cap) {
			if (used > max) {
				errbuf_set(e, ERRBUF_INPUT, "%s: grew beyond "
				    "limit %zu while reading", path, max);
				free(buf);
				close(fd);
				return NULL;
			}
			cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + used, cap - used - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			errbuf_set(e, ERRBUF_INTERNAL, "%s: read: %s", path,
			    strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	if (used > max) {
		errbuf_set(e, ERRBUF_INPUT, "%s: too large (limit %zu)", path,
		    max);
		free(buf);
		return NULL;
	}
	buf[used] = '\0';
	if (len != NULL)
		*len = used;
	return buf;
}

char *
util_read_file(const char *path, size_t max, size_t *len, struct errbuf *e)
{
	return util_read_file_flags(path, 0, max, len, e);
}

char *
util_read_input(const char *path, const char *what, size_t max,
    size_t *len, struct errbuf *e)
{
	struct stat st;
	char *buf;

	if (stat(path, &st) == -1) {
		errbuf_set(e, ERRBUF_INPUT, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(e, ERRBUF_INPUT, "%s: not a regular file", path);
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		errbuf_set(e, ERRBUF_INPUT, "%s: %s is %lld bytes; the limit is "
		    "%zu", path, what, (long long)st.st_size, max);
		return NULL;
	}
	buf = util_read_file(path, max, len, e);
	if (buf == NULL && e != NULL)
		e->code = ERRBUF_INPUT;
	return buf;
}

char *
util_read_regular(const char *path, size_t max, size_t *len,
    struct errbuf *e)
{
	return util_read_file_flags(path, O_NOFOLLOW, max, len, e);
}

/*
 * Write len bytes to a fresh temporary file beside path (mode, synced):
 * its name (caller frees; unlinks it if not used), or NULL + e.
 */
static char *
util_write_tmp(const char *path, const void *buf, size_t len, mode_t mode,
    struct errbuf *e)
{
	unsigned char rnd[8];
	char hex[17], *tmp;
	const char *p = buf;
	int fd;

	/* a fresh name, created here or not at all: a link or file planted
	 * at a guessable temp name is never followed or reused */
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		util_fatal("getrandom: %s", strerror(errno));
	util_hex(rnd, sizeof rnd, hex);
	tmp = xasprintf("%s.tmp.%s", path, hex);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (fd == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return NULL;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			errbuf_set(e, ERRBUF_INTERNAL, "%s: write: %s", tmp,
			    strerror(errno));
			close(fd);
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, mode) == -1 || fsync(fd) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "%s: %s", tmp, strerror(errno));
		close(fd);
		goto fail;
	}
	if (close(fd) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	return tmp;
fail:
	unlink(tmp);
	free(tmp);
	return NULL;
}

/* util_write_file (replace) or util_write_new: the temporary file, then
 * renamed over path or linked to it. */
static int
util_write_as(const char *path, const void *buf, size_t len, mode_t mode,
    bool replace, struct errbuf *e)
{
	char *tmp = util_write_tmp(path, buf, len, mode, e);
	int rc = 0;

	if (tmp == NULL)
		return -1;
	if (replace && rename(tmp, path) == -1)
		rc = errbuf_set(e, ERRBUF_INTERNAL, "rename %s: %s", path,
		    strerror(errno));
	else if (!replace && link(tmp, path) == -1)
		rc = errbuf_set(e, errno == EEXIST ? ERRBUF_INPUT :
		    ERRBUF_INTERNAL, "%s: %s", path, strerror(errno));
	if (rc == -1 || !replace)
		unlink(tmp);
	free(tmp);
	return rc;
}

int
util_write_file(const char *path, const void *buf, size_t len, mode_t mode,
    struct errbuf *e)
{
	return util_write_as(path, buf, len, mode, true, e);
}

int
util_write_new(const char *path, const void *buf, size_t len, mode_t mode,
    struct errbuf *e)
{
	return util_write_as(path, buf, len, mode, false, e);
}

int
util_mkdir_p(const char *path, mode_t mode, struct errbuf *e)
{
	char *copy = xstrdup(path);
	char *p;

	for (p = copy + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		{
			char saved = *p;

			*p = '\0';
			if (mkdir(copy, mode) == -1 && errno != EEXIST) {
				errbuf_set(e, ERRBUF_INTERNAL, "mkdir %s: %s",
				    copy, strerror(errno));
				free(copy);
				return -1;
			}
			*p = saved;
			if (saved == '\0')
				break;
		}
	}
	free(copy);
	return 0;
}

static int
util_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		return rmdir(path) == -1 ? -1 : 0;
	return unlink(path) == -1 ? -1 : 0;
}

int
util_rm_rf(const char *path, struct errbuf *e)
{
	if (path == NULL || path[0] == '\0' || strcmp(path, "/") == 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "refusing to remove '%s'",
		    path == NULL ? "(null)" : path);
	if (nftw(path, util_rm_one, 16, FTW_DEPTH | FTW_PHYS) == -1 &&
	    errno != ENOENT)
		return errbuf_set(e, ERRBUF_INTERNAL, "remove %s: %s", path,
		    strerror(errno));
	return 0;
}

void
util_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int
util_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
util_unhex(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	if (hex == NULL || strlen(hex) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		int hi = util_hexval(hex[2 * i]);
		int lo = util_hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/*
 * Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0 if
 * it is malformed (overlong, surrogate, out of range or cut short).  *cp
 * gets the code point.
 */
static size_t
util_utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/*
 * Skip a string-type control sequence body (OSC, DCS, SOS, PM, APC) that
 * starts at s[i]: it ends at BEL, ST (ESC \), or 8-bit ST (U+009C).
 * Returns the index just past the terminator (or n when unterminated).
 */
static size_t
util_skip_string_seq(const unsigned char *s, size_t n, size_t i)
{
	while (i < n) {
		if (s[i] == 0x07)
			return i + 1;
		if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')
			return i + 2;
		if (s[i] == 0x1b)
			return i;       /* ESC other than ST ends it and starts
			                   the next sequence */
		if (s[i] == 0xc2 && i + 1 < n && s[i + 1] == 0x9c)
			return i + 2;
		i++;
	}
	return n;
}

/* Skip CSI parameters/intermediates up to and including the final byte. */
static size_t
util_skip_csi(const unsigned char *s, size_t n, size_t i)
{
	/* Terminals execute C0 controls met inside a CSI and carry on with
	 * the sequence, so skip them too (ESC aborts it). */
	while (i < n && ((s[i] >= 0x20 && s[i] <= 0x3f) ||
	    (s[i] < 0x20 && s[i] != 0x1b)))
		i++;
	while (i < n && ((s[i] >= 0x20 && s[i] <= 0x2f) ||
	    (s[i] < 0x20 && s[i] != 0x1b)))
		i++;
	if (i < n && s[i] >= 0x40 && s[i] <= 0x7e)
		i++;
	return i;
}

/* Code points that reorder or hide text rather than show it: the bidi
 * embeddings, overrides, isolates and marks (U+061C, U+200E/F,
 * U+202A..E, U+2066..9), zero-width characters (U+200B..D, U+2060..4,
 * U+FEFF), the line and paragraph separators (U+2028/9), interlinear
 * annotations (U+FFF9..B) and the tag characters (U+E0000..E007F, which
 * carry invisible ASCII). */
static bool
util_invisible(uint32_t cp)
{
	return cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2064) ||
	    (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff ||
	    (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f);
}

size_t
util_sanitize(char *dst, size_t dstlen, const char *src, size_t srclen,
    bool keep_nl)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0;

	if (dstlen == 0)
		return 0;
	while (i < srclen) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t len;

		if (c == 0x1b) {            /* ESC: drop the whole sequence */
			i++;
			if (i >= srclen)
				break;
			switch (s[i]) {
			case '[':
				i = util_skip_csi(s, srclen, i + 1);
				break;
			case ']': case 'P': case 'X': case '^': case '_':
				i = util_skip_string_seq(s, srclen, i + 1);
				break;
			default:
				/* two-byte escape (plus intermediates) */
				while (i < srclen && s[i] >= 0x20 &&
				    s[i] <= 0x2f)
					i++;
				if (i < srclen)
					i++;
				break;
			}
			continue;
		}
		if (c < 0x80) {
			char out = (char)c;

			if (c == '\n' || c == '\t') {
				if (c == '\n' && keep_nl)
					out = '\n';
				else
					out = ' ';
			} else if (c < 0x20 || c == 0x7f) {
				i++;
				continue;
			}
			if (o + 1 >= dstlen)
				break;
			dst[o++] = out;
			i++;
			continue;
		}
		len = util_utf8_len(s + i, srclen - i, &cp);
		if (len == 0) {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = '?';
			i++;
			continue;
		}
		if (cp >= 0x80 && cp <= 0x9f) {   /* C1 controls */
			i += len;
			if (cp == 0x9b)
				i = util_skip_csi(s, srclen, i);
			else if (cp == 0x90 || cp == 0x9d || cp == 0x98 ||
			    cp == 0x9e || cp == 0x9f)
				i = util_skip_string_seq(s, srclen, i);
			continue;
		}
		if (util_invisible(cp)) {        /* shown, never obeyed */
			if (o + 1 >= dstlen)
				break;
			dst[o++] = '?';
			i += len;
			continue;
		}
		if (o + len >= dstlen)
			break;
		memcpy(dst + o, s + i, len);
		o += len;
		i += len;
	}
	dst[o] = '\0';
	return o;
}

void
util_new_id(char out[UTIL_ID_MAX])
{
	uint8_t rnd[4];
	char hex[9], iso[40];

	randombytes_buf(rnd, sizeof rnd);
	util_hex(rnd, sizeof rnd, hex);
	util_wall_iso(util_wall_ns(), iso);
	snprintf(out, UTIL_ID_MAX, "%.4s%.2s%.2s-%.2s%.2s%.2s-%s", iso,
	    iso + 5, iso + 8, iso + 11, iso + 14, iso + 17, hex);
}

/* The child's environment: extra in front of base (ours when NULL).
 * Caller frees the array (not the strings). */
static char **
util_proc_env(const char *const *base, const char *const *extra)
{
	const char *const *b = base != NULL ? base :
	    (const char *const *)environ;
	size_t nb = 0, nx = 0, i;
	char **envp;

	while (b[nb] != NULL)
		nb++;
	while (extra != NULL && extra[nx] != NULL)
		nx++;
	envp = xcalloc(nb + nx + 1, sizeof *envp);
	for (i = 0; i < nx; i++)
		envp[i] = (char *)extra[i];
	for (i = 0; i < nb; i++)
		envp[nx + i] = (char *)b[i];
	return envp;
}

/*
 * Start p's child with its stdin from in_fd (or /dev/null when -1), stdout
 * to out_fd and stderr to err_fd: a clean signal mask, SIGPIPE at its
 * default, no other descriptor of ours, its own process group when asked.
 * Returns 0 with *pid, or the error posix_spawn gave.
 */
static int
util_proc_spawn(const struct util_proc *p, int in_fd, int out_fd, int err_fd,
    pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	char **envp = util_proc_env(p->env, p->extra_env);
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	int err;

	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	if (p->own_group) {
		flags |= POSIX_SPAWN_SETPGROUP;
		posix_spawnattr_setpgroup(&at, 0);
	}
	posix_spawnattr_setflags(&at, flags);
	posix_spawn_file_actions_init(&fa);
	if (in_fd == -1)
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		    0);
	else
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	err = (p->path_lookup ? posix_spawnp : posix_spawn)(pid, p->argv[0],
	    &fa, &at, (char *const *)p->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(envp);
	return err;
}

/* Append what fd has to buf (at most max bytes kept; the rest is read and
 * dropped, *over set).  Returns false at the end of the output. */
static bool
util_proc_read(int fd, char *buf, size_t *len, size_t max, bool *over)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof tmp);

	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (*len + (size_t)n > max) {
		*over = true;
		n = (ssize_t)(max - *len);
	}
	if (n > 0)
		memcpy(buf + *len, tmp, (size_t)n);
	*len += (size_t)n;
	return true;
}

/* Read the child's stdout (fds[0]) and stderr (fds[1], or -1) until both
 * end or the deadline (0: none) passes (p->timed_out). */
static void
util_proc_collect(struct util_proc *p, const int fds[2], uint64_t deadline)
{
	bool oopen = true, eopen = fds[1] != -1;

	while (oopen || eopen) {
		struct pollfd pfd[2] = {
			{ .fd = oopen ? fds[0] : -1, .events = POLLIN },
			{ .fd = eopen ? fds[1] : -1, .events = POLLIN },
		};
		int wait_ms = -1, pr;

		if (deadline != 0) {
			uint64_t now = util_mono_ns();

			if (now >= deadline) {
				p->timed_out = true;
				break;
			}
			wait_ms = (int)((deadline - now) / 1000000ull) + 1;
		}
		pr = poll(pfd, 2, wait_ms);
		if (pr == -1 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		if (oopen && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			oopen = util_proc_read(fds[0], p->out, &p->out_len,
			    p->out != NULL ? p->out_max : 0, &p->out_over);
		if (eopen && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			eopen = util_proc_read(fds[1], p->err, &p->err_len,
			    p->err != NULL ? p->err_max : 0, &p->err_over);
	}
}

/* Reap the child (bounded by the deadline when there is one: then it is
 * killed, p->timed_out).  p->status gets its status, -1 when the wait
 * failed (p->wait_errno). */
static void
util_proc_reap(struct util_proc *p, pid_t pid, uint64_t deadline)
{
	pid_t target = p->own_group ? -pid : pid;

	for (;;) {
		pid_t w = waitpid(pid, &p->status, deadline != 0 ? WNOHANG : 0);

		if (w == pid)
			return;
		if (w == -1 && errno != EINTR) {
			p->wait_errno = errno;
			p->status = -1;
			return;
		}
		if (deadline == 0)
			continue;
		if (util_mono_ns() >= deadline) {
			p->timed_out = true;
			(void)kill(target, SIGKILL);
			while (waitpid(pid, &p->status, 0) == -1)
				if (errno != EINTR) {
					p->wait_errno = errno;
					p->status = -1;
					return;
				}
			return;
		}
		usleep(200);
	}
}

/* The pipe ends util_proc_run holds; -1 when closed. */
struct util_proc_fds {
	int in[2], out[2], err[2];
};

static void
util_proc_close(struct util_proc_fds *f)
{
	int *all[] = { &f->in[0], &f->in[1], &f->out[0], &f->out[1],
	    &f->err[0], &f->err[1] };
	size_t i;

	for (i = 0; i < sizeof all / sizeof all[0]; i++)
		if (*all[i] != -1) {
			close(*all[i]);
			*all[i] = -1;
		}
}

/* Fail p at step with errno err (the pipes closed).  -1 + e. */
static int
util_proc_fail(struct util_proc *p, struct util_proc_fds *f,
    const char *step, int err, struct errbuf *e)
{
	util_proc_close(f);
	p->failed = step;
	p->fail_errno = err;
	return errbuf_set(e, ERRBUF_INTERNAL, "%s: %s: %s", p->argv[0], step,
	    strerror(err));
}

int
util_proc_run(struct util_proc *p, struct errbuf *e)
{
	struct util_proc_fds f = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	uint64_t deadline = p->timeout_ms > 0 ? util_mono_ns() +
	    (uint64_t)p->timeout_ms * 1000000ull : 0;
	pid_t pid;
	int err, rfds[2];

	p->out_len = p->err_len = 0;
	p->out_over = p->err_over = p->timed_out = false;
	p->status = p->wait_errno = p->exec_errno = p->fail_errno = 0;
	p->failed = NULL;
	if (p->out != NULL)
		p->out[0] = '\0';
	if (p->err != NULL)
		p->err[0] = '\0';
	if (p->input != NULL) {
		/* It fits the pipe's buffer: written before the child runs,
		 * so one that never reads cannot block us (nor SIGPIPE). */
		if (p->input_len > UTIL_PROC_INPUT_MAX)
			return util_proc_fail(p, &f, "pipe", E2BIG, e);
		if (pipe2(f.in, O_CLOEXEC) == -1)
			return util_proc_fail(p, &f, "pipe", errno, e);
		if (write(f.in[1], p->input, p->input_len) !=
		    (ssize_t)p->input_len)
			return util_proc_fail(p, &f, "write stdin", errno, e);
		close(f.in[1]);
		f.in[1] = -1;
	}
	if (pipe2(f.out, O_CLOEXEC) == -1 ||
	    (p->err != NULL && pipe2(f.err, O_CLOEXEC) == -1))
		return util_proc_fail(p, &f, "pipe", errno, e);
	err = util_proc_spawn(p, f.in[0], f.out[1], p->err != NULL ?
	    f.err[1] : f.out[1], &pid);
	if (err == EAGAIN || err == ENOMEM)
		return util_proc_fail(p, &f, "fork", err, e);
	if (err != 0) {
		/* argv[0] could not be executed: as a shell says, 127 */
		util_proc_close(&f);
		p->exec_errno = err;
		p->status = W_EXITCODE(127, 0);
		return 0;
	}
	close(f.out[1]);
	f.out[1] = -1;
	if (f.err[1] != -1) {
		close(f.err[1]);
		f.err[1] = -1;
	}
	if (f.in[0] != -1) {
		close(f.in[0]);
		f.in[0] = -1;
	}
	rfds[0] = f.out[0];
	rfds[1] = f.err[0];
	util_proc_collect(p, rfds, deadline);
	util_proc_close(&f);
	if (p->timed_out || (p->own_group && p->out_over))
		(void)kill(p->own_group ? -pid : pid, SIGKILL);
	/* Output closed: it is exiting, still bounded by the deadline (a
	 * daemonised grandchild may hold the pipes: killed above). */
	util_proc_reap(p, pid, deadline);
	if (p->own_group)
		(void)kill(-pid, SIGKILL);   /* what is left of its group */
	if (p->out != NULL)
		p->out[p->out_len] = '\0';
	if (p->err != NULL)
		p->err[p->err_len] = '\0';
	return 0;
}

int
util_run(const char *const *argv, const char *const *extra_env,
    int timeout_ms, char *out, size_t outmax, struct errbuf *e)
{
	struct util_proc p = {
		.argv = argv,
		.path_lookup = true,
		.extra_env = extra_env,
		.timeout_ms = timeout_ms,
		.out = outmax > 0 ? out : NULL,
		.out_max = outmax > 0 ? outmax - 1 : 0,
	};

	if (util_proc_run(&p, e) == -1) {
		if (strcmp(p.failed, "pipe") == 0)
			return -1;   /* "ARGV0: pipe: ..." */
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: %s", argv[0],
		    strerror(p.fail_errno));
	}
	if (p.exec_errno != 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: %s", argv[0],
		    strerror(p.exec_errno));
	while (p.out_len > 0 && (out[p.out_len - 1] == '\n' ||
	    out[p.out_len - 1] == '\r'))
		out[--p.out_len] = '\0';
	if (p.status == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: wait: %s", argv[0],
		    strerror(p.wait_errno));
	if (p.timed_out)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: no answer within %d "
		    "ms (killed)", argv[0], timeout_ms);
	if (WIFEXITED(p.status))
		return WEXITSTATUS(p.status);
	return WIFSIGNALED(p.status) ? 128 + WTERMSIG(p.status) : 128;
}

void
util_test_hook(const char *phase, const volatile sig_atomic_t *cancel)
{
	const char *dir = getenv("ARES_TEST_HOOK");
	char *at, *go;
	uint64_t end;
	int fd;

	if (dir == NULL || dir[0] != '/' || phase == NULL ||
	    strchr(phase, '/') != NULL)
		return;
	at = xasprintf("%s/%s", dir, phase);
	go = xasprintf("%s/%s.go", dir, phase);
	fd = open(at, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd != -1)
		close(fd);
	end = util_mono_ns() + (uint64_t)UTIL_TEST_HOOK_S * 1000000000ull;
	while (access(go, F_OK) == -1 && util_mono_ns() < end &&
	    (cancel == NULL || *cancel == 0)) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	free(at);
	free(go);
}

bool
util_next_line(const char *text, size_t len, size_t *off, const char **line,
    size_t *llen)
{
	const char *nl;

	if (*off >= len)
		return false;
	*line = text + *off;
	nl = memchr(*line, '\n', len - *off);
	*llen = nl != NULL ? (size_t)(nl - *line) : len - *off;
	*off += *llen + 1;
	return true;
}

const char *
util_env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

void
util_json_add_ms(cJSON *o, const char *key, double ms)
{
	if (ms >= 0)
		cJSON_AddNumberToObject(o, key, ms);
	else
		cJSON_AddNullToObject(o, key);
}

void
util_json_add_generated(cJSON *o, const char *generated_at)
{
	cJSON_AddStringToObject(o, "generated_at", generated_at);
#ifdef PACKAGE_VERSION
	cJSON_AddStringToObject(o, "generator", "ares " PACKAGE_VERSION);
#else
	cJSON_AddStringToObject(o, "generator", "ares");
#endif
}

const char *
util_json_str(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : dflt;
}

double
util_json_num(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int
util_json_int(const cJSON *o, const char *key, int dflt)
{
	double d = util_json_num(o, key, dflt);

	return d >= INT_MIN && d <= INT_MAX ? (int)d : dflt;
}

bool
util_json_true(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static int
util_cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *
util_json_dup_name(const cJSON *o, bool deep)
{
	const cJSON *c;
	const char *dup = NULL;

	if (cJSON_IsObject(o)) {
		const char **names;
		size_t n = 0, i;

		for (c = o->child; c != NULL; c = c->next) {
			if (c->string == NULL)
				return "";
			n++;
		}
		if (n >= 2) {
			names = xcalloc(n, sizeof *names);
			i = 0;
			for (c = o->child; c != NULL; c = c->next)
				names[i++] = c->string;
			qsort(names, n, sizeof *names, util_cmp_names);
			for (i = 1; i < n && dup == NULL; i++)
				if (strcmp(names[i - 1], names[i]) == 0)
					dup = names[i];
			free(names);
		}
	}
	if (!deep || (!cJSON_IsObject(o) && !cJSON_IsArray(o)))
		return dup;
	for (c = o->child; c != NULL && dup == NULL; c = c->next)
		dup = util_json_dup_name(c, true);
	return dup;
}

void
util_buf_init(struct util_buf *b, size_t cap)
{
	b->cap = cap > 0 ? cap : 64;
	b->s = xmalloc(b->cap);
	b->s[0] = '\0';
	b->len = 0;
}

void
util_buf_printf(struct util_buf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (k >= 0 && (size_t)k >= b->cap - b->len) {
		b->cap = b->cap * 2 + (size_t)k;
		b->s = xrealloc(b->s, b->cap);
		va_start(ap, fmt);
		k = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	if (k > 0)
		b->len += (size_t)k;
}
