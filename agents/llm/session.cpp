#include "agents/llm/session.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "agents/llm/prompt_budget.hpp"

#include "core/error.hpp"

KMCTS_OPTION("agents.llm.provider", String, "openai", std::nullopt, std::nullopt,
             "LLM wire format: openai (OpenAI and every OpenAI-compatible server: vLLM, SGLang, llama.cpp, Ollama) or anthropic.")
KMCTS_OPTION("agents.llm.base_url", String, "https://api.openai.com", std::nullopt, std::nullopt,
             "Endpoint base URL, with or without /v1 (e.g. http://127.0.0.1:8000 for a local server, https://api.anthropic.com).")
KMCTS_OPTION("agents.llm.api_key_env", String, "OPENAI_API_KEY", std::nullopt, std::nullopt,
             "Name of the environment variable holding the API key (the key itself is never put in a config, log or store; "
             "unset or empty = no auth header, for local servers).")
KMCTS_OPTION("agents.llm.model", String, "gpt-4o-mini", std::nullopt, std::nullopt, "Model of every role that names none.")
KMCTS_OPTION("agents.llm.planner.model", String, "", std::nullopt, std::nullopt, "Planner model (empty = agents.llm.model).")
KMCTS_OPTION("agents.llm.coder.model", String, "", std::nullopt, std::nullopt, "Coder model (empty = agents.llm.model).")
KMCTS_OPTION("agents.llm.debugger.model", String, "", std::nullopt, std::nullopt, "Debugger model (empty = agents.llm.model).")
KMCTS_OPTION("agents.llm.planner.temperature", Double, 0.8, 0.0, 2.0, "Planner sampling temperature (diverse plans).")
KMCTS_OPTION("agents.llm.coder.temperature", Double, 0.2, 0.0, 2.0, "Coder sampling temperature (faithful code).")
KMCTS_OPTION("agents.llm.debugger.temperature", Double, 0.2, 0.0, 2.0, "Debugger sampling temperature.")
KMCTS_OPTION("agents.llm.planner.max_tokens", Int, 1024, 1, 1000000, "Planner completion budget per call.")
KMCTS_OPTION("agents.llm.coder.max_tokens", Int, 8192, 1, 1000000, "Coder completion budget per call.")
KMCTS_OPTION("agents.llm.debugger.max_tokens", Int, 8192, 1, 1000000, "Debugger completion budget per call.")
KMCTS_OPTION("agents.llm.top_p", Double, 1.0, 0.0, 1.0,
             "Nucleus sampling top_p of every call, sent where the model's profile takes it (explicitly to "
             "OpenAI-compatible servers, whose defaults differ; never beside temperature to Claude 4.x)")
KMCTS_OPTION("agents.llm.planner.reasoning_effort", String, "", std::nullopt, std::nullopt,
             "Planner reasoning_effort (low, medium, high; minimal too for gpt-5) for models whose profile takes it (OpenAI's reasoning "
             "models); empty = not sent")
KMCTS_OPTION("agents.llm.coder.reasoning_effort", String, "", std::nullopt, std::nullopt,
             "Coder reasoning_effort, as agents.llm.planner.reasoning_effort")
KMCTS_OPTION("agents.llm.debugger.reasoning_effort", String, "", std::nullopt, std::nullopt,
             "Debugger reasoning_effort, as agents.llm.planner.reasoning_effort")
KMCTS_OPTION("agents.llm.planner.thinking_budget", Int, 0, 0, 1000000,
             "Planner's extended-thinking budget in tokens for models whose profile takes it (Claude 4.x, 3.7 "
             "Sonnet): at least 1024 and below its max_tokens; no sampling parameter is sent with it; 0 = off")
KMCTS_OPTION("agents.llm.coder.thinking_budget", Int, 0, 0, 1000000,
             "Coder's extended-thinking budget, as agents.llm.planner.thinking_budget")
KMCTS_OPTION("agents.llm.debugger.thinking_budget", Int, 0, 0, 1000000,
             "Debugger's extended-thinking budget, as agents.llm.planner.thinking_budget")
KMCTS_OPTION("agents.llm.profiles", String, "", std::nullopt, std::nullopt,
             "A JSON file of model profiles, in the shape of the shipped configs/llm/model_profiles.json, whose "
             "entries win over the shipped ones: what a model takes on the wire (sampling parameters, max_tokens or "
             "max_completion_tokens, reasoning_effort)")
KMCTS_OPTION("agents.llm.system", String,
             "You are an expert in high-performance kernels. Answer exactly in the format the task asks for.",
             std::nullopt, std::nullopt, "System prompt of every role.")
