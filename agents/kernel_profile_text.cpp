#include "agents/kernel_profile_text.hpp"

#include <fmt/format.h>

#include "core/eval_result.hpp"
#include "core/options.hpp"

KMCTS_OPTION("agents.feedback.profile", Bool, true, std::nullopt, std::nullopt,
             "The Planner and Coder see the parent's per-kernel profile where the evaluator recorded one "
             "(details.kernel_profile: each kernel's share of the time, launches, time per launch, grid, block, "
             "registers and shared memory, from the CUPTI records of the timed calls; the Planner also sees the "
             "reference's kernels). false: prompts without it (for ablations).")

namespace kmcts {
namespace {

using nlohmann::json;

std::string us(double ns) { return ns >= 1e5 ? fmt::format("{:.0f} us", ns / 1000) : fmt::format("{:.3g} us", ns / 1000); }

std::string dims(const json& d) {
  if (!d.is_array() || d.size() != 3) return "?";
  const int y = d[1].get<int>(), z = d[2].get<int>();
  if (y == 1 && z == 1) return std::to_string(d[0].get<int>());
  return fmt::format("{}x{}x{}", d[0].get<int>(), y, z);
}

// "1 launch", "2.5 launches".
std::string launches(double n) { return fmt::format("{:.3g} launch{}", n, n == 1 ? "" : "es"); }

std::string bytes(int b) { return b >= 1024 && b % 1024 == 0 ? fmt::format("{} KiB", b / 1024) : fmt::format("{} B", b); }

std::string side_text(const json& side) {
  std::string out = fmt::format("{} per call (median), {} per call", us(side.value("median_ns", 0.0)),
                                launches(side.value("launches_per_call", 0.0)));
  if (side.contains("achieved")) {
    const json& a = side["achieved"];
    if (a.contains("bytes_fraction"))
      out += fmt::format("; {:.0f}% of the GPU's peak memory bandwidth", 100 * a["bytes_fraction"].get<double>());
    if (a.contains("flops_fraction")) out += fmt::format("; {:.0f}% of its peak FP32 FLOP/s", 100 * a["flops_fraction"].get<double>());
    if (a.contains("bytes_fraction") || a.contains("flops_fraction")) out += " (the problem's bytes and FLOPs per call)";
  }
  out += "\n";
  for (const json& k : side.value("kernels", json::array())) {
    out += fmt::format("- {:.0f}% {}: {} per call, {} each; grid {}, block {}, {} registers, {} shared",
                       100 * k.value("share", 0.0), k.value("name", std::string("?")), launches(k.value("calls_per_call", 0.0)),
                       us(k.value("mean_ns", 0.0)), dims(k.value("grid", json())), dims(k.value("block", json())),
                       k.value("registers", 0), bytes(k.value("smem_static", 0) + k.value("smem_dynamic", 0)));
    if (const int local = k.value("local_bytes", 0); local > 0) out += fmt::format(", {} local per thread (spills or local arrays)", bytes(local));
    out += "\n";
  }
  const json others = side.value("others", json::object());
  if (others.value("calls_per_call", 0.0) > 0)
    out += fmt::format("- {:.0f}% in {} per call of other kernels\n", 100 * others.value("share", 0.0),
                       launches(others.value("calls_per_call", 0.0)));
  return out;
}

bool has_kernels(const json& side) { return side.is_object() && !side.value("kernels", json::array()).empty(); }

}  // namespace

ProfileText ProfileText::from_config(const Config& c) { return {c.get_bool("agents.feedback.profile")}; }

std::string render_kernel_profile(const json& profile, bool with_reference) {
  if (!profile.is_object() || !has_kernels(profile.value("candidate", json()))) return "";
  const json& cand = profile["candidate"];
  std::string out = fmt::format("\n\n## Where its time goes (per kernel, from the GPU's records of {} timed calls)\n",
                                cand.value("samples", 0));
  out += side_text(cand);
  if (with_reference && has_kernels(profile.value("reference", json())))
    out += "The reference, measured alongside: " + side_text(profile["reference"]);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string ProfileText::section(const NodeView& node, bool with_reference) const {
  if (!enabled || !node.result || !node.result->ok() || !node.result->details.is_object()) return "";
  const json& d = node.result->details;
  return d.contains("kernel_profile") ? render_kernel_profile(d["kernel_profile"], with_reference) : "";
}

}  // namespace kmcts
