#include "models/unet/unet.h"

#include <optional>

#include "core/interrupt.h"
#include "kiln/error.h"
#include "models/unet/unet_blocks.h"

namespace kiln::models {

using unet::ResBlock;
using unet::SpatialTransformer;

struct UNetModel::Impl {
  struct Block {
    std::optional<ResBlock> res;
    std::optional<SpatialTransformer> attn;
    std::optional<Conv2d> conv;  // conv_in, downsampler or upsampler conv
    bool upsample = false;
  };
  Linear time1, time2, label1, label2;
  std::vector<Block> input, output;
  // Weight groups, in the order forward uses them: embeddings, input blocks, middle,
  // output blocks, out.
  std::size_t embed_group = 0, middle_group = 0, out_group = 0;
  std::vector<std::size_t> input_groups, output_groups;
  Block middle_a, middle_b;
  SpatialTransformer middle_attn;
  GroupNorm out_norm;
  Conv2d out_conv;

  at::Tensor runBlock(const Block& b, at::Tensor h, const at::Tensor& emb, const at::Tensor& ctx,
                      const at::Tensor* upsample_like) const {
    if (b.res) h = (*b.res)(h, emb);
    if (b.attn) h = (*b.attn)(h, ctx);
    if (b.conv) {
      if (b.upsample) {
        const std::vector<int64_t> size =
            upsample_like ? std::vector<int64_t>{upsample_like->size(2), upsample_like->size(3)}
                          : std::vector<int64_t>{h.size(2) * 2, h.size(3) * 2};
        h = at::upsample_nearest2d(h, size);
      }
      h = (*b.conv)(h);
    }
    return h;
  }
};

UNetModel::UNetModel(const UNetConfig& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)), impl_(std::make_unique<Impl>()) {
  const auto& c = config_;
  Impl& m = *impl_;
  const int64_t mc = c.model_channels, ted = c.time_embed_dim;
  m.time1 = Linear(mc, ted);
  m.time2 = Linear(ted, ted);
  m.embed_group = params_.beginGroup("time_embed");
  m.time1.declare(params_, prefix_ + "time_embed.0.");
  m.time2.declare(params_, prefix_ + "time_embed.2.");
  if (c.adm_in_channels > 0) {
    m.label1 = Linear(c.adm_in_channels, ted);
    m.label2 = Linear(ted, ted);
    m.label1.declare(params_, prefix_ + "label_emb.0.0.");
    m.label2.declare(params_, prefix_ + "label_emb.0.2.");
  }

  // Structure first (vectors must not reallocate once parameters are declared).
  std::vector<int64_t> skip_channels{mc};
  m.input.resize(1);
  m.input[0].conv = Conv2d(c.in_channels, mc, 3, 1, 1);
  int64_t ch = mc;
  std::size_t depth_i = 0;
  for (int64_t level = 0; level < c.levels(); ++level) {
    const int64_t out_ch = mc * c.channel_mult[static_cast<std::size_t>(level)];
    for (int64_t j = 0; j < c.num_res_blocks; ++j) {
      Impl::Block b;
      b.res = ResBlock(ch, out_ch, ted);
      ch = out_ch;
      if (const int64_t d = c.input_depth.at(depth_i++); d > 0)
        b.attn =
            SpatialTransformer(ch, d, c.context_dim, c.headsFor(level, ch), c.linear_projection);
      m.input.push_back(std::move(b));
      skip_channels.push_back(ch);
    }
    if (level + 1 < c.levels()) {
      Impl::Block b;
      b.conv = Conv2d(ch, ch, 3, 2, 1);
      m.input.push_back(std::move(b));
      skip_channels.push_back(ch);
    }
  }
  m.middle_a.res = ResBlock(ch, ch, ted);
  if (c.middle_depth > 0)
    m.middle_attn = SpatialTransformer(ch, c.middle_depth, c.context_dim,
                                       c.headsFor(c.levels() - 1, ch), c.linear_projection);
  m.middle_b.res = ResBlock(ch, ch, ted);
  std::size_t depth_o = 0;
  for (int64_t level = c.levels() - 1; level >= 0; --level) {
    const int64_t out_ch = mc * c.channel_mult[static_cast<std::size_t>(level)];
    for (int64_t i = 0; i <= c.num_res_blocks; ++i) {
      Impl::Block b;
      b.res = ResBlock(ch + skip_channels.back(), out_ch, ted);
      skip_channels.pop_back();
      ch = out_ch;
      if (const int64_t d = c.output_depth.at(depth_o++); d > 0)
        b.attn =
            SpatialTransformer(ch, d, c.context_dim, c.headsFor(level, ch), c.linear_projection);
      if (level > 0 && i == c.num_res_blocks) {
        b.conv = Conv2d(ch, ch, 3, 1, 1);
        b.upsample = true;
      }
      m.output.push_back(std::move(b));
    }
  }
  m.out_norm = GroupNorm(32, ch, 1e-5);
  m.out_conv = Conv2d(ch, c.out_channels, 3, 1, 1);

  // Then parameters, under the original keys.
  auto declareBlock = [&](Impl::Block& b, const std::string& p) {
    if (b.res) b.res->declare(params_, p + "0.");
    if (b.attn) b.attn->declare(params_, p + "1.");
    if (b.conv) {
      const std::string conv_name =
          b.upsample ? (b.attn ? "2.conv." : "1.conv.") : (b.res ? "" : "0.op.");
      b.conv->declare(params_, p + conv_name);
    }
  };
  for (std::size_t k = 0; k < m.input.size(); ++k) {
    const std::string p = prefix_ + "input_blocks." + std::to_string(k) + ".";
    m.input_groups.push_back(params_.beginGroup("input_blocks." + std::to_string(k)));
    if (k == 0)
      m.input[0].conv->declare(params_, p + "0.");
    else
      declareBlock(m.input[k], p);
  }
  m.middle_group = params_.beginGroup("middle_block");
  m.middle_a.res->declare(params_, prefix_ + "middle_block.0.");
  if (c.middle_depth > 0) m.middle_attn.declare(params_, prefix_ + "middle_block.1.");
  m.middle_b.res->declare(params_, prefix_ + "middle_block." + (c.middle_depth > 0 ? "2." : "1."));
  for (std::size_t k = 0; k < m.output.size(); ++k) {
    m.output_groups.push_back(params_.beginGroup("output_blocks." + std::to_string(k)));
    declareBlock(m.output[k], prefix_ + "output_blocks." + std::to_string(k) + ".");
  }
  m.out_group = params_.beginGroup("out");
  m.out_norm.declare(params_, prefix_ + "out.0.");
  m.out_conv.declare(params_, prefix_ + "out.2.");
  params_.endGroup();
}

