// Wan 2.1's diffusers names (WanTransformer3DModel, AutoencoderKLWan) mapped into the
// original layout (Wan's own WanModel and WanVAE names, which ComfyUI's files keep).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tensor_io/safetensors.h"
#include "tensor_io/tensor_index.h"

namespace kiln::tensor_io {

// The original name of a diffusers WanTransformer3DModel tensor; empty when no rule
// covers it.
std::string wanTransformerFromDiffusers(const std::string& name);
// The reverse: the diffusers name of an original transformer tensor (empty when none).
std::string wanTransformerToDiffusers(const std::string& name);
// The original name of a diffusers AutoencoderKLWan tensor, for a VAE with
// `num_res_blocks` residual blocks per encoder level; empty when no rule covers it.
std::string wanVaeFromDiffusers(const std::string& name, int64_t num_res_blocks);

// Add every tensor of a diffusers file under its original name (after `prefix`). Throws
// kiln::Error(UnsupportedModel) naming the first tensor no rule covers.
void mapDiffusersWanTransformer(const std::shared_ptr<SafetensorsFile>& file,
                                const std::string& prefix, TensorIndex& out);
void mapDiffusersWanVae(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                        TensorIndex& out);

}  // namespace kiln::tensor_io
