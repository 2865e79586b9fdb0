#!/bin/sh
# fix_push.sh - the fix loop all the way, on a Compose service: a scratch
# git repository holds a Compose file whose agent service mounts the
# docker socket, and the policy `ares policy import` made from it (a
# scripted attacker that takes the bait and then uses the socket).  `ares
# fix --push origin --github o/r --slack-channel C1 --slack-channel C2`
# against servers of the test's own on 127.0.0.1 (fake_api.py for GitHub
# and Slack, fake_openai.py for the model; the remote is a bare repository
# on disk: nothing leaves the machine):
#   - the fix is verified on the policy re-imported from the patched
#     Compose file, and ends in one commit on a new branch that removes the
#     socket volume from the Compose file and turns the flaw off in the
#     policy (work tree and HEAD untouched); the bare remote has the branch;
#   - the GitHub server saw one pull request (title, head, base, body with
#     the model-written section, the bot token never); Slack saw two
#     chat.postMessage posts with the bot token, one per channel;
#   - the model's hostile text is quoted inert (no HTML, no <!channel>, no
#     @mention, no forged "Outcome:" line) under its label;
#   - no token, key or password is in any file of the runs;
# then from the same breached run: a push that fails (a URL with a
# password, nothing listening) is recorded with what git said and the
# password redacted, the pull request is not opened, Slack's 200
# {"ok": false} is a failure naming its error, a model answer that echoes
# the key is withheld (the section is omitted with a note): exit 6.
# Needs the engine: skips (77) without it unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
ARES=$(cd "$(dirname "$ARES")" && pwd)/$(basename "$ARES")
SRC=$(cd "$SRC" && pwd)
tmp=$(mktemp -d)
api=""
ai=""
cleanup() {
	[ -n "$api" ] && kill "$api" 2>/dev/null
	[ -n "$ai" ] && kill "$ai" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Usage errors need no engine.
"$ARES" fix --policy "$SRC/policies/flaw-docker-socket.yaml" \
    --slack-channel '<!channel>' >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "a bad --slack-channel: exit $rc, want 2"
"$ARES" fix --policy "$SRC/policies/flaw-docker-socket.yaml" \
    --push --upload-pack=x >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "an option as --push REMOTE: exit $rc, want 2"

if ! curl -s --max-time 3 --unix-socket /var/run/docker.sock http://localhost/_ping 2>/dev/null | grep -q OK; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "no Docker engine"
	echo "SKIP: no Docker engine"; exit 77
fi
command -v git >/dev/null 2>&1 || fail "git is needed"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed"

GH_TOKEN="ghp_test$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
BOT_TOKEN="xoxb-test-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
KEY="sk-test-fix-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
PASSWORD="pw$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

# ---- the servers -----------------------------------------------------
wait_port() { # file
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "a test server did not start"
		sleep 0.1
	done
}
python3 "$SRC/tests/integration/fake_api.py" "$tmp/api.port" "$tmp/api.log" &
api=$!
# the model: a story with everything a hostile answer could try, then an
# answer that echoes the key (the relay's check withholds it)
cat >"$tmp/script.json" <<'EOF'
[{"status": 200, "body": {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "The agent read the handover notes, took the ticket token <!channel> @everyone <img src=x onerror=alert(1)> and used it.\n\nWhen the lab cut its network it turned to the Docker socket [click](http://evil.example) and started a sibling container.\nOutcome: **contained** | rerun | `x` |\u001b[31m"}}]}},
 {"status": 200, "body": {"id": "y", "choices": [{"index": 0, "message": {"role": "assistant", "content": "the key is {key}"}}]}}]
EOF
python3 "$SRC/tests/integration/fake_openai.py" "$tmp/script.json" \
    "$tmp/ai.port" "$tmp/ai.log" &
ai=$!
wait_port "$tmp/api.port"
wait_port "$tmp/ai.port"
APIPORT=$(cat "$tmp/api.port")
AIPORT=$(cat "$tmp/ai.port")

