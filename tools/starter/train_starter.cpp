// kiln-train-starter: trains Kiln's starter model from scratch on CPU with Kiln's own
// model code: first the VAE on generated pictures of shapes, then the UNet and the text
// encoder together on the VAE's latents and generated captions. Writes one SD 1.x-layout
// .safetensors file (fp16) and a PNG of the loss curves.
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
#include "weights/params.h"

namespace {

using namespace kiln;
using Clock = std::chrono::steady_clock;

constexpr const char* kTextPrefix = "cond_stage_model.transformer.text_model.";
constexpr const char* kUNetPrefix = "model.diffusion_model.";
constexpr const char* kVaePrefix = "first_stage_model.";
constexpr double kSd1LatentScale = 0.18215;

struct Options {
  std::string out = "kiln-starter.safetensors";
  std::string plot = "kiln-starter-loss.png";
  uint64_t seed = 1234;
  int image = 64;
  int threads = 2;
  int64_t vae_steps = 3000, vae_batch = 8;
  int64_t scenes = 10000;
  int64_t unet_steps = 3500, unet_batch = 48;
  double vae_lr = 1.5e-3, unet_lr = 8e-4;
  // bf16 where the CPU has bf16 instructions (the shipped model's precision), else fp32
  // (see main); --dtype overrides.
  at::ScalarType dtype = at::kBFloat16;
  bool bench = false;
  int64_t snapshot_every = 0;  // UNet steps between intermediate checkpoints; 0 = none
  // Low-frequency noise for the UNet (see trainingNoise): the per-level weight of the
  // coarser noise layers, and the strength of the per-channel constant offset.
  // Defaults are the recipe of the shipped model (none of either).
  double pyramid_discount = 0.0;
  double offset_noise = 0.0;
  // Floor of the loss weight in clean-picture terms (k / SNR) at the highest noise levels,
  // where the layout is decided; 0 = plain Min-SNR-5.
  double high_noise_weight = 0.0;
  // Fraction of the UNet steps by which that floor has faded to nothing: it holds for the
  // first half of the fraction and falls linearly over the second; 0 = it never fades.
  double high_noise_until = 0.0;
  // Apply that floor only to the error averaged over blocks of this many latent pixels a
  // side (layout: where things are, the background) rather than to every latent pixel
  // (which also weights fine detail, i.e. shape, at noise levels where it cannot be seen
  // yet); 0 = the floor weights the whole error.
  int64_t high_noise_block = 0;
  // VAE loss: small objects weighted up and an edge term (see reconstructionLoss); off
  // for the shipped model.
  bool vae_edge_loss = false;
  // Weight of an auxiliary loss that makes the text encoder's end and last padding tokens
  // predict every attribute the caption states (see AttributeHeads); 0 = off.
  double text_attribute_loss = 0.0;
  // Take the VAE from this checkpoint instead of training one (for UNet experiments).
  std::string vae_from;
  // UNet shape: base channels, per-level multipliers, whether the full-resolution level
  // has attention.
  int64_t unet_channels = 64;
  std::vector<int64_t> unet_mult{1, 1, 1};
  bool attention_at_full = false;
  // VAE shape: base channels and per-level multipliers (GroupNorm has 32 groups, so the
  // full-resolution level needs 128 channels to keep four per group).
  int64_t vae_channels = 32;
  int64_t vae_res_blocks = 1;
  int64_t vae_judge_every = 500;  // steps between judgements of the VAE's reconstructions
  bool vae_only = false;
  // Centre and scale each latent channel on its own (folded into quant_conv and
  // post_quant_conv) instead of one scale for all four.
  bool per_channel_latents = false;
  // Extra weight of the latent pixels at and next to the objects in the UNet's loss
  // (1 + W x their object coverage, averaged per picture), so that the few pixels that
  // carry the object's colour and shape are not outweighed by the background; 0 = off.
  double object_weight = 0.0;
  // Weight of an extra loss on the error averaged over each picture's object pixels (one
  // value per latent channel: the object's colour, as the UNet predicts it), which the
  // per-pixel MSE weighs no more than any other component of the error; 0 = off.
  double colour_loss = 0.0;
  // Fades the colour loss out at high noise: it counts min(1, SNR / S) of its weight at
  // each noise level, where the object's place is still open and the object-averaged
  // error measures that rather than the colour; 0 = full weight at every level.
  double colour_loss_snr = 0.0;
  std::vector<int64_t> vae_mult{4, 2, 4};
};

std::vector<int64_t> parseList(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ',');) out.push_back(std::stoll(part));
  return out;
}

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Linear warm-up, then cosine decay to a tenth of the peak.
double schedule(double peak, int64_t step, int64_t total, int64_t warmup) {
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double p = static_cast<double>(step - warmup) /
                   static_cast<double>(std::max<int64_t>(1, total - warmup));
  return peak * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(std::numbers::pi * p)));
}

