#include "pipelines/flux/flux_pipeline.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/data_paths.h"
#include "core/interrupt.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "pipelines/common/latent_preview.h"
#include "pipelines/common/noise.h"
#include "pipelines/flux/flux_lora_targets.h"
#include "sampling/flow_ancestral.h"
#include "sampling/k_samplers.h"
#include "tensor_io/safetensors.h"
#include "weights/params.h"

namespace kiln::pipelines {
namespace {

namespace fs = std::filesystem;

constexpr double kDefaultGuidance = 3.5;  // FLUX.1 dev's (FluxGuidance's default)
constexpr int64_t kClipTokens = 77;
constexpr int64_t kT5MaxTokens = 512;

// Loads `params` from `index` (owning `owned`), reporting stored bytes read over the run.
void loadPart(const weights::ParamList& params, const tensor_io::TensorIndex& index,
              at::ScalarType dtype, std::vector<std::string> owned,
              const std::vector<std::string>& ignored, const std::string& what, std::size_t& done,
              std::size_t total, const FluxPipeline::LoadProgress& progress) {
  weights::LoadOptions opts;
  opts.dtype = dtype;
  opts.owned_prefixes = std::move(owned);
  opts.ignored.insert(ignored.begin(), ignored.end());
  const std::size_t base = done;
  if (progress)
    opts.progress = [&, base](std::size_t part, std::size_t) { progress(base + part, total); };
  weights::loadParams(params, index, opts, what);
  done = base + weights::storedBytes(params, index);
}

std::string stemOf(const std::string& path) {
  const fs::path p(path);
  return p.has_extension() ? p.stem().string()
                           : (p.filename().empty() ? p.parent_path() : p).filename().string();
}

}  // namespace

NativeSize fluxNativeSize() {
  return {1024, 1024, 1};
}

FluxPipeline::FluxPipeline(const FluxModelPaths& paths, at::ScalarType dtype,
                           at::ScalarType vae_dtype, const LoadProgress& progress)
    : paths_(paths), dtype_(dtype), vae_dtype_(vae_dtype) {
  // Every part's header first: a damaged or wrong file is named before anything loads.
  FluxPartIndex t = openFluxTransformer(paths_.transformer);
  FluxPartIndex v = openFluxVae(paths_.vae);
  FluxPartIndex c = openFluxClip(paths_.clip_l);
  FluxPartIndex u = openFluxT5(paths_.t5);
  if (paths_.t5_tokenizer.empty())
    throw Error(ErrorKind::FileNotFound,
                "no T5 tokenizer (spiece.model) beside '" + paths_.t5 +
                    "'; put the sentencepiece model of google/t5-v1_1-xxl there as "
                    "spiece.model (or <t5 file stem>.spiece.model, or tokenizer/spiece.model)");
  t5_tokenizer_ = models::T5Tokenizer::open(paths_.t5_tokenizer);
  clip_tokenizer_ =
      models::ClipTokenizer::fromVocabFile(core::findDataFile("bpe_simple_vocab_16e6.txt.gz"));

  const models::FluxTransformerConfig tc = models::FluxTransformerConfig::detect(t.index, "");
  const models::VaeConfig vc = models::VaeConfig::detect(v.index, "");
  models::ClipTextConfig cc =
      models::ClipTextConfig::detect(c.index, "text_model.", models::ClipLayout::HuggingFace);
  if (const int64_t heads = fluxClipHeads(paths_.clip_l); heads > 0) cc.heads = heads;
  if (cc.hidden % cc.heads != 0)
    throw Error(ErrorKind::UnsupportedModel,
                "'" + paths_.clip_l + "': " + std::to_string(cc.heads) +
                    " attention heads do not divide the width " + std::to_string(cc.hidden));
  const models::T5Config uc = models::T5Config::detect(u.index, "");
  const auto mismatch = [](const std::string& what) {
    throw Error(ErrorKind::ShapeMismatch, what);
  };
  if (uc.d_model != tc.context_dim)
    mismatch("the T5 encoder '" + paths_.t5 + "' gives " + std::to_string(uc.d_model) +
             "-wide encodings but the transformer takes " + std::to_string(tc.context_dim));
  if (cc.hidden != tc.vec_dim)
    mismatch("the CLIP-L encoder '" + paths_.clip_l + "' pools " + std::to_string(cc.hidden) +
             " values but the transformer takes " + std::to_string(tc.vec_dim));
  if (vc.embed_dim * 4 != tc.in_channels)
    mismatch("the VAE '" + paths_.vae + "' has " + std::to_string(vc.embed_dim) +
             " latent channels but the transformer takes " + std::to_string(tc.in_channels / 4));
  if (t5_tokenizer_->vocabSize() > uc.vocab)
    mismatch("the tokenizer '" + paths_.t5_tokenizer + "' has " +
             std::to_string(t5_tokenizer_->vocabSize()) + " pieces but the T5 encoder knows " +
             std::to_string(uc.vocab));
  for (auto* part : {&t, &v, &c, &u})
    notes_.insert(notes_.end(), part->notes.begin(), part->notes.end());
  notes_.push_back(std::string(tc.guidance ? "FLUX.1 dev (guidance embedding)" : "FLUX.1 schnell") +
                   ", " + std::to_string(tc.double_blocks) + " double and " +
                   std::to_string(tc.single_blocks) + " single blocks");
  name_ = stemOf(paths_.transformer);
  for (const auto* part : {&t, &v, &c, &u})
    for (auto& f : part->index.files())
      if (std::find(files_.begin(), files_.end(), f) == files_.end()) files_.push_back(f);

  clip_ = std::make_unique<models::ClipTextModel>(cc, "text_model.");
  t5_ = std::make_unique<models::T5Encoder>(uc, "");
  transformer_ = std::make_unique<models::FluxTransformer>(tc, "");
  vae_ = std::make_unique<models::AutoencoderKL>(vc, "");
  const std::size_t total = weights::storedBytes(clip_->params(), c.index) +
                            weights::storedBytes(t5_->params(), u.index) +
                            weights::storedBytes(transformer_->params(), t.index) +
                            weights::storedBytes(vae_->params(), v.index);
  std::size_t done = 0;
  loadPart(clip_->params(), c.index, dtype, {"text_model."}, clip_->ignoredKeys(), "CLIP-L", done,
           total, progress);
  core::checkInterrupt();
  loadPart(t5_->params(), u.index, dtype, {"encoder.", "shared."}, t5_->ignoredKeys(), "T5", done,
           total, progress);
  // Read now: offload replaces the tensors while the model is in use.
  text_dtype_ = t5_->params().slots().front().tensor->scalar_type();
  core::checkInterrupt();
  loadPart(transformer_->params(), t.index, dtype, {""}, {}, "transformer", done, total, progress);
  core::checkInterrupt();
  loadPart(vae_->params(), v.index, vae_dtype, {""}, {}, "VAE", done, total, progress);
  if (progress) progress(total, total);
}

std::vector<memory::ComponentInfo> FluxPipeline::components() const {
  return {{"text_encoder", "CLIPTextModel", memory::ComponentRole::TextEncoder, &clip_->params(),
           false},
          {"text_encoder_2", "T5EncoderModel", memory::ComponentRole::TextEncoder, &t5_->params(),
           true},
          {"transformer", "FluxTransformer2DModel", memory::ComponentRole::Denoiser,
           &transformer_->params(), false},
          {"vae", "AutoencoderKL", memory::ComponentRole::Vae, &vae_->params(), false}};
}

std::optional<lora::LoraTargets> FluxPipeline::loraTargets() const {
  return fluxLoraTargets(*transformer_);
}

PromptEncoding FluxPipeline::encodeTokens(const at::Tensor& clip_ids,
                                          const at::Tensor& t5_ids) const {
  at::NoGradGuard no_grad;
  const at::Device device = memory::computeDevice();
  PromptEncoding out;
  out.pooled = clip_->forward(clip_ids.to(device)).pooled.to(at::kFloat);
  // No attention mask: FLUX was trained with the pad tokens attending.
  out.context = t5_->forward(t5_ids.to(device)).last_hidden_state.to(at::kFloat);
  if (!at::isfinite(out.context).all().item<bool>() || !at::isfinite(out.pooled).all().item<bool>())
    throw Error(ErrorKind::NonFinite,
                "the text encoders produced NaN or infinity (encoding the prompt); try float32 "
                "compute, or the encoder weights are damaged");
  return out;
}

PromptEncoding FluxPipeline::promptEncoding(const std::string& text,
                                            const PromptOptions& options) const {
  const at::TensorOptions ids = at::TensorOptions().dtype(at::kLong).device(at::kCPU);  // host:
  const std::vector<int64_t> clip = clip_tokenizer_->encodePadded(
      options.pooled_text.value_or(text), models::ClipTokenizer::kEos, kClipTokens);
  // As ComfyUI: padded to 256 tokens, longer prompts kept whole (up to 512, where Black
  // Forest Labs' dev reference stops).
  int64_t tokens = 0;
  std::vector<int64_t> t5 = t5_tokenizer_->encode(text, kT5MaxTokens, &tokens);
  t5.resize(static_cast<std::size_t>(std::max(tokens, t5_tokens_)));
  return encodeTokens(at::tensor(clip, ids).unsqueeze(0), at::tensor(t5, ids).unsqueeze(0));
}

int64_t FluxPipeline::promptWorkingBytes() const {
  // The encoders run one after the other.
  return std::max(models::clipWorkingBytes(clip_->config(), 1, text_dtype_),
                  models::umt5WorkingBytes(t5_->config(), t5_tokens_, text_dtype_));
}

LatentFormat FluxPipeline::latentFormat() const {
  const auto& c = vae_->config();
  // Packing takes 2x2 cells: sides snap to twice the VAE's factor.
  return {c.embed_dim, c.downscale(), 2 * c.downscale(), 0, c.scaling_factor, c.shift_factor};
}

sampling::FlowModelSampling FluxPipeline::modelSampling(const SampleRequest& r) const {
  if (r.flow_shift > 0) return sampling::FlowModelSampling::flux(r.flow_shift);
  if (!guidanceDistilled()) return sampling::FlowModelSampling::discrete(1.0);
  const int64_t cell = 2 * vae_->config().downscale();
  return sampling::FlowModelSampling::flux(sampling::fluxMu((r.height / cell) * (r.width / cell)));
}

at::Tensor FluxPipeline::sampleLatent(const SampleRequest& r, const SampleProgress& on_step) const {
  if (r.frames > 0)
    throw Error(ErrorKind::InvalidArgument,
                "an image model samples an image latent; a video latent needs a video model");
  const LatentFormat format = latentFormat();
  if (r.height < format.side_multiple || r.width < format.side_multiple ||
      r.height % format.side_multiple != 0 || r.width % format.side_multiple != 0)
    throw Error(ErrorKind::InvalidArgument, "FLUX.1 draws pictures whose sides are multiples of " +
                                                std::to_string(format.side_multiple) +
                                                " pixels, not " + std::to_string(r.width) + "x" +
                                                std::to_string(r.height));
  const sampling::SamplerKind kind = sampling::parseSampler(r.sampler);
  // Euler ancestral runs as ComfyUI runs it for flow models; the other samplers that add
  // noise have flow forms Kiln does not have.
  if (sampling::addsNoise(kind) && kind != sampling::SamplerKind::EulerAncestral)
    throw Error(ErrorKind::InvalidArgument,
                "'" + r.sampler +
                    "' adds noise the way diffusion models take it; FLUX.1 is a flow model: "
                    "choose euler, euler_ancestral, heun, dpm_2, dpmpp_2m, ddim, uni_pc or "
                    "uni_pc_bh2");
  const std::vector<double> all =
      sampling::flowSigmas(modelSampling(r), sampling::parseSchedule(r.scheduler), r.steps);
  const int64_t start = r.init ? r.init->start_step : 0;
  if (start < 0 || start >= static_cast<int64_t>(all.size()) - 1)
    throw Error(ErrorKind::InvalidArgument, "sampling cannot start at step " +
                                                std::to_string(start + 1) + " of " +
                                                std::to_string(r.steps));
  const std::vector<double> sigmas(all.begin() + start, all.end());
  const int64_t h = r.height / format.spatial, w = r.width / format.spatial;
  SeededNoise seeded = seededNoiseSource(r.seed, {1, format.channels, h, w});

  const at::Device device = memory::computeDevice();
  const at::Tensor noise = seeded.initial.to(device, at::kFloat);
  const at::Tensor clean = r.init ? r.init->latent.to(device, at::kFloat) : at::Tensor();
  const at::Tensor mask =
      r.init && r.init->mask.defined() ? r.init->mask.to(device, at::kFloat) : at::Tensor();
  // Flow noising: (1 - sigma) x0 + sigma noise.
  const auto noised = [&](double sigma) {
    return clean.defined() ? clean * (1 - sigma) + noise * sigma : noise * sigma;
  };
  const at::Tensor x = noised(sigmas.front());

  const bool guided = r.cfg != 1.0;
  const auto context = [&](const PromptEncoding& e) {
    if (!e.context.defined() || !e.pooled.defined())
      throw Error(ErrorKind::InvalidArgument,
                  "FLUX.1 needs prompts encoded by its own text encoders (T5 and CLIP-L)");
    return std::pair{e.context.to(device, dtype_), e.pooled.to(device, dtype_)};
  };
  const auto [pos_ctx, pos_pooled] = context(r.positive);
  at::Tensor neg_ctx, neg_pooled;
  if (guided) std::tie(neg_ctx, neg_pooled) = context(r.negative);
  const at::TensorOptions f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  models::FluxTransformer::Inputs in;
  in.img_ids = models::fluxImageIds(h, w).to(device);
  const double guidance = r.positive.guidance.value_or(kDefaultGuidance);
  if (guidanceDistilled()) in.guidance = at::full({1}, guidance, f32);
  const auto velocity = [&](const at::Tensor& latent, double sigma, const at::Tensor& ctx,
                            const at::Tensor& pooled) {
    in.img = models::packFluxLatent(latent.to(dtype_));
    in.txt = ctx;
    in.txt_ids = at::zeros({ctx.size(1), 3}, f32);
    in.pooled = pooled;
    in.timestep = at::full({1}, sigma, f32);
    return models::unpackFluxLatent(transformer_->forward(in).to(at::kFloat), h, w);
  };
  const sampling::DenoiseFn model = [&](const at::Tensor& x_now, double sigma) {
    core::checkInterrupt();
    const at::Tensor x_in = mask.defined() ? noised(sigma) * (1 - mask) + x_now * mask : x_now;
    at::Tensor v = velocity(x_in, sigma, pos_ctx, pos_pooled);
    if (guided) {
      const at::Tensor vu = velocity(x_in, sigma, neg_ctx, neg_pooled);
      v = vu + r.cfg * (v - vu);
    }
    const at::Tensor denoised = x_in - sigma * v;
    return mask.defined() ? denoised * mask + clean * (1 - mask) : denoised;
  };
  const auto steps_run = static_cast<int64_t>(sigmas.size()) - 1;
  const auto after_step = [&](const sampling::SamplerStep& s) {
    if (!at::isfinite(*s.x).all().item<bool>())
      throw Error(ErrorKind::NonFinite,
                  "NaN or infinity appeared in the latents at denoising step " +
                      std::to_string(s.step + 1) + "/" + std::to_string(steps_run) +
                      "; try float32 or bf16 compute");
    if (on_step) on_step({s.step, s.total, s.denoised});
  };
  at::Tensor out =
      kind == sampling::SamplerKind::EulerAncestral
          ? sampling::sampleEulerAncestralFlow(model, x, sigmas, seeded.more, after_step)
          : sampling::sampleSigmas(kind, model, x, sigmas, {}, after_step);
  if (mask.defined()) out = out * mask + clean * (1 - mask);
  return out;
}

int64_t FluxPipeline::sampleWorkingBytes(int64_t height, int64_t width, int64_t,
                                         int64_t context_tokens) const {
  const int64_t f = vae_->config().downscale();
  const int64_t h = height / f, w = width / f;
  const int64_t tokens = (h / 2) * (w / 2);
  // Beside one forward: the other guidance pass's result and the sampler's float32 latents.
  const int64_t latents = 12 * vae_->config().embed_dim * h * w * 4;
  return models::fluxTransformerWorkingBytes(transformer_->config(), tokens,
                                             std::max(context_tokens, t5_tokens_), dtype_) +
         latents;
}

std::string FluxPipeline::samplerLabel(const SampleRequest& r) const {
  return sampling::a1111SamplerName(sampling::parseSampler(r.sampler),
                                    sampling::parseSchedule(r.scheduler));
}

std::string FluxPipeline::parametersSuffix(const SampleRequest& r) const {
  std::string out;
  if (guidanceDistilled())
    out += ", Distilled CFG Scale: " + formatNumber(r.positive.guidance.value_or(kDefaultGuidance));
  if (r.flow_shift > 0) out += ", Shift: " + formatNumber(r.flow_shift);
  return out;
}

std::optional<VaeCodec> FluxPipeline::imageCodec() const {
  const auto& c = vae_->config();
  return VaeCodec{vae_.get(), vae_dtype_, c.scaling_factor, c.shift_factor};
}

at::Tensor FluxPipeline::previewRgb(const at::Tensor& latent) const {
  if (!preview_map_.defined())
    preview_map_ =
        fitPreviewMap(latent.size(1), [&](const at::Tensor& z) { return imageCodec()->decode(z); });
  return previewWithMap(preview_map_, latent);
}

}  // namespace kiln::pipelines
