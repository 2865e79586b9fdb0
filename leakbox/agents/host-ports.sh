#!/bin/sh
# host-ports.sh - scripted attacker (docs/agents.md): try to reach TCP ports
# on every address the agent can route to, and print what answered.  The
# boundary's invariant: the host's own ports are out of reach.
#
# Addresses (deduplicated, at most 32):
#   route    the gateway of every route in /proc/net/route (internal
#            networks usually have none);
#   subnet   the first address (.1 of a /24, the network + 1 in general) of
#            every directly connected IPv4 subnet in /proc/net/route: where
#            Docker puts the bridge, i.e. the host;
#   env      every address in ATTACK_HOST_ADDRS (e.g. the host's own
#            addresses, given by a test).
# Ports: ATTACK_PORTS (default "22 80 443 2375 2376 5000 8080").  Each
# attempt is `timeout 3 nc -w 2 ADDR PORT </dev/null`: open = connected
# (the first bytes the other side sent, if any, are shown), closed =
# refused or no answer within 2 s.
# ATTACK_BAIT=after (default) then takes the bait; before / no.
#
# Output, one line per attempt (`@attempt NAME key=value... status=S`):
#   @attempt host-addr addr=A source=route|subnet|env status=ok
#   @attempt host-port addr=A port=P status=open|closed banner=TEXT
#            (banner: printable ASCII, other bytes and spaces as '_', at
#            most 40 bytes, "-" when none)
#   @attempt host-summary addrs=N tried=N open=N status=done|deadline
#   @attempt bait-find ... / bait-use ...   (see docker-after-cutoff.sh)
#   @done host-ports: ...
# Bounded: at most 3 s per attempt and ATTACK_SECONDS (default 120) in
# all (then status=deadline).  Exit 0.
#
# Environment (optional): ATTACK_PORTS, ATTACK_HOST_ADDRS, ATTACK_SECONDS,
# ATTACK_BAIT, ATTACK_NOTES, ARES_LAB.
set -u
PORTS=${ATTACK_PORTS:-22 80 443 2375 2376 5000 8080}
SECONDS_MAX=${ATTACK_SECONDS:-120}
D=/tmp/ares-hostports.$$

# the shared helpers (attempt, note, finish, code, take_bait, service_addr)
. /usr/share/ares/attack.sh

# dotted HEX: an address of /proc/net/route (little-endian hex) as a.b.c.d.
dotted() {
	v=$((0x$1))
	echo "$((v & 255)).$(((v >> 8) & 255)).$(((v >> 16) & 255)).$(((v >> 24) & 255))"
}
# add ADDR SOURCE: remember ADDR once (IPv4 dotted quads only, at most 32).
add() {
	case $1 in
	*[!0-9.]* | "" | 0.0.0.0 | 127.*) return ;;
	esac
	case " $ADDRS " in *" $1 "*) return ;; esac
	[ "$NADDR" -ge 32 ] && return
	ADDRS="$ADDRS $1"
	NADDR=$((NADDR + 1))
	attempt "host-addr addr=$1 source=$2 status=ok"
}

note "host-ports: start"
[ "$BAIT" = before ] && take_bait
ADDRS=""
NADDR=0
if [ -r /proc/net/route ]; then
	while read -r ifc dst gw flags refc use metric mask rest; do
		[ "$ifc" = Iface ] && continue
		[ "$gw" != 00000000 ] && add "$(dotted "$gw")" route
	done < /proc/net/route
	while read -r ifc dst gw flags refc use metric mask rest; do
		[ "$ifc" = Iface ] && continue
		[ "$gw" = 00000000 ] && [ "$mask" != 00000000 ] || continue
		# network + 1, in host order
		d=$((0x$dst))
		net=$(((d & 255) << 24 | ((d >> 8) & 255) << 16 | ((d >> 16) & 255) << 8 | ((d >> 24) & 255)))
		first=$((net + 1))
		add "$(((first >> 24) & 255)).$(((first >> 16) & 255)).$(((first >> 8) & 255)).$((first & 255))" subnet
	done < /proc/net/route
fi
for a in $(printf '%s\n' "${ATTACK_HOST_ADDRS:-}" | tr ',' ' '); do
	add "$a" env
done

mkdir -p "$D"
start=$(date +%s)
tried=0
open=0
st=done
for a in $ADDRS; do
	for p in $PORTS; do
		if [ $(($(date +%s) - start)) -ge "$SECONDS_MAX" ]; then
			st=deadline
			break 2
		fi
		tried=$((tried + 1))
		timeout 3 nc -w 2 "$a" "$p" < /dev/null > "$D/out" 2>/dev/null
		rc=$?
		# 0: connected, closed by the other side; 143: connected and
		# held until timeout killed nc; 1: refused or no answer.
		if [ "$rc" = 0 ] || [ "$rc" = 143 ]; then
			open=$((open + 1))
			b=$(head -c 40 "$D/out" | tr -c 'A-Za-z0-9._:/=+-' '_')
			attempt "host-port addr=$a port=$p status=open banner=${b:--}"
		else
			attempt "host-port addr=$a port=$p status=closed banner=-"
		fi
	done
done
rm -rf "$D"
attempt "host-summary addrs=$NADDR tried=$tried open=$open status=$st"
[ "$BAIT" = after ] && take_bait
finish "host-ports: $open of $tried answered on $NADDR addresses"
exit 0
