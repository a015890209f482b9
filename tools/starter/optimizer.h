// AdamW over the parameter slots of Kiln's models, with fp32 master weights so the model
// itself can compute in bf16, plus an exponential moving average of the weights.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "weights/params.h"

namespace kiln::starter {

// Fills every slot with a fresh tensor: linear and conv weights uniform in
// +-1/sqrt(fan_in), biases zero, norm scales one, embeddings normal(0, 0.02); weights
// whose name matches one of `zero_init` start at zero (residual outputs).
void initParams(const weights::ParamList& params, const std::vector<std::string>& zero_init,
                at::ScalarType dtype);

struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.01;  // not applied to biases, norms and embeddings
  double clip_norm = 1.0;      // global gradient norm clip; 0 = none
};

class AdamW {
 public:
  // The slots' tensors become leaves that require grad.
  AdamW(std::vector<const weights::ParamList*> groups, AdamWConfig config);
  // One update from the gradients now held by the slots; returns the gradient norm
  // before clipping. Clears the gradients.
  double step(double lr);
  // Keeps an fp32 moving average of the master weights (decay per step).
  void updateAverage(double decay);
  // Replaces the slots' tensors with fp32 copies of the average (or of the master
  // weights when no average was kept); they no longer require grad.
  void exportWeights();
  // fp32 copies of the average (or master) weights, in slot order.
  std::vector<at::Tensor> averages() const;
  int64_t steps() const noexcept { return steps_; }

 private:
  struct Entry {
    at::Tensor* param;
    at::Tensor master, m, v, average;
    bool decay;
  };
  std::vector<Entry> entries_;
  AdamWConfig config_;
  int64_t steps_ = 0;
};

}  // namespace kiln::starter
