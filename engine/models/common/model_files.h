// Finding a model part's weights on disk, as every family reads them: a single
// .safetensors file (pickle files refused), a diffusers component folder (its config.json
// and weights, sharded or not) or a pipeline folder holding that component.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::models {

// Throws kiln::Error(UnsupportedModel) for a pickle file (.ckpt, .pt, .pth, .bin), which
// could run code when loaded.
void refusePickle(const std::filesystem::path& p);
// Throws kiln::Error(FileNotFound) when nothing is at `p`, and refuses a pickle file.
void checkModelPath(const std::filesystem::path& p);
// The .safetensors files of a diffusers component folder (several when sharded), sorted.
// Throws kiln::Error: FileNotFound (none), UnsupportedModel (pickle weights only).
std::vector<std::filesystem::path> folderWeights(const std::filesystem::path& dir);
// The component folder of `path`: the path itself when it holds a config.json, else its
// `sub` folder. Throws kiln::Error(UnsupportedModel) when it is neither.
std::filesystem::path componentFolder(const std::filesystem::path& path, const char* sub);

// The "_class_name" of a diffusers config or model_index.json; empty when it is missing or
// unreadable.
std::string diffusersClass(const std::filesystem::path& config);
// The first .safetensors file (in name order) in the first of `dirs` that has one whose
// lower-case name contains every one of `words`; empty when none has.
std::string findModelFile(const std::vector<std::filesystem::path>& dirs,
                          const std::vector<std::string>& words);

}  // namespace kiln::models
