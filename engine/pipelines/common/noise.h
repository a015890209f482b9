// Seeded noise, the same numbers on every device and in PyTorch: drawn on libtorch's CPU
// generator.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "sampling/k_samplers.h"

namespace kiln::pipelines {

// torch.manual_seed(seed); torch.randn(shape) in PyTorch (float32).
at::Tensor seededNoise(int64_t seed, at::IntArrayRef shape);

// One latent's noise: a generator seeded with `seed` gives the initial noise and then, in
// order, what the sampler adds (see sampling/k_samplers.h). The source owns the generator.
struct SeededNoise {
  at::Tensor initial;
  sampling::NoiseFn more;
};
SeededNoise seededNoiseSource(int64_t seed, std::vector<int64_t> shape);

}  // namespace kiln::pipelines
