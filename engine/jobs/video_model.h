// A loaded video pipeline as the model cache holds it: its three components (UMT5 text
// encoder, transformer, VAE) placed on the job's device by the offload rules (the text
// encoder at leaf level, the VAE onloaded whole for its calls and resting in host memory
// when large, the transformer as the settings say).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jobs/placeable_model.h"
#include "nodes/wan_pipeline.h"

namespace kiln::jobs {

class VideoModel final : public PlaceableModel {
 public:
  VideoModel(std::unique_ptr<nodes::WanPipeline> pipeline, const memory::Device& device);
  ~VideoModel() override;

  std::string describe() const override;
  std::string staleReason() const override;
  int64_t hostBytes() const override { return host_bytes_.load(); }
  int64_t deviceBytes() const override { return device_bytes_.load(); }
  void offload() override;
  std::vector<std::string> placementSummary() const override;
  int64_t deviceBytesNeeded(const memory::OffloadSettings& settings) const override;
  std::vector<std::string> place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                 const PlacementLog& log = {}) override;

  nodes::WanPipeline& pipeline() const noexcept { return *pipeline_; }
  const Placements& placements() const noexcept { return placements_; }

  // The settings video models are placed with: the user's, plus the video defaults unless
  // the user named the component (never list or a mode of its own). The UMT5 encoder
  // (several GB, used once per job) is always offloaded leaf by leaf; the VAE rests in
  // host memory and is onloaded whole for each decode when above the resident threshold.
  static memory::OffloadSettings videoDefaults(const memory::OffloadSettings& settings);

 private:
  std::vector<const weights::ParamList*> paramLists() const;
  void recount();
  std::unique_ptr<nodes::WanPipeline> pipeline_;
  const memory::Device& device_;
  Placements placements_;
  std::string description_;
  std::atomic<int64_t> host_bytes_{0}, device_bytes_{0};
  mutable std::mutex summary_mutex_;
  std::vector<std::string> summary_;
};

// The model cache's key of a video model: its three parts as loaded.
std::string videoModelKey(const nodes::WanModelPaths& paths, at::ScalarType dtype);

// Loads the pipeline (the VAE in fp32 when the rest is fp16, whose range it needs);
// progress counts tensors.
std::shared_ptr<VideoModel> loadVideoModel(const nodes::WanModelPaths& paths, at::ScalarType dtype,
                                           const memory::Device& device,
                                           const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace kiln::jobs
