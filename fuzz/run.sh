#!/bin/sh
#
# fuzz/run.sh - build and run the libFuzzer harnesses of ares' core.
#
# Usage:  fuzz/run.sh [-t SECONDS] [-j JOBS] [-b] [-c] [TARGET...]
#
#   -t SECONDS  run each target this long (default 60)
#   -j JOBS     fuzzers running at once (default 1; keep it <= the cores)
#   -b          build only, run nothing
#   -c          clean fuzz/out/ first (binaries, objects, grown corpora)
#   TARGET      harness names without the prefix: evidence policy report...
#               (default: every fuzz/fuzz_*.c)
#
# Needs clang with libFuzzer (clang 14 is what it was written with),
# pkg-config and the -dev packages of libcurl, libcjson, libsodium and
# yaml-0.1.  Run it from anywhere; it finds the repo from its own path.
#
# It compiles core/*.c once with -fsanitize=fuzzer-no-link,address,undefined
# (UBSan reports abort) into fuzz/out/obj/, links fuzz/fuzz_<t>.c into
# fuzz/out/bin/fuzz_<t>, then runs each target with
#   -max_total_time=SECONDS -rss_limit_mb=512 -timeout=5 -max_len=<per target>
# on fuzz/out/corpus/<t>/ (grown, kept between runs), with the hand-written
# seeds of fuzz/corpus/<t>/ and seeds taken from the repo (replays/,
# policies/, tests/keys/: see seed() below) as read-only corpora.
#
# Everything generated goes to fuzz/out/ (ignored by git; $ARES_FUZZ_OUT
# overrides the place):
#   out/logs/<t>.log              libFuzzer's output; the last "#N DONE" or
#                                 "#N ... exec/s" line has the totals
#   out/artifacts/<t>/crash-*     (also leak-*, timeout-*, oom-*) findings
# Scratch files of the harnesses live in a tmpfs dir ($ARES_FUZZ_TMP,
# /dev/shm/ares-fuzz.<pid>) that is removed at the end.
#
# Reproduce a finding:   fuzz/out/bin/fuzz_<t> fuzz/out/artifacts/<t>/crash-X
# Minimise it:           fuzz/out/bin/fuzz_<t> -minimize_crash=1 \
#                            -max_total_time=60 -exact_artifact_path=min \
#                            fuzz/out/artifacts/<t>/crash-X
# Exit status: 0 when no target left an artifact, 1 otherwise, 2 on usage.
#
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${ARES_FUZZ_OUT:-"$here/out"}
secs=60
jobs=1
build_only=0
clean=0

usage() {
	sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts t:j:bch opt; do
	case $opt in
	t) secs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	b) build_only=1 ;;
	c) clean=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $secs in ''|*[!0-9]*) usage ;; esac
case $jobs in ''|*[!0-9]*|0) usage ;; esac

if [ $# -gt 0 ]; then
	targets=$*
else
	targets=$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi
for t in $targets; do
	[ -f "$here/fuzz_$t.c" ] || { echo "run.sh: no harness fuzz/fuzz_$t.c" >&2; exit 2; }
done

# Largest input per target: past each parser's own bound where that is
# cheap enough, so the bound itself is exercised.
max_len() {
	case $1 in
	evidence|replay|fix)   echo 140000 ;;   # EVIDENCE_LINE_MAX 64 KiB
	evidence_write)        echo 70000 ;;
	policy)                echo 270000 ;;   # POLICY_MAX_BYTES 256 KiB
	report|probe)          echo 1050000 ;;  # REPORT_JSON_MAX / PROBE_JSON_MAX 1 MiB
	trial)                 echo 200000 ;;
	probe_ctx)             echo 1050000 ;;  # PROBE_LABJSON_MAX 1 MiB
	sign_pubkey)           echo 5000 ;;     # SIGN_PUBFILE_MAX 4096
	sign_secret)           echo 5000 ;;
	sign_verify)           echo 9000 ;;     # SIGN_SIGFILE_MAX 8192
	bus)                   echo 17000 ;;    # BUS_DGRAM_MAX 16384
	lever)                 echo 66000 ;;    # LEVER_EXT_OUT_MAX 64 KiB
	docker)                echo 70000 ;;
	sanitize)              echo 4096 ;;
	decoys)                echo 20000 ;;    # past HTTP_HEAD_MAX 16 KiB
	fix_policy)            echo 16384 ;;
	probe_eval)            echo 16384 ;;
	*)                     echo 65536 ;;
	esac
}

# Sources from outside core/ a harness links too (paths from the repo
# root), compiled once into out/obj/ like core's.
extra_srcs() {
	case $1 in
	decoys) echo "leakbox/decoys.c leakbox/http.c leakbox/sensor.c leakbox/ssh.c" ;;
	esac
}

