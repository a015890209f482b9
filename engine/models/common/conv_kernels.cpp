#include "models/common/conv_kernels.h"

#include <ATen/ATen.h>
#include <ATen/native/ConvUtils.h>
#include <torch/version.h>

#include <array>
#include <atomic>

namespace kiln::models {

bool cpuConvUsesIm2col(at::ScalarType dtype) {
  // 0: not asked yet, 1: oneDNN, 2: im2col.
  static std::array<std::atomic<int>, static_cast<std::size_t>(at::ScalarType::NumOptions)>
      answers{};
  auto& answer = answers.at(static_cast<std::size_t>(dtype));
  if (const int known = answer.load(); known != 0) return known == 2;
  const auto options = at::TensorOptions().dtype(dtype).device(at::kCPU);  // asks of the CPU
  const at::Tensor input = at::empty({1, 32, 64, 64}, options);
  const at::Tensor weight = at::empty({32, 32, 3, 3}, options);
#if TORCH_VERSION_MAJOR >= 2  // 2.x added the bias sizes (none here)
  const auto backend = at::native::select_conv_backend(input, weight, c10::nullopt, {1, 1}, {1, 1},
                                                       {1, 1}, false, {0, 0}, 1, c10::nullopt);
#else
  const auto backend = at::native::select_conv_backend(input, weight, c10::nullopt, {1, 1}, {1, 1},
                                                       {1, 1}, false, {0, 0}, 1);
#endif
  const bool im2col = backend == at::native::ConvBackend::Slow2d;
  answer.store(im2col ? 2 : 1);
  return im2col;
}

}  // namespace kiln::models
