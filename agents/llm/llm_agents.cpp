// The LLM Planner, Coder and Debugger (registered as "llm"): a prompt template filled from the
// search's context, one chat call, the reply parsed. A reply without a usable plan list or
// code block is a failed expansion with the reason recorded, never a crash.
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "agents/error_summary.hpp"
#include "agents/kernel_profile_text.hpp"
#include "agents/llm/prompt.hpp"
#include "agents/llm/prompt_budget.hpp"
#include "agents/llm/reply_parser.hpp"
#include "agents/llm/session.hpp"
#include "agents/roles.hpp"

KMCTS_OPTION("agents.llm.hardware", String, "", std::nullopt, std::nullopt,
             "Hardware facts for the Planner's prompt (e.g. \"H200: 132 SMs, 4.8 TB/s HBM3e, 228 KB shared memory per SM\").")

KMCTS_OPTION("agents.feedback.error_summary", Bool, true, std::nullopt, std::nullopt,
             "The Debugger reads a summary of the failure (agents/error_summary.hpp): the first compiler error with "
             "the failed source's lines around it, the kinds of error and how many more; where and how a wrong answer "
             "differs; a crash's error and the candidate's own traceback frame. false: the raw log, cut to its first "
             "and last 3,000 characters (for ablations).")

KMCTS_OPTION("agents.feedback.ncu", Bool, true, std::nullopt, std::nullopt,
             "The Planner sees the hardware counters Nsight Compute measured for a kernel "
             "(details.hw_counters, with evaluator.cuda.profile=true). false: prompts without them (for ablations).")

KMCTS_CHOICE_OPTION("agents.llm.kernelbench_backend", "cuda", ({"cuda", "triton", "hip"}),
                    "KernelBench prompts: the kernels ModelNew is to be written with: cuda (CUDA C++ through "
                    "torch.utils.cpp_extension.load_inline), triton (@triton.jit kernels) or hip (HIP C++ for AMD "
                    "GPUs through load_inline with hipcc, on a ROCm build of torch, as KernelBench's hip backend asks)")

namespace kmcts::llm {
namespace {

const std::set<std::string> kCommon = {"kind", "problem_name", "problem_description", "reference_source",
                                       "backend_name", "backend"};

// What the KernelBench prompts say about the kernel language ({{backend_name}}, {{backend}}).
struct Backend {
  std::string name, how;
  explicit Backend(const Config& c) {
    const std::string backend = c.get_string("agents.llm.kernelbench_backend");
    if (backend == "triton") {
      name = "Triton";
      how = "Implement the computation in your own Triton kernels (`import triton`, `import triton.language as tl`, "
            "`@triton.jit` functions launched from forward with a grid you compute).";
    } else if (backend == "hip") {
      // KernelBench's own hip example (src/kernelbench/prompts/model_new_ex_add_hip.py): the
      // kernels and the torch functions in one C++ source built by hipcc as the C++ compiler.
      name = "HIP";
      how = "Implement the computation in your own HIP kernels for an AMD GPU, compiled with "
            "`torch.utils.cpp_extension.load_inline` at import on a ROCm build of PyTorch: set "
            "`os.environ[\"CXX\"] = \"hipcc\"` before the call, and put the kernels (`#include <hip/hip_runtime.h>`, "
            "`__global__` functions) and the `torch::Tensor` functions that check their inputs and launch them in "
            "`cpp_sources`, listed in `functions`. AMD's data-centre GPUs run 64-lane wavefronts (`warpSize` is 64): "
            "write reductions and shuffles for 64 lanes, not 32. Launch on PyTorch's current stream "
            "(`c10::hip::getCurrentHIPStream()`, `#include <c10/hip/HIPStream.h>`) and nowhere else.";
    } else {
      name = "CUDA";
      // A CUDA source that names nothing of torch builds in about a second of nvcc (kb_nvcc.py
      // leaves out the torch include load_inline adds), and the C++ binding, which holds the
      // torch code, is compiled with a precompiled torch/extension.h. One that names torch is
      // split by kb_split.py (9-14 s on the H200) unless its kernels name torch, and then costs
      // nvcc 55-60 s (bench/results/kernelbench-builds.md): the shape asked for is the sure one.
      how = "Implement the computation in your own CUDA kernels, compiled with "
            "`torch.utils.cpp_extension.load_inline` (CUDA source as a string) at import. Keep torch out of the "
            "CUDA source, so it builds in seconds: `cuda_sources` holds the kernels and an `extern \"C\"` launcher "
            "over raw pointers, sizes and a `cudaStream_t`, with no torch header; `cpp_sources` holds the "
            "`torch::Tensor` functions that check their inputs and call the launcher on "
            "`c10::cuda::getCurrentCUDAStream()` (`#include <c10/cuda/CUDAStream.h>`).";
    }
  }
};

std::set<std::string> with_common(std::set<std::string> names) {
  names.insert(kCommon.begin(), kCommon.end());
  return names;
}

// A role's templates: PROMPT_DIR/<role>.md, and PROMPT_DIR/<kind>/<role>.md for problem kinds
// that need their own (kernelbench: a Python file with ModelNew instead of a kernel). All are
// read when the agent is built, so a bad template fails before the search starts.
class RoleTemplates {
 public:
  RoleTemplates(const Config& c, const std::string& role, const std::set<std::string>& names,
                const std::set<std::string>& required)
      : fallback_(PromptTemplate::load(dir_of(c) / (role + ".md"), with_common(names), required)), caps_(section_caps(c)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir_of(c)))
      if (entry.is_directory() && std::filesystem::exists(entry.path() / (role + ".md")))
        by_kind_.emplace(entry.path().filename().string(),
                         PromptTemplate::load(entry.path() / (role + ".md"), with_common(names), required));
  }
  const PromptTemplate& for_kind(const std::string& kind) const {
    auto it = by_kind_.find(kind);
    return it == by_kind_.end() ? fallback_ : it->second;
  }
  /// The prompt for a problem of `kind`, every section within its cap (prompt_budget.hpp).
  std::string render(const std::string& kind, std::map<std::string, std::string> values) const {
    cap_sections(values, caps_);
    return for_kind(kind).render(values);
  }

