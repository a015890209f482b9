// float8_e4m3fn (1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no infinities, 448
// at most), as PyTorch stores it, written by the tests: the nearest code to a float, ties
// to the even code.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace kiln::testing {

inline float decodeE4M3(uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 7;
  const float v = e == 0 ? std::ldexp(static_cast<float>(m) / 8.0f, -6)
                         : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
  return (b & 0x80) ? -v : v;
}

inline uint8_t encodeE4M3(float x) {
  const float a = std::min(std::fabs(x), 448.0f);
  uint8_t best = 0;
  float best_err = INFINITY;
  for (uint8_t code = 0; code < 0x7F; ++code) {  // 0x7F is NaN
    const float err = std::fabs(decodeE4M3(code) - a);
    if (err < best_err || (err == best_err && (code & 1) == 0)) {
      best = code;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best | (x < 0 ? 0x80 : 0));
}

inline std::vector<uint8_t> encodeE4M3(const std::vector<float>& values) {
  std::vector<uint8_t> out;
  out.reserve(values.size());
  for (float v : values) out.push_back(encodeE4M3(v));
  return out;
}

}  // namespace kiln::testing
