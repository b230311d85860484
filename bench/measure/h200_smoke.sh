#!/usr/bin/env bash
# First contact with the GPU machine: probe, then a 4-evaluation search of each CUDA problem.
# Usage (device tool, carrying .device/bundle): bash bench/measure/h200_smoke.sh
set -uo pipefail
B=${KMCTS_BUNDLE:-.device/bundle}
OUT=${OUT:-/tmp/kmcts-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
"$B/bin/kmcts-cuda-probe" > "$OUT/probe.json" 2>&1; cat "$OUT/probe.json" | head -c 600; echo
for p in ${PROBLEMS:-silu_mul}; do
  /usr/bin/time -v "$B/bin/kmcts" run problems/cuda/$p --budget ${BUDGET:-4} --out "$OUT/runs/$p" \
    --set evaluator.cache_dir=/tmp/kmcts-cache --quiet > "$OUT/$p.log" 2>&1
  echo "== $p rc=$?"; tail -5 "$OUT/$p.log"
done
