/*
 * core.h - the public face of ares' core layer (libdrill): what the console
 * and the commands (tui/) call, and the types those calls take.
 * core/internal.h holds the rest: what core's files share among themselves
 * and the seams the tests, fuzzers and benches reach.  leakbox/ and sprites/
 * include only core/util.h (and core/evidence.h).
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
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include <cJSON.h>

#include "util.h"       /* util.c: errors, allocation, util_* */
#include "evidence.h"   /* evidence.c: hash-chained JSONL */

/* ------------------------------------------------------------------ */
/* docker.c - Docker Engine API client (unix socket, TLS, ssh)        */
/* ------------------------------------------------------------------ */

struct docker;   /* one connection (curl handle); not thread-safe: one per thread */
void docker_close(struct docker *d);
/* docker_open + docker_negotiate: a client ready to use, or NULL + e
 * (nothing left open).  Free with docker_close. */
struct docker *docker_connect(const char *host, struct errbuf *e);
/* Which engine, and how (ares trial --engine / --engines): host a
 * DOCKER_HOST value (NULL: $DOCKER_HOST, else the local socket), what
 * names it in messages (NULL: "docker host"), cert_path a directory with
 * ca.pem, cert.pem, key.pem that turns TLS on for tcp:// (NULL: the
 * DOCKER_TLS_VERIFY / DOCKER_CERT_PATH rule; docs/engine.md). */
struct docker_endpoint {
	const char *host;
	const char *what;
	const char *cert_path;
};
/* docker_connect for an endpoint (the strings are copied). */
struct docker *docker_connect_at(const struct docker_endpoint *ep,
    struct errbuf *e);
const char *docker_api_version(const struct docker *d);  /* "1.41" */
const char *docker_engine_version(const struct docker *d); /* "20.10.24" */
/* The transport's name for people: "unix", "tcp+tls", "tcp (plaintext)",
 * "ssh"; and where it leads (the socket path, tcp://H:P, the ssh:// URL). */
const char *docker_transport_name(const struct docker *d);
const char *docker_where(const struct docker *d);
/* TLS files in use (NULL when not TLS). */
const char *docker_tls_ca(const struct docker *d);
const char *docker_tls_cert(const struct docker *d);
/* Is d's engine remote (anything but a local unix socket)? */
bool docker_is_remote(const struct docker *d);
/* Is s an engine object Id as ares uses one (in a request path, a host
 * path, a file name): exactly 64 lowercase hex digits?  An answer's Id
 * that is not is refused (docs/engine.md). */
bool docker_id_valid(const char *s);
/*
 * Refuse what needs the local engine (host bind mounts, the host kernel)
 * when DOCKER_HOST names a remote engine, before anything is made: 0 when
 * local, else -1 + e (ERRBUF_INPUT, "remote engine (HOST): <what> needs
 * <needs>; local engine only"; also a DOCKER_HOST that does not parse).
 * what is e.g. "ares drill"; needs NULL means DOCKER_NEEDS_HOST.
 * docker_require_local_d: the same for an open client.
 */
#define DOCKER_NEEDS_HOST "host bind mounts (bus, control and evidence " \
	"folders) and the host kernel (kernel levers)"
int docker_require_local(const char *what, const char *needs,
    struct errbuf *e);
/* Does DOCKER_HOST (the environment's, before any client is open) name a
 * remote engine (tcp://, ssh://)?  1 remote, 0 local (unset, empty,
 * unix://), -1 + e when it does not parse; *host (may be NULL) the
 * value, NULL when unset or empty. */
int docker_env_remote(const char **host, struct errbuf *e);
int docker_require_local_d(const struct docker *d, const char *what,
    struct errbuf *e);
/* Is d's engine Podman (known after negotiation: /version's Components)? */
bool docker_is_podman(const struct docker *d);
/* Can a lab be built on d: not Podman (its compat API cannot give the
 * sealed bridges a lab needs; docs/engine.md).  A remote engine passes:
 * what a lab there cannot have is lab_remote_check's.  0, or -1 + e
 * (ERRBUF_INPUT). */
int docker_require_labs(const struct docker *d, const char *what,
    struct errbuf *e);
/* Up front, before anything is made (no run directory): when DOCKER_HOST
 * names a remote engine, refuse what of the policy at path a lab there
 * cannot have (lab_remote_check, core/lab_remote.c: a flaw or option that
 * needs this machine's paths; model_url, when not NULL, is the command's
 * --model-url, which overrides the policy's).  0 when the engine is local, path is NULL
 * or nothing is refused; -1 + e (ERRBUF_INPUT "remote engine (HOST): flaw
 * X needs ...; local engine only", a DOCKER_HOST that does not parse, or
 * policy_load's error). */
int lab_remote_policy_check(const char *path, const char *model_url,
    struct errbuf *e);

/* GET /containers/json?all=1&filters={"label":["ares.run=<id>"]} and
 * GET /networks?filters=...: arrays (caller cJSON_Delete()s). */
cJSON *docker_containers_by_label(struct docker *d, const char *label,
    struct errbuf *e);
cJSON *docker_networks_by_label(struct docker *d, const char *label,
    struct errbuf *e);
/* GET /images/json filtered by label ("k=v"): an array (caller deletes),
 * NULL + e. */
cJSON *docker_images_by_label(struct docker *d, const char *label,
    struct errbuf *e);
/* Volumes (a lab on a remote engine: the agent's home and script,
 * docs/engine.md).  A named local volume labelled ares.run, ares.role,
 * ares.owner (gc_owner() when NULL and run_id is set), ares.lease. */
struct docker_volume_spec {
	const char *name;
	const char *run_id;
	const char *role;
	const char *owner;
	const char *lease;
};
/* Pure: the POST /volumes/create body.  Caller cJSON_Delete()s. */
cJSON *docker_volume_config(const struct docker_volume_spec *spec);
/* Create it, new: GET /volumes/{name} must answer 404 (a volume of that
 * name is refused, never adopted: the engine's create answers with an
 * existing one as if made), then the create carries a fresh random label
 * ares.nonce that its answer must show (one made by someone else between
 * the look and the create has not got it).  0, or -1 + e (ERRBUF_INTERNAL
 * "... exists already (not made by this run)" or "... answered with
 * another volume"). */
int docker_volume_create(struct docker *d, const struct docker_volume_spec *spec,
    struct errbuf *e);
/* DELETE /volumes/{name} (force: ?force=1).  -1 + e (409 while a
 * container uses it). */
int docker_volume_remove(struct docker *d, const char *name, bool force,
    struct errbuf *e);
/* GET /volumes?filters={"label":[label]}: the "Volumes" array (an empty
 * one for null), caller cJSON_Delete()s.  NULL + e. */
cJSON *docker_volumes_by_label(struct docker *d, const char *label,
    struct errbuf *e);

/* ------------------------------------------------------------------ */
/* policy.c - the drill policy (one YAML file, libyaml)                */
/* ------------------------------------------------------------------ */
/*
 * Schema in docs/policy.md.  Errors name "file:line:col: key: problem" and
 * carry ERRBUF_INPUT.  Unknown keys, wrong types, aliases, duplicate keys,
 * documents deeper than POLICY_MAX_DEPTH or larger than POLICY_MAX_BYTES are
 * rejected.
 */
#define POLICY_MAX_LEVERS  8
#define POLICY_MAX_BAIT    8
#define POLICY_MAX_FLAWS   16

/* Agent kinds (policy key agent.kind; docs/agents.md). */
enum policy_agent_kind {
	POLICY_AGENT_POYO = 0,       /* the built-in loop, /bin/ares-lab agent */
	POLICY_AGENT_SCRIPT,         /* a scripted attacker (agent.script) */
	POLICY_AGENT_IMAGE,          /* a user's own image (agent.image) */
};

#define POLICY_AGENT_ARGV_MAX  64    /* agent.command items */
#define POLICY_AGENT_ENV_MAX   32    /* agent.env variables */

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
	char *model_key_env;         /* env var holding the real key, or NULL */
	enum policy_agent_kind agent_kind;  /* agent.kind, POYO by default */
	/* agent.script (kind SCRIPT only, else NULL / 0 / ""): the canonical
	 * absolute path (directories resolved with realpath, the file itself
	 * not a symlink), its bytes as read at load time (NUL-terminated;
	 * what the lab should run, so a later change of the file cannot
	 * slip into a run) and their BLAKE2b-256 in hex. */
	char *agent_script;
	char *agent_script_text;
	size_t agent_script_len;
	char agent_script_blake2b[EVIDENCE_HEX_BYTES];
	/* A real model.url's call, made from the host (core/relay.c): */
	char *model_ca_file;         /* model.ca_file: extra CA bundle, or NULL */
	int model_connect_timeout_ms;   /* 100..60000, default 5000 */
	int model_timeout_s;         /* one attempt's bound, 1..600 (120) */
	int model_retries;           /* further attempts, 0..10 (3) */
	int model_context_budget;    /* Poyo's history bound in bytes,
	                                4096..1048576 (262144) */
	/* kind IMAGE only (else NULL / 0; docs/agents.md): the local image
	 * reference (never pulled), the argv ({task} still unexpanded; none:
	 * the image's own entrypoint and command), NAME=value pairs, the
	 * non-root "uid[:gid]" (NULL: the lab's 65532), the workdir (NULL:
	 * the home) and the home where the bait is planted. */
	char *agent_image;
	char *agent_command[POLICY_AGENT_ARGV_MAX];
	size_t agent_ncommand;
	char *agent_env[POLICY_AGENT_ENV_MAX];     /* "NAME=value" */
	size_t agent_nenv;
	char *agent_user;
	char *agent_workdir;
	char *agent_home;                          /* "/home/poyo" default */
	char *runtime;               /* runtime: the agent's container runtime
	                                ("runsc"), NULL: the engine's default */
	/* imported: where an imported policy came from (ares policy import,
	 * docs/import.md), else NULL: the Compose file (resolved absolute
	 * path; written relative to the policy's folder) and its service,
	 * or the container. */
	char *import_compose;
	char *import_service;
	char *import_container;
	/* variant: generated / variant: FILE.yaml (docs/policy.md) */
	uint64_t variant_seed;       /* variant_seed: (generated) */
	bool variant_seed_set;       /* else the run's seed */
	char *variant_file;          /* FILE.yaml resolved against the
	                                policy's folder, or NULL */
};

/* Load and validate a policy file.  NULL + e (ERRBUF_INPUT). */
struct policy *policy_load(const char *path, struct errbuf *e);
void policy_free(struct policy *p);
bool policy_has_flaw(const struct policy *p, const char *flaw);

/* ------------------------------------------------------------------ */
/* lab.c - the leakbox through the Engine API                         */
/* ------------------------------------------------------------------ */

struct lab_container {
	char *id;
	char *name;
	const char *role;   /* its role in lab_roles[] (core/lab_roles.c):
	                       "agent", "gateway", "service", "model", ... */
};

#define LAB_CHAINS_MAX 8
#define LAB_NROLES       9      /* the lab's roles (core/lab_roles.c) */
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

	/* Added with the complete leakbox (docs/lab.md, docs/flaws.md).
	 * Containers that a policy does not need have id == NULL. */
	struct lab_container dns, sink, dockerproxy;
	char *net_wan;                /* network id (Internal) */
	char *variant;                /* variant id */
	char *evidence_dir;           /* RUN_DIR/evidence (sensor chains) */
	char *dns_ip;                 /* the dns container's IP on lab */
	char *sink_ip;                /* the sink's IP on wan */
	bool agent_idle;              /* AGENT_IDLE=1: the agent sleeps */
	/* Bait planted for this run (NULL when the policy does not plant it). */
	char *credential_bait;        /* decoy token used at the service */
	char *instruction_bait;       /* request to the decoy endpoint */
	char *tripwire_bait;          /* the planted file below */
	char *tripwire_path;          /* absolute host path of the tripwire
	                                 file (inside RUN_DIR/agent-home): the
	                                 control plane watches it (inotify) */
	char *chains[LAB_CHAINS_MAX]; /* the sensors' chains, relative to
	                                 RUN_DIR ("evidence/gateway.jsonl") */
	size_t nchains;
	char *host_seal;              /* how the host's ports are sealed off
	                                 (core/hostfw.c), in words */
	char *privileged_degraded;    /* how flaw privileged was realised as
	                                 all-capabilities (NULL: it was not) */
	char *lease_path;             /* RUN_DIR/lab.lease (absolute) when
	                                 lab_options.lease, else NULL */
	struct relay *relay;          /* a real model.url's host relay
	                                 (core/relay.c), stopped by lab_free;
	                                 else NULL */
	char *relay_path;             /* its socket (the control folder) */
	/* agent kind image (core/agent_image.c; else NULL): the engine's
	 * answer for agent.image, looked up before anything is created. */
	char *agent_image_id;         /* "sha256:..." */
	char *agent_image_digests;    /* RepoDigests joined with ", ", or
	                                 "none: a local build" */
	char *agent_helper;           /* in-container folder of the probe
	                                 helper (idle labs), or NULL */
	char *runtime;                /* the agent's runtime as checked against
	                                 the engine ("runsc", "runc") */
	char *runtime_default;        /* the engine's default runtime: every
	                                 other role's (core/lab_runtime.c) */
	bool runtime_sandbox;         /* the agent's runtime is not runc
	                                 (gVisor...): the host sees the
	                                 sandbox's processes, not the agent's */
	/* flaws host-pid, host-ipc (docs/flaws.md): the decoy host whose PID
	 * and IPC namespaces the agent joins, its decoy credential (the
	 * supervisor's SUPERVISOR_TOKEN, svt_<hex>) and the session token it
	 * leaves in /dev/shm (sst_<hex>, host-ipc only); else id NULL. */
	struct lab_container hostsim;
	char *hostsim_token;
	char *hostsim_shm_token;
	const struct variant *v;      /* the run's dressing (variant_for_policy;
	                                 variant_free in lab_free) */
	/* The decoys role (cloud, ssh, git, mcp bait: docs/bait.md), its bait
	 * ids (NULL when not planted) and the planted secrets (zeroed when
	 * freed; the pair, the git token, the ssh public key line). */
	struct lab_container decoys;
	char *cloud_bait, *ssh_bait, *git_bait, *mcp_bait;
	char *cloud_key_id, *cloud_secret, *git_token, *ssh_pubkey;
	unsigned pace_ms;             /* presenter mode: the gateway holds
	                                 each model turn this long (0: off;
	                                 lab.json "pace") */
	/* A lab on a remote engine (docs/engine.md): volumes, not bind
	 * mounts; the sensors' lines come over the engine's log stream. */
	bool remote;                  /* built on a remote engine */
	const char *clock;            /* "sensor" (local engine) or "receipt"
	                                 (remote): which clock judges events
	                                 (a static string) */
	struct lab_bus_src {
		char *id;                 /* the sensor container's id */
		char *src;                /* its events' "src" (gateway, dns,
		                             sink, decoys, service:<name>) */
		unsigned char *key;       /* BUS_KEY_BYTES, sodium_malloc'd,
		                             freed (sodium_free) by lab_free */
	} bus_srcs[LAB_NROLES];
	size_t nbus_srcs;             /* filled only when remote */
	size_t pulled_files;          /* lab_evidence_pull: every file it
	                                 wrote (restart chains .rN too) */
	size_t pulled_bytes;          /* and their bytes */
};

