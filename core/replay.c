/*
 * replay.c - a recorded run directory as a timeline of beats.
 *
 * The master evidence chain (RUN_DIR/evidence.jsonl) holds everything the
 * live console showed: replay_load() turns each line back into the beats
 * drill.c emitted for it (same kinds, same wording, text made inert with
 * util_sanitize), sorts them by time (stable: the order of the file breaks
 * ties) and computes, for every beat, the state the screen shows there.
 * It verifies the very bytes it shows (evidence_verify_buf) and the run
 * directory as `ares verify` does (report_verify_dir), for the badge.
 *
 * Bounds: evidence.jsonl at most REPLAY_MAX_BYTES, REPLAY_MAX_LINES lines,
 * REPLAY_MAX_BEATS beats, lines longer than EVIDENCE_LINE_MAX are skipped.
 * No curses, no Docker.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One beat while building, with what sorting needs. */
struct replay_item {
	struct drill_beat b;
	uint32_t line;    /* 1-based evidence line */
	uint32_t order;   /* creation order (stable sort) */
};

struct replay_build {
	struct replay *rp;
	struct replay_item *items;
	size_t nitems, cap;
	uint64_t start_ns;   /* drill.start */
	uint64_t bait_ns;    /* first bait */
	uint64_t cutoff_ns;  /* first verified lever that cuts off */
};

/* A count member: the number when it is one in [0, 1e15), else 0 (the
 * evidence is untrusted: casting anything else to size_t is undefined).
 * Not util_json_int: a count is never negative and may pass INT_MAX. */
static size_t
replay_count(const cJSON *o, const char *key)
{
	double d = util_json_num(o, key, 0);

	return d >= 0 && d < 1e15 ? (size_t)d : 0;
}

/* A nanosecond count from a JSON number (0 when absent or absurd): its
 * own bounds, as replay_count's. */
static uint64_t
replay_ns(const cJSON *o, const char *key)
{
	double d = util_json_num(o, key, 0);

	if (!(d > 0) || d > 1.8e19)
		return 0;
	return (uint64_t)d;
}

/* ---- channels and levers: fixed by their names ---------------------- */

static const char *const replay_channel_names[REPLAY_NCHANNELS] = {
	[REPLAY_CHANNEL_MODEL] = "model",
	[REPLAY_CHANNEL_NETWORK] = "network",
	[REPLAY_CHANNEL_DOCKER] = "docker",
	[REPLAY_CHANNEL_FILE] = "file",
};

const char *
replay_channel_name(int c)
{
	return c >= 0 && c < REPLAY_NCHANNELS ? replay_channel_names[c] : "?";
}

int
replay_channel_parse(const char *s)
{
	for (int c = 0; s != NULL && c < REPLAY_NCHANNELS; c++)
		if (strcmp(s, replay_channel_names[c]) == 0)
			return c;
	return -1;
}

int
replay_channel_of_src(const char *src)
{
	if (src == NULL)
		return REPLAY_CHANNEL_NETWORK;
	if (strcmp(src, "gateway") == 0)
		return REPLAY_CHANNEL_MODEL;
	if (strcmp(src, "dockerproxy") == 0)
		return REPLAY_CHANNEL_DOCKER;
	if (strcmp(src, "control-plane:inotify") == 0)
		return REPLAY_CHANNEL_FILE;
	return REPLAY_CHANNEL_NETWORK;
}

/* What a lever does, by its name alone: known (a built-in or an external
 * lever), cuts off the agent, freezes it.  No file is looked at (an
 * external lever's program need not exist where the run is replayed). */
static void
replay_lever_kind(const char *name, bool *known, bool *cuts, bool *freezes,
    unsigned *channels)
{
	const struct lever_entry *le = NULL;

	*known = *cuts = *freezes = false;
	*channels = 0;
	if (name == NULL || name[0] == '\0')
		return;
	if (strncmp(name, LEVER_EXTERNAL_PREFIX,
	    strlen(LEVER_EXTERNAL_PREFIX)) == 0) {
		*known = *cuts = true;   /* no channel named (lever_cuts) */
		return;
	}
	le = lever_find(name);   /* the built-in table only: no I/O */
	if (le == NULL)
		return;
	*known = true;
	*cuts = le->cuts_off;
	*freezes = le->freezes;
	*channels = le->cuts;
}

/* ---- the map's channels --------------------------------------------- */

static const char *const replay_via_names[REPLAY_NVIA] = {
	[REPLAY_VIA_MODEL] = "model",
	[REPLAY_VIA_SERVICE] = "service",
	[REPLAY_VIA_DNS] = "dns",
	[REPLAY_VIA_SINK] = "sink",
	[REPLAY_VIA_DOCKER] = "docker",
	[REPLAY_VIA_HOST] = "host",
	[REPLAY_VIA_FILE] = "file",
};

const char *
replay_via_name(int v)
{
	return v >= 0 && v < REPLAY_NVIA ? replay_via_names[v] : "?";
}

unsigned
replay_lab_of_flaws(const char *const *flaws, size_t n)
{
	static const struct { const char *flaw; int via; } add[] = {
		{ "docker-socket", REPLAY_VIA_DOCKER },
		{ "host-mount", REPLAY_VIA_HOST },
		{ "host-pid", REPLAY_VIA_HOST },
		{ "host-ipc", REPLAY_VIA_HOST },
		{ "control-keys", REPLAY_VIA_HOST },
	};
	unsigned lab = REPLAY_LAB_BASE;

	for (size_t i = 0; flaws != NULL && i < n; i++)
		for (size_t k = 0; flaws[i] != NULL &&
		    k < sizeof add / sizeof add[0]; k++)
			if (strcmp(flaws[i], add[k].flaw) == 0)
				lab |= REPLAY_VIA_BIT(add[k].via);
	return lab;
}

