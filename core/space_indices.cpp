// TunableSpace's index form of points: what the rule planner enumerates in.
#include <algorithm>
#include <numeric>

#include "core/space.hpp"

namespace kmcts {

void TunableSpace::prepare_point_texts() {
  text_order_.resize(params_.size());
  std::iota(text_order_.begin(), text_order_.end(), size_t{0});
  // nlohmann's objects are std::maps keyed by std::string: dump() writes keys in this order.
  std::sort(text_order_.begin(), text_order_.end(), [&](size_t a, size_t b) { return params_[a].name < params_[b].name; });
  value_texts_.assign(params_.size(), {});
  for (size_t i = 0; i < params_.size(); ++i)
    for (const nlohmann::json& v : params_[i].values)
      value_texts_[i].push_back(nlohmann::json(params_[i].name).dump() + ":" + v.dump());
}

std::optional<TunableSpace::Indices> TunableSpace::indices_of(const SpacePoint& point) const {
  if (point.size() != params_.size()) return std::nullopt;
  Indices out(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    auto it = point.find(params_[i].name);
    if (it == point.end()) return std::nullopt;
    auto v = std::find(params_[i].values.begin(), params_[i].values.end(), it->second);
    if (v == params_[i].values.end()) return std::nullopt;
    out[i] = static_cast<int>(v - params_[i].values.begin());
  }
  return out;
}

SpacePoint TunableSpace::point_at(const Indices& indices) const {
  SpacePoint p;
  for (size_t i = 0; i < params_.size(); ++i) p.emplace(params_[i].name, params_[i].values.at(static_cast<size_t>(indices.at(i))));
  return p;
}

void TunableSpace::append_point_text(const Indices& indices, std::string& out) const {
  out += '{';
  for (size_t k = 0; k < text_order_.size(); ++k) {
    if (k > 0) out += ',';
    const size_t i = text_order_[k];
    out += value_texts_[i][static_cast<size_t>(indices[i])];
  }
  out += '}';
}

bool TunableSpace::valid_at(const Indices& indices) const {
  return constraints_.empty() || valid(point_at(indices));  // in range by contract: only constraints can fail
}

}  // namespace kmcts
