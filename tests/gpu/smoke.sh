#!/usr/bin/env bash
# GPU tests (CTest label "gpu"): a real measurement and two planted cheats on the first GPU.
# Skipped (exit 77) where kmcts was built without CUDA or kmcts-cuda-probe finds no GPU, as on
# CI; run on the GPU machine, e.g. `bash tests/gpu/smoke.sh BUNDLE/bin/kmcts .`.
# Usage: smoke.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
probe="$(dirname "$kmcts")/kmcts-cuda-probe"
[ -x "$probe" ] || { echo "SKIP: built without CUDA (no $probe)"; exit 77; }
devices=$("$probe" 2>/dev/null)
grep -q '"index"' <<<"$devices" || { echo "SKIP: no CUDA GPU"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
check() {  # check NAME PATTERN -- command...
  local name=$1 pattern=$2
  shift 3
  local out
  out=$("$@" 2>&1)
  if grep -qE -- "$pattern" <<<"$out"; then passes=$((passes + 1)); else
    echo "FAIL $name:"; echo "$out" | tail -5; failures=$((failures + 1)); fi
}
quick=(--set evaluator.cache_dir="$work/cache" --set evaluator.max_time_ms=300 --gpus 0)
check "seed measured" "ok: speedup .* 95% CI" -- "$kmcts" measure "$src/problems/cuda/silu_mul" "${quick[@]}"
check "side stream rejected" "rejected: work ran on stream" -- \
  "$kmcts" measure "$src/problems/cuda/silu_mul" "$src/tests/cuda_cheats/side_stream.cu" "${quick[@]}"
check "skipped work caught" "wrong answer: during timing" -- \
  "$kmcts" measure "$src/problems/cuda/silu_mul" "$src/tests/cuda_cheats/skip_after_n.cu" "${quick[@]}"
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
