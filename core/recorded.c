/*
 * recorded.c - what the console shows of a recorded dir without verifying
 * it: a run (report.json), a trial (trial.json), a fix (fix.json) or a
 * probe (probe.json).  Every file is read bounded and never followed
 * through a symlink; every string is sanitized and cut; numbers are
 * range-checked.  Nothing here is a verdict anyone should rely on: the
 * screens that open these dirs run the verifiers (ares verify's) and say
 * what those found.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core.h"
#include "util.h"

#define RECORDED_MAX_SMALL  (1024 * 1024)         /* report.json, fix.json */
#define RECORDED_MAX_TRIAL  (16 * 1024 * 1024)    /* trial.json (its bound) */
#define RECORDED_MAX_TEXT   (64 * 1024)           /* policy.patch, pr.md */

/* Copy at most n-1 bytes of src (our own or already sanitized text). */
static void
recorded_copy(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* A sanitized copy of o[key] when it is a string, else "" (false). */
static bool
recorded_str(const cJSON *o, const char *key, char *dst, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	dst[0] = '\0';
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return false;
	util_sanitize(dst, n, v->valuestring, strlen(v->valuestring), false);
	return true;
}

/* o[key] when it is a finite number in [lo, hi], else def. */
static double
recorded_num(const cJSON *o, const char *key, double lo, double hi,
    double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    v->valuedouble < lo || v->valuedouble > hi)
		return def;
	return v->valuedouble;
}

/* Whether s is a plain id: 1..63 of [A-Za-z0-9._-], not "." or "..". */
static bool
recorded_id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* "2026-12-01T12:59:21.43Z" -> Unix seconds; -1 when it is not one. */
static int64_t
recorded_iso(const char *s)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi,
	    &sec) != 6 || y < 2000 || y > 9999 || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || h < 0 ||
	    mi < 0 || sec < 0)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return (int64_t)timegm(&tm);
}

/* Parse dir/name (at most max bytes, no symlink) as a JSON object; NULL
 * when it is absent, too large or not an object.  *mtime gets the file's
 * modification time when it could be read.  Caller deletes. */
