// A GPU as libtorch's "cuda" device (NVIDIA through CUDA; AMD through ROCm, whose HIP
// presents itself as CUDA). Weights and activations live in the GPU's memory through
// libtorch's caching allocator; pinned host memory comes from libtorch's pinned allocator,
// counted and limited in a pool of Kiln's like the simulated device's.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "kiln/build_info.h"
#include "memory/device.h"
#include "memory/gpu_backend.h"

namespace kiln::memory {

class GpuDevice final : public Device {
 public:
  // Throws kiln::Error(InvalidArgument) when `index` names no GPU of `backend`.
  GpuDevice(const GpuBackend& backend, int index);
  DeviceKind kind() const noexcept override { return DeviceKind::Cuda; }
  std::string name() const override { return "cuda:" + std::to_string(index_); }
  DeviceMemory memory() const override;
  int64_t emptyCache() override;
  void resetPeak() override;
  at::Tensor upload(const at::Tensor& t) const override;
  at::Tensor download(const at::Tensor& t) const override;
  bool holds(const at::Tensor& t) const override;
  at::Device computeDevice() const override { return device_; }

  bool hasPinnedMemory() const noexcept override { return true; }
  at::Tensor pin(const at::Tensor& host) const override;
  bool isPinned(const at::Tensor& t) const override;
  void setPinnedLimit(int64_t bytes) const override;

  const GpuProperties& properties() const noexcept { return properties_; }
  int64_t uploadCount() const noexcept { return uploads_.load(); }

 private:
  const GpuBackend& backend_;
  int index_;
  at::Device device_;
  GpuProperties properties_;
  std::shared_ptr<MemoryPool> pinned_;  // pinned host blocks, unlimited until set
  mutable std::atomic<int64_t> uploads_{0};
};

// Each GPU this build can use, in device-number order; empty without GPU support or
// without a GPU.
std::vector<GpuDeviceInfo> listGpus();
// "cuda:0  NVIDIA GeForce RTX 4090 (24.0 GiB, sm_89, bf16)"
std::string describeGpu(const GpuDeviceInfo& gpu);
// describeGpu of each listGpus().
std::vector<std::string> describeGpus();

}  // namespace kiln::memory
