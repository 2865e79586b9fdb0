#!/bin/sh
# tests/tui/console.sh - drive the live drill console through tmux.
#
# Case 1 (100x30): start "$ARES_BIN" with no arguments: the home screen
# lists the policies with the cursor on default.yaml; Enter starts that
# drill.  Wait for the verdict line (at most 180 s), check the lever panel
# (levers verified), the verdict word, Poyo's sprite, then q goes back home
# and a second q quits; check the program exited and left the terminal as
# it found it.
# The exit status is the drill's: 0 for contained, 1 for breached.
# The run is recorded in a scratch ARES_RUNS; replayed to its end, the
# drill sidebar shows the very counters the live screen showed (levers,
# bait, steps, blocked, breaches, leaks, orphans: the one reducer).
# Case 2 (60x20): the console must say "terminal too small (need 80x24)"
# and still quit cleanly on q.
# Case 3 (100x30): "$ARES_BIN --policy policies/default.yaml" opens on a
# drill; q while it runs says it is stopping, tears the lab down and quits
# on its own: exit status 5 (a cancelled drill is no verdict).
# Case 4 (100x30): from the home screen, Enter starts the drill, q stops it
# and goes back home, q quits: exit status 5 as well (the last drill's).
#
# Exit 77 (skip) without tmux or a reachable Docker Engine, unless
# ARES_REQUIRE_DOCKER=1 (then those are failures).
set -u

ARES_BIN=${ARES_BIN:-./ares}
VERDICT_TIMEOUT=${ARES_TUI_TIMEOUT:-180}

skip_or_fail() {
	if [ "${ARES_REQUIRE_DOCKER:-0}" = 1 ]; then
		echo "FAIL: $* (ARES_REQUIRE_DOCKER=1)"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

command -v tmux >/dev/null 2>&1 || skip_or_fail "tmux is not installed"
if ! [ -S /var/run/docker.sock ] && [ -z "${DOCKER_HOST:-}" ]; then
	skip_or_fail "no Docker Engine (no /var/run/docker.sock, no DOCKER_HOST)"
fi
case $ARES_BIN in
*/*) ;;
*) ARES_BIN=./$ARES_BIN ;;
esac
if ! [ -x "$ARES_BIN" ]; then
	echo "FAIL: no executable ares at $ARES_BIN (set ARES_BIN)"
	exit 1
fi

TUI_NAME=console
# shellcheck source=tests/tui/tmux.sh
. "$(dirname "$0")/tmux.sh"

# Ask a still-running console to quit (so the drill tears its lab down),
# wait a while for it, then remove the tmux server and our files.
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

# The drill sidebar's counters on the screen $1, one per line.
sidebar() {
	printf '%s\n' "$1" | sed '$d' | grep -Eo '(levers [0-9]+/[0-9]+|bait (fired|armed)|steps [0-9]+|blocked [0-9]+|breaches [0-9]+|leaks [0-9]+|orphans [0-9]+)( |$)' |
	    sed 's/ *$//'
}

ARES_RUNS=$TMPD/runs
export ARES_RUNS

# Start a session of $1 x $2 running ares.
start() {
	tui_start "$1" "$2" "$(tui_run_cmd - color "$ARES_BIN")"
}

# ---- case 1: a whole drill at 100x30 ----
start 100 30
wait_for 'policies \(Enter: run a drill\)' 30 || fail "no home screen"
printf '%s\n' "$last" | grep -Eq '^ +> default\.yaml ' ||
    fail "the home cursor is not on default.yaml"
key Enter
wait_for '^ *(contained|breached|not-exercised|error): ' "$VERDICT_TIMEOUT" ||
    fail "no verdict line within ${VERDICT_TIMEOUT}s"
screen=$last
printf '%s\n' "$screen" | grep -Eq '^ *(contained|breached): ' ||
    fail "verdict is neither contained nor breached"
# The lever panel: every lever row names its lever; at least one verified.
# Times in seconds, as the event list's.
printf '%s\n' "$screen" |
    grep -Eq '[0-9] [a-z][a-z0-9_-]+ +fired \+[0-9]+\.[0-9]{3}s +verified \+[0-9]+\.[0-9]{3}s' ||
    fail "no lever row shows a verified lever"
printf '%s\n' "$screen" | grep -Eq 'gateway-deny|net-disconnect|pause|kill' ||
    fail "no built-in lever name on the screen"
# Poyo: half-block cells (UTF-8 + colour), else the ASCII frame's feet.
cells=$(printf '%s\n' "$screen" | grep -o '▀\|▄' | wc -l)
if [ "$cells" -lt 20 ]; then
	printf '%s\n' "$screen" | grep -Eq "'m(--|__|-)m'" ||
	    fail "Poyo is not on the screen ($cells half-block cells)"
fi
printf '%s\n' "$screen" | grep -q 'lab boundary' || fail "no lab map"

case $(printf '%s\n' "$screen" | grep -Eo '^ *[a-z-]+: ' | head -n 1) in
*contained:*) want=0 ;;
*) want=1 ;;
esac
live_side=$(sidebar "$screen")
[ "$(printf '%s\n' "$live_side" | wc -l)" -eq 7 ] ||
    fail "the live sidebar does not show the 7 counters: $live_side"
key q
wait_for 'recorded runs \(Enter: replay\)' 30 ||
    fail "q after the verdict did not go back home (with the new run)"
key q
wait_exit 60 || fail "ares did not exit within 60s of 'q'"
printf '%s\n' "$last" | grep -Eq "ares-exit rc=$want tty=restored" ||
    fail "exit status is not $want (the verdict's) or terminal not restored"
[ "$(tm display-message -p -t main '#{alternate_on}')" = 0 ] ||
    fail "still on the alternate screen"
echo "ok 1 - drill at 100x30: verdict, levers verified, Poyo, clean quit"

# ---- case 1b: its replay shows the live sidebar's counters ----
run=$(ls -d "$ARES_RUNS"/*/ 2>/dev/null | head -n 1)
[ -n "$run" ] && [ -f "$run/evidence.jsonl" ] ||
    fail "the drill recorded no run in $ARES_RUNS"