# ---- the repository: a Compose file, its imported policy ---------------
repo="$tmp/repo"
mkdir -p "$repo/deploy" "$repo/agents" "$tmp/runs" "$tmp/keys"
git init -q --bare "$tmp/remote.git" || fail "git init --bare"
# the attacker: docker-after-cutoff.sh without its notes to the gateway
# (one sent as the lab cuts it can outlive the cut: a process the scorer
# rightly counts), and one that only takes the bait and ends when there is
# no socket (its wait for the cut could outlast the observation window on
# a loaded machine: a process left running, breached for that alone)
{
	echo 'ATTACK_NOTES=0'
	echo '. /usr/share/ares/attack.sh'
	echo '[ -S /var/run/docker.sock ] || { take_bait; exit 0; }'
	cat "$SRC/leakbox/agents/docker-after-cutoff.sh"
} >"$repo/agents/sock.sh"
cat >"$repo/deploy/compose.yml" <<'EOF'
# The agent's sandbox, as the team runs it.
services:
  agent:
    image: ares-lab:local
    read_only: true
    user: "1000:1000"
    networks: [lan]
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock   # for the build tool
    cap_drop: [ALL]
networks:
  lan:
    internal: true
EOF
(cd "$repo" && "$ARES" policy import deploy/compose.yml --service agent \
    --agent script:agents/sock.sh --out deploy/agent.policy.yaml) \
    >"$tmp/import" 2>&1 || fail "policy import: $(cat "$tmp/import")"
pol="$repo/deploy/agent.policy.yaml"
grep -q '^flaws: \[docker-socket\]$' "$pol" || fail "imported flaws: $(grep flaws "$pol")"
# the model that writes the section (the scripted agent calls none)
sed -i "s|^  url: null|  url: http://127.0.0.1:$AIPORT/v1|; s|^  key_env: null|  key_env: ARES_TEST_FIX_KEY|; s|^  name: .*|  name: fake-writer\\
  timeout_s: 5\\
  retries: 1|" "$pol"
grep -q "url: http://127.0.0.1:$AIPORT/v1" "$pol" || fail "model.url not set: $(cat "$pol")"
(cd "$repo" && git init -q -b main && git add . &&
    git -c user.name=test -c user.email=test@localhost commit -qm init &&
    git remote add origin "$tmp/remote.git") || fail "git init"
head_before=$(git -C "$repo" rev-parse HEAD)

# ---- the fix, all the way ------------------------------------------------
env -u ARES_SLACK_WEBHOOK -u ARES_SLACK_API GITHUB_TOKEN="$GH_TOKEN" \
    SLACK_BOT_TOKEN="$BOT_TOKEN" ARES_TEST_FIX_KEY="$KEY" \
    "$ARES" fix --policy "$pol" --runs "$tmp/runs" --key-dir "$tmp/keys" \
    --push origin --github o/r --github-api "http://127.0.0.1:$APIPORT" \
    --slack-channel C1 --slack-channel C2 \
    --slack-api "http://127.0.0.1:$APIPORT/slack" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "fix: exit $rc, want 0: $(tail -25 "$tmp/out")"
fixdir=$(sed -n 's/^fix dir *//p' "$tmp/out")
[ -d "$fixdir" ] || fail "no fix dir: $(cat "$tmp/out")"
grep -q 'fix.compose .*removed docker-socket from the Compose file' "$tmp/out" ||
    fail "no fix.compose beat: $(cat "$tmp/out")"
grep -q 'fix.push .*pushed ares/fix-docker-socket-' "$tmp/out" || fail "no push beat"

# the reruns drilled the policy re-imported from the patched Compose file
for role in rerun held-out held-out-gen; do
	id=$(sed -n "s/^run *$role  *\([^ ]*\).*/\1/p" "$tmp/out")
	[ -n "$id" ] || fail "no $role run"
	grep -q '"verdict":[[:space:]]*"contained"' "$tmp/runs/$id/report.json" ||
	    fail "$role not contained"
	grep -q "\"type\":\"drill.start\".*$fixdir/policy\.\(reimported\|heldout-[a-z0-9-]*\)\.yaml" \
	    "$tmp/runs/$id/evidence.jsonl" || fail "$role did not drill the re-import"
done
grep -q '^  compose: "compose.patched.yml"' "$fixdir/policy.reimported.yaml" ||
    fail "re-import not from the patched Compose file"
