#include "hardware/hip/rocprof_timing.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <span>
#include <stdexcept>
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

// A trace may hold this many records per call window (kernels and copies of the call), plus the
// spare (the context's start-up): more is a flood, not a measurement.
constexpr size_t kRecordsPerWindow = 64;
constexpr size_t kRecordsSpare = 4096;

// What the trace's clock may differ from the worker's by, at a window's edges (the GPU's
// timestamps are converted to the host's clock).
constexpr uint64_t kEdgeSlackNs = 50'000;

/// Overlaps the window but runs past its end (or began before it): work a call left running,
/// which its synchronisation did not wait for.
bool escapes(const TraceRecord& r, const std::pair<uint64_t, uint64_t>& w) {
  return inside(r, w) && (r.end > w.second + kEdgeSlackNs || r.start + kEdgeSlackNs < w.first);
}

/// The lanes of stream-less kernels in a trace read by streams: 0xffff0000 + their queue (the
/// audit's lanes are 32-bit).
constexpr int64_t kStreamlessLane = 0xffff0000;

/// The HIP runtime's own blit kernels, which hipMemsetAsync and hipMemcpyAsync run (ROCclr's
/// "__amd_rocclr_fillBufferAligned", "__amd_rocclr_copyBuffer"): a fill or a copy, not a library.
bool runtime_blit(const std::string& name) { return name.rfind("__amd_rocclr_", 0) == 0; }

/// The queue a record ran on, for the side-queue rule: its HIP stream where the trace's kernels
/// carry streams (several streams can share a hardware queue), else its hardware queue; one or
/// the other for every record of a trace, never both (their numbers are unrelated). A kernel
/// without the trace's kind (a stream-less row among streams: work put on a queue outside HIP's
/// streams) is a lane of its own, apart from every stream; a copy without it is not counted.
int64_t lane(const TraceRecord& r, bool by_stream) {
  const bool kernel = r.kind == TraceRecord::Kind::kernel;
  if (!by_stream) return kernel ? r.queue : -1;
  if (r.stream >= 0) return r.stream;
  return kernel ? kStreamlessLane | (std::max<int64_t>(r.queue, 0) & 0xffff) : -1;
}
bool has_streams(const std::vector<TraceRecord>& records) {
  return std::any_of(records.begin(), records.end(),
                     [](const TraceRecord& r) { return r.kind == TraceRecord::Kind::kernel && r.stream >= 0; });
}

/// A descriptor closed on every way out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

