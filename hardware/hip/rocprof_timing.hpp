#pragma once
// A HIP measurement timed by rocprofv3 (issue 31): the CUDA worker's timing, done after the run.
// The HIP worker (hardware/cuda/worker built with KMCTS_HIP) runs under
//   rocprofv3 --kernel-trace --memory-copy-trace --mangled-kernels --output-format csv -d DIR -o %pid% -- WORKER JOB
// which writes one trace per process as each ends (PID_kernel_trace.csv, and
// PID_memory_copy_trace.csv where the process copied). The worker's result carries every call's
// window as the worker spanned it, on its monotonic and its boot clock ("windows"), and its
// kernel hosts' pids ("host_pids"). Here each call gets, as CUPTI gives it on CUDA, the union of
// every record of its host's trace inside its window, on every queue; the candidate's records are
// held to the CUDA rules (hardware/cuda/audit.hpp): all its work on one queue, only kernels its
// shared object defines, nothing outside its calls. Plain C++ (no ROCm), tested on recorded traces;
// never run against rocprofv3 on an AMD GPU (none was available: README, "AMD GPUs").
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cuda/audit.hpp"
#include "hardware/hip/rocprof_trace.hpp"

namespace kmcts::hip {

/// rocprofv3's records of process `pid` under `dir`. Throws std::runtime_error naming the file
/// when there is no kernel trace for it, or a trace is malformed (parse_rocprof_csv).
std::vector<TraceRecord> read_process_trace(const std::filesystem::path& dir, int64_t pid);

struct TracedRun {
  nlohmann::json result;  // the worker's, its samples and kernel tables from the traces
  std::optional<cuda::Violation> violation;  // the first rule the candidate's records break
  std::string phase;                          // of the call that broke it
};

/// The HIP worker's ok result timed by its hosts' traces. The clock is the one of the windows
/// (monotonic or boot) that holds more of the records; the timed windows of each side, in
/// order, are its samples. Throws std::runtime_error naming what does not fit: no windows or
/// pids in the result, traces with no record in any window on either clock, a timed window with
/// no record (the trace lost work), or a count of timed windows unlike the worker's samples.
TracedRun time_from_traces(nlohmann::json worker_result, const std::vector<TraceRecord>& reference,
                           const std::vector<TraceRecord>& candidate, const std::string& candidate_binary);

}  // namespace kmcts::hip
