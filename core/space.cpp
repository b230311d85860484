#include "core/space.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"

namespace kmcts {
namespace {

using nlohmann::json;

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Values are integers or strings only: floats would make "neighbour" and equality
// ambiguous (16 vs 16.0), and booleans render as "true", which no template wants.
bool is_value(const json& v) { return v.is_number_integer() || v.is_string(); }

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// ---------------------------------------------------------------------------------------
// Expression evaluator: recursive descent with C precedence. Evaluation happens while
// parsing; `live` is false inside the untaken side of && / ||, so "X != 0 && Y / X > 1"
// does not divide by zero, while syntax and unknown names are still errors everywhere
// (a constraint that only breaks at some points would be a trap).

struct Value {
  bool is_string = false;
  int64_t number = 0;
  std::string text;
};

class ExpressionParser {
 public:
  ExpressionParser(const std::string& expression, const SpacePoint& point) : src_(expression), point_(point) {}

  int64_t run() {
    Value v = parse_or(true);
    skip_space();
    if (pos_ != src_.size()) fail(fmt::format("unexpected '{}'", src_.substr(pos_, 1)));
    return as_number(v, "the result");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(fmt::format("expression '{}': {} at position {}", src_, why, pos_));
  }

  void skip_space() {
    while (pos_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[pos_]))) ++pos_;
  }
  // Consumes `op` if it is next; refuses a prefix of a longer operator ("<" of "<=", "!" of "!=").
  bool accept(std::string_view op) {
    skip_space();
    if (src_.compare(pos_, op.size(), op) != 0) return false;
    if (op.size() == 1 && pos_ + 1 < src_.size()) {
      char next = src_[pos_ + 1];
      if ((op == "<" || op == ">" || op == "!" || op == "=") && next == '=') return false;
      if ((op == "&" && next == '&') || (op == "|" && next == '|')) return false;
    }
    pos_ += op.size();
    return true;
  }

  int64_t as_number(const Value& v, const std::string& what) const {
    if (v.is_string) fail(fmt::format("{} is the string \"{}\", not an integer", what, v.text));
    return v.number;
  }
  static Value number(int64_t n) { return Value{false, n, {}}; }

  Value parse_or(bool live) {
    Value left = parse_and(live);
    while (accept("||")) {
      bool truth = as_number(left, "the left side of ||") != 0;
      Value right = parse_and(live && !truth);
      left = number(truth || (live && !truth && as_number(right, "the right side of ||") != 0));
    }
    return left;
  }

  Value parse_and(bool live) {
    Value left = parse_equality(live);
    while (accept("&&")) {
      bool truth = as_number(left, "the left side of &&") != 0;
      Value right = parse_equality(live && truth);
      left = number(truth && live && as_number(right, "the right side of &&") != 0);
    }
    return left;
  }

  // == and != compare strings with strings and integers with integers; mixing is an error
  // because it is always a typo in a constraint (LOOP == 3 where the values are "ijk").
  Value parse_equality(bool live) {
    Value left = parse_relational(live);
    for (;;) {
      bool eq = accept("==");
      if (!eq && !accept("!=")) return left;
      Value right = parse_relational(live);
      if (left.is_string != right.is_string) fail("comparing a string with an integer");
      bool same = left.is_string ? left.text == right.text : left.number == right.number;
      left = number(eq ? same : !same);
    }
  }

  Value parse_relational(bool live) {
    Value left = parse_additive(live);
    for (;;) {
      std::string op;
      for (const char* candidate : {"<=", ">=", "<", ">"})
        if (accept(candidate)) {
          op = candidate;
          break;
        }
      if (op.empty()) return left;
      int64_t a = as_number(left, "the left side of " + op);
      int64_t b = as_number(parse_additive(live), "the right side of " + op);
      left = number(op == "<=" ? a <= b : op == ">=" ? a >= b : op == "<" ? a < b : a > b);
    }
  }

