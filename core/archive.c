/*
 * archive.c - the tar streams of the engine's archive API (PUT and GET
 * /containers/{id}/archive): an in-memory ustar writer for what goes in,
 * and a bounded, refusing extractor for what comes out.
 *
 * What comes out of a container is untrusted (the engine's answer, and
 * whatever the container's processes left at that path): the extractor
 * writes regular files only, each as one plain name directly in the
 * target directory (created O_EXCL | O_NOFOLLOW through the directory's
 * descriptor, so no entry can overwrite, follow or escape), and refuses
 * the whole archive at the first entry that is anything else: an absolute
 * or ".." path, a link, a device or fifo, a GNU long name, a PAX header
 * that renames or resizes, a bad checksum, or a cap exceeded.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#define TAR_BLOCK 512

/* ---- writer --------------------------------------------------------- */

void
archive_tar_init(struct archive_tar *t)
{
	memset(t, 0, sizeof *t);
}

void
archive_tar_free(struct archive_tar *t)
{
	free(t->buf);
	memset(t, 0, sizeof *t);
}

/* Room for n more bytes, zero-filled. */
static unsigned char *
tar_grow(struct archive_tar *t, size_t n)
{
	unsigned char *p;

	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap : 8192;
		while (cap < t->len + n)
			cap *= 2;
		unsigned char *nb = xmalloc(cap);

		/* never realloc: the old block would be freed unzeroed, and
		 * it may hold secrets (bait in the agent's home) */
		if (t->len > 0)
			memcpy(nb, t->buf, t->len);
		if (t->buf != NULL)
			sodium_memzero(t->buf, t->cap);
		free(t->buf);
		t->buf = (char *)nb;
		t->cap = cap;
	}
	p = (unsigned char *)t->buf + t->len;
	memset(p, 0, n);
	t->len += n;
	return p;
}

/* Octal field of width w (w - 1 digits and a NUL). */
static void
tar_octal(unsigned char *f, size_t w, unsigned long long v)
{
	char tmp[32];

	snprintf(tmp, sizeof tmp, "%0*llo", (int)(w - 1), v);
	memcpy(f, tmp, w - 1);
	f[w - 1] = '\0';
}

/* Is name a relative path of plain components (letters, digits, '.',
 * '_', '-'; none "." or ".."), at most 99 bytes? */
static bool
tar_name_ok(const char *name)
{
	size_t n = strlen(name), comp = 0;

	if (n == 0 || n > 99 || name[0] == '/')
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = name[i];
		if (c == '/' || c == '\0') {
			if (comp == 0)
				return false;
			if ((comp == 1 && name[i - 1] == '.') ||
			    (comp == 2 && name[i - 1] == '.' && name[i - 2] == '.'))
				return false;
			comp = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return false;
		comp++;
	}
	return true;
}

/* One header block. */
static void
tar_header(struct archive_tar *t, const char *name, char type, unsigned mode,
    unsigned uid, unsigned gid, size_t size)
{
	unsigned char *h = tar_grow(t, TAR_BLOCK);
	unsigned sum = 0;

	memcpy(h, name, strlen(name));
	tar_octal(h + 100, 8, mode & 07777);
	tar_octal(h + 108, 8, uid);
	tar_octal(h + 116, 8, gid);
	tar_octal(h + 124, 12, size);
	tar_octal(h + 136, 12, 0);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	tar_octal(h + 148, 7, sum);
	h[155] = ' ';
}

int
archive_tar_dir(struct archive_tar *t, const char *name, unsigned mode,
    unsigned uid, unsigned gid, struct errbuf *e)
{
	char full[128];

	/* "." is the target folder itself (its mode and owner) */
	if (strcmp(name, ".") != 0 && (!tar_name_ok(name) ||
	    strlen(name) > 98))
		return errbuf_set(e, ERRBUF_INPUT, "archive: bad directory "
		    "name \"%.80s\"", name);
	snprintf(full, sizeof full, "%s/", name);
	tar_header(t, full, '5', mode, uid, gid, 0);
	return 0;
}

