#pragma once
// Which build of torch an interpreter has: the platform KernelBench candidates are built for
// (torch.version.cuda on NVIDIA, torch.version.hip on a ROCm build for AMD). Asked before a
// search spends agent calls on kernels the harness's torch cannot build: HIP C++ through
// load_inline needs a ROCm build (KernelBench's hip backend), and a CUDA build of torch turns
// every such candidate into a compile error.
#include <string>

namespace kmcts {

struct TorchBuild {
  bool imported = false;  // `python -c "import torch"` worked
  std::string version;    // torch.__version__ ("2.6.0+rocm6.2")
  std::string cuda;       // torch.version.cuda, "" when not a CUDA build
  std::string hip;        // torch.version.hip, "" when not a ROCm build
  int devices = 0;        // torch.cuda.device_count() (HIP's devices on a ROCm build)
  std::string error;      // why it could not be asked (the interpreter's last line), when !imported
  bool timed_out = false; // the import did not finish in time (says nothing of the build)

  /// "torch 2.6.0+cu124 (CUDA 12.4)", "torch 2.6.0+rocm6.2 (ROCm/HIP 6.2.41133)", "torch 1.13.0 (CPU only)".
  std::string describe() const;
};

/// Asks `python` (a name in PATH or a path), 60 s at most (importing torch cold takes seconds);
/// an answer is kept per interpreter for the process's life, a failure is not.
TorchBuild probe_torch_build(const std::string& python);

/// Parses the probe's output line ({"version", "cuda", "hip"} JSON); imported = false with the
/// reason when it is not that.
TorchBuild parse_torch_build(const std::string& line);

}  // namespace kmcts
