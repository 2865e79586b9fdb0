/*
 * variant_yaml.c - variant files, validation and the policy's choice
 * (docs/variants.md).
 *
 * A variant file is a flat YAML mapping of the struct variant fields
 * (home_dirs a sequence); every field is optional, absent ones come from
 * variant_generate(seed).  The reader is bounded (file size, depth, scalar
 * length, key count), rejects anchors, aliases, tags and more than one
 * document, and reports "file:line:col: field: problem" (ERRBUF_INPUT).
 * variant_check() is the one validator: the generator's output, the fixed
 * table and every loaded file go through it.  variant_to_yaml() writes
 * every field (strings double-quoted and escaped) so that variant_load()
 * reads back the same variant.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <yaml.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define VARIANT_FILE_MAX    (64 * 1024)   /* bytes of a variant file */
#define VARIANT_SCALAR_MAX  8192          /* bytes of one scalar */
#define VARIANT_KEYS_MAX    128           /* keys of the mapping */
#define VARIANT_PATH_MAX    200           /* bytes of a home path */
#define VARIANT_HOME_DIRS   6

/* How a field's value is checked. */
enum vkind {
	VK_ID,        /* [a-z0-9-]{1,40} */
	VK_BAIT,      /* [a-z0-9][a-z0-9-]{0,46} */
	VK_TEXT,      /* text: printable, \n \t; 1..max */
	VK_LINE,      /* one line of text; 1..max */
	VK_HOST_IN,   /* a DNS name that looks in-house */
	VK_HOST_OUT,  /* a dotted DNS name that looks public */
	VK_DOMAIN,    /* a dotted in-house DNS suffix */
	VK_PATH,      /* a relative home path */
	VK_NAME,      /* [A-Za-z0-9._-]{1,64} */
	VK_USER,      /* [a-z_][a-z0-9_-]{0,31} */
	VK_REPO,      /* a/b of [A-Za-z0-9._-], no "..", no ".git" end */
	VK_URLPATH,   /* /[A-Za-z0-9._~/-]*, no ".." */
	VK_PREFIX,    /* [A-Za-z0-9_-]{2,16} */
	VK_KEYPREFIX, /* AKIA or ASIA */
	VK_PORT,      /* 1024..65535, not the lab's own */
	VK_BOOL,
	VK_U64,
	VK_DIRS,      /* home_dirs: up to 6 paths */
};

struct vfield {
	const char *key;
	enum vkind kind;
	size_t off;
	size_t max;       /* texts: bytes */
	bool tmpl;        /* a template: placeholders must be known */
};

#define F(k, kind, max, t) { #k, kind, offsetof(struct variant, k), max, t }
static const struct vfield vfields[] = {
	F(id, VK_ID, 40, false),
	F(held_out, VK_BOOL, 0, false),
	F(generated, VK_BOOL, 0, false),
	F(seed, VK_U64, 0, false),
	F(summary, VK_LINE, 200, false),
	F(company, VK_LINE, 64, false),
	F(domain, VK_DOMAIN, 0, false),
	F(service, VK_HOST_IN, 0, false),
	F(port, VK_PORT, 0, false),
	F(dns_alias, VK_HOST_IN, 0, false),
	F(exfil_host, VK_HOST_OUT, 0, false),
	F(hostname, VK_HOST_IN, 0, false),
	F(host_user, VK_USER, 0, false),
	F(notes_file, VK_PATH, 0, false),
	F(token_path, VK_PATH, 0, false),
	F(instruction_file, VK_PATH, 0, false),
	F(tripwire_file, VK_PATH, 0, false),
	F(home_dirs, VK_DIRS, 0, false),
	F(token_prefix, VK_PREFIX, 0, false),
	F(decoy_endpoint, VK_URLPATH, 0, false),
	F(notes, VK_TEXT, 8192, true),
	F(instruction, VK_TEXT, 4096, true),
	F(tripwire_text, VK_TEXT, 4096, true),
	F(task, VK_TEXT, 2048, true),
	F(cloud_creds_file, VK_PATH, 0, false),
	F(cloud_config_file, VK_PATH, 0, false),
	F(cloud_profile, VK_NAME, 0, false),
	F(cloud_region, VK_NAME, 0, false),
	F(cloud_host, VK_HOST_IN, 0, false),
	F(cloud_port, VK_PORT, 0, false),
	F(cloud_key_prefix, VK_KEYPREFIX, 0, false),
	F(ssh_key_file, VK_PATH, 0, false),
	F(ssh_config_file, VK_PATH, 0, false),
	F(ssh_alias, VK_NAME, 0, false),
	F(ssh_host, VK_HOST_IN, 0, false),
	F(ssh_port, VK_PORT, 0, false),
	F(ssh_user, VK_USER, 0, false),
	F(git_cred_file, VK_PATH, 0, false),
	F(git_checkout, VK_PATH, 0, false),
	F(git_host, VK_HOST_IN, 0, false),
	F(git_port, VK_PORT, 0, false),
	F(git_user, VK_USER, 0, false),
	F(git_repo, VK_REPO, 0, false),
	F(git_token_prefix, VK_PREFIX, 0, false),
	F(mcp_config_file, VK_PATH, 0, false),
	F(mcp_server, VK_NAME, 0, false),
	F(mcp_host, VK_HOST_IN, 0, false),
	F(mcp_port, VK_PORT, 0, false),
	F(mcp_path, VK_URLPATH, 0, false),
	F(mcp_tool, VK_NAME, 0, false),
	F(mcp_tool_text, VK_LINE, 512, false),
	F(hint_cloud, VK_TEXT, 1024, true),
	F(hint_ssh, VK_TEXT, 1024, true),
	F(hint_git, VK_TEXT, 1024, true),
	F(hint_mcp, VK_TEXT, 1024, true),
	F(bait_credential, VK_BAIT, 0, false),
	F(bait_instruction, VK_BAIT, 0, false),
	F(bait_tripwire, VK_BAIT, 0, false),
	F(bait_cloud, VK_BAIT, 0, false),
	F(bait_ssh, VK_BAIT, 0, false),
	F(bait_git, VK_BAIT, 0, false),
	F(bait_mcp, VK_BAIT, 0, false),
};
#undef F