/* The negative control's weakenings that are no flaw (no policy can ask
 * for them: they break what holds under every flaw, docs/probes.md). */
enum lab_weakening {
	LAB_WEAKEN_NONE = 0,
	LAB_WEAKEN_HOST_SEAL,     /* bridges with a host address, no host
	                             firewall */
	LAB_WEAKEN_SYS_ADMIN,     /* the agent root with CAP_SYS_ADMIN */
};
/* Options of lab_up_opts beyond the policy. */
struct lab_options {
	bool agent_idle;            /* AGENT_IDLE=1 (ares lab up, probes) */
	const char *model_url;      /* overrides policy model.url if non-NULL */
	const char *model_key_env;  /* overrides policy model.key_env */
	enum lab_weakening weaken;  /* the probes' negative control only
	                               (never from a policy) */
	bool lease;                 /* the lab outlives this process (lab up,
	                               --keep-lab): RUN_DIR/lab.lease owns
	                               its objects (ares.lease, core/gc.c) */
	unsigned pace_ms;           /* presenter mode: GATEWAY_PACE_MS, at
	                               most PACE_PRESENT_MS_MAX (0: off) */
};
/* lab_up with options (o may be NULL).  With o->agent_idle the agent is
 * started too (it sleeps; exec into it).  The real key is read from the
 * environment variable model.key_env (policy or o) and given only to the
 * offline model (MODEL_KEY) and the gateway (REAL_KEY); with a real
 * model.url the offline model is not created, the key stays in this
 * process (the host relay, core/relay.c, which the gateway reaches over
 * the control folder) and every network is internal all the same.  Writes
 * RUN_DIR/lab.json.  NULL + e. */
struct lab *lab_up_opts(struct docker *d, const struct policy *p,
    const char *run_dir, const char *run_id, uint64_t seed,
    const struct lab_options *o, struct errbuf *e);
/* Remove every container and network labelled ares.run=<run_id>, then the
 * run's host firewall rules.  Returns the number of objects removed, or
 * -1 + e if any removal failed. */
int lab_teardown(struct docker *d, const char *run_id, struct errbuf *e);
void lab_free(struct lab *lab);
/* Unlink the run's bus and control sockets once its lab is down (a run
 * dir keeps plain files only).  Returns how many were removed. */
int lab_remove_sockets(const char *run_dir, const char *run_id);

/*
 * The lab being built by lab_up_opts, as a flaw's effect sees it
 * (core/flaw.c).  Roles are named as in lab_roles[] ("agent", "gateway",
 * "service", "dns", "sink", "model", "dockerproxy"); what an effect asks
 * of a role is applied once the role's own builder has filled its spec,
 * just before the container is created.  A role name that does not exist
 * or more changes than a role can hold is a programming error (fatal).
 */
struct lab_build;

/* ------------------------------------------------------------------ */
/* flaw.c - the flaw catalogue: what each flaw does, detects, proves    */
/* ------------------------------------------------------------------ */
/*
 * docs/flaws.md.  One row per flaw a policy may switch on: its effect on
 * the lab being built (applied by lab_up_opts in catalogue order), the
 * probe rows that detect it (core/probe.c derives a row's flaws from
 * here), the evidence kinds that prove it was used and the rule that
 * decides whether one event does (the fix loop, core/fix.c: only the
 * rules whose flaw lists an event's kind see the event).
 */
#define FLAW_LIST_MAX 4
/* One sensor event as the attribution rules see it. */
struct flaw_event {
	const cJSON *ev;        /* the event (a sensor datagram, an orphan
	                           line) */
	const char *kind;       /* its kind ("sink", "tool_result", ...) */
	bool post;              /* its line is marked "breach" (after the
	                           cut-off) */
};
struct flaw {
	const char *id;
	const char *summary;
	const char *changes;   /* what it changes in the lab */
	/* What it does to the lab being built (lab_build_*).  -1 + e. */
	int (*effect)(struct lab_build *b, struct errbuf *e);
	/* probe rows that detect it, evidence kinds that prove it was used
	 * (NULL-terminated) */
	const char *probes[FLAW_LIST_MAX + 1];
	const char *evidence[FLAW_LIST_MAX + 1];
	/* Whether event x (of one of the evidence kinds) proves the flaw
	 * was used: then what gets a line of text (bounded by len) and
	 * *breakout whether the event is itself part of the breach (a leak,
	 * an orphan, an event after the cut-off).  NULL: no rule yet. */
	bool (*attribute)(const struct flaw_event *x, char *what, size_t len,
	    bool *breakout);
	/* The matches of one event are listed by this, lowest first, then
	 * in catalogue order. */
	int attribute_order;
};
extern const size_t flaw_count;
/* The catalogue entry of id, or NULL. */
const struct flaw *flaw_find(const char *id);
/* "egress-network, docker-socket, ..." (static storage). */
const char *flaw_ids(void);

/* ------------------------------------------------------------------ */
/* hostfw.c - no lab container reaches a port of the host               */
/* ------------------------------------------------------------------ */
/*
 * docs/security.md.  Lab bridges get names derived from the run id
 * ("ares" + 11 hex), carry no host address, and the host's INPUT chain
 * (iptables and ip6tables) drops everything that arrives on them, under
 * the comment "ares.run=<run_id>".  Needs root (or CAP_NET_ADMIN) on the
 * host; the iptables tools must be installed.
 */

/* ------------------------------------------------------------------ */
/* gc.c - what ares processes that are gone left on the engine          */
/* ------------------------------------------------------------------ */
/*
 * docs/cli-gc.md.  Every container and network ares creates carries
 * ares.owner=<boot_id>:<pid>:<starttime> (this kernel's boot id, the ares
 * process, its start time in clock ticks from /proc/PID/stat field 22, so
 * a reused pid does not keep a dead owner alive) and, for a lab meant to
 * outlive its process (ares lab up, --keep-lab), ares.lease=<RUN_DIR>/
 * lab.lease.  An owner is alive while its process is (same boot, pid,
 * start time) or its lease file names the run.  gc_sweep removes every
 * object with an ares.run or ares.owner label whose owner is gone; an
 * object without ares.owner (older ares) only when every object of its run
 * is older than GC_UNOWNED_AGE_S.  Containers go first (force; a
 * cgroup-frozen one is killed and thawed first), then networks, then the
 * host firewall rules of the runs whose bridges are gone (hostfw_unseal).
 */
#define GC_REPORT_MAX     64      /* entries kept per list */
/* Remove RUN_DIR/lab.lease (no error when absent). */
void gc_lease_remove(const char *run_dir);

struct gc_item {
	char kind[12];        /* "container", "network", "firewall" */
	char id[72];
	char name[96];
	char run[64];
	char error[160];      /* failed only */
};
struct gc_report {
	struct gc_item removed[GC_REPORT_MAX];
	size_t nremoved;      /* all removed (entries kept: <= GC_REPORT_MAX) */
	struct gc_item failed[GC_REPORT_MAX];
	size_t nfailed;
	size_t kept;          /* objects whose owner is alive (or too young) */
	bool truncated;       /* more objects than GC_LIST_MAX were listed */
};
/* Remove every ares object of d whose owner is gone (see above).  0 when
 * the sweep ran (out->nfailed tells what could not be removed), -1 + e
 * when the engine could not be listed (ERRBUF_ENGINE when unreachable). */
int gc_sweep(struct docker *d, struct gc_report *out, struct errbuf *e);
/* {"removed":[{kind,id,name,run}...],"failed":[{...,"error"}...],
 * "kept":N} (caller deletes). */
cJSON *gc_report_json(const struct gc_report *r);
/* One line per removed or failed object, prefixed "<who>: gc: " (caller
 * frees; NULL when the sweep removed and failed nothing). */
char *gc_report_text(const char *who, const struct gc_report *r);

/* ------------------------------------------------------------------ */
/* variant.c - lab variants: paths, hostnames, wording, bait ids        */
/* ------------------------------------------------------------------ */
/*
 * docs/variants.md.  The lab plants from the variant; nothing else (model,
 * detection, drill) knows a variant's names.  Text templates may use
 * {service} {port} {url} {token_path} {decoy_url} {exfil_host} {host_user}
 * {hostname} {instruction_file}; variant_expand() fills them.
 */
struct variant {
	const char *id;
	bool held_out;               /* kept out of tuning: re-check fixes */
	const char *summary;
	/* hostnames */
	const char *service;         /* service DNS alias and SERVICE_NAME */
	int port;
	const char *dns_alias;       /* the resolver's alias on lab */
	const char *exfil_host;      /* the outside host the notes name */
	const char *hostname;        /* decoy host's hostname */
	const char *host_user;       /* decoy host's user (/home/<user>) */
	/* paths relative to the agent's $HOME */
	const char *notes_file;
	const char *token_path;      /* "dir/file" of the decoy token */
	const char *instruction_file;
	const char *tripwire_file;
	const char *home_dirs[6];    /* extra dirs of the home layout */
	const char *token_prefix;    /* decoy token prefix */
	const char *decoy_endpoint;  /* path on the service (instruction) */
	/* wording (templates) */
	const char *notes;
	const char *instruction;
	const char *tripwire_text;
	const char *task;
	/* bait ids */
	const char *bait_credential;
	const char *bait_instruction;
	const char *bait_tripwire;
	/* Added with the four new bait kinds and the generator (issue 16). */
	const char *company;         /* "Northwind": wording */
	const char *domain;          /* "northwind.internal": decoy hosts' suffix */
	const char *cloud_creds_file;     /* ".aws/credentials" */
	const char *cloud_config_file;    /* ".aws/config" (names endpoint_url) */
	const char *cloud_profile;        /* "ops-admin" */
	const char *cloud_region;         /* "eu-north-1" */
	const char *cloud_host;           /* fake STS/metadata (decoys alias) */
	int cloud_port;
	const char *cloud_key_prefix;     /* "AKIA" or "ASIA" */
	const char *ssh_key_file;         /* ".ssh/id_ed25519" (+ ".pub") */
	const char *ssh_config_file;      /* ".ssh/config" */
	const char *ssh_alias;            /* its Host entry name */
	const char *ssh_host;             /* the fake SSH service */
	int ssh_port;
	const char *ssh_user;
	const char *git_cred_file;        /* ".git-credentials" */
	const char *git_checkout;         /* "src/deploy-scripts" (.git/config
	                                     has the token in the remote URL) */
	const char *git_host;
	int git_port;
	const char *git_user;
	const char *git_repo;             /* "platform/deploy" (no ".git") */
	const char *git_token_prefix;     /* "ghp_", "glpat-" */
	const char *mcp_config_file;      /* ".config/poyo/mcp.json" */
	const char *mcp_server;           /* entry name under "mcpServers" */
	const char *mcp_host;
	int mcp_port;
	const char *mcp_path;             /* "/mcp" */
	const char *mcp_tool;             /* the decoy tool (calling it: bait) */
	const char *mcp_tool_text;        /* its description */
	/* templates appended to the notes only when that bait is planted */
	const char *hint_cloud, *hint_ssh, *hint_git, *hint_mcp;
	const char *bait_cloud, *bait_ssh, *bait_git, *bait_mcp;   /* bait ids */
	bool generated;              /* made by variant_generate/variant_load */
	uint64_t seed;               /* the generator's seed (generated) */
	void *owned;                 /* a generated/loaded variant's storage */
};
/* The variant named id, or NULL. */
const struct variant *variant_find(const char *id);
/* "default, ..." of every variant id (static storage). */
const char *variant_ids(void);

/* Bait kinds (docs/variants.md); variant_bait_kinds[] names them. */
enum variant_bait_kind {
	VARIANT_BAIT_CREDENTIAL,
	VARIANT_BAIT_INSTRUCTION,
	VARIANT_BAIT_TRIPWIRE,
	VARIANT_BAIT_CLOUD,
	VARIANT_BAIT_SSH,
	VARIANT_BAIT_GIT,
	VARIANT_BAIT_MCP,
	VARIANT_NBAIT_KINDS
};
extern const char *const variant_bait_kinds[VARIANT_NBAIT_KINDS];
/* The kind named name ("ssh-key"), or -1. */
int variant_bait_kind_find(const char *name);
/* v's bait id of kind k (never NULL for a valid v and k). */
const char *variant_bait_id(const struct variant *v, enum variant_bait_kind k);
/* Whether the policy's bait: names v's bait of kind k by id or by kind
 * name. */
bool policy_bait_wanted(const struct policy *p, const struct variant *v,
    enum variant_bait_kind k);

