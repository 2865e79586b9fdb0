/*
 * test_lab.c - the lab's dependency waves (lab_waves, core/lab.c): which
 * roles lab up may make in parallel, on the real role table and on the
 * needs the flaws add (a shared namespace waits for its owner, a late
 * fact for its role), and the plans it refuses (a role that needs
 * itself, one not in the lab, a cycle); and the lab's addresses
 * (lab_net_addr): the subnet each network asks for, try by try, and the
 * fixed address in it.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* The index of the role named name in lab_roles[] (fails the test when
 * there is none). */
static size_t
role(const char *name)
{
	size_t i;

	for (i = 0; i < LAB_NROLES; i++)
		if (strcmp(lab_roles[i].name, name) == 0)
			return i;
	fail_msg("no role %s", name);
	return 0;
}

/* wanted[] of the default lab: model, gateway, service, sink, dns, agent. */
static void
default_lab(bool wanted[LAB_NROLES], uint32_t needs[LAB_NROLES])
{
	static const char *const names[] = { "model", "gateway", "service",
	    "sink", "dns", "agent" };
	size_t i;

	memset(wanted, 0, LAB_NROLES * sizeof *wanted);
	memset(needs, 0, LAB_NROLES * sizeof *needs);
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		wanted[role(names[i])] = true;
	/* the agent resolves through the dns, whose address is fixed
	 * (lab_net_addr): nothing waits */
}

static void
test_waves_default(void **state)
{
	bool wanted[LAB_NROLES];
	uint32_t needs[LAB_NROLES];
	int wave[LAB_NROLES];
	struct errbuf e = { 0 };
	size_t i;

	(void)state;
	default_lab(wanted, needs);
	/* one wave: every role at once */
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), 1);
	for (i = 0; i < LAB_NROLES; i++) {
		if (!wanted[i])
			assert_int_equal(wave[i], -1);
		else
			assert_int_equal(wave[i], 0);
	}
}

static void
test_waves_late_fact(void **state)
{
	bool wanted[LAB_NROLES];
	uint32_t needs[LAB_NROLES];
	int wave[LAB_NROLES], again[LAB_NROLES];
	struct errbuf e = { 0 };

	(void)state;
	default_lab(wanted, needs);
	/* a late fact of the sink's not known when the specs are built (the
	 * sink's address is, so open-dns has none), and the agent after the
	 * dns */
	needs[role("dns")] = 1u << role("sink");
	needs[role("agent")] = 1u << role("dns");
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), 3);
	assert_int_equal(wave[role("sink")], 0);
	assert_int_equal(wave[role("dns")], 1);
	assert_int_equal(wave[role("agent")], 2);
	assert_int_equal(wave[role("gateway")], 0);
	assert_int_equal(wave[role("model")], 0);
	/* the same plan every time */
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, again, &e), 3);
	assert_memory_equal(wave, again, sizeof wave);
}

static void
test_waves_shared_namespace(void **state)
{
	bool wanted[LAB_NROLES];
	uint32_t needs[LAB_NROLES];
	int wave[LAB_NROLES];
	struct errbuf e = { 0 };

	(void)state;
	default_lab(wanted, needs);
	/* flaw host-pid: the hostsim, the agent in its PID namespace */
	wanted[role("hostsim")] = true;
	needs[role("agent")] |= 1u << role("hostsim");
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), 2);
	assert_int_equal(wave[role("hostsim")], 0);
	assert_int_equal(wave[role("agent")], 1);
	assert_int_equal(wave[role("dns")], 0);
}

/* "a.b.c.d" (and "/len" after it, or nothing) as a number; fails the
 * test when it is not one. */
static uint32_t
ip4(const char *s, int *len)
{
	unsigned a, b, c, d;
	int n = 0, l = -1;

	if (sscanf(s, "%u.%u.%u.%u%n", &a, &b, &c, &d, &n) != 4 || a > 255 ||
	    b > 255 || c > 255 || d > 255)
		fail_msg("not an address: %s", s);
	if (s[n] == '/' && sscanf(s + n + 1, "%d", &l) != 1)
		fail_msg("bad length: %s", s);
	if (len != NULL)
		*len = l;
	return (uint32_t)a << 24 | b << 16 | c << 8 | d;
}