int
archive_tar_file(struct archive_tar *t, const char *name, unsigned mode,
    unsigned uid, unsigned gid, const void *data, size_t len,
    struct errbuf *e)
{
	if (!tar_name_ok(name))
		return errbuf_set(e, ERRBUF_INPUT, "archive: bad file name "
		    "\"%.80s\"", name);
	if (len > ARCHIVE_FILE_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "archive: %s: %zu bytes "
		    "(limit %u)", name, len, ARCHIVE_FILE_MAX);
	tar_header(t, name, '0', mode, uid, gid, len);
	if (len > 0) {
		size_t pad = (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
		unsigned char *p = tar_grow(t, pad);
		memcpy(p, data, len);
	}
	return 0;
}

void
archive_tar_finish(struct archive_tar *t)
{
	(void)tar_grow(t, 2 * TAR_BLOCK);
}

/* ---- extractor ------------------------------------------------------ */

/* Parse an octal field (NUL/space padded).  -1 when not octal. */
static int
tar_field(const unsigned char *f, size_t w, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i = 0;
	bool any = false;

	while (i < w && f[i] == ' ')
		i++;
	for (; i < w && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v > (~0ull >> 3))
			return -1;
		v = v * 8 + (unsigned)(f[i] - '0');
		any = true;
	}
	for (; i < w; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return -1;
	if (!any)
		return -1;
	*out = v;
	return 0;
}

/* The header's checksum is right (unsigned sum, as POSIX says). */
static bool
tar_sum_ok(const unsigned char *h)
{
	unsigned long long want;
	unsigned sum = 0;

	if (tar_field(h + 148, 8, &want) < 0)
		return false;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum == want;
}

/*
 * Check a PAX extended header's records (len bytes): only times and
 * vendor keys are let through (ignored); a record that would rename
 * (path, linkpath) or resize (size) the next entry, or a malformed
 * record, refuses the archive.  -1 + e.
 */
static int
pax_check(const char *p, size_t len, const char *where, struct errbuf *e)
{
	size_t off = 0;

	while (off < len) {
		size_t n = 0, i = off, klen;
		const char *key, *eq;

		while (i < len && p[i] >= '0' && p[i] <= '9' && n < 100000)
			n = n * 10 + (size_t)(p[i++] - '0');
		if (i == off || i >= len || p[i] != ' ' || n <= i - off + 1 ||
		    n > len - off || p[off + n - 1] != '\n')
			return errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: "
			    "malformed PAX record at byte %zu", where, off);
		key = p + i + 1;
		eq = memchr(key, '=', (size_t)(p + off + n - 1 - key));
		if (eq == NULL)
			return errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: "
			    "PAX record without '=' at byte %zu", where, off);
		klen = (size_t)(eq - key);
		if ((klen == 4 && memcmp(key, "path", 4) == 0) ||
		    (klen == 8 && memcmp(key, "linkpath", 8) == 0) ||
		    (klen == 4 && memcmp(key, "size", 4) == 0))
			return errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: "
			    "PAX record \"%.*s\" refused (renames or resizes "
			    "an entry)", where, (int)klen, key);
		off += n;
	}
	return 0;
}

/*
 * The entry's path after stripping `strip` leading components, into out
 * (ARCHIVE_NAME_MAX): "" when nothing is left (a top directory), else
 * one plain name.  -1 + e for an absolute path, "..", a deeper path or a
 * name outside [A-Za-z0-9._-] (or starting with '.').
 */
static int
entry_name(const unsigned char *h, unsigned strip, bool is_dir, char *out,
    struct errbuf *e)
{
	char path[300], shown[120];
	size_t plen = 0, nlen = strnlen((const char *)h, 100);
	size_t pre = strnlen((const char *)h + 345, 155);
	const char *comp[8];
	size_t clen[8], nc = 0, i = 0;