 private:
  static std::filesystem::path dir_of(const Config& c) {
    std::string dir = c.get_string("agents.llm.prompt_dir");
    return dir.empty() ? default_prompt_dir() : std::filesystem::path(dir);
  }
  PromptTemplate fallback_;
  std::map<std::string, PromptTemplate> by_kind_;
  std::map<std::string, SectionCap> caps_;
};

std::map<std::string, std::string> common_values(const Problem& p, const Backend& b) {
  return {{"kind", p.kind}, {"problem_name", p.name}, {"problem_description", p.description},
          {"reference_source", p.reference_source}, {"backend_name", b.name}, {"backend", b.how}};
}

std::string describe_result(const NodeView& n, bool counters) {
  if (!n.result) return "not measured yet";
  const EvalResult& r = *n.result;
  if (r.ok()) {
    std::string out = fmt::format("correct; median {:.1f} us, {:.3f}x the reference's speed", r.candidate.median_ns / 1000, r.speedup);
    const nlohmann::json& d = r.details;
    if (!d.is_object()) return out;
    // Profile metrics, when the evaluator measured some (details.metrics: name -> value).
    if (d.contains("metrics") && d["metrics"].is_object())
      for (const auto& [name, value] : d["metrics"].items()) out += fmt::format("; {} {}", name, value.dump());
    // The CUDA evaluator's roofline fraction and hardware counters (evaluator.cuda.profile).
    if (d.contains("roofline") && d["roofline"].contains("fraction"))
      out += fmt::format("; {:.0f}% of the roofline (the floor its bytes and FLOPs allow)",
                         100 * d["roofline"]["fraction"].get<double>());
    // Nsight Compute's counters (evaluator.cuda.profile) with the verdicts derived from them.
    if (counters && d.contains("hw_counters") && d["hw_counters"].contains("kernels")) {
      for (const auto& k : d["hw_counters"]["kernels"]) {
        out += fmt::format("; kernel {}:", k.value("name", std::string("?")));
        if (k.contains("bottleneck")) out += " " + k.value("bottleneck", std::string()) + "; counters:";
        for (const auto& [name, value] : k.items())
          if (name != "name" && name != "bottleneck" && name != "bottleneck_kind")  // 3 digits: 83.8, not 83.80333333333333
            out += value.is_number_float() ? fmt::format(" {} {:.3g}", name, value.get<double>())
                                           : fmt::format(" {} {}", name, value.dump());
      }
      if (d["hw_counters"].contains("roofline_position"))
        out += "; " + d["hw_counters"].value("roofline_position", std::string());
    }
    return out;
  }
  return fmt::format("{}: {}", to_string(r.verdict), r.message);
}

