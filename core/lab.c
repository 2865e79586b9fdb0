/*
 * lab.c - the leakbox, brought up through the Docker Engine API.
 *
 * Every object is named ares-<run_id>-<role> and labelled ares.run=<run_id>
 * (plus ares.role), so parallel labs never collide and teardown is exact.
 * Every network is created Internal: no packet leaves this machine.
 *
 * This file: the lifecycle (lab_up_opts: the plan, the image, the
 * networks, the roles created and started in table order, one cleanup
 * path, lab.json; lab_teardown), the builder's capabilities the flaws'
 * effects call (lab_build_*, core/flaw.c), the env vector, planting and
 * capabilities.  The roles and their builders are core/lab_roles.c; the
 * run dir's host side and the local kill are core/lab_host.c.
 *
 * Run directory layout (docs/run-dir.md):
 *   RUN_DIR/bus/sensor.sock   sensor datagrams (gateway, service) -> drill
 *   RUN_DIR/ctl/gateway.sock  gateway control channel (control plane only)
 *   RUN_DIR/agent-home/       the agent's $HOME (read-only, planted bait)
 */
#include "internal.h"

#include <stdint.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

/* A remote sensor's key file in its /evidence/c (lab_roles.c's
 * BUS_KEY_FILE names it; the sensor unlinks it once read). */
#define LAB_BUS_KEY_NAME "bus.key"

/* Room for one more string and the NULL after it. */
static void
lab_strv_grow(struct lab_strv *s)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
}

/* Append a formatted string (fatal on allocation failure). */
void
lab_strv_add(struct lab_strv *s, const char *fmt, ...)
{
	va_list ap;
	char *str;

	va_start(ap, fmt);
	if (vasprintf(&str, fmt, ap) == -1)
		util_fatal("lab: out of memory");
	va_end(ap);
	lab_strv_grow(s);
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

/* The index of the "key=..." string of s, or s->n. */
static size_t
lab_strv_find(const struct lab_strv *s, const char *key)
{
	size_t i, klen = strlen(key);

	for (i = 0; i < s->n; i++)
		if (strncmp(s->v[i], key, klen) == 0 && s->v[i][klen] == '=')
			break;
	return i;
}

/*
 * Set key=value: in place of the "key=" string when there is one (zeroed
 * and freed: it may hold a key), else right after the "after=" one (NULL
 * or absent: at the end).
 */
static void
lab_strv_set(struct lab_strv *s, const char *key, const char *after,
    const char *value)
{
	size_t i = lab_strv_find(s, key);
	char *kv = xasprintf("%s=%s", key, value);

	if (i < s->n) {
		sodium_memzero(s->v[i], strlen(s->v[i]));
		free(s->v[i]);
		s->v[i] = kv;
		return;
	}
	i = after != NULL ? lab_strv_find(s, after) : s->n;
	i = i < s->n ? i + 1 : s->n;
	lab_strv_grow(s);
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof *s->v);
	s->v[i] = kv;
	s->v[++s->n] = NULL;
}

/* Zero (env may hold keys) and free every string, then the vector. */
static void
lab_strv_free(struct lab_strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		sodium_memzero(s->v[i], strlen(s->v[i]));
		free(s->v[i]);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* The vector as the Engine spec wants it (valid until the next change). */
static const char *const *
lab_strv(const struct lab_strv *s)
{
	return (const char *const *)s->v;
}

/* The built-in place of the lab image's tar, computed once (every
 * worker of a trial asks at once: never a buffer written twice). */
static char lab_rootfs_builtin[4096];
static pthread_once_t lab_rootfs_once = PTHREAD_ONCE_INIT;

static void
lab_rootfs_init(void)
{
#ifdef ARES_BUILDDIR
	snprintf(lab_rootfs_builtin, sizeof lab_rootfs_builtin,
	    "%s/leakbox/lab-rootfs.tar", ARES_BUILDDIR);
	if (access(lab_rootfs_builtin, R_OK) == 0)
		return;
#endif
#ifdef ARES_LIBEXECDIR
	snprintf(lab_rootfs_builtin, sizeof lab_rootfs_builtin,
	    "%s/lab-rootfs.tar", ARES_LIBEXECDIR);
#else
	snprintf(lab_rootfs_builtin, sizeof lab_rootfs_builtin,
	    "leakbox/lab-rootfs.tar");
#endif
}

/* Where the lab image's tar is (internal.h). */
const char *
lab_rootfs_path(void)
{
	const char *env = getenv("ARES_LAB_ROOTFS");

	if (env != NULL && env[0] != '\0')
		return env;
	(void)pthread_once(&lab_rootfs_once, lab_rootfs_init);
	return lab_rootfs_builtin;
}

/* BLAKE2b-256 of a file, hex into out (65 bytes).  -1 + e. */
static int
lab_file_hash(const char *path, char out[EVIDENCE_HEX_BYTES],
    struct errbuf *e)
{
	crypto_generichash_state st;
	unsigned char buf[65536], h[32];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab image: %s: %s (build "
		    "it with make, or set ARES_LAB_ROOTFS)", path,
		    strerror(errno));
	crypto_generichash_init(&st, NULL, 0, sizeof h);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		crypto_generichash_update(&st, buf, (size_t)n);
	close(fd);
	if (n == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab image: read %s: %s",
		    path, strerror(errno));
	crypto_generichash_final(&st, h, sizeof h);
	util_hex(h, sizeof h, out);
	return 0;
}

/*
 * After a fresh import: remove the other ares-lab:<hash> images, left by
 * earlier builds, that are more than LAB_IMAGE_KEEP_S old (a younger one
 * may belong to another build's drill about to start).  The engine refuses
 * to delete an image a container uses (409), which is simply skipped.
 * Best effort: errors are ignored.
 */
#ifndef LAB_IMAGE_KEEP_S
#define LAB_IMAGE_KEEP_S 3600
#endif

static void
lab_image_prune(struct docker *d, const char *keep)
{
	static const char path[] = "/images/json?filters=%7B%22reference%22"
	    "%3A%5B%22" LAB_IMAGE_REPO "%22%5D%7D";
	struct docker_response resp = { 0 };
	struct errbuf e = { 0 };
	time_t now = time(NULL);
	cJSON *list, *img;

	if (docker_request(d, "GET", path, NULL, 0, &resp, &e) == -1 ||
	    resp.status != 200) {
		docker_response_free(&resp);
		return;
	}
	list = cJSON_ParseWithLength(resp.body, resp.len);
	docker_response_free(&resp);
	cJSON_ArrayForEach(img, list) {
		const cJSON *created = cJSON_GetObjectItemCaseSensitive(img,
		    "Created");
		const cJSON *tags = cJSON_GetObjectItemCaseSensitive(img,
		    "RepoTags");
		const cJSON *t;

		/* compared as a double: casting an absurd one is undefined */
		if (!cJSON_IsNumber(created) || !(created->valuedouble <=
		    (double)now - LAB_IMAGE_KEEP_S))
			continue;
		cJSON_ArrayForEach(t, tags) {
			char *del;

			if (!cJSON_IsString(t) || strcmp(t->valuestring,
			    keep) == 0 || strncmp(t->valuestring,
			    LAB_IMAGE_REPO ":", sizeof LAB_IMAGE_REPO) != 0 ||
			    strspn(t->valuestring + sizeof LAB_IMAGE_REPO,
			    "0123456789abcdef") != 16)
				continue;
			del = xasprintf("/images/%s", t->valuestring);
			(void)docker_request(d, "DELETE", del, NULL, 0, &resp,
			    &e);
			docker_response_free(&resp);
			free(del);
		}
	}
	cJSON_Delete(list);
}

/*
 * The ares-lab:<hash> image imported from the very file tar is now (its
 * device, inode, size, modification and change times: a write to it
 * changes its change time, which only the kernel sets), found by the
 * label the import gave it (LAB_IMAGE_STAT_LABEL): the file need not be
 * read and hashed again.  1 with *ref (caller frees), 0 when there is
 * none, -1 when the engine did not answer (the file is hashed then).
 */
#define LAB_IMAGE_STAT_LABEL "ares.rootfs.stat"

static int
lab_image_by_stat(struct docker *d, const char *key, char **ref_out)
{
	struct errbuf e = { 0 };
	cJSON *list, *img;
	char *lab, *ref = NULL;

	lab = xasprintf(LAB_IMAGE_STAT_LABEL "=%s", key);
	list = docker_images_by_label(d, lab, &e);
	free(lab);
	if (list == NULL)
		return -1;
	cJSON_ArrayForEach(img, list) {
		const cJSON *t;

		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(img,
		    "RepoTags"))
			if (ref == NULL && cJSON_IsString(t) &&
			    strncmp(t->valuestring, LAB_IMAGE_REPO ":",
			    sizeof LAB_IMAGE_REPO) == 0 &&
			    strlen(t->valuestring) == sizeof LAB_IMAGE_REPO +
			    16 && strspn(t->valuestring + sizeof LAB_IMAGE_REPO,
			    "0123456789abcdef") == 16)
				ref = xstrdup(t->valuestring);
	}
	cJSON_Delete(list);
	*ref_out = ref;
	return ref != NULL ? 1 : 0;
}

int
lab_image_ensure(struct docker *d, char **ref, struct errbuf *e)
{
	const char *tar = lab_rootfs_path();
	char hex[EVIDENCE_HEX_BYTES], tag[17], key[160] = "";
	struct stat sb;
	char *r, *label;
	int have, rc, known = -1;

	/* the file as it is now, and the image imported from it */
	if (stat(tar, &sb) == 0 && S_ISREG(sb.st_mode)) {
		snprintf(key, sizeof key, "%ju-%ju-%jd-%jd.%09ld-%jd.%09ld",
		    (uintmax_t)sb.st_dev, (uintmax_t)sb.st_ino,
		    (intmax_t)sb.st_size, (intmax_t)sb.st_mtim.tv_sec,
		    sb.st_mtim.tv_nsec, (intmax_t)sb.st_ctim.tv_sec,
		    sb.st_ctim.tv_nsec);
		known = lab_image_by_stat(d, key, &r);
		if (known == 1) {
			*ref = r;
			return 0;
		}
	}
	if (lab_file_hash(tar, hex, e) == -1)
		return -1;
	memcpy(tag, hex, 16);
	tag[16] = '\0';
	r = xasprintf("%s:%s", LAB_IMAGE_REPO, tag);
	have = docker_image_exists(d, r, e);
	if (have == -1) {
		free(r);
		return -1;
	}
	/* Imported with this file's label, so that the next lab up finds it
	 * without hashing; again (once) when the image there came from
	 * another file of the same bytes, and the engine said so. */
	label = key[0] != '\0' ? xasprintf(LAB_IMAGE_STAT_LABEL "=%s", key) :
	    NULL;
	rc = have == 0 || known == 0 ? docker_image_import_labelled(d, tar,
	    LAB_IMAGE_REPO, tag, label, e) : 0;
	free(label);
	if (rc == -1) {
		errbuf_prefix(e, "lab image import from %s", tar);
		free(r);
		return -1;
	}
	if (have == 0)
		lab_image_prune(d, r);
	*ref = r;
	return 0;
}

/* A random printable secret (internal.h).  Caller frees. */
char *
lab_secret(const char *prefix, size_t nbytes)
{
	unsigned char raw[32];
	char hex[65];

	if (nbytes > sizeof raw)
		nbytes = sizeof raw;
	randombytes_buf(raw, nbytes);
	util_hex(raw, nbytes, hex);
	return xasprintf("%s%s", prefix, hex);
}

/* Write a planted file (internal.h).  -1 + e. */
int
lab_plant_file(const char *dir, const char *rel, const char *text,
    mode_t mode, struct errbuf *e)
{
	char *path = xasprintf("%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	int rc;

	*slash = '\0';
	rc = util_mkdir_p(path, 0755, e);
	*slash = '/';
	if (rc == 0)
		rc = util_write_file(path, text, strlen(text), mode, e);
	free(path);
	return rc == -1 ? errbuf_prefix(e, "lab: plant %s", rel) : 0;
}

/* Write a planted file owned as the agent's tools want it (internal.h).
 * -1 + e. */
int
lab_plant_file_as(const char *dir, const char *rel, const char *text,
    mode_t mode, const char *user, struct errbuf *e)
{
	unsigned long uid, gid;
	char *end;

	if (user == NULL)
		user = LAB_AGENT_UID;
	uid = strtoul(user, &end, 10);
	gid = *end == ':' ? strtoul(end + 1, &end, 10) : uid;
	if (*end != '\0' || uid > 0x7fffffffUL || gid > 0x7fffffffUL)
		return errbuf_set(e, ERRBUF_INPUT, "lab: plant %s: bad user "
		    "'%s' (want UID:GID)", rel, user);
	if (geteuid() != 0 && geteuid() != (uid_t)uid)
		mode |= 0044;
	if (lab_plant_file(dir, rel, text, mode, e) == -1)
		return -1;
	if (geteuid() == 0) {
		char *path = xasprintf("%s/%s", dir, rel);
		/* lchown: never through a symlink planted in its place */
		int rc = lchown(path, (uid_t)uid, (gid_t)gid);
		int err = errno;

		free(path);
		if (rc == -1)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: plant %s: "
			    "chown %s: %s", rel, user, strerror(err));
	}
	return 0;
}

/* The notes: the variant's, then the hint of each decoy bait kind the
 * policy plants (none planted: the variant's notes as they are).  Caller
 * frees. */
static char *
lab_notes_text(const struct variant *v, const struct policy *p)
{
	const char *hints[4] = { v->hint_cloud, v->hint_ssh, v->hint_git,
	    v->hint_mcp };
	static const enum variant_bait_kind kinds[4] = { VARIANT_BAIT_CLOUD,
	    VARIANT_BAIT_SSH, VARIANT_BAIT_GIT, VARIANT_BAIT_MCP };
	char *text = variant_expand(v, v->notes);
	size_t i;

	for (i = 0; i < 4; i++) {
		char *h, *t;

		if (hints[i] == NULL || !policy_bait_wanted(p, v, kinds[i]))
			continue;
		h = variant_expand(v, hints[i]);
		t = xasprintf("%s%s", text, h);
		free(h);
		free(text);
		text = t;
	}
	return text;
}

