// kb_problem_result(): one problem's leaderboard entry from its run directory.
#include <fmt/format.h>

#include "campaigns/kb_runner.hpp"
#include "core/files.hpp"
#include "hardware/evaluator.hpp"
#include "search/run_store.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using json = nlohmann::json;

json own_share_of(const json& details) {
  const json a = details.value("attribution", json::object());
  return a.value("available", false) ? a.value("own_share", json()) : json();
}

json kb_problem_result(const KbProblemFile& file, const fs::path& run_dir, const json& run_summary) {
  auto store = RunStore::open(run_dir);
  const std::vector<NodeRecord> nodes = store->nodes();
  const std::vector<EvaluationRecord> evaluations = store->evaluations(false);
  json r = {{"problem", file.name},
            {"number", file.number},
            {"file", file.path.string()},
            {"run_dir", run_dir.string()},
            {"status", run_summary.value("status", store->status())},
            {"message", run_summary.value("message", "")},
            {"evaluations", run_summary.value("evaluations", static_cast<int64_t>(evaluations.size()))},
            {"failures_by_verdict", run_summary.value("failures_by_verdict", json::object())},
            {"tokens", run_summary.value("tokens", 0)},
            {"dollars", run_summary.value("dollars", 0.0)},
            {"wall_seconds", run_summary.value("wall_seconds", 0.0)},
            {"correct", false}};
  double gpu_seconds = 0;
  for (const auto& e : evaluations) gpu_seconds += e.result.run_seconds;
  r["gpu_seconds"] = gpu_seconds;  // the measurement time, on what timed_on names
  r["timed_on"] = timed_on(store->run_info().value("evaluator", json()));
  // The seed is the reference itself (ModelNew a subclass of Model): correct by construction, so it is
  // reported (a sanity check of the measurement: its speedup should be ~1) but never scored.
  int best = -1;
  for (const auto& n : nodes)
    if (n.id != 0 && n.status == NodeStatus::ok && (best < 0 || n.speedup > nodes[static_cast<size_t>(best)].speedup))
      best = n.id;
  auto evaluation_of = [&](int node) -> const EvaluationRecord* {
    const EvaluationRecord* last = nullptr;
    for (const auto& e : evaluations)
      if (e.node == node) last = &e;
    return last;
  };
  auto entry = [&](int node) {
    const NodeRecord& n = nodes[static_cast<size_t>(node)];
    json j = {{"node", n.id}, {"hash", n.hash}, {"verdict", n.verdict}, {"plan", n.plan}};
    if (const EvaluationRecord* e = evaluation_of(node)) {
      j["message"] = e->result.message;
      j["speedup"] = e->result.details.value("speedup", json::object());
      j["speedup_ci"] = e->result.details.value("speedup_ci", json::object());
      j["score"] = e->result.details.value("score", "mean");
      j["own_share"] = own_share_of(e->result.details);
    }
    return j;
  };
  if (!nodes.empty() && nodes[0].status == NodeStatus::ok) r["seed"] = entry(0);
  if (best >= 0) {
    json b = entry(best);
    r["correct"] = true;
    r["speedup"] = b.value("speedup", json::object());
    r["speedup_ci"] = b.value("speedup_ci", json::object());
    r["own_share"] = b.value("own_share", json());
    if (auto source = store->source(nodes[static_cast<size_t>(best)].hash)) {
      const fs::path out = run_dir.parent_path().parent_path() / "problems" / (file.name + ".best.py");
      write_file_atomic(out, *source);
      b["source_file"] = out.string();
    }
    r["best"] = b;
  }
  return r;
}

}  // namespace kmcts
