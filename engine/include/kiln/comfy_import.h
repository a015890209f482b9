// Importing ComfyUI workflows: the API format (a PNG's "prompt" chunk, or a file saved
// with "Save (API)") and the UI format (a PNG's "workflow" chunk, or a saved .json), for
// the node types Kiln has. Whatever cannot be mapped is listed, never silently replaced.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/workflow.h"

namespace kiln {

struct ComfyImport {
  Workflow workflow;
  std::string format;                 // "api" or "ui"
  std::vector<std::string> unmapped;  // one line per node, value or file that did not map
};

// Folders model names are looked up in: each root is tried as it is and with the
// sub-folders ComfyUI and A1111 use for that kind of file (models/checkpoints,
// models/Stable-diffusion, models/loras, models/Lora, models/vae, input ...).
struct ModelFolders {
  std::vector<std::string> roots;
};

// True for text that is a ComfyUI workflow in either format.
bool looksLikeComfyWorkflow(std::string_view json);

// Throws kiln::Error(InvalidWorkflow) for text that is neither format. Model and image
// names resolve against `folders` (an absolute path is kept as it is); sampler and
// scheduler names are kept, and reported when Kiln has no sampler of that name, so
// validation points at them.
ComfyImport importComfyWorkflow(std::string_view json, const ModelFolders& folders);

// The folders to search by default: $KILN_MODEL_DIRS (separated by ':'), then
// ~/ComfyUI, ~/stable-diffusion-webui and ~/.local/share/kiln/models where they exist.
ModelFolders defaultModelFolders();

// The embeddings folders of model roots that exist: <root>/embeddings (A1111) and
// <root>/models/embeddings (ComfyUI).
std::vector<std::string> embeddingFolders(const ModelFolders& folders);

}  // namespace kiln