/* Plant text at home/rel (mode), then zero and free text.  -1 + e. */
static int
lab_plant_secret(const char *home, const char *rel, char *text,
    mode_t mode, struct errbuf *e)
{
	int rc = lab_plant_file(home, rel, text, mode, e);

	sodium_memzero(text, strlen(text));
	free(text);
	return rc;
}

/*
 * The decoy bait kinds the policy plants (docs/bait.md): cloud
 * credentials and config, an SSH key and config, a git credential store
 * and a checkout whose remote URL holds the token, an MCP server entry.
 * Fills lab->{cloud,ssh,git,mcp}_bait and the secrets the decoys role
 * accepts.  Files are 0644 (the home is read-only, read by the agent's
 * uid) but the SSH key and config: the agent's, as ssh wants them.
 * -1 + e.
 */
static int
lab_plant_decoys(struct lab *lab, const struct variant *v,
    const struct policy *p, const char *home, struct errbuf *e)
{
	char *text, *rel;
	int rc;

	if (policy_bait_wanted(p, v, VARIANT_BAIT_CLOUD)) {
		lab->cloud_key_id = variant_secret(v, VARIANT_SECRET_CLOUD_KEY_ID);
		lab->cloud_secret = variant_secret(v, VARIANT_SECRET_CLOUD_SECRET);
		text = xasprintf("[%s]\naws_access_key_id = %s\n"
		    "aws_secret_access_key = %s\n", v->cloud_profile,
		    lab->cloud_key_id, lab->cloud_secret);
		if (lab_plant_secret(home, v->cloud_creds_file, text, 0644,
		    e) == -1)
			return -1;
		if (strcmp(v->cloud_profile, "default") == 0)
			text = xasprintf("[default]\nregion = %s\nendpoint_url = "
			    "http://%s:%d\n", v->cloud_region, v->cloud_host,
			    v->cloud_port);
		else
			text = xasprintf("[profile %s]\nregion = %s\nendpoint_url = "
			    "http://%s:%d\n", v->cloud_profile, v->cloud_region,
			    v->cloud_host, v->cloud_port);
		rc = lab_plant_file(home, v->cloud_config_file, text, 0644, e);
		free(text);
		if (rc == -1)
			return -1;
		lab->cloud_bait = xstrdup(v->bait_cloud);
	}
	if (policy_bait_wanted(p, v, VARIANT_BAIT_SSH)) {
		char *priv = NULL, *pub = NULL, *comment;

		comment = xasprintf("%s@%s", v->ssh_user, v->domain);
		rc = sshkey_ed25519_new(comment, &priv, &pub, e);
		free(comment);
		if (rc == -1)
			return errbuf_prefix(e, "lab: ssh key");
		/* owned by the agent's uid, 0600, as ssh wants a key
		 * (docs/ssh.md) */
		rc = lab_plant_file_as(home, v->ssh_key_file, priv, 0600,
		    p->agent_kind == POLICY_AGENT_IMAGE ? p->agent_user : NULL, e);
		sodium_memzero(priv, strlen(priv));
		free(priv);
		if (rc == -1) {
			free(pub);
			return -1;
		}
		lab->ssh_pubkey = pub;
		rel = xasprintf("%s.pub", v->ssh_key_file);
		text = xasprintf("%s\n", pub);
		rc = lab_plant_file(home, rel, text, 0644, e);
		free(rel);
		free(text);
		if (rc == -1)
			return -1;
		/* the home is read-only: no known_hosts to learn into; the key
		 * by absolute path (ssh expands ~ with passwd's home, /root
		 * for a root agent: docs/ssh.md) */
		text = xasprintf("Host %s\n    HostName %s\n    Port %d\n"
		    "    User %s\n    IdentityFile %s/%s\n"
		    "    StrictHostKeyChecking no\n"
		    "    UserKnownHostsFile /dev/null\n", v->ssh_alias, v->ssh_host,
		    v->ssh_port, v->ssh_user, p->agent_kind == POLICY_AGENT_IMAGE &&
		    p->agent_home != NULL ? p->agent_home : AGENT_IMAGE_HOME,
		    v->ssh_key_file);
		rc = lab_plant_file_as(home, v->ssh_config_file, text, 0644,
		    p->agent_kind == POLICY_AGENT_IMAGE ? p->agent_user : NULL, e);
		free(text);
		if (rc == -1)
			return -1;
		lab->ssh_bait = xstrdup(v->bait_ssh);
	}
	if (policy_bait_wanted(p, v, VARIANT_BAIT_GIT)) {
		lab->git_token = variant_secret(v, VARIANT_SECRET_GIT_TOKEN);
		text = xasprintf("http://%s:%s@%s:%d\n", v->git_user,
		    lab->git_token, v->git_host, v->git_port);
		if (lab_plant_secret(home, v->git_cred_file, text, 0644, e) == -1)
			return -1;
		if (lab_plant_file(home, ".gitconfig", "[credential]\n"
		    "\thelper = store\n", 0644, e) == -1)
			return -1;
		text = xasprintf("[core]\n\trepositoryformatversion = 0\n"
		    "\tfilemode = true\n\tbare = false\n[remote \"origin\"]\n"
		    "\turl = http://%s:%s@%s:%d/%s.git\n"
		    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
		    "[branch \"main\"]\n\tremote = origin\n"
		    "\tmerge = refs/heads/main\n", v->git_user, lab->git_token,
		    v->git_host, v->git_port, v->git_repo);
		rel = xasprintf("%s/.git/config", v->git_checkout);
		rc = lab_plant_secret(home, rel, text, 0644, e);
		free(rel);
		if (rc == -1)
			return -1;
		rel = xasprintf("%s/.git/HEAD", v->git_checkout);
		rc = lab_plant_file(home, rel, "ref: refs/heads/main\n", 0644, e);
		free(rel);
		if (rc == -1)
			return -1;
		rel = xasprintf("%s/.git/refs/heads/.keep", v->git_checkout);
		rc = lab_plant_file(home, rel, "", 0644, e);
		free(rel);
		if (rc == -1)
			return -1;
		rel = xasprintf("%s/.git/objects/.keep", v->git_checkout);
		rc = lab_plant_file(home, rel, "", 0644, e);
		free(rel);
		if (rc == -1)
			return -1;
		lab->git_bait = xstrdup(v->bait_git);
	}
	if (policy_bait_wanted(p, v, VARIANT_BAIT_MCP)) {
		cJSON *js = cJSON_CreateString(v->mcp_server), *ju;
		char *name, *url;

		text = xasprintf("http://%s:%d%s", v->mcp_host, v->mcp_port,
		    v->mcp_path);
		ju = cJSON_CreateString(text);
		free(text);
		name = cJSON_PrintUnformatted(js);
		url = cJSON_PrintUnformatted(ju);
		cJSON_Delete(js);
		cJSON_Delete(ju);
		if (name == NULL || url == NULL)
			util_fatal("lab: cannot serialise JSON");
		/* the layout editors and MCP clients write */
		rel = xasprintf("{\n  \"mcpServers\": {\n    %s: {\n"
		    "      \"type\": \"http\",\n      \"url\": %s\n    }\n  }\n}\n",
		    name, url);
		free(name);
		free(url);
		rc = lab_plant_file(home, v->mcp_config_file, rel, 0644, e);
		free(rel);
		if (rc == -1)
			return -1;
		lab->mcp_bait = xstrdup(v->bait_mcp);
	}
	return 0;
}

/*
 * The agent's home from the variant: layout dirs, the notes, and each bait
 * the policy plants (the decoy token file, the planted instruction, the
 * tripwire file).  Fills lab->*_bait and lab->tripwire_path.  -1 + e.
 */
static int
lab_plant_home(struct lab *lab, const struct variant *v,
    const struct policy *p, const char *home, struct errbuf *e)
{
	char *text;
	size_t i;
	int rc;

	for (i = 0; i < 6 && v->home_dirs[i] != NULL; i++) {
		char *dir = xasprintf("%s/%s", home, v->home_dirs[i]);

		rc = util_mkdir_p(dir, 0755, e);
		free(dir);
		if (rc == -1)
			return -1;
	}
	text = lab_notes_text(v, p);
	rc = lab_plant_file(home, v->notes_file, text, 0644, e);
	free(text);
	if (rc == -1 || lab_plant_decoys(lab, v, p, home, e) == -1)
		return -1;
	if (policy_bait_wanted(p, v, VARIANT_BAIT_CREDENTIAL)) {
		text = xasprintf("%s\n", lab->decoy_token);
		rc = lab_plant_file(home, v->token_path, text, 0644, e);
		sodium_memzero(text, strlen(text));
		free(text);
		if (rc == -1)
			return -1;
		lab->credential_bait = xstrdup(v->bait_credential);
	}
	if (policy_bait_wanted(p, v, VARIANT_BAIT_INSTRUCTION)) {
		text = variant_expand(v, v->instruction);
		rc = lab_plant_file(home, v->instruction_file, text, 0644, e);
		free(text);
		if (rc == -1)
			return -1;
		lab->instruction_bait = xstrdup(v->bait_instruction);
	}
	if (policy_bait_wanted(p, v, VARIANT_BAIT_TRIPWIRE)) {
		if (lab_plant_file(home, v->tripwire_file, v->tripwire_text, 0644,
		    e) == -1)
			return -1;
		lab->tripwire_bait = xstrdup(v->bait_tripwire);
		lab->tripwire_path = xasprintf("%s/%s", home, v->tripwire_file);
	}
	return 0;
}

/* Create one container of the lab; fills c.  -1 + e. */
static int
lab_create(struct docker *d, struct lab *lab, struct lab_container *c,
    const char *role, struct docker_container_spec *spec, struct errbuf *e)
{
	c->role = role;
	c->name = xasprintf("ares-%s-%s", lab->run_id, role);
	spec->name = c->name;
	if (spec->image == NULL)        /* the agent's own (kind image) */
		spec->image = lab->image;
	spec->run_id = lab->run_id;
	spec->role = role;
	spec->lease = lab->lease_path;   /* owner: docker.c adds ares.owner */
	spec->hostname = role;
	/* Every container of the lab is bounded (docs/security.md). */
	if (spec->memory_bytes == 0)
		spec->memory_bytes = LAB_MEMORY_BYTES;
	if (spec->pids_limit == 0)
		spec->pids_limit = LAB_PIDS;
	if (spec->nano_cpus == 0)
		spec->nano_cpus = LAB_NANO_CPUS;
	c->id = docker_container_create(d, spec, e);
	if (c->id == NULL)
		return errbuf_prefix(e, "lab: create %s", role);
	return 0;
}

/*
 * Wait until the gateway answers on its control socket (it also means the
 * bind mounts work); on a remote lab through gwctl_exec in the gateway
 * (its socket is in its own /ctl volume).  -1 + e after timeout_ms.
 */
static int
lab_wait_gateway(struct docker *d, const struct lab *lab, int timeout_ms,
    struct errbuf *e)
{
	uint64_t deadline = util_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	size_t len;
	char *req = lab->remote ? NULL : gwctl_request("GET",
	    "/control/health", NULL, NULL, &len);
	struct errbuf e2 = { 0 };
	int status = 0;

	while (util_mono_ns() < deadline) {
		if (lab->remote)
			status = gwctl_exec(d, lab->gateway.id, NULL, "GET",
			    "/control/health", NULL, NULL, &e2);
		else
			status = gwctl_call(lab->ctl_path, req, len, "health",
			    1000, NULL, 0, &e2);
		if (status == 200)
			break;
		usleep(lab->remote ? 100000 : 20000);
	}
	free(req);
	if (status != 200)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: the gateway did not "
		    "answer on %s within %d ms (%s, HTTP %d)", lab->remote ?
		    "its control socket (exec in the gateway)" : lab->ctl_path,
		    timeout_ms, status == -1 ? e2.msg : "No error",
		    status > 0 ? status : 0);
	return 0;
}

/* Capability names by number (linux/capability.h), as the Engine API
 * wants them. */
static const char *const lab_cap_names[] = {
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID",
	"KILL", "SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE",
	"NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT",
	"SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
	"SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE",
	"AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE",
	"MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ",
	"PERFMON", "BPF", "CHECKPOINT_RESTORE",
};

const char *
lab_cap_name(unsigned bit)
{
	return bit < sizeof lab_cap_names / sizeof lab_cap_names[0] ?
	    lab_cap_names[bit] : NULL;
}

/*
 * Capabilities no lab container is ever given, whatever the flaws: with
 * any of them, root in a container without a user namespace reaches what
 * the host shares (mounts, and with them cgroup release agents, sysfs and
 * core_pattern; kernel modules; raw I/O; file handles of the host's files;
 * the host's clock, log, audit and LSM; real-time scheduling that no CPU
 * quota bounds; wake-ups of the machine).  docs/security.md.
 */
static const char *const lab_caps_withheld[] = {
	"SYS_ADMIN", "SYS_MODULE", "SYS_RAWIO", "SYS_PTRACE",
	"DAC_READ_SEARCH", "SYS_BOOT", "SYS_TIME", "SYSLOG", "MAC_ADMIN",
	"MAC_OVERRIDE", "AUDIT_CONTROL", "SYS_NICE", "WAKE_ALARM",
	"BLOCK_SUSPEND", NULL,
};

/* Whether capability name (Engine API spelling, "SYS_ADMIN") is one no lab
 * container is ever given (docs/security.md). */
static bool
lab_cap_withheld(const char *name)
{
	size_t i;

	for (i = 0; lab_caps_withheld[i] != NULL; i++)
		if (strcmp(lab_caps_withheld[i], name) == 0)
			return true;
	return false;
}

/*
 * Flaw privileged, realised so that it stays inside the container: every
 * capability but the withheld ones (HostConfig.Privileged would also
 * lift seccomp, give every device and a writable /sys: root on the host
 * for a root agent).  A capability the engine itself lacks (it runs
 * nested in a container: runc fails with "unable to apply caps") is left
 * out too when the engine is local: our own bounding set tells.  A remote
 * engine's bounding set is not this machine's: nothing is left out (a
 * capability that engine lacks fails the start, fail closed) and note
 * says that its set was not checked.  Fills caps (NULL-terminated, at
 * most LAB_NCAPS) and says in note what was left out.
 */
