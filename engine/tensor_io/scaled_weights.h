// Scaled fp8 checkpoints: ComfyUI's "scaled_fp8" files (each fp8 weight `X.weight` with a
// one-element `X.scale_weight`) and the weight_scale convention of other quantizers.
#pragma once

#include <cstdint>

#include "tensor_io/tensor_index.h"

namespace kiln::tensor_io {

// `index` with each stored weight that has a one-element scale beside it (`X.scale_weight`
// or `X.weight_scale`) as one entry that materializes as weight * scale (in float32, before
// the cast to the compute dtype); the scales, the input scales (`X.scale_input`,
// `X.input_scale`, which weight-only upcasting does not use) and the "scaled_fp8" marker
// left out. `scaled` (when given) receives how many weights were scaled.
TensorIndex withWeightScales(const TensorIndex& index, int64_t* scaled = nullptr);

}  // namespace kiln::tensor_io
