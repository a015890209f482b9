// The Wan 2.1 text-to-video pipeline: tokenize and encode the prompts with UMT5, sample
// the transformer with classifier-free guidance over a flow-matching schedule, decode with
// the causal video VAE a few latent frames at a time. Each stage is a function the jobs
// reuse.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/render.h"
#include "models/text/t5_tokenizer.h"
#include "models/wan/wan_model.h"
#include "pipelines/common/pipeline.h"
#include "sampling/flow_match.h"

namespace kiln::pipelines {

// Where a video model's parts are. A diffusers WanPipeline folder holds them all; a
// single transformer file (ComfyUI's diffusion_models/) finds its VAE and UMT5 encoder
// in sibling folders (vae/ and text_encoders/ or clip/, a file whose name has "wan" and
// "vae", or "umt5") unless they are given.
struct WanModelPaths {
  std::string transformer, vae, text_encoder, tokenizer;
};

// Whether `path` is a Wan video model (a WanPipeline folder, a diffusers
// WanTransformer3DModel folder or a single file with Wan's transformer keys). Reads only
// configs and headers; false for anything unreadable.
bool isWanModel(const std::string& path);

// Throws kiln::Error(FileNotFound) naming the part it could not find and where it looked.
WanModelPaths resolveWanModel(const std::string& path, const std::string& vae = {},
                              const std::string& text_encoder = {});

// What Wan 2.1 draws when no size is asked: 832x480, 81 frames (5 seconds at 16 fps).
NativeSize wanNativeSize();

// Spatial tiles for decoding a video of latent_h x latent_w cells one chunk at a time:
// none with VaeTiling::Never; the given size (pixels, default 512) with Always; with Auto,
// none when a whole frame chunk's working set fits `available_bytes` (-1: unknown, so
// none), else the largest square tile whose working set fits. Overlap from the settings
// (pixels), at most a quarter tile.
models::WanSpatialTiles planVideoTiles(const models::WanVaeConfig& config, int64_t latent_h,
                                       int64_t latent_w, int64_t chunk_frames, at::ScalarType dtype,
                                       VaeTiling mode, int64_t tile_pixels, int64_t overlap_pixels,
                                       int64_t available_bytes);
struct WanSampleSettings {
  int64_t steps = 50;
  double guidance = 5.0;
  double shift = 5.0;
  sampling::FlowSolver solver = sampling::FlowSolver::UniPc;
};

class WanPipeline final : public Pipeline {
 public:
  using LoadProgress = std::function<void(std::size_t done, std::size_t total)>;
  // Loads the three parts (the transformer and text encoder in `dtype`; the VAE in
  // `vae_dtype`). Progress counts tensors over all of them.
  WanPipeline(const WanModelPaths& paths, at::ScalarType dtype, at::ScalarType vae_dtype,
              const LoadProgress& progress = {});
  WanPipeline(const WanPipeline&) = delete;
  WanPipeline& operator=(const WanPipeline&) = delete;

  const models::WanTransformer& transformer() const noexcept { return *transformer_; }
  const models::WanVae& vae() const noexcept { return *vae_; }
  const models::Umt5Encoder& textEncoder() const noexcept { return *text_; }
  const WanModelPaths& paths() const noexcept { return paths_; }
  std::string displayName() const override { return name_; }
  std::string kindName() const override { return "wan21"; }
  at::ScalarType dtype() const noexcept override { return dtype_; }
  // The UMT5 text encoder, the transformer and the VAE. The encoder (several GB, used once
  // per job) and the VAE rest in host memory unless the settings name them: the encoder
  // is offloaded leaf by leaf, the VAE onloaded whole for each decode when above the
  // resident threshold.
  std::vector<memory::ComponentInfo> components() const override;
  std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> sourceFiles() const override {
    return files_;
  }
  // The transformer's linear layers (Wan LoRAs train nothing else).
  std::optional<lora::LoraTargets> loraTargets() const override;
  const models::WanSamplingDefaults& defaults() const noexcept { return defaults_; }
  int64_t textLength() const noexcept { return text_len_; }
  // Pixels per latent cell times the patch: sides are multiples of this.
  int64_t spatialMultiple() const;
  int64_t temporalFactor() const { return vae_->config().temporalFactor(); }
  std::vector<std::string> notes() const override { return notes_; }

