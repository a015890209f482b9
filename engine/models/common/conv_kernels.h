// Which kernel libtorch runs the CPU's 2-D convolutions on, for memory estimates.
#pragma once

#include <ATen/core/ATen_fwd.h>
#include <c10/core/ScalarType.h>

namespace kiln::models {

// Whether a 3x3 convolution in `dtype` on the CPU runs through libtorch's im2col kernel
// (slow_conv2d), which holds a buffer of 9 x input channels x output pixels elements
// beside its input and output, rather than through oneDNN, which needs none. fp32 takes
// oneDNN; bf16 takes im2col where libtorch's oneDNN has no bf16 for this CPU (no AVX-512),
// and then a VAE decode's peak doubles. Asks libtorch's own dispatch once per dtype, with
// a layer of a size the estimates are for (small inputs take im2col in every dtype).
// Every device Kiln implements (cpu, sim) runs the VAE on the CPU.
bool cpuConvUsesIm2col(at::ScalarType dtype);

}  // namespace kiln::models
