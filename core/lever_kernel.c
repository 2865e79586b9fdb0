/*
 * lever_kernel.c - levers that act on the agent through the host kernel,
 * without the engine: cgroup-freeze (freezer cgroup v1, cgroup.freeze v2)
 * and link-down (every interface but lo down inside the agent's network
 * namespace).  Available only when the engine is local: the agent's pid is
 * visible in /proc with a cgroup naming its container id.  Otherwise they
 * fail closed with the reason lever_kernel_prepare recorded.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LEVER_CG_FILE_MAX   (256 * 1024)  /* /proc/<pid>/cgroup, mountinfo */
#define LEVER_FREEZE_NS     2000000000ull /* FREEZING -> FROZEN bound */
#define LEVER_IF_MAX        64            /* interfaces handled */
#define LEVER_CG_DEPTH      16            /* cgroup levels below the agent's */
#define LEVER_CG_DIRS       1024          /* cgroups below the agent's */

/* ---- pure parsers --------------------------------------------------- */

/* Does the comma-separated list s[0..n) contain word? */
static bool
lever_list_has(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word), i = 0;

	while (i <= n) {
		size_t j = i;

		while (j < n && s[j] != ',')
			j++;
		if (j - i == wl && memcmp(s + i, word, wl) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

int
lever_cgroup_parse(const char *text, size_t len, int *version, char *path,
    size_t path_max, struct errbuf *e)
{
	const char *line, *v2 = NULL;
	size_t llen, off = 0, v2len = 0, lines = 0;

	while (util_next_line(text, len, &off, &line, &llen)) {
		const char *c1, *c2;

		if (++lines > 1024)
			break;
		c1 = memchr(line, ':', llen);
		c2 = c1 != NULL ? memchr(c1 + 1, ':', llen -
		    (size_t)(c1 + 1 - line)) : NULL;
		if (c2 == NULL)
			continue;
		if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0') {
			v2 = c2 + 1;
			v2len = llen - (size_t)(v2 - line);
			continue;
		}
		if (lever_list_has(c1 + 1, (size_t)(c2 - c1 - 1), "freezer")) {
			size_t pl = llen - (size_t)(c2 + 1 - line);

			if (pl == 0 || c2[1] != '/' || pl >= path_max)
				return errbuf_set(e, ERRBUF_INTERNAL, "cgroup "
				    "file: bad freezer path");
			memcpy(path, c2 + 1, pl);
			path[pl] = '\0';
			*version = 1;
			return 0;
		}
	}
	if (v2 != NULL) {
		if (v2len == 0 || v2[0] != '/' || v2len >= path_max)
			return errbuf_set(e, ERRBUF_INTERNAL, "cgroup file: bad "
			    "unified (0::) path");
		memcpy(path, v2, v2len);
		path[v2len] = '\0';
		*version = 2;
		return 0;
	}
	return errbuf_set(e, ERRBUF_INTERNAL, "cgroup file: neither a v1 "
	    "freezer line nor a v2 \"0::\" line");
}

/* First space in [p, end), or end. */
static const char *
lever_field_end(const char *p, const char *end)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));

	return sp != NULL ? sp : end;
}

