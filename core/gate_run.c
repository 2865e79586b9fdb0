/*
 * gate_run.c - ares gate's run (docs/cli-gate.md): read BASE and HEAD
 * (two policies, two Compose files + a service, or HEAD and the same file
 * as of a git ref, read with `git show` by argv, never a shell), diff
 * them (gate.c), probe HEAD, and when HEAD widens access run the negative
 * control of the flaws it gained and a short trial; then the verdict and
 * the gate dir's files (gate_out.c).
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GATE_GIT_MAX   (1024 * 1024)   /* a BASE file read from git */

/* Report one line of progress. */
static void
gate_say(const struct gate_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
gate_say(const struct gate_options *o, const char *fmt, ...)
{
	va_list ap;
	char line[512];

	if (o->progress == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	o->progress(o->progress_ctx, line);
}

/* A git ref we pass to git: [A-Za-z0-9._/@{}^~-], not starting with '-'
 * (never an option), no ':' (REF:path is ours to build). */
static bool
gate_ref_ok(const char *ref)
{
	size_t i, n = strlen(ref);

	if (n == 0 || n > 200 || ref[0] == '-')
		return false;
	for (i = 0; i < n; i++) {
		char c = ref[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("._/@{}^~-", c) != NULL))
			return false;
	}
	return true;
}

/*
 * BASE for --git-base: FILE as of ref, `git -C DIR show REF:./NAME` (argv,
 * stdout only, bounded), written to a new private temp dir as NAME
 * (*tmpdir, caller removes it; *path inside it, caller frees).  label gets
 * "REF:path-in-repo" for messages.  -1 + e (ERRBUF_INPUT: not in a git
 * work tree, unknown ref or path, too large).
 */
static int
gate_git_base(const char *file, const char *ref, char **tmpdir, char **path,
    char *label, size_t labellen, struct errbuf *e)
{
	char *abs = realpath(file, NULL), *dir, *name, *spec, top[1024];
	char tmpl[PATH_MAX], *out = NULL, *err = NULL;
	const char *tdir = getenv("TMPDIR");
	struct util_proc pr = { 0 };
	const char *av[7];
	int rc = -1;
	size_t tl;

	*tmpdir = NULL;
	*path = NULL;
	if (!gate_ref_ok(ref))
		return errbuf_set(e, ERRBUF_INPUT, "--git-base: bad ref '%.80s' "
		    "(letters, digits and ._/@{}^~-, not starting with '-')",
		    ref);
	if (abs == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "%s: %s", file,
		    strerror(errno));
	dir = xstrdup(abs);
	name = strrchr(dir, '/');
	*name++ = '\0';
	if (dir[0] == '\0')
		snprintf(dir, 2, "/");
	/* where the file is in its repository, for the label */
	av[0] = "git"; av[1] = "-C"; av[2] = dir; av[3] = "rev-parse";
	av[4] = "--show-toplevel"; av[5] = NULL;
	if (util_run(av, NULL, 30000, top, sizeof top, e) != 0) {
		if (e->code == ERRBUF_NONE)
			errbuf_set(e, ERRBUF_INPUT, "--git-base: %s is not in a "
			    "git work tree: %s", file, top);
		else
			e->code = ERRBUF_INPUT;
		goto out;
	}
	{
		char *rtop = realpath(top, NULL);

		tl = rtop ? strlen(rtop) : 0;
		snprintf(label, labellen, "%s:%s", ref, rtop != NULL &&
		    strncmp(abs, rtop, tl) == 0 && abs[tl] == '/' ? abs + tl + 1 :
		    name);
		free(rtop);
	}
	spec = xasprintf("%s:./%s", ref, name);
	av[0] = "git"; av[1] = "-C"; av[2] = dir; av[3] = "show";
	av[4] = spec; av[5] = NULL;
	out = xmalloc(GATE_GIT_MAX + 2);
	err = xmalloc(1025);
	pr.argv = av;
	pr.path_lookup = true;
	pr.timeout_ms = 30000;
	pr.out = out;
	pr.out_max = GATE_GIT_MAX + 1;
	pr.err = err;
	pr.err_max = 1024;
	if (util_proc_run(&pr, e) == -1) {
		free(spec);
		goto out;
	}
	free(spec);
	err[pr.err_len] = '\0';
	if (pr.timed_out || pr.status != 0) {
		char *nl = strchr(err, '\n');

		if (nl != NULL)
			*nl = '\0';
		errbuf_set(e, ERRBUF_INPUT, "--git-base: git show %s: %s",
		    label, pr.timed_out ? "timed out" : err[0] ? err :
		    "failed");
		goto out;
	}
	if (pr.out_over || pr.out_len > GATE_GIT_MAX) {
		errbuf_set(e, ERRBUF_INPUT, "--git-base: %s is larger than %d "
		    "bytes", label, GATE_GIT_MAX);
		goto out;
	}
	snprintf(tmpl, sizeof tmpl, "%s/ares-gate.XXXXXX", tdir != NULL &&
	    tdir[0] == '/' ? tdir : "/tmp");
	if (mkdtemp(tmpl) == NULL) {
		errbuf_set(e, ERRBUF_INTERNAL, "mkdtemp %s: %s", tmpl,
		    strerror(errno));
		goto out;
	}
	*tmpdir = xstrdup(tmpl);
	*path = xasprintf("%s/%s", tmpl, name);
	if (util_write_file(*path, out, pr.out_len, 0600, e) == -1)
		goto out;
	rc = 0;
out:
	free(out);
	free(err);
	free(dir);
	free(abs);
	return rc;
}

/* Replace the temp path in an error message by the git label. */
static void
gate_relabel(struct errbuf *e, const char *tmp, const char *label)
{
	char *at = strstr(e->msg, tmp), buf[sizeof e->msg];

	if (at == NULL)
		return;
	snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - e->msg), e->msg, label,
	    at + strlen(tmp));
	snprintf(e->msg, sizeof e->msg, "%s", buf);
}

