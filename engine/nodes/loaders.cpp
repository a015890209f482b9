// The loader nodes: LoadCheckpoint, LoadVAE, LoadLoRA, LoadLoRAModelOnly, and
// ModelSamplingFlux, which sets a loaded model's schedule.
#include "nodes/nodes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/data_paths.h"
#include "core/interrupt.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "nodes/node_schema.h"
#include "nodes/vae_stage.h"
#include "nodes/video.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/common/vae_file.h"

namespace kiln::nodes {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;
using schema::text;

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

std::string stringOf(const std::map<std::string, ParamValue>& params, const char* name) {
  const auto it = params.find(name);
  if (it == params.end()) return {};
  const auto* v = std::get_if<std::string>(&it->second);
  return v ? *v : std::string();
}

// LoadCheckpoint's model with the parts its parameters give (a lone transformer's).
pipelines::ModelRequest partsRequest(const std::map<std::string, ParamValue>& params,
                                     const std::string& path, at::ScalarType dtype) {
  return {path, stringOf(params, "vae_name"), stringOf(params, "text_encoder_name"), dtype,
          stringOf(params, "text_encoder_2_name")};
}

// Whether LoadCheckpoint has loading to do: none (no stage) when the model cache holds
// the image model already.
bool checkpointToLoad(const graph::PlannedNode& n, const RunEnvironment& env) {
  if (!env.cache) return true;
  try {
    const auto* name = std::get_if<std::string>(&n.params.at("ckpt_name"));
    const auto* dtype = std::get_if<std::string>(&n.params.at("dtype"));
    const std::string path = resolveModelPath(name ? *name : std::string());
    const pipelines::Family& family = pipelines::familyOf(path);
    if (!dtype || family.video) return true;
    memory::CpuDevice cpu;
    const memory::Device& device = env.device ? *env.device : cpu;
    return !env.cache->contains(family.cacheKey(
        family.resolve(partsRequest(n.params, path, computeScalarType(*dtype, device)))));
  } catch (const Error&) {
    return true;  // the node says what is wrong when it runs
  }
}

}  // namespace

NodeDefinition loadCheckpoint() {
  NodeDefinition d;
  d.schema = {
      "LoadCheckpoint",
      "Load checkpoint",
      "loaders",
      "Loads an SD 1.x, SD 2.x or SDXL checkpoint (a .safetensors file or a diffusers folder), "
      "a FLUX.1 model (a transformer file with its VAE and text encoders, ComfyUI's all-in-one "
      "checkpoint or a diffusers folder), or a Wan 2.1 video model as LoadVideoModel does",
      {},
      {text("ckpt_name", ValueType::File, std::string(), "Checkpoint",
            "The model file; empty: the starter model"),
       choice(
           "dtype", {"auto", "fp32", "bf16", "fp16"}, "auto", "Compute precision",
           "auto: bf16 on CPUs with bf16 instructions, else fp32 (bf16 is emulated and many times "
           "slower there); fp16 on a GPU. fp16 needs a GPU (the VAE then computes in fp32)"),
       text("vae_name", ValueType::File, std::string(), "VAE",
            "A lone transformer's VAE (FLUX.1's ae.safetensors, Wan 2.1's); empty: found "
            "beside it"),
       text("text_encoder_name", ValueType::File, std::string(), "Text encoder",
            "A lone transformer's text encoder (FLUX.1: CLIP-L; Wan 2.1: UMT5); empty: found "
            "beside it"),
       text("text_encoder_2_name", ValueType::File, std::string(), "Second text encoder",
            "FLUX.1's T5 XXL encoder; empty: found beside the transformer"),
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
      return loadVideoModelOutputs(c, path, c.stringParam("vae_name"),
                                   c.stringParam("text_encoder_name"), c.stringParam("dtype"), 0.0);
    }
    ModelRef ref;
    ref.dtype = computeScalarType(c.stringParam("dtype"), c.run.device);
    checkComputeDtype(ref.dtype, c.run.device);
    const std::string path = resolveModelPath(c.stringParam("ckpt_name"));
    const pipelines::Family& family = pipelines::familyOf(path);
    const pipelines::ModelRequest request =
        family.resolve(partsRequest(c.node.params, path, ref.dtype));
    if (!family.separate_parts &&
        (!request.vae_path.empty() || !request.text_encoder_path.empty() ||
         !request.text_encoder_2_path.empty()))
      throw Error(ErrorKind::InvalidArgument,
                  "'" + path +
                      "' carries its own VAE and text encoders; to decode with another VAE, "
                      "link a LoadVAE node");
    ref.path = request.path;
    ref.vae_path = request.vae_path;
    ref.text_encoder_path = request.text_encoder_path;
    ref.text_encoder_2_path = request.text_encoder_2_path;
    ref.key = family.cacheKey(request);
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
    const pipelines::ModelParts& model = run.load(ref, progress).parts();
    ref.name = model.displayName();
    ref.family = model.kindName();
    run.result.model_family = ref.family;
    run.tracker.setModel(ref.family, computeDtypeName(ref.dtype));
    return modelOutputs(ref);
  };
  // A model handle stands while the model cache still holds the model.
  d.still_valid = modelStillCached;
  d.reused = timeAsModel;
  d.stage_needed = checkpointToLoad;
  return d;
}