  Value parse_additive(bool live) {
    Value left = parse_multiplicative(live);
    for (;;) {
      bool plus = accept("+");
      if (!plus && !accept("-")) return left;
      int64_t a = as_number(left, plus ? "the left side of +" : "the left side of -");
      int64_t b = as_number(parse_multiplicative(live), plus ? "the right side of +" : "the right side of -");
      int64_t r = 0;
      if (plus ? __builtin_add_overflow(a, b, &r) : __builtin_sub_overflow(a, b, &r)) fail("integer overflow");
      left = number(r);
    }
  }

  Value parse_multiplicative(bool live) {
    Value left = parse_unary(live);
    for (;;) {
      char op = accept("*") ? '*' : accept("/") ? '/' : accept("%") ? '%' : 0;
      if (op == 0) return left;
      std::string side = std::string(1, op);
      int64_t a = as_number(left, "the left side of " + side);
      int64_t b = as_number(parse_unary(live), "the right side of " + side);
      int64_t r = 0;
      if (op == '*') {
        if (__builtin_mul_overflow(a, b, &r)) fail("integer overflow");
      } else if (b == 0) {
        if (live) fail(op == '/' ? "division by zero" : "modulo by zero");
      } else if (a == std::numeric_limits<int64_t>::min() && b == -1) {
        fail("integer overflow");
      } else {
        r = op == '/' ? a / b : a % b;  // C semantics: truncation toward zero
      }
      left = number(r);
    }
  }

  Value parse_unary(bool live) {
    if (accept("!")) return number(as_number(parse_unary(live), "the operand of !") == 0);
    if (accept("-")) {
      int64_t a = as_number(parse_unary(live), "the operand of -");
      if (a == std::numeric_limits<int64_t>::min()) fail("integer overflow");
      return number(-a);
    }
    if (accept("+")) return number(as_number(parse_unary(live), "the operand of +"));
    return parse_primary(live);
  }

