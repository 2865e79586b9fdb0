/*
 * fuzz_fix.c - ares fix reading a breached run: fix_load_evidence on a run
 * dir whose evidence.jsonl is the fuzz input (and, after a line holding
 * only "--8<--", evidence/gateway.jsonl), then fix_attribute with every
 * flaw of the catalogue on and fix_run_info.  Evidence texts kept in the
 * attribution must be inert.
 */
#include "fuzz.h"

static char *fz_run, *fz_master, *fz_sensor;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(false);
	fz_run = fz_path("run");
	fz_master = xasprintf("%s/evidence.jsonl", fz_run);
	fz_sensor = xasprintf("%s/evidence/gateway.jsonl", fz_run);
	{
		char *d = xasprintf("%s/evidence", fz_run);

		if (util_mkdir_p(d, 0755, NULL) == -1)
			fz_die("mkdir", NULL);
		free(d);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char cut[] = "\n--8<--\n";
	const char *flaws[64];
	struct fix_attribution at;
	struct fix_run_info info;
	struct errbuf e = { 0 };
	const uint8_t *sep = memmem(data, size, cut, sizeof cut - 1);
	size_t nflaws = 0, i;
	cJSON *lines;
	int n;

	if (sep != NULL) {
		size_t a = (size_t)(sep - data) + 1;
		size_t b = a + sizeof cut - 2;

		fz_write(fz_master, data, a);
		fz_write(fz_sensor, data + b, size - b);
	} else {
		fz_write(fz_master, data, size);
		unlink(fz_sensor);
	}
	lines = fix_load_evidence(fz_run, &e);
	if (lines == NULL) {
		if (e.msg[0] == '\0')
			abort();
		return 0;
	}
	for (i = 0; i < flaw_count && nflaws < 64; i++)
		flaws[nflaws++] = flaw_table[i].id;
	/* half the catalogue on: the rest lands in out->off */
	n = fix_attribute(lines, flaws, (size_t)data[0] % (nflaws + 1), &at);
	if (n < 0 || (size_t)n != at.nhits || at.nhits > FIX_MAX_HITS ||
	    at.noff > FIX_MAX_HITS)
		abort();
	for (i = 0; i < at.nhits; i++) {
		fz_assert_inert("fix_hit.evidence", at.hits[i].evidence);
		if (memchr(at.hits[i].flaw, '\0', sizeof at.hits[i].flaw)
		    == NULL)
			abort();
	}
	(void)fix_run_info(lines, &info);
	cJSON_Delete(lines);
	return 0;
}
