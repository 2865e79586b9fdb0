/*
 * bus_stream.c - sensor events over the engine's log stream (a lab on a
 * remote engine, where no host socket can be bind-mounted): one stdout
 * follower (docker_follow_*) per sensor container; each line that passes
 * bus_line_check (the container's own key, its own "src") is stamped with
 * its arrival (CLOCK_MONOTONIC, the receipt clock) and queued; one sender
 * thread hands each, as the datagram it carries inside a receipt envelope
 * (bus_envelope), to the drill's bus socket, so the drill's receive path
 * (bus_recv_stream, the kill path) sees it as it would see the datagram
 * on the local path, with the time it reached ares.  Lines without the magic are the sensor's
 * ordinary log and are ignored; magic lines that fail are dropped and
 * counted; a line whose sequence number came before (the engine's log
 * reader replays lines after a log rotation, Engine 20.10) is dropped,
 * and numbers skipped are counted as lost.  The agent's stdout is never
 * followed.
 */
#include "internal.h"

#include <sodium.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* One followed container. */
struct bus_tap {
	struct bus_stream *s;
	char *src;
	uint8_t key[BUS_KEY_BYTES];
	char *run_id;
	struct docker_follow *f;
	struct bus_seq seq;            /* the follower's thread only */
	size_t repeated, lost;         /* read after the follower stopped */
};

/* One enveloped datagram waiting for the sender. */
struct bus_qent {
	char *buf;
	size_t len;
};

struct bus_stream {
	int fd;                        /* connected to the bus socket */
	struct bus_tap *taps;
	size_t n;
	atomic_size_t lines, forwarded, malformed, send_failed;
	pthread_mutex_t err_mu;
	char first_bad[200];           /* the first refusal, for the record */
	/* The followers never send: they stamp and queue (so a drill that
	 * does not read its socket, the kill path, delays no arrival
	 * stamp); one sender thread empties the queue into the socket. */
	pthread_mutex_t q_mu;
	pthread_cond_t q_cv;
	struct bus_qent q[BUS_STREAM_QMAX];
	size_t q_head, q_n;
	atomic_size_t pending;         /* queued or being sent */
	bool q_stop;                   /* under q_mu: the sender gives up */
	bool have_sender;
	pthread_t sender;
};

/* Follower callback (a follower's thread): check, stamp, queue (never
 * blocks on the bus socket). */
static void
tap_line(void *ctx, const char *line, size_t len, uint64_t t_recv_ns)
{
	struct bus_tap *t = ctx;
	struct bus_stream *s = t->s;
	struct errbuf e = {0};
	const char *json;
	size_t jlen;
	uint8_t boot[BUS_BOOT_BYTES];
	uint64_t seq;
	size_t dlen;
	int rc;

	atomic_fetch_add(&s->lines, 1);
	rc = bus_line_check(line, len, t->key, t->run_id, t->src, &json, &jlen,
	    boot, &seq, &e);
	if (rc == 0)
		return;
	if (rc < 0) {
		atomic_fetch_add(&s->malformed, 1);
		pthread_mutex_lock(&s->err_mu);
		if (s->first_bad[0] == '\0')
			snprintf(s->first_bad, sizeof s->first_bad, "%.60s: %.130s",
			    t->src, e.msg);
		pthread_mutex_unlock(&s->err_mu);
		return;
	}
	{
		size_t stale = t->seq.stale;

		if (!bus_seq_take(&t->seq, boot, seq, &t->lost)) {
			if (t->seq.stale == stale)
				t->repeated++;
			return;
		}
	}
	/* The line's arrival at ares (t_recv_ns, stamped by the follower as
	 * the line's last byte came) travels with it: the receipt clock
	 * judges by it, not by when the drill reads the socket (it does not
	 * while the kill path runs). */
	{
		char *buf = xmalloc(BUS_ENV_LEN + jlen);

		dlen = bus_envelope(buf, BUS_ENV_LEN + jlen, t_recv_ns, json,
		    jlen);
		if (dlen == 0) {
			free(buf);
			atomic_fetch_add(&s->malformed, 1);
			return;
		}
		pthread_mutex_lock(&s->q_mu);
		if (s->q_n == BUS_STREAM_QMAX) {
			/* the drill has not read for that long: fail closed */
			pthread_mutex_unlock(&s->q_mu);
			free(buf);
			atomic_fetch_add(&s->send_failed, 1);
			return;
		}
		s->q[(s->q_head + s->q_n) % BUS_STREAM_QMAX] =
		    (struct bus_qent){ buf, dlen };
		s->q_n++;
		atomic_fetch_add(&s->pending, 1);
		pthread_cond_signal(&s->q_cv);
		pthread_mutex_unlock(&s->q_mu);
	}
}

