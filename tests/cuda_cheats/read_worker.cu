// Attack, not a cheat on speed: once loaded in its kmcts-cuda-host, it tries to reach the
// trusted worker that started it (its parent): its memory (/proc/PPID/mem), its environment,
// its open files, and ptrace. Any of these working makes it compute a wrong answer on purpose,
// so the expected verdict is ok: nothing of the worker was within reach.
#include <fcntl.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "kmcts_cuda.h"

namespace {

bool reached_the_worker() {
  const std::string proc = "/proc/" + std::to_string(getppid()) + "/";
  bool reached = false;
  for (const char* what : {"mem", "environ", "fd/1", "maps"}) {
    const int fd = open((proc + what).c_str(), O_RDONLY);
    char byte;
    if (fd >= 0 && (std::string(what) == "mem" || read(fd, &byte, 1) == 1)) {
      std::fprintf(stderr, "read_worker: opened %s%s\n", proc.c_str(), what);
      reached = true;
    }
    if (fd >= 0) close(fd);
  }
  if (ptrace(PTRACE_ATTACH, getppid(), nullptr, nullptr) == 0) {
    std::fprintf(stderr, "read_worker: attached to the worker\n");
    reached = true;
  }
  return reached;
}

const bool g_reached = reached_the_worker();

}  // namespace

__global__ void silu_mul_or_not(const float* x, const float* g, float* y, long long n, float scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = scale * x[i] / (1.0f + expf(-x[i])) * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  silu_mul_or_not<<<4096, 256, 0, stream>>>((const float*)in[0].data, (const float*)in[1].data, (float*)out[0].data,
                                            in[0].numel, g_reached ? 0.5f : 1.0f);
}