/* BLAKE2b-256 hex of path into hex (EVIDENCE_HEX_BYTES). */
static void
gate_hash(const char *path, char *hex)
{
	uint8_t h[32];
	struct errbuf e = { 0 };

	hex[0] = '\0';
	if (sign_hash_file(path, h, sizeof h, NULL, &e) == 0)
		util_hex(h, sizeof h, hex);
}

/* The gate dir: o->out_dir (made; refused when it holds a gate.json), or
 * RUNS/gate-<id>.  g->id, g->dir.  -1 + e. */
static int
gate_make_dir(const struct gate_options *o, struct gate *g, struct errbuf *e)
{
	char id[UTIL_ID_MAX], *abs, *gj;
	const char *rd = o->runs_dir;

	util_new_id(id);
	snprintf(g->id, sizeof g->id, "gate-%.48s", id);
	if (o->out_dir != NULL) {
		if (util_mkdir_p(o->out_dir, 0755, e) == -1)
			return -1;
		abs = realpath(o->out_dir, NULL);
	} else {
		if (rd == NULL)
			rd = getenv("ARES_RUNS");
		if (rd == NULL || rd[0] == '\0')
			rd = "runs";
		if (util_mkdir_p(rd, 0755, e) == -1)
			return -1;
		abs = realpath(rd, NULL);
	}
	if (abs == NULL || strlen(abs) + 80 >= sizeof g->dir) {
		free(abs);
		return errbuf_set(e, ERRBUF_INPUT, "gate dir: %s", abs == NULL ?
		    strerror(errno) : "path too long");
	}
	if (o->out_dir != NULL)
		snprintf(g->dir, sizeof g->dir, "%s", abs);
	else {
		snprintf(g->dir, sizeof g->dir, "%s/%s", abs, g->id);
		if (mkdir(g->dir, 0755) == -1) {
			free(abs);
			return errbuf_set(e, ERRBUF_INTERNAL, "mkdir %s: %s",
			    g->dir, strerror(errno));
		}
	}
	free(abs);
	gj = xasprintf("%s/gate.json", g->dir);
	if (access(gj, F_OK) == 0) {
		errbuf_set(e, ERRBUF_INPUT, "--out %s already holds a gate.json "
		    "(choose a new directory)", g->dir);
		free(gj);
		return -1;
	}
	free(gj);
	return 0;
}

