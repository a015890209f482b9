// The built-in node types, one factory each, defined by category: loaders.cpp,
// conditioning.cpp, latent.cpp, image.cpp, sampler.cpp and video.cpp (video models' own
// nodes, and what TextEncode, Sampler and VAEDecode do for them).
#pragma once

#include "nodes/node_library.h"

namespace kiln::nodes {

NodeDefinition loadCheckpoint();
NodeDefinition loadVae();
NodeDefinition loadLora();
NodeDefinition loadLoraModelOnly();
NodeDefinition modelSamplingFlux();
NodeDefinition textEncode();
NodeDefinition fluxGuidance();
NodeDefinition textEncodeFlux();
NodeDefinition emptyLatent();
NodeDefinition vaeDecode();
NodeDefinition vaeEncode();
NodeDefinition loadImage();
NodeDefinition loadMask();
NodeDefinition jobImage();
NodeDefinition jobMask();
NodeDefinition saveImage();
NodeDefinition saveImageAs();
NodeDefinition previewImage();
// The Sampler: denoises a latent with an image model (a video model's goes to
// sampleVideo), each image of a batch from its own seed.
NodeDefinition sampler();

}  // namespace kiln::nodes
