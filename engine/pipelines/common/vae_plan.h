// Deciding, before the VAE runs, whether it works on the whole picture or in tiles, and
// with which tile size: from the architecture's working-memory estimate and the memory
// the device can give.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "kiln/render.h"
#include "models/vae/vae_tiling.h"

namespace kiln::pipelines {

enum class VaeWork { Invalid = 0, Decode, Encode };

struct VaeTilingSettings {
  VaeTiling mode = VaeTiling::Auto;
  int64_t tile_pixels = 0;  // 0: the largest that fits (auto) or 512
  int64_t overlap_pixels = 64;
};

struct VaePlan {
  VaeWork work = VaeWork::Invalid;
  bool tiled = false;
  models::LatentTiles tiles;  // in latent cells, when tiled
  int64_t tile_pixels = 0;    // the same in pixels
  int64_t overlap_pixels = 0;
  int64_t tile_count = 1;
  // Progress units: tile passes (see models::tilePasses), 1 for a full pass.
  int64_t units() const { return tiled ? models::tilePasses(tile_count) : 1; }
  int64_t estimated_bytes = 0;  // working memory of the chosen way
  int64_t full_bytes = 0;       // working memory of one full pass
  int64_t available_bytes = 0;  // what the device could give when planned (-1: unknown)

  // "full decode, about 1.20 GiB of working memory (3.40 GiB free)" or
  // "tiled decode: 16 tiles of 512 px overlapping by 64 px, about 210 MiB (...)".
  std::string describe() const;
};

// Throws kiln::Error(InvalidArgument) for a tile size or overlap that cannot work.
void validateTiling(const VaeTilingSettings& settings);

// Full unless the mode says always, or says auto and the full pass's estimate does not
// fit 90% of `available_bytes` (negative: unknown, which counts as fitting). An automatic
// tile size is the largest of 1024, 768, 512, 384, 256, 128 pixels that fits.
VaePlan planVae(VaeWork work, const VaeTilingSettings& settings, const models::VaeConfig& config,
                int64_t height, int64_t width, at::ScalarType dtype, int64_t available_bytes);

}  // namespace kiln::pipelines