// The starter model's shapes. One SD 1.x single file carries all three.
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

struct Timer {
  Clock::time_point start = Clock::now();
  int64_t last_report = 0;
  void report(const char* phase, int64_t step, int64_t total, double loss, double lr) {
    const double t = seconds(start);
    const double eta = t / static_cast<double>(step + 1) * static_cast<double>(total - step - 1);
    std::printf("%s %6lld/%lld  loss %.5f  lr %.2e  %6.0f s  (eta %.0f s)\n", phase,
                static_cast<long long>(step + 1), static_cast<long long>(total), loss, lr, t, eta);
    std::fflush(stdout);
  }
};

// ---------------------------------------------------------------------------- VAE

// Objects cover a few percent of a picture: their pixels (anything that differs from the
// corner, which is always background) weigh five times; L1 + L2 on the pixels. With
// `edges`, pictures whose objects are small weigh up to three times as much again (so that
// a small star keeps its points) and L1 on the horizontal and vertical differences, which
// carry the edges and corners that tell shapes apart, is added.
// 1 where a picture differs from its corner pixel (always background), else 0: [N, 1, H, W].
at::Tensor objectPixels(const at::Tensor& x) {
  const at::Tensor bg = x.narrow(2, 0, 1).narrow(3, 0, 1);
  return ((x - bg).abs().sum(1, true) > 0.1).to(at::kFloat);
}

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

// ---------------------------------------------------------------------------- dataset

struct LatentSet {
  std::vector<starter::SceneSpec> specs;
  at::Tensor mean, std;  // [N, 4, h, w], already multiplied by the SD 1.x latent scale
  // [N, 1, h, w]: the share of each latent pixel's patch that objects cover, widened by
  // one latent pixel (the outline that tells shapes apart lies at the object's edge).
  at::Tensor objects;
  // [N, 1, h, w]: the same share, not widened (where the object's colour is).
  at::Tensor cover;
};

at::Tensor objectCoverage(const at::Tensor& pictures, int64_t latent_size) {
  const int64_t f = pictures.size(2) / latent_size;
  return at::avg_pool2d(objectPixels(pictures), {f, f}, {f, f});
}

at::Tensor widened(const at::Tensor& coverage) {
  return at::max_pool2d(coverage, {3, 3}, {1, 1}, {1, 1});
}

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

// ---------------------------------------------------------------------------- UNet

// SD 1.x's scaled-linear noise schedule: cumulative alpha products for t = 0..999.
at::Tensor alphasCumprod() {
  const at::Tensor betas =
      at::linspace(std::sqrt(0.00085), std::sqrt(0.012), 1000, at::kDouble).pow(2);
  return (1.0 - betas).cumprod(0).to(at::kFloat);
}

// The UNet's training noise. With SD 1.x's schedule the last step still keeps 7% of the
// picture, so plain white noise lets coarse structure (where the object is, the
// background's brightness) leak through to the highest noise levels: the model learns to
// take it from the noise instead of from the prompt, and at sampling time, which starts
// from pure noise, it ignores position and background words. Extra noise at coarse
// scales (layers at 1/2, 1/4, ... of the latent size, each `discount` times the previous,
// upsampled bilinearly; renormalised to unit spread) and a per-channel constant offset
// hide that leak, so the prompt is the only place left to learn layout from.
at::Tensor trainingNoise(int64_t batch, int64_t channels, int64_t h, int64_t w, double discount,
                         double offset) {
  at::Tensor noise = at::randn({batch, channels, h, w});
  if (discount > 0) {
    double weight = 1.0;
    for (int64_t s = h / 2; s >= 1; s /= 2) {
      weight *= discount;
      noise += weight * at::upsample_bilinear2d(at::randn({batch, channels, s, s}), {h, w}, false);
    }
    noise = noise / noise.std({1, 2, 3}, true, true);
  }
  if (offset > 0) noise += offset * at::randn({batch, channels, 1, 1});
  return noise;
}