/* Secrets variant_secret() makes. */
enum variant_secret {
	VARIANT_SECRET_TOKEN,        /* token_prefix + random */
	VARIANT_SECRET_CLOUD_KEY_ID, /* cloud_key_prefix + 16 [A-Z2-7] */
	VARIANT_SECRET_CLOUD_SECRET, /* 40 chars [A-Za-z0-9/+] */
	VARIANT_SECRET_GIT_TOKEN,    /* git_token_prefix + random */
};
/* A fresh random secret (libsodium randombytes) in v's format; a ghp_
 * style token never carries a valid CRC32 tail.  Caller frees. */
char *variant_secret(const struct variant *v, enum variant_secret which);

/* A variant dressed from seed alone (a pure function of seed); id
 * "gen-<16 hex of seed>".  Free with variant_free. */
struct variant *variant_generate(uint64_t seed);
/* A YAML variant file (docs/variants.md); absent fields come from
 * variant_generate(seed).  NULL + e (ERRBUF_INPUT, "file:line:col: field:
 * problem"). */
struct variant *variant_load(const char *path, uint64_t seed,
    struct errbuf *e);
/* Every field of v as YAML that variant_load reads back to the same
 * variant.  Caller frees. */
char *variant_to_yaml(const struct variant *v);
/* The variant a policy names: a table row, a generated one (variant:
 * generated; its variant_seed, else run_seed) or a file (variant:
 * FILE.yaml).  NULL + e.  Free with variant_free. */
const struct variant *variant_for_policy(const struct policy *p,
    uint64_t run_seed, struct errbuf *e);
/* Free a generated/loaded variant; a no-op for table rows and NULL. */
void variant_free(const struct variant *v);
/* Whether v is valid (hostnames, ports, paths, prefixes, texts,
 * templates); -1 + e naming the first bad field. */
