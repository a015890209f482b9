// What a model family draws with, as the nodes see every family alike: its latent format,
// the size it was trained for, prompt encoding, sampling a latent with guidance from two
// prompts, previews, and the VAE that turns its latents into pictures. SD 1.x/2.x/SDXL and
// Wan 2.1 implement it (pipelines/sd, pipelines/wan); a new family implements it in its own
// folder and registers itself (registry.cpp), and the nodes need no change.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "pipelines/common/model_parts.h"
#include "pipelines/common/vae_codec.h"
#include "sampling/schedule_config.h"
#include "sampling/steps.h"
#include "tiling/plan.h"

namespace kiln::models {
class EmbeddingLibrary;
}

namespace kiln::pipelines {

// The latent space a family's denoiser samples.
struct LatentFormat {
  int64_t channels = 0;
  int64_t spatial = 0;        // pixels per latent cell
  int64_t side_multiple = 0;  // picture sides snap down to a multiple of this
  int64_t temporal = 0;       // frames per latent frame after the first; 0: pictures only
  // Latents are (the VAE's - shift) * scaling_factor.
  double scaling_factor = 1, shift = 0;

  bool video() const noexcept { return temporal > 0; }
};

// Frames on a video grid of 1 + factor n: the nearest count, at least 1.
int64_t snapFrames(int64_t frames, int64_t factor);

// How a video family decodes a clip's latent: one latent frame at a time (its causal cache
// carried between), each in square spatial tiles of `tile` latent cells overlapping by
// `overlap` (tile 0: whole frames).
struct ClipTiles {
  int64_t tile = 0, overlap = 0;
};
// Tile passes per latent frame.
int64_t clipTilePasses(int64_t latent_h, int64_t latent_w, const ClipTiles& tiles);

// The size a model was trained to draw: what a render that asks for no size draws.
struct NativeSize {
  int64_t width = 512, height = 512;
  int64_t frames = 1;  // a video family's clip length
};

// SDXL's size conditioning ("micro-conditioning"): the size the image pretends to come
// from, the crop taken from it, and the target size. Defaults: no crop, original = target.
// The SDXL refiner takes an aesthetic score per prompt in place of the target size (the
// defaults are diffusers': 6 for the prompt, 2.5 for the negative). Families without it
// ignore it.
struct SizeConditioning {
  int64_t original_height = 0, original_width = 0;
  int64_t crop_top = 0, crop_left = 0;
  int64_t target_height = 0, target_width = 0;
  double aesthetic_score = 6.0, negative_aesthetic_score = 2.5;

  static SizeConditioning forImage(int64_t height, int64_t width) {
    return {height, width, 0, 0, height, width};
  }
};

struct PromptOptions {
  // Take the text encoder's output this many layers from its end (families whose encoder
  // uses its last layer; 1: the last).
  int clip_skip = 1;
  // Textual-inversion embeddings a prompt may name (families with a CLIP tokenizer).
  const models::EmbeddingLibrary* embeddings = nullptr;
  // Families whose pooled vector has an encoder of its own (FLUX's CLIP-L beside T5): the
  // text that encoder gets (ComfyUI's CLIPTextEncodeFlux clip_l); unset: the prompt.
  std::optional<std::string> pooled_text;
};

// One prompt as the family's denoiser takes it.
struct PromptEncoding {
  at::Tensor context;  // [1, tokens, contextWidth()]
  at::Tensor pooled;   // [1, P] where the family has a pooled vector (SDXL, FLUX), else undefined
  // Distilled guidance the denoiser takes as an input (FLUX.1 dev; ComfyUI's FluxGuidance
  // sets it on the conditioning); unset: the family's default.
  std::optional<double> guidance = std::nullopt;
};

// One latent to sample: from the seed's noise, guided by two prompts.
struct SampleRequest {
  PromptEncoding positive, negative;
  double cfg = 7.0;
  SizeConditioning sizes;  // families with size conditioning (SDXL)
  // Pixels; frames 0 for a picture's latent, else a video's (on the family's grid).
  int64_t height = 0, width = 0, frames = 0;
  // The generator's seed: its first draw is the initial noise, later ones what the
  // sampler adds (as torch.manual_seed(seed) then torch.randn).
  int64_t seed = 0;
  int64_t steps = 20;
  // ComfyUI's sampler and scheduler names (sampling/sampler_names.h); a family maps them
  // to the solvers it has and refuses those it has not.
  std::string sampler = "euler", scheduler = "normal";
  // Image-to-image and inpainting: sampling from a picture's latent (families that have it).
  const sampling::LatentInit* init = nullptr;
  // What the model predicts and whether its schedule is rescaled to zero terminal SNR,
  // when not what the checkpoint says (noise-prediction families).
  std::optional<sampling::Prediction> prediction;
  std::optional<bool> zero_terminal_snr;
  double flow_shift = 0;  // flow-matching families: the schedule's shift; 0: the model's
};

// After each step: its number (from 0), the steps in all, the clean estimate where the
// sampler has one (for previews). May throw to stop.
struct SampleStep {
  int64_t step = 0, total = 0;
  const at::Tensor* denoised = nullptr;
};
using SampleProgress = std::function<void(const SampleStep&)>;

class Pipeline : public ModelParts {
 public:
  virtual LatentFormat latentFormat() const = 0;
  virtual NativeSize nativeSize() const = 0;
  // The width of the prompt encodings its denoiser takes.
  virtual int64_t contextWidth() const = 0;

