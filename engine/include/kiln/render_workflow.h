// The workflow a render's settings stand for: what the CLI's `render`, kiln::render and
// the generate panel's template draw is this graph, so a picture can carry it and be
// drawn again by `kiln-cli run` or opened in the editor.
#pragma once

#include "kiln/render.h"
#include "kiln/workflow.h"

namespace kiln {

// LoadCheckpoint (the model, its precision) -> LoadLoRA per LoRA (strengths, schedule,
// mode) -> TextEncode for the prompt and the negative prompt (the refiner's aesthetic
// scores, SDXL's size conditioning) -> EmptyLatent (width x height, one image) -> Sampler
// (seed, steps, CFG, sampler, schedule) -> VAEDecode (tiling) -> SaveImage. A clip (more
// than one frame), or a video model's own VAE, text encoder or flow shift: LoadVideoModel
// (with them) -> the LoRAs and prompts -> EmptyVideoLatent (width x height x frames) ->
// Sampler -> VAEDecode -> SaveVideo (the frame rate; SaveImage for one frame). `params`
// must hold a resolved size (not 0). Throws kiln::Error(InvalidArgument) for what a
// workflow cannot hold: an init image or mask given in memory (image-to-image renders carry
// their A1111 text only).
Workflow renderWorkflow(const RenderParams& params);

}  // namespace kiln
