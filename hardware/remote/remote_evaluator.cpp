#include "hardware/remote/remote_evaluator.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "hardware/remote/messages.hpp"

namespace kmcts::remote {

RemoteEvaluator::RemoteEvaluator(Cluster& cluster, const Problem& problem, const Config& config)
    : cluster_(cluster),
      bundle_(std::make_shared<ProblemBundle>(
          bundle_problem(problem, config, cluster.settings().max_message_bytes()))),
      evaluator_(config.get_string("evaluator.name") == "auto" ? problem.kind : config.get_string("evaluator.name")) {
  // Checked here, as escaped JSON: a bundle that cannot travel is bad input, not a run of
  // infra errors later.
  if (const size_t bytes = encode(bundle_->message).size(); bytes > cluster.settings().max_message_bytes())
    throw InputError(fmt::format("problem '{}': its files make a {}-byte message, over --mpi-max-message-mb", problem.name, bytes));
}

BuildResult RemoteEvaluator::build(const std::string& source) {
  BuildResult b;
  b.ok = true;
  b.source_hash = sha256_hex(source);
  b.artifact = source;  // the worker builds it
  return b;
}

EvalResult RemoteEvaluator::measure(const BuildResult& build) { return cluster_.submit(bundle_, build.artifact).get(); }

nlohmann::json RemoteEvaluator::describe() const {
  return {{"name", "remote"}, {"evaluator", evaluator_}, {"mpi", cluster_.placement()}};
}

void place_evaluations_on(Cluster& cluster) {
  set_evaluator_placement([&cluster](const Problem& p, const Config& c) -> std::unique_ptr<Evaluator> {
    return std::make_unique<RemoteEvaluator>(cluster, p, c);
  });
}

}  // namespace kmcts::remote
