// The names FLUX.1 LoRAs give the transformer's linear layers: Black Forest Labs' module
// paths (bare or under diffusion_model.), kohya's (lora_unet_double_blocks_0_img_attn_qkv)
// and diffusers/PEFT's (transformer.transformer_blocks.0.attn.to_q), whose q, k, v and
// MLP-input modules land on their rows of the fused projections.
#pragma once

#include "lora/lora_patcher.h"
#include "models/flux/flux_transformer.h"

namespace kiln::pipelines {

lora::LoraTargets fluxLoraTargets(const models::FluxTransformer& transformer);

}  // namespace kiln::pipelines
