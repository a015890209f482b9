// The one place that knows which libtorch version Kiln is built against. Debian ships
// 1.13 (no fused attention); GPU machines have 2.x.
#pragma once

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <vector>

// The fused kernel's `scale` argument arrived in 2.1.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define KILN_HAS_FUSED_ATTENTION 1
#else
#define KILN_HAS_FUSED_ATTENTION 0
#endif

// libtorch 2.3 made c10::Allocator::allocate non-const and added copy_data, which every
// allocator must define; an allocator of Kiln's declares itself with these two.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define KILN_ALLOCATE_CONST
#define KILN_ALLOCATOR_COPY_DATA                                                  \
  void copy_data(void* dest, const void* src, std::size_t count) const override { \
    default_copy_data(dest, src, count);                                          \
  }
#else
#define KILN_ALLOCATE_CONST const
#define KILN_ALLOCATOR_COPY_DATA
#endif

namespace kiln::core {

// The most bytes one piece of unfused attention's score matrix takes.
inline constexpr int64_t kAttentionChunkBytes = int64_t{64} << 20;

// softmax(q k^T * scale + mask) v over [B, H, N, D] tensors; uses the fused kernel when
// libtorch provides one. `mask` is additive and may be undefined.
inline at::Tensor scaledDotProductAttention(const at::Tensor& q, const at::Tensor& k,
                                            const at::Tensor& v, const at::Tensor& mask,
                                            double scale) {
#if KILN_HAS_FUSED_ATTENTION
  // Some 2.x versions take an additive mask only in the queries' dtype.
  return at::scaled_dot_product_attention(
      q, k, v, mask.defined() ? c10::optional<at::Tensor>(mask.to(q.scalar_type())) : c10::nullopt,
      0.0, false, scale);
#else
  // Rows of queries at a time, so the score matrix stays under kAttentionChunkBytes (a
  // VAE's mid-block attention over a 2048x2048 image would need 16 GiB at once). Rows are
  // independent, so the result is the same as in one piece.
  const int64_t rows = q.size(-2), cols = k.size(-2);
  const int64_t row_bytes = q.numel() / std::max<int64_t>(q.size(-1), 1) /
                            std::max<int64_t>(rows, 1) * cols *
                            static_cast<int64_t>(q.element_size());
  const int64_t chunk =
      std::max<int64_t>(1, kAttentionChunkBytes / std::max<int64_t>(row_bytes, 1));
  const at::Tensor kt = k.transpose(-2, -1);
  const auto attend = [&](const at::Tensor& qs, const at::Tensor& m) {
    at::Tensor scores = at::matmul(qs * scale, kt);
    if (m.defined()) scores = scores + m;
    return at::matmul(at::softmax(scores, -1), v);
  };
  if (chunk >= rows) return attend(q, mask);
  std::vector<at::Tensor> parts;
  for (int64_t r = 0; r < rows; r += chunk) {
    const int64_t n = std::min(chunk, rows - r);
    const bool row_mask = mask.defined() && mask.dim() >= 2 && mask.size(-2) == rows;
    parts.push_back(attend(q.narrow(-2, r, n), row_mask ? mask.narrow(-2, r, n) : mask));
  }
  return at::cat(parts, -2);
#endif
}

}  // namespace kiln::core
