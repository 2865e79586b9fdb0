#!/bin/sh
# trial_tail.sh - a trial's drills overlap: each drill's observation
# window, sweep, teardown and verdict run beside the next drill's lab up
# (core/trial.c).  1. every drill.json has its phases, adding up to its
# wall_ms, and with -j 1 the next drill started before the previous lab
# was down (evidence times); the timing lines; verify; nothing left.
# 2. a background teardown that fails (a container the test puts on the
# lab's network holds it) is reported: that run is error, exit 5, verify
# accepts the trial, and what is left is that network alone (gc takes it
# once released).  3. SIGINT while a background teardown is held: the
# trial still waits for it, nothing of its runs is left.  Needs the
# engine: skips (77) without one unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
POLICY="$SRC/policies/default.yaml"
tmp=$(mktemp -d)
pid=
intruder=ares-test-intruder-$$
trap '[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null; docker rm -f "$intruder" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ARES_KEY_DIR="${ARES_KEY_DIR:-$tmp/keys}"

sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no engine at $sock"
	echo "skip: no Docker Engine"; exit 77
fi
command -v docker >/dev/null 2>&1 || {
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "no docker CLI"
	echo "skip: no docker CLI"; exit 77
}

# What the engine still holds of the runs under $1 (one line each).
left() {
	for r in "$1"/trial-*/runs/*; do
		[ -d "$r" ] || continue
		id=$(basename "$r")
		docker ps -aq --filter "label=ares.run=$id" | sed "s/^/container $id /"
		docker network ls -q --filter "label=ares.run=$id" | sed "s/^/network $id /"
	done
}

# A hook dir that holds only phase $2 (docs/cli-drill.md, ARES_TEST_HOOK).
hook_dir() {
	mkdir -p "$1"
	for p in lab-up agent levers observe sweep teardown; do
		[ "$p" = "$2" ] || : >"$1/$p.go"
	done
}

# Wait (60 s) for file $1.
wait_for() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "no $1 in 60 s"
		sleep 0.1
	done
}

# The run under $1 whose agent phase is over (the one held in its tail).
tail_run() {
	for r in "$1"/trial-*/runs/*; do
		grep -Eq '"type":"(observe.end|agent.exit|agent.time_limit)"' \
		    "$r/evidence.jsonl" 2>/dev/null && { basename "$r"; return; }
	done
}

# ---- 1. phases, overlap, timing lines --------------------------------------
"$ARES" trial --policy "$POLICY" -n 3 -j 1 --seed 3 --runs "$tmp/a" \
    >"$tmp/a.out" 2>"$tmp/a.err"; rc=$?
case $rc in 0|4) ;; *) cat "$tmp/a.out" "$tmp/a.err"; fail "trial: exit $rc" ;; esac
dir=$(ls -d "$tmp"/a/trial-*) || fail "no trial dir"
grep -q '^timing     3 drill(s) in [0-9.]* s: [0-9.]* drills/min at -j 1$' "$tmp/a.out" ||
	fail "no timing line: $(cat "$tmp/a.out")"
grep -q '^  phases (median ms of 3 drill(s)): setup [0-9]* lab_up [0-9]* agent [0-9]* levers [0-9]* observation [0-9]* sweep [0-9]* teardown [0-9]* verdict [0-9]*; sum [0-9]*$' "$tmp/a.out" ||
	fail "no phases line: $(grep phases "$tmp/a.out")"
python3 - "$dir" "$POLICY" <<'PY' || fail "phases or overlap wrong"
import json, os, re, sys
d, pol = sys.argv[1], open(sys.argv[2]).read()
window = int(re.search(r"^observe_ms:\s*(\d+)", pol, re.M).group(1))
names = ["setup", "lab_up", "agent", "levers", "observation", "sweep",
         "teardown", "verdict"]
tj = json.load(open(d + "/trial.json"))
times = []
for r in tj["runs"]:
    rd = os.path.join(d, r["run_dir"])
    dj = json.load(open(rd + "/drill.json"))
    ph = dj["phases"]
    assert list(ph) == names, ("phase names", list(ph))
    assert all(isinstance(v, (int, float)) and v >= 0 for v in ph.values()), ph
    assert abs(sum(ph.values()) - dj["wall_ms"]) < 0.01, (ph, dj["wall_ms"])
    assert ph["setup"] > 0 and ph["lab_up"] > 0 and ph["agent"] > 0, ph
    assert ph["teardown"] > 0 and ph["verdict"] > 0, ph
    if dj["bait"]:
        assert ph["levers"] > 0 and ph["observation"] >= window, (window, ph)
    else:
        assert ph["levers"] == ph["observation"] == ph["sweep"] == 0, ph
    ev = [json.loads(l) for l in open(rd + "/evidence.jsonl")]
    start = [e["t_mono_ns"] for e in ev if e["type"] == "drill.start"][0]
    down = [e["t_mono_ns"] for e in ev if e["type"] == "lab.teardown"][0]
    # the phases fit in what the chain saw of the drill
    assert (down - start) / 1e6 <= dj["wall_ms"] + 1, (down - start, dj["wall_ms"])
    times.append((start, down))
times.sort()
# -j 1: each drill started while the previous lab was still coming down
for (s0, d0), (s1, d1) in zip(times, times[1:]):
    assert s1 < d0, "no overlap: a drill started after the previous teardown"
PY
"$ARES" verify "$dir" >"$tmp/v.out" 2>&1 || { cat "$tmp/v.out"; fail "verify rejects the trial"; }
[ -z "$(left "$tmp/a")" ] || fail "left after the trial: $(left "$tmp/a")"
echo "ok: phases add up, drills overlap, timing lines, verify, nothing left"

# ---- 2. a background teardown that fails -----------------------------------
hook="$tmp/hook-b"
hook_dir "$hook" teardown
ARES_TEST_HOOK="$hook" "$ARES" trial --policy "$POLICY" -n 2 -j 1 --seed 3 \
    --runs "$tmp/b" >"$tmp/b.out" 2>&1 &
pid=$!
wait_for "$hook/teardown"
run0=$(tail_run "$tmp/b")
[ -n "$run0" ] || fail "no run in its tail at the teardown hook"
net=$(docker network ls -q --filter "label=ares.run=$run0" | head -n 1)
[ -n "$net" ] || fail "run $run0 has no network at its teardown"
img=$(sed -n 's/.*"image":[[:space:]]*"\([^"]*\)".*/\1/p' "$tmp"/b/trial-*/runs/"$run0"/lab.json | head -n 1)
[ -n "$img" ] || fail "no lab image in lab.json"
# an endpoint the lab did not make: its network cannot be removed
docker run -d --name "$intruder" --network "$net" --user 65532 --read-only \
    --cap-drop ALL "$img" /bin/sleep 600 >/dev/null || fail "cannot start the intruder"
: >"$hook/teardown.go"
wait "$pid"; rc=$?
pid=
cat "$tmp/b.out"
[ $rc -eq 5 ] || fail "failed teardown: exit $rc, want 5"
bdir=$(ls -d "$tmp"/b/trial-*)
grep -q '"complete":[[:space:]]*true' "$bdir/trial.json" || fail "trial not complete"
python3 - "$bdir" "$run0" <<'PY' || fail "the failed teardown is not reported"
import json, sys
tj = json.load(open(sys.argv[1] + "/trial.json"))
runs = {r["run_id"]: r for r in tj["runs"]}
assert len(runs) == 2, runs.keys()
bad = runs[sys.argv[2]]
assert bad["verdict"] == "error", bad
assert "torn down" in bad["reason"], bad["reason"]
assert all(r["verdict"] != "error" for k, r in runs.items() if k != sys.argv[2])
ev = [json.loads(l) for l in open("%s/runs/%s/evidence.jsonl" % (sys.argv[1], sys.argv[2]))]
td = [e for e in ev if e["type"] == "lab.teardown"]
assert td and "error" in td[0], td
PY
grep -q "errors 1 run(s)" "$tmp/b.out" || fail "the error run is not in the summary"
"$ARES" verify "$bdir" >"$tmp/vb.out" 2>&1 || { cat "$tmp/vb.out"; fail "verify rejects the trial"; }
# what is left: the network the intruder holds, nothing else of the trial
l=$(left "$tmp/b")
[ "$l" = "network $run0 $net" ] || fail "left after the failed teardown: '$l', want only network $net"
docker rm -f "$intruder" >/dev/null
"$ARES" gc >/dev/null 2>&1 || fail "ares gc"
[ -z "$(left "$tmp/b")" ] || fail "left after gc: $(left "$tmp/b")"
echo "ok: a failed background teardown is an error run, exit 5, verify ok, only its held network left (gc took it)"

# ---- 3. SIGINT while a background teardown is held -------------------------
hook="$tmp/hook-c"
hook_dir "$hook" teardown
ARES_TEST_HOOK="$hook" "$ARES" trial --policy "$POLICY" -n 4 -j 1 --seed 3 \
    --runs "$tmp/c" >"$tmp/c.out" 2>&1 &
pid=$!
wait_for "$hook/teardown"
kill -INT "$pid"
wait "$pid"; rc=$?
pid=
cat "$tmp/c.out"
[ $rc -eq 5 ] || fail "interrupted: exit $rc, want 5"
cdir=$(ls -d "$tmp"/c/trial-*)
grep -q '"complete":[[:space:]]*false' "$cdir/trial.json" || fail "interrupted trial complete"
"$ARES" verify "$cdir" >/dev/null 2>&1 || fail "verify rejects the interrupted trial"
[ -z "$(left "$tmp/c")" ] || fail "left after SIGINT: $(left "$tmp/c")"
echo "trial_tail.sh: ok"
