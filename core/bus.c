/*
 * bus.c - the receiving end of the lab's sensor bus: one JSON object per
 * unix datagram, sent by the gateway and the fake services to a socket in a
 * directory bind-mounted into them (never into the agent); and the check
 * of the same datagram carried as a MACed line of a sensor container's
 * stdout (BUS=stdout, a lab on a remote engine; bus_stream.c).
 */
#include "internal.h"

#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int
bus_open(const char *path, struct errbuf *e)
{
	struct sockaddr_un sun;
	int fd, rcvbuf = 4 * 1024 * 1024;

	if (strlen(path) >= sizeof sun.sun_path)
		return errbuf_set(e, ERRBUF_INTERNAL, "bus socket path too "
		    "long (%zu bytes, limit %zu): %s", strlen(path),
		    sizeof sun.sun_path - 1, path);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path) + 1);

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return errbuf_set(e, ERRBUF_INTERNAL, "bus socket: %s",
		    strerror(errno));
	/* Bursts from the lab must not be dropped while the kill path runs. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	if (unlink(path) == -1 && errno != ENOENT) {
		errbuf_set(e, ERRBUF_INTERNAL, "bus: remove stale %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "bus: bind %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	/* Only the owner sends (the drill hands it to the sensors' uid). */
	if (chmod(path, 0600) == -1) {
		errbuf_set(e, ERRBUF_INTERNAL, "bus: chmod %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* One datagram into buf (size bytes, MSG_TRUNC: *n is its real length).
 * 1: got one, 0: none pending, -1 + e. */
static int
bus_read(int fd, char *buf, size_t size, ssize_t *n, struct errbuf *e)
{
	for (;;) {
		*n = recv(fd, buf, size, MSG_TRUNC);
		if (*n == -1 && errno == EINTR)
			continue;
		break;
	}
	if (*n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return errbuf_set(e, ERRBUF_INTERNAL, "bus: recv: %s",
		    strerror(errno));
	}
	return 1;
}

/* The datagram buf[0..n) (n its real length, buf holding at least
 * BUS_DGRAM_MAX bytes of it) into ev, whose t_recv_ns is already set.
 * 1, or -1 + e (ERRBUF_INPUT). */
static int
bus_parse(struct bus_event *ev, const char *buf, ssize_t n, struct errbuf *e)
{
	const cJSON *t;

	if ((size_t)n > BUS_DGRAM_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "bus: datagram of %zd bytes "
		    "exceeds the %d byte limit", n, BUS_DGRAM_MAX);
	ev->raw = xstrndup(buf, (size_t)n);
	ev->raw_len = strlen(ev->raw);
	if (ev->raw_len != (size_t)n)
		return errbuf_set(e, ERRBUF_INPUT, "bus: datagram holds a NUL "
		    "byte at offset %zu", ev->raw_len);
	ev->json = cJSON_ParseWithLength(ev->raw, ev->raw_len);
	if (ev->json == NULL || !cJSON_IsObject(ev->json))
		return errbuf_set(e, ERRBUF_INPUT, "bus: datagram is not a "
		    "JSON object: %.80s", ev->raw);
	if (bus_event_str(ev, "src") == NULL ||
	    bus_event_str(ev, "kind") == NULL)
		return errbuf_set(e, ERRBUF_INPUT, "bus: datagram lacks "
		    "\"src\" or \"kind\": %.80s", ev->raw);
	t = cJSON_GetObjectItemCaseSensitive(ev->json, "t_mono_ns");
	/* A number loses precision past 2^53 ns (~104 days of uptime), so
	 * sensors may send the clock as a decimal string too. */
	if (cJSON_IsNumber(t) && t->valuedouble > 0 &&
	    t->valuedouble < 1.8e19)
		ev->t_sent_ns = (uint64_t)t->valuedouble;
	else if (cJSON_IsString(t) && t->valuestring[0] >= '0' &&
	    t->valuestring[0] <= '9') {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(t->valuestring, &end, 10);
		if (errno == 0 && *end == '\0')
			ev->t_sent_ns = v;
	}
	return 1;
}

int
bus_recv(int fd, struct bus_event *ev, struct errbuf *e)
{
	char buf[BUS_DGRAM_MAX + 1];
	ssize_t n;
	int rc;

	memset(ev, 0, sizeof *ev);
	if ((rc = bus_read(fd, buf, sizeof buf, &n, e)) <= 0)
		return rc;
	ev->t_recv_ns = util_mono_ns();
	if ((size_t)n >= BUS_ENV_LEN &&
	    memcmp(buf, BUS_ENV_MAGIC, sizeof BUS_ENV_MAGIC - 1) == 0)
		return errbuf_set(e, ERRBUF_INPUT, "bus: a receipt envelope on "
		    "a local lab's bus (only a remote lab's follower sends "
		    "one)");
	return bus_parse(ev, buf, n, e);
}

int
bus_recv_stream(int fd, struct bus_event *ev, struct errbuf *e)
{
	char buf[BUS_ENV_LEN + BUS_DGRAM_MAX + 1];
	const char *d = buf + sizeof BUS_ENV_MAGIC - 1;
	uint64_t now, v = 0;
	ssize_t n;
	int rc;

	memset(ev, 0, sizeof *ev);
	if ((rc = bus_read(fd, buf, sizeof buf, &n, e)) <= 0)
		return rc;
	now = util_mono_ns();
	ev->t_recv_ns = now;   /* until the envelope says otherwise */
	if ((size_t)n < BUS_ENV_LEN ||
	    memcmp(buf, BUS_ENV_MAGIC, sizeof BUS_ENV_MAGIC - 1) != 0 ||
	    buf[BUS_ENV_LEN - 1] != ' ')
		return errbuf_set(e, ERRBUF_INPUT, "bus: datagram without the "
		    "follower's receipt envelope (a remote lab's bus carries "
		    "only ares's own follower), %zd bytes", n);
	for (size_t i = 0; i < 20; i++) {
		if (d[i] < '0' || d[i] > '9' ||
		    v > (UINT64_MAX - (uint64_t)(d[i] - '0')) / 10)
			return errbuf_set(e, ERRBUF_INPUT, "bus: receipt "
			    "envelope: the arrival time is not a number");
		v = v * 10 + (uint64_t)(d[i] - '0');
	}
	/* the follower stamped it on this clock before sending it */
	if (v == 0 || v > now)
		return errbuf_set(e, ERRBUF_INPUT, "bus: receipt envelope: "
		    "arrival time %llu is not before its reading (%llu)",
		    (unsigned long long)v, (unsigned long long)now);
	ev->t_recv_ns = v;
	return bus_parse(ev, buf + BUS_ENV_LEN, n - (ssize_t)BUS_ENV_LEN, e);
}

size_t
bus_envelope(char *out, size_t outlen, uint64_t t_recv_ns, const char *json,
    size_t jlen)
{
	if (outlen < BUS_ENV_LEN + jlen || jlen > BUS_DGRAM_MAX)
		return 0;
	snprintf(out, outlen, "%s%020llu ", BUS_ENV_MAGIC,
	    (unsigned long long)t_recv_ns);
	memcpy(out + BUS_ENV_LEN, json, jlen);
	return BUS_ENV_LEN + jlen;
}

void
bus_event_free(struct bus_event *ev)
{
	cJSON_Delete(ev->json);
	free(ev->raw);
	memset(ev, 0, sizeof *ev);
}

const char *
bus_event_str(const struct bus_event *ev, const char *key)
{
	return util_json_str(ev->json, key, NULL);   /* json may be NULL */
}

int
bus_line_check(const char *line, size_t len,
    const uint8_t key[BUS_KEY_BYTES], const char *run_id, const char *src,
    const char **json, size_t *jlen, uint8_t boot[BUS_BOOT_BYTES],
    uint64_t *seq, struct errbuf *e)
{
	const size_t magic = sizeof BUS_LINE_MAGIC - 1;
	const size_t bh = 2 * BUS_BOOT_BYTES;
	uint8_t mac[crypto_auth_hmacsha256_BYTES], got[sizeof mac];
	crypto_auth_hmacsha256_state st;
	const char *j, *s, *q, *b;
	char hex[2 * sizeof mac + 1], bhex[2 * BUS_BOOT_BYTES + 1];
	uint64_t v;
	size_t n;
	cJSON *o;
	bool same;

	*json = NULL;
	*jlen = 0;
	*seq = 0;
	memset(boot, 0, BUS_BOOT_BYTES);
	if (run_id == NULL)
		run_id = "";
	if (len < magic || memcmp(line, BUS_LINE_MAGIC, magic) != 0)
		return 0;
	if (len > BUS_LINE_MAX)
		return errbuf_set(e, ERRBUF_INPUT, "bus line: %zu bytes "
		    "(limit %zu)", len, (size_t)BUS_LINE_MAX);
	if (len < magic + 2 * sizeof mac + 2 || line[magic + 2 * sizeof mac]
	    != ' ')
		return errbuf_set(e, ERRBUF_INPUT, "bus line: no MAC");
	memcpy(hex, line + magic, 2 * sizeof mac);
	hex[2 * sizeof mac] = '\0';
	if (util_unhex(hex, got, sizeof got) < 0)
		return errbuf_set(e, ERRBUF_INPUT, "bus line: MAC is not hex");
	b = line + magic + 2 * sizeof mac + 1;   /* "BOOT SEQ JSON" */
	if ((size_t)(line + len - b) < bh + 2 || b[bh] != ' ')
		return errbuf_set(e, ERRBUF_INPUT, "bus line: no boot nonce");
	memcpy(bhex, b, bh);
	bhex[bh] = '\0';
	if (util_unhex(bhex, boot, BUS_BOOT_BYTES) < 0) {
		memset(boot, 0, BUS_BOOT_BYTES);
		return errbuf_set(e, ERRBUF_INPUT, "bus line: boot nonce is "
		    "not hex");
	}
	q = b + bh + 1;                          /* "SEQ JSON" */
	for (j = q, v = 0; j < line + len && *j >= '0' && *j <= '9' &&
	    j - q < 20; j++)
		v = v * 10 + (uint64_t)(*j - '0');
	if (j == q || j >= line + len || *j != ' ' || *q == '0' ||
	    (j - q == 20 && strncmp(q, "18446744073709551615", 20) > 0)) {
		memset(boot, 0, BUS_BOOT_BYTES);
		return errbuf_set(e, ERRBUF_INPUT, "bus line: no sequence "
		    "number");
	}
	j++;
	n = len - (size_t)(j - line);
	if (n > BUS_DGRAM_MAX || memchr(j, '\0', n) != NULL) {
		memset(boot, 0, BUS_BOOT_BYTES);
		return errbuf_set(e, ERRBUF_INPUT, "bus line: datagram of %zu "
		    "bytes or with a NUL", n);
	}
	/* the run, then everything after the MAC */
	crypto_auth_hmacsha256_init(&st, key, BUS_KEY_BYTES);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)run_id,
	    strlen(run_id));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"\n", 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)b,
	    len - (size_t)(b - line));
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof st);
	same = sodium_memcmp(mac, got, sizeof mac) == 0;
	if (!same) {
		memset(boot, 0, BUS_BOOT_BYTES);
		return errbuf_set(e, ERRBUF_INPUT, "bus line: MAC does not "
		    "match (not written by this container's sensor in this "
		    "run)");
	}
	o = cJSON_ParseWithLength(j, n);
	s = util_json_str(o, "src", NULL);
	if (s == NULL || strcmp(s, src) != 0) {
		char shown[80];
		util_sanitize(shown, sizeof shown, s != NULL ? s : "(none)",
		    s != NULL ? strlen(s) : 6, false);
		cJSON_Delete(o);
		memset(boot, 0, BUS_BOOT_BYTES);
		return errbuf_set(e, ERRBUF_INPUT, "bus line: src \"%s\" is not "
		    "this container's (\"%s\")", shown, src);
	}
	cJSON_Delete(o);
	*json = j;
	*jlen = n;
	*seq = v;
	return 1;
}

