// The SD image VAE's hyperparameters, inferred from a checkpoint's names and shapes. Free
// of torch, so that checkpoint detection builds and fuzzes on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // 1x1 convolutions between the encoder, the latent and the decoder (SD's); FLUX's VAE
  // has none: the encoder's output is the latent's moments and the decoder takes it as is.
  bool quant_convs = true;
  // Latents are (z - shift_factor) * scaling_factor: properties of the model family, not
  // of the shapes, except that a 16-channel VAE without quant convolutions is FLUX.1's ae
  // (0.3611, 0.1159), which detect() sets.
  double scaling_factor = 0.18215;
  double shift_factor = 0;

  // Pixels per latent cell along each axis.
  int64_t downscale() const { return int64_t{1} << (channel_mult.size() - 1); }
  static VaeConfig detect(const tensor_io::TensorIndex& index, const std::string& prefix);
};

}  // namespace kiln::models
