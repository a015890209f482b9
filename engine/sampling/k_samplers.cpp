#include "sampling/k_samplers.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/interrupt.h"
#include "kiln/error.h"

namespace kiln::sampling {

namespace {

// The derivative of the probability-flow ODE, dx/dsigma.
at::Tensor toD(const at::Tensor& x, double sigma, const at::Tensor& denoised) {
  return (x - denoised) / sigma;
}

// k-diffusion's get_ancestral_step (eta = 1): the noise level to step down to
// deterministically, and the noise to add back to reach sigma_to.
std::pair<double, double> ancestralStep(double sigma_from, double sigma_to) {
  const double up = std::min(
      sigma_to, std::sqrt(sigma_to * sigma_to * (sigma_from * sigma_from - sigma_to * sigma_to) /
                          (sigma_from * sigma_from)));
  return {std::sqrt(sigma_to * sigma_to - up * up), up};
}

at::Tensor draw(const NoiseFn& noise, const at::Tensor& like) {
  at::Tensor n = noise();
  if (!n.sizes().equals(like.sizes()))
    throw Error(ErrorKind::Internal, "the sampler's noise source gave a tensor of the wrong shape");
  // Seeded noise is drawn on the CPU generator (the same numbers on every device); it
  // joins the latent on its device.
  return n.to(like.device(), like.scalar_type());
}

// UniPC (Zhao et al. 2023) in data-prediction form, multistep, with lambda = -log sigma.
// Written in the variance-exploding parameterisation, where the reference's alpha_t
// factors cancel. The final sigma 0 is replaced by 0.001 as ComfyUI does (lambda would be
// infinite), and the result is that step's latent.
class UniPC {
 public:
  UniPC(const DenoiseFn& model, bool bh2) : model_(model), bh2_(bh2) {}

  at::Tensor run(at::Tensor x, std::vector<double> sigmas,
                 const std::function<void(const SamplerStep&)>& on_step) {
    if (sigmas.back() == 0) sigmas.back() = 0.001;
    const auto steps = static_cast<int64_t>(sigmas.size()) - 1;
    const int64_t order = std::clamp<int64_t>(steps - 1, 1, 3);
    std::deque<double> s_prev{sigmas[0]};
    std::deque<at::Tensor> m_prev{model_(x, sigmas[0])};
    for (int64_t step = 1; step <= steps; ++step) {
      core::checkInterrupt();
      const double sigma = sigmas[static_cast<std::size_t>(step)];
      const int64_t step_order = step < order ? step : std::min(order, steps + 1 - step);
      const bool correct = step < steps;
      at::Tensor model_x;
      x = update(x, m_prev, s_prev, sigma, step_order, correct, model_x);
      if (step < steps) {
        if (!model_x.defined()) model_x = model_(x, sigma);
        s_prev.push_back(sigma);
        m_prev.push_back(model_x);
        if (static_cast<int64_t>(s_prev.size()) > order) {
          s_prev.pop_front();
          m_prev.pop_front();
        }
      }
      const at::Tensor& denoised = m_prev.back();
      if (on_step) on_step({step - 1, steps, &x, &denoised});
    }
    return x;
  }

