#pragma once
// Whole-file reads and writes with errors that name the file.
#include <filesystem>
#include <string>

namespace kmcts {

/// The file's bytes; RunError "cannot read PATH" if it cannot be opened.
std::string read_file(const std::filesystem::path& path);

/// Temp file + rename, so a reader (or a resumed run) never sees half a file. No fsync: this
/// guards against the process being killed, not against power loss. RunError on failure.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

}  // namespace kmcts
