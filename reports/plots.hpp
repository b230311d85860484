#pragma once
// The figures of a grid report, drawn by gnuplot (Debian's gnuplot-nox: pngcairo and svg
// terminals). For every scope (slug "all", then each problem) and figure KIND:
//   DIR/data/KIND_SLUG.dat   the numbers, gnuplot data blocks (one per configuration)
//   DIR/KIND_SLUG.gp         the script: writes KIND_SLUG.png, then KIND_SLUG.svg; run it
//                            again after editing (`cd DIR && gnuplot KIND_SLUG.gp`) to restyle
//   DIR/KIND_SLUG.png|svg    the figure
// Kinds: curve (mean best-so-far speedup against evaluations, 95% bootstrap band per
// configuration), final (final speedup per configuration: box and each seed's point), and
// cost_wall, cost_gpu, cost_tokens (final speedup against that cost per run; the last two only
// where a run spent any).
#include <filesystem>
#include <string>
#include <vector>

#include "reports/grid_report.hpp"
#include "reports/report_format.hpp"

namespace kmcts {

struct PlotResult {
  std::vector<FigureLink> figures;  // PNGs, relative to DIR (empty when nothing was drawn)
  bool rendered = false;            // gnuplot ran and every figure exists
  std::string message;              // why not, in one line
};

/// Writes the data and scripts, then runs `gnuplot` on each script. gnuplot missing is not an
/// error: the data and scripts are written and `message` says how to install it. A script that
/// fails is a RunError naming it.
PlotResult write_plots(const GridReport& report, const std::filesystem::path& dir,
                       const std::string& gnuplot = "gnuplot");

/// A scope's name as a file-name part: "all" for all problems, else the name with every
/// character outside [A-Za-z0-9._-] replaced by '_'.
std::string scope_slug(const Scope& scope);

}  // namespace kmcts
