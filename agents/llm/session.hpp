#pragma once
// What the three LLM roles share, built once from the config: the endpoint client (one HTTP
// transport, one rate limiter, one cassette per endpoint and cassette file, so the planner,
// coder and debugger of a search all count against the same limits) and the price table.
#include <memory>
#include <string>

#include "agents/llm/llm_client.hpp"
#include "agents/roles.hpp"
#include "core/options.hpp"

namespace kmcts::llm {

struct RoleSettings {
  std::string role;  // planner, coder, debugger
  std::string model;
  double temperature = 0.7;
  double top_p = 1.0;
  int max_tokens = 4096;
  std::string system;
  std::string reasoning_effort;  // "" = not sent
  int thinking_budget = 0;       // 0 = off
};

class Session {
 public:
  /// The session for this config's endpoint and cassette (shared while any role holds it):
  /// `role`'s own provider, base URL and key variable where it has them
  /// (agents.llm.<role>.provider, ...), else the shared ones; roles on one endpoint share its
  /// limits and connections, and every role the cassette file. InputError for a bad provider or
  /// cassette mode, a replay cassette that does not exist, or a dollar budget with an unpriced model.
  static std::shared_ptr<Session> for_config(const Config& config, const std::string& role = "");
  RoleSettings role(const std::string& name, const Config& config) const;

  /// One call: the reply, with `usage` updated (tokens, dollars, the call's record). Throws
  /// LlmFailure after recording the failed call in `usage` too.
  ChatReply chat(const ChatRequest& request, const std::string& role, AgentUsage& usage);

  /// Dollars of `u` for `model` from agents.llm.prices (0 if the model has no price).
  double price(const std::string& model, const llm::Usage& u) const;

 private:
  std::shared_ptr<LlmClient> client_;
  nlohmann::json prices_;   // agents.llm.prices (the user's), over the profiles' prices
  ModelProfiles profiles_;
  Provider provider_ = Provider::openai;
};

}  // namespace kmcts::llm
