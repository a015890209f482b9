#include "sampling/schedule.h"

#include <cmath>
#include <string>

#include "kiln/error.h"

namespace kiln::sampling {

EulerSchedule makeEulerSchedule(const ScheduleConfig& config, int64_t steps) {
  const int64_t n = config.train_steps;
  if (steps < 1 || steps > n)
    throw Error(ErrorKind::InvalidArgument, "steps must be between 1 and " + std::to_string(n) +
                                                ", got " + std::to_string(steps));
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  // betas = linspace(sqrt(start), sqrt(end), n) ** 2, all in float32 like the reference.
  // host: the schedule is a table of numbers the samplers read as scalars.
  at::Tensor betas =
      at::linspace(std::sqrt(config.beta_start), std::sqrt(config.beta_end), n, f32).pow(2);
  EulerSchedule s;
  s.alphas_cumprod = at::cumprod(1.0 - betas, 0);
  if (config.zero_terminal_snr) {
    at::Tensor root = s.alphas_cumprod.sqrt();
    const at::Tensor first = root[0].clone(), last = root[n - 1].clone();
    root = (root - last) * (first / (first - last));
    s.alphas_cumprod = root * root;
    s.alphas_cumprod[n - 1] = 4.8973451890853435e-08;
  }
  at::Tensor table = ((1 - s.alphas_cumprod) / s.alphas_cumprod).pow(0.5).contiguous();
  const float* sig = table.data_ptr<float>();

  std::vector<double> ts;
  switch (config.spacing) {
    case TimestepSpacing::Linspace: {
      // numpy.linspace(0, n - 1, steps, dtype=float)[::-1].copy(): float64, then float32.
      for (int64_t i = steps - 1; i >= 0; --i) {
        const double t = steps == 1 ? 0.0 : static_cast<double>(n - 1) * i / (steps - 1);
        ts.push_back(static_cast<float>(t));
      }
      break;
    }
    case TimestepSpacing::Leading: {
      const int64_t ratio = n / steps;
      for (int64_t i = steps - 1; i >= 0; --i)
        ts.push_back(static_cast<double>(i * ratio + config.steps_offset));
      break;
    }
    case TimestepSpacing::Trailing: {
      const double ratio = static_cast<double>(n) / steps;
      for (int64_t i = 0; i < steps; ++i) ts.push_back(std::round(n - i * ratio) - 1);
      break;
    }
    case TimestepSpacing::Invalid:
      throw Error(ErrorKind::Internal, "schedule without a timestep spacing");
  }
  for (double t : ts) {
    // numpy.interp over integer positions 0..n-1 of the float32 sigma table, in float64.
    const double clamped = std::min(std::max(t, 0.0), static_cast<double>(n - 1));
    const auto lo = static_cast<int64_t>(std::floor(clamped));
    const int64_t hi = std::min(lo + 1, n - 1);
    const double frac = clamped - static_cast<double>(lo);
    const double value =
        static_cast<double>(sig[lo]) + frac * (static_cast<double>(sig[hi]) - sig[lo]);
    s.timesteps.push_back(static_cast<float>(t));
    s.sigmas.push_back(static_cast<float>(value));
  }
  s.sigmas.push_back(0.0f);
  const float sigma_max = *std::max_element(s.sigmas.begin(), s.sigmas.end());
  s.init_noise_sigma =
      config.spacing == TimestepSpacing::Leading
          ? static_cast<float>(std::sqrt(static_cast<double>(sigma_max) * sigma_max + 1.0))
          : sigma_max;
  return s;
}

}  // namespace kiln::sampling