// One line of the Planner's "already tried" list: the plan, and what came of it.
std::string describe_tried(const NodeView& t, bool counters) {
  const std::string plan = !t.edge_plan.empty()          ? t.edge_plan
                           : !t.plan_history().empty() ? t.plan_history().back()
                                                       : std::string("(unnamed)");
  if (t.unchanged) return fmt::format("- {} -> no change: the code written for it was this kernel itself\n", plan);
  if (t.reached_known)
    return fmt::format("- {} -> the same code as kernel #{}, found before: {}\n", plan, t.id, describe_result(t, counters));
  return fmt::format("- {} -> {}\n", plan, describe_result(t, counters));
}

std::string describe_history(const NodeView& n) {
  const std::vector<std::string>& history = n.plan_history();
  if (history.empty()) return "the seed kernel";
  std::string out;
  for (size_t i = 0; i < history.size(); ++i) out += fmt::format("{}{}. {}", i ? "; " : "", i + 1, history[i]);
  return out;
}

ChatRequest request_for(const RoleSettings& r, std::string prompt, uint64_t sample) {
  ChatRequest q;
  q.model = r.model;
  q.system = r.system;
  q.messages = {{"user", std::move(prompt)}};
  q.temperature = r.temperature;
  q.top_p = r.top_p;
  q.max_tokens = r.max_tokens;
  q.reasoning_effort = r.reasoning_effort;
  q.thinking_budget = r.thinking_budget;
  q.sample = sample;
  return q;
}

// What the Debugger reads of a failure: the summary (agents.feedback.error_summary), or the
// message and both ends of a long log (compilers put the first error first, but the line that
// matters for a crash or a wrong answer is usually near the end).
std::string error_text(const EvalResult& r, const std::string& source, bool summarize) {
  if (summarize) return summarize_failure(r, source);
  std::string log = r.log;
  if (log.size() > 6000) log = log.substr(0, 3000) + "\n[...]\n" + log.substr(log.size() - 3000);
  return r.message + (log.empty() ? "" : "\n\n" + log);
}

class LlmPlanner final : public Planner {
 public:
  explicit LlmPlanner(const Config& c)
      : session_(Session::for_config(c, "planner")),
        role_(session_->role("planner", c)),
        templates_(c, "planner", {"hardware", "parent_id", "parent_source", "parent_result", "profile",
                                               "parent_history", "best_summary", "tried", "memory", "count"},
                   {"parent_source", "count"}),
        hardware_(c.get_string("agents.llm.hardware")),
        backend_(c),
        profile_(ProfileText::from_config(c)),
        ncu_(c.get_bool("agents.feedback.ncu")) {}

  PlanResult propose(const PlanContext& ctx) override {
    PlanResult result;
    auto values = common_values(*ctx.problem, backend_);
    values["hardware"] = hardware_.empty() ? "not described (set agents.llm.hardware)" : hardware_;
    values["parent_id"] = std::to_string(ctx.parent.id);
    values["parent_source"] = ctx.parent.source();
    values["parent_result"] = describe_result(ctx.parent, ncu_);
    values["profile"] = profile_.section(ctx.parent, true);  // "" without one: the prompt is as before
    values["parent_history"] = describe_history(ctx.parent);
    values["best_summary"] = ctx.best ? fmt::format("node {} ({}), reached by: {}", ctx.best->id, describe_result(*ctx.best, ncu_),
                                                    describe_history(*ctx.best))
                                      : "this kernel is the best so far";
    std::string tried;
    for (const auto& t : ctx.tried) tried += describe_tried(t, ncu_);
    values["tried"] = tried.empty() ? "none yet" : tried;
    // A section of its own only when the run took lines from the archive: without them the
    // prompt is the one recorded cassettes hold.
    values["memory"] = ctx.memory && !ctx.memory->empty()
                           ? "\n\n## Improvements found before on similar problems (from kmcts's optimisation archive: "
                             "plan, and what it gained over its parent)\n" + *ctx.memory
                           : "";
    values["count"] = std::to_string(ctx.count);
    CounterRng rng = ctx.rng;
    try {
      ChatReply reply = session_->chat(request_for(role_, templates_.render(ctx.problem->kind, values), rng.next()),
                                       "planner", result.usage);
      for (const auto& p : parse_plans(reply.text, ctx.count)) {
        Plan plan;
        plan.text = p.text;
        plan.prior = p.prior;
        plan.data = {{"source", "llm"}, {"model", role_.model}};
        result.plans.push_back(std::move(plan));
      }
      if (result.plans.empty()) result.error = "llm planner: the reply has no list of plans: " + reply_excerpt(reply.text);
    } catch (const LlmFailure& e) {
      result.error = std::string("llm planner: ") + e.what();
    }
    return result;
  }

