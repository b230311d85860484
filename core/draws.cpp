#include "core/draws.hpp"

#include <cmath>

namespace kmcts {

namespace {
constexpr double kTwoPi = 6.283185307179586;
}

double normal_draw(CounterRng& rng) {
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();  // u1 in (0, 1]
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double gamma_draw(double shape, CounterRng& rng) {
  if (shape < 1) return gamma_draw(shape + 1, rng) * std::pow(1.0 - rng.uniform(), 1.0 / shape);
  const double d = shape - 1.0 / 3, c = 1.0 / std::sqrt(9 * d);
  while (true) {
    double x, v;
    do {
      x = normal_draw(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double beta_draw(double a, double b, CounterRng& rng) {
  const double x = gamma_draw(a, rng), y = gamma_draw(b, rng);
  return x + y > 0 ? x / (x + y) : 0.5;
}

}  // namespace kmcts
