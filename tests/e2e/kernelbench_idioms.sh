#!/usr/bin/env bash
# Every Python idiom found in the real KernelBench files (tests/fixtures/kernelbench/idioms, one
# small problem of our own per idiom: super(Model, self), module constants and helpers, nested
# modules and nn.Sequential, nn.ModuleList and forward defaults, buffers, globals read by
# forward, integer inputs, several classes) loads, and its seed (the file as it is, with
# ModelNew a subclass of Model) evaluates as ok in both modes, in a seed-only campaign on the
# CPU (Debian's python3-torch; skipped with 77 where no python3 has torch). Then a level of
# broken problems (tests/fixtures/kernelbench/broken: a file that fails to import, a get_inputs
# that raises, a reference that fails on its own inputs, a file with no Model) beside a good one: each broken problem
# gets a line naming it and the reason, and the campaign goes on to the good one.
# Usage: kernelbench_idioms.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
source "$src/tests/fixtures/kernelbench/e2e_setup.sh"
root="$fixtures/idioms"
count=$(ls "$root/level1"/*.py | wc -l)
for mode in hardened faithful; do
  out=$("$kmcts" kernelbench --kb-root "$root" --level 1 --budget 1 --gpus cpu --mode "$mode" --quiet \
    --out "$work/$mode" --no-remeasure --set evaluator.kernelbench.python="$python" \
    --set evaluator.kernelbench.trials=3 --set evaluator.cache_dir="$work/cache" 2>&1) ||
    fail "$mode campaign exited $?: $out"
  seeds=$("$python" - "$work/$mode/problems" <<'EOF_PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    if path.endswith(".hygiene.json"):
        continue
    r = json.load(open(path))
    seed = r.get("seed") or {}
    print(r["problem"], seed.get("verdict"), seed.get("message", r.get("message", ""))[:300])
EOF_PY
)
  [ "$(grep -c ' ok ' <<<"$seeds")" = "$count" ] || fail "$mode: not every idiom's seed is ok:
$seeds"
done
out=$("$kmcts" kernelbench --kb-root "$fixtures/broken" --level 1 --budget 1 --gpus cpu --no-compile-baseline \
  --out "$work/broken" --set evaluator.kernelbench.python="$python" --set evaluator.cache_dir="$work/cache" 2>&1) ||
  fail "the broken level's campaign exited $?: $out"
for want in "1_import_fails on the CPU: not evaluated (failed): .*No module named 'kmcts_no_such_module'" \
  "2_get_inputs_raises on the CPU: not evaluated (failed): .*get_inputs of this problem is broken on purpose" \
  "3_reference_fails on the CPU: not evaluated (failed): .*mat1 and mat2 shapes cannot be multiplied" \
  "\\[5/5\\] 4_fine on the CPU: no correct candidate (completed)" \
  "5_not_a_problem not evaluated: .*not a KernelBench-format problem" \
  "^- 3_reference_fails: failed .*mat1 and mat2"; do
  grep -q -- "$want" <<<"$out" || fail "no line matching '$want' in:
$out"
done
grep -q "| compile |" <<<"$out" && fail "--no-compile-baseline still shows a compile row: $out"
"$python" -c "import json,sys; s=json.load(open(sys.argv[1])); s = s['leaderboard']; assert s['problems'] == 5 and len(s['failed']) == 4, s" \
  "$work/broken/summary.json" || fail "summary: $(cat "$work/broken/summary.json")"
echo "1 passed, 0 failed"
