#!/usr/bin/env bash
# The seed-only pass over the real KernelBench (issue 25): `kmcts kernelbench --budget 1` on a
# checkout of ScalingIntelligence/KernelBench, one level at a time, hardened mode, eager
# baseline only (--no-compile-baseline), no hygiene check, SEARCHES campaigns' searches at
# once on GPU 0 (a load-and-evaluate pass: its timings share the GPU and are not figures to
# publish). Each problem's JSON (verdict, message, wall and GPU seconds) goes to one archive.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb SEARCHES=4 LIMIT_S=540 [PROBLEMS=1-5,19] [MODE=faithful] \
#          bash bench/kernelbench/seed_pass.sh LEVEL [LEVEL ...]
# Several searches on one GPU can run it out of memory (level 1's inputs are up to 6.4 GB and
# the hardened mode keeps several sets): rerun those problems with SEARCHES=1 and PROBLEMS.
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-seed-pass}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb}
SEARCHES=${SEARCHES:-4}
MODE=${MODE:-hardened}
LIMIT_S=${LIMIT_S:-540}
mkdir -p "$OUT"
gpus=$(printf '0,%.0s' $(seq 1 "$SEARCHES")); gpus=${gpus%,}
start=$SECONDS
for level in "$@"; do
  left=$((LIMIT_S - (SECONDS - start)))
  [ $left -gt 30 ] || { echo "level $level: no time left"; continue; }
  t0=$SECONDS
  select=()
  [ -n "${PROBLEMS:-}" ] && select=(--problems "$PROBLEMS")
  timeout -s INT $left "$KMCTS" kernelbench --kb-root "$KB" --level "$level" "${select[@]}" --budget 1 --gpus "$gpus" \
    --mode "$MODE" --no-compile-baseline --no-hygiene --out "$OUT/level$level" \
    --set evaluator.kernelbench.python=python3 --set evaluator.cache_dir="$OUT/cache" \
    --set evaluator.kernelbench.timeout_s=240 > "$OUT/level$level.md" 2> "$OUT/level$level.err"
  echo "level $level: exit $?, $((SECONDS - t0)) s, $(ls "$OUT/level$level/problems" 2>/dev/null | grep -vc error) results"
done
python3 - "$OUT" <<'EOF_PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "level*", "problems", "*.json"))):
    if path.endswith((".hygiene.json", ".error.json")):
        continue
    r = json.load(open(path))
    seed = r.get("seed") or {}
    rows.append({"level": path.split(os.sep)[-3], "problem": r.get("problem"), "status": r.get("status"),
                 "verdict": seed.get("verdict"), "speedup": (seed.get("speedup") or {}).get("eager"),
                 "wall_s": r.get("wall_seconds"), "gpu_s": r.get("gpu_seconds"),
                 "message": (seed.get("message") or r.get("message") or "")[:400]})
with open(os.path.join(out, "seed_pass.jsonl"), "w") as f:
    for row in rows:
        f.write(json.dumps(row) + "\n")
ok = sum(1 for r in rows if r["verdict"] == "ok")
print(f"{len(rows)} problems with a result, {ok} seeds ok")
for r in rows:
    if r["verdict"] != "ok":
        print(f"  {r['level']}/{r['problem']}: {r['status']} {r['verdict']}: {r['message'][:200]}")
EOF_PY
archive="seed-pass-$(date -u +%H%M%S).tgz"
tar -C "$OUT" --exclude=./cache --exclude='*.sqlite*' -czf "/tmp/$archive" . && mv "/tmp/$archive" "$OUT/"
echo "== done: $OUT/$archive"
