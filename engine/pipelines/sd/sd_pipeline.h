// The SD-family text-to-image pipeline: tokenize and encode the prompts, sample with
// classifier-free guidance, decode. Each stage is a function the nodes and jobs reuse.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/sd/sd_checkpoint.h"
#include "models/text/clip_text.h"
#include "models/text/clip_tokenizer.h"
#include "models/text/embeddings.h"
#include "models/unet/unet.h"
#include "models/vae/vae_tiling.h"
#include "pipelines/common/noise.h"
#include "pipelines/common/pipeline.h"
#include "pipelines/common/vae_codec.h"
#include "sampling/k_samplers.h"
#include "sampling/sigmas.h"
#include "sampling/steps.h"

namespace kiln::pipelines {

struct Conditioning {
  at::Tensor context;  // [2, 77, C]: negative, positive (the CFG batch order)
  at::Tensor pooled;   // [2, P] for SDXL, undefined otherwise
};

// Which sampler walks which schedule. The defaults are what diffusers' Euler computes
// with the model's own scheduler config (the conformance reference).
struct SamplerSettings {
  sampling::SamplerKind sampler = sampling::SamplerKind::Euler;
  sampling::Schedule schedule = sampling::Schedule::Diffusers;
  // Noise for samplers that add it, drawn after the initial noise (see k_samplers.h).
  sampling::NoiseFn noise;
  // What the model predicts and whether its schedule is rescaled to zero terminal SNR,
  // when not what the checkpoint says.
  std::optional<sampling::Prediction> prediction;
  std::optional<bool> zero_terminal_snr;
};

struct TextEncoding {
  std::vector<at::Tensor> ids;  // per encoder, [B, 77]
  std::vector<models::ClipTextOutput> outputs;
  at::Tensor context;  // [B, 77, C]
  at::Tensor pooled;   // [B, P] (SDXL)
};

class SdPipeline final : public Pipeline {
 public:
  // Bytes of the file read so far, of all the components' bytes.
  using LoadProgress = std::function<void(std::size_t done, std::size_t total)>;
  // Materialises every component (weights converted to dtype on CPU).
  SdPipeline(models::Checkpoint checkpoint, at::ScalarType dtype,
             const LoadProgress& progress = {});
  ~SdPipeline() override;

  const models::SdModelSpec& spec() const noexcept { return checkpoint_.spec; }
  const models::Checkpoint& checkpoint() const noexcept { return checkpoint_; }
  at::ScalarType dtype() const noexcept override { return dtype_; }
  const models::UNetModel& unet() const noexcept { return *unet_; }
  const models::AutoencoderKL& vae() const noexcept { return *vae_; }
  const models::ClipTextModel& textEncoder(std::size_t i) const { return *text_.at(i); }

  // Encodes each prompt (rows of the result follow the order of `prompts`).
  TextEncoding encodeText(const std::vector<std::string>& prompts) const;
  // A prompt with emphasis syntax (models/text/prompt_weights.h), split into windows of
  // 75 tokens (a BREAK starts a new one), each encoded as BOS + tokens + EOS + padding and
  // weighted as A1111 does: each token's vector times its weight, then the window scaled
  // back to its unweighted mean. Context [1, 77 * windows, C]; pooled from the first
  // window. clip_skip > 1 takes the output that many layers from the end, through the
  // final layer norm, for encoders that use the last layer (SD 1.x).
  // Textual-inversion embeddings named in the prompt come from `embeddings` (see
  // models/text/embeddings.h); an embedding is not split across windows.
  TextEncoding encodeWeighted(const std::string& prompt, int clip_skip = 1,
                              const models::EmbeddingLibrary* embeddings = nullptr) const;
  // [negative, positive] conditioning for CFG, the prompts taken literally (as diffusers
  // does).
  Conditioning encodePrompts(const std::string& prompt, const std::string& negative) const;
  // [2, 6] for SDXL (the same row twice); [2, 5] with the aesthetic scores for the
  // refiner: the negative's row, then the prompt's (the CFG batch order).
  static at::Tensor timeIds(const SizeConditioning& sizes, bool aesthetic = false);

