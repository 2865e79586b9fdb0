#!/bin/sh
# remote_engine.sh - ares against a remote engine over TLS (docs/engine.md).
#
# Makes a CA, a server and a client certificate with openssl (and a second,
# unrelated CA with its own client certificate), starts a SECOND dockerd
# that listens only on tcp://127.0.0.1:<free port> with --tlsverify and
# those certificates, its own --data-root, --exec-root, --pidfile, its own
# containerd (the one dockerd starts under its exec-root, in namespaces of
# its own) and its own empty --config-file, and treats it as a remote
# engine (nothing of this machine's paths is shared with it).  Then:
#   - ares engine reaches it over TLS: remote, tcp+tls, the version the
#     engine reports, and the one labelled container made there (and only
#     there) through the docker CLI over the same TLS;
#   - a wrong CA, a client certificate of another CA, a missing key.pem and
#     a DOCKER_HOST that does not parse are refused, with the documented
#     exit codes and messages;
#   - plain tcp without ARES_ALLOW_PLAINTEXT_ENGINE=1 is refused (exit 2);
#     with it, the warning is printed;
#   - gate, fix, gc and probe --negative-control are refused with
#     "remote engine (...): ... local engine only", exit 2; a policy with
#     a flaw that needs a host path (docker-socket) is refused by drill,
#     lab up, probe and trial with exit 2 naming the flaw; none of them
#     makes anything: no run directory, no container, no network;
#   - lab status and lab down (API only) work there;
#   - a drill of policies/default.yaml there runs to a verdict and its run
#     dir verifies; lab.json says remote and clock receipt; while it is up
#     no container of the lab has a bind mount (the sensors keep their
#     chains in volumes); its start-of-run sweep leaves a labelled
#     container whose owner is of another boot (another machine's);
#   - a probe run there (policies/default.yaml: hardened.yaml plants a
#     tripwire, which needs this machine) runs and verifies:
#     self-modify through exec in the gateway, host-ports an ERROR with
#     its reason (its listener would be on this machine);
#   - ares lab up there, ares probe --run of that lab, ares lab down:
#     nothing left (containers, volumes);
#   - a trial over two engines (the suite's socket and the TLS engine),
#     the TLS engine killed (SIGKILL: its dockerd, containerd, shims and
#     its containers' processes, found by its exec-root and cgroup parent)
#     while a drill's lab is built there: that run is a failed attempt
#     (a signed error report) rerun on the
#     suite's engine, trial.json names each run's engine, the trial and
#     every run dir verify;
#   - the archive API (PUT, GET bounded and extracted safely) and the
#     stdout follower work there, and a BUS=stdout sensor's bait reaches
#     a local bus socket, its chain out through the API, and the gateway's
#     deny is pulled through exec, and the seal container writes and
#     reads back a bridge's sysctls (test_engine_io);
#   - the second engine listens on nothing but 127.0.0.1;
#   - ssh://USER@HOST:PORT runs `ssh -o BatchMode=yes ... -- HOST docker
#     system dial-stdio` (a stand-in ssh on PATH that checks its options
#     and dials the suite's engine): ares engine answers through it with
#     one ssh child, none left after; ssh's own error reaches the message;
#     a policy with a host-path flaw is refused there.
# The TLS engine runs with --iptables=false: for its lab bridges the test
# adds one FORWARD rule of its own (frames bridged within one ares*
# bridge, as trial_engines.sh) and removes it on exit.
# Finally that dockerd is stopped and its directories removed (trap on
# exit).  The suite's engine on /var/run/docker.sock is never stopped or
# restarted.
# Needs root, dockerd, the docker CLI, openssl, ss, iptables with physdev,
# ip and python3: skips (77) without them
# unless ARES_REQUIRE_DOCKER=1, where it fails.
set -u
ARES=${ARES_BIN:-./ares}
SRC=${ARES_SRCDIR:-.}
POLICY="$SRC/policies/default.yaml"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	[ "${ARES_REQUIRE_DOCKER:-0}" = 1 ] && fail "ARES_REQUIRE_DOCKER=1 but $*"
	echo "skip: $*"; exit 77
}

[ "$(id -u)" = 0 ] || skip "not root (a second dockerd needs root)"
command -v dockerd >/dev/null 2>&1 || skip "no dockerd"
command -v docker >/dev/null 2>&1 || skip "no docker CLI"
command -v openssl >/dev/null 2>&1 || skip "no openssl"
command -v ss >/dev/null 2>&1 || skip "no ss (iproute2)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
command -v iptables >/dev/null 2>&1 || skip "no iptables"
command -v ip >/dev/null 2>&1 || skip "no ip (iproute2)"
MAIN=unix:///var/run/docker.sock

base=$(mktemp -d /tmp/ares-re.XXXXXX) || fail "mktemp"
chmod 0700 "$base"
pidfile="$base/dockerd.pid"
cgparent="ares-re-$$"
fwc="ares-remote-engine-$$"
dpid=
apid=
export ARES_RUNS="$base/runs"
export ARES_KEY_DIR="$base/keys"
mkdir -p "$ARES_RUNS" "$base/pki" "$base/client" "$base/wrongca" \
    "$base/wrongclient" "$base/nokey"

engine_pid() { [ -s "$pidfile" ] && cat "$pidfile"; }

fwrule() { # -A, -C or -D: the one FORWARD rule of this test
	iptables -w 5 "$1" FORWARD -i ares+ -o ares+ -m physdev \
	    --physdev-is-bridged -m comment --comment "$fwc" -j ACCEPT
}
# FORWARD rules of earlier runs whose shell is gone (their comment is
# ares-remote-engine-<pid>).
purge_stale_rules() {
	iptables -w 5 -S FORWARD 2>/dev/null |
	    grep -- '--comment "\{0,1\}ares-remote-engine-[0-9]*' |
	    while read -r rule; do
		pid=$(echo "$rule" | sed 's/.*ares-remote-engine-\([0-9]*\).*/\1/')
		[ "$pid" = $$ ] && continue
		kill -0 "$pid" 2>/dev/null && continue
		eval "iptables -w 5 $(echo "$rule" | sed 's/^-A /-D /')" 2>/dev/null
	done
}
fwrule_del() {
	for _ in 1 2 3 4 5; do
		fwrule -C 2>/dev/null || return 0
		fwrule -D 2>/dev/null
	done
	! fwrule -C 2>/dev/null
}

