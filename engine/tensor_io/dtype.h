// Element types that appear in safetensors files, independent of libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::tensor_io {

enum class DType {
  Invalid = 0,
  F64,
  F32,
  F16,
  BF16,
  F8_E4M3,
  F8_E5M2,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool,
};

// Bytes per element; 0 for Invalid.
std::size_t dtypeSize(DType dtype) noexcept;
// The safetensors spelling ("F16", "BF16", ...).
const char* dtypeName(DType dtype) noexcept;
// DType::Invalid when the name is not one Kiln knows.
DType parseDType(std::string_view name) noexcept;

// Converts `count` little-endian elements of a floating dtype (F64, F32, F16, BF16) at
// `data` to double. False (nothing written) for any other dtype.
bool toDoubles(DType dtype, const uint8_t* data, std::size_t count, double* out) noexcept;

}  // namespace kiln::tensor_io
