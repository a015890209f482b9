// Deciding, before a tiled pass runs, whether it works on the whole grid or in tiles, and
// with which tile size: from its working-memory estimates and the memory the device can
// give. The pass itself says what its estimates are (tiling knows no architecture).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kiln/render.h"
#include "tiling/tiles.h"

namespace kiln::tiling {

// As the settings give it: the mode, the tile size (pixels; 0: the largest that fits in
// auto mode, 512 otherwise) and the overlap (pixels).
struct TileSettings {
  VaeTiling mode = VaeTiling::Auto;
  int64_t tile_pixels = 0;
  int64_t overlap_pixels = 64;
};

// Throws kiln::Error(InvalidArgument) for a tile size or overlap that cannot work.
void validateTiling(const TileSettings& settings);

// What is planned: its name in the log ("decode", "encode"), the pixels per grid cell, and
// the working memory of one full pass over an h x w grid and of a pass in `tiles`.
struct TileWork {
  std::string name;
  int64_t cell = 8;
  std::function<int64_t(int64_t h, int64_t w)> full_bytes;
  std::function<int64_t(int64_t h, int64_t w, const Tiles& tiles)> tiled_bytes;
};

struct TilePlan {
  std::string work;  // TileWork::name
  bool tiled = false;
  Tiles tiles;  // in grid cells, when tiled
  int64_t tile_pixels = 0;
  int64_t overlap_pixels = 0;
  int64_t tile_count = 1;
  // Progress units: tile passes (see tilePasses), 1 for a full pass.
  int64_t units() const { return tiled ? tilePasses(tile_count) : 1; }
  int64_t estimated_bytes = 0;  // working memory of the chosen way
  int64_t full_bytes = 0;       // working memory of one full pass
  int64_t available_bytes = 0;  // what the device could give when planned (-1: unknown)

  // "full decode, about 1.20 GiB of working memory (3.40 GiB free)" or
  // "tiled decode: 16 tiles of 512 px overlapping by 64 px, about 210 MiB (...)".
  std::string describe() const;
};

// Full unless the mode says always, or says auto and the full pass's estimate does not
// fit 90% of `available_bytes` (negative: unknown, which counts as fitting). An automatic
// tile size is the largest of 1024, 768, 512, 384, 256, 128 pixels that fits. `height`
// and `width` are pixels.
TilePlan planTiles(const TileWork& work, const TileSettings& settings, int64_t height,
                   int64_t width, int64_t available_bytes);

}  // namespace kiln::tiling
