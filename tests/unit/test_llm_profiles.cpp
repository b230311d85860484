// Model profiles (agents/llm/model_profile.hpp): what each model takes on the wire, the
// requests built from them, and the mock refusing what the provider would, with its message.
#include <doctest/doctest.h>

#include <fstream>

#include "agents/llm/http_transport.hpp"
#include "agents/llm/llm_client.hpp"
#include "agents/llm/event_stream.hpp"
#include "agents/llm/mock_server.hpp"
#include "agents/llm/model_profile.hpp"
#include "agents/llm/session.hpp"
#include "agents/llm/wire.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "core/files.hpp"
#include "scratch.hpp"

using namespace kmcts;
using namespace kmcts::llm;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

ChatRequest ask(const std::string& model) {
  ChatRequest r;
  r.model = model;
  r.system = "sys";
  r.messages = {{"user", "write a kernel"}};
  r.temperature = 0.2;
  r.top_p = 0.9;
  r.max_tokens = 300;
  return r;
}

json body_for(Provider p, const std::string& model, const ModelProfiles& profiles, const std::string& effort = "") {
  ChatRequest r = ask(model);
  r.reasoning_effort = effort;
  return json::parse(build_request(p, "http://127.0.0.1:1", r, profiles.find(p, model)).body);
}

}  // namespace

TEST_CASE("llm profiles: each model gets the fields it takes") {
  const ModelProfiles profiles = ModelProfiles::load();
  const json claude = body_for(Provider::anthropic, "claude-sonnet-4-5-20250929", profiles);
  CHECK(claude["temperature"] == 0.2);
  CHECK_FALSE(claude.contains("top_p"));  // temperature or top_p, never both
  CHECK(claude["max_tokens"] == 300);
  const json old_claude = body_for(Provider::anthropic, "claude-3-5-sonnet-latest", profiles);
  CHECK(old_claude.contains("top_p"));
  const json reasoning = body_for(Provider::openai, "o3-mini", profiles, "high");
  CHECK_FALSE(reasoning.contains("temperature"));
  CHECK_FALSE(reasoning.contains("top_p"));
  CHECK_FALSE(reasoning.contains("max_tokens"));
  CHECK(reasoning["max_completion_tokens"] == 300);
  CHECK(reasoning["reasoning_effort"] == "high");
  const json gpt5 = body_for(Provider::openai, "gpt-5-mini", profiles);
  CHECK(gpt5["max_completion_tokens"] == 300);
  CHECK_FALSE(gpt5.contains("reasoning_effort"));  // not set: not sent
  const json gpt4o = body_for(Provider::openai, "gpt-4o-mini", profiles);
  CHECK(gpt4o["temperature"] == 0.2);
  CHECK(gpt4o["max_completion_tokens"] == 300);
  // A local server's model (vLLM, llama.cpp, Ollama): both sampling parameters and max_tokens.
  const json local = body_for(Provider::openai, "Qwen/Qwen2.5-Coder-32B-Instruct", profiles, "high");
  CHECK(local["temperature"] == 0.2);
  CHECK(local["top_p"] == 0.9);
  CHECK(local["max_tokens"] == 300);
  CHECK_FALSE(local.contains("reasoning_effort"));  // the model takes none: never sent
}

