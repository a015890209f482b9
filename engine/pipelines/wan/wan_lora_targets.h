// The names LoRA files give the weights of a Wan 2.1 transformer: its original module
// paths (ComfyUI's diffusion_model.*, musubi-tuner's lora_unet_*) and diffusers' (PEFT's
// transformer.* and base_model.model.*), as lora/ normalises them.
#pragma once

#include "lora/lora_patcher.h"
#include "models/wan/wan_transformer.h"

namespace kiln::pipelines {

// The transformer (Wan's denoiser) with every name its weights go by. The UMT5 encoder
// takes no LoRA: Wan LoRAs train the transformer only.
lora::LoraTargets wanLoraTargets(const models::WanTransformer& transformer);

}  // namespace kiln::pipelines