KMCTS_OPTION("agents.llm.prompt_dir", String, "", std::nullopt, std::nullopt,
             "Folder of planner.md, coder.md and debugger.md prompt templates (empty = the shipped configs/prompts).")
KMCTS_OPTION("agents.llm.connect_timeout_s", Double, 10.0, 0.1, 600.0, "Connect timeout of each request.")
KMCTS_OPTION("agents.llm.stall_timeout_s", Double, 120.0, 0.1, 3600.0,
             "A request that receives nothing for this long is abandoned (and retried).")
KMCTS_OPTION("agents.llm.timeout_s", Double, 900.0, 1.0, 86400.0, "Whole-request timeout, reply included.")
KMCTS_OPTION("agents.llm.max_retries", Int, 6, 0, 100,
             "Retries of a call after 408/409/429/5xx/529, connection errors and unreadable replies (capped backoff, "
             "Retry-After honoured).")
KMCTS_OPTION("agents.llm.requests_per_minute", Double, 0.0, 0.0, 1.0e7, "Client-side request rate limit of the endpoint (0 = none).")
KMCTS_OPTION("agents.llm.tokens_per_minute", Double, 0.0, 0.0, 1.0e12,
             "Client-side token rate limit of the endpoint (0 = none): reserved before sending, reconciled from usage.")
KMCTS_OPTION("agents.llm.prices", Object, nlohmann::json::object(), std::nullopt, std::nullopt,
             "Dollars per million tokens by model: {\"MODEL\": {\"prompt\": 0.15, \"cached\": 0.075, \"completion\": 0.6}}. "
             "A model without a price costs 0 (and search.max_dollars then refuses to start).")
KMCTS_OPTION("agents.llm.planner.provider", String, "", std::nullopt, std::nullopt,
             "The planner's own provider (openai, anthropic); empty = agents.llm.provider")
KMCTS_OPTION("agents.llm.coder.provider", String, "", std::nullopt, std::nullopt,
             "The coder's own provider; empty = agents.llm.provider")
KMCTS_OPTION("agents.llm.debugger.provider", String, "", std::nullopt, std::nullopt,
             "The debugger's own provider; empty = agents.llm.provider")
KMCTS_OPTION("agents.llm.planner.base_url", String, "", std::nullopt, std::nullopt,
             "The planner's own endpoint, e.g. a hosted planner beside a local coder; empty = agents.llm.base_url")
KMCTS_OPTION("agents.llm.coder.base_url", String, "", std::nullopt, std::nullopt,
             "The coder's own endpoint, e.g. a local vLLM server; empty = agents.llm.base_url")
KMCTS_OPTION("agents.llm.debugger.base_url", String, "", std::nullopt, std::nullopt,
             "The debugger's own endpoint; empty = agents.llm.base_url")
KMCTS_OPTION("agents.llm.planner.api_key_env", String, "", std::nullopt, std::nullopt,
             "The environment variable of the planner's key; empty = agents.llm.api_key_env")
KMCTS_OPTION("agents.llm.coder.api_key_env", String, "", std::nullopt, std::nullopt,
             "The environment variable of the coder's key; empty = agents.llm.api_key_env")
KMCTS_OPTION("agents.llm.debugger.api_key_env", String, "", std::nullopt, std::nullopt,
             "The environment variable of the debugger's key; empty = agents.llm.api_key_env")
KMCTS_OPTION("agents.llm.stream", Bool, true, std::nullopt, std::nullopt,
             "Ask for the reply as server-sent events (both wire formats): a model that thinks for minutes keeps the "
             "connection busy, so agents.llm.stall_timeout_s counts silence between events, not the time to the "
             "whole reply; false for a server that cannot stream")
KMCTS_OPTION("agents.llm.cassette", String, "", std::nullopt, std::nullopt,
             "Cassette file (JSONL) of recorded replies, keyed by the whole request and a sample id.")
KMCTS_OPTION("agents.llm.cassette_mode", String, "off", std::nullopt, std::nullopt,
             "off, record (ask the endpoint what the cassette has no reply for and append the replies; a request it "
             "has, a repeat within the run included, gets the recorded reply, so the run replays as it ran), replay "
             "(answer from the cassette only; a miss is an error) or replay_or_record (the same as record).")

