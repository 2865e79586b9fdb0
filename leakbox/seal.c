/*
 * seal.c - `ares-lab seal BRIDGE...`: the per-bridge sysctls of a lab's
 * seal, written from a short-lived container in the host's network
 * namespace of a remote engine (core/hostfw_remote.c), where ares cannot
 * write /proc/sys itself: IPv6 off (disable_ipv6 = 1, when the kernel has
 * IPv6) and no ARP answers (arp_ignore = 8), the values the local path
 * writes (core/hostfw.c hostfw_bridge_quiet).  Every value is read back;
 * one JSON line per bridge on stdout says what was read:
 *   {"bridge":"aresXXXX","ipv6":true,"disable_ipv6":"1","arp_ignore":"8"}
 * ("" for a value that could not be read).  Exit 0 when every bridge
 * reads back as wanted, EXIT_INTERNAL otherwise, EXIT_USAGE on a bad
 * name (1..15 of [a-z0-9], as ares names lab bridges).
 */
#include "leakbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write value to /proc/sys/net/<rel>, then read it back into out. */
static void
seal_one(const char *rel, const char *value, char *out, size_t outlen)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/sys/net/%s", rel);
	out[0] = '\0';
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		(void)!write(fd, value, strlen(value));
		close(fd);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, outlen - 1);
	close(fd);
	if (n < 0)
		n = 0;
	out[n] = '\0';
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
}

static bool
seal_name_ok(const char *b)
{
	size_t n = strlen(b);
	if (n == 0 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9')))
			return false;
	return true;
}

int
seal_main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ares-lab seal BRIDGE...\n");
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++)
		if (!seal_name_ok(argv[i])) {
			fprintf(stderr, "seal: bad bridge name\n");
			return EXIT_USAGE;
		}
	bool ipv6 = access("/proc/sys/net/ipv6", F_OK) == 0;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		char rel[96], v6[16] = "", arp[16];
		if (ipv6) {
			snprintf(rel, sizeof(rel), "ipv6/conf/%s/disable_ipv6", argv[i]);
			seal_one(rel, "1", v6, sizeof(v6));
			bad += strcmp(v6, "1") != 0;
		}
		snprintf(rel, sizeof(rel), "ipv4/conf/%s/arp_ignore", argv[i]);
		seal_one(rel, "8", arp, sizeof(arp));
		bad += strcmp(arp, "8") != 0;
		printf("{\"bridge\":\"%s\",\"ipv6\":%s,\"disable_ipv6\":\"%s\","
		    "\"arp_ignore\":\"%s\"}\n", argv[i], ipv6 ? "true" : "false",
		    v6, arp);
	}
	fflush(stdout);
	return bad ? EXIT_INTERNAL : 0;
}
