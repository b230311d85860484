#!/usr/bin/env bash
# `kmcts kernelbench` on the CPU (Debian's python3-torch; skipped with 77 where no python3 has
# torch): a level-style folder of three small problems, submissions as the agents, hardened
# mode. The campaign is killed with SIGKILL in the middle, run again with the same arguments
# (resumed with two workers: finished problems kept, the interrupted one continued), and a
# second campaign in the same folder or one with another mode is refused; the summary must hold
# every problem with the verdicts its submissions deserve.
# Usage: kernelbench_campaign.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
source "$src/tests/fixtures/kernelbench/e2e_setup.sh"
small_level
args=(kernelbench --kb-root "$work/kb" --level 1 --budget 3 --out "$work/out"
  --set agents.backend=submissions --set agents.submissions.dir="$work/subs"
  --set search.strategy=random --set search.random.root_only=true --set search.workers=1
  --set evaluator.kernelbench.python="$python" --set evaluator.cache_dir="$work/cache")
campaign() { "$kmcts" "${args[@]}" "$@"; }  # the GPU list may change between runs
# A first run, killed once the first problem is done and the second has started.
"$kmcts" "${args[@]}" --gpus cpu > "$work/first.out" 2> "$work/first.err" &
pid=$!
for _ in $(seq 1 600); do
  [ -f "$work/out/problems/1_scale_a.json" ] && [ -f "$work/out/runs/2_scale_b/run.sqlite" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
# While it runs, a second campaign in the same folder is refused.
kill -0 $pid 2>/dev/null || fail "the first campaign ended before it could be killed: $(cat "$work/first.err")"
out=$(campaign --gpus cpu --quiet 2>&1) && fail "a second campaign in the same folder was accepted: $out"
grep -q "in use by kmcts process $pid" <<<"$out" || fail "the refusal does not name the running process: $out"
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ -f "$work/out/problems/1_scale_a.json" ] || fail "the first problem had no result before the kill: $(cat "$work/first.err")"
first_done=$(stat -c %Y "$work/out/problems/1_scale_a.json")
# A different mode in the same folder is refused before anything runs.
out=$(campaign --gpus cpu --mode faithful 2>&1) && fail "a campaign with another mode was accepted: $out"
grep -q "mode" <<<"$out" || fail "the refusal does not name the mode: $out"
# Resumed, with two workers (problems in parallel, as over two GPUs).
out=$(campaign --gpus cpu,cpu --quiet 2>&1) || fail "the resumed campaign exited $?: $out"
[ "$(stat -c %Y "$work/out/problems/1_scale_a.json")" = "$first_done" ] || fail "the finished problem was redone"
summary="$work/out/summary.json"
[ -f "$work/out/summary.md" ] || fail "no summary.md"
check() { "$python" "$fixtures/check_campaign.py" "$summary" "$work/out/problems"; }
check || fail "summary: $(cat "$summary")"
echo "1 passed, 0 failed"
