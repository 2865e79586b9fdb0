/*
 * fuzz_probe.c - probe_verify_dir on a dir whose probe.json is the fuzz
 * input ("<trusted comment>\n<probe.json>", signed by the harness with a
 * key made at startup and pinned), plus sensor chains from
 * replays/contained in evidence/ for the anchors to name.
 */
#include "fuzz.h"

#include <dirent.h>

static char *fz_run;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *src, *dst;
	DIR *d;
	struct dirent *de;

	(void)argc;
	(void)argv;
	fz_setup(true);
	fz_run = fz_path("run");
	dst = xasprintf("%s/evidence", fz_run);
	if (util_mkdir_p(dst, 0755, NULL) == -1)
		fz_die("mkdir", NULL);
	free(dst);
	src = xasprintf("%s/replays/contained/evidence", FUZZ_SRCDIR);
	if ((d = opendir(src)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			char *s, *t;

			if (de->d_name[0] == '.')
				continue;
			s = xasprintf("%s/%s", src, de->d_name);
			t = xasprintf("%s/evidence/%s", fz_run, de->d_name);
			fz_copy(s, t);
			free(s);
			free(t);
		}
		closedir(d);
	}
	free(src);
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

	fz_write_signed(fz_run, "probe.json", tc, body, blen);
	if (probe_verify_dir(fz_run, fz_pub, &res, &e) == -1) {
		fprintf(stderr, "probe_verify_dir: %s\n", e.msg);
		abort();
	}
	fz_check_verify_result(fz_run, &res);
	report_verify_free(&res);
	(void)probe_dir_is(fz_run);
	free(tc);
	return 0;
}
