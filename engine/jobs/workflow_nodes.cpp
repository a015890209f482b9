#include "jobs/workflow_nodes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/data_paths.h"
#include "core/interrupt.h"
#include "jobs/node_schema.h"
#include "jobs/sampler_node.h"
#include "jobs/vae_stage.h"
#include "jobs/video_nodes.h"
#include "memory/device.h"
#include "models/sd/sd_checkpoint.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/common/vae_file.h"
#include "pipelines/wan/wan_pipeline.h"

namespace kiln::jobs {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;
using schema::text;

std::vector<ParamSpec> tilingParams() {
  return {choice("tiling", {"auto", "always", "never"}, "auto", "Tiling",
                 "Work in tiles: auto when the whole picture would not fit in memory"),
          number("tile_size", ValueType::Int, int64_t{0}, 0, 4096, 64, "Tile size",
                 "Tile size in pixels; 0 chooses the largest that fits"),
          number("tile_overlap", ValueType::Int, int64_t{64}, 0, 2048, 8, "Tile overlap",
                 "Overlap of tiles in pixels")};
}

std::string resolveModelPath(const std::string& path) {
  if (path.empty()) return starterModelPath();
  return path;
}

// A model's bytes on disk: the file's, or a folder's files' together.
int64_t modelFileBytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    const auto size = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<int64_t>(size);
  }
  int64_t bytes = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) bytes += static_cast<int64_t>(it->file_size(e2));
  }
  return bytes;
}

// An image file through the engine's reader, checked.
Image readImageFile(const NodeCall& c, const std::string& path) {
  if (!c.run.env.read_image)
    throw Error(ErrorKind::InvalidArgument,
                "this engine was set up without an image reader, so it cannot load '" + path + "'");
  Image image = c.run.env.read_image(path);
  pipelines::checkImage(image, "'" + path + "'");
  return image;
}

// The images of a file as [1, 3, H, W] in [0, 1] and its alpha as a mask (1 where
// transparent; zeros without alpha).
std::pair<at::Tensor, at::Tensor> readPicture(const NodeCall& c, const std::string& path) {
  const Image image = readImageFile(c, path);
  const at::Tensor t = pipelines::imageTensor(image);
  at::Tensor alpha = t.size(1) == 4 || t.size(1) == 2 ? 1 - t.narrow(1, t.size(1) - 1, 1)
                                                      : at::zeros({1, 1, t.size(2), t.size(3)});
  return {pipelines::rgbOf(t), alpha};
}

NodeDefinition loadCheckpoint() {
  NodeDefinition d;
  d.schema = {
      "LoadCheckpoint",
      "Load checkpoint",
      "loaders",
      "Loads an SD 1.x, SD 2.x or SDXL checkpoint (a .safetensors file or a diffusers folder), or "
      "a Wan 2.1 "
      "video model as LoadVideoModel does",
      {},
      {text("ckpt_name", ValueType::File, std::string(), "Checkpoint",
            "The model file; empty: the starter model"),
       choice(
           "dtype", {"auto", "fp32", "bf16", "fp16"}, "auto", "Compute precision",
           "auto: bf16 on CPUs with bf16 instructions, else fp32 (bf16 is emulated and many times "
           "slower there); fp16 on a GPU. fp16 needs a GPU (the VAE then computes in fp32)"),
       choice("prediction", {"auto", "epsilon", "v_prediction"}, "auto", "Prediction",
              "What the model predicts; auto: what the file says (SD 2.x 768 models predict v)"),
       choice("zero_terminal_snr", {"auto", "on", "off"}, "auto", "Zero terminal SNR",
              "Rescale the noise schedule to zero terminal SNR (for models trained that way)")},
      {out(ValueType::Model, "Model"), out(ValueType::Clip, "Text encoder"),
       out(ValueType::Vae, "VAE")}};
  d.stage = StageKind::LoadModel;
  d.stage_name = "Loading model";
  d.unit = "bytes";
  // Expected from the files' size, before they are opened.
  d.units = [](const graph::PlannedNode& n) {
    const auto* name = std::get_if<std::string>(&n.params.at("ckpt_name"));
    try {
      return modelFileBytes(resolveModelPath(name ? *name : std::string()));
    } catch (const Error&) {
      return int64_t{0};  // the node says what is wrong when it runs
    }
  };
  d.run = [](NodeCall& c) {
    if (const std::string path = resolveModelPath(c.stringParam("ckpt_name"));
        pipelines::familyOf(path).video) {
      // A video model picked where a checkpoint goes (the generate panel's model): it
      // loads as LoadVideoModel would, and the template renders stills with it.
      if (c.stringParam("prediction") != "auto" || c.stringParam("zero_terminal_snr") != "auto")
        c.run.env.emit(
            logEvent("'" + path +
                     "' is a flow-matching video model: prediction and zero terminal SNR "
                     "do not apply and are ignored"));
      if (c.stage >= 0) c.run.tracker.setUnit(c.stage, "tensors");
      return loadVideoModelOutputs(c, path, {}, {}, c.stringParam("dtype"), 0.0);
    }
    ModelRef ref;
    ref.path = resolveModelPath(c.stringParam("ckpt_name"));
    ref.dtype = computeScalarType(c.stringParam("dtype"), c.run.device);
    checkComputeDtype(ref.dtype, c.run.device);
    ref.key = modelKey(ref.path, ref.dtype);
    if (c.stringParam("prediction") != "auto")
      ref.prediction = c.stringParam("prediction") == "v_prediction"
                           ? sampling::Prediction::V
                           : sampling::Prediction::Epsilon;
    if (c.stringParam("zero_terminal_snr") != "auto")
      ref.zero_terminal_snr = c.stringParam("zero_terminal_snr") == "on";
    WorkflowRun& run = c.run;
    const auto progress = [&c](std::size_t done, std::size_t total) {
      c.run.tracker.progress(c.stage, static_cast<int64_t>(done), static_cast<int64_t>(total));
    };
    const pipelines::SdPipeline& pipe = run.load(ref, progress).as<pipelines::SdPipeline>();
    ref.name = pipe.checkpoint().display_name;
    ref.family = models::familyName(pipe.spec().family);
    run.result.model_family = ref.family;
    run.tracker.setModel(ref.family, computeDtypeName(ref.dtype));
    return modelOutputs(ref);
  };
  // A model handle stands while the model cache still holds the model.
  d.still_valid = modelStillCached;
  d.reused = timeAsModel;
  // Nothing to load (no stage) when the model cache holds the image model already.
  d.stage_needed = [](const graph::PlannedNode& n, const RunEnvironment& env) {
    if (!env.cache) return true;
    try {
      const auto* name = std::get_if<std::string>(&n.params.at("ckpt_name"));
      const auto* dtype = std::get_if<std::string>(&n.params.at("dtype"));
      const std::string path = resolveModelPath(name ? *name : std::string());
      if (!dtype || pipelines::familyOf(path).video) return true;
      memory::CpuDevice cpu;
      const memory::Device& device = env.device ? *env.device : cpu;
      return !env.cache->contains(modelKey(path, computeScalarType(*dtype, device)));
    } catch (const Error&) {
      return true;  // the node says what is wrong when it runs
    }
  };
  return d;
}

