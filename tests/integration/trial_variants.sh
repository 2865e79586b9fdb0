#!/bin/sh
# trial_variants.sh - ares trial --variants: rates about the boundary, not
# one dressing.
#
# 1. --variants generated, N runs (ARES_TRIAL_VARIANTS_N, default 8; 20:
#    bench/README.md), two
#    at a time, a short observe window: every run wears its own generated
#    dressing (trial.json: N distinct variant ids and variant_seeds, each
#    id gen-<hex of its seed>, no seed a drill seed), its lab wore it, its
#    report names its policy copy; the rates with their intervals; the
#    per-dressing table (one row per dressing, the bait kind that fired),
#    the rate over dressings and per bait kind with intervals; the table
#    ares trial prints; ares verify accepts it.
#    A copy whose run 0 wore another dressing (its lab.json / variant.yaml
#    those of run 1, its report and trial.json re-signed with the key), or
#    whose report hashes no lab.json: ares verify fails naming run 0.
# 2. --variants fixed, 3 runs: the shipped variants in table order; a
#    copy whose run 0 wore run 1's shipped dressing fails verify.
# 3. Usage: a bad --variants, --variants with --resume.
#
# Needs the engine: skips (77) without it unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=$(cd "${ARES_SRCDIR:-.}" && pwd)
N=${ARES_TRIAL_VARIANTS_N:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ARES_KEY_DIR="$tmp/keys"

"$ARES" trial --policy "$SRC/policies/default.yaml" -n 2 --variants nope \
    >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "--variants nope: exit $rc, want 2"
grep -q "not policy, fixed or generated" "$tmp/err" || fail "--variants nope: $(cat "$tmp/err")"
"$ARES" trial --resume "$tmp" --variants generated >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--resume with --variants: exit $rc, want 2"

sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no engine at $sock"
	echo "skip: no Docker Engine"; exit 77
fi
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to read trial.json"

# the default policy with a short observe window (a copy: its folder is
# the temporary one; nothing in it is relative)
sed 's/^observe_ms: [0-9]*/observe_ms: 300/' "$SRC/policies/default.yaml" >"$tmp/policy.yaml"

# check TRIAL_DIR MODE N: trial.json against the rule and the runs.
check() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, os, re, sys
d, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def die(m):
    print("FAIL: " + m, file=sys.stderr); sys.exit(1)
j = json.load(open(os.path.join(d, "trial.json")))
if j.get("variants") != mode: die("variants: %r" % j.get("variants"))
runs = j["runs"]
if len(runs) != n or not j["complete"]: die("%d runs, complete %s" % (len(runs), j["complete"]))
seeds = {r["seed"] for r in runs}
ids, vseeds = set(), set()
for r in runs:
    i = r["index"]
    for k in ("variant", "variant_seed", "company", "service", "policy_copy", "bait", "bait_kind"):
        if k not in r: die("run %d: no %s" % (i, k))
    if not r["company"] or not r["service"]: die("run %d: no company/service" % i)
    if r["policy_copy"] != "policies/run-%d.yaml" % i: die("run %d: copy %s" % (i, r["policy_copy"]))
    rep = json.load(open(os.path.join(d, r["run_dir"], "report.json")))
    if not rep["policy"].endswith("/" + r["policy_copy"]): die("run %d: report policy %s" % (i, rep["policy"]))
    lab = json.load(open(os.path.join(d, r["run_dir"], "lab.json")))
    if lab["variant"] != r["variant"]: die("run %d: lab wore %s, trial.json %s" % (i, lab["variant"], r["variant"]))
    copy = open(os.path.join(d, r["policy_copy"])).read()
    if mode == "generated":
        if not re.fullmatch(r"gen-[0-9a-f]{16}", r["variant"]) or int(r["variant"][4:], 16) != int(r["variant_seed"]):
            die("run %d: id %s seed %s" % (i, r["variant"], r["variant_seed"]))
        if r["variant_seed"] in seeds: die("run %d: dressing seed is a drill seed" % i)
        if "variant: generated" not in copy or "variant_seed: %s\n" % r["variant_seed"] not in copy or "bait: [credential]" not in copy:
            die("run %d: policy copy %s" % (i, copy))
        vseeds.add(r["variant_seed"])
    else:
        want = ["default", "billing-east", "wiki-north"][i % 3]
        if r["variant"] != want or r["variant_seed"] is not None: die("run %d: %s" % (i, r["variant"]))
        if "variant: %s" % want not in copy or "variant_seed" in copy: die("run %d: copy %s" % (i, copy))
    ids.add(r["variant"])
    if r["bait_fired"] != (r["bait"] is not None): die("run %d: bait vs bait_fired" % i)
    if r["bait_fired"] and r["bait_kind"] != "credential": die("run %d: bait kind %s" % (i, r["bait_kind"]))
if len(ids) != min(n, 3 if mode == "fixed" else n): die("%d distinct dressings" % len(ids))
if mode == "generated" and len(vseeds) != n: die("%d distinct variant seeds" % len(vseeds))
s = j["summary"]
def rate(x, what):
    if not isinstance(x, dict) or x["n"] <= 0 or not (0 <= x["lower"] <= x["k"] / x["n"] <= x["upper"] <= 1):
        die("%s: %r" % (what, x))
for k in ("bait_taken", "contained"):
    rate(s["rates"][k], "rates." + k)
ds = s["dressings"]
if ds["dressings"] != len(ids) or len(ds["table"]) != len(ids): die("dressings table %r" % ds)
rate(ds["bait_taken_over_dressings"], "bait_taken_over_dressings")
fired = sum(1 for r in runs if r["bait_fired"])
if ds["bait_taken_by_kind"]["credential"]["k"] != fired: die("by kind: %r" % ds["bait_taken_by_kind"])
rate(ds["bait_taken_by_kind"]["credential"], "bait_taken_by_kind.credential")
for kind in ("ssh-key", "cloud-credentials", "git-credential", "mcp-server", "instruction", "tripwire"):
    if ds["bait_taken_by_kind"][kind]["k"] != 0: die("kind %s fired" % kind)
tot = 0
for row in ds["table"]:
    rr = [r for r in runs if r["variant"] == row["variant"]]
    k = sum(1 for r in rr if r["bait_fired"])
    if row["runs"] != len(rr) or row["bait_taken"]["k"] != k: die("row %r" % row)
    if row["company"] != rr[0]["company"]: die("row company %r" % row)
    if k and row["bait_kinds"].get("credential") != k: die("row kinds %r" % row)
    rate(row["bait_taken"], "table " + row["variant"])
    tot += row["runs"]
if tot != n: die("table covers %d runs" % tot)
print("ok %s: %d dressings, bait %d/%d, over dressings %d/%d [%.3f, %.3f]" % (mode, len(ids),
      s["rates"]["bait_taken"]["k"], s["rates"]["bait_taken"]["n"],
      ds["bait_taken_over_dressings"]["k"], ds["bait_taken_over_dressings"]["n"],
      ds["bait_taken_over_dressings"]["lower"], ds["bait_taken_over_dressings"]["upper"]))
PY
}