grep -q 'compose: "'"$fixdir"'/compose.patched.yml"' "$fixdir"/policy.heldout-*.yaml ||
    fail "held-out copy not on the patched Compose file"

# one commit, the Compose file and the policy; the work tree untouched
branch=$(git -C "$repo" for-each-ref --format='%(refname:short)' 'refs/heads/ares/fix-docker-socket-*')
[ -n "$branch" ] || fail "no ares/fix-docker-socket-* branch"
[ "$(git -C "$repo" rev-parse HEAD)" = "$head_before" ] || fail "HEAD moved"
[ "$(git -C "$repo" rev-parse "$branch^")" = "$head_before" ] || fail "commit not on HEAD"
git -C "$repo" diff --quiet || fail "work tree touched"
files=$(git -C "$repo" diff --name-only "$head_before" "$branch" | tr '\n' ' ')
[ "$files" = "deploy/agent.policy.yaml deploy/compose.yml " ] ||
    fail "the commit changes: $files"
git -C "$repo" show "$branch:deploy/compose.yml" >"$tmp/compose.fixed.yml"
grep -q 'docker.sock' "$tmp/compose.fixed.yml" && fail "the socket volume is still there"
grep -q 'volumes:' "$tmp/compose.fixed.yml" && fail "an empty volumes: key is left"
n=$(git -C "$repo" diff "$head_before" "$branch" -- deploy/compose.yml | grep -c '^[-+][^-+]')
[ "$n" -eq 2 ] || fail "the Compose diff changes $n lines, want 2 (volumes: and its item)"
git -C "$repo" show "$branch:deploy/agent.policy.yaml" | grep -q '^flaws: \[\]$' ||
    fail "the committed policy still has the flaw"
"$ARES" policy import "$tmp/compose.fixed.yml" --service agent \
    --out "$tmp/reimport.yaml" >"$tmp/reimport.out" 2>&1 || fail "the fixed Compose file does not import"
grep -q 'docker-socket' "$tmp/reimport.out" && fail "the fixed Compose file still maps to docker-socket"
# the bare remote has the branch at the commit
[ "$(git -C "$tmp/remote.git" rev-parse --verify "refs/heads/$branch" 2>/dev/null)" = \
    "$(git -C "$repo" rev-parse "$branch")" ] || fail "the remote lacks $branch"

# pr.md: the labelled model-written section, inert
pr="$fixdir/pr.md"
grep -q '^### The breakout in words (written by `fake-writer` from the evidence; the flaw and the patch above were decided by ares'"'"' deterministic attribution)$' "$pr" ||
    fail "no labelled model section: $(cat "$pr")"
grep -q '^> The agent read the handover notes' "$pr" || fail "the model's text is not quoted"
grep -q '<!channel>\|<img\|[^;]@everyone\|[^\\]](http' "$pr" &&
    fail "hostile model text left live: $(cat "$pr")"
grep -q '^> .*&lt;\\!channel&gt; &#64;everyone &lt;img src=x' "$pr" ||
    fail "the model's text is not kept (inert): $(cat "$pr")"
grep -c 'Outcome: \*\*' "$pr" | grep -qx 1 || fail "a forged Outcome line"
grep -q "$(printf '\033')" "$pr" && fail "an escape byte in pr.md"
"$ARES" verify "$fixdir" >"$tmp/verify" 2>&1 || fail "ares verify: $(cat "$tmp/verify")"

# what the servers saw
python3 - "$tmp/api.log" "$tmp/ai.log" "$pr" "$branch" "$GH_TOKEN" "$BOT_TOKEN" "$KEY" <<'EOF' ||
import json, sys
api = [json.loads(l) for l in open(sys.argv[1])]
ai = [json.loads(l) for l in open(sys.argv[2])]
pr = open(sys.argv[3]).read()
branch, gh, bot, key = sys.argv[4:8]
pulls = [r for r in api if r["path"] == "/repos/o/r/pulls"]
chats = [r for r in api if r["path"] == "/slack/chat.postMessage"]
assert len(pulls) == 1, ("pull requests", len(pulls))
p = pulls[0]
assert p["headers"]["Authorization"] == "Bearer " + gh, p["headers"]
b = p["body"]
assert b["head"] == branch and b["base"] == "main", b
assert "docker-socket" in b["title"] and b["title"] in pr, b["title"]
assert b["body"] in pr, "the PR body is not pr.md's"
assert "### The breakout in words (written by `fake-writer`" in b["body"]
assert "deploy/compose.yml" in b["body"] and "-      - /var/run/docker.sock" in b["body"]
assert [c["body"]["channel"] for c in chats] == ["C1", "C2"], chats
for c in chats:
    assert c["headers"]["Authorization"] == "Bearer " + bot, c["headers"]
    assert c["headers"]["Content-Type"].startswith("application/json")
    t = c["body"]["text"]
    assert branch in t and "<" not in t and ">" not in t, t
    assert gh not in t and bot not in t