# Seeds from the repo, written to out/seeds/<t>/ (read-only corpus).
seed() {
	t=$1 d="$out/seeds/$1"
	rm -rf "$d"
	mkdir -p "$d"
	i=0
	case $t in
	evidence|replay|fix)
		for f in "$root"/replays/*/evidence.jsonl \
		    "$root"/replays/*/evidence/*.jsonl; do
			[ -f "$f" ] || continue
			i=$((i + 1)); cp "$f" "$d/replay-$i"
		done
		# fix: a master chain, "--8<--", a sensor chain (as the
		# harness splits them)
		if [ "$t" = fix ]; then
			for r in "$root"/replays/*/; do
				[ -f "$r/evidence/gateway.jsonl" ] || continue
				i=$((i + 1))
				{ cat "$r/evidence.jsonl"; echo '--8<--'
				  cat "$r/evidence/gateway.jsonl"; } > "$d/split-$i"
			done
		fi ;;
	policy|fix_policy)
		for f in "$root"/policies/*.yaml; do
			[ -f "$f" ] || continue
			i=$((i + 1)); cp "$f" "$d/policy-$i"
		done ;;
	report)
		# "<trusted comment>\n<report.json>", as the harness wants
		for f in "$root"/replays/*/report.json; do
			[ -f "$f.minisig" ] || continue
			i=$((i + 1))
			{ sed -n 's/^trusted comment: //p' "$f.minisig"
			  cat "$f"; } > "$d/report-$i"
		done ;;
	sign_pubkey)
		for f in "$root"/replays/*.pub "$root"/replays/*/ares.pub \
		    "$root"/tests/keys/ares.pub; do
			[ -f "$f" ] || continue
			i=$((i + 1)); cp "$f" "$d/pub-$i"
		done ;;
	sign_secret)
		for f in "$root"/tests/keys/ares.key; do
			[ -f "$f" ] || continue
			i=$((i + 1)); cp "$f" "$d/key-$i"
		done ;;
	sign_verify)
		for f in "$root"/replays/*/*.minisig; do
			[ -f "$f" ] || continue
			i=$((i + 1)); cp "$f" "$d/sig-$i"
		done ;;
	esac
}

# ---- build ---------------------------------------------------------
CC=${CC:-clang}
PKGS="libcurl libcjson libsodium yaml-0.1"
pc_cflags=$(pkg-config --cflags $PKGS)
pc_libs=$(pkg-config --libs $PKGS)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-std=c11 -g -O1 -fno-omit-frame-pointer $SAN -D_GNU_SOURCE \
-I$root/core -DFUZZ_SRCDIR=\"$root\" $pc_cflags"

[ $clean = 1 ] && rm -rf "$out"
mkdir -p "$out/obj" "$out/bin" "$out/logs"
objs=
for src in "$root"/core/*.c; do
	o="$out/obj/$(basename "$src" .c).o"
	stale=0
	for h in core.h internal.h util.h evidence.h; do
		[ "$root/core/$h" -nt "$o" ] && stale=1
	done
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ $stale -eq 1 ]; then
		echo "cc   core/$(basename "$src")"
		$CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$o"
	fi
	objs="$objs $o"
done
for t in $targets; do
	b="$out/bin/fuzz_$t"
	xobjs=
	for x in $(extra_srcs "$t"); do
		o="$out/obj/$(echo "$x" | tr / -).o"
		if [ ! -f "$o" ] || [ "$root/$x" -nt "$o" ] ||
		    [ "$root/$(dirname "$x")/leakbox.h" -nt "$o" ]; then
			echo "cc   $x"
			$CC $CFLAGS -fsanitize=fuzzer-no-link -c "$root/$x" -o "$o"
		fi
		xobjs="$xobjs $o"
	done
	echo "link fuzz_$t"
	# shellcheck disable=SC2086
	$CC $CFLAGS -Wall -Wextra -fsanitize=fuzzer "$here/fuzz_$t.c" $objs $xobjs \
	    $pc_libs -lm -lpthread -o "$b"
done
[ $build_only = 1 ] && exit 0

# ---- run -----------------------------------------------------------
# ASan keeps freed memory in a quarantine (256 MiB by default) that counts
# against -rss_limit_mb: a smaller one keeps the limit about the target.
ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
export ASAN_OPTIONS
ARES_FUZZ_TMP=$(mktemp -d /dev/shm/ares-fuzz.XXXXXX 2>/dev/null ||
    mktemp -d /tmp/ares-fuzz.XXXXXX)
export ARES_FUZZ_TMP
trap 'rm -rf "$ARES_FUZZ_TMP"' EXIT INT TERM

run_one() {
	t=$1
	mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$here/corpus/$t"
	seed "$t"
	"$out/bin/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=512 \
	    -timeout=5 -max_len="$(max_len "$t")" -print_final_stats=1 \
	    -artifact_prefix="$out/artifacts/$t/" \
	    "$out/corpus/$t" "$here/corpus/$t" "$out/seeds/$t" \
	    > "$out/logs/$t.log" 2>&1 || true
	line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' \
	    "$out/logs/$t.log" | tail -n 1)
	n=$(ls "$out/artifacts/$t" | wc -l)
	echo "$t: ${line:-no stats (see $out/logs/$t.log)}; artifacts: $n"
}

running=0
for t in $targets; do
	run_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

found=0
for t in $targets; do
	if [ -n "$(ls "$out/artifacts/$t" 2>/dev/null)" ]; then
		found=1
	fi
done
exit $found