 private:
  // One predictor step from s_prev.back() to sigma of the given order, corrected with the
  // model's value at the predicted point (which it returns in model_t) unless `correct`
  // is false.
  at::Tensor update(const at::Tensor& x, const std::deque<at::Tensor>& m_prev,
                    const std::deque<double>& s_prev, double sigma, int64_t order, bool correct,
                    at::Tensor& model_t) const {
    const std::size_t last = s_prev.size() - 1;
    const at::Tensor& m0 = m_prev[last];
    const double lambda0 = -std::log(s_prev[last]), lambda_t = -std::log(sigma);
    const double h = lambda_t - lambda0;
    std::vector<double> rks;
    std::vector<at::Tensor> d1s;
    for (int64_t i = 1; i < order; ++i) {
      const std::size_t k = last - static_cast<std::size_t>(i);
      const double rk = (-std::log(s_prev[k]) - lambda0) / h;
      rks.push_back(rk);
      d1s.push_back((m_prev[k] - m0) / rk);
    }
    rks.push_back(1.0);
    const double hh = -h;  // data prediction
    const double h_phi_1 = std::expm1(hh);
    double h_phi_k = h_phi_1 / hh - 1;
    const double b_h = bh2_ ? std::expm1(hh) : hh;
    const auto n = static_cast<int64_t>(rks.size());
    // host: UniPC's small coefficient system, solved in double precision on the CPU.
    at::Tensor r = at::empty({n, n}, at::kDouble);
    at::Tensor b = at::empty({n}, at::kDouble);  // host: as above
    double factorial = 1;
    for (int64_t i = 1; i <= n; ++i) {
      for (int64_t k = 0; k < n; ++k)
        r[i - 1][k] = std::pow(rks[static_cast<std::size_t>(k)], static_cast<double>(i - 1));
      b[i - 1] = h_phi_k * factorial / b_h;
      factorial *= static_cast<double>(i + 1);
      h_phi_k = h_phi_k / hh - 1 / factorial;
    }
    const auto weighted = [&](const std::vector<double>& rhos) {
      at::Tensor sum = at::zeros_like(x);
      for (std::size_t k = 0; k < d1s.size(); ++k) sum = sum + d1s[k] * rhos[k];
      return sum;
    };
    const auto solve = [](const at::Tensor& a, const at::Tensor& rhs) {
      const at::Tensor sol = at::linalg_solve(a, rhs.unsqueeze(1)).squeeze(1).contiguous();
      return std::vector<double>(sol.data_ptr<double>(), sol.data_ptr<double>() + sol.numel());
    };
    const at::Tensor x_t_ = x * (sigma / s_prev[last]) - m0 * h_phi_1;
    at::Tensor x_t = x_t_;
    if (!d1s.empty()) {
      const std::vector<double> rhos_p =
          order == 2 ? std::vector<double>{0.5}
                     : solve(r.slice(0, 0, n - 1).slice(1, 0, n - 1), b.slice(0, 0, n - 1));
      x_t = x_t_ - weighted(rhos_p) * b_h;
    }
    if (correct) {
      const std::vector<double> rhos_c = order == 1 ? std::vector<double>{0.5} : solve(r, b);
      model_t = model_(x_t, sigma);
      const at::Tensor corr = d1s.empty() ? at::zeros_like(x) : weighted(rhos_c);
      x_t = x_t_ - (corr + (model_t - m0) * rhos_c.back()) * b_h;
    }
    return x_t;
  }