ParamSpec loraModeParam() {
  return choice("mode", {"auto", "merge", "hook"}, "auto", "Mode",
                "merge rebuilds the weights; hook adds the LoRA's term in each layer");
}

std::string existingLora(const NodeCall& c) {
  const std::string path = c.stringParam("lora_name");
  if (!std::filesystem::exists(path))
    throw Error(ErrorKind::FileNotFound, "the LoRA file '" + path + "' does not exist");
  return path;
}

NodeDefinition loadVae() {
  NodeDefinition d;
  d.schema = {
      "LoadVAE",
      "Load VAE",
      "loaders",
      "Loads a VAE from a file of its own, to decode and encode in place of the checkpoint's",
      {},
      {text("vae_name", ValueType::File, ParamValue(), "VAE", "The VAE file (.safetensors)"),
       choice("dtype", {"auto", "fp32", "bf16", "fp16"}, "auto", "Compute precision",
              "auto: as for the checkpoint; fp16 computes in fp32 here: SD VAEs overflow half "
              "precision")},
      {out(ValueType::Vae, "VAE")}};
  d.stage = StageKind::LoadModel;
  d.stage_name = "Loading VAE";
  d.unit = "files";
  d.units = [](const graph::PlannedNode&) { return int64_t{1}; };
  d.run = [](NodeCall& c) {
    ModelRef ref;
    ref.vae_file = true;
    ref.path = c.stringParam("vae_name");
    ref.dtype = computeScalarType(c.stringParam("dtype"), c.run.device);
    checkComputeDtype(ref.dtype, c.run.device);
    ref.key = "vae|" + modelKey(ref.path, ref.dtype);
    ref.name = std::filesystem::path(ref.path).stem().string();
    (void)c.run.vae(ref, 0);  // loads it (into the model cache) now, as this node's stage
    c.run.tracker.progress(c.stage, 1, 1);
    return graph::NodeOutputs{makeValue(ValueType::Vae, ref)};
  };
  d.still_valid = [](const graph::NodeOutputs& outputs, const RunEnvironment& env) {
    const auto* ref = static_cast<const ModelRef*>(outputs.at(0).data.get());
    return env.cache != nullptr && env.cache->contains(ref->key);
  };
  return d;
}

NodeDefinition loadLora() {
  NodeDefinition d;
  d.schema = {
      "LoadLoRA",
      "Load LoRA",
      "loaders",
      "Adds a LoRA to the model and the text encoder (kohya, diffusers, PEFT, LyCORIS)",
      {in("model", ValueType::Model, "Model"), in("clip", ValueType::Clip, "Text encoder")},
      {text("lora_name", ValueType::File, ParamValue(), "LoRA", "The LoRA file (.safetensors)"),
       number("strength_model", ValueType::Float, 1.0, -10, 10, 0.05, "Model strength", ""),
       number("strength_clip", ValueType::Float, 1.0, -10, 10, 0.05, "Text encoder strength", ""),
       loraModeParam(),
       text("schedule", ValueType::String, std::string(), "Strength schedule",
            "The model strength over the steps: \"40%=0.3,80%=0\" is the model strength until "
            "40% of the steps, 0.3 from there and 0 from 80%; empty: the same throughout. Needs "
            "hook or auto mode")},
      {out(ValueType::Model, "Model"), out(ValueType::Clip, "Text encoder")}};
  d.run = [](NodeCall& c) {
    const std::string path = existingLora(c);
    ModelRef model = c.input<ModelRef>("model"), clip = c.input<ModelRef>("clip");
    const LoraMode mode = parseLoraMode(c.stringParam("mode"));
    std::vector<LoraKeyframe> keyframes = parseLoraKeyframes(c.stringParam("schedule"));
    if (!keyframes.empty() && mode == LoraMode::Merge)
      throw Error(
          ErrorKind::InvalidArgument,
          "LoRA '" + path + "' changes strength over the steps, which needs hook or auto mode");
    model.loras.emplace_back(path, c.floatParam("strength_model"), 0.0, std::move(keyframes));
    model.lora_mode = mode;
    clip.loras.emplace_back(path, 0.0, c.floatParam("strength_clip"));
    clip.lora_mode = mode;
    return graph::NodeOutputs{makeValue(ValueType::Model, model), makeValue(ValueType::Clip, clip)};
  };
  return d;
}

