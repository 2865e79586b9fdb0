/*
 * probe_obs.c - the battery's own evidence, RUN_DIR/probe.jsonl
 * (PROBE_OBS_FILE, docs/evidence.md).
 *
 * While the battery runs: the facts the evaluators use, then every row's
 * raw result (bounded, the real key redacted); each row is evaluated on
 * exactly the recorded copy.  For ares verify: the verified chain read
 * back, so that every row can be evaluated again from the same bytes.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

/* ------------------------------------------------------------------ */
/* the battery's own evidence (PROBE_OBS_FILE)                          */
/* ------------------------------------------------------------------ */

#define PROBE_OBS_FORMAT "ares-probe-obs-v1"
#define PROBE_OBS_PART   (24 * 1024)   /* raw bytes per probe.data line */

/*
 * A NUL-terminated copy of buf[0..len) (NULL: empty) of at most
 * PROBE_EXEC_MAX bytes, with every occurrence of key (NULL or "": none)
 * and a tail that begins it replaced by PROBE_REDACTED: the real key is
 * never recorded.  Caller frees; *outlen gets the length.
 */
static char *
probe_obs_copy(const char *buf, size_t len, const char *key,
    size_t *outlen)
{
	size_t kl = key != NULL ? strlen(key) : 0, rl = strlen(PROBE_REDACTED);
	size_t n = 0, i = 0;
	char *out = xmalloc(PROBE_EXEC_MAX + 1);

	if (buf == NULL)
		len = 0;
	while (i < len && n < PROBE_EXEC_MAX) {
		size_t left = len - i;

		if (kl > 0 && memcmp(buf + i, key, left < kl ? left : kl) ==
		    0) {
			size_t m = rl < PROBE_EXEC_MAX - n ? rl :
			    PROBE_EXEC_MAX - n;

			memcpy(out + n, PROBE_REDACTED, m);
			n += m;
			i += left < kl ? left : kl;
			continue;
		}
		out[n++] = buf[i++];
	}
	out[n] = '\0';
	*outlen = n;
	return out;
}

struct evidence *
probe_obs_open(const struct probe_ctx *c, const char *only_flaw,
    struct errbuf *e)
{
	char *path = xasprintf("%s/" PROBE_OBS_FILE, c->run_dir);
	struct evidence *ev;
	cJSON *f, *facts;

	if (unlink(path) == -1 && errno != ENOENT) {
		errbuf_set(e, ERRBUF_INTERNAL, "probe: %s: %s", path,
		    strerror(errno));
		free(path);
		return NULL;
	}
	ev = evidence_create(path, c->run_id, e);
	free(path);
	if (ev == NULL)
		return NULL;
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "format", PROBE_OBS_FORMAT);
	if (only_flaw != NULL)
		cJSON_AddStringToObject(f, "only_flaw", only_flaw);
	else
		cJSON_AddNullToObject(f, "only_flaw");
	facts = cJSON_AddObjectToObject(f, "facts");
	cJSON_AddStringToObject(facts, "sink_ip", c->sink_ip);
	cJSON_AddStringToObject(facts, "exfil_host", c->exfil_host);
	cJSON_AddStringToObject(facts, "service", c->service);
	cJSON_AddNumberToObject(facts, "service_port", c->service_port);
	cJSON_AddNumberToObject(facts, "host_port", c->host_port);
	cJSON_AddStringToObject(facts, "real_key", c->real_key == NULL ?
	    "unknown" : c->real_key[0] == '\0' ? "none" : "redacted");
	if (evidence_append(ev, "probe.start", util_mono_ns(), f, e) < 0) {
		cJSON_Delete(f);
		evidence_close(ev);
		return NULL;
	}
	cJSON_Delete(f);
	return ev;
}

/* Record x for row: "probe.row" (sizes), then its streams in
 * "probe.data" parts.  The probe.row line's seq, or -1. */
