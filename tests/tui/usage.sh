#!/bin/sh
# tests/tui/usage.sh - every command's usage text has one source (its
# cmd_entry) and says what its docs/cli-NAME.md synopsis says:
#   - the "ares NAME ..." lines of `ares NAME --help` are the synopsis of
#     docs/cli-NAME.md (its first indented or fenced block, up to a blank
#     line), line for line;
#   - `ares NAME -h` and `ares help NAME` print the same text, exit 0;
#   - `ares help` lists those lines under the command;
#   - a bad option prints the same usage on stderr (after getopt's or the
#     command's message), exit 2, nothing on stdout.
# Needs no Docker.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The synopsis of a docs page: the first block after the title (a fenced
# one, or one indented by 4), up to its first blank line.
doc_synopsis() {
	awk '
	NR == 1 { next }
	state == 0 && /^$/ { next }
	state == 0 && /^```/ { state = 2; next }
	state == 0 && /^    / { state = 1 }
	state == 0 { exit }
	state == 1 && !/^    / { exit }
	state == 1 { print substr($0, 5); next }
	state == 2 && (/^```/ || /^$/) { exit }
	state == 2 { print }
	' "$1"
}

# The synopsis part of a usage text: "usage: " lines and those indented
# under them, without the first 7 columns.
usage_synopsis() {
	awk '
	/^usage: / || /^       / { print substr($0, 8); next }
	{ exit }
	' "$1"
}

"$ARES" help >"$tmp/help" 2>"$tmp/help.err"; rc=$?
[ $rc -eq 0 ] || fail "ares help: exit $rc, want 0"
[ -s "$tmp/help.err" ] && fail "ares help wrote to stderr"

n=0
for doc in "$SRC"/docs/cli-*.md; do
	name=${doc##*/cli-}
	name=${name%.md}
	"$ARES" "$name" --help >"$tmp/u" 2>"$tmp/u.err"; rc=$?
	[ $rc -eq 0 ] || fail "ares $name --help: exit $rc, want 0"
	[ -s "$tmp/u.err" ] && fail "ares $name --help wrote to stderr"
	head -c 12 "$tmp/u" | grep -q '^usage: ares ' ||
	    fail "ares $name --help: no 'usage: ares' line"
	doc_synopsis "$doc" >"$tmp/doc"
	[ -s "$tmp/doc" ] || fail "$doc: no synopsis block"
	usage_synopsis "$tmp/u" >"$tmp/syn"
	if ! cmp -s "$tmp/doc" "$tmp/syn"; then
		diff "$tmp/doc" "$tmp/syn" >&2
		fail "ares $name --help differs from $doc's synopsis"
	fi
	for alt in "$name -h" "help $name"; do
		# shellcheck disable=SC2086  # two words on purpose
		"$ARES" $alt >"$tmp/a" 2>&1; rc=$?
		[ $rc -eq 0 ] || fail "ares $alt: exit $rc, want 0"
		cmp -s "$tmp/u" "$tmp/a" || fail "ares $alt differs from --help"
	done
	sed 's/^/            /' "$tmp/syn" >"$tmp/listed"
	grep -F -x -f "$tmp/listed" "$tmp/help" >"$tmp/found"
	cmp -s "$tmp/listed" "$tmp/found" ||
	    fail "ares help does not list ares $name's synopsis"
	"$ARES" "$name" --no-such-option >"$tmp/b" 2>"$tmp/b.err"; rc=$?
	[ $rc -eq 2 ] || fail "ares $name --no-such-option: exit $rc, want 2"
	[ -s "$tmp/b" ] && fail "ares $name --no-such-option wrote to stdout"
	tail -n "$(wc -l <"$tmp/u")" "$tmp/b.err" >"$tmp/tail"
	cmp -s "$tmp/u" "$tmp/tail" ||
	    fail "ares $name --no-such-option: stderr does not end in the usage"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n docs/cli-*.md pages"
echo "ok 1 - usage of $n commands: --help, -h, help NAME, ares help, bad option, docs synopsis"
