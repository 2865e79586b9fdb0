/*
 * trial_engines.c - the engines of `ares trial --engine URL ...` and
 * `--engines FILE` (docs/cli-trial.md#engines): the list, its bounded
 * YAML file, and the scheduler's pure part (which run an engine takes
 * next, when a failed drill means its engine went away, and what then
 * happens to the run: a failed attempt, rerun elsewhere).
 *
 * The file (at most TRIAL_ENGINES_FILE_MAX bytes, libyaml events, no
 * anchors, aliases or tags, one document):
 *
 *     engines:
 *       - url: unix:///var/run/docker.sock
 *         capacity: 2
 *       - url: tcp://10.0.0.5:2376
 *         capacity: 4
 *         cert_path: /etc/ares/engine-b     # ca.pem, cert.pem, key.pem
 *
 * Errors: "FILE:LINE:COL: field: problem" (ERRBUF_INPUT).
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define TRIAL_ENGINES_FILE_MAX (64 * 1024)
#define TRIAL_ENGINES_SCALAR_MAX 1024

int
trial_engine_set(struct trial_engine *en, const char *url, const char *what,
    const char *cert_path, size_t capacity, struct errbuf *e)
{
	struct docker_host h;

	memset(en, 0, sizeof *en);
	if (docker_host_parse(url, what, &h, e) == -1)
		return -1;
	if (strlen(url) >= sizeof en->url)
		return errbuf_set(e, ERRBUF_INPUT, "%s: too long", what);
	if (cert_path != NULL && h.kind != DOCKER_TCP)
		return errbuf_set(e, ERRBUF_INPUT, "%s=%.200s: cert_path only "
		    "goes with a tcp:// engine", what, url);
	if (cert_path != NULL && (cert_path[0] == '\0' ||
	    strlen(cert_path) >= sizeof en->cert_path))
		return errbuf_set(e, ERRBUF_INPUT, "%s: cert_path empty or "
		    "longer than %zu bytes", what, sizeof en->cert_path - 1);
	if (capacity < 1 || capacity > TRIAL_ENGINE_CAP_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "%s: capacity %zu: want "
		    "1..%d", what, capacity, TRIAL_ENGINE_CAP_MAX);
	snprintf(en->url, sizeof en->url, "%s", url);
	if (cert_path != NULL)
		snprintf(en->cert_path, sizeof en->cert_path, "%s", cert_path);
	en->capacity = capacity;
	/* the name people and trial.json see: no ssh user, no TLS path */
	switch (h.kind) {
	case DOCKER_UNIX:
		snprintf(en->name, sizeof en->name, "unix://%s", h.path);
		break;
	case DOCKER_TCP:
	case DOCKER_SSH:
		snprintf(en->name, sizeof en->name, h.ipv6 ? "%s://[%s]" :
		    "%s://%s", h.kind == DOCKER_TCP ? "tcp" : "ssh", h.name);
		if (h.port != 0) {
			size_t l = strlen(en->name);

			snprintf(en->name + l, sizeof en->name - l, ":%d",
			    h.port);
		}
		break;
	}
	return 0;
}

/* ---- the engines file ----------------------------------------------- */

struct eparse {
	const char *file;
	struct errbuf *e;
	yaml_parser_t ps;
	yaml_event_t ev;
	bool have_ev;
};

