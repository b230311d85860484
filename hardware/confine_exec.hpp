#pragma once
// Confinement for a program kmcts does not fork itself: `kmcts-confine LIMITS PROGRAM ARGS...`
// applies the confinement LIMITS asks for to itself (a fresh, single-threaded process) and execs
// PROGRAM in its place. kmcts puts it in front of the warm KernelBench harness (posix_spawn'd,
// serve.py) and of the one-shot harness, so that the harness and every candidate process it
// starts run in one view with no network, under one uid: a uid kmcts leased for it when kmcts
// runs as root (shared_uid), else kmcts's own without capabilities (keep_uid). CUDA IPC between
// the harness and its candidate processes fails across uids, so the tree shares one.
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/sandbox.hpp"

namespace kmcts {

/// LIMITS as kmcts-confine takes it (JSON: keep_uid, shared_uid, build, binds, hidden,
/// tmpfs_options, max_file_bytes, max_processes), and back. limits_from_argument throws std::invalid_argument on bad text.
std::string confine_argument(const SandboxLimits& limits);
SandboxLimits limits_from_argument(const std::string& text);

/// `argv` run through kmcts-confine with `limits` (under limits.shared_uid, or keep_uid), when confinement is on
/// (evaluator.confine) and the launcher is found next to kmcts; `argv` unchanged otherwise,
/// with *why saying so ("" when confined).
std::vector<std::string> confined_argv(const SandboxLimits& limits, const std::vector<std::string>& argv,
                                       std::string* why = nullptr);

/// kmcts-confine's main: applies the confinement and execs; returns only on failure (126, with
/// a line on stderr naming the step that failed, or 2 for bad arguments).
int confine_exec_main(int argc, char** argv);

}  // namespace kmcts
