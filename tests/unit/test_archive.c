/*
 * test_archive.c - core/archive.c: the ustar writer's output extracts
 * back byte for byte, and the extractor refuses hostile archives (absolute
 * and ".." paths, deeper paths, links, devices, fifos, GNU long names,
 * PAX renames/resizes, bad checksums, a missing end, caps exceeded, an
 * existing file or a planted symlink at the name).  No engine needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

static const struct archive_limits lim = { 16, 4096, 8192 };
static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/ares-test-archive.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int
teardown(void **state)
{
	struct errbuf e = {0};
	(void)state;
	assert_int_equal(util_rm_rf(dir, &e), 0);
	return 0;
}

/* Recompute a header's checksum after a test edited it. */
static void
fix_sum(unsigned char *h)
{
	unsigned sum = 0;
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

/* A tar of "top/" + "top/NAME" (data), finished. */
static void
two_entries(struct archive_tar *t, const char *name, const char *data)
{
	struct errbuf e = {0};
	archive_tar_init(t);
	assert_int_equal(archive_tar_dir(t, "top", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(t, name, 0644, 65533, 65533, data,
	    strlen(data), &e), 0);
	archive_tar_finish(t);
}

static char *
slurp(const char *name, size_t *len)
{
	struct errbuf e = {0};
	char *p = xasprintf("%s/%s", dir, name);
	char *s = util_read_file(p, 1 << 20, len, &e);
	free(p);
	return s;
}

/* Expect extraction of t to be refused with msg in the message and no
 * file made. */
static void
refused(const struct archive_tar *t, const char *msg)
{
	struct errbuf e = {0};
	struct archive_stats st;
	assert_int_equal(archive_extract(t->buf, t->len, dir, 1, &lim, &st,
	    &e), -1);
	if (strstr(e.msg, msg) == NULL)
		fail_msg("message \"%s\" lacks \"%s\"", e.msg, msg);
	assert_int_equal(st.files, 0);
}

static void
test_roundtrip(void **state)
{
	struct archive_tar t;
	struct archive_stats st;
	struct errbuf e = {0};
	char big[1500];
	size_t len;
	char *s;
	struct stat sb;
	(void)state;

	memset(big, 'x', sizeof big);
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "evidence", 0700, 65533, 65533,
	    &e), 0);
	assert_int_equal(archive_tar_file(&t, "evidence/a.jsonl", 0600, 0, 0,
	    "{\"x\":1}\n", 8, &e), 0);
	assert_int_equal(archive_tar_file(&t, "evidence/empty", 0600, 0, 0,
	    "", 0, &e), 0);
	assert_int_equal(archive_tar_file(&t, "evidence/big", 0600, 0, 0, big,
	    sizeof big, &e), 0);
	archive_tar_finish(&t);
	assert_int_equal(t.len % 512, 0);
	/* 4 headers, 1 + 0 + 3 data blocks, 2 end blocks */
	assert_int_equal(t.len, 512 * (4 + 4 + 2));
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    0);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.bytes, 8 + sizeof big);
	s = slurp("a.jsonl", &len);
	assert_non_null(s);
	assert_int_equal(len, 8);
	assert_memory_equal(s, "{\"x\":1}\n", 8);
	free(s);
	s = slurp("big", &len);
	assert_int_equal(len, sizeof big);
	assert_memory_equal(s, big, sizeof big);
	free(s);
	s = xasprintf("%s/a.jsonl", dir);
	assert_int_equal(lstat(s, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 077, 0);   /* 0600, whatever was asked */
	free(s);

	/* extracting again: every name exists, never overwritten */
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    -1);
	assert_non_null(strstr(e.msg, "exists"));
	archive_tar_free(&t);
}

