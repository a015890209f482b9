// Noise levels of flow-matching image models (x_sigma = (1 - sigma) x0 + sigma noise) as
// ComfyUI samples them: the model's sigma table (ModelSamplingFlux for FLUX.1 dev,
// ModelSamplingDiscreteFlow for schnell), the schedulers over it, and diffusers'
// FlowMatchEulerDiscreteScheduler sigmas. The k-diffusion samplers walk these sigmas with
// the clean estimate x - sigma v (sampling/k_samplers.h).
#pragma once

#include <cstdint>
#include <vector>

#include "sampling/sampler_names.h"

namespace kiln::sampling {

// sigma(t) = shift t / (1 + (shift - 1) t) over a table of `table` entries t = i / table
// (i = 1 .. table); the model's timestep of a sigma is sigma * multiplier, and sigma() of
// a timestep shifts timestep / multiplier.
struct FlowModelSampling {
  double shift = 1.0;
  int64_t table = 1000;
  double multiplier = 1000;

  // ComfyUI's ModelSamplingFlux: shift e^mu, 10000 entries, timestep = sigma.
  static FlowModelSampling flux(double mu);
  // ComfyUI's ModelSamplingDiscreteFlow: 1000 entries, timestep = sigma * 1000.
  static FlowModelSampling discrete(double shift);

  double sigmaOfTimestep(double timestep) const;
  double timestepOf(double sigma) const { return sigma * multiplier; }
  // Entry i of the table (0: the lowest), rounded to float32 as ComfyUI stores it.
  double tableSigma(int64_t i) const;
  double sigmaMin() const { return tableSigma(0); }
  double sigmaMax() const { return tableSigma(table - 1); }
};

// FLUX.1's resolution-dependent shift: mu = 0.5 + (1.15 - 0.5) (tokens - 256) / (4096 - 256)
// for `image_tokens` packed latent tokens (ComfyUI's ModelSamplingFlux node with width x
// height / 256 tokens; diffusers' calculate_shift).
double fluxMu(int64_t image_tokens, double base_shift = 0.5, double max_shift = 1.15);

// steps + 1 sigmas from high to low ending in 0 for ComfyUI's scheduler `schedule` over
// `ms`; Schedule::Diffusers gives FlowMatchEulerDiscreteScheduler's (float32
// linspace(1, 1/steps, steps) shifted by ms.shift). Throws kiln::Error(InvalidArgument)
// for steps < 1.
std::vector<double> flowSigmas(const FlowModelSampling& ms, Schedule schedule, int64_t steps);

}  // namespace kiln::sampling
