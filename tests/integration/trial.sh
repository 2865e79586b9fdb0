#!/bin/sh
# trial.sh - ares trial end to end: a real N=6 J=2 trial with intervals that
# ares verify accepts; an interrupted trial (SIGINT after the first finished
# run) resumed with --resume gives the summary of an uninterrupted trial of
# the same seed.  ares stats ci usage errors.  Needs the engine: skips (77)
# without one unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
POLICY="$SRC/policies/default.yaml"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ARES_KEY_DIR="${ARES_KEY_DIR:-$tmp/keys}"

# ares stats ci: the maths and its usage errors (no engine needed).
[ "$("$ARES" stats ci 7 20)" = "0.1539092048 0.5921885345" ] ||
	fail "stats ci 7 20: $("$ARES" stats ci 7 20)"
[ "$("$ARES" stats ci 0 10 --level 0.95)" = "0.0000000000 0.3084971078" ] ||
	fail "stats ci 0 10"
for bad in "8 7" "-1 5" "1.5 3" "x 3" "1 0" "1 2 --level 1" "1 2 --level 0" \
    "1 2 --level abc" "1"; do
	# shellcheck disable=SC2086
	"$ARES" stats ci $bad >/dev/null 2>"$tmp/err"; rc=$?
	[ $rc -eq 2 ] || fail "stats ci $bad: exit $rc, want 2"
	[ -s "$tmp/err" ] || fail "stats ci $bad: no message"
done
"$ARES" trial -n 3 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "trial without --policy: exit $rc, want 2"
"$ARES" trial --policy "$POLICY" -n 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "trial -n 0: exit $rc, want 2"
DOCKER_HOST=unix:///nonexistent.sock "$ARES" trial --policy "$POLICY" -n 1 \
    --runs "$tmp/none" >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] || fail "trial without engine: exit $rc, want 3"

sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no engine at $sock"
	echo "skip: no Docker Engine"; exit 77
fi

