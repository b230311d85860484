#pragma once
// The per-kernel profile (EvalResult::details["kernel_profile"], hardware/kernel_profile.hpp)
// as the Planner and Coder read it: a short section per side, one line per kernel by time.
// Empty when the node has no profile (CPU and synthetic evaluators, failed variants) or when
// agents.feedback.profile is off, so prompts without one are as before.
#include <string>

#include "agents/roles.hpp"
#include "core/options.hpp"

namespace kmcts {

struct ProfileText {
  bool enabled = true;  // agents.feedback.profile
  static ProfileText from_config(const Config& c);

  /// "\n\n## Where its time goes ...": the node's kernels, and with `with_reference` the
  /// reference's (what it launches and what each costs). "" when there is nothing to show.
  std::string section(const NodeView& node, bool with_reference) const;
};

/// The section for a profile object (exposed for tests); "" when it holds no kernels.
std::string render_kernel_profile(const nlohmann::json& profile, bool with_reference);

}  // namespace kmcts
