#include "agents/roles.hpp"

#include <algorithm>

#include "agents/llm/http_transport.hpp"

namespace kmcts {

std::vector<std::string> NodeView::plan_history() const {
  std::vector<std::string> plans;
  for (const PlanLink* link = plan_link.get(); link; link = link->parent.get()) plans.push_back(link->plan);
  std::reverse(plans.begin(), plans.end());
  return plans;
}

void AgentUsage::add(const AgentUsage& o) {
  add_totals(o);
  for (const auto& c : o.llm_calls) llm_calls.push_back(c);
}

void AgentUsage::add_totals(const AgentUsage& o) {
  prompt_tokens += o.prompt_tokens;
  completion_tokens += o.completion_tokens;
  cached_tokens += o.cached_tokens;
  reasoning_tokens += o.reasoning_tokens;
  dollars += o.dollars;
  calls += o.calls;
  retries += o.retries;
}

nlohmann::json AgentUsage::totals() const {
  return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}, {"cached_tokens", cached_tokens},
          {"reasoning_tokens", reasoning_tokens}, {"dollars", dollars}, {"calls", calls}, {"retries", retries}};
}

AgentActivity agent_activity() {
  const llm::TransportActivity t = llm::transport_activity();
  return {t.requests, t.bytes};
}

AgentUsage AgentUsage::from_totals(const nlohmann::json& j) {
  AgentUsage u;
  if (!j.is_object()) return u;
  u.prompt_tokens = j.value("prompt_tokens", int64_t{0});
  u.completion_tokens = j.value("completion_tokens", int64_t{0});
  u.cached_tokens = j.value("cached_tokens", int64_t{0});
  u.reasoning_tokens = j.value("reasoning_tokens", int64_t{0});
  u.dollars = j.value("dollars", 0.0);
  u.calls = j.value("calls", 0);
  u.retries = j.value("retries", 0);
  return u;
}

}  // namespace kmcts
