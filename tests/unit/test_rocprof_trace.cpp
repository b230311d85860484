// The HIP timing's reading of rocprofv3 traces (hardware/hip/rocprof_trace.hpp, issue 31), on
// traces in the documented CSV layout (tests/fixtures/rocprof/): a call's time is the union of
// its kernels and copies on every queue; records outside the windows are strays; a dispatch
// without an end is an error naming its row.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hardware/hip/rocprof_trace.hpp"

using namespace kmcts::hip;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "rocprof" / name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("rocprof traces: kernels on two queues overlap and count once; a kernel after the window is a stray") {
  auto records = parse_rocprof_csv(fixture("two_queues_kernel_trace.csv"), TraceRecord::Kind::kernel, "kernel_trace.csv");
  REQUIRE(records.size() == 4);
  CHECK(records[0].name == "void silu_mul_kernel<float>(float const*, float*, int)");  // commas inside quotes
  CHECK(records[1].queue == 2);
  CHECK(records[1].stream == 3);
  CHECK(records[1].correlation == 12);
  const auto copies = parse_rocprof_csv(fixture("memory_copy_trace.csv"), TraceRecord::Kind::copy, "memory_copy_trace.csv");
  REQUIRE(copies.size() == 2);
  CHECK(copies[0].name == "MEMORY_COPY_HOST_TO_DEVICE");
  CHECK(copies[0].queue == -1);
  records.insert(records.end(), copies.begin(), copies.end());
  // The call's window: 1,000,000 to 1,010,000. Kernels 1.000-1.004 and 1.002-1.007 ms overlap
  // (7,000 ns together, not 9,000), the tail 1.008-1.009, the copy back 1.0095-1.0100; the
  // copy in before the window and the second tail after it are not the call's.
  const WindowTime w = window_time(records, 1000000, 1010000);
  CHECK(w.union_ns == 7000 + 1000 + 500);
  CHECK(w.kernels == 3);
  CHECK(w.copies == 1);
  CHECK(w.queues == std::set<int64_t>{1, 2});  // the side queue's work is seen
  CHECK(w.streams == std::set<int64_t>{1, 3});
  CHECK(strays(records, {{1000000, 1010000}}) == 2);  // the copy in and the late tail
  CHECK(strays(records, {{990000, 1040000}}) == 0);
  // A window cuts what it overlaps at its edges.
  CHECK(window_time(records, 1003000, 1005000).union_ns == 2000);
}

TEST_CASE("rocprof traces: a dispatch without an end, a bad header or a malformed row is an error naming it") {
  CHECK_THROWS_WITH(parse_rocprof_csv(fixture("missing_end_kernel_trace.csv"), TraceRecord::Kind::kernel, "k.csv"),
                    doctest::Contains("k.csv: row 3: no End_Timestamp"));
  CHECK_THROWS_WITH(parse_rocprof_csv("\"Kind\",\"Queue_Id\"\n\"KERNEL_DISPATCH\",1\n", TraceRecord::Kind::kernel, "k.csv"),
                    doctest::Contains("no rocprofv3 trace header"));
  CHECK_THROWS_WITH(parse_rocprof_csv("", TraceRecord::Kind::kernel, "k.csv"), doctest::Contains("empty"));
  const std::string header = "\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n";
  CHECK_THROWS_WITH(parse_rocprof_csv(header + "\"k\",10\n", TraceRecord::Kind::kernel, "k.csv"),
                    doctest::Contains("row 2: 2 cells where the header has 3"));
  CHECK_THROWS_WITH(parse_rocprof_csv(header + "\"k\",10,5\n", TraceRecord::Kind::kernel, "k.csv"),
                    doctest::Contains("row 2: ends (5) before it starts (10)"));
  CHECK_THROWS_WITH(parse_rocprof_csv(header + "\"k\",1.5e6,2e6\n", TraceRecord::Kind::kernel, "k.csv"),
                    doctest::Contains("Start_Timestamp is not a count"));
  // Columns are found by name: reordered and extra ones are fine; CRLF line ends too.
  const auto r = parse_rocprof_csv("\"End_Timestamp\",\"Extra\",\"Start_Timestamp\",\"Kernel_Name\"\r\n20,x,10,\"k\"\r\n",
                                   TraceRecord::Kind::kernel, "k.csv");
  REQUIRE(r.size() == 1);
  CHECK((r[0].start == 10 && r[0].end == 20 && r[0].name == "k"));
}

