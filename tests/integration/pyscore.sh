#!/bin/sh
# pyscore.sh - the Python recomputation of a run's verdict (docs/evidence.md
# sections 8 and 9, extracted from the doc here, so the doc and the test
# cannot drift) on
#   1. crafted run directories (tests/integration/pyscore_cases.py): the
#      recomputed fields of each case, and every consistent lie rejected;
#   2. the bundled replays in replays/, when they carry the chain scorer's
#      lines (a sweep line); older recordings are skipped, loudly;
#   3. fresh drills of policies/default.yaml (contained) and
#      policies/flaw-docker-socket.yaml (breached): the recomputation must
#      agree with drill.json and report.json on every field it recomputes.
# Needs python3 and, for part 3, the engine: skips (77) without them unless
# ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
require=${ARES_REQUIRE_DOCKER:-0}
export ARES_KEY_DIR="${ARES_KEY_DIR:-$tmp/keys}"
export ARES_RUNS="${ARES_RUNS:-$tmp/runs}"

if ! command -v python3 >/dev/null 2>&1; then
	[ "$require" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no python3"
	echo "skip: no python3"; exit 77
fi

# The two programs, exactly as docs/evidence.md prints them: one python
# block in each of the two sections.
python3 - "$SRC/docs/evidence.md" "$tmp" <<'EOF' || fail "cannot extract the programs from docs/evidence.md"
import re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
for title, name in (("An independent verifier in Python", "verify_evidence.py"),
                    ("Recomputing the verdict in Python", "score_run.py")):
    m = re.search(r"^## [0-9]+\. " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", doc, re.M | re.S)
    blocks = re.findall(r"^```python\n(.*?)^```$", m.group(1), re.M | re.S) if m else []
    if len(blocks) != 1:
        sys.exit("section %r: %d python blocks, want 1" % (title, len(blocks)))
    open("%s/%s" % (sys.argv[2], name), "w", encoding="utf-8").write(blocks[0])
    print("extracted %s (%d lines) from section %r" % (name, blocks[0].count("\n"), title))
EOF
score="$tmp/score_run.py"

# 1. Crafted runs.
mkdir "$tmp/crafted"
python3 "$SRC/tests/integration/pyscore_cases.py" "$score" "$tmp/crafted" >"$tmp/cases" 2>&1
rc=$?
cat "$tmp/cases"
[ $rc -eq 0 ] || fail "crafted cases: $(grep -c '^FAIL' "$tmp/cases") failure(s)"
# The crafted chains are chains the C verifier accepts: ares verify fails
# them on the signature only (they are not signed).
n=0
for d in "$tmp"/crafted/*/; do
	case $d in *-lie*|*integrity*|*unreadable*) continue ;; esac
	"$ARES" verify "$d" >"$tmp/v" 2>&1
	! grep '^FAIL' "$tmp/v" | grep -qv '^FAIL signature' ||
	    fail "ares verify rejects the crafted chains of $d: $(cat "$tmp/v")"
	grep -q '^ok   evidence.jsonl: ' "$tmp/v" || fail "ares verify did not check $d: $(cat "$tmp/v")"
	n=$((n + 1))
done
echo "ok ares verify accepts the chains of the $n crafted runs (unsigned: signature only)"

# 2. The bundled replays: each must agree with its own chains (they are
# re-recorded with replays/record.sh whenever the evidence changes).
for d in "$SRC"/replays/*/; do
	[ -f "$d/evidence.jsonl" ] || continue
	name=$(basename "$d")
	python3 "$score" "$d" >"$tmp/replay" 2>&1; rc=$?
	cat "$tmp/replay"
	[ $rc -eq 0 ] || fail "replay $name: the recomputation disagrees (exit $rc)"
	"$ARES" verify "$d" --pub "$SRC/replays/demo.pub" >"$tmp/verify" 2>&1 ||
	    fail "replay $name: ares verify: $(tail -3 "$tmp/verify")"
	echo "ok replay $name agrees (and ares verify recomputes the same)"
done

# 3. Fresh drills.
sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "$require" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but no engine at $sock"
	echo "skip: no Docker Engine for the fresh drills"; exit 77
fi
for case in default:0:contained flaw-docker-socket:1:breached; do
	policy=${case%%:*}; rest=${case#*:}; want_rc=${rest%%:*}; want=${rest#*:}
	"$ARES" drill --policy "$SRC/policies/$policy.yaml" --json "$tmp/$policy.json" \
	    >"$tmp/$policy.out" 2>&1; rc=$?
	rdir=$(sed -n 's/.*"run_dir":[[:space:]]*"\([^"]*\)".*/\1/p' "$tmp/$policy.json" 2>/dev/null)
	if [ -z "$rdir" ] || [ ! -d "$rdir" ]; then
		fail "$policy: no run dir (exit $rc): $(tail -5 "$tmp/$policy.out")"
	fi
	python3 "$score" "$rdir" >"$tmp/$policy.score" 2>&1; src=$?
	cat "$tmp/$policy.score"
	[ $src -ne 2 ] || fail "$policy: the recomputation cannot read the run"
	# Integrity holds whatever the scorer: every chain verifies with its signed count and head.
	! grep -q 'DISAGREE.*\(chains\|does not verify\|chain line\|evidence:\)' "$tmp/$policy.score" ||
	    fail "$policy: the chains do not match the signed report"

	[ $rc -eq "$want_rc" ] || fail "$policy: drill exit $rc, want $want_rc"
	[ $src -eq 0 ] || fail "$policy: the recomputation disagrees with the drill"
	"$ARES" verify "$rdir" >"$tmp/verify" 2>&1 ||
	    fail "$policy: ares verify: $(tail -3 "$tmp/verify")"
	grep -q "^verdict = \"$want\"\$" "$tmp/$policy.score" ||
	    fail "$policy: recomputed verdict is not $want"
	echo "ok drill $policy: $want, the recomputation agrees with drill.json and report.json"
done
echo "ok: crafted cases agree and every lie is rejected"