/* Copy field s[0..n) into out (out_max); false when it does not fit. */
static bool
lever_copy(char *out, size_t out_max, const char *s, size_t n)
{
	if (n >= out_max)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

int
lever_mountinfo_cgroup(const char *text, size_t len, int version, char *mnt,
    size_t mnt_max, char *root, size_t root_max)
{
	const char *line;
	size_t llen, off = 0, lines = 0;

	/* "id parent maj:min root mountpoint opts [optional...] - fstype
	 *  source superopts" */
	while (util_next_line(text, len, &off, &line, &llen)) {
		const char *f[6], *dash, *p = line, *end = line + llen;
		size_t fl[6], k;
		const char *fs, *src, *sup;
		size_t fsl, srcl, supl;

		if (++lines > 10000)
			break;
		for (k = 0; k < 6; k++) {
			const char *sp;

			while (p < end && *p == ' ')
				p++;
			sp = memchr(p, ' ', (size_t)(end - p));
			f[k] = p;
			fl[k] = sp != NULL ? (size_t)(sp - p) : (size_t)(end - p);
			p = f[k] + fl[k];
		}
		dash = NULL;
		for (const char *q = p; q + 2 < end; q++)
			if (q[0] == ' ' && q[1] == '-' && q[2] == ' ') {
				dash = q + 3;
				break;
			}
		if (dash == NULL)
			continue;
		fs = dash;
		fsl = (size_t)(lever_field_end(fs, end) - fs);
		src = fs + fsl + (fs + fsl < end ? 1 : 0);
		srcl = (size_t)(lever_field_end(src, end) - src);
		sup = src + srcl + (src + srcl < end ? 1 : 0);
		supl = (size_t)(end - sup);
		if (version == 1 && fsl == 6 && memcmp(fs, "cgroup", 6) == 0 &&
		    lever_list_has(sup, supl, "freezer")) {
			if (!lever_copy(mnt, mnt_max, f[4], fl[4]) ||
			    !lever_copy(root, root_max, f[3], fl[3]))
				return -1;
			return 0;
		}
		if (version == 2 && fsl == 7 && memcmp(fs, "cgroup2", 7) == 0) {
			if (!lever_copy(mnt, mnt_max, f[4], fl[4]) ||
			    !lever_copy(root, root_max, f[3], fl[3]))
				return -1;
			return 0;
		}
	}
	return -1;
}

/* Whether path component c[0..n) names container id: exactly the id
 * (cgroupfs driver, "/docker/<id>") or "<prefix>-<id>.scope" (systemd
 * driver, "docker-<id>.scope"). */
static bool
lever_names_id(const char *c, size_t n, const char *id, size_t il)
{
	if (n == il && memcmp(c, id, il) == 0)
		return true;
	return n > il + 7 && memcmp(c + n - 6, ".scope", 6) == 0 &&
	    c[n - il - 7] == '-' && memcmp(c + n - il - 6, id, il) == 0;
}

int
lever_cgroup_container(const char *path, const char *id, char *out,
    size_t out_max)
{
	size_t il = strlen(id), i = 0, n = strlen(path);

	if (il == 0 || path[0] != '/')
		return -1;
	while (i < n) {
		size_t j;

		while (i < n && path[i] == '/')
			i++;
		j = i;
		while (j < n && path[j] != '/')
			j++;
		if ((j - i == 1 && path[i] == '.') ||
		    (j - i == 2 && path[i] == '.' && path[i + 1] == '.'))
			return -1;
		if (j > i && lever_names_id(path + i, j - i, id, il)) {
			if (j >= out_max)
				return -1;
			memcpy(out, path, j);
			out[j] = '\0';
			return 0;
		}
		i = j;
	}
	return -1;
}

/* ---- prepare / release --------------------------------------------- */

/* Write s to dir/file.  -1 + e. */
static int
lever_write_at(const char *dir, const char *file, const char *s,
    struct errbuf *e)
{
	char path[4096];
	size_t n = strlen(s);
	ssize_t w;
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: open: %s", path,
		    strerror(errno));
	w = write(fd, s, n);
	if (w != (ssize_t)n) {
		int err = errno;

		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: write \"%s\": %s",
		    path, s, w == -1 ? strerror(err) : "short write");
	}
	close(fd);
	return 0;
}

/* Read dir/file (small) into buf.  -1 + e. */
static int
lever_read_at(const char *dir, const char *file, char *buf, size_t max,
    struct errbuf *e)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: open: %s", path,
		    strerror(errno));
	n = read(fd, buf, max - 1);
	close(fd);
	if (n < 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: read: %s", path,
		    strerror(errno));
	buf[n] = '\0';
	return 0;
}

