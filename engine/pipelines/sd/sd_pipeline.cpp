#include "pipelines/sd/sd_pipeline.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/data_paths.h"
#include "core/interrupt.h"
#include "kiln/error.h"
#include "memory/device.h"
#include "models/text/prompt_weights.h"
#include "pipelines/common/latent_preview.h"
#include "pipelines/sd/sd_lora_targets.h"
#include "sampling/denoiser.h"

namespace kiln::pipelines {
namespace {

class CfgDenoiser final : public sampling::Denoiser {
 public:
  CfgDenoiser(const models::UNetModel& unet, const Conditioning& cond, const at::Tensor& y,
              double scale)
      : unet_(unet), cond_(cond), y_(y), scale_(scale) {}

  at::Tensor predictNoise(const at::Tensor& x_in, float timestep) override {
    models::UNetInputs in;
    in.latent = at::cat({x_in, x_in}, 0);
    in.timesteps = at::full({2}, timestep, x_in.options().dtype(at::kFloat));
    in.context = cond_.context;
    in.y = y_;
    const at::Tensor eps = unet_.forward(in).to(at::kFloat);
    const auto parts = eps.chunk(2, 0);
    last_uncond = parts[0];
    last_cond = parts[1];
    return parts[0] + (parts[1] - parts[0]) * scale_;
  }

  at::Tensor last_uncond, last_cond;

