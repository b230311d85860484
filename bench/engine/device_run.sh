#!/bin/bash
# Engine benchmark on the GPU host's CPUs: coordinator cost per event at 10^5 nodes, the bench
# binaries .device/eb/bench-LABEL for each LABEL in BINS interleaved (REPS rounds), then (PERF=LABEL) a
# cpu-clock profile of the coordinator. Carry .device/eb (binaries and their libraries; .device/perf for PERF).
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.device/eb:$LD_LIBRARY_PATH
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Hypervisor|L3" ; uptime; date -u
for rep in ${REPS:-1 2 3}; do for b in ${BINS:-v4 v8c}; do
  .device/eb/bench-$b --problem bench/engine/large_space --workers 8 --nodes ${NODES:-100000} --set search.exploration=1 --set search.backup=mean --skip-pipeline --scratch /tmp/eb-$b --out $OUT/$b-$rep.json 2>&1 | grep -E "^\| [0-9]" | sed "s/^/$b $rep /"
done; done
date -u
if [ -n "${PERF:-}" ]; then
  # A cpu-clock profile of the coordinator (the main thread) for 20 s in the middle of a search.
  P=$PWD/.device/perf
  .device/eb/bench-$PERF --problem bench/engine/large_space --workers 8 --nodes ${NODES:-100000} --set search.exploration=1 --set search.backup=mean --skip-pipeline --scratch /tmp/eb-perf --out $OUT/perf-run.json > $OUT/perf-run.log 2>&1 &
  PID=$!; sleep 8
  LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH $P/perf record -e cpu-clock -F 4000 -t $PID -o /tmp/perf.data -- sleep 20 2> $OUT/perf-record.log
  wait $PID; grep -E "^\| [0-9]" $OUT/perf-run.log | sed "s/^/perf-run /"
  LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH $P/perf report -i /tmp/perf.data --sort dso,sym --stdio 2>&1 | grep -v "^#" | grep -v "^$" | cut -c1-160 > $OUT/perf-coord.txt
  head -45 $OUT/perf-coord.txt
fi
date -u