NodeDefinition loadLoraModelOnly() {
  NodeDefinition d;
  d.schema = {
      "LoadLoRAModelOnly",
      "Load LoRA (model only)",
      "loaders",
      "Adds a LoRA to the model's denoiser only",
      {in("model", ValueType::Model, "Model")},
      {text("lora_name", ValueType::File, ParamValue(), "LoRA", "The LoRA file (.safetensors)"),
       number("strength_model", ValueType::Float, 1.0, -10, 10, 0.05, "Model strength", ""),
       loraModeParam()},
      {out(ValueType::Model, "Model")}};
  d.run = [](NodeCall& c) {
    ModelRef model = c.input<ModelRef>("model");
    model.loras.emplace_back(existingLora(c), c.floatParam("strength_model"), 0.0);
    model.lora_mode = parseLoraMode(c.stringParam("mode"));
    return graph::NodeOutputs{makeValue(ValueType::Model, model)};
  };
  return d;
}

// What the embeddings folders hold, as a string that changes when a file is added,
// removed or rewritten.
std::string embeddingsState(const std::vector<std::string>& folders) {
  std::string state;
  for (const auto& folder : folders) {
    std::error_code ec;
    std::vector<std::string> lines;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
      if (entry.path().extension() != ".safetensors") continue;
      std::error_code e2;
      lines.push_back(entry.path().filename().string() + ":" + std::to_string(entry.file_size(e2)) +
                      ":" + std::to_string(entry.last_write_time(e2).time_since_epoch().count()));
    }
    std::sort(lines.begin(), lines.end());
    state += folder + "\n";
    for (const auto& l : lines) state += l + "\n";
  }
  return state;
}

NodeDefinition textEncode() {
  NodeDefinition d;
  d.schema = {
      "TextEncode",
      "Text encode",
      "conditioning",
      "Encodes a prompt with the model's text encoders",
      {in("clip", ValueType::Clip, "Text encoder")},
      {text("text", ValueType::String, std::string(), "Text",
            "The prompt: (word:1.3), (word), [word] and \\( for a bracket; BREAK starts a new "
            "window; "
            "embedding:NAME or NAME uses the textual-inversion embedding NAME.safetensors",
            true),
       number("clip_skip", ValueType::Int, int64_t{1}, 1, 12, 1, "Clip skip",
              "Use the text encoder's output this many layers from its end (2 is A1111's clip skip "
              "2); "
              "for SD 1.x, whose encoder uses its last layer"),
       number(
           "aesthetic_score", ValueType::Float, 6.0, 0, 10, 0.5, "Aesthetic score",
           "SDXL refiner only: the aesthetic score this prompt asks for (diffusers uses 6 for the "
           "prompt and 2.5 for the negative)"),
       number("original_width", ValueType::Int, int64_t{0}, 0, 16384, 8, "Original width",
              "SDXL only: the width the picture claims to come from; 0: the output width"),
       number("original_height", ValueType::Int, int64_t{0}, 0, 16384, 8, "Original height",
              "SDXL only: the height the picture claims to come from; 0: the output height"),
       number("crop_left", ValueType::Int, int64_t{0}, 0, 16384, 8, "Crop left",
              "SDXL only: how far from the left the picture claims to be cropped"),
       number("crop_top", ValueType::Int, int64_t{0}, 0, 16384, 8, "Crop top",
              "SDXL only: how far from the top the picture claims to be cropped")},
      {out(ValueType::Conditioning, "Conditioning")}};
  d.stage = StageKind::EncodePrompt;
  d.stage_name = "Encoding prompt";
  d.unit = "prompts";
  d.units = [](const graph::PlannedNode&) { return int64_t{1}; };
  d.run = [](NodeCall& c) {
    const ModelRef& ref = c.input<ModelRef>("clip");
    if (ref.video) return encodeVideoPrompt(c);
    LoadedModel& model =
        c.run.prepare(ref, WorkflowRun::Part::Text,
                      [](const pipelines::SdPipeline& p) { return p.encodingWorkingBytes(); });
    ConditioningValue v;
    v.text = c.stringParam("text");
    v.aesthetic_score = c.floatParam("aesthetic_score");
    v.original_width = c.intParam("original_width");
    v.original_height = c.intParam("original_height");
    v.crop_left = c.intParam("crop_left");
    v.crop_top = c.intParam("crop_top");
    const models::EmbeddingLibrary embeddings(c.run.env.embedding_dirs);
    {
      memory::DeviceScope on_device(c.run.device);
      const pipelines::TextEncoding enc = model.as<pipelines::SdPipeline>().encodeWeighted(
          v.text, static_cast<int>(c.intParam("clip_skip")), &embeddings);
      if (!at::isfinite(enc.context).all().item<bool>())
        throw Error(ErrorKind::NonFinite,
                    "the text encoder produced NaN or infinity (encoding the prompt); the "
                    "checkpoint's text encoder "
                    "weights are probably damaged");
      v.context = toHost(c.run.device, enc.context);
      v.pooled = toHost(c.run.device, enc.pooled);
    }
    c.run.tracker.progress(c.stage, 1, 1);
    const int64_t bytes = tensorBytes(v.context) + tensorBytes(v.pooled);
    return graph::NodeOutputs{makeValue(ValueType::Conditioning, std::move(v), bytes)};
  };
  // A prompt word may name an embedding added since: the folders' files are signed.
  d.outside_state = [](const RunEnvironment& env, const Job&) {
    return embeddingsState(env.embedding_dirs);
  };
  return d;
}