/* The sender thread: each queued datagram to the bus socket in order,
 * blocking (in BUS_STREAM_TRY_MS steps: a full socket queue waits instead
 * of dropping, so a burst never hides the bait) for at most
 * BUS_STREAM_SEND_MS per datagram (then it is counted as not sent, and
 * dropped); at q_stop whatever is still queued is counted as not sent. */
static void *
bus_sender(void *arg)
{
	struct bus_stream *s = arg;

	for (;;) {
		struct bus_qent q;
		uint64_t t0;

		pthread_mutex_lock(&s->q_mu);
		while (s->q_n == 0 && !s->q_stop)
			pthread_cond_wait(&s->q_cv, &s->q_mu);
		if (s->q_n == 0) {
			pthread_mutex_unlock(&s->q_mu);
			return NULL;
		}
		q = s->q[s->q_head];
		s->q_head = (s->q_head + 1) % BUS_STREAM_QMAX;
		s->q_n--;
		pthread_mutex_unlock(&s->q_mu);
		t0 = util_mono_ns();
		for (;;) {
			ssize_t w = send(s->fd, q.buf, q.len, MSG_NOSIGNAL);
			bool stop;

			if (w == (ssize_t)q.len) {
				atomic_fetch_add(&s->forwarded, 1);
				break;
			}
			if (w < 0 && errno == EINTR)
				continue;
			pthread_mutex_lock(&s->q_mu);
			stop = s->q_stop;
			pthread_mutex_unlock(&s->q_mu);
			if (w >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ||
			    stop || util_mono_ns() - t0 >=
			    (uint64_t)BUS_STREAM_SEND_MS * 1000000ull) {
				atomic_fetch_add(&s->send_failed, 1);
				break;
			}
		}
		free(q.buf);
		atomic_fetch_sub(&s->pending, 1);
	}
}

/* Where the current start's lines begin, as the logs API's "since"
 * ("SECONDS.NANOS", UTC) into out: for a running container the end of its
 * previous start (State.FinishedAt: the engine sets it once that start's
 * log copier has drained, and the new process starts after it, so no line
 * of either side is misplaced; StartedAt is set after the process already
 * runs and could skip its first lines); for a stopped one its last
 * StartedAt.  "" when there is no such time (never stopped, or never
 * started): the whole log is one start's.  0, or -1 + e (inspect failed,
 * or a time this cannot read). */
static int
started_since(const struct docker *d, const char *id, char *out,
    size_t outlen, struct errbuf *e)
{
	struct docker *c = docker_clone(d);
	cJSON *ins = docker_container_inspect(c, id, e);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(ins, "State");
	const char *at = util_json_str(st, docker_inspect_running(ins) ?
	    "FinishedAt" : "StartedAt", NULL);
	struct tm tm = {0};
	char frac[10] = "000000000", tail[4] = "";
	int y, mo, da, h, mi, se, n = 0, rc = -1;

	out[0] = '\0';
	if (ins == NULL) {
		errbuf_prefix(e, "bus stream: inspect %s", id);
		goto out;
	}
	/* "2026-12-04T21:25:32.123456789Z" (fraction optional, UTC) */
	if (at == NULL || sscanf(at, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &da,
	    &h, &mi, &se, &n) != 6 || n != 19) {
		errbuf_set(e, ERRBUF_INPUT, "bus stream: %s: State time "
		    "unreadable", id);
		goto out;
	}
	if (at[n] == '.') {
		size_t k = 0;

		for (n++; at[n] >= '0' && at[n] <= '9'; n++)
			if (k < 9)
				frac[k++] = at[n];
	}
	snprintf(tail, sizeof tail, "%s", at + n);
	if (strcmp(tail, "Z") != 0 || mo < 1 || mo > 12 || da < 1 ||
	    da > 31 || h > 23 || mi > 59 || se > 60) {
		errbuf_set(e, ERRBUF_INPUT, "bus stream: %s: State time "
		    "not a UTC time", id);
		goto out;
	}
	rc = 0;
	if (y < 1970)
		goto out;              /* 0001-01-01T00:00:00Z: none */
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = da;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	snprintf(out, outlen, "%lld.%s", (long long)timegm(&tm), frac);
out:
	cJSON_Delete(ins);
	docker_close(c);
	return rc;
}

