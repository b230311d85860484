// The offline rule debugger: a failed child differs from its parent in a few parameters;
// revert the one most likely to blame and keep the others, so the idea of the move survives.
//
// Ranking of the changed parameters (most suspect first):
//   1. named in the failure's message or log as a whole word: the templates' static_asserts
//      and the kernels' checks spell out the parameter they guard, so a compile error
//      "TILE must divide N" is direct evidence;
//   2. then the one that moved furthest in its ordered value list: the bigger the change,
//      the more likely it left the region where the kernel works;
//   3. ties broken by the context's rng (deterministic for a given context).
// Repair attempt k on the same failed node reverts the k-th suspect (mod the count), so a
// second attempt tries the other explanation. Reverting must give a valid point; suspects
// whose revert breaks a constraint are skipped. With only one changed parameter, reverting it
// gives back the parent, which is already known: "nothing to revert".
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "agents/roles.hpp"
#include "agents/rule/rule_common.hpp"

namespace kmcts::rule {
namespace {

// True when `name` occurs in `text` not as part of a longer identifier.
bool mentions(const std::string& text, const std::string& name) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool left = at == 0 || !ident(text[at - 1]);
    bool right = at + name.size() >= text.size() || !ident(text[at + name.size()]);
    if (left && right) return true;
  }
  return false;
}

struct Suspect {
  std::string name;
  bool named = false;
  int distance = 0;
  uint64_t tie = 0;
};

class RuleDebugger final : public Debugger {
 public:
  explicit RuleDebugger(const Config&) {}

  CodeResult repair(const DebugContext& context) override {
    CodeResult r;
    const TunableSpace* space = space_of(context.problem, "rule debugger", r.error);
    if (!space) return r;
    std::optional<SpacePoint> failed = params_of(context.failed, "rule debugger", r.error);
    if (!failed) return r;
    std::optional<SpacePoint> parent = params_of(context.parent, "rule debugger", r.error);
    if (!parent) return r;

    std::vector<std::string> changed = changed_params(*space, *parent, *failed);
    if (changed.empty()) {
      r.error = fmt::format("rule debugger: node {} has the same params as its parent {}; nothing to revert",
                            context.failed.id, context.parent.id);
      return r;
    }
    if (changed.size() == 1) {
      r.error = fmt::format("rule debugger: nothing to revert: node {} changed only {} ({}), and reverting it gives "
                            "back the parent",
                            context.failed.id, changed[0], describe_move(*space, *parent, *failed));
      return r;
    }

    std::string evidence;
    if (context.failed.result) evidence = context.failed.result->message + "\n" + context.failed.result->log;
    CounterRng rng = context.rng;
    std::vector<Suspect> suspects;
    for (const auto& name : changed) {
      Suspect s{name, mentions(evidence, name), 0, rng.next()};
      auto from = parent->find(name), to = failed->find(name);
      if (from != parent->end() && to != failed->end())
        s.distance = std::abs(space->index_of(name, to->second) - space->index_of(name, from->second));
      suspects.push_back(s);
    }
    std::sort(suspects.begin(), suspects.end(), [](const Suspect& a, const Suspect& b) {
      if (a.named != b.named) return a.named;
      if (a.distance != b.distance) return a.distance > b.distance;
      return a.tie < b.tie;
    });

    size_t first = static_cast<size_t>(std::max(context.attempt, 0)) % suspects.size();
    for (size_t k = 0; k < suspects.size(); ++k) {
      const Suspect& s = suspects[(first + k) % suspects.size()];
      SpacePoint repaired = *failed;
      if (parent->count(s.name))
        repaired[s.name] = parent->at(s.name);
      else
        repaired.erase(s.name);
      if (!space->valid(repaired)) continue;
      return render_point(*context.problem, repaired, "rule debugger", {{"reverted", s.name}});
    }
    r.error = fmt::format("rule debugger: reverting any one of {} alone leaves node {} outside the space",
                          describe_move(*space, *parent, *failed), context.failed.id);
    return r;
  }
};

}  // namespace
}  // namespace kmcts::rule

KMCTS_REGISTER(kmcts::DebuggerRegistry, "rule",
               [](const kmcts::Config& config) -> std::unique_ptr<kmcts::Debugger> {
                 return std::make_unique<kmcts::rule::RuleDebugger>(config);
               })
