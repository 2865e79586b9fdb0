/*
 * fuzz_bus.c - bus_recv on one datagram from a lab sensor: the input is
 * sent as one datagram over a socketpair and received as the drill does.
 */
#include "fuzz.h"

#include <sys/socket.h>

static int fz_sv[2] = { -1, -1 };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int sz = 1 << 20;

	(void)argc;
	(void)argv;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, fz_sv) == -1)
		fz_die("socketpair", NULL);
	(void)setsockopt(fz_sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	(void)setsockopt(fz_sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bus_event ev;
	struct errbuf e = { 0 };
	int rc;

	if (send(fz_sv[0], data, size, 0) != (ssize_t)size)
		return 0;   /* larger than the socket takes: not a datagram */
	rc = bus_recv(fz_sv[1], &ev, &e);
	if (rc == 1) {
		if (ev.json == NULL || ev.raw == NULL ||
		    ev.raw_len != size || size > BUS_DGRAM_MAX ||
		    bus_event_str(&ev, "src") == NULL ||
		    bus_event_str(&ev, "kind") == NULL)
			abort();
	} else if (rc == -1) {
		if (e.code != ERRBUF_INPUT || e.msg[0] == '\0')
			abort();
	} else
		abort();   /* the datagram was sent: it must be received */
	bus_event_free(&ev);
	return 0;
}
