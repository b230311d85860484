// TunableSpace: parsing space.json (errors name the file and the key), constraints,
// the expression evaluator, rendering templates.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/space.hpp"

namespace kmcts {
namespace {

using nlohmann::json;

json sample_space() {
  return json::parse(R"({
    "params": [
      {"name": "BM", "values": [8, 16, 32], "help": "rows per block"},
      {"name": "UNROLL", "values": [1, 2, 4, 8]},
      {"name": "ORDER", "values": ["ijk", "ikj"]}
    ],
    "constraints": ["BM % UNROLL == 0", "BM * UNROLL <= 128"],
    "default": {"BM": 16, "UNROLL": 2, "ORDER": "ijk"}
  })");
}

// The message of the InputError that `f` throws ("" if it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("space: parses params, constraints and default") {
  TunableSpace s = TunableSpace::from_json(sample_space(), "space.json");
  REQUIRE(s.params().size() == 3);
  CHECK(s.params()[0].name == "BM");
  CHECK(s.params()[0].help == "rows per block");
  CHECK(s.constraints().size() == 2);
  CHECK(s.default_point().at("BM") == 16);
  CHECK(s.default_point().at("ORDER") == "ijk");
  CHECK(s.index_of("UNROLL", 4) == 2);
  CHECK(s.index_of("UNROLL", 3) == -1);
  CHECK(s.index_of("NOPE", 4) == -1);
  CHECK(s.index_of("ORDER", "ikj") == 1);
  CHECK(s.find("ORDER") != nullptr);
  CHECK(s.find("nope") == nullptr);
}

TEST_CASE("space: missing default means the first value of each parameter") {
  json j = sample_space();
  j.erase("default");
  TunableSpace s = TunableSpace::from_json(j, "space.json");
  CHECK(s.default_point().at("BM") == 8);
  CHECK(s.default_point().at("UNROLL") == 1);
}

TEST_CASE("space: parse errors name the file and the key") {
  auto fails = [](json j) { return error_of([&] { TunableSpace::from_json(j, "p/space.json"); }); };
  json j = sample_space();

  std::string e = fails(json::array());
  CHECK(contains(e, "p/space.json"));

  j = sample_space();
  j.erase("params");
  CHECK(contains(fails(j), "'params'"));

  j = sample_space();
  j["params"][1]["values"] = json::array();
  e = fails(j);
  CHECK(contains(e, "p/space.json"));
  CHECK(contains(e, "UNROLL"));
  CHECK(contains(e, "'values'"));

  j = sample_space();
  j["params"][1]["values"] = {1, 2.5};
  CHECK(contains(fails(j), "2.5"));

  j = sample_space();
  j["params"][1]["values"] = {1, 2, 2};
  CHECK(contains(fails(j), "repeats"));

  j = sample_space();
  j["params"][2]["name"] = "BM";
  CHECK(contains(fails(j), "repeats an earlier parameter"));

  j = sample_space();
  j["params"][0]["name"] = "bad name";
  CHECK(contains(fails(j), "identifier"));

  j = sample_space();
  j["params"][0]["step"] = 2;
  CHECK(contains(fails(j), "'step'"));

  j = sample_space();
  j["extra"] = 1;
  CHECK(contains(fails(j), "'extra'"));

  j = sample_space();
  j["default"]["BM"] = 12;
  e = fails(j);
  CHECK(contains(e, "'default'"));
  CHECK(contains(e, "BM"));

  j = sample_space();
  j["default"].erase("ORDER");
  CHECK(contains(fails(j), "'ORDER'"));

  j = sample_space();
  j["default"]["TILE"] = 4;
  CHECK(contains(fails(j), "'TILE'"));

  j = sample_space();
  j["constraints"] = {42};
  CHECK(contains(fails(j), "'constraints'"));
}

TEST_CASE("space: default must satisfy the constraints; bad constraints fail at load") {
  json j = sample_space();
  j["default"]["UNROLL"] = 8;
  j["default"]["BM"] = 32;  // 32 * 8 > 128
  std::string e = error_of([&] { TunableSpace::from_json(j, "space.json"); });
  CHECK(contains(e, "constraints[1]"));
  CHECK(contains(e, "BM * UNROLL <= 128"));

  j = sample_space();
  j["constraints"] = {"BM % TILE == 0"};
  e = error_of([&] { TunableSpace::from_json(j, "space.json"); });
  CHECK(contains(e, "unknown name 'TILE'"));
  CHECK(contains(e, "constraints[0]"));

  j = sample_space();
  j["constraints"] = {"BM % == 0"};
  CHECK(!error_of([&] { TunableSpace::from_json(j, "space.json"); }).empty());
}

