/*
 * pane_text.c - what the drill layout's event pane (pane.c) computes
 * without a terminal: the scroll math, the search, the OSC 52 copy
 * sequence, the pager's text (one evidence line, bounded, pretty-printed
 * and made inert) and its wrapping.  No curses calls: tests/unit/test_pane
 * runs these directly.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "core.h"
#include "tui.h"

/* ---- scroll math ----------------------------------------------------- */

/* Keep p's selection and first row inside a list of n beats numbered
 * base .. base+n-1, shown rows at a time (tui.h). */
void
console_pane_fit(struct console_pane *p, size_t base, size_t n, int rows)
{
	size_t last, r = rows > 0 ? (size_t)rows : 1;

	if (n == 0) {
		p->sel = p->top = base;
		p->follow = true;
		return;
	}
	last = base + n - 1;
	if (p->sel > last)
		p->follow = true;       /* the list shrank under it */
	if (p->follow)
		p->sel = last;
	if (p->sel < base)
		p->sel = base;
	if (p->follow || p->top + r > base + n)
		p->top = n > r ? base + n - r : base;
	if (p->top < base)
		p->top = base;
	if (p->sel < p->top)
		p->top = p->sel;
	if (p->sel >= p->top + r)
		p->top = p->sel - r + 1;
}

/* Move p's selection by delta beats (negative: older) in the list
 * base .. base+n-1 (tui.h). */
void
console_pane_move(struct console_pane *p, long delta, size_t base, size_t n)
{
	size_t last;

	if (n == 0)
		return;
	last = base + n - 1;
	if (p->follow)
		p->sel = last;
	if (delta < 0) {
		size_t d = (size_t)-delta;
		p->sel = p->sel - base > d ? p->sel - d : base;
	} else {
		size_t d = (size_t)delta;
		p->sel = last - p->sel > d ? p->sel + d : last;
	}
	p->follow = delta > 0 && p->sel == last;
}

/* ---- search ---------------------------------------------------------- */

/* Where pat first occurs in text, ignoring ASCII case (tui.h). */
bool
console_pane_match(const char *text, const char *pat, size_t *off,
    size_t *len)
{
	size_t pl = pat != NULL ? strlen(pat) : 0;

	if (pl == 0 || text == NULL)
		return false;
	for (size_t i = 0; text[i] != '\0'; i++) {
		size_t k = 0;

		while (k < pl && text[i + k] != '\0' &&
		    tolower((unsigned char)text[i + k]) ==
		    tolower((unsigned char)pat[k]))
			k++;
		if (k == pl) {
			if (off != NULL)
				*off = i;
			if (len != NULL)
				*len = pl;
			return true;
		}
	}
	return false;
}

/* The next item matching pat from 'from' in direction dir (tui.h). */
long
console_pane_find(const char *pat, size_t n, size_t from, int dir,
    const char *(*text)(const void *ctx, size_t i), const void *ctx,
    bool *wrapped)
{
	*wrapped = false;
	if (n == 0 || pat == NULL || pat[0] == '\0')
		return -1;
	if (from >= n)
		from = dir > 0 ? n - 1 : 0;
	for (size_t step = 1; step <= n; step++) {
		size_t i;

		if (dir > 0) {
			i = (from + step) % n;
			if (from + step >= n)
				*wrapped = true;
		} else {
			i = (from + n - step % n) % n;
			if (step > from)
				*wrapped = true;
		}
		if (console_pane_match(text(ctx, i), pat, NULL, NULL))
			return (long)i;
	}
	return -1;
}

/* ---- OSC 52 ---------------------------------------------------------- */

/* ESC ] 52 ; c ; base64(s) BEL into out (tui.h). */
int
console_pane_osc52(const char *s, char *out, size_t n)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t len = strlen(s), o = 0;

	if (len == 0 || len > CONSOLE_PANE_COPY_MAX)
		return -1;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return -1;
	if (n < 7 + (len + 2) / 3 * 4 + 2)
		return -1;
	memcpy(out, "\033]52;c;", 7);
	o = 7;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		size_t left = len - i;

		if (left > 1)
			v |= (unsigned char)s[i + 1] << 8;
		if (left > 2)
			v |= (unsigned char)s[i + 2];
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = left > 1 ? b64[(v >> 6) & 63] : '=';
		out[o++] = left > 2 ? b64[v & 63] : '=';
	}
	out[o++] = '\007';
	out[o] = '\0';
	return (int)o;
}

/* ---- the pager's text -------------------------------------------------- */

