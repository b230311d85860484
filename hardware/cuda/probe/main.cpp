// kmcts-cuda-probe: prints what the CUDA driver, runtime and CUPTI report about this
// machine's GPUs as one JSON object. `kmcts doctor` runs it in a sandboxed child, so the
// kmcts binary itself never links CUDA and a wedged driver cannot hang it.
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>

#include <nlohmann/json.hpp>

namespace {

nlohmann::json device_json(int index) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, index) != cudaSuccess) return {{"index", index}, {"error", "cudaGetDeviceProperties failed"}};
  int sm_clock_khz = 0, memory_clock_khz = 0;
  cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, index);
  cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, index);
  return {{"index", index},
          {"name", p.name},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"arch", "sm_" + std::to_string(p.major) + std::to_string(p.minor)},
          {"sms", p.multiProcessorCount},
          {"memory_bytes", p.totalGlobalMem},
          {"l2_bytes", p.l2CacheSize},
          {"persisting_l2_max_bytes", p.persistingL2CacheMaxSize},
          {"shared_memory_per_block_optin", p.sharedMemPerBlockOptin},
          {"max_sm_clock_mhz", sm_clock_khz / 1000},
          {"memory_clock_mhz", memory_clock_khz / 1000},
          {"pci_bus_id", p.pciBusID}};
}

}  // namespace

int main() {
  nlohmann::json out;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  out["driver_version"] = driver;
  out["runtime_version"] = runtime;
  uint32_t cupti = 0;
  out["cupti_api_version"] = cuptiGetVersion(&cupti) == CUPTI_SUCCESS ? static_cast<int>(cupti) : -1;
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  out["devices"] = nlohmann::json::array();
  if (status != cudaSuccess) {
    out["error"] = cudaGetErrorString(status);
    std::printf("%s\n", out.dump().c_str());
    return 3;
  }
  for (int i = 0; i < count; ++i) out["devices"].push_back(device_json(i));
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
