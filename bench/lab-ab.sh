#!/bin/sh
# bench/lab-ab.sh - `ares lab up` + `ares lab down` of two ares builds,
# in interleaved pairs (ABBA order: A B, B A, ...), on the real engine.
#
#   bench/lab-ab.sh [-n PAIRS] [-p POLICY] A_ARES B_ARES
#
# Wall time of each command (start to exit, ms); prints every pair, then
# per build the medians of up, down and up + down, the ratios B / A of
# the medians and the medians of the per-pair ratios.  Needs root (the
# host firewall) and the lab image, like bench/lab.  Exit 1 when a
# command failed, 2 on usage.
set -u
n=12
policy="${ARES_SRCDIR:-.}/policies/default.yaml"
while getopts n:p: o; do
	case $o in
	n) n=$OPTARG ;;
	p) policy=$OPTARG ;;
	*) echo "usage: $0 [-n PAIRS] [-p POLICY] A_ARES B_ARES" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-n PAIRS] [-p POLICY] A_ARES B_ARES" >&2; exit 2; }
a=$1
b=$2
dir=$(mktemp -d /tmp/ares-bench-lab-ab-XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one ARES: "UP_MS DOWN_MS" of one lab up + down (a failure leaves
# $dir/failed: this runs in a subshell)
one() {
	t0=$(now_ms)
	"$1" lab up --policy "$policy" --run "$dir/run" >/dev/null 2>&1 ||
	    { echo "bench: $1 lab up failed" >&2; : >"$dir/failed"; }
	t1=$(now_ms)
	"$1" lab down --run "$dir/run" >/dev/null 2>&1 ||
	    { echo "bench: $1 lab down failed" >&2; : >"$dir/failed"; }
	t2=$(now_ms)
	rm -rf "$dir/run"
	echo "$((t1 - t0)) $((t2 - t1))"
}

i=0
: >"$dir/pairs"
while [ "$i" -lt "$n" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		ra=$(one "$a"); rb=$(one "$b")
	else
		rb=$(one "$b"); ra=$(one "$a")
	fi
	echo "pair $((i + 1)): A $ra B $rb" | tee -a "$dir/pairs"
	i=$((i + 1))
done
awk -v a="$a" -v b="$b" '
function med(v, k,   i, j, t) {
	for (i = 1; i <= k; i++)
		for (j = i + 1; j <= k; j++)
			if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
{ k++; au[k] = $4; ad[k] = $5; as[k] = $4 + $5
  bu[k] = $7; bd[k] = $8; bs[k] = $7 + $8
  ru[k] = $7 / $4; rs[k] = ($7 + $8) / ($4 + $5) }
END {
	mau = med(au, k); mad = med(ad, k); mas = med(as, k)
	mbu = med(bu, k); mbd = med(bd, k); mbs = med(bs, k)
	printf "median (ms)   up     down   up + down   (%d pairs)\n", k
	printf "A %-10s %5d  %5d  %5d      %s\n", "", mau, mad, mas, a
	printf "B %-10s %5d  %5d  %5d      %s\n", "", mbu, mbd, mbs, b
	printf "ratio B / A of the medians: up %.2f, down %.2f, up + down %.2f\n",
	    mbu / mau, mbd / mad, mbs / mas
	printf "median of the per-pair ratios: up %.2f, up + down %.2f\n",
	    med(ru, k), med(rs, k)
}' "$dir/pairs"
[ ! -e "$dir/failed" ]
