#!/bin/sh
# tests/tui/breach_map.sh - the lab map tells the breach story (no Docker).
#
#  1 (80x24) replays/breached-docker-socket, beat by beat: the docker
#    socket node is in the map from the lab's start (the lab has the
#    flaw), its link lights at the first Engine API request the proxy
#    answered, the container the agent creates through it appears outside
#    the boundary at the create beat, the start beat counts it running:
#    each of those beats changes the map.  After 'G': the verdict line
#    starts with its cause (the orphan container, named), the sidebar says
#    it too, its counts are the ones `ares verify` recomputes, the title
#    keeps the seed, no arrow runs to the sink (leaks 0), Poyo stands
#    outside the boundary, the legend names what the map draws.
#  2 the same at 120x40: the map is taller and wider than at 80x24.
#  3 replays/contained: no breach channel (no docker node, no arrow out,
#    no red cause), Poyo inside, "contained: cut off ...".
#  4 replays/not-exercised: "not fired" keeps a blank before the box edge,
#    "BAIT TAKEN" (contained, 80x24 and 120x40) never touches a border.
#  5 --ascii: Poyo's ASCII frame outside the wall once escaped, inside it
#    when contained.
#  6 colours that read on dark and light backgrounds: no yellow foreground
#    (256 and 8 colours), lever states in reverse video, no bold green
#    with 8 colours.
#  7 a copy whose verdict line was rewritten to "contained": the status
#    line says NOT VERIFIED first (the chain breaks), never the recorded
#    verdict alone.
# Exit 77 (skip) without tmux.
set -u

ARES_BIN=${ARES_BIN:-./ares}
SRCDIR=${ARES_SRCDIR:-.}

command -v tmux >/dev/null 2>&1 || { echo "SKIP: no tmux"; exit 77; }
case $ARES_BIN in
*/*) ;;
*) ARES_BIN=./$ARES_BIN ;;
esac
[ -x "$ARES_BIN" ] || { echo "FAIL: no executable ares at $ARES_BIN"; exit 1; }
BREACHED=$SRCDIR/replays/breached-docker-socket
CONTAINED=$SRCDIR/replays/contained
NOTEX=$SRCDIR/replays/not-exercised
PUB=$SRCDIR/replays/demo.pub
for d in "$BREACHED" "$CONTAINED" "$NOTEX"; do
	[ -f "$d/evidence.jsonl" ] || { echo "FAIL: no $d"; exit 1; }
done

TUI_NAME=breachmap
# shellcheck source=tests/tui/tmux.sh
. "$(dirname "$0")/tmux.sh"
trap tui_cleanup EXIT
trap 'exit 1' INT TERM HUP

# start W H ARGS...: a fresh colour session running ares ARGS.
start() {
	w=$1 h=$2
	shift 2
	tui_start "$w" "$h" "$(tui_run_cmd xterm-256color color "$ARES_BIN" "$@")"
}
# Box characters as the pane shows them: Unicode, ASCII (--ascii) or the
# VT100 line-drawing letters (tmux's capture of the alternate charset).
TL='[┌+l]' BL='[└+m]' BR='[┘+j]' HZ='[-─q]' VT='[│|x]'
# The map's rows: below the title, down to the boundary's bottom edge.
map_rows() {
	printf '%s\n' "$last" | awk -v bl="^ *$BL$HZ+$BR" 'NR >= 2 { print } NR >= 2 && $0 ~ bl { exit }'
}
# The map's height: the rows from its top edge to its bottom edge.
map_height() {
	printf '%s\n' "$last" | awk -v bl="^ *$BL$HZ+$BR" '/lab boundary/ && !t { t = NR } t && $0 ~ bl { print NR - t + 1; exit }'
}
# The boundary's width (its top edge, from corner to corner).
map_width() {
	printf '%s\n' "$last" | grep -m 1 'lab boundary' | sed 's/^ *//' |
	    awk '{ n = 0; for (i = 1; i <= length($0); i++) { c = substr($0, i, 1); n++; if (i > 1 && (c == "k" || c == "+" || c == "┐")) { print n; exit } } }'
}
# The event list's newest line (its last line with a time).
newest() {
	printf '%s\n' "$last" | grep -E "^$VT \+ *[0-9]+\.[0-9]{3}s " | tail -n 1
}
status_line() {
	printf '%s\n' "$last" | tail -n 1
}