#define FSTR(v, f) (*(const char *const *)(const void *)((const char *)(v) + \
	(f)->off))
#define FINT(v, f) (*(const int *)(const void *)((const char *)(v) + (f)->off))

/* ------------------------------------------------------------------ */
/* Checks of one value                                                */
/* ------------------------------------------------------------------ */

/* Whether every byte of s is in allowed. */
static bool
all_in(const char *s, const char *allowed)
{
	return s[strspn(s, allowed)] == '\0';
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGIT "0123456789"

/* Whether s is a DNS name: labels of [a-z0-9-] (1..63, no '-' at either
 * end), at most 253 bytes, the last label with a letter. */
static bool
dns_name(const char *s)
{
	size_t len = strlen(s), lab = 0;
	const char *p, *last;

	if (len == 0 || len > 253 || !all_in(s, LOWER DIGIT ".-"))
		return false;
	for (p = s; ; p++) {
		if (*p == '.' || *p == '\0') {
			if (lab == 0 || lab > 63 || p[-1] == '-' ||
			    p[-(long)lab] == '-')
				return false;
			if (*p == '\0')
				break;
			lab = 0;
		} else {
			lab++;
		}
	}
	last = strrchr(s, '.');
	last = last != NULL ? last + 1 : s;
	return strpbrk(last, LOWER) != NULL;
}

/* The offline model's reading of a host (leakbox/model.c outside_host):
 * a dotted name whose last label is not an in-house suffix and is 2..12
 * bytes long looks like the internet. */
static bool
host_outside(const char *host)
{
	static const char *const inside[] = { "internal", "local", "lan",
		"localdomain", "corp", "svc", "cluster", "home", "intranet",
		"localhost" };
	const char *dot = strrchr(host, '.');
	size_t i, tl;

	if (dot == NULL)
		return false;
	for (i = 0; i < NELEM(inside); i++)
		if (strcmp(dot + 1, inside[i]) == 0)
			return false;
	tl = strlen(dot + 1);
	return tl >= 2 && tl <= 12;
}

/* Whether s is a relative home path: components of [A-Za-z0-9._-], none
 * "." or "..", no leading or trailing '/', at most VARIANT_PATH_MAX. */
static bool
home_path(const char *s)
{
	const char *p = s;

	if (s[0] == '\0' || strlen(s) > VARIANT_PATH_MAX ||
	    !all_in(s, UPPER LOWER DIGIT "._-/"))
		return false;
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (p[n] == '\0')
			return true;
		p += n + 1;
	}
}

/* Whether s is text of 1..max bytes without control characters (line:
 * not even \n and \t). */
static bool
text_ok(const char *s, size_t max, bool line)
{
	const unsigned char *p;

	if (s[0] == '\0' || strlen(s) > max)
		return false;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if ((*p < 0x20 && (line || (*p != '\n' && *p != '\t'))) ||
		    *p == 0x7f)
			return false;
	return true;
}

/* Ports the lab uses elsewhere (gateway 8080, model 8000, DNS 53, the
 * sink's 80 and 443, a Docker API's 2375/2376). */
static bool
port_reserved(int p)
{
	return p == 53 || p == 80 || p == 443 || p == 8000 || p == 8080 ||
	    p == 2375 || p == 2376;
}

/* The unknown placeholder of template s, into out, or false when every
 * {name} ([a-z_]+ between braces) is known. */
static bool
tmpl_unknown(const char *s, char *out, size_t outlen)
{
	const char *p;

	for (p = s; (p = strchr(p, '{')) != NULL; p++) {
		size_t n = strspn(p + 1, LOWER "_");

		if (n == 0 || p[1 + n] != '}')
			continue;
		if (!variant_placeholder_known(p + 1, n)) {
			snprintf(out, outlen, "%.*s", (int)(n > 40 ? 40 : n),
			    p + 1);
			return true;
		}
	}
	return false;
}

/* Check one field's value; NULL or a static description of what is
 * wanted (msg may hold a longer one). */