static int
ep_err(struct eparse *p, yaml_mark_t m, const char *field, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

/* "FILE:LINE:COL: field: problem" (field may be ""). */
static int
ep_err(struct eparse *p, yaml_mark_t m, const char *field, const char *fmt,
    ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return errbuf_set(p->e, ERRBUF_INPUT, "%s:%zu:%zu: %s%s%s", p->file,
	    (size_t)m.line + 1, (size_t)m.column + 1, field, field[0] ? ": " :
	    "", msg);
}

/* The next event into p->ev (the previous one deleted).  No anchors,
 * aliases or tags.  -1 + e. */
static int
ep_next(struct eparse *p)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;

	if (p->have_ev)
		yaml_event_delete(&p->ev);
	p->have_ev = false;
	if (!yaml_parser_parse(&p->ps, &p->ev)) {
		yaml_mark_t m = p->ps.problem_mark;

		return ep_err(p, m, "", "YAML: %s", p->ps.problem != NULL ?
		    p->ps.problem : "syntax error");
	}
	p->have_ev = true;
	switch (p->ev.type) {
	case YAML_ALIAS_EVENT:
		return ep_err(p, p->ev.start_mark, "", "aliases are not "
		    "allowed");
	case YAML_SCALAR_EVENT:
		anchor = p->ev.data.scalar.anchor;
		tag = p->ev.data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = p->ev.data.sequence_start.anchor;
		tag = p->ev.data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = p->ev.data.mapping_start.anchor;
		tag = p->ev.data.mapping_start.tag;
		break;
	default:
		break;
	}
	if (anchor != NULL || tag != NULL)
		return ep_err(p, p->ev.start_mark, "", "anchors and tags are "
		    "not allowed");
	if (p->ev.type == YAML_SCALAR_EVENT &&
	    p->ev.data.scalar.length > TRIAL_ENGINES_SCALAR_MAX)
		return ep_err(p, p->ev.start_mark, "", "a value longer than "
		    "%d bytes", TRIAL_ENGINES_SCALAR_MAX);
	return 0;
}

static const char *
ep_scalar(const struct eparse *p)
{
	return (const char *)p->ev.data.scalar.value;
}

/* What the current event is, for messages. */
static const char *
ep_what(const struct eparse *p)
{
	switch (p->ev.type) {
	case YAML_SEQUENCE_START_EVENT:
		return "a list";
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SCALAR_EVENT:
		return "a scalar";
	default:
		return "nothing";
	}
}

/* One engine's mapping (the MAPPING_START is current) into en.  -1 + e. */
static int
ep_engine(struct eparse *p, size_t idx, size_t dflt_cap,
    struct trial_engine *en, yaml_mark_t *url_mark)
{
	char field[64], what[600], url[TRIAL_ENGINES_SCALAR_MAX + 1] = "";
	char cert[TRIAL_ENGINES_SCALAR_MAX + 1] = "";
	bool has_url = false, has_cap = false, has_cert = false;
	yaml_mark_t start = p->ev.start_mark, um = start, cm = start;
	size_t cap = dflt_cap;

	for (;;) {
		char key[32];
		yaml_mark_t km, vm;

		if (ep_next(p) == -1)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		km = p->ev.start_mark;
		if (p->ev.type != YAML_SCALAR_EVENT) {
			snprintf(field, sizeof field, "engines[%zu]", idx);
			return ep_err(p, km, field, "want url, capacity or "
			    "cert_path keys, not %s", ep_what(p));
		}
		snprintf(key, sizeof key, "%.31s", ep_scalar(p));
		snprintf(field, sizeof field, "engines[%zu].%.31s", idx, key);
		if (strcmp(key, "url") != 0 && strcmp(key, "capacity") != 0 &&
		    strcmp(key, "cert_path") != 0)
			return ep_err(p, km, field, "unknown key (url, "
			    "capacity, cert_path)");
		if ((strcmp(key, "url") == 0 && has_url) ||
		    (strcmp(key, "capacity") == 0 && has_cap) ||
		    (strcmp(key, "cert_path") == 0 && has_cert))
			return ep_err(p, km, field, "given twice");
		if (ep_next(p) == -1)
			return -1;
		vm = p->ev.start_mark;
		if (p->ev.type != YAML_SCALAR_EVENT)
			return ep_err(p, vm, field, "want a scalar, not %s",
			    ep_what(p));
		if (strcmp(key, "url") == 0) {
			has_url = true;
			um = vm;
			snprintf(url, sizeof url, "%s", ep_scalar(p));
		} else if (strcmp(key, "cert_path") == 0) {
			has_cert = true;
			cm = vm;
			snprintf(cert, sizeof cert, "%s", ep_scalar(p));
			if (cert[0] != '/')
				return ep_err(p, vm, field, "want an absolute "
				    "directory path");
		} else {
			uint64_t v;

			has_cap = true;
			if (stats_parse_count(ep_scalar(p),
			    TRIAL_ENGINE_CAP_MAX, &v) == -1 || v == 0)
				return ep_err(p, vm, field, "\"%.32s\": want an "
				    "integer 1..%d", ep_scalar(p),
				    TRIAL_ENGINE_CAP_MAX);
			cap = (size_t)v;
		}
	}
	if (!has_url) {
		snprintf(field, sizeof field, "engines[%zu]", idx);
		return ep_err(p, start, field, "no url");
	}
	*url_mark = um;
	/* the URL's own errors, as DOCKER_HOST's (docs/engine.md) */
	snprintf(what, sizeof what, "%s:%zu:%zu: engines[%zu].url", p->file,
	    (size_t)um.line + 1, (size_t)um.column + 1, idx);
	if (trial_engine_set(en, url, what, NULL, cap, p->e) == -1)
		return -1;
	if (has_cert && strncmp(url, "tcp://", 6) != 0) {
		snprintf(field, sizeof field, "engines[%zu].cert_path", idx);
		return ep_err(p, cm, field, "only goes with a tcp:// engine");
	}
	if (has_cert)
		snprintf(en->cert_path, sizeof en->cert_path, "%s", cert);
	return 0;
}

