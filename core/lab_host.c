/*
 * lab_host.c - the lab's host side: what ares does on this machine itself,
 * not through the engine.  The run dir's folders (0700, never through a
 * symlink, under directories no other user can swap; the ones the
 * sensors write handed to their uid), the socket dir and the sockets a
 * run leaves, the sensors' chains verified after a run, and the local
 * kill of every lab container through its cgroup once the engine stops
 * answering.  docs/security.md, docs/run-dir.md.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LAB_SUN_PATH_MAX 108   /* sizeof(struct sockaddr_un.sun_path) */

char *
lab_socket_dir(const char *run_dir, const char *run_id)
{
	if (strlen(run_dir) + sizeof "/ctl/gateway.sock" < LAB_SUN_PATH_MAX &&
	    strlen(run_dir) + sizeof "/bus/sensor.sock" < LAB_SUN_PATH_MAX)
		return xstrdup(run_dir);
	return xasprintf("/tmp/ares-%s", run_id);
}

/*
 * After the lab is down: unlink the sockets the run left (the bus
 * RUN_DIR/bus/sensor.sock and control RUN_DIR/ctl/gateway.sock, or their
 * /tmp stand-ins, and the docker-socket flaw's dockerproxy/docker.sock),
 * so a run directory is plain files that cp -r and artifact
 * uploads copy; an emptied folder goes too.  Only sockets are removed,
 * never through a symlink.  Best effort: returns the number removed.
 */
int
lab_remove_sockets(const char *run_dir, const char *run_id)
{
	static const char *const socks[] = { "bus/sensor.sock",
	    "ctl/gateway.sock", "ctl/" RELAY_SOCK_NAME, "dockerproxy/docker.sock",
	    NULL };
	char *sd = lab_socket_dir(run_dir, run_id);
	int n = 0;
	size_t i;

	for (i = 0; socks[i] != NULL; i++) {
		/* the proxy's socket folder is always in the run dir */
		char *p = xasprintf("%s/%s", strncmp(socks[i], "dockerproxy/",
		    12) == 0 ? run_dir : sd, socks[i]);
		char *dir = xstrdup(p);
		struct stat sb;

		*strrchr(dir, '/') = '\0';
		if (lstat(p, &sb) == 0 && S_ISSOCK(sb.st_mode) && unlink(p) == 0)
			n++;
		(void)rmdir(dir);        /* only when empty */
		free(dir);
		free(p);
	}
	if (strcmp(sd, run_dir) != 0)
		(void)rmdir(sd);
	free(sd);
	return n;
}

void
lab_sensor_ids(uid_t *uid, gid_t *gid)
{
	if (geteuid() == 0) {
		*uid = LAB_SENSOR_ID;
		*gid = LAB_SENSOR_ID;
	} else {
		*uid = geteuid();
		*gid = getegid();
	}
}

/*
 * Make path (created when absent) a directory of the given mode (0700:
 * only its owner enters): never through a symlink, owned by us (or, for a
 * sensors' folder, by the sensors' uid); with for_sensors and ares running
 * as root it is handed to the sensors' uid.  -1 + e.
 */
int
lab_own_dir(const char *path, mode_t mode, bool for_sensors,
    struct errbuf *e)
{
	uid_t su;
	gid_t sg;
	struct stat sb;
	int fd;

	lab_sensor_ids(&su, &sg);
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: mkdir %s: %s", path,
		    strerror(errno));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: %s: %s (a run's "
		    "folders are real directories, never symlinks)", path,
		    strerror(errno));
	if (fstat(fd, &sb) == -1 || (sb.st_uid != geteuid() &&
	    !(for_sensors && sb.st_uid == su))) {
		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: %s is owned by "
		    "uid %u, not by this process (uid %u): refusing to put a "
		    "run there", path, (unsigned)sb.st_uid,
		    (unsigned)geteuid());
	}
	if (fchmod(fd, mode) == -1 || (for_sensors && geteuid() == 0 &&
	    fchown(fd, su, sg) == -1)) {
		int err = errno;

		close(fd);
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: chmod/chown %s: %s",
		    path, strerror(err));
	}
	close(fd);
	return 0;
}

/* Is uid one this process may trust with its run directories: root, us,
 * or the operator who ran us through sudo? */
static bool
lab_trusted_uid(uid_t uid)
{
	const char *su = getenv("SUDO_UID");

	if (uid == 0 || uid == geteuid() || uid == getuid())
		return true;
	return su != NULL && su[0] != '\0' &&
	    strspn(su, "0123456789") == strlen(su) && strlen(su) < 11 &&
	    (uid_t)strtoul(su, NULL, 10) == uid;
}

