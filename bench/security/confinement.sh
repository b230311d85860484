#!/usr/bin/env bash
# The confinement of candidate processes on a GPU host (issue 28): `kmcts doctor`'s confinement
# line; the CUDA worker confined and not (`kmcts measure problems/cuda/silu_mul --repeat 5` with
# evaluator.confine=true, then false: verdicts, wall seconds, the recorded confinement, the cost
# per evaluation); a KernelBench candidate the static screen rejects, which writes a marker when
# imported (tests/fixtures/hostile/kb_import_writes.py on the real level1/19_ReLU.py: it must be
# rejected and never imported, by the prebuild neither); the confined prebuild on the real ReLU
# (an extension, the same again finding its precompiled header, a hostile import, a candidate
# that reports its calls too short); tests/e2e/hostile.sh on the host, and
# tests/e2e/kernelbench_hostile.sh on GPU 0 (the harness confined whole).
# Writes under $OUT/w and prints a summary. Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb bash bench/security/confinement.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-confinement}
K=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb}
W=$OUT/w
mkdir -p "$W"
"$K" doctor > "$W/doctor.txt" 2>&1
for c in true false; do
  t0=$SECONDS
  "$K" measure problems/cuda/silu_mul --repeat 5 --set evaluator.confine=$c --set evaluator.cache_dir=/tmp/kmcts-conf-$c \
    --jsonl "$W/cuda-$c.jsonl" > "$W/cuda-$c.txt" 2>&1
  echo "cuda confine=$c: exit $?, $((SECONDS - t0)) s" >> "$W/summary.txt"
done
marker=/tmp/kmcts-hostile-imported-$$
sed "s|HOSTILE_MARKER|$marker|" tests/fixtures/hostile/kb_import_writes.py > "$W/kb_import_writes.py"
"$K" measure "$KB/KernelBench/level1/19_ReLU.py" "$W/kb_import_writes.py" --set evaluator.kernelbench.python=python3 \
  --set evaluator.cache_dir=/tmp/kmcts-conf-kb --jsonl "$W/kb-hostile.jsonl" > "$W/kb-hostile.txt" 2>&1
echo "kb hostile: exit $?, marker $(cat "$marker" 2>/dev/null || echo absent)" >> "$W/summary.txt"
rm -f "$marker"
# The prebuild, confined, on the real ReLU with the cache under the (hidden) home: an extension of
# its own (it requests the precompiled header its flags lack), the same again under another name
# (it finds the header made), a hostile one imported with the screen only recording, and one
# whose process reports its calls too short (the timing bound).
R="$KB/KernelBench/level1/19_ReLU.py"
C=$HOME/.cache/kmcts-conf-kb-$$
secret=$HOME/kmcts-hostile-secret-$$
echo "sekrit-$$" > "$secret"; chmod 600 "$secret"
sed -e "s|HOSTILE_MARKER|/tmp/kmcts-hostile-prebuild-$$|" -e "s|HOSTILE_SECRET|$secret|" \
  tests/fixtures/hostile/kb_prebuild_hostile.py > "$W/kb_prebuild_hostile.py"
sed 's/kmcts_attr_relu_cuda/kmcts_conf_relu_again/' problems/kernelbench-format/attribution/19_ReLU/own_cuda.py > "$W/own_cuda_again.py"
for c in problems/kernelbench-format/attribution/19_ReLU/own_cuda.py "$W/own_cuda_again.py" "$W/kb_prebuild_hostile.py" \
         tests/fixtures/hostile/kb_forged_timing.py; do
  t0=$SECONDS
  "$K" measure "$R" "$c" --set evaluator.kernelbench.python=python3 --set evaluator.kernelbench.screen=record \
    --set evaluator.cache_dir="$C" --jsonl "$W/kb-$(basename "$c" .py).jsonl" > "$W/kb-$(basename "$c" .py).txt" 2>&1
  echo "kb $(basename "$c"): exit $?, $((SECONDS - t0)) s" >> "$W/summary.txt"
done
ls "$C"/kernelbench/pch > "$W/pch.txt" 2>&1
cat "$C"/kernelbench/extensions/*/hostile-findings.txt > "$W/kb-hostile-findings.txt" 2>&1
echo "hostile prebuild markers: $(ls /tmp/kmcts-hostile-prebuild-$$* "$HOME/hostile-marker" "$secret.written" 2>/dev/null | wc -l)" >> "$W/summary.txt"
rm -rf "$C" "$secret" "$secret.written" /tmp/kmcts-hostile-prebuild-$$* "$HOME/hostile-marker"
bash tests/e2e/hostile.sh "$PWD/$K" "$PWD" > "$W/hostile.txt" 2>&1
echo "hostile.sh: exit $?" >> "$W/summary.txt"
KB_DEVICE=0 bash tests/e2e/kernelbench_hostile.sh "$PWD/$K" "$PWD" > "$W/kb-hostile-harness.txt" 2>&1
echo "kernelbench_hostile.sh on GPU 0: exit $?" >> "$W/summary.txt"
python3 - "$W" > "$W/table.txt" <<'PY'
import json, statistics, sys
for c in ("true", "false"):
    rows = [json.loads(l) for l in open(f"{sys.argv[1]}/cuda-{c}.jsonl")]
    run = [r.get("run_seconds", 0) for r in rows]
    print(f"confine={c}: verdicts {[r.get('verdict') for r in rows]}, run s {[round(x, 3) for x in run]} "
          f"(median {statistics.median(run):.3f}), speedups {[round(r.get('speedup', 0), 4) for r in rows]}, "
          f"confinement '{rows[0].get('details', {}).get('confinement', '')}'")
import glob, os
for path in sorted(glob.glob(f"{sys.argv[1]}/kb-*.jsonl")):
    for r in map(json.loads, open(path)):
        d = r.get("details", {})
        b = d.get("counters", {}).get("timing_bound", {})
        sec = d.get("seconds", {})
        print(f"{os.path.basename(path)}: {r.get('verdict')} {r.get('speedup', 0):.3f}x build {r.get('compile_seconds', 0):.1f} s, "
              f"staged {sec.get('stage_extensions', float('nan')):.3f} s, load {sec.get('load', float('nan')):.2f} s, "
              f"run {r.get('run_seconds', 0):.1f} s; bound unaccounted {b.get('unaccounted_ms', 0):.2f} (wall), "
              f"{b.get('unaccounted_gpu_ms', float('nan')):.2f} (GPU event pairs) of {b.get('allowed_ms', 0):.2f} ms allowed "
              f"({b.get('candidate_calls', 0)} calls); {r.get('message', '')[:300]}")
PY
tail -3 "$W/doctor.txt"; cat "$W/summary.txt" "$W/table.txt" "$W/kb-hostile-findings.txt" "$W/pch.txt"; tail -3 "$W/hostile.txt"
tail -3 "$W/kb-hostile.txt"
