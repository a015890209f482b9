// The one place that knows which libtorch version Kiln is built against. Debian ships
// 1.13 (no fused attention); GPU machines have 2.x.
#pragma once

#include <ATen/ATen.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#define KILN_HAS_FUSED_ATTENTION 1
#else
#define KILN_HAS_FUSED_ATTENTION 0
#endif

namespace kiln::core {

// softmax(q k^T * scale + mask) v over [B, H, N, D] tensors; uses the fused kernel when
// libtorch provides one. `mask` is additive and may be undefined.
inline at::Tensor scaledDotProductAttention(const at::Tensor& q, const at::Tensor& k,
                                            const at::Tensor& v, const at::Tensor& mask,
                                            double scale) {
#if KILN_HAS_FUSED_ATTENTION
  return at::scaled_dot_product_attention(
      q, k, v, mask.defined() ? c10::optional<at::Tensor>(mask) : c10::nullopt, 0.0, false, scale);
#else
  at::Tensor scores = at::matmul(q * scale, k.transpose(-2, -1));
  if (mask.defined()) scores = scores + mask;
  return at::matmul(at::softmax(scores, -1), v);
#endif
}

}  // namespace kiln::core
