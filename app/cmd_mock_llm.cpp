// `kmcts mock-llm`: the mock LLM server, for tests, demos and trying an endpoint config.
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "agents/llm/mock_rule_answerer.hpp"
#include "agents/llm/mock_server.hpp"
#include "app/commands.hpp"
#include "core/error.hpp"

namespace kmcts::app {
namespace {

volatile std::sig_atomic_t g_quit = 0;
void on_signal(int) { g_quit = 1; }

struct MockArgs {
  int port = 0;
  std::string script, session, reply = "mock: no reply configured (use --script, --session, --reply or --problem)",
                      key_env, problem, cassette;
  llm::MockFaults faults;
  uint64_t seed = 0;
};

}  // namespace

Command add_mock_llm(CLI::App& root) {
  auto a = std::make_shared<MockArgs>();
  CLI::App* cmd = root.add_subcommand(
      "mock-llm", "Serve an OpenAI- and Anthropic-compatible mock LLM on 127.0.0.1, with fault injection (Ctrl-C stops it)");
  cmd->add_option("--port", a->port, "Port (0 = any free port, printed at start)");
  cmd->add_option("--script", a->script, "JSON file: an array of reply texts, served in order");
  cmd->add_option("--session", a->session,
                  "JSON file of a scripted session: {\"replies\": [{\"when\": text the prompt holds, \"file\": a reply "
                  "beside it}]}, each reply served once, to the first request that holds its text");
  cmd->add_option("--reply", a->reply, "Reply text for every request (when no --script or --problem)");
  cmd->add_option("--cassette", a->cassette, "Answer with the replies a cassette recorded for the same prompts");
  cmd->add_option("--problem", a->problem,
                  "Answer as the offline rule agents over this problem's tunable space (an LLM-driven search then runs "
                  "with no model: plans, code and repairs come from the rule agents)");
  cmd->add_option("--require-key-env", a->key_env, "Requests must carry the key in this environment variable (else 401)");
  cmd->add_option("--seed", a->seed, "Seed of the fault draws (keyed by request number)");
  cmd->add_option("--fault-429", a->faults.rate_429, "Share of requests answered 429 with retry-after-ms")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-429-bare", a->faults.rate_429_bare, "Share answered 429 without a retry header")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-500", a->faults.rate_500, "Share answered 500")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-529", a->faults.rate_529, "Share answered 529 overloaded_error")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-slow", a->faults.rate_slow, "Share answered after --slow-s seconds")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--slow-s", a->faults.slow_s, "Delay of a slow reply (for a slow stream: its events' gaps in all)");
  cmd->add_option("--fault-slow-stream", a->faults.rate_slow_stream,
                  "Share of streamed replies whose events take --slow-s in all, in small gaps")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-cut-stream", a->faults.rate_cut_stream,
                  "Share of streamed replies whose connection closes after half their events")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-malformed", a->faults.rate_malformed, "Share answered 200 with malformed JSON")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-truncated", a->faults.rate_truncated, "Share whose body is cut halfway")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--fault-no-code", a->faults.rate_no_code, "Share answered with a reply without code")->check(CLI::Range(0.0, 1.0));
  return [a] {
    if (a->faults.total() > 1.0) throw InputError(fmt::format("mock-llm: the fault shares add up to {:g}, more than 1", a->faults.total()));
    llm::MockAnswerer answerer;
    if (!a->cassette.empty()) {
      answerer = llm::cassette_answerer(a->cassette);
    } else if (!a->problem.empty()) {
      answerer = llm::rule_answerer(load_problem(a->problem));
    } else if (!a->session.empty()) {
      answerer = llm::session_answerer(a->session);
    } else if (!a->script.empty()) {
      std::ifstream in(a->script);
      if (!in) throw InputError("mock-llm --script: cannot read " + a->script);
      nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      if (!j.is_array() || !std::all_of(j.begin(), j.end(), [](const auto& v) { return v.is_string(); }))
        throw InputError("mock-llm --script: " + a->script + " must hold a JSON array of strings");
      answerer = llm::script_answerer(j.get<std::vector<std::string>>());
    } else {
      answerer = [reply = a->reply](const std::string&, const std::string&, const std::string&) { return reply; };
    }
    llm::MockLlmServer server(a->port, answerer, a->faults, a->seed);
    if (!a->key_env.empty()) {
      const char* key = std::getenv(a->key_env.c_str());
      if (!key || !*key) throw InputError("mock-llm --require-key-env: variable " + a->key_env + " is not set");
      server.require_key(key);
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    fmt::print("mock LLM server listening on {} (OpenAI: POST /v1/chat/completions, Anthropic: POST /v1/messages)\n",
               server.base_url());
    std::fflush(stdout);
    while (!g_quit) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fmt::print("served {} requests, {} with injected faults\n", server.stats().requests.load(), server.stats().faults.load());
    return 0;
  };
}

}  // namespace kmcts::app