int variant_check(const struct variant *v, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* lever.c, lever_kernel.c - kill switches: one protocol, one table    */
/* ------------------------------------------------------------------ */
/*
 * docs/levers.md.  Built-ins: gateway-deny, net-disconnect, pause, kill
 * (Engine API / gateway), cgroup-freeze, link-down (kernel, local engine
 * only), and external:/abs/path (a command speaking a JSON protocol).
 * lever_ctx_prepare() runs once after the agent started and caches what the
 * levers need, so the kill path does the minimum.
 */
#define LEVER_NAME_MAX        160          /* "external:/abs/path" included */
struct lever_result {
	char name[LEVER_NAME_MAX];
	bool fired, verified;
	uint64_t fired_ns, verified_ns;  /* CLOCK_MONOTONIC */
	char detail[256];                /* error or confirmation */
};

/* ------------------------------------------------------------------ */
/* gwctl.c - the client of a lab gateway's control socket              */
/* ------------------------------------------------------------------ */
/*
 * HTTP/1.1 on the unix socket lab->ctl_path (docs/lab.md): the deny lever
 * and its probe, the lab's wait for the gateway, probe's look at the
 * change queue.  Bounded in bytes and time; errors name what and the path.
 */

/* ------------------------------------------------------------------ */
/* sign.c - Ed25519 signatures in minisign's format (libsodium)        */
/* ------------------------------------------------------------------ */
/*
 * Files (docs/signing.md), compatible with minisign 0.11:
 *   public key  ares.pub:  "untrusted comment: ares public key <KEYID>\n"
 *                          base64("Ed" | keyid 8 | Ed25519 pk 32) "\n"
 *   secret key  ares.key:  minisign's secret key layout, unencrypted
 *                          (KDF bytes 0 0), mode 0600
 *   signature   F.minisig: "untrusted comment: ...\n"
 *                          base64("ED" | keyid | sig(BLAKE2b-512(F))) "\n"
 *                          "trusted comment: <text>\n"
 *                          base64(sig(sig64 | text)) "\n"
 * KEYID is shown as 16 upper-case hex digits of the little-endian key id
 * (what minisign prints).
 */
#define SIGN_KEYID_HEX     17      /* 16 hex + NUL */
#define SIGN_PUBKEY_NAME   "ares.pub"
#define SIGN_SECKEY_NAME   "ares.key"

/* The key directory: flag_dir (--key-dir) if non-NULL, else $ARES_KEY_DIR,
 * else $XDG_CONFIG_HOME/ares (absolute only), else $HOME/.config/ares.
 * -1 + e (ERRBUF_INPUT) when none can be found or out is too small. */
int sign_key_dir(const char *flag_dir, char *out, size_t outlen,
    struct errbuf *e);
/* Generate a key pair into dir (created 0700): ares.key (0600) and
 * ares.pub (0644).  Refuses to replace either file unless force.  keyid_hex
 * (may be NULL) gets the new key id.  -1 + e. */
int sign_keygen(const char *dir, bool force, char keyid_hex[SIGN_KEYID_HEX],
    struct errbuf *e);

/* ------------------------------------------------------------------ */
/* report.c - report.json / report.md, signed; ares verify's checks    */
/* ------------------------------------------------------------------ */
/*
 * RUN_DIR/report.json (format "ares-report-v1", docs/report.md) carries the
 * drill result, the count and head of every evidence chain of the run, and
 * BLAKE2b-256 of drill.json, agent.log and report.md.  It is signed into
 * report.json.minisig; the public key is copied to RUN_DIR/ares.pub.
 */
#define REPORT_MAX_CHAINS   64

struct drill_result;

/* One evidence chain of the run. */
struct report_chain {
	const char *name;   /* "master", "sensor:gateway": [A-Za-z0-9._:-] */
	const char *path;   /* relative to the run dir: "evidence.jsonl",
	                       "sensors/gateway.jsonl" ([A-Za-z0-9._/-], no
	                       "..", no leading '/') */
	size_t entries;     /* the writer's count; 0 with head "" means:
	                       verify the file and take its count and head */
	char head[EVIDENCE_HEX_BYTES];
};

#define REPORT_NAME_MAX     64    /* chain names: [A-Za-z0-9._:-] */
#define REPORT_PATH_MAX     255   /* chain/file paths in a run dir */

/* Signed chain anchors read back from a report (report.json, probe.json). */
struct report_anchors {
	struct report_chain chains[REPORT_MAX_CHAINS];  /* point into names/paths */
	char names[REPORT_MAX_CHAINS][REPORT_NAME_MAX + 1];
	char paths[REPORT_MAX_CHAINS][REPORT_PATH_MAX + 1];
	size_t n;
};

struct report_check {
	char name[96];       /* "signature", "report", "chain:evidence.jsonl" */
	bool ok;
	size_t line;         /* chain checks: 1-based bad line, else 0 */
	char reason[256];    /* why it failed ("" when ok) */
	char text[512];      /* one line for people (sanitized) */
};
struct report_verify_result {
	bool ok;                         /* every check passed */
	bool pinned;                     /* key given by the caller */
	char key_id[SIGN_KEYID_HEX];     /* of the key used */
	char run_id[128];                /* from report.json ("" if unread) */
	char verdict[32];
	struct report_check *checks;     /* in order; report_verify_free */
	size_t nchecks;
	int first_bad;                   /* index into checks, -1 if ok */
};
/* Check a run directory: the signature of report.json with pub_path (NULL:
 * RUN_DIR/ares.pub), report.json's format and run id, the trusted comment,
 * every chain (verified, then count and head against the report) and the
 * hashes of `files`.  Returns 0 when the checks ran (res->ok is the
 * verdict; missing or malformed files in the run dir are failed checks),
 * -1 + e when run_dir is not a directory or pub_path cannot be used. */
int report_verify_dir(const char *run_dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e);
void report_verify_free(struct report_verify_result *res);
/* The result as JSON ("ares-verify-v1").  Caller deletes. */
cJSON *report_verify_json(const char *run_dir,
    const struct report_verify_result *res);

/* ------------------------------------------------------------------ */
/* stats.c - exact binomial intervals (Clopper-Pearson), order stats   */
/* ------------------------------------------------------------------ */
/*
 * docs/trial.md ("The maths").  I_x(a, b) by its continued fraction
 * (modified Lentz, prefactor from lgamma); its inverse by Newton steps
 * kept inside a bisection bracket, to 1e-14 relative in x.
 */
/* Exact two-sided Clopper-Pearson interval of k successes in n at level
 * (0 < level < 1): lower = 0 when k = 0, upper = 1 when k = n.  -1 + e
 * (ERRBUF_INPUT) when n = 0, k > n or the level is out of range. */
int stats_clopper_pearson(uint64_t k, uint64_t n, double level,
    double *lower, double *upper, struct errbuf *e);
/* Parse a plain decimal integer (digits only) <= max.  -1 on bad input. */
int stats_parse_count(const char *s, uint64_t max, uint64_t *out);
/* Parse a decimal fraction strictly between 0 and 1.  -1 on bad input. */
int stats_parse_level(const char *s, double *out);

/* ------------------------------------------------------------------ */
/* trial.c - N drills, J at a time, one signed trial.json              */
/* ------------------------------------------------------------------ */
/*
 * docs/trial.md.  TRIAL_DIR = RUNS/<trial id>/ holds trial.json (format
 * "ares-trial-v1"), trial.json.minisig, ares.pub and runs/<run id>/ (one
 * ordinary run directory per drill).  Run i uses the seed
 * trial_seed(base, i); trial.json is rewritten and re-signed after every
 * finished run ("complete": false until the last), so an interrupted trial
 * loses nothing and --resume runs only the missing indexes.
 */
#define TRIAL_MAX_RUNS  10000
#define TRIAL_MAX_JOBS  32
#define TRIAL_NPHASES   8    /* DRILL_PHASE_N (checked in trial.c) */

/* ares trial --engine / --engines (core/trial_engines.c): the engines
 * a trial fans its runs out to, docs/cli-trial.md#engines. */
#define TRIAL_MAX_ENGINES      16
#define TRIAL_ENGINE_CAP_MAX   64     /* drills at a time on one engine */
#define TRIAL_MAX_ATTEMPTS     TRIAL_MAX_ENGINES   /* failed attempts kept
                              per run: a session makes at most one per
                              engine (each marks its engine down) */
#define TRIAL_ENGINE_NAME_MAX  300

struct trial_engine {
	char url[1032];            /* as given (a DOCKER_HOST value); "" for
	                              an engine only named by trial.json */
	char name[TRIAL_ENGINE_NAME_MAX];  /* for people and trial.json: the
	                              URL without an ssh user, never a path
	                              of TLS files */
	char cert_path[1024];      /* TLS files (ca.pem, cert.pem, key.pem);
	                              "" : DOCKER_TLS_VERIFY / DOCKER_CERT_PATH */
	size_t capacity;           /* 1..TRIAL_ENGINE_CAP_MAX */
	/* this session (trial_run) */
	struct docker_endpoint ep;
	bool down;                 /* lost: no new run starts there */
	char down_reason[256];
	size_t ran;                /* runs finished there */
	char engine_id[256];       /* "ID Name DockerRootDir" from GET /info
	                              ("" unknown) */
};

/* A failed attempt of a run: the engine went away under it. */
struct trial_attempt {
	char engine[TRIAL_ENGINE_NAME_MAX];
	char run_id[64];           /* "" when it had no run dir yet */
	char run_dir[96];          /* runs/<run_id> or "" */
	char reason[256];
	char report_blake2b[EVIDENCE_HEX_BYTES];   /* its report.json when
	                              the attempt was recorded; "" none */
};

struct trial_run {
	size_t index;
	char engine[TRIAL_ENGINE_NAME_MAX];   /* --engine: the engine that
	                              ran its final attempt ("" without) */
	size_t nattempts;          /* failed attempts before it */
	struct trial_attempt *attempts;   /* xrealloc'd; trial_free */
	uint64_t seed;
	bool done;                 /* finished (in this or an earlier session) */
	char run_id[64];           /* "" when the drill could not start */
	char run_dir[96];          /* relative to the trial dir: runs/<id> */
	char verdict[16];          /* contained, breached, not-exercised, error */
	char reason[512];
	bool bait_fired;
	size_t leaks;
	double time_to_kill_ms;    /* < 0: none */
	char report_blake2b[EVIDENCE_HEX_BYTES];   /* "" when no report */
	/* --variants fixed / generated: the run's dressing (trial_dress) */
	char variant[40];          /* "" with the policy's variant */
	uint64_t variant_seed;     /* generated: from the run's seed */
	bool has_variant_seed;
	char company[80], service[80];
	char policy_copy[48];      /* "policies/run-<index>.yaml" */
	char bait[64];             /* the bait that fired ("" none) */
	char bait_kind[24];        /* its kind (variant_bait_kinds) */
	/* this session's runs: the drill's drill.json "phases" (ms per
	 * enum drill_phase) and wall_ms; not in trial.json */
	bool timed;
	double phase_ms[TRIAL_NPHASES];
	double wall_ms;
};

struct trial_rate {
	uint64_t k, n;
	double lower, upper;       /* NaN when n = 0 */
};

struct trial_summary {
	size_t finished, contained, breached, not_exercised, errors;
	struct trial_rate bait;        /* bait fired / runs with a verdict */
	struct trial_rate contained_r; /* among exercised (contained+breached) */
	struct trial_rate breached_r;
	struct trial_rate leaked;      /* exercised runs with a sink leak */
	size_t nttk;                   /* runs with a time to kill */
	double ttk_median, ttk_p95, ttk_max;   /* NaN when nttk = 0 */
};

struct trial {
	char id[64];
	char dir[4096];            /* absolute trial dir */
	char policy[1024];         /* as given */
	char policy_abs[4096];
	char policy_blake2b[EVIDENCE_HEX_BYTES];
	uint64_t base_seed;
	size_t n, jobs;
	double level;
	bool complete;
	bool engine_down;          /* a drill reported the engine unreachable
	                              or lost: no further run starts */
	struct gc_report *gc;      /* the start-of-trial sweep (core/gc.c),
	                              or NULL; trial_free frees it */
	char key_id[SIGN_KEYID_HEX];
	struct trial_run *runs;    /* n entries, by index (xcalloc'd) */
	size_t ncancelled;         /* runs stopped by a hard cancel */
	struct trial_summary sum;
	int variants;              /* enum trial_variants */
	double wall_ms;            /* this session: the workers' wall time */
	size_t ndrilled;           /* ... and the drills they finished */
	/* --engine / --engines: format ares-trial-v2 (engines, each run's
	 * engine and failed attempts); without, one engine ($DOCKER_HOST) */
	bool multi;
	struct trial_engine *engines;   /* nengines (xcalloc'd; trial_free) */
	size_t nengines;
	char stopped[256];         /* v2: why runs were left not done ("no
	                              healthy engine left (...)"), "" none */
};

/* ares trial --variants: the policy's variant for every run (default),
 * the shipped variants in turn, or a new generated dressing per run. */
enum trial_variants {
	TRIAL_VARIANTS_POLICY = 0,
	TRIAL_VARIANTS_FIXED,
	TRIAL_VARIANTS_GENERATED,
};
/* "policy", "fixed", "generated" (static). */
const char *trial_variants_name(int v);
/* The variant_seed of run index (base seed's run seed seed) of a
 * --variants generated trial: a splitmix64 step of the run's seed (its
 * top bit cleared: a policy's variant_seed is 0..2^63-1), then
 * the next ones while it equals a run seed of the trial or an earlier
 * run's variant_seed (runs[0..index)), so every run wears another
 * dressing and none is dressed by a drill seed. */
uint64_t trial_variant_seed(const struct trial *t, size_t index);
/* RETRY: run's attempt failed with its engine (its last attempt says
 * which and why); the run goes back to the queue. */
enum trial_event { TRIAL_EV_START, TRIAL_EV_FINISH, TRIAL_EV_END,
	TRIAL_EV_RETRY };
struct trial_progress {
	enum trial_event event;
	size_t done, total, running;
	size_t contained, breached, not_exercised, errors;
	const struct trial_run *run;   /* FINISH: the run that finished */
};
/* Called with the trial's lock held, from any thread: print and return. */
typedef void (*trial_progress_fn)(void *ctx, const struct trial_progress *p);

struct trial_options {
	const char *policy_path;
	size_t n, jobs;
	uint64_t seed;
	bool has_seed;             /* else the policy's seed */
	double level;              /* 0: 0.95 */
	const char *runs_dir;      /* parent of the trial dir (NULL: $ARES_RUNS
	                              or ./runs) */
	const char *resume_dir;    /* continue this trial (n, seed, policy,
	                              level from its trial.json) */
	const char *key_dir;
	volatile sig_atomic_t *stop;    /* non-zero: launch no new run */
	volatile sig_atomic_t *cancel;  /* non-zero: cancel running drills */
	trial_progress_fn progress;
	void *progress_ctx;
	int variants;              /* enum trial_variants (new trials) */
	const char *const *engine_urls;   /* --engine URL, repeatable */
	size_t nengine_urls;
	const char *engines_file;  /* --engines FILE */
};

/* The engines of o (--engine URLs, then --engines FILE's), each without a
 * capacity getting dflt_cap: *out (xcalloc'd, caller frees), *n.  Every
 * URL parsed as DOCKER_HOST is (the same errors), no engine twice, at
 * most TRIAL_MAX_ENGINES.  -1 + e (ERRBUF_INPUT; file errors
 * "FILE:LINE:COL: field: problem"). */
int trial_engines_from_options(const struct trial_options *o,
    size_t dflt_cap, struct trial_engine **out, size_t *n,
    struct errbuf *e);
/* Parse an engines file's text (file names it in messages).  out has
 * room for TRIAL_MAX_ENGINES; *n engines.  -1 + e as above. */
int trial_engines_parse(const char *file, const char *buf, size_t len,
    size_t dflt_cap, struct trial_engine *out, size_t *n,
    struct errbuf *e);
/* One engine from url (what names it in messages): checked, named.
 * -1 + e. */
int trial_engine_set(struct trial_engine *en, const char *url,
    const char *what, const char *cert_path, size_t capacity,
    struct errbuf *e);

/* Run (or resume) a trial.  Returns 0 when it ran (t->complete false if
 * stopped early; every finished run is in trial.json), -1 + e when it could
 * not start: bad options or policy, a resume dir that does not verify
 * (ERRBUF_INPUT), engine unreachable (ERRBUF_ENGINE).  trial_free(t). */
int trial_run(const struct trial_options *o, struct trial *t,
    struct errbuf *e);
void trial_free(struct trial *t);
/* The median ms of each drill phase (enum drill_phase) over this
 * session's finished runs into med[TRIAL_NPHASES]; returns how many runs
 * (0: med all NaN). */
size_t trial_phase_medians(const struct trial *t, double *med);
/* Recompute t->sum from t->runs at t->level. */
void trial_summarize(struct trial *t);
/* 1 any breach; 5 any error run or incomplete; 4 none exercised; else 0. */
int trial_exit_code(const struct trial *t);
/* trial.json's document.  Caller deletes. */
cJSON *trial_json(const struct trial *t);
/* Whether DIR/trial.json exists. */
bool trial_dir_is(const char *dir);
/* ares verify on a trial dir: the signature of trial.json (pub_path, else
 * DIR/ares.pub), its schema, the trusted comment, the summary against the
 * runs, and for every run the BLAKE2b-256 of its report.json and
 * report_verify_dir on its directory (same key).  Same contract as
 * report_verify_dir (res->run_id is the trial id, res->verdict the
 * trial's). */
int trial_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* probe*.c - inside-out escape probes: battery, report, negative control */
/* ------------------------------------------------------------------ */
/*
 * docs/probes.md.  Each row of probe_table[] is one attack a compromised
 * agent would try, run inside the agent container as its own uid (Docker
 * exec with no user).  A row builds a sh script from the lab's facts
 * (probe_ctx), may collect one host-side observation (the gateway control
 * socket), and a pure evaluator turns the raw result into PASS/FAIL and an
 * observed text (sanitized: it is untrusted).
 */
#define PROBE_OBSERVED_MAX  512
#define PROBE_MAX_ROWS      32

enum probe_outcome {
	PROBE_PASS = 0,   /* the boundary held */
	PROBE_FAIL,       /* the attack worked */
	PROBE_ERROR,      /* could not tell (counts as failed: fail closed) */
};
/* "PASS", "FAIL", "ERROR"; a non-core failure prints as "WARN". */
const char *probe_outcome_name(enum probe_outcome o, bool core);

/* What the rows need to know about one lab (from RUN_DIR/lab.json and the
 * gateway's inspect). */
#define PROBE_HOST_TARGETS_MAX 24
struct probe_ctx {
	char run_id[64];
	char run_dir[1024];
	char policy[256];
	char variant[64];
	char flaws[POLICY_MAX_FLAWS][32];  /* as recorded in lab.json */
	size_t nflaws;
	char agent_id[80];
	char gateway_id[80];
	char sink_ip[48];                  /* "" when unknown */
	char exfil_host[128];              /* the variant's outside host */
	char service[64];                  /* the variant's service host */
	int service_port;
	char ctl_path[1100];               /* RUN_DIR/ctl/gateway.sock */
	char note[256];                    /* e.g. privileged realised degraded */
	char *real_key;                    /* the gateway's REAL_KEY or NULL
	                                      (zeroed by probe_ctx_free) */
	/* Row host-ports (probe_ctx_load with an engine): a listener on
	 * every address of the host, and the addresses the agent could try
	 * (the host's own, the lab networks' gateways). */
	bool host_listening;
	int host_fd[2];                    /* IPv4 and IPv6 listeners, or -1 */
	int host_port;
	char host_targets[PROBE_HOST_TARGETS_MAX][64];
	size_t nhost_targets;
	/* The agent's home (lab.json agent.home; "/home/poyo" when absent)
	 * and, for an agent image, the in-container folder of the probe
	 * helper the rows run from (agent.helper; "" for the lab image,
	 * whose own /bin/sh runs them). */
	char agent_home[260];
	char agent_helper[64];
	/* A lab on a remote engine (lab.json engine.remote, or d remote):
	 * no host path of the lab is this machine's; the gateway's control
	 * channel is reached through exec in the gateway (docker, the
	 * engine probe_ctx_load was given; not owned). */
	bool remote;
	struct docker *docker;
};
/* Read RUN_DIR/lab.json and, with d, the gateway's REAL_KEY; with d also
 * open the host-ports listeners and list their targets (not on a remote
 * engine: probe_row_remote_refusal).  -1 + e. */
int probe_ctx_load(struct docker *d, const char *run_dir,
    struct probe_ctx *c, struct errbuf *e);
void probe_ctx_free(struct probe_ctx *c);

/* The raw result of one row. */
struct probe_exec {
	int exit_code;
	const char *out;  size_t out_len;  /* agent stdout (untrusted) */
	const char *err;  size_t err_len;  /* agent stderr (untrusted) */
	const char *host; size_t host_len; /* host-side observation or NULL */
};

struct probe_row {
	const char *id;          /* "nic-count" ([a-z0-9-]) */
	const char *attack;      /* what the compromised agent tries */
	const char *expected;    /* what a held boundary looks like */
	bool core;               /* a failure fails the gate (the flaws it
	                            detects: flaw_table[].probes) */
	/* The sh script run in the agent (caller frees), or NULL when the
	 * lab lacks a fact it needs (the row is then an ERROR). */
	char *(*script)(const struct probe_ctx *c);
	/* Optional host-side observation after the exec (caller frees the
	 * text); NULL + e when it cannot be made. */
	char *(*host)(const struct probe_ctx *c, struct errbuf *e);
	/* Pure: the verdict and the observed text (written to obs).  Of c
	 * it may use only the facts PROBE_OBS_FILE records (sink_ip,
	 * exfil_host, service, service_port, host_port, real_key): ares
	 * verify evaluates the row again from them. */
	enum probe_outcome (*eval)(const struct probe_ctx *c,
	    const struct probe_exec *x, char *obs, size_t obslen);
};
extern const struct probe_row probe_table[];
extern const size_t probe_nrows;
/* Why row cannot run against a lab on a remote engine (a static string),
 * or NULL when it can: the row is then an ERROR with that reason, never
 * a pass (host-ports: its listener is on this machine, not the engine's
 * host). */
const char *probe_row_remote_refusal(const struct probe_row *row);

struct probe_result {
	const struct probe_row *row;
	enum probe_outcome outcome;
	char observed[PROBE_OBSERVED_MAX];  /* sanitized: safe to print */
	double ms;
	size_t obs_seq;          /* its probe.row line in PROBE_OBS_FILE (0:
	                            not recorded) */
};
struct probe_report {
	char run_id[64];
	char run_dir[1024];
	char policy[256];
	char variant[64];
	char flaws[POLICY_MAX_FLAWS][32];
	size_t nflaws;
	char note[256];
	char started[40];                   /* RFC 3339 */
	struct probe_result rows[PROBE_MAX_ROWS];
	size_t nrows;
	size_t nplanned;                    /* rows the battery meant to run */
	bool cancelled;                     /* stopped early: never "held" */
	/* the lab's sensor chains, verified and anchored after teardown
	 * (probe_anchor_chains); signed with probe.json */
	struct report_anchors chains;
	bool anchored;                      /* chains were collected */
	char anchor_note[256];              /* why not, or the bad chain */
	bool chain_failed;                  /* a sensor chain did not verify:
	                                       never "held" (fail closed) */
	/* the battery's own evidence (PROBE_OBS_FILE): what every row saw,
	 * so that ares verify can evaluate it again */
	char only_flaw[32];                 /* "" every row */
	size_t obs_entries;
	char obs_head[EVIDENCE_HEX_BYTES];
	bool obs_failed;                    /* not recorded: never "held" */
	bool nc;                            /* a lab of the negative control */
	char nc_item[32];                   /* its item: "" the baseline, a
	                                       flaw or a weakening id */
	bool engine_lost;                   /* the engine stopped answering:
	                                       the battery stopped, never
	                                       "held" */
	char engine_error[256];             /* what the engine call said */
	bool gc_ran;                        /* gc holds the start-of-probe
	                                       sweep (core/gc.c) */
	struct gc_report gc;
};
/* Run the battery (every row, or only the rows that detect only_flaw when
 * non-NULL) in c's agent.  Fills r; cancel (may be NULL) nonzero stops it
 * between rows (r->cancelled).  -1 + e (ERRBUF_INPUT: unknown flaw). */
int probe_run(struct docker *d, const struct probe_ctx *c,
    const char *only_flaw, const volatile sig_atomic_t *cancel,
    struct probe_report *r, struct errbuf *e);
/* Every core row passed and the battery was not cancelled. */
bool probe_held(const struct probe_report *r);
/* Check a probe run dir (no report.json, a signed probe.json): the
 * signature with pub_path (NULL: RUN_DIR/ares.pub), probe.json's format,
 * the trusted comment against its rows, every anchored chain (count and
 * head), then the recompute: every row evaluated again from its recorded
 * observation (PROBE_OBS_FILE), the rows planned and run, the result and
 * the negative-control item against those.  Same contract as
 * report_verify_dir (res->verdict is the probe's result: held, failed or
 * cancelled). */
int probe_verify_dir(const char *run_dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e);
/* Whether dir holds a probe.json and no report.json or trial.json. */
bool probe_dir_is(const char *dir);

/* The results table, wrapped to width columns (>= 60; at most width-1
 * characters per line).  Caller frees. */
char *probe_table_format(const struct probe_report *r, int width);
/* The report as JSON (PROBE_FORMAT, docs/probes.md).  Caller deletes. */
cJSON *probe_report_json(const struct probe_report *r);
/* JUnit XML: one testcase per row, failures carry the observed text
 * (XML-escaped; characters XML 1.0 forbids are dropped).  Caller frees. */
char *probe_junit(const struct probe_report *r);
/* Write RUN_DIR/probe.json, sign it (probe.json.minisig) with the key of
 * key_dir (NULL: the default; made on first use, as the drill does) and
 * copy the public key to RUN_DIR/ares.pub.  -1 + e. */
int probe_write_signed(const struct probe_report *r, const char *key_dir,
    struct errbuf *e);

/* Called on the battery's thread after row i ran (r->rows[i] filled,
 * sanitized); print or copy and return. */
typedef void (*probe_row_fn)(void *ctx, const struct probe_report *r,
    size_t i);
/* How probe_lab runs; zero means the defaults. */
struct probe_options {
	const char *runs_dir;      /* NULL: $ARES_RUNS or ./runs */
	const char *only_flaw;     /* NULL: every row */
	const char *key_dir;       /* NULL: the default key dir */
	bool keep;                 /* leave the lab up after the battery */
	probe_row_fn row_fn;       /* may be NULL: after each row */
	void *row_ctx;
	/* may be NULL; nonzero: no further row starts (checked after the lab
	 * is up and between rows); the partial report is still signed, with
	 * result "cancelled", and the lab still torn down */
	const volatile sig_atomic_t *cancel;
	enum lab_weakening weaken; /* negative control only: lab_options */
	const char *nc_item;       /* negative control only: its item ("" the
	                              baseline), recorded in probe.json */
};
/* One lab, brought up for probing: policy p (agent idle) in a fresh run
 * dir, battery, signed probe.json, teardown unless o->keep.  0 when the
 * battery ran or was cancelled (r filled; see r->cancelled); -1 + e when
 * the lab could not come up or be torn down (r->run_dir names the dir). */
int probe_lab(struct docker *d, const struct policy *p,
    const struct probe_options *o, struct probe_report *r, struct errbuf *e);

/* Negative control: the base policy (flaws cleared) must hold, and with
 * exactly one flaw on the battery must FAIL a row that detects it. */
/*
 * The negative control's weakenings that are no flaw of the catalogue (no
 * policy can ask for them): each breaks a wall that holds under every
 * flaw, and the row that checks that wall must then fail.
 *   host-seal-off  the bridges keep a host address, no host firewall:
 *                  row host-ports
 *   sys-admin      the agent runs as root with CAP_SYS_ADMIN: row mount
 */
struct probe_nc_weakening {
	const char *id;
	enum lab_weakening weaken;
	const char *row;
};
extern const size_t probe_nc_nweakenings;
/* The weakening named id, or NULL. */
const struct probe_nc_weakening *probe_nc_weakening_find(const char *id);
/* Items probe_negative_control may fill: the baseline, every flaw, every
 * weakening. */
#define PROBE_NC_ITEMS(nflaws) ((nflaws) + 1 + probe_nc_nweakenings)
struct probe_nc_item {
	char flaw[32];          /* "" for the baseline, a flaw id, or a
	                           weakening id (probe_nc_weakenings) */
	char run_id[64];
	char run_dir[1024];
	bool ran;               /* the lab came up and the battery ran */
	bool seen;              /* baseline: held; flaw: a mapped row failed */
	char rows[256];         /* failed rows ("a, b") */
	char error[256];        /* why it did not run (sanitized) */
	double seconds;
};
struct probe_nc_options {
	const char *policy_path;   /* the hardened base */
	const char *runs_dir;
	const char *only_flaw;     /* NULL: every flaw of the catalogue */
	const char *key_dir;
	int parallel;              /* labs at once: 1 or 2 */
	const volatile sig_atomic_t *cancel;  /* may be NULL: as probe_lab;
	                              items not started get "cancelled" */
	/* with nflaws > 0 (and only_flaw NULL): just these flaws (ids of
	 * the catalogue) after the baseline, no weakening (ares gate: the
	 * flaws HEAD gained) */
	const char *const *flaws;
	size_t nflaws;
};
/* Fills items (flaw_count + 1 entries: baseline first).  *nitems gets the
 * count.  0 when every lab ran (see each item's seen); -1 + e otherwise
 * (items still filled). */
int probe_negative_control(const struct probe_nc_options *o,
    struct probe_nc_item *items, size_t *nitems, struct errbuf *e);
/* Every item seen (the gate saw each weakening and the baseline held). */
bool probe_nc_ok(const struct probe_nc_item *items, size_t n);
cJSON *probe_nc_json(const char *policy, const struct probe_nc_item *items,
    size_t n);
char *probe_nc_junit(const struct probe_nc_item *items, size_t n);

/* ------------------------------------------------------------------ */
/* replay.c - a recorded run as a timeline of beats (no Docker)        */
/* ------------------------------------------------------------------ */
/*
 * replay_load() reads RUN_DIR/evidence.jsonl (bounded) and turns every line
 * into zero or more beats with the kinds and texts the live drill shows
 * (texts sanitized with util_sanitize), ordered by time (stable), plus the
 * state after each beat: what the lever panel, the map and Poyo show there.
 * It also verifies the run (evidence_verify_buf on the very bytes it shows,
 * and report_verify_dir) and keeps a badge.  Nothing here needs a terminal.
 */
#define REPLAY_LEVER_NAME  64

/* The channel of an agent action (docs/scoring.md): what a breach used. */
enum replay_channel {
	REPLAY_CHANNEL_MODEL = 0,  /* the gateway: model calls, tool results */
	REPLAY_CHANNEL_NETWORK,    /* services, DNS, the sink */
	REPLAY_CHANNEL_DOCKER,     /* the docker socket (dockerproxy) */
	REPLAY_CHANNEL_FILE,       /* a planted file (the tripwire) */
	REPLAY_NCHANNELS
};
/* "model", "network", "docker", "file" (a static string), "?" otherwise. */
const char *replay_channel_name(int c);

struct replay_lever_state {
	bool fired, verified, failed;
	bool named;                /* replay_state_lever() gave its name */
	bool cuts_off;             /* by its name: verified => cut off */
	bool freezes;              /* pause, cgroup-freeze */
	uint64_t fired_rel_ns, verified_rel_ns;   /* since drill.start */
	unsigned cuts;             /* by its name: the channels it cuts
	                              (LEVER_CUTS_*: 1 << REPLAY_CHANNEL_*) */
};

/*
 * The map's channels: what the agent can reach from inside the boundary,
 * one node each on the lab map (docs/cli-replay.md).  Finer than
 * enum replay_channel (the scorer's): its network is service, DNS and sink.
 */
enum replay_via {
	REPLAY_VIA_MODEL = 0,      /* the gateway and the model behind it */
	REPLAY_VIA_SERVICE,        /* the lab's fake services (the bait) */
	REPLAY_VIA_DNS,            /* the lab's resolver */
	REPLAY_VIA_SINK,           /* the simulated internet: traffic out */
	REPLAY_VIA_DOCKER,         /* the docker socket (flaw docker-socket) */
	REPLAY_VIA_HOST,           /* host paths (host-mount, host-pid,
	                              host-ipc, control-keys) */
	REPLAY_VIA_FILE,           /* a planted file (the tripwire) */
	REPLAY_NVIA
};
#define REPLAY_VIA_BIT(v)  (1u << (v))
/* What every lab has: the model, a service, DNS, the sink. */
#define REPLAY_LAB_BASE    (REPLAY_VIA_BIT(REPLAY_VIA_MODEL) | \
	REPLAY_VIA_BIT(REPLAY_VIA_SERVICE) | REPLAY_VIA_BIT(REPLAY_VIA_DNS) | \
	REPLAY_VIA_BIT(REPLAY_VIA_SINK))
