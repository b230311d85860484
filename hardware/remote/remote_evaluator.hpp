#pragma once
// The evaluator a search gets under `--mpi`: build() only hashes the source (the build runs
// on the worker, off rank 0's CPUs), and measure() sends the job to the cluster and waits for
// the worker's result: the verdict, timings, samples and logs of the evaluator the problem
// names, made on the worker. Slots: what the workers hold at once (Cluster::capacity).
#include <memory>

#include "hardware/evaluator.hpp"
#include "hardware/remote/cluster.hpp"

namespace kmcts::remote {

class RemoteEvaluator : public Evaluator {
 public:
  RemoteEvaluator(Cluster& cluster, const Problem& problem, const Config& config);
  BuildResult build(const std::string& source) override;
  EvalResult measure(const BuildResult& build) override;
  EvalResult measure_built(const BuildResult& build) override { return measure(build); }
  nlohmann::json describe() const override;
  int measure_slots() const override { return cluster_.capacity(); }

 private:
  Cluster& cluster_;
  std::shared_ptr<const ProblemBundle> bundle_;
  std::string evaluator_;
};

/// Sets the process's evaluator placement (hardware/evaluator.hpp) to `cluster`.
void place_evaluations_on(Cluster& cluster);

}  // namespace kmcts::remote
