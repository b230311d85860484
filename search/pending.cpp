#include "search/pending.hpp"

KMCTS_OPTION("search.pending", String, "wu_uct", std::nullopt, std::nullopt,
             "Treatment of work in flight during selection: wu_uct, virtual_loss or none.")
KMCTS_OPTION("search.virtual_loss.weight", Double, 1.0, 0.0, 100.0,
             "Virtual loss: how many losses one pending visit counts as.")
KMCTS_OPTION("search.virtual_loss.value", Double, -1.0, -20.0, 0.0,
             "Virtual loss: the reward a pending visit is assumed to bring (-1 = the default failure penalty).")

namespace kmcts {
namespace {

class WuUct final : public PendingTreatment {
 public:
  ChildStats child(double q, int visits, int pending, double prior) const override {
    return {q, static_cast<double>(visits + pending), prior};
  }
  ParentStats parent(int visits, int pending) const override { return {static_cast<double>(visits + pending)}; }
};

class VirtualLoss final : public PendingTreatment {
 public:
  VirtualLoss(double weight, double loss) : weight_(weight), loss_(loss) {}
  ChildStats child(double q, int visits, int pending, double prior) const override {
    double virtual_visits = weight_ * pending;
    double n = visits + virtual_visits;
    double pulled = n > 0 ? (q * visits + loss_ * virtual_visits) / n : q;
    return {pulled, static_cast<double>(visits + pending), prior};
  }
  ParentStats parent(int visits, int pending) const override { return {static_cast<double>(visits + pending)}; }

 private:
  double weight_;
  double loss_;
};

class NoTreatment final : public PendingTreatment {
 public:
  ChildStats child(double q, int visits, int, double prior) const override { return {q, static_cast<double>(visits), prior}; }
  ParentStats parent(int visits, int) const override { return {static_cast<double>(visits)}; }
};

}  // namespace

using P = std::unique_ptr<PendingTreatment>;
KMCTS_REGISTER(PendingTreatmentRegistry, "wu_uct", [](const Config&) -> P { return std::make_unique<WuUct>(); })
KMCTS_REGISTER(PendingTreatmentRegistry, "virtual_loss", [](const Config& c) -> P {
  return std::make_unique<VirtualLoss>(c.get_double("search.virtual_loss.weight"), c.get_double("search.virtual_loss.value"));
})
KMCTS_REGISTER(PendingTreatmentRegistry, "none", [](const Config&) -> P { return std::make_unique<NoTreatment>(); })

}  // namespace kmcts