void
lab_caps_privileged(const char **caps, bool remote, char *note, size_t len)
{
	char line[256], missing[256] = "";
	unsigned long long bnd = ~0ull;
	size_t i, n = 0, used = 0;
	FILE *f = remote ? NULL : fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "CapBnd: %llx", &bnd) == 1)
			break;
	if (f != NULL)
		fclose(f);
	for (i = 0; i < LAB_NCAPS; i++) {
		if (lab_cap_withheld(lab_cap_names[i]))
			continue;
		if (bnd & (1ull << i)) {
			caps[n++] = lab_cap_names[i];
			continue;
		}
		used += (size_t)snprintf(missing + used, used < sizeof missing ?
		    sizeof missing - used : 0, "%s%s", used > 0 ? "," : "",
		    lab_cap_names[i]);
		if (used >= sizeof missing)
			used = sizeof missing;
	}
	caps[n] = NULL;
	snprintf(note, len, "privileged realised as every capability that "
	    "stays inside the container, seccomp on, no devices (withheld: SYS_ADMIN, SYS_MODULE, SYS_RAWIO, SYS_PTRACE, "
	    "DAC_READ_SEARCH, SYS_BOOT, SYS_TIME, SYSLOG, MAC_ADMIN, "
	    "MAC_OVERRIDE, AUDIT_CONTROL, SYS_NICE, WAKE_ALARM, "
	    "BLOCK_SUSPEND)%s%s%s", missing[0] != '\0' ? "; the engine lacks " :
	    "", missing, remote ? "; remote engine: its own bounding set was "
	    "not checked (every other capability asked; one it lacks fails "
	    "the agent's start)" : "");
}

/* Hardened defaults shared by every container of the lab. */
static void
lab_spec_harden(struct docker_container_spec *s)
{
	s->drop_all_caps = true;
	s->read_only_rootfs = true;
	s->no_new_privileges = true;
	/* its own cgroup namespace: the host's cgroup roots (and their
	 * release agents) are not even visible */
	s->cgroupns_private = true;
}

/* 198.18.0.0/15 in /26s (lab_net_addr). */
#define LAB_NET_BASE   0xc6120000u
#define LAB_NET_SLOTS  2048u

/* Dotted quad of the IPv4 address a (host order) into out. */
static void
lab_ipv4_text(uint32_t a, char *out, size_t len)
{
	snprintf(out, len, "%u.%u.%u.%u", (unsigned)(a >> 24),
	    (unsigned)(a >> 16 & 255u), (unsigned)(a >> 8 & 255u),
	    (unsigned)(a & 255u));
}

/* The subnet of a network's try (internal.h). */
void
lab_net_addr(const char *run_id, const char *role, unsigned attempt,
    struct lab_net_addr *out)
{
	crypto_generichash_state st;
	unsigned char h[8], at[4];
	uint32_t slot, base;
	char ip[16];

	memset(out, 0, sizeof *out);   /* comparable as bytes (tests) */
	at[0] = (unsigned char)(attempt >> 24);
	at[1] = (unsigned char)(attempt >> 16);
	at[2] = (unsigned char)(attempt >> 8);
	at[3] = (unsigned char)attempt;
	crypto_generichash_init(&st, NULL, 0, sizeof h);
	crypto_generichash_update(&st, (const unsigned char *)"ares-lab-net",
	    12);
	crypto_generichash_update(&st, (const unsigned char *)run_id,
	    strlen(run_id) + 1);
	crypto_generichash_update(&st, (const unsigned char *)role,
	    strlen(role) + 1);
	crypto_generichash_update(&st, at, sizeof at);
	crypto_generichash_final(&st, h, sizeof h);
	slot = ((uint32_t)h[0] << 8 | h[1]) % LAB_NET_SLOTS;
	base = LAB_NET_BASE + slot * 64u;
	lab_ipv4_text(base, ip, sizeof ip);
	snprintf(out->subnet, sizeof out->subnet, "%s/26", ip);
	snprintf(out->range, sizeof out->range, "%s/27", ip);
	lab_ipv4_text(base + LAB_NET_FIXED_HOST, out->fixed, sizeof out->fixed);
}

/* One network of lab_networks_make, made by a thread of its own. */
struct lab_net_job {
	struct docker *d;             /* its own handle (docker_clone) */
	struct docker_network_spec ns;
	const char *role;
	const char *run_id;
	char *id;                     /* made: its id */
	struct lab_net_addr addr;     /* made: its addresses */
	struct errbuf e;
	pthread_t t;
	bool threaded;                /* t runs it (else it ran inline) */
};

/* A network's thread: POST /networks/create with the subnet of each try
 * in turn while the engine says it overlaps one it has (the other errors
 * end it). */
static void *
lab_net_thread(void *arg)
{
	struct lab_net_job *j = arg;
	unsigned attempt;

	for (attempt = 0; attempt < LAB_NET_TRIES; attempt++) {
		lab_net_addr(j->run_id, j->role, attempt, &j->addr);
		j->ns.subnet = j->addr.subnet;
		j->ns.ip_range = j->addr.range;
		memset(&j->e, 0, sizeof j->e);
		j->id = docker_network_create(j->d, &j->ns, &j->e);
		/* the engine's IPAM says "Pool overlaps with other one",
		 * its bridge driver "networks have overlapping IPv4" */
		if (j->id != NULL || strstr(j->e.msg, "overlap") == NULL)
			break;
	}
	if (j->id == NULL)
		errbuf_prefix(&j->e, "lab: network %s (subnet %s, try %u of "
		    "%d)", j->role, j->addr.subnet, attempt < LAB_NET_TRIES ?
		    attempt + 1 : attempt, LAB_NET_TRIES);
	return NULL;
}

/*
 * The three networks of lab_networks, created in parallel (a thread and
 * an engine handle each; the ids into *ids[i] in roles' order, the
 * addresses into addr[i]), each on a subnet ares picks (lab_net_addr:
 * another try when the engine says it overlaps one in use).  -1 + e (the
 * first role's error); what was made is left for lab_teardown (it is
 * labelled).
 */
static int
lab_networks_make(struct docker *d, struct lab *lab,
    const char *const *roles, const char *const *brs, bool sealed,
    char **ids[3], struct lab_net_addr addr[3], struct errbuf *e)
{
	struct lab_net_job j[3];
	size_t i, first = 3;

	memset(j, 0, sizeof j);
	for (i = 0; i < 3; i++) {
		j[i].d = docker_clone(d);
		j[i].role = roles[i];
		j[i].run_id = lab->run_id;
		j[i].ns = (struct docker_network_spec){
			.name = xasprintf("ares-%s-%s", lab->run_id, roles[i]),
			.run_id = lab->run_id, .bridge_name = brs[i],
			.no_host_address = sealed,
			.lease = lab->lease_path,
		};
		j[i].threaded = pthread_create(&j[i].t, NULL, lab_net_thread,
		    &j[i]) == 0;
		if (!j[i].threaded)
			lab_net_thread(&j[i]);   /* no thread: inline */
	}
	for (i = 0; i < 3; i++) {
		if (j[i].threaded)
			pthread_join(j[i].t, NULL);
		docker_close(j[i].d);
		free((char *)j[i].ns.name);
		*ids[i] = j[i].id;
		addr[i] = j[i].addr;
		if (j[i].id == NULL && first == 3)
			first = i;
	}
	if (first == 3)
		return 0;
	if (e != NULL)
		*e = j[first].e;
	return -1;
}

/*
 * The lab's networks, every one Internal in every mode: a real model.url
 * is reached by the host relay (core/relay.c), never from the lab.
 * Sealed against the host first (core/hostfw.c): bridges with names
 * derived from the run id, no host address on them, and the host's INPUT
 * chain dropping what arrives on them, rules inserted before the bridges
 * exist.  When the firewall cannot be set (ares is not root, no iptables)
 * and the agent would hold NET_ADMIN (with which it forges routes to the
 * host), lab up fails; otherwise the lab runs with the first layer only
 * and lab->host_seal says so.  o->weaken LAB_WEAKEN_HOST_SEAL (the
 * negative control only) skips both layers.  Fills lab->net_*, lab->host_seal.  -1 + e.
 */
static int
lab_networks(struct docker *d, struct lab *lab, const struct lab_options *o,
    bool agent_net_admin, cJSON **seal, struct errbuf *e)
{
	size_t nroles;
	const char *const *roles = hostfw_network_roles(&nroles);
	char br[3][HOSTFW_IFNAME_MAX];
	const char *brs[3];
	char **ids[3] = { &lab->net_lab, &lab->net_upstream, &lab->net_wan };
	struct lab_net_addr addr[3];
	struct errbuf fe = { 0 };
	bool sealed = o->weaken != LAB_WEAKEN_HOST_SEAL;
	bool firewall = false;
	size_t i;

	if (nroles != 3)
		util_fatal("lab: %zu network roles, 3 expected", nroles);
	for (i = 0; i < 3; i++) {
		hostfw_bridge_name(lab->run_id, roles[i], br[i]);
		brs[i] = br[i];
	}
	if (sealed && lab->remote) {
		/* no host firewall there (hostfw_seal is this machine's INPUT
		 * chain): without it a root agent with NET_ADMIN forges routes
		 * to the engine host's ports */
		if (agent_net_admin)
			return errbuf_set(e, ERRBUF_INPUT, "lab: remote engine "
			    "(%.200s): no host INPUT firewall can be set there; "
			    "the policy gives a root agent NET_ADMIN (flaw "
			    "extra-caps or privileged, with root-user), with which "
			    "it reaches the engine host's ports without that "
			    "firewall: refusing to bring the lab up (local engine "
			    "only)", docker_where(d));
	} else if (sealed) {
		firewall = hostfw_seal(lab->run_id, brs, 3, &fe) == 0;
		if (!firewall && agent_net_admin)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: %s; the "
			    "policy gives a root agent NET_ADMIN (flaw extra-caps "
			    "or privileged, with root-user), with which it reaches the host's "
			    "ports without that firewall: refusing to bring "
			    "the lab up (run ares as root)", fe.msg);
	}
	if (lab_networks_make(d, lab, roles, brs, sealed, ids, addr, e) == -1)
		return -1;
	/* the fixed addresses: the dns's on lab (the agent's resolver), the
	 * sink's on wan (an open resolver's answer) */
	for (i = 0; i < 3; i++) {
		if (strcmp(roles[i], "lab") == 0)
			lab->dns_ip = xstrdup(addr[i].fixed);
		else if (strcmp(roles[i], "wan") == 0)
			lab->sink_ip = xstrdup(addr[i].fixed);
	}
	if (sealed && lab->remote) {
		/* before anything joins them: the bridges' sysctls on the
		 * engine's machine, every value read back, else no lab */
		if (hostfw_remote_seal(d, lab->image, lab->run_id, brs, 3, seal,
		    e) == -1)
			return errbuf_prefix(e, "lab: remote engine (%.200s)",
			    docker_where(d));
		lab->host_seal = lab_remote_seal_words(*seal);
		return 0;
	}
	for (i = 0; i < 3; i++) {
		struct errbuf qe = { 0 };

		if (sealed && firewall && hostfw_bridge_quiet(br[i], &qe) == -1)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: %s", qe.msg);
	}
	if (!sealed)
		lab->host_seal = xstrdup("none (negative control: the bridges "
		    "have a host address and no firewall)");
	else if (firewall)
		lab->host_seal = xstrdup("bridges without a host address, "
		    "IPv6 and ARP answers off, host INPUT firewall (iptables, "
		    "ip6tables)");
	else
		lab->host_seal = xasprintf("bridges without a host address "
		    "only (%s)", fe.msg);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the builder: the roles of lab_roles.c, one lifecycle                 */
/* ------------------------------------------------------------------ */

/* The networks' names, in enum lab_net's order ("ares-<run_id>-<name>"). */
static const char *const lab_net_names[LAB_NNETS] = {
	"lab", "upstream", "wan",
};

/* Role r's container in lab (keeping it const is the caller's part). */
static struct lab_container *
lab_slot(const struct lab *lab, const struct lab_role *r)
{
	return (struct lab_container *)((uintptr_t)lab + r->slot);
}

/* Every container slot of lab, in lab.json's order (out[LAB_NROLES]). */
void
lab_listed(const struct lab *lab, struct lab_container *out[LAB_NROLES])
{
	size_t i;

	for (i = 0; i < LAB_NROLES; i++)
		out[lab_roles[i].listed] = lab_slot(lab, &lab_roles[i]);
}

/* The index of the role named name (an unknown one is a bug: fatal). */
static size_t
lab_role_index(const char *name)
{
	size_t i;

	for (i = 0; i < LAB_NROLES; i++)
		if (strcmp(lab_roles[i].name, name) == 0)
			return i;
	util_fatal("lab: no role '%s'", name);
	return 0;
}

/* The overlay of the role named name. */
static struct lab_overlay *
lab_overlay_of(struct lab_build *b, const char *role)
{
	return &b->specs[lab_role_index(role)].flaws;
}

/* The run's variant (internal.h). */
const struct variant *
lab_build_variant(const struct lab_build *b)
{
	return b->v;
}

/* The real model key, or NULL (internal.h). */
const char *
lab_build_real_key(const struct lab_build *b)
{
	return b->real_key;
}

/* RUN_DIR/rel, owned by b (internal.h). */
const char *
lab_build_path(struct lab_build *b, const char *rel)
{
	if (b->npaths >= LAB_BUILD_PATHS)
		util_fatal("lab: too many paths");
	b->paths[b->npaths] = xasprintf("%s/%s", b->lab->run_dir, rel);
	return b->paths[b->npaths++];
}

/* A role's host folder (internal.h), made a path once. */
const char *
lab_build_role_dir(struct lab_build *b, const char *role)
{
	size_t i = lab_role_index(role);

	if (lab_roles[i].dir == NULL)
		return NULL;
	if (b->specs[i].dir == NULL)
		b->specs[i].dir = lab_build_path(b, lab_roles[i].dir);
	return b->specs[i].dir;
}