  // [1, text_len, text_dim]: the prompt's UMT5 encoding, rows past its tokens zero.
  at::Tensor encodePrompt(const std::string& text) const;

  // The latent [1, C, T, h, w] for `frames` (on the grid) of height x width (multiples of
  // spatialMultiple) from the seed's noise, guided by the positive and negative encodings.
  // on_step after each step may throw to stop.
  at::Tensor sample(const at::Tensor& positive, const at::Tensor& negative, int64_t frames,
                    int64_t height, int64_t width, int64_t seed, const WanSampleSettings& settings,
                    const std::function<void(const sampling::FlowStep&)>& on_step = {}) const;

  // Device memory beyond the weights that encoding a prompt, sampling `frames` frames of
  // height x width (on the grid; the transformer's activations and the sampler's float32
  // latents), and decoding one chunk of a latent frame in `tiles` need at their peak.
  int64_t encodingWorkingBytes() const;
  int64_t samplingWorkingBytes(int64_t frames, int64_t height, int64_t width) const;
  int64_t decodingWorkingBytes(int64_t height, int64_t width,
                               const models::WanSpatialTiles& tiles) const;

  // Decodes a latent (the transformer's space) chunk by chunk, in spatial tiles when
  // `tiles` says so; on_chunk gets each chunk's frames [1, 3, n, H, W] in [0, 1] and
  // on_tile follows each tile pass (either may throw to stop). Returns the frames decoded.
  int64_t decode(const at::Tensor& latent, int64_t chunk_frames,
                 const std::function<void(const at::Tensor& frames)>& on_chunk,
                 const models::WanSpatialTiles& tiles = {},
                 const std::function<void()>& on_tile = {}) const;

  // The family's side of Pipeline: a picture is a one-frame clip; the sampler names are
  // the flow solvers' (uni_pc, euler), the scheduler the flow shift's.
  LatentFormat latentFormat() const override;
  NativeSize nativeSize() const override;
  int64_t contextWidth() const override { return transformer_->config().text_dim; }
  PromptEncoding promptEncoding(const std::string& text,
                                const PromptOptions& options = {}) const override;
  int64_t promptWorkingBytes() const override { return encodingWorkingBytes(); }
  int64_t promptTokens() const override { return text_len_; }
  at::Tensor sampleLatent(const SampleRequest& request,
                          const SampleProgress& on_step = {}) const override;
  int64_t sampleWorkingBytes(int64_t height, int64_t width, int64_t frames,
                             int64_t context_tokens) const override;
  std::string samplerLabel(const SampleRequest& request) const override;
  std::string parametersSuffix(const SampleRequest& request) const override;
  ClipTiles planClipDecode(int64_t latent_h, int64_t latent_w, const tiling::TileSettings& tiling,
                           int64_t available_bytes) const override;
  int64_t clipDecodeWorkingBytes(int64_t height, int64_t width,
                                 const ClipTiles& tiles) const override;
  int64_t decodeClip(const at::Tensor& latent, const ClipTiles& tiles,
                     const std::function<void(const at::Tensor& frames)>& on_frames,
                     const std::function<void()>& on_tile = {}) const override;

 private:
  WanSampleSettings settingsFor(const SampleRequest& request) const;
  WanModelPaths paths_;
  std::string name_;
  at::ScalarType dtype_;
  std::optional<models::T5Tokenizer> tokenizer_;
  std::unique_ptr<models::Umt5Encoder> text_;
  at::ScalarType text_dtype_ = at::kFloat;  // what its weights were loaded in
  std::unique_ptr<models::WanTransformer> transformer_;
  std::unique_ptr<models::WanVae> vae_;
  models::WanSamplingDefaults defaults_;
  int64_t text_len_ = 512;
  std::vector<std::string> notes_;
  std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> files_;
};

}  // namespace kiln::pipelines
