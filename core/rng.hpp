#pragma once
// Counter-based randomness: every draw is a pure function of (seed, key, index), so a
// result never depends on which thread drew first or how many draws happened elsewhere.
#include <cstdint>
#include <string_view>

namespace kmcts {

/// SplitMix64 finaliser: a bijective 64-bit mix with good avalanche.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Stable 64-bit key for a string (FNV-1a), e.g. a role name or node hash.
constexpr uint64_t string_key(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// A stream of draws for one (seed, key); `key` names what the draws are for
/// (node id, event id, role). Copying it copies the position.
class CounterRng {
 public:
  // constexpr throughout, so GPU code built with nvcc --expt-relaxed-constexpr draws the
  // same numbers (the CUDA worker fills its inputs on the device).
  constexpr CounterRng(uint64_t seed, uint64_t key) : base_(mix64(seed ^ mix64(key))) {}
  constexpr uint64_t next() { return mix64(base_ + index_++ * 0x9e3779b97f4a7c15ULL); }
  /// Uniform in [0, 1).
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n); n > 0.
  constexpr uint64_t below(uint64_t n) { return static_cast<uint64_t>(uniform() * static_cast<double>(n)); }
  constexpr uint64_t draws() const { return index_; }
  /// Moves past `n` draws without making them (draw k of a stream is a function of k).
  constexpr void skip(uint64_t n) { index_ += n; }

 private:
  uint64_t base_;
  uint64_t index_ = 0;
};

}  // namespace kmcts
