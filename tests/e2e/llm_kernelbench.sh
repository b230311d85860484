#!/usr/bin/env bash
# An LLM-backend KernelBench search on the CPU through a scripted session of the mock server
# (tests/fixtures/llm_replies/kb_session.json: replies written as models write them): the
# planner's plans, a coder's ModelNew that fails to load, the Debugger's repair, a cheat the
# static screen rejects; the search ends better than the seed. Skipped (77) where no python3
# has torch. Usage: llm_kernelbench.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
source "$src/tests/fixtures/kernelbench/e2e_setup.sh"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
"$kmcts" mock-llm --port 0 --session "$src/tests/fixtures/llm_replies/kb_session.json" >"$work/mock.out" 2>&1 &
server=$!
for _ in $(seq 1 50); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o "127.0.0.1:[0-9]*" "$work/mock.out" | cut -d: -f2)
[ -n "$port" ] || fail "the mock server did not start: $(cat "$work/mock.out")"
out=$("$kmcts" run "$src/tests/fixtures/kernelbench/llm/level1/1_row_sums.py" --set agents.backend=llm \
  --set agents.llm.base_url="http://127.0.0.1:$port" --set agents.llm.api_key_env= --set agents.plans_per_call=2 \
  --set evaluator.kernelbench.device=cpu --set evaluator.kernelbench.python="$python" \
  --set evaluator.cache_dir="$work/cache" --budget 4 --workers 1 --deterministic --seed 1 --quiet --out "$work/run" 2>&1) ||
  fail "the search exited $?: $out"
verdicts=$(sqlite3 "$work/run/run.sqlite" "select n.plan, n.verdict from nodes n order by n.id")
grep -q "compile_error" <<<"$verdicts" || fail "the broken ModelNew was not a compile error: $verdicts
$out"
grep -q "rejected" <<<"$verdicts" || fail "the cheat was not rejected: $verdicts"
sqlite3 "$work/run/run.sqlite" "select kind from edges" | grep -q debug || fail "no debug edge: $verdicts
$out"
best=$("$python" -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['best'].get('speedup_over_seed', 0))" "$work/run/summary.json")
"$python" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 1.5 else 1)" "$best" ||
  fail "the search did not improve on the seed (best over seed $best): $out"
# HIP prompts (KernelBench's hip backend) on this torch, which is not a ROCm build: refused before
# any agent call, exit 2, the torch named, no run folder.
refused=$("$kmcts" run "$src/tests/fixtures/kernelbench/llm/level1/1_row_sums.py" --set agents.backend=llm \
  --set agents.llm.base_url="http://127.0.0.1:$port" --set agents.llm.api_key_env= \
  --set agents.llm.kernelbench_backend=hip --set evaluator.kernelbench.device=cpu \
  --set evaluator.kernelbench.python="$python" --budget 4 --out "$work/hip" 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "HIP prompts on a torch without ROCm: exit $code, expected 2: $refused"
grep -q "kernelbench_backend=hip .*has torch .*(CPU only\|(CUDA" <<<"$refused" || fail "the refusal does not name the torch: $refused"
[ ! -e "$work/hip" ] || fail "the refused run left a run folder"
echo "2 passed, 0 failed (best over seed ${best}x; HIP prompts refused: ${refused#kmcts: error: })"
