#include "kiln/render_workflow.h"

#include <algorithm>
#include <string>

#include "jobs/render_graph.h"
#include "jobs/render_job.h"
#include "kiln/error.h"
#include "kiln/video_io.h"
#include "pipelines/registry.h"

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
  throw Error(ErrorKind::InvalidArgument, "a workflow cannot hold " + what);
}

void checkRepresentable(const RenderParams& p) {
  if (p.size.width <= 0 || p.size.height <= 0)
    throw Error(ErrorKind::InvalidArgument, "the render's size is not resolved");
}

// A clip, or a video model's still with its parts or shift given: drawn by
// LoadVideoModel's graph.
bool drawsWithVideoGraph(const RenderParams& p) {
  if (p.video.frames > 1) return true;
  if (p.model.vae_path.empty() && p.model.text_encoder_path.empty() && p.sampling.flow_shift == 0)
    return false;
  return p.model.path.empty() || pipelines::familyOf(p.model.path).video;
}

// Builds a render's graph node by node.
class GraphBuilder {
 public:
  explicit GraphBuilder(Workflow& w) : w_(w) {}

  void node(std::string id, std::string type, std::map<std::string, ParamValue> params, double x,
            double y, std::string title = {}) {
    w_.nodes.push_back({std::move(id), std::move(type), std::move(params), x, y, std::move(title)});
  }
  void link(std::string from, std::string output, std::string to, std::string input) {
    w_.links.push_back({std::move(from), std::move(output), std::move(to), std::move(input)});
  }

  // The nodes every picture shares: the model, its LoRAs, the prompts and the latent to
  // start from (an init image and a mask from the job when `p` has them). Returns the node
  // whose MODEL and CLIP the pictures take.
  std::string shared(const RenderParams& p) {
    std::map<std::string, ParamValue> load{{"ckpt_name", p.model.path},
                                           {"dtype", std::string(dtypeName(p.model.dtype))}};
    // A lone transformer's parts, where given (FLUX.1).
    if (!p.model.vae_path.empty()) load["vae_name"] = p.model.vae_path;
    if (!p.model.text_encoder_path.empty()) load["text_encoder_name"] = p.model.text_encoder_path;
    if (!p.model.text_encoder_2_path.empty())
      load["text_encoder_2_name"] = p.model.text_encoder_2_path;
    node("model", "LoadCheckpoint", std::move(load), 0, 0);
    const std::string from = loras(p);
    if (!nodes::hasImage(p.init.image)) {
      node("latent", "EmptyLatent",
           {{"width", int64_t{p.size.width}},
            {"height", int64_t{p.size.height}},
            {"batch_size", int64_t{1}}},
           320, 320);
      return from;
    }
    node("image", "JobImage",
         {{"width", int64_t{p.size.width}}, {"height", int64_t{p.size.height}}}, 160, 480,
         "Init image");
    std::map<std::string, ParamValue> encode = tiling(p);
    if (nodes::hasImage(p.init.mask)) {
      node("mask", "JobMask", {}, 160, 640, "Mask");
      encode["mask_feather"] = int64_t{p.init.mask_feather};
      link("mask", "MASK", "latent", "mask");
    }
    node("latent", "VAEEncode", std::move(encode), 320, 320);
    link("image", "IMAGE", "latent", "pixels");
    link("model", "VAE", "latent", "vae");
    return from;
  }

  // A video model's shared nodes: the model with its parts, LoRAs, prompts and the empty
  // video latent.
  std::string sharedVideo(const RenderParams& p) {
    node("model", "LoadVideoModel",
         {{"model_name", p.model.path},
          {"vae_name", p.model.vae_path},
          {"text_encoder_name", p.model.text_encoder_path},
          {"dtype", std::string(dtypeName(p.model.dtype))},
          {"shift", p.sampling.flow_shift}},
         0, 0);
    const std::string from = loras(p);
    node("latent", "EmptyVideoLatent",
         {{"width", int64_t{p.size.width}},
          {"height", int64_t{p.size.height}},
          {"frames", int64_t{p.video.frames}}},
         320, 320);
    return from;
  }