NodeDefinition emptyLatent() {
  NodeDefinition d;
  d.schema = {"EmptyLatent",
              "Empty latent",
              "latent",
              "A blank latent of a size: what text-to-image starts from. The model that samples it "
              "gives its "
              "layout (SD: 4 channels at 1/8 of the pixels; the starter model: 1/4; a video model: "
              "one frame)",
              {},
              {number("width", ValueType::Int, int64_t{512}, 8, 8192, 8, "Width",
                      "Pixels; snapped down to the model's grid (8 for SD models)"),
               number("height", ValueType::Int, int64_t{512}, 8, 8192, 8, "Height",
                      "Pixels; snapped down to the model's grid (8 for SD models)"),
               number("batch_size", ValueType::Int, int64_t{1}, 1, 64, 1, "Batch size",
                      "Pictures at once")},
              {out(ValueType::Latent, "Latent")}};
  d.run = [](NodeCall& c) {
    LatentValue v;
    v.empty = LatentRequest{c.intParam("width"), c.intParam("height"), c.intParam("batch_size"), 0};
    return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(v), 0)};
  };
  return d;
}

NodeDefinition vaeDecode() {
  NodeDefinition d;
  d.schema = {"VAEDecode",
              "VAE decode",
              "latent",
              "Turns a latent into a picture",
              {in("samples", ValueType::Latent, "Latent"), in("vae", ValueType::Vae, "VAE")},
              tilingParams(),
              {out(ValueType::Image, "Image")}};
  d.stage = StageKind::Decode;
  d.stage_name = "Decoding";
  d.unit = "tile passes";
  d.run = [](NodeCall& c) {
    const LatentValue& latent = c.input<LatentValue>("samples");
    if (c.input<ModelRef>("vae").video) return decodeVideo(c);
    if ((latent.empty && latent.empty->frames > 0) || (!latent.empty && latent.samples.dim() != 4))
      throw Error(ErrorKind::InvalidArgument,
                  "an image VAE decodes an image latent; a video latent needs its video "
                  "model's VAE");
    const pipelines::VaeTilingSettings tiling = tilingOf(c);
    pipelines::validateTiling(tiling);
    const pipelines::VaeCodec codec = c.run.vae(
        c.input<ModelRef>("vae"), latent.scaling_factor, [&](const pipelines::VaeCodec& vae) {
          const int64_t f = vae.config().downscale();
          const int64_t height = latent.empty ? latent.empty->height : latent.samples.size(2) * f;
          const int64_t width = latent.empty ? latent.empty->width : latent.samples.size(3) * f;
          return vaeStageWorkingBytes(pipelines::VaeWork::Decode, vae, tiling, height, width,
                                      c.run.device);
        });
    const int64_t f = codec.config().downscale();
    const at::Tensor samples =
        latent.empty ? emptyImageLatent(c.run, *latent.empty, {codec.config().embed_dim, f, f})
                     : latent.samples;
    if (samples.size(1) != codec.config().embed_dim)
      throw Error(ErrorKind::InvalidArgument, "the latent has " + std::to_string(samples.size(1)) +
                                                  " channels but this VAE decodes " +
                                                  std::to_string(codec.config().embed_dim) +
                                                  "; link the VAE of the model that sampled it");
    ImageValue image;
    std::vector<at::Tensor> outs;
    {
      memory::DeviceScope on_device(c.run.device);
      for (int64_t b = 0; b < samples.size(0); ++b) {
        at::Tensor decoded =
            runVaeStage(pipelines::VaeWork::Decode, codec, samples.narrow(0, b, 1),
                        {c.run.tracker, c.stage, c.run.env, c.run.device, tiling, {}});
        // Outside an inpainting mask the picture stays exactly as it was.
        if (latent.pixel_mask.defined() && latent.source_rgb.defined()) {
          const at::Tensor src =
              latent.source_rgb.narrow(0, std::min(b, latent.source_rgb.size(0) - 1), 1);
          decoded = src + (decoded - src) * latent.pixel_mask;
        }
        outs.push_back(toHost(c.run.device, (decoded / 2 + 0.5).clamp(0, 1)));
      }
    }
    image.rgb = at::cat(outs, 0);
    image.parameters = latent.parameters;
    const int64_t bytes = tensorBytes(image.rgb);
    return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes)};
  };
  return d;
}

