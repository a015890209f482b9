// AutoencoderKL, the image VAE of SD 1.x, 2.x and SDXL, under the original single-file keys
// (encoder.down.N.block.M..., decoder.up.N..., quant_conv, post_quant_conv).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "models/vae/vae_config.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

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
  const weights::ParamList& params() const noexcept { return params_; }
  // Raw decode: z (unscaled latent) [B, embed, h, w] -> image [B, 3, h*f, w*f] in ~[-1, 1].
  at::Tensor decode(const at::Tensor& z) const;
  // The quant_conv output [B, 2*embed, h, w] (mean ‖ logvar).
  at::Tensor encodeMoments(const at::Tensor& image) const;
  LatentMoments encode(const at::Tensor& image) const;

 private:
  struct Impl;
  VaeConfig config_;
  std::string prefix_;
  weights::ParamList params_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::models
