#include "models/vae/autoencoder_kl.h"

#include <cmath>
#include <optional>

#include "core/interrupt.h"
#include "kiln/error.h"

namespace kiln::models {
namespace {

constexpr double kVaeEps = 1e-6;

struct ResnetBlock {
  int64_t in = 0, out = 0;
  GroupNorm norm1, norm2;
  Conv2d conv1, conv2, shortcut;

  ResnetBlock(int64_t i, int64_t o)
      : in(i),
        out(o),
        norm1(32, i, kVaeEps),
        norm2(32, o, kVaeEps),
        conv1(i, o, 3, 1, 1),
        conv2(o, o, 3, 1, 1),
        shortcut(i, o, 1) {}
  void declare(weights::ParamList& p, const std::string& prefix) {
    norm1.declare(p, prefix + "norm1.");
    conv1.declare(p, prefix + "conv1.");
    norm2.declare(p, prefix + "norm2.");
    conv2.declare(p, prefix + "conv2.");
    if (in != out) shortcut.declare(p, prefix + "nin_shortcut.");
  }
  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor h = conv1(at::silu(norm1(x)));
    h = conv2(at::silu(norm2(h)));
    return (in != out ? shortcut(x) : x) + h;
  }
};

// Single-head self-attention over all pixels, with 1x1-conv projections.
struct AttnBlock {
  int64_t channels = 0;
  GroupNorm norm;
  Conv2d q, k, v, proj_out;

  explicit AttnBlock(int64_t c)
      : channels(c), norm(32, c, kVaeEps), q(c, c, 1), k(c, c, 1), v(c, c, 1), proj_out(c, c, 1) {}
  void declare(weights::ParamList& p, const std::string& prefix) {
    norm.declare(p, prefix + "norm.");
    q.declare(p, prefix + "q.");
    k.declare(p, prefix + "k.");
    v.declare(p, prefix + "v.");
    proj_out.declare(p, prefix + "proj_out.");
  }
  at::Tensor operator()(const at::Tensor& x) const {
    const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const at::Tensor n = norm(x);
    auto tokens = [&](const at::Tensor& t) { return t.reshape({b, c, h * w}).transpose(1, 2); };
    at::Tensor out = multiHeadAttention(tokens(q(n)), tokens(k(n)), tokens(v(n)), 1);
    out = out.transpose(1, 2).reshape({b, c, h, w});
    return x + proj_out(out);
  }
};

struct Level {
  std::vector<ResnetBlock> blocks;
  std::optional<Conv2d> resample;  // downsample (stride 2, asymmetric pad) or upsample conv
};

struct Mid {
  std::optional<ResnetBlock> block_1, block_2;
  std::optional<AttnBlock> attn_1;

  void build(int64_t ch) {
    block_1.emplace(ch, ch);
    attn_1.emplace(ch);
    block_2.emplace(ch, ch);
  }
  void declare(weights::ParamList& p, const std::string& prefix) {
    block_1->declare(p, prefix + "block_1.");
    attn_1->declare(p, prefix + "attn_1.");
    block_2->declare(p, prefix + "block_2.");
  }
  at::Tensor operator()(const at::Tensor& x) const { return (*block_2)((*attn_1)((*block_1)(x))); }
};

}  // namespace

struct AutoencoderKL::Impl {
  Conv2d enc_conv_in, enc_conv_out, dec_conv_in, dec_conv_out, quant_conv, post_quant_conv;
  std::vector<Level> down, up;  // up[i] is decoder.up.i (applied in reverse order)
  Mid enc_mid, dec_mid;
  GroupNorm enc_norm_out, dec_norm_out;
};

