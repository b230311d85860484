#include "agents/llm/rate_limiter.hpp"

#include <algorithm>

namespace kmcts::llm {

RateLimiter::RateLimiter(double requests_per_minute, double tokens_per_minute) {
  requests_.per_minute = requests_.level = requests_per_minute;
  tokens_.per_minute = tokens_.level = tokens_per_minute;
}

void RateLimiter::Bucket::refill(double now_s) {
  if (now_s > at_s) level = std::min(per_minute, level + per_minute / 60.0 * (now_s - at_s));
  at_s = std::max(at_s, now_s);
}

double RateLimiter::reserve(int64_t tokens, double now_s) {
  std::lock_guard lock(mutex_);
  double wait = 0;
  for (auto [bucket, amount] : {std::pair{&requests_, 1.0}, std::pair{&tokens_, static_cast<double>(tokens)}}) {
    if (bucket->per_minute <= 0) continue;
    bucket->refill(now_s);
    // A single call larger than the whole limit could never fit: it waits for a full bucket.
    amount = std::min(amount, bucket->per_minute);
    bucket->level -= amount;
    if (bucket->level < 0) wait = std::max(wait, -bucket->level / (bucket->per_minute / 60.0));
  }
  return wait;
}

void RateLimiter::reconcile(int64_t reserved, int64_t actual) {
  std::lock_guard lock(mutex_);
  if (tokens_.per_minute <= 0) return;
  tokens_.level = std::min(tokens_.per_minute, tokens_.level + static_cast<double>(reserved - actual));
}

}  // namespace kmcts::llm
