#include "hardware/cuda/cupti/sample_json.hpp"

#include <stdexcept>

namespace kmcts::cuda {

nlohmann::json sample_to_json(const ActivitySample& s) {
  return {{"union_ns", s.union_ns},       {"window_ns", s.window_ns},       {"kernels", s.kernels},
          {"memcpys", s.memcpys},         {"memsets", s.memsets},           {"streams", s.streams},
          {"kernel_names", s.kernel_names}, {"stray_before", s.stray_before}, {"stray_after", s.stray_after},
          {"stray_names", s.stray_names}, {"kernel_table", s.kernel_table.to_json()}};
}

ActivitySample sample_from_json(const nlohmann::json& j) {
  constexpr size_t kMaxNames = 4096;  // a reply is parsed whole: bound what it may carry
  ActivitySample s;
  s.union_ns = j.at("union_ns").get<uint64_t>();
  s.window_ns = j.at("window_ns").get<uint64_t>();
  s.kernels = j.at("kernels").get<int>();
  s.memcpys = j.at("memcpys").get<int>();
  s.memsets = j.at("memsets").get<int>();
  s.streams = j.at("streams").get<std::set<uint32_t>>();
  s.kernel_names = j.at("kernel_names").get<std::set<std::string>>();
  s.stray_before = j.at("stray_before").get<int>();
  s.stray_after = j.at("stray_after").get<int>();
  s.stray_names = j.at("stray_names").get<std::set<std::string>>();
  s.kernel_table = KernelTable::from_json(j.at("kernel_table"));
  if (s.kernels < 0 || s.memcpys < 0 || s.memsets < 0 || s.stray_before < 0 || s.stray_after < 0 ||
      s.kernel_names.size() + s.stray_names.size() + s.streams.size() > kMaxNames)
    throw std::runtime_error("a sample out of range");
  return s;
}

}  // namespace kmcts::cuda
