#include "hardware/worker/shared_arena.hpp"

#include <sys/mman.h>

#include <new>
#include <stdexcept>
#include <string>

#include "kmcts_cpu.h"

namespace kmcts::worker {
namespace {
size_t aligned(size_t bytes) { return (bytes + SharedArena::kAlign - 1) / SharedArena::kAlign * SharedArena::kAlign; }
size_t element_bytes(const TensorDesc& d) { return static_cast<size_t>(d.numel) * (d.dtype == KMCTS_F64 ? 8 : 4); }
}  // namespace

size_t SharedArena::bytes_for(const std::vector<const std::vector<TensorDesc>*>& lists, int sets) {
  size_t total = 0;
  for (const auto* list : lists)
    for (const auto& d : *list) total += aligned(element_bytes(d));
  return total * static_cast<size_t>(sets);
}

SharedArena::SharedArena(size_t bytes) : bytes_(bytes) {
  void* p = mmap(nullptr, std::max<size_t>(bytes, kAlign), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<std::byte*>(p);
}

SharedArena::~SharedArena() { unmap(); }

void SharedArena::unmap() {
  if (base_) munmap(base_, std::max<size_t>(bytes_, kAlign));
  base_ = nullptr;
}

std::byte* SharedArena::take(size_t bytes) {
  const size_t need = aligned(bytes);
  if (used_ + need > bytes_) throw std::runtime_error("the shared tensor arena is full");
  std::byte* p = base_ + used_;
  used_ += need;
  return p;
}

size_t SharedArena::offset(const void* p) const {
  const auto* b = static_cast<const std::byte*>(p);
  if (!base_ || b < base_ || b >= base_ + bytes_) throw std::out_of_range("not in the shared arena");
  return static_cast<size_t>(b - base_);
}

std::byte* SharedArena::at(size_t offset, size_t bytes) {
  if (!base_ || offset > bytes_ || bytes > bytes_ - offset) throw std::out_of_range("outside the shared arena");
  return base_ + offset;
}

}  // namespace kmcts::worker
