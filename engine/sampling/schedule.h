// Discrete noise schedules as diffusers' EulerDiscreteScheduler computes them.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "sampling/schedule_config.h"

namespace kiln::sampling {

struct EulerSchedule {
  at::Tensor alphas_cumprod;     // [train_steps] float32
  std::vector<float> timesteps;  // [steps], possibly fractional
  std::vector<float> sigmas;     // [steps + 1], the last one 0
  float init_noise_sigma = 1.0f;
};

// "scaled_linear" betas, sigmas interpolated at the spaced timesteps (in float64, as
// numpy.interp does), 0 appended. Throws kiln::Error(InvalidArgument) for steps < 1.
EulerSchedule makeEulerSchedule(const ScheduleConfig& config, int64_t steps);

}  // namespace kiln::sampling
