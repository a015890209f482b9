// The conditioning nodes: TextEncode, TextEncodeFlux, FluxGuidance.
#include "nodes/nodes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "memory/device.h"
#include "models/text/embeddings.h"
#include "nodes/node_schema.h"

namespace kiln::nodes {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;
using schema::text;

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

// A node that encodes one prompt: its stage, counted in prompts.
void encodesOnePrompt(NodeDefinition& d) {
  d.stage = StageKind::EncodePrompt;
  d.stage_name = "Encoding prompt";
  d.unit = "prompts";
  d.units = [](const graph::PlannedNode&) { return int64_t{1}; };
}

// `v` with its text encoded by the clip input's model.
graph::NodeOutputs encodeConditioning(NodeCall& c, ConditioningValue v,
                                      const pipelines::PromptOptions& options) {
  const ModelRef& ref = c.input<ModelRef>("clip");
  const pipelines::Pipeline& pipe =
      c.run
          .prepare(ref, WorkflowRun::Part::Text,
                   [](const pipelines::Pipeline& p) { return p.promptWorkingBytes(); })
          .as<pipelines::Pipeline>();
  {
    memory::DeviceScope on_device(c.run.device);
    const pipelines::PromptEncoding enc = pipe.promptEncoding(v.text, options);
    if (!at::isfinite(enc.context).all().item<bool>())
      throw Error(ErrorKind::NonFinite,
                  "the text encoder produced NaN or infinity (encoding the prompt); the "
                  "model's text encoder weights are probably damaged");
    v.context = toHost(c.run.device, enc.context);
    v.pooled = toHost(c.run.device, enc.pooled);
    if (enc.guidance) v.guidance = enc.guidance;
  }
  c.run.tracker.progress(c.stage, 1, 1);
  const int64_t bytes = tensorBytes(v.context) + tensorBytes(v.pooled);
  return graph::NodeOutputs{makeValue(ValueType::Conditioning, std::move(v), bytes)};
}

}  // namespace

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
  encodesOnePrompt(d);
  d.run = [](NodeCall& c) {
    ConditioningValue v;
    v.text = c.stringParam("text");
    v.aesthetic_score = c.floatParam("aesthetic_score");
    v.original_width = c.intParam("original_width");
    v.original_height = c.intParam("original_height");
    v.crop_left = c.intParam("crop_left");
    v.crop_top = c.intParam("crop_top");
    const models::EmbeddingLibrary embeddings(c.run.env.embedding_dirs);
    pipelines::PromptOptions options;
    options.clip_skip = static_cast<int>(c.intParam("clip_skip"));
    options.embeddings = &embeddings;
    return encodeConditioning(c, std::move(v), options);
  };
  // A prompt word may name an embedding added since: the folders' files are signed.
  d.outside_state = [](const RunEnvironment& env, const Job&) {
    return embeddingsState(env.embedding_dirs);
  };
  return d;
}

NodeDefinition textEncodeFlux() {
  NodeDefinition d;
  d.schema = {"TextEncodeFlux",
              "Text encode (FLUX)",
              "conditioning",
              "Encodes a prompt for FLUX.1 as ComfyUI's CLIPTextEncodeFlux: the T5 text as the "
              "sequence, the CLIP-L text as the pooled vector, with the distilled guidance",
              {in("clip", ValueType::Clip, "Text encoder")},
              {text("clip_l", ValueType::String, std::string(), "CLIP-L text",
                    "What CLIP-L pools (often a short version of the prompt)", true),
               text("t5xxl", ValueType::String, std::string(), "T5 text",
                    "The prompt T5 encodes token by token", true),
               number("guidance", ValueType::Float, 3.5, 0.0, 100.0, 0.1, "Guidance",
                      "FLUX.1 dev's distilled guidance (as FluxGuidance)")},
              {out(ValueType::Conditioning, "Conditioning")}};
  encodesOnePrompt(d);
  d.run = [](NodeCall& c) {
    ConditioningValue v;
    v.text = c.stringParam("t5xxl");
    v.guidance = c.floatParam("guidance");
    pipelines::PromptOptions options;
    options.pooled_text = c.stringParam("clip_l");
    return encodeConditioning(c, std::move(v), options);
  };
  return d;
}

NodeDefinition fluxGuidance() {
  NodeDefinition d;
  d.schema = {"FluxGuidance",
              "Flux guidance",
              "conditioning",
              "Sets the distilled guidance FLUX.1 dev takes with this prompt (as ComfyUI's "
              "FluxGuidance); other models ignore it",
              {in("conditioning", ValueType::Conditioning, "Conditioning")},
              {number("guidance", ValueType::Float, 3.5, 0.0, 100.0, 0.1, "Guidance",
                      "How closely the picture follows the prompt (FLUX.1 dev's default 3.5)")},
              {out(ValueType::Conditioning, "Conditioning")}};
  d.run = [](NodeCall& c) {
    ConditioningValue v = c.input<ConditioningValue>("conditioning");
    v.guidance = c.floatParam("guidance");
    const int64_t bytes = tensorBytes(v.context) + tensorBytes(v.pooled);
    return graph::NodeOutputs{makeValue(ValueType::Conditioning, std::move(v), bytes)};
  };
  return d;
}

}  // namespace kiln::nodes
