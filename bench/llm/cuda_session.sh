#!/usr/bin/env bash
# An LLM-backend search of a CUDA problem on a GPU (issue 26, item 5): kmcts's mock server plays
# the scripted session tests/fixtures/llm_replies/cuda_session.json (replies written as models
# write them) to `kmcts run problems/cuda/silu_mul --set agents.backend=llm`, and the CUDA
# evaluator compiles, checks and times what it gets: a float4 kernel nvcc refuses and the
# Debugger's repair, a kernel that hides half its work on a stream of its own (the audit must
# reject it), a correct float2 kernel. Writes the run's table, its nodes (plan, verdict, speedup)
# and an excerpt of its event log under $OUT (the run folder under $WORK). The mock listens on 127.0.0.1 only.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts bash bench/llm/cuda_session.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-llm-cuda}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
work=${WORK:-/tmp/kmcts-llm-cuda-work}
rm -rf "$work"; mkdir -p "$OUT" "$work"
"$KMCTS" mock-llm --port 0 --session tests/fixtures/llm_replies/cuda_session.json > "$work/mock.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 1 50); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o "127.0.0.1:[0-9]*" "$work/mock.out" | cut -d: -f2)
[ -n "$port" ] || { echo "the mock server did not start: $(cat "$work/mock.out")"; exit 1; }
t0=$SECONDS
"$KMCTS" run problems/cuda/silu_mul --set agents.backend=llm --set agents.llm.base_url="http://127.0.0.1:$port" \
  --set agents.llm.api_key_env= --set agents.plans_per_call=3 --budget 5 --workers 1 --deterministic --seed 1 \
  --out "$work/run" > "$OUT/run.md" 2> "$work/run.err"
echo "run: exit $?, $((SECONDS - t0)) s"
cat "$OUT/run.md"
python3 - "$work/run/run.sqlite" > "$OUT/nodes.md" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("pragma table_info(nodes)")]
print("| node | plan | verdict | speedup over seed |")
print("|---|---|---|---|")
for row in db.execute("select * from nodes order by id"):
    r = dict(zip(cols, row))
    print(f"| {r.get('id')} | {str(r.get('plan', ''))[:70]} | {r.get('verdict')} | {r.get('speedup', r.get('value', ''))} |")
print("\nEvent log (kinds in order, payloads cut at 240 characters):\n")
for seq, t, kind, payload in db.execute("select seq, time_s, kind, payload from events order by seq"):
    print(f"- {seq} {t:.2f}s {kind}: {payload[:240]}")
PY
cat "$OUT/nodes.md"
tail -5 "$work/run.err"
