#!/bin/sh
# tests/tui/pane.sh - the drill layout's event pane (tui/pane.c) on the
# breached replay, through tmux (no Docker).
#
# At 80x24 (colour) and 120x40 (NO_COLOR, --ascii):
#  1 G, then k / Up and PgUp scroll the list on its own: its title says
#    where it is ("events A-B/N (beat N/N)"), older events show, the
#    newest goes out of view; End follows the newest again.
#  2 the mouse wheel (a wheel-up event written to the pane in the encoding
#    the program asked tmux for) scrolls it; Esc follows again.
#  3 /docker: the status line says "match i/n, beat K" and beat K's row
#    shows "docker"; n and N move to other matches and back; /nomatchxyz
#    says "not found"; at the prompt '?' is text, not the help.
#  4 Enter opens the pager on the selected event: its evidence line's JSON
#    keys ("prev", "kind"), the line number; space pages; Esc comes back
#    to the layout.
#  5 :5 shows beat 5 (the list ends there).
#  6 y: the pane's raw output holds exactly ESC ] 52 ; c ; base64(run id)
#    BEL, tmux (set-clipboard on) has the run id as its buffer, the status
#    line says "copied run id (OSC 52)"; Y copies the absolute run dir.
#  7 the '?' overlay lists the pane's keys; the status line says "q quit";
#    q quits with the tty restored.
# Then from the home screen: the replay's status line says "q home" and q
# goes home.  With a Docker Engine (required with ARES_REQUIRE_DOCKER=1),
# a live drill (default.yaml) at 80x24: k scrolls while it runs and the
# beats that come after do not move the list, End follows, Enter shows an
# evidence line of the run dir's chain, y / Y copy its id / dir, :3
# scrolls to beat 3, q quits with the verdict's code.
# Exit 77 (skip) without tmux or python3.
set -u

ARES_BIN=${ARES_BIN:-./ares}
SRCDIR=${ARES_SRCDIR:-.}

command -v tmux >/dev/null 2>&1 || { echo "SKIP: no tmux"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
case $ARES_BIN in
*/*) ;;
*) ARES_BIN=./$ARES_BIN ;;
esac
[ -x "$ARES_BIN" ] || { echo "FAIL: no executable ares at $ARES_BIN"; exit 1; }
REPLAY=$SRCDIR/replays/breached-docker-socket
PUB=$SRCDIR/replays/demo.pub
[ -f "$REPLAY/evidence.jsonl" ] || { echo "FAIL: no $REPLAY"; exit 1; }
RUN_ID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["run_id"])' \
    "$REPLAY/evidence.jsonl") || { echo "FAIL: no run id in $REPLAY"; exit 1; }
RUN_DIR_ABS=$(cd "$REPLAY" && pwd -P)

TUI_NAME=pane
# shellcheck source=tests/tui/tmux.sh
. "$(dirname "$0")/tmux.sh"
trap tui_cleanup EXIT
trap 'exit 1' INT TERM HUP

# The events box's rows (between its top edge and the next box edge).
events_rows() {
	printf '%s\n' "$last" | awk '/^[^ ]+ events / { on = 1; next }
	    on && !/^(│|\||x) / { exit } on { print }'
}
# The status line (the pane's last row).
status_line() {
	printf '%s\n' "$last" | tail -n 1
}
# The beat number the status line's "match i/n, beat K" names.
match_beat() {
	status_line | sed -n 's/.*match [0-9]*\/[0-9]*, beat \([0-9]*\).*/\1/p'
}

# match_after OLD: wait until the status line names a match on a beat
# other than OLD; prints it (empty on timeout).
match_after() {
	end=$(($(date +%s) + 5))
	while :; do
		capture
		m=$(match_beat)
		if [ -n "$m" ] && [ "$m" != "$1" ]; then
			printf '%s' "$m"
			return 0
		fi
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}

# wheel_up: one wheel-up notch at the middle of the events box, in the
# encoding the program asked for (SGR 1006 or the X10 default).
wheel_up() {
	sgr=$(tm display-message -p -t main '#{mouse_sgr_flag}')
	any=$(tm display-message -p -t main '#{mouse_standard_flag}#{mouse_button_flag}#{mouse_any_flag}')
	case $any in
	*1*) ;;
	*) return 1 ;;
	esac
	if [ "$sgr" = 1 ]; then
		key -H 1b 5b 3c 36 34 3b 31 30 3b 32 30 4d      # ESC [ < 64;10;20 M
	else
		key -H 1b 5b 4d 60 2a 34                        # ESC [ M ` * 4
	fi
}