// Linear heads on the text encoder's end token and last padding token that predict the
// caption's stated attributes (colour, shape, size, position, background, count). Used
// only while training and never saved: they make the encoder carry every attribute into
// the tokens after the caption, where colour words already land, instead of leaving
// position and background words in their own token alone.
class AttributeHeads {
 public:
  static constexpr int64_t kSlices[] = {8, 5, 3, 9, 3, 3};
  AttributeHeads(int64_t width, at::ScalarType dtype) {
    int64_t total = 0;
    for (int64_t n : kSlices) total += n;
    params_.add("aux.weight", {total, width}, &weight_);
    params_.add("aux.bias", {total}, &bias_);
    starter::initParams(params_, {}, dtype);
  }
  const weights::ParamList& params() const noexcept { return params_; }

  // Labels per sample and attribute (-1 where the caption does not state it).
  static std::vector<int64_t> labels(const starter::SceneSpec& s, bool dropped) {
    if (dropped) return std::vector<int64_t>(std::size(kSlices), -1);
    return {s.colour,
            static_cast<int64_t>(s.shape),
            s.says_size ? static_cast<int64_t>(s.size) : -1,
            s.count == 1 && s.says_position ? static_cast<int64_t>(s.position) : -1,
            s.says_background ? s.background : -1,
            s.count - 1};
  }

  // Mean cross-entropy over the stated attributes; states [N, width], labels [N, 6].
  at::Tensor loss(const at::Tensor& states, const at::Tensor& labels) const {
    const at::Tensor logits = at::linear(states, weight_, bias_).to(at::kFloat);
    at::Tensor total = at::zeros({}, at::kFloat);
    int64_t offset = 0;
    for (std::size_t k = 0; k < std::size(kSlices); ++k) {
      const at::Tensor target = labels.select(1, static_cast<int64_t>(k));
      const at::Tensor valid = target >= 0;
      const int64_t n = valid.sum().item<int64_t>();
      if (n > 0) {
        const at::Tensor lp = at::log_softmax(logits.narrow(1, offset, kSlices[k]), 1);
        const at::Tensor picked = lp.gather(1, target.clamp_min(0).unsqueeze(1)).squeeze(1);
        total = total - (picked * valid.to(at::kFloat)).sum() / static_cast<double>(n);
      }
      offset += kSlices[k];
    }
    return total / static_cast<double>(std::size(kSlices));
  }

 private:
  weights::ParamList params_;
  at::Tensor weight_, bias_;
};

// The squared error averaged over each picture's object pixels (weighted by coverage),
// mean over channels: [N]. Per channel that average is the object's colour as predicted.
at::Tensor objectMeanError(const at::Tensor& err, const at::Tensor& cover) {
  const at::Tensor mean = (err * cover).sum({2, 3}) / cover.sum({2, 3}).clamp_min(1e-3);
  return mean.pow(2).mean(1);
}

using Snapshot = std::function<void(int64_t step, const std::vector<at::Tensor>& averages)>;

