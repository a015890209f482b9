// AutoencoderKL, the image VAE of SD 1.x, 2.x and SDXL, under the original single-file keys
// (encoder.down.N.block.M..., decoder.up.N..., quant_conv, post_quant_conv).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct VaeConfig {
  int64_t in_channels = 3;
  int64_t out_channels = 3;
  int64_t base_channels = 128;
  std::vector<int64_t> channel_mult{1, 2, 4, 4};
  int64_t num_res_blocks = 2;
  int64_t z_channels = 4;
  int64_t embed_dim = 4;
  double scaling_factor = 0.18215;  // a property of the model family, not of the shapes

  // Pixels per latent cell along each axis.
  int64_t downscale() const { return int64_t{1} << (channel_mult.size() - 1); }
  static VaeConfig detect(const tensor_io::TensorIndex& index, const std::string& prefix);
};

struct LatentMoments {
  at::Tensor mean, logvar, std;
};

class AutoencoderKL {
 public:
  AutoencoderKL(const VaeConfig& config, std::string prefix);
  ~AutoencoderKL();
  AutoencoderKL(AutoencoderKL&&) noexcept;
  AutoencoderKL& operator=(AutoencoderKL&&) noexcept;

  const VaeConfig& config() const noexcept { return config_; }
  const ParamList& params() const noexcept { return params_; }
  // Raw decode: z (unscaled latent) [B, embed, h, w] -> image [B, 3, h*f, w*f] in ~[-1, 1].
  at::Tensor decode(const at::Tensor& z) const;
  // The quant_conv output [B, 2*embed, h, w] (mean ‖ logvar).
  at::Tensor encodeMoments(const at::Tensor& image) const;
  LatentMoments encode(const at::Tensor& image) const;

 private:
  struct Impl;
  VaeConfig config_;
  std::string prefix_;
  ParamList params_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::models
