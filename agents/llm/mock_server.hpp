#pragma once
// A mock LLM server for tests and demos (`kmcts mock-llm`): speaks the OpenAI chat-completions
// and Anthropic messages protocols over HTTP (Boost.Beast), answers from a script of replies
// or a fixed reply, and injects faults on demand: 429 with and without Retry-After, 500, 529,
// replies slower than the client's stall timeout, malformed JSON, truncated bodies, replies
// without code; and refuses, as the provider would, a request that breaks the model's profile
// (temperature with top_p to Claude 4.x, max_tokens to an OpenAI reasoning model, ...). Fault draws are keyed by (seed, request number): a run repeats.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm/model_profile.hpp"

namespace kmcts::llm {

struct MockFaults {
  double rate_429 = 0;             // 429 rate_limit_error with retry-after-ms: 50
  double rate_429_bare = 0;        // 429 without any retry header
  double rate_500 = 0;
  double rate_529 = 0;             // Anthropic's overloaded_error
  double rate_slow = 0;            // sleeps slow_s before answering
  double rate_slow_stream = 0;     // a streamed reply (the request asked "stream": true) whose events
                                   // take slow_s in all, spread between them (a model that thinks long)
  double rate_cut_stream = 0;      // a streamed reply whose connection closes after half its events
                                   // (no end of stream: a proxy or the provider dropped it)
  double rate_malformed = 0;       // 200 with a body that is not JSON
  double rate_truncated = 0;       // 200 whose body stops halfway (Content-Length larger)
  double rate_no_code = 0;         // 200 with a reply that has no code block
  double slow_s = 5;
  double total() const;
};

/// What the server was asked: the request's provider ("openai"/"anthropic"), the system
/// prompt and the last user message. Returns the reply text.
using MockAnswerer = std::function<std::string(const std::string& provider, const std::string& system,
                                               const std::string& user)>;

struct MockStats {
  std::atomic<int> requests{0};
  std::atomic<int> faults{0};
};

class MockLlmServer {
 public:
  /// Listens on 127.0.0.1:`port` (0 = any free port) and serves on background threads.
  MockLlmServer(int port, MockAnswerer answerer, MockFaults faults = {}, uint64_t seed = 0);
  ~MockLlmServer();  // stops serving
  MockLlmServer(const MockLlmServer&) = delete;
  MockLlmServer& operator=(const MockLlmServer&) = delete;

  /// Refuses what the provider would refuse for each model (model_profile.hpp), with its status
  /// and error shape: the shipped profiles from the start; this replaces them.
  void enforce_profiles(ModelProfiles profiles);
  /// Requests must carry this key (Bearer or x-api-key); others get a 401 that, like real
  /// providers, quotes the key they sent (so clients' redaction can be tested).
  void require_key(std::string key);
  int port() const;
  std::string base_url() const;
  const MockStats& stats() const;
  /// The last request's headers (lower-case names) and body, for wire-format tests.
  std::map<std::string, std::string> last_headers() const;
  std::string last_body() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Answers with the next reply of a script, in order (an exhausted script answers with an
/// error text, which has no code block).
MockAnswerer script_answerer(std::vector<std::string> replies);
/// A scripted session: `file` holds {"replies": [{"when": TEXT | [TEXT...], "file": PATH |
/// "reply": TEXT}]}; each request gets the first reply not yet served whose `when` texts all
/// occur in its prompt (so a planner, coder and debugger each get theirs, whatever order the
/// search asks in: a coder's reply names the coder's role as well as its plan, which a
/// planner's prompt may quote from the archive); a `file` is read beside the session file (a
/// corpus of replies). InputError for a bad file.
MockAnswerer session_answerer(const std::string& file);
/// Answers with the reply a cassette (cassette.hpp) recorded for the same system prompt and
/// last user message (model, sampling settings and sample id are not compared: the server
/// does not see the sample id). InputError if the file cannot be read.
MockAnswerer cassette_answerer(const std::string& file);

}  // namespace kmcts::llm
