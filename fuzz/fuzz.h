/*
 * fuzz.h - shared helpers of the libFuzzer harnesses (fuzz/run.sh).
 *
 * Every harness works in one private scratch directory: $ARES_FUZZ_TMP
 * (run.sh points it at a tmpfs dir it removes afterwards) or /dev/shm,
 * else /tmp.  Harnesses that verify signed files generate one key pair at
 * startup (sign_keygen) and sign each input with it, so the fuzzer reaches
 * the parsers behind the signature check.
 */
#ifndef ARES_FUZZ_H
#define ARES_FUZZ_H

#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char fz_dir[512];          /* scratch dir of this process */
static char fz_pub[600];          /* fz_dir/key/ares.pub */
static struct sign_secret *fz_sk; /* its secret half */
static struct sign_pubkey fz_pk;

static inline void
fz_die(const char *what, const struct errbuf *e)
{
	fprintf(stderr, "fuzz setup: %s: %s\n", what, e != NULL ? e->msg :
	    strerror(errno));
	abort();
}

static inline void
fz_cleanup(void)
{
	if (fz_dir[0] != '\0')
		util_rm_rf(fz_dir, NULL);
	sign_secret_free(fz_sk);
	fz_sk = NULL;
}

/* Make the scratch dir and, with key, a signing key pair in it. */
static inline void
fz_setup(bool key)
{
	const char *base = getenv("ARES_FUZZ_TMP");
	struct errbuf e = { 0 };
	char kdir[600];

	if (sodium_init() < 0)
		fz_die("sodium_init", NULL);
	if (base == NULL || base[0] == '\0')
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fz_dir, sizeof fz_dir, "%s/ares-fuzz-XXXXXX", base);
	if (mkdtemp(fz_dir) == NULL)
		fz_die("mkdtemp", NULL);
	atexit(fz_cleanup);
	if (!key)
		return;
	snprintf(kdir, sizeof kdir, "%s/key", fz_dir);
	if (sign_keygen(kdir, false, NULL, &e) == -1)
		fz_die("sign_keygen", &e);
	if ((fz_sk = sign_secret_load(kdir, &e)) == NULL)
		fz_die("sign_secret_load", &e);
	snprintf(fz_pub, sizeof fz_pub, "%s/" SIGN_PUBKEY_NAME, kdir);
	if (sign_pubkey_load(fz_pub, &fz_pk, &e) == -1)
		fz_die("sign_pubkey_load", &e);
}

/* fz_dir/rel (caller frees). */
static inline char *
fz_path(const char *rel)
{
	return xasprintf("%s/%s", fz_dir, rel);
}

/* Write buf to path (plain write: the scratch dir is private). */
static inline void
fz_write(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t off = 0;

	if (fd == -1)
		fz_die(path, NULL);
	while (off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			fz_die(path, NULL);
		off += (size_t)n;
	}
	close(fd);
}

/* Copy the file src to dst (best effort: a missing seed file is skipped). */
static inline void
fz_copy(const char *src, const char *dst)
{
	size_t len;
	char *buf = util_read_file(src, 64u * 1024 * 1024, &len, NULL);

	if (buf == NULL)
		return;
	fz_write(dst, buf, len);
	free(buf);
}

/* Copy the tree src to dst (best effort: what cannot be read is
 * skipped; dst and its directories are made). */
