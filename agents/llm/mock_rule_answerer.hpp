#pragma once
// The mock server's "rule" answerer: the offline rule agents behind an LLM's wire format, so
// an LLM-driven search runs end to end on a shipped CPU problem with no network and no model.
// It reads the prompts of configs/prompts: it finds the kernel a prompt shows among the
// problem's rendered tunable-space points, answers a planner prompt with the rule planner's
// moves written as "set NAME=VALUE ..." plans, a coder prompt by rendering the point such a
// plan names, and a debugger prompt with the parent kernel (a revert).
#include "agents/llm/mock_server.hpp"
#include "core/problem.hpp"

namespace kmcts::llm {

/// `problem` must have a tunable space (InputError otherwise).
MockAnswerer rule_answerer(const Problem& problem);

}  // namespace kmcts::llm
