#include "hardware/cuda/kernel_table.hpp"

#include <stdexcept>

namespace kmcts::cuda {

void KernelTable::add(KernelLaunch launch, uint64_t ns, int64_t calls) {
  if (launch.name.size() > kMaxName) launch.name.resize(kMaxName);
  // The last row is kept for "(other)" (not a name a kernel can have).
  const KernelLaunch other{.name = "(other)"};
  const size_t kept = rows_.size() - rows_.count(other);
  if (kept >= kMaxRows - 1 && launch != other && !rows_.count(launch)) launch = other;
  KernelSums& s = rows_[launch];
  s.calls += calls, s.ns += ns;
}

void KernelTable::merge(const KernelTable& other) {
  for (const auto& [launch, sums] : other.rows_) add(launch, sums.ns, sums.calls);
}

nlohmann::json KernelTable::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [k, s] : rows_)
    rows.push_back({{"name", k.name},
                    {"grid", k.grid},
                    {"block", k.block},
                    {"registers", k.registers},
                    {"smem_static", k.smem_static},
                    {"smem_dynamic", k.smem_dynamic},
                    {"local_bytes", k.local_bytes},
                    {"calls", s.calls},
                    {"ns", s.ns}});
  return rows;
}

KernelTable KernelTable::from_json(const nlohmann::json& j) {
  if (!j.is_array() || j.size() > kMaxRows) throw std::runtime_error("a kernel table that is not a list of at most 64 rows");
  KernelTable t;
  for (const auto& r : j) {
    KernelLaunch k;
    k.name = r.at("name").get<std::string>();
    k.grid = r.at("grid").get<std::array<int, 3>>();
    k.block = r.at("block").get<std::array<int, 3>>();
    k.registers = r.at("registers").get<int>();
    k.smem_static = r.at("smem_static").get<int>();
    k.smem_dynamic = r.at("smem_dynamic").get<int>();
    k.local_bytes = r.at("local_bytes").get<int>();
    const auto calls = r.at("calls").get<int64_t>();
    const auto ns = r.at("ns").get<uint64_t>();
    bool bad = calls < 0 || k.name.size() > kMaxName || k.registers < 0 || k.smem_static < 0 || k.smem_dynamic < 0 ||
               k.local_bytes < 0;
    for (int v : k.grid) bad |= v < 0;
    for (int v : k.block) bad |= v < 0;
    if (bad) throw std::runtime_error("a kernel table row out of range");
    t.add(std::move(k), ns, calls);
  }
  return t;
}

}  // namespace kmcts::cuda
