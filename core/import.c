/*
 * import.c - ares policy import: the containment of a Compose service (or
 * of a container, from its inspect) as an ares policy (docs/import.md).
 *
 * Every key of the service becomes one row of the mapping table: the key
 * path and its value as written, what it maps to (a flaw, an agent field,
 * the runtime), whether it widens the agent's access beyond the lab's
 * sealed default and whether the lab reproduces it, and its span in the
 * file (so the fix loop can remove exactly that entry).  The service keys
 * are one const table of descriptors (key, handler, note, widening) like
 * the policy loader's; the handlers share the per-access mappers
 * (map_cap, map_bind, map_env, map_user, ...) with --container, which
 * feeds them the inspect's fields.
 *
 * Compose interpolation: ${VAR:-x} and ${VAR-x} take x, $$ is a '$'; a
 * bare ${VAR} or $VAR is left unresolved and noted (the caller's
 * environment is never read into a policy).  A credential in the
 * environment maps to flaw real-key and its value is never copied: the
 * table prints <redacted>, the policy does not name it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define IMPORT_MAX_ROWS      512
#define IMPORT_MAX_SERVICES  256
#define IMPORT_VALUE_MAX     96      /* a row's value as shown */
#define IMPORT_KEY_MAX       200

/* ------------------------------------------------------------------ */
/* State of one import                                                 */
/* ------------------------------------------------------------------ */

struct span {
	size_t line, col, end_line;
};

struct imp {
	const char *file;               /* errors: the compose path */
	const struct cnode *root, *svc;
	const char *service;
	const struct import_opts *o;
	struct import_result *r;
	struct errbuf *e;
	size_t rows_cap;
	/* what the policy gets */
	const char *flaws[POLICY_MAX_FLAWS];
	size_t nflaws;
	char *image;
	char *entry[POLICY_AGENT_ARGV_MAX];
	size_t nentry;
	bool has_entry;
	char *cmd[POLICY_AGENT_ARGV_MAX];
	size_t ncmd;
	bool has_cmd;
	char *env[POLICY_AGENT_ENV_MAX];   /* "NAME=value" */
	size_t nenv;
	char *user;
	char *workdir;
	char *runtime;
	bool saw_read_only, saw_net, saw_user;
	struct import_row *image_row;      /* to mark when the image is unusable */
	/* interpolation of the scalars read since the last row: UNRES_* */
	unsigned pend;
	unsigned char unres_of[IMPORT_MAX_ROWS];   /* per row: UNRES_* */
};

#define DEFAULT_NOTE "default taken; .env or the environment may " \
	"override it at docker compose time"
#define UNRES_BARE     1u   /* ${VAR}, $VAR, ${VAR:?err}: kept as written */
#define UNRES_DEFAULT  2u   /* ${VAR:-x}, ${VAR-x}: the default taken */

/* Whether the agent the policy will run is the service's image. */
static bool
agent_is_image(const struct imp *m)
{
	return m->o == NULL || m->o->agent == NULL ||
	    strcmp(m->o->agent, "image") == 0;
}

/* A value for a row: one line, terminal-safe, cut at IMPORT_VALUE_MAX. */
static char *
one_line(const char *s)
{
	char out[IMPORT_VALUE_MAX + 8];
	size_t len = strlen(s), n = len > IMPORT_VALUE_MAX ? IMPORT_VALUE_MAX :
	    len;

	util_sanitize(out, IMPORT_VALUE_MAX + 1, s, n, false);
	if (len > IMPORT_VALUE_MAX)
		strcat(out, "...");
	return xstrdup(out);
}

/* Add a row: key path, value (rendered one line), span.  Returns it, or
 * NULL + e past IMPORT_MAX_ROWS. */
static struct import_row *
row_add(struct imp *m, const char *key, const char *value,
    const struct span *sp)
{
	struct import_row *w;

	if (m->r->nrows >= IMPORT_MAX_ROWS) {
		compose_err(m->e, m->file, sp ? sp->line : 0, sp ? sp->col : 0,
		    key, "more than %d keys to map", IMPORT_MAX_ROWS);
		return NULL;
	}
	if (m->r->nrows == m->rows_cap) {
		m->rows_cap = m->rows_cap ? m->rows_cap * 2 : 32;
		m->r->rows = xrealloc(m->r->rows, m->rows_cap *
		    sizeof *m->r->rows);
	}
	m->unres_of[m->r->nrows] = (unsigned char)m->pend;
	m->pend = 0;
	w = &m->r->rows[m->r->nrows++];
	memset(w, 0, sizeof *w);
	w->key = one_line(key);
	w->value = one_line(value ? value : "");
	if (sp != NULL) {
		w->line = sp->line;
		w->col = sp->col;
		w->end_line = sp->end_line;
	}
	w->reproduced = true;
	return w;
}

/* Set a row's note (printf). */
static void
row_note(struct import_row *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
row_note(struct import_row *w, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (w->note == NULL) {
		w->note = xstrdup(buf);
	} else {
		char *n = xasprintf("%s; %s", w->note, buf);

		free(w->note);
		w->note = n;
	}
}

/* Switch flaw id on in the policy (once). */
static void
flaw_on(struct imp *m, const char *id)
{
	size_t i;

	for (i = 0; i < m->nflaws; i++)
		if (strcmp(m->flaws[i], id) == 0)
			return;
	if (m->nflaws < POLICY_MAX_FLAWS)
		m->flaws[m->nflaws++] = id;
}

/* The row maps to flaw id: widening, reproduced. */
static void
row_flaw(struct imp *m, struct import_row *w, const char *id)
{
	const struct flaw *f = flaw_find(id);

	free(w->maps_to);
	w->maps_to = xasprintf("flaw %s", id);
	w->flaw = f != NULL ? f->id : id;
	w->widening = true;
	w->reproduced = true;
	flaw_on(m, w->flaw);
}

/* The row maps to a field of the policy (agent.image, runtime...). */
static void
row_field(struct import_row *w, const char *field)
{
	free(w->maps_to);
	w->maps_to = xstrdup(field);
	w->reproduced = true;
}

/* The row keeps its flaw as a lower bound of the access, but the lab
 * builds less than it grants: not reproduced (the gate counts it as
 * unchecked), widening, why in the note. */
static void
row_partly(struct import_row *w, const char *why)
{
	w->reproduced = false;
	w->widening = true;
	row_note(w, "reproduced only in part: %s", why);
}

/* The note of privileged: true. */
#define PRIV_PART "the lab's privileged withholds SYS_ADMIN and the other " \
	"capabilities that reach the host, and every host device " \
	"(docs/flaws.md); flaw privileged is only its lower bound"

/* Not reproduced: why (widening or not). */
static void
row_not(struct import_row *w, bool widening, const char *why)
{
	w->reproduced = false;
	w->widening = widening;
	row_note(w, "%s", why);
}

/* ------------------------------------------------------------------ */
/* Interpolation and small parsers                                     */
/* ------------------------------------------------------------------ */

/*
 * Compose interpolation of s: "$$" -> "$", "${VAR:-x}" / "${VAR-x}" ->
 * x and *defaulted set (docker compose takes VAR from .env or the
 * environment first), "${VAR}", "${VAR:?msg}", "$VAR" kept as written
 * and *unresolved set (never read from the environment).  Caller frees.
 */
static char *
interp(const char *s, bool *unresolved, bool *defaulted)
{
	struct util_buf b;
	const char *p = s, *close;

	*unresolved = false;
	*defaulted = false;
	util_buf_init(&b, strlen(s) + 1);
	while (*p != '\0') {
		if (p[0] != '$') {
			util_buf_printf(&b, "%c", *p++);
			continue;
		}
		if (p[1] == '$') {
			util_buf_printf(&b, "$");
			p += 2;
			continue;
		}
		if (p[1] == '{' && (close = strchr(p, '}')) != NULL) {
			const char *name = p + 2, *q = name;

			while (q < close && (q[0] == '_' ||
			    (q[0] >= 'A' && q[0] <= 'Z') ||
			    (q[0] >= 'a' && q[0] <= 'z') ||
			    (q[0] >= '0' && q[0] <= '9')))
				q++;
			if (q < close && (strncmp(q, ":-", 2) == 0 ||
			    q[0] == '-')) {
				q += q[0] == ':' ? 2 : 1;
				util_buf_printf(&b, "%.*s", (int)(close - q), q);
				*defaulted = true;
			} else {
				util_buf_printf(&b, "%.*s", (int)(close - p + 1),
				    p);
				*unresolved = true;
			}
			p = close + 1;
			continue;
		}
		if (p[1] == '_' || (p[1] >= 'A' && p[1] <= 'Z') ||
		    (p[1] >= 'a' && p[1] <= 'z'))
			*unresolved = true;
		util_buf_printf(&b, "%c", *p++);
	}
	return b.s;
}

/* A YAML boolean as Compose takes it.  1 true, 0 false, -1 neither. */
static int
parse_bool(const char *s)
{
	static const char *const t[] = { "true", "yes", "on", NULL };
	static const char *const f[] = { "false", "no", "off", NULL };
	size_t i;

	for (i = 0; t[i] != NULL; i++)
		if (strcasecmp(s, t[i]) == 0)
			return 1;
	for (i = 0; f[i] != NULL; i++)
		if (strcasecmp(s, f[i]) == 0)
			return 0;
	return -1;
}

/* Split a command string like Compose does (shell words: blanks,
 * '...', "...", backslash).  At most max words into out (malloc'd);
 * returns the count, or -1 (unbalanced quote, too many words). */
static int
shell_split(const char *s, char **out, size_t max)
{
	struct util_buf w;
	size_t n = 0;
	bool in_word = false;
	char q = 0;

	util_buf_init(&w, strlen(s) + 1);
	for (;; s++) {
		char c = *s;

		if (c == '\0' || (!q && (c == ' ' || c == '\t' || c == '\n'))) {
			if (q && c == '\0')
				goto fail;
			if (in_word) {
				if (n >= max)
					goto fail;
				out[n++] = xstrdup(w.s);
				w.len = 0;
				w.s[0] = '\0';
				in_word = false;
			}
			if (c == '\0')
				break;
			continue;
		}
		in_word = true;
		if (q == 0 && (c == '\'' || c == '"')) {
			q = c;
		} else if (q != 0 && c == q) {
			q = 0;
		} else if (c == '\\' && q != '\'' && s[1] != '\0') {
			s++;
			util_buf_printf(&w, "%c", *s);
		} else {
			util_buf_printf(&w, "%c", c);
		}
	}
	free(w.s);
	return (int)n;
fail:
	while (n > 0)
		free(out[--n]);
	free(w.s);
	return -1;
}

/* Whether s ends with suffix. */
static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Whether the name of an environment variable says it holds a secret. */
static bool
cred_name(const char *name)
{
	static const char *const suffix[] = { "_KEY", "_TOKEN", "_SECRET",
	    "_PASSWORD", "_PASSWD", "_PASS", "_PAT", "_CREDENTIALS", NULL };
	static const char *const word[] = { "PASSWORD", "PASSWD", "SECRET",
	    "TOKEN", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY",
	    "CREDENTIAL", NULL };
	char up[160];
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < sizeof up; i++)
		up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 :
		    name[i]);
	up[i] = '\0';
	for (i = 0; suffix[i] != NULL; i++)
		if (ends_with(up, suffix[i]))
			return true;
	for (i = 0; word[i] != NULL; i++)
		if (strstr(up, word[i]) != NULL)
			return true;
	return false;
}

/* Whether a value looks like a credential (known key formats). */
static bool
cred_value(const char *v)
{
	static const char *const prefix[] = { "sk-", "sk_live_", "sk_test_",
	    "rk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	    "glpat-", "AKIA", "ASIA", "xoxb-", "xoxp-", "xoxa-", "xapp-",
	    "AIza", "hf_", "npm_", "-----BEGIN", NULL };
	static const char *const hook[] = { "hooks.slack.com/services/",
	    "discord.com/api/webhooks/", "discordapp.com/api/webhooks/",
	    NULL };
	const char *a, *end, *at, *colon;
	size_t i;

	for (i = 0; prefix[i] != NULL; i++)
		if (strncmp(v, prefix[i], strlen(prefix[i])) == 0 &&
		    strlen(v) >= strlen(prefix[i]) + 8)
			return true;
	/* an Authorization header's value */
	if ((strncasecmp(v, "Bearer ", 7) == 0 ||
	    strncasecmp(v, "Basic ", 6) == 0) && strlen(v) >= 10)
		return true;
	/* a webhook URL is its own secret */
	for (i = 0; hook[i] != NULL; i++)
		if (strstr(v, hook[i]) != NULL)
			return true;
	/* URL user-info, scheme://user:pass@host (a DSN, a *_URL) */
	for (a = strstr(v, "://"); a != NULL; a = strstr(a, "://")) {
		a += 3;
		end = a + strcspn(a, "/?# ");
		at = NULL;
		for (const char *q = a; q < end; q++)
			if (*q == '@')
				at = q;
		if (at == NULL)
			continue;
		colon = memchr(a, ':', (size_t)(at - a));
		if (colon != NULL && colon + 1 < at)
			return true;
	}
	return false;
}