TEST_CASE("space: valid checks values, completeness and constraints") {
  TunableSpace s = TunableSpace::from_json(sample_space(), "space.json");
  SpacePoint p = s.default_point();
  CHECK(s.valid(p));
  p["UNROLL"] = 3;  // not a listed value
  CHECK_FALSE(s.valid(p));
  p = s.default_point();
  p["BM"] = 8;
  p["UNROLL"] = 8;  // 8 % 8 == 0 and 64 <= 128
  CHECK(s.valid(p));
  p["BM"] = 32;  // 256 > 128
  CHECK_FALSE(s.valid(p));
  p = s.default_point();
  p.erase("ORDER");
  CHECK_FALSE(s.valid(p));
  p = s.default_point();
  p["EXTRA"] = 1;
  CHECK_FALSE(s.valid(p));
}

TEST_CASE("space: a constraint that divides by zero at some point makes that point invalid") {
  json j = json::parse(R"({"params": [{"name": "A", "values": [1, 0]}], "constraints": ["8 / A >= 1"]})");
  TunableSpace s = TunableSpace::from_json(j, "space.json");
  CHECK(s.valid({{"A", 1}}));
  CHECK_FALSE(s.valid({{"A", 0}}));
}

TEST_CASE("space expression: arithmetic and precedence") {
  SpacePoint p{{"A", 6}, {"B", 4}, {"S", "ikj"}};
  CHECK(evaluate_expression("1 + 2 * 3", p) == 7);
  CHECK(evaluate_expression("(1 + 2) * 3", p) == 9);
  CHECK(evaluate_expression("A - B - 1", p) == 1);  // left associative
  CHECK(evaluate_expression("A / B", p) == 1);       // integer division
  CHECK(evaluate_expression("-7 / 2", p) == -3);     // truncates toward zero, as in C
  CHECK(evaluate_expression("-7 % 3", p) == -1);
  CHECK(evaluate_expression("A % B", p) == 2);
  CHECK(evaluate_expression("2 * -A", p) == -12);
  CHECK(evaluate_expression("A * B % 5", p) == 4);  // (24) % 5
  CHECK(evaluate_expression("1 + 2 < 4", p) == 1);
  CHECK(evaluate_expression("A > B == 1", p) == 1);  // relational binds tighter than ==
  CHECK(evaluate_expression("A >= 6 && B <= 3", p) == 0);
  CHECK(evaluate_expression("A >= 6 || B <= 3", p) == 1);
  CHECK(evaluate_expression("1 || 0 && 0", p) == 1);  // && binds tighter than ||
  CHECK(evaluate_expression("!(A == 6)", p) == 0);
  CHECK(evaluate_expression("!0 + 1", p) == 2);
  CHECK(evaluate_expression("A != B", p) == 1);
  CHECK(evaluate_expression("S == \"ikj\"", p) == 1);
  CHECK(evaluate_expression("S != 'ijk'", p) == 1);
  CHECK(evaluate_expression("  42  ", p) == 42);
}

TEST_CASE("space expression: && and || short-circuit, so guards protect divisions") {
  SpacePoint p{{"A", 0}};
  CHECK(evaluate_expression("A != 0 && 8 / A > 1", p) == 0);
  CHECK(evaluate_expression("A == 0 || 8 % A == 0", p) == 1);
}

TEST_CASE("space expression: errors") {
  SpacePoint p{{"A", 0}, {"S", "x"}};
  auto fails = [&](const std::string& expr) { return error_of([&] { evaluate_expression(expr, p); }); };
  CHECK(contains(fails("8 / A"), "division by zero"));
  CHECK(contains(fails("8 % A"), "modulo by zero"));
  CHECK(contains(fails("B + 1"), "unknown name 'B'"));
  CHECK(contains(fails("(1 + 2"), "missing ')'"));
  CHECK(contains(fails("1 +"), "unexpected end"));
  CHECK(contains(fails("1 2"), "unexpected '2'"));
  CHECK(contains(fails("1 = 1"), "unexpected '='"));
  CHECK(contains(fails("S + 1"), "string"));
  CHECK(contains(fails("S == 1"), "comparing a string with an integer"));
  CHECK(contains(fails("S"), "not an integer"));
  CHECK(contains(fails("99999999999999999999"), "too large"));
  CHECK(contains(fails("9223372036854775807 + 1"), "overflow"));
  CHECK(contains(fails("8 / A"), "'8 / A'"));  // the message quotes the expression
}