# ---- 1. a new generated dressing per run ----
start=$(date +%s)
"$ARES" trial --policy "$tmp/policy.yaml" -n "$N" -j 2 --seed 16 \
    --variants generated --runs "$tmp/g" >"$tmp/g.out" 2>"$tmp/g.err"; rc=$?
echo "trial --variants generated -n $N -j 2: $(( $(date +%s) - start )) s, exit $rc"
case $rc in 0|4) ;; *) fail "generated trial: exit $rc: $(tail -5 "$tmp/g.err")" ;; esac
dir=$(ls -d "$tmp"/g/trial-*) || fail "no trial dir"
check "$dir" generated "$N" || fail "trial.json (generated)"
grep -q '^dressings (--variants generated): bait taken per run' "$tmp/g.out" ||
    fail "no dressing table printed"
[ "$(grep -c '^ *[0-9][0-9]*  gen-[0-9a-f]\{16\}  ' "$tmp/g.out")" -eq "$N" ] ||
    fail "printed dressing lines: $(grep -c 'gen-' "$tmp/g.out")"
grep -q '^  bait taken .*/[0-9]*  \[0\.[0-9]*, [01]\.[0-9]*\]' "$tmp/g.out" || fail "no bait interval printed"
"$ARES" verify "$dir" >"$tmp/v.out" 2>&1 || fail "verify: $(grep -v '^ok' "$tmp/v.out")"
[ "$(grep -c '^ok   run ' "$tmp/v.out")" -eq "$N" ] || fail "verify did not check $N runs"

