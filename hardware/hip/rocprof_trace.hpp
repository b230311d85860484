#pragma once
// GPU time of a call from rocprofv3's traces (issue 31): the AMD analogue of the CUPTI activity
// timer (hardware/cuda/cupti/activity_timer.hpp) where rocprofiler-sdk's headers are missing, as
// on Debian. `rocprofv3 --kernel-trace --memory-copy-trace --output-format csv` writes one file
// per kind (*_kernel_trace.csv, *_memory_copy_trace.csv), quoted headers first; the columns are
// found by name, so added or reordered ones do not matter:
//   kernels: Kind, Agent_Id, Queue_Id, Stream_Id, Thread_Id, Dispatch_Id, Kernel_Id,
//            Kernel_Name, Correlation_Id, Start_Timestamp, End_Timestamp, ... (grid, workgroup,
//            LDS, VGPR/SGPR counts)
//   copies:  Kind, Direction, Stream_Id, Source_Agent_Id, Destination_Agent_Id,
//            Correlation_Id, Start_Timestamp, End_Timestamp
// Timestamps are nanoseconds. A call's time is the union of every record that overlaps its
// window, on every queue and stream (work a candidate hides on a second queue counts, as on
// CUDA); records outside every window are strays. This parser was written against the
// documented format and recorded examples (tests/fixtures/rocprof/), never against a run of
// rocprofv3 on an AMD GPU: no AMD GPU was available (README, "AMD GPUs").
#include <array>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace kmcts::hip {

struct TraceRecord {
  enum class Kind { kernel, copy };
  Kind kind = Kind::kernel;
  std::string name;        // the kernel's (copies: their direction)
  uint64_t start = 0, end = 0;
  int64_t queue = -1;      // -1 where the file has no Queue_Id (copies)
  int64_t stream = -1;     // -1 where the file has no Stream_Id, or the row leaves it empty
  uint64_t correlation = 0;
  // Kernels, where the trace has the columns (0 where not): the grid in workgroups (rocprofv3's
  // Grid_Size is in work-items, as HSA's dispatch packet), the workgroup, architected VGPRs and
  // SGPRs, LDS bytes per workgroup and scratch bytes per work-item. Names differ between
  // versions: LDS_Block_Size or Lds_Block_Size or Group_Segment_Size, VGPR_Count or Vgpr_Count
  // or Arch_VGPR_Count, Scratch_Size or Private_Segment_Size.
  std::array<int, 3> grid{}, block{};
  int vgprs = 0, sgprs = 0, lds_bytes = 0, scratch_bytes = 0;
};

/// The records of one rocprofv3 CSV trace file. `what` names the file in errors. Throws
/// std::runtime_error naming the file, the row and the column for: no header with
/// Start_Timestamp and End_Timestamp, a row with fewer cells than the header, a timestamp that
/// is missing, a number that is not one (or over 2^64), or an end before its start (a dispatch the trace lost the end of
/// cannot be timed, and guessing would score work that was not measured), more than
/// `max_records` rows.
std::vector<TraceRecord> parse_rocprof_csv(const std::string& text, TraceRecord::Kind kind, const std::string& what,
                                           size_t max_records = static_cast<size_t>(-1));

struct WindowTime {
  uint64_t union_ns = 0;
  int kernels = 0, copies = 0;
  std::set<int64_t> queues, streams;
};

/// What ran in [t0, t1]: the union of the overlapping records clipped to the window.
WindowTime window_time(std::span<const TraceRecord> records, uint64_t t0, uint64_t t1);

/// Records that overlap none of `windows` (each [start, end]): work left running or launched
/// after its call returned.
int strays(const std::vector<TraceRecord>& records, const std::vector<std::pair<uint64_t, uint64_t>>& windows);

}  // namespace kmcts::hip
