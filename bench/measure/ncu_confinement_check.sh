#!/usr/bin/env bash
# Why Nsight Compute fails inside the worker's confinement (issue 30; on the H100 of 2026-12-05
# every `evaluator.cuda.profile` run said "==ERROR== Launching the target application failed",
# bench/results/llm-cuda-session.md): one profiled measurement confined and one not, and ncu on a
# trivial program inside a network namespace of its own (whose loopback is down, as in the
# confinement's). Run on the GPU host with the bundle carried:
#   OUT=DIR KMCTS=.device/bundle/bin/kmcts bash bench/measure/ncu_confinement_check.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-ncu-check}
K=${KMCTS:-.device/bundle/bin/kmcts}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
for confine in true false; do
  timeout 120 "$K" measure problems/cuda/silu_mul problems/cuda/silu_mul/reference.cu --set evaluator.cuda.profile=true \
    --set evaluator.confine=$confine --jsonl "$OUT/confine_$confine.jsonl" > "$OUT/confine_$confine.txt" 2>&1
  python3 - "$OUT/confine_$confine.jsonl" "$confine" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
d = r.get("details", {})
print(f"evaluator.confine={sys.argv[2]}:", "counters" if "hw_counters" in d else d.get("hw_counters_error", "no profile")[-300:])
PY
done
timeout 60 unshare -n ncu --metrics sm__throughput.avg.pct_of_peak_sustained_elapsed nvidia-smi -L > "$OUT/ncu_netns.txt" 2>&1
echo "ncu inside a network namespace of its own: exit $?"
tail -3 "$OUT/ncu_netns.txt"
