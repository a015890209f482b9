#include "tensor_io/dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

namespace kiln::tensor_io {
namespace {

struct DTypeRow {
  DType dtype;
  const char* name;
  std::size_t size;
};

// One table for names and sizes so the three functions cannot disagree.
constexpr std::array<DTypeRow, 12> kDTypes{{
    {DType::F64, "F64", 8},
    {DType::F32, "F32", 4},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::I64, "I64", 8},
    {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},
    {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
}};

// IEEE 754 binary16 to single precision, subnormals, infinities and NaN included.
float halfToFloat(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13)
                                         : sign | ((exponent + 112) << 23) | (mantissa << 13);
  return std::bit_cast<float>(bits);
}

template <typename T>
T load(const uint8_t* p) noexcept {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

}  // namespace

bool toDoubles(DType dtype, const uint8_t* data, std::size_t count, double* out) noexcept {
  switch (dtype) {
    case DType::F64:
      for (std::size_t i = 0; i < count; ++i) out[i] = load<double>(data + 8 * i);
      return true;
    case DType::F32:
      for (std::size_t i = 0; i < count; ++i) out[i] = load<float>(data + 4 * i);
      return true;
    case DType::F16:
      for (std::size_t i = 0; i < count; ++i) out[i] = halfToFloat(load<uint16_t>(data + 2 * i));
      return true;
    case DType::BF16:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = std::bit_cast<float>(static_cast<uint32_t>(load<uint16_t>(data + 2 * i)) << 16);
      return true;
    default:
      return false;
  }
}

std::size_t dtypeSize(DType dtype) noexcept {
  for (const auto& row : kDTypes) {
    if (row.dtype == dtype) return row.size;
  }
  return 0;
}

const char* dtypeName(DType dtype) noexcept {
  for (const auto& row : kDTypes) {
    if (row.dtype == dtype) return row.name;
  }
  return "INVALID";
}

DType parseDType(std::string_view name) noexcept {
  for (const auto& row : kDTypes) {
    if (name == row.name) return row.dtype;
  }
  return DType::Invalid;
}

}  // namespace kiln::tensor_io
