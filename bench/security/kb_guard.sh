#!/usr/bin/env bash
# The KernelBench candidate's guard on a GPU host (issue 28; hardware/kernelbench/guard/kb_guard.h):
# the kernel and its Landlock ABI; then `kmcts measure` (hardened, warm) on candidates of every
# kind that writes somewhere as it loads or runs: an extension prebuilt and staged, the same
# split into .cpp and .cu, Triton kernels, torch.compile inside ModelNew (its inductor cache),
# a CUDA graph, a parameter holder; with torch.compile timed as the second baseline on one problem
# (the harness's own inductor cache beside the guarded candidates). Each verdict is compared with
# the candidate's `expect-gpu:` line, and the guard each recorded is listed. Last,
# tests/e2e/kernelbench_hostile.sh on GPU 0 (with kb_guard_probe.py).
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb/KernelBench bash bench/security/kb_guard.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-kb-guard}
K=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb/KernelBench}
P=problems/kernelbench-format
A=$P/attribution
mkdir -p "$OUT"
uname -r > "$OUT/kernel.txt"
# problem | candidates | extra options
groups=(
  "$KB/level1/19_ReLU.py|$A/19_ReLU/own_cuda.py $A/19_ReLU/own_cuda_split.py|"
  "$KB/level1/40_LayerNorm.py|$A/40_LayerNorm/triton_holder.py|"
  "$P/level1/4_scale_bias.py|$A/4_scale_bias/triton_own.py $A/4_scale_bias/compiled.py $A/4_scale_bias/graph_own.py|--set evaluator.kernelbench.time_compile=true"
)
for g in "${groups[@]}"; do
  IFS='|' read -r problem cands options <<<"$g"
  name=$(basename "$problem" .py)
  t0=$SECONDS
  # shellcheck disable=SC2086
  "$K" measure "$problem" $cands --set evaluator.kernelbench.python=python3 --set evaluator.cache_dir=/tmp/kmcts-kb-guard-cache \
    --jsonl "$OUT/$name.jsonl" $options > "$OUT/$name.txt" 2>&1
  echo "$name: exit $?, $((SECONDS - t0)) s" >> "$OUT/summary.txt"
done
python3 - "$OUT" >> "$OUT/summary.txt" <<'PY'
import glob, json, os, re, sys
print("| candidate | expected | verdict | load s | speedup vs eager | candidate_guard |")
print("|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
    for line in open(path):
        r = json.loads(line)
        src = r.get("source", r.get("file", ""))
        name = r.get("label") or os.path.basename(str(src))
        d = r.get("details", {})
        expect = ""
        for f in glob.glob("problems/kernelbench-format/attribution/*/*.py"):
            if os.path.basename(f) == os.path.basename(str(name)):
                m = re.search(r"expect-gpu: (.*)", open(f).read())
                expect = m.group(1) if m else ""
        verdict = r.get("verdict", "") + (": " + str(r.get("message", ""))[:80] if r.get("verdict") != "ok" else "")
        print(f"| {name} | {expect} | {verdict} | {d.get('seconds', {}).get('load', '')} | "
              f"{d.get('speedup', {}).get('eager', '')} | {d.get('candidate_guard', '')} |")
PY
KB_DEVICE=0 bash tests/e2e/kernelbench_hostile.sh "$PWD/$K" "$PWD" > "$OUT/kb-hostile.txt" 2>&1
echo "kernelbench_hostile.sh on GPU 0: exit $?" >> "$OUT/summary.txt"
cat "$OUT/kernel.txt" "$OUT/summary.txt"