int
trial_engines_parse(const char *file, const char *buf, size_t len,
    size_t dflt_cap, struct trial_engine *out, size_t *n, struct errbuf *e)
{
	struct eparse p;
	bool seen_engines = false;
	int rc = -1;

	*n = 0;
	memset(&p, 0, sizeof p);
	p.file = file;
	p.e = e;
	if (len > TRIAL_ENGINES_FILE_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "%s: larger than %d bytes",
		    file, TRIAL_ENGINES_FILE_MAX);
	if (memchr(buf, '\0', len) != NULL)
		return errbuf_set(e, ERRBUF_INPUT, "%s: a NUL byte", file);
	if (!yaml_parser_initialize(&p.ps))
		util_fatal("yaml_parser_initialize failed");
	yaml_parser_set_input_string(&p.ps, (const unsigned char *)buf, len);
	yaml_parser_set_encoding(&p.ps, YAML_UTF8_ENCODING);
	if (ep_next(&p) == -1 || ep_next(&p) == -1)   /* stream, document */
		goto out;
	if (p.ev.type != YAML_DOCUMENT_START_EVENT) {
		ep_err(&p, p.ev.start_mark, "", "empty file (want engines: "
		    "a list)");
		goto out;
	}
	if (ep_next(&p) == -1)
		goto out;
	if (p.ev.type != YAML_MAPPING_START_EVENT) {
		ep_err(&p, p.ev.start_mark, "", "want a mapping with the key "
		    "engines, not %s", ep_what(&p));
		goto out;
	}
	for (;;) {
		if (ep_next(&p) == -1)
			goto out;
		if (p.ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (p.ev.type != YAML_SCALAR_EVENT ||
		    strcmp(ep_scalar(&p), "engines") != 0) {
			ep_err(&p, p.ev.start_mark, p.ev.type ==
			    YAML_SCALAR_EVENT ? ep_scalar(&p) : "", "unknown "
			    "key (only engines)");
			goto out;
		}
		if (seen_engines) {
			ep_err(&p, p.ev.start_mark, "engines", "given twice");
			goto out;
		}
		seen_engines = true;
		if (ep_next(&p) == -1)
			goto out;
		if (p.ev.type != YAML_SEQUENCE_START_EVENT) {
			ep_err(&p, p.ev.start_mark, "engines", "want a list, "
			    "not %s", ep_what(&p));
			goto out;
		}
		for (;;) {
			char field[32];
			yaml_mark_t um;

			if (ep_next(&p) == -1)
				goto out;
			if (p.ev.type == YAML_SEQUENCE_END_EVENT)
				break;
			snprintf(field, sizeof field, "engines[%zu]", *n);
			if (p.ev.type != YAML_MAPPING_START_EVENT) {
				ep_err(&p, p.ev.start_mark, field, "want a "
				    "mapping (url, capacity, cert_path), not %s",
				    ep_what(&p));
				goto out;
			}
			if (*n >= TRIAL_MAX_ENGINES) {
				ep_err(&p, p.ev.start_mark, field, "more than "
				    "%d engines", TRIAL_MAX_ENGINES);
				goto out;
			}
			if (ep_engine(&p, *n, dflt_cap, &out[*n], &um) == -1)
				goto out;
			for (size_t k = 0; k < *n; k++)
				if (strcmp(out[k].name, out[*n].name) == 0) {
					ep_err(&p, um, field,
					    "engine %s is listed twice (as "
					    "engines[%zu])", out[*n].name, k);
					goto out;
				}
			(*n)++;
		}
	}
	if (ep_next(&p) == -1)
		goto out;
	if (p.ev.type != YAML_DOCUMENT_END_EVENT || ep_next(&p) == -1 ||
	    p.ev.type != YAML_STREAM_END_EVENT) {
		ep_err(&p, p.ev.start_mark, "", "more than one document");
		goto out;
	}
	if (*n == 0) {
		ep_err(&p, p.ev.start_mark, "engines", "no engine listed");
		goto out;
	}
	rc = 0;
out:
	if (p.have_ev)
		yaml_event_delete(&p.ev);
	yaml_parser_delete(&p.ps);
	if (rc == -1)
		*n = 0;
	return rc;
}

int
trial_engines_from_options(const struct trial_options *o, size_t dflt_cap,
    struct trial_engine **out, size_t *n, struct errbuf *e)
{
	struct trial_engine *en = xcalloc(TRIAL_MAX_ENGINES, sizeof *en);
	size_t i, k, nf = 0;

	*out = NULL;
	*n = 0;
	if (o->nengine_urls > TRIAL_MAX_ENGINES) {
		free(en);
		return errbuf_set(e, ERRBUF_INPUT, "--engine: more than %d "
		    "engines", TRIAL_MAX_ENGINES);
	}
	for (i = 0; i < o->nengine_urls; i++)
		if (trial_engine_set(&en[i], o->engine_urls[i], "--engine",
		    NULL, dflt_cap, e) == -1)
			goto fail;
	if (o->engines_file != NULL) {
		size_t len;
		char *buf = util_read_input(o->engines_file, "--engines",
		    TRIAL_ENGINES_FILE_MAX, &len, e);

		if (buf == NULL)
			goto fail;
		if (trial_engines_parse(o->engines_file, buf, len, dflt_cap,
		    en + i, &nf, e) == -1) {
			free(buf);
			goto fail;
		}
		free(buf);
		if (i + nf > TRIAL_MAX_ENGINES) {
			errbuf_set(e, ERRBUF_INPUT, "--engine and --engines: "
			    "more than %d engines", TRIAL_MAX_ENGINES);
			goto fail;
		}
	}
	for (i = 0; i < o->nengine_urls + nf; i++)
		for (k = 0; k < i; k++)
			if (strcmp(en[i].name, en[k].name) == 0) {
				errbuf_set(e, ERRBUF_INPUT, "engine %s is given "
				    "twice", en[i].name);
				goto fail;
			}
	*out = en;
	*n = o->nengine_urls + nf;
	return 0;
fail:
	free(en);
	return -1;
}

/* ---- the scheduler's pure part ---------------------------------------- */

long
trial_sched_next(const struct trial *t, const bool *taken, size_t engine,
    bool stop)
{
	size_t i;

	if (stop || (t->multi && (engine >= t->nengines ||
	    t->engines[engine].down)))
		return -1;
	for (i = 0; i < t->n; i++)
		if (!t->runs[i].done && !taken[i])
			return (long)i;
	return -1;
}

bool
trial_sched_engine_lost(int rc, int err_code, bool drill_engine_lost,
    bool verdict_error, bool engine_answers)
{
	/* A drill that reached a verdict (anything but error) is a result,
	 * whatever happened to its engine: a breach that also lost its
	 * engine is a breach (trial_sched_engine_down marks it down). */
	if (rc != -1 && !verdict_error)
		return false;
	if (rc == -1 && err_code == ERRBUF_ENGINE)
		return true;          /* could not reach it at all */
	if (drill_engine_lost)
		return true;          /* the drill saw it go (engine.lost) */
	/* a drill's own error, unless the engine no longer answers */
	return (rc == -1 || verdict_error) && !engine_answers;
}

void
trial_sched_engine_down(struct trial *t, size_t engine, const char *reason)
{
	struct trial_engine *en = &t->engines[engine];

	if (!en->down) {
		en->down = true;
		util_sanitize(en->down_reason, sizeof en->down_reason, reason,
		    strlen(reason), false);
	}
}

void
trial_sched_requeue(struct trial *t, bool *taken, size_t engine,
    struct trial_run *run, const char *run_id, const char *reason)
{
	struct trial_engine *en = &t->engines[engine];
	struct trial_attempt *a;

	taken[run->index] = false;
	trial_sched_engine_down(t, engine, reason);
	if (run->nattempts >= TRIAL_MAX_ATTEMPTS)
		return;   /* bounded: the rest are not kept */
	run->attempts = xrealloc(run->attempts, (run->nattempts + 1) *
	    sizeof *run->attempts);
	a = &run->attempts[run->nattempts++];
	memset(a, 0, sizeof *a);
	snprintf(a->engine, sizeof a->engine, "%s", en->name);
	if (run_id != NULL && run_id[0] != '\0') {
		snprintf(a->run_id, sizeof a->run_id, "%.63s", run_id);
		snprintf(a->run_dir, sizeof a->run_dir, "runs/%.63s", run_id);
	}
	util_sanitize(a->reason, sizeof a->reason, reason, strlen(reason),
	    false);
}

int
trial_engines_same(const struct trial *t, size_t k, struct errbuf *e)
{
	const struct trial_engine *en = &t->engines[k];
	size_t i;

	if (en->engine_id[0] == '\0')
		return 0;
	for (i = 0; i < k; i++)
		if (strcmp(t->engines[i].engine_id, en->engine_id) == 0)
			return errbuf_set(e, ERRBUF_INPUT, "engines %s and %s "
			    "are the same engine (ID, name and data root %s): "
			    "give it once, with the capacity it can take",
			    t->engines[i].name, en->name, en->engine_id);
	return 0;
}

size_t
trial_sched_up(const struct trial *t)
{
	size_t i, up = 0;

	for (i = 0; i < t->nengines; i++)
		if (t->engines[i].url[0] != '\0' && !t->engines[i].down)
			up++;
	return up;
}

size_t
trial_sched_strand(struct trial *t)
{
	size_t i, k, n = 0;
	char why[200];
	int len;

	len = snprintf(why, sizeof why, "no healthy engine left (");
	for (k = 0; k < t->nengines && len > 0 && (size_t)len < sizeof why;
	    k++)
		if (t->engines[k].down)
			len += snprintf(why + len, sizeof why - (size_t)len,
			    "%s%s down", n++ ? ", " : "", t->engines[k].name);
	if (len > 0 && (size_t)len < sizeof why - 1)
		snprintf(why + len, sizeof why - (size_t)len, ")");
	n = 0;
	for (i = 0; i < t->n; i++)
		if (!t->runs[i].done)
			n++;
	/* they stay not done (with their attempts): the trial is
	 * incomplete, --resume runs them once an engine is back */
	if (n > 0)
		snprintf(t->stopped, sizeof t->stopped, "%s", why);
	return n;
}
