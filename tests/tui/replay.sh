#!/bin/sh
# tests/tui/replay.sh - drive the replay screen through tmux (no Docker).
#
#  1 (100x30) a bundled replay: step with '.', jump with ']' to the bait and
#    on to a lever (the lever panel changes), '?' help, a resize in the
#    middle, 'G' shows the verdict, 'q' quits cleanly with the tty restored.
#  2 --no-color and NO_COLOR: no colour escape in the pane; --ascii: no
#    half-blocks, ASCII boxes.
#  3 TERM=vt100 and TERM=screen reach the screen.
#  4 60x20: "terminal too small (need 80x24)".
#  5 a run whose agent output holds ESC[2J, an OSC title and a C1 CSI
#    arrives inert: no ESC in the pane beyond colour codes, the pane title
#    is untouched, the visible words are shown.
#  6 --export-cast: JSON lines, asciicast v2 header, replayed through tmux
#    it ends on the verdict.
#  7 a Docker engine that accepts and never answers: the home screen comes
#    up at once ("Checking the Docker Engine..."), keys work, q quits.
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
REPLAY=$SRCDIR/replays/contained
PUB=$SRCDIR/replays/demo.pub
[ -f "$REPLAY/evidence.jsonl" ] || { echo "FAIL: no $REPLAY"; exit 1; }

TUI_NAME=replay
# shellcheck source=tests/tui/tmux.sh
. "$(dirname "$0")/tmux.sh"
trap tui_cleanup EXIT
trap 'exit 1' INT TERM HUP

# start W H TERM nocolor|color ARGS...: a fresh session running ares ARGS.
start() {
	w=$1 h=$2 term=$3 nc=$4
	shift 4
	tui_start "$w" "$h" "$(tui_run_cmd "$term" "$nc" "$ARES_BIN" "$@")"
}
quit_clean() {
	key q
	wait_exit 10 || fail "$1: no exit after q"
	printf '%s\n' "$last" | grep -Eq 'ares-exit rc=0 tty=restored' ||
	    fail "$1: bad exit or terminal not restored"
}

# ---- 1: a bundled replay at 100x30 ----
start 100 30 xterm-256color color replay "$REPLAY" --pub "$PUB"
wait_for 'events \(beat 1/[0-9]+\)' 10 || fail "replay did not open"
printf '%s\n' "$last" | grep -q 'chain ok (.*) | signature ok' ||
    fail "no 'chain ok | signature ok' badge"
printf '%s\n' "$last" | grep -Eq '1 gateway-deny +fired - ' ||
    fail "lever panel not in its initial state"
key .
wait_for 'events \(beat 2/' 5 || fail "'.' did not step to beat 2"
key ,
wait_for 'events \(beat 1/' 5 || fail "',' did not step back"
key ']'
wait_for 'BAIT +BAIT .* taken' 5 || fail "']' did not jump to the bait"
printf '%s\n' "$last" | grep -q 'bait fired' || fail "map: bait not fired"
printf '%s\n' "$last" | grep -Eq '1 gateway-deny +fired - ' ||
    fail "a lever fired before the bait"
key ']'
wait_for '1 gateway-deny +fired \+[0-9]+\.[0-9]{3}s ' 5 ||
    fail "']' to the first lever did not change the lever panel"
key '?'
wait_for 'next marker \(bait, lever' 5 || fail "'?' shows no help"
key x
wait_gone 'next marker \(bait' 5 || fail "help still up"
wait_for 'events \(beat' 5 || fail "help did not close"
tm resize-window -t main -x 120 -y 40
wait_for 'lab boundary' 5 || fail "no map after resize to 120x40"
key G
wait_for 'contained: cut off' 5 || fail "'G' did not show the verdict"
tm resize-window -t main -x 60 -y 20
wait_for 'terminal too small \(need 80x24\)' 5 || fail "no 'too small' at 60x20"
tm resize-window -t main -x 90 -y 26
wait_for 'lab boundary' 5 || fail "no map after resize to 90x26"
printf '%s\n' "$last" | grep -q 'contained: cut off' ||
    fail "verdict gone after resize to 90x26"