# ---- 1: the breached replay at 80x24, beat by beat ----
start 80 24 replay "$BREACHED" --pub "$PUB"
wait_for 'events \(beat 1/[0-9]+\)' 10 || fail "breached replay did not open"
total=$(printf '%s\n' "$last" | grep -Eo 'events \(beat 1/[0-9]+' | sed 's|.*/||')
[ "$total" -gt 40 ] || fail "only $total beats"
prev_map=$(map_rows)
seen_up=0 seen_docker=0 seen_create=0 seen_start=0 seen_orphan=0
i=1
while [ "$i" -lt "$total" ]; do
	key .
	i=$((i + 1))
	wait_for "events \\(beat $i/" 5 || fail "'.' did not reach beat $i"
	ev=$(newest)
	map=$(map_rows)
	case $ev in
	*"lab up (image"*)
		seen_up=$i
		printf '%s\n' "$map" | grep -q 'docker' ||
		    fail "beat $i: lab up, the docker socket node is missing" ;;
	*"docker socket: GET /containers/json"*)
		seen_docker=$i
		printf '%s\n' "$prev_map" | grep -q -- '-->docker' &&
		    fail "beat $i: the docker link was lit before its first use"
		printf '%s\n' "$map" | grep -q -- '-->docker' ||
		    fail "beat $i: the first Engine API request did not light the docker link" ;;
	*"docker socket: POST /containers/create -> 201"*)
		seen_create=$i
		printf '%s\n' "$prev_map" | grep -q 'docker.*~~>' &&
		    fail "beat $i: a container outside before it was made"
		printf '%s\n' "$map" | grep -Eq 'docker.*~~+> container' ||
		    fail "beat $i: the container made through the socket is not outside" ;;
	*"docker socket: POST /containers/"[0-9a-f][0-9a-f]*)   # .../start
		seen_start=$i
		printf '%s\n' "$map" | grep -q '1 made 1 up' ||
		    fail "beat $i: the started container is not counted" ;;
	*"ORPHAN container"*)
		seen_orphan=$i
		printf '%s\n' "$map" | grep -Eq "^ +$TL$HZ lab boundary" ||
		    fail "beat $i: Poyo did not step out of the boundary"
		printf '%s\n' "$prev_map" | grep -Eq "^$TL$HZ lab boundary" ||
		    fail "beat $i: Poyo was outside before the orphan" ;;
	esac
	case $ev in
	*"docker socket:"*)
		[ "$map" != "$prev_map" ] || fail "beat $i ($ev) did not change the map" ;;
	esac
	prev_map=$map
done
[ "$seen_up" -gt 0 ] && [ "$seen_docker" -gt "$seen_up" ] &&
    [ "$seen_create" -gt "$seen_docker" ] && [ "$seen_start" -gt "$seen_create" ] &&
    [ "$seen_orphan" -gt "$seen_start" ] ||
    fail "beats out of order or missing: up $seen_up docker $seen_docker create $seen_create start $seen_start orphan $seen_orphan"
key G
wait_for '^ breached: ' 5 || fail "'G' did not show the verdict"
s=$(status_line)
printf '%s\n' "$s" | grep -Eq '^ breached: 1 orphan container \(ares-[.]{3}-a-sibling-[0-9a-f]+\)' ||
    fail "the verdict line does not start with its cause: $s"
printf '%s\n' "$last" | grep -q 'by 1 orphan' || fail "the sidebar does not say the orphan"
printf '%s\n' "$last" | head -n 1 | grep -q 'seed 7' || fail "the title lost the seed"
printf '%s\n' "$last" | grep -Eq 'docker.(sock|socket)' || fail "no docker socket node"
printf '%s\n' "$last" | grep -Eq 'docker.*~~+> sibling-' || fail "no sibling outside"
printf '%s\n' "$last" | grep 'internet' | grep -q '~' &&
    fail "an arrow runs to the sink though nothing leaked"
printf '%s\n' "$last" | grep -Eq "^ +$TL$HZ lab boundary" ||
    fail "Poyo is not outside the boundary"
for w in '--- used' '=== model' 'X cut' '~~> out' 'breach'; do
	printf '%s\n' "$last" | grep -qF -- "$w" || fail "legend: no '$w'"
