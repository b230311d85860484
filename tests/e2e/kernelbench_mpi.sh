#!/usr/bin/env bash
# `kmcts kernelbench --mpi` on the CPU: the three small problems of kernelbench_campaign.sh
# searched on rank 0, every candidate evaluated by the KernelBench harness on two worker
# ranks; the leaderboard must be the one the local campaign makes. Skipped (77) without
# mpirun or a python3 with torch.
# Usage: kernelbench_mpi.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
[ -x "$(dirname "$kmcts")/kmcts-mpi-rogue" ] && command -v mpirun >/dev/null ||
  { echo "skipped: no mpirun, or kmcts built without MPI"; exit 77; }
source "$src/tests/fixtures/kernelbench/e2e_setup.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Under AddressSanitizer (build-asan), Open MPI's own allocations left at MPI_Finalize (its
# dlopen'ed components: unknown modules to LeakSanitizer) fail every rank; memory errors are
# still caught, leaks here are not.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
small_level
out=$(timeout -k 5 300 mpirun -np 3 "$kmcts" kernelbench --kb-root "$work/kb" --level 1 --budget 3 --out "$work/out" --gpus cpu --quiet \
  --set agents.backend=submissions --set agents.submissions.dir="$work/subs" \
  --set search.strategy=random --set search.random.root_only=true --set search.workers=1 \
  --set evaluator.kernelbench.python="$python" --set evaluator.cache_dir="$work/cache" \
  --mpi --mpi-stats "$work/stats.json" 2>&1) || fail "the campaign under MPI exited $?: $out"
grep -q "kmcts: MPI: 2 worker(s)" <<<"$out" || fail "rank 0 did not list its 2 workers: $out"
summary="$work/out/summary.json"
"$python" "$fixtures/check_campaign.py" "$summary" "$work/out/problems" || fail "summary: $(cat "$summary")"
"$python" - "$work/stats.json" "$work/out/problems" <<'PY' || fail "the workers did not do the evaluations"
import json, os, sys
s = json.load(open(sys.argv[1]))
assert s["evaluations"] >= 6 and all(w["evaluations"] > 0 for w in s["workers"]), s
for n in ("1_scale_a", "2_scale_b", "3_scale_c"):
    assert json.load(open(os.path.join(sys.argv[2], n + ".json")))["gpu"] == "mpi"
PY
echo "1 passed, 0 failed"