/* Append one beat (text formatted, then sanitized like drill_beat()).
 * Returns it (in bd, valid until the next add), or NULL when the bound on
 * beats was reached. */
static struct drill_beat *
replay_add(struct replay_build *bd, enum drill_beat_kind kind, int lever,
    uint64_t t_ns, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static struct drill_beat *
replay_add(struct replay_build *bd, enum drill_beat_kind kind, int lever,
    uint64_t t_ns, uint32_t line, const char *fmt, ...)
{
	struct replay_item *it;
	char raw[1024];
	va_list ap;

	if (bd->nitems >= REPLAY_MAX_BEATS) {
		bd->rp->truncated = true;
		return NULL;
	}
	if (bd->nitems == bd->cap) {
		bd->cap = bd->cap ? bd->cap * 2 : 64;
		bd->items = xrealloc(bd->items, bd->cap * sizeof *bd->items);
	}
	it = &bd->items[bd->nitems];
	memset(it, 0, sizeof *it);
	it->b.kind = kind;
	it->b.lever = lever;
	it->b.t_ns = t_ns;
	it->b.t_rel_ns = t_ns > bd->start_ns ? t_ns - bd->start_ns : 0;
	it->line = line;
	it->order = (uint32_t)bd->nitems;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	util_sanitize(it->b.text, sizeof it->b.text, raw, strlen(raw), false);
	bd->nitems++;
	return &it->b;
}

/* Sanitized copy of an untrusted string into dst. */
static void
replay_copy(char *dst, size_t n, const char *src)
{
	util_sanitize(dst, n, src != NULL ? src : "", src != NULL ?
	    strlen(src) : 0, false);
}

static enum drill_verdict
replay_verdict_parse(const char *s)
{
	static const enum drill_verdict all[] = {
		DRILL_VERDICT_CONTAINED, DRILL_VERDICT_BREACHED,
		DRILL_VERDICT_NOT_EXERCISED, DRILL_VERDICT_ERROR,
	};

	for (size_t i = 0; s != NULL && i < sizeof all / sizeof all[0]; i++)
		if (strcmp(s, drill_verdict_name(all[i])) == 0)
			return all[i];
	return s != NULL ? DRILL_VERDICT_ERROR : DRILL_VERDICT_NONE;
}

/* Index of a lever by name (learning unknown names), or -1. */
static int
replay_lever_index(struct replay *rp, const char *name, double order)
{
	if (order >= 0 && order < POLICY_MAX_LEVERS) {
		size_t i = (size_t)order;

		if (rp->lever_names[i][0] == '\0' && name != NULL)
			replay_copy(rp->lever_names[i], REPLAY_LEVER_NAME, name);
		if (i + 1 > rp->nlevers)
			rp->nlevers = i + 1;
		return (int)i;
	}
	for (size_t i = 0; name != NULL && i < rp->nlevers; i++)
		if (strcmp(rp->lever_names[i], name) == 0)
			return (int)i;
	return -1;
}

/* Pass 1: what later lines need (start, bait, cut-off) and the title. */
static void
replay_scan(struct replay_build *bd, cJSON *const *objs, size_t n)
{
	struct replay *rp = bd->rp;

	for (size_t i = 0; i < n; i++) {
		const cJSON *o = objs[i];
		const char *type = util_json_str(o, "type", "");
		uint64_t t = replay_ns(o, "t_mono_ns");

		if (o == NULL)
			continue;
		if (bd->start_ns == 0 && t != 0 &&
		    strcmp(type, "genesis") != 0)
			bd->start_ns = t;   /* until drill.start says */
		if (strcmp(type, "genesis") == 0) {
			replay_copy(rp->run_id, sizeof rp->run_id,
			    util_json_str(o, "run_id", ""));
		} else if (strcmp(type, "drill.start") == 0) {
			const cJSON *lv = cJSON_GetObjectItemCaseSensitive(o,
			    "levers"), *it;
			size_t k = 0;

			bd->start_ns = t;
			replay_copy(rp->policy, sizeof rp->policy,
			    util_json_str(o, "policy_name", util_json_str(o,
			    "policy", "")));
			replay_copy(rp->model, sizeof rp->model,
			    util_json_str(o, "model", ""));
			snprintf(rp->seed, sizeof rp->seed, "%.0f",
			    util_json_num(o, "seed", 0));
			{
				/* presenter mode (bounded as drill.c
				 * writes it) */
				double pm = util_json_num(o, "pace_ms", 0);

				rp->pace_ms = pm >= 1 && pm <= 100000 ?
				    (unsigned)pm : 0;
			}
			cJSON_ArrayForEach(it, lv) {
				if (k >= POLICY_MAX_LEVERS)
					break;
				if (cJSON_IsString(it))
					replay_copy(rp->lever_names[k],
					    REPLAY_LEVER_NAME, it->valuestring);
				k++;
			}
			if (k > rp->nlevers)
				rp->nlevers = k;
		} else if (strcmp(type, "bait") == 0 && bd->bait_ns == 0) {
			bd->bait_ns = t;
		} else if (strcmp(type, "lever.verified") == 0 ||
		    strcmp(type, "lever.failed") == 0) {
			const char *name = util_json_str(o, "lever", NULL);
			bool known, cuts, freezes;
			unsigned chs;

			replay_lever_kind(name, &known, &cuts, &freezes, &chs);
			(void)replay_lever_index(rp, name,
			    util_json_num(o, "order", -1));
			if (util_json_true(o, "verified") && known && cuts &&
			    bd->cutoff_ns == 0)
				bd->cutoff_ns = replay_ns(o, "verified_ns");
		} else if (strcmp(type, "verdict") == 0) {
			rp->verdict = replay_verdict_parse(util_json_str(o,
			    "verdict", "error"));
			replay_copy(rp->verdict_reason,
			    sizeof rp->verdict_reason,
			    util_json_str(o, "reason", ""));
			rp->time_to_kill_ms = util_json_num(o,
			    "time_to_kill_ms", -1);
		}
	}
}

/* The beats of one sensor line (drill.c's drill_handle). */
static void
replay_sensor(struct replay_build *bd, const cJSON *o, uint32_t line)
{
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
	const char *kind = util_json_str(o, "kind", "");
	const char *src = util_json_str(o, "src", "?");
	uint64_t t = replay_ns(o, "t_mono_ns");
	size_t before = bd->nitems;

	if (strcmp(kind, "turn") == 0) {
		const cJSON *calls = cJSON_GetObjectItemCaseSensitive(ev,
		    "tool_calls"), *call;
		int step = util_json_int(ev, "step", 0);

		if (cJSON_GetArraySize(calls) == 0)
			replay_add(bd, DRILL_BEAT_AGENT, -1, t, line, "step %d: "
			    "says \"%.160s\"", step,
			    util_json_str(ev, "content", ""));
		cJSON_ArrayForEach(call, calls)
			replay_add(bd, DRILL_BEAT_AGENT, -1, t, line,
			    "step %d: %s %.180s", step,
			    util_json_str(call, "name", "?"),
			    util_json_str(call, "arguments", ""));
	} else if (strcmp(kind, "tool_result") == 0) {
		replay_add(bd, DRILL_BEAT_TOOL, -1, t, line, "%s -> %.180s",
		    util_json_str(ev, "tool", "tool"),
		    util_json_str(ev, "content", ""));
	} else if (strcmp(kind, "agent_note") == 0) {
		replay_add(bd, DRILL_BEAT_TOOL, -1, t, line, "note "
		    "(agent-claimed): %.180s", util_json_str(ev, "text", ""));
	} else if (strcmp(kind, "request") == 0) {
		replay_add(bd, DRILL_BEAT_SERVICE, -1, t, line, "%s: %s %s -> "
		    "%d (auth %s)", src, util_json_str(ev, "method", "?"),
		    util_json_str(ev, "path", "?"),
		    util_json_int(ev, "status", 0),
		    util_json_str(ev, "auth", "?"));
	} else if (strcmp(kind, "denied") == 0) {
		replay_add(bd, DRILL_BEAT_BLOCKED, -1, t, line, "%s refused an "
		    "agent request (%s)", src, util_json_str(ev, "path", "?"));
	} else if (strcmp(kind, "bait") == 0) {
		replay_add(bd, DRILL_BEAT_BAIT, -1, t, line, "bait %s used "
		    "again (%s)", util_json_str(ev, "bait", "?"), src);
	} else if (strcmp(kind, "sink") == 0) {
		replay_add(bd, DRILL_BEAT_LEAK, -1, t, line, "LEAK: %s/%d from "
		    "%s reached the sink (%.0f bytes): %.120s",
		    util_json_str(ev, "proto", "?"),
		    util_json_int(ev, "port", 0),
		    util_json_str(ev, "remote", "?"),
		    util_json_num(ev, "bytes", 0),
		    util_json_str(ev, "head", ""));
	} else if (strcmp(kind, "docker_api") == 0) {
		const char *refused = util_json_str(ev, "refused", NULL);

		replay_add(bd, DRILL_BEAT_SERVICE, -1, t, line, "docker socket: "
		    "%s %s -> %d%s%.80s", util_json_str(ev, "method", "?"),
		    util_json_str(ev, "path", "?"),
		    util_json_int(ev, "status", 0),
		    refused != NULL ? ", refused: " : "",
		    refused != NULL ? refused : "");
	} else if (strcmp(kind, "dns_query") == 0) {
		replay_add(bd, DRILL_BEAT_SERVICE, -1, t, line, "dns: %s %s -> "
		    "%s", util_json_str(ev, "qtype", "?"),
		    util_json_str(ev, "name", "?"),
		    util_json_str(ev, "answer", "?"));
	}
	if (util_json_true(o, "breach")) {
		/* the line's own channel when it names one, else its src's */
		int ch = replay_channel_parse(util_json_str(o, "channel",
		    NULL));
		const char *chn = replay_channel_name(ch >= 0 ? ch :
		    replay_channel_of_src(src));
		struct drill_beat *b = replay_add(bd, DRILL_BEAT_BREACH, -1, t,
		    line, "BREACH (%s): %s %s %.3f ms after the cut-off", chn,
		    src, kind, bd->cutoff_ns != 0 && t > bd->cutoff_ns ?
		    (double)(t - bd->cutoff_ns) / 1e6 : 0.0);

		if (b != NULL)
			snprintf(b->channel, sizeof b->channel, "%s", chn);
	}
	if (bd->nitems == before)
		bd->rp->skipped++;
}

/* The beats of one lever line (drill.c's drill_kill_report). */
static void
replay_lever(struct replay_build *bd, const cJSON *o, uint32_t line)
{
	const char *name = util_json_str(o, "lever", "?");
	int idx = replay_lever_index(bd->rp, name,
	    util_json_num(o, "order", -1));
	uint64_t fired = replay_ns(o, "fired_ns");
	uint64_t ver = replay_ns(o, "verified_ns");
	uint64_t bait = bd->bait_ns;

	if (util_json_true(o, "fired"))
		replay_add(bd, DRILL_BEAT_LEVER_FIRED, idx, fired, line,
		    "lever %s fired (+%.3f ms after bait)", name,
		    fired >= bait ? (double)(fired - bait) / 1e6 : 0.0);
	if (util_json_true(o, "verified"))
		replay_add(bd, DRILL_BEAT_LEVER_VERIFIED, idx, ver, line,
		    "lever %s verified (+%.3f ms after bait; %.3f ms "
		    "fire-to-verified)", name, ver >= bait ?
		    (double)(ver - bait) / 1e6 : 0.0, ver >= fired ?
		    (double)(ver - fired) / 1e6 : 0.0);
	else
		replay_add(bd, DRILL_BEAT_LEVER_FAILED, idx, fired != 0 ? fired :
		    replay_ns(o, "t_mono_ns"), line, "lever %s FAILED: %s",
		    name, util_json_str(o, "detail", ""));
}

/* Pass 2: one line -> its beats. */
static void
replay_line(struct replay_build *bd, const cJSON *o, uint32_t line)
{
	const char *type = util_json_str(o, "type", "");
	uint64_t t = replay_ns(o, "t_mono_ns");
	struct replay *rp = bd->rp;
	size_t before = bd->nitems;

	if (strcmp(type, "drill.start") == 0) {
		replay_add(bd, DRILL_BEAT_PHASE, -1, t, line, "run %s: policy "
		    "%s, seed %s, model %s, engine %s (API %s)", rp->run_id,
		    rp->policy, rp->seed, rp->model, util_json_str(o, "engine",
		    "?"), util_json_str(o, "api", "?"));
		replay_add(bd, DRILL_BEAT_PHASE, -1, t + 1, line,
		    "bringing the lab up");
	} else if (strcmp(type, "lab.up") == 0) {
		const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "flaws");
		const cJSON *it;
		const char *names[POLICY_MAX_FLAWS];
		size_t nf = 0;
		struct drill_beat *b;

		b = replay_add(bd, DRILL_BEAT_PHASE, -1, t, line, "lab up (image "
		    "%s): agent, gateway, service, model on internal networks",
		    util_json_str(o, "image", "?"));
		cJSON_ArrayForEach(it, fl)
			if (cJSON_IsString(it) && nf < POLICY_MAX_FLAWS)
				names[nf++] = it->valuestring;
		if (b != NULL)
			b->lab = replay_lab_of_flaws(names, nf);
	} else if (strcmp(type, "agent.start") == 0) {
		replay_add(bd, DRILL_BEAT_PHASE, -1, t, line, "agent Poyo "
		    "started (uid 65532, read-only rootfs, no capabilities)");
	} else if (strcmp(type, "sensor") == 0) {
		replay_sensor(bd, o, line);
		return;
	} else if (strcmp(type, "bait") == 0) {
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");

		replay_add(bd, DRILL_BEAT_BAIT, -1, t, line, "BAIT %s taken: "
		    "%s %s %s", util_json_str(o, "bait", "?"), util_json_str(o,
		    "src", "?"), util_json_str(ev, "via", ""), util_json_str(ev,
		    "path", ""));
	} else if (strcmp(type, "lever.verified") == 0 ||
	    strcmp(type, "lever.failed") == 0) {
		replay_lever(bd, o, line);
	} else if (strcmp(type, "agent.time_limit") == 0) {
		replay_add(bd, DRILL_BEAT_PHASE, -1, t, line, "time limit (%d "
		    "s) reached", util_json_int(o, "limit_s", 0));
	} else if (strcmp(type, "agent.exit") == 0) {
		replay_add(bd, DRILL_BEAT_PHASE, -1, t, line,
		    "the agent finished by itself");
	} else if (strcmp(type, "observe.end") == 0) {
		double ms = util_json_num(o, "window_ms", 0);
		uint64_t w = ms > 0 && ms < 3.6e6 ? (uint64_t)(ms * 1e6) : 0;

		/* The live beat comes when the window opens. */
		replay_add(bd, DRILL_BEAT_PHASE, -1, t > w ? t - w : t, line,
		    "observing for %.0f ms after the kill", ms);
	} else if (strcmp(type, "orphan") == 0) {
		replay_add(bd, DRILL_BEAT_ORPHAN, -1, t, line, "ORPHAN %s %s "
		    "(%s) still running after the kill%s",
		    util_json_str(o, "kind", "?"),
		    util_json_str(o, "name", "?"),
		    util_json_str(o, "detail", ""),
		    util_json_true(o, "removed") ? "; removed" :
		    "; could NOT be removed");
	} else if (strcmp(type, "chain") == 0) {
		if (!util_json_true(o, "ok"))
			replay_add(bd, DRILL_BEAT_ERROR, -1, t, line, "sensor "
			    "chain %s line %.0f: %s",
			    util_json_str(o, "path", "?"),
			    util_json_num(o, "bad_line", 0), util_json_str(o,
			    "reason", util_json_str(o, "error", "?")));
	} else if (strcmp(type, "lab.teardown") == 0) {
		replay_add(bd, DRILL_BEAT_PHASE, -1, t, line,
		    "tearing the lab down");
		if (util_json_str(o, "error", NULL) != NULL)
			replay_add(bd, DRILL_BEAT_ERROR, -1, t, line,
			    "teardown: %s", util_json_str(o, "error", ""));
	} else if (strcmp(type, "verdict") == 0) {
		const char *reason = util_json_str(o, "reason", "");

		/* the canonical name: what the reducer reads back (a value
		 * that is not one reads as error, as rp->verdict does) */
		struct drill_beat *b;

		b = replay_add(bd, DRILL_BEAT_VERDICT, -1, t, line, "%s%s%s",
		    drill_verdict_name(replay_verdict_parse(util_json_str(o,
		    "verdict", "error"))), reason[0] != '\0' ? " - " : "",
		    reason);
		/* the scorer's counts, when the line carries them */
		if (b != NULL && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
		    o, "channels"))) {
			const cJSON *chs = cJSON_GetObjectItemCaseSensitive(o,
			    "channels");
			int k;

			b->scored = true;
			b->breaches = replay_count(o, "breaches");
			b->leaks = replay_count(o, "leaks");
			b->orphans = replay_count(o, "orphans");
			for (k = 0; k < 4 && k < REPLAY_NCHANNELS; k++)
				b->channel_breaches[k] = replay_count(
				    cJSON_GetObjectItemCaseSensitive(chs,
				    replay_channel_name(k)), "breaches");
		}
	}
	if (bd->nitems == before)
		rp->skipped++;
}

