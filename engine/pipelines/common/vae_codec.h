// A VAE together with the latent scaling it is used with: what turns scaled latents into
// pictures and back, whether the VAE came with the checkpoint or from a file of its own.
#pragma once

#include <ATen/ATen.h>

#include "models/vae/autoencoder_kl.h"
#include "models/vae/vae_tiling.h"

namespace kiln::pipelines {

// The VAE's compute dtype for a model computing in `model_dtype`: fp32 in place of fp16,
// whose range SD VAEs overflow (SDXL's decoder reaches activations past 65504), as
// diffusers' force_upcast does; otherwise the model's.
inline at::ScalarType vaeComputeDtype(at::ScalarType model_dtype) {
  return model_dtype == at::kHalf ? at::kFloat : model_dtype;
}

struct VaeCodec {
  const models::AutoencoderKL* vae = nullptr;
  at::ScalarType dtype = at::kFloat;  // the VAE's compute dtype
  double scaling_factor = 0.18215;    // of the latent space the latents live in
  double shift = 0;  // latents are (z - shift) * scaling_factor (FLUX.1's VAE: 0.1159)

  const models::VaeConfig& config() const { return vae->config(); }
  // Scaled latent -> image [B, 3, H, W] in ~[-1, 1] (float32); in tiles when `tiles` is
  // given, calling `progress` after each. Throws kiln::Error(NonFinite) for NaN or inf.
  at::Tensor decode(const at::Tensor& latent, const tiling::Tiles* tiles = nullptr,
                    const tiling::TileProgress& progress = {}) const;
  // Image [B, 3, H, W] in [-1, 1] -> scaled latent (the mean of the latent distribution).
  at::Tensor encode(const at::Tensor& image, const tiling::Tiles* tiles = nullptr,
                    const tiling::TileProgress& progress = {}) const;
};

}  // namespace kiln::pipelines
