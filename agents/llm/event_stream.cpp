#include "agents/llm/event_stream.hpp"

#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts::llm {

using nlohmann::json;

namespace {

LlmFailure stream_failure(int status, const std::string& type, const std::string& message) {
  LlmError e;
  e.status = status;
  e.type = type;
  e.message = message.size() > 300 ? message.substr(0, 300) + "..." : message;
  return LlmFailure(e);
}

LlmFailure unreadable(const std::string& why) { return stream_failure(200, "bad_response", "event stream: " + why); }

// The data payloads of the stream's events, in order (an event's data lines joined by "\n").
std::vector<std::string> event_data(const std::string& body) {
  std::vector<std::string> out;
  std::string data, line;
  bool has_data = false;
  std::istringstream in(body);
  auto flush = [&] {
    if (has_data) out.push_back(data);
    data.clear();
    has_data = false;
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      flush();
      continue;
    }
    if (line.rfind("data:", 0) != 0) continue;  // event:, id:, retry:, comments
    std::string value = line.substr(5);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    data += (has_data ? "\n" : "") + value;
    has_data = true;
  }
  flush();
  return out;
}

int64_t integer(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

ChatReply openai_stream(const std::vector<std::string>& events) {
  ChatReply reply;
  bool done = false;
  for (const std::string& data : events) {
    if (data == "[DONE]") {
      done = true;
      break;
    }
    const json chunk = json::parse(data, nullptr, false);
    if (!chunk.is_object()) throw unreadable("an event that is not a JSON object: " + data.substr(0, 120));
    if (chunk.contains("error") && chunk["error"].is_object())
      throw stream_failure(500, chunk["error"].value("type", "server_error"), chunk["error"].value("message", ""));
    if (chunk.contains("model") && chunk["model"].is_string()) reply.model = chunk["model"];
    if (chunk.contains("choices") && chunk["choices"].is_array() && !chunk["choices"].empty()) {
      const json& choice = chunk["choices"][0];
      const json delta = choice.value("delta", json::object());
      if (delta.contains("content") && delta["content"].is_string()) reply.text += delta["content"].get<std::string>();
      if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) reply.finish_reason = choice["finish_reason"];
    }
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      const json& u = chunk["usage"];
      reply.usage.prompt_tokens = integer(u, "prompt_tokens");
      reply.usage.completion_tokens = integer(u, "completion_tokens");
      reply.usage.cached_tokens = integer(u.value("prompt_tokens_details", json::object()), "cached_tokens");
      reply.usage.reasoning_tokens = integer(u.value("completion_tokens_details", json::object()), "reasoning_tokens");
    }
  }
  if (!done) throw unreadable("it ended before [DONE] (" + std::to_string(reply.text.size()) + " characters received)");
  return reply;
}

ChatReply anthropic_stream(const std::vector<std::string>& events) {
  ChatReply reply;
  bool done = false;
  int64_t input = 0, cached = 0, created = 0;
  for (const std::string& data : events) {
    const json e = json::parse(data, nullptr, false);
    if (!e.is_object()) throw unreadable("an event that is not a JSON object: " + data.substr(0, 120));
    const std::string type = e.value("type", "");
    if (type == "error") {
      const json err = e.contains("error") && e["error"].is_object() ? e["error"] : json::object();
      const std::string kind = err.value("type", "api_error");
      throw stream_failure(kind == "overloaded_error" ? 529 : kind == "rate_limit_error" ? 429 : 500, kind,
                           err.value("message", ""));
    }
    if (type == "message_start") {
      const json m = e.value("message", json::object());
      if (m.contains("model") && m["model"].is_string()) reply.model = m["model"];
      const json u = m.value("usage", json::object());
      input = integer(u, "input_tokens"), cached = integer(u, "cache_read_input_tokens");
      created = integer(u, "cache_creation_input_tokens");
      reply.usage.completion_tokens = integer(u, "output_tokens");
    } else if (type == "content_block_delta") {
      const json d = e.value("delta", json::object());
      if (d.value("type", "") == "text_delta" && d.contains("text") && d["text"].is_string())
        reply.text += d["text"].get<std::string>();
      else if (d.value("type", "") == "thinking_delta" && d.contains("thinking") && d["thinking"].is_string())
        reply.thinking += d["thinking"].get<std::string>();
    } else if (type == "message_delta") {
      const json d = e.value("delta", json::object());
      if (d.contains("stop_reason") && d["stop_reason"].is_string()) reply.finish_reason = d["stop_reason"];
      const json u = e.value("usage", json::object());
      if (u.contains("output_tokens")) reply.usage.completion_tokens = integer(u, "output_tokens");
    } else if (type == "message_stop") {
      done = true;
      break;
    }
  }
  if (!done) throw unreadable("it ended before message_stop (" + std::to_string(reply.text.size()) + " characters received)");
  reply.usage.cached_tokens = cached;  // as in a whole reply: cached tokens are apart from input_tokens
  reply.usage.prompt_tokens = input + cached + created;
  return reply;
}

}  // namespace

bool is_event_stream(const std::string& body) {
  // The first line that is not blank or a comment (": OPENROUTER PROCESSING" opens some streams).
  size_t start = body.find_first_not_of(" \t\r\n");
  while (start != std::string::npos && body[start] == ':') {
    const size_t end = body.find('\n', start);
    start = end == std::string::npos ? std::string::npos : body.find_first_not_of(" \t\r\n", end);
  }
  return start != std::string::npos && (body.compare(start, 5, "data:") == 0 || body.compare(start, 6, "event:") == 0);
}

ChatReply parse_event_stream(Provider p, const std::string& body) {
  const std::vector<std::string> events = event_data(body);
  ChatReply reply = p == Provider::openai ? openai_stream(events) : anthropic_stream(events);
  if (reply.text.empty() && reply.finish_reason.empty()) throw unreadable("it holds no text");
  return reply;
}

}  // namespace kmcts::llm
