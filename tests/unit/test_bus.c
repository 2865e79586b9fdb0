/*
 * test_bus.c - the drill's end of the sensor bus: datagrams from the lab
 * are untrusted; every malformed one is refused with a reason, never a
 * crash, and the good ones carry their sender's clock.  And the same
 * datagram as a line of a sensor container's stdout (BUS=stdout): only
 * the container's own key and src pass; an ordinary log line is not a bus
 * line; a forged, cut or foreign one is refused.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

struct fx {
	char dir[64];
	char path[128];
	int fd;        /* the bus */
	int tx;        /* a sender */
};

static int
setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	struct errbuf e = { 0 };

	snprintf(f->dir, sizeof f->dir, "/tmp/ares-test-bus-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof f->path, "%s/sensor.sock", f->dir);
	f->fd = bus_open(f->path, &e);
	assert_true(f->fd >= 0);
	f->tx = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(f->tx >= 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	close(f->fd);
	close(f->tx);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void
send_raw(struct fx *f, const void *buf, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	memcpy(sun.sun_path, f->path, strlen(f->path) + 1);
	assert_int_equal(sendto(f->tx, buf, len, 0, (struct sockaddr *)&sun,
	    sizeof sun), (ssize_t)len);
}

static void
test_socket_mode(void **state)
{
	struct fx *f = *state;
	struct stat sb;

	/* Only its owner sends: the drill hands it to the sensors' uid; no
	 * other local user may inject a datagram (docs/security.md). */
	assert_int_equal(stat(f->path, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0600);
}

static void
test_good_and_empty(void **state)
{
	struct fx *f = *state;
	struct bus_event ev;
	struct errbuf e = { 0 };
	const char *m = "{\"src\":\"service:tickets\",\"kind\":\"bait\","
	    "\"bait\":\"b1\",\"t_mono_ns\":12345}";

	assert_int_equal(bus_recv(f->fd, &ev, &e), 0);   /* nothing yet */
	send_raw(f, m, strlen(m));
	assert_int_equal(bus_recv(f->fd, &ev, &e), 1);
	assert_string_equal(bus_event_str(&ev, "kind"), "bait");
	assert_string_equal(bus_event_str(&ev, "bait"), "b1");
	assert_null(bus_event_str(&ev, "nope"));
	assert_true(ev.t_sent_ns == 12345);
	assert_true(ev.t_recv_ns > 0);
	assert_int_equal(ev.raw_len, strlen(m));
	assert_memory_equal(ev.raw, m, ev.raw_len);
	bus_event_free(&ev);
}

static void
test_clock_as_string(void **state)
{
	struct fx *f = *state;
	struct bus_event ev;
	struct errbuf e = { 0 };
	/* Past 2^53 a JSON number loses nanoseconds: a string keeps them. */
	const char *m = "{\"src\":\"gateway\",\"kind\":\"turn\","
	    "\"t_mono_ns\":\"9007199254740993\"}";
	const char *bad = "{\"src\":\"gateway\",\"kind\":\"turn\","
	    "\"t_mono_ns\":\"12x\"}";

	send_raw(f, m, strlen(m));
	assert_int_equal(bus_recv(f->fd, &ev, &e), 1);
	assert_true(ev.t_sent_ns == 9007199254740993ull);
	bus_event_free(&ev);
	send_raw(f, bad, strlen(bad));
	assert_int_equal(bus_recv(f->fd, &ev, &e), 1);
	assert_true(ev.t_sent_ns == 0);   /* not a clock: use receipt time */
	bus_event_free(&ev);
}

static void
expect_refused(struct fx *f, const void *buf, size_t len, const char *why)
{
	struct bus_event ev;
	struct errbuf e = { 0 };

	send_raw(f, buf, len);
	assert_int_equal(bus_recv(f->fd, &ev, &e), -1);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, why) == NULL)
		fail_msg("'%s' lacks '%s'", e.msg, why);
	bus_event_free(&ev);
}

static void
test_malformed(void **state)
{
	struct fx *f = *state;
	static const char nul[] = "{\"src\":\"x\",\"kind\":\"y\"}\0tail";
	char *big = xmalloc(BUS_DGRAM_MAX + 100);
	struct bus_event ev;
	struct errbuf e = { 0 };

	expect_refused(f, "not json", 8, "not a JSON object");
	expect_refused(f, "[1,2]", 5, "not a JSON object");
	expect_refused(f, "{\"kind\":\"bait\"}", 15, "lacks \"src\"");
	expect_refused(f, "{\"src\":1,\"kind\":\"bait\"}", 23, "lacks");
	expect_refused(f, nul, sizeof nul - 1, "NUL byte");
	memset(big, ' ', BUS_DGRAM_MAX + 100);
	big[0] = '{';
	expect_refused(f, big, BUS_DGRAM_MAX + 100, "exceeds");
	free(big);
	/* The bus still works after all that. */
	{
		static const char ok[] = "{\"src\":\"a\",\"kind\":\"b\"}";

		send_raw(f, ok, sizeof ok - 1);
	}
	assert_int_equal(bus_recv(f->fd, &ev, &e), 1);
	bus_event_free(&ev);
}

static void
test_path_too_long(void **state)
{
	char path[200];
	struct errbuf e = { 0 };

	(void)state;
	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = '\0';
	assert_int_equal(bus_open(path, &e), -1);
	assert_non_null(strstr(e.msg, "too long"));
}


#define TEST_RUN "run-bus-1"
#define TEST_BOOT "00112233445566778899aabbccddeeff"

/* "ARESBUS1 <mac of 'run\nboot seq json' under key> boot seq json"
 * (caller frees). */
static char *
bus_line_rb(const uint8_t key[BUS_KEY_BYTES], const char *run,
    const char *boot, const char *seq, const char *json)
{
	uint8_t mac[crypto_auth_hmacsha256_BYTES];
	char hex[2 * sizeof mac + 1];
	char *body = xasprintf("%s %s %s", boot, seq, json), *l;
	char *macd = xasprintf("%s\n%s", run, body);

	crypto_auth_hmacsha256(mac, (const unsigned char *)macd, strlen(macd),
	    key);
	util_hex(mac, sizeof mac, hex);
	l = xasprintf(BUS_LINE_MAGIC "%s %s", hex, body);
	free(macd);
	free(body);
	return l;
}

static char *
bus_line_n(const uint8_t key[BUS_KEY_BYTES], const char *seq,
    const char *json)
{
	return bus_line_rb(key, TEST_RUN, TEST_BOOT, seq, json);
}

static char *
bus_line(const uint8_t key[BUS_KEY_BYTES], const char *json)
{
	return bus_line_n(key, "1", json);
}

static void
line_refused(const char *line, size_t len, const uint8_t *key,
    const char *src, const char *msg)
{
	struct errbuf e = {0};
	const char *j = "x";
	size_t n = 1;
	uint64_t q = 9;
	uint8_t boot[BUS_BOOT_BYTES];

	assert_int_equal(bus_line_check(line, len, key, TEST_RUN, src, &j, &n,
	    boot, &q, &e), -1);
	assert_int_equal(q, 0);
	assert_int_equal(e.code, ERRBUF_INPUT);
	if (strstr(e.msg, msg) == NULL)
		fail_msg("\"%s\" lacks \"%s\"", e.msg, msg);
	assert_null(j);
	assert_int_equal(n, 0);
}

static void
test_line(void **state)
{
	static const char ev[] = "{\"src\":\"service:tickets\",\"kind\":"
	    "\"bait\",\"t_mono_ns\":5,\"bait\":\"tickets-admin-token\"}";
	uint8_t key[BUS_KEY_BYTES], other[BUS_KEY_BYTES];
	struct errbuf e = {0};
	const char *j;
	size_t n;
	uint64_t q;
	uint8_t boot[BUS_BOOT_BYTES], want[BUS_BOOT_BYTES];
	char *l, *m;
	(void)state;

	memset(key, 7, sizeof key);
	memset(other, 8, sizeof other);
	l = bus_line(key, ev);
	assert_int_equal(bus_line_check(l, strlen(l), key, TEST_RUN,
	    "service:tickets", &j, &n, boot, &q, &e), 1);
	assert_int_equal(q, 1);
	assert_int_equal(util_unhex(TEST_BOOT, want, sizeof want), 0);
	assert_memory_equal(boot, want, sizeof want);
	assert_int_equal(n, strlen(ev));
	assert_memory_equal(j, ev, n);

	/* another container's key, another container's src */
	line_refused(l, strlen(l), other, "service:tickets", "MAC does not");
	line_refused(l, strlen(l), key, "sink", "is not this container's");
	/* one byte of the datagram changed */
	m = xstrdup(l);
	m[strlen(m) - 3] = 'X';
	line_refused(m, strlen(m), key, "service:tickets", "MAC does not");
	free(m);
	/* cut */
	line_refused(l, strlen(l) - 1, key, "service:tickets", "MAC does not");
	line_refused(l, 20, key, "service:tickets", "no MAC");
	/* the MAC not hex */
	m = xstrdup(l);
	m[sizeof BUS_LINE_MAGIC] = 'g';
	line_refused(m, strlen(m), key, "service:tickets", "not hex");
	free(m);
	/* the nonce and the number are under the MAC: another of either,
	 * the same MAC fails */
	m = xstrdup(l);
	m[sizeof BUS_LINE_MAGIC - 1 + 65] = 'f';
	line_refused(m, strlen(m), key, "service:tickets", "MAC does not");
	free(m);
	m = xstrdup(l);
	m[sizeof BUS_LINE_MAGIC - 1 + 65 + 2 * BUS_BOOT_BYTES + 1] = '2';
	line_refused(m, strlen(m), key, "service:tickets", "MAC does not");
	free(m);
	/* so is the run: the same line checked for another run fails */
	{
		struct errbuf e2 = {0};
		assert_int_equal(bus_line_check(l, strlen(l), key, "run-other",
		    "service:tickets", &j, &n, boot, &q, &e2), -1);
		assert_non_null(strstr(e2.msg, "MAC does not"));
	}
	free(l);
	/* the nonce missing or not hex */
	l = bus_line_rb(key, TEST_RUN, "7", "1", ev);
	line_refused(l, strlen(l), key, "service:tickets", "no boot nonce");
	free(l);
	l = bus_line_rb(key, TEST_RUN, "0011223344556677889900aabbccddgg", "1",
	    ev);
	line_refused(l, strlen(l), key, "service:tickets", "not hex");
	free(l);
	/* numbers: 20 digits at most, no leading zero, none missing */
	l = bus_line_n(key, "18446744073709551615", ev);
	assert_int_equal(bus_line_check(l, strlen(l), key, TEST_RUN,
	    "service:tickets", &j, &n, boot, &q, &e), 1);
	assert_true(q == UINT64_MAX);
	free(l);
	l = bus_line_n(key, "18446744073709551616", ev);
	line_refused(l, strlen(l), key, "service:tickets", "no sequence");
	free(l);
	l = bus_line_n(key, "07", ev);
	line_refused(l, strlen(l), key, "service:tickets", "no sequence");
	free(l);
	l = bus_line_n(key, "", ev);
	line_refused(l, strlen(l), key, "service:tickets", "no sequence");
	free(l);

	/* the magic inside an ordinary log line (the sink logs what the
	 * agent sent, printable ASCII kept): not at the start, not a bus
	 * line; at the start without the key's MAC: refused */
	assert_int_equal(bus_line_check("sink: tcp 80 head=ARESBUS1 00 {}",
	    33, key, TEST_RUN, "sink", &j, &n, boot, &q, &e), 0);
	assert_int_equal(bus_line_check("10.0.0.4 A x.example -> NXDOMAIN",
	    32, key, TEST_RUN, "dns", &j, &n, boot, &q, &e), 0);
	assert_int_equal(bus_line_check("", 0, key, TEST_RUN, "dns", &j, &n,
	    boot, &q, &e), 0);
	{
		char forged[200];
		snprintf(forged, sizeof forged, BUS_LINE_MAGIC "%064d %032d 1 "
		    "{\"src\":\"sink\",\"kind\":\"bait\"}", 0, 0);
		line_refused(forged, strlen(forged), key, "sink",
		    "MAC does not");
	}

	/* a NUL inside, a datagram over BUS_DGRAM_MAX, a line over the max */
	l = bus_line(key, "{\"src\":\"dns\"}");
	m = xstrdup(l);
	m[strlen(m) - 2] = '\0';
	line_refused(m, strlen(l), key, "dns", "NUL");
	free(m);
	free(l);
	{
		size_t big = BUS_LINE_MAX + 1;
		char *b = xmalloc(big);
		memset(b, 'a', big);
		memcpy(b, BUS_LINE_MAGIC, sizeof BUS_LINE_MAGIC - 1);
		line_refused(b, big, key, "dns", "limit");
		free(b);
	}
	/* repeats dropped, gaps counted */
	{
		uint64_t last = 0;
		size_t gaps = 0;
		assert_true(bus_seq_accept(&last, 1, &gaps));
		assert_true(bus_seq_accept(&last, 2, &gaps));
		assert_false(bus_seq_accept(&last, 2, &gaps));   /* replayed */
		assert_false(bus_seq_accept(&last, 1, &gaps));
		assert_true(bus_seq_accept(&last, 5, &gaps));    /* 3, 4 lost */
		assert_int_equal(gaps, 2);
		assert_true(last == 5);
	}
	/* a restarted sensor: a new boot starts over at 1 (taken, not a
	 * repeat); the earlier boot's lines, replayed, are dropped; a new
	 * boot whose first number is not 1 counts the ones before as lost */
	{
		struct bus_seq st;
		uint8_t b1[BUS_BOOT_BYTES], b2[BUS_BOOT_BYTES];
		uint8_t b3[BUS_BOOT_BYTES];
		size_t gaps = 0;

		memset(&st, 0, sizeof st);
		memset(b1, 1, sizeof b1);
		memset(b2, 2, sizeof b2);
		memset(b3, 3, sizeof b3);
		assert_true(bus_seq_take(&st, b1, 1, &gaps));
		assert_true(bus_seq_take(&st, b1, 2, &gaps));
		assert_true(bus_seq_take(&st, b1, 3, &gaps));
		assert_false(bus_seq_take(&st, b1, 2, &gaps));  /* replayed */
		assert_true(bus_seq_take(&st, b2, 1, &gaps));   /* restarted */
		assert_true(bus_seq_take(&st, b2, 2, &gaps));
		assert_false(bus_seq_take(&st, b1, 3, &gaps));  /* earlier */
		assert_false(bus_seq_take(&st, b1, 4, &gaps));
		assert_false(bus_seq_take(&st, b2, 2, &gaps));
		assert_int_equal(gaps, 0);
		assert_int_equal(st.restarts, 1);
		assert_int_equal(st.stale, 2);
		assert_true(bus_seq_take(&st, b3, 4, &gaps));   /* 1..3 lost */
		assert_int_equal(gaps, 3);
		assert_int_equal(st.restarts, 2);
		assert_false(bus_seq_take(&st, b2, 3, &gaps));
		assert_int_equal(st.stale, 3);
		/* more starts than BUS_BOOTS_MAX: still bounded */
		for (int i = 0; i < 3 * BUS_BOOTS_MAX; i++) {
			uint8_t b[BUS_BOOT_BYTES];
			memset(b, 0x40 + i, sizeof b);
			assert_true(bus_seq_take(&st, b, 1, &gaps));
		}
		assert_int_equal(st.nold, BUS_BOOTS_MAX);
		memset(b1, 0x40 + 3 * BUS_BOOTS_MAX - 2, sizeof b1);
		assert_false(bus_seq_take(&st, b1, 1, &gaps));
	}
	/* not JSON, or no src */
	l = bus_line(key, "not json");
	line_refused(l, strlen(l), key, "dns", "(none)");
	free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_mode, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_good_and_empty, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_clock_as_string, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup,
		    teardown),
		cmocka_unit_test(test_path_too_long),
		cmocka_unit_test(test_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
