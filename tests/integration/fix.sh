#!/bin/sh
# fix.sh - the fix loop end to end: a breached docker-socket drill in a
# temporary git repository ends with a verified fix (exit 0), a commit on a
# new branch (work tree and HEAD untouched), pr.md (without a model-written
# section: no model is configured), a signed fix.json, and nothing sent
# anywhere.  Needs the engine: skips (77) without it unless
# ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Usage errors need no engine.
"$ARES" fix >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no arguments: exit $rc, want 2"
"$ARES" fix --policy "$SRC/policies/flaw-docker-socket.yaml" --heldout nope \
    >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown held-out variant: exit $rc, want 2"

sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "no Docker engine"
	echo "SKIP: no Docker engine"; exit 77
fi
command -v git >/dev/null 2>&1 || { echo "SKIP: no git"; exit 77; }

repo="$tmp/repo"
mkdir -p "$repo/policies" "$tmp/runs" "$tmp/keys"
cp "$SRC/policies/flaw-docker-socket.yaml" "$repo/policies/"
(cd "$repo" && git init -q && git add policies &&
    git -c user.name=test -c user.email=test@localhost commit -qm init) ||
    fail "git init"
head_before=$(git -C "$repo" rev-parse HEAD)

# Nothing may be sent: no token, no webhook.
env -u GITHUB_TOKEN -u ARES_SLACK_WEBHOOK "$ARES" fix \
    --policy "$repo/policies/flaw-docker-socket.yaml" --seed 7 \
    --runs "$tmp/runs" --key-dir "$tmp/keys" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "fix: exit $rc, want 0: $(tail -20 "$tmp/out")"
grep -q 'attributed to docker-socket' "$tmp/out" || fail "no attribution beat"
grep -q '^run *held-out  .* contained$' "$tmp/out" || fail "no held-out rerun"
grep -q '^run *held-out-gen .* gen-[0-9a-f]\{16\} .* contained$' "$tmp/out" ||
    fail "no rerun on a generated held-out dressing: $(grep '^run' "$tmp/out")"
fixdir=$(sed -n 's/^fix dir *//p' "$tmp/out")
[ -d "$fixdir" ] || fail "no fix dir"
for f in pr.md fix.json fix.json.minisig ares.pub evidence.jsonl \
    policy.patched.yaml policy.patch github-request.json slack-request.json; do
	[ -s "$fixdir/$f" ] || fail "fix dir lacks $f"
done
grep -q '"sent":	false' "$fixdir/github-request.json" || fail "GitHub request sent"
grep -q '"sent":	false' "$fixdir/slack-request.json" || fail "Slack request sent"
# No model configured: no model-written section, no call, no note.
grep -q 'The breakout in words\|model-written' "$fixdir/pr.md" &&
    fail "a model section without a model"
[ -e "$fixdir/model-request.json" ] && fail "a model request without a model"
grep -q 'fix.model\|fix.push' "$tmp/out" && fail "a model call or a push not asked for"

# The branch and its commit: only the flaw line changed.
branch=$(git -C "$repo" for-each-ref --format='%(refname:short)' 'refs/heads/ares/fix-docker-socket-*')
[ -n "$branch" ] || fail "no ares/fix-docker-socket-* branch"
[ "$(git -C "$repo" rev-parse HEAD)" = "$head_before" ] || fail "HEAD moved"
[ "$(git -C "$repo" rev-parse "$branch^")" = "$head_before" ] || fail "commit not on HEAD"
git -C "$repo" diff --quiet || fail "work tree touched"
git -C "$repo" show "$branch:policies/flaw-docker-socket.yaml" | grep -q '^flaws: \[\]' ||
    fail "committed policy still has the flaw"
n=$(git -C "$repo" diff "$head_before" "$branch" | grep -c '^[-+][^-+]')
[ "$n" -eq 2 ] || fail "commit changes $n lines, want 2"
grep -q "$branch" "$fixdir/pr.md" || fail "pr.md lacks the branch"
# pr.md names the generated held-out dressing and how to regenerate it
gseed=$(sed -n 's/.*"variant_seed":[[:space:]]*"\([0-9]*\)".*/\1/p' "$fixdir/fix.json" | tail -n 1)
gid=$(grep -o '"variant":[[:space:]]*"gen-[0-9a-f]\{16\}"' "$fixdir/fix.json" | tail -n 1 |
    grep -o 'gen-[0-9a-f]*')
[ -n "$gseed" ] && [ -n "$gid" ] || fail "fix.json: no generated held-out dressing"
grep -q "^- generated held-out dressing \`$gid\` (role \`held-out-gen\`): variant_seed $gseed, company \`" \
    "$fixdir/pr.md" || fail "pr.md does not name $gid: $(grep -A3 'Held-out dressings' "$fixdir/pr.md")"
grep -q "Regenerate it with \`ares variant gen --seed $gseed\`" "$fixdir/pr.md" ||
    fail "pr.md: no regenerate command"
grep -q "variant: generated" "$fixdir/policy.heldout-$gid.yaml" ||
    fail "no generated held-out policy copy"

# Every run in pr.md verifies; fix.json is signed.
for d in $(sed -n 's/^ares verify //p' "$fixdir/pr.md"); do
	"$ARES" verify "$d" >/dev/null 2>&1 || fail "ares verify $d"
	grep -q "$(basename "$d")" "$fixdir/pr.md" || fail "pr.md lacks run id"
done
if command -v minisign >/dev/null 2>&1; then
	minisign -Vm "$fixdir/fix.json" -p "$fixdir/ares.pub" >/dev/null ||
	    fail "fix.json signature"
fi

# fix RUN_DIR refuses a tampered run.
orig=$(sed -n 's/^run *original *\([^ ]*\).*/\1/p' "$tmp/out")
[ -n "$orig" ] || fail "no original run id"
cp -r "$tmp/runs/$orig" "$tmp/tampered"
sed -i 's/"breached"/"contained"/' "$tmp/tampered/report.json"
"$ARES" fix "$tmp/tampered" --runs "$tmp/runs" --key-dir "$tmp/keys" \
    >"$tmp/out2" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "tampered run dir: exit $rc, want 2"
grep -q 'tampered' "$tmp/out2" || fail "tampered run not named: $(cat "$tmp/out2")"

# Nothing of the runs is left in the engine.
left=$(curl -s --unix-socket $sock 'http://localhost/containers/json?all=1' | grep -o '"ares.run":"[^"]*"' | wc -l)
for d in "$tmp"/runs/2*; do
	id=$(basename "$d")
	curl -s --unix-socket $sock 'http://localhost/containers/json?all=1' |
	    grep -q "\"ares.run\":\"$id\"" && fail "containers of $id left"
done
: "$left"
echo "ok: fix loop verified $branch"
exit 0
