// kmcts-bench-cupti-check: does CUPTI activity timing measure what REFERENCE.md says it must?
// On the GPU it compiles a few kernels with nvcc (the path the CUDA evaluator will use),
// loads them, and times each case both ways: the CUPTI union over all streams and CUDA events
// on the launch stream. Cases: one kernel; the same work split with half hidden on a
// non-blocking side stream (events miss it, the union must not); two kernels on two streams
// that overlap (counted once); a device-to-device memcpy. Prints JSON (median of the samples).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "hardware/cuda/cupti/activity_timer.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kKernels = R"cu(
#include <cuda_runtime.h>
__global__ void scale(const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = 2.0f * x[i];
}
static cudaStream_t side() {
  static cudaStream_t s = nullptr;
  if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  return s;
}
extern "C" void launch_main(const float* x, float* y, size_t n, cudaStream_t s) { scale<<<1056, 256, 0, s>>>(x, y, n); }
// Half the work on the launch stream, half on a side stream nobody waits for.
extern "C" void launch_hidden(const float* x, float* y, size_t n, cudaStream_t s) {
  scale<<<528, 256, 0, s>>>(x, y, n / 2);
  scale<<<528, 256, 0, side()>>>(x + n / 2, y + n / 2, n - n / 2);
}
// Two halves on two streams at once: overlapping intervals.
extern "C" void launch_overlap(const float* x, float* y, size_t n, cudaStream_t s) {
  scale<<<528, 256, 0, s>>>(x, y, n / 2);
  scale<<<528, 256, 0, side()>>>(x + n / 2, y + n / 2, n - n / 2);
  cudaStreamSynchronize(side());
}
)cu";

using Launch = void (*)(const float*, float*, size_t, cudaStream_t);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CUPTI activity timing against CUDA events on a few known cases"};
  std::string nvcc = "nvcc", arch = "sm_90", work = "/tmp/kmcts-cupti-check";
  int samples = 30;
  bool events_only = false;
  size_t n = size_t{1} << 26;  // 64 Mi floats: 256 MiB in, 256 MiB out
  app.add_option("--nvcc", nvcc, "nvcc to compile the kernels with");
  app.add_option("--arch", arch, "GPU architecture (sm_90 on the H200)");
  app.add_option("--samples", samples, "Samples per case");
  app.add_option("--work", work, "Scratch folder for the compiled kernels");
  app.add_flag("--events-only", events_only, "Time with CUDA events alone, CUPTI activity tracing off (its overhead)");
  CLI11_PARSE(app, argc, argv);
  try {
    fs::create_directories(work);
    std::ofstream(fs::path(work) / "kernels.cu") << kKernels;
    const std::string so = (fs::path(work) / "kernels.so").string();
    const std::string cmd = nvcc + " -O3 -arch=" + arch + " -shared -Xcompiler -fPIC -o " + so + " " +
                            (fs::path(work) / "kernels.cu").string() + " 2>" + (fs::path(work) / "nvcc.log").string();
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("nvcc failed: " + cmd);
    void* lib = dlopen(so.c_str(), RTLD_NOW);
    if (!lib) throw std::runtime_error(dlerror());
    auto get = [lib](const char* name) {
      auto f = reinterpret_cast<Launch>(dlsym(lib, name));
      if (!f) throw std::runtime_error(std::string("missing symbol ") + name);
      return f;
    };
    float *x = nullptr, *y = nullptr, *flush = nullptr;
    cuda_check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc");
    cuda_check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc");
    const size_t flush_bytes = size_t{256} << 20;  // >= max(2 x L2, 128 MiB) on the H200 (L2 60 MiB)
    cuda_check(cudaMalloc(&flush, flush_bytes), "cudaMalloc");
    cuda_check(cudaMemset(x, 0, n * sizeof(float)), "cudaMemset");
    cudaStream_t stream;
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::unique_ptr<kmcts::cuda::ActivityTimer> timer;
    if (!events_only) timer = std::make_unique<kmcts::cuda::ActivityTimer>();
    json out = {{"n_floats", n}, {"samples", samples}, {"cupti", !events_only}};
    auto run_case = [&](const std::string& name, const std::function<void()>& body) {
      std::vector<double> cupti, events;
      json kernels = json::array(), streams = json::array();
      for (int i = -3; i < samples; ++i) {  // 3 warm-up samples
        cuda_check(cudaMemset(flush, i & 0xff, flush_bytes), "L2 flush");
        cuda_check(cudaDeviceSynchronize(), "sync");
        auto timed = [&] {
          cudaEventRecord(e0, stream);
          body();
          cudaEventRecord(e1, stream);
        };
        kmcts::cuda::ActivitySample s;
        if (timer) {
          s = timer->measure(timed);
        } else {
          timed();
          cuda_check(cudaDeviceSynchronize(), "sync");
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i < 0) continue;
        cupti.push_back(static_cast<double>(s.union_ns));
        events.push_back(1e6 * ms);
        kernels.push_back(s.kernels + s.memcpys + s.memsets);
        streams.push_back(s.streams.size());
      }
      out["cases"][name] = {{"cupti_union_us_median", median(cupti) / 1000}, {"events_us_median", median(events) / 1000},
                            {"events_over_cupti", median(cupti) > 0 ? median(events) / median(cupti) : 0.0},
                            {"activities_per_sample", kernels[0]}, {"streams_per_sample", streams[0]}};
      std::cerr << name << ": cupti " << median(cupti) / 1000 << " us, events " << median(events) / 1000 << " us\n";
    };
    Launch main_launch = get("launch_main"), hidden = get("launch_hidden"), overlap = get("launch_overlap");
    run_case("one_kernel", [&] { main_launch(x, y, n, stream); });
    run_case("half_hidden_on_side_stream", [&] { hidden(x, y, n, stream); });
    run_case("two_streams_overlapping", [&] { overlap(x, y, n, stream); });
    run_case("memcpy_d2d", [&] { cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, stream); });
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
