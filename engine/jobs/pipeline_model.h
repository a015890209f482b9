// A loaded pipeline as the memory module's model cache holds it: its weights live in host
// memory or on the job's device, and the cache can send them back to the host.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "kiln/lora.h"
#include "lora/lora_patcher.h"
#include "memory/model_cache.h"
#include "memory/offload.h"
#include "jobs/placeable_model.h"
#include "nodes/sd_pipeline.h"
#include "nodes/vae_plan.h"

namespace kiln::jobs {

// Identifies a model file as loaded: path, size and modification time, dtype.
std::string modelKey(const std::string& path, at::ScalarType dtype);

// Compute precision by name ("auto", "fp32", "bf16", "fp16") and back; throws
// kiln::Error(InvalidArgument) for another name. Auto is fp16 on a CUDA device and the
// CPU's fast precision (fastCpuDType) on the others, which compute on the CPU.
at::ScalarType computeScalarType(const std::string& name, const memory::Device& device);
at::ScalarType computeScalarType(ComputeDType dtype, const memory::Device& device);
const char* computeDtypeName(at::ScalarType dtype);
// fp16 needs a CUDA device (libtorch's CPU kernels lack half precision): throws
// kiln::Error(InvalidArgument) saying what to choose instead.
void checkComputeDtype(at::ScalarType dtype, const memory::Device& device);

// Byte counts are kept as they change, so other threads can read them while a job moves
// the weights.
class PipelineModel final : public PlaceableModel {
 public:
  PipelineModel(std::unique_ptr<nodes::SdPipeline> pipeline, const memory::Device& device);
  ~PipelineModel() override;

  std::string describe() const override;
  std::string staleReason() const override;
  int64_t hostBytes() const override;
  int64_t hookCopyBytes() const;
  int64_t deviceBytes() const override;
  // Every weight back to host memory; the next place() places afresh.
  void offload() override;
  std::vector<std::string> placementSummary() const override;

  // Device bytes that placing with `settings` still needs: weights that will stay on the
  // device and are not there yet, plus what streamed components onload during a call.
  int64_t deviceBytesNeeded(const memory::OffloadSettings& settings) const override;
  // Places every component (text encoders, UNet, VAE) as the settings say; components
  // already placed so are left alone. Returns one line per component whose placement was
  // (re)done, for the log. `balanced_budget_bytes` is what balanced mode may keep resident.
  std::vector<std::string> place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                 const PlacementLog& log = {}) override;
  const std::vector<std::unique_ptr<memory::ComponentPlacement>>& placements() const noexcept {
    return placements_;
  }

  // Applies a LoRA stack (see LoraPatcher): merged into the weights or hooked into the
  // layers. Auto merges when every LoRA-patched component stays resident under
  // `settings` and no strength changes over the steps, and hooks otherwise. A stack and
  // mode equal to the current ones do nothing; a change takes the placements down first,
  // so the next place() moves the merged weights. Errors leave the model as it was.
  // Returns one report per file when something changed, nothing otherwise.
  std::vector<LoraReport> applyLoras(const std::vector<LoraSpec>& stack, LoraMode mode = LoraMode::Auto,
                                     const memory::OffloadSettings& settings = {});
  // The mode auto stands for with these settings and this stack.
  LoraMode resolveLoraMode(const std::vector<LoraSpec>& stack, LoraMode mode,
                           const memory::OffloadSettings& settings) const;
  // Sampling progress (step / steps) for keyframed strengths.
  void setLoraProgress(double progress) noexcept {
    if (patcher_) patcher_->setProgress(progress);
  }
  LoraMode loraMode() const noexcept { return patcher_ ? patcher_->mode() : LoraMode::Merge; }
  const std::vector<LoraSpec>& loras() const noexcept;
  // The reports of the stack now merged (empty without LoRAs).
  const std::vector<LoraReport>& loraReports() const noexcept { return lora_reports_; }
  // Bytes LoRAs hold: original weights kept aside while merged, hook tensors.
  int64_t loraBackupBytes() const { return patcher_ ? patcher_->backupBytes() + patcher_->hookBytes() : 0; }

  nodes::SdPipeline& pipeline() const noexcept { return *pipeline_; }

 private:
  void recount();
  // Byte counts and the summary brought up to date however the scope is left.
  struct RecountOnExit {
    PipelineModel* self;
    ~RecountOnExit() { self->recount(); }
  };
  std::unique_ptr<nodes::SdPipeline> pipeline_;
  const memory::Device& device_;
  std::vector<std::unique_ptr<memory::ComponentPlacement>> placements_;
  std::unique_ptr<lora::LoraPatcher> patcher_;  // made by the first LoRA stack
  std::vector<LoraReport> lora_reports_;
  std::string description_;
  std::atomic<int64_t> host_bytes_{0}, device_bytes_{0};
  mutable std::mutex summary_mutex_;
  std::vector<std::string> summary_;  // placements_' descriptions, for other threads
};

}  // namespace kiln::jobs
