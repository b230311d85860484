#!/usr/bin/env bash
# An LLM-driven search end to end with no network and no model: the mock server answers as
# the rule agents on a shipped CPU problem, with 30% injected faults. The search completes its
# budget, the store shows the retries, the key appears nowhere, and the same run replayed from
# the cassette (server stopped) and the recorded measurements gives the identical graph (both
# runs lockstep, --deterministic: without it, the order in which an agent reply and a
# measurement arrive can differ between the runs, and with it the prompts and the graph).
# Usage: llm.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
passed=0
ok() { passed=$((passed + 1)); }
export KMCTS_E2E_KEY="sk-e2e-secret-0123456789"

# shellcheck source=lib/mock.sh
source "$(dirname "$0")/lib/mock.sh"
start_mock "$work/mock.out" --problem "$src/problems/cpu/layernorm" --require-key-env KMCTS_E2E_KEY --seed 1 \
  --fault-429 0.08 --fault-429-bare 0.04 --fault-500 0.06 --fault-529 0.04 --fault-malformed 0.04 --fault-no-code 0.04

# agents.memory.k=0: the offline run is a new run, which would take the optimisation archive's
# lines as run1 left them (run1 adds its improvements as it ends), so its prompts would differ
# from the recorded ones (kmcts replay and resume keep a run's own lines instead).
common=(--set agents.backend=llm --set agents.llm.api_key_env=KMCTS_E2E_KEY --set agents.llm.cassette="$work/cassette.jsonl"
        --budget 8 --workers 1 --deterministic --quiet --set agents.memory.k=0)
out=$("$kmcts" run "$src/problems/cpu/layernorm" "${common[@]}" --seed 5 --set agents.llm.base_url="http://127.0.0.1:$port" \
  --set agents.llm.cassette_mode=record --out "$work/run1" 2>&1) || fail "the recorded run exited $?: $out"
grep -qE "^evaluations +8 " <<<"$out" || fail "the recorded run did not spend its budget: $out"; ok
kill -INT "$server"; wait "$server" 2>/dev/null; server=""
grep -qE "with injected faults" "$work/mock.out" || fail "the mock server did not report: $(cat "$work/mock.out")"
faults=$(grep -oE "[0-9]+ with injected faults" "$work/mock.out" | cut -d' ' -f1)
[ "$faults" -gt 0 ] || fail "no fault was injected"; ok
retries=$(sqlite3 "$work/run1/run.sqlite" "select coalesce(sum(json_extract(payload, '\$.usage.retries')), 0) from events")
[ "$retries" -gt 0 ] || fail "the store shows no retries ($faults faults injected)"; ok
grep -rq "sk-e2e-secret" "$work/run1" "$work/cassette.jsonl" && fail "the API key leaked into the run or the cassette"; ok
"$kmcts" replay "$work/run1" >/dev/null || fail "kmcts replay of the LLM run"; ok

# Offline: the server is gone; replies come from the cassette, measurements from run1.
out=$("$kmcts" run "$src/problems/cpu/layernorm" "${common[@]}" --seed 5 --set agents.llm.base_url=http://127.0.0.1:1 \
  --set agents.llm.cassette_mode=replay --set evaluator.name=replay --set evaluator.replay.runs="$work/run1" \
  --out "$work/run2" 2>&1) || fail "the replayed run exited $?: $out"
graph() { sqlite3 "$1/run.sqlite" "select id, hash, status, speedup from nodes; select parent, child, plan from edges;"; }
# On a mismatch, both event logs. (Under load this once caught record mode asking the server
# again for a request it had recorded: the replay then answered with the first reply.)
events() { sqlite3 "$1/run.sqlite" "select seq, kind, substr(payload, 1, 300) from events order by seq"; }
[ "$(graph "$work/run1")" = "$(graph "$work/run2")" ] ||
  fail "the replayed graph differs: $(diff <(graph "$work/run1") <(graph "$work/run2"))
recorded run's events:
$(events "$work/run1")
replayed run's events:
$(events "$work/run2")"; ok

# A cassette miss is a clear, recorded failure of the expansion, not a crash; a run whose every
# agent call failed fails (exit 1), and says why.
out=$("$kmcts" run "$src/problems/cpu/layernorm" "${common[@]}" --seed 6 --set agents.llm.cassette_mode=replay \
  --set evaluator.name=replay --set evaluator.replay.runs="$work/run1" --out "$work/run3" 2>&1)
code=$?
failed=$(sqlite3 "$work/run3/run.sqlite" "select payload from events where kind = 'agent_failed'")
grep -q "cassette_miss" <<<"$failed" || fail "a cassette miss was not recorded as a failed expansion: $out"; ok
[ "$code" = 1 ] || fail "a run whose agent calls all failed exited $code: $out"; ok
grep -qE "[0-9]+ of [0-9]+ agent calls failed; the first, expand: .*cassette" "$work/run3/summary.json" ||
  fail "the summary does not name the failing agents: $(cat "$work/run3/summary.json")"; ok

# A model that answers, but never with a usable reply: the run fails, naming the cause, and its
# table counts the failed agent calls apart from the HTTP attempts.
start_mock "$work/mock2.out" --reply "I think you should make it faster."
out=$("$kmcts" run "$src/problems/cpu/layernorm" --set agents.backend=llm --set agents.llm.api_key_env=NO_SUCH_KEY \
  --set agents.llm.base_url="http://127.0.0.1:$port" --budget 8 --workers 1 --out "$work/run4" 2>&1)
code=$?
kill -INT "$server"; wait "$server" 2>/dev/null; server=""
[ "$code" = 1 ] || fail "a run whose agents never gave a usable reply exited $code: $out"; ok
grep -qF "agent calls failed; the first, expand: llm planner: the reply has no list of plans: 'I think you should make it faster.'" <<<"$out" ||
  fail "the run's output does not name the failing agents and quote the reply: $out"; ok
grep -qE "^agents +[0-9]+ calls?, [0-9]+ failed" <<<"$out" || fail "the table does not count the failed agent calls: $out"; ok
echo "$passed passed, 0 failed"