NodeDefinition vaeEncode() {
  NodeDefinition d;
  std::vector<ParamSpec> params = tilingParams();
  params.push_back(number("mask_feather", ValueType::Int, int64_t{0}, 0, 256, 1, "Mask feather",
                          "Blurs the mask's edge over this many pixels"));
  d.schema = {"VAEEncode",
              "VAE encode",
              "latent",
              "Turns a picture into a latent for image-to-image; with a mask, only the masked part "
              "is repainted",
              {in("pixels", ValueType::Image, "Image"), in("vae", ValueType::Vae, "VAE"),
               in("mask", ValueType::Mask, "Mask", true)},
              params,
              {out(ValueType::Latent, "Latent")}};
  d.stage = StageKind::EncodeImage;
  d.stage_name = "Encoding image";
  d.unit = "tile passes";
  d.run = [](NodeCall& c) {
    const ImageValue& image = c.input<ImageValue>("pixels");
    const pipelines::VaeTilingSettings tiling = tilingOf(c);
    pipelines::validateTiling(tiling);
    const int64_t h = image.rgb.size(2), w = image.rgb.size(3);
    const pipelines::VaeCodec codec =
        c.run.vae(c.input<ModelRef>("vae"), 0, [&](const pipelines::VaeCodec& vae) {
          return vaeStageWorkingBytes(pipelines::VaeWork::Encode, vae, tiling, h, w, c.run.device);
        });
    const int64_t f = codec.config().downscale();
    const int64_t fh = std::max(f, h / f * f), fw = std::max(f, w / f * f);
    if (fh != h || fw != w)
      c.run.env.emit(logEvent("the picture (" + std::to_string(w) + "x" + std::to_string(h) +
                              ") was scaled to " + std::to_string(fw) + "x" + std::to_string(fh) +
                              ", a multiple of " + std::to_string(f)));
    LatentValue latent;
    latent.from_image = true;
    latent.scaling_factor = codec.scaling_factor;
    latent.source_rgb =
        (fh != h || fw != w ? pipelines::fitImage(image.rgb, fh, fw) : image.rgb) * 2 - 1;
    std::vector<at::Tensor> outs;
    {
      memory::DeviceScope on_device(c.run.device);
      for (int64_t b = 0; b < latent.source_rgb.size(0); ++b)
        outs.push_back(
            toHost(c.run.device,
                   runVaeStage(pipelines::VaeWork::Encode, codec, latent.source_rgb.narrow(0, b, 1),
                               {c.run.tracker, c.stage, c.run.env, c.run.device, tiling, {}})));
    }
    latent.samples = at::cat(outs, 0);
    if (c.hasInput("mask")) {
      const at::Tensor mask = c.input<MaskValue>("mask").mask;
      latent.mask_feather = c.intParam("mask_feather");
      latent.pixel_mask =
          pipelines::featherMask(pipelines::fitImage(mask, fh, fw), latent.mask_feather);
      latent.mask = pipelines::latentMask(latent.pixel_mask, f);
    }
    const int64_t bytes = tensorBytes(latent.samples) + tensorBytes(latent.source_rgb) +
                          tensorBytes(latent.pixel_mask);
    return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(latent), bytes)};
  };
  return d;
}

NodeDefinition loadImage() {
  NodeDefinition d;
  d.schema = {"LoadImage",
              "Load image",
              "image",
              "Reads a picture (PNG, JPEG, EXR, TIFF, WebP); its transparency is a mask",
              {},
              {text("image", ValueType::File, ParamValue(), "Image", "The picture file")},
              {out(ValueType::Image, "Image"), out(ValueType::Mask, "Mask")}};
  d.run = [](NodeCall& c) {
    auto [rgb, alpha] = readPicture(c, c.stringParam("image"));
    ImageValue image;
    image.rgb = rgb;
    const int64_t bytes = tensorBytes(rgb);
    return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes),
                              makeValue(ValueType::Mask, MaskValue{alpha}, tensorBytes(alpha))};
  };
  return d;
}

NodeDefinition loadMask() {
  NodeDefinition d;
  d.schema = {"LoadMask",
              "Load mask",
              "image",
              "Reads a mask picture: white repaints, black keeps",
              {},
              {text("image", ValueType::File, ParamValue(), "Mask", "The mask file")},
              {out(ValueType::Mask, "Mask")}};
  d.run = [](NodeCall& c) {
    const at::Tensor mask = pipelines::maskTensor(readImageFile(c, c.stringParam("image")));
    return graph::NodeOutputs{makeValue(ValueType::Mask, MaskValue{mask}, tensorBytes(mask))};
  };
  return d;
}

// The images of an IMAGE value, with their A1111 parameters where known.
std::vector<Image> imagesOf(const ImageValue& v) {
  std::vector<Image> images;
  for (int64_t b = 0; b < v.rgb.size(0); ++b) {
    Image image = imageFromRgb(v.rgb[b].permute({1, 2, 0}));
    if (static_cast<std::size_t>(b) < v.parameters.size())
      image.text["parameters"] = v.parameters[static_cast<std::size_t>(b)];
    images.push_back(std::move(image));
  }
  return images;
}

NodeDefinition saveImage() {
  NodeDefinition d;
  d.schema = {
      "SaveImage",
      "Save image",
      "image",
      "Saves PNG files with the workflow and the A1111 parameters inside",
      {in("images", ValueType::Image, "Images")},
      {text("filename_prefix", ValueType::String, std::string("kiln"), "File name prefix", "")},
      {}};
  d.schema.output_node = true;
  d.stage = StageKind::Save;
  d.stage_name = "Saving";
  d.unit = "files";
  d.run = [](NodeCall& c) {
    WorkflowRun& run = c.run;
    if (run.job.output_dir.empty() || !run.env.write_image)
      throw Error(ErrorKind::InvalidArgument,
                  "SaveImage needs an output folder and an image writer");
    const std::string prefix = checkedPrefix(c);
    std::vector<Image> images = imagesOf(c.input<ImageValue>("images"));
    const std::string workflow = carriedWorkflow(c);
    std::error_code ec;
    std::filesystem::create_directories(run.job.output_dir, ec);
    int number = 1;
    for (std::size_t i = 0; i < images.size(); ++i) {
      images[i].text["kiln_workflow"] = workflow;
      const std::string path = saveNewImage(run.job.output_dir, prefix, number, images[i], run.env);
      run.tracker.progress(c.stage, static_cast<int64_t>(i + 1),
                           static_cast<int64_t>(images.size()));
      run.result.paths.push_back(path);
      run.result.images.push_back(std::move(images[i]));
    }
    return graph::NodeOutputs{};
  };
  return d;
}

