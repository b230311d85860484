#include "core/options.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"

namespace kmcts {
namespace {

using nlohmann::json;

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Flattens {"a": {"b": 1}} into {"a.b": 1}; objects are namespaces, except the value of a
// declared Object option, which is kept whole.
// A nested config's dotted keys; `spelled` says how each was written (nested objects, dotted
// names or both), so that a key given twice can name both spellings.
void flatten(const json& in, const std::string& prefix, const std::string& spelling, json& out,
             std::map<std::string, std::string>& spelled, const std::string& origin) {
  for (const auto& [k, v] : in.items()) {
    std::string key = prefix.empty() ? k : prefix + "." + k;
    std::string how = spelling.empty() ? fmt::format("\"{}\"", k) : fmt::format("{} > \"{}\"", spelling, k);
    const OptionSpec* spec = OptionTable::instance().find(key);
    if (v.is_object() && !(spec && spec->type == OptionType::Object)) {
      flatten(v, key, how, out, spelled, origin);
    } else {
      if (auto seen = spelled.find(key); seen != spelled.end())
        throw InputError(fmt::format("{}: option '{}' is given twice, as {} and as {}", origin, key, seen->second, how));
      spelled.emplace(key, how);
      out[key] = v;
    }
  }
}

std::string describe(const json& v) { return v.dump(); }

json coerce(const OptionSpec& spec, const json& v, const std::string& origin) {
  auto fail = [&](const std::string& why) {
    return InputError(fmt::format("{}: option '{}' {} (got {})", origin, spec.key, why, describe(v)));
  };
  json out;
  switch (spec.type) {
    case OptionType::Int:
      if (v.is_number_integer()) {
        out = v.get<int64_t>();
      } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
        out = static_cast<int64_t>(v.get<double>());
      } else {
        throw fail("must be an integer");
      }
      break;
    case OptionType::Double:
      if (!v.is_number()) throw fail("must be a number");
      out = v.get<double>();
      break;
    case OptionType::Bool:
      if (!v.is_boolean()) throw fail("must be true or false");
      out = v;
      break;
    case OptionType::String:
      if (!v.is_string()) throw fail("must be a string");
      out = v;
      break;
    case OptionType::Object:
      if (!v.is_object()) throw fail("must be a JSON object");
      out = v;
      break;
  }
  if (spec.type == OptionType::Int || spec.type == OptionType::Double) {
    double x = out.get<double>();
    if (spec.min && x < *spec.min) throw fail(fmt::format("must be >= {}", *spec.min));
    if (spec.max && x > *spec.max) throw fail(fmt::format("must be <= {}", *spec.max));
  }
  if (!spec.choices.empty() &&
      std::find(spec.choices.begin(), spec.choices.end(), out.get<std::string>()) == spec.choices.end()) {
    throw fail(fmt::format("must be one of: {}", fmt::join(spec.choices, ", ")));
  }
  return out;
}

}  // namespace

const char* to_string(OptionType type) {
  switch (type) {
    case OptionType::Int: return "int";
    case OptionType::Double: return "double";
    case OptionType::Bool: return "bool";
    case OptionType::String: return "string";
    case OptionType::Object: return "object";
  }
  return "?";
}

OptionTable& OptionTable::instance() {
  static OptionTable table;
  return table;
}

bool OptionTable::declare(OptionSpec spec) {
  if (find(spec.key)) throw std::logic_error("option declared twice: " + spec.key);
  specs_.push_back(std::move(spec));
  return true;
}

const OptionSpec* OptionTable::find(const std::string& key) const {
  for (const auto& s : specs_)
    if (s.key == key) return &s;
  return nullptr;
}

std::vector<OptionSpec> OptionTable::all() const {
  auto out = specs_;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

std::string OptionTable::closest(const std::string& key) const {
  std::string best;
  size_t best_distance = std::max<size_t>(3, key.size() / 3) + 1;
  for (const auto& s : specs_) {
    size_t d = edit_distance(key, s.key);
    if (d < best_distance) best_distance = d, best = s.key;
  }
  return best;
}

Config::Config() : values_(json::object()) {
  for (const auto& spec : OptionTable::instance().all()) values_[spec.key] = spec.default_value;
}

void Config::set_value(const std::string& key, const json& value, const std::string& origin) {
  const OptionSpec* spec = OptionTable::instance().find(key);
  if (!spec) {
    std::string hint = OptionTable::instance().closest(key);
    throw InputError(fmt::format("{}: unknown option '{}'{}", origin, key,
                                 hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  }
  values_[key] = coerce(*spec, value, origin);
}

void Config::merge(const json& values, const std::string& origin) {
  if (!values.is_object()) throw InputError(origin + ": a config must be a JSON object");
  json flat = json::object();
  std::map<std::string, std::string> spelled;
  flatten(values, "", "", flat, spelled, origin);
  for (const auto& [k, v] : flat.items()) set_value(k, v, origin);
}

std::pair<std::string, json> parse_assignment(const std::string& assignment, const std::string& origin) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("{} '{}': expected key=value", origin, assignment));
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // bare words are strings
  const OptionSpec* spec = OptionTable::instance().find(key);
  if (spec && spec->type == OptionType::String && !value.is_string()) value = text;
  return {key, value};
}

void Config::set(const std::string& assignment) {
  auto [key, value] = parse_assignment(assignment, "--set");
  set_value(key, value, "--set");
}

const json& Config::value(const std::string& key, OptionType expected) const {
  const OptionSpec* spec = OptionTable::instance().find(key);
  if (!spec || spec->type != expected)
    throw std::logic_error(fmt::format("option '{}' read as {} but not declared so", key, to_string(expected)));
  return values_.at(key);
}

int64_t Config::get_int(const std::string& key) const { return value(key, OptionType::Int).get<int64_t>(); }
double Config::get_double(const std::string& key) const {
  return value(key, OptionType::Double).get<double>();
}
bool Config::get_bool(const std::string& key) const { return value(key, OptionType::Bool).get<bool>(); }
json Config::get_object(const std::string& key) const { return value(key, OptionType::Object); }
std::string Config::get_string(const std::string& key) const {
  return value(key, OptionType::String).get<std::string>();
}

json Config::to_json() const {
  json nested = json::object();
  for (const auto& [key, value] : values_.items()) {
    std::string pointer(1, '/');  // (not "/" + key: GCC 12 -O3 warns falsely on that, -Wrestrict)
    pointer += key;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    nested[json::json_pointer(pointer)] = value;
  }
  return nested;
}

Config Config::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("config file '{}' cannot be read", path));
  json parsed;
  try {
    parsed = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("config file '{}' is not valid JSON: {}", path, e.what()));
  }
  Config config;
  config.merge(parsed, path);
  return config;
}

std::string explain_options() {
  std::string out;
  for (const auto& s : OptionTable::instance().all()) {
    std::string range;
    if (s.min || s.max)
      range = fmt::format("  range [{}, {}]", s.min ? fmt::format("{}", *s.min) : "-inf",
                          s.max ? fmt::format("{}", *s.max) : "inf");
    if (!s.choices.empty()) range = fmt::format("  one of {{{}}}", fmt::join(s.choices, ", "));
    out += fmt::format("{}  ({}, default {}){}\n    {}\n", s.key, to_string(s.type), s.default_value.dump(), range,
                       s.help);
  }
  return out;
}

}  // namespace kmcts
