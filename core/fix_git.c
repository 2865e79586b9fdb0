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
#define FIX_GIT_PUSH_MS    120000     /* git push, at most */

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

/* The tree of HEAD with each rels[i] replaced by blobs[i] (n of them),
 * built in a private index (a temp file, removed again; the
 * repository's index is never touched): its id into tree.  -1 + e. */
static int
fix_git_tree(const char *top, char blobs[][128], char *const *rels,
    size_t n, char tree[128], struct errbuf *e)
{
	char *idx = xasprintf("%s/.ares-fix-index-XXXXXX", P_tmpdir);
	char *idx_env, out[FIX_GIT_OUT_MAX];
	int fd = mkstemp(idx), rc = 0;
	size_t i;

	if (fd != -1)
		close(fd);
	unlink(idx);   /* git creates it */
	idx_env = xasprintf("GIT_INDEX_FILE=%s", idx);
	{
		const char *env[] = { idx_env, NULL };
		const char *av1[] = { "git", "-C", top, "read-tree", "HEAD",
		    NULL };
		const char *av3[] = { "git", "-C", top, "write-tree", NULL };

		if (fix_git(av1, env, out, sizeof out, e) != 0)
			rc = errbuf_set(e, ERRBUF_INTERNAL, "git index: %.200s",
			    out);
		for (i = 0; i < n && rc == 0; i++) {
			char *ci = xasprintf("100644,%s,%s", blobs[i], rels[i]);
			const char *av2[] = { "git", "-C", top, "update-index",
			    "--add", "--cacheinfo", ci, NULL };

			if (fix_git(av2, env, out, sizeof out, e) != 0)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "git index: "
				    "%.200s", out);
			free(ci);
		}
		if (rc == 0 && fix_git(av3, env, tree, 128, e) != 0)
			rc = errbuf_set(e, ERRBUF_INTERNAL, "git index: %.200s",
			    tree);
	}
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

/* path's path inside the work tree top (realpath'd; caller frees), or
 * NULL when it is not under it (or does not exist). */
static char *
fix_git_rel(const char *top, const char *path)
{
	char *abs = realpath(path, NULL), *rtop = realpath(top, NULL), *rel;
	size_t tl = rtop ? strlen(rtop) : 0;

	rel = abs != NULL && rtop != NULL && strncmp(abs, rtop, tl) == 0 &&
	    abs[tl] == '/' ? xstrdup(abs + tl + 1) : NULL;
	free(abs);
	free(rtop);
	return rel;
}

/*
 * The proposal as a commit on a new branch, step by step: find the work
 * tree around files[0], the identity, check the branch is new, the base
 * (HEAD), then a blob per file, a tree from a private index, commit-tree
 * and the branch: the work tree, the index and HEAD are never touched.
 * A file after the first that is not in that work tree is left out
 * (files[i].committed false).  0 (g->in_repo false when files[0] is not
 * in a work tree), -1 + e.
 */
int
fix_git_commit_files(struct fix_git_file *files, size_t n,
    const char *branch, const char *message, struct fix_git_result *g,
    struct errbuf *e)
{
	char top[PATH_MAX], (*blobs)[128], tree[128], head[128], env[4][160];
	const char *extra[6] = { NULL };
	char **rels;
	size_t i, k = 0;
	int rc;

	memset(g, 0, sizeof *g);
	if (n == 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "git: nothing to commit");
	blobs = xcalloc(n, sizeof *blobs);
	rels = xcalloc(n, sizeof *rels);
	for (i = 0; i < n; i++)
		files[i].committed = false;
	rc = fix_git_locate(files[0].path, g, top, sizeof top, &rels[0], e);
	if (rc != 1)
		goto out;   /* -1, or 0: not in a work tree */
	rc = -1;
	fix_git_identity(top, env, extra, e);
	if (fix_git_branch_is_new(top, branch, e) == -1 ||
	    fix_git_base(top, g, head, e) == -1)
		goto out;
	for (i = 0; i < n; i++) {
		char *rel = i == 0 ? rels[0] : fix_git_rel(top, files[i].path);

		if (rel == NULL)
			continue;
		if (fix_git_blob(top, files[i].text, strlen(files[i].text),
		    blobs[k], e) == -1) {
			if (i > 0)
				free(rel);
			goto out;
		}
		if (i > 0)
			rels[k] = rel;
		files[i].committed = true;
		k++;
	}
	if (fix_git_tree(top, blobs, rels, k, tree, e) == -1 ||
	    fix_git_commit_tree(top, tree, head, message, extra, g, e) == -1 ||
	    fix_git_branch(top, branch, g, e) == -1)
		goto out;
	snprintf(g->branch, sizeof g->branch, "%s", branch);
	snprintf(g->path_in_repo, sizeof g->path_in_repo, "%s", rels[0]);
	g->committed = true;
	rc = 0;
out:
	for (i = 0; i < n; i++)
		free(rels[i]);
	free(rels);
	free(blobs);
	return rc;
}

/* The patched policy alone as the commit (fix_git_commit_files). */
int
fix_git_commit(const char *policy_path, const char *patched, size_t len,
    const char *branch, const char *message, struct fix_git_result *g,
    struct errbuf *e)
{
	struct fix_git_file f = { .path = policy_path, .text = patched };

	(void)len;
	return fix_git_commit_files(&f, 1, branch, message, g, e);
}

/*
 * git push REMOTE BRANCH in the work tree top (argv, never a shell; no
 * force; no prompt: GIT_TERMINAL_PROMPT=0; at most FIX_GIT_PUSH_MS).
 * out gets what git said (bounded, NUL-terminated, not yet redacted).
 * Returns git's exit status, or -1 + e when it could not run (or ran out
 * of time).
 */
int
fix_git_push(const char *top, const char *remote, const char *branch,
    char *out, size_t outlen, struct errbuf *e)
{
	const char *av[] = { "git", "-C", top, "push", "--", remote, branch,
	    NULL };
	const char *env[] = { "GIT_TERMINAL_PROMPT=0", NULL };

	if (outlen > 0)
		out[0] = '\0';
	if (remote == NULL || remote[0] == '\0' || remote[0] == '-')
		return errbuf_set(e, ERRBUF_INPUT, "--push: '%s' is no remote",
		    remote ? remote : "");
	return util_run(av, env, FIX_GIT_PUSH_MS, out, outlen, e);
}