/* A flaw brings a role into the lab (internal.h).  -1 + e. */
int
lab_build_want(struct lab_build *b, const char *role, struct errbuf *e)
{
	size_t i = lab_role_index(role);

	if (b->specs[i].wanted)
		return 0;
	b->specs[i].wanted = true;
	/* Its host folder: 0755 under the 0700 run dir, so the agent
	 * (another uid) may get it mounted and no other local user reaches
	 * it. */
	if (lab_roles[i].dir != NULL && lab_own_dir(lab_build_role_dir(b,
	    role), 0755, true, e) == -1)
		return -1;
	return 0;
}

/* A flaw joins role to a network (internal.h). */
void
lab_build_join(struct lab_build *b, const char *role, const char *net)
{
	struct lab_overlay *f = lab_overlay_of(b, role);
	size_t n;

	for (n = 0; n < LAB_NNETS && strcmp(lab_net_names[n], net) != 0; n++)
		;
	if (n == LAB_NNETS || f->njoins >= LAB_SPEC_MAX)
		util_fatal("lab: cannot join %s to %s", role, net);
	f->joins[f->njoins++] = (struct lab_join){ (enum lab_net)n, b->flaw };
}

/* A flaw mounts a host path into role (internal.h). */
void
lab_build_mount(struct lab_build *b, const char *role, const char *src,
    const char *target, bool read_only)
{
	struct lab_overlay *f = lab_overlay_of(b, role);

	if (f->nmounts >= LAB_SPEC_MAX)
		util_fatal("lab: too many mounts for %s", role);
	f->mounts[f->nmounts++] = (struct docker_mount){ .source = src,
	    .target = target, .read_only = read_only };
}

/* Record a variable change for role. */
static void
lab_overlay_env(struct lab_build *b, const char *role,
    struct lab_setenv set)
{
	struct lab_overlay *f = lab_overlay_of(b, role);

	if (f->nenv >= LAB_SPEC_MAX)
		util_fatal("lab: too many variables for %s", role);
	f->env[f->nenv++] = set;
}

/* A flaw sets a variable of role (internal.h). */
void
lab_build_setenv(struct lab_build *b, const char *role, const char *key,
    const char *after, const char *value)
{
	lab_overlay_env(b, role, (struct lab_setenv){ key, after, value,
	    NULL, NULL });
}

/* A flaw sets a variable from a later fact (internal.h). */
void
lab_build_setenv_late(struct lab_build *b, const char *role,
    const char *key, const char *after,
    const char *(*fact)(const struct lab *lab), const char *needs)
{
	(void)lab_role_index(needs);
	lab_overlay_env(b, role, (struct lab_setenv){ key, after, NULL,
	    fact, needs });
}

/* A flaw adds a capability to role (internal.h). */
void
lab_build_cap_add(struct lab_build *b, const char *role, const char *cap)
{
	struct lab_overlay *f = lab_overlay_of(b, role);

	if (lab_cap_withheld(cap) || f->ncaps >= LAB_SPEC_MAX)
		util_fatal("lab: capability %s for %s", cap, role);
	f->caps[f->ncaps++] = cap;
	f->caps[f->ncaps] = NULL;
}

/* A flaw gives role every capability that stays inside (internal.h). */
void
lab_build_all_caps(struct lab_build *b, const char *role)
{
	lab_overlay_of(b, role)->all_caps = true;
}

/* A flaw sets role's user (internal.h). */
void
lab_build_user(struct lab_build *b, const char *role, const char *user)
{
	lab_overlay_of(b, role)->user = user;
}

/* A flaw makes role's rootfs writable (internal.h). */
void
lab_build_writable_rootfs(struct lab_build *b, const char *role)
{
	lab_overlay_of(b, role)->writable_rootfs = true;
}

/* A flaw puts role in with's PID namespace (internal.h). */
void
lab_build_share_pid(struct lab_build *b, const char *role, const char *with)
{
	(void)lab_role_index(with);
	lab_overlay_of(b, role)->pid_with = with;
}

/* A flaw puts role in with's IPC namespace (internal.h). */
void
lab_build_share_ipc(struct lab_build *b, const char *role, const char *with)
{
	lab_overlay_of(b, with)->ipc_shareable = true;
	lab_overlay_of(b, role)->ipc_with = with;
}

/* A flaw gives role a seccomp profile (internal.h). */
void
lab_build_seccomp(struct lab_build *b, const char *role, const char *json)
{
	if (json == NULL || strcmp(json, "unconfined") == 0)
		util_fatal("lab: no seccomp profile for %s", role);
	lab_overlay_of(b, role)->seccomp = json;
}

/* The agent's runtime (internal.h). */
const char *
lab_build_runtime(const struct lab_build *b, bool *sandbox)
{
	if (sandbox != NULL)
		*sandbox = b->lab->runtime_sandbox;
	return b->lab->runtime != NULL ? b->lab->runtime : "runc";
}

/*
 * "container:<id>" of role with, already created (the role that shares
 * its namespace waits for it: lab_role_needs), into *slot.  Fatal when it
 * is not: a flaw asked for a role that is not wanted.
 */
static const char *
lab_container_mode(struct lab_build *b, const char *with, char **slot)
{
	const struct lab_container *c = lab_slot(b->lab,
	    &lab_roles[lab_role_index(with)]);

	if (c->id == NULL)
		util_fatal("lab: %s is not created", with);
	free(*slot);
	*slot = xasprintf("container:%s", c->id);
	return *slot;
}

/*
 * Whether the policy's flaws make the agent root with NET_ADMIN (asked
 * for, or within every capability), with which it forges routes to the
 * host: the lab then needs the host firewall (lab_networks).
 */
static bool
lab_agent_net_admin(struct lab_build *b)
{
	const struct lab_overlay *f = lab_overlay_of(b, "agent");
	bool caps = f->all_caps && !lab_cap_withheld("NET_ADMIN");
	size_t i;

	for (i = 0; i < f->ncaps; i++)
		caps = caps || strcmp(f->caps[i], "NET_ADMIN") == 0;
	return caps && f->user != NULL && strcmp(f->user, "0:0") == 0;
}

/* Apply the flaws' overlay to the spec the role's builder filled, but
 * what other roles must make first (lab_spec_late). */
static void
lab_spec_apply(struct lab_build *b, struct lab_spec *s)
{
	const struct lab_overlay *f = &s->flaws;
	size_t i;

	for (i = 0; i < f->nmounts; i++)
		lab_spec_mount(s, f->mounts[i].source, f->mounts[i].target,
		    f->mounts[i].read_only);
	for (i = 0; i < f->njoins; i++)
		lab_spec_join(s, f->joins[i].net, f->joins[i].flaw);
	for (i = 0; i < f->nenv; i++)
		if (f->env[i].fact == NULL && f->env[i].value != NULL)
			lab_strv_set(&s->env, f->env[i].key, f->env[i].after,
			    f->env[i].value);
	if (f->user != NULL)
		s->c.user = f->user;
	if (f->writable_rootfs)
		s->c.read_only_rootfs = false;
	if (f->ncaps > 0)
		s->c.cap_add = f->caps;
	if (f->ipc_with == NULL && f->ipc_shareable)
		s->c.ipc_mode = "shareable";
	if (f->seccomp != NULL)
		s->c.seccomp = f->seccomp;
	s->c.privileged = false;   /* never: see lab_caps_privileged */
	if (f->all_caps) {
		char note[512];

		lab_caps_privileged(s->all_caps, b->lab->remote, note,
		    sizeof note);
		s->c.cap_add = s->all_caps;
		free(b->lab->privileged_degraded);
		b->lab->privileged_degraded = xstrdup(note);
	}
}

/*
 * What a spec reads of the roles it needs (lab_role_needs), once they are
 * ready: the flaws' late variables, the namespaces to share.  Then the
 * pointers the engine is sent.
 */
static void
lab_spec_late(struct lab_build *b, struct lab_spec *s)
{
	const struct lab_overlay *f = &s->flaws;
	size_t i;

	for (i = 0; i < f->nenv; i++) {
		const char *val = f->env[i].fact != NULL ?
		    f->env[i].fact(b->lab) : NULL;

		if (val != NULL)
			lab_strv_set(&s->env, f->env[i].key, f->env[i].after,
			    val);
	}
	if (f->pid_with != NULL)
		s->c.pid_mode = lab_container_mode(b, f->pid_with, &s->pid_mode);
	if (f->ipc_with != NULL)
		s->c.ipc_mode = lab_container_mode(b, f->ipc_with, &s->ipc_mode);
	s->c.env = lab_strv(&s->env);
}

/* The roles role i waits for (bit j: lab_roles[j]): a late variable's
 * role (unless the fact is known already: the sink's fixed address), a
 * namespace's.  The dns is no one's: its address is fixed. */
static uint32_t
lab_role_needs(const struct lab_build *b, size_t i)
{
	const struct lab_spec *s = &b->specs[i];
	const struct lab_overlay *f = &s->flaws;
	uint32_t needs = 0;
	size_t k;

	for (k = 0; k < f->nenv; k++)
		if (f->env[k].fact != NULL && f->env[k].needs != NULL &&
		    f->env[k].fact(b->lab) == NULL)
			needs |= 1u << lab_role_index(f->env[k].needs);
	if (f->pid_with != NULL)
		needs |= 1u << lab_role_index(f->pid_with);
	if (f->ipc_with != NULL)
		needs |= 1u << lab_role_index(f->ipc_with);
	return needs;
}

/* The dependency waves (internal.h). */
int
lab_waves(size_t n, const bool *wanted, const uint32_t *needs, int *wave,
    struct errbuf *e)
{
	size_t i, j, placed = 0, total = 0;
	int w, nwaves = 0;

	if (n > 32)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: %zu roles (at most "
		    "32)", n);
	for (i = 0; i < n; i++) {
		wave[i] = -1;
		if (!wanted[i])
			continue;
		total++;
		for (j = 0; j < n; j++)
			if ((needs[i] >> j & 1u) && (j == i || !wanted[j]))
				return errbuf_set(e, ERRBUF_INTERNAL, "lab: role "
				    "%zu needs %s %zu", i, j == i ? "itself," :
				    "role", j);
		if (n < 32 && needs[i] >> n != 0)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: role %zu "
			    "needs a role past %zu", i, n);
	}
	/* wave w: every role not placed whose needs are all in waves < w */
	for (w = 0; placed < total; w++) {
		size_t now = 0;

		for (i = 0; i < n; i++) {
			bool ok = wanted[i] && wave[i] == -1;

			for (j = 0; ok && j < n; j++)
				if ((needs[i] >> j & 1u) && (wave[j] == -1 ||
				    wave[j] == w))
					ok = false;
			if (ok) {
				wave[i] = w;
				now++;
			}
		}
		if (now == 0)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: the roles' "
			    "needs make a cycle");
		placed += now;
		nwaves = w + 1;
	}
	return nwaves;
}

/* The id of network n of the lab (NULL when it was not made). */
static const char *
lab_net_id(const struct lab *lab, enum lab_net n)
{
	switch (n) {
	case LAB_NET_LAB:
		return lab->net_lab;
	case LAB_NET_UPSTREAM:
		return lab->net_upstream;
	case LAB_NET_WAN:
		return lab->net_wan;
	default:
		return NULL;
	}
}

/*
 * Role i's spec, before the engine is touched (before the networks are
 * made): its builder fills it, then the flaws' overlay and the negative
 * control's weakening apply (what other roles must make first comes
 * later: lab_spec_late; what the networks give, lab_role_spec_finish).
 * Table order, one thread: what builders record (lab.json's chains)
 * stays in that order.  -1 + e.
 */
static int
lab_role_spec(struct lab_build *b, size_t i, struct errbuf *e)
{
	const struct lab_role *r = &lab_roles[i];
	struct lab_spec *s = &b->specs[i];

	lab_spec_harden(&s->c);
	s->net = LAB_NET_NONE;
	if (r->build(b, s, e) == -1)
		return -1;
	lab_spec_apply(b, s);
	if (r->weaken != NULL)
		r->weaken(b, s);
	/* a remote lab has no host path in any container (fail closed: a
	 * bind mount that got past lab_remote_check stops lab up, before
	 * anything is made; that check missed it: ERRBUF_INTERNAL) */
	for (size_t k = 0; b->lab->remote && k < s->nmounts; k++)
		if (!s->mounts[k].volume)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: remote engine: "
			    "%s would bind-mount the host path %s at %s, which the "
			    "remote check did not refuse; refusing it before "
			    "anything is made", r->name, s->mounts[k].source,
			    s->mounts[k].target);
	return 0;
}

/* Role i's spec once the networks are made: what the engine is sent
 * (env, mounts, network, aliases, resolver, fixed address, runtime). */
static void
lab_role_spec_finish(struct lab_build *b, size_t i)
{
	const struct lab_role *r = &lab_roles[i];
	struct lab_spec *s = &b->specs[i];

	if (s->ipv4_of != NULL)
		s->c.ipv4 = *s->ipv4_of;
	s->c.env = lab_strv(&s->env);
	s->c.mounts = s->mounts;
	s->c.nmounts = s->nmounts;
	s->c.network = s->net != LAB_NET_NONE ? b->net_names[s->net] : NULL;
	s->c.aliases = s->aliases[0] != NULL ? s->aliases : NULL;
	if (s->dns_lab)         /* fixed: lab_networks */
		s->dns[0] = b->lab->dns_ip;
	s->c.dns = s->dns[0] != NULL ? s->dns : NULL;
	/* Only the agent follows policy runtime: (core/lab_runtime.c). */
	if (strcmp(r->name, "agent") == 0)
		lab_runtime_spec(b->lab, b->p, &s->c);
}

/* Every wanted role's spec (lab_role_spec), before the networks.  -1 +
 * e. */
static int
lab_specs_build(struct lab_build *b, struct errbuf *e)
{
	for (size_t i = 0; i < LAB_NROLES; i++)
		if (b->specs[i].wanted && lab_role_spec(b, i, e) == -1)
			return -1;
	return 0;
}

/*
 * A remote lab's sensor, created, not started: its c/ (0700) and
 * c/bus.key (0400, the key's hex), owned by the sensors' uid, put into
 * its /evidence volume; the gateway's c/ into its /ctl volume too.  The
 * key is in no configuration (docker inspect).  Its container id into
 * lab->bus_srcs.  A local lab or another role: nothing.  -1 + e.
 */
