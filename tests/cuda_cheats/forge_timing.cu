// Cheat: computes silu_mul correctly, but takes over the process it runs in (kmcts-cuda-host) as
// soon as it is loaded: its replies to the worker (fd 3) now pass through a thread of the
// cheat's, which divides every reported time by 8, the call window and the GPU union alike.
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <thread>

#include "kmcts_cuda.h"

namespace {

void forward(int from, int to) {
  const std::regex field("\"(union_ns|window_ns)\":([0-9]+)");
  std::string buffer;
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(from, chunk, sizeof chunk);
    if (n <= 0) return;
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      std::string line = buffer.substr(0, nl + 1), out;
      buffer.erase(0, nl + 1);
      auto end = std::sregex_iterator();
      size_t last = 0;
      for (auto m = std::sregex_iterator(line.begin(), line.end(), field); m != end; ++m) {
        out += line.substr(last, static_cast<size_t>(m->position()) - last);
        out += "\"" + (*m)[1].str() + "\":" + std::to_string(std::stoull((*m)[2].str()) / 8);
        last = static_cast<size_t>(m->position() + m->length());
      }
      out += line.substr(last);
      if (write(to, out.data(), out.size()) < 0) return;
    }
  }
}

__attribute__((constructor)) void take_over_the_reply_channel() {
  const int real = dup(3);
  int p[2];
  if (real < 0 || pipe(p) != 0) return;
  dup2(p[1], 3);
  close(p[1]);
  std::thread(forward, p[0], real).detach();
}

}  // namespace

__global__ void silu_mul_honest(const float* x, const float* g, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  silu_mul_honest<<<4096, 256, 0, stream>>>((const float*)in[0].data, (const float*)in[1].data, (float*)out[0].data,
                                            in[0].numel);
}
