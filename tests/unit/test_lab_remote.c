/*
 * test_lab_remote.c - core/lab_remote.c: what a lab on a remote engine
 * cannot have is refused by name (each flaw that needs a host path, a
 * real model.url, agent.kind image), and the default policy asks none of
 * it.  No engine needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "internal.h"

static void
refused(struct policy *p, const char *what)
{
	struct errbuf e = {0};
	assert_int_equal(lab_remote_check(p, "tcp://10.0.0.5:2376", &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, what) == NULL ||
	    strstr(e.msg, "remote engine (tcp://10.0.0.5:2376): ") != e.msg ||
	    strstr(e.msg, "; local engine only") == NULL)
		fail_msg("\"%s\" does not name %s", e.msg, what);
}

static void
test_refused(void **state)
{
	static char f1[] = "docker-socket", f2[] = "host-mount",
	    f3[] = "control-keys", ok[] = "open-dns", url[] =
	    "https://api.example/v1", k1[] = "cgroup-freeze";
	struct policy p;
	struct errbuf e = {0};
	(void)state;

	memset(&p, 0, sizeof p);
	assert_int_equal(lab_remote_check(&p, "x", &e), 0);
	/* a flaw that needs no host path passes; so do the kernel levers
	 * (they say "local engine only" themselves at prepare) */
	p.flaws[0] = ok;
	p.nflaws = 1;
	p.levers[0] = k1;
	p.nlevers = 1;
	assert_int_equal(lab_remote_check(&p, "x", &e), 0);
	p.flaws[1] = f1;
	p.nflaws = 2;
	refused(&p, "flaw docker-socket needs");
	p.flaws[1] = f2;
	refused(&p, "flaw host-mount needs the decoy host tree");
	p.flaws[1] = f3;
	refused(&p, "flaw control-keys needs");
	p.nflaws = 1;
	p.model_url = url;
	refused(&p, "a real model.url (policy) needs the host relay");
	p.model_url = NULL;
	/* the option overrides the policy: the effective url is checked,
	 * and the refusal says where it came from */
	{
		struct lab_options o = { .model_url = url };
		struct errbuf oe = {0};

		assert_int_equal(lab_remote_check_opts(&p, NULL, "x", &oe), 0);
		assert_int_equal(lab_remote_check_opts(&p, &o, "x", &oe), -1);
		assert_int_equal(oe.code, ERRBUF_INPUT);
		assert_non_null(strstr(oe.msg, "a real model.url (--model-url) "
		    "needs the host relay"));
		o.model_url = NULL;
		o.agent_idle = o.lease = true;
		o.pace_ms = 100;
		assert_int_equal(lab_remote_check_opts(&p, &o, "x", &oe), 0);
		o.weaken = LAB_WEAKEN_SYS_ADMIN;
		memset(&oe, 0, sizeof oe);
		assert_int_equal(lab_remote_check_opts(&p, &o, "x", &oe), -1);
		assert_non_null(strstr(oe.msg, "negative control"));
	}
	p.agent_kind = POLICY_AGENT_IMAGE;
	refused(&p, "agent.kind image");
	p.agent_kind = POLICY_AGENT_POYO;
	/* the tripwire bait needs inotify on this machine's copy of the
	 * home; the other bait kinds are planted through a volume */
	{
		static char b1[] = "tickets-admin-token", b2[] = "tripwire",
		    b3[] = "ssh-key";
		p.bait[0] = b1;
		p.bait[1] = b3;
		p.nbait = 2;
		assert_int_equal(lab_remote_check(&p, "x", &e), 0);
		p.bait[2] = b2;
		p.nbait = 3;
		refused(&p, "bait tripwire needs inotify on this machine's copy");
		p.nbait = 0;
	}
}

static void
test_default_policy(void **state)
{
	const char *src = getenv("ARES_SRCDIR");
	char *path = xasprintf("%s/policies/default.yaml", src ? src : ".");
	struct errbuf e = {0};
	struct policy *p = policy_load(path, &e);
	(void)state;

	if (p == NULL)
		fail_msg("%s: %s", path, e.msg);
	assert_int_equal(lab_remote_check(p, "tcp://h:2376", &e), 0);
	policy_free(p);
	free(path);
}

