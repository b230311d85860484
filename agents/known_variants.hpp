#pragma once
// The tunable-space points of every variant already in the graph, for agents that should not
// propose them again (a repeat only adds an edge, never information). The coordinator adds a
// node's meta when it creates the node; agents on worker threads query it concurrently. One
// shared, growing set instead of a per-call copy keeps an expansion O(log N), not O(N).
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace kmcts {

class KnownVariants {
 public:
  /// Records meta["params"] if the meta has them (variants without params are not points).
  void add(const nlohmann::json& meta) {
    if (!meta.is_object() || !meta.contains("params") || !meta.at("params").is_object()) return;
    std::unique_lock lock(mutex_);
    points_.insert(meta.at("params").dump());  // objects dump with sorted keys: a canonical key
  }
  /// True if a variant with exactly these params is known.
  bool contains(const nlohmann::json& params) const {
    std::shared_lock lock(mutex_);
    return points_.count(params.dump()) != 0;
  }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return points_.size();
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_set<std::string> points_;
};

}  // namespace kmcts
