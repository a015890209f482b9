#include "kiln/render_workflow.h"

#include <string>

#include "jobs/job_runner.h"
#include "kiln/error.h"

namespace kiln {
namespace {

const char* dtypeName(ComputeDType d) {
  switch (d) {
    case ComputeDType::Float32:
      return "fp32";
    case ComputeDType::BFloat16:
      return "bf16";
    case ComputeDType::Float16:
      return "fp16";
    case ComputeDType::Auto:
    case ComputeDType::Invalid:
      break;
  }
  return "auto";
}

void refuse(const std::string& what) {
  throw Error(ErrorKind::InvalidArgument, "a workflow cannot hold " + what + " yet");
}

void checkRepresentable(const RenderParams& p) {
  if (p.width <= 0 || p.height <= 0)
    throw Error(ErrorKind::InvalidArgument, "the render's size is not resolved");
  if (jobs::hasImage(p.init_image) || jobs::hasImage(p.mask)) refuse("an init image or a mask");
  for (const LoraSpec& l : p.loras)
    if (!l.keyframes.empty()) refuse("LoRA strengths that change over the steps");
  if (p.original_width != 0 || p.original_height != 0 || p.crop_top != 0 || p.crop_left != 0)
    refuse("SDXL size conditioning other than the output size");
  if (p.frames > 1) refuse("a video");
  if (!p.vae_path.empty() || !p.text_encoder_path.empty() || p.flow_shift != 0)
    refuse("a video model's own VAE, text encoder or flow shift");
}

}  // namespace

Workflow renderWorkflow(const RenderParams& p) {
  checkRepresentable(p);
  Workflow w;
  const auto node = [&](std::string id, std::string type, std::map<std::string, ParamValue> params,
                        double x, double y, std::string title = {}) {
    w.nodes.push_back({std::move(id), std::move(type), std::move(params), x, y, std::move(title)});
  };
  node("model", "LoadCheckpoint",
       {{"ckpt_name", p.model_path}, {"dtype", std::string(dtypeName(p.dtype))}}, 0, 0);
  // Each LoRA takes the model and the text encoder from the one before.
  std::string from = "model";
  for (std::size_t i = 0; i < p.loras.size(); ++i) {
    const std::string id = "lora" + std::to_string(i + 1);
    node(id, "LoadLoRA",
         {{"lora_name", p.loras[i].path},
          {"strength_model", p.loras[i].unet_strength},
          {"strength_clip", p.loras[i].text_strength},
          {"mode", std::string(loraModeName(p.lora_mode))}},
         160, 160.0 * static_cast<double>(i + 1));
    w.links.push_back({from, "MODEL", id, "model"});
    w.links.push_back({from, "CLIP", id, "clip"});
    from = id;
  }
  node("prompt", "TextEncode", {{"text", p.prompt}, {"aesthetic_score", p.aesthetic_score}}, 320,
       -120, "Prompt");
  node("negative", "TextEncode",
       {{"text", p.negative_prompt}, {"aesthetic_score", p.negative_aesthetic_score}}, 320, 120,
       "Negative prompt");
  node("latent", "EmptyLatent",
       {{"width", int64_t{p.width}}, {"height", int64_t{p.height}}, {"batch_size", int64_t{1}}},
       320, 320);
  node("sampler", "Sampler",
       {{"seed", p.seed},
        {"steps", int64_t{p.steps}},
        {"cfg", p.cfg_scale},
        {"sampler_name", p.sampler},
        {"scheduler", p.scheduler},
        {"denoise", 1.0}},
       640, 0);
  node("decode", "VAEDecode",
       {{"tiling", std::string(vaeTilingName(p.vae_tiling))},
        {"tile_size", int64_t{p.tile_size}},
        {"tile_overlap", int64_t{p.tile_overlap}}},
       960, 0);
  node("save", "SaveImage", {{"filename_prefix", std::string("kiln")}}, 1220, 0);
  const std::vector<WorkflowLink> links = {{from, "CLIP", "prompt", "clip"},
                                           {from, "CLIP", "negative", "clip"},
                                           {from, "MODEL", "sampler", "model"},
                                           {"prompt", "CONDITIONING", "sampler", "positive"},
                                           {"negative", "CONDITIONING", "sampler", "negative"},
                                           {"latent", "LATENT", "sampler", "latent_image"},
                                           {"sampler", "LATENT", "decode", "samples"},
                                           {"model", "VAE", "decode", "vae"},
                                           {"decode", "IMAGE", "save", "images"}};
  w.links.insert(w.links.end(), links.begin(), links.end());
  return w;
}

}  // namespace kiln
