// Reading a grid file and expanding it: axes -> configurations -> runs.
#include "campaigns/ablation_grid.hpp"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/problem.hpp"
#include "core/text.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

class GridReader {
 public:
  explicit GridReader(fs::path file) : file_(std::move(file)), dir_(fs::absolute(file_).parent_path()) {}

  [[noreturn]] void fail(const std::string& what) const { throw InputError(fmt::format("grid {}: {}", file_.string(), what)); }

  void only_keys(const json& object, std::initializer_list<const char*> known, const std::string& where) const {
    if (!object.is_object()) fail(fmt::format("{} must be a JSON object (got {})", where, object.dump()));
    for (const auto& [key, value] : object.items())
      if (std::none_of(known.begin(), known.end(), [&key](const char* k) { return key == k; }))
        fail(fmt::format("unknown key '{}' in {} (known: {})", key, where, fmt::join(known, ", ")));
  }

  std::string string_at(const json& object, const char* key, const std::string& where) const {
    if (!object.contains(key)) fail(fmt::format("{} has no \"{}\"", where, key));
    const json& v = object[key];
    if (!v.is_string() || v.get<std::string>().empty()) fail(fmt::format("{}: \"{}\" must be a non-empty string", where, key));
    return v.get<std::string>();
  }

  // A path as written in the grid: absolute, else beside the grid file, else under the nearest
  // folder above it that has it (the repository, for configs/ablations/*.json).
  fs::path resolve(const std::string& written, const std::string& what) const {
    const fs::path p(written);
    if (p.is_absolute()) return p;
    for (fs::path dir = dir_;; dir = dir.parent_path()) {
      if (fs::exists(dir / p)) return fs::weakly_canonical(dir / p);
      if (dir == dir.parent_path()) break;
    }
    fail(fmt::format("{} '{}' not found beside the grid file nor in a folder above it", what, written));
  }

  // One option override: the key must be declared and not set by kmcts ablate itself.
  // The base may also set search.budget and evaluator.replay.runs (a recorded landscape).
  std::pair<std::string, json> option(const std::string& key, const json& value, const std::string& where,
                                      bool in_base = false) const {
    if (!OptionTable::instance().find(key)) {
      const std::string hint = OptionTable::instance().closest(key);
      fail(fmt::format("{}: unknown option '{}'{}", where, key, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
    const auto& reserved = ablation_reserved_keys();
    const bool base_may = key == "search.budget" || key == "evaluator.replay.runs";
    if (!(in_base && base_may) && std::find(reserved.begin(), reserved.end(), key) != reserved.end())
      fail(fmt::format("{}: '{}' is set by kmcts ablate itself (seeds, budget, determinism and externals come from the grid)",
                       where, key));
    return {key, value};
  }

  Overrides overrides(const json& set, const std::string& where, bool in_base = false) const {
    Overrides out;
    if (set.is_object()) {
      for (const auto& [key, value] : set.items()) out.push_back(option(key, value, where, in_base));
    } else if (set.is_array()) {
      for (const json& item : set) {
        if (!item.is_string()) fail(fmt::format("{}: \"set\" lists key=value strings (got {})", where, item.dump()));
        auto [key, value] = parse_assignment(item.get<std::string>(), where);
        out.push_back(option(key, value, where, in_base));
      }
    } else {
      fail(fmt::format("{}: \"set\" must be an object of options or a list of key=value strings", where));
    }
    std::set<std::string> seen;
    for (const auto& [key, value] : out)
      if (!seen.insert(key).second) fail(fmt::format("{}: sets '{}' twice", where, key));
    return out;
  }

  AblationAxis axis(const json& j, size_t position) const {
    const std::string where = fmt::format("axis #{}", position + 1);
    only_keys(j, {"name", "key", "values", "description"}, where);
    AblationAxis a;
    a.name = string_at(j, "name", where);
    const std::string here = fmt::format("axis '{}'", a.name);
    if (!j.contains("values") || !j["values"].is_array() || j["values"].empty())
      fail(fmt::format("{}: \"values\" must be a non-empty list", here));
    const std::string key = j.contains("key") ? string_at(j, "key", here) : "";
    for (const json& v : j["values"]) {
      AblationAxisValue value;
      if (!key.empty() && !v.is_object()) {  // {"key": K, "values": [0.5, 1]}: bare values
        value.name = v.is_string() ? v.get<std::string>() : v.dump();
        value.set.push_back(option(key, v, fmt::format("{} value '{}'", here, value.name)));
      } else {
        only_keys(v, {"name", "value", "set", "description"}, here + " value");
        value.name = string_at(v, "name", here + " value");
        const std::string at = fmt::format("{} value '{}'", here, value.name);
        value.set = overrides(v.value("set", json::object()), at);
        if (!key.empty()) value.set.insert(value.set.begin(), option(key, v.value("value", json()), at));
      }
      for (const auto& other : a.values)
        if (other.name == value.name) fail(fmt::format("{}: two values are named '{}'", here, value.name));
      a.values.push_back(std::move(value));
    }
    return a;
  }

 private:
  fs::path file_;
  fs::path dir_;
};

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("grid file '{}' cannot be read", file.string()));
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("grid {} is not valid JSON: {}", file.string(), e.what()));
  }
}