 private:
  // The LoRAs after "model" and the prompts; returns the node the denoiser comes from.
  std::string loras(const RenderParams& p) {
    std::string from = "model";  // each LoRA takes the model and the text encoder from the last
    for (std::size_t i = 0; i < p.model.loras.size(); ++i) {
      const std::string id = "lora" + std::to_string(i + 1);
      std::map<std::string, ParamValue> params = {
          {"lora_name", p.model.loras[i].path},
          {"strength_model", p.model.loras[i].unet_strength},
          {"strength_clip", p.model.loras[i].text_strength},
          {"mode", std::string(loraModeName(p.model.lora_mode))}};
      if (!p.model.loras[i].keyframes.empty())
        params["schedule"] = formatLoraKeyframes(p.model.loras[i].keyframes);
      node(id, "LoadLoRA", std::move(params), 160, 160.0 * static_cast<double>(i + 1));
      link(from, "MODEL", id, "model");
      link(from, "CLIP", id, "clip");
      from = id;
    }
    prompt("prompt", p.prompt.text, p.prompt.aesthetic_score, p, -120, "Prompt");
    prompt("negative", p.prompt.negative, p.prompt.negative_aesthetic_score, p, 120,
           "Negative prompt");
    link(from, "CLIP", "prompt", "clip");
    link(from, "CLIP", "negative", "clip");
    return from;
  }

 public:
  // One picture: its sampler (seed `p.sampling.seed`), its decode and `output` (a node type and its
  // parameters), the ids ending in `suffix`, laid out at height `y`.
  void picture(const RenderParams& p, const std::string& from, const std::string& suffix,
               std::pair<std::string, std::map<std::string, ParamValue>> output, double y) {
    const bool from_image = nodes::hasImage(p.init.image);
    const std::string sampler = "sampler" + suffix, decode = "decode" + suffix,
                      save = "save" + suffix;
    node(sampler, "Sampler",
         {{"seed", p.sampling.seed},
          {"steps", int64_t{p.sampling.steps}},
          {"cfg", p.sampling.cfg_scale},
          {"sampler_name", p.sampling.sampler},
          {"scheduler", p.sampling.scheduler},
          {"denoise", from_image ? p.init.denoise : 1.0}},
         640, y);
    node(decode, "VAEDecode", tiling(p), 960, y);
    node(save, std::move(output.first), std::move(output.second), 1220, y);
    link(from, "MODEL", sampler, "model");
    link(positive(p), "CONDITIONING", sampler, "positive");
    link("negative", "CONDITIONING", sampler, "negative");
    link("latent", "LATENT", sampler, "latent_image");
    link(sampler, "LATENT", decode, "samples");
    link("model", "VAE", decode, "vae");
    link(decode, "IMAGE", save, "images");
  }

 private:
  // The prompt's conditioning, with FLUX.1's distilled guidance where the render sets it.
  std::string positive(const RenderParams& p) {
    if (p.sampling.guidance <= 0) return "prompt";
    if (std::none_of(w_.nodes.begin(), w_.nodes.end(),
                     [](const WorkflowNode& n) { return n.id == "guidance"; })) {
      node("guidance", "FluxGuidance", {{"guidance", p.sampling.guidance}}, 480, -120);
      link("prompt", "CONDITIONING", "guidance", "conditioning");
    }
    return "guidance";
  }

