// The Debugger's summary of a failed evaluation (agents/error_summary.hpp, issue 30 item 3), on
// real failures as kmcts recorded them: tests/fixtures/error_logs/corpus.json (g++ and nvcc
// logs, a CPU wrong answer, KernelBench load_inline, Triton and illegal-address failures from
// the H200, a diagnosed one from the H100), each with the source that failed.
#include <doctest/doctest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agents/error_summary.hpp"
#include "core/eval_result.hpp"

using namespace kmcts;

namespace {

const std::string kDir = std::string(KMCTS_SOURCE_DIR) + "/tests/fixtures/error_logs/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Case {
  EvalResult result;
  std::string source;
};

Case corpus_case(const std::string& name) {
  const nlohmann::json corpus = nlohmann::json::parse(read(kDir + "corpus.json"));
  for (const auto& c : corpus.at("cases"))
    if (c.at("name") == name) {
      Case out;
      const auto& r = c.at("result");
      out.result.verdict = verdict_from_string(r.at("verdict").get<std::string>());
      out.result.message = r.at("message");
      out.result.log = r.value("log", "");
      out.result.details = r.value("details", nlohmann::json::object());
      out.source = read(kDir + c.at("source").get<std::string>());
      return out;
    }
  FAIL("no corpus case " << name);
  return {};
}

