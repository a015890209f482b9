#include "sampling/flow_sigmas.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kiln/error.h"
#include "sampling/flow_match.h"
#include "sampling/sigmas.h"

namespace kiln::sampling {

FlowModelSampling FlowModelSampling::flux(double mu) {
  return {std::exp(mu), 10000, 1.0};
}

FlowModelSampling FlowModelSampling::discrete(double shift) {
  return {shift, 1000, 1000.0};
}

double FlowModelSampling::sigmaOfTimestep(double timestep) const {
  return shiftSigma(timestep / multiplier, shift);
}

double FlowModelSampling::tableSigma(int64_t i) const {
  const auto t = static_cast<float>(i + 1) / static_cast<float>(table);  // float32, as torch
  return static_cast<float>(shiftSigma(t, shift));
}

double fluxMu(int64_t image_tokens, double base_shift, double max_shift) {
  const double m = (max_shift - base_shift) / (4096.0 - 256.0);
  return static_cast<double>(image_tokens) * m + (base_shift - 256.0 * m);
}

std::vector<double> flowSigmas(const FlowModelSampling& ms, Schedule schedule, int64_t steps) {
  if (steps < 1)
    throw Error(ErrorKind::InvalidArgument,
                "steps must be at least 1, got " + std::to_string(steps));
  const auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  std::vector<double> s;
  const double smin = ms.sigmaMin(), smax = ms.sigmaMax();
  bool append_zero = true;
  switch (schedule) {
    case Schedule::Normal:
    case Schedule::SgmUniform: {
      const double start = ms.timestepOf(smax), end = ms.timestepOf(smin);
      int64_t points = steps;
      std::vector<double> ts;
      if (schedule == Schedule::SgmUniform) {
        ts = evenlySpaced(steps + 1, start, end);
        ts.pop_back();
      } else {
        if (std::abs(ms.sigmaOfTimestep(end)) <= 1e-5) {
          ++points;
          append_zero = false;
        }
        ts = evenlySpaced(points, start, end);
      }
      for (double t : ts) s.push_back(f32(ms.sigmaOfTimestep(t)));
      break;
    }
    case Schedule::Karras:
      s = karrasSigmas(steps, smin, smax);
      break;
    case Schedule::Exponential:
      s = exponentialSigmas(steps, smin, smax);
      break;
    case Schedule::Simple: {
      const double stride = static_cast<double>(ms.table) / static_cast<double>(steps);
      for (int64_t i = 0; i < steps; ++i)
        s.push_back(
            ms.tableSigma(ms.table - 1 - static_cast<int64_t>(static_cast<double>(i) * stride)));
      break;
    }
    case Schedule::DdimUniform: {
      const int64_t stride = std::max<int64_t>(ms.table / steps, 1);
      for (int64_t i = 0; i < steps; ++i)
        s.push_back(ms.tableSigma(std::min(1 + i * stride, ms.table - 1)));
      std::reverse(s.begin(), s.end());
      break;
    }
    case Schedule::Diffusers: {
      // FluxPipeline's linspace(1, 1/steps, steps) in float64, held as float32 by the
      // scheduler, then shifted
      const auto t = evenlySpaced(steps, 1.0, 1.0 / static_cast<double>(steps));
      for (double v : t) s.push_back(f32(shiftSigma(f32(v), ms.shift)));
      break;
    }
  }
  if (append_zero) s.push_back(0.0);
  return s;
}

}  // namespace kiln::sampling
