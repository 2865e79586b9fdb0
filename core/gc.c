/*
 * gc.c - remove what ares processes that are gone left on the engine.
 *
 * Every container and network ares creates carries its owner
 * (ares.owner=<boot_id>:<pid>:<starttime>, docs/cli-gc.md); a lab meant to
 * outlive the process that made it also carries ares.lease=<RUN_DIR>/
 * lab.lease.  gc_sweep lists every object with an ares.run or ares.owner
 * label and removes those whose owner is gone:
 *
 *  - an owner is alive while a process with its pid runs on this boot (same
 *    /proc/sys/kernel/random/boot_id) with the same start time (field 22
 *    of /proc/PID/stat: a reused pid names another process) and is no
 *    zombie, or while its lease file exists and names the run;
 *  - an object without an owner label (made by an ares before labels
 *    carried one) is removed only when every object of its run is older
 *    than GC_UNOWNED_AGE_S, longer than any drill, trial member or probe
 *    keeps a lab (a drill's agent phase is at most one hour): no live ares
 *    process can still use it.
 *
 * Containers go first (force; one whose cgroup a cgroup-freeze lever left
 * frozen is killed and thawed first, as lever_ctx_release does, so the
 * engine can reap it), then networks, then the host firewall rules of
 * every run whose objects went (hostfw_unseal removes only the rules of
 * bridges that are gone) and its short socket dir.  Everything listed is
 * bounded (GC_LIST_MAX objects per kind, GC_REPORT_MAX entries per list).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GC_STAT_MAX   4096   /* /proc/PID/stat read bound */
#define GC_LEASE_MAX  4096   /* lease file read bound */
#define GC_RUNS_MAX   256    /* distinct runs unsealed per sweep */

/* ---- owners ---------------------------------------------------------- */