static inline void
fz_copy_dir(const char *src, const char *dst)
{
	DIR *d;
	struct dirent *de;

	if (util_mkdir_p(dst, 0755, NULL) == -1)
		fz_die("mkdir", NULL);
	if ((d = opendir(src)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *s, *t;
		struct stat sb;

		if (de->d_name[0] == '.')
			continue;
		s = xasprintf("%s/%s", src, de->d_name);
		t = xasprintf("%s/%s", dst, de->d_name);
		if (stat(s, &sb) == 0 && S_ISDIR(sb.st_mode))
			fz_copy_dir(s, t);
		else
			fz_copy(s, t);
		free(s);
		free(t);
	}
	closedir(d);
}

/* A run dir at fz_path("run") with evidence/ holding the sensor chains of
 * replays/contained (for anchors to name).  Returns its path (static). */
static inline char *
fz_run_with_chains(void)
{
	char *run = fz_path("run");
	char *src = xasprintf("%s/replays/contained/evidence", FUZZ_SRCDIR);
	char *dst = xasprintf("%s/evidence", run);

	fz_copy_dir(src, dst);
	free(src);
	free(dst);
	return run;
}

/*
 * Split "trusted comment\nbody" at the first newline: *tc gets the comment
 * (NUL-terminated copy, caller frees), *body and *blen the rest.  No newline:
 * the comment is empty and the whole input is the body.
 */
static inline char *
fz_split_tc(const uint8_t *data, size_t size, const uint8_t **body,
    size_t *blen)
{
	const uint8_t *nl = memchr(data, '\n', size);

	if (nl == NULL) {
		*body = data;
		*blen = size;
		return xstrdup("");
	}
	*body = nl + 1;
	*blen = size - (size_t)(nl + 1 - data);
	return xstrndup((const char *)data, (size_t)(nl - data));
}

/*
 * Write body as dir/name and sign it with trusted comment tc (when the
 * comment is one sign_file accepts; else no signature: the unsigned path).
 */
static inline void
fz_write_signed(const char *dir, const char *name, const char *tc,
    const uint8_t *body, size_t blen)
{
	char *p = xasprintf("%s/%s", dir, name);
	char *sig = xasprintf("%s.minisig", p);

	unlink(sig);
	fz_write(p, body, blen);
	(void)sign_file(fz_sk, p, tc, NULL);
	free(sig);
	free(p);
}

/*
 * Text that claims to be sanitized (safe to print) must hold no ESC, no
 * other C0 control but '\n' (when nl_ok), no tab, no DEL, no C1 code point
 * and no invalid UTF-8.  Aborts (a finding) otherwise.
 */
static inline void
fz_assert_inert_n(const char *what, const char *s, size_t n, bool nl_ok)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned char c = u[i];
		size_t len, k;
		uint32_t cp;

		if (c < 0x80) {
			if ((c < 0x20 && !(c == '\n' && nl_ok)) || c == 0x7f) {
				fprintf(stderr, "%s: control byte 0x%02x at "
				    "%zu in \"%.*s\"\n", what, c, i, (int)n, s);
				abort();
			}
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, cp = c & 0x07;
		else
			len = 0, cp = 0;
		if (len == 0 || i + len > n)
			goto bad;
		for (k = 1; k < len; k++) {
			if ((u[i + k] & 0xc0) != 0x80)
				goto bad;
			cp = cp << 6 | (u[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			goto bad;
		if (cp >= 0x80 && cp <= 0x9f) {
			fprintf(stderr, "%s: C1 control U+%04X at %zu\n", what,
			    (unsigned)cp, i);
			abort();
		}
		i += len;
	}
	return;
bad:
	fprintf(stderr, "%s: invalid UTF-8 at byte %zu\n", what, i);
	abort();
}

static inline void
fz_assert_inert(const char *what, const char *s)
{
	if (s != NULL)
		fz_assert_inert_n(what, s, strlen(s), false);
}

/* Every check of a verify result is sanitized, and the JSON renders. */
static inline void
fz_check_verify_result(const char *dir, struct report_verify_result *res)
{
	cJSON *j;
	char *txt;
	size_t i;

	for (i = 0; i < res->nchecks; i++) {
		fz_assert_inert("check.name", res->checks[i].name);
		fz_assert_inert("check.reason", res->checks[i].reason);
		fz_assert_inert("check.text", res->checks[i].text);
	}
	j = report_verify_json(dir, res);
	txt = cJSON_PrintUnformatted(j);
	free(txt);
	cJSON_Delete(j);
}

/*
 * The body of the signed-directory harnesses: write the input as DIR/name
 * signed with its trusted comment ("<comment>\n<body>"), run verify with
 * the pinned key (a usage error there is a bug: abort), and check the
 * result is inert and renders.
 */
static inline void
fz_verify_signed(const char *dir, const char *name, const uint8_t *data,
    size_t size, int (*verify)(const char *, const char *,
    struct report_verify_result *, struct errbuf *))
{
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const uint8_t *body;
	size_t blen;
	char *tc = fz_split_tc(data, size, &body, &blen);

	fz_write_signed(dir, name, tc, body, blen);
	if (verify(dir, fz_pub, &res, &e) == -1) {
		fprintf(stderr, "verify %s: %s\n", name, e.msg);
		abort();
	}
	fz_check_verify_result(dir, &res);
	report_verify_free(&res);
	free(tc);
}

#endif /* ARES_FUZZ_H */
