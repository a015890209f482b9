// Training the starter model's UNet and text encoder together on the VAE's latents and
// generated captions.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "latent_set.h"
#include "models/text/clip_text.h"
#include "models/unet/unet.h"
#include "training.h"

namespace kiln::starter {

// Called every Options::snapshot_every steps with the averaged weights.
using Snapshot = std::function<void(int64_t step, const std::vector<at::Tensor>& averages)>;

// Trains both; returns the loss curve.
std::vector<double> trainUNet(models::UNetModel& unet, models::ClipTextModel& text,
                              const LatentSet& data, const Options& o, const Snapshot& snapshot);

}  // namespace kiln::starter
