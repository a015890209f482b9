#include "pipelines/common/noise.h"

#include <ATen/CPUGeneratorImpl.h>

#include <memory>

namespace kiln::pipelines {

// Drawn on libtorch's CPU generator, whose numbers are the same on every machine and in
// PyTorch; the sampler moves the noise to the latent's device.
at::Tensor seededNoise(int64_t seed, at::IntArrayRef shape) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
  return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
}

SeededNoise seededNoiseSource(int64_t seed, std::vector<int64_t> shape) {
  auto gen = std::make_shared<at::Generator>(
      at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed)));
  sampling::NoiseFn draw = [gen, shape] {
    return at::randn(shape, *gen, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
  };
  at::Tensor initial = draw();
  return {std::move(initial), std::move(draw)};
}

}  // namespace kiln::pipelines
