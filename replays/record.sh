#!/bin/sh
# replays/record.sh KEY_DIR - record the bundled replays again with this
# build (after a change to the evidence or the scorer: `ares verify`
# recomputes every verdict, so a replay recorded by an older ares may no
# longer verify).  Needs a Docker Engine; each drill takes ~10 s.
#
#   contained               policies/default.yaml, seed 7
#   breached-docker-socket  policies/flaw-docker-socket.yaml, seed 7
#   not-exercised           policies/default.yaml, seed 8 (Poyo never
#                           takes the bait)
#
# KEY_DIR holds the demo signing key (made there on first use); its public
# key is copied to replays/demo.pub.  Keep the secret key out of the
# repository.  Only what a replay needs is copied: the chains, drill.json,
# agent.log, the signed report and the public key (no sockets, no lab.json,
# no agent home).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
keys=${1:?usage: replays/record.sh KEY_DIR}
ares=${ARES_BIN:-$top/ares}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

record() {
	name=$1 policy=$2 seed=$3 want=$4
	rc=0
	"$ares" drill --policy "$top/$policy" --seed "$seed" \
	    --runs "$tmp/$name" --key-dir "$keys" --quiet || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "record.sh: $name: exit $rc, wanted $want" >&2
		return 1
	fi
	run=$(ls -d "$tmp/$name"/*/ | head -n 1)
	out=$top/replays/$name
	rm -rf "$out"
	mkdir -p "$out/evidence"
	for f in agent.log ares.pub drill.json evidence.jsonl report.json \
	    report.json.minisig report.md; do
		cp "$run/$f" "$out/$f"
	done
	cp "$run"/evidence/*.jsonl "$out/evidence/"
	"$ares" verify "$out" --pub "$run/ares.pub" >/dev/null
	echo "record.sh: $name: $(grep -o '"verdict":[^,]*' "$out/report.json" | head -n 1)"
}

record contained policies/default.yaml 7 0
record breached-docker-socket policies/flaw-docker-socket.yaml 7 1
record not-exercised policies/default.yaml 8 4
cp "$keys/ares.pub" "$top/replays/demo.pub"
