#pragma once
// What `nvcc -Xptxas -v` says about each kernel (registers, shared memory, stack, spills),
// kept with the build for the agents: spills and register pressure explain slow variants.
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::cuda {

/// {"kernels": [{"name", "registers", "shared_bytes", "constant_bytes", "stack_bytes",
///               "spill_store_bytes", "spill_load_bytes", "barriers"}],
///  "max_registers", "spill_bytes" (stores + loads, all kernels)}; empty kernels when the
/// log has no ptxas report.
nlohmann::json parse_ptxas_resources(const std::string& log);

}  // namespace kmcts::cuda