	if (memcmp(h + 257, "ustar", 5) == 0 && pre > 0) {
		memcpy(path, h + 345, pre);
		path[pre] = '/';
		plen = pre + 1;
	}
	memcpy(path + plen, h, nlen);
	plen += nlen;
	path[plen] = '\0';
	util_sanitize(shown, sizeof shown, path, plen, false);
	if (plen == 0 || path[0] == '/')
		return errbuf_set(e, ERRBUF_INTERNAL, "archive: entry \"%s\": "
		    "empty or absolute path refused", shown);
	while (i < plen) {
		size_t s = i;
		while (i < plen && path[i] != '/')
			i++;
		if (i > s && !(i - s == 1 && path[s] == '.')) {
			if (i - s == 2 && path[s] == '.' && path[s + 1] == '.')
				return errbuf_set(e, ERRBUF_INTERNAL, "archive: "
				    "entry \"%s\": \"..\" refused", shown);
			if (nc == 8)
				return errbuf_set(e, ERRBUF_INTERNAL, "archive: "
				    "entry \"%s\": too deep", shown);
			comp[nc] = path + s;
			clen[nc++] = i - s;
		}
		i++;
	}
	out[0] = '\0';
	if (nc <= strip) {
		if (!is_dir)
			return errbuf_set(e, ERRBUF_INTERNAL, "archive: entry "
			    "\"%s\": a file where a directory belongs", shown);
		return 0;
	}
	if (nc != strip + 1 || is_dir)
		return errbuf_set(e, ERRBUF_INTERNAL, "archive: entry \"%s\": "
		    "only plain files directly under the top are extracted",
		    shown);
	if (clen[strip] >= ARCHIVE_NAME_MAX || comp[strip][0] == '.')
		return errbuf_set(e, ERRBUF_INTERNAL, "archive: entry \"%s\": "
		    "bad name", shown);
	for (size_t k = 0; k < clen[strip]; k++) {
		char c = comp[strip][k];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return errbuf_set(e, ERRBUF_INTERNAL, "archive: entry "
			    "\"%s\": bad name", shown);
	}
	memcpy(out, comp[strip], clen[strip]);
	out[clen[strip]] = '\0';
	return 0;
}

/* Write n bytes to a new file name in dfd (O_EXCL, O_NOFOLLOW); a file
 * written in part is removed again.  -1 + e. */
static int
write_new_at(int dfd, const char *dir, const char *name, const char *p,
    size_t n, struct errbuf *e)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);

	if (fd < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "archive: create %s/%s: "
		    "%s", dir, name, strerror(errno));
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "archive: write %s/%s: %s",
			    dir, name, w < 0 ? strerror(errno) : "short write");
			close(fd);
			(void)unlinkat(dfd, name, 0);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd) < 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "archive: close %s/%s: %s", dir,
		    name, strerror(errno));
		(void)unlinkat(dfd, name, 0);
		return -1;
	}
	return 0;
}

/* One walk over the archive's headers.  Checking (write false): every
 * header, name, size and limit, no name twice, no name that dir already
 * has; nothing is written.  Writing (only after a check passed): each
 * file, its name appended to names (xrealloc'd, caller frees) so the
 * caller can remove them on a failure.  0 or -1 + e. */
