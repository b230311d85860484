#!/usr/bin/env bash
# Kernel attribution on the GPU machine (issue 25, item 2): the hardened harness on the
# candidates of problems/kernelbench-format/attribution (own CUDA and Triton kernels, C++ that
# calls torch, ATen through Python, torch.compile inside ModelNew, a CUDA graph, a partial
# replacement, a parameter-holder module) and the library cheat, on real KernelBench problems
# (KB, a checkout's KernelBench/ folder) and ours. Each line of $OUT/attribution.jsonl is one
# evaluation with its library policy; the table compares each verdict with the file's
# `expect-gpu:` line. Extensions are built first, in parallel, with no GPU visible.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb/KernelBench bash bench/kernelbench/attribution_check.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-attribution}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb/KernelBench}
SHARE=$(dirname "$KMCTS")/../share/kmcts/kernelbench
P=problems/kernelbench-format
A=$P/attribution
mkdir -p "$OUT/ext"
# problem | candidate | expectation override ("" = the file's expect-gpu) | harness options
cases=(
  "$KB/level1/19_ReLU.py|$A/19_ReLU/own_cuda.py||"
  "$KB/level1/19_ReLU.py|$A/19_ReLU/own_cuda_split.py||"
  "$KB/level1/19_ReLU.py|$A/19_ReLU/cpp_calls_torch.py||"
  "$KB/level2/9_Matmul_Subtract_Multiply_ReLU.py|$A/9_Matmul_Subtract_Multiply_ReLU/cuda_epilogue_split.py||"
  "$KB/level2/9_Matmul_Subtract_Multiply_ReLU.py|$A/9_Matmul_Subtract_Multiply_ReLU/cuda_epilogue_split.py|rejected above the limit|--library-policy limit --max-library-share 0.5"
  "$KB/level1/40_LayerNorm.py|$A/40_LayerNorm/triton_holder.py||"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/triton_own.py||"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/triton_partial.py||"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/triton_partial.py|rejected above the limit|--library-policy limit --max-library-share 0.3"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/triton_partial.py|rejected every op must be its own|--library-policy all"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/graph_own.py||"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/compiled.py||"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/aten_op.py||"
  "$P/level1/4_scale_bias.py|$P/cheats/4_scale_bias/library_call.py||"
  "$P/level1/4_scale_bias.py|$P/candidates/4_scale_bias/0.py|rejected no kernel of its own ran|"
)
key() { echo "$(basename "$(dirname "$1")")_$(basename "$1" .py)"; }
t0=$SECONDS
for c in "${cases[@]}"; do
  IFS='|' read -r problem cand _ _ <<<"$c"
  grep -q load_inline "$cand" || continue
  k=$(key "$cand")
  [ -d "$OUT/ext/$k" ] && continue
  mkdir -p "$OUT/ext/$k"
  (CUDA_VISIBLE_DEVICES= TORCH_EXTENSIONS_DIR="$OUT/ext/$k" TORCH_CUDA_ARCH_LIST=9.0 \
     python3 "$SHARE/prebuild.py" "$cand" > "$OUT/build-$k.log" 2>&1; echo "build $k: exit $?, $((SECONDS - t0)) s") &
done
wait
: > "$OUT/attribution.jsonl"
for c in "${cases[@]}"; do
  IFS='|' read -r problem cand expect options <<<"$c"
  k=$(key "$cand")
  [ -n "$expect" ] || expect=$(grep -o 'expect-gpu: .*' "$cand" | head -1 | cut -d' ' -f2-)
  s=$SECONDS
  # shellcheck disable=SC2086
  line=$(TORCH_EXTENSIONS_DIR="$OUT/ext/$k" TRITON_CACHE_DIR="$OUT/ext/$k/triton" TORCH_CUDA_ARCH_LIST=9.0 \
    python3 "$SHARE/hardened.py" --problem "$problem" --candidate "$cand" --timer-lib "$SHARE/libkmcts_kb_timer.so" \
    --no-compile --max-time-s 1 $options 2> "$OUT/eval-$k.err" | tail -1)
  python3 - "$line" "$cand" "$problem" "$expect" "$options" $((SECONDS - s)) >> "$OUT/attribution.jsonl" <<'PY' || echo "{\"candidate\": \"$cand\", \"error\": \"no result\"}" >> "$OUT/attribution.jsonl"
import json, sys
r = json.loads(sys.argv[1])
for v in r.get("runtime_ms", {}).values():
    v.pop("times_ms", None)
r.update(file=sys.argv[2], problem_file=sys.argv[3], expect=sys.argv[4], options=sys.argv[5], process_seconds=int(sys.argv[6]))
print(json.dumps(r))
PY
  tail -1 "$OUT/attribution.jsonl" | cut -c1-200
done
python3 - "$OUT/attribution.jsonl" > "$OUT/attribution.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| problem | candidate | policy | verdict | expected | own share | own / library / unknown ms | library objects | s |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    if r.get("rejected"): verdict = "rejected: " + r["rejected"]
    elif r.get("infra_error"): verdict = "infra_error: " + r["infra_error"][:120]
    elif not r.get("compiled", True): verdict = "compile_error: " + str(r.get("error", ""))[:120]
    elif not r.get("correct", False): verdict = "wrong_answer: " + str(r.get("wrong_answer") or r.get("error", ""))[:120]
    else: verdict = "ok"
    want = r.get("expect", "")
    match = "yes" if verdict.startswith(want.split(" ")[0]) and all(w in verdict for w in want.split(" ")[1:]) else "NO"
    a = r.get("attribution", {})
    share = a.get("own_share")
    ms = " / ".join(f"{a.get(k, 0):.2f}" for k in ("own_ms", "library_ms", "unknown_ms")) if a.get("available") else a.get("error", "-")
    objs = ", ".join(f"{k} {v['kernels']}" for k, v in list(a.get("library_objects", {}).items())[:3])
    print(f"| {r.get('problem_file', '').split('/')[-1]} | {r['file'].split('/')[-1]} | {r.get('options') or 'report'} | "
          f"{verdict[:110]} | {want} ({match}) | {'-' if share is None else f'{share:.3f}'} | {ms} | {objs} | {r.get('process_seconds')} |")
PY
cat "$OUT/attribution.md"