static cJSON *
recorded_json(const char *dir, const char *name, size_t max, int64_t *mtime)
{
	struct errbuf e = { 0 };
	struct stat sb;
	char *p = xasprintf("%s/%s", dir, name), *buf;
	size_t len = 0;
	cJSON *j;

	if (mtime != NULL && lstat(p, &sb) == 0)
		*mtime = (int64_t)sb.st_mtime;
	buf = util_read_regular(p, max, &len, &e);
	free(p);
	if (buf == NULL)
		return NULL;
	j = cJSON_ParseWithLength(buf, len);
	free(buf);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* The last path component of a policy path, without ".yaml". */
static void
recorded_policy_name(char *s)
{
	char *b = strrchr(s, '/');
	size_t n;

	if (b != NULL)
		memmove(s, b + 1, strlen(b + 1) + 1);
	n = strlen(s);
	if (n > 5 && strcmp(s + n - 5, ".yaml") == 0)
		s[n - 5] = '\0';
}

/* A trial's verdict word from its counts (trial_exit_code's order). */
static const char *
recorded_trial_word(const struct trial *t)
{
	int code = trial_exit_code(t);

	return code == EXIT_CONTAINED ? "contained" : code == 1 ? "breached" :
	    code == 4 ? "not-exercised" : "error";
}

int
recorded_info(const char *dir, struct recorded_info *out)
{
	int64_t mtime = -1;
	cJSON *j;

	memset(out, 0, sizeof *out);
	out->ttk_ms = -1;
	out->when = -1;
	if (trial_dir_is(dir)) {
		struct trial t = { 0 };
		struct errbuf e = { 0 };

		out->kind = RECORDED_TRIAL;
		if (recorded_trial_load(dir, &t, &out->when, &e) == -1) {
			recorded_copy(out->verdict, sizeof out->verdict,
			    "unreadable");
			return -1;
		}
		recorded_copy(out->verdict, sizeof out->verdict,
		    recorded_trial_word(&t));
		recorded_copy(out->policy, sizeof out->policy, t.policy);
		recorded_policy_name(out->policy);
		out->ttk_ms = t.sum.nttk > 0 ? t.sum.ttk_median : -1;
		out->n = t.n;
		out->done = t.sum.finished;
		out->complete = t.complete;
		trial_free(&t);
		return 0;
	}
	if (fix_dir_is(dir)) {
		out->kind = RECORDED_FIX;
		j = recorded_json(dir, "fix.json", RECORDED_MAX_SMALL, &mtime);
		out->when = mtime;
		if (j == NULL) {
			recorded_copy(out->verdict, sizeof out->verdict,
			    "unreadable");
			return -1;
		}
		recorded_str(j, "outcome", out->verdict, sizeof out->verdict);
		recorded_str(j, "policy_name", out->policy, sizeof out->policy);
		if (out->policy[0] == '\0') {
			recorded_str(j, "policy", out->policy,
			    sizeof out->policy);
			recorded_policy_name(out->policy);
		}
		{
			const cJSON *runs = cJSON_GetObjectItemCaseSensitive(j,
			    "runs");

			out->n = cJSON_IsArray(runs) ?
			    (size_t)cJSON_GetArraySize(runs) : 0;
		}
		cJSON_Delete(j);
		return 0;
	}
	j = recorded_json(dir, "report.json", RECORDED_MAX_SMALL, &mtime);
	out->kind = RECORDED_RUN;
	if (j == NULL) {
		j = recorded_json(dir, "probe.json", RECORDED_MAX_SMALL, &mtime);
		if (j != NULL) {
			const cJSON *h = cJSON_GetObjectItemCaseSensitive(j,
			    "held");

			out->kind = RECORDED_PROBE;
			recorded_copy(out->verdict, sizeof out->verdict,
			    cJSON_IsBool(h) ? (cJSON_IsTrue(h) ? "held" :
			    "failed") : "probe");
		}
	}
	out->when = mtime;
	if (j == NULL) {
		recorded_copy(out->verdict, sizeof out->verdict,
		    "no report");
		return -1;
	}
	if (out->kind == RECORDED_RUN)
		recorded_str(j, "verdict", out->verdict, sizeof out->verdict);
	recorded_str(j, "policy", out->policy, sizeof out->policy);
	recorded_policy_name(out->policy);
	{
		char at[64];

		if (recorded_str(j, "generated_at", at, sizeof at) &&
		    recorded_iso(at) > 0)
			out->when = recorded_iso(at);
	}
	out->ttk_ms = recorded_num(j, "time_to_kill_ms", 0, 1e12, -1);
	cJSON_Delete(j);
	return 0;
}

void
recorded_age(int64_t then, int64_t now, char *out, size_t n)
{
	int64_t d = now - then;

	if (then < 0)
		snprintf(out, n, "-");
	else if (d < 0)
		snprintf(out, n, "just now");
	else if (d < 60)
		snprintf(out, n, "%llds ago", (long long)d);
	else if (d < 3600)
		snprintf(out, n, "%lld min ago", (long long)(d / 60));
	else if (d < 86400)
		snprintf(out, n, "%lld h ago", (long long)(d / 3600));
	else if (d < 86400LL * 60)
		snprintf(out, n, "%lld d ago", (long long)(d / 86400));
	else
		snprintf(out, n, "%lld mo ago", (long long)(d / (86400LL * 30)));
}

int
recorded_trial_load(const char *dir, struct trial *t, int64_t *when,
    struct errbuf *e)
{
	int64_t mtime = -1;
	cJSON *j = recorded_json(dir, "trial.json", RECORDED_MAX_TRIAL, &mtime);
	const cJSON *runs, *r;
	char at[64];

	memset(t, 0, sizeof *t);
	if (j == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "%s/trial.json: missing, larger "
		    "than %d MiB or not a JSON object", dir,
		    RECORDED_MAX_TRIAL >> 20);
		return -1;
	}
	recorded_str(j, "trial_id", t->id, sizeof t->id);
	recorded_copy(t->dir, sizeof t->dir, dir);
	recorded_str(j, "policy", t->policy, sizeof t->policy);
	t->n = (size_t)recorded_num(j, "n", 0, TRIAL_MAX_RUNS, 0);
	/* --engine (ares-trial-v2): each run's engine and failed attempts */
	t->multi = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j,
	    "engines"));
	t->jobs = (size_t)recorded_num(j, "j", 0, t->multi ?
	    TRIAL_MAX_ENGINES * TRIAL_ENGINE_CAP_MAX : TRIAL_MAX_JOBS, 0);
	t->level = recorded_num(j, "level", 1e-9, 1 - 1e-9, 0.95);
	t->complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j,
	    "complete"));
	if (when != NULL) {
		*when = mtime;
		if (recorded_str(j, "generated_at", at, sizeof at) &&
		    recorded_iso(at) > 0)
			*when = recorded_iso(at);
	}
	runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	if (t->n == 0 || !cJSON_IsArray(runs)) {
		cJSON_Delete(j);
		errbuf_set(e, ERRBUF_INPUT, "%s/trial.json: no n or no runs",
		    dir);
		return -1;
	}
	t->runs = xcalloc(t->n, sizeof *t->runs);
	for (size_t i = 0; i < t->n; i++) {
		t->runs[i].index = i;
		t->runs[i].time_to_kill_ms = -1;
	}
	cJSON_ArrayForEach(r, runs) {
		size_t idx;
		struct trial_run *tr;
		double ttk;

		if (!cJSON_IsObject(r))
			continue;
		{
			double x = recorded_num(r, "index", 0,
			    (double)t->n - 1, -1);

			if (x < 0 || x != floor(x))
				continue;     /* not one of 0..n-1 */
			idx = (size_t)x;
		}
		tr = &t->runs[idx];
		if (tr->done)
			continue;         /* a repeated index: the first */
		tr->done = true;
		recorded_str(r, "run_id", tr->run_id, sizeof tr->run_id);
		if (!recorded_id_ok(tr->run_id))
			tr->run_id[0] = '\0';
		if (tr->run_id[0] != '\0')
			snprintf(tr->run_dir, sizeof tr->run_dir, "runs/%s",
			    tr->run_id);
		recorded_str(r, "verdict", tr->verdict, sizeof tr->verdict);
		if (strcmp(tr->verdict, "contained") != 0 &&
		    strcmp(tr->verdict, "breached") != 0 &&
		    strcmp(tr->verdict, "not-exercised") != 0)
			recorded_copy(tr->verdict, sizeof tr->verdict,
			    "error");
		recorded_str(r, "reason", tr->reason, sizeof tr->reason);
		tr->bait_fired = cJSON_IsTrue(
		    cJSON_GetObjectItemCaseSensitive(r, "bait_fired"));
		tr->leaks = (size_t)recorded_num(r, "leaks", 0, 1e9, 0);
		ttk = recorded_num(r, "time_to_kill_ms", 0, 1e12, -1);
		tr->time_to_kill_ms = ttk;
		if (t->multi) {
			const cJSON *at = cJSON_GetObjectItemCaseSensitive(r,
			    "attempts"), *x;

			recorded_str(r, "engine", tr->engine, sizeof tr->engine);
			cJSON_ArrayForEach(x, at) {
				struct trial_attempt *a;

				if (tr->nattempts >= TRIAL_MAX_ATTEMPTS)
					break;
				tr->attempts = xrealloc(tr->attempts,
				    (tr->nattempts + 1) * sizeof *tr->attempts);
				a = &tr->attempts[tr->nattempts++];
				memset(a, 0, sizeof *a);
				recorded_str(x, "engine", a->engine,
				    sizeof a->engine);
				recorded_str(x, "reason", a->reason,
				    sizeof a->reason);
			}
		}
	}
	cJSON_Delete(j);
	trial_summarize(t);
	return 0;
}

