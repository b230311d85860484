#!/bin/bash
# Engine benchmark on the GPU host's CPUs: coordinator cost per event, the committed binary
# (base) and this change (v2), interleaved.
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.device/eb:$LD_LIBRARY_PATH
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Hypervisor|L3" ; uptime; date -u
for rep in ${REPS:-1 2 3}; do for b in ${BINS:-base v2}; do
  .device/eb/bench-$b --problem bench/engine/large_space --workers 8 --nodes ${NODES:-100000} --set search.exploration=1 --set search.backup=mean --skip-pipeline --scratch /tmp/eb-$b --out $OUT/$b-$rep.json 2>&1 | grep -E "^\| [0-9]" | sed "s/^/$b $rep /"
done; done
date -u
