/*
 * ctlcli.c - `ares-lab gwctl [--bearer TOKEN] METHOD TARGET [BODY]`: one
 * request (with "Authorization: Bearer TOKEN" when given) on the
 * gateway's control socket ($GATEWAY_CONTROL, default /ctl/gateway.sock)
 * from inside the gateway's own container, for a control plane that has
 * no host path to that socket (a lab on a remote engine: it runs this
 * through the engine's exec, core/gwctl.c gwctl_exec).  The answer (at
 * most CTLCLI_ANSWER_MAX bytes, status line first) goes to stdout as it
 * came; exit 0 when an answer came, EXIT_USAGE on bad arguments,
 * EXIT_INTERNAL when the socket could not be reached (the connect and
 * each write bounded by 2 s: a listener whose queue is full) or did not
 * answer within 2 s.  Only the control plane can run it in the gateway: the
 * agent never has /ctl.
 */
#include "leakbox.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define CTLCLI_ANSWER_MAX 65536
#define CTLCLI_TIMEOUT_MS 2000

/* Is s a plain token (method) or path (target): printable, no blank? */
static bool
ctlcli_word(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/* Is s a method: 1 to 16 capital letters (never an option)? */
static bool
ctlcli_method(const char *s)
{
	size_t n = 0;

	while (s[n] >= 'A' && s[n] <= 'Z')
		n++;
	return n > 0 && n <= 16 && s[n] == '\0';
}

int
ctlcli_main(int argc, char **argv)
{
	const char *bearer = NULL;

	/* The one option, only in first place, its value the next word
	 * whatever it looks like; no other word is ever read as an option
	 * (a method is capital letters, a target starts with '/'). */
	if (argc >= 2 && strcmp(argv[1], "--bearer") == 0) {
		if (argc < 3 || !ctlcli_word(argv[2], 512)) {
			fprintf(stderr, "gwctl: --bearer needs 1 to 512 printable "
			    "bytes without blanks\n");
			return EXIT_USAGE;
		}
		bearer = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || argc > 4 || !ctlcli_method(argv[1]) ||
	    !ctlcli_word(argv[2], 256) || argv[2][0] != '/' ||
	    (argc == 4 && strlen(argv[3]) > 4096)) {
		fprintf(stderr, "usage: ares-lab gwctl [--bearer TOKEN] METHOD "
		    "/TARGET [BODY]\n");
		return EXIT_USAGE;
	}
	const char *path = util_env_or("GATEWAY_CONTROL", "/ctl/gateway.sock");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "gwctl: socket path too long\n");
		return EXIT_USAGE;
	}
	strcpy(sun.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* a gateway alive but not accepting (its queue full) would block a
	 * unix connect for ever: Linux bounds it, and every write after it,
	 * by SO_SNDTIMEO */
	struct timeval tv = { .tv_sec = CTLCLI_TIMEOUT_MS / 1000,
	    .tv_usec = (CTLCLI_TIMEOUT_MS % 1000) * 1000 };
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof tv) < 0) {
		fprintf(stderr, "gwctl: SO_SNDTIMEO: %s\n", strerror(errno));
		close(fd);
		return EXIT_INTERNAL;
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "gwctl: connect %s: %s\n", path, strerror(errno));
		return EXIT_INTERNAL;
	}
	char *req, *auth = bearer != NULL ?
	    xasprintf("Authorization: Bearer %s\r\n", bearer) : xstrdup("");
	if (argc == 4)
		req = xasprintf("%s %s HTTP/1.1\r\nHost: gateway\r\n%sContent-Type: "
		    "application/json\r\nContent-Length: %zu\r\nConnection: "
		    "close\r\n\r\n%s", argv[1], argv[2], auth, strlen(argv[3]),
		    argv[3]);
	else
		req = xasprintf("%s %s HTTP/1.1\r\nHost: gateway\r\n%sConnection: "
		    "close\r\n\r\n", argv[1], argv[2], auth);
	memset(auth, 0, strlen(auth));   /* holds the key */
	free(auth);
	size_t len = strlen(req), off = 0;
	while (off < len) {
		ssize_t w = write(fd, req + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "gwctl: write: %s\n", strerror(errno));
			memset(req, 0, len);
			free(req);
			close(fd);
			return EXIT_INTERNAL;
		}
		off += (size_t)w;
	}
	memset(req, 0, len);
	free(req);
	static char buf[CTLCLI_ANSWER_MAX];
	size_t have = 0;
	uint64_t deadline = util_mono_ns() + CTLCLI_TIMEOUT_MS * 1000000ull;
	for (;;) {
		uint64_t now = util_mono_ns();
		if (now >= deadline || have == sizeof(buf))
			break;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int pr = poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	close(fd);
	if (have == 0) {
		fprintf(stderr, "gwctl: no answer from %s\n", path);
		return EXIT_INTERNAL;
	}
	fwrite(buf, 1, have, stdout);
	fflush(stdout);
	return 0;
}