NodeDefinition previewImage() {
  NodeDefinition d;
  d.schema = {"PreviewImage",
              "Preview image",
              "image",
              "Shows pictures without saving them",
              {in("images", ValueType::Image, "Images")},
              {},
              {}};
  d.schema.output_node = true;
  d.run = [](NodeCall& c) {
    // A render's pictures carry their workflow; a workflow's previews are not saved.
    const std::string workflow = c.run.layout && c.image >= 0 ? carriedWorkflow(c) : std::string();
    for (Image& image : imagesOf(c.input<ImageValue>("images"))) {
      if (!workflow.empty()) image.text["kiln_workflow"] = workflow;
      c.run.result.images.push_back(std::move(image));
    }
    return graph::NodeOutputs{};
  };
  return d;
}

NodeDefinition saveImageAs() {
  NodeDefinition d;
  d.schema = {"SaveImageAs",
              "Save image as",
              "image",
              "Saves pictures under a path of your choosing (the format by its extension), "
              "replacing a file of that name; a batch's second picture gets \"-2\" before the "
              "extension, and so on. The workflow and the A1111 parameters go inside",
              {in("images", ValueType::Image, "Images")},
              {text("path", ValueType::String, std::string(), "Path", "The file to write")},
              {}};
  d.schema.output_node = true;
  d.stage = StageKind::Save;
  d.stage_name = "Saving";
  d.unit = "files";
  d.units = [](const graph::PlannedNode&) { return int64_t{1}; };
  d.run = [](NodeCall& c) {
    WorkflowRun& run = c.run;
    const std::string path = c.stringParam("path");
    if (path.empty() || !run.env.write_image)
      throw Error(ErrorKind::InvalidArgument, "SaveImageAs needs a path and an image writer");
    std::vector<Image> images = imagesOf(c.input<ImageValue>("images"));
    const std::string workflow = carriedWorkflow(c);
    const auto n = static_cast<int64_t>(images.size());
    for (int64_t i = 0; i < n; ++i) {
      Image& image = images[static_cast<std::size_t>(i)];
      if (!workflow.empty()) image.text["kiln_workflow"] = workflow;
      const std::string file = numberedPath(path, i);
      saveImage(file, image, run.env);
      run.tracker.progress(c.stage, i + 1, n);
      run.result.paths.push_back(file);
      run.result.images.push_back(std::move(image));
    }
    return graph::NodeOutputs{};
  };
  return d;
}

// A hash of an image's size and pixels: what a job's own picture is, for the node cache.
std::string imageState(const Image& image) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  const auto mix = [&h](const void* data, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  const int dims[3] = {image.width, image.height, image.channels};
  mix(dims, sizeof dims);
  mix(image.pixels.data(), image.pixels.size() * sizeof(float));
  return std::to_string(h);
}

NodeDefinition jobImage() {
  NodeDefinition d;
  d.schema = {"JobImage",
              "Job's picture",
              "image",
              "The init image the job carries (a render's, given in memory), scaled to cover the "
              "size and centre-cropped",
              {},
              {number("width", ValueType::Int, int64_t{0}, 0, 8192, 8, "Width",
                      "Pixels; 0: the picture's own"),
               number("height", ValueType::Int, int64_t{0}, 0, 8192, 8, "Height",
                      "Pixels; 0: the picture's own")},
              {out(ValueType::Image, "Image")}};
  d.run = [](NodeCall& c) {
    const Image& given = c.run.job.params.init_image;
    if (!hasImage(given))
      throw Error(ErrorKind::InvalidArgument, "JobImage: this job carries no init image");
    pipelines::checkImage(given, "the init image");
    const int64_t w = c.intParam("width") > 0 ? c.intParam("width") : given.width;
    const int64_t h = c.intParam("height") > 0 ? c.intParam("height") : given.height;
    bool cropped = false;
    ImageValue image;
    image.rgb =
        pipelines::fitImage(pipelines::rgbOf(pipelines::imageTensor(given)), h, w, &cropped);
    if (given.width != w || given.height != h) {
      std::string notice = "the init image (" + std::to_string(given.width) + "x" +
                           std::to_string(given.height) + ") was " +
                           (cropped ? "scaled and centre-cropped" : "scaled") + " to " +
                           std::to_string(w) + "x" + std::to_string(h);
      c.run.env.emit(logEvent(notice));
      c.run.result.notices.push_back(std::move(notice));
    }
    const int64_t bytes = tensorBytes(image.rgb);
    return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes)};
  };
  d.outside_state = [](const RunEnvironment&, const Job& job) {
    return imageState(job.params.init_image);
  };
  return d;
}

NodeDefinition jobMask() {
  NodeDefinition d;
  d.schema = {"JobMask",
              "Job's mask",
              "image",
              "The inpainting mask the job carries (a render's, given in memory): white repaints, "
              "black keeps",
              {},
              {},
              {out(ValueType::Mask, "Mask")}};
  d.run = [](NodeCall& c) {
    const Image& given = c.run.job.params.mask;
    if (!hasImage(given))
      throw Error(ErrorKind::InvalidArgument, "JobMask: this job carries no mask");
    pipelines::checkImage(given, "the mask");
    const at::Tensor mask = pipelines::maskTensor(given);
    return graph::NodeOutputs{makeValue(ValueType::Mask, MaskValue{mask}, tensorBytes(mask))};
  };
  d.outside_state = [](const RunEnvironment&, const Job& job) {
    return imageState(job.params.mask);
  };
  return d;
}