/* dir/name as text for a screen: at most RECORDED_MAX_TEXT bytes, sanitized
 * (newlines kept), or NULL.  Caller frees. */
static char *
recorded_text(const char *dir, const char *name)
{
	struct errbuf e = { 0 };
	char *p = xasprintf("%s/%s", dir, name), *buf, *out;
	size_t len = 0;
	struct stat sb;

	if (lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		free(p);
		return NULL;
	}
	if ((size_t)sb.st_size > RECORDED_MAX_TEXT) {
		free(p);
		return xasprintf("(%s is %lld bytes: see the file)", name,
		    (long long)sb.st_size);
	}
	buf = util_read_regular(p, RECORDED_MAX_TEXT, &len, &e);
	free(p);
	if (buf == NULL)
		return NULL;
	out = xmalloc(len + 1);
	util_sanitize(out, len + 1, buf, len, true);
	free(buf);
	return out;
}

int
recorded_fix_load(const char *dir, struct recorded_fix *f, struct errbuf *e)
{
	int64_t mtime = -1;
	cJSON *j = recorded_json(dir, "fix.json", RECORDED_MAX_SMALL, &mtime);
	const cJSON *runs, *r, *rem;
	char *abs, *slash;

	memset(f, 0, sizeof *f);
	if (j == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "%s/fix.json: missing, larger "
		    "than 1 MiB or not a JSON object", dir);
		return -1;
	}
	recorded_copy(f->dir, sizeof f->dir, dir);
	f->when = mtime;
	recorded_str(j, "fix_id", f->fix_id, sizeof f->fix_id);
	recorded_str(j, "outcome", f->outcome, sizeof f->outcome);
	recorded_str(j, "reason", f->reason, sizeof f->reason);
	recorded_str(j, "policy_name", f->policy, sizeof f->policy);
	if (f->policy[0] == '\0') {
		recorded_str(j, "policy", f->policy, sizeof f->policy);
		recorded_policy_name(f->policy);
	}
	rem = cJSON_GetObjectItemCaseSensitive(j, "removed");
	if (cJSON_IsArray(rem)) {
		cJSON_ArrayForEach(r, rem) {
			if (f->nremoved >= RECORDED_FIX_REMOVED)
				break;
			if (cJSON_IsString(r) && r->valuestring != NULL)
				util_sanitize(f->removed[f->nremoved++],
				    sizeof f->removed[0], r->valuestring,
				    strlen(r->valuestring), false);
		}
	}
	/* the runs are next to the fix dir (RUNS/<run id>), else where
	 * fix.json says (an absolute path it names: it opens only as a run
	 * dir the replay verifies) */
	abs = realpath(dir, NULL);
	slash = abs != NULL ? strrchr(abs, '/') : NULL;
	if (slash != NULL)
		*slash = '\0';
	runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	if (cJSON_IsArray(runs)) {
		cJSON_ArrayForEach(r, runs) {
			struct recorded_fix_run *x;
			struct stat sb;
			char *p;

			if (f->nruns >= RECORDED_FIX_RUNS)
				break;
			if (!cJSON_IsObject(r))
				continue;
			x = &f->runs[f->nruns++];
			recorded_str(r, "role", x->role, sizeof x->role);
			recorded_str(r, "run_id", x->run_id, sizeof x->run_id);
			recorded_str(r, "verdict", x->verdict,
			    sizeof x->verdict);
			recorded_str(r, "variant", x->variant,
			    sizeof x->variant);
			x->ttk_ms = recorded_num(r, "time_to_kill_ms", 0, 1e12,
			    -1);
			if (!recorded_id_ok(x->run_id))
				continue;
			if (slash != NULL) {
				p = xasprintf("%s/%s/evidence.jsonl",
				    abs[0] ? abs : "", x->run_id);
				if (stat(p, &sb) == 0)
					recorded_copy(x->dir, sizeof x->dir, p);
				free(p);
				/* cut "/evidence.jsonl" off again */
				if ((p = strrchr(x->dir, '/')) != NULL)
					*p = '\0';
			}
			if (x->dir[0] == '\0') {
				char rd[1024];

				recorded_str(r, "run_dir", rd, sizeof rd);
				p = xasprintf("%s/evidence.jsonl", rd);
				if (rd[0] == '/' && strstr(rd, "/../") == NULL &&
				    stat(p, &sb) == 0)
					recorded_copy(x->dir, sizeof x->dir,
					    rd);
				free(p);
			}
		}
	}
	free(abs);
	cJSON_Delete(j);
	f->patch = recorded_text(dir, "policy.patch");
	f->pr = recorded_text(dir, "pr.md");
	if (f->pr != NULL)
		recorded_copy(f->pr_name, sizeof f->pr_name, "pr.md");
	else if ((f->pr = recorded_text(dir, "attempt.md")) != NULL)
		recorded_copy(f->pr_name, sizeof f->pr_name, "attempt.md");
	return 0;
}

void
recorded_fix_free(struct recorded_fix *f)
{
	free(f->patch);
	free(f->pr);
	f->patch = f->pr = NULL;
}