/* Line 'line' (1-based) of the file at path, at most max bytes (tui.h). */
char *
console_pane_read_line(const char *path, uint32_t line, size_t max,
    bool *cut, struct errbuf *e)
{
	FILE *f;
	char *buf;
	size_t len = 0;
	uint32_t at = 1;
	int c;

	*cut = false;
	if (line == 0)
		return errbuf_set(e, ERRBUF_INPUT, "no evidence line"), NULL;
	/* never through a symlink, never blocking on a FIFO or a device
	 * swapped in after the run was loaded: a regular file or nothing */
	{
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		struct stat sb;

		if (fd == -1)
			return errbuf_set(e, ERRBUF_INPUT, "%s: %s", path,
			    strerror(errno)), NULL;
		if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
			close(fd);
			return errbuf_set(e, ERRBUF_INPUT, "%s: not a regular "
			    "file", path), NULL;
		}
		if ((f = fdopen(fd, "r")) == NULL) {
			close(fd);
			return errbuf_set(e, ERRBUF_INPUT, "%s: %s", path,
			    strerror(errno)), NULL;
		}
	}
	/* skip to the line, at most REPLAY_MAX_BYTES' worth of file */
	for (size_t read = 0; at < line && read < 32u * 1024 * 1024; read++) {
		if ((c = getc(f)) == EOF)
			break;
		if (c == '\n')
			at++;
	}
	if (at < line) {
		fclose(f);
		return errbuf_set(e, ERRBUF_INPUT, "%s: no line %u", path,
		    (unsigned)line), NULL;
	}
	buf = xmalloc(max + 1);
	while ((c = getc(f)) != EOF && c != '\n') {
		if (len == max) {
			*cut = true;
			break;
		}
		buf[len++] = (char)c;
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* line pretty-printed when it is JSON, else itself (tui.h). */
char *
console_pane_json_pretty(const char *line)
{
	cJSON *o = cJSON_ParseWithLength(line, strlen(line));
	char *p, *out;
	size_t n = 0, o2 = 0;

	if (o == NULL)
		return xasprintf("%s", line);
	p = cJSON_Print(o);
	cJSON_Delete(o);
	if (p == NULL)
		return xasprintf("%s", line);
	for (size_t i = 0; p[i] != '\0'; i++)
		n += p[i] == '\t' ? 2 : 1;
	out = xmalloc(n + 1);
	/* cJSON indents with tabs and puts one after each ':' */
	for (size_t i = 0; p[i] != '\0'; i++) {
		if (p[i] == '\t' && i > 0 && p[i - 1] == ':') {
			out[o2++] = ' ';
		} else if (p[i] == '\t') {
			out[o2++] = ' ';
			out[o2++] = ' ';
		} else {
			out[o2++] = p[i];
		}
	}
	out[o2] = '\0';
	cJSON_free(p);
	return out;
}

/* Columns of the character at s (len bytes left) and its length. */
static int
console_pane_charw(const char *s, size_t left, bool utf8, size_t *clen)
{
	wchar_t wc;
	mbstate_t st;
	size_t k;
	int w;

	*clen = 1;
	if ((unsigned char)*s < 0x80 || !utf8)
		return 1;
	memset(&st, 0, sizeof st);
	k = mbrtowc(&wc, s, left, &st);
	if (k == (size_t)-1 || k == (size_t)-2 || k == 0)
		return 1;
	*clen = k;
	w = wcwidth(wc);
	return w < 0 ? 1 : w;
}

/* Append line [s, s+len) to *lines (n so far, at most max). */
static void
console_pane_push(char ***lines, size_t *n, size_t *cap, size_t max,
    const char *s, size_t len)
{
	if (*n >= max)
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if (*cap > max)
			*cap = max;
		*lines = realloc(*lines, *cap * sizeof **lines);
		if (*lines == NULL)
			util_fatal("pane: out of memory");
	}
	(*lines)[*n] = xmalloc(len + 1);
	memcpy((*lines)[*n], s, len);
	(*lines)[*n][len] = '\0';
	(*n)++;
}

/* text made inert and cut into lines of at most width columns (tui.h). */
size_t
console_pane_wrap(const char *text, int width, bool utf8, size_t max,
    char ***lines)
{
	size_t tl = strlen(text), n = 0, cap = 0;
	char *clean = xmalloc(tl + 1);
	const char *s;

	*lines = NULL;
	if (width < 8)
		width = 8;
	util_sanitize(clean, tl + 1, text, tl, true);
	s = clean;
	while (*s != '\0' || n == 0) {
		const char *nl = strchr(s, '\n');
		size_t ll = nl != NULL ? (size_t)(nl - s) : strlen(s);
		size_t i = 0, start = 0;
		int cols = 0;

		if (ll == 0)
			console_pane_push(lines, &n, &cap, max, s, 0);
		while (i < ll) {
			size_t clen;
			int w = console_pane_charw(s + i, ll - i, utf8, &clen);

			if (cols + w > width && i > start) {
				console_pane_push(lines, &n, &cap, max,
				    s + start, i - start);
				start = i;
				cols = 0;
			}
			cols += w;
			i += clen;
		}
		if (ll > start)
			console_pane_push(lines, &n, &cap, max, s + start,
			    ll - start);
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	free(clean);
	return n;
}

/* Free n lines from console_pane_wrap(). */
void
console_pane_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* The columns the first len bytes of s take on screen (tui.h). */
int
console_pane_cols(const char *s, size_t len, bool utf8)
{
	int cols = 0;

	for (size_t i = 0; i < len && s[i] != '\0';) {
		size_t clen;

		cols += console_pane_charw(s + i, len - i, utf8, &clen);
		i += clen;
	}
	return cols;
}
