#!/bin/sh
# tests/tui/console.sh - drive the live drill console through tmux.
#
# Case 1 (100x30): start "$ARES_BIN" with no arguments: the home screen
# lists the policies with the cursor on default.yaml; Enter starts that
# drill.  Wait for the verdict line (at most 180 s), check the lever panel
# (levers verified), the verdict word, Poyo's sprite, then q goes back home
# and a second q quits; check the program exited and left the terminal as
# it found it.
# Case 2 (60x20): the console must say "terminal too small (need 80x24)"
# and still quit cleanly on q.
#
# Exit 77 (skip) without tmux or a reachable Docker Engine, unless
# ARES_REQUIRE_DOCKER=1 (then those are failures).
set -u

ARES_BIN=${ARES_BIN:-./ares}
VERDICT_TIMEOUT=${ARES_TUI_TIMEOUT:-180}
SOCK="ares-test-$$"
last=""

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

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/ares-tui.XXXXXX") || exit 1

tm() {
	tmux -u -L "$SOCK" "$@"
}

# Ask a still-running console to quit (so the drill tears its lab down),
# wait a while for it, then remove the tmux server and our files.
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
	if tm has-session -t main 2>/dev/null &&
	    [ "$(tm display-message -p -t main '#{pane_dead}' 2>/dev/null)" = 0 ]; then
		tm send-keys -t main q 2>/dev/null
		i=0
		while [ "$i" -lt 120 ] &&
		    [ "$(tm display-message -p -t main '#{pane_dead}' 2>/dev/null)" = 0 ]; do
			sleep 1
			i=$((i + 1))
		done
	fi
	tm kill-server 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	if [ -n "$last" ]; then
		echo "--- screen ---"
		printf '%s\n' "$last"
		echo "--------------"
	fi
	exit 1
}

# The pane runs this wrapper: it records the tty settings, runs ares, and
# reports the exit status and whether the tty settings came back.
# Usage: run.sh LOCALE ARES_BIN
cat >"$TMPD/run.sh" <<'EOF'
#!/bin/sh
unset NO_COLOR LC_ALL
LANG=$1
export LANG
shift
saved=$(stty -g 2>/dev/null)
"$@"
rc=$?
now=$(stty -g 2>/dev/null)
if [ -n "$saved" ] && [ "$saved" = "$now" ]; then tty=restored; else tty=changed; fi
printf '\nares-exit rc=%s tty=%s\n' "$rc" "$tty"
EOF

# Start a session of $1 x $2 running ares.
start() {
	tm kill-server 2>/dev/null
	tm -f /dev/null new-session -d -s main -x "$1" -y "$2" \
	    "sh '$TMPD/run.sh' '$UTF8_LOCALE' '$ARES_BIN'" \; \
	    set-option -g remain-on-exit on || fail "tmux new-session failed"
}

capture() {
	last=$(tm capture-pane -p -t main 2>/dev/null)
}

pane_dead() {
	[ "$(tm display-message -p -t main '#{pane_dead}' 2>/dev/null)" = 1 ]
}

# wait_for REGEX SECONDS: poll the screen until REGEX (grep -E) shows.
wait_for() {
	end=$(($(date +%s) + $2))
	while :; do
		capture
		printf '%s\n' "$last" | grep -Eq -- "$1" && return 0
		pane_dead && { capture; return 1; }
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 1
	done
}

# wait_exit SECONDS: wait for the pane's process to end.
wait_exit() {
	end=$(($(date +%s) + $1))
	while ! pane_dead; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 1
	done
	capture
	return 0
}

UTF8_LOCALE=C.UTF-8
if command -v locale >/dev/null 2>&1; then
	locale -a 2>/dev/null | grep -Eqi '^c\.utf-?8$' || {
		l=$(locale -a 2>/dev/null | grep -Ei 'utf-?8' | head -n 1)
		[ -n "$l" ] && UTF8_LOCALE=$l
	}
fi

# ---- case 1: a whole drill at 100x30 ----
start 100 30
wait_for 'policies \(Enter: run a drill\)' 30 || fail "no home screen"
printf '%s\n' "$last" | grep -Eq '^ +> default\.yaml ' ||
    fail "the home cursor is not on default.yaml"
tm send-keys -t main Enter
wait_for '^ *verdict: ' "$VERDICT_TIMEOUT" ||
    fail "no verdict line within ${VERDICT_TIMEOUT}s"
screen=$last
printf '%s\n' "$screen" | grep -Eq 'verdict: (contained|breached)' ||
    fail "verdict is neither contained nor breached"
# The lever panel: every lever row names its lever; at least one verified.
printf '%s\n' "$screen" |
    grep -Eq '[0-9] [a-z][a-z0-9_-]+ +fired \+[0-9.]+ms +verified \+[0-9.]+ms' ||
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

tm send-keys -t main q
wait_for 'recorded runs \(Enter: replay\)' 30 ||
    fail "q after the verdict did not go back home (with the new run)"
tm send-keys -t main q
wait_exit 60 || fail "ares did not exit within 60s of 'q'"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=[01] tty=restored' ||
    fail "bad exit status or terminal not restored"
[ "$(tm display-message -p -t main '#{alternate_on}')" = 0 ] ||
    fail "still on the alternate screen"
echo "ok 1 - drill at 100x30: verdict, levers verified, Poyo, clean quit"

# ---- case 2: too small at 60x20 ----
start 60 20
wait_for 'terminal too small \(need 80x24\)' 30 ||
    fail "no 'terminal too small' message at 60x20"
printf '%s\n' "$last" | grep -q 'lab boundary' &&
    fail "the full layout was drawn into a 60x20 terminal"
tm send-keys -t main q
wait_exit "$VERDICT_TIMEOUT" || fail "ares did not exit after 'q' at 60x20"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=[0-9]+ tty=restored' ||
    fail "terminal not restored after quitting at 60x20"
printf '%s\n' "$last" | grep -Eq 'ares-exit rc=(0|1|4) ' ||
    fail "unexpected exit status after quitting at 60x20"
echo "ok 2 - terminal too small at 60x20, clean quit"
exit 0
