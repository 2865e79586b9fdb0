/*
 * sensor.c - the sender side of the sensor bus (core/bus.c receives), and
 * the sensor's own hash-chained evidence file.
 *
 * One compact JSON object per AF_UNIX datagram to $BUS, never blocking and
 * never failing loudly: a sensor must not wedge the component it watches.
 * With $EVIDENCE set the same event is appended to the sensor's chain
 * (core/evidence.c), within the budget $EVIDENCE_MAX_BYTES: the last line
 * of a chain that reached it is "truncated".  Protocol: docs/sensors.md.
 */
#include "leakbox.h"

#include <sodium.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SENSOR_ERRORS_MAX 32   /* sensor_error datagrams per process */

static char sensor_src[128] = "unknown";
static int sensor_fd = -1;
/* BUS=stdout: lines on stdout, MACed with the container's BUS_KEY */
static bool sensor_stdout;
static uint8_t sensor_key[BUS_KEY_BYTES];
static unsigned long long sensor_seq;   /* last line's (sensor_log_mu) */
/* this start's nonce (hex) and $RUN_ID, both under every line's MAC */
static char sensor_boot[2 * BUS_BOOT_BYTES + 1];
static char sensor_run[256];
static struct sockaddr_un sensor_addr;
static bool sensor_ready;
static pthread_once_t sensor_once = PTHREAD_ONCE_INIT;
/* serialises send + append so the chain order is the bus order */
static pthread_mutex_t sensor_mu = PTHREAD_MUTEX_INITIALIZER;
static struct evidence *sensor_chain;
static unsigned sensor_nerrors;
static char sensor_pending_err[512];   /* chain open error, sent later */
static char sensor_budget_err[256];    /* EVIDENCE_MAX_BYTES problem */
static size_t sensor_budget = SENSOR_BUDGET_DEFAULT;
static bool sensor_truncated;          /* the "truncated" line is written */
static size_t sensor_dropped;          /* events not chained since */
/* sensor_log: bytes printed, lines suppressed (under sensor_log_mu) */
static pthread_mutex_t sensor_log_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t sensor_logged, sensor_log_dropped;
static bool sensor_log_full;

/* What bus_send does with the chain: nothing (sensor_error), append the
 * event within the budget, or append the final "truncated" line. */
enum chain_mode { CHAIN_NONE, CHAIN_EVENT, CHAIN_FINAL };

static int bus_send(const char *kind, cJSON *fields, enum chain_mode mode);
static __thread uint64_t sensor_t_req;   /* sensor_request_time */

/* Report a chain problem on the bus (bounded count) and on stderr.  Called
 * with sensor_mu held or before any other thread exists. */
static void
sensor_error_locked(const char *msg)
{
	if (sensor_nerrors >= SENSOR_ERRORS_MAX) {
		if (sensor_nerrors == SENSOR_ERRORS_MAX) {
			sensor_nerrors++;
			fprintf(stderr, "sensor %s: %u errors: further ones are not "
			    "reported\n", sensor_src, SENSOR_ERRORS_MAX);
		}
		return;
	}
	fprintf(stderr, "sensor %s: %s\n", sensor_src, msg);
	sensor_nerrors++;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "error", msg);
	bus_send("sensor_error", f, CHAIN_NONE);
}

/* Write one whole line (len bytes, its newline included) to stdout with
 * one write(2) while holding stdout's FILE lock, which every stdio call
 * of every thread takes: what other threads printed before is flushed
 * first and nothing of theirs lands inside the line.  0 or -1. */
