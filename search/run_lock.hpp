#pragma once
// One writer per run directory (or campaign folder): a second kmcts process that would write
// to the same folder (say, `kmcts resume` while the run is still going) is refused with an
// error naming the process that holds it, instead of both writing the same event log.
#include <filesystem>

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

}  // namespace kmcts
