#include "hardware/cuda/audit.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kmcts::cuda {

nlohmann::json to_json(const CallTrace& t) {
  return {{"streams", t.streams},
          {"kernels", t.kernels},
          {"stray_kernels", t.stray_kernels},
          {"stray_names", t.stray_names},
          {"persisting_l2_limit", t.persisting_l2_limit},
          {"access_policy_bytes", t.access_policy_bytes}};
}

CallTrace call_trace_from_json(const nlohmann::json& j) {
  CallTrace t;
  t.streams = j.at("streams").get<std::set<uint32_t>>();
  t.kernels = j.at("kernels").get<std::set<std::string>>();
  t.stray_kernels = j.at("stray_kernels").get<int>();
  t.stray_names = j.at("stray_names").get<std::set<std::string>>();
  t.persisting_l2_limit = j.at("persisting_l2_limit").get<uint64_t>();
  t.access_policy_bytes = j.at("access_policy_bytes").get<uint64_t>();
  return t;
}

bool binary_defines(const std::string& binary, const std::string& kernel) {
  return !kernel.empty() && binary.find(kernel) != std::string::npos;
}

CandidateAudit::CandidateAudit(uint32_t launch_stream, std::string binary, std::string stream_word, std::string entry)
    : launch_stream_(launch_stream), binary_(std::move(binary)), stream_word_(std::move(stream_word)), entry_(std::move(entry)) {}

std::optional<Violation> CandidateAudit::check(const CallTrace& call) {
  std::set<uint32_t> others;
  for (uint32_t s : call.streams)
    if (s != launch_stream_) others.insert(s);
  if (!others.empty())
    return Violation{"side_stream", fmt::format("work ran on {0}(s) {1} besides the launch {0} {2}: all work must "
                                                "go on the stream passed to {3}",
                                                stream_word_, fmt::join(others, ", "), launch_stream_, entry_)};
  for (const auto& name : call.kernels) {
    auto [it, fresh] = defined_.try_emplace(name, false);
    if (fresh) it->second = binary_defines(binary_, name);
    if (!it->second)
      return Violation{"library_kernel", fmt::format("launched kernel '{}', which the candidate does not define (a "
                                                     "library call instead of its own kernel?)",
                                                     name)};
  }
  if (call.stray_kernels > 0)
    return Violation{"stray_work", fmt::format("{} kernel(s) ({}) ran after the call and its synchronisation had "
                                               "finished (work left to a host thread or launched late)",
                                               call.stray_kernels, fmt::join(call.stray_names, ", "))};
  if (call.persisting_l2_limit > 0 || call.access_policy_bytes > 0)
    return Violation{"persisting_l2", fmt::format("the call set persisting-L2 state (limit {} bytes, access-policy "
                                                  "window {} bytes): data pinned in L2 survives the flush",
                                                  call.persisting_l2_limit, call.access_policy_bytes)};
  return std::nullopt;
}

double roofline_floor_ns(double flops, double bytes, const Roofline& peaks) {
  double floor_s = 0;
  if (peaks.flops_per_s > 0 && flops > 0) floor_s = std::max(floor_s, flops / peaks.flops_per_s);
  if (peaks.bytes_per_s > 0 && bytes > 0) floor_s = std::max(floor_s, bytes / peaks.bytes_per_s);
  return floor_s * 1e9;
}

}  // namespace kmcts::cuda
