#!/usr/bin/env bash
# Which parts of a confined view the CUDA driver can live with (issue 28): a program that makes a
# context (cudaSetDevice + cudaFree) run plainly, under other uids, and in a mount namespace with
# one part of the tree read-only or replaced by a tmpfs. Prints one line per case ("ok" or the
# CUDA error). Needs root, nvcc, setpriv and unshare. Usage: bash bench/security/cuda_view_probe.sh
set -uo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/context.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  cudaError_t e = cudaSetDevice(0);
  if (e == cudaSuccess) e = cudaFree(0);
  std::printf("%s\n", e != cudaSuccess ? cudaGetErrorString(e) : "ok");
  return e != cudaSuccess;
}
CU
nvcc -O2 -cudart static -o "$dir/context" "$dir/context.cu" || exit 1
chmod 755 "$dir" "$dir/context"
P=$dir/context
in_view() { unshare -m sh -c "mount --make-rprivate / && $1 && $P" 2>&1; }
echo "plain: $($P 2>&1)"
for uid in 65534 2000000001; do
  echo "uid $uid: $(setpriv --reuid=$uid --regid=$uid --clear-groups "$P" 2>&1)"
done
echo "tmpfs /dev/shm: $(in_view "mount -t tmpfs none /dev/shm")"
echo "tmpfs /tmp: $(in_view "mount -t tmpfs none /tmp")"
for part in / /dev /proc /sys; do
  echo "read-only $part: $(in_view "mount -o remount,bind,ro $part")"
done
