#include "agents/llm/llm_client.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/rng.hpp"

namespace kmcts::llm {

nlohmann::json CallRecord::to_json() const {
  return {{"role", role}, {"model", model}, {"attempts", attempts}, {"errors", errors}, {"usage", usage.to_json()},
          {"dollars", dollars}, {"seconds", seconds}, {"cassette", cassette},
          {"prompt_tokens_estimate", prompt_tokens_estimate}};
}

double Clock::now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Clock::sleep_s(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

HttpLlmClient::HttpLlmClient(EndpointSettings settings, std::shared_ptr<HttpTransport> transport, std::shared_ptr<Clock> clock)
    : settings_(std::move(settings)),
      transport_(std::move(transport)),
      clock_(clock ? std::move(clock) : std::make_shared<Clock>()),
      limiter_(settings_.requests_per_minute, settings_.tokens_per_minute) {}

std::string HttpLlmClient::redact(std::string text) const {
  const std::string& key = settings_.api_key;
  if (key.size() < 4) return text;  // too short to be a real key; replacing it would mangle text
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
    text.replace(at, key.size(), "[redacted]");
  return text;
}

ChatReply HttpLlmClient::chat(const ChatRequest& request, CallRecord& record) {
  const double started = clock_->now_s();
  record.model = request.model;
  const HttpRequest http = build_request(settings_.provider, settings_.base_url, request,
                                         settings_.profiles.find(settings_.provider, request.model), settings_.stream);
  std::vector<std::pair<std::string, std::string>> auth;
  if (!settings_.api_key.empty()) auth.push_back(auth_header(settings_.provider, settings_.api_key));
  // Reserve what the call may cost: the prompt at ~4 characters per token, plus the whole
  // completion budget; the reply's usage corrects it.
  const int64_t estimate = static_cast<int64_t>(http.body.size() / 4) + request.max_tokens;
  // Jitter draws keyed by the request, so a re-run waits the same (and no global RNG is touched).
  CounterRng jitter(0, string_key(cassette_key(request)));
  for (int attempt = 0;; ++attempt) {
    clock_->sleep_s(limiter_.reserve(estimate, clock_->now_s()));
    record.attempts++;
    HttpResponse response = transport_->post(http, auth).get();
    LlmError error;
    if (response.status >= 200 && response.status < 300) {
      try {
        ChatReply reply = parse_reply(settings_.provider, response.body);
        limiter_.reconcile(estimate, reply.usage.prompt_tokens + reply.usage.completion_tokens);
        record.usage = reply.usage;
        record.seconds = clock_->now_s() - started;
        return reply;
      } catch (const LlmFailure& f) {
        error = f.error;
      }
    } else if (response.status == 0) {
      error.message = response.error;
    } else {
      error = parse_error(response.status, response.body, response.headers);
    }
    limiter_.reconcile(estimate, 0);
    error.message = redact(error.message);
    if (error.status == 401 || error.status == 403)
      error.message += settings_.api_key.empty() ? " (no API key was sent: set the variable agents.llm.api_key_env names)"
                                                 : " (check the key in the variable agents.llm.api_key_env names)";
    record.errors.push_back(error.to_string());
    if (!RetryPolicy::retryable(error) || attempt >= settings_.retry.max_retries) {
      record.seconds = clock_->now_s() - started;
      throw LlmFailure(error);
    }
    clock_->sleep_s(settings_.retry.wait_s(error, attempt, jitter.uniform()));
  }
}

CassetteClient::CassetteClient(CassetteMode mode, std::shared_ptr<Cassette> cassette, std::shared_ptr<LlmClient> inner)
    : mode_(mode), cassette_(std::move(cassette)), inner_(std::move(inner)) {}

ChatReply CassetteClient::chat(const ChatRequest& request, CallRecord& record) {
  record.model = request.model;
  if (mode_ == CassetteMode::off) return inner_->chat(request, record);
  const std::string key = cassette_key(request);
  {
    // A request the cassette holds is answered from it in every mode, repeats within a
    // recording included: a recorded run gives each request the reply its replay will give.
    // The same request already in flight is waited for, so it is asked once.
    std::unique_lock lock(flight_mutex_);
    while (true) {
      if (auto hit = cassette_->find(request)) {
        record.cassette = "hit";
        record.usage = hit->usage;
        return *hit;
      }
      if (mode_ == CassetteMode::replay || !inner_) {
        LlmError miss;
        miss.type = "cassette_miss";
        miss.message = fmt::format("cassette {} has no reply for this request (model {}, sample {}, key {})",
                                   cassette_->file().string(), request.model, request.sample, key.substr(0, 12));
        record.errors.push_back(miss.to_string());
        throw LlmFailure(miss);
      }
      if (in_flight_.insert(key).second) break;  // this call asks the endpoint
      flight_done_.wait(lock);                   // another call asks: take its reply (or ask after it failed)
    }
  }
  auto done = [this, &key] {
    std::lock_guard lock(flight_mutex_);
    in_flight_.erase(key);
    flight_done_.notify_all();
  };
  ChatReply reply;
  try {
    reply = inner_->chat(request, record);
    cassette_->record(request, reply);
  } catch (...) {
    done();
    throw;
  }
  done();
  record.cassette = "recorded";
  return reply;
}

}  // namespace kmcts::llm
