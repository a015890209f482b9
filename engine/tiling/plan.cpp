#include "tiling/plan.h"

#include <algorithm>
#include <iterator>

#include "kiln/error.h"
#include "kiln/units.h"

namespace kiln::tiling {
namespace {

constexpr int64_t kDefaultTilePixels = 512;
constexpr int64_t kTileCandidates[] = {1024, 768, 512, 384, 256, 128};

bool fits(int64_t bytes, int64_t available) {
  return available < 0 || bytes <= available / 10 * 9;
}

}  // namespace

std::string TilePlan::describe() const {
  std::string s = tiled ? "tiled " + work + ": " + std::to_string(tile_count) + " tiles of " +
                              std::to_string(tile_pixels) + " px overlapping by " +
                              std::to_string(overlap_pixels) + " px, about " +
                              formatBytes(estimated_bytes)
                        : "full " + work + ", about " + formatBytes(estimated_bytes);
  s += " of working memory";
  if (available_bytes >= 0) s += " (" + formatBytes(available_bytes) + " free";
  if (tiled && available_bytes >= 0) s += "; in one piece it would need " + formatBytes(full_bytes);
  if (available_bytes >= 0) s += ")";
  return s;
}

void validateTiling(const TileSettings& s) {
  if (s.mode == VaeTiling::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no VAE tiling mode set");
  if (s.tile_pixels != 0 && (s.tile_pixels < 64 || s.tile_pixels > 4096))
    throw Error(ErrorKind::InvalidArgument,
                "the VAE tile size must be between 64 and 4096 pixels (or 0 to choose it), got " +
                    std::to_string(s.tile_pixels));
  if (s.overlap_pixels < 0 || (s.tile_pixels != 0 && s.overlap_pixels * 2 > s.tile_pixels))
    throw Error(ErrorKind::InvalidArgument,
                "the VAE tile overlap must be between 0 and half the tile size (" +
                    std::to_string(s.tile_pixels / 2) + " pixels), got " +
                    std::to_string(s.overlap_pixels));
}

TilePlan planTiles(const TileWork& work, const TileSettings& settings, int64_t height,
                   int64_t width, int64_t available_bytes) {
  validateTiling(settings);
  const int64_t f = work.cell;
  const int64_t lh = height / f, lw = width / f;
  TilePlan plan;
  plan.work = work.name;
  plan.available_bytes = available_bytes;
  plan.full_bytes = work.full_bytes(lh, lw);
  plan.estimated_bytes = plan.full_bytes;
  const bool tile = settings.mode == VaeTiling::Always ||
                    (settings.mode == VaeTiling::Auto && !fits(plan.full_bytes, available_bytes));
  if (!tile) return plan;

  const auto tiledAt = [&](int64_t tile_pixels) {
    TilePlan p = plan;
    p.tiled = true;
    p.tiles.tile = std::max<int64_t>(1, tile_pixels / f);
    p.tiles.overlap = std::min(settings.overlap_pixels / f, p.tiles.tile / 2);
    p.tile_pixels = p.tiles.tile * f;
    p.overlap_pixels = p.tiles.overlap * f;
    p.tile_count = tileCount(lh, lw, p.tiles);
    p.estimated_bytes = work.tiled_bytes(lh, lw, p.tiles);
    return p;
  };
  if (settings.tile_pixels > 0) return tiledAt(settings.tile_pixels);
  if (settings.mode == VaeTiling::Always) return tiledAt(kDefaultTilePixels);
  TilePlan best = tiledAt(kTileCandidates[std::size(kTileCandidates) - 1]);
  for (const int64_t candidate : kTileCandidates) {
    if (candidate >= std::max(height, width) &&
        candidate != kTileCandidates[std::size(kTileCandidates) - 1])
      continue;  // a tile as large as the picture is no tiling
    const TilePlan p = tiledAt(candidate);
    if (fits(p.estimated_bytes, available_bytes)) return p;
  }
  return best;
}

}  // namespace kiln::tiling
