#pragma once
// The CUDA worker's timing loop: warm-up, then reference and candidate in alternating
// blocks, each sample cold (outputs poisoned, L2 flushed, persisting L2 reset) and timed by
// CUPTI (session.hpp), until the shared stopping rule holds (hardware/worker/stop_rule.hpp).
// Samples taken at a low SM clock are dropped and counted; every timed candidate call's
// outputs are compared in full with the reference's on the same inputs (on the GPU).
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cuda/worker/device.hpp"
#include "hardware/cuda/worker/session.hpp"
#include "hardware/worker/tensors.hpp"

namespace kmcts::worker {

/// One rotated input set, all on the device: the inputs as drawn (pristine), the reference's
/// outputs on them (expected), and the buffers every timed or checked call gets (inputs,
/// outputs). Reference and candidate write the same output buffers: where a buffer lies in
/// memory moves a kernel's time by ~0.3% on the H200 (A/A pairs measured 0.996-0.997 with
/// one output buffer per kernel, and 1.000-1.002 with the two buffers' order swapped). The
/// buffers the kernels get are carved from one arena (`shared`, the only one the kernel hosts
/// map), so their relative placement is the same in every process; the pristine inputs and
/// the expected outputs lie in another (`own`) that no host can reach.
struct GpuSet {
  explicit GpuSet(const Job& job)
      : shared(std::make_unique<DeviceArena>(DeviceArena::bytes_for({&job.inputs, &job.outputs}))),
        own(std::make_unique<DeviceArena>(DeviceArena::bytes_for({&job.inputs, &job.outputs}))),
        pristine(job.inputs, own.get()),
        expected(job.outputs, own.get()),
        inputs(job.inputs, shared.get()),
        outputs(job.outputs, shared.get()) {}
  std::unique_ptr<DeviceArena> shared, own;  // first: freed after the views
  DeviceTensors pristine;
  DeviceTensors expected;
  DeviceTensors inputs;
  DeviceTensors outputs;
};

struct GpuTimingOutcome {
  std::vector<double> reference_ns;
  std::vector<double> candidate_ns;
  nlohmann::json counters = nlohmann::json::object();
  // Per side, the kernel table summed over its kept samples, and how many samples that is:
  // {"reference": [...], "candidate": [...], "samples_reference": N, "samples_candidate": N}.
  nlohmann::json kernel_tables = nlohmann::json::object();
  std::optional<Mismatch> timed_failure;  // a timed candidate call whose outputs were wrong
};

GpuTimingOutcome time_gpu(Session& session, std::vector<GpuSet>& sets, const Job& job, L2Flusher& flusher,
                          const SmClock& clock);

}  // namespace kmcts::worker
