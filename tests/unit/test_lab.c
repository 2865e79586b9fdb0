/*
 * test_lab.c - the lab's dependency waves (lab_waves, core/lab.c): which
 * roles lab up may make in parallel, on the real role table and on the
 * needs the flaws add (an open dns waits for the sink, a shared
 * namespace for its owner), and the plans it refuses (a role that needs
 * itself, one not in the lab, a cycle).
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
	/* the agent resolves through the dns: it waits for its address */
	needs[role("agent")] = 1u << role("dns");
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
	assert_int_equal(lab_waves(LAB_NROLES, wanted, needs, wave, &e), 2);
	for (i = 0; i < LAB_NROLES; i++) {
		if (!wanted[i])
			assert_int_equal(wave[i], -1);
		else if (i == role("agent"))
			assert_int_equal(wave[i], 1);
		else
			assert_int_equal(wave[i], 0);
	}
}

static void
test_waves_open_dns(void **state)
{
	bool wanted[LAB_NROLES];
	uint32_t needs[LAB_NROLES];
	int wave[LAB_NROLES], again[LAB_NROLES];
	struct errbuf e = { 0 };

	(void)state;
	default_lab(wanted, needs);
	/* flaw open-dns: the dns answers with the sink's address */
	needs[role("dns")] = 1u << role("sink");
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
		cmocka_unit_test(test_waves_open_dns),
		cmocka_unit_test(test_waves_shared_namespace),
		cmocka_unit_test(test_waves_refused),
		cmocka_unit_test(test_waves_chain_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
