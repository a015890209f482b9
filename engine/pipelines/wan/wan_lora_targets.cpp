#include "pipelines/wan/wan_lora_targets.h"

#include "pipelines/common/transformer_lora_targets.h"
#include "tensor_io/wan_key_map.h"

namespace kiln::pipelines {

lora::LoraTargets wanLoraTargets(const models::WanTransformer& transformer) {
  return linearLoraTargets(
      "wan21", transformer.params(), transformer.prefix(),
      [](const std::string& path, const lora::LoraTarget& t, lora::TargetMap& targets) {
        const std::string original = underscored(path);
        for (const char* tag : {"diffusion_model_", "unet_", "model_diffusion_model_", ""})
          targets.add(tag + original, t);
        if (const std::string d = tensor_io::wanTransformerToDiffusers(path); !d.empty())
          for (const char* tag : {"transformer_", ""}) targets.add(tag + underscored(d), t);
      });
}

}  // namespace kiln::pipelines
