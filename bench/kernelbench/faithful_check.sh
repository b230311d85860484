#!/usr/bin/env bash
# The faithful KernelBench harness on our own KernelBench-format problems (GPU machine, torch):
# one JSON line per evaluation into $OUT/faithful.jsonl, with the process wall time.
# Usage: OUT=DIR bash bench/kernelbench/faithful_check.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-kb}
mkdir -p "$OUT"
H=hardware/kernelbench/harness/faithful.py
P=problems/kernelbench-format
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$OUT/torch_extensions}
run() {  # run LABEL ARGS...
  local label=$1; shift
  local t0=$SECONDS
  python3 "$H" "$@" > "$OUT/one.json" 2> "$OUT/$label.err"
  local rc=$?
  python3 -c "import json,sys; r=json.load(open('$OUT/one.json')); r['label']='$label'; r['rc']=$rc; r['process_seconds']=$((SECONDS - t0)); print(json.dumps(r))" >> "$OUT/faithful.jsonl" ||
    echo "{\"label\": \"$label\", \"rc\": $rc, \"error\": \"no result\"}" >> "$OUT/faithful.jsonl"
  tail -1 "$OUT/faithful.jsonl" | cut -c1-400
}
run relu_cuda --problem $P/level1/1_relu.py --candidate $P/candidates/1_relu/0.py
run relu_cuda_cached --problem $P/level1/1_relu.py --candidate $P/candidates/1_relu/0.py --no-compile
run scale_bias --problem $P/level1/4_scale_bias.py --candidate $P/candidates/4_scale_bias/0.py
run softmax_wrong --problem $P/level1/2_row_softmax.py --candidate $P/candidates/2_row_softmax/0.py
run matmul_tf32_current --problem $P/level1/3_matmul.py --candidate $P/candidates/3_matmul/0.py
run matmul_tf32_paper --problem $P/level1/3_matmul.py --candidate $P/candidates/3_matmul/0.py --tolerance paper --no-compile
