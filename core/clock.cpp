#include "core/clock.hpp"

#include <sys/resource.h>
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

CpuSplit thread_cpu_split() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

}  // namespace kmcts