// `stack` with one component's strengths replaced by `branch`'s (UNet or text), the
// other component's kept; files left at zero strength for both are dropped.
std::vector<LoraSpec> combineLoras(const std::vector<LoraSpec>& current,
                                   const std::vector<LoraSpec>& branch, bool unet) {
  std::vector<LoraSpec> out;
  for (LoraSpec s : current) {
    if (unet) {
      s.unet_strength = 0;
      s.keyframes.clear();
    } else {
      s.text_strength = 0;
    }
    out.push_back(std::move(s));
  }
  for (const LoraSpec& b : branch) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const LoraSpec& s) { return s.path == b.path; });
    if (it == out.end()) it = out.insert(out.end(), LoraSpec(b.path, 0.0, 0.0));
    if (unet) {
      it->unet_strength += b.unet_strength;
      it->keyframes = b.keyframes;
    } else {
      it->text_strength += b.text_strength;
    }
  }
  std::erase_if(out, [](const LoraSpec& s) {
    return s.unet_strength == 0 && s.text_strength == 0 && s.keyframes.empty();
  });
  return out;
}

}  // namespace

int64_t tensorBytes(const at::Tensor& t) {
  return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0;
}

at::Tensor toHost(const memory::Device& device, const at::Tensor& t) {
  return t.defined() ? device.download(t) : t;
}

LoadedModel& WorkflowRun::acquire(const std::string& key,
                                  const std::function<std::shared_ptr<LoadedModel>()>& load) {
  if (const auto it = uncached.find(key); it != uncached.end()) return *it->second;
  if (const auto it = leases.find(key); it != leases.end())
    return static_cast<LoadedModel&>(it->second.model());
  if (env.cache) {
    leases[key] = env.cache->acquire(
        key, [&] { return std::static_pointer_cast<memory::CachedModel>(load()); });
    return static_cast<LoadedModel&>(leases[key].model());
  }
  return *(uncached[key] = load());
}

LoadedModel& WorkflowRun::load(const ModelRef& ref, const pipelines::LoadProgress& progress) {
  return acquire(ref.key, [&] {
    const pipelines::ModelRequest request{ref.path, ref.vae_path, ref.text_encoder_path, ref.dtype};
    return loadModel(pipelines::familyOf(ref.path), request, device, progress);
  });
}

LoadedModel& WorkflowRun::model(const ModelRef& ref) {
  if (ref.video || ref.vae_file)
    throw Error(ErrorKind::InvalidArgument,
                "'" + ref.path + "' is " + (ref.vae_file ? "a VAE file" : "a video model") +
                    "; this node needs an image model's part (LoadCheckpoint)");
  // Its LoadCheckpoint's result came from the node cache and the model cache holds it.
  return load(ref);
}

LoadedModel& WorkflowRun::videoModel(
    const ModelRef& ref, Part part,
    const std::function<int64_t(const pipelines::WanPipeline&)>& working,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  if (!ref.video)
    throw Error(ErrorKind::InvalidArgument, "'" + ref.path + "' is not a video model");
  LoadedModel& found = load(ref, progress);
  applyLoras(found, ref, part);
  if (device.isAccelerator())
    placeModel(found, env, device,
               working ? workingBytes("the video model's work",
                                      [&] { return working(found.as<pipelines::WanPipeline>()); })
                       : 0);
  return found;
}

int64_t WorkflowRun::workingBytes(const std::string& what,
                                  const std::function<int64_t()>& estimate) {
  try {
    return estimate();
  } catch (const std::exception& e) {
    env.emit(logEvent("could not estimate the memory " + what + " needs (" + e.what() +
                      "): nothing was freed for it on " + device.name() +
                      ", so it may run out of memory"));
    return 0;
  }
}

void WorkflowRun::applyLoras(LoadedModel& m, const ModelRef& ref, Part part) {
  if (part == Part::Vae) return;
  const std::vector<LoraSpec> stack = combineLoras(m.loras(), ref.loras, part == Part::Unet);
  if (stack == m.loras() &&
      (stack.empty() || ref.lora_mode == LoraMode::Auto || m.loraMode() == ref.lora_mode))
    return;
  for (const LoraReport& r : m.applyLoras(stack, ref.lora_mode, env.offload)) {
    result.notices.push_back("LoRA: " + r.describe());
    env.emit(logEvent("LoRA: " + r.describe()));
  }
}

LoadedModel& WorkflowRun::prepare(
    const ModelRef& ref, Part part,
    const std::function<int64_t(const pipelines::SdPipeline&)>& working) {
  LoadedModel& m = model(ref);
  applyLoras(m, ref, part);
  if (device.isAccelerator())
    placeModel(
        m, env, device,
        working ? workingBytes("this work", [&] { return working(m.as<pipelines::SdPipeline>()); })
                : 0);
  return m;
}