/* The up-front check of the commands: DOCKER_HOST unset or a unix socket
 * passes whatever the policy; a remote one refuses a docker-socket policy
 * by name and lets the default through; a DOCKER_HOST that does not parse
 * is refused. */
static void
test_policy_check(void **state)
{
	const char *src = getenv("ARES_SRCDIR");
	char *flawed = xasprintf("%s/policies/flaw-docker-socket.yaml",
	    src ? src : ".");
	char *dflt = xasprintf("%s/policies/default.yaml", src ? src : ".");
	struct errbuf e = {0};
	(void)state;

	unsetenv("DOCKER_HOST");
	assert_int_equal(lab_remote_policy_check(flawed, NULL, &e), 0);
	setenv("DOCKER_HOST", "unix:///var/run/docker.sock", 1);
	assert_int_equal(lab_remote_policy_check(flawed, NULL, &e), 0);
	setenv("DOCKER_HOST", "tcp://10.0.0.5:2376", 1);
	assert_int_equal(lab_remote_policy_check(dflt, NULL, &e), 0);
	assert_int_equal(lab_remote_policy_check(NULL, NULL, &e), 0);
	assert_int_equal(lab_remote_policy_check(flawed, NULL, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "remote engine (tcp://10.0.0.5:2376): "
	    "flaw docker-socket needs"));
	/* the command's --model-url: the default policy is then refused,
	 * with or without a policy path */
	memset(&e, 0, sizeof e);
	assert_int_equal(lab_remote_policy_check(dflt, "https://x/v1", &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "a real model.url (--model-url)"));
	memset(&e, 0, sizeof e);
	assert_int_equal(lab_remote_policy_check(NULL, "https://x/v1", &e), -1);
	assert_non_null(strstr(e.msg, "a real model.url (--model-url)"));
	unsetenv("DOCKER_HOST");
	assert_int_equal(lab_remote_policy_check(dflt, "https://x/v1", &e), 0);
	setenv("DOCKER_HOST", "tcp://10.0.0.5:2376", 1);
	memset(&e, 0, sizeof e);
	setenv("DOCKER_HOST", "ssh://u@h", 1);
	assert_int_equal(lab_remote_policy_check(flawed, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "flaw docker-socket"));
	memset(&e, 0, sizeof e);
	setenv("DOCKER_HOST", "tcp://h:99999", 1);
	assert_int_equal(lab_remote_policy_check(dflt, NULL, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	unsetenv("DOCKER_HOST");
	free(flawed);
	free(dflt);
}

/* Is name in the NULL-terminated caps? */
static bool
has_cap(const char *const *caps, const char *name)
{
	for (size_t i = 0; caps[i] != NULL; i++)
		if (strcmp(caps[i], name) == 0)
			return true;
	return false;
}

/*
 * Flaw privileged: locally a capability this process's bounding set lacks
 * (the local engine's) is left out and named; on a remote engine this
 * machine's set is not consulted: the capability is asked for, the note
 * names no "engine lacks" and says the remote set was not checked.  The
 * drop needs CAP_SETPCAP (root): in a child, so the rest keeps its set.
 */
static void
test_privileged_remote(void **state)
{
	pid_t pid;
	int st;
	(void)state;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *caps[64];
		char note[512];

		if (prctl(PR_CAPBSET_DROP, CAP_NET_BIND_SERVICE, 0, 0, 0) != 0)
			_exit(77);
		lab_caps_privileged(caps, false, note, sizeof note);
		if (has_cap(caps, "NET_BIND_SERVICE") ||
		    strstr(note, "the engine lacks NET_BIND_SERVICE") == NULL)
			_exit(1);
		lab_caps_privileged(caps, true, note, sizeof note);
		if (!has_cap(caps, "NET_BIND_SERVICE") ||
		    !has_cap(caps, "CHOWN") || has_cap(caps, "SYS_ADMIN") ||
		    strstr(note, "engine lacks") != NULL ||
		    strstr(note, "remote engine: its own bounding set was not "
		    "checked") == NULL)
			_exit(2);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();   /* not root: the bounding set cannot be dropped */
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The remote seal in words: only what was read back is said to be, the
 * bridges' missing host address is "asked, not read back", and a kernel
 * without IPv6 is the seal container's word, not "IPv6 off". */
static void
test_seal_words(void **state)
{
	static const char *const br[] = { "ares0", "ares1" };
	static const char both[] =
	    "{\"bridge\":\"ares0\",\"disable_ipv6\":\"1\",\"arp_ignore\":\"8\","
	    "\"ipv6\":true}\n{\"bridge\":\"ares1\",\"disable_ipv6\":\"1\","
	    "\"arp_ignore\":\"8\",\"ipv6\":true}\n";
	static const char none[] =
	    "{\"bridge\":\"ares0\",\"disable_ipv6\":\"\",\"arp_ignore\":\"8\","
	    "\"ipv6\":false}\n{\"bridge\":\"ares1\",\"disable_ipv6\":\"\","
	    "\"arp_ignore\":\"8\",\"ipv6\":false}\n";
	struct errbuf e = {0};
	cJSON *rec;
	char *w;
	(void)state;

	assert_int_equal(hostfw_remote_parse(both, strlen(both), br, 2, &rec,
	    &e), 0);
	w = lab_remote_seal_words(rec);
	assert_string_equal(w, "no host address asked on the bridges "
	    "(inhibit_ipv4; not read back), arp_ignore=8 and disable_ipv6=1 "
	    "read back on 2 bridge(s) by a seal container on the remote "
	    "engine; no host INPUT firewall");
	free(w);
	cJSON_Delete(rec);
	assert_int_equal(hostfw_remote_parse(none, strlen(none), br, 2, &rec,
	    &e), 0);
	w = lab_remote_seal_words(rec);
	assert_null(strstr(w, "disable_ipv6=1"));
	assert_null(strstr(w, "IPv6 and ARP answers off"));
	assert_non_null(strstr(w, "arp_ignore=8 read back on 2 bridge(s) by a "
	    "seal container on the remote engine, which said its kernel has no "
	    "IPv6 (disable_ipv6 not written); no host INPUT firewall"));
	free(w);
	cJSON_Delete(rec);
}

/* A variant whose home path does not fit a remote lab's tar names is
 * refused by its field's name (the longest name planted under it
 * counted); one that fits passes. */
static void
test_variant_paths(void **state)
{
	struct variant v;
	struct errbuf e = {0};
	char longp[128];
	(void)state;

	memset(&v, 0, sizeof v);
	v.token_path = ".config/tickets/token";
	v.git_checkout = "src/deploy-scripts";
	v.home_dirs[0] = "src";
	assert_int_equal(lab_remote_variant_check(&v, "x", &e), 0);
	/* 77 + "/.git/refs/heads/.keep" (22) = 99: fits */
	memset(longp, 'a', 77);
	longp[77] = '\0';
	v.git_checkout = longp;
	assert_int_equal(lab_remote_variant_check(&v, "x", &e), 0);
	longp[77] = 'a';
	longp[78] = '\0';
	assert_int_equal(lab_remote_variant_check(&v, "x", &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "variant field git_checkout: "));
	assert_non_null(strstr(e.msg, "is 100 bytes"));
	v.git_checkout = "src/deploy-scripts";
	memset(&e, 0, sizeof e);
	memset(longp, 'b', 100);
	longp[100] = '\0';
	v.mcp_config_file = longp;
	assert_int_equal(lab_remote_variant_check(&v, "x", &e), -1);
	assert_non_null(strstr(e.msg, "variant field mcp_config_file: "));
	v.mcp_config_file = NULL;
	memset(&e, 0, sizeof e);
	longp[99] = '\0';
	v.home_dirs[1] = longp;
	assert_int_equal(lab_remote_variant_check(&v, "x", &e), -1);
	assert_non_null(strstr(e.msg, "variant field home_dirs[1]: 99 bytes"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_policy_check),
		cmocka_unit_test(test_privileged_remote),
		cmocka_unit_test(test_seal_words),
		cmocka_unit_test(test_variant_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
