#!/bin/sh
# tests/tui/pace.sh - pacing for an audience, through tmux.
#
#  1 (80x24, no Docker) the bundled contained replay playing at x1 from
#    the bait, the lever fired and the lever verified beat ('g', ']' to it,
#    space): each stays the current beat (status line and last event row)
#    in a capture taken 400 ms after playing started; without the hold the
#    next beat comes 150 ms after them.  A sample is only conclusive when the check capture ended
#    within 1.1 s of the space that played on (the hold is 1.2 s): on a
#    loaded machine the sample is taken again, never judged late.
#  2 (80x24 --ascii, and UTF-8) the marker timeline on the events box's
#    bottom edge: B, f, v and V in order, the position (@ / the heavy
#    line) moving from the start to the end.
#  3 (120x40, Docker) ares --demo: home, then the default drill with
#    --present=1000 at once: its bait beat is
#    held on screen (400 ms after it showed no lever "fired" row yet,
#    though the lever fired within a millisecond; one sample), it verdicts
#    contained with the timeline on its screen; the agent took visibly
#    longer from its start to the bait than the bundled unpaced run (at
#    least 5 s more), yet the time to kill is under 1 s; drill.start says
#    "pace_ms": 1000 and lab.json "pace"; `ares verify` passes.  r opens
#    its replay (playing, as --present), q comes back to the drill's
#    screen, q goes home, q quits with the verdict's exit code.
# Exit 77 (skip) without tmux; case 3 skips without a Docker Engine
# unless ARES_REQUIRE_DOCKER=1 (then it fails).
set -u

ARES_BIN=${ARES_BIN:-./ares}
SRCDIR=${ARES_SRCDIR:-.}
VERDICT_TIMEOUT=${ARES_TUI_TIMEOUT:-180}

