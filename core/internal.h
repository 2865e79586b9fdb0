/*
 * internal.h - ares' core layer (libdrill), the part that is not its public
 * face (core/core.h): what core's files share among themselves, and the
 * seams the tests, fuzzers and benches reach.  tui/ never includes it.
 *
 * Sectioned per file, in core.h's order; every name keeps its file's prefix.
 */
#ifndef DRILL_INTERNAL_H
#define DRILL_INTERNAL_H

#include "core.h"

#include <sched.h>

/* ------------------------------------------------------------------ */
/* docker.c - Docker Engine API client (unix socket, TLS, ssh)        */
/* ------------------------------------------------------------------ */

#define DOCKER_API_MIN "1.41"   /* oldest API we speak */
#define DOCKER_API_MAX "1.47"   /* newest API we have checked payloads for */
#define DOCKER_BODY_MAX (64u * 1024 * 1024)  /* bounded response body */

struct docker_response {
	long status;     /* HTTP status, 0 if no answer */
	char *body;      /* NUL-terminated, caller frees (docker_response_free) */
	size_t len;
};
void docker_response_free(struct docker_response *r);

/* How the engine is reached (docs/engine.md). */
enum docker_transport {
	DOCKER_UNIX = 0,       /* unix:///path: the local engine */
	DOCKER_TCP,            /* tcp://HOST[:PORT]: TLS or, opted in, plain */
	DOCKER_SSH,            /* ssh://[USER@]HOST[:PORT]: docker system
	                          dial-stdio over ssh, one child per
	                          connection */
};

/* A parsed DOCKER_HOST. */
struct docker_host {
	enum docker_transport kind;
	char path[108];        /* DOCKER_UNIX: the socket path */
	char name[256];        /* TCP / SSH: host name or address (an IPv6
	                          address without its brackets) */
	char user[33];         /* SSH: the user, "" for ssh's default */
	int port;              /* TCP / SSH: 0 when not given */
	bool ipv6;             /* name is an IPv6 address ([...] in URLs) */
};

/*
 * Pure: parse value (a DOCKER_HOST).  what names where it came from
 * ("DOCKER_HOST") in messages, which quote the value and name the bad part.
 * 0, or -1 + e (ERRBUF_INPUT).
 */
int docker_host_parse(const char *value, const char *what,
    struct docker_host *h, struct errbuf *e);

/* Open a client for host (a DOCKER_HOST value); NULL host means
 * $DOCKER_HOST or unix:///var/run/docker.sock.  tcp:// takes TLS from
 * DOCKER_TLS_VERIFY / DOCKER_TLS and DOCKER_CERT_PATH (default ~/.docker,
 * whose ca.pem, cert.pem and key.pem must exist) and refuses plain tcp
 * unless ARES_ALLOW_PLAINTEXT_ENGINE=1 (then warns on stderr once per
 * process).  ssh:// makes a private unix socket and its acceptor thread
 * (ssh runs at the first request).  Does not connect.  NULL + e
 * (ERRBUF_INPUT: bad or refused DOCKER_HOST, missing certificate files). */
struct docker *docker_open(const char *host, struct errbuf *e);
/* docker_open for an endpoint (core.h; its strings are copied). */
struct docker *docker_open_at(const struct docker_endpoint *ep,
    struct errbuf *e);

/* GET /version and pick the API version.  -1 + e (ERRBUF_ENGINE when the
 * engine is unreachable or refuses every version we speak). */
int docker_negotiate(struct docker *d, struct errbuf *e);
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

/* GET /info: the engine's facts (Runtimes, DefaultRuntime...); caller
 * cJSON_Delete()s.  NULL + e. */
cJSON *docker_info(struct docker *d, struct errbuf *e);

/* Images */
int docker_image_exists(struct docker *d, const char *ref, struct errbuf *e);
/* GET /images/REF/json: 1 with *out (caller cJSON_Delete()s), 0 when the
 * engine has no such image (404), -1 + e.  Never pulls. */
int docker_image_inspect(struct docker *d, const char *ref, cJSON **out,
    struct errbuf *e);
/* POST /images/create?fromSrc=-&repo=R&tag=T streaming the tar file. The
 * JSON progress stream is checked for "error".  -1 + e. */
int docker_image_import(struct docker *d, const char *tar_path,
    const char *repo, const char *tag, struct errbuf *e);
/* The same with the image labelled label ("KEY=VALUE", as a Dockerfile
 * LABEL line: no quotes, spaces or newlines in it; NULL: none). */
int docker_image_import_labelled(struct docker *d, const char *tar_path,
    const char *repo, const char *tag, const char *label, struct errbuf *e);

/* Networks (driver bridge), every one Internal (no forwarded traffic, no
 * route out: no caller can ask for another kind).  Labels:
 * ares.run=<run_id>. */
struct docker_network_spec {
	const char *name;
	const char *run_id;          /* label ares.run (NULL: none) */
	const char *bridge_name;     /* Linux bridge name, or NULL (br-<id>) */
	bool no_host_address;        /* the host gets no IPv4 address on the
	                                bridge (bridge.inhibit_ipv4) */
	const char *owner;           /* label ares.owner (NULL: gc_owner()
	                                whenever run_id is set) */
	const char *lease;           /* label ares.lease (a lease file), or
	                                NULL */
	const char *subnet;          /* IPAM Config Subnet ("198.18.4.0/26"),
	                                or NULL: the engine picks a pool */
	const char *ip_range;        /* IPAM Config IPRange (what the engine
	                                hands out; with subnet), or NULL */
};
/* Pure: the JSON body of POST /networks/create (always Internal).  Caller
 * cJSON_Delete()s. */
cJSON *docker_network_config(const struct docker_network_spec *spec);
/* Create; returns the id (caller frees) or NULL + e. */
char *docker_network_create(struct docker *d,
    const struct docker_network_spec *spec, struct errbuf *e);
int docker_network_remove(struct docker *d, const char *id, struct errbuf *e);
int docker_network_connect(struct docker *d, const char *net,
    const char *container, const char *const *aliases, struct errbuf *e);
int docker_network_disconnect(struct docker *d, const char *net,
    const char *container, bool force, struct errbuf *e);

/* Containers */
struct docker_mount {
	const char *source;   /* host path (bind); a volume's name, or NULL
	                         for an anonymous volume (removed with its
	                         container: docker_container_remove) */
	const char *target;   /* path in the container */
	bool read_only;
	bool volume;          /* Type volume instead of bind */
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
	const char *ipv4;            /* a fixed address on that network (its
	                                subnet set at create), or NULL: the
	                                engine's pick */
	const struct docker_mount *mounts;
	size_t nmounts;
	const char *const *tmpfs;    /* "PATH" or "PATH:OPTIONS" (mount
	                                options, e.g. "size=64m,noexec"),
	                                NULL-terminated */
	const char *const *cap_add;  /* NULL-terminated */
	bool drop_all_caps;
	bool read_only_rootfs;
	bool privileged;
	bool no_new_privileges;
	bool cgroupns_private;       /* HostConfig.CgroupnsMode "private" */
	long long memory_bytes;      /* 0: unlimited (else swap is off too:
	                                MemorySwap = Memory) */
	long long pids_limit;        /* 0: unlimited */
	long long nano_cpus;         /* CPU quota in 1e-9 CPUs; 0: unlimited */
	const char *const *sysctls;  /* "KEY=VALUE" (namespaced ones), or NULL */
	const char *const *group_add; /* supplementary gids ("998"), or NULL */
	const char *run_id;          /* label ares.run */
	const char *role;            /* label ares.role */
	const char *owner;           /* label ares.owner; docker_container_
	                                create fills gc_owner() when NULL and
	                                run_id is set */
	const char *lease;           /* label ares.lease, or NULL */
	const char *const *dns;      /* HostConfig.Dns (IPs), NULL-terminated */
	const char *const *entrypoint; /* Config.Entrypoint argv (replaces
	                                the image's entrypoint and command),
	                                or NULL: the image's */
	bool no_healthcheck;         /* Config.Healthcheck NONE: the engine
	                                runs nothing of the image's inside */
	const char *runtime;         /* HostConfig.Runtime ("runsc"), or NULL:
	                                the engine's default */
	const char *pid_mode;        /* HostConfig.PidMode ("container:ID"),
	                                or NULL: its own */
	const char *ipc_mode;        /* HostConfig.IpcMode ("shareable",
	                                "container:ID"), or NULL: the
	                                engine's default (private) */
	const char *seccomp;         /* a seccomp profile (JSON) for
	                                SecurityOpt "seccomp=...", or NULL:
	                                the engine's default; never
	                                "unconfined" (docs/security.md) */
	long long shm_bytes;         /* HostConfig.ShmSize; 0: the engine's */
	bool proc_sys_net_rw;        /* HostConfig.ReadonlyPaths with
	                                /proc/sys/net left writable: every
	                                other /proc/sys subtree and the
	                                engine's other read-only paths kept
	                                read-only; only the remote seal's
	                                container (hostfw_remote.c) */
};
/* A second handle on d's engine (its own connection, the negotiated
 * version and the time bound copied): a handle is not thread-safe, a
 * thread uses its own.  Made and closed (docker_close) by the thread that
 * owns d, never while another thread is in curl_global_init.  Never
 * NULL (allocation failure is fatal). */
struct docker *docker_clone(const struct docker *d);
/* Pure: the JSON body of POST /containers/create.  Every container's log
 * is bounded (json-file, DOCKER_LOG_MAX_SIZE, one file): a container that
 * writes without end does not fill the host's disk.  Caller
 * cJSON_Delete()s. */
#define DOCKER_LOG_MAX_SIZE "1m"
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
/* Bound every later call on d to end by mono_ns (CLOCK_MONOTONIC; 0: no
 * bound beyond each call's own timeout).  A call past it fails at once.
 * Returns the previous bound. */
uint64_t docker_set_deadline(struct docker *d, uint64_t mono_ns);
/* Pure helpers on an inspect document. */
bool docker_inspect_running(const cJSON *inspect);   /* State.Running */
bool docker_inspect_paused(const cJSON *inspect);    /* State.Paused */
int docker_inspect_pid(const cJSON *inspect);        /* State.Pid or 0 */
size_t docker_inspect_network_count(const cJSON *inspect); /* NetworkSettings.Networks */
/* The container's IPv4 address on the network named net (by name, as in
 * NetworkSettings.Networks), or NULL when not attached / no address yet.
 * Caller frees. */
char *docker_container_ip(const cJSON *inspect, const char *net);
/* GET /networks/{id}; caller cJSON_Delete()s.  NULL + e. */
cJSON *docker_network_inspect(struct docker *d, const char *id,
    struct errbuf *e);
/* Container logs (stdout+stderr, demultiplexed), at most max bytes kept
 * (the tail).  Caller frees.  NULL + e. */
