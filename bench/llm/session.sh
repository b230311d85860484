#!/usr/bin/env bash
# An LLM-backend search on a GPU through a scripted session (issue 26, item 5): kmcts's mock server
# plays a session of tests/fixtures/llm_replies/ (replies written as models write them) to
# `kmcts run PROBLEM --set agents.backend=llm`, and the evaluator compiles, checks and times what
# it gets. Two sessions:
#   cuda - problems/cuda/silu_mul with the CUDA evaluator (cuda_session.json): a float4 kernel nvcc
#          refuses and the Debugger's repair, a kernel that hides half its work on a stream of its
#          own (the audit must reject it), a correct float2 kernel;
#   kb   - the real KernelBench level1/88_MinGPTNewGelu.py (checkout at $KB) with the KernelBench
#          evaluator (kb_cuda_session.json): a fused float4 ModelNew whose load_inline CUDA source
#          nvcc refuses and the Debugger's repair, a ModelNew that falls back to PyTorch when its
#          kernel raises (the static screen must reject it), a correct fused kernel.
# Each session is searched twice on one optimisation archive (issue 30): an earlier run fills it,
# then the recorded run, with Nsight Compute on (evaluator.cuda.profile or .kernelbench.profile:
# the seed and each new best), whose Planner prompts show the per-kernel profile, the ncu
# bottleneck verdicts and the archive's entries. Writes the recorded run's table, its nodes (plan,
# verdict, speedup) and event log, the archive's list (memory.txt), each evaluation's profile and
# counters and the prompt sections that carry them (profiles.md), and the cassette under $OUT (the
# run folders under $WORK). The mock listens on 127.0.0.1 only.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts [KB=.kb] bash bench/llm/session.sh cuda|kb
set -uo pipefail
session=${1:?usage: session.sh cuda|kb}
OUT=${OUT:-/tmp/kmcts-llm-$session}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb}
work=${WORK:-/tmp/kmcts-llm-$session-work}
case $session in
  cuda) replies=cuda_session.json; problem=problems/cuda/silu_mul; plans=3; extra=() ;;
  kb) replies=kb_cuda_session.json; problem=$KB/KernelBench/level1/88_MinGPTNewGelu.py; plans=3
      extra=(--set evaluator.kernelbench.python=python3 --set evaluator.cache_dir="$work/cache") ;;
  *) echo "session.sh: unknown session '$session' (cuda or kb)"; exit 2 ;;
esac
rm -rf "$work"; mkdir -p "$OUT" "$work"
# Two runs share one optimisation archive: the earlier run fills it, and the recorded run's Planner
# prompts show its entries (issue 30, item 4). The recorded run also profiles under Nsight Compute
# (its seed, then each new best: the bottleneck verdicts of item 2).
memory=(--set agents.memory.path="$work/memory.sqlite")
case $session in
  cuda) deep=(--set evaluator.cuda.profile=true) ;;
  kb) deep=(--set evaluator.kernelbench.profile=true) ;;
esac
search() {  # search NAME CASSETTE [options...]: one run against a fresh mock server
  local name=$1 cassette=$2; shift 2
  "$KMCTS" mock-llm --port 0 --session "tests/fixtures/llm_replies/$replies" > "$work/mock-$name.out" 2>&1 &
  local server=$!
  for _ in $(seq 1 50); do grep -q listening "$work/mock-$name.out" 2>/dev/null && break; sleep 0.1; done
  local port
  port=$(grep -o "127.0.0.1:[0-9]*" "$work/mock-$name.out" | cut -d: -f2)
  [ -n "$port" ] || { echo "the mock server did not start: $(cat "$work/mock-$name.out")"; kill $server; exit 1; }
  local t0=$SECONDS
  "$KMCTS" run "$problem" --set agents.backend=llm --set agents.llm.base_url="http://127.0.0.1:$port" \
    --set agents.llm.api_key_env= --set agents.plans_per_call=$plans --budget 5 --workers 1 --deterministic --seed 1 \
    --set agents.llm.cassette="$cassette" --set agents.llm.cassette_mode=record \
    "${memory[@]}" "${extra[@]}" "$@" --out "$work/$name" > "$OUT/$name.md" 2> "$work/$name.err"
  echo "$name run: exit $?, $((SECONDS - t0)) s"
  kill $server 2>/dev/null
}
search earlier "$work/earlier-cassette.jsonl"
"$KMCTS" memory list --path "$work/memory.sqlite" > "$OUT/memory.txt" 2>&1
search run "$OUT/cassette.jsonl" "${deep[@]}"
cat "$OUT/run.md"
python3 - "$work/run/run.sqlite" > "$OUT/nodes.md" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("pragma table_info(nodes)")]
print("| node | plan | verdict | speedup |")
print("|---|---|---|---|")
for row in db.execute("select * from nodes order by id"):
    r = dict(zip(cols, row))
    print(f"| {r.get('id')} | {str(r.get('plan', ''))[:70]} | {r.get('verdict')} | {r.get('speedup', r.get('value', ''))} |")
print("\nEvent log (kinds in order, payloads cut at 400 characters):\n")
for seq, t, kind, payload in db.execute("select seq, time_s, kind, payload from events order by seq"):
    print(f"- {seq} {t:.2f}s {kind}: {payload[:400]}")
PY
cat "$OUT/nodes.md"
# Each evaluation's per-kernel profile (details.kernel_profile) and Nsight Compute counters with
# their verdicts (details.hw_counters), and the sections of the prompts the agents were sent that
# carry them and the archive's entries (the cassette keeps every request whole).
python3 - "$work/run/run.sqlite" "$OUT/cassette.jsonl" > "$OUT/profiles.md" <<'PY3'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for node, verdict, details in db.execute("select node, verdict, details from evaluations order by seq"):
    d = json.loads(details or "{}")
    print(f"## node {node}: {verdict}\n")
    print("```json\n" + json.dumps(d.get("kernel_profile", d.get("kernel_profile_error")), indent=1) + "\n```\n")
    for key in ("hw_counters", "hw_counters_error", "profile_seconds", "fault"):
        if key in d:
            print(f"{key}:\n```json\n" + json.dumps(d[key], indent=1) + "\n```\n")
def section(text, heading):
    start = text.find(heading)
    return None if start < 0 else text[start:start + 3000].split("\n\n#")[0]
import os
for i, line in enumerate(open(sys.argv[2]) if os.path.exists(sys.argv[2]) else []):
    c = json.loads(line)
    text = json.dumps(c.get("request", c))
    for m in c.get("request", {}).get("messages", []):
        if m.get("role") == "user": text = m.get("content", "")
    # The parent's line with the ncu verdicts: "Its measurement:" (CUDA), "Its evaluation:" (KernelBench).
    shown = [(h, section(text, h)) for h in ("## Where its time goes", "Its measurement:", "Its evaluation:", "## Improvements found before")]
    shown = [(h, t) for h, t in shown if t and (not h.startswith("Its ") or "kernel " in t)]
    for h, t in shown:
        print(f"## prompt {i}: {h.strip('# :')}\n\n```\n{t}\n```\n")
PY3
# The failed build's whole log, as the Debugger saw it.
python3 - "$work/run" > "$OUT/compile_error.log" <<'PY2'
import os, sqlite3, sys
db = sqlite3.connect(os.path.join(sys.argv[1], "run.sqlite"))
for log, log_file in db.execute("select log, log_file from evaluations where verdict = 'compile_error' order by seq limit 1"):
    print(log if log is not None else open(os.path.join(sys.argv[1], log_file)).read())
PY2
tail -5 "$work/run.err"
