#!/usr/bin/env bash
# Resume is exact (issue 27, item 1): a deterministic run stopped at any point a kill can leave
# and resumed makes the agent calls, and builds the graph, that the uninterrupted run did: the
# two event logs are equal event for event (resumes aside). Stops: ends of store batches (every
# second with the rule agents, every third with the LLM; all of them pass, checked by hand)
# (the run cut there, as a kill right after it leaves it), and real SIGKILLs at random moments,
# several per run. With the rule agents on the synthetic evaluator, and with the LLM backend
# through the mock server on the replay evaluator.
# Usage: resume_exact.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=lib/cut_run.sh
source "$(dirname "$0")/lib/cut_run.sh"
fail() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
passes=0

# every_cut NAME RUN STEP: the run cut at every STEP-th of its batch ends and resumed equals RUN.
every_cut() {
  local name=$1 run=$2 step=$3 want got cut cuts n=0
  want=$(event_signature "$run")
  cuts=$(batch_ends "$run" | tr ' ' '\n' | awk -v step="$step" 'NR % step == 1 || step == 1')
  [ -n "$cuts" ] || fail "$name: no batch ends in $run"
  for cut in $cuts; do
    cut_run "$run" "$work/cut" "$cut" || fail "$name: cannot cut the run at $cut"
    out=$("$kmcts" resume "$work/cut" --quiet 2>&1) || fail "$name: the resume of the run cut at event $cut exited $?: $out"
    got=$(event_signature "$work/cut")
    [ "$got" = "$want" ] || fail "$name: cut at event $cut, the resumed run differs from the uninterrupted one:
$(diff <(echo "$want") <(echo "$got") | head -4 | cut -c1-400)"
    n=$((n + 1))
  done
  echo "$name: $n cuts, each resumed to the uninterrupted run"
  passes=$((passes + 1))
}

synthetic=(--set evaluator.name=synthetic --set agents.plans_per_call=3 --budget 40 --workers 3 --deterministic --seed 7)
"$kmcts" run "$src/tests/fixtures/synthetic_space" "${synthetic[@]}" --out "$work/rules" --quiet >/dev/null ||
  fail "the uninterrupted synthetic run failed"
every_cut "rule agents" "$work/rules" 2

# Real kills: 30 ms per measurement, so that the run takes a few seconds and each kill lands mid-way.
want=$(event_signature "$work/rules")
for attempt in 1 2; do
  killed="$work/killed$attempt"
  "$kmcts" run "$src/tests/fixtures/synthetic_space" "${synthetic[@]}" --set evaluator.synthetic.latency_ms=30 \
    --out "$killed" --quiet >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 5 + 2))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  for _ in 1 2 3; do
    "$kmcts" resume "$killed" --quiet >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 5 + 2))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ ! -f "$killed/summary.json" ]; then
    out=$("$kmcts" resume "$killed" --quiet 2>&1) || fail "the last resume of killed run $attempt exited $?: $out"
  fi
  got=$(event_signature "$killed")
  [ "$got" = "$want" ] || fail "killed run $attempt ($(sqlite3 "$killed/run.sqlite" "select count(*) from events where kind = 'resumed'") resumes) differs:
$(diff <(echo "$want") <(echo "$got") | head -4 | cut -c1-400)"
done
echo "rule agents: 2 runs killed with SIGKILL 4 times each, resumed to the uninterrupted run"
passes=$((passes + 1))

# The LLM backend: the mock answers as the rule agents would, from the prompt it gets; a resumed
# call must send the prompt the uninterrupted run sent.
# shellcheck source=lib/mock.sh
source "$(dirname "$0")/lib/mock.sh"
start_mock "$work/mock.out" --problem "$src/problems/cpu/matmul"
"$kmcts" run "$src/problems/cpu/matmul" --set agents.backend=llm --set agents.llm.base_url="http://127.0.0.1:$port" \
  --set agents.llm.api_key_env= --set evaluator.name=replay \
  --set evaluator.replay.runs="$src/bench/search_quality/recorded/matmul-devbox" --set agents.plans_per_call=2 \
  --budget 24 --workers 3 --deterministic --seed 3 --out "$work/llm" --quiet >/dev/null || fail "the uninterrupted LLM run failed"
every_cut "LLM agents" "$work/llm" 3
echo "$passes passed, 0 failed"