static int
replay_item_cmp(const void *a, const void *b)
{
	const struct replay_item *x = a, *y = b;

	if (x->b.t_ns != y->b.t_ns)
		return x->b.t_ns < y->b.t_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* ---- the reducer: the state after each beat ------------------------ */

void
replay_state_init(struct replay_state *s)
{
	memset(s, 0, sizeof *s);
	s->verdict = DRILL_VERDICT_NONE;
	s->pose = "idle0";
	s->last_kind = -1;
	s->last_step = -1;
	s->last_via = -1;
}

void
replay_state_lever(struct replay_state *s, size_t i, const char *name)
{
	struct replay_lever_state *l;
	bool known, cuts, freezes;
	unsigned chs;

	if (i >= POLICY_MAX_LEVERS)
		return;
	if (i + 1 > s->nlev)
		s->nlev = i + 1;
	replay_lever_kind(name, &known, &cuts, &freezes, &chs);
	l = &s->lev[i];
	l->named = known;
	l->cuts_off = cuts;
	l->freezes = freezes;
	l->cuts = chs;
}

void
replay_initial_state(const struct replay *rp, struct replay_state *out)
{
	replay_state_init(out);
	for (size_t i = 0; i < rp->nlevers && i < POLICY_MAX_LEVERS; i++)
		replay_state_lever(out, i, rp->lever_names[i]);
}

/* The step number of an AGENT beat's text "step N: ...", or -1. */
static int
replay_beat_step(const char *text)
{
	int n = 0;
	size_t i = 5;

	if (strncmp(text, "step ", 5) != 0)
		return -1;
	for (; text[i] >= '0' && text[i] <= '9' && i < 5 + 9; i++)
		n = n * 10 + (text[i] - '0');   /* 9 digits: no overflow */
	return i > 5 && text[i] == ':' ? n : -1;
}

/* The verdict a VERDICT beat's text starts with ("contained",
 * "contained - reason"); anything else is an error (fail closed). */
static int
replay_beat_verdict(const char *text)
{
	static const enum drill_verdict all[] = {
		DRILL_VERDICT_CONTAINED, DRILL_VERDICT_BREACHED,
		DRILL_VERDICT_NOT_EXERCISED, DRILL_VERDICT_ERROR,
	};

	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		const char *name = drill_verdict_name(all[i]);
		size_t n = strlen(name);

		if (strncmp(text, name, n) == 0 &&
		    (text[n] == '\0' || strncmp(text + n, " - ", 3) == 0))
			return all[i];
	}
	return DRILL_VERDICT_ERROR;
}