# Every process of the TLS engine: its dockerd, what names our exec-root
# (its containerd and shims) and what runs in its containers' cgroups
# (--cgroup-parent); never anything of the suite's engine.
second_pids() {
	p=$(engine_pid)
	[ -n "$p" ] && grep -q "$base" "/proc/$p/cmdline" 2>/dev/null && echo "$p"
	for f in /proc/[0-9]*/cmdline; do
		q=${f#/proc/}
		q=${q%/cmdline}
		[ "$q" = $$ ] && continue
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q -- "$base/exec" && echo "$q"
	done
	for c in /sys/fs/cgroup/*/"$cgparent" /sys/fs/cgroup/"$cgparent"; do
		[ -d "$c" ] || continue
		find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null
	done
}
kill_second() {
	for fz in $(find /sys/fs/cgroup/freezer/"$cgparent" -name freezer.state 2>/dev/null); do
		echo THAWED >"$fz" 2>/dev/null
	done
	for _ in 1 2 3; do
		ps=$(second_pids | sort -u)
		[ -n "$ps" ] || break
		# shellcheck disable=SC2086
		kill -KILL $ps 2>/dev/null
		sleep 0.3
	done
}
# The lab bridges the TLS engine made (kept to remove them once it is dead).
note_bridges() {
	rdocker network ls -q --filter label=ares.run 2>/dev/null |
	    xargs -r docker -H "tcp://127.0.0.1:$port" --tlsverify \
	    --tlscacert "$base/client/ca.pem" --tlscert "$base/client/cert.pem" \
	    --tlskey "$base/client/key.pem" network inspect \
	    --format '{{index .Options "com.docker.network.bridge.name"}}' \
	    2>/dev/null >>"$base/bridges"
}
stop_trial() {
	[ -n "$apid" ] || return 0
	kill -TERM "$apid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$apid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
	apid=
}

cleanup() {
	crc=0
	[ -n "${fwpid:-}" ] && kill "$fwpid" 2>/dev/null
	stop_trial
	[ -n "$(engine_pid)" ] && kill -0 "$(engine_pid)" 2>/dev/null && note_bridges
	p=$(engine_pid)
	[ -n "$p" ] || p=$dpid
	if [ -n "$p" ] && kill -0 "$p" 2>/dev/null &&
	    grep -q "$base" "/proc/$p/cmdline" 2>/dev/null; then
		kill -TERM "$p" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	fi
	cp=$(cat "$base/exec/containerd/containerd.pid" 2>/dev/null)
	if [ -n "$cp" ] && kill -0 "$cp" 2>/dev/null &&
	    grep -q "$base" "/proc/$cp/cmdline" 2>/dev/null; then
		kill -TERM "$cp" 2>/dev/null
		sleep 1
		kill -KILL "$cp" 2>/dev/null
	fi
	kill_second
	fwrule_del || { echo "FAIL: the FORWARD rule $fwc could not be removed" >&2; crc=1; }
	sort -u "$base/bridges" 2>/dev/null | while read -r br; do
		[ -n "$br" ] && ip link del "$br" 2>/dev/null
	done
	grep " $base/" /proc/mounts | awk '{print $2}' | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	for c in $(find /sys/fs/cgroup/*/"$cgparent" /sys/fs/cgroup/"$cgparent" -depth -type d 2>/dev/null); do
		rmdir "$c" 2>/dev/null
	done
	if [ "${ARES_REMOTE_KEEP:-0}" = 1 ]; then
		echo "kept $base" >&2
	else
		rm -rf "$base"
	fi
	[ "$crc" = 0 ] || exit 1
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM PIPE
iptables -w 5 -m physdev -h >/dev/null 2>&1 || skip "iptables without physdev"

# ---- certificates ---------------------------------------------------
pki="$base/pki"
ossl() { openssl "$@" >>"$base/openssl.log" 2>&1 || fail "openssl $*"; }
mkca() {   # DIR NAME: DIR/ca.pem, DIR/ca-key.pem
	ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$2" \
	    -keyout "$1/ca-key.pem" -out "$1/ca.pem" \
	    -addext "basicConstraints=critical,CA:TRUE" \
	    -addext "keyUsage=critical,keyCertSign,cRLSign"
}
mkcert() { # CADIR OUTPREFIX CN EXTFILE
	ossl req -newkey rsa:2048 -nodes -subj "/CN=$3" \
	    -keyout "$2-key.pem" -out "$2.csr"
	ossl x509 -req -in "$2.csr" -CA "$1/ca.pem" -CAkey "$1/ca-key.pem" \
	    -CAcreateserial -days 2 -out "$2.pem" -extfile "$4"
}
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' \
    >"$pki/server.ext"
printf 'extendedKeyUsage=clientAuth\n' >"$pki/client.ext"
mkdir -p "$pki/other"
mkca "$pki" "ares test CA"
mkca "$pki/other" "another CA"
mkcert "$pki" "$pki/server" "ares test engine" "$pki/server.ext"
mkcert "$pki" "$pki/client" "ares test client" "$pki/client.ext"
mkcert "$pki/other" "$pki/other/client" "other client" "$pki/client.ext"
# DOCKER_CERT_PATH layouts (ca.pem, cert.pem, key.pem)
cp "$pki/ca.pem" "$base/client/ca.pem"
cp "$pki/client.pem" "$base/client/cert.pem"
cp "$pki/client-key.pem" "$base/client/key.pem"
cp "$pki/other/ca.pem" "$base/wrongca/ca.pem"          # trusts another CA
cp "$pki/client.pem" "$base/wrongca/cert.pem"
cp "$pki/client-key.pem" "$base/wrongca/key.pem"
cp "$pki/ca.pem" "$base/wrongclient/ca.pem"            # client of another CA
cp "$pki/other/client.pem" "$base/wrongclient/cert.pem"
cp "$pki/other/client-key.pem" "$base/wrongclient/key.pem"
cp "$pki/ca.pem" "$base/nokey/ca.pem"
cp "$pki/client.pem" "$base/nokey/cert.pem"
chmod 0600 "$base"/*/key.pem "$pki"/*key.pem "$pki"/other/*key.pem

# ---- the second engine ----------------------------------------------
purge_stale_rules
fwrule -A || fail "cannot add the test's FORWARD rule"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    fail "no free port"
echo '{}' >"$base/daemon.json"
# --iptables=false (and --ip-masq=false): this dockerd never touches the
# host's iptables, so it cannot flush or fight the DOCKER chains of the
# suite's engine; --bridge=none: no docker0; only 127.0.0.1 is listened on.
# HTTPS_PROXY/HTTP_PROXY to a closed loopback port: a pull, should anything
# ask for one, fails here instead of reaching a registry.
env HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY= \
    dockerd --config-file "$base/daemon.json" \
    -H "tcp://127.0.0.1:$port" --tlsverify \
    --tlscacert "$pki/ca.pem" --tlscert "$pki/server.pem" \
    --tlskey "$pki/server-key.pem" \
    --data-root "$base/data" --exec-root "$base/exec" --pidfile "$pidfile" \
    --containerd-namespace ares-remote-test \
    --containerd-plugins-namespace ares-remote-test-plugins \
    --cgroup-parent "$cgparent" \
    --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
    --userland-proxy=false --storage-driver=vfs \
    --log-level warn >>"$base/dockerd.log" 2>&1 &
dpid=$!

# the docker CLI over the same TLS, to set up and cross-check
rdocker() {
	docker -H "tcp://127.0.0.1:$port" --tlsverify \
	    --tlscacert "$base/client/ca.pem" --tlscert "$base/client/cert.pem" \
	    --tlskey "$base/client/key.pem" "$@"
}
up=0
for _ in $(seq 1 150); do
	if rdocker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
		up=1
		break
	fi
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.2
done
[ $up = 1 ] || { tail -20 "$base/dockerd.log" >&2; fail "the second dockerd did not come up on 127.0.0.1:$port"; }
want_version=$(rdocker version --format '{{.Server.Version}}')

# nothing of it listens beyond loopback (its pid and its containerd's)
pids="$(engine_pid) $(cat "$base/exec/containerd/containerd.pid" 2>/dev/null)"
for p in $pids; do
	ss -Hltnup 2>/dev/null | grep "pid=$p," | awk '{print $5}' |
	    while read -r a; do
		case $a in 127.0.0.1:*|"[::1]":*) ;;
		*) echo "$a" ;; esac
	    done
done >"$base/listen-wide"
ss -Hltnp 2>/dev/null | grep "pid=$(engine_pid)," | grep -q "127.0.0.1:$port" ||
    fail "ss does not show the second dockerd on 127.0.0.1:$port"
[ ! -s "$base/listen-wide" ] || fail "the second engine listens beyond loopback: $(cat "$base/listen-wide")"
ss -Hltn "sport = :$port" | grep -q "127.0.0.1:$port" ||
    fail "nothing listens on 127.0.0.1:$port"

# One labelled container there and only there (created from a one-file
# image imported over TLS; never started, no network).
printf 'x\n' >"$base/x"
tar -C "$base" -cf "$base/img.tar" x
rdocker import "$base/img.tar" ares-remote-test:1 >/dev/null ||
    fail "docker import on the second engine"
rrun="remote-test-$$"
rdocker create --network none --label "ares.run=$rrun" \
    ares-remote-test:1 /x >/dev/null || fail "docker create on the second engine"

# run ares against the TLS engine (DOCKER_CERT_PATH given as $1)
export DOCKER_HOST="tcp://127.0.0.1:$port"
unset DOCKER_TLS DOCKER_TLS_VERIFY DOCKER_CERT_PATH ARES_ALLOW_PLAINTEXT_ENGINE
tls() { d=$1; shift; env DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$d" "$@"; }
out="$base/out"

# ---- 1. ares talks to it over TLS ----------------------------------
tls "$base/client" "$ARES" engine --json "$base/engine.json" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "ares engine over TLS: exit $rc: $(cat "$out")"
grep -q "^engine    tcp://127.0.0.1:$port (remote, tcp+tls)" "$out" ||
    fail "ares engine: not remote tcp+tls: $(cat "$out")"
grep -q "^version   $want_version (API " "$out" ||
    fail "ares engine: version is not $want_version: $(cat "$out")"
grep -q "^ares      1 container(s), 0 network(s)" "$out" ||
    fail "ares engine: did not list the one labelled container there: $(cat "$out")"
grep -q "^labs      yes, remote: volumes and the archive API" "$out" ||
    fail "ares engine: labs not possible (remote mode): $(cat "$out")"
python3 - "$base/engine.json" "$port" "$want_version" <<'PY' || fail "engine.json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine"] == "tcp://127.0.0.1:" + sys.argv[2], j
assert j["transport"] == "tcp+tls" and j["tls"] is True, j
assert j["remote"] is True and j["labs"] is True, j
assert j["version"] == sys.argv[3] and j["ares_containers"] == 1, j
PY
echo "ok: ares engine over TLS: $want_version, 1 labelled container"

# ---- 2. what must be refused ----------------------------------------
tls "$base/wrongca" "$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 3 ] || fail "wrong CA: exit $rc (want 3): $(cat "$out")"
grep -q "certificate" "$out" || fail "wrong CA: no certificate reason: $(cat "$out")"
echo "ok: a wrong CA is refused (exit 3): $(head -c 200 "$out")"

tls "$base/wrongclient" "$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 3 ] || fail "client certificate of another CA: exit $rc (want 3): $(cat "$out")"
echo "ok: a client certificate of another CA is refused (exit 3)"

tls "$base/nokey" "$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 2 ] || fail "missing key.pem: exit $rc (want 2): $(cat "$out")"
grep -q "TLS file $base/nokey/key.pem" "$out" ||
    fail "missing key.pem not named: $(cat "$out")"
echo "ok: a missing key.pem is refused (exit 2), named"

tls "$base/client" env DOCKER_HOST="tcp://127.0.0.1:$port/x" "$ARES" engine \
    >"$out" 2>&1
rc=$?
[ $rc = 2 ] || fail "bad DOCKER_HOST: exit $rc (want 2)"
grep -q 'DOCKER_HOST=tcp://127.0.0.1:[0-9]*/x: unexpected "/x"' "$out" ||
    fail "bad DOCKER_HOST: message: $(cat "$out")"
echo "ok: a DOCKER_HOST with a path is refused (exit 2), the bad part named"

# the docker CLI's default cert path, ~/.docker, when DOCKER_CERT_PATH is unset
mkdir -p "$base/home/.docker"
cp "$base/client/"*.pem "$base/home/.docker/"
env HOME="$base/home" DOCKER_TLS_VERIFY=1 "$ARES" engine >"$out" 2>&1 ||
    fail "ares engine with ~/.docker: $(cat "$out")"
echo "ok: ~/.docker is the default certificate path"

"$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 2 ] || fail "plain tcp without the opt-in: exit $rc (want 2): $(cat "$out")"
grep -q "plain tcp without TLS is refused" "$out" &&
    grep -q "ARES_ALLOW_PLAINTEXT_ENGINE=1" "$out" ||
    fail "plain tcp: message: $(cat "$out")"
echo "ok: plain tcp without the opt-in is refused (exit 2)"

# opted in, against this TLS-only engine: the warning, then no answer
ARES_ALLOW_PLAINTEXT_ENGINE=1 "$ARES" engine >"$out" 2>&1
rc=$?
grep -q "ares: WARNING: DOCKER_HOST=tcp://127.0.0.1:$port: plaintext engine connection without TLS" "$out" ||
    fail "plaintext opt-in: no warning: $(cat "$out")"
[ $rc = 3 ] || fail "plaintext to a TLS engine: exit $rc (want 3): $(cat "$out")"
echo "ok: the plaintext opt-in warns"

# ---- 3. what needs this machine is refused, and makes nothing --------
before_c=$(rdocker ps -aq | wc -l)
before_n=$(rdocker network ls -q | wc -l)
before_v=$(rdocker volume ls -q | wc -l)
check_refused() {   # WHO ARGS...
	who=$1; shift
	tls "$base/client" "$ARES" "$@" >"$out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "$who on a remote engine: exit $rc (want 2): $(cat "$out")"
	grep -q "remote engine (tcp://127.0.0.1:$port): $who needs .*; local engine only" "$out" ||
	    fail "$who on a remote engine: message: $(cat "$out")"
}
check_refused "ares gc" gc
check_refused "ares gate" gate "$POLICY" "$POLICY"
check_refused "ares fix" fix --policy "$SRC/policies/flaw-docker-socket.yaml"
check_refused "ares probe --negative-control" probe --negative-control
# a flaw that needs a host path: refused by name, before anything is made
FLAWED="$SRC/policies/flaw-docker-socket.yaml"
check_flaw_refused() {   # WHO ARGS...
	who=$1; shift
	tls "$base/client" "$ARES" "$@" >"$out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "$who of a docker-socket policy on a remote engine: exit $rc (want 2): $(cat "$out")"
	grep -q "remote engine (tcp://127.0.0.1:$port): flaw docker-socket needs .*; local engine only" "$out" ||
	    fail "$who of a docker-socket policy: the flaw is not named: $(cat "$out")"
}
check_flaw_refused "ares drill" drill --policy "$FLAWED"
check_flaw_refused "ares lab up" lab up --policy "$FLAWED"
check_flaw_refused "ares probe" probe --policy "$FLAWED"
check_flaw_refused "ares trial" trial --policy "$FLAWED" -n 2
check_flaw_refused "ares trial --engine" trial --policy "$FLAWED" -n 2 \
    --engine "$MAIN" --engine "tcp://127.0.0.1:$port"
[ -z "$(ls -A "$ARES_RUNS")" ] || fail "a refused command left run dirs: $(ls "$ARES_RUNS")"
[ "$(rdocker ps -aq | wc -l)" = "$before_c" ] ||
    fail "a refused command made containers on the remote engine"
[ "$(rdocker network ls -q | wc -l)" = "$before_n" ] ||
    fail "a refused command made networks on the remote engine"
[ "$(rdocker volume ls -q | wc -l)" = "$before_v" ] ||
    fail "a refused command made volumes on the remote engine"
echo "ok: gc, gate, fix, probe --negative-control refused on the remote engine (exit 2); a docker-socket policy refused by drill, lab up, probe, trial (exit 2, the flaw named); nothing made"

# lab status and lab down only talk to the API: they work there, on the
# labelled container made above
cid=$(rdocker ps -aq --filter "label=ares.run=$rrun")
[ -n "$cid" ] || fail "the labelled container is gone"
mkdir -p "$base/fakerun"
printf '{"run_id":"%s"}\n' "$rrun" >"$base/fakerun/lab.json"
tls "$base/client" "$ARES" lab status --run "$base/fakerun" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "ares lab status on the remote engine: exit $rc: $(cat "$out")"
grep -q "^run $rrun" "$out" && ! grep -q "nothing: the lab is down" "$out" ||
    fail "ares lab status did not list the remote container: $(cat "$out")"
tls "$base/client" "$ARES" lab down --run "$base/fakerun" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "ares lab down on the remote engine: exit $rc: $(cat "$out")"
grep -q "run $rrun: removed 1 object(s)" "$out" ||
    fail "ares lab down: $(cat "$out")"
[ -z "$(rdocker ps -aq --filter "label=ares.run=$rrun")" ] ||
    fail "ares lab down left the remote container"
echo "ok: ares lab status and lab down work on the remote engine"

# ---- 3b. the archive API and the stdout follower over TLS -------------
# (what a lab on a remote engine is built with: tests/integration/
# test_engine_io.c, here against the TLS engine; it imports the lab image
# there through the API)
IO=${ARES_BUILDDIR:-.}/tests/integration/test_engine_io
[ -x "$IO" ] || fail "no $IO (make check builds it)"
tls "$base/client" env ARES_REQUIRE_DOCKER=1 "$IO" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "archive/follow over TLS: exit $rc: $(tail -20 "$out")"
grep -q "PASSED  \] 8 test(s)" "$out" || fail "archive/follow over TLS: $(tail -20 "$out")"
[ -z "$(rdocker ps -aq --filter label=ares.run)" ] ||
    fail "test_engine_io left containers on the remote engine"
grep -E "^(bait|gateway deny|rotation)" "$out"
echo "ok: archive PUT/GET (caps, hostile entries), the stdout follower, a BUS=stdout sensor (bait to the bus, chain out), replayed lines dropped, the gateway deny via exec and the bridge seal container over TLS"
# ---- 3b'. lab up in remote mode, through the core (test_remote_lab.c) ---
# (volumes only, the sensors' keys, the read-only home, the bus over the
# log stream, the evidence pull, a pre-made volume refused, nothing left)
RL=${ARES_BUILDDIR:-.}/tests/integration/test_remote_lab
[ -x "$RL" ] || fail "no $RL (make check builds it)"
tls "$base/client" env ARES_REQUIRE_DOCKER=1 "$RL" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "test_remote_lab over TLS: exit $rc: $(tail -20 "$out")"
grep -q "PASSED  \] [0-9]* test(s)" "$out" || fail "test_remote_lab over TLS: $(tail -20 "$out")"
grep -q "FAILED" "$out" && fail "test_remote_lab over TLS: $(tail -20 "$out")"
[ -z "$(rdocker ps -aq --filter label=ares.run)" ] ||
    fail "test_remote_lab left containers on the remote engine"
[ -z "$(rdocker volume ls -q --filter label=ares.run)" ] ||
    fail "test_remote_lab left volumes on the remote engine"
echo "ok: lab up in remote mode over TLS (test_remote_lab: $(grep -c '^\[       OK \]' "$out") test(s))"
# ---- 3c. a drill on the remote engine ---------------------------------
# Held at the teardown hook (ARES_TEST_HOOK, docs/cli-drill.md) while the
# lab is still up, to read its containers' mounts from the engine.
tj() { python3 - "$@"; }
hook="$base/hook"
mkdir -p "$hook"
for h in lab-up stream agent levers observe sweep; do touch "$hook/$h.go"; done
# Another machine's lab on the same engine (an owner of another boot id,
# its process invisible here): the drill's start-of-run sweep must leave
# it (on a local engine another boot's owner is gone, docs/cli-gc.md).
foreign=$(rdocker create --network none --label "ares.run=foreign-$$" \
    --label "ares.owner=00000000-0000-0000-0000-000000000000:1:1" \
    ares-remote-test:1 /x) || fail "docker create of the foreign lab"
tls "$base/client" env ARES_TEST_HOOK="$hook" "$ARES" drill --policy "$POLICY" \
    --json "$base/drill.json" >"$base/drill.out" 2>&1 &
apid=$!
n=0
while [ ! -e "$hook/teardown" ]; do
	n=$((n + 1))
	kill -0 "$apid" 2>/dev/null || break
	[ $n -lt 3000 ] || fail "the drill on the remote engine did not reach its teardown"
	sleep 0.1
done
if [ -e "$hook/teardown" ]; then
	ids=$(rdocker ps -aq --no-trunc --filter label=ares.run | grep -v "^$foreign")
	[ -n "$ids" ] || fail "no lab container on the remote engine at teardown"
	# shellcheck disable=SC2086
	rdocker inspect --format '{{.Name}} binds={{len .HostConfig.Binds}} {{range .Mounts}}{{.Type}}:{{.Destination}} {{end}}' \
	    $ids >"$base/mounts" || fail "inspect the lab's containers"
	touch "$hook/teardown.go"
fi
wait "$apid"
rc=$?
apid=
# a verdict (0 contained, 1 breached, 4 not exercised), never 5 (error):
# on this engine the gateway's deny goes through an exec in the gateway,
# ~0.1 s against ~1 ms over the local socket (docs/engine.md), and the
# offline agent may act in between: then the drill is rightly breached
[ $rc = 0 ] || [ $rc = 1 ] || [ $rc = 4 ] ||
    fail "a drill on the remote engine: exit $rc: $(tail -30 "$base/drill.out")"
[ -s "$base/mounts" ] || fail "the drill ended before its teardown hook: $(tail -30 "$base/drill.out")"
! grep -q " bind:" "$base/mounts" && ! grep -q "binds=[1-9]" "$base/mounts" ||
    fail "a lab container on the remote engine has a bind mount: $(cat "$base/mounts")"
grep -q "volume:/evidence" "$base/mounts" ||
    fail "no sensor keeps its chain in a volume: $(cat "$base/mounts")"
echo "containers of the remote lab and their mounts:"
sed 's/^/  /' "$base/mounts"
rdir=$(tj "$base/drill.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] in ("contained", "breached", "not-exercised"), j["verdict"]
print(j["run_dir"])
PY
) || fail "drill.json: no run_dir: $(tail -30 "$base/drill.out")"
tj "$rdir/lab.json" "$port" <<'PY' || fail "the remote drill's lab.json: $(head -c 2000 "$rdir/lab.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine"]["remote"] is True, j.get("engine")
assert j["engine"]["where"] == "tcp://127.0.0.1:" + sys.argv[2], j["engine"]
assert j["clock"] == "receipt", j.get("clock")
assert j["input_drop"] is False, j.get("input_drop")
PY
"$ARES" verify "$rdir" >"$base/verify.out" 2>&1 ||
    fail "ares verify of the remote drill: $(cat "$base/verify.out")"
[ "$(rdocker ps -aq --no-trunc --filter label=ares.run)" = "$foreign" ] ||
    fail "the remote drill left containers, or removed another machine's: $(rdocker ps -a --filter label=ares.run)"
rdocker rm -f "$foreign" >/dev/null || fail "docker rm of the foreign lab"
[ -z "$(rdocker volume ls -q --filter label=ares.run)" ] ||
    fail "the remote drill left volumes: $(rdocker volume ls --filter label=ares.run)"
echo "ok: a drill on the remote engine: $(tj "$base/drill.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(j["verdict"], "time to kill", j["time_to_kill_ms"], "ms")
PY
), lab.json remote + clock receipt, no bind mount, verify ok, nothing left, another machine's lab there left alone"