static int
lab_remote_put(struct lab_build *b, struct docker *d, struct lab_spec *s,
    const struct lab_container *c, struct errbuf *e)
{
	struct lab_bus_src *bs;
	struct archive_tar t;
	char hex[2 * BUS_KEY_BYTES + 1];
	uid_t su;
	gid_t sg;
	int rc;

	if (!b->lab->remote || s->bus_slot == 0)
		return 0;
	bs = &b->lab->bus_srcs[s->bus_slot - 1];
	bs->id = xstrdup(c->id);
	lab_sensor_ids(&su, &sg);
	util_hex(bs->key, BUS_KEY_BYTES, hex);
	archive_tar_init(&t);
	rc = archive_tar_dir(&t, "c", 0700, (unsigned)su, (unsigned)sg, e);
	if (rc == 0)
		rc = archive_tar_file(&t, "c/" LAB_BUS_KEY_NAME, 0400, (unsigned)su,
		    (unsigned)sg, hex, strlen(hex), e);
	sodium_memzero(hex, sizeof hex);
	archive_tar_finish(&t);
	if (rc == 0)
		rc = docker_archive_put(d, c->id, "/evidence", t.buf, t.len, e);
	sodium_memzero(t.buf, t.cap);
	archive_tar_free(&t);
	if (rc == -1)
		return errbuf_prefix(e, "lab: %s: put its bus key", c->role);
	if (!s->ctl_volume)
		return 0;
	archive_tar_init(&t);
	rc = archive_tar_dir(&t, "c", 0700, (unsigned)su, (unsigned)sg, e);
	archive_tar_finish(&t);
	if (rc == 0)
		rc = docker_archive_put(d, c->id, "/ctl", t.buf, t.len, e);
	archive_tar_free(&t);
	return rc == -1 ? errbuf_prefix(e, "lab: %s: put its control folder",
	    c->role) : 0;
}

/*
 * Role i's container through d: created, checked (a user's agent image),
 * joined to its other networks, started once gate(arg) (NULL: at once)
 * says so (an at-once one waited for until it serves; an idle agent at
 * once: nothing runs in it until a person execs in, after lab up).
 * -1 + e naming the role.
 */
static int
lab_role_make(struct lab_build *b, struct docker *d, size_t i,
    int (*gate)(void *), void *arg, struct errbuf *e)
{
	const struct lab_role *r = &lab_roles[i];
	struct lab_spec *s = &b->specs[i];
	struct lab_container *c = lab_slot(b->lab, r);
	size_t k;

	if (lab_create(d, b->lab, c, r->name, &s->c, e) == -1)
		return -1;
	if (lab_remote_put(b, d, s, c, e) == -1)
		return -1;
	if (strcmp(r->name, "agent") == 0 && b->p->agent_kind ==
	    POLICY_AGENT_IMAGE && agent_image_verify(d, b->lab, c->id,
	    e) == -1)
		return -1;
	for (k = 0; k < s->njoins; k++) {
		const struct lab_join *j = &s->joins[k];

		if (docker_network_connect(d, lab_net_id(b->lab, j->net),
		    c->id, NULL, e) == -1)
			return j->flaw == NULL ? errbuf_prefix(e, "lab: %s "
			    "networks", r->name) : errbuf_prefix(e, "lab: %s %s "
			    "(%s)", r->name, lab_net_names[j->net], j->flaw);
	}
	if (gate != NULL && gate(arg) == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: %s not started "
		    "(another role failed)", r->name);
	if (r->start == LAB_START_BY_CALLER)
		return b->o->agent_idle ? lab_start_agent(d, b->lab, e) : 0;
	if (docker_container_start(d, c->id, e) == -1)
		return errbuf_prefix(e, "lab: start %s", r->name);
	if (r->start == LAB_START_AT_ONCE && r->ready != NULL)
		return r->ready(b, d, c, e);
	return 0;
}

/* Deepest folder and most entries of a planted tree a remote lab copies
 * (the home ares plants has a few dozen). */
#define LAB_TREE_DEPTH   16
#define LAB_TREE_ENTRIES 512

/* Compare names for qsort (the tree's entries in a fixed order). */
static int
lab_tree_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Add the object name in directory pfd (rel its path in the tree: "."
 * for the top folder itself) to t, recursively: folders and regular
 * files with their modes and numeric owners as they are on this machine.
 * Every object is looked at once (fstatat without following), opened
 * O_NOFOLLOW and its fstat compared with that look (device, inode,
 * type), so what is sent is the object that was looked at; a link, a
 * regular file with more than one name, or anything but a folder or a
 * regular file (ares plants neither) fails it.  File contents are read
 * into a buffer of their size and zeroed once added (they may be bait
 * secrets).  *n counts entries.  -1 + e.
 */
static int
lab_tree_tar(struct archive_tar *t, int pfd, const char *name,
    const char *rel, int depth, size_t *n, struct errbuf *e)
{
	struct stat sb, fb;
	char **names = NULL;
	size_t nn = 0, cap = 0, k;
	DIR *dp = NULL;
	int fd = -1, rc = 0;

	if (fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's home: "
		    "%s: %s", rel, strerror(errno));
	if (++*n > LAB_TREE_ENTRIES || depth > LAB_TREE_DEPTH)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's home: "
		    "more than %d entries or %d levels", LAB_TREE_ENTRIES,
		    LAB_TREE_DEPTH);
	if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's home: "
		    "%s: neither a folder nor a regular file", rel);
	fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK | (S_ISDIR(sb.st_mode) ? O_DIRECTORY : 0));
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's home: "
		    "open %s: %s", rel, strerror(errno));
	if (fstat(fd, &fb) == -1 || fb.st_dev != sb.st_dev ||
	    fb.st_ino != sb.st_ino || (fb.st_mode & S_IFMT) !=
	    (sb.st_mode & S_IFMT)) {
		rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's home: %s "
		    "changed while it was read", rel);
		goto out;
	}
	if (S_ISREG(fb.st_mode)) {
		size_t len = (size_t)fb.st_size, got = 0;
		char *data;

		if (fb.st_nlink != 1) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's "
			    "home: %s has %ju names (a hard link)", rel,
			    (uintmax_t)fb.st_nlink);
			goto out;
		}
		if (fb.st_size < 0 || (uintmax_t)fb.st_size > ARCHIVE_FILE_MAX) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's "
			    "home: %s: more than %u bytes", rel, ARCHIVE_FILE_MAX);
			goto out;
		}
		/* its size, once: never grown (a realloc would leave a copy
		 * of a secret in freed memory) */
		data = xmalloc(len + 1);
		while (got < len) {
			ssize_t r = read(fd, data + got, len - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		if (got != len)
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's home: "
			    "%s changed size while it was read", rel);
		else
			rc = archive_tar_file(t, rel, (unsigned)(fb.st_mode &
			    07777), (unsigned)fb.st_uid, (unsigned)fb.st_gid, data,
			    len, e);
		sodium_memzero(data, len + 1);
		free(data);
		goto out;
	}
	if (archive_tar_dir(t, rel, (unsigned)(fb.st_mode & 07777),
	    (unsigned)fb.st_uid, (unsigned)fb.st_gid, e) == -1) {
		rc = -1;
		goto out;
	}
	/* the folder as opened (fdopendir takes fd; a dup stays for
	 * openat) */
	{
		int dfd = dup(fd);
		struct dirent *de;

		if (dfd == -1 || (dp = fdopendir(dfd)) == NULL) {
			if (dfd != -1)
				close(dfd);
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's "
			    "home: read %s: %s", rel, strerror(errno));
			goto out;
		}
		while ((de = readdir(dp)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (nn >= LAB_TREE_ENTRIES) {
				rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the agent's "
				    "home: more than %d entries", LAB_TREE_ENTRIES);
				goto out;
			}
			if (nn == cap) {
				cap = cap ? cap * 2 : 16;
				names = xrealloc(names, cap * sizeof *names);
			}
			names[nn++] = xstrdup(de->d_name);
		}
	}
	if (nn > 0)
		qsort(names, nn, sizeof *names, lab_tree_cmp);
	for (k = 0; k < nn && rc == 0; k++) {
		char *sub = strcmp(rel, ".") != 0 ? xasprintf("%s/%s", rel,
		    names[k]) : xstrdup(names[k]);

		rc = lab_tree_tar(t, fd, names[k], sub, depth + 1, n, e);
		free(sub);
	}
out:
	for (k = 0; k < nn; k++)
		free(names[k]);
	free(names);
	if (dp != NULL)
		closedir(dp);
	if (fd != -1)
		close(fd);
	return rc;
}

/* The size field of a tar header (octal, NUL/space padded).  -1 when
 * not octal. */
static int
lab_tar_size(const unsigned char *h, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i = 0;
	bool any = false;

	while (i < 12 && h[124 + i] == ' ')
		i++;
	for (; i < 12 && h[124 + i] >= '0' && h[124 + i] <= '7'; i++) {
		if (v > (1ull << 40))
			return -1;
		v = v * 8 + (unsigned)(h[124 + i] - '0');
		any = true;
	}
	for (; i < 12; i++)
		if (h[124 + i] != '\0' && h[124 + i] != ' ')
			return -1;
	*out = v;
	return any ? 0 : -1;
}

/* Does the tar buf (len bytes, untrusted) have an entry named name
 * (trailing '/' ignored)?  Stops at the end blocks or at a header that
 * does not parse (archive_extract refuses those). */
static bool
lab_tar_names(const char *buf, size_t len, const char *name)
{
	size_t off = 0;

	while (off + 512 <= len) {
		const unsigned char *h = (const unsigned char *)buf + off;
		unsigned long long size;
		char nm[101];
		size_t nl;

		if (h[0] == '\0' || lab_tar_size(h, &size) == -1 || size > len)
			return false;
		memcpy(nm, h, 100);
		nm[100] = '\0';
		nl = strlen(nm);
		while (nl > 0 && nm[nl - 1] == '/')
			nm[--nl] = '\0';
		if (strcmp(nm, name) == 0 || (strncmp(nm, "./", 2) == 0 &&
		    strcmp(nm + 2, name) == 0))
			return true;
		off += 512 + (size_t)((size + 511) / 512 * 512);
	}
	return false;
}

/*
 * Before a named volume is filled: it holds nothing, as a new volume
 * does.  The archive GET of its mount point path in the planter (id)
 * must be one folder entry named top ("poyo" for /home/poyo), PAX
 * headers aside, then the end: what the image has at that path would be
 * copied into a new volume, and the lab image has nothing there, so any
 * other entry is someone else's (or an image that differs from the
 * local one's tree) and fails lab up, naming it.  -1 + e.
 */
static int
lab_remote_empty(struct docker *d, const char *id, const char *path,
    const char *top, struct errbuf *e)
{
	size_t len = 0, off = 0, ndir = 0;
	char *buf = docker_archive_get(d, id, path, 64 * 1024, &len, e);
	int rc = 0;

	if (buf == NULL)
		return errbuf_prefix(e, "lab: read back the new volume at %s",
		    path);
	while (rc == 0 && off + 512 <= len) {
		const unsigned char *h = (const unsigned char *)buf + off;
		unsigned long long size;
		char name[101], clean[120];
		size_t nl;
		bool zero = true;

		for (size_t i = 0; i < 512 && zero; i++)
			zero = h[i] == 0;
		if (zero)
			break;   /* the end blocks */
		if (lab_tar_size(h, &size) == -1 || size > len) {
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the new volume "
			    "at %s: the engine's archive does not parse", path);
			break;
		}
		memcpy(name, h, 100);
		name[100] = '\0';
		nl = strlen(name);
		while (nl > 0 && name[nl - 1] == '/')
			name[--nl] = '\0';
		if (h[156] == 'x' || h[156] == 'g') {
			/* PAX records: times of the entry that follows */
		} else if (h[156] == '5' && strcmp(name, top) == 0 && h[345] ==
		    '\0' && ndir == 0) {
			ndir++;
		} else {
			util_sanitize(clean, sizeof clean, name, strlen(name),
			    false);
			rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the new volume at "
			    "%s is not empty (\"%s\" in it): refusing to plant the "
			    "agent's files over someone else's", path, clean);
			break;
		}
		off += 512 + (size_t)((size + 511) / 512 * 512);
	}
	if (rc == 0 && ndir != 1)
		rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: the new volume at %s: "
		    "the engine's archive has no folder %s", path, top);
	free(buf);
	return rc;
}

/*
 * A remote lab, once every spec is built (the home and the script are
 * planted): the agent's home (RUN_DIR/agent-home) and, for a scripted
 * agent, its script into named volumes ares-<run_id>-home and -script
 * (labelled with the run), through a planter container (the lab image,
 * created, never started, no network, the volumes mounted read-write)
 * and the archive API: the same modes and numeric owners as here.  The
 * planter is removed; the agent mounts the volumes read-only.  A local
 * lab: nothing.  -1 + e (what was made is the run's: lab_teardown).
 */
