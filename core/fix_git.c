/*
 * fix_git.c - the fix loop's proposal in git (docs/fix.md): git by argv,
 * never a shell; a blob, a private index, commit-tree on HEAD and a new
 * branch, so the work tree and HEAD are never touched.
 */
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX_GIT_OUT_MAX    (64 * 1024)

/* ---- git (argv, never a shell) ---------------------------------------- */

/*
 * Run git with argv (argv[0] must be "git"), extra environment entries
 * (NAME=VALUE, NULL-terminated, may be NULL) added to ours; stdout+stderr
 * collected into out (bounded, NUL-terminated, trailing newline cut).
 * Returns git's exit status, or -1 + e when it cannot run.
 */
static int
fix_git(const char *const *argv, const char *const *extra_env, char *out,
    size_t outmax, struct errbuf *e)
{
	return util_run(argv, extra_env, 0, out, outmax, e);
}

int
fix_git_commit(const char *policy_path, const char *patched, size_t len,
    const char *branch, const char *message, struct fix_git_result *g,
    struct errbuf *e)
{
	char *abs = realpath(policy_path, NULL), *dir, *slash, *rel;
	char top[PATH_MAX], out[FIX_GIT_OUT_MAX], blob[128], tree[128];
	char head[128], *idx = NULL, *idx_env = NULL, *info, *tmpblob = NULL;
	char name_env[160] = "", mail_env[160] = "", cname[160] = "",
	    cmail[160] = "";
	const char *extra[6] = { NULL };
	int rc = -1, st;

