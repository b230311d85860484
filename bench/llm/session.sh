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
# Writes the run's table, its nodes (plan, verdict, speedup) and the event log under $OUT (the run
# folder under $WORK). The mock listens on 127.0.0.1 only.
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
"$KMCTS" mock-llm --port 0 --session "tests/fixtures/llm_replies/$replies" > "$work/mock.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 1 50); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o "127.0.0.1:[0-9]*" "$work/mock.out" | cut -d: -f2)
[ -n "$port" ] || { echo "the mock server did not start: $(cat "$work/mock.out")"; exit 1; }
t0=$SECONDS
"$KMCTS" run "$problem" --set agents.backend=llm --set agents.llm.base_url="http://127.0.0.1:$port" \
  --set agents.llm.api_key_env= --set agents.plans_per_call=$plans --budget 5 --workers 1 --deterministic --seed 1 \
  --set agents.llm.cassette="$OUT/cassette.jsonl" --set agents.llm.cassette_mode=record \
  "${extra[@]}" --out "$work/run" > "$OUT/run.md" 2> "$work/run.err"
echo "run: exit $?, $((SECONDS - t0)) s"
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
# Each evaluation's per-kernel profile (details.kernel_profile), and the prompts the agents were
# sent (the cassette keeps every request whole).
python3 - "$work/run/run.sqlite" "$OUT/cassette.jsonl" > "$OUT/profiles.md" <<'PY3'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for node, verdict, details in db.execute("select node, verdict, details from evaluations order by seq"):
    d = json.loads(details or "{}")
    print(f"## node {node}: {verdict}\n")
    print("```json\n" + json.dumps(d.get("kernel_profile", d.get("kernel_profile_error")), indent=1) + "\n```\n")
for i, line in enumerate(open(sys.argv[2])):
    c = json.loads(line)
    text = json.dumps(c.get("request", c))
    for m in c.get("request", {}).get("messages", []):
        if m.get("role") == "user": text = m.get("content", "")
    if "Where its time goes" in text:
        print(f"## prompt {i} (the profile section)\n\n```")
        start = text.find("## Where its time goes")
        print(text[start:start + 2500].split("\n\n##")[0])
        print("```\n")
PY3
# The failed build's whole log, as the Debugger saw it.
python3 - "$work/run" > "$OUT/compile_error.log" <<'PY2'
import os, sqlite3, sys
db = sqlite3.connect(os.path.join(sys.argv[1], "run.sqlite"))
for log, log_file in db.execute("select log, log_file from evaluations where verdict = 'compile_error' order by seq limit 1"):
    print(log if log is not None else open(os.path.join(sys.argv[1], log_file)).read())
PY2
tail -5 "$work/run.err"