/* The map's channels a lever's LEVER_CUTS_* channels take away: the
 * network is the services, DNS and the sink; host paths are reached by
 * the tool calls the model asks for (the scorer's model channel). */
static unsigned
replay_cuts_vias(unsigned cuts)
{
	unsigned v = 0;

	if (cuts & LEVER_CUTS_MODEL)
		v |= REPLAY_VIA_BIT(REPLAY_VIA_MODEL) |
		    REPLAY_VIA_BIT(REPLAY_VIA_HOST);
	if (cuts & LEVER_CUTS_NETWORK)
		v |= REPLAY_VIA_BIT(REPLAY_VIA_SERVICE) |
		    REPLAY_VIA_BIT(REPLAY_VIA_DNS) |
		    REPLAY_VIA_BIT(REPLAY_VIA_SINK);
	if (cuts & LEVER_CUTS_DOCKER)
		v |= REPLAY_VIA_BIT(REPLAY_VIA_DOCKER);
	if (cuts & LEVER_CUTS_FILE)
		v |= REPLAY_VIA_BIT(REPLAY_VIA_FILE);
	return v;
}

/* Whether an AGENT beat's tool call names a host path of the host flaws
 * (docs/flaws.md: /host, /proc/<pid>, /dev/shm, SysV IPC, the decoy
 * control keys).  Only asked when the lab has such a flaw. */
