#include "agents/llm/wire.hpp"

#include "agents/llm/event_stream.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"

namespace kmcts::llm {

using nlohmann::json;

nlohmann::json Usage::to_json() const {
  return {{"prompt_tokens", prompt_tokens}, {"cached_tokens", cached_tokens},
          {"completion_tokens", completion_tokens}, {"reasoning_tokens", reasoning_tokens}};
}

std::string LlmError::to_string() const {
  std::string out = status ? fmt::format("HTTP {}", status) : std::string("no response");
  if (!type.empty()) out += " " + type;
  if (!code.empty()) out += " (" + code + ")";
  if (!message.empty()) out += ": " + message;
  return out;
}

Provider provider_from_string(const std::string& name, const std::string& option) {
  if (name == "openai") return Provider::openai;
  if (name == "anthropic") return Provider::anthropic;
  throw InputError(fmt::format("{}: unknown provider '{}' (known: openai, anthropic)", option, name));
}

const char* to_string(Provider p) { return p == Provider::openai ? "openai" : "anthropic"; }

namespace {

std::string endpoint(std::string base, const char* path) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) base.resize(base.size() - 3);
  return base + path;
}

std::string shorten(std::string text, size_t limit = 300) {
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

LlmFailure bad_response(const std::string& why, const std::string& body) {
  LlmError e;
  e.status = 200;
  e.type = "bad_response";
  e.message = why + ": " + shorten(body, 200);
  return LlmFailure(e);
}

int64_t int_at(const json& j, const char* a, const char* b = nullptr) {
  const json* v = j.is_object() && j.contains(a) ? &j.at(a) : nullptr;
  if (v && b) v = v->is_object() && v->contains(b) ? &v->at(b) : nullptr;
  return v && v->is_number_integer() ? v->get<int64_t>() : 0;
}

std::string string_at(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

}  // namespace

namespace {

// The sampling parameters, the completion budget and reasoning_effort as the model takes them.
void add_generation_fields(json& body, const ChatRequest& r, const ModelProfile& profile) {
  body[profile.max_tokens_field] = r.max_tokens;
  if (profile.thinking && r.thinking_budget > 0) {  // thinking takes no sampling parameters
    body["thinking"] = {{"type", "enabled"}, {"budget_tokens", r.thinking_budget}};
    return;
  }
  if (profile.temperature) body["temperature"] = r.temperature;
  if (profile.top_p && !(profile.sampling_exclusive && profile.temperature)) body["top_p"] = r.top_p;
  if (profile.reasoning_effort && !r.reasoning_effort.empty()) body["reasoning_effort"] = r.reasoning_effort;
}

}  // namespace

HttpRequest build_request(Provider p, const std::string& base_url, const ChatRequest& r, const ModelProfile& profile,
                          bool stream) {
  HttpRequest out;
  out.headers["content-type"] = "application/json";
  json messages = json::array();
  if (p == Provider::openai) {
    out.url = endpoint(base_url, "/v1/chat/completions");
    if (!r.system.empty()) messages.push_back({{"role", "system"}, {"content", r.system}});
    for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    // The default profile sends both sampling parameters explicitly (local servers have other
    // defaults: REFERENCE.md) and max_tokens, which every OpenAI-compatible server reads.
    json body = {{"model", r.model}, {"messages", messages}, {"stream", stream}};
    if (stream) body["stream_options"] = {{"include_usage", true}};  // the usage arrives as a last chunk
    add_generation_fields(body, r, profile);
    out.body = body.dump();
  } else {
    out.url = endpoint(base_url, "/v1/messages");
    out.headers["anthropic-version"] = "2023-06-01";
    for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", r.model}, {"messages", messages}};
    if (stream) body["stream"] = true;
    add_generation_fields(body, r, profile);
    if (!r.system.empty()) body["system"] = r.system;
    out.body = body.dump();
  }
  return out;
}

std::pair<std::string, std::string> auth_header(Provider p, const std::string& key) {
  if (p == Provider::openai) return {"authorization", "Bearer " + key};
  return {"x-api-key", key};
}

ChatReply parse_reply(Provider p, const std::string& body) {
  if (is_event_stream(body)) return parse_event_stream(p, body);
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw bad_response("reply is not a JSON object", body);
  ChatReply reply;
  reply.model = string_at(j, "model");
  const json usage = j.value("usage", json::object());
  if (p == Provider::openai) {
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty())
      throw bad_response("reply has no choices", body);
    const json& choice = j["choices"][0];
    const json message = choice.value("message", json::object());
    if (!message.contains("content") || !message["content"].is_string())
      throw bad_response("reply has no message content", body);
    reply.text = message["content"].get<std::string>();
    reply.finish_reason = string_at(choice, "finish_reason");
    reply.usage.prompt_tokens = int_at(usage, "prompt_tokens");
    reply.usage.completion_tokens = int_at(usage, "completion_tokens");
    reply.usage.cached_tokens = int_at(usage, "prompt_tokens_details", "cached_tokens");
    reply.usage.reasoning_tokens = int_at(usage, "completion_tokens_details", "reasoning_tokens");
  } else {
    if (!j.contains("content") || !j["content"].is_array()) throw bad_response("reply has no content blocks", body);
    bool any = false;
    for (const json& block : j["content"]) {
      if (block.is_object() && block.value("type", "") == "text" && block.contains("text") && block["text"].is_string()) {
        reply.text += block["text"].get<std::string>();
        any = true;
      }
      // Extended thinking: the model's reasoning, kept apart from the answer.
      if (block.is_object() && block.value("type", "") == "thinking" && block.contains("thinking") &&
          block["thinking"].is_string())
        reply.thinking += block["thinking"].get<std::string>();
    }
    if (!any) throw bad_response("reply has no text block", body);
    reply.finish_reason = string_at(j, "stop_reason");
    // Anthropic counts cached prompt tokens apart from input_tokens.
    reply.usage.cached_tokens = int_at(usage, "cache_read_input_tokens");
    reply.usage.prompt_tokens = int_at(usage, "input_tokens") + reply.usage.cached_tokens +
                                int_at(usage, "cache_creation_input_tokens");
    reply.usage.completion_tokens = int_at(usage, "output_tokens");
  }
  return reply;
}

