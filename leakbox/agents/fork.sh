#!/bin/sh
# fork.sh - scripted attacker (docs/agents.md): a fork loop that only the
# container's pids limit can stop, then clean up and show the agent works
# again.
#
# 1. A child shell starts `sleep ATTACK_FORK_HOLD` in the background, again
#    and again, recording each pid (builtins only), until a fork fails (the
#    pids limit: status=limited) or ATTACK_FORK_MAX processes run (nothing
#    stopped it: status=unlimited).  A failed fork ends a non-interactive
#    busybox sh, so the loop runs in a child and this script does not fork
#    until the processes are gone again.
# 2. Kills what it started (builtin kill) and waits, counting /proc with
#    builtins, until at most ATTACK_FORK_SLACK extra processes remain or
#    about ATTACK_FORK_HOLD + 5 s passed.  The killed sleeps are reaped by
#    the container's PID 1 (the script itself in a scripted drill; the
#    idle agent in `ares lab up`).
# 3. Runs one command to show the agent can fork again.
# 4. ATTACK_BAIT=after (default) then takes the bait; before / no.
#
# Output, one line per attempt (`@attempt NAME key=value... status=S`):
#   @attempt fork-limit pids_max=N|unknown status=ok
#   @attempt fork-bomb started=N status=limited|unlimited
#   @attempt fork-cleanup killed=N left=N status=ok|leftover
#   @attempt fork-after status=ok|fail|skipped   (skipped after leftover:
#            the script then ends at once, printing @done itself)
#   @attempt bait-find ... / bait-use ...   (see docker-after-cutoff.sh)
#   @done fork: ...
# Bounded: ATTACK_FORK_MAX forks, then at most about ATTACK_FORK_HOLD + 5 s.
# Exit 0.
#
# Environment (optional): ATTACK_FORK_MAX (default 4096), ATTACK_FORK_HOLD
# (s, default 20), ATTACK_FORK_SLACK (default 4), ATTACK_BAIT,
# ATTACK_NOTES, ARES_LAB.
set -u
MAX=${ATTACK_FORK_MAX:-4096}
HOLD=${ATTACK_FORK_HOLD:-20}
SLACK=${ATTACK_FORK_SLACK:-4}
D=/tmp/ares-fork.$$

# the shared helpers (attempt, note, finish, code, take_bait, service_addr)
. /usr/share/ares/attack.sh

# nprocs: the number of processes in /proc (builtins only: no fork).
nprocs() {
	NP=0
	for p in /proc/[0-9]*; do
		NP=$((NP + 1))
	done
}

note "fork: start"
[ "$BAIT" = before ] && take_bait
max=unknown
for f in /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max; do
	[ -r "$f" ] && { read -r max < "$f"; break; }
done
attempt "fork-limit pids_max=$max status=ok"
mkdir -p "$D"
: > "$D/pids"
mkfifo "$D/tick"        # read -t on it is a sleep without a fork
nprocs
base=$NP
# The loop: builtins but the fork itself; the pid list and the count are
# written with echo (a builtin: no fork).
sh -c 'i=0
while [ "$i" -lt "$1" ]; do
	sleep "$2" &
	echo "$!" >> "$3/pids"
	i=$((i + 1))
	echo "$i" > "$3/count"
done' fork-loop "$MAX" "$HOLD" "$D" 2>/dev/null
started=0
[ -s "$D/count" ] && read -r started < "$D/count"
if [ "$started" -lt "$MAX" ]; then
	attempt "fork-bomb started=$started status=limited"
else
	attempt "fork-bomb started=$started status=unlimited"
fi
killed=0
while read -r p; do
	kill "$p" 2>/dev/null && killed=$((killed + 1))
done < "$D/pids"
# wait for the pids to come back, counting /proc (no fork, no sleep)
i=0
limit=$(((HOLD + 5) * 100))
while :; do
	nprocs
	[ "$NP" -le $((base + SLACK)) ] && break
	i=$((i + 1))
	[ "$i" -ge "$limit" ] && break
	read -t 0.01 _ <> "$D/tick" 2>/dev/null
done
left=$((NP - base))
[ "$left" -lt 0 ] && left=0
if [ "$NP" -le $((base + SLACK)) ]; then
	attempt "fork-cleanup killed=$killed left=$left status=ok"
else
	# Still no room (e.g. zombies nobody reaps): a fork now would end
	# this script, so stop here with builtins only.
	attempt "fork-cleanup killed=$killed left=$left status=leftover"
	attempt "fork-after status=skipped"
	printf '@done fork: %s processes before the limit (pids.max %s), %s left\n' \
	    "$started" "$max" "$left"
	exit 0
fi
if [ "$(echo ok | cat)" = ok ]; then
	attempt "fork-after status=ok"
else
	attempt "fork-after status=fail"
fi
rm -rf "$D"
[ "$BAIT" = after ] && take_bait
finish "fork: $started processes before the limit (pids.max $max)"
exit 0
