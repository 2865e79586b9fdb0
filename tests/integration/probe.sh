#!/bin/sh
# probe.sh - ares probe against a real engine (docs/probes.md):
#   hardened policy -> every core row PASS, exit 0, signed probe.json;
#   leaky policy    -> the expected rows FAIL, exit 1; its sensor chains
#                   (the sink's among them) anchored in probe.json, checked
#                   by ares verify, which rejects a line added to one;
#   SIGINT once the lab is up -> exit 5, a signed "cancelled" report, the
#                   lab torn down;
#   --negative-control over every flaw -> exit 0 (the gate sees each one;
#                   ares verify recomputes each lab's item from its rows).
# Also: JSON/JUnit written, every table line < 80 columns, nothing of the
# runs is left in the engine.  Skips (77) without an engine unless
# ARES_REQUIRE_DOCKER=1.  Prints the time of each run.
set -u

ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
T=$(mktemp -d "${TMPDIR:-/tmp}/ares-probe-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

"$ARES" lab status >/dev/null 2>&1
if [ $? -eq 3 ]; then
	echo "probe.sh: no Docker Engine" >&2
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && exit 1
	exit 77
fi

# id<TAB>result of every row of a probe JSON (cJSON_Print layout).
rows() {
	awk -F'"' '/"id":/ { id = $4 } /"result":/ && id != "" {
	    print id "\t" $4; id = "" }' "$1"
}

# The run dir printed on the "signed" line.
run_dir_of() {
	sed -n 's|^run dir *||p' "$1"
}

lab_gone() {
	out=$("$ARES" lab status --run "$1" 2>&1)
	case $out in
	*"(nothing: the lab is down)"*) ;;
	*) fail "lab of $1 still exists: $out" ;;
	esac
}

# ---- hardened: every core row holds ----
t0=$(now_ms)
"$ARES" probe --policy "$SRC/policies/hardened.yaml" --json "$T/h.json" \
    --junit "$T/h.xml" >"$T/h.out" 2>"$T/h.err"
rc=$?
t1=$(now_ms)
echo "probe.sh: hardened run: exit $rc, $((t1 - t0)) ms"
cat "$T/h.out"
[ $rc -eq 0 ] || { fail "hardened: exit $rc"; cat "$T/h.err" >&2; }
# the table (up to its RESULT line; paths after it are not wrapped)
if awk '/^RESULT:/ { exit } length($0) >= 80 { bad = 1 }
    END { exit !bad }' "$T/h.out"; then
	fail "hardened: a table line is 80 columns or wider"
fi
rows "$T/h.json" >"$T/h.rows"
[ "$(wc -l <"$T/h.rows")" -ge 19 ] || fail "hardened: fewer than 19 rows"
grep -q '^host-ports	pass$' "$T/h.rows" || fail "hardened: no host-ports pass"
if grep -v '^kernel	' "$T/h.rows" | grep -v '	pass$' >/dev/null; then
	fail "hardened: rows not pass: $(grep -v '	pass$' "$T/h.rows")"
fi
grep -q '"result":	"held"' "$T/h.json" || fail "hardened: result not held"
grep -q '<testsuites' "$T/h.xml" || fail "hardened: no JUnit"
grep -q 'failures="0"' "$T/h.xml" || fail "hardened: JUnit failures"
hdir=$(run_dir_of "$T/h.out")
[ -f "$hdir/probe.json.minisig" ] || fail "hardened: no signature in $hdir"
if command -v minisign >/dev/null 2>&1; then
	minisign -Vm "$hdir/probe.json" -p "$hdir/ares.pub" >/dev/null ||
	    fail "hardened: minisign rejects $hdir/probe.json"