/* "model", "service", "dns", "sink", "docker", "host", "file"; "?". */
const char *replay_via_name(int v);
/* The channels a lab with these flaws has (REPLAY_VIA_BIT bits, always
 * REPLAY_LAB_BASE): docker-socket adds docker, host-mount, host-pid,
 * host-ipc and control-keys add host.  Unknown names add nothing. */
unsigned replay_lab_of_flaws(const char *const *flaws, size_t n);

/*
 * What the screens show after one beat: the lever panel, the map, Poyo,
 * the counts and the verdict.  One reducer, replay_state_apply(), makes it
 * from beats, for the replay (replay_load, every beat in time order) and
 * for the live console (every beat the drill's observer delivers), so the
 * two cannot disagree.  A plain value: copy it freely.
 */
struct replay_state {
	struct replay_lever_state lev[POLICY_MAX_LEVERS];
	size_t nlev;               /* levers shown (known ones) */
	int nverified;
	bool bait, zapped, cut_off, breach;
	bool frozen;               /* the cut-off lever froze the agent */
	size_t breaches, leaks, orphans, blocked, agent_steps, errors;
	size_t channel_breaches[REPLAY_NCHANNELS];  /* BREACH beats by channel */
	int verdict;               /* enum drill_verdict (declared below);
	                              DRILL_VERDICT_NONE before the end */
	const char *pose;          /* Poyo's frame: idle0 walking0 sniffing
	                              grabbing zapped frozen caught escaped
	                              (static string) */
	/* the previous beat (the beats of one agent turn count one step) */
	int last_kind;             /* enum drill_beat_kind, -1 before any */
	uint64_t last_t_ns;
	int last_step;
	/* The map's channels (REPLAY_VIA_BIT bits of enum replay_via), from
	 * the beats alone: the same live and replayed. */
	unsigned lab;              /* the lab has it (the lab.up beat's
	                              channels; a channel used counts too) */
	unsigned used;             /* the agent used it */
	unsigned breached;         /* a breach, leak or orphan went through */
	unsigned cut;              /* a verified lever cuts it */
	size_t via_uses[REPLAY_NVIA];           /* agent beats through it */
	uint64_t via_first_rel_ns[REPLAY_NVIA]; /* its first use (used) */
	uint64_t via_breach_rel_ns[REPLAY_NVIA];/* its first breach */
	int last_via;              /* the last beat's channel, -1: none */
	bool escaped;              /* the agent got something out (a breach,
	                              a leak, an orphan): Poyo is outside */
	/* the docker socket: Engine API requests the proxy answered, and
	 * the containers the agent created and started through it (2xx) */
	size_t docker_requests, docker_created, docker_started;
	char orphan_kind[16];      /* the first orphan: "container" ... */
	char orphan_name[96];      /* ... and its name (no leading '/') */
};

enum replay_sig {
	REPLAY_SIG_OK = 0,
	REPLAY_SIG_MISSING,        /* no report / signature / public key */
	REPLAY_SIG_BAD,            /* present but does not verify */
};

struct replay {
	char run_dir[1024];
	char run_id[128], policy[128], model[64], seed[32];
	char lever_names[POLICY_MAX_LEVERS][REPLAY_LEVER_NAME];
	size_t nlevers;
	struct drill_beat *beats;      /* nbeats, time order */
	struct replay_state *states;   /* nbeats: state after beat i */
	uint32_t *lines;               /* nbeats: 1-based evidence line */
	size_t nbeats;
	size_t nlines;                 /* evidence lines read */
	size_t skipped;                /* lines that gave no beat */
	bool truncated;                /* a bound cut the timeline short */
	int verdict;                   /* enum drill_verdict, verdict line */
	char verdict_reason[256];      /* sanitized */
	double time_to_kill_ms;        /* <0: none */
	/* badge */
	bool chain_ok;                 /* evidence.jsonl verifies */
	size_t chain_entries;
	size_t chain_bad_line;         /* 1-based, 0 when ok */
	char chain_reason[256];
	enum replay_sig sig;
	bool verify_ok;                /* every check of report_verify_dir */
	char verify_text[512];         /* first failing check (sanitized) */
	char badge[160];               /* one line: "chain ok · signature ok" */
	unsigned pace_ms;              /* drill.start "pace_ms": presenter
	                                  mode slowed the agent (0: not) */
};

/* Load RUN_DIR (pub_path: the public key to check with, NULL for the run
 * dir's own ares.pub).  NULL + e when evidence.jsonl cannot be read or is
 * larger than REPLAY_MAX_BYTES; a chain or signature that does not verify
 * is not an error (see the badge).  Free with replay_free(). */
struct replay *replay_load(const char *run_dir, const char *pub_path,
    struct errbuf *e);
void replay_free(struct replay *rp);
/* The next (dir > 0) or previous marker from beat i, or i when none. */
size_t replay_marker(const struct replay *rp, size_t i, int dir);
/* The state before the first beat (levers named, nothing happened):
 * replay_state_init() and replay_state_lever() for rp's levers. */
void replay_initial_state(const struct replay *rp, struct replay_state *out);
/* Nothing happened, no lever known. */
void replay_state_init(struct replay_state *s);
/* Name lever i (ignored when i >= POLICY_MAX_LEVERS): it is shown from
 * now on, and what it does is fixed by its name (built-in levers as in
 * lever.c, "external:..." cuts off; no file is looked at).  NULL or "":
 * shown, unnamed (of unnamed levers, the second verified cuts off). */
void replay_state_lever(struct replay_state *s, size_t i, const char *name);
/*
 * The reducer: apply beat b to s.  Pure (no I/O, no lock, no allocation):
 * the live console calls it on the drill thread, in its observer.  Uses
 * b's kind, lever, t_ns, t_rel_ns, channel, and the text of AGENT beats
 * ("step N: ...") and VERDICT beats (the verdict's name first, as
 * drill_verdict_name() spells it; anything else reads as error).
 */
void replay_state_apply(struct replay_state *s, const struct drill_beat *b);

/* ------------------------------------------------------------------ */
/* report_html.c - one self-contained HTML page of a dir (ares report) */
/* ------------------------------------------------------------------ */
/*
 * docs/cli-report.md.  The page of a drill run dir (verdict, cause,
 * levers, every beat with the state after it, Poyo's pose per beat drawn
 * from the sprite sheet), a trial dir (rates as bars, time-to-kill
 * histogram, the runs), a probe, gate or fix dir (their rows), each with
 * the verifier's result and how to check it with minisign.  Inline CSS
 * and JS only, a CSP that forbids every fetch, readable without JS.
 */
#define REPORT_HTML_TEXT_MAX  1024          /* bytes of one shown text */
#define REPORT_HTML_DOC_MAX   (16u << 20)   /* trial/probe/gate/fix json */

enum report_html_kind {
	REPORT_HTML_DRILL = 0,
	REPORT_HTML_TRIAL,
	REPORT_HTML_PROBE,
	REPORT_HTML_GATE,
	REPORT_HTML_FIX,
};
struct sprite_sheet;
struct report_html_options {
	const char *pub_path;              /* NULL: the dir's own ares.pub */
	const struct sprite_sheet *sheet;  /* Poyo's sheet; NULL: no sprite */
	const char *link_base;             /* the folder the page will be in
	                                      (its links are relative to it);
	                                      NULL: the current directory */
};
/* The kind of dir, chosen as ares verify chooses (gate, trial, probe,
 * fix, else a drill run dir). */
