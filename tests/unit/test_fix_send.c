/*
 * test_fix_send.c - the fix loop's text surgery and message hygiene,
 * without Docker or a network: the Compose file edit (fix_compose_remove
 * on spans given here, and fix_compose_patch through import_compose on
 * real files), the model's text rendered inert (fix_model_render), Slack
 * text (fix_slack_text), secrets redacted (fix_redact_secrets), and the
 * policy copies of the fix dir (fix_policy_carry, fix_policy_pin_paths).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* One span. */
static struct fix_span
span(size_t line, size_t col, size_t end, const char *key)
{
	struct fix_span s = { .line = line, .col = col, .end_line = end };

	snprintf(s.key, sizeof s.key, "%s", key);
	return s;
}

static const char compose[] =
    "# sandbox\n"                                            /* 1 */
    "services:\n"                                            /* 2 */
    "  agent:\n"                                             /* 3 */
    "    image: x\n"                                         /* 4 */
    "    privileged: true   # needed?\n"                     /* 5 */
    "    volumes:\n"                                         /* 6 */
    "      - /var/run/docker.sock:/var/run/docker.sock\n"    /* 7 */
    "      - ./src:/src\n"                                   /* 8 */
    "      - type: bind\n"                                   /* 9 */
    "        source: /etc\n"                                 /* 10 */
    "        target: /host-etc\n"                            /* 11 */
    "    cap_add:\n"                                         /* 12 */
    "    - SYS_ADMIN\n"                                      /* 13 */
    "    pid: host\n"                                        /* 14 */
    "    security_opt: [seccomp=unconfined, no-new-privileges]\n" /* 15 */
    "networks: {}\n";                                        /* 16 */

/* A sequence item goes with its line; its siblings and comments stay. */
static void
test_remove_item(void **state)
{
	struct fix_span s = span(7, 9, 7, "services.agent.volumes[0]");
	char why[256], *out;

	(void)state;
	out = fix_compose_remove(compose, &s, 1, why, sizeof why);
	assert_non_null(out);
	assert_null(strstr(out, "docker.sock"));
	assert_non_null(strstr(out, "    volumes:\n      - ./src:/src\n"));
	assert_non_null(strstr(out, "privileged: true   # needed?\n"));
	assert_int_equal(strlen(out), strlen(compose) -
	    strlen("      - /var/run/docker.sock:/var/run/docker.sock\n"));
	free(out);
}

/* A long-syntax item takes its deeper lines; a mapping entry its line;
 * the last item of a compact sequence takes its bare key. */
static void
test_remove_entries(void **state)
{
	struct fix_span s[3] = {
		span(9, 9, 9, "services.agent.volumes[2]"),
		span(5, 5, 5, "services.agent.privileged"),
		span(13, 7, 13, "services.agent.cap_add[0]"),
	};
	char why[256], *out;

	(void)state;
	out = fix_compose_remove(compose, s, 3, why, sizeof why);
	assert_non_null(out);
	assert_null(strstr(out, "/host-etc"));
	assert_null(strstr(out, "source: /etc"));
	assert_null(strstr(out, "privileged"));
	assert_null(strstr(out, "cap_add"));
	assert_null(strstr(out, "SYS_ADMIN"));
	assert_non_null(strstr(out, "      - ./src:/src\n    pid: host\n"));
	free(out);
}

/* Every item of a block sequence gone: the key goes too. */
static void
test_remove_last_items(void **state)
{
	struct fix_span s[3] = {
		span(7, 9, 7, "services.agent.volumes[0]"),
		span(8, 9, 8, "services.agent.volumes[1]"),
		span(9, 9, 9, "services.agent.volumes[2]"),
	};
	char why[256], *out;

	(void)state;
	out = fix_compose_remove(compose, s, 3, why, sizeof why);
	assert_non_null(out);
	assert_null(strstr(out, "volumes"));
	assert_non_null(strstr(out, "# needed?\n    cap_add:\n"));
	free(out);
}

/* What is not whole lines is refused, with why: a flow item, an absent
 * key (line 0), a span past the file. */
static void
test_remove_refused(void **state)
{
	struct fix_span flow = span(15, 20, 15,
	    "services.agent.security_opt[0]");
	struct fix_span absent = span(0, 0, 0, "services.agent.networks");
	struct fix_span past = span(99, 1, 99, "services.agent.x");
	char why[256];

	(void)state;
	assert_null(fix_compose_remove(compose, &flow, 1, why, sizeof why));
	assert_non_null(strstr(why, "flow style"));
	assert_null(fix_compose_remove(compose, &absent, 1, why, sizeof why));
	assert_non_null(strstr(why, "absent key"));
	assert_null(fix_compose_remove(compose, &past, 1, why, sizeof why));
}