static int
sensor_write_line(const char *buf, size_t len)
{
	int rc = 0;

	flockfile(stdout);
	if (fflush(stdout) == EOF)
		rc = -1;
	while (rc == 0 && len > 0) {
		ssize_t n = write(fileno(stdout), buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	funlockfile(stdout);
	return rc;
}

void
sensor_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* the last byte of line is for the newline */
	size_t len = (size_t)n < sizeof(line) - 1 ? (size_t)n :
	    sizeof(line) - 2;
	line[len] = '\n';
	pthread_mutex_lock(&sensor_log_mu);
	if (sensor_log_full) {
		sensor_log_dropped++;
	} else if (sensor_logged + len + 1 + 512 > SENSOR_LOG_MAX) {
		/* the last 512 bytes are for this note (< 300) */
		char note[320];
		int m = snprintf(note, sizeof note, "%.100s: %zu bytes of log "
		    "lines: the log budget (%u) is reached, further lines are "
		    "not printed (events still go to the bus and the evidence "
		    "chain)\n", sensor_src, sensor_logged, SENSOR_LOG_MAX);

		sensor_log_full = true;
		sensor_log_dropped++;
		if (m > 0 && (size_t)m < sizeof note)
			(void)sensor_write_line(note, (size_t)m);
	} else {
		(void)sensor_write_line(line, len + 1);
		sensor_logged += len + 1;
	}
	pthread_mutex_unlock(&sensor_log_mu);
}

size_t
sensor_log_suppressed(void)
{
	pthread_mutex_lock(&sensor_log_mu);
	size_t n = sensor_log_dropped;
	pthread_mutex_unlock(&sensor_log_mu);
	return n;
}

size_t
sensor_budget_parse(const char *v, char *why, size_t whylen)
{
	if (whylen)
		why[0] = '\0';
	if (!v || !*v)
		return SENSOR_BUDGET_DEFAULT;
	char shown[48];
	util_sanitize(shown, sizeof(shown), v, strnlen(v, 40), false);
	uint64_t n = 0;
	bool over = false;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9') {
			snprintf(why, whylen, "EVIDENCE_MAX_BYTES '%s%s' is not a "
			    "decimal byte count: using the default %u", shown,
			    strlen(v) > 40 ? "..." : "", SENSOR_BUDGET_DEFAULT);
			return SENSOR_BUDGET_DEFAULT;
		}
		if (!over) {
			n = n * 10 + (uint64_t)(*p - '0');
			over = n > SENSOR_BUDGET_MAX;
		}
	}
	if (over) {
		snprintf(why, whylen, "EVIDENCE_MAX_BYTES %s%s is above the "
		    "ceiling: using %u", shown, strlen(v) > 40 ? "..." : "",
		    SENSOR_BUDGET_MAX);
		return SENSOR_BUDGET_MAX;
	}
	if (n == 0) {
		snprintf(why, whylen, "EVIDENCE_MAX_BYTES 0 is not a budget: "
		    "using the default %u", SENSOR_BUDGET_DEFAULT);
		return SENSOR_BUDGET_DEFAULT;
	}
	if (n < SENSOR_BUDGET_MIN) {
		snprintf(why, whylen, "EVIDENCE_MAX_BYTES %s is below the "
		    "minimum: using %u", shown, SENSOR_BUDGET_MIN);
		return SENSOR_BUDGET_MIN;
	}
	return (size_t)n;
}

/* Open $EVIDENCE for $RUN_ID.  An existing file (sensor restarted) is kept
 * and a sibling "<stem>.rN.jsonl" is created instead: a chain is never
 * appended to by a second writer that does not know its head. */
static void
chain_open(void)
{
	const char *path = getenv("EVIDENCE");
	const char *run_id = getenv("RUN_ID");
	if (!path || !*path)
		return;
	if (!run_id || !*run_id) {
		snprintf(sensor_pending_err, sizeof(sensor_pending_err),
		    "EVIDENCE=%s but RUN_ID is unset: no evidence chain", path);
		return;
	}
	sensor_budget = sensor_budget_parse(getenv("EVIDENCE_MAX_BYTES"),
	    sensor_budget_err, sizeof(sensor_budget_err));
	struct errbuf e = { 0 };
	sensor_chain = evidence_create(path, run_id, &e);
	if (sensor_chain)
		return;
	char first[256];
	snprintf(first, sizeof(first), "%.250s", e.msg);
	size_t pl = strlen(path);
	size_t stem = pl > 6 && strcmp(path + pl - 6, ".jsonl") == 0 ? pl - 6 : pl;
	for (int n = 1; n <= 9 && !sensor_chain; n++) {
		char *alt = xasprintf("%.*s.r%d.jsonl", (int)stem, path, n);
		struct errbuf e2 = { 0 };
		sensor_chain = evidence_create(alt, run_id, &e2);
		if (sensor_chain)
			snprintf(sensor_pending_err, sizeof(sensor_pending_err),
			    "%.250s; writing %.200s instead", first, alt);
		free(alt);
	}
	if (!sensor_chain)
		snprintf(sensor_pending_err, sizeof(sensor_pending_err),
		    "no evidence chain: %s", first);
}

