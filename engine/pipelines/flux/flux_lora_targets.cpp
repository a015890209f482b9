#include "pipelines/flux/flux_lora_targets.h"

#include <algorithm>
#include <unordered_map>

#include "tensor_io/flux_key_map.h"

namespace kiln::pipelines {
namespace {

std::string underscored(std::string s) {
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

}  // namespace

lora::LoraTargets fluxLoraTargets(const models::FluxTransformer& transformer) {
  lora::LoraTargets out;
  out.model_name = "flux1";
  const weights::ParamList& params = transformer.params();
  out.components.push_back(&params);
  std::unordered_map<std::string, at::Tensor*> by_name;
  for (const auto& slot : params.slots()) by_name[slot.name] = slot.tensor;
  const std::string& prefix = transformer.prefix();
  const auto& c = transformer.config();
  for (const auto& slot : params.slots()) {
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
    for (const auto& part : tensor_io::fluxTransformerDiffusersParts(path, c.dim, c.mlp_hidden)) {
      lora::LoraTarget p = t;
      p.row_offset = part.row_offset;
      p.rows = part.rows;
      for (const char* tag : {"transformer_", "unet_", ""})
        out.targets.add(tag + underscored(part.name), p);
    }
  }
  return out;
}

}  // namespace kiln::pipelines
