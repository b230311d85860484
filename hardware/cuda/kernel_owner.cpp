#include "hardware/cuda/kernel_owner.hpp"

namespace kmcts::cuda {

bool is_inductor_kernel(const std::string& name) {
  if (name == "triton_") return true;  // every kernel's name with config.triton.unique_kernel_names off
  // inductor's kernel kinds: pointwise, reduction, persistent reduction, template, foreach,
  // split scan, scan, mixed order, unknown
  for (const char* prefix : {"triton_poi_", "triton_red_", "triton_per_", "triton_tem_", "triton_for_",
                             "triton_spl_", "triton_sca_", "triton_mix_", "triton_unk_"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

KernelOwner owner_of_object(const std::string& object_path, const std::vector<std::string>& own_roots) {
  if (object_path.empty()) return KernelOwner::unknown;
  for (const std::string& root : own_roots) {
    if (root.empty()) continue;
    const std::string prefix = root.back() == '/' ? root : root + "/";
    if (object_path.rfind(prefix, 0) == 0) return KernelOwner::own;
  }
  return KernelOwner::library;
}

KernelOrigin kernel_origin(const KernelOrigin& launch, const std::string& kernel_name) {
  if (is_inductor_kernel(kernel_name)) return {KernelOwner::library, "inductor"};
  return launch;
}

}  // namespace kmcts::cuda
