// The workflow a render's settings stand for: what the CLI's `render`, kiln::render and
// the generate panel's template draw is this graph, so a picture can carry it and be
// drawn again by `kiln-cli run` or opened in the editor.
#pragma once

#include "kiln/render.h"
#include "kiln/workflow.h"

namespace kiln {

// LoadCheckpoint (the model, its precision) -> LoadLoRA per LoRA (strengths, mode) ->
// TextEncode for the prompt and the negative prompt (the refiner's aesthetic scores) ->
// EmptyLatent (width x height, one image) -> Sampler (seed, steps, CFG, sampler,
// schedule) -> VAEDecode (tiling) -> SaveImage. `params` must hold a resolved size (not
// 0). Throws kiln::Error(InvalidArgument) for what a workflow cannot hold yet: an init
// image or mask, keyframed LoRA strengths, SDXL size conditioning other than the output
// size, video (more than one frame), a video model's own VAE or text encoder files or
// flow shift.
Workflow renderWorkflow(const RenderParams& params);

}  // namespace kiln