int
lever_kernel_prepare(struct lever_ctx *c, struct errbuf *e)
{
	char path[4096], cg[2048], leaf[2048], mnt[1024], root[1024];
	char *text = NULL;
	size_t len = 0, rl;
	struct stat self_ns, agent_ns;
	const char *rel;
	int version = 0;

	c->netns_fd = -1;
	if (c->docker != NULL && docker_is_remote(c->docker))
		return errbuf_set(e, ERRBUF_INPUT, "remote engine (%s): the "
		    "kernel levers (cgroup-freeze, link-down) need the host "
		    "kernel; local engine only", docker_where(c->docker));
	if (c->agent_pid <= 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: the "
		    "engine reports no pid for the agent");
	snprintf(path, sizeof path, "/proc/%d/cgroup", c->agent_pid);
	text = util_read_file(path, LEVER_CG_FILE_MAX, &len, e);
	if (text == NULL)
		return errbuf_prefix(e, "kernel levers: pid %d not visible "
		    "(remote engine?)", c->agent_pid);
	/* A remote engine's pid may name an unrelated local process: the
	 * cgroup must name the container. */
	if (strstr(text, c->agent_id) == NULL) {
		free(text);
		return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: pid %d "
		    "is not in a cgroup of container %.12s (remote engine?)",
		    c->agent_pid, c->agent_id);
	}
	if (lever_cgroup_parse(text, len, &version, leaf, sizeof leaf,
	    e) == -1) {
		free(text);
		return errbuf_prefix(e, "kernel levers: %s", path);
	}
	free(text);
	/* The container's own cgroup, not the pid's leaf: a cgroup made
	 * below it (holding the pid) covers only part of the container. */
	if (lever_cgroup_container(leaf, c->agent_id, cg, sizeof cg) == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: no "
		    "component of cgroup %.200s of pid %d names container "
		    "%.12s", leaf, c->agent_pid, c->agent_id);
	text = util_read_file("/proc/self/mountinfo", LEVER_CG_FILE_MAX, &len,
	    e);
	if (text == NULL)
		return errbuf_prefix(e, "kernel levers");
	if (lever_mountinfo_cgroup(text, len, version, mnt, sizeof mnt, root,
	    sizeof root) == -1) {
		/* docker's usual layout as a fallback */
		snprintf(mnt, sizeof mnt, "%s", version == 1 ?
		    "/sys/fs/cgroup/freezer" : "/sys/fs/cgroup");
		snprintf(root, sizeof root, "/");
	}
	free(text);
	rl = strlen(root);
	rel = cg;
	if (strcmp(root, "/") != 0 && strncmp(cg, root, rl) == 0 &&
	    (cg[rl] == '/' || cg[rl] == '\0'))
		rel = cg + rl;
	snprintf(path, sizeof path, "%s%s", mnt, rel);
	if (access(path, F_OK) == -1) {
		/* Last resort: docker's cgroupfs layout. */
		snprintf(path, sizeof path, "%s/docker/%s", mnt, c->agent_id);
		if (access(path, F_OK) == -1)
			return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: "
			    "cgroup dir %s%s of the agent not found", mnt, rel);
	}
	if (strcmp(rel, "/") == 0 || rel[0] == '\0')
		return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: the agent "
		    "is in the root cgroup: refusing to freeze it");
	{
		char *f = xasprintf("%s/%s", path, version == 1 ?
		    "freezer.state" : "cgroup.freeze");
		int err = access(f, W_OK) == -1 ? errno : 0;

		if (err != 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: %s: %s "
			    "(no freezer)", f, strerror(err));
			free(f);
			return -1;
		}
		free(f);
	}
	c->cgroup_version = version;
	c->cgroup_dir = xstrdup(path);

	/* The network namespace: never our own (a host-network agent). */
	snprintf(path, sizeof path, "/proc/%d/ns/net", c->agent_pid);
	c->netns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->netns_fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: %s: %s",
		    path, strerror(errno));
	if (fstat(c->netns_fd, &agent_ns) == -1 ||
	    stat("/proc/self/ns/net", &self_ns) == -1 ||
	    (agent_ns.st_ino == self_ns.st_ino &&
	    agent_ns.st_dev == self_ns.st_dev)) {
		close(c->netns_fd);
		c->netns_fd = -1;
		return errbuf_set(e, ERRBUF_INTERNAL, "kernel levers: the agent "
		    "shares our network namespace: refusing link-down");
	}
	return 0;
}