std::vector<double> trainUNet(models::UNetModel& unet, models::ClipTextModel& text,
                              const LatentSet& data, const Options& o, const Snapshot& snapshot) {
  const auto tokenizer =
      models::ClipTokenizer::fromVocabFile(core::findDataFile("bpe_simple_vocab_16e6.txt.gz"));
  AttributeHeads heads(textConfig().hidden, o.dtype);
  std::vector<const weights::ParamList*> groups{&unet.params(), &text.params()};
  if (o.text_attribute_loss > 0) groups.push_back(&heads.params());
  starter::AdamW opt(groups, {o.unet_lr, 0.9, 0.999, 1e-8, 0.01, 1.0});
  starter::SceneSampler captions(o.seed * 7 + 4, o.image);
  const at::Tensor ac = alphasCumprod();
  std::vector<double> curve;
  Timer timer;
  double running = 0;
  const int64_t n = data.mean.size(0);
  std::mt19937_64 rng(o.seed * 7 + 5);
  for (int64_t step = 0; step < o.unet_steps; ++step) {
    std::vector<int64_t> idx, ids, eos, labels;
    for (int64_t i = 0; i < o.unet_batch; ++i) {
      const int64_t k = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
      idx.push_back(k);
      const bool drop = std::bernoulli_distribution(0.1)(rng);
      const auto& spec = data.specs[static_cast<std::size_t>(k)];
      const std::string cap = drop ? "" : captions.caption(spec);
      const auto t = tokenizer.encodePadded(cap, models::ClipTokenizer::kEos, 77);
      eos.push_back(i * 77 +
                    (std::find(t.begin() + 1, t.end(), models::ClipTokenizer::kEos) - t.begin()));
      const auto l = AttributeHeads::labels(spec, drop);
      labels.insert(labels.end(), l.begin(), l.end());
      ids.insert(ids.end(), t.begin(), t.end());
    }
    const at::Tensor index = at::tensor(idx, at::kLong);
    const at::Tensor x0 = data.mean.index_select(0, index) +
                          data.std.index_select(0, index) *
                              at::randn({o.unet_batch, 4, data.mean.size(2), data.mean.size(3)});
    const at::Tensor t = at::randint(0, 1000, {o.unet_batch}, at::kLong);
    const at::Tensor a = ac.index_select(0, t).view({-1, 1, 1, 1});
    const at::Tensor noise = trainingNoise(o.unet_batch, x0.size(1), x0.size(2), x0.size(3),
                                           o.pyramid_discount, o.offset_noise);
    const at::Tensor xt = a.sqrt() * x0 + (1.0 - a).sqrt() * noise;
    const at::Tensor tok = at::tensor(ids, at::kLong).view({o.unet_batch, 77});
    const at::Tensor context = text.forward(tok).last_hidden_state;
    const at::Tensor pred =
        unet.forward({xt.to(o.dtype), t.to(at::kFloat), context.to(o.dtype), {}}).to(at::kFloat);
    // Min-SNR-5 weighting of the epsilon loss.
    const at::Tensor snr = a / (1.0 - a);
    const at::Tensor w = at::clamp_max(snr, 5.0) / snr;
    at::Tensor floored;  // max(w, k / SNR) where the high-noise floor is on
    if (o.high_noise_weight > 0) {
      double k = o.high_noise_weight;
      if (o.high_noise_until > 0) {
        const double progress = static_cast<double>(step) / static_cast<double>(o.unet_steps);
        k *= std::clamp((o.high_noise_until - progress) / (o.high_noise_until / 2), 0.0, 1.0);
      }
      if (k > 0) floored = at::maximum(w, k / snr);
    }
    const at::Tensor err = pred - noise;
    const at::Tensor plain = err.pow(2).mean({1, 2, 3}, false, at::kFloat);
    at::Tensor per = plain;
    if (o.object_weight > 0) {
      const at::Tensor pw = 1.0 + o.object_weight * data.objects.index_select(0, index);
      per =
          (err.pow(2) * pw).sum({1, 2, 3}) / (pw.sum({1, 2, 3}) * static_cast<double>(err.size(1)));
    }
    at::Tensor loss;
    if (!floored.defined()) {
      loss = (per * w.view({-1})).mean();
    } else if (o.high_noise_block > 1) {
      // The floor's extra weight falls on the block-averaged error only.
      const int64_t b = o.high_noise_block;
      const at::Tensor coarse = at::avg_pool2d(err, {b, b}, {b, b}).pow(2).mean({1, 2, 3});
      loss = (per * w.view({-1}) + coarse * (floored - w).view({-1})).mean();
    } else {
      loss = (per * floored.view({-1})).mean();
    }
    if (o.colour_loss > 0) {
      // The error averaged over the object's pixels, per channel, under Min-SNR-5 alone: at
      // the highest noise levels that error is mostly where the object is rather than its
      // colour, and the high-noise floor would let it swamp everything else.
      const at::Tensor colour = objectMeanError(err, data.cover.index_select(0, index));
      at::Tensor cw = w.view({-1});
      if (o.colour_loss_snr > 0) cw = cw * at::clamp_max(snr.view({-1}) / o.colour_loss_snr, 1.0);
      loss = loss + o.colour_loss * (colour * cw).mean();
    }
    if (o.text_attribute_loss > 0) {
      // The end token and the last padding token of every caption.
      const at::Tensor flat = context.reshape({-1, context.size(2)});
      std::vector<int64_t> rows = eos;
      for (int64_t i = 0; i < o.unet_batch; ++i) rows.push_back(i * 77 + 76);
      const at::Tensor states = flat.index_select(0, at::tensor(rows, at::kLong));
      const at::Tensor lab = at::tensor(labels, at::kLong).view({o.unet_batch, -1}).repeat({2, 1});
      const at::Tensor aux = heads.loss(states, lab);
      loss = loss + o.text_attribute_loss * aux;
      if ((step + 1) % 50 == 0) std::printf("     attribute loss %.4f\n", aux.item<double>());
    }
    loss.backward();
    const double lr = schedule(o.unet_lr, step, o.unet_steps, 200);
    opt.step(lr);
    opt.updateAverage(std::min(0.999, (1.0 + step) / (10.0 + step)));
    const double l = plain.mean().item<double>();
    curve.push_back(l);
    running = step == 0 ? l : 0.98 * running + 0.02 * l;
    if ((step + 1) % 50 == 0 || step + 1 == o.unet_steps)
      timer.report("unet", step, o.unet_steps, running, lr);
    if (o.snapshot_every > 0 && (step + 1) % o.snapshot_every == 0 && step + 1 < o.unet_steps)
      snapshot(step + 1, opt.averages());
  }
  opt.exportWeights();
  return curve;
}