done
printf '%s\n' "$last" | grep -q '=X=' || fail "the cut model link shows no X"
# the counts are the ones `ares verify` recomputes from the evidence
v=$("$ARES_BIN" verify "$BREACHED" --pub "$PUB" | grep 'report.json agrees with the evidence')
want=$(printf '%s\n' "$v" | sed -E 's/.*: [a-z-]+, ([0-9]+) breach\(es\), ([0-9]+) leak\(s\), ([0-9]+) orphan\(s\).*/breaches \1 leaks \2 orphans \3/')
got=$(printf '%s\n' "$last" | grep -Eo '(breaches|leaks|orphans) [0-9]+' | head -n 3 | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] || fail "sidebar '$got', ares verify '$want'"
h80=$(map_height) w80=$(map_width)
echo "ok 1 - breached at 80x24: docker socket lit as used, container outside, cause first, Poyo out, no sink arrow"

# ---- 2: 120x40: the map grows ----
start 120 40 replay "$BREACHED" --pub "$PUB"
wait_for 'events \(beat 1/' 10 || fail "120x40: did not open"
key G
wait_for '^ breached: 1 orphan container' 5 || fail "120x40: no cause in the verdict line"
h120=$(map_height) w120=$(map_width)
[ "$h120" -gt "$h80" ] || fail "the map is not taller at 120x40 ($h120 <= $h80)"
[ "$w120" -gt "$w80" ] || fail "the map is not wider at 120x40 ($w120 <= $w80)"
printf '%s\n' "$last" | grep -q 'docker socket' || fail "120x40: no docker socket node"
printf '%s\n' "$last" | grep 'internet' | grep -q '~' && fail "120x40: sink arrow"
printf '%s\n' "$last" | grep -Eq "${VT}BAIT TAKEN|BAIT TAKEN$VT" &&
    fail "120x40: BAIT TAKEN touches a border"
echo "ok 2 - breached at 120x40: a larger map (${h80}x${w80} -> ${h120}x${w120})"

# ---- 3: the contained replay: no breach channel ----
for size in "80 24" "120 40"; do
	# shellcheck disable=SC2086
	start $size replay "$CONTAINED" --pub "$PUB"
	wait_for 'events \(beat 1/' 10 || fail "contained ($size): did not open"
	key G
	wait_for '^ contained: cut off [0-9.]+ ms after the bait' 5 ||
	    fail "contained ($size): no cause in the verdict line"
	map_rows | grep -q '~~' && fail "contained ($size): an arrow out"
	printf '%s\n' "$last" | grep -q 'docker' && fail "contained ($size): a docker node"
	printf '%s\n' "$last" | grep -q 'by [0-9]' && fail "contained ($size): a breach cause"
	printf '%s\n' "$last" | grep -Eq "^$TL$HZ lab boundary" ||
	    fail "contained ($size): Poyo is not inside the boundary"
	printf '%s\n' "$last" | grep -q ' held' || fail "contained ($size): sidebar does not say held"
	printf '%s\n' "$last" | grep -Eq "${VT}BAIT TAKEN|BAIT TAKEN$VT" &&
	    fail "contained ($size): BAIT TAKEN touches a border"
	printf '%s\n' "$last" | head -n 1 | grep -q 'seed 7' || fail "contained ($size): no seed in the title"
done
echo "ok 3 - contained: no breach channel, Poyo inside, cause first"

# ---- 4: not-exercised: "not fired" keeps off the box edge ----
start 80 24 replay "$NOTEX" --pub "$PUB"
wait_for 'events \(beat 1/' 10 || fail "not-exercised: did not open"
key G
wait_for '^ not-exercised: ' 5 || fail "not-exercised: no verdict line"
printf '%s\n' "$last" | grep -q 'not fired' || fail "not-exercised: no 'not fired'"
printf '%s\n' "$last" | grep 'not fired' | grep -Eq "not fired$VT" &&
    fail "'not fired' runs into the box edge"
printf '%s\n' "$last" | head -n 1 | grep -q 'seed 8' || fail "not-exercised: no seed in the title"
echo "ok 4 - not-exercised at 80x24: 'not fired' inside the box, seed in the title"

