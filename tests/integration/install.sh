#!/bin/sh
# tests/integration/install.sh - `make install` into a temporary prefix,
# then the installed ares run with the source and build trees gone.
#
#  1 the tree `make distdir` gives (what the tarball holds) is configured
#    with --prefix=TMP/prefix, built in TMP/build and installed; then both
#    trees are removed, so the installed ares can only find what the
#    install put in the prefix (its compiled-in source and build paths are
#    gone, and it runs in an empty directory);
#  2 the layout: bin/ares, libexec/ares/ares-lab and lab-rootfs.tar, and,
#    compared with the source tree, every policy, every file of the
#    replays, the sprites, the example agents and lever, README.md and
#    every docs/*.md page, share/man/man1/ares.1 (a file added to the
#    source and not to Makefile.am's lists fails here);
#  3 `ares help` and `ares version` print what the build's ares prints;
#  4 `ares replay INSTALLED_REPLAY --export-cast` gives the asciicast the
#    build's ares gives for the source's replay (but line 1: a timestamp),
#    and `ares verify` accepts each replay with the installed demo key;
#  5 the default policy is the installed default.yaml: `ares drill` with
#    no --policy on an unreachable engine exits 3, and 2 once that file is
#    moved away;
#  6 ares.1 has a section per docs/cli-*.md page; with man installed,
#    `man -l` renders it and `man -M PREFIX/share/man ares` finds it;
#  7 the console's home screen (tmux) lists the installed policies and
#    replays by their installed paths, "N policies, M runs";
#  8 with a Docker Engine: `ares drill` (default policy) is contained,
#    exit 0, its evidence names the installed policy and the image made
#    from the installed lab-rootfs.tar; `ares verify` accepts the run.
#
# Needs ARES_BIN in a configured build directory (make check sets it).
# Without tmux or man the parts that need them are skipped, without an
# engine part 8, each saying so; with ARES_REQUIRE_DOCKER=1 (CI) a
# missing tmux or engine is a failure.  Takes ~30 s (the nested build).
set -u

ARES_BIN=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
require=${ARES_REQUIRE_DOCKER:-0}
case $ARES_BIN in /*) ;; *) ARES_BIN=$(pwd)/$ARES_BIN ;; esac
case $SRC in /*) ;; *) SRC=$(cd "$SRC" && pwd) ;; esac
BUILD=$(dirname "$ARES_BIN")
[ -x "$ARES_BIN" ] || { echo "FAIL: no executable ares at $ARES_BIN"; exit 1; }
[ -f "$BUILD/Makefile" ] || { echo "FAIL: $BUILD is no configured build dir"; exit 1; }

# The nested makes are on their own: none of the outer make's flags,
# jobserver or variable overrides (such as TESTS) reach them.
unset MAKEFLAGS MFLAGS MAKELEVEL

TUI_NAME=install
# shellcheck source=tests/tui/tmux.sh
. "$SRC/tests/tui/tmux.sh"
trap tui_cleanup EXIT
trap 'exit 1' INT TERM HUP

skip() {
	if [ "$require" = 1 ]; then
		fail "$* (ARES_REQUIRE_DOCKER=1)"
	fi
	echo "skip: $*"
}

# ---- 1: install from the distributed tree, then remove both trees ----
P=$TMPD/prefix
t0=$(date +%s)
make -C "$BUILD" distdir distdir="$TMPD/src" >"$TMPD/dist.log" 2>&1 || {
	tail -n 30 "$TMPD/dist.log"; fail "make distdir"; }
mkdir "$TMPD/build" "$TMPD/empty" || fail "mkdir"
(cd "$TMPD/build" && "$TMPD/src/configure" --prefix="$P" \
    >"$TMPD/configure.log" 2>&1) || {
	tail -n 30 "$TMPD/configure.log"; fail "configure"; }
(cd "$TMPD/build" && make -j2 install >"$TMPD/install.log" 2>&1) || {
	tail -n 30 "$TMPD/install.log"; fail "make install"; }
rm -rf "$TMPD/src" "$TMPD/build"
echo "ok: installed into $P in $(($(date +%s) - t0)) s"

# Everything below runs the installed ares, in an empty directory, with no
# variable pointing back at the build.
unset ARES_LAB_ROOTFS ARES_SPRITES ARES_SRCDIR
ARES_RUNS=$TMPD/r ARES_KEY_DIR=$TMPD/k
export ARES_RUNS ARES_KEY_DIR
cd "$TMPD/empty" || fail "cd"
A=$P/bin/ares
D=$P/share/ares

# ---- 2: the layout ----
[ -x "$A" ] || fail "no $A"
[ -x "$P/libexec/ares/ares-lab" ] || fail "no libexec/ares/ares-lab"
[ -s "$P/libexec/ares/lab-rootfs.tar" ] || fail "no libexec/ares/lab-rootfs.tar"
# same SRC_FILE INSTALLED_FILE: both exist and are equal.
same() {
	[ -f "$2" ] || fail "$1 is not installed (as $2): add it to Makefile.am"
	cmp -s "$1" "$2" || fail "installed $2 differs from $1"
}
npol=0
for f in "$SRC"/policies/*.yaml; do
	same "$f" "$D/${f##*/}"
	npol=$((npol + 1))