/* Once per process: the bus socket ($BUS, a unix datagram address) and
 * the chain (chain_open); what went wrong meanwhile goes out as
 * "sensor_error" events. */
/* BUS_KEY_FILE: the key's hex digits (a newline may follow) read from
 * path into buf (len bytes, NUL-terminated), then the file removed, so
 * the key is neither in the container's configuration nor left on disk.
 * 0, or -1 with sensor_pending_err set. */
static int
key_file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	buf[0] = '\0';
	if (fd >= 0) {
		while (got < len - 1 && ((n = read(fd, buf + got,
		    len - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
			if (n > 0)
				got += (size_t)n;
		close(fd);
	}
	buf[got] = '\0';
	if (got > 0 && buf[got - 1] == '\n')
		buf[--got] = '\0';
	if (fd < 0 || n < 0 || unlink(path) < 0) {
		snprintf(sensor_pending_err, sizeof(sensor_pending_err),
		    "BUS=stdout but BUS_KEY_FILE %.200s: %s: no events", path,
		    strerror(errno));
		sodium_memzero(buf, len);
		return -1;
	}
	return 0;
}

static void
sensor_open(void)
{
	const char *bus = getenv("BUS");
	if (bus && strcmp(bus, "stdout") == 0) {
		char *k = getenv("BUS_KEY"), kbuf[2 * BUS_KEY_BYTES + 2];
		char *env_k = k;
		const char *kf = getenv("BUS_KEY_FILE");
		const char *run = getenv("RUN_ID");
		uint8_t boot[BUS_BOOT_BYTES];

		/* the file, when named, instead of the environment */
		if (kf != NULL && *kf != '\0')
			k = key_file_read(kf, kbuf, sizeof kbuf) == 0 ? kbuf :
			    NULL;
		if (run == NULL)
			run = "";
		if (sensor_pending_err[0] != '\0') {
			/* the key file failed: said below */
		} else if (strlen(run) >= sizeof sensor_run ||
		    strchr(run, '\n') != NULL) {
			snprintf(sensor_pending_err, sizeof(sensor_pending_err),
			    "BUS=stdout but RUN_ID is over %zu bytes or holds a "
			    "newline: no events", sizeof sensor_run - 1);
		} else if (k && strlen(k) == 2 * BUS_KEY_BYTES &&
		    util_unhex(k, sensor_key, BUS_KEY_BYTES) == 0) {
			snprintf(sensor_run, sizeof sensor_run, "%s", run);
			randombytes_buf(boot, sizeof boot);
			util_hex(boot, sizeof boot, sensor_boot);
			sensor_stdout = true;
			sensor_ready = true;
		} else {
			snprintf(sensor_pending_err, sizeof(sensor_pending_err),
			    "BUS=stdout but BUS_KEY is not %d hex digits: no "
			    "events", 2 * BUS_KEY_BYTES);
		}
		/* the bytes themselves cleared first: getenv points into the
		 * process's initial environment block, which /proc/PID/environ
		 * shows and unsetenv leaves in place; then out of environ, so
		 * no child of this process inherits it (the container's own
		 * configuration still holds it: docs/sensors.md) */
		if (env_k != NULL)
			sodium_memzero(env_k, strlen(env_k));
		(void)unsetenv("BUS_KEY");
		sodium_memzero(kbuf, sizeof kbuf);
	} else if (bus && *bus && strlen(bus) < sizeof(sensor_addr.sun_path)) {
		sensor_addr.sun_family = AF_UNIX;
		strcpy(sensor_addr.sun_path, bus);
		sensor_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
		sensor_ready = sensor_fd >= 0;
	}
	chain_open();
	pthread_mutex_lock(&sensor_mu);
	if (sensor_pending_err[0])
		sensor_error_locked(sensor_pending_err);
	if (sensor_chain && sensor_budget_err[0])
		sensor_error_locked(sensor_budget_err);
	pthread_mutex_unlock(&sensor_mu);
}

size_t
sensor_chain_count(void)
{
	pthread_mutex_lock(&sensor_mu);
	size_t n = evidence_count(sensor_chain);
	pthread_mutex_unlock(&sensor_mu);
	return n;
}

size_t
sensor_chain_dropped(void)
{
	pthread_mutex_lock(&sensor_mu);
	size_t n = sensor_dropped;
	pthread_mutex_unlock(&sensor_mu);
	return n;
}

void
sensor_init(const char *src)
{
	snprintf(sensor_src, sizeof(sensor_src), "%s", src);
	pthread_once(&sensor_once, sensor_open);
}

char *
sensor_trunc(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return xstrdup(s);
	size_t keep = max >= 3 ? max - 3 : 0;
	/* back off to a UTF-8 boundary (never end inside a sequence) */
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
		keep--;
	char *out = xmalloc(keep + 4);
	memcpy(out, s, keep);
	memcpy(out + keep, "...", 4);
	return out;
}

/* The longest string value among obj's members (recursing into arrays and
 * objects), or NULL. */
static cJSON *
longest_string(cJSON *obj, size_t *len)
{
	cJSON *best = NULL;
	*len = 0;
	cJSON *it;
	cJSON_ArrayForEach(it, obj) {
		if (cJSON_IsString(it) && it->valuestring) {
			size_t l = strlen(it->valuestring);
			if (l > *len) {
				*len = l;
				best = it;
			}
		} else if (cJSON_IsArray(it) || cJSON_IsObject(it)) {
			size_t l;
			cJSON *b = longest_string(it, &l);
			if (b && l > *len) {
				*len = l;
				best = b;
			}
		}
	}
	return best;
}

char *
sensor_serialize(cJSON *obj, size_t max)
{
	for (int round = 0; round < 64; round++) {
		char *s = cJSON_PrintUnformatted(obj);
		if (!s)
			return NULL;
		size_t n = strlen(s);
		if (n < max)
			return s;
		free(s);
		size_t l;
		cJSON *victim = longest_string(obj, &l);
		if (!victim || l <= 16)
			return NULL;
		/* escaping can inflate a string up to 6x; cut by the overflow plus
		 * a margin, at least halving */
		size_t over = n - max + 64;
		size_t target = l > over * 6 ? l - over : l / 2;
		if (target > l / 2 && over * 6 >= l)
			target = l / 2;
		char *t = sensor_trunc(victim->valuestring, target);
		cJSON_SetValuestring(victim, t);
		free(t);
	}
	return NULL;
}

/* The chain budget was reached by an event of kind `kind`: write the
 * final "truncated" line (and its datagram) and seal the chain.  Called
 * with sensor_mu held. */
static void
chain_seal_locked(const char *kind)
{
	sensor_truncated = true;
	sensor_dropped = 1;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "budget_bytes", (double)sensor_budget);
	cJSON_AddNumberToObject(f, "bytes_written",
	    (double)evidence_bytes(sensor_chain));
	cJSON_AddNumberToObject(f, "events_dropped", 1);
	char *k = sensor_trunc(kind, 64);
	cJSON_AddStringToObject(f, "dropped_kind", k);
	free(k);
	fprintf(stderr, "sensor %s: evidence budget of %zu bytes reached "
	    "(%zu written): chain sealed with a truncated line\n", sensor_src,
	    sensor_budget, evidence_bytes(sensor_chain));
	bus_send("truncated", f, CHAIN_FINAL);
}

/* Upper bound of the chain line for fields f: the datagram printed in
 * dgram_len bytes holds every member of f and more; without a datagram
 * (it did not fit) f is printed here. */
static size_t
line_bound(const cJSON *f, size_t dgram_len)
{
	if (dgram_len > 0)
		return dgram_len + EVIDENCE_LINE_OVERHEAD;
	char *p = cJSON_PrintUnformatted(f);
	size_t n = p ? strlen(p) : EVIDENCE_LINE_MAX;
	cJSON_free(p);
	return n + EVIDENCE_LINE_OVERHEAD;
}

/*
 * One datagram to the bus.  The receiver's queue is short (the kernel's
 * net.unix.max_dgram_qlen, 10 here): a full queue drops a datagram at
 * once, which must never hide the bait from the kill path.  A bait event
 * is therefore retried for up to SENSOR_BAIT_SEND_MS (the caller, the
 * request that used the bait, waits meanwhile); any other event is sent
 * once and, when the queue is full, lives on in the chain only.  0 or -1.
 */
#define SENSOR_BAIT_SEND_MS 3000

/* BUS=stdout: one line, BUS_LINE_MAGIC, the MAC, this start's nonce,
 * the line's sequence number (1, 2, ...: the receiver drops repeats, as
 * the engine's log reader can replay lines after a log rotation, and
 * counts gaps; the nonce tells a restarted sensor's numbers from the
 * earlier start's), the datagram (which holds no newline: compact JSON
 * escapes it); the MAC covers "RUN_ID\nBOOT SEQ DATAGRAM".  Built in
 * one buffer and written by sensor_write_line (one write under stdout's
 * FILE lock, so no other thread's stdio output lands inside it), under
 * sensor_log_mu so the numbers follow the line order.  0 or -1. */
static int
sensor_line(const char *s, size_t len)
{
	uint8_t mac[crypto_auth_hmacsha256_BYTES];
	char hex[2 * sizeof mac + 1], seq[2 * BUS_BOOT_BYTES + 24];
	int rc;

	if (memchr(s, '\n', len) != NULL)
		return -1;
	pthread_mutex_lock(&sensor_log_mu);
	snprintf(seq, sizeof seq, "%s %llu ", sensor_boot, ++sensor_seq);
	crypto_auth_hmacsha256_state st;
	crypto_auth_hmacsha256_init(&st, sensor_key, sizeof sensor_key);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)sensor_run,
	    strlen(sensor_run));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"\n", 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)seq,
	    strlen(seq));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)s, len);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof st);
	util_hex(mac, sizeof mac, hex);
	/* the whole line in one buffer, written at once */
	size_t ml = strlen(BUS_LINE_MAGIC), hl = strlen(hex), sl = strlen(seq);
	size_t total = ml + hl + 1 + sl + len + 1;
	char *buf = xmalloc(total), *p = buf;
	memcpy(p, BUS_LINE_MAGIC, ml);
	p += ml;
	memcpy(p, hex, hl);
	p += hl;
	*p++ = ' ';
	memcpy(p, seq, sl);
	p += sl;
	memcpy(p, s, len);
	p += len;
	*p = '\n';
	rc = sensor_write_line(buf, total);
	free(buf);
	pthread_mutex_unlock(&sensor_log_mu);
	return rc;
}

