#!/bin/sh
# actions.sh - .github/workflows/containment.yml and action.yml are valid
# GitHub Actions files whose install steps are complete (check_actions.py:
# the schema, the expressions, apt-get update before install, every
# package of .ci/run), and the checker rejects broken copies: one mutation
# per rule, each must fail with its own message.  Needs python3 and
# python3-yaml (in .ci/run's and bootstrap's lists); no Docker.
set -u
SRC=${ARES_SRCDIR:-.}
CHK="$SRC/tests/tools/check_actions.py"
WF="$SRC/.github/workflows/containment.yml"
AC="$SRC/action.yml"
T=$(mktemp -d "${TMPDIR:-/tmp}/ares-actions.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
n=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

python3 "$CHK" --workflow "$WF" --action "$AC" --ci-run "$SRC/.ci/run" \
    --bootstrap "$SRC/bootstrap" >"$T/ok.out" 2>&1 ||
    { fail "the shipped files do not pass"; cat "$T/ok.out" >&2; }

# mutate KIND FROM TO WANT: a copy of the workflow (wf) or the action (ac)
# with the first FROM replaced by TO must be rejected with WANT.
mutate() {
	kind=$1 from=$2 to=$3 want=$4
	n=$((n + 1))
	if [ "$kind" = wf ]; then src=$WF; else src=$AC; fi
	python3 - "$src" "$T/m$n.yml" "$from" "$to" <<'EOF' || { fail "mutation $n: '$from' not found"; return; }
import sys
s = open(sys.argv[1]).read()
if sys.argv[3] not in s:
    sys.exit(1)
open(sys.argv[2], "w").write(s.replace(sys.argv[3], sys.argv[4], 1))
EOF
	if [ "$kind" = wf ]; then
		set -- --workflow "$T/m$n.yml" --action "$AC"
	else
		set -- --workflow "$WF" --action "$T/m$n.yml"
	fi
	python3 "$CHK" "$@" --ci-run "$SRC/.ci/run" >"$T/m$n.out" 2>&1
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "mutation $n ($want): exit $rc, want 1"
	elif ! grep -qF -- "$want" "$T/m$n.out"; then
		fail "mutation $n: no '$want' in:"
		cat "$T/m$n.out" >&2
	fi
}

mutate wf 'permissions:' 'permission:' "unknown key 'permission'"
mutate wf '  pull_request:' '  pull_reqest:' "unknown event 'pull_reqest'"
mutate wf '    types: [opened' '    kinds: [opened' "unknown filter 'kinds'"
mutate wf '    runs-on: ubuntu-24.04' '    runs_on: ubuntu-24.04' 'missing runs-on'
mutate wf '      - uses: actions/checkout@v4' '      - uses: actions/checkout' "is not owner/repo@ref"
mutate wf '      - uses: actions/checkout@v4' '      - run: true
        uses: actions/checkout@v4' 'exactly one of uses and run'
mutate wf '${{ github.base_ref }}' '${{ github.base_ref }' 'unclosed ${{ expression'
mutate wf '${{ github.base_ref }}' '${{ gihub.base_ref }}' "unknown context 'gihub'"
mutate wf '${{ github.base_ref }}' '${{ inputs.base }}' "context 'inputs' is not available"
mutate wf 'apt-get update -q' 'true' 'apt-get install before apt-get update'
mutate wf ' runsc git' ' git' 'does not install what'
mutate wf '        with:
          fetch-depth: 0' '        wiht:
          fetch-depth: 0' "unknown step key 'wiht'"
mutate wf '      image: debian:bookworm' '      imag: debian:bookworm' "unknown key 'imag'"
mutate ac 'runs:' 'run:' "unknown key 'run'"
mutate ac '${{ inputs.compose-file }}' '${{ inputs.compose-path }}' 'inputs.compose-path is not declared'
mutate ac '${{ steps.gate.outputs.exit-code }}
  gate-dir' '${{ steps.gat.outputs.exit-code }}
  gate-dir' 'steps.gat: no earlier step has that id'
mutate ac '      shell: bash
      working-directory' '      working-directory' "run step needs shell"
mutate ac '          python3-yaml runsc git' '          runsc git' 'does not install what'
mutate ac '    description: the service that runs the agent
' '' 'needs a description'
mutate ac '  using: composite' '  using: node20' 'composite actions only'
mutate ac 'inputs.trials }}' 'inputs.trials }} ${{ secrets.X }}' "context 'secrets' is not available"
mutate ac '  service:' '  compose-file:' 'duplicate key'

[ $n -ge 20 ] || fail "only $n mutations"
if [ $fails -ne 0 ]; then
	echo "actions.sh: $fails failure(s)" >&2
	exit 1
fi
echo "ok - containment.yml and action.yml valid; $n broken copies rejected"
