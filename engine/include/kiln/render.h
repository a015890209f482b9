// Text-to-image rendering with an SD-family checkpoint: the synchronous entry point the
// CLI uses (the job queue on the engine thread is built on the same pipeline).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/lora.h"

namespace kiln {

// bf16 is the fast path on CPUs with AVX-512 BF16 and on recent GPUs; fp16 needs a GPU
// (the VAE then computes in fp32, whose range fp16 lacks). Auto is the fast one for the
// device that runs the job: fp16 on a CUDA GPU, fastCpuDType() elsewhere.
enum class ComputeDType { Invalid = 0, Float32, BFloat16, Float16, Auto };

// The faster of fp32 and bf16 on this machine's CPU: bf16 where the CPU has bf16
// instructions (AVX-512 BF16, AMX, Arm BF16), fp32 elsewhere, where bf16 is emulated and
// many times slower.
ComputeDType fastCpuDType();

// How the VAE decodes and encodes: in one piece, in overlapping tiles, or (auto) tiled
// only when the memory estimate says one piece would not fit.
enum class VaeTiling { Invalid = 0, Auto, Always, Never };
const char* vaeTilingName(VaeTiling mode) noexcept;          // "auto", "always", "never"
VaeTiling parseVaeTiling(const std::string& text) noexcept;  // Invalid when unknown

// The model and what is loaded with it.
struct RenderModel {
  // A .safetensors single file or a diffusers folder; empty: the starter model.
  std::string path;
  // A lone transformer's VAE and text encoders (Wan 2.1: UMT5; FLUX.1: CLIP-L, then T5 in
  // text_encoder_2_path); empty: found beside it (ComfyUI's vae/ and text_encoders/
  // folders).
  std::string vae_path;
  std::string text_encoder_path;
  std::string text_encoder_2_path;
  // LoRAs for this render, in order, and how they reach the weights.
  std::vector<LoraSpec> loras;
  LoraMode lora_mode = LoraMode::Auto;
  ComputeDType dtype = ComputeDType::Auto;
  int threads = 0;  // 0: all cores
};

// What the picture is of.
struct RenderPrompt {
  std::string text;
  std::string negative;
  // Folders of textual-inversion embeddings (.safetensors) that the prompts name, as
  // `embedding:NAME` or by the bare file name (see engine/models/text/embeddings.h).
  std::vector<std::string> embedding_dirs;
  // SDXL refiner: the aesthetic score the prompt and the negative prompt condition on.
  double aesthetic_score = 6.0;
  double negative_aesthetic_score = 2.5;
};

// How the sampler walks from noise to the picture.
struct RenderSampling {
  int64_t seed = 0;
  int steps = 20;
  double cfg_scale = 7.0;
  // The sampler and schedule, by ComfyUI's names ("euler", "dpmpp_2m", ...; "normal",
  // "karras", ...); the Sampler node lists them.
  std::string sampler = "euler";
  std::string scheduler = "normal";
  // The flow shift of a video model's schedule; 0: the model's (5 for Wan 2.1).
  double flow_shift = 0;
  // FLUX.1 dev's distilled guidance (ComfyUI's FluxGuidance); 0: the model's (3.5).
  double guidance = 0;
};

// The output size, and SDXL's size conditioning.
struct RenderSize {
  // 0: the model's native size (see modelspec.resolution), 512 for SD 1.x.
  int width = 0;
  int height = 0;
  // SDXL size conditioning; 0 means "the output size" (original) or no crop.
  int original_width = 0;
  int original_height = 0;
  int crop_top = 0;
  int crop_left = 0;
};

// Image-to-image and inpainting.
struct RenderInit {
  // The picture to start from (any size; resized to cover the output size and
  // centre-cropped, or its own size snapped to the grid when width and height are 0),
  // noised to `denoise` (0 < denoise <= 1: the fraction of the steps that run). Empty:
  // text-to-image.
  Image image;
  double denoise = 1.0;
  // Inpainting (needs an image): a mask of the image's size; white (1) repaints, black
  // (0) keeps, grey blends; an alpha channel multiplies. `mask_feather` blurs the mask
  // edge over that many pixels. Outside the mask the result keeps the image's pixels
  // exactly.
  Image mask;
  int mask_feather = 0;
};

// VAE tiling. size 0: the largest tile that fits (auto) or 512 (always).
struct RenderTiling {
  VaeTiling mode = VaeTiling::Auto;
  int size = 0;      // pixels, 64 to 4096, snapped down to the VAE's grid
  int overlap = 64;  // pixels, at most half a tile
};

// Video models (Wan 2.1 text-to-video). Image models render one image.
struct RenderVideo {
  // Frames to render, snapped to the model's grid (1 + 4n); 1 renders a still image
  // through the video model; 0: one frame when the job writes an image file, else 81
  // (Wan's default).
  int frames = 0;
  double fps = 16.0;  // the video's frame rate, stored with it
};

// One render's settings, grouped as the nodes of the default workflow take them.
struct RenderParams {
  RenderModel model;
  RenderPrompt prompt;
  RenderSampling sampling;
  RenderSize size;
  RenderInit init;
  RenderTiling tiling;
  RenderVideo video;
};

struct RenderProgress {
  std::string stage;  // "Loading model", "Encoding prompt", "Denoising", "Decoding"
  int64_t done = 0;
  int64_t total = 0;
  std::string unit;  // "tensors", "steps", "images"
};

using ProgressFn = std::function<void(const RenderProgress&)>;

struct RenderResult {
  Image image;                       // RGB, with the "parameters" text attribute set
  std::vector<Image> frames;         // a video model's frames (image is the first)
  double fps = 0;                    // of the frames
  std::vector<std::string> notices;  // things the user should know (sizes snapped, ...)
  std::string model_family;          // "sd1", "sd2", "sdxl", "sdxl_refiner", "wan21"
};

// The model Kiln ships with (a small SD 1.x-layout model of coloured shapes, 64x64),
// found among Kiln's data files. Throws kiln::Error(FileNotFound) naming where it looked.
std::string starterModelPath();

// The default workflow: the starter model at its native size with an example prompt.
RenderParams defaultRenderParams();
// The same with the sampling `model_path` is drawn with unless told (FLUX.1: CFG 1, the
// simple schedule, schnell in 4 steps); Kiln's defaults for a model it cannot read.
RenderParams defaultRenderParams(const std::string& model_path);
// The family that loads `model_path`, from its configs and headers: "flux1", "wan21", or
// "sd" for SD 1.x/2.x/SDXL and anything no other family claims (the loader then says what
// is wrong with it).
std::string modelFamily(const std::string& model_path);

// Throws kiln::Error: InvalidArgument for bad parameters, FileNotFound / CorruptFile /
// UnsupportedModel / ShapeMismatch for bad checkpoints, NonFinite naming the stage where
// NaN or infinity first appeared.
RenderResult render(const RenderParams& params, const ProgressFn& progress = {});

// An inpainting mask from an image's alpha channel: transparent pixels (alpha 0) become
// white (repaint). Throws kiln::Error(InvalidArgument) for an image without alpha.
Image maskFromAlpha(const Image& image);

// The A1111 "parameters" text: prompt, "Negative prompt: ...", then the settings line.
std::string formatA1111Parameters(const RenderParams& params, const std::string& sampler,
                                  const std::string& model_name);

}  // namespace kiln