command -v tmux >/dev/null 2>&1 || { echo "SKIP: no tmux"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
case $ARES_BIN in
*/*) ;;
*) ARES_BIN=./$ARES_BIN ;;
esac
[ -x "$ARES_BIN" ] || { echo "FAIL: no executable ares at $ARES_BIN"; exit 1; }
REPLAY=$SRCDIR/replays/contained
PUB=$SRCDIR/replays/demo.pub
[ -f "$REPLAY/evidence.jsonl" ] || { echo "FAIL: no $REPLAY"; exit 1; }

# --present's value: 1..5000 ms, else a usage error (no drill starts).
for bad in "drill --present=0" "drill --present=5001" "drill --present=1x" \
    "--present=" "--present=-5"; do
	# shellcheck disable=SC2086
	"$ARES_BIN" $bad >/dev/null 2>"${TMPDIR:-/tmp}/pace.err.$$"; rc=$?
	grep -q -- '--present' "${TMPDIR:-/tmp}/pace.err.$$" ||
	    { rm -f "${TMPDIR:-/tmp}/pace.err.$$"; echo "FAIL: ares $bad: no message"; exit 1; }
	rm -f "${TMPDIR:-/tmp}/pace.err.$$"
	[ "$rc" -eq 2 ] || { echo "FAIL: ares $bad: exit $rc, want 2"; exit 1; }
done
# --demo opens the default drill: it takes no --policy or --seed.
for bad in "--demo --seed 3" "--demo --policy $SRCDIR/policies/default.yaml"; do
	# shellcheck disable=SC2086
	"$ARES_BIN" $bad >/dev/null 2>"${TMPDIR:-/tmp}/pace.err.$$"; rc=$?
	grep -q -- '--demo' "${TMPDIR:-/tmp}/pace.err.$$" ||
	    { rm -f "${TMPDIR:-/tmp}/pace.err.$$"; echo "FAIL: ares $bad: no message"; exit 1; }
	rm -f "${TMPDIR:-/tmp}/pace.err.$$"
	[ "$rc" -eq 2 ] || { echo "FAIL: ares $bad: exit $rc, want 2"; exit 1; }
done

TUI_NAME=pace
# shellcheck source=tests/tui/tmux.sh
. "$(dirname "$0")/tmux.sh"

# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
	if tm has-session -t main 2>/dev/null && ! pane_dead; then
		key q 2>/dev/null
		i=0
		while [ "$i" -lt 120 ] && ! pane_dead; do
			sleep 1
			i=$((i + 1))
		done
	fi
	tui_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# The status line, the last event row, the timeline row of the capture.
status_row() { printf '%s\n' "$last" | tail -n 1; }
event_row() { printf '%s\n' "$last" | tail -n 3 | head -n 1; }
tl_row() { printf '%s\n' "$last" | tail -n 2 | head -n 1; }

# held N BEAT LABEL: paused, from the start, N presses of ']' reach
# marker beat BEAT of 32 whose event row says LABEL; space plays on from
# there at x1: it must still be the current beat 400 ms later.
held() {
	tries=0
	while :; do
		capture
		status_row | grep -q 'playing' && key ' '
		wait_for 'paused x1' 5 || fail "space did not pause"
		key g
		i=0
		while [ "$i" -lt "$1" ]; do
			key ']'
			i=$((i + 1))
		done
		wait_for "replay: beat $2/32 .*paused" 5 ||
		    fail "$1 x ] did not reach beat $2"
		event_row | grep -q " $3 " ||
		    fail "beat $2's event row is not a '$3' beat"
		t_key=$(now_ms)
		key ' '
		seen=
		while [ $(($(now_ms) - t_key)) -lt 3000 ]; do
			capture
			if status_row | grep -q "playing"; then
				seen=1
				break
			fi
			sleep 0.05
		done
		[ -n "$seen" ] || fail "space did not play on from beat $2"
		sleep 0.4
		capture
		t_end=$(now_ms)
		if [ $((t_end - t_key)) -lt 1100 ]; then
			status_row | grep -q "replay: beat $2/32 .*playing" ||
			    fail "the '$3' beat $2 was not held: $(status_row)"
			event_row | grep -q " $3 " ||
			    fail "the '$3' beat $2 left the last event row"
			return 0
		fi
		tries=$((tries + 1))
		[ "$tries" -lt 6 ] ||
		    fail "no conclusive sample of beat $2 in $tries tries (loaded machine)"
	done
}

# ---- case 1: held marker beats, x1 ----
tui_start 80 24 "$(tui_run_cmd - color "$ARES_BIN" replay "$REPLAY" --pub "$PUB")"
wait_for 'replay: beat 1/32 ' 10 || fail "the replay did not open"
held 1 22 BAIT
held 2 24 fired
held 3 26 verified
echo "ok 1 - bait, fired and verified beats held at x1"

# ---- case 2: the timeline bar ----
for mode in ascii utf8; do
	if [ "$mode" = ascii ]; then
		tui_start 80 24 "$(tui_run_cmd - color "$ARES_BIN" replay "$REPLAY" --pub "$PUB" --ascii)"
		heavy='='
		posc='@'
	else
		tui_start 80 24 "$(tui_run_cmd - color "$ARES_BIN" replay "$REPLAY" --pub "$PUB")"
		heavy='━'
		posc='◆'
	fi
	wait_for 'replay: beat 1/32 ' 10 || fail "$mode: the replay did not open"
	row=$(tl_row)
	printf '%s\n' "$row" | grep -q 'B.*f.*v.*V' ||
	    fail "$mode: no B f v V markers on the timeline: $row"
	printf '%s\n' "$row" | grep -q "$posc" ||
	    fail "$mode: no position mark at beat 1: $row"
	n1=$(printf '%s\n' "$row" | grep -o "$heavy" | wc -l)
	key ']'
	wait_for 'replay: beat 22/32 ' 5 || fail "$mode: ] did not reach the bait"
	row=$(tl_row)
	n22=$(printf '%s\n' "$row" | grep -o "$heavy" | wc -l)
	key G
	wait_for 'contained: ' 5 || fail "$mode: G did not reach the verdict"
	row=$(tl_row)
	n32=$(printf '%s\n' "$row" | grep -o "$heavy" | wc -l)
	[ "$n1" -eq 0 ] && [ "$n22" -gt 20 ] && [ "$n32" -gt "$n22" ] ||
	    fail "$mode: the position did not move along (played $n1, $n22, $n32)"
	printf '%s\n' "$row" | grep -q 'B.*f.*v.*V' ||
	    fail "$mode: markers gone at the end: $row"
done
echo "ok 2 - the timeline shows the markers and the position moves"

# ---- case 3: a live drill in presenter mode, then r ----
if ! [ -S /var/run/docker.sock ] && [ -z "${DOCKER_HOST:-}" ]; then
	if [ "${ARES_REQUIRE_DOCKER:-0}" = 1 ]; then
		fail "no Docker Engine (ARES_REQUIRE_DOCKER=1)"
	fi
	echo "ok 3 # SKIP no Docker Engine"
	exit 0
fi
ARES_RUNS=$TMPD/runs
export ARES_RUNS
mkdir -p "$ARES_RUNS"
# --demo (what ./bootstrap demo opens): home, then the default drill at
# --present=1000 as soon as the engine answers; q comes back home
tui_start 120 40 "$(tui_run_cmd - color "$ARES_BIN" --demo)"
wait_for 'steps [1-9]' 60 || fail "the live drill shows no agent step"
# The bait held live: the drill fires its first lever within a millisecond
# of the bait, yet no "fired" event row shows until the bait's hold is
# over (the events box sorts rows by time, so the bait need not be its
# last row).  One try: a live drill cannot be sampled again; on a loaded
# machine the sample may be inconclusive, and then says so.
ev_rows() { printf '%s\n' "$last" | grep -E '^[|│] +\+ *[0-9]+\.[0-9]+s '; }
t_prev=$(now_ms)
live_bait=
while [ $(($(now_ms) - t_prev)) -lt 60000 ]; do
	t_a=$(now_ms)
	capture
	t_b=$(now_ms)
	if ev_rows | grep -q 's BAIT '; then
		live_bait=1
		break
	fi
	printf '%s\n' "$last" | grep -Eq '^ *(contained|breached|not-exercised|error): ' && break
	t_prev=$t_a
	sleep 0.05
done
[ -n "$live_bait" ] || fail "the live bait never showed in the events"
if ev_rows | grep -q 's fired '; then
	# the bait showed after t_prev: its hold lasts past t_prev + 1.2 s
	[ $((t_b - t_prev)) -ge 1100 ] ||
	    fail "the live bait was not held: a lever fired row came with it"
	echo "ok 3a # inconclusive sample (loaded machine)"
else
	sleep 0.4
	capture
	if [ $(($(now_ms) - t_prev)) -lt 1100 ]; then
		ev_rows | grep -q 's fired ' &&
		    fail "the live bait was not held: a lever fired row 400 ms after it"
		ev_rows | grep -q 's BAIT ' || fail "the live bait row went away"
		echo "ok 3a - the live bait beat held"
	else
		echo "ok 3a # inconclusive sample (loaded machine)"
	fi
fi
wait_for '^ *(contained|breached|not-exercised|error): ' "$VERDICT_TIMEOUT" || fail "no verdict"
printf '%s\n' "$last" | grep -q 'contained: ' ||
    fail "the paced drill did not verdict contained"
printf '%s\n' "$last" | grep -q 'r replay' || fail "no 'r replay' in the hint bar"
row=$(tl_row)
printf '%s\n' "$row" | grep -q 'B.*f.*v.*V' ||
    fail "no B f v V markers on the live timeline: $row"
key '?'
wait_for 'replay this drill' 5 || fail "the '?' overlay does not name r"
key '?'
wait_gone 'replay this drill' 5 || fail "the '?' overlay did not close"
printf '%s\n' "$last" | head -n 1 | grep -q '^ *PACED ' ||
    fail "the paced drill's title does not say PACED"
key r
wait_for 'events \(beat [0-9]+/[0-9]+\)' 10 || fail "r did not open the replay"
wait_for 'playing x1' 5 || fail "the replay (--present) is not playing"
printf '%s\n' "$last" | head -n 1 | grep -q '^ *PACED ' ||
    fail "the paced run's replay title does not say PACED"
key q
wait_for '^ *contained: ' 10 || fail "q did not come back to the drill"
printf '%s\n' "$last" | grep -q 'r replay' ||
    fail "q from the replay is not on the drill's screen"
printf '%s\n' "$last" | grep -Eq 'events \(beat' &&
    fail "still on the replay screen after q"
key q
wait_for 'policies \(Enter: run a drill\)' 10 || fail "--demo: q did not come back home"
key q
wait_exit 120 || fail "the console did not quit"
printf '%s\n' "$last" | grep -q 'ares-exit rc=0 tty=restored' ||
    fail "exit not rc=0 with the tty restored"
run=$(ls -d "$ARES_RUNS"/*/ 2>/dev/null | head -n 1)
[ -n "$run" ] && [ -f "$run/evidence.jsonl" ] || fail "no run dir in $ARES_RUNS"
"$ARES_BIN" verify "$run" >"$TMPD/verify.out" 2>&1 ||
    { cat "$TMPD/verify.out"; fail "ares verify of the paced run failed"; }
