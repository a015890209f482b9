#include "pipelines/common/transformer_lora_targets.h"

#include <algorithm>
#include <unordered_map>

namespace kiln::pipelines {

std::string underscored(std::string path) {
  std::replace(path.begin(), path.end(), '.', '_');
  return path;
}

lora::LoraTargets linearLoraTargets(const std::string& model_name, const weights::ParamList& params,
                                    const std::string& prefix, const AddTargetNames& add) {
  lora::LoraTargets out;
  out.model_name = model_name;
  out.components.push_back(&params);
  std::unordered_map<std::string, at::Tensor*> by_name;
  for (const auto& slot : params.slots()) by_name[slot.name] = slot.tensor;
  for (const auto& slot : params.slots()) {
    // Linear layers only: norms, modulation tables and embeddings take none.
    if (!slot.name.ends_with(".weight") || !slot.name.starts_with(prefix) || slot.shape.size() != 2)
      continue;
    const std::string path = slot.name.substr(prefix.size(), slot.name.size() - prefix.size() - 7);
    lora::LoraTarget t;
    t.weight = slot.tensor;
    const auto bias = by_name.find(prefix + path + ".bias");
    t.bias = bias == by_name.end() ? nullptr : bias->second;
    t.key = slot.name;
    add(path, t, out.targets);
  }
  return out;
}

}  // namespace kiln::pipelines
