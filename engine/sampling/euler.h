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

// Runs every step starting from noise * init_noise_sigma; calls on_step after each
// (which may throw to interrupt). Returns the final latent.
at::Tensor sampleEuler(Denoiser& denoiser, const at::Tensor& noise, const EulerSchedule& schedule,
                       const std::function<void(const StepInfo&)>& on_step = {});

}  // namespace kiln::sampling