/* Read a small file (bounded by max-1 bytes) into buf.  -1 on error. */
static int
gc_read_small(const char *path, char *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;
	size_t len = 0;

	if (fd == -1)
		return -1;
	while (len < max - 1 && (n = read(fd, buf + len, max - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return 0;
}

/* This kernel's boot id (36 characters) into out.  -1 when unreadable or
 * not of the expected form. */
static int
gc_boot_id(char out[37])
{
	char buf[64];
	size_t n;

	if (gc_read_small("/proc/sys/kernel/random/boot_id", buf,
	    sizeof buf) == -1)
		return -1;
	n = strcspn(buf, "\n");
	if (n != 36 || strspn(buf, "0123456789abcdef-") < 36)
		return -1;
	memcpy(out, buf, 36);
	out[36] = '\0';
	return 0;
}

/* Field 22 (start time, clock ticks after boot) and the state letter of
 * /proc/<pid>/stat.  The command (field 2) is in parentheses and may hold
 * anything, so fields are counted from its last ')'.  0, or -1 when the
 * process does not exist or the file is unreadable. */
static int
gc_proc_start(long pid, unsigned long long *start, char *state)
{
	char path[64], buf[GC_STAT_MAX], *p, *end;
	int field;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (gc_read_small(path, buf, sizeof buf) == -1)
		return -1;
	p = strrchr(buf, ')');
	if (p == NULL)
		return -1;
	p++;
	/* after ')': " S ppid pgrp ..." -- field 3 is the state */
	for (field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			return -1;
		if (field == 3)
			*state = *p;
		if (field == 22) {
			errno = 0;
			*start = strtoull(p, &end, 10);
			if (errno != 0 || end == p)
				return -1;
			return 0;
		}
		p += strcspn(p, " ");
	}
	return -1;
}

static char gc_self[GC_OWNER_MAX];
static pthread_once_t gc_self_once = PTHREAD_ONCE_INIT;

static void
gc_self_init(void)
{
	char boot[37];
	unsigned long long start = 0;
	char state = '?';

	if (gc_boot_id(boot) == -1)
		snprintf(boot, sizeof boot, "%s",
		    "00000000-0000-0000-0000-000000000000");
	(void)gc_proc_start((long)getpid(), &start, &state);
	snprintf(gc_self, sizeof gc_self, "%s:%ld:%llu", boot, (long)getpid(),
	    start);
}

const char *
gc_owner(void)
{
	pthread_once(&gc_self_once, gc_self_init);
	return gc_self;
}

int
gc_owner_parse(const char *s, char boot[37], long *pid,
    unsigned long long *start)
{
	const char *p, *q;
	char *end;

	if (s == NULL || strlen(s) >= GC_OWNER_MAX || strlen(s) < 40 ||
	    s[36] != ':' || strspn(s, "0123456789abcdef-") != 36)
		return -1;
	memcpy(boot, s, 36);
	boot[36] = '\0';
	p = s + 37;
	q = strchr(p, ':');
	if (q == NULL || q == p || (size_t)(q - p) > 10 ||
	    strspn(p, "0123456789") != (size_t)(q - p))
		return -1;
	errno = 0;
	*pid = strtol(p, &end, 10);
	if (errno != 0 || end != q || *pid <= 0)
		return -1;
	q++;
	if (*q == '\0' || strlen(q) > 20 || strspn(q, "0123456789") !=
	    strlen(q))
		return -1;
	errno = 0;
	*start = strtoull(q, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	return 0;
}

int
gc_owner_alive(const char *owner)
{
	char boot[37], now[37], state = '?';
	unsigned long long start, pstart;
	long pid;

	if (gc_owner_parse(owner, boot, &pid, &start) == -1)
		return -1;
	/* Unreadable boot id: we cannot tell, so the owner lives. */
	if (gc_boot_id(now) == -1)
		return 1;
	if (strcmp(boot, now) != 0)
		return 0;   /* an earlier boot: every process of it is gone */
	if (gc_proc_start(pid, &pstart, &state) == -1)
		return errno == ENOENT || errno == ESRCH ? 0 : 1;
	if (pstart != start || state == 'Z' || state == 'X')
		return 0;
	return 1;
}

int
gc_owner_alive_shared(const char *owner)
{
	char boot[37], now[37];
	unsigned long long start;
	long pid;

	if (gc_owner_parse(owner, boot, &pid, &start) == -1)
		return -1;
	if (gc_boot_id(now) == -1 || strcmp(boot, now) != 0)
		return 1;   /* another machine's, or an earlier boot: cannot tell */
	return gc_owner_alive(owner);
}

bool
gc_lease_alive(const char *path, const char *run_id)
{
	char buf[GC_LEASE_MAX];
	struct stat sb;
	size_t n;

	if (path == NULL || path[0] != '/' || strstr(path, "/../") != NULL ||
	    run_id == NULL || run_id[0] == '\0')
		return false;
	if (lstat(path, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (sb.st_uid != 0 && sb.st_uid != geteuid()) ||
	    sb.st_size > GC_LEASE_MAX)
		return false;
	if (gc_read_small(path, buf, sizeof buf) == -1)
		return false;
	n = strcspn(buf, "\n");
	return n == strlen(run_id) && memcmp(buf, run_id, n) == 0;
}

int
gc_lease_write(const char *run_dir, const char *run_id, struct errbuf *e)
{
	char *path = xasprintf("%s/" GC_LEASE_NAME, run_dir);
	char *txt = xasprintf("%s\n%s\n", run_id, gc_owner());
	int rc = util_write_file(path, txt, strlen(txt), 0600, e);

	free(txt);
	free(path);
	return rc;
}

void
gc_lease_remove(const char *run_dir)
{
	char *path = xasprintf("%s/" GC_LEASE_NAME, run_dir);
	struct stat sb;

	if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		(void)unlink(path);
	free(path);
}

/* ---- the sweep --------------------------------------------------------- */

enum gc_kind { GC_CONTAINER, GC_NETWORK };

struct gc_obj {
	enum gc_kind kind;
	char id[72];
	char name[96];
	char run[64];
	char state[16];         /* containers: running, paused, exited ... */
	int64_t created;        /* unix seconds, 0 when unknown */
	int alive;              /* 1 keep, 0 remove */
	bool owned;             /* carries ares.owner */
};

struct gc_list {
	struct gc_obj *v;
	size_t n, cap;
	size_t nkind[2];        /* objects of each kind kept */
	bool truncated;
	bool remote;            /* the engine may be other machines' too */
};

/* Seconds since the epoch of an RFC 3339 UTC time ("2026-12-01T12:05:23.07Z"
 * or with an offset); 0 when it does not parse. */
static int64_t
gc_rfc3339(const char *s)
{
	struct tm tm;
	int y, mo, d, h, mi, sec, n = 0;
	const char *p;
	int64_t t;

	if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h,
	    &mi, &sec, &n) != 6 || n != 19)
		return 0;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = (int64_t)timegm(&tm);
	p = s + 19;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if ((*p == '+' || *p == '-') && strlen(p) >= 6) {
		int oh = (p[1] - '0') * 10 + (p[2] - '0');
		int om = (p[4] - '0') * 10 + (p[5] - '0');
		int64_t off = (int64_t)oh * 3600 + om * 60;

		t += *p == '+' ? -off : off;
	}
	return t;
}

/* Add the entries of one list answer (containers or networks) to l,
 * skipping ids already there.  Bounded by GC_LIST_MAX. */
static void
gc_collect(struct gc_list *l, enum gc_kind kind, const cJSON *arr)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr) {
		const cJSON *labels = cJSON_GetObjectItemCaseSensitive(it,
		    "Labels");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "Id");
		const cJSON *v;
		const char *run = util_json_str(labels, "ares.run", NULL);
		struct gc_obj *o;
		size_t i;

		if (!cJSON_IsString(id) || !docker_id_valid(id->valuestring))
			continue;
		for (i = 0; i < l->n; i++)
			if (l->v[i].kind == kind &&
			    strcmp(l->v[i].id, id->valuestring) == 0)
				break;
		if (i < l->n)
			continue;
		if (l->nkind[kind] >= GC_LIST_MAX) {
			l->truncated = true;
			return;
		}
		l->nkind[kind]++;
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 32;
			l->v = xrealloc(l->v, l->cap * sizeof *l->v);
		}
		o = &l->v[l->n++];
		memset(o, 0, sizeof *o);
		o->kind = kind;
		snprintf(o->id, sizeof o->id, "%s", id->valuestring);
		if (run != NULL)
			util_sanitize(o->run, sizeof o->run, run, strlen(run),
			    false);
		if (kind == GC_CONTAINER) {
			v = cJSON_GetObjectItemCaseSensitive(it, "State");
			if (cJSON_IsString(v))
				snprintf(o->state, sizeof o->state, "%.15s",
				    v->valuestring);
			v = cJSON_GetObjectItemCaseSensitive(it, "Created");
			if (cJSON_IsNumber(v) && v->valuedouble > 0 &&
			    v->valuedouble < 1e12)
				o->created = (int64_t)v->valuedouble;
			v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
			    it, "Names"), 0);
			if (cJSON_IsString(v))
				util_sanitize(o->name, sizeof o->name,
				    v->valuestring[0] == '/' ? v->valuestring +
				    1 : v->valuestring, strlen(v->valuestring),
				    false);
		} else {
			v = cJSON_GetObjectItemCaseSensitive(it, "Name");
			if (cJSON_IsString(v))
				util_sanitize(o->name, sizeof o->name,
				    v->valuestring, strlen(v->valuestring),
				    false);
			v = cJSON_GetObjectItemCaseSensitive(it, "Created");
			if (cJSON_IsString(v))
				o->created = gc_rfc3339(v->valuestring);
		}
		/* The owner: its process, or its lease. */
		{
			const char *owner = util_json_str(labels, "ares.owner",
			    NULL);
			const char *lease = util_json_str(labels, "ares.lease",
			    NULL);
			/* a remote engine: an owner of another boot may be a
			 * live process of another machine using it */
			int a = owner == NULL ? -1 : l->remote ?
			    gc_owner_alive_shared(owner) : gc_owner_alive(owner);

			o->owned = a != -1;
			if (a == 1 || (lease != NULL &&
			    gc_lease_alive(lease, run)))
				o->alive = 1;
			else if (a == 0)
				o->alive = 0;
			else
				o->alive = -1;   /* decided by its run's age */
		}
	}
}

