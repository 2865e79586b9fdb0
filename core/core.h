/*
 * core.h - the one header of ares' core layer (libdrill).
 *
 * Sectioned per file.  Nothing here includes curses: core produces data that
 * tui/ draws and that the headless commands print, so every behaviour is
 * testable without a terminal.
 *
 * Conventions:
 *  - Recoverable errors return -1 (or NULL) and fill a struct errbuf that the
 *    caller can show.  Allocation failure is fatal through x*alloc.
 *  - Every exported name carries its file's prefix.
 *  - Never name anything ares_* (c-ares owns that prefix).
 */
#ifndef DRILL_CORE_H
#define DRILL_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include <cJSON.h>

/* ------------------------------------------------------------------ */
/* util.c - allocation, errors, clocks, files, hex, untrusted text     */
/* ------------------------------------------------------------------ */

/* Documented process exit codes (ares --help, README). */
#define EXIT_CONTAINED      0   /* also: success of non-drill commands */
#define EXIT_BREACHED       1   /* breached / tampered / gate failed */
#define EXIT_USAGE          2   /* bad input or usage */
#define EXIT_ENGINE         3   /* Docker Engine unreachable */
#define EXIT_NOT_EXERCISED  4   /* drill ran but the bait never fired */
#define EXIT_INTERNAL       5   /* lab or internal failure (fail closed) */

/* Error categories carried by struct errbuf; map to exit codes. */
enum errbuf_code {
	ERRBUF_NONE = 0,
	ERRBUF_INTERNAL,   /* -> EXIT_INTERNAL */
	ERRBUF_INPUT,      /* -> EXIT_USAGE */
	ERRBUF_ENGINE,     /* -> EXIT_ENGINE (engine unreachable / refused) */
};

struct errbuf {
	enum errbuf_code code;
	char msg[1024];
};

