// Replies as frontier models write them (tests/fixtures/llm_replies, with expectations.json):
// prose around the code, several code blocks of which the last is not the answer, plans as
// headings, JSON or lists with details, visible thinking, a reply cut off at max tokens. The
// parser must take what the expectations say from each.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "agents/llm/mock_server.hpp"
#include "agents/llm/prompt_budget.hpp"
#include "agents/llm/reply_parser.hpp"
#include "agents/roles.hpp"
#include "core/files.hpp"
#include "core/options.hpp"
#include "core/problem.hpp"
#include "hardware/cuda/cuda_evaluator.hpp"
#include "hardware/cuda/devices.hpp"
#include "scratch.hpp"

#include <cstdlib>
#include <fstream>
#include <mutex>

using namespace kmcts;
using namespace kmcts::llm;
using nlohmann::json;

TEST_CASE("llm corpus: every reply of the corpus parses as its expectations say") {
  const std::filesystem::path dir = std::filesystem::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "llm_replies";
  const json expectations = json::parse(read_file(dir / "expectations.json"));
  int checked = 0;
  for (const json& e : expectations["replies"]) {
    const std::string file = e["file"];
    const std::string reply = read_file(dir / file);
    INFO(file);
    if (e.contains("plans")) {
      const auto plans = parse_plans(reply, 8);
      std::vector<std::string> texts;
      for (const auto& p : plans) texts.push_back(p.text);
      CHECK(texts == e["plans"].get<std::vector<std::string>>());
      if (e.contains("priors")) {
        REQUIRE(plans.size() == e["priors"].size());
        for (size_t k = 0; k < plans.size(); ++k) CHECK(plans[k].prior == doctest::Approx(e["priors"][k].get<double>()));
      }
    } else {
      const auto code = extract_code(reply, e.value("kind", ""));
      if (e["code_has"].is_null()) {
        CHECK_FALSE(code.has_value());
      } else {
        REQUIRE(code.has_value());
        CHECK(code->find(e["code_has"].get<std::string>()) != std::string::npos);
        if (e.contains("code_lacks")) CHECK(code->find(e["code_lacks"].get<std::string>()) == std::string::npos);
      }
    }
    ++checked;
  }
  CHECK(checked >= 7);
}

namespace {

// nvcc as the cuda evaluator finds it, or "" where it cannot run (CI).
std::string find_nvcc() {
  const std::string nvcc = cuda::find_cuda_tool("", "nvcc");
  return std::system((nvcc + " --version > /dev/null 2>&1").c_str()) == 0 ? nvcc : "";
}

// Builds `source` with the cuda evaluator's own flags (for sm_90); returns nvcc's exit code and log.
std::pair<int, std::string> nvcc_build(const std::string& nvcc, const std::string& source, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "kernel.cu") << source; }
  std::string command = nvcc;
  for (const std::string& flag : cuda_compiler_flavor("sm_90").base_flags) command.append(" '").append(flag).append("'");
  command.append(" ").append((dir / "kernel.cu").string()).append(" -o ").append((dir / "kernel.so").string());
  command.append(" > ").append((dir / "log").string()).append(" 2>&1");
  const int rc = std::system(command.c_str());
  return {rc, read_file(dir / "log")};
}

