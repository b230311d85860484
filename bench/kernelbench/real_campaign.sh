#!/usr/bin/env bash
# A campaign on the real KernelBench (issue 25, item 5) on the GPU machine: `kmcts kernelbench`
# over the problems campaign_candidates.py writes candidates for (level 1 problems 1-20, five of
# level 2, two of level 3), with the submissions agents handing in those candidates, hardened
# mode, SEARCHES searches at once on GPU 0. Levels 2 and 3 first, then level 1, within LIMIT_S.
# Each level's summary.md/summary.json and problem JSONs go to one archive under $OUT.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts KB=.kb SEARCHES=4 LIMIT_S=540 [EXTRA="--no-hygiene"] \
#          bash bench/kernelbench/real_campaign.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-real-campaign}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
KB=${KB:-.kb}
SEARCHES=${SEARCHES:-4}
LIMIT_S=${LIMIT_S:-540}
EXTRA=${EXTRA:-}
work=${WORK:-/tmp/kmcts-real-campaign-work}
mkdir -p "$OUT" "$work"
python3 bench/kernelbench/campaign_candidates.py "$KB" "$work/subs" > "$OUT/candidates.txt" || exit 1
gpus=$(printf '0,%.0s' $(seq 1 "$SEARCHES")); gpus=${gpus%,}
start=$SECONDS
for level in 2 3 1; do
  left=$((LIMIT_S - (SECONDS - start)))
  [ $left -gt 40 ] || { echo "level $level: no time left"; continue; }
  names=$(ls "$work/subs/level$level" | tr '\n' ,); names=${names%,}
  t0=$SECONDS
  # shellcheck disable=SC2086
  timeout -s INT -k 20 $((left - 10)) "$KMCTS" kernelbench --kb-root "$KB" --level $level --problems "$names" \
    --budget 4 --gpus "$gpus" --out "$work/level$level" --no-compile-baseline $EXTRA \
    --set agents.backend=submissions --set agents.submissions.dir="$work/subs/level$level" \
    --set search.strategy=random --set search.random.root_only=true \
    --set evaluator.kernelbench.python=python3 --set evaluator.cache_dir="$work/cache" \
    > "$work/level$level.md" 2> "$work/level$level.err"
  echo "level $level: exit $?, $((SECONDS - t0)) s"
done
for level in 1 2 3; do
  [ -f "$work/level$level/summary.md" ] && { echo "=== level $level"; head -40 "$work/level$level/summary.md"; }
done
tar -C "$work" --exclude=./cache --exclude='runs' -czf "$OUT/campaign.tgz" subs level1 level2 level3 level1.err level2.err level3.err 2>/dev/null
echo "== done: $OUT/campaign.tgz"
