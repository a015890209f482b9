#include "nodes/vae_stage.h"

#include "kiln/units.h"
#include "memory/device.h"

namespace kiln::nodes {
namespace {

constexpr int64_t kSmallestTile = 128;

}  // namespace

int64_t availableWorkBytes(const memory::Device& device) {
  if (device.isAccelerator()) return device.memory().free_bytes;
  return memory::availableHostBytes().value_or(-1);
}

pipelines::VaeTilingSettings vaeTilingSettings(const RenderParams& p) {
  return {p.vae_tiling, p.tile_size, p.tile_overlap};
}

int64_t vaeStageWorkingBytes(pipelines::VaeWork work, const pipelines::VaeCodec& codec,
                             const pipelines::VaeTilingSettings& tiling, int64_t height,
                             int64_t width, const memory::Device& device) {
  const int64_t available = tiling.mode == VaeTiling::Auto ? device.memory().total_bytes / 2 : -1;
  const int64_t f = codec.config().downscale();
  return pipelines::planVae(work, tiling, codec.config(), std::max(f, height / f * f),
                            std::max(f, width / f * f), codec.dtype, available)
      .estimated_bytes;
}

at::Tensor runVaeStage(pipelines::VaeWork work, const pipelines::VaeCodec& codec,
                       const at::Tensor& input, const VaeStageRun& run) {
  const bool decode = work == pipelines::VaeWork::Decode;
  const int64_t f = codec.config().downscale();
  const int64_t height = decode ? input.size(2) * f : input.size(2);
  const int64_t width = decode ? input.size(3) * f : input.size(3);
  const std::string base_name = run.tracker.stage(run.stage).name;
  const pipelines::VaeTilingSettings& settings = run.settings;
  const auto available = [&] {
    return run.available ? run.available() : availableWorkBytes(run.device);
  };

  pipelines::VaePlan plan =
      pipelines::planVae(work, settings, codec.config(), height, width, codec.dtype, available());
  run.env.emit(logEvent(plan.describe()));
  if (plan.units() != run.tracker.stage(run.stage).total)
    run.tracker.update(run.stage, base_name, plan.units(),
                       plan.tiled ? plan.tile_pixels * plan.tile_pixels : 0);

  for (;;) {
    try {
      const models::TileProgress progress = [&](int64_t done, int64_t total) {
        run.tracker.progress(run.stage, done, total);
      };
      const models::LatentTiles* tiles = plan.tiled ? &plan.tiles : nullptr;
      at::Tensor out =
          decode ? codec.decode(input, tiles, progress) : codec.encode(input, tiles, progress);
      if (!plan.tiled) run.tracker.progress(run.stage, 1, 1);
      return out;
    } catch (...) {
      if (!isOutOfMemory(std::current_exception())) throw;
      const bool smaller_possible = !plan.tiled || plan.tile_pixels > kSmallestTile;
      if (settings.mode == VaeTiling::Never || !smaller_possible) throw;
      // What the failed attempt held is gone with its tensors; give the cached blocks back.
      const int64_t released = run.device.emptyCache();
      pipelines::VaeTilingSettings retry = settings;
      retry.mode = VaeTiling::Always;
      if (plan.tiled) {
        retry.tile_pixels = std::max(kSmallestTile, plan.tile_pixels / 2 / f * f);
      } else if (retry.tile_pixels == 0) {
        // A tile smaller than the picture, at most the default.
        retry.tile_pixels =
            std::clamp(std::max(height, width) / 2 / f * f, kSmallestTile, int64_t{512});
      }
      retry.overlap_pixels = std::min(retry.overlap_pixels, retry.tile_pixels / 2);
      const std::string what =
          std::string(plan.tiled ? "the tiled " : "the full ") + (decode ? "decode" : "encode");
      plan =
          pipelines::planVae(work, retry, codec.config(), height, width, codec.dtype, available());
      run.env.emit(logEvent(what + " ran out of memory on " + run.device.name() + "; freed " +
                            formatBytes(released) +
                            " of cached memory and retrying: " + plan.describe()));
      run.tracker.update(run.stage, base_name + " (in tiles after running out of memory)",
                         plan.units(), plan.tile_pixels * plan.tile_pixels);
    }
  }
}

}  // namespace kiln::nodes
