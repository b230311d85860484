#include "search/progress.hpp"

#include <cmath>

#include <unistd.h>

#include <fmt/format.h>

namespace kmcts {

namespace {

// "45s", "12m05s", "3h02m".
std::string format_duration(double seconds) {
  const long t = std::lround(seconds);
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
}

}  // namespace

std::string format_progress(const ProgressState& s) {
  std::string best = s.best_node >= 0 ? fmt::format("{:.2f}x (node {})", s.best_speedup, s.best_node) : "-";
  std::string line = fmt::format("[{:>4}/{} evals] best {}  failures {}  running {}  {:.1f}s", s.evaluations, s.budget,
                                 best, s.failures, s.running, s.elapsed_s);
  if (s.eta_s >= 0) line += "  eta " + format_duration(s.eta_s);
  if (s.agent_failures > 0) line += fmt::format("  agent calls failed {}/{}", s.agent_failures, s.agent_calls);
  if (s.tokens > 0) line += fmt::format("  {} tokens ${:.4f}", s.tokens, s.dollars);
  if (s.llm_requests > 0)
    line += fmt::format("  llm {} replying {:.1f} kB", s.llm_requests, static_cast<double>(s.llm_reply_bytes) / 1e3);
  return line;
}

Progress::Progress(bool enabled, std::FILE* out) : enabled_(enabled), tty_(isatty(fileno(out)) != 0), out_(out) {}

void Progress::update(const ProgressState& state) {
  if (!enabled_) return;
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", format_progress(state));
  } else if (state.evaluations != last_evaluations_) {
    fmt::print(out_, "{}\n", format_progress(state));
  }
  last_evaluations_ = state.evaluations;
  std::fflush(out_);
}

void Progress::finish() {
  if (enabled_ && tty_) fmt::print(out_, "\n");
}

}  // namespace kmcts