TEST_CASE("llm profiles: every shipped profile's requests are accepted, and the old requests refused as the providers do") {
  const fs::path file = default_profiles_file();
  const json table = json::parse(read_file(file));
  const ModelProfiles profiles = ModelProfiles::load();
  for (const json& e : table["profiles"]) {
    const Provider p = provider_from_string(e["provider"], "test");
    const std::string model = e["match"].get<std::string>() + (e["match"] == "" ? "some-model" : "-test");
    INFO(model);
    CHECK_FALSE(provider_refusal(profiles.find(p, model), body_for(p, model, profiles, "medium")).has_value());
  }
  // What kmcts sent before profiles: both sampling parameters and max_tokens, to every model.
  auto old_request = [](Provider p, const std::string& model) {
    return json::parse(build_request(p, "http://127.0.0.1:1", ask(model)).body);
  };
  const auto claude = provider_refusal(profiles.find(Provider::anthropic, "claude-opus-4-1"),
                                       old_request(Provider::anthropic, "claude-opus-4-1"));
  REQUIRE(claude.has_value());
  CHECK(claude->first == 400);
  CHECK(json::parse(claude->second)["error"]["message"] ==
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one.");
  const auto o3 = provider_refusal(profiles.find(Provider::openai, "o3"), old_request(Provider::openai, "o3"));
  REQUIRE(o3.has_value());
  CHECK(json::parse(o3->second)["error"]["param"] == "max_tokens");
  json sampled = json::parse(build_request(Provider::openai, "http://127.0.0.1:1", ask("gpt-5"),
                                           profiles.find(Provider::openai, "gpt-5")).body);
  sampled["temperature"] = 0.2;
  const auto temp = provider_refusal(profiles.find(Provider::openai, "gpt-5"), sampled);
  REQUIRE(temp.has_value());
  CHECK(json::parse(temp->second)["error"]["code"] == "unsupported_value");
  sampled["temperature"] = 1.0;  // the default is the one value a reasoning model takes
  CHECK_FALSE(provider_refusal(profiles.find(Provider::openai, "gpt-5"), sampled).has_value());
}

TEST_CASE("llm profiles: a refused request is a clear error through the mock, not retried") {
  MockLlmServer server(0, [](const std::string&, const std::string&, const std::string&) { return "```\nok\n```"; });
  EndpointSettings e;
  e.provider = Provider::anthropic;
  e.base_url = server.base_url();
  e.retry.max_retries = 3;
  // A user profile that claims the model takes both: the provider (the mock) says otherwise.
  const fs::path dir = kmcts::test::fresh_dir("llm-profiles");
  fs::create_directories(dir);
  std::ofstream(dir / "wrong.json") << R"({"profiles": [{"provider": "anthropic", "match": "claude-sonnet-4-5",
                                           "temperature": true, "top_p": true}]})";
  e.profiles = ModelProfiles::load({dir / "wrong.json"});
  HttpLlmClient client(e, std::make_shared<HttpTransport>(HttpTimeouts{}));
  CallRecord record;
  try {
    client.chat(ask("claude-sonnet-4-5"), record);
    FAIL("no throw");
  } catch (const LlmFailure& failure) {
    CHECK(failure.error.status == 400);
    CHECK(std::string(failure.what()).find("cannot both be specified") != std::string::npos);
  }
  CHECK(record.attempts == 1);
  // With the shipped profiles the same call goes through.
  e.profiles = ModelProfiles::load();
  HttpLlmClient right(e, std::make_shared<HttpTransport>(HttpTimeouts{}));
  CallRecord ok;
  CHECK(right.chat(ask("claude-sonnet-4-5"), ok).text.find("ok") != std::string::npos);
  CHECK(ok.attempts == 1);
}