# run_case W H COLOR ARGS...: the checks 1-7 at W x H.
run_case() {
	w=$1 h=$2 nc=$3
	shift 3
	tag="${w}x${h}"
	tui_start "$w" "$h" "$(tui_run_cmd xterm-256color "$nc" "$ARES_BIN" \
	    replay "$REPLAY" --pub "$PUB" "$@")"
	tm set-option -g set-clipboard on
	: >"$TMPD/raw"
	tm pipe-pane -t main -o "cat >>'$TMPD/raw'"
	wait_for 'events \(beat 1/[0-9]+\)' 10 || fail "$tag: replay did not open"
	NB=$(printf '%s\n' "$last" | sed -n 's/.*events (beat 1\/\([0-9]*\)).*/\1/p' | head -n 1)
	[ -n "$NB" ] || fail "no beat count in the events title"

	# ---- 1: scroll on its own ----
	key G
	wait_for "events \\(beat $NB/$NB\\)" 5 || fail "$tag: G did not go to the end"
	events_rows | grep -Eq 'verdict +breached' ||
	    fail "$tag: the verdict beat is not the newest row"
	events_rows | grep -q 'bringing the lab up' &&
	    fail "$tag: the oldest events show before scrolling"
	key k
	wait_for "events [0-9]+-$NB/$NB \\(beat $NB/$NB\\)" 5 ||
	    fail "$tag: k did not stop following (title)"
	key Up
	wait_for "events [0-9]+-$NB/$NB \\(beat $NB/$NB\\)" 5 ||
	    fail "$tag: Up broke the scroll"
	for _ in 1 2 3 4 5 6 7 8 9 10; do key PPage; done
	wait_for "events 1-[0-9]+/$NB \\(beat $NB/$NB\\)" 5 ||
	    fail "$tag: PgUp did not reach the oldest events"
	events_rows | grep -q 'bringing the lab up' ||
	    fail "$tag: older events not shown after PgUp"
	events_rows | grep -Eq 'verdict +breached' &&
	    fail "$tag: the newest event still shows at the top"
	key End
	wait_for "events \\(beat $NB/$NB\\)" 5 || fail "$tag: End did not follow again"
	events_rows | grep -Eq 'verdict +breached' ||
	    fail "$tag: End did not bring the newest event back"

	# ---- 2: the mouse wheel ----
	if wheel_up; then
		wheel_up
		wheel_up
		wheel_up
		wheel_up
		wait_for "events [0-9]+-[0-9]+/$NB \\(beat $NB/$NB\\)" 5 ||
		    fail "$tag: the wheel did not scroll the list"
		key Escape
		wait_for "events \\(beat $NB/$NB\\)" 5 ||
		    fail "$tag: Esc did not follow the newest again"
	else
		fail "$tag: the console did not ask for mouse (wheel) events"
	fi

	# ---- 3: search ----
	key / d o c k e r
	wait_for '/docker_' 5 || fail "$tag: no search prompt"
	key Enter
	wait_for '/docker: match [0-9]+/[0-9]+, beat [0-9]+' 5 ||
	    fail "$tag: /docker found nothing"
	b1=$(match_beat)
	key n
	b2=$(match_after "$b1") || fail "$tag: n stayed on beat $b1"
	events_rows | grep -qi docker ||
	    fail "$tag: the match of beat $b2 is not on the screen"
	key n
	b3=$(match_after "$b2") || fail "$tag: second n stayed on beat $b2"
	events_rows | grep -qi docker || fail "$tag: beat $b3's match not shown"
	key N
	wait_for "/docker: match [0-9]+/[0-9]+, beat $b2" 5 ||
	    fail "$tag: N did not go back to beat $b2"
	key / n o m a t c h x y z Enter
	wait_for '/nomatchxyz: not found' 5 || fail "$tag: no 'not found'"
	key / '?'
	wait_for '/\?_' 5 || fail "$tag: '?' at the prompt is not text"
	printf '%s\n' "$last" | grep -q 'this help' &&
	    fail "$tag: '?' at the prompt opened the help"
	key Escape
	wait_gone '/\?_' 5 || fail "$tag: Esc did not cancel the prompt"

	# ---- 4: the pager ----
	key / d o c k e r Enter
	bq=$(match_after x) || fail "$tag: search before Enter"
	key n
	bp=$(match_after "$bq") || fail "$tag: n before Enter"
	key Enter
	wait_for '"prev": "[0-9a-f]{64}"' 5 || fail "$tag: pager: no \"prev\" key"
	printf '%s\n' "$last" | grep -q '"kind": ' || fail "$tag: pager: no \"kind\" key"
	printf '%s\n' "$last" | grep -Eq 'evidence\.jsonl line [0-9]+' ||
	    fail "$tag: pager: no evidence line number"
	printf '%s\n' "$last" | grep -Eq "^ beat $bp of $NB " ||
	    fail "$tag: pager is not on the selected beat $bp"
	printf '%s\n' "$last" | grep -q 'q/esc back' || fail "$tag: pager: no keys"
	if [ "$h" -lt 30 ]; then
		# 22 rows: the evidence line takes more than a page
		printf '%s\n' "$last" | grep -q "beat $bp of $NB  lines 1-22/" ||
		    fail "$tag: pager: not on its first page"
		key Space
		wait_for "beat $bp of $NB  lines ([2-9]|[1-9][0-9]+)-" 5 ||
		    fail "$tag: pager: space did not page"
	fi
	key Escape
	wait_for 'lab boundary' 5 || fail "$tag: Esc did not close the pager"
	wait_gone 'q/esc back' 5 || fail "$tag: pager still up after Esc"

	# ---- 5: :N ----
	key : 5 Enter
	wait_for "events \\(beat 5/$NB\\)" 5 || fail "$tag: :5 did not show beat 5"
	status_line | grep -q 'beat 5' || fail "$tag: :5: no 'beat 5' on the status line"

	# ---- 6: y / Y (OSC 52) ----
	key y
	wait_for 'copied run id \(OSC 52\)' 5 || fail "$tag: y said nothing"
	sleep 0.3
	python3 - "$TMPD/raw" "$RUN_ID" <<'PY' || fail "$tag: no exact OSC 52 sequence for the run id"
import base64, sys
raw = open(sys.argv[1], "rb").read()
want = b"\x1b]52;c;" + base64.b64encode(sys.argv[2].encode()) + b"\x07"
sys.exit(0 if want in raw else 1)
PY
	[ "$(tm show-buffer)" = "$RUN_ID" ] ||
	    fail "$tag: tmux buffer is '$(tm show-buffer)', not the run id"
	key Y
	wait_for 'copied run dir \(OSC 52\)' 5 || fail "$tag: Y said nothing"
	sleep 0.3
	[ "$(tm show-buffer)" = "$RUN_DIR_ABS" ] ||
	    fail "$tag: tmux buffer is '$(tm show-buffer)', not $RUN_DIR_ABS"

	# ---- 7: the hints, q ----
	status_line | grep -q 'q quit' || fail "$tag: the status line does not say 'q quit'"
	key '?'
	wait_for 'search the events' 5 || fail "$tag: '?' does not list the pane's keys"
	printf '%s\n' "$last" | grep -q 'copy the run id' ||
	    fail "$tag: '?' does not list y"
	key Escape
	wait_gone 'search the events' 5 || fail "$tag: Esc did not close the help"
	key q
	wait_exit 10 || fail "$tag: no exit after q"
	printf '%s\n' "$last" | grep -Eq 'ares-exit rc=0 tty=restored' ||
	    fail "$tag: bad exit or terminal not restored"
	echo "ok: $tag"
}

