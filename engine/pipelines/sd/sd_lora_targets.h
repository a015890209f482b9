// The names LoRA files give the weights of an SD 1.x/2.x/SDXL pipeline: kohya's
// lora_unet_* (original and diffusers module paths) and lora_te*_* (transformers paths;
// SDXL's OpenCLIP encoder by its transformers equivalents, q/k/v as rows of the fused
// in_proj), as lora/ normalises them.
#pragma once

#include "lora/lora_patcher.h"
#include "pipelines/sd/sd_pipeline.h"

namespace kiln::pipelines {

// The pipeline's UNet and text encoders with every name their weights go by.
lora::LoraTargets sdLoraTargets(const SdPipeline& pipeline);

}  // namespace kiln::pipelines
