// The CLIP text transformer in the two layouts that SD checkpoints use: Hugging Face
// CLIPTextModel names (SD 1.x, SDXL's first encoder) and OpenCLIP names (SDXL's second
// encoder, with a fused q|k|v projection and a text projection).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "models/common/layers.h"
#include "models/text/clip_text_config.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct ClipTextOutput {
  std::vector<at::Tensor> hidden_states;  // embeddings, then after each layer: L+1 of [B,N,H]
  at::Tensor last_hidden_state;           // after the final layer norm
  at::Tensor pooled;                      // last_hidden_state at the first EOS (argmax id)
  at::Tensor text_embeds;                 // pooled @ projection, when the model has one
};

class ClipTextModel {
 public:
  ClipTextModel(const ClipTextConfig& config, std::string prefix);
  const ClipTextConfig& config() const noexcept { return config_; }
  const weights::ParamList& params() const noexcept { return params_; }
  // Keys that real checkpoints carry but the model does not use.
  std::vector<std::string> ignoredKeys() const;
  // ids: [B, N] int64. Ids from vocab on index rows of `extra` [K, hidden] (vectors of
  // textual-inversion embeddings). The pooled output is taken at the first end token.
  ClipTextOutput forward(const at::Tensor& ids, const at::Tensor& extra = {}) const;
  // The final layer norm on another layer's output (clip skip).
  at::Tensor finalNorm(const at::Tensor& hidden) const;

 private:
  struct Layer {
    LayerNorm ln1, ln2;
    Linear q, k, v, out;                      // HF layout
    at::Tensor in_proj_weight, in_proj_bias;  // OpenCLIP layout
    Linear fc1, fc2;
    std::size_t group = 0;  // weight group (see weights::ParamList)
  };
  ClipTextConfig config_;
  std::string prefix_;
  at::Tensor token_embedding, position_embedding, projection;
  std::vector<Layer> layers_;
  LayerNorm final_ln_;
  std::size_t final_group_ = 0;
  weights::ParamList params_;
};

// Bytes of activations (weights not included) one forward() over `batch` windows of
// max_positions tokens holds at its peak in `dtype`: every layer's hidden state (the
// output keeps them all) and the largest layer's own tensors.
int64_t clipWorkingBytes(const ClipTextConfig& config, int64_t batch, at::ScalarType dtype);

}  // namespace kiln::models
