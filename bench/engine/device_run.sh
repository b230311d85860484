#!/bin/bash
# Engine benchmark on the GPU host's CPUs: coordinator cost per event at 10^5 nodes, the bench
# binaries .device/eb/bench-LABEL for each LABEL in BINS, REPS rounds, then (PERF=LABEL) a
# cpu-clock profile of the coordinator. Carry .device/eb (binaries and their libraries; .device/perf for PERF).
# Odd rounds run BINS in order, even rounds reversed (A B, B A, A B, ...): the host drifts within
# a call (later runs were slower in most calls), and a fixed order hands the first binary the
# quiet minutes. Each run prints its table row, then its CPU/wall/sleeps per event per tenth.
# SETTINGS: the search settings of every run (default: issue 3's, exploration 1 and the mean
# backup, so builds compare; SETTINGS= runs the defaults).
cd "$(dirname "$0")/../.."
SETTINGS=${SETTINGS---set search.exploration=1 --set search.backup=mean}
export LD_LIBRARY_PATH=$PWD/.device/eb:$LD_LIBRARY_PATH
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Hypervisor|L3" ; uptime; date -u
for rep in ${REPS:-1 2 3 4}; do
  order="${BINS:-head new}"
  [ $((rep % 2)) -eq 0 ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
  for b in $order; do
    timeout ${RUN_TIMEOUT:-110} .device/eb/bench-$b --problem bench/engine/large_space --workers 8 --nodes ${NODES:-100000} $SETTINGS --skip-pipeline --scratch /tmp/eb-$b --out $OUT/$b-$rep.json 2>&1 | grep --line-buffered -E "^\| [0-9]" | sed -u "s/^/$b $rep $(date -u +%H:%M:%S) /"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['scaling']['rows'][0]; print('  agent wakes/event %.3f; tenths cpu/wall/sleeps:' % r.get('agent_wakes_per_event', -1), ' '.join(f'{c:.1f}/{w:.0f}/{z:.2f}' for c,w,z in zip(r['coordinator_cpu_us_per_event_by_tenth'], r['wall_us_per_event_by_tenth'], r['coordinator_sleeps_per_event_by_tenth'])))" $OUT/$b-$rep.json 2>/dev/null
  done
done
date -u
if [ -n "${PERF:-}" ]; then
  # A cpu-clock profile of the coordinator (the main thread) for 20 s in the middle of a search.
  P=$PWD/.device/perf
  .device/eb/bench-$PERF --problem bench/engine/large_space --workers 8 --nodes ${NODES:-100000} $SETTINGS --skip-pipeline --scratch /tmp/eb-perf --out $OUT/perf-run.json > $OUT/perf-run.log 2>&1 &
  PID=$!; sleep 8
  LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH $P/perf record -e cpu-clock -F 4000 -t $PID -o /tmp/perf.data -- sleep 20 2> $OUT/perf-record.log
  wait $PID; grep -E "^\| [0-9]" $OUT/perf-run.log | sed "s/^/perf-run /"
  LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH $P/perf report -i /tmp/perf.data --sort dso,sym --stdio 2>&1 | grep -v "^#" | grep -v "^$" | cut -c1-160 > $OUT/perf-coord.txt
  head -45 $OUT/perf-coord.txt
fi
date -u