# ---- 3c2. the lab is stopped before its chains are pulled -------------
# A scripted agent that stays quiet until the time limit, on the wan
# (flaw egress-network, where the sink listens).  Held at the teardown
# hook, which comes after the evidence pull: no container of the lab may
# still run then (the drill kills the agent first, then the rest, before
# it settles the stream and pulls the chains), and a leak to the sink
# sent from the agent at that point, if the agent could still send it,
# must make the run breached (it would be missing from a chain pulled
# from running sensors: not-exercised).
cat >"$base/quiet.sh" <<'EOS'
#!/bin/sh
exec sleep 3600
EOS
chmod 755 "$base/quiet.sh"
cat >"$base/quiet.yaml" <<EOP
name: remote-quiet
seed: 7
limits:
  steps: 24
  seconds: 3
observe_ms: 500
variant: default
bait: [tickets-admin-token]
levers: [gateway-deny, net-disconnect]
flaws: [egress-network]
agent:
  script: $base/quiet.sh
EOP
hook2="$base/hook2"
mkdir -p "$hook2"
for h in lab-up stream agent levers observe sweep; do touch "$hook2/$h.go"; done
tls "$base/client" env ARES_TEST_HOOK="$hook2" "$ARES" drill --policy "$base/quiet.yaml" \
    --json "$base/quiet.json" >"$base/quiet.out" 2>&1 &
