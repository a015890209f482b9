// Training the starter model's VAE on generated pictures of shapes.
#include "vae_training.h"

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

// Objects cover a few percent of a picture: their pixels (anything that differs from the
// corner, which is always background) weigh five times; L1 + L2 on the pixels. With
// `edges`, pictures whose objects are small weigh up to three times as much again (so that
// a small star keeps its points) and L1 on the horizontal and vertical differences, which
// carry the edges and corners that tell shapes apart, is added.
at::Tensor reconstructionLoss(const at::Tensor& recon, const at::Tensor& x, bool edges) {
  const at::Tensor object = objectPixels(x);
  constexpr double kMediumObjectPixels = 330.0;  // a medium circle at 64x64
  const at::Tensor boost = edges
                               ? (kMediumObjectPixels / object.sum({1, 2, 3}, true).clamp_min(1.0))
                                     .clamp(1.0, 9.0)
                                     .sqrt()
                               : at::ones({x.size(0), 1, 1, 1});
  const at::Tensor w = 1.0 + 4.0 * object * boost;
  const at::Tensor d = recon - x;
  const at::Tensor pixel = ((d.abs() + d.pow(2)) * w).sum() / (w.sum() * 3.0);
  if (!edges) return pixel;
  const auto diff = [](const at::Tensor& t, int64_t dim) {
    const int64_t n = t.size(dim) - 1;
    return t.narrow(dim, 1, n) - t.narrow(dim, 0, n);
  };
  const int64_t n = x.size(2) - 1;
  const at::Tensor edge =
      (diff(d, 2).abs() * w.narrow(2, 0, n)).sum() / (w.narrow(2, 0, n).sum() * 3.0) +
      (diff(d, 3).abs() * w.narrow(3, 0, n)).sum() / (w.narrow(3, 0, n).sum() * 3.0);
  return pixel + edge;
}

}  // namespace

// The held-out prompts through the VAE alone, judged: the ceiling it sets on shapes
// (tests/support/starter_vae_judge.h).
void reportVaeReconstructions(const models::AutoencoderKL& vae, const Options& o,
                              const std::string& when) {
  const testing::StarterRates r = testing::judgeVaeReconstructions(vae, o.image, o.dtype);
  std::printf(
      "     VAE reconstructions of held-out prompts (%s): colour %.1f%%, position %.1f%%, shape "
      "%.1f%% "
      "(small %.1f%%), count %.1f%%\n",
      when.c_str(), 100 * r.colourRate(), 100 * r.positionRate(), 100 * r.shapeRate(),
      100 * r.smallShapeRate(), 100 * r.countRate());
  std::fflush(stdout);
}

std::vector<double> trainVae(models::AutoencoderKL& vae, const Options& o) {
  starter::AdamW opt({&vae.params()}, {o.vae_lr, 0.9, 0.999, 1e-8, 0.0, 1.0});
  starter::SceneSampler sampler(o.seed * 7 + 1, o.image);
  std::vector<double> curve;
  Timer timer;
  double running = 0;
  for (int64_t step = 0; step < o.vae_steps; ++step) {
    std::vector<starter::Scene> batch;
    for (int64_t i = 0; i < o.vae_batch; ++i) batch.push_back(sampler.sampleTraining());
    const at::Tensor x = testing::scenePictures(batch, o.image);
    const at::Tensor moments = vae.encodeMoments(x.to(o.dtype)).to(at::kFloat);
    const auto parts = moments.chunk(2, 1);
    const at::Tensor logvar = parts[1].clamp(-30.0, 20.0);
    const at::Tensor z = parts[0] + (0.5 * logvar).exp() * at::randn_like(parts[0]);
    const at::Tensor recon = vae.decode(z.to(o.dtype)).to(at::kFloat);
    const at::Tensor& xf = x;
    const at::Tensor rec_loss = reconstructionLoss(recon, xf, o.vae_edge_loss);
    const at::Tensor kl = 0.5 * (parts[0].pow(2) + logvar.exp() - 1.0 - logvar).mean();
    const at::Tensor loss = rec_loss + 1e-6 * kl;
    loss.backward();
    const double lr = schedule(o.vae_lr, step, o.vae_steps, 50);
    opt.step(lr);
    opt.updateAverage(std::min(0.99, (1.0 + step) / (10.0 + step)));
    const double l = rec_loss.item<double>();
    curve.push_back(l);
    running = step == 0 ? l : 0.98 * running + 0.02 * l;
    if ((step + 1) % 50 == 0 || step + 1 == o.vae_steps) {
      timer.report("vae ", step, o.vae_steps, running, lr);
      std::printf("     posterior std %.4f, latent spread %.3f\n",
                  (0.5 * logvar).exp().mean().item<double>(), parts[0].std().item<double>());
    }
    if (o.vae_judge_every > 0 && (step + 1) % o.vae_judge_every == 0 && step + 1 < o.vae_steps)
      reportVaeReconstructions(vae, o,
                               "step " + std::to_string(step + 1) + ", weights before averaging");
  }
  opt.exportWeights();
  return curve;
}