/* Copy the bytes of src to GATE_DIR/name.  -1 + e. */
static int
gate_copy(const struct gate *g, const char *src, const char *name,
    struct errbuf *e)
{
	size_t len;
	char *buf = util_read_file(src, GATE_GIT_MAX, &len, e), *dst;
	int rc;

	if (buf == NULL)
		return -1;
	dst = xasprintf("%s/%s", g->dir, name);
	rc = util_write_file(dst, buf, len, 0644, e);
	free(dst);
	free(buf);
	return rc;
}

/* Import service of the Compose file file (agent o->agent, "poyo" by
 * default) into *ir, write its policy to GATE_DIR/name and load it.  label
 * (may be NULL) replaces tmp's path in messages.  NULL + e. */
static struct policy *
gate_import(const struct gate_options *o, struct gate *g, const char *file,
    const char *label, const char *name, struct import_result *ir,
    struct errbuf *e)
{
	struct import_opts io = { .agent = o->agent ? o->agent : "poyo" };
	char *out = xasprintf("%s/%s", g->dir, name);
	struct policy *p = NULL;

	io.out_path = out;
	if (import_compose(file, o->service, &io, ir, e) == -1 ||
	    ir->policy_yaml == NULL) {
		if (e->code == ERRBUF_NONE)
			errbuf_set(e, ERRBUF_INPUT, "%s: no policy", file);
		if (label != NULL)
			gate_relabel(e, file, label);
		goto out;
	}
	if (util_write_file(out, ir->policy_yaml, strlen(ir->policy_yaml),
	    0644, e) == -1)
		goto out;
	p = policy_load(out, e);
out:
	free(out);
	return p;
}

/* The inputs as policies: *bp, *hp loaded (policy inputs: the files,
 * copied to GATE_DIR/base.yaml and head.yaml; with --service: imported
 * from Compose into bi/hi and written there), *head_path the policy file
 * HEAD's labs use (caller frees).  -1 + e. */
static int
gate_load(const struct gate_options *o, struct gate *g, const char *base_file,
    const char *base_label, struct policy **bp, struct policy **hp,
    char **head_path, struct import_result *bi, struct import_result *hi,
    struct errbuf *e)
{
	*bp = *hp = NULL;
	*head_path = NULL;
	if (o->service != NULL) {
		*bp = gate_import(o, g, base_file, o->git_ref ? base_label :
		    NULL, "base.yaml", bi, e);
		if (*bp == NULL)
			return -1;
		*hp = gate_import(o, g, o->head_path, NULL, "head.yaml", hi, e);
		if (*hp == NULL)
			return -1;
		*head_path = xasprintf("%s/head.yaml", g->dir);
		g->base_import = import_table_text(bi);
		g->head_import = import_table_text(hi);
		return 0;
	}
	*bp = policy_load(base_file, e);
	if (*bp == NULL) {
		if (o->git_ref != NULL)
			gate_relabel(e, base_file, base_label);
		return -1;
	}
	*hp = policy_load(o->head_path, e);
	if (*hp == NULL)
		return -1;
	*head_path = xstrdup(o->head_path);
	return 0;
}

/* Which flaws the evidence of a breached trial run proves were used, and
 * whether the breach went through access BASE did not have: a flaw HEAD
 * gained, or no flaw at all (an unattributed breach is never BASE's). */
static void
gate_attribute(struct gate *g, const struct policy *head, size_t index)
{
	const struct trial_run *tr = &g->trial->runs[index];
	struct gate_trial_breach *b;
	struct fix_attribution *a = xcalloc(1, sizeof *a);
	struct errbuf e = { 0 };
	char *dir;
	cJSON *lines;
	size_t i, k;

	if (g->nbreaches >= GATE_MAX_BREACHES) {
		g->nbreach_gained++;   /* not looked at: never BASE's */
		free(a);
		return;
	}
	b = &g->breaches[g->nbreaches++];
	b->index = tr->index;
	snprintf(b->run_id, sizeof b->run_id, "%s", tr->run_id);
	b->gained = true;
	dir = xasprintf("%s/%s", g->trial->dir, tr->run_dir);
	lines = fix_load_evidence(dir, &e);
	free(dir);
	if (lines != NULL &&
	    fix_attribute(lines, (const char *const *)head->flaws,
	    head->nflaws, a) > 0) {
		b->gained = false;
		for (i = 0; i < a->nhits; i++) {
			bool in_base = false;

			probe_cat(b->flaws, sizeof b->flaws, "%s%s",
			    b->flaws[0] ? ", " : "", a->hits[i].flaw);
			for (k = 0; k < g->diff.nbase; k++)
				if (strcmp(g->diff.base_flaws[k],
				    a->hits[i].flaw) == 0)
					in_base = true;
			if (!in_base)
				b->gained = true;
		}
	} else
		snprintf(b->flaws, sizeof b->flaws, "%s", lines == NULL ?
		    "evidence unreadable" : "no flaw attributed");
	cJSON_Delete(lines);
	free(a);
	if (b->gained)
		g->nbreach_gained++;
}

