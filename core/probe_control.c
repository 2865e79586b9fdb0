/*
 * probe_control.c - the negative control (docs/probes.md): the hardened
 * base must hold, and with exactly one flaw or weakening on, the battery
 * must fail a row that detects it.  One lab per item, at most two at once
 * (one thread and engine connection each); its JSON and JUnit.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* negative control                                                     */
/* ------------------------------------------------------------------ */

/* Whether row id ran and failed in r. */
static bool
probe_row_failed(const struct probe_report *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].outcome == PROBE_FAIL &&
		    strcmp(r->rows[i].row->id, id) == 0)
			return true;
	return false;
}

/* Whether the negative control saw its item in r: the baseline held, a
 * flaw failed a row that detects it, a weakening failed its row. */
bool
probe_nc_seen(const struct probe_report *r, const char *item)
{
	const struct probe_nc_weakening *w = probe_nc_weakening_find(item);

	if (item[0] == '\0')
		return probe_held(r);
	return w != NULL ? probe_row_failed(r, w->row) :
	    probe_saw_flaw(r, item);
}

struct probe_nc_state {
	const struct probe_nc_options *o;
	struct probe_nc_item *items;
	size_t n, next;
	pthread_mutex_t lock;
};

const struct probe_nc_weakening probe_nc_weakenings[] = {
	{ "host-seal-off", LAB_WEAKEN_HOST_SEAL, "host-ports" },
	{ "sys-admin", LAB_WEAKEN_SYS_ADMIN, "mount" },
};
const size_t probe_nc_nweakenings = sizeof probe_nc_weakenings /
    sizeof probe_nc_weakenings[0];

const struct probe_nc_weakening *
probe_nc_weakening_find(const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < probe_nc_nweakenings; i++)
		if (strcmp(probe_nc_weakenings[i].id, id) == 0)
			return &probe_nc_weakenings[i];
	return NULL;
}

/* One item: base policy with exactly its flaw (or none) on, or with no
 * flaw and one weakening. */
static void
probe_nc_one(struct docker *d, const struct probe_nc_options *o,
    struct probe_nc_item *it)
{
	struct probe_report *r = xcalloc(1, sizeof *r);
	struct errbuf e = { 0 };
	struct policy *p = policy_load(o->policy_path, &e);
	uint64_t t0 = util_mono_ns();
	size_t i;

	const struct probe_nc_weakening *w = probe_nc_weakening_find(it->flaw);

	if (p == NULL)
		goto fail;
	for (i = 0; i < p->nflaws; i++)
		free(p->flaws[i]);
	p->nflaws = 0;
	if (it->flaw[0] != '\0' && w == NULL) {
		p->flaws[0] = xstrdup(it->flaw);
		p->nflaws = 1;
	}
	{
		struct probe_options po = {
			.runs_dir = o->runs_dir, .key_dir = o->key_dir,
			.cancel = o->cancel,
			.weaken = w != NULL ? w->weaken : LAB_WEAKEN_NONE,
			.nc_item = it->flaw,
		};

		if (probe_lab(d, p, &po, r, &e) == -1 && r->nrows == 0)
			goto fail;
	}
	if (r->cancelled) {
		snprintf(it->error, sizeof it->error, "cancelled after %zu of "
		    "%zu rows", r->nrows, r->nplanned);
		it->ran = false;
		snprintf(it->run_id, sizeof it->run_id, "%s", r->run_id);
		snprintf(it->run_dir, sizeof it->run_dir, "%s", r->run_dir);
		policy_free(p);
		free(r);
		it->seconds = (double)(util_mono_ns() - t0) / 1e9;
		return;
	}
	it->ran = r->nrows > 0;
	snprintf(it->run_id, sizeof it->run_id, "%s", r->run_id);
	snprintf(it->run_dir, sizeof it->run_dir, "%s", r->run_dir);
	it->seen = probe_nc_seen(r, it->flaw);
	for (i = 0; i < r->nrows; i++) {
		const struct probe_result *res = &r->rows[i];

		if (res->outcome == PROBE_PASS || !res->row->core)
			continue;
		if (it->flaw[0] != '\0' && (w != NULL ?
		    strcmp(res->row->id, w->row) != 0 :
		    !probe_row_has_flaw(res->row, it->flaw)))
			continue;
		probe_cat(it->rows, sizeof it->rows, "%s%s", it->rows[0] ?
		    ", " : "", res->row->id);
	}
	if (e.code != ERRBUF_NONE)
		util_sanitize(it->error, sizeof it->error, e.msg,
		    strlen(e.msg), false);
	policy_free(p);
	free(r);
	it->seconds = (double)(util_mono_ns() - t0) / 1e9;
	return;
fail:
	util_sanitize(it->error, sizeof it->error, e.msg, strlen(e.msg),
	    false);
	snprintf(it->run_id, sizeof it->run_id, "%s", r->run_id);
	snprintf(it->run_dir, sizeof it->run_dir, "%s", r->run_dir);
	policy_free(p);
	free(r);
	it->seconds = (double)(util_mono_ns() - t0) / 1e9;
}