// Starts the posterior's log-variance at -8 (std 0.02), so the decoder sees clean
// latents from the first step instead of unit noise that hides colour and small shapes.
void startNearlyDeterministic(models::AutoencoderKL& vae) {
  at::NoGradGuard no_grad;
  const int64_t e = vae.config().embed_dim;
  for (const auto& slot : vae.params().slots())
    if (slot.name == std::string(kVaePrefix) + "quant_conv.bias")
      slot.tensor->narrow(0, e, e).fill_(-8.0);
}

// Folds a scale into the VAE so that scaling_factor * latent has unit spread: the mean
// rows of quant_conv are multiplied by s (log-variance shifted by 2 ln s) and
// post_quant_conv divides by s. The decoded picture is unchanged.
double normaliseLatentScale(models::AutoencoderKL& vae, const Options& o) {
  at::NoGradGuard no_grad;
  starter::SceneSampler sampler(o.seed * 7 + 2, o.image);
  std::vector<starter::Scene> scenes;
  for (int i = 0; i < 256; ++i) scenes.push_back(sampler.sampleTraining());
  const at::Tensor mean = vae.encodeMoments(testing::scenePictures(scenes, o.image)).chunk(2, 1)[0];
  const double s = 1.0 / (kSd1LatentScale * mean.std().item<double>());
  const int64_t e = vae.config().embed_dim;
  for (const auto& slot : vae.params().slots()) {
    at::Tensor& t = *slot.tensor;
    if (slot.name == std::string(kVaePrefix) + "quant_conv.weight") t.narrow(0, 0, e).mul_(s);
    if (slot.name == std::string(kVaePrefix) + "quant_conv.bias") {
      t.narrow(0, 0, e).mul_(s);
      t.narrow(0, e, e).add_(2.0 * std::log(s));
    }
    if (slot.name == std::string(kVaePrefix) + "post_quant_conv.weight") t.div_(s);
  }
  return s;
}

// Top row: generated pictures; bottom row: the VAE's reconstructions (mean latent).
void writeVaePreview(const models::AutoencoderKL& vae, const Options& o, const std::string& path) {
  at::NoGradGuard no_grad;
  starter::SceneSampler sampler(o.seed * 7 + 6, o.image);
  std::vector<starter::Scene> scenes;
  for (int i = 0; i < 8; ++i) scenes.push_back(sampler.sampleTraining());
  const at::Tensor x = testing::scenePictures(scenes, o.image);
  const at::Tensor mean = vae.encodeMoments(x).chunk(2, 1)[0];
  const at::Tensor y = vae.decode(mean).to(at::kFloat);
  const at::Tensor grid = at::cat({at::cat(x.unbind(0), 2), at::cat(y.unbind(0), 2)}, 1);
  const at::Tensor bytes =
      ((grid.clamp(-1, 1) + 1) * 127.5).round().to(at::kByte).permute({1, 2, 0}).contiguous();
  QImage img(bytes.data_ptr<uint8_t>(), static_cast<int>(bytes.size(1)),
             static_cast<int>(bytes.size(0)), static_cast<int>(bytes.stride(0)),
             QImage::Format_RGB888);
  if (!img.scaled(img.width() * 2, img.height() * 2).save(QString::fromStdString(path), "PNG"))
    throw Error(ErrorKind::Io, "cannot write " + path);
}

}  // namespace kiln::starter