fi
"$ARES" verify "$hdir" >"$T/hv" 2>&1 || fail "hardened: ares verify: $(cat "$T/hv")"
# report.md: every row of probe.json with its result, and probe.json's hash
python3 - "$hdir" <<'PY' || fail "hardened: report.md does not say what probe.json says"
import hashlib, json, sys
d = sys.argv[1]
raw = open(d + "/probe.json", "rb").read()
pj, md = json.loads(raw), open(d + "/report.md").read()
assert hashlib.blake2b(raw, digest_size=32).hexdigest() in md, "no hash"
assert "result: **%s**" % pj["result"] in md, "no result"
word = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "error": "ERROR"}
for r in pj["rows"]:
    assert "| %s | %s | %s |" % (r["id"], "yes" if r["core"] else "no",
        word[r["result"]]) in md, "row %s" % r["id"]
assert "ares verify RUN_DIR" in md and "minisign -Vm probe.json" in md
PY
cp -r "$hdir" "$T/hcopy"
sed -i 's/"held"/"HELD"/' "$T/hcopy/probe.json"
"$ARES" verify "$T/hcopy" >"$T/hv" 2>&1; vrc=$?
[ $vrc -eq 1 ] || fail "hardened: edited probe.json verifies (exit $vrc)"
lab_gone "$hdir"

# ---- leaky: the expected rows fail ----
t0=$(now_ms)
"$ARES" probe --policy "$SRC/policies/leaky.yaml" --json "$T/l.json" \
    --junit "$T/l.xml" >"$T/l.out" 2>"$T/l.err"
rc=$?
t1=$(now_ms)
echo "probe.sh: leaky run: exit $rc, $((t1 - t0)) ms"
[ $rc -eq 1 ] || { fail "leaky: exit $rc (want 1)"; cat "$T/l.err" >&2; }
rows "$T/l.json" >"$T/l.rows"
for id in nic-count resolve-external resolve-wellknown socket-out \
    docker-socket docker-client host-paths control-master-key \
    sibling-session-keys self-modify capabilities write-rootfs uid \
    real-key admin-api; do
	grep -q "^$id	fail$" "$T/l.rows" ||
	    fail "leaky: row $id did not fail ($(grep "^$id	" "$T/l.rows"))"
done
# the host's ports hold under every flaw (NET_ADMIN, privileged included)
grep -q '^host-ports	pass$' "$T/l.rows" ||
    fail "leaky: host-ports did not hold ($(grep '^host-ports	' "$T/l.rows"))"
grep -q '"result":	"failed"' "$T/l.json" || fail "leaky: result not failed"
grep -q '<failure ' "$T/l.xml" || fail "leaky: JUnit has no failure"
ldir=$(run_dir_of "$T/l.out")
if command -v minisign >/dev/null 2>&1; then
	(cd "$ldir" && minisign -Vm probe.json -p ares.pub >/dev/null) ||
	    fail "leaky: minisign rejects $ldir/probe.json"
fi
"$ARES" verify "$ldir" --json "$T/lv.json" >"$T/lv" 2>&1 ||
    fail "leaky: ares verify: $(cat "$T/lv")"
grep -q '^ok   evidence/sink.jsonl: [0-9]* entries' "$T/lv" ||
    fail "leaky: the sink's chain is not anchored: $(cat "$T/lv")"
grep -q '"ok":	true' "$T/lv.json" || fail "leaky: verify --json"
grep -q '"chains_anchored":	true' "$ldir/probe.json" ||
    fail "leaky: chains not anchored"
cp -r "$ldir" "$T/lcopy"
printf '{"seq":999}\n' >>"$T/lcopy/evidence/sink.jsonl"
"$ARES" verify "$T/lcopy" >"$T/lv" 2>&1; vrc=$?
[ $vrc -eq 1 ] || fail "leaky: a line added to the sink chain verifies ($vrc)"
grep -q '^FAIL evidence/sink.jsonl line ' "$T/lv" ||
    fail "leaky: the tampered chain is not named: $(cat "$T/lv")"
lab_gone "$ldir"