tui_start 100 30 "$(tui_run_cmd - color "$ARES_BIN" replay "${run%/}")"
wait_for 'events \(beat 1/' 10 || fail "the recorded run does not replay"
key G
wait_for '^ *(contained|breached|not-exercised|error): ' 10 ||
    fail "the replay shows no verdict"
replay_side=$(sidebar "$last")
[ "$live_side" = "$replay_side" ] ||
    fail "sidebar live ($live_side) differs from its replay ($replay_side)"
key q
wait_exit 10 || fail "the replay did not quit"
echo "ok 1b - the replay of the drill shows the live sidebar's counters"

# ---- case 2: too small at 60x20 ----
start 60 20
wait_for 'terminal too small \(need 80x24\)' 30 ||
    fail "no 'terminal too small' message at 60x20"
printf '%s\n' "$last" | grep -q 'lab boundary' &&
    fail "the full layout was drawn into a 60x20 terminal"
key q
wait_exit "$VERDICT_TIMEOUT" || fail "ares did not exit after 'q' at 60x20"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=[0-9]+ tty=restored' ||
    fail "terminal not restored after quitting at 60x20"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=(0|1|4) ' ||
    fail "unexpected exit status after quitting at 60x20"
echo "ok 2 - terminal too small at 60x20, clean quit"

# ---- case 3: q stops a drill the console opened on: exit 5 ----
tui_start 100 30 "$(tui_run_cmd - color "$ARES_BIN" --policy policies/default.yaml)"
wait_for 'drill running' 30 || fail "case 3: the drill screen did not open"
key q
wait_for 'stopping: tearing the lab down' 30 ||
    fail "case 3: q did not stop the running drill"
wait_exit "$VERDICT_TIMEOUT" || fail "case 3: ares did not exit after stopping"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=5 tty=restored' ||
    fail "case 3: a cancelled drill did not exit 5 (or the tty changed)"
echo "ok 3 - q during a drill (--policy): stopped, torn down, exit 5"

# ---- case 4: from home, q stops the drill, q quits: exit 5 ----
start 100 30
wait_for 'policies \(Enter: run a drill\)' 30 || fail "case 4: no home screen"
key Enter
wait_for 'drill running' 30 || fail "case 4: Enter did not start the drill"
key q
wait_for 'stopping: tearing the lab down' 30 ||
    fail "case 4: q did not stop the running drill"
wait_for 'recorded runs \(Enter: replay\)' "$VERDICT_TIMEOUT" ||
    fail "case 4: no home screen after the drill stopped"
key q
wait_exit 60 || fail "case 4: ares did not exit within 60s of 'q'"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=5 tty=restored' ||
    fail "case 4: the console did not exit 5 after a cancelled drill"
echo "ok 4 - q during a drill from home, q: exit 5"
exit 0