/* Whether argv word w is an option whose value is a credential: "--token"
 * (the value is the next word) gives 1, "--token=VALUE" gives 2, other
 * words 0. */
static int
cred_flag(const char *w)
{
	static const char *const flag[] = { "--token", "--key", "--password",
	    "--secret", "--api-key", "--api-token", "--access-token",
	    "--auth-token", "--passwd", NULL };
	size_t i, n;

	for (i = 0; flag[i] != NULL; i++) {
		n = strlen(flag[i]);
		if (strncasecmp(w, flag[i], n) == 0 && w[n] == '\0')
			return 1;
		if (strncasecmp(w, flag[i], n) == 0 && w[n] == '=')
			return 2;
	}
	return 0;
}

/* An environment variable name the policy takes: [A-Z_][A-Z0-9_]*, at
 * most 128 bytes. */
static bool
str_is_env_name(const char *s)
{
	size_t i;

	if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9') || strlen(s) > 128)
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* Text without control characters (C0, DEL, C1). */
static bool
str_is_text(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c == 0xC2 && (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] < 0xA0)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* The per-access mappers (Compose and --container alike)              */
/* ------------------------------------------------------------------ */

/* Capabilities that stay inside the container's network namespace: the
 * lab's flaw extra-caps.  Every other known one maps to privileged. */
static const char *const caps_known[] = {
	"ALL", "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND",
	"BPF", "CHECKPOINT_RESTORE", "CHOWN", "DAC_OVERRIDE",
	"DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER",
	"KILL", "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE",
	"MKNOD", "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW",
	"PERFMON", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYSLOG",
	"SYS_ADMIN", "SYS_BOOT", "SYS_CHROOT", "SYS_MODULE", "SYS_NICE",
	"SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME",
	"SYS_TTY_CONFIG", "WAKE_ALARM", NULL,
};

/* The capabilities the lab's privileged withholds (docs/flaws.md):
 * added by a service, they are reproduced only in part. */
static const char *const caps_withheld[] = {
	"ALL", "AUDIT_CONTROL", "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE",
	"DAC_READ_SEARCH", "MAC_ADMIN", "MAC_OVERRIDE", "PERFMON",
	"SYSLOG", "SYS_ADMIN", "SYS_BOOT", "SYS_MODULE", "SYS_NICE",
	"SYS_PTRACE", "SYS_RAWIO", "SYS_TIME", "WAKE_ALARM", NULL,
};

/* One added capability (as written, "CAP_" optional, any case). */
static int
map_cap(struct imp *m, const char *key, const char *cap,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, cap, sp);
	char up[40];
	const char *c = cap;
	size_t i;

	if (w == NULL)
		return -1;
	if (strncasecmp(c, "CAP_", 4) == 0)
		c += 4;
	for (i = 0; c[i] != '\0' && i + 1 < sizeof up; i++)
		up[i] = (char)(c[i] >= 'a' && c[i] <= 'z' ? c[i] - 32 : c[i]);
	up[i] = '\0';
	if (strcmp(up, "NET_ADMIN") == 0 || strcmp(up, "NET_RAW") == 0) {
		row_flaw(m, w, "extra-caps");
		row_note(w, "the lab adds NET_ADMIN and NET_RAW");
		return 0;
	}
	for (i = 0; caps_known[i] != NULL; i++)
		if (strcmp(up, caps_known[i]) == 0)
			break;
	if (caps_known[i] == NULL) {
		row_not(w, true, "not a capability ares knows");
		return 0;
	}
	row_flaw(m, w, "privileged");
	for (i = 0; caps_withheld[i] != NULL; i++)
		if (strcmp(up, caps_withheld[i]) == 0) {
			row_partly(w, "the lab's privileged withholds this "
			    "capability (it reaches the host: docs/flaws.md); "
			    "flaw privileged is only its lower bound");
			return 0;
		}
	row_note(w, "wider than NET_ADMIN/NET_RAW: the lab's widest set, "
	    "every capability that stays inside the container (never "
	    "SYS_ADMIN and the others that reach the host: docs/security.md)");
	return 0;
}

/* Whether a host path names an engine's socket (or the folder that
 * holds it). */
static bool
path_is_socket(const char *p)
{
	return ends_with(p, "docker.sock") || ends_with(p, "podman.sock") ||
	    ends_with(p, "containerd.sock") || strcmp(p, "/var/run") == 0 ||
	    strcmp(p, "/run") == 0 || strcmp(p, "/var/run/docker") == 0 ||
	    strcmp(p, "/run/podman") == 0 || strcmp(p, "/run/docker") == 0;
}

/* Whether a host path names a key or credential file (or its folder). */
static bool
path_is_key(const char *p)
{
	static const char *const part[] = { "/.ssh", ".ssh/", "/.aws",
	    ".aws/", "/.gnupg", ".gnupg/", "/.kube", ".kube/",
	    ".docker/config.json", "credentials", "/etc/ssl/private",
	    ".git-credentials", ".netrc", "/id_rsa", "/id_ed25519",
	    "/id_ecdsa", "/id_dsa", "/.config/gcloud", "/.azure", NULL };
	static const char *const suffix[] = { ".pem", ".key", ".p12", ".pfx",
	    ".ssh", ".aws", ".gnupg", ".kube", NULL };
	const char *base = strrchr(p, '/');
	size_t i;

	base = base ? base + 1 : p;
	if (strncmp(base, "id_rsa", 6) == 0 ||
	    strncmp(base, "id_ed25519", 10) == 0 ||
	    strncmp(base, "id_ecdsa", 8) == 0)
		return true;
	for (i = 0; part[i] != NULL; i++)
		if (strstr(p, part[i]) != NULL)
			return true;
	for (i = 0; suffix[i] != NULL; i++)
		if (ends_with(p, suffix[i]))
			return true;
	return false;
}

/*
 * One mount.  type: "bind", "volume", "tmpfs", "npipe", ... ; src the host
 * path of a bind (interpolated); dst the target; ro read-only.
 */
static int
map_bind(struct imp *m, const char *key, const char *value, const char *type,
    const char *src, const char *dst, bool ro, const struct span *sp)
{
	struct import_row *w = row_add(m, key, value, sp);
	char clean[4096];
	size_t n;

	if (w == NULL)
		return -1;
	if (strcmp(type, "volume") == 0) {
		row_note(w, "a named or anonymous volume: the engine's own "
		    "data, no host path");
		return 0;
	}
	if (strcmp(type, "tmpfs") == 0) {
		row_note(w, "a tmpfs inside the container");
		return 0;
	}
	if (strcmp(type, "bind") != 0) {
		row_not(w, true, "a mount type the lab does not make");
		return 0;
	}
	snprintf(clean, sizeof clean, "%s", src != NULL ? src : "");
	n = strlen(clean);
	while (n > 1 && clean[n - 1] == '/')
		clean[--n] = '\0';
	if (path_is_socket(clean)) {
		row_flaw(m, w, "docker-socket");
		row_note(w, "the engine's socket%s: the lab mounts a filtered "
		    "Docker socket at /var/run", ro ? " (a read-only mount "
		    "still lets a client connect)" : "");
		return 0;
	}
	if (path_is_key(clean)) {
		row_flaw(m, w, "control-keys");
		row_note(w, "key or credential files from the host: the lab "
		    "plants decoy keys read-only at %s", FLAW_MOUNT_CONTROL_KEYS);
		if (!ro)
			row_partly(w, "a read-write mount: writing to the "
			    "host is not reproduced");
		return 0;
	}
	row_flaw(m, w, "host-mount");
	row_note(w, "a host path%s: the lab mounts a decoy host tree "
	    "read-only at %s", strcmp(clean, "/") == 0 ? " (the host's "
	    "whole root)" : "", FLAW_MOUNT_HOST);
	if (strcmp(clean, "/") == 0)
		row_partly(w, "the host's whole root is not reproduced");
	if (!ro)
		row_partly(w, "a read-write mount: writing to the host is "
		    "not reproduced");
	if (!ro && dst != NULL && dst[0] == '\0')
		row_note(w, "no target");
	return 0;
}

/* One environment variable: name, value (NULL: taken from the caller's
 * environment at run time), unresolved (${VAR} in it). */
static int
map_env(struct imp *m, const char *key, const char *name, const char *value,
    bool unresolved, const struct span *sp)
{
	struct import_row *w;
	bool cred = cred_name(name) || (value != NULL && cred_value(value));
	char *shown;

	shown = cred ? xasprintf("%s=<redacted>", name) : value != NULL ?
	    xasprintf("%s=%s", name, value) : xstrdup(name);
	w = row_add(m, key, shown, sp);
	free(shown);
	if (w == NULL)
		return -1;
	if (cred) {
		row_flaw(m, w, "real-key");
		row_note(w, "a credential in the agent's environment: the lab "
		    "hands the agent the real model key; the value is never "
		    "copied%s", value == NULL || unresolved ? " (it comes from "
		    "the caller's environment, never read)" : "");
		return 0;
	}
	w->maps_to = xasprintf("agent.env.%s", name);
	if (!agent_is_image(m)) {
		row_not(w, false, "the agent is not the service's image");
		return 0;
	}
	if (value == NULL || unresolved) {
		row_not(w, false, "unresolved: the value comes from the "
		    "caller's environment, which is never read");
		return 0;
	}
	if (str_is_env_name(name) == false) {
		row_not(w, false, "the policy takes names of A-Z, 0-9 and _ only");
		return 0;
	}
	if (agent_image_env_owned(name)) {
		row_not(w, false, "ares sets this variable itself");
		return 0;
	}
	if (strlen(value) > AGENT_IMAGE_ARG_MAX || !str_is_text(value)) {
		row_not(w, false, "the value has control characters or is "
		    "too long");
		return 0;
	}
	if (m->nenv >= POLICY_AGENT_ENV_MAX) {
		row_not(w, false, "more than 32 variables");
		return 0;
	}
	m->env[m->nenv++] = xasprintf("%s=%s", name, value);
	return 0;
}

/* user: root (0, root, 0:0, root:x) is flaw root-user; a numeric
 * non-root uid[:gid] is agent.user; a name is not reproduced. */
static int
map_user(struct imp *m, const char *key, const char *user, bool unresolved,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, user, sp);
	size_t ulen = strcspn(user, ":");

	if (w == NULL)
		return -1;
	m->saw_user = true;
	if (unresolved) {
		row_not(w, false, "unresolved: the caller's environment is "
		    "never read");
		return 0;
	}
	if ((ulen == 1 && user[0] == '0') || (ulen == 4 &&
	    strncmp(user, "root", 4) == 0)) {
		row_flaw(m, w, "root-user");
		row_note(w, "uid 0: the lab runs the agent as 0:0");
		return 0;
	}
	w->maps_to = xstrdup("agent.user");
	if (!agent_is_image(m)) {
		row_not(w, false, "the agent is not the service's image; it "
		    "runs as 65532");
		return 0;
	}
	if (agent_image_check("user", user) != NULL) {
		row_not(w, false, "a user name or an unusual uid: the policy "
		    "takes a numeric non-root uid[:gid]; the agent runs as 65532");
		return 0;
	}
	free(m->user);
	m->user = xstrdup(user);
	return 0;
}

/* One security option ("seccomp=unconfined", "seccomp:unconfined",
 * "apparmor=unconfined", "no-new-privileges[:true|false]", ...). */
