#!/usr/bin/env bash
# A run killed with SIGKILL mid-search resumes to its budget, loses nothing recorded, and
# its event log (before and after the kill) still replays to the stored graph.
# Usage: resume.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"
fail() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }

# 100 ms per measurement and one measurement slot: 40 evaluations take over 4 s.
"$kmcts" run "$src/tests/fixtures/synthetic_space" --set evaluator.name=synthetic \
  --set evaluator.synthetic.latency_ms=100 --budget 40 --workers 3 --out "$run" --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do  # wait until a few evaluations are recorded, then kill
  [ -f "$run/run.sqlite" ] && [ "$(ls "$run/sources" 2>/dev/null | wc -l)" -ge 8 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
[ -f "$run/summary.json" ] && fail "the run finished before it was killed"
before=$(ls "$run/sources" | wc -l)
# The killed run's log replays (its visit statistics may lag the log: not compared).
killed=$("$kmcts" replay "$run") || fail "replay of the killed run: $killed"
grep -q "never finished" <<<"$killed" || fail "replay did not say the run never finished: $killed"
# It shows as stopped (no process holds its lock), with a summary computed from its store.
shown=$("$kmcts" show "$run") || fail "show of the killed run exited $?: $shown"
grep -qE "^status +stopped" <<<"$shown" || fail "the killed run does not show as stopped: $shown"
stored=$(sqlite3 "$run/run.sqlite" "select count(*) from evaluations")
grep -qE "^evaluations +$stored " <<<"$shown" || fail "show does not count the $stored stored evaluations: $shown"
grep -q "kmcts resume" <<<"$shown" || fail "show of the killed run does not say how to continue it: $shown"
exported=$("$kmcts" export "$run" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['status'], d['summary']['status'])")
[ "$exported" = "stopped stopped" ] || fail "export of the killed run says '$exported'"
"$kmcts" report "$run" --html "$work/killed.html" --quiet && grep -q ">stopped<" "$work/killed.html" ||
  fail "the killed run's page does not say stopped"
[ -f "$run/summary.json" ] && fail "show wrote a summary.json into the killed run"

before_s=$(sqlite3 "$run/run.sqlite" "select max(time_s) from events")
out=$("$kmcts" resume "$run" --budget 44 --quiet) || fail "resume exited $?: $out"
# Its wall time is that of both processes (the killed one up to its last event).
wall=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['wall_seconds'])" "$run/summary.json")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$wall" "$before_s" ||
  fail "the resumed run's wall time $wall s leaves out the killed process's $before_s s"
