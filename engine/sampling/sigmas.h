// Noise levels for k-diffusion style sampling: the model's discrete sigma table (from its
// training betas), the schedules ComfyUI and A1111 offer over it, and the mapping between
// sigmas and the model's (fractional) timesteps.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sampling/sampler_names.h"
#include "sampling/schedule.h"

namespace kiln::sampling {

// The model's discrete noise levels: sigma_t = sqrt((1 - alphabar_t) / alphabar_t).
class SigmaTable {
 public:
  explicit SigmaTable(const ScheduleConfig& config);
  double sigmaMin() const { return sigmas_.front(); }
  double sigmaMax() const { return sigmas_.back(); }
  // k-diffusion's sigma_to_t: the fractional timestep whose log sigma interpolates `sigma`.
  double timestep(double sigma) const;
  // The sigma of a fractional timestep, interpolated in log sigma.
  double sigma(double timestep) const;
  int64_t size() const { return static_cast<int64_t>(sigmas_.size()); }
  const ScheduleConfig& config() const { return config_; }

 private:
  ScheduleConfig config_;
  std::vector<double> sigmas_, log_sigmas_;  // float32 values, as the references hold them
};

// What a sampler walks: sigmas from high to low, ending in 0 (steps + 1 values). Where the
// schedule fixes the model's timestep for a sigma (Diffusers), `timesteps` has it
// (one per step); elsewhere the model's timestep comes from SigmaTable::timestep.
struct SigmaSchedule {
  std::vector<double> sigmas;
  std::vector<double> timesteps;
  // The initial noise of a full run is scaled by this (sqrt(1 + sigma_max^2) as ComfyUI
  // does; diffusers' init_noise_sigma for Diffusers).
  double init_noise_scale = 1.0;
};
// `points` values evenly spaced from `from` to `to` (both included; one point: `from`).
std::vector<double> evenlySpaced(int64_t points, double from, double to);
// The schedules that need only the end points: Karras et al. (2022) with rho 7, and evenly
// spaced in log sigma; `steps` sigmas from sigma_max to sigma_min, no 0 appended.
std::vector<double> karrasSigmas(int64_t steps, double sigma_min, double sigma_max);
std::vector<double> exponentialSigmas(int64_t steps, double sigma_min, double sigma_max);

// Throws kiln::Error(InvalidArgument) for steps outside 1 to the table's size.
SigmaSchedule makeSigmaSchedule(const SigmaTable& table, Schedule schedule, int64_t steps);

}  // namespace kiln::sampling