static long
probe_obs_put(struct evidence *ev, const struct probe_row *row,
    const struct probe_exec *x)
{
	const char *names[3] = { "out", "err", "host" };
	const char *bufs[3] = { x->out, x->err, x->host };
	size_t lens[3] = { x->out_len, x->err_len, x->host_len };
	size_t b64max = sodium_base64_ENCODED_LEN(PROBE_OBS_PART,
	    sodium_base64_VARIANT_ORIGINAL);
	char *b64 = xmalloc(b64max);
	struct errbuf e = { 0 };
	cJSON *f = cJSON_CreateObject();
	long seq;
	int s;

	cJSON_AddStringToObject(f, "row", row->id);
	cJSON_AddBoolToObject(f, "ran", true);
	cJSON_AddNumberToObject(f, "exit_code", x->exit_code);
	cJSON_AddNumberToObject(f, "out_bytes", (double)x->out_len);
	cJSON_AddNumberToObject(f, "err_bytes", (double)x->err_len);
	cJSON_AddNumberToObject(f, "host_bytes", x->host != NULL ?
	    (double)x->host_len : -1);
	seq = evidence_append(ev, "probe.row", util_mono_ns(), f, &e);
	cJSON_Delete(f);
	for (s = 0; s < 3 && seq > 0; s++) {
		size_t off;

		for (off = 0; bufs[s] != NULL && off < lens[s];
		    off += PROBE_OBS_PART) {
			size_t n = lens[s] - off < PROBE_OBS_PART ?
			    lens[s] - off : PROBE_OBS_PART;

			sodium_bin2base64(b64, b64max, (const unsigned char *)
			    bufs[s] + off, n, sodium_base64_VARIANT_ORIGINAL);
			f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "row", row->id);
			cJSON_AddStringToObject(f, "stream", names[s]);
			cJSON_AddNumberToObject(f, "offset", (double)off);
			cJSON_AddStringToObject(f, "data", b64);
			if (evidence_append(ev, "probe.data", util_mono_ns(), f,
			    &e) < 0)
				seq = -1;
			cJSON_Delete(f);
			if (seq < 0)
				break;
		}
	}
	free(b64);
	return seq;
}

void
probe_obs_row(struct evidence *ev, const struct probe_ctx *c,
    const struct probe_row *row, const struct probe_exec *x,
    struct probe_result *res)
{
	static char redacted[] = PROBE_REDACTED, none[] = "";
	struct errbuf e = { 0 };
	struct probe_ctx vc;
	struct probe_exec rx = { 0 };
	char *out, *err, *host = NULL;
	long seq = -1;

	if (x == NULL) {
		res->obs_seq = 0;
		if (ev != NULL) {
			cJSON *f = cJSON_CreateObject();

			cJSON_AddStringToObject(f, "row", row->id);
			cJSON_AddBoolToObject(f, "ran", false);
			cJSON_AddStringToObject(f, "observed", res->observed);
			seq = evidence_append(ev, "probe.row", util_mono_ns(), f,
			    &e);
			cJSON_Delete(f);
		}
		res->obs_seq = seq > 0 ? (size_t)seq : 0;
		return;
	}
	/* the evaluator sees what is recorded: bounded, the real key
	 * replaced (and looked for) by its placeholder */
	vc = *c;
	vc.real_key = c->real_key == NULL ? NULL : c->real_key[0] == '\0' ?
	    none : redacted;
	out = probe_obs_copy(x->out, x->out_len, c->real_key, &rx.out_len);
	err = probe_obs_copy(x->err, x->err_len, c->real_key, &rx.err_len);
	if (x->host != NULL)
		host = probe_obs_copy(x->host, x->host_len, c->real_key,
		    &rx.host_len);
	rx.exit_code = x->exit_code;
	rx.out = out;
	rx.err = err;
	rx.host = host;
	probe_evaluate(row, &vc, &rx, res);
	if (ev != NULL)
		seq = probe_obs_put(ev, row, &rx);
	res->obs_seq = seq > 0 ? (size_t)seq : 0;
	sodium_memzero(out, rx.out_len);
	sodium_memzero(err, rx.err_len);
	free(out);
	free(err);
	free(host);
}

