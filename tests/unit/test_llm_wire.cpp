// LLM wire formats, retry policy, rate limiter and cassette: pure logic, no network.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "agents/llm/cassette.hpp"
#include "agents/llm/rate_limiter.hpp"
#include "agents/llm/retry.hpp"
#include "agents/llm/wire.hpp"
#include "core/error.hpp"
#include "scratch.hpp"

using namespace kmcts;
using namespace kmcts::llm;
using nlohmann::json;

namespace {

ChatRequest request() {
  ChatRequest r;
  r.model = "m-1";
  r.system = "You write kernels.";
  r.messages = {{"user", "make it fast"}};
  r.temperature = 0.2;
  r.top_p = 0.9;
  r.max_tokens = 1000;
  return r;
}

}  // namespace

TEST_CASE("wire: OpenAI-compatible request: endpoint, headers, explicit sampling settings, system first") {
  for (std::string base : {"http://127.0.0.1:8000", "http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"}) {
    HttpRequest h = build_request(Provider::openai, base, request());
    CHECK(h.url == "http://127.0.0.1:8000/v1/chat/completions");
  }
  HttpRequest h = build_request(Provider::openai, "https://api.example.com", request());
  CHECK(h.headers.at("content-type") == "application/json");
  CHECK_FALSE(h.headers.count("authorization"));  // added by the transport, never stored here
  json body = json::parse(h.body);
  CHECK(body["model"] == "m-1");
  CHECK(body["temperature"] == 0.2);
  CHECK(body["top_p"] == 0.9);
  CHECK(body["max_tokens"] == 1000);
  CHECK(body["stream"] == false);
  REQUIRE(body["messages"].size() == 2);
  CHECK(body["messages"][0] == json{{"role", "system"}, {"content", "You write kernels."}});
  CHECK(body["messages"][1] == json{{"role", "user"}, {"content", "make it fast"}});
  CHECK(auth_header(Provider::openai, "sk-1") == std::pair<std::string, std::string>{"authorization", "Bearer sk-1"});
}

TEST_CASE("wire: Anthropic request: /v1/messages, version header, system top-level, max_tokens") {
  HttpRequest h = build_request(Provider::anthropic, "https://api.anthropic.com/", request());
  CHECK(h.url == "https://api.anthropic.com/v1/messages");
  CHECK(h.headers.at("anthropic-version") == "2023-06-01");
  json body = json::parse(h.body);
  CHECK(body["system"] == "You write kernels.");
  CHECK(body["max_tokens"] == 1000);
  REQUIRE(body["messages"].size() == 1);
  CHECK(body["messages"][0]["role"] == "user");
  CHECK(auth_header(Provider::anthropic, "k").first == "x-api-key");
}

TEST_CASE("wire: replies of both providers with usage details") {
  ChatReply o = parse_reply(Provider::openai, R"({"model":"m-1","choices":[{"message":{"role":"assistant","content":"hi"},
    "finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":30,
    "prompt_tokens_details":{"cached_tokens":100},"completion_tokens_details":{"reasoning_tokens":12}}})");
  CHECK(o.text == "hi");
  CHECK(o.finish_reason == "stop");
  CHECK(o.usage.prompt_tokens == 120);
  CHECK(o.usage.cached_tokens == 100);
  CHECK(o.usage.completion_tokens == 30);
  CHECK(o.usage.reasoning_tokens == 12);
  // Anthropic reports cached reads and cache writes apart from input_tokens; prompt = all three.
  ChatReply a = parse_reply(Provider::anthropic, R"({"model":"c-1","content":[{"type":"text","text":"a"},
    {"type":"text","text":"b"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":90,
    "cache_creation_input_tokens":5,"output_tokens":7}})");
  CHECK(a.text == "ab");
  CHECK(a.finish_reason == "end_turn");
  CHECK(a.usage.prompt_tokens == 105);
  CHECK(a.usage.cached_tokens == 90);
  CHECK(a.usage.completion_tokens == 7);
}

TEST_CASE("wire: unusable 200 replies are bad_response failures, not crashes") {
  for (const char* body : {"not json", "{\"choices\": []}", "{\"choices\":[{\"message\":{}}]}", "[1,2]", "{\"truncated\": "}) {
    CAPTURE(body);
    try {
      parse_reply(Provider::openai, body);
      FAIL("no throw");
    } catch (const LlmFailure& f) {
      CHECK(f.error.type == "bad_response");
      CHECK(f.error.status == 200);
    }
  }
  CHECK_THROWS_AS(parse_reply(Provider::anthropic, R"({"content":[{"type":"tool_use"}]})"), LlmFailure);
}

