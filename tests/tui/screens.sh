#!/bin/sh
# tests/tui/screens.sh - the trial, probe and fix screens of the console,
# driven through tmux at 80x24 from the home screen.
#
# Runs in a scratch directory with copies of policies/default.yaml,
# hardened.yaml and flaw-docker-socket.yaml (so the runs, and the fix
# loop's proposal, stay out of the source tree and its git repository).
# ARES_RUNS is kept short ($TMPD/r): a trial's labs live in
# RUNS/trial-<id>/runs/<id>/ and the gateway's control socket path must fit
# in sun_path (108 bytes).
# Case 1: '?' on the home screen lists t, p and f.
# Case 2: p on hardened.yaml: rows appear, the screen says "held".
# Case 2b: q while a probe runs: back home within 30 s, the run's signed
#         probe.json says "cancelled".
# Case 3: '-' x8 then t on default.yaml: a trial of N=2 shows its rates as
#         "k/n [lo, hi]" and the time to kill.
# Case 4: f on flaw-docker-socket.yaml (seed 7, the policy's): the fix loop
#         ends on "verified fix" and names pr.md.
# Each screen goes back home on q; the last q quits and restores the tty.
#
# Exit 77 (skip) without tmux or a reachable Docker Engine, unless
# ARES_REQUIRE_DOCKER=1 (then those are failures).
set -u

ARES_BIN=${ARES_BIN:-./ares}
JOB_TIMEOUT=${ARES_TUI_TIMEOUT:-120}

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
if [ -z "${DOCKER_HOST:-}" ] && command -v curl >/dev/null 2>&1 &&
    ! curl -s -m 5 --unix-socket /var/run/docker.sock \
    http://localhost/_ping 2>/dev/null | grep -q OK; then
	skip_or_fail "the Docker Engine does not answer /_ping"
