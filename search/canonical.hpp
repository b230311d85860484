#pragma once
// The identity of a variant is its canonical source: comments removed and whitespace
// runs collapsed, so reformatting or re-commenting a kernel never creates a new node.
#include <string>
#include <string_view>

namespace kmcts {

/// C/C++/CUDA source without comments, with each whitespace run (outside string and
/// character literals) collapsed to one space, and no leading/trailing whitespace.
std::string canonical_source(std::string_view source);

/// sha256 of canonical_source(source).
std::string canonical_hash(std::string_view source);

}  // namespace kmcts
