// A grid's run configs, and what is checked before anything runs.
//
// "Impossible" here means a configuration whose runs could not start (a bad value, an unknown
// strategy or policy name, a problem its evaluator cannot run), one where two axes ask for
// different values of one option, or two configurations that run the same search: they differ
// only in options that their strategy, policy, pending treatment, widening, backup or agent
// backend never reads (search.pending swept under the beam strategy runs one search under three
// names). One configuration with such an option is fine (beam with the default exploration
// constant, in a policy x exploration grid that excludes beam's other constants).
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "campaigns/ablation_grid.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/problem.hpp"
#include "core/text.hpp"
#include "hardware/evaluator.hpp"
#include "search/coordinator.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

bool uses_llm(const Config& c) {
  if (c.get_string("agents.backend") == "llm") return true;
  for (const char* role : {"agents.planner", "agents.coder", "agents.debugger"})
    if (c.get_string(role) == "llm") return true;
  return false;
}

// Options read by one part only, and the option that picks that part: {key or prefix, selector, value}.
struct Reader {
  const char* key;  // an option, or a prefix ending in '.'
  const char* selector;
  const char* value;
};

constexpr Reader kReaders[] = {
    {"search.policy", "search.strategy", "mcts"},
    {"search.pending", "search.strategy", "mcts"},
    {"search.widening", "search.strategy", "mcts"},
    {"search.backup", "search.strategy", "mcts"},
    {"search.backup_power", "search.strategy", "mcts"},
    {"search.widening_", "search.strategy", "mcts"},
    {"search.expansion", "search.strategy", "mcts"},
    {"search.expansion_prior", "search.strategy", "mcts"},
    {"search.expansion_planner", "search.strategy", "mcts"},
    {"search.exploration_schedule", "search.strategy", "mcts"},
    {"search.anneal_selections", "search.strategy", "mcts"},
    {"search.refine", "search.strategy", "mcts"},
    {"search.refine_", "search.strategy", "mcts"},
    {"search.chain_length", "search.strategy", "mcts"},
    {"search.chain", "search.strategy", "mcts"},
    {"search.value_scale", "search.strategy", "mcts"},
    {"search.reroot_depth", "search.strategy", "mcts"},
    {"search.reroot_repairs", "search.strategy", "mcts"},
    {"search.exploration", "search.strategy", "mcts"},
    {"search.puct.", "search.strategy", "mcts"},
    {"search.thompson.", "search.strategy", "mcts"},
    {"search.policy_epsilon", "search.strategy", "mcts"},
    {"search.virtual_loss.", "search.strategy", "mcts"},
    {"search.beam.", "search.strategy", "beam"},
    {"search.egreedy.", "search.strategy", "egreedy_tree"},
    {"search.random.", "search.strategy", "random"},
    {"search.exploration", "search.policy", "uct"},
    {"search.puct.", "search.policy", "puct"},
    {"search.thompson.", "search.policy", "thompson"},
    {"search.policy_epsilon", "search.policy", "egreedy"},
    {"search.virtual_loss.", "search.pending", "virtual_loss"},
    {"search.widening_", "search.widening", "progressive"},
    {"search.backup_power", "search.backup", "power_mean"},
    {"search.anneal_selections", "search.exploration_schedule", "linear"},
    {"search.refine_", "search.refine", "bandit"},
    {"search.expansion_prior", "search.expansion", "thompson"},
    {"search.expansion_planner", "search.expansion", "thompson"},
    {"agents.rule.", "agents.backend", "rule"},
    {"agents.submissions.", "agents.backend", "submissions"},
};

bool covers(const Reader& r, const std::string& key) {
  const std::string k = r.key;
  return k.back() == '.' || k.back() == '_' ? starts_with(key, r.key) : key == k;
}

[[noreturn]] void fail(const AblationGrid& g, const std::string& what) {
  throw InputError(fmt::format("grid {}: {}", g.file.string(), what));
}

// Two axes of one configuration setting one option to different values.
void check_conflicts(const AblationGrid& g, const AblationConfiguration& c) {
  std::map<std::string, std::pair<size_t, json>> setter;  // key -> (axis, value)
  for (size_t a = 0; a < g.axes.size(); ++a)
    for (const auto& [key, value] : g.axes[a].values[c.choice[a]].set) {
      auto [it, fresh] = setter.try_emplace(key, a, value);
      if (!fresh && it->second.second != value)
        fail(g, fmt::format("configuration '{}': axis '{}' sets {}={} but axis '{}' sets it to {}; exclude the combination "
                            "or let one axis set it",
                            c.name, g.axes[it->second.first].name, key, it->second.second.dump(), g.axes[a].name, value.dump()));
    }
}

