#!/usr/bin/env bash
# The confinement of candidate processes on a GPU host (issue 28): `kmcts doctor`'s confinement
# line; the CUDA worker confined and not (`kmcts measure problems/cuda/silu_mul --repeat 5` with
# evaluator.confine=true, then false: verdicts, wall seconds, the recorded confinement, the cost
# per evaluation); a KernelBench candidate the static screen rejects, which writes a marker when
# imported (tests/fixtures/hostile/kb_import_writes.py on the real level1/19_ReLU.py: it must be
# rejected and never imported, by the prebuild neither); and tests/e2e/hostile.sh on the host.
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
bash tests/e2e/hostile.sh "$PWD/$K" "$PWD" > "$W/hostile.txt" 2>&1
echo "hostile.sh: exit $?" >> "$W/summary.txt"
python3 - "$W" > "$W/table.txt" <<'PY'
import json, statistics, sys
for c in ("true", "false"):
    rows = [json.loads(l) for l in open(f"{sys.argv[1]}/cuda-{c}.jsonl")]
    run = [r.get("run_seconds", 0) for r in rows]
    print(f"confine={c}: verdicts {[r.get('verdict') for r in rows]}, run s {[round(x, 3) for x in run]} "
          f"(median {statistics.median(run):.3f}), speedups {[round(r.get('speedup', 0), 4) for r in rows]}, "
          f"confinement '{rows[0].get('details', {}).get('confinement', '')}'")
PY
tail -3 "$W/doctor.txt"; cat "$W/summary.txt" "$W/table.txt"; tail -3 "$W/hostile.txt"; tail -3 "$W/kb-hostile.txt"
