#include "models/text/umt5.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/interrupt.h"
#include "kiln/error.h"
#include "models/common/working_memory.h"

namespace kiln::models {
namespace {

// T5's layer norm: a gain on x / rms(x), in float32, without mean or bias.
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  weights::LeafScope leaf(&weight, nullptr);
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor y = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps);
  return weight * y.to(weight.scalar_type());
}

at::Tensor geluTanh(const at::Tensor& x) {
  return at::gelu(x, "tanh");
}

}  // namespace

Umt5Config Umt5Config::detect(const tensor_io::TensorIndex& index, const std::string& prefix) {
  Umt5Config c;
  c.embedding =
      index.contains(prefix + "shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  const auto& emb = index.shape(prefix + c.embedding);
  c.vocab = emb.at(0);
  c.d_model = emb.at(1);
  c.layers = 0;
  while (index.contains(prefix + "encoder.block." + std::to_string(c.layers) +
                        ".layer.0.SelfAttention.q.weight"))
    ++c.layers;
  if (c.layers == 0)
    throw Error(ErrorKind::UnsupportedModel, "UMT5 encoder at '" + prefix + "' has no layers");
  const std::string l0 = prefix + "encoder.block.0.layer.";
  const int64_t inner = index.shape(l0 + "0.SelfAttention.q.weight").at(0);
  const auto& bias = index.shape(l0 + "0.SelfAttention.relative_attention_bias.weight");
  c.buckets = bias.at(0);
  c.heads = bias.at(1);
  if (c.heads <= 0 || inner % c.heads != 0)
    throw Error(ErrorKind::UnsupportedModel, "UMT5 encoder: " + std::to_string(inner) +
                                                 " attention channels do not split into " +
                                                 std::to_string(c.heads) + " heads");
  c.d_kv = inner / c.heads;
  c.shared_position_bias = c.layers > 1 && !index.contains(prefix +
                                                           "encoder.block.1.layer.0.SelfAttention."
                                                           "relative_attention_bias.weight");
  c.d_ff = index.shape(l0 + "1.DenseReluDense.wi_0.weight").at(0);
  return c;
}

at::Tensor relativePositionBuckets(int64_t query_len, int64_t key_len, int64_t buckets,
                                   int64_t max_distance, at::Device device) {
  const int64_t half = buckets / 2, exact = half / 2;
  const at::TensorOptions opts = at::TensorOptions().dtype(at::kLong).device(device);
  const at::Tensor q = at::arange(query_len, opts).unsqueeze(1);
  const at::Tensor k = at::arange(key_len, opts).unsqueeze(0);
  const at::Tensor rel = k - q;
  at::Tensor out = rel.gt(0).to(at::kLong) * half;
  const at::Tensor dist = rel.abs();
  // log-spaced beyond `exact`, in float32 and truncated, as transformers computes it
  at::Tensor large = (at::log(dist.to(at::kFloat) / static_cast<float>(exact)) /
                      static_cast<float>(std::log(static_cast<double>(max_distance) / exact)) *
                      static_cast<float>(half - exact))
                         .to(at::kLong) +
                     exact;
  large = at::clamp_max(large, half - 1);
  return out + at::where(dist.lt(exact), dist, large);
}

Umt5Encoder::Umt5Encoder(const Umt5Config& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {
  const auto& c = config_;
  const int64_t inner = c.heads * c.d_kv;
  params_.beginGroup("embeddings");
  params_.add(prefix_ + c.embedding, {c.vocab, c.d_model}, &embed_tokens);
  layers_.resize(static_cast<std::size_t>(c.layers));
  for (int64_t i = 0; i < c.layers; ++i) {
    Layer& l = layers_[static_cast<std::size_t>(i)];
    const std::string p = prefix_ + "encoder.block." + std::to_string(i) + ".layer.";
    l.group = params_.beginGroup("layer " + std::to_string(i));
    params_.add(p + "0.layer_norm.weight", {c.d_model}, &l.attn_norm,
                weights::ParamList::Kind::Leaf);
    l.q = Linear(c.d_model, inner, Bias::Without);
    l.k = Linear(c.d_model, inner, Bias::Without);
    l.v = Linear(c.d_model, inner, Bias::Without);
    l.o = Linear(inner, c.d_model, Bias::Without);
    l.q.declare(params_, p + "0.SelfAttention.q.");
    l.k.declare(params_, p + "0.SelfAttention.k.");
    l.v.declare(params_, p + "0.SelfAttention.v.");
    l.o.declare(params_, p + "0.SelfAttention.o.");
    if (i == 0 || !c.shared_position_bias)
      params_.add(p + "0.SelfAttention.relative_attention_bias.weight", {c.buckets, c.heads},
                  &l.rel_bias);
    params_.add(p + "1.layer_norm.weight", {c.d_model}, &l.ff_norm, weights::ParamList::Kind::Leaf);
    l.wi0 = Linear(c.d_model, c.d_ff, Bias::Without);
    l.wi1 = Linear(c.d_model, c.d_ff, Bias::Without);
    l.wo = Linear(c.d_ff, c.d_model, Bias::Without);
    l.wi0.declare(params_, p + "1.DenseReluDense.wi_0.");
    l.wi1.declare(params_, p + "1.DenseReluDense.wi_1.");
    l.wo.declare(params_, p + "1.DenseReluDense.wo.");
  }
  final_group_ = params_.beginGroup("final");
  params_.add(prefix_ + "encoder.final_layer_norm.weight", {c.d_model}, &final_norm,
              weights::ParamList::Kind::Leaf);
  params_.endGroup();
}

std::vector<std::string> Umt5Encoder::ignoredKeys() const {
  return {prefix_ +
          (config_.embedding == "shared.weight" ? "encoder.embed_tokens.weight" : "shared.weight")};
}

Umt5Output Umt5Encoder::forward(const at::Tensor& ids, const at::Tensor& mask) const {
  const auto& c = config_;
  if (ids.dim() != 2 || ids.size(1) == 0)
    throw Error(ErrorKind::InvalidArgument, "text encoder input must be [batch, tokens] token ids");
  if (mask.defined() && mask.sizes() != ids.sizes())
    throw Error(ErrorKind::ShapeMismatch, "text encoder mask must match the token ids' shape");
  const int64_t b = ids.size(0), n = ids.size(1);
  const weights::CallScope call(params_);
  at::Tensor x;
  {
    const weights::GroupScope group(params_, 0);
    if (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= c.vocab)
      throw Error(ErrorKind::InvalidArgument,
                  "token id outside the text encoder's vocabulary of " + std::to_string(c.vocab));
    x = at::embedding(embed_tokens, ids.to(embed_tokens.device()));
  }
  const auto dev = x.device();
  const at::Tensor buckets = relativePositionBuckets(n, n, c.buckets, c.max_distance, dev);
  at::Tensor key_mask;  // [B, 1, 1, L] additive, float32
  if (mask.defined())
    key_mask = ((1.0 - mask.to(dev, at::kFloat)) * std::numeric_limits<float>::lowest())
                   .view({b, 1, 1, n});

  Umt5Output out;
  out.hidden_states.push_back(x);
  at::Tensor bias;  // [1 or B, H, L, L] float32: a layer's own, or layer 0's for every layer
  for (const Layer& l : layers_) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, l.group);
    at::Tensor h = rmsNorm(x, l.attn_norm, c.eps);
    const auto split = [&](const at::Tensor& t) {
      return t.view({b, n, c.heads, c.d_kv}).transpose(1, 2);
    };
    const at::Tensor q = split(l.q(h)), k = split(l.k(h)), v = split(l.v(h));
    // Made while its layer's weights are on the device (offload moves them after).
    if (l.rel_bias.defined() && (!c.shared_position_bias || !bias.defined())) {
      bias = at::embedding(l.rel_bias, buckets).permute({2, 0, 1}).unsqueeze(0).to(at::kFloat);
      if (key_mask.defined()) bias = bias + key_mask;
    }
    // no 1/sqrt(d) scaling: T5 folds it into the weights; softmax in float32
    const at::Tensor scores =
        at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-2, -1)) + bias;
    const at::Tensor attn = at::matmul(at::softmax(scores, -1).to(v.scalar_type()), v);
    x = x + l.o(attn.transpose(1, 2).reshape({b, n, c.heads * c.d_kv}));
    h = rmsNorm(x, l.ff_norm, c.eps);
    x = x + l.wo(geluTanh(l.wi0(h)) * l.wi1(h));
    out.hidden_states.push_back(x);
  }
  const weights::GroupScope group(params_, final_group_);
  out.last_hidden_state = rmsNorm(x, final_norm, c.eps);
  out.hidden_states.back() = out.last_hidden_state;
  return out;
}