  // CFG sampling from the given initial noise [1, 4, h, w]; with `init`, from a
  // picture's latent (image-to-image; inpainting, where the kept area is held at the
  // picture noised to each model call's level and the result is the picture there).
  at::Tensor sample(const Conditioning& cond, const at::Tensor& noise, int64_t steps,
                    double cfg_scale, const SizeConditioning& sizes,
                    const std::function<void(const sampling::StepInfo&)>& on_step = {},
                    const sampling::LatentInit* init = nullptr,
                    const SamplerSettings& settings = {}) const;
  // The VAE with this model's latent scaling.
  VaeCodec codec() const {
    return {vae_.get(), vaeComputeDtype(dtype_), checkpoint_.spec.vae.scaling_factor};
  }
  // Scaled latent -> image [B, 3, H, W] in ~[-1, 1] (raw VAE output, float32); in tiles
  // when `tiles` is given, calling `progress` after each.
  at::Tensor decode(const at::Tensor& latent, const tiling::Tiles* tiles = nullptr,
                    const tiling::TileProgress& progress = {}) const;
  // Image [B, 3, H, W] in [-1, 1] (sides multiples of the VAE's downscale) -> scaled
  // latent: the mean of the VAE's latent distribution, as image-to-image uses it.
  at::Tensor encode(const at::Tensor& image, const tiling::Tiles* tiles = nullptr,
                    const tiling::TileProgress& progress = {}) const;
  // A cheap picture of a scaled latent [1, C, h, w]: RGB [h, w, 3] in [0, 1] at latent
  // resolution, through a linear map fitted once to this model's VAE decoder.
  at::Tensor previewRgb(const at::Tensor& latent) const override;

  // Device memory beyond the weights that encoding a prompt of `windows` 77-token
  // windows, and sampling one image of a latent_h x latent_w latent (the CFG batch of two,
  // conditioning of `context_tokens` tokens, the sampler's own latents) need at their peak.
  int64_t encodingWorkingBytes(int64_t windows = 1) const;
  int64_t samplingWorkingBytes(int64_t latent_h, int64_t latent_w,
                               int64_t context_tokens = 77) const;
  // The text encoders ("text_encoder", "text_encoder_2"), the UNet and the VAE.
  std::vector<memory::ComponentInfo> components() const override;
  std::string displayName() const override { return checkpoint_.display_name; }
  std::string kindName() const override;
  std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> sourceFiles() const override;
  std::optional<lora::LoraTargets> loraTargets() const override;

  // The family's side of Pipeline: the stages above with ComfyUI's sampler and scheduler
  // names, the prompt with emphasis syntax (encodeWeighted).
  LatentFormat latentFormat() const override;
  NativeSize nativeSize() const override;
  int64_t contextWidth() const override { return unet_->config().context_dim; }
  PromptEncoding promptEncoding(const std::string& text,
                                const PromptOptions& options = {}) const override;
  int64_t promptWorkingBytes() const override { return encodingWorkingBytes(); }
  at::Tensor sampleLatent(const SampleRequest& request,
                          const SampleProgress& on_step = {}) const override;
  int64_t sampleWorkingBytes(int64_t height, int64_t width, int64_t frames,
                             int64_t context_tokens) const override;
  std::string samplerLabel(const SampleRequest& request) const override;
  std::optional<VaeCodec> imageCodec() const override { return codec(); }

 private:
  models::Checkpoint checkpoint_;
  at::ScalarType dtype_;
  models::ClipTokenizer tokenizer_;
  std::vector<std::unique_ptr<models::ClipTextModel>> text_;
  std::unique_ptr<models::UNetModel> unet_;
  std::unique_ptr<models::AutoencoderKL> vae_;
  // The hidden state of encoder `encoder` that conditions the UNet (its TextOutput; for
  // encoders using the last layer, clip_skip > 1 takes an earlier one through the norm).
  at::Tensor contextOf(std::size_t encoder, const models::ClipTextOutput& out, int clip_skip) const;
  mutable at::Tensor preview_map_;  // [C + 1, 3]: latent channels and a bias -> RGB
};

// The two contexts at one length for a CFG batch: the shorter one repeated, as ComfyUI
// does when prompts span different numbers of windows. Returns [negative, positive].
at::Tensor batchContexts(const at::Tensor& negative, const at::Tensor& positive);

}  // namespace kiln::pipelines
