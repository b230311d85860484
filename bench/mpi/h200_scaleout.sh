#!/usr/bin/env bash
# --mpi on a two-GPU host: the same work with one worker rank (GPU 0) and with two (GPUs 0 and
# 1), one worker per GPU, rank 0 searching. Records evaluations per minute (rank 0's
# --mpi-stats), how busy each worker's measurement slot was, and the GPUs' own utilization
# (nvidia-smi, every 0.5 s). Stages:
#   cuda - `kmcts ablate bench/mpi/cuda_grid.json`: a search of each shipped CUDA problem
#          with the rule agents and the CUDA evaluator (the same searches either way);
#   kb   - `kmcts kernelbench` over problems/kernelbench-format level 1 (KB_PROBLEMS) with the
#          submissions agents, hardened mode.
# Usage: OUT=DIR KMCTS=.device/bundle/bin/kmcts bash bench/mpi/h200_scaleout.sh [cuda] [kb]
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-mpi}
KMCTS=${KMCTS:-.device/bundle/bin/kmcts}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$OUT"
stages=${*:-cuda kb}

# Runs "$@" under nvidia-smi sampling; LABEL.smi.csv holds index, utilization % per sample.
sampled() {
  local label=$1
  shift
  nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 500 > "$OUT/$label.smi.csv" &
  local smi=$!
  local t0=$SECONDS
  "$@" > "$OUT/$label.out" 2> "$OUT/$label.err"
  echo "$label: exit $?, $((SECONDS - t0)) s"
  kill $smi
  tail -3 "$OUT/$label.err"
}

# The device tool brings back few files: one archive, made however the script ends.
pack() {
  python3 "$(dirname "$0")/summarize.py" "$OUT" | tee "$OUT/summary.md"
  local archive="mpi-$(date -u +%H%M%S).tgz"
  tar -C "$OUT" --exclude='./cache-*' -czf "/tmp/$archive" . && find "$OUT" -mindepth 1 -delete && mv "/tmp/$archive" "$OUT/"
  echo "== done: $OUT/$archive"
}
trap pack EXIT

for stage in $stages; do
  for gpus in 1 2; do
    ranks=$((gpus + 1))
    # One worker per GPU either way: the one-GPU run sees GPU 0 only.
    if [ $gpus = 1 ]; then export CUDA_VISIBLE_DEVICES=0; else export CUDA_VISIBLE_DEVICES=0,1; fi
    label="$stage-${gpus}gpu"
    case $stage in
      cuda)
        sampled "$label" mpirun -np $ranks -x CUDA_VISIBLE_DEVICES "$KMCTS" ablate bench/mpi/cuda_grid.json --quiet \
          --out "$OUT/grid-$label" --mpi --mpi-build-ahead 3 --mpi-stats "$OUT/$label.stats.json" ;;
      kb)
        subs=$OUT/submissions
        rm -rf "$subs" && mkdir -p "$subs" && cp -r problems/kernelbench-format/candidates/* "$subs/"
        sampled "$label" mpirun -np $ranks "$KMCTS" kernelbench --kb-root problems/kernelbench-format --level 1 \
          --problems "${KB_PROBLEMS:-1-4}" --budget ${KB_BUDGET:-8} --out "$OUT/kb-$label" --quiet --no-hygiene \
          --set agents.backend=submissions --set agents.submissions.dir="$subs" \
          --set search.strategy=random --set search.random.root_only=true --set search.workers=4 \
          --set evaluator.kernelbench.python=python3 --set evaluator.cache_dir="$OUT/cache-$label" \
          --mpi --mpi-stats "$OUT/$label.stats.json" ;;
      *) echo "unknown stage $stage"; exit 2 ;;
    esac
  done
done
