// A VAE loaded from a file of its own as the model cache holds it: its weights in host
// memory or placed on the job's device like a checkpoint's VAE.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "jobs/placeable_model.h"
#include "nodes/vae_file.h"

namespace kiln::jobs {

class VaeFileModel final : public PlaceableModel {
 public:
  VaeFileModel(std::unique_ptr<nodes::VaeFile> vae, const memory::Device& device);
  ~VaeFileModel() override;

  std::string describe() const override;
  std::string staleReason() const override;
  int64_t hostBytes() const override { return host_bytes_.load(); }
  int64_t deviceBytes() const override { return device_bytes_.load(); }
  void offload() override;
  std::vector<std::string> placementSummary() const override;

  int64_t deviceBytesNeeded(const memory::OffloadSettings& settings) const override;
  // Places the VAE as the settings say (nothing on the CPU); one line for the log when
  // the placement was (re)done.
  std::vector<std::string> place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                 const PlacementLog& log = {}) override;
  const nodes::VaeFile& vae() const noexcept { return *vae_; }

 private:
  void recount();
  std::unique_ptr<nodes::VaeFile> vae_;
  const memory::Device& device_;
  Placements placements_;  // the one component
  std::atomic<int64_t> host_bytes_{0}, device_bytes_{0};
};

}  // namespace kiln::jobs