apid=$!
n=0
while [ ! -e "$hook2/teardown" ]; do
	n=$((n + 1))
	kill -0 "$apid" 2>/dev/null || break
	[ $n -lt 3000 ] || fail "the quiet drill did not reach its teardown"
	sleep 0.1
done
[ -e "$hook2/teardown" ] || fail "the quiet drill ended before its teardown hook: $(tail -30 "$base/quiet.out")"
running=$(rdocker ps -q --filter label=ares.run)
agent=$(rdocker ps -aq --no-trunc --filter label=ares.run --filter label=ares.role=agent | head -1)
sink=$(rdocker ps -aq --no-trunc --filter label=ares.run --filter label=ares.role=sink | head -1)
sinkip=
[ -z "$sink" ] || sinkip=$(rdocker inspect --format '{{range $k, $v := .NetworkSettings.Networks}}{{$v.IPAddress}} {{end}}' "$sink" 2>/dev/null |
    awk '{print $1}')
sent=0
if [ -n "$agent" ] && [ -n "$sinkip" ] &&
    rdocker exec "$agent" /bin/ares-lab http -d leaked-after-the-pull "http://$sinkip/x" >"$base/quiet.exec" 2>&1; then
	sent=1
	sleep 1   # the sink records it
fi
touch "$hook2/teardown.go"
wait "$apid"
rc=$?
apid=
[ -z "$running" ] || fail "lab containers still ran after the evidence pull: $running"
verdict=$(tj "$base/quiet.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(j["verdict"], j["leaks"])
PY
) || fail "the quiet drill's drill.json: $(tail -30 "$base/quiet.out")"
if [ $sent = 1 ]; then
	case $verdict in breached*) ;; *) fail "the agent leaked to the sink after the evidence pull and the verdict is $verdict" ;; esac