grep -q '^\*\*Paced for presentation\*\*' "$run/report.md" ||
    fail "the paced run's report.md does not say it was paced"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("pace_ms") == 1000 else 1)' \
    "$run/drill.json" || fail "the paced run's drill.json has no pace_ms 1000"
python3 - "$run" "$REPLAY" <<'PY' || fail "the paced run's evidence"
import json, sys
run, base = sys.argv[1], sys.argv[2]
def lines(d):
    with open(d + "/evidence.jsonl") as f:
        return [json.loads(l) for l in f]
def explore_ms(d):
    t = {}
    for j in lines(d):
        t.setdefault(j["type"], j["t_mono_ns"])
    return (t["bait"] - t["agent.start"]) / 1e6
start = [j for j in lines(run) if j["type"] == "drill.start"][0]
assert start.get("pace_ms") == 1000, "drill.start has no pace_ms 1000"
lab = json.load(open(run + "/lab.json"))
assert lab["pace"]["gateway_turn_ms"] == 1000, "lab.json has no pace"
dj = json.load(open(run + "/drill.json"))
assert dj["verdict"] == "contained", dj["verdict"]
ttk = dj["time_to_kill_ms"]
assert 0 <= ttk < 1000, "time to kill %.1f ms" % ttk
paced, unpaced = explore_ms(run), explore_ms(base)
assert paced >= unpaced + 5000, "explored %.0f ms (unpaced %.0f)" % (
    paced, unpaced)
print("paced: explored %.0f ms (unpaced %.0f ms), time to kill %.1f ms" % (
    paced, unpaced, ttk))
PY
echo "ok 3 - a presenter-mode drill is paced, recorded as paced, kills as fast, verifies; r replays it"
