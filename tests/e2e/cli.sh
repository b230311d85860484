#!/usr/bin/env bash
# Whole-command tests of the kmcts binary: exit codes, one-line errors, outputs.
# Usage: cli.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

# shellcheck source=lib/check.sh
source "$(dirname "$0")/lib/check.sh"

fixture="$src/tests/fixtures/synthetic_space"

check "help" 0 "Subcommands" -- "$kmcts" --help
check "no subcommand" 2 "subcommand" -- "$kmcts"
check "explain" 0 "search.exploration .*double" -- "$kmcts" config --explain
check "default config matches the shipped file" 0 '"budget": 40' -- "$kmcts" config --config "$src/configs/default.json"
# The shipped file lists every option with its default, as `kmcts config` prints them (an option
# missing from it would still load, with its default, so the file itself is compared).
diff <("$kmcts" config) "$src/configs/default.json" >/dev/null \
  && passes=$((passes + 1)) || { echo "FAIL configs/default.json differs from the embedded defaults (kmcts config > configs/default.json)"; failures=$((failures + 1)); }
check "unknown key" 2 "^kmcts: error: --set: unknown option 'search.budgt' \(did you mean 'search.budget'\?\)$" -- \
  "$kmcts" run "$fixture" --set search.budgt=3
check "out of range" 2 "option 'search.exploration' must be >= 0" -- "$kmcts" run "$fixture" --set search.exploration=-1
check "missing problem" 2 "problem folder '$work/nope' does not exist" -- "$kmcts" run "$work/nope"
# A HIP problem where ROCm's rocprofv3 (or, in a build without hipcc, the HIP worker) is missing:
# refused in one line naming what is missing, before anything is built or recorded.
check "hip problem" 2 "^kmcts: error: (cannot run rocprofv3 .*HIP measurements are timed by its traces|.*kmcts-hip-worker)" -- \
  "$kmcts" run "$src/problems/hip/colsum" --out "$work/hip-run" --set evaluator.hip.rocprofv3=/nonexistent/rocprofv3
echo '{"search": {"budget": "lots"}}' >"$work/bad.json"
check "bad config type" 2 "$work/bad.json: option 'search.budget' must be an integer" -- "$kmcts" run "$fixture" --config "$work/bad.json"
check "config, unknown policy" 2 "unknown selection policy 'foo' \(known: " -- "$kmcts" config --set search.policy=foo
check "config, misspelt refinement with a baseline strategy" 2 "unknown refinement 'bandt' \(known: bandit, off\)" -- \
  "$kmcts" config --set search.strategy=beam --set search.refine=bandt
check "config, misspelt chain rule" 2 "unknown chain rule 'records' \(known: improving, record\)" -- \
  "$kmcts" config --set search.chain=records
check "config, unknown evaluator" 2 "unknown evaluator 'gpu9' \(known: " -- "$kmcts" config --set evaluator.name=gpu9
echo '{"search": {"budget": 5}, "search.budget": 6}' >"$work/twice.json"
check "a key given twice" 2 "option 'search.budget' is given twice, as \"search\" > \"budget\" and as \"search.budget\"" -- \
  "$kmcts" config --config "$work/twice.json"
echo '{"search": ' >"$work/broken.json"
check "broken config" 2 "is not valid JSON" -- "$kmcts" config --config "$work/broken.json"
check "unknown evaluator" 2 "unknown evaluator 'gpu9' \(known: cpu, cuda, hip, kernelbench, replay, synthetic\)" -- "$kmcts" run "$fixture" --set evaluator.name=gpu9
check "doctor" 0 "host compiler +yes" -- "$kmcts" doctor
# Pools are sized by the CPUs this process may use: its affinity mask (and a cgroup quota).
first_cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')  # CPU 0 need not be in this shell's mask
check "doctor, one CPU by affinity" 0 "^cpus +yes +1 usable \(affinity 1 of [0-9]+ online" -- taskset -c "$first_cpu" "$kmcts" doctor

run="$work/run"
check "run (synthetic)" 0 "speedup .*x over seed" -- "$kmcts" run "$fixture" --set evaluator.name=synthetic --budget 15 --seed 3 --out "$run"
check "run again into the same dir" 2 "already holds a run" -- "$kmcts" run "$fixture" --set evaluator.name=synthetic --out "$run"
mkdir -p "$work/notes" && echo "keep me" > "$work/notes/notes.txt"
check "run into a folder of other files" 2 "^kmcts: error: --out $work/notes: the folder is not empty and holds no run \(notes.txt\)" -- \
  "$kmcts" run "$fixture" --set evaluator.name=synthetic --out "$work/notes"
