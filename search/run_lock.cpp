#include "search/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace kmcts {

FolderLock::FolderLock(const std::filesystem::path& dir) {
  const std::string path = (dir / "lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw RunError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {0};
    const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    throw InputError(fmt::format("{} is in use by kmcts process {}; wait for it or stop it first", dir.string(),
                                 n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("(unknown)")));
  }
  const std::string me = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
    // The pid is only for the message of a process that finds the folder taken.
  }
}

std::optional<std::string> folder_holder(const std::filesystem::path& dir) {
  const std::string path = (dir / "lock").string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    char pid[32] = {0};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("(unknown)");
  }
  ::close(fd);  // releases the shared lock taken to probe
  return holder;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kmcts
