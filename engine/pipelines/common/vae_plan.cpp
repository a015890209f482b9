#include "pipelines/common/vae_plan.h"

#include <algorithm>

#include "kiln/error.h"
#include "kiln/units.h"

namespace kiln::pipelines {
namespace {

constexpr int64_t kDefaultTilePixels = 512;
constexpr int64_t kTileCandidates[] = {1024, 768, 512, 384, 256, 128};

bool fits(int64_t bytes, int64_t available) {
  return available < 0 || bytes <= available / 10 * 9;
}

const char* vaeWorkName(VaeWork work) {
  return work == VaeWork::Encode ? "encode" : "decode";
}

}  // namespace

std::string VaePlan::describe() const {
  std::string s =
      tiled ? std::string("tiled ") + vaeWorkName(work) + ": " + std::to_string(tile_count) +
                  " tiles of " + std::to_string(tile_pixels) + " px overlapping by " +
                  std::to_string(overlap_pixels) + " px, about " + formatBytes(estimated_bytes)
            : std::string("full ") + vaeWorkName(work) + ", about " + formatBytes(estimated_bytes);
  s += " of working memory";
  if (available_bytes >= 0) s += " (" + formatBytes(available_bytes) + " free";
  if (tiled && available_bytes >= 0) s += "; in one piece it would need " + formatBytes(full_bytes);
  if (available_bytes >= 0) s += ")";
  return s;
}

void validateTiling(const VaeTilingSettings& s) {
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

VaePlan planVae(VaeWork work, const VaeTilingSettings& settings, const models::VaeConfig& config,
                int64_t height, int64_t width, at::ScalarType dtype, int64_t available_bytes) {
  validateTiling(settings);
  const int64_t f = config.downscale();
  const int64_t lh = height / f, lw = width / f;
  VaePlan plan;
  plan.work = work;
  plan.available_bytes = available_bytes;
  plan.full_bytes = work == VaeWork::Decode
                        ? models::decodeWorkingBytes(config, lh, lw, dtype)
                        : models::encodeWorkingBytes(config, lh * f, lw * f, dtype);
  plan.estimated_bytes = plan.full_bytes;
  const bool tile = settings.mode == VaeTiling::Always ||
                    (settings.mode == VaeTiling::Auto && !fits(plan.full_bytes, available_bytes));
  if (!tile) return plan;

  const auto tiledAt = [&](int64_t tile_pixels) {
    VaePlan p = plan;
    p.tiled = true;
    p.tiles.tile = std::max<int64_t>(1, tile_pixels / f);
    p.tiles.overlap = std::min(settings.overlap_pixels / f, p.tiles.tile / 2);
    p.tile_pixels = p.tiles.tile * f;
    p.overlap_pixels = p.tiles.overlap * f;
    p.tile_count = models::tileCount(lh, lw, p.tiles);
    p.estimated_bytes =
        work == VaeWork::Decode
            ? models::tiledDecodeWorkingBytes(config, lh, lw, p.tiles, dtype)
            : models::tiledEncodeWorkingBytes(config, lh * f, lw * f, p.tiles, dtype);
    return p;
  };
  if (settings.tile_pixels > 0) return tiledAt(settings.tile_pixels);
  if (settings.mode == VaeTiling::Always) return tiledAt(kDefaultTilePixels);
  VaePlan best = tiledAt(kTileCandidates[std::size(kTileCandidates) - 1]);
  for (const int64_t candidate : kTileCandidates) {
    if (candidate >= std::max(height, width) &&
        candidate != kTileCandidates[std::size(kTileCandidates) - 1])
      continue;  // a tile as large as the picture is no tiling
    const VaePlan p = tiledAt(candidate);
    if (fits(p.estimated_bytes, available_bytes)) return p;
  }
  return best;
}

}  // namespace kiln::pipelines