json::json_pointer pointer_of(const std::string& key) {
  std::string pointer = "/" + key;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  return json::json_pointer(pointer);
}

// What a configuration's runs do: its config with every option that has no effect there put
// back to the base's value; `why` collects those options.
json effective_signature(const AblationGrid& g, const AblationConfiguration& c, const Config& config, std::string& why) {
  json signature = config.to_json();
  const json base = g.base.to_json();
  for (size_t a = 0; a < g.axes.size(); ++a) {
    const AblationAxisValue& v = g.axes[a].values[c.choice[a]];
    for (const auto& [key, value] : v.set)
      if (std::string reason = ineffective_option(key, config); !reason.empty()) {
        signature[pointer_of(key)] = base[pointer_of(key)];
        if (why.empty()) why = fmt::format("axis '{}' value '{}' sets {}, which has no effect there ({})", g.axes[a].name, v.name, key, reason);
      }
  }
  return signature;
}

}  // namespace

std::string ineffective_option(const std::string& key, const Config& config) {
  for (const Reader& r : kReaders) {
    if (!covers(r, key)) continue;
    const std::string chosen = config.get_string(r.selector);
    if (chosen != r.value) return fmt::format("{}={} never reads it; only {} does", r.selector, chosen, r.value);
  }
  if (starts_with(key, "agents.llm.") && !uses_llm(config)) return "no agent is an LLM agent";
  return "";
}

Config AblationGrid::run_config(const AblationRunSpec& run, const RunExternals& externals) const {
  Config c = base;
  const AblationConfiguration& config = configs.at(run.config);
  const std::string origin = fmt::format("grid {} configuration '{}'", file.string(), config.name);
  for (const auto& [key, value] : overrides(config)) c.set_value(key, value, origin);
  c.set_value("search.seed", run.seed, fmt::format("grid {} seeds", file.string()));
  if (budget) c.set_value("search.budget", *budget, fmt::format("grid {} budget", file.string()));
  c.set_value("search.deterministic", true, "kmcts ablate");
  // The optimisation archive changes as runs end, so a run that read it would depend on which
  // runs ended before it: a grid's runs read none of it unless the grid asks (agents.memory.k).
  bool asks_memory = base_record.value("set", json::object()).contains("agents.memory.k");
  for (const auto& [key, value] : overrides(config)) asks_memory |= key == "agents.memory.k";
  if (!asks_memory) c.set_value("agents.memory.k", 0, "kmcts ablate (a grid reads the archive only where it sets agents.memory.k)");
  // Measurements: recorded once per grid, replayed by every later run of the problem.
  std::vector<std::string> runs;
  if (c.get_string("evaluator.name") == "replay") {
    runs = split_list(c.get_string("evaluator.replay.runs"));
  } else {
    c.set_value("evaluator.replay.fallback", c.get_string("evaluator.name"), "kmcts ablate");
    c.set_value("evaluator.name", "replay", "kmcts ablate");
  }
  for (const fs::path& dir : problems.at(run.problem).recorded) runs.push_back(dir.string());
  for (const fs::path& dir : externals.replay_runs) runs.push_back(fs::absolute(dir).string());
  c.set_value("evaluator.replay.runs", fmt::format("{}", fmt::join(runs, ",")), "kmcts ablate");
  if (uses_llm(c)) {
    c.set_value("agents.llm.cassette", (fs::absolute(externals.run_dir) / "cassette.jsonl").string(), "kmcts ablate");
    c.set_value("agents.llm.cassette_mode", "record", "kmcts ablate");
  }
  return c;
}

Config offline_replay_config(const json& recorded_config, const fs::path& run_dir) {
  Config c;
  c.merge(recorded_config, (run_dir / "config.json").string());
  c.set_value("evaluator.name", "replay", "--replay-only");
  c.set_value("evaluator.replay.runs", fs::absolute(run_dir).string(), "--replay-only");
  c.set_value("evaluator.replay.fallback", "", "--replay-only");
  c.set_value("evaluator.replay.infra_errors", true, "--replay-only");  // what failed then fails again
  if (uses_llm(c)) {
    c.set_value("agents.llm.cassette", (fs::absolute(run_dir) / "cassette.jsonl").string(), "--replay-only");
    c.set_value("agents.llm.cassette_mode", "replay", "--replay-only");
  }
  return c;
}

bool AblationGrid::measures_for_real() const {
  for (const AblationConfiguration& config : configs) {
    Config c = base;
    for (const auto& [key, value] : overrides(config)) c.set_value(key, value, "grid");
    if (c.get_string("evaluator.name") != "replay" || !c.get_string("evaluator.replay.fallback").empty()) return true;
  }
  return false;
}