static int
map_secopt(struct imp *m, const char *key, const char *opt,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, opt, sp);
	char name[64], val[256];
	size_t k = strcspn(opt, "=:");

	if (w == NULL)
		return -1;
	snprintf(name, sizeof name, "%.*s", (int)(k < 63 ? k : 63), opt);
	snprintf(val, sizeof val, "%s", opt[k] ? opt + k + 1 : "");
	if (strcmp(name, "seccomp") == 0 && strcmp(val, "unconfined") == 0) {
		row_flaw(m, w, "seccomp-unconfined");
		return 0;
	}
	if (strcmp(name, "seccomp") == 0) {
		row_not(w, true, "a custom seccomp profile: the lab keeps the "
		    "engine's default one");
		return 0;
	}
	if (strcmp(name, "apparmor") == 0) {
		if (strcmp(val, "unconfined") == 0)
			row_not(w, true, "this engine host has no AppArmor; the "
			    "lab keeps seccomp, no capabilities and "
			    "no-new-privileges");
		else
			row_not(w, false, "an AppArmor profile: this engine "
			    "host has no AppArmor");
		return 0;
	}
	if (strcmp(name, "no-new-privileges") == 0) {
		if (strcmp(val, "false") == 0)
			row_not(w, true, "setuid programs may gain privileges; "
			    "the lab always sets no-new-privileges");
		else
			row_note(w, "the lab sets no-new-privileges too");
		return 0;
	}
	if (strcmp(name, "label") == 0) {
		row_not(w, strcmp(val, "disable") == 0, "SELinux labels: this "
		    "engine host has no SELinux");
		return 0;
	}
	row_not(w, true, "a security option ares does not know");
	return 0;
}

/* One sysctl name=value. */
static int
map_sysctl(struct imp *m, const char *key, const char *name,
    const char *value, const struct span *sp)
{
	static const char *const ns[] = { "net.", "kernel.shm", "kernel.msg",
	    "kernel.sem", "fs.mqueue.", NULL };
	char *shown = xasprintf("%s=%s", name, value);
	struct import_row *w = row_add(m, key, shown, sp);
	size_t i;

	free(shown);
	if (w == NULL)
		return -1;
	for (i = 0; ns[i] != NULL; i++)
		if (strncmp(name, ns[i], strlen(ns[i])) == 0) {
			row_note(w, "namespaced: it stays inside the "
			    "container");
			return 0;
		}
	row_not(w, true, "not namespaced: it would change the host's kernel");
	return 0;
}

/* runtime: runsc -> policy runtime; runc -> the engine's default. */
static int
map_runtime(struct imp *m, const char *key, const char *rt,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, rt, sp);

	if (w == NULL)
		return -1;
	if (strcmp(rt, "runc") == 0 || rt[0] == '\0') {
		row_note(w, "the engine's default runtime");
		return 0;
	}
	if (strcmp(rt, "runsc") == 0) {
		row_field(w, "runtime");
		free(m->runtime);
		m->runtime = xstrdup(rt);
		return 0;
	}
	row_not(w, true, "the lab runs runc or runsc only");
	return 0;
}

/* pid / ipc: "host" is the flaw; a private namespace is no change. */
static int
map_ns(struct imp *m, const char *key, const char *what, const char *v,
    const char *flaw, const struct span *sp)
{
	struct import_row *w = row_add(m, key, v, sp);

	if (w == NULL)
		return -1;
	if (strcmp(v, "host") == 0) {
		row_flaw(m, w, flaw);
		return 0;
	}
	if (v[0] == '\0' || strcmp(v, "private") == 0 ||
	    strcmp(v, "shareable") == 0 || strcmp(v, "none") == 0) {
		row_note(w, "a private %s namespace", what);
		return 0;
	}
	row_not(w, true, "joins another container's namespace");
	return 0;
}

/* network_mode. */
static int
map_netmode(struct imp *m, const char *key, const char *v,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, v, sp);

	if (w == NULL)
		return -1;
	m->saw_net = true;
	if (strcmp(v, "none") == 0) {
		row_note(w, "no network");
		return 0;
	}
	if (strcmp(v, "host") == 0) {
		row_flaw(m, w, "egress-network");
		row_note(w, "a route out, simulated by the lab's sink, never "
		    "real");
		row_partly(w, "the host's own network namespace (its "
		    "loopback services, cloud metadata) is not reproduced");
		return 0;
	}
	if (strcmp(v, "bridge") == 0 || strcmp(v, "default") == 0) {
		row_flaw(m, w, "egress-network");
		row_note(w, "a route out, simulated by the lab's sink, never "
		    "real");
		return 0;
	}
	row_not(w, true, "joins another container's network namespace");
	return 0;
}

/* One network the service joins; internal: the network has no route
 * out; external: its routes are not known here. */
static int
map_network(struct imp *m, const char *key, const char *name, bool internal,
    bool external, const struct span *sp)
{
	struct import_row *w = row_add(m, key, name, sp);

	if (w == NULL)
		return -1;
	m->saw_net = true;
	if (internal) {
		row_note(w, "an internal network: no route out");
		return 0;
	}
	row_flaw(m, w, "egress-network");
	row_note(w, "%s: simulated by the lab's sink, never real", external ?
	    "an external network, taken as a route out" : "a route out");
	return 0;
}

/* A device: never passed into a lab. */
static int
map_device(struct imp *m, const char *key, const char *v,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, v, sp);

	if (w == NULL)
		return -1;
	row_not(w, true, "ares never passes a host device into a lab");
	return 0;
}

/* image (agent.image for kind image). */
static int
map_image(struct imp *m, const char *key, const char *v, bool unresolved,
    const struct span *sp)
{
	struct import_row *w = row_add(m, key, v, sp);
	const char *why;

	if (w == NULL)
		return -1;
	w->maps_to = xstrdup("agent.image");
	m->image_row = w;
	if (!agent_is_image(m)) {
		row_not(w, false, m->o->agent[0] == 'p' ? "--agent poyo: Poyo "
		    "runs in the reproduced containment" : "--agent script: "
		    "the scripted attacker runs in the reproduced containment");
		return 0;
	}
	if (unresolved) {
		row_not(w, false, "unresolved: the caller's environment is "
		    "never read; Poyo runs instead");
		return 0;
	}
	why = agent_image_check("image", v);
	if (why != NULL) {
		row_not(w, false, "not an image reference the lab takes; Poyo "
		    "runs instead");
		return 0;
	}
	row_note(w, "a local image, never pulled");
	free(m->image);
	m->image = xstrdup(v);
	return 0;
}