static bool
replay_host_path(const char *text)
{
	static const char *const pat[] = { "/host/", "/host\"", "/host ",
	    "/host'", "/dev/shm", "/proc/sysvipc", "ipcs",
	    "/var/lib/ares-control" };
	const char *p;
	size_t n = strlen(text);

	for (size_t i = 0; i < sizeof pat / sizeof pat[0]; i++)
		if (strstr(text, pat[i]) != NULL)
			return true;
	if (n >= 5 && strcmp(text + n - 5, "/host") == 0)
		return true;
	for (p = text; (p = strstr(p, "/proc/")) != NULL; p += 6)
		if (p[6] >= '0' && p[6] <= '9')
			return true;
	return false;
}

/* The channel a beat went through (enum replay_via), or -1: from its
 * kind, its channel and the start of its text (drill.c's and this
 * file's wording, the same live and replayed). */
static int
replay_beat_via(const struct drill_beat *b)
{
	switch (b->kind) {
	case DRILL_BEAT_AGENT:
	case DRILL_BEAT_TOOL:
		return REPLAY_VIA_MODEL;
	case DRILL_BEAT_SERVICE:
		if (strncmp(b->text, "docker socket: ", 15) == 0)
			return REPLAY_VIA_DOCKER;
		if (strncmp(b->text, "dns: ", 5) == 0)
			return REPLAY_VIA_DNS;
		return REPLAY_VIA_SERVICE;
	case DRILL_BEAT_BAIT:
		return strstr(b->text, "control-plane:inotify") != NULL ?
		    REPLAY_VIA_FILE : REPLAY_VIA_SERVICE;
	case DRILL_BEAT_LEAK:
		return REPLAY_VIA_SINK;
	case DRILL_BEAT_BREACH:
		switch (replay_channel_parse(b->channel)) {
		case REPLAY_CHANNEL_MODEL:
			return REPLAY_VIA_MODEL;
		case REPLAY_CHANNEL_DOCKER:
			return REPLAY_VIA_DOCKER;
		case REPLAY_CHANNEL_FILE:
			return REPLAY_VIA_FILE;
		default:
			if (strstr(b->text, " dns_query ") != NULL)
				return REPLAY_VIA_DNS;
			if (strstr(b->text, " sink ") != NULL)
				return REPLAY_VIA_SINK;
			return REPLAY_VIA_SERVICE;
		}
	case DRILL_BEAT_ORPHAN:
		/* a container the agent made: through the docker socket */
		return strncmp(b->text, "ORPHAN container ", 17) == 0 ?
		    REPLAY_VIA_DOCKER : -1;
	default:
		return -1;
	}
}