 private:
  const models::UNetModel& unet_;
  const Conditioning& cond_;
  at::Tensor y_;
  double scale_;
};

void loadComponent(const weights::ParamList& params, const models::Checkpoint& ck,
                   at::ScalarType dtype, const std::string& prefix,
                   std::vector<std::string> ignored, const std::string& what,
                   const std::function<void(std::size_t)>& tick) {
  weights::LoadOptions opts;
  opts.dtype = dtype;
  opts.owned_prefixes = {prefix};
  opts.ignored.insert(ignored.begin(), ignored.end());
  std::size_t reported = 0;  // of this component
  if (tick)
    opts.progress = [&](std::size_t done, std::size_t) {
      tick(done - reported);
      reported = done;
    };
  weights::loadParams(params, ck.index, opts, what);
}

}  // namespace

SdPipeline::SdPipeline(models::Checkpoint checkpoint, at::ScalarType dtype,
                       const LoadProgress& progress)
    : checkpoint_(std::move(checkpoint)),
      dtype_(dtype),
      tokenizer_(models::ClipTokenizer::fromVocabFile(
          core::findDataFile("bpe_simple_vocab_16e6.txt.gz"))) {
  const auto& spec = checkpoint_.spec;
  for (const auto& te : spec.text_encoders)
    text_.push_back(std::make_unique<models::ClipTextModel>(te.config, te.prefix));
  unet_ = std::make_unique<models::UNetModel>(spec.unet, spec.unet_prefix);
  vae_ = std::make_unique<models::AutoencoderKL>(spec.vae, spec.vae_prefix);

  // Progress in bytes read from the file, over every component.
  std::size_t total = weights::storedBytes(unet_->params(), checkpoint_.index) +
                      weights::storedBytes(vae_->params(), checkpoint_.index);
  for (const auto& t : text_) total += weights::storedBytes(t->params(), checkpoint_.index);
  std::size_t done = 0;
  const auto tick = [&](std::size_t n) {
    done += n;
    if (progress) progress(done, total);
  };
  for (std::size_t i = 0; i < text_.size(); ++i) {
    // The text encoder's owned prefix is its model root (one level above text_model.).
    std::string root = spec.text_encoders[i].prefix;
    const std::string tm = "text_model.";
    if (root.size() > tm.size() && root.compare(root.size() - tm.size(), tm.size(), tm) == 0)
      root.resize(root.size() - tm.size());
    loadComponent(text_[i]->params(), checkpoint_, dtype_, root, text_[i]->ignoredKeys(),
                  "text encoder " + std::to_string(i + 1), tick);
  }
  loadComponent(unet_->params(), checkpoint_, dtype_, spec.unet_prefix, {}, "UNet", tick);
  loadComponent(vae_->params(), checkpoint_, vaeComputeDtype(dtype_), spec.vae_prefix, {}, "VAE",
                tick);
}

SdPipeline::~SdPipeline() = default;

TextEncoding SdPipeline::encodeText(const std::vector<std::string>& prompts) const {
  const auto& spec = checkpoint_.spec;
  TextEncoding out;
  std::vector<at::Tensor> contexts;
  const at::Device device = memory::computeDevice();
  for (std::size_t i = 0; i < text_.size(); ++i) {
    const auto& te = spec.text_encoders[i];
    std::vector<int64_t> flat;
    for (const auto& p : prompts) {
      const auto ids =
          tokenizer_.encodePadded(p, te.pad_id, static_cast<int>(te.config.max_positions));
      flat.insert(flat.end(), ids.begin(), ids.end());
    }
    at::Tensor ids = at::tensor(flat, at::TensorOptions().dtype(at::kLong).device(device))
                         .reshape({static_cast<int64_t>(prompts.size()), te.config.max_positions});
    models::ClipTextOutput o = text_[i]->forward(ids);
    contexts.push_back(contextOf(i, o, 1));
    if (te.provides_pooled) out.pooled = o.text_embeds.defined() ? o.text_embeds : o.pooled;
    out.ids.push_back(ids);
    out.outputs.push_back(std::move(o));
  }
  out.context = contexts.size() == 1 ? contexts[0] : at::cat(contexts, -1);
  return out;
}

at::Tensor SdPipeline::contextOf(std::size_t encoder, const models::ClipTextOutput& o,
                                 int clip_skip) const {
  const std::size_t layers = o.hidden_states.size();
  switch (checkpoint_.spec.text_encoders[encoder].output) {
    case models::TextOutput::Penultimate:
      return o.hidden_states[layers - 2];
    case models::TextOutput::PenultimateNormed:
      return text_[encoder]->finalNorm(o.hidden_states[layers - 2]);
    default:
      if (clip_skip <= 1) return o.last_hidden_state;
      return text_[encoder]->finalNorm(
          o.hidden_states[layers -
                          std::min<std::size_t>(static_cast<std::size_t>(clip_skip), layers - 1)]);
  }
}

TextEncoding SdPipeline::encodeWeighted(const std::string& prompt, int clip_skip,
                                        const models::EmbeddingLibrary* embeddings) const {
  constexpr std::size_t kWindow = 75;
  // Tokens and their weights, in windows. An embedding's k-th vector is token -(1 + its
  // offset among the prompt's embedding vectors + k), mapped past the vocabulary below.
  std::vector<std::vector<std::pair<int64_t, double>>> windows(1);
  std::vector<models::TextualInversion> used;
  std::map<std::string, std::pair<int64_t, int64_t>> placed;  // name -> (first row, tokens)
  int64_t extra_rows = 0;
  const models::EmbeddingLibrary none;
  for (const models::WeightedText& run : models::parsePromptWeights(prompt)) {
    if (run.is_break) {
      windows.emplace_back();
      continue;
    }
    for (const models::PromptPiece& piece :
         models::splitEmbeddings(run.text, embeddings ? *embeddings : none)) {
      if (piece.embedding.empty()) {
        for (int64_t id : tokenizer_.encode(piece.text)) {
          if (windows.back().size() == kWindow) windows.emplace_back();
          windows.back().emplace_back(id, run.weight);
        }
        continue;
      }
      if (!placed.count(piece.embedding)) {
        used.push_back(models::loadTextualInversion(*embeddings->find(piece.embedding)));
        placed[piece.embedding] = {extra_rows, used.back().tokens()};
        extra_rows += used.back().tokens();
      }
      const auto [offset, n] = placed.at(piece.embedding);
      if (!windows.back().empty() && windows.back().size() + static_cast<std::size_t>(n) > kWindow)
        windows.emplace_back();
      for (int64_t k = 0; k < n; ++k) {
        if (windows.back().size() == kWindow) windows.emplace_back();
        windows.back().emplace_back(-(1 + offset + k), run.weight);
      }
    }
  }
  const auto& spec = checkpoint_.spec;
  TextEncoding out;
  std::vector<at::Tensor> contexts;
  for (std::size_t e = 0; e < text_.size(); ++e) {
    const auto& te = spec.text_encoders[e];
    const int64_t length = te.config.max_positions;
    std::vector<int64_t> flat;
    std::vector<float> weights;
    bool weighted = false;
    for (const auto& window : windows) {
      std::vector<int64_t> ids{models::ClipTokenizer::kBos};
      std::vector<float> w{1.0f};
      for (const auto& [id, weight] : window) {
        ids.push_back(id >= 0 ? id : te.config.vocab + (-id - 1));
        w.push_back(static_cast<float>(weight));
        weighted = weighted || weight != 1.0;
      }
      ids.push_back(models::ClipTokenizer::kEos);
      ids.resize(static_cast<std::size_t>(length), te.pad_id);
      w.resize(static_cast<std::size_t>(length), 1.0f);
      flat.insert(flat.end(), ids.begin(), ids.end());
      weights.insert(weights.end(), w.begin(), w.end());
    }
    const auto count = static_cast<int64_t>(windows.size());
    const at::Tensor ids =
        at::tensor(flat, at::TensorOptions().dtype(at::kLong).device(memory::computeDevice()))
            .reshape({count, length});
    at::Tensor extra;
    if (!used.empty()) {
      std::vector<at::Tensor> rows;
      for (const auto& ti : used)
        rows.push_back(
            ti.forEncoder(te.config.hidden, te.config.layout == models::ClipLayout::OpenClip));
      extra = at::cat(rows, 0).to(memory::computeDevice());
    }
    const models::ClipTextOutput o = text_[e]->forward(ids, extra);
    at::Tensor z = contextOf(e, o, clip_skip);
    if (weighted) {
      // A1111: weight each token's vector, then restore each window's mean.
      const at::Tensor w = at::tensor(weights, z.options().dtype(at::kFloat))
                               .reshape({count, length, 1})
                               .to(z.scalar_type());
      const at::Tensor before = z.mean({1, 2}, true);
      z = z * w;
      z = z * (before / z.mean({1, 2}, true));
    }
    contexts.push_back(z.reshape({1, count * length, z.size(-1)}));
    if (te.provides_pooled)
      out.pooled = (o.text_embeds.defined() ? o.text_embeds : o.pooled).narrow(0, 0, 1);
    out.ids.push_back(ids);
  }
  out.context = contexts.size() == 1 ? contexts[0] : at::cat(contexts, -1);
  return out;
}

at::Tensor batchContexts(const at::Tensor& negative, const at::Tensor& positive) {
  const int64_t a = negative.size(1), b = positive.size(1);
  if (a == b) return at::cat({negative, positive}, 0);
  const int64_t both = std::lcm(a, b);
  return at::cat({negative.repeat({1, both / a, 1}), positive.repeat({1, both / b, 1})}, 0);
}

Conditioning SdPipeline::encodePrompts(const std::string& prompt,
                                       const std::string& negative) const {
  TextEncoding enc = encodeText({negative, prompt});
  if (!at::isfinite(enc.context).all().item<bool>())
    throw Error(ErrorKind::NonFinite,
                "the text encoder produced NaN or infinity (encoding the prompt); "
                "the checkpoint's text encoder weights are probably damaged");
  return {enc.context, enc.pooled};
}

at::Tensor SdPipeline::timeIds(const SizeConditioning& s, bool aesthetic) {
  // The order SDXL was trained with: original (h, w), crop (top, left), then the target
  // (h, w) or, for the refiner, the aesthetic score.
  const auto row = [&](double score) {
    std::vector<float> ids{static_cast<float>(s.original_height),
                           static_cast<float>(s.original_width), static_cast<float>(s.crop_top),
                           static_cast<float>(s.crop_left)};
    if (aesthetic) {
      ids.push_back(static_cast<float>(score));
    } else {
      ids.push_back(static_cast<float>(s.target_height));
      ids.push_back(static_cast<float>(s.target_width));
    }
    return at::tensor(ids, at::TensorOptions().dtype(at::kFloat).device(memory::computeDevice()))
        .reshape({1, -1});
  };
  return at::cat({row(s.negative_aesthetic_score), row(s.aesthetic_score)}, 0);
}

at::Tensor SdPipeline::sample(const Conditioning& cond, const at::Tensor& noise, int64_t steps,
                              double cfg_scale, const SizeConditioning& sizes,
                              const std::function<void(const sampling::StepInfo&)>& on_step,
                              const sampling::LatentInit* init,
                              const SamplerSettings& settings) const {
  // Everything the sampler computes with lives on the compute device; the prompts and
  // latents arrive from the host (the nodes keep their values there).
  const at::Device device = memory::computeDevice();
  const auto here = [&](const at::Tensor& t) { return t.defined() ? t.to(device) : t; };
  const Conditioning on_device{here(cond.context), here(cond.pooled)};
  at::Tensor y;
  if (unet_->config().adm_in_channels > 0) {
    if (!cond.pooled.defined())
      throw Error(ErrorKind::InvalidArgument, "SDXL sampling needs the pooled text embedding");
    y = unet_->timeIdConditioning(on_device.pooled,
                                  timeIds(sizes, checkpoint_.spec.aesthetic_time_ids));
  }
  sampling::ScheduleConfig schedule_config = checkpoint_.spec.schedule;
  schedule_config.zero_terminal_snr =
      settings.zero_terminal_snr.value_or(schedule_config.zero_terminal_snr);
  const sampling::Prediction prediction = settings.prediction.value_or(checkpoint_.spec.prediction);
  const sampling::SigmaTable table(schedule_config);
  const sampling::SigmaSchedule schedule =
      sampling::makeSigmaSchedule(table, settings.schedule, steps);
  const int64_t start = init ? init->start_step : 0;
  if (start < 0 || start >= steps)
    throw Error(ErrorKind::InvalidArgument, "sampling cannot start at step " +
                                                std::to_string(start + 1) + " of " +
                                                std::to_string(steps));
  const std::vector<double> sigmas(schedule.sigmas.begin() + start, schedule.sigmas.end());
  const at::Tensor noise_f = noise.to(device, at::kFloat);
  const at::Tensor clean = init ? init->latent.to(device, at::kFloat) : at::Tensor();
  const at::Tensor mask =
      init && init->mask.defined() ? init->mask.to(device, at::kFloat) : at::Tensor();
  const at::Tensor x =
      init ? clean + noise_f * sigmas.front() : noise_f * schedule.init_noise_scale;

  CfgDenoiser denoiser(*unet_, on_device, y, cfg_scale);
  at::Tensor last_in, last_eps;
  // The denoiser in sigma terms: the model sees x / sqrt(sigma^2 + 1) at timestep t(sigma)
  // and its output (noise or v) gives the clean estimate.
  const sampling::DenoiseFn model = [&](const at::Tensor& x_now, double sigma) {
    core::checkInterrupt();
    const at::Tensor x_in =
        mask.defined() ? (clean + noise_f * sigma) * (1 - mask) + x_now * mask : x_now;
    double t = table.timestep(sigma);
    for (std::size_t k = 0; k < schedule.timesteps.size(); ++k)
      if (schedule.sigmas[k] == sigma) t = schedule.timesteps[k];  // the schedule's own timestep
    last_in = x_in / std::sqrt(sigma * sigma + 1);
    last_eps = denoiser.predictNoise(last_in, static_cast<float>(t)).to(at::kFloat);
    const at::Tensor denoised = sampling::denoisedFrom(prediction, x_in, last_eps, sigma);
    return mask.defined() ? denoised * mask + clean * (1 - mask) : denoised;
  };
  const auto steps_run = static_cast<int64_t>(sigmas.size()) - 1;
  at::Tensor out = sampling::sampleSigmas(
      settings.sampler, model, x, sigmas, settings.noise, [&](const sampling::SamplerStep& s) {
        if (!at::isfinite(*s.x).all().item<bool>())
          throw Error(ErrorKind::NonFinite,
                      "NaN or infinity appeared in the latents at denoising step " +
                          std::to_string(s.step + 1) + "/" + std::to_string(steps_run) +
                          "; try float32 compute or a lower CFG scale");
        if (on_step) on_step({s.step, s.total, &last_in, &last_eps, s.x, s.denoised});
      });
  if (mask.defined()) out = out * mask + clean * (1 - mask);
  return out;
}

at::Tensor SdPipeline::decode(const at::Tensor& latent, const tiling::Tiles* tiles,
                              const tiling::TileProgress& progress) const {
  return codec().decode(latent, tiles, progress);
}

at::Tensor SdPipeline::encode(const at::Tensor& image, const tiling::Tiles* tiles,
                              const tiling::TileProgress& progress) const {
  return codec().encode(image, tiles, progress);
}

}  // namespace kiln::pipelines

