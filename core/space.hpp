#pragma once
// A tunable space over a kernel template: named parameters with discrete values,
// constraints between them, and a default point. The rule agents move in it; the seed
// kernel is the template rendered at the default point.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

/// A point: parameter name -> value (values are integers or strings, kept as JSON).
using SpacePoint = std::map<std::string, nlohmann::json>;

struct SpaceParam {
  std::string name;
  std::vector<nlohmann::json> values;  // ordered: neighbours are adjacent indices
  std::string help;
};

class TunableSpace {
 public:
  /// Parses space.json; `origin` names the file in errors (InputError).
  static TunableSpace from_json(const nlohmann::json& j, const std::string& origin);

  const std::vector<SpaceParam>& params() const { return params_; }
  const SpaceParam* find(const std::string& name) const;
  const SpacePoint& default_point() const { return default_point_; }
  const std::vector<std::string>& constraints() const { return constraints_; }

  /// True when every parameter has one of its values and every constraint holds.
  bool valid(const SpacePoint& point) const;
  /// Index of the point's value for `param` in its value list, or -1.
  int index_of(const std::string& param, const nlohmann::json& value) const;

  /// Substitutes {{NAME}} in the template with the point's values. A placeholder with
  /// no parameter is an InputError naming it.
  std::string render(const std::string& template_text, const SpacePoint& point) const;

  /// Calls f on every point of the product of the value lists (valid or not), the last
  /// parameter fastest.
  void for_each_point(const std::function<void(const SpacePoint&)>& f) const;

  static nlohmann::json to_json(const SpacePoint& point);
  static SpacePoint point_from_json(const nlohmann::json& j);

  // --- points as value indices (space_indices.cpp) ---------------------------------------
  // The rule planner weighs a few hundred candidate points per call; as maps of JSON each cost
  // allocations and a JSON dump, as index vectors none (the planner's per-call cost, which the
  // engine benchmark's agent threads paid, was 1.7M instructions).

  /// One value index per parameter, in params() order.
  using Indices = std::vector<int>;
  /// The point's indices; nullopt unless it names exactly the parameters, each with a listed
  /// value (constraints are not checked).
  std::optional<Indices> indices_of(const SpacePoint& point) const;
  /// The point at these indices (each in range).
  SpacePoint point_at(const Indices& indices) const;
  /// Appends to_json(point_at(indices)).dump() to `out`, from texts prepared at load: the
  /// point's canonical text (KnownVariants' key), without building JSON.
  void append_point_text(const Indices& indices, std::string& out) const;
  /// valid(point_at(indices)) for indices in range: whether every constraint holds.
  bool valid_at(const Indices& indices) const;

 private:
  void prepare_point_texts();
  std::vector<SpaceParam> params_;
  std::vector<std::string> constraints_;  // expressions over parameter names, e.g. "BM % UNROLL == 0"
  SpacePoint default_point_;
  // append_point_text()'s parts: the parameters in key order (JSON objects dump their keys
  // sorted), and per parameter and value the text `"NAME":VALUE`.
  std::vector<size_t> text_order_;
  std::vector<std::vector<std::string>> value_texts_;
};

/// Evaluates an integer expression with + - * / % ( ) comparisons && || ! over the point's
/// values. Throws InputError on a syntax error or an unknown name.
int64_t evaluate_expression(const std::string& expression, const SpacePoint& point);

}  // namespace kmcts
