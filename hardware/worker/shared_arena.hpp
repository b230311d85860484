#pragma once
// Host memory one CPU kernel host shares with the trusted worker: an anonymous shared mapping
// made before the host is forked, so both see the same pages, and unmapped by every host it is
// not for. Tensors are carved from it at 64-byte boundaries (as TensorSet's own buffers are).
#include <cstddef>
#include <vector>

#include "hardware/worker/job.hpp"

namespace kmcts::worker {

class SharedArena {
 public:
  static constexpr size_t kAlign = 64;
  /// Bytes an arena needs for `sets` sets of each of these tensor lists.
  static size_t bytes_for(const std::vector<const std::vector<TensorDesc>*>& lists, int sets);
  explicit SharedArena(size_t bytes);  // throws std::bad_alloc
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  /// The next `bytes`; throws std::runtime_error when the arena is full.
  std::byte* take(size_t bytes);
  /// Where `p` lies in the arena (throws std::out_of_range when outside it).
  size_t offset(const void* p) const;
  std::byte* at(size_t offset, size_t bytes);  // throws std::out_of_range
  /// Unmaps it in this process (a host drops the other side's arena before loading a kernel).
  void unmap();

 private:
  std::byte* base_ = nullptr;
  size_t bytes_ = 0;
  size_t used_ = 0;
};

}  // namespace kmcts::worker
