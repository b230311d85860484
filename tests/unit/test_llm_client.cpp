// The LLM client against the mock server: both wire formats on the wire, retries of every
// injected fault (waits recorded by a fake clock, never slept), key redaction, cassettes.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "agents/llm/llm_client.hpp"
#include "agents/llm/mock_rule_answerer.hpp"
#include "agents/llm/mock_server.hpp"
#include "agents/llm/session.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "scratch.hpp"
#include "search/run_search.hpp"

using namespace kmcts;
using namespace kmcts::llm;
using nlohmann::json;

namespace {

// Time that only moves when the client sleeps; the sleeps are kept for the test to read.
struct FakeClock : Clock {
  double t = 1000;
  std::vector<double> sleeps;
  double now_s() override { return t; }
  void sleep_s(double s) override {
    if (s <= 0) return;
    sleeps.push_back(s);
    t += s;
  }
};

ChatRequest ask(const std::string& text, int sample = 0) {
  ChatRequest r;
  r.model = "mock-model";
  r.system = "sys";
  r.messages = {{"user", text}};
  r.max_tokens = 200;
  r.sample = sample;
  return r;
}

struct Fixture {
  explicit Fixture(MockFaults faults = {}, Provider provider = Provider::openai, HttpTimeouts timeouts = {})
      : server(0, [](const std::string& p, const std::string&, const std::string& user) { return p + " says: " + user; }, faults, 7),
        clock(std::make_shared<FakeClock>()) {
    EndpointSettings e;
    e.provider = provider;
    e.base_url = server.base_url();
    e.api_key = "sk-test-0123456789";
    e.timeouts = timeouts;
    client = std::make_unique<HttpLlmClient>(e, std::make_shared<HttpTransport>(timeouts), clock);
  }
  MockLlmServer server;
  std::shared_ptr<FakeClock> clock;
  std::unique_ptr<HttpLlmClient> client;
};

}  // namespace

TEST_CASE("llm client: OpenAI-compatible call on the wire: bearer key, explicit settings, usage") {
  Fixture f;
  CallRecord record;
  ChatReply reply = f.client->chat(ask("hello"), record);
  CHECK(reply.text == "openai says: hello");
  CHECK(record.attempts == 1);
  CHECK(record.errors.empty());
  CHECK(record.usage.prompt_tokens == 100);
  CHECK(record.usage.completion_tokens > 0);
  auto headers = f.server.last_headers();
  CHECK(headers.at("authorization") == "Bearer sk-test-0123456789");
  CHECK(headers.at("content-type") == "application/json");
  json body = json::parse(f.server.last_body());
  CHECK(body["max_tokens"] == 200);
  CHECK(body["temperature"] == 0.7);
  CHECK(body["messages"][0]["role"] == "system");
}

TEST_CASE("llm client: Anthropic call on the wire: x-api-key and version headers, system top-level") {
  Fixture f({}, Provider::anthropic);
  CallRecord record;
  CHECK(f.client->chat(ask("hi"), record).text == "anthropic says: hi");
  auto headers = f.server.last_headers();
  CHECK(headers.at("x-api-key") == "sk-test-0123456789");
  CHECK(headers.at("anthropic-version") == "2023-06-01");
  CHECK_FALSE(headers.count("authorization"));
  CHECK(json::parse(f.server.last_body())["system"] == "sys");
}