// The options a config sets away from their defaults: what a grid's identity holds, so that an
// option kmcts adds later (with its default) does not make an existing grid folder "another grid".
static json changed_options(const Config& c) {
  const json mine = c.to_json().flatten(), defaults = Config().to_json().flatten();
  json changed = json::object();
  for (const auto& [pointer, value] : mine.items())
    if (!defaults.contains(pointer) || defaults[pointer] != value) changed[pointer] = value;
  return changed.unflatten();
}

ordered_json AblationGrid::identity() const {
  ordered_json axes_json = ordered_json::array();
  for (const AblationAxis& a : axes) {
    ordered_json values = ordered_json::array();
    for (const AblationAxisValue& v : a.values) {
      ordered_json set = ordered_json::object();
      for (const auto& [key, value] : v.set) set[key] = value;
      values.push_back({{"name", v.name}, {"set", set}});
    }
    axes_json.push_back({{"name", a.name}, {"values", values}});
  }
  ordered_json problem_names = ordered_json::array();  // and the recorded runs each replays, by content
  for (const AblationProblem& p : problems) {
    if (p.recorded.empty()) {
      problem_names.push_back(p.name);
      continue;
    }
    ordered_json recorded = ordered_json::array();
    for (const auto& dir : p.recorded)
      recorded.push_back(fs::exists(dir / "run.sqlite") ? sha256_hex(read_file(dir / "run.sqlite")) : dir.string());
    problem_names.push_back({{"name", p.name}, {"recorded", recorded}});
  }
  return {{"name", name},         {"base_config", changed_options(base)}, {"axes", axes_json},
          {"exclude", exclude},   {"problems", problem_names},     {"seeds", seeds},
          {"budget", budget ? json(*budget) : json(nullptr)}, {"baseline", baseline}};
}

ordered_json AblationGrid::expanded() const {
  ordered_json out = identity();
  out["file"] = file.string();
  out["description"] = description;
  out["base"] = base_record;
  ordered_json problem_list = ordered_json::array();
  for (const AblationProblem& p : problems) {
    ordered_json recorded = ordered_json::array();
    for (const fs::path& dir : p.recorded) recorded.push_back(dir.string());
    problem_list.push_back({{"name", p.name}, {"path", p.path.string()}, {"recorded", recorded}});
  }
  out["problem_paths"] = problem_list;
  ordered_json config_list = ordered_json::array();
  for (const AblationConfiguration& c : configs) {
    ordered_json set = ordered_json::array();
    for (const auto& [key, value] : overrides(c)) set.push_back(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    config_list.push_back({{"name", c.name}, {"axis_values", axis_values(c)}, {"overrides", set}});
  }
  out["configs"] = config_list;
  return out;
}

void check_ablation_grid(const AblationGrid& g) {
  std::vector<Problem> problems;
  for (const AblationProblem& p : g.problems) problems.push_back(load_problem(p.path));
  std::vector<std::pair<std::pair<json, std::string>, std::string>> seen;  // (signature, name), why
  for (const AblationConfiguration& c : g.configs) {
    check_conflicts(g, c);
    const AblationRunSpec first{"", static_cast<size_t>(&c - g.configs.data()), 0, g.seeds.front()};
    const Config config = g.run_config(first, {{}, fs::path("ablation-check")});
    std::string why;
    json signature = effective_signature(g, c, config, why);
    signature["search"].erase("seed");
    for (const auto& [other, other_why] : seen)
      if (signature == other.first)
        fail(g, fmt::format("configurations '{}' and '{}' run the same search{}; exclude one of them", other.second, c.name,
                            why.empty() && other_why.empty() ? "" : ": " + (why.empty() ? other_why : why)));
    seen.push_back({{signature, c.name}, why});
    try {
      SearchSettings::from_config(config);
      SearchParts::from_config(problems.front(), config);  // unknown strategy, policy, agent names
    } catch (const InputError& e) {
      fail(g, fmt::format("configuration '{}': {}", c.name, e.what()));
    }
  }
  for (int64_t seed : g.seeds) g.run_config({"", 0, 0, seed}, {{}, fs::path("ablation-check")});
  for (size_t p = 1; p < problems.size(); ++p) {
    try {
      make_evaluator(problems[p], g.run_config({"", 0, p, g.seeds.front()}, {{}, fs::path("ablation-check")}));
    } catch (const InputError& e) {
      fail(g, fmt::format("problem '{}': {}", g.problems[p].name, e.what()));
    }
  }
}

}  // namespace kmcts