namespace {

ParamSpec loraModeParam() {
  return choice("mode", {"auto", "merge", "hook"}, "auto", "Mode",
                "merge rebuilds the weights; hook adds the LoRA's term in each layer");
}

}  // namespace

namespace {

std::string existingLora(const NodeCall& c) {
  const std::string path = c.stringParam("lora_name");
  if (!std::filesystem::exists(path))
    throw Error(ErrorKind::FileNotFound, "the LoRA file '" + path + "' does not exist");
  return path;
}

}  // namespace

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
       number("strength_model", ValueType::Float, 1.0, -100, 100, 0.05, "Model strength", ""),
       number("strength_clip", ValueType::Float, 1.0, -100, 100, 0.05, "Text encoder strength", ""),
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
       number("strength_model", ValueType::Float, 1.0, -100, 100, 0.05, "Model strength", ""),
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

NodeDefinition modelSamplingFlux() {
  NodeDefinition d;
  d.schema = {
      "ModelSamplingFlux",
      "Model sampling (FLUX)",
      "loaders",
      "Shifts FLUX.1's noise schedule for a picture of width x height as ComfyUI's "
      "ModelSamplingFlux does: shift = base_shift + (max_shift - base_shift) (tokens - 256) / "
      "(4096 - 256), with width x height / 256 tokens",
      {in("model", ValueType::Model, "Model")},
      {number("max_shift", ValueType::Float, 1.15, 0.0, 100.0, 0.01, "Max shift",
              "The shift at 4096 tokens (1024x1024)"),
       number("base_shift", ValueType::Float, 0.5, 0.0, 100.0, 0.01, "Base shift",
              "The shift at 256 tokens (256x256)"),
       number("width", ValueType::Int, int64_t{1024}, 16, 16384, 8, "Width", ""),
       number("height", ValueType::Int, int64_t{1024}, 16, 16384, 8, "Height", "")},
      {out(ValueType::Model, "Model")}};
  d.run = [](NodeCall& c) {
    ModelRef model = c.input<ModelRef>("model");
    const double tokens = static_cast<double>(c.intParam("width")) *
                          static_cast<double>(c.intParam("height")) / 256.0;
    const double base = c.floatParam("base_shift"), max = c.floatParam("max_shift");
    const double m = (max - base) / (4096.0 - 256.0);
    model.flow_shift = tokens * m + (base - 256.0 * m);
    if (!(model.flow_shift > 0))
      throw Error(ErrorKind::InvalidArgument, "ModelSamplingFlux gives the shift " +
                                                  formatNumber(model.flow_shift) +
                                                  "; it must be positive");
    return graph::NodeOutputs{makeValue(ValueType::Model, model)};
  };
  return d;
}

}  // namespace kiln::nodes