run_case 80 24 color
run_case 120 40 nocolor --ascii

# ---- from home: the replay says "q home" and q goes home ----
mkdir -p "$TMPD/runs"
tui_start 80 24 "env ARES_RUNS='$TMPD/runs' $(tui_run_cmd xterm-256color color \
    "$ARES_BIN")"
wait_for '[0-9]+ policies, [0-9]+ runs' 15 || fail "home: no home screen"
key Tab
wait_for '> breached-docker-socket' 5 || fail "home: Tab did not reach the breached replay"
key Enter
wait_for 'events \(beat 1/[0-9]+\)' 10 || fail "home: the replay did not open"
	NB=$(printf '%s\n' "$last" | sed -n 's/.*events (beat 1\/\([0-9]*\)).*/\1/p' | head -n 1)
	[ -n "$NB" ] || fail "no beat count in the events title"
status_line | grep -q 'q home' || fail "home: the replay's status line does not say 'q home'"
key q
wait_for '[0-9]+ policies, [0-9]+ runs' 10 || fail "home: q did not go home"
key q
wait_exit 10 || fail "home: no exit after q"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=0 tty=restored' ||
    fail "home: bad exit or terminal not restored"
echo "ok: from home"

# ---- live: the drill screen's pane (needs the Docker Engine) ----
if ! [ -S /var/run/docker.sock ] && [ -z "${DOCKER_HOST:-}" ]; then
	if [ "${ARES_REQUIRE_DOCKER:-0}" = 1 ]; then
		fail "no Docker Engine (ARES_REQUIRE_DOCKER=1)"
	fi
	echo "skip: live drill (no Docker Engine)"
	exit 0