TEST_CASE("llm client: every retryable fault is retried; Retry-After is honoured; backoff otherwise") {
  SUBCASE("429 with retry-after-ms: waits exactly what the server said") {
    MockFaults faults;
    faults.rate_429 = 1.0;
    Fixture f(faults);
    CallRecord record;
    CHECK_THROWS_AS(f.client->chat(ask("x"), record), LlmFailure);
    CHECK(record.attempts == 7);  // 1 + 6 retries
    REQUIRE(f.clock->sleeps.size() == 6);
    for (double s : f.clock->sleeps) CHECK(s == doctest::Approx(0.05));
    CHECK(record.errors.front().find("HTTP 429 rate_limit_error") == 0);
  }
  SUBCASE("500 and 529: capped exponential backoff with jitter") {
    for (bool overloaded : {false, true}) {
      MockFaults faults;
      (overloaded ? faults.rate_529 : faults.rate_500) = 1.0;
      Fixture f(faults);
      CallRecord record;
      CHECK_THROWS_AS(f.client->chat(ask("x"), record), LlmFailure);
      REQUIRE(f.clock->sleeps.size() == 6);
      const double backoff[] = {0.5, 1, 2, 4, 8, 8};
      for (size_t i = 0; i < 6; ++i) {
        CHECK(f.clock->sleeps[i] >= backoff[i] / 2 - 1e-9);
        CHECK(f.clock->sleeps[i] <= backoff[i] + 1e-9);
      }
      CHECK(record.errors.back().find(overloaded ? "HTTP 529 overloaded_error" : "HTTP 500") == 0);
    }
  }
  SUBCASE("malformed and truncated bodies are retried too, and the call then succeeds") {
    for (int which = 0; which < 2; ++which) {
      MockFaults faults;
      (which ? faults.rate_truncated : faults.rate_malformed) = 0.3;
      Fixture f(faults);
      int retried = 0;
      for (int i = 0; i < 15; ++i) {
        CallRecord record;
        CHECK(f.client->chat(ask(fmt::format("q{}", i)), record).text == fmt::format("openai says: q{}", i));
        retried += record.attempts - 1;
      }
      CHECK(retried > 0);  // fault draws are keyed by (seed 7, request number): some hit
    }
  }
}

TEST_CASE("llm client: a reply slower than the stall timeout is abandoned and retried") {
  MockFaults faults;
  faults.rate_slow = 0.5;
  faults.slow_s = 4;
  HttpTimeouts t;
  t.stall_s = 1;
  Fixture f(faults, Provider::openai, t);
  CallRecord record;
  int attempts = 0;
  for (int i = 0; i < 3; ++i) {
    CallRecord r;
    CHECK(f.client->chat(ask(fmt::format("s{}", i)), r).text == fmt::format("openai says: s{}", i));
    attempts += r.attempts;
    for (const auto& e : r.errors) CHECK(e.find("no response") == 0);
  }
  CHECK(attempts > 3);
}

TEST_CASE("llm client: fatal errors fail at once, and the key never appears in an error") {
  Fixture f;
  f.server.require_key("sk-the-right-one");
  CallRecord record;
  try {
    f.client->chat(ask("x"), record);
    FAIL("no throw");
  } catch (const LlmFailure& e) {
    CHECK(e.error.status == 401);
    CHECK(std::string(e.what()).find("sk-test-0123456789") == std::string::npos);
    CHECK(std::string(e.what()).find("[redacted]") != std::string::npos);
    CHECK(std::string(e.what()).find("api_key_env") != std::string::npos);
  }
  CHECK(record.attempts == 1);
  for (const auto& e : record.errors) CHECK(e.find("sk-test-0123456789") == std::string::npos);
  // A connection refused is retried, then reported without the key either.
  EndpointSettings e;
  e.base_url = "http://127.0.0.1:1";
  e.api_key = "sk-test-0123456789";
  e.retry.max_retries = 1;
  HttpLlmClient refused(e, std::make_shared<HttpTransport>(HttpTimeouts{}), std::make_shared<FakeClock>());
  CallRecord r2;
  CHECK_THROWS_AS(refused.chat(ask("x"), r2), LlmFailure);
  CHECK(r2.attempts == 2);
  CHECK(r2.errors[0].find("no response") == 0);
}

