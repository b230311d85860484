// Streamed replies (agents/llm/event_stream.hpp): both wire formats' server-sent events
// assembled into one reply, their failures, and a slow stream that outlives the stall timer.
#include <doctest/doctest.h>

#include "agents/llm/event_stream.hpp"
#include "agents/llm/http_transport.hpp"
#include "agents/llm/llm_client.hpp"
#include "agents/llm/mock_server.hpp"
#include "agents/llm/retry.hpp"
#include "agents/llm/wire.hpp"
#include "agents/roles.hpp"
#include "search/progress.hpp"

#include <future>
#include <thread>

using namespace kmcts::llm;
using nlohmann::json;

namespace {

const char* kOpenAi =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-5\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Here is \"},\"finish_reason\":null}]}\n\n"
    ": keep-alive comment\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"the kernel.\"},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":900,\"prompt_tokens_details\":"
    "{\"cached_tokens\":100},\"completion_tokens_details\":{\"reasoning_tokens\":850}}}\n\n"
    "data: [DONE]\n\n";

const char* kAnthropic =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":"
    "{\"input_tokens\":50,\"cache_read_input_tokens\":30,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
    "\"thinking\":\"The loads are strided...\"}}\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\","
    "\"text\":\"```cuda\\n__global__ void k() {}\\n```\"}}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":"
    "{\"output_tokens\":640}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

// A streaming endpoint on `server` with this stall timer and retry count.
EndpointSettings streaming(const MockLlmServer& server, double stall_s, int retries) {
  EndpointSettings e;
  e.base_url = server.base_url();
  e.timeouts.stall_s = stall_s;
  e.retry.max_retries = retries;
  e.retry.base_s = 0.01;
  e.stream = true;
  return e;
}

ChatRequest ask(const std::string& text) {
  ChatRequest r;
  r.model = "gpt-4o-mini";
  r.messages = {{"user", text}};
  return r;
}

}  // namespace

TEST_CASE("llm stream: OpenAI's chunks and Anthropic's events assemble into one reply") {
  CHECK(is_event_stream(kOpenAi));
  CHECK(is_event_stream(kAnthropic));
  CHECK_FALSE(is_event_stream("{\"choices\": []}"));
  const ChatReply o = parse_reply(Provider::openai, kOpenAi);
  CHECK(o.text == "Here is the kernel.");
  CHECK(o.finish_reason == "stop");
  CHECK(o.model == "gpt-5");
  CHECK(o.usage.prompt_tokens == 120);
  CHECK(o.usage.cached_tokens == 100);
  CHECK(o.usage.reasoning_tokens == 850);
  const ChatReply a = parse_reply(Provider::anthropic, kAnthropic);
  CHECK(a.text == "```cuda\n__global__ void k() {}\n```");
  CHECK(a.thinking == "The loads are strided...");  // kept apart from the answer
  CHECK(a.finish_reason == "end_turn");
  CHECK(a.usage.prompt_tokens == 80);
  CHECK(a.usage.cached_tokens == 30);
  CHECK(a.usage.completion_tokens == 640);
}

TEST_CASE("llm stream: an error event is the provider's error, a cut stream a retried bad response") {
  const std::string overloaded =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n"
      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
  try {
    parse_reply(Provider::anthropic, overloaded);
    FAIL("no throw");
  } catch (const LlmFailure& f) {
    CHECK(f.error.status == 529);
    CHECK(f.error.type == "overloaded_error");
    CHECK(RetryPolicy::retryable(f.error));
  }
  const std::string cut(kOpenAi, std::string(kOpenAi).find("data: [DONE]"));
  try {
    parse_reply(Provider::openai, cut);
    FAIL("no throw");
  } catch (const LlmFailure& f) {
    CHECK(f.error.type == "bad_response");
    CHECK(std::string(f.what()).find("ended before [DONE]") != std::string::npos);
    CHECK(RetryPolicy::retryable(f.error));
  }
  CHECK_THROWS_AS(parse_reply(Provider::anthropic, "event: message_start\ndata: not json\n\n"), LlmFailure);
}

