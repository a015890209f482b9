#include "models/flux/flux_transformer.h"

#include <algorithm>
#include <cmath>

#include "core/interrupt.h"
#include "core/torch_compat.h"
#include "kiln/error.h"
#include "models/common/working_memory.h"

namespace kiln::models {
namespace {

constexpr int64_t kFreqDim = 256;  // the time and guidance sinusoids' channels

// Layer norm without affine parameters, modulated: LN(x) (1 + scale) + shift, in float32.
at::Tensor modulate(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale,
                    double eps) {
  return at::layer_norm(x.to(at::kFloat), {x.size(-1)}, {}, {}, eps) * (1 + scale) + shift;
}

// x + gate * y, summed in float32, back in x's dtype.
at::Tensor gatedAdd(const at::Tensor& x, const at::Tensor& y, const at::Tensor& gate) {
  return (x.to(at::kFloat) + y.to(at::kFloat) * gate).to(x.scalar_type());
}

// A [B, k D] modulation split into k [B, 1, D] float32 chunks.
std::vector<at::Tensor> chunks(const at::Tensor& m, int64_t k) {
  return m.to(at::kFloat).unsqueeze(1).chunk(k, -1);
}

int64_t blockCount(const tensor_io::TensorIndex& index, const std::string& prefix,
                   const std::string& kind, const std::string& key) {
  int64_t n = 0;
  while (index.contains(prefix + kind + "." + std::to_string(n) + "." + key)) ++n;
  return n;
}

}  // namespace

bool isFluxTransformer(const tensor_io::TensorIndex& index, const std::string& prefix) {
  return index.contains(prefix + "double_blocks.0.img_attn.qkv.weight") &&
         index.contains(prefix + "img_in.weight");
}

FluxTransformerConfig FluxTransformerConfig::detect(const tensor_io::TensorIndex& index,
                                                    const std::string& prefix,
                                                    const std::array<int64_t, 3>* axes) {
  FluxTransformerConfig c;
  c.dim = index.dim(prefix + "img_in.weight", 0);
  c.in_channels = index.dim(prefix + "img_in.weight", 1);
  c.context_dim = index.dim(prefix + "txt_in.weight", 1);
  c.vec_dim = index.dim(prefix + "vector_in.in_layer.weight", 1);
  c.mlp_hidden = index.dim(prefix + "double_blocks.0.img_mlp.0.weight", 0);
  c.out_channels = index.dim(prefix + "final_layer.linear.weight", 0);
  const int64_t head_dim = index.dim(prefix + "double_blocks.0.img_attn.norm.query_norm.scale", 0);
  c.double_blocks = blockCount(index, prefix, "double_blocks", "img_attn.qkv.weight");
  c.single_blocks = blockCount(index, prefix, "single_blocks", "linear1.weight");
  c.guidance = index.contains(prefix + "guidance_in.in_layer.weight");
  if (index.dim(prefix + "time_in.in_layer.weight", 1) != kFreqDim)
    throw Error(ErrorKind::UnsupportedModel,
                "FLUX transformer: time_in takes " +
                    std::to_string(index.dim(prefix + "time_in.in_layer.weight", 1)) +
                    " channels, not FLUX's 256");
  if (c.dim % head_dim != 0 || head_dim % 2 != 0)
    throw Error(ErrorKind::UnsupportedModel, "FLUX transformer: width " + std::to_string(c.dim) +
                                                 " does not split into heads of " +
                                                 std::to_string(head_dim));
  c.heads = c.dim / head_dim;
  if (axes) {
    c.axes = *axes;
  } else {
    const int64_t image_axis = 2 * (head_dim * 7 / 32);
    c.axes = {head_dim - 2 * image_axis, image_axis, image_axis};
  }
  if (c.axes[0] + c.axes[1] + c.axes[2] != head_dim ||
      std::any_of(c.axes.begin(), c.axes.end(), [](int64_t a) { return a <= 0 || a % 2 != 0; }))
    throw Error(ErrorKind::UnsupportedModel,
                "FLUX transformer: the rotary axes do not split its heads of " +
                    std::to_string(head_dim) + " channels into even parts");
  if (c.single_blocks > 0) {
    const int64_t linear1 = index.dim(prefix + "single_blocks.0.linear1.weight", 0);
    if (linear1 != 3 * c.dim + c.mlp_hidden)
      throw Error(ErrorKind::UnsupportedModel, "FLUX transformer: single_blocks.0.linear1 has " +
                                                   std::to_string(linear1) +
                                                   " outputs, not q, k, v and the MLP's " +
                                                   std::to_string(3 * c.dim + c.mlp_hidden));
  }
  return c;
}

at::Tensor packFluxLatent(const at::Tensor& latent) {
  const int64_t b = latent.size(0), ch = latent.size(1), h = latent.size(2), w = latent.size(3);
  if (h % 2 != 0 || w % 2 != 0)
    throw Error(ErrorKind::ShapeMismatch, "a FLUX latent's height and width must be even");
  return latent.view({b, ch, h / 2, 2, w / 2, 2})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({b, (h / 2) * (w / 2), ch * 4});
}

at::Tensor unpackFluxLatent(const at::Tensor& tokens, int64_t height, int64_t width) {
  const int64_t b = tokens.size(0), ch = tokens.size(2) / 4;
  if (tokens.size(1) != (height / 2) * (width / 2) || tokens.size(2) % 4 != 0)
    throw Error(ErrorKind::ShapeMismatch, "packed FLUX tokens do not make a latent of " +
                                              std::to_string(height) + "x" + std::to_string(width) +
                                              " cells");
  return tokens.view({b, height / 2, width / 2, ch, 2, 2})
      .permute({0, 3, 1, 4, 2, 5})
      .reshape({b, ch, height, width});
}

at::Tensor fluxImageIds(int64_t height, int64_t width) {
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(at::kCPU);  // host: small table
  const int64_t rows = height / 2, cols = width / 2;
  const at::Tensor r = at::arange(rows, opts).view({rows, 1}).expand({rows, cols});
  const at::Tensor c = at::arange(cols, opts).view({1, cols}).expand({rows, cols});
  return at::stack({at::zeros({rows, cols}, opts), r, c}, -1).reshape({rows * cols, 3});
}

std::pair<at::Tensor, at::Tensor> fluxRopeAngles(const at::Tensor& ids,
                                                 const std::array<int64_t, 3>& axes, double theta) {
  const auto opts =
      at::TensorOptions().dtype(at::kDouble).device(at::kCPU);  // host: as the reference
  const at::Tensor pos = ids.to(at::kCPU, at::kDouble);
  std::vector<at::Tensor> parts;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const auto d = static_cast<double>(axes[a]);
    const at::Tensor freqs = 1.0 / at::pow(theta, at::arange(0, axes[a], 2, opts) / d);
    parts.push_back(at::outer(pos.select(1, static_cast<int64_t>(a)), freqs));
  }
  const at::Tensor angles = at::cat(parts, -1);
  return {at::cos(angles).to(at::kFloat), at::sin(angles).to(at::kFloat)};
}

