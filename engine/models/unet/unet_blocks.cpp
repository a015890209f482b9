#include "models/unet/unet_blocks.h"

namespace kiln::models::unet {

ResBlock::ResBlock(int64_t in_ch, int64_t out_ch, int64_t emb_dim)
    : in(in_ch),
      out(out_ch),
      norm1(32, in_ch, 1e-5),
      norm2(32, out_ch, 1e-5),
      conv1(in_ch, out_ch, 3, 1, 1),
      conv2(out_ch, out_ch, 3, 1, 1),
      skip(in_ch, out_ch, 1),
      emb_proj(emb_dim, out_ch) {}

void ResBlock::declare(weights::ParamList& p, const std::string& prefix) {
  norm1.declare(p, prefix + "in_layers.0.");
  conv1.declare(p, prefix + "in_layers.2.");
  emb_proj.declare(p, prefix + "emb_layers.1.");
  norm2.declare(p, prefix + "out_layers.0.");
  conv2.declare(p, prefix + "out_layers.3.");
  if (in != out) skip.declare(p, prefix + "skip_connection.");
}

at::Tensor ResBlock::operator()(const at::Tensor& x, const at::Tensor& emb) const {
  at::Tensor h = conv1(at::silu(norm1(x)));
  h = h + emb_proj(at::silu(emb)).unsqueeze(-1).unsqueeze(-1);
  h = conv2(at::silu(norm2(h)));
  return (in != out ? skip(x) : x) + h;
}

CrossAttention::CrossAttention(int64_t dim, int64_t context_dim, int64_t h)
    : heads(h),
      to_q(dim, dim, Bias::Without),
      to_k(context_dim, dim, Bias::Without),
      to_v(context_dim, dim, Bias::Without),
      to_out(dim, dim) {}

void CrossAttention::declare(weights::ParamList& p, const std::string& prefix) {
  to_q.declare(p, prefix + "to_q.");
  to_k.declare(p, prefix + "to_k.");
  to_v.declare(p, prefix + "to_v.");
  to_out.declare(p, prefix + "to_out.0.");
}

at::Tensor CrossAttention::operator()(const at::Tensor& x, const at::Tensor& context) const {
  const at::Tensor& ctx = context.defined() ? context : x;
  return to_out(multiHeadAttention(to_q(x), to_k(ctx), to_v(ctx), heads));
}

TransformerBlock::TransformerBlock(int64_t dim, int64_t context_dim, int64_t heads)
    : norm1(dim, 1e-5),
      norm2(dim, 1e-5),
      norm3(dim, 1e-5),
      attn1(dim, dim, heads),
      attn2(dim, context_dim, heads),
      ff_in(dim, dim * 8),
      ff_out(dim * 4, dim) {}

void TransformerBlock::declare(weights::ParamList& p, const std::string& prefix) {
  attn1.declare(p, prefix + "attn1.");
  ff_in.declare(p, prefix + "ff.net.0.proj.");
  ff_out.declare(p, prefix + "ff.net.2.");
  attn2.declare(p, prefix + "attn2.");
  norm1.declare(p, prefix + "norm1.");
  norm2.declare(p, prefix + "norm2.");
  norm3.declare(p, prefix + "norm3.");
}

at::Tensor TransformerBlock::operator()(const at::Tensor& x0, const at::Tensor& context) const {
  at::Tensor x = x0 + attn1(norm1(x0), at::Tensor());
  x = x + attn2(norm2(x), context);
  auto parts = ff_in(norm3(x)).chunk(2, -1);
  return x + ff_out(parts[0] * at::gelu(parts[1]));
}

SpatialTransformer::SpatialTransformer(int64_t ch, int64_t depth, int64_t context_dim,
                                       int64_t heads, bool linear_projection)
    : channels(ch),
      linear(linear_projection),
      norm(32, ch, 1e-6),
      proj_in_conv(ch, ch, 1),
      proj_out_conv(ch, ch, 1),
      proj_in_linear(ch, ch),
      proj_out_linear(ch, ch) {
  for (int64_t i = 0; i < depth; ++i) blocks.emplace_back(ch, context_dim, heads);
}

void SpatialTransformer::declare(weights::ParamList& p, const std::string& prefix) {
  norm.declare(p, prefix + "norm.");
  if (linear) {
    proj_in_linear.declare(p, prefix + "proj_in.");
    proj_out_linear.declare(p, prefix + "proj_out.");
  } else {
    proj_in_conv.declare(p, prefix + "proj_in.");
    proj_out_conv.declare(p, prefix + "proj_out.");
  }
  for (std::size_t i = 0; i < blocks.size(); ++i)
    blocks[i].declare(p, prefix + "transformer_blocks." + std::to_string(i) + ".");
}

at::Tensor SpatialTransformer::operator()(const at::Tensor& x, const at::Tensor& context) const {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  at::Tensor t = norm(x);
  auto toTokens = [&](const at::Tensor& img) {
    return img.permute({0, 2, 3, 1}).reshape({b, h * w, c});
  };
  auto toImage = [&](const at::Tensor& tok) {
    return tok.reshape({b, h, w, c}).permute({0, 3, 1, 2}).contiguous();
  };
  t = linear ? proj_in_linear(toTokens(t)) : toTokens(proj_in_conv(t));
  for (const auto& block : blocks) t = block(t, context);
  t = linear ? toImage(proj_out_linear(t)) : proj_out_conv(toImage(t));
  return t + x;
}

}  // namespace kiln::models::unet