void
lever_kernel_release(struct lever_ctx *c)
{
	if (c->frozen && c->cgroup_dir != NULL) {
		struct errbuf e = { 0 };

		/* A SIGKILL stays pending while frozen and is acted on as
		 * the tasks leave the freezer: the agent never runs again,
		 * and the engine can reap and remove it. */
		if (c->agent_pid > 0)
			(void)kill(c->agent_pid, SIGKILL);
		(void)lever_write_at(c->cgroup_dir, c->cgroup_version == 1 ?
		    "freezer.state" : "cgroup.freeze", c->cgroup_version == 1 ?
		    "THAWED" : "0", &e);
		c->frozen = false;
	}
	if (c->netns_fd > 0)
		close(c->netns_fd);
	c->netns_fd = -1;
	free(c->cgroup_dir);
	c->cgroup_dir = NULL;
	c->cgroup_version = 0;
}

/* Fail closed with the reason prepare recorded. */
static int
lever_kernel_check(const struct lever_ctx *c, const char *lever, bool need_ns,
    struct errbuf *e)
{
	if (!c->prepared)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: levers not prepared "
		    "(lever_ctx_prepare was not called)", lever);
	if (c->kernel_why != NULL)
		return errbuf_set(e, ERRBUF_INTERNAL, "%s unavailable: %s",
		    lever, c->kernel_why);
	if (c->cgroup_dir == NULL || (need_ns && c->netns_fd < 0))
		return errbuf_set(e, ERRBUF_INTERNAL, "%s unavailable: no "
		    "cgroup/namespace of the agent", lever);
	return 0;
}

/* ---- cgroup-freeze ------------------------------------------------- */

/* Freeze (or thaw) the agent's cgroup: v1 freezer.state, v2
 * cgroup.freeze.  -1 + e. */
static int
lever_freeze_set(struct lever_ctx *c, bool freeze, struct errbuf *e)
{
	const char *value = c->cgroup_version == 1 ?
	    (freeze ? "FROZEN" : "THAWED") : (freeze ? "1" : "0");

	if (lever_kernel_check(c, "cgroup-freeze", false, e) == -1)
		return -1;
	if (lever_write_at(c->cgroup_dir, c->cgroup_version == 1 ?
	    "freezer.state" : "cgroup.freeze", value, e) == -1)
		return -1;
	c->frozen = freeze;
	return 0;
}

static int
lever_freeze_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return lever_freeze_set(c, true, e);
}

int
lever_frozen_parse(const char *text, size_t len, int version)
{
	const char *line;
	size_t llen, off = 0, lines = 0;
	int found = -1;

	if (version == 1) {
		/* one word: THAWED, FREEZING or FROZEN, then a newline */
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
			len--;
		if (len == 6 && memcmp(text, "FROZEN", 6) == 0)
			return 1;
		if ((len == 6 && memcmp(text, "THAWED", 6) == 0) ||
		    (len == 8 && memcmp(text, "FREEZING", 8) == 0))
			return 0;
		return -1;
	}
	if (version != 2)
		return -1;
	/* "key value" lines ("populated 1", "frozen 0"); exactly one
	 * "frozen" line, its value 0 or 1 */
	while (util_next_line(text, len, &off, &line, &llen)) {
		if (++lines > 64)
			return -1;
		if (llen == 8 && memcmp(line, "frozen ", 7) == 0 &&
		    (line[7] == '0' || line[7] == '1')) {
			if (found != -1)
				return -1;
			found = line[7] - '0';
		} else if (llen >= 7 && memcmp(line, "frozen ", 7) == 0)
			return -1;
	}
	return found;
}

/*
 * v1: whether every cgroup below dir (depth levels at most, *budget dirs
 * in all) reads FROZEN.  1 yes; 0 one does not (its path and state in
 * bad); -1 + e when one cannot be read or the tree is too deep or too
 * large (a verify that cannot tell fails).
 */