/*
 * Every directory above path, up to /: a real directory, owned by a
 * trusted uid (lab_trusted_uid), and writable by no one else unless it is
 * sticky (/tmp): otherwise another local user could rename the run
 * directory away and put one of its own in its place (the path the lab
 * bind-mounts and writes into).  -1 + e naming the directory.
 */
static int
lab_check_ancestors(const char *path, struct errbuf *e)
{
	char *p = xstrdup(path), *slash;
	int rc = 0;

	while ((slash = strrchr(p, '/')) != NULL && rc == 0) {
		struct stat sb;

		if (slash == p)
			slash[1] = '\0';   /* "/" itself */
		else
			*slash = '\0';
		if (lstat(p, &sb) == -1)
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: %s: %s", p,
			    strerror(errno));
		else if (!S_ISDIR(sb.st_mode))
			rc = errbuf_set(e, ERRBUF_INPUT, "lab: %s is not a "
			    "directory (a symlink?): a run dir lives under real "
			    "directories only", p);
		else if (!lab_trusted_uid(sb.st_uid))
			rc = errbuf_set(e, ERRBUF_INPUT, "lab: %s belongs to uid "
			    "%u: another user could swap the run directory; "
			    "choose a runs directory (--runs, ARES_RUNS) that only "
			    "root or you can change", p, (unsigned)sb.st_uid);
		else if ((sb.st_mode & 022) != 0 && !(sb.st_mode & S_ISVTX))
			rc = errbuf_set(e, ERRBUF_INPUT, "lab: %s is writable by "
			    "other users (mode %03o) and not sticky: another user "
			    "could swap the run directory; choose a runs "
			    "directory (--runs, ARES_RUNS) that only root or you "
			    "can change", p, (unsigned)(sb.st_mode & 07777));
		if (strcmp(p, "/") == 0)
			break;
	}
	free(p);
	return rc;
}

int
lab_prepare_dirs(const char *run_dir, const char *run_id, struct errbuf *e)
{
	char *sd, *bus, *ctl, *ev;
	int rc = -1;

	if (run_dir[0] != '/')
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: run dir %s is not "
		    "an absolute path", run_dir);
	if (lab_check_ancestors(run_dir, e) == -1)
		return -1;
	sd = lab_socket_dir(run_dir, run_id);
	bus = xasprintf("%s/bus", sd);
	ctl = xasprintf("%s/ctl", sd);
	ev = xasprintf("%s/evidence", run_dir);

	if (lab_own_dir(run_dir, 0700, false, e) == 0 &&
	    (strcmp(sd, run_dir) == 0 ||
	    lab_own_dir(sd, 0700, false, e) == 0) &&
	    lab_own_dir(bus, 0700, true, e) == 0 &&
	    lab_own_dir(ctl, 0700, true, e) == 0 &&
	    lab_own_dir(ev, 0700, true, e) == 0)
		rc = 0;
	free(sd);
	free(bus);
	free(ctl);
	free(ev);
	return rc;
}

/* Is rel "evidence/<name>.jsonl" with a plain name (no path tricks)? */
static bool
lab_chain_name_ok(const char *rel)
{
	size_t n = strlen(rel), i;

	if (n < 16 || n > 70 || strncmp(rel, "evidence/", 9) != 0 ||
	    strcmp(rel + n - 6, ".jsonl") != 0 || rel[9] == '.')
		return false;
	for (i = 9; i < n; i++)
		if (!((rel[i] >= 'a' && rel[i] <= 'z') ||
		    (rel[i] >= 'A' && rel[i] <= 'Z') ||
		    (rel[i] >= '0' && rel[i] <= '9') || rel[i] == '.' ||
		    rel[i] == '_' || rel[i] == '-'))
			return false;
	return true;
}

/* Verify RUN_DIR/rel into c (never through a symlink). */
static void
lab_check_one(const char *run_dir, const char *run_id, const char *rel,
    struct lab_chain_check *c)
{
	char *path = xasprintf("%s/%s", run_dir, rel);
	struct errbuf e = { 0 };
	size_t n = strlen(rel);

	memset(c, 0, sizeof *c);
	snprintf(c->path, sizeof c->path, "%s", rel);
	snprintf(c->name, sizeof c->name, "sensor:%.*s", (int)(n - 15),
	    rel + 9);
	c->readable = evidence_verify_file(path, run_id, &c->v, &e) == 0;
	if (!c->readable)
		snprintf(c->error, sizeof c->error, "%.250s", e.msg);
	free(path);
}

int
lab_check_chains(const char *run_dir, const char *run_id,
    struct lab_chain_check *out, size_t max, char *unexpected, size_t ulen,
    struct errbuf *e)
{
	char *path = xasprintf("%s/lab.json", run_dir), *txt;
	char known[LAB_CHAINS_MAX * 10][80];
	size_t len = 0, n = 0, nknown = 0, used = 0, i;
	const cJSON *chains, *it;
	struct dirent *de;
	cJSON *j;
	DIR *dir;