/* Store an argv (command or entrypoint) and its row. */
static int
map_argv(struct imp *m, const char *key, const char *shown, char **argv,
    size_t argc, bool entry, bool unresolved, const struct span *sp)
{
	struct import_row *w, *c;
	char **dst = entry ? m->entry : m->cmd, *kept[POLICY_AGENT_ARGV_MAX];
	size_t *n = entry ? &m->nentry : &m->ncmd, i, nkept = 0, nred = 0;
	struct util_buf b;
	int f;

	/* credentials in argv: the option and its value dropped, the row
	 * shows <redacted>, and a real-key row says so */
	util_buf_init(&b, 64);
	util_buf_printf(&b, "[");
	for (i = 0; i < argc; i++) {
		f = cred_flag(argv[i]);
		if (f == 1 || f == 2 || cred_value(argv[i])) {
			if (f == 2)
				util_buf_printf(&b, "%s%.*s=<redacted>", i ? ", " :
				    "", (int)strcspn(argv[i], "="), argv[i]);
			else if (f == 1)
				util_buf_printf(&b, "%s%s%s", i ? ", " : "",
				    argv[i], i + 1 < argc ? ", <redacted>" : "");
			else
				util_buf_printf(&b, "%s<redacted>", i ? ", " : "");
			nred++;
			if (f == 1 && i + 1 < argc)
				i++;
			continue;
		}
		util_buf_printf(&b, "%s%s", i ? ", " : "", argv[i]);
		if (nkept < POLICY_AGENT_ARGV_MAX)
			kept[nkept++] = argv[i];
	}
	util_buf_printf(&b, "]");
	w = row_add(m, key, nred ? b.s : shown, sp);
	free(b.s);
	if (w == NULL)
		return -1;
	if (nred > 0) {
		char ck[IMPORT_KEY_MAX + 200];

		snprintf(ck, sizeof ck, "%s (credential)", key);
		c = row_add(m, ck, "<redacted>", sp);
		if (c == NULL)
			return -1;
		row_flaw(m, c, "real-key");
		row_note(c, "%zu credential%s in the argv (after --token, --key, "
		    "--password, --secret, --api-key, or a key's shape): "
		    "dropped from agent.command with its option, never copied; "
		    "the lab hands the agent the real model key", nred,
		    nred == 1 ? "" : "s");
		w = &m->r->rows[m->r->nrows - 2];   /* rows may have moved */
		row_note(w, "%zu credential%s dropped with its option "
		    "(row %s)", nred, nred == 1 ? "" : "s", ck);
		argv = kept;
		argc = nkept;
	}
	w->maps_to = xstrdup("agent.command");
	if (!agent_is_image(m)) {
		row_not(w, false, "the agent is not the service's image");
		return 0;
	}
	if (unresolved) {
		row_not(w, false, "unresolved: the caller's environment is "
		    "never read; the image's own is kept");
		return 0;
	}
	for (i = 0; i < argc; i++)
		if (!str_is_text(argv[i]) || strlen(argv[i]) >
		    AGENT_IMAGE_ARG_MAX) {
			row_not(w, false, "an argument with control characters "
			    "or too long");
			return 0;
		}
	for (i = 0; i < argc && *n < POLICY_AGENT_ARGV_MAX; i++)
		dst[(*n)++] = xstrdup(argv[i]);
	if (entry)
		m->has_entry = true;
	else
		m->has_cmd = true;
	if (!entry)
		row_note(w, "agent.command is the whole argv: the image's "
		    "entrypoint is not kept unless entrypoint is given");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Compose: the service key table                                      */
/* ------------------------------------------------------------------ */

struct svc_key;
/* Map key k (value v) of the service.  -1 + e. */
typedef int (*svc_fn)(struct imp *m, const struct svc_key *d,
    const char *path, const struct cnode *k, const struct cnode *v);

struct svc_key {
	const char *key;
	svc_fn map;
	const char *note;     /* svc_none / svc_not: the note */
	bool widening;        /* svc_not */
};

/* The span of a mapping entry: from its key to the end of its value. */
static struct span
entry_span(const struct cnode *k, const struct cnode *v)
{
	struct span s = { k->line, k->col, v->end_line };

	if (v->aliased || s.end_line < k->line)
		s.end_line = k->line > v->end_line ? k->line : v->end_line;
	if (s.end_line < s.line)
		s.end_line = s.line;
	return s;
}

/* The span of a node alone (a sequence item). */
static struct span
node_span(const struct cnode *n)
{
	struct span s = { n->line, n->col, n->end_line < n->line ? n->line :
	    n->end_line };

	return s;
}

/* A one-line rendering of any node (flow style, bounded). */
static void
render(const struct cnode *n, struct util_buf *b)
{
	size_t i;

	if (b->len > IMPORT_VALUE_MAX + 8)
		return;
	if (n->kind == CN_SCALAR) {
		util_buf_printf(b, "%.*s", (int)(n->len > IMPORT_VALUE_MAX ?
		    IMPORT_VALUE_MAX : n->len), n->str);
		return;
	}
	util_buf_printf(b, "%s", n->kind == CN_SEQ ? "[" : "{");
	for (i = 0; i < n->nkids; i++) {
		if (i > 0)
			util_buf_printf(b, "%s", n->kind == CN_MAP && i % 2 ?
			    ": " : ", ");
		render(n->kids[i], b);
	}
	util_buf_printf(b, "%s", n->kind == CN_SEQ ? "]" : "}");
}

/* render() into a fresh string. */
static char *
rendered(const struct cnode *n)
{
	struct util_buf b;

	util_buf_init(&b, 64);
	render(n, &b);
	return b.s;
}

/* Error at node n for key path path.  -1. */
#define IERR(m, n, path, ...) \
	compose_err((m)->e, (m)->file, (n)->line, (n)->col, (path), __VA_ARGS__)

/* A scalar (interpolated: caller frees) or -1 + e. */
static int
scalar(struct imp *m, const char *path, const struct cnode *v, char **out,
    bool *unresolved)
{
	if (v->kind != CN_SCALAR || compose_is_null(v))
		return IERR(m, v, path, "expected a string, got %s",
		    v->kind == CN_SEQ ? "a sequence" : v->kind == CN_MAP ?
		    "a mapping" : "null");
	if (strlen(v->str) != v->len)
		return IERR(m, v, path, "contains a NUL byte");
	bool dflt;

	*out = interp(v->str, unresolved, &dflt);
	m->pend |= (*unresolved ? UNRES_BARE : 0u) | (dflt ? UNRES_DEFAULT :
	    0u);
	return 0;
}

/* Rows with no access change, the table's note. */
static int
svc_none(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	char *val = rendered(v);
	struct import_row *w = row_add(m, path, val, &sp);

	free(val);
	if (w == NULL)
		return -1;
	if (d->note != NULL)
		row_note(w, "%s", d->note);
	return 0;
}

/* Rows not reproduced, the table's note and widening. */
static int
svc_not(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	char *val = rendered(v);
	struct import_row *w = row_add(m, path, val, &sp);

	free(val);
	if (w == NULL)
		return -1;
	row_not(w, d->widening, d->note);
	return 0;
}

/* A boolean key: true maps to flaw d->note (privileged), false is no
 * change; read_only inverts (false or absent: writable-rootfs). */
static int
svc_bool(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	struct import_row *w;
	bool unres;
	char *s;
	int b;

	if (scalar(m, path, v, &s, &unres) == -1)
		return -1;
	b = parse_bool(s);
	if (b == -1) {
		IERR(m, v, path, "expected true or false, got \"%.40s\"", s);
		free(s);
		return -1;
	}
	w = row_add(m, path, s, &sp);
	free(s);
	if (w == NULL)
		return -1;
	if (strcmp(d->key, "read_only") == 0) {
		m->saw_read_only = true;
		if (b)
			row_note(w, "the lab's root filesystem is read-only too");
		else
			row_flaw(m, w, "writable-rootfs");
		return 0;
	}
	if (b) {
		row_flaw(m, w, d->note);
		if (strcmp(d->key, "privileged") == 0)
			row_partly(w, PRIV_PART);
	}
	return 0;
}

/* image. */
static int
svc_image(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	bool unres;
	char *s;
	int rc;

	(void)d;
	if (scalar(m, path, v, &s, &unres) == -1)
		return -1;
	rc = map_image(m, path, s, unres, &sp);
	free(s);
	return rc;
}

/* command / entrypoint: a string (shell words) or a list. */
static int
svc_argv(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	char *argv[POLICY_AGENT_ARGV_MAX], *shown, *s;
	bool unres = false, u;
	int n = 0, rc;
	size_t i;

	if (v->kind == CN_SCALAR && !compose_is_null(v)) {
		if (scalar(m, path, v, &s, &unres) == -1)
			return -1;
		n = shell_split(s, argv, POLICY_AGENT_ARGV_MAX);
		free(s);
		if (n < 0)
			return IERR(m, v, path, "an unbalanced quote or more "
			    "than %d words", POLICY_AGENT_ARGV_MAX);
	} else if (v->kind == CN_SEQ) {
		if (v->nkids > POLICY_AGENT_ARGV_MAX)
			return IERR(m, v, path, "more than %d items",
			    POLICY_AGENT_ARGV_MAX);
		for (i = 0; i < v->nkids; i++) {
			char ip[IMPORT_KEY_MAX + 16];

			snprintf(ip, sizeof ip, "%s[%zu]", path, i);
			if (scalar(m, ip, v->kids[i], &argv[n], &u) == -1) {
				while (n > 0)
					free(argv[--n]);
				return -1;
			}
			unres = unres || u;
			n++;
		}
	} else if (compose_is_null(v)) {
		n = 0;
	} else {
		return IERR(m, v, path, "expected a string or a sequence, got "
		    "a mapping");
	}
	shown = rendered(v);
	rc = map_argv(m, path, shown, argv, (size_t)n,
	    strcmp(d->key, "entrypoint") == 0, unres, &sp);
	free(shown);
	while (n > 0)
		free(argv[--n]);
	return rc;
}

/* environment: a mapping (NAME: value) or a list ("NAME=value",
 * "NAME"). */
static int
svc_environment(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	char ip[IMPORT_KEY_MAX + 160];
	size_t i;

	(void)d;
	(void)k;
	if (v->kind == CN_MAP) {
		for (i = 0; i + 1 < v->nkids; i += 2) {
			const struct cnode *kn = v->kids[i],
			    *val = v->kids[i + 1];
			struct span sp = entry_span(kn, val);
			char *s = NULL;
			bool unres = false;
			int rc;

			snprintf(ip, sizeof ip, "%s.%.128s", path, kn->str);
			if (!compose_is_null(val) && scalar(m, ip, val, &s,
			    &unres) == -1)
				return -1;
			rc = map_env(m, ip, kn->str, s, unres, &sp);
			free(s);
			if (rc == -1)
				return -1;
		}
		return 0;
	}
	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a mapping or a sequence");
	for (i = 0; i < v->nkids; i++) {
		struct span sp = node_span(v->kids[i]);
		char *s, *eq;
		bool unres;
		int rc;

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		if (scalar(m, ip, v->kids[i], &s, &unres) == -1)
			return -1;
		eq = strchr(s, '=');
		if (eq != NULL)
			*eq = '\0';
		/* unres of the name part does not matter: values only. */
		rc = map_env(m, ip, s, eq ? eq + 1 : NULL, eq && unres, &sp);
		free(s);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* user. */
static int
svc_user(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	bool unres;
	char *s;
	int rc;

	(void)d;
	if (scalar(m, path, v, &s, &unres) == -1)
		return -1;
	rc = map_user(m, path, s, unres, &sp);
	free(s);
	return rc;
}

/* working_dir -> agent.workdir. */
static int
svc_workdir(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	struct import_row *w;
	bool unres;
	char *s;

	(void)d;
	if (scalar(m, path, v, &s, &unres) == -1)
		return -1;
	w = row_add(m, path, s, &sp);
	if (w == NULL) {
		free(s);
		return -1;
	}
	w->maps_to = xstrdup("agent.workdir");
	if (!agent_is_image(m))
		row_not(w, false, "the agent is not the service's image");
	else if (unres || agent_image_check("workdir", s) != NULL)
		row_not(w, false, "not a path the policy takes (absolute, "
		    "[A-Za-z0-9._@+-/])");
	else {
		free(m->workdir);
		m->workdir = s;
		s = NULL;
	}
	free(s);
	return 0;
}

/* A sequence of scalars handed one by one to fn(m, key, value, span). */
static int
each_scalar(struct imp *m, const char *path, const struct cnode *v,
    int (*fn)(struct imp *, const char *, const char *,
    const struct span *))
{
	char ip[IMPORT_KEY_MAX + 16];
	size_t i;

	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a sequence");
	for (i = 0; i < v->nkids; i++) {
		struct span sp = node_span(v->kids[i]);
		bool unres;
		char *s;
		int rc;

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		if (scalar(m, ip, v->kids[i], &s, &unres) == -1)
			return -1;
		rc = fn(m, ip, s, &sp);
		free(s);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* cap_add. */
static int
svc_cap_add(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	(void)d;
	(void)k;
	return each_scalar(m, path, v, map_cap);
}

/* security_opt. */
static int
svc_security_opt(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	(void)d;
	(void)k;
	return each_scalar(m, path, v, map_secopt);
}

/* devices (a list of strings or of {source, target} mappings). */
static int
svc_devices(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	char ip[IMPORT_KEY_MAX + 16];
	size_t i;

	(void)d;
	(void)k;
	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a sequence");
	for (i = 0; i < v->nkids; i++) {
		struct span sp = node_span(v->kids[i]);
		char *s = rendered(v->kids[i]);
		int rc;

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		rc = map_device(m, ip, s, &sp);
		free(s);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* sysctls: a mapping or a list of "name=value". */
static int
svc_sysctls(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	char ip[IMPORT_KEY_MAX + 160];
	size_t i;

	(void)d;
	(void)k;
	if (v->kind == CN_MAP) {
		for (i = 0; i + 1 < v->nkids; i += 2) {
			const struct cnode *kn = v->kids[i],
			    *val = v->kids[i + 1];
			struct span sp = entry_span(kn, val);
			char *s = rendered(val);
			int rc;

			snprintf(ip, sizeof ip, "%s.%.128s", path, kn->str);
			rc = map_sysctl(m, ip, kn->str, s, &sp);
			free(s);
			if (rc == -1)
				return -1;
		}
		return 0;
	}
	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a mapping or a sequence");
	for (i = 0; i < v->nkids; i++) {
		struct span sp = node_span(v->kids[i]);
		bool unres;
		char *s, *eq;
		int rc;

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		if (scalar(m, ip, v->kids[i], &s, &unres) == -1)
			return -1;
		eq = strchr(s, '=');
		if (eq != NULL)
			*eq++ = '\0';
		rc = map_sysctl(m, ip, s, eq ? eq : "", &sp);
		free(s);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* Scalar keys handed to one mapper: pid, ipc, network_mode, runtime. */
static int
svc_scalar_key(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	bool unres;
	char *s;
	int rc;

	if (scalar(m, path, v, &s, &unres) == -1)
		return -1;
	if (strcmp(d->key, "pid") == 0)
		rc = map_ns(m, path, "pid", s, "host-pid", &sp);
	else if (strcmp(d->key, "ipc") == 0)
		rc = map_ns(m, path, "ipc", s, "host-ipc", &sp);
	else if (strcmp(d->key, "network_mode") == 0)
		rc = map_netmode(m, path, s, &sp);
	else
		rc = map_runtime(m, path, s, &sp);
	free(s);
	return rc;
}

/* A top-level definition's scalar key k (interpolated) or NULL when
 * absent; -1 + e when it is not a scalar. */
static int
def_str(struct imp *m, const char *path, const struct cnode *def,
    const char *k, char **out)
{
	const struct cnode *v = compose_get(def, k);
	char ip[IMPORT_KEY_MAX + 64];
	bool u;

	*out = NULL;
	if (v == NULL || compose_is_null(v))
		return 0;
	snprintf(ip, sizeof ip, "%s.%s", path, k);
	return scalar(m, ip, v, out, &u);
}

/*
 * A named volume name mounted at dst: looked up under the top-level
 * volumes:.  driver_opts o=bind with a device is a bind of device (the
 * socket, key and host path rules); external, a driver other than local
 * or other driver_opts: not reproduced, widening; otherwise the engine's
 * own data.  0, or -1 + e.
 */
static int
map_named(struct imp *m, const char *key, const char *shown,
    const char *name, const char *dst, bool ro, const struct span *sp)
{
	const struct cnode *def = compose_get(compose_get(m->root, "volumes"),
	    name), *opts;
	char tpath[IMPORT_KEY_MAX + 160], *drv = NULL, *o = NULL, *dev = NULL,
	    *ext = NULL;
	struct import_row *w;
	int rc = -1;

	if (def == NULL || def->kind != CN_MAP)
		return map_bind(m, key, shown, "volume", name, dst, ro, sp);
	snprintf(tpath, sizeof tpath, "volumes.%.128s", name);
	opts = compose_get(def, "driver_opts");
	if (def_str(m, tpath, def, "driver", &drv) == -1 ||
	    def_str(m, tpath, def, "external", &ext) == -1)
		goto out;
	if (opts != NULL && opts->kind == CN_MAP) {
		snprintf(tpath, sizeof tpath, "volumes.%.128s.driver_opts",
		    name);
		if (def_str(m, tpath, opts, "o", &o) == -1 ||
		    def_str(m, tpath, opts, "device", &dev) == -1)
			goto out;
	}
	if (ext != NULL && parse_bool(ext) != 0) {
		if ((w = row_add(m, key, shown, sp)) == NULL)
			goto out;
		row_not(w, true, "an external volume: made outside this file, "
		    "what it holds (a host path?) is not known");
		rc = 0;
	} else if (drv != NULL && strcmp(drv, "local") != 0) {
		if ((w = row_add(m, key, shown, sp)) == NULL)
			goto out;
		row_not(w, true, "a volume driver other than local: where its "
		    "data lives is not known");
		rc = 0;
	} else if (o != NULL && dev != NULL && strstr(o, "bind") != NULL) {
		rc = map_bind(m, key, shown, "bind", dev, dst, ro, sp);
		if (rc == 0)
			row_note(&m->r->rows[m->r->nrows - 1], "a named volume "
			    "that binds the host path %.200s (driver_opts o=bind)",
			    dev);
	} else if (opts != NULL && !compose_is_null(opts)) {
		if ((w = row_add(m, key, shown, sp)) == NULL)
			goto out;
		row_not(w, true, "a volume with driver_opts: what it mounts "
		    "(a device, an NFS share) is not reproduced");
		rc = 0;
	} else
		rc = map_bind(m, key, shown, "volume", name, dst, ro, sp);
out:
	free(drv);
	free(o);
	free(dev);
	free(ext);
	return rc;
}

/* One short-syntax volume: "SRC:DST[:MODE]" or "DST". */
static int
volume_short(struct imp *m, const char *path, const struct cnode *it)
{
	struct span sp = node_span(it);
	char *s, *parts[3] = { NULL, NULL, NULL }, *p, *save = NULL;
	bool unres, ro = false;
	size_t n = 0;
	int rc;

	if (scalar(m, path, it, &s, &unres) == -1)
		return -1;
	p = xstrdup(s);
	for (char *t = strtok_r(p, ":", &save); t != NULL && n < 3;
	    t = strtok_r(NULL, ":", &save))
		parts[n++] = t;
	if (n == 3) {
		ro = strstr(parts[2], "ro") != NULL &&
		    strstr(parts[2], "rw") == NULL;
	}
	if (n == 1)
		rc = map_bind(m, path, s, "volume", NULL, parts[0], false, &sp);
	else if (n >= 2 && (parts[0][0] == '/' || parts[0][0] == '.' ||
	    parts[0][0] == '~' || parts[0][0] == '$'))
		rc = map_bind(m, path, s, "bind", parts[0], parts[1], ro, &sp);
	else if (n >= 2)
		rc = map_named(m, path, s, parts[0], parts[1], ro, &sp);
	else
		rc = IERR(m, it, path, "an empty volume");
	if (rc == 0 && unres)
		row_note(&m->r->rows[m->r->nrows - 1], "unresolved: ${...} "
		    "(the caller's environment is never read)");
	free(p);
	free(s);
	return rc;
}

/* One long-syntax volume {type, source, target, read_only}. */
static int
volume_long(struct imp *m, const char *path, const struct cnode *it)
{
	struct span sp = node_span(it);
	const struct cnode *t = compose_get(it, "type"),
	    *src = compose_get(it, "source"), *dst = compose_get(it, "target"),
	    *ro = compose_get(it, "read_only");
	char *type = NULL, *s = NULL, *d = NULL, *r = NULL, *shown;
	char ip[IMPORT_KEY_MAX + 32];
	bool unres = false, u, rob = false;
	int rc = -1;

	if (t == NULL) {
		snprintf(ip, sizeof ip, "%s.type", path);
		return IERR(m, it, ip, "required key is missing");
	}
	snprintf(ip, sizeof ip, "%s.type", path);
	if (scalar(m, ip, t, &type, &u) == -1)
		return -1;
	snprintf(ip, sizeof ip, "%s.source", path);
	if (src != NULL && scalar(m, ip, src, &s, &unres) == -1)
		goto out;
	snprintf(ip, sizeof ip, "%s.target", path);
	if (dst != NULL && scalar(m, ip, dst, &d, &u) == -1)
		goto out;
	if (ro != NULL) {
		snprintf(ip, sizeof ip, "%s.read_only", path);
		if (scalar(m, ip, ro, &r, &u) == -1)
			goto out;
		if (parse_bool(r) == -1) {
			IERR(m, ro, ip, "expected true or false");
			goto out;
		}
		rob = parse_bool(r) == 1;
	}
	if (strcmp(type, "bind") == 0 && s == NULL) {
		snprintf(ip, sizeof ip, "%s.source", path);
		IERR(m, it, ip, "required key is missing (a bind names its "
		    "host path)");
		goto out;
	}
	shown = rendered(it);
	if (strcmp(type, "volume") == 0 && s != NULL && s[0] != '\0')
		rc = map_named(m, path, shown, s, d, rob, &sp);
	else
		rc = map_bind(m, path, shown, type, s, d, rob, &sp);
	free(shown);
	if (rc == 0 && unres)
		row_note(&m->r->rows[m->r->nrows - 1], "unresolved: ${...} "
		    "(the caller's environment is never read)");
out:
	free(type);
	free(s);
	free(d);
	free(r);
	return rc;
}

/* volumes. */
static int
svc_volumes(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	char ip[IMPORT_KEY_MAX + 16];
	size_t i;

	(void)d;
	(void)k;
	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a sequence");
	for (i = 0; i < v->nkids; i++) {
		const struct cnode *it = v->kids[i];

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		if (it->kind == CN_MAP) {
			if (volume_long(m, ip, it) == -1)
				return -1;
		} else if (volume_short(m, ip, it) == -1) {
			return -1;
		}
	}
	return 0;
}

/* A network's top-level definition: internal / external. */
static int
net_def(struct imp *m, const char *path, const struct cnode *name_node,
    const char *name, bool *internal, bool *external)
{
	const struct cnode *top = compose_get(m->root, "networks"), *def, *x;

	*internal = *external = false;
	def = compose_get(top, name);
	if (def == NULL && (top == NULL || compose_get(top, name) == NULL)) {
		size_t i;
		bool present = false;

		for (i = 0; top != NULL && top->kind == CN_MAP &&
		    i + 1 < top->nkids; i += 2)
			if (strcmp(top->kids[i]->str, name) == 0)
				present = true;
		if (!present && strcmp(name, "default") != 0)
			return IERR(m, name_node, path, "network \"%.64s\" is "
			    "not defined under the top-level networks:", name);
	}
	if (def != NULL && def->kind == CN_MAP) {
		x = compose_get(def, "internal");
		if (x != NULL && x->kind == CN_SCALAR && parse_bool(x->str) == 1)
			*internal = true;
		x = compose_get(def, "external");
		if (x != NULL && ((x->kind == CN_SCALAR &&
		    parse_bool(x->str) == 1) || x->kind == CN_MAP))
			*external = true;
	}
	return 0;
}

/* networks: a list of names or a mapping name: {aliases...}. */
static int
svc_networks(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	char ip[IMPORT_KEY_MAX + 160];
	bool internal, external;
	size_t i;

	(void)d;
	if ((v->kind == CN_SEQ || v->kind == CN_MAP) && v->nkids == 0) {
		struct span sp = entry_span(k, v);
		struct import_row *w = row_add(m, path, v->kind == CN_SEQ ?
		    "[]" : "{}", &sp);

		if (w == NULL || net_def(m, path, v, "default", &internal,
		    &external) == -1)
			return -1;
		m->saw_net = true;
		if (internal) {
			row_note(w, "none named: the default network, an "
			    "internal one");
		} else {
			row_flaw(m, w, "egress-network");
			row_note(w, "none named: the default network has a "
			    "route out, simulated by the lab's sink, never real");
		}
		return 0;
	}
	if (v->kind == CN_SEQ) {
		for (i = 0; i < v->nkids; i++) {
			struct span sp = node_span(v->kids[i]);
			bool unres;
			char *s;
			int rc;

			snprintf(ip, sizeof ip, "%s[%zu]", path, i);
			if (scalar(m, ip, v->kids[i], &s, &unres) == -1)
				return -1;
			rc = net_def(m, ip, v->kids[i], s, &internal,
			    &external);
			if (rc == 0)
				rc = map_network(m, ip, s, internal, external,
				    &sp);
			free(s);
			if (rc == -1)
				return -1;
		}
		return 0;
	}
	if (v->kind != CN_MAP)
		return IERR(m, v, path, "expected a sequence or a mapping");
	for (i = 0; i + 1 < v->nkids; i += 2) {
		const struct cnode *kn = v->kids[i];
		struct span sp = entry_span(kn, v->kids[i + 1]);

		snprintf(ip, sizeof ip, "%s.%.128s", path, kn->str);
		if (net_def(m, ip, kn, kn->str, &internal, &external) == -1 ||
		    map_network(m, ip, kn->str, internal, external, &sp) == -1)
			return -1;
	}
	return 0;
}

/*
 * A config or secret (top: "configs" / "secrets") named name whose
 * top-level definition has file: a read-only host file, run through the
 * mount rules (socket, key, host path).  *wp: its row, or NULL when the
 * definition has no file: (secret: a socket only; other files stay a
 * secret).  0, or -1 + e.
 */
static int
host_file(struct imp *m, const char *top, const char *key,
    const struct cnode *it, const char *name, bool secret,
    const struct span *sp, struct import_row **wp)
{
	const struct cnode *def = compose_get(compose_get(m->root, top), name);
	char tpath[IMPORT_KEY_MAX + 160], *f = NULL, *shown, clean[4096];
	size_t n;
	int rc;

	*wp = NULL;
	snprintf(tpath, sizeof tpath, "%s.%.128s", top, name);
	if (def == NULL || def->kind != CN_MAP)
		return 0;
	if (def_str(m, tpath, def, "file", &f) == -1)
		return -1;
	if (f == NULL)
		return 0;
	snprintf(clean, sizeof clean, "%s", f);
	n = strlen(clean);
	while (n > 1 && clean[n - 1] == '/')
		clean[--n] = '\0';
	if (secret && !path_is_socket(clean) && strcmp(clean, "/") != 0) {
		m->pend = 0;
		free(f);
		return 0;
	}
	shown = rendered(it);
	rc = map_bind(m, key, shown, "bind", f, NULL, true, sp);
	free(shown);
	if (rc == 0) {
		*wp = &m->r->rows[m->r->nrows - 1];
		row_note(*wp, "%s file: %.200s from the host, read-only", top,
		    f);
	}
	free(f);
	return rc;
}

/* configs (names or {source, target}, defined under the top-level
 * configs:): file: is a read-only host file (host_file), content: or
 * environment: no access change. */
static int
svc_configs(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	char ip[IMPORT_KEY_MAX + 16];
	size_t i;

	(void)d;
	(void)k;
	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a sequence");
	for (i = 0; i < v->nkids; i++) {
		const struct cnode *it = v->kids[i], *src = it;
		struct span sp = node_span(it);
		struct import_row *w;
		char *shown;

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		if (it->kind == CN_MAP)
			src = compose_get(it, "source");
		if (src == NULL || src->kind != CN_SCALAR ||
		    compose_is_null(src))
			return IERR(m, it, ip, "expected a config name or "
			    "{source: NAME}");
		if (host_file(m, "configs", ip, it, src->str, false, &sp,
		    &w) == -1)
			return -1;
		if (w != NULL)
			continue;
		shown = rendered(it);
		w = row_add(m, ip, shown, &sp);
		free(shown);
		if (w == NULL)
			return -1;
		row_note(w, "a read-only file of the project (not from a host "
		    "path)");
	}
	return 0;
}

/* deploy: limits and replicas (the lab sets its own), but
 * resources.reservations.devices passes host devices (GPUs) in: a row of
 * its own, like gpus: not reproduced, widening. */
static int
svc_deploy(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	const struct cnode *dev = compose_get(compose_get(compose_get(v,
	    "resources"), "reservations"), "devices");
	char ip[IMPORT_KEY_MAX + 64];
	struct span sp;
	struct import_row *w;
	char *val;

	if (svc_none(m, d, path, k, v) == -1)
		return -1;
	if (dev == NULL || compose_is_null(dev))
		return 0;
	snprintf(ip, sizeof ip, "%s.resources.reservations.devices", path);
	sp = node_span(dev);
	val = rendered(dev);
	w = row_add(m, ip, val, &sp);
	free(val);
	if (w == NULL)
		return -1;
	row_not(w, true, "ares never passes a host device (a GPU) into a lab");
	return 0;
}

/* secrets: names (or {source, target}) of top-level secrets. */
static int
svc_secrets(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	const struct cnode *top = compose_get(m->root, "secrets");
	char ip[IMPORT_KEY_MAX + 16];
	size_t i;

	(void)d;
	(void)k;
	if (v->kind != CN_SEQ)
		return IERR(m, v, path, "expected a sequence");
	for (i = 0; i < v->nkids; i++) {
		const struct cnode *it = v->kids[i], *src = it;
		struct span sp = node_span(it);
		struct import_row *w;
		char *shown;

		snprintf(ip, sizeof ip, "%s[%zu]", path, i);
		if (it->kind == CN_MAP)
			src = compose_get(it, "source");
		if (src == NULL || src->kind != CN_SCALAR ||
		    compose_is_null(src))
			return IERR(m, it, ip, "expected a secret name or "
			    "{source: NAME}");
		if (compose_get(top, src->str) == NULL)
			return IERR(m, src, ip, "secret \"%.64s\" is not "
			    "defined under the top-level secrets:", src->str);
		if (host_file(m, "secrets", ip, it, src->str, true, &sp,
		    &w) == -1)
			return -1;
		if (w != NULL)
			continue;
		shown = rendered(it);
		w = row_add(m, ip, shown, &sp);
		free(shown);
		if (w == NULL)
			return -1;
		row_flaw(m, w, "control-keys");
		row_note(w, "a secret file in the agent: the lab plants decoy "
		    "keys read-only at %s", FLAW_MOUNT_CONTROL_KEYS);
	}
	return 0;
}

/* host-namespace keys that ares does not reproduce when "host". */
static int
svc_host_ns(struct imp *m, const struct svc_key *d, const char *path,
    const struct cnode *k, const struct cnode *v)
{
	struct span sp = entry_span(k, v);
	struct import_row *w;
	bool unres;
	char *s;

	if (scalar(m, path, v, &s, &unres) == -1)
		return -1;
	w = row_add(m, path, s, &sp);
	if (w != NULL && strcmp(s, "host") == 0)
		row_not(w, true, d->note);
	else if (w != NULL)
		row_note(w, "a private namespace");
	free(s);
	return w == NULL ? -1 : 0;
}

#define S_NONE(k, n)  { (k), svc_none, (n), false }
#define S_NOT(k, n, w) { (k), svc_not, (n), (w) }

/*
 * A row whose value needed interpolation (how: UNRES_*).  For an access
 * key the lab cannot know what docker compose will make of it: not
 * reproduced, widening (the flaw, if any, kept as a lower bound).  The
 * others (image, command, entrypoint, environment, working_dir, the keys
 * that change no access) keep a default, with a note.
 */
static void
row_unres(struct imp *m, const struct svc_key *d, struct import_row *w,
    unsigned how)
{
	static const char *const plain[] = { "image", "command",
	    "entrypoint", "environment", "working_dir", "deploy", NULL };
	size_t i;

	(void)m;
	if (how == 0)
		return;
	for (i = 0; plain[i] != NULL; i++)
		if (strcmp(d->key, plain[i]) == 0)
			break;
	if (plain[i] != NULL || d->map == svc_none || d->map == svc_not) {
		if (how & UNRES_DEFAULT)
			row_note(w, DEFAULT_NOTE);
		return;
	}
	w->reproduced = false;
	w->widening = true;
	if (how & UNRES_DEFAULT)
		row_note(w, DEFAULT_NOTE);
	else
		row_note(w, "unresolved: the access depends on the caller's "
		    "environment, never read");
}

/* Every service key Compose defines, and what it maps to
 * (docs/import.md has one row per key).  Keys not in the table are "not
 * reproduced: unknown key" (widening: fail closed). */
static const struct svc_key svc_keys[] = {
	{ "image", svc_image, NULL, false },
	{ "command", svc_argv, NULL, false },
	{ "entrypoint", svc_argv, NULL, false },
	{ "environment", svc_environment, NULL, false },
	{ "user", svc_user, NULL, false },
	{ "working_dir", svc_workdir, NULL, false },
	{ "privileged", svc_bool, "privileged", false },
	{ "read_only", svc_bool, NULL, false },
	{ "cap_add", svc_cap_add, NULL, false },
	{ "volumes", svc_volumes, NULL, false },
	{ "networks", svc_networks, NULL, false },
	{ "network_mode", svc_scalar_key, NULL, false },
	{ "pid", svc_scalar_key, NULL, false },
	{ "ipc", svc_scalar_key, NULL, false },
	{ "runtime", svc_scalar_key, NULL, false },
	{ "security_opt", svc_security_opt, NULL, false },
	{ "devices", svc_devices, NULL, false },
	{ "sysctls", svc_sysctls, NULL, false },
	{ "secrets", svc_secrets, NULL, false },
	{ "uts", svc_host_ns, "the host's UTS namespace (hostname) is not "
	  "reproduced", false },
	{ "userns_mode", svc_host_ns, "the host's user namespace is not "
	  "reproduced", false },
	{ "cgroup", svc_host_ns, "the host's cgroup namespace is not "
	  "reproduced", false },
	S_NOT("env_file", "ares does not read env files (a credential in "
	    "one is not seen)", true),
	S_NOT("volumes_from", "another container's volumes", true),
	S_NOT("gpus", "ares never passes a host device into a lab", true),
	S_NOT("extends", "names another file ares does not read", true),
	S_NOT("device_cgroup_rules", "ares never passes a host device into "
	    "a lab", true),
	S_NOT("cgroup_parent", "the lab's containers use the engine's "
	    "cgroup parent", false),
	S_NONE("cap_drop", "the lab drops every capability already"),
	S_NONE("tmpfs", "a tmpfs inside the container"),
	{ "configs", svc_configs, NULL, false },
	S_NONE("build", "ares never builds or pulls; the image must be "
	    "local"),
	S_NONE("ports", "ports publish inward; the lab publishes nothing"),
	S_NONE("expose", "inside the network only; the lab publishes "
	    "nothing"),
	S_NONE("restart", NULL),
	S_NONE("depends_on", "start order"),
	S_NONE("healthcheck", NULL),
	S_NONE("labels", NULL),
	S_NONE("annotations", NULL),
	S_NONE("container_name", NULL),
	S_NONE("hostname", NULL),
	S_NONE("domainname", NULL),
	S_NONE("logging", NULL),
	{ "deploy", svc_deploy, "resource limits and replicas; the lab sets "
	  "its own limits", false },
	S_NONE("mem_limit", "a limit"),
	S_NONE("memswap_limit", "a limit"),
	S_NONE("mem_reservation", "a limit"),
	S_NONE("cpus", "a limit"),
	S_NONE("cpu_shares", "a limit"),
	S_NONE("cpu_quota", "a limit"),
	S_NONE("cpuset", "a limit"),
	S_NONE("pids_limit", "a limit"),
	S_NONE("ulimits", "a limit"),
	S_NONE("shm_size", "a limit"),
	S_NONE("oom_score_adj", NULL),
	S_NONE("stop_signal", NULL),
	S_NONE("stop_grace_period", NULL),
	S_NONE("init", NULL),
	S_NONE("tty", NULL),
	S_NONE("stdin_open", NULL),
	S_NONE("platform", NULL),
	S_NONE("profiles", NULL),
	S_NONE("pull_policy", "ares never pulls"),
	S_NONE("scale", NULL),
	S_NONE("dns", "the lab's resolver answers inside names only"),
	S_NONE("dns_search", NULL),
	S_NONE("dns_opt", NULL),
	S_NONE("extra_hosts", "names in /etc/hosts; no route"),
	S_NONE("links", "names; no access"),
	S_NONE("external_links", "names; no access"),
	S_NONE("group_add", "supplementary groups inside the container"),
	S_NONE("mac_address", NULL),
	S_NONE("storage_opt", NULL),
	S_NONE("isolation", NULL),
	S_NONE("develop", NULL),
	{ NULL, NULL, NULL, false },
};

/* Rows for what the service does not write but docker defaults to. */
static int
svc_defaults(struct imp *m, const char *spath, const struct cnode *svc)
{
	struct span none = { 0, 0, 0 };
	struct import_row *w;
	char ip[IMPORT_KEY_MAX + 32];

	(void)svc;
	if (!m->saw_read_only) {
		snprintf(ip, sizeof ip, "%s.read_only", spath);
		w = row_add(m, ip, "(absent)", &none);
		if (w == NULL)
			return -1;
		row_flaw(m, w, "writable-rootfs");
		row_note(w, "docker's default is a writable root filesystem");
	}
	if (!m->saw_net) {
		snprintf(ip, sizeof ip, "%s.networks", spath);
		w = row_add(m, ip, "(absent)", &none);
		if (w == NULL)
			return -1;
		row_flaw(m, w, "egress-network");
		row_note(w, "the implicit default network has a route out: "
		    "simulated by the lab's sink, never real");
	}
	if (!m->saw_user) {
		snprintf(ip, sizeof ip, "%s.user", spath);
		w = row_add(m, ip, "(absent)", &none);
		if (w == NULL)
			return -1;
		row_note(w, "the image's own USER runs (root when the image "
		    "names none); not known without the image: the lab runs "
		    "65532");
	}
	return 0;
}

/* Map every key of the service (the table, then the defaults). */
static int
map_service(struct imp *m, const char *spath, const struct cnode *svc)
{
	char path[IMPORT_KEY_MAX + 160];
	size_t i, j, first;

	for (i = 0; i + 1 < svc->nkids; i += 2) {
		const struct cnode *k = svc->kids[i], *v = svc->kids[i + 1];
		const struct svc_key *d;

		snprintf(path, sizeof path, "%s.%.128s", spath, k->str);
		for (d = svc_keys; d->key != NULL; d++)
			if (strcmp(d->key, k->str) == 0)
				break;
		if (d->key == NULL) {
			struct span sp = entry_span(k, v);
			char *val = rendered(v);
			struct import_row *w = row_add(m, path, val, &sp);

			free(val);
			if (w == NULL)
				return -1;
			if (strncmp(k->str, "x-", 2) == 0)
				row_note(w, "an extension field");
			else
				row_not(w, true, "unknown key");
			continue;
		}
		if (compose_is_null(v)) {
			struct span sp = entry_span(k, v);
			struct import_row *w = row_add(m, path, "null", &sp);

			if (w == NULL)
				return -1;
			row_note(w, "null: the default");
			continue;
		}
		first = m->r->nrows;
		m->pend = 0;
		if (d->map(m, d, path, k, v) == -1)
			return -1;
		m->pend = 0;
		for (j = first; j < m->r->nrows; j++)
			row_unres(m, d, &m->r->rows[j], m->unres_of[j]);
		for (j = first; (k->aliased || v->aliased) && j < m->r->nrows;
		    j++)
			row_note(&m->r->rows[j], "written at line %zu through "
			    "an anchor (an alias or <<): changing it there "
			    "changes every user of the anchor", m->r->rows[j].line);
	}
	return svc_defaults(m, spath, svc);
}

/* ------------------------------------------------------------------ */
/* The policy text                                                     */
/* ------------------------------------------------------------------ */

/* Append s as a YAML double-quoted scalar. */
static void
yq(struct util_buf *b, const char *s)
{
	util_buf_printf(b, "\"");
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			util_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			util_buf_printf(b, "\\x%02x", c);
		else
			util_buf_printf(b, "%c", c);
	}
	util_buf_printf(b, "\"");
}

/* The policy's name from the service: [A-Za-z0-9._-], 1..64 bytes. */
static void
policy_name(const char *service, char out[65])
{
	size_t i, n = 0;

	for (i = 0; service[i] != '\0' && n < 64; i++) {
		char c = service[i];

		out[n++] = (char)(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789._-", c) != NULL ?
		    c : '-');
	}
	if (n == 0)
		out[n++] = 'x';
	out[n] = '\0';
}

/* The path of target relative to folder dir (both absolute). */
static char *
rel_path(const char *dir, const char *target)
{
	struct util_buf b;
	size_t i = 0, common = 0;
	const char *p;

	/* The longest common prefix that ends at a component boundary. */
	while (dir[i] != '\0' && dir[i] == target[i]) {
		i++;
		if (dir[i] == '/' || dir[i] == '\0')
			if (target[i] == '/' || target[i] == '\0')
				common = i;
	}
	if (strcmp(dir, "/") == 0)
		common = 0;
	util_buf_init(&b, 64);
	for (p = dir + common; *p != '\0'; p++)
		if (*p == '/' && p[1] != '\0')
			util_buf_printf(&b, "../");
	p = target + common;
	if (*p == '/')
		p++;
	util_buf_printf(&b, "%s", p);
	return b.s;
}

/* The folder the policy will be written to, resolved (caller frees). */
static char *
out_dir(const struct import_opts *o)
{
	char *dir, *canon;
	const char *slash;

	if (o == NULL || o->out_path == NULL || strcmp(o->out_path, "-") == 0)
		return realpath(".", NULL);
	slash = strrchr(o->out_path, '/');
	dir = slash == NULL ? xstrdup(".") : slash == o->out_path ?
	    xstrdup("/") : xstrndup(o->out_path, (size_t)(slash - o->out_path));
	canon = realpath(dir, NULL);
	free(dir);
	return canon;
}

/*
 * The policy text: default.yaml's levers, bait and limits, the flaws,
 * the agent, the runtime and imported:.  source_abs: the compose file
 * (resolved) or NULL for a container.
 */
static char *
policy_text(struct imp *m, const char *source_abs, const char *source,
    const char *service, const char *container)
{
	struct util_buf b;
	char name[65];
	size_t i;

	policy_name(service != NULL ? service : container, name);
	util_buf_init(&b, 2048);
	util_buf_printf(&b, "# ares policy imported by `ares policy import` "
	    "(docs/import.md); the\n# mapping table says what each key of "
	    "the source became.\nname: %s\ndescription: ", name);
	if (container != NULL) {
		char *d = xasprintf("imported from container %s", container);

		yq(&b, d);
		free(d);
	} else {
		char *d = xasprintf("imported from %s service %s", source,
		    service);

		yq(&b, d);
		free(d);
	}
	util_buf_printf(&b, "\nseed: 7\nlimits:\n  steps: 24\n  seconds: 90\n"
	    "observe_ms: 1500\nvariant: default\n"
	    "bait: [tickets-admin-token]\n"
	    "levers: [gateway-deny, net-disconnect]\nflaws: [");
	for (i = 0; i < m->nflaws; i++)
		util_buf_printf(&b, "%s%s", i ? ", " : "", m->flaws[i]);
	util_buf_printf(&b, "]\nmodel:\n  url: null\n  key_env: null\n"
	    "  name: ares-offline-1\n");
	if (agent_is_image(m) && m->image != NULL) {
		util_buf_printf(&b, "agent:\n  kind: image\n  image: ");
		yq(&b, m->image);
		util_buf_printf(&b, "\n");
		if (m->nentry + m->ncmd > 0) {
			util_buf_printf(&b, "  command:\n");
			for (i = 0; i < m->nentry; i++) {
				util_buf_printf(&b, "    - ");
				yq(&b, m->entry[i]);
				util_buf_printf(&b, "\n");
			}
			for (i = 0; i < m->ncmd && m->nentry + i <
			    POLICY_AGENT_ARGV_MAX; i++) {
				util_buf_printf(&b, "    - ");
				yq(&b, m->cmd[i]);
				util_buf_printf(&b, "\n");
			}
		}
		if (m->nenv > 0) {
			util_buf_printf(&b, "  env:\n");
			for (i = 0; i < m->nenv; i++) {
				const char *eq = strchr(m->env[i], '=');

				util_buf_printf(&b, "    %.*s: ",
				    (int)(eq - m->env[i]), m->env[i]);
				yq(&b, eq + 1);
				util_buf_printf(&b, "\n");
			}
		}
		if (m->user != NULL) {
			util_buf_printf(&b, "  user: ");
			yq(&b, m->user);
			util_buf_printf(&b, "\n");
		}
		if (m->workdir != NULL) {
			util_buf_printf(&b, "  workdir: ");
			yq(&b, m->workdir);
			util_buf_printf(&b, "\n");
		}
	} else if (m->o != NULL && m->o->agent != NULL &&
	    strncmp(m->o->agent, "script:", 7) == 0) {
		char *abs = realpath(m->o->agent + 7, NULL);

		util_buf_printf(&b, "agent:\n  kind: script\n  script: ");
		yq(&b, abs != NULL ? abs : m->o->agent + 7);
		util_buf_printf(&b, "\n");
		free(abs);
	} else {
		util_buf_printf(&b, "agent:\n  kind: poyo\n");
	}
	if (m->runtime != NULL)
		util_buf_printf(&b, "runtime: %s\n", m->runtime);
	util_buf_printf(&b, "imported:\n");
	if (container != NULL) {
		util_buf_printf(&b, "  container: ");
		yq(&b, container);
		util_buf_printf(&b, "\n");
	} else {
		char *dir = out_dir(m->o);
		char *rel = dir != NULL ? rel_path(dir, source_abs) :
		    xstrdup(source_abs);

		util_buf_printf(&b, "  compose: ");
		yq(&b, rel);
		util_buf_printf(&b, "\n  service: ");
		yq(&b, service);
		util_buf_printf(&b, "\n");
		free(rel);
		free(dir);
	}
	return b.s;
}

/* Free what the import collected for the policy. */
static void
imp_free(struct imp *m)
{
	size_t i;

	for (i = 0; i < m->nentry; i++)
		free(m->entry[i]);
	for (i = 0; i < m->ncmd; i++)
		free(m->cmd[i]);
	for (i = 0; i < m->nenv; i++)
		free(m->env[i]);
	free(m->image);
	free(m->user);
	free(m->workdir);
	free(m->runtime);
}

/* Check the options.  -1 + e (ERRBUF_INPUT). */
static int
check_opts(const struct import_opts *o, struct errbuf *e)
{
	if (o == NULL || o->agent == NULL || strcmp(o->agent, "image") == 0 ||
	    strcmp(o->agent, "poyo") == 0)
		return 0;
	if (strncmp(o->agent, "script:", 7) == 0 && o->agent[7] != '\0') {
		if (access(o->agent + 7, R_OK) == 0)
			return 0;
		return errbuf_set(e, ERRBUF_INPUT, "--agent: %.200s: %s",
		    o->agent + 7, strerror(errno));
	}
	return errbuf_set(e, ERRBUF_INPUT, "--agent: '%.64s' is not image, "
	    "poyo or script:FILE", o->agent);
}

/*
 * The end of an import: --strict, the policy text, its check with
 * policy_parse (the text must load).  name_for_parse labels its errors.
 */
static int
finish(struct imp *m, const char *source_abs, const char *container,
    struct errbuf *e)
{
	struct policy *p;
	char *label;
	size_t i;

	if (agent_is_image(m) && m->image == NULL && m->image_row == NULL) {
		struct span none = { 0, 0, 0 };
		char ip[IMPORT_KEY_MAX];
		struct import_row *w;

		snprintf(ip, sizeof ip, container ? "Config.Image" :
		    "services.%.128s.image", m->r->service);
		w = row_add(m, ip, "(absent)", &none);
		if (w == NULL)
			return -1;
		w->maps_to = xstrdup("agent.image");
		row_not(w, false, "no image: Poyo runs instead");
	}
	for (i = 0; i < m->r->nrows; i++)
		if (m->r->rows[i].widening && !m->r->rows[i].reproduced)
			m->r->nrefused++;
	if (m->o != NULL && m->o->strict && m->r->nrefused > 0) {
		m->r->nrefused = m->r->nrefused;
		return errbuf_set(e, ERRBUF_INPUT, "--strict: %zu widening "
		    "access%s not reproduced", m->r->nrefused,
		    m->r->nrefused == 1 ? " is" : "es are");
	}
	if (m->o == NULL || !m->o->strict)
		m->r->nrefused = 0;
	m->r->policy_yaml = policy_text(m, source_abs, m->r->source,
	    container ? NULL : m->r->service, container);
	label = m->o != NULL && m->o->out_path != NULL &&
	    strcmp(m->o->out_path, "-") != 0 ? xstrdup(m->o->out_path) :
	    xstrdup("./imported-policy.yaml");
	p = policy_parse(m->r->policy_yaml, strlen(m->r->policy_yaml), label,
	    e);
	free(label);
	if (p == NULL) {
		if (e != NULL)
			e->code = ERRBUF_INTERNAL;
		return -1;
	}
	policy_free(p);
	return 0;
}

/* ------------------------------------------------------------------ */
/* API                                                                 */
/* ------------------------------------------------------------------ */

/*
 * The files docker compose reads next to the Compose file without being
 * told (.env for interpolation, the override files it merges): never
 * read here, so a row each (not reproduced, widening) when one is there.
 * 0, or -1 + e (too many rows).
 */
static int
siblings(struct imp *m, const char *path)
{
	static const char *const names[] = { ".env", "compose.override.yaml",
	    "compose.override.yml", "docker-compose.override.yaml",
	    "docker-compose.override.yml", NULL };
	const char *slash = strrchr(path, '/');
	struct import_row *w;
	struct stat st;
	size_t i;

	for (i = 0; names[i] != NULL; i++) {
		char *f = slash != NULL ? xasprintf("%.*s/%s",
		    (int)(slash - path), path, names[i]) : xstrdup(names[i]);
		bool there = lstat(f, &st) == 0;

		free(f);
		if (!there)
			continue;
		w = row_add(m, names[i], "(next to the Compose file)", NULL);
		if (w == NULL)
			return -1;
		row_not(w, true, i == 0 ? "not read: docker compose would "
		    "merge it (it sets the variables ${...} takes, over any "
		    "default)" : "not read: docker compose would merge it");
	}
	return 0;
}

/* Import service of Compose file path (core.h).  0, or -1 + e; the
 * caller import_result_free()s out either way. */
int
import_compose(const char *path, const char *service,
    const struct import_opts *o, struct import_result *out, struct errbuf *e)
{
	const struct cnode *svcs, *svc = NULL;
	struct cnode *root;
	struct imp m;
	char spath[IMPORT_KEY_MAX], *abs = NULL;
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (check_opts(o, e) == -1)
		return -1;
	if (path == NULL || service == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "import: a Compose file and "
		    "a service are needed");
	root = compose_read(path, e);
	if (root == NULL)
		return -1;
	out->source = xstrdup(path);
	out->service = xstrdup(service);
	memset(&m, 0, sizeof m);
	m.file = path;
	m.root = root;
	m.service = service;
	m.o = o;
	m.r = out;
	m.e = e;
	if (root->kind != CN_MAP) {
		compose_err(e, path, root->line, root->col, "", "expected a "
		    "mapping with services:");
		goto out;
	}
	svcs = compose_get(root, "services");
	if (svcs == NULL || svcs->kind != CN_MAP) {
		compose_err(e, path, svcs ? svcs->line : root->line,
		    svcs ? svcs->col : root->col, "services", svcs ?
		    "expected a mapping of services" : "required key is "
		    "missing");
		goto out;
	}
	if (svcs->nkids / 2 > IMPORT_MAX_SERVICES) {
		compose_err(e, path, svcs->kids[2 * IMPORT_MAX_SERVICES]->line,
		    svcs->kids[2 * IMPORT_MAX_SERVICES]->col, "services",
		    "more than %d services", IMPORT_MAX_SERVICES);
		goto out;
	}
	for (i = 0; i + 1 < svcs->nkids; i += 2)
		if (strcmp(svcs->kids[i]->str, service) == 0)
			svc = svcs->kids[i + 1];
	if (svc == NULL) {
		struct util_buf names;

		util_buf_init(&names, 128);
		for (i = 0; i + 1 < svcs->nkids && names.len < 200; i += 2)
			util_buf_printf(&names, "%s%.40s", i ? ", " : "",
			    svcs->kids[i]->str);
		compose_err(e, path, svcs->line, svcs->col, "services",
		    "no service \"%.64s\" (services: %s)", service, names.s);
		free(names.s);
		goto out;
	}
	snprintf(spath, sizeof spath, "services.%.128s", service);
	if (svc->kind != CN_MAP) {
		compose_err(e, path, svc->line, svc->col, spath, "expected a "
		    "mapping");
		goto out;
	}
	if (map_service(&m, spath, svc) == -1)
		goto out;
	if (siblings(&m, path) == -1)
		goto out;
	abs = realpath(path, NULL);
	if (abs == NULL) {
		errbuf_set(e, ERRBUF_INPUT, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = finish(&m, abs, NULL, e);
out:
	free(abs);
	imp_free(&m);
	compose_free(root);
	return rc;
}

/* A JSON string member of o as a string, or "" (bounded by the caller's
 * row rendering). */
static const char *
jstr(const cJSON *o, const char *key)
{
	return util_json_str(o, key, "");
}

/* The strings of a JSON array into argv (at most max, malloc'd); the
 * count. */
static size_t
jargv(const cJSON *a, char **argv, size_t max)
{
	const cJSON *it;
	size_t n = 0;

	cJSON_ArrayForEach(it, a) {
		if (n >= max)
			break;
		if (cJSON_IsString(it))
			argv[n++] = xstrdup(it->valuestring);
	}
	return n;
}

#define IMPORT_MAX_MOUNTS 256

/* qsort: two inspect Mounts entries by Destination (then Source). */
static int
mount_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int c = strcmp(jstr(x, "Destination"), jstr(y, "Destination"));

	return c != 0 ? c : strcmp(jstr(x, "Source"), jstr(y, "Source"));
}

/*
 * The HostConfig fields that widen access and that the lab does not
 * build, as the Compose keys of the same meaning are (userns_mode,
 * cgroup, uts, gpus, device_cgroup_rules, volumes_from, cgroup_parent):
 * a widening row, not reproduced, each (fail closed).  -1 + e past the
 * row cap.
 */
static int
map_inspect_more(struct imp *m, const cJSON *hc)
{
	static const struct { const char *field, *host, *why; } modes[] = {
		{ "UsernsMode", "host", "the host's user namespace" },
		{ "CgroupnsMode", "host", "the host's cgroup namespace" },
		{ "UTSMode", "host", "the host's UTS namespace (hostname)" },
	};
	static const char *const lists[][2] = {
		{ "DeviceRequests", "devices requested from the host (GPUs)" },
		{ "DeviceCgroupRules", "device cgroup rules" },
		{ "VolumesFrom", "another container's volumes" },
	};
	struct import_row *w;
	char key[IMPORT_KEY_MAX + 64], why[160];
	const cJSON *a, *it;
	const char *s;
	size_t i, j;

	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		s = jstr(hc, modes[i].field);
		if (strcmp(s, modes[i].host) != 0)
			continue;
		snprintf(key, sizeof key, "HostConfig.%s", modes[i].field);
		if ((w = row_add(m, key, s, NULL)) == NULL)
			return -1;
		snprintf(why, sizeof why, "%s: the lab never shares it",
		    modes[i].why);
		row_not(w, true, why);
	}
	for (i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		a = cJSON_GetObjectItemCaseSensitive(hc, lists[i][0]);
		j = 0;
		cJSON_ArrayForEach(it, a) {
			char *shown = cJSON_IsString(it) ?
			    xstrdup(it->valuestring) : cJSON_PrintUnformatted(it);

			snprintf(key, sizeof key, "HostConfig.%s[%zu]",
			    lists[i][0], j++);
			w = row_add(m, key, shown ? shown : "?", NULL);
			free(shown);
			if (w == NULL)
				return -1;
			snprintf(why, sizeof why, "%s: the lab never passes "
			    "them", lists[i][1]);
			row_not(w, true, why);
		}
	}
	s = jstr(hc, "CgroupParent");
	if (s[0] != '\0') {
		if ((w = row_add(m, "HostConfig.CgroupParent", s, NULL)) == NULL)
			return -1;
		row_not(w, true, "a cgroup parent of the host's choosing: the "
		    "lab's containers are the engine's own");
	}
	return 0;
}

/* The container's HostConfig and Config mapped through the mappers. */
static int
map_inspect(struct imp *m, struct docker *d, const cJSON *ins)
{
	const cJSON *hc = cJSON_GetObjectItemCaseSensitive(ins, "HostConfig"),
	    *cf = cJSON_GetObjectItemCaseSensitive(ins, "Config"), *it, *a;
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(ins,
	    "NetworkSettings");
	char key[IMPORT_KEY_MAX + 160], *argv[POLICY_AGENT_ARGV_MAX];
	const cJSON *mounts[IMPORT_MAX_MOUNTS];
	struct import_row *w;
	const char *s;
	size_t i, n, nmounts;
	int rc;

	if (!cJSON_IsObject(hc) || !cJSON_IsObject(cf)) {
		errbuf_set(m->e, ERRBUF_INTERNAL, "container %s: the inspect "
		    "has no HostConfig or Config", m->service);
		return -1;
	}
	s = jstr(cf, "Image");
	if (s[0] != '\0' && map_image(m, "Config.Image", s, false, NULL) == -1)
		return -1;
	a = cJSON_GetObjectItemCaseSensitive(cf, "Entrypoint");
	if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0) {
		char *shown = cJSON_PrintUnformatted(a);

		n = jargv(a, argv, POLICY_AGENT_ARGV_MAX);
		rc = map_argv(m, "Config.Entrypoint", shown, argv, n, true,
		    false, NULL);
		cJSON_free(shown);
		while (n > 0)
			free(argv[--n]);
		if (rc == -1)
			return -1;
	}
	a = cJSON_GetObjectItemCaseSensitive(cf, "Cmd");
	if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0) {
		char *shown = cJSON_PrintUnformatted(a);

		n = jargv(a, argv, POLICY_AGENT_ARGV_MAX);
		rc = map_argv(m, "Config.Cmd", shown, argv, n, false, false,
		    NULL);
		cJSON_free(shown);
		while (n > 0)
			free(argv[--n]);
		if (rc == -1)
			return -1;
	}
	i = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(cf, "Env")) {
		char *nm, *eq;

		if (!cJSON_IsString(it))
			continue;
		snprintf(key, sizeof key, "Config.Env[%zu]", i++);
		nm = xstrdup(it->valuestring);
		eq = strchr(nm, '=');
		if (eq != NULL)
			*eq++ = '\0';
		rc = map_env(m, key, nm, eq, false, NULL);
		free(nm);
		if (rc == -1)
			return -1;
	}
	s = jstr(cf, "User");
	if (s[0] != '\0' && map_user(m, "Config.User", s, false, NULL) == -1)
		return -1;
	if (s[0] == '\0') {
		w = row_add(m, "Config.User", "(empty)", NULL);
		if (w == NULL)
			return -1;
		m->saw_user = true;
		row_note(w, "the image's own USER runs (root when the image "
		    "names none); the lab runs 65532");
	}
	w = row_add(m, "HostConfig.Privileged", cJSON_IsTrue(
	    cJSON_GetObjectItemCaseSensitive(hc, "Privileged")) ? "true" :
	    "false", NULL);
	if (w == NULL)
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hc,
	    "Privileged"))) {
		row_flaw(m, w, "privileged");
		row_partly(w, PRIV_PART);
	}
	i = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(hc, "CapAdd")) {
		if (!cJSON_IsString(it))
			continue;
		snprintf(key, sizeof key, "HostConfig.CapAdd[%zu]", i++);
		if (map_cap(m, key, it->valuestring, NULL) == -1)
			return -1;
	}
	w = row_add(m, "HostConfig.ReadonlyRootfs", cJSON_IsTrue(
	    cJSON_GetObjectItemCaseSensitive(hc, "ReadonlyRootfs")) ? "true" :
	    "false", NULL);
	if (w == NULL)
		return -1;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hc,
	    "ReadonlyRootfs"))) {
		row_flaw(m, w, "writable-rootfs");
		row_note(w, "docker's default is a writable root filesystem");
	}
	/* The engine lists Mounts in no fixed order: taken by destination,
	 * so one container always imports to the same policy. */
	nmounts = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ins,
	    "Mounts")) {
		if (nmounts == IMPORT_MAX_MOUNTS) {
			errbuf_set(m->e, ERRBUF_INPUT, "container %s: more than "
			    "%d mounts", m->service, IMPORT_MAX_MOUNTS);
			return -1;
		}
		mounts[nmounts++] = it;
	}
	qsort(mounts, nmounts, sizeof mounts[0], mount_cmp);
	for (i = 0; i < nmounts; i++) {
		const char *type, *src, *dst;

		it = mounts[i];
		type = jstr(it, "Type");
		src = jstr(it, "Source");
		dst = jstr(it, "Destination");
		char *shown = xasprintf("%s:%s (%s%s)", src, dst, type,
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "RW")) ?
		    "" : ", ro");

		snprintf(key, sizeof key, "Mounts[%zu]", i);
		rc = map_bind(m, key, shown, type, src, dst, !cJSON_IsTrue(
		    cJSON_GetObjectItemCaseSensitive(it, "RW")), NULL);
		free(shown);
		if (rc == -1)
			return -1;
	}
	s = jstr(hc, "NetworkMode");
	if (strcmp(s, "host") == 0 || strcmp(s, "none") == 0 ||
	    strncmp(s, "container:", 10) == 0) {
		if (map_netmode(m, "HostConfig.NetworkMode", s, NULL) == -1)
			return -1;
	} else {
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ns,
		    "Networks")) {
			const char *nm = it->string ? it->string : "";
			bool internal = false;
			cJSON *net;

			snprintf(key, sizeof key,
			    "NetworkSettings.Networks.%.128s", nm);
			if (strcmp(nm, "bridge") != 0) {
				net = docker_network_inspect(d, nm, m->e);
				if (net == NULL)
					return -1;
				internal = cJSON_IsTrue(
				    cJSON_GetObjectItemCaseSensitive(net,
				    "Internal"));
				cJSON_Delete(net);
			}
			if (map_network(m, key, nm, internal, false, NULL) == -1)
				return -1;
		}
		if (!m->saw_net && map_netmode(m, "HostConfig.NetworkMode",
		    s[0] ? s : "default", NULL) == -1)
			return -1;
	}
	s = jstr(hc, "PidMode");
	if (map_ns(m, "HostConfig.PidMode", "pid", s, "host-pid", NULL) == -1)
		return -1;
	s = jstr(hc, "IpcMode");
	if (map_ns(m, "HostConfig.IpcMode", "ipc", s, "host-ipc", NULL) == -1)
		return -1;
	i = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(hc,
	    "Devices")) {
		char *shown = xasprintf("%s:%s", jstr(it, "PathOnHost"),
		    jstr(it, "PathInContainer"));

		snprintf(key, sizeof key, "HostConfig.Devices[%zu]", i++);
		rc = map_device(m, key, shown, NULL);
		free(shown);
		if (rc == -1)
			return -1;
	}
	if (map_inspect_more(m, hc) == -1)
		return -1;
	i = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(hc,
	    "SecurityOpt")) {
		if (!cJSON_IsString(it))
			continue;
		snprintf(key, sizeof key, "HostConfig.SecurityOpt[%zu]", i++);
		if (map_secopt(m, key, it->valuestring, NULL) == -1)
			return -1;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(hc,
	    "Sysctls")) {
		if (!cJSON_IsString(it) || it->string == NULL)
			continue;
		snprintf(key, sizeof key, "HostConfig.Sysctls.%.128s",
		    it->string);
		if (map_sysctl(m, key, it->string, it->valuestring, NULL) == -1)
			return -1;
	}
	s = jstr(hc, "Runtime");
	if (map_runtime(m, "HostConfig.Runtime", s, NULL) == -1)
		return -1;
	return 0;
}