namespace kiln::pipelines {

std::vector<memory::ComponentInfo> SdPipeline::components() const {
  std::vector<memory::ComponentInfo> out;
  for (std::size_t i = 0; i < text_.size(); ++i)
    out.push_back({i == 0 ? "text_encoder" : "text_encoder_" + std::to_string(i + 1),
                   "ClipTextModel", memory::ComponentRole::TextEncoder, &text_[i]->params(),
                   false});
  out.push_back({"unet", "UNetModel", memory::ComponentRole::Denoiser, &unet_->params(), false});
  out.push_back({"vae", "AutoencoderKL", memory::ComponentRole::Vae, &vae_->params(), false});
  return out;
}

std::string SdPipeline::kindName() const {
  return models::familyName(checkpoint_.spec.family);
}

std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> SdPipeline::sourceFiles() const {
  return checkpoint_.index.files();
}

std::optional<lora::LoraTargets> SdPipeline::loraTargets() const {
  return sdLoraTargets(*this);
}

int64_t SdPipeline::encodingWorkingBytes(int64_t windows) const {
  int64_t bytes = 0;  // the encoders run one after the other; their outputs stay
  for (const auto& te : text_)
    bytes += models::clipWorkingBytes(te->config(), std::max<int64_t>(windows, 1), dtype_);
  return bytes;
}

int64_t SdPipeline::samplingWorkingBytes(int64_t latent_h, int64_t latent_w,
                                         int64_t context_tokens) const {
  // The sampler keeps a few float32 latents (x, the model's input, the denoised estimate
  // and the multistep samplers' history): twelve cover the largest of them.
  const int64_t latents = 12 * unet_->config().in_channels * latent_h * latent_w * 4;
  return models::unetWorkingBytes(unet_->config(), 2, latent_h, latent_w, context_tokens, dtype_) +
         latents;
}

at::Tensor SdPipeline::previewRgb(const at::Tensor& latent) const {
  if (!preview_map_.defined())
    preview_map_ = fitPreviewMap(latent.size(1), [&](const at::Tensor& z) { return decode(z); });
  return previewWithMap(preview_map_, latent);
}

}  // namespace kiln::pipelines
