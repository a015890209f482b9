#include "models/common/working_memory.h"

#include <algorithm>

#include "core/torch_compat.h"
#include "models/common/conv_kernels.h"

namespace kiln::models {

int64_t resnetPeakElements(int64_t in, int64_t out, int64_t pixels, int64_t col) {
  return pixels * (std::max(3 * in + out, in + 4 * out) + (1 + col) * std::max(in, out));
}

int64_t attentionScoreBytes(int64_t batch_heads, int64_t rows, int64_t cols, int64_t element) {
  const int64_t whole = batch_heads * rows * cols * element;
#if KILN_HAS_FUSED_ATTENTION
  return std::min(whole, batch_heads * rows * 128 * element);
#else
  return std::min(whole, std::max(core::kAttentionChunkBytes, batch_heads * cols * element));
#endif
}

int64_t withSmallTensors(int64_t peak) {
  return peak + peak / 20 + (int64_t{1} << 20);
}

int64_t oneDnnReorderBytes(int64_t peak, int64_t col, c10::ScalarType dtype) {
  return col == 0 && dtype != c10::ScalarType::Float ? peak / 6 : 0;
}

int64_t im2colChannels(c10::ScalarType dtype) {
  return cpuConvUsesIm2col(dtype) ? 9 : 0;
}

}  // namespace kiln::models