TEST_CASE("rocprof traces: a kernel's grid (in workgroups), workgroup, VGPRs, SGPRs, LDS and scratch, under each version's names") {
  // rocprofv3's own names (ROCm 6.x), the fixture of two queues: 65536 work-items of 256.
  const auto records = parse_rocprof_csv(fixture("two_queues_kernel_trace.csv"), TraceRecord::Kind::kernel, "k.csv");
  CHECK(records[0].grid == std::array<int, 3>{256, 1, 1});
  CHECK(records[0].block == std::array<int, 3>{256, 1, 1});
  CHECK(records[0].vgprs == 16);
  CHECK(records[0].sgprs == 24);
  // rocpd's CSV (ROCm 7) capitalises otherwise; an older rocprofv3 writes the HSA packet's names
  // and no Stream_Id; a grid that is not a whole number of workgroups rounds up.
  const auto rocpd = parse_rocprof_csv(
      "\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\",\"Lds_Block_Size\",\"Scratch_Size\",\"Vgpr_Count\",\"Sgpr_Count\","
      "\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n"
      "\"k\",10,20,8456,64,32,48,256,1,1,233472,1,1\n",
      TraceRecord::Kind::kernel, "k.csv");
  CHECK((rocpd[0].lds_bytes == 8456 && rocpd[0].scratch_bytes == 64 && rocpd[0].vgprs == 32 && rocpd[0].sgprs == 48));
  CHECK(rocpd[0].grid == std::array<int, 3>{912, 1, 1});
  const auto old = parse_rocprof_csv(
      "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\","
      "\"Group_Segment_Size\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\","
      "\"Grid_Size_Z\"\n\"KERNEL_DISPATCH\",4,1,\"taylor\",10,20,16,1024,256,1,1,100000001,1,1\n",
      TraceRecord::Kind::kernel, "k.csv");
  CHECK((old[0].scratch_bytes == 16 && old[0].lds_bytes == 1024 && old[0].vgprs == 0));
  CHECK(old[0].grid == std::array<int, 3>{390626, 1, 1});
  CHECK((old[0].queue == 1 && old[0].stream == -1));
  // A timestamp past 2^64 is an error naming its column (it was an uncaught std::out_of_range); a
  // resource that is not a count only loses its figure.
  CHECK_THROWS_WITH(parse_rocprof_csv("\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n"
                                      "\"k\",10,99999999999999999999999\n",
                                      TraceRecord::Kind::kernel, "k.csv"),
                    doctest::Contains("row 2: End_Timestamp is not a count"));
  const auto bad = parse_rocprof_csv("\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\",\"VGPR_Count\",\"Grid_Size_X\"\n"
                                     "\"k\",10,20,99999999999999999999999,4096\n",
                                     TraceRecord::Kind::kernel, "k.csv");
  CHECK(bad[0].vgprs == 0);
  CHECK(bad[0].grid[0] == 0);  // work-items without a workgroup size: no grid
  // An empty Stream_Id cell is no stream (it was stream 0).
  const auto empty = parse_rocprof_csv("\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\",\"Queue_Id\",\"Stream_Id\"\n"
                                       "\"k\",10,20,3,\n",
                                       TraceRecord::Kind::kernel, "k.csv");
  CHECK((empty[0].queue == 3 && empty[0].stream == -1));
}
