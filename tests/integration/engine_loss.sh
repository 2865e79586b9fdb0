#!/bin/sh
# engine_loss.sh - the engine-loss matrix: a drill whose Docker Engine dies
# (kill -9 of dockerd) during lab up, the agent run, the levers, the
# observation window, the orphan sweep and teardown.  Each time: exit 5,
# drill.json verdict "error", a signed report that ares verify accepts,
# an end within BOUND_S seconds of the kill; then the engine comes back on
# the same data-root, ares gc runs, and no container, network or host
# firewall rule of the run is left.  Also: no engine at all -> exit 3 and
# nothing written.
#
# It runs a second dockerd of its own (--bridge=none, its own socket,
# data-root, exec-root, pidfile and containerd namespaces; its containerd
# is the one dockerd starts under the exec-root), so the suite's engine on
# /var/run/docker.sock lives on.  That dockerd, and every ares command run
# against it, live in a network namespace of their own (ip netns add, then
# nsenter --net): the engine's iptables chains, the labs' bridges and the
# host firewall rules ares writes are that namespace's, never the ones of
# the suite's engine (a dockerd flushes the DOCKER chains it finds when it
# starts), and no interface there leads anywhere.  The second engine is
# stopped, its namespace and data-root removed on exit, whatever happens.
# Needs root and dockerd: skips (77) without them unless
# ARES_REQUIRE_DOCKER=1, where it fails.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
POLICY="$SRC/policies/default.yaml"
BOUND_S=15          # the drill ends this soon after the engine died
PHASES="lab-up agent levers observe sweep teardown"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but $*"
	echo "skip: $*"; exit 77
}

[ "$(id -u)" = 0 ] || skip "not root (a second dockerd needs root)"
command -v dockerd >/dev/null 2>&1 || skip "no dockerd"
command -v curl >/dev/null 2>&1 || skip "no curl"
command -v nsenter >/dev/null 2>&1 || skip "no nsenter"
command -v ip >/dev/null 2>&1 || skip "no ip (iproute2)"

base=$(mktemp -d /tmp/ares-el.XXXXXX) || fail "mktemp"
chmod 0711 "$base"
sock="$base/docker.sock"
pidfile="$base/dockerd.pid"
dpid=
export ARES_RUNS="$base/runs"
export ARES_KEY_DIR="${ARES_KEY_DIR:-$base/keys}"
mkdir -p "$ARES_RUNS"
ns="ares-el-$$"
ip netns add "$ns" || fail "ip netns add $ns"
nsfile="/run/netns/$ns"
# run a command in the engine's network namespace
inns() { nsenter --net="$nsfile" "$@"; }

# The second engine's pid, from its pidfile (only ever ours).
engine_pid() { [ -s "$pidfile" ] && cat "$pidfile"; }

stop_engine() {
	p=$(engine_pid)
	[ -n "$p" ] || p=$dpid
	if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
		kill -TERM "$p" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	fi
	# its containerd (started by it, under our exec-root)
	cp=$(cat "$base/exec/containerd/containerd.pid" 2>/dev/null)
	if [ -n "$cp" ] && kill -0 "$cp" 2>/dev/null &&
	    grep -q "$base" "/proc/$cp/cmdline" 2>/dev/null; then
		kill -TERM "$cp" 2>/dev/null
		sleep 1
		kill -KILL "$cp" 2>/dev/null
	fi
}