/* Write text to dir/name.  The path (caller frees). */
static char *
put(const char *dir, const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct errbuf e = { 0 };

	assert_int_equal(util_write_file(p, text, strlen(text), 0644, &e), 0);
	return p;
}

/* Through import_compose: the socket volume and privileged cut from a
 * real file, the patched file imported again (every other flaw kept);
 * an access the default gives (egress through the implicit network) is
 * refused. */
static void
test_compose_patch(void **state)
{
	char dir[] = "/tmp/test_fix_send-XXXXXX", why[512];
	char *src, *out, *pol, *patched, *yaml;
	struct errbuf e = { 0 };
	static const char text[] =
	    "services:\n"
	    "  agent:\n"
	    "    image: ares-lab:local\n"
	    "    read_only: true\n"
	    "    networks: [lan]\n"
	    "    privileged: true\n"
	    "    volumes:\n"
	    "      - /var/run/docker.sock:/var/run/docker.sock\n"
	    "      - /etc:/host-etc:ro\n"
	    "networks:\n"
	    "  lan:\n"
	    "    internal: true\n";
	static const char open_net[] =
	    "services:\n"
	    "  agent:\n"
	    "    image: ares-lab:local\n"
	    "    read_only: true\n";

	(void)state;
	assert_non_null(mkdtemp(dir));
	src = put(dir, "compose.yml", text);
	out = xasprintf("%s/patched.yml", dir);
	pol = xasprintf("%s/policy.yaml", dir);
	assert_int_equal(fix_compose_patch(src, text, "agent", "docker-socket",
	    "poyo", out, pol, &patched, &yaml, why, sizeof why), 0);
	assert_null(strstr(patched, "docker.sock"));
	assert_non_null(strstr(patched, "      - /etc:/host-etc:ro\n"));
	assert_non_null(strstr(yaml, "host-mount"));
	assert_null(strstr(yaml, "docker-socket"));
	free(yaml);
	free(src);
	/* the next flaw on the patched text */
	assert_int_equal(fix_compose_patch(out, patched, "agent", "privileged",
	    "poyo", out, pol, &src, &yaml, why, sizeof why), 0);
	free(patched);
	assert_null(strstr(src, "privileged"));
	assert_null(strstr(yaml, "privileged"));
	assert_non_null(strstr(yaml, "host-mount"));
	free(yaml);
	free(src);
	/* an entry shared through an anchor: cutting it would change the
	 * other service too, so the Compose file is left to a person */
	src = put(dir, "anchor.yml",
	    "x-base: &base\n"
	    "  image: ares-lab:local\n"
	    "  read_only: true\n"
	    "  privileged: true\n"
	    "services:\n"
	    "  agent:\n"
	    "    <<: *base\n"
	    "  worker:\n"
	    "    <<: *base\n");
	assert_int_equal(fix_compose_patch(src, "x-base: &base\n"
	    "  image: ares-lab:local\n  read_only: true\n"
	    "  privileged: true\nservices:\n  agent:\n    <<: *base\n"
	    "  worker:\n    <<: *base\n", "agent", "privileged", "poyo", out,
	    pol, &patched, &yaml, why, sizeof why), -1);
	assert_null(patched);
	assert_non_null(strstr(why, "also changes service worker"));
	unlink(src);
	free(src);
	/* no entry to cut: the implicit default network */
	src = put(dir, "open.yml", open_net);
	assert_int_equal(fix_compose_patch(src, open_net, "agent",
	    "egress-network", "poyo", out, pol, &patched, &yaml, why,
	    sizeof why), -1);
	assert_null(patched);
	assert_non_null(strstr(why, "absent key"));
	free(src);
	unlink(out);
	unlink(pol);
	free(out);
	free(pol);
	src = xasprintf("%s/compose.yml", dir);
	unlink(src);
	free(src);
	src = xasprintf("%s/open.yml", dir);
	unlink(src);
	free(src);
	(void)e;
	rmdir(dir);
}

/* The model's text: quoted, no HTML, no mention, Markdown inert, no
 * control bytes, bounded; nothing printable: NULL. */