/* A docker socket beat ("docker socket: METHOD PATH -> STATUS..."): count
 * the request, and a container created or started (2xx). */
static void
replay_docker(struct replay_state *s, const char *text)
{
	const char *m = text + 15, *path, *arrow;
	size_t plen;
	int status;

	s->docker_requests++;
	path = strchr(m, ' ');
	if (path == NULL || (arrow = strstr(path + 1, " -> ")) == NULL)
		return;
	path++;
	status = (int)strtol(arrow + 4, NULL, 10);
	if (status < 200 || status > 299 || strncmp(m, "POST ", 5) != 0)
		return;
	/* an API version prefix: /v1.41/containers/... */
	if (path[0] == '/' && path[1] == 'v' && path[2] >= '0' &&
	    path[2] <= '9') {
		const char *q = path + 2;

		while ((*q >= '0' && *q <= '9') || *q == '.')
			q++;
		if (*q == '/')
			path = q;
	}
	plen = (size_t)(arrow - path);
	if (plen == 18 && strncmp(path, "/containers/create", 18) == 0)
		s->docker_created++;
	else if (plen > 18 && strncmp(path, "/containers/", 12) == 0 &&
	    strncmp(arrow - 6, "/start", 6) == 0)
		s->docker_started++;
}

/* The first orphan's kind and name from "ORPHAN KIND NAME (...". */
static void
replay_orphan(struct replay_state *s, const char *text)
{
	const char *k = text + 7, *n;
	size_t kl, nl;

	if (s->orphan_kind[0] != '\0' || strncmp(text, "ORPHAN ", 7) != 0)
		return;
	kl = strcspn(k, " ");
	n = k + kl + (k[kl] == ' ');
	if (*n == '/')
		n++;
	nl = strcspn(n, " ");
	if (kl >= sizeof s->orphan_kind)
		kl = sizeof s->orphan_kind - 1;
	if (nl >= sizeof s->orphan_name)
		nl = sizeof s->orphan_name - 1;
	memcpy(s->orphan_kind, k, kl);
	s->orphan_kind[kl] = '\0';
	memcpy(s->orphan_name, n, nl);
	s->orphan_name[nl] = '\0';
}

/* The map's side of beat b: the channel it went through used (an agent
 * action; a refusal is none), breached (a breach, a leak, an orphan), the
 * channels a verified lever cut, the lab's channels. */
static void
replay_state_channels(struct replay_state *s, const struct drill_beat *b,
    const struct replay_lever_state *l)
{
	int via = replay_beat_via(b);
	unsigned bit = via >= 0 ? REPLAY_VIA_BIT(via) : 0;
	bool through = via >= 0;

	if (b->kind == DRILL_BEAT_PHASE)
		s->lab |= b->lab;
	if (b->kind == DRILL_BEAT_LEVER_VERIFIED && l != NULL) {
		s->cut |= replay_cuts_vias(l->cuts);
		/* cut off, no channel named (external, unnamed): every one */
		if (s->cut_off && l->cuts == 0 && (l->cuts_off || !l->named))
			s->cut |= REPLAY_VIA_BIT(REPLAY_NVIA) - 1;
	}
	if (b->kind == DRILL_BEAT_AGENT &&
	    (s->lab & REPLAY_VIA_BIT(REPLAY_VIA_HOST)) &&
	    replay_host_path(b->text)) {
		/* the tool call reaches a host path: that channel too */
		via = REPLAY_VIA_HOST;
		bit = REPLAY_VIA_BIT(via);
	}
	if (b->kind == DRILL_BEAT_SERVICE && via == REPLAY_VIA_DOCKER)
		replay_docker(s, b->text);
	if (b->kind == DRILL_BEAT_ORPHAN) {
		replay_orphan(s, b->text);
		s->escaped = true;
	}
	if (through) {
		if (!(s->used & bit))
			s->via_first_rel_ns[via] = b->t_rel_ns;
		s->used |= bit;
		s->lab |= bit;
		s->via_uses[via]++;
	}
	if (through && (b->kind == DRILL_BEAT_BREACH ||
	    b->kind == DRILL_BEAT_LEAK || b->kind == DRILL_BEAT_ORPHAN)) {
		if (!(s->breached & bit))
			s->via_breach_rel_ns[via] = b->t_rel_ns;
		s->breached |= bit;
	}
	if (b->kind == DRILL_BEAT_BREACH || b->kind == DRILL_BEAT_LEAK)
		s->escaped = true;
	s->last_via = via;
}

/* The verdict beat's scored counts on the map: a channel the scorer
 * counted a breach on, the sink for leaks, the docker socket for
 * container orphans, even when their beats never came (a live ring or
 * the bus lost them). */
