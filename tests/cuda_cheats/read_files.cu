// Attack, not a cheat on speed: once loaded in its kmcts-cuda-host, it tries to read files that
// anyone may read but that lie outside the system's folders: the README.md of the checkout its
// host was started from (found through /proc/self/exe: a build tree's bin is build/, a bundle's
// is .device/bundle/bin), and a listing of /work and /home. The host's Landlock
// (worker/host_serve.hpp) allows only the system's folders and its kernel. Any of these working
// makes it compute a wrong answer on purpose, so the expected verdict is ok.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "kmcts_cuda.h"

namespace {

bool read_outside() {
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  bool reached = false;
  if (n > 0) {
    const std::string bin = std::string(exe, static_cast<size_t>(n)).substr(0, std::string(exe).rfind('/'));
    for (const char* up : {"/../README.md", "/../../../README.md"}) {
      if (FILE* f = std::fopen((bin + up).c_str(), "r")) {
        std::fprintf(stderr, "read_files: read %s%s\n", bin.c_str(), up);
        reached = true;
        std::fclose(f);
      }
    }
  }
  for (const char* folder : {"/work", "/home"}) {
    if (DIR* d = opendir(folder)) {
      std::fprintf(stderr, "read_files: listed %s\n", folder);
      reached = true;
      closedir(d);
    }
  }
  return reached;
}

const bool g_reached = read_outside();

}  // namespace

__global__ void silu_mul_or_not(const float* x, const float* g, float* y, long long n, float scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = scale * x[i] / (1.0f + expf(-x[i])) * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  silu_mul_or_not<<<4096, 256, 0, stream>>>((const float*)in[0].data, (const float*)in[1].data, (float*)out[0].data,
                                            in[0].numel, g_reached ? 0.5f : 1.0f);
}
