#include "search/recorded_config.hpp"

#include "search/exploration_schedule.hpp"

namespace kmcts {

namespace {

bool predates(const nlohmann::json& recorded, const char* search_key) {
  const auto search = recorded.find("search");
  return search == recorded.end() || !search->is_object() || !search->contains(search_key);
}

}  // namespace

void fix_recorded_config(Config& config, const nlohmann::json& recorded) {
  if (predates(recorded, "anneal_selections"))
    config.set_value("search.anneal_selections", 0, "the recorded run (it predates search.anneal_selections)");
  fix_anneal_horizon(config);
  if (predates(recorded, "reroot_repairs"))
    config.set_value("search.reroot_repairs", false, "the recorded run (it predates search.reroot_repairs)");
}

}  // namespace kmcts
