#include "pipelines/wan/wan_pipeline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/interrupt.h"
#include "core/json_file.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "models/common/model_files.h"
#include "models/vae/vae_tiling.h"
#include "pipelines/common/noise.h"
#include "pipelines/wan/wan_lora_targets.h"
#include "tensor_io/safetensors.h"

namespace kiln::pipelines {

namespace fs = std::filesystem;

namespace {

bool isDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

template <typename Model, typename Component>
std::unique_ptr<Model> loadComponent(const Component& c, at::ScalarType dtype,
                                     const std::vector<std::string>& ignored,
                                     const std::string& what, std::size_t& done, std::size_t total,
                                     const WanPipeline::LoadProgress& progress) {
  auto model = std::make_unique<Model>(c.config, "");
  weights::LoadOptions opts;
  opts.dtype = dtype;
  opts.owned_prefixes = {""};
  opts.ignored.insert(ignored.begin(), ignored.end());
  const std::size_t base = done;
  const std::size_t count = model->params().slots().size();
  if (progress)
    opts.progress = [&, base, count](std::size_t bytes_done, std::size_t bytes_total) {
      // the loader reports bytes; the job counts tensors of all three parts
      const std::size_t part = bytes_total == 0 ? count : count * bytes_done / bytes_total;
      progress(base + part, total);
    };
  weights::loadParams(model->params(), c.index, opts, what);
  done = base + count;
  return model;
}

}  // namespace

bool isWanModel(const std::string& path) {
  const fs::path p(path);
  if (isDir(p)) {
    if (models::diffusersClass(p / "model_index.json") == "WanPipeline") return true;
    return models::diffusersClass(p / "config.json") == "WanTransformer3DModel" ||
           models::diffusersClass(p / "transformer" / "config.json") == "WanTransformer3DModel";
  }
  try {
    const auto file = tensor_io::SafetensorsFile::open(path);
    for (const char* prefix : {"", "model.diffusion_model."}) {
      const std::string pre(prefix);
      if (file->find(pre + "patch_embedding.weight") &&
          file->find(pre + "blocks.0.self_attn.q.weight") && file->find(pre + "head.modulation"))
        return true;
    }
  } catch (const Error&) {
  }
  return false;
}

WanModelPaths resolveWanModel(const std::string& path, const std::string& vae,
                              const std::string& text_encoder) {
  WanModelPaths out;
  out.transformer = path;
  const fs::path p(path);
  if (isDir(p)) {
    out.vae = vae.empty() ? path : vae;
    out.text_encoder = text_encoder.empty() ? path : text_encoder;
  } else {
    const fs::path here = p.parent_path(), root = here.parent_path();
    out.vae = vae.empty()
                  ? models::findModelFile({here, root / "vae", root / "VAE"}, {"wan", "vae"})
                  : vae;
    if (out.vae.empty())
      throw Error(ErrorKind::FileNotFound, "no Wan VAE found for '" + path +
                                               "' (looked for a .safetensors file named "
                                               "like wan_2.1_vae in " +
                                               here.string() + " and " + (root / "vae").string() +
                                               "); give one with --vae");
    out.text_encoder =
        text_encoder.empty()
            ? models::findModelFile({here, root / "text_encoders", root / "clip"}, {"umt5"})
            : text_encoder;
    if (out.text_encoder.empty())
      throw Error(ErrorKind::FileNotFound,
                  "no UMT5 text encoder found for '" + path +
                      "' (looked for a .safetensors file named like umt5_xxl in " + here.string() +
                      " and " + (root / "text_encoders").string() +
                      "); give one with --text-encoder");
  }
  out.tokenizer = models::findT5TokenizerModel(out.text_encoder);
  return out;
}

WanPipeline::WanPipeline(const WanModelPaths& paths, at::ScalarType dtype, at::ScalarType vae_dtype,
                         const LoadProgress& progress)
    : paths_(paths), dtype_(dtype) {
  // The parts' headers and configs first: a damaged model is named before a missing file.
  const auto t = models::openWanTransformer(paths_.transformer);
  const auto v = models::openWanVae(paths_.vae);
  const auto u = models::openUmt5(paths_.text_encoder);
  if (paths_.tokenizer.empty())
    throw Error(ErrorKind::FileNotFound,
                "no UMT5 tokenizer (spiece.model) beside '" + paths_.text_encoder +
                    "'; put the sentencepiece model of google/umt5-xxl there as "
                    "spiece.model (or tokenizer/spiece.model)");
  tokenizer_ = models::T5Tokenizer::open(paths_.tokenizer);
  if (u.config.d_model != t.config.text_dim)
    throw Error(ErrorKind::ShapeMismatch, "the text encoder '" + paths_.text_encoder + "' gives " +
                                              std::to_string(u.config.d_model) +
                                              "-wide encodings but the transformer expects " +
                                              std::to_string(t.config.text_dim));
  if (v.config.z_dim != t.config.in_channels || v.config.z_dim != t.config.out_channels)
    throw Error(ErrorKind::ShapeMismatch, "the VAE '" + paths_.vae + "' has " +
                                              std::to_string(v.config.z_dim) +
                                              " latent channels but the transformer works on " +
                                              std::to_string(t.config.in_channels));
  if (tokenizer_->vocabSize() > u.config.vocab)
    throw Error(ErrorKind::ShapeMismatch, "the tokenizer '" + paths_.tokenizer + "' has " +
                                              std::to_string(tokenizer_->vocabSize()) +
                                              " pieces but the text encoder knows " +
                                              std::to_string(u.config.vocab));
  for (const auto* notes : {&t.notes, &v.notes, &u.notes})
    notes_.insert(notes_.end(), notes->begin(), notes->end());
  text_len_ = t.config.text_len;
  defaults_ = models::wanSamplingDefaults(paths_.transformer);
  notes_.push_back(defaults_.note);
  const fs::path tp(paths_.transformer);
  name_ = tp.has_extension() ? tp.stem().string()
                             : (tp.filename().empty() ? tp.parent_path() : tp).filename().string();

  for (const auto* index : {&t.index, &v.index, &u.index})
    for (auto& f : index->files()) files_.push_back(std::move(f));
  const std::size_t total = u.index.size() + t.index.size() + v.index.size();
  std::size_t done = 0;
  {
    const models::Umt5Encoder probe(u.config, "");
    text_ = loadComponent<models::Umt5Encoder>(u, dtype, probe.ignoredKeys(), "text encoder", done,
                                               total, progress);
    // Read now: offload replaces the tensors while the model is in use.
    text_dtype_ = text_->params().slots().front().tensor->scalar_type();
  }
  core::checkInterrupt();
  transformer_ =
      loadComponent<models::WanTransformer>(t, dtype, {}, "transformer", done, total, progress);
  core::checkInterrupt();
  vae_ = loadComponent<models::WanVae>(v, vae_dtype, {}, "VAE", done, total, progress);
  if (progress) progress(total, total);
}

int64_t WanPipeline::spatialMultiple() const {
  const auto& p = transformer_->config().patch;
  return vae_->config().spatialFactor() * std::max(p[1], p[2]);
}

at::Tensor WanPipeline::encodePrompt(const std::string& text) const {
  const std::vector<int64_t> ids = tokenizer_->encode(text, text_len_);
  const at::Tensor t =
      at::tensor(ids, at::TensorOptions().dtype(at::kLong).device(memory::computeDevice()))
          .unsqueeze(0);
  return text_->encode(t);
}

at::Tensor WanPipeline::sample(
    const at::Tensor& positive, const at::Tensor& negative, int64_t frames, int64_t height,
    int64_t width, int64_t seed, const WanSampleSettings& settings,
    const std::function<void(const sampling::FlowStep&)>& on_step) const {
  const auto& tc = transformer_->config();
  const int64_t s = vae_->config().spatialFactor(), tf = temporalFactor();
  if ((frames - 1) % tf != 0 || height % spatialMultiple() != 0 || width % spatialMultiple() != 0)
    throw Error(ErrorKind::InvalidArgument,
                "video size must be on the model's grid (1 + " + std::to_string(tf) +
                    "n frames, sides multiples of " + std::to_string(spatialMultiple()) + ")");
  const at::Tensor noise = seededNoise(
      seed, {1, tc.in_channels, vae_->config().latentFrames(frames), height / s, width / s});
  const sampling::FlowSchedule schedule =
      settings.solver == sampling::FlowSolver::UniPc
          ? sampling::unipcFlowSchedule(settings.steps, settings.shift)
          : sampling::eulerFlowSchedule(settings.steps, settings.shift);
  // The sampler's state lives on the compute device; the prompts arrive from the host.
  const at::Device device = memory::computeDevice();
  const at::Tensor pos = positive.to(device), neg = negative.to(device);
  return sampling::sampleFlow(
      settings.solver, schedule,
      [&](const at::Tensor& x, int64_t step) {
        core::checkInterrupt();
        const at::Tensor t = at::full({1}, schedule.timesteps[static_cast<std::size_t>(step)],
                                      x.options().dtype(at::kFloat));
        const at::Tensor vc = transformer_->forward(x, t, pos).to(at::kFloat);
        if (settings.guidance == 1.0) return vc;
        const at::Tensor vu = transformer_->forward(x, t, neg).to(at::kFloat);
        return vu + settings.guidance * (vc - vu);
      },
      noise.to(device), on_step);
}

int64_t WanPipeline::encodingWorkingBytes() const {
  return models::umt5WorkingBytes(text_->config(), text_len_, text_dtype_);
}

int64_t WanPipeline::samplingWorkingBytes(int64_t frames, int64_t height, int64_t width) const {
  const auto& tc = transformer_->config();
  const int64_t s = vae_->config().spatialFactor();
  const int64_t lf = vae_->config().latentFrames(frames), lh = height / s, lw = width / s;
  // Beside one forward: the other guidance pass's float32 result and the sampler's latents.
  const int64_t latents = 12 * tc.in_channels * lf * lh * lw * 4;
  return models::wanTransformerWorkingBytes(tc, lf, lh, lw, text_len_, dtype_) + latents;
}

int64_t WanPipeline::decodingWorkingBytes(int64_t height, int64_t width,
                                          const models::WanSpatialTiles& tiles) const {
  const int64_t s = vae_->config().spatialFactor();
  const int64_t lh = height / s, lw = width / s;
  const int64_t th = tiles.tile > 0 ? std::min(tiles.tile, lh) : lh,
                tw = tiles.tile > 0 ? std::min(tiles.tile, lw) : lw;
  // One tile's working set beside the whole chunk's float32 frames.
  return models::wanDecodeChunkBytes(vae_->config(), th, tw, 1,
                                     vae_->params().slots().front().tensor->scalar_type()) +
         3 * vae_->config().temporalFactor() * height * width * 4;
}

int64_t WanPipeline::decode(const at::Tensor& latent, int64_t chunk_frames,
                            const std::function<void(const at::Tensor& frames)>& on_chunk,
                            const models::WanSpatialTiles& tiles,
                            const std::function<void()>& on_tile) const {
  int64_t count = 0;
  const at::Tensor z = vae_->denormalize(latent.to(memory::computeDevice(), at::kFloat));
  vae_->decodeRaw(
      z, chunk_frames,
      [&](const at::Tensor& frames) {
        const at::Tensor rgb = ((frames.to(at::kFloat).clamp(-1, 1) + 1) * 0.5).cpu();
        count += rgb.size(2);
        on_chunk(rgb);
      },
      tiles, on_tile);
  return count;
}

models::WanSpatialTiles planVideoTiles(const models::WanVaeConfig& config, int64_t latent_h,
                                       int64_t latent_w, int64_t chunk_frames, at::ScalarType dtype,
                                       VaeTiling mode, int64_t tile_pixels, int64_t overlap_pixels,
                                       int64_t available_bytes) {
  const int64_t s = config.spatialFactor();
  models::WanSpatialTiles t;
  if (mode == VaeTiling::Never) return t;
  const auto withOverlap = [&](int64_t tile) {
    t.tile = tile;
    t.overlap = std::min(std::max<int64_t>(overlap_pixels / s, 0), tile / 4);
    return t;
  };
  if (mode == VaeTiling::Always)
    return withOverlap(std::max<int64_t>(1, (tile_pixels > 0 ? tile_pixels : 512) / s));
  const auto fits = [&](int64_t th, int64_t tw, bool whole) {
    // a tiled chunk also holds the whole chunk's float32 sum and weights
    const int64_t frames = chunk_frames * config.temporalFactor();
    const int64_t extra = whole ? 0 : 4 * frames * latent_h * s * latent_w * s * 4;
    return models::wanDecodeChunkBytes(config, th, tw, chunk_frames, dtype) + extra <=
           available_bytes;
  };
  if (available_bytes < 0 || fits(latent_h, latent_w, true)) return t;
  for (int64_t tile = std::min(latent_h, latent_w) - 1; tile >= 4; --tile)
    if (fits(tile, tile, false)) return withOverlap(tile);
  return withOverlap(4);  // the smallest sensible tile; if even that fails, the error says so
}

std::vector<memory::ComponentInfo> WanPipeline::components() const {
  return {{"text_encoder", "UMT5EncoderModel", memory::ComponentRole::TextEncoder, &text_->params(),
           true},
          {"transformer", "WanTransformer3DModel", memory::ComponentRole::Denoiser,
           &transformer_->params(), false},
          {"vae", "AutoencoderKLWan", memory::ComponentRole::Vae, &vae_->params(), true}};
}

std::optional<lora::LoraTargets> WanPipeline::loraTargets() const {
  return wanLoraTargets(*transformer_);
}

LatentFormat WanPipeline::latentFormat() const {
  // Scaling 1, shift 0: the VAE normalises each channel by its own mean and std itself.
  return {vae_->config().z_dim, vae_->config().spatialFactor(), spatialMultiple(), temporalFactor(),
          1.0};
}

NativeSize wanNativeSize() {
  return {832, 480, 81};
}

NativeSize WanPipeline::nativeSize() const {
  return wanNativeSize();
}

PromptEncoding WanPipeline::promptEncoding(const std::string& text, const PromptOptions&) const {
  return {encodePrompt(text), {}, std::nullopt};
}

WanSampleSettings WanPipeline::settingsFor(const SampleRequest& r) const {
  WanSampleSettings settings;
  settings.steps = r.steps;
  settings.guidance = r.cfg;
  settings.shift = r.flow_shift > 0 ? r.flow_shift : defaults_.flow_shift;
  settings.solver = sampling::flowSolverNamed(r.sampler);
  return settings;
}

at::Tensor WanPipeline::sampleLatent(const SampleRequest& r, const SampleProgress& on_step) const {
  if (r.init)
    throw Error(ErrorKind::InvalidArgument,
                "this video model samples from noise only; it has no image-to-image");
  return sample(r.positive.context, r.negative.context, std::max<int64_t>(r.frames, 1), r.height,
                r.width, r.seed, settingsFor(r), [&](const sampling::FlowStep& s) {
                  if (on_step) on_step({s.step, s.total, nullptr});
                });
}

int64_t WanPipeline::sampleWorkingBytes(int64_t height, int64_t width, int64_t frames,
                                        int64_t) const {
  return samplingWorkingBytes(std::max<int64_t>(frames, 1), height, width);
}

std::string WanPipeline::samplerLabel(const SampleRequest& r) const {
  return settingsFor(r).solver == sampling::FlowSolver::UniPc ? "UniPC" : "Euler";
}

std::string WanPipeline::parametersSuffix(const SampleRequest& r) const {
  return ", Frames: " + std::to_string(std::max<int64_t>(r.frames, 1)) +
         ", Shift: " + formatNumber(settingsFor(r).shift);
}

ClipTiles WanPipeline::planClipDecode(int64_t latent_h, int64_t latent_w,
                                      const tiling::TileSettings& tiling,
                                      int64_t available_bytes) const {
  const models::WanSpatialTiles t = planVideoTiles(
      vae_->config(), latent_h, latent_w, 1, vae_->params().slots().front().tensor->scalar_type(),
      tiling.mode, tiling.tile_pixels, tiling.overlap_pixels, available_bytes);
  return {t.tile, t.overlap};
}

int64_t WanPipeline::clipDecodeWorkingBytes(int64_t height, int64_t width,
                                            const ClipTiles& tiles) const {
  return decodingWorkingBytes(height, width, {tiles.tile, tiles.overlap});
}

int64_t WanPipeline::decodeClip(const at::Tensor& latent, const ClipTiles& tiles,
                                const std::function<void(const at::Tensor&)>& on_frames,
                                const std::function<void()>& on_tile) const {
  return decode(latent, 1, on_frames, {tiles.tile, tiles.overlap}, on_tile);
}

}  // namespace kiln::pipelines
