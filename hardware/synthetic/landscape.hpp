#pragma once
// The analytic landscape behind the synthetic evaluator's "space" mode, and the matcher that
// recovers a variant's point from its source. Public so tests and engine benchmarks can state
// the expected optimum; the evaluator (synthetic/evaluator.cpp) is the only other user.
//
// A point is a vector of value indices, one per parameter in the space's order. With
//   n_p      the number of values of parameter p,  x_p its index,  d_p the default's index,
//   t_p(x) = (x_p - o_p) / max(n_p - 1, 1)   the signed distance to p's bowl centre o_p,
// every constant below drawn once from the landscape seed:
//   o_p ~ uniform index,   w_p = sigma * (0.5 + U_p),  U_p ~ U[0, 1)
//   J_pq(a, b) ~ U[-1, 1)  one value per (pair of parameters, pair of value indices)
//   R(x) ~ U[-1, 1)        one value per point
// the raw score and the log speedup (relative to the default point, so the seed scores 1) are
//   F(x) = -sum_p w_p t_p(x)^2  +  interaction * sum_{p<q} J_pq(x_p, x_q)  +  ruggedness * R(x)
//   log_speedup(x) = F(x) - F(d).
// With interaction = ruggedness = 0 the landscape is separable: its optimum is o (every
// parameter at its bowl centre) with log speedup sum_p w_p t_p(d)^2, and one sweep of
// coordinate ascent from any point finds it.
//
// Failures fall in regions rather than on isolated points, as real ones do (an unroll factor
// that overflows registers breaks every tile size). With z_p(a) ~ N(0,1) per (parameter,
// value index) and z(x) ~ N(0,1) per point,
//   g(x) = Phi( sqrt(rho) * sum_p z_p(x_p) / sqrt(P)  +  sqrt(1 - rho) * z(x) ),  rho = 0.25,
// is uniform on [0, 1) over random landscapes (a sum of independent normals scaled to unit
// variance, through the normal CDF), so "x fails iff g(x) < failure_rate" fails the requested
// fraction of the space on average over seeds; one landscape's fraction varies around it
// (standard deviation 0.07 at rate 0.15 over a 72-point space). The default point never fails.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/space.hpp"

namespace kmcts::synthetic {

/// A standard normal from two of the stream's draws (Box-Muller).
double standard_normal(CounterRng& rng);

/// Value indices, one per parameter, in TunableSpace::params() order.
using PointIndex = std::vector<int>;

struct LandscapeShape {
  uint64_t seed = 0;
  double sigma = 0.5;        // scale of the per-parameter bowls (log-speedup units)
  double interaction = 0.1;  // amplitude of each pairwise term
  double ruggedness = 0.05;  // amplitude of the per-point noise
};

class SpaceLandscape {
 public:
  /// `space` must outlive the landscape.
  SpaceLandscape(const TunableSpace& space, const LandscapeShape& shape);

  /// log(speedup) relative to the default point; exactly 0 there.
  double log_speedup(const PointIndex& x) const;
  /// g(x) above, in [0, 1); a point fails when it is below the failure rate.
  double failure_draw(const PointIndex& x) const;

  const PointIndex& default_point() const { return default_; }
  /// o: the optimum when interaction and ruggedness are 0.
  const PointIndex& bowl_centre() const { return centre_; }
  const std::vector<double>& bowl_weight() const { return weight_; }
  /// The point as the space's SpacePoint (for rendering).
  SpacePoint to_space_point(const PointIndex& x) const;

 private:
  double raw_score(const PointIndex& x) const;
  uint64_t point_key(const PointIndex& x) const;

  const TunableSpace& space_;
  LandscapeShape shape_;
  PointIndex default_;
  PointIndex centre_;
  std::vector<double> weight_;
  double default_score_ = 0;
};

/// Recovers the point a source was rendered from, by matching it against the template: the
/// template is rendered once with a sentinel per parameter, which splits it into literal text
/// and slots; a source matches when the literals agree and each slot holds one of its
/// parameter's values, the same one at every occurrence (backtracking over values that are
/// prefixes of one another). Costs O(source length x values) in practice and needs no
/// enumeration of the space, so spaces of any size work. A source that is not an exact
/// rendering (hand- or LLM-written, reformatted) gives nullopt.
class TemplateMatcher {
 public:
  TemplateMatcher(const TunableSpace& space, const std::string& template_text);
  std::optional<PointIndex> match(const std::string& source) const;

 private:
  struct Piece {
    std::string literal;  // text before the slot (or the tail, for the last piece)
    int param = -1;       // the slot's parameter; -1 for the tail
  };
  bool match_from(const std::string& source, size_t pos, size_t piece, PointIndex& x) const;

  std::vector<Piece> pieces_;
  std::vector<std::vector<std::string>> value_text_;  // per parameter, per value index
};

}  // namespace kmcts::synthetic