void
probe_obs_close(struct evidence *ev, struct probe_report *r)
{
	size_t i;

	r->obs_entries = 0;
	r->obs_head[0] = '\0';
	r->obs_failed = ev == NULL;
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].obs_seq == 0)
			r->obs_failed = true;
	if (ev == NULL)
		return;
	r->obs_entries = evidence_count(ev);
	snprintf(r->obs_head, sizeof r->obs_head, "%s",
	    evidence_head_hex(ev));
	evidence_close(ev);
}

/* ---- reading it back (ares verify) -------------------------------- */

void
probe_obs_read_free(struct probe_obs_read *o)
{
	size_t i, s;

	for (i = 0; i < o->nrecs; i++)
		for (s = 0; s < 3; s++) {
			if (o->recs[i].buf[s] != NULL)
				sodium_memzero(o->recs[i].buf[s],
				    o->recs[i].len[s]);
			free(o->recs[i].buf[s]);
		}
	o->nrecs = 0;
}

/* A size member: an integer 0..PROBE_EXEC_MAX (or -1 when neg_ok). */
static bool
probe_obs_size(const cJSON *v, bool neg_ok, long *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble
	    || v->valuedouble > PROBE_EXEC_MAX || v->valuedouble < (neg_ok ?
	    -1 : 0))
		return false;
	*out = (long)v->valuedouble;
	return true;
}

/* The recorded facts into o->ctx (bounded copies).  -1 with why. */
static int
probe_obs_facts(const cJSON *line, struct probe_obs_read *o, char *why,
    size_t whylen)
{
	static char redacted[] = PROBE_REDACTED, none[] = "";
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(line, "facts");
	const cJSON *of = cJSON_GetObjectItemCaseSensitive(line, "only_flaw");
	const cJSON *v;
	const char *rk;

	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(line, "format")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(line, "format")->valuestring,
	    PROBE_OBS_FORMAT) != 0) {
		snprintf(why, whylen, "probe.start: format is not "
		    PROBE_OBS_FORMAT);
		return -1;
	}
	if (cJSON_IsString(of) && strlen(of->valuestring) <
	    sizeof o->only_flaw) {
		o->only_flaw_set = true;
		snprintf(o->only_flaw, sizeof o->only_flaw, "%s",
		    of->valuestring);
	} else if (!cJSON_IsNull(of)) {
		snprintf(why, whylen, "probe.start: only_flaw bad");
		return -1;
	}
	if (probe_json_str(f, "sink_ip", o->ctx.sink_ip,
	    sizeof o->ctx.sink_ip) == -1 || probe_json_str(f, "exfil_host",
	    o->ctx.exfil_host, sizeof o->ctx.exfil_host) == -1 ||
	    probe_json_str(f, "service", o->ctx.service,
	    sizeof o->ctx.service) == -1) {
		snprintf(why, whylen, "probe.start: facts incomplete");
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(f, "service_port");
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 65535) {
		snprintf(why, whylen, "probe.start: facts.service_port bad");
		return -1;
	}
	o->ctx.service_port = (int)v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(f, "host_port");
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 65535) {
		snprintf(why, whylen, "probe.start: facts.host_port bad");
		return -1;
	}
	o->ctx.host_port = (int)v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(f, "real_key");
	rk = cJSON_IsString(v) ? v->valuestring : "";
	if (strcmp(rk, "unknown") == 0)
		o->ctx.real_key = NULL;
	else if (strcmp(rk, "none") == 0)
		o->ctx.real_key = none;
	else if (strcmp(rk, "redacted") == 0)
		o->ctx.real_key = redacted;
	else {
		snprintf(why, whylen, "probe.start: facts.real_key bad");
		return -1;
	}
	return 0;
}

/* Whether rec (NULL: none yet) holds less of a stream than its probe.row
 * line announced. */
static bool
probe_obs_short(const struct probe_obs_rec *rec)
{
	return rec != NULL && (rec->len[0] != rec->want[0] || rec->len[1] !=
	    rec->want[1] || rec->len[2] != rec->want[2]);
}

