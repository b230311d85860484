#pragma once
// A recorded run's config, made fit to replay or resume with this build: an option added after
// the run was recorded gets the value that gives the behaviour the run had, where the option's
// default changed it. Replay and resume both read a recorded config through here, so a new
// option of that kind is handled in one place.
#include <nlohmann/json.hpp>

#include "core/options.hpp"

namespace kmcts {

/// `config` holds the recorded config merged over the defaults; `recorded` is the config as
/// the run stored it.
/// - search.anneal_selections: absent, the run searched with constant exploration (0); then
///   fix_anneal_horizon() fixes the horizon the run started with.
/// - search.reroot_repairs: absent, a repair's path started at the seed when the failed node
///   was not below where descents start (false).
void fix_recorded_config(Config& config, const nlohmann::json& recorded);

}  // namespace kmcts
