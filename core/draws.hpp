#pragma once
// Draws from continuous distributions over a CounterRng stream, so they replay like every
// other draw: the same stream position gives the same value on any thread.
#include "core/rng.hpp"

namespace kmcts {

/// A standard normal draw (Box-Muller from two uniform draws).
double normal_draw(CounterRng& rng);
/// A Gamma(shape, 1) draw, shape > 0 (Marsaglia and Tsang; shape < 1 by the boost u^(1/shape)).
double gamma_draw(double shape, CounterRng& rng);
/// A Beta(a, b) draw (a, b > 0): the ratio of two gamma draws.
double beta_draw(double a, double b, CounterRng& rng);

}  // namespace kmcts
