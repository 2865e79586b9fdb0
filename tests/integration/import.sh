#!/bin/sh
# import.sh - ares policy import (docs/cli-policy.md, docs/import.md):
#   compose     a Compose file of tests/data/compose/: exit 0, the table
#               (every line a comment) then the policy on stdout, which is
#               itself a policy the tool reads back (imported again with
#               --out: the same policy); the credential never printed;
#   strict      --strict on a file with accesses the lab does not make:
#               exit 1, each one on stderr with file:line, no policy;
#   errors      a bad file: exit 2 and file:line:col: key; usage: exit 2;
#   container   --container against two containers made here with
#               `docker create` only (never started) from the local lab
#               image (ares-lab:<hash>, never pulled; a busybox image
#               imported from a local tar when there is none): capabilities,
#               a host bind of a temp folder, a key file, an internal
#               network, --pid host, --ipc host, seccomp=unconfined, the
#               docker socket, a device, root; each maps to its flaw, the
#               policy loads; both containers (and the network) removed.
# Skips (77) without an engine unless ARES_REQUIRE_DOCKER=1.
set -u

ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
case $ARES in /*) ;; *) ARES=$(pwd)/$ARES ;; esac
case $SRC in /*) ;; *) SRC=$(pwd)/$SRC ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/ares-import.XXXXXX") || exit 99
TAG=$$
C1=ares-test-import-a-$TAG
C2=ares-test-import-b-$TAG
NET=ares-test-import-$TAG
IMG=
OWN_IMG=
cleanup() {
	docker rm -f "$C1" "$C2" >/dev/null 2>&1
	docker network rm "$NET" >/dev/null 2>&1
	[ -n "$OWN_IMG" ] && docker rmi -f "$OWN_IMG" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# want_line FILE REGEX: a line of FILE matches.
want_line() {
	grep -Eq -- "$2" "$1" || fail "$1: no line matching: $2"
}

D=$SRC/tests/data/compose

# ---- compose: table then policy on stdout ----
"$ARES" policy import "$D/socket.yml" --service agent >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "import socket.yml: exit $rc, want 0: $(cat "$T/err")"
[ -s "$T/err" ] && fail "import socket.yml wrote to stderr: $(cat "$T/err")"
want_line "$T/out" '^# 13 +services\.agent\.volumes\[0\] +/var/run/docker\.sock:/var/run/docker\.sock:ro +-> flaw docker-socket'
want_line "$T/out" '^# 8 +services\.agent\.environment\.OPENAI_API_KEY +OPENAI_API_KEY=<redacted> +-> flaw real-key'
want_line "$T/out" '^# - +services\.agent\.read_only +\(absent\) +-> flaw writable-rootfs'
want_line "$T/out" '^flaws: \[root-user, real-key, docker-socket, host-mount, control-keys, writable-rootfs, egress-network\]$'
grep -q 'abcdefghijklmnopqrstuvwxyz012345' "$T/out" &&
    fail "the credential's value is in the output"
# Everything before the policy is a comment: stdout is the policy.
awk '/^name: /{p=1} !p && !/^#/{bad=1} END{exit bad}' "$T/out" ||
    fail "a table line is not a comment"
# --out: the same policy in the file, the table on stdout.
(cd "$T" && "$ARES" policy import "$D/socket.yml" --service agent \
    --out "$T/p.yaml" >"$T/out2" 2>"$T/err") ||
    fail "import --out: exit $?: $(cat "$T/err")"
want_line "$T/out2" "^# wrote $T/p.yaml"
grep -v '^#' "$T/out" >"$T/p1"
grep -v '^#' "$T/p.yaml" >"$T/p2"
# The relative compose path differs (stdout: the cwd; --out: its folder).
sed '/^  compose: /d' "$T/p1" >"$T/p1s"
sed '/^  compose: /d' "$T/p2" >"$T/p2s"
cmp -s "$T/p1s" "$T/p2s" || fail "--out wrote another policy than stdout"
rel=$(sed -n 's/^  compose: "\(.*\)"$/\1/p' "$T/p.yaml")
[ -f "$T/$rel" ] || fail "imported.compose '$rel' is not relative to $T"

# ---- strict ----
"$ARES" policy import "$D/caps.yml" --service worker --strict \
    --out "$T/strict.yaml" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] || fail "--strict: exit $rc, want 1"
[ -e "$T/strict.yaml" ] && fail "--strict wrote a policy"
n=$(grep -c 'ares policy import: --strict: .*caps.yml:[0-9]*: services\.worker\.' "$T/err")
# five the lab does not make, three it makes only in part (privileged,
# SYS_ADMIN, network_mode host)
[ "$n" -eq 8 ] || fail "--strict listed $n accesses, want 8: $(cat "$T/err")"
want_line "$T/err" 'caps\.yml:20: services\.worker\.devices\[0\]: ares never passes a host device'
grep -q 'ghp_abcdefghij' "$T/out" "$T/err" && fail "--strict printed a credential"

# ---- errors ----
printf 'services:\n  s:\n    image: x\n    privileged: maybe\n' >"$T/bad.yml"
"$ARES" policy import "$T/bad.yml" --service s >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] || fail "bad file: exit $rc, want 2"
want_line "$T/err" "^ares policy import: $T/bad.yml:4:17: services\.s\.privileged: expected true or false"
"$ARES" policy import "$D/socket.yml" --service nope >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] || fail "unknown service: exit $rc, want 2"
want_line "$T/err" 'no service "nope" \(services: agent\)'
"$ARES" policy import "$D/socket.yml" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "no --service: exit $rc, want 2"
"$ARES" policy import "$D/socket.yml" --service agent --agent bogus \
    >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] || fail "--agent bogus: exit $rc, want 2"
"$ARES" policy export >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "ares policy export: exit $rc, want 2"

# ---- container ----
"$ARES" lab status >/dev/null 2>&1
if [ $? -eq 3 ]; then
	echo "import.sh: no Docker Engine" >&2
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && exit 1
	[ $fails -eq 0 ] || exit 1
	exit 77
fi
IMG=$(docker images --format '{{.Repository}}:{{.Tag}}' 'ares-lab' | head -n 1)
if [ -z "$IMG" ]; then
	BB=${BUSYBOX:-}
	[ -n "$BB" ] || for b in /bin/busybox /usr/bin/busybox; do
		[ -x "$b" ] && { BB=$b; break; }
	done
	[ -n "$BB" ] || { echo "import.sh: no image and no busybox" >&2;
	    exit 99; }
	mkdir -p "$T/img/bin"
	cp "$BB" "$T/img/bin/busybox"
	tar -C "$T/img" -cf "$T/img.tar" . || exit 99
	OWN_IMG=ares-test-import:$TAG
	docker import -c 'ENTRYPOINT ["/bin/busybox"]' "$T/img.tar" \
	    "$OWN_IMG" >/dev/null || exit 99
	IMG=$OWN_IMG
fi
mkdir -p "$T/hostdir" "$T/keys/.ssh"
echo k >"$T/keys/.ssh/id_ed25519"
docker network create --internal "$NET" >/dev/null 2>"$T/err" ||
    fail "docker network create: $(cat "$T/err")"
# A: capabilities, a host folder, a key, the internal network, a uid.
docker create --name "$C1" --network "$NET" --cap-add NET_ADMIN \
    --cap-add SYS_PTRACE -v "$T/hostdir:/data" \
    -v "$T/keys/.ssh/id_ed25519:/k/id_ed25519:ro" --user 1000:1000 \
    --read-only -e MODE=test -e OPENAI_API_KEY=sk-testtesttesttesttest0000 \
    --sysctl net.ipv4.ip_forward=1 --entrypoint /bin/busybox "$IMG" \
    sleep 1 >/dev/null 2>"$T/err" || fail "docker create A: $(cat "$T/err")"
"$ARES" policy import --container "$C1" --out "$T/c1.yaml" >"$T/out" \
    2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "import --container A: exit $rc: $(cat "$T/err")"
want_line "$T/out" '^# - +HostConfig\.CapAdd\[[01]\] +(CAP_)?NET_ADMIN +-> flaw extra-caps'
want_line "$T/out" '^# - +HostConfig\.CapAdd\[[01]\] +(CAP_)?SYS_PTRACE +-> WIDENING, flaw privileged \(its lower bound\), not reproduced: .*reproduced only in part'
want_line "$T/out" "^# - +Mounts\[[01]\] +$T/hostdir:/data \(bind\) +-> WIDENING, flaw host-mount \(its lower bound\), not reproduced: .*writing to the host is not reproduced"
want_line "$T/out" '^# - +Mounts\[[01]\] +.*id_ed25519:/k/id_ed25519 \(bind, ro\) +-> flaw control-keys'
want_line "$T/out" "^# - +NetworkSettings\.Networks\.$NET +$NET +-> no access change: an internal network"
want_line "$T/out" '^# - +Config\.User +1000:1000 +-> agent\.user'
want_line "$T/out" '^# - +HostConfig\.ReadonlyRootfs +true +-> no access change'
want_line "$T/out" '^# - +Config\.Env\[[0-9]\] +OPENAI_API_KEY=<redacted> +-> flaw real-key'
want_line "$T/out" '^# - +HostConfig\.Sysctls\.net\.ipv4\.ip_forward .*namespaced'
grep -q 'sk-testtest' "$T/out" "$T/c1.yaml" && fail "container A: the key was copied"
want_line "$T/c1.yaml" '^flaws: \[real-key, extra-caps, privileged, host-mount, control-keys\]$'
want_line "$T/c1.yaml" "^  image: \"$IMG\"$"
want_line "$T/c1.yaml" '^  user: "1000:1000"$'
want_line "$T/c1.yaml" '^    MODE: "test"$'
want_line "$T/c1.yaml" "^  container: \"$C1\"$"
# B: created only, never started: the host's pid and ipc, no seccomp, the
# docker socket, a device, root, the host network.
docker create --name "$C2" --network host --pid host --ipc host \
    --uts host --userns host --volumes-from "$C1" \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    -v /var/run/docker.sock:/var/run/docker.sock \
    --device /dev/null:/dev/xnull --user 0 --entrypoint /bin/busybox \
    "$IMG" sleep 1 >/dev/null 2>"$T/err" ||
    fail "docker create B: $(cat "$T/err")"
"$ARES" policy import --container "$C2" --agent poyo --out "$T/c2.yaml" \
    >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "import --container B: exit $rc: $(cat "$T/err")"
want_line "$T/out" '^# - +HostConfig\.PidMode +host +-> flaw host-pid'
want_line "$T/out" '^# - +HostConfig\.IpcMode +host +-> flaw host-ipc'
want_line "$T/out" '^# - +HostConfig\.SecurityOpt\[[01]\] +seccomp=unconfined +-> flaw seccomp-unconfined'
want_line "$T/out" '^# - +HostConfig\.SecurityOpt\[[01]\] +apparmor=unconfined +-> WIDENING, not reproduced: this engine host has no AppArmor'
want_line "$T/out" '^# - +Mounts\[[0-9]\] +/var/run/docker\.sock:/var/run/docker\.sock \(bind\) +-> flaw docker-socket'
want_line "$T/out" '^# - +HostConfig\.Devices\[0\] +/dev/null:/dev/xnull +-> WIDENING, not reproduced'
want_line "$T/out" '^# - +Config\.User +0 +-> flaw root-user'
want_line "$T/out" '^# - +HostConfig\.NetworkMode +host +-> WIDENING, flaw egress-network \(its lower bound\), not reproduced: .*reproduced only in part'
want_line "$T/out" '^# - +HostConfig\.UTSMode +host +-> WIDENING, not reproduced: the host.s UTS namespace'
want_line "$T/out" '^# - +HostConfig\.VolumesFrom\[0\] +'"$C1"' +-> WIDENING, not reproduced: another container.s volumes'
want_line "$T/c2.yaml" '^  kind: poyo$'
for f in host-pid host-ipc seccomp-unconfined docker-socket root-user \
    egress-network writable-rootfs; do
	grep -q "^flaws: .*$f" "$T/c2.yaml" || fail "container B: no flaw $f"
done
# Neither container ever ran.
for c in "$C1" "$C2"; do
	s=$(docker inspect -f '{{.State.Status}}' "$c")
	[ "$s" = created ] || fail "$c is $s, want created"
done
"$ARES" policy import --container "$C2" --strict >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] || fail "--container --strict: exit $rc, want 1"
"$ARES" policy import --container "ares-test-import-none-$TAG" \
    >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] || fail "--container of no container: exit $rc, want 2"

[ $fails -eq 0 ] || exit 1
echo "import.sh: ok"