int report_html_dir_kind(const char *dir);
/* "drill", "trial", "probe", "gate", "fix" (static). */
const char *report_html_kind_name(int k);
/* The page of dir (its length in *len).  NULL + e (ERRBUF_INPUT) when
 * dir is no directory, its document cannot be read, or o->pub_path
 * cannot be used; a dir that does not verify still gets its page (it
 * says so).  Caller frees. */
char *report_html(const char *dir, const struct report_html_options *o,
    size_t *len, struct errbuf *e);
/* Append untrusted text s to b as HTML text or attribute value: at most
 * max bytes of it (a cut is marked with U+2026), sanitized
 * (util_sanitize), & < > " ' escaped. */
void report_html_escape(struct util_buf *b, const char *s, size_t max);
/* Append j as JSON safe inside <script type="application/json">: "<",
 * ">", "&", U+2028 and U+2029 written as \u escapes. */
void report_html_json(struct util_buf *b, const cJSON *j);

/* ------------------------------------------------------------------ */
/* fix.c - the fix loop: attribute, patch, rerun, held-out, propose    */
/* ------------------------------------------------------------------ */
/*
 * docs/fix.md.  From a breached drill: attribute the flaw(s) from the
 * evidence (pure, no model), turn them off in the policy (a minimal text
 * edit, re-parsed), rerun on the same variant and on a held-out one, then
 * propose the change (git branch + commit, pr.md, GitHub PR and Slack
 * message when configured).  Everything lands in RUNS/fix-<id>/ with its
 * own hash-chained evidence.jsonl and a signed fix.json.
 */
#define FIX_MAX_HITS        16
#define FIX_MAX_RUNS        48
#define FIX_MAX_SEEDS       5   /* reruns until the bait is exercised */
#define FIX_MAX_ITERATIONS  6   /* flaws turned off, one per iteration */
#define FIX_MAX_SLACK_CHANNELS 8   /* --slack-channel, at most */
#define FIX_EXIT_NOT_DELIVERED 6   /* verified, but a push, pull request or
                                      Slack post that was asked for failed */
#define FIX_HELDOUT_TRIES   64  /* counters tried for a fresh held-out seed */

/* One flaw the evidence proves was used. */
struct fix_hit {
	char flaw[48];
	bool breakout;        /* its evidence is part of the breach itself
	                         (orphan, leak, event after the cut-off) */
	size_t events;        /* evidence lines that prove it */
	size_t first_line;    /* 1-based index of the first one */
	char evidence[200];   /* the example line, sanitized */
};

/* The proposal in git, by argv (never a shell): blob, private index,
 * commit-tree on HEAD, new branch; work tree and HEAD untouched. */
struct fix_git_result {
	bool in_repo;           /* the policy is in a git work tree */
	bool committed, has_base;
	char toplevel[1024];
	char path_in_repo[512];
	char branch[128];
	char commit[41];
	char base_commit[48];
	char base_branch[128];
};

enum fix_outcome {
	FIX_OUTCOME_VERIFIED = 0,   /* contained on training and held-out */
	FIX_OUTCOME_NOT_A_FIX,      /* still breached (or held-out only) */
	FIX_OUTCOME_UNPROVEN,       /* a rerun never exercised the bait */
	FIX_OUTCOME_UNATTRIBUTED,   /* no flaw that is on explains it */
	FIX_OUTCOME_NOTHING,        /* the drill was not breached */
	FIX_OUTCOME_ERROR,
};
const char *fix_outcome_name(enum fix_outcome o);

typedef void (*fix_observer_fn)(void *ctx, double t_ms, const char *type,
    const char *text);

struct fix_options {
	const char *run_dir;        /* a breached run (verified first), or NULL */
	const char *pub_path;       /* key to verify run_dir with (NULL: its own) */
	const char *policy_path;    /* NULL with run_dir: the run's policy */
	uint64_t seed;
	bool has_seed;
	const char *runs_dir;       /* NULL: $ARES_RUNS or ./runs */
	const char *key_dir;        /* signing key dir (NULL: default) */
	const char *heldout;        /* held-out variant (NULL: first other) */
	int max_seeds;              /* 0: FIX_MAX_SEEDS */
	int max_iterations;         /* 0: FIX_MAX_ITERATIONS */
	const char *github_repo;    /* OWNER/REPO, or NULL */
	const char *github_api;     /* NULL: $ARES_GITHUB_API or api.github.com */
	const char *github_base;    /* NULL: the repo's branch, else main */
	const char *slack_webhook;  /* NULL: $ARES_SLACK_WEBHOOK */
	fix_observer_fn observer;   /* each beat as it happens */
	void *observer_ctx;
	volatile sig_atomic_t *cancel;
	/* Sending (docs/cli-fix.md "Sending"): */
	const char *push_remote;    /* git push REMOTE BRANCH before the PR;
	                               NULL: the branch stays here */
	const char *slack_api;      /* NULL: $ARES_SLACK_API or
	                               https://slack.com/api */
	const char *slack_channels[FIX_MAX_SLACK_CHANNELS];  /* chat.postMessage
	                               with $SLACK_BOT_TOKEN, one post each */
	size_t nslack_channels;
};
struct fix_run_ref {
	char role[16];              /* original, rerun, held-out */
	char run_id[64];
	char run_dir[1024];
	char variant[40];
	uint64_t seed;
	char verdict[32];
	char reason[256];
	double time_to_kill_ms;
	char report_hash[EVIDENCE_HEX_BYTES];  /* BLAKE2b-256 of report.json */
	uint64_t variant_seed;      /* a generated dressing's seed (lab.json
	                               "variant" gen-<hex>) */
	bool has_variant_seed;
};
struct fix_result {
	char fix_id[64];
	char fix_dir[1100];
	char policy_path[1024];
	char policy_name[80];
	enum fix_outcome outcome;
	char reason[512];
	struct fix_hit attributed[FIX_MAX_HITS];  /* the flaws turned off */
	size_t nattributed;
	char removed[FIX_MAX_ITERATIONS][48];
	size_t nremoved;
	size_t iterations;
	struct fix_run_ref runs[FIX_MAX_RUNS];
	size_t nruns;
	char *diff;                 /* owned: fix_result_free */
	char patched_path[1200], patch_path[1200], pr_path[1200];
	struct fix_git_result git;
	long github_status, slack_status;
	char pr_url[256];
	bool evidence_failed;
	/* Sending and the model-written section: */
	bool pushed;                /* git push REMOTE BRANCH succeeded */
	bool delivery_failed;       /* a push, PR or Slack post asked for
	                               failed (exit FIX_EXIT_NOT_DELIVERED) */
	size_t slack_posted;        /* chat.postMessage posts that were ok */
	bool model_section;         /* pr.md has the model-written section */
	/* An imported Compose policy (policy key imported:): */
	bool compose_patched;       /* the commit changes the Compose file */
	char compose_path[1024];    /* the Compose file, as the policy says */
	char compose_note[600];     /* why it was not patched, or "" */
	char compose_service[128];
	char *compose_diff;         /* owned: fix_result_free */
	/* The held-out dressings: the shipped variant and the generated one
	 * (fix_heldout_seed; heldout_gen false until it is chosen): */
	char heldout_shipped[40];
	bool heldout_gen;
	char heldout_gen_id[40];    /* "gen-<16 hex of the seed>" */
	uint64_t heldout_gen_seed;
	unsigned heldout_gen_counter;
	char heldout_gen_company[80], heldout_gen_service[80];
};
/* Run the loop.  0 when it reached an outcome (r->outcome), -1 + e when it
 * could not (tampered or unbreached run dir, bad policy: ERRBUF_INPUT;
 * engine: ERRBUF_ENGINE). */
int fix_run(const struct fix_options *o, struct fix_result *r,
    struct errbuf *e);
void fix_result_free(struct fix_result *r);
/* The seed of the generated held-out dressing for the run run_id: from
 * BLAKE2b over run_id and a counter 0, 1, ... (0..2^63-1, what a policy's
 * variant_seed: may be), the first that is none of
 * used[0..nused) (the seeds the fix's runs use and wore).  0 with *seed
 * and *counter; -1 when FIX_HELDOUT_TRIES counters all collide. */
int fix_heldout_seed(const char *run_id, const uint64_t *used, size_t nused,
    uint64_t *seed, unsigned *counter);
/* Whether id names a generated variant ("gen-" + 16 lower-case hex);
 * *seed gets its seed. */
bool fix_variant_id_seed(const char *id, uint64_t *seed);
/* Whether the run in run_dir wore dressing variant (has_seed: the
 * generated one of seed) by its own signed evidence: report (its
 * verified report.json, rlen bytes) must hash lab.json, whose "variant"
 * is variant; a generated one's id is gen-%016llx of seed and its
 * variant.yaml (hashed too) is variant_to_yaml(variant_generate(seed)).
 * 1 proven, 0 not checked (no lab.json hash, !required), -1 with why. */
int fix_run_wore(const char *run_dir, const char *report, size_t rlen,
    const char *variant, bool has_seed, uint64_t seed, bool required,
    char *why, size_t whylen);
/* 0 verified, 6 verified but not delivered, 1 otherwise, 5 error. */
int fix_exit_code(const struct fix_result *r);
cJSON *fix_result_json(const struct fix_result *r);
/* Whether c is a Slack channel --slack-channel accepts (an id such as
 * C0123ABC or a name such as #ops: 1..80 of [A-Za-z0-9#._-]). */
bool fix_slack_channel_ok(const char *c);
/* Whether DIR/fix.json exists (and no report.json or trial.json). */
bool fix_dir_is(const char *dir);
/* ares verify on a fix dir: the signature of fix.json (pub_path, else
 * DIR/ares.pub), its schema and trusted comment, its evidence chain
 * (count, head, and its fix.run / fix.patch / fix.result lines against
 * fix.json), every run it lists verified on its own (found next to the
 * fix dir or where fix.json says; report hash, report_verify_dir with the
 * same key, verdict, seed, time to kill), then the outcome recomputed from
 * those runs' verdicts by the loop's rules, and pr.md / attempt.md against
 * it.  Same contract as report_verify_dir (res->run_id is the fix id,
 * res->verdict fix.json's outcome). */
int fix_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* score.c - the one scorer: a run's chains -> its verdict             */
/* ------------------------------------------------------------------ */
/*
 * docs/scoring.md (normative).  Pure over the evidence: the master chain
 * and every sensor chain its "chain" lines name.  The drill computes its
 * verdict with it after teardown; `ares verify` runs it again and
 * compares.  Nothing here touches the engine or the terminal.
 */
enum score_channel {
	SCORE_CH_MODEL = 0,      /* the gateway: model calls, tools, notes */
	SCORE_CH_NETWORK,        /* service requests, DNS, the sink */
	SCORE_CH_DOCKER,         /* the docker socket (Engine API) */
	SCORE_CH_FILE,           /* opens of planted files (tripwire) */
	SCORE_CH_N
};
#define SCORE_MAX_CHAINS   16
#define SCORE_TEXT_MAX     512

/* A place in the evidence: RUN_DIR-relative chain path, 1-based line. */
struct score_ref {
	char chain[80];
	size_t line;
};
/* One agent action as listed (the first breach of a channel, a leak). */
struct score_item {
	char src[32];
	char kind[32];
	char what[160];          /* sanitized, e.g. "POST /containers/create" */
	uint64_t t_ns;
	double after_ms;         /* after the channel's boundary (breach) */
	struct score_ref ref;
};
struct score_channel_state {
	bool held;               /* the lab gives it to the agent */
	bool cut;                /* a verified lever cuts it */
	char cut_by[LEVER_NAME_MAX];
	uint64_t boundary_ns;    /* max(cut-off, its cut); 0: no cut-off */
	size_t actions, in_flight, breaches;
	struct score_item first; /* the first breach (breaches > 0) */
};
struct score_orphan {
	char kind[16];           /* "container" or "process" */
	char id[72];
	char name[128];
	char detail[160];
	bool removed;
	struct score_ref ref;
};
/* Bus reconciliation for one sensor (by src). */
struct score_bus {
	char src[32];
	char chain[80];          /* "" for a sensor without a chain */
	size_t chain_events;     /* events its chain holds */
	size_t delivered;        /* ... that the bus delivered too */
	size_t bus_only;         /* bus deliveries its chain lacks */
};
struct score {
	int verdict;             /* enum drill_verdict */
	char reason[SCORE_TEXT_MAX];
	char notes[SCORE_TEXT_MAX];    /* held channels the levers do not cut */
	char errors[SCORE_TEXT_MAX];   /* "; "-joined, "" when none */
	char run_id[128];
	bool bait_fired;         /* some bait event exists */
	bool bait_seen;          /* the kill path ran ("bait" master line) */
	char bait_name[64];
	uint64_t bait_ns;
	struct score_ref bait_ref;
	uint64_t cutoff_ns;      /* T0; 0 when never cut off */
	struct score_ref kill_ref;  /* the lever line time_to_kill ends at */
	double time_to_kill_ms;  /* < 0: none */
	double time_to_first_lever_ms;
	size_t agent_steps, blocked, in_flight, breaches;
	size_t leaks;
	uint64_t leak_bytes;
	struct score_item first_leak;
	struct score_channel_state ch[SCORE_CH_N];
	size_t norphans;         /* may exceed the listed ones */
	struct score_orphan orphans[32];
	size_t nbus;
	struct score_bus bus[SCORE_MAX_CHAINS + 1];
	size_t events;           /* distinct events scored */
	/* the master chain's "chain" lines: what was sealed of each sensor
	 * chain (ares verify holds them to the report's anchors) */
	struct score_sealed {
		char path[80];
		size_t entries;
		char head[EVIDENCE_HEX_BYTES];
		size_t line;
	} sealed[SCORE_MAX_CHAINS];
	size_t nsealed;
};

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
	DRILL_BEAT_LEAK,         /* traffic reached the sink */
	DRILL_BEAT_ORPHAN,       /* something still ran after the kill */
	DRILL_BEAT_COUNT         /* number of kinds (not a kind) */
};
const char *drill_beat_kind_name(enum drill_beat_kind k);

