// Planning an image VAE's decode or encode (tiling/plan.h) with the architecture's
// working-memory estimates (models/vae/vae_tiling.h).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "models/vae/autoencoder_kl.h"
#include "tiling/plan.h"

namespace kiln::pipelines {

enum class VaeWork { Invalid = 0, Decode, Encode };

// The plan for `work` over a height x width picture (pixels) with a VAE of `config`
// computing in `dtype`, given `available_bytes` (negative: unknown).
tiling::TilePlan planVae(VaeWork work, const tiling::TileSettings& settings,
                         const models::VaeConfig& config, int64_t height, int64_t width,
                         at::ScalarType dtype, int64_t available_bytes);

}  // namespace kiln::pipelines