AutoencoderKL::AutoencoderKL(const VaeConfig& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)), impl_(std::make_unique<Impl>()) {
  const auto& c = config_;
  Impl& m = *impl_;
  const auto levels = static_cast<int64_t>(c.channel_mult.size());
  const auto chAt = [&](int64_t i) {
    return c.base_channels * c.channel_mult[static_cast<std::size_t>(i)];
  };

  m.enc_conv_in = Conv2d(c.in_channels, c.base_channels, 3, 1, 1);
  int64_t ch = c.base_channels;
  m.down.resize(static_cast<std::size_t>(levels));
  for (int64_t i = 0; i < levels; ++i) {
    Level& l = m.down[static_cast<std::size_t>(i)];
    for (int64_t j = 0; j < c.num_res_blocks; ++j) {
      l.blocks.emplace_back(ch, chAt(i));
      ch = chAt(i);
    }
    if (i + 1 < levels) l.resample = Conv2d(ch, ch, 3, 2, 0);
  }
  m.enc_mid.build(ch);
  m.enc_norm_out = GroupNorm(32, ch, kVaeEps);
  m.enc_conv_out = Conv2d(ch, 2 * c.z_channels, 3, 1, 1);
  m.quant_conv = Conv2d(2 * c.z_channels, 2 * c.embed_dim, 1);

  m.post_quant_conv = Conv2d(c.embed_dim, c.z_channels, 1);
  ch = chAt(levels - 1);
  m.dec_conv_in = Conv2d(c.z_channels, ch, 3, 1, 1);
  m.dec_mid.build(ch);
  m.up.resize(static_cast<std::size_t>(levels));
  for (int64_t i = levels - 1; i >= 0; --i) {
    Level& l = m.up[static_cast<std::size_t>(i)];
    for (int64_t j = 0; j <= c.num_res_blocks; ++j) {
      l.blocks.emplace_back(ch, chAt(i));
      ch = chAt(i);
    }
    if (i > 0) l.resample = Conv2d(ch, ch, 3, 1, 1);
  }
  m.dec_norm_out = GroupNorm(32, ch, kVaeEps);
  m.dec_conv_out = Conv2d(ch, c.out_channels, 3, 1, 1);

  const std::string& p = prefix_;
  // encoder.down.N.{block.M, downsample.conv} / decoder.up.N.{block.M, upsample.conv}
  const auto declareLevels = [&](std::vector<Level>& level_list, const std::string& path,
                                 const char* resample_name) {
    for (std::size_t i = 0; i < level_list.size(); ++i) {
      Level& l = level_list[i];
      const std::string lp = path + std::to_string(i) + ".";
      for (std::size_t j = 0; j < l.blocks.size(); ++j)
        l.blocks[j].declare(params_, lp + "block." + std::to_string(j) + ".");
      if (l.resample) l.resample->declare(params_, lp + resample_name);
    }
  };
  m.enc_conv_in.declare(params_, p + "encoder.conv_in.");
  declareLevels(m.down, p + "encoder.down.", "downsample.conv.");
  m.enc_mid.declare(params_, p + "encoder.mid.");
  m.enc_norm_out.declare(params_, p + "encoder.norm_out.");
  m.enc_conv_out.declare(params_, p + "encoder.conv_out.");
  if (c.quant_convs) {
    m.quant_conv.declare(params_, p + "quant_conv.");
    m.post_quant_conv.declare(params_, p + "post_quant_conv.");
  }
  m.dec_conv_in.declare(params_, p + "decoder.conv_in.");
  m.dec_mid.declare(params_, p + "decoder.mid.");
  declareLevels(m.up, p + "decoder.up.", "upsample.conv.");
  m.dec_norm_out.declare(params_, p + "decoder.norm_out.");
  m.dec_conv_out.declare(params_, p + "decoder.conv_out.");
}

AutoencoderKL::~AutoencoderKL() = default;
AutoencoderKL::AutoencoderKL(AutoencoderKL&&) noexcept = default;
AutoencoderKL& AutoencoderKL::operator=(AutoencoderKL&&) noexcept = default;

at::Tensor AutoencoderKL::decode(const at::Tensor& z) const {
  const Impl& m = *impl_;
  const weights::CallScope call(params_);
  at::Tensor h = z.to(m.dec_conv_in.weight.scalar_type());
  if (config_.quant_convs) h = m.post_quant_conv(h);
  core::checkInterrupt();
  h = m.dec_mid(m.dec_conv_in(h));
  for (auto it = m.up.rbegin(); it != m.up.rend(); ++it) {
    for (const auto& block : it->blocks) {
      core::checkInterrupt();
      h = block(h);
    }
    if (it->resample)
      h = (*it->resample)(at::upsample_nearest2d(h, {h.size(2) * 2, h.size(3) * 2}));
  }
  return m.dec_conv_out(at::silu(m.dec_norm_out(h)));
}

at::Tensor AutoencoderKL::encodeMoments(const at::Tensor& image) const {
  const Impl& m = *impl_;
  const weights::CallScope call(params_);
  at::Tensor h = m.enc_conv_in(image.to(m.enc_conv_in.weight.scalar_type()));
  for (const auto& level : m.down) {
    for (const auto& block : level.blocks) {
      core::checkInterrupt();
      h = block(h);
    }
    if (level.resample) h = (*level.resample)(at::constant_pad_nd(h, {0, 1, 0, 1}, 0));
  }
  core::checkInterrupt();
  h = m.enc_conv_out(at::silu(m.enc_norm_out(m.enc_mid(h))));
  return config_.quant_convs ? m.quant_conv(h) : h;
}

LatentMoments AutoencoderKL::encode(const at::Tensor& image) const {
  auto parts = encodeMoments(image).chunk(2, 1);
  LatentMoments out;
  out.mean = parts[0];
  out.logvar = at::clamp(parts[1], -30.0, 20.0);
  out.std = at::exp(0.5 * out.logvar);
  return out;
}

}  // namespace kiln::models