LlmError parse_error(int status, const std::string& body, const std::map<std::string, std::string>& headers) {
  LlmError e;
  e.status = status;
  e.retry_after_s = retry_after_seconds(headers);
  json j = json::parse(body, nullptr, false);
  const json* err = nullptr;
  if (j.is_object() && j.contains("error") && j["error"].is_object()) err = &j["error"];  // OpenAI, Anthropic
  else if (j.is_object() && j.value("object", "") == "error") err = &j;                   // flat (local servers)
  if (err) {
    e.type = string_at(*err, "type");
    e.message = shorten(string_at(*err, "message"));
    if (err->contains("code")) e.code = (*err)["code"].is_string() ? (*err)["code"].get<std::string>() : (*err)["code"].dump();
    if (e.code == "null") e.code.clear();
  } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    e.message = shorten(j["error"].get<std::string>());  // {"error": "text"} (Ollama, llama.cpp)
  } else {
    e.message = shorten(body);
  }
  return e;
}

std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers) {
  auto number = [](const std::string& text) -> std::optional<double> {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || v < 0 || !std::isfinite(v)) return std::nullopt;
    return v;
  };
  std::optional<double> s;
  if (auto it = headers.find("retry-after-ms"); it != headers.end())
    if (auto ms = number(it->second)) s = *ms / 1000;
  if (!s)
    if (auto it = headers.find("retry-after"); it != headers.end()) s = number(it->second);
  if (s) s = std::min(*s, 120.0);
  return s;
}

}  // namespace kmcts::llm
