#include "models/wan/wan_transformer.h"

#include <algorithm>
#include <cmath>

#include "core/interrupt.h"
#include "core/torch_compat.h"
#include "kiln/error.h"
#include "models/common/working_memory.h"

namespace kiln::models {
namespace {

// Layer norm without affine parameters, in float32.
at::Tensor plainLayerNorm(const at::Tensor& x, int64_t dim, double eps) {
  return at::layer_norm(x.to(at::kFloat), {dim}, {}, {}, eps);
}

}  // namespace

WanTransformerConfig WanTransformerConfig::detect(const tensor_io::TensorIndex& index,
                                                  const std::string& prefix, int64_t heads) {
  WanTransformerConfig c;
  const auto& pe = index.shape(prefix + "patch_embedding.weight");
  if (pe.size() != 5)
    throw Error(ErrorKind::UnsupportedModel,
                "Wan transformer: patch_embedding.weight is not a 3D convolution");
  c.dim = pe[0];
  c.in_channels = pe[1];
  c.patch = {pe[2], pe[3], pe[4]};
  c.ffn_dim = index.shape(prefix + "blocks.0.ffn.0.weight").at(0);
  c.text_dim = index.shape(prefix + "text_embedding.0.weight").at(1);
  c.freq_dim = index.shape(prefix + "time_embedding.0.weight").at(1);
  const int64_t patch_volume = c.patch[0] * c.patch[1] * c.patch[2];
  if (patch_volume <= 0 || c.dim <= 0 || c.in_channels <= 0)
    throw Error(
        ErrorKind::CorruptFile,
        "Wan transformer: patch_embedding.weight has an empty dimension; the file is damaged");
  c.out_channels = index.shape(prefix + "head.head.weight").at(0) / patch_volume;
  c.layers = 0;
  while (index.contains(prefix + "blocks." + std::to_string(c.layers) + ".self_attn.q.weight"))
    ++c.layers;
  c.cross_attn_norm = index.contains(prefix + "blocks.0.norm3.weight");
  c.heads = heads > 0 ? heads : c.dim / 128;
  if (c.heads <= 0 || c.dim % c.heads != 0 || c.headDim() % 2 != 0)
    throw Error(ErrorKind::UnsupportedModel,
                "Wan transformer: width " + std::to_string(c.dim) + " does not split into " +
                    std::to_string(c.heads) +
                    " heads; give num_heads in a configuration file beside the model");
  return c;
}

std::pair<at::Tensor, at::Tensor> wanRopeAngles(int64_t frames, int64_t height, int64_t width,
                                                int64_t head_dim, double theta) {
  const int64_t hw_dim = 2 * (head_dim / 6), t_dim = head_dim - 2 * hw_dim;
  // In float64 on the host as the reference builds them; the caller moves them once.
  const auto opts = at::TensorOptions().dtype(at::kDouble).device(at::kCPU);
  const auto axis = [&](int64_t count, int64_t axis_dim) {
    const at::Tensor freqs =
        1.0 / at::pow(theta, at::arange(0, axis_dim, 2, opts) / static_cast<double>(axis_dim));
    return at::outer(at::arange(count, opts), freqs);  // [count, axis_dim / 2]
  };
  const at::Tensor ft = axis(frames, t_dim), fh = axis(height, hw_dim), fw = axis(width, hw_dim);
  const at::Tensor angles =
      at::cat({ft.view({frames, 1, 1, -1}).expand({frames, height, width, ft.size(1)}),
               fh.view({1, height, 1, -1}).expand({frames, height, width, fh.size(1)}),
               fw.view({1, 1, width, -1}).expand({frames, height, width, fw.size(1)})},
              -1)
          .reshape({frames * height * width, head_dim / 2});
  return {at::cos(angles).to(at::kFloat), at::sin(angles).to(at::kFloat)};
}

WanTransformer::WanTransformer(const WanTransformerConfig& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {
  const auto& c = config_;
  const int64_t d = c.dim;
  params_.beginGroup("embeddings");
  params_.add(prefix_ + "patch_embedding.weight",
              {d, c.in_channels, c.patch[0], c.patch[1], c.patch[2]}, &patch_weight,
              weights::ParamList::Kind::Leaf);
  params_.add(prefix_ + "patch_embedding.bias", {d}, &patch_bias, weights::ParamList::Kind::Leaf);
  text0 = Linear(c.text_dim, d);
  text2 = Linear(d, d);
  time0 = Linear(c.freq_dim, d);
  time2 = Linear(d, d);
  time_proj = Linear(d, 6 * d);
  text0.declare(params_, prefix_ + "text_embedding.0.");
  text2.declare(params_, prefix_ + "text_embedding.2.");
  time0.declare(params_, prefix_ + "time_embedding.0.");
  time2.declare(params_, prefix_ + "time_embedding.2.");
  time_proj.declare(params_, prefix_ + "time_projection.1.");
  blocks_.resize(static_cast<std::size_t>(c.layers));
  for (int64_t i = 0; i < c.layers; ++i) {
    Block& b = blocks_[static_cast<std::size_t>(i)];
    const std::string p = prefix_ + "blocks." + std::to_string(i) + ".";
    b.group = params_.beginGroup("block " + std::to_string(i));
    params_.add(p + "modulation", {1, 6, d}, &b.modulation);
    for (auto [a, name] :
         {std::pair{&b.self_attn, "self_attn."}, std::pair{&b.cross_attn, "cross_attn."}}) {
      a->q = Linear(d, d);
      a->k = Linear(d, d);
      a->v = Linear(d, d);
      a->o = Linear(d, d);
      a->q.declare(params_, p + name + "q.");
      a->k.declare(params_, p + name + "k.");
      a->v.declare(params_, p + name + "v.");
      a->o.declare(params_, p + name + "o.");
      params_.add(p + name + "norm_q.weight", {d}, &a->norm_q, weights::ParamList::Kind::Leaf);
      params_.add(p + name + "norm_k.weight", {d}, &a->norm_k, weights::ParamList::Kind::Leaf);
    }
    if (c.cross_attn_norm) {
      b.norm3 = LayerNorm(d, c.eps);
      b.norm3.declare(params_, p + "norm3.");
    }
    b.ffn0 = Linear(d, c.ffn_dim);
    b.ffn2 = Linear(c.ffn_dim, d);
    b.ffn0.declare(params_, p + "ffn.0.");
    b.ffn2.declare(params_, p + "ffn.2.");
  }
  head_group_ = params_.beginGroup("head");
  head = Linear(d, c.out_channels * c.patch[0] * c.patch[1] * c.patch[2]);
  head.declare(params_, prefix_ + "head.head.");
  params_.add(prefix_ + "head.modulation", {1, 2, d}, &head_modulation);
  params_.endGroup();
}

at::Tensor WanTransformer::attend(const Attention& a, const at::Tensor& x,
                                  const at::Tensor& context, const at::Tensor* cos,
                                  const at::Tensor* sin) const {
  const int64_t heads = config_.heads, hd = config_.headDim();
  const at::Tensor& kv_in = context.defined() ? context : x;
  const auto split = [&](const at::Tensor& t) {
    return t.unflatten(-1, {heads, hd}).transpose(1, 2);
  };
  at::Tensor q = split(rmsNormGain(a.q(x), a.norm_q, config_.eps));
  at::Tensor k = split(rmsNormGain(a.k(kv_in), a.norm_k, config_.eps));
  const at::Tensor v = split(a.v(kv_in));
  if (cos) {
    q = rotatePairs(q, *cos, *sin);
    k = rotatePairs(k, *cos, *sin);
  }
  const at::Tensor out =
      core::scaledDotProductAttention(q, k, v, {}, 1.0 / std::sqrt(static_cast<double>(hd)));
  return a.o(out.transpose(1, 2).flatten(2));
}

at::Tensor WanTransformer::forward(const at::Tensor& latent, const at::Tensor& timestep,
                                   const at::Tensor& context) const {
  const auto& c = config_;
  if (latent.dim() != 5 || latent.size(1) != c.in_channels)
    throw Error(ErrorKind::ShapeMismatch, "Wan transformer input must be [batch, " +
                                              std::to_string(c.in_channels) +
                                              ", frames, height, width]");
  const int64_t b = latent.size(0);
  if (latent.size(2) % c.patch[0] != 0 || latent.size(3) % c.patch[1] != 0 ||
      latent.size(4) % c.patch[2] != 0)
    throw Error(ErrorKind::ShapeMismatch,
                "Wan transformer input frames/height/width must be multiples of the patch " +
                    std::to_string(c.patch[0]) + "x" + std::to_string(c.patch[1]) + "x" +
                    std::to_string(c.patch[2]));
  if (context.dim() != 3 || context.size(0) != b || context.size(2) != c.text_dim)
    throw Error(ErrorKind::ShapeMismatch, "Wan transformer context must be [batch, tokens, " +
                                              std::to_string(c.text_dim) + "]");
  if (timestep.numel() != b)
    throw Error(ErrorKind::ShapeMismatch, "Wan transformer needs one timestep per batch row");
  const int64_t f = latent.size(2) / c.patch[0], h = latent.size(3) / c.patch[1],
                w = latent.size(4) / c.patch[2];
  const weights::CallScope call(params_);
  const at::ScalarType dtype = patch_weight.scalar_type();
  const auto dev = patch_weight.device();

  at::Tensor x, temb, e0, ctx;
  {
    const weights::GroupScope group(params_, 0);
    {
      weights::LeafScope leaf(&patch_weight, &patch_bias);
      x = at::conv3d(latent.to(dev, dtype), patch_weight, patch_bias,
                     {c.patch[0], c.patch[1], c.patch[2]});
    }
    x = x.flatten(2).transpose(1, 2);  // [B, S, D], tokens in (f, h, w) order
    const at::Tensor sinus = timestepEmbedding(timestep.reshape({b}).to(dev), c.freq_dim).to(dtype);
    temb = time2(at::silu(time0(sinus)));
    e0 = time_proj(at::silu(temb)).unflatten(1, {6, c.dim}).to(at::kFloat);
    ctx = text2(at::gelu(text0(context.to(dev, dtype)), "tanh"));
  }
  const auto [cos, sin] = wanRopeAngles(f, h, w, c.headDim(), c.rope_theta);
  const at::Tensor cos_d = cos.to(dev), sin_d = sin.to(dev);

  for (const Block& blk : blocks_) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, blk.group);
    const auto mod = (blk.modulation.to(at::kFloat) + e0).chunk(6, 1);  // each [B, 1, D]
    at::Tensor y = (plainLayerNorm(x, c.dim, c.eps) * (1 + mod[1]) + mod[0]).to(dtype);
    x = (x.to(at::kFloat) + attend(blk.self_attn, y, {}, &cos_d, &sin_d).to(at::kFloat) * mod[2])
            .to(dtype);
    if (c.cross_attn_norm) {
      weights::LeafScope leaf(&blk.norm3.weight, &blk.norm3.bias);
      y = at::layer_norm(x.to(at::kFloat), {c.dim}, blk.norm3.weight.to(at::kFloat),
                         blk.norm3.bias.to(at::kFloat), c.eps)
              .to(dtype);
    } else {
      y = x;
    }
    x = x + attend(blk.cross_attn, y, ctx, nullptr, nullptr);
    y = (plainLayerNorm(x, c.dim, c.eps) * (1 + mod[4]) + mod[3]).to(dtype);
    const at::Tensor ff = blk.ffn2(at::gelu(blk.ffn0(y), "tanh"));
    x = (x.to(at::kFloat) + ff.to(at::kFloat) * mod[5]).to(dtype);
  }

