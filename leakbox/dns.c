/*
 * dns.c - the lab's resolver: records every query, answers NXDOMAIN
 * (sinkhole, the default) or the sink's address (open DNS, a flaw).
 *
 * The agent's HostConfig.Dns points at this container, so Docker's
 * embedded resolver forwards every non-container name here.  Queries are
 * untrusted bytes: the parser is strict and bounded (see leakbox.h) and
 * never follows a compression pointer.
 */
#include "leakbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A 16-bit big-endian (network order) field. */
static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/* Write v as a 16-bit big-endian field. */
static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void
dns_type_name(uint16_t t, char out[16])
{
	static const struct { uint16_t t; const char *n; } names[] = {
		{ 1, "A" }, { 2, "NS" }, { 5, "CNAME" }, { 6, "SOA" },
		{ 12, "PTR" }, { 15, "MX" }, { 16, "TXT" }, { 28, "AAAA" },
		{ 33, "SRV" }, { 65, "HTTPS" }, { 255, "ANY" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].t == t) {
			snprintf(out, 16, "%s", names[i].n);
			return;
		}
	snprintf(out, 16, "TYPE%u", (unsigned)t);
}

/* Parse the uncompressed name at pkt[*off]; dotted text into q->name.
 * Returns DNS_OK or DNS_FORMERR. */
static int
parse_name(const uint8_t *pkt, size_t len, size_t *off,
    struct dns_query *q)
{
	size_t o = *off, wire = 0, out = 0;
	for (;;) {
		if (o >= len)
			return DNS_FORMERR;               /* truncated */
		uint8_t l = pkt[o];
		if ((l & 0xC0) != 0)
			return DNS_FORMERR;               /* pointer / extended label */
		wire += 1u + l;
		if (wire > DNS_WIRE_NAME_MAX)
			return DNS_FORMERR;               /* oversized name */
		o++;
		if (l == 0)
			break;
		if (o + l > len)
			return DNS_FORMERR;
		if (out > 0)
			q->name[out++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = pkt[o + i];
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '-' || c == '_') {
				q->name[out++] = (char)c;
			} else {
				/* 4 bytes per input byte at most: fits name[] */
				out += (size_t)snprintf(q->name + out, 5, "\\%03u", c);
			}
		}
		o += l;
	}
	if (out == 0)
		q->name[out++] = '.';
	q->name[out] = '\0';
	*off = o;
	return DNS_OK;
}

int
dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q)
{
	memset(q, 0, sizeof(*q));
	if (!pkt || len < DNS_HEADER_LEN)
		return DNS_DROP;
	q->id = rd16(pkt);
	q->flags = rd16(pkt + 2);
	if (q->flags & 0x8000)
		return DNS_DROP;                          /* a response: never answer */
	if (((q->flags >> 11) & 0xF) != 0)
		return DNS_NOTIMP;
	uint16_t qd = rd16(pkt + 4), an = rd16(pkt + 6), ns = rd16(pkt + 8),
	    ar = rd16(pkt + 10);
	if (qd != 1 || an != 0 || ns != 0 || ar > 1)
		return DNS_FORMERR;
	size_t off = DNS_HEADER_LEN;
	int rc = parse_name(pkt, len, &off, q);
	if (rc != DNS_OK)
		return rc;
	if (off + 4 > len)
		return DNS_FORMERR;
	q->qtype = rd16(pkt + off);
	q->qclass = rd16(pkt + off + 2);
	off += 4;
	q->qend = off;
	if (ar == 1) {
		/* only an EDNS OPT record: root name, type 41, 8 more bytes of
		 * fixed fields, then exactly rdlen bytes */
		if (off + 11 > len || pkt[off] != 0 || rd16(pkt + off + 1) != 41)
			return DNS_FORMERR;
		size_t rdlen = rd16(pkt + off + 9);
		off += 11;
		if (off + rdlen != len)
			return DNS_FORMERR;
		off += rdlen;
	}
	if (off != len)
		return DNS_FORMERR;                       /* trailing bytes */
	return DNS_OK;
}