  const DenoiseFn& model_;
  bool bh2_;
};

}  // namespace

at::Tensor denoisedFrom(Prediction prediction, const at::Tensor& x, const at::Tensor& out,
                        double sigma) {
  if (prediction == Prediction::V)
    return x / (sigma * sigma + 1) - out * (sigma / std::sqrt(sigma * sigma + 1));
  return x - out * sigma;
}

at::Tensor sampleSigmas(SamplerKind kind, const DenoiseFn& model, at::Tensor x,
                        const std::vector<double>& sigmas, const NoiseFn& noise,
                        const std::function<void(const SamplerStep&)>& on_step) {
  if (sigmas.size() < 2)
    throw Error(ErrorKind::InvalidArgument, "sampling needs at least one step");
  for (std::size_t i = 0; i + 1 < sigmas.size(); ++i)
    if (!(sigmas[i] > sigmas[i + 1]) || sigmas[i + 1] < 0)
      throw Error(ErrorKind::InvalidArgument, "the noise levels of a schedule must fall to 0");
  if (addsNoise(kind) && !noise)
    throw Error(ErrorKind::Internal,
                samplerLabel(kind) + " adds noise, and no noise source was given");
  if (kind == SamplerKind::UniPC || kind == SamplerKind::UniPCBh2)
    return UniPC(model, kind == SamplerKind::UniPCBh2).run(std::move(x), sigmas, on_step);

  const auto steps = static_cast<int64_t>(sigmas.size()) - 1;
  const auto t_of = [](double sigma) { return -std::log(sigma); };  // DPM-Solver's time
  at::Tensor old_denoised;
  double h_last = 0;
  for (int64_t i = 0; i < steps; ++i) {
    core::checkInterrupt();
    const double sigma = sigmas[static_cast<std::size_t>(i)],
                 next = sigmas[static_cast<std::size_t>(i + 1)];
    const at::Tensor denoised = model(x, sigma);
    switch (kind) {
      case SamplerKind::Euler:
      case SamplerKind::Ddim:  // DDIM with eta = 0 is this step in the sigma parameterisation
        x = x + toD(x, sigma, denoised) * (next - sigma);
        break;
      case SamplerKind::EulerAncestral: {
        const auto [down, up] = ancestralStep(sigma, next);
        x = x + toD(x, sigma, denoised) * (down - sigma);
        if (next > 0) x = x + draw(noise, x) * up;
        break;
      }
      case SamplerKind::Heun: {
        const at::Tensor d = toD(x, sigma, denoised);
        if (next == 0) {
          x = x + d * (next - sigma);
        } else {
          const at::Tensor x2 = x + d * (next - sigma);
          const at::Tensor d2 = toD(x2, next, model(x2, next));
          x = x + (d + d2) / 2 * (next - sigma);
        }
        break;
      }
      case SamplerKind::Dpm2: {
        const at::Tensor d = toD(x, sigma, denoised);
        if (next == 0) {
          x = x + d * (next - sigma);
        } else {
          const double mid = std::exp((std::log(sigma) + std::log(next)) / 2);
          const at::Tensor x2 = x + d * (mid - sigma);
          x = x + toD(x2, mid, model(x2, mid)) * (next - sigma);
        }
        break;
      }
      case SamplerKind::DpmPP2M: {
        if (next == 0) {  // the limit of the first-order step
          x = denoised;
          break;
        }
        const double h = t_of(next) - t_of(sigma);
        if (!old_denoised.defined()) {
          x = x * (next / sigma) - denoised * std::expm1(-h);
        } else {
          const double r = h_last / h;
          const at::Tensor d = denoised * (1 + 1 / (2 * r)) - old_denoised * (1 / (2 * r));
          x = x * (next / sigma) - d * std::expm1(-h);
        }
        h_last = h;
        break;
      }
      case SamplerKind::DpmPP2MSde: {  // eta = 1, midpoint
        if (next == 0) {
          x = denoised;
        } else {
          const double h = t_of(next) - t_of(sigma);
          x = x * (next / sigma * std::exp(-h)) + denoised * -std::expm1(-2 * h);
          if (old_denoised.defined()) {
            const double r = h_last / h;
            x = x + (denoised - old_denoised) * (0.5 * -std::expm1(-2 * h) / r);
          }
          x = x + draw(noise, x) * (next * std::sqrt(-std::expm1(-2 * h)));
          h_last = h;
        }
        break;
      }
      case SamplerKind::DpmPPSde: {  // eta = 1, r = 1/2
        if (next == 0) {
          x = x + toD(x, sigma, denoised) * (next - sigma);
        } else {
          const double t = t_of(sigma), t_next = t_of(next), h = t_next - t, s = t + h / 2;
          const double sigma_s = std::exp(-s);
          auto [down, up] = ancestralStep(sigma, sigma_s);
          at::Tensor x2 = x * (down / sigma) - denoised * std::expm1(t - t_of(down));
          x2 = x2 + draw(noise, x) * up;
          const at::Tensor denoised2 = model(x2, sigma_s);
          std::tie(down, up) = ancestralStep(sigma, next);
          // (1 - 1/(2r)) * denoised + 1/(2r) * denoised2, which for r = 1/2 is denoised2.
          x = x * (down / sigma) - denoised2 * std::expm1(t - t_of(down));
          x = x + draw(noise, x) * up;
        }
        break;
      }
      case SamplerKind::Lcm:
        x = denoised;
        if (next > 0) x = x + draw(noise, x) * next;
        break;
      case SamplerKind::UniPC:
      case SamplerKind::UniPCBh2:
        break;  // above
    }
    old_denoised = denoised;
    if (on_step) on_step({i, steps, &x, &denoised});
  }
  return x;
}

}  // namespace kiln::sampling
