// The template workflow behind the generate panel: the panel shows its exposed
// parameters, and each Generate runs a copy with the panel's values. Kiln starts with a
// text-to-image template; any workflow can take its place.
#pragma once

#include <QString>

#include <vector>

#include "kiln/render.h"
#include "kiln/workflow.h"

namespace kiln::app {

// The engine's render template (kiln::renderWorkflow) for the default settings: load
// checkpoint (empty: the starter model) -> prompt and negative prompt -> empty latent of the
// starter model's size -> sampler -> decode (tiling left to Preferences) -> save, with the
// model, prompts, sampler, seed, steps, CFG scale, width and height exposed.
kiln::Workflow defaultTemplate();

// The engine's render template for a clip (kiln::renderWorkflow with more than one frame):
// load video model (empty: to be picked) -> prompts -> empty video latent -> sampler ->
// decode -> save video, at Wan 2.1's recommended settings (832x480, 81 frames at 16 fps, 50
// steps of UniPC at CFG 5), with the model, prompts, sampler, seed, steps, CFG scale, width,
// height and frames exposed.
kiln::Workflow videoTemplate();

// The FLUX.1 template for `model_path`: load checkpoint (the transformer, its VAE and text
// encoders found beside it) -> prompt -> FluxGuidance -> empty latent of 1024x1024 ->
// sampler (euler over the simple schedule at CFG 1, 20 steps, schnell's 4) -> decode -> save,
// with the model, prompt, sampler, seed, steps, guidance, width and height exposed: the
// distilled guidance in place of the CFG scale, and no negative prompt, which a
// guidance-distilled model does not use.
kiln::Workflow fluxTemplate(const std::string& model_path);

// What the panel knows parameters by, whatever the template's node ids.
enum class PanelRole {
  Model,
  Prompt,
  Negative,
  Sampler,
  Seed,
  Steps,
  Cfg,
  Guidance,
  Width,
  Height,
  Frames
};

struct ParamRef {
  std::string node, param;
  bool valid() const noexcept { return !node.empty(); }
};

// The parameter playing `role`: the first LoadCheckpoint's ckpt_name (else the first
// LoadVideoModel's model_name), the TextEncode feeding the first Sampler's positive
// (Prompt) or negative (Negative) input (through a FluxGuidance), the first Sampler's
// sampler_name/seed/steps/cfg, the first FluxGuidance's guidance (Guidance),
// the first EmptyLatent's width/height (else the first EmptyVideoLatent's), the first
// EmptyVideoLatent's frames. Invalid when the workflow has none.
ParamRef findRole(const kiln::Workflow& workflow, PanelRole role);

// A workflow without exposed parameters gets the ones the panel has roles for.
void exposeCommonParameters(kiln::Workflow& workflow);

// The workflow for image `index` of a batch: every SEED parameter + index, every
// SaveImage's and SaveVideo's file name prefix `file_prefix` (when not empty).
kiln::Workflow prepareRun(const kiln::Workflow& workflow,
                          const std::vector<kiln::NodeSchema>& schemas, int index,
                          const QString& file_prefix);

// What Preferences set for nodes that leave it to them: VAE tiling (VAEDecode, VAEEncode)
// and the LoRA mode (LoadLoRA, LoadLoRAModelOnly). A value the workflow sets is kept.
struct NodeDefaults {
  std::string tiling = "auto";
  int64_t tile_size = 0;
  int64_t tile_overlap = 64;
  std::string lora_mode = "auto";
};
void applyNodeDefaults(kiln::Workflow& workflow, const NodeDefaults& defaults);

// The render settings the workflow's role parameters hold (model, prompts, seed + index,
// steps, CFG scale, size, frames), for file names and labels.
kiln::RenderParams roleParams(const kiln::Workflow& workflow, int index = 0);

// A parameter's value in the workflow, or its schema default when the node leaves it unset.
kiln::ParamValue paramValue(const kiln::Workflow& workflow,
                            const std::vector<kiln::NodeSchema>& schemas, const std::string& node,
                            const std::string& param);

}  // namespace kiln::app
