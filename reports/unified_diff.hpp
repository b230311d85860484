#pragma once
// A unified diff of two texts, made by GNU diff (`diff -u`, diffutils: on every Debian system).
#include <string>

namespace kmcts {

/// `diff -u` of `before` against `after` with the given labels in the --- / +++ lines; empty
/// when the texts are equal. RunError if diff cannot run or reports trouble (exit status 2).
std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_label,
                         const std::string& after_label, const std::string& program = "diff");

}  // namespace kmcts