fi
SRC=$(cd "$(dirname "$0")/../.." && pwd)
case $ARES_BIN in
/*) ;;
*) ARES_BIN=$(pwd)/$ARES_BIN ;;
esac
if ! [ -x "$ARES_BIN" ]; then
	echo "FAIL: no executable ares at $ARES_BIN (set ARES_BIN)"
	exit 1
fi

TUI_NAME=screens
# shellcheck source=tests/tui/tmux.sh
. "$(dirname "$0")/tmux.sh"

# Ask a still-running console to quit (so the drill tears its lab down),
# wait a while for it, then remove the tmux server and our files.
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
	if tm has-session -t main 2>/dev/null && ! pane_dead; then
		# q stops a running job, a second goes home, a third quits
		key q 2>/dev/null
		sleep 1
		key q 2>/dev/null
		i=0
		while [ "$i" -lt 120 ] && ! pane_dead; do
			sleep 1
			i=$((i + 1))
			[ $((i % 5)) = 0 ] && key q 2>/dev/null
		done
	fi
	tui_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Start a session of $1 x $2 running ares in the scratch directory.
start() {
	tui_start "$1" "$2" \
	    "cd '$TMPD/w' && ARES_RUNS='$TMPD/r' $(tui_run_cmd - color "$ARES_BIN")"
}

mkdir -p "$TMPD/w/policies" || exit 1
for p in default hardened flaw-docker-socket; do
	cp "$SRC/policies/$p.yaml" "$TMPD/w/policies/" ||
	    fail "cannot copy policies/$p.yaml"
done

# A capture taken right after a key may still show the screen from before
# it (the console has not read the key yet), so every step below waits
# for the key's effect instead of reading the next capture as its answer.

# cursor_row: the home screen's cursor row ("   > NAME ...") in $last.
cursor_row() {
	printf '%s\n' "$last" | grep -E '^ +> ' | head -n 1
}

# wait_first HEADING: wait (10 s) until the row right under the heading
# matching HEADING (awk regex) is the cursor row.
wait_first() {
	end=$(($(date +%s) + 10))
	while :; do
		capture
		printf '%s\n' "$last" | awk -v re="$1" '
		    f { seen = 1; exit !($0 ~ /^ +> /) }
		    $0 ~ re { f = 1 }
		    END { if (!seen) exit 1 }' && return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# walk_to RE: press j until the cursor row matches "^ +> RE"; after each j
# wait (5 s) for the cursor row to change.  1 when it never gets there.
walk_to() {
	i=0
	while [ "$i" -lt 60 ]; do
		row=$(cursor_row)
		printf '%s\n' "$row" | grep -Eq "^ +> $1" && return 0
		key j
		end=$(($(date +%s) + 5))
		while :; do
			capture
			[ "$(cursor_row)" != "$row" ] && break
			[ "$(date +%s)" -ge "$end" ] && return 1
			sleep 0.1
		done
		i=$((i + 1))
	done
	return 1
}

# pick NAME: put the home cursor on the scratch copy of policy NAME.
pick() {
	key g
	wait_first '^ +policies \\(Enter' ||
	    fail "g did not put the cursor on the first policy"
	walk_to "$1 " || fail "cannot put the cursor on $1"
}

# pick_run PREFIX: put the home cursor on the first recorded run whose
# name starts with PREFIX.
pick_run() {
	key g
	key Tab
	wait_first '^ +recorded runs \\(Enter' ||
	    fail "Tab did not put the cursor on the first recorded run"
	walk_to "$1" || fail "cannot put the cursor on a run named $1*"
}

# attack_cells: the ATTACK cells of the probe rows on screen, one a line
# (the column runs from x 10 to where OBSERVED starts, less 2).
attack_cells() {
	printf '%s\n' "$last" | awk '
	    /RESULT +ATTACK +OBSERVED/ { w = index($0, "OBSERVED") - 13; next }
	    w > 0 && /^ +(PASS|FAIL|ERROR|SKIP|WARN|BLIND)/ {
		print substr($0, 11, w) }'
}

# back_home WHAT: q on a finished screen goes back home.
back_home() {
	key q
	wait_for 'policies \(Enter: run a drill\)' 60 ||
	    fail "q on the $1 screen did not go back home"
}

start 80 24
wait_for 'policies \(Enter: run a drill\)' 30 || fail "no home screen"
printf '%s\n' "$last" | grep -q 'No Docker Engine' &&
    skip_or_fail "the console sees no Docker Engine"

# ---- case 1: help ----
key '?'
wait_for ' t +policy: a trial' 10 || fail "'?' does not list t"
printf '%s\n' "$last" | grep -Eq ' p +policy: the inside-out' ||
    fail "'?' does not list p"
printf '%s\n' "$last" | grep -Eq ' f +policy: the fix loop' ||
    fail "'?' does not list f"
key x
sleep 0.5
echo "ok 1 - '?' on the home screen lists t, p and f"

# ---- case 2: probe ----
pick hardened.yaml
key p
wait_for '^ *ares probe  policy hardened' 15 || fail "no probe screen"
wait_for 'RESULT: (held|failed)' "$JOB_TIMEOUT" ||
    fail "the probe did not finish within ${JOB_TIMEOUT}s"
printf '%s\n' "$last" | grep -q 'RESULT: held' ||
    fail "hardened.yaml did not hold"
# 80 columns: every ATTACK cell reads differently, at the end of the list
# and at its top (k scrolls up; the DNS and socket rows share long heads)
for where in end top; do
	if [ $where = top ]; then
		i=0
		while [ "$i" -lt 30 ]; do key k; i=$((i + 1)); done
		sleep 0.5
		capture
		printf '%s\n' "$last" | grep -q 'network egress: enum' ||
		    fail "k did not scroll the probe rows to the top"
	fi
	n_cells=$(attack_cells | wc -l)
	n_uniq=$(attack_cells | sort -u | wc -l)
	[ "$n_cells" -ge 5 ] || fail "only $n_cells probe rows on screen ($where)"
	[ "$n_cells" = "$n_uniq" ] ||
	    { attack_cells | sort | uniq -d
	      fail "two ATTACK cells read the same at 80x24 ($where)"; }
done
printf '%s\n' "$last" | grep -Eq '^ +PASS +[a-z]' || fail "no PASS row"
printf '%s\n' "$last" | grep -Eq '\] 1[0-9]/1[0-9]|\] [0-9]+/[0-9]+' ||
    fail "no progress bar"
back_home probe
echo "ok 2 - probe on hardened.yaml: rows and held"

# ---- case 2b: q during a probe stops it (signed "cancelled", lab down) ----
pick hardened.yaml
key p
wait_for '\] [1-9][0-9]*/[0-9]+ +running' 60 || fail "the probe did not start"
key q
wait_for 'policies \(Enter: run a drill\)' 30 ||
    fail "q during a probe did not come home within 30s"
