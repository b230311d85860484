#pragma once
// Client-side rate limits of one endpoint: requests per minute and tokens per minute, as two
// token buckets that refill continuously (limit / 60 per second, holding at most one minute's
// worth). A call reserves one request and its estimated tokens before it is sent and waits
// until both buckets can pay; when the reply reports the real usage the difference is
// returned to (or taken from) the token bucket. Time is passed in, so tests need no clock.
#include <cstdint>
#include <mutex>

namespace kmcts::llm {

class RateLimiter {
 public:
  /// 0 = no limit of that kind.
  RateLimiter(double requests_per_minute, double tokens_per_minute);

  /// Reserves one request and `tokens` at time `now_s`; returns how long to wait before
  /// sending (0 if it may go now). The reservation holds even while the caller waits.
  double reserve(int64_t tokens, double now_s);
  /// The call used `actual` tokens where `reserved` were reserved.
  void reconcile(int64_t reserved, int64_t actual);

 private:
  struct Bucket {
    double per_minute = 0, level = 0, at_s = 0;
    void refill(double now_s);
  };
  std::mutex mutex_;
  Bucket requests_, tokens_;
};

}  // namespace kmcts::llm
