#!/bin/sh
# tests/tui/home.sh - the home screen's rows, the exit line and TERM=dumb,
# driven through tmux (no Docker: the bundled replays are the fixtures).
#
# Case 1: at 80x24 every recorded run row shows its verdict, policy, time
#         to kill and age ("N h ago"), every policy row its flaws and its
#         description, the help line fits (its last word is on screen);
#         at 120x40 the same rows grow (the description is longer).
# Case 2: q on `ares replay replays/contained` prints the exit line: the
#         folder and the exact `ares replay` / `ares verify` commands; a
#         folder whose name holds a quote is quoted so that the printed
#         verify line, pasted into sh, verifies it.
# Case 3: TERM=dumb (and an unknown TERM): `ares replay`, `ares` and the
#         drill console print why and what to use, and exit 2, in a tmux
#         pane and from a plain shell.
# The trial and fix dirs' own screens and the probe screen's ATTACK cells
# are in screens.sh (they need the runs its console makes).
set -u

ARES_BIN=${ARES_BIN:-./ares}
SRCDIR=${ARES_SRCDIR:-.}

command -v tmux >/dev/null 2>&1 || { echo "SKIP: no tmux"; exit 77; }
case $ARES_BIN in
*/*) ;;
*) ARES_BIN=./$ARES_BIN ;;
esac
[ -x "$ARES_BIN" ] || { echo "FAIL: no executable ares at $ARES_BIN"; exit 1; }
ARES_ABS=$(cd "$(dirname "$ARES_BIN")" && pwd)/$(basename "$ARES_BIN")
REPLAY=$SRCDIR/replays/contained
[ -f "$REPLAY/evidence.jsonl" ] || { echo "FAIL: no $REPLAY"; exit 1; }

TUI_NAME=home
. "$(dirname "$0")/tmux.sh"
trap tui_cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir -p "$TMPD/runs"
ARES_RUNS=$TMPD/runs
export ARES_RUNS

# ---- 1: home rows at 80x24 and 120x40 ----
for size in "80 24" "120 40"; do
	set -- $size
	tui_start "$1" "$2" "$(tui_run_cmd xterm-256color color "$ARES_BIN")"
	wait_for 'policies \(Enter: run a drill\)' 10 || fail "$1x$2: no home"
	# the help line fits: its last words end the last line
	wait_for 't/p/f trial/probe/fix  q quit  \? help *$' 5 ||
	    fail "$1x$2: the key hint is cut"
	printf '%s\n' "$last" | tail -n 1 | grep -q 'q quit  ? help *$' ||
	    fail "$1x$2: the key hint is not on the last line"
	printf '%s\n' "$last" | grep -Eq '^ +> default\.yaml +no flaws +Default drill' ||
	    fail "$1x$2: no flaws and description on the default policy row"
	# the runs: Tab jumps there, the list opens at their heading
	key Tab
	wait_for 'recorded runs \(Enter: replay\)' 5 || fail "$1x$2: no runs"
	printf '%s\n' "$last" |
	    grep -Eq ' contained +(run +)?contained +default +85\.4 ms +[0-9]+ (s|min|h|d|mo) ago' ||
	    fail "$1x$2: the contained replay's row lacks verdict/policy/ttk/age"
	printf '%s\n' "$last" |
	    grep -Eq ' breached-docker-socket +(run +)?breached +flaw-docke[a-z-]* +76\.6 ms +[0-9]+ (s|min|h|d|mo) ago' ||
	    fail "$1x$2: the breached replay's row lacks verdict/policy/ttk/age"
	printf '%s\n' "$last" |
	    grep -Eq ' not-exercised +(run +)?not-exercised +default +- +[0-9]+ (s|min|h|d|mo) ago' ||
	    fail "$1x$2: the not-exercised row lacks its verdict or age"
	if [ "$1" = 120 ]; then
		printf '%s\n' "$last" | grep -Eq 'kind +verdict +policy +ttk +age' ||
		    fail "120x40: no column names over the runs"
	fi
	key q
	wait_exit 10 || fail "$1x$2: no exit after q"
	printf '%s\n' "$last" | grep -Eq 'ares-exit rc=0 tty=restored' ||
	    fail "$1x$2: bad exit or terminal not restored"
done
echo "ok 1 - home rows: verdict, policy, time to kill, age; flaws, description; hint fits"

# ---- 2: the exit line ----
tui_start 80 24 "$(tui_run_cmd xterm-256color color "$ARES_BIN" replay "$REPLAY")"
wait_for 'events \(beat 1/' 10 || fail "case 2: the replay did not open"
key q
wait_exit 10 || fail "case 2: no exit after q"
# the pane's history too: the first line may have scrolled above it
last=$(tm capture-pane -p -S -50 -t main 2>/dev/null)
abs=$(cd "$REPLAY" && pwd -P)
printf '%s\n' "$last" | grep -Fq "run folder '$abs'" ||
    fail "case 2: no run folder line naming $abs"
printf '%s\n' "$last" | grep -Fq "replay   ares replay '$abs'" ||
    fail "case 2: no ares replay line"
printf '%s\n' "$last" | grep -Fq "verify   ares verify '$abs'" ||
    fail "case 2: no ares verify line"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=0 tty=restored' ||
    fail "case 2: bad exit"
# a folder name with a quote and a space: quoted for copy-paste
q="$TMPD/it's here"
cp -R "$REPLAY" "$q"
cat >"$TMPD/q.sh" <<EOF
#!/bin/sh
cd "$TMPD" || exit 1
"$ARES_ABS" replay "it's here"
echo "ares-exit rc=\$?"
EOF
tui_start 80 24 "sh '$TMPD/q.sh' 2>'$TMPD/q.err'"
wait_for 'events \(beat 1/' 10 || fail "case 2b: the replay did not open"
key q
wait_exit 10 || fail "case 2b: no exit after q"
qabs=$(cd "$q" && pwd -P)
want=$(printf '%s' "$qabs" | sed "s/'/'\\\\''/g")
grep -Fq "verify   ares verify '$want'" "$TMPD/q.err" ||
    { cat "$TMPD/q.err"; fail "case 2b: the verify line is not quoted as '$want'"; }
line=$(grep 'verify   ares verify ' "$TMPD/q.err" | sed 's/^  verify   ares verify //')
out=$(cd / && eval "\"$ARES_ABS\" verify $line" 2>&1) ||
    { printf '%s\n' "$out"; fail "case 2b: the pasted verify line does not verify"; }
echo "ok 2 - the exit line names the folder and the replay/verify commands, quoted"

# ---- 3: TERM=dumb ----
tui_start 80 24 "$(tui_run_cmd dumb color "$ARES_BIN" replay "$REPLAY")"
wait_exit 10 || fail "case 3: TERM=dumb replay did not exit"
last=$(tm capture-pane -p -S -50 -t main 2>/dev/null)
printf '%s\n' "$last" |
    grep -q 'the console needs a terminal with cursor addressing;' ||
    fail "case 3: no TERM=dumb message in the pane"
printf '%s\n' "$last" | grep -q 'TERM=dumb: it cannot move the cursor' ||
    fail "case 3: the message does not say why"
printf '%s\n' "$last" | grep -q 'TERM=xterm-256color' ||
    fail "case 3: the message does not say what to use"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=2 ' ||
    fail "case 3: TERM=dumb replay did not exit 2"
for args in "replay $REPLAY" "" "--policy $SRCDIR/policies/default.yaml"; do
	for t in dumb ares-no-such-term; do
		# shellcheck disable=SC2086
		TERM=$t "$ARES_BIN" $args >"$TMPD/d.out" 2>"$TMPD/d.err"
		rc=$?
		[ "$rc" = 2 ] || fail "case 3: TERM=$t ares $args: exit $rc, want 2"
		grep -q "^  TERM=$t: " "$TMPD/d.err" ||
		    { cat "$TMPD/d.err"; fail "case 3: TERM=$t ares $args: no message"; }
		grep -q 'ares replay RUN_DIR --export-cast FILE' "$TMPD/d.err" ||
		    fail "case 3: TERM=$t ares $args: no headless alternative"
	done
done
echo "ok 3 - TERM=dumb and an unknown TERM: a message and exit 2"