grep -l '"result":	"cancelled"' "$TMPD"/r/*/probe.json >/dev/null 2>&1 ||
    fail "no probe.json with result cancelled under $TMPD/r"
echo "ok 2b - q during a probe: home at once, the partial report says cancelled"

# ---- case 3: trial N=2 ----
pick default.yaml
for i in 1 2 3 4 5 6 7 8; do
	key -- -
done
wait_for 't trial \(N=2 J=2' 10 || fail "'-' did not bring N down to 2"
key t
wait_for '^ *ares trial  policy default' 15 || fail "no trial screen"
wait_for 'time to kill +(median|none)' "$JOB_TIMEOUT" ||
    fail "the trial did not finish within ${JOB_TIMEOUT}s"
printf '%s\n' "$last" |
    grep -Eq 'contained +[0-9]+/[0-9]+ \[[0-9.]+, [0-9.]+\]' ||
    fail "no contained rate with an interval"
printf '%s\n' "$last" | grep -Eq '\] 2/2' || fail "no progress bar at 2/2"
# a resize redraws the screen
tm resize-window -t main -x 100 -y 30 2>/dev/null &&
    { sleep 1; wait_for '^ *ares trial  policy default' 5 ||
    fail "the trial screen is gone after a resize"; }
back_home trial
tm resize-window -t main -x 80 -y 24 2>/dev/null
echo "ok 3 - trial of N=2: rates with Clopper-Pearson intervals"

# ---- case 4: fix ----
if [ "${ARES_SCREENS_SKIP_FIX:-0}" = 1 ]; then
	echo "ok 4 # SKIP the fix screen (ARES_SCREENS_SKIP_FIX=1)"
else
	pick flaw-docker-socket.yaml
	key f
	wait_for '^ *ares fix  policy flaw-docker-socket  seed 7' 15 ||
	    fail "no fix screen (seed 7)"
	wait_for '^ *outcome ' "$JOB_TIMEOUT" ||
	    fail "the fix loop did not finish within ${JOB_TIMEOUT}s"
	printf '%s\n' "$last" | grep -q 'outcome  verified fix' ||
	    fail "not a verified fix"
	printf '%s\n' "$last" | grep -Eq 'pr\.md +/.*/pr\.md' ||
	    fail "pr.md is not named"
	# the beats scroll: with both held-out reruns the attribution may
	# sit above the window; k scrolls up (at most 10 lines)
	i=0
	while ! printf '%s\n' "$last" | grep -q 'fix.attribute' &&
	    [ "$i" -lt 10 ]; do
		key k
		sleep 0.2
		capture
		i=$((i + 1))
	done
	printf '%s\n' "$last" | grep -q 'fix.attribute' ||
	    fail "no attribution beat"
	back_home fix
	echo "ok 4 - fix on flaw-docker-socket.yaml: verified fix, pr.md"
fi

# ---- case 4b: the recorded trial and fix dirs open their own screens ----
pick_run trial-
key Enter
wait_for '^ *ares trial trial-' 10 || fail "the trial dir did not open its screen"
printf '%s\n' "$last" | grep -q "verified: trial.json's signature" ||
    fail "the trial screen's badge does not say verified"
printf '%s\n' "$last" |
    grep -Eq 'contained +[0-9]+/[0-9]+ \[[0-9.]+, [0-9.]+\] +\[[█▓░ ]+\]' ||
    fail "no contained rate drawn as a bar"
printf '%s\n' "$last" | grep -Eq 'run 0 +(contained|breached|not-exercised)' ||
    fail "no run list on the trial screen"
key Enter
wait_for 'events \(beat 1/' 10 || fail "Enter on a trial run did not replay it"
key q
wait_for '^ *ares trial trial-' 10 || fail "q in the run's replay did not come back"
back_home "recorded trial"
echo "ok 4b - a trial dir opens its screen: badge, bars, runs, Enter replays"
if [ "${ARES_SCREENS_SKIP_FIX:-0}" = 1 ]; then
	echo "ok 4c # SKIP the fix dir screen (ARES_SCREENS_SKIP_FIX=1)"
else
	pick_run fix-
	key Enter
	wait_for '^ *ares fix [0-9]' 10 || fail "the fix dir did not open its screen"
	printf '%s\n' "$last" | grep -q 'signature missing' &&
	    fail "the fix dir opened as a replay (signature missing)"
	printf '%s\n' "$last" | grep -q "verified: fix.json's signature" ||
	    fail "the fix screen's badge does not say verified"
	printf '%s\n' "$last" | grep -q 'outcome  verified fix' ||
	    fail "no outcome on the fix screen"
	printf '%s\n' "$last" | grep -Eq 'original \(breached\) +breached' ||
	    fail "no original run with its role and verdict"
	printf '%s\n' "$last" | grep -Eq 'rerun \(training\) +contained' ||
	    fail "no training rerun"
	printf '%s\n' "$last" | grep -Eq 'held-out-gen \(generated\) +contained' ||
	    fail "no generated held-out run"
	printf '%s\n' "$last" | grep -q 'the patch (policy.patch)' ||
	    fail "no patch"
	printf '%s\n' "$last" | grep -Eq '^ +-flaws: \[docker-socket\]' ||
	    fail "the patch does not show the flaw turned off"
	printf '%s\n' "$last" | grep -q '^ pr.md' || fail "no pr.md"
	key Enter
	wait_for 'events \(beat 1/' 10 || fail "Enter on a fix run did not replay it"
	key q
	wait_for '^ *ares fix [0-9]' 10 || fail "q in the run's replay did not come back"
	back_home "recorded fix"
	echo "ok 4c - a fix dir opens its screen: badge, outcome, runs, patch, pr.md"
fi

key q
wait_exit 60 || fail "ares did not exit within 60s of 'q'"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=[0-9]+ tty=restored' ||
    fail "terminal not restored"
echo "ok 5 - clean quit"
exit 0
