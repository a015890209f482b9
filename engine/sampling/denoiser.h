// The sampling loop sees a model only through this interface.
#pragma once

#include <ATen/ATen.h>

namespace kiln::sampling {

class Denoiser {
 public:
  virtual ~Denoiser() = default;
  // Predicted noise for the scaled model input x_in = x / sqrt(sigma^2 + 1) at the given
  // (possibly fractional) training timestep. Input and output are [1, C, H, W].
  virtual at::Tensor predictNoise(const at::Tensor& x_in, float timestep) = 0;
};

}  // namespace kiln::sampling
