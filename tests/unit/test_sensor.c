/*
 * test_sensor.c - the sensor's evidence budget (leakbox/sensor.c):
 * EVIDENCE_MAX_BYTES, the final "truncated" line, events after it still
 * on the bus; BUS=stdout: MACed lines the host's check accepts, never
 * mixed with log lines, and a forged one in a log line refused.  Each
 * case runs the sensor in a forked child (its state is
 * per process) and checks the chain and the datagrams from the parent.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../core/internal.h"   /* the host side: bus_open, bus_recv */
#include "../../leakbox/leakbox.h"

struct fixture {
	char dir[64];
	char *chain;
	char *bus;
	int bfd;
};

static struct fixture *fx_new(void)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sensor.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->chain = xasprintf("%s/dns.jsonl", f->dir);
	f->bus = xasprintf("%s/bus.sock", f->dir);
	struct errbuf e = { 0 };
	f->bfd = bus_open(f->bus, &e);
	assert_true(f->bfd >= 0);
	return f;
}

static void fx_free(struct fixture *f)
{
	close(f->bfd);
	char *cmd = xasprintf("rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f->chain);
	free(f->bus);
	free(f);
}

/* Datagrams seen by the parent, by kind. */
struct seen {
	int events;          /* kind "dns_query" */
	int truncated;       /* kind "truncated" */
	int errors;          /* kind "sensor_error" */
	char last_error[512];
	cJSON *trunc;        /* the truncated datagram (owned) */
	size_t count;        /* the child's sensor_chain_count() */
	size_t dropped;      /* the child's sensor_chain_dropped() */
};

/*
 * Run n emits of kind dns_query with a `pad`-byte string field in a child
 * with EVIDENCE_MAX_BYTES = budget (NULL: unset).  The child waits for one
 * ack byte per dns_query datagram before the next emit, so the bus queue
 * (net.unix.max_dgram_qlen may be 10) never overflows and every datagram
 * can be counted.  Returns the child's exit status (0: every emit was
 * sent on the bus).
 */
static int run_child(struct fixture *f, const char *budget, int n, int pad,
    struct seen *s)
{
	int ack[2];
	assert_int_equal(pipe(ack), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ack[1]);
		alarm(60);
		setenv("EVIDENCE", f->chain, 1);
		setenv("RUN_ID", "run-budget-1", 1);
		setenv("BUS", f->bus, 1);
		if (budget)
			setenv("EVIDENCE_MAX_BYTES", budget, 1);
		else
			unsetenv("EVIDENCE_MAX_BYTES");
		sensor_init("dns");
		char *p = xmalloc((size_t)pad + 1);
		memset(p, 'a', (size_t)pad);
		p[pad] = '\0';
		int failed = 0;
		for (int i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", p);
			cJSON_AddNumberToObject(o, "i", i);
			if (sensor_emit("dns_query", o) != 0)
				failed++;
			char b;
			if (read(ack[0], &b, 1) != 1)
				_exit(3);
		}
		free(p);
		char *res = xasprintf("%s/result", f->dir);
		FILE *fp = fopen(res, "w");
		if (!fp)
			_exit(4);
		fprintf(fp, "%zu %zu\n", sensor_chain_count(),
		    sensor_chain_dropped());
		fclose(fp);
		_exit(failed ? 1 : 0);
	}
	close(ack[0]);
	memset(s, 0, sizeof(*s));
	struct errbuf e = { 0 };
	while (s->events < n) {
		struct pollfd pfd = { .fd = f->bfd, .events = POLLIN };
		if (poll(&pfd, 1, 20000) <= 0)
			break;
		struct bus_event ev;
		while (bus_recv(f->bfd, &ev, &e) == 1) {
			const char *k = bus_event_str(&ev, "kind");
			if (k && strcmp(k, "dns_query") == 0) {
				s->events++;
				assert_int_equal(write(ack[1], "k", 1), 1);
			} else if (k && strcmp(k, "truncated") == 0) {
				s->truncated++;
				cJSON_Delete(s->trunc);
				s->trunc = cJSON_Duplicate(ev.json, 1);
			} else if (k && strcmp(k, "sensor_error") == 0) {
				s->errors++;
				snprintf(s->last_error, sizeof(s->last_error), "%s",
				    bus_event_str(&ev, "error") ?
				    bus_event_str(&ev, "error") : "");
			}
			bus_event_free(&ev);
		}
	}
	close(ack[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* late datagrams (none expected after the last ack) */
	struct bus_event ev;
	while (bus_recv(f->bfd, &ev, &e) == 1)
		bus_event_free(&ev);
	char *res = xasprintf("%s/result", f->dir);
	FILE *fp = fopen(res, "r");
	if (fp) {
		if (fscanf(fp, "%zu %zu", &s->count, &s->dropped) != 2)
			s->count = s->dropped = 0;
		fclose(fp);
	}
	unlink(res);
	free(res);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* The last line of the file (a copy without '\n'); *nlines gets the
 * count.  Caller frees. */
static char *last_line(const char *path, size_t *nlines)
{
	struct errbuf e = { 0 };
	size_t len;
	char *txt = util_read_file(path, 512u << 20, &len, &e);
	assert_non_null(txt);
	*nlines = 0;
	const char *last = txt;
	for (size_t i = 0; i < len; i++)
		if (txt[i] == '\n') {
			(*nlines)++;
			if (i + 1 < len)
				last = txt + i + 1;
		}
	char *out = xstrndup(last, strcspn(last, "\n"));
	free(txt);
	return out;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

/* Check a chain that reached `budget`: on disk <= budget, verifies, its
 * last line (only) is "truncated" with the documented fields, and the
 * child's counters and datagrams add up to n events. */
static void check_truncated(struct fixture *f, const struct seen *s,
    size_t budget, int n)
{
	off_t size = file_size(f->chain);
	printf("chain: %lld bytes for a budget of %zu, %zu lines, %zu "
	    "dropped\n", (long long)size, budget, s->count, s->dropped);
	assert_true((size_t)size <= budget);
	assert_true((size_t)size > budget / 2);   /* it was used */

	struct evidence_verify_result r;
	struct errbuf e = { 0 };
	assert_int_equal(evidence_verify_file(f->chain, "run-budget-1", &r, &e),
	    0);
	assert_true(r.ok);

	size_t nlines, len;
	char *line = last_line(f->chain, &nlines);
	assert_int_equal(r.entries, nlines);
	assert_int_equal(s->count, nlines);
	cJSON *j = cJSON_Parse(line);
	assert_non_null(j);
	assert_string_equal(str(j, "type"), "truncated");
	assert_string_equal(str(j, "src"), "dns");
	assert_int_equal((size_t)num(j, "budget_bytes"), budget);
	/* bytes_written = the file before the truncated line */
	assert_int_equal((size_t)num(j, "bytes_written"),
	    (size_t)size - strlen(line) - 1);
	assert_int_equal((int)num(j, "events_dropped"), 1);
	assert_string_equal(str(j, "dropped_kind"), "dns_query");
	cJSON_Delete(j);
	free(line);

	/* exactly one truncated line */
	char *txt = util_read_file(f->chain, 512u << 20, &len, &e);
	assert_non_null(txt);
	const char *p = strstr(txt, "\"type\":\"truncated\"");
	assert_non_null(p);
	assert_null(strstr(p + 1, "\"type\":\"truncated\""));
	free(txt);

	/* genesis + written events + truncated; the rest was dropped, yet
	 * every event went on the bus, and so did the truncated line */
	assert_int_equal(s->count - 2 + s->dropped, (size_t)n);
	assert_true(s->dropped > (size_t)n / 2);
	assert_int_equal(s->events, n);
	assert_int_equal(s->truncated, 1);
	assert_non_null(s->trunc);
	assert_int_equal((size_t)num(s->trunc, "budget_bytes"), budget);
	assert_string_equal(str(s->trunc, "dropped_kind"), "dns_query");
}

/* A chain fed far past its budget stays within it, ends in one
 * "truncated" line, still verifies, and every event still went on the
 * bus. */
static void test_budget_truncates(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	struct seen s;
	/* 300 events of ~600 bytes: ~180 KB, five times the budget */
	int rc = run_child(f, "32768", 300, 500, &s);
	assert_int_equal(rc, 0);
	check_truncated(f, &s, 32768, 300);
	assert_int_equal(s.errors, 0);
	cJSON_Delete(s.trunc);
	fx_free(f);
}

/* Events of the longest datagram size: the reserve still holds the
 * truncated line. */
static void test_budget_long_lines(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	struct seen s;
	int rc = run_child(f, "40000", 20, BUS_DGRAM_MAX, &s);
	assert_int_equal(rc, 0);
	check_truncated(f, &s, 40000, 20);
	cJSON_Delete(s.trunc);
	fx_free(f);
}

/* Out-of-range and invalid values: clamped or the default, reported once
 * on the bus as sensor_error. */
static void test_budget_invalid(void **state)
{
	(void)state;
	char why[256];
	static const struct {
		const char *v;
		size_t want;
		bool error;
	} cases[] = {
		{ NULL, SENSOR_BUDGET_DEFAULT, false },
		{ "", SENSOR_BUDGET_DEFAULT, false },
		{ "1048576", 1048576, false },
		{ "32768", SENSOR_BUDGET_MIN, false },
		{ "67108864", SENSOR_BUDGET_MAX, false },
		{ "67108865", SENSOR_BUDGET_MAX, true },
		{ "99999999999999999999999999999999", SENSOR_BUDGET_MAX, true },
		{ "1000", SENSOR_BUDGET_MIN, true },
		{ "0", SENSOR_BUDGET_DEFAULT, true },
		{ "-5", SENSOR_BUDGET_DEFAULT, true },
		{ " 4096", SENSOR_BUDGET_DEFAULT, true },
		{ "4096 ", SENSOR_BUDGET_DEFAULT, true },
		{ "2M", SENSOR_BUDGET_DEFAULT, true },
		{ "0x100000", SENSOR_BUDGET_DEFAULT, true },
		{ "1e6", SENSOR_BUDGET_DEFAULT, true },
		{ "\x1b[31m", SENSOR_BUDGET_DEFAULT, true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(why, 'z', sizeof(why));
		size_t got = sensor_budget_parse(cases[i].v, why, sizeof(why));
		assert_int_equal(got, cases[i].want);
		assert_non_null(memchr(why, '\0', sizeof(why)));
		assert_int_equal(why[0] != '\0', cases[i].error);
		assert_null(strchr(why, '\x1b'));
	}
	/* a tiny buffer for why is never overrun */
	char tiny[8];
	memset(tiny, 'z', sizeof(tiny));
	assert_int_equal(sensor_budget_parse("junk", tiny, sizeof(tiny)),
	    SENSOR_BUDGET_DEFAULT);
	assert_non_null(memchr(tiny, '\0', sizeof(tiny)));

	/* in a sensor: one sensor_error, then the default budget (these few
	 * events fit, nothing is truncated) */
	struct fixture *f = fx_new();
	struct seen s;
	assert_int_equal(run_child(f, "lots", 10, 100, &s), 0);
	assert_int_equal(s.errors, 1);
	printf("sensor_error: %s\n", s.last_error);
	assert_non_null(strstr(s.last_error, "EVIDENCE_MAX_BYTES"));
	assert_int_equal(s.truncated, 0);
	assert_int_equal(s.count, 11);
	assert_int_equal(s.dropped, 0);
	fx_free(f);

	/* below the minimum: the minimum, reported, and enforced */
	f = fx_new();
	assert_int_equal(run_child(f, "1000", 200, 500, &s), 0);
	assert_int_equal(s.errors, 1);
	check_truncated(f, &s, SENSOR_BUDGET_MIN, 200);
	cJSON_Delete(s.trunc);
	fx_free(f);

	/* unset: no error, the default */
	f = fx_new();
	assert_int_equal(run_child(f, NULL, 10, 100, &s), 0);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.count, 11);
	fx_free(f);
}

/* sensor_log: at most SENSOR_LOG_MAX bytes reach stdout, the last line
 * says the budget was reached, and the rest is counted, not printed. */
/*
 * A full bus never loses the bait: a child fills the queue with 40 events
 * nobody reads (those beyond the kernel's queue length are dropped, and
 * live on in the chain), then emits the bait; the parent starts reading
 * only 300 ms later.  The bait datagram must arrive (the sensor retries
 * it), and the child's emit returns 0.
 */
static void test_bait_never_dropped(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(20);
		setenv("EVIDENCE", f->chain, 1);
		setenv("RUN_ID", "run-bait-1", 1);
		setenv("BUS", f->bus, 1);
		sensor_init("service:tickets");
		for (int i = 0; i < 40; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "i", i);
			(void)sensor_emit("request", o);
		}
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "bait", "tickets-admin-token");
		_exit(sensor_emit("bait", b) == 0 ? 0 : 1);
	}
	usleep(300000);
	int bait = 0, other = 0, status;
	struct errbuf e = { 0 };
	uint64_t end = util_mono_ns() + 5000000000ull;
	while (bait == 0 && util_mono_ns() < end) {
		struct pollfd pfd = { .fd = f->bfd, .events = POLLIN };
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		struct bus_event ev;
		while (bus_recv(f->bfd, &ev, &e) == 1) {
			const char *k = bus_event_str(&ev, "kind");
			if (k && strcmp(k, "bait") == 0)
				bait++;
			else
				other++;
			bus_event_free(&ev);
		}
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (bait != 1)
		fail_msg("the bait was dropped by a full bus (%d other "
		    "datagrams arrived)", other);
	assert_true(other < 40);   /* the queue was full indeed */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fx_free(f);
}

static void test_log_bounded(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	char *out = xasprintf("%s/stdout", f->dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *fp = freopen(out, "w", stdout);
		if (!fp)
			_exit(2);
		unsetenv("EVIDENCE");
		unsetenv("BUS");
		sensor_init("dns");
		for (int i = 0; i < 20000; i++)
			sensor_log("10.0.0.%d A q%d.flood.example -> NXDOMAIN %s",
			    i % 256, i, i % 7 ? "" : "(long)");
		char big[4096];
		memset(big, 'b', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		sensor_log("%s", big);
		_exit(sensor_log_suppressed() > 10000 ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	off_t size = file_size(out);
	size_t nlines;
	char *last = last_line(out, &nlines);
	printf("log: %lld bytes in %zu lines; last: %.60s...\n",
	    (long long)size, nlines, last);
	assert_true(size > SENSOR_LOG_MAX / 2 && size <= SENSOR_LOG_MAX);
	assert_non_null(strstr(last, "log budget"));
	free(last);
	free(out);
	fx_free(f);
}


/* BUS=stdout: every event is one MACed line; log lines (even ones that
 * carry the magic, as a log of attacker bytes could) never pass the
 * host's check; the key leaves the environment. */
static void test_stdout_bus(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	char *out = xasprintf("%s/stdout", f->dir);
	uint8_t key[BUS_KEY_BYTES];
	char hex[2 * BUS_KEY_BYTES + 1];
	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)(i * 13 + 1);
	util_hex(key, sizeof key, hex);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(out, "w", stdout))
			_exit(2);
		setenv("EVIDENCE", f->chain, 1);
		setenv("RUN_ID", "run-stdout-1", 1);
		setenv("BUS", "stdout", 1);
		setenv("BUS_KEY", hex, 1);
		sensor_init("dns");
		if (getenv("BUS_KEY") != NULL)
			_exit(3);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", "a\nb.example");
		if (sensor_emit("dns_query", o) != 0)
			_exit(4);
		sensor_log("head=%s", "ARESBUS1 0000 {\"src\":\"dns\"}");
		sensor_log(BUS_LINE_MAGIC "%064d 2 {\"src\":\"dns\","
		    "\"kind\":\"bait\"}", 0);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "bait", "x");
		if (sensor_emit("bait", o) != 0)
			_exit(5);
		_exit(sensor_chain_count() == 3 ? 0 : 6);  /* genesis + 2 */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	struct errbuf e = { 0 };
	size_t len;
	char *text = util_read_file(out, 1 << 20, &len, &e);
	assert_non_null(text);
	size_t off = 0, lines = 0, good = 0, refused = 0, plain = 0;
	const char *line;
	size_t llen;
	const char *kinds[2] = { NULL, NULL };
	while (util_next_line(text, len, &off, &line, &llen)) {
		const char *j;
		size_t jl;
		uint64_t seq;
		lines++;
		uint8_t boot[BUS_BOOT_BYTES];
		int rc = bus_line_check(line, llen, key, "run-stdout-1", "dns",
		    &j, &jl, boot, &seq, &e);
		if (rc == 1) {
			assert_true(seq == good + 1);   /* 1, 2: in line order */
			cJSON *o = cJSON_ParseWithLength(j, jl);
			assert_non_null(o);
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(o,
			    "kind");
			assert_true(cJSON_IsString(k));
			if (good < 2)
				kinds[good] = strcmp(k->valuestring, "bait") == 0 ?
				    "bait" : "dns_query";
			cJSON_Delete(o);
			good++;
		} else if (rc == 0) {
			plain++;
		} else {
			refused++;
		}
	}
	assert_int_equal(lines, 4);
	assert_int_equal(good, 2);
	assert_string_equal(kinds[0], "dns_query");
	assert_string_equal(kinds[1], "bait");
	assert_int_equal(plain, 1);
	assert_int_equal(refused, 1);
	free(text);

	/* a bad key: no event lines at all, said on stderr */
	char *err = xasprintf("%s/stderr", f->dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(2);
		unsetenv("EVIDENCE");
		setenv("BUS", "stdout", 1);
		setenv("BUS_KEY", "abcd", 1);
		sensor_init("dns");
		int rc = sensor_emit("dns_query", NULL) == -1 ? 0 : 1;
		fflush(NULL);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	text = util_read_file(out, 1 << 20, &len, &e);
	assert_non_null(text);
	assert_int_equal(len, 0);
	free(text);
	text = util_read_file(err, 1 << 20, &len, &e);
	assert_non_null(text);
	assert_non_null(strstr(text, "BUS_KEY is not 64 hex digits"));
	free(text);
	free(err);
	free(out);
	fx_free(f);
}

/* BUS_KEY_FILE: the key read from a file (not the environment), the
 * file removed at start; a missing file: no events, said on stderr. */
static void test_stdout_key_file(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	char *out = xasprintf("%s/stdout", f->dir);
	char *kf = xasprintf("%s/bus.key", f->dir);
	char *err = xasprintf("%s/stderr", f->dir);
	uint8_t key[BUS_KEY_BYTES];
	char hex[2 * BUS_KEY_BYTES + 1];
	struct errbuf e = { 0 };
	struct stat sb;
	size_t len, off = 0, llen, good = 0;
	const char *line, *j;
	size_t jl;
	uint64_t seq;
	uint8_t boot[BUS_BOOT_BYTES];
	int status;
	char *text, *kline;

	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)(i * 5 + 9);
	util_hex(key, sizeof key, hex);
	kline = xasprintf("%s\n", hex);
	assert_int_equal(util_write_file(kf, kline, strlen(kline), 0400,
	    &e), 0);
	free(kline);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(out, "w", stdout))
			_exit(2);
		unsetenv("EVIDENCE");
		unsetenv("BUS_KEY");
		setenv("RUN_ID", "run-keyfile-1", 1);
		setenv("BUS", "stdout", 1);
		setenv("BUS_KEY_FILE", kf, 1);
		sensor_init("dns");
		if (sensor_emit("dns_query", NULL) != 0)
			_exit(3);
		_exit(lstat(kf, &sb) == -1 && errno == ENOENT ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	text = util_read_file(out, 1 << 20, &len, &e);
	assert_non_null(text);
	while (util_next_line(text, len, &off, &line, &llen))
		if (bus_line_check(line, llen, key, "run-keyfile-1", "dns", &j,
		    &jl, boot, &seq, &e) == 1)
			good++;
	assert_int_equal(good, 1);
	free(text);

	/* the file is gone now: a second sensor start has no key */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(2);
		unsetenv("EVIDENCE");
		unsetenv("BUS_KEY");
		setenv("BUS", "stdout", 1);
		setenv("BUS_KEY_FILE", kf, 1);
		sensor_init("dns");
		int rc = sensor_emit("dns_query", NULL) == -1 ? 0 : 1;
		fflush(NULL);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	text = util_read_file(err, 1 << 20, &len, &e);
	assert_non_null(text);
	assert_non_null(strstr(text, "BUS_KEY_FILE"));
	free(text);
	free(err);
	free(kf);
	free(out);
	fx_free(f);
}

/* test_stdout_torn: another thread's stdio lines to stdout (the
 * gateway's "control: deny") while events go out; set by that thread */
static volatile int torn_done;

static void *torn_ctl(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000 && !torn_done; i++) {
		printf("control: %s\n", "deny");
		fflush(stdout);
	}
	return NULL;
}

/* BUS=stdout under a racing stdout writer: every bus line is written
 * whole (no other line lands inside it), so all of them pass the check
 * and every other line is an intact control line. */
static void test_stdout_torn(void **state)
{
	(void)state;
	struct fixture *f = fx_new();
	char *out = xasprintf("%s/stdout", f->dir);
	uint8_t key[BUS_KEY_BYTES];
	char hex[2 * BUS_KEY_BYTES + 1], big[2000];
	enum { N = 2000 };

	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)(i * 7 + 3);
	util_hex(key, sizeof key, hex);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t;

		if (!freopen(out, "w", stdout))
			_exit(2);
		unsetenv("EVIDENCE");
		unsetenv("RUN_ID");
		setenv("BUS", "stdout", 1);
		setenv("BUS_KEY", hex, 1);
		sensor_init("gateway");
		if (pthread_create(&t, NULL, torn_ctl, NULL) != 0)
			_exit(3);
		for (int i = 0; i < N; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "pad", big);
			sensor_emit(i == N / 2 ? "bait" : "model_request", o);
		}
		torn_done = 1;
		pthread_join(t, NULL);
		fflush(stdout);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct errbuf e = { 0 };
	size_t len, off = 0, llen, good = 0, refused = 0, ctl = 0, torn = 0;
	size_t gaps = 0;
	uint64_t last = 0, seq;
	const char *line, *j;
	size_t jl;
	char *text = util_read_file(out, 1 << 30, &len, &e);
	assert_non_null(text);
	while (util_next_line(text, len, &off, &line, &llen)) {
		uint8_t boot[BUS_BOOT_BYTES];
		int rc = bus_line_check(line, llen, key, NULL, "gateway", &j,
		    &jl, boot, &seq, &e);
		if (rc == 1) {
			good++;
			assert_true(bus_seq_accept(&last, seq, &gaps));
		} else if (rc < 0) {
			refused++;
		} else if (llen == 13 && memcmp(line, "control: deny", 13) == 0) {
			ctl++;
		} else {
			torn++;
		}
	}
	print_message("bus lines %zu of %d, refused %zu, torn %zu, control "
	    "lines %zu\n", good, N, refused, torn, ctl);
	assert_int_equal(refused, 0);
	assert_int_equal(torn, 0);
	assert_int_equal(gaps, 0);
	assert_int_equal(good, N);
	assert_true(ctl > 0);
	free(text);
	free(out);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_truncates),
		cmocka_unit_test(test_budget_long_lines),
		cmocka_unit_test(test_budget_invalid),
		cmocka_unit_test(test_log_bounded),
		cmocka_unit_test(test_bait_never_dropped),
		cmocka_unit_test(test_stdout_bus),
		cmocka_unit_test(test_stdout_torn),
		cmocka_unit_test(test_stdout_key_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
