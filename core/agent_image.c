/*
 * agent_image.c - agent kind image: a user's own image as the lab's agent
 * (docs/agents.md "Your own image").
 *
 * Three parts:
 *  - the syntax of the policy's agent.image, .user, .workdir, .home and
 *    the environment names ares keeps for itself (core/policy.c binds the
 *    keys and calls these);
 *  - the engine lookup of the image before lab up creates anything
 *    (GET /images/NAME/json; an absent image is an error naming docker
 *    build / docker load: ares never pulls);
 *  - the agent role's spec: the image with the policy's command, env,
 *    user, workdir and home, inside Poyo's boundary (read-only rootfs,
 *    no capabilities, limits, the lab network, the lab's dns).  An idle
 *    lab (ares probe, ares lab up) runs no agent: it mounts the probe
 *    helper, a static busybox taken from the lab image's own tar,
 *    read-only at AGENT_IMAGE_HELPER and idles with it, so the probe
 *    battery runs in an image without any shell (core/probe_run.c).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* syntax                                                               */
/* ------------------------------------------------------------------ */

static const char *const agent_image_owned[] = {
	"OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "HOME",
	"AGENT_TASK", "AGENT_MODEL", "AGENT_MAX_STEPS", "AGENT_IDLE", NULL,
};

/* Whether name is one of agent_image_owned (internal.h). */
bool
agent_image_env_owned(const char *name)
{
	size_t i;

	for (i = 0; agent_image_owned[i] != NULL; i++)
		if (strcmp(agent_image_owned[i], name) == 0)
			return true;
	return false;
}

/* agent_image_owned as "A, B, C" (internal.h). */
const char *
agent_image_env_owned_list(void)
{
	return "OPENAI_BASE_URL, OPENAI_API_BASE, OPENAI_API_KEY, HOME, "
	    "AGENT_TASK, AGENT_MODEL, AGENT_MAX_STEPS, AGENT_IDLE";
}

/* Whether s[0..n) are all in set. */
static bool
agent_image_all_in(const char *s, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(set, s[i]) == NULL)
			return false;
	return true;
}

#define AI_LOWER "abcdefghijklmnopqrstuvwxyz0123456789"
#define AI_ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZ" AI_LOWER

/* One path component of a repository name: [a-z0-9]+ joined by '.',
 * '_', "__" or runs of '-'. */
static bool
agent_image_component(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t run = 0;

		while (i < n && strchr(AI_LOWER, s[i]) != NULL && s[i] != '\0') {
			i++;
			run++;
		}
		if (run == 0)
			return false;
		if (i == n)
			return true;
		if (s[i] == '.' || (s[i] == '_' && (i + 1 >= n ||
		    s[i + 1] != '_')))
			i++;
		else if (s[i] == '_')
			i += 2;
		else if (s[i] == '-')
			while (i < n && s[i] == '-')
				i++;
		else
			return false;
		if (i >= n)
			return false;
	}
	return n > 0;
}

/* A registry host[:port] as the first component of a name. */
static bool
agent_image_domain(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t h = colon != NULL ? (size_t)(colon - s) : n;

	if (h == 0 || s[0] == '-' || s[0] == '.' || s[h - 1] == '-' ||
	    s[h - 1] == '.' || !agent_image_all_in(s, h, AI_ALNUM ".-"))
		return false;
	return colon == NULL || (n - h - 1 >= 1 && n - h - 1 <= 5 &&
	    agent_image_all_in(colon + 1, n - h - 1, "0123456789"));
}

/*
 * A Docker image reference: an image id "sha256:<64 hex>", or
 * [host[:port]/]path[/path...][:tag][@sha256:<64 hex>] with lowercase
 * path components and a tag of [A-Za-z0-9_.-] (at most 128, not starting
 * with '.' or '-').  NULL when fine, else the problem.
 */
