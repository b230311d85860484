#!/usr/bin/env bash
# The seeds' A/A check on the GPU machine (issue 25, item 6): a KernelBench seed is the
# reference itself, so its speedup against eager must be 1. `kmcts measure` of each problem's
# seed, REPEAT fresh evaluations with torch.compile timed in the same run and REPEAT without, for
# each place the eager side is timed (evaluator.kernelbench.eager_process: child, harness),
# then (CAMPAIGN=1) one `kmcts kernelbench --budget 1` campaign over the same problems (its
# summary's seed_aa). One JSON line per evaluation in $OUT/aa.jsonl; the table in $OUT/aa.md.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb REPEAT=3 LEVEL=1 PROBLEMS="19 23 40" COMPILE="false true" \
#          EAGER="child harness" CAMPAIGN=1 bash bench/kernelbench/aa_check.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-aa}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb}
REPEAT=${REPEAT:-3}
LEVEL=${LEVEL:-1}
PROBLEMS=${PROBLEMS:-19 23 40}
COMPILE=${COMPILE:-false true}  # torch.compile timed in the same run, or not
EAGER=${EAGER:-child harness}   # where the eager reference is timed
CAMPAIGN=${CAMPAIGN:-1}
mkdir -p "$OUT"
: > "$OUT/aa.jsonl"
common=(--set evaluator.kernelbench.python=python3 --set evaluator.cache_dir="$OUT/cache")
for n in $PROBLEMS; do
  file=$(ls "$KB/KernelBench/level$LEVEL/${n}_"*.py | head -1)
  for eager in $EAGER; do
  for compile in $COMPILE; do
    t0=$SECONDS
    "$KMCTS" measure "$file" --repeat "$REPEAT" --set evaluator.kernelbench.time_compile=$compile "${common[@]}" \
      --set evaluator.kernelbench.eager_process=$eager \
      --jsonl "$OUT/measure.jsonl" > "$OUT/measure-$n-$compile-$eager.txt" 2>&1
    echo "measure $n compile=$compile eager=$eager: exit $?, $((SECONDS - t0)) s"
    python3 - "$OUT/measure.jsonl" "$file" "$compile" "$eager" >> "$OUT/aa.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
open(sys.argv[1], "w").close()  # consumed
for r in lines:
    d = r.get("details", r)
    print(json.dumps({"path": "measure", "problem": sys.argv[2].split("/")[-1], "time_compile": sys.argv[3] == "true",
                      "eager_process": sys.argv[4], "verdict": r.get("verdict"), "speedup": d.get("speedup"),
                      "speedup_ci": d.get("speedup_ci"), "seconds": d.get("seconds")}))
PY
  done
  done
done
if [ "$CAMPAIGN" = 1 ]; then
t0=$SECONDS
"$KMCTS" kernelbench --kb-root "$KB" --level "$LEVEL" --problems "$(echo $PROBLEMS | tr ' ' ,)" --budget 1 --gpus 0 \
  --no-hygiene --out "$OUT/campaign" "${common[@]}" > "$OUT/campaign.md" 2> "$OUT/campaign.err"
echo "campaign: exit $?, $((SECONDS - t0)) s"
fi
python3 - "$OUT" > "$OUT/aa.md" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(out, "aa.jsonl"))]
for path in sorted(glob.glob(os.path.join(out, "campaign", "problems", "*.json"))):
    if path.endswith((".hygiene.json", ".error.json")):
        continue
    r = json.load(open(path))
    seed = r.get("seed") or {}
    rows.append({"path": "campaign", "problem": r.get("problem"), "time_compile": True, "eager_process": "default",
                 "verdict": seed.get("verdict"),
                 "speedup": seed.get("speedup"), "speedup_ci": seed.get("speedup_ci")})
with open(os.path.join(out, "aa.jsonl"), "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print("| path | problem | eager timed in | compile timed | seed speedup vs eager | 95% CI |")
print("|---|---|---|---|---|---|")
for r in rows:
    s = (r.get("speedup") or {}).get("eager")
    ci = (r.get("speedup_ci") or {}).get("eager")
    print(f"| {r['path']} | {r['problem']} | {r.get('eager_process', 'harness')} | {r['time_compile']} | "
          f"{'-' if s is None else f'{s:.4f}'} | "
          f"{'-' if not ci else f'[{ci[0]:.4f}, {ci[1]:.4f}]'} |")
PY
cat "$OUT/aa.md"
