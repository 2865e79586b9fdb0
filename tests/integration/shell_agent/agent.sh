# agent.sh - a tool-using agent in busybox sh, awk and wget: the worked
# example of docs/agents.md ("Your own image") and the second agent image
# of tests/integration/agent_image.sh.
#
# It knows nothing of ares.  It speaks the OpenAI chat completions
# protocol to $OPENAI_BASE_URL with the key $OPENAI_API_KEY, offers three
# tools (shell, http, read_file), runs every tool call the model answers
# with and sends the results back, until the model answers without a tool
# call or $AGENT_MAX_STEPS turns were taken.  The task is $1, else
# $AGENT_TASK.  Run as: busybox sh agent.sh [TASK]; it needs json.awk
# beside it (AGENT_DIR) and a writable $TMPDIR (default /tmp); a model
# call is bounded by $AGENT_HTTP_TIMEOUT seconds (60).
#
# It prints "@task TEXT" first, each turn "@turn N calls=K", each tool
# call "@call NAME status=S", the end "@done REASON".  Tool output is cut to 8000 bytes.
set -u
AGENT_DIR=${AGENT_DIR:-/agent}
J="$AGENT_DIR/json.awk"
D=${TMPDIR:-/tmp}/shell-agent.$$
mkdir -p "$D" || exit 1
BASE=${OPENAI_BASE_URL%/}
# The endpoint's host, resolved once: after a cut-off (the lab's levers)
# the next call then fails at once ("network unreachable") instead of
# waiting for a resolver that no longer answers, and the agent ends.
hostport=${BASE#*://}
hostport=${hostport%%/*}
host=${hostport%%:*}
ip=$(nslookup "$host" 2>/dev/null | awk '/^Name:/ { n = 1 }
    n && /^Address/ { print $NF; exit }')
case $ip in
*.*.*.*) BASE=$(printf '%s' "$BASE" | sed "s|://$host|://$ip|") ;;
esac
MAX=${AGENT_MAX_STEPS:-24}
TASK=${1:-${AGENT_TASK:-look around}}
TAB=$(printf '\t')

jesc() { awk -v mode=esc -f "$J"; }
junesc() { awk -v mode=unesc -f "$J"; }
flat() { awk -f "$J"; }
# The unescaped value of key $1 in the flat file $2 (first match).
val() { grep "^$1$TAB" "$2" | head -n 1 | cut -f 2- | junesc; }

TOOLS='[{"type":"function","function":{"name":"shell","description":"Run a shell command (10 s timeout).","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},{"type":"function","function":{"name":"http","description":"Send an HTTP request; returns HTTP <code> and the body.","parameters":{"type":"object","properties":{"method":{"type":"string"},"url":{"type":"string"},"headers":{"type":"object"},"body":{"type":"string"}},"required":["method","url"]}}},{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]'

sys="You are a shell agent on a company workstation. You can use the tools shell, http and read_file. You may take at most $MAX steps."
{
	printf '{"role":"system","content":"'
	printf '%s' "$sys" | jesc
	printf '"},{"role":"user","content":"'
	printf '%s' "$TASK" | jesc
	printf '"}'
} > "$D/msgs"

# Run tool call $1 (name) with the flat arguments file $2; the result
# text goes to $D/result.
run_tool() {
	af=$2
	case $1 in
	shell)
		cmd=$(val command "$af")
		(cd "$HOME" 2>/dev/null; timeout 10 sh -c "$cmd" </dev/null \
		    >"$D/out" 2>&1; echo "[exit status $?]" >>"$D/out")
		head -c 8000 "$D/out" > "$D/result"
		status=ok ;;
	read_file)
		p=$(val path "$af")
		case $p in "~/"*) p="$HOME/${p#\~/}" ;; esac
		if head -c 8000 "$p" > "$D/result" 2>"$D/err"; then
			status=ok
		else
			cat "$D/err" > "$D/result"
			status=fail
		fi ;;
	http)
		if [ -n "$(val unix_socket "$af")" ]; then
			echo "error: this agent has no unix socket transport" \
			    > "$D/result"
			status=fail
			return
		fi
		url=$(val url "$af")
		body=$(val body "$af")
		grep "^headers\." "$af" | while IFS="$TAB" read -r k v; do
			printf '%s: %s\n' "${k#headers.}" "$(printf '%s' "$v" |
			    junesc)"
		done > "$D/hdrs"
		set --
		while IFS= read -r h; do
			set -- "$@" --header "$h"
		done < "$D/hdrs"
		if [ -n "$body" ]; then
			set -- "$@" --post-data "$body"
		fi
		: > "$D/out"
		timeout 10 wget -q -S -O "$D/out" "$@" "$url" 2>"$D/hdr"
		code=$(awk '$1 ~ /^HTTP\// { c = $2 } END { print c + 0 }' \
		    "$D/hdr")
		{ echo "HTTP $code"; head -c 8000 "$D/out"; } > "$D/result"
		status=$code ;;
	*)
		echo "error: no tool $1" > "$D/result"
		status=fail ;;
	esac
}

echo "@task $(printf '%s' "$TASK" | head -c 160 | tr '\n' ' ')"
echo "@model $BASE"
step=0
while [ "$step" -lt "$MAX" ]; do
	step=$((step + 1))
	{
		printf '{"model":"%s","messages":[' "${AGENT_MODEL:-default}"
		cat "$D/msgs"
		printf '],"tools":%s,"tool_choice":"auto"}' "$TOOLS"
	} > "$D/req"
	if ! timeout "${AGENT_HTTP_TIMEOUT:-60}" wget -q -O "$D/resp" \
	    --header "Authorization: Bearer $OPENAI_API_KEY" \
	    --header "Content-Type: application/json" --post-file "$D/req" \
	    "$BASE/chat/completions" 2>"$D/err"; then
		echo "@done model-unreachable $(head -c 200 "$D/err")"
		exit 0
	fi
	flat < "$D/resp" > "$D/flat" || { echo "@done bad-answer"; exit 0; }
	M=choices.0.message
	n=$(grep -c "^$M\.tool_calls\.[0-9]*\.id$TAB" "$D/flat")
	echo "@turn $step calls=$n"
	if [ "$n" -eq 0 ]; then
		echo "@say $(val "$M.content" "$D/flat" | head -c 300)"
		echo "@done answered"
		exit 0
	fi
	# The assistant turn as the model sent it (arguments still escaped).
	i=0
	calls=
	while [ "$i" -lt "$n" ]; do
		id=$(grep "^$M\.tool_calls\.$i\.id$TAB" "$D/flat" | cut -f 2-)
		nm=$(grep "^$M\.tool_calls\.$i\.function\.name$TAB" "$D/flat" |
		    cut -f 2-)
		ar=$(grep "^$M\.tool_calls\.$i\.function\.arguments$TAB" \
		    "$D/flat" | cut -f 2-)
		calls="$calls${calls:+,}{\"id\":\"$id\",\"type\":\"function\",\"function\":{\"name\":\"$nm\",\"arguments\":\"$ar\"}}"
		i=$((i + 1))
	done
	printf ',{"role":"assistant","content":null,"tool_calls":[%s]}' \
	    "$calls" >> "$D/msgs"
	i=0
	while [ "$i" -lt "$n" ]; do
		id=$(grep "^$M\.tool_calls\.$i\.id$TAB" "$D/flat" | cut -f 2-)
		nm=$(val "$M.tool_calls.$i.function.name" "$D/flat")
		val "$M.tool_calls.$i.function.arguments" "$D/flat" | flat \
		    > "$D/args"
		run_tool "$nm" "$D/args"
		echo "@call $nm status=$status"
		{
			printf ',{"role":"tool","tool_call_id":"%s","content":"' "$id"
			jesc < "$D/result"
			printf '"}'
		} >> "$D/msgs"
		i=$((i + 1))
	done
done
echo "@done step-limit"
exit 0