static void
test_writer_refuses(void **state)
{
	struct archive_tar t;
	struct errbuf e = {0};
	char longname[120];
	(void)state;

	archive_tar_init(&t);
	assert_int_equal(archive_tar_file(&t, "/abs", 0600, 0, 0, "", 0, &e),
	    -1);
	assert_int_equal(archive_tar_file(&t, "a/../b", 0600, 0, 0, "", 0, &e),
	    -1);
	assert_int_equal(archive_tar_file(&t, "a//b", 0600, 0, 0, "", 0, &e),
	    -1);
	assert_int_equal(archive_tar_file(&t, "a b", 0600, 0, 0, "", 0, &e),
	    -1);
	assert_int_equal(archive_tar_dir(&t, "..", 0700, 0, 0, &e), -1);
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(archive_tar_file(&t, longname, 0600, 0, 0, "", 0, &e),
	    -1);
	assert_int_equal(t.len, 0);
	archive_tar_free(&t);
}

/* Edit the second header (the file) of a two-entry tar. */
static unsigned char *
second(struct archive_tar *t)
{
	return (unsigned char *)t->buf + 512;
}

static void
test_hostile_paths(void **state)
{
	struct archive_tar t;
	unsigned char *h;
	(void)state;

	two_entries(&t, "top/ok", "data");
	h = second(&t);
	memset(h, 0, 100);
	memcpy(h, "/etc/passwd", 11);
	fix_sum(h);
	refused(&t, "absolute");
	archive_tar_free(&t);

	two_entries(&t, "top/ok", "data");
	h = second(&t);
	memset(h, 0, 100);
	memcpy(h, "top/../../x", 11);
	fix_sum(h);
	refused(&t, "\"..\" refused");
	archive_tar_free(&t);

	two_entries(&t, "top/sub/deeper", "data");
	refused(&t, "only plain files directly under the top");
	archive_tar_free(&t);

	/* the ustar prefix field is part of the path */
	two_entries(&t, "top/ok", "data");
	h = second(&t);
	memcpy(h + 345, "..", 2);
	fix_sum(h);
	refused(&t, "\"..\" refused");
	archive_tar_free(&t);

	two_entries(&t, "top/.hidden", "data");
	refused(&t, "bad name");
	archive_tar_free(&t);

	/* a control byte in the name */
	two_entries(&t, "top/ok", "data");
	h = second(&t);
	h[5] = '\n';
	fix_sum(h);
	refused(&t, "bad name");
	archive_tar_free(&t);

	/* a file where only a stripped directory may be */
	{
		struct archive_tar u;
		struct errbuf e = {0};
		archive_tar_init(&u);
		assert_int_equal(archive_tar_file(&u, "flat", 0600, 0, 0, "x", 1,
		    &e), 0);
		archive_tar_finish(&u);
		refused(&u, "a file where a directory belongs");
		archive_tar_free(&u);
	}
}

static void
test_hostile_types(void **state)
{
	static const struct { char type; const char *msg; } types[] = {
		{ '1', "type '1' refused" },   /* hard link */
		{ '2', "type '2' refused" },   /* symlink */
		{ '3', "type '3' refused" },   /* char device */
		{ '4', "type '4' refused" },   /* block device */
		{ '6', "type '6' refused" },   /* fifo */
		{ 'L', "type 'L' refused" },   /* GNU long name */
		{ 'K', "type 'K' refused" },   /* GNU long link */
		{ '5', "only plain files" },   /* a directory below the top */
	};
	(void)state;

	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		struct archive_tar t;
		unsigned char *h;

		two_entries(&t, "top/x", "");
		h = second(&t);
		h[156] = (unsigned char)types[i].type;
		if (types[i].type == '2' || types[i].type == '1')
			memcpy(h + 157, "/etc/shadow", 11);
		fix_sum(h);
		refused(&t, types[i].msg);
		archive_tar_free(&t);
	}
}