at::Tensor Umt5Encoder::encode(const at::Tensor& ids) const {
  const at::Tensor mask = ids.ne(0);
  at::Tensor hidden = forward(ids, mask).last_hidden_state;
  // rows past each prompt's length (its token count, the end token included) are zero
  const at::Tensor lengths = mask.sum(1, true);
  const at::Tensor keep =
      at::arange(ids.size(1), lengths.options()).unsqueeze(0).lt(lengths).to(hidden.device());
  return hidden * keep.unsqueeze(-1).to(hidden.scalar_type());
}

int64_t umt5WorkingBytes(const Umt5Config& c, int64_t tokens, at::ScalarType dtype) {
  const int64_t e = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t inner = c.heads * c.d_kv;
  const int64_t states = (c.layers + 2) * tokens * c.d_model * e;
  // q, k, v and their float32 copies; the bias, the masked bias, the scores, their softmax
  // (float32) and its copy in the compute dtype; the result and its re-laid-out copy.
  const int64_t attention = tokens * (2 * c.d_model * e + inner * (5 * e + 2 * 4)) +
                            c.heads * tokens * tokens * (4 * 4 + e) + tokens * c.buckets * 8;
  const int64_t feed_forward = tokens * (3 * c.d_model * e + 4 * c.d_ff * e);
  return withSmallTensors(states + std::max(attention, feed_forward));
}

}  // namespace kiln::models
