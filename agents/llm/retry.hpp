#pragma once
// When to retry a failed LLM call and how long to wait (REFERENCE.md): 408, 409, 429 (but not
// insufficient_quota: no wait fixes an empty account), 5xx (529 overloaded included) and
// connection errors are retried, and so is a 200 whose body is unreadable (a proxy cut it,
// or the server broke mid-reply); everything else (400 bad request, 401 bad key, 404 unknown
// model) fails at once. The wait is the server's Retry-After
// if it gave one, else min(base * 2^attempt, cap) with full jitter.
#include "agents/llm/chat.hpp"

namespace kmcts::llm {

struct RetryPolicy {
  int max_retries = 6;       // after the first attempt
  double base_s = 0.5;       // first backoff
  double cap_s = 8.0;        // longest backoff without a Retry-After

  static bool retryable(const LlmError& e);
  /// Seconds to wait before retry number `attempt` (0 = the first retry). `u` in [0, 1) is
  /// the jitter draw: the wait is uniform in [backoff / 2, backoff] (a Retry-After is taken as is).
  double wait_s(const LlmError& e, int attempt, double u) const;
};

}  // namespace kmcts::llm
