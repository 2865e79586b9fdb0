/*
 * fix_git.c - the fix loop's proposal in git (docs/fix.md): git by argv,
 * never a shell; a blob, a private index, commit-tree on HEAD and a new
 * branch, so the work tree and HEAD are never touched.
 */
#include "internal.h"

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

/*
 * Find the git work tree around policy_path (git rev-parse in its
 * directory): g->in_repo and g->toplevel, top the work tree's path as git
 * prints it, *rel the policy's path inside it (caller frees).  1 in a work
 * tree, 0 not in one (nothing to commit: not an error), -1 + e.
 */
static int
fix_git_locate(const char *policy_path, struct fix_git_result *g,
    char *top, size_t toplen, char **rel, struct errbuf *e)
{
	char *abs = realpath(policy_path, NULL), *dir, *slash, *rtop;
	const char *av[] = { "git", "-C", NULL, "rev-parse", "--show-toplevel",
	    NULL };
	size_t tl;
	int st, rc = -1;

	*rel = NULL;
	if (abs == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "%s: %s", policy_path,
		    strerror(errno));
	dir = xstrdup(abs);
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	av[2] = dir;
	st = fix_git(av, NULL, top, toplen, e);
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
	rtop = realpath(top, NULL);
	tl = rtop ? strlen(rtop) : 0;
	if (rtop == NULL || strncmp(abs, rtop, tl) != 0 || abs[tl] != '/') {
		free(rtop);
		errbuf_set(e, ERRBUF_INTERNAL, "git: %s is not under %s", abs,
		    top);
		goto out;
	}
	*rel = xstrdup(abs + tl + 1);
	free(rtop);
	rc = 1;
out:
	free(dir);
	free(abs);
	return rc;
}

/* Identity: the repository's own, else a neutral one: env gets the
 * GIT_AUTHOR_* / GIT_COMMITTER_* entries, extra (NULL-terminated) points
 * at them (empty when the repository has a user.email). */
static void
fix_git_identity(const char *top, char env[4][160], const char *extra[6],
    struct errbuf *e)
{
	const char *av[] = { "git", "-C", top, "config", "user.email", NULL };
	char out[FIX_GIT_OUT_MAX];
	size_t k = 0;

	if (fix_git(av, NULL, out, sizeof out, e) != 0 || out[0] == '\0') {
		snprintf(env[0], 160, "GIT_AUTHOR_NAME=ares fix loop");
		snprintf(env[1], 160, "GIT_AUTHOR_EMAIL=ares@localhost");
		snprintf(env[2], 160, "GIT_COMMITTER_NAME=ares fix loop");
		snprintf(env[3], 160, "GIT_COMMITTER_EMAIL=ares@localhost");
		for (k = 0; k < 4; k++)
			extra[k] = env[k];
	}
	extra[k] = NULL;
}

/* The branch must be new: -1 + e when refs/heads/<branch> exists. */
static int
fix_git_branch_is_new(const char *top, const char *branch, struct errbuf *e)
{
	char *ref = xasprintf("refs/heads/%s", branch), out[FIX_GIT_OUT_MAX];
	const char *av[] = { "git", "-C", top, "rev-parse", "--verify",
	    "--quiet", ref, NULL };
	int st = fix_git(av, NULL, out, sizeof out, e);

	free(ref);
	if (st == 0)
		return errbuf_set(e, ERRBUF_INPUT, "git: branch %s exists",
		    branch);
	return 0;
}

/* The commit the proposal goes on: HEAD into head (and g->base_commit),
 * its branch name into g->base_branch when git names one.  -1 + e when
 * there is no HEAD. */
static int
fix_git_base(const char *top, struct fix_git_result *g, char head[128],
    struct errbuf *e)
{
	const char *av[] = { "git", "-C", top, "rev-parse", "HEAD", NULL };
	const char *av2[] = { "git", "-C", top, "rev-parse", "--abbrev-ref",
	    "HEAD", NULL };
	char out[FIX_GIT_OUT_MAX];

	if (fix_git(av, NULL, head, 128, e) != 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "git rev-parse HEAD "
		    "(a repository without commits?): %.200s", head);
	g->has_base = true;
	snprintf(g->base_commit, sizeof g->base_commit, "%.40s", head);
	if (fix_git(av2, NULL, out, sizeof out, e) == 0)
		snprintf(g->base_branch, sizeof g->base_branch, "%.120s", out);
	return 0;
}

/* The blob of the patched text, from a temp file outside the work tree
 * (removed again): its id into blob.  -1 + e. */
