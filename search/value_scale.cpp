#include "search/value_scale.hpp"

#include <algorithm>

KMCTS_OPTION("search.value_scale", String, "siblings", std::nullopt, std::nullopt,
             "Scale of the children's values a descent compares: none (as backed up), siblings (min-max over the "
             "children compared, so the exploration constant is relative to their spread) or tree (min-max over every "
             "reward the search has measured, as MuZero normalises Q)")

namespace kmcts {
namespace {

class NoScale final : public ValueScale {
 public:
  void apply(std::vector<ChildStats>&, const ValueRange&) const override {}
};

class SiblingScale final : public ValueScale {
 public:
  void apply(std::vector<ChildStats>& children, const ValueRange&) const override {
    if (children.empty()) return;
    auto [lo, hi] = std::minmax_element(children.begin(), children.end(),
                                        [](const ChildStats& a, const ChildStats& b) { return a.q < b.q; });
    const double low = lo->q, spread = hi->q - lo->q;
    for (ChildStats& c : children) c.q = spread > 0 ? (c.q - low) / spread : 0.5;
  }
};

class TreeScale final : public ValueScale {
 public:
  void apply(std::vector<ChildStats>& children, const ValueRange& tree) const override {
    const double spread = tree.seen ? tree.hi - tree.lo : 0;
    // A value outside the range (a backup that is not a mix of measured rewards) is clamped.
    for (ChildStats& c : children) c.q = spread > 0 ? std::clamp((c.q - tree.lo) / spread, 0.0, 1.0) : 0.5;
  }
};

using P = std::unique_ptr<ValueScale>;

}  // namespace
}  // namespace kmcts

KMCTS_REGISTER(kmcts::ValueScaleRegistry, "none", [](const kmcts::Config&) -> kmcts::P { return std::make_unique<kmcts::NoScale>(); })
KMCTS_REGISTER(kmcts::ValueScaleRegistry, "siblings",
               [](const kmcts::Config&) -> kmcts::P { return std::make_unique<kmcts::SiblingScale>(); })
KMCTS_REGISTER(kmcts::ValueScaleRegistry, "tree",
               [](const kmcts::Config&) -> kmcts::P { return std::make_unique<kmcts::TreeScale>(); })