# Containers of this test's runs still present (labels ares.run=<id>).
docker_left() {
	for r in "$tmp"/b/trial-*/runs/*; do
		id=$(basename "$r")
		curl -s --unix-socket $sock -G \
		    --data-urlencode "filters={\"label\":[\"ares.run=$id\"]}" \
		    "http://localhost/containers/json?all=1" | grep -o '"Id":"[0-9a-f]*"'
	done
}

# The summary lines that must not depend on timing (not time to kill).
summary() {
	grep -E '^  (bait taken|contained|breached|leaked|not exercised) ' "$1"
}

# 1. A real trial: N=6, J=2.
"$ARES" trial --policy "$POLICY" -n 6 -j 2 --seed 11 --runs "$tmp/a" \
    >"$tmp/a.out" 2>"$tmp/a.err"; rc=$?
cat "$tmp/a.out" "$tmp/a.err"
case $rc in 0|4) ;; *) fail "trial N=6: exit $rc" ;; esac
grep -q '^\[6/6\] running 0, contained' "$tmp/a.err" || fail "no progress lines"
summary "$tmp/a.out" | grep -q 'bait taken .*[0-9]/6  \[0\.[0-9]*, [01]\.[0-9]*\]' ||
	fail "no bait interval"
summary "$tmp/a.out" | grep -q '^  contained .*/[0-9]*  \[' || fail "no contained interval"
dir=$(ls -d "$tmp"/a/trial-*) || fail "no trial dir"
[ -f "$dir/trial.json" ] && [ -f "$dir/trial.json.minisig" ] || fail "no signed trial.json"
grep -q '"complete":[[:space:]]*true' "$dir/trial.json" || fail "trial not complete"
[ "$(ls "$dir/runs" | wc -l)" -eq 6 ] || fail "want 6 run dirs"
"$ARES" verify "$dir" >"$tmp/v.out" 2>&1 || { cat "$tmp/v.out"; fail "verify rejects the trial"; }
[ "$(grep -c '^ok   run ' "$tmp/v.out")" -eq 6 ] || fail "verify did not check 6 runs"
# report.md: the same rates, intervals and runs as the signed trial.json
python3 - "$dir" <<'PY' || fail "report.md does not say what trial.json says"
import hashlib, json, sys
d = sys.argv[1]
raw = open(d + "/trial.json", "rb").read()
tj, md = json.loads(raw), open(d + "/report.md").read()
assert hashlib.blake2b(raw, digest_size=32).hexdigest() in md, "no hash"
names = {"bait_taken": "bait taken", "contained": "contained",
         "breached": "breached", "leaked": "leaked"}
for key, r in tj["summary"]["rates"].items():
    line = "| %s | %d/%d |" % (names[key], r["k"], r["n"])
    assert line in md, line
    if r["n"] > 0:
        iv = "[%.4f, %.4f]" % (r["lower"], r["upper"])
        assert line + " " in md and iv in md.split(line, 1)[1].split("\n")[0], iv
for r in tj["runs"]:
    ttk = r["time_to_kill_ms"]
    row = "| %d | %s | %s | %s | %s |" % (r["index"], r["run_id"], r["seed"],
        r["verdict"], "-" if ttk is None else "%.3f ms" % ttk)
    assert row in md, row
t = tj["summary"]["time_to_kill_ms"]
if t["n"] > 0:
    assert "median %.3f ms" % t["median"] in md, "median"
    bars = [l for l in md.split("```")[1].splitlines() if " ms | " in l]
    assert sum(int(l.split()[-1]) for l in bars) == t["n"], "histogram"
assert "ares verify TRIAL_DIR" in md and "minisign -Vm trial.json" in md
PY
# tampering with a run is caught through the trial
r=$(ls "$dir/runs" | head -1)
echo tamper >>"$dir/runs/$r/agent.log"
"$ARES" verify "$dir" >/dev/null 2>&1 && fail "verify accepts a tampered run"

# 2. Resume: interrupt a N=4 J=2 trial after its first finished run.
"$ARES" trial --policy "$POLICY" -n 4 -j 2 --seed 5 --runs "$tmp/b" \
    >"$tmp/b.out" 2>&1 &
pid=$!
i=0
while :; do
	f=$(ls "$tmp"/b/trial-*/trial.json 2>/dev/null | head -1)
	[ -n "$f" ] && grep -q '"index":' "$f" && break
	i=$((i + 1)); [ $i -lt 600 ] || fail "no run finished in 60 s"
	sleep 0.1
done
kill -INT "$pid"
wait "$pid"; rc=$?
pid=
cat "$tmp/b.out"
bdir=$(dirname "$f")
grep -q '"complete":[[:space:]]*false' "$bdir/trial.json" ||
	fail "interrupted trial.json not marked incomplete"
[ $rc -eq 5 ] || [ $rc -eq 1 ] || fail "interrupted trial: exit $rc, want 5"
grep -q 'INCOMPLETE' "$tmp/b.out" || fail "interrupted trial not marked"
"$ARES" verify "$bdir" >/dev/null 2>&1 || fail "verify rejects the partial trial"
[ -z "$(docker_left)" ] || fail "labs left running after SIGINT: $(docker_left)"
"$ARES" trial --resume "$bdir" -j 2 >"$tmp/r.out" 2>&1; rrc=$?
cat "$tmp/r.out"
grep -q '"complete":[[:space:]]*true' "$bdir/trial.json" || fail "resumed trial not complete"
"$ARES" verify "$bdir" >/dev/null 2>&1 || fail "verify rejects the resumed trial"

"$ARES" trial --policy "$POLICY" -n 4 -j 2 --seed 5 --runs "$tmp/c" \
    >"$tmp/c.out" 2>&1; crc=$?
summary "$tmp/r.out" >"$tmp/r.sum"
summary "$tmp/c.out" >"$tmp/c.sum"
diff "$tmp/r.sum" "$tmp/c.sum" || fail "resumed summary differs from an uninterrupted trial"
[ $rrc -eq $crc ] || fail "resumed exit $rrc, uninterrupted $crc"
# the same seeds, index by index
grep -o '"seed":[[:space:]]*"[0-9]*"' "$bdir/trial.json" >"$tmp/r.seeds"
grep -o '"seed":[[:space:]]*"[0-9]*"' "$tmp"/c/trial-*/trial.json >"$tmp/c.seeds"
diff "$tmp/r.seeds" "$tmp/c.seeds" || fail "seeds differ"
echo "trial.sh: ok"
