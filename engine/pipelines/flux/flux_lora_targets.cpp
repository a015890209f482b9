#include "pipelines/flux/flux_lora_targets.h"

#include "pipelines/common/transformer_lora_targets.h"
#include "tensor_io/flux_key_map.h"

namespace kiln::pipelines {

lora::LoraTargets fluxLoraTargets(const models::FluxTransformer& transformer) {
  const auto& c = transformer.config();
  return linearLoraTargets(
      "flux1", transformer.params(), transformer.prefix(),
      [&c](const std::string& path, const lora::LoraTarget& t, lora::TargetMap& targets) {
        const std::string original = underscored(path);
        for (const char* tag : {"diffusion_model_", "unet_", "model_diffusion_model_", ""})
          targets.add(tag + original, t);
        // diffusers' q, k, v and MLP input land on their rows of BFL's fused projections
        for (const auto& part :
             tensor_io::fluxTransformerDiffusersParts(path, c.dim, c.mlp_hidden)) {
          lora::LoraTarget p = t;
          p.row_offset = part.row_offset;
          p.rows = part.rows;
          for (const char* tag : {"transformer_", "unet_", ""})
            targets.add(tag + underscored(part.name), p);
        }
      });
}

}  // namespace kiln::pipelines
