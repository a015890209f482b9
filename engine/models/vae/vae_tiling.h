// Tiled VAE decode and encode: the latent (or image) is cut into overlapping tiles on the
// latent grid (tiling/tiles.h), each tile runs through the VAE on its own with the whole
// picture's GroupNorm statistics, and the overlaps are cross-faded with complementary
// linear ramps (weights that sum to exactly one), so no seam shows. Also the
// working-memory estimates the decision between full and tiled work rests on.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "models/vae/autoencoder_kl.h"
#include "tiling/tiles.h"

namespace kiln::models {

// Raw decode of an unscaled latent z [B, embed, h, w] tile by tile; float32 image
// [B, out, h*f, w*f]. Calls `progress` after each tile pass; checks for interruption
// before each.
at::Tensor decodeTiled(const AutoencoderKL& vae, const at::Tensor& z, const tiling::Tiles& tiles,
                       const tiling::TileProgress& progress = {});
// encodeMoments of an image [B, in, H, W] (H, W multiples of the VAE's downscale) tile by
// tile; float32 [B, 2*embed, H/f, W/f].
at::Tensor encodeMomentsTiled(const AutoencoderKL& vae, const at::Tensor& image,
                              const tiling::Tiles& tiles,
                              const tiling::TileProgress& progress = {});

// Bytes of activations (weights not included) a full decode of an h x w latent, or a full
// encode of an H x W image, holds at its peak, computing in `dtype`, including the
// float32 result. Modelled from the architecture's tensors, operation by operation.
int64_t decodeWorkingBytes(const VaeConfig& config, int64_t latent_h, int64_t latent_w,
                           at::ScalarType dtype);
int64_t encodeWorkingBytes(const VaeConfig& config, int64_t height, int64_t width,
                           at::ScalarType dtype);
// The same for tiled work: one tile's working set plus the full-size result.
int64_t tiledDecodeWorkingBytes(const VaeConfig& config, int64_t latent_h, int64_t latent_w,
                                const tiling::Tiles& tiles, at::ScalarType dtype);
int64_t tiledEncodeWorkingBytes(const VaeConfig& config, int64_t height, int64_t width,
                                const tiling::Tiles& tiles, at::ScalarType dtype);

}  // namespace kiln::models
