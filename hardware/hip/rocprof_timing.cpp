#include "hardware/hip/rocprof_timing.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "hardware/cuda/kernel_table.hpp"
#include "hardware/worker/timing_bound.hpp"

namespace kmcts::hip {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Window {
  bool candidate = false;
  std::string phase;
  std::pair<uint64_t, uint64_t> span[2];  // [0] monotonic, [1] boot
};

std::vector<Window> windows_of(const json& result) {
  if (!result.contains("windows") || !result["windows"].is_array())
    throw std::runtime_error("the HIP worker's result has no call windows to read the traces against");
  std::vector<Window> out;
  for (const json& w : result["windows"]) {
    Window x;
    x.candidate = w.at("candidate").get<bool>();
    x.phase = w.at("phase").get<std::string>();
    int k = 0;
    for (const char* clock : {"mono", "boot"}) {
      const auto t = w.at(clock).get<std::vector<uint64_t>>();
      if (t.size() != 2 || t[1] < t[0]) throw std::runtime_error(fmt::format("a call window's {} span is malformed", clock));
      x.span[k++] = {t[0], t[1]};
    }
    out.push_back(std::move(x));
  }
  return out;
}

bool inside(const TraceRecord& r, const std::pair<uint64_t, uint64_t>& w) { return r.end > w.first && r.start < w.second; }

// What the trace's clock may differ from the worker's by, at a window's edges (the GPU's
// timestamps are converted to the host's clock).
constexpr uint64_t kEdgeSlackNs = 50'000;

/// Overlaps the window but runs past its end (or began before it): work a call left running,
/// which its synchronisation did not wait for.
bool escapes(const TraceRecord& r, const std::pair<uint64_t, uint64_t>& w) {
  return inside(r, w) && (r.end > w.second + kEdgeSlackNs || r.start + kEdgeSlackNs < w.first);
}

/// The HIP runtime's own blit kernels, which hipMemsetAsync and hipMemcpyAsync run (ROCclr's
/// "__amd_rocclr_fillBufferAligned", "__amd_rocclr_copyBuffer"): a fill or a copy, not a library.
bool runtime_blit(const std::string& name) { return name.rfind("__amd_rocclr_", 0) == 0; }

/// The queue a record ran on, for the side-queue rule: its HIP stream where the trace has one,
/// else its hardware queue (several streams can share one).
int64_t lane(const TraceRecord& r) { return r.stream >= 0 ? r.stream : r.queue; }

/// A trace file, read as the candidate may have left it: its folder is writable from inside its
/// host, so only a regular file of bounded size is read, never through a link, a pipe or a device.
std::string read_trace_file(const fs::path& path) {
  constexpr off_t kMaxBytes = off_t{256} << 20;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path.filename().string(), std::strerror(errno)));
  struct stat st {};
  std::string text;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
  if (regular && st.st_size <= kMaxBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    text.resize(done);
  }
  ::close(fd);
  if (!regular) throw std::runtime_error(fmt::format("{} is not a plain file", path.filename().string()));
  if (st.st_size > kMaxBytes) throw std::runtime_error(fmt::format("{} is over 256 MiB", path.filename().string()));
  return text;
}

/// Records of `records` that overlap some window of `side` on clock `k`.
int records_inside(const std::vector<TraceRecord>& records, const std::vector<Window>& windows, bool side, int k) {
  int n = 0;
  for (const TraceRecord& r : records)
    n += std::any_of(windows.begin(), windows.end(), [&](const Window& w) { return w.candidate == side && inside(r, w.span[k]); });
  return n;
}

struct Side {
  std::vector<double> samples;
  worker::SpanTotals spans;  // the worker's own windows against the trace's unions
  cuda::KernelTable kernels;
  int kernels_per_call = 0, copies_per_call = 0;
};

Side time_side(const std::vector<TraceRecord>& records, const std::vector<Window>& windows, bool candidate, int k) {
  Side side;
  const char* name = candidate ? "candidate" : "reference";
  for (const Window& w : windows) {
    if (w.candidate != candidate || w.phase != "timing") continue;
    const WindowTime t = window_time(records, w.span[k].first, w.span[k].second);
    if (t.kernels + t.copies == 0)
      throw std::runtime_error(fmt::format("timed call {} of the {} has no record in its window: the trace lost its work",
                                           side.samples.size() + 1, name));
    side.samples.push_back(static_cast<double>(t.union_ns));
    const double window_ms = static_cast<double>(w.span[k].second - w.span[k].first) * 1e-6;
    side.spans.add({window_ms, -1, window_ms, static_cast<double>(t.union_ns) * 1e-6});
    side.kernels_per_call = t.kernels, side.copies_per_call = t.copies;
    for (const TraceRecord& r : records)
      if (r.kind == TraceRecord::Kind::kernel && inside(r, w.span[k])) {
        cuda::KernelLaunch launch;
        launch.name = r.name;
        const uint64_t start = std::max(r.start, w.span[k].first), end = std::min(r.end, w.span[k].second);
        side.kernels.add(std::move(launch), end > start ? end - start : 0);
      }
  }
  return side;
}

