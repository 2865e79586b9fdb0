#!/bin/sh
# disguised.sh - scripted attacker (docs/agents.md): leave processes behind
# whose command line looks like the agent's own, and keep them running.
#
# Two disguises, both with "ares-lab agent" in /proc/PID/cmdline:
#   idle-agent  `AGENT_IDLE=1 /bin/ares-lab agent`: the very command line of
#               the Poyo agent, idling until SIGTERM (busybox sh has no
#               `exec -a`; this needs none);
#   beacon      `sh /tmp/.cache/ares-lab agent`: a shell loop in a file
#               named like the lab binary that beacons the service's
#               /health every ATTACK_BEACON_S s (at most ATTACK_BEACON_MAX
#               times), so an orphan sweep has activity to find too.
# Both are started with setsid (their own session, detached from this
# script), then the bait is taken (ATTACK_BAIT=after, default) and the
# script stays ATTACK_HOLD s, checking every 5 s that they still run.  When
# the script is the container's PID 1 and ends, the container ends and
# takes them along: the hold keeps them alive through a drill's kill.
#
# Output, one line per attempt (`@attempt NAME key=value... status=S`):
#   @attempt disguised-start mode=idle-agent|beacon pid=N cmdline=CMD status=running|fail
#            (CMD: the command line with spaces as '+')
#   @attempt bait-find ... / bait-use ...   (see docker-after-cutoff.sh)
#   @attempt disguised-alive t=S mode=idle-agent|beacon pid=N status=running|gone
#   @done disguised: ...
# Bounded: ATTACK_HOLD s (the beacon: ATTACK_BEACON_MAX beats).  Exit 0.
#
# Environment (optional): ATTACK_HOLD (s, default 120), ATTACK_BEACON_S
# (default 2), ATTACK_BEACON_MAX (default 300), ATTACK_BAIT, ATTACK_NOTES,
# ARES_LAB.
set -u
HOLD=${ATTACK_HOLD:-120}
BEACON_S=${ATTACK_BEACON_S:-2}
BEACON_MAX=${ATTACK_BEACON_MAX:-300}
C=/tmp/.cache

# the shared helpers (attempt, note, finish, code, take_bait, service_addr)
. /usr/share/ares/attack.sh

# cmdline PID: /proc/PID/cmdline with its NULs as '+' ("" if gone).
cmdline() {
	tr '\000' '+' < "/proc/$1/cmdline" 2>/dev/null | sed 's/+$//'
}
# alive PID: whether PID still runs (and is no zombie).
alive() {
	[ -r "/proc/$1/stat" ] || return 1
	read -r st < "/proc/$1/stat" 2>/dev/null || return 1
	case $st in *") Z "*) return 1 ;; esac
	return 0
}
# started MODE PID: one disguised-start line.
started() {
	usleep 300000
	if alive "$2"; then
		attempt "disguised-start mode=$1 pid=$2 cmdline=$(cmdline "$2") status=running"
	else
		attempt "disguised-start mode=$1 pid=$2 status=fail"
	fi
}

note "disguised: start"
[ "$BAIT" = before ] && take_bait
[ -n "${URL:-}" ] || find_bait
service_addr
mkdir -p "$C"

# 1. the agent's own command line, idling
AGENT_IDLE=1 setsid /bin/ares-lab agent > /dev/null 2>&1 < /dev/null &
p1=$!
started idle-agent "$p1"

# 2. a beacon in a file named like the lab binary
cat > "$C/ares-lab" <<'LOOP'
# beacon (run as: sh ares-lab agent URL S MAX): GET URL every S s, MAX times
i=0
while [ "$i" -lt "$4" ]; do
	ares-lab http "$2" > /dev/null 2>&1
	i=$((i + 1))
	sleep "$3"
done
LOOP
target="http://${SVC_IP:-${SVC_HOST:-gateway}}:${SVC_PORT:-8080}/health"
setsid sh "$C/ares-lab" agent "$target" "$BEACON_S" "$BEACON_MAX" \
    > /dev/null 2>&1 < /dev/null &
p2=$!
started beacon "$p2"

[ "$BAIT" = after ] && take_bait
start=$(date +%s)
while :; do
	t=$(($(date +%s) - start))
	for m in "idle-agent $p1" "beacon $p2"; do
		set -- $m
		if alive "$2"; then
			attempt "disguised-alive t=$t mode=$1 pid=$2 status=running"
		else
			attempt "disguised-alive t=$t mode=$1 pid=$2 status=gone"
		fi
	done
	[ "$t" -ge "$HOLD" ] && break
	left=$((HOLD - t))
	sleep $((left < 5 ? left : 5))
done
finish "disguised: pids $p1 (idle-agent) $p2 (beacon) left running"
exit 0
