// Where a FLUX.1 model's parts are on disk, and their tensors under the names Kiln's
// modules register. The transformer comes as Black Forest Labs ship it
// (flux1-dev.safetensors, ComfyUI's diffusion_models/ and unet/), inside ComfyUI's
// all-in-one checkpoint (model.diffusion_model., text_encoders.clip_l., text_encoders.t5xxl.,
// vae.), or as a diffusers FluxPipeline folder (transformer/, vae/, text_encoder/,
// text_encoder_2/, tokenizer_2/). Weights may be fp8 (float8_e4m3fn), with or without
// per-tensor scales: they are upcast to the compute dtype as they load.
#pragma once

#include <string>
#include <vector>

#include "tensor_io/tensor_index.h"

namespace kiln::pipelines {

// The parts: each a .safetensors file or a diffusers component folder; in an all-in-one
// checkpoint every part is the same file.
struct FluxModelPaths {
  std::string transformer, vae, clip_l, t5;
  std::string t5_tokenizer;  // spiece.model
};

// Whether `path` is a FLUX.1 model (a FluxPipeline folder, a diffusers
// FluxTransformer2DModel folder, or a single file with FLUX's transformer in either
// layout, with or without ComfyUI's prefix). Reads only configs and headers; false for
// anything unreadable.
bool isFluxModel(const std::string& path);

// Every part of the model at `path`, the given ones taking precedence. A single transformer
// file finds the others beside it or in ComfyUI's sibling folders: the VAE in vae/ (ae.safetensors,
// or a name with "flux" and "vae"), CLIP-L and T5 in text_encoders/ or clip/ (names with
// "clip_l" and "t5"). Throws kiln::Error(FileNotFound) naming the part it could not find,
// where it looked and the option that gives it.
FluxModelPaths resolveFluxModel(const std::string& path, const std::string& vae = {},
                                const std::string& clip_l = {}, const std::string& t5 = {});

// One part's tensors under Kiln's names (scaled fp8 weights folded into their scales):
// the transformer under BFL's names, CLIP-L under "text_model.", T5 under "encoder." and
// "shared.", the VAE under ldm's names. Throws kiln::Error: FileNotFound, CorruptFile,
// UnsupportedModel naming the part and what the file holds.
struct FluxPartIndex {
  tensor_io::TensorIndex index;
  int64_t scaled = 0;  // fp8 weights with per-tensor scales
  std::vector<std::string> notes;
};
FluxPartIndex openFluxTransformer(const std::string& path);
FluxPartIndex openFluxClip(const std::string& path);
FluxPartIndex openFluxT5(const std::string& path);
FluxPartIndex openFluxVae(const std::string& path);

// Whether the transformer at `path` has a guidance embedding (dev; schnell has none).
// Throws kiln::Error as openFluxTransformer does.
bool fluxHasGuidance(const std::string& path);

// CLIP-L's attention heads: a diffusers folder's config.json, or num_attention_heads in a
// "<stem>.json" beside a single file; else 0 (the width's 64-wide heads).
int64_t fluxClipHeads(const std::string& path);

}  // namespace kiln::pipelines