	memset(g, 0, sizeof *g);
	if (abs == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "%s: %s", policy_path,
		    strerror(errno));
	dir = xstrdup(abs);
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	{
		const char *av[] = { "git", "-C", dir, "rev-parse",
		    "--show-toplevel", NULL };

		st = fix_git(av, NULL, top, sizeof top, e);
	}
	if (st == -1)
		goto out;
	if (st != 0) {
		/* Not a work tree: not an error, the caller writes files. */
		g->in_repo = false;
		rc = 0;
		goto out;
	}
	g->in_repo = true;
	snprintf(g->toplevel, sizeof g->toplevel, "%.1000s", top);
	{
		char *rtop = realpath(top, NULL);
		size_t tl = rtop ? strlen(rtop) : 0;

		if (rtop == NULL || strncmp(abs, rtop, tl) != 0 ||
		    abs[tl] != '/') {
			free(rtop);
			errbuf_set(e, ERRBUF_INTERNAL, "git: %s is not under %s",
			    abs, top);
			goto out;
		}
		rel = xstrdup(abs + tl + 1);
		free(rtop);
	}
	/* Identity: the repository's own, else a neutral one. */
	{
		const char *av[] = { "git", "-C", top, "config", "user.email",
		    NULL };
		size_t k = 0;

		if (fix_git(av, NULL, out, sizeof out, e) != 0 ||
		    out[0] == '\0') {
			snprintf(name_env, sizeof name_env,
			    "GIT_AUTHOR_NAME=ares fix loop");
			snprintf(mail_env, sizeof mail_env,
			    "GIT_AUTHOR_EMAIL=ares@localhost");
			snprintf(cname, sizeof cname,
			    "GIT_COMMITTER_NAME=ares fix loop");
			snprintf(cmail, sizeof cmail,
			    "GIT_COMMITTER_EMAIL=ares@localhost");
			extra[k++] = name_env;
			extra[k++] = mail_env;
			extra[k++] = cname;
			extra[k++] = cmail;
		}
		(void)k;
	}
	/* The branch must be new. */
	{
		char *ref = xasprintf("refs/heads/%s", branch);
		const char *av[] = { "git", "-C", top, "rev-parse", "--verify",
		    "--quiet", ref, NULL };

		st = fix_git(av, NULL, out, sizeof out, e);
		free(ref);
		if (st == 0) {
			errbuf_set(e, ERRBUF_INPUT, "git: branch %s exists",
			    branch);
			goto out_rel;
		}
	}
	{
		const char *av[] = { "git", "-C", top, "rev-parse", "HEAD",
		    NULL };

		if (fix_git(av, NULL, head, sizeof head, e) != 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "git rev-parse HEAD "
			    "(a repository without commits?): %.200s", head);
			goto out_rel;
		}
		g->has_base = true;
		snprintf(g->base_commit, sizeof g->base_commit, "%.40s", head);
	}
	{
		const char *av[] = { "git", "-C", top, "rev-parse",
		    "--abbrev-ref", "HEAD", NULL };

		if (fix_git(av, NULL, out, sizeof out, e) == 0)
			snprintf(g->base_branch, sizeof g->base_branch, "%.120s",
			    out);
	}
	/* Blob of the patched text (from a temp file beside nothing in the
	 * work tree), a private index from HEAD, the tree, the commit, the
	 * branch: the work tree and HEAD are never touched. */
	tmpblob = xasprintf("%s/.ares-fix-blob-XXXXXX", P_tmpdir);
	{
		int fd = mkstemp(tmpblob);

		if (fd == -1 || write(fd, patched, len) != (ssize_t)len) {
			if (fd != -1)
				close(fd);
			errbuf_set(e, ERRBUF_INTERNAL, "temp file: %s",
			    strerror(errno));
			goto out_rel;
		}
		close(fd);
	}
	{
		const char *av[] = { "git", "-C", top, "hash-object", "-w",
		    "--", tmpblob, NULL };

		if (fix_git(av, NULL, blob, sizeof blob, e) != 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "git hash-object: %.200s",
			    blob);
			goto out_rel;
		}
	}
	idx = xasprintf("%s/.ares-fix-index-XXXXXX", P_tmpdir);
	{
		int fd = mkstemp(idx);

		if (fd != -1)
			close(fd);
		unlink(idx);   /* git creates it */
	}
	idx_env = xasprintf("GIT_INDEX_FILE=%s", idx);
	{
		const char *env[] = { idx_env, NULL };
		const char *av1[] = { "git", "-C", top, "read-tree", "HEAD",
		    NULL };
		char *ci = xasprintf("100644,%s,%s", blob, rel);
		const char *av2[] = { "git", "-C", top, "update-index", "--add",
		    "--cacheinfo", ci, NULL };
		const char *av3[] = { "git", "-C", top, "write-tree", NULL };

		if (fix_git(av1, env, out, sizeof out, e) != 0 ||
		    fix_git(av2, env, out, sizeof out, e) != 0 ||
		    fix_git(av3, env, tree, sizeof tree, e) != 0) {
			free(ci);
			errbuf_set(e, ERRBUF_INTERNAL, "git index: %.200s", out);
			goto out_rel;
		}
		free(ci);
	}
	{
		const char *av[] = { "git", "-C", top, "commit-tree", tree, "-p",
		    head, "-m", message, NULL };

		if (fix_git(av, extra, out, sizeof out, e) != 0 ||
		    strlen(out) < 40) {
			errbuf_set(e, ERRBUF_INTERNAL, "git commit-tree: %.200s",
			    out);
			goto out_rel;
		}
		snprintf(g->commit, sizeof g->commit, "%.40s", out);
	}
	{
		const char *av[] = { "git", "-C", top, "branch", branch,
		    g->commit, NULL };

		if (fix_git(av, NULL, out, sizeof out, e) != 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "git branch: %.200s", out);
			goto out_rel;
		}
	}
	snprintf(g->branch, sizeof g->branch, "%s", branch);
	snprintf(g->path_in_repo, sizeof g->path_in_repo, "%s", rel);
	g->committed = true;
	rc = 0;
out_rel:
	free(rel);
out:
	if (tmpblob != NULL)
		unlink(tmpblob);
	if (idx != NULL)
		unlink(idx);
	free(tmpblob);
	free(idx);
	free(idx_env);
	free(dir);
	free(abs);
	info = NULL;
	(void)info;
	return rc;
}
