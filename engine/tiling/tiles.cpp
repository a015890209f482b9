#include "tiling/tiles.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kiln/error.h"

namespace kiln::tiling {

void checkTiles(const Tiles& tiles) {
  if (tiles.tile < 1 || tiles.overlap < 0 || tiles.overlap * 2 > tiles.tile)
    throw Error(ErrorKind::InvalidArgument,
                "VAE tiles of " + std::to_string(tiles.tile) + " latent cells with an overlap of " +
                    std::to_string(tiles.overlap) +
                    " are not possible (the overlap is at most half a tile)");
}

std::vector<int64_t> tileStarts(int64_t length, int64_t tile, int64_t overlap) {
  if (tile < 1 || overlap < 0 || overlap * 2 > tile)
    throw Error(ErrorKind::InvalidArgument, "invalid tile layout");
  if (tile >= length) return {0};
  const int64_t n = (length - overlap + (tile - overlap) - 1) / (tile - overlap);
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < n; ++i)
    starts.push_back(static_cast<int64_t>(std::llround(
        static_cast<double>(i) * static_cast<double>(length - tile) / static_cast<double>(n - 1))));
  return starts;
}

int64_t tileCount(int64_t h, int64_t w, const Tiles& tiles) {
  checkTiles(tiles);
  return static_cast<int64_t>(tileStarts(h, tiles.tile, tiles.overlap).size() *
                              tileStarts(w, tiles.tile, tiles.overlap).size());
}

int64_t tilePasses(int64_t tiles) {
  return tiles > 1 ? 2 * tiles : 1;
}

std::vector<at::Tensor> blendWeights(int64_t length, const std::vector<int64_t>& starts,
                                     int64_t tile) {
  const auto n = static_cast<int64_t>(starts.size());
  const int64_t t = std::min(tile, length);
  std::vector<at::Tensor> weights;
  // host: small 1-D weights; a tiled decoder moves each tile's product to the tile's device.
  at::Tensor sum = at::zeros({length}, at::kFloat);
  const at::Tensor local = at::arange(t, at::TensorOptions().dtype(at::kFloat)) + 0.5f;  // host:
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = starts[static_cast<std::size_t>(i)];
    at::Tensor w = at::ones({t}, at::kFloat);  // host:
    if (i > 0) {
      const int64_t ov = starts[static_cast<std::size_t>(i - 1)] + t - s;
      if (ov > 0) w = w * (local / static_cast<float>(ov)).clamp_max(1.0);
    }
    if (i + 1 < n) {
      const int64_t ov = s + t - starts[static_cast<std::size_t>(i + 1)];
      if (ov > 0) w = w * ((static_cast<float>(t) - local) / static_cast<float>(ov)).clamp_max(1.0);
    }
    sum.narrow(0, s, t).add_(w);
    weights.push_back(w);
  }
  for (int64_t i = 0; i < n; ++i)
    weights[static_cast<std::size_t>(i)] = weights[static_cast<std::size_t>(i)] /
                                           sum.narrow(0, starts[static_cast<std::size_t>(i)], t);
  return weights;
}

at::Tensor edgeRamp(int64_t length, int64_t overlap, bool rise, bool fall) {
  // host: small 1-D weights, as blendWeights'.
  const at::Tensor i = at::arange(length, at::TensorOptions().dtype(at::kFloat));
  at::Tensor w = at::ones({length}, at::kFloat);  // host:
  const auto steps = static_cast<double>(overlap + 1);
  if (rise) w = at::minimum(w, (i + 1) / steps);
  if (fall) w = at::minimum(w, (static_cast<double>(length) - i) / steps);
  return w;
}

}  // namespace kiln::tiling