  // A prompt, with the family's prompt syntax, encoded by its text encoders.
  virtual PromptEncoding promptEncoding(const std::string& text,
                                        const PromptOptions& options = {}) const = 0;
  // Device memory beyond the weights that encoding one prompt needs at its peak.
  virtual int64_t promptWorkingBytes() const = 0;
  // The tokens one prompt's encoding usually has (a CLIP window's 77; a T5 encoder's
  // padded length): what working-memory estimates assume before a prompt is encoded.
  virtual int64_t promptTokens() const { return 77; }

  // The latent [1, C, h, w] (a video's [1, C, T, h, w]) sampled as `request` asks.
  virtual at::Tensor sampleLatent(const SampleRequest& request,
                                  const SampleProgress& on_step = {}) const = 0;
  // Device memory beyond the weights that sampling a latent of height x width pixels
  // (frames: 0 for a picture) guided by prompts of `context_tokens` tokens needs at its peak.
  virtual int64_t sampleWorkingBytes(int64_t height, int64_t width, int64_t frames,
                                     int64_t context_tokens) const = 0;
  // The A1111 "Sampler" name of what `request` runs, and the further "Key: value" pairs
  // its parameters text carries (", Frames: 81, Shift: 5"; empty for none).
  virtual std::string samplerLabel(const SampleRequest& request) const = 0;
  virtual std::string parametersSuffix(const SampleRequest&) const { return {}; }

  // A cheap picture of a sampled latent [1, C, h, w]: RGB [h, w, 3] in [0, 1] at latent
  // resolution; undefined where the family has no previews.
  virtual at::Tensor previewRgb(const at::Tensor&) const { return {}; }
  // The VAE that turns its picture latents into pictures and back, with its latent
  // scaling; none for a video family, whose VAE decodes clips.
  virtual std::optional<VaeCodec> imageCodec() const { return std::nullopt; }

  // Video families' clip decoding (others throw kiln::Error(InvalidArgument)): the tiles
  // for a clip of latent_h x latent_w cells with `tiling`, given `available_bytes` for the
  // work (-1: unknown: whole frames in auto mode); the device memory beyond the weights one
  // pass over a height x width clip needs; and the decode, where on_frames gets each
  // latent frame's frames [1, 3, n, H, W] in [0, 1] and on_tile follows each tile pass
  // (either may throw to stop). Returns the frames decoded.
  virtual ClipTiles planClipDecode(int64_t latent_h, int64_t latent_w,
                                   const tiling::TileSettings& tiling,
                                   int64_t available_bytes) const;
  virtual int64_t clipDecodeWorkingBytes(int64_t height, int64_t width,
                                         const ClipTiles& tiles) const;
  virtual int64_t decodeClip(const at::Tensor& latent, const ClipTiles& tiles,
                             const std::function<void(const at::Tensor& frames)>& on_frames,
                             const std::function<void()>& on_tile = {}) const;
};

}  // namespace kiln::pipelines
