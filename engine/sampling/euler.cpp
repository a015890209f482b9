#include "sampling/euler.h"

#include <cmath>

#include "core/interrupt.h"
#include "kiln/error.h"

namespace kiln::sampling {

at::Tensor sampleEuler(Denoiser& denoiser, const at::Tensor& noise, const EulerSchedule& schedule,
                       const std::function<void(const StepInfo&)>& on_step, const LatentInit* init) {
  const auto steps = static_cast<int64_t>(schedule.timesteps.size());
  const int64_t start = init ? init->start_step : 0;
  if (start < 0 || start >= steps)
    throw Error(ErrorKind::InvalidArgument, "sampling cannot start at step " + std::to_string(start + 1) + " of " +
                                                std::to_string(steps));
  const at::Tensor noise_f = noise.to(at::kFloat);
  const at::Tensor clean = init ? init->latent.to(at::kFloat) : at::Tensor();
  at::Tensor x = init ? clean + noise_f * schedule.sigmas[static_cast<std::size_t>(start)]
                      : noise_f * schedule.init_noise_sigma;
  for (int64_t i = start; i < steps; ++i) {
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
    if (init && init->mask.defined()) {
      const at::Tensor kept = clean + noise_f * sigma_next;
      x = kept + (x - kept) * init->mask;
    }
    if (on_step) on_step({i - start, steps - start, &x_in, &eps, &x, &denoised});
  }
  return x;
}

}  // namespace kiln::sampling
