#pragma once
// Streamed replies (server-sent events, "stream": true) of both wire formats, assembled into
// one ChatReply: OpenAI's chat.completion.chunk events (delta content, the finish reason, the
// usage chunk of stream_options.include_usage, then [DONE]) and Anthropic's message_start,
// content_block_delta (text_delta; thinking_delta kept apart), message_delta (stop reason,
// output tokens) and message_stop. A stream keeps the connection busy while a reasoning model
// thinks, so the transport's stall timer (silence between bytes) does not cut it off.
#include <string>

#include "agents/llm/chat.hpp"
#include "agents/llm/provider.hpp"

namespace kmcts::llm {

/// True when `body` is an event stream (its first line starts "data:" or "event:").
bool is_event_stream(const std::string& body);

/// The assembled reply. Throws LlmFailure: an error event as the provider's error (Anthropic's
/// overloaded_error as a 529, api_error as a 500: both retried), and a stream that ends before
/// its end event ([DONE], message_stop) or holds an unreadable event as a bad_response (retried).
ChatReply parse_event_stream(Provider p, const std::string& body);

}  // namespace kmcts::llm
