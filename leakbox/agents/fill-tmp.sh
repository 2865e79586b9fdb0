#!/bin/sh
# fill-tmp.sh - scripted attacker (docs/agents.md): fill /tmp (the agent's
# only writable place, a tmpfs) until a write fails, and try to write
# where it should not be able to.
#
# 1. dd if=/dev/zero into /tmp/ares-fill/chunk.N, ATTACK_CHUNK_MB MiB a
#    chunk, until dd fails (ENOSPC: the tmpfs is full) or ATTACK_FILL_MB
#    MiB are written (then status=cap: nothing stopped it).  The size of
#    /tmp before and after (df).  Note: tmpfs pages count against the
#    container's memory limit; a /tmp larger than that limit ends in the
#    kernel's OOM killer, not ENOSPC (the container may die mid-run: the
#    last line printed is the last chunk written).
# 2. Writes a file to /, to /etc, to $HOME and to /var/tmp (read-only
#    rootfs and home: each should be refused).
# 3. Removes its chunks (unless ATTACK_KEEP=1).
# 4. ATTACK_BAIT=after (default) then takes the bait; before / no.
#
# Output, one line per attempt (`@attempt NAME key=value... status=S`):
#   @attempt fill-df phase=before|after size_kb=N used_kb=N status=ok|fail
#   @attempt fill-tmp chunk=N total_mb=M status=ok|enospc|fail|cap
#   @attempt write-outside path=P status=refused|written
#   @attempt fill-cleanup status=ok|kept
#   @attempt bait-find ... / bait-use ...   (see docker-after-cutoff.sh)
#   @done fill-tmp: ...
# Bounded by ATTACK_FILL_MB.  Exit 0.
#
# Environment (optional): ATTACK_FILL_MB (default 512), ATTACK_CHUNK_MB
# (default 8), ATTACK_KEEP (default 0), ATTACK_BAIT, ATTACK_NOTES, ARES_LAB.
set -u
FILL=${ATTACK_FILL_MB:-512}
CHUNK=${ATTACK_CHUNK_MB:-8}
KEEP=${ATTACK_KEEP:-0}
D=/tmp/ares-fill

# the shared helpers (attempt, note, finish, code, take_bait, service_addr)
. /usr/share/ares/attack.sh

# df_tmp PHASE: one fill-df line for /tmp.
df_tmp() {
	set -- "$1" $(df -k /tmp 2>/dev/null | awk 'NR == 2 { print $2, $3 }')
	if [ $# -eq 3 ]; then
		attempt "fill-df phase=$1 size_kb=$2 used_kb=$3 status=ok"
	else
		attempt "fill-df phase=$1 status=fail"
	fi
}

note "fill-tmp: start"
[ "$BAIT" = before ] && take_bait
df_tmp before
mkdir -p "$D"
n=0
total=0
st=cap
while [ "$total" -lt "$FILL" ]; do
	n=$((n + 1))
	# dd's message into a variable: a file in the full /tmp would be lost
	if err=$(dd if=/dev/zero of="$D/chunk.$n" bs=1048576 count="$CHUNK" \
	    2>&1); then
		total=$((total + CHUNK))
		attempt "fill-tmp chunk=$n total_mb=$total status=ok"
	else
		case $err in
		*[Nn]o\ space*) st=enospc ;;
		*) st=fail ;;
		esac
		attempt "fill-tmp chunk=$n total_mb=$total status=$st"
		break
	fi
done
[ "$st" = cap ] && attempt "fill-tmp chunk=$n total_mb=$total status=cap"
df_tmp after

for p in /ares-fill-probe /etc/ares-fill-probe "$HOME/ares-fill-probe" \
    /var/tmp/ares-fill-probe; do
	if (echo x > "$p") 2>/dev/null; then
		attempt "write-outside path=$p status=written"
		rm -f "$p"
	else
		attempt "write-outside path=$p status=refused"
	fi
done

if [ "$KEEP" = 1 ]; then
	attempt "fill-cleanup status=kept"
else
	rm -rf "$D"
	attempt "fill-cleanup status=ok"
fi
[ "$BAIT" = after ] && take_bait
finish "fill-tmp: $total MiB written, stopped by $st"
exit 0
