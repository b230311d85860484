#pragma once
// Which kernel faulted (issue 30, item 3). A kernel that writes out of bounds surfaces in the
// measurement as a sticky CUDA error at the next synchronisation ("an illegal memory access",
// or on the H200 "operation not supported on global/shared address space"), which names no
// kernel. After such a crash the evaluator runs the candidate's call once more under
// compute-sanitizer's memcheck (the CUDA worker's one-call job, or the KernelBench harness's
// one_call.py, only where the harness has a view of its own), off the measurement path and
// confined as the measurement was, and keeps the
// first error it reports: the kind of access, the kernel, thread and block, and where the
// address lies against the nearest allocation (details.fault, its wall time in
// details.diagnosis_seconds). The Debugger's summary shows it.
// The sanitizer's lines reach kmcts through the candidate's stdout, which the candidate can
// write too: the parse is bounded, and a fault is feedback for the agents, never a verdict.
// CUDA-free: unit-tested without a GPU.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "core/options.hpp"

namespace kmcts::cuda {

struct FaultDiagnosis {
  bool enabled = true;
  std::string tool;  // compute-sanitizer; empty = found beside the CUDA toolkit or in PATH

  static FaultDiagnosis from_config(const Config& config);
  /// Whether `r` is a crash of the kind memcheck can place (a memory fault on the GPU).
  bool wanted(const EvalResult& r) const;
  /// The command prefix that runs a program under memcheck (the tool looked up now; where it
  /// is not found, its bare name, and the run then fails to start: details.fault_error).
  std::vector<std::string> command() const;
};

/// memcheck's first error in `output` (its lines start with "========= ") as {"error": "Invalid
/// __global__ write of size 4 bytes", "kernel": ..., "at": "+0x70" or "file.cu:12", "thread",
/// "block", "address": the lines on the address}; fields it does not give are absent. Null
/// when the output holds no error of a kernel (a "Program hit" API error alone gives
/// {"error": ..., "api_error": true}). Each field is cut to 300 characters.
nlohmann::json parse_sanitizer_output(const std::string& output);

/// One line for messages and prompts: "Invalid __global__ write of size 4 bytes in
/// relu_kernel(...) at +0x70, thread (32,0,0) of block (0,0,0): Address 0x... is out of bounds".
std::string fault_line(const nlohmann::json& fault);

/// Adds a diagnosis run's outcome to a crash result: details.fault and the message's tail when
/// memcheck named an error, details.fault_error otherwise (what the run said instead), and
/// details.diagnosis_seconds.
void add_fault(EvalResult& r, const std::string& tool_output, bool run_started, const std::string& run_error,
               double seconds);

}  // namespace kmcts::cuda
