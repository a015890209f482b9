#include "models/common/layers.h"

#include <cmath>

#include "core/torch_compat.h"
#include "kiln/error.h"

namespace kiln::models {

void Linear::declare(weights::ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {out, in}, &weight, weights::ParamList::Kind::Leaf);
  if (bias_mode == Bias::With) p.add(prefix + "bias", {out}, &bias, weights::ParamList::Kind::Leaf);
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  weights::LeafScope leaf(&weight, bias_mode == Bias::With ? &bias : nullptr);
  return weights::adaptOutput(&weight, x, at::linear(x, weight, bias));
}

void Conv2d::declare(weights::ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {out, in, kernel, kernel}, &weight, weights::ParamList::Kind::Leaf);
  p.add(prefix + "bias", {out}, &bias, weights::ParamList::Kind::Leaf);
}

at::Tensor Conv2d::operator()(const at::Tensor& x) const {
  weights::LeafScope leaf(&weight, &bias);
  return weights::adaptOutput(&weight, x,
                              at::conv2d(x, weight, bias, {stride, stride}, {padding, padding}),
                              {true, stride, padding});
}

void GroupNorm::declare(weights::ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {channels}, &weight, weights::ParamList::Kind::Leaf);
  p.add(prefix + "bias", {channels}, &bias, weights::ParamList::Kind::Leaf);
}

namespace {
thread_local GroupNormStats* t_group_norm_stats = nullptr;
}  // namespace

void GroupNormStats::finish() {
  for (std::size_t i = 0; i < mean.size(); ++i) {
    mean[i] = mean[i] / count[i];  // sums -> moments
    var[i] = (var[i] / count[i] - mean[i] * mean[i]).clamp_min(0.0);
  }
  mode = Mode::Replay;
}

GroupNormStatsScope::GroupNormStatsScope(GroupNormStats& stats) : previous_(t_group_norm_stats) {
  t_group_norm_stats = &stats;
}
GroupNormStatsScope::~GroupNormStatsScope() {
  t_group_norm_stats = previous_;
}

at::Tensor GroupNorm::operator()(const at::Tensor& x) const {
  weights::LeafScope leaf(&weight, &bias);
  GroupNormStats* stats = t_group_norm_stats;
  if (!stats) return at::group_norm(x, groups, weight, bias, eps);
  const int64_t b = x.size(0);
  if (stats->mode == GroupNormStats::Mode::Accumulate) {
    const std::size_t i = stats->next++;
    const at::Tensor grouped = x.reshape({b, groups, -1}).to(at::kFloat);
    const auto n = static_cast<double>(grouped.size(2));
    const at::Tensor sum = grouped.sum(-1, true), sum_sq = grouped.pow(2).sum(-1, true);
    if (i == stats->mean.size()) {
      stats->mean.push_back(sum);
      stats->var.push_back(sum_sq);
      stats->count.push_back(n);
    } else {
      stats->mean[i].add_(sum);
      stats->var[i].add_(sum_sq);
      stats->count[i] += n;
    }
    return at::group_norm(x, groups, weight, bias, eps);
  }
  const std::size_t i = stats->next++;
  if (i >= stats->mean.size() || stats->mean[i].size(0) != b || stats->mean[i].size(1) != groups)
    throw Error(ErrorKind::Internal,
                "GroupNorm statistics replayed out of step with the pass that recorded them");
  at::Tensor y = x.reshape({b, groups, -1}).to(at::kFloat, false, true);
  y.sub_(stats->mean[i].to(y.device())).mul_(at::rsqrt(stats->var[i] + eps).to(y.device()));
  y = y.reshape(x.sizes()).to(x.scalar_type());
  std::vector<int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape[1] = x.size(1);
  return y.mul_(weight.view(shape)).add_(bias.view(shape));
}

void LayerNorm::declare(weights::ParamList& p, const std::string& prefix) {
  p.add(prefix + "weight", {dim}, &weight, weights::ParamList::Kind::Leaf);
  p.add(prefix + "bias", {dim}, &bias, weights::ParamList::Kind::Leaf);
}

at::Tensor LayerNorm::operator()(const at::Tensor& x) const {
  weights::LeafScope leaf(&weight, &bias);
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

at::Tensor rmsNormGain(const at::Tensor& x, const at::Tensor& gain, double eps) {
  weights::LeafScope leaf(&gain, nullptr);
  const at::Tensor xf = x.to(at::kFloat);
  return (xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps)).to(x.scalar_type()) * gain;
}

at::Tensor rotatePairs(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const at::Tensor xf = x.to(at::kFloat).unflatten(-1, {-1, 2});
  const at::Tensor a = xf.select(-1, 0), b = xf.select(-1, 1);
  return at::stack({a * cos - b * sin, a * sin + b * cos}, -1).flatten(-2).to(x.scalar_type());
}

at::Tensor timestepEmbedding(const at::Tensor& timesteps, int64_t dim, double freq_shift) {
  const int64_t half = dim / 2;
  at::Tensor exponent = at::arange(half, timesteps.options().dtype(at::kFloat)) *
                        static_cast<float>(-std::log(10000.0));
  exponent = exponent / static_cast<float>(half - freq_shift);
  at::Tensor freqs = at::exp(exponent);
  at::Tensor args = timesteps.to(at::kFloat).unsqueeze(1) * freqs.unsqueeze(0);
  at::Tensor emb = at::cat({at::cos(args), at::sin(args)}, -1);
  if (dim % 2 == 1) emb = at::constant_pad_nd(emb, {0, 1});
  return emb;
}

}  // namespace kiln::models
