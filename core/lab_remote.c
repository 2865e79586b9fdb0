/*
 * lab_remote.c - what a lab on a remote engine cannot have (docs/engine.md,
 * "A lab on a remote engine"): the flaws and options that inherently need
 * a path or the kernel of the machine ares runs on.  Checked before
 * anything is made, so a refusal leaves nothing behind and names what was
 * refused.  What a remote lab can have is built without a host path:
 * volumes, the archive API and the engine's log stream (core/lab.c).
 */
#include "internal.h"

#include <string.h>

/* A flaw that needs a host path, and which one. */
static const struct {
	const char *flaw;
	const char *needs;
} remote_flaws[] = {
	{ "docker-socket", "the engine's socket bind-mounted into the docker "
	    "proxy and the proxy's socket directory RUN_DIR/dockerproxy into the "
	    "agent" },
	{ "host-mount", "the decoy host tree RUN_DIR/decoy-host bind-mounted "
	    "into the agent" },
	{ "control-keys", "the decoy keys RUN_DIR/decoy-ctl bind-mounted into "
	    "the agent" },
};

int
lab_remote_check(const struct policy *p, const char *where,
    struct errbuf *e)
{
	return lab_remote_check_opts(p, NULL, where, e);
}

/* Every field of struct lab_options that can add a host need is looked at
 * here (core.h): model_url (the host relay), weaken (the negative
 * control).  agent_idle, model_key_env, lease and pace_ms need no host
 * path. */
int
lab_remote_check_opts(const struct policy *p, const struct lab_options *o,
    const char *where, struct errbuf *e)
{
	/* the effective model url: the option overrides the policy */
	const char *model_url = o != NULL && o->model_url != NULL ?
	    o->model_url : p->model_url;

	for (size_t i = 0; i < p->nflaws; i++)
		for (size_t k = 0; k < sizeof remote_flaws /
		    sizeof remote_flaws[0]; k++)
			if (strcmp(p->flaws[i], remote_flaws[k].flaw) == 0)
				return errbuf_set(e, ERRBUF_INPUT, "remote engine "
				    "(%.200s): flaw %s needs %s; local engine only",
				    where, remote_flaws[k].flaw,
				    remote_flaws[k].needs);
	if (model_url != NULL)
		return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): a "
		    "real model.url (%s) needs the host relay "
		    "(RUN_DIR/ctl/relay.sock bind-mounted into the gateway); "
		    "local engine only", where, o != NULL && o->model_url != NULL ?
		    "--model-url" : "policy");
	if (o != NULL && o->weaken != LAB_WEAKEN_NONE)
		return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): the "
		    "negative control's weakenings break this machine's host "
		    "seal (its INPUT firewall, its bridges); local engine only",
		    where);
	/* the kernel levers are not refused here: they say "local engine
	 * only" themselves when prepared (lever_kernel.c), as they always
	 * have on a remote engine */
	/* the tripwire: named by its kind here; by a variant's id, lab up
	 * checks once the variant is known (the same words) */
	for (size_t i = 0; i < p->nbait; i++)
		if (strcmp(p->bait[i], "tripwire") == 0)
			return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): "
			    "bait tripwire needs " LAB_REMOTE_TRIPWIRE_NEEDS
			    "; local engine only", where);
	if (p->agent_kind == POLICY_AGENT_IMAGE)
		return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): "
		    "agent.kind image: its idle lab bind-mounts the probe helper "
		    "from this machine (core/agent_image.c); local engine only",
		    where);
	return 0;
}

/* The archive API's tar names (core/archive.c: ustar without a prefix):
 * a file's name at most 99 bytes, a folder's 98 (and its '/'). */
#define LAB_REMOTE_TAR_FILE 99
#define LAB_REMOTE_TAR_DIR  98

int
lab_remote_variant_check(const struct variant *v, const char *where,
    struct errbuf *e)
{
	/* every path of the home a variant names, with the longest name
	 * planted under it (core/lab.c's bait planting) */
	const struct {
		const char *key, *path, *longest;
	} f[] = {
		{ "notes_file", v->notes_file, "" },
		{ "token_path", v->token_path, "" },
		{ "instruction_file", v->instruction_file, "" },
		{ "tripwire_file", v->tripwire_file, "" },
		{ "cloud_creds_file", v->cloud_creds_file, "" },
		{ "cloud_config_file", v->cloud_config_file, "" },
		{ "ssh_key_file", v->ssh_key_file, ".pub" },
		{ "ssh_config_file", v->ssh_config_file, "" },
		{ "git_cred_file", v->git_cred_file, "" },
		{ "git_checkout", v->git_checkout, "/.git/refs/heads/.keep" },
		{ "mcp_config_file", v->mcp_config_file, "" },
	};
	size_t i;

	for (i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].path != NULL && strlen(f[i].path) +
		    strlen(f[i].longest) > LAB_REMOTE_TAR_FILE)
			return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): "
			    "variant field %s: its path planted as \"%.60s...%s\" "
			    "is %zu bytes, more than the %d a remote lab's tar names "
			    "hold; local engine only", where, f[i].key, f[i].path,
			    f[i].longest, strlen(f[i].path) + strlen(f[i].longest),
			    LAB_REMOTE_TAR_FILE);
	for (i = 0; i < sizeof v->home_dirs / sizeof v->home_dirs[0] &&
	    v->home_dirs[i] != NULL; i++)
		if (strlen(v->home_dirs[i]) > LAB_REMOTE_TAR_DIR)
			return errbuf_set(e, ERRBUF_INPUT, "remote engine (%.200s): "
			    "variant field home_dirs[%zu]: %zu bytes, more than the "
			    "%d a remote lab's tar names hold; local engine only",
			    where, i, strlen(v->home_dirs[i]), LAB_REMOTE_TAR_DIR);
	return 0;
}

char *
lab_remote_seal_words(const cJSON *record)
{
	const cJSON *o;
	size_t n = 0, v6 = 0;

	cJSON_ArrayForEach(o, record) {
		n++;
		if (util_json_true(o, "ipv6"))
			v6++;
	}
	return xasprintf("no host address asked on the bridges "
	    "(inhibit_ipv4; not read back), arp_ignore=8%s read back on %zu "
	    "bridge(s) by a seal container on the remote engine%s; no host "
	    "INPUT firewall", v6 == n && n > 0 ? " and disable_ipv6=1" :
	    v6 > 0 ? " (and disable_ipv6=1 where the kernel has IPv6)" : "",
	    n, v6 == n ? "" : v6 == 0 ? ", which said its kernel has no IPv6 "
	    "(disable_ipv6 not written)" : ", which said some of them have no "
	    "IPv6");
}

int
lab_remote_policy_check(const char *path, const char *model_url,
    struct errbuf *e)
{
	struct lab_options o = { .model_url = model_url };
	const char *host;
	struct policy *p;
	int rc = docker_env_remote(&host, e);

	if (rc <= 0)
		return rc;
	if (path == NULL) {
		/* no policy yet: the option alone */
		struct policy none;

		memset(&none, 0, sizeof none);
		return lab_remote_check_opts(&none, &o, host, e);
	}
	p = policy_load(path, e);
	if (p == NULL)
		return -1;
	rc = lab_remote_check_opts(p, &o, host, e);
	policy_free(p);
	return rc;
}
