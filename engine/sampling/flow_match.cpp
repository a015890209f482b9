#include "sampling/flow_match.h"

#include <cmath>
#include <limits>
#include <string>

#include "kiln/error.h"

namespace kiln::sampling {
namespace {

void checkArguments(int64_t steps, double shift, int64_t train_steps) {
  if (steps < 1 || steps > train_steps)
    throw Error(ErrorKind::InvalidArgument,
                "steps must be between 1 and " + std::to_string(train_steps));
  if (!(shift > 0.0) || !std::isfinite(shift))
    throw Error(ErrorKind::InvalidArgument, "flow shift must be a positive number");
}

// Values as float32 holds them (the references keep their sigma tables in float32).
double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}

}  // namespace

double shiftSigma(double sigma, double shift) {
  return shift * sigma / (1.0 + (shift - 1.0) * sigma);
}

FlowSchedule unipcFlowSchedule(int64_t steps, double shift, int64_t train_steps) {
  checkArguments(steps, shift, train_steps);
  FlowSchedule s;
  const double last = 1.0 / static_cast<double>(train_steps);
  for (int64_t i = steps; i >= 1; --i) {  // highest first; alpha = 1 is dropped
    const double alpha = 1.0 + (last - 1.0) * static_cast<double>(i) / static_cast<double>(steps);
    const double sigma = shiftSigma(1.0 - alpha, shift);
    s.sigmas.push_back(f32(sigma));
    s.timesteps.push_back(std::trunc(sigma * static_cast<double>(train_steps)));
  }
  s.sigmas.push_back(0.0);
  return s;
}

FlowSchedule eulerFlowSchedule(int64_t steps, double shift, int64_t train_steps) {
  checkArguments(steps, shift, train_steps);
  const auto n = static_cast<double>(train_steps);
  const double t_max = f32(shiftSigma(1.0, shift)) * n;
  const double t_min = f32(shiftSigma(1.0 / n, shift)) * n;
  FlowSchedule s;
  for (int64_t i = 0; i < steps; ++i) {
    const double t = steps == 1 ? t_max
                                : t_max + (t_min - t_max) * static_cast<double>(i) /
                                              static_cast<double>(steps - 1);
    const double sigma = f32(shiftSigma(f32(t / n), shift));
    s.sigmas.push_back(sigma);
    s.timesteps.push_back(sigma * n);
  }
  s.sigmas.push_back(0.0);
  return s;
}

UniPcFlowSolver::UniPcFlowSolver(std::vector<double> sigmas) : sigmas_(std::move(sigmas)) {
  if (sigmas_.size() < 2)
    throw Error(ErrorKind::InvalidArgument, "UniPC needs a schedule of at least one step");
  for (std::size_t i = 1; i < sigmas_.size(); ++i)
    if (!(sigmas_[i] < sigmas_[i - 1]) || sigmas_[i] < 0.0 || sigmas_[i - 1] > 1.0)
      throw Error(ErrorKind::InvalidArgument, "UniPC flow sigmas must fall from at most 1 to 0");
}

double UniPcFlowSolver::lambda(std::size_t i) const {
  const double s = sigmas_[i];
  if (s <= 0.0) return std::numeric_limits<double>::infinity();
  return std::log(1.0 - s) - std::log(s);
}