// A folder name from a configuration's: ',' becomes '+' (run directories are listed
// comma-separated in evaluator.replay.runs), any other character but letters, digits and
// "._=+-" becomes '_'.
std::string sanitize(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c == ',') c = '+';
    else if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("._=+-").find(c) == std::string_view::npos) c = '_';
  return out;
}

// Whether the configuration matches every axis=value pair of an exclude entry.
bool matches(const AblationGrid& g, const AblationConfiguration& c, const json& entry) {
  for (size_t a = 0; a < g.axes.size(); ++a)
    if (entry.contains(g.axes[a].name) && entry[g.axes[a].name].get<std::string>() != g.axes[a].values[c.choice[a]].name)
      return false;
  return true;
}

// An {"axis": "value name"} object: every axis named exists and has that value.
void check_axis_pairs(const AblationGrid& g, const json& entry, const std::string& where, const GridReader& reader) {
  if (!entry.is_object() || entry.empty()) reader.fail(fmt::format("{} must be a non-empty {{\"axis\": \"value\"}} object", where));
  for (const auto& [axis, value] : entry.items()) {
    auto a = std::find_if(g.axes.begin(), g.axes.end(), [&axis](const AblationAxis& x) { return x.name == axis; });
    if (a == g.axes.end()) reader.fail(fmt::format("{} names axis '{}', which the grid does not have", where, axis));
    if (!value.is_string() || std::none_of(a->values.begin(), a->values.end(),
                                           [&value](const AblationAxisValue& v) { return v.name == value.get<std::string>(); }))
      reader.fail(fmt::format("{}: axis '{}' has no value {}", where, axis, value.dump()));
  }
}

void check_exclude(const AblationGrid& g, const GridReader& reader) {
  if (!g.exclude.is_array()) reader.fail("\"exclude\" must be a list of {\"axis\": \"value\"} objects");
  for (size_t i = 0; i < g.exclude.size(); ++i) check_axis_pairs(g, g.exclude[i], fmt::format("exclude #{}", i + 1), reader);
}

void expand_configurations(AblationGrid& g, const GridReader& reader) {
  check_exclude(g, reader);
  std::vector<size_t> choice(g.axes.size(), 0);
  std::set<std::string> names;
  while (true) {
    AblationConfiguration c;
    c.choice = choice;
    std::vector<std::string> parts;
    for (size_t a = 0; a < g.axes.size(); ++a) parts.push_back(g.axes[a].name + "=" + g.axes[a].values[choice[a]].name);
    c.name = parts.empty() ? "base" : fmt::format("{}", fmt::join(parts, ","));
    bool excluded = false;
    for (const json& entry : g.exclude) excluded = excluded || matches(g, c, entry);
    if (!excluded) {
      if (!names.insert(sanitize(c.name)).second)
        reader.fail(fmt::format("two configurations are both named '{}' once made a folder name", sanitize(c.name)));
      g.configs.push_back(std::move(c));
    }
    size_t a = g.axes.size();  // odometer: the last axis turns fastest
    while (a > 0 && ++choice[a - 1] == g.axes[a - 1].values.size()) choice[--a] = 0;
    if (a == 0) break;
  }
  if (g.configs.empty()) reader.fail("every configuration is excluded");
}

std::string baseline_name(const AblationGrid& g, const json& j, const GridReader& reader) {
  if (j.is_null()) return g.configs.front().name;
  std::string wanted;
  if (j.is_string()) {
    wanted = j.get<std::string>();
  } else if (j.is_object()) {
    check_axis_pairs(g, j, "baseline", reader);
    for (const auto& c : g.configs)
      if (matches(g, c, j) && j.size() == g.axes.size()) return c.name;
    reader.fail(fmt::format("baseline {} is not a configuration of the grid (excluded, or not one value per axis)", j.dump()));
  } else {
    reader.fail("\"baseline\" must be a configuration's name or an {\"axis\": \"value\"} object");
  }
  for (const auto& c : g.configs)
    if (c.name == wanted) return wanted;
  reader.fail(fmt::format("baseline '{}' is not a configuration of the grid (names look like '{}')", wanted, g.configs.front().name));
}

void read_base(AblationGrid& g, const json& base, const GridReader& reader) {
  g.base_record = {{"config", nullptr}, {"set", json::object()}};
  if (base.is_null()) return;
  reader.only_keys(base, {"config", "set"}, "\"base\"");
  if (base.contains("config")) {
    const fs::path file = reader.resolve(reader.string_at(base, "config", "\"base\""), "base config");
    g.base = Config::from_file(file.string());
    g.base_record["config"] = file.string();
  }
  for (auto& [key, value] : reader.overrides(base.value("set", json::object()), "base", true)) {
    g.base.set_value(key, value, fmt::format("grid {} base", g.file.string()));
    g.base_record["set"][key] = value;
  }
  // A recorded landscape named relative to the grid or the repo: runs may start anywhere.
  std::vector<std::string> runs;
  for (const std::string& dir : split_list(g.base.get_string("evaluator.replay.runs")))
    runs.push_back(reader.resolve(dir, "evaluator.replay.runs entry").string());
  g.base.set_value("evaluator.replay.runs", fmt::format("{}", fmt::join(runs, ",")), "grid base");
}

