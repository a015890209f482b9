// The latent-diffusion UNet (ldm/sgm "openaimodel") that SD 1.x, 2.x and SDXL share, with
// parameters registered under the original single-file keys (input_blocks.N.M...).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct UNetConfig {
  int64_t in_channels = 4;
  int64_t out_channels = 4;
  int64_t model_channels = 320;
  int64_t time_embed_dim = 1280;
  std::vector<int64_t> channel_mult{1, 2, 4, 4};
  int64_t num_res_blocks = 2;
  // Transformer depth of every input block (levels x num_res_blocks), every output block
  // (levels x (num_res_blocks + 1), deepest level first) and the middle block; 0 = none.
  std::vector<int64_t> input_depth;
  std::vector<int64_t> output_depth;
  int64_t middle_depth = 1;
  int64_t context_dim = 768;
  bool linear_projection = false;
  // Heads: a fixed count (SD 1.x) or a fixed head width (SD 2.x, SDXL); the other is 0.
  int64_t num_heads = 8;
  int64_t num_head_channels = 0;
  // Per-level head counts (diffusers' attention_head_dim list); overrides both above.
  std::vector<int64_t> heads_per_level;
  // SDXL "text_time" conditioning: pooled text embedding + sinusoids of the size ids.
  int64_t adm_in_channels = 0;
  int64_t time_id_embed_dim = 0;

  int64_t levels() const { return static_cast<int64_t>(channel_mult.size()); }
  int64_t headsFor(int64_t level, int64_t channels) const {
    if (!heads_per_level.empty()) return heads_per_level.at(static_cast<std::size_t>(level));
    return num_heads > 0 ? num_heads : channels / num_head_channels;
  }
  // Infers the structure from shapes under prefix (heads and time-id width are not
  // visible in shapes; the caller sets them).
  static UNetConfig detect(const tensor_io::TensorIndex& index, const std::string& prefix);
};

// Conditioning for one UNet call (batch B).
struct UNetInputs {
  at::Tensor latent;     // [B, C, H, W]
  at::Tensor timesteps;  // [B] float (fractional timesteps are allowed)
  at::Tensor context;    // [B, N, context_dim]
  at::Tensor y;          // [B, adm_in_channels] for SDXL (pooled ‖ time-id sinusoids)
};

class UNetModel {
 public:
  UNetModel(const UNetConfig& config, std::string prefix);
  ~UNetModel();
  UNetModel(UNetModel&&) noexcept;
  UNetModel& operator=(UNetModel&&) noexcept;

  const UNetConfig& config() const noexcept { return config_; }
  const ParamList& params() const noexcept { return params_; }
  at::Tensor forward(const UNetInputs& in) const;
  // SDXL: builds y from the pooled embedding [B, P] and the size ids [B, K].
  at::Tensor timeIdConditioning(const at::Tensor& pooled, const at::Tensor& time_ids) const;

 private:
  struct Impl;
  UNetConfig config_;
  std::string prefix_;
  ParamList params_;
  std::unique_ptr<Impl> impl_;
};

// Bytes of activations (weights not included) one forward() holds at its peak for a
// batch of `batch` latents of latent_h x latent_w (a CFG step calls with twice the
// images) and `context_tokens` prompt tokens, computing in `dtype`, the float32 result
// included. Modelled from the architecture's tensors, block by block.
int64_t unetWorkingBytes(const UNetConfig& config, int64_t batch, int64_t latent_h, int64_t latent_w,
                         int64_t context_tokens, at::ScalarType dtype);

}  // namespace kiln::models