# ---- SIGINT mid-battery: signed partial report, exit 5, lab gone ----
mkdir -p "$T/runs"
"$ARES" probe --policy "$SRC/policies/hardened.yaml" --runs "$T/runs" \
    --json "$T/c.json" --junit "$T/c.xml" >"$T/c.out" 2>"$T/c.err" &
pid=$!
i=0
while [ $i -lt 600 ] && ! ls "$T"/runs/*/lab.json >/dev/null 2>&1; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
echo "probe.sh: SIGINT after the lab came up: exit $rc"
[ $rc -eq 5 ] || { fail "cancel: exit $rc (want 5)"; cat "$T/c.err" >&2; }
grep -q 'cancelled after [0-9]* of [0-9]* rows' "$T/c.err" ||
    fail "cancel: stderr does not say how far it got: $(cat "$T/c.err")"
grep -q '"result":	"cancelled"' "$T/c.json" || fail "cancel: result"
grep -q '"complete":	false' "$T/c.json" || fail "cancel: complete"
grep -q 'errors="[1-9]' "$T/c.xml" || fail "cancel: JUnit has no error"
grep -q '^RESULT: cancelled after' "$T/c.out" || fail "cancel: table"
cdir=$(run_dir_of "$T/c.out")
[ -n "$cdir" ] || cdir=$(ls -d "$T"/runs/*/ | head -n 1)
"$ARES" verify "$cdir" >"$T/cv" 2>&1 ||
    fail "cancel: the partial report does not verify: $(cat "$T/cv")"
grep -q 'result=cancelled' "$T/cv" || fail "cancel: trusted comment"
lab_gone "$cdir"

# ---- negative control: every flaw on its own is seen ----
t0=$(now_ms)
"$ARES" probe --negative-control --policy "$SRC/policies/hardened.yaml" \
    --json "$T/nc.json" --junit "$T/nc.xml" >"$T/nc.out" 2>"$T/nc.err"
rc=$?
t1=$(now_ms)
echo "probe.sh: negative control: exit $rc, $((t1 - t0)) ms"
cat "$T/nc.out"
[ $rc -eq 0 ] || { fail "negative control: exit $rc"; cat "$T/nc.err" >&2; }
grep -q '"result":	"gate-sees-every-flaw"' "$T/nc.json" ||
    fail "negative control: JSON result"
n=$(grep -c '"seen":	true' "$T/nc.json")
[ "$n" -ge 17 ] || fail "negative control: only $n weakenings seen"
# the decoy host's flaws and the widened filter, each seen by its row
for f in host-pid:pid-namespace host-ipc:ipc-namespace \
    seccomp-unconfined:seccomp; do
	python3 - "$T/nc.json" "${f%%:*}" "${f#*:}" <<'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
it = [i for i in d["labs"] if i.get("flaw") == sys.argv[2]]
assert len(it) == 1 and it[0]["seen"] is True, it
assert sys.argv[3] in [r.strip() for r in it[0]["failed_rows"].split(",")], it[0]
EOF
	    fail "negative control: ${f%%:*} not seen by ${f#*:}"
done
grep -q '"flaw":	"host-seal-off"' "$T/nc.json" ||
    fail "negative control: no host-seal-off item"
for d in $(sed -n 's/.*"run_dir":	"\(.*\)".*/\1/p' "$T/nc.json"); do
	lab_gone "$d"
	# each lab's probe.json names its item; verify recomputes "seen"
	"$ARES" verify "$d" >"$T/ncv" 2>&1 ||
	    fail "negative control: $d does not verify: $(cat "$T/ncv")"
	grep -q '^ok   negative control .*: seen true, recomputed from the rows' \
	    "$T/ncv" || fail "negative control: $d: no recomputed item: $(cat "$T/ncv")"
done

[ $fails -eq 0 ] || { echo "probe.sh: $fails failure(s)" >&2; exit 1; }
echo "probe.sh: ok"
exit 0
