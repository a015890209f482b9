// Merging a stack of LoRA files into a loaded model's weights. Each patched weight is
// rebuilt in fp32 as the original plus the sum of its LoRA differences and stored in the
// weight's own dtype; the original tensor is kept aside, so removing a LoRA restores it
// bit for bit and changing the stack rebuilds only the weights whose patches changed.
// Weights are replaced, never written in place: callers take offload placements down
// first and place afresh after (see LoadedModel::applyLoras), so what offload moves is
// the merged tensor.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/lora.h"
#include "lora/lora_adapters.h"
#include "lora/lora_file.h"
#include "weights/params.h"

namespace kiln::lora {

// Where a LoRA module lands: a weight slot (and its bias, for full differences) of the
// UNet or a text encoder, whole or a block of rows (q, k or v inside a fused in_proj).
struct LoraTarget {
  at::Tensor* weight = nullptr;
  at::Tensor* bias = nullptr;
  std::string key;  // the weight's checkpoint key
  bool text = false;
  int64_t row_offset = 0;
  int64_t rows = -1;  // -1: every row
};

// Every name a LoRA may use for each patchable weight of a model: each family fills one
// with its own naming rules (normalised module names, see lora_layout.h).
class TargetMap {
 public:
  void add(const std::string& alias, const LoraTarget& target);
  const LoraTarget* find(const std::string& normalised_name) const;
  std::size_t size() const noexcept { return targets_.size(); }

 private:
  std::map<std::string, LoraTarget> targets_;
};

// What a family hands the patcher: the components whose layers take hooks, the names
// their weights go by, and the model's name for messages ("sd1", "wan21").
struct LoraTargets {
  std::string model_name;
  std::vector<const weights::ParamList*> components;
  TargetMap targets;
};

class LoraPatcher {
 public:
  explicit LoraPatcher(LoraTargets targets);
  ~LoraPatcher();  // the weights keep whatever the stack made them
  LoraPatcher(const LoraPatcher&) = delete;
  LoraPatcher& operator=(const LoraPatcher&) = delete;

  // Merge: makes the weights base + the stack's differences. Hook: puts the original
  // weights back and has the patched layers add the stack's terms in their forward.
  // Every file is read and checked before anything changes, so an error (unreadable
  // file, shape mismatch, no key that fits this model) leaves the model as it was.
  // Returns one report per file.
  std::vector<LoraReport> apply(const std::vector<LoraSpec>& stack,
                                LoraMode mode = LoraMode::Merge);
  // Puts every original weight back and removes the hooks.
  void restore();

  const std::vector<LoraSpec>& current() const noexcept { return current_; }
  LoraMode mode() const noexcept { return mode_; }
  // Sampling progress (step / steps) for keyframed strengths in hook mode.
  void setProgress(double progress) noexcept {
    if (adapters_) adapters_->setProgress(progress);
  }
  // Layers with hooks, and the bytes their LoRA tensors hold.
  std::size_t hookedLayers() const noexcept { return adapters_ ? adapters_->layers() : 0; }
  int64_t hookBytes() const { return adapters_ ? adapters_->bytes() : 0; }
  // The hooks' copies for the activations (see LoraAdapters::castBytes), and dropping them.
  int64_t hookCopyBytes() const { return adapters_ ? adapters_->castBytes() : 0; }
  void releaseHookCopies() {
    if (adapters_) adapters_->releaseCasts();
  }
  std::size_t patchedWeights() const noexcept { return patched_.size(); }
  // The weights apply(stack) may replace: those patched now and those the stack's modules
  // land on. Reads the files (cached) and throws as apply() would for one it cannot read.
  std::set<const at::Tensor*> touchedBy(const std::vector<LoraSpec>& stack);
  // Bytes of the originals kept aside for patched weights.
  int64_t backupBytes() const;
  // Weights rebuilt or restored by the last apply (a changed stack touches only these).
  int64_t lastRebuilt() const noexcept { return last_rebuilt_; }

 private:
  struct Patched {
    at::Tensor original;
    std::string signature;  // which files at which strengths made the current tensor
  };
  struct StackPlan;  // what a stack does to which weights (lora_patcher.cpp)
  // Reads and checks every file of the stack; throws as apply() says, nothing changed.
  StackPlan plan(const std::vector<LoraSpec>& stack, LoraMode mode);
  void applyHooks(const std::vector<LoraSpec>& stack, const StackPlan& plan);
  void applyMerged(const StackPlan& plan);  // on failure every original is put back
  std::shared_ptr<const LoraFile> load(const std::string& path);
  void forgetFilesOutside(const std::map<std::string, std::shared_ptr<const LoraFile>>& stack);
  void setAdapters(std::unique_ptr<LoraAdapters> adapters);

  LoraTargets model_;
  std::map<at::Tensor*, Patched> patched_;
  std::vector<LoraSpec> current_;
  LoraMode mode_ = LoraMode::Merge;
  std::unique_ptr<LoraAdapters> adapters_;
  std::map<std::string, std::pair<std::string, std::shared_ptr<const LoraFile>>>
      files_;  // path -> (stamp, file)
  int64_t last_rebuilt_ = 0;
};

}  // namespace kiln::lora