TEST_CASE("llm client: record, then replay offline with the server gone; a miss is a clear error") {
  auto file = kmcts::test::fresh_dir("llm-cassette") / "c.jsonl";
  {
    Fixture f;
    CassetteClient recorder(CassetteMode::record, std::make_shared<Cassette>(file),
                            std::shared_ptr<LlmClient>(f.client.release()));
    CallRecord r;
    CHECK(recorder.chat(ask("one"), r).text == "openai says: one");
    CHECK(r.cassette == "recorded");
    CHECK(recorder.chat(ask("one", 1), r).text == "openai says: one");  // a second sample
  }
  {  // The mock server can answer from the same cassette, by prompt.
    MockLlmServer from_tape(0, cassette_answerer(file.string()));
    EndpointSettings e;
    e.base_url = from_tape.base_url();
    HttpLlmClient client(e, std::make_shared<HttpTransport>(HttpTimeouts{}), std::make_shared<FakeClock>());
    CallRecord r;
    CHECK(client.chat(ask("one"), r).text == "openai says: one");
    CHECK(client.chat(ask("never asked"), r).text.find("no reply for this prompt") != std::string::npos);
  }
  CassetteClient player(CassetteMode::replay, std::make_shared<Cassette>(file), nullptr);
  CallRecord r;
  CHECK(player.chat(ask("one", 1), r).text == "openai says: one");  // any order
  CHECK(r.cassette == "hit");
  CHECK(r.attempts == 0);
  CHECK(player.chat(ask("one"), r).usage.prompt_tokens == 100);
  try {
    player.chat(ask("two"), r);
    FAIL("no throw");
  } catch (const LlmFailure& e) {
    CHECK(e.error.type == "cassette_miss");
    CHECK(std::string(e.what()).find("c.jsonl") != std::string::npos);
  }
  std::filesystem::remove_all(file.parent_path());
}

namespace {

// A model that never answers the same way twice, and may be slow.
struct ChangingClient : LlmClient {
  std::atomic<int> calls{0};
  int delay_ms = 0;
  ChatReply chat(const ChatRequest& request, CallRecord&) override {
    const int n = ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ChatReply r;
    r.text = fmt::format("reply {} to {}", n, request.messages.at(0).content);
    return r;
  }
};

}  // namespace

TEST_CASE("llm client: under record, a repeated request gets the recorded reply, and the same request in flight is asked once") {
  auto file = kmcts::test::fresh_dir("llm-cassette-repeat") / "c.jsonl";
  auto model = std::make_shared<ChangingClient>();
  model->delay_ms = 50;
  CassetteClient recorder(CassetteMode::record, std::make_shared<Cassette>(file), model);
  // Four identical requests at once (lockstep agents asking the same question): one call.
  std::vector<std::string> texts(4);
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&, i] {
      CallRecord r;
      texts[static_cast<size_t>(i)] = recorder.chat(ask("same"), r).text;
    });
  for (auto& t : callers) t.join();
  CHECK(model->calls.load() == 1);
  for (const auto& t : texts) CHECK(t == "reply 1 to same");
  // Asked again later in the run: the recorded reply, which is what a replay gives.
  CallRecord r;
  CHECK(recorder.chat(ask("same"), r).text == "reply 1 to same");
  CHECK(r.cassette == "hit");
  CHECK(recorder.chat(ask("other"), r).text == "reply 2 to other");
  CHECK(r.cassette == "recorded");
  CHECK(model->calls.load() == 2);
  CassetteClient player(CassetteMode::replay, std::make_shared<Cassette>(file), nullptr);
  CHECK(player.chat(ask("same"), r).text == "reply 1 to same");
  CHECK(player.chat(ask("other"), r).text == "reply 2 to other");
  std::filesystem::remove_all(file.parent_path());
}