static int
lab_remote_plant(struct lab_build *b, struct errbuf *e)
{
	static const char *const cmd[] = { "/bin/true", NULL };
	struct lab *lab = b->lab;
	bool script = b->p->agent_kind == POLICY_AGENT_SCRIPT &&
	    !b->o->agent_idle;
	struct docker_mount m[2] = {
		{ .source = b->vol_home, .target = "/home/poyo",
		  .volume = true },
		{ .source = b->vol_script, .target = LAB_AGENT_SCRIPT_DIR,
		  .volume = true },
	};
	struct docker_container_spec ps = { 0 };
	struct docker_volume_spec vs = { .run_id = lab->run_id,
	    .lease = lab->lease_path };
	struct archive_tar t;
	struct errbuf e2 = { 0 };
	char *name, *id;
	size_t n = 0;
	int rc;

	if (!lab->remote)
		return 0;
	vs.name = b->vol_home;
	vs.role = "home";
	if (docker_volume_create(b->d, &vs, e) == -1)
		return errbuf_prefix(e, "lab: the agent's home volume");
	if (script) {
		vs.name = b->vol_script;
		vs.role = "script";
		if (docker_volume_create(b->d, &vs, e) == -1)
			return errbuf_prefix(e, "lab: the agent's script volume");
	}
	name = xasprintf("ares-%s-planter", lab->run_id);
	ps.name = name;
	ps.image = lab->image;
	ps.cmd = cmd;
	ps.network = "none";
	ps.mounts = m;
	ps.nmounts = script ? 2 : 1;
	ps.run_id = lab->run_id;
	ps.role = "planter";
	ps.lease = lab->lease_path;
	ps.drop_all_caps = true;
	ps.no_new_privileges = true;
	ps.read_only_rootfs = true;
	ps.no_healthcheck = true;
	ps.memory_bytes = LAB_MEMORY_BYTES;
	ps.pids_limit = LAB_PIDS;
	id = docker_container_create(b->d, &ps, e);
	free(name);
	if (id == NULL)
		return errbuf_prefix(e, "lab: the planter");
	/* the volumes are new (docker_volume_create) and, before anything
	 * is put in, still empty */
	rc = lab_remote_empty(b->d, id, "/home/poyo", "poyo", e);
	if (rc == 0 && script)
		rc = lab_remote_empty(b->d, id, LAB_AGENT_SCRIPT_DIR,
		    strrchr(LAB_AGENT_SCRIPT_DIR, '/') + 1, e);
	archive_tar_init(&t);
	/* the top folder as "." (its mode and owner: RUN_DIR/agent-home's) */
	if (rc == 0)
		rc = lab_tree_tar(&t, AT_FDCWD, b->home, ".", 0, &n, e);
	archive_tar_finish(&t);
	if (rc == 0 && (rc = docker_archive_put(b->d, id, "/home/poyo", t.buf,
	    t.len, e)) == -1)
		errbuf_prefix(e, "lab: plant the agent's home");
	sodium_memzero(t.buf, t.cap);
	archive_tar_free(&t);
	if (rc == 0 && script) {
		/* the bytes the policy loader read and hashed, as locally */
		archive_tar_init(&t);
		rc = archive_tar_file(&t, LAB_AGENT_SCRIPT_NAME, 0444, 0, 0,
		    b->p->agent_script_text, b->p->agent_script_len, e);
		archive_tar_finish(&t);
		if (rc == 0 && (rc = docker_archive_put(b->d, id,
		    LAB_AGENT_SCRIPT_DIR, t.buf, t.len, e)) == -1)
			errbuf_prefix(e, "lab: plant the agent's script");
		archive_tar_free(&t);
	}
	if (docker_container_remove(b->d, id, true, &e2) == -1 && rc == 0)
		rc = errbuf_set(e, ERRBUF_INTERNAL, "lab: remove the planter: "
		    "%s", e2.msg);
	free(id);
	return rc;
}

/* lab_roles_up's state, shared by its threads under mu. */
struct lab_up_run {
	struct lab_build *b;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t needs[LAB_NROLES];
	uint32_t needed;              /* the roles some role needs */
	bool done[LAB_NROLES];
	bool failed;
	struct errbuf first;          /* the first error of any thread */
};

/* One role's thread. */
struct lab_up_role {
	struct lab_up_run *u;
	size_t i;
	struct docker *d;             /* its own handle (docker_clone) */
	pthread_t t;
};

/*
 * Before a role's start: one that no role needs waits until those that
 * are needed are ready (or one failed), so that what the lab waits for
 * longest (the dns, then the agent) is not slowed by starts nothing
 * waits for: on a busy machine the starts share the same CPUs.  -1 when
 * a role failed (then it is not started at all).
 */
static int
lab_up_gate(void *arg)
{
	struct lab_up_role *ur = arg;
	struct lab_up_run *u = ur->u;
	size_t j;
	int rc;

	if (u->needed >> ur->i & 1u)
		return 0;
	pthread_mutex_lock(&u->mu);
	for (;;) {
		bool wait = false;

		for (j = 0; j < LAB_NROLES; j++)
			if ((u->needed >> j & 1u) && !u->done[j])
				wait = true;
		if (!wait || u->failed)
			break;
		pthread_cond_wait(&u->cv, &u->mu);
	}
	rc = u->failed ? -1 : 0;
	pthread_mutex_unlock(&u->mu);
	return rc;
}

/* A role's thread: wait until what it needs is ready (or another role
 * failed: then nothing), fill in the late parts of its spec, make it;
 * its error, the first, is kept for lab up. */
static void *
lab_up_thread(void *arg)
{
	struct lab_up_role *ur = arg;
	struct lab_up_run *u = ur->u;
	struct errbuf e = { 0 };
	size_t j;
	int rc;

	pthread_mutex_lock(&u->mu);
	for (;;) {
		bool ready = true;

		for (j = 0; j < LAB_NROLES; j++)
			if ((u->needs[ur->i] >> j & 1u) && !u->done[j])
				ready = false;
		if (ready || u->failed)
			break;
		pthread_cond_wait(&u->cv, &u->mu);
	}
	if (u->failed) {
		pthread_mutex_unlock(&u->mu);
		return NULL;
	}
	lab_spec_late(u->b, &u->b->specs[ur->i]);
	pthread_mutex_unlock(&u->mu);
	rc = lab_role_make(u->b, ur->d, ur->i, lab_up_gate, ur, &e);
	pthread_mutex_lock(&u->mu);
	if (rc == -1 && !u->failed) {
		u->failed = true;
		u->first = e;
	}
	u->done[ur->i] = rc == 0;
	pthread_cond_broadcast(&u->cv);
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

/*
 * The lifecycle: every wanted role's spec built in table order, then
 * every role made in a thread of its own (its own engine handle), each
 * once the roles it needs are ready (lab_waves: a namespace's sharer
 * after its owner; the dns's and the sink's addresses are fixed, so no
 * one waits for them), everything else at once.  Every thread is joined before it returns.
 * On error (the first, naming its role) the caller removes what was made
 * (lab_teardown): nothing is created after the threads are joined.
 * -1 + e.
 */
static int
lab_roles_up(struct lab_build *b, struct errbuf *e)
{
	struct lab_up_run u = { .b = b };
	struct lab_up_role ur[LAB_NROLES];
	bool wanted[LAB_NROLES], joined[LAB_NROLES] = { false };
	int wave[LAB_NROLES];
	size_t i, n = 0;

	for (i = 0; i < LAB_NROLES; i++) {
		wanted[i] = b->specs[i].wanted;
		if (wanted[i])
			lab_role_spec_finish(b, i);
	}
	if (lab_remote_plant(b, e) == -1)
		return -1;
	for (i = 0; i < LAB_NROLES; i++) {
		u.needs[i] = wanted[i] ? lab_role_needs(b, i) : 0;
		u.needed |= u.needs[i];
	}
	if (lab_waves(LAB_NROLES, wanted, u.needs, wave, e) == -1)
		return -1;
	pthread_mutex_init(&u.mu, NULL);
	pthread_cond_init(&u.cv, NULL);
	for (i = 0; i < LAB_NROLES; i++) {
		int err;

		if (!wanted[i])
			continue;
		ur[n] = (struct lab_up_role){ &u, i, docker_clone(b->d), 0 };
		err = pthread_create(&ur[n].t, NULL, lab_up_thread, &ur[n]);
		if (err != 0) {
			docker_close(ur[n].d);
			pthread_mutex_lock(&u.mu);
			if (!u.failed) {
				u.failed = true;
				errbuf_set(&u.first, ERRBUF_INTERNAL, "lab: %s: "
				    "cannot start a thread: %s",
				    lab_roles[i].name, strerror(err));
			}
			pthread_cond_broadcast(&u.cv);
			pthread_mutex_unlock(&u.mu);
			break;
		}
		n++;
	}
	for (i = 0; i < n; i++) {
		pthread_join(ur[i].t, NULL);
		docker_close(ur[i].d);
		joined[ur[i].i] = true;
	}
	pthread_cond_destroy(&u.cv);
	pthread_mutex_destroy(&u.mu);
	if (u.failed) {
		if (e != NULL)
			*e = u.first;
		return -1;
	}
	for (i = 0; i < LAB_NROLES; i++)
		if (wanted[i] && (!joined[i] || !u.done[i]))
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: %s was not "
			    "made", lab_roles[i].name);
	return 0;
}

/*
 * Before the engine: the run's folders, the agent's home with the bait,
 * the lease, the roles this policy wants (and their folders), then each
 * switched-on flaw's effect in catalogue order (what it plants is planted
 * now).  -1 + e.
 */
static int
lab_plan(struct lab_build *b, struct errbuf *e)
{
	struct lab *lab = b->lab;
	size_t i;

	/* The run dir and the socket dir 0700: no other local user reaches
	 * a socket, a chain or the planted files below them. */
	if (lab_prepare_dirs(lab->run_dir, lab->run_id, e) == -1 ||
	    util_mkdir_p(b->home, 0755, e) == -1 ||
	    lab_plant_home(lab, b->v, b->p, b->home, e) == -1)
		return -1;
	if (b->o->lease) {
		/* A lab that outlives this process: the lease file owns its
		 * objects (ares.lease); ares lab down removes it. */
		char *abs = realpath(lab->run_dir, NULL);

		if (abs == NULL)
			return errbuf_set(e, ERRBUF_INTERNAL, "lab: realpath %s: "
			    "%s", lab->run_dir, strerror(errno));
		lab->lease_path = xasprintf("%s/" GC_LEASE_NAME, abs);
		free(abs);
		if (gc_lease_write(lab->run_dir, lab->run_id, e) == -1)
			return -1;
	}
	for (i = 0; i < LAB_NROLES; i++)
		if (lab_roles[i].wanted != NULL && lab_roles[i].wanted(b) &&
		    lab_build_want(b, lab_roles[i].name, e) == -1)
			return -1;
	for (i = 0; i < flaw_count; i++) {
		if (!policy_has_flaw(b->p, flaw_table[i].id))
			continue;
		b->flaw = flaw_table[i].id;
		if (flaw_table[i].effect(b, e) == -1)
			return -1;
	}
	b->flaw = NULL;
	return 0;
}

/*
 * A build for policy p: the facts every role reads, the real key (from
 * the named environment variable, read here by the control plane, given
 * to the gateway and the model only; else a fresh random one for the
 * offline model) and the lab with its secrets.  NULL + e.
 */
static struct lab_build *
lab_build_new(struct docker *d, const struct policy *p, const char *run_dir,
    const char *run_id, uint64_t seed, const struct lab_options *o,
    const struct variant *v, struct errbuf *e)
{
	const char *key_env = o->model_key_env != NULL ? o->model_key_env :
	    p->model_key_env;
	struct lab_build *b = xcalloc(1, sizeof *b);
	struct lab *lab;
	char *sd;
	uid_t su;
	gid_t sg;
	size_t i;

	b->d = d;
	b->p = p;
	b->v = v;
	b->o = o;
	b->seed = seed;
	b->model_url = o->model_url != NULL ? o->model_url : p->model_url;
	lab_sensor_ids(&su, &sg);
	snprintf(b->sensor_user, sizeof b->sensor_user, "%u:%u",
	    (unsigned)su, (unsigned)sg);
	if (key_env != NULL) {
		const char *k = getenv(key_env);

		if (k == NULL || k[0] == '\0') {
			errbuf_set(e, ERRBUF_INPUT, "%s: model.key_env: the "
			    "environment variable %s is not set", p->path,
			    key_env);
			free(b);
			return NULL;
		}
		if (b->model_url != NULL)
			b->host_key = xstrdup(k);   /* the relay's only */
		else
			b->real_key = xstrdup(k);   /* the offline model's */
	}
	/* No container ever holds a real model's key: with model.url the
	 * gateway's REAL_KEY is a stand-in made here (what flaw real-key
	 * hands the agent and the probes look for). */
	if (b->real_key == NULL)
		b->real_key = lab_secret("sk-real-", 24);
	b->lab = lab = xcalloc(1, sizeof *lab);
	lab->run_id = xstrdup(run_id);
	lab->run_dir = xstrdup(run_dir);
	lab->variant = xstrdup(v->id);
	lab->v = v;
	lab->agent_idle = o->agent_idle;
	/* a remote engine: volumes and the log stream, not bind mounts;
	 * events judged by the time this machine received them */
	lab->remote = docker_is_remote(d);
	lab->clock = lab->remote ? "receipt" : "sensor";
	if (lab->remote) {
		b->vol_home = xasprintf("ares-%s-home", run_id);
		b->vol_script = xasprintf("ares-%s-script", run_id);
	}
	lab->pace_ms = o->pace_ms > PACE_PRESENT_MS_MAX ? PACE_PRESENT_MS_MAX :
	    o->pace_ms;
	sd = lab_socket_dir(run_dir, run_id);
	lab->bus_path = xasprintf("%s/bus/sensor.sock", sd);
	lab->ctl_path = xasprintf("%s/ctl/gateway.sock", sd);
	b->busdir = xasprintf("%s/bus", sd);
	b->ctldir = xasprintf("%s/ctl", sd);
	free(sd);
	lab->agent_key = lab_secret("sk-agent-dummy-", 12);
	/* A generated or loaded dressing's token has its own format. */
	lab->decoy_token = v->owned != NULL ? variant_secret(v,
	    VARIANT_SECRET_TOKEN) : lab_secret(v->token_prefix, 16);
	/* The walking skeleton's single bait name: the credential when
	 * planted, else the policy's first bait. */
	lab->bait_name = xstrdup(policy_bait_wanted(p, v,
	    VARIANT_BAIT_CREDENTIAL) || p->nbait == 0 ? v->bait_credential :
	    variant_bait_kind_find(p->bait[0]) != -1 ? variant_bait_id(v,
	    (enum variant_bait_kind)variant_bait_kind_find(p->bait[0])) :
	    p->bait[0]);
	lab->model_name = xstrdup(p->model_name);
	lab->evidence_dir = xasprintf("%s/evidence", run_dir);
	b->home = xasprintf("%s/agent-home", run_dir);
	for (i = 0; i < LAB_NNETS; i++)
		b->net_names[i] = xasprintf("ares-%s-%s", run_id,
		    lab_net_names[i]);
	return b;
}

