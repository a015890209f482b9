#include "pipelines/wan/wan_lora_targets.h"

#include <algorithm>
#include <unordered_map>

#include "tensor_io/wan_key_map.h"

namespace kiln::pipelines {
namespace {

std::string underscored(std::string s) {
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

}  // namespace

lora::LoraTargets wanLoraTargets(const models::WanTransformer& transformer) {
  lora::LoraTargets out;
  out.model_name = "wan21";
  const weights::ParamList& params = transformer.params();
  out.components.push_back(&params);
  std::unordered_map<std::string, at::Tensor*> by_name;
  for (const auto& slot : params.slots()) by_name[slot.name] = slot.tensor;
  const std::string& prefix = transformer.prefix();
  for (const auto& slot : params.slots()) {
    // Linear layers only, what Wan LoRAs train: norms, modulation tables and the patch
    // embedding take none.
    if (!slot.name.ends_with(".weight") || !slot.name.starts_with(prefix) || slot.shape.size() != 2)
      continue;
    const std::string path = slot.name.substr(prefix.size(), slot.name.size() - prefix.size() - 7);
    lora::LoraTarget t;
    t.weight = slot.tensor;
    const auto bias = by_name.find(prefix + path + ".bias");
    t.bias = bias == by_name.end() ? nullptr : bias->second;
    t.key = slot.name;
    const std::string original = underscored(path);
    for (const char* tag : {"diffusion_model_", "unet_", "model_diffusion_model_", ""})
      out.targets.add(tag + original, t);
    if (const std::string d = tensor_io::wanTransformerToDiffusers(path); !d.empty())
      for (const char* tag : {"transformer_", ""}) out.targets.add(tag + underscored(d), t);
  }
  return out;
}

}  // namespace kiln::pipelines
