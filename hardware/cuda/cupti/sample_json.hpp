#pragma once
// An ActivitySample as it travels from kmcts-cuda-host to the trusted worker (one JSON reply
// per call). Parsing is strict and bounded: the candidate's host is untrusted, so a reply that
// is not exactly this shape throws, and the worker treats it as the candidate's fault.
#include <nlohmann/json.hpp>

#include "hardware/cuda/cupti/activity_timer.hpp"

namespace kmcts::cuda {

nlohmann::json sample_to_json(const ActivitySample& s);
/// Throws std::runtime_error (or nlohmann::json::exception) on a malformed sample.
ActivitySample sample_from_json(const nlohmann::json& j);

}  // namespace kmcts::cuda
