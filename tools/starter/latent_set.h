// The UNet's training set: generated scenes encoded by the trained VAE, with where their
// objects lie, and the latent channels' statistics.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "models/vae/autoencoder_kl.h"
#include "scenes.h"
#include "training.h"

namespace kiln::starter {

struct LatentSet {
  std::vector<starter::SceneSpec> specs;
  at::Tensor mean, std;  // [N, 4, h, w], already multiplied by the SD 1.x latent scale
  // [N, 1, h, w]: the share of each latent pixel's patch that objects cover, widened by
  // one latent pixel (the outline that tells shapes apart lies at the object's edge).
  at::Tensor objects;
  // [N, 1, h, w]: the same share, not widened (where the object's colour is).
  at::Tensor cover;
};

LatentSet encodeScenes(const models::AutoencoderKL& vae, const Options& o);
// Per-channel statistics of the scaled latents, as "mean/std" for each channel.
std::string channelStats(const at::Tensor& scaled);
// Shifts and scales each latent channel to zero mean and unit spread, folded into the
// VAE's quant_conv and post_quant_conv (the decoded picture is unchanged); the encoded set
// is transformed the same way.
void whitenLatentChannels(models::AutoencoderKL& vae, LatentSet& set);

}  // namespace kiln::starter