static int
sensor_send(const char *s, size_t len, bool critical)
{
	uint64_t deadline = util_mono_ns() + SENSOR_BAIT_SEND_MS * 1000000ull;

	if (sensor_stdout)
		return sensor_line(s, len);

	for (;;) {
		ssize_t n = sendto(sensor_fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL,
		    (struct sockaddr *)&sensor_addr, sizeof(sensor_addr));
		if (n >= 0)
			return 0;
		if (!critical || (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != ENOBUFS) || util_mono_ns() >= deadline)
			return -1;
		struct timespec ts = { 0, 1000000 };   /* 1 ms */
		nanosleep(&ts, NULL);
	}
}

/* Build, send and (per mode) append one event.  fields is consumed.
 * CHAIN_EVENT appends within (budget - SENSOR_TRUNC_RESERVE) or seals the
 * chain instead; CHAIN_FINAL (the truncated line) may use the reserve.
 * Returns the datagram's send result.  Called with sensor_mu held. */
static int
bus_send(const char *kind, cJSON *fields, enum chain_mode mode)
{
	if (!fields)
		fields = cJSON_CreateObject();
	bool chain = mode != CHAIN_NONE && sensor_chain;
	if (!sensor_ready && !chain) {
		cJSON_Delete(fields);
		return -1;
	}
	uint64_t t = util_mono_ns();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "src", sensor_src);
	cJSON_AddStringToObject(o, "kind", kind);
	/* raw integer: a double would lose nanoseconds past 2^53 */
	char ts[32];
	snprintf(ts, sizeof(ts), "%llu", (unsigned long long)t);
	cJSON_AddRawToObject(o, "t_mono_ns", ts);
	if (sensor_t_req != 0 && sensor_t_req <= t) {
		snprintf(ts, sizeof(ts), "%llu", (unsigned long long)sensor_t_req);
		cJSON_AddRawToObject(o, "t_req_ns", ts);
	}
	cJSON *it = fields->child;
	while (it) {
		cJSON *next = it->next;
		cJSON_DetachItemViaPointer(fields, it);
		if (cJSON_GetObjectItemCaseSensitive(o, it->string))
			cJSON_Delete(it);   /* the common fields win */
		else
			cJSON_AddItemToObject(o, it->string, it);
		it = next;
	}
	cJSON_Delete(fields);
	/* shrinks o in place: the chain gets the same (cut) fields */
	char *s = sensor_serialize(o, BUS_DGRAM_MAX);
	size_t slen = s ? strlen(s) : 0;
	int rc = -1;
	if (s && sensor_ready)
		rc = sensor_send(s, slen, strcmp(kind, "bait") == 0);
	free(s);
	if (chain && mode == CHAIN_EVENT && sensor_truncated) {
		sensor_dropped++;
		chain = false;
	}
	if (chain) {
		cJSON *f = cJSON_CreateObject();
		for (cJSON *m = o->child; m; m = m->next) {
			if (strcmp(m->string, "kind") == 0 ||
			    strcmp(m->string, "t_mono_ns") == 0)
				continue;
			cJSON_AddItemToObject(f, m->string, cJSON_Duplicate(m, 1));
		}
		size_t have = evidence_bytes(sensor_chain);
		size_t limit = mode == CHAIN_FINAL ? sensor_budget :
		    sensor_budget - SENSOR_TRUNC_RESERVE;
		if (have + line_bound(f, slen) > limit) {
			cJSON_Delete(f);
			cJSON_Delete(o);
			if (mode == CHAIN_EVENT)
				chain_seal_locked(kind);
			else
				sensor_error_locked("evidence budget: no room left "
				    "for the truncated line");
			return rc;
		}
		struct errbuf e = { 0 };
		if (evidence_append(sensor_chain, kind, t, f, &e) < 0) {
			char msg[400];
			snprintf(msg, sizeof(msg), "evidence append (%.64s): %.300s", kind,
			    e.msg);
			cJSON_Delete(f);
			cJSON_Delete(o);
			sensor_error_locked(msg);
			return rc;
		}
		cJSON_Delete(f);
	}
	cJSON_Delete(o);
	return rc;
}

uint64_t
sensor_request_time(uint64_t t)
{
	uint64_t old = sensor_t_req;

	sensor_t_req = t;
	return old;
}

int
sensor_emit(const char *kind, cJSON *fields)
{
	pthread_once(&sensor_once, sensor_open);
	pthread_mutex_lock(&sensor_mu);
	int rc = bus_send(kind, fields, CHAIN_EVENT);
	pthread_mutex_unlock(&sensor_mu);
	return rc;
}
