#!/usr/bin/env bash
# kmcts ablate end to end on the CI grid (configs/ablations/ci.json: matmul's recorded
# landscape, nothing measured): a second ablate on a busy folder is refused; the grid killed
# with SIGKILL mid-way resumes and finishes (the run killed mid-way moved aside and redone); the index holds every run; --replay-only confirms
# every run; `kmcts report` makes its tables, figures and run pages; a run with a recorded
# measurement deleted is a miss naming the run; a changed
# grid file is refused on the same folder; LLM runs replay from their own cassettes.
# Usage: ablate.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$(cd "$2" && pwd)
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
out="$work/ci"
grid="$src/configs/ablations/ci.json"
fail() { echo "FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
passed=0
ok() { passed=$((passed + 1)); }
done_runs() { ls "$out"/runs/*/summary.json 2>/dev/null | wc -l; }

# One run at a time. The grid takes well under a second, so it is frozen (SIGSTOP) while the
# test looks: refused while it holds the folder, killed once a run is done and others are not.
"$kmcts" ablate "$grid" --out "$out" --jobs 1 --quiet >/dev/null 2>&1 &
pid=$!
# Until the lock is held and names its holder (the file is made, locked, then written).
for _ in $(seq 1 500); do grep -qs "$pid" "$out/lock" && break; sleep 0.01; done
kill -STOP "$pid"
busy=$("$kmcts" ablate "$grid" --out "$out" 2>&1)
[ $? = 2 ] && grep -q "in use by kmcts process $pid" <<<"$busy" || fail "a second ablate on a busy folder was not refused: $busy"
ok
started_runs() { ls -d "$out"/runs/*/ 2>/dev/null | wc -l; }
for _ in $(seq 1 2000); do  # until a run is done and the next one is under way
  [ "$(done_runs)" -ge 1 ] && [ "$(started_runs)" -gt "$(done_runs)" ] && break
  kill -CONT "$pid"
  sleep 0.002
  kill -STOP "$pid"
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=
killed_at=$(done_runs)
[ "$killed_at" -ge 1 ] && [ "$killed_at" -lt 9 ] || fail "the grid was killed with $killed_at of 9 runs done"
[ "$(started_runs)" -gt "$killed_at" ] || fail "no run was under way when the grid was killed"
ok

resumed=$("$kmcts" ablate "$grid" --out "$out" 2>&1) || fail "the resumed grid exited $?: $resumed"
grep -q "($killed_at done before)" <<<"$resumed" || fail "the resume did not keep the $killed_at finished runs: $resumed"
grep -q "9 runs: 9 done, 0 failed, 0 unfinished" <<<"$resumed" || fail "the resumed grid did not finish: $resumed"
grep -q "ETA" <<<"$resumed" || fail "no progress over the grid: $resumed"
[ "$(ls "$out/aside" | wc -l)" = 1 ] || fail "the run killed mid-way was not moved aside: $(ls "$out/aside")"
ok
rows=$(sqlite3 "$out/index.sqlite" "select count(*) from runs where status = 'done' and best_speedup > 1 and evaluations > 0")
[ "$rows" = 9 ] || fail "the index has $rows done runs with metrics, not 9"
[ "$(sqlite3 "$out/index.sqlite" "select value from grid where key = 'baseline'")" = "policy=uct,c=0.2" ] ||
  fail "the index does not name the baseline"
[ "$(sqlite3 "$out/index.sqlite" "select count(*) from configs")" = 3 ] || fail "the index does not hold 3 configurations"
[ -f "$out/runs/policy=beam+c=0.2--matmul--s2/summary.json" ] || fail "a run directory is missing: $(ls "$out/runs")"
ok

replayed=$("$kmcts" ablate "$grid" --out "$out" --replay-only 2>&1) || fail "--replay-only exited $?: $replayed"
[ "$(grep -c '^reproduced ' <<<"$replayed")" = 9 ] || fail "not every run reproduced: $replayed"
ok

# The grid's report: tables for every configuration against the baseline, figures written
# (gnuplot, where installed), a page per run.
"$kmcts" report "$out" --plots "$work/report" --quiet >"$work/report.out" 2>&1 || fail "kmcts report exited $?: $(cat "$work/report.out")"
for text in "Baseline configuration: \`policy=uct,c=0.2\`" "| policy=beam,c=0.2 | 3 |" "difference from \`policy=uct,c=0.2\`"; do
  grep -qF "$text" "$work/report/report.md" || fail "the report has no '$text': $(head -40 "$work/report/report.md")"
done
[ "$(ls "$work/report/runs/"*.html | wc -l)" = 9 ] || fail "not one page per run: $(ls "$work/report/runs")"
if command -v gnuplot >/dev/null; then
  [ -s "$work/report/curve_all.png" ] && [ -s "$work/report/final_all.svg" ] || fail "no figures: $(ls "$work/report")"
fi
ok

# Corrupt one run: its last recorded measurement deleted.
victim="policy=uct+c=1--matmul--s0"
sqlite3 "$out/runs/$victim/run.sqlite" "delete from evaluations where id = (select max(id) from evaluations)" ||
  fail "cannot delete a measurement"
corrupt=$("$kmcts" ablate "$grid" --out "$out" --replay-only 2>&1)
[ $? = 1 ] || fail "--replay-only of a corrupted run did not exit 1: $corrupt"
grep -q "^miss  *$victim  (no recorded measurement of source [0-9a-f]* (node [0-9]*)" <<<"$corrupt" ||
  fail "the corrupted run was not a miss naming it and the source: $corrupt"
[ "$(grep -c '^reproduced ' <<<"$corrupt")" = 8 ] || fail "the other runs did not reproduce: $corrupt"
ok

# The same folder with a changed grid (a third seed) is refused.
sed -e "s#\"problems/cpu/matmul\"#\"$src/problems/cpu/matmul\"#" \
    -e "s#\"bench/search_quality#\"$src/bench/search_quality#" -e 's#"seeds": \[0, 1, 2\]#"seeds": [0, 1]#' "$grid" >"$work/changed.json"
changed=$("$kmcts" ablate "$work/changed.json" --out "$out" 2>&1)
[ $? = 2 ] && grep -q 'holds another grid: its "seeds" is \[0,1,2\], not \[0,1\]' <<<"$changed" || fail "a changed grid was not refused: $changed"
ok
# LLM agents (the mock server answering as the rule agents): each run records its cassette, and
# --replay-only, with the server gone, replays it; a reply missing from a cassette is a miss.
"$kmcts" mock-llm --port 0 --problem "$src/problems/cpu/matmul" >"$work/mock.out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
port=$(grep -o "127.0.0.1:[0-9]*" "$work/mock.out" | cut -d: -f2)
[ -n "$port" ] || fail "the mock server did not start: $(cat "$work/mock.out")"
cat >"$work/llm.json" <<EOF
{"name": "llm", "base": {"set": {"agents.backend": "llm", "agents.llm.base_url": "http://127.0.0.1:$port", "evaluator.name": "replay"}},
 "axes": [{"name": "c", "key": "search.exploration", "values": [0.2, 1]}],
 "problems": [{"path": "$src/problems/cpu/matmul", "recorded": ["$src/bench/search_quality/recorded/matmul-devbox"]}],
 "seeds": [0], "budget": 6}
EOF
llm=$("$kmcts" ablate "$work/llm.json" --out "$work/llm" 2>&1) || fail "the LLM grid exited $?: $llm"
kill -INT "$pid"; wait "$pid" 2>/dev/null; pid=
[ -s "$work/llm/runs/c=1--matmul--s0/cassette.jsonl" ] || fail "no cassette in the run directory: $(ls "$work/llm/runs"/*)"
replayed=$("$kmcts" ablate "$work/llm.json" --out "$work/llm" --replay-only 2>&1) || fail "--replay-only of the LLM grid: $replayed"
[ "$(grep -c '^reproduced ' <<<"$replayed")" = 2 ] || fail "not every LLM run reproduced: $replayed"
# The first line: the root's Planner call, the one request nothing else can precede (later lines
# are in the order concurrent replies came, so which request they hold depends on timing).
sed -i '1d' "$work/llm/runs/c=1--matmul--s0/cassette.jsonl"
corrupt=$("$kmcts" ablate "$work/llm.json" --out "$work/llm" --replay-only 2>&1)
[ $? = 1 ] && grep -q "^miss  *c=1--matmul--s0  (no recorded LLM reply: .*has no reply for this request" <<<"$corrupt" ||
  fail "a reply missing from a cassette was not a miss naming the run and the request: $corrupt"
ok
echo "$passed passed, 0 failed"