static int
lever_tree_frozen(const char *dir, int depth, int *budget, char *bad,
    size_t bad_max, struct errbuf *e)
{
	struct dirent *de;
	DIR *dp;
	int fd, rc = 1;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "cgroup %s: open: %s",
		    dir, strerror(errno));
	dp = fdopendir(fd);
	if (dp == NULL) {
		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "cgroup %s: %s", dir,
		    strerror(errno));
	}
	while (rc == 1 && (de = readdir(dp)) != NULL) {
		char *sub, buf[64];
		struct stat st;
		int f;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		sub = xasprintf("%s/%s", dir, de->d_name);
		if (de->d_type == DT_UNKNOWN && (lstat(sub, &st) == -1 ||
		    !S_ISDIR(st.st_mode))) {
			free(sub);
			continue;
		}
		if (depth <= 0 || --*budget < 0)
			rc = errbuf_set(e, ERRBUF_INTERNAL, "cgroup %s: more "
			    "than %d levels or %d cgroups below the agent's",
			    sub, LEVER_CG_DEPTH, LEVER_CG_DIRS);
		else if (lever_read_at(sub, "freezer.state", buf, sizeof buf,
		    e) == -1)
			rc = -1;
		else if ((f = lever_frozen_parse(buf, strlen(buf), 1)) != 1) {
			buf[strcspn(buf, "\n")] = '\0';
			if (f == -1)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "cgroup %s: "
				    "freezer state not understood (%.20s)", sub,
				    buf);
			else {
				snprintf(bad, bad_max, "%s is %s", sub, buf);
				rc = 0;
			}
		} else
			rc = lever_tree_frozen(sub, depth - 1, budget, bad,
			    bad_max, e);
		free(sub);
	}
	closedir(dp);
	return rc;
}

/* Read back until the kernel says every task of the container's cgroup
 * is frozen (bounded): v2 "frozen 1" of that cgroup (it covers every
 * cgroup below); v1 FROZEN of it and of every cgroup below it. */
static int
lever_freeze_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	uint64_t deadline = util_mono_ns() + LEVER_FREEZE_NS;
	char buf[512];

	(void)l;
	if (lever_kernel_check(c, "cgroup-freeze", false, e) == -1)
		return -1;
	for (;;) {
		int frozen;

		if (lever_read_at(c->cgroup_dir, c->cgroup_version == 1 ?
		    "freezer.state" : "cgroup.events", buf, sizeof buf,
		    e) == -1)
			return -1;
		frozen = lever_frozen_parse(buf, strlen(buf),
		    c->cgroup_version);
		if (frozen == 1 && c->cgroup_version == 1) {
			int budget = LEVER_CG_DIRS;

			frozen = lever_tree_frozen(c->cgroup_dir,
			    LEVER_CG_DEPTH, &budget, buf, sizeof buf, e);
			if (frozen == -1)
				return -1;
		}
		if (frozen == 1)
			return 0;
		if (frozen == -1) {
			buf[strcspn(buf, "\n")] = '\0';
			return errbuf_set(e, ERRBUF_INTERNAL, "cgroup %s: freezer "
			    "state not understood (%.60s)", c->cgroup_dir, buf);
		}
		if (util_mono_ns() > deadline) {
			buf[strcspn(buf, "\n")] = '\0';
			return errbuf_set(e, ERRBUF_INTERNAL, "cgroup %s still "
			    "not frozen after %llu ms (%s)", c->cgroup_dir,
			    LEVER_FREEZE_NS / 1000000ull, buf);
		}
		{
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
}

static int
lever_freeze_reset(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return lever_freeze_set(c, false, e);
}

/* ---- link-down ----------------------------------------------------- */

enum lever_ns_op { LEVER_NS_DOWN, LEVER_NS_CHECK, LEVER_NS_UP };

struct lever_ns_job {
	int nsfd;
	enum lever_ns_op op;
	int rc;
	struct errbuf e;
};

/*
 * Runs in a short-lived thread: setns() into the agent's network namespace
 * (this thread only; the caller's namespace never changes), then bring
 * every interface but lo down / check it is down / bring it up.
 */
static void *
lever_ns_thread(void *arg)
{
	struct lever_ns_job *j = arg;
	struct if_nameindex *ifs, *it;
	int s, n = 0, up = 0;
	char upnames[256] = "";

	j->rc = -1;
	if (setns(j->nsfd, CLONE_NEWNET) == -1) {
		errbuf_set(&j->e, ERRBUF_INTERNAL, "link-down: setns: %s",
		    strerror(errno));
		return NULL;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s == -1) {
		errbuf_set(&j->e, ERRBUF_INTERNAL, "link-down: socket: %s",
		    strerror(errno));
		return NULL;
	}
	ifs = if_nameindex();
	if (ifs == NULL) {
		errbuf_set(&j->e, ERRBUF_INTERNAL, "link-down: if_nameindex: "
		    "%s", strerror(errno));
		close(s);
		return NULL;
	}
	for (it = ifs; it->if_index != 0 && it->if_name != NULL &&
	    n < LEVER_IF_MAX; it++, n++) {
		struct ifreq ifr;

		if (strcmp(it->if_name, "lo") == 0)
			continue;
		memset(&ifr, 0, sizeof ifr);
		snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", it->if_name);
		if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1) {
			if (errno == ENODEV)
				continue;   /* gone meanwhile */
			errbuf_set(&j->e, ERRBUF_INTERNAL, "link-down: %s: "
			    "SIOCGIFFLAGS: %s", it->if_name, strerror(errno));
			goto out;
		}
		if (j->op == LEVER_NS_CHECK) {
			if (ifr.ifr_flags & IFF_UP) {
				up++;
				snprintf(upnames + strlen(upnames),
				    sizeof upnames - strlen(upnames), " %s",
				    it->if_name);
			}
			continue;
		}
		if (j->op == LEVER_NS_DOWN)
			ifr.ifr_flags &= ~IFF_UP;
		else
			ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1) {
			errbuf_set(&j->e, ERRBUF_INTERNAL, "link-down: %s: "
			    "SIOCSIFFLAGS: %s", it->if_name, strerror(errno));
			goto out;
		}
	}
	if (up > 0) {
		errbuf_set(&j->e, ERRBUF_INTERNAL, "link-down: still up in the "
		    "agent's namespace:%s", upnames);
		goto out;
	}
	j->rc = 0;