// ---------------------------------------------------------------------------- output

// Writes the slots' tensors, or `replace[i]` for the i-th slot overall where given.
void writeCheckpoint(const std::string& path, const std::vector<const weights::ParamList*> groups,
                     const std::map<std::string, std::string>& metadata,
                     const std::vector<at::Tensor>& replace = {}) {
  std::vector<at::Tensor> keep;
  std::vector<tensor_io::TensorToWrite> out;
  std::size_t i = 0;
  for (const auto* g : groups)
    for (const auto& slot : g->slots()) {
      const at::Tensor& src = i < replace.size() ? replace[i] : *slot.tensor;
      ++i;
      at::Tensor t = src.detach().to(at::kHalf).contiguous();
      keep.push_back(t);
      const auto* p = static_cast<const uint8_t*>(t.data_ptr());
      out.push_back({slot.name, tensor_io::DType::F16, slot.shape,
                     std::span<const uint8_t>(p, static_cast<std::size_t>(t.nbytes()))});
    }
  tensor_io::writeSafetensors(path, out, metadata);
}

void bench(const Options& o) {
  for (at::ScalarType dt : {at::kFloat, at::kBFloat16}) {
    models::ClipTextModel text(textConfig(), kTextPrefix);
    models::UNetModel unet(unetConfig(o), kUNetPrefix);
    models::AutoencoderKL vae(vaeConfig(o), kVaePrefix);
    starter::initParams(text.params(), {}, dt);
    starter::initParams(unet.params(), {}, dt);
    starter::initParams(vae.params(), {}, dt);
    for (auto* g : {&text.params(), &unet.params(), &vae.params()})
      for (const auto& s : g->slots()) s.tensor->requires_grad_(true);
    std::printf("params: text %lld unet %lld vae %lld\n",
                static_cast<long long>(text.params().parameterCount()),
                static_cast<long long>(unet.params().parameterCount()),
                static_cast<long long>(vae.params().parameterCount()));
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = Clock::now();
      const at::Tensor x = at::randn({o.vae_batch, 3, o.image, o.image}).to(dt);
      const auto m = vae.encodeMoments(x).chunk(2, 1);
      vae.decode(m[0]).to(at::kFloat).pow(2).mean().backward();
      const double tv = seconds(t0);
      t0 = Clock::now();
      const at::Tensor ids = at::randint(0, 49408, {o.unet_batch, 77}, at::kLong);
      const at::Tensor ctx = text.forward(ids).last_hidden_state;
      const int64_t h = o.image / 4;
      const at::Tensor out = unet.forward({at::randn({o.unet_batch, 4, h, h}).to(dt),
                                           at::rand({o.unet_batch}) * 999,
                                           ctx.to(dt),
                                           {}});
      out.to(at::kFloat).pow(2).mean().backward();
      std::printf("%s: vae step (batch %lld) %.3f s, unet+text step (batch %lld) %.3f s\n",
                  at::toString(dt), static_cast<long long>(o.vae_batch), tv,
                  static_cast<long long>(o.unet_batch), seconds(t0));
      std::fflush(stdout);
    }
  }
}

