// Pieces the working-memory estimates of every model share: what a residual block, an
// attention's score matrix and the small tensors beside the large ones hold at a peak.
// The estimates count activations only (weights are placed and counted apart).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

namespace kiln::models {

// Elements a residual block (in -> out channels over `pixels` positions) holds at its
// peak, its input included: x, norm1(x), silu(...) and conv1's output (3 in + out), or x
// with four tensors of `out` channels around conv2, and one more the kernels use as
// workspace; `col` is the im2col buffer's channels per input channel (9, or 0 with
// oneDNN).
int64_t resnetPeakElements(int64_t in, int64_t out, int64_t pixels, int64_t col);

// Bytes of one piece of attention's score matrix for `batch_heads` x `rows` queries over
// `cols` keys: the whole matrix, or the piece unfused attention computes at a time (rows
// up to core::kAttentionChunkBytes), or a fused kernel's blocks.
int64_t attentionScoreBytes(int64_t batch_heads, int64_t rows, int64_t cols, int64_t element);

// The large tensors' peak plus 5% and 1 MiB for the small ones alive beside them
// (statistics, views' metadata, the allocator's rounding).
int64_t withSmallTensors(int64_t peak);

// oneDNN's reduced-precision convolutions (bf16 on CPUs with AVX-512 BF16 or AMX) keep
// copies reordered to its blocked layout beside the activations: measured up to 10% above
// the activations' sum on a 2-core Xeon with AMX; a sixth covers it.
int64_t oneDnnReorderBytes(int64_t peak, int64_t col, c10::ScalarType dtype);

// The im2col channels per input channel of a 3x3 convolution in `dtype` (see
// cpuConvUsesIm2col).
int64_t im2colChannels(c10::ScalarType dtype);

}  // namespace kiln::models
