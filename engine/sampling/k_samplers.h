// Samplers over a sigma schedule with the semantics of k-diffusion (as ComfyUI and A1111
// run them): the model is seen as a denoiser D(x, sigma) in the variance-exploding
// parameterisation x = x0 + sigma * n, and each sampler walks sigmas[0] > ... > 0.
//
// Noise order (what makes a seed reproduce): samplers that add noise (euler_ancestral,
// dpmpp_2m_sde, dpmpp_sde, lcm) call the noise source once per added noise, in step order;
// dpmpp_sde calls it twice a step (its half step first). The last step adds none.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "sampling/sampler_names.h"
#include "sampling/schedule.h"

namespace kiln::sampling {

// The denoised estimate of x at noise level sigma.
using DenoiseFn = std::function<at::Tensor(const at::Tensor& x, double sigma)>;
// A standard normal tensor shaped like the latent, a new one per call.
using NoiseFn = std::function<at::Tensor()>;

// The clean estimate from a model's output `out` for x (x = x0 + sigma * noise) at sigma:
// epsilon: x - sigma * out; v: x / (sigma^2 + 1) - out * sigma / sqrt(sigma^2 + 1)
// (k-diffusion's VDenoiser with sigma_data = 1).
at::Tensor denoisedFrom(Prediction prediction, const at::Tensor& x, const at::Tensor& out,
                        double sigma);

struct SamplerStep {
  int64_t step = 0;  // 0-based
  int64_t total = 0;
  const at::Tensor* x = nullptr;         // after the step
  const at::Tensor* denoised = nullptr;  // the step's estimate of the clean latent
};

// Runs `kind` from x (already at noise level sigmas[0]) down sigmas (ending in 0); calls
// on_step after each step (it may throw to interrupt). `noise` is needed only when the
// sampler adds noise (addsNoise). Throws kiln::Error(InvalidArgument) for fewer than two
// sigmas or sigmas that do not decrease.
at::Tensor sampleSigmas(SamplerKind kind, const DenoiseFn& model, at::Tensor x,
                        const std::vector<double>& sigmas, const NoiseFn& noise = {},
                        const std::function<void(const SamplerStep&)>& on_step = {});

}  // namespace kiln::sampling
