#include "pipelines/common/latent_preview.h"

#include <ATen/CPUGeneratorImpl.h>

#include "memory/device.h"

namespace kiln::pipelines {

at::Tensor fitPreviewMap(int64_t channels,
                         const std::function<at::Tensor(const at::Tensor&)>& decode) {
  at::NoGradGuard no_grad;
  // host: the fit is a few numbers, made on the CPU; only the decode runs on the device.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t{20240607});
  const at::Tensor z =
      at::randn({4, channels, 8, 8}, gen, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
  const at::Tensor img = decode(z.to(memory::computeDevice())).to(at::kCPU);  // [4, 3, 8f, 8f]
  const at::Tensor rgb =
      at::adaptive_avg_pool2d(img, {8, 8}).permute({0, 2, 3, 1}).reshape({-1, 3});
  const at::Tensor x = at::cat(
      {z.permute({0, 2, 3, 1}).reshape({-1, channels}), at::ones({rgb.size(0), 1})},  // host:
      1);
  return std::get<0>(at::linalg_lstsq(x, rgb));
}

at::Tensor previewWithMap(const at::Tensor& map, const at::Tensor& latent) {
  at::NoGradGuard no_grad;
  const int64_t c = latent.size(1);
  const at::Tensor x = latent[0].to(at::kCPU, at::kFloat).permute({1, 2, 0}).reshape({-1, c});
  const at::Tensor rgb = at::cat({x, at::ones({x.size(0), 1}, x.options())}, 1).matmul(map);
  return (rgb / 2 + 0.5).clamp(0, 1).reshape({latent.size(2), latent.size(3), 3}).contiguous();
}

}  // namespace kiln::pipelines
