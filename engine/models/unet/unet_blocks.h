// Building blocks of the ldm UNet: the residual block and the spatial transformer.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "models/common/layers.h"

namespace kiln::models::unet {

struct ResBlock {
  int64_t in = 0, out = 0;
  GroupNorm norm1, norm2;
  Conv2d conv1, conv2, skip;
  Linear emb_proj;

  ResBlock() = default;
  ResBlock(int64_t in_ch, int64_t out_ch, int64_t emb_dim);
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& emb) const;
};

struct CrossAttention {
  int64_t heads = 1;
  Linear to_q, to_k, to_v, to_out;

  CrossAttention() = default;
  CrossAttention(int64_t dim, int64_t context_dim, int64_t heads);
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& context) const;
};

struct TransformerBlock {
  LayerNorm norm1, norm2, norm3;
  CrossAttention attn1, attn2;
  Linear ff_in, ff_out;  // GEGLU projection and output

  TransformerBlock() = default;
  TransformerBlock(int64_t dim, int64_t context_dim, int64_t heads);
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& context) const;
};

struct SpatialTransformer {
  int64_t channels = 0;
  bool linear = false;
  GroupNorm norm;
  Conv2d proj_in_conv, proj_out_conv;
  Linear proj_in_linear, proj_out_linear;
  std::vector<TransformerBlock> blocks;

  SpatialTransformer() = default;
  SpatialTransformer(int64_t channels, int64_t depth, int64_t context_dim, int64_t heads,
                     bool linear_projection);
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& context) const;
};

}  // namespace kiln::models::unet
