#pragma once
// Every option is declared once, beside the code that reads it, with its type, default,
// range and help. Validation, `kmcts config --explain` and the effective config saved in
// each run all come from these declarations.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

enum class OptionType { Int, Double, Bool, String, Object };

struct OptionSpec {
  std::string key;  // dotted: "search.exploration"
  OptionType type = OptionType::String;
  nlohmann::json default_value;
  std::optional<double> min;  // numeric options only
  std::optional<double> max;
  std::vector<std::string> choices;  // string options; empty = any string
  std::string help;
};

const char* to_string(OptionType type);

/// The process-wide table of declared options.
class OptionTable {
 public:
  static OptionTable& instance();
  bool declare(OptionSpec spec);  // a second declaration of one key is a programming error
  const OptionSpec* find(const std::string& key) const;
  std::vector<OptionSpec> all() const;  // sorted by key
  /// The closest declared key, for "did you mean" hints; empty if nothing is close.
  std::string closest(const std::string& key) const;

 private:
  std::vector<OptionSpec> specs_;
};

/// A validated set of option values: defaults overlaid with a config file and --set pairs.
class Config {
 public:
  /// All defaults.
  Config();
  /// Overlays a (nested or dotted) JSON object; `origin` names the file in errors.
  void merge(const nlohmann::json& values, const std::string& origin);
  /// Overlays one `key=value` (value parsed as JSON when it parses, else as a string).
  void set(const std::string& assignment);
  void set_value(const std::string& key, const nlohmann::json& value, const std::string& origin);

  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  /// An Object option: a JSON object kept whole (e.g. a price table keyed by model name).
  nlohmann::json get_object(const std::string& key) const;

  /// The effective config as a nested JSON object (saved in each run).
  nlohmann::json to_json() const;
  /// Reads a JSON config file; errors name the file and key.
  static Config from_file(const std::string& path);

 private:
  const nlohmann::json& value(const std::string& key, OptionType expected) const;
  nlohmann::json values_;  // flat: dotted key -> value
};

/// Splits "key=value" as --set reads it: the value is parsed as JSON when it parses, else kept
/// as text (and a declared string option always keeps the text). InputError naming `origin`
/// and the text when there is no key or no '='. The key is not checked here.
std::pair<std::string, nlohmann::json> parse_assignment(const std::string& assignment, const std::string& origin);

/// Human-readable listing for `kmcts config --explain`.
std::string explain_options();

}  // namespace kmcts

/// KMCTS_OPTION("search.exploration", Double, 1.0, 0.0, 100.0, "help") at namespace scope.
#define KMCTS_OPTION(key, type, def, lo, hi, help_text)                                        \
  namespace {                                                                                 \
  [[maybe_unused]] const bool KMCTS_OPT_CONCAT(kmcts_option_, __LINE__) =                     \
      ::kmcts::OptionTable::instance().declare(::kmcts::OptionSpec{                           \
          key, ::kmcts::OptionType::type, def, lo, hi, {}, help_text});                       \
  }
/// KMCTS_CHOICE_OPTION("evaluator.name", "cpu", {"cpu","synthetic"}, "help"): a string from a set.
#define KMCTS_CHOICE_OPTION(key, def, choice_list, help_text)                                  \
  namespace {                                                                                 \
  [[maybe_unused]] const bool KMCTS_OPT_CONCAT(kmcts_option_, __LINE__) =                     \
      ::kmcts::OptionTable::instance().declare(::kmcts::OptionSpec{                           \
          key, ::kmcts::OptionType::String, def, std::nullopt, std::nullopt,                  \
          std::vector<std::string> choice_list, help_text});                                  \
  }
#define KMCTS_OPT_CONCAT_INNER(a, b) a##b
#define KMCTS_OPT_CONCAT(a, b) KMCTS_OPT_CONCAT_INNER(a, b)