TEST_CASE("llm stream: a reply slower in all than the stall timer arrives when streamed, and stalls when not") {
  MockFaults faults;
  faults.rate_slow_stream = 1.0;  // every streamed reply takes slow_s, in small gaps
  faults.rate_slow = 0.0;
  faults.slow_s = 1.2;
  MockLlmServer server(0, [](const std::string&, const std::string&, const std::string& user) { return "```\n" + user + "\n```"; },
                       faults);
  EndpointSettings e = streaming(server, 0.5, 0);
  const ChatRequest r = ask("think for a long time");
  HttpLlmClient streamed(e, std::make_shared<HttpTransport>(e.timeouts));
  CallRecord record;
  CHECK(streamed.chat(r, record).text == "```\nthink for a long time\n```");
  CHECK(record.attempts == 1);
  CHECK(record.seconds >= 1.0);  // longer than the stall timer in all
  CHECK(json::parse(server.last_body())["stream"] == true);
  // The same reply unstreamed: silence until it is whole, so the stall timer cuts it off.
  MockFaults silent;
  silent.rate_slow = 1.0;
  silent.slow_s = 1.2;
  MockLlmServer quiet(0, [](const std::string&, const std::string&, const std::string&) { return "```\nx\n```"; }, silent);
  e.base_url = quiet.base_url();
  e.stream = false;
  HttpLlmClient whole(e, std::make_shared<HttpTransport>(e.timeouts));
  CallRecord stalled;
  try {
    whole.chat(r, stalled);
    FAIL("no throw");
  } catch (const LlmFailure& f) {
    CHECK(std::string(f.what()).find("stalled") != std::string::npos);
  }
}

TEST_CASE("llm stream: a stream cut mid-way is a retried failure, never a half reply") {
  MockFaults faults;
  faults.rate_cut_stream = 1.0;
  MockLlmServer server(0, [](const std::string&, const std::string&, const std::string&) {
    return std::string("```python\nclass ModelNew:\n    pass\n```\nA long explanation of the kernel follows here.");
  }, faults);
  const EndpointSettings e = streaming(server, 5, 2);
  HttpLlmClient client(e, std::make_shared<HttpTransport>(e.timeouts));
  CallRecord record;
  try {
    client.chat(ask("write it"), record);
    FAIL("a cut stream was taken as a reply");
  } catch (const LlmFailure& f) {
    CHECK(RetryPolicy::retryable(f.error));
    CHECK(record.attempts == 3);  // every attempt was cut, and each was retried
  }
  CHECK(server.stats().requests == 3);
}

TEST_CASE("llm stream: a reply arriving shows on the progress line as it grows") {
  MockFaults faults;
  faults.rate_slow_stream = 1.0;
  faults.slow_s = 1.0;
  MockLlmServer server(0, [](const std::string&, const std::string&, const std::string&) {
    return "```python\n" + std::string(4000, '#') + "\n```";
  }, faults);
  const EndpointSettings e = streaming(server, 60, 0);
  const ChatRequest r = ask("write it");
  HttpLlmClient client(e, std::make_shared<HttpTransport>(e.timeouts));
  CHECK(kmcts::agent_activity().llm_requests == 0);
  auto reply = std::async(std::launch::async, [&] {
    CallRecord record;
    return client.chat(r, record).text;
  });
  kmcts::AgentActivity seen;
  while (reply.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    const auto now = kmcts::agent_activity();
    if (now.llm_requests == 1 && now.llm_reply_bytes > seen.llm_reply_bytes) seen = now;
  }
  CHECK(reply.get().size() > 4000);
  CHECK(seen.llm_requests == 1);
  CHECK(seen.llm_reply_bytes > 0);  // seen part-way, before the reply was whole
  CHECK(kmcts::agent_activity().llm_requests == 0);
  CHECK(kmcts::agent_activity().llm_reply_bytes == 0);
  kmcts::ProgressState p;
  p.budget = 10;
  p.llm_requests = seen.llm_requests;
  p.llm_reply_bytes = 2500;
  CHECK(kmcts::format_progress(p).find("llm 1 replying 2.5 kB") != std::string::npos);
  p.llm_requests = 0;
  CHECK(kmcts::format_progress(p).find("llm") == std::string::npos);
}
