#!/bin/sh
# trial_engines.sh - ares trial fanned out over two engines (docs/cli-trial.md,
# "Engines").
#
# Starts a SECOND dockerd on this machine on a unix socket of its own (its
# own --data-root, --exec-root, --pidfile, containerd namespaces and cgroup
# parent under a mktemp dir; --bridge=none, --iptables=false, so it never
# touches the DOCKER chains of the suite's engine).  Then:
#   1. ares trial -n 6 --engine unix:///var/run/docker.sock --engine
#      unix://SECOND: both engines ran runs, every run contained, trial.json
#      (ares-trial-v2) names each run's engine and both engines with their
#      capacities, every run dir and the trial dir verify;
#   2. the same with the second engine killed (SIGKILL of its dockerd, its
#      containerd and shims and its containers' processes, found by its
#      exec-root and cgroup parent, never the suite engine's) once a drill
#      of its runs: its run is a failed attempt (run dir kept, engine and
#      reason named) rerun on the first engine, the trial ends with every
#      run done, trial.json names the engine of each, and it verifies
#      (each failed attempt's signed report too); an attempt's report.json
#      deleted or edited (no key) fails verify, and so does (with the key)
#      a run moved to another engine or the trial re-signed as v1;
#   3. a breach whose engine (a unix-socket forwarder to the second
#      engine, killed while the drills are held at the observe hook) then
#      goes away: the run's result (breached, exit 1), never a failed
#      attempt rerun elsewhere;
#   4. an engine that is not there: exit 3 naming it; a bad --engine URL,
#      a bad engines file and one engine under two spellings (the same
#      GET /info ID): exit 2 with the message.
# With --iptables=false the second engine adds no FORWARD rule for its
# lab bridges (the host's FORWARD policy is DROP): the test appends one
# rule of its own that lets frames bridged within one ares* bridge pass
# (physdev --physdev-is-bridged; what the suite's engine adds per bridge)
# and removes it on exit (checked; stale rules of earlier runs whose shell
# is gone are removed by their comment first).  Everything of the second engine (its processes,
# its containers' processes, mounts under its dirs, its bridges, the host
# firewall rules of its runs, its dirs) is removed on exit whatever
# happens; the suite's engine on /var/run/docker.sock is never stopped.
# Needs root, dockerd, the docker CLI, iptables with physdev, python3:
# skips (77) without them unless ARES_REQUIRE_DOCKER=1, where it fails.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
POLICY="$SRC/policies/default.yaml"
MAIN=unix:///var/run/docker.sock

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but $*"
	echo "skip: $*"; exit 77
}

[ "$(id -u)" = 0 ] || skip "not root (a second dockerd needs root)"
command -v dockerd >/dev/null 2>&1 || skip "no dockerd"
command -v docker >/dev/null 2>&1 || skip "no docker CLI"
command -v iptables >/dev/null 2>&1 || skip "no iptables"
command -v python3 >/dev/null 2>&1 || skip "no python3"
command -v ip >/dev/null 2>&1 || skip "no ip (iproute2)"
docker -H "$MAIN" version >/dev/null 2>&1 || skip "no engine on $MAIN"

base=$(mktemp -d /tmp/ares-te.XXXXXX) || fail "mktemp"
chmod 0711 "$base"
sock="$base/docker.sock"
SECOND="unix://$sock"
pidfile="$base/dockerd.pid"
cgparent="ares-te-$$"
fwc="ares-trial-engines-$$"
dpid=
export ARES_RUNS="$base/runs"
export ARES_KEY_DIR="$base/keys"
unset DOCKER_HOST DOCKER_TLS_VERIFY DOCKER_TLS DOCKER_CERT_PATH
mkdir -p "$ARES_RUNS"

fwrule() { # -A or -D: the one FORWARD rule of this test
	iptables -w 5 "$1" FORWARD -i ares+ -o ares+ -m physdev \
	    --physdev-is-bridged -m comment --comment "$fwc" -j ACCEPT
}

engine_pid() { [ -s "$pidfile" ] && cat "$pidfile"; }

