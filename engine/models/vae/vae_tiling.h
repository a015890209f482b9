// Tiled VAE decode and encode: the latent (or image) is cut into overlapping tiles on the
// latent grid, each tile runs through the VAE on its own, and the overlaps are cross-faded
// with complementary linear ramps (weights that sum to exactly one), so no seam shows.
// Also the working-memory estimates the decision between full and tiled work rests on.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "models/vae/autoencoder_kl.h"

namespace kiln::models {

// Start offsets of tiles of `tile` cells covering `length` cells, neighbours overlapping
// by at least `overlap` cells, spread evenly (every tile has the same size, clipped to
// `length`). Requires tile >= 1 and 0 <= overlap <= tile / 2.
std::vector<int64_t> tileStarts(int64_t length, int64_t tile, int64_t overlap);

// Tile size and overlap in latent cells.
struct LatentTiles {
  int64_t tile = 64;
  int64_t overlap = 8;
};

// Tiles a [B, C, h, w] latent of that size needs.
int64_t tileCount(int64_t latent_h, int64_t latent_w, const LatentTiles& tiles);

// Tiled work makes two passes over the tiles (the first gathers the whole picture's
// GroupNorm statistics, the second normalises every tile with them), so it reports
// 2 * tiles progress units; one tile is a single pass.
int64_t tilePasses(int64_t tiles);

using TileProgress = std::function<void(int64_t done, int64_t total)>;

// Raw decode of an unscaled latent z [B, embed, h, w] tile by tile; float32 image
// [B, out, h*f, w*f]. Calls `progress` after each tile pass; checks for interruption
// before each.
at::Tensor decodeTiled(const AutoencoderKL& vae, const at::Tensor& z, const LatentTiles& tiles,
                       const TileProgress& progress = {});
// encodeMoments of an image [B, in, H, W] (H, W multiples of the VAE's downscale) tile by
// tile; float32 [B, 2*embed, H/f, W/f].
at::Tensor encodeMomentsTiled(const AutoencoderKL& vae, const at::Tensor& image,
                              const LatentTiles& tiles, const TileProgress& progress = {});

// Bytes of activations (weights not included) a full decode of an h x w latent, or a full
// encode of an H x W image, holds at its peak, computing in `dtype`, including the
// float32 result. Modelled from the architecture's tensors, operation by operation.
int64_t decodeWorkingBytes(const VaeConfig& config, int64_t latent_h, int64_t latent_w,
                           at::ScalarType dtype);
int64_t encodeWorkingBytes(const VaeConfig& config, int64_t height, int64_t width,
                           at::ScalarType dtype);
// The same for tiled work: one tile's working set plus the full-size result.
int64_t tiledDecodeWorkingBytes(const VaeConfig& config, int64_t latent_h, int64_t latent_w,
                                const LatentTiles& tiles, at::ScalarType dtype);
int64_t tiledEncodeWorkingBytes(const VaeConfig& config, int64_t height, int64_t width,
                                const LatentTiles& tiles, at::ScalarType dtype);

}  // namespace kiln::models
