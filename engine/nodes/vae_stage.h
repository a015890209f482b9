// A VAE decode or encode as one stage of a job: planned (full or tiled, which tile size)
// from the memory estimate just before it starts, each tile a progress unit and a
// cancellation point, and a pass that runs out of memory anyway retried in (smaller)
// tiles after everything it held is freed, saying so in the log and the stage's label.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>

#include "nodes/progress_tracker.h"
#include "nodes/run_environment.h"
#include "pipelines/common/vae_codec.h"
#include "pipelines/common/vae_plan.h"
#include "tiling/retry.h"

namespace kiln::memory {
class Device;
}

namespace kiln::nodes {

// Bytes the device can give for work now: its free memory, or for the CPU what the
// operating system has available (-1 where unknown).
int64_t availableWorkBytes(const memory::Device& device);

// The VAE's settings from a job's parameters.
tiling::TileSettings vaeTilingSettings(const RenderParams& params);

// Device memory beyond the weights the stage will need for a height x width picture: the
// plan's estimate against half the device's memory in auto mode (the full pass where it
// fits beside the weights and the sampler, else the largest tile size that does), or for
// the pass the settings fix.
int64_t vaeStageWorkingBytes(pipelines::VaeWork work, const pipelines::VaeCodec& codec,
                             const tiling::TileSettings& tiling, int64_t height, int64_t width,
                             const memory::Device& device);

struct VaeStageRun {
  ProgressTracker& tracker;
  int stage = -1;
  RunEnvironment& env;
  memory::Device& device;
  tiling::TileSettings settings;
  // What the plan takes as available (empty: availableWorkBytes(device)).
  std::function<int64_t()> available;
};

// Decode: `input` is a scaled latent, the result an image in [-1, 1]. Encode: `input` an
// image in [-1, 1], the result a scaled latent. The stage must have been started.
at::Tensor runVaeStage(pipelines::VaeWork work, const pipelines::VaeCodec& codec,
                       const at::Tensor& input, const VaeStageRun& run);

}  // namespace kiln::nodes