cleanup() {
	# what the last run left (if gc failed): remove it on our engine
	if curl -s --max-time 2 --unix-socket "$sock" http://localhost/_ping \
	    2>/dev/null | grep -q OK; then
		DOCKER_HOST="unix://$sock" inns "$ARES" gc >/dev/null 2>&1
	fi
	stop_engine
	ip netns del "$ns" 2>/dev/null
	# container mounts of the engine's data-root, if any remain
	grep " $base/" /proc/mounts | awk '{print $2}' | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	if [ "${ARES_ENGINE_LOSS_KEEP:-0}" = 1 ]; then
		echo "kept $base" >&2
	else
		rm -rf "$base"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

start_engine() {
	# a containerd that died with its dockerd but was never reaped (a
	# zombie whose new parent does not wait for it) still answers kill -0:
	# dockerd would wait for it to come up instead of starting a new one
	cp=$(cat "$base/exec/containerd/containerd.pid" 2>/dev/null)
	if [ -n "$cp" ] && ! grep -q "^State:[[:space:]]*[RSD]" \
	    "/proc/$cp/status" 2>/dev/null; then
		rm -f "$base/exec/containerd/containerd.pid"
	fi
	inns dockerd --bridge=none -H "unix://$sock" --data-root "$base/data" \
	    --exec-root "$base/exec" --pidfile "$pidfile" \
	    --containerd-namespace ares-engine-loss \
	    --containerd-plugins-namespace ares-engine-loss-plugins \
	    --log-level warn >>"$base/dockerd.log" 2>&1 &
	dpid=$!
	for _ in $(seq 1 150); do
		curl -s --max-time 2 --unix-socket "$sock" \
		    http://localhost/_ping 2>/dev/null | grep -q OK && return 0
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.2
	done
	tail -20 "$base/dockerd.log" >&2
	return 1
}

api() { curl -s --max-time 10 --unix-socket "$sock" "http://localhost$1"; }
# "label=ares.run" listings as "id name" lines (containers, networks)
left_containers() {
	api '/containers/json?all=1&filters=%7B%22label%22%3A%5B%22ares.run%22%5D%7D' |
	    grep -o '"Id":"[0-9a-f]*"' | wc -l
}
left_networks() {
	api '/networks?filters=%7B%22label%22%3A%5B%22ares.run%22%5D%7D' |
	    grep -o '"Id":"[0-9a-f]*"' | wc -l
}
left_rules() {
	n=0
	for t in iptables ip6tables; do
		command -v $t >/dev/null 2>&1 || continue
		k=$(inns $t -w 5 -S INPUT 2>/dev/null | grep -c "ares.run=$1\"")
		n=$((n + k))
	done
	echo $n
}

# ---- no engine at all: exit 3, nothing written ---------------------------
before=$(ls "$ARES_RUNS" | wc -l)
DOCKER_HOST="unix://$base/none.sock" "$ARES" drill --policy "$POLICY" \
    >"$base/none.out" 2>&1; rc=$?
[ $rc -eq 3 ] || fail "no engine: exit $rc, want 3 ($(cat "$base/none.out"))"
[ "$(ls "$ARES_RUNS" | wc -l)" = "$before" ] ||
	fail "no engine: a run dir was written"
DOCKER_HOST="unix://$base/none.sock" "$ARES" gc >"$base/none.out" 2>&1; rc=$?
[ $rc -eq 3 ] || fail "gc without engine: exit $rc, want 3"
matrix="phase       exit  verdict  verify  end_s  before-gc  after-gc (containers/networks/fw rules)
(no engine)    3    -        -       -      -          -"

start_engine || fail "the second dockerd did not come up"
export DOCKER_HOST="unix://$sock"

# Wait until the ares process $3 reaches hook $2 in dir $1, kill -9 the
# engine (and make sure its containerd went with it), then let ares go on.
# Sets t0 (the time of the kill).
kill_at() {
	i=0
	while [ ! -e "$1/$2" ]; do
		i=$((i + 1))
		if [ $i -gt 1200 ] || ! kill -0 "$3" 2>/dev/null; then
			kill "$3" 2>/dev/null
			fail "$2: ares never reached the phase"
		fi
		sleep 0.1
	done
	p=$(engine_pid)
	[ -n "$p" ] || fail "$2: no dockerd pid"
	cpid=$(cat "$base/exec/containerd/containerd.pid" 2>/dev/null)
	kill -KILL "$p"
	while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
	# its containerd goes with it (a survivor would hold the engine's
	# state locked when it comes back)
	if [ -n "$cpid" ] && grep -q "$base" "/proc/$cpid/cmdline" 2>/dev/null; then
		for _ in $(seq 1 50); do
			kill -0 "$cpid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$cpid" 2>/dev/null
	fi
	t0=$(date +%s.%N)
	: >"$1/$2.go"
}

# Seconds since t0, checked against BOUND_S (what names the case).
ended() {
	end=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	awk -v e="$end" -v b="$BOUND_S" 'BEGIN { exit !(e <= b) }' ||
		fail "$1: ares took ${end} s after the kill (bound $BOUND_S s)"
}

# The engine comes back on the same data-root; ares gc takes what is left
# and nothing with an ares label (nor a firewall rule of run $2) remains.
# Sets before and left ("containers/networks/firewall rules").
restart_and_gc() {
	start_engine || fail "$1: the engine did not come back"
	fb=0
	for r in $2; do
		fb=$((fb + $(left_rules "$r")))
	done
	before="$(left_containers)/$(left_networks)/$fb"
	inns "$ARES" gc >"$base/$1.gc" 2>&1; grc=$?
	[ $grc -eq 0 ] || fail "$1: ares gc exit $grc: $(cat "$base/$1.gc")"
	c=$(left_containers)
	n=$(left_networks)
	f=0
	for r in $2; do
		f=$((f + $(left_rules "$r")))
	done
	[ "$c" = 0 ] && [ "$n" = 0 ] && [ "$f" = 0 ] ||
		fail "$1: left after restart + gc: $c container(s), $n network(s), $f firewall rule(s): $(cat "$base/$1.gc")"
	left="$c/$n/$f"
}

# A hook dir where every phase but $2 passes at once.
hook_dir() {
	mkdir -p "$1"
	for p in $PHASES battery; do
		[ "$p" = "$2" ] || : >"$1/$p.go"
	done
}

for phase in $PHASES; do
	hook="$base/hook-$phase"
	hook_dir "$hook" "$phase"
	ARES_TEST_HOOK="$hook" inns "$ARES" drill --policy "$POLICY" \
	    --json "$base/$phase.json" >"$base/$phase.out" 2>&1 &
	apid=$!
	kill_at "$hook" "$phase" $apid
	wait $apid; rc=$?
	ended "$phase"
	out=$(cat "$base/$phase.out")
	[ $rc -eq 5 ] || fail "$phase: exit $rc, want 5: $out"
	j="$base/$phase.json"
	grep -q '"verdict":[[:space:]]*"error"' "$j" || fail "$phase: verdict not error"
	grep -q "the engine stopped answering during $phase" "$j" ||
		fail "$phase: reason does not name the phase: $(grep verdict_reason "$j")"
	run=$(sed -n 's/.*"run_id":[[:space:]]*"\([^"]*\)".*/\1/p' "$j")
	rdir=$(sed -n 's/.*"run_dir":[[:space:]]*"\([^"]*\)".*/\1/p' "$j")
	[ -n "$run" ] && [ -d "$rdir" ] || fail "$phase: no run dir"
	grep '"type":"engine.lost"' "$rdir/evidence.jsonl" |
	    grep -q "\"phase\":\"$phase\"" || fail "$phase: no engine.lost line of the phase"
	grep -q '"type":"gc"' "$rdir/evidence.jsonl" || fail "$phase: no gc line"
	[ -s "$rdir/report.json.minisig" ] || fail "$phase: report not signed"
	grep -q '"verdict":[[:space:]]*"error"' "$rdir/drill.json" ||
		fail "$phase: run dir's drill.json verdict not error"
	"$ARES" verify --pub "$rdir/ares.pub" "$rdir" >"$base/$phase.verify" 2>&1 ||
		fail "$phase: ares verify: $(cat "$base/$phase.verify")"
	restart_and_gc "$phase" "$run"
	matrix="$matrix
$(printf '%-12s %4s  %-7s  %-6s  %5s  %-9s  %s' "$phase" "$rc" error ok "$end" "$before" "$left")"
	echo "ok: $phase: exit $rc, verdict error, verify ok, ended ${end} s after the kill, nothing left after gc"
done

# ---- a trial: the drill that lost the engine ends it, exit 5 --------------
hook="$base/hook-trial"
hook_dir "$hook" agent
ARES_TEST_HOOK="$hook" inns "$ARES" trial --policy "$POLICY" -n 3 -j 1 \
    --json "$base/trial.json" >"$base/trial.out" 2>&1 &
apid=$!
kill_at "$hook" agent $apid
wait $apid; rc=$?
ended trial
[ $rc -eq 5 ] || fail "trial: exit $rc, want 5: $(cat "$base/trial.out")"
tid=$(sed -n 's/.*"trial_id":[[:space:]]*"\([^"]*\)".*/\1/p' "$base/trial.json")
tdir="$ARES_RUNS/$tid"
[ -n "$tid" ] && [ -s "$tdir/trial.json.minisig" ] || fail "trial: no signed trial.json"
grep -q '"complete":[[:space:]]*false' "$tdir/trial.json" || fail "trial: complete"
n=$(ls "$tdir/runs" | wc -l)
[ "$n" = 1 ] || fail "trial: $n drills started, want 1 (none after the loss)"
grep -q '"verdict":[[:space:]]*"error"' "$tdir/trial.json" || fail "trial: no error run"
grep -q '"gc":' "$tdir/trial.json" || fail "trial: no gc report"
"$ARES" verify --pub "$tdir/ares.pub" "$tdir" >"$base/trial.verify" 2>&1 ||
	fail "trial: ares verify: $(cat "$base/trial.verify")"
restart_and_gc trial "$(ls "$tdir/runs")"
matrix="$matrix
$(printf '%-12s %4s  %-7s  %-6s  %5s  %-9s  %s' trial "$rc" error ok "$end" "$before" "$left")"
echo "ok: trial: exit 5 after one drill, signed, verify ok, nothing left after gc"

# ---- a probe: the battery stops, the partial report is signed, exit 5 -----
hook="$base/hook-probe"
hook_dir "$hook" battery
ARES_TEST_HOOK="$hook" inns "$ARES" probe --policy "$POLICY" \
    --json "$base/probe.json" >"$base/probe.out" 2>&1 &
apid=$!
kill_at "$hook" battery $apid
wait $apid; rc=$?
ended probe
[ $rc -eq 5 ] || fail "probe: exit $rc, want 5: $(cat "$base/probe.out")"
pdir=$(sed -n 's/^run dir *//p' "$base/probe.out" | head -n 1)
[ -n "$pdir" ] && [ -s "$pdir/probe.json.minisig" ] || fail "probe: no signed probe.json: $(cat "$base/probe.out")"
grep -q '"engine_lost":' "$pdir/probe.json" || fail "probe: engine_lost not recorded"
grep -q '"result":[[:space:]]*"failed"' "$pdir/probe.json" || fail "probe: result not failed"
"$ARES" verify --pub "$pdir/ares.pub" "$pdir" >"$base/probe.verify" 2>&1 ||
	fail "probe: ares verify: $(cat "$base/probe.verify")"
restart_and_gc probe "$(basename "$pdir")"
matrix="$matrix
$(printf '%-12s %4s  %-7s  %-6s  %5s  %-9s  %s' probe "$rc" failed ok "$end" "$before" "$left")"
echo "ok: probe: exit 5, partial battery signed, verify ok, nothing left after gc"

# ---- fix: its drill loses the engine, the fix ends in error, exit 5 -------
hook="$base/hook-fix"
hook_dir "$hook" agent
ARES_TEST_HOOK="$hook" inns "$ARES" fix --policy "$POLICY" \
    >"$base/fix.out" 2>&1 &
apid=$!
kill_at "$hook" agent $apid
wait $apid; rc=$?
ended fix
[ $rc -eq 5 ] || fail "fix: exit $rc, want 5: $(cat "$base/fix.out")"
fdir=$(ls -d "$ARES_RUNS"/fix-* | head -n 1)
[ -s "$fdir/fix.json" ] || fail "fix: no fix.json"
grep -q '"outcome":[[:space:]]*"error"' "$fdir/fix.json" || fail "fix: outcome not error"
frun=$(ls -t "$ARES_RUNS" | grep -v '^fix-\|^trial-' | head -n 1)
restart_and_gc fix "$frun"
matrix="$matrix
$(printf '%-12s %4s  %-7s  %-6s  %5s  %-9s  %s' fix "$rc" error - "$end" "$before" "$left")"
echo "ok: fix: exit 5, outcome error, nothing left after gc"

echo
echo "engine-loss matrix (bound: the drill ends within $BOUND_S s of kill -9):"
echo "$matrix"
