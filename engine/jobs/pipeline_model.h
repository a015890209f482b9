// A loaded pipeline as the memory module's model cache holds it: its weights live in host
// memory or on the job's device, and the cache can send them back to the host.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <memory>
#include <string>

#include "memory/model_cache.h"
#include "nodes/sd_pipeline.h"

namespace kiln::jobs {

// Identifies a model file as loaded: path, size and modification time, dtype.
std::string modelKey(const std::string& path, at::ScalarType dtype);

// Byte counts are kept as they change, so other threads can read them while a job moves
// the weights.
class PipelineModel final : public memory::CachedModel {
 public:
  PipelineModel(std::unique_ptr<nodes::SdPipeline> pipeline, const memory::Device& device);

  std::string describe() const override;
  int64_t hostBytes() const override;
  int64_t deviceBytes() const override;
  void offload() override;
  // Copies every weight that is in host memory to the device (the host copy is dropped).
  void onload();

  nodes::SdPipeline& pipeline() const noexcept { return *pipeline_; }

 private:
  void recount();
  std::unique_ptr<nodes::SdPipeline> pipeline_;
  const memory::Device& device_;
  std::string description_;
  std::atomic<int64_t> host_bytes_{0}, device_bytes_{0};
};

// Device memory a render of this size needs beyond the weights: a rough upper bound from
// the VAE decoder's full-resolution activations, its largest working set.
int64_t estimateWorkingBytes(const models::SdModelSpec& spec, int64_t width, int64_t height,
                             at::ScalarType dtype);

}  // namespace kiln::jobs
