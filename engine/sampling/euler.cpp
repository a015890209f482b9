#include "sampling/euler.h"

#include <cmath>

#include "core/interrupt.h"

namespace kiln::sampling {

at::Tensor sampleEuler(Denoiser& denoiser, const at::Tensor& noise, const EulerSchedule& schedule,
                       const std::function<void(const StepInfo&)>& on_step) {
  at::Tensor x = noise.to(at::kFloat) * schedule.init_noise_sigma;
  const auto steps = static_cast<int64_t>(schedule.timesteps.size());
  for (int64_t i = 0; i < steps; ++i) {
    core::checkInterrupt();
    const float sigma = schedule.sigmas[static_cast<std::size_t>(i)];
    const float sigma_next = schedule.sigmas[static_cast<std::size_t>(i + 1)];
    const at::Tensor x_in = x / std::sqrt(sigma * sigma + 1.0f);
    const at::Tensor eps =
        denoiser.predictNoise(x_in, schedule.timesteps[static_cast<std::size_t>(i)]).to(at::kFloat);
    // Written as the reference writes it (through the denoised estimate) so rounding
    // matches: x0 = x - sigma * eps; d = (x - x0) / sigma; x += d * (sigma_next - sigma).
    const at::Tensor denoised = x - eps * sigma;
    x = x + ((x - denoised) / sigma) * (sigma_next - sigma);
    if (on_step) on_step({i, steps, &x_in, &eps, &x, &denoised});
  }
  return x;
}

}  // namespace kiln::sampling
