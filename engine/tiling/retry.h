// A tiled pass that retries in smaller tiles when it runs out of memory anyway: the
// estimate behind its plan can be wrong (other programs take memory, allocators
// fragment), so a failed full pass is retried in tiles and a failed tiled pass in tiles
// half the size, down to 128 pixels, each time after the memory the failure held is
// given back.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>

#include "tiling/plan.h"

namespace kiln::tiling {

struct RetryHooks {
  // One attempt with `plan` (may throw; out-of-memory failures are retried).
  std::function<at::Tensor(const TilePlan& plan)> run;
  // Plans again with `settings` and the memory available now.
  std::function<TilePlan(const TileSettings& settings)> plan;
  // After a failure, before planning again: gives cached memory back, returns the bytes.
  std::function<int64_t()> release;
  // Hears each retry: the plan that failed, the next one, the bytes released.
  std::function<void(const TilePlan& failed, const TilePlan& next, int64_t released)> retried;
};

// Runs `first` (planned with `settings`) over a height x width picture of `cell` pixels
// per grid cell; errors other than running out of memory, and running out of memory with
// tiling off (VaeTiling::Never) or at the smallest tile, are thrown as they come.
at::Tensor runWithRetry(TilePlan first, const TileSettings& settings, int64_t height, int64_t width,
                        int64_t cell, const RetryHooks& hooks);

}  // namespace kiln::tiling
