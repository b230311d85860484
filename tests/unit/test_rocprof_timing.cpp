// A HIP measurement timed afterwards from rocprofv3's traces (hardware/hip/rocprof_timing.hpp):
// the worker's call windows against its hosts' records, the clock found, the candidate audited.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "hardware/hip/rocprof_timing.hpp"

namespace {

using kmcts::hip::TraceRecord;
using nlohmann::json;

// Boot runs this far ahead of the monotonic clock (a host that was suspended once).
constexpr uint64_t kBootAhead = 5'000'000'000;

json window(bool candidate, const std::string& phase, uint64_t t0, uint64_t t1) {
  return {{"candidate", candidate}, {"phase", phase}, {"mono", {t0, t1}}, {"boot", {t0 + kBootAhead, t1 + kBootAhead}}};
}

TraceRecord kernel(const std::string& name, uint64_t start, uint64_t end, int64_t queue = 1) {
  TraceRecord r;
  r.name = name, r.start = start + kBootAhead, r.end = end + kBootAhead, r.queue = queue, r.stream = queue;
  return r;
}

// A worker's result: correctness calls at 1000 us, then two timed calls per side at 2000-5000 us,
// then the candidate's event sample at 6000 us. Records below sit on the boot clock.
json worker_result() {
  json r = {{"verdict", "ok"},
            {"reference_samples_ns", {40000, 40000}},
            {"candidate_samples_ns", {30000, 30000}},
            {"counters", json::object()},
            {"host_pids", {{"reference", 101}, {"candidate", 102}}}};
  // The timed windows leave about 60 us off the GPU on both sides (the worker's request, the
  // launch, the synchronisation, the reply).
  r["windows"] = {window(false, "reference", 1000000, 1100000), window(true, "correctness", 1200000, 1300000),
                  window(false, "timing", 2000000, 2100000),    window(true, "timing", 3000000, 3090000),
                  window(false, "timing", 4000000, 4100000),    window(true, "timing", 5000000, 5085000),
                  window(true, "events", 6000000, 6100000)};
  return r;
}

const std::string kBinary = "...._Z4silu...._Z4tail...";  // what the candidate's object defines

std::vector<TraceRecord> reference_records() {
  return {kernel("_Z3ref", 1010000, 1030000), kernel("_Z3ref", 2010000, 2050000), kernel("_Z3ref", 4010000, 4052000)};
}

std::vector<TraceRecord> candidate_records() {
  // Two overlapping kernels in the first timed call count once: 3010-3030 and 3020-3040 = 30 us.
  return {kernel("_Z4silu", 1210000, 1230000), kernel("_Z4silu", 3010000, 3030000), kernel("_Z4tail", 3020000, 3040000),
          kernel("_Z4silu", 5010000, 5035000), kernel("_Z4silu", 6010000, 6030000)};
}

// Twelve timed calls a side, alternating, each in a window of `window_ns`: the reference's
// trace has one kernel of `reference_ns` in each, the candidate's one of `candidate_ns`, both
// starting `offset_ns` into the window.
struct Paired {
  json result;
  std::vector<TraceRecord> reference, candidate;
};
Paired paired_calls(uint64_t window_ns, uint64_t offset_ns, uint64_t reference_ns, uint64_t candidate_ns) {
  Paired p;
  p.result = {{"verdict", "ok"}, {"counters", json::object()}, {"windows", json::array()}};
  uint64_t t = 1'000'000'000;
  for (int i = 0; i < 24; ++i, t += 2 * window_ns) {
    const bool cand = i % 2 == 1;
    p.result["windows"].push_back(window(cand, "timing", t, t + window_ns));
    const uint64_t busy = cand ? candidate_ns : reference_ns;
    (cand ? p.candidate : p.reference).push_back(kernel(cand ? "_Z4silu" : "_Z3ref", t + offset_ns, t + offset_ns + busy));
    p.result[cand ? "candidate_samples_ns" : "reference_samples_ns"].push_back(1.0);
  }
  return p;
}

}  // namespace