TEST_CASE("space: render substitutes placeholders") {
  TunableSpace s = TunableSpace::from_json(sample_space(), "space.json");
  std::string tmpl = "constexpr int BM = {{BM}};\nint u = {{ UNROLL }} + {{BM}};\n// {{ORDER}}\nint a[1][2] = {{1, 2}};";
  std::string out = s.render(tmpl, s.default_point());
  CHECK(out == "constexpr int BM = 16;\nint u = 2 + 16;\n// ijk\nint a[1][2] = {{1, 2}};");
}

TEST_CASE("space: render errors name the placeholder or the unused parameter") {
  TunableSpace s = TunableSpace::from_json(sample_space(), "space.json");
  std::string e = error_of([&] { s.render("{{BM}} {{UNROLL}} {{ORDER}} {{TILE}}", s.default_point()); });
  CHECK(contains(e, "TILE"));
  e = error_of([&] { s.render("{{BM}} {{UNROLL}}", s.default_point()); });
  CHECK(contains(e, "never uses parameter 'ORDER'"));
  SpacePoint partial = s.default_point();
  partial.erase("BM");
  e = error_of([&] { s.render("{{BM}} {{UNROLL}} {{ORDER}}", partial); });
  CHECK(contains(e, "no value for 'BM'"));
}

TEST_CASE("space: points round-trip through JSON") {
  SpacePoint p{{"A", 4}, {"S", "ikj"}};
  json j = TunableSpace::to_json(p);
  CHECK(j == json({{"A", 4}, {"S", "ikj"}}));
  CHECK(TunableSpace::point_from_json(j) == p);
  CHECK(TunableSpace::to_json({}).is_object());
  CHECK(contains(error_of([] { TunableSpace::point_from_json(json::array()); }), "object"));
  CHECK(contains(error_of([] { TunableSpace::point_from_json({{"A", 1.5}}); }), "'A'"));
}

TEST_CASE("space: for_each_point visits the whole product once, the last parameter fastest") {
  TunableSpace space = TunableSpace::from_json(json::parse(R"({
    "params": [{"name": "A", "values": [1, 2, 3]}, {"name": "B", "values": ["x", "y"]}],
    "default": {"A": 1, "B": "x"}})"), "t/space.json");
  std::vector<std::string> seen;
  space.for_each_point([&](const SpacePoint& p) { seen.push_back(p.at("A").dump() + p.at("B").get<std::string>()); });
  CHECK(seen == std::vector<std::string>{"1x", "1y", "2x", "2y", "3x", "3y"});
}

TEST_CASE("space: points as indices round-trip, and their text is the JSON dump of the point") {
  // Names out of key order and string values that JSON must escape: the text is built from
  // parts prepared at load, and must still equal what to_json(point).dump() writes.
  TunableSpace space = TunableSpace::from_json(json::parse(R"({
    "params": [
      {"name": "ZETA", "values": [1, -2, 300]},
      {"name": "ALPHA", "values": ["a\"b", "c\\d", "e\nf"]},
      {"name": "MID", "values": [7, 8]}
    ],
    "constraints": ["ZETA != 300 || MID == 8"]
  })"),
                                               "indices/space.json");
  int points = 0;
  space.for_each_point([&](const SpacePoint& point) {
    ++points;
    auto indices = space.indices_of(point);
    REQUIRE(indices.has_value());
    CHECK(space.point_at(*indices) == point);
    std::string text = "prefix";
    space.append_point_text(*indices, text);
    CHECK(text == "prefix" + TunableSpace::to_json(point).dump());
    CHECK(space.valid_at(*indices) == space.valid(point));
  });
  CHECK(points == 18);
  SpacePoint p = space.default_point();
  CHECK(space.indices_of(p) == TunableSpace::Indices{0, 0, 0});  // params() order, not key order
  SpacePoint unlisted = p, extra = p, missing = p;
  unlisted["MID"] = 9;
  extra["OTHER"] = 1;
  missing.erase("ZETA");
  CHECK_FALSE(space.indices_of(unlisted).has_value());
  CHECK_FALSE(space.indices_of(extra).has_value());
  CHECK_FALSE(space.indices_of(missing).has_value());
  CHECK_FALSE(space.valid_at({2, 0, 0}));  // ZETA 300 needs MID 8
  CHECK(space.valid_at({2, 0, 1}));
}

}  // namespace kmcts
