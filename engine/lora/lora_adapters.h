// LoRA in hook mode: the weights stay as loaded and each patched layer adds the LoRA's
// term to its output, at a strength that may follow keyframes over the sampling steps.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kiln/lora.h"
#include "lora/lora_file.h"
#include "weights/params.h"

namespace kiln::lora {

// One LoRA module's term on one layer, its tensors in fp32 in host memory.
struct Adapter {
  // Low rank: down and up (and a Tucker mid for convolutions) in the layer's shapes,
  // scaled by `scale`. Anything else: `dense`, the whole difference, scale included.
  at::Tensor down, mid, up, dense;
  at::Tensor bias;  // a full difference's bias change
  double scale = 1.0;
  int64_t row_offset = 0, rows = -1;  // output rows of a fused weight, -1 for all
  bool text = false;
  double text_strength = 1.0;
  LoraSpec spec;  // the denoiser's strength and keyframes
};

// Builds the adapter of `module` for a layer whose weight (or rows of it) has `shape`.
Adapter makeAdapter(const LoraModule& module, const std::vector<int64_t>& shape);

class LoraAdapters final : public weights::LayerAdapters {
 public:
  void add(const at::Tensor* weight, Adapter adapter);
  bool empty() const noexcept { return by_weight_.empty(); }
  std::size_t layers() const noexcept { return by_weight_.size(); }
  int64_t bytes() const;
  // The copies made for the activations (the factors in their dtype, on their device),
  // kept between calls: their bytes, and dropping them (when the component leaves the
  // device, so none outlives the weights it served).
  int64_t castBytes() const;
  void releaseCasts();
  // Sampling progress (step / steps) that keyframed strengths follow.
  void setProgress(double progress) noexcept { progress_.store(progress); }

  at::Tensor adapt(const at::Tensor* weight, const at::Tensor& x, const at::Tensor& y,
                   const weights::LayerCall& call) const override;

 private:
  // t in x's dtype on x's device, cast once and kept.
  at::Tensor like(const at::Tensor& t, const at::Tensor& x) const;
  at::Tensor term(const Adapter& a, const at::Tensor& x, const weights::LayerCall& call) const;

  std::unordered_map<const at::Tensor*, std::vector<Adapter>> by_weight_;
  std::atomic<double> progress_{0.0};
  mutable std::mutex cast_mutex_;
  mutable std::map<std::tuple<const void*, int, int, int>, at::Tensor> cast_;
};

}  // namespace kiln::lora