TEST_CASE("wire: error bodies of every shape, and Retry-After headers") {
  LlmError e = parse_error(429, R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota",
    "param":null,"code":"insufficient_quota"}})", {});
  CHECK(e.status == 429);
  CHECK(e.type == "insufficient_quota");
  CHECK(e.code == "insufficient_quota");
  CHECK(e.message.find("quota") != std::string::npos);
  LlmError a = parse_error(529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", {});
  CHECK(a.type == "overloaded_error");
  CHECK(a.message == "Overloaded");
  LlmError flat = parse_error(400, R"({"object":"error","message":"bad model","type":"BadRequestError","code":400})", {});
  CHECK(flat.message == "bad model");
  CHECK(flat.code == "400");
  LlmError text = parse_error(502, "<html>Bad gateway</html>", {});
  CHECK(text.message == "<html>Bad gateway</html>");
  CHECK(parse_error(500, R"({"error":"model not loaded"})", {}).message == "model not loaded");

  CHECK(retry_after_seconds({{"retry-after-ms", "1500"}}) == doctest::Approx(1.5));
  CHECK(retry_after_seconds({{"retry-after", "3"}}) == doctest::Approx(3.0));
  CHECK(retry_after_seconds({{"retry-after-ms", "250"}, {"retry-after", "9"}}) == doctest::Approx(0.25));
  CHECK(retry_after_seconds({{"retry-after", "9999"}}) == doctest::Approx(120.0));  // capped
  CHECK_FALSE(retry_after_seconds({{"retry-after", "Wed, 21 Oct 2026 07:28:00 GMT"}}).has_value());
  CHECK_FALSE(retry_after_seconds({}).has_value());
  CHECK(parse_error(429, "{}", {{"retry-after", "2"}}).retry_after_s == 2.0);
}

TEST_CASE("retry: which failures are retried, and the backoff arithmetic") {
  auto err = [](int status, std::string code = "") {
    LlmError e;
    e.status = status;
    e.code = std::move(code);
    return e;
  };
  for (int s : {0, 408, 409, 429, 500, 502, 503, 529}) CHECK(RetryPolicy::retryable(err(s)));
  for (int s : {400, 401, 403, 404, 422}) CHECK_FALSE(RetryPolicy::retryable(err(s)));
  LlmError unreadable = err(200);
  unreadable.type = "bad_response";
  CHECK(RetryPolicy::retryable(unreadable));
  CHECK_FALSE(RetryPolicy::retryable(err(429, "insufficient_quota")));
  RetryPolicy p;  // base 0.5 s, cap 8 s; wait in [backoff/2, backoff]
  CHECK(p.wait_s(err(500), 0, 0.0) == doctest::Approx(0.25));
  CHECK(p.wait_s(err(500), 0, 1.0) == doctest::Approx(0.5));
  CHECK(p.wait_s(err(500), 3, 1.0) == doctest::Approx(4.0));
  CHECK(p.wait_s(err(500), 4, 1.0) == doctest::Approx(8.0));
  CHECK(p.wait_s(err(500), 10, 0.5) == doctest::Approx(6.0));  // capped at 8, then jitter
  LlmError told = err(429);
  told.retry_after_s = 17;
  CHECK(p.wait_s(told, 0, 0.3) == doctest::Approx(17.0));  // the server's word wins
}

TEST_CASE("rate limiter: requests and tokens per minute, reserved before sending, reconciled after") {
  RateLimiter r(/*rpm=*/60, /*tpm=*/6000);  // 1 request and 100 tokens per second
  CHECK(r.reserve(1000, 0.0) == 0);         // the bucket starts full: one minute's worth
  CHECK(r.reserve(5000, 0.0) == 0);         // 6000 of 6000 tokens used
  CHECK(r.reserve(100, 0.0) == doctest::Approx(1.0));  // 100 tokens short: 1 s at 100/s
  // The reservation stood; the reply says only 50 tokens were used: 50 come back.
  r.reconcile(100, 50);
  CHECK(r.reserve(50, 1.0) == doctest::Approx(0.0).epsilon(1e-9));  // 1 s refilled 100, -50 +50 + 100 - 50 >= 0

  RateLimiter rpm(/*rpm=*/2, /*tpm=*/0);  // tokens unlimited
  CHECK(rpm.reserve(1 << 30, 0.0) == 0);
  CHECK(rpm.reserve(0, 0.0) == 0);
  CHECK(rpm.reserve(0, 0.0) == doctest::Approx(30.0));  // the third request in the minute waits 30 s
  CHECK(rpm.reserve(0, 60.0) == doctest::Approx(0.0));   // by then two more were refilled... one used by the waiter
}

TEST_CASE("cassette: keyed by the whole request and the sample index; persisted and reloaded") {
  auto file = kmcts::test::fresh_dir("cassette") / "c.jsonl";
  ChatRequest a = request(), a1 = request(), b = request();
  a1.sample = 1;
  b.messages[0].content = "make it faster";
  CHECK(cassette_key(a) != cassette_key(a1));
  CHECK(cassette_key(a) != cassette_key(b));
  ChatRequest t = request();
  t.temperature = 0.3;
  CHECK(cassette_key(a) != cassette_key(t));
  ChatReply ra{"reply a", "stop", "m-1", {10, 0, 5, 0}, ""}, ra1{"reply a1", "stop", "m-1", {10, 0, 6, 0}, ""};
  {
    Cassette c(file);
    CHECK_FALSE(c.find(a).has_value());
    c.record(a1, ra1);  // completions arrive in any order
    c.record(a, ra);
    c.record(a, ChatReply{"ignored", "", "", {}, ""});  // first recording wins
  }
  Cassette again(file);
  CHECK(again.size() == 2);
  CHECK(again.find(a)->text == "reply a");
  CHECK(again.find(a1)->text == "reply a1");
  CHECK(again.find(a1)->usage.completion_tokens == 6);
  CHECK_FALSE(again.find(b).has_value());
  {
    std::ofstream(file, std::ios::app) << "{broken\n";
  }
  CHECK_THROWS_AS(Cassette{file}, InputError);
  std::filesystem::remove_all(file.parent_path());
}
