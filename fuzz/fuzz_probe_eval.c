/*
 * fuzz_probe_eval.c - the probe evaluators on what a compromised agent
 * prints: probe_evaluate of one row (byte 0 picks it, byte 1 is the exit
 * code) on stdout/stderr/host text cut from the rest of the input (bytes
 * 2-3 and 4-5: lengths of stdout and stderr, the remainder is the host
 * observation when byte 0's top bit is set).  The observed text must be
 * inert; the report views (table, JSON, JUnit) are built from the result.
 */
#include "fuzz.h"

static struct probe_ctx fz_ctx;

static const char fz_lab[] =
    "{\"format\":\"ares-lab-v1\",\"run_id\":\"20261130-001421-f1fc223b\","
    "\"policy\":\"policies/default.yaml\",\"variant\":\"default\","
    "\"flaws\":[\"docker-socket\"],\"containers\":{\"agent\":{\"id\":"
    "\"296bf7304e68f48e0654e85ded14fb14b3a9cf46566441b4d145d1fdd2dcb293\"},"
    "\"gateway\":{\"id\":"
    "\"3f1686acb1ce7325b69a2d94c90d15fa40dd700757fae0be3f4aa4bf170c847e\"}},"
    "\"sink_ip\":\"172.24.0.2\",\"dns_ip\":\"172.22.0.2\"}";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct errbuf e = { 0 };

	(void)argc;
	(void)argv;
	if (probe_ctx_parse(fz_lab, sizeof fz_lab - 1, "/run/fuzz", &fz_ctx,
	    &e) == -1)
		fz_die("probe_ctx_parse", &e);
	fz_ctx.real_key = xstrdup("sk-fuzz-real-key-0123456789");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_report *r;
	struct probe_exec x = { 0 };
	const struct probe_row *row;
	size_t rest, lo, le;
	char *out, *err, *host = NULL, *txt;
	cJSON *j;

	if (size < 6)
		return 0;
	row = &probe_table[(data[0] & 0x7f) % probe_nrows];
	x.exit_code = (int8_t)data[1];
	rest = size - 6;
	lo = ((size_t)data[2] << 8 | data[3]) % (rest + 1);
	le = ((size_t)data[4] << 8 | data[5]) % (rest - lo + 1);
	/* private copies of exactly the given lengths (plus the NUL) */
	out = xmalloc(lo + 1);
	memcpy(out, data + 6, lo);
	out[lo] = '\0';   /* docker_exec NUL-terminates what it collects */
	err = xmalloc(le + 1);
	memcpy(err, data + 6 + lo, le);
	err[le] = '\0';
	x.out = out;
	x.out_len = lo;
	x.err = err;
	x.err_len = le;
	if (data[0] & 0x80) {
		size_t lh = rest - lo - le;

		host = xmalloc(lh + 1);
		memcpy(host, data + 6 + lo + le, lh);
		host[lh] = '\0';
		x.host = host;
		x.host_len = lh;
	}

	r = xcalloc(1, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, "%s", fz_ctx.run_id);
	snprintf(r->policy, sizeof r->policy, "%s", fz_ctx.policy);
	snprintf(r->variant, sizeof r->variant, "%s", fz_ctx.variant);
	probe_evaluate(row, &fz_ctx, &x, &r->rows[0]);
	r->nrows = r->nplanned = 1;
	if (memchr(r->rows[0].observed, '\0', PROBE_OBSERVED_MAX) == NULL)
		abort();
	fz_assert_inert("probe observed", r->rows[0].observed);
	if ((int)r->rows[0].outcome < PROBE_PASS ||
	    r->rows[0].outcome > PROBE_ERROR)
		abort();

	txt = probe_table_format(r, 60 + data[1] % 100);
	free(txt);
	j = probe_report_json(r);
	txt = cJSON_PrintUnformatted(j);
	free(txt);
	cJSON_Delete(j);
	txt = probe_junit(r);
	free(txt);

	free(r);
	free(host);
	free(err);
	free(out);
	return 0;
}