void FluxTransformer::declareStream(Modulated& s, const std::string& p, const std::string& stream) {
  const int64_t d = config_.dim, hd = config_.headDim();
  s.mod = Linear(d, 6 * d);
  s.qkv = Linear(d, 3 * d);
  s.proj = Linear(d, d);
  s.mlp0 = Linear(d, config_.mlp_hidden);
  s.mlp2 = Linear(config_.mlp_hidden, d);
  s.mod.declare(params_, p + stream + "_mod.lin.");
  s.qkv.declare(params_, p + stream + "_attn.qkv.");
  params_.add(p + stream + "_attn.norm.query_norm.scale", {hd}, &s.q_norm,
              weights::ParamList::Kind::Leaf);
  params_.add(p + stream + "_attn.norm.key_norm.scale", {hd}, &s.k_norm,
              weights::ParamList::Kind::Leaf);
  s.proj.declare(params_, p + stream + "_attn.proj.");
  s.mlp0.declare(params_, p + stream + "_mlp.0.");
  s.mlp2.declare(params_, p + stream + "_mlp.2.");
}

FluxTransformer::FluxTransformer(const FluxTransformerConfig& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {
  const auto& c = config_;
  const int64_t d = c.dim, hd = c.headDim();
  params_.beginGroup("embeddings");
  img_in = Linear(c.in_channels, d);
  txt_in = Linear(c.context_dim, d);
  img_in.declare(params_, prefix_ + "img_in.");
  txt_in.declare(params_, prefix_ + "txt_in.");
  const auto mlp = [&](Mlp& m, int64_t in, const std::string& name) {
    m.in = Linear(in, d);
    m.out = Linear(d, d);
    m.in.declare(params_, prefix_ + name + ".in_layer.");
    m.out.declare(params_, prefix_ + name + ".out_layer.");
  };
  mlp(time_in, kFreqDim, "time_in");
  if (c.guidance) mlp(guidance_in, kFreqDim, "guidance_in");
  mlp(vector_in, c.vec_dim, "vector_in");
  double_.resize(static_cast<std::size_t>(c.double_blocks));
  for (int64_t i = 0; i < c.double_blocks; ++i) {
    DoubleBlock& b = double_[static_cast<std::size_t>(i)];
    b.group = params_.beginGroup("double block " + std::to_string(i));
    const std::string p = prefix_ + "double_blocks." + std::to_string(i) + ".";
    declareStream(b.img, p, "img");
    declareStream(b.txt, p, "txt");
  }
  single_.resize(static_cast<std::size_t>(c.single_blocks));
  for (int64_t i = 0; i < c.single_blocks; ++i) {
    SingleBlock& b = single_[static_cast<std::size_t>(i)];
    b.group = params_.beginGroup("single block " + std::to_string(i));
    const std::string p = prefix_ + "single_blocks." + std::to_string(i) + ".";
    b.mod = Linear(d, 3 * d);
    b.linear1 = Linear(d, 3 * d + c.mlp_hidden);
    b.linear2 = Linear(d + c.mlp_hidden, d);
    b.mod.declare(params_, p + "modulation.lin.");
    b.linear1.declare(params_, p + "linear1.");
    params_.add(p + "norm.query_norm.scale", {hd}, &b.q_norm, weights::ParamList::Kind::Leaf);
    params_.add(p + "norm.key_norm.scale", {hd}, &b.k_norm, weights::ParamList::Kind::Leaf);
    b.linear2.declare(params_, p + "linear2.");
  }
  head_group_ = params_.beginGroup("head");
  final_mod = Linear(d, 2 * d);
  final_linear = Linear(d, c.out_channels);
  final_mod.declare(params_, prefix_ + "final_layer.adaLN_modulation.1.");
  final_linear.declare(params_, prefix_ + "final_layer.linear.");
  params_.endGroup();
}

std::array<at::Tensor, 3> FluxTransformer::heads(const at::Tensor& qkv, const at::Tensor& q_norm,
                                                 const at::Tensor& k_norm) const {
  // [B, S, 3 D] -> three [B, H, S, hd], the fused projection ordered (q|k|v, head, channel).
  const at::Tensor parts = qkv.unflatten(-1, {3, config_.heads, config_.headDim()});
  const auto part = [&](int64_t i) { return parts.select(2, i); };  // [B, S, H, hd]
  return {rmsNormGain(part(0), q_norm, config_.eps).transpose(1, 2),
          rmsNormGain(part(1), k_norm, config_.eps).transpose(1, 2), part(2).transpose(1, 2)};
}

at::Tensor FluxTransformer::forward(const Inputs& in) const {
  const auto& c = config_;
  if (in.img.dim() != 3 || in.img.size(2) != c.in_channels)
    throw Error(ErrorKind::ShapeMismatch, "FLUX transformer input must be [batch, tokens, " +
                                              std::to_string(c.in_channels) + "]");
  const int64_t b = in.img.size(0), n = in.img.size(1);
  if (in.txt.dim() != 3 || in.txt.size(0) != b || in.txt.size(2) != c.context_dim)
    throw Error(ErrorKind::ShapeMismatch, "FLUX transformer text must be [batch, tokens, " +
                                              std::to_string(c.context_dim) + "]");
  const int64_t l = in.txt.size(1);
  if (in.img_ids.sizes() != at::IntArrayRef({n, 3}) ||
      in.txt_ids.sizes() != at::IntArrayRef({l, 3}))
    throw Error(ErrorKind::ShapeMismatch, "FLUX transformer position ids must be [tokens, 3]");
  if (in.timestep.numel() != b || in.pooled.dim() != 2 || in.pooled.size(0) != b ||
      in.pooled.size(1) != c.vec_dim)
    throw Error(ErrorKind::ShapeMismatch,
                "FLUX transformer needs one timestep and one pooled vector per batch row");
  if (c.guidance && (!in.guidance.defined() || in.guidance.numel() != b))
    throw Error(ErrorKind::InvalidArgument,
                "this FLUX model (dev) needs a guidance value per batch row");
  const weights::CallScope call(params_);
  const at::ScalarType dtype = img_in.weight.scalar_type();
  const auto dev = img_in.weight.device();
  const auto sinusoid = [&](const at::Tensor& v) {  // the model's own scaling by 1000
    return timestepEmbedding(v.reshape({b}).to(dev, at::kFloat) * 1000, kFreqDim).to(dtype);
  };

  at::Tensor x, ctx, vec;
  {
    const weights::GroupScope group(params_, 0);
    x = img_in(in.img.to(dev, dtype));
    ctx = txt_in(in.txt.to(dev, dtype));
    vec = time_in(sinusoid(in.timestep));
    if (c.guidance) vec = vec + guidance_in(sinusoid(in.guidance));
    vec = vec + vector_in(in.pooled.to(dev, dtype));
  }
  const at::Tensor act = at::silu(vec);
  const auto [cos_h, sin_h] = fluxRopeAngles(at::cat({in.txt_ids.cpu(), in.img_ids.cpu()}), c.axes,
                                             c.theta);  // text tokens first
  const at::Tensor cos = cos_h.to(dev), sin = sin_h.to(dev);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.headDim()));
  // Joint attention over [text; image] with the rotary embedding: [B, S, D].
  const auto attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    return core::scaledDotProductAttention(rotatePairs(q, cos, sin), rotatePairs(k, cos, sin), v,
                                           {}, scale)
        .transpose(1, 2)
        .flatten(2);
  };

  for (const DoubleBlock& blk : double_) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, blk.group);
    const auto im = chunks(blk.img.mod(act), 6), tm = chunks(blk.txt.mod(act), 6);
    const auto qi = heads(blk.img.qkv(modulate(x, im[0], im[1], c.eps).to(dtype)), blk.img.q_norm,
                          blk.img.k_norm);
    const auto qt = heads(blk.txt.qkv(modulate(ctx, tm[0], tm[1], c.eps).to(dtype)), blk.txt.q_norm,
                          blk.txt.k_norm);
    const at::Tensor a =
        attend(at::cat({qt[0], qi[0]}, 2), at::cat({qt[1], qi[1]}, 2), at::cat({qt[2], qi[2]}, 2));
    x = gatedAdd(x, blk.img.proj(a.narrow(1, l, n)), im[2]);
    ctx = gatedAdd(ctx, blk.txt.proj(a.narrow(1, 0, l)), tm[2]);
    const auto mlp = [&](const Modulated& s, const at::Tensor& h,
                         const std::vector<at::Tensor>& m) {
      return gatedAdd(h, s.mlp2(at::gelu(s.mlp0(modulate(h, m[3], m[4], c.eps).to(dtype)), "tanh")),
                      m[5]);
    };
    x = mlp(blk.img, x, im);
    ctx = mlp(blk.txt, ctx, tm);
  }

  at::Tensor h = at::cat({ctx, x}, 1);
  ctx.reset();
  x.reset();
  for (const SingleBlock& blk : single_) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, blk.group);
    const auto m = chunks(blk.mod(act), 3);
    const at::Tensor lin = blk.linear1(modulate(h, m[0], m[1], c.eps).to(dtype));
    const auto q = heads(lin.narrow(-1, 0, 3 * c.dim), blk.q_norm, blk.k_norm);
    const at::Tensor mlp = at::gelu(lin.narrow(-1, 3 * c.dim, c.mlp_hidden), "tanh");
    h = gatedAdd(h, blk.linear2(at::cat({attend(q[0], q[1], q[2]), mlp}, -1)), m[2]);
  }

  const weights::GroupScope group(params_, head_group_);
  const auto fm = chunks(final_mod(act), 2);  // (shift, scale)
  return final_linear(modulate(h.narrow(1, l, n), fm[0], fm[1], c.eps).to(dtype));
}

int64_t fluxTransformerWorkingBytes(const FluxTransformerConfig& c, int64_t tokens,
                                    int64_t context_tokens, at::ScalarType dtype) {
  const int64_t e = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t s = tokens + context_tokens;
  // The streams (image, text, joined) with their float32 copies, the rotary tables.
  const int64_t fixed = s * c.dim * (2 * e + 4) + 4 * s * c.headDim() * 4 +
                        tokens * (c.in_channels + c.out_channels) * (e + 4);
  // Per block: the modulated norm in float32, q, k, v with their float32 norm and rotary
  // copies, the scores, the attention's result and its re-laid-out copy; the MLP's wide
  // tensors (the single blocks' fused projection and its GELU).
  const int64_t attention = s * c.dim * (8 * e + 8 * 4) + 2 * attentionScoreBytes(c.heads, s, s, e);
  const int64_t mlp = s * (c.dim * (2 * e + 2 * 4) + 3 * c.mlp_hidden * e + 3 * c.dim * e);
  return withSmallTensors(fixed + std::max(attention, mlp));
}

}  // namespace kiln::models