at::Tensor UniPcFlowSolver::step(const at::Tensor& v, const at::Tensor& x_in) {
  const auto total = static_cast<int64_t>(sigmas_.size()) - 1;
  if (step_ >= total)
    throw Error(ErrorKind::InvalidArgument, "UniPC: the schedule has no steps left");
  const auto i = static_cast<std::size_t>(step_);
  const at::Tensor x_f = x_in.to(at::kFloat);
  const at::Tensor m = x_f - sigmas_[i] * v.to(at::kFloat);  // the clean estimate (data prediction)
  at::Tensor x = x_f;

  // bh2 coefficients for a step of log-SNR length h: phi = expm1(-h), B = expm1(-h),
  // b1, b2 of the order conditions.
  const auto coefficients = [](double h, double& phi, double& b1, double& b2, double& big_b) {
    const double hh = -h;
    phi = std::expm1(hh);
    big_b = phi;
    const double k1 = phi / hh - 1.0;
    b1 = k1 / big_b;
    b2 = (k1 / hh - 0.5) * 2.0 / big_b;
  };

  if (step_ > 0) {  // the corrector (UniC) with the order the previous predictor used
    const double s_t = sigmas_[i], s_0 = sigmas_[i - 1];
    const double h = lambda(i) - lambda(i - 1);
    double phi = 0, b1 = 0, b2 = 0, big_b = 0;
    coefficients(h, phi, b1, b2, big_b);
    const at::Tensor& m0 = m_.back();
    at::Tensor res;
    if (order_ == 1) {
      res = 0.5 * (m - m0);
    } else {
      const double rk = (lambda(i - 2) - lambda(i - 1)) / h;
      // [[1, 1], [rk, 1]] rho = [b1, b2]
      const double rho0 = (b1 - b2) / (1.0 - rk), rho1 = b1 - rho0;
      res = rho0 * (m_[m_.size() - 2] - m0) / rk + rho1 * (m - m0);
    }
    x = (s_t / s_0) * last_sample_ - (1.0 - s_t) * phi * m0 - (1.0 - s_t) * big_b * res;
  }
  corrected_ = x;
  m_.push_back(m);
  if (m_.size() > 2) m_.erase(m_.begin());

  const int max_order = 2;
  // order 1 on the last step (lower_order_final), and while warming up
  const int this_order =
      std::min(static_cast<int>(std::min<int64_t>(max_order, total - step_)), lower_nums_ + 1);
  order_ = this_order;
  last_sample_ = x;

  // the predictor (UniP)
  const double s_next = sigmas_[i + 1], s_0 = sigmas_[i];
  const double h = lambda(i + 1) - lambda(i);
  double phi = 0, b1 = 0, b2 = 0, big_b = 0;
  coefficients(h, phi, b1, b2, big_b);
  const double alpha_next = 1.0 - s_next;
  at::Tensor next = (s_next / s_0) * x - alpha_next * phi * m;
  if (this_order == 2) {
    const double rk = (lambda(i - 1) - lambda(i)) / h;
    next = next - alpha_next * big_b * 0.5 * (m_.front() - m) / rk;
  }
  if (lower_nums_ < max_order) ++lower_nums_;
  ++step_;
  return next;
}

at::Tensor sampleFlow(FlowSolver solver, const FlowSchedule& schedule, const VelocityFn& velocity,
                      at::Tensor x, const std::function<void(const FlowStep&)>& on_step) {
  const auto total = static_cast<int64_t>(schedule.sigmas.size()) - 1;
  if (total < 1 || static_cast<int64_t>(schedule.timesteps.size()) != total)
    throw Error(ErrorKind::InvalidArgument,
                "a flow schedule needs sigmas for each step and a final 0");
  x = x.to(at::kFloat);
  if (solver == FlowSolver::UniPc) {
    UniPcFlowSolver unipc(schedule.sigmas);
    for (int64_t i = 0; i < total; ++i) {
      x = unipc.step(velocity(x, i), x);
      if (on_step) on_step({i, total, &x, &unipc.lastDenoised()});
    }
    return x;
  }
  if (solver != FlowSolver::Euler) throw Error(ErrorKind::InvalidArgument, "unknown flow solver");
  for (int64_t i = 0; i < total; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const at::Tensor v = velocity(x, i).to(at::kFloat);
    const at::Tensor denoised = x - schedule.sigmas[k] * v;
    x = x + (schedule.sigmas[k + 1] - schedule.sigmas[k]) * v;
    if (on_step) on_step({i, total, &x, &denoised});
  }
  return x;
}

FlowSolver flowSolverNamed(const std::string& name) {
  if (name == "uni_pc" || name == "uni_pc_bh2" || name == "unipc") return FlowSolver::UniPc;
  if (name == "euler") return FlowSolver::Euler;
  throw Error(ErrorKind::InvalidArgument,
              "video models sample with uni_pc (Wan's default) or euler, not '" + name + "'");
}

}  // namespace kiln::sampling