  void prompt(const std::string& id, const std::string& text, double aesthetic_score,
              const RenderParams& p, double y, std::string title) {
    std::map<std::string, ParamValue> params = {{"text", text},
                                                {"aesthetic_score", aesthetic_score}};
    // SDXL's size conditioning where it is not the output size's.
    if (p.size.original_width > 0) params["original_width"] = int64_t{p.size.original_width};
    if (p.size.original_height > 0) params["original_height"] = int64_t{p.size.original_height};
    if (p.size.crop_left > 0) params["crop_left"] = int64_t{p.size.crop_left};
    if (p.size.crop_top > 0) params["crop_top"] = int64_t{p.size.crop_top};
    node(id, "TextEncode", std::move(params), 320, y, std::move(title));
  }

  static std::map<std::string, ParamValue> tiling(const RenderParams& p) {
    return {{"tiling", std::string(vaeTilingName(p.tiling.mode))},
            {"tile_size", int64_t{p.tiling.size}},
            {"tile_overlap", int64_t{p.tiling.overlap}}};
  }

  Workflow& w_;
};

}  // namespace

Workflow renderWorkflow(const RenderParams& p) {
  checkRepresentable(p);
  if (nodes::hasImage(p.init.image) || nodes::hasImage(p.init.mask))
    refuse("an init image or a mask given in memory");
  Workflow w;
  GraphBuilder b(w);
  if (!drawsWithVideoGraph(p)) {
    const std::string from = b.shared(p);
    b.picture(p, from, "", {"SaveImage", {{"filename_prefix", std::string("kiln")}}}, 0);
    return w;
  }
  const std::string from = b.sharedVideo(p);
  if (p.video.frames > 1)
    b.picture(p, from, "",
              {"SaveVideo", {{"filename_prefix", std::string("kiln")}, {"fps", p.video.fps}}}, 0);
  else
    b.picture(p, from, "", {"SaveImage", {{"filename_prefix", std::string("kiln")}}}, 0);
  return w;
}

namespace jobs {

RenderGraph renderJobGraph(const Job& job, const RenderParams& resolved) {
  checkRepresentable(resolved);
  RenderGraph g;
  GraphBuilder b(g.workflow);
  const std::string from = b.shared(resolved);
  for (int i = 0; i < job.batch; ++i) {
    RenderParams p = resolved;
    p.sampling.seed = resolved.sampling.seed + i;
    const std::string suffix = i == 0 ? std::string() : "-" + std::to_string(i + 1);
    std::pair<std::string, std::map<std::string, ParamValue>> output{"PreviewImage", {}};
    if (!job.output_path.empty())
      output = {"SaveImageAs", {{"path", numberedPath(job.output_path, i)}}};
    b.picture(p, from, suffix, std::move(output), 480.0 * i);
    for (const char* id : {"sampler", "decode", "save"}) g.layout.image_of[id + suffix] = i;
    if (std::string w = drawingWorkflow(job.params, p); !w.empty())
      g.layout.workflow_of_image[i] = std::move(w);
  }
  g.layout.images = job.batch;
  g.layout.shared_stages = {{"prompt", "negative"}};
  return g;
}

RenderGraph renderVideoJobGraph(const Job& job, const RenderParams& resolved) {
  RenderGraph g;
  GraphBuilder b(g.workflow);
  const std::string from = b.sharedVideo(resolved);
  const std::string& out = job.output_path;
  std::pair<std::string, std::map<std::string, ParamValue>> output{
      "SaveVideoAs", {{"path", out}, {"fps", resolved.video.fps}}};
  if (!out.empty() && videoFormatFor(out) == VideoFormat::Invalid)
    output = {"SaveImageAs", {{"path", out}}};  // a still, as a picture
  b.picture(resolved, from, "", std::move(output), 0);
  for (const char* id : {"sampler", "decode", "save"}) g.layout.image_of[id] = 0;
  g.layout.units["save"] = resolved.video.frames;
  // A still carries a still's workflow, a clip a clip's.
  if (std::string w = drawingWorkflow(job.params, resolved); !w.empty())
    g.layout.workflow_of_image[0] = std::move(w);
  g.layout.shared_stages = {{"prompt", "negative"}};
  return g;
}

}  // namespace jobs
}  // namespace kiln