TEST_CASE("llm profiles: a user's file wins, a malformed one names itself, reasoning_effort only where taken") {
  const fs::path dir = kmcts::test::fresh_dir("llm-profiles-user");
  fs::create_directories(dir);
  std::ofstream(dir / "mine.json") << R"({"profiles": [{"provider": "openai", "match": "my-reasoner",
      "temperature": false, "top_p": false, "max_tokens_field": "max_completion_tokens", "reasoning_effort": true}]})";
  const ModelProfiles mine = ModelProfiles::load({dir / "mine.json"});
  CHECK(mine.find(Provider::openai, "my-reasoner-7b").reasoning_effort);
  CHECK(mine.find(Provider::openai, "my-reasoner-7b").origin == (dir / "mine.json").string());
  std::ofstream(dir / "bad.json") << R"({"profiles": [{"provider": "openai", "match": "x", "max_tokens_field": "tokens"}]})";
  CHECK_THROWS_WITH_AS(ModelProfiles::load({dir / "bad.json"}), doctest::Contains("bad.json: profiles[0].max_tokens_field"),
                       InputError);
  std::ofstream(dir / "nolist.json") << R"({"models": []})";
  CHECK_THROWS_AS(ModelProfiles::load({dir / "nolist.json"}), InputError);
  Config c;
  c.set_value("agents.llm.model", std::string("gpt-4o-mini"), "test");
  c.set_value("agents.llm.coder.reasoning_effort", std::string("high"), "test");
  c.set_value("agents.llm.cassette_mode", std::string("off"), "test");
  CHECK_THROWS_WITH_AS(Session::for_config(c)->role("coder", c), doctest::Contains("takes none"), InputError);
  c.set_value("agents.llm.model", std::string("o4-mini"), "test");
  CHECK(Session::for_config(c)->role("coder", c).reasoning_effort == "high");
  // A value the model does not take is refused before any call, naming those it takes.
  c.set_value("agents.llm.coder.reasoning_effort", std::string("minimal"), "test");
  CHECK_THROWS_WITH_AS(Session::for_config(c)->role("coder", c),
                       doctest::Contains("is 'minimal': model 'o4-mini' takes 'low', 'medium', and 'high'"), InputError);
  c.set_value("agents.llm.model", std::string("gpt-5-mini"), "test");
  CHECK(Session::for_config(c)->role("coder", c).reasoning_effort == "minimal");  // gpt-5 takes it
  // A profile may list its values; an empty list is a mistake in the file.
  std::ofstream(dir / "efforts.json") << R"({"profiles": [{"provider": "openai", "match": "my-reasoner",
      "max_tokens_field": "max_completion_tokens", "reasoning_effort": ["none", "high"]}]})";
  const ModelProfile listed = ModelProfiles::load({dir / "efforts.json"}).find(Provider::openai, "my-reasoner");
  CHECK(listed.reasoning_efforts == std::vector<std::string>{"none", "high"});
  std::ofstream(dir / "empty.json") << R"({"profiles": [{"provider": "openai", "match": "x", "reasoning_effort": []}]})";
  CHECK_THROWS_WITH_AS(ModelProfiles::load({dir / "empty.json"}), doctest::Contains("empty.json: profiles[0].reasoning_effort lists no value"),
                       InputError);
  // The mock refuses a value as OpenAI does.
  const auto refused = provider_refusal(listed, json{{"model", "my-reasoner"}, {"reasoning_effort", "low"}});
  REQUIRE(refused.has_value());
  CHECK(refused->first == 400);
  CHECK(refused->second.find("Invalid value: 'low'. Supported values are: 'none' and 'high'.") != std::string::npos);
  CHECK(refused->second.find("invalid_value") != std::string::npos);
  CHECK_FALSE(provider_refusal(listed, json{{"model", "my-reasoner"}, {"reasoning_effort", "high"}}).has_value());
}

TEST_CASE("llm profiles: prices known out of the box, the user's table first, and a dollar budget without one") {
  Config c;
  c.set_value("agents.llm.model", std::string("gpt-4o-mini"), "test");
  c.set_value("search.max_dollars", 1.0, "test");
  const auto session = Session::for_config(c);  // every role's model has a price: the budget works
  llm::Usage u;
  u.prompt_tokens = 1'000'000;
  u.cached_tokens = 400'000;
  u.completion_tokens = 100'000;
  CHECK(session->price("gpt-4o-mini", u) == doctest::Approx(0.6 * 0.15 + 0.4 * 0.075 + 0.1 * 0.6));
  CHECK(session->price("some-local-model", u) == 0.0);
  c.set_value("agents.llm.prices", json{{"gpt-4o-mini", {{"prompt", 1.0}, {"completion", 2.0}}}}, "test");
  CHECK(Session::for_config(c)->price("gpt-4o-mini", u) == doctest::Approx(1.0 + 0.2));  // cached at the prompt rate
  Config local;
  local.set_value("agents.llm.model", std::string("Qwen/Qwen2.5-Coder-32B-Instruct"), "test");
  local.set_value("search.max_dollars", 1.0, "test");
  CHECK_THROWS_WITH_AS(Session::for_config(local), doctest::Contains("has no price"), InputError);
  const ModelProfiles shipped = ModelProfiles::load();
  CHECK(shipped.find(Provider::anthropic, "claude-sonnet-4-5-20250929").prices["completion"] == 15.0);
  CHECK(shipped.find(Provider::anthropic, "claude-opus-4-5").prices.is_null());  // not known: no guess
}

