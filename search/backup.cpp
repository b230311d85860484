#include "search/backup.hpp"

#include <algorithm>
#include <cmath>

KMCTS_OPTION("search.backup", String, "max", std::nullopt, std::nullopt,
             "Backup operator: max (the subtree's best reward: kernel search keeps the single best "
             "variant), mean (average of the subtree's rewards) or power_mean (between the two, "
             "exponent search.backup_power).")
KMCTS_OPTION("search.backup_power", Double, 4.0, 1.0, 64.0,
             "Power-mean exponent p: 1 = mean, large p -> max. Kernel search rewards the best variant "
             "found, not the average, so a p above 1 is a common middle ground.")

namespace kmcts {
namespace {

class MeanBackup final : public Backup {
 public:
  double value(double own, const std::vector<WeightedValue>& children) const override {
    double sum = own, weight = 1;
    for (const auto& c : children) sum += c.weight * c.value, weight += c.weight;
    return sum / weight;
  }
};

class MaxBackup final : public Backup {
 public:
  double value(double own, const std::vector<WeightedValue>& children) const override {
    double best = own;
    for (const auto& c : children)
      if (c.weight > 0) best = std::max(best, c.value);
    return best;
  }
};

// Rewards may be negative (log speedups, penalties): the power mean is taken of values
// shifted to be non-negative, then shifted back. The shift is the largest magnitude a
// reward can have (the clip or the failure penalty), so it is the same for every node.
class PowerMeanBackup final : public Backup {
 public:
  PowerMeanBackup(double p, double shift) : p_(p), shift_(shift) {}
  double value(double own, const std::vector<WeightedValue>& children) const override {
    double sum = std::pow(std::max(0.0, own + shift_), p_), weight = 1;
    for (const auto& c : children) sum += c.weight * std::pow(std::max(0.0, c.value + shift_), p_), weight += c.weight;
    return std::pow(sum / weight, 1.0 / p_) - shift_;
  }

 private:
  double p_;
  double shift_;
};

}  // namespace

using P = std::unique_ptr<Backup>;
KMCTS_REGISTER(BackupRegistry, "mean", [](const Config&) -> P { return std::make_unique<MeanBackup>(); })
KMCTS_REGISTER(BackupRegistry, "max", [](const Config&) -> P { return std::make_unique<MaxBackup>(); })
KMCTS_REGISTER(BackupRegistry, "power_mean", [](const Config& c) -> P {
  double shift = std::max({c.get_double("search.reward_clip"), -c.get_double("search.failure_penalty"), 1.0});
  return std::make_unique<PowerMeanBackup>(c.get_double("search.backup_power"), shift);
})

}  // namespace kmcts
