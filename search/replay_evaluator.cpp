// The replay evaluator ("simulation mode"): answers from measurements recorded in earlier
// runs, so policy ablations run without hardware and cost nothing (the idea of Kernel
// Tuner's simulation runner). It lives in search/ because it reads run stores; to the
// coordinator it is an Evaluator like any other.
//
// Key: the problem's name and the variant's canonical source hash. The runs named must be
// of the same problem (checked) and should come from one device: their evaluators'
// descriptions must agree, else the archive would mix machines (an InputError).
// A source no run measured is an explicit miss: an infra_error result naming the source,
// or, with evaluator.replay.fallback set, a real evaluation by that evaluator.
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/simulated_defect.hpp"
#include "core/text.hpp"
#include "hardware/evaluator.hpp"
#include "search/canonical.hpp"
#include "search/run_store.hpp"

KMCTS_OPTION("evaluator.replay.runs", String, "", std::nullopt, std::nullopt,
             "Replay evaluator: comma-separated run directories whose recorded measurements answer evaluations.")
KMCTS_OPTION("evaluator.replay.fallback", String, "", std::nullopt, std::nullopt,
             "Replay evaluator: evaluator for sources no recorded run measured (e.g. cpu; auto = the problem's kind); empty = a "
             "miss is an error result. With a fallback, evaluator.replay.runs may be empty.")

KMCTS_OPTION("evaluator.replay.infra_errors", Bool, false, std::nullopt, std::nullopt,
             "Replay evaluator: also answer with the recorded infrastructure errors (for a run re-run from its "
             "own record, as kmcts ablate --replay-only does; elsewhere an infra error is no measurement to reuse)")

namespace kmcts {
namespace {

class ReplayEvaluator final : public Evaluator {
 public:
  ReplayEvaluator(const Problem& problem, const Config& c)
      : problem_(problem.name), infra_errors_(c.get_bool("evaluator.replay.infra_errors")) {
    auto runs = split_list(c.get_string("evaluator.replay.runs"));
    std::string fallback = c.get_string("evaluator.replay.fallback");
    if (runs.empty() && fallback.empty())
      throw InputError("evaluator.replay.runs: name at least one run directory to replay (or set evaluator.replay.fallback)");
    for (const auto& dir : runs) load(dir);
    if (!fallback.empty()) {
      if (fallback == "replay") throw InputError("evaluator.replay.fallback: cannot be 'replay' itself");
      if (fallback == "auto") fallback = problem.kind;
      Config fc = c;
      fc.set_value("evaluator.name", fallback, "evaluator.replay.fallback");
      fallback_ = make_evaluator(problem, fc);  // under --mpi, on the worker ranks
      // Nothing recorded yet (the first run of a grid): what the fallback measures on is the device.
      if (device_.is_null()) device_ = device_of(fallback_->describe());
    }
  }

  BuildResult build(const std::string& source) override {
    BuildResult b;
    b.ok = true;  // recorded compile errors come back from measure() as recorded
    b.source_hash = canonical_hash(source);
    b.artifact = source;
    b.cached = true;
    return b;
  }

  EvalResult measure(const BuildResult& build) override {
    if (auto it = recorded_.find(build.source_hash); it != recorded_.end()) return it->second;
    // A defect the agent simulator wrote (agents.backend=sim) fails as it says, recorded or not.
    if (auto simulated = sim::simulated_result(build.artifact)) return *simulated;
    if (fallback_) return fallback_->evaluate(build.artifact);
    EvalResult miss;
    miss.verdict = Verdict::infra_error;
    miss.message = fmt::format("replay miss: no recorded run of '{}' measured source {}", problem_, short_hash(build.source_hash));
    miss.details["replay_miss"] = true;
    return miss;
  }

  int measure_slots() const override { return fallback_ ? fallback_->measure_slots() : 1; }

  nlohmann::json describe() const override {
    nlohmann::json j = {{"evaluator", "replay"}, {"recorded", recorded_.size()}, {"device", device_}};
    if (fallback_) j["fallback"] = fallback_->describe();
    return j;
  }

 private:
  void load(const std::string& dir) {
    auto store = RunStore::open(dir);
    nlohmann::json info = store->run_info();
    if (info.value("problem", "") != problem_)
      throw InputError(fmt::format("evaluator.replay.runs: '{}' is a run of '{}', not of '{}'", dir, info.value("problem", ""), problem_));
    const nlohmann::json device = device_of(info.value("evaluator", nlohmann::json::object()));
    if (device_.is_null()) device_ = device;
    else if (device != device_)
      throw InputError(fmt::format("evaluator.replay.runs: '{}' was measured by another evaluator or machine than '{}'", dir, first_run_));
    if (first_run_.empty()) first_run_ = dir;
    std::map<int, std::string> hash_of;
    for (const auto& n : store->nodes()) hash_of[n.id] = n.hash;
    for (auto& e : store->evaluations(false))
      if (e.result.verdict != Verdict::infra_error || infra_errors_) recorded_[hash_of.at(e.node)] = e.result;
  }

  // The machine a run's measurements come from. A run answered by this evaluator itself (a
  // grid's runs replay each other) names the device of what it replayed or fell back to.
  static nlohmann::json device_of(nlohmann::json described) {
    if (described.value("evaluator", "") == "replay") return described.value("device", nlohmann::json());
    described.erase("cache_dir");  // where a machine keeps its cache says nothing about its speed
    return described;
  }

  std::string problem_;
  bool infra_errors_ = false;  // answer recorded infra errors too (a run re-run from its own record)
  std::string first_run_;
  nlohmann::json device_;
  std::map<std::string, EvalResult> recorded_;  // canonical source hash -> measurement
  std::unique_ptr<Evaluator> fallback_;
};

}  // namespace

KMCTS_REGISTER(EvaluatorRegistry, "replay", [](const Problem& p, const Config& c) -> std::unique_ptr<Evaluator> {
  return std::make_unique<ReplayEvaluator>(p, c);
})

}  // namespace kmcts