grep -qE "^status +completed" <<<"$out" || fail "resume did not complete: $out"
grep -qE "^evaluations +44 " <<<"$out" || fail "resume did not spend the new budget: $out"
grep -q '"budget": 44' "$run/config.json" || fail "config.json does not show the new budget"
grep -q '"anneal_selections": 40' "$run/config.json" || fail "config.json does not keep the annealing horizon the run started with (its budget, 40)"
after=$(ls "$run/sources" | wc -l)
[ "$after" -ge "$before" ] || fail "sources were lost ($before before, $after after)"
replay=$("$kmcts" replay "$run") || fail "replay after resume: $replay"
# The planner's spare plans came back whole: no agent call of the resumed run had an empty plan.
# (An exhausted planner, which had no plan left to give, and a call the resume cancelled, which
# had not got one yet, are not such calls.)
empty_plans=$(sqlite3 "$run/run.sqlite" "select count(*) from events where json_extract(payload, '$.plan') = ''
  and (kind = 'child' or (kind = 'agent_failed' and json_extract(payload, '$.exhausted') = 0
                          and json_extract(payload, '$.error') not like 'cancelled:%'))")
[ "$empty_plans" = 0 ] || fail "$empty_plans agent calls after the resume had an empty plan"
again=$("$kmcts" resume "$run" 2>&1)
[ $? = 2 ] && grep -q "already finished" <<<"$again" || fail "a finished run resumed: $again"
# A larger budget extends a completed run; its log (a "finished" event inside it) still replays.
out=$("$kmcts" resume "$run" --budget 48 --quiet) || fail "extending the completed run exited $?: $out"
grep -qE "^evaluations +48 " <<<"$out" || fail "the extension did not spend the larger budget: $out"
replay=$("$kmcts" replay "$run") || fail "replay after the extension: $replay"

# A run that stopped at its wall-clock budget is extended only with room under that limit: the
# refusal names the limit and the --set that raises it, and changes nothing; with it, it goes on.
walled="$work/walled"
"$kmcts" run "$src/tests/fixtures/synthetic_space" --set evaluator.name=synthetic --set evaluator.synthetic.latency_ms=100 \
  --set search.max_wall_s=0.6 --budget 100 --out "$walled" --quiet >/dev/null 2>&1 || fail "the wall-limited run failed"
had=$(sqlite3 "$walled/run.sqlite" "select count(*) from evaluations")
out=$("$kmcts" resume "$walled" --budget 200 --quiet 2>&1)
[ $? = 2 ] && grep -q "has used its wall-clock budget (search.max_wall_s = 0.6; .* --set search.max_wall_s=1.2" <<<"$out" ||
  fail "extending a run past its wall-clock budget was not refused as it should be: $out"
grep -q '"budget": 100' "$walled/config.json" || fail "the refused extension changed the run's config"
out=$("$kmcts" resume "$walled" --budget 200 --set search.max_wall_s=1.5 --quiet) || fail "the extension with a larger limit: $out"
now=$(sqlite3 "$walled/run.sqlite" "select count(*) from evaluations")
[ "$now" -gt "$had" ] || fail "the extension with a larger wall-clock limit did not evaluate more ($had, then $now)"
out=$("$kmcts" resume "$walled" --budget 300 --set search.policy=uct 2>&1)
[ $? = 2 ] && grep -q "only the limits a run is extended past can change" <<<"$out" || fail "resume --set of a search option: $out"

# Ctrl-C (SIGINT) stops a run after the work in flight, as interrupted; resume takes it on.
stopped="$work/stopped"
"$kmcts" run "$src/tests/fixtures/synthetic_space" --set evaluator.name=synthetic \
  --set evaluator.synthetic.latency_ms=100 --budget 30 --workers 3 --out "$stopped" --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  [ -f "$stopped/run.sqlite" ] && [ "$(ls "$stopped/sources" 2>/dev/null | wc -l)" -ge 6 ] && break
  sleep 0.05
done
kill -INT "$pid"
wait "$pid"
status=$(sqlite3 "$stopped/run.sqlite" "select status from run")
[ "$status" = interrupted ] || fail "after Ctrl-C the run is '$status', not interrupted"
out=$("$kmcts" resume "$stopped" --quiet) || fail "resume of the interrupted run exited $?: $out"
grep -qE "^evaluations +30 " <<<"$out" || fail "the interrupted run did not reach its budget: $out"
replay=$("$kmcts" replay "$stopped") || fail "replay of the interrupted and resumed run: $replay"

# A run killed before its first event (store created, nothing recorded) starts from the seed.
empty="$work/empty"
"$kmcts" run "$src/tests/fixtures/synthetic_space" --set evaluator.name=synthetic --budget 5 --out "$empty" \
  --quiet >/dev/null 2>&1 || fail "the run to empty did not finish"
sqlite3 "$empty/run.sqlite" "delete from events; delete from evaluations; delete from edges; delete from nodes;
  update run set status = 'running', ended_at = null, summary = null" || fail "cannot empty the run"
rm -f "$empty/summary.json"
out=$("$kmcts" resume "$empty" --quiet) || fail "resume of a run with no events exited $?: $out"
grep -qE "^evaluations +5 " <<<"$out" || fail "the empty run did not spend its budget: $out"

# One writer per run: a resume while the run still goes is refused, naming the process.
slow="$work/slow"
"$kmcts" run "$src/tests/fixtures/synthetic_space" --set evaluator.name=synthetic \
  --set evaluator.synthetic.latency_ms=200 --budget 30 --out "$slow" --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -f "$slow/lock" ] && break; sleep 0.05; done
out=$("$kmcts" resume "$slow" 2>&1)
code=$?
shown=$("$kmcts" show "$slow" 2>&1)
show_code=$?
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ $code = 2 ] && grep -q "in use by kmcts process $pid" <<<"$out" || fail "a resume of a running run was not refused: $out"
[ $show_code = 2 ] && grep -q "kmcts process $pid is still running it" <<<"$shown" ||
  fail "show of a live run did not name its process: $shown"
# A run recorded before search.reroot_repairs (a repair's path then started at the seed when the
# failed variant was not below where descents start) replays and resumes by that rule: a run
# recorded with the rule, its config stripped of the key as such a run's is, replays; the same
# log read with the new rule does not (4000 evaluations take lineages hundreds of levels deep).
old="$work/old"
"$kmcts" run "$src/bench/engine/large_space" --set evaluator.name=synthetic --set search.reroot_repairs=false \
  --budget 4000 --workers 1 --out "$old" --quiet >/dev/null 2>&1 || fail "the run of 4000 evaluations failed"
sqlite3 "$old/run.sqlite" "update run set config = json_remove(config, '$.search.reroot_repairs')"
replayed=$("$kmcts" replay "$old" 2>&1) || fail "a run recorded before search.reroot_repairs does not replay: $replayed"
sqlite3 "$old/run.sqlite" "update run set config = json_set(config, '$.search.reroot_repairs', json('true'))"
replayed=$("$kmcts" replay "$old" 2>&1)
[ $? = 1 ] && grep -q 'select.*"kind":"debug"' <<<"$replayed" ||
  fail "the old run replayed with the new repair paths too (the test lost its point): $replayed"
echo "21 passed, 0 failed"