struct bus_stream *
bus_stream_start(const struct docker *d, const char *bus_path,
    const struct bus_stream_src *srcs, size_t n, struct errbuf *e)
{
	struct bus_stream *s;
	struct sockaddr_un sun;
	struct timeval tv = { 0, BUS_STREAM_TRY_MS * 1000 };
	char since[40];

	if (strlen(bus_path) >= sizeof sun.sun_path) {
		errbuf_set(e, ERRBUF_INTERNAL, "bus stream: socket path too "
		    "long: %s", bus_path);
		return NULL;
	}
	s = xcalloc(1, sizeof *s);
	pthread_mutex_init(&s->err_mu, NULL);
	s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, bus_path, strlen(bus_path) + 1);
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof tv) < 0 || connect(s->fd, (struct sockaddr *)&sun,
	    sizeof sun) < 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "bus stream: connect %s: %s",
		    bus_path, strerror(errno));
		if (s->fd >= 0)
			close(s->fd);
		pthread_mutex_destroy(&s->err_mu);
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->q_mu, NULL);
	pthread_cond_init(&s->q_cv, NULL);
	if (pthread_create(&s->sender, NULL, bus_sender, s) != 0) {
		errbuf_set(e, ERRBUF_INTERNAL, "bus stream: no sender thread");
		close(s->fd);
		pthread_cond_destroy(&s->q_cv);
		pthread_mutex_destroy(&s->q_mu);
		pthread_mutex_destroy(&s->err_mu);
		free(s);
		return NULL;
	}
	s->have_sender = true;
	s->taps = xcalloc(n ? n : 1, sizeof *s->taps);
	for (size_t i = 0; i < n; i++) {
		struct bus_tap *t = &s->taps[i];

		t->s = s;
		t->src = xstrdup(srcs[i].src);
		t->run_id = xstrdup(srcs[i].run_id != NULL ? srcs[i].run_id :
		    "");
		memcpy(t->key, srcs[i].key, BUS_KEY_BYTES);
		s->n = i + 1;
		/* from the current start on: an earlier start's lines (same
		 * log, docker restart) are never read as fresh */
		if (started_since(d, srcs[i].id, since, sizeof since, e) == 0)
			t->f = docker_follow_start(d, srcs[i].id, since[0] ?
			    since : NULL, BUS_LINE_MAX, tap_line, t, e);
		if (t->f == NULL) {
			errbuf_prefix(e, "bus stream: %s", srcs[i].src);
			bus_stream_stop(s, NULL);
			return NULL;
		}
	}
	return s;
}

size_t
bus_stream_lines(struct bus_stream *s)
{
	return s != NULL ? atomic_load(&s->lines) : 0;
}

size_t
bus_stream_pending(struct bus_stream *s)
{
	return s != NULL ? atomic_load(&s->pending) : 0;
}

size_t
bus_stream_ended(struct bus_stream *s)
{
	size_t k = 0;

	for (size_t i = 0; s != NULL && i < s->n; i++)
		if (s->taps[i].f != NULL &&
		    docker_follow_wait(s->taps[i].f, 0) == 1)
			k++;
	return k;
}

void
bus_stream_stop(struct bus_stream *s, struct bus_stream_stats *st)
{
	struct bus_stream_stats out = {0};

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct docker_follow_stats fs;
		struct bus_tap *t = &s->taps[i];

		if (t->f != NULL) {
			docker_follow_stop(t->f, &fs);
			out.overlong += fs.overlong;
			out.repeated += t->repeated;
			out.lost += t->lost;
			out.restarts += t->seq.restarts;
			out.stale += t->seq.stale;
			if (fs.ended)
				out.ended++;
			out.partial += fs.partial;
			if (fs.error[0] != '\0' && out.error[0] == '\0')
				snprintf(out.error, sizeof out.error, "%.60s: %.180s",
				    t->src, fs.error);
		}
		sodium_memzero(t->key, sizeof t->key);
		free(t->src);
		free(t->run_id);
	}
	if (s->have_sender) {   /* the followers are gone: nothing queues */
		pthread_mutex_lock(&s->q_mu);
		s->q_stop = true;
		out.queued = s->q_n;
		for (; s->q_n > 0; s->q_n--) {
			free(s->q[s->q_head].buf);
			s->q_head = (s->q_head + 1) % BUS_STREAM_QMAX;
			atomic_fetch_add(&s->send_failed, 1);
		}
		pthread_cond_signal(&s->q_cv);
		pthread_mutex_unlock(&s->q_mu);
		pthread_join(s->sender, NULL);
		pthread_cond_destroy(&s->q_cv);
		pthread_mutex_destroy(&s->q_mu);
	}
	out.forwarded = atomic_load(&s->forwarded);
	out.malformed = atomic_load(&s->malformed);
	out.send_failed = atomic_load(&s->send_failed);
	if (out.error[0] == '\0' && s->first_bad[0] != '\0')
		snprintf(out.error, sizeof out.error, "refused: %.200s",
		    s->first_bad);
	if (st != NULL)
		*st = out;
	close(s->fd);
	pthread_mutex_destroy(&s->err_mu);
	free(s->taps);
	free(s);
}
