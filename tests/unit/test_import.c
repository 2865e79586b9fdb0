/*
 * test_import.c - ares policy import from Compose files (core/compose.c,
 * core/import.c): the files in tests/data/compose/ together cover every
 * mapped key (both syntaxes where Compose has two); each is imported, the
 * policy text is loaded with policy_load, and the flaws, the agent fields
 * and the rows (maps_to, reproduced, widening, spans) are checked.  Bad
 * input names file:line:col and the key; an alias bomb is refused; a
 * credential never reaches the policy or the table; --strict refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"

#define DATA ARES_SRCDIR "/tests/data/compose/"

static char tmpdir[] = "/tmp/ares-test-import.XXXXXX";

/* Write text to the scratch folder as name; the path (static buffer). */
static const char *
scratch(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Import file's service (must succeed), write the policy into the
 * scratch folder and load it with policy_load (must succeed). */
static struct policy *
import_ok(const char *file, const char *service, const char *agent,
    struct import_result *r)
{
	struct import_opts o = { .agent = agent };
	struct errbuf e = { 0 };
	struct policy *p;
	char out[512];
	FILE *f;

	snprintf(out, sizeof out, "%s/%s.yaml", tmpdir, service);
	o.out_path = out;
	if (import_compose(file, service, &o, r, &e) != 0)
		fail_msg("import %s %s: %s", file, service, e.msg);
	assert_non_null(r->policy_yaml);
	f = fopen(out, "w");
	assert_non_null(f);
	fputs(r->policy_yaml, f);
	fclose(f);
	p = policy_load(out, &e);
	if (p == NULL)
		fail_msg("policy_load: %s\n%s", e.msg, r->policy_yaml);
	return p;
}

/* The row with key path key (fails when absent). */
static const struct import_row *
row(const struct import_result *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (strcmp(r->rows[i].key, key) == 0)
			return &r->rows[i];
	fail_msg("no row %s", key);
	return NULL;
}

/* The row with key path key, or NULL. */
static const struct import_row *
row_find(const struct import_result *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (strcmp(r->rows[i].key, key) == 0)
			return &r->rows[i];
	return NULL;
}

/* The row maps to flaw (reproduced, widening) at line:col..end_line. */
static void
row_flaw(const struct import_result *r, const char *key, const char *flaw,
    size_t line, size_t col, size_t end_line)
{
	const struct import_row *w = row(r, key);
	char want[64];

	snprintf(want, sizeof want, "flaw %s", flaw);
	assert_non_null(w->flaw);
	assert_string_equal(w->flaw, flaw);
	assert_string_equal(w->maps_to, want);
	if (!w->reproduced)
		fail_msg("%s: not reproduced (%s)", key, w->note);
	assert_true(w->widening);
	assert_int_equal(w->line, line);
	assert_int_equal(w->col, col);
	assert_int_equal(w->end_line, end_line);
}

/* The row keeps flaw as a lower bound but is reproduced only in part
 * (not reproduced, widening, said in the note) at line:col..end_line. */
static void
row_part(const struct import_result *r, const char *key, const char *flaw,
    size_t line, size_t col, size_t end_line)
{
	const struct import_row *w = row(r, key);

	assert_non_null(w->flaw);
	assert_string_equal(w->flaw, flaw);
	assert_false(w->reproduced);
	assert_true(w->widening);
	assert_non_null(w->note);
	assert_non_null(strstr(w->note, "reproduced only in part: "));
	assert_int_equal(w->line, line);
	assert_int_equal(w->col, col);
	assert_int_equal(w->end_line, end_line);
}

/* The row changes no access (reproduced, not widening, no flaw). */
static void
row_none(const struct import_result *r, const char *key)
{
	const struct import_row *w = row(r, key);

	assert_null(w->flaw);
	assert_null(w->maps_to);
	assert_true(w->reproduced);
	assert_false(w->widening);
}

/* The row is not reproduced; widening as given. */
static void
row_not(const struct import_result *r, const char *key, bool widening)
{
	const struct import_row *w = row(r, key);

	assert_null(w->flaw);
	assert_false(w->reproduced);
	assert_int_equal(w->widening, widening);
	assert_non_null(w->note);
}

/* The policy's flaws are exactly want (NULL-terminated, in order). */
static void
flaws_are(const struct policy *p, const char *const *want)
{
	size_t n = 0;

	for (n = 0; want[n] != NULL; n++) {
		if (n >= p->nflaws)
			fail_msg("flaw %zu: want %s, policy has %zu", n,
			    want[n], p->nflaws);
		assert_string_equal(p->flaws[n], want[n]);
	}
	assert_int_equal(p->nflaws, n);
}

/* s never appears in the policy text nor in the table. */
static void
never_shown(const struct import_result *r, const char *s)
{
	char *t = import_table_text(r);

	assert_null(strstr(r->policy_yaml, s));
	assert_null(strstr(t, s));
	free(t);
}

static void
test_socket(void **state)
{
	struct import_result r;
	struct policy *p;
	char *abs;
	static const char *const flaws[] = { "root-user", "real-key",
	    "docker-socket", "host-mount", "control-keys", "writable-rootfs",
	    "egress-network", NULL };

	(void)state;
	p = import_ok(DATA "socket.yml", "agent", NULL, &r);
	flaws_are(p, flaws);
	assert_int_equal(p->agent_kind, POLICY_AGENT_IMAGE);
	assert_string_equal(p->agent_image, "ares-lab:local");
	assert_int_equal(p->agent_ncommand, 3);
	assert_string_equal(p->agent_command[0], "/bin/agent");
	assert_string_equal(p->agent_command[2], "{task}");
	assert_int_equal(p->agent_nenv, 2);
	assert_string_equal(p->agent_env[0], "LOG_LEVEL=debug");
	assert_string_equal(p->agent_env[1], "WORKSPACE=/work");  /* :-default */
	assert_null(p->agent_user);
	assert_null(p->runtime);
	/* imported: resolved back to the Compose file. */
	abs = realpath(DATA "socket.yml", NULL);
	assert_non_null(abs);
	assert_string_equal(p->import_compose, abs);
	assert_string_equal(p->import_service, "agent");
	assert_null(p->import_container);
	free(abs);

	assert_string_equal(row(&r, "services.agent.image")->maps_to,
	    "agent.image");
	row_flaw(&r, "services.agent.user", "root-user", 6, 5, 6);
	row_flaw(&r, "services.agent.environment.OPENAI_API_KEY", "real-key",
	    8, 7, 8);
	assert_string_equal(row(&r,
	    "services.agent.environment.OPENAI_API_KEY")->value,
	    "OPENAI_API_KEY=<redacted>");
	never_shown(&r, "sk-abcdefghijklmnopqrstuvwxyz012345");
	never_shown(&r, "abcdefghijklmnopqrstuvwxyz012345");
	/* ${HOME} stays unresolved, never read from the environment. */
	row_not(&r, "services.agent.environment.HOST_HOME", false);
	assert_null(strstr(r.policy_yaml, "HOST_HOME"));
	if (getenv("HOME") != NULL && strlen(getenv("HOME")) > 1)
		assert_null(strstr(r.policy_yaml, getenv("HOME")));
	row_flaw(&r, "services.agent.volumes[0]", "docker-socket", 13, 9, 13);
	row_part(&r, "services.agent.volumes[1]", "host-mount", 14, 9, 14);
	row_flaw(&r, "services.agent.volumes[2]", "control-keys", 15, 9, 15);
	row_none(&r, "services.agent.volumes[3]");           /* named */
	row_flaw(&r, "services.agent.volumes[4]", "host-mount", 17, 9, 20);
	row_none(&r, "services.agent.volumes[5]");           /* tmpfs */
	row_none(&r, "services.agent.ports");
	assert_non_null(strstr(row(&r, "services.agent.ports")->note,
	    "publish inward"));
	row_none(&r, "services.agent.restart");
	/* Docker's defaults: a writable root and the default network. */
	row_flaw(&r, "services.agent.read_only", "writable-rootfs", 0, 0, 0);
	row_flaw(&r, "services.agent.networks", "egress-network", 0, 0, 0);
	assert_int_equal(r.nrefused, 0);
	policy_free(p);
	import_result_free(&r);
}

static void
test_caps(void **state)
{
	struct import_opts o = { .strict = true };
	struct import_result r;
	struct errbuf e = { 0 };
	struct policy *p;
	static const char *const flaws[] = { "privileged", "writable-rootfs",
	    "extra-caps", "egress-network", "real-key", NULL };

	(void)state;
	p = import_ok(DATA "caps.yml", "worker", NULL, &r);
	flaws_are(p, flaws);
	/* entrypoint (a string) then command (a string), shell words. */
	assert_int_equal(p->agent_ncommand, 5);
	assert_string_equal(p->agent_command[0], "/usr/bin/env");
	assert_string_equal(p->agent_command[1], "python3");
	assert_string_equal(p->agent_command[2], "agent.py");
	assert_string_equal(p->agent_command[4], "{task}");
	assert_string_equal(p->agent_user, "1000:1000");
	assert_int_equal(p->agent_nenv, 1);
	assert_string_equal(p->agent_env[0], "DEBUG=1");
	row_part(&r, "services.worker.privileged", "privileged", 8, 5, 8);
	row_flaw(&r, "services.worker.read_only", "writable-rootfs", 9, 5, 9);
	row_flaw(&r, "services.worker.cap_add[0]", "extra-caps", 11, 9, 11);
	row_flaw(&r, "services.worker.cap_add[1]", "extra-caps", 12, 9, 12);
	row_part(&r, "services.worker.cap_add[2]", "privileged", 13, 9, 13);
	row_part(&r, "services.worker.network_mode", "egress-network", 14, 5,
	    14);
	assert_non_null(strstr(row(&r, "services.worker.network_mode")->note,
	    "never real"));
	row_not(&r, "services.worker.security_opt[0]", true);   /* apparmor */
	assert_non_null(strstr(row(&r, "services.worker.security_opt[0]")->note,
	    "no AppArmor"));
	row_not(&r, "services.worker.security_opt[1]", true);   /* nnp:false */
	row_not(&r, "services.worker.security_opt[2]", true);   /* label */
	row_not(&r, "services.worker.devices[0]", true);
	row_none(&r, "services.worker.sysctls.net.ipv4.ip_forward");
	row_not(&r, "services.worker.sysctls.vm.swappiness", true);
	row_flaw(&r, "services.worker.environment[0]", "real-key", 25, 9, 25);
	row_flaw(&r, "services.worker.environment[3]", "real-key", 28, 9, 28);
	row_not(&r, "services.worker.environment[2]", false);   /* PASSTHRU */
	never_shown(&r, "ghp_abcdefghijklmnopqrstuvwxyz0123456789");
	never_shown(&r, "xoxb-123456789012-abcdefghijkl");
	policy_free(p);
	import_result_free(&r);

	/* --strict: the five widening accesses the lab does not make, and
	 * the three it reproduces only in part (privileged, SYS_ADMIN,
	 * network_mode host). */
	assert_int_equal(import_compose(DATA "caps.yml", "worker", &o, &r, &e),
	    -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_int_equal(r.nrefused, 8);
	assert_null(r.policy_yaml);
	assert_non_null(strstr(e.msg, "--strict: 8 widening accesses"));
	import_result_free(&r);
}

static void
test_networks(void **state)
{
	struct import_opts o = { .strict = true };
	struct import_result r;
	struct errbuf e = { 0 };
	struct policy *p;
	static const char *const flaws[] = { "egress-network", "control-keys",
	    NULL };

	(void)state;
	p = import_ok(DATA "networks.yml", "bot", NULL, &r);
	flaws_are(p, flaws);
	assert_string_equal(p->agent_image, "registry.local:5000/bot@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_string_equal(p->agent_user, "1000:1000");
	assert_string_equal(p->agent_workdir, "/home/bot");
	assert_string_equal(p->runtime, "runsc");
	assert_string_equal(row(&r, "services.bot.runtime")->maps_to,
	    "runtime");
	row_none(&r, "services.bot.read_only");
	row_flaw(&r, "services.bot.networks[0]", "egress-network", 12, 9, 12);
	row_none(&r, "services.bot.networks[1]");              /* internal */
	row_flaw(&r, "services.bot.secrets[0]", "control-keys", 15, 9, 15);
	row_flaw(&r, "services.bot.secrets[1]", "control-keys", 16, 9, 17);
	row_none(&r, "services.bot.sysctls[0]");
	row_none(&r, "services.bot.sysctls[1]");
	row_none(&r, "services.bot.build");
	assert_non_null(strstr(row(&r, "services.bot.build")->note,
	    "never builds or pulls"));
	row_none(&r, "services.bot.cap_drop");
	row_none(&r, "services.bot.depends_on");
	row_none(&r, "services.bot.healthcheck");
	row_none(&r, "services.bot.labels");
	row_none(&r, "services.bot.container_name");
	row_none(&r, "services.bot.logging");
	row_none(&r, "services.bot.deploy");
	row_none(&r, "services.bot.x-note");
	row_not(&r, "services.bot.frobnicate", true);
	assert_string_equal(row(&r, "services.bot.frobnicate")->note,
	    "unknown key");
	policy_free(p);
	import_result_free(&r);

	assert_int_equal(import_compose(DATA "networks.yml", "bot", &o, &r,
	    &e), -1);
	assert_int_equal(r.nrefused, 1);
	import_result_free(&r);
}

static void
test_anchors(void **state)
{
	struct import_result r;
	struct policy *p;
	static const char *const flaws[] = { "real-key", NULL };
	static const char *const none[] = { NULL };

	(void)state;
	/* <<: *common brings read_only, user and environment; the
	 * service's own user wins; networks: *lan is an internal one. */
	p = import_ok(DATA "anchors.yml", "agent", NULL, &r);
	flaws_are(p, flaws);
	assert_string_equal(p->agent_user, "3000:3000");
	assert_int_equal(p->agent_nenv, 1);
	assert_string_equal(p->agent_env[0], "MODE=prod");
	row_none(&r, "services.agent.read_only");
	row_none(&r, "services.agent.networks.lan");
	/* A merged key's span is where it is written: the anchor. */
	assert_int_equal(row(&r, "services.agent.read_only")->line, 3);
	assert_non_null(strstr(row(&r, "services.agent.read_only")->note,
	    "anchor"));
	row_flaw(&r, "services.agent.environment.API_TOKEN", "real-key", 7, 5,
	    7);
	policy_free(p);
	import_result_free(&r);

	/* The other service: environment: *env, user from the anchor. */
	p = import_ok(DATA "anchors.yml", "other", NULL, &r);
	assert_string_equal(p->agent_user, "2000:2000");
	assert_string_equal(p->agent_image, "busybox");
	row_flaw(&r, "services.other.networks", "egress-network", 0, 0, 0);
	policy_free(p);
	import_result_free(&r);
	(void)none;
}

static void
test_none(void **state)
{
	struct import_result r;
	struct policy *p;
	static const char *const flaws[] = { "root-user", "extra-caps",
	    "docker-socket", "control-keys", NULL };

	(void)state;
	p = import_ok(DATA "none.yml", "sealed", NULL, &r);
	flaws_are(p, flaws);
	/* entrypoint and command lists; $$ is a '$'. */
	assert_int_equal(p->agent_ncommand, 3);
	assert_string_equal(p->agent_command[0], "/bin/sh");
	assert_string_equal(p->agent_command[2], "echo $HOME {task}");
	row_none(&r, "services.sealed.network_mode");
	row_flaw(&r, "services.sealed.user", "root-user", 8, 5, 8);
	row_none(&r, "services.sealed.privileged");
	row_none(&r, "services.sealed.runtime");
	assert_null(p->runtime);
	row_flaw(&r, "services.sealed.cap_add[0]", "extra-caps", 12, 15, 12);
	row_none(&r, "services.sealed.security_opt[0]");
	row_none(&r, "services.sealed.tmpfs");
	row_flaw(&r, "services.sealed.volumes[0]", "docker-socket", 16, 9, 16);
	row_none(&r, "services.sealed.volumes[1]");
	row_flaw(&r, "services.sealed.volumes[2]", "control-keys", 20, 9, 20);
	row_part(&r, "services.sealed.volumes[3]", "control-keys", 21, 9, 21);
	policy_free(p);
	import_result_free(&r);
}

static void
test_misc(void **state)
{
	struct import_opts o = { .strict = true };
	struct import_result r;
	struct errbuf e = { 0 };
	struct policy *p;
	static const char *const odd[] = { "host-mount", "writable-rootfs",
	    NULL };
	static const char *const bridged[] = { "egress-network",
	    "writable-rootfs", NULL };
	static const char *const outside[] = { "egress-network",
	    "writable-rootfs", NULL };

	(void)state;
	p = import_ok(DATA "misc.yml", "odd", NULL, &r);
	flaws_are(p, odd);
	/* ${IMAGE} stays unresolved: Poyo runs. */
	assert_int_equal(p->agent_kind, POLICY_AGENT_POYO);
	row_not(&r, "services.odd.image", false);
	row_not(&r, "services.odd.user", false);          /* a name */
	assert_null(p->agent_user);
	row_not(&r, "services.odd.working_dir", false);   /* relative */
	row_not(&r, "services.odd.uts", true);
	row_not(&r, "services.odd.userns_mode", true);
	row_none(&r, "services.odd.cgroup");              /* private */
	row_not(&r, "services.odd.env_file", true);
	row_not(&r, "services.odd.volumes_from", true);
	row_not(&r, "services.odd.gpus", true);
	row_flaw(&r, "services.odd.configs[0]", "host-mount", 14, 15, 14);	/* file: */
	row_none(&r, "services.odd.expose");
	row_none(&r, "services.odd.hostname");
	row_none(&r, "services.odd.stop_signal");
	row_none(&r, "services.odd.init");
	row_none(&r, "services.odd.pull_policy");
	row_none(&r, "services.odd.dns");
	row_none(&r, "services.odd.extra_hosts");
	row_none(&r, "services.odd.group_add");
	row_not(&r, "services.odd.runtime", true);        /* kata */
	row_not(&r, "services.odd.security_opt[0]", true); /* a profile */
	row_not(&r, "services.odd.cap_add[0]", true);     /* no such cap */
	row_not(&r, "services.odd.network_mode", true);   /* service:x */
	row_not(&r, "services.odd.pid", true);            /* service:x */
	row_none(&r, "services.odd.ipc");                 /* private */
	row_part(&r, "services.odd.volumes[0]", "host-mount", 30, 9, 30);
	assert_non_null(strstr(row(&r, "services.odd.volumes[0]")->note,
	    "whole root"));
	row_not(&r, "services.odd.volumes[1]", true);     /* npipe */
	policy_free(p);
	import_result_free(&r);
	assert_int_equal(import_compose(DATA "misc.yml", "odd", &o, &r, &e),
	    -1);
	assert_int_equal(r.nrefused, 12);	/* and the root mount */
	import_result_free(&r);

	p = import_ok(DATA "misc.yml", "bridged", NULL, &r);
	flaws_are(p, bridged);
	row_flaw(&r, "services.bridged.network_mode", "egress-network", 36, 5,
	    36);
	row_not(&r, "services.bridged.user", true);       /* ${UID}: fail closed */
	policy_free(p);
	import_result_free(&r);

	p = import_ok(DATA "misc.yml", "outside", NULL, &r);
	flaws_are(p, outside);
	row_flaw(&r, "services.outside.networks[0]", "egress-network", 40, 16,
	    40);                                          /* external */
	row_flaw(&r, "services.outside.networks[1]", "egress-network", 40, 21,
	    40);                                          /* default */
	policy_free(p);
	import_result_free(&r);

	p = import_ok(DATA "misc.yml", "other", NULL, &r);
	row_flaw(&r, "services.other.networks", "egress-network", 43, 5, 43);
	policy_free(p);
	import_result_free(&r);

	o.strict = false;
	o.agent = "script:/nonexistent/attack.sh";
	assert_int_equal(import_compose(DATA "misc.yml", "other", &o, &r, &e),
	    -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_string_equal(e.msg, "--agent: /nonexistent/attack.sh: No such "
	    "file or directory");
	import_result_free(&r);
}

static void
test_hostns(void **state)
{
	struct import_result r;
	struct policy *p;
	static const char *const flaws[] = { "host-pid", "host-ipc",
	    "seccomp-unconfined", NULL };

	(void)state;
	if (flaw_find("host-pid") == NULL || flaw_find("host-ipc") == NULL ||
	    flaw_find("seccomp-unconfined") == NULL)
		skip();     /* the catalogue does not have them yet */
	p = import_ok(DATA "hostns.yml", "debug", NULL, &r);
	flaws_are(p, flaws);
	row_flaw(&r, "services.debug.pid", "host-pid", 8, 5, 8);
	row_flaw(&r, "services.debug.ipc", "host-ipc", 9, 5, 9);
	row_flaw(&r, "services.debug.security_opt[0]", "seccomp-unconfined",
	    11, 9, 11);
	row_flaw(&r, "services.debug.security_opt[1]", "seccomp-unconfined",
	    12, 9, 12);
	policy_free(p);
	import_result_free(&r);
}

static void
test_agents(void **state)
{
	struct import_result r;
	struct policy *p;
	const char *script;
	char agent[600];

	(void)state;
	/* --agent poyo: the same containment, Poyo inside it. */
	p = import_ok(DATA "socket.yml", "agent", "poyo", &r);
	assert_int_equal(p->agent_kind, POLICY_AGENT_POYO);
	assert_null(p->agent_image);
	assert_true(policy_has_flaw(p, "docker-socket"));
	row_not(&r, "services.agent.image", false);
	row_not(&r, "services.agent.environment.LOG_LEVEL", false);
	never_shown(&r, "sk-abcdefghijklmnopqrstuvwxyz012345");
	policy_free(p);
	import_result_free(&r);

	script = scratch("attack.sh", "#!/bin/sh\necho hi\n");
	snprintf(agent, sizeof agent, "script:%s", script);
	p = import_ok(DATA "caps.yml", "worker", agent, &r);
	assert_int_equal(p->agent_kind, POLICY_AGENT_SCRIPT);
	assert_true(policy_has_flaw(p, "privileged"));
	policy_free(p);
	import_result_free(&r);
}

/* Import text (as name in the scratch folder) must fail with want
 * after the "PATH:" prefix. */
/* Accesses beyond what the lab builds keep their flaw as a lower bound
 * but are not reproduced: CHOWN stays reproduced, SYS_ADMIN, privileged,
 * a read-write host mount, a mount of / and network_mode host do not. */
static void
test_partly(void **state)
{
	struct import_result r;
	struct policy *p;
	char *t;
	static const char *const flaws[] = { "privileged", "host-mount",
	    "egress-network", "writable-rootfs", NULL };

	(void)state;
	p = import_ok(scratch("partly.yml", "services:\n  a:\n"
	    "    image: busybox\n"
	    "    privileged: true\n"
	    "    cap_add: [CHOWN, SYS_ADMIN, cap_sys_module]\n"
	    "    volumes:\n"
	    "      - ./src:/src:ro\n"
	    "      - ./src:/src2\n"
	    "      - /:/host:ro\n"
	    "    network_mode: host\n"), "a", NULL, &r);
	flaws_are(p, flaws);
	row_part(&r, "services.a.privileged", "privileged", 4, 5, 4);
	row_flaw(&r, "services.a.cap_add[0]", "privileged", 5, 15, 5);
	row_part(&r, "services.a.cap_add[1]", "privileged", 5, 22, 5);
	row_part(&r, "services.a.cap_add[2]", "privileged", 5, 33, 5);
	row_flaw(&r, "services.a.volumes[0]", "host-mount", 7, 9, 7);
	row_part(&r, "services.a.volumes[1]", "host-mount", 8, 9, 8);
	assert_non_null(strstr(row(&r, "services.a.volumes[1]")->note,
	    "writing to the host is not reproduced"));
	row_part(&r, "services.a.volumes[2]", "host-mount", 9, 9, 9);
	row_part(&r, "services.a.network_mode", "egress-network", 10, 5, 10);
	t = import_table_text(&r);
	assert_non_null(strstr(t, "-> WIDENING, flaw host-mount (its lower "
	    "bound), not reproduced: "));
	free(t);
	policy_free(p);
	import_result_free(&r);
}

/* A value that took an interpolation default is unresolved for access
 * keys (not reproduced, widening), kept with a note for the others; a
 * .env or an override file next to the Compose file gets a row. */
static void
test_defaults(void **state)
{
	struct import_result r;
	struct policy *p;
	const struct import_row *w;
	char dir[600], file[700];

	(void)state;
	snprintf(dir, sizeof dir, "%s/defaults", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof file, "%s/compose.yml", dir);
	scratch("defaults/compose.yml", "services:\n  a:\n"
	    "    image: ${IMG:-busybox}\n"
	    "    privileged: ${PRIV:-false}\n"
	    "    pid: ${PIDMODE-private}\n"
	    "    cap_add: [\"${CAP:?set CAP}\"]\n"
	    "    read_only: ${RO:-true}\n"
	    "    volumes: [\"${SOCK:-/tmp/x}:/var/run/docker.sock\"]\n"
	    "    environment: {MODE: \"${MODE:-fast}\"}\n");
	p = import_ok(file, "a", NULL, &r);
	assert_string_equal(p->agent_image, "busybox");
	assert_non_null(strstr(row(&r, "services.a.image")->note,
	    "default taken"));
	assert_true(row(&r, "services.a.image")->reproduced);
	assert_string_equal(p->agent_env[0], "MODE=fast");
	assert_non_null(strstr(row(&r, "services.a.environment.MODE")->note,
	    "default taken"));
	row_not(&r, "services.a.privileged", true);
	assert_non_null(strstr(row(&r, "services.a.privileged")->note,
	    "default taken; .env or the environment may override it"));
	row_not(&r, "services.a.pid", true);
	row_not(&r, "services.a.read_only", true);
	w = row(&r, "services.a.cap_add[0]");
	assert_false(w->reproduced);
	assert_true(w->widening);
	w = row(&r, "services.a.volumes[0]");
	assert_false(w->reproduced);
	assert_true(w->widening);
	assert_non_null(strstr(w->note, "default taken"));
	assert_null(row_find(&r, ".env"));
	policy_free(p);
	import_result_free(&r);

	scratch("defaults/.env", "PRIV=true\n");
	scratch("defaults/docker-compose.override.yml", "services: {}\n");
	p = import_ok(file, "a", NULL, &r);
	row_not(&r, ".env", true);
	row_not(&r, "docker-compose.override.yml", true);
	assert_non_null(strstr(row(&r, "docker-compose.override.yml")->note,
	    "not read: docker compose would merge it"));
	assert_null(row_find(&r, "compose.override.yaml"));
	policy_free(p);
	import_result_free(&r);
}

/* Named volumes follow their top-level definition (a bind through
 * driver_opts is a bind), configs/secrets with file: are host files,
 * deploy's reserved devices are a device. */
static void
test_named(void **state)
{
	struct import_result r;
	struct policy *p;
	static const char *const flaws[] = { "host-mount", "docker-socket",
	    "control-keys", "writable-rootfs", "egress-network", NULL };

	(void)state;
	p = import_ok(scratch("named.yml", "services:\n  a:\n"
	    "    image: busybox\n"
	    "    volumes:\n"
	    "      - hostroot:/host\n"
	    "      - {type: volume, source: sock, target: /s}\n"
	    "      - data:/data\n"
	    "      - ext:/e\n"
	    "      - nfs:/n\n"
	    "      - plug:/p\n"
	    "    configs: [keys]\n"
	    "    secrets: [eng]\n"
	    "    deploy:\n"
	    "      resources:\n"
	    "        reservations:\n"
	    "          devices: [{capabilities: [gpu]}]\n"
	    "volumes:\n"
	    "  hostroot: {driver: local, driver_opts: {type: none, o: bind, "
	    "device: /}}\n"
	    "  sock: {driver_opts: {type: none, o: bind, device: "
	    "/var/run/docker.sock}}\n"
	    "  data: {}\n"
	    "  ext: {external: true}\n"
	    "  nfs: {driver_opts: {type: nfs, o: addr=10.0.0.1, device: "
	    "\":/x\"}}\n"
	    "  plug: {driver: rexray}\n"
	    "configs:\n  keys: {file: /home/u/.ssh/id_rsa}\n"
	    "secrets:\n  eng: {file: /run/docker.sock}\n"), "a", NULL, &r);
	flaws_are(p, flaws);
	row_part(&r, "services.a.volumes[0]", "host-mount", 5, 9, 5);
	assert_non_null(strstr(row(&r, "services.a.volumes[0]")->note,
	    "driver_opts o=bind"));
	row_flaw(&r, "services.a.volumes[1]", "docker-socket", 6, 9, 6);
	row_none(&r, "services.a.volumes[2]");
	row_not(&r, "services.a.volumes[3]", true);
	row_not(&r, "services.a.volumes[4]", true);
	row_not(&r, "services.a.volumes[5]", true);
	row_flaw(&r, "services.a.configs[0]", "control-keys", 11, 15, 11);
	row_flaw(&r, "services.a.secrets[0]", "docker-socket", 12, 15, 12);
	row_none(&r, "services.a.deploy");
	row_not(&r, "services.a.deploy.resources.reservations.devices", true);
	policy_free(p);
	import_result_free(&r);
}

/* Credentials the name heuristics miss: URL user-info, Authorization
 * values, webhook URLs, argv words after --token and the like. */
static void
test_cred_shapes(void **state)
{
	struct import_result r;
	struct policy *p;
	static const char *const secret[] = { "hunter2pass", "abcdefghijklm",
	    "T000/B000/XXXXXXXX", "123/abcwebhook", "s3cr3tTOKENvalue",
	    "apikeyVALUE42", "pw4ssw0rd", NULL };
	size_t i;

	(void)state;
	p = import_ok(scratch("cred.yml", "services:\n  a:\n"
	    "    image: busybox\n"
	    "    command: [agent, --token, s3cr3tTOKENvalue, --api-key=apikeyVALUE42, "
	    "--mode, fast, --password]\n"
	    "    entrypoint: \"run --secret pw4ssw0rd\"\n"
	    "    environment:\n"
	    "      DATABASE_URL: postgres://admin:hunter2pass@db:5432/prod\n"
	    "      AUTH_HEADER: \"Bearer abcdefghijklmnop\"\n"
	    "      SLACK_WEBHOOK: https://hooks.slack.com/services/T000/B000/XXXXXXXX\n"
	    "      HOOK: https://discord.com/api/webhooks/123/abcwebhook\n"
	    "      PLAIN_URL: https://example.com/a@b\n"
	    "      USER_URL: https://someone@example.com/\n"), "a", NULL, &r);
	assert_true(policy_has_flaw(p, "real-key"));
	row_flaw(&r, "services.a.environment.DATABASE_URL", "real-key", 7, 7, 7);
	row_flaw(&r, "services.a.environment.AUTH_HEADER", "real-key", 8, 7, 8);
	row_flaw(&r, "services.a.environment.SLACK_WEBHOOK", "real-key", 9, 7,
	    9);
	row_flaw(&r, "services.a.environment.HOOK", "real-key", 10, 7, 10);
	assert_string_equal(row(&r, "services.a.environment.PLAIN_URL")->maps_to,
	    "agent.env.PLAIN_URL");
	assert_string_equal(row(&r, "services.a.environment.USER_URL")->maps_to,
	    "agent.env.USER_URL");
	row_flaw(&r, "services.a.command (credential)", "real-key", 4, 5, 4);
	row_flaw(&r, "services.a.entrypoint (credential)", "real-key", 5, 5, 5);
	assert_string_equal(row(&r, "services.a.command")->value,
	    "[agent, --token, <redacted>, --api-key=<redacted>, --mode, fast, "
	    "--password]");
	/* entrypoint then command; the options and their values dropped */
	assert_int_equal(p->agent_ncommand, 4);
	assert_string_equal(p->agent_command[0], "run");
	assert_string_equal(p->agent_command[1], "agent");
	assert_string_equal(p->agent_command[2], "--mode");
	assert_string_equal(p->agent_command[3], "fast");
	for (i = 0; secret[i] != NULL; i++)
		never_shown(&r, secret[i]);
	policy_free(p);
	import_result_free(&r);
}

static void
expect_error(const char *name, const char *text, const char *service,
    const char *want)
{
	struct import_result r;
	struct errbuf e = { 0 };
	const char *path = scratch(name, text);
	char full[1024];

	if (import_compose(path, service, NULL, &r, &e) == 0)
		fail_msg("%s imported, want %s", name, want);
	assert_int_equal(e.code, ERRBUF_INPUT);
	snprintf(full, sizeof full, "%s:%s", path, want);
	assert_string_equal(e.msg, full);
	assert_null(r.policy_yaml);
	import_result_free(&r);
}

static void
test_errors(void **state)
{
	struct util_buf b;
	int i, j;

	(void)state;
	expect_error("net.yml", "services:\n  s:\n    image: x\n"
	    "    networks: [lan, nope]\nnetworks:\n  lan: {}\n", "s",
	    "4:21: services.s.networks[1]: network \"nope\" is not defined "
	    "under the top-level networks:");
	expect_error("bool.yml", "services:\n  s:\n    privileged: maybe\n",
	    "s", "3:17: services.s.privileged: expected true or false, got "
	    "\"maybe\"");
	expect_error("dup.yml", "services:\n  s:\n    image: a\n    image: b\n",
	    "s", "4:5: services.s: duplicate key \"image\" (first at 3:5)");
	/* a NUL or another C0 byte in any mapping key (a service name
	 * "agent\0" standing in for agent, a service key). */
	expect_error("nulkey.yml", "services:\n  agent:\n    privileged: "
	    "true\n  \"agent\\0\":\n    read_only: true\n", "agent",
	    "4:3: services: a mapping key holds the control byte 0x00");
	expect_error("c0key.yml", "services:\n  agent:\n    \"user\\x01\": "
	    "x\n", "agent", "3:5: services.agent: a mapping key holds the "
	    "control byte 0x01");
	expect_error("nosvc.yml", "services:\n  a: {}\n  b: {}\n", "c",
	    "2:3: services: no service \"c\" (services: a, b)");
	expect_error("vol.yml", "services:\n  s:\n    volumes:\n"
	    "      - /a:/b\n      - {source: /x, target: /y}\n", "s",
	    "5:9: services.s.volumes[1].type: required key is missing");
	expect_error("volmap.yml", "services:\n  s:\n    volumes: /a:/b\n",
	    "s", "3:14: services.s.volumes: expected a sequence");
	expect_error("secret.yml", "services:\n  s:\n    secrets: [k]\n", "s",
	    "3:15: services.s.secrets[0]: secret \"k\" is not defined under "
	    "the top-level secrets:");
	expect_error("syntax.yml", "services:\n  s: [a\n", "s",
	    "3:1: services.s[1]: syntax error: did not find expected ',' or "
	    "']'");
	expect_error("empty.yml", "# nothing\n", "s",
	    "1:1: (document): empty document: a Compose file is a mapping "
	    "with services:");
	expect_error("alias.yml", "services:\n  s:\n    image: *nope\n", "s",
	    "3:12: services.s.image: alias *nope names no complete anchor "
	    "before it");
	expect_error("merge.yml", "services:\n  s:\n    <<: 3\n", "s",
	    "3:9: services.s: a merge key (<<) takes a mapping or a sequence "
	    "of mappings");
	expect_error("self.yml", "x: &a [1, *a]\nservices: {}\n", "s",
	    "1:11: x[1]: alias *a names no complete anchor before it");
	expect_error("env.yml", "services:\n  s:\n    environment: 3\n", "s",
	    "3:18: services.s.environment: expected a mapping or a sequence");
	expect_error("cmd.yml", "services:\n  s:\n    command: \"a 'b\"\n", "s",
	    "3:14: services.s.command: an unbalanced quote or more than 64 "
	    "words");

	/* An alias bomb: ten levels of ten aliases each is 10^10 nodes;
	 * the expansion stops at the cap, at the alias that crossed it. */
	util_buf_init(&b, 4096);
	util_buf_printf(&b, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (i = 1; i < 10; i++) {
		util_buf_printf(&b, "a%d: &a%d [", i, i);
		for (j = 0; j < 10; j++)
			util_buf_printf(&b, "%s*a%d", j ? ", " : "", i - 1);
		util_buf_printf(&b, "]\n");
	}
	util_buf_printf(&b, "services:\n  s:\n    image: x\n");
	expect_error("bomb.yml", b.s, "s", "5:10: a4[0]: more than 20000 nodes "
	    "(aliases count as the nodes they expand to)");
	free(b.s);

	/* A merge source that is itself an anchor stays usable after the
	 * merge; merges count their copies: a merge bomb stops too. */
	{
		struct import_result r;
		struct errbuf e = { 0 };
		const char *path = scratch("mergeanchor.yml", "services:\n"
		    "  a:\n    <<: &m {image: busybox, privileged: true}\n"
		    "    read_only: true\n  b:\n    <<: *m\n"
		    "    x: *m\n");

		if (import_compose(path, "b", NULL, &r, &e) != 0)
			fail_msg("%s", e.msg);
		row_part(&r, "services.b.privileged", "privileged", 3, 29, 3);
		row_not(&r, "services.b.x", true);
		import_result_free(&r);
	}
	util_buf_init(&b, 4096);
	util_buf_printf(&b, "m0: &m0 {");
	for (j = 0; j < 40; j++)
		util_buf_printf(&b, "%sk%d: v", j ? ", " : "", j);
	util_buf_printf(&b, "}\n");
	for (i = 1; i < 400; i++)
		util_buf_printf(&b, "m%d: &m%d {<<: *m%d, q%d: v}\n", i, i,
		    i - 1, i);
	util_buf_printf(&b, "services: {}\n");
	{
		struct import_result r;
		struct errbuf e = { 0 };
		const char *path = scratch("mbomb.yml", b.s);

		assert_int_equal(import_compose(path, "s", NULL, &r, &e), -1);
		assert_non_null(strstr(e.msg, "more than 20000 nodes"));
		import_result_free(&r);
	}
	free(b.s);

	/* The copies a merge makes count too (6000 pairs written, 6000
	 * copied): refused in the merge, the mapping left whole. */
	util_buf_init(&b, 65536);
	util_buf_printf(&b, "services:\n  s:\n    image: x\n    <<: {");
	for (j = 0; j < 6000; j++)
		util_buf_printf(&b, "%sk%d: v", j ? ", " : "", j);
	util_buf_printf(&b, "}\n");
	{
		struct import_result r;
		struct errbuf e = { 0 };
		const char *path = scratch("mcopy.yml", b.s);

		free(b.s);
		assert_int_equal(import_compose(path, "s", NULL, &r, &e), -1);
		/* at the source key whose copy crossed the cap */
		assert_non_null(strstr(e.msg, "mcopy.yml:4:"));
		assert_non_null(strstr(e.msg, ": services.s: more than 20000 "
		    "nodes"));
		import_result_free(&r);
	}

	/* Deep nesting through aliases stays within the depth bound. */
	util_buf_init(&b, 4096);
	util_buf_printf(&b, "d: &d ");
	for (i = 0; i < 20; i++)
		util_buf_printf(&b, "[");
	for (i = 0; i < 20; i++)
		util_buf_printf(&b, "]");
	util_buf_printf(&b, "\ne: [[[[[[[[[[[[[[[*d]]]]]]]]]]]]]]]\n");
	expect_error("deep.yml", b.s, "s", "2:19: e[0][0][0][0][0][0][0][0]"
	    "[0][0][0][0][0][0][0]: alias *d would nest deeper than 32 levels");
	free(b.s);
}

/* The bound on the file size is checked before reading. */
static void
test_big(void **state)
{
	struct import_result r;
	struct errbuf e = { 0 };
	const char *path;
	char *big = xmalloc(COMPOSE_MAX_BYTES + 16);

	(void)state;
	memset(big, '#', COMPOSE_MAX_BYTES + 8);
	big[COMPOSE_MAX_BYTES + 8] = '\0';
	path = scratch("big.yml", big);
	free(big);
	assert_int_equal(import_compose(path, "s", NULL, &r, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	assert_non_null(strstr(e.msg, "the limit is 1048576"));
	import_result_free(&r);
}

/* imported: compose with service, or container; nothing else. */
static void
test_policy_key(void **state)
{
	struct errbuf e = { 0 };
	struct policy *p;
	const char *base = "name: t\nbait: [tickets-admin-token]\n"
	    "levers: [kill]\n";
	char text[512];

	(void)state;
	snprintf(text, sizeof text, "%simported:\n  container: agent-1\n",
	    base);
	p = policy_parse(text, strlen(text), "/x/t.yaml", &e);
	assert_non_null(p);
	assert_string_equal(p->import_container, "agent-1");
	assert_null(p->import_compose);
	policy_free(p);
	snprintf(text, sizeof text, "%simported:\n  compose: c.yml\n"
	    "  service: s\n", base);
	p = policy_parse(text, strlen(text), "/nonexistent/dir/t.yaml", &e);
	assert_non_null(p);
	assert_string_equal(p->import_compose, "/nonexistent/dir/c.yml");
	assert_string_equal(p->import_service, "s");
	policy_free(p);
	snprintf(text, sizeof text, "%simported:\n  compose: c.yml\n"
	    "  container: x\n", base);
	assert_null(policy_parse(text, strlen(text), "t.yaml", &e));
	assert_string_equal(e.msg, "t.yaml:5:3: imported: name either compose "
	    "(with service) or container");
	snprintf(text, sizeof text, "%simported:\n  compose: c.yml\n", base);
	assert_null(policy_parse(text, strlen(text), "t.yaml", &e));
	assert_string_equal(e.msg, "t.yaml:5:3: imported: compose needs its "
	    "service");
	snprintf(text, sizeof text, "%simported:\n  where: x\n", base);
	assert_null(policy_parse(text, strlen(text), "t.yaml", &e));
	assert_string_equal(e.msg, "t.yaml:5:3: imported.where: unknown key; "
	    "allowed here: compose, service, container");
}

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_networks),
		cmocka_unit_test(test_anchors),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_misc),
		cmocka_unit_test(test_hostns),
		cmocka_unit_test(test_agents),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_big),
		cmocka_unit_test(test_partly),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_cred_shapes),
		cmocka_unit_test(test_policy_key),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