static const char *
agent_image_ref(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = strlen(s), nlen, start, i;
	const char *at = strchr(s, '@'), *slash, *colon;

	if (len == 0 || len > AGENT_IMAGE_REF_MAX)
		return "expected an image reference of 1 to 255 bytes";
	if (strncmp(s, "sha256:", 7) == 0 && len == 71 &&
	    agent_image_all_in(s + 7, 64, hex))
		return NULL;            /* an image id */
	nlen = len;
	if (at != NULL) {
		if (strncmp(at, "@sha256:", 8) != 0 || strlen(at + 8) != 64 ||
		    !agent_image_all_in(at + 8, 64, hex))
			return "a digest is @sha256: and 64 lowercase hex "
			    "digits";
		nlen = (size_t)(at - s);
	}
	slash = NULL;
	for (i = 0; i < nlen; i++)
		if (s[i] == '/')
			slash = s + i;
	colon = NULL;
	for (i = slash != NULL ? (size_t)(slash - s) : 0; i < nlen; i++)
		if (s[i] == ':')
			colon = s + i;
	if (colon != NULL) {
		size_t tl = nlen - (size_t)(colon - s) - 1;

		if (tl == 0 || tl > 128 || colon[1] == '.' || colon[1] == '-' ||
		    !agent_image_all_in(colon + 1, tl, AI_ALNUM "_.-"))
			return "a tag is 1 to 128 of A-Z, a-z, 0-9, '_', '.', "
			    "'-' (not starting with '.' or '-')";
		nlen = (size_t)(colon - s);
	}
	/* the components */
	start = 0;
	for (i = 0; i <= nlen; i++) {
		bool first = start == 0;
		size_t n;

		if (i < nlen && s[i] != '/')
			continue;
		n = i - start;
		if (first && i < nlen && (memchr(s, '.', n) != NULL ||
		    memchr(s, ':', n) != NULL || (n == 9 &&
		    strncmp(s, "localhost", 9) == 0))) {
			if (!agent_image_domain(s, n))
				return "a registry host is letters, digits, "
				    "'.' and '-' with an optional :port";
		} else if (!agent_image_component(s + start, n)) {
			return "a repository name is lowercase: components of "
			    "a-z, 0-9 joined by '.', '_', '__' or '-', "
			    "separated by '/'";
		}
		start = i + 1;
	}
	return NULL;
}

/* An absolute, normalised path: '/' then components of
 * [A-Za-z0-9._@+-], no "." or ".." component, no "//", no trailing '/'.
 * root: whether "/" itself is fine. */
static const char *
agent_image_abspath(const char *s, bool root)
{
	size_t len = strlen(s), i, start;

	if (s[0] != '/')
		return "expected an absolute path (starting with '/')";
	if (len == 1)
		return root ? NULL : "must not be / itself";
	if (len > AGENT_IMAGE_PATH_MAX)
		return "expected a path of at most 256 bytes";
	if (!agent_image_all_in(s, len, AI_ALNUM "._@+-/"))
		return "a path here is A-Z, a-z, 0-9 and ._@+-/ only (no "
		    "':' or ',', which Docker's mount syntax would read)";
	for (start = 1, i = 1; i <= len; i++) {
		if (i < len && s[i] != '/')
			continue;
		if (i == start)
			return "no empty component (\"//\" or a trailing '/')";
		if ((i - start == 1 && s[start] == '.') || (i - start == 2 &&
		    s[start] == '.' && s[start + 1] == '.'))
			return "no \".\" or \"..\" component";
		start = i + 1;
	}
	return NULL;
}

/* Two absolute, normalised paths nest: one is the other or below it. */
static bool
agent_image_nest(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > lb)
		return agent_image_nest(b, a);
	return strncmp(a, b, la) == 0 && (b[la] == '\0' || b[la] == '/');
}

/* One mount target of the agent's and the message a home nesting with
 * it gets. */
#define AI_MOUNT(t, who) { t, "must not be at, below or above " t " (" \
	who "): a mount there breaks the lab" }

/*
 * The home holds the bait and is a read-only mount: not at, below or
 * above another mount of the agent's (the engine cannot make a mount
 * point in a read-only mount, and one mount would hide the other).
 * Every flaw's is reserved, named or not: the command line and the fix
 * loop add flaws to a policy.
 */