done
[ "$npol" -gt 0 ] || fail "no policies in $SRC/policies"
same "$SRC/sprites/poyo.txt" "$D/sprites/poyo.txt"
same "$SRC/README.md" "$P/share/doc/ares/README.md"
for f in "$SRC"/docs/*.md; do
	same "$f" "$P/share/doc/ares/docs/${f##*/}"
done
for f in "$SRC"/leakbox/agents/*.sh; do
	same "$f" "$D/agents/${f##*/}"
done
same "$SRC/leakbox/levers/example-lever" "$D/levers/example-lever"
[ -x "$D/levers/example-lever" ] || fail "the example lever is not executable"
# The replays: the same files (replays/record.sh records them: not data).
(cd "$SRC" && find replays -type f ! -name record.sh | LC_ALL=C sort) \
    >"$TMPD/replays.src"
(cd "$D" && find replays -type f | LC_ALL=C sort) >"$TMPD/replays.inst"
cmp -s "$TMPD/replays.src" "$TMPD/replays.inst" || {
	diff "$TMPD/replays.src" "$TMPD/replays.inst"
	fail "the installed replays are not those of $SRC/replays (Makefile.am)"
}
while read -r f; do
	same "$SRC/$f" "$D/$f"
done <"$TMPD/replays.src"
nruns=0
for r in "$SRC"/replays/*/; do
	[ -f "$r/evidence.jsonl" ] && nruns=$((nruns + 1))
done
[ "$nruns" -gt 0 ] || fail "no replays in $SRC/replays"
MAN=$P/share/man/man1/ares.1
[ -s "$MAN" ] || fail "no share/man/man1/ares.1"
echo "ok: layout ($npol policies, $nruns replays, docs, man page)"

# ---- 3: help and version ----
for c in help version; do
	"$ARES_BIN" $c >"$TMPD/b.$c" 2>&1 || fail "build's ares $c failed"
	"$A" $c >"$TMPD/i.$c" 2>&1 || fail "installed ares $c: $(cat "$TMPD/i.$c")"
	cmp -s "$TMPD/b.$c" "$TMPD/i.$c" || {
		diff "$TMPD/b.$c" "$TMPD/i.$c"
		fail "installed ares $c differs from the build's"
	}
done
echo "ok: help and version"

# ---- 4: the installed replays ----
for r in "$D"/replays/*/; do
	r=${r%/}
	n=${r##*/}
	"$A" replay "$r" --export-cast "$TMPD/i.cast" >"$TMPD/out" 2>&1 ||
	    fail "installed ares replay $n: $(cat "$TMPD/out")"
	"$ARES_BIN" replay "$SRC/replays/$n" --export-cast "$TMPD/b.cast" \
	    >"$TMPD/out" 2>&1 || fail "build's ares replay $n: $(cat "$TMPD/out")"
	sed 1d "$TMPD/i.cast" >"$TMPD/i.body"
	sed 1d "$TMPD/b.cast" >"$TMPD/b.body"
	[ -s "$TMPD/i.body" ] || fail "replay $n: empty cast"
	cmp -s "$TMPD/i.body" "$TMPD/b.body" ||
	    fail "replay $n: the installed ares exports another cast"
	"$A" verify "$r" --pub "$D/replays/demo.pub" >"$TMPD/out" 2>&1 ||
	    fail "installed ares verify $n: $(cat "$TMPD/out")"
done
echo "ok: replays export the build's casts and verify"

# ---- 5: the default policy ----
DOCKER_HOST=unix:///nonexistent.sock "$A" drill >"$TMPD/out" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "drill, no engine: exit $rc, want 3: $(cat "$TMPD/out")"
mv "$D/default.yaml" "$TMPD/default.yaml" || fail "mv"
DOCKER_HOST=unix:///nonexistent.sock "$A" drill >"$TMPD/out" 2>&1
rc=$?
mv "$TMPD/default.yaml" "$D/default.yaml" || fail "mv back"
[ $rc -eq 2 ] || fail "drill, installed default.yaml gone: exit $rc, want 2"
grep -q "$D/default.yaml" "$TMPD/out" ||
    fail "the missing default policy is not $D/default.yaml: $(cat "$TMPD/out")"
echo "ok: the default policy is $D/default.yaml"

# ---- 6: the man page ----
for f in "$SRC"/docs/cli-*.md; do
	c=${f##*/cli-}
	c=$(printf '%s' "${c%.md}" | tr '[:lower:]' '[:upper:]')
	grep -q "^\.SH \"ARES $c\"" "$MAN" ||
	    fail "ares.1 has no section for ${f##*/} (ARES_MAN_PAGES in Makefile.am)"
done
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$MAN" >"$TMPD/man.txt" 2>"$TMPD/man.err" ||
	    fail "man -l ares.1: $(cat "$TMPD/man.err")"
	grep -q 'ARES(1)' "$TMPD/man.txt" || fail "man -l: no ARES(1) header"
	grep -q 'ares drill' "$TMPD/man.txt" || fail "man -l: no ares drill"
	MANWIDTH=80 man -M "$P/share/man" ares >"$TMPD/man2.txt" 2>&1 ||
	    fail "man -M PREFIX/share/man ares: $(cat "$TMPD/man2.txt")"
	cmp -s "$TMPD/man.txt" "$TMPD/man2.txt" || fail "man ares shows another page"
	echo "ok: man ares"
else
	echo "skip: man is not installed (ares.1 checked as text only)"
fi

# ---- 7: the console's home screen ----
if command -v tmux >/dev/null 2>&1; then
	h=$((npol + nruns + 12))
	tui_start 200 "$h" "$(tui_run_cmd - nocolor "$A")"
	wait_for 'policies \(Enter: run a drill\)' 20 || fail "no home screen"
	wait_for "$npol policies, $nruns runs" 5 ||
	    fail "home screen: not \"$npol policies, $nruns runs\""
	printf '%s\n' "$last" | grep -q " $D/default.yaml\$" ||
	    fail "home screen: default.yaml is not the installed one"
	for r in "$D"/replays/*/; do
		r=${r%/}
		printf '%s\n' "$last" | grep -q " $r\$" ||
		    fail "home screen: no installed replay ${r##*/}"
	done
	printf '%s\n' "$last" | sed -n '/policies (Enter/,$p'
	key q
	wait_exit 10 || fail "console: no exit after q"
	printf '%s\n' "$last" | grep -q 'ares-exit rc=0 tty=restored' ||
	    fail "console: bad exit or terminal not restored"
	echo "ok: the console lists the installed policies and replays"
else
	skip "tmux is not installed (no console check)"
fi

# ---- 8: a drill from the installed lab image ----
sock=/var/run/docker.sock
if ! curl -s --max-time 3 --unix-socket $sock http://localhost/_ping 2>/dev/null |
    grep -q OK; then
	skip "no Docker Engine at $sock (no drill)"
	exit 0
fi
"$A" drill --quiet --json "$TMPD/d.json" >"$TMPD/out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "installed drill: exit $rc, want 0: $(cat "$TMPD/out")"
grep -q '"verdict":[[:space:]]*"contained"' "$TMPD/d.json" ||
    fail "installed drill: not contained"
rdir=$(sed -n 's/.*"run_dir":[[:space:]]*"\([^"]*\)".*/\1/p' "$TMPD/d.json")
[ -f "$rdir/evidence.jsonl" ] || fail "no run dir ($rdir)"
grep -q "\"policy\":\"$D/default.yaml\"" "$rdir/evidence.jsonl" ||
    fail "the drill's policy is not $D/default.yaml"
if command -v b2sum >/dev/null 2>&1; then
	tag=$(b2sum -l 256 "$P/libexec/ares/lab-rootfs.tar" | cut -c1-16)
	grep -q "\"image\":\"ares-lab:$tag\"" "$rdir/evidence.jsonl" ||
	    fail "the drill's image is not ares-lab:$tag (the installed rootfs)"
fi
"$A" verify "$rdir" >"$TMPD/out" 2>&1 ||
    fail "installed ares verify of its run: $(cat "$TMPD/out")"
echo "ok: a drill from the installed lab image: contained, verifies"
