// Flow-matching sampling (rectified flow: x_sigma = (1 - sigma) x0 + sigma noise, the model
// predicts the velocity noise - x0), as Wan's pipelines run it: shifted sigma schedules
// and two solvers, UniPC (bh2, data prediction; Wan's default) and Euler.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln::sampling {

// steps + 1 sigmas from high to low ending in 0, and the timestep the model sees at each
// of the first `steps`.
struct FlowSchedule {
  std::vector<double> sigmas;
  std::vector<double> timesteps;
};

// sigma' = shift sigma / (1 + (shift - 1) sigma).
double shiftSigma(double sigma, double shift);

// UniPC's flow schedule (use_flow_sigmas, linspace spacing): 1 - linspace(1, 1/train, steps
// + 1), shifted, highest first, last dropped, then 0; timesteps are sigma * train truncated
// to integers. Throws kiln::Error(InvalidArgument) for steps < 1 or shift <= 0.
FlowSchedule unipcFlowSchedule(int64_t steps, double shift, int64_t train_steps = 1000);

// Euler's flow schedule: timesteps evenly spaced from the shifted table's highest to its
// lowest (train steps), shifted once more; fractional timesteps sigma * train.
FlowSchedule eulerFlowSchedule(int64_t steps, double shift, int64_t train_steps = 1000);

// UniPC multistep (order 2, bh2, corrector on every step but the first, order 1 on the
// last step) over a flow schedule; one call per step, in order.
class UniPcFlowSolver {
 public:
  explicit UniPcFlowSolver(std::vector<double> sigmas);
  // The sample after step `stepIndex()` from the model's velocity v at sample x (the
  // previous step's result).
  at::Tensor step(const at::Tensor& v, const at::Tensor& x);
  int64_t stepIndex() const noexcept { return step_; }
  // Of the last step: its clean estimate x - sigma v, the sample after the corrector (x
  // itself on the first step) and the predictor's order.
  const at::Tensor& lastDenoised() const noexcept { return m_.back(); }
  const at::Tensor& lastCorrected() const noexcept { return corrected_; }
  int lastOrder() const noexcept { return order_; }

 private:
  double lambda(std::size_t i) const;
  std::vector<double> sigmas_;
  int64_t step_ = 0;
  int order_ = 0;              // the predictor order of the last step (the corrector's next)
  int lower_nums_ = 0;         // warm-up: steps taken, capped at the solver order
  std::vector<at::Tensor> m_;  // clean estimates of the last two steps, oldest first
  at::Tensor last_sample_, corrected_;
};

enum class FlowSolver { Invalid = 0, UniPc, Euler };

// The flow solver a sampler name stands for: uni_pc, uni_pc_bh2 (or unipc) and euler.
// Throws kiln::Error(InvalidArgument) naming the choices for any other name.
FlowSolver flowSolverNamed(const std::string& name);

struct FlowStep {
  int64_t step = 0;  // 0-based
  int64_t total = 0;
  const at::Tensor* x = nullptr;         // after the step
  const at::Tensor* denoised = nullptr;  // the step's clean estimate
};

// The (guided) velocity at sample x for schedule step `step`.
using VelocityFn = std::function<at::Tensor(const at::Tensor& x, int64_t step)>;

// Runs the solver over the schedule from x (the initial noise, unscaled); on_step after
// each step may throw to stop. Samples are kept in float32.
at::Tensor sampleFlow(FlowSolver solver, const FlowSchedule& schedule, const VelocityFn& velocity,
                      at::Tensor x, const std::function<void(const FlowStep&)>& on_step = {});

}  // namespace kiln::sampling