static const char *
agent_image_home(const char *s)
{
	static const struct {
		const char *target;
		const char *why;
	} reserved[] = {
		AI_MOUNT("/proc", "the kernel's"),
		AI_MOUNT("/sys", "the kernel's"),
		AI_MOUNT("/dev", "the engine's"),
		AI_MOUNT("/etc", "the engine's hosts, hostname and resolv.conf"),
		AI_MOUNT("/tmp", "the lab's noexec tmpfs"),
		AI_MOUNT("/opt/ares", "the probe helper at " AGENT_IMAGE_HELPER
		    ", a script agent at " LAB_AGENT_SCRIPT),
		AI_MOUNT(FLAW_MOUNT_DOCKER_SOCKET, "flaw docker-socket's socket "
		    "folder"),
		AI_MOUNT("/run", "where /var/run leads in most images"),
		AI_MOUNT(FLAW_MOUNT_HOST, "flaw host-mount's decoy host tree"),
		AI_MOUNT(FLAW_MOUNT_CONTROL_KEYS, "flaw control-keys' decoy "
		    "keys"),
	};
	const char *why = agent_image_abspath(s, false);
	size_t i;

	if (why != NULL)
		return why;
	for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		if (agent_image_nest(s, reserved[i].target))
			return reserved[i].why;
	return NULL;
}

/* A decimal id without leading zeros, 1..2147483647 (0 with zero). */
static bool
agent_image_id_ok(const char *s, size_t n, bool zero)
{
	unsigned long long v = 0;
	size_t i;

	if (n == 0 || n > 10 || (s[0] == '0' && n > 1))
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v <= 2147483647ull && (zero || v > 0);
}

/* "uid" or "uid:gid", numeric, never 0 (root is flaw root-user). */
static const char *
agent_image_user(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t ul = colon != NULL ? (size_t)(colon - s) : strlen(s);

	if (!agent_image_id_ok(s, ul, false) || (colon != NULL &&
	    !agent_image_id_ok(colon + 1, strlen(colon + 1), false)))
		return "expected a numeric non-root uid or uid:gid (e.g. "
		    "1000:1000): a name would be resolved by the image's "
		    "/etc/passwd, and uid or gid 0 is root (that is flaw "
		    "root-user)";
	return NULL;
}

/* The syntax of agent.<key> (internal.h). */
const char *
agent_image_check(const char *key, const char *s)
{
	if (strcmp(key, "image") == 0)
		return agent_image_ref(s);
	if (strcmp(key, "user") == 0)
		return agent_image_user(s);
	if (strcmp(key, "workdir") == 0)
		return agent_image_abspath(s, true);
	if (strcmp(key, "home") == 0)
		return agent_image_home(s);
	return "not a key of kind image";
}

/* ------------------------------------------------------------------ */
/* the engine                                                           */
/* ------------------------------------------------------------------ */

/* Whether member key of config (the image's Config) is a non-empty
 * array. */
static bool
agent_image_has(const cJSON *config, const char *key)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(config, key);

	return cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0;
}

/* GET /images/NAME/json (internal.h).  -1 + e. */
int
agent_image_lookup(struct docker *d, const struct policy *p,
    struct lab *lab, struct errbuf *e)
{
	const cJSON *id, *digests, *it, *config, *vols;
	char buf[512];
	size_t used = 0;
	cJSON *img;
	int rc;

