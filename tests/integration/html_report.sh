#!/bin/sh
# html_report.sh - `ares report DIR --html FILE` in a real browser: the
# pages of replays/contained, replays/breached-docker-socket, a tiny real
# trial (-n 2 -j 2) and a real probe battery, loaded from file:// in Debian's chromium headless,
# driven through chromedriver's WebDriver HTTP API by html_report.py
# (python3's standard library only): no console error, the verdict shown,
# stepping (buttons and keys) changes the shown beat and Poyo's pose, the
# page readable without JavaScript, no request but the file itself, and
# two pages edited to fetch something caught.  First the command's own
# contract (usage, refused outputs, stdout).  Screenshots go to
# $ARES_HTML_SHOTS, else a temporary folder removed at exit (never the
# source tree).  Needs chromium, chromedriver and the engine: skips (77)
# without them unless ARES_REQUIRE_DOCKER=1 (then it fails); ARES_CHROMIUM
# and ARES_CHROMEDRIVER name other binaries.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ARES_KEY_DIR="$tmp/keys"
C="$SRC/replays/contained"
B="$SRC/replays/breached-docker-socket"
PUB="$SRC/replays/demo.pub"

# 1. The command: usage, refused outputs, "-" is stdout.
"$ARES" report "$C" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "report without --html: exit $rc, want 2"
grep -q 'missing --html' "$tmp/err" || fail "report without --html: $(cat "$tmp/err")"
"$ARES" report "$tmp/none" --html "$tmp/none.html" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "report of a missing dir: exit $rc, want 2"
[ -e "$tmp/none.html" ] && fail "report of a missing dir wrote a file"
"$ARES" report "$C" --html "$tmp/x.html" --pub "$tmp/none.pub" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "report --pub MISSING: exit $rc, want 2"
mkdir "$tmp/adir"
ln -s "$tmp/target.html" "$tmp/link.html"
mkfifo "$tmp/fifo.html"
for out in "$tmp/adir" "$tmp/link.html" "$tmp/fifo.html"; do
	"$ARES" report "$C" --html "$out" >/dev/null 2>"$tmp/err"; rc=$?
	[ $rc -eq 2 ] || fail "report --html $out: exit $rc, want 2"
	grep -q 'not a regular file' "$tmp/err" || fail "report --html $out: $(cat "$tmp/err")"
done
[ -e "$tmp/target.html" ] && fail "report wrote through a symlink"
"$ARES" report "$C" --html "$tmp/contained.html" --pub "$PUB" >"$tmp/out"; rc=$?
[ $rc -eq 0 ] || fail "report replays/contained: exit $rc"
grep -q "^wrote $tmp/contained.html (drill," "$tmp/out" || fail "report: $(cat "$tmp/out")"
"$ARES" report "$C" --html - --pub "$PUB" >"$tmp/stdout.html"; rc=$?
[ $rc -eq 0 ] || fail "report --html -: exit $rc"
cmp -s "$tmp/stdout.html" "$tmp/contained.html" || fail "--html - differs from --html FILE"
# the page says what stock minisign answers in the directory
if command -v minisign >/dev/null 2>&1; then
	(cd "$C" && minisign -Vm report.json -p ares.pub) >"$tmp/minisign" ||
		fail "minisign -Vm report.json in $C"
	sed -n '/<pre id="minisign-out">/,/<\/pre>/p' "$tmp/contained.html" |
	    sed -e 's|<pre id="minisign-out">||' -e 's|</pre>||' >"$tmp/said"
	cmp -s "$tmp/minisign" "$tmp/said" || {
		diff "$tmp/minisign" "$tmp/said" >&2
		fail "the page's minisign answer is not minisign's"
	}
fi
echo "ok 1 - ares report: usage, refused outputs, stdout, minisign's answer"

