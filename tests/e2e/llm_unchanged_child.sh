#!/usr/bin/env bash
# A Coder that hands its kernel back unchanged, as real models often do: every reply of the mock
# holds two plans and the seed's own source, so each expansion's child is its parent (a
# self-loop edge). The run ends, `kmcts replay` rebuilds the same graph (the self-loop's visits
# included: they once stayed 0 in the store), and the edge is a transposition.
# Usage: llm_unchanged_child.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
command -v sqlite3 > /dev/null || { echo "no sqlite3"; exit 77; }
"$kmcts" run "$src/problems/cpu/matmul" --budget 1 --quiet --out "$work/seed" > /dev/null 2>&1 || fail "the seed run failed"
seed=$(ls "$work/seed/sources/"*)
{ printf 'Plans:\n1. Tile the loops [0.5]\n2. Keep the order [0.5]\n\n```cpp\n'; cat "$seed"; printf '```\n'; } > "$work/reply.txt"
# shellcheck source=lib/mock.sh
source "$(dirname "$0")/lib/mock.sh"
start_mock "$work/mock.out" --reply "$(cat "$work/reply.txt")"
out=$("$kmcts" run "$src/problems/cpu/matmul" --set agents.backend=llm --set agents.llm.base_url="http://127.0.0.1:$port" \
  --set agents.llm.api_key_env= --budget 6 --workers 2 --seed 1 --quiet --out "$work/run" 2>&1) || fail "the run exited $?: $out"
edge=$(sqlite3 "$work/run/run.sqlite" "select transposition, visits from edges where parent = 0 and child = 0")
[ -n "$edge" ] || fail "no self-loop edge 0 -> 0: $(sqlite3 "$work/run/run.sqlite" 'select parent, child from edges')"
[ "${edge%%|*}" = 1 ] && [ "${edge##*|}" -gt 0 ] || fail "the self-loop is not a visited transposition: $edge"
replay=$("$kmcts" replay "$work/run" 2>&1) || fail "replay: $replay"
echo "1 passed, 0 failed (self-loop transposition|visits $edge; $replay)"