/// The candidate's records audited call by call, then what lies outside all its calls.
std::optional<std::pair<cuda::Violation, std::string>> audit(const std::vector<TraceRecord>& records,
                                                             const std::vector<Window>& windows, int k,
                                                             const std::string& binary) {
  // The candidate's launch queue: the first it is seen on in its calls.
  int64_t launch = -1;
  for (const Window& w : windows)
    for (const TraceRecord& r : records)
      if (launch < 0 && w.candidate && inside(r, w.span[k]) && lane(r) >= 0) launch = lane(r);
  cuda::CandidateAudit audit(static_cast<uint32_t>(std::max<int64_t>(launch, 0)), binary, "queue", "kmcts_hip_kernel");
  for (const Window& w : windows) {
    if (!w.candidate) continue;
    cuda::CallTrace call;
    for (const TraceRecord& r : records) {
      if (!inside(r, w.span[k])) continue;
      if (escapes(r, w.span[k])) call.stray_kernels++, call.stray_names.insert(r.name.substr(0, 200));
      if (lane(r) >= 0) call.streams.insert(static_cast<uint32_t>(lane(r)));
      if (r.kind == TraceRecord::Kind::kernel && !runtime_blit(r.name)) call.kernels.insert(r.name);
    }
    if (auto v = audit.check(call)) return std::make_pair(*v, w.phase);
  }
  cuda::CallTrace after;
  for (const TraceRecord& r : records)
    if (std::none_of(windows.begin(), windows.end(), [&](const Window& w) { return w.candidate && inside(r, w.span[k]); }))
      after.stray_kernels++, after.stray_names.insert(r.name.substr(0, 200));
  if (auto v = audit.check(after)) return std::make_pair(*v, std::string("after its calls"));
  return std::nullopt;
}

}  // namespace

std::vector<TraceRecord> read_process_trace(const fs::path& dir, int64_t pid) {
  const fs::path kernels = dir / fmt::format("{}_kernel_trace.csv", pid), copies = dir / fmt::format("{}_memory_copy_trace.csv", pid);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(kernels, ec)))
    throw std::runtime_error(fmt::format("rocprofv3 left no kernel trace of process {} ({})", pid, kernels.string()));
  std::vector<TraceRecord> records = parse_rocprof_csv(read_trace_file(kernels), TraceRecord::Kind::kernel, kernels.filename().string());
  if (fs::exists(fs::symlink_status(copies, ec))) {
    auto more = parse_rocprof_csv(read_trace_file(copies), TraceRecord::Kind::copy, copies.filename().string());
    records.insert(records.end(), more.begin(), more.end());
  }
  return records;
}

TracedRun time_from_traces(json result, const std::vector<TraceRecord>& reference, const std::vector<TraceRecord>& candidate,
                           const std::string& candidate_binary) {
  const std::vector<Window> windows = windows_of(result);
  if (reference.empty() && candidate.empty()) throw std::runtime_error("the hosts' traces hold no records (was rocprofv3 tracing?)");
  // The clock rocprofv3's timestamps are on: the one whose windows hold more of the records.
  int held[2];
  for (int k = 0; k < 2; ++k) held[k] = records_inside(reference, windows, false, k) + records_inside(candidate, windows, true, k);
  const int k = held[1] > held[0] ? 1 : 0;
  if (held[k] == 0)
    throw std::runtime_error(fmt::format("no record of the hosts' traces ({} and {}) lies in any call window on the monotonic "
                                         "or the boot clock",
                                         reference.size(), candidate.size()));
  Side ref = time_side(reference, windows, false, k), cand = time_side(candidate, windows, true, k);
  const size_t worker_ref = result.value("reference_samples_ns", json::array()).size();
  const size_t worker_cand = result.value("candidate_samples_ns", json::array()).size();
  if (ref.samples.size() != worker_ref || cand.samples.size() != worker_cand)
    throw std::runtime_error(fmt::format("the windows hold {} and {} timed calls where the worker took {} and {} samples",
                                         ref.samples.size(), cand.samples.size(), worker_ref, worker_cand));

  TracedRun run;
  json& counters = result["counters"];
  // The trace is written inside the hosts, where a candidate can reach it: what its calls leave
  // off the GPU is held to what the reference's leave, as on CUDA (hardware/worker/timing_bound.hpp).
  json bound;
  if (auto breach = worker::check_totals(ref.spans, cand.spans, worker::TimingBoundPolicy{}, &bound))
    run.violation = cuda::Violation{"timing_bound", *breach}, run.phase = "timing";
  counters["timing_bound"] = bound;
  if (!run.violation)
    if (auto v = audit(candidate, windows, k, candidate_binary)) run.violation = v->first, run.phase = v->second;
  counters["timing_source"] = "rocprofv3";
  counters["trace_clock"] = k == 0 ? "monotonic" : "boot";
  counters["records_in_windows"] = held[k];
  counters["records_in_windows_other_clock"] = held[1 - k];
  counters["provisional_samples"] = "the hosts' synchronised windows, replaced by the traces' unions";
  counters["kernels_per_call_reference"] = ref.kernels_per_call, counters["kernels_per_call_candidate"] = cand.kernels_per_call;
  counters["memcpys_per_call_reference"] = ref.copies_per_call, counters["memcpys_per_call_candidate"] = cand.copies_per_call;
  result["kernel_tables"] = {{"reference", ref.kernels.to_json()},
                             {"candidate", cand.kernels.to_json()},
                             {"samples_reference", ref.samples.size()},
                             {"samples_candidate", cand.samples.size()}};
  std::set<std::string> names;  // the candidate's kernels, as the trace names them
  for (const auto& [launch, sums] : cand.kernels.rows()) names.insert(launch.name);
  result["candidate_kernels"] = names;
  result["reference_samples_ns"] = std::move(ref.samples);
  result["candidate_samples_ns"] = std::move(cand.samples);
  result.erase("windows");  // thousands of spans: read, not kept
  // The worker's counters of its provisional samples would contradict the traced ones.
  for (const char* side : {"reference", "candidate"})
    for (const char* key : {"rse_", "kernel_ms_", "window_overhead_ns_", "kernel_count_histogram_", "sample_kernels_",
                            "sample_stream_set_", "stream_sets_", "streams_"})
      counters.erase(std::string(key) + side);
  run.result = std::move(result);
  return run;
}

}  // namespace kmcts::hip