out:
	if_freenameindex(ifs);
	close(s);
	return NULL;
}

/* Run one namespace job in a dedicated thread and wait for it. */
static int
lever_ns_run(struct lever_ctx *c, enum lever_ns_op op, struct errbuf *e)
{
	struct lever_ns_job j = { .nsfd = c->netns_fd, .op = op, .rc = -1 };
	pthread_t t;
	int err;

	if (lever_kernel_check(c, "link-down", true, e) == -1)
		return -1;
	/* the caller's priority, and on the watchdog's list when raised
	 * (a small stack: nothing to populate under a memory lock) */
	err = lever_rt_thread(&t, 256 * 1024, lever_ns_thread, &j);
	if (err != 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "link-down: thread: %s",
		    strerror(err));
	pthread_join(t, NULL);
	if (j.rc == -1) {
		if (e != NULL)
			*e = j.e;
		return -1;
	}
	return 0;
}

static int
lever_link_fire(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return lever_ns_run(c, LEVER_NS_DOWN, e);
}

static int
lever_link_verify(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return lever_ns_run(c, LEVER_NS_CHECK, e);
}

static int
lever_link_reset(struct lever_ctx *c, const struct lever_entry *l,
    struct errbuf *e)
{
	(void)l;
	return lever_ns_run(c, LEVER_NS_UP, e);
}

const struct lever_entry lever_cgroup_freeze = {
	.name = "cgroup-freeze",
	.summary = "freeze the agent's cgroup in the kernel (freezer state "
	    "read back FROZEN)",
	.fire = lever_freeze_fire,
	.verify = lever_freeze_verify,
	.reset = lever_freeze_reset,
	.cuts = LEVER_CUTS_ALL,
	.cuts_off = true,
	.freezes = true,
};

const struct lever_entry lever_link_down = {
	.name = "link-down",
	.summary = "every interface but lo down in the agent's network "
	    "namespace (flags read back)",
	.fire = lever_link_fire,
	.verify = lever_link_verify,
	.reset = lever_link_reset,
	.cuts = LEVER_CUTS_MODEL | LEVER_CUTS_NETWORK,
	.cuts_off = true,
};