static const char *
field_check(const struct variant *v, const struct vfield *f, char *msg,
    size_t msglen)
{
	const char *s = NULL;
	char name[48];
	size_t i;

	if (f->kind == VK_BOOL || f->kind == VK_U64)
		return NULL;
	if (f->kind == VK_PORT) {
		int p = FINT(v, f);

		if (p < 1024 || p > 65535)
			return "a port in 1024..65535";
		if (port_reserved(p))
			return "a port the lab does not use itself (not 53, "
			    "80, 443, 2375, 2376, 8000, 8080)";
		return NULL;
	}
	if (f->kind == VK_DIRS) {
		for (i = 0; i < VARIANT_HOME_DIRS && v->home_dirs[i] != NULL;
		    i++)
			if (!home_path(v->home_dirs[i])) {
				snprintf(msg, msglen, "home_dirs[%zu]: a relative "
				    "path of A-Z, a-z, 0-9, '.', '_', '-' and "
				    "'/' (no \"..\", at most %d bytes)", i,
				    VARIANT_PATH_MAX);
				return msg;
			}
		return NULL;
	}
	s = FSTR(v, f);
	if (s == NULL)
		return "a value (it is missing)";
	switch (f->kind) {
	case VK_ID:
		return s[0] != '\0' && strlen(s) <= f->max &&
		    all_in(s, LOWER DIGIT "-") ? NULL :
		    "an id of a-z, 0-9 and '-' (at most 40 bytes)";
	case VK_BAIT:
		return s[0] != '\0' && s[0] != '-' && strlen(s) <= 47 &&
		    all_in(s, LOWER DIGIT "-") &&
		    variant_bait_kind_find(s) == -1 ? NULL :
		    "a bait id of a-z, 0-9 and '-' (at most 47 bytes, not a "
		    "bait kind's name)";
	case VK_TEXT:
	case VK_LINE:
		if (!text_ok(s, f->max, f->kind == VK_LINE)) {
			snprintf(msg, msglen, "%s of 1..%zu bytes without "
			    "control characters", f->kind == VK_LINE ?
			    "one line" : "text", f->max);
			return msg;
		}
		if (f->tmpl && tmpl_unknown(s, name, sizeof name)) {
			snprintf(msg, msglen, "unknown placeholder {%s} (see "
			    "docs/variants.md)", name);
			return msg;
		}
		return NULL;
	case VK_HOST_IN:
		if (!dns_name(s))
			return "a DNS name of a-z, 0-9, '-' and '.'";
		return host_outside(s) ? "an in-house name (one label, or "
		    "under .internal, .corp, .lan, .intranet, ...)" : NULL;
	case VK_HOST_OUT:
		return dns_name(s) && host_outside(s) ? NULL :
		    "a dotted public-looking DNS name (not .internal, .corp, "
		    ".lan, ...)";
	case VK_DOMAIN:
		return dns_name(s) && strchr(s, '.') != NULL &&
		    !host_outside(s) ? NULL : "a dotted in-house DNS suffix "
		    "(.internal, .corp, .lan, .intranet, ...)";
	case VK_PATH:
		return home_path(s) ? NULL : "a relative path of A-Z, a-z, "
		    "0-9, '.', '_', '-' and '/' (no \"..\", at most 200 bytes)";
	case VK_NAME:
		return s[0] != '\0' && strlen(s) <= 64 &&
		    all_in(s, UPPER LOWER DIGIT "._-") ? NULL :
		    "a name of A-Z, a-z, 0-9, '.', '_' and '-' (at most 64 "
		    "bytes)";
	case VK_USER:
		return s[0] != '\0' && strlen(s) <= 32 &&
		    strchr(LOWER "_", s[0]) != NULL &&
		    all_in(s, LOWER DIGIT "_-") ? NULL :
		    "a user name of a-z, 0-9, '_' and '-' (at most 32 bytes)";
	case VK_REPO:
		if (!home_path(s) || strchr(s, '/') == NULL ||
		    (strlen(s) > 4 && strcmp(s + strlen(s) - 4, ".git") == 0))
			return "a repository path such as group/name (no "
			    "\".git\" at the end)";
		return NULL;
	case VK_URLPATH:
		return s[0] == '/' && strlen(s) <= 128 && strstr(s, "..") ==
		    NULL && strstr(s, "//") == NULL &&
		    all_in(s, UPPER LOWER DIGIT "._~/-") ? NULL :
		    "a URL path starting with '/' (A-Z, a-z, 0-9, ._~/-, no "
		    "\"..\", at most 128 bytes)";
	case VK_PREFIX:
		return strlen(s) >= 2 && strlen(s) <= 16 &&
		    all_in(s, UPPER LOWER DIGIT "_-") ? NULL :
		    "a prefix of 2..16 bytes of A-Z, a-z, 0-9, '_' and '-'";
	case VK_KEYPREFIX:
		return strcmp(s, "AKIA") == 0 || strcmp(s, "ASIA") == 0 ? NULL :
		    "AKIA or ASIA";
	default:
		return NULL;
	}
}

/* Whether the expansion of tmpl holds want (its "~/" + path or URL). */
static bool
expands_to(const struct variant *v, const char *tmpl, const char *want)
{
	char *x = variant_expand(v, tmpl);
	bool ok = strstr(x, want) != NULL;

	free(x);
	return ok;
}

/*
 * The checks across fields: distinct ports, hosts, files and bait ids, no
 * file where another path needs a folder, and the wording naming what the
 * model has to find (the service URL and the token in the notes, the
 * decoy URL in the instruction, each hint its files).  -1 with *field and
 * msg set.
 */
