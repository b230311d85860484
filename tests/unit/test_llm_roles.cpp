// Per-role endpoints (agents/llm/session.hpp): each role may talk to its own provider, base URL
// and key; roles on one endpoint share it, and every role shares the cassette file.
#include <doctest/doctest.h>

#include <cstdlib>

#include "agents/llm/mock_server.hpp"
#include "agents/llm/session.hpp"
#include "agents/roles.hpp"
#include "core/options.hpp"
#include "scratch.hpp"

using namespace kmcts;
using namespace kmcts::llm;

namespace {

ChatRequest ask(const RoleSettings& r) {
  ChatRequest q;
  q.model = r.model;
  q.system = r.system;
  q.messages = {{"user", "plan something for " + r.role}};
  q.temperature = r.temperature;
  q.top_p = r.top_p;
  q.max_tokens = r.max_tokens;
  return q;
}

}  // namespace

TEST_CASE("llm roles: a hosted planner beside a local coder, each on its own endpoint and key") {
  auto answer = [](const std::string& provider, const std::string&, const std::string& user) { return provider + ": " + user; };
  MockLlmServer hosted(0, answer), local(0, answer);
  hosted.require_key("sk-hosted-key-0123");
  ::setenv("KMCTS_TEST_HOSTED_KEY", "sk-hosted-key-0123", 1);
  Config c;
  c.set_value("agents.llm.base_url", local.base_url(), "test");  // the shared endpoint: the local server
  c.set_value("agents.llm.api_key_env", std::string("KMCTS_TEST_NO_SUCH_KEY"), "test");
  c.set_value("agents.llm.model", std::string("Qwen2.5-Coder-32B"), "test");
  c.set_value("agents.llm.planner.provider", std::string("anthropic"), "test");
  c.set_value("agents.llm.planner.base_url", hosted.base_url(), "test");
  c.set_value("agents.llm.planner.api_key_env", std::string("KMCTS_TEST_HOSTED_KEY"), "test");
  c.set_value("agents.llm.planner.model", std::string("claude-sonnet-4-5"), "test");
  const auto planner = Session::for_config(c, "planner"), coder = Session::for_config(c, "coder"),
             debugger = Session::for_config(c, "debugger");
  CHECK(planner != coder);
  CHECK(coder == debugger);  // one endpoint: one session, its limits and connections shared
  AgentUsage usage;
  const RoleSettings p = planner->role("planner", c), k = coder->role("coder", c);
  CHECK(planner->chat(ask(p), "planner", usage).text == "anthropic: plan something for planner");
  CHECK(hosted.last_headers().at("x-api-key") == "sk-hosted-key-0123");
  CHECK(coder->chat(ask(k), "coder", usage).text == "openai: plan something for coder");
  CHECK_FALSE(local.last_headers().count("authorization"));  // the local server gets no key
  CHECK(hosted.stats().requests == 1);
  CHECK(local.stats().requests == 1);
  // Without role endpoints every role shares the one session.
  Config shared;
  shared.set_value("agents.llm.base_url", local.base_url(), "test");
  CHECK(Session::for_config(shared, "planner") == Session::for_config(shared, "coder"));
  ::unsetenv("KMCTS_TEST_HOSTED_KEY");
}
