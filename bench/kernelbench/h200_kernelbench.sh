#!/usr/bin/env bash
# KernelBench on the GPU machine (torch, CUDA, the kmcts bundle): the hardened harness on the
# cheat corpus, and level-style `kmcts kernelbench` campaigns over problems/kernelbench-format
# with the submissions agents (correct, wrong, slow, fast and cheating candidates) in hardened
# and faithful mode. Results under $OUT; bench/kernelbench/summarize.py turns them into tables.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts bash bench/kernelbench/h200_kernelbench.sh [cheats] [hardened] [faithful] [cold]
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-kb}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
SHARE=$(dirname "$KMCTS")/../share/kmcts/kernelbench
P=problems/kernelbench-format
mkdir -p "$OUT"
stages=${*:-cheats hardened faithful}

# Submissions: each problem's candidates, and for 4_scale_bias the whole cheat corpus.
subs=$OUT/submissions
rm -rf "$subs"
mkdir -p "$subs"
cp -r $P/candidates/* "$subs/"
n=10
for f in $P/cheats/4_scale_bias/*.py; do cp "$f" "$subs/4_scale_bias/$n.py"; n=$((n + 1)); done

for stage in $stages; do
  case $stage in
    cheats)  # the harness alone, one process per candidate, on the full-size problem
      : > "$OUT/cheats.jsonl"
      for f in $P/candidates/4_scale_bias/0.py $P/cheats/4_scale_bias/*.py; do
        t0=$SECONDS
        line=$(python3 "$SHARE/hardened.py" --problem $P/level1/4_scale_bias.py --candidate "$f" \
                 --timer-lib "$SHARE/libkmcts_kb_timer.so" 2> "$OUT/cheat-$(basename "$f" .py).err" | tail -1)
        python3 -c "import json,sys; r=json.loads(sys.argv[1]); [v.pop('times_ms', None) for v in r.get('runtime_ms', {}).values()]; r['file']=sys.argv[2]; r['process_seconds']=int(sys.argv[3]); print(json.dumps(r))" \
          "$line" "$f" $((SECONDS - t0)) >> "$OUT/cheats.jsonl" || echo "{\"file\": \"$f\", \"error\": \"no result\"}" >> "$OUT/cheats.jsonl"
        tail -1 "$OUT/cheats.jsonl" | cut -c1-300
      done ;;
    hardened|faithful|cold)  # cold: hardened with one harness process per candidate (no warm ones)
      problems=${KB_PROBLEMS:-1-4}
      t0=$SECONDS
      mode=$stage warm=true
      [ "$stage" = cold ] && mode=hardened warm=false
      "$KMCTS" kernelbench --kb-root $P --level 1 --problems $problems --budget 30 --gpus 0 --mode "$mode" \
        --set evaluator.kernelbench.warm=$warm \
        --out "$OUT/kb-$stage" --set agents.backend=submissions --set agents.submissions.dir="$subs" \
        --set search.strategy=random --set search.random.root_only=true --set search.workers=4 \
        --set evaluator.kernelbench.python=python3 --set evaluator.cache_dir="$OUT/cache" \
        > "$OUT/kb-$stage.md" 2> "$OUT/kb-$stage.err"
      echo "$stage campaign: exit $?, $((SECONDS - t0)) s"
      cat "$OUT/kb-$stage.md" | head -12 ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
# The device tool brings back few files: one archive (built extensions left out).
archive="kernelbench-$(date -u +%H%M%S).tgz"
tar -C "$OUT" --exclude=./cache -czf "/tmp/$archive" . && find "$OUT" -mindepth 1 -delete && mv "/tmp/$archive" "$OUT/"
echo "== done: $OUT/$archive"