/*
 * A probe.row line j (its row member rowv, line lineno): the row before it
 * must be complete; a new record in o becomes *cur, its streams allocated
 * to the announced sizes.  0, or -1 with why naming the line.
 */
static int
probe_obs_rec_start(const cJSON *j, const cJSON *rowv, size_t lineno,
    struct probe_obs_read *o, struct probe_obs_rec **curp, char *why,
    size_t whylen)
{
	const cJSON *ran = cJSON_GetObjectItemCaseSensitive(j, "ran");
	struct probe_obs_rec *cur = *curp;
	long v[4], ec;

	if (probe_obs_short(cur)) {
		snprintf(why, whylen, "line %zu: row %s: its output is "
		    "incomplete", lineno, cur->row);
		return -1;
	}
	if (o->nrecs >= PROBE_MAX_ROWS || !cJSON_IsString(rowv) ||
	    strlen(rowv->valuestring) >= sizeof cur->row ||
	    !cJSON_IsBool(ran)) {
		snprintf(why, whylen, "line %zu: probe.row bad or more than %d",
		    lineno, PROBE_MAX_ROWS);
		return -1;
	}
	cur = *curp = &o->recs[o->nrecs++];
	memset(cur, 0, sizeof *cur);
	snprintf(cur->row, sizeof cur->row, "%s", rowv->valuestring);
	cur->seq = lineno - 1;
	cur->ran = cJSON_IsTrue(ran);
	if (!cur->ran) {
		const cJSON *ob = cJSON_GetObjectItemCaseSensitive(j,
		    "observed");

		if (!cJSON_IsString(ob)) {
			snprintf(why, whylen, "line %zu: probe.row without "
			    "observed", lineno);
			return -1;
		}
		util_sanitize(cur->observed, sizeof cur->observed,
		    ob->valuestring, strlen(ob->valuestring), false);
	} else {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(j,
		    "exit_code");

		if (!cJSON_IsNumber(e) || e->valuedouble < -1e6 ||
		    e->valuedouble > 1e6 ||
		    !probe_obs_size(cJSON_GetObjectItemCaseSensitive(j,
		    "out_bytes"), false, &v[0]) ||
		    !probe_obs_size(cJSON_GetObjectItemCaseSensitive(j,
		    "err_bytes"), false, &v[1]) ||
		    !probe_obs_size(cJSON_GetObjectItemCaseSensitive(j,
		    "host_bytes"), true, &v[2])) {
			snprintf(why, whylen, "line %zu: probe.row sizes bad",
			    lineno);
			return -1;
		}
		ec = (long)e->valuedouble;
		cur->exit_code = (int)ec;
		cur->want[0] = (size_t)v[0];
		cur->want[1] = (size_t)v[1];
		cur->has_host = v[2] >= 0;
		cur->want[2] = v[2] >= 0 ? (size_t)v[2] : 0;
		for (int s = 0; s < 3; s++) {
			cur->buf[s] = xmalloc(cur->want[s] + 1);
			cur->buf[s][0] = '\0';
		}
	}
	return 0;
}

/*
 * A probe.data line j (its row member rowv, line lineno): the next part
 * of one stream of cur (the row that ran last), decoded onto its end.
 * 0, or -1 with why naming the line.
 */
static int
probe_obs_rec_data(const cJSON *j, const cJSON *rowv, size_t lineno,
    struct probe_obs_rec *cur, char *why, size_t whylen)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stream");
	const cJSON *off = cJSON_GetObjectItemCaseSensitive(j, "offset");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "data");
	int s = -1;
	size_t got = 0;

	if (cJSON_IsString(st))
		s = strcmp(st->valuestring, "out") == 0 ? 0 :
		    strcmp(st->valuestring, "err") == 0 ? 1 :
		    strcmp(st->valuestring, "host") == 0 ? 2 : -1;
	if (cur == NULL || !cur->ran || s < 0 || !cJSON_IsString(rowv) ||
	    strcmp(rowv->valuestring, cur->row) != 0 ||
	    !cJSON_IsNumber(off) || off->valuedouble != (double)cur->len[s] ||
	    !cJSON_IsString(d) || (s == 2 && !cur->has_host) ||
	    sodium_base642bin((unsigned char *)cur->buf[s] + cur->len[s],
	    cur->want[s] - cur->len[s], d->valuestring,
	    strlen(d->valuestring), NULL, &got, NULL,
	    sodium_base64_VARIANT_ORIGINAL) != 0) {
		snprintf(why, whylen, "line %zu: probe.data does not continue "
		    "its row's %s output", lineno, s >= 0 ? st->valuestring :
		    "?");
		return -1;
	}
	cur->len[s] += got;
	cur->buf[s][cur->len[s]] = '\0';
	return 0;
}

