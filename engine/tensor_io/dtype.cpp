#include "tensor_io/dtype.h"

#include <array>
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

}  // namespace

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
