/*
 * fuzz_trial.c - trial_verify_dir on a trial dir whose trial.json is the
 * fuzz input ("<trusted comment>\n<trial.json>", signed by the harness
 * with a key made at startup and pinned).  runs/r1 holds a copy of
 * replays/contained, so a run entry can reach report_verify_dir.
 */
#include "fuzz.h"

#include <dirent.h>

static char *fz_trial;

static void
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

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *src, *dst;

	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_trial = fz_path("trial");
	src = xasprintf("%s/replays/contained", FUZZ_SRCDIR);
	dst = xasprintf("%s/runs/r1", fz_trial);
	fz_copy_dir(src, dst);
	free(src);
	free(dst);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const uint8_t *body;
	size_t blen;
	char *tc = fz_split_tc(data, size, &body, &blen);

	fz_write_signed(fz_trial, "trial.json", tc, body, blen);
	if (trial_verify_dir(fz_trial, fz_pub, &res, &e) == -1) {
		fprintf(stderr, "trial_verify_dir: %s\n", e.msg);
		abort();
	}
	fz_check_verify_result(fz_trial, &res);
	report_verify_free(&res);
	(void)trial_dir_is(fz_trial);
	free(tc);
	return 0;
}
