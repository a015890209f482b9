#include "training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace kiln::starter {

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

double schedule(double peak, int64_t step, int64_t total, int64_t warmup) {
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double p = static_cast<double>(step - warmup) /
                   static_cast<double>(std::max<int64_t>(1, total - warmup));
  return peak * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(std::numbers::pi * p)));
}

models::ClipTextConfig textConfig() {
  models::ClipTextConfig c;
  c.layout = models::ClipLayout::HuggingFace;
  c.vocab = 49408;
  c.hidden = 64;
  c.layers = 3;
  c.heads = 1;  // what detection infers for a 64-wide SD 1.x encoder
  c.intermediate = 256;
  c.max_positions = 77;
  c.act = models::Activation::QuickGelu;
  return c;
}

models::UNetConfig unetConfig(const Options& o) {
  models::UNetConfig c;
  c.in_channels = 4;
  c.out_channels = 4;
  c.model_channels = o.unet_channels;
  c.time_embed_dim = 4 * o.unet_channels;
  c.channel_mult = o.unet_mult;
  c.num_res_blocks = 1;
  const auto levels = o.unet_mult.size();
  c.input_depth.assign(levels, 1);
  c.output_depth.assign(2 * levels, 1);
  if (!o.attention_at_full) {
    c.input_depth.front() = 0;
    c.output_depth[2 * levels - 1] = c.output_depth[2 * levels - 2] = 0;
  }
  c.middle_depth = 1;
  c.context_dim = 64;
  c.num_heads = 8;  // the SD 1.x default detection assumes
  c.num_head_channels = 0;
  return c;
}

models::VaeConfig vaeConfig(const Options& o) {
  models::VaeConfig c;
  c.base_channels = o.vae_channels;
  c.channel_mult = o.vae_mult;  // three levels: 4x downscale, 64x64 pictures, 16x16x4 latents
  c.num_res_blocks = o.vae_res_blocks;
  c.z_channels = 4;
  c.embed_dim = 4;
  c.scaling_factor = kSd1LatentScale;
  return c;
}

void Timer::report(const char* phase, int64_t step, int64_t total, double loss, double lr) {
  const double t = seconds(start);
  const double eta = t / static_cast<double>(step + 1) * static_cast<double>(total - step - 1);
  std::printf("%s %6lld/%lld  loss %.5f  lr %.2e  %6.0f s  (eta %.0f s)\n", phase,
              static_cast<long long>(step + 1), static_cast<long long>(total), loss, lr, t, eta);
  std::fflush(stdout);
}

at::Tensor objectPixels(const at::Tensor& x) {
  const at::Tensor bg = x.narrow(2, 0, 1).narrow(3, 0, 1);
  return ((x - bg).abs().sum(1, true) > 0.1).to(at::kFloat);
}

}  // namespace kiln::starter