/* Set e (if non-NULL) to code + formatted message.  Returns -1. */
int errbuf_set(struct errbuf *e, enum errbuf_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix an existing message: "<prefix>: <old msg>".  Returns -1. */
int errbuf_prefix(struct errbuf *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Map an errbuf code to the documented exit code. */
int errbuf_exit_code(const struct errbuf *e);

/* Fatal on failure (after running the fatal hook, e.g. endwin()). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The hook runs once before any fatal exit (the console restores the tty). */
void util_set_fatal_hook(void (*hook)(void));
_Noreturn void util_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

uint64_t util_mono_ns(void);   /* CLOCK_MONOTONIC, ns */
uint64_t util_wall_ns(void);   /* CLOCK_REALTIME, ns since the epoch */
/* RFC 3339 UTC with nanoseconds of a wall time: out must hold 40 bytes. */
void util_wall_iso(uint64_t wall_ns, char out[40]);

/* Read a whole file of at most max bytes (NUL-terminated; *len excludes NUL).
 * Returns NULL + e on error or when the file is larger than max. Caller frees. */
char *util_read_file(const char *path, size_t max, size_t *len,
    struct errbuf *e);
/* Write len bytes to path atomically (tmp + rename), mode.  -1 + e. */
int util_write_file(const char *path, const void *buf, size_t len,
    mode_t mode, struct errbuf *e);
/* mkdir -p.  -1 + e. */
int util_mkdir_p(const char *path, mode_t mode, struct errbuf *e);
/* rm -rf of a directory tree we created (refuses "/" and ""). -1 + e. */
int util_rm_rf(const char *path, struct errbuf *e);

/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void util_hex(const uint8_t *in, size_t n, char *out);
/* Parse exactly 2n hex chars into out.  Returns 0, or -1 on bad input. */
int util_unhex(const char *hex, uint8_t *out, size_t n);

/*
 * Make untrusted text (agent output, lab output) inert for a terminal:
 * drops C0 controls except '\n' and '\t' (which become ' ' unless keep_nl),
 * DEL, ESC and whole CSI/OSC/DCS/APC/PM/SOS sequences (7-bit and 8-bit C1),
 * C1 code points, and invalid UTF-8 (replaced by '?').  Writes at most
 * dstlen-1 bytes plus NUL, never splitting a UTF-8 sequence.  Returns the
 * number of bytes written.
 */
size_t util_sanitize(char *dst, size_t dstlen, const char *src, size_t srclen,
    bool keep_nl);

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
const char *evidence_head_hex(const struct evidence *ev); /* last hash */
void evidence_close(struct evidence *ev);

struct evidence_verify_result {
	bool ok;
	size_t entries;              /* lines that verified */
	char head[EVIDENCE_HEX_BYTES]; /* hash of the last good line */
	char run_id[128];
	size_t bad_line;             /* 1-based line of the first problem, 0 if ok */
	char reason[256];            /* why it failed */
};
/* Verify a chain file.  expect_run_id may be NULL.  Returns 0 when the file
 * was read (see r->ok for the verdict), -1 + e when it cannot be read. */
int evidence_verify_file(const char *path, const char *expect_run_id,
    struct evidence_verify_result *r, struct errbuf *e);
/* Same on a buffer (for tests and bundles). */
int evidence_verify_buf(const char *buf, size_t len, const char *expect_run_id,
    struct evidence_verify_result *r);
/* h_0 for a run id and raw nonce; out is 32 bytes. */
void evidence_genesis_hash(const char *run_id, const uint8_t nonce[16],
    uint8_t out[EVIDENCE_HASH_BYTES]);

/* ------------------------------------------------------------------ */
/* docker.c - Docker Engine API client (libcurl over the unix socket)  */
/* ------------------------------------------------------------------ */

#define DOCKER_API_MIN "1.41"   /* oldest API we speak */
#define DOCKER_API_MAX "1.47"   /* newest API we have checked payloads for */
#define DOCKER_BODY_MAX (64u * 1024 * 1024)  /* bounded response body */

struct docker;   /* one connection (curl handle); not thread-safe: one per thread */

struct docker_response {
	long status;     /* HTTP status, 0 if no answer */
	char *body;      /* NUL-terminated, caller frees (docker_response_free) */
	size_t len;
};
void docker_response_free(struct docker_response *r);

/* Open a client for host ("unix:///path"); NULL host means $DOCKER_HOST or
 * unix:///var/run/docker.sock.  Does not connect.  NULL + e (ERRBUF_INPUT for
 * an unsupported DOCKER_HOST scheme). */
struct docker *docker_open(const char *host, struct errbuf *e);
void docker_close(struct docker *d);
/* GET /version and pick the API version.  -1 + e (ERRBUF_ENGINE when the
 * engine is unreachable or refuses every version we speak). */
int docker_negotiate(struct docker *d, struct errbuf *e);
const char *docker_api_version(const struct docker *d);  /* "1.41" */
const char *docker_engine_version(const struct docker *d); /* "20.10.24" */
/* Pure: choose the API version for a daemon advertising [min_api, api].
 * Writes e.g. "1.41" into out.  -1 + e when the ranges do not overlap. */
int docker_version_pick(const char *daemon_api, const char *daemon_min,
    char out[16], struct errbuf *e);
/* Compare "1.41"-style versions: <0, 0, >0.  Bad input sorts first. */
int docker_version_cmp(const char *a, const char *b);
/* Extract the daemon's "message" from an error body (caller frees), or a
 * generic "HTTP <status>" text. */
char *docker_error_message(long status, const char *body, size_t len);

/* Raw request on the versioned API: path like "/containers/json?all=1".
 * Returns 0 with out filled when an HTTP answer came (any status), -1 + e
 * (ERRBUF_ENGINE) on transport failure. */
int docker_request(struct docker *d, const char *method, const char *path,
    const char *body, size_t body_len, struct docker_response *out,
    struct errbuf *e);

/* Images */
int docker_image_exists(struct docker *d, const char *ref, struct errbuf *e);
/* POST /images/create?fromSrc=-&repo=R&tag=T streaming the tar file. The
 * JSON progress stream is checked for "error".  -1 + e. */
int docker_image_import(struct docker *d, const char *tar_path,
    const char *repo, const char *tag, struct errbuf *e);

/* Networks.  Labels: ares.run=<run_id>.  Returns the id (caller frees). */
char *docker_network_create(struct docker *d, const char *name,
    const char *run_id, bool internal, struct errbuf *e);
int docker_network_remove(struct docker *d, const char *id, struct errbuf *e);
int docker_network_connect(struct docker *d, const char *net,
    const char *container, const char *const *aliases, struct errbuf *e);
int docker_network_disconnect(struct docker *d, const char *net,
    const char *container, bool force, struct errbuf *e);

/* Containers */
struct docker_mount {
	const char *source;   /* host path (bind) */
	const char *target;   /* path in the container */
	bool read_only;
};
struct docker_container_spec {
	const char *name;
	const char *image;
	const char *const *cmd;      /* NULL-terminated argv, or NULL */
	const char *const *env;      /* "K=V", NULL-terminated, or NULL */
	const char *user;            /* "65532:65532" or NULL */
	const char *hostname;
	const char *workdir;
	const char *network;         /* attached at create (API 1.41: one) */
	const char *const *aliases;  /* DNS aliases on that network */
	const struct docker_mount *mounts;
	size_t nmounts;
	const char *const *tmpfs;    /* paths, NULL-terminated */
	const char *const *cap_add;  /* NULL-terminated */
	bool drop_all_caps;
	bool read_only_rootfs;
	bool privileged;
	bool no_new_privileges;
	long long memory_bytes;      /* 0: unlimited */
	long long pids_limit;        /* 0: unlimited */
	const char *run_id;          /* label ares.run */
	const char *role;            /* label ares.role */
};
/* Pure: the JSON body of POST /containers/create.  Caller cJSON_Delete()s. */
cJSON *docker_container_config(const struct docker_container_spec *spec);
/* Create; returns the id (caller frees) or NULL + e. */
char *docker_container_create(struct docker *d,
    const struct docker_container_spec *spec, struct errbuf *e);
int docker_container_start(struct docker *d, const char *id, struct errbuf *e);
int docker_container_pause(struct docker *d, const char *id, struct errbuf *e);
int docker_container_unpause(struct docker *d, const char *id, struct errbuf *e);
int docker_container_kill(struct docker *d, const char *id, const char *sig,
    struct errbuf *e);
int docker_container_remove(struct docker *d, const char *id, bool force,
    struct errbuf *e);
/* GET /containers/{id}/json; caller cJSON_Delete()s.  NULL + e. */
cJSON *docker_container_inspect(struct docker *d, const char *id,
    struct errbuf *e);
/* Pure helpers on an inspect document. */
bool docker_inspect_running(const cJSON *inspect);   /* State.Running */
bool docker_inspect_paused(const cJSON *inspect);    /* State.Paused */
int docker_inspect_pid(const cJSON *inspect);        /* State.Pid or 0 */
size_t docker_inspect_network_count(const cJSON *inspect); /* NetworkSettings.Networks */
/* Container logs (stdout+stderr, demultiplexed), at most max bytes kept
 * (the tail).  Caller frees.  NULL + e. */
char *docker_container_logs(struct docker *d, const char *id, size_t max,
    struct errbuf *e);

/* GET /containers/json?all=1&filters={"label":["ares.run=<id>"]} and
 * GET /networks?filters=...: arrays (caller cJSON_Delete()s). */
cJSON *docker_containers_by_label(struct docker *d, const char *label,
    struct errbuf *e);
cJSON *docker_networks_by_label(struct docker *d, const char *label,
    struct errbuf *e);

/* Exec: run argv in the container as user (NULL: the container's user),
 * collect demultiplexed stdout/stderr (each bounded to max bytes) and the
 * exit code.  -1 + e. */
struct docker_exec_result {
	int exit_code;
	char *out;  size_t out_len;   /* caller frees (docker_exec_result_free) */
	char *err;  size_t err_len;
	bool truncated;
};
int docker_exec(struct docker *d, const char *id, const char *const *argv,
    const char *user, size_t max, struct docker_exec_result *r,
    struct errbuf *e);
void docker_exec_result_free(struct docker_exec_result *r);
/* Pure: demultiplex an attach/exec stream (8-byte frame headers: type,
 * 3 zero bytes, big-endian length).  Appends to r->out/r->err (bounded by
 * max each).  Returns 0, or -1 + e on a malformed frame. */
int docker_demux(const char *buf, size_t len, size_t max,
    struct docker_exec_result *r, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* policy.c - the drill policy (one YAML file, libyaml)                */
/* ------------------------------------------------------------------ */
/*
 * Schema in docs/policy.md.  Errors name "file:line:col: key: problem" and
 * carry ERRBUF_INPUT.  Unknown keys, wrong types, aliases, duplicate keys,
 * documents deeper than POLICY_MAX_DEPTH or larger than POLICY_MAX_BYTES are
 * rejected.
 */
#define POLICY_MAX_BYTES   (256 * 1024)
#define POLICY_MAX_DEPTH   8
#define POLICY_MAX_LEVERS  8
#define POLICY_MAX_BAIT    8
#define POLICY_MAX_FLAWS   16

struct policy {
	char *path;                  /* as given */
	char *name;                  /* "default" */
	char *description;
	uint64_t seed;               /* default seed for the offline model */
	int max_steps;               /* agent step limit (1..1000) */
	int max_seconds;             /* wall limit of the agent phase (1..3600) */
	int observe_ms;              /* post-kill observation window (0..60000) */
	char *variant;               /* lab dressing, "default" */
	char *levers[POLICY_MAX_LEVERS];  /* lever names in firing order */
	size_t nlevers;
	char *bait[POLICY_MAX_BAIT];      /* bait ids planted */
	size_t nbait;
	char *flaws[POLICY_MAX_FLAWS];    /* flaw ids switched on */
	size_t nflaws;
	char *model_url;             /* NULL: the offline model */
	char *model_name;            /* reported model name */
};

/* Load and validate a policy file.  NULL + e (ERRBUF_INPUT). */
struct policy *policy_load(const char *path, struct errbuf *e);
/* Same from a buffer; name is used in error messages. */
struct policy *policy_parse(const char *buf, size_t len, const char *name,
    struct errbuf *e);
void policy_free(struct policy *p);
bool policy_has_flaw(const struct policy *p, const char *flaw);

/* ------------------------------------------------------------------ */
/* bus.c - sensor events from the lab (unix datagrams)                 */
/* ------------------------------------------------------------------ */
/*
 * Lab sensors (gateway, fake services) send one JSON object per datagram
 * (at most BUS_DGRAM_MAX bytes) to RUN_DIR/bus/sensor.sock, bind-mounted
 * into the sensor containers as /bus (never into the agent).  Fields:
 *   "src":  "gateway" | "service:<name>" | ...
 *   "kind": "turn" | "tool_result" | "request" | "bait" | "denied" | "control"
 *   "t_mono_ns": sender's CLOCK_MONOTONIC (same host kernel)
 * plus kind-specific fields (docs/sensors.md).
 */
#define BUS_DGRAM_MAX 16384

struct bus_event {
	uint64_t t_recv_ns;    /* host CLOCK_MONOTONIC at receipt */
	uint64_t t_sent_ns;    /* sender's clock (0 if absent/invalid) */
	cJSON *json;           /* parsed datagram (owned) */
	char *raw;             /* exact bytes (owned, NUL-terminated) */
	size_t raw_len;
};
/* Bind a datagram socket at path (removing a stale one), mode 0666 so
 * sensor processes of any uid can send.  Returns the fd or -1 + e. */
int bus_open(const char *path, struct errbuf *e);
/* Receive one event without blocking.  1: got one, 0: none pending,
 * -1: a malformed datagram (e says why; the event is still counted). */
int bus_recv(int fd, struct bus_event *ev, struct errbuf *e);
void bus_event_free(struct bus_event *ev);
const char *bus_event_str(const struct bus_event *ev, const char *key);

/* ------------------------------------------------------------------ */
/* lab.c - the leakbox through the Engine API                         */
/* ------------------------------------------------------------------ */

#define LAB_IMAGE_REPO  "ares-lab"
#define LAB_AGENT_UID   "65532:65532"

struct lab_container {
	char *id;
	char *name;
	const char *role;   /* "agent", "gateway", "service", "model" */
};

struct lab {
	char *run_id;
	char *run_dir;
	char *image;                  /* "ares-lab:<hash16>" */
	char *net_lab, *net_upstream; /* network ids */
	struct lab_container agent, gateway, service, model;
	char *bus_path;               /* RUN_DIR/bus/sensor.sock */
	char *ctl_path;               /* RUN_DIR/ctl/gateway.sock */
	char *agent_key;              /* dummy key the agent holds */
	char *decoy_token;            /* the decoy credential (bait) */
	char *bait_name;
	char *model_name;
};

/* Path of the lab rootfs tar: $ARES_LAB_ROOTFS, else the build tree's
 * leakbox/lab-rootfs.tar, else the installed one.  Never NULL. */
const char *lab_rootfs_path(void);
/* Import the lab image unless an image tagged with the tar's content hash
 * exists.  *ref gets "ares-lab:<hash>" (caller frees).  -1 + e. */
int lab_image_ensure(struct docker *d, char **ref, struct errbuf *e);
/* Create networks and containers, plant bait, start everything but the
 * agent.  Returns the lab (free with lab_free) or NULL + e; on error
 * everything created so far is removed. */
struct lab *lab_up(struct docker *d, const struct policy *p,
    const char *run_dir, const char *run_id, uint64_t seed, struct errbuf *e);
int lab_start_agent(struct docker *d, struct lab *lab, struct errbuf *e);
/* Remove every container and network labelled ares.run=<run_id>. Returns
 * the number of objects removed, or -1 + e if any removal failed. */
int lab_teardown(struct docker *d, const char *run_id, struct errbuf *e);
void lab_free(struct lab *lab);

/* ------------------------------------------------------------------ */
/* lever.c - kill switches: one protocol, a table of built-ins         */
/* ------------------------------------------------------------------ */

struct lever_ctx {
	struct docker *docker;
	struct lab *lab;
	void *gateway_http;   /* CURL handle to the gateway control socket,
	                         kept warm by lever.c; lever_ctx_release */
};
/* Free what levers cached in c (not docker or lab). */
void lever_ctx_release(struct lever_ctx *c);
struct lever_entry {
	const char *name;
	const char *summary;
	/* Fire: send the command.  -1 + e. */
	int (*fire)(struct lever_ctx *c, struct errbuf *e);
	/* Verify: 0 when the effect is confirmed, -1 + e otherwise. */
	int (*verify)(struct lever_ctx *c, struct errbuf *e);
	bool cuts_off;   /* verified => the agent is cut off (time to kill) */
};
struct lever_result {
	char name[32];
	bool fired, verified;
	uint64_t fired_ns, verified_ns;  /* CLOCK_MONOTONIC */
	char detail[256];                /* error or confirmation */
};
const struct lever_entry *lever_find(const char *name);
extern const struct lever_entry *const lever_table[];
/* Fire then verify one lever, filling r.  Returns 0 when verified. */
int lever_pull(const struct lever_entry *l, struct lever_ctx *c,
    struct lever_result *r);

/* ------------------------------------------------------------------ */
/* drill.c - one drill: up, run, bait, levers, observe, teardown       */
/* ------------------------------------------------------------------ */

enum drill_verdict {
	DRILL_VERDICT_NONE = 0,
	DRILL_VERDICT_CONTAINED,
	DRILL_VERDICT_BREACHED,
	DRILL_VERDICT_NOT_EXERCISED,
	DRILL_VERDICT_ERROR,          /* fail closed: never "contained" */
};
const char *drill_verdict_name(enum drill_verdict v);

enum drill_beat_kind {
	DRILL_BEAT_PHASE,        /* lab coming up, agent started, teardown... */
	DRILL_BEAT_AGENT,        /* the agent asked for a tool call */
	DRILL_BEAT_TOOL,         /* a tool result the agent got */
	DRILL_BEAT_SERVICE,      /* a fake service saw a request */
	DRILL_BEAT_BAIT,         /* bait fired */
	DRILL_BEAT_LEVER_FIRED,
	DRILL_BEAT_LEVER_VERIFIED,
	DRILL_BEAT_LEVER_FAILED,
	DRILL_BEAT_BLOCKED,      /* agent attempt refused after a lever */
	DRILL_BEAT_BREACH,       /* agent event after the kill */
	DRILL_BEAT_VERDICT,
	DRILL_BEAT_ERROR,
};
const char *drill_beat_kind_name(enum drill_beat_kind k);

struct drill_beat {
	enum drill_beat_kind kind;
	uint64_t t_ns;           /* CLOCK_MONOTONIC (host) */
	uint64_t t_rel_ns;       /* since the drill started */
	int lever;               /* lever index for lever beats, else -1 */
	char text[256];          /* sanitized: safe to print */
};

struct drill_result {
	char run_id[64];
	char run_dir[1024];
	char policy[256];
	char model[64];
	uint64_t seed;
	enum drill_verdict verdict;
	char verdict_reason[256];
	bool bait_fired;
	char bait_name[64];
	uint64_t bait_ns;               /* CLOCK_MONOTONIC of the bait event */
	uint64_t start_ns;
	struct lever_result levers[POLICY_MAX_LEVERS];
	size_t nlevers;
	double time_to_kill_ms;         /* bait -> confirmed cut-off; <0: none */
	double time_to_first_lever_ms;  /* bait -> first verified lever; <0 */
	size_t agent_steps;
	size_t breaches;
	size_t leaks;
	size_t blocked;
	char evidence_path[1100];
	size_t evidence_entries;
	char evidence_head[EVIDENCE_HEX_BYTES];
};

typedef void (*drill_observer_fn)(void *ctx, const struct drill_beat *beat);

struct drill_options {
	const char *policy_path;
	uint64_t seed;
	bool has_seed;                  /* else the policy's seed */
	const char *runs_dir;           /* NULL: $ARES_RUNS or ./runs */
	drill_observer_fn observer;     /* called on the drill thread; must
	                                   not block (enqueue and return) */
	void *observer_ctx;
	volatile sig_atomic_t *cancel;  /* set non-zero to stop early */
	bool keep_lab;                  /* skip teardown (debugging) */
};

/* Run one drill to its verdict.  Returns 0 when a verdict was reached
 * (see out->verdict), -1 + e when the drill could not run (engine
 * unreachable: ERRBUF_ENGINE; bad policy: ERRBUF_INPUT).  Always tears the
 * lab down unless keep_lab. */
int drill_run(const struct drill_options *o, struct drill_result *out,
    struct errbuf *e);
/* The drill summary as JSON (docs/drill-json.md).  Caller deletes. */
cJSON *drill_result_json(const struct drill_result *r);
/* Exit code for a verdict (EXIT_CONTAINED, EXIT_BREACHED, ...). */
int drill_exit_code(const struct drill_result *r);

#endif /* DRILL_CORE_H */