fi
case $verdict in contained*) fail "a quiet agent's run is contained: $verdict" ;; esac
qdir=$(tj "$base/quiet.json" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["run_dir"])
PY
)
grep -q '"type":"lab.killed"' "$qdir/evidence.jsonl" ||
    fail "no lab.killed line in the quiet drill's master chain"
"$ARES" verify "$qdir" >"$base/verify2.out" 2>&1 ||
    fail "ares verify of the quiet drill: $(cat "$base/verify2.out")"
echo "ok: a remote lab is killed (the agent first) before its chains are pulled: nothing ran at the teardown hook, the agent's send then $( [ $sent = 1 ] && echo went through || echo failed), verdict $verdict (exit $rc)"

# ---- 3c3. the engine lost under a remote drill after its lab is up -----
# The drill reaches the engine through a TCP forwarder here (the TLS
# session goes through it untouched), killed at a hook: at `stream` (the
# lab up and recorded, before its log streams are followed: the follow
# fails, an engine error) and at `observe`.  Either way the drill loses
# its engine with the lab up: it records engine.lost in that phase, must
# not stop anything through this machine's cgroups (the ids are the
# remote engine's word: lab.stopped says 0 and "remote engine"), and,
# though no sensor chain was pulled, it must end with a signed error
# report that verifies (a missing chain is named, never anchored).
fport=$((port + 1))
for at in stream:lab-up observe:observe; do
hk=${at%%:*}
phase=${at#*:}
python3 - "$fport" "$port" <<'PY' &
import socket, sys, threading
lp, tp = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", lp))
s.listen(64)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = s.accept()
    u = socket.create_connection(("127.0.0.1", tp))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
PY
fwpid=$!
for _ in $(seq 1 50); do ss -Hltn "sport = :$fport" | grep -q . && break; sleep 0.1; done
hook3="$base/hook3-$hk"
mkdir -p "$hook3"
for h in lab-up stream agent levers observe; do [ $h = "$hk" ] || touch "$hook3/$h.go"; done
tls "$base/client" env DOCKER_HOST="tcp://127.0.0.1:$fport" ARES_TEST_HOOK="$hook3" \
    "$ARES" drill --policy "$POLICY" --json "$base/lost.json" >"$base/lost.out" 2>&1 &
apid=$!
n=0
while [ ! -e "$hook3/$hk" ]; do
	n=$((n + 1))
	kill -0 "$apid" 2>/dev/null || break
	[ $n -lt 3000 ] || fail "the drill through the forwarder did not reach its $hk hook"
	sleep 0.1
done
[ -e "$hook3/$hk" ] || fail "the drill through the forwarder ended before $hk: $(tail -30 "$base/lost.out")"
kill "$fwpid"
wait "$fwpid" 2>/dev/null
fwpid=
for h in "$hk" sweep teardown; do touch "$hook3/$h.go"; done
wait "$apid"
rc=$?
apid=
[ $rc = 5 ] || fail "a remote drill that lost its engine at $hk: exit $rc (want 5): $(tail -30 "$base/lost.out")"
ldir=$(tj "$base/lost.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "error", j["verdict"]
assert "stopped answering" in j["verdict_reason"], j["verdict_reason"]
print(j["run_dir"])
PY
) || fail "the drill lost at $hk: drill.json: $(tail -30 "$base/lost.out")"
tj "$ldir/evidence.jsonl" "$phase" <<'PY' || fail "the drill lost at $hk: its master chain"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
st = [o for o in lines if o["type"] == "lab.stopped"]
assert len(st) == 1 and st[0]["stopped"] == 0 and "remote engine" in st[0]["note"], st
lost = [o for o in lines if o["type"] == "engine.lost"]
assert len(lost) == 1 and lost[0]["phase"] == sys.argv[2], lost
PY
[ -s "$ldir/report.json.minisig" ] || fail "the drill lost at $hk has no signed report: $(tail -30 "$base/lost.out")"
"$ARES" verify "$ldir" >"$base/verify3.out" 2>&1 ||
    fail "ares verify of the drill lost at $hk: $(cat "$base/verify3.out")"
grep -q "verdict error" "$base/verify3.out" || fail "the drill lost at $hk verifies, but not as error: $(cat "$base/verify3.out")"
# what it left on the engine (it could not tear it down): removed here
lrun=$(basename "$ldir")
[ -n "$(rdocker ps -q --filter "label=ares.run=$lrun" --filter label=ares.role=gateway)" ] ||
    fail "the lost drill's gateway no longer runs on the engine: something here stopped it"
ids=$(rdocker ps -aq --filter "label=ares.run=$lrun")
# shellcheck disable=SC2086
rdocker rm -f -v $ids >/dev/null || fail "remove the lost drill's containers"
vols=$(rdocker volume ls -q --filter "label=ares.run=$lrun")
# shellcheck disable=SC2086
[ -z "$vols" ] || rdocker volume rm $vols >/dev/null || fail "remove the lost drill's volumes"
nets=$(rdocker network ls -q --filter "label=ares.run=$lrun")
# shellcheck disable=SC2086
[ -z "$nets" ] || rdocker network rm $nets >/dev/null || fail "remove the lost drill's networks"
echo "ok: a remote drill that loses its engine at $hk (engine.lost in $phase) stops nothing through this machine's cgroups and still signs its error report (verify ok)"
done

# ---- 3d. a probe run on the remote engine -----------------------------
tls "$base/client" "$ARES" probe --policy "$POLICY" \
    --json "$base/probe.json" >"$base/probe.out" 2>&1
rc=$?
# 1: host-ports cannot run there (an ERROR, fail closed); never 0 or 5
[ $rc = 1 ] ||
    fail "a probe on the remote engine: exit $rc (want 1): $(tail -40 "$base/probe.out")"
tj "$base/probe.json" >"$base/probe.check" <<'PY' || fail "the remote probe: $(cat "$base/probe.check") $(tail -40 "$base/probe.out")"
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["id"]: r for r in j["rows"]}
assert j["complete"] is True, j.get("complete")
assert j["result"] == "failed", j["result"]
assert j["chains_anchored"] is True, j.get("chains_note")
assert j.get("chains_failed") is False, j.get("chains_note")
assert len(j["chains"]) >= 1, j["chains"]
hp = rows["host-ports"]
assert hp["result"] == "error" and "not run on a remote engine" in hp["observed"], hp
sm = rows["self-modify"]
assert sm["result"] == "pass", sm
bad = [i for i, r in rows.items() if r["core"] and r["result"] != "pass"
       and i != "host-ports"]
