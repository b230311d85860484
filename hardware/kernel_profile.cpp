#include "hardware/kernel_profile.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "hardware/cuda/kernel_table.hpp"

namespace kmcts {
namespace {

using nlohmann::json;

json side_profile(const cuda::KernelTable& table, int samples, double median_ns, const Problem& problem,
                  const cuda::Roofline& peaks) {
  std::vector<std::pair<cuda::KernelLaunch, cuda::KernelSums>> rows(table.rows().begin(), table.rows().end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  double total_ns = 0;
  int64_t launches = 0;
  for (const auto& [k, s] : rows) total_ns += static_cast<double>(s.ns), launches += s.calls;
  const double per = samples > 0 ? 1.0 / samples : 0.0;
  json kernels = json::array();
  json others = {{"calls_per_call", 0.0}, {"share", 0.0}};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [k, s] = rows[i];
    const double share = total_ns > 0 ? static_cast<double>(s.ns) / total_ns : 0.0;
    if (i >= kProfileRows || k.name == "(other)") {
      others["calls_per_call"] = others["calls_per_call"].get<double>() + static_cast<double>(s.calls) * per;
      others["share"] = others["share"].get<double>() + share;
      continue;
    }
    kernels.push_back({{"name", readable_kernel_name(k.name)},
                       {"calls_per_call", static_cast<double>(s.calls) * per},
                       {"mean_ns", s.calls > 0 ? static_cast<double>(s.ns) / static_cast<double>(s.calls) : 0.0},
                       {"share", share},
                       {"grid", k.grid},
                       {"block", k.block},
                       {"registers", k.registers},
                       {"smem_static", k.smem_static},
                       {"smem_dynamic", k.smem_dynamic},
                       {"local_bytes", k.local_bytes}});
  }
  json side = {{"samples", samples},
               {"median_ns", median_ns},
               {"launches_per_call", static_cast<double>(launches) * per},
               {"kernels", std::move(kernels)},
               {"others", std::move(others)}};
  json achieved = json::object();
  if (median_ns > 0 && problem.bytes > 0) {
    const double rate = problem.bytes / (median_ns * 1e-9);
    achieved["bytes_per_s"] = rate;
    if (peaks.bytes_per_s > 0) achieved["bytes_fraction"] = rate / peaks.bytes_per_s;
  }
  if (median_ns > 0 && problem.flops > 0) {
    const double rate = problem.flops / (median_ns * 1e-9);
    achieved["flops_per_s"] = rate;
    if (peaks.flops_per_s > 0) achieved["flops_fraction"] = rate / peaks.flops_per_s;
  }
  if (!achieved.empty()) side["achieved"] = std::move(achieved);
  return side;
}

}  // namespace

std::string readable_kernel_name(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && out ? std::string(out.get()) : mangled;
  if (name.size() > kProfileNameChars) name = name.substr(0, kProfileNameChars - 3) + "...";
  return name;
}

json kernel_profile(const json& tables, const Problem& problem, double reference_median_ns, double candidate_median_ns,
                    const cuda::Roofline& peaks) {
  if (tables.is_object() && tables.contains("error"))  // the harness refused a side's table
    throw std::runtime_error("a kernel table was refused: " + tables.at("error").get<std::string>());
  if (!tables.is_object() || !tables.contains("candidate")) return nullptr;
  json profile = {{"source", "cupti"}, {"peaks", {{"bytes_per_s", peaks.bytes_per_s}, {"flops_per_s", peaks.flops_per_s}}}};
  profile["candidate"] = side_profile(cuda::KernelTable::from_json(tables.at("candidate")),
                                      tables.value("samples_candidate", 0), candidate_median_ns, problem, peaks);
  profile["reference"] = side_profile(cuda::KernelTable::from_json(tables.at("reference")),
                                      tables.value("samples_reference", 0), reference_median_ns, problem, peaks);
  return profile;
}

}  // namespace kmcts
