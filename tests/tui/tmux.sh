# tests/tui/tmux.sh - tmux scaffolding shared by the console tests.
#
# Sourced (". tests/tui/tmux.sh") by console.sh, replay.sh and screens.sh
# after they set TUI_NAME (a word for the socket and scratch names).
# Gives them:
#   TMPD          a scratch directory (removed by tui_cleanup)
#   UTF8_LOCALE   a UTF-8 locale this machine has (C.UTF-8 when it can)
#   last          the pane's text as of the last capture
#   tm ARGS       tmux on this test's current private server
#   tui_start W H CMD
#                 a fresh server and a W x H session "main" running CMD
#                 (remain-on-exit on, so the exit line stays readable)
#   tui_run_cmd TERM color|nocolor ARGV...
#                 the shell command that runs ARGV under $TMPD/run.sh:
#                 TERM ("-" keeps tmux's), NO_COLOR when "nocolor", and a
#                 last line "ares-exit rc=N tty=restored|changed"
#   capture, pane_dead, key ARGS, wait_for RE SECS, wait_gone RE SECS,
#   wait_exit SECS, fail MSG (prints the last screen, exits 1), tui_cleanup
#
# Every tui_start uses a new socket name: a client that connects right
# after kill-server can reach the dying server ("server exited
# unexpectedly"), which CI once did.

: "${TUI_NAME:?set TUI_NAME before sourcing tests/tui/tmux.sh}"
TUI_SOCK_BASE="ares-$TUI_NAME-$$"
SOCK="$TUI_SOCK_BASE-0"
tui_n=0
last=""

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/ares-$TUI_NAME.XXXXXX") || exit 1

tm() {
	tmux -u -L "$SOCK" "$@"
}

fail() {
	echo "FAIL: $*"
	if [ -n "$last" ]; then
		echo "--- screen ---"
		printf '%s\n' "$last"
		echo "--------------"
	fi
	exit 1
}

# Remove the current tmux server and the scratch directory.
tui_cleanup() {
	tm kill-server 2>/dev/null
	rm -rf "$TMPD"
}

UTF8_LOCALE=C.UTF-8
if command -v locale >/dev/null 2>&1; then
	locale -a 2>/dev/null | grep -Eqi '^c\.utf-?8$' || {
		l=$(locale -a 2>/dev/null | grep -Ei 'utf-?8' | head -n 1)
		[ -n "$l" ] && UTF8_LOCALE=$l
	}
fi

# The pane runs this wrapper: it sets TERM, LANG and NO_COLOR, records the
# tty settings, runs the command, and reports the exit status and whether
# the tty settings came back.  Usage: run.sh TERM LANG color|nocolor ARGV...
cat >"$TMPD/run.sh" <<'RUN'
#!/bin/sh
unset NO_COLOR LC_ALL
[ "$1" != - ] && { TERM=$1; export TERM; }
LANG=$2
export LANG
[ "$3" = nocolor ] && { NO_COLOR=1; export NO_COLOR; }
shift 3
saved=$(stty -g 2>/dev/null)
"$@"
rc=$?
now=$(stty -g 2>/dev/null)
if [ -n "$saved" ] && [ "$saved" = "$now" ]; then tty=restored; else tty=changed; fi
printf '\nares-exit rc=%s tty=%s\n' "$rc" "$tty"
RUN

# tui_run_cmd TERM color|nocolor ARGV...: print the shell command line for
# tui_start (each word single-quoted; words must not hold a quote).
tui_run_cmd() {
	c="sh '$TMPD/run.sh' '$1' '$UTF8_LOCALE' '$2'"
	shift 2
	for a in "$@"; do c="$c '$a'"; done
	printf '%s' "$c"
}

# tui_start W H CMD: kill the previous server, start a new one on a new
# socket with a W x H session "main" running CMD; three tries.
tui_start() {
	tm kill-server 2>/dev/null
	tries=0
	while :; do
		tui_n=$((tui_n + 1))
		SOCK="$TUI_SOCK_BASE-$tui_n"
		tm -f /dev/null new-session -d -s main -x "$1" -y "$2" "$3" \; \
		    set-option -g remain-on-exit on 2>"$TMPD/tmux.err" && return 0
		tries=$((tries + 1))
		tm kill-server 2>/dev/null
		if [ "$tries" -ge 3 ]; then
			cat "$TMPD/tmux.err"
			fail "tmux new-session failed ($tries tries)"
		fi
		sleep 1
	done
}

capture() {
	last=$(tm capture-pane -p -t main 2>/dev/null)
}

pane_dead() {
	[ "$(tm display-message -p -t main '#{pane_dead}' 2>/dev/null)" = 1 ]
}

key() {
	tm send-keys -t main "$@"
}

# wait_for REGEX SECONDS: poll the screen until REGEX (grep -E) shows;
# 1 on timeout or when the pane's program ended without showing it.
wait_for() {
	end=$(($(date +%s) + $2))
	while :; do
		capture
		printf '%s\n' "$last" | grep -Eq -- "$1" && return 0
		pane_dead && { capture; return 1; }
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}

# wait_gone REGEX SECONDS: poll until the screen no longer matches.
wait_gone() {
	end=$(($(date +%s) + $2))
	while :; do
		capture
		printf '%s\n' "$last" | grep -Eq -- "$1" || return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}

# wait_exit SECONDS: wait for the pane's program to end, then capture.
wait_exit() {
	end=$(($(date +%s) + $1))
	while ! pane_dead; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
	capture
	return 0
}