/// `name` in the folder `dir`, never through a link (of the name, or anywhere below `dir`) and
/// never out of it: openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it
/// (5.6), O_NOFOLLOW on the last component otherwise.
int open_beneath(const fs::path& dir, const std::string& name) {
  Fd base{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (base.fd < 0) return -1;
  open_how how{};
  how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, base.fd, name.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  return ::openat(base.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

/// A trace file, read as the candidate may have left it: its folder is writable from inside its
/// host, so only a regular file of bounded size is read, never through a link, a pipe or a device.
std::string read_trace_file(const fs::path& dir, const std::string& name) {
  constexpr off_t kMaxBytes = off_t{256} << 20;
  Fd file{open_beneath(dir, name)};
  if (file.fd < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", name, std::strerror(errno)));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
    throw std::runtime_error(fmt::format("{} is not a plain file", name));
  if (st.st_size > kMaxBytes) throw std::runtime_error(fmt::format("{} is over 256 MiB", name));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(file.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // shortened while read: what is there
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

/// The records sorted by start, so that those overlapping a window are found without a pass
/// over all of them (a trace may hold a record per launch of thousands of calls).
class Timeline {
 public:
  explicit Timeline(std::vector<TraceRecord> records) : records_(std::move(records)) {
    std::stable_sort(records_.begin(), records_.end(), [](const TraceRecord& a, const TraceRecord& b) { return a.start < b.start; });
    for (const TraceRecord& r : records_) longest_ = std::max(longest_, r.end - r.start);
  }
  /// Every record that may overlap [t0, t1] (and some that do not: test with inside()).
  std::span<const TraceRecord> around(uint64_t t0, uint64_t t1) const {
    const uint64_t from = t0 > longest_ ? t0 - longest_ : 0;
    const auto by_start = [](const TraceRecord& r, uint64_t t) { return r.start < t; };
    const auto lo = std::lower_bound(records_.begin(), records_.end(), from, by_start);
    const auto hi = std::lower_bound(lo, records_.end(), t1, by_start);
    return {lo, hi};
  }
  std::span<const TraceRecord> around(const std::pair<uint64_t, uint64_t>& w) const { return around(w.first, w.second); }
  const std::vector<TraceRecord>& all() const { return records_; }

 private:
  std::vector<TraceRecord> records_;
  uint64_t longest_ = 0;
};

/// Records of `records` that overlap some window of `side` on clock `k`.
int records_inside(const Timeline& records, const std::vector<Window>& windows, bool side, int k) {
  std::set<const TraceRecord*> seen;
  for (const Window& w : windows)
    if (w.candidate == side)
      for (const TraceRecord& r : records.around(w.span[k]))
        if (inside(r, w.span[k])) seen.insert(&r);
  return static_cast<int>(seen.size());
}

struct Side {
  std::vector<double> samples;
  std::vector<uint64_t> windows_ns;  // each timed call's window, beside its sample
  worker::SpanTotals spans;  // the worker's own windows against the trace's unions
  cuda::KernelTable kernels;
  int kernels_per_call = 0, copies_per_call = 0;
  int empty_call = 0;  // the first timed call (from 1) with no record in its window; 0: none
};

Side time_side(const Timeline& records, const std::vector<Window>& windows, bool candidate, int k) {
  Side side;
  for (const Window& w : windows) {
    if (w.candidate != candidate || w.phase != "timing") continue;
    const std::span<const TraceRecord> near = records.around(w.span[k]);
    const WindowTime t = window_time(near, w.span[k].first, w.span[k].second);
    if (t.kernels + t.copies == 0 && side.empty_call == 0) side.empty_call = static_cast<int>(side.samples.size()) + 1;
    side.samples.push_back(static_cast<double>(t.union_ns));
    side.windows_ns.push_back(w.span[k].second - w.span[k].first);
    const double window_ms = static_cast<double>(w.span[k].second - w.span[k].first) * 1e-6;
    side.spans.add({window_ms, -1, window_ms, static_cast<double>(t.union_ns) * 1e-6});
    side.kernels_per_call = t.kernels, side.copies_per_call = t.copies;
    for (const TraceRecord& r : near)
      if (r.kind == TraceRecord::Kind::kernel && inside(r, w.span[k])) {
        cuda::KernelLaunch launch;
        launch.name = r.name;
        launch.grid = r.grid, launch.block = r.block;
        launch.registers = r.vgprs;  // per lane, as CUDA's per thread
        launch.smem_static = r.lds_bytes;
        launch.local_bytes = r.scratch_bytes;
        const uint64_t start = std::max(r.start, w.span[k].first), end = std::min(r.end, w.span[k].second);
        side.kernels.add(std::move(launch), end > start ? end - start : 0);
      }
  }
  return side;
}

/// What the reference's calls spend off the GPU inside their windows (the worker's request to
/// its host, the launch, the synchronisation, the reply): the median over its timed calls.
uint64_t median_gap_ns(const Side& reference) {
  std::vector<uint64_t> gaps;
  for (size_t i = 0; i < reference.samples.size(); ++i) {
    const auto used = static_cast<uint64_t>(reference.samples[i]);
    gaps.push_back(reference.windows_ns[i] > used ? reference.windows_ns[i] - used : 0);
  }
  if (gaps.empty()) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

/// A sample is never less than its trusted window less the reference's usual overhead: the
/// candidate's trace is written inside its own process, and a forged one could claim any GPU
/// time. Applied to both sides alike (identical kernels stay at 1x); a call that spends more off
/// the GPU than the reference's (more launches, host work) is timed by its window. Returns how
/// many samples it raised.
int floor_samples(Side& side, uint64_t gap_ns) {
  int raised = 0;
  for (size_t i = 0; i < side.samples.size(); ++i) {
    const double floor = side.windows_ns[i] > gap_ns ? static_cast<double>(side.windows_ns[i] - gap_ns) : 0.0;
    if (side.samples[i] < floor) side.samples[i] = floor, ++raised;
  }
  return raised;
}

/// The candidate's records audited call by call, then what lies outside all its calls.
std::optional<std::pair<cuda::Violation, std::string>> audit(const Timeline& records, const std::vector<Window>& windows,
                                                             int k, const std::string& binary) {
  // The candidate's launch queue: the one its first record in its calls ran on.
  const bool by_stream = has_streams(records.all());
  int64_t launch = -1;
  for (const Window& w : windows)
    if (w.candidate && launch < 0)
      for (const TraceRecord& r : records.around(w.span[k]))
        if (launch < 0 && inside(r, w.span[k]) && lane(r, by_stream) >= 0) launch = lane(r, by_stream);
  cuda::CandidateAudit audit(static_cast<uint32_t>(std::max<int64_t>(launch, 0)), binary, "queue", "kmcts_hip_kernel");
  std::set<const TraceRecord*> in_calls;
  for (const Window& w : windows) {
    if (!w.candidate) continue;
    cuda::CallTrace call;
    for (const TraceRecord& r : records.around(w.span[k])) {
      if (!inside(r, w.span[k])) continue;
      in_calls.insert(&r);
      if (escapes(r, w.span[k])) call.stray_kernels++, call.stray_names.insert(r.name.substr(0, 200));
      if (lane(r, by_stream) >= 0) call.streams.insert(static_cast<uint32_t>(lane(r, by_stream)));
      if (r.kind == TraceRecord::Kind::kernel && !runtime_blit(r.name)) call.kernels.insert(r.name);
    }
    if (auto v = audit.check(call)) return std::make_pair(*v, w.phase);
  }
  cuda::CallTrace after;
  for (const TraceRecord& r : records.all())
    if (!in_calls.count(&r)) after.stray_kernels++, after.stray_names.insert(r.name.substr(0, 200));
  if (auto v = audit.check(after)) return std::make_pair(*v, std::string("after its calls"));
  return std::nullopt;
}

}  // namespace

std::vector<TraceRecord> read_process_trace(const fs::path& dir, int64_t pid, size_t max_records) {
  const std::string kernels = fmt::format("{}_kernel_trace.csv", pid), copies = fmt::format("{}_memory_copy_trace.csv", pid);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir / kernels, ec)))
    throw std::runtime_error(fmt::format("rocprofv3 left no kernel trace of process {} ({})", pid, (dir / kernels).string()));
  std::vector<TraceRecord> records =
      parse_rocprof_csv(read_trace_file(dir, kernels), TraceRecord::Kind::kernel, kernels, max_records);
  if (fs::exists(fs::symlink_status(dir / copies, ec))) {
    auto more = parse_rocprof_csv(read_trace_file(dir, copies), TraceRecord::Kind::copy, copies, max_records - records.size());
    records.insert(records.end(), more.begin(), more.end());
  }
  return records;
}

size_t max_trace_records(const json& worker_result) {
  return kRecordsPerWindow * worker_result.value("windows", json::array()).size() + kRecordsSpare;
}

TracedRun time_from_traces(json result, std::vector<TraceRecord> reference_records, std::vector<TraceRecord> candidate_records,
                           const std::string& candidate_binary) {
  const std::vector<Window> windows = windows_of(result);
  const Timeline reference(std::move(reference_records)), candidate(std::move(candidate_records));
  // The clock rocprofv3's timestamps are on: the one whose windows hold more of the reference's
  // records (the candidate's trace could be written to tip it).
  int held[2], held_candidate[2];
  for (int k = 0; k < 2; ++k)
    held[k] = records_inside(reference, windows, false, k), held_candidate[k] = records_inside(candidate, windows, true, k);
  const int k = held[1] > held[0] ? 1 : 0;
  if (held[k] == 0)
    throw std::runtime_error(fmt::format("no record of the reference's trace ({} records) lies in any of its call windows "
                                         "on the monotonic or the boot clock",
                                         reference.all().size()));
  TracedRun run;
  json& counters = result["counters"];
  counters["timing_source"] = "rocprofv3";
  counters["trace_clock"] = k == 0 ? "monotonic" : "boot";
  counters["records_in_windows"] = held[k] + held_candidate[k];
  counters["records_in_windows_other_clock"] = held[1 - k] + held_candidate[1 - k];
  // The candidate's records first: what breaks a rule is rejected whatever its times say.
  if (auto v = audit(candidate, windows, k, candidate_binary)) {
    run.violation = v->first, run.phase = v->second, run.result = std::move(result);
    return run;
  }
  Side ref = time_side(reference, windows, false, k), cand = time_side(candidate, windows, true, k);
  if (ref.empty_call)
    throw std::runtime_error(fmt::format("timed call {} of the reference has no record in its window: the trace lost its work",
                                         ref.empty_call));
  const size_t worker_ref = result.value("reference_samples_ns", json::array()).size();
  const size_t worker_cand = result.value("candidate_samples_ns", json::array()).size();
  if (ref.samples.size() != worker_ref || cand.samples.size() != worker_cand)
    throw std::runtime_error(fmt::format("the windows hold {} and {} timed calls where the worker took {} and {} samples",
                                         ref.samples.size(), cand.samples.size(), worker_ref, worker_cand));
  if (cand.empty_call) {
    run.violation = cuda::Violation{"trace_tampered", fmt::format("timed call {} of the candidate has no record in its "
                                                                  "window: its trace, written inside its own process, "
                                                                  "lost or hid its work",
                                                                  cand.empty_call)};
    run.phase = "timing", run.result = std::move(result);
    return run;
  }
  // What its calls leave off the GPU is held to what the reference's leave, as on CUDA
  // (hardware/worker/timing_bound.hpp): a trace shaved by far is rejected.
  json bound;
  if (auto breach = worker::check_totals(ref.spans, cand.spans, worker::TimingBoundPolicy{}, &bound))
    run.violation = cuda::Violation{"timing_bound", *breach}, run.phase = "timing";
  counters["timing_bound"] = bound;
  // And one shaved by less gains nothing: no sample under its window less the reference's
  // median overhead.
  const uint64_t gap = median_gap_ns(ref);
  counters["trace_floor_gap_ns"] = gap;
  counters["samples_raised_to_floor_reference"] = floor_samples(ref, gap);
  counters["samples_raised_to_floor_candidate"] = floor_samples(cand, gap);
  counters["provisional_samples"] = "the hosts' synchronised windows, replaced by the traces' unions (at least window less "
                                    "the reference's median overhead)";
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
