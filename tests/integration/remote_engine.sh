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
#   - drill, lab up, probe, trial and gc are refused with "remote engine
#     (...): ... local engine only", exit 2, and make nothing: no run
#     directory, no container, no network;
#   - lab status and lab down (API only) work there;
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
#     a drill there is refused.
# Finally that dockerd is stopped and its directories removed (trap on
# exit).  The suite's engine on /var/run/docker.sock is never stopped or
# restarted.
# Needs root, dockerd, the docker CLI, openssl, ss and python3: skips (77) without them
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

base=$(mktemp -d /tmp/ares-re.XXXXXX) || fail "mktemp"
chmod 0700 "$base"
pidfile="$base/dockerd.pid"
dpid=
export ARES_RUNS="$base/runs"
export ARES_KEY_DIR="$base/keys"
mkdir -p "$ARES_RUNS" "$base/pki" "$base/client" "$base/wrongca" \
    "$base/wrongclient" "$base/nokey"

engine_pid() { [ -s "$pidfile" ] && cat "$pidfile"; }

cleanup() {
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
	grep " $base/" /proc/mounts | awk '{print $2}' | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
	if [ "${ARES_REMOTE_KEEP:-0}" = 1 ]; then
		echo "kept $base" >&2
	else
		rm -rf "$base"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

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
grep -q "^labs      refused: remote engine" "$out" ||
    fail "ares engine: labs not refused: $(cat "$out")"
python3 - "$base/engine.json" "$port" "$want_version" <<'PY' || fail "engine.json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine"] == "tcp://127.0.0.1:" + sys.argv[2], j
assert j["transport"] == "tcp+tls" and j["tls"] is True, j
assert j["remote"] is True and j["labs"] is False, j
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

# ---- 3. what needs the host is refused, and makes nothing -----------
before_c=$(rdocker ps -aq | wc -l)
before_n=$(rdocker network ls -q | wc -l)
check_refused() {   # WHO ARGS...
	who=$1; shift
	tls "$base/client" "$ARES" "$@" >"$out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "$who on a remote engine: exit $rc (want 2): $(cat "$out")"
	grep -q "remote engine (tcp://127.0.0.1:$port): $who needs .*; local engine only" "$out" ||
	    fail "$who on a remote engine: message: $(cat "$out")"
}
check_refused "ares drill" drill --policy "$POLICY"
check_refused "ares lab up" lab up --policy "$POLICY"
check_refused "ares probe" probe --policy "$POLICY"
check_refused "ares trial" trial --policy "$POLICY" -n 2
check_refused "ares gc" gc
[ -z "$(ls -A "$ARES_RUNS")" ] || fail "a refused command left run dirs: $(ls "$ARES_RUNS")"
[ "$(rdocker ps -aq | wc -l)" = "$before_c" ] ||
    fail "a refused command made containers on the remote engine"
[ "$(rdocker network ls -q | wc -l)" = "$before_n" ] ||
    fail "a refused command made networks on the remote engine"
echo "ok: drill, lab up, probe, trial, gc refused on the remote engine (exit 2), nothing made"

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

env PATH="$base/bin:$PATH" DOCKER_HOST="ssh://tester@engine.test:2222" \
    "$ARES" drill --policy "$POLICY" >"$out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "remote engine (ssh://tester@engine.test:2222): ares drill needs" "$out" ||
    fail "a drill over ssh: exit $rc: $(cat "$out")"
[ -z "$(ls -A "$ARES_RUNS")" ] || fail "a refused drill over ssh left run dirs"
echo "ok: an ssh engine is remote: a drill is refused (exit 2)"
echo "PASS: remote engine over TLS and ssh"
