#!/usr/bin/env bash
# Faithful means faithful (issue 25, item 3), on the GPU machine: upstream KernelBench's
# eval_kernel_against_ref (from a checkout's src/, KB_SRC) and kmcts's faithful harness on the
# same candidates: our attribution candidates and campaign_candidates.py's (own CUDA and Triton
# kernels, C++ calling torch, library calls, wrong ones) on real problems (KB: the checkout's
# KernelBench/), and two cheats on ours. Rows in $OUT/upstream_compare.jsonl (upstream_compare.py).
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb KB_SRC=.kb/src TRIALS=100 bash bench/kernelbench/upstream_compare.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-upstream}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb}
KB_SRC=${KB_SRC:-.kb/src}
TRIALS=${TRIALS:-100}
SHARE=$(dirname "$KMCTS")/../share/kmcts/kernelbench
work=${WORK:-/tmp/kmcts-upstream-work}
mkdir -p "$OUT" "$work"
python3 bench/kernelbench/campaign_candidates.py "$KB" "$work/subs" > /dev/null || exit 1
L1=$KB/KernelBench/level1 L2=$KB/KernelBench/level2 A=problems/kernelbench-format/attribution
C=problems/kernelbench-format/cheats/4_scale_bias S=$work/subs
# The heavy ones last (5_Matrix_scalar and 19_ReLU draw 4.3 and 6.4 GB inputs on the CPU, six
# times per evaluation): rows are written pair by pair, so a time limit loses those first.
L2A=$A/9_Matmul_Subtract_Multiply_ReLU
cat > "$work/pairs.txt" <<PAIRS
$L1/1_Square_matrix_multiplication_.py $S/level1/1_Square_matrix_multiplication_/1.py triton
$L1/1_Square_matrix_multiplication_.py $S/level1/1_Square_matrix_multiplication_/2.py cuda
$L1/8_Matmul_with_irregular_shapes_.py $S/level1/8_Matmul_with_irregular_shapes_/3.py triton
$L1/40_LayerNorm.py $A/40_LayerNorm/triton_holder.py triton
$L2/9_Matmul_Subtract_Multiply_ReLU.py $L2A/cuda_epilogue_split.py cuda
$L2/9_Matmul_Subtract_Multiply_ReLU.py $S/level2/9_Matmul_Subtract_Multiply_ReLU/2.py triton
$L2/9_Matmul_Subtract_Multiply_ReLU.py $S/level2/9_Matmul_Subtract_Multiply_ReLU/3.py cuda
problems/kernelbench-format/level1/4_scale_bias.py problems/kernelbench-format/candidates/4_scale_bias/1.py triton
problems/kernelbench-format/level1/4_scale_bias.py $C/monkey_patch.py cuda
problems/kernelbench-format/level1/4_scale_bias.py $C/skip_after_n.py cuda
$L1/5_Matrix_scalar_multiplication.py $S/level1/5_Matrix_scalar_multiplication/1.py triton
$L1/19_ReLU.py $A/19_ReLU/own_cuda.py cuda
$L1/19_ReLU.py $S/level1/19_ReLU/3.py triton
PAIRS
python3 bench/kernelbench/upstream_compare.py --kb-src "$KB_SRC" --harness "$SHARE" --pairs "$work/pairs.txt" \
  --trials "$TRIALS" --out "$OUT/upstream_compare.jsonl"
python3 - "$OUT/upstream_compare.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| problem | candidate | upstream | ours | speedup upstream | speedup ours | agree |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    su, so = r["upstream"].get("speedup"), (r["ours"].get("speedup") or {}).get("eager")
    f = lambda v: "-" if v is None else f"{v:.3f}"
    print(f"| {r['problem'].split('/')[-1]} | {r['candidate'].split('/')[-2]}/{r['candidate'].split('/')[-1]} | {r['verdicts'][0]} | "
          f"{r['verdicts'][1]} | {f(su)} | {f(so)} | {'yes' if r['agree'] else 'NO'} |")
print(f"{sum(r['agree'] for r in rows)} of {len(rows)} agree")
PY