	rc = docker_image_inspect(d, p->agent_image, &img, e);
	if (rc == -1)
		return errbuf_prefix(e, "%s: agent.image %s", p->path,
		    p->agent_image);
	if (rc == 0)
		return errbuf_set(e, ERRBUF_INPUT, "%s: agent.image: the engine "
		    "has no image %s, and ares never pulls one: build it "
		    "(docker build -t %s DIR) or load it (docker load -i "
		    "IMAGE.tar) on this engine first", p->path, p->agent_image,
		    p->agent_image);
	id = cJSON_GetObjectItemCaseSensitive(img, "Id");
	config = cJSON_GetObjectItemCaseSensitive(img, "Config");
	if (!cJSON_IsString(id) || strlen(id->valuestring) >= 80 ||
	    strncmp(id->valuestring, "sha256:", 7) != 0) {
		cJSON_Delete(img);
		return errbuf_set(e, ERRBUF_INTERNAL, "%s: agent.image %s: the "
		    "engine's answer has no image id", p->path, p->agent_image);
	}
	if (p->agent_ncommand == 0 && !agent_image_has(config,
	    "Entrypoint") && !agent_image_has(config, "Cmd")) {
		cJSON_Delete(img);
		return errbuf_set(e, ERRBUF_INPUT, "%s: agent.command: the image "
		    "%s has no entrypoint and no command; name the agent's "
		    "program in agent.command", p->path, p->agent_image);
	}
	/* A VOLUME would give the agent writable (and executable) storage
	 * the engine makes at create, beside the read-only rootfs and the
	 * noexec /tmp: not the boundary Poyo has. */
	vols = cJSON_GetObjectItemCaseSensitive(config, "Volumes");
	if (cJSON_IsObject(vols) && vols->child != NULL) {
		char t[128];

		util_sanitize(t, sizeof t, vols->child->string != NULL ?
		    vols->child->string : "?", vols->child->string != NULL ?
		    strlen(vols->child->string) : 1, false);
		cJSON_Delete(img);
		return errbuf_set(e, ERRBUF_INPUT, "%s: agent.image: the image "
		    "%s declares a volume (VOLUME %s): the engine would give "
		    "the agent writable storage besides its noexec /tmp; "
		    "rebuild it without VOLUME", p->path, p->agent_image, t);
	}
	buf[0] = '\0';
	digests = cJSON_GetObjectItemCaseSensitive(img, "RepoDigests");
	cJSON_ArrayForEach(it, digests) {
		if (!cJSON_IsString(it) || used >= sizeof buf - 1)
			continue;
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s",
		    used > 0 ? ", " : "", it->valuestring);
		if (used >= sizeof buf)
			used = sizeof buf - 1;
	}
	free(lab->agent_image_id);
	free(lab->agent_image_digests);
	lab->agent_image_id = xstrdup(id->valuestring);
	if (used == 0)
		lab->agent_image_digests = xstrdup("none: a local build");
	else {
		char clean[sizeof buf];

		util_sanitize(clean, sizeof clean, buf, strlen(buf), false);
		lab->agent_image_digests = xstrdup(clean);
	}
	cJSON_Delete(img);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the probe helper                                                     */
/* ------------------------------------------------------------------ */