static int
extract_walk(const char *buf, size_t len, int dfd, const char *dir,
    unsigned strip, const struct archive_limits *lim, bool write,
    struct archive_stats *st, char (**names)[ARCHIVE_NAME_MAX],
    size_t *nnames, struct errbuf *e)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t off = 0, entries = 0;
	bool pax_pending = false;
	int rc = 0;

	for (;;) {
		const unsigned char *h;
		unsigned long long size;
		char name[ARCHIVE_NAME_MAX], where[48];
		size_t padded;
		bool zero = true;

		if (len - off < TAR_BLOCK) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: ends at "
			    "byte %zu without its end blocks", off);
			break;
		}
		h = b + off;
		for (size_t i = 0; i < TAR_BLOCK && zero; i++)
			zero = h[i] == 0;
		if (zero) {
			if (pax_pending)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: a "
				    "PAX header with no entry after it");
			break;
		}
		snprintf(where, sizeof where, "header at byte %zu", off);
		if (!tar_sum_ok(h)) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: bad "
			    "checksum", where);
			break;
		}
		if (tar_field(h + 124, 12, &size) < 0) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: bad "
			    "size field", where);
			break;
		}
		if (++entries > lim->max_entries) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: more than "
			    "%zu entries", lim->max_entries);
			break;
		}
		off += TAR_BLOCK;
		if (size > len - off) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: %s declares "
			    "%llu bytes but %zu follow", where, size, len - off);
			break;
		}
		padded = ((size_t)size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
		if (padded > len - off)
			padded = len - off;
		switch (h[156]) {
		case 'x':
			if (size > 65536) {
				rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: "
				    "PAX header of %llu bytes", where, size);
				break;
			}
			rc = pax_check(buf + off, (size_t)size, where, e);
			pax_pending = true;
			break;
		case 'g':
			if (size > 65536)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: "
				    "PAX header of %llu bytes", where, size);
			else
				rc = pax_check(buf + off, (size_t)size, where, e);
			break;
		case '5':
			pax_pending = false;
			/* only a top directory (stripped away) passes */
			rc = entry_name(h, strip, true, name, e);
			break;
		case '0':
		case '\0': {
			struct stat sb;

			pax_pending = false;
			if (entry_name(h, strip, false, name, e) < 0) {
				rc = -1;
				break;
			}
			if (size > lim->max_file) {
				rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: %s: "
				    "%llu bytes (limit %zu per file)", name, size,
				    lim->max_file);
				break;
			}
			if (size > lim->max_total - st->bytes) {
				rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: more "
				    "than %zu bytes in all", lim->max_total);
				break;
			}
			if (!write) {
				for (size_t k = 0; k < *nnames && rc == 0; k++)
					if (strcmp((*names)[k], name) == 0)
						rc = errbuf_set(e, ERRBUF_INTERNAL,
						    "archive: %s: twice", name);
				if (rc == 0 && fstatat(dfd, name, &sb,
				    AT_SYMLINK_NOFOLLOW) == 0)
					rc = errbuf_set(e, ERRBUF_INTERNAL,
					    "archive: %s/%s exists", dir, name);
			} else {
				rc = write_new_at(dfd, dir, name, buf + off,
				    (size_t)size, e);
			}
			if (rc == 0) {
				*names = xrealloc(*names, (*nnames + 1) *
				    sizeof **names);
				memcpy((*names)[(*nnames)++], name, sizeof name);
				st->files++;
				st->bytes += (size_t)size;
			}
			break;
		}
		default: {
			char shown[120];
			util_sanitize(shown, sizeof shown, (const char *)h,
			    strnlen((const char *)h, 100), false);
			rc = errbuf_set(e, ERRBUF_INTERNAL, "archive: entry "
			    "\"%s\": type '%c' refused (regular files only: no "
			    "links, devices, fifos or long names)", shown,
			    h[156] >= 0x20 && h[156] < 0x7f ? h[156] : '?');
			break;
		}
		}
		if (rc < 0)
			break;
		off += padded;
	}
	return rc < 0 ? -1 : 0;
}

int
archive_extract(const char *buf, size_t len, const char *dir, unsigned strip,
    const struct archive_limits *lim, struct archive_stats *st,
    struct errbuf *e)
{
	char (*names)[ARCHIVE_NAME_MAX] = NULL;
	size_t nnames = 0;
	int dfd, rc;

	memset(st, 0, sizeof *st);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "archive: open %s: %s",
		    dir, strerror(errno));
	/* the whole archive is checked before the first byte is written */
	rc = extract_walk(buf, len, dfd, dir, strip, lim, false, st, &names,
	    &nnames, e);
	if (rc == 0) {
		nnames = 0;
		memset(st, 0, sizeof *st);
		rc = extract_walk(buf, len, dfd, dir, strip, lim, true, st,
		    &names, &nnames, e);
		if (rc < 0) {
			/* a write failed (disk full, a name that appeared
			 * meanwhile): none of this archive's files stay */
			for (size_t k = 0; k < nnames; k++)
				(void)unlinkat(dfd, names[k], 0);
			memset(st, 0, sizeof *st);
		}
	} else {
		memset(st, 0, sizeof *st);
	}
	free(names);
	close(dfd);
	return rc;
}
