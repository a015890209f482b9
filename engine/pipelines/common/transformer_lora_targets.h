// LoRA targets of a transformer denoiser whose LoRAs train its linear layers: every 2-D
// weight (with the bias beside it) under the names its family's LoRA files give it.
#pragma once

#include <functional>
#include <string>

#include "lora/lora_patcher.h"
#include "weights/params.h"

namespace kiln::pipelines {

// `path` with dots as underscores, as lora/ normalises module names.
std::string underscored(std::string path);

// The targets of `params`' linear layers under `prefix`, each added by `add` under its
// names: `path` is the module's path after the prefix without ".weight", `target` the
// weight and its bias.
using AddTargetNames = std::function<void(const std::string& path, const lora::LoraTarget& target,
                                          lora::TargetMap& targets)>;
lora::LoraTargets linearLoraTargets(const std::string& model_name, const weights::ParamList& params,
                                    const std::string& prefix, const AddTargetNames& add);

}  // namespace kiln::pipelines