static int
fix_git_blob(const char *top, const char *patched, size_t len,
    char blob[128], struct errbuf *e)
{
	char *tmpblob = xasprintf("%s/.ares-fix-blob-XXXXXX", P_tmpdir);
	const char *av[] = { "git", "-C", top, "hash-object", "-w", "--",
	    tmpblob, NULL };
	int fd = mkstemp(tmpblob), rc = -1;

	if (fd == -1 || write(fd, patched, len) != (ssize_t)len) {
		if (fd != -1)
			close(fd);
		errbuf_set(e, ERRBUF_INTERNAL, "temp file: %s",
		    strerror(errno));
		goto out;
	}
	close(fd);
	if (fix_git(av, NULL, blob, 128, e) != 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "git hash-object: %.200s", blob);
		goto out;
	}
	rc = 0;
out:
	unlink(tmpblob);
	free(tmpblob);
	return rc;
}

/* The tree of HEAD with rel replaced by blob, built in a private index (a
 * temp file, removed again; the repository's index is never touched): its
 * id into tree.  -1 + e. */
static int
fix_git_tree(const char *top, const char *blob, const char *rel,
    char tree[128], struct errbuf *e)
{
	char *idx = xasprintf("%s/.ares-fix-index-XXXXXX", P_tmpdir);
	char *idx_env, *ci, out[FIX_GIT_OUT_MAX];
	int fd = mkstemp(idx), rc = 0;

	if (fd != -1)
		close(fd);
	unlink(idx);   /* git creates it */
	idx_env = xasprintf("GIT_INDEX_FILE=%s", idx);
	ci = xasprintf("100644,%s,%s", blob, rel);
	{
		const char *env[] = { idx_env, NULL };
		const char *av1[] = { "git", "-C", top, "read-tree", "HEAD",
		    NULL };
		const char *av2[] = { "git", "-C", top, "update-index", "--add",
		    "--cacheinfo", ci, NULL };
		const char *av3[] = { "git", "-C", top, "write-tree", NULL };

		if (fix_git(av1, env, out, sizeof out, e) != 0 ||
		    fix_git(av2, env, out, sizeof out, e) != 0 ||
		    fix_git(av3, env, tree, 128, e) != 0)
			rc = errbuf_set(e, ERRBUF_INTERNAL, "git index: %.200s",
			    out);
	}
	free(ci);
	unlink(idx);
	free(idx);
	free(idx_env);
	return rc;
}

/* The commit of tree on head with message (extra: the identity env): its
 * id into g->commit.  -1 + e. */
static int
fix_git_commit_tree(const char *top, const char *tree, const char *head,
    const char *message, const char *const *extra, struct fix_git_result *g,
    struct errbuf *e)
{
	const char *av[] = { "git", "-C", top, "commit-tree", tree, "-p",
	    head, "-m", message, NULL };
	char out[FIX_GIT_OUT_MAX];

	if (fix_git(av, extra, out, sizeof out, e) != 0 || strlen(out) < 40)
		return errbuf_set(e, ERRBUF_INTERNAL, "git commit-tree: %.200s",
		    out);
	snprintf(g->commit, sizeof g->commit, "%.40s", out);
	return 0;
}

/* The new branch at g->commit.  -1 + e. */
static int
fix_git_branch(const char *top, const char *branch,
    const struct fix_git_result *g, struct errbuf *e)
{
	const char *av[] = { "git", "-C", top, "branch", branch, g->commit,
	    NULL };
	char out[FIX_GIT_OUT_MAX];

	if (fix_git(av, NULL, out, sizeof out, e) != 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "git branch: %.200s", out);
	return 0;
}

/*
 * The proposal as a commit on a new branch, step by step: find the work
 * tree, the identity, check the branch is new, the base (HEAD), then a
 * blob, a tree from a private index, commit-tree and the branch: the work
 * tree, the index and HEAD are never touched.
 */
int
fix_git_commit(const char *policy_path, const char *patched, size_t len,
    const char *branch, const char *message, struct fix_git_result *g,
    struct errbuf *e)
{
	char top[PATH_MAX], blob[128], tree[128], head[128], env[4][160];
	const char *extra[6] = { NULL };
	char *rel;
	int rc;

	memset(g, 0, sizeof *g);
	rc = fix_git_locate(policy_path, g, top, sizeof top, &rel, e);
	if (rc != 1)
		return rc;   /* -1, or 0: not in a work tree */
	rc = -1;
	fix_git_identity(top, env, extra, e);
	if (fix_git_branch_is_new(top, branch, e) == -1 ||
	    fix_git_base(top, g, head, e) == -1 ||
	    fix_git_blob(top, patched, len, blob, e) == -1 ||
	    fix_git_tree(top, blob, rel, tree, e) == -1 ||
	    fix_git_commit_tree(top, tree, head, message, extra, g, e) == -1 ||
	    fix_git_branch(top, branch, g, e) == -1)
		goto out;
	snprintf(g->branch, sizeof g->branch, "%s", branch);
	snprintf(g->path_in_repo, sizeof g->path_in_repo, "%s", rel);
	g->committed = true;
	rc = 0;
out:
	free(rel);
	return rc;
}