 private:
  std::shared_ptr<Session> session_;
  RoleSettings role_;
  RoleTemplates templates_;
  std::string hardware_;
  Backend backend_;
  ProfileText profile_;
  bool ncu_;  // agents.feedback.ncu
};

class LlmCoder final : public Coder {
 public:
  explicit LlmCoder(const Config& c)
      : session_(Session::for_config(c, "coder")),
        role_(session_->role("coder", c)),
        templates_(c, "coder", {"parent_source", "profile", "plan"}, {"parent_source", "plan"}),
        backend_(c),
        profile_(ProfileText::from_config(c)) {}

  CodeResult write(const Problem& problem, const NodeView& parent, const Plan& plan) override {
    auto values = common_values(problem, backend_);
    values["parent_source"] = parent.source();
    values["profile"] = profile_.section(parent, false);
    values["plan"] = plan.text;
    // The same plan for the same parent is the same question: sample 0 (a repeat merges
    // into the existing node as a transposition).
    return code_from(session_, role_, templates_.render(problem.kind, values), 0, "llm coder", problem.kind);
  }

  static CodeResult code_from(const std::shared_ptr<Session>& session, const RoleSettings& role, std::string prompt,
                              uint64_t sample, const char* who, const std::string& kind) {
    CodeResult out;
    try {
      ChatReply reply = session->chat(request_for(role, std::move(prompt), sample), role.role, out.usage);
      if (auto code = extract_code(reply.text, kind)) {
        out.ok = true;
        out.source = *code;
        out.meta = {{"agent", "llm"}, {"model", role.model}};
      } else {
        out.error = fmt::format("{}: the reply has no complete {} code block (finish reason '{}'): {}", who,
                                kind == "kernelbench" ? "Python" : "C/C++/CUDA", reply.finish_reason,
                                reply_excerpt(reply.text));
      }
    } catch (const LlmFailure& e) {
      out.error = fmt::format("{}: {}", who, e.what());
    }
    return out;
  }

 private:
  std::shared_ptr<Session> session_;
  RoleSettings role_;
  RoleTemplates templates_;
  Backend backend_;
  ProfileText profile_;
};

class LlmDebugger final : public Debugger {
 public:
  explicit LlmDebugger(const Config& c)
      : session_(Session::for_config(c, "debugger")),
        role_(session_->role("debugger", c)),
        templates_(c, "debugger", {"parent_source", "failed_source", "verdict", "error", "attempt"},
                   {"failed_source", "error"}),
        backend_(c),
        summarize_(c.get_bool("agents.feedback.error_summary")) {}

  CodeResult repair(const DebugContext& ctx) override {
    auto values = common_values(*ctx.problem, backend_);
    values["parent_source"] = ctx.parent.source();
    values["failed_source"] = ctx.failed.source();
    values["verdict"] = ctx.failed.result ? to_string(ctx.failed.result->verdict) : "unknown";
    values["error"] = ctx.failed.result ? error_text(*ctx.failed.result, ctx.failed.source(), summarize_) : "(no result recorded)";
    values["attempt"] = std::to_string(ctx.attempt + 1);
    CounterRng rng = ctx.rng;
    return LlmCoder::code_from(session_, role_, templates_.render(ctx.problem->kind, values), rng.next(),
                               "llm debugger", ctx.problem->kind);
  }

 private:
  std::shared_ptr<Session> session_;
  RoleSettings role_;
  RoleTemplates templates_;
  Backend backend_;
  bool summarize_;
};

}  // namespace
}  // namespace kmcts::llm

KMCTS_REGISTER(kmcts::PlannerRegistry, "llm", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Planner> {
  return std::make_unique<kmcts::llm::LlmPlanner>(c);
})
KMCTS_REGISTER(kmcts::CoderRegistry, "llm", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Coder> {
  return std::make_unique<kmcts::llm::LlmCoder>(c);
})
KMCTS_REGISTER(kmcts::DebuggerRegistry, "llm", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Debugger> {
  return std::make_unique<kmcts::llm::LlmDebugger>(c);
})
