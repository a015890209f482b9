// A loaded model as the model cache holds it, for every family alike: its components
// (ModelParts) placed on the job's device as the offload settings say,
// re-placed when they change, sent back to host memory when the cache needs room, counted
// as they move, and patched by LoRA stacks through the names the family gives its layers.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "kiln/error.h"
#include "kiln/lora.h"
#include "lora/lora_patcher.h"
#include "memory/model_cache.h"
#include "memory/offload.h"
#include "pipelines/common/model_parts.h"

namespace kiln::pipelines {

// Hears each placement line as it happens (see ComponentPlacement::apply).
using PlacementLog = std::function<void(const std::string&)>;

// Byte counts are kept as they change, so other threads can read them while a job moves
// the weights.
class LoadedModel final : public memory::CachedModel {
 public:
  LoadedModel(std::unique_ptr<ModelParts> parts, const memory::Device& device);
  ~LoadedModel() override;

  // The model itself, as its family's type: throws kiln::Error(InvalidArgument) when it is
  // another kind (a VAE file where a checkpoint was needed).
  template <class T>
  T& as() const {
    if (auto* t = dynamic_cast<T*>(parts_.get())) return *t;
    throw Error(ErrorKind::InvalidArgument, describe() + " is not the kind of model this needs");
  }
  ModelParts& parts() const noexcept { return *parts_; }

  std::string describe() const override { return description_; }
  std::string staleReason() const override;
  int64_t hostBytes() const override;
  int64_t deviceBytes() const override;
  // Of the device bytes, its weights' (without a hooked LoRA's copies): what placing it
  // again can move.
  int64_t weightDeviceBytes() const noexcept { return device_bytes_.load(); }
  // Every weight back to host memory; the next place() places afresh.
  void offload() override;
  std::vector<std::string> placementSummary() const override;

  // Device bytes that placing with `settings` still needs: weights that will stay on the
  // device and are not there yet, plus what streamed components onload during a call.
  int64_t deviceBytesNeeded(const memory::OffloadSettings& settings) const;
  // Places every component as the settings say (nothing on the CPU); components already
  // placed so are left alone. Pinned memory is limited to what the host has free less
  // the reserve; a failure on one component does not stop the others (it is torn down)
  // and the first error is rethrown. Returns one line per component whose placement was
  // (re)done; `log`, when given, hears each as it happens (a component's before its pin
  // step). `balanced_budget_bytes` is what balanced mode may keep resident.
  std::vector<std::string> place(const memory::OffloadSettings& settings,
                                 int64_t balanced_budget_bytes, const PlacementLog& log = {});
  // The memory map of this model (see kiln/memory_plan.h) for `settings` in `room` (what
  // the device and host offer besides this model's own weights and pins), with
  // the working memory of a width x height picture (frames: a clip's; 0: the family's
  // native size). Reads only what never changes while the model is loaded, so any thread
  // may ask while the model is alive.
  ModelMemoryPlan planMemory(const memory::OffloadSettings& settings, const memory::PlanRoom& room,
                             int64_t width, int64_t height, int64_t frames) const override;
  // Device memory beyond the weights that encoding a prompt or sampling a width x height
  // picture (frames: a clip) needs at its peak; sizes of 0 become the family's native
  // ones (written back). 0 for a model that samples nothing (a VAE file).
  int64_t workingBytes(int64_t& width, int64_t& height, int64_t& frames) const;
  // The same for the native size: what balanced mode always leaves room for.
  int64_t nativeWorkingBytes() const;
  const std::vector<std::unique_ptr<memory::ComponentPlacement>>& placements() const noexcept {
    return placements_;
  }

  // Applies a LoRA stack (see LoraPatcher): merged into the weights or hooked into the
  // layers. Auto merges when every component a LoRA may patch stays resident under
  // `settings` and no strength changes over the steps, and hooks otherwise. A stack and
  // mode equal to the current ones do nothing; a change takes the placements it touches
  // down first, so the next place() moves the merged weights. Errors leave the model as
  // it was; a model that takes no LoRA refuses a stack with InvalidArgument.
  // Returns one report per file when something changed, nothing otherwise.
  std::vector<LoraReport> applyLoras(const std::vector<LoraSpec>& stack,
                                     LoraMode mode = LoraMode::Auto,
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
  int64_t loraBackupBytes() const {
    return patcher_ ? patcher_->backupBytes() + patcher_->hookBytes() : 0;
  }
  // A hooked LoRA's copies in the compute precision, made as the layers run.
  int64_t hookCopyBytes() const;

 private:
  using Placements = std::vector<std::unique_ptr<memory::ComponentPlacement>>;
  std::vector<memory::PlanInput> planInputs() const;
  void recount();
  // Every component torn down (those `which` picks, when given) and every weight brought
  // back to the host, each tried whatever failed before it (after `first`, when given);
  // the first failure is thrown after, as kiln::Error(OutOfMemory).
  void takeOffDevice(const std::function<void()>& first,
                     const std::function<bool(const memory::ComponentPlacement&)>& which);
  // Byte counts and the summary brought up to date however the scope is left.
  struct RecountOnExit {
    LoadedModel* self;
    ~RecountOnExit() { self->recount(); }
  };
  std::unique_ptr<ModelParts> parts_;
  const memory::Device& device_;
  Placements placements_;
  std::vector<const weights::ParamList*> lists_;  // every component's, in order
  // Made when a LoRA stack is first asked about, with the family's names for its layers.
  lora::LoraPatcher* patcher() const;
  mutable std::unique_ptr<lora::LoraPatcher> patcher_;
  mutable std::vector<const weights::ParamList*> lora_components_;  // what LoRAs may patch
  std::vector<LoraReport> lora_reports_;
  std::string description_;
  std::atomic<int64_t> host_bytes_{0}, device_bytes_{0}, pinned_bytes_{0};
  mutable std::mutex summary_mutex_;
  std::vector<std::string> summary_;  // placements_' descriptions, for other threads
};

}  // namespace kiln::pipelines
