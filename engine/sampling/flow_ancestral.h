// Ancestral sampling for flow-matching models (x_sigma = (1 - sigma) x0 + sigma noise), as
// ComfyUI runs euler_ancestral for them (its RF variant): each step goes down to a lower
// noise level along the flow, then scales toward the data and adds fresh noise up to the
// next level. With eta = 1 the whole step's noise is renewed.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "sampling/k_samplers.h"

namespace kiln::sampling {

// Runs from x (at noise level sigmas[0]) down `sigmas` (ending in 0); `noise` gives one
// standard normal latent per step but the last. on_step after each step may throw to stop.
at::Tensor sampleEulerAncestralFlow(const DenoiseFn& model, at::Tensor x,
                                    const std::vector<double>& sigmas, const NoiseFn& noise,
                                    const std::function<void(const SamplerStep&)>& on_step = {},
                                    double eta = 1.0);

}  // namespace kiln::sampling