TEST_CASE("llm profiles: Anthropic's extended thinking with its rules") {
  const ModelProfiles profiles = ModelProfiles::load();
  ChatRequest r = ask("claude-sonnet-4-5");
  r.max_tokens = 8000;
  r.thinking_budget = 2048;
  const ModelProfile claude = profiles.find(Provider::anthropic, r.model);
  const json body = json::parse(build_request(Provider::anthropic, "http://127.0.0.1:1", r, claude).body);
  CHECK(body["thinking"] == json{{"type", "enabled"}, {"budget_tokens", 2048}});
  CHECK_FALSE(body.contains("temperature"));  // thinking takes no sampling parameter
  CHECK_FALSE(body.contains("top_p"));
  CHECK_FALSE(provider_refusal(claude, body).has_value());
  json hot = body;
  hot["temperature"] = 0.2;
  CHECK(json::parse(provider_refusal(claude, hot)->second)["error"]["message"].get<std::string>().find("temperature") !=
        std::string::npos);
  json small = body;
  small["thinking"]["budget_tokens"] = 512;
  CHECK(provider_refusal(claude, small).has_value());
  json over = body;
  over["max_tokens"] = 2048;
  CHECK(json::parse(provider_refusal(claude, over)->second)["error"]["message"] ==
        "`max_tokens` must be greater than `thinking.budget_tokens`");
  // The role's settings are checked before anything is sent.
  Config c;
  c.set_value("agents.llm.provider", std::string("anthropic"), "test");
  c.set_value("agents.llm.model", std::string("claude-sonnet-4-5"), "test");
  c.set_value("agents.llm.coder.thinking_budget", 2048, "test");
  CHECK(Session::for_config(c, "coder")->role("coder", c).thinking_budget == 2048);
  c.set_value("agents.llm.coder.max_tokens", 2000, "test");
  CHECK_THROWS_WITH_AS(Session::for_config(c, "coder")->role("coder", c), doctest::Contains("below agents.llm.coder.max_tokens"),
                       InputError);
  c.set_value("agents.llm.provider", std::string("openai"), "test");
  c.set_value("agents.llm.model", std::string("gpt-4o"), "test");
  c.set_value("agents.llm.coder.max_tokens", 8000, "test");
  CHECK_THROWS_WITH_AS(Session::for_config(c, "coder")->role("coder", c), doctest::Contains("takes no extended thinking"),
                       InputError);
}

TEST_CASE("llm profiles: a match covers a model's family, a price only its name, alias and dated snapshots") {
  const ModelProfiles p = ModelProfiles::load();
  CHECK(p.find(Provider::openai, "o3-pro").reasoning_effort);   // a reasoning model like o3
  CHECK(p.find(Provider::openai, "o3-pro").prices.is_null());   // but not o3's price
  CHECK(p.find(Provider::openai, "o3x").match.empty());         // not o3's family at all
  CHECK(p.find(Provider::openai, "o3-2025-04-16").prices["completion"] == 8.0);
  CHECK(p.find(Provider::openai, "gpt-4o-2024-08-06").prices["prompt"] == 2.5);
  CHECK(p.find(Provider::openai, "gpt-4o-2024-05-13").prices["prompt"] == 5.0);
  CHECK_FALSE(p.find(Provider::openai, "o1-mini").reasoning_effort);
  CHECK(p.find(Provider::anthropic, "claude-sonnet-4-5-20250929").prices["completion"] == 15.0);
  CHECK(p.find(Provider::anthropic, "claude-sonnet-4-20250514").prices["completion"] == 15.0);
  CHECK(p.find(Provider::anthropic, "claude-sonnet-4-6").prices.is_null());  // not confirmed: no guess
  CHECK(is_event_stream(": OPENROUTER PROCESSING\n\ndata: {\"choices\": []}\n\n"));
}