/* Import container name from its inspect on d (core.h).  0, or -1 + e
 * (ERRBUF_INPUT: no such container; ERRBUF_ENGINE). */
int
import_container(struct docker *d, const char *name,
    const struct import_opts *o, struct import_result *out, struct errbuf *e)
{
	struct imp m;
	cJSON *ins;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (check_opts(o, e) == -1)
		return -1;
	if (name == NULL || name[0] == '\0' || strlen(name) > 128)
		return errbuf_set(e, ERRBUF_INPUT, "--container: a container "
		    "name or id of 1..128 bytes is needed");
	ins = docker_container_inspect(d, name, e);
	if (ins == NULL) {
		if (e != NULL && e->code != ERRBUF_ENGINE)
			e->code = ERRBUF_INPUT;
		return -1;
	}
	out->source = xasprintf("container %s", name);
	out->service = xstrdup(name);
	memset(&m, 0, sizeof m);
	m.file = out->source;
	m.service = name;
	m.o = o;
	m.r = out;
	m.e = e;
	if (map_inspect(&m, d, ins) == 0)
		rc = finish(&m, NULL, name, e);
	imp_free(&m);
	cJSON_Delete(ins);
	return rc;
}

/* Free what an import filled in (not r itself); r is zeroed. */
void
import_result_free(struct import_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].key);
		free(r->rows[i].value);
		free(r->rows[i].maps_to);
		free(r->rows[i].note);
	}
	free(r->rows);
	free(r->policy_yaml);
	free(r->source);
	free(r->service);
	memset(r, 0, sizeof *r);
}