assert not bad, [(i, rows[i]["result"], rows[i]["observed"]) for i in bad]
print(j["run_id"])
PY
prdir="$ARES_RUNS/$(cat "$base/probe.check")"
[ -s "$prdir/probe.json" ] || fail "the remote probe's run dir has no probe.json: $prdir"
"$ARES" verify "$prdir" >"$base/verify.out" 2>&1 ||
    fail "ares verify of the remote probe: $(cat "$base/verify.out")"
[ -z "$(rdocker ps -aq --filter label=ares.run)" ] ||
    fail "the remote probe left containers"
echo "ok: a probe run on the remote engine: every core row but host-ports passed (self-modify through exec in the gateway; host-ports not run there, an ERROR), chains anchored, verify ok"

# a lab kept up there (ares lab up), probed with --run, then taken down
kept="$base/kept-lab"
tls "$base/client" "$ARES" lab up --policy "$POLICY" --run "$kept" >"$out" 2>&1 ||
    fail "ares lab up on the remote engine: $(tail -20 "$out")"
tj "$kept/lab.json" <<'PY' || fail "the kept lab's lab.json: $(head -c 1500 "$kept/lab.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine"]["remote"] is True and j["clock"] == "receipt", j.get("engine")
PY
[ -n "$(rdocker ps -q --filter label=ares.role=agent)" ] ||
    fail "ares lab up: no agent running on the remote engine"
