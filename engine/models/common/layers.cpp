#include "models/common/layers.h"

#include <cmath>

#include "core/torch_compat.h"

namespace kiln::models {

void Linear::declare(ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {out, in}, &weight, ParamList::Kind::Leaf);
  if (bias_mode == Bias::With) p.add(prefix + "bias", {out}, &bias, ParamList::Kind::Leaf);
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  LeafScope leaf(&weight, bias_mode == Bias::With ? &bias : nullptr);
  return adaptOutput(&weight, x, at::linear(x, weight, bias));
}

void Conv2d::declare(ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {out, in, kernel, kernel}, &weight, ParamList::Kind::Leaf);
  p.add(prefix + "bias", {out}, &bias, ParamList::Kind::Leaf);
}

at::Tensor Conv2d::operator()(const at::Tensor& x) const {
  LeafScope leaf(&weight, &bias);
  return adaptOutput(&weight, x, at::conv2d(x, weight, bias, {stride, stride}, {padding, padding}),
                     {true, stride, padding});
}

void GroupNorm::declare(ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {channels}, &weight, ParamList::Kind::Leaf);
  p.add(prefix + "bias", {channels}, &bias, ParamList::Kind::Leaf);
}

at::Tensor GroupNorm::operator()(const at::Tensor& x) const {
  LeafScope leaf(&weight, &bias);
  return at::group_norm(x, groups, weight, bias, eps);
}

void LayerNorm::declare(ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {dim}, &weight, ParamList::Kind::Leaf);
  p.add(prefix + "bias", {dim}, &bias, ParamList::Kind::Leaf);
}

at::Tensor LayerNorm::operator()(const at::Tensor& x) const {
  LeafScope leaf(&weight, &bias);
  return at::layer_norm(x, {dim}, weight, bias, eps);
}

at::Tensor multiHeadAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              int64_t heads, const at::Tensor& mask) {
  const int64_t b = q.size(0), n = q.size(1), c = q.size(2);
  const int64_t d = c / heads;
  auto split = [&](const at::Tensor& t) {
    return t.reshape({b, t.size(1), heads, d}).transpose(1, 2);
  };
  at::Tensor out = core::scaledDotProductAttention(split(q), split(k), split(v), mask,
                                                   1.0 / std::sqrt(static_cast<double>(d)));
  return out.transpose(1, 2).reshape({b, n, c});
}

at::Tensor timestepEmbedding(const at::Tensor& timesteps, int64_t dim, double freq_shift) {
  const int64_t half = dim / 2;
  at::Tensor exponent = at::arange(half, at::TensorOptions().dtype(at::kFloat)) *
                        static_cast<float>(-std::log(10000.0));
  exponent = exponent / static_cast<float>(half - freq_shift);
  at::Tensor freqs = at::exp(exponent).to(timesteps.device());
  at::Tensor args = timesteps.to(at::kFloat).unsqueeze(1) * freqs.unsqueeze(0);
  at::Tensor emb = at::cat({at::cos(args), at::sin(args)}, -1);
  if (dim % 2 == 1) emb = at::constant_pad_nd(emb, {0, 1});
  return emb;
}

}  // namespace kiln::models
