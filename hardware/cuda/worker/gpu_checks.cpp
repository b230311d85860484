#include "hardware/cuda/worker/gpu_checks.hpp"

#include <cstring>

#include "hardware/cuda/worker/gpu_check_kernels.hpp"

namespace kmcts::worker {

namespace checks = kmcts_gpu_checks;

GpuChecks::GpuChecks() {
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate (checks)");
  cuda_check(cudaMalloc(&partials_, sizeof(OutputSummary) * checks::kCompareBlocks), "cudaMalloc (checks)");
  cuda_check(cudaMallocHost(&host_partials_, sizeof(OutputSummary) * checks::kCompareBlocks), "cudaMallocHost (checks)");
  cuda_check(cudaMalloc(&first_, sizeof *first_), "cudaMalloc (checks)");
  cuda_check(cudaMallocHost(&host_first_, sizeof *host_first_), "cudaMallocHost (checks)");
}

GpuChecks::~GpuChecks() {
  (void)cudaFree(partials_);
  (void)cudaFreeHost(host_partials_);
  (void)cudaFree(first_);
  (void)cudaFreeHost(host_first_);
  if (stream_) (void)cudaStreamDestroy(stream_);
}

void GpuChecks::fill(DeviceTensors& inputs, const std::vector<TensorDesc>& descs, uint64_t seed, uint64_t stream_key,
                     int round) {
  for (size_t i = 0; i < descs.size(); ++i)
    cuda_check(checks::launch_fill(inputs.views()[i].data, inputs.element_bytes(i) == 8, descs[i].numel,
                                   fill_distribution(descs[i], round), seed, fill_key(stream_key, round, i), stream_),
               "filling input '" + descs[i].name + "'");
}

void GpuChecks::poison(DeviceTensors& outputs) {
  for (size_t i = 0; i < static_cast<size_t>(outputs.count()); ++i)
    cuda_check(checks::launch_poison(outputs.views()[i].data, outputs.element_bytes(i) == 8, outputs.views()[i].numel,
                                     stream_),
               "poisoning an output");
}

void GpuChecks::copy(DeviceTensors& to, const DeviceTensors& from) { to.copy_from(from, stream_); }

double GpuChecks::element(const DeviceTensors& t, size_t i, int64_t k) const {
  if (t.element_bytes(i) == 8) {
    double x = 0;
    t.read_elements(i, k, 1, &x);
    return x;
  }
  float x = 0;
  t.read_elements(i, k, 1, &x);
  return x;
}

std::optional<Mismatch> GpuChecks::compare(const DeviceTensors& expected, const DeviceTensors& got,
                                           const std::vector<TensorDesc>& descs, double atol, double rtol) {
  for (size_t o = 0; o < descs.size(); ++o) {
    const bool f64 = got.element_bytes(o) == 8;
    cuda_check(checks::launch_compare(expected.data(o), got.data(o), f64, descs[o].numel, atol, rtol, partials_, stream_),
               "comparing output '" + descs[o].name + "'");
    cuda_check(cudaMemcpyAsync(host_partials_, partials_, sizeof(OutputSummary) * checks::kCompareBlocks,
                               cudaMemcpyDeviceToHost, stream_),
               "reading the comparison");
    cuda_check(cudaStreamSynchronize(stream_), "comparing output '" + descs[o].name + "'");
    OutputSummary summary;
    for (int b = 0; b < checks::kCompareBlocks; ++b) summary.merge(host_partials_[b]);
    const int64_t bad = summary.failing_index(atol, rtol);
    if (bad < 0) continue;
    uint64_t bits = 0;
    got.read_elements(o, bad, 1, &bits);  // the low 4 bytes for f32 (little-endian)
    const bool poison = f64 ? bits == kPoisonF64 : static_cast<uint32_t>(bits) == kPoisonF32;
    return output_mismatch(descs[o], summary, element(expected, o, bad), element(got, o, bad), poison, atol, rtol);
  }
  return std::nullopt;
}

std::optional<Mismatch> GpuChecks::modified_input(const DeviceTensors& pristine, const DeviceTensors& now,
                                                  const std::vector<TensorDesc>& descs) {
  for (size_t i = 0; i < descs.size(); ++i) {
    cuda_check(cudaMemsetAsync(first_, 0xFF, sizeof *first_, stream_), "checking inputs");
    cuda_check(checks::launch_first_difference(static_cast<const uint32_t*>(pristine.data(i)),
                                               static_cast<const uint32_t*>(now.data(i)),
                                               static_cast<int64_t>(pristine.bytes(i) / 4), first_, stream_),
               "checking input '" + descs[i].name + "'");
    cuda_check(cudaMemcpyAsync(host_first_, first_, sizeof *first_, cudaMemcpyDeviceToHost, stream_), "checking inputs");
    cuda_check(cudaStreamSynchronize(stream_), "checking input '" + descs[i].name + "'");
    if (*host_first_ == ~0ull) continue;
    const int64_t k = static_cast<int64_t>(*host_first_ * 4 / pristine.element_bytes(i));
    return modified_input_mismatch(descs[i], k, element(pristine, i, k), element(now, i, k));
  }
  return std::nullopt;
}

}  // namespace kmcts::worker