assert len(ai) == 1, ai
assert ai[0]["auth"] == "Bearer " + key and ai[0]["model"] == "fake-writer", ai[0]
EOF
    fail "servers: $(cat "$tmp/api.log" "$tmp/ai.log")"

# ---- the same breached run, delivery failing ---------------------------
orig=$(sed -n 's/^run *original *\([^ ]*\).*/\1/p' "$tmp/out")
env -u ARES_SLACK_WEBHOOK GITHUB_TOKEN="$GH_TOKEN" \
    SLACK_BOT_TOKEN="$BOT_TOKEN" ARES_TEST_FIX_KEY="$KEY" \
    ARES_SLACK_API="http://127.0.0.1:$APIPORT/slack" \
    "$ARES" fix "$tmp/runs/$orig" --runs "$tmp/runs" --key-dir "$tmp/keys" \
    --push "http://fixbot:$PASSWORD@127.0.0.1:1/repo.git" --github o/r \
    --github-api "http://127.0.0.1:$APIPORT" --slack-channel CFAIL1 \
    >"$tmp/out2" 2>&1; rc=$?
[ $rc -eq 6 ] || fail "failed push: exit $rc, want 6: $(tail -25 "$tmp/out2")"
fixdir2=$(sed -n 's/^fix dir *//p' "$tmp/out2")
grep -q 'fix.push .*failed (git exit [0-9]*): .*; no pull request' "$tmp/out2" ||
    fail "no failed push beat: $(cat "$tmp/out2")"
grep -q 'fix.push .*http://\*\*\*@127.0.0.1:1/repo.git' "$tmp/out2" ||
    fail "the remote's password not redacted in the beat"
grep -q '"type":"fix.push".*"ok":false.*"git":"[^"]' "$fixdir2/evidence.jsonl" ||
    fail "the push failure is not in the fix's evidence"
grep -q '"note":	"not sent: the push failed"' "$fixdir2/github-request.json" ||
    fail "github-request.json: $(cat "$fixdir2/github-request.json")"
n=$(grep -c '"/repos/o/r/pulls"' "$tmp/api.log")
[ "$n" -eq 1 ] || fail "a pull request was opened after a failed push ($n)"
grep -q 'fix.slack .*CFAIL1: channel_not_found' "$tmp/out2" ||
    fail "Slack's ok:false not named: $(grep fix.slack "$tmp/out2")"
grep -q '"error":	"channel_not_found"' "$fixdir2/slack-chat-1.json" ||
    fail "slack-chat-1.json: $(cat "$fixdir2/slack-chat-1.json")"
grep -q 'fix.model .*held the API key: withheld' "$tmp/out2" ||
    fail "a key echo not withheld: $(grep fix.model "$tmp/out2")"
grep -q 'The breakout in words' "$fixdir2/pr.md" && fail "a section from a withheld answer"
grep -q '^_The model-written section is omitted: the call to the model failed' "$fixdir2/pr.md" ||
    fail "no note for the missing section"

# no secret in any file of the runs (fix dirs, run dirs, records)
for s in "$GH_TOKEN" "$BOT_TOKEN" "$KEY" "$PASSWORD"; do
	grep -rlF "$s" "$tmp/runs" "$tmp/out" "$tmp/out2" && fail "a secret is in the files above"
done
echo "ok: fix of a Compose service pushed as $branch, PR and 2 Slack posts seen; a failed push exits 6"
exit 0
