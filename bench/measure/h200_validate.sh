#!/usr/bin/env bash
# Validation of the CUDA evaluator on the GPU machine (issue 5). Sections, run in the order
# given (default: all): searches cheats faults aa protocols.
#   searches  - every problems/cuda problem searched end to end with the rule agents
#   cheats    - every planted cheat in tests/cuda_cheats measured; check_cheats.py compares
#   faults    - an exhaustive sweep of tests/fixtures/cuda_faulty: an illegal address, a hang
#               and a host segfault in the middle of a search
#   aa        - A/A: each problem's reference measured as its own candidate, AA_PAIRS times
#   protocols - kmcts's protocol against KernelBench's loop on the same kernels, repeated
# Usage (device tool, carrying the bundle made by `cmake --install build --prefix
# .device/bundle --strip`): bash bench/measure/h200_validate.sh [SECTION...]
# Environment: OUT (results), BUDGET (12), SEARCH_PROBLEMS, AA_PAIRS (50), AA_PROBLEMS, REPEATS (5),
# PROTOCOL_PROBLEMS. Everything written under OUT comes back as one archive.
set -uo pipefail
B=${KMCTS_BUNDLE:-.device/bundle}
OUT=${OUT:-/tmp/kmcts-validate}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
KM="$B/bin/kmcts"
CACHE=(--set evaluator.cache_dir=/tmp/kmcts-cache)
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(searches cheats faults aa protocols)
stamp() { date -u +%H:%M:%S; }

for section in "${sections[@]}"; do
  echo "== $section $(stamp)"
  case $section in
    searches)
      for p in ${SEARCH_PROBLEMS:-silu_mul softmax layernorm colsum matmul}; do
        t0=$SECONDS
        "$KM" run problems/cuda/$p --budget "${BUDGET:-12}" --workers 4 --out "$OUT/runs/$p" "${CACHE[@]}" --quiet \
          > "$OUT/search_$p.log" 2>&1
        echo "search $p rc=$? wall=$((SECONDS - t0))s"
        grep -E 'seed kernel|best kernel|speedup|evaluations' "$OUT/search_$p.log"
      done ;;
    cheats)
      rm -f "$OUT/cheats.jsonl"
      python3 -c 'import json; [print(e["problem"], e["file"]) for e in json.load(open("tests/cuda_cheats/expected.json"))]' |
        while read -r problem file; do
          "$KM" measure problems/cuda/$problem tests/cuda_cheats/$file --jsonl "$OUT/cheats.jsonl" "${CACHE[@]}" \
            --set evaluator.timeout_s=60 2>&1 | tail -1
        done
      python3 bench/measure/check_cheats.py tests/cuda_cheats/expected.json "$OUT/cheats.jsonl" ;;
    faults)
      "$KM" run tests/fixtures/cuda_faulty --budget 8 --workers 2 --out "$OUT/runs/faulty" "${CACHE[@]}" --quiet \
        --set agents.planner=sweep --set evaluator.timeout_s=20 > "$OUT/faulty.log" 2>&1
      echo "faulty search rc=$?"; cat "$OUT/faulty.log" | head -12
      sqlite3 "$OUT/runs/faulty/run.sqlite" 'select node, verdict, substr(message, 1, 110) from evaluations order by seq' 2>/dev/null ||
        python3 -c "
import sqlite3; c = sqlite3.connect('$OUT/runs/faulty/run.sqlite')
for r in c.execute('select node, verdict, substr(message, 1, 110) from evaluations order by seq'): print(*r)" ;;
    aa)
      for p in ${AA_PROBLEMS:-layernorm silu_mul}; do
        rm -f "$OUT/aa_$p.jsonl"
        "$KM" measure problems/cuda/$p problems/cuda/$p/reference.cu --repeat "${AA_PAIRS:-50}" --jsonl "$OUT/aa_$p.jsonl" \
          "${CACHE[@]}" > "$OUT/aa_$p.log" 2>&1
        echo "aa $p rc=$?"; tail -2 "$OUT/aa_$p.log"
      done ;;
    protocols)
      rm -f "$OUT/protocols.jsonl"
      for p in ${PROTOCOL_PROBLEMS:-silu_mul softmax matmul}; do
        for protocol in kmcts kernelbench; do
          "$KM" measure problems/cuda/$p --repeat "${REPEATS:-5}" --jsonl "$OUT/protocol_${p}_$protocol.jsonl" "${CACHE[@]}" \
            --set evaluator.cuda.protocol=$protocol > "$OUT/protocol_${p}_$protocol.log" 2>&1
          echo "protocol $p $protocol rc=$?"; tail -1 "$OUT/protocol_${p}_$protocol.log"
        done
      done ;;
    *) echo "unknown section $section"; exit 2 ;;
  esac
done
# The device tool brings back few files: everything goes back as one archive.
archive="validate-$(date -u +%H%M%S).tgz"
tar -C "$OUT" -czf "/tmp/$archive" . && find "$OUT" -mindepth 1 -delete && mv "/tmp/$archive" "$OUT/"
echo "== done $(stamp): $OUT/$archive"
