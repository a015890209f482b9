// The workflow nodes of video models (Wan 2.1): LoadVideoModel, EmptyVideoLatent and
// SaveVideo, and what TextEncode, Sampler and VAEDecode do when their model is a video
// model (the same nodes serve both, as in ComfyUI).
#pragma once

#include "jobs/workflow_nodes.h"

namespace kiln::jobs {

bool isVideoRef(const ModelRef& ref);

NodeDefinition loadVideoModel();
NodeDefinition emptyVideoLatent();
NodeDefinition saveVideo();

// TextEncode, Sampler and VAEDecode for a video model's ref.
graph::NodeOutputs encodeVideoPrompt(NodeCall& c);
graph::NodeOutputs sampleVideo(NodeCall& c);
graph::NodeOutputs decodeVideo(NodeCall& c);

}  // namespace kiln::jobs
