#!/usr/bin/env bash
# Which part of a confined child's confinement Nsight Compute and compute-sanitizer trip on
# (issue 30; on the H100 of 2026-12-05 every `evaluator.cuda.profile` run said "==ERROR== Launching
# the target application failed"), and whether the profiler's room (hardware/cuda/cuda_evaluator.cpp,
# profiler_room: file writes allowed, a larger private /tmp; the worker and its hosts dumpable in a
# profile job) is enough:
#  1. ncu on a trivial kernel: plain; inside a network namespace of its own (loopback down); under
#     another uid, its target dumpable or not; under kmcts-confine with file writes and without,
#     and run from a folder under /tmp (as the worker is: the confined view hides it);
#  2. compute-sanitizer the same way, bare and with the room;
#  3. `kmcts measure` with evaluator.cuda.profile=true, confined and not.
# Run on the GPU host with the bundle carried:
#   OUT=DIR KMCTS=.device/bundle/bin/kmcts bash bench/measure/ncu_confinement_check.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-ncu-check}
K=${KMCTS:-.device/bundle/bin/kmcts}
CONFINE=$(dirname "$K")/kmcts-confine
mkdir -p "$OUT"
{ grep -i profiling /proc/driver/nvidia/params; echo "yama ptrace_scope $(cat /proc/sys/kernel/yama/ptrace_scope 2>&1)"; } > "$OUT/host.txt" 2>&1
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
# The probe program lives beside the script's tree (a confined child's /tmp is its own).
probe_dir=$(pwd)/.ncu-check-probe
mkdir -p "$probe_dir"
cat > "$probe_dir/scale.cu" <<'CU'
#include <cstdio>
#include <cstring>
#include <sys/prctl.h>
__global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.f; }
int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "nodump") == 0) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // as kmcts's worker and hosts
  float* x; cudaMalloc(&x, 1 << 20);
  scale<<<1024, 256>>>(x, 1 << 18);
  printf("probe: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
CU
nvcc -o "$probe_dir/scale" "$probe_dir/scale.cu" > "$OUT/nvcc.txt" 2>&1 || { echo "nvcc failed: $(tail -3 "$OUT/nvcc.txt")"; exit 1; }
limits() {  # limits FILE_BYTES TMPFS
  printf '{"keep_uid":true,"shared_uid":0,"build":false,"binds":[],"hidden":[],"tmpfs_options":"%s","max_file_bytes":%s,"max_processes":2048}' "$2" "$1"
}
ncu_cmd=(ncu --metrics sm__throughput.avg.pct_of_peak_sustained_elapsed "$probe_dir/scale")
san_cmd=(compute-sanitizer --tool memcheck "$probe_dir/scale")
verdict() {  # verdict NAME LOG EXIT: one line
  local said
  said=$(grep -E "==ERROR==|==PROF==|sm__throughput|ERROR SUMMARY|probe:" "$2" | tr -s ' ' | head -3 | paste -sd'|' -)
  printf '%-44s exit %3s  %s\n' "$1" "$3" "${said:0:240}"
}
run() {  # run NAME command...
  local name=$1; shift
  timeout 90 "$@" > "$OUT/$name.txt" 2>&1
  verdict "$name" "$OUT/$name.txt" $?
}
{
  run ncu_plain "${ncu_cmd[@]}"
  run ncu_netns_lo_down unshare -n "${ncu_cmd[@]}"
  run ncu_confined_bare "$CONFINE" "$(limits 0 size=64m,mode=1777)" "${ncu_cmd[@]}"
  run ncu_confined_room "$CONFINE" "$(limits 1073741824 size=1g,mode=1777)" "${ncu_cmd[@]}"
  # as the confined worker runs: a uid of its own (kmcts as root leases one), the target dumpable or not
  run ncu_other_uid setpriv --reuid 2000000001 --regid 2000000001 --clear-groups "${ncu_cmd[@]}"
  run ncu_other_uid_nodump setpriv --reuid 2000000001 --regid 2000000001 --clear-groups "${ncu_cmd[@]}" nodump
  run ncu_confined_room_nodump "$CONFINE" "$(limits 1073741824 size=1g,mode=1777)" "${ncu_cmd[@]}" nodump
  # the working folder: kmcts's worker runs in a folder under /tmp, which the confined view hides
  mkdir -p /tmp/kmcts-ncu-cwd
  run ncu_confined_cwd_under_tmp sh -c 'cd /tmp/kmcts-ncu-cwd && exec "$@"' sh "$CONFINE" "$(limits 1073741824 size=1g,mode=1777)" "${ncu_cmd[@]}"
  run sanitizer_plain "${san_cmd[@]}"
  run sanitizer_confined_bare "$CONFINE" "$(limits 0 size=64m,mode=1777)" "${san_cmd[@]}"
  run sanitizer_confined_room "$CONFINE" "$(limits 1073741824 size=1g,mode=1777)" "${san_cmd[@]}"
} | tee "$OUT/steps.txt"
for confine in true false; do
  timeout 120 "$K" measure problems/cuda/silu_mul problems/cuda/silu_mul/reference.cu --set evaluator.cuda.profile=true \
    --set evaluator.confine=$confine --jsonl "$OUT/measure_confine_$confine.jsonl" > "$OUT/measure_confine_$confine.txt" 2>&1
  python3 - "$OUT/measure_confine_$confine.jsonl" "$confine" <<'PY' | tee -a "$OUT/steps.txt"
import json, sys
try:
    r = json.loads(open(sys.argv[1]).readline())
except (OSError, ValueError) as e:
    print(f"kmcts measure, evaluator.confine={sys.argv[2]}: no result ({e})"); sys.exit()
d = r.get("details", {})
hw = d.get("hw_counters")
print(f"kmcts measure, evaluator.confine={sys.argv[2]}:",
      f"counters of {len(hw.get('kernels', hw)) if isinstance(hw, dict) else '?'} kernel(s), verdict {json.dumps(hw)[:160]}" if hw
      else "no counters: " + str(d.get("hw_counters_error", "no profile"))[-300:])
PY
done
rm -rf "$probe_dir"