UNetModel::~UNetModel() = default;
UNetModel::UNetModel(UNetModel&&) noexcept = default;
UNetModel& UNetModel::operator=(UNetModel&&) noexcept = default;

at::Tensor UNetModel::timeIdConditioning(const at::Tensor& pooled,
                                         const at::Tensor& time_ids) const {
  const int64_t b = time_ids.size(0);
  at::Tensor emb =
      timestepEmbedding(time_ids.reshape({-1}), config_.time_id_embed_dim).reshape({b, -1});
  return at::cat({pooled, emb.to(pooled.scalar_type())}, -1);
}

at::Tensor UNetModel::forward(const UNetInputs& in) const {
  const Impl& m = *impl_;
  const weights::CallScope call(params_);
  const auto dtype = m.time1.weight.scalar_type();
  at::Tensor t = in.timesteps.reshape({-1});
  if (t.size(0) == 1 && in.latent.size(0) > 1) t = t.expand({in.latent.size(0)});
  at::Tensor emb;
  {
    const weights::GroupScope group(params_, m.embed_group);
    emb = m.time2(at::silu(m.time1(timestepEmbedding(t, config_.model_channels).to(dtype))));
    if (config_.adm_in_channels > 0) {
      if (!in.y.defined() || in.y.size(-1) != config_.adm_in_channels)
        throw Error(ErrorKind::InvalidArgument, "this UNet needs a " +
                                                    std::to_string(config_.adm_in_channels) +
                                                    "-wide pooled/time-id conditioning vector");
      emb = emb + m.label2(at::silu(m.label1(in.y.to(dtype))));
    }
  }
  const at::Tensor ctx = in.context.to(dtype);

  std::vector<at::Tensor> skips;
  at::Tensor h;
  {
    const weights::GroupScope group(params_, m.input_groups[0]);
    h = (*m.input[0].conv)(in.latent.to(dtype));
  }
  skips.push_back(h);
  for (std::size_t k = 1; k < m.input.size(); ++k) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, m.input_groups[k]);
    h = m.runBlock(m.input[k], h, emb, ctx, nullptr);
    skips.push_back(h);
  }
  core::checkInterrupt();
  {
    const weights::GroupScope group(params_, m.middle_group);
    h = (*m.middle_a.res)(h, emb);
    if (config_.middle_depth > 0) h = m.middle_attn(h, ctx);
    h = (*m.middle_b.res)(h, emb);
  }
  for (std::size_t k = 0; k < m.output.size(); ++k) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, m.output_groups[k]);
    h = at::cat({h, skips.back()}, 1);
    skips.pop_back();
    h = m.runBlock(m.output[k], h, emb, ctx, skips.empty() ? nullptr : &skips.back());
  }
  const weights::GroupScope group(params_, m.out_group);
  return m.out_conv(at::silu(m.out_norm(h)));
}

}  // namespace kiln::models
