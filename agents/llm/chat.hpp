#pragma once
// The provider-neutral shape of one LLM call: what a role asks, what comes back, and what
// went wrong. Wire formats (wire.hpp) translate these to and from each provider's JSON.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts::llm {

struct ChatMessage {
  std::string role;  // "user" or "assistant" (the system prompt is ChatRequest::system)
  std::string content;
};

struct ChatRequest {
  std::string model;
  std::string system;
  std::vector<ChatMessage> messages;
  double temperature = 0.7;
  double top_p = 1.0;
  int max_tokens = 4096;
  std::string reasoning_effort;  // "" = not sent; "low", "medium", "high" where the model takes it
  int thinking_budget = 0;       // Anthropic's extended thinking budget in tokens; 0 = off
  /// Which sample of this exact request (0, 1, ...): the cassette key includes it, so k
  /// identical requests replay k recorded replies, whatever order they complete in.
  uint64_t sample = 0;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;      // of the prompt, served from the provider's cache
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;   // of the completion, spent on hidden reasoning
  nlohmann::json to_json() const;
};

struct ChatReply {
  std::string text;
  std::string finish_reason;  // "stop", "length", "end_turn", ...
  std::string model;          // as the provider reports it
  Usage usage;
  std::string thinking;       // a model's visible reasoning (Anthropic's thinking blocks), apart from text
};

/// A failed call, as parsed from the provider's reply (or the transport).
struct LlmError {
  int status = 0;             // HTTP status; 0 = no response (connection error, timeout)
  std::string type;           // provider error type, e.g. "rate_limit_error", "overloaded_error"
  std::string code;           // provider error code, e.g. "insufficient_quota"
  std::string message;
  std::optional<double> retry_after_s;  // from retry-after-ms / Retry-After
  /// One line for logs and the store: status, type, code and message (never a key).
  std::string to_string() const;
};

/// An LlmError thrown (by reply parsing, or a client out of retries).
class LlmFailure : public std::runtime_error {
 public:
  explicit LlmFailure(LlmError e) : std::runtime_error(e.to_string()), error(std::move(e)) {}
  LlmError error;
};

}  // namespace kmcts::llm

namespace kmcts::llm {

/// What one chat() did, for the run store: every attempt's error, the usage, the time.
struct CallRecord {
  std::string role;            // planner, coder, debugger
  std::string model;
  int attempts = 0;            // HTTP requests sent (0: answered from the cassette)
  std::vector<std::string> errors;  // one line per failed attempt
  Usage usage;
  double dollars = 0;
  double seconds = 0;          // wall time, waits and retries included
  std::string cassette;        // "", "hit" or "recorded"
  size_t prompt_tokens_estimate = 0;  // before sending (prompt_budget.hpp); usage has the provider's count
  nlohmann::json to_json() const;
};

}  // namespace kmcts::llm
