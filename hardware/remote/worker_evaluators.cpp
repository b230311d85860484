#include "hardware/remote/worker_evaluators.hpp"

#include <fmt/format.h>

#include "hardware/remote/problem_bundle.hpp"

namespace kmcts::remote {

namespace fs = std::filesystem;

void WorkerEvaluators::add_problem(const nlohmann::json& m) {
  auto entry = std::make_shared<Entry>();
  const std::string key = m["key"].get<std::string>();
  try {
    fs::path path = materialize(m, scratch_ / "problems");
    entry->config.merge(m["config"], "rank 0");
    entry->problem = load_problem(path);
  } catch (const std::exception& e) {
    entry->error = fmt::format("problem '{}' did not load here: {}", m["name"].get<std::string>(), e.what());
  }
  std::lock_guard lock(mutex_);
  entries_[key] = std::move(entry);
}

Evaluator& WorkerEvaluators::get(const std::string& key, int device) {
  std::shared_ptr<Entry> entry;
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) throw std::runtime_error(fmt::format("no problem with key {} was sent here", key));
    entry = it->second;
    if (!entry->error.empty()) throw std::runtime_error(entry->error);
    auto& s = entry->by_device[device];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::call_once(slot->made, [&] {
    try {
      Config c = entry->config;
      std::string name = c.get_string("evaluator.name");
      if (name == "auto") name = entry->problem->kind;
      if (gpus_ && name == "cuda") c.set_value("evaluator.cuda.gpus", std::to_string(device), "MPI worker");
      if (gpus_ && name == "kernelbench" && c.get_string("evaluator.kernelbench.device") != "cpu")
        c.set_value("evaluator.kernelbench.device", std::to_string(device), "MPI worker");
      slot->evaluator = make_local_evaluator(*entry->problem, c);
    } catch (const std::exception& e) {
      slot->error = e.what();
    }
  });
  if (!slot->evaluator) throw std::runtime_error(slot->error);
  return *slot->evaluator;
}

void WorkerEvaluators::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

}  // namespace kmcts::remote
