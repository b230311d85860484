#include "hardware/synthetic/landscape.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include <fmt/format.h>

#include "core/rng.hpp"

namespace kmcts::synthetic {
namespace {

// What each draw is for, so two kinds of draws never share a stream.
enum Tag : uint64_t { kCentre = 1, kWeight, kInteraction, kRugged, kRegion, kPointFailure };

// Fraction of the failure draw's variance that comes from the per-value regions; the rest is
// per point. The more comes from regions, the more one landscape's failed fraction strays from
// the requested rate (over the 72-point test space at rate 0.15, the spread across seeds is
// 0.042 per point alone, 0.068 at 0.25, 0.092 at 0.5). A quarter keeps bad regions visible
// (a value with z_p = -2 roughly doubles its points' failure odds) without that drift.
constexpr double kRegionShare = 0.25;

uint64_t key_of(std::initializer_list<uint64_t> parts) {
  uint64_t k = 0;
  for (uint64_t part : parts) k = mix64(k ^ part);
  return k;
}

double uniform(uint64_t seed, uint64_t key) { return CounterRng(seed, key).uniform(); }

double normal(uint64_t seed, uint64_t key) {
  CounterRng rng(seed, key);
  return standard_normal(rng);
}

// Integers render as JSON numbers, strings as themselves (what TunableSpace::render writes).
std::string rendered(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

double standard_normal(CounterRng& rng) {
  const double u1 = rng.uniform(), u2 = rng.uniform();
  return std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * M_PI * u2);
}

SpaceLandscape::SpaceLandscape(const TunableSpace& space, const LandscapeShape& shape)
    : space_(space), shape_(shape) {
  for (const SpaceParam& p : space.params()) {
    const uint64_t name = string_key(p.name);
    const int n = static_cast<int>(p.values.size());
    centre_.push_back(static_cast<int>(CounterRng(shape.seed, key_of({kCentre, name})).below(n)));
    weight_.push_back(shape.sigma * (0.5 + uniform(shape.seed, key_of({kWeight, name}))));
    const auto d = space.default_point().find(p.name);
    default_.push_back(d == space.default_point().end() ? 0 : std::max(0, space.index_of(p.name, d->second)));
  }
  default_score_ = raw_score(default_);
}

uint64_t SpaceLandscape::point_key(const PointIndex& x) const {
  uint64_t k = 0;
  for (int i : x) k = mix64(k ^ static_cast<uint64_t>(i));
  return k;
}

double SpaceLandscape::raw_score(const PointIndex& x) const {
  const auto& params = space_.params();
  double score = 0;
  for (size_t p = 0; p < params.size(); ++p) {
    const double span = std::max<double>(1, static_cast<double>(params[p].values.size()) - 1);
    const double t = (x[p] - centre_[p]) / span;
    score -= weight_[p] * t * t;
  }
  if (shape_.interaction != 0)
    for (size_t p = 0; p < params.size(); ++p)
      for (size_t q = p + 1; q < params.size(); ++q) {
        const uint64_t k = key_of({kInteraction, string_key(params[p].name), string_key(params[q].name),
                                   static_cast<uint64_t>(x[p]), static_cast<uint64_t>(x[q])});
        score += shape_.interaction * (2 * uniform(shape_.seed, k) - 1);
      }
  if (shape_.ruggedness != 0)
    score += shape_.ruggedness * (2 * uniform(shape_.seed, key_of({kRugged, point_key(x)})) - 1);
  return score;
}

double SpaceLandscape::log_speedup(const PointIndex& x) const { return raw_score(x) - default_score_; }

double SpaceLandscape::failure_draw(const PointIndex& x) const {
  const auto& params = space_.params();
  double region = 0;
  for (size_t p = 0; p < params.size(); ++p)
    region += normal(shape_.seed, key_of({kRegion, string_key(params[p].name), static_cast<uint64_t>(x[p])}));
  region /= std::sqrt(std::max<double>(1, static_cast<double>(params.size())));
  const double z = std::sqrt(kRegionShare) * region +
                   std::sqrt(1 - kRegionShare) * normal(shape_.seed, key_of({kPointFailure, point_key(x)}));
  const double g = 0.5 * std::erfc(-z / std::sqrt(2.0));  // the normal CDF
  return std::min(g, std::nextafter(1.0, 0.0));
}

SpacePoint SpaceLandscape::to_space_point(const PointIndex& x) const {
  SpacePoint point;
  for (size_t p = 0; p < space_.params().size(); ++p) point[space_.params()[p].name] = space_.params()[p].values.at(x[p]);
  return point;
}

TemplateMatcher::TemplateMatcher(const TunableSpace& space, const std::string& template_text) {
  // Bytes 0x01/0x02 never occur in a source or a template; if they do, matching is off.
  if (template_text.find_first_of("\x01\x02") != std::string::npos) return;
  SpacePoint sentinels;
  for (size_t p = 0; p < space.params().size(); ++p) {
    sentinels[space.params()[p].name] = fmt::format("\x01{}\x02", p);
    value_text_.emplace_back();
    for (const auto& v : space.params()[p].values) value_text_.back().push_back(rendered(v));
  }
  // render() resolves placeholders exactly as the agents' renderings did; splitting its
  // output at the sentinels avoids a second parser of the template syntax.
  const std::string marked = space.render(template_text, sentinels);
  size_t pos = 0;
  for (size_t open = marked.find('\x01'); open != std::string::npos; open = marked.find('\x01', pos)) {
    const size_t close = marked.find('\x02', open);
    pieces_.push_back({marked.substr(pos, open - pos), std::stoi(marked.substr(open + 1, close - open - 1))});
    pos = close + 1;
  }
  pieces_.push_back({marked.substr(pos), -1});
}

std::optional<PointIndex> TemplateMatcher::match(const std::string& source) const {
  if (pieces_.empty()) return std::nullopt;
  PointIndex x(value_text_.size(), -1);
  if (!match_from(source, 0, 0, x)) return std::nullopt;
  return x;
}

bool TemplateMatcher::match_from(const std::string& source, size_t pos, size_t piece, PointIndex& x) const {
  const Piece& here = pieces_[piece];
  if (source.compare(pos, here.literal.size(), here.literal) != 0) return false;
  pos += here.literal.size();
  if (here.param < 0) return pos == source.size();
  const auto fits = [&](int v) {
    const std::string& text = value_text_[here.param][v];
    return source.compare(pos, text.size(), text) == 0 &&
           match_from(source, pos + text.size(), piece + 1, x);
  };
  int& slot = x[here.param];
  if (slot >= 0) return fits(slot);  // a later occurrence must repeat the first one's value
  for (int v = 0; v < static_cast<int>(value_text_[here.param].size()); ++v) {
    slot = v;
    if (fits(v)) return true;
  }
  slot = -1;
  return false;
}

}  // namespace kmcts::synthetic
