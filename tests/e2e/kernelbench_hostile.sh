#!/usr/bin/env bash
# Hostile KernelBench candidates, contained (issue 28), on the CPU (Debian's python3-torch;
# skipped with 77 where no python3 has torch): tests/fixtures/hostile/kb_snoop.py tries, as it
# is imported, to read a secret in kmcts's home and the key in kmcts's environment, to write a
# file outside its folders, to reach a listener on 127.0.0.1 and to signal kmcts and another
# process of its uid (the harness runs under kmcts's uid: a process namespace keeps them apart), and says "ESCAPED" for each that
# works. In faithful mode it runs inside the harness; in hardened mode (its screen only
# recording, so that it is imported at all) in its own process, started by the harness. Both must
# judge it (ok; on a GPU, hardened rejects it for running no kernel of its own), with nothing
# read, written or received, and record what confined them.
# Usage: [KB_DEVICE=0] kernelbench_hostile.sh KMCTS_BINARY SOURCE_DIR   (KB_DEVICE: a GPU instead of the CPU)
set -uo pipefail
kmcts=$1
src=$2
source "$src/tests/fixtures/kernelbench/e2e_setup.sh"
source "$src/tests/e2e/lib/listener.sh"
listener=""
sleep 600 &  # a process of kmcts's uid (the harness's too): no candidate may signal it
victim=$!
trap '[ -n "$listener" ] && kill "$listener" 2>/dev/null; kill "$victim" 2>/dev/null; rm -rf "$work"' EXIT
start_listener "$work"
mkdir -p "$work/home"
echo "home-secret-$$" > "$work/home/credentials"
key="sekrit-kb-$$"
passes=0
failures=0
for mode in faithful hardened; do
  sed -e "s|HOSTILE_HOME_SECRET|$work/home/credentials|" -e "s|HOSTILE_ENV_SECRET|$key|" \
    -e "s|HOSTILE_OUTSIDE|$work/outside-$mode|" -e "s|HOSTILE_PORT|$port|g" -e "s|HOSTILE_VICTIM|$victim|" -e "s|HOSTILE_CORRECT|$fixtures/small_correct.py|" \
    "$src/tests/fixtures/hostile/kb_snoop.py" > "$work/snoop-$mode.py"
  out=$(cd "$work" && HOME="$work/home" KMCTS_HOSTILE_API_KEY=$key "$kmcts" measure "$fixtures/small_scale_bias.py" \
    "$work/snoop-$mode.py" --jsonl "$work/m-$mode.jsonl" --set evaluator.cache_dir="$work/cache-$mode" \
    --set evaluator.kernelbench.python="$python" --set evaluator.kernelbench.device="${KB_DEVICE:-cpu}" \
    --set evaluator.kernelbench.mode=$mode --set evaluator.kernelbench.screen=record \
    --set evaluator.kernelbench.trials=3 2>&1)
  code=$?
  confinement=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['details'].get('confinement', ''))" \
    "$work/m-$mode.jsonl" 2>/dev/null)
  bad=""
  # On a GPU, hardened mode's library policy rejects it (torch.addcmul is not a kernel of its
  # own): judged all the same, once imported.
  grep -qE "snoop-$mode.py \[1/1\] (ok|rejected: no kernel of its own)" <<<"$out" || bad="not judged ok (exit $code): $out"
  escaped=$( { cat "$work/m-$mode.jsonl" 2>/dev/null; echo "$out"; } | grep -o 'ESCAPED[^"]*' | head -1)
  [ -n "$escaped" ] && bad="$bad; $escaped"
  grep -q "home-secret\|$key" "$work/m-$mode.jsonl" && bad="$bad; a secret is in the evaluation's record"
  [ -e "$work/outside-$mode" ] && bad="$bad; it wrote $work/outside-$mode"
  grep -q "no capabilities" <<<"$confinement" || bad="$bad; the harness is not confined: '$confinement'"
  kill -0 "$victim" 2>/dev/null || bad="$bad; it killed a process of kmcts's uid"
  if [ -n "$bad" ]; then
    echo "FAIL $mode: $bad"
    failures=$((failures + 1))
  else
    passes=$((passes + 1))
  fi
  echo "$mode: $confinement"
done
[ -s "$work/received" ] && { echo "FAIL the listener got '$(cat "$work/received")'"; failures=$((failures + 1)); }
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