  Value parse_primary(bool live) {
    skip_space();
    if (pos_ >= src_.size()) fail("unexpected end");
    char c = src_[pos_];
    if (accept("(")) {
      Value v = parse_or(live);
      if (!accept(")")) fail("missing ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
      if (pos_ < src_.size() && (std::isalpha(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_'))
        fail("a number runs into a name");
      try {
        return number(std::stoll(src_.substr(start, pos_ - start)));
      } catch (const std::out_of_range&) {
        pos_ = start;
        fail("integer literal too large");
      }
    }
    if (c == '"' || c == '\'') {
      size_t end = src_.find(c, pos_ + 1);
      if (end == std::string::npos) fail("unterminated string literal");
      Value v{true, 0, src_.substr(pos_ + 1, end - pos_ - 1)};
      pos_ = end + 1;
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
      std::string name = src_.substr(start, pos_ - start);
      auto it = point_.find(name);
      if (it == point_.end()) {
        pos_ = start;
        fail(fmt::format("unknown name '{}'", name));
      }
      if (it->second.is_string()) return Value{true, 0, it->second.get<std::string>()};
      if (it->second.is_number_integer()) return number(it->second.get<int64_t>());
      pos_ = start;
      fail(fmt::format("'{}' has the value {}, neither an integer nor a string", name, it->second.dump()));
    }
    fail(fmt::format("unexpected '{}'", std::string(1, c)));
  }

  const std::string& src_;
  const SpacePoint& point_;
  size_t pos_ = 0;
};

// One placeholder occurrence: [begin, end) in the template and the name inside.
struct Placeholder {
  size_t begin = 0, end = 0;
  std::string name;
};

// Finds the next {{ NAME }} at or after `from`. Only an identifier between the braces
// counts: C++ has "{{" of its own (aggregate initialisers like {{1, 2}}), which stays text.
std::optional<Placeholder> next_placeholder(const std::string& text, size_t from) {
  for (size_t open = text.find("{{", from); open != std::string::npos; open = text.find("{{", open + 1)) {
    size_t i = open + 2;
    while (i < text.size() && text[i] == ' ') ++i;
    size_t name_begin = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    std::string name = text.substr(name_begin, i - name_begin);
    while (i < text.size() && text[i] == ' ') ++i;
    if (is_identifier(name) && text.compare(i, 2, "}}") == 0) return Placeholder{open, i + 2, name};
  }
  return std::nullopt;
}

}  // namespace

int64_t evaluate_expression(const std::string& expression, const SpacePoint& point) {
  return ExpressionParser(expression, point).run();
}

const SpaceParam* TunableSpace::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

TunableSpace TunableSpace::from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin + ": must be a JSON object");
  for (const auto& [key, _] : j.items())
    if (key != "params" && key != "constraints" && key != "default")
      throw InputError(fmt::format("{}: unknown key '{}' (known: params, constraints, default)", origin, key));
  if (!j.contains("params") || !j.at("params").is_array() || j.at("params").empty())
    throw InputError(origin + ": key 'params' must be a non-empty array");

  TunableSpace space;
  for (size_t i = 0; i < j.at("params").size(); ++i) {
    const json& pj = j.at("params").at(i);
    std::string at = fmt::format("{}: params[{}]", origin, i);
    if (!pj.is_object()) throw InputError(at + " must be an object");
    if (!pj.contains("name") || !pj.at("name").is_string()) throw InputError(at + ": key 'name' must be a string");
    SpaceParam param;
    param.name = pj.at("name").get<std::string>();
    at = fmt::format("{}: params[{}] ('{}')", origin, i, param.name);
    if (!is_identifier(param.name)) throw InputError(at + ": key 'name' must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    if (space.find(param.name)) throw InputError(at + ": key 'name' repeats an earlier parameter");
    if (!pj.contains("values") || !pj.at("values").is_array() || pj.at("values").empty())
      throw InputError(at + ": key 'values' must be a non-empty array");
    for (const json& v : pj.at("values")) {
      if (!is_value(v)) throw InputError(fmt::format("{}: key 'values' holds {}, which is neither an integer nor a string", at, v.dump()));
      if (std::find(param.values.begin(), param.values.end(), v) != param.values.end())
        throw InputError(fmt::format("{}: key 'values' repeats {}", at, v.dump()));
      param.values.push_back(v);
    }
    if (pj.contains("help")) {
      if (!pj.at("help").is_string()) throw InputError(at + ": key 'help' must be a string");
      param.help = pj.at("help").get<std::string>();
    }
    for (const auto& [key, _] : pj.items())
      if (key != "name" && key != "values" && key != "help")
        throw InputError(fmt::format("{}: unknown key '{}' (known: name, values, help)", at, key));
    space.params_.push_back(std::move(param));
  }

  if (j.contains("constraints")) {
    const json& cj = j.at("constraints");
    if (!cj.is_array()) throw InputError(origin + ": key 'constraints' must be an array of strings");
    for (const json& c : cj) {
      if (!c.is_string()) throw InputError(fmt::format("{}: key 'constraints' holds {}, not a string", origin, c.dump()));
      space.constraints_.push_back(c.get<std::string>());
    }
  }

  // A missing default means "the first value of each parameter": the value lists are
  // ordered, and listing the plain variant first is the natural way to write them.
  if (j.contains("default")) {
    const json& dj = j.at("default");
    if (!dj.is_object()) throw InputError(origin + ": key 'default' must be an object");
    for (const auto& [key, v] : dj.items()) {
      const SpaceParam* p = space.find(key);
      if (!p) throw InputError(fmt::format("{}: key 'default' names '{}', which is not a parameter", origin, key));
      if (space.index_of(key, v) < 0)
        throw InputError(fmt::format("{}: key 'default' gives {} = {}, which is not among its values", origin, key, v.dump()));
      space.default_point_[key] = v;
    }
    for (const auto& p : space.params_)
      if (!space.default_point_.count(p.name))
        throw InputError(fmt::format("{}: key 'default' has no value for '{}'", origin, p.name));
  } else {
    for (const auto& p : space.params_) space.default_point_[p.name] = p.values.front();
  }

  // Every constraint is evaluated at the default: that checks its syntax and names once, at
  // load, and makes a default that breaks a constraint an error naming that constraint.
  for (size_t i = 0; i < space.constraints_.size(); ++i) {
    int64_t holds = 0;
    try {
      holds = evaluate_expression(space.constraints_[i], space.default_point_);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: constraints[{}]: {}", origin, i, e.what()));
    }
    if (!holds)
      throw InputError(fmt::format("{}: key 'default' breaks constraints[{}] '{}'", origin, i, space.constraints_[i]));
  }
  space.prepare_point_texts();
  return space;
}

int TunableSpace::index_of(const std::string& param, const json& value) const {
  const SpaceParam* p = find(param);
  if (!p) return -1;
  auto it = std::find(p->values.begin(), p->values.end(), value);
  return it == p->values.end() ? -1 : static_cast<int>(it - p->values.begin());
}

bool TunableSpace::valid(const SpacePoint& point) const {
  if (point.size() != params_.size()) return false;
  for (const auto& p : params_) {
    auto it = point.find(p.name);
    if (it == point.end() || index_of(p.name, it->second) < 0) return false;
  }
  // Constraints were checked for syntax at load, so an error here is a value-dependent
  // one (division by zero at this point): such a point is simply not in the space.
  try {
    for (const auto& c : constraints_)
      if (!evaluate_expression(c, point)) return false;
  } catch (const InputError&) {
    return false;
  }
  return true;
}

// Every placeholder must name a parameter, and every parameter must appear at least once:
// a parameter the template ignores gives byte-identical variants, which would waste
// evaluations and skew the search's statistics, so it is reported as a space/template error.
std::string TunableSpace::render(const std::string& template_text, const SpacePoint& point) const {
  std::string out;
  out.reserve(template_text.size());
  std::map<std::string, int> uses;
  size_t pos = 0;
  while (auto ph = next_placeholder(template_text, pos)) {
    out.append(template_text, pos, ph->begin - pos);
    if (!find(ph->name))
      throw InputError(fmt::format("template placeholder '{{{{{}}}}}' names no parameter of the space", ph->name));
    auto it = point.find(ph->name);
    if (it == point.end()) throw InputError(fmt::format("render: the point has no value for '{}'", ph->name));
    out += value_text(it->second);
    ++uses[ph->name];
    pos = ph->end;
  }
  out.append(template_text, pos, std::string::npos);
  for (const auto& p : params_)
    if (!uses.count(p.name))
      throw InputError(fmt::format("template never uses parameter '{}' (no '{{{{{}}}}}' placeholder)", p.name, p.name));
  return out;
}

json TunableSpace::to_json(const SpacePoint& point) {
  json j = json::object();
  for (const auto& [name, value] : point) j[name] = value;
  return j;
}

SpacePoint TunableSpace::point_from_json(const json& j) {
  if (!j.is_object()) throw InputError(fmt::format("a space point must be a JSON object, got {}", j.dump()));
  SpacePoint point;
  for (const auto& [name, value] : j.items()) {
    if (!is_value(value))
      throw InputError(fmt::format("space point: '{}' = {} is neither an integer nor a string", name, value.dump()));
    point[name] = value;
  }
  return point;
}

}  // namespace kmcts

namespace kmcts {

void TunableSpace::for_each_point(const std::function<void(const SpacePoint&)>& f) const {
  std::vector<size_t> x(params_.size(), 0);
  while (true) {
    SpacePoint p;
    for (size_t i = 0; i < params_.size(); ++i) p[params_[i].name] = params_[i].values[x[i]];
    f(p);
    size_t i = params_.size();  // odometer, the last parameter fastest
    while (i > 0 && ++x[i - 1] == params_[i - 1].values.size()) x[--i] = 0;
    if (i == 0) return;
  }
}

}  // namespace kmcts