static void
test_net_addr(void **state)
{
	static const char *const roles[] = { "lab", "upstream", "wan" };
	struct lab_net_addr a, b;
	uint32_t base, seen[LAB_NET_TRIES];
	char run[64];
	size_t r, k, distinct = 0;
	unsigned t;
	int len;

	(void)state;
	for (k = 0; k < 200; k++) {
		snprintf(run, sizeof run, "20261204-120000-%08zx", k * 2654435761u);
		for (r = 0; r < 3; r++)
			for (t = 0; t < 4; t++) {
				lab_net_addr(run, roles[r], t, &a);
				base = ip4(a.subnet, &len);
				/* a /26 of 198.18.0.0/15, aligned */
				assert_int_equal(len, 26);
				assert_true((base & 0xfffe0000u) == 0xc6120000u);
				assert_int_equal(base & 63u, 0);
				/* the engine hands out the first /27 only */
				assert_int_equal(ip4(a.range, &len), base);
				assert_int_equal(len, 27);
				/* the fixed address: in the subnet, past the
				 * range, not its broadcast */
				assert_int_equal(ip4(a.fixed, &len),
				    base + LAB_NET_FIXED_HOST);
				assert_int_equal(len, -1);
				assert_true(LAB_NET_FIXED_HOST > 31 &&
				    LAB_NET_FIXED_HOST < 63);
				/* the same every time */
				lab_net_addr(run, roles[r], t, &b);
				assert_memory_equal(&a, &b, sizeof a);
			}
	}
	/* the tries of one network move on (a subnet in use is not asked
	 * for again and again) */
	for (t = 0; t < LAB_NET_TRIES; t++) {
		lab_net_addr("20261204-120000-0000abcd", "lab", t, &a);
		seen[t] = ip4(a.subnet, NULL);
		for (k = 0; k < t && seen[k] != seen[t]; k++)
			;
		distinct += k == t;
	}
	assert_true(distinct >= LAB_NET_TRIES - 1);
	/* two runs, and two networks of one run, ask for other subnets */
	lab_net_addr("20261204-120000-0000abcd", "lab", 0, &a);
	lab_net_addr("20261204-120000-0000abce", "lab", 0, &b);
	assert_string_not_equal(a.subnet, b.subnet);
	lab_net_addr("20261204-120000-0000abcd", "wan", 0, &b);
	assert_string_not_equal(a.subnet, b.subnet);
}

static void
test_waves_refused(void **state)
{
	bool wanted[LAB_NROLES];
	uint32_t needs[LAB_NROLES];
	int wave[LAB_NROLES];
	struct errbuf e = { 0 };

	(void)state;
	/* a need on a role not in the lab (hostsim without its flaw) */
	default_lab(wanted, needs);
	needs[role("agent")] |= 1u << role("hostsim");
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), -1);
	assert_int_equal(e.code, ERRBUF_INTERNAL);
	assert_non_null(strstr(e.msg, "needs role"));
	/* a role that needs itself */
	default_lab(wanted, needs);
	memset(&e, 0, sizeof e);
	needs[role("dns")] = 1u << role("dns");
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), -1);
	assert_non_null(strstr(e.msg, "itself"));
	/* a cycle: dns -> sink -> dns */
	default_lab(wanted, needs);
	memset(&e, 0, sizeof e);
	needs[role("dns")] = 1u << role("sink");
	needs[role("sink")] = 1u << role("dns");
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), -1);
	assert_non_null(strstr(e.msg, "cycle"));
	/* a need past the table */
	default_lab(wanted, needs);
	memset(&e, 0, sizeof e);
	needs[role("agent")] |= 1u << LAB_NROLES;
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), -1);
	/* more roles than the bit sets hold */
	{
		bool w[33] = { false };
		uint32_t nd[33] = { 0 };
		int wv[33];

		assert_int_equal(lab_waves(33, w, nd, wv, &e), -1);
	}
}

static void
test_waves_chain_and_empty(void **state)
{
	bool wanted[6] = { true, true, true, true, false, true };
	uint32_t needs[6] = { 0, 1u << 0, 1u << 1, 1u << 0 | 1u << 2, 0,
	    1u << 3 };
	int wave[6];
	struct errbuf e = { 0 };
	bool none[3] = { false, false, false };
	uint32_t nn[3] = { 0, 0, 0 };
	int nw[3];

	(void)state;
	/* 0 <- 1 <- 2 <- 3 <- 5 (and 3 <- 0): one wave each */
	assert_int_equal(lab_waves(6, wanted, needs, wave, &e), 5);
	assert_int_equal(wave[0], 0);
	assert_int_equal(wave[1], 1);
	assert_int_equal(wave[2], 2);
	assert_int_equal(wave[3], 3);
	assert_int_equal(wave[4], -1);
	assert_int_equal(wave[5], 4);
	/* nothing wanted: no wave */
	assert_int_equal(lab_waves(3, none, nn, nw, &e), 0);
	assert_int_equal(nw[0], -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waves_default),
		cmocka_unit_test(test_waves_late_fact),
		cmocka_unit_test(test_waves_shared_namespace),
		cmocka_unit_test(test_waves_refused),
		cmocka_unit_test(test_waves_chain_and_empty),
		cmocka_unit_test(test_net_addr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
