#!/usr/bin/env bash
# Hostile candidates, contained (issue 28): each variant of tests/fixtures/hostile/matmul_hostile.cpp
# computes a correct matmul and tries one way out on its first call; `kmcts measure` must still
# judge it ok, nothing it tries may succeed (it prints "ESCAPED:" for what does), and nothing of it
# may be left: no data in files outside its folder, no listener contacted, no process alive.
# Variant 9 forges its reported times instead, and must be rejected by the timing bound.
# Variant 11 reads a file of the user's that anyone may read; only Landlock stops it.
# A way out is required to be closed only where the evaluation's record says the confinement
# that closes it held (details.confinement: a container may refuse namespaces).
# Usage: hostile.sh KMCTS_BINARY SOURCE_DIR
set -uo pipefail
kmcts=$1
src=$2
work=$(mktemp -d)
listener=""
tag="kmcts-hostile-$$"
victim=""
trap '[ -n "$listener" ] && kill "$listener" 2>/dev/null; [ -n "$victim" ] && kill "$victim" 2>/dev/null;
  pkill -x kmcts-hostile-d 2>/dev/null; pkill -x kmcts-hostile-f 2>/dev/null; rm -rf "$work" /tmp/$tag-*;
  [ -n "${project_file:-}" ] && rm -f "$project_file"' EXIT
passes=0
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

source "$src/tests/e2e/lib/listener.sh"
start_listener "$work"
mkdir -p "$work/cache"

# A file of the user's that anyone may read, outside the system's folders and the home (a
# project's .env): visible in the view, so only the kernel hosts' Landlock keeps it from them.
project_file="$(cd "$(dirname "$kmcts")" && pwd)/hostile-project-env-$$"
{ echo "project-secret-$$" > "$project_file" && chmod 644 "$project_file"; } 2>/dev/null || project_file=""

# A process of this uid (kmcts's) that no candidate may signal.
sleep 600 &
victim=$!

# measure ATTACK [SETTINGS...]: runs variant ATTACK; its output in $out, its record in $work/m-ATTACK.jsonl.
measure() {
  local n=$1
  { echo "#define HOSTILE_ATTACK $n"; echo "#define HOSTILE_PORT $port"; echo "#define HOSTILE_PATH \"/tmp/$tag-$n\"";
    echo "#define HOSTILE_DIR \"$work/cache\""; echo "#define HOSTILE_VICTIM $victim"; echo "#define HOSTILE_MAX_PROCESSES 64"
    echo "#define HOSTILE_READ \"$project_file\""; cat "$src/tests/fixtures/hostile/matmul_hostile.cpp"; } > "$work/attack$n.cpp"
  out=$(cd "$work" && KMCTS_HOSTILE_API_KEY=sekrit-e2e-$$ "$kmcts" measure "$src/problems/cpu/matmul" "$work/attack$n.cpp" \
    --jsonl "$work/m-$n.jsonl" --set evaluator.cache_dir="$work/cache" "${@:2}" 2>&1)
  local code=$?
  confinement=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['details'].get('confinement', ''))" \
    "$work/m-$n.jsonl" 2>/dev/null)
  if [ $code != 0 ] || ! grep -q "attack$n.cpp \[1/1\] ok" <<<"$out"; then
    fail "attack $n: not measured as a correct matmul (exit $code): $out"
    return 1
  fi
  if grep -q "ESCAPED" "$work/m-$n.jsonl" || grep -q "ESCAPED" <<<"$out"; then
    fail "attack $n got out under '$confinement': $(grep -o 'ESCAPED[^\"]*' "$work/m-$n.jsonl" | head -3)"
    return 1
  fi
  passes=$((passes + 1))
}
holds() { grep -q "$1" <<<"$confinement"; }

measure 1 && ! grep -q "sekrit" "$work/m-1.jsonl" || fail "attack 1: the key is in the evaluation's record"
measure 2 || true
if holds "network namespace" && [ -s "$work/received" ]; then fail "attack 2: the listener got '$(cat "$work/received")'"; fi
holds "network namespace" || echo "note: no network namespace here ($confinement): attack 2 not required to fail"
measure 3 || true
[ -s "/tmp/$tag-3" ] && fail "attack 3: data written to /tmp/$tag-3"
[ -e "$work/cache/hostile-was-here" ] && fail "attack 3: a file written into the cache folder"
# With its own read-only view and a private /tmp, not even an empty file appears.
if holds "private /tmp"; then
  [ -e "/tmp/$tag-3" ] && fail "attack 3: /tmp/$tag-3 was created (empty) despite '$confinement'"
else
  echo "note: no mount namespace here ($confinement): empty files may appear"
fi
measure 4 || true
sleep 0.3
# Killed is enough: a zombie waits for whoever reaps orphans here.
ps -eo stat=,comm= | grep -v "^Z" | grep -q " kmcts-hostile-d$" && fail "attack 4: its daemon outlived the evaluation"
measure 5 || true
[ -s "/tmp/$tag-5" ] && fail "attack 5: /tmp/$tag-5 holds $(stat -c %s "/tmp/$tag-5") bytes"
measure 6 || true
measure 7 || true
kill -0 "$victim" 2>/dev/null || fail "attack 7: the process of kmcts's uid was killed"
holds "process namespace" || echo "note: no process namespace here ($confinement): attack 7 may reach kmcts's uid"
measure 8 --set evaluator.max_processes=64 || true
sleep 0.3
ps -eo stat=,comm= | grep -v "^Z" | grep -q " kmcts-hostile-f$" && fail "attack 8: its children outlived the evaluation"
measure 10 || true
if [ -z "$project_file" ]; then
  echo "note: cannot write beside $kmcts: attack 11 (a readable file of the user's) not run"
elif holds "landlock"; then
  measure 11 || true
else
  echo "note: no landlock here ($confinement): attack 11 (a readable file of the user's) not run"
fi
# 9: not a way out but a forgery: the candidate takes over its host's reply channel and reports
# its calls 100 times shorter; the trusted worker's own clock must give it away.
{ echo "#define HOSTILE_ATTACK 9"; cat "$src/tests/fixtures/hostile/matmul_hostile.cpp"; } > "$work/attack9.cpp"
out=$(cd "$work" && "$kmcts" measure "$src/problems/cpu/matmul" "$work/attack9.cpp" --jsonl "$work/m-9.jsonl" \
  --set evaluator.cache_dir="$work/cache" 2>&1)
if grep -q "attack9.cpp \[1/1\] rejected: .*timing_bound\|attack9.cpp \[1/1\] rejected: the candidate's process" <<<"$out" &&
  grep -q '"rule": *"timing_bound"' "$work/m-9.jsonl"; then
  passes=$((passes + 1))
else
  fail "attack 9: forged times not rejected by the timing bound: $out"
fi
[ -n "$confinement" ] || fail "the evaluations do not record their confinement"
echo "confinement: $confinement"
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
