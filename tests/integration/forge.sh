#!/bin/sh
# forge.sh - results rewritten to lie, re-hashed and re-signed with the very
# key that signed them, are rejected by `ares verify --pub` naming the field.
#
# Real directories, made with the real commands: a trial (N=2), a probe
# battery on the leaky lab (rows that detect root-user), and a fix loop run.
# Each forgery edits the JSON (jq), recomputes what the trusted comment
# covers (the trial's runs digest with b2sum) and signs again with the
# stock minisign and the operator's own secret key, so the signature, the
# trusted comment and every hash agree: only the recompute can tell.
# Needs the engine: skips (77) without one unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for t in jq minisign b2sum; do
	command -v $t >/dev/null 2>&1 || {
		[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "no $t"
		echo "skip: no $t"; exit 77; }
done
sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no engine at $sock"
	echo "skip: no Docker Engine"; exit 77
fi

keys="$tmp/keys"
export ARES_KEY_DIR="$keys"
"$ARES" keygen --key-dir "$keys" >/dev/null || fail "keygen"
pub="$keys/ares.pub"
sk="$keys/ares.key"

# sign FILE COMMENT: FILE.minisig with the operator's key (stock minisign).
sign() {
	minisign -S -s "$sk" -m "$1" -t "$2" -x "$1.minisig" </dev/null \
	    >/dev/null 2>&1 || fail "minisign -S $1"
}

# edit FILE JQ-FILTER: rewrite FILE through jq.
edit() {
	jq "$2" "$1" >"$1.new" || fail "jq $2"
	mv "$1.new" "$1"
}

# expect DIR WHAT PATTERN: ares verify --pub exits 1 and a FAIL line
# matches PATTERN (grep -E); the signature itself still checks out.
expect() {
	"$ARES" verify "$1" --pub "$pub" >"$tmp/v.out" 2>&1; vrc=$?
	[ $vrc -eq 1 ] || { cat "$tmp/v.out"; fail "$2: verify exit $vrc, want 1"; }
	grep -q '^ok   signature of ' "$tmp/v.out" ||
	    { cat "$tmp/v.out"; fail "$2: the re-signed file does not verify as signed"; }
	grep -q '^ok   trusted comment matches ' "$tmp/v.out" ||
	    { cat "$tmp/v.out"; fail "$2: the trusted comment was not forged consistently"; }
	grep -Eq "^FAIL $3" "$tmp/v.out" ||
	    { cat "$tmp/v.out"; fail "$2: no FAIL line matching: $3"; }
	echo "ok - $2: $(grep -E -m1 "^FAIL $3" "$tmp/v.out" | cut -c1-150)"
}

# ---- trial ----------------------------------------------------------------

# resign_trial DIR: the trusted comment of trial.json from what it now says.
resign_trial() {
	tj="$1/trial.json"
	dig=$(jq -r '.runs[] | "\(.index) \(.seed) \(if .run_id == "" then "-"
	    else .run_id end) \(.verdict) \(.report_blake2b // "-")"' "$tj" |
	    b2sum -l 256 | cut -d' ' -f1)
	sign "$tj" "ares-trial-v1 trial=$(jq -r .trial_id "$tj") n=$(jq -r .n "$tj") done=$(jq '.runs | length' "$tj") complete=$(jq -r .complete "$tj") runs=$dig"
}

"$ARES" trial --policy "$SRC/policies/flaw-docker-socket.yaml" -n 2 -j 1 \
    --seed 7 --runs "$tmp/t" >"$tmp/t.out" 2>&1
tdir=$(ls -d "$tmp"/t/trial-*) || { cat "$tmp/t.out"; fail "no trial dir"; }
"$ARES" verify "$tdir" --pub "$pub" >"$tmp/v.out" 2>&1 ||
    { cat "$tmp/v.out"; fail "the pristine trial does not verify"; }
grep -q '^ok   summary recomputed from the runs' "$tmp/v.out" ||
    fail "no summary recompute line"
# a: a run with a signed result (a drill the engine failed has none);
# b: the other one
a=$(jq '[.runs[] | select(.report_blake2b != null and .verdict != "error")
    | .index][0] // empty' "$tdir/trial.json")
[ -n "$a" ] || { cat "$tmp/t.out"; fail "no run of the trial has a result"; }
b=$((1 - a))
va=$(jq -r ".runs[] | select(.index == $a) | .verdict" "$tdir/trial.json")
case $va in breached) lie=contained ;; *) lie=breached ;; esac
ra=$(jq -r ".runs[] | select(.index == $a) | .run_id" "$tdir/trial.json")