# ---- 5: --ascii: Poyo's frame outside the wall, or inside ----
start 80 24 replay "$BREACHED" --pub "$PUB" --ascii
wait_for 'events \(beat 1/' 10 || fail "--ascii: did not open"
key G
wait_for '^ breached: 1 orphan' 5 || fail "--ascii: no verdict"
feet=$(printf '%s\n' "$last" | grep -m 1 "'m")
[ -n "$feet" ] || fail "--ascii: Poyo's feet are not on the screen"
case $feet in
*"'m"*"|"*) ;;
*) fail "--ascii: Poyo is not left of the wall: $feet" ;;
esac
printf '%s\n' "$feet" | grep -q "^|.*'m" && fail "--ascii: Poyo inside the wall: $feet"
start 80 24 replay "$CONTAINED" --pub "$PUB" --ascii
wait_for 'events \(beat 1/' 10 || fail "--ascii contained: did not open"
key G
wait_for '^ contained: ' 5 || fail "--ascii contained: no verdict"
feet=$(printf '%s\n' "$last" | grep -m 1 "'m")
printf '%s\n' "$feet" | grep -q "^|.*'m" || fail "--ascii contained: Poyo not inside: $feet"
echo "ok 5 - --ascii: Poyo outside the wall once escaped, inside when contained"

# ---- 6: colours that read on light backgrounds ----
# No yellow foreground anywhere (256 colours: the amber mid-tone 136; 8
# colours: magenta instead), lever states in reverse video, and with 8
# colours no bold green (bold brightens it into white backgrounds).
esc=$(printf '\033')
for term in xterm-256color xterm; do
	tui_start 80 24 "$(tui_run_cmd "$term" color "$ARES_BIN" replay "$CONTAINED" --pub "$PUB")"
	wait_for 'events \(beat 1/' 10 || fail "$term: did not open"
	raw=$(tm capture-pane -e -p -t main)
	printf '%s\n' "$raw" | grep -q "pending" || fail "$term: no pending lever"
	printf '%s\n' "$raw" | grep "pending" | grep -q "${esc}\[[0-9;]*33m" &&
	    fail "$term: 'pending' in yellow"
	key G
	wait_for '^ contained: ' 5 || fail "$term: no verdict"
	raw=$(tm capture-pane -e -p -t main)
	printf '%s\n' "$raw" | grep -Eq "${esc}\[([0-9;]*;)?(33|93|38;5;(3|11|190|226|227|228|229|230))m" &&
	    fail "$term: a yellow foreground on the screen"
	printf '%s\n' "$raw" | grep -Eq "${esc}\[[0-9;]*7m(${esc}\[[0-9;]*m)* ok " ||
	    fail "$term: the verified levers' 'ok' is not in reverse video"
	if [ "$term" = xterm ]; then
		printf '%s\n' "$raw" | grep -Eq "${esc}\[1m${esc}\[32m|${esc}\[1;32m" &&
		    fail "$term: bold green with 8 colours"
	fi
done
echo "ok 6 - colours: no yellow, states in reverse, no bold green with 8 colours"

# ---- 7: a run that does not verify is never shown as a green verdict ----
# A copy of the breached replay whose verdict line was rewritten to
# "contained": the chain breaks there, so the status line must say NOT
# VERIFIED first and never start with the recorded verdict.
FORGED=$TMPD/forged
cp -R "$BREACHED" "$FORGED" || fail "cannot copy the breached replay"
python3 - "$FORGED/evidence.jsonl" <<'PY' || fail "cannot forge the copy"
import json, sys
p = sys.argv[1]
lines = open(p, encoding="utf-8").read().splitlines()
for i in range(len(lines) - 1, -1, -1):
    o = json.loads(lines[i])
    if o.get("type") == "verdict":
        o["verdict"] = "contained"
        o["reason"] = "every lever verified"
        lines[i] = json.dumps(o, separators=(",", ":"))
        break
else:
    sys.exit("no verdict line")
open(p, "w", encoding="utf-8").write("\n".join(lines) + "\n")
PY
start 80 24 replay "$FORGED" --pub "$PUB"
wait_for 'events \(beat 1/' 10 || fail "forged: did not open"
key G
wait_for '^ NOT VERIFIED \(chain BROKEN' 5 ||
    fail "forged: the status line does not say NOT VERIFIED first"
printf '%s\n' "$last" | tail -n 1 | grep -q '^ contained' &&
    fail "forged: the status line starts with the recorded verdict"
echo "ok 7 - a forged verdict line: NOT VERIFIED first, never the recorded verdict alone"
