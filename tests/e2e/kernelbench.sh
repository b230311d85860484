#!/usr/bin/env bash
# A KernelBench-format problem searched end to end on the CPU (Debian's python3-torch; skipped
# with 77 where no python3 has torch): the submissions agents hand the candidates of a folder
# to the kernelbench evaluator, whose faithful harness runs each in its own process. The seed
# (Model as ModelNew) and a correct candidate pass, and a wrong, a raising and an unloadable one
# get their verdicts; the run ends when the submissions are used up.
# Usage: kernelbench.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
source "$src/tests/fixtures/kernelbench/e2e_setup.sh"
mkdir -p "$work/subs/small_scale_bias"
cp "$fixtures/small_correct.py" "$work/subs/small_scale_bias/1.py"
cp "$fixtures/small_wrong.py" "$work/subs/small_scale_bias/2.py"
cp "$fixtures/small_raises.py" "$work/subs/small_scale_bias/3.py"
cp "$fixtures/small_no_model.py" "$work/subs/small_scale_bias/10.py"
out=$("$kmcts" run "$fixtures/small_scale_bias.py" --budget 20 --workers 2 --quiet --out "$work/run" \
  --set agents.backend=submissions --set agents.submissions.dir="$work/subs" \
  --set search.strategy=random --set search.random.root_only=true \
  --set evaluator.kernelbench.python="$python" --set evaluator.kernelbench.device=cpu \
  --set evaluator.kernelbench.trials=3 --set evaluator.cache_dir="$work/cache" 2>&1) || fail "kmcts run exited $?: $out"
grep -qE "^evaluations +5 " <<<"$out" || fail "expected the seed and 4 submissions evaluated: $out"
# Two agent calls run at once, so node numbers need not follow the files' order: compare sorted.
verdicts=$(sqlite3 "$work/run/run.sqlite" \
  "select json_extract(n.meta, '\$.submission'), e.verdict from evaluations e join nodes n on n.id = e.node" | sort)
want=$(sort <<EOF_WANT
|ok
$work/subs/small_scale_bias/1.py|ok
$work/subs/small_scale_bias/2.py|wrong_answer
$work/subs/small_scale_bias/3.py|crash
$work/subs/small_scale_bias/10.py|compile_error
EOF_WANT
)
[ "$verdicts" = "$want" ] || fail "verdicts by submission:
$verdicts
expected:
$want"
echo "1 passed, 0 failed"
