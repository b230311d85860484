#pragma once
// One writer per run directory (or campaign folder): a second kmcts process that would write
// to the same folder (say, `kmcts resume` while the run is still going) is refused with an
// error naming the process that holds it, instead of both writing the same event log.
#include <filesystem>
#include <optional>
#include <string>

namespace kmcts {

class FolderLock {
 public:
  /// Takes DIR/lock (flock, released when the process dies, even by SIGKILL). InputError
  /// "DIR is in use by kmcts process PID" when another process holds it.
  explicit FolderLock(const std::filesystem::path& dir);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

/// Whether a live process holds DIR/lock, without taking it or creating anything: the holder's
/// pid as it wrote it ("(unknown)" if unreadable), or nullopt when no process holds the folder
/// (the lock file missing included).
std::optional<std::string> folder_holder(const std::filesystem::path& dir);

}  // namespace kmcts