TEST_CASE("llm client: a failed call in flight lets the next identical request ask again") {
  auto file = kmcts::test::fresh_dir("llm-cassette-fail") / "c.jsonl";
  struct FailOnce : LlmClient {
    std::atomic<int> calls{0};
    ChatReply chat(const ChatRequest&, CallRecord&) override {
      if (++calls == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        LlmError e;
        e.type = "server_error";
        e.message = "gone";
        throw LlmFailure(e);
      }
      ChatReply r;
      r.text = "second";
      return r;
    }
  };
  auto model = std::make_shared<FailOnce>();
  CassetteClient recorder(CassetteMode::record, std::make_shared<Cassette>(file), model);
  // Two identical requests, the second (usually) while the first is in flight: whichever asks
  // first fails, and the other then asks itself, whatever the order.
  std::atomic<int> failures{0};
  std::vector<std::string> got(2);
  auto call = [&](int i) {
    CallRecord r;
    try {
      got[static_cast<size_t>(i)] = recorder.chat(ask("q"), r).text;
    } catch (const LlmFailure&) {
      failures++;
    }
  };
  std::thread first(call, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  call(1);
  first.join();
  CHECK(failures.load() == 1);
  CHECK(got[0] + got[1] == "second");
  CHECK(model->calls.load() == 2);
  std::filesystem::remove_all(file.parent_path());
}

TEST_CASE("llm agents: a whole search through the mock server; token and dollar budgets stop it cleanly") {
  Problem problem = load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space");
  MockLlmServer server(0, rule_answerer(problem));
  auto run = [&](const std::string& name, std::vector<std::string> settings) {
    RunRequest r;
    r.problem_dir = problem.dir;
    r.config.set("evaluator.name=synthetic");
    r.config.set("agents.backend=llm");
    r.config.set("agents.llm.api_key_env=KMCTS_TEST_NO_SUCH_VARIABLE");
    r.config.set_value("agents.llm.base_url", server.base_url(), "test");
    r.config.set_value("search.budget", 30, "test");
    r.config.set_value("search.workers", 1, "test");
    for (const auto& s : settings) r.config.set(s);
    r.run_dir = kmcts::test::fresh_dir("llm-search-" + name);
    r.progress = false;
    auto summary = run_search(r);
    std::filesystem::remove_all(r.run_dir);
    return summary;
  };
  auto full = run("full", {});
  CHECK(full["evaluations"] == 30);
  CHECK(full["tokens"].get<int64_t>() > 0);
  CHECK(full["best"]["speedup"].get<double>() >= 1.0);
  // Every call reports 100 prompt tokens (the mock's usage); 1500 tokens stop it after a few calls.
  auto tokens = run("tokens", {"search.max_tokens=1500"});
  CHECK(tokens["message"] == "token budget reached");
  CHECK(tokens["evaluations"].get<int>() < 30);
  CHECK(tokens["status"] == "completed");
  auto dollars = run("dollars", {"search.max_dollars=0.01", R"(agents.llm.prices={"gpt-4o-mini": {"prompt": 10, "completion": 30}})"});
  CHECK(dollars["message"] == "dollar budget reached");
  CHECK(dollars["dollars"].get<double>() >= 0.01);
  // A model with no price (neither agents.llm.prices nor its profile): refused up front.
  CHECK_THROWS_AS(run("unpriced", {"search.max_dollars=1", "agents.llm.model=my-local-model"}), InputError);
  CHECK_THROWS_WITH_AS(run("badprice", {R"(agents.llm.prices={"gpt-4o-mini": {"prompt": "cheap"}})"}),
                       doctest::Contains("agents.llm.prices: the price of 'gpt-4o-mini'"), InputError);
}

TEST_CASE("llm client: requests from many threads are in flight at once on the one transport thread") {
  // Every reply takes 0.5 s; 8 callers served one after another would need 4 s.
  MockFaults faults;
  faults.rate_slow = 1.0;
  faults.slow_s = 0.5;
  MockLlmServer server(0, [](const std::string&, const std::string&, const std::string& user) { return user; }, faults);
  EndpointSettings e;
  e.base_url = server.base_url();
  auto transport = std::make_shared<HttpTransport>(HttpTimeouts{});
  HttpLlmClient client(e, transport);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> callers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    callers.emplace_back([&, i] {
      CallRecord r;
      if (client.chat(ask(fmt::format("q{}", i)), r).text == fmt::format("q{}", i)) ok++;
    });
  for (auto& t : callers) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ok == 8);
  CHECK(seconds < 2.5);  // concurrent: about 0.5 s; a wide margin for a loaded machine
}