	if (ulen > 0)
		unexpected[0] = '\0';
	txt = util_read_regular(path, 256 * 1024, &len, e);
	free(path);
	if (txt == NULL)
		return errbuf_prefix(e, "lab.json");
	j = cJSON_ParseWithLength(txt, len);
	free(txt);
	chains = cJSON_GetObjectItemCaseSensitive(j, "chains");
	if (!cJSON_IsArray(chains)) {
		cJSON_Delete(j);
		return errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: chains: not "
		    "an array of chain paths", run_dir);
	}
	cJSON_ArrayForEach(it, chains) {
		char stem[80];
		int k;

		if (!cJSON_IsString(it) || !lab_chain_name_ok(it->valuestring)) {
			cJSON_Delete(j);
			return errbuf_set(e, ERRBUF_INPUT, "%s/lab.json: chains: "
			    "not a chain path under evidence/", run_dir);
		}
		if (nknown >= sizeof known / sizeof known[0])
			break;
		/* the chain a sensor started with, then the siblings
		 * ("<stem>.rN.jsonl") it writes when restarted */
		snprintf(known[nknown++], sizeof known[0], "%s",
		    it->valuestring);
		snprintf(stem, sizeof stem, "%.*s",
		    (int)(strlen(it->valuestring) - 6), it->valuestring);
		for (k = 1; k <= 9 && nknown < sizeof known / sizeof known[0];
		    k++) {
			struct stat sb;
			char *alt = xasprintf("%s/%s.r%d.jsonl", run_dir, stem, k);

			if (lstat(alt, &sb) == 0)
				snprintf(known[nknown++], sizeof known[0],
				    "%.70s.r%d.jsonl", stem, k);
			free(alt);
		}
	}
	cJSON_Delete(j);
	for (i = 0; i < nknown && n < max; i++)
		lab_check_one(run_dir, run_id, known[i], &out[n++]);
	/* Anything else in evidence/ was not written by a sensor ares
	 * started: never read, named. */
	path = xasprintf("%s/evidence", run_dir);
	dir = opendir(path);
	free(path);
	while (dir != NULL && (de = readdir(dir)) != NULL) {
		char rel[300];
		bool ok = false;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(rel, sizeof rel, "evidence/%s", de->d_name);
		for (i = 0; i < nknown && !ok; i++)
			ok = strcmp(rel, known[i]) == 0;
		if (ok || used + 1 >= ulen)
			continue;
		{
			char clean[80];

			util_sanitize(clean, sizeof clean, de->d_name,
			    strlen(de->d_name), false);
			used += (size_t)snprintf(unexpected + used, ulen - used,
			    "%s%s", used > 0 ? ", " : "", clean);
			if (used >= ulen)
				used = ulen - 1;
		}
	}
	if (dir != NULL)
		closedir(dir);
	return (int)n;
}

/* The cgroup dir of container id: the agent's dir with the agent's id
 * replaced in its last component, else docker's usual layouts.  *version
 * gets 1 (v1 freezer), 2 (v2) or 0 (a v1 dir without the freezer).
 * false when none exists. */
static bool
lab_cgroup_of(const struct lab *lab, const char *agent_dir, const char *id,
    char *out, size_t outlen, int *version)
{
	static const char *const fmts[] = {
		"/sys/fs/cgroup/freezer/docker/%s",
		"/sys/fs/cgroup/docker/%s",
		"/sys/fs/cgroup/system.slice/docker-%s.scope",
		"/sys/fs/cgroup/pids/docker/%s",
	};
	const char *base, *at;
	size_t i;

	/* an Id that is not 64 hex digits ("..", "x/../y") never names a
	 * path here */
	if (!docker_id_valid(id))
		return false;
	if (agent_dir != NULL && lab->agent.id != NULL &&
	    (base = strrchr(agent_dir, '/')) != NULL &&
	    (at = strstr(base, lab->agent.id)) != NULL) {
		snprintf(out, outlen, "%.*s%s%s", (int)(at - agent_dir),
		    agent_dir, id, at + strlen(lab->agent.id));
		if (access(out, F_OK) == 0)
			goto found;
	}
	for (i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
		snprintf(out, outlen, fmts[i], id);
		if (access(out, F_OK) == 0)
			goto found;
	}
	return false;
found:
	{
		char *f = xasprintf("%s/freezer.state", out);

		*version = access(f, W_OK) == 0 ? 1 : 0;
		free(f);
		if (*version == 0) {
			f = xasprintf("%s/cgroup.freeze", out);
			*version = access(f, W_OK) == 0 ? 2 : 0;
			free(f);
		}
	}
	return true;
}