tls "$base/client" "$ARES" probe --run "$kept" --json "$base/probe-run.json" \
    >"$base/probe-run.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "probe --run of the remote lab: exit $rc (want 1): $(tail -30 "$base/probe-run.out")"
tj "$base/probe-run.json" <<'PY' || fail "probe --run of the remote lab: $(tail -30 "$base/probe-run.out")"
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["id"]: r for r in j["rows"]}
assert rows["host-ports"]["result"] == "error", rows["host-ports"]
assert "not run on a remote engine" in rows["host-ports"]["observed"]
assert rows["self-modify"]["result"] == "pass", rows["self-modify"]
assert j["chains_anchored"] is False, j.get("chains_note")
PY
tls "$base/client" "$ARES" lab down --run "$kept" >"$out" 2>&1 ||
    fail "ares lab down of the remote lab: $(cat "$out")"
[ -z "$(rdocker ps -aq --filter label=ares.run)" ] ||
    fail "ares lab down left containers on the remote engine"
[ -z "$(rdocker volume ls -q --filter label=ares.run)" ] ||
    fail "ares lab down left volumes on the remote engine: $(rdocker volume ls --filter label=ares.run)"
echo "ok: ares lab up on the remote engine, probe --run of it (self-modify through exec, host-ports an ERROR), ares lab down: nothing left"

# ---- 3e. a trial over the suite's engine and the TLS engine, killed ----
# -n 4 over both.  The TLS engine is killed as soon as a drill's lab is
# being built there (its first labelled container), before its agent can
# take the bait: a drill that loses its engine after a breach is that
# run's result (docs/cli-trial.md), and on this engine the deny through
# exec leaves the agent time to breach; before it, the run is a failed
# attempt, rerun on the suite's engine.
SECOND="tcp://127.0.0.1:$port"
tls "$base/client" "$ARES" trial --policy "$POLICY" -n 4 --engine "$MAIN" \
    --engine "$SECOND" --json "$base/t.json" >"$base/t.out" 2>&1 &
apid=$!
n=0
while :; do
	n=$((n + 1))
	kill -0 "$apid" 2>/dev/null || fail "the trial ended before a drill ran on the TLS engine: $(tail -30 "$base/t.out")"
	[ $n -lt 3000 ] || fail "no drill ran on the TLS engine"
	rdocker ps -aq --filter label=ares.run 2>/dev/null | grep -q . && break
	sleep 0.1
done
note_bridges
kill_second
[ -z "$(second_pids | sort -u)" ] || fail "processes of the TLS engine survived SIGKILL"
kill -0 "$(cat /var/run/docker.pid 2>/dev/null || echo 1)" 2>/dev/null ||
    fail "the suite's engine is gone"
echo "killed the TLS engine under a drill"
n=0
while kill -0 "$apid" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 9000 ] || fail "the trial did not end within 15 min of the engine's loss"
	sleep 0.1
done
wait "$apid"
rc=$?
apid=
[ $rc = 0 ] || [ $rc = 4 ] ||
    fail "a trial with the TLS engine lost: exit $rc (want 0 or 4): $(tail -40 "$base/t.out")"
grep -q "engine $SECOND went away" "$base/t.out" ||
    fail "ares trial did not say the TLS engine went away: $(tail -40 "$base/t.out")"
tid=$(tj "$base/t.json" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["trial_id"])
PY
)
tdir="$ARES_RUNS/$tid"
tj "$tdir/trial.json" "$MAIN" "$SECOND" "$tdir" >"$base/t.check" <<'PY' || fail "the trial: $(cat "$base/t.check") $(tail -30 "$base/t.out")"
import json, os, sys
j = json.load(open(sys.argv[1]))
main, second, tdir = sys.argv[2:5]
assert j["format"] == "ares-trial-v2", j["format"]
assert [e["engine"] for e in j["engines"]] == [main, second], j["engines"]
assert j["complete"] is True and len(j["runs"]) == 4, j.get("complete")
s = j["summary"]
assert s["error"] == 0 and s["breached"] == 0, s
retried = 0
for r in j["runs"]:
    assert r["verdict"] in ("contained", "not-exercised"), r
    assert r["engine"] in (main, second), r
    for a in r["attempts"]:
        assert a["engine"] == second and a["verdict"] == "error", a
        assert a["reason"], a
        assert a["run_id"], a
        assert os.path.isdir(os.path.join(tdir, a["run_dir"])), a
        # the master chain is this machine's: a drill whose engine died
        # still signs its error report (its sensor chains are named
        # missing in it, never a report that cannot be signed)
        assert a["report_blake2b"], ("a failed attempt without a signed report", a)
        retried += 1
    if r["attempts"]:
        assert r["engine"] == main, r
