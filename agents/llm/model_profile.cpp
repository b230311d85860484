#include "agents/llm/model_profile.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/install_paths.hpp"

#ifndef KMCTS_LLM_DATA_DIR
#define KMCTS_LLM_DATA_DIR "configs/llm"
#endif

namespace kmcts::llm {

using nlohmann::json;

std::filesystem::path default_profiles_file() { return data_dir("llm", KMCTS_LLM_DATA_DIR) / "model_profiles.json"; }

std::string effort_list(const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += values.size() > 2 ? ", " : " ";
    if (i > 0 && i + 1 == values.size()) out += "and ";
    out += fmt::format("'{}'", values[i]);
  }
  return out;
}

bool is_price(const json& price, bool complete) {
  if (!price.is_object() || (complete && !(price.contains("prompt") && price.contains("completion")))) return false;
  for (const auto& [field, v] : price.items())
    if (!(field == "prompt" || field == "cached" || field == "completion") || !v.is_number() || v.get<double>() < 0)
      return false;
  return true;
}

void ModelProfiles::add(const json& table, const std::string& origin) {
  if (!table.is_object() || !table.contains("profiles") || !table["profiles"].is_array())
    throw InputError(fmt::format("{}: a model profile table is an object with a 'profiles' list", origin));
  size_t k = 0;
  for (const json& e : table["profiles"]) {
    const std::string where = fmt::format("{}: profiles[{}]", origin, k++);
    if (!e.is_object() || !e.contains("provider") || !e.contains("match") || !e["match"].is_string())
      throw InputError(where + " needs a provider and a match (a model-name prefix, '' for any)");
    ModelProfile p;
    p.provider = provider_from_string(e["provider"].is_string() ? e["provider"].get<std::string>() : "", where + ".provider");
    p.match = e["match"].get<std::string>();
    try {
      p.temperature = e.value("temperature", p.temperature);
      p.top_p = e.value("top_p", p.top_p);
      p.sampling_exclusive = e.value("sampling_exclusive", p.sampling_exclusive);
      p.max_tokens_field = e.value("max_tokens_field", p.max_tokens_field);
      if (const json& effort = e.value("reasoning_effort", json(false)); effort.is_array()) {
        p.reasoning_efforts = effort.get<std::vector<std::string>>();
        p.reasoning_effort = true;
        if (p.reasoning_efforts.empty()) throw InputError(where + ".reasoning_effort lists no value");
      } else {
        p.reasoning_effort = effort.get<bool>();
        if (p.reasoning_effort) p.reasoning_efforts = {"low", "medium", "high"};
      }
      p.thinking = e.value("thinking", p.thinking);
      p.prices = e.value("prices", json());
    } catch (const json::exception& bad) {
      throw InputError(fmt::format("{}: {}", where, bad.what()));
    }
    if (!p.prices.is_null() && !is_price(p.prices, true)) {
      throw InputError(where + ".prices is {\"prompt\": $, \"cached\": $, \"completion\": $} per million tokens");
    }
    if (p.max_tokens_field != "max_tokens" && p.max_tokens_field != "max_completion_tokens")
      throw InputError(where + ".max_tokens_field is max_tokens or max_completion_tokens, not '" + p.max_tokens_field + "'");
    p.origin = origin;
    entries_.push_back(std::move(p));
  }
}

ModelProfiles ModelProfiles::load(const std::vector<std::filesystem::path>& overrides) {
  ModelProfiles out;
  std::vector<std::filesystem::path> files = {default_profiles_file()};
  files.insert(files.end(), overrides.begin(), overrides.end());
  for (const auto& f : files) {
    if (!std::filesystem::exists(f)) throw InputError("model profiles: no file " + f.string());
    const json table = json::parse(read_file(f), nullptr, false);
    if (table.is_discarded()) throw InputError("model profiles: " + f.string() + " is not JSON");
    out.add(table, f.string());
  }
  return out;
}