pipelines::VaeCodec WorkflowRun::vae(
    const ModelRef& ref, double scaling_factor,
    const std::function<int64_t(const pipelines::VaeCodec&)>& working) {
  if (!ref.vae_file) {
    pipelines::VaeCodec codec =
        prepare(ref, Part::Vae,
                [&](const pipelines::SdPipeline& p) { return working ? working(p.codec()) : 0; })
            .as<pipelines::SdPipeline>()
            .codec();
    if (scaling_factor > 0) codec.scaling_factor = scaling_factor;
    return codec;
  }
  LoadedModel& m = acquire(ref.key, [&] {
    core::checkInterrupt();
    return std::make_shared<LoadedModel>(std::make_unique<pipelines::VaeFile>(ref.path, ref.dtype),
                                         device);
  });
  const pipelines::VaeFile& file = m.as<pipelines::VaeFile>();
  if (device.isAccelerator())
    placeModel(m, env, device,
               working ? workingBytes("the VAE's work",
                                      [&] { return working(file.codec(scaling_factor)); })
                       : 0);
  return file.codec(scaling_factor);
}

int64_t NodeCall::intParam(const std::string& name) const {
  const ParamValue& v = node.params.at(name);
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  return std::get<int64_t>(v);
}
double NodeCall::floatParam(const std::string& name) const {
  const ParamValue& v = node.params.at(name);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}
std::string NodeCall::stringParam(const std::string& name) const {
  return std::get<std::string>(node.params.at(name));
}
bool NodeCall::boolParam(const std::string& name) const {
  return std::get<bool>(node.params.at(name));
}

void NodeLibrary::add(NodeDefinition definition) {
  schemas_.push_back(definition.schema);
  definitions_.push_back(std::move(definition));
}

const NodeDefinition* NodeLibrary::find(const std::string& type) const {
  for (const NodeDefinition& d : definitions_)
    if (d.schema.type == type) return &d;
  return nullptr;
}

std::pair<int64_t, int64_t> snappedLatentSize(WorkflowRun& run, const LatentRequest& request,
                                              int64_t multiple) {
  if (request.width < 1 || request.height < 1 || request.batch < 1)
    throw Error(ErrorKind::InvalidArgument,
                "an empty latent of " + std::to_string(request.width) + "x" +
                    std::to_string(request.height) + " pixels and batch " +
                    std::to_string(request.batch) + " cannot be laid out");
  const int64_t w = std::max(multiple, request.width / multiple * multiple);
  const int64_t h = std::max(multiple, request.height / multiple * multiple);
  if (w != request.width || h != request.height) {
    std::string notice = "size " + std::to_string(request.width) + "x" +
                         std::to_string(request.height) + " is not a multiple of " +
                         std::to_string(multiple) + "; rendering " + std::to_string(w) + "x" +
                         std::to_string(h) + " instead";
    run.env.emit(logEvent(notice));
    run.result.notices.push_back(std::move(notice));
  }
  return {w, h};
}

at::Tensor emptyImageLatent(WorkflowRun& run, const LatentRequest& request,
                            const LatentFormat& format) {
  if (request.frames > 0)
    throw Error(ErrorKind::InvalidArgument,
                "a video latent (EmptyVideoLatent) needs a video model (LoadVideoModel) "
                "and its VAE");
  const auto [w, h] = snappedLatentSize(run, request, format.side_multiple);
  return at::zeros({request.batch, format.channels, h / format.spatial, w / format.spatial});
}

pipelines::VaeTilingSettings tilingOf(const NodeCall& c) {
  return {parseVaeTiling(c.stringParam("tiling")), c.intParam("tile_size"),
          c.intParam("tile_overlap")};
}

graph::NodeOutputs modelOutputs(const ModelRef& ref) {
  return graph::NodeOutputs{makeValue(ValueType::Model, ref), makeValue(ValueType::Clip, ref),
                            makeValue(ValueType::Vae, ref)};
}

void timeAsModel(const graph::NodeOutputs& outputs, ProgressTracker& tracker) {
  const auto* ref = static_cast<const ModelRef*>(outputs.at(0).data.get());
  tracker.setModel(ref->family, computeDtypeName(ref->dtype));
}

bool modelStillCached(const graph::NodeOutputs& outputs, const RunEnvironment& env) {
  const auto* ref = static_cast<const ModelRef*>(outputs.at(0).data.get());
  return env.cache != nullptr && env.cache->contains(ref->key);
}

std::string carriedWorkflow(const NodeCall& c) {
  if (c.run.layout && c.image >= 0)
    if (const auto it = c.run.layout->workflow_of_image.find(c.image);
        it != c.run.layout->workflow_of_image.end())
      return it->second;
  return c.run.job.workflow ? workflowToJson(*c.run.job.workflow) : std::string();
}

std::string checkedPrefix(const NodeCall& c) {
  std::string prefix = c.stringParam("filename_prefix");
  if (prefix.empty() || prefix.find('/') != std::string::npos ||
      prefix.find('\\') != std::string::npos || prefix == "." || prefix == "..")
    throw Error(ErrorKind::InvalidArgument,
                "the file name prefix '" + prefix + "' must be a plain name");
  return prefix;
}

NodeLibrary builtinNodes() {
  NodeLibrary lib;
  for (NodeDefinition (*make)() :
       {loadCheckpoint, loadVae,        loadLora,         loadLoraModelOnly, textEncode,
        emptyLatent,    sampler,        vaeDecode,        vaeEncode,         loadImage,
        loadMask,       jobImage,       jobMask,          saveImage,         saveImageAs,
        previewImage,   loadVideoModel, emptyVideoLatent, saveVideo,         saveVideoAs})
    lib.add(make());
  return lib;
}

}  // namespace kiln::jobs

namespace kiln {

std::vector<NodeSchema> builtinNodeSchemas() {
  return jobs::builtinNodes().schemas();
}

}  // namespace kiln