# ---- 1b. a run that wore another dressing, re-signed with the key ----
# Run 0's lab.json and/or variant.yaml become run 1's, its report.json's
# file hashes are recomputed and it is signed again (same trusted
# comment), trial.json takes the new report hash and is signed again: the
# signatures, hashes and trusted comments all agree; only the run's own
# evidence of its dressing, checked against the rule, tells.
forge_ok=1
for t in jq minisign b2sum; do
	command -v $t >/dev/null 2>&1 && continue
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "no $t for the forgeries"
	forge_ok=0
done
# sign FILE COMMENT: FILE.minisig with the trial's key (stock minisign).
sign() {
	minisign -S -s "$ARES_KEY_DIR/ares.key" -m "$1" -t "$2" -x "$1.minisig" \
	    </dev/null >/dev/null 2>&1 || fail "minisign -S $1"
}
# jqedit FILE FILTER
jqedit() { jq "$2" "$1" >"$1.new" && mv "$1.new" "$1" || fail "jq $2"; }
# forge_run TRIALCOPY FILE...: FILE(s) of run 1 into run 0, re-signed.
forge_run() {
	x=$1; shift
	r0=$(jq -r '.runs[] | select(.index == 0) | .run_dir' "$x/trial.json")
	r1=$(jq -r '.runs[] | select(.index == 1) | .run_dir' "$x/trial.json")
	rj="$x/$r0/report.json"
	for f in "$@"; do
		cp "$x/$r1/$f" "$x/$r0/$f"
		h=$(b2sum -l 256 "$x/$r0/$f" | cut -d' ' -f1)
		n=$(wc -c <"$x/$r0/$f")
		jqedit "$rj" "(.files[] | select(.path == \"$f\")) |= (.blake2b_256 = \"$h\" | .bytes = $n)"
	done
	sign "$rj" "$(sed -n 's/^trusted comment: //p' "$rj.minisig")"
	rh=$(b2sum -l 256 "$rj" | cut -d' ' -f1)
	tj="$x/trial.json"
	jqedit "$tj" "(.runs[] | select(.index == 0)).report_blake2b = \"$rh\""
	dig=$(jq -r '.runs[] | "\(.index) \(.seed) \(if .run_id == "" then "-"
	    else .run_id end) \(.verdict) \(.report_blake2b // "-")"' "$tj" |
	    b2sum -l 256 | cut -d' ' -f1)
	sign "$tj" "ares-trial-v1 trial=$(jq -r .trial_id "$tj") n=$(jq -r .n "$tj") done=$(jq '.runs | length' "$tj") complete=$(jq -r .complete "$tj") runs=$dig"
}
# expect_forged TRIALCOPY WHAT PATTERN: verify exits 1 naming run 0.
expect_forged() {
	"$ARES" verify "$1" >"$tmp/vx.out" 2>&1; vrc=$?
	[ $vrc -eq 1 ] || fail "$2: verify exit $vrc, want 1: $(cat "$tmp/vx.out")"
	grep -q '^ok   signature of ' "$tmp/vx.out" || fail "$2: not re-signed: $(cat "$tmp/vx.out")"
	grep -Eq "^FAIL $3" "$tmp/vx.out" || fail "$2: no FAIL line matching $3: $(cat "$tmp/vx.out")"
	echo "ok - $2: $(grep -E -m1 "^FAIL $3" "$tmp/vx.out" | cut -c1-160)"
}
if [ $forge_ok = 1 ] && [ "$N" -ge 2 ]; then
	v0=$(jq -r '.runs[] | select(.index == 0) | .variant' "$dir/trial.json")
	v1=$(jq -r '.runs[] | select(.index == 1) | .variant' "$dir/trial.json")
	id0=$(jq -r '.runs[] | select(.index == 0) | .run_id' "$dir/trial.json")
	# the lab (and its variant.yaml) of another dressing
	rm -rf "$tmp/x"; cp -r "$dir" "$tmp/x"
	forge_run "$tmp/x" lab.json variant.yaml
	expect_forged "$tmp/x" "a run that wore another dressing" \
	    "run 0 \($id0\): it wore dressing $v1 \(its signed lab.json\), not $v0 as listed"
	# lab.json as listed, but another dressing's variant.yaml
	rm -rf "$tmp/x"; cp -r "$dir" "$tmp/x"
	forge_run "$tmp/x" variant.yaml
	expect_forged "$tmp/x" "a run whose variant.yaml is another dressing" \
	    "run 0 \($id0\): its signed variant.yaml is not the dressing $v0 that variant_seed generates"
	# the report re-signed without lab.json among its hashed files
	rm -rf "$tmp/x"; cp -r "$dir" "$tmp/x"
	jqedit "$tmp/x/$(jq -r '.runs[] | select(.index == 0) | .run_dir' "$dir/trial.json")/report.json" \
	    '.files |= map(select(.path != "lab.json"))'
	forge_run "$tmp/x"
	expect_forged "$tmp/x" "a run whose report hashes no lab.json" \
	    "run 0 \($id0\): its signed report.json hashes no lab.json: the dressing it wore \($v0\) is not proven"
	rm -rf "$tmp/x"
