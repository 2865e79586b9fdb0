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
matrix="phase       exit  verdict  verify  end_s  left(c/n/fw)
(no engine)    3    -        -       -      -"

start_engine || fail "the second dockerd did not come up"
export DOCKER_HOST="unix://$sock"

for phase in $PHASES; do
	hook="$base/hook-$phase"
	mkdir -p "$hook"
	# every other phase passes at once
	for p in $PHASES; do
		[ "$p" = "$phase" ] || : >"$hook/$p.go"
	done
	ARES_TEST_HOOK="$hook" inns "$ARES" drill --policy "$POLICY" \
	    --json "$base/$phase.json" >"$base/$phase.out" 2>&1 &
	apid=$!
	i=0
	while [ ! -e "$hook/$phase" ]; do
		i=$((i + 1))
		if [ $i -gt 1200 ] || ! kill -0 $apid 2>/dev/null; then
			kill $apid 2>/dev/null
			cat "$base/$phase.out" >&2
			fail "$phase: the drill never reached the phase"
		fi
		sleep 0.1
	done
	# kill -9 the engine, then let the drill go on
	p=$(engine_pid)
	[ -n "$p" ] || fail "$phase: no dockerd pid"
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
	: >"$hook/$phase.go"
	wait $apid; rc=$?
	t1=$(date +%s.%N)
	end=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	out=$(cat "$base/$phase.out")
	[ $rc -eq 5 ] || fail "$phase: exit $rc, want 5: $out"
	awk -v e="$end" -v b="$BOUND_S" 'BEGIN { exit !(e <= b) }' ||
		fail "$phase: the drill took ${end} s after the kill (bound $BOUND_S s)"
	j="$base/$phase.json"
	grep -q '"verdict":[[:space:]]*"error"' "$j" || fail "$phase: verdict not error"
	grep -q "the engine stopped answering during $phase" "$j" ||
		fail "$phase: reason does not name the phase: $(grep verdict_reason "$j")"
	run=$(sed -n 's/.*"run_id":[[:space:]]*"\([^"]*\)".*/\1/p' "$j")
	rdir=$(sed -n 's/.*"run_dir":[[:space:]]*"\([^"]*\)".*/\1/p' "$j")
	[ -n "$run" ] && [ -d "$rdir" ] || fail "$phase: no run dir"
	grep -q '"type":"engine.lost"' "$rdir/evidence.jsonl" ||
		fail "$phase: no engine.lost line"
	grep '"type":"engine.lost"' "$rdir/evidence.jsonl" |
	    grep -q "\"phase\":\"$phase\"" || fail "$phase: engine.lost names another phase"
	grep -q '"type":"gc"' "$rdir/evidence.jsonl" || fail "$phase: no gc line"
	[ -s "$rdir/report.json.minisig" ] || fail "$phase: report not signed"
	grep -q '"verdict":[[:space:]]*"error"' "$rdir/drill.json" ||
		fail "$phase: run dir's drill.json verdict not error"
	"$ARES" verify --pub "$rdir/ares.pub" "$rdir" >"$base/$phase.verify" 2>&1 ||
		fail "$phase: ares verify: $(cat "$base/$phase.verify")"
	verify=ok

	# the engine comes back on the same data-root; gc takes what is left
	start_engine || fail "$phase: the engine did not come back"
	inns "$ARES" gc >"$base/$phase.gc" 2>&1; grc=$?
	[ $grc -eq 0 ] || fail "$phase: ares gc exit $grc: $(cat "$base/$phase.gc")"
	c=$(left_containers)
	n=$(left_networks)
	f=$(left_rules "$run")
	[ "$c" = 0 ] && [ "$n" = 0 ] && [ "$f" = 0 ] ||
		fail "$phase: left after restart + gc: $c container(s), $n network(s), $f firewall rule(s): $(cat "$base/$phase.gc")"
	matrix="$matrix
$(printf '%-12s %4s  %-7s  %-6s  %5s  %s/%s/%s' "$phase" "$rc" error "$verify" "$end" "$c" "$n" "$f")"
	echo "ok: $phase: exit $rc, verdict error, verify ok, ended ${end} s after the kill, nothing left after gc"
done

echo
echo "engine-loss matrix (bound: the drill ends within $BOUND_S s of kill -9):"
echo "$matrix"
