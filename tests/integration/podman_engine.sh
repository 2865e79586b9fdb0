#!/bin/sh
# podman_engine.sh - ares against Podman's Docker-compatible API
# (`podman system service` on a unix socket; docs/engine.md, "Podman").
#
# Starts a podman service of its own (its own --root, --runroot, --tmpdir,
# containers.conf and network config dir, vfs storage, a dead proxy so
# nothing can be pulled), then: ares engine answers (version, API 1.41,
# podman: true, labs: false); ares drill is refused with the podman
# reason, exit 2, and leaves no container or network there.  The service
# is stopped and its directories removed on exit; the suite's dockerd is
# not touched.  Podman is optional (not one of ./bootstrap's packages):
# without it this skips (77) even with ARES_REQUIRE_DOCKER=1; not root
# skips too, unless ARES_REQUIRE_DOCKER=1.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
POLICY="$SRC/policies/default.yaml"

fail() { echo "FAIL: $*" >&2; exit 1; }
command -v podman >/dev/null 2>&1 || { echo "skip: no podman"; exit 77; }
if [ "$(id -u)" != 0 ]; then
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but not root"
	echo "skip: not root"; exit 77
fi
command -v curl >/dev/null 2>&1 || fail "no curl"

base=$(mktemp -d /tmp/ares-pm.XXXXXX) || fail "mktemp"
chmod 0700 "$base"
sock="$base/podman.sock"
ppid_=
export ARES_RUNS="$base/runs" ARES_KEY_DIR="$base/keys"
mkdir -p "$ARES_RUNS" "$base/netconf"
cleanup() {
	if [ -n "$ppid_" ] && kill -0 "$ppid_" 2>/dev/null; then
		kill -TERM "$ppid_" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "$ppid_" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$ppid_" 2>/dev/null
	fi
	grep " $base/" /proc/mounts | awk '{print $2}' | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$base"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cat >"$base/containers.conf" <<CONF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
[network]
network_backend = "netavark"
network_config_dir = "$base/netconf"
CONF
env CONTAINERS_CONF="$base/containers.conf" HTTPS_PROXY=http://127.0.0.1:9 \
    HTTP_PROXY=http://127.0.0.1:9 NO_PROXY= \
    podman --root "$base/root" --runroot "$base/run" --tmpdir "$base/tmp" \
    --storage-driver vfs system service --time=0 "unix://$sock" \
    >"$base/service.log" 2>&1 &
ppid_=$!
for _ in $(seq 1 100); do
	curl -s --max-time 2 --unix-socket "$sock" http://d/_ping 2>/dev/null |
	    grep -q OK && break
	kill -0 "$ppid_" 2>/dev/null || break
	sleep 0.1
done
curl -s --max-time 2 --unix-socket "$sock" http://d/_ping | grep -q OK ||
    { cat "$base/service.log" >&2; fail "podman system service did not answer"; }
export DOCKER_HOST="unix://$sock"
out="$base/out"

"$ARES" engine --json "$base/engine.json" >"$out" 2>&1 ||
    fail "ares engine on podman: $(cat "$out")"
grep -q "^labs      refused: podman engine" "$out" ||
    fail "ares engine on podman: $(cat "$out")"
python3 - "$base/engine.json" <<'PY' || fail "engine.json: $(cat "$base/engine.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["podman"] is True and j["labs"] is False and j["remote"] is False, j
assert j["api"] == "1.41", j
PY
echo "ok: ares engine on podman: $(grep '^version' "$out")"

"$ARES" drill --policy "$POLICY" >"$out" 2>&1
rc=$?
[ $rc = 2 ] || fail "a drill on podman: exit $rc (want 2): $(tail -3 "$out")"
grep -q "podman engine ($sock): lab up is not supported there" "$out" ||
    fail "a drill on podman: message: $(tail -3 "$out")"
n=$(curl -s --unix-socket "$sock" \
    'http://d/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22ares.run%22%5D%7D' |
    grep -o '"Id"' | wc -l)
m=$(curl -s --unix-socket "$sock" \
    'http://d/v1.41/networks?filters=%7B%22label%22%3A%5B%22ares.run%22%5D%7D' |
    grep -o '"Id"' | wc -l)
[ "$n" = 0 ] && [ "$m" = 0 ] ||
    fail "a refused drill left $n container(s), $m network(s) on podman"
echo "ok: a drill on podman is refused (exit 2), nothing left there"
echo "PASS: podman engine"