# 2. What the browser needs.
need() {
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but $1"
	echo "skip: $1"; exit 77
}
# (ARES_CHROMEDRIVER / ARES_CHROMIUM: other binaries)
driver=${ARES_CHROMEDRIVER:-$(command -v chromedriver || echo /usr/lib/chromium/chromedriver)}
browser=${ARES_CHROMIUM:-/usr/lib/chromium/chromium}
[ -x "$browser" ] || [ -n "${ARES_CHROMIUM:-}" ] ||
	browser=$(command -v chromium || command -v chromium-browser || echo none)
[ -x "$driver" ] && [ -x "$browser" ] ||
	need "no chromium / chromedriver (apt-get install chromium chromium-driver)"
command -v python3 >/dev/null 2>&1 || need "no python3"
sock=/var/run/docker.sock
curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK ||
	need "no Docker Engine at $sock (the trial)"

# 3. The pages: the two replays (pinned demo key), a tiny real trial.
"$ARES" report "$B" --html "$tmp/breached.html" --pub "$PUB" >/dev/null ||
	fail "report replays/breached-docker-socket"
"$ARES" trial --policy "$SRC/policies/default.yaml" -n 2 -j 2 \
    --runs "$tmp/runs" >"$tmp/trial.out" 2>&1; rc=$?
# (5: a run ended in error, e.g. an engine out of address pools under
# load: the trial dir still is one, its page says "error")
case $rc in 0|1|4|5) ;; *) cat "$tmp/trial.out" >&2; fail "ares trial -n 2: exit $rc";; esac
T=$(ls -d "$tmp"/runs/trial-*) || fail "no trial dir"
[ -f "$T/trial.json" ] || fail "no $T/trial.json"
"$ARES" report "$T" --html "$T/report.html" >/dev/null || fail "report TRIAL_DIR"
"$ARES" probe --policy "$SRC/policies/default.yaml" --runs "$tmp/probes" \
    >"$tmp/probe.out" 2>&1; rc=$?
case $rc in 0|1) ;; *) cat "$tmp/probe.out" >&2; fail "ares probe: exit $rc";; esac
P=$(ls -d "$tmp"/probes/*) || fail "no probe run dir"
"$ARES" report "$P" --html "$tmp/probe.html" >/dev/null || fail "report PROBE_RUN_DIR"
verdict_of() {
	"$ARES" verify "$@" --json - 2>/dev/null |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])'
}
vc=$(verdict_of "$C" --pub "$PUB") || fail "verify $C"
vb=$(verdict_of "$B" --pub "$PUB") || fail "verify $B"
vt=$(verdict_of "$T") || fail "verify $T"
vp=$(verdict_of "$P") || fail "verify $P"
[ "$vc" = contained ] && [ "$vb" = breached ] ||
	fail "the replays verify as $vc and $vb"

# Two pages that fetch: one keeps the CSP (the browser refuses, the
# console says so), one without it (the request happens).
sed 's|</main>|<img src="http://127.0.0.1:9/poyo.png" alt=""></main>|' \
    "$tmp/contained.html" >"$tmp/leak-csp.html"
sed -e '/Content-Security-Policy/d' \
    -e 's|</main>|<img src="leak.png" alt=""></main>|' \
    "$tmp/contained.html" >"$tmp/leak-nocsp.html"
grep -q 'Content-Security-Policy' "$tmp/leak-nocsp.html" && fail "sed kept the CSP"

shots=${ARES_HTML_SHOTS:-$tmp/shots}
mkdir -p "$shots"
python3 "$SRC/tests/integration/html_report.py" "$driver" "$browser" "$shots" \
    "drill:$vc:$tmp/contained.html" "drill:$vb:$tmp/breached.html" \
    "trial:$vt:$T/report.html" "probe:$vp:$tmp/probe.html" \
    "nojs:$vb:$tmp/breached.html" \
    "leaky:$vc:$tmp/leak-csp.html" "leaky:$vc:$tmp/leak-nocsp.html" ||
	fail "the pages in chromium (screenshots: $shots)"
echo "ok 2 - contained, breached, trial and probe pages in headless chromium"
