// LoRA files the tests write: named tensors saved as a safetensors file, and the merge
// the tests compute themselves to check Kiln's against.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "tensor_io/safetensors.h"

namespace kiln::testing {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Writes the tensors as F32 (or F16) safetensors.
inline void writeTensors(const std::string& path, const NamedTensors& tensors, bool half = false) {
  std::vector<tensor_io::TensorToWrite> out;
  std::vector<at::Tensor> keep;
  for (const auto& [name, t] : tensors) {
    const at::Tensor c = t.to(half ? at::kHalf : at::kFloat).contiguous();
    keep.push_back(c);
    out.push_back(
        {name,
         half ? tensor_io::DType::F16 : tensor_io::DType::F32,
         c.sizes().vec(),
         {static_cast<const uint8_t*>(c.data_ptr()), static_cast<std::size_t>(c.nbytes())}});
  }
  tensor_io::writeSafetensors(path, out);
}

// A kohya low-rank pair for a weight of `shape` ([out, in] or [out, in, kh, kw]):
// lora_down [rank, in, kh, kw], lora_up [out, rank, 1, 1] (or 2-D for linear weights).
struct LowRankPair {
  at::Tensor down, up;
  double alpha = 0;
};

inline LowRankPair lowRankFor(const std::vector<int64_t>& shape, int64_t rank, double alpha,
                              int64_t seed) {
  at::manual_seed(static_cast<uint64_t>(seed));
  LowRankPair p;
  std::vector<int64_t> down{rank};
  down.insert(down.end(), shape.begin() + 1, shape.end());
  std::vector<int64_t> up{shape[0], rank};
  for (std::size_t i = 2; i < shape.size(); ++i) up.push_back(1);
  p.down = at::randn(down) * 0.3;
  p.up = at::randn(up) * 0.3;
  p.alpha = alpha;
  return p;
}

// The merge written out: W + strength * (alpha / rank) * up @ down, in the weight's shape.
inline at::Tensor mergedByHand(const at::Tensor& w, const LowRankPair& p, double strength) {
  const int64_t rank = p.down.size(0);
  const at::Tensor delta = at::mm(p.up.reshape({p.up.size(0), rank}), p.down.reshape({rank, -1}));
  return (w.to(at::kFloat) +
          strength * (p.alpha / static_cast<double>(rank)) * delta.reshape(w.sizes()))
      .to(w.scalar_type());
}

}  // namespace kiln::testing
