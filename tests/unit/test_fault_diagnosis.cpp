// Which kernel faulted (issue 30, item 3), without a GPU: which crashes are diagnosed, memcheck's
// report read into details.fault, and the line the message and the Debugger get.
#include <doctest/doctest.h>

#include "core/files.hpp"
#include "hardware/cuda/fault_diagnosis.hpp"

using namespace kmcts;
using namespace kmcts::cuda;
using nlohmann::json;

namespace {
EvalResult crash(const std::string& message, json details = json::object()) {
  EvalResult r;
  r.verdict = Verdict::crash;
  r.message = message;
  r.details = std::move(details);
  return r;
}
}  // namespace

TEST_CASE("fault diagnosis: memory faults on the GPU are diagnosed, other failures are not") {
  FaultDiagnosis d;
  // As the H200 reported them (tests/fixtures/error_logs/corpus.json).
  CHECK(d.wanted(crash("crash: CUDA error in the candidate (correctness): cudaDeviceSynchronize: operation not "
                       "supported on global/shared address space")));
  CHECK(d.wanted(crash("crash: RuntimeError: CUDA error: an illegal memory access was encountered")));
  CHECK(d.wanted(crash("crash: the worker died", {{"cuda_error", "cudaMemcpy: misaligned address"}})));
  CHECK_FALSE(d.wanted(crash("crash: the kernel host died with SIGSEGV")));
  CHECK_FALSE(d.wanted(crash("crash: the worker died", {{"cuda_error", 700}})));  // not text: read as none
  CHECK_FALSE(d.wanted(crash("crash: RuntimeError: CUDA out of memory")));
  EvalResult wrong = crash("wrong answer: an illegal memory access was encountered");
  wrong.verdict = Verdict::wrong_answer;
  CHECK_FALSE(d.wanted(wrong));
  d.enabled = false;
  CHECK_FALSE(d.wanted(crash("crash: an illegal memory access was encountered")));
}

TEST_CASE("fault diagnosis: memcheck's first error gives the kernel, thread, block and address") {
  // Captured on an H100 (tests/fixtures/error_logs/capture/capture.sh, 2026-12-06): memcheck of
  // CUDA 13 says "Access to ADDR is out of bounds"; the process then aborts in torch's allocator.
  const std::string out = read_file(std::string(KMCTS_SOURCE_DIR) + "/tests/fixtures/kernelbench/kb_relu_oob_sanitizer.txt");
  const json f = parse_sanitizer_output(out);
  REQUIRE(f.is_object());
  CHECK(f["error"] == "Invalid __global__ write of size 4 bytes");
  CHECK(f["kernel"] == "relu_kernel(const float *, float *, long)");
  CHECK(f["at"] == "+0x130");
  CHECK(f["thread"] == "(0,0,0)");
  CHECK(f["block"] == "(44,0,0)");
  CHECK(f["address"] == "Access to 0x7f8754000000 is out of bounds and is 20,971,009 bytes after the nearest allocation "
                       "at 0x7f8752c00000 of size 512 bytes");
  CHECK(fault_line(f).rfind("Invalid __global__ write of size 4 bytes in relu_kernel(const float *, float *, long) at "
                            "+0x130, thread (0,0,0) of block (44,0,0): Access to 0x7f8754000000 is out of bounds",
                            0) == 0);
  SUBCASE("older memcheck's wording") {
    const json g = parse_sanitizer_output(
        "========= Invalid __global__ write of size 4 bytes\n"
        "=========     at relu_kernel(const float *, float *, long)+0x90\n"
        "=========     by thread (1,0,0) in block (0,0,0)\n"
        "=========     Address 0x7f2a4c040000 is out of bounds\n"
        "=========     and is 262,145 bytes after the nearest allocation at 0x7f2a4c000000 of size 16 bytes\n");
    CHECK(g["address"] == "Address 0x7f2a4c040000 is out of bounds and is 262,145 bytes after the nearest allocation at "
                         "0x7f2a4c000000 of size 16 bytes");
  }

  SUBCASE("a source line where the kernel was built with line information") {
    const json g = parse_sanitizer_output(
        "========= Invalid __global__ read of size 16 bytes\n"
        "=========     at silu_mul(const float *, const float *, float *, long long)+0x1f0 in /tmp/k/kernel.cu:14\n"
        "=========     by thread (255,0,0) in block (4095,0,0)\n"
        "=========     Address 0x7f0000000004 is misaligned\n");
    CHECK(g["kernel"] == "silu_mul(const float *, const float *, float *, long long)");
    CHECK(g["at"] == "/tmp/k/kernel.cu:14");
    CHECK(g["address"] == "Address 0x7f0000000004 is misaligned");
  }
  SUBCASE("an API error alone names no kernel") {
    const json g = parse_sanitizer_output(
        "========= Program hit cudaErrorIllegalAddress (error 700) due to \"an illegal memory access was "
        "encountered\" on CUDA API call to cudaDeviceSynchronize.\n========= ERROR SUMMARY: 1 error\n");
    CHECK(g["api_error"] == true);
    CHECK_FALSE(g.contains("kernel"));
  }
  SUBCASE("no report, and the candidate's own lines bounded") {
    CHECK(parse_sanitizer_output("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n").is_null());
    const json g = parse_sanitizer_output("========= Invalid __global__ write of size 4 bytes\n=========     at " +
                                          std::string(5000, 'k') + "\n");
    CHECK(g["kernel"].get<std::string>().size() == 300);
    // A line of a megabyte (std::regex recurses per character) is cut before it is matched.
    const json h = parse_sanitizer_output("========= Invalid __global__ write of size 4 bytes\n=========     at " +
                                          std::string(1u << 20, 'k') + "+0x10\n");
    CHECK(h["kernel"].get<std::string>().size() == 300);
  }
}

TEST_CASE("fault diagnosis: the outcome lands in the result, and a run that says nothing is recorded as such") {
  EvalResult r = crash("crash: RuntimeError: CUDA error: unspecified launch failure");
  add_fault(r, read_file(std::string(KMCTS_SOURCE_DIR) + "/tests/fixtures/kernelbench/kb_relu_oob_sanitizer.txt"), true, "", 12.5);
  CHECK(r.details["diagnosis_seconds"] == 12.5);
  CHECK(r.details["fault"]["kernel"] == "relu_kernel(const float *, float *, long)");
  CHECK(r.message.find("; compute-sanitizer: Invalid __global__ write of size 4 bytes in relu_kernel") != std::string::npos);

  EvalResult quiet = crash("crash: an illegal memory access was encountered");
  add_fault(quiet, "========= ERROR SUMMARY: 0 errors\n", true, "", 3);
  CHECK(quiet.details.contains("fault_error"));
  CHECK(quiet.message == "crash: an illegal memory access was encountered");
  EvalResult missing = crash("crash: an illegal memory access was encountered");
  add_fault(missing, "", false, "execve: No such file or directory", 0);
  CHECK(missing.details["fault_error"] == "cannot run compute-sanitizer: execve: No such file or directory");
}
