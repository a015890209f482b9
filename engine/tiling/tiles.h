// Tiles over a grid and the weights that blend them: the geometry every tiled pass shares
// (the image VAE's 2D tiles, a video VAE's spatial tiles per frame chunk), with no
// architecture in it.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace kiln::tiling {

// Tile size and overlap in grid cells (latent cells for a VAE).
struct Tiles {
  int64_t tile = 64;
  int64_t overlap = 8;
};

// Throws kiln::Error(InvalidArgument) unless tile >= 1 and 0 <= overlap <= tile / 2.
void checkTiles(const Tiles& tiles);

// Start offsets of tiles of `tile` cells covering `length` cells, neighbours overlapping
// by at least `overlap` cells, spread evenly (every tile has the same size, clipped to
// `length`). Requires tile >= 1 and 0 <= overlap <= tile / 2.
std::vector<int64_t> tileStarts(int64_t length, int64_t tile, int64_t overlap);

// Tiles an h x w grid needs.
int64_t tileCount(int64_t h, int64_t w, const Tiles& tiles);

// Tiled VAE work makes two passes over the tiles (the first gathers the whole picture's
// GroupNorm statistics, the second normalises every tile with them), so it reports
// 2 * tiles progress units; one tile is a single pass.
int64_t tilePasses(int64_t tiles);

// Called after each tile pass with the passes done and in all.
using TileProgress = std::function<void(int64_t done, int64_t total)>;

// Per-tile weights along one axis of `length` cells for tiles of `tile` cells at `starts`:
// a linear ramp over each overlap with a neighbour, normalised so the weights of all
// tiles sum to one at every position. A tile's 2-D weight is the outer product of its two
// axes' weights, which sums to one too.
std::vector<at::Tensor> blendWeights(int64_t length, const std::vector<int64_t>& starts,
                                     int64_t tile);

// One tile's weights along an axis of `length` cells: 1 inside, rising linearly over
// `overlap` cells on the side that meets an earlier tile (`rise`) and falling on the side
// that meets a later one (`fall`); neighbours `length - overlap` apart sum to one.
at::Tensor edgeRamp(int64_t length, int64_t overlap, bool rise, bool fall);

}  // namespace kiln::tiling