namespace {

// `match` names `model` or its family: the name itself, or the name then "-", ".", ":", "/" or
// "@" and more ("o3" matches "o3-mini", not "o3x").
bool matches(const std::string& match, const std::string& model) {
  if (match.empty()) return true;
  if (model.rfind(match, 0) != 0) return false;
  return model.size() == match.size() || std::string("-.:/@").find(model[match.size()]) != std::string::npos;
}

// A price holds for the name itself, its "-latest" alias and its dated snapshots
// ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06"), not for a variant ("o3-pro").
bool priced_as(const std::string& match, const std::string& model) {
  const std::string rest = model.substr(match.size());
  if (rest.empty() || rest == "-latest") return true;
  std::string digits;
  for (char c : rest) {
    if (c == '-') continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    digits += c;
  }
  return digits.size() == 8;  // -YYYYMMDD or -YYYY-MM-DD
}

}  // namespace

ModelProfile ModelProfiles::find(Provider provider, const std::string& model) const {
  const ModelProfile* best = nullptr;
  for (const ModelProfile& p : entries_)  // later entries win ties: an override replaces a shipped one
    if (p.provider == provider && matches(p.match, model) && (!best || p.match.size() >= best->match.size()))
      best = &p;
  if (best) {
    ModelProfile found = *best;
    if (!found.match.empty() && !priced_as(found.match, model)) found.prices = nlohmann::json();  // a variant: unknown
    return found;
  }
  ModelProfile fallback;
  fallback.provider = provider;
  return fallback;
}

namespace {

std::pair<int, std::string> openai_error(const std::string& message, const std::string& param, const std::string& code) {
  return {400, json{{"error", {{"message", message}, {"type", "invalid_request_error"}, {"param", param}, {"code", code}}}}.dump()};
}

std::pair<int, std::string> anthropic_error(const std::string& message) {
  return {400, json{{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", message}}}}.dump()};
}

}  // namespace

std::optional<std::pair<int, std::string>> provider_refusal(const ModelProfile& profile, const json& body) {
  const bool has_t = body.contains("temperature"), has_p = body.contains("top_p");
  if (profile.provider == Provider::anthropic) {
    if (body.contains("thinking")) {
      if (!profile.thinking) return anthropic_error("thinking: this model does not support extended thinking");
      const int64_t budget = body["thinking"].value("budget_tokens", int64_t{0});
      if (budget < 1024)
        return anthropic_error("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
      if (body.value("max_tokens", int64_t{0}) <= budget)
        return anthropic_error("`max_tokens` must be greater than `thinking.budget_tokens`");
      if ((has_t && body["temperature"] != 1) || has_p)
        return anthropic_error("`temperature` may only be set to 1 when thinking is enabled, and `top_p` not at all");
    }
    if (profile.sampling_exclusive && has_t && has_p)
      return anthropic_error("`temperature` and `top_p` cannot both be specified for this model. Please use only one.");
    if (!body.contains("max_tokens")) return anthropic_error("max_tokens: Field required");
    for (const char* field : {"max_completion_tokens", "reasoning_effort"})
      if (body.contains(field)) return anthropic_error(fmt::format("{}: Extra inputs are not permitted", field));
    return std::nullopt;
  }
  if (profile.max_tokens_field == "max_completion_tokens" && body.contains("max_tokens"))
    return openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                        "'max_completion_tokens' instead.",
                        "max_tokens", "unsupported_parameter");
  for (const auto& [field, takes] : {std::pair{"temperature", profile.temperature}, std::pair{"top_p", profile.top_p}}) {
    if (takes || !body.contains(field)) continue;
    const json& v = body[field];
    if (v.is_number() && v.get<double>() == 1.0) continue;  // the default is the one value taken
    return openai_error(fmt::format("Unsupported value: '{}' does not support {} with this model. Only the default (1) "
                                    "value is supported.",
                                    field, v.dump()),
                        field, "unsupported_value");
  }
  if (!profile.reasoning_effort && body.contains("reasoning_effort"))
    return openai_error("Unrecognized request argument supplied: reasoning_effort", "reasoning_effort",
                        "unsupported_parameter");
  if (body.contains("reasoning_effort")) {
    const json& v = body["reasoning_effort"];
    const auto& ok = profile.reasoning_efforts;
    if (!v.is_string() || std::find(ok.begin(), ok.end(), v.get<std::string>()) == ok.end())
      return openai_error(fmt::format("Invalid value: {}. Supported values are: {}.",
                                      v.is_string() ? fmt::format("'{}'", v.get<std::string>()) : v.dump(), effort_list(ok)),
                          "reasoning_effort", "invalid_value");
  }
  return std::nullopt;
}

}  // namespace kmcts::llm
