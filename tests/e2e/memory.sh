#!/usr/bin/env bash
# Whole-command tests of the optimisation archive (issue 30, item 4; search/memory_archive.hpp):
# a search records its improvements as it ends, and so does a resume; the same search again
# finds them there; a run of the replay evaluator records nothing; `kmcts memory
# list|show|export|import` on it; a run with agents.memory.k keeps the lines its Planner is
# shown; agents.feedback.memory=false records nothing; an import line
# that is not an entry is named by file and line; an archive that cannot be written does not
# fail the search.
# Usage: memory.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

# shellcheck source=lib/check.sh
source "$(dirname "$0")/lib/check.sh"

archive="$work/memory.sqlite"
# A short search of the CPU matmul, measured (the replay evaluator records nothing: below).
search() {
  "$kmcts" run "$src/problems/cpu/matmul" --budget 8 --seed 3 --workers 1 --set evaluator.cache_dir="$work/cache" \
    --set agents.memory.path="$archive" --out "$1" "${@:2}"
}
check "search records" 0 "memory: [1-9][0-9]* improvement\(s\) recorded in $archive \(0 already there\)" -- search "$work/r1"
# The same search again finds the same kernels: what it finds faster again is there already (a
# pair within the noise may turn either way).
check "same search again" 0 "memory: [0-9]+ improvement\(s\) recorded .*\([1-9][0-9]* already there\)" -- search "$work/r2"
count=$("$kmcts" memory list --path "$archive" | head -1 | cut -d' ' -f1)
# A run of the replay evaluator answers with another run's measurements: it records nothing.
"$kmcts" run "$src/problems/cpu/matmul" --set evaluator.name=replay \
  --set evaluator.replay.runs="$src/bench/search_quality/recorded/matmul-devbox" --budget 12 --seed 3 --workers 1 \
  --set agents.memory.path="$archive" --out "$work/replayed" > "$work/replayed.txt" 2>&1
if ! grep -q "memory:" "$work/replayed.txt" && [ "$("$kmcts" memory list --path "$archive" | head -1 | cut -d' ' -f1)" = "$count" ]; then
  passes=$((passes + 1))
else
  echo "FAIL a replayed run recorded: $(grep memory: "$work/replayed.txt")"
  failures=$((failures + 1))
fi
# A resume past its budget records what its new evaluations found (those already there skipped).
check "resume records" 0 "memory: [0-9]+ improvement\(s\) recorded in $archive \([0-9]+ already there\)" -- \
  "$kmcts" resume "$work/r1" --budget 14
count=$("$kmcts" memory list --path "$archive" | head -1 | cut -d' ' -f1)
check "list" 0 "^ +1 +[0-9.]+x +matmul +cpu " -- "$kmcts" memory list --path "$archive"
check "show" 0 '"plan": "[^"]+"' -- "$kmcts" memory show 1 --path "$archive"
show=$("$kmcts" memory show 1 --path "$archive")
for field in parent_source child_source parent_ns child_ns speedup hardware signature; do
  python3 -c "import json,sys; e=json.load(sys.stdin); assert e['$field'] not in ('', None, 0), '$field'" <<<"$show" \
    && passes=$((passes + 1)) || { echo "FAIL show: $field is empty"; failures=$((failures + 1)); }
done
check "show a missing entry" 2 "no entry 999 in $archive" -- "$kmcts" memory show 999 --path "$archive"
check "export" 0 "" -- "$kmcts" memory export "$work/all.jsonl" --path "$archive"
[ "$(wc -l < "$work/all.jsonl")" = "$count" ] && passes=$((passes + 1)) ||
  { echo "FAIL export: $(wc -l < "$work/all.jsonl") lines for $count entries"; failures=$((failures + 1)); }
check "import into another" 0 "^$count entr(y|ies) added, 0 already there" -- "$kmcts" memory import "$work/all.jsonl" --path "$work/copy.sqlite"
check "import again" 0 "^0 entries added, $count already there" -- "$kmcts" memory import "$work/all.jsonl" --path "$work/copy.sqlite"
{ head -1 "$work/all.jsonl"; echo '{"kind": "cpu"}'; } > "$work/bad.jsonl"
check "import a bad line" 2 "bad.jsonl:2: a memory entry lacks \"parent_hash\"" -- "$kmcts" memory import "$work/bad.jsonl" --path "$work/bad.sqlite"
check "switched off" 0 "speedup" -- search "$work/r3" --set agents.feedback.memory=false --set agents.memory.path="$work/off.sqlite"
[ ! -e "$work/off.sqlite" ] && passes=$((passes + 1)) || { echo "FAIL switched off: the archive was made"; failures=$((failures + 1)); }
# A run with agents.memory.k takes the archive's most relevant lines for its Planner at its
# start, into its run_info (and up to 4k candidates, which the seed's measurement ranks again
# for the first plan call); the default (k = 5) takes up to five, k = 0 none.
search "$work/r5" --set agents.memory.k=2 > /dev/null 2>&1
"$kmcts" export "$work/r5" --format json -o "$work/r5.json"
python3 - "$work/r5.json" <<'PY' && passes=$((passes + 1)) || { echo "FAIL memory_prompt of a run with k=2"; failures=$((failures + 1)); }
import json, sys
run = json.load(open(sys.argv[1]))["run"]
lines = run["memory_prompt"].splitlines()
assert len(lines) == 2 and all(l.startswith('- "') and "x faster than its parent" in l for l in lines), lines
# Up to 4k candidates kept, ranked again by the seed's measurement at the first plan call.
assert run["memory_k"] == 2 and 2 <= len(run["memory_candidates"]) <= 8, run.get("memory_candidates")
assert all(c["line"].startswith('- "') and "rank" in c and "hardware" in c for c in run["memory_candidates"])
PY
"$kmcts" export "$work/r2" --format json -o "$work/r2.json"
python3 -c "import json,sys; n = len(json.load(open(sys.argv[1]))['run']['memory_prompt'].splitlines()); assert 1 <= n <= 5, n" \
  "$work/r2.json" && passes=$((passes + 1)) || { echo "FAIL a run with the default k (5) took no memory, or more"; failures=$((failures + 1)); }
search "$work/r6" --set agents.memory.k=0 > /dev/null 2>&1
"$kmcts" export "$work/r6" --format json -o "$work/r6.json"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['run']['memory_prompt'] == ''" "$work/r6.json" \
  && passes=$((passes + 1)) || { echo "FAIL a run with k=0 took memory"; failures=$((failures + 1)); }
# An archive that cannot be written costs the search nothing but the line that says so.
check "unwritable archive" 0 "memory: not recorded in /proc/kmcts-nope/m.sqlite: " -- \
  search "$work/r4" --set agents.memory.path=/proc/kmcts-nope/m.sqlite
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
