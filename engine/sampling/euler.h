// The Euler sampler (k-diffusion's sample_euler with s_churn = 0; diffusers'
// EulerDiscreteScheduler) over an epsilon-predicting Denoiser.
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "sampling/denoiser.h"
#include "sampling/schedule.h"

namespace kiln::sampling {

struct StepInfo {
  int64_t step = 0;  // 0-based
  int64_t total = 0;
  const at::Tensor* scaled_input = nullptr;
  const at::Tensor* noise_pred = nullptr;
  const at::Tensor* latent = nullptr;    // after the step
  const at::Tensor* denoised = nullptr;  // the step's estimate of the clean latent
};

// Image-to-image and inpainting: where sampling starts from a picture's latent.
struct LatentInit {
  at::Tensor latent;       // the clean latent of the picture, [1, C, h, w]
  int64_t start_step = 0;  // the schedule's step sampling begins at (steps - steps run)
  // [1, 1, h, w] in [0, 1], or undefined: after every step, where the mask is below 1 the
  // latent is blended towards `latent` noised to the next step's level, so the kept area
  // follows the picture and ends exactly on it.
  at::Tensor mask;
};

// Runs every step starting from noise * init_noise_sigma, or with `init` from
// init->latent + noise * sigma at init->start_step; calls on_step after each (which may
// throw to interrupt; StepInfo counts the steps that run). Returns the final latent.
at::Tensor sampleEuler(Denoiser& denoiser, const at::Tensor& noise, const EulerSchedule& schedule,
                       const std::function<void(const StepInfo&)>& on_step = {},
                       const LatentInit* init = nullptr);

}  // namespace kiln::sampling
