#!/bin/bash
# The reference searches an engine change must leave bit-identical (graph and event log):
#   bench/engine/reference_searches.sh run KMCTS_BINARY OUT_DIR   - ten searches on the synthetic evaluator
#   bench/engine/reference_searches.sh compare DIR_A DIR_B        - nodes, edges, evaluations and events (times aside)
# Typical use: run with the committed build and with the change, then compare.
set -u
cd "$(dirname "$0")/../.."
names="uct1 puct1 thom1 egr1 pw1 cmp1 vl4 pm3 small1 small4"
if [ "${1:-}" = run ]; then
  BIN=$(realpath "$2"); OUT=$(realpath -m "$3"); rm -rf "$OUT"; mkdir -p "$OUT"
  L=bench/engine/large_space; S=tests/fixtures/synthetic_space
  one() { name=$1; prob=$2; shift 2
    "$BIN" run $prob --quiet --out "$OUT/$name" --set evaluator.name=synthetic "$@" > "$OUT/$name.summary" 2> "$OUT/$name.err" || echo "FAILED: $name (see $OUT/$name.err)"
    "$BIN" export "$OUT/$name" --format json > "$OUT/$name.graph.json"
    sqlite3 "$OUT/$name/run.sqlite" "select seq, kind, payload from events order by seq" |
      sed -E 's/"(agent_seconds|wall_seconds|time_s)":[0-9.e+-]+//g' > "$OUT/$name.events"
  }
  one uct1 $L --budget 300 --workers 1 --set search.policy=uct & one puct1 $L --budget 300 --workers 1 --set search.policy=puct; wait
  one thom1 $L --budget 300 --workers 1 --set search.policy=thompson & one egr1 $L --budget 300 --workers 1 --set search.policy=egreedy; wait
  one pw1 $L --budget 300 --workers 1 --set search.widening=progressive & one cmp1 $L --budget 300 --workers 1 --set search.expansion=compare; wait
  one vl4 $L --budget 300 --workers 4 --deterministic --set search.pending=virtual_loss &
  one pm3 $L --budget 300 --workers 3 --deterministic --set search.backup=power_mean --set search.wave_size=3; wait
  one small1 $S --budget 200 --workers 1 & one small4 $S --budget 200 --workers 4 --deterministic; wait
elif [ "${1:-}" = compare ]; then
  status=0
  for n in $names; do
    g=$(python3 -c "
import json
a = json.load(open('$2/$n.graph.json')); b = json.load(open('$3/$n.graph.json'))
diff = [k for k in ('nodes', 'edges', 'evaluations', 'status') if a.get(k) != b.get(k)]
print('same' if not diff else 'DIFFERENT ' + ','.join(diff))")
    e=$(cmp -s "$2/$n.events" "$3/$n.events" && echo same || echo DIFFERENT)
    echo "$n: graph $g, events $e ($(wc -l < "$2/$n.events") events)"
    [ "$g $e" = "same same" ] || status=1
  done
  exit $status
else
  echo "usage: $0 run KMCTS_BINARY OUT_DIR | compare DIR_A DIR_B" >&2; exit 2
fi