/* Write s to dir/name.  0 or -1. */
static int
lab_cg_write(const char *dir, const char *name, const char *s)
{
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = -1;

	free(p);
	if (fd == -1)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* SIGKILL every task listed in dir/cgroup.procs (bounded).  Returns the
 * number of tasks seen, -1 when the list is unreadable. */
static int
lab_cg_kill(const char *dir)
{
	char *p = xasprintf("%s/cgroup.procs", dir), *txt, *s, *save = NULL;
	struct errbuf e = { 0 };
	size_t len;
	int n = 0;

	txt = util_read_file(p, 256 * 1024, &len, &e);
	free(p);
	if (txt == NULL)
		return -1;
	for (s = strtok_r(txt, "\n", &save); s != NULL;
	    s = strtok_r(NULL, "\n", &save)) {
		long pid = strtol(s, NULL, 10);

		if (pid > 1 && pid != (long)getpid()) {
			(void)kill((pid_t)pid, SIGKILL);
			n++;
		}
	}
	free(txt);
	return n;
}

int
lab_kill_local(const struct lab *lab, const char *agent_cgroup_dir,
    char *note, size_t notelen)
{
	struct lab_container *cs[LAB_NROLES];
	char dirs[LAB_NROLES][1024];
	int vers[LAB_NROLES];
	bool have[LAB_NROLES] = { false };
	size_t i, nmiss = 0;
	int stopped = 0, round;

	if (note != NULL && notelen > 0)
		note[0] = '\0';
	if (lab->remote) {
		/* its containers run on another machine's kernel: this
		 * machine's cgroups are not theirs */
		if (note != NULL && notelen > 0)
			snprintf(note, notelen, "remote engine: its containers "
			    "cannot be stopped from here");
		return 0;
	}
	lab_listed(lab, cs);
	for (i = 0; i < LAB_NROLES; i++) {
		if (cs[i]->id == NULL)
			continue;
		have[i] = lab_cgroup_of(lab, agent_cgroup_dir, cs[i]->id,
		    dirs[i], sizeof dirs[i], &vers[i]);
		if (!have[i]) {
			nmiss++;
			continue;
		}
		/* frozen first, so that no task forks while we kill */
		if (vers[i] == 1)
			(void)lab_cg_write(dirs[i], "freezer.state", "FROZEN");
		else if (vers[i] == 2)
			(void)lab_cg_write(dirs[i], "cgroup.freeze", "1");
	}
	for (i = 0; i < LAB_NROLES; i++) {
		if (!have[i])
			continue;
		(void)lab_cg_kill(dirs[i]);
		/* a SIGKILL pending in a frozen task acts as it thaws */
		if (vers[i] == 1)
			(void)lab_cg_write(dirs[i], "freezer.state", "THAWED");
		else if (vers[i] == 2)
			(void)lab_cg_write(dirs[i], "cgroup.freeze", "0");
	}
	/* until every cgroup is empty (what a kill could not reach yet) */
	for (round = 0; round < 100; round++) {
		int left = 0;

		for (i = 0; i < LAB_NROLES; i++)
			if (have[i]) {
				int n = lab_cg_kill(dirs[i]);

				left += n > 0 ? n : 0;
			}
		if (left == 0)
			break;
		usleep(20000);
	}
	for (i = 0; i < LAB_NROLES; i++)
		if (have[i])
			stopped++;
	if (note != NULL && notelen > 0 && (nmiss > 0 || round == 100))
		snprintf(note, notelen, "%zu container(s) without a cgroup "
		    "found%s", nmiss, round == 100 ? "; tasks still listed "
		    "after 2 s" : "");
	return stopped;
}

int
lab_kill_all(struct docker *d, const struct lab *lab, size_t *killed,
    char *first, size_t n)
{
	struct lab_container *cs[LAB_NROLES];
	size_t k;
	int rc = 0;

	*killed = 0;
	if (n > 0)
		first[0] = '\0';
	lab_listed(lab, cs);
	for (int pass = 0; pass < 2; pass++)   /* the agent first */
		for (k = 0; k < LAB_NROLES; k++) {
			struct errbuf e2 = { 0 };
			cJSON *ins;
			bool agent = cs[k] == &lab->agent, running;

			if (cs[k]->id == NULL || agent != (pass == 0))
				continue;
			if (docker_container_kill(d, cs[k]->id, "KILL",
			    &e2) == 0) {
				(*killed)++;
				continue;
			}
			/* not running any more is as good */
			ins = docker_container_inspect(d, cs[k]->id, &e2);
			running = ins == NULL || docker_inspect_running(ins);
			cJSON_Delete(ins);
			if (!running)
				continue;
			if (rc == 0 && n > 0)
				snprintf(first, n, "%.40s: %.200s", cs[k]->role,
				    e2.msg);
			rc = -1;
		}
	return rc;
}