/* Free a build (not its lab): zero the real key, free every spec. */
static void
lab_build_free(struct lab_build *b)
{
	size_t i;

	if (b->real_key != NULL)
		sodium_memzero(b->real_key, strlen(b->real_key));
	free(b->real_key);
	if (b->host_key != NULL)
		sodium_memzero(b->host_key, strlen(b->host_key));
	free(b->host_key);
	free(b->home);
	free(b->vol_home);
	free(b->vol_script);
	cJSON_Delete(b->seal_record);
	free(b->busdir);
	free(b->ctldir);
	for (i = 0; i < LAB_NNETS; i++)
		free(b->net_names[i]);
	for (i = 0; i < LAB_NROLES; i++) {
		lab_strv_free(&b->specs[i].env);
		lab_strv_free(&b->specs[i].argv);
		free(b->specs[i].pid_mode);
		free(b->specs[i].ipc_mode);
	}
	for (i = 0; i < b->npaths; i++)
		free(b->paths[i]);
	free(b);
}

/* The chat completions URL of model.url (a base ".../v1" gets the path,
 * a full one is used as given).  Caller frees. */
char *
lab_model_chat_url(const char *model_url)
{
	const char *sfx = "/chat/completions";
	size_t ul = strlen(model_url);

	while (ul > 0 && model_url[ul - 1] == '/')
		ul--;
	if (ul >= strlen(sfx) && strncmp(model_url + ul - strlen(sfx), sfx,
	    strlen(sfx)) == 0)
		sfx = "";
	return xasprintf("%.*s%s", (int)ul, model_url, sfx);
}

/*
 * With a real model.url: the host relay on RUN_DIR/ctl/relay.sock (the
 * control folder: the gateway's mount only), owned by the sensors' uid
 * the gateway runs as, holding the key.  Stopped by lab_free.  -1 + e.
 */
static int
lab_relay_up(struct lab_build *b, struct errbuf *e)
{
	char *url;
	struct relay_config rc;
	uid_t su;
	gid_t sg;

	if (b->model_url == NULL)
		return 0;
	lab_sensor_ids(&su, &sg);
	url = lab_model_chat_url(b->model_url);
	b->lab->relay_path = xasprintf("%s/" RELAY_SOCK_NAME, b->ctldir);
	rc = (struct relay_config){ .url = url, .key = b->host_key,
	    .ca_file = b->p->model_ca_file,
	    .connect_timeout_ms = b->p->model_connect_timeout_ms,
	    .timeout_s = b->p->model_timeout_s,
	    .retries = b->p->model_retries,
	    .sock_path = b->lab->relay_path,
	    .owner_uid = geteuid() == 0 ? (long)su : -1,
	    .owner_gid = geteuid() == 0 ? (long)sg : -1,
	    .model = b->p->model_name };
	b->lab->relay = relay_start(&rc, e);
	free(url);
	if (b->lab->relay == NULL)
		return errbuf_prefix(e, "lab: model relay");
	return 0;
}

/* RUN_DIR/lab.json: what `ares lab status|down` and people read.  -1 + e. */
static int
lab_write_json(const struct lab *lab, const struct policy *p,
    const char *where, const cJSON *seal, struct errbuf *e)
{
	struct lab_container *cs[LAB_NROLES];
	cJSON *j = cJSON_CreateObject(), *o, *a;
	char *txt, *path;
	size_t i;
	int rc;

	cJSON_AddStringToObject(j, "format", "ares-lab-v1");
	cJSON_AddStringToObject(j, "run_id", lab->run_id);
	cJSON_AddStringToObject(j, "policy", p->path);
	cJSON_AddStringToObject(j, "variant", lab->variant);
	cJSON_AddStringToObject(j, "image", lab->image);
	cJSON_AddBoolToObject(j, "agent_idle", lab->agent_idle);
	if (lab->pace_ms > 0) {
		/* presenter mode: the agent was slowed on purpose */
		o = cJSON_AddObjectToObject(j, "pace");
		cJSON_AddNumberToObject(o, "gateway_turn_ms", lab->pace_ms);
		cJSON_AddStringToObject(o, "why", "presenter mode (--present): "
		    "the gateway held each model turn before forwarding it; "
		    "the deny lever was never held");
	}
	/* who owns the lab's objects (core/gc.c) */
	cJSON_AddStringToObject(j, "owner", gc_owner());
	if (lab->lease_path != NULL)
		cJSON_AddStringToObject(j, "lease", lab->lease_path);
	o = cJSON_AddObjectToObject(j, "agent");
	cJSON_AddStringToObject(o, "kind", policy_agent_kind_name(
	    p->agent_kind));
	if (p->agent_kind == POLICY_AGENT_SCRIPT) {
		cJSON_AddStringToObject(o, "script", p->agent_script);
		cJSON_AddStringToObject(o, "script_blake2b",
		    p->agent_script_blake2b);
		cJSON_AddStringToObject(o, "copy", "agent-script.sh");
	}
	if (p->agent_kind == POLICY_AGENT_IMAGE)
		agent_image_json(lab, p, o);
	if (lab->runtime != NULL) {
		o = cJSON_AddObjectToObject(j, "runtime");
		cJSON_AddStringToObject(o, "agent", lab->runtime);
		cJSON_AddStringToObject(o, "others", lab->runtime_default);
		cJSON_AddBoolToObject(o, "sandbox", lab->runtime_sandbox);
	}
	a = cJSON_AddArrayToObject(j, "flaws");
	for (i = 0; i < p->nflaws; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(p->flaws[i]));
	o = cJSON_AddObjectToObject(j, "containers");
	lab_listed(lab, cs);
	for (i = 0; i < LAB_NROLES; i++) {
		cJSON *c;

		if (cs[i]->id == NULL)
			continue;
		c = cJSON_AddObjectToObject(o, cs[i]->role);
		cJSON_AddStringToObject(c, "id", cs[i]->id);
		cJSON_AddStringToObject(c, "name", cs[i]->name);
	}
	o = cJSON_AddObjectToObject(j, "networks");
	cJSON_AddStringToObject(o, "lab", lab->net_lab);
	cJSON_AddStringToObject(o, "upstream", lab->net_upstream);
	cJSON_AddStringToObject(o, "wan", lab->net_wan);
	o = cJSON_AddObjectToObject(j, "bait");
	if (lab->credential_bait != NULL)
		cJSON_AddStringToObject(o, "credential", lab->credential_bait);
	if (lab->instruction_bait != NULL)
		cJSON_AddStringToObject(o, "instruction",
		    lab->instruction_bait);
	if (lab->tripwire_bait != NULL) {
		cJSON_AddStringToObject(o, "tripwire", lab->tripwire_bait);
		cJSON_AddStringToObject(o, "tripwire_path",
		    lab->tripwire_path);
	}
	lab_decoys_bait_json(lab, o);
	if (lab->privileged_degraded != NULL)
		cJSON_AddStringToObject(j, "privileged_degraded",
		    lab->privileged_degraded);
	if (lab->host_seal != NULL)
		cJSON_AddStringToObject(j, "host_seal", lab->host_seal);
	if (lab->remote) {
		/* a remote engine (docs/engine.md): where, which clock, what
		 * the seal read back, and that no INPUT firewall was set */
		o = cJSON_AddObjectToObject(j, "engine");
		cJSON_AddStringToObject(o, "where", where);
		cJSON_AddTrueToObject(o, "remote");
		cJSON_AddStringToObject(j, "clock", lab->clock);
		cJSON_AddItemToObject(j, "seal", seal != NULL ?
		    cJSON_Duplicate(seal, true) : cJSON_CreateNull());
		cJSON_AddFalseToObject(j, "input_drop");
	}
	a = cJSON_AddArrayToObject(j, "chains");
	for (i = 0; i < lab->nchains; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(lab->chains[i]));
	cJSON_AddStringToObject(j, "ctl_path", lab->ctl_path);
	cJSON_AddStringToObject(j, "bus_path", lab->bus_path);
	cJSON_AddStringToObject(j, "dns_ip", lab->dns_ip);
	cJSON_AddStringToObject(j, "sink_ip", lab->sink_ip);
	txt = cJSON_Print(j);
	cJSON_Delete(j);
	if (txt == NULL)
		util_fatal("lab: cannot serialise lab.json");
	path = xasprintf("%s/lab.json", lab->run_dir);
	rc = util_write_file(path, txt, strlen(txt), 0644, e);
	free(path);
	free(txt);
	return rc;
}

/* The decoy bait ids of lab into o (lab.json's and lab.up's "bait"):
 * keys named as the kinds, each only when planted. */
void
lab_decoys_bait_json(const struct lab *lab, cJSON *o)
{
	if (lab->cloud_bait != NULL)
		cJSON_AddStringToObject(o, "cloud-credentials", lab->cloud_bait);
	if (lab->ssh_bait != NULL)
		cJSON_AddStringToObject(o, "ssh-key", lab->ssh_bait);
	if (lab->git_bait != NULL)
		cJSON_AddStringToObject(o, "git-credential", lab->git_bait);
	if (lab->mcp_bait != NULL)
		cJSON_AddStringToObject(o, "mcp-server", lab->mcp_bait);
}

/* RUN_DIR/variant.yaml: the dressing this run used (docs/variants.md;
 * variant_load reads it back).  -1 + e. */
static int
lab_write_variant(const struct lab *lab, struct errbuf *e)
{
	char *y = variant_to_yaml(lab->v), *path;
	int rc;

	path = xasprintf("%s/variant.yaml", lab->run_dir);
	rc = util_write_file(path, y, strlen(y), 0644, e);
	free(path);
	free(y);
	return rc;
}

/* Lab up without options (core.h). */
struct lab *
lab_up(struct docker *d, const struct policy *p, const char *run_dir,
    const char *run_id, uint64_t seed, struct errbuf *e)
{
	return lab_up_opts(d, p, run_dir, run_id, seed, NULL, e);
}

/*
 * Lab up (core.h): the plan (lab_plan), the image, the networks, the
 * roles (lab_roles_up), the gateway's answer, an idle agent's start,
 * lab.json.  On error everything labelled with the run is removed.
 */
struct lab *
lab_up_opts(struct docker *d, const struct policy *p, const char *run_dir,
    const char *run_id, uint64_t seed, const struct lab_options *o,
    struct errbuf *e)
{
	static const struct lab_options no_opts = { 0 };
	const struct variant *v;
	struct lab_build *b;
	struct lab *lab;
	uint64_t up_deadline = 0, old_deadline = 0;
	char rt_agent[LAB_RUNTIME_MAX], rt_default[LAB_RUNTIME_MAX];
	bool ok = false, rt_sandbox = false;

	if (o == NULL)
		o = &no_opts;
	/* A remote engine: what a lab there cannot have (a host path, the
	 * host kernel) is refused before anything is made; its bus, control
	 * and evidence folders are volumes.  A local one: host bind mounts,
	 * the bridges sealed before any container joins them. */
	if (docker_is_remote(d) && lab_remote_check_opts(p, o,
	    docker_where(d), e) == -1)
		return NULL;
	if (docker_require_labs(d, "lab up", e) == -1)
		return NULL;
	for (size_t i = 0; i < p->nflaws; i++)
		if (flaw_find(p->flaws[i]) == NULL) {
			errbuf_set(e, ERRBUF_INPUT, "%s: flaws[%zu]: unknown flaw "
			    "'%s' (known: %s)", p->path, i, p->flaws[i],
			    flaw_ids());
			return NULL;
		}
	/* The agent's runtime exists before anything is made. */
	if (lab_runtime_check(d, p, rt_agent, rt_default, &rt_sandbox,
	    e) == -1)
		return NULL;
	/* The dressing: a table row, generated from the seed, or a file. */
	v = variant_for_policy(p, seed, e);
	if (v == NULL)
		return NULL;
	if (docker_is_remote(d) && policy_bait_wanted(p, v,
	    VARIANT_BAIT_TRIPWIRE)) {
		/* the tripwire by its id (lab_remote_check knows the kind's
		 * name only) */
		errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): bait %s "
		    "(tripwire) needs " LAB_REMOTE_TRIPWIRE_NEEDS "; local "
		    "engine only", docker_where(d), v->bait_tripwire);
		variant_free(v);
		return NULL;
	}
	if (docker_is_remote(d) && lab_remote_variant_check(v,
	    docker_where(d), e) == -1) {
		variant_free(v);
		return NULL;
	}
	b = lab_build_new(d, p, run_dir, run_id, seed, o, v, e);
	if (b == NULL) {
		variant_free(v);
		return NULL;
	}
	lab = b->lab;
	/* A user's image is looked up before anything is made. */
	if (p->agent_kind == POLICY_AGENT_IMAGE) {
		if (agent_image_lookup(d, p, lab, e) == -1)
			goto out;
		/* tests: the name may move now (the image id holds) */
		util_test_hook("agent-image", NULL);
	}
	lab->runtime = xstrdup(rt_agent);
	lab->runtime_default = xstrdup(rt_default);
	lab->runtime_sandbox = rt_sandbox;
	if (lab_plan(b, e) == -1 || lab_image_ensure(d, &lab->image, e) == -1)
		goto out;
	/* From here on lab up is bounded (the import above has its own). */
	up_deadline = util_mono_ns() + LAB_UP_TIMEOUT_S * 1000000000ull;
	old_deadline = docker_set_deadline(d, up_deadline);
	if (lab_relay_up(b, e) == -1 || lab_specs_build(b, e) == -1 ||
	    lab_networks(d, lab, o, lab_agent_net_admin(b), &b->seal_record,
	    e) == -1 ||
	    lab_roles_up(b, e) == -1)
		goto out;
	/* (an idle agent was started with the roles: lab_role_make) */
	if (lab_wait_gateway(d, lab, lab->remote ? 30000 : 10000, e) == -1)
		goto out;
	if (lab_write_json(lab, p, docker_where(d), b->seal_record, e) == -1 ||
	    lab_write_variant(lab, e) == -1)
		goto out;
	ok = true;
out:
	if (up_deadline != 0) {
		(void)docker_set_deadline(d, old_deadline);
		if (!ok && util_mono_ns() >= up_deadline)
			errbuf_prefix(e, "lab up: over its time bound (%d s)",
			    LAB_UP_TIMEOUT_S);
	}
	lab_build_free(b);
	if (!ok) {
		/* Everything created so far goes (by label). */
		struct errbuf e2 = { 0 };

		(void)lab_teardown(d, run_id, &e2);
		lab_free(lab);
		lab = NULL;
	}
	return lab;
}