key g
wait_for 'events \(beat 1/' 5 || fail "'g' did not go to the start"
quit_clean "case 1"
echo "ok 1 - replay: step, markers, levers, help, resize, verdict, clean quit"

# ---- 2: colour off, ASCII ----
for mode in flag env; do
	if [ $mode = flag ]; then
		start 100 30 xterm-256color color replay "$REPLAY" --no-color
	else
		start 100 30 xterm-256color nocolor replay "$REPLAY"
	fi
	wait_for 'events \(beat 1/' 10 || fail "no-color ($mode): did not open"
	key G
	wait_for 'contained: cut off' 5 || fail "no-color ($mode): no verdict"
	esc=$(tm capture-pane -p -e -t main | grep -c "$(printf '\033')\[[0-9;]*3[0-7]m\|$(printf '\033')\[[0-9;]*38;5")
	[ "$esc" = 0 ] || fail "no-color ($mode): $esc lines with colour codes"
	quit_clean "no-color $mode"
done
start 100 30 xterm-256color color replay "$REPLAY" --ascii
wait_for 'events \(beat 1/' 10 || fail "--ascii did not open"
key G
wait_for 'contained: cut off' 5 || fail "--ascii: no verdict"
printf '%s\n' "$last" | grep -q '▀\|▄\|─\|│' && fail "--ascii drew UTF-8"
printf '%s\n' "$last" | grep -q '^+- lab boundary' || fail "--ascii: no ASCII box"
quit_clean "ascii"
echo "ok 2 - --no-color, NO_COLOR, --ascii"

# ---- 3: other terminals ----
for term in vt100 screen; do
	start 100 30 "$term" color replay "$REPLAY"
	wait_for 'events \(beat 1/' 10 || fail "TERM=$term: did not open"
	key G
	wait_for 'contained: cut off' 5 || fail "TERM=$term: no verdict"
	quit_clean "TERM=$term"
done
echo "ok 3 - TERM=vt100 and TERM=screen"

# ---- 4: too small ----
start 60 20 xterm-256color color replay "$REPLAY"
wait_for 'terminal too small \(need 80x24\)' 10 || fail "no 'too small' at 60x20"
printf '%s\n' "$last" | grep -q 'lab boundary' && fail "full layout at 60x20"
quit_clean "60x20"
echo "ok 4 - terminal too small at 60x20"

# ---- 5: hostile agent output arrives inert ----
HOSTILE=$TMPD/hostile
python3 - "$HOSTILE" <<'EOF' || fail "could not write the hostile run"
import hashlib, json, os, sys
d = sys.argv[1]; os.makedirs(d)
B2 = lambda b: hashlib.blake2b(b, digest_size=32).digest()
run, nonce = "20250101-000000-deadbeef", bytes(range(16))
prev = B2(b"ares-evidence-v1\0" + run.encode() + b"\0" + nonce)
evil = "pwn\x1b[2Jed\x1b]2;owned\x07title\u009b31mred\x07bell"
lines = [("genesis", {"run_id": run, "nonce": nonce.hex(), "format": "ares-evidence-v1"}),
         ("drill.start", {"policy_name": "hostile", "seed": 1, "model": "m", "levers": ["gateway-deny"]}),
         ("sensor", {"src": "gateway", "kind": "turn", "event": {"step": 1, "content": evil, "tool_calls": []}}),
         ("sensor", {"src": "gateway", "kind": "tool_result", "event": {"tool": "shell", "content": evil}}),
         ("verdict", {"verdict": "not-exercised", "reason": evil})]
