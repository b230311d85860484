#!/usr/bin/env bash
# What KernelBench costs before any candidate is timed (issue 25, item 4), on the GPU machine:
# 1. load_inline builds (build_cost.py): stock torch, and with kmcts's precompiled
#    torch/extension.h (cold, then warm), for CUDA sources with and without a torch header;
# 2. the hygiene check through `kmcts kernelbench`: level 1's problems FIRST-LAST checked in one
#    process before the searches (the campaign is stopped once its searches start), then a
#    second campaign on the same cache, which must check nothing.
# Rows and logs under $OUT. Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb/KernelBench
#   [PROBLEMS=1-40] bash bench/kernelbench/build_hygiene_cost.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-build-hygiene}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb/KernelBench}
PROBLEMS=${PROBLEMS:-1-40}
SHARE=$(dirname "$KMCTS")/../share/kmcts/kernelbench
A=problems/kernelbench-format/attribution
work=${WORK:-/tmp/kmcts-build-hygiene-work}
rm -rf "$work"; mkdir -p "$OUT" "$work"
timeout 260 python3 bench/kernelbench/build_cost.py --harness "$SHARE" --arch 9.0 --work "$work/builds" \
  --out "$OUT/build_cost.jsonl" $A/19_ReLU/own_cuda.py $A/19_ReLU/own_cuda_split.py $A/19_ReLU/cpp_calls_torch.py \
  $A/9_Matmul_Subtract_Multiply_ReLU/cuda_epilogue_split.py | cut -c1-600
for pass in first again; do
  limit=170; [ $pass = again ] && limit=30
  timeout -s INT -k 10 $limit "$KMCTS" kernelbench --kb-root "$KB" --level 1 --problems "$PROBLEMS" --budget 1 --gpus 0 \
    --no-compile-baseline --out "$work/campaign-$pass" --set evaluator.kernelbench.python=python3 \
    --set evaluator.cache_dir="$work/cache" > /dev/null 2> "$work/campaign-$pass.err"
  echo "hygiene pass $pass: $(grep 'hygiene of' "$work/campaign-$pass.err")"
done
python3 - "$work/cache/kernelbench/hygiene" > "$OUT/hygiene.md" <<'PY'
import glob, json, os, statistics, sys
rows = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))]
secs = sorted(r.get("seconds", 0) for r in rows)
print(f"{len(rows)} problems cached; in-process seconds per problem: median {statistics.median(secs):.2f}, "
      f"max {secs[-1]:.2f}, total {sum(secs):.1f}" if secs else "nothing cached")
for r in rows:
    if r.get("findings"):
        print("finding:", json.dumps(r["findings"])[:300])
PY
cat "$OUT/hygiene.md"
cp "$work"/campaign-*.err "$OUT/" 2>/dev/null
