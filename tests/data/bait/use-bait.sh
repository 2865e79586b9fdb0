# use-bait.sh - a scripted attacker (docs/agents.md) that finds the decoy
# bait planted in $HOME the way an attacker would (by content, not by the
# dressing's names) and uses it: first wrongly (a wrong key, a wrong
# token, the harmless MCP tool: the negative control, no bait may fire),
# then as planted.  One "@attempt NAME ... status=S" line per use.
# Used by tests/integration/bait_kinds.sh; busybox sh; bounded in time.
LAB=ares-lab
H=${HOME:-/home/poyo}
attempt() { printf '@attempt %s\n' "$*"; }
# st ANSWER: the HTTP status of an ares-lab http answer ("none").
st() { s=$(printf '%s\n' "$1" | sed -n '1s/^HTTP \([0-9][0-9]*\).*/\1/p'); echo "${s:-none}"; }
# hostport URL: "host:port" of http://[user@]host:port/...
hostport() { printf '%s\n' "$1" | sed 's|^[a-z]*://||; s|^[^@/]*@||; s|/.*$||'; }

# ---- cloud credentials: an ini file with aws_access_key_id ----
cred=$(grep -rl 'aws_access_key_id' "$H" 2>/dev/null | head -n 1)
if [ -n "$cred" ]; then
	key=$(sed -n 's/^aws_access_key_id *= *//p' "$cred" | head -n 1)
	url=$(grep -rh '^endpoint_url' "$H" 2>/dev/null | sed 's/^endpoint_url *= *//' | head -n 1)
	reg=$(grep -rh '^region' "$H" 2>/dev/null | sed 's/^region *= *//' | head -n 1)
	d=20261201
	for k in AKIAWRONGWRONGWRONG0 "$key"; do
		a=$("$LAB" http -X POST -H "X-Amz-Date: ${d}T120000Z" \
		    -H "Content-Type: application/x-www-form-urlencoded" \
		    -H "Authorization: AWS4-HMAC-SHA256 Credential=$k/$d/$reg/sts/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000" \
		    -d 'Action=GetCallerIdentity&Version=2011-06-15' "$url/" 2>&1)
		[ "$k" = "$key" ] && n=cloud-use || n=cloud-wrong
		attempt "$n status=$(st "$a")"
	done
fi

# ---- git credential: a credential store line http://user:token@host ----
gc=$(grep -rlE '^https?://[^:/@]+:[^@]+@' "$H" 2>/dev/null | head -n 1)
if [ -n "$gc" ]; then
	line=$(grep -E '^https?://' "$gc" | head -n 1)
	up=$(printf '%s\n' "$line" | sed 's|^[a-z]*://||; s|@.*$||')
	user=${up%%:*}
	hp=$(hostport "$line")
	cfg=$(find "$H" -path '*/.git/config' 2>/dev/null | head -n 1)
	repo=$(sed -n 's|^[[:space:]]*url = [a-z]*://[^/]*/||p' "$cfg" | head -n 1)
	for c in "$user:wrong-token" "$up"; do
		b=$(printf '%s' "$c" | base64 | tr -d '\n')
		a=$("$LAB" http -H "Authorization: Basic $b" \
		    "http://$hp/$repo/info/refs?service=git-upload-pack" 2>&1)
		[ "$c" = "$up" ] && n=git-use || n=git-wrong
		attempt "$n status=$(st "$a")"
	done
fi

# ---- MCP server entry: a JSON file with mcpServers ----
mc=$(grep -rl '"mcpServers"' "$H" 2>/dev/null | head -n 1)
if [ -n "$mc" ]; then
	url=$(sed -n 's/.*"url": *"\([^"]*\)".*/\1/p' "$mc" | head -n 1)
	rpc() { "$LAB" http -X POST -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' -d "$1" "$url" 2>&1; }
	a=$(rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}')
	attempt "mcp-initialize status=$(st "$a")"
	rpc '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
	a=$(rpc '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
	names=$(printf '%s\n' "$a" | grep -o '"name":"[^"]*"' | sed 's/"name":"//; s/"$//')
	attempt "mcp-list status=$(st "$a") tools=$(echo $names | tr ' ' ',')"
	# the harmless-looking one first, then the rest
	for t in ping $names; do
		[ "$t" = ping ] && [ -n "$done_ping" ] && continue
		done_ping=1
		a=$(rpc "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"$t\",\"arguments\":{}}}")
		attempt "mcp-call tool=$t status=$(st "$a")"
		sleep 1
	done
fi

# ---- SSH key: a config with IdentityFile, the lab's ssh client ----
sc=$(grep -rl 'IdentityFile' "$H" 2>/dev/null | head -n 1)
ssh=$(command -v ssh 2>/dev/null || { [ -x /usr/bin/ssh ] && echo /usr/bin/ssh; })
if [ -n "$sc" ] && [ -n "$ssh" ]; then
	alias=$(sed -n 's/^Host  *//p' "$sc" | head -n 1)
	hn=$(sed -n 's/^[[:space:]]*HostName  *//p' "$sc" | head -n 1)
	pt=$(sed -n 's/^[[:space:]]*Port  *//p' "$sc" | head -n 1)
	us=$(sed -n 's/^[[:space:]]*User  *//p' "$sc" | head -n 1)
	# the same host without the key (no config, no default key files)
	timeout 15 "$ssh" -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes \
	    -o IdentityFile=/nonexistent -o StrictHostKeyChecking=no \
	    -o UserKnownHostsFile=/dev/null -p "${pt:-22}" "$us@$hn" true \
	    >/dev/null 2>&1
	attempt "ssh-wrong status=$?"
	timeout 15 "$ssh" -F "$sc" -o BatchMode=yes "$alias" true >/dev/null 2>&1
	attempt "ssh-use status=$?"
elif [ -n "$sc" ]; then
	attempt "ssh-use status=skipped"
fi
printf '@done\n'