out = b""
for i, (t, f) in enumerate(lines):
    head = '{"seq":%d,"prev":"%s","type":"%s","t_mono_ns":%d,"t_wall":"2025-01-01T00:00:00.000000000Z"' % (i, prev.hex(), t, 1000 + i * 1000000)
    body = (head + "," + json.dumps(f, separators=(",", ":"))[1:]).encode()
    prev = B2(prev + body)
    out += body[:-1] + b',"hash":"' + prev.hex().encode() + b'"}\n'
open(os.path.join(d, "evidence.jsonl"), "wb").write(out)
EOF
start 100 30 xterm-256color color replay "$HOSTILE"
wait_for 'events \(beat 1/' 10 || fail "hostile replay did not open"
key G
wait_for 'not-exercised: ' 5 || fail "hostile replay: no verdict"
printf '%s\n' "$last" | grep -q 'chain ok (5 lines) | signature missing' ||
    fail "hostile replay: badge not 'chain ok | signature missing'"
printf '%s\n' "$last" | grep -q 'says "pwnedtitlered' ||
    fail "hostile turn not shown as its visible text"
printf '%s\n' "$last" | grep -q 'owned' && fail "OSC payload shown"
# Every ESC left in the pane must be tmux's own SGR (ESC [ ... m).
bad=$(tm capture-pane -p -e -t main | tr -d '\n' |
    sed "s/$(printf '\033')\[[0-9;:]*m//g" | tr -cd '\033\233' | wc -c)
[ "$bad" = 0 ] || fail "hostile replay: $bad escape bytes beyond SGR"
title=$(tm display-message -p -t main '#{pane_title}')
case $title in *owned*) fail "the pane title was changed to '$title'" ;; esac
quit_clean "hostile"
echo "ok 5 - escape sequences in agent output arrive inert"

# ---- 6: --export-cast ----
CAST=$TMPD/c.cast
"$ARES_BIN" replay "$REPLAY" --export-cast "$CAST" || fail "--export-cast failed"
python3 - "$CAST" "$TMPD/c.raw" <<'EOF' || fail "cast is not asciicast v2 JSON lines"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
h = json.loads(lines[0])
assert h["version"] == 2 and h["width"] == 80 and h["height"] == 24
assert isinstance(h["timestamp"], (int, float)) and h["title"]
assert set(h["env"]) == {"TERM", "SHELL"}
fr = [json.loads(l) for l in lines[1:]]
assert len(fr) > 5
t = 0
for f in fr:
    assert len(f) == 3 and f[1] == "o" and isinstance(f[2], str) and f[0] >= t
    t = f[0]
open(sys.argv[2], "w", encoding="utf-8").write("".join(f[2] for f in fr))
EOF
tui_start 80 24 "sleep 0.3; cat '$TMPD/c.raw'; sleep 30"
wait_for 'contained: cut off' 10 || fail "the cast does not end on the verdict"
printf '%s\n' "$last" | grep -q 'lab boundary' || fail "the cast has no map"
echo "ok 6 - --export-cast: asciicast v2, ends on the verdict"

# ---- 7: a hung engine never blocks the console ----
# A unix socket that accepts and never answers: the home screen must come
# up at once (checking the engine in the background), move, and quit.
HSOCK=$TMPD/hung.sock
python3 - "$HSOCK" <<'EOF2' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
held = []
end = time.time() + 60
s.settimeout(1)
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
EOF2
hung=$!
i=0
while [ ! -S "$HSOCK" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$HSOCK" ] || fail "hung engine: no socket"
tui_start 100 30 "DOCKER_HOST=unix://$HSOCK $(tui_run_cmd xterm-256color color "$ARES_BIN")"
wait_for 'Checking the Docker Engine' 3 ||
    fail "hung engine: the home screen did not come up within 3s"
key j
wait_for '^ +> ' 3 || fail "hung engine: no cursor"
quit_clean "hung engine"
kill "$hung" 2>/dev/null
wait "$hung" 2>/dev/null
echo "ok 7 - a hung engine: home at once, responsive, clean quit"
exit 0
