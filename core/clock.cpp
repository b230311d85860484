#include "core/clock.hpp"

#include <time.h>

#include <chrono>

namespace kmcts {

std::string utc_time(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[64];
  return std::strftime(buffer, sizeof buffer, format, &tm) ? std::string(buffer) : std::string();
}

std::string utc_now(const char* format) {
  return utc_time(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()), format);
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace kmcts
