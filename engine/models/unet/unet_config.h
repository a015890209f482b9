// The latent-diffusion UNet's hyperparameters, inferred from a checkpoint's names and
// shapes. Free of torch, so that checkpoint detection builds and fuzzes on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace kiln::models
