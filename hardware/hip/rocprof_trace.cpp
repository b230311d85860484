#include "hardware/hip/rocprof_trace.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/text.hpp"
#include "hardware/cuda/timing_math.hpp"

namespace kmcts::hip {
namespace {

bool overlaps(const TraceRecord& r, uint64_t t0, uint64_t t1) { return r.end > t0 && r.start < t1; }

/// A cell that is a whole count (digits only, under 2^64), else nothing.
std::optional<uint64_t> as_count(const std::string& v) {
  uint64_t n = 0;
  const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || error != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

}  // namespace

std::vector<TraceRecord> parse_rocprof_csv(const std::string& text, TraceRecord::Kind kind, const std::string& what,
                                           size_t max_records) {
  std::istringstream in(text);
  std::string line;
  std::map<std::string, size_t> column;
  size_t width = 0, row = 0;
  std::vector<TraceRecord> out;
  auto fail = [&](const std::string& why) { throw std::runtime_error(fmt::format("{}: row {}: {}", what, row, why)); };
  while (std::getline(in, line)) {
    ++row;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    if (column.empty()) {
      for (size_t i = 0; i < cells.size(); ++i) column[cells[i]] = i;
      if (!column.count("Start_Timestamp") || !column.count("End_Timestamp"))
        throw std::runtime_error(fmt::format("{}: no rocprofv3 trace header (Start_Timestamp and End_Timestamp columns) in its first line", what));
      width = cells.size();
      continue;
    }
    if (out.size() >= max_records) fail(fmt::format("more than {} records: a flood, not a trace of the run's calls", max_records));
    if (cells.size() < width) fail(fmt::format("{} cells where the header has {}", cells.size(), width));
    auto cell = [&](const char* name) -> std::string {
      const auto at = column.find(name);
      return at == column.end() ? std::string() : cells[at->second];
    };
    auto count = [&](const char* name, bool required) -> uint64_t {
      const std::string v = cell(name);
      if (v.empty()) {
        if (required) fail(fmt::format("no {} (a record the trace lost part of cannot be timed)", name));
        return 0;
      }
      const std::optional<uint64_t> n = as_count(v);
      if (!n) fail(fmt::format("{} is not a count: '{}'", name, v.substr(0, 40)));
      return *n;
    };
    // A kernel's resource, under the first of its names the header has; 0 when it is missing or
    // not a count, and capped: the numbers only describe the kernel in its profile, so a bad one
    // costs the profile its figure, never the trace.
    auto resource = [&](std::initializer_list<const char*> names) -> int {
      for (const char* name : names)
        if (column.count(name)) return static_cast<int>(std::min<uint64_t>(as_count(cell(name)).value_or(0), 1u << 30));
      return 0;
    };
    TraceRecord r;
    r.kind = kind;
    r.name = kind == TraceRecord::Kind::kernel ? cell("Kernel_Name") : cell("Direction");
    r.start = count("Start_Timestamp", true);
    r.end = count("End_Timestamp", true);
    if (r.end < r.start) fail(fmt::format("ends ({}) before it starts ({})", r.end, r.start));
    if (column.count("Queue_Id")) r.queue = static_cast<int64_t>(count("Queue_Id", false));
    if (column.count("Stream_Id") && !cell("Stream_Id").empty()) r.stream = static_cast<int64_t>(count("Stream_Id", false));
    r.correlation = count("Correlation_Id", false);
    if (kind == TraceRecord::Kind::kernel) {
      static constexpr const char* kGrid[] = {"Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"};
      static constexpr const char* kBlock[] = {"Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"};
      for (int d = 0; d < 3; ++d) {
        r.block[d] = resource({kBlock[d]});
        const int items = resource({kGrid[d]});
        r.grid[d] = r.block[d] > 0 ? (items + r.block[d] - 1) / r.block[d] : 0;  // no workgroup: unknown
      }
      r.vgprs = resource({"VGPR_Count", "Vgpr_Count", "Arch_VGPR_Count"});
      r.sgprs = resource({"SGPR_Count", "Sgpr_Count"});
      r.lds_bytes = resource({"LDS_Block_Size", "Lds_Block_Size", "Group_Segment_Size"});
      r.scratch_bytes = resource({"Scratch_Size", "Private_Segment_Size"});
    }
    out.push_back(std::move(r));
  }
  if (column.empty()) throw std::runtime_error(what + ": empty (no header)");
  return out;
}

WindowTime window_time(std::span<const TraceRecord> records, uint64_t t0, uint64_t t1) {
  WindowTime w;
  std::vector<cuda::Interval> intervals;
  for (const TraceRecord& r : records) {
    if (!overlaps(r, t0, t1)) continue;
    intervals.push_back({r.start, r.end});
    (r.kind == TraceRecord::Kind::kernel ? w.kernels : w.copies)++;
    if (r.queue >= 0) w.queues.insert(r.queue);
    if (r.stream >= 0) w.streams.insert(r.stream);
  }
  w.union_ns = cuda::union_ns(std::move(intervals), t0, t1);
  return w;
}

int strays(const std::vector<TraceRecord>& records, const std::vector<std::pair<uint64_t, uint64_t>>& windows) {
  int n = 0;
  for (const TraceRecord& r : records)
    n += std::none_of(windows.begin(), windows.end(), [&](const auto& w) { return overlaps(r, w.first, w.second); });
  return n;
}

}  // namespace kmcts::hip
