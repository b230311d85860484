#pragma once
// What a model accepts on the wire, as data (configs/llm/model_profiles.json, overridable with
// agents.llm.profiles=FILE): which sampling parameters it takes, whether temperature and top_p
// exclude each other (Claude 4.x answers 400 to both), which field carries the completion
// budget (OpenAI's reasoning models refuse max_tokens and take max_completion_tokens), and
// whether it takes reasoning_effort; and its price, as the provider publishes it (the default of
// agents.llm.prices, so that search.max_dollars works without a price table of the user's). The wire format (wire.hpp) sends what the profile allows;
// the mock server (mock_server.hpp) refuses what the provider would, in its own error shape.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm/provider.hpp"

namespace kmcts::llm {

struct ModelProfile {
  Provider provider = Provider::openai;
  std::string match;                 // a prefix of the model name; "" = any model of the provider
  bool temperature = true;           // takes a temperature
  bool top_p = true;                 // takes top_p
  bool sampling_exclusive = false;   // temperature or top_p, never both (temperature goes)
  std::string max_tokens_field = "max_tokens";  // or max_completion_tokens
  bool reasoning_effort = false;     // takes reasoning_effort
  std::vector<std::string> reasoning_efforts;  // the values it takes (JSON: true = low, medium, high; or a list)
  bool thinking = false;             // takes Anthropic's extended thinking (thinking.budget_tokens)
  nlohmann::json prices;             // {"prompt", "cached", "completion"} $/Mtok, or null (unknown)
  std::string origin;                // the file it came from
};

class ModelProfiles {
 public:
  /// The shipped table, then each of `overrides` (later files win on equal matches). InputError
  /// naming the file and entry for a malformed one.
  static ModelProfiles load(const std::vector<std::filesystem::path>& overrides = {});
  /// Entries from JSON ({"profiles": [...]}); `origin` names it in errors.
  void add(const nlohmann::json& table, const std::string& origin);
  /// The entry of `provider` whose match is the longest prefix of `model`; a profile that sends
  /// both sampling parameters and max_tokens (what any OpenAI-compatible server takes) if none.
  ModelProfile find(Provider provider, const std::string& model) const;

 private:
  std::vector<ModelProfile> entries_;
};

/// A price as a profile or agents.llm.prices gives it: {"prompt", "cached", "completion"} in
/// $ per million tokens, each a number >= 0; `complete`: prompt and completion both there.
bool is_price(const nlohmann::json& price, bool complete);

/// Values as OpenAI's errors list them: 'low', 'medium', and 'high'.
std::string effort_list(const std::vector<std::string>& values);

/// The shipped table's path (share/kmcts/llm in a bundle, configs/llm in a build tree).
std::filesystem::path default_profiles_file();

/// What the provider answers a request body that breaks the model's profile, as (HTTP status,
/// error body in the provider's own shape), or nullopt when it accepts it.
std::optional<std::pair<int, std::string>> provider_refusal(const ModelProfile& profile, const nlohmann::json& body);

}  // namespace kmcts::llm