std::string summary_of(const std::string& name) {
  const Case c = corpus_case(name);
  std::string s = summarize_failure(c.result, c.source);
  if (std::getenv("KMCTS_SHOW_SUMMARIES")) std::cout << "=== " << name << "\n" << s << "\n";
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("error summary: g++ errors of a CPU candidate, as kmcts measure records them") {
  const std::string s = summary_of("cpu_matmul_compile_error");
  CHECK(has(s, "First error: kernel.cpp, line 31: ‘bb’ was not declared in this scope"));
  CHECK(has(s, ">   31 |"));  // the candidate's own line, marked, with its neighbours
  CHECK(has(s, "   30 |"));
  CHECK(has(s, "2 errors in all, of 2 kinds"));
  CHECK(has(s, "kernel.cpp, line 32: expected ‘;’ before ‘}’ token"));
}

TEST_CASE("error summary: nvcc's errors, their kinds and the rest") {
  const std::string s = summary_of("nvcc_errors");
  CHECK(has(s, "First error: bad1.cu, line 6: identifier \"yy\" is undefined"));  // the name it was compiled under
  CHECK(has(s, ">    6 |     out[i] = v / (1.0f + expf(-v)) * yy[i];"));
  CHECK(has(s, "3 errors in all, of 2 kinds: identifier \"…\" is undefined (x2); no instance of function template"));
  CHECK(has(s, "bad1.cu, line 13: identifier \"undefined_helper\" is undefined"));
  CHECK(!has(s, "note"));  // notes are not errors
}

TEST_CASE("error summary: g++ repeats and system-header notes are left out") {
  const Case c = corpus_case("gxx_errors");
  const auto errors = compiler_errors(c.result.log);
  REQUIRE(errors.size() == 4);  // dat, push_back (no match), invalid conversion (printed twice: once), too few arguments
  for (const auto& e : errors) CHECK(e.file == "bad2.cpp");
  CHECK(errors[1].message.rfind("no matching function for call to", 0) == 0);
  CHECK(errors[3].quoted_line.find("int k = matmul(a, b);") != std::string::npos);
}

TEST_CASE("error summary: a KernelBench load_inline build on the H200 points at the candidate's CUDA, not kmcts's host unit") {
  const std::string s = summary_of("h200_kb_nvcc_error");
  // The log's first error is in kb_split.py's generated host unit; the candidate's own come first.
  CHECK(has(s, "First error: cuda.cu, line 8: identifier \"zero\" is undefined"));
  CHECK(has(s, "In the source you wrote, line 11:"));  // the line inside the Python string
  CHECK(has(s, ">   11 |   if (i < n) y[i] = fmaxf(x[i], zero);"));
  CHECK(!has(s, "-MMD"));  // not the compiler command the message starts with
  CHECK(has(s, "cuda.cu, line 13: too few arguments in function call"));
  CHECK(has(s, "2 errors in all"));
  CHECK(!has(s, "kmcts-host"));  // kmcts's generated unit is left out
  CHECK(has(s, "Error building extension 'kmcts_corpus_relu_bad' (a build step failed)"));
  CHECK(s.size() < 3000);
  const Case c = corpus_case("h200_kb_nvcc_error");
  CHECK(c.result.log.size() > 9000);  // what the Debugger used to get cut to 6,000 characters
}

TEST_CASE("error summary: a Triton compile error names the kernel's line and the error") {
  const std::string s = summary_of("h200_kb_triton_error");
  CHECK(has(s, "First error: triton kernel, line 6: NameError('zero is not defined')"));
  CHECK(has(s, ">   15 |     tl.store(y_ptr + offs, tl.maximum(x, zero), mask=mask)"));
}

TEST_CASE("error summary: a wrong answer says where and how") {
  const std::string s = summary_of("cpu_matmul_wrong_answer");
  CHECK(has(s, "Where: output 'C', element 77 (coordinates [0, 77])"));
  CHECK(has(s, "How: expected 46.8902, got 23.4451; max abs error 26.0019, max rel error 0.5 (rule allclose"));
  CHECK(has(s, "Inputs drawn as: A uniform, B uniform"));
  CHECK(has(s, "When: correctness trial 0"));
}

TEST_CASE("error summary: illegal addresses on the H200, in a CUDA worker and in a KernelBench candidate") {
  const std::string cuda = summary_of("h200_cuda_illegal_address");
  CHECK(has(cuda, "CUDA error: cudaDeviceSynchronize: operation not supported on global/shared address space (during correctness)"));
  const std::string kb = summary_of("h200_kb_illegal_address");
  CHECK(has(kb, "Exception: RuntimeError: CUPTI measurement: cudaDeviceSynchronize: operation not supported"));
}

TEST_CASE("error summary: a fatal error from a missing header, and a Python frame of the candidate's") {
  const std::string s = summary_of("kb_cpu_missing_header");
  CHECK(has(s, "First error: main.cpp, line 1: torch/extension.h: No such file or directory"));
  CHECK(has(s, ">    6 | #include <torch/extension.h>"));
}

TEST_CASE("error summary: a screen rejection shows the line it names") {
  EvalResult r;
  r.verdict = Verdict::rejected;
  r.message = "rejected: static screen: filesystem_write (line 3: opens a file for writing)";
  const std::string s = summarize_failure(r, "import torch\nimport os\nopen('/tmp/x', 'w').write('y')\nclass ModelNew:\n  pass\n");
  CHECK(has(s, "rejected: static screen: filesystem_write (line 3: opens a file for writing)"));
  CHECK(has(s, ">    3 | open('/tmp/x', 'w').write('y')"));
}

TEST_CASE("error summary: of several equal lines, the one nearest the compiler's line number") {
  EvalResult r;
  r.verdict = Verdict::compile_error;
  r.message = "compile error";
  r.log = "kernel.cu(5): error: expected a \";\"\n  }\n  ^\n";
  const std::string s = summarize_failure(r, "void a() {\n}\nvoid b() {\n  int x = 1\n}\n");
  CHECK(has(s, "In the source you wrote, line 5:"));
  CHECK(has(s, ">    5 | }"));
}

TEST_CASE("error summary: kinds, excerpts and limits") {
  CHECK(error_kind("identifier \"yy\" is undefined") == "identifier \"…\" is undefined");
  CHECK(error_kind("‘bb’ was not declared in this scope; did you mean ‘b’?") ==
        "\"…\" was not declared in this scope; did you mean \"…\"?");
  CHECK(error_kind("expected 3 arguments, got 2") == "expected N arguments, got N");
  CHECK(source_excerpt("a\nb\nc\nd\ne\n", 1) == ">    1 | a\n     2 | b\n     3 | c\n");
  CHECK(source_excerpt("a\nb\n", 9).empty());
  EvalResult r;
  r.verdict = Verdict::crash;
  r.message = "crash: killed by SIGSEGV";
  r.log = std::string(2000000, 'x') + "\n" + std::string(20000, 'y');  // one line of 2 MB: no regex on it
  const std::string s = summarize_failure(r, "", 1000);
  CHECK(s.size() <= 1000 + 6);
  CHECK(has(s, "crash: killed by SIGSEGV"));
}

TEST_CASE("error summary: compute-sanitizer's diagnosis names the kernel, thread and address, and the line") {
  Case c = corpus_case("h200_cuda_illegal_address");
  c.result.details["fault"] = {{"tool", "compute-sanitizer memcheck"},
                               {"error", "Invalid __global__ write of size 4 bytes"},
                               {"kernel", "silu_mul_oob(const float *, const float *, float *, long long)"},
                               {"at", "/tmp/kmcts-cuda-1/kernel.cu:9"},
                               {"thread", "(0,0,0)"},
                               {"block", "(0,0,0)"},
                               {"address", "Address 0x7f1000000000 is out of bounds"}};
  const std::string s = summarize_failure(c.result, c.source);
  CHECK(has(s, "Fault (compute-sanitizer memcheck): Invalid __global__ write of size 4 bytes\n  in kernel silu_mul_oob("));
  CHECK(has(s, "by thread (0,0,0) of block (0,0,0)\n  Address 0x7f1000000000 is out of bounds"));
  CHECK(has(s, "The line:\n"));
  CHECK(has(s, ">    9 |"));
  // A KernelBench fault as the H100 diagnosed it (compute-sanitizer in the confined harness): its
  // line is of the extension's generated source, not the candidate's, so no excerpt.
  const std::string kb = summary_of("h100_kb_illegal_address_diagnosed");
  CHECK(has(kb, "Fault (compute-sanitizer memcheck): Invalid __global__ write of size 4 bytes\n  in kernel relu_kernel("));
  CHECK(has(kb, "by thread (0,0,0) of block (1211,0,0)"));
  CHECK_FALSE(has(kb, "The line:"));
}
