#pragma once
// The CUDA worker's timing loop: warm-up, then reference and candidate in alternating
// blocks, each sample cold (outputs poisoned, L2 flushed, persisting L2 reset) and timed by
// CUPTI (session.hpp), until the shared stopping rule holds (hardware/worker/stop_rule.hpp).
// Samples taken at a low SM clock are dropped and counted; every timed candidate call's
// outputs are spot-checked against the reference's on the same inputs.
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cuda/worker/device.hpp"
#include "hardware/cuda/worker/session.hpp"
#include "hardware/worker/tensors.hpp"

namespace kmcts::worker {

/// One rotated input set: host copies (inputs as drawn, the reference's outputs on them) and
/// device buffers (the inputs, each kernel's own outputs).
struct GpuSet {
  explicit GpuSet(const Job& job)
      : pristine(job.inputs), expected(job.outputs), inputs(job.inputs), reference_out(job.outputs),
        candidate_out(job.outputs) {}
  TensorSet pristine;
  TensorSet expected;
  DeviceTensors inputs;
  DeviceTensors reference_out;
  DeviceTensors candidate_out;
};

struct GpuTimingOutcome {
  std::vector<double> reference_ns;
  std::vector<double> candidate_ns;
  nlohmann::json counters = nlohmann::json::object();
  std::optional<Mismatch> spot_failure;  // a timed candidate call whose outputs were wrong
};

GpuTimingOutcome time_gpu(Session& session, std::vector<GpuSet>& sets, const Job& job, L2Flusher& flusher,
                          const SmClock& clock);

}  // namespace kmcts::worker