assert retried >= 1, "no failed attempt on the killed engine"
print("runs:", ", ".join("%d on %s%s" % (r["index"], r["engine"],
    " (rerun)" if r["attempts"] else "") for r in j["runs"]))
PY
cat "$base/t.check"
"$ARES" verify "$tdir" >"$base/verify.out" 2>&1 ||
    fail "ares verify of the trial: $(cat "$base/verify.out")"
grep -q "^ok   trial.json: ares-trial-v2, " "$base/verify.out" ||
    fail "ares verify does not name the trial's format: $(cat "$base/verify.out")"
grep -q "^ok   run [0-9]*: failed attempt .* on $SECOND: error, report verified" \
    "$base/verify.out" || fail "ares verify did not verify the failed attempt: $(cat "$base/verify.out")"
tj "$tdir/trial.json" >"$base/attempt-ids" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["runs"] + j.get("pending", []):
    for a in r["attempts"]:
        print(a["run_id"])
PY
nv=0
for d in "$tdir"/runs/*; do
	[ -s "$d/report.json" ] || continue
	# (a failed attempt's dir is verified by the trial's verify above)
	grep -qx "$(basename "$d")" "$base/attempt-ids" && continue
	"$ARES" verify "$d" >"$base/verify-run.out" 2>&1 ||
	    fail "ares verify $d: $(cat "$base/verify-run.out")"
	nv=$((nv + 1))
done
[ $nv = 4 ] || fail "$nv run dirs verified (want 4)"
echo "ok: a trial over the suite's engine and the TLS engine, the TLS engine killed mid-trial: its run(s) failed attempts rerun on the suite's engine, trial.json names each run's engine, the trial, the failed attempt and all 4 run dirs verify"
sort -u "$base/bridges" 2>/dev/null | while read -r br; do
	[ -n "$br" ] && ip link del "$br" 2>/dev/null
done

# ---- 4. ssh:// -------------------------------------------------------
# A stand-in for ssh on PATH: it checks the options ares gives it, then
# runs `docker system dial-stdio` against the suite's engine (as the real
# one would run it on HOST).  Unknown hosts fail as ssh does.
mkdir -p "$base/bin"
cat >"$base/bin/ssh" <<'SH'
#!/bin/sh
echo "$*" >>"$FAKE_SSH_LOG"
case " $* " in *" -o BatchMode=yes "*) ;; *) echo "no BatchMode" >&2; exit 9;; esac
while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
[ "${1:-}" = "--" ] || { echo "no -- before the host" >&2; exit 9; }
shift
host=$1; shift
[ "$host" = "engine.test" ] || { echo "ssh: Could not resolve hostname $host: Name or service not known" >&2; exit 255; }
[ "$*" = "docker system dial-stdio" ] || { echo "bad command: $*" >&2; exit 9; }
unset DOCKER_HOST DOCKER_TLS_VERIFY DOCKER_CERT_PATH
exec docker system dial-stdio
SH
chmod 0755 "$base/bin/ssh"
export FAKE_SSH_LOG="$base/ssh.log"
local_version=$(env -u DOCKER_HOST docker version --format '{{.Server.Version}}')
env PATH="$base/bin:$PATH" DOCKER_HOST="ssh://tester@engine.test:2222" \
    "$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "ares engine over ssh: exit $rc: $(cat "$out")"
grep -q "^engine    ssh://tester@engine.test:2222 (remote, ssh)" "$out" &&
    grep -q "^version   $local_version (API " "$out" ||
    fail "ares engine over ssh: $(cat "$out")"
grep -q -- "-o BatchMode=yes .*-l tester -p 2222 -- engine.test docker system dial-stdio" \
    "$FAKE_SSH_LOG" || fail "ssh was not run as documented: $(cat "$FAKE_SSH_LOG")"
# one connection for /version and both listings: one ssh child
[ "$(wc -l <"$FAKE_SSH_LOG")" = 1 ] ||
    fail "ssh ran $(wc -l <"$FAKE_SSH_LOG") times for one ares engine"
pgrep -f "$base/bin/ssh" >/dev/null && fail "an ssh child outlived ares"
pgrep -f "docker system dial-stdio" >/dev/null &&
    fail "a dial-stdio outlived ares"
ls -d "${TMPDIR:-/tmp}"/ares-ssh.* >/dev/null 2>&1 &&
    fail "the private ssh socket dir was left: $(ls -d "${TMPDIR:-/tmp}"/ares-ssh.*)"
echo "ok: ares engine over ssh (docker system dial-stdio), one ssh child, none left"

env PATH="$base/bin:$PATH" DOCKER_HOST="ssh://nowhere.test" \
    "$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 3 ] || fail "ssh to an unknown host: exit $rc (want 3): $(cat "$out")"
grep -q "ssh: Could not resolve hostname nowhere.test" "$out" ||
    fail "ssh's reason is not in the message: $(cat "$out")"
echo "ok: ssh's own error reaches the message (exit 3)"

env PATH="$base/bin:$PATH" DOCKER_HOST="ssh://-oProxyCommand=x@h" \
    "$ARES" engine >"$out" 2>&1
rc=$?
[ $rc = 2 ] || fail "ssh user that looks like an option: exit $rc (want 2)"
grep -q 'bad user' "$out" || fail "ssh bad user: $(cat "$out")"

ls -A "$ARES_RUNS" >"$base/runs-before-ssh"
env PATH="$base/bin:$PATH" DOCKER_HOST="ssh://tester@engine.test:2222" \
    "$ARES" drill --policy "$FLAWED" >"$out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "remote engine (ssh://tester@engine.test:2222): flaw docker-socket needs" "$out" ||
    fail "a docker-socket drill over ssh: exit $rc: $(cat "$out")"
ls -A "$ARES_RUNS" | cmp -s - "$base/runs-before-ssh" ||
    fail "a refused drill over ssh left a run dir"
echo "ok: an ssh engine is remote: a docker-socket drill is refused (exit 2), nothing made"
echo "PASS: remote engine over TLS and ssh"
