// FLUX.1 text-to-image (dev and schnell): CLIP-L's pooled vector and T5 v1.1's sequence
// encode the prompt, the transformer samples the packed 16-channel latent over a
// flow-matching schedule with the resolution-dependent shift (dev) and distilled guidance
// as an input (dev; FluxGuidance, 3.5 unless the prompt says), and the 16-channel VAE
// decodes with FLUX's scaling and shift.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/flux/flux_transformer.h"
#include "models/text/clip_text.h"
#include "models/text/clip_tokenizer.h"
#include "models/text/t5_tokenizer.h"
#include "models/text/umt5.h"
#include "models/vae/autoencoder_kl.h"
#include "pipelines/common/pipeline.h"
#include "pipelines/flux/flux_files.h"
#include "sampling/flow_sigmas.h"

namespace kiln::pipelines {

// What FLUX.1 draws when no size is asked.
NativeSize fluxNativeSize();

class FluxPipeline final : public Pipeline {
 public:
  using LoadProgress = std::function<void(std::size_t done, std::size_t total)>;
  // Loads the four parts (the VAE in `vae_dtype`, the rest in `dtype`); progress counts
  // stored bytes over all of them. Throws kiln::Error for a missing, damaged or mismatched
  // part, naming it.
  FluxPipeline(const FluxModelPaths& paths, at::ScalarType dtype, at::ScalarType vae_dtype,
               const LoadProgress& progress = {});
  FluxPipeline(const FluxPipeline&) = delete;
  FluxPipeline& operator=(const FluxPipeline&) = delete;

  const models::FluxTransformer& transformer() const noexcept { return *transformer_; }
  const models::AutoencoderKL& vae() const noexcept { return *vae_; }
  const FluxModelPaths& paths() const noexcept { return paths_; }
  // dev (a guidance embedding) or schnell.
  bool guidanceDistilled() const { return transformer_->config().guidance; }
  int64_t t5Tokens() const noexcept { return t5_tokens_; }

  std::string displayName() const override { return name_; }
  std::string kindName() const override { return "flux1"; }
  at::ScalarType dtype() const noexcept override { return dtype_; }
  // CLIP-L, T5 (offloaded leaf by leaf unless the settings name it: 9.5 GB in fp16, used
  // once per prompt), the transformer and the VAE.
  std::vector<memory::ComponentInfo> components() const override;
  std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> sourceFiles() const override {
    return files_;
  }
  std::optional<lora::LoraTargets> loraTargets() const override;
  std::vector<std::string> notes() const override { return notes_; }

  // The encodings of token ids: CLIP-L's [1, 77] (pooled) and T5's [1, L] (the sequence,
  // without an attention mask, as FLUX was trained).
  PromptEncoding encodeTokens(const at::Tensor& clip_ids, const at::Tensor& t5_ids) const;
  // The model sampling the request's schedule comes from: the flow shift's ModelSamplingFlux
  // when given (ComfyUI's shift, which is mu), else dev's mu for the picture's tokens, or
  // schnell's unshifted table.
  sampling::FlowModelSampling modelSampling(const SampleRequest& request) const;

  LatentFormat latentFormat() const override;
  NativeSize nativeSize() const override { return fluxNativeSize(); }
  int64_t contextWidth() const override { return transformer_->config().context_dim; }
  PromptEncoding promptEncoding(const std::string& text,
                                const PromptOptions& options = {}) const override;
  int64_t promptWorkingBytes() const override;
  int64_t promptTokens() const override { return t5_tokens_; }
  // Guidance: the positive prompt's distilled guidance (dev), and true classifier-free
  // guidance with the negative prompt when cfg is not 1 (two transformer calls a step).
  at::Tensor sampleLatent(const SampleRequest& request,
                          const SampleProgress& on_step = {}) const override;
  int64_t sampleWorkingBytes(int64_t height, int64_t width, int64_t frames,
                             int64_t context_tokens) const override;
  std::string samplerLabel(const SampleRequest& request) const override;
  std::string parametersSuffix(const SampleRequest& request) const override;
  at::Tensor previewRgb(const at::Tensor& latent) const override;
  std::optional<VaeCodec> imageCodec() const override;

 private:
  FluxModelPaths paths_;
  std::string name_;
  at::ScalarType dtype_, vae_dtype_;
  at::ScalarType text_dtype_ = at::kFloat;  // what the encoders' weights were loaded in
  std::optional<models::ClipTokenizer> clip_tokenizer_;
  std::optional<models::T5Tokenizer> t5_tokenizer_;
  std::unique_ptr<models::ClipTextModel> clip_;
  std::unique_ptr<models::T5Encoder> t5_;
  std::unique_ptr<models::FluxTransformer> transformer_;
  std::unique_ptr<models::AutoencoderKL> vae_;
  int64_t t5_tokens_ = 256;  // T5's padded length (ComfyUI's); longer prompts stay whole
  std::vector<std::string> notes_;
  std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> files_;
  mutable at::Tensor preview_map_;  // latent -> RGB, fitted once
};

}  // namespace kiln::pipelines