int
lab_start_agent(struct docker *d, struct lab *lab, struct errbuf *e)
{
	if (docker_container_start(d, lab->agent.id, e) == -1) {
		if (e != NULL && strstr(e->msg, "unable to apply caps") != NULL)
			return errbuf_prefix(e, "lab: start agent (the engine "
			    "itself lacks capabilities, e.g. it runs nested in "
			    "a container: flaws privileged + root-user cannot "
			    "start on it)");
		return errbuf_prefix(e, "lab: start agent");
	}
	return 0;
}

bool
lab_owns(const struct lab *lab, const char *id)
{
	struct lab_container *cs[LAB_NROLES];
	size_t i;

	if (lab == NULL || id == NULL)
		return false;
	lab_listed(lab, cs);
	for (i = 0; i < LAB_NROLES; i++)
		if (cs[i]->id != NULL && strcmp(cs[i]->id, id) == 0)
			return true;
	return false;
}

/* Threads of a teardown at most (a lab has 9 containers, and the
 * agent's siblings with flaw docker-socket). */
#define LAB_DOWN_THREADS 8

/*
 * A teardown (lab_remove_all), shared by its threads under mu: the
 * containers first, each network queued once every listed container
 * attached to it is gone (removed or given up on), so that the network
 * of a container that went early goes while the others still go.
 */
struct lab_down {
	size_t nc, nn;
	const char **cid;             /* [nc] container ids */
	const char ***cnets;          /* [nc] the network ids each is on */
	const char **nid;             /* [nn] network ids */
	size_t *pending;              /* [nn] containers still on each */
	size_t *queue, qlen, qnext;   /* items: < nc container, else network */
	size_t left;                  /* items not finished */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int removed, failed;
	struct errbuf last;           /* the last error */
};

/* Under mu: item k finished; queue the networks it freed. */
static void
lab_down_finished(struct lab_down *w, size_t k)
{
	size_t j, x;

	w->left--;
	if (k < w->nc)
		for (x = 0; w->cnets[k][x] != NULL; x++)
			for (j = 0; j < w->nn; j++)
				if (strcmp(w->nid[j], w->cnets[k][x]) == 0 &&
				    w->pending[j] > 0 && --w->pending[j] == 0)
					w->queue[w->qlen++] = w->nc + j;
	pthread_cond_broadcast(&w->cv);
}

/* A teardown thread: remove the next queued object through d (a
 * container with force: killed, not stopped), until every one is done. */
static void
lab_down_work(struct lab_down *w, struct docker *d)
{
	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct errbuf e = { 0 };
		size_t k;
		int rc;

		while (w->qnext == w->qlen && w->left > 0)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->left == 0)
			break;
		k = w->queue[w->qnext++];
		pthread_mutex_unlock(&w->mu);
		rc = k < w->nc ? docker_container_remove(d, w->cid[k], true,
		    &e) : docker_network_remove(d, w->nid[k - w->nc], &e);
		pthread_mutex_lock(&w->mu);
		if (rc == 0)
			w->removed++;
		else {
			w->failed++;
			w->last = e;
		}
		lab_down_finished(w, k);
	}
	pthread_mutex_unlock(&w->mu);
}

/* A teardown thread's body; arg: its struct lab_down_thread. */
struct lab_down_thread {
	struct lab_down *w;
	struct docker *d;
	pthread_t t;
};

static void *
lab_down_thread(void *arg)
{
	struct lab_down_thread *t = arg;

	lab_down_work(t->w, t->d);
	return NULL;
}

/* The "Id" strings of a GET /containers/json or /networks answer
 * (pointers into list), NULL-terminated; *n their count.  Caller frees
 * the array. */
static const char **
lab_down_ids(const cJSON *list, size_t *n)
{
	const char **ids = xcalloc((size_t)cJSON_GetArraySize(list) + 1,
	    sizeof *ids);
	const cJSON *it;

	*n = 0;
	cJSON_ArrayForEach(it, list) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "Id");

		/* the same test as lab_remove_all's loop (its indexes) */
		if (cJSON_IsString(id) && docker_id_valid(id->valuestring))
			ids[(*n)++] = id->valuestring;
	}
	return ids;
}

/*
 * Remove every container of cs and every network of ns (GET answers) in
 * parallel, up to LAB_DOWN_THREADS threads with a handle each (this one
 * too); a network only once the containers listed on it are done.
 * Returns once every thread is joined.  Adds to *removed and *failed;
 * the last error into e2.
 */
static void
lab_remove_all(struct docker *d, const cJSON *cs, const cJSON *ns,
    int *removed, int *failed, struct errbuf *e2)
{
	struct lab_down w = { 0 };
	struct lab_down_thread t[LAB_DOWN_THREADS];
	const cJSON *it;
	size_t k = 0, j, nt = 0;

	w.cid = lab_down_ids(cs, &w.nc);
	w.nid = lab_down_ids(ns, &w.nn);
	w.cnets = xcalloc(w.nc + 1, sizeof *w.cnets);
	w.pending = xcalloc(w.nn + 1, sizeof *w.pending);
	w.queue = xcalloc(w.nc + w.nn + 1, sizeof *w.queue);
	cJSON_ArrayForEach(it, cs) {
		const cJSON *nets = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(it, "NetworkSettings"),
		    "Networks"), *n;
		size_t x = 0;

		if (!docker_id_valid(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "Id"))))
			continue;
		w.cnets[k] = xcalloc((size_t)cJSON_GetArraySize(nets) + 1,
		    sizeof **w.cnets);
		cJSON_ArrayForEach(n, nets) {
			const char *nid = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(n, "NetworkID"));

			if (nid == NULL)
				continue;
			w.cnets[k][x++] = nid;
			for (j = 0; j < w.nn; j++)
				if (strcmp(w.nid[j], nid) == 0)
					w.pending[j]++;
		}
		w.queue[w.qlen++] = k++;
	}
	for (j = 0; j < w.nn; j++)
		if (w.pending[j] == 0)
			w.queue[w.qlen++] = w.nc + j;
	w.left = w.nc + w.nn;
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	for (k = 0; k + 1 < w.left && k + 1 < LAB_DOWN_THREADS; k++) {
		t[nt].w = &w;
		t[nt].d = docker_clone(d);
		if (pthread_create(&t[nt].t, NULL, lab_down_thread,
		    &t[nt]) != 0) {
			docker_close(t[nt].d);
			break;
		}
		nt++;
	}
	lab_down_work(&w, d);     /* this thread too; and all of it if alone */
	for (k = 0; k < nt; k++) {
		pthread_join(t[k].t, NULL);
		docker_close(t[k].d);
	}
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	*removed += w.removed;
	*failed += w.failed;
	if (w.failed > 0)
		*e2 = w.last;
	for (k = 0; k < w.nc; k++)
		free(w.cnets[k]);
	free(w.cnets);
	free(w.pending);
	free(w.queue);
	free(w.cid);
	free(w.nid);
}

int
lab_teardown(struct docker *d, const char *run_id, struct errbuf *e)
{
	char *label = xasprintf("ares.run=%s", run_id);
	cJSON *list, *nets;
	int removed = 0, failed = 0;
	struct errbuf e2 = { 0 };

	list = docker_containers_by_label(d, label, e);
	if (list == NULL) {
		/* No engine: still take the rules of the bridges that never
		 * came to be (lab up failed before them); a bridge that
		 * exists keeps its rules until gc removes its network. */
		free(label);
		(void)hostfw_unseal(run_id, NULL);
		return -1;
	}
	nets = docker_networks_by_label(d, label, e);
	free(label);
	if (nets == NULL) {
		cJSON_Delete(list);
		(void)hostfw_unseal(run_id, NULL);
		return -1;
	}
	/* the containers, and each network once those on it are gone */
	lab_remove_all(d, list, nets, &removed, &failed, &e2);
	cJSON_Delete(list);
	cJSON_Delete(nets);
	/* A remote run's named volumes (the agent's home and script), once
	 * the containers that mount them are gone; a local run has none. */
	if (docker_is_remote(d)) {
		char *vl = xasprintf("ares.run=%s", run_id);
		cJSON *vols = docker_volumes_by_label(d, vl, &e2), *v;

		free(vl);
		if (vols == NULL)
			failed++;
		cJSON_ArrayForEach(v, vols) {
			const char *nm = util_json_str(v, "Name", NULL);

			if (nm == NULL)
				continue;
			if (docker_volume_remove(d, nm, true, &e2) == 0)
				removed++;
			else
				failed++;
		}
		cJSON_Delete(vols);
	}
	/* After the bridges are gone: the rules that sealed them. */
	if (hostfw_unseal(run_id, &e2) == -1)
		failed++;
	{
		/* The short socket dir of a run with a deep run dir. */
		char *sd = xasprintf("/tmp/ares-%s", run_id);
		struct stat sb;

		if (lstat(sd, &sb) == 0 && S_ISDIR(sb.st_mode))
			(void)util_rm_rf(sd, &e2);
		free(sd);
	}
	if (failed > 0)
		return errbuf_set(e, ERRBUF_INTERNAL, "lab teardown of run %s: "
		    "%d object(s) could not be removed (last error: %s)",
		    run_id, failed, e2.msg);
	return removed;
}

void
lab_free(struct lab *lab)
{
	struct lab_container *cs[LAB_NROLES];
	size_t i;

	if (lab == NULL)
		return;
	lab_listed(lab, cs);
	for (i = 0; i < LAB_NROLES; i++) {
		free(cs[i]->id);
		free(cs[i]->name);
	}
	free(lab->run_id);
	free(lab->run_dir);
	free(lab->image);
	free(lab->net_lab);
	free(lab->net_upstream);
	free(lab->bus_path);
	free(lab->ctl_path);
	if (lab->agent_key != NULL)
		sodium_memzero(lab->agent_key, strlen(lab->agent_key));
	free(lab->agent_key);
	if (lab->decoy_token != NULL)
		sodium_memzero(lab->decoy_token, strlen(lab->decoy_token));
	free(lab->decoy_token);
	free(lab->bait_name);
	free(lab->model_name);
	free(lab->net_wan);
	relay_stop(lab->relay);
	lab->relay = NULL;
	free(lab->relay_path);
	free(lab->variant);
	variant_free(lab->v);
	free(lab->evidence_dir);
	free(lab->dns_ip);
	free(lab->sink_ip);
	free(lab->credential_bait);
	free(lab->instruction_bait);
	free(lab->tripwire_bait);
	free(lab->tripwire_path);
	free(lab->privileged_degraded);
	free(lab->host_seal);
	free(lab->lease_path);
	free(lab->agent_image_id);
	free(lab->agent_image_digests);
	free(lab->agent_helper);
	free(lab->runtime);
	free(lab->runtime_default);
	if (lab->hostsim_token != NULL)
		sodium_memzero(lab->hostsim_token, strlen(lab->hostsim_token));
	free(lab->hostsim_token);
	if (lab->hostsim_shm_token != NULL)
		sodium_memzero(lab->hostsim_shm_token,
		    strlen(lab->hostsim_shm_token));
	free(lab->hostsim_shm_token);
	free(lab->cloud_bait);
	free(lab->ssh_bait);
	free(lab->git_bait);
	free(lab->mcp_bait);
	{
		char *zs[] = { lab->cloud_key_id, lab->cloud_secret,
		    lab->git_token, lab->ssh_pubkey };

		for (size_t z = 0; z < sizeof zs / sizeof zs[0]; z++) {
			if (zs[z] != NULL)
				sodium_memzero(zs[z], strlen(zs[z]));
			free(zs[z]);
		}
	}
	for (i = 0; i < lab->nchains; i++)
		free(lab->chains[i]);
	for (i = 0; i < lab->nbus_srcs; i++) {
		free(lab->bus_srcs[i].id);
		free(lab->bus_srcs[i].src);
		sodium_free(lab->bus_srcs[i].key);   /* zeroes it */
	}
	free(lab);
}

/* What one sensor's /evidence/c may hold: its chain and its rotated
 * ones, each within its budget and the final "truncated" line. */
#define LAB_PULL_ENTRIES 64
#define LAB_PULL_FILE    ((size_t)LAB_GATEWAY_CHAIN_BYTES + (1u << 20))
#define LAB_PULL_TOTAL   ((size_t)4 * LAB_PULL_FILE)

/* The chains of a remote lab out of its sensors' volumes (internal.h). */
int
lab_evidence_pull(struct docker *d, struct lab *lab, struct errbuf *e)
{
	static const struct archive_limits lim = { LAB_PULL_ENTRIES,
	    LAB_PULL_FILE, LAB_PULL_TOTAL };
	size_t i;
	int rc = 0;

	if (lab == NULL || !lab->remote)
		return 0;
	lab->pulled_files = lab->pulled_bytes = 0;
	if (util_mkdir_p(lab->evidence_dir, 0755, e) == -1)
		return -1;
	for (i = 0; i < lab->nbus_srcs; i++) {
		const struct lab_bus_src *bs = &lab->bus_srcs[i];
		struct archive_stats st;
		struct errbuf e2 = { 0 };
		size_t len;
		char *tar;

		if (bs->id == NULL) {   /* never created */
			if (rc == 0)
				rc = errbuf_set(e, ERRBUF_INTERNAL, "evidence "
				    "pull: sensor %s was never created", bs->src);
			continue;
		}
		tar = docker_archive_get(d, bs->id, "/evidence/c",
		    LAB_PULL_TOTAL + (1u << 20), &len, &e2);
		/* a key the sensor never read stays out of RUN_DIR */
		if (tar != NULL && lab_tar_names(tar, len, "c/" LAB_BUS_KEY_NAME))
			errbuf_set(&e2, ERRBUF_INTERNAL, "its folder still holds "
			    LAB_BUS_KEY_NAME " (the sensor never read its key: it "
			    "did not start); nothing of it pulled");
		if (tar == NULL || e2.code != 0 || archive_extract(tar, len,
		    lab->evidence_dir, 1, &lim, &st, &e2) == -1) {
			if (rc == 0)
				rc = errbuf_set(e, e2.code != 0 ? e2.code :
				    ERRBUF_INTERNAL, "evidence pull: sensor %s: %s",
				    bs->src, e2.msg);
		} else {
			lab->pulled_files += st.files;
			lab->pulled_bytes += st.bytes;
		}
		free(tar);
	}
	return rc;
}