/* A tar: "top/", a PAX 'x' header holding records, then "top/f". */
static void
with_pax(struct archive_tar *t, const char *records)
{
	struct archive_tar a;
	struct errbuf e = {0};
	unsigned char *h;

	archive_tar_init(&a);
	assert_int_equal(archive_tar_dir(&a, "top", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(&a, "top/PaxHeader", 0600, 0, 0,
	    records, strlen(records), &e), 0);
	assert_int_equal(archive_tar_file(&a, "top/f", 0600, 0, 0, "abc", 3,
	    &e), 0);
	archive_tar_finish(&a);
	h = (unsigned char *)a.buf + 512;
	h[156] = 'x';
	fix_sum(h);
	*t = a;
}

static void
test_pax(void **state)
{
	struct archive_tar t;
	struct archive_stats st;
	struct errbuf e = {0};
	size_t len;
	char *s;
	(void)state;

	/* times are let through (Go's archive/tar writes them) */
	with_pax(&t, "30 mtime=1796415137.379003801\n");
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    0);
	assert_int_equal(st.files, 1);
	s = slurp("f", &len);
	assert_int_equal(len, 3);
	free(s);
	archive_tar_free(&t);

	with_pax(&t, "20 path=/etc/passwd\n");
	refused(&t, "PAX record \"path\" refused");
	archive_tar_free(&t);
	with_pax(&t, "15 size=999999\n");
	refused(&t, "PAX record \"size\" refused");
	archive_tar_free(&t);
	with_pax(&t, "24 linkpath=/etc/shadow\n");
	refused(&t, "PAX record \"linkpath\" refused");
	archive_tar_free(&t);
	with_pax(&t, "99 mtime=1\n");            /* length beyond the data */
	refused(&t, "malformed PAX record");
	archive_tar_free(&t);
	with_pax(&t, "8 nokey\n");
	refused(&t, "without '='");
	archive_tar_free(&t);
}

static void
test_malformed(void **state)
{
	struct archive_tar t;
	struct archive_stats st;
	struct errbuf e = {0};
	unsigned char *h;
	(void)state;

	two_entries(&t, "top/f", "data");
	second(&t)[0] ^= 1;                      /* checksum now wrong */
	refused(&t, "bad checksum");
	archive_tar_free(&t);

	two_entries(&t, "top/f", "data");
	h = second(&t);
	memcpy(h + 124, "77777777777", 11);      /* more than follows */
	fix_sum(h);
	refused(&t, "but");
	archive_tar_free(&t);

	two_entries(&t, "top/f", "data");
	h = second(&t);
	memcpy(h + 124, "0000000x004", 11);
	fix_sum(h);
	refused(&t, "bad size field");
	archive_tar_free(&t);

	/* cut before the end blocks */
	two_entries(&t, "top/f", "data");
	assert_int_equal(archive_extract(t.buf, 1536, dir, 1, &lim, &st, &e),
	    -1);
	assert_non_null(strstr(e.msg, "without its end blocks"));
	assert_int_equal(archive_extract(t.buf, 100, dir, 1, &lim, &st, &e),
	    -1);
	archive_tar_free(&t);
}

/* Entries in dir (-1: unreadable). */
static int
dir_entries(void)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (dp == NULL)
		return -1;
	while ((de = readdir(dp)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(dp);
	return n;
}

static void
test_caps(void **state)
{
	struct archive_tar t;
	struct archive_stats st;
	struct errbuf e = {0};
	char buf[5000];
	(void)state;

	memset(buf, 'y', sizeof buf);
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "top", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/f", 0600, 0, 0, buf, 4097,
	    &e), 0);
	archive_tar_finish(&t);
	refused(&t, "limit 4096 per file");
	archive_tar_free(&t);

	/* 3 x 3000 bytes: the third passes the 8192 total */
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "top", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/a", 0600, 0, 0, buf, 3000,
	    &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/b", 0600, 0, 0, buf, 3000,
	    &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/c", 0600, 0, 0, buf, 3000,
	    &e), 0);
	archive_tar_finish(&t);
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    -1);
	assert_non_null(strstr(e.msg, "more than 8192 bytes in all"));
	assert_int_equal(st.files, 0);   /* checked before any write */
	assert_int_equal(dir_entries(), 0);
	archive_tar_free(&t);

	/* entries */
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "top", 0700, 0, 0, &e), 0);
	for (int i = 0; i < 20; i++) {
		char n[32];
		snprintf(n, sizeof n, "top/e%d", i);
		assert_int_equal(archive_tar_file(&t, n, 0600, 0, 0, "", 0, &e),
		    0);
	}
	archive_tar_finish(&t);
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    -1);
	assert_non_null(strstr(e.msg, "more than 16 entries"));
	archive_tar_free(&t);
}

