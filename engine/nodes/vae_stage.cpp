#include "nodes/vae_stage.h"

#include "kiln/units.h"
#include "memory/device.h"

namespace kiln::nodes {
int64_t availableWorkBytes(const memory::Device& device) {
  if (device.isAccelerator()) return device.memory().free_bytes;
  return memory::availableHostBytes().value_or(-1);
}

tiling::TileSettings vaeTilingSettings(const RenderParams& p) {
  return {p.tiling.mode, p.tiling.size, p.tiling.overlap};
}

int64_t vaeStageWorkingBytes(pipelines::VaeWork work, const pipelines::VaeCodec& codec,
                             const tiling::TileSettings& tiling, int64_t height, int64_t width,
                             const memory::Device& device) {
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
  const auto plan = [&](const tiling::TileSettings& settings) {
    return pipelines::planVae(work, settings, codec.config(), height, width, codec.dtype,
                              run.available ? run.available() : availableWorkBytes(run.device));
  };
  const tiling::TilePlan first = plan(run.settings);
  run.env.emit(logEvent(first.describe()));
  if (first.units() != run.tracker.stage(run.stage).total)
    run.tracker.update(run.stage, base_name, first.units(),
                       first.tiled ? first.tile_pixels * first.tile_pixels : 0);

  tiling::RetryHooks hooks;
  hooks.run = [&](const tiling::TilePlan& p) {
    const tiling::TileProgress progress = [&](int64_t done, int64_t total) {
      run.tracker.progress(run.stage, done, total);
    };
    const tiling::Tiles* tiles = p.tiled ? &p.tiles : nullptr;
    at::Tensor out =
        decode ? codec.decode(input, tiles, progress) : codec.encode(input, tiles, progress);
    if (!p.tiled) run.tracker.progress(run.stage, 1, 1);
    return out;
  };
  hooks.plan = plan;
  hooks.release = [&] { return run.device.emptyCache(); };
  hooks.retried = [&](const tiling::TilePlan& failed, const tiling::TilePlan& next,
                      int64_t released) {
    const std::string what = std::string(failed.tiled ? "the tiled " : "the full ") + failed.work;
    run.env.emit(logEvent(what + " ran out of memory on " + run.device.name() + "; freed " +
                          formatBytes(released) +
                          " of cached memory and retrying: " + next.describe()));
    run.tracker.update(run.stage, base_name + " (in tiles after running out of memory)",
                       next.units(), next.tile_pixels * next.tile_pixels);
  };
  return tiling::runWithRetry(first, run.settings, height, width, f, hooks);
}

}  // namespace kiln::nodes
