#!/usr/bin/env bash
# A bounded kill -9 soak (issue 27, item 6): a 2-worker search of the shipped CPU matmul is killed
# with SIGKILL at 10 random moments, each time resumed, then run to its budget. Nothing recorded
# is lost (every evaluation a killed process committed is still there), no agent call had an
# empty plan, `kmcts replay` rebuilds the graph, and no worker folder or process is left.
# Usage: kill_soak.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
export TMPDIR="$work/tmp"  # the worker folders of this test alone, to count what is left
mkdir -p "$TMPDIR"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
command -v sqlite3 > /dev/null || { echo "no sqlite3"; exit 77; }
run="$work/run"
count() { sqlite3 "$run/run.sqlite" "select count(*) from evaluations" 2>/dev/null || echo 0; }
RANDOM=7  # the same moments every time
kills=0
recorded=0
for round in $(seq 1 10); do
  if [ -f "$run/run.sqlite" ]; then
    "$kmcts" resume "$run" --quiet > "$work/out" 2>&1 &
  else
    "$kmcts" run "$src/problems/cpu/matmul" --budget 60 --workers 2 --seed 5 --out "$run" \
      --set evaluator.max_time_ms=50 --quiet > "$work/out" 2>&1 &
  fi
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  sleep "$((RANDOM % 2))"
  kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
  wait "$pid" 2>/dev/null
  now=$(count)
  [ "$now" -ge "$recorded" ] || fail "round $round: $now evaluations stored, $recorded before the kill"
  recorded=$now
done
[ "$kills" -ge 8 ] || fail "only $kills of 10 kills landed before the run ended"
out=$("$kmcts" resume "$run" --quiet 2>&1)
status=$?
[ $status = 0 ] || grep -q "already finished (status completed)" <<<"$out" || fail "the last resume exited $status: $out"
grep -q '"status": "completed"' "$run/summary.json" || fail "the run did not complete: $(cat "$run/summary.json" 2>/dev/null)"
[ "$(count)" -ge 60 ] || fail "$(count) evaluations after the last resume, budget 60"
empty=$(sqlite3 "$run/run.sqlite" "select count(*) from events where json_extract(payload, '$.plan') = ''
  and (kind = 'child' or (kind = 'agent_failed' and json_extract(payload, '$.exhausted') = 0
                          and json_extract(payload, '$.error') not like 'cancelled:%'))")
[ "$empty" = 0 ] || fail "$empty agent calls had an empty plan"
replay=$("$kmcts" replay "$run" 2>&1) || fail "replay: $replay"
"$kmcts" run "$src/problems/cpu/matmul" --budget 1 --quiet --out "$work/reclaim" > /dev/null 2>&1  # reclaims leftovers
left=$(ls "$TMPDIR" | grep -c '^kmcts-cpu-')
[ "$left" = 0 ] || fail "$left worker folders left in $TMPDIR: $(ls "$TMPDIR")"
pgrep -f "kmcts-cpu-worker $TMPDIR" > /dev/null && fail "a worker process is still running"
echo "1 passed, 0 failed ($kills kills, $(count) evaluations, $replay)"