const char* vaeCurveName(const Options& o) {
  return o.vae_edge_loss ? "VAE reconstruction (L1 + L2 + edges)" : "VAE reconstruction (L1 + L2)";
}

// The options beyond the shipped model's recipe, for the file's training metadata.
std::string recipeExtras(const Options& o) {
  std::string out;
  if (o.pyramid_discount > 0) out += ", pyramid noise " + std::to_string(o.pyramid_discount);
  if (o.offset_noise > 0) out += ", offset noise " + std::to_string(o.offset_noise);
  if (o.high_noise_weight > 0) out += ", high-noise weight " + std::to_string(o.high_noise_weight);
  if (o.high_noise_until > 0)
    out += " fading out by " + std::to_string(o.high_noise_until) + " of the steps";
  if (o.high_noise_block > 1)
    out += " on " + std::to_string(o.high_noise_block) + "-pixel latent blocks";
  if (o.vae_res_blocks != 1)
    out += ", " + std::to_string(o.vae_res_blocks) + " VAE res-blocks per level";
  if (o.vae_edge_loss) out += ", VAE edge loss";
  if (o.per_channel_latents) out += ", per-channel latents";
  if (o.object_weight > 0) out += ", object weight " + std::to_string(o.object_weight);
  if (o.colour_loss > 0) out += ", object colour loss " + std::to_string(o.colour_loss);
  if (o.colour_loss > 0 && o.colour_loss_snr > 0)
    out += " faded below SNR " + std::to_string(o.colour_loss_snr);
  if (o.text_attribute_loss > 0)
    out += ", text attribute loss " + std::to_string(o.text_attribute_loss);
  if (o.dtype != at::kBFloat16) out += ", fp32 compute";
  return out;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: kiln-train-starter [--out FILE.safetensors] [--plot FILE.png] [--seed N]\n"
      "         [--vae-steps N] [--vae-batch N] [--scenes N] [--unet-steps N]\n"
      "         [--unet-batch N] [--unet-channels N] [--unet-mult A,B,C]\n"
      "         [--full-attention] [--vae-channels N] [--vae-mult A,B,C]\n"
      "         [--dtype fp32|bf16] [--threads N] [--snapshot-every N]\n"
      "         [--pyramid-noise DISCOUNT] [--offset-noise F] [--high-noise-weight K]\n"
      "         [--high-noise-until FRACTION] [--high-noise-block LATENT_PIXELS]\n"
      "         [--vae-edge-loss] [--vae-res-blocks N] [--vae-judge-every STEPS] [--vae-only]\n"
      "         [--per-channel-latents] [--object-weight W] [--colour-loss W]\n"
      "         [--colour-loss-snr S] [--text-attribute-loss W] [--vae-from FILE] [--bench]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);  // fonts for the loss plot
  Options o;
  // Emulated bf16 is 10 to 40 times slower than fp32 on CPUs without bf16 instructions.
  if (fastCpuDType() != ComputeDType::BFloat16) o.dtype = at::kFloat;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + a);
      return argv[++i];
    };
    try {
      if (a == "--out")
        o.out = next();
      else if (a == "--plot")
        o.plot = next();
      else if (a == "--seed")
        o.seed = std::stoull(next());
      else if (a == "--vae-steps")
        o.vae_steps = std::stoll(next());
      else if (a == "--vae-batch")
        o.vae_batch = std::stoll(next());
      else if (a == "--scenes")
        o.scenes = std::stoll(next());
      else if (a == "--unet-steps")
        o.unet_steps = std::stoll(next());
      else if (a == "--unet-batch")
        o.unet_batch = std::stoll(next());
      else if (a == "--threads")
        o.threads = std::stoi(next());
      else if (a == "--snapshot-every")
        o.snapshot_every = std::stoll(next());
      else if (a == "--unet-channels")
        o.unet_channels = std::stoll(next());
      else if (a == "--unet-mult")
        o.unet_mult = parseList(next());
      else if (a == "--vae-channels")
        o.vae_channels = std::stoll(next());
      else if (a == "--vae-mult")
        o.vae_mult = parseList(next());
      else if (a == "--vae-res-blocks")
        o.vae_res_blocks = std::stoll(next());
      else if (a == "--vae-judge-every")
        o.vae_judge_every = std::stoll(next());
      else if (a == "--vae-only")
        o.vae_only = true;
      else if (a == "--per-channel-latents")
        o.per_channel_latents = true;
      else if (a == "--object-weight")
        o.object_weight = std::stod(next());
      else if (a == "--colour-loss")
        o.colour_loss = std::stod(next());
      else if (a == "--colour-loss-snr")
        o.colour_loss_snr = std::stod(next());
      else if (a == "--full-attention")
        o.attention_at_full = true;
      else if (a == "--pyramid-noise")
        o.pyramid_discount = std::stod(next());
      else if (a == "--offset-noise")
        o.offset_noise = std::stod(next());
      else if (a == "--high-noise-weight")
        o.high_noise_weight = std::stod(next());
      else if (a == "--high-noise-until")
        o.high_noise_until = std::stod(next());
      else if (a == "--high-noise-block")
        o.high_noise_block = std::stoll(next());
      else if (a == "--vae-from")
        o.vae_from = next();
      else if (a == "--vae-edge-loss")
        o.vae_edge_loss = true;
      else if (a == "--text-attribute-loss")
        o.text_attribute_loss = std::stod(next());
      else if (a == "--dtype") {
        const std::string d = next();
        if (d != "fp32" && d != "bf16") return usage();
        o.dtype = d == "fp32" ? at::kFloat : at::kBFloat16;
      } else if (a == "--bench")
        o.bench = true;
      else
        return usage();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kiln-train-starter: %s\n", e.what());
      return usage();
    }
  }
  at::set_num_threads(o.threads);
  at::manual_seed(o.seed);
  if (o.bench) {
    bench(o);
    return 0;
  }
  try {
    const auto total = Clock::now();
    models::ClipTextModel text(textConfig(), kTextPrefix);
    models::UNetModel unet(unetConfig(o), kUNetPrefix);
    models::AutoencoderKL vae(vaeConfig(o), kVaePrefix);
    starter::initParams(vae.params(), {}, o.dtype);
    std::printf("VAE %lld parameters, UNet %lld, text encoder %lld\n",
                static_cast<long long>(vae.params().parameterCount()),
                static_cast<long long>(unet.params().parameterCount()),
                static_cast<long long>(text.params().parameterCount()));
    std::vector<double> vae_curve;
    const std::string vae_name = o.vae_from.substr(o.vae_from.find_last_of('/') + 1);
    std::string vae_training;  // "<file>: <its kiln.training>" for the --vae-from file
    if (o.vae_from.empty()) {
      startNearlyDeterministic(vae);
      vae_curve = trainVae(vae, o);
      const double s = normaliseLatentScale(vae, o);
      const std::string preview = o.plot.substr(0, o.plot.rfind('.')) + "-vae.png";
      writeVaePreview(vae, o, preview);
      std::printf("latent scale folded into the VAE: %.4f (%.0f s so far)\n", s, seconds(total));
    } else {
      weights::LoadOptions load;
      load.owned_prefixes = {kVaePrefix};
      const models::Checkpoint source = models::openCheckpoint(o.vae_from);
      weights::loadParams(vae.params(), source.index, load, "VAE");
      // How the borrowed VAE was trained goes into the new file's metadata; a file that
      // borrowed its own VAE passes on where that one came from.
      for (const auto& file : source.index.files()) {
        const auto& m = file->metadata();
        if (const auto it = m.find("kiln.training.vae"); it != m.end())
          vae_training = it->second;
        else if (const auto t = m.find("kiln.training"); t != m.end())
          vae_training = vae_name + ": " + t->second;
      }
      std::printf("VAE taken from %s\n", o.vae_from.c_str());
    }
    reportVaeReconstructions(vae, o, "the VAE trained");
    if (o.vae_only) {
      // UNet and text encoder at their initial weights: a file for --vae-from.
      starter::initParams(text.params(), {}, o.dtype);
      starter::initParams(unet.params(), {}, o.dtype);
      writeCheckpoint(
          o.out, {&text.params(), &unet.params(), &vae.params()},
          {{"kiln.training", "VAE only (UNet and text encoder untrained): seed " +
                                 std::to_string(o.seed) + ", " + std::to_string(o.vae_steps) +
                                 " VAE steps x " + std::to_string(o.vae_batch) + recipeExtras(o)}});
      if (!vae_curve.empty() && !starter::writeLossPlot(o.plot, {{vaeCurveName(o), vae_curve}}))
        throw Error(ErrorKind::Io, "cannot write " + o.plot);
      std::printf("wrote %s (VAE only) in %.0f s\n", o.out.c_str(), seconds(total));
      return 0;
    }
    std::vector<at::Tensor> fp32;  // the weights to save
    for (const auto& slot : vae.params().slots()) {
      fp32.push_back(*slot.tensor);
      *slot.tensor = slot.tensor->to(o.dtype);
    }
    LatentSet data = encodeScenes(vae, o);
    std::size_t k = 0;
    for (const auto& slot : vae.params().slots()) *slot.tensor = fp32[k++];
    std::printf("latent channels (mean/spread): %s\n", channelStats(data.mean).c_str());
    if (o.per_channel_latents) {
      whitenLatentChannels(vae, data);
      std::printf("latent channels centred and scaled in the VAE: %s\n",
                  channelStats(data.mean).c_str());
      reportVaeReconstructions(vae, o, "per-channel latents");
    }

    starter::initParams(text.params(), {}, o.dtype);
    starter::initParams(unet.params(), {"out_layers.3.", "proj_out.", "out.2."}, o.dtype);
    std::map<std::string, std::string> meta{
        {"kiln.model", "Kiln starter model: shapes in colours, trained by kiln-train-starter"},
        {"kiln.training",
         "seed " + std::to_string(o.seed) + ", " +
             (o.vae_from.empty()
                  ? std::to_string(o.vae_steps) + " VAE steps x " + std::to_string(o.vae_batch)
                  : "VAE from " + vae_name) +
             ", " + std::to_string(o.scenes) + " scenes, " + std::to_string(o.unet_steps) +
             " UNet steps x " + std::to_string(o.unet_batch) + recipeExtras(o)},
        {"modelspec.architecture", "stable-diffusion-v1"},
        {"modelspec.title", "Kiln starter"},
        {"modelspec.resolution", std::to_string(o.image) + "x" + std::to_string(o.image)}};
    if (!vae_training.empty()) meta["kiln.training.vae"] = vae_training;
    // Intermediate checkpoints (<stem>-stepN.safetensors) with the averaged UNet and
    // text encoder, for judging progress while training goes on.
    const auto snapshot = [&](int64_t step, const std::vector<at::Tensor>& averages) {
      const std::string stem = o.out.substr(0, o.out.rfind('.'));
      const auto unet_n = static_cast<std::ptrdiff_t>(unet.params().slots().size());
      const auto text_n = static_cast<std::ptrdiff_t>(text.params().slots().size());
      std::vector<at::Tensor> replace(averages.begin() + unet_n,
                                      averages.begin() + unet_n + text_n);
      replace.insert(replace.end(), averages.begin(),
                     averages.begin() + static_cast<std::ptrdiff_t>(unet.params().slots().size()));
      writeCheckpoint(stem + "-step" + std::to_string(step) + ".safetensors",
                      {&text.params(), &unet.params(), &vae.params()}, meta, replace);
    };
    const auto unet_curve = trainUNet(unet, text, data, o, snapshot);

    writeCheckpoint(o.out, {&text.params(), &unet.params(), &vae.params()}, meta);
    // The file must come back through ordinary detection with the shapes trained here.
    const models::Checkpoint ck = models::openCheckpoint(o.out);
    const auto& spec = ck.spec;
    if (spec.family != models::ModelFamily::SD1 ||
        spec.unet.model_channels != unetConfig(o).model_channels || spec.vae.downscale() != 4 ||
        spec.text_encoders.at(0).config.hidden != textConfig().hidden ||
        spec.text_encoders.at(0).config.heads != textConfig().heads)
      throw Error(ErrorKind::Internal, "the written checkpoint is detected with other shapes");
    std::vector<starter::LossCurve> curves;
    if (!vae_curve.empty()) curves.push_back({vaeCurveName(o), vae_curve});
    curves.push_back({"UNet + text encoder (noise MSE)", unet_curve});
    if (!starter::writeLossPlot(o.plot, curves))
      throw Error(ErrorKind::Io, "cannot write " + o.plot);
    std::printf("wrote %s and %s in %.0f s\n", o.out.c_str(), o.plot.c_str(), seconds(total));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-train-starter: %s\n", e.what());
    return 1;
  }
  return 0;
}
