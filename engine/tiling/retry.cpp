#include "tiling/retry.h"

#include <algorithm>

#include "core/out_of_memory.h"

namespace kiln::tiling {
namespace {

constexpr int64_t kSmallestTile = 128;

}  // namespace

at::Tensor runWithRetry(TilePlan plan, const TileSettings& settings, int64_t height, int64_t width,
                        int64_t cell, const RetryHooks& hooks) {
  for (;;) {
    try {
      return hooks.run(plan);
    } catch (...) {
      if (!core::isOutOfMemory(std::current_exception())) throw;
      const bool smaller_possible = !plan.tiled || plan.tile_pixels > kSmallestTile;
      if (settings.mode == VaeTiling::Never || !smaller_possible) throw;
      // What the failed attempt held is gone with its tensors; give the cached blocks back.
      const int64_t released = hooks.release ? hooks.release() : 0;
      TileSettings retry = settings;
      retry.mode = VaeTiling::Always;
      if (plan.tiled) {
        retry.tile_pixels = std::max(kSmallestTile, plan.tile_pixels / 2 / cell * cell);
      } else if (retry.tile_pixels == 0) {
        // A tile smaller than the picture, at most the default.
        retry.tile_pixels =
            std::clamp(std::max(height, width) / 2 / cell * cell, kSmallestTile, int64_t{512});
      }
      retry.overlap_pixels = std::min(retry.overlap_pixels, retry.tile_pixels / 2);
      TilePlan next = hooks.plan(retry);
      if (hooks.retried) hooks.retried(plan, next, released);
      plan = std::move(next);
    }
  }
}

}  // namespace kiln::tiling
