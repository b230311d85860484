#pragma once
// LlmClient: one chat call, retried and rate-limited, answered by a provider over HTTP or by
// a cassette. Roles call chat() from their agent threads; the HTTP itself is multiplexed on
// the transport's one thread.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "agents/llm/cassette.hpp"
#include "agents/llm/chat.hpp"
#include "agents/llm/http_transport.hpp"
#include "agents/llm/rate_limiter.hpp"
#include "agents/llm/retry.hpp"

namespace kmcts::llm {

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  /// The reply, or LlmFailure once retries are spent (or at once for a fatal error).
  /// `record` is filled either way.
  virtual ChatReply chat(const ChatRequest& request, CallRecord& record) = 0;
};

/// Time for the retry loop; tests pass a fake one that records sleeps and never waits.
struct Clock {
  virtual ~Clock() = default;
  virtual double now_s();
  virtual void sleep_s(double seconds);
};

struct EndpointSettings {
  Provider provider = Provider::openai;
  std::string base_url;
  std::string api_key;            // from the environment; never logged, stored or echoed
  HttpTimeouts timeouts;
  RetryPolicy retry;
  double requests_per_minute = 0;  // 0 = no client-side limit
  double tokens_per_minute = 0;
  ModelProfiles profiles = ModelProfiles::load();  // what each model takes on the wire (model_profile.hpp)
  bool stream = false;             // ask for server-sent events (agents.llm.stream)
};

/// A provider endpoint over HTTP.
class HttpLlmClient final : public LlmClient {
 public:
  HttpLlmClient(EndpointSettings settings, std::shared_ptr<HttpTransport> transport, std::shared_ptr<Clock> clock = nullptr);
  ChatReply chat(const ChatRequest& request, CallRecord& record) override;

 private:
  std::string redact(std::string text) const;
  EndpointSettings settings_;
  std::shared_ptr<HttpTransport> transport_;
  std::shared_ptr<Clock> clock_;
  RateLimiter limiter_;
};

/// Answers from a cassette; a miss goes to `inner` (record, replay_or_record) or is an
/// LlmFailure naming the request (replay). Under record too, a request the cassette holds
/// (asked before in this run or an earlier one) gets the recorded reply, and identical
/// requests in flight at once ask `inner` once: the run replays exactly as it ran.
class CassetteClient final : public LlmClient {
 public:
  CassetteClient(CassetteMode mode, std::shared_ptr<Cassette> cassette, std::shared_ptr<LlmClient> inner);
  ChatReply chat(const ChatRequest& request, CallRecord& record) override;

 private:
  CassetteMode mode_;
  std::shared_ptr<Cassette> cassette_;
  std::shared_ptr<LlmClient> inner_;
  std::mutex flight_mutex_;
  std::condition_variable flight_done_;
  std::set<std::string> in_flight_;  // keys being asked of `inner` now
};

}  // namespace kmcts::llm
