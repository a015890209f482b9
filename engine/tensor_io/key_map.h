// Key maps between layouts: the names a diffusers folder uses, mapped into the original
// single-file (ldm/sgm) layout that Kiln's modules register. The one place where names
// of one layout are translated into another.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tensor_io/safetensors.h"
#include "tensor_io/tensor_index.h"

namespace kiln::tensor_io {

// An entry that uses one stored tensor as it is.
IndexEntry identityEntry(const std::shared_ptr<SafetensorsFile>& file, const TensorInfo& info);

// Adds a diffusers UNet2DConditionModel's tensors under `prefix` (model.diffusion_model.).
void mapDiffusersUNet(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                      TensorIndex& out);
// Adds a diffusers AutoencoderKL's tensors under `prefix` (first_stage_model.).
void mapDiffusersVae(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                     TensorIndex& out);
// Adds a transformers CLIPTextModel, whose names the original layout keeps, under prefix.
void mapHfClipText(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                   TensorIndex& out);
// Adds a transformers CLIPTextModelWithProjection in OpenCLIP names under prefix
// (q, k, v fused into in_proj; text_projection transposed).
void mapHfClipToOpenClip(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                         TensorIndex& out);

// The diffusers name of an original-layout UNet module or tensor path (relative to
// model.diffusion_model., e.g. "input_blocks.1.1.proj_in" -> "down_blocks.0.attentions.0.proj_in"),
// for a UNet with `num_res_blocks` res-blocks per level; empty when no rule covers it.
std::string originalToDiffusersUNet(const std::string& name, int64_t num_res_blocks);

}  // namespace kiln::tensor_io
