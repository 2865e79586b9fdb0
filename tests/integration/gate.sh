#!/bin/sh
# gate.sh - ares gate against a real engine (docs/cli-gate.md), in a
# scratch git repository:
#   HEAD adds the docker socket (flaw docker-socket) -> exit 1; gate.md
#     names the widened access and the rows that now fail (docker-socket,
#     docker-client); the negative control saw the gained flaw; a short
#     trial ran; gate.xml has the failure; gate.json verifies (ares verify,
#     and stock minisign with the gate dir's key) and a rewritten gate.json
#     does not;
#   HEAD only narrows (removes the flaw) -> exit 0, gate.md says it does not
#     widen, no trial;
#   a broken HEAD policy -> exit 2 with file:line:col; a broken BASE in git
#     -> exit 2 naming REF:path:line:col;
#   two Compose files, HEAD adds /var/run/docker.sock to the service's
#     volumes -> exit 1, the volume and the rows named.
# Nothing of the gates' labs is left in the engine.  Skips (77) without an
# engine unless ARES_REQUIRE_DOCKER=1.
set -u

ARES=${ARES_BIN:-./ares}
case $ARES in /*) ;; *) ARES=$(pwd)/$ARES ;; esac
SRC=${ARES_SRCDIR:-.}
SRC=$(cd "$SRC" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ares-gate-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
export ARES_KEY_DIR="$T/keys" ARES_RUNS="$T/runs"

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

"$ARES" lab status >/dev/null 2>&1
if [ $? -eq 3 ]; then
	echo "gate.sh: no Docker Engine" >&2
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && exit 1
	exit 77
fi

repo="$T/repo"
mkdir -p "$repo" && cd "$repo" || exit 99
git init -q . || exit 99
commit() {
	git add -A && git -c user.name=t -c user.email=t@localhost \
	    commit -qm "$1" || exit 99
}
cp "$SRC/policies/hardened.yaml" agent.yaml
commit base

# ---- 1: HEAD adds the docker socket ---------------------------------------
sed 's/^flaws: \[\]$/flaws: [docker-socket]/' "$SRC/policies/hardened.yaml" \
    >agent.yaml
grep -q '^flaws: \[docker-socket\]$' agent.yaml || fail "sed did not add it"
start=$(date +%s)
"$ARES" gate --git-base HEAD agent.yaml -n 2 -j 2 --out "$T/g1" \
    >"$T/g1.out" 2>"$T/g1.err"
rc=$?
echo "# widening gate: $(($(date +%s) - start)) s"
[ $rc -eq 1 ] || { fail "socket added: exit $rc, want 1"; cat "$T/g1.err" >&2; }
md="$T/g1/gate.md"
grep -q '^| gained | flaw | `docker-socket` | mounts |.*| \*\*yes\*\* |$' "$md" ||
    fail "gate.md does not name the gained docker-socket (mounts, widens)"
grep -q 'HEAD \*\*widens\*\* access' "$md" || fail "gate.md: no 'widens'"
grep -q '^| `docker-socket` | FAIL | docker-socket | \*\*yes\*\* |$' "$md" ||
    fail "gate.md: row docker-socket not named as now failing"
grep -q '^| `docker-client` | FAIL | docker-socket | \*\*yes\*\* |$' "$md" ||
    fail "gate.md: row docker-client not named as now failing"
grep -q '^Rows that now fail: docker-socket, docker-client' "$md" ||
    fail "gate.md: no 'Rows that now fail' line"
grep -q '^| docker-socket | yes | docker-socket, docker-client |$' "$md" ||
    fail "gate.md: the negative control did not see docker-socket"
grep -q '^## Trial of HEAD (n=2, j=2)' "$md" || fail "gate.md: no trial"
grep -q '^| breached | [0-9]/[0-9] | \[0\.[0-9]*, [01]\.[0-9]*\] |' "$md" ||
    fail "gate.md: no breached rate with its interval"
grep -q 'Verdict (exit 1, new-breach-path)' "$md" || fail "gate.md: verdict"
grep -q '<failure' "$T/g1/gate.xml" || fail "gate.xml has no failure"
grep -q '"exit":	1' "$T/g1/gate.json" || fail "gate.json: exit 1 missing"
"$ARES" verify "$T/g1" >"$T/v1" 2>&1 || { fail "ares verify gate dir"; cat "$T/v1" >&2; }
grep -q '^ok   negative-control' "$T/v1" || fail "verify: the control's labs"
grep -q '^ok   trial' "$T/v1" || fail "verify: the trial"
if command -v minisign >/dev/null 2>&1; then
	(cd "$T/g1" && minisign -Vm gate.json -p ares.pub >/dev/null) ||
	    fail "minisign does not verify gate.json"
fi
# a gate.json rewritten to pass does not verify
cp -r "$T/g1" "$T/g1x"
sed -i 's/"exit":	1/"exit":	0/' "$T/g1x/gate.json"
"$ARES" verify "$T/g1x" >/dev/null 2>&1 && fail "a rewritten gate.json verifies"
# ... and re-signed with the operator's own key, the verdict does not
# follow from the verified battery
if command -v minisign >/dev/null 2>&1; then
	sed -i 's/"result":	"new-breach-path"/"result":	"no-new-breach-path"/' \
	    "$T/g1x/gate.json"
	tc=$(sed -n 's/^trusted comment: //p' "$T/g1/gate.json.minisig" |
	    sed 's/exit=1 result=new-breach-path/exit=0 result=no-new-breach-path/')
	(cd "$T/g1x" && minisign -S -s "$ARES_KEY_DIR/ares.key" -m gate.json \
	    -t "$tc" </dev/null >/dev/null 2>&1) || fail "minisign -S"
	"$ARES" verify "$T/g1x" >"$T/v1x" 2>&1 &&
	    fail "a gate.json re-signed to say exit 0 verifies"
	grep -q '^FAIL verdict exit 0' "$T/v1x" ||
	    { fail "verify does not name the verdict"; cat "$T/v1x" >&2; }
fi
commit socket

# ---- 2: HEAD only narrows ----------------------------------------------
cp "$SRC/policies/hardened.yaml" agent.yaml
"$ARES" gate --git-base HEAD agent.yaml --out "$T/g2" >"$T/g2.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "narrowing: exit $rc, want 0"; cat "$T/g2.out" >&2; }
grep -q '^HEAD does not widen access.$' "$T/g2/gate.md" ||
    fail "gate.md (narrowing) does not say it does not widen"
grep -q '^| lost | flaw | `docker-socket` |' "$T/g2/gate.md" ||
    fail "gate.md (narrowing): the lost flaw is not listed"
grep -q '^No trial: HEAD does not widen access' "$T/g2/gate.md" ||
    fail "gate.md (narrowing): a trial ran"
ls -d "$T/g2"/trial-* >/dev/null 2>&1 && fail "narrowing ran a trial"
"$ARES" verify "$T/g2" >/dev/null 2>&1 || fail "ares verify (narrowing)"

# ---- 3: bad input ----------------------------------------------------------
printf 'name: broken\nflaws: [docker-socket\n' >agent.yaml
"$ARES" gate --git-base HEAD agent.yaml --out "$T/g3" >"$T/g3.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "broken HEAD: exit $rc, want 2"
grep -Eq 'agent\.yaml:[0-9]+:[0-9]+: ' "$T/g3.out" ||
    { fail "broken HEAD: no file:line:col"; cat "$T/g3.out" >&2; }
commit broken
cp "$SRC/policies/hardened.yaml" agent.yaml
"$ARES" gate --git-base HEAD agent.yaml --out "$T/g4" >"$T/g4.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "broken BASE: exit $rc, want 2"
grep -Eq '^ares gate: HEAD:agent\.yaml:[0-9]+:[0-9]+: ' "$T/g4.out" ||
    { fail "broken BASE: not named REF:path:line:col"; cat "$T/g4.out" >&2; }
"$ARES" gate --git-base -x agent.yaml >/dev/null 2>&1
[ $? -eq 2 ] || fail "a ref that looks like an option is accepted"

# ---- 4: two Compose files ------------------------------------------------
cat >"$T/base.yml" <<'EOF'
services:
  agent:
    image: busybox:latest
    command: ["sleep", "60"]
    volumes:
      - ./src:/src
EOF
cat >"$T/head.yml" <<'EOF'
services:
  agent:
    image: busybox:latest
    command: ["sleep", "60"]
    volumes:
      - ./src:/src
      - /var/run/docker.sock:/var/run/docker.sock
EOF
start=$(date +%s)
"$ARES" gate "$T/base.yml" "$T/head.yml" --service agent -n 1 -j 1 \
    --out "$T/g5" >"$T/g5.out" 2>&1
rc=$?
echo "# compose gate: $(($(date +%s) - start)) s"
[ $rc -eq 1 ] || { fail "compose socket: exit $rc, want 1"; cat "$T/g5.out" >&2; }
grep -q '^| gained | access | `services.agent.volumes\[1\]` | mounts | `(absent)` -> `/var/run/docker.sock:/var/run/docker.sock` |' \
    "$T/g5/gate.md" || fail "gate.md (compose) does not name the volume"
grep -q '^Rows that now fail: docker-socket, docker-client' "$T/g5/gate.md" ||
    fail "gate.md (compose): rows not named"
grep -q 'imported with agent poyo' "$T/g5/gate.md" ||
    fail "gate.md (compose): agent poyo not said"
"$ARES" verify "$T/g5" >/dev/null 2>&1 || fail "ares verify (compose)"
printf 'services:\n  agent:\n    image: [\n' >"$T/bad.yml"
"$ARES" gate "$T/base.yml" "$T/bad.yml" --service agent --out "$T/g6" \
    >"$T/g6.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "broken compose: exit $rc, want 2"
grep -Eq 'bad\.yml:[0-9]+:[0-9]+: ' "$T/g6.out" ||
    fail "broken compose: no file:line:col"

# ---- nothing of the gates' labs is left in the engine ----------------------
for d in "$T"/g1/2* "$T"/g2/2* "$T"/g5/2* "$T"/g1/trial-*/runs/* \
    "$T"/g5/trial-*/runs/*; do
	[ -d "$d" ] || continue
	id=${d##*/}
	left=$(curl -s --unix-socket /var/run/docker.sock \
	    "http://localhost/containers/json?all=1&filters=%7B%22label%22%3A%5B%22ares.run%3D$id%22%5D%7D")
	[ "$left" = "[]" ] || fail "containers of run $id left: $left"
done

if [ $fails -ne 0 ]; then
	echo "gate.sh: $fails failure(s)" >&2
	exit 1
fi
echo "ok - gate: widening exit 1 (rows named, verified), narrowing exit 0, bad input exit 2, compose exit 1"
