/*
 * bus.c - the receiving end of the lab's sensor bus: one JSON object per
 * unix datagram, sent by the gateway and the fake services to a socket in a
 * directory bind-mounted into them (never into the agent).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
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

int
bus_recv(int fd, struct bus_event *ev, struct errbuf *e)
{
	char buf[BUS_DGRAM_MAX + 1];
	const cJSON *t;
	ssize_t n;

	memset(ev, 0, sizeof *ev);
	for (;;) {
		n = recv(fd, buf, sizeof buf, MSG_TRUNC);
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return errbuf_set(e, ERRBUF_INTERNAL, "bus: recv: %s",
		    strerror(errno));
	}
	ev->t_recv_ns = util_mono_ns();
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