bool
bus_seq_accept(uint64_t *last, uint64_t seq, size_t *gaps)
{
	if (seq <= *last)
		return false;
	if (seq - *last > 1)
		*gaps += (size_t)(seq - *last - 1);
	*last = seq;
	return true;
}

bool
bus_seq_take(struct bus_seq *s, const uint8_t boot[BUS_BOOT_BYTES],
    uint64_t seq, size_t *gaps)
{
	if (s->have && memcmp(s->boot, boot, BUS_BOOT_BYTES) == 0)
		return bus_seq_accept(&s->last, seq, gaps);
	for (size_t i = 0; i < s->nold; i++)
		if (memcmp(s->old[i], boot, BUS_BOOT_BYTES) == 0) {
			s->stale++;
			return false;   /* an earlier start's line, replayed */
		}
	if (s->have) {
		/* a new start: the one before is never taken again (the
		 * oldest forgotten once BUS_BOOTS_MAX are kept) */
		if (s->nold == BUS_BOOTS_MAX) {
			memmove(s->old[0], s->old[1],
			    (BUS_BOOTS_MAX - 1) * BUS_BOOT_BYTES);
			s->nold--;
		}
		memcpy(s->old[s->nold++], s->boot, BUS_BOOT_BYTES);
		s->restarts++;
	}
	s->have = true;
	memcpy(s->boot, boot, BUS_BOOT_BYTES);
	s->last = 0;
	return bus_seq_accept(&s->last, seq, gaps);   /* first != 1: lost */
}
