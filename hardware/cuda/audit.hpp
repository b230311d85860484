#pragma once
// The rules a candidate's recorded calls must keep (hardware/cuda/abi/kmcts_cuda.h), kept
// free of CUDA so the cheat suite's detection logic is unit-tested in CI on recorded traces.
// The CUDA worker records a CallTrace per candidate call (CUPTI activity, the context's
// limits after the call) and rejects the candidate at the first violation.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::cuda {

/// What one call of the candidate did, as recorded.
struct CallTrace {
  std::set<uint32_t> streams;       // CUPTI stream ids of the work inside the call's window
  std::set<std::string> kernels;    // kernel names (mangled) inside the window
  int stray_kernels = 0;            // kernels that ran after the window closed
  std::set<std::string> stray_names;
  uint64_t persisting_l2_limit = 0;  // cudaLimitPersistingL2CacheSize after the call
  uint64_t access_policy_bytes = 0;  // the launch stream's access-policy window after the call
};

/// Recorded traces travel in results ("trace" in a CUDA result's details) and test fixtures.
nlohmann::json to_json(const CallTrace& t);
CallTrace call_trace_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

struct Violation {
  std::string rule;     // side_stream, library_kernel, stray_work, persisting_l2
  std::string message;  // one line naming what was seen
};

/// True when the candidate's shared object defines `kernel`: its (mangled) name appears in
/// the binary, as every kernel compiled into it does (host stub symbol, fatbin). Library
/// kernels (cuBLAS's, cuDNN's) live in other objects and do not.
bool binary_defines(const std::string& binary, const std::string& kernel);

class CandidateAudit {
 public:
  /// `launch_stream`: CUPTI's id of the stream the worker passes; `binary`: the bytes of
  /// the candidate's shared object. HIP's audit (hardware/hip/rocprof_timing.hpp) passes the
  /// queue its calls ran on, "queue" and its entry point, for the messages.
  CandidateAudit(uint32_t launch_stream, std::string binary, std::string stream_word = "stream",
                 std::string entry = "kmcts_cuda_kernel");
  /// The first rule `call` breaks, if any.
  std::optional<Violation> check(const CallTrace& call);

 private:
  uint32_t launch_stream_;
  std::string binary_;
  std::string stream_word_, entry_;
  std::map<std::string, bool> defined_;  // memo: name -> binary_defines
};

/// Peak rates of the GPU for the roofline check; 0 = unknown (no check on that side).
struct Roofline {
  double flops_per_s = 0;
  double bytes_per_s = 0;
};

/// The least time a call moving `bytes` and doing `flops` can take at those peaks, ns
/// (0 when neither side is known).
double roofline_floor_ns(double flops, double bytes, const Roofline& peaks);

}  // namespace kmcts::cuda