static int
cross_check(const struct variant *v, const char **field, char *msg,
    size_t msglen)
{
	const int ports[] = { v->port, v->cloud_port, v->ssh_port,
		v->git_port, v->mcp_port };
	static const char *const port_keys[] = { "port", "cloud_port",
		"ssh_port", "git_port", "mcp_port" };
	const char *hosts[] = { v->service, v->dns_alias, v->cloud_host,
		v->ssh_host, v->git_host, v->mcp_host, v->exfil_host };
	static const char *const host_keys[] = { "service", "dns_alias",
		"cloud_host", "ssh_host", "git_host", "mcp_host", "exfil_host" };
	static const char *const reserved[] = { "gateway", "model", "sink",
		"localhost", "decoys", "dockerproxy" };
	char pub[VARIANT_PATH_MAX + 8], gitcfg[VARIANT_PATH_MAX + 16];
	const char *files[] = { v->notes_file, v->token_path,
		v->instruction_file, v->tripwire_file, v->cloud_creds_file,
		v->cloud_config_file, v->ssh_key_file, pub, v->ssh_config_file,
		v->git_cred_file, ".gitconfig", gitcfg, v->mcp_config_file };
	static const char *const file_keys[] = { "notes_file", "token_path",
		"instruction_file", "tripwire_file", "cloud_creds_file",
		"cloud_config_file", "ssh_key_file", "ssh_key_file",
		"ssh_config_file", "git_cred_file", "git_cred_file",
		"git_checkout", "mcp_config_file" };
	const char *ids[VARIANT_NBAIT_KINDS];
	char want[512];
	size_t i, j;

	for (i = 0; i < NELEM(ports); i++)
		for (j = 0; j < i; j++)
			if (ports[i] == ports[j]) {
				*field = port_keys[i];
				snprintf(msg, msglen, "port %d is %s's too",
				    ports[i], port_keys[j]);
				return -1;
			}
	for (i = 0; i < NELEM(hosts); i++) {
		for (j = 0; j < NELEM(reserved); j++)
			if (strcmp(hosts[i], reserved[j]) == 0) {
				*field = host_keys[i];
				snprintf(msg, msglen, "'%s' is a name of the lab's "
				    "own", hosts[i]);
				return -1;
			}
		for (j = 0; j < i; j++)
			if (strcmp(hosts[i], hosts[j]) == 0) {
				*field = host_keys[i];
				snprintf(msg, msglen, "host '%s' is %s's too",
				    hosts[i], host_keys[j]);
				return -1;
			}
	}
	snprintf(pub, sizeof pub, "%s.pub", v->ssh_key_file);
	snprintf(gitcfg, sizeof gitcfg, "%s/.git/config", v->git_checkout);
	for (i = 0; i < NELEM(files); i++) {
		size_t li = strlen(files[i]);

		for (j = 0; j < NELEM(files); j++) {
			size_t lj = strlen(files[j]);

			if (j < i && strcmp(files[i], files[j]) == 0) {
				*field = file_keys[i];
				snprintf(msg, msglen, "file ~/%s is %s's too",
				    files[i], file_keys[j]);
				return -1;
			}
			if (lj > li && strncmp(files[j], files[i], li) == 0 &&
			    files[j][li] == '/') {
				*field = file_keys[i];
				snprintf(msg, msglen, "~/%s is a file, but %s needs "
				    "it as a folder", files[i], file_keys[j]);
				return -1;
			}
		}
		for (j = 0; j < VARIANT_HOME_DIRS && v->home_dirs[j] != NULL;
		    j++)
			if (strcmp(files[i], v->home_dirs[j]) == 0 ||
			    strcmp(v->git_checkout, files[i]) == 0) {
				*field = file_keys[i];
				snprintf(msg, msglen, "~/%s is a file and a folder",
				    files[i]);
				return -1;
			}
	}
	for (i = 0; i < VARIANT_NBAIT_KINDS; i++) {
		ids[i] = variant_bait_id(v, (enum variant_bait_kind)i);
		for (j = 0; j < i; j++)
			if (strcmp(ids[i], ids[j]) == 0) {
				static const char *const keys[] = {
					"bait_credential", "bait_instruction",
					"bait_tripwire", "bait_cloud", "bait_ssh",
					"bait_git", "bait_mcp" };

				*field = keys[i];
				snprintf(msg, msglen, "bait id '%s' is %s's too",
				    ids[i], keys[j]);
				return -1;
			}
	}
	/* What the model has to be able to find. */
	snprintf(want, sizeof want, "http://%s:%d", v->service, v->port);
	if (!expands_to(v, v->notes, want)) {
		*field = "notes";
		snprintf(msg, msglen, "the notes must name the service URL "
		    "({url})");
		return -1;
	}
	snprintf(want, sizeof want, "~/%s", v->token_path);
	if (!expands_to(v, v->notes, want)) {
		*field = "notes";
		snprintf(msg, msglen, "the notes must point at the token as "
		    "~/{token_path}");
		return -1;
	}
	snprintf(want, sizeof want, "http://%s:%d%s", v->service, v->port,
	    v->decoy_endpoint);
	if (!expands_to(v, v->instruction, want)) {
		*field = "instruction";
		snprintf(msg, msglen, "the instruction must name {decoy_url}");
		return -1;
	}
	{
		const char *tm[] = { v->hint_cloud, v->hint_ssh, v->hint_git,
			v->hint_mcp };
		const char *need[] = { v->cloud_creds_file, v->ssh_key_file,
			v->git_cred_file, v->mcp_config_file };
		static const char *const keys[] = { "hint_cloud", "hint_ssh",
			"hint_git", "hint_mcp" };
		static const char *const ph[] = { "cloud_creds_file",
			"ssh_key_file", "git_cred_file", "mcp_config_file" };

		for (i = 0; i < 4; i++) {
			snprintf(want, sizeof want, "~/%s", need[i]);
			if (!expands_to(v, tm[i], want)) {
				*field = keys[i];
				snprintf(msg, msglen, "the hint must point at "
				    "~/{%s}", ph[i]);
				return -1;
			}
		}
	}
	return 0;
}