fi
# a console still running at exit is asked to quit (its lab torn down)
live_cleanup() {
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
trap live_cleanup EXIT
rm -rf "$TMPD/runs"
mkdir -p "$TMPD/runs"
tui_start 80 24 "env ARES_RUNS='$TMPD/runs' $(tui_run_cmd xterm-256color color \
    "$ARES_BIN" --policy "$SRCDIR/policies/default.yaml")"
tm set-option -g set-clipboard on
wait_for 'agent Poyo started' 120 || fail "live: the agent did not start"
key k
wait_for 'events [0-9]+-[0-9]+/[0-9]+' 5 || fail "live: k did not scroll"
range=$(printf '%s\n' "$last" | sed -n 's/.*events \([0-9]*-[0-9]*\)\/[0-9]*.*/\1/p' | head -n 1)
n0=$(printf '%s\n' "$last" | sed -n 's/.*events [0-9]*-[0-9]*\/\([0-9]*\).*/\1/p' | head -n 1)
wait_for '^ *(contained|breached|not-exercised|error): ' 180 || fail "live: no verdict"
printf '%s\n' "$last" | grep -q "events $range/" ||
    fail "live: new beats moved the scrolled list (was events $range)"
n1=$(printf '%s\n' "$last" | sed -n 's/.*events [0-9]*-[0-9]*\/\([0-9]*\).*/\1/p' | head -n 1)
status_line | grep -q 'q quit' || fail "live: the status line does not say 'q quit'"
key End
wait_for '(┌|l)(─|q) events (─|q)' 5 || fail "live: End did not follow again"
events_rows | grep -Eq 'verdict +contained' || fail "live: the verdict is not the newest row"
# the row above the verdict, or the nearest one above it that is in the
# run's chain (a display-only row, e.g. "bus: N event(s) ... never reached
# the drill" under load, opens as "not in evidence.jsonl")
tries=0
while :; do
	key k Enter
	wait_for '"prev": "[0-9a-f]{64}"|evidence: not in evidence\.jsonl' 10 ||
	    fail "live: the pager shows no evidence line"
	printf '%s\n' "$last" | grep -Eq '"prev": "[0-9a-f]{64}"' && break
	tries=$((tries + 1))
	[ "$tries" -lt 4 ] || fail "live: no row above the verdict is in the chain"
	key Escape
	wait_for 'lab boundary' 5 || fail "live: Esc did not close the pager"
done
printf '%s\n' "$last" | grep -Eq 'evidence\.jsonl line [0-9]+' ||
    fail "live: pager: no evidence line number"
key Escape
wait_for 'lab boundary' 5 || fail "live: Esc did not close the pager"
run_dir=$(ls -d "$TMPD"/runs/*/ | head -n 1)
run_dir=$(cd "$run_dir" && pwd -P)
key y
wait_for 'copied run id \(OSC 52\)' 5 || fail "live: y said nothing"
sleep 0.3
[ "$(tm show-buffer)" = "$(basename "$run_dir")" ] ||
    fail "live: tmux buffer is '$(tm show-buffer)', not the run id"
key Y
wait_for 'copied run dir \(OSC 52\)' 5 || fail "live: Y said nothing"
sleep 0.3
[ "$(tm show-buffer)" = "$run_dir" ] ||
    fail "live: tmux buffer is '$(tm show-buffer)', not $run_dir"
key : 3 Enter
wait_for 'events 3-[0-9]+/[0-9]+' 5 || fail "live: :3 did not scroll to beat 3"
key q
wait_exit 30 || fail "live: no exit after q"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=0 tty=restored' ||
    fail "live: bad exit (contained is 0) or terminal not restored"
echo "ok: live drill (scrolled to events $range/$n0, still there at /$n1)"
exit 0