TEST_CASE("llm client: the endpoint's rate limit holds calls back before they are sent") {
  MockLlmServer server(0, [](const std::string&, const std::string&, const std::string& user) { return user; });
  EndpointSettings e;
  e.base_url = server.base_url();
  e.requests_per_minute = 2;  // one request every 30 s once the first minute's two are spent
  auto clock = std::make_shared<FakeClock>();
  HttpLlmClient client(e, std::make_shared<HttpTransport>(HttpTimeouts{}), clock);
  for (int i = 0; i < 3; ++i) {
    CallRecord r;
    CHECK(client.chat(ask(fmt::format("r{}", i)), r).text == fmt::format("r{}", i));
  }
  REQUIRE(clock->sleeps.size() == 1);  // the third request waited for the bucket
  CHECK(clock->sleeps[0] == doctest::Approx(30.0));
  CHECK(server.stats().requests == 3);
}

TEST_CASE("llm session: each role has its own model, temperature and token budget") {
  Config c;
  c.set("agents.llm.model=base-model");
  c.set("agents.llm.coder.model=coder-model");
  c.set("agents.llm.planner.temperature=1.1");
  c.set("agents.llm.debugger.max_tokens=123");
  auto session = Session::for_config(c);
  CHECK(session->role("planner", c).model == "base-model");
  CHECK(session->role("planner", c).temperature == doctest::Approx(1.1));
  CHECK(session->role("coder", c).model == "coder-model");
  CHECK(session->role("coder", c).temperature == doctest::Approx(0.2));
  CHECK(session->role("debugger", c).max_tokens == 123);
  // One session per endpoint: the three roles share its limits and cassette.
  CHECK(Session::for_config(c) == session);
  // Another config in the same process whose transport differs gets its own session.
  for (const char* changed : {"agents.llm.stream=false", "agents.llm.stall_timeout_s=7", "agents.llm.max_retries=1",
                              "agents.llm.timeout_s=99"}) {
    Config other = c;
    other.set(changed);
    CHECK_MESSAGE(Session::for_config(other) != session, changed);
  }
}

TEST_CASE("mock session: a reply goes to the first request that holds all its texts, once") {
  const auto dir = kmcts::test::fresh_dir("mock-session");
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "coder_fast.md", "```cuda\nfast\n```\n");
  write_file_atomic(dir / "s.json", R"({"replies": [
    {"when": "You propose optimisation plans", "reply": "1. Fast tanh"},
    {"when": ["who writes cuda kernels", "Fast tanh"], "file": "coder_fast.md"}]})");
  MockAnswerer answer = session_answerer((dir / "s.json").string());
  CHECK(answer("openai", "You propose optimisation plans", "tried before: Fast tanh") == "1. Fast tanh");
  // A second Planner call quotes the coder's plan (from the archive) but is no coder: not its reply.
  CHECK(answer("openai", "You propose optimisation plans", "tried before: Fast tanh").find("no reply left") != std::string::npos);
  CHECK(answer("openai", "who writes cuda kernels", "Plan: Fast tanh") == "```cuda\nfast\n```\n");
  CHECK(answer("openai", "who writes cuda kernels", "Plan: Fast tanh").find("no reply left") != std::string::npos);
  for (const char* bad : {R"({"replies": [{"when": [], "reply": "x"}]})", R"({"replies": [{"when": ["a", 3], "reply": "x"}]})",
                          R"({"replies": [{"reply": "x"}]})"}) {
    write_file_atomic(dir / "bad.json", bad);
    CHECK_THROWS_WITH_AS(session_answerer((dir / "bad.json").string()), doctest::Contains("replies[0] needs a 'when'"), InputError);
  }
}