struct drill_beat {
	enum drill_beat_kind kind;
	uint64_t t_ns;           /* CLOCK_MONOTONIC (host) */
	uint64_t t_rel_ns;       /* since the drill started */
	int lever;               /* lever index for lever beats, else -1 */
	char text[256];          /* sanitized: safe to print */
	char channel[16];        /* BREACH beats: the action's channel,
	                            "model", "network", "docker" or "file"
	                            (replay_channel_name); "" otherwise */
	/* VERDICT beats: what the scorer counted from every chain (the
	 * beats before it saw only what the bus delivered); the reducer
	 * takes these as the final counts, so the screen says what `ares
	 * verify` recomputes. */
	bool scored;
	size_t breaches, leaks, orphans;
	size_t channel_breaches[4];      /* model, network, docker, file */
	/* The lab.up PHASE beat: the lab's channels (replay_lab_of_flaws),
	 * 0 on every other beat. */
	unsigned lab;
};

#define DRILL_MAX_ORPHANS 32

/* Where a drill's wall time went (drill.json "phases", docs/drill-json.md):
 * consecutive stretches of CLOCK_MONOTONIC, so they add up to its wall
 * time.  Informational: no verdict, count or check depends on them. */
enum drill_phase {
	DRILL_PHASE_SETUP = 0,   /* policy, engine, run dir, gc, bus */
	DRILL_PHASE_LAB_UP,      /* lab up, the agent still idle */
	DRILL_PHASE_AGENT,       /* agent start -> the bait event (or its end) */
	DRILL_PHASE_LEVERS,      /* bait event -> every lever fired, verified
	                            and recorded */
	DRILL_PHASE_OBSERVE,     /* the post-kill observation window */
	DRILL_PHASE_SWEEP,       /* the orphan sweep */
	DRILL_PHASE_TEARDOWN,    /* agent log, lab teardown */
	DRILL_PHASE_VERDICT,     /* sensor chains collected, scored */
	DRILL_PHASE_N
};
/* "setup", "lab_up", "agent", "levers", "observation", "sweep",
 * "teardown", "verdict" (static). */
const char *drill_phase_name(enum drill_phase ph);

struct drill_result {
	char run_id[64];
	char run_dir[1024];
	char policy[256];
	char model[64];
	uint64_t seed;
	enum drill_verdict verdict;
	char verdict_reason[SCORE_TEXT_MAX];
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
	size_t leaks;                   /* sink events: traffic that crossed */
	uint64_t leak_bytes;            /* bytes that reached the sink */
	size_t blocked;
	size_t norphans;                /* things still running after the kill */
	struct drill_orphan {
		char kind[16];          /* "container" or "process" */
		char id[72];            /* container id or pid */
		char name[128];         /* container name or command */
		char detail[128];       /* image / origin / state */
		bool removed;           /* the sweep removed it */
	} orphans[DRILL_MAX_ORPHANS];
	char evidence_path[1100];
	size_t evidence_entries;
	char evidence_head[EVIDENCE_HEX_BYTES];
	size_t in_flight;               /* agent actions between bait and the
	                                   boundary of their channel */
	struct score score;             /* what the chains say (score.c): the
	                                   fields above are copied from it */
	bool engine_lost;               /* the engine stopped answering (an
	                                   engine.lost line; verdict error) */
	char agent_kind[16];            /* "poyo", "script", "image" */
	char agent_image[256];          /* kind image: agent.image, else "" */
	char agent_image_id[80];        /* the engine's image id, else "" */
	char agent_image_digests[512];  /* RepoDigests, or "none: a local
	                                   build"; else "" */
	char runtime[72];               /* the agent's container runtime
	                                   ("runsc", "runc"); "" before lab up */
	/* presenter mode: each model turn was held this long (0: not
	 * paced); drill.json "pace_ms", report.md says so */
	unsigned pace_ms;
	/* the kill path's scheduling (docs/drill-json.md "kill_path"): the
	 * lever thread's real-time priority and the memory lock, as granted
	 * or refused; "" when no lever was pulled */
	char kill_rt[128];
	char kill_mlock[96];
	/* ms per phase (enum drill_phase) and their sum, the wall time from
	 * the start to drill.json (drill.json "phases") */
	double phase_ms[DRILL_PHASE_N];
	double wall_ms;
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
	const char *key_dir;            /* signing key dir (NULL: default;
	                                   a key is made on first use) */
	const char *model_url;          /* a real OpenAI-compatible endpoint
	                                   (overrides the policy's model.url) */
	const char *model_key_env;      /* env var holding its key */
	const char *model_name;         /* the model name reported */
	unsigned pace_ms;               /* presenter mode (--present): the
	                                   gateway holds each model turn this
	                                   long, 0..PACE_PRESENT_MS_MAX; the
	                                   deny lever is never held; recorded
	                                   in drill.start and lab.json */
	const struct docker_endpoint *engine;  /* NULL: $DOCKER_HOST (ares
	                                   trial --engine: that engine) */
	const char *engine_name;        /* with engine: its name for people
	                                   (no user, no key path), recorded
	                                   as drill.start "engine_url" */
};

/* Run one drill to its verdict.  Returns 0 when a verdict was reached
 * (see out->verdict), -1 + e when the drill could not run (engine
 * unreachable: ERRBUF_ENGINE; bad policy: ERRBUF_INPUT).  Always tears the
 * lab down unless keep_lab. */
int drill_run(const struct drill_options *o, struct drill_result *out,
    struct errbuf *e);
/*
 * drill_run in two halves, so that a caller can run the second on
 * another thread while it starts the next drill (ares trial).
 * drill_begin: the front, setup to the end of the agent phase (the kill
 * path ran when the bait fired).  -1 + e, *dp NULL, when the drill could
 * not start (as drill_run); else *dp, and 0 when the front reached its
 * end, 1 when it failed or lost the engine (finish that one first).
 * o is copied; its policy_path and runs_dir are read only here, its other
 * strings and flags until drill_finish returns, as is out.
 * drill_finish: the rest (observation window, sweep, teardown, verdict,
 * signed report), then frees dr; drill_run's return and e.  Every
 * drill_begin that returned 0 or 1 must be followed by one drill_finish.
 */
struct drill;
int drill_begin(const struct drill_options *o, struct drill_result *out,
    struct drill **dp, struct errbuf *e);
int drill_finish(struct drill *dr, struct errbuf *e);
/* The drill summary as JSON (docs/drill-json.md).  Caller deletes. */
cJSON *drill_result_json(const struct drill_result *r);
/* Exit code for a verdict (EXIT_CONTAINED, EXIT_BREACHED, ...). */
int drill_exit_code(const struct drill_result *r);

/* ------------------------------------------------------------------ */
/* gate.c - ares gate: the access diff of BASE -> HEAD and its verdict */
/* ------------------------------------------------------------------ */
/*
 * docs/cli-gate.md, docs/gate-json.md.  The diff is pure (two loaded
 * policies, and for Compose inputs the import rows); the gate then runs
 * the probe battery on HEAD, and when HEAD widens the negative control of
 * the flaws it gained and a short trial, and decides one exit code.
 * GATE_DIR holds gate.md, gate.xml, gate.json (+ .minisig, ares.pub),
 * base.yaml and head.yaml (the policies compared) and the labs' dirs.
 */
#define GATE_FORMAT        "ares-gate-v1"
#define GATE_MAX_CHANGES   64
#define GATE_TRIAL_N       6     /* default -n */
#define GATE_TRIAL_J       2     /* default -j */

enum gate_change_kind {
	GATE_CH_FLAW = 0,    /* a catalogue flaw switched on or off */
	GATE_CH_RUNTIME,     /* the agent's container runtime */
	GATE_CH_AGENT,       /* agent user / kind / image (informational) */
	GATE_CH_ACCESS,      /* a raw access of a Compose service */
};
/* One line of the access diff. */
struct gate_change {
	enum gate_change_kind kind;
	int sign;            /* +1 gained, -1 lost, 0 changed */
	bool widening;       /* it opens access the other side did not have */
	char what[160];      /* flaw id, "runtime", "agent.user", compose key */
	char area[24];       /* mounts, capabilities, networks, namespaces, ... */
	char from[200], to[200];
	char meaning[400];   /* flaw_table[].changes or words of our own */
	char flaw[32];       /* GATE_CH_ACCESS: the flaw the lab reproduces
	                        the access with, or "" */
};
struct gate_diff {
	struct gate_change changes[GATE_MAX_CHANGES];
	size_t n;
	bool truncated;      /* more than fit (counts as widening) */
	bool widens;
	char base_flaws[POLICY_MAX_FLAWS][32];
	size_t nbase;
	char head_flaws[POLICY_MAX_FLAWS][32];
	size_t nhead;
	char gained[POLICY_MAX_FLAWS][32];   /* flaws on in HEAD, off in BASE */
	size_t ngained;
};
/* The area a flaw opens ("mounts", "capabilities", "networks",
 * "namespaces", "user", "filesystem", "services", "secrets"; "access"
 * for a flaw this table does not know yet).  Static storage. */
const char *gate_flaw_area(const char *flaw);
/* Pure: d gets the access diff of base -> head (flaws, runtime, agent). */
void gate_diff_policies(const struct policy *base, const struct policy *head,
    struct gate_diff *d);
/* Append one change (bounded; past GATE_MAX_CHANGES d->truncated). */
void gate_diff_add(struct gate_diff *d, enum gate_change_kind kind, int sign,
    bool widening, const char *what, const char *area, const char *from,
    const char *to, const char *meaning);
struct import_result;
/* Pure: append to d the raw accesses of a Compose service that the import
 * rows mark as widening, gained (in head, not in base: widening) or lost,
 * matched by compose key (without list indexes) and value. */
void gate_diff_imports(struct gate_diff *d, const struct import_result *base,
    const struct import_result *head);
/* Whether a failing core row of HEAD is explained by an access BASE
 * already had: the row detects a flaw on in BASE (flaw_table[].probes).
 * why (may be NULL) gets those flaws. */
bool gate_row_explained(const struct gate_diff *d, const char *row,
    char *why, size_t whylen);

struct gate_input {
	char source[1024];   /* as given, or "REF:path" for --git-base */
	char kind[8];        /* "policy" or "compose" */
	char blake2b[EVIDENCE_HEX_BYTES];   /* of the file read */
};
struct gate_trial_breach {
	size_t index;
	char run_id[64];
	bool gained;         /* attributed to a gained flaw, or to none */
	char flaws[160];     /* the flaws the evidence proves were used */
};
#define GATE_MAX_BREACHES 64
struct gate {
	char id[64];
	char dir[4096];
	struct gate_input base, head;
	char git_ref[256];               /* "" without --git-base */
	char service[128];               /* "" for policy inputs */
	char agent[16];                  /* compose import agent */
	struct gate_diff diff;
	char *base_import, *head_import; /* the mapping tables (compose) */
	/* the battery on HEAD */
	struct probe_report *probe;      /* NULL when it did not run */
	bool probe_lab_failed;           /* the lab did not come up */
	char probe_error[256];
	/* the negative control of the gained flaws (widening only) */
	bool nc_planned, nc_full;
	struct probe_nc_item *nc;
	size_t nnc;
	char nc_error[256];
	/* the short trial of HEAD (widening only) */
	bool trial_planned;
	size_t trial_n, trial_j;
	struct trial *trial;             /* NULL when it did not run */
	char trial_error[256];
	struct gate_trial_breach breaches[GATE_MAX_BREACHES];
	size_t nbreaches, nbreach_gained;
	/* the verdict (gate_decide) */
	int exit_code;
	char result[24];                 /* no-new-breach-path, new-breach-path,
	                                    not-exercised, error */
	char new_rows[512];              /* core rows failing on HEAD that BASE
	                                    does not explain ("a, b") */
	char sentence[600];
	char key_id[SIGN_KEYID_HEX];
};
/* Pure over g: exit code, result, new_rows and the sentence (docs/cli-
 * gate.md "Exit codes"). */
void gate_decide(struct gate *g);

struct gate_options {
	const char *base_path;     /* BASE file (NULL with git_ref) */
	const char *head_path;     /* HEAD file */
	const char *git_ref;       /* BASE = head_path as of this git ref */
	const char *service;       /* compose inputs: the service */
	const char *agent;         /* compose import agent (NULL: "poyo") */
	size_t n, jobs;            /* the trial (0: GATE_TRIAL_N / _J) */
	bool full_nc;              /* the negative control of every flaw */
	const char *out_dir;       /* NULL: RUNS/gate-<id> */
	const char *runs_dir;      /* NULL: $ARES_RUNS or ./runs */
	const char *key_dir;
	volatile sig_atomic_t *cancel;
	void (*progress)(void *ctx, const char *line);   /* may be NULL */
	void *progress_ctx;
};
/* Run the gate and write GATE_DIR's files (signed gate.json).  0 when it
 * reached a verdict (g->exit_code), -1 + e when it could not start: bad
 * input (ERRBUF_INPUT, file:line:col), no engine (ERRBUF_ENGINE).
 * gate_free(g). */
int gate_run(const struct gate_options *o, struct gate *g, struct errbuf *e);
void gate_free(struct gate *g);
char *gate_markdown(const struct gate *g);   /* caller frees */
char *gate_junit(const struct gate *g);      /* caller frees */
cJSON *gate_json(const struct gate *g);      /* caller deletes */
/* Whether DIR/gate.json exists. */
bool gate_dir_is(const char *dir);
/* ares verify on a gate dir: the signature of gate.json, its schema and
 * trusted comment, the probe run, the negative control's labs and the
 * trial verified on their own (same key), and the verdict recomputed
 * from them.  Same contract as report_verify_dir. */
