#pragma once
// Building HIP kernels: hipcc for one AMD GPU architecture (gfx90a, gfx942, ...), through the
// same content-addressed KernelCompiler as the CPU and CUDA kernels, and what clang's
// kernel-resource-usage remarks say about each kernel (the analogue of ptxas -v).
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/compiler.hpp"

namespace kmcts::hip {

/// The "hip" flavour: kernel.hip, -O3 -std=c++17 --offload-arch=ARCH -shared -fPIC, the HIP and
/// CPU ABI headers, and the resource remarks.
CompilerFlavor hip_compiler_flavor(const std::string& arch);

/// {"kernels": [{"name", "sgprs", "vgprs", "agprs", "scratch_bytes", "occupancy_waves",
///               "sgpr_spills", "vgpr_spills", "lds_bytes"}],
///  "max_vgprs", "spill_count" (SGPR and VGPR spills, all kernels)}; from clang's
/// `-Rpass-analysis=kernel-resource-usage` remarks (ROCm 5.2's clang 15 and later); empty
/// kernels when the log has none.
nlohmann::json parse_resource_usage(const std::string& log);

}  // namespace kmcts::hip
