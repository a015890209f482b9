// The training set of the UNet: generated scenes through the VAE.
#include "latent_set.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <QGuiApplication>
#include <QImage>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "core/data_paths.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "loss_plot.h"
#include "models/sd/sd_checkpoint.h"
#include "models/text/clip_text.h"
#include "models/text/clip_tokenizer.h"
#include "models/unet/unet.h"
#include "models/vae/autoencoder_kl.h"
#include "optimizer.h"
#include "scenes.h"
#include "starter_vae_judge.h"
#include "tensor_io/safetensors.h"
#include "training.h"
#include "weights/params.h"

namespace kiln::starter {

namespace {

at::Tensor objectCoverage(const at::Tensor& pictures, int64_t latent_size) {
  const int64_t f = pictures.size(2) / latent_size;
  return at::avg_pool2d(objectPixels(pictures), {f, f}, {f, f});
}

}  // namespace

namespace {

at::Tensor widened(const at::Tensor& coverage) {
  return at::max_pool2d(coverage, {3, 3}, {1, 1}, {1, 1});
}

}  // namespace

LatentSet encodeScenes(const models::AutoencoderKL& vae, const Options& o) {
  at::NoGradGuard no_grad;
  starter::SceneSampler sampler(o.seed * 7 + 3, o.image);
  LatentSet set;
  std::vector<at::Tensor> means, stds, covers;
  Timer timer;
  const int64_t chunk = 250;
  for (int64_t done = 0; done < o.scenes; done += chunk) {
    std::vector<starter::Scene> scenes;
    for (int64_t i = 0; i < std::min(chunk, o.scenes - done); ++i) {
      scenes.push_back(sampler.sampleTraining());
      set.specs.push_back(scenes.back().spec);
    }
    const at::Tensor pictures = testing::scenePictures(scenes, o.image);
    const auto parts = vae.encodeMoments(pictures.to(o.dtype)).to(at::kFloat).chunk(2, 1);
    covers.push_back(objectCoverage(pictures.to(at::kFloat), parts[0].size(2)));
    means.push_back(parts[0] * kSd1LatentScale);
    stds.push_back((0.5 * parts[1].clamp(-30.0, 20.0)).exp() * kSd1LatentScale);
    if ((done / chunk) % 20 == 19)
      std::printf("encoded %lld scenes, %.0f s\n", static_cast<long long>(done + chunk),
                  seconds(timer.start));
  }
  set.mean = at::cat(means);
  set.std = at::cat(stds);
  set.cover = at::cat(covers);
  set.objects = widened(set.cover);
  std::printf(
      "latents: %lld scenes, spread %.3f, mean posterior std %.4f, object coverage %.3f, %.0f s\n",
      static_cast<long long>(set.mean.size(0)), set.mean.std().item<double>(),
      set.std.mean().item<double>(), set.objects.mean().item<double>(), seconds(timer.start));
  return set;
}

// Per-channel statistics of the scaled latents, as "mean/std" for each channel.
std::string channelStats(const at::Tensor& scaled) {
  const at::Tensor m = scaled.mean({0, 2, 3}), sd = scaled.std({0, 2, 3}).contiguous();
  std::string out;
  for (int64_t c = 0; c < scaled.size(1); ++c) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%+.3f/%.3f", c ? "  " : "", m[c].item<double>(),
                  sd[c].item<double>());
    out += buf;
  }
  return out;
}

// Shifts and scales each latent channel so that the scaled latents have zero mean and unit
// spread per channel: the mean rows of quant_conv map to (z - m) * s (log-variance shifted
// by 2 ln s) and post_quant_conv undoes it on its input. The decoded picture is unchanged.
// The encoded set is transformed the same way.
void whitenLatentChannels(models::AutoencoderKL& vae, LatentSet& set) {
  at::NoGradGuard no_grad;
  const at::Tensor mu = set.mean.mean({0, 2, 3}), sd = set.mean.std({0, 2, 3});  // scaled units
  const at::Tensor shift = (mu / kSd1LatentScale).to(at::kDouble);               // unscaled units
  const at::Tensor scale = (1.0 / sd).to(at::kDouble);
  const int64_t e = vae.config().embed_dim;
  for (const auto& slot : vae.params().slots()) {
    at::Tensor& t = *slot.tensor;
    const auto as = [&](const at::Tensor& v, int64_t dims) {
      std::vector<int64_t> shape(static_cast<std::size_t>(dims), 1);
      shape[0] = e;
      return v.to(t.scalar_type()).view(shape);
    };
    if (slot.name == std::string(kVaePrefix) + "quant_conv.weight")
      t.narrow(0, 0, e).mul_(as(scale, t.dim()));
    if (slot.name == std::string(kVaePrefix) + "quant_conv.bias") {
      t.narrow(0, 0, e).sub_(as(shift, 1)).mul_(as(scale, 1));
      t.narrow(0, e, e).add_(as(2.0 * scale.log(), 1));
    }
  }
  // post_quant_conv sees z'/s + shift: its bias takes W * shift before the weight's columns
  // are divided by s.
  at::Tensor* w = nullptr;
  at::Tensor* b = nullptr;
  for (const auto& slot : vae.params().slots()) {
    if (slot.name == std::string(kVaePrefix) + "post_quant_conv.weight") w = slot.tensor;
    if (slot.name == std::string(kVaePrefix) + "post_quant_conv.bias") b = slot.tensor;
  }
  if (!w || !b) throw Error(ErrorKind::Internal, "the VAE has no post_quant_conv");
  const at::Tensor w2 = w->to(at::kDouble).flatten(1);  // [z_channels, e]
  b->add_(w2.matmul(shift).to(b->scalar_type()));
  w->div_(scale.to(w->scalar_type()).view({1, e, 1, 1}));
  set.mean = (set.mean - mu.view({1, e, 1, 1})) / sd.view({1, e, 1, 1});
  set.std = set.std / sd.view({1, e, 1, 1});
}

}  // namespace kiln::starter
