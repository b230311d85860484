#!/usr/bin/env bash
# --mpi end to end on one machine (mpirun --oversubscribe on loopback): rank 0 searches, the
# other ranks evaluate. A lockstep search and a small grid give what a local run gives; the
# CPU evaluator's verdicts come back from the workers; a worker killed mid-run loses no
# recorded result (its jobs go to the others); with every worker gone the run is suspended
# and `kmcts resume` finishes it; a rogue rank's malformed, oversized and stray messages are
# rejected with errors naming it, and its silence loses it. Skipped (77) without mpirun.
# Usage: mpi.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$(cd "$2" && pwd)
rogue="$(dirname "$kmcts")/kmcts-mpi-rogue"
command -v mpirun >/dev/null && [ -x "$rogue" ] || { echo "skipped: no mpirun or no kmcts-mpi-rogue (MPI not built)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI and the GPU machine run as root
# Under AddressSanitizer (build-asan), Open MPI's own allocations left at MPI_Finalize (its
# dlopen'ed components: unknown modules to LeakSanitizer) fail every rank; memory errors are
# still caught, leaks here are not.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
pid=
# Every process of the test names $work on its command line: a failure leaves none behind.
trap 'pkill -9 -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$src" || exit 1
fail() { echo "FAIL $*"; echo "$passed passed, 1 failed"; exit 1; }
passed=0
ok() { passed=$((passed + 1)); echo "ok $passed" >&2; }
# Each launch has a limit, so a hang names its step instead of running into CTest's timeout.
mpirun_path=$(type -P mpirun)
mpirun() { timeout -k 5 180 "$mpirun_path" "$@"; }
space=tests/fixtures/synthetic_space
quick=(--mpi-heartbeat 0.2 --mpi-worker-timeout 5)
# The graph as exported (nodes, edges, evaluations, summary), without where each evaluation ran
# (details.mpi: rank, host, device) and the wall times.
graph() { "$kmcts" export "$1" --format json | python3 -c '
import json, sys
g = json.load(sys.stdin)
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "mpi"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
s = {k: v for k, v in g["summary"].items() if "wall" not in k and "seconds" not in k and not k.startswith("coordinator_") and k != "run_dir"}
print(json.dumps(strip([g["nodes"], g["edges"], g["evaluations"], s]), sort_keys=True))'; }

# 1. A lockstep search: 3 worker ranks give the graph a local run gives.
args=(run "$space" --set evaluator.name=synthetic --set evaluator.synthetic.latency_ms=20 --budget 30 --workers 4
  --deterministic --quiet)
"$kmcts" "${args[@]}" --out "$work/local" >/dev/null 2>&1 || fail "the local run failed"
out=$(mpirun -np 4 "$kmcts" "${args[@]}" --out "$work/mpi" --mpi "${quick[@]}" --mpi-stats "$work/stats.json" 2>&1) ||
  fail "the MPI run failed: $out"
grep -q "kmcts: MPI: 3 worker(s), 3 measurement slot(s)" <<<"$out" || fail "rank 0 did not list 3 workers: $out"
[ "$(graph "$work/local")" = "$(graph "$work/mpi")" ] || fail "the MPI run's graph differs from the local run's"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["evaluations"] == 30 and len(s["workers"]) == 3, s
assert sum(w["evaluations"] for w in s["workers"]) == 30, s
assert all(w["evaluations"] > 0 for w in s["workers"]), "a worker got no job: %s" % s' "$work/stats.json" ||
  fail "--mpi-stats is wrong"
ok

# 2. A small grid (2 policies x 2 seeds, synthetic evaluator) gives the same runs.
grid=tests/fixtures/mpi_grid.json
"$kmcts" ablate "$grid" --out "$work/grid-local" --quiet >/dev/null 2>&1 || fail "the local grid failed"
out=$(mpirun -np 3 "$kmcts" ablate "$grid" --out "$work/grid-mpi" --quiet --mpi "${quick[@]}" \
  --mpi-stats "$work/grid-stats.json" 2>&1) || fail "the MPI grid failed: $out"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["evaluations"] > 0 and all(w["evaluations"] > 0 for w in s["workers"]), s' "$work/grid-stats.json" ||
  fail "the grid's evaluations did not run on the workers"
q="select config, seed, status, best_speedup, evaluations, failures from runs order by config, seed"
[ "$(sqlite3 "$work/grid-local/index.sqlite" "$q")" = "$(sqlite3 "$work/grid-mpi/index.sqlite" "$q")" ] ||
  fail "the MPI grid's runs differ from the local grid's"
[ "$(sqlite3 "$work/grid-mpi/index.sqlite" "select count(*) from runs where status = 'done'")" = 4 ] ||
  fail "the MPI grid did not finish its 4 runs"
ok

# 3. The CPU evaluator on the workers: the seed and every variant judged there.
out=$(mpirun -np 3 "$kmcts" run problems/cpu/matmul --budget 6 --out "$work/cpu" --quiet --mpi "${quick[@]}" 2>&1) ||
  fail "the CPU run under MPI failed: $out"
grep -qE "^status +completed" <<<"$out" && grep -qE "^evaluations +6 " <<<"$out" || fail "the CPU run did not complete: $out"
ranks=$(sqlite3 "$work/cpu/run.sqlite" "select count(*) from evaluations where details like '%\"mpi\":{%'")
[ "$ranks" = 6 ] || fail "$ranks of 6 CPU evaluations say which worker ran them"
ok

results() { sqlite3 "$1/run.sqlite" "select node, verdict, speedup, details, cand_samples_ns from evaluations order by node"; }
# kept RUN BEFORE: every row of BEFORE (results of RUN earlier) is still among RUN's results.
kept() {
  local after line
  after=$(results "$1")
  while IFS= read -r line; do
    grep -qxF -- "$line" <<<"$after" || fail "a result recorded before the kill is gone: ${line:0:120}"
  done <<<"$2"
}
# kill_mid_run NAME RANKS VICTIM_RANK MIN_SOURCES BUDGET: a run (mpirun --enable-recovery, 150 ms
# per evaluation) whose worker VICTIM_RANK gets SIGKILL once MIN_SOURCES variants exist and two
# results are recorded; sets
# run (its folder) and before (its results just before the kill); output in $work/NAME.out;
# returns mpirun's exit code.
kill_mid_run() {
  run="$work/$1"
  mpirun --enable-recovery -np "$2" "$kmcts" run "$space" --set evaluator.name=synthetic \
    --set evaluator.synthetic.latency_ms=150 --budget "$5" --workers 4 --out "$run" --quiet --mpi "${quick[@]}" \
    >"$work/$1.out" 2>&1 &
  pid=$!
  local victim= code
  for _ in $(seq 1 300); do
    victim=$(grep -oE "rank $3 on [^ ]+ pid [0-9]+" "$work/$1.out" | grep -oE "[0-9]+$")
    [ -n "$victim" ] && [ "$(ls "$run/sources" 2>/dev/null | wc -l)" -ge "$4" ] &&
      [ "$(sqlite3 "$run/run.sqlite" "select count(*) from evaluations" 2>/dev/null)" -ge 2 ] && break
    sleep 0.05
  done
  [ -n "$victim" ] || fail "rank 0 never named its workers: $(cat "$work/$1.out")"
  before=$(results "$run")
  [ -n "$before" ] || fail "no result was recorded before the kill: $(cat "$work/$1.out")"
  kill -9 "$victim"
  wait "$pid"
  code=$?
  pid=
  return $code
}

# 4. A worker killed (SIGKILL) mid-run: its jobs go to the others, the run completes, and
# every result recorded before the kill is still there.
infra_errors() { sqlite3 "$1/run.sqlite" "select count(*) from evaluations where verdict = 'infra_error'"; }
kill_mid_run kill 4 2 8 40  # (its exit code: see 5)
grep -qE "worker rank 2 .*lost; its [1-9][0-9]* job" "$work/kill.out" ||
  fail "rank 0 did not report the lost worker and its jobs: $(cat "$work/kill.out")"
[ "$(infra_errors "$run")" = 0 ] || fail "the killed worker's jobs were recorded as infra errors, not redone"
grep -qE "^evaluations +40 " "$work/kill.out" || fail "the run did not reach its budget: $(cat "$work/kill.out")"
kept "$run" "$before"
"$kmcts" replay "$run" >/dev/null || fail "the run's event log does not replay"
ok

# 5. The only worker killed: the run is suspended (left resumable) and `kmcts resume`, here
# without MPI, finishes it from what was recorded. (mpirun --enable-recovery exits 0 whatever
# rank 0 returned: the output says what happened.)
kill_mid_run suspend 2 1 5 30
grep -q "every MPI worker was lost" "$work/suspend.out" && grep -qE "^status +suspended" "$work/suspend.out" ||
  fail "the run was not suspended: $(cat "$work/suspend.out")"
[ "$(sqlite3 "$run/run.sqlite" "select status from run")" = running ] || fail "the suspended run is not resumable"
out=$("$kmcts" resume "$run" --quiet 2>&1) || fail "resume of the suspended run failed: $out"
grep -qE "^evaluations +30 " <<<"$out" || fail "the resumed run did not reach its budget: $out"
kept "$run" "$before"
ok

# 6. A rogue rank: each bad message rejected with its sender and fault named; the rank
# lost by its silence; the run finished by the good worker.
version=$("$kmcts" --version | awk '{print $2}')
out=$(mpirun -np 2 "$kmcts" run "$space" --set evaluator.name=synthetic --set evaluator.synthetic.latency_ms=50 \
  --budget 20 --out "$work/rogue" --quiet --mpi --mpi-max-message-mb 1 --mpi-heartbeat 0.2 --mpi-worker-timeout 4 \
  : -np 1 "$rogue" "$version" 2>&1) || fail "the run beside a rogue rank failed: $out"
for want in "rank 2 \(tag 101 'hello'\) rejected: not JSON" "rank 2 \(tag 101 'hello'\) rejected: 'version' is not a string" \
  "rank 2 \(tag 105 'result'\) rejected: 2097152 bytes, over the limit of 1048576" \
  "rank 2 \(tag 999 'unknown'\) rejected: no message kind has this tag" \
  "rank 2 sent a result for job 424242, which it does not hold: rejected" \
  "rank 2 \(tag 105 'result'\) rejected: 'result' is not an object" "worker rank 2 on rogue silent for .*: lost"; do
  grep -qE "$want" <<<"$out" || fail "no error '$want' in: $out"
done
grep -qE "^evaluations +20 " <<<"$out" || fail "the run beside the rogue did not finish: $out"
[ "$(infra_errors "$work/rogue")" = 0 ] || fail "the rogue's jobs were recorded as infra errors, not redone"
ok

# 7. --mpi on one rank is refused with a clear error.
out=$("$kmcts" run "$space" --set evaluator.name=synthetic --budget 2 --out "$work/one" --mpi 2>&1)
[ $? = 2 ] && grep -q "needs two ranks or more" <<<"$out" || fail "--mpi on one rank was not refused: $out"
ok
echo "$passed passed, 0 failed"