/* Whether flaw is one of o->flaws (the gate's list). */
static bool
probe_nc_listed(const struct probe_nc_options *o, const char *flaw)
{
	size_t i;

	for (i = 0; i < o->nflaws; i++)
		if (o->flaws[i] != NULL && strcmp(o->flaws[i], flaw) == 0)
			return true;
	return false;
}

/* Worker: its own engine connection; takes items until none is left. */
static void *
probe_nc_worker(void *arg)
{
	struct probe_nc_state *st = arg;
	struct errbuf e = { 0 };
	struct docker *d = docker_connect(NULL, &e);

	for (;;) {
		struct probe_nc_item *it;

		pthread_mutex_lock(&st->lock);
		it = st->next < st->n ? &st->items[st->next++] : NULL;
		pthread_mutex_unlock(&st->lock);
		if (it == NULL)
			break;
		if (probe_cancelled(st->o->cancel)) {
			snprintf(it->error, sizeof it->error, "cancelled");
			continue;
		}
		if (d == NULL) {
			util_sanitize(it->error, sizeof it->error, e.msg,
			    strlen(e.msg), false);
			continue;
		}
		probe_nc_one(d, st->o, it);
	}
	docker_close(d);
	return NULL;
}

int
probe_negative_control(const struct probe_nc_options *o,
    struct probe_nc_item *items, size_t *nitems, struct errbuf *e)
{
	struct probe_nc_state st = { .o = o, .items = items };
	pthread_t th[2];
	struct docker *d;
	struct policy *p;
	char *ref = NULL;
	size_t i, n = 0;
	int nth, k, started = 0;

	*nitems = 0;
	if (o->only_flaw != NULL && flaw_find(o->only_flaw) == NULL &&
	    probe_nc_weakening_find(o->only_flaw) == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "--flaw: unknown flaw '%s' "
		    "(known: %s, and for the negative control host-seal-off, "
		    "sys-admin)", o->only_flaw, flaw_ids());
	p = policy_load(o->policy_path, e);
	if (p == NULL)
		return -1;
	policy_free(p);
	memset(items, 0, PROBE_NC_ITEMS(flaw_count) * sizeof *items);
	n = 1;   /* items[0]: the baseline (flaw "") */
	for (i = 0; i < flaw_count; i++)
		if ((o->only_flaw == NULL && (o->nflaws == 0 ||
		    probe_nc_listed(o, flaw_table[i].id))) ||
		    (o->only_flaw != NULL &&
		    strcmp(o->only_flaw, flaw_table[i].id) == 0))
			snprintf(items[n++].flaw, sizeof items[0].flaw, "%s",
			    flaw_table[i].id);
	for (i = 0; i < probe_nc_nweakenings; i++)
		if ((o->only_flaw == NULL && o->nflaws == 0) ||
		    (o->only_flaw != NULL &&
		    strcmp(o->only_flaw, probe_nc_weakenings[i].id) == 0))
			snprintf(items[n++].flaw, sizeof items[0].flaw, "%s",
			    probe_nc_weakenings[i].id);
	*nitems = n;
	/* Import the image once, before any worker; pin the rootfs path in
	 * the environment so workers never write lab.c's static buffer. */
	d = docker_connect(NULL, e);
	if (d == NULL)
		return -1;
	/* several flaws cannot be built on a remote engine and host-seal-off
	 * is seen only by host-ports, which does not run there: refused
	 * before any lab (docs/cli-probe.md) */
	if (docker_is_remote(d)) {
		errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): the "
		    "negative control needs labs with the flaws docker-socket, "
		    "host-mount and control-keys (host paths) and the "
		    "host-ports row (a listener on the engine's host); local "
		    "engine only", docker_where(d));
		docker_close(d);
		return -1;
	}
	if (lab_image_ensure(d, &ref, e) == -1) {
		docker_close(d);
		return -1;
	}
	free(ref);
	docker_close(d);
	if (getenv("ARES_LAB_ROOTFS") == NULL)
		setenv("ARES_LAB_ROOTFS", lab_rootfs_path(), 1);
	st.n = n;
	pthread_mutex_init(&st.lock, NULL);
	nth = o->parallel >= 2 ? 2 : 1;
	{
		/* workers never take SIGINT/SIGTERM: the caller's handler
		 * runs on this thread and sets o->cancel */
		sigset_t block, old;

		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &block, &old);
		for (k = 0; k < nth; k++)
			if (pthread_create(&th[k], NULL, probe_nc_worker,
			    &st) == 0)
				started++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (started == 0)
		probe_nc_worker(&st);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	pthread_mutex_destroy(&st.lock);
	if (probe_cancelled(o->cancel)) {
		size_t nran = 0;

		for (i = 0; i < n; i++)
			nran += items[i].ran;
		return errbuf_set(e, ERRBUF_INTERNAL, "negative control: "
		    "cancelled (%zu of %zu labs ran)", nran, n);
	}
	for (i = 0; i < n; i++)
		if (!items[i].ran)
			return errbuf_set(e, ERRBUF_INTERNAL, "negative control: "
			    "the lab for %s did not run: %s", items[i].flaw[0] ?
			    items[i].flaw : "the baseline", items[i].error);
	return 0;
}

