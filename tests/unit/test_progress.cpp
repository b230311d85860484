// The search's progress line (search/progress.hpp): its ETA, when it is known.
#include <doctest/doctest.h>

#include "search/progress.hpp"

using kmcts::format_progress;
using kmcts::ProgressState;

TEST_CASE("progress: the line gains an ETA once the pace is known") {
  ProgressState p;
  p.evaluations = 4;
  p.budget = 40;
  CHECK(format_progress(p).find("eta") == std::string::npos);  // not known yet
  p.eta_s = 45;
  CHECK(format_progress(p).find("  eta 45s") != std::string::npos);
  p.eta_s = 725;
  CHECK(format_progress(p).find("  eta 12m05s") != std::string::npos);
  p.eta_s = 3 * 3600 + 125;
  CHECK(format_progress(p).find("  eta 3h02m") != std::string::npos);
}
