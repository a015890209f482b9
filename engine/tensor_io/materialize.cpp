#include "tensor_io/materialize.h"

#include <cmath>
#include <cstring>

#include "kiln/error.h"

namespace kiln::tensor_io {
namespace {

// Decodes an 8-bit float with the given exponent bits and bias (E4M3FN: no infinities,
// 0x7F/0xFF are NaN; E5M2: IEEE-like with infinities).
float decodeF8(uint8_t v, int exp_bits, int bias, bool fn) {
  const int man_bits = 7 - exp_bits;
  const int sign = (v >> 7) ? -1 : 1;
  const int e = (v >> man_bits) & ((1 << exp_bits) - 1);
  const int m = v & ((1 << man_bits) - 1);
  const int e_max = (1 << exp_bits) - 1;
  if (fn) {
    if (e == e_max && m == (1 << man_bits) - 1) return std::nanf("");
  } else if (e == e_max) {
    return m ? std::nanf("") : sign * INFINITY;
  }
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / (1 << man_bits), e - bias);
}

at::Tensor decodeF8Tensor(std::span<const uint8_t> bytes, const std::vector<int64_t>& shape,
                          DType dtype) {
  float table[256];
  for (int i = 0; i < 256; ++i) {
    table[i] = dtype == DType::F8_E4M3 ? decodeF8(static_cast<uint8_t>(i), 4, 7, true)
                                       : decodeF8(static_cast<uint8_t>(i), 5, 15, false);
  }
  at::Tensor out = at::empty(shape, at::kFloat);
  float* dst = out.data_ptr<float>();
  for (std::size_t i = 0; i < bytes.size(); ++i) dst[i] = table[bytes[i]];
  return out;
}

}  // namespace

at::ScalarType scalarTypeOf(DType dtype) {
  switch (dtype) {
    case DType::F64:
      return at::kDouble;
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::F8_E4M3:
    case DType::F8_E5M2:
      return at::kFloat;
    case DType::I64:
      return at::kLong;
    case DType::I32:
      return at::kInt;
    case DType::I16:
      return at::kShort;
    case DType::I8:
      return at::kChar;
    case DType::U8:
      return at::kByte;
    case DType::Bool:
      return at::kBool;
    case DType::Invalid:
      break;
  }
  throw Error(ErrorKind::Internal, "no libtorch dtype for an invalid safetensors dtype");
}

at::Tensor viewStored(const TensorSource& source) {
  const auto bytes = source.file->bytes(*source.info);
  const auto& shape = source.info->shape;
  if (source.info->dtype == DType::F8_E4M3 || source.info->dtype == DType::F8_E5M2)
    return decodeF8Tensor(bytes, shape, source.info->dtype);
  const auto type = scalarTypeOf(source.info->dtype);
  const auto element = static_cast<uintptr_t>(at::elementSize(type));
  auto* ptr = const_cast<uint8_t*>(bytes.data());
  if (reinterpret_cast<uintptr_t>(ptr) % element != 0) {
    // Misaligned data (legal in safetensors): copy into an aligned tensor.
    at::Tensor out = at::empty(shape, type);
    std::memcpy(out.data_ptr(), ptr, bytes.size());
    return out;
  }
  auto keep = source.file;  // the mapping lives as long as the tensor
  return at::from_blob(
      ptr, shape, [keep](void*) mutable { keep.reset(); }, at::TensorOptions().dtype(type));
}

at::Tensor materialize(const IndexEntry& entry, at::ScalarType dtype) {
  if (entry.sources.empty()) throw Error(ErrorKind::Internal, "index entry without a source");
  at::Tensor t;
  switch (entry.transform) {
    case Transform::Identity:
      t = viewStored(entry.sources[0]);
      break;
    case Transform::Reshape:
      t = viewStored(entry.sources[0]).reshape(entry.shape);
      break;
    case Transform::Transpose2D:
      t = viewStored(entry.sources[0]).t();
      break;
    case Transform::Concat0: {
      std::vector<at::Tensor> parts;
      for (const auto& s : entry.sources) parts.push_back(viewStored(s));
      t = at::cat(parts, 0);
      break;
    }
    case Transform::SwapHalves0: {
      const at::Tensor whole = viewStored(entry.sources[0]);
      if (whole.dim() == 0 || whole.size(0) % 2 != 0)
        throw Error(ErrorKind::ShapeMismatch,
                    "'" + entry.sources[0].info->name + "' does not split into two halves");
      const auto halves = whole.chunk(2, 0);
      t = at::cat({halves[1], halves[0]}, 0);
      break;
    }
    case Transform::Scaled: {
      if (entry.sources.size() != 2 || entry.sources[1].info->numel() != 1)
        throw Error(ErrorKind::ShapeMismatch,
                    "'" + entry.sources[0].info->name + "' has no one-element scale");
      t = viewStored(entry.sources[0]).to(at::kFloat) *
          viewStored(entry.sources[1]).to(at::kFloat).reshape({});
      break;
    }
    case Transform::Invalid:
      throw Error(ErrorKind::Internal, "index entry without a transform");
  }
  // Always hand out contiguous memory that does not alias the mapping when converted.
  return t.to(dtype).contiguous();
}

}  // namespace kiln::tensor_io
