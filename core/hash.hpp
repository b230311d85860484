#pragma once
#include <string>
#include <string_view>

namespace kmcts {

/// SHA-256 of the bytes, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// The first 12 hex digits of a hash: what people read in tables and file names.
inline std::string short_hash(const std::string& hash) { return hash.substr(0, 12); }

}  // namespace kmcts