  const weights::GroupScope group(params_, head_group_);
  const auto mod = (head_modulation.to(at::kFloat) + temb.to(at::kFloat).unsqueeze(1)).chunk(2, 1);
  const at::Tensor y = (plainLayerNorm(x, c.dim, c.eps) * (1 + mod[1]) + mod[0]).to(dtype);
  const at::Tensor out = head(y);  // [B, S, pt*ph*pw*C], the channel fastest
  return out.view({b, f, h, w, c.patch[0], c.patch[1], c.patch[2], c.out_channels})
      .permute({0, 7, 1, 4, 2, 5, 3, 6})
      .reshape({b, c.out_channels, f * c.patch[0], h * c.patch[1], w * c.patch[2]});
}

int64_t wanTransformerWorkingBytes(const WanTransformerConfig& c, int64_t frames, int64_t height,
                                   int64_t width, int64_t context_tokens, at::ScalarType dtype) {
  const int64_t e = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t tokens = (frames / c.patch[0]) * (height / c.patch[1]) * (width / c.patch[2]);
  // The latent in float32 and the compute dtype, the text projection, the rotary tables
  // (on the host and the device).
  const int64_t fixed = 2 * c.in_channels * frames * height * width * (4 + e) +
                        context_tokens * (c.text_dim + 2 * c.dim) * e +
                        4 * tokens * c.headDim() * 4;
  // Per block: x, the modulated norm (float32 on the way), q, k, v with their float32 norm
  // and rotary copies, the attention's result, its re-laid-out copy and the output with
  // its float32 copies in the residual sum; or the feed-forward's two wide tensors.
  const int64_t attention = tokens * c.dim * (12 * e + 6 * 4) +
                            2 * std::max(attentionScoreBytes(c.heads, tokens, tokens, e),
                                         attentionScoreBytes(c.heads, tokens, context_tokens, e));
  const int64_t feed_forward = tokens * (c.dim * (3 * e + 4 * 4) + 2 * c.ffn_dim * e);
  const int64_t result = c.out_channels * frames * height * width * (2 * e + 4);
  return withSmallTensors(fixed + std::max({attention, feed_forward, result}));
}

}  // namespace kiln::models