check "that folder untouched" 0 "^notes.txt$" -- ls "$work/notes"
check "show" 0 "evaluations +15" -- "$kmcts" show "$run"
check "replay" 0 "the rebuilt graph equals the stored one" -- "$kmcts" replay "$run"
check "replay missing" 2 "$work/none" -- "$kmcts" replay "$work/none"
check "show missing" 2 "$work/none" -- "$kmcts" show "$work/none"
check "export json" 0 '"nodes"' -- "$kmcts" export "$run" --format json
check "export dot" 0 "^digraph" -- "$kmcts" export "$run" --format dot
check "export csv" 0 "^id,hash,status,verdict,origin,depth,plan,parents,visits,value," -- "$kmcts" export "$run" --format csv
"$kmcts" export "$run" --format csv -o "$work/nodes.csv"
nodes=$("$kmcts" export "$run" --format json | grep -c '"created_seq"')
rows=$(grep -cE '^[0-9]+,[0-9a-f]{64},' "$work/nodes.csv")
[ "$rows" = "$nodes" ] && [ "$nodes" -gt 1 ] && passes=$((passes + 1)) || { echo "FAIL csv has $rows node rows, json $nodes nodes"; failures=$((failures + 1)); }
check "export bad format" 2 "format" -- "$kmcts" export "$run" --format png
if command -v dot >/dev/null; then
  "$kmcts" export "$run" --format dot -o "$work/tree.dot"
  check "dot renders" 0 "<svg" -- dot -Tsvg "$work/tree.dot"
  check "export svg" 0 "^$" -- "$kmcts" export "$run" --format svg -o "$work/tree.svg"
  check "svg file written" 0 "</svg>" -- cat "$work/tree.svg"
fi
# With no dot on PATH, svg is a one-line input error that says what to do.
check "export svg, dot missing" 2 "^kmcts: error: svg export needs Graphviz's dot \(apt-get install graphviz\); use --format dot$" -- \
  env PATH=/nonexistent "$kmcts" export "$run" --format svg
# The real CPU evaluator through the binary (the unit suite checks the speedups themselves).
check "run (cpu)" 0 "evaluations +5 " -- "$kmcts" run "$src/problems/cpu/matmul" --budget 5 --out "$work/cpu" \
  --set evaluator.cache_dir="$work/cache" --quiet
check "cpu run recorded its sources" 0 "." -- ls "$work/cpu/sources"
check "replay (cpu)" 0 "equals the stored one" -- "$kmcts" replay "$work/cpu"
# kmcts measure: one evaluation outside a search, and its JSON line.
check "measure (cpu)" 0 "^seed \[1/1\] ok: speedup" -- "$kmcts" measure "$src/problems/cpu/matmul" \
  --set evaluator.cache_dir="$work/cache" --set evaluator.max_time_ms=100 --jsonl "$work/m.jsonl"
check "measure wrote its result" 0 '"verdict":"ok"' -- cat "$work/m.jsonl"
check "measure, missing source" 2 "cannot read the source '$work/none.cpp'" -- "$kmcts" measure "$src/problems/cpu/matmul" "$work/none.cpp"
echo "this is not C++" >"$work/broken.cpp"
check "measure, a source that fails" 1 "measurement\(s\) did not pass" -- "$kmcts" measure "$src/problems/cpu/matmul" \
  "$work/broken.cpp" --set evaluator.cache_dir="$work/cache"
# resume on a folder that is not a run: exit 2 naming it, and nothing written there.
check "resume, missing folder" 2 "run directory '$work/nowhere' does not exist" -- "$kmcts" resume "$work/nowhere"
mkdir -p "$work/notarun"
check "resume, not a run" 2 "'$work/notarun' is not a kmcts run directory" -- "$kmcts" resume "$work/notarun"
[ -z "$(ls -A "$work/notarun")" ] && passes=$((passes + 1)) || { echo "FAIL resume wrote into a folder that is not a run"; failures=$((failures + 1)); }
# A CUDA problem on a machine without a GPU (or a build without CUDA): one line saying why.
check "cuda without a GPU" 2 "no CUDA GPU found|built without the CUDA toolkit" -- \
  env CUDA_VISIBLE_DEVICES= "$kmcts" run "$src/problems/cuda/softmax" --budget 1 --out "$work/cuda"
check "cuda: bad --gpus" 2 "evaluator.cuda.gpus: 'x' is not a list of GPU indices" -- \
  "$kmcts" run "$src/problems/cuda/softmax" --gpus x --out "$work/cuda2"
grep -q '"evaluations": 15' "$run/summary.json" && passes=$((passes + 1)) || { echo "FAIL summary.json"; failures=$((failures + 1)); }

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