/* A refused archive writes nothing, even the good files before the bad
 * entry; a write that fails part way leaves no file behind. */
static void
test_refused_writes_nothing(void **state)
{
	struct archive_tar t;
	struct archive_stats st;
	struct errbuf e = {0};
	char buf[5000];
	unsigned char *h;
	pid_t pid;
	int status;
	(void)state;

	/* a plain-named file, then a symlink entry */
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "evidence", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(&t, "evidence/chain.jsonl", 0600, 0,
	    0, "{\"forged\":1}\n", 13, &e), 0);
	assert_int_equal(archive_tar_file(&t, "evidence/link", 0600, 0, 0, "",
	    0, &e), 0);
	archive_tar_finish(&t);
	/* headers: the directory, the file, its data, the link */
	h = (unsigned char *)t.buf + 3 * 512;
	h[156] = '2';
	memcpy(h + 157, "/etc/shadow", 11);
	fix_sum(h);
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    -1);
	assert_non_null(strstr(e.msg, "type '2' refused"));
	assert_int_equal(st.files, 0);
	assert_int_equal(dir_entries(), 0);
	archive_tar_free(&t);

	/* one name twice: refused before the first is written */
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "top", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/a", 0600, 0, 0, "1", 1, &e),
	    0);
	assert_int_equal(archive_tar_file(&t, "top/a", 0600, 0, 0, "2", 1, &e),
	    0);
	archive_tar_finish(&t);
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    -1);
	assert_non_null(strstr(e.msg, "twice"));
	assert_int_equal(dir_entries(), 0);
	archive_tar_free(&t);

	/* the write fails part way (a 1000-byte file size limit, the
	 * second file of 3000 bytes): neither file stays */
	memset(buf, 'z', sizeof buf);
	archive_tar_init(&t);
	assert_int_equal(archive_tar_dir(&t, "top", 0700, 0, 0, &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/small", 0600, 0, 0, buf,
	    100, &e), 0);
	assert_int_equal(archive_tar_file(&t, "top/big", 0600, 0, 0, buf, 3000,
	    &e), 0);
	archive_tar_finish(&t);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 1000, 1000 };

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		if (archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e) != -1)
			_exit(3);
		if (strstr(e.msg, "write") == NULL)
			_exit(4);
		_exit(st.files == 0 ? 0 : 5);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(dir_entries(), 0);
	archive_tar_free(&t);
}

/* A symlink planted at the name is not followed (nor replaced). */
static void
test_planted_symlink(void **state)
{
	struct archive_tar t;
	struct errbuf e = {0};
	struct archive_stats st;
	char *link = xasprintf("%s/f", dir);
	char *target = xasprintf("%s/target", dir);
	struct stat sb;
	(void)state;

	assert_int_equal(symlink(target, link), 0);
	two_entries(&t, "top/f", "data");
	assert_int_equal(archive_extract(t.buf, t.len, dir, 1, &lim, &st, &e),
	    -1);
	assert_int_equal(lstat(target, &sb), -1);   /* nothing written there */
	archive_tar_free(&t);
	free(link);
	free(target);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test(test_writer_refuses),
		cmocka_unit_test_setup_teardown(test_hostile_paths, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hostile_types, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlink, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refused_writes_nothing,
		    setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
