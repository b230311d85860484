// Replies as frontier models write them (tests/fixtures/llm_replies, with expectations.json):
// prose around the code, several code blocks of which the last is not the answer, plans as
// headings, JSON or lists with details, visible thinking, a reply cut off at max tokens. The
// parser must take what the expectations say from each.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "agents/llm/reply_parser.hpp"
#include "core/files.hpp"

using namespace kmcts;
using namespace kmcts::llm;
using nlohmann::json;

TEST_CASE("llm corpus: every reply of the corpus parses as its expectations say") {
  const std::filesystem::path dir = std::filesystem::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "llm_replies";
  const json expectations = json::parse(read_file(dir / "expectations.json"));
  int checked = 0;
  for (const json& e : expectations["replies"]) {
    const std::string file = e["file"];
    const std::string reply = read_file(dir / file);
    INFO(file);
    if (e.contains("plans")) {
      const auto plans = parse_plans(reply, 8);
      std::vector<std::string> texts;
      for (const auto& p : plans) texts.push_back(p.text);
      CHECK(texts == e["plans"].get<std::vector<std::string>>());
      if (e.contains("priors")) {
        REQUIRE(plans.size() == e["priors"].size());
        for (size_t k = 0; k < plans.size(); ++k) CHECK(plans[k].prior == doctest::Approx(e["priors"][k].get<double>()));
      }
    } else {
      const auto code = extract_code(reply, e.value("kind", ""));
      if (e["code_has"].is_null()) {
        CHECK_FALSE(code.has_value());
      } else {
        REQUIRE(code.has_value());
        CHECK(code->find(e["code_has"].get<std::string>()) != std::string::npos);
        if (e.contains("code_lacks")) CHECK(code->find(e["code_lacks"].get<std::string>()) == std::string::npos);
      }
    }
    ++checked;
  }
  CHECK(checked >= 7);
}
