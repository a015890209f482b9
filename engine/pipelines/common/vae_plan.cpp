#include "pipelines/common/vae_plan.h"

#include "models/vae/vae_tiling.h"

namespace kiln::pipelines {

tiling::TilePlan planVae(VaeWork work, const tiling::TileSettings& settings,
                         const models::VaeConfig& config, int64_t height, int64_t width,
                         at::ScalarType dtype, int64_t available_bytes) {
  const int64_t f = config.downscale();
  tiling::TileWork w;
  w.cell = f;
  if (work == VaeWork::Encode) {
    w.name = "encode";
    w.full_bytes = [&](int64_t h, int64_t wd) {
      return models::encodeWorkingBytes(config, h * f, wd * f, dtype);
    };
    w.tiled_bytes = [&](int64_t h, int64_t wd, const tiling::Tiles& tiles) {
      return models::tiledEncodeWorkingBytes(config, h * f, wd * f, tiles, dtype);
    };
  } else {
    w.name = "decode";
    w.full_bytes = [&](int64_t h, int64_t wd) {
      return models::decodeWorkingBytes(config, h, wd, dtype);
    };
    w.tiled_bytes = [&](int64_t h, int64_t wd, const tiling::Tiles& tiles) {
      return models::tiledDecodeWorkingBytes(config, h, wd, tiles, dtype);
    };
  }
  return tiling::planTiles(w, settings, height, width, available_bytes);
}

}  // namespace kiln::pipelines
