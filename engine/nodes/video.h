// The workflow nodes of video models (Wan 2.1): LoadVideoModel, EmptyVideoLatent, SaveVideo
// and SaveVideoAs, and what Sampler and VAEDecode do with a clip's latent (the same nodes
// serve pictures and clips, as in ComfyUI; TextEncode is the same for every family).
#pragma once

#include "nodes/node_library.h"

namespace kiln::nodes {

NodeDefinition loadVideoModel();
// A video model's MODEL, CLIP and VAE outputs, loaded (LoadVideoModel, and LoadCheckpoint
// given a video model): parts beside the transformer found when empty, shift 0 the model's.
graph::NodeOutputs loadVideoModelOutputs(NodeCall& c, const std::string& path,
                                         const std::string& vae, const std::string& text_encoder,
                                         const std::string& dtype, double shift);
NodeDefinition emptyVideoLatent();
NodeDefinition saveVideo();
// Writes the frames to a path (a video file, or a PNG folder ending in '/'), or with no path
// only returns them: a video render job's output.
NodeDefinition saveVideoAs();

// Sampler and VAEDecode for a video model's ref.
graph::NodeOutputs sampleVideo(NodeCall& c);
graph::NodeOutputs decodeVideo(NodeCall& c);

}  // namespace kiln::nodes