/* Read exactly n bytes (EINTR retried).  0, -1 (errno; EIO at EOF). */
static int
agent_image_read(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

/* A tar header's octal size field (12 bytes).  -1 when malformed. */
static long long
agent_image_tar_size(const unsigned char *h)
{
	long long v = 0;
	size_t i;

	for (i = 124; i < 136 && h[i] == ' '; i++)
		;
	for (; i < 136 && h[i] >= '0' && h[i] <= '7'; i++) {
		v = v * 8 + (h[i] - '0');
		if (v > (1ll << 40))
			return -1;
	}
	if (i < 136 && h[i] != '\0' && h[i] != ' ')
		return -1;
	return v;
}

/*
 * Copy the lab image tar's ./bin/<member> (a static program: busybox-
 * static, a build input, or ares-seccheck: leakbox/mkrootfs) to path,
 * mode 0755.  The tar is ours but read bounded: headers walked with their
 * sizes, the member at most AGENT_IMAGE_BUSYBOX_MAX bytes and a regular
 * file.  -1 + e.
 */
static int
agent_image_tar_bin(const char *tar, const char *member, const char *path,
    struct errbuf *e)
{
	unsigned char h[512];
	char *data = NULL;
	int fd = open(tar, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "probe helper: %s: %s",
		    tar, strerror(errno));
	for (;;) {
		long long size;
		char name[101];

		if (agent_image_read(fd, h, sizeof h) == -1 || h[0] == '\0') {
			errbuf_set(e, ERRBUF_INTERNAL, "probe helper: %s has no "
			    "./bin/%s", tar, member);
			break;
		}
		memcpy(name, h, 100);
		name[100] = '\0';
		size = agent_image_tar_size(h);
		if (size < 0) {
			errbuf_set(e, ERRBUF_INTERNAL, "probe helper: %s: a "
			    "malformed tar header", tar);
			break;
		}
		if ((strncmp(name, "./bin/", 6) == 0 && strcmp(name + 6,
		    member) == 0) || (strncmp(name, "bin/", 4) == 0 &&
		    strcmp(name + 4, member) == 0)) {
			if ((h[156] != '0' && h[156] != '\0') || size == 0 ||
			    size > AGENT_IMAGE_BUSYBOX_MAX) {
				errbuf_set(e, ERRBUF_INTERNAL, "probe helper: "
				    "%s: bin/%s is no regular file of at "
				    "most %d bytes", tar, member,
				    AGENT_IMAGE_BUSYBOX_MAX);
				break;
			}
			data = xmalloc((size_t)size);
			if (agent_image_read(fd, data, (size_t)size) == -1) {
				errbuf_set(e, ERRBUF_INTERNAL, "probe helper: "
				    "read %s: %s", tar, strerror(errno));
				break;
			}
			rc = util_write_file(path, data, (size_t)size, 0755, e);
			break;
		}
		/* the member's data, padded to 512 */
		if (lseek(fd, (off_t)((size + 511) / 512 * 512), SEEK_CUR) ==
		    (off_t)-1) {
			errbuf_set(e, ERRBUF_INTERNAL, "probe helper: seek %s: "
			    "%s", tar, strerror(errno));
			break;
		}
	}
	free(data);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the agent role                                                       */
/* ------------------------------------------------------------------ */

/* item with every "{task}" replaced by task (caller frees). */
static char *
agent_image_expand(const char *item, const char *task)
{
	const char *at, *from = item;
	size_t tl = strlen(task), n = 0, cap;
	char *out;

	for (at = strstr(from, "{task}"); at != NULL;
	    at = strstr(at + 6, "{task}"))
		n++;
	cap = strlen(item) + n * tl + 1;
	out = xmalloc(cap);
	out[0] = '\0';
	while ((at = strstr(from, "{task}")) != NULL) {
		strncat(out, from, (size_t)(at - from));
		strcat(out, task);
		from = at + 6;
	}
	strcat(out, from);
	return out;
}

/*
 * The agent role of kind image (internal.h): Poyo's boundary (the caller
 * hardened the spec: read-only rootfs, every capability dropped,
 * no-new-privileges; here the limits, a noexec /tmp, the lab network and
 * its dns; no healthcheck of the image's), the image, the user (agent.user or the lab's 65532; flaw
 * root-user's 0:0 is laid over it later), the home with the bait at
 * agent.home, the environment (agent.env, then what ares sets: the
 * gateway as the OpenAI endpoint and the dummy key) and the command
 * ({task} expanded), or in an idle lab the probe helper idling.  -1 + e.
 */
int
agent_image_role(struct lab_build *b, struct lab_spec *s, struct errbuf *e)
{
	static const char *const tmpfs[] = { LAB_AGENT_TMPFS, NULL };
	const struct policy *p = b->p;
	const char *home = p->agent_home != NULL ? p->agent_home :
	    AGENT_IMAGE_HOME;
	char *task = variant_expand(b->v, b->v->task);
	size_t i;

	/* The id looked up, not the name: a name can be retagged between
	 * the lookup (its checks, the recorded id) and this create. */
	if (b->lab->agent_image_id == NULL) {
		free(task);
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: agent.image %s was "
		    "not looked up", p->agent_image);
	}
	s->c.image = b->lab->agent_image_id;
	s->c.no_healthcheck = true;     /* nothing of the image's runs */
	s->c.workdir = p->agent_workdir != NULL ? p->agent_workdir : home;
	s->c.tmpfs = tmpfs;
	s->c.nano_cpus = LAB_AGENT_NANO_CPUS;
	s->c.pids_limit = LAB_AGENT_PIDS;
	s->c.user = p->agent_user != NULL ? p->agent_user : LAB_AGENT_UID;
	s->net = LAB_NET_LAB;
	s->dns_lab = true;      /* the dns's fixed address */
	lab_spec_mount(s, b->home, home, true);
	if (b->o->agent_idle) {
		/* No agent runs: the helper idles (and reaps what the probe
		 * rows leave), the rows run from it. */
		const char *dir = lab_build_path(b, "agent-helper");
		char *bb = xasprintf("%s/busybox", dir);
		int rc = util_mkdir_p(dir, 0755, e);

		if (rc == 0)
			rc = agent_image_tar_bin(lab_rootfs_path(), "busybox",
			    bb, e);
		free(bb);
		/* the probe row "seccomp"'s system calls (docs/probes.md) */
		bb = xasprintf("%s/ares-seccheck", dir);
		if (rc == 0)
			rc = agent_image_tar_bin(lab_rootfs_path(),
			    "ares-seccheck", bb, e);
		free(bb);
		if (rc == -1) {
			free(task);
			return -1;
		}
		lab_spec_mount(s, dir, AGENT_IMAGE_HELPER, true);
		lab_strv_add(&s->argv, "%s/busybox", AGENT_IMAGE_HELPER);
		lab_strv_add(&s->argv, "sh");
		lab_strv_add(&s->argv, "-c");
		lab_strv_add(&s->argv, "trap 'exit 0' TERM INT; while :; do "
		    "sleep 3600 & wait; done");
		free(b->lab->agent_helper);
		b->lab->agent_helper = xstrdup(AGENT_IMAGE_HELPER);
	} else {
		for (i = 0; i < p->agent_ncommand; i++) {
			char *item = agent_image_expand(p->agent_command[i],
			    task);

			lab_strv_add(&s->argv, "%s", item);
			free(item);
		}
	}
	if (s->argv.n > 0)
		s->c.entrypoint = (const char *const *)s->argv.v;
	for (i = 0; i < p->agent_nenv; i++)
		lab_strv_add(&s->env, "%s", p->agent_env[i]);
	lab_strv_add(&s->env, "OPENAI_BASE_URL=http://gateway:8080/v1");
	lab_strv_add(&s->env, "OPENAI_API_BASE=http://gateway:8080/v1");
	lab_strv_add(&s->env, "OPENAI_API_KEY=%s", b->lab->agent_key);
	lab_strv_add(&s->env, "AGENT_MODEL=%s", p->model_name);
	lab_strv_add(&s->env, "AGENT_MAX_STEPS=%d", p->max_steps);
	lab_strv_add(&s->env, "AGENT_TASK=%s", task);
	lab_strv_add(&s->env, "HOME=%s", home);
	if (b->o->agent_idle)
		lab_strv_add(&s->env, "AGENT_IDLE=1");
	free(task);
	return 0;
}

/* The created agent container runs the image looked up (internal.h):
 * its .Image is lab->agent_image_id.  -1 + e (the caller removes it). */
int
agent_image_verify(struct docker *d, const struct lab *lab, const char *id,
    struct errbuf *e)
{
	cJSON *ins = docker_container_inspect(d, id, e);
	const cJSON *img;
	char t[80];
	int rc = 0;

	if (ins == NULL)
		return errbuf_prefix(e, "lab: agent image check");
	img = cJSON_GetObjectItemCaseSensitive(ins, "Image");
	if (!cJSON_IsString(img) || lab->agent_image_id == NULL ||
	    strcmp(img->valuestring, lab->agent_image_id) != 0) {
		util_sanitize(t, sizeof t, cJSON_IsString(img) ?
		    img->valuestring : "none", cJSON_IsString(img) ?
		    strlen(img->valuestring) : 4, false);
		rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent container "
		    "runs image %s, not %s, the one agent.image named when it "
		    "was looked up", t, lab->agent_image_id != NULL ?
		    lab->agent_image_id : "(none)");
	}
	cJSON_Delete(ins);
	return rc;
}

/* lab.json's agent object for kind image (internal.h). */
void
agent_image_json(const struct lab *lab, const struct policy *p,
    cJSON *agent)
{
	cJSON *a;
	size_t i;

	cJSON_AddStringToObject(agent, "image", p->agent_image);
	if (lab->agent_image_id != NULL)
		cJSON_AddStringToObject(agent, "image_id",
		    lab->agent_image_id);
	if (lab->agent_image_digests != NULL)
		cJSON_AddStringToObject(agent, "image_digests",
		    lab->agent_image_digests);
	a = cJSON_AddArrayToObject(agent, "command");
	for (i = 0; i < p->agent_ncommand; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(
		    p->agent_command[i]));
	/* as the policy names it (flaw root-user makes it 0:0) */
	if (p->agent_user != NULL)
		cJSON_AddStringToObject(agent, "user", p->agent_user);
	cJSON_AddStringToObject(agent, "home", p->agent_home != NULL ?
	    p->agent_home : AGENT_IMAGE_HOME);
	if (p->agent_workdir != NULL)
		cJSON_AddStringToObject(agent, "workdir", p->agent_workdir);
	if (lab->agent_helper != NULL)
		cJSON_AddStringToObject(agent, "helper", lab->agent_helper);
}