bool
probe_nc_ok(const struct probe_nc_item *items, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!items[i].ran || !items[i].seen)
			return false;
	return true;
}

cJSON *
probe_nc_json(const char *policy, const struct probe_nc_item *items,
    size_t n)
{
	cJSON *j = cJSON_CreateObject(), *a;
	size_t i;

	cJSON_AddStringToObject(j, "format", PROBE_NC_FORMAT);
	cJSON_AddStringToObject(j, "policy", policy);
	cJSON_AddStringToObject(j, "result", probe_nc_ok(items, n) ?
	    "gate-sees-every-flaw" : "gate-blind");
	a = cJSON_AddArrayToObject(j, "labs");
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (items[i].flaw[0] != '\0')
			cJSON_AddStringToObject(o, "flaw", items[i].flaw);
		else
			cJSON_AddNullToObject(o, "flaw");
		cJSON_AddStringToObject(o, "run_id", items[i].run_id);
		cJSON_AddStringToObject(o, "run_dir", items[i].run_dir);
		cJSON_AddBoolToObject(o, "ran", items[i].ran);
		cJSON_AddBoolToObject(o, items[i].flaw[0] ? "seen" : "held",
		    items[i].seen);
		cJSON_AddStringToObject(o, "failed_rows", items[i].rows);
		if (items[i].error[0] != '\0')
			cJSON_AddStringToObject(o, "error", items[i].error);
		cJSON_AddNumberToObject(o, "seconds", (double)(long long)
		    (items[i].seconds * 1000) / 1000);
		cJSON_AddItemToArray(a, o);
	}
	return j;
}

char *
probe_nc_junit(const struct probe_nc_item *items, size_t n)
{
	char *buf = NULL;
	size_t blen = 0, i, nfail = 0;
	FILE *f = open_memstream(&buf, &blen);

	if (f == NULL)
		util_fatal("open_memstream failed");
	for (i = 0; i < n; i++)
		if (!items[i].ran || !items[i].seen)
			nfail++;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"ares probe negative control\" tests=\"%zu\" "
	    "failures=\"%zu\">\n  <testsuite name=\"ares-probe-negative-"
	    "control\" tests=\"%zu\" failures=\"%zu\">\n", n, nfail, n, nfail);
	for (i = 0; i < n; i++) {
		const struct probe_nc_item *it = &items[i];
		char name[128], msg[640];
		const char *kind = NULL;

		if (it->flaw[0] != '\0')
			snprintf(name, sizeof name, "the gate sees %s",
			    it->flaw);
		else
			snprintf(name, sizeof name, "the baseline holds");
		if (!it->ran) {
			kind = "error";
			snprintf(msg, sizeof msg, "the lab did not run: %s",
			    it->error);
		} else if (!it->seen) {
			kind = "failure";
			if (it->flaw[0] != '\0')
				snprintf(msg, sizeof msg, "the gate is blind to "
				    "%s", it->flaw);
			else
				snprintf(msg, sizeof msg, "the baseline fails "
				    "rows: %s", it->rows);
		}
		probe_junit_case(f, "ares.probe.negative", name, it->seconds,
		    kind, kind ? msg : "", kind ? msg : "");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	fclose(f);
	return buf;
}
