#pragma once
// The tunable-space points of every variant already in the graph, for agents that should not
// propose them again (a repeat only adds an edge, never information). The coordinator adds a
// node's meta when it creates the node; agents on worker threads query it concurrently. One
// shared, growing set instead of a per-call copy keeps an expansion O(log N), not O(N).
// The set is split in shards by key hash, each with its own lock, so the coordinator's insert
// rarely holds a lock an agent waits on (each wait ends in a wake-up the inserter pays for).
#include <array>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace kmcts {

class KnownVariants {
 public:
  /// The key add_key() takes for a node of this meta: its params, dumped (objects dump with
  /// sorted keys: a canonical key); empty if the meta has none (such variants are not points).
  /// Pure: agents compute it on their thread and the coordinator only moves it in.
  static std::string key_of(const nlohmann::json& meta) {
    if (!meta.is_object() || !meta.contains("params") || !meta.at("params").is_object()) return "";
    return meta.at("params").dump();
  }
  /// Records meta["params"] if the meta has them.
  void add(const nlohmann::json& meta) { add_key(key_of(meta)); }
  /// Records a key from key_of() (an empty one is ignored).
  void add_key(std::string key) {
    if (key.empty()) return;
    Shard& shard = shard_of(key);
    std::unique_lock lock(shard.mutex);
    shard.points.insert(std::move(key));
  }
  /// True if a variant with exactly these params is known.
  bool contains(const nlohmann::json& params) const { return contains_key(params.dump()); }
  /// True if a variant with this key (the dump of its params, as key_of() gives) is known.
  bool contains_key(const std::string& key) const {
    const Shard& shard = shard_of(key);
    std::shared_lock lock(shard.mutex);
    return shard.points.count(key) != 0;
  }
  size_t size() const {
    size_t n = 0;
    for (const Shard& shard : shards_) {
      std::shared_lock lock(shard.mutex);
      n += shard.points.size();
    }
    return n;
  }

 private:
  struct Shard {
    mutable std::shared_mutex mutex;
    std::unordered_set<std::string> points;
  };
  Shard& shard_of(const std::string& key) { return shards_[std::hash<std::string>{}(key) % shards_.size()]; }
  const Shard& shard_of(const std::string& key) const { return shards_[std::hash<std::string>{}(key) % shards_.size()]; }
  std::array<Shard, 16> shards_;
};

}  // namespace kmcts
