// Turning index entries into libtorch tensors.
#pragma once

#include <ATen/ATen.h>

#include "tensor_io/tensor_index.h"

namespace kiln::tensor_io {

// The stored element type as a libtorch dtype. F8 types have no libtorch 1.13 dtype and
// are decoded to float32 by materialize(); here they return at::kFloat.
at::ScalarType scalarTypeOf(DType dtype);

// Reads one entry (applying its layout transform) and converts it to `dtype` on CPU.
// Data comes straight from the memory map; the result never aliases the file when a
// conversion or transform happens, and aliases the private mapping otherwise.
at::Tensor materialize(const IndexEntry& entry, at::ScalarType dtype);

// Zero-copy view of one stored tensor (keeps the mapping alive while the tensor lives).
// F8 sources are decoded to float32 (a copy).
at::Tensor viewStored(const TensorSource& source);

}  // namespace kiln::tensor_io
