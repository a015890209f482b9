// The Sampler node: denoises a latent with an image model (a video model's goes to
// sampleVideo), each image of a batch from its own seed.
#pragma once

#include "jobs/workflow_nodes.h"

namespace kiln::jobs {

NodeDefinition sampler();

}  // namespace kiln::jobs
