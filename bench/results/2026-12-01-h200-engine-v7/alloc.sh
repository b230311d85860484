#!/bin/bash
# Coordinator cost per event with three allocators under the same binary (v4 = 7095af2):
# glibc, jemalloc (LD_PRELOAD) and tbbmalloc_proxy (LD_PRELOAD), interleaved.
cd "$(dirname "$0")/../.."
E=$PWD/.device/eb
export LD_LIBRARY_PATH=$E:$LD_LIBRARY_PATH
uptime; date -u
for rep in 1 2; do for a in glibc jemalloc tbbmalloc; do
  case $a in glibc) P=;; jemalloc) P=$E/libjemalloc.so.2;; tbbmalloc) P=$E/libtbbmalloc_proxy.so.2;; esac
  LD_PRELOAD=$P $E/bench-v4 --problem bench/engine/large_space --workers 8 --nodes 100000 --set search.exploration=1 --set search.backup=mean --skip-pipeline --scratch /tmp/eb-$a --out $OUT/$a-$rep.json 2>&1 | grep -E "^\| [0-9]" | sed "s/^/$a $rep /"
done; done
date -u
