#include "core/eval_result.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kmcts {
namespace {

using nlohmann::json;

constexpr const char* kVerdictNames[] = {"ok", "compile_error", "wrong_answer", "timeout", "crash", "infra_error", "rejected"};
constexpr Verdict kVerdicts[] = {Verdict::ok,      Verdict::compile_error, Verdict::wrong_answer,
                                 Verdict::timeout, Verdict::crash,         Verdict::infra_error,
                                 Verdict::rejected};

/// Quantile of sorted data by linear interpolation between order statistics at
/// position p*(n-1) (Hyndman-Fan type 7, numpy's default), so numbers match what people
/// get when they re-analyse exported samples.
double quantile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double position = p * static_cast<double>(sorted.size() - 1);
  auto lower = static_cast<size_t>(std::floor(position));
  size_t upper = std::min(lower + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

/// Standard error of the median by the McKean-Schrader order-statistic estimate:
///   c  = round((n+1)/2 - z*sqrt(n/4)),  SE = (x_(n-c+1) - x_(c)) / (2z),  z = 1.96
/// (1-based order statistics). Why this and not a bootstrap: the worker's stopping rule
/// re-evaluates it after every block of samples (hundreds of times per kernel), where a
/// bootstrap over 2000 samples would cost ~10^5 draws each time; this estimate is O(1) on
/// sorted data, deterministic (no RNG to seed), distribution-free (timing samples are
/// skewed, with a long right tail) and within a few percent of the bootstrap for n >= 20.
double median_standard_error(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  if (n < 2) return 0;  // one sample has no spread to estimate; stopping rules demand more
  constexpr double z = 1.96;  // the 95% normal quantile of the original derivation
  const double nd = static_cast<double>(n);
  double c = std::round((nd + 1) / 2 - z * std::sqrt(nd / 4));
  c = std::clamp(c, 1.0, std::floor(nd / 2));
  auto low = static_cast<size_t>(c) - 1;  // x_(c), 0-based
  size_t high = n - static_cast<size_t>(c);  // x_(n-c+1), 0-based
  return (sorted[high] - sorted[low]) / (2 * z);
}

/// JSON has no NaN or infinity; nlohmann would silently write null.
double finite_or_zero(const json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_number()) return 0;
  return j.at(key).get<double>();
}

TimingStats timing_from_json(const json& j) {
  TimingStats t;
  if (!j.is_object()) return t;
  if (j.contains("samples_ns") && j.at("samples_ns").is_array()) t.samples_ns = j.at("samples_ns").get<std::vector<double>>();
  // Stored fields win over a recomputation so a summary without samples keeps its numbers.
  t.median_ns = finite_or_zero(j, "median_ns");
  t.q1_ns = finite_or_zero(j, "q1_ns");
  t.q3_ns = finite_or_zero(j, "q3_ns");
  t.min_ns = finite_or_zero(j, "min_ns");
  t.mean_ns = finite_or_zero(j, "mean_ns");
  t.cv = finite_or_zero(j, "cv");
  t.rse_median = finite_or_zero(j, "rse_median");
  return t;
}

}  // namespace

const char* to_string(Verdict v) {
  for (size_t i = 0; i < std::size(kVerdicts); ++i)
    if (kVerdicts[i] == v) return kVerdictNames[i];
  return "infra_error";
}

Verdict verdict_from_string(const std::string& s) {
  for (size_t i = 0; i < std::size(kVerdicts); ++i)
    if (s == kVerdictNames[i]) return kVerdicts[i];
  throw std::invalid_argument("unknown verdict '" + s +
                              "' (known: ok, compile_error, wrong_answer, timeout, crash, infra_error, rejected)");
}

TimingStats TimingStats::from_samples(std::vector<double> samples_ns) {
  TimingStats t;
  t.samples_ns = std::move(samples_ns);
  const size_t n = t.samples_ns.size();
  if (n == 0) return t;
  std::vector<double> sorted = t.samples_ns;
  std::sort(sorted.begin(), sorted.end());
  t.min_ns = sorted.front();
  t.median_ns = quantile_sorted(sorted, 0.5);
  t.q1_ns = quantile_sorted(sorted, 0.25);
  t.q3_ns = quantile_sorted(sorted, 0.75);
  double sum = 0;
  for (double x : sorted) sum += x;
  t.mean_ns = sum / static_cast<double>(n);
  if (n >= 2 && t.mean_ns > 0) {
    double squares = 0;
    for (double x : sorted) squares += (x - t.mean_ns) * (x - t.mean_ns);
    t.cv = std::sqrt(squares / static_cast<double>(n - 1)) / t.mean_ns;  // sample (n-1) deviation
  }
  if (t.median_ns > 0) t.rse_median = median_standard_error(sorted) / t.median_ns;
  return t;
}

json to_json(const TimingStats& t, bool with_samples) {
  json j = {{"median_ns", t.median_ns}, {"q1_ns", t.q1_ns},   {"q3_ns", t.q3_ns},
            {"min_ns", t.min_ns},       {"mean_ns", t.mean_ns}, {"cv", t.cv},
            {"rse_median", t.rse_median}, {"samples", t.samples()}};
  if (with_samples) j["samples_ns"] = t.samples_ns;
  return j;
}

json to_json(const EvalResult& r, bool with_samples) {
  json j = {{"verdict", to_string(r.verdict)},
            {"message", r.message},
            {"log", r.log},
            {"speedup", std::isfinite(r.speedup) ? r.speedup : 0.0},
            {"details", r.details},
            {"compile_seconds", r.compile_seconds},
            {"run_seconds", r.run_seconds},
            {"compile_cached", r.compile_cached}};
  if (r.candidate.samples() > 0 || r.candidate.median_ns > 0) j["candidate"] = to_json(r.candidate, with_samples);
  if (r.reference.samples() > 0 || r.reference.median_ns > 0) j["reference"] = to_json(r.reference, with_samples);
  return j;
}

EvalResult eval_result_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("an evaluation result must be a JSON object");
  EvalResult r;
  r.verdict = verdict_from_string(j.value("verdict", std::string("infra_error")));
  r.message = j.value("message", std::string());
  r.log = j.value("log", std::string());
  r.speedup = finite_or_zero(j, "speedup");
  if (j.contains("details") && j.at("details").is_object()) r.details = j.at("details");
  r.compile_seconds = finite_or_zero(j, "compile_seconds");
  r.run_seconds = finite_or_zero(j, "run_seconds");
  r.compile_cached = j.value("compile_cached", false);
  if (j.contains("candidate")) r.candidate = timing_from_json(j.at("candidate"));
  if (j.contains("reference")) r.reference = timing_from_json(j.at("reference"));
  return r;
}

bool is_replay_miss(const EvalResult& r) {
  if (r.verdict != Verdict::infra_error) return false;
  return r.details.value("replay_miss", false) || r.message.rfind("replay miss", 0) == 0;
}

}  // namespace kmcts
