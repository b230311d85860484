#pragma once
// Per-kernel sums of a measurement (issue 30, item 1): for each distinct launch (the kernel's
// name with its grid, block, registers and shared and local memory, as CUPTI's kernel records
// give them) how many times it ran and the GPU time it took. A kernel host fills one per call
// from the records inside its window; the worker sums a side's timed calls; the evaluator
// turns the sums into the profile prompts show (hardware/kernel_profile.hpp). Plain C++: the
// parent side reads it without CUDA.
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::cuda {

struct KernelLaunch {
  std::string name;  // as CUPTI reports it (mangled)
  std::array<int, 3> grid{}, block{};
  int registers = 0;                  // per thread
  int smem_static = 0, smem_dynamic = 0;  // bytes per block
  int local_bytes = 0;                // per thread (spills and local arrays)
  auto operator<=>(const KernelLaunch&) const = default;
};

struct KernelSums {
  int64_t calls = 0;
  uint64_t ns = 0;  // inside the measured windows
  bool operator==(const KernelSums&) const = default;
};

class KernelTable {
 public:
  /// Longest name kept (longer ones are cut: C++ template names run to kilobytes) and the most
  /// launches a table keeps apart; further launches are summed into one row named "(other)".
  static constexpr size_t kMaxName = 512;
  static constexpr size_t kMaxRows = 64;

  void add(KernelLaunch launch, uint64_t ns, int64_t calls = 1);
  void merge(const KernelTable& other);
  const std::map<KernelLaunch, KernelSums>& rows() const { return rows_; }
  bool empty() const { return rows_.empty(); }

  nlohmann::json to_json() const;
  /// Strict and bounded (it comes from an untrusted host): throws std::runtime_error or a json
  /// exception on anything but the shape to_json() writes.
  static KernelTable from_json(const nlohmann::json& j);

 private:
  std::map<KernelLaunch, KernelSums> rows_;
};

}  // namespace kmcts::cuda
