#include "agents/llm/retry.hpp"

#include <algorithm>
#include <cmath>

namespace kmcts::llm {

bool RetryPolicy::retryable(const LlmError& e) {
  if (e.status == 0) return true;  // connection refused, reset, timed out
  if (e.status == 200) return e.type == "bad_response";
  if (e.status == 429) return e.code != "insufficient_quota" && e.type != "insufficient_quota";
  return e.status == 408 || e.status == 409 || e.status >= 500;
}

double RetryPolicy::wait_s(const LlmError& e, int attempt, double u) const {
  if (e.retry_after_s) return *e.retry_after_s;
  // Half fixed, half jitter: clients that failed together do not retry together, and no wait
  // collapses to zero (which would hammer a server that just said it is overloaded).
  const double backoff = std::min(base_s * std::pow(2.0, attempt), cap_s);
  return backoff * (0.5 + 0.5 * std::clamp(u, 0.0, 1.0));
}

}  // namespace kmcts::llm