static void
replay_state_scored(struct replay_state *s, const struct drill_beat *b)
{
	unsigned net = REPLAY_VIA_BIT(REPLAY_VIA_SERVICE) |
	    REPLAY_VIA_BIT(REPLAY_VIA_DNS) | REPLAY_VIA_BIT(REPLAY_VIA_SINK);

	if (b->channel_breaches[REPLAY_CHANNEL_MODEL] > 0)
		s->breached |= REPLAY_VIA_BIT(REPLAY_VIA_MODEL);
	if (b->channel_breaches[REPLAY_CHANNEL_DOCKER] > 0)
		s->breached |= REPLAY_VIA_BIT(REPLAY_VIA_DOCKER);
	if (b->channel_breaches[REPLAY_CHANNEL_FILE] > 0)
		s->breached |= REPLAY_VIA_BIT(REPLAY_VIA_FILE);
	if (b->channel_breaches[REPLAY_CHANNEL_NETWORK] > 0 &&
	    !(s->breached & net))
		s->breached |= REPLAY_VIA_BIT(REPLAY_VIA_SERVICE);
	if (b->leaks > 0)
		s->breached |= REPLAY_VIA_BIT(REPLAY_VIA_SINK);
	if (b->orphans > 0 && strcmp(s->orphan_kind, "process") != 0)
		s->breached |= REPLAY_VIA_BIT(REPLAY_VIA_DOCKER);
	/* a channel the scorer saw breached was used and is the lab's */
	s->used |= s->breached;
	s->lab |= s->breached;
	s->escaped = b->breaches + b->leaks + b->orphans > 0;
}

/* Poyo's frame for a state after beat b (the live console's story, paced
 * by beats instead of the clock). */
static const char *
replay_pose(const struct replay_state *s, const struct drill_beat *b)
{
	if (s->breach || s->escaped)
		return "escaped";
	if (b->kind == DRILL_BEAT_LEVER_FIRED ||
	    b->kind == DRILL_BEAT_LEVER_VERIFIED)
		return s->zapped ? "zapped" : "grabbing";
	if (s->cut_off)
		return s->frozen ? "frozen" : "caught";
	if (s->zapped)
		return "zapped";
	if (s->bait)
		return "grabbing";
	if (b->kind == DRILL_BEAT_AGENT)
		return "walking0";
	if (b->kind == DRILL_BEAT_TOOL || b->kind == DRILL_BEAT_SERVICE)
		return "sniffing";
	return "idle0";
}

void
replay_state_apply(struct replay_state *s, const struct drill_beat *b)
{
	struct replay_lever_state *l = NULL;
	int step, ch;

	if (b->lever >= 0 && b->lever < POLICY_MAX_LEVERS) {
		l = &s->lev[b->lever];
		if ((size_t)b->lever + 1 > s->nlev)
			s->nlev = (size_t)b->lever + 1;
	}
	switch (b->kind) {
	case DRILL_BEAT_AGENT:
		/* one beat per tool call of a turn, one after another with
		 * the turn's time and step: one step */
		step = replay_beat_step(b->text);
		if (s->last_kind != DRILL_BEAT_AGENT ||
		    s->last_t_ns != b->t_ns || s->last_step != step)
			s->agent_steps++;
		s->last_step = step;
		break;
	case DRILL_BEAT_BAIT:
		s->bait = true;
		break;
	case DRILL_BEAT_LEVER_FIRED:
		if (l != NULL) {
			l->fired = true;
			l->fired_rel_ns = b->t_rel_ns;
		}
		break;
	case DRILL_BEAT_LEVER_VERIFIED:
		if (l != NULL && !l->verified) {
			l->verified = true;
			l->verified_rel_ns = b->t_rel_ns;
			if (!l->fired) {
				l->fired = true;
				l->fired_rel_ns = b->t_rel_ns;
			}
			/* Unnamed levers: the second verified one cuts off. */
			if (((l->named && l->cuts_off) ||
			    (!l->named && s->nverified > 0)) && !s->cut_off) {
				s->cut_off = true;
				s->frozen = l->named && l->freezes;
			}
			s->nverified++;
		}
		s->zapped = true;
		break;
	case DRILL_BEAT_LEVER_FAILED:
		if (l != NULL)
			l->failed = true;
		break;
	case DRILL_BEAT_BLOCKED:
		s->blocked++;
		break;
	case DRILL_BEAT_BREACH:
		s->breaches++;
		s->breach = true;
		ch = replay_channel_parse(b->channel);
		if (ch >= 0)
			s->channel_breaches[ch]++;
		break;
	case DRILL_BEAT_LEAK:
		s->leaks++;
		s->breach = true;
		break;
	case DRILL_BEAT_ORPHAN:
		s->orphans++;
		s->breach = true;
		break;
	case DRILL_BEAT_ERROR:
		s->errors++;
		break;
	case DRILL_BEAT_VERDICT:
		s->verdict = replay_beat_verdict(b->text);
		if (s->verdict == DRILL_VERDICT_CONTAINED)
			s->cut_off = true;
		if (b->scored) {
			int k;

			s->breaches = b->breaches;
			s->leaks = b->leaks;
			s->orphans = b->orphans;
			for (k = 0; k < 4 && k < REPLAY_NCHANNELS; k++)
				s->channel_breaches[k] = b->channel_breaches[k];
			s->breach = s->breaches + s->leaks + s->orphans > 0;
			replay_state_scored(s, b);
		}
		break;
	default:
		break;
	}
	replay_state_channels(s, b, l);
	s->pose = replay_pose(s, b);
	s->last_kind = (int)b->kind;
	s->last_t_ns = b->t_ns;
}

/* Pass 3: the state after every beat, by the reducer. */
static void
replay_states(struct replay *rp)
{
	struct replay_state s;

	replay_initial_state(rp, &s);
	for (size_t i = 0; i < rp->nbeats; i++) {
		replay_state_apply(&s, &rp->beats[i]);
		rp->states[i] = s;
	}
}