TEST_CASE("rocprof timing: each timed window's union becomes a sample, on the clock the records fit") {
  const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), candidate_records(), kBinary);
  CHECK_FALSE(run.violation);
  CHECK(run.result["reference_samples_ns"] == json({40000.0, 42000.0}));
  CHECK(run.result["candidate_samples_ns"] == json({30000.0, 25000.0}));
  CHECK(run.result["counters"]["trace_clock"] == "boot");
  CHECK(run.result["counters"]["records_in_windows"] == 8);
  CHECK(run.result["counters"]["records_in_windows_other_clock"] == 0);
  CHECK(run.result["counters"]["timing_source"] == "rocprofv3");
  CHECK(run.result["counters"]["trace_floor_gap_ns"] == 60000);  // the reference's median window less union
  CHECK(run.result["counters"]["samples_raised_to_floor_candidate"] == 0);
  CHECK_FALSE(run.result.contains("windows"));
  // The candidate's kernel table: per kernel name, the calls and the time inside its timed windows.
  const json table = run.result["kernel_tables"]["candidate"];
  REQUIRE(table.is_array());
  CHECK(run.result["kernel_tables"]["samples_candidate"] == 2);
  CHECK(table.dump().find("_Z4tail") != std::string::npos);
  // with each launch's shape and resources, as the trace gives them
  auto with_shape = candidate_records();
  for (TraceRecord& r : with_shape) r.grid = {4096, 1, 1}, r.block = {256, 1, 1}, r.vgprs = 24, r.lds_bytes = 512;
  const auto shaped = kmcts::hip::time_from_traces(worker_result(), reference_records(), with_shape, kBinary);
  const std::string rows = shaped.result["kernel_tables"]["candidate"].dump();
  CAPTURE(rows);
  CHECK(rows.find("4096") != std::string::npos);
  CHECK(rows.find("512") != std::string::npos);
  CHECK(run.result["candidate_kernels"] == json({"_Z4silu", "_Z4tail"}));
}

TEST_CASE("rocprof timing: a candidate's work on a second queue, a library kernel, or work after its calls is rejected") {
  SUBCASE("side queue") {
    auto records = candidate_records();
    records.push_back(kernel("_Z4silu", 5040000, 5090000, 2));
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(run.violation);
    CHECK(run.violation->rule == "side_stream");
    CHECK(run.phase == "timing");
    CHECK(run.violation->message.find("queue(s) 2 besides the launch queue 1") != std::string::npos);
    CHECK(run.violation->message.find("kmcts_hip_kernel") != std::string::npos);
  }
  SUBCASE("library kernel") {
    auto records = candidate_records();
    records.push_back(kernel("Cijk_Ailk_Bljk_SB_MT64x64", 3050000, 3060000));  // a rocBLAS (Tensile) kernel
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(run.violation);
    CHECK(run.violation->rule == "library_kernel");
    CHECK(run.phase == "timing");
  }
  SUBCASE("work left running after the calls") {
    auto records = candidate_records();
    records.push_back(kernel("_Z4tail", 5500000, 5600000));
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(run.violation);
    CHECK(run.violation->rule == "stray_work");
    CHECK(run.phase == "after its calls");
  }
  SUBCASE("work still running when its call ends") {
    auto records = candidate_records();
    records[3].end += 5'000'000;  // the second timed call's kernel runs on for 5 ms after the call returned
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(run.violation);
    CHECK(run.violation->rule == "stray_work");
    CHECK(run.phase == "timing");
  }
  SUBCASE("the HIP runtime's own fill and copy kernels (hipMemsetAsync) are not a library's") {
    auto records = candidate_records();
    records.push_back(kernel("__amd_rocclr_fillBufferAligned", 3001000, 3005000));
    CHECK_FALSE(kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary).violation);
  }
  SUBCASE("a trace's queues and streams are never compared with each other") {
    // A trace whose kernels carry no Stream_Id (older rocprofv3) and whose copies do: the
    // kernels' queue 1 and the copies' stream 5 are not two lanes.
    auto records = candidate_records();
    for (TraceRecord& r : records) r.stream = -1;
    TraceRecord copy = kernel("MEMORY_COPY_DEVICE_TO_DEVICE", 3041000, 3042000);
    copy.kind = TraceRecord::Kind::copy, copy.queue = -1, copy.stream = 5;
    records.push_back(copy);
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    CHECK_FALSE(run.violation);
    // The same trace with a kernel on queue 2: the kernels are read by queue, the copy's stream
    // does not turn that off.
    records.push_back(kernel("_Z4silu", 5040000, 5090000, 2));
    records.back().stream = -1;
    const auto side = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(side.violation);
    CHECK(side.violation->rule == "side_stream");
  }
  SUBCASE("a kernel without a stream among kernels with streams is a lane of its own") {
    auto records = candidate_records();  // stream 1 throughout
    records.push_back(kernel("_Z4silu", 5040000, 5090000, 1));
    records.back().stream = -1;  // (an empty Stream_Id cell: work on a queue outside HIP's streams)
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(run.violation);
    CHECK(run.violation->rule == "side_stream");
  }
  SUBCASE("the reference's own work is not the candidate's") {
    auto reference = reference_records();
    reference.push_back(kernel("_Z3ref", 2060000, 2070000, 7));
    CHECK_FALSE(kmcts::hip::time_from_traces(worker_result(), reference, candidate_records(), kBinary).violation);
  }
}

