#!/bin/sh
# cli.sh - the headless drill as CI uses it: exit codes, --json, teardown.
# Skips (77) without an engine unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Usage errors and bad input: exit 2, message names the place.
"$ARES" drill --policy /nonexistent.yaml >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing policy: exit $rc, want 2"
grep -q '/nonexistent.yaml' "$tmp/out" || fail "missing policy not named"
"$ARES" drill --seed banana >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad seed: exit $rc, want 2"
"$ARES" frobnicate >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown command: exit $rc, want 2"
printf 'name: x\nlevers: [gateway-deny]\nbait: [b]\nbogus: 1\n' >"$tmp/bad.yaml"
"$ARES" drill --policy "$tmp/bad.yaml" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad policy: exit $rc, want 2"
grep -q "bad.yaml:4:1" "$tmp/out" || fail "bad policy error lacks file:line:col: $(cat "$tmp/out")"
"$ARES" --help | grep -q '3  Docker Engine unreachable' || fail "--help lacks exit codes"

# Engine unreachable: exit 3.
DOCKER_HOST=unix:///nonexistent.sock "$ARES" drill --policy "$SRC/policies/default.yaml" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 3 ] || fail "no engine: exit $rc, want 3 ($(cat "$tmp/out"))"

sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no engine at $sock"
	echo "skip: no Docker Engine"; exit 77
fi

"$ARES" drill --policy "$SRC/policies/default.yaml" --json "$tmp/d.json" >"$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || fail "drill exit $rc, want 0 (contained)"
grep -q '"verdict":[[:space:]]*"contained"' "$tmp/d.json" || fail "verdict not contained"
grep -q '"name":[[:space:]]*"tickets-admin-token"' "$tmp/d.json" || fail "no bait event"
n=$(grep -c '"verified":[[:space:]]*true' "$tmp/d.json")
[ "$n" -eq 2 ] || fail "$n verified levers, want 2"
ttk=$(sed -n 's/.*"time_to_kill_ms":[[:space:]]*\([0-9.]*\).*/\1/p' "$tmp/d.json")
[ -n "$ttk" ] || fail "no time_to_kill_ms"
awk -v t="$ttk" 'BEGIN { exit !(t > 0) }' || fail "time to kill $ttk not positive"
grep -q 'lever-verified *lever gateway-deny verified' "$tmp/out" || fail "beats not printed"
run=$(sed -n 's/.*"run_id":[[:space:]]*"\([^"]*\)".*/\1/p' "$tmp/d.json")
[ -n "$run" ] || fail "no run id"
filter=$(printf '{"label":["ares.run=%s"]}' "$run" | sed 's/{/%7B/g; s/}/%7D/g; s/"/%22/g; s/\[/%5B/g; s/\]/%5D/g; s/=/%3D/g; s/:/%3A/g')
c=$(curl -s --unix-socket $sock "http://localhost/containers/json?all=1&filters=$filter")
[ "$c" = "[]" ] || fail "containers left: $c"
nw=$(curl -s --unix-socket $sock "http://localhost/networks?filters=$filter")
[ "$nw" = "[]" ] || fail "networks left: $nw"
# The signed report: ares verify and the stock minisign both accept it.
rdir=$(sed -n 's/.*"run_dir":[[:space:]]*"\([^"]*\)".*/\1/p' "$tmp/d.json")
for f in report.json report.json.minisig report.md ares.pub evidence.jsonl; do
	[ -s "$rdir/$f" ] || fail "run dir lacks $f"
done
"$ARES" verify "$rdir" >"$tmp/v" 2>&1 || fail "ares verify: $(cat "$tmp/v")"
if command -v minisign >/dev/null 2>&1; then
	minisign -Vm "$rdir/report.json" -p "$rdir/ares.pub" >"$tmp/m" 2>&1 ||
	    fail "stock minisign rejects the report: $(cat "$tmp/m")"
	grep -q "run=$run" "$tmp/m" || fail "trusted comment lacks the run id: $(cat "$tmp/m")"
elif [ "${ARES_REQUIRE_DOCKER:-0}" = 1 ]; then
	fail "minisign missing in CI"
fi
# Tampering is caught and named.
cp -r "$rdir" "$tmp/copy"
sed -i '3d' "$tmp/copy/evidence.jsonl"
"$ARES" verify "$tmp/copy" >"$tmp/v" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "tampered run: verify exit $rc, want 1"
grep -q 'line 3' "$tmp/v" || fail "tamper not located: $(cat "$tmp/v")"
echo "ok: contained in ${ttk} ms, run $run, nothing left, report verifies"
