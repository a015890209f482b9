// Training the starter model's VAE: the loop, the posterior's start, the latent scale
// folded into the weights, previews and judged reconstructions.
#pragma once

#include <string>
#include <vector>

#include "models/vae/autoencoder_kl.h"
#include "training.h"

namespace kiln::starter {

// The held-out prompts through the VAE alone, judged: the ceiling it sets on shapes
// (tests/support/starter_vae_judge.h).
void reportVaeReconstructions(const models::AutoencoderKL& vae, const Options& o,
                              const std::string& when);
// Trains the VAE; returns its loss curve.
std::vector<double> trainVae(models::AutoencoderKL& vae, const Options& o);
// Starts the posterior's log-variance at -8 (std 0.02), so the decoder sees clean
// latents from the first step instead of unit noise that hides colour and small shapes.
void startNearlyDeterministic(models::AutoencoderKL& vae);
// Folds a scale into the VAE so that scaling_factor * latent has unit spread; returns it.
double normaliseLatentScale(models::AutoencoderKL& vae, const Options& o);
// Top row: generated pictures; bottom row: the VAE's reconstructions (mean latent).
void writeVaePreview(const models::AutoencoderKL& vae, const Options& o, const std::string& path);

}  // namespace kiln::starter