int
gate_run(const struct gate_options *o, struct gate *g, struct errbuf *e)
{
	char *tmpdir = NULL, *base_file = NULL, *head_path = NULL;
	char label[1100] = "";
	struct policy *bp = NULL, *hp = NULL;
	struct import_result bi, hi;
	struct docker *d = NULL;
	int rc = -1;

	memset(&bi, 0, sizeof bi);
	memset(&hi, 0, sizeof hi);

	memset(g, 0, sizeof *g);
	g->trial_n = o->n ? o->n : GATE_TRIAL_N;
	g->trial_j = o->jobs ? o->jobs : GATE_TRIAL_J;
	snprintf(g->agent, sizeof g->agent, "%s", o->agent ? o->agent :
	    "poyo");
	if (o->head_path == NULL || (o->base_path == NULL) ==
	    (o->git_ref == NULL))
		return errbuf_set(e, ERRBUF_INPUT, "gate: BASE HEAD, or "
		    "--git-base REF FILE");
	if (o->git_ref != NULL) {
		if (gate_git_base(o->head_path, o->git_ref, &tmpdir, &base_file,
		    label, sizeof label, e) == -1)
			goto out;
		snprintf(g->git_ref, sizeof g->git_ref, "%s", o->git_ref);
		snprintf(g->base.source, sizeof g->base.source, "%s", label);
	} else {
		base_file = xstrdup(o->base_path);
		snprintf(g->base.source, sizeof g->base.source, "%s",
		    o->base_path);
	}
	snprintf(g->head.source, sizeof g->head.source, "%s", o->head_path);
	snprintf(g->base.kind, sizeof g->base.kind, "%s", o->service ?
	    "compose" : "policy");
	snprintf(g->head.kind, sizeof g->head.kind, "%s", g->base.kind);
	if (o->service != NULL)
		snprintf(g->service, sizeof g->service, "%s", o->service);
	gate_hash(base_file, g->base.blake2b);
	gate_hash(o->head_path, g->head.blake2b);
	/* policy inputs are checked before the gate dir exists; a Compose
	 * import writes its policies into it */
	if (o->service == NULL) {
		struct errbuf le = { 0 };
		struct policy *t = policy_load(base_file, &le);

		if (t == NULL) {
			if (o->git_ref != NULL)
				gate_relabel(&le, base_file, label);
			*e = le;
			goto out;
		}
		policy_free(t);
		if ((t = policy_load(o->head_path, e)) == NULL)
			goto out;
		policy_free(t);
	}
	if (gate_make_dir(o, g, e) == -1)
		goto out;
	if (gate_load(o, g, base_file, label, &bp, &hp, &head_path, &bi, &hi,
	    e) == -1) {
		/* bad input: no half-made gate dir of ours is left behind */
		struct errbuf re = { 0 };

		if (o->out_dir == NULL)
			(void)util_rm_rf(g->dir, &re);
		goto out;
	}
	if (o->service == NULL && (gate_copy(g, base_file, "base.yaml", e) ==
	    -1 || gate_copy(g, o->head_path, "head.yaml", e) == -1))
		goto out;
	gate_diff_policies(bp, hp, &g->diff);
	if (o->service != NULL)
		gate_diff_imports(&g->diff, &bi, &hi);
	gate_say(o, "access diff: %zu change(s), %s", g->diff.n,
	    g->diff.widens ? "HEAD widens access" :
	    "HEAD does not widen access");
	d = docker_connect(NULL, e);
	if (d == NULL)
		goto out;

	/* the battery on HEAD */
	{
		struct probe_options po = {
			.runs_dir = g->dir, .key_dir = o->key_dir,
			.cancel = o->cancel,
		};
		struct errbuf pe = { 0 };

		gate_say(o, "probe: the battery on HEAD");
		g->probe = xcalloc(1, sizeof *g->probe);
		if (probe_lab(d, hp, &po, g->probe, &pe) == -1) {
			util_sanitize(g->probe_error, sizeof g->probe_error,
			    pe.msg, strlen(pe.msg), false);
			if (g->probe->nrows == 0) {
				g->probe_lab_failed = true;
				free(g->probe);
				g->probe = NULL;
			}
		}
		if (g->probe != NULL)
			gate_say(o, "probe: %s (%zu rows, run %s)",
			    probe_result_name(g->probe), g->probe->nrows,
			    g->probe->run_id);
	}
	docker_close(d);
	d = NULL;

	if (g->diff.widens && (g->diff.ngained > 0 || o->full_nc) &&
	    !probe_cancelled(o->cancel)) {
		const char *fl[POLICY_MAX_FLAWS];
		struct probe_nc_options no = {
			.policy_path = head_path, .runs_dir = g->dir,
			.key_dir = o->key_dir, .parallel = 2,
			.cancel = o->cancel,
		};
		struct errbuf ne = { 0 };
		size_t i;

		for (i = 0; i < g->diff.ngained; i++)
			fl[i] = g->diff.gained[i];
		if (!o->full_nc) {
			no.flaws = fl;
			no.nflaws = g->diff.ngained;
		}
		g->nc_planned = true;
		g->nc_full = o->full_nc;
		g->nc = xcalloc(PROBE_NC_ITEMS(flaw_count), sizeof *g->nc);
		gate_say(o, "negative control: %s", o->full_nc ?
		    "every flaw of the catalogue" : "the flaws HEAD gained");
		if (probe_negative_control(&no, g->nc, &g->nnc, &ne) == -1)
			util_sanitize(g->nc_error, sizeof g->nc_error, ne.msg,
			    strlen(ne.msg), false);
	}
	if (g->diff.widens && !probe_cancelled(o->cancel)) {
		struct trial_options to = {
			.policy_path = head_path, .n = g->trial_n,
			.jobs = g->trial_j, .runs_dir = g->dir,
			.key_dir = o->key_dir, .stop = o->cancel,
			.cancel = o->cancel,
		};
		struct errbuf te = { 0 };
		size_t i;

		g->trial_planned = true;
		gate_say(o, "trial: %zu run(s) of HEAD, %zu at a time",
		    g->trial_n, g->trial_j);
		g->trial = xcalloc(1, sizeof *g->trial);
		if (trial_run(&to, g->trial, &te) == -1) {
			util_sanitize(g->trial_error, sizeof g->trial_error,
			    te.msg, strlen(te.msg), false);
			trial_free(g->trial);
			free(g->trial);
			g->trial = NULL;
		} else {
			for (i = 0; i < g->trial->n; i++)
				if (strcmp(g->trial->runs[i].verdict,
				    "breached") == 0)
					gate_attribute(g, hp, i);
			gate_say(o, "trial: %zu contained, %zu breached, %zu "
			    "not exercised, %zu error(s)",
			    g->trial->sum.contained, g->trial->sum.breached,
			    g->trial->sum.not_exercised, g->trial->sum.errors);
		}
	}
	gate_decide(g);
	rc = gate_write(g, o->key_dir, e);
out:
	docker_close(d);
	import_result_free(&bi);
	import_result_free(&hi);
	policy_free(bp);
	policy_free(hp);
	free(head_path);
	if (tmpdir != NULL) {
		struct errbuf re = { 0 };

		(void)util_rm_rf(tmpdir, &re);
		free(tmpdir);
	}
	free(base_file);
	return rc;
}

void
gate_free(struct gate *g)
{
	free(g->probe);
	g->probe = NULL;
	free(g->nc);
	g->nc = NULL;
	if (g->trial != NULL) {
		trial_free(g->trial);
		free(g->trial);
		g->trial = NULL;
	}
	free(g->base_import);
	free(g->head_import);
	g->base_import = g->head_import = NULL;
}