/* Every check; -1 with *field and msg set. */
static int
vcheck(const struct variant *v, const char **field, char *msg,
    size_t msglen)
{
	const char *why;
	char buf[256];
	size_t i;

	for (i = 0; i < NELEM(vfields); i++) {
		why = field_check(v, &vfields[i], buf, sizeof buf);
		if (why != NULL) {
			*field = vfields[i].key;
			snprintf(msg, msglen, "want %s", why);
			return -1;
		}
	}
	return cross_check(v, field, msg, msglen);
}

/* Whether v is valid (core.h).  -1 + e ("field: problem"). */
int
variant_check(const struct variant *v, struct errbuf *e)
{
	const char *field = "";
	char msg[512];

	if (vcheck(v, &field, msg, sizeof msg) == -1)
		return errbuf_set(e, ERRBUF_INPUT, "variant '%s': %s: %s",
		    v->id != NULL ? v->id : "?", field, msg);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

/* Append s double-quoted and escaped to b. */
static void
yq(struct util_buf *b, const char *s)
{
	const unsigned char *p;

	util_buf_printf(b, "\"");
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			util_buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			util_buf_printf(b, "\\n");
		else if (*p == '\t')
			util_buf_printf(b, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			util_buf_printf(b, "\\x%02x", *p);
		else
			util_buf_printf(b, "%c", *p);
	}
	util_buf_printf(b, "\"");
}

/* Every field of v as YAML (core.h).  Caller frees. */
char *
variant_to_yaml(const struct variant *v)
{
	struct util_buf b;
	size_t i, j;

	util_buf_init(&b, 8192);
	util_buf_printf(&b, "# ares variant %s (docs/variants.md)\n", v->id);
	for (i = 0; i < NELEM(vfields); i++) {
		const struct vfield *f = &vfields[i];

		util_buf_printf(&b, "%s:", f->key);
		switch (f->kind) {
		case VK_PORT:
			util_buf_printf(&b, " %d\n", FINT(v, f));
			break;
		case VK_BOOL:
			util_buf_printf(&b, " %s\n", *(const bool *)(const void *)
			    ((const char *)v + f->off) ? "true" : "false");
			break;
		case VK_U64:
			util_buf_printf(&b, " %" PRIu64 "\n", v->seed);
			break;
		case VK_DIRS:
			if (v->home_dirs[0] == NULL) {
				util_buf_printf(&b, " []\n");
				break;
			}
			util_buf_printf(&b, "\n");
			for (j = 0; j < VARIANT_HOME_DIRS &&
			    v->home_dirs[j] != NULL; j++) {
				util_buf_printf(&b, "  - ");
				yq(&b, v->home_dirs[j]);
				util_buf_printf(&b, "\n");
			}
			break;
		default:
			util_buf_printf(&b, " ");
			yq(&b, FSTR(v, f) != NULL ? FSTR(v, f) : "");
			util_buf_printf(&b, "\n");
			break;
		}
	}
	return b.s;
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

struct vreader {
	const char *file;
	struct errbuf *e;
	struct variant *v;
	yaml_mark_t marks[NELEM(vfields)];   /* where each field was given */
	bool seen[NELEM(vfields)];
};

/* "file:line:col: field: problem" at mark m.  Returns -1. */
static int
verr(struct vreader *r, yaml_mark_t m, const char *field, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));
static int
verr(struct vreader *r, yaml_mark_t m, const char *field, const char *fmt,
    ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return errbuf_set(r->e, ERRBUF_INPUT, "%s:%zu:%zu: %s: %s", r->file,
	    (size_t)m.line + 1, (size_t)m.column + 1, field, msg);
}

/* s made terminal-safe and cut to 64 bytes for a message. */
static const char *
vshow(const char *s, size_t len, char out[72])
{
	size_t i, n = 0;

	for (i = 0; i < len && n < 64; i++)
		out[n++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' :
		    s[i];
	if (i < len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

/* The next event, or -1 + e on a syntax error (file:line:col). */
static int
vnext(struct vreader *r, yaml_parser_t *ps, yaml_event_t *ev)
{
	if (!yaml_parser_parse(ps, ev)) {
		yaml_mark_t m = ps->problem_mark;

		return verr(r, m, "(document)", "syntax error: %s",
		    ps->problem != NULL ? ps->problem : "unknown");
	}
	if (ev->type == YAML_ALIAS_EVENT ||
	    (ev->type == YAML_SCALAR_EVENT && (ev->data.scalar.anchor != NULL
	    || (ev->data.scalar.tag != NULL && !ev->data.scalar.quoted_implicit
	    && !ev->data.scalar.plain_implicit))) ||
	    (ev->type == YAML_SEQUENCE_START_EVENT &&
	    (ev->data.sequence_start.anchor != NULL ||
	    ev->data.sequence_start.tag != NULL)) ||
	    (ev->type == YAML_MAPPING_START_EVENT &&
	    (ev->data.mapping_start.anchor != NULL ||
	    ev->data.mapping_start.tag != NULL))) {
		yaml_mark_t m = ev->start_mark;

		yaml_event_delete(ev);
		return verr(r, m, "(document)", "anchors, aliases and tags are "
		    "not allowed");
	}
	if (ev->type == YAML_SCALAR_EVENT &&
	    ev->data.scalar.length > VARIANT_SCALAR_MAX) {
		yaml_mark_t m = ev->start_mark;

		yaml_event_delete(ev);
		return verr(r, m, "(document)", "scalar longer than %d bytes",
		    VARIANT_SCALAR_MAX);
	}
	return 0;
}

/* A plain scalar that YAML reads as null. */
static bool
scalar_null(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;

	return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	    strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0);
}

/* Bind one scalar value ev to field f.  -1 + e. */
static int
bind_scalar(struct vreader *r, const struct vfield *f, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	char t[72];

	if (memchr(s, '\0', len) != NULL)
		return verr(r, ev->start_mark, f->key, "NUL byte in the value");
	switch (f->kind) {
	case VK_PORT: {
		char *end;
		long n;

		if (!plain || len == 0 || len > 5 || !all_in(s, DIGIT) ||
		    (len > 1 && s[0] == '0'))
			return verr(r, ev->start_mark, f->key, "expected a port "
			    "number, got \"%s\"", vshow(s, len, t));
		n = strtol(s, &end, 10);
		*(int *)(void *)((char *)r->v + f->off) = (int)n;
		return 0;
	}
	case VK_BOOL:
		if (!plain || (strcmp(s, "true") != 0 && strcmp(s, "false") != 0))
			return verr(r, ev->start_mark, f->key, "expected true or "
			    "false, got \"%s\"", vshow(s, len, t));
		*(bool *)(void *)((char *)r->v + f->off) = s[0] == 't';
		return 0;
	case VK_U64: {
		uint64_t n = 0;
		size_t i;

		if (!plain || len == 0 || len > 20 || !all_in(s, DIGIT) ||
		    (len > 1 && s[0] == '0'))
			return verr(r, ev->start_mark, f->key, "expected an "
			    "integer, got \"%s\"", vshow(s, len, t));
		for (i = 0; i < len; i++) {
			if (n > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
				return verr(r, ev->start_mark, f->key, "%s is "
				    "out of range", vshow(s, len, t));
			n = n * 10 + (uint64_t)(s[i] - '0');
		}
		r->v->seed = n;
		return 0;
	}
	case VK_DIRS:
		return verr(r, ev->start_mark, f->key, "expected a sequence, "
		    "got a scalar");
	default:
		if (scalar_null(ev))
			return verr(r, ev->start_mark, f->key, "expected a "
			    "string, got null");
		*(const char **)(void *)((char *)r->v + f->off) =
		    variant_keep(r->v, xstrndup(s, len));
		return 0;
	}
}

/* home_dirs: a sequence of at most VARIANT_HOME_DIRS scalars (the
 * sequence start already read).  -1 + e. */
static int
bind_dirs(struct vreader *r, yaml_parser_t *ps, const struct vfield *f)
{
	yaml_event_t ev;
	size_t n = 0;

	memset(r->v->home_dirs, 0, sizeof r->v->home_dirs);
	for (;;) {
		if (vnext(r, ps, &ev) == -1)
			return -1;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			yaml_mark_t m = ev.start_mark;

			yaml_event_delete(&ev);
			return verr(r, m, "home_dirs", "expected a sequence of "
			    "paths (nested deeper than 2 levels)");
		}
		if (n == VARIANT_HOME_DIRS) {
			yaml_mark_t m = ev.start_mark;

			yaml_event_delete(&ev);
			return verr(r, m, f->key, "more than %d folders",
			    VARIANT_HOME_DIRS);
		}
		if (scalar_null(&ev)) {
			yaml_mark_t m = ev.start_mark;

			yaml_event_delete(&ev);
			return verr(r, m, f->key, "expected a path, got null");
		}
		r->v->home_dirs[n++] = variant_keep(r->v, xstrndup(
		    (const char *)ev.data.scalar.value, ev.data.scalar.length));
		yaml_event_delete(&ev);
	}
}

/* The mapping's pairs (its start already read).  -1 + e. */
static int
read_map(struct vreader *r, yaml_parser_t *ps)
{
	yaml_event_t ev;
	size_t nkeys = 0, i;
	char t[72];

	for (;;) {
		const struct vfield *f = NULL;
		yaml_mark_t km;
		int rc;

		if (vnext(r, ps, &ev) == -1)
			return -1;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		km = ev.start_mark;
		if (ev.type != YAML_SCALAR_EVENT) {
			yaml_event_delete(&ev);
			return verr(r, km, "(document)", "mapping keys must be "
			    "scalars");
		}
		if (++nkeys > VARIANT_KEYS_MAX) {
			yaml_event_delete(&ev);
			return verr(r, km, "(document)", "more than %d keys",
			    VARIANT_KEYS_MAX);
		}
		for (i = 0; i < NELEM(vfields); i++)
			if (strlen(vfields[i].key) == ev.data.scalar.length &&
			    memcmp(vfields[i].key, ev.data.scalar.value,
			    ev.data.scalar.length) == 0)
				f = &vfields[i];
		if (f == NULL) {
			vshow((const char *)ev.data.scalar.value,
			    ev.data.scalar.length, t);
			yaml_event_delete(&ev);
			return verr(r, km, t, "unknown key (see docs/variants.md)");
		}
		yaml_event_delete(&ev);
		i = (size_t)(f - vfields);
		if (r->seen[i])
			return verr(r, km, f->key, "duplicate key (first at "
			    "%zu:%zu)", (size_t)r->marks[i].line + 1,
			    (size_t)r->marks[i].column + 1);
		if (vnext(r, ps, &ev) == -1)
			return -1;
		r->seen[i] = true;
		r->marks[i] = ev.start_mark;
		if (ev.type == YAML_SCALAR_EVENT) {
			rc = bind_scalar(r, f, &ev);
		} else if (ev.type == YAML_SEQUENCE_START_EVENT &&
		    f->kind == VK_DIRS) {
			rc = bind_dirs(r, ps, f);
		} else {
			rc = verr(r, ev.start_mark, f->key, "expected %s, got "
			    "a %s", f->kind == VK_DIRS ? "a sequence" :
			    "a scalar", ev.type == YAML_MAPPING_START_EVENT ?
			    "mapping" : "sequence");
		}
		yaml_event_delete(&ev);
		if (rc == -1)
			return -1;
	}
}

/* Parse buf into r->v.  -1 + e. */
static int
read_doc(struct vreader *r, const char *buf, size_t len)
{
	yaml_parser_t ps;
	yaml_event_t ev;
	yaml_mark_t start = { 0, 0, 0 };
	int rc = -1, docs = 0;
	bool mapped = false;

	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	if (!yaml_parser_initialize(&ps))
		util_fatal("libyaml: cannot initialise the parser");
	yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
	yaml_parser_set_encoding(&ps, YAML_UTF8_ENCODING);
	for (;;) {
		if (vnext(r, &ps, &ev) == -1)
			goto out;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			yaml_event_delete(&ev);
			if (!mapped) {
				verr(r, start, "(document)", "empty document: a "
				    "variant is a mapping of fields (see "
				    "docs/variants.md)");
				goto out;
			}
			rc = 0;
			goto out;
		case YAML_DOCUMENT_START_EVENT:
			start = ev.start_mark;
			if (++docs > 1) {
				verr(r, ev.start_mark, "(document)", "only one "
				    "document is allowed");
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_MAPPING_START_EVENT:
			yaml_event_delete(&ev);
			if (read_map(r, &ps) == -1)
				goto out;
			mapped = true;
			continue;
		case YAML_SCALAR_EVENT:
			if (scalar_null(&ev))
				break;
			/* FALLTHROUGH */
		case YAML_SEQUENCE_START_EVENT:
			verr(r, ev.start_mark, "(document)", "expected a mapping "
			    "of fields, got a %s", ev.type == YAML_SCALAR_EVENT ?
			    "scalar" : "sequence");
			yaml_event_delete(&ev);
			goto out;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
out:
	yaml_parser_delete(&ps);
	return rc;
}

/*
 * A file may not pass for a dressing it is not.  A shipped variant's id,
 * a generator's id ("gen-...") and "generated: true" are accepted only for
 * the very variant they name, field for field (what the lab writes to
 * RUN_DIR/variant.yaml for such a run); else the probes, the fix loop and
 * the trial would take the file for that dressing.  A file that gives no
 * id gets "file-<12 hex of BLAKE2b of its dressing>", never the id of the
 * generated variant its missing fields came from.  -1 + e at the id (or
 * "generated") field.
 */
static int
vload_identity(struct vreader *r)
{
	const struct variant *ref = NULL;
	struct variant *gen = NULL;
	size_t idi = 0, geni = 0, i;
	unsigned long long want;
	char *a, *b;
	bool same;
	int rc = 0;

	for (i = 0; i < NELEM(vfields); i++) {
		if (strcmp(vfields[i].key, "id") == 0)
			idi = i;
		if (strcmp(vfields[i].key, "generated") == 0)
			geni = i;
	}
	if (!r->seen[idi] && !r->seen[geni]) {
		/* Both left to the seed: the generated variant itself only
		 * when nothing else differs either. */
		gen = variant_generate(r->v->seed);
		a = variant_to_yaml(r->v);
		b = variant_to_yaml(gen);
		same = strcmp(a, b) == 0;
		free(a);
		free(b);
		variant_free(gen);
		if (same)
			return 0;
	}
	if (!r->seen[geni])
		r->v->generated = false;
	if (!r->seen[idi] && !r->v->generated) {
		uint8_t h[6];
		char hex[2 * sizeof h + 1];

		r->v->id = "";
		a = variant_to_yaml(r->v);
		crypto_generichash(h, sizeof h, (const unsigned char *)a,
		    strlen(a), NULL, 0);
		free(a);
		util_hex(h, sizeof h, hex);
		r->v->id = variant_keep(r->v, xasprintf("file-%s", hex));
		return 0;
	}
	if (variant_find(r->v->id) != NULL)
		ref = variant_find(r->v->id);
	else if (r->v->generated || strncmp(r->v->id, "gen-", 4) == 0) {
		/* the seed the id claims ("gen-<16 hex>"), else the file's */
		const char *hx = r->v->id + 4;
		char *end = NULL;
		unsigned long long claimed = r->v->seed;

		if (strncmp(r->v->id, "gen-", 4) == 0) {
			claimed = strlen(hx) == 16 && all_in(hx, DIGIT "abcdef") ?
			    strtoull(hx, &end, 16) : 0;
			if (end == NULL || *end != '\0') {
				verr(r, r->marks[idi], "id", "'%s': ids starting "
				    "with \"gen-\" are the generator's "
				    "(gen-<16 hex digits of the seed>)", r->v->id);
				return -1;
			}
		}
		gen = variant_generate((uint64_t)claimed);
		ref = gen;
	} else
		return 0;
	a = variant_to_yaml(r->v);
	b = variant_to_yaml(ref);
	same = strcmp(a, b) == 0;
	want = (unsigned long long)ref->seed;
	free(a);
	free(b);
	if (!same) {
		bool by_id = r->seen[idi] && (gen == NULL ||
		    strncmp(r->v->id, "gen-", 4) == 0);

		yaml_mark_t m = by_id ? r->marks[idi] : r->marks[geni];
		const char *key = by_id ? "id" : "generated";

		if (gen == NULL)
			verr(r, m, key, "'%s' is a shipped variant's id: a file "
			    "names its own dressing (give it another id)",
			    r->v->id);
		else
			verr(r, m, key, "a generated dressing (gen-%016llx, seed "
			    "%llu) must be exactly what the generator makes for "
			    "its seed; a file that differs names its own id and "
			    "leaves generated out", want, want);
		rc = -1;
	}
	variant_free(gen);
	return rc;
}

/* A YAML variant file (core.h).  NULL + e. */
struct variant *
variant_load(const char *path, uint64_t seed, struct errbuf *e)
{
	struct vreader r;
	struct variant *gen;
	const char *field = "";
	char *buf, msg[512];
	size_t len, i;

	buf = util_read_input(path, "variant", VARIANT_FILE_MAX, &len, e);
	if (buf == NULL)
		return NULL;
	memset(&r, 0, sizeof r);
	r.file = path;
	r.e = e;
	r.v = variant_new_owned();
	/* The file's fields land on an empty variant first: its own seed
	 * (if any) picks the dressing of what it leaves out. */
	r.v->seed = seed;
	if (read_doc(&r, buf, len) == -1) {
		free(buf);
		variant_free(r.v);
		return NULL;
	}
	free(buf);
	gen = variant_generate(r.v->seed);
	for (i = 0; i < NELEM(vfields); i++) {
		const struct vfield *f = &vfields[i];
		char *d = (char *)r.v + f->off;
		const char *s = (const char *)gen + f->off;

		if (r.seen[i])
			continue;
		switch (f->kind) {
		case VK_PORT:
			memcpy(d, s, sizeof(int));
			break;
		case VK_BOOL:
			/* generated: what the file does not say is
			 * generated; held_out: false */
			memcpy(d, s, sizeof(bool));
			break;
		case VK_U64:
			break;
		case VK_DIRS: {
			size_t j;

			for (j = 0; j < VARIANT_HOME_DIRS &&
			    gen->home_dirs[j] != NULL; j++)
				r.v->home_dirs[j] = variant_keep(r.v,
				    xstrdup(gen->home_dirs[j]));
			break;
		}
		default:
			*(const char **)(void *)d = variant_keep(r.v,
			    xstrdup(*(const char *const *)(const void *)s));
			break;
		}
	}
	variant_free(gen);
	if (vcheck(r.v, &field, msg, sizeof msg) == -1) {
		yaml_mark_t m = { 0, 0, 0 };

		for (i = 0; i < NELEM(vfields); i++)
			if (strcmp(vfields[i].key, field) == 0 && r.seen[i])
				m = r.marks[i];
		verr(&r, m, field, "%s", msg);
		variant_free(r.v);
		return NULL;
	}
	if (vload_identity(&r) == -1) {
		variant_free(r.v);
		return NULL;
	}
	return r.v;
}

/* The variant a policy names (core.h).  NULL + e. */
const struct variant *
variant_for_policy(const struct policy *p, uint64_t run_seed,
    struct errbuf *e)
{
	uint64_t seed = p->variant_seed_set ? p->variant_seed : run_seed;
	const struct variant *v;
	struct variant *own = NULL;
	char known[512];
	size_t i;

	if (p->variant_file != NULL) {
		v = own = variant_load(p->variant_file, seed, e);
		if (v == NULL)
			return NULL;
	} else if (strcmp(p->variant, "generated") == 0) {
		v = own = variant_generate(seed);
	} else {
		v = variant_find(p->variant);
		if (v == NULL) {
			errbuf_set(e, ERRBUF_INPUT, "%s: variant: unknown "
			    "variant '%s' (known: %s, generated, FILE.yaml)",
			    p->path, p->variant, variant_ids());
			return NULL;
		}
		return v;
	}
	/* A generated or loaded dressing: the policy's bait must name its
	 * kinds or its ids (fail closed: nothing is silently not planted). */
	for (i = 0; i < p->nbait; i++)
		if (variant_bait_kind_find(p->bait[i]) == -1 &&
		    !variant_has_bait(v, p->bait[i])) {
			errbuf_set(e, ERRBUF_INPUT, "%s: bait[%zu]: unknown bait "
			    "'%s' for variant '%s' (known: %s; or a bait kind)",
			    p->path, i, p->bait[i], v->id,
			    variant_bait_ids(v, known, sizeof known));
			variant_free(own);
			return NULL;
		}
	return v;
}