fresh() { rm -rf "$tmp/x"; cp -r "$1" "$tmp/x"; }

# 1. run a's verdict, with its counts made to agree with the lie
fresh "$tdir"
edit "$tmp/x/trial.json" "
  (.runs[] | select(.index == $a) | .verdict) = \"$lie\" |
  .summary[\"$va\" | sub(\"-\"; \"_\")] -= 1 |
  .summary[\"$lie\"] += 1"
resign_trial "$tmp/x"
expect "$tmp/x" "trial: a run's verdict" \
    "run $a \($ra\): trial.json verdict $lie; its verified report.json: $va"

# 2. the counts and the rate alone (the runs untouched)
fresh "$tdir"
k=$(jq '.summary.rates.breached.k' "$tdir/trial.json")
edit "$tmp/x/trial.json" '
  .summary.rates.breached.k = (if .summary.rates.breached.k > 0 then 0
      else .summary.rates.breached.n + 1 end) |
  .summary.breached = .summary.rates.breached.k'
resign_trial "$tmp/x"
expect "$tmp/x" "trial: the breached count" \
    "trial.json summary.breached: [0-9]+; recomputed from the runs: $k"
grep -Eq "^FAIL trial.json summary.rates.breached: .*recomputed from the runs: $k/" \
    "$tmp/v.out" || fail "trial: the breached rate is not named"

# 3. an interval bound
fresh "$tdir"
edit "$tmp/x/trial.json" '.summary.rates.bait_taken.lower = 0.001'
resign_trial "$tmp/x"
expect "$tmp/x" "trial: an interval bound" \
    "trial.json summary.rates.bait_taken: .* \[0.0010, .*recomputed from the runs"

# 4. a run's bait (what the rates are made of)
fresh "$tdir"
edit "$tmp/x/trial.json" \
    "(.runs[] | select(.index == $a) | .bait_fired) |= not"
resign_trial "$tmp/x"
expect "$tmp/x" "trial: a run's bait" \
    "run $a \($ra\): trial.json bait_fired (true|false); its verified report.json"

# 5. one run listed twice (run b replaced by run a's directory and hash)
fresh "$tdir"
edit "$tmp/x/trial.json" "
  (.runs | map(.index) | index($a)) as \$i |
  (.runs | map(.index) | index($b)) as \$k |
  .runs[\$k].run_id = .runs[\$i].run_id | .runs[\$k].run_dir = .runs[\$i].run_dir |
  .runs[\$k].report_blake2b = .runs[\$i].report_blake2b |
  .runs[\$k].verdict = .runs[\$i].verdict"
resign_trial "$tmp/x"
expect "$tmp/x" "trial: a run listed twice" \
    "trial.json runs: run [01] and run [01] are both $ra \\(a run listed twice\\)"

# 6. a run directory that is a symlink to one outside the trial
fresh "$tdir"
mv "$tmp/x/runs/$ra" "$tmp/outside"
ln -s "$tmp/outside" "$tmp/x/runs/$ra"
expect "$tmp/x" "trial: a run dir outside the trial" "run $a \($ra\): runs/$ra is a symlink"
rm -rf "$tmp/outside"

# 7. a finished run hidden: dropped from the list, its directory kept
fresh "$tdir"
edit "$tmp/x/trial.json" "
  .runs |= map(select(.index != $a)) | .complete = false |
  .summary.finished -= 1 | .summary.missing += 1"
resign_trial "$tmp/x"
expect "$tmp/x" "trial: a finished run not listed" \
    "runs/$ra: a finished run \(verdict $va\) that trial.json does not list"

# ---- probe ----------------------------------------------------------------

# resign_probe DIR: the trusted comment of probe.json from its rows.
resign_probe() {
	pj="$1/probe.json"
	sign "$pj" "ares-probe-v1 run=$(jq -r .run_id "$pj") result=$(jq -r .result "$pj") rows=$(jq '.rows | length' "$pj") failed=$(jq '[.rows[] | select(.core and .result != "pass")] | length' "$pj")"
}

"$ARES" probe --policy "$SRC/policies/leaky.yaml" --flaw root-user \
    --runs "$tmp/p" >"$tmp/p.out" 2>&1; prc=$?
[ $prc -eq 1 ] || { cat "$tmp/p.out"; fail "probe leaky --flaw root-user: exit $prc, want 1"; }
pdir=$(sed -n 's/^run dir *//p' "$tmp/p.out")
[ -f "$pdir/probe.jsonl" ] || fail "probe: no recorded observations"
"$ARES" verify "$pdir" --pub "$pub" >"$tmp/v.out" 2>&1 ||
    { cat "$tmp/v.out"; fail "the pristine probe does not verify"; }
grep -q '^ok   rows: 1 of 1 planned, each evaluated again' "$tmp/v.out" ||
    { cat "$tmp/v.out"; fail "probe: no row recompute line"; }

# 8. the failing row made to pass, the result "held"
fresh "$pdir"
edit "$tmp/x/probe.json" '
  .rows[0].result = "pass" | .rows[0].observed = "uid 65532 gid 65532" |
  .result = "held"'
resign_probe "$tmp/x"
expect "$tmp/x" "probe: a row's verdict" \
    "probe.json rows\[0\] \(uid\) result: pass; recomputed from its recorded observation \(probe.jsonl line [0-9]+\): fail"

# 9. the result alone
fresh "$pdir"
edit "$tmp/x/probe.json" '.result = "held"'
resign_probe "$tmp/x"
expect "$tmp/x" "probe: the result" \
    "probe.json result: held; recomputed from the rows: failed; row uid is fail"

# 10. the failing row dropped
fresh "$pdir"
edit "$tmp/x/probe.json" '.rows = [] | .result = "held"'
resign_probe "$tmp/x"
expect "$tmp/x" "probe: a row dropped" "probe.jsonl records 1 row\(s\), probe.json lists 0"

# ---- fix ------------------------------------------------------------------

# resign_fix DIR: the trusted comment of fix.json from what it now says.
resign_fix() {
	fj="$1/fix.json"
	sign "$fj" "ares-fix-v1 fix=$(jq -r .fix_id "$fj") outcome=$(jq -r .outcome "$fj") evidence.jsonl=$(jq -r .evidence_entries "$fj"):$(jq -r .evidence_head "$fj")"
}

# The policy outside any git work tree: the fix proposes files only.
mkdir -p "$tmp/pol"
cp "$SRC/policies/flaw-docker-socket.yaml" "$tmp/pol/"
env -u GITHUB_TOKEN -u ARES_SLACK_WEBHOOK "$ARES" fix \
    --policy "$tmp/pol/flaw-docker-socket.yaml" --seed 7 --runs "$tmp/f" \
    --key-dir "$keys" >"$tmp/f.out" 2>&1; frc=$?
[ $frc -eq 0 ] || { tail -20 "$tmp/f.out"; fail "fix: exit $frc, want 0"; }
fdir=$(sed -n 's/^fix dir *//p' "$tmp/f.out")
"$ARES" verify "$fdir" --pub "$pub" >"$tmp/v.out" 2>&1 ||
    { cat "$tmp/v.out"; fail "the pristine fix dir does not verify"; }
grep -q '^ok   outcome verified recomputed from the runs' "$tmp/v.out" ||
    { cat "$tmp/v.out"; fail "fix: no outcome recompute line"; }
grep -q '^verified: fix ' "$tmp/v.out" || fail "fix: no summary line"
[ "$(grep -c '^ok   run [0-9] ' "$tmp/v.out")" -ge 3 ] || fail "fix: runs not verified"

# A forged fix dir is copied next to the original: the runs stay where the
# loop wrote them (RUNS/<run id>, siblings of the fix dir).
ffresh() { rm -rf "$tmp/f/forged"; cp -r "$fdir" "$tmp/f/forged"; }

# 11. the held-out run swapped for the breached original, still "contained"
ffresh
edit "$tmp/f/forged/fix.json" '
  (.runs | map(.role) | index("held-out")) as $h |
  .runs[$h].run_id = .runs[0].run_id | .runs[$h].run_dir = .runs[0].run_dir |
  .runs[$h].report_blake2b256 = .runs[0].report_blake2b256 |
  .runs[$h].seed = .runs[0].seed |
  .runs[$h].time_to_kill_ms = .runs[0].time_to_kill_ms'
resign_fix "$tmp/f/forged"
expect "$tmp/f/forged" "fix: the held-out result" \
    "run [0-9] held-out \(.*\): fix.json verdict contained; its verified report.json: breached"

# 12. the conclusion alone: a verified fix called "not a fix"
ffresh
edit "$tmp/f/forged/fix.json" '.outcome = "not-a-fix"'
resign_fix "$tmp/f/forged"
expect "$tmp/f/forged" "fix: the conclusion" \
    "fix.json outcome: not-a-fix; recomputed from the runs: verified"

# 13. the held-out drill dropped from the runs, still "verified"
ffresh
edit "$tmp/f/forged/fix.json" '.runs |= map(select(.role != "held-out"))'
resign_fix "$tmp/f/forged"
expect "$tmp/f/forged" "fix: the held-out drill dropped" \
    "fix.json runs: not a sequence the fix loop writes: .*no held-out drill"

# 15. the drill on the generated held-out dressing dropped, still "verified"
ffresh
edit "$tmp/f/forged/fix.json" '.runs |= map(select(.role != "held-out-gen"))'
resign_fix "$tmp/f/forged"
expect "$tmp/f/forged" "fix: the generated held-out drill dropped" \
    "fix.json runs: not a sequence the fix loop writes: .*no drill on the generated held-out dressing"

# 16. a generated held-out dressing whose seed the original run used
ffresh
s0=$(jq -r '.runs[0].seed' "$fdir/fix.json")
h0=$(python3 -c 'import sys; print("gen-%016x" % int(sys.argv[1]))' "$s0")
edit "$tmp/f/forged/fix.json" "
  .heldout_generated.variant = \"$h0\" | .heldout_generated.variant_seed = \"$s0\" |
  .runs |= map(if .role == \"held-out-gen\" then .variant = \"$h0\" | .variant_seed = \"$s0\" else . end)"
resign_fix "$tmp/f/forged"
expect "$tmp/f/forged" "fix: a held-out seed the run used" \
    "fix.json: the generated held-out seed $s0 is one run 0 original \(.*\) used: not held out"

# 17. the drill on the generated held-out dressing swapped for the shipped
# held-out one (also contained): fix.json still lists it on the generated
# dressing, but the run's own signed lab.json says what it wore
ffresh
hg=$(jq '.runs | map(.role) | index("held-out-gen")' "$fdir/fix.json")
hv=$(jq -r '.runs[] | select(.role == "held-out") | .variant' "$fdir/fix.json" | tail -1)
hgv=$(jq -r ".runs[$hg].variant" "$fdir/fix.json")
edit "$tmp/f/forged/fix.json" '
  (.runs | map(.role) | index("held-out")) as $h |
  (.runs | map(.role) | index("held-out-gen")) as $g |
  .runs[$g].run_id = .runs[$h].run_id | .runs[$g].run_dir = .runs[$h].run_dir |
  .runs[$g].report_blake2b256 = .runs[$h].report_blake2b256 |
  .runs[$g].seed = .runs[$h].seed | .runs[$g].verdict = .runs[$h].verdict |
  .runs[$g].time_to_kill_ms = .runs[$h].time_to_kill_ms'
resign_fix "$tmp/f/forged"
expect "$tmp/f/forged" "fix: a held-out-gen run that wore another dressing" \
    "run $hg held-out-gen \(.*\): it wore dressing $hv \(its signed lab.json\), not $hgv as listed"

# 18. the same with the run's own report re-signed without lab.json and
# variant.yaml among its hashed files: the dressing is not proven
ffresh
hid=$(jq -r ".runs[$hg].run_id" "$fdir/fix.json")
mkdir -p "$tmp/f2"
rm -rf "$tmp/f2/$hid" "$tmp/f2/forged"
cp -r "$tmp/f/$hid" "$tmp/f2/$hid"
cp -r "$fdir" "$tmp/f2/forged"
rj="$tmp/f2/$hid/report.json"
tc=$(sed -n 's/^trusted comment: //p' "$rj.minisig")
edit "$rj" '.files |= map(select(.path != "lab.json" and .path != "variant.yaml"))'
sign "$rj" "$tc"
rh=$(b2sum -l 256 "$rj" | cut -d' ' -f1)
edit "$tmp/f2/forged/fix.json" "(.runs[$hg]).report_blake2b256 = \"$rh\" |
  (.runs[$hg]).run_dir = \"$tmp/f2/$hid\""
resign_fix "$tmp/f2/forged"
expect "$tmp/f2/forged" "fix: a held-out-gen run whose report hashes no lab.json" \
    "run $hg held-out-gen \($hid\): its signed report.json hashes no lab.json: the dressing it wore \($hgv\) is not proven"

# 14. pr.md (not signed) telling another story than the runs
ffresh
sed -i 's/^\(| held-out | `[^`]*` | [^|]* | [^|]* | \)contained /\1breached /' \
    "$tmp/f/forged/pr.md"
expect "$tmp/f/forged" "fix: pr.md" "pr.md: run [0-9] held-out \(.*\) is breached there"

echo "forge.sh: ok"