/* List one kind by one label key (both filters: ares.run, ares.owner). */
static int
gc_list_kind(struct docker *d, struct gc_list *l, enum gc_kind kind,
    struct errbuf *e)
{
	static const char *const keys[] = { "ares.run", "ares.owner" };
	size_t k;

	for (k = 0; k < 2; k++) {
		cJSON *arr = kind == GC_CONTAINER ?
		    docker_containers_by_label(d, keys[k], e) :
		    docker_networks_by_label(d, keys[k], e);

		if (arr == NULL)
			return -1;
		if (cJSON_GetArraySize(arr) > GC_LIST_MAX)
			l->truncated = true;
		gc_collect(l, kind, arr);
		cJSON_Delete(arr);
	}
	return 0;
}

/* Objects without an owner: gone when every object of their run is older
 * than GC_UNOWNED_AGE_S (an object with no run and no owner stays). */
static void
gc_decide_unowned(struct gc_list *l)
{
	int64_t now = (int64_t)time(NULL);
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		struct gc_obj *o = &l->v[i];
		int64_t newest = o->created;

		if (o->alive != -1)
			continue;
		/* no owner on an engine other machines may use: whose it
		 * is cannot be told from here, it stays */
		if (o->run[0] == '\0' || l->remote) {
			o->alive = 1;
			continue;
		}
		for (j = 0; j < l->n; j++)
			if (strcmp(l->v[j].run, o->run) == 0 &&
			    l->v[j].created > newest)
				newest = l->v[j].created;
		/* unknown age, or any object of the run (owned or not) alive
		 * or young: keep */
		o->alive = newest == 0 || now - newest < GC_UNOWNED_AGE_S;
		for (j = 0; j < l->n && !o->alive; j++)
			if (strcmp(l->v[j].run, o->run) == 0 &&
			    l->v[j].alive == 1)
				o->alive = 1;
	}
}