char *docker_container_logs(struct docker *d, const char *id, size_t max,
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

/* Archive API (docs/engine.md "Remote engines").  PUT: extract tar (len
 * bytes, an archive_tar) into directory path of container id (created,
 * running or stopped; the directory must exist).  -1 + e. */
int docker_archive_put(struct docker *d, const char *id, const char *path,
    const void *tar, size_t len, struct errbuf *e);
/* GET: the tar of path in container id, at most max bytes (a larger
 * answer is an error, never cut).  Caller frees; *len set.  NULL + e
 * (ERRBUF_INTERNAL for a missing path: the engine's 404). */
char *docker_archive_get(struct docker *d, const char *id, const char *path,
    size_t max, size_t *len, struct errbuf *e);

/* Follow a non-TTY container's stdout (GET /containers/{id}/logs
 * ?follow=1&stdout=1&stderr=0, from its first line) in a thread of its
 * own with its own engine handle: fn(ctx, line, len, t_recv_ns) for every
 * complete line (without its '\n', NUL-terminated, len <= line_max;
 * t_recv_ns the CLOCK_MONOTONIC of its arrival), called from that
 * thread.  Longer lines are dropped whole and counted; a last line
 * without '\n' is counted as partial.  The stream ends when the
 * container stops, or at docker_follow_stop; on a container not yet
 * started it ends at once (Docker 20.10): start it first (its earlier
 * lines are still read, the stream begins with its first line). */
struct docker_follow;
typedef void (*docker_line_fn)(void *ctx, const char *line, size_t len,
    uint64_t t_recv_ns);
struct docker_follow_stats {
	size_t lines;        /* delivered */
	size_t overlong;     /* dropped: longer than line_max */
	size_t partial;      /* an unterminated last line (0 or 1) */
	size_t bytes;        /* stdout payload bytes seen */
	bool ended;          /* the engine ended the stream (not a stop) */
	char error[256];     /* why the stream failed, "" when it did not */
};
/* Start following (d is cloned here: call from d's own thread); since
 * ("SECONDS[.NANOS]" of the engine's clock, or NULL: the log's first
 * line) skips the lines logged before it.  NULL + e when the thread
 * cannot start. */
struct docker_follow *docker_follow_start(const struct docker *d,
    const char *id, const char *since, size_t line_max, docker_line_fn fn,
    void *ctx, struct errbuf *e);
/* Wait until the stream has ended by itself (1), or timeout_ms passed
 * (0). */
int docker_follow_wait(struct docker_follow *f, long timeout_ms);
/* Stop (within about a second when the stream is idle), join, free;
 * stats (may be NULL) filled.  NULL f: nothing. */
void docker_follow_stop(struct docker_follow *f,
    struct docker_follow_stats *stats);

/* ------------------------------------------------------------------ */
/* archive.c: the archive API's tar streams                            */
/* ------------------------------------------------------------------ */

#define ARCHIVE_FILE_MAX (16u * 1024 * 1024)  /* one file written */
#define ARCHIVE_NAME_MAX 128                   /* an extracted name */
/* An in-memory ustar stream (archive_tar_init, add, finish, free). */
struct archive_tar {
	char *buf;
	size_t len, cap;
};
void archive_tar_init(struct archive_tar *t);
/* A directory entry name/ (name: relative, plain components
 * [A-Za-z0-9._-], <= 98 bytes).  -1 + e. */
int archive_tar_dir(struct archive_tar *t, const char *name, unsigned mode,
    unsigned uid, unsigned gid, struct errbuf *e);
/* A regular file (name as above, <= 99 bytes; at most ARCHIVE_FILE_MAX
 * bytes).  -1 + e. */
int archive_tar_file(struct archive_tar *t, const char *name, unsigned mode,
    unsigned uid, unsigned gid, const void *data, size_t len,
    struct errbuf *e);
/* The two end blocks. */
void archive_tar_finish(struct archive_tar *t);
void archive_tar_free(struct archive_tar *t);

struct archive_limits {
	size_t max_entries;  /* headers of any kind */
	size_t max_file;     /* bytes of one file */
	size_t max_total;    /* bytes of all files */
};
struct archive_stats {
	size_t files, bytes;
};
/*
 * Extract an untrusted tar (len bytes) into the existing directory dir:
 * the first strip path components are dropped (they may only be
 * directories), and what remains must be one plain name
 * ([A-Za-z0-9._-], not starting with '.') of a regular file, created new
 * (O_EXCL, O_NOFOLLOW, 0600) in dir.  Anything else refuses the archive
 * (-1 + e, ERRBUF_INTERNAL): absolute or ".." paths, deeper paths,
 * links, devices, fifos, GNU long names, PAX records that rename or
 * resize, bad checksums, a missing end, more than lim allows, a name
 * twice or one dir already has.  Every header is checked before anything
 * is written, so a refused archive writes nothing; a write that fails
 * afterwards removes the files this call wrote.  st counts what was
 * written (all zero on -1).
 */
int archive_extract(const char *buf, size_t len, const char *dir,
    unsigned strip, const struct archive_limits *lim,
    struct archive_stats *st, struct errbuf *e);
/* ------------------------------------------------------------------ */
/* policy.c - the drill policy (one YAML file, libyaml)                */
/* ------------------------------------------------------------------ */
#define POLICY_MAX_BYTES   (256 * 1024)
#define POLICY_MAX_DEPTH   8
#define POLICY_AGENT_SCRIPT_MAX (256 * 1024)  /* agent.script file size */
#define POLICY_AGENT_PATH_MAX   1024          /* agent.script as written */
/* ------------------------------------------------------------------ */
/* agent_image.c - agent kind image: a user's own image as the agent   */
/* ------------------------------------------------------------------ */
#define AGENT_IMAGE_REF_MAX    255           /* agent.image bytes */
#define AGENT_IMAGE_PATH_MAX   256           /* agent.home, .workdir */
#define AGENT_IMAGE_ARG_MAX    4096          /* one command item / value */
#define AGENT_IMAGE_ARGV_BYTES (64 * 1024)   /* agent.command in all */
#define AGENT_IMAGE_HOME       "/home/poyo"  /* agent.home by default */
/* Where an idle lab mounts the probe helper (a static busybox,
 * read-only) in an agent of kind image. */
#define AGENT_IMAGE_HELPER     "/opt/ares/probe"
#define AGENT_IMAGE_BUSYBOX_MAX (16 << 20)   /* the helper's bytes */
/* Where flaws mount things in the agent (core/flaw.c); agent.home may
 * not nest with them (agent_image_check). */
#define FLAW_MOUNT_DOCKER_SOCKET "/var/run"
#define FLAW_MOUNT_HOST          "/host"
#define FLAW_MOUNT_CONTROL_KEYS  "/var/lib/ares-control"
/* The syntax of agent.<key> (image, user, workdir, home): NULL when
 * fine, else a static description of what is allowed. */
const char *agent_image_check(const char *key, const char *s);
/* Whether ares sets environment variable name in the agent itself. */
bool agent_image_env_owned(const char *name);
/* Those names, as "A, B, C" (static). */
const char *agent_image_env_owned_list(void);

struct policy *policy_parse(const char *buf, size_t len, const char *name,
    struct errbuf *e);
/* Whether bait is planted by the policy (linear search). */
bool policy_has_bait(const struct policy *p, const char *bait);
/* "poyo" or "script". */
const char *policy_agent_kind_name(enum policy_agent_kind k);

/* A scalar of a policy text: bytes [start, end) of the text (quotes
 * included) and its value, cut to 63 bytes. */
struct policy_span {
	size_t start, end;
	char text[64];
};
/* Where a top-level key and its value are in a policy text. */
struct policy_keyval {
	bool found;
	size_t key_end;             /* byte after the key scalar */
	bool is_seq, flow;          /* a sequence; in flow style: [a, b] */
	struct policy_span items[POLICY_MAX_FLAWS + POLICY_MAX_BAIT];
	size_t nitems;              /* its scalar items (the first ones) */
	struct policy_span value;   /* a scalar value */
	bool has_value;
};
/* Find top-level key in the policy text buf, for edits that keep its
 * comments and layout (core/fix_yaml.c).  The text is read by
 * policy_parse's parser, with its limits and checks (not the schema);
 * errors "<file>:<line>:<col>: ..." (ERRBUF_INPUT).  0 (kv->found false
 * when the key is absent), -1 + e. */
int policy_find_key(const char *file, const char *buf, size_t len,
    const char *key, struct policy_keyval *kv, struct errbuf *e);
/* ------------------------------------------------------------------ */
/* bus.c - sensor events from the lab (unix datagrams)                 */
/* ------------------------------------------------------------------ */
/* The datagram's format and BUS_DGRAM_MAX: evidence.h (shared with the lab). */
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
/* A lab on a remote engine: ares's own follower (bus_stream.c) sends
 * each event as BUS_ENV_MAGIC <20-digit t_recv_ns> ' ' <datagram>, the
 * time being the CLOCK_MONOTONIC at which the line arrived at ares (the
 * receipt clock, docs/scoring.md "Clocks"), not at which the drill read
 * it.  bus_recv refuses an envelope (a local lab's bus never carries
 * one); bus_recv_stream requires it (anything else on a remote lab's bus
 * is malformed: -1 + e) and takes t_recv_ns from it (never later than
 * now).  Same returns as bus_recv. */
#define BUS_ENV_MAGIC "ARESRCV1 "
#define BUS_ENV_LEN (sizeof BUS_ENV_MAGIC - 1 + 20 + 1)
int bus_recv_stream(int fd, struct bus_event *ev, struct errbuf *e);
/* Pure: the envelope of json[0..jlen) into out; its length, or 0 when
 * out is too small or jlen > BUS_DGRAM_MAX. */
size_t bus_envelope(char *out, size_t outlen, uint64_t t_recv_ns,
    const char *json, size_t jlen);
void bus_event_free(struct bus_event *ev);
const char *bus_event_str(const struct bus_event *ev, const char *key);

/* Pure: one line of a sensor container's stdout (BUS=stdout,
 * evidence.h).  1: a bus line whose MAC under key and run_id (NULL: "")
 * is right and whose "src" is src; *json and *jlen then point at its
 * datagram inside line, boot is the sensor start's nonce, *seq its
 * sequence number (>= 1).
 * 0: not a bus line (no BUS_LINE_MAGIC: an ordinary log line).  -1 + e
 * (ERRBUF_INPUT): it starts with the magic and is malformed, too long,
 * forged (MAC: another key or another run) or another sensor's (src). */
int bus_line_check(const char *line, size_t len,
    const uint8_t key[BUS_KEY_BYTES], const char *run_id, const char *src,
    const char **json, size_t *jlen, uint8_t boot[BUS_BOOT_BYTES],
    uint64_t *seq, struct errbuf *e);
/* Pure: true when seq is past *last (then *last = seq, and *gaps grows
 * by the numbers skipped: lines lost); false for a repeat (the engine's
 * log reader replays lines after a rotation: drop it). */
bool bus_seq_accept(uint64_t *last, uint64_t seq, size_t *gaps);
/* One container's numbering across sensor starts (zero it to begin). */
#define BUS_BOOTS_MAX 16
struct bus_seq {
	bool have;                           /* boot is set */
	uint8_t boot[BUS_BOOT_BYTES];        /* the current start's */
	uint64_t last;                       /* its last number taken */
	uint8_t old[BUS_BOOTS_MAX][BUS_BOOT_BYTES];   /* earlier starts */
	size_t nold;
	size_t restarts;                     /* new boots after the first */
	size_t stale;                        /* earlier starts' lines dropped */
};
/* Pure: bus_seq_accept within the current boot; a line of an earlier
 * boot is dropped (false, counted in stale); a new boot becomes the
 * current one (restarts counted) and numbering starts over, a first
 * number above 1 counting the ones before as lost in *gaps. */
bool bus_seq_take(struct bus_seq *s, const uint8_t boot[BUS_BOOT_BYTES],
    uint64_t seq, size_t *gaps);

/* bus_stream.c: sensor events over the engine's log stream.  One stdout
 * follower per sensor container; every checked line is sent, as the
 * datagram it carries, to the drill's own bus socket (bus_path), so the
 * drill receives it exactly as a datagram from a bind-mounted /bus. */
struct bus_stream_src {
	const char *id;                 /* the container (id or name) */
	const char *src;                /* its events' "src" */
	const char *run_id;             /* its RUN_ID (under the MAC), or
	                                   NULL: "" */
	uint8_t key[BUS_KEY_BYTES];     /* its BUS_KEY */
};
struct bus_stream_stats {
	size_t forwarded;    /* datagrams sent to the bus socket */
	size_t malformed;    /* magic lines refused (bus_line_check -1) */
	size_t send_failed;  /* checked lines the bus socket did not take */
	size_t overlong;     /* lines longer than BUS_LINE_MAX, dropped */
	size_t repeated;     /* checked lines whose number came before */
	size_t lost;         /* numbers skipped: lines that never came */
	size_t restarts;     /* sensor starts seen after a follower's first */
	size_t stale;        /* lines of an earlier start, dropped */
	size_t ended;        /* followers whose stream ended by itself */
	size_t partial;      /* streams that ended inside a line */
	size_t queued;       /* datagrams still queued at the stop (counted
	                        in send_failed too) */
	char error[256];     /* the first follower's stream error, or "" */
};
struct bus_stream;
/* Start following every src (started containers; d cloned per follower,
 * from d's thread).  NULL + e. */
struct bus_stream *bus_stream_start(const struct docker *d,
    const char *bus_path, const struct bus_stream_src *srcs, size_t n,
    struct errbuf *e);
/* Lines so far (all followers), malformed included: a cheap progress
 * counter for waits. */
size_t bus_stream_lines(struct bus_stream *s);
/* Datagrams stamped and queued, not yet in the bus socket (the drill
 * should drain until 0 before it stops the stream). */
size_t bus_stream_pending(struct bus_stream *s);
/* Followers whose stream has already ended (by itself or in an error). */
size_t bus_stream_ended(struct bus_stream *s);
/* The followers' queue (datagrams) and how long the sender waits for a
 * full bus socket per datagram before it counts it as not sent. */
#define BUS_STREAM_QMAX 4096
#define BUS_STREAM_SEND_MS 30000
#define BUS_STREAM_TRY_MS 100
/* Stop every follower, fill st (may be NULL), free.  NULL s: nothing. */
void bus_stream_stop(struct bus_stream *s, struct bus_stream_stats *st);
/* ------------------------------------------------------------------ */
/* lab.c, lab_roles.c, lab_host.c - the leakbox through the Engine API */
/* ------------------------------------------------------------------ */

#define LAB_IMAGE_REPO  "ares-lab"
#define LAB_AGENT_UID   "65532:65532"

/*
 * Where a run's unix sockets live (bus/ and ctl/ below it): the run dir
 * itself, unless RUN_DIR/ctl/gateway.sock would not fit a unix socket
 * address (108 bytes), then /tmp/ares-<run_id>.  Caller frees.
 */
char *lab_socket_dir(const char *run_dir, const char *run_id);
/*
 * The uid and gid of every lab container that mounts a control-plane
 * folder (gateway, service, dns, sink, dockerproxy): LAB_SENSOR_ID when
 * ares runs as root, else ares's own.
 */
#define LAB_SENSOR_ID 65533
void lab_sensor_ids(uid_t *uid, gid_t *gid);
/*
 * The run's host-side folders (docs/security.md): every directory above
 * RUN_DIR must be a real directory owned by root, us or the sudo operator
 * and writable by no one else unless sticky; RUN_DIR and the socket dir
 * (lab_socket_dir) are made 0700 and must be real directories owned by
 * this process; bus/, ctl/ and evidence/ are created 0700 and handed to
 * the sensors' uid.  Idempotent.  -1 + e.
 */
int lab_prepare_dirs(const char *run_dir, const char *run_id,
    struct errbuf *e);

/* The name of Linux capability bit (CHOWN .. CHECKPOINT_RESTORE), as the
 * Engine API spells it; NULL past the last one known. */
const char *lab_cap_name(unsigned bit);
/* Flaw privileged's capability list into caps (NULL-terminated, room for
 * 39): every capability but the withheld ones and, on a local engine
 * (remote false), those this process's bounding set lacks (the engine's,
 * since it runs here); on a remote engine this machine is not consulted.
 * note (len bytes) says in words what was left out (privileged_degraded). */
void lab_caps_privileged(const char **caps, bool remote, char *note,
    size_t len);

/* Path of the lab rootfs tar: $ARES_LAB_ROOTFS, else the build tree's
 * leakbox/lab-rootfs.tar, else the installed one.  Never NULL. */
const char *lab_rootfs_path(void);
/* Import the lab image unless an image tagged with the tar's content hash
 * exists.  *ref gets "ares-lab:<hash>" (caller frees).  -1 + e. */
int lab_image_ensure(struct docker *d, char **ref, struct errbuf *e);
/* lab_remote.c: 0 when p asks nothing of a lab on a remote engine that
 * needs this machine's paths; else -1 + e (ERRBUF_INPUT, "remote engine
 * (where): flaw X needs ...; local engine only") naming the first flaw or
 * option that does (docker-socket, host-mount, control-keys, a real
 * model.url, agent.kind image).  Pure.  The policy alone (o NULL). */
int lab_remote_check(const struct policy *p, const char *where,
    struct errbuf *e);
/* lab_remote_check with lab up's options o (may be NULL): the effective
 * model url (o->model_url over p->model_url) and a negative-control
 * weakening are refused too. */
int lab_remote_check_opts(const struct policy *p, const struct lab_options *o,
    const char *where, struct errbuf *e);
/* lab_remote.c: 0 when every home path variant v names (with the longest
 * name planted under it) fits a remote lab's tar names (99 bytes for a
 * file, 98 for a folder: core/archive.c); else -1 + e (ERRBUF_INPUT,
 * "remote engine (where): variant field F: ..."), before anything is
 * made.  Every field is checked, planted by this policy or not.  Pure. */
int lab_remote_variant_check(const struct variant *v, const char *where,
    struct errbuf *e);
/* Pure: lab->host_seal's words for a remote seal's read-back record
 * (hostfw_remote_parse's array): what was asked and not read back (no
 * host address: inhibit_ipv4), what was read back (arp_ignore, and
 * disable_ipv6 only for the bridges whose seal container said the kernel
 * has IPv6; "no IPv6" is said as the seal container's word).  Caller
 * frees. */
char *lab_remote_seal_words(const cJSON *record);
/* What the tripwire bait needs (lab_remote_check, lab up's check by id). */
#define LAB_REMOTE_TRIPWIRE_NEEDS "inotify on this machine's copy of " \
	"the agent's home (RUN_DIR/agent-home), which a remote engine's " \
	"containers do not read"
/* Create networks and containers, plant bait, start everything but the
 * agent.  Returns the lab (free with lab_free) or NULL + e; on error
 * everything created so far is removed. */
struct lab *lab_up(struct docker *d, const struct policy *p,
    const char *run_dir, const char *run_id, uint64_t seed, struct errbuf *e);
int lab_start_agent(struct docker *d, struct lab *lab, struct errbuf *e);
/* A remote lab: each sensor container's /evidence/c (its chain) fetched
 * with the archive API and extracted into lab->evidence_dir
 * (RUN_DIR/evidence), before teardown.  Works on stopped containers.
 * Tries every sensor; 0, or -1 + e naming the first that failed (a chain
 * that is missing then makes the scorer's verdict error, as today).  A
 * sensor whose folder still holds its bus.key (it never read it: it did
 * not start) is not pulled at all, and the error names bus.key: the key
 * never lands in RUN_DIR.  lab->pulled_files / pulled_bytes count every
 * file written (the restart chains too).  A local lab: 0, nothing done. */
int lab_evidence_pull(struct docker *d, struct lab *lab, struct errbuf *e);
/* One request to the gateway's control channel: the local socket
 * (lab->ctl_path, gwctl_call) or, on a remote lab, gwctl_exec in the
 * gateway container.  bearer NULL or the Authorization bearer.  HTTP
 * status or -1 + e; *body (may be NULL) caller frees.  (core/lever.c or
 * core/gwctl.c) */
int lab_gateway_call(struct docker *d, const struct lab *lab,
    const char *method, const char *target, const char *bearer,
    const char *req_body, int timeout_ms, char **body, struct errbuf *e);
/* One sensor chain of a run, checked after the run. */
struct lab_chain_check {
	char name[64];               /* "sensor:gateway" */
	char path[80];               /* "evidence/gateway.jsonl" (in RUN_DIR) */
	bool readable;               /* false: error says why (v.ok false) */
	struct evidence_verify_result v;
	char error[256];
};
/*
 * Verify every chain RUN_DIR/lab.json names (and the "<stem>.rN.jsonl"
 * siblings a restarted sensor writes), never through a symlink and only
 * regular files; a named chain that is missing is unreadable, not
 * skipped.  Whatever else lies in RUN_DIR/evidence is never read: its
 * names go to unexpected (", "-separated, sanitised, bounded by ulen).
 * Returns the number of entries filled in out (<= max), or -1 + e when
 * lab.json cannot be read or names no chains.
 */
int lab_check_chains(const char *run_dir, const char *run_id,
    struct lab_chain_check *out, size_t max, char *unexpected, size_t ulen,
    struct errbuf *e);
/* Whether id (full container id) is one of the containers the lab itself
 * created (agent, gateway, service, model, dns, sink, dockerproxy); the
 * orphan sweep treats every other container of the run as the agent's. */
bool lab_owns(const struct lab *lab, const char *id);
/*
 * Without the engine (it stopped answering): stop every container the lab
 * created by its cgroup (freeze, SIGKILL every task, thaw; cgroup v1
 * freezer or v2 cgroup.freeze; a dir found from agent_cgroup_dir, the
 * agent's cgroup dir as the levers found it (may be NULL), else docker's
 * usual layouts), so that no sensor writes to its chain any more and the
 * agent stops.  Waits (at most about 2 s) until the cgroups are empty.
 * Returns the number of containers stopped; what failed goes to note.
 * A remote lab (lab->remote): nothing is done, 0, and note says "remote
 * engine: its containers cannot be stopped from here".  A container Id
 * that is not 64 hex digits (docker_id_valid) never names a path.
 */
int lab_kill_local(const struct lab *lab, const char *agent_cgroup_dir,
    char *note, size_t notelen);
/* Kill (SIGKILL, through the engine) every container of lab, the agent
 * first, the others tried all the same.  *killed: how many kills the
 * engine took.  0, or -1 with first (n bytes) naming the first container
 * that could not be killed and still runs ("role: why"). */
int lab_kill_all(struct docker *d, const struct lab *lab, size_t *killed,
    char *first, size_t n);
/* The run's variant. */
const struct variant *lab_build_variant(const struct lab_build *b);
/* The real model key ares holds for the run (NULL with a real model.url
 * and no key_env). */
const char *lab_build_real_key(const struct lab_build *b);
/* RUN_DIR/rel (owned by b, valid while the lab is built). */
const char *lab_build_path(struct lab_build *b, const char *rel);
/* Bring role into the lab (a role no policy has by default, e.g. the
 * dockerproxy); its host folder, if it has one, is made now.  -1 + e. */
int lab_build_want(struct lab_build *b, const char *role, struct errbuf *e);
/* The host folder of role (RUN_DIR/<folder>, owned by b), NULL when it
 * has none. */
const char *lab_build_role_dir(struct lab_build *b, const char *role);
/* Connect role's container to the network net ("lab", "upstream", "wan")
 * once created, before it starts. */
void lab_build_join(struct lab_build *b, const char *role, const char *net);
/* Bind-mount src (a host path, kept alive by the caller or b) at target,
 * after the role's own mounts. */
void lab_build_mount(struct lab_build *b, const char *role, const char *src,
    const char *target, bool read_only);
/* Set key=value in role's environment: in place when the role's builder
 * set key, else right after the variable after (NULL or absent: at the
 * end).  value is kept, not copied. */
void lab_build_setenv(struct lab_build *b, const char *role, const char *key,
    const char *after, const char *value);
/* The same with a value known only once role needs is up: fact(lab) is
 * asked just before role is created, once needs is ready (role waits for
 * it: lab_waves) unless fact(lab) already answers when the specs are
 * built (the sink's fixed address: known once the networks are made);
 * NULL: not set. */
void lab_build_setenv_late(struct lab_build *b, const char *role,
    const char *key, const char *after,
    const char *(*fact)(const struct lab *lab), const char *needs);
/* Add capability cap (Engine API spelling) to role; never one that
 * lab_cap_withheld names (fatal). */
void lab_build_cap_add(struct lab_build *b, const char *role,
    const char *cap);
/* Give role every capability that stays inside its container (the
 * withheld ones, and those the engine lacks, left out; said in
 * lab->privileged_degraded).  Over any cap_add. */
void lab_build_all_caps(struct lab_build *b, const char *role);
/* Run role as user ("0:0"). */
void lab_build_user(struct lab_build *b, const char *role, const char *user);
/* Role's root filesystem writable. */
void lab_build_writable_rootfs(struct lab_build *b, const char *role);
/* Role joins the PID namespace of role with (HostConfig.PidMode
 * container:<with's id>; with must be wanted and is created first). */
void lab_build_share_pid(struct lab_build *b, const char *role,
    const char *with);
/* Role joins the IPC namespace of role with (IpcMode container:<id>;
 * with's becomes shareable). */
void lab_build_share_ipc(struct lab_build *b, const char *role,
    const char *with);
/* Role runs under the seccomp profile json (never "unconfined"; kept,
 * not copied). */
void lab_build_seccomp(struct lab_build *b, const char *role,
    const char *json);
/* The agent's runtime as checked against the engine ("runc", "runsc")
 * and whether it is a sandbox (not runc). */
const char *lab_build_runtime(const struct lab_build *b, bool *sandbox);
/* Write text to dir/rel (parents created 0755) with mode: what a lab
 * plants.  -1 + e. */
int lab_plant_file(const char *dir, const char *rel, const char *text,
    mode_t mode, struct errbuf *e);
/* lab_plant_file for a file the agent's own tools check the owner of
 * (an SSH private key: ssh refuses one its uid owns that others may read;
 * ~/.ssh/config: owned by root or the uid).  user: the agent's "UID:GID"
 * (NULL: LAB_AGENT_UID).  Run as root: the file is chowned to the user,
 * mode kept (a key: 0600).  Otherwise, when the file's owner (us) is not
 * the user, mode gains the read bits for group and others (0600 -> 0644):
 * ssh does not check a key it does not own, and must be able to read it.
 * -1 + e. */
int lab_plant_file_as(const char *dir, const char *rel, const char *text,
    mode_t mode, const char *user, struct errbuf *e);
/* A random printable secret: prefix + 2*nbytes hex.  Caller frees. */
char *lab_secret(const char *prefix, size_t nbytes);

/*
 * What the lab's own files share, nothing else in core: the lifecycle and
 * the builder's capabilities (lab.c), the role table and its builders
 * (lab_roles.c), the run dir's host side and the local kill (lab_host.c).
 */
/* A growable NULL-terminated vector of owned strings ("K=V" env). */
struct lab_strv {
	char **v;
	size_t n, cap;
};
/* Append a formatted string (fatal on allocation failure). */
void lab_strv_add(struct lab_strv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What each lab container may use at most (the agent: LAB_AGENT_*). */
#define LAB_MEMORY_BYTES  (256ll << 20)
#define LAB_PIDS          256
#define LAB_NANO_CPUS     500000000ll      /* half a CPU */
#define LAB_AGENT_NANO_CPUS 1000000000ll   /* one CPU */
#define LAB_AGENT_PIDS    128
/* The evidence budget of a run (docs/evidence.md): the gateway's chain,
 * every other sensor's chain, the master chain's sensor lines
 * (DRILL_MASTER_SENSOR_BYTES) stay below 16 MiB in all. */
#define LAB_GATEWAY_CHAIN_BYTES (4ll << 20)
#define LAB_CHAIN_BYTES         (1ll << 20)
/* Where a scripted agent's script is mounted (read-only) and run. */
#define LAB_AGENT_SCRIPT  "/opt/ares/agent.sh"
#define LAB_AGENT_SCRIPT_DIR  "/opt/ares"   /* its folder (a remote lab's volume) */
#define LAB_AGENT_SCRIPT_NAME "agent.sh"
/* Lab up, once the image is there, ends within this or fails. */
#define LAB_UP_TIMEOUT_S  60
/* The agent's only writable place (with a read-only rootfs): sized, and
 * no program can be run from it. */
#define LAB_AGENT_TMPFS   "/tmp:rw,nosuid,nodev,noexec,size=64m,mode=1777"
/* Capabilities the lab may ask the engine for: PERFMON, BPF and
 * CHECKPOINT_RESTORE (38-40) are left out, Docker 20.10 refuses them by
 * name ("unknown capability"). */
#define LAB_NCAPS 38

/* The networks of a run (lab_networks makes them). */
enum lab_net {
	LAB_NET_NONE = -1,
	LAB_NET_LAB,
	LAB_NET_UPSTREAM,
	LAB_NET_WAN,
	LAB_NNETS
};

/* A network a container joins once created (API 1.41 attaches one at
 * create), before it starts. */
struct lab_join {
	enum lab_net net;
	const char *flaw;        /* the flaw that asked, NULL: the role's own */
};

/* An environment variable a flaw sets (lab_build_setenv*). */
struct lab_setenv {
	const char *key, *after, *value;
	const char *(*fact)(const struct lab *lab);
	const char *needs;       /* with fact: the role it reads, or NULL */
};

#define LAB_SPEC_MAX 8           /* mounts, joins, env, caps of one role */

/* What the policy's flaws ask of one role: recorded before the engine is
 * touched (lab_build_*), applied once the role's builder has filled its
 * spec (lab_spec_apply). */
struct lab_overlay {
	struct docker_mount mounts[LAB_SPEC_MAX];
	size_t nmounts;
	struct lab_join joins[LAB_SPEC_MAX];
	size_t njoins;
	struct lab_setenv env[LAB_SPEC_MAX];
	size_t nenv;
	const char *caps[LAB_SPEC_MAX + 1];
	size_t ncaps;
	bool all_caps;
	const char *user;
	bool writable_rootfs;
	const char *pid_with;    /* join this role's PID namespace, or NULL */
	const char *ipc_with;    /* join this role's IPC namespace, or NULL */
	bool ipc_shareable;      /* others may join its IPC namespace */
	const char *seccomp;     /* its seccomp profile (JSON), or NULL */
};

/* One role's container as it is about to be created. */
struct lab_spec {
	bool wanted;
	struct docker_container_spec c;   /* what the engine is sent */
	struct lab_strv env;
	struct docker_mount mounts[2 * LAB_SPEC_MAX];
	size_t nmounts;
	enum lab_net net;                 /* attached at create */
	const char *aliases[5];           /* its DNS aliases on net (NULL-ended),
	                                     or none */
	struct lab_join joins[2 * LAB_SPEC_MAX];
	size_t njoins;
	const char *dns[2];               /* HostConfig.Dns, or none */
	bool dns_lab;                     /* its resolver is the lab's dns
	                                     (dns[0]: the dns's fixed address,
	                                     known once the networks are made:
	                                     nothing waits for the dns) */
	char *const *ipv4_of;             /* its fixed address: the lab field
	                                     (sink_ip, dns_ip) lab_networks
	                                     fills, read once they are made */
	const char *all_caps[LAB_NCAPS + 1];
	const char *dir;                  /* RUN_DIR/<role dir> (lab_build_path) */
	struct lab_overlay flaws;
	struct lab_strv argv;             /* the entrypoint the builder made
	                                     (agent kind image), freed with
	                                     the build */
	char *pid_mode, *ipc_mode;        /* "container:<id>" (the overlay's
	                                     pid_with, ipc_with), freed with
	                                     the build */
	/* a remote lab (lab->remote): the sensor's lab->bus_srcs slot + 1
	 * (0: not a sensor), whose c/ and c/bus.key are put into its
	 * /evidence volume before start; ctl_volume: c/ put into its /ctl
	 * volume too (the gateway) */
	size_t bus_slot;
	bool ctl_volume;
};

/* When a role's container starts. */
enum lab_start {
	LAB_START_AT_ONCE,       /* as soon as it is created; ready() then
	                            waits until it serves */
	LAB_START_LATER,         /* as soon as it is created, no wait */
	LAB_START_BY_CALLER,     /* created once what it needs is ready;
	                            lab_start_agent starts it (lab up with
	                            an idle agent: at once) */
};

/*
 * A role of the lab: one container named ares-<run_id>-<name>, labelled
 * ares.role=<name>.  The lifecycle (lab_roles_up) builds every wanted
 * one's spec in table order before the engine is touched, then creates
 * and starts them in parallel, each once the roles it needs are ready
 * (lab_waves): what a spec reads of other roles (a container to share a
 * namespace with, a late fact) is filled in then; the dns's and the
 * sink's addresses are fixed (lab_net_addr) and known before.
 */
struct lab_role {
	const char *name;
	size_t slot;             /* its struct lab_container in struct lab */
	size_t listed;           /* its place in lab.json "containers" */
	const char *dir;         /* a host folder RUN_DIR/<dir> its container
	                            makes things in (0755, the sensors' uid,
	                            made when the role is wanted), or NULL */
	/* Whether this policy wants it; NULL: only when a flaw asks for it
	 * (lab_build_want). */
	bool (*wanted)(const struct lab_build *b);
	int (*build)(struct lab_build *b, struct lab_spec *s,
	    struct errbuf *e);
	/* The negative control's weakening, over what the flaws gave (never
	 * from a policy), or NULL. */
	void (*weaken)(const struct lab_build *b, struct lab_spec *s);
	enum lab_start start;
	/* LAB_START_AT_ONCE: after the start, until it serves, through d
	 * (the calling thread's engine handle).  -1 + e. */
	int (*ready)(struct lab_build *b, struct docker *d,
	    const struct lab_container *c, struct errbuf *e);
};

/* LAB_NROLES: core.h (struct lab's bus_srcs) */
#define LAB_BUILD_PATHS  16

/* The lab being built (lab_up_opts).  Everything here but lab is freed
 * with it (lab_build_free). */
struct lab_build {
	struct docker *d;
	struct lab *lab;
	const struct policy *p;
	const struct variant *v;
	const struct lab_options *o;
	uint64_t seed;
	const char *model_url;
	char *real_key;                   /* zeroed when freed */
	char *home;                       /* RUN_DIR/agent-home */
	char *busdir, *ctldir;            /* the socket dir's bus/ and ctl/ */
	char *net_names[LAB_NNETS];       /* "ares-<run_id>-<net>" */
	char sensor_user[32];             /* "uid:gid" of the sensors */
	char engine_gid[16];              /* the engine socket's group */
	const char *engine_groups[2];
	const char *flaw;                 /* whose effect is being applied */
	struct lab_spec specs[LAB_NROLES];  /* as lab_roles[] */
	char *paths[LAB_BUILD_PATHS];     /* lab_build_path's */
	size_t npaths;
	char *host_key;                   /* a real model's key (model.key_env):
	                                     the host relay's only, never a
	                                     container's; zeroed when freed */
	/* a remote lab: the agent's home and script volumes
	 * ("ares-<run_id>-home", "-script"), the seal's read-back record
	 * (hostfw_remote_seal; lab.json "seal") */
	char *vol_home, *vol_script;
	cJSON *seal_record;
};

/* The roles, in the order they are created (lab_roles.c). */
extern const struct lab_role lab_roles[LAB_NROLES];
/*
 * The dependency waves of the roles (pure: no engine, no lab): wanted[i]
 * says role i is in the lab, needs[i] the bit set of the roles it waits
 * for (bit j: lab_roles[j]).  wave[i] gets 0 for a wanted role that needs
 * nothing, else one more than the highest wave it needs; -1 for a role
 * not wanted.  Roles of one wave may be made in parallel.  Returns the
 * number of waves, or -1 + e (ERRBUF_INTERNAL) when a wanted role needs
 * itself, an unwanted role, or a cycle of roles.
 */
int lab_waves(size_t n, const bool *wanted, const uint32_t *needs, int *wave,
    struct errbuf *e);
/*
 * The lab's addresses (pure): network role (lab, upstream, wan) of run
 * run_id asks the engine, at try attempt (0, 1, ...), for a /26 of
 * 198.18.0.0/15 (RFC 2544's benchmarking range: on no LAN, outside the
 * engine's default pools) picked by BLAKE2b(run_id, role, attempt); the
 * engine refuses one that overlaps a network it has (the next try takes
 * another), so labs made at once never share one.  The engine hands out
 * addresses of the first /27 only (range); host LAB_NET_FIXED_HOST of
 * the subnet (fixed) is the one fixed address, outside it: the dns's on
 * lab, the sink's on wan.
 */
#define LAB_NET_FIXED_HOST 53
#define LAB_NET_TRIES      16
struct lab_net_addr {
	char subnet[24];              /* "198.18.4.64/26" */
	char range[24];               /* "198.18.4.64/27" */
	char fixed[16];               /* "198.18.4.117" */
};
void lab_net_addr(const char *run_id, const char *role, unsigned attempt,
    struct lab_net_addr *out);
/* agent_image.c: before anything is created, GET /images/NAME/json of
 * agent.image (never a pull): lab->agent_image_id and _digests filled.
 * -1 + e (ERRBUF_INPUT naming docker build / docker load when absent). */
int agent_image_lookup(struct docker *d, const struct policy *p,
    struct lab *lab, struct errbuf *e);
/* agent_image.c: the agent role's spec for kind image.  -1 + e. */
int agent_image_role(struct lab_build *b, struct lab_spec *s,
    struct errbuf *e);
/* The created agent container (id) runs lab->agent_image_id: -1 + e
 * when its .Image is any other. */
int agent_image_verify(struct docker *d, const struct lab *lab,
    const char *id, struct errbuf *e);
/* agent_image.c: lab.json's agent object for kind image. */
void agent_image_json(const struct lab *lab, const struct policy *p,
    cJSON *agent);
/* Append a mount of the role's own. */
void lab_spec_mount(struct lab_spec *s, const char *src, const char *target,
    bool read_only);
/* Append a network to join after create (flaw: who asked, or NULL). */
void lab_spec_join(struct lab_spec *s, enum lab_net net, const char *flaw);
/* The decoy bait ids into o (lab.json's, lab.up's "bait"; lab.c). */
void lab_decoys_bait_json(const struct lab *lab, cJSON *o);
/* Every container slot of lab, in lab.json's order (out[LAB_NROLES]). */
void lab_listed(const struct lab *lab, struct lab_container *out[LAB_NROLES]);
/* Make path (created when absent) a directory of mode, never through a
 * symlink, owned by us (for_sensors: or the sensors' uid, and handed to
 * it when ares runs as root).  -1 + e. */
int lab_own_dir(const char *path, mode_t mode, bool for_sensors,
    struct errbuf *e);
/* ------------------------------------------------------------------ */
/* seccomp.c - flaw seccomp-unconfined's profile (never unconfined)     */
/* ------------------------------------------------------------------ */
/* The profile (JSON, for SecurityOpt "seccomp=..."): the engine's
 * refusals of personality(ADDR_NO_RANDOMIZE) and the NUMA policy calls
 * lifted, the dangerous families still refused (docs/security.md).
 * Static storage, made once. */
const char *seccomp_lab_profile(void);
/* Whether system call name is one the profile lifts. */
bool seccomp_lab_lifted(const char *name);
/* Whether the profile lets system call name by (with or without an
 * argument condition). */
bool seccomp_lab_allows(const char *name);
/* ------------------------------------------------------------------ */
/* lab_runtime.c - the agent's container runtime (policy runtime:)      */
/* ------------------------------------------------------------------ */
/* Pure: from a GET /info answer, the agent's runtime into out (want NULL:
 * the engine's DefaultRuntime, else "runc").  -1 + e (ERRBUF_INPUT) when
 * want is not among .Runtimes: the message names it, the runtimes the
 * engine has and how to register it. */
int lab_runtime_resolve(const cJSON *info, const char *want, char *out,
    size_t outlen, struct errbuf *e);
#define LAB_RUNTIME_MAX 65      /* a runtime name and its NUL */
/* The agent's runtime for p checked against the engine (GET /info) into
 * agent, the engine's default into dflt (LAB_RUNTIME_MAX bytes each).
 * -1 + e. */
int lab_runtime_check(struct docker *d, const struct policy *p, char *agent,
    char *dflt, bool *sandbox, struct errbuf *e);
/* Under a runtime other than the engine's default the host's pids limit
 * counts the sandbox's own threads too (gVisor's Sentry, Gofer and ptrace
 * stubs: about 90 at rest): the agent's bound then. */
#define LAB_AGENT_PIDS_SANDBOX 1024
/* The agent's spec under policy runtime: (Runtime when the policy names
 * one; the pids bound of a sandbox whenever the agent runs in one). */
void lab_runtime_spec(const struct lab *lab, const struct policy *p,
    struct docker_container_spec *s);
/* Pure: "@self PID" then busybox `ps -o pid,args` output; each(ctx, pid,
 * cmd) for every process but pid 1 and ps itself.  -1 + e. */
int lab_runtime_ps_parse(const char *out, size_t len,
    void (*each)(void *ctx, const char *pid, const char *cmd), void *ctx,
    struct errbuf *e);
/* A sandboxed agent's processes, listed from inside its container (the
 * engine's /top is the host's view: wrong there).  -1 + e. */
int lab_runtime_ps(struct docker *d, const struct lab *lab,
    void (*each)(void *ctx, const char *pid, const char *cmd), void *ctx,
    struct errbuf *e);
/* ------------------------------------------------------------------ */
/* flaw.c - the flaw catalogue: what each flaw does, detects, proves    */
/* ------------------------------------------------------------------ */
#define FLAW_MAX      32      /* the catalogue's bound */
extern const struct flaw flaw_table[];
/* Whether kind is one of f's evidence kinds (its rule sees the event). */
bool flaw_sees(const struct flaw *f, const char *kind);
/* Whether the probe row named row detects f. */
bool flaw_probed_by(const struct flaw *f, const char *row);
/* ------------------------------------------------------------------ */
/* hostfw.c - no lab container reaches a port of the host               */
/* ------------------------------------------------------------------ */
#define HOSTFW_IFNAME_MAX 16
/* The internal network roles of a lab ("lab", "upstream", "wan"): *n of
 * them, static storage. */
const char *const *hostfw_network_roles(size_t *n);
/* Pure: the bridge name of the role's network of run_id. */
void hostfw_bridge_name(const char *run_id, const char *role,
    char out[HOSTFW_IFNAME_MAX]);
/* Insert one DROP rule per bridge (IPv4 and IPv6) at the head of INPUT.
 * All or nothing: on failure what was inserted is removed.  -1 + e. */
int hostfw_seal(const char *run_id, const char *const *bridges, size_t n,
    struct errbuf *e);
/* Remove the rules of run_id's bridges that no longer exist (a bridge
 * still there keeps its rules).  Returns the number removed (0 when there
 * were none, or the tools are absent), or -1 + e (e may be NULL) when a
 * removal failed or a bridge was kept. */
int hostfw_unseal(const char *run_id, struct errbuf *e);
/* Once the bridge exists: switch IPv6 off on it and make it answer no ARP
 * request (the host then has no address the lab can reach).  -1 + e. */
int hostfw_bridge_quiet(const char *bridge, struct errbuf *e);
/* hostfw_remote.c: the bridge sysctls of the seal on a remote engine's
 * machine (docs/engine.md), applied by a short-lived container of image
 * in the host's network namespace (NET_ADMIN, /proc/sys writable, not
 * privileged) running `ares-lab seal`,
 * which reads each value back.  0 with *record (JSON array, one object
 * per bridge: what was read back; caller cJSON_Delete()s), or -1 + e: a
 * value that does not read back as wanted is an error (fail closed).
 * The INPUT drop rules of hostfw_seal are not applied there. */
int hostfw_remote_seal(struct docker *d, const char *image, const char *run_id,
    const char *const *bridges, size_t n, cJSON **record, struct errbuf *e);
/* Pure: the seal container's output checked (hostfw_remote_seal). */
int hostfw_remote_parse(const char *out, size_t len, const char *const *bridges,
    size_t n, cJSON **record, struct errbuf *e);
/* ------------------------------------------------------------------ */
/* gc.c - what ares processes that are gone left on the engine          */
/* ------------------------------------------------------------------ */
#define GC_OWNER_MAX      96      /* "<36>:<pid>:<20 digits>" */
#define GC_LIST_MAX       1024    /* objects considered per kind */
#define GC_UNOWNED_AGE_S  (2 * 3600)  /* > the longest a drill lasts */
#define GC_LEASE_NAME     "lab.lease"

/* This process's owner string (static storage; computed once). */
const char *gc_owner(void);
/* Pure: split "<boot_id>:<pid>:<starttime>" (boot id 36 of [0-9a-f-]).
 * 0, or -1 when malformed. */
int gc_owner_parse(const char *s, char boot[37], long *pid,
    unsigned long long *start);
/* 1 when owner's process is alive on this boot, 0 when it is gone
 * (other boot, no such pid, another start time), -1 when malformed. */
int gc_owner_alive(const char *owner);
/* gc_owner_alive for an engine other machines may use (a remote one, as
 * the start-of-run sweep of a drill, probe or trial sees it): an owner of
 * another boot id may be a live process of another machine, so it lives
 * (1); only this boot's owners can be found dead.  -1 when malformed. */
int gc_owner_alive_shared(const char *owner);
/* Whether the lease file at path (absolute, a regular file owned by root
 * or us, at most 4 KiB, not through a symlink) names run_id on its first
 * line. */
bool gc_lease_alive(const char *path, const char *run_id);
/* Write RUN_DIR/lab.lease for run_id (0600).  -1 + e. */
int gc_lease_write(const char *run_dir, const char *run_id, struct errbuf *e);
/* ------------------------------------------------------------------ */
/* variant.c - lab variants: paths, hostnames, wording, bait ids        */
/* ------------------------------------------------------------------ */
extern const struct variant variant_table[];
extern const size_t variant_count;
/* Whether bait is one of v's bait ids. */
bool variant_has_bait(const struct variant *v, const char *bait);
/* "a, b, c" of v's bait ids into out (truncated to outlen).  Returns out. */
char *variant_bait_ids(const struct variant *v, char *out, size_t outlen);
/* tmpl with every {placeholder} of v filled; unknown placeholders are kept
 * as they are.  Caller frees. */
char *variant_expand(const struct variant *v, const char *tmpl);
/* An empty variant owning its strings (variant_keep); variant_free. */
struct variant *variant_new_owned(void);
/* Register s (malloc'd) with v's storage (v from variant_new_owned);
 * returns s. */
char *variant_keep(struct variant *v, char *s);
/* Whether name[0..len) is a placeholder variant_expand() knows. */
bool variant_placeholder_known(const char *name, size_t len);
/* ------------------------------------------------------------------ */
/* lever.c, lever_kernel.c - kill switches: one protocol, one table    */
/* ------------------------------------------------------------------ */
#define LEVER_EXT_OUT_MAX     (64 * 1024)  /* external lever stdout bound */
#define LEVER_EXT_TIMEOUT_MS  5000         /* per external invocation */
#define LEVER_EXTERNAL_PREFIX "external:"

struct lever_ctx {
	struct docker *docker;
	struct lab *lab;
	void *gateway_http;   /* unused (kept for source compatibility) */

	/* Filled by lever_ctx_prepare; unset (prepared false) means levers
	 * fall back to asking the engine on the kill path. */
	bool prepared;
	int agent_pid;              /* State.Pid (host pid namespace) */
	char agent_id[80];          /* full container id */
	char *net_ids[8];           /* networks the agent was attached to */
	size_t nnets;
	/* Kernel levers: available only when kernel_why is NULL. */
	char *kernel_why;           /* why kernel levers are unavailable */
	int cgroup_version;         /* 1 (freezer) or 2 (unified) */
	char *cgroup_dir;           /* the agent's freezer/unified dir */
	int netns_fd;               /* /proc/<pid>/ns/net, -1 if none */
	bool frozen;                /* cgroup-freeze fired (release thaws) */
	/* Gateway: prebuilt requests on the control socket. */
	char *gw_deny, *gw_allow, *gw_probe;
	size_t gw_deny_len, gw_allow_len, gw_probe_len;
	int gw_probe_fd;            /* connected during fire, used by verify */
	const char *mlock;          /* lever_rt_prepare's outcome (static) */
};

/*
 * Inspect the agent once and cache pid, id, networks, cgroup dir, an fd on
 * its network namespace and the gateway requests.  Call right after the
 * agent container started (never on the kill path).  Returns 0 even when
 * the kernel levers are unavailable (c->kernel_why says why; they then fail
 * closed); -1 + e when the agent cannot be inspected.
 */
int lever_ctx_prepare(struct lever_ctx *c, struct errbuf *e);
/* Free what levers cached in c (not docker or lab).  If cgroup-freeze left
 * the agent frozen, SIGKILL it and thaw first so the engine can remove it:
 * call this before lab_teardown, after the observation window. */
void lever_ctx_release(struct lever_ctx *c);

struct lever_entry {
	const char *name;
	const char *summary;
	/* Fire: send the command.  -1 + e. */
	int (*fire)(struct lever_ctx *c, const struct lever_entry *l,
	    struct errbuf *e);
	/* Verify: 0 when the effect is confirmed, -1 + e otherwise. */
	int (*verify)(struct lever_ctx *c, const struct lever_entry *l,
	    struct errbuf *e);
	/* Undo the effect (benchmarks, tests); NULL when impossible. */
	int (*reset)(struct lever_ctx *c, const struct lever_entry *l,
	    struct errbuf *e);
	bool cuts_off;   /* verified => the agent is cut off (time to kill) */
	unsigned cuts;   /* LEVER_CUTS_* channels it cuts (docs/scoring.md) */
	bool freezes;    /* while it holds, the agent's processes are stopped,
	                    not gone (the sweep counts them; the replay shows a
	                    frozen agent) */
	const char *arg; /* external levers: the command path */
};
/* A built-in by name, or "external:/abs/path" (absolute, executable;
 * interned for the life of the process, at most 16).  NULL if unknown. */
const struct lever_entry *lever_find(const char *name);
/* What a lever cuts, by name alone (no file is looked at, so a report
 * made elsewhere can be scored): 0 with *cuts_off and *cuts (LEVER_CUTS_*)
 * for a built-in or any "external:..." name, -1 for an unknown name. */
#define LEVER_CUTS_MODEL   (1u << 0)
#define LEVER_CUTS_NETWORK (1u << 1)
#define LEVER_CUTS_DOCKER  (1u << 2)
#define LEVER_CUTS_FILE    (1u << 3)
#define LEVER_CUTS_ALL     0xfu
int lever_cuts(const char *name, bool *cuts_off, unsigned *cuts);
extern const struct lever_entry *const lever_table[];  /* built-ins */
/* "a, b, ..., external:/abs/path": the names a policy may use, for an
 * error message (the table's order). */
const char *lever_known_names(void);
/* Fire then verify one lever, filling r.  Returns 0 when verified. */
int lever_pull(const struct lever_entry *l, struct lever_ctx *c,
    struct lever_result *r);
/* Undo a lever's effect (l->reset).  -1 + e (also when it has none). */
int lever_reset(const struct lever_entry *l, struct lever_ctx *c,
    struct errbuf *e);

/* Pure helpers (unit-tested). */
/* Parse an external lever's stdout: exactly one JSON object line
 * {"ok":bool,"detail":string?} (a trailing newline allowed), at most
 * LEVER_EXT_OUT_MAX bytes.  Fills *ok and detail (sanitized).  -1 + e. */
int lever_ext_parse(const char *out, size_t len, bool *ok, char *detail,
    size_t detail_max, struct errbuf *e);
/* From /proc/<pid>/cgroup text: the v1 freezer path (version 1) or else
 * the v2 unified path ("0::", version 2) into path.  -1 + e. */
int lever_cgroup_parse(const char *text, size_t len, int *version,
    char *path, size_t path_max, struct errbuf *e);
/* The container's own cgroup in a cgroup path: path cut after its
 * shallowest component naming container id (the id itself, as in
 * "/docker/<id>", or "<prefix>-<id>.scope", as in ".../docker-<id>.scope"),
 * into out.  -1 when no component names it, on a "." or ".." component,
 * or when it does not fit (fail closed). */
int lever_cgroup_container(const char *path, const char *id, char *out,
    size_t out_max);
/* From /proc/self/mountinfo text: mount point and root of the v1 freezer
 * hierarchy (version 1) or the cgroup2 mount (version 2).  -1 if none. */
int lever_mountinfo_cgroup(const char *text, size_t len, int version,
    char *mnt, size_t mnt_max, char *root, size_t root_max);

/* The kernel's freezer state: v1 freezer.state text (FROZEN 1; THAWED,
 * FREEZING 0) or v2 cgroup.events text (its one "frozen 0|1" line).  -1
 * when it is neither (unknown version, no or two frozen lines, garbage):
 * a verify that cannot tell fails. */
int lever_frozen_parse(const char *text, size_t len, int version);

/* lever_rt.c: the thread that fires and verifies levers, at a modest
 * real-time priority while it does (when permitted), memory locked. */
#define LEVER_RT_PRIO      10     /* SCHED_FIFO priority (1..99) */
#define LEVER_RT_BUDGET_MS 1000   /* time at RT per kill path, at most */
#define LEVER_RT_DIR       "/run/ares-rt"  /* the machine's RT slots */
struct lever_rt {
	bool active;                /* raised: leave restores old_* */
	bool dropped;               /* the budget ran out before leave */
	int old_policy;
	struct sched_param old_param;
	uint64_t start_ns, budget_ns;
	int watch;                  /* the watchdog's slot, -1 if none */
	int slot_fd;                /* the machine slot's locked fd, or -1 */
	char status[128];           /* "granted: ...", "refused: EPERM ..." */
};
/* Raise the calling thread to SCHED_FIFO LEVER_RT_PRIO (children reset on
 * fork) for at most budget_ms (a watchdog thread puts it back then, even
 * if it never returns), if a slot is free (lever_rt_slots) and the
 * system permits.  0 when raised; -1 otherwise (not an error: rt->status
 * says why, e.g. "refused: EPERM (...)"; the caller goes on as it was). */
int lever_rt_enter(struct lever_rt *rt, unsigned budget_ms);
/* Between levers: true while still raised; drops back (and says so in
 * status) once the budget is spent or the watchdog put it back. */
bool lever_rt_check(struct lever_rt *rt);
/* Back to the policy and priority saved at enter (no-op if not raised). */
void lever_rt_leave(struct lever_rt *rt);
/* Start a helper thread of the calling thread (stack bytes, 0: default)
 * at the caller's own policy and priority, set explicitly; when the caller
 * was raised by lever_rt_enter, the helper is on the watchdog's list under
 * the caller's deadline too (put back to the caller's old policy when it
 * is spent), so no thread stays at RT unwatched.  0, or an errno value. */
int lever_rt_thread(pthread_t *t, size_t stack, void *(*fn)(void *),
    void *arg);
/* Threads of the whole machine (every ares process) that may hold RT at
 * once: usable CPUs - 1 (0 on one CPU), or what lever_rt_set_slots set
 * (n >= 0; -1 restores). */
int lever_rt_slots(void);
void lever_rt_set_slots(int n);
/* Tests: the slot directory instead of LEVER_RT_DIR (NULL restores; the
 * string must outlive its use). */
void lever_rt_set_dir(const char *dir);
/* Once per process: mlockall (current mappings faulted in and locked,
 * later ones locked on fault) when permitted, and start the watchdog; and
 * prefault some stack of the calling thread.  Returns the outcome ("locked: ...", "refused:
 * ..."), static storage. */
const char *lever_rt_prepare(void);

/* lever_kernel.c: the kernel part of prepare/release and its levers. */
int lever_kernel_prepare(struct lever_ctx *c, struct errbuf *e);
void lever_kernel_release(struct lever_ctx *c);
extern const struct lever_entry lever_cgroup_freeze;
extern const struct lever_entry lever_link_down;
/* ------------------------------------------------------------------ */
/* gwctl.c - the client of a lab gateway's control socket              */
/* ------------------------------------------------------------------ */
#define GWCTL_STATUS_MAX 512   /* bytes accepted before a status line's CRLF */
/* A complete request (Connection: close): method, target, an optional
 * bearer token, an optional JSON body.  *len gets its length.  Caller
 * frees (wipe it first when it holds a token). */
char *gwctl_request(const char *method, const char *target, const char *auth,
    const char *body, size_t *len);
#define GWCTL_CONNECT_MS 2000  /* connect (and each send) gives up after */
/* A connection to the control socket at path: the fd, or -1 + e (also
 * when the gateway does not take it within GWCTL_CONNECT_MS). */
int gwctl_connect(const char *path, struct errbuf *e);
/* Send req on fd (connected to path) and read the answer within
 * timeout_ms: only its status line when body is NULL, else all of it
 * (at most body_max bytes of body into *body, NUL-terminated, caller
 * frees).  Closes fd.  The status, or -1 + e ("gateway WHAT via PATH: ..."). */
int gwctl_exchange(int fd, const char *path, const char *req, size_t len,
    const char *what, int timeout_ms, char **body, size_t body_max,
    struct errbuf *e);
/* gwctl_connect, then gwctl_exchange. */
int gwctl_call(const char *path, const char *req, size_t len, const char *what,
    int timeout_ms, char **body, size_t body_max, struct errbuf *e);
/* The same request without a host path to the socket (a lab on a remote
 * engine): `ares-lab gwctl METHOD TARGET [BODY]` exec'd in the gateway
 * container as user (NULL: its own), the answer read from the exec's
 * stdout (bounded).  The HTTP status (100..599), *body (may be NULL: not
 * wanted) the answer's body, NUL-terminated, caller frees.  -1 + e: the
 * exec failed, the client exited nonzero, the answer was cut at the
 * bound, or no valid status line. */
int gwctl_exec(struct docker *d, const char *gateway, const char *user,
    const char *method, const char *target, const char *req_body,
    char **body, struct errbuf *e);
/* gwctl_exec with an optional bearer (NULL: none): `ares-lab gwctl
 * --bearer TOKEN METHOD TARGET [BODY]`.  Refused before any exec (-1 + e):
 * a method not of 1..16 capital letters, a bearer not of
 * 1..GWCTL_BEARER_MAX printable bytes without blanks (the client refuses
 * both too, and a target or body it does not take: exit 2). */
int gwctl_exec_auth(struct docker *d, const char *gateway, const char *user,
    const char *method, const char *target, const char *bearer,
    const char *req_body, char **body, struct errbuf *e);
#define GWCTL_BEARER_MAX 512
#define GWCTL_EXEC_ARGV  8
#define GWCTL_BODY_MAX   65536   /* body bytes lab_gateway_call reads */
/* Pure: the exec's argv for gwctl_exec_auth (pointers into the
 * arguments, NULL-terminated), or -1 + e on what it refuses. */
int gwctl_exec_argv(const char *method, const char *target,
    const char *bearer, const char *req_body,
    const char *argv[GWCTL_EXEC_ARGV], struct errbuf *e);
/* Status code of an HTTP/1.x status line at the start of buf: 100..599;
 * 0 when no complete line yet (and len < GWCTL_STATUS_MAX); -1 when
 * malformed (pure, unit-tested). */
int gwctl_http_status(const char *buf, size_t len);
/* ------------------------------------------------------------------ */
/* sign.c - Ed25519 signatures in minisign's format (libsodium)        */
/* ------------------------------------------------------------------ */
#define SIGN_KEYID_BYTES   8
#define SIGN_COMMENT_MAX   1024    /* trusted comment bytes (no newline) */

struct sign_pubkey {
	uint8_t keyid[SIGN_KEYID_BYTES];
	uint8_t pk[32];
	char keyid_hex[SIGN_KEYID_HEX];
};
struct sign_secret;   /* opaque, lives in sodium_malloc'd memory */
/* True when DIR/ares.key exists (any type). */
bool sign_key_exists(const char *dir);
/* Load DIR/ares.key (refused when group/world accessible).  NULL + e.
 * Free with sign_secret_free (zeroes it). */
struct sign_secret *sign_secret_load(const char *dir, struct errbuf *e);
/* sign_secret_load, generating the pair first when DIR/ares.key does not
 * exist (*created, may be NULL, tells).  NULL + e. */
struct sign_secret *sign_secret_load_or_create(const char *dir,
    bool *created, struct errbuf *e);
/* The key that signs what ares writes: sign_key_dir(flag_dir) (flag_dir
 * may be NULL), created there on first use.  NULL + e. */
struct sign_secret *sign_secret_open(const char *flag_dir, struct errbuf *e);
void sign_secret_free(struct sign_secret *sk);
const char *sign_secret_keyid(const struct sign_secret *sk);   /* hex */
/* The public half of sk. */
void sign_secret_pubkey(const struct sign_secret *sk, struct sign_pubkey *out);
/* Write sk's public key file to path (0644, replaced atomically).  -1 + e. */
int sign_pubkey_write(const struct sign_secret *sk, const char *path,
    struct errbuf *e);
/* Parse / load a public key file (bounded).  -1 + e (ERRBUF_INPUT). */
int sign_pubkey_parse(const char *buf, size_t len, const char *name,
    struct sign_pubkey *out, struct errbuf *e);
int sign_pubkey_load(const char *path, struct sign_pubkey *out,
    struct errbuf *e);
/* Sign the file at path into path.minisig with trusted_comment (at most
 * SIGN_COMMENT_MAX bytes, no control characters but tab).  -1 + e. */
int sign_file(const struct sign_secret *sk, const char *path,
    const char *trusted_comment, struct errbuf *e);
/* sign_file, then the public key as ares.pub in path's directory (so the
 * file can be checked where it lies: report, trial, probe, fix).  -1 + e. */
int sign_file_with_pub(const struct sign_secret *sk, const char *path,
    const char *trusted_comment, struct errbuf *e);
/* The "signing" object of a signed JSON file: key_id (NULL: null), the
 * format, the signature file's name, "public_key": "ares.pub".  Caller
 * deletes. */
cJSON *sign_json(const char *key_id, const char *signature);
/* BLAKE2b of a whole file (streamed; outlen 16..64), *bytes (may be NULL)
 * gets its size.  -1 + e (ERRBUF_INPUT when missing or not a regular file). */
int sign_hash_file(const char *path, uint8_t *out, size_t outlen,
    uint64_t *bytes, struct errbuf *e);
/* Verify the file at path against the signature file sig_path (NULL:
 * path.minisig) and the public key pk.  0 when valid: trusted_out (if
 * non-NULL, trusted_len >= SIGN_COMMENT_MAX + 1 advised) gets the trusted
 * comment.  -1 + e with the reason otherwise (ERRBUF_INPUT). */
int sign_verify(const struct sign_pubkey *pk, const char *path,
    const char *sig_path, char *trusted_out, size_t trusted_len,
    struct errbuf *e);
/* Same with the public key read from pubkey_path. */
int sign_verify_file(const char *pubkey_path, const char *path,
    const char *sig_path, char *trusted_out, size_t trusted_len,
    struct errbuf *e);
/* ------------------------------------------------------------------ */
/* report.c - report.json / report.md, signed; ares verify's checks    */
/* ------------------------------------------------------------------ */
#define REPORT_FORMAT       "ares-report-v1"
#define REPORT_JSON_MAX     (1024 * 1024)   /* verify bound */

/* Write RUN_DIR/report.md and RUN_DIR/report.json (r->run_dir) and, when
 * sk is non-NULL, RUN_DIR/report.json.minisig and RUN_DIR/ares.pub.  The
 * trusted comment is "ares-report-v1 run=<id> <path>=<entries>:<head> ..."
 * (at most SIGN_COMMENT_MAX bytes: about 9 chains).  -1 + e. */
int report_write(const struct drill_result *r,
    const struct report_chain *chains, size_t nchains,
    const struct sign_secret *sk, struct errbuf *e);
/* Add r's counts to j as report.json and drill.json both state them: the
 * times to kill and to the first lever, agent steps, breaches, leaks and
 * their bytes, blocked, in flight, and the channels. */
void report_json_counts(cJSON *j, const struct drill_result *r);
/* RUN_DIR/report.json (at most REPORT_JSON_MAX bytes, never through a
 * link) and its BLAKE2b-256 in hex, as a trial or a fix records it.  The
 * text (caller frees; *len its length), or NULL + e. */
char *report_json_read_hashed(const char *run_dir,
    char hex[EVIDENCE_HEX_BYTES], size_t *len, struct errbuf *e);
/* A run id as the evidence chain accepts it: 1..127 of 0x21..0x7e other
 * than '"' and '\\'. */
bool report_run_id_ok(const char *s);
/* Parse and validate a signed "chains" array ({name, path, entries, head};
 * at most REPORT_MAX_CHAINS; paths unique, relative, no ".."); empty only
 * when allow_empty.  0, or -1 with why (names the element and field). */
int report_anchors_parse(const cJSON *chains, bool allow_empty,
    struct report_anchors *out, char *why, size_t whylen);
/* The first checks of every verify: dir is a directory, the public key
 * (pub_path pinned, else DIR/ares.pub) and the signature of DIR/name
 * (DIR/name.minisig).  Initialises res (key_id, pinned, one "signature"
 * check).  1 when the signature is valid (tc gets the trusted comment), 0
 * when not (a failed check), -1 + e when dir is not a directory or
 * pub_path cannot be used (usage errors). */
int report_verify_signature(const char *dir, const char *name,
    const char *pub_path, struct report_verify_result *res, char *tc,
    size_t tclen, struct errbuf *e);
/* Append one check to res (name, ok, bad line or 0, reason; the text is
 * formatted, then sanitized).  Returns it (owned by res). */
struct report_check *report_check_add(struct report_verify_result *res,
    const char *name, bool ok, size_t line, const char *reason,
    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Verify the chain RUN_DIR/c->path (its genesis must name run_id), then its
 * entry count and head against the signed anchor c; one check
 * "chain:<path>" in res (appended or cut-off lines and a rewritten head
 * each fail with the line they concern). */
void report_check_chain(const char *run_dir, const char *run_id,
    const struct report_chain *c, struct report_verify_result *res);
/* ------------------------------------------------------------------ */
/* stats.c - exact binomial intervals (Clopper-Pearson), order stats   */
/* ------------------------------------------------------------------ */
/* Regularised incomplete beta I_x(a, b); a, b > 0, 0 <= x <= 1, else NaN. */
double stats_betainc(double a, double b, double x);
/* The x with I_x(a, b) = p (0 <= p <= 1), else NaN. */
double stats_betainc_inv(double a, double b, double p);
/* Sort ascending in place. */
void stats_sort(double *v, size_t n);
/* Median of sorted values (mean of the middle two when n is even); NaN
 * when n = 0. */
double stats_median(const double *sorted, size_t n);
/* Nearest-rank percentile: the ceil(q n)-th smallest (0 < q <= 1); NaN
 * when n = 0. */
double stats_percentile(const double *sorted, size_t n, double q);
/* ------------------------------------------------------------------ */
/* trial.c - N drills, J at a time, one signed trial.json              */
/* ------------------------------------------------------------------ */
#define TRIAL_FORMAT    "ares-trial-v1"
#define TRIAL_FORMAT_V2 "ares-trial-v2"   /* --engine: engines, attempts */
/* the reason of a failed attempt whose engine did not answer a ping */
#define TRIAL_PING_LOST "the engine does not answer a ping: "
#define TRIAL_JSON_MAX  (16 * 1024 * 1024)   /* read bound */

/* The i-th output of a splitmix64 generator seeded with base:
 * z = base + (i + 1) * 0x9E3779B97F4A7C15, then splitmix64's mixer. */
uint64_t trial_seed(uint64_t base, size_t index);
/* trial_engines.c - the scheduler's pure part (docs/trial.md#engines).
 * trial_sched_next: the run engine takes next (the lowest index neither
 * done nor taken), -1 when none or when stop or the engine is down.
 * trial_sched_engine_lost: whether a drill that ended (rc, its errbuf
 * code, its engine_lost, an error verdict) lost its engine rather than
 * failed on its own: never for a verdict other than error (a result,
 * even with engine_lost); else unreachable, engine.lost, or an error
 * after which the engine no longer answers (engine_answers: a ping).
 * trial_sched_engine_down: mark engine down with reason (the first
 * reason kept); no new run starts there.
 * trial_sched_requeue: run's attempt on engine failed with the engine
 * (run_id its run dir, "" none): a failed attempt recorded on the run
 * (at most TRIAL_MAX_ATTEMPTS kept), the run taken by no one (another
 * engine runs it), the engine marked down with reason.
 * trial_sched_up: engines still up (with a URL).
 * trial_sched_strand: no engine left: the runs not done stay not done
 * (their attempts kept; --resume runs them), t->stopped says why ("no
 * healthy engine left (...)"); returns how many. */
long trial_sched_next(const struct trial *t, const bool *taken,
    size_t engine, bool stop);
bool trial_sched_engine_lost(int rc, int err_code, bool drill_engine_lost,
    bool verdict_error, bool engine_answers);
void trial_sched_engine_down(struct trial *t, size_t engine,
    const char *reason);
void trial_sched_requeue(struct trial *t, bool *taken, size_t engine,
    struct trial_run *run, const char *run_id, const char *reason);
size_t trial_sched_up(const struct trial *t);
/* trial_engines_same: engine k has the engine_id (GET /info ID) of an
 * earlier engine: the same daemon under two spellings.  -1 + e
 * (ERRBUF_INPUT, naming both), else 0. */
int trial_engines_same(const struct trial *t, size_t k, struct errbuf *e);
size_t trial_sched_strand(struct trial *t);
/* ------------------------------------------------------------------ */
/* probe*.c - inside-out escape probes: battery, report, negative control */
/* ------------------------------------------------------------------ */
#define PROBE_FORMAT        "ares-probe-v1"
#define PROBE_NC_FORMAT     "ares-probe-negative-v1"
#define PROBE_OUTSIDE_IP    "203.0.113.1"     /* TEST-NET-3: never routed */
#define PROBE_WELLKNOWN     "api.openai.com"
/* Pure: fill c from the text of lab.json (bounded, validated: ids hex,
 * IPs dotted, names [A-Za-z0-9._-]).  -1 + e (ERRBUF_INPUT). */
int probe_ctx_parse(const char *json, size_t len, const char *run_dir,
    struct probe_ctx *c, struct errbuf *e);
/* The row named id, or NULL. */
const struct probe_row *probe_find(const char *id);
/* Whether row detects flaw (the catalogue's probes of flaw name it). */
bool probe_row_has_flaw(const struct probe_row *row, const char *flaw);
/* Pure: evaluate one row (row->eval, then the observed text is sanitized;
 * an evaluator that wrote nothing gets "(no output)"). */
void probe_evaluate(const struct probe_row *row, const struct probe_ctx *c,
    const struct probe_exec *x, struct probe_result *out);

/*
 * The battery's own evidence: RUN_DIR/probe.jsonl, a hash-chained file
 * (docs/evidence.md, genesis run id = the lab's) with the facts the
 * evaluators use ("probe.start") and, per row, its raw result
 * ("probe.row": exit code and sizes, then "probe.data" lines of base64;
 * each stream at most PROBE_EXEC_MAX bytes, the real key replaced by
 * PROBE_REDACTED).  Each row is evaluated on exactly what is recorded, so
 * ares verify re-runs the same evaluator and must get the same verdict.
 */
#define PROBE_OBS_FILE   "probe.jsonl"
#define PROBE_OBS_MAX    (16 * 1024 * 1024)   /* verify read bound */
#define PROBE_REDACTED   "@ares-real-key@"
/* Create RUN_DIR/probe.jsonl (c->run_dir; an earlier battery's file is
 * replaced) and record the facts and only_flaw (may be NULL).  NULL + e. */
struct evidence *probe_obs_open(const struct probe_ctx *c,
    const char *only_flaw, struct errbuf *e);
/* Record row's raw result x (bounded, redacted) in ev and evaluate the
 * recorded copy into res (probe_evaluate); x NULL: the row did not run
 * (res already an ERROR; its observed text is recorded).  ev NULL: only
 * evaluate.  res->obs_seq gets the row's line (0 when not recorded). */
void probe_obs_row(struct evidence *ev, const struct probe_ctx *c,
    const struct probe_row *row, const struct probe_exec *x,
    struct probe_result *res);
/* Close ev (may be NULL: nothing was recorded) into r's obs_* fields. */
void probe_obs_close(struct evidence *ev, struct probe_report *r);
/* After the lab is torn down (its sensors have stopped writing): verify
 * every sensor chain in RUN_DIR/evidence/ and record its count and head in
 * r->chains (r->anchored).  A chain that does not verify sets
 * r->chain_failed and r->anchor_note.  0, or -1 + e when the evidence
 * directory cannot be read. */
int probe_anchor_chains(struct probe_report *r, struct errbuf *e);
/* "held", "failed" or "cancelled" (a cancelled battery is never "held"). */
const char *probe_result_name(const struct probe_report *r);
/* Whether a row that detects flaw FAILed (an ERROR is not a sighting). */
bool probe_saw_flaw(const struct probe_report *r, const char *flaw);
/* XML-escape s for text and attribute values.  Caller frees. */
char *probe_xml_escape(const char *s);
extern const struct probe_nc_weakening probe_nc_weakenings[];
/* ------------------------------------------------------------------ */
/* core/probe*.c: shared between the probe files, not for callers      */
/* ------------------------------------------------------------------ */
/*
 * probe.c the rows and probe_table, probe_facts.c the lab's facts,
 * probe_obs.c the battery's own evidence (PROBE_OBS_FILE), probe_run.c the
 * battery and a lab for probing, probe_out.c the table, JSON and JUnit,
 * probe_verify.c signing, anchoring and ares verify, probe_control.c the
 * negative control.
 */
#define PROBE_EXEC_MAX     (64 * 1024)   /* stdout/stderr kept per row */

/* Append formatted text to obs (bounded, always NUL-terminated). */
void probe_cat(char *obs, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Validators for facts that go into shell scripts: a dotted IPv4, a name
 * of [A-Za-z0-9._-] shorter than max (not starting with '-'), lower-case
 * hex of min..max digits. */
bool probe_is_ipv4(const char *s);
bool probe_is_name(const char *s, size_t max);
bool probe_is_hex(const char *s, size_t min, size_t max);

/* Copy a validated string member of o into out.  -1 when absent/bad. */
int probe_json_str(const cJSON *o, const char *key, char *out,
    size_t outlen);

/* PROBE_OBS_FILE read back (ares verify). */
/* One recorded row. */
struct probe_obs_rec {
	char row[32];
	size_t seq;
	bool ran;
	int exit_code;
	char *buf[3];              /* out, err, host (NUL-terminated) */
	size_t len[3], want[3];
	bool has_host;
	char observed[PROBE_OBSERVED_MAX];   /* a row that did not run */
};
struct probe_obs_read {
	struct probe_ctx ctx;      /* the recorded facts */
	bool only_flaw_set;
	char only_flaw[32];
	struct probe_obs_rec recs[PROBE_MAX_ROWS];
	size_t nrecs;
};
/* Free what probe_obs_parse allocated in o (the streams are zeroed). */
void probe_obs_read_free(struct probe_obs_read *o);
/* Parse the verified chain text buf (lines) into o: the facts, then every
 * recorded row with its streams reassembled.  0, or -1 with why naming
 * the line.  Free o with probe_obs_read_free either way. */
int probe_obs_parse(const char *buf, size_t len, struct probe_obs_read *o,
    char *why, size_t whylen);
/* Evaluate the recorded row rec of row again (the same pure evaluator the
 * battery ran, on the same bytes) into res. */
void probe_obs_eval(const struct probe_obs_read *o,
    const struct probe_row *row, const struct probe_obs_rec *rec,
    struct probe_result *res);

/* Whether *cancel asks to stop (NULL: never). */
bool probe_cancelled(const volatile sig_atomic_t *cancel);

/* A row's result in JSON and JUnit: "pass", "fail", "warn" (a non-core
 * failure) or "error". */
const char *probe_result_word(const struct probe_result *res);
/* One JUnit <testcase> to f; kind NULL when it passed, else "failure" or
 * "error" with message and body.  Text is sanitized then XML-escaped. */
void probe_junit_case(FILE *f, const char *cls, const char *name,
    double secs, const char *kind, const char *message, const char *body);

/* Whether the negative control saw its item in r: the baseline ("") held,
 * a flaw failed a row that detects it, a weakening failed its row. */
bool probe_nc_seen(const struct probe_report *r, const char *item);

/* ------------------------------------------------------------------ */
/* replay.c - a recorded run as a timeline of beats (no Docker)        */
/* ------------------------------------------------------------------ */
#define REPLAY_MAX_BYTES   (32u * 1024 * 1024)  /* evidence.jsonl read */
#define REPLAY_MAX_LINES   20000                /* lines turned into beats */
#define REPLAY_MAX_BEATS   32768
/* The channel named s, or -1 (NULL, "" or unknown). */
int replay_channel_parse(const char *s);
/* The channel of a sensor by its src, docs/scoring.md's table: gateway
 * model, dockerproxy docker, control-plane:inotify file, anything else
 * (service-*, dns, sink, unknown) network. */
int replay_channel_of_src(const char *src);
/* Whether beat i is a marker (bait, lever, breach, leak, orphan, verdict). */
bool replay_is_marker(const struct replay *rp, size_t i);
/* ------------------------------------------------------------------ */
/* fix.c - the fix loop: attribute, patch, rerun, held-out, propose    */
/* ------------------------------------------------------------------ */
struct fix_attribution {
	struct fix_hit hits[FIX_MAX_HITS];  /* breakout first, then by line */
	size_t nhits;
	bool breakout;                      /* some hit is on the breakout path */
	char off[FIX_MAX_HITS][48];         /* flaws with evidence that were
	                                       off in the policy (ignored) */
	size_t noff;
};
/*
 * Pure: which of flaws_on the evidence lines (a cJSON array of parsed
 * lines of any chain: master "sensor" lines, sensor-chain lines, "orphan"
 * lines) prove were used.  Only flaws in flaws_on are attributed; matches
 * of other flaws go to out->off.  Returns out->nhits, -1 if lines is not
 * an array.
 */
int fix_attribute(const cJSON *lines, const char *const *flaws_on,
    size_t nflaws_on, struct fix_attribution *out);
/* Every line of RUN_DIR/evidence.jsonl then RUN_DIR/evidence/ *.jsonl,
 * parsed (bounded).  NULL + e.  Caller deletes. */
cJSON *fix_load_evidence(const char *run_dir, struct errbuf *e);
/* What a run's master chain says about it. */
struct fix_run_info {
	char run_id[64];
	char policy[1024];      /* drill.start policy (path as given) */
	char variant[40];
	uint64_t seed;
	char flaws[POLICY_MAX_FLAWS][48];   /* lab.up flaws */
	size_t nflaws;
	char verdict[32];
};
/* From parsed lines: 0, or -1 when drill.start, lab.up or verdict lack. */
int fix_run_info(const cJSON *lines, struct fix_run_info *info);

/* Minimal YAML text edits (comments and layout kept; caller frees and
 * re-parses): remove flaw from flaws: (flow or block sequence); set
 * variant: (added when absent) and map each bait id to the new variant's
 * bait of the same kind.  NULL + e. */
char *fix_policy_remove_flaw(const char *buf, size_t len, const char *flaw,
    struct errbuf *e);
char *fix_policy_set_variant(const char *buf, size_t len,
    const char *variant, struct errbuf *e);
/* buf on the variant generated from seed ("variant: generated",
 * "variant_seed: SEED", each bait item as its kind name).  NULL + e. */
char *fix_policy_set_generated(const char *buf, size_t len, uint64_t seed,
    struct errbuf *e);
/* buf (the text p was parsed from) with the paths p resolved relative to
 * its file made absolute (agent.script), for a copy elsewhere.  Caller
 * frees; NULL + e. */
char *fix_policy_pin_paths(const char *buf, size_t len,
    const struct policy *p, struct errbuf *e);
/* The Compose file's side of a fix (core/fix_compose.c).  An entry to
 * cut: import_row's 1-based span and key path. */
struct fix_span {
	size_t line, col, end_line;
	char key[128];
};
/* text without the entries (whole lines: a sequence item, a mapping
 * entry, with their deeper lines; a sequence left empty loses its bare
 * key), or NULL with why (an absent key, an entry sharing its line with
 * others).  Caller frees. */
char *fix_compose_remove(const char *text, const struct fix_span *spans,
    size_t nspans, char *why, size_t whylen);
/* Cut the entries of service that cur_path (whose text is cur_text) maps
 * to flaw, write the result to out_compose, import it again (agent, the
 * policy at out_policy) and check it maps to flaw no more and to every
 * other flaw as often.  0 with *patched (the new text) and *policy_yaml
 * (the re-import's policy), caller frees; -1 with why. */
int fix_compose_patch(const char *cur_path, const char *cur_text,
    const char *service, const char *flaw, const char *agent,
    const char *out_compose, const char *out_policy, char **patched,
    char **policy_yaml, char *why, size_t whylen);
/* The re-imported policy text with from's name, seed, limits, observe_ms,
 * variant, bait, levers and model entries carried over.  Caller frees;
 * NULL + e. */
char *fix_policy_carry(const char *imported, const char *from,
    struct errbuf *e);
/* A one-hunk unified diff of a -> b (caller frees). */
char *fix_unified_diff(const char *a, const char *b, const char *name_a,
    const char *name_b);
/* 0 (g->in_repo false when the policy is not in a work tree), -1 + e. */
int fix_git_commit(const char *policy_path, const char *patched, size_t len,
    const char *branch, const char *message, struct fix_git_result *g,
    struct errbuf *e);
/* One file of a commit: its path (in the work tree) and new text. */
struct fix_git_file {
	const char *path;
	const char *text;
	bool committed;         /* out: it is in the commit */
};
/* The files as one commit on a new branch (the first locates the work
 * tree; others outside it are left out).  0, -1 + e. */
int fix_git_commit_files(struct fix_git_file *files, size_t n,
    const char *branch, const char *message, struct fix_git_result *g,
    struct errbuf *e);
/* git -C top push -- remote branch; out what git said.  git's exit
 * status, -1 + e. */
int fix_git_push(const char *top, const char *remote, const char *branch,
    char *out, size_t outlen, struct errbuf *e);
/* POST {api}/repos/{owner_repo}/pulls {title, head, base, body} with
 * "Authorization: Bearer <token>" (token NULL: nothing is sent).  The
 * request (token redacted) goes to record_path (may be NULL).  *status
 * gets the HTTP status, pr_url html_url.  -1 + e (also on a non-2xx). */
int fix_github_pr(const char *api, const char *owner_repo, const char *token,
    const char *head, const char *base, const char *title, const char *body,
    const char *record_path, long *status, char *pr_url, size_t pr_url_len,
    struct errbuf *e);
/* POST {"text": text} to webhook (NULL: nothing sent); the request (URL
 * path redacted) goes to record_path.  -1 + e. */
int fix_slack_post(const char *webhook, const char *text,
    const char *record_path, long *status, struct errbuf *e);
/* Only github-request.json, with note saying why nothing was sent. */
void fix_github_pr_unsent(const char *api, const char *owner_repo,
    const char *head, const char *base, const char *title, const char *body,
    const char *record_path, const char *note);
/* text with GITHUB_TOKEN's and SLACK_BOT_TOKEN's values and URL
 * user-info replaced by "***" (caller frees). */
char *fix_redact_secrets(const char *text);
/* Slack: text made inert and bounded for a message (caller frees); a
 * channel id or name we accept; chat.postMessage {channel, text} with a
 * bot token (NULL: nothing sent), recorded without the token.  -1 + e
 * (also on a 200 {"ok": false, "error": ...}). */
#define FIX_SLACK_TEXT_MAX 3000
char *fix_slack_text(const char *text);
int fix_slack_chat_post(const char *api, const char *channel,
    const char *token, const char *text, const char *record_path,
    long *status, struct errbuf *e);
/* The model-written section (core/fix_model.c): with p->model_url, one
 * call (relay_complete) with summary; *section the labelled quoted block
 * (caller frees), 1.  0 without a model (nothing sent, *section NULL).
 * -1 with why when the call or its answer failed (no section).  The
 * request (no key) and its outcome go to record_path. */
#define FIX_MODEL_TEXT_MAX 4000   /* bytes of the model's text kept */
int fix_model_section(const struct policy *p, const char *summary,
    const char *record_path, char **section, char *why, size_t whylen);
/* Untrusted model text as an inert quoted Markdown block, or NULL when
 * nothing printable is left (caller frees). */
char *fix_model_render(const char *content, size_t len);
/* The pull-request title and Markdown body (caller frees). */
char *fix_pr_title(const struct fix_result *r);
char *fix_pr_body(const struct fix_result *r);
/* The body with the model-written section (or the one-line note saying
 * why it is missing) after the change; both NULL: fix_pr_body. */
char *fix_pr_body_x(const struct fix_result *r, const char *section,
    const char *note);
/* ------------------------------------------------------------------ */
/* fix internals: shared by fix*.c, not for other callers              */
/* ------------------------------------------------------------------ */
#define FIX_FILE_MAX       (16u * 1024 * 1024)  /* a run's evidence files,
                                                   all together */

/* ------------------------------------------------------------------ */
/* score.c - the one scorer: a run's chains -> its verdict             */
/* ------------------------------------------------------------------ */
const char *score_channel_name(enum score_channel c);   /* "model", ... */
/*
 * The boundary rule (docs/scoring.md), for the scorer and the drill's live
 * beats alike: the cut-off t0 is the earliest verified lever that cuts the
 * agent off; channel k's boundary is t0, or the earliest verified lever
 * that cuts k when that came later; 0 without a cut-off.  Start from
 * { 0 }, score_cuts_add each verified lever (idx is the caller's; on a tie
 * the first added wins), then score_cuts_close.
 */
struct score_cuts {
	uint64_t t0;                       /* 0: nothing cut the agent off */
	size_t t0_idx;
	uint64_t cut_ns[SCORE_CH_N];       /* 0: no verified lever cuts it */
	size_t cut_idx[SCORE_CH_N];
	uint64_t boundary_ns[SCORE_CH_N];  /* after score_cuts_close */
};
void score_cuts_add(struct score_cuts *cu, size_t idx, bool cuts_off,
    unsigned cuts, uint64_t verified_ns);
void score_cuts_close(struct score_cuts *cu);
/* The name of a verdict (enum drill_verdict, declared below): "contained",
 * "breached", "not-exercised", "error"; "none" for anything else. */
const char *score_verdict_name(int verdict);
/* The channel of a sensor's events (by its src), and whether an event
 * kind is an agent action (docs/scoring.md "Agent actions"). */
enum score_channel score_channel_of(const char *src);
bool score_is_agent_kind(const char *kind);

#define SCORE_MASTER_MAX   (32u << 20)   /* bytes of evidence.jsonl read */
#define SCORE_CHAINS_MAX   (128u << 20)  /* bytes of all sensor chains */

/* Reads a RUN_DIR-relative chain path for score_compute: returns the
 * bytes (NUL-terminated, caller frees) or NULL + e. */
typedef char *(*score_read_fn)(void *ctx, const char *path, size_t max,
    size_t *len, struct errbuf *e);
/*
 * Score the master chain text (mlen bytes) and the sensor chains its
 * "chain" lines name, fetched through read.  Lines of type "verdict" and
 * "bus.reconcile" are ignored (they are the output).  Returns 0 with out
 * filled (a chain that cannot be read is an error *in* the score), -1 +
 * e only when the master text holds no genesis line.
 */
int score_compute(const char *master, size_t mlen, score_read_fn read,
    void *ctx, struct score *out, struct errbuf *e);
/* score_compute on RUN_DIR/evidence.jsonl and RUN_DIR/evidence/ (no
 * symlinks followed).  -1 + e when evidence.jsonl cannot be read. */
int score_run_dir(const char *run_dir, struct score *out, struct errbuf *e);
/* The same with evidence.jsonl's bytes already read (master, mlen): the
 * sensor chains are read from RUN_DIR/evidence/. */
int score_run_buf(const char *run_dir, const char *master, size_t mlen,
    struct score *out, struct errbuf *e);
/* The channels and the bus reconciliation as JSON (drill.json,
 * report.json, the verdict line).  Caller deletes. */
cJSON *score_channels_json(const struct score *s);
cJSON *score_bus_json(const struct score *s);
/*
 * Compare what a document (report.json, drill.json: parsed JSON j; label
 * names it in messages) claims with the score.  Returns 0 when every
 * field of docs/scoring.md "What is compared" agrees, else -1 with why
 * naming the field, both values and the evidence line that decides it.
 */
int score_check_json(const struct score *s, const cJSON *j,
    const char *label, char *why, size_t whylen);
/* Same for the master chain's "verdict" line (fields of that line). */
int score_check_verdict_line(const struct score *s, const cJSON *line,
    char *why, size_t whylen);
/* ------------------------------------------------------------------ */
/* drill.c - one drill: up, run, bait, levers, observe, teardown       */
/* ------------------------------------------------------------------ */
/* Make r say what the chains say (score.c): the score, and from it the
 * verdict, reason, bait, times, counts and orphans. */
void drill_result_from_score(struct drill_result *r, const struct score *sc);
/* The members of the master chain's "verdict" line for r (caller
 * deletes). */
cJSON *drill_verdict_line(const struct drill_result *r, size_t bad_datagrams);

/* ------------------------------------------------------------------ */
/* relay.c - a real model's calls, made from the host                  */
/* ------------------------------------------------------------------ */
#define RELAY_BODY_MAX  (4u * 1024 * 1024)  /* a request or an answer */
#define RELAY_META_MAX  4096                /* an answer's meta JSON */
#define RELAY_CONNS     4                   /* calls at once */
#define RELAY_SOCK_NAME "relay.sock"        /* in the control folder */

struct relay_config {
	const char *url;             /* the full chat completions URL */
	const char *key;             /* the real key (copied into sodium
	                                memory), or NULL: no Authorization */
	const char *ca_file;         /* model.ca_file, or NULL */
	int connect_timeout_ms;
	int timeout_s;               /* one attempt */
	int retries;                 /* further attempts */
	const char *sock_path;       /* where to listen */
	long owner_uid, owner_gid;   /* the socket's owner (-1: keep) */
	const char *model;           /* model.name: every call's "model"
	                                (NULL: left as the gateway sent it) */
};
struct relay;
/* Listen on cfg->sock_path and serve the gateway's calls on a thread of
 * its own (docs/lab.md, "The model relay").  NULL + e (ERRBUF_INPUT: an
 * unreadable ca_file). */
struct relay *relay_start(const struct relay_config *cfg, struct errbuf *e);
/* Stop serving, wait for the calls in flight (they are aborted), zero
 * the key, free.  NULL is fine. */
void relay_stop(struct relay *r);
/* The chat completions URL of a model.url (core/lab.c).  Caller frees. */
char *lab_model_chat_url(const char *model_url);
/* The longest a call may take with p's model.* settings (every attempt
 * and wait), in seconds: the gateway's bound on waiting for the relay. */
int relay_call_bound_s(const struct policy *p);
/* What relay_complete got: the answer (a JSON object, caller frees). */
struct relay_answer {
	long status;                 /* HTTP status, 0 without an answer */
	int attempts;
	long latency_ms;
	char *body;
	size_t len;
};
/* One chat completions call from this process with cfg (sock_path and
 * the owner unused): the relay's timeouts, retries, bounds, model pin and
 * key check.  0, or -1 + e (see core/relay.c). */
int relay_complete(const struct relay_config *cfg, const char *body,
    size_t len, struct relay_answer *out, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* gate*.c - ares gate (core.h has the API)                            */
/* ------------------------------------------------------------------ */
/* Write GATE_DIR/gate.json (signed with the key of key_dir: g->key_id),
 * gate.md and gate.xml.  -1 + e. */
int gate_write(struct gate *g, const char *key_dir, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* compose.c - a bounded Compose file reader (core/import.c)           */
/* ------------------------------------------------------------------ */
#define COMPOSE_MAX_BYTES   (1024 * 1024)  /* file size */
#define COMPOSE_MAX_DEPTH   32      /* nesting, aliases' copies included */
#define COMPOSE_MAX_NODES   20000   /* nodes, aliases counted expanded */
#define COMPOSE_MAX_SCALAR  65536   /* bytes per scalar */
#define COMPOSE_MAX_ANCHORS 256
#define COMPOSE_MAX_MERGE   16      /* merge sources per mapping */
#define COMPOSE_PATH_MAX    256     /* rendered key path in messages */

enum cnode_kind { CN_SCALAR, CN_SEQ, CN_MAP };
struct cnode {
	enum cnode_kind kind;
	size_t line, col, end_line;  /* 1-based; an alias copy keeps the
	                                span of its anchor's node */
	char *str;                   /* scalar bytes (NUL-terminated) */
	size_t len;
	bool plain;                  /* plain style, no tag */
	bool flow;                   /* [a, b] or {a: b} */
	bool aliased;                /* copied from an anchor (alias, <<) */
	struct cnode **kids;         /* seq items; map key, value, ... */
	size_t nkids, cap;
};
/* Parse / read a Compose file (anchors, aliases and << merge keys
 * expanded, bounded).  NULL + e ("file:line:col: path: problem",
 * ERRBUF_INPUT).  compose_free() the root. */
struct cnode *compose_parse(const char *file, const char *buf, size_t len,
    struct errbuf *e);
struct cnode *compose_read(const char *path, struct errbuf *e);
void compose_free(struct cnode *n);
const struct cnode *compose_get(const struct cnode *m, const char *key);
bool compose_is_null(const struct cnode *n);
/* The one error format of compose.c and import.c.  Returns -1. */
int compose_err(struct errbuf *e, const char *file, size_t line, size_t col,
    const char *path, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* report_dirs.c: TRIAL_DIR/report.md from t (its summary computed) and
 * RUN_DIR/report.md of a probe run from r, each written after the signed
 * record it names (trial.json, probe.json; docs/report.md).  -1 + e. */
int report_trial_md(const struct trial *t, struct errbuf *e);
int report_probe_md(const struct probe_report *r, struct errbuf *e);

#endif /* DRILL_INTERNAL_H */