/*
 * Parse the verified chain text buf (lines) into o: the facts, then every
 * recorded row with its streams reassembled.  0, or -1 with why naming
 * the line.
 */
int
probe_obs_parse(const char *buf, size_t len, struct probe_obs_read *o,
    char *why, size_t whylen)
{
	size_t pos = 0, lineno = 0;
	bool started = false;
	struct probe_obs_rec *cur = NULL;
	int rc = -1;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
		cJSON *j = cJSON_ParseWithLength(buf + pos, n);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
		const cJSON *rowv = cJSON_GetObjectItemCaseSensitive(j, "row");
		const char *type = cJSON_IsString(t) ? t->valuestring : "";

		pos += n + 1;
		lineno++;
		if (!cJSON_IsObject(j)) {
			snprintf(why, whylen, "line %zu: not JSON", lineno);
			cJSON_Delete(j);
			goto out;
		}
		if (strcmp(type, "genesis") == 0) {
			cJSON_Delete(j);
			continue;
		}
		if (!started) {
			if (strcmp(type, "probe.start") != 0 ||
			    probe_obs_facts(j, o, why, whylen) == -1) {
				if (strcmp(type, "probe.start") != 0)
					snprintf(why, whylen, "line %zu: %s before "
					    "probe.start", lineno, type);
				cJSON_Delete(j);
				goto out;
			}
			started = true;
		} else if (strcmp(type, "probe.row") == 0) {
			if (probe_obs_rec_start(j, rowv, lineno, o, &cur, why,
			    whylen) == -1) {
				cJSON_Delete(j);
				goto out;
			}
		} else if (strcmp(type, "probe.data") == 0) {
			if (probe_obs_rec_data(j, rowv, lineno, cur, why,
			    whylen) == -1) {
				cJSON_Delete(j);
				goto out;
			}
		} else {
			snprintf(why, whylen, "line %zu: unknown type %.40s",
			    lineno, type);
			cJSON_Delete(j);
			goto out;
		}
		cJSON_Delete(j);
	}
	if (!started) {
		snprintf(why, whylen, "no probe.start line");
		goto out;
	}
	if (probe_obs_short(cur)) {
		snprintf(why, whylen, "row %s: its output is incomplete",
		    cur->row);
		goto out;
	}
	rc = 0;
out:
	return rc;
}

/* Evaluate the recorded row rec of row again (the same pure evaluator the
 * battery ran, on the same bytes) into res. */
void
probe_obs_eval(const struct probe_obs_read *o, const struct probe_row *row,
    const struct probe_obs_rec *rec, struct probe_result *res)
{
	struct probe_exec x = { 0 };

	memset(res, 0, sizeof *res);
	res->row = row;
	res->obs_seq = rec->seq;
	if (!rec->ran) {
		res->outcome = PROBE_ERROR;
		snprintf(res->observed, sizeof res->observed, "%s",
		    rec->observed);
		return;
	}
	x.exit_code = rec->exit_code;
	x.out = rec->buf[0];
	x.out_len = rec->len[0];
	x.err = rec->buf[1];
	x.err_len = rec->len[1];
	if (rec->has_host) {
		x.host = rec->buf[2];
		x.host_len = rec->len[2];
	}
	probe_evaluate(row, &o->ctx, &x, res);
}
