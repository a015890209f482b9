#include "sampling/flow_ancestral.h"

#include <cmath>

#include "core/interrupt.h"
#include "kiln/error.h"

namespace kiln::sampling {

at::Tensor sampleEulerAncestralFlow(const DenoiseFn& model, at::Tensor x,
                                    const std::vector<double>& sigmas, const NoiseFn& noise,
                                    const std::function<void(const SamplerStep&)>& on_step,
                                    double eta) {
  if (sigmas.size() < 2)
    throw Error(ErrorKind::InvalidArgument, "sampling needs at least one step");
  if (!noise)
    throw Error(ErrorKind::Internal, "Euler ancestral adds noise, and no source was given");
  const auto steps = static_cast<int64_t>(sigmas.size()) - 1;
  for (int64_t i = 0; i < steps; ++i) {
    core::checkInterrupt();
    const double sigma = sigmas[static_cast<std::size_t>(i)],
                 next = sigmas[static_cast<std::size_t>(i + 1)];
    if (!(sigma > next) || next < 0 || sigma > 1)
      throw Error(ErrorKind::InvalidArgument,
                  "the noise levels of a flow schedule must fall from at most 1 to 0");
    const at::Tensor denoised = model(x, sigma);
    if (next == 0) {
      x = denoised;
    } else {
      // Down to sigma_down along the flow, then renoised to `next`.
      const double down = next * (1 + (next / sigma - 1) * eta);
      const double alpha_next = 1 - next, alpha_down = 1 - down;
      const double renoise = std::sqrt(std::max(
          0.0, next * next - down * down * alpha_next * alpha_next / (alpha_down * alpha_down)));
      const double ratio = down / sigma;
      x = ratio * x + (1 - ratio) * denoised;
      if (eta > 0) {
        // Seeded noise comes from the CPU generator; it joins the latent on its device.
        const at::Tensor n = noise();
        if (!n.sizes().equals(x.sizes()))
          throw Error(ErrorKind::Internal, "the sampler's noise source gave the wrong shape");
        x = (alpha_next / alpha_down) * x + n.to(x.device(), x.scalar_type()) * renoise;
      }
    }
    if (on_step) on_step({i, steps, &x, &denoised});
  }
  return x;
}

}  // namespace kiln::sampling
