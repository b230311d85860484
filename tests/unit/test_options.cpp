// Option validation: unknown keys, wrong types and out-of-range values name the key.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/options.hpp"

using namespace kmcts;
using nlohmann::json;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("options: defaults, nested and dotted overrides, --set parsing") {
  Config c;
  CHECK(c.get_int("search.budget") == 40);
  c.merge(json::parse(R"({"search": {"budget": 12}, "search.exploration": 0.5})"), "x.json");
  CHECK(c.get_int("search.budget") == 12);
  CHECK(c.get_double("search.exploration") == 0.5);
  c.set("search.policy=uct");
  CHECK(c.get_string("search.policy") == "uct");
  c.set("search.exploration=3");  // an integer literal is fine for a double
  CHECK(c.get_double("search.exploration") == 3.0);
  CHECK(c.to_json()["search"]["budget"] == 12);
}

TEST_CASE("options: bad values are InputErrors that name the key") {
  Config c;
  auto unknown = error_of([&] { c.merge(json::parse(R"({"search": {"budgt": 3}})"), "cfg.json"); });
  CHECK(unknown.find("cfg.json") != std::string::npos);
  CHECK(unknown.find("'search.budgt'") != std::string::npos);
  CHECK(unknown.find("did you mean 'search.budget'") != std::string::npos);
  auto type = error_of([&] { c.set("search.budget=many"); });
  CHECK(type.find("'search.budget'") != std::string::npos);
  CHECK(type.find("integer") != std::string::npos);
  auto range = error_of([&] { c.set("search.budget=0"); });
  CHECK(range.find("must be >= 1") != std::string::npos);
  auto fraction = error_of([&] { c.set("search.budget=2.5"); });
  CHECK(fraction.find("integer") != std::string::npos);
  CHECK(error_of([&] { c.set("novalue"); }).find("key=value") != std::string::npos);
  CHECK(error_of([&] { c.merge(json::array(), "a.json"); }).find("JSON object") != std::string::npos);
}

TEST_CASE("options: every declared option has help text and a default inside its range") {
  for (const auto& spec : OptionTable::instance().all()) {
    CAPTURE(spec.key);
    CHECK_FALSE(spec.help.empty());
    Config c;
    CHECK_NOTHROW(c.set_value(spec.key, spec.default_value, "default"));
  }
  CHECK(explain_options().find("search.exploration") != std::string::npos);
}
