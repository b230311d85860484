#include "search/event_replayer.hpp"

#include <fmt/format.h>

namespace kmcts::detail {

using nlohmann::json;
using State = Coordinator::State;

EventReplayer::EventReplayer(State& state, VariantGraph& graph, RunStore& recorded)
    : s_(state), g_(graph), recorded_(recorded) {
  for (auto& e : recorded.evaluations(false)) evaluations_[e.seq] = e.result;
}

std::string EventReplayer::apply(const EventRecord& e) {
  State& s = s_;
  const json& p = e.payload;
  if (e.kind == "node") {
    detail::add_root(s, g_);
  } else if (e.kind == "select") {
    auto chosen = s.parts.strategy->next(g_);
    std::string kind = chosen && chosen->kind == Selection::Kind::debug ? "debug" : "expand";
    if (!chosen || kind != p.at("kind") || chosen->node != p.at("node") || json(chosen->path) != p.at("path"))
      return fmt::format("the strategy selected {} where the run selected {}",
                         chosen ? json{{"kind", kind}, {"node", chosen->node}, {"path", chosen->path}}.dump() : "nothing",
                         p.dump());
    detail::start_agents(s, g_, *chosen);
    chosen->trial = s.trials;
    selections_[s.trials] = *chosen;
    agent_open_.insert(s.trials);
  } else if (e.kind == "child" || e.kind == "agent_failed") {
    detail::AgentDone d;
    int64_t trial = p.at("trial").get<int64_t>();
    if (!selections_.count(trial)) return fmt::format("trial {} was never selected", trial);
    d.selection = selections_.at(trial);
    agent_open_.erase(trial);
    if (e.kind == "child" && p.value("new_node", false)) creator_[p.at("child").get<int>()] = trial;
    d.plan.text = p.value("plan", "");
    d.plan.prior = p.value("prior", 1.0);  // agent_failed events record it since search.expansion=thompson, its only reader
    d.spare_plans = detail::spare_plans_from_json(p.value("spare_plans", nlohmann::json()));
    // Usage first: apply_agent counts it into the run's totals (token and dollar budgets).
    AgentUsage usage = AgentUsage::from_totals(p.value("usage", nlohmann::json::object()));
    usage.llm_calls = p.value("llm_calls", nlohmann::json::array());
    if (e.kind == "child") {
      d.code.ok = true;
      d.code.meta = p.at("meta");
      auto source = recorded_.source(p.at("hash").get<std::string>());
      if (!source) return fmt::format("the source {} is missing from the run directory", p.at("hash").get<std::string>());
      d.code.source = *source;
      d.plan.data = p.at("plan_data");
      d.seconds = p.value("agent_seconds", 0.0);
      d.code.usage = usage;
    } else {
      d.code.usage = usage;
      d.error = p.value("error", "");
      d.exhausted = p.value("exhausted", false);
    }
    detail::apply_agent(s, g_, d);
  } else if (e.kind == "evaluation") {
    auto it = evaluations_.find(e.seq);
    if (it == evaluations_.end()) return "no stored evaluation has this event's sequence number";
    int64_t trial = p.value("trial", int64_t{0});
    detail::EvalDone d{trial == 0 ? Selection{Selection::Kind::expand, -1, {}, 0} : selections_.at(trial),
                       p.at("node").get<int>(), std::make_shared<const EvalResult>(std::move(it->second))};
    detail::apply_evaluation(s, g_, d);
  } else if (e.kind == "resumed" || e.kind == "finished") {
    // Kept as they were, with their sequence numbers (a run stopped, then resumed or extended,
    // has a "finished" event inside its log).
    s.event(e.kind, p);
  }
  return "";
}

std::vector<Selection> EventReplayer::open_agent_trials() const {
  std::vector<Selection> out;
  for (int64_t trial : agent_open_) out.push_back(selections_.at(trial));
  return out;
}

Selection EventReplayer::selection_of(int node) const {
  auto it = creator_.find(node);
  if (it == creator_.end() || it->second == 0) return Selection{Selection::Kind::expand, -1, {}, 0};
  return selections_.at(it->second);
}

}  // namespace kmcts::detail
