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
// shared object defines, nothing outside its calls. The candidate's trace is written by a tool
// library inside its own process, so it is not trusted for time: a sample never falls below the
// worker's own window of the call less the reference's median overhead. Plain C++ (no ROCm), tested on recorded traces;
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

/// rocprofv3's records of process `pid` under `dir`, at most `max_records` (a trace written
/// inside the candidate's process may be a flood). Throws std::runtime_error naming the file when
/// there is no kernel trace for it, a trace is not a plain file under `dir` (a link, a pipe),
/// over 256 MiB, malformed (parse_rocprof_csv) or over `max_records`.
std::vector<TraceRecord> read_process_trace(const std::filesystem::path& dir, int64_t pid,
                                            size_t max_records = static_cast<size_t>(-1));
/// The records a run's trace may hold: 64 per call window of the worker's result, and 4096.
size_t max_trace_records(const nlohmann::json& worker_result);

struct TracedRun {
  nlohmann::json result;  // the worker's, its samples and kernel tables from the traces
  std::optional<cuda::Violation> violation;  // the first rule the candidate's records break
  std::string phase;                          // of the call that broke it
};

/// The HIP worker's ok result timed by its hosts' traces. The clock is the one of the windows
/// (monotonic or boot) that holds more of the reference's records. The candidate's records are
/// audited first; then the timed windows of each side, in order, are its samples, each at least
/// its window less the reference's median overhead (window less union): the candidate's trace is
/// written inside its own process and may be forged. A candidate trace with no record in a timed
/// window is the rule trace_tampered. Throws std::runtime_error naming what does not fit on the
/// machine's side: no windows or pids in the result, a reference trace with no record in its
/// windows on either clock or in one of its timed windows, a count of timed windows unlike the
/// worker's samples.
TracedRun time_from_traces(nlohmann::json worker_result, std::vector<TraceRecord> reference,
                           std::vector<TraceRecord> candidate, const std::string& candidate_binary);

}  // namespace kmcts::hip