// The LLM Debugger asked to repair `broken` (a compile error with `log`) of `problem`, grown from
// `parent`, by the mock answering `reply`: its result, and the prompt the mock got.
struct Repair {
  CodeResult fixed;
  std::string prompt;
};
Repair repair_through_mock(const Problem& problem, const std::string& parent, const std::string& broken,
                           const std::string& message, const std::string& log, const std::string& reply,
                           bool error_summary = true) {
  std::mutex mutex;
  std::string prompt;
  llm::MockLlmServer server(0, [&](const std::string&, const std::string&, const std::string& user) {
    std::lock_guard lock(mutex);
    prompt = user;
    return reply;
  });
  Config c;
  c.set_value("agents.llm.base_url", server.base_url(), "test");
  c.set_value("agents.llm.model", std::string("gpt-4.1"), "test");
  c.set_value("agents.feedback.error_summary", error_summary, "test");
  DebugContext d;
  d.problem = &problem;
  d.parent.source_text = std::make_shared<const std::string>(parent);
  d.failed.source_text = std::make_shared<const std::string>(broken);
  EvalResult failed;
  failed.verdict = Verdict::compile_error;
  failed.message = message;
  failed.log = log;
  d.failed.result = std::make_shared<const EvalResult>(failed);
  Repair out;
  out.fixed = DebuggerRegistry::instance().create("debugger", "llm", c)->repair(d);
  std::lock_guard lock(mutex);
  out.prompt.swap(prompt);
  return out;
}

}  // namespace

TEST_CASE("llm corpus: a kernel nvcc refused reaches the Debugger with nvcc's own error, and its repair builds") {
  const std::filesystem::path dir = std::filesystem::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "llm_replies";
  const std::string broken = *extract_code(read_file(dir / "cuda_coder_broken.md"));
  const std::string nvcc_log = read_file(dir / "cuda_nvcc_error.log");
  const std::string fix_reply = read_file(dir / "cuda_debugger_fix.md");
  const Problem problem = load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "problems" / "cuda" / "silu_mul");
  const auto [fixed, prompt] = repair_through_mock(problem, "// the seed", broken, "nvcc failed (exit 2)", nvcc_log, fix_reply);
  REQUIRE_MESSAGE(fixed.ok, fixed.error);
  // The prompt sent: the summary of nvcc's errors (agents.feedback.error_summary), the first one
  // with its line of the failed source marked; off, nvcc's own log.
  INFO(prompt);
  CHECK(prompt.find("First error: kernel.cu, line 10: no operator \"-\" matches these operands") != std::string::npos);
  CHECK(prompt.find(">   10 |") != std::string::npos);
  CHECK(prompt.find("y[i] = a / (1.0f + __expf(-a)) * b;") != std::string::npos);  // the failed source
  const auto raw = repair_through_mock(problem, "// the seed", broken, "nvcc failed (exit 2)", nvcc_log, fix_reply, false);
  CHECK(raw.prompt.find("kernel.cu(10): error: no operator \"-\" matches these operands") != std::string::npos);
  CHECK(raw.prompt.find("First error:") == std::string::npos);
  CHECK(fixed.source.find("make_float4") != std::string::npos);
  // Where nvcc is (not in CI), the real thing: the broken kernel fails as recorded, the repair builds.
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) return;
  const auto scratch = kmcts::test::fresh_dir("llm-corpus-nvcc");
  const auto [broken_rc, broken_log] = nvcc_build(nvcc, broken, scratch / "broken");
  CHECK(broken_rc != 0);
  CHECK(broken_log.find("error: no operator \"-\" matches these operands") != std::string::npos);
  const auto [fixed_rc, fixed_log] = nvcc_build(nvcc, fixed.source, scratch / "fixed");
  CHECK_MESSAGE(fixed_rc == 0, fixed_log);
}

namespace {

// The CUDA source a KernelBench ModelNew hands load_inline: its CUDA_SOURCE = r"""...""" string.
std::string cuda_source_of(const std::string& model_new) {
  const std::string open = "CUDA_SOURCE = r\"\"\"";
  const size_t start = model_new.find(open);
  REQUIRE(start != std::string::npos);
  const size_t end = model_new.find("\"\"\"", start + open.size());
  REQUIRE(end != std::string::npos);
  return model_new.substr(start + open.size(), end - start - open.size());
}

}  // namespace