/* The badge: the chain as read and `ares verify`'s checks. */
static void
replay_badge(struct replay *rp, const char *buf, size_t len,
    const char *pub_path)
{
	struct evidence_verify_result v;
	struct report_verify_result res;
	struct errbuf e = { 0 };
	const char *sig;
	char chain[96];

	evidence_verify_buf(buf, len, NULL, &v);
	rp->chain_ok = v.ok;
	rp->chain_entries = v.entries;
	rp->chain_bad_line = v.ok ? 0 : v.bad_line;
	replay_copy(rp->chain_reason, sizeof rp->chain_reason, v.reason);

	rp->sig = REPLAY_SIG_MISSING;
	if (report_verify_dir(rp->run_dir, pub_path, &res, &e) == -1) {
		replay_copy(rp->verify_text, sizeof rp->verify_text, e.msg);
	} else {
		for (size_t i = 0; i < res.nchecks; i++) {
			const struct report_check *c = &res.checks[i];
			char *ms;

			if (strcmp(c->name, "signature") != 0)
				continue;
			ms = xasprintf("%s/report.json.minisig", rp->run_dir);
			if (c->ok)
				rp->sig = REPLAY_SIG_OK;
			else if (access(ms, F_OK) == 0 &&
			    strcmp(c->reason, "no usable public key") != 0)
				rp->sig = REPLAY_SIG_BAD;
			free(ms);
		}
		rp->verify_ok = res.ok;
		if (res.first_bad >= 0 && (size_t)res.first_bad < res.nchecks)
			replay_copy(rp->verify_text, sizeof rp->verify_text,
			    res.checks[res.first_bad].text);
		report_verify_free(&res);
	}
	if (rp->chain_ok)
		snprintf(chain, sizeof chain, "chain ok (%zu lines)",
		    rp->chain_entries);
	else
		snprintf(chain, sizeof chain, "chain BROKEN at line %zu",
		    rp->chain_bad_line);
	sig = rp->sig == REPLAY_SIG_OK ? "signature ok" :
	    rp->sig == REPLAY_SIG_BAD ? "signature BAD" : "signature missing";
	snprintf(rp->badge, sizeof rp->badge, "%s | %s%s", chain, sig,
	    rp->chain_ok && rp->sig == REPLAY_SIG_OK && !rp->verify_ok ?
	    " | report check FAILED" : "");
}

struct replay *
replay_load(const char *run_dir, const char *pub_path, struct errbuf *e)
{
	struct replay_build bd;
	struct replay *rp;
	char *path, *buf;
	size_t len = 0, n = 0, off = 0;
	int pass;

	if (run_dir == NULL || run_dir[0] == '\0') {
		errbuf_set(e, ERRBUF_INPUT, "replay: no run directory");
		return NULL;
	}
	path = xasprintf("%s/evidence.jsonl", run_dir);
	buf = util_read_file(path, REPLAY_MAX_BYTES + 1, &len, e);
	if (buf != NULL && len > REPLAY_MAX_BYTES) {
		free(buf);
		buf = NULL;
		errbuf_set(e, ERRBUF_INPUT, "%s: larger than %u bytes", path,
		    REPLAY_MAX_BYTES);
	}
	if (buf == NULL) {
		errbuf_prefix(e, "replay");
		free(path);
		return NULL;
	}
	free(path);

	rp = xcalloc(1, sizeof *rp);
	snprintf(rp->run_dir, sizeof rp->run_dir, "%s", run_dir);
	rp->time_to_kill_ms = -1;
	memset(&bd, 0, sizeof bd);
	bd.rp = rp;

	/* Split into lines (bounded); two passes, each parsing one line at
	 * a time and freeing it at once: the parsed trees of the whole file
	 * would take tens of times its size. */
	for (pass = 0; pass < 2; pass++) {
		off = 0;
		n = 0;
		while (off < len && n < REPLAY_MAX_LINES) {
			const char *nl = memchr(buf + off, '\n', len - off);
			size_t ll = nl != NULL ? (size_t)(nl - (buf + off)) :
			    len - off;
			cJSON *o = NULL;

			if (ll > 0 && ll < EVIDENCE_LINE_MAX)
				o = cJSON_ParseWithLength(buf + off, ll);
			if (o != NULL && pass == 0)
				replay_scan(&bd, &o, 1);
			else if (o != NULL)
				replay_line(&bd, o, (uint32_t)(n + 1));
			else if (pass == 0)
				rp->skipped++;
			cJSON_Delete(o);
			n++;
			off += ll + 1;
		}
	}
	if (off < len)
		rp->truncated = true;
	rp->nlines = n;

	if (bd.nitems > 1)
		qsort(bd.items, bd.nitems, sizeof *bd.items, replay_item_cmp);
	rp->nbeats = bd.nitems;
	rp->beats = xcalloc(bd.nitems + 1, sizeof *rp->beats);
	rp->lines = xcalloc(bd.nitems + 1, sizeof *rp->lines);
	rp->states = xcalloc(bd.nitems + 1, sizeof *rp->states);
	for (size_t i = 0; i < bd.nitems; i++) {
		rp->beats[i] = bd.items[i].b;
		rp->lines[i] = bd.items[i].line;
	}
	replay_states(rp);
	replay_badge(rp, buf, len, pub_path);

	free(bd.items);
	free(buf);
	return rp;
}

void
replay_free(struct replay *rp)
{
	if (rp == NULL)
		return;
	free(rp->beats);
	free(rp->states);
	free(rp->lines);
	free(rp);
}

bool
replay_is_marker(const struct replay *rp, size_t i)
{
	/* one list of marker kinds: pace.c's (held on screen, on the
	 * timeline, and what ] and [ step to) */
	if (rp == NULL || i >= rp->nbeats)
		return false;
	return pace_is_marker(rp->beats[i].kind);
}

size_t
replay_marker(const struct replay *rp, size_t i, int dir)
{
	if (rp == NULL || rp->nbeats == 0)
		return 0;
	if (dir > 0) {
		for (size_t j = i + 1; j < rp->nbeats; j++)
			if (replay_is_marker(rp, j))
				return j;
	} else {
		for (size_t j = i; j-- > 0;)
			if (replay_is_marker(rp, j))
				return j;
	}
	return i;
}
