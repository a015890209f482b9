// Wan 2.1's diffusion transformer (text-to-video) under the original layout's names
// (Wan's WanModel and ComfyUI's diffusion_models files): 3D patches, 3D rotary positions,
// self-attention with RMS-normed q/k, cross-attention to the text, time modulation of
// every block and of the head.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct WanTransformerConfig {
  std::array<int64_t, 3> patch{1, 2, 2};  // frames, height, width
  int64_t in_channels = 16;
  int64_t out_channels = 16;
  int64_t dim = 1536;
  int64_t ffn_dim = 8960;
  int64_t freq_dim = 256;
  int64_t text_dim = 4096;
  int64_t heads = 12;
  int64_t layers = 30;
  bool cross_attn_norm = true;
  double eps = 1e-6;
  double rope_theta = 10000.0;
  // Prompt tokens the model was trained with (the encoding is padded to this many); not in
  // the weights: Wan 2.1's 512 unless a configuration file says text_len.
  int64_t text_len = 512;

  int64_t headDim() const { return dim / heads; }
  // Everything from shapes but the head count, which is dim / 128 (every Wan 2.1 size has
  // 128-channel heads) unless `heads` is given (a configuration file's num_heads).
  static WanTransformerConfig detect(const tensor_io::TensorIndex& index, const std::string& prefix,
                                     int64_t heads = 0);
};

// Rotation angles of the 3D rotary embedding for a grid of frames x height x width
// patches, per token (f, h, w row-major) and per channel pair: cos and sin, [S, head_dim/2]
// float32. Pairs are [frame | height | width] with head_dim - 4 (head_dim / 6),
// 2 (head_dim / 6), 2 (head_dim / 6) channels.
std::pair<at::Tensor, at::Tensor> wanRopeAngles(int64_t frames, int64_t height, int64_t width,
                                                int64_t head_dim, double theta);

class WanTransformer {
 public:
  WanTransformer(const WanTransformerConfig& config, std::string prefix);
  WanTransformer(const WanTransformer&) = delete;  // the parameter list points into this object
  WanTransformer& operator=(const WanTransformer&) = delete;
  const WanTransformerConfig& config() const noexcept { return config_; }
  const weights::ParamList& params() const noexcept { return params_; }
  // What every parameter name starts with ("model.diffusion_model." in a ComfyUI file).
  const std::string& prefix() const noexcept { return prefix_; }
  // latent [B, C, F, H, W] (H, W multiples of the patch), timestep [B] (integer or
  // fractional training steps), context [B, L, text_dim] -> velocity [B, C_out, F, H, W].
  at::Tensor forward(const at::Tensor& latent, const at::Tensor& timestep,
                     const at::Tensor& context) const;

 private:
  struct Attention {
    Linear q, k, v, o;
    at::Tensor norm_q, norm_k;
  };
  struct Block {
    at::Tensor modulation;  // [1, 6, dim]
    Attention self_attn, cross_attn;
    LayerNorm norm3;  // before the cross-attention
    Linear ffn0, ffn2;
    std::size_t group = 0;
  };
  at::Tensor attend(const Attention& a, const at::Tensor& x, const at::Tensor& context,
                    const at::Tensor* cos, const at::Tensor* sin) const;

  WanTransformerConfig config_;
  std::string prefix_;
  at::Tensor patch_weight, patch_bias;
  Linear text0, text2, time0, time2, time_proj, head;
  at::Tensor head_modulation;  // [1, 2, dim]
  std::vector<Block> blocks_;
  std::size_t head_group_ = 0;
  weights::ParamList params_;
};

// Bytes of activations (weights not included) one forward() of a batch of one over a
// latent of `frames` x `height` x `width` cells and `context_tokens` prompt tokens holds at
// its peak in `dtype`, the float32 result included.
int64_t wanTransformerWorkingBytes(const WanTransformerConfig& config, int64_t frames,
                                   int64_t height, int64_t width, int64_t context_tokens,
                                   at::ScalarType dtype);

}  // namespace kiln::models