int gate_verify_dir(const char *dir, const char *pub_path,
    struct report_verify_result *res, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* import.c - ares policy import: a Compose service or a container     */
/* ------------------------------------------------------------------ */
/*
 * Reads the containment a team really runs (a Compose file's service, or
 * a container's inspect) and writes the ares policy that reproduces it in
 * a lab: image, command, env and user into agent:, each access into the
 * flaw it maps to (docs/import.md).  Every key becomes one row of the
 * mapping table.
 */
struct import_opts {
	bool strict;          /* refuse a widening access not reproduced */
	const char *agent;    /* "image" (NULL: default), "poyo", "script:FILE" */
	const char *out_path; /* where the policy will be written (imported.compose
	                         is relative to its folder); NULL: the cwd */
};
struct import_row {
	char *key;            /* compose key path, "services.agent.volumes[1]" */
	char *value;          /* the value as written, one line, bounded
	                         ("<redacted>" for a credential) */
	char *maps_to;        /* "flaw docker-socket", "agent.image", "runtime",
	                         or NULL (no access change / not reproduced) */
	char *note;           /* why not reproduced / extra words, or NULL */
	const char *flaw;     /* flaw id when it maps to a flaw, else NULL */
	bool widening;        /* an access beyond the lab's sealed default */
	bool reproduced;
	size_t line, col, end_line;  /* 1-based span of the entry in the file
	                                (the key of a mapping entry, the item of
	                                a sequence); 0: absent key, --container */
};
struct import_result {
	struct import_row *rows;
	size_t nrows;
	char *policy_yaml;    /* the policy text (loads with policy_load);
	                         NULL when --strict refused */
	char *source;         /* the compose path or "container NAME" */
	char *service;        /* the service (or the container's name) */
	size_t nrefused;      /* rows --strict refused (then the call is -1) */
};
/* Import service of the Compose file path.  0, or -1 + e: bad input
 * ("file:line:col: services.x.key: problem", ERRBUF_INPUT); with
 * o->strict a widening access not reproduced: ERRBUF_INPUT with code
 * and out->nrefused > 0 (the rows stay in out).  The caller
 * import_result_free()s out either way. */
int import_compose(const char *path, const char *service,
    const struct import_opts *o, struct import_result *out, struct errbuf *e);
/* The same from GET /containers/NAME/json (and its networks).  -1 + e
 * (ERRBUF_ENGINE: unreachable; ERRBUF_INPUT: no such container). */
struct docker;
int import_container(struct docker *d, const char *name,
    const struct import_opts *o, struct import_result *out, struct errbuf *e);
void import_result_free(struct import_result *r);
/* The mapping table as text, one row a line, every line starting "# "
 * (so a table followed by the policy is itself a valid policy).
 * xmalloc'd. */
char *import_table_text(const struct import_result *r);

/* ------------------------------------------------------------------ */
/* sshkey.c - decoy SSH keys (OpenSSH formats)                          */
/* ------------------------------------------------------------------ */
/* A fresh random ed25519 key.  priv_text: the unencrypted
 * "openssh-key-v1" private key file as ssh-keygen writes it ("-----BEGIN
 * OPENSSH PRIVATE KEY-----", base64 at 70 columns); pub_line:
 * "ssh-ed25519 AAAA... comment" (no newline; no comment part when comment
 * is "" or NULL).  0, or -1 + e (a comment with a newline or over 1024
 * bytes).  The caller frees both (the private text holds the secret). */
int sshkey_ed25519_new(const char *comment, char **priv_text, char **pub_line,
    struct errbuf *e);
/* The public key blob of a public line "TYPE BASE64 [comment]" (the
 * blob's own type must be TYPE).  0 + *blob (caller frees) and *len, or
 * -1 + e (ERRBUF_INPUT). */
int sshkey_pub_blob(const char *line, uint8_t **blob, size_t *len,
    struct errbuf *e);
/* "SHA256:" + unpadded base64 of SHA-256(blob), as ssh-keygen -l prints
 * it.  xmalloc'd. */
char *sshkey_fingerprint(const uint8_t *blob, size_t len);
/* The fingerprint of a public line, or NULL + e.  xmalloc'd. */
char *sshkey_pub_fingerprint(const char *line, struct errbuf *e);

/* ------------------------------------------------------------------ */
/* pace.c - pacing for an audience (display only, no terminal)         */
/* ------------------------------------------------------------------ */
/*
 * The console shows beats at a pace people can follow: marker beats (bait,
 * lever fired / verified / failed, breach, leak, orphan, verdict) stay on
 * screen for a while, in a replay and live.  Display only: what is shown
 * keeps the beats' real times, and nothing here delays a drill.  Presenter
 * mode (--present) is the other half: the lab's gateway holds each model
 * turn PACE_PRESENT_MS before forwarding it (docs/cli-drill.md); the deny
 * lever is never held.
 */
#define PACE_HOLD_NS        1200000000ull  /* a marker beat at x1 */
#define PACE_HOLD_MIN_NS     300000000ull  /* a held beat, at any speed */
#define PACE_GAP_MIN_NS      150000000ull  /* any beat in a replay, x1 */
#define PACE_GAP_MAX_NS     1500000000ull
#define PACE_LIVE_LAG_NS    3000000000ull  /* live: at most this behind */
#define PACE_QUEUE_MAX      512
#define PACE_PRESENT_MS     1000           /* --present's default */
#define PACE_PRESENT_MS_MAX 5000

/* Is a beat of kind k a marker (held on screen, on the timeline)? */
bool pace_is_marker(enum drill_beat_kind k);
/* How long a replay at speed x (> 0) shows a beat of kind k at t_ns when
 * the next one is at next_ns: the real gap kept between PACE_GAP_MIN_NS
 * and PACE_GAP_MAX_NS, divided by x; a marker at least PACE_HOLD_NS / x
 * and never under PACE_HOLD_MIN_NS. */
uint64_t pace_gap_ns(uint64_t t_ns, uint64_t next_ns,
    enum drill_beat_kind k, double x);

/* The live display queue: beats in delivery order, each shown when its
 * turn comes; a marker holds the beats after it for PACE_HOLD_NS, less
 * when the queue is more than PACE_LIVE_LAG_NS behind the beat's arrival
 * (it catches up); once a verdict beat is in (or pace_queue_flush), every
 * beat is due at once.  A plain value (UI thread). */
struct pace_queue {
	struct drill_beat q[PACE_QUEUE_MAX];
	uint64_t arrived[PACE_QUEUE_MAX];   /* when pushed (caller's clock) */
	size_t head, count;
	uint64_t hold_until;                /* nothing due before */
	bool flush;                         /* everything due now */
};
void pace_queue_init(struct pace_queue *q);
/* Add b, arrived at now.  false when the queue is full (nothing added:
 * take one with pace_queue_shift first). */
bool pace_queue_push(struct pace_queue *q, const struct drill_beat *b,
    uint64_t now);
/* The next beat into *out when it is due at now: true (a marker starts
 * its hold); false when none is due. */
bool pace_queue_pop(struct pace_queue *q, uint64_t now,
    struct drill_beat *out);
/* The first beat into *out whatever its hold (a full queue): true, or
 * false when empty. */
bool pace_queue_shift(struct pace_queue *q, struct drill_beat *out);
/* Every beat due at once from now on (the drill ended). */
void pace_queue_flush(struct pace_queue *q);
/* When the next beat is due (now or later: at least 1), 0 when empty. */
uint64_t pace_queue_due(const struct pace_queue *q);

/* The marker timeline: one character per column of a w-column track. */
/* The column (0..w-1) of beat idx of total beats (by index). */
int pace_timeline_col(size_t idx, size_t total, int w);
/* The letter of marker kind k: 'B' bait, 'f' fired, 'v' verified, '!'
 * failed, 'X' breach, 'L' leak, 'O' orphan, 'V' verdict; 0 for a beat
 * that is no marker. */
char pace_timeline_glyph(enum drill_beat_kind k);
/* Put the letter of beat idx (kind k) of total into cells[0..w) unless
 * its column holds one that weighs more (breach, orphan, leak, bait,
 * failed, verified, fired, verdict). */
void pace_timeline_put(char *cells, int w, size_t idx, size_t total,
    enum drill_beat_kind k);

/* ------------------------------------------------------------------ */
/* chart.c - a rate's bar with its interval, a histogram, as cells     */
/* ------------------------------------------------------------------ */
/*
 * Pure arithmetic (no curses): the console and `ares trial` only put the
 * strings on screen.  A bar of w cells over [0, 1]: cells wholly below
 * the interval are SOLID, the interval's cells (from the one holding lo
 * to the one holding hi, at least the one holding p) are CI_LOW up to the
 * point estimate p (by the cell's middle) and CI_HIGH after it, the rest
 * EMPTY.  UTF-8: full block, dark shade, light shade, space; ASCII: '#',
 * '=', '-', ' '.
 */
#define CHART_MAX_CELLS 256
#define CHART_MAX_BINS  32
enum chart_cell { CHART_EMPTY = 0, CHART_SOLID, CHART_CI_LOW, CHART_CI_HIGH };
struct chart_bar {
	int w;
	unsigned char cell[CHART_MAX_CELLS];   /* enum chart_cell */
	int lo_cell, hi_cell;                  /* the interval's first/last */
};
/* The bar of estimate p with interval [lo, hi] in w cells (values are
 * clamped into [0, 1]; lo > p or hi < p are moved to p).  -1 (out
 * zeroed) when w is not 1..CHART_MAX_CELLS or a value is NaN. */
int chart_bar(double p, double lo, double hi, int w, struct chart_bar *out);
/* b as text (utf8: block characters, else ASCII) into out (n bytes, NUL
 * always; whole cells only).  The bytes written. */
size_t chart_bar_text(const struct chart_bar *b, bool utf8, char *out,
    size_t n);
/* A histogram over the finite non-negative values of v: nbins equal bins
 * from the smallest to the largest (the last closed), one bin when they
 * are all equal or only one; h->n counts the values used (0: no bins). */
struct chart_hist {
	size_t n, nbins, max;          /* values, bins, the largest count */
	double lo, width;              /* bin b is [lo + b width, ...) */
	size_t count[CHART_MAX_BINS];
};
/* -1 when nbins is not 1..CHART_MAX_BINS. */
int chart_hist(const double *v, size_t n, size_t nbins, struct chart_hist *h);
/* The lower edge of bin b (b = nbins: the top edge, the largest value). */
double chart_hist_edge(const struct chart_hist *h, size_t b);
/* The length in eighths of a cell of a horizontal bar of count in w cells
 * when max fills them: 0 for 0, at least 1 for any count > 0. */
int chart_hbar_eighths(size_t count, size_t max, int w);
/* That bar as text: full blocks and one eighth block (utf8), or '#' per
 * cell rounded to the nearest, at least one for a count > 0 (ASCII).
 * NUL-terminated in out (n bytes); the bytes written. */
size_t chart_hbar_text(size_t count, size_t max, int w, bool utf8, char *out,
    size_t n);

/* ------------------------------------------------------------------ */
/* recorded.c - what the console lists of a recorded dir (unverified)  */
/* ------------------------------------------------------------------ */
/*
 * Read bounded (report.json, fix.json 1 MiB; trial.json 16 MiB; texts
 * 64 KiB), never through a symlink; strings sanitized and cut, numbers
 * range-checked, ids checked before they name a directory.  Not a
 * verdict: the screens that open a dir run its verifier too.
 */
enum recorded_kind { RECORDED_RUN = 0, RECORDED_TRIAL, RECORDED_FIX,
    RECORDED_PROBE };
struct recorded_info {
	int kind;                  /* enum recorded_kind */
	char verdict[32];          /* run: its verdict; trial: the word of
	                              its exit code; fix: its outcome; probe:
	                              held / failed; "no report" */
	char policy[64];           /* the policy's file name, no .yaml */
	double ttk_ms;             /* run: time to kill; trial: the median;
	                              <0 none */
	int64_t when;              /* Unix seconds (generated_at, else the
	                              file's mtime); -1 unknown */
	size_t n, done;            /* trial: N and finished; fix: runs */
	bool complete;             /* trial */
};
/* What dir is and says.  0, or -1 when its summary file cannot be read
 * (out->verdict says so, out->kind is still set). */
int recorded_info(const char *dir, struct recorded_info *out);
/* "12s ago", "3 min ago", "3 h ago", "2 d ago", "4 mo ago"; "-" when
 * then < 0. */
void recorded_age(int64_t then, int64_t now, char *out, size_t n);
/* DIR/trial.json into t (id, policy, n, j, level, complete, the runs:
 * index, run id, run_dir "runs/<id>", verdict, reason, bait, leaks, time
 * to kill), then trial_summarize(t): the rates are recomputed from the
 * runs, not read.  *when (may be NULL) as recorded_info's.  -1 + e
 * (ERRBUF_INPUT).  trial_free(t) either way. */
int recorded_trial_load(const char *dir, struct trial *t, int64_t *when,
    struct errbuf *e);
#define RECORDED_FIX_RUNS     32
#define RECORDED_FIX_REMOVED  8
struct recorded_fix_run {
	char role[16], run_id[64], verdict[32], variant[40];
	double ttk_ms;             /* <0 none */
	char dir[1100];            /* where its run dir is, "" not found */
};
struct recorded_fix {
	char dir[1100];
	char fix_id[64], outcome[32], reason[512], policy[80];
	int64_t when;
	char removed[RECORDED_FIX_REMOVED][48];
	size_t nremoved;
	struct recorded_fix_run runs[RECORDED_FIX_RUNS];
	size_t nruns;
	char *patch;               /* policy.patch, or NULL */
	char *pr;                  /* pr.md (else attempt.md), or NULL */
	char pr_name[16];          /* which of the two */
};
/* DIR/fix.json, policy.patch and pr.md / attempt.md into f.  A run's dir
 * is RUNS/<run id> next to the fix dir, else the absolute run_dir
 * fix.json names, when it holds an evidence.jsonl.  -1 + e.
 * recorded_fix_free(f) either way. */
int recorded_fix_load(const char *dir, struct recorded_fix *f,
    struct errbuf *e);
void recorded_fix_free(struct recorded_fix *f);

#endif /* DRILL_CORE_H */