TEST_CASE("llm corpus: a KernelBench ModelNew whose load_inline source nvcc refused, its Debugger repair, as on the H200") {
  const std::filesystem::path dir = std::filesystem::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "llm_replies";
  const std::string broken = *extract_code(read_file(dir / "kb_cuda_coder_broken.md"), "kernelbench");
  const std::string build_log = read_file(dir / "kb_cuda_nvcc_error.log");  // recorded on the H200
  const std::string fix_reply = read_file(dir / "kb_cuda_debugger_fix.md");
  const Problem problem = load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "kernelbench" /
                                       "llm" / "level1" / "88_tanh_gelu.py");
  const auto [fixed, prompt] = repair_through_mock(problem, problem.seed_source, broken,
                                                   "compile error: RuntimeError: Error building extension 'gelu_float4'",
                                                   build_log, fix_reply);
  REQUIRE_MESSAGE(fixed.ok, fixed.error);
  CHECK(prompt.find("who repairs PyTorch models") != std::string::npos);  // the KernelBench debugger's prompt
  INFO(prompt);
  CHECK(prompt.find("First error: cuda.cu, line 14: no operator \"*\" matches these operands") != std::string::npos);
  CHECK(prompt.find("In the source you wrote, line ") != std::string::npos);  // the line inside CUDA_SOURCE
  CHECK(prompt.find("const float4 inner = k0 * (v + k1 * v * v * v);") != std::string::npos);  // the failed source
  CHECK(fixed.source.find("class ModelNew") != std::string::npos);
  CHECK(fixed.source.find("make_float4(gelu1(v.x), gelu1(v.y), gelu1(v.z), gelu1(v.w))") != std::string::npos);
  // Where nvcc is (not in CI), the real thing for every ModelNew of the session: the broken CUDA
  // source fails as on the H200, the repair, the cheat and the fast kernel build.
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) return;
  const auto scratch = kmcts::test::fresh_dir("llm-corpus-kb-nvcc");
  const auto [broken_rc, broken_log] = nvcc_build(nvcc, cuda_source_of(broken), scratch / "broken");
  CHECK(broken_rc != 0);
  CHECK(broken_log.find("error: no operator \"*\" matches these operands") != std::string::npos);
  CHECK(broken_log.find("no suitable conversion function from \"const float4\" to \"float\" exists") != std::string::npos);
  for (const char* file : {"kb_cuda_debugger_fix.md", "kb_cuda_coder_cheat.md", "kb_cuda_coder_fast.md"}) {
    INFO(file);
    const std::string model_new = *extract_code(read_file(dir / file), "kernelbench");
    const auto [rc, log] = nvcc_build(nvcc, cuda_source_of(model_new), scratch / file);
    CHECK_MESSAGE(rc == 0, log);
  }
}

TEST_CASE("llm corpus: the prompt sent keeps each section within its cap, and the call records its token estimate") {
  const std::filesystem::path dir = std::filesystem::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "llm_replies";
  std::string broken = *extract_code(read_file(dir / "cuda_coder_broken.md"));
  for (int i = 0; i < 3000; ++i) broken += "// a long comment line the model left behind, number " + std::to_string(i) + "\n";
  REQUIRE(broken.size() > 150000);
  const Problem problem = load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "problems" / "cuda" / "silu_mul");
  const auto [fixed, prompt] = repair_through_mock(problem, "// the seed", broken, "nvcc failed (exit 2)",
                                                   read_file(dir / "cuda_nvcc_error.log"), read_file(dir / "cuda_debugger_fix.md"));
  REQUIRE_MESSAGE(fixed.ok, fixed.error);
  CHECK(prompt.size() < 80000);  // the failed source cut to its 48,000-character cap
  CHECK(prompt.find("lines (") != std::string::npos);
  CHECK(prompt.find("y[i] = a / (1.0f + __expf(-a)) * b;") != std::string::npos);  // its head kept
  CHECK(prompt.find("number 2999") != std::string::npos);                         // and its tail
  CHECK(prompt.find("number 1500\n") == std::string::npos);
  REQUIRE(fixed.usage.llm_calls.size() == 1);
  const size_t estimate = fixed.usage.llm_calls[0].value("prompt_tokens_estimate", size_t{0});
  CHECK(estimate >= llm::estimate_tokens(prompt));
  CHECK(estimate < prompt.size() / 2);
}