namespace kmcts::llm {

namespace {

ModelProfiles profiles_of(const Config& c) {
  const std::string extra = c.get_string("agents.llm.profiles");
  return ModelProfiles::load(extra.empty() ? std::vector<std::filesystem::path>{} : std::vector<std::filesystem::path>{extra});
}

std::string role_model(const std::string& role, const Config& c) {
  std::string m = c.get_string("agents.llm." + role + ".model");
  return m.empty() ? c.get_string("agents.llm.model") : m;
}

// agents.llm.<role>.<field> when the role has its own, else agents.llm.<field>.
std::string role_endpoint(const std::string& role, const std::string& field, const Config& c) {
  if (!role.empty())
    if (std::string own = c.get_string("agents.llm." + role + "." + field); !own.empty()) return own;
  return c.get_string("agents.llm." + field);
}

// One cassette per file, whichever endpoints its roles talk to: one writer, one index.
std::shared_ptr<Cassette> cassette_for(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Cassette>> open;
  std::lock_guard lock(mutex);
  if (auto existing = open[path].lock()) return existing;
  auto cassette = std::make_shared<Cassette>(path);
  open[path] = cassette;
  return cassette;
}

}  // namespace

std::shared_ptr<Session> Session::for_config(const Config& c, const std::string& role) {
  const CassetteMode mode = cassette_mode_from_string(c.get_string("agents.llm.cassette_mode"), "agents.llm.cassette_mode");
  const std::string cassette_path = c.get_string("agents.llm.cassette");
  if (mode != CassetteMode::off && cassette_path.empty())
    throw InputError("agents.llm.cassette: a cassette file is needed for agents.llm.cassette_mode=" + c.get_string("agents.llm.cassette_mode"));
  if (mode == CassetteMode::replay && !std::filesystem::exists(cassette_path))
    throw InputError("agents.llm.cassette: " + cassette_path + " does not exist (cassette_mode=replay reads it)");
  const double max_dollars = c.get_double("search.max_dollars");
  const nlohmann::json prices = c.get_object("agents.llm.prices");
  for (const auto& [model, p] : prices.items()) {
    if (!is_price(p, false))
      throw InputError(fmt::format("agents.llm.prices: the price of '{}' must be {{\"prompt\": $, \"cached\": $, "
                                   "\"completion\": $}} in dollars per million tokens (got {})", model, p.dump()));
  }
  const ModelProfiles profiles = profiles_of(c);
  if (max_dollars > 0)
    for (const char* r : {"planner", "coder", "debugger"}) {
      const std::string model = role_model(r, c);
      const Provider provider = provider_from_string(role_endpoint(r, "provider", c), "agents.llm.provider");
      if (!prices.contains(model) && profiles.find(provider, model).prices.is_null())
        throw InputError(fmt::format("search.max_dollars is set but model '{}' has no price: neither agents.llm.prices "
                                     "nor its profile gives one",
                                     model));
    }

  // One session per endpoint and cassette: the roles share limits, connections and the file.
  // The key holds every setting the session is built from, so two configs in one process
  // (an ablation's cells, tests) share a session only where it would be the same.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Session>> sessions;
  const std::string provider = role_endpoint(role, "provider", c), base_url = role_endpoint(role, "base_url", c),
                    key_env = role_endpoint(role, "api_key_env", c);
  const std::string key =
      nlohmann::json{provider, base_url, key_env, cassette_path, static_cast<int>(mode),
                     c.get_double("agents.llm.requests_per_minute"), c.get_double("agents.llm.tokens_per_minute"), prices,
                     c.get_string("agents.llm.profiles"), c.get_bool("agents.llm.stream"),
                     c.get_double("agents.llm.connect_timeout_s"), c.get_double("agents.llm.stall_timeout_s"),
                     c.get_double("agents.llm.timeout_s"), c.get_int("agents.llm.max_retries")}
          .dump();
  std::lock_guard lock(mutex);
  if (auto existing = sessions[key].lock()) return existing;

  auto session = std::make_shared<Session>();
  session->prices_ = prices;
  session->profiles_ = profiles;
  session->provider_ =
      provider_from_string(provider, role.empty() ? "agents.llm.provider" : "agents.llm." + role + ".provider");
  std::shared_ptr<LlmClient> http;
  if (mode != CassetteMode::replay) {
    EndpointSettings e;
    e.provider = session->provider_;
    e.base_url = base_url;
    const char* key_value = std::getenv(key_env.c_str());
    e.api_key = key_value ? key_value : "";
    e.timeouts = {c.get_double("agents.llm.connect_timeout_s"), c.get_double("agents.llm.stall_timeout_s"),
                  c.get_double("agents.llm.timeout_s")};
    e.retry.max_retries = static_cast<int>(c.get_int("agents.llm.max_retries"));
    e.requests_per_minute = c.get_double("agents.llm.requests_per_minute");
    e.tokens_per_minute = c.get_double("agents.llm.tokens_per_minute");
    e.profiles = profiles;
    e.stream = c.get_bool("agents.llm.stream");
    http = std::make_shared<HttpLlmClient>(e, std::make_shared<HttpTransport>(e.timeouts));
  }
  if (mode == CassetteMode::off) session->client_ = http;
  else session->client_ = std::make_shared<CassetteClient>(mode, cassette_for(cassette_path), http);
  sessions[key] = session;
  return session;
}

RoleSettings Session::role(const std::string& name, const Config& c) const {
  RoleSettings r;
  r.role = name;
  r.model = role_model(name, c);
  r.temperature = c.get_double("agents.llm." + name + ".temperature");
  r.max_tokens = static_cast<int>(c.get_int("agents.llm." + name + ".max_tokens"));
  r.top_p = c.get_double("agents.llm.top_p");
  r.system = c.get_string("agents.llm.system");
  r.reasoning_effort = c.get_string("agents.llm." + name + ".reasoning_effort");
  r.thinking_budget = static_cast<int>(c.get_int("agents.llm." + name + ".thinking_budget"));
  if (r.thinking_budget == 0 && r.reasoning_effort.empty()) return r;
  // What the model takes, from the profiles this session loaded (the role's own provider).
  const ModelProfile profile =
      profiles_.find(provider_from_string(role_endpoint(name, "provider", c), "agents.llm.provider"), r.model);
  if (r.thinking_budget > 0) {
    const std::string option = "agents.llm." + name + ".thinking_budget";
    if (!profile.thinking)
      throw InputError(fmt::format("{}: model '{}' takes no extended thinking (its profile: match '{}')", option, r.model,
                                   profile.match));
    if (r.thinking_budget < 1024 || r.thinking_budget >= r.max_tokens)
      throw InputError(fmt::format("{} is {}: it must be at least 1024 and below agents.llm.{}.max_tokens ({})", option,
                                   r.thinking_budget, name, r.max_tokens));
  }
  if (!r.reasoning_effort.empty() && !profile.reasoning_effort)
      throw InputError(fmt::format("agents.llm.{}.reasoning_effort: model '{}' takes none (its profile: {}, match "
                                   "'{}'); add a profile with agents.llm.profiles if it does",
                                   name, r.model, profile.origin.empty() ? "the default" : profile.origin, profile.match));
  const auto& efforts = profile.reasoning_efforts;
  if (!r.reasoning_effort.empty() && std::find(efforts.begin(), efforts.end(), r.reasoning_effort) == efforts.end())
    throw InputError(fmt::format("agents.llm.{}.reasoning_effort is '{}': model '{}' takes {} (its profile: match '{}')",
                                 name, r.reasoning_effort, r.model, effort_list(efforts), profile.match));
  return r;
}

ChatReply Session::chat(const ChatRequest& request, const std::string& role, AgentUsage& usage) {
  CallRecord record;
  record.role = role;
  record.prompt_tokens_estimate = estimate_tokens(request.system);
  for (const ChatMessage& m : request.messages) record.prompt_tokens_estimate += estimate_tokens(m.content) + 4;  // + its framing
  auto account = [&] {
    record.dollars = price(request.model, record.usage);
    usage.prompt_tokens += record.usage.prompt_tokens;
    usage.completion_tokens += record.usage.completion_tokens;
    usage.cached_tokens += record.usage.cached_tokens;
    usage.reasoning_tokens += record.usage.reasoning_tokens;
    usage.dollars += record.dollars;
    usage.calls += 1;
    usage.retries += static_cast<int>(record.errors.size());
    usage.llm_calls.push_back(record.to_json());
  };
  try {
    ChatReply reply = client_->chat(request, record);
    account();
    return reply;
  } catch (const LlmFailure&) {
    account();
    throw;
  }
}

double Session::price(const std::string& model, const llm::Usage& u) const {
  // The user's table first, then the model's profile (its provider's published price).
  const nlohmann::json p = prices_.contains(model) ? prices_[model] : profiles_.find(provider_, model).prices;
  if (!p.is_object()) return 0;
  const double prompt = p.value("prompt", 0.0), cached = p.value("cached", prompt), completion = p.value("completion", 0.0);
  return 1e-6 * (static_cast<double>(u.prompt_tokens - u.cached_tokens) * prompt +
                 static_cast<double>(u.cached_tokens) * cached + static_cast<double>(u.completion_tokens) * completion);
}

}  // namespace kmcts::llm
