#!/usr/bin/env bash
# The feedback ablation grid (configs/ablations/feedback.json, issue 30 item 5) end to end, on
# matmul's recorded landscape only (nothing measured) with the mock server answering as the rule
# agents: each arm runs and records its LLM session, the arms' prompts differ as their switches
# say, and --replay-only re-runs every arm from its recorded session with the server gone.
# Usage: feedback_grid.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$(cd "$2" && pwd)
source "$src/tests/e2e/lib/mock.sh"
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill -9 "$server" 2>/dev/null; rm -rf "$work"' EXIT
passed=0
fail() { echo "FAIL $*"; echo "$passed passed, 1 failed"; exit 1; }
ok() { passed=$((passed + 1)); }
export XDG_DATA_HOME="$work/data"  # the archive the memory arm reads and fills: this test's own

start_mock "$work/mock.out" --problem "$src/problems/cpu/matmul"
# The shipped grid, cut to the CPU problem, one seed and a small budget, pointed at the mock.
python3 - "$src/configs/ablations/feedback.json" "$work/feedback.json" "$port" "$src" <<'PY'
import json, sys
grid = json.load(open(sys.argv[1]))
grid["base"]["set"]["agents.llm.base_url"] = f"http://127.0.0.1:{sys.argv[3]}"
grid["base"]["set"]["agents.llm.api_key_env"] = ""
grid["problems"] = [dict(p, path=f"{sys.argv[4]}/{p['path']}", recorded=[f"{sys.argv[4]}/{r}" for r in p["recorded"]])
                    for p in grid["problems"] if "matmul" in p["path"]]
grid["seeds"], grid["budget"] = [0], 40
json.dump(grid, open(sys.argv[2], "w"))
PY
names=$(python3 -c "import json,sys;print(' '.join(v['name'] for v in json.load(open(sys.argv[1]))['axes'][0]['values']))" "$work/feedback.json")
[ "$names" = "all no_profile no_ncu no_error_summary no_memory" ] || fail "the grid's arms: $names"
ok
runs=$("$kmcts" ablate "$work/feedback.json" --out "$work/out" --quiet 2>&1) || fail "the grid exited $?: $runs"
[ "$(ls "$work"/out/runs/*/summary.json | wc -l)" = 5 ] || fail "not five finished runs: $(ls "$work/out/runs")"
ok
# The Debugger's prompts: the summary in every arm but no_error_summary, which gets the raw log.
cassette() { echo "$work/out/runs/feedback=$1--matmul--s0/cassette.jsonl"; }
for arm in all no_error_summary; do [ -s "$(cassette $arm)" ] || fail "no cassette for $arm: $(ls "$work/out/runs")"; done
python3 - "$(cassette all)" "$(cassette no_error_summary)" <<'PY' || fail "the arms' Debugger prompts"
import json, sys
def debugger_prompts(path):
    out = []
    for line in open(path):
        for m in json.loads(line)["request"]["messages"]:
            if m["role"] == "user" and "who repairs" in json.loads(line)["request"]["system"] + m["content"]:
                out.append(m["content"])
    return out
summary, raw = debugger_prompts(sys.argv[1]), debugger_prompts(sys.argv[2])
assert summary and raw, (len(summary), len(raw))
assert summary != raw, "the error summary switch changed nothing"
PY
ok
kill -INT "$server"; wait "$server" 2>/dev/null; server=
replayed=$("$kmcts" ablate "$work/feedback.json" --out "$work/out" --replay-only 2>&1) || fail "--replay-only: $replayed"
[ "$(grep -c '^reproduced ' <<<"$replayed")" = 5 ] || fail "not every arm reproduced from its recorded session: $replayed"
ok
echo "$passed passed, 0 failed"