TEST_CASE("rocprof timing: a candidate trace that leaves much more of its calls off the GPU than the reference's breaks the bound") {
  // Twelve 10 ms calls a side: the reference's trace fills 9.9 ms of each, the candidate's
  // (forged: it is written inside the candidate's process) only 1 ms.
  const Paired p = paired_calls(10'000'000, 50'000, 9'900'000, 1'000'000);
  const auto run = kmcts::hip::time_from_traces(p.result, p.reference, p.candidate, kBinary);
  REQUIRE(run.violation);
  CHECK(run.violation->rule == "timing_bound");
  CHECK(run.result["counters"].contains("timing_bound"));
}

TEST_CASE("rocprof timing: a forged candidate trace under the bound gains nothing: samples stay at window less the reference's overhead") {
  // The review's exploit: 100 us calls a side, 10 us of each off the GPU; the candidate's trace
  // (written inside its own process) claims 10 us of GPU time, little enough in all to pass the
  // bound's floor. Scored by its trace it would be 9x; each sample is raised to its window less
  // the reference's median overhead, the time the call really took.
  const Paired p = paired_calls(100'000, 5'000, 90'000, 10'000);
  const auto run = kmcts::hip::time_from_traces(p.result, p.reference, p.candidate, kBinary);
  CHECK_FALSE(run.violation);  // under the bound
  CHECK(run.result["counters"]["trace_floor_gap_ns"] == 10000);
  CHECK(run.result["counters"]["samples_raised_to_floor_candidate"] == 12);
  CHECK(run.result["counters"]["samples_raised_to_floor_reference"] == 0);
  for (const json& v : run.result["candidate_samples_ns"]) CHECK(v.get<double>() == 90000.0);
}

TEST_CASE("rocprof timing: a candidate trace that hides a timed call, or floods, is rejected, not an error of the machine") {
  SUBCASE("a timed call with no record") {
    auto records = candidate_records();
    records.erase(records.begin() + 3);  // the second timed call's kernel
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    REQUIRE(run.violation);
    CHECK(run.violation->rule == "trace_tampered");
    CHECK(run.violation->message.find("timed call 2 of the candidate has no record") != std::string::npos);
  }
  SUBCASE("records on the other clock do not move the clock the reference's trace is on") {
    auto records = candidate_records();
    for (int i = 0; i < 50; ++i) {  // the monotonic clock's windows, flooded
      TraceRecord r = kernel("_Z4silu", 0, 0);
      r.start = 3'010'000 + i, r.end = 3'020'000 + i;
      records.push_back(r);
    }
    const auto run = kmcts::hip::time_from_traces(worker_result(), reference_records(), records, kBinary);
    CHECK(run.result["counters"]["trace_clock"] == "boot");
    REQUIRE(run.violation);  // and the flood lies outside its calls on the boot clock
    CHECK(run.violation->rule == "stray_work");
  }
  SUBCASE("more records than the run's windows allow") {
    std::string csv = "\"Kind\",\"Queue_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n";
    for (int i = 0; i < 11; ++i) csv += "\"KERNEL_DISPATCH\",1,\"_Z4silu\",100,200\n";
    CHECK_THROWS_WITH(kmcts::hip::parse_rocprof_csv(csv, TraceRecord::Kind::kernel, "102_kernel_trace.csv", 10),
                      doctest::Contains("102_kernel_trace.csv: row 12: more than 10 records"));
    CHECK(kmcts::hip::max_trace_records(worker_result()) == 7 * 64 + 4096);
  }
}

TEST_CASE("rocprof timing: traces that do not fit the worker's windows are errors naming why") {
  SUBCASE("more timed windows than samples") {
    json r = worker_result();
    r["candidate_samples_ns"] = {30000};
    CHECK_THROWS_WITH(kmcts::hip::time_from_traces(r, reference_records(), candidate_records(), kBinary),
                      doctest::Contains("the windows hold 2 and 2 timed calls where the worker took 2 and 1 samples"));
  }
  SUBCASE("timestamps on neither clock") {
    std::vector<TraceRecord> far = {kernel("_Z3ref", 90000000000, 90000001000)};
    CHECK_THROWS_WITH(kmcts::hip::time_from_traces(worker_result(), far, far, kBinary),
                      doctest::Contains("lies in any of its call windows on the monotonic or the boot clock"));
  }
  SUBCASE("a timed call of the reference with no record") {
    auto records = reference_records();
    records.pop_back();
    CHECK_THROWS_WITH(kmcts::hip::time_from_traces(worker_result(), records, candidate_records(), kBinary),
                      doctest::Contains("timed call 2 of the reference has no record in its window"));
  }
  SUBCASE("no windows") {
    json r = worker_result();
    r.erase("windows");
    CHECK_THROWS_WITH(kmcts::hip::time_from_traces(r, reference_records(), candidate_records(), kBinary),
                      doctest::Contains("no call windows"));
  }
  SUBCASE("no records at all") {
    CHECK_THROWS_WITH(kmcts::hip::time_from_traces(worker_result(), {}, {}, kBinary),
                      doctest::Contains("no record of the reference's trace (0 records)"));
  }
}

TEST_CASE("rocprof timing: a process's trace files are found by pid, the copies' file optional") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "kmcts-test-rocprof-timing";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "102_kernel_trace.csv")
      << "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
         "\"KERNEL_DISPATCH\",\"Agent 2\",1,1,\"_Z4silu\",1,100,200\n";
  auto records = kmcts::hip::read_process_trace(dir, 102);
  REQUIRE(records.size() == 1);
  CHECK(records[0].name == "_Z4silu");
  std::ofstream(dir / "102_memory_copy_trace.csv")
      << "\"Kind\",\"Direction\",\"Stream_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
         "\"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_DEVICE\",1,2,210,260\n";
  records = kmcts::hip::read_process_trace(dir, 102);
  REQUIRE(records.size() == 2);
  CHECK(records[1].kind == TraceRecord::Kind::copy);
  CHECK_THROWS_WITH(kmcts::hip::read_process_trace(dir, 103), doctest::Contains("no kernel trace of process 103"));
  // The folder is writable from inside the candidate's process: a link or a pipe is never followed.
  fs::create_symlink("/dev/zero", dir / "104_kernel_trace.csv");
  CHECK_THROWS_WITH(kmcts::hip::read_process_trace(dir, 104), doctest::Contains("cannot open 104_kernel_trace.csv"));
  REQUIRE(mkfifo((dir / "105_kernel_trace.csv").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(kmcts::hip::read_process_trace(dir, 105), doctest::Contains("is not a plain file"));
  fs::remove_all(dir);
}