else
	echo "note: no jq/minisign/b2sum: the dressing forgeries are not run"
fi

# ---- 2. the shipped variants in turn ----
"$ARES" trial --policy "$tmp/policy.yaml" -n 3 -j 2 --seed 16 \
    --variants fixed --runs "$tmp/f" >"$tmp/f.out" 2>"$tmp/f.err"; rc=$?
case $rc in 0|4) ;; *) fail "fixed trial: exit $rc: $(tail -5 "$tmp/f.err")" ;; esac
dir=$(ls -d "$tmp"/f/trial-*) || fail "no trial dir"
check "$dir" fixed 3 || fail "trial.json (fixed)"
"$ARES" verify "$dir" >"$tmp/vf.out" 2>&1 || fail "verify (fixed): $(grep -v '^ok' "$tmp/vf.out")"
if [ $forge_ok = 1 ]; then
	v0=$(jq -r '.runs[] | select(.index == 0) | .variant' "$dir/trial.json")
	v1=$(jq -r '.runs[] | select(.index == 1) | .variant' "$dir/trial.json")
	id0=$(jq -r '.runs[] | select(.index == 0) | .run_id' "$dir/trial.json")
	rm -rf "$tmp/x"; cp -r "$dir" "$tmp/x"
	forge_run "$tmp/x" lab.json variant.yaml
	expect_forged "$tmp/x" "fixed: a run that wore another shipped dressing" \
	    "run 0 \($id0\): it wore dressing $v1 \(its signed lab.json\), not $v0 as listed"
	rm -rf "$tmp/x"
fi

for r in "$tmp"/g/trial-*/runs/* "$tmp"/f/trial-*/runs/*; do
	id=$(basename "$r")
	curl -s --unix-socket $sock -G \
	    --data-urlencode "filters={\"label\":[\"ares.run=$id\"]}" \
	    "http://localhost/containers/json?all=1" | grep -q '"Id"' &&
	    fail "containers of $id left"
done
echo "ok: trial --variants generated ($N dressings) and fixed"
exit 0
