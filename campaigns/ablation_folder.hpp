#pragma once
// The parts of an ablation folder (OUT) that running and --replay-only share.
#include <filesystem>
#include <optional>
#include <string>

#include "campaigns/ablation_grid.hpp"
#include "campaigns/ablation_index.hpp"

namespace kmcts::detail {

std::filesystem::path ablation_out(const AblationGrid& grid, const std::filesystem::path& requested);

/// Records OUT/grid.json, or checks that the one there is this grid (InputError naming the
/// first part that differs).
void check_or_record_grid(const std::filesystem::path& out, const AblationGrid& grid);

/// OUT/runs/<run_id>
std::filesystem::path run_dir_of(const std::filesystem::path& out, const AblationRunSpec& run);

/// The run's store status ("completed", "failed", "interrupted", "running"), or nullopt when
/// its directory holds no run.
std::optional<std::string> run_status(const std::filesystem::path& run_dir);

/// The index row of a finished run, metrics from its summary and store.
AblationRunRow finished_row(const AblationGrid& grid, const AblationRunSpec& run, const std::filesystem::path& out);

/// The index row of a run not (or not yet) finished.
AblationRunRow open_row(const AblationGrid& grid, const AblationRunSpec& run, const std::string& status);


}  // namespace kmcts::detail