/* The mapping table, every line a YAML comment (caller frees). */
char *
import_table_text(const struct import_result *r)
{
	struct util_buf b;
	size_t i;

	util_buf_init(&b, 4096);
	if (r->source != NULL && strncmp(r->source, "container ", 10) == 0)
		util_buf_printf(&b, "# ares policy import: %s\n", r->source);
	else
		util_buf_printf(&b, "# ares policy import: %s, service %s\n",
		    r->source ? r->source : "?", r->service ? r->service :
		    "?");
	util_buf_printf(&b, "# %-5s %-44s %-34s -> %s\n", "LINE", "KEY",
	    "VALUE", "MAPS TO");
	for (i = 0; i < r->nrows; i++) {
		const struct import_row *w = &r->rows[i];
		char line[24];

		if (w->line > 0)
			snprintf(line, sizeof line, "%zu", w->line);
		else
			snprintf(line, sizeof line, "-");
		util_buf_printf(&b, "# %-5s %-44s %-34s -> ", line, w->key,
		    w->value);
		if (!w->reproduced)
			util_buf_printf(&b, "%s%s%snot reproduced: %s",
			    w->widening ? "WIDENING, " : "",
			    w->flaw != NULL && w->maps_to != NULL ? w->maps_to :
			    "", w->flaw != NULL && w->maps_to != NULL ?
			    " (its lower bound), " : "", w->note ? w->note : "?");
		else if (w->maps_to != NULL)
			util_buf_printf(&b, "%s%s%s", w->maps_to,
			    w->note ? ": " : "", w->note ? w->note : "");
		else
			util_buf_printf(&b, "no access change%s%s",
			    w->note ? ": " : "", w->note ? w->note : "");
		util_buf_printf(&b, "\n");
	}
	return b.s;
}