void read_problems_and_seeds(AblationGrid& g, const json& j, const GridReader& reader) {
  if (!j.contains("problems") || !j["problems"].is_array() || j["problems"].empty())
    reader.fail("\"problems\" must be a non-empty list of problem folders");
  for (const json& p : j["problems"]) {
    if (!p.is_string()) reader.only_keys(p, {"path", "recorded"}, "a problem");
    const std::string written = p.is_string() ? p.get<std::string>() : reader.string_at(p, "path", "a problem");
    AblationProblem problem;
    problem.path = reader.resolve(written, "problem");
    try {
      problem.name = load_problem(problem.path).name;
    } catch (const InputError& e) {
      reader.fail(fmt::format("problem '{}' does not load: {}", written, e.what()));
    }
    for (const auto& other : g.problems)
      if (other.name == problem.name)
        reader.fail(fmt::format("two problems are named '{}' ({} and {})", problem.name, other.path.string(), problem.path.string()));
    const json recorded = p.is_object() ? p.value("recorded", json::array()) : json::array();
    if (!recorded.is_array()) reader.fail(fmt::format("problem '{}': \"recorded\" must be a list of run directories", written));
    for (const json& dir : recorded) {
      if (!dir.is_string()) reader.fail(fmt::format("problem '{}': a recorded run must be a path (got {})", written, dir.dump()));
      problem.recorded.push_back(reader.resolve(dir.get<std::string>(), "recorded run"));
    }
    g.problems.push_back(std::move(problem));
  }
  if (!j.contains("seeds") || !j["seeds"].is_array() || j["seeds"].empty())
    reader.fail("\"seeds\" must be a non-empty list of integers");
  for (const json& s : j["seeds"]) {
    if (!s.is_number_integer() || s.get<int64_t>() < 0) reader.fail(fmt::format("a seed must be an integer >= 0 (got {})", s.dump()));
    if (std::find(g.seeds.begin(), g.seeds.end(), s.get<int64_t>()) != g.seeds.end())
      reader.fail(fmt::format("seed {} is listed twice", s.dump()));
    g.seeds.push_back(s.get<int64_t>());
  }
}

}  // namespace

const std::vector<std::string>& ablation_reserved_keys() {
  static const std::vector<std::string> keys = {"search.seed",           "search.budget",        "search.deterministic",
                                                "evaluator.replay.runs", "agents.llm.cassette", "agents.llm.cassette_mode"};
  return keys;
}

AblationGrid load_ablation_grid(const fs::path& file) {
  const json j = read_json(file);
  GridReader reader(file);
  reader.only_keys(j, {"name", "description", "base", "axes", "exclude", "problems", "seeds", "budget", "baseline"}, "the grid");
  AblationGrid g;
  g.file = fs::absolute(file);
  g.name = j.contains("name") ? reader.string_at(j, "name", "the grid") : file.stem().string();
  g.description = j.value("description", "");
  read_base(g, j.value("base", json()), reader);
  const json axes = j.value("axes", json::array());
  if (!axes.is_array()) reader.fail("\"axes\" must be a list");
  for (size_t i = 0; i < axes.size(); ++i) {
    g.axes.push_back(reader.axis(axes[i], i));
    for (size_t k = 0; k + 1 < g.axes.size(); ++k)
      if (g.axes[k].name == g.axes.back().name) reader.fail(fmt::format("two axes are named '{}'", g.axes.back().name));
  }
  g.exclude = j.value("exclude", json::array());
  expand_configurations(g, reader);
  g.baseline = baseline_name(g, j.value("baseline", json()), reader);
  read_problems_and_seeds(g, j, reader);
  if (j.contains("budget")) {
    if (!j["budget"].is_number_integer()) reader.fail(fmt::format("\"budget\" must be an integer (got {})", j["budget"].dump()));
    g.budget = j["budget"].get<int64_t>();
  }
  for (size_t c = 0; c < g.configs.size(); ++c)
    for (size_t p = 0; p < g.problems.size(); ++p)
      for (int64_t seed : g.seeds)
        g.runs.push_back({sanitize(fmt::format("{}--{}--s{}", g.configs[c].name, g.problems[p].name, seed)), c, p, seed});
  check_ablation_grid(g);
  return g;
}

Overrides AblationGrid::overrides(const AblationConfiguration& config) const {
  Overrides out;
  for (size_t a = 0; a < axes.size(); ++a)
    for (const auto& kv : axes[a].values[config.choice[a]].set) out.push_back(kv);
  return out;
}

ordered_json AblationGrid::axis_values(const AblationConfiguration& config) const {
  ordered_json out = ordered_json::object();
  for (size_t a = 0; a < axes.size(); ++a) out[axes[a].name] = axes[a].values[config.choice[a]].name;
  return out;
}

}  // namespace kmcts