static void
gc_add(struct gc_item *list, size_t *n, const char *kind, const char *id,
    const char *name, const char *run, const char *error)
{
	if (*n < GC_REPORT_MAX) {
		struct gc_item *it = &list[*n];

		memset(it, 0, sizeof *it);
		snprintf(it->kind, sizeof it->kind, "%s", kind);
		snprintf(it->id, sizeof it->id, "%s", id);
		snprintf(it->name, sizeof it->name, "%s", name);
		snprintf(it->run, sizeof it->run, "%s", run);
		if (error != NULL)
			util_sanitize(it->error, sizeof it->error, error,
			    strlen(error), false);
	}
	(*n)++;
}

/*
 * A running container of a gone owner may sit in a cgroup the
 * cgroup-freeze lever froze: the engine cannot kill it then.  Kill its
 * init and thaw the cgroup (lever_kernel_release), after checking with
 * lever_kernel_prepare that the pid is in that container's cgroup.
 */
static void
gc_thaw(struct docker *d, const char *id)
{
	struct errbuf e = { 0 };
	cJSON *ins = docker_container_inspect(d, id, &e);
	struct lever_ctx c;
	char buf[32];

	if (ins == NULL)
		return;
	memset(&c, 0, sizeof c);
	c.netns_fd = -1;
	c.agent_pid = docker_inspect_pid(ins);
	snprintf(c.agent_id, sizeof c.agent_id, "%s", id);
	cJSON_Delete(ins);
	if (c.agent_pid <= 0)
		return;
	(void)lever_kernel_prepare(&c, &e);
	if (c.cgroup_dir != NULL) {
		char *f = xasprintf("%s/%s", c.cgroup_dir,
		    c.cgroup_version == 1 ? "freezer.state" : "cgroup.freeze");

		if (gc_read_small(f, buf, sizeof buf) == 0 &&
		    (strncmp(buf, "FROZEN", 6) == 0 ||
		    strncmp(buf, "FREEZING", 8) == 0 ||
		    (c.cgroup_version == 2 && buf[0] == '1')))
			c.frozen = true;
		free(f);
	}
	lever_kernel_release(&c);
}

/* Whether a removal failed only because the object is already gone (a
 * concurrent sweep or teardown removed it). */
static bool
gc_gone(const struct errbuf *e)
{
	return strstr(e->msg, "(HTTP 404)") != NULL;
}

/* The run's short socket dir (lab_socket_dir's fallback), as teardown
 * removes it. */
