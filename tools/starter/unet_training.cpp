// Training the starter model's UNet and text encoder together on the VAE's latents.
#include "unet_training.h"

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

// SD 1.x's scaled-linear noise schedule: cumulative alpha products for t = 0..999.
at::Tensor alphasCumprod() {
  const at::Tensor betas =
      at::linspace(std::sqrt(0.00085), std::sqrt(0.012), 1000, at::kDouble).pow(2);
  return (1.0 - betas).cumprod(0).to(at::kFloat);
}

}  // namespace

namespace {

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

}  // namespace

namespace {

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

}  // namespace

namespace {

// The squared error averaged over each picture's object pixels (weighted by coverage),
// mean over channels: [N]. Per channel that average is the object's colour as predicted.
at::Tensor objectMeanError(const at::Tensor& err, const at::Tensor& cover) {
  const at::Tensor mean = (err * cover).sum({2, 3}) / cover.sum({2, 3}).clamp_min(1e-3);
  return mean.pow(2).mean(1);
}

}  // namespace

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

}  // namespace kiln::starter