# Every process of the second engine: its dockerd (pidfile), the processes
# whose command line names our dirs (its containerd and shims: their
# -address is under our exec-root) and the processes in its containers'
# cgroups (its --cgroup-parent), never anything of the suite's engine.
second_pids() {
	p=$(engine_pid)
	[ -n "$p" ] && grep -q "$base" "/proc/$p/cmdline" 2>/dev/null && echo "$p"
	for f in /proc/[0-9]*/cmdline; do
		q=${f#/proc/}
		q=${q%/cmdline}
		[ "$q" = $$ ] && continue
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q -- "$base/exec" && echo "$q"
	done
	for c in /sys/fs/cgroup/*/"$cgparent"; do
		[ -d "$c" ] || continue
		find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null
	done
}

# SIGKILL all of them (thawed first: a frozen process does not die).
kill_second() {
	for fz in $(find /sys/fs/cgroup/freezer/"$cgparent" -name freezer.state 2>/dev/null); do
		echo THAWED >"$fz" 2>/dev/null
	done
	for _ in 1 2 3; do
		ps=$(second_pids | sort -u)
		[ -n "$ps" ] || break
		# shellcheck disable=SC2086
		kill -KILL $ps 2>/dev/null
		sleep 0.3
	done
}

# The lab bridges the second engine made (names from its API, kept so that
# they can be removed once it is dead).
note_bridges() {
	curl -s --max-time 3 --unix-socket "$sock" \
	    'http://localhost/networks?filters=%7B%22label%22%3A%5B%22ares.run%22%5D%7D' 2>/dev/null |
	    grep -o '"com.docker.network.bridge.name":"[a-z0-9]*"' |
	    sed 's/.*:"\(.*\)"/\1/' >>"$base/bridges"
}

# What the labs of the dead engine left on this host: the host firewall
# rules of its runs and their bridges.
purge_second() {
	# the runs the second engine held (their drill.start names it), whose
	# labs died with it: their host firewall rules and lab bridges
	grep -l "\"engine_url\":\"$SECOND\"" "$ARES_RUNS"/*/runs/*/evidence.jsonl \
	    2>/dev/null | while read -r f; do
		basename "$(dirname "$f")"
	done >>"$base/second-runs"
	for r in $(sort -u "$base/second-runs" 2>/dev/null); do
		for t in iptables ip6tables; do
			command -v $t >/dev/null 2>&1 || continue
			$t -w 5 -S 2>/dev/null | grep -- "ares.run=$r\"" |
			    tee -a "$base/second-rules" |
			    sed 's/^-A /-D /' | while read -r rule; do
				eval "$t -w 5 $rule" 2>/dev/null
			done
		done
	done
	sed -n 's/.* -i \(ares[0-9a-f]*\) .*/\1/p' "$base/second-rules" \
	    2>/dev/null >>"$base/bridges"
	sort -u "$base/bridges" 2>/dev/null | while read -r br; do
		[ -n "$br" ] && ip link del "$br" 2>/dev/null
	done
}

# Delete the test's FORWARD rule until it is gone (-D can fail while the
# xtables lock is held); 1 when it is still there.
fwrule_del() {
	for _ in 1 2 3 4 5; do
		fwrule -C 2>/dev/null || return 0
		fwrule -D 2>/dev/null
	done
	! fwrule -C 2>/dev/null
}

# FORWARD rules of earlier runs of this test whose shell is gone (killed
# before its cleanup ran): their comment is ares-trial-engines-<pid>.
purge_stale_rules() {
	iptables -w 5 -S FORWARD 2>/dev/null |
	    grep -- '--comment "\{0,1\}ares-trial-engines-[0-9]*' |
	    while read -r rule; do
		pid=$(echo "$rule" | sed 's/.*ares-trial-engines-\([0-9]*\).*/\1/')
		[ "$pid" = $$ ] && continue
		kill -0 "$pid" 2>/dev/null && continue
		eval "iptables -w 5 $(echo "$rule" | sed 's/^-A /-D /')" 2>/dev/null &&
		    echo "removed a stale rule of an earlier run (pid $pid)" >&2
	done
}

# Stop the background ares trial (bounded: SIGTERM, then SIGKILL).
stop_trial() {
	[ -n "$apid" ] || return 0
	kill -TERM "$apid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$apid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
	apid=
}

cleanup() {
	stop_trial
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null
	[ -n "$(engine_pid)" ] && note_bridges
	kill_second
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	fwrule_del || { echo "FAIL: the FORWARD rule $fwc could not be removed" >&2; crc=1; }
	purge_second
	grep " $base/" /proc/mounts | awk '{print $2}' | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	grep " $base " /proc/mounts | awk '{print $2}' |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	for c in $(find /sys/fs/cgroup/*/"$cgparent" -depth -type d 2>/dev/null); do
		rmdir "$c" 2>/dev/null
	done
	if [ "${ARES_TRIAL_ENGINES_KEEP:-0}" = 1 ]; then
		echo "kept $base" >&2
	else
		rm -rf "$base"
	fi
	[ "$crc" = 0 ] || exit 1
}
apid=
fpid=
crc=0
trap cleanup EXIT
trap 'exit 1' HUP INT TERM PIPE

iptables -w 5 -m physdev -h >/dev/null 2>&1 || skip "iptables without physdev"
purge_stale_rules
fwrule -A || fail "cannot add the test's FORWARD rule"

echo '{}' >"$base/daemon.json"
env HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY= \
    dockerd --config-file "$base/daemon.json" -H "$SECOND" \
    --data-root "$base/data" --exec-root "$base/exec" --pidfile "$pidfile" \
    --containerd-namespace "ares-te-$$" \
    --containerd-plugins-namespace "ares-te-$$-plugins" \
    --cgroup-parent "$cgparent" \
    --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
    --userland-proxy=false --log-level warn >>"$base/dockerd.log" 2>&1 &
dpid=$!
up=0
for _ in $(seq 1 150); do
	if curl -s --max-time 2 --unix-socket "$sock" http://localhost/_ping 2>/dev/null |
	    grep -q OK; then
		up=1
		break
	fi
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.2
done
[ $up = 1 ] || { tail -20 "$base/dockerd.log" >&2; fail "the second dockerd did not come up on $sock"; }

# jq-free reads of trial.json
tj() { python3 - "$@"; }

# ---- 4 first (cheap): refusals ----------------------------------------
"$ARES" trial --policy "$POLICY" -n 2 --engine "$MAIN" \
    --engine "unix://$base/none.sock" >"$base/none.out" 2>&1
rc=$?
[ $rc = 3 ] || fail "an engine that is not there: exit $rc (want 3): $(cat "$base/none.out")"
grep -q "engine unix://$base/none.sock" "$base/none.out" ||
    fail "the missing engine is not named: $(cat "$base/none.out")"
[ -z "$(ls "$ARES_RUNS")" ] || fail "a trial dir was made for a missing engine"
echo "ok: an engine that is not there: exit 3, named, nothing made"

"$ARES" trial --policy "$POLICY" -n 2 --engine "tcp://h:65536" >"$base/bad.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "a bad --engine: exit $rc (want 2)"
grep -q -- '--engine=tcp://h:65536: bad port "65536" (1..65535)' "$base/bad.out" ||
    fail "a bad --engine: message: $(cat "$base/bad.out")"
printf 'engines:\n  - url: %s\n    capacity: 65\n' "$MAIN" >"$base/bad.yaml"
"$ARES" trial --policy "$POLICY" -n 2 --engines "$base/bad.yaml" >"$base/bad.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "a bad engines file: exit $rc (want 2)"
grep -q "$base/bad.yaml:3:15: engines\[0\].capacity: \"65\": want an integer 1..64" \
    "$base/bad.out" || fail "a bad engines file: message: $(cat "$base/bad.out")"
echo "ok: a bad --engine and a bad engines file: exit 2 with the message"

# one engine under two spellings: the same daemon ID (GET /info), refused
"$ARES" trial --policy "$POLICY" -n 2 --engine "$MAIN" \
    --engine unix:///var/run//docker.sock >"$base/same.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "one engine given twice: exit $rc (want 2): $(cat "$base/same.out")"
grep -q "engines $MAIN and unix:///var/run//docker.sock are the same engine (ID, name and data root " \
    "$base/same.out" || fail "one engine given twice: message: $(cat "$base/same.out")"
[ -z "$(ls "$ARES_RUNS")" ] || fail "a trial dir was made for an engine given twice"
echo "ok: one engine under two spellings: exit 2, both named"

# verify a trial dir and every run dir (and attempt dir) it names
verify_all() { # TRIAL_DIR
	"$ARES" verify "$1" >"$base/verify.out" 2>&1 ||
	    fail "ares verify $1: $(cat "$base/verify.out")"
	grep -q "^ok   trial.json: ares-trial-v2, " "$base/verify.out" ||
	    fail "ares verify does not name the trial's format: $(cat "$base/verify.out")"
	grep -q "engine .* signed evidence" "$base/verify.out" ||
	    fail "ares verify did not check the runs' engines: $(cat "$base/verify.out")"
	# (a failed attempt's dir is verified by the trial's verify: its lab
	# lost with the engine may leave a sensor file its report could not
	# seal, which fails a run dir's own verify)
	tj "$1/trial.json" >"$base/attempt-ids" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["runs"] + j.get("pending", []):
    for a in r["attempts"]:
        print(a["run_id"])
PY
	for d in "$1"/runs/*; do
		[ -s "$d/report.json" ] || continue
		grep -qx "$(basename "$d")" "$base/attempt-ids" && continue
		"$ARES" verify "$d" >"$base/verify-run.out" 2>&1 ||
		    fail "ares verify $d: $(cat "$base/verify-run.out")"
	done
}

# ---- 1. two engines ---------------------------------------------------
"$ARES" trial --policy "$POLICY" -n 6 --engine "$MAIN" --engine "$SECOND" \
    --json "$base/t1.json" >"$base/t1.out" 2>&1
rc=$?
# 0, or 4 when no run exercised the bait (the agent did not try: a
# not-exercised run proves nothing either way); never a breach or error
[ $rc = 0 ] || [ $rc = 4 ] ||
    fail "trial over two engines: exit $rc: $(tail -40 "$base/t1.out")"
tid=$(tj "$base/t1.json" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["trial_id"])
PY
)
t1="$ARES_RUNS/$tid"
tj "$t1/trial.json" "$MAIN" "$SECOND" <<'PY' || fail "trial 1: trial.json: $(cat "$base/t1.out")"
import json, sys
j = json.load(open(sys.argv[1]))
main, second = sys.argv[2], sys.argv[3]
assert j["format"] == "ares-trial-v2", j["format"]
assert j["engines"] == [{"engine": main, "capacity": 1},
                        {"engine": second, "capacity": 1}], j["engines"]
assert j["complete"] is True and len(j["runs"]) == 6, j
by = {}
for r in j["runs"]:
    # contained, or not exercised (the seed's agent did not try)
    assert r["verdict"] in ("contained", "not-exercised"), r
    assert r["attempts"] == [], r
    by[r["engine"]] = by.get(r["engine"], 0) + 1
assert by.get(main, 0) >= 1 and by.get(second, 0) >= 1, by
print("runs per engine:", by)
PY
grep -q "^engines (2)" "$base/t1.out" || fail "ares trial printed no engines table"
verify_all "$t1"
grep -A1 '^timing' "$base/t1.out"
echo "ok: a trial over two engines: both ran runs, none breached or error, every run dir and the trial verify"

# ---- 3. a breach whose engine then goes away is the run's result -------
# The lost engine is a unix-socket forwarder to the second engine
# (killing it makes that engine go away); a docker-socket agent breaches,
# both drills are held at the observe hook (ARES_TEST_HOOK) while the
# forwarder is killed.  The drill there is breached and engine-lost: a
# result (never a failed attempt rerun elsewhere), its engine DOWN, exit 1.
fwd="$base/fwd.sock"
python3 - "$fwd" "$sock" >/dev/null 2>&1 <<'PY' &
import os, socket, sys, threading
lp, tp = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX); s.bind(lp); os.chmod(lp, 0o600); s.listen(64)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    finally:
        for x in (a, b):
            try: x.shutdown(socket.SHUT_RDWR)
            except OSError: pass
while True:
    c, _ = s.accept()
    u = socket.socket(socket.AF_UNIX); u.connect(tp)
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
PY
fpid=$!
for _ in $(seq 1 50); do [ -S "$fwd" ] && break; sleep 0.1; done
[ -S "$fwd" ] || fail "the forwarder did not come up"
hook="$base/hook"
mkdir -p "$hook"
for h in lab-up agent levers battery sweep teardown; do touch "$hook/$h.go"; done
agent=$(cd "$SRC" && pwd)/leakbox/agents/docker-after-cutoff.sh
cat >"$base/breach.yaml" <<EOP
name: te-breach
seed: 7
limits:
  steps: 24
  seconds: 90
observe_ms: 1500
variant: default
bait: [tickets-admin-token, tickets-audit-hook]
levers: [gateway-deny, net-disconnect]
flaws: [docker-socket]
agent:
  script: $agent
EOP
ARES_TEST_HOOK="$hook" "$ARES" trial --policy "$base/breach.yaml" -n 2 \
    --engine "unix://$fwd" --engine "$MAIN" --json "$base/t3.json" \
    >"$base/t3.out" 2>&1 &
apid=$!
n=0
while [ ! -e "$hook/observe" ]; do
	n=$((n + 1))
	kill -0 "$apid" 2>/dev/null || fail "the breach trial ended before observe: $(tail -30 "$base/t3.out")"
	[ $n -lt 1200 ] || fail "no drill reached observe"
	sleep 0.1
done
sleep 8   # both drills held there
grep -l "\"engine_url\":\"unix://$fwd\"" "$ARES_RUNS"/*/runs/*/evidence.jsonl \
    2>/dev/null | while read -r f; do basename "$(dirname "$f")"; done >"$base/fwd-runs"
kill "$fpid"
wait "$fpid" 2>/dev/null
fpid=
sleep 0.5
touch "$hook/observe.go"
n=0
while kill -0 "$apid" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 9000 ] || fail "the breach trial did not end"
	sleep 0.1
done
wait "$apid"
rc=$?
apid=
# the forwarded engine's lab is on the second engine: remove it by its run
for r in $(sort -u "$base/fwd-runs"); do
	docker -H "$SECOND" ps -aq --filter "label=ares.run=$r" | xargs -r docker -H "$SECOND" rm -f >/dev/null 2>&1
	docker -H "$SECOND" network ls -q --filter "label=ares.run=$r" | xargs -r docker -H "$SECOND" network rm >/dev/null 2>&1
	for t in iptables ip6tables; do
		command -v $t >/dev/null 2>&1 || continue
		$t -w 5 -S 2>/dev/null | grep -- "ares.run=$r\"" |
		    sed 's/^-A /-D /' | while read -r rule; do
			eval "$t -w 5 $rule" 2>/dev/null
		done
	done
done
[ -s "$base/fwd-runs" ] || fail "no drill ran on the forwarded engine: $(tail -30 "$base/t3.out")"
[ $rc = 1 ] || fail "a breach whose engine went away: exit $rc (want 1): $(tail -40 "$base/t3.out")"
tid=$(tj "$base/t3.json" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["trial_id"])
PY
)
tj "$ARES_RUNS/$tid/trial.json" "unix://$fwd" "$(head -1 "$base/fwd-runs")" <<'PY' ||
import json, sys
j = json.load(open(sys.argv[1]))
fwd, rid = sys.argv[2], sys.argv[3]
# Whether the drill on the lost engine breached before the engine went
# is a race (the agent's calls go through that engine too): either that
# drill is the run's result, breached, or it is a failed attempt whose
# signed verdict the one scorer made "error" (breach evidence would have
# won, docs/scoring.md; ares verify below re-derives it) and the rerun
# elsewhere is the result.  A result is never a failed attempt.
for r in j["runs"]:
    for a in r["attempts"]:
        assert a["verdict"] == "error", ("a result made a failed attempt", r)
r = next((r for r in j["runs"] if r["run_id"] == rid), None)
if r is not None:
    assert r["engine"] == fwd and r["verdict"] == "breached", r
    print("the lost engine's run:", r["verdict"])
else:
    r = next(r for r in j["runs"]
             if any(a["run_id"] == rid for a in r["attempts"]))
    assert r["engine"] != fwd and r["verdict"] == "breached", r
    print("the lost engine's drill: a failed attempt (error), rerun:",
          r["verdict"])
assert j["summary"]["breached"] >= 1, j["summary"]
PY
    fail "a breach whose engine went away: $(tail -40 "$base/t3.out")"
grep -A1 "unix://$fwd .*DOWN" "$base/t3.out" >/dev/null ||
    fail "the lost engine is not marked DOWN: $(tail -40 "$base/t3.out")"
"$ARES" verify "$ARES_RUNS/$tid" >"$base/t3.verify" 2>&1
vrc=$?
[ $vrc = 0 ] || fail "the breach trial does not verify (exit $vrc): $(cat "$base/t3.verify")"
echo "ok: a breach whose engine went away is never a failed attempt (breached, exit 1, engine DOWN), verify ok"

# ---- 2. the second engine dies under a drill ---------------------------
"$ARES" trial --policy "$POLICY" -n 6 --engine "$MAIN" --engine "$SECOND" \
    --json "$base/t2.json" >"$base/t2.out" 2>&1 &
apid=$!
# wait for a drill of the second engine: an agent container running there
n=0
while :; do
	n=$((n + 1))
	kill -0 $apid 2>/dev/null || fail "the trial ended before a drill ran on the second engine: $(cat "$base/t2.out")"
	[ $n -lt 600 ] || fail "no drill ran on the second engine"
	c=$(curl -s --max-time 2 --unix-socket "$sock" \
	    'http://localhost/containers/json?filters=%7B%22label%22%3A%5B%22ares.role%3Dagent%22%5D%7D' 2>/dev/null)
	case $c in *'"State":"running"'*) break ;; esac
	sleep 0.1
done
echo "$c" | grep -o '"ares.run":"[^"]*"' | sed 's/.*:"\(.*\)"/\1/' >>"$base/second-runs"
note_bridges
kill_second
[ -z "$(second_pids | sort -u)" ] || fail "processes of the second engine survived SIGKILL"
kill -0 "$(cat /var/run/docker.pid 2>/dev/null || echo 1)" 2>/dev/null ||
    fail "the suite's engine is gone"
echo "killed the second engine under run(s) $(tr '\n' ' ' <"$base/second-runs")"
# bounded: the trial must end (at most 15 min) once the engine is gone
n=0
while kill -0 "$apid" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 9000 ] || fail "the trial did not end within 15 min of the engine's loss"
	sleep 0.1
done
wait $apid
rc=$?
apid=
[ $rc = 0 ] || [ $rc = 4 ] ||
    fail "trial with a lost engine: exit $rc (want 0: every run done, none an error): $(tail -40 "$base/t2.out")"
grep -q "engine $SECOND went away" "$base/t2.out" ||
    fail "ares trial did not say the engine went away: $(cat "$base/t2.out")"
tid=$(tj "$base/t2.json" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["trial_id"])
PY
)
t2="$ARES_RUNS/$tid"
tj "$t2/trial.json" "$MAIN" "$SECOND" "$t2" >"$base/t2.check" <<'PY' || fail "trial 2: trial.json: $(cat "$base/t2.check") $(tail -30 "$base/t2.out")"
import json, os, sys
j = json.load(open(sys.argv[1]))
main, second, tdir = sys.argv[2], sys.argv[3], sys.argv[4]
assert j["complete"] is True and len(j["runs"]) == 6, j["complete"]
s = j["summary"]
assert s["error"] == 0 and s["breached"] == 0, s
assert s["contained"] + s["not_exercised"] == 6, s
retried = 0
for r in j["runs"]:
    assert r["verdict"] in ("contained", "not-exercised"), r
    assert r["engine"] in (main, second), r
    for a in r["attempts"]:
        assert a["engine"] == second and a["verdict"] == "error", a
        assert a["reason"], a
        if a["run_id"]:
            assert a["run_dir"] == "runs/" + a["run_id"], a
            assert os.path.isdir(os.path.join(tdir, a["run_dir"])), a
            assert a["run_id"] != r["run_id"], (a, r)
        retried += 1
    if r["attempts"]:
        assert r["engine"] == main, r
assert retried >= 1, "no failed attempt recorded"
print("failed attempts:", retried)
PY
cat "$base/t2.check"
grep -A1 '^timing' "$base/t2.out"
verify_all "$t2"
grep -q "^ok   run [0-9]*: failed attempt .* on $SECOND: error, report verified" \
    "$base/verify.out" || fail "ares verify did not verify the failed attempt's report: $(cat "$base/verify.out")"
echo "ok the failed attempts' reports verified: $(grep -m1 'failed attempt' "$base/verify.out" | cut -c1-140)"
# a failed attempt's run dir, tampered with without any key, fails verify
att=$(tj "$t2/trial.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(next(a["run_id"] for r in j["runs"] for a in r["attempts"]
           if a["report_blake2b"]))
PY
) || fail "no failed attempt with a recorded report: $(cat "$base/t2.check")"
cp -a "$t2" "$base/tamper-rm"
rm "$base/tamper-rm/runs/$att/report.json"
"$ARES" verify "$base/tamper-rm" >"$base/tamper-rm.out" 2>&1
vrc=$?
[ $vrc = 1 ] || fail "an attempt's report deleted: verify exit $vrc: $(cat "$base/tamper-rm.out")"
grep -q "^FAIL run [0-9]*: failed attempt $att on $SECOND: its recorded report" \
    "$base/tamper-rm.out" || fail "an attempt's report deleted: $(cat "$base/tamper-rm.out")"
cp -a "$t2" "$base/tamper-ed"
sed -i 's/"verdict":\([[:space:]]*\)"error"/"verdict":\1 "error"/' "$base/tamper-ed/runs/$att/report.json"
! cmp -s "$t2/runs/$att/report.json" "$base/tamper-ed/runs/$att/report.json" ||
    fail "the attempt's report.json has no verdict error to edit: $(head -c 600 "$t2/runs/$att/report.json")"
"$ARES" verify "$base/tamper-ed" >"$base/tamper-ed.out" 2>&1
vrc=$?
[ $vrc = 1 ] || fail "an attempt's report edited: verify exit $vrc: $(cat "$base/tamper-ed.out")"
grep -q "^FAIL run [0-9]*: failed attempt $att on $SECOND: report.json's BLAKE2b-256 differs" \
    "$base/tamper-ed.out" || fail "an attempt's report edited: $(cat "$base/tamper-ed.out")"
echo "ok: a failed attempt's report deleted or edited (no key) fails verify"
echo "ok: the second engine killed mid-trial: its run(s) are failed attempts, rerun on the first engine, all 6 done (none breached or error), verify ok"

# nothing of the dead engine's labs stays on this host
kill_second
purge_second
for r in $(sort -u "$base/second-runs"); do
	! iptables -w 5 -S 2>/dev/null | grep -q -- "ares.run=$r\"" ||
	    fail "host firewall rules of run $r (second engine) left"
done
for br in $(sort -u "$base/bridges" 2>/dev/null); do
	! ip link show "$br" >/dev/null 2>&1 || fail "bridge $br of the second engine left"
done
echo "ok: the dead engine's runs left no host firewall rule and no bridge"

# ---- a re-signed trial.json that moves a run to another engine fails ---
if command -v minisign >/dev/null 2>&1 && [ -s "$ARES_KEY_DIR/ares.key" ]; then
	f="$base/forged"
	cp -a "$t2" "$f"
	tj "$f/trial.json" "$MAIN" "$SECOND" >"$base/forged.comment" <<'PY' || fail "forging"
import hashlib, json, sys
p, main, second = sys.argv[1:4]
j = json.load(open(p))
r = next(r for r in j["runs"] if r["engine"] == main and r["run_id"])
r["engine"] = second            # claim the other engine ran it
open(p, "w").write(json.dumps(j, indent="\t") + "\n")
lines = "".join("%d %s %s %s %s %s %d\n" % (x["index"], x["seed"],
    x["run_id"] or "-", x["verdict"], x["report_blake2b"] or "-",
    x["engine"] or "-", len(x["attempts"])) + "".join(
    "attempt %s %s\n" % (a["run_id"] or "-", a["report_blake2b"] or "-")
    for a in x["attempts"]) for x in j["runs"])
dig = hashlib.blake2b(lines.encode(), digest_size=32).hexdigest()
print("ares-trial-v2 trial=%s n=%d done=%d complete=%s runs=%s" % (
    j["trial_id"], j["n"], len(j["runs"]), "true" if j["complete"] else
    "false", dig))
PY
	minisign -S -s "$ARES_KEY_DIR/ares.key" -m "$f/trial.json" \
	    -t "$(cat "$base/forged.comment")" -x "$f/trial.json.minisig" \
	    </dev/null >/dev/null 2>&1 || fail "minisign -S"
	"$ARES" verify "$f" >"$base/forged.out" 2>&1
	vrc=$?
	[ $vrc = 1 ] || fail "a forged engine verifies (exit $vrc): $(cat "$base/forged.out")"
	grep -q '^ok   trusted comment matches' "$base/forged.out" ||
	    fail "the forgery was not re-signed consistently: $(cat "$base/forged.out")"
	grep -q "^FAIL run .*: trial.json engine $SECOND; its signed evidence (drill.start engine_url): $MAIN" \
	    "$base/forged.out" || fail "no FAIL naming the engine: $(cat "$base/forged.out")"
	echo "ok: a re-signed trial.json naming another engine for a run fails verify: $(grep -m1 '^FAIL run' "$base/forged.out" | cut -c1-140)"
	# downgraded to ares-trial-v1 (engines, attempts dropped), re-signed
	f="$base/downgraded"
	cp -a "$t2" "$f"
	tj "$f/trial.json" >"$base/down.comment" <<'PY' || fail "downgrading"
import hashlib, json, sys
p = sys.argv[1]
j = json.load(open(p))
j["format"] = "ares-trial-v1"
for k in ("engines", "pending", "stopped"):
    j.pop(k, None)
for r in j["runs"]:
    r.pop("engine", None)
    r.pop("attempts", None)
open(p, "w").write(json.dumps(j, indent="\t") + "\n")
lines = "".join("%d %s %s %s %s\n" % (x["index"], x["seed"],
    x["run_id"] or "-", x["verdict"], x["report_blake2b"] or "-")
    for x in j["runs"])
dig = hashlib.blake2b(lines.encode(), digest_size=32).hexdigest()
print("ares-trial-v1 trial=%s n=%d done=%d complete=%s runs=%s" % (
    j["trial_id"], j["n"], len(j["runs"]), "true" if j["complete"] else
    "false", dig))
PY
	minisign -S -s "$ARES_KEY_DIR/ares.key" -m "$f/trial.json" \
	    -t "$(cat "$base/down.comment")" -x "$f/trial.json.minisig" \
	    </dev/null >/dev/null 2>&1 || fail "minisign -S"
	"$ARES" verify "$f" >"$base/down.out" 2>&1
	vrc=$?
	[ $vrc = 1 ] || fail "a trial downgraded to v1 verifies (exit $vrc): $(cat "$base/down.out")"
	grep -q '^ok   trusted comment matches' "$base/down.out" ||
	    fail "the downgrade was not re-signed consistently: $(cat "$base/down.out")"
	grep -q "^FAIL run .*: its signed evidence names engine .*: a run of a trial over engines, in a trial without engines" \
	    "$base/down.out" || fail "no FAIL naming the downgrade: $(cat "$base/down.out")"
	grep -q "^FAIL runs/.*: made on engine $SECOND (drill.start engine_url), in a trial without engines" \
	    "$base/down.out" || fail "an attempt dir of a downgraded trial: $(cat "$base/down.out")"
	echo "ok: a v2 trial re-signed as ares-trial-v1 fails verify (its runs' signed engine_url)"
else
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "no minisign or no unencrypted key for the forgery check"
fi
