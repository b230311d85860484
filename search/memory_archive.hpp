#pragma once
// The optimisation archive (issue 30, item 4): the improvements searches found, kept across runs
// and problems in one SQLite file that the runs on a machine share (`agents.memory.path`;
// default $XDG_DATA_HOME/kmcts/memory.sqlite, else ~/.local/share/kmcts/memory.sqlite). An entry
// is one improvement: a parent and the child made from it that measured faster, the plan that
// made it, both medians, the child's interval, the problem's kind and operator signature, and the
// hardware. Every search records its improvements as it ends (record_run_improvements, with
// `agents.feedback.memory`); `kmcts memory` lists, shows, exports and imports entries.
// relevant() ranks entries for a problem; a new run keeps candidates (memory_for) and shows its
// Planner the most relevant once its seed is measured (memory_prompt_after_seed).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/options.hpp"
#include "core/problem.hpp"

namespace kmcts {

class RunStore;

struct MemoryEntry {
  int64_t id = 0;  // 0 until stored
  std::string created_at, run, problem, kind, signature, hardware, plan;
  std::string parent_hash, child_hash, parent_source, child_source;
  double parent_ns = 0, child_ns = 0;  // medians of the two evaluations
  nlohmann::json interval = nullptr;   // the child's speedup interval against the reference, as its evaluator gave it
  // Where the measurements profiled them (details.kernel_profile, details.hw_counters): each
  // side's largest kernels {"before": [{"name", "share", "mean_ns"}...], "after": [...]}, and the
  // parent's bottleneck verdict ("memory-bound", "compute-bound", "latency/occupancy-bound").
  nlohmann::json profiles = nullptr;
  std::string bottleneck;
  double speedup() const { return child_ns > 0 ? parent_ns / child_ns : 0; }  // child over parent
};

nlohmann::json to_json(const MemoryEntry& e);
/// Throws InputError naming the missing or mistyped field.
MemoryEntry memory_entry_from_json(const nlohmann::json& j);

/// What relevance compares: the operator (the problem's name without a leading number, in lower
/// case: "19_ReLU" -> "relu") and the size class of its inputs (2^k elements in all; "" when the
/// problem declares no tensors, as KernelBench files do), e.g. "relu|2^24".
std::string operator_signature(const Problem& problem);

class MemoryArchive {
 public:
  /// Opens (creating it and its folder) the archive at `file`. Throws RunError when it cannot.
  explicit MemoryArchive(const std::filesystem::path& file);
  ~MemoryArchive();
  MemoryArchive(const MemoryArchive&) = delete;
  MemoryArchive& operator=(const MemoryArchive&) = delete;

  /// agents.memory.path, or the default above when it is empty.
  static std::filesystem::path path_from(const Config& config);
  static std::filesystem::path default_path();

  /// Stores `e` unless an entry for the same parent, child and hardware is there; true when stored.
  bool add(const MemoryEntry& e);
  std::vector<MemoryEntry> list() const;  // oldest first
  std::optional<MemoryEntry> get(int64_t id) const;
  /// Up to k entries of `kind` for a problem, most relevant first: the same operator counts
  /// most, then the same size class, then the same hardware; ties go to the larger speedup.
  std::vector<MemoryEntry> relevant(const std::string& kind, const std::string& signature,
                                    const std::string& hardware, size_t k) const;
  const std::filesystem::path& file() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What a new run takes of the archive for its Planner, kept in its run_info so that a resume
/// or a replay asks the very prompts the run asked, whatever the archive holds by then:
///   "memory_prompt": agents.memory.k lines, ranked by what is known before anything is measured
///     (operator, then size class; the hardware only for a CPU problem), one line each: plan,
///     problem, hardware, the gain over the parent, the parent's verdict and main kernels;
///   "memory_candidates": up to 4k entries so ranked, each {"line", "rank" (8 for the same
///     operator + 4 for the same size class), "hardware", "bottleneck"}, and "memory_k".
/// Only an empty memory_prompt with agents.feedback.memory off or k = 0; empty lines from an empty archive or one that
/// cannot be read (said on stderr).
nlohmann::json memory_for(const Problem& problem, const Config& config);

/// The Planner's lines once the seed kernel is measured (the coordinator asks at its first plan
/// call): `memory`'s candidates ranked again with what the seed's measurement says, the hardware
/// that measured it (+1) and the bottleneck verdict of its main kernel where ncu profiled it (+2),
/// k of them; memory_prompt as it is where there are no candidates (a run made before them).
std::string memory_prompt_after_seed(const nlohmann::json& memory, const nlohmann::json& seed_details);

/// The improvements of a run: each evaluated child, ok, faster than its ok parent, along the
/// edge that made it (expand or repair), with the run's problem and hardware.
std::vector<MemoryEntry> run_improvements(const RunStore& store, const Problem& problem);

/// With agents.feedback.memory on: adds run_improvements() to the archive the config names
/// (none from the synthetic evaluator, which measures nothing, nor from the replay evaluator,
/// which answers with another run's measurements).
/// Never throws (a search must not fail for its memory): returns one line saying what it did,
/// or why it could not.
std::string record_run_improvements(const RunStore& store, const Problem& problem, const Config& config);

}  // namespace kmcts
