#!/usr/bin/env bash
# Hostile KernelBench candidates, contained (issue 28), on the CPU (Debian's python3-torch;
# skipped with 77 where no python3 has torch): tests/fixtures/hostile/kb_snoop.py tries, as it
# is imported, to read a secret in kmcts's home, a file only kmcts's uid may read (as root) and
# the key in kmcts's environment, to write a
# file outside its folders or into the cache of candidates (beside its own stored file, and among
# the extension builds), to reach a listener on 127.0.0.1 and to signal kmcts and another
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
# A file only kmcts's uid may read, outside the home, where the view shows it (beside kmcts).
# Under root the harness runs under a leased uid and cannot read it; under another user it
# keeps that user's uid (CUDA IPC needs one uid for the tree, and only root can change it),
# so the attack is left out there (README, Security: what does not hold).
owned=/nonexistent
if [ "$(id -u)" = 0 ]; then
  owned="$(dirname "$kmcts")/hostile-owned-secret-$$"
  (umask 077; echo "owned-secret-$$" > "$owned")
fi
trap '[ -n "$listener" ] && kill "$listener" 2>/dev/null; kill "$victim" 2>/dev/null; rm -rf "$work"; [ "$owned" != /nonexistent ] && rm -f "$owned"' EXIT
start_listener "$work"
mkdir -p "$work/home"
echo "home-secret-$$" > "$work/home/credentials"
key="sekrit-kb-$$"
passes=0
failures=0
for mode in faithful hardened; do
  sed -e "s|HOSTILE_HOME_SECRET|$work/home/credentials|" -e "s|HOSTILE_ENV_SECRET|$key|" \
    -e "s|HOSTILE_OUTSIDE|$work/outside-$mode|" -e "s|HOSTILE_PORT|$port|g" -e "s|HOSTILE_VICTIM|$victim|" -e "s|HOSTILE_OWNED_SECRET|$owned|" -e "s|HOSTILE_CORRECT|$fixtures/small_correct.py|" \
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
  planted=$(find "$work/cache-$mode" -name 'planted*' 2>/dev/null | head -1)
  [ -n "$planted" ] && bad="$bad; it wrote $planted"
  if [ "$(id -u)" = 0 ]; then  # a leased uid of its own
    grep -qE "(^|, )uid [0-9]+" <<<"$confinement" || bad="$bad; the harness does not run under a uid of its own: '$confinement'"
  else
    grep -q "no capabilities" <<<"$confinement" || bad="$bad; the harness is not confined: '$confinement'"
  fi
  kill -0 "$victim" 2>/dev/null || bad="$bad; it killed a process of kmcts's uid"
  if [ -n "$bad" ]; then
    echo "FAIL $mode: $bad"
    failures=$((failures + 1))
  else
    passes=$((passes + 1))
  fi
  echo "$mode: $confinement"
done
# A candidate that leaves a process behind in a process group of its own: the warm harness
# (hardened, the default) must end it before the next candidate, which looks for it.
mark=$((600000 + $$))
for f in kb_leftover kb_leftover_probe; do
  sed -e "s|HOSTILE_MARK|$mark|" -e "s|HOSTILE_CORRECT|$fixtures/small_correct.py|" "$src/tests/fixtures/hostile/$f.py" > "$work/$f.py"
done
out=$(cd "$work" && "$kmcts" measure "$fixtures/small_scale_bias.py" "$work/kb_leftover.py" "$work/kb_leftover_probe.py" \
  --set evaluator.cache_dir="$work/cache-leftover" --set evaluator.kernelbench.python="$python" \
  --set evaluator.kernelbench.device="${KB_DEVICE:-cpu}" --set evaluator.kernelbench.screen=record 2>&1)
if grep -qE "kb_leftover_probe.py \[1/1\] (ok|rejected: no kernel of its own)" <<<"$out" && ! grep -q ESCAPED <<<"$out" &&
   ! pgrep -f "sleep $mark" > /dev/null; then
  passes=$((passes + 1))
else
  echo "FAIL a process left behind by a candidate: $out"
  failures=$((failures + 1))
fi
pkill -f "sleep $mark" 2>/dev/null
# The guard of the candidate's process (kb_guard.h), as kmcts sets it up: kb_guard_probe.py tries
# to write the harness's /tmp, signal the harness, start a session, give up its subreaper, and
# leaves a daemon in a process group of its own, which must not outlive the evaluation.
sed -e "s|HOSTILE_MARK|$mark|g" -e "s|HOSTILE_CORRECT|$fixtures/small_correct.py|" \
  "$src/tests/fixtures/hostile/kb_guard_probe.py" > "$work/kb_guard_probe.py"
out=$(cd "$work" && "$kmcts" measure "$fixtures/small_scale_bias.py" "$work/kb_guard_probe.py" --jsonl "$work/m-guard.jsonl" \
  --set evaluator.cache_dir="$work/cache-guard" --set evaluator.kernelbench.python="$python" \
  --set evaluator.kernelbench.device="${KB_DEVICE:-cpu}" --set evaluator.kernelbench.screen=record 2>&1)
guard=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['details'].get('candidate_guard', ''))" \
  "$work/m-guard.jsonl" 2>/dev/null)
if grep -qE "kb_guard_probe.py \[1/1\] (ok|rejected: no kernel of its own)" <<<"$out" && ! grep -q ESCAPED <<<"$out" &&
   grep -q "writes only beneath its folders" <<<"$guard" && ! pgrep -f "sleep.*$mark" > /dev/null &&
   [ ! -e "/tmp/kmcts-guard-planted-$mark" ]; then
  passes=$((passes + 1))
else
  echo "FAIL the candidate's guard: $out / '$guard'"
  failures=$((failures + 1))
fi
echo "candidate's guard: $guard"
pkill -f "sleep.*$mark" 2>/dev/null
rm -f "/tmp/kmcts-guard-planted-$mark"
# Under root, a problem the leased uid cannot read (in a folder only root may enter): the harness
# keeps kmcts's uid, without capabilities, and the record says why; the evaluation still runs.
if [ "$(id -u)" = 0 ]; then
  private="$(dirname "$kmcts")/hostile-private-$$"
  mkdir -m 700 "$private" && cp "$fixtures/small_scale_bias.py" "$private/"
  "$kmcts" measure "$private/small_scale_bias.py" "$fixtures/small_correct.py" --jsonl "$work/m-private.jsonl" \
    --set evaluator.cache_dir="$work/cache-private" --set evaluator.kernelbench.python="$python" \
    --set evaluator.kernelbench.device="${KB_DEVICE:-cpu}" > "$work/private.txt" 2>&1
  confinement=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['details'].get('confinement', ''))" \
    "$work/m-private.jsonl" 2>/dev/null)
  rm -rf "$private"
  if grep -qE "small_correct.py \[1/1\] (ok|rejected: no kernel of its own)" "$work/private.txt" &&
     grep -q "no capabilities" <<<"$confinement" &&
     grep -q "kmcts's uid kept: under uid [0-9]* the harness cannot read: .*hostile-private" <<<"$confinement"; then
    passes=$((passes + 1))
  else
    echo "FAIL a problem the leased uid cannot read: $(cat "$work/private.txt") / '$confinement'"
    failures=$((failures + 1))
  fi
  echo "unreadable problem: $confinement"
fi
[ -s "$work/received" ] && { echo "FAIL the listener got '$(cat "$work/received")'"; failures=$((failures + 1)); }
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
