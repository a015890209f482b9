// kiln-train-starter: trains Kiln's starter model from scratch on CPU with Kiln's own
// model code: first the VAE on generated pictures of shapes, then the UNet and the text
// encoder together on the VAE's latents and generated captions. Writes one SD 1.x-layout
// .safetensors file (fp16) and a PNG of the loss curves. The stages are in
// vae_training.cpp, latent_set.cpp and unet_training.cpp.
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
#include "latent_set.h"
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
#include "unet_training.h"
#include "vae_training.h"
#include "weights/params.h"

namespace {

using namespace kiln;
using namespace kiln::starter;

std::vector<int64_t> parseList(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ',');) out.push_back(std::stoll(part));
  return out;
}

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