static void
gc_socket_dir(const char *run)
{
	char *sd;
	struct stat sb;
	struct errbuf e = { 0 };

	if (run[0] == '\0' || strchr(run, '/') != NULL ||
	    strstr(run, "..") != NULL)
		return;
	sd = xasprintf("/tmp/ares-%s", run);
	if (lstat(sd, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    sb.st_uid == geteuid())
		(void)util_rm_rf(sd, &e);
	free(sd);
}

int
gc_sweep(struct docker *d, struct gc_report *out, struct errbuf *e)
{
	struct gc_list l = { 0 };
	char (*runs)[64] = NULL;
	size_t nruns = 0, i, k;
	int pass;

	memset(out, 0, sizeof *out);
	(void)gc_owner();   /* before any fork: computed once */
	l.remote = docker_is_remote(d);
	if (gc_list_kind(d, &l, GC_CONTAINER, e) == -1 ||
	    gc_list_kind(d, &l, GC_NETWORK, e) == -1) {
		free(l.v);
		return errbuf_prefix(e, "gc");
	}
	out->truncated = l.truncated;
	gc_decide_unowned(&l);
	runs = xcalloc(GC_RUNS_MAX, sizeof *runs);
	/* containers first: a network with endpoints cannot go */
	for (pass = 0; pass < 2; pass++) {
		enum gc_kind kind = pass == 0 ? GC_CONTAINER : GC_NETWORK;

		for (i = 0; i < l.n; i++) {
			struct gc_obj *o = &l.v[i];
			struct errbuf e2 = { 0 };
			int rc;

			if (o->kind != kind)
				continue;
			if (o->alive) {
				out->kept++;
				continue;
			}
			if (kind == GC_CONTAINER) {
				if (strcmp(o->state, "running") == 0)
					gc_thaw(d, o->id);
				rc = docker_container_remove(d, o->id, true,
				    &e2);
			} else
				rc = docker_network_remove(d, o->id, &e2);
			if (rc == 0)
				gc_add(out->removed, &out->nremoved,
				    kind == GC_CONTAINER ? "container" :
				    "network", o->id, o->name, o->run, NULL);
			else if (!gc_gone(&e2))
				gc_add(out->failed, &out->nfailed,
				    kind == GC_CONTAINER ? "container" :
				    "network", o->id, o->name, o->run, e2.msg);
			if (o->run[0] == '\0')
				continue;
			for (k = 0; k < nruns; k++)
				if (strcmp(runs[k], o->run) == 0)
					break;
			if (k == nruns && nruns < GC_RUNS_MAX)
				snprintf(runs[nruns++], sizeof runs[0], "%s",
				    o->run);
		}
	}
	/* The host firewall of every run whose objects went: only the rules
	 * of bridges that are gone go (a bridge still there stays sealed). */
	for (k = 0; k < nruns; k++) {
		struct errbuf e2 = { 0 };
		int n = hostfw_unseal(runs[k], &e2);
		char what[32];

		if (n > 0) {
			snprintf(what, sizeof what, "%d rule(s)", n);
			gc_add(out->removed, &out->nremoved, "firewall",
			    "INPUT", what, runs[k], NULL);
		} else if (n < 0)
			gc_add(out->failed, &out->nfailed, "firewall",
			    "INPUT", "host INPUT rules", runs[k], e2.msg);
		gc_socket_dir(runs[k]);
	}
	free(runs);
	free(l.v);
	return 0;
}

static cJSON *
gc_items_json(const struct gc_item *v, size_t n, bool with_error)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n && i < GC_REPORT_MAX; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kind", v[i].kind);
		cJSON_AddStringToObject(o, "id", v[i].id);
		cJSON_AddStringToObject(o, "name", v[i].name);
		cJSON_AddStringToObject(o, "run", v[i].run);
		if (with_error)
			cJSON_AddStringToObject(o, "error", v[i].error);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *
gc_report_json(const struct gc_report *r)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddItemToObject(j, "removed", gc_items_json(r->removed,
	    r->nremoved, false));
	cJSON_AddItemToObject(j, "failed", gc_items_json(r->failed,
	    r->nfailed, true));
	cJSON_AddNumberToObject(j, "removed_count", (double)r->nremoved);
	cJSON_AddNumberToObject(j, "failed_count", (double)r->nfailed);
	cJSON_AddNumberToObject(j, "kept", (double)r->kept);
	if (r->truncated)
		cJSON_AddBoolToObject(j, "truncated", true);
	return j;
}

char *
gc_report_text(const char *who, const struct gc_report *r)
{
	char *out = NULL;
	size_t i;

	if (r->nremoved == 0 && r->nfailed == 0)
		return NULL;
	for (i = 0; i < r->nremoved && i < GC_REPORT_MAX; i++) {
		const struct gc_item *it = &r->removed[i];
		char *n = xasprintf("%s%s: gc: removed %s %.12s (%s) of run %s "
		    "(its owner is gone)\n", out != NULL ? out : "", who,
		    it->kind, it->id, it->name, it->run[0] ? it->run : "?");

		free(out);
		out = n;
	}
	for (i = 0; i < r->nfailed && i < GC_REPORT_MAX; i++) {
		const struct gc_item *it = &r->failed[i];
		char *n = xasprintf("%s%s: gc: could NOT remove %s %.12s (%s) of "
		    "run %s: %s\n", out != NULL ? out : "", who, it->kind,
		    it->id, it->name, it->run[0] ? it->run : "?", it->error);

		free(out);
		out = n;
	}
	if (r->nremoved > GC_REPORT_MAX || r->nfailed > GC_REPORT_MAX) {
		char *n = xasprintf("%s%s: gc: %zu removed, %zu failed in all\n",
		    out, who, r->nremoved, r->nfailed);

		free(out);
		out = n;
	}
	return out;
}
