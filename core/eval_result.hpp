#pragma once
// What an evaluator says about one variant. Failures are results, not exceptions.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

// rejected: the candidate broke a rule of the measurement (work on a side stream, a library
// kernel instead of its own, persisting-L2 pinning, ...): a cheat, or a bug that looks like one.
enum class Verdict { ok, compile_error, wrong_answer, timeout, crash, infra_error, rejected };

const char* to_string(Verdict v);
Verdict verdict_from_string(const std::string& s);  // throws std::invalid_argument

/// Robust statistics of one kernel's timed samples (nanoseconds).
struct TimingStats {
  double median_ns = 0;
  double q1_ns = 0;
  double q3_ns = 0;
  double min_ns = 0;
  double mean_ns = 0;
  double cv = 0;            // coefficient of variation
  double rse_median = 0;    // relative standard error of the median
  std::vector<double> samples_ns;
  int samples() const { return static_cast<int>(samples_ns.size()); }
  /// Fills every field above from samples_ns.
  static TimingStats from_samples(std::vector<double> samples_ns);
};

struct EvalResult {
  Verdict verdict = Verdict::infra_error;
  std::string message;    // one line for people and agents
  std::string log;        // full compiler / worker output
  TimingStats candidate;  // valid when verdict == ok
  TimingStats reference;
  double speedup = 0;     // reference median / candidate median, same process, interleaved
  nlohmann::json details = nlohmann::json::object();  // max_abs_err, first_bad_index, signal, ...
  double compile_seconds = 0;
  double run_seconds = 0;
  bool compile_cached = false;

  bool ok() const { return verdict == Verdict::ok; }
};

/// An evaluation the replay evaluator could not answer: a variant the recorded runs never
/// measured. No kernel's failure: reports count these apart (details.replay_miss; runs before
/// 2026-12-03 are known by the message).
bool is_replay_miss(const EvalResult& r);

nlohmann::json to_json(const TimingStats& t, bool with_samples);
nlohmann::json to_json(const EvalResult& r, bool with_samples);
EvalResult eval_result_from_json(const nlohmann::json& j);

}  // namespace kmcts
