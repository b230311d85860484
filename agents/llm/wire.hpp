#pragma once
// Wire formats of the two provider families (REFERENCE.md, "LLM wire formats"):
//   openai     POST {base}/v1/chat/completions, Authorization: Bearer KEY (also vLLM, SGLang,
//              llama.cpp, Ollama)
//   anthropic  POST {base}/v1/messages, x-api-key: KEY, anthropic-version: 2023-06-01
// Building a request never sees the key: the transport adds the auth header from the
// environment at send time, so nothing built here can leak it into a log or the store.
#include <map>
#include <string>

#include "agents/llm/chat.hpp"
#include "agents/llm/model_profile.hpp"
#include "agents/llm/provider.hpp"

namespace kmcts::llm {

struct HttpRequest {
  std::string url;
  std::map<std::string, std::string> headers;  // lower-case names; no auth header
  std::string body;
};

/// `base_url` without a trailing "/v1" (both "http://h:8000" and "http://h:8000/v1" work).
/// Sampling parameters, the completion budget's field and reasoning_effort go out as `profile`
/// (the model's, model_profile.hpp) allows; the default profile sends temperature, top_p and
/// max_tokens, as any OpenAI-compatible server takes them. `stream`: the reply comes as
/// server-sent events (event_stream.hpp), which parse_reply assembles.
HttpRequest build_request(Provider p, const std::string& base_url, const ChatRequest& request,
                          const ModelProfile& profile = {}, bool stream = false);
/// The auth header of the provider for `key` (name, value).
std::pair<std::string, std::string> auth_header(Provider p, const std::string& key);

/// Parses a 2xx body, a whole reply or an event stream. Throws LlmFailure (status 200, type "bad_response") for a body that is
/// not the provider's reply shape: malformed JSON, no choices, no text.
ChatReply parse_reply(Provider p, const std::string& body);
/// Parses an error reply: {"error": {message, type, code}}, Anthropic's {"type": "error",
/// "error": {type, message}}, the flat {"object": "error", message, type, code} of some local
/// servers, or any other body (kept, shortened, as the message). `headers` (lower-case names)
/// give retry-after-ms / retry-after.
LlmError parse_error(int status, const std::string& body, const std::map<std::string, std::string>& headers);

/// Retry-after from headers, in seconds: retry-after-ms, else Retry-After (seconds; an
/// HTTP date is not honoured), capped at 120 s. nullopt if absent or unreadable.
std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers);

}  // namespace kmcts::llm
