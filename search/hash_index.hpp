#pragma once
// The graph's index of nodes by a 64-bit key of their hash string: open addressing with linear
// probing in one array of (key, node) slots, at most half full. A lookup reads one or two
// adjacent slots where a node-based hash map reads a bucket, then a separately allocated node;
// an insert allocates nothing (the array doubles now and then). Nodes are never removed.
// Keys may collide: find() asks the caller which of the nodes filed under a key is the one (the
// graph compares the node's full hash, so at most one matches).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kmcts {

class HashIndex {
 public:
  /// A node filed under `key` for which same(node) is true; -1 if none.
  template <class Same>
  int find(uint64_t key, Same same) const {
    if (slots_.empty()) return -1;
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.node < 0) return -1;
      if (s.key == key && same(s.node)) return s.node;
    }
  }
  /// Files `node` under `key` (a key may hold several nodes).
  void insert(uint64_t key, int node) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(key, node);
    ++size_;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    int node = -1;  // -1: empty
  };
  size_t mask() const { return slots_.size() - 1; }
  // Fibonacci hashing: the top bits of key * 2^64/phi, so keys that differ only in their low
  // or high bits still spread (the default key is std::hash, but a caller may pass any).
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void place(uint64_t key, int node) {
    size_t i = home(key);
    while (slots_[i].node >= 0) i = (i + 1) & mask();
    slots_[i] = Slot{key, node};
  }
  void grow() {
    std::vector<Slot> old(std::max<size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    shift_ = 64 - std::countr_zero(slots_.size());
    for (const Slot& s : old)
      if (s.node >= 0) place(s.key, s.node);
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace kmcts