size_t
dns_build_reply(const uint8_t *pkt, size_t len,
    const struct dns_query *q, int rc, const uint8_t *sink_ip,
    uint8_t *out, size_t outmax, char answer[16])
{
	(void)len;
	if (outmax < DNS_HEADER_LEN)
		return 0;
	uint16_t rd = q->flags & 0x0100;
	uint16_t flags = 0x8000 | 0x0080 | rd;     /* QR, RA, RD copied */
	memset(out, 0, DNS_HEADER_LEN);
	wr16(out, q->id);
	if (rc == DNS_FORMERR || rc == DNS_NOTIMP) {
		/* header only: the question is not trusted */
		uint16_t opcode = q->flags & 0x7800;
		wr16(out + 2, (uint16_t)(flags | opcode | (rc == DNS_FORMERR ? 1 : 4)));
		snprintf(answer, 16, "%s", rc == DNS_FORMERR ? "FORMERR" : "NOTIMP");
		return DNS_HEADER_LEN;
	}
	size_t qlen = q->qend - DNS_HEADER_LEN;
	size_t need = DNS_HEADER_LEN + qlen;
	bool a = sink_ip && q->qtype == 1 && q->qclass == 1;
	if (a)
		need += 16;
	if (need > outmax)
		return 0;
	memcpy(out + DNS_HEADER_LEN, pkt + DNS_HEADER_LEN, qlen);
	wr16(out + 4, 1);
	if (!sink_ip) {
		wr16(out + 2, flags | 3);                 /* NXDOMAIN */
		snprintf(answer, 16, "NXDOMAIN");
		return need;
	}
	wr16(out + 2, flags);                         /* NOERROR */
	if (!a) {
		snprintf(answer, 16, "NODATA");
		return need;
	}
	wr16(out + 6, 1);
	uint8_t *r = out + DNS_HEADER_LEN + qlen;
	wr16(r, 0xC00C);                              /* the question's name */
	wr16(r + 2, 1);                               /* A */
	wr16(r + 4, 1);                               /* IN */
	r[6] = 0; r[7] = 0; wr16(r + 8, 60);          /* TTL 60 */
	wr16(r + 10, 4);
	memcpy(r + 12, sink_ip, 4);
	inet_ntop(AF_INET, sink_ip, answer, 16);
	return need;
}

int
dns_main(void)
{
	const char *mode = util_env_or("DNS_MODE", "sinkhole");
	const char *listen_on = util_env_or("DNS_LISTEN", "0.0.0.0:53");
	uint8_t sink_ip[4];
	bool open_mode = strcmp(mode, "open") == 0;
	if (!open_mode && strcmp(mode, "sinkhole") != 0) {
		fprintf(stderr, "dns: DNS_MODE must be sinkhole or open\n");
		return EXIT_USAGE;
	}
	if (open_mode &&
	    inet_pton(AF_INET, util_env_or("SINK_IP", ""), sink_ip) != 1) {
		fprintf(stderr, "dns: DNS_MODE=open needs SINK_IP (IPv4)\n");
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	sensor_init("dns");

	char host[64];
	const char *colon = strrchr(listen_on, ':');
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long port = colon ? strtol(colon + 1, NULL, 10) : 0;
	if (!colon || (size_t)(colon - listen_on) >= sizeof(host) || port <= 0 ||
	    port > 65535) {
		fprintf(stderr, "dns: DNS_LISTEN '%s': want HOST:PORT\n", listen_on);
		return EXIT_USAGE;
	}
	memcpy(host, listen_on, (size_t)(colon - listen_on));
	host[colon - listen_on] = '\0';
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa.sin_addr) != 1) {
		fprintf(stderr, "dns: DNS_LISTEN '%s': bad IPv4 host\n", listen_on);
		return EXIT_USAGE;
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "dns: bind %s: %s\n", listen_on, strerror(errno));
		return EXIT_INTERNAL;
	}
	printf("dns (%s%s%s) listening on udp %s\n", mode, open_mode ? " -> " : "",
	    open_mode ? util_env_or("SINK_IP", "") : "", listen_on);
	fflush(stdout);

	static uint8_t pkt[DNS_PKT_MAX], out[DNS_REPLY_MAX];
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, pkt, sizeof(pkt), MSG_TRUNC,
		    (struct sockaddr *)&from, &fl);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sensor_log("dns: recvfrom: %s", strerror(errno));
			usleep(10000);
			continue;
		}
		char remote[64], ip[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &from.sin_addr, ip, sizeof(ip));
		snprintf(remote, sizeof(remote), "%s:%u", ip,
		    (unsigned)ntohs(from.sin_port));
		struct dns_query q;
		memset(&q, 0, sizeof(q));
		/* an oversized datagram was cut by the kernel: refuse it */
		int rc = (size_t)n > sizeof(pkt) ? DNS_FORMERR :
		    dns_parse_query(pkt, (size_t)n, &q);
		if ((size_t)n > sizeof(pkt) && n >= DNS_HEADER_LEN) {
			q.id = rd16(pkt);
			q.flags = rd16(pkt + 2);
		}
		char answer[16] = "DROPPED", tname[16];
		size_t ol = 0;
		if (rc != DNS_DROP)
			ol = dns_build_reply(pkt, (size_t)n, &q, rc,
			    open_mode ? sink_ip : NULL, out, sizeof(out), answer);
		if (ol > 0)
			sendto(fd, out, ol, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "name", rc == DNS_OK ? q.name : "");
		dns_type_name(rc == DNS_OK ? q.qtype : 0, tname);
		cJSON_AddStringToObject(f, "qtype", rc == DNS_OK ? tname : "");
		cJSON_AddStringToObject(f, "answer", answer);
		cJSON_AddStringToObject(f, "remote", remote);
		cJSON_AddNumberToObject(f, "bytes", (double)n);
		sensor_emit("dns_query", f);
		sensor_log("%s %s %s -> %s", remote, rc == DNS_OK ? tname : "-",
		    rc == DNS_OK ? q.name : "(malformed)", answer);
	}
}