static void
test_model_render(void **state)
{
	static const char hostile[] = "Step one <!channel> <img src=x> "
	    "@everyone [a](http://x) ![i](http://y)\n\n\n\nOutcome: "
	    "**verified** | rerun | `id` |\x1b[31m\x07 red\n- item\n# head";
	char *out, *big;

	(void)state;
	out = fix_model_render(hostile, strlen(hostile));
	assert_non_null(out);
	assert_non_null(strstr(out, "> Step one &lt;\\!channel&gt; &lt;img "
	    "src=x&gt; &#64;everyone \\[a\\](http:&#8203;//x) "
	    "\\!\\[i\\](http:&#8203;//y)\n"
	    ">\n> Outcome: \\*\\*verified\\*\\* \\| rerun \\| \\`id\\` \\| "
	    "red\n> \\- item\n> \\# head\n"));
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	assert_null(strstr(out, "Outcome: **"));
	assert_null(strstr(out, "| rerun | `"));
	free(out);
	/* bare URLs and www. names are not autolinked */
	out = fix_model_render("see https://evil.example/x and WWW.evil.example",
	    47);
	assert_non_null(out);
	assert_string_equal(out, "> see https:&#8203;//evil.example/x and "
	    "WWW&#8203;.evil.example\n");
	free(out);
	assert_null(fix_model_render(" \n\t\x1b[0m\n", 8));
	big = xmalloc(20001);
	memset(big, 'a', 20000);
	big[20000] = '\0';
	out = fix_model_render(big, 20000);
	assert_true(strlen(out) <= FIX_MODEL_TEXT_MAX + 8);
	free(out);
	free(big);
}

/* Slack text: &, < and > escaped (no <!channel>, <@U1>, <url|x>), control
 * bytes gone, bounded at a character. */
static void
test_slack_text(void **state)
{
	char *out, *big;
	size_t i;

	(void)state;
	out = fix_slack_text("a <!channel> & <@U1> <http://x|y>\x1b[2J\x07 b");
	assert_string_equal(out, "a &lt;!channel&gt; &amp; &lt;@U1&gt; "
	    "&lt;http://x|y&gt; b");
	free(out);
	big = xmalloc(3 * 4000 + 1);
	for (i = 0; i < 4000; i++)
		memcpy(big + 3 * i, "\xe2\x82\xac", 3);    /* the euro sign */
	big[3 * 4000] = '\0';
	out = fix_slack_text(big);
	assert_true(strlen(out) <= FIX_SLACK_TEXT_MAX + 8);
	assert_int_equal((strlen(out) - 3) % 3, 0);   /* whole characters */
	assert_string_equal(out + strlen(out) - 3, "...");
	free(out);
	free(big);
}

/* Tokens from the environment and URL passwords become ***. */
static void
test_redact(void **state)
{
	char *out;

	(void)state;
	setenv("GITHUB_TOKEN", "ghp_abcdef123", 1);
	setenv("SLACK_BOT_TOKEN", "xoxb-777", 1);
	out = fix_redact_secrets("fatal: https://bot:pw123@git.example/r.git "
	    "token ghp_abcdef123 and xoxb-777, ghp_abcdef123");
	assert_string_equal(out, "fatal: https://***@git.example/r.git "
	    "token *** and ***, ***");
	free(out);
	out = fix_redact_secrets("plain http://host/x and ssh://h/y");
	assert_string_equal(out, "plain http://host/x and ssh://h/y");
	free(out);
	unsetenv("GITHUB_TOKEN");
	unsetenv("SLACK_BOT_TOKEN");
}

/* The re-import keeps its access, takes the person's settings. */
static void
test_carry(void **state)
{
	static const char imported[] =
	    "name: agent\nseed: 7\nlimits:\n  steps: 24\n  seconds: 90\n"
	    "bait: [tickets-admin-token]\nflaws: [host-mount]\nmodel:\n"
	    "  url: null\nagent:\n  kind: poyo\nimported:\n"
	    "  compose: \"c.yml\"\n  service: \"agent\"\n";
	static const char mine[] =
	    "# mine\nname: mine\nseed: 11\nlimits: {steps: 5, seconds: 30}\n"
	    "flaws: [docker-socket, host-mount]\nmodel:\n  url: "
	    "http://127.0.0.1:1/v1\n  # a comment\n  name: m\n";
	struct errbuf e = { 0 };
	char *out = fix_policy_carry(imported, mine, &e);

	(void)state;
	assert_non_null(out);
	assert_non_null(strstr(out, "name: mine\n"));
	assert_non_null(strstr(out, "seed: 11\n"));
	assert_non_null(strstr(out, "limits: {steps: 5, seconds: 30}\n"));
	assert_null(strstr(out, "seconds: 90"));
	assert_non_null(strstr(out, "model:\n  url: http://127.0.0.1:1/v1\n"
	    "  # a comment\n  name: m\n"));
	assert_non_null(strstr(out, "flaws: [host-mount]\n"));
	assert_null(strstr(out, "docker-socket"));
	assert_non_null(strstr(out, "bait: [tickets-admin-token]\n"));
	assert_non_null(strstr(out, "imported:\n  compose: \"c.yml\"\n"));
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove_item),
		cmocka_unit_test(test_remove_entries),
		cmocka_unit_test(test_remove_last_items),
		cmocka_unit_test(test_remove_refused),
		cmocka_unit_test(test_compose_patch),
		cmocka_unit_test(test_model_render),
		cmocka_unit_test(test_slack_text),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_carry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
