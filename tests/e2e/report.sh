#!/usr/bin/env bash
# Whole-command tests of `kmcts report`: one run's HTML page from a real (replayed) search, and
# the errors for folders that are neither a grid nor a run. The grid tables, intervals and
# figures are checked on a hand-made grid in tests/unit/test_report_grid.cpp.
# Usage: report.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

# shellcheck source=lib/check.sh
source "$(dirname "$0")/lib/check.sh"

# A short search answered from the recorded matmul landscape: no compiler, a few seconds.
run="$work/run"
check "replayed run" 0 "speedup .*x over seed" -- "$kmcts" run "$src/problems/cpu/matmul" \
  --set evaluator.name=replay --set evaluator.replay.runs="$src/bench/search_quality/recorded/matmul-devbox" \
  --set agents.planner=sweep --set search.strategy=random --budget 15 --seed 1 --workers 1 --out "$run"
check "run page" 0 "wrote $work/page.html" -- "$kmcts" report "$run" --html "$work/page.html"
for section in 'id="summary"' 'id="tree"' '<svg' 'id="plans"' 'id="diff"' 'id="best"' 'sweep point'; do
  grep -qF -- "$section" "$work/page.html" && passes=$((passes + 1)) || { echo "FAIL run page lacks $section"; failures=$((failures + 1)); }
done
if grep -qE '<script|<link|<img' "$work/page.html"; then echo "FAIL run page is not self-contained"; failures=$((failures + 1)); fi
check "run dir without --html" 2 "is not a grid folder .*--html FILE" -- "$kmcts" report "$run"
check "missing dir" 2 "$work/nope" -- "$kmcts" report "$work/nope" --html "$work/x.html"
check "bad format" 2 "format" -- "$kmcts" report "$run" --format xml
check "bad target" 2 "target" -- "$kmcts" report "$run" --target 2

# A grid replayed from a record that lacks some of the variants its searches reach: the misses
# are their own column, not failures, and both ablate and the report warn about their share.
# (The reward clip of 3 and the MCTS of before the grid of issue 29 keep these two searches on
# paths the record lacks in places.)
cat >"$work/grid.json" <<EOF
{"name": "misses", "base": {"set": {"evaluator.name": "replay", "search.reward_clip": 3, "search.refine": "off",
  "search.expansion": "first_open", "search.value_scale": "none", "search.anneal_selections": 0}},
 "axes": [{"name": "c", "key": "search.exploration", "values": [0.2, 1]}],
 "problems": [{"path": "$src/problems/cpu/matmul", "recorded": ["$src/bench/search_quality/recorded/matmul-devbox"]}],
 "seeds": [0], "budget": 60}
EOF
check "ablate warns of replay misses" 0 "warning: [0-9.]+% of the evaluations \([0-9]+ of 120, in 2 of 2 runs\) were replay misses" -- \
  "$kmcts" ablate "$work/grid.json" --out "$work/grid" --quiet
check "report counts replay misses apart" 0 "\| configuration \| n \| failure rate \| replay misses \| evaluations \| wall s \| CPU s \|" -- \
  "$kmcts" report "$work/grid"
check "report warns of replay misses" 0 "^\*\*Warning:\*\* [0-9.]+% of the evaluations" -- "$kmcts" report "$work/grid"

echo "report.sh: $passes passed, $failures failed"
[ "$failures" = 0 ]
