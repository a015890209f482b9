#include "sampling/sigmas.h"

#include <algorithm>
#include <cmath>

#include "kiln/error.h"

namespace kiln::sampling {

SigmaTable::SigmaTable(const ScheduleConfig& config) : config_(config) {
  const EulerSchedule table = makeEulerSchedule(config, 1);  // its alphas_cumprod, in float32
  const at::Tensor sigmas =
      ((1 - table.alphas_cumprod) / table.alphas_cumprod).pow(0.5).contiguous();
  const float* s = sigmas.data_ptr<float>();
  for (int64_t i = 0; i < sigmas.numel(); ++i) {
    sigmas_.push_back(s[i]);
    log_sigmas_.push_back(std::log(static_cast<double>(s[i])));
  }
}

double SigmaTable::timestep(double sigma) const {
  const double log_sigma = std::log(sigma);
  const auto n = static_cast<int64_t>(log_sigmas_.size());
  // The last entry at or below log_sigma, kept inside [0, n - 2].
  const auto above = std::upper_bound(log_sigmas_.begin(), log_sigmas_.end(), log_sigma);
  const int64_t low = std::clamp<int64_t>((above - log_sigmas_.begin()) - 1, 0, n - 2);
  const double lo = log_sigmas_[static_cast<std::size_t>(low)],
               hi = log_sigmas_[static_cast<std::size_t>(low + 1)];
  const double w = std::clamp((lo - log_sigma) / (lo - hi), 0.0, 1.0);
  return (1 - w) * static_cast<double>(low) + w * static_cast<double>(low + 1);
}

double SigmaTable::sigma(double timestep) const {
  const double t = std::clamp(timestep, 0.0, static_cast<double>(log_sigmas_.size() - 1));
  const auto low = static_cast<std::size_t>(std::floor(t)),
             high = static_cast<std::size_t>(std::ceil(t));
  const double w = t - std::floor(t);
  return std::exp((1 - w) * log_sigmas_[low] + w * log_sigmas_[high]);
}

std::vector<double> evenlySpaced(int64_t points, double from, double to) {
  std::vector<double> v;
  for (int64_t i = 0; i < points; ++i)
    v.push_back(points == 1 ? from
                            : from + (to - from) * static_cast<double>(i) /
                                         static_cast<double>(points - 1));
  return v;
}

std::vector<double> karrasSigmas(int64_t steps, double sigma_min, double sigma_max) {
  constexpr double rho = 7.0;
  const double min_inv = std::pow(sigma_min, 1 / rho), max_inv = std::pow(sigma_max, 1 / rho);
  std::vector<double> s;
  for (double ramp : evenlySpaced(steps, 0.0, 1.0))
    s.push_back(std::pow(max_inv + ramp * (min_inv - max_inv), rho));
  return s;
}

std::vector<double> exponentialSigmas(int64_t steps, double sigma_min, double sigma_max) {
  std::vector<double> s;
  for (double l : evenlySpaced(steps, std::log(sigma_max), std::log(sigma_min)))
    s.push_back(std::exp(l));
  return s;
}

SigmaSchedule makeSigmaSchedule(const SigmaTable& table, Schedule schedule, int64_t steps) {
  const int64_t n = table.size();
  if (steps < 1 || steps > n)
    throw Error(ErrorKind::InvalidArgument, "steps must be between 1 and " + std::to_string(n) +
                                                ", got " + std::to_string(steps));
  SigmaSchedule out;
  std::vector<double>& s = out.sigmas;
  const double smin = table.sigmaMin(), smax = table.sigmaMax();
  switch (schedule) {
    case Schedule::Normal:
      for (double t : evenlySpaced(steps, static_cast<double>(n - 1), 0.0))
        s.push_back(table.sigma(t));
      break;
    case Schedule::SgmUniform: {
      std::vector<double> ts = evenlySpaced(steps + 1, static_cast<double>(n - 1), 0.0);
      ts.pop_back();
      for (double t : ts) s.push_back(table.sigma(t));
      break;
    }
    case Schedule::Karras:
      s = karrasSigmas(steps, smin, smax);
      break;
    case Schedule::Exponential:
      s = exponentialSigmas(steps, smin, smax);
      break;
    case Schedule::Simple: {
      const double stride = static_cast<double>(n) / static_cast<double>(steps);
      for (int64_t i = 0; i < steps; ++i)
        s.push_back(table.sigma(
            static_cast<double>(n - 1 - static_cast<int64_t>(static_cast<double>(i) * stride))));
      break;
    }
    case Schedule::DdimUniform: {
      const int64_t stride = std::max<int64_t>(n / steps, 1);
      // DDIM's stride from timestep 1; exactly `steps` of them (a stride that does not
      // divide the table would otherwise give one more).
      for (int64_t i = 0; i < steps; ++i)
        s.push_back(table.sigma(static_cast<double>(1 + i * stride)));
      std::reverse(s.begin(), s.end());
      break;
    }
    case Schedule::Diffusers: {
      const EulerSchedule d = makeEulerSchedule(table.config(), steps);
      for (std::size_t i = 0; i + 1 < d.sigmas.size(); ++i) {
        s.push_back(d.sigmas[i]);
        out.timesteps.push_back(d.timesteps[i]);
      }
      out.init_noise_scale = d.init_noise_sigma;
      break;
    }
  }
  s.push_back(0.0);
  if (schedule != Schedule::Diffusers) out.init_noise_scale = std::sqrt(1 + s.front() * s.front());
  return out;
}

}  // namespace kiln::sampling
