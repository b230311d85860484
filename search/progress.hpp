#pragma once
// Progress of a search on stderr: one self-overwriting line on a terminal, a line per
// finished evaluation otherwise (logs and CI).
#include <cstdio>
#include <string>

namespace kmcts {

struct ProgressState {
  int evaluations = 0;
  int budget = 0;
  double best_speedup = 0;
  int best_node = -1;
  int failures = 0;
  int running = 0;
  double elapsed_s = 0;
  int agent_calls = 0;      // finished agent calls, and of them failed
  int agent_failures = 0;
  int64_t tokens = 0;       // LLM tokens and dollars so far (shown when there are any)
  double dollars = 0;
  int llm_requests = 0;     // LLM replies arriving now, and their bytes so far
  int64_t llm_reply_bytes = 0;
  double eta_s = -1;        // seconds left to the budget at this process's pace; < 0: not known yet
};

class Progress {
 public:
  explicit Progress(bool enabled, std::FILE* out = stderr);
  void update(const ProgressState& state);
  void finish();

 private:
  bool enabled_;
  bool tty_;
  std::FILE* out_;
  int last_evaluations_ = -1;
};

std::string format_progress(const ProgressState& state);

}  // namespace kmcts
