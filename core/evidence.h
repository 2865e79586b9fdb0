/*
 * evidence.h - what the lab's sensors and the host agree on: the writer
 * and reader of the hash-chained evidence files (core/evidence.c; the
 * drill's master chain and the lab's sensor chains) and the format and
 * bound of a sensor datagram (read by core/bus.c).
 *
 * core.h includes it; the lab binary (leakbox/sensor.c) includes it
 * without the rest of core.
 */
#ifndef DRILL_EVIDENCE_H
#define DRILL_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "util.h"   /* struct errbuf */

/* ------------------------------------------------------------------ */
/* evidence.c - append-only, hash-chained JSONL (BLAKE2b-256)          */
/* ------------------------------------------------------------------ */
/*
 * Format (docs/evidence.md):
 *   h_0 = BLAKE2b-256("ares-evidence-v1" || 0x00 || run_id || 0x00 || nonce)
 *   (nonce: 16 random bytes, hex in the genesis line).
 *   Every line is one JSON object that ends with  ,"hash":"<64 hex>"}
 *   and carries "seq" (0,1,2,...) and "prev" (hex of the previous hash; h_0
 *   for seq 0).  hash = BLAKE2b-256(prev_raw32 || body) where body is the
 *   exact bytes of the line with the  ,"hash":"<64 hex>"  part removed
 *   (so it ends with '}').  Verification never re-serialises JSON.
 *   Line 0 is {"seq":0,"prev":..,"type":"genesis","run_id":..,"nonce":..,...}.
 */
#define EVIDENCE_HASH_BYTES 32
#define EVIDENCE_HEX_BYTES  65
#define EVIDENCE_LINE_MAX   (64 * 1024)   /* longest accepted line */
/* A line is at most EVIDENCE_LINE_OVERHEAD bytes longer than its printed
 * fields without their braces: {"seq":,"prev":"","type":"","t_mono_ns":,
 * "t_wall":""  + 19 + 64 + 63 + 20 + 39 digits/characters at most, the
 * comma before the fields, ,"hash":"<64 hex>"} and the newline. */
#define EVIDENCE_LINE_OVERHEAD 334

struct evidence;   /* an open chain being written */

/* Create a new chain file (must not exist).  Writes the genesis line with a
 * fresh nonce.  Returns NULL + e.  Free with evidence_close(). */
struct evidence *evidence_create(const char *path, const char *run_id,
    struct errbuf *e);
/* Append one event.  fields is a JSON object (borrowed, not modified); its
 * members are written after "seq","prev","type","t_mono_ns","t_wall"
 * (seq/prev/hash keys in fields are rejected).  Returns the new seq or -1. */
long evidence_append(struct evidence *ev, const char *type, uint64_t t_mono_ns,
    const cJSON *fields, struct errbuf *e);
size_t evidence_count(const struct evidence *ev);      /* lines written */
/* Bytes this writer put in the file (the file's size, as it was created
 * by evidence_create): every line, genesis included, plus any partial
 * line of a failed write.  0 for NULL. */
size_t evidence_bytes(const struct evidence *ev);
const char *evidence_head_hex(const struct evidence *ev); /* last hash */
void evidence_close(struct evidence *ev);

struct evidence_verify_result {
	bool ok;
	size_t entries;              /* lines that verified */
	char head[EVIDENCE_HEX_BYTES]; /* hash of the last good line */
	char run_id[128];
	size_t bad_line;             /* 1-based line of the first problem, 0 if ok */
	char reason[256];            /* why it failed */
	bool truncated;              /* a "truncated" line: the writer reached
	                                its budget and dropped what followed */
};
/* Verify a chain file.  expect_run_id may be NULL.  Returns 0 when the file
 * was read (see r->ok for the verdict), -1 + e when it cannot be read. */
int evidence_verify_file(const char *path, const char *expect_run_id,
    struct evidence_verify_result *r, struct errbuf *e);
/* Same on a buffer (for tests and bundles). */
int evidence_verify_buf(const char *buf, size_t len, const char *expect_run_id,
    struct evidence_verify_result *r);
/* Read a chain file as evidence_verify_file does (bounded, never through a
 * link), for a reader that needs its bytes too.  Caller frees.  NULL + e. */
char *evidence_read(const char *path, size_t *len, struct errbuf *e);
/* h_0 for a run id and raw nonce; out is 32 bytes. */
void evidence_genesis_hash(const char *run_id, const uint8_t nonce[16],
    uint8_t out[EVIDENCE_HASH_BYTES]);

/* ------------------------------------------------------------------ */
/* bus.c - the sensor datagram (what leakbox/sensor.c sends)           */
/* ------------------------------------------------------------------ */
/*
 * Lab sensors (gateway, fake services) send one JSON object per datagram
 * (at most BUS_DGRAM_MAX bytes) to RUN_DIR/bus/sensor.sock, bind-mounted
 * into the sensor containers as /bus (never into the agent).  Fields:
 *   "src":  "gateway" | "service:<name>" | "dns" | "sink" | "dockerproxy"
 *   "kind": "turn" | "tool_result" | "request" | "bait" | "denied" |
 *           "control" | "change_request" | "real_key_used" | "dns_query" |
 *           "sink" | "docker_api" | "overload" | "truncated" |
 *           "sensor_error" (docs/sensors.md)
 *   "t_mono_ns": sender's CLOCK_MONOTONIC (same host kernel)
 * plus kind-specific fields (docs/sensors.md).
 */
#define BUS_DGRAM_MAX 16384

/*
 * BUS=stdout (a lab on a remote engine, docs/sensors.md "Over the log
 * stream"): each datagram is instead one line on the sensor's stdout,
 *   BUS_LINE_MAGIC <64 hex MAC> ' ' <32 hex boot> ' ' <seq> ' ' <json> '\n'
 * MAC = HMAC-SHA256(BUS_KEY, "<RUN_ID>\n<boot> <seq> <json>"), boot =
 * BUS_BOOT_BYTES random bytes drawn once per sensor process start, seq =
 * 1, 2, ... per sensor process (decimal, at most 20 digits), BUS_KEY
 * (BUS_KEY_BYTES, hex in the sensor's environment) the container's own
 * key; the control plane reads only sensor containers' stdout, checks the
 * MAC and that "src" is the container's, drops repeated numbers of a
 * boot and lines of an earlier boot, and drops (and counts) every line
 * that starts with the magic and fails.
 */
#define BUS_LINE_MAGIC "ARESBUS1 "
#define BUS_KEY_BYTES 32
#define BUS_BOOT_BYTES 16
#define BUS_LINE_MAX (sizeof BUS_LINE_MAGIC - 1 + 64 + 1 + \
    2 * BUS_BOOT_BYTES + 1 + 21 + BUS_DGRAM_MAX)

#endif /* DRILL_EVIDENCE_H */
